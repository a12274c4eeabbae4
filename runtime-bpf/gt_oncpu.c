/* On-CPU time per goroutine, for `oncpu`. A goroutine is on a CPU while it is the
 * goroutine its thread runs (from runtime.execute to the thread's next
 * runtime.schedule) and that thread is on a CPU (sched_switch). Each thread's
 * goroutine and CPU time are kept by thread id; at each mark the time the thread ran
 * since the last one is added to its goroutine's count. Counts are kept only for
 * goroutines with traced calls (gt_oncpu_now made their entry). At a switch the
 * thread's CPU time is the kernel's own (sum_exec_runtime): switches are lost now
 * and then on a loaded machine (the perf-event tracepoint sched:sched_switch lost more
 * than this raw one), and with the kernel's count a lost one costs nothing. */
#include "gt_runtime.h"

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct gt_thread {
	__s64 goid;    /* the goroutine the thread runs; 0: none (g0 looking for work) */
	__u64 since;   /* when RT was taken with the thread on a CPU; 0: off CPU */
	__u64 rt;      /* the thread's CPU time (task se.sum_exec_runtime) at SINCE, or
			* when it left the CPU */
	__u64 rt_known; /* RT is the kernel's: taken at a switch (else 0 from mid-run) */
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

/* The thread ran from its last mark to NOW: its goroutine is charged the thread's CPU
 * time over it. At a switch EXACT is the kernel's count (0 elsewhere): the difference
 * of two such counts is right even when switches were lost between them; from mid-run
 * marks (uprobes) the time since the last mark stands in for it. (The two differ by
 * the interrupts and the time the hypervisor took the CPU away, which the kernel does
 * not count as the thread's: a call of a few microseconds on a CPU may show 0.) */
static __always_inline void advance(struct gt_thread *th, __u64 now, __u64 exact)
{
	__u64 d;
	if (exact && th->rt_known)
		d = exact > th->rt ? exact - th->rt : 0;
	else
		d = th->since && now > th->since ? now - th->since : 0;
	if (th->goid && d) {
		__u64 *acc = bpf_map_lookup_elem(&gt_gcpu, &th->goid);
		if (acc)
			__sync_fetch_and_add(acc, d);
	}
	if (exact) {
		th->rt = exact;
		th->rt_known = 1;
	} else {
		th->rt += d;
	}
	th->since = now;
}

static __always_inline struct gt_thread *thread_here(__s64 goid, __u64 now)
{
	__u32 tid = current_tid();
	struct gt_thread *th = bpf_map_lookup_elem(&gt_threads, &tid);
	if (th)
		return th;
	struct gt_thread nt = {.goid = goid, .since = now};
	bpf_map_update_elem(&gt_threads, &tid, &nt, BPF_ANY);
	return 0;
}

void gt_oncpu_execute(void *ctx, const struct gt_target *t, __u64 now)
{
	/* runtime.execute(gp *g, inheritTime bool): gp in RAX (x86-64 pt_regs: ax at 80) */
	__u64 gp = *(__u64 *)((char *)ctx + 80), goid = 0;
	if (gp)
		bpf_probe_read_user(&goid, sizeof(goid), (const void *)(gp + t->g_goid));
	struct gt_thread *th = thread_here((__s64)goid, now);
	if (!th)
		return;
	advance(th, now, 0);
	th->goid = (__s64)goid;
}

void gt_oncpu_schedule(__u64 now)
{
	struct gt_thread *th = thread_here(0, now);
	if (!th)
		return;
	advance(th, now, 0);
	th->goid = 0;
}

static __always_inline void switch_task(__u64 task, __u32 pid_off, __u32 rt_off, __u64 now,
					__u64 in)
{
	__u32 tid = 0;
	__u64 rt = 0;
	bpf_probe_read_kernel(&tid, sizeof(tid), (const void *)(task + pid_off));
	struct gt_thread *th = bpf_map_lookup_elem(&gt_threads, &tid);
	if (!th)
		return;
	bpf_probe_read_kernel(&rt, sizeof(rt), (const void *)(task + rt_off));
	advance(th, now, rt);
	if (!in)
		th->since = 0;
}

void gt_oncpu_switch(void *ctx, __u32 pid_off, __u32 rt_off, __u64 now)
{
	/* raw tracepoint sched_switch(bool preempt, struct task_struct *prev, *next, ...) */
	__u64 *args = ctx;
	switch_task(args[1], pid_off, rt_off, now, 0);
	switch_task(args[2], pid_off, rt_off, now, 1);
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
	struct gt_thread *th = thread_here(goid, now);
	if (!th)
		return *acc;
	if (th->goid != goid || !th->since) {
		/* the goroutine runs here, on a CPU: its runtime.execute (or the switch that
		 * put the thread back) came before the trace, or was lost */
		advance(th, now, 0);
		th->goid = goid;
		return *acc;
	}
	return *acc + (now > th->since ? now - th->since : 0);
}

void gt_oncpu_forget(__s64 goid)
{
	bpf_map_delete_elem(&gt_gcpu, &goid);
}
