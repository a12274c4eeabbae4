// probes.bpf.c: a hand-written BPF object with the layout codegen produces (plan.h):
// ring buffer gt_events, loss counter gt_lost, gt_config written by the runtime, raw_tp
// BEGIN/END programs run with BPF_PROG_TEST_RUN, uprobe programs attached with
// uprobe_multi (cookie = plan.sites index). rt_selftest.c holds the matching plan.
#include <linux/bpf.h>
#include <asm/ptrace.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct plan_config { /* as src/common/plan.h has it */
	__u64 start_ns;
	__u64 filter_pid;
	__u64 ncpus;
	__u64 more_pids[7];
	__u64 gate;
};

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

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct plan_config);
	__uint(max_entries, 1);
} gt_config SEC(".maps");

/* Event ids: indexes into the plan's events (rt_selftest.c). */
enum { EV_BEGIN, EV_ADD, EV_EXIT, EV_END, EV_PRINT_INT, EV_PRINT_STR, EV_FLOOD, EV_TIME };

static __always_inline void count_lost(void)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&gt_lost, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
}

static __always_inline void *reserve(__u64 size)
{
	void *r = bpf_ringbuf_reserve(&gt_events, size, 0);
	if (!r)
		count_lost();
	return r;
}

/* "%s: hello %5d|%-5x|%c|%s|%%|%05i|%+d|%#o|%-4c|%.3s|%8s|\n" */
struct ev_begin {
	__u64 id, probe;
	__s64 n;
	__u64 x, c;
	char s[8];
	__s64 z, plus;
	__u64 oct, c2;
	char s3[8], s8[8];
};

SEC("raw_tp")
int rtst_begin(void *ctx)
{
	struct ev_begin *e = reserve(sizeof(*e));
	if (!e)
		return 0;
	e->id = EV_BEGIN;
	e->probe = 0;
	e->n = 42;
	e->x = 255;
	e->c = 'A';
	__builtin_memcpy(e->s, "world\0\0\0", 8);
	e->z = -42;
	e->plus = 7;
	e->oct = 8;
	e->c2 = 'z';
	__builtin_memcpy(e->s3, "abcdefgh", 8); /* full: not NUL-terminated */
	__builtin_memcpy(e->s8, "right\0\0\0", 8);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* "%s %s a=%d b=%d pid_ok=%d elapsed_ok=%d\n" */
struct ev_add {
	__u64 id, site_probe, site_func;
	__s64 a, b;
	__u64 pid_ok, elapsed_ok;
};

static __always_inline void emit_add(struct pt_regs *ctx)
{
	struct ev_add *e = reserve(sizeof(*e));
	__u32 k = 0;
	if (!e)
		return;
	struct plan_config *cfg = bpf_map_lookup_elem(&gt_config, &k);
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u64 now = bpf_ktime_get_ns();
	e->id = EV_ADD;
	e->site_probe = cookie;
	e->site_func = cookie;
	e->a = (__s64)ctx->rax; /* Go register ABI: first two ints in RAX, RBX */
	e->b = (__s64)ctx->rbx;
	e->pid_ok = cfg && cfg->filter_pid == bpf_get_current_pid_tgid() >> 32;
	e->elapsed_ok = cfg && now >= cfg->start_ns && now - cfg->start_ns < 60ull * 1000000000;
	bpf_ringbuf_submit(e, 0);
}

SEC("uprobe")
int rtst_add(struct pt_regs *ctx)
{
	emit_add(ctx);
	return 0;
}

/* The same, and exit() once a >= 3. */
SEC("uprobe")
int rtst_add_exit(struct pt_regs *ctx)
{
	emit_add(ctx);
	if ((__s64)ctx->rax >= 3) {
		__u64 *e = reserve(8);
		if (e) {
			*e = EV_EXIT;
			bpf_ringbuf_submit(e, 0);
		}
	}
	return 0;
}

/* "%s: bye %p %p %-6p|%s\n", then print(-7), print("done"), time("year %Y\n") */
struct ev_end {
	__u64 id, probe, p0, p1, p2;
	char s[16];
};

SEC("raw_tp")
int rtst_end(void *ctx)
{
	struct ev_end *e = reserve(sizeof(*e));
	if (e) {
		e->id = EV_END;
		e->probe = 0;
		e->p0 = 0;
		e->p1 = 0xdeadbeef;
		e->p2 = 0x1;
		__builtin_memcpy(e->s, "q\"uo\\te\t\0\0\0\0\0\0\0\0", 16);
		bpf_ringbuf_submit(e, 0);
	}
	__u64 *p = reserve(16);
	if (p) {
		p[0] = EV_PRINT_INT;
		p[1] = (__u64)-7;
		bpf_ringbuf_submit(p, 0);
	}
	p = reserve(16);
	if (p) {
		p[0] = EV_PRINT_STR;
		__builtin_memcpy(&p[1], "done\0\0\0\0", 8);
		bpf_ringbuf_submit(p, 0);
	}
	p = reserve(8);
	if (p) {
		p[0] = EV_TIME;
		bpf_ringbuf_submit(p, 0);
	}
	return 0;
}

/* 20 records of 256 KiB per hit: more than the 4 MiB ring holds, so some are lost.
 * "%d %s\n": the index at 8, a short string at 16. */
#define FLOOD_SIZE (256 * 1024)
SEC("uprobe")
int rtst_flood(struct pt_regs *ctx)
{
#pragma unroll
	for (int i = 0; i < 20; i++) {
		__u64 *r = reserve(FLOOD_SIZE);
		if (!r)
			continue;
		r[0] = EV_FLOOD;
		r[1] = i;
		__builtin_memcpy(&r[2], "flood\0\0\0", 8);
		bpf_ringbuf_submit(r, 0);
	}
	return 0;
}

/* For attach/detach timing over every function of the target. */
SEC("uprobe")
int rtst_nop(struct pt_regs *ctx)
{
	return 0;
}
