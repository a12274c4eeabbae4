// bad.bpf.c: an object the verifier must reject (ring buffer memory used without a NULL
// check; kernels >= 6.13 prove constant-key array lookups non-NULL, so not that one),
// to test the one-line rejection message and cleanup after a failed load.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} gt_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1);
} gt_lost SEC(".maps");

SEC("raw_tp")
int rtst_begin(void *ctx)
{
	return 0;
}

SEC("uprobe")
int rtst_bad(void *ctx)
{
	__u64 *r = bpf_ringbuf_reserve(&gt_events, 8, 0);
	*r = 1;
	bpf_ringbuf_submit(r, 0);
	return 0;
}
