/* On-CPU time per goroutine, for `oncpu`. A goroutine is on a CPU while it is the
 * goroutine its thread runs (from runtime.execute to the thread's next
 * runtime.schedule) and that thread is on a CPU (sched_switch). Each thread's
 * (goroutine, since) is kept by thread id; on-CPU nanoseconds add up per goroutine,
 * and only for goroutines with traced calls (gt_oncpu_now made their entry). */
#include "gt_runtime.h"

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct gt_thread {
	__s64 goid;  /* the goroutine the thread runs; 0: none (g0 looking for work) */
	__u64 since; /* when it last went on a CPU running it; 0: off CPU or none */
};

/* LRU: a thread that exits leaves its entry, which ages out. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct gt_thread);
} gt_threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __s64);
	__type(value, __u64);
} gt_gcpu SEC(".maps");

static __always_inline __u32 current_tid(void)
{
	return (__u32)bpf_get_current_pid_tgid();
}

/* The thread's open interval ends at NOW: its goroutine is charged for it. */
static __always_inline void charge(struct gt_thread *th, __u64 now)
{
	if (!th->goid || !th->since)
		return;
	__u64 *acc = bpf_map_lookup_elem(&gt_gcpu, &th->goid);
	if (acc && now > th->since)
		__sync_fetch_and_add(acc, now - th->since);
	th->since = 0;
}

void gt_oncpu_execute(void *ctx, const struct gt_target *t, __u64 now)
{
	/* runtime.execute(gp *g, inheritTime bool): gp in RAX (x86-64 pt_regs: ax at 80) */
	__u64 gp = *(__u64 *)((char *)ctx + 80), goid = 0;
	if (gp)
		bpf_probe_read_user(&goid, sizeof(goid), (const void *)(gp + t->g_goid));
	__u32 tid = current_tid();
	struct gt_thread *th = bpf_map_lookup_elem(&gt_threads, &tid);
	if (th) {
		charge(th, now);
		th->goid = (__s64)goid;
		th->since = now;
		return;
	}
	struct gt_thread nt = {(__s64)goid, now};
	bpf_map_update_elem(&gt_threads, &tid, &nt, BPF_ANY);
}

void gt_oncpu_schedule(__u64 now)
{
	__u32 tid = current_tid();
	struct gt_thread *th = bpf_map_lookup_elem(&gt_threads, &tid);
	if (!th)
		return;
	charge(th, now);
	th->goid = 0;
}

void gt_oncpu_switch(void *ctx, __u32 next_pid_off, __u64 now)
{
	__u32 tid = current_tid(); /* sched_switch fires in the task going off the CPU */
	struct gt_thread *th = bpf_map_lookup_elem(&gt_threads, &tid);
	if (th)
		charge(th, now);
	tid = *(__u32 *)((char *)ctx + next_pid_off);
	th = bpf_map_lookup_elem(&gt_threads, &tid);
	if (th && th->goid)
		th->since = now;
}

__u64 gt_oncpu_now(__s64 goid, __u64 now)
{
	__u64 *acc = bpf_map_lookup_elem(&gt_gcpu, &goid);
	if (!acc) {
		__u64 zero = 0;
		bpf_map_update_elem(&gt_gcpu, &goid, &zero, BPF_NOEXIST);
		acc = bpf_map_lookup_elem(&gt_gcpu, &goid);
		if (!acc)
			return 0;
	}
	__u32 tid = current_tid();
	struct gt_thread *th = bpf_map_lookup_elem(&gt_threads, &tid);
	if (th && th->goid == goid) {
		if (!th->since) /* its switch onto this CPU came before the trace */
			th->since = now;
		return *acc + (now > th->since ? now - th->since : 0);
	}
	/* The goroutine runs here now, but its runtime.execute came before the trace (or
	 * the thread aged out): it is on a CPU from now on. */
	if (th)
		charge(th, now);
	struct gt_thread nt = {goid, now};
	bpf_map_update_elem(&gt_threads, &tid, &nt, BPF_ANY);
	return *acc;
}

void gt_oncpu_forget(__s64 goid)
{
	bpf_map_delete_elem(&gt_gcpu, &goid);
}
