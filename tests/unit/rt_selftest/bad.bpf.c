// bad.bpf.c: an object the verifier must reject (a map value used without a NULL check),
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
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&gt_lost, &k);
	*v += 1;
	return 0;
}
