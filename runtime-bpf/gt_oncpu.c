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
#include <stdbool.h>

struct gt_thread {
	__s64 goid;    /* the goroutine the thread runs; 0: none (g0 looking for work) */
	__u64 since;   /* when RT was taken with the thread on a CPU; 0: off CPU */
	__u64 rt;      /* the thread's CPU time (task se.sum_exec_runtime) at SINCE, or
			* when it left the CPU */
	__u64 rt_known; /* RT is the kernel's: taken at a switch (else 0 from mid-run) */
	__u64 gen;     /* switches seen: a uprobe's program may be preempted, the switch
			* program run in its middle (uprobe_multi programs run preemptible) */
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

/* Charges goroutine GOID D ns. */
static __always_inline void charge(__s64 goid, __u64 d)
{
	if (!goid || !d)
		return;
	__u64 *acc = bpf_map_lookup_elem(&gt_gcpu, &goid);
	if (acc)
		__sync_fetch_and_add(acc, d);
}

static __always_inline __u64 read_gen(const struct gt_thread *th)
{
	return *(volatile const __u64 *)&th->gen;
}

/* The running thread's entry, made on its first mark (*FRESH): off a CPU as far as it
 * knows (since 0), for mark() to start its clock. Not with SINCE read here: this program
 * can be preempted between reading the clock and storing the entry, and a switch then
 * finds no entry to stop the clock in, so the time off the CPU would count as on it (a
 * first call 207 us over its thread's own CPU time, in a loaded run); mark()'s start is
 * guarded against that switch. */
static __always_inline struct gt_thread *thread_here(__s64 goid, bool *fresh)
{
	__u32 tid = current_tid();
	struct gt_thread *th = bpf_map_lookup_elem(&gt_threads, &tid);
	*fresh = !th;
	if (th)
		return th;
	struct gt_thread nt = {.goid = goid};
	bpf_map_update_elem(&gt_threads, &tid, &nt, BPF_NOEXIST);
	return bpf_map_lookup_elem(&gt_threads, &tid);
}

/* A mark of the thread running here, mid-run (a uprobe): the time since the last mark
 * goes to the goroutine it ran, and from now it runs GOID. The clock is read here, not
 * at the program's start, and a switch that ran meanwhile (the program was preempted)
 * has charged up to it: then only GOID is set. A thread found running that was off a
 * CPU at the last mark took one unseen: the sched_switch tracepoint does not fire for
 * every switch (seen on 6.18 now and then, a thread back from a switch to another
 * process's); what the kernel has counted of its CPU time since (RT_OFF: se.
 * sum_exec_runtime's offset in task_struct) is charged to the goroutine it ran. That
 * count is up to date at the kernel's last update (a tick, a switch), before now: the
 * time between is no goroutine's to know, and the next switch charges GOID from now by
 * the clock (rt_known 0), not by the kernel's count since that update, which would
 * hold the time before this mark (up to a tick of the scheduler's or the last
 * goroutine's) too. -v counts these marks (not a FRESH thread's first). */
static __always_inline void mark(struct gt_thread *th, __s64 goid, __u32 rt_off, bool fresh)
{
	__u64 gen = read_gen(th), now = bpf_ktime_get_ns();
	__u64 since = th->since, d, rt, known = th->rt_known, rt_seen = th->rt;
	if (since) {
		d = now > since ? now - since : 0;
		rt = rt_seen + d;
	} else {
		rt = 0;
		bpf_probe_read_kernel(&rt, sizeof(rt),
				      (const void *)(bpf_get_current_task() + rt_off));
		d = known && rt > rt_seen ? rt - rt_seen : 0;
		known = 0;
		if (!rt)
			rt = rt_seen;
		if (!fresh)
			gt_stat_inc(GT_STAT_ONCPU_UNSEEN);
	}
	__s64 old = th->goid;
	if (read_gen(th) != gen) {
		th->goid = goid;
		th->since = bpf_ktime_get_ns();
		return;
	}
	th->since = now;
	th->rt_known = known;
	/* The commit, one atomic step: a switch that runs before it (this program preempted
	 * past the check above) has counted the thread's time from RT_SEEN to itself, D
	 * included, and set RT to the kernel's count; then D is not charged again, and the
	 * thread's clock restarts now (SINCE written above would count the time off a CPU
	 * between the switches as on one, and D would be charged twice). A switch after it
	 * charges only what follows NOW. */
	if (__sync_val_compare_and_swap(&th->rt, rt_seen, rt) != rt_seen) {
		th->since = bpf_ktime_get_ns();
		th->rt_known = 1;
		th->goid = goid;
		return;
	}
	th->goid = goid;
	charge(old, d);
}

void gt_oncpu_execute(void *ctx, const struct gt_target *t, __u32 rt_off)
{
	/* runtime.execute(gp *g, inheritTime bool): gp in the first integer register */
	__u64 gp = reg_at(ctx, GT_REG_RET0), goid = 0;
	if (gp)
		bpf_probe_read_user(&goid, sizeof(goid), (const void *)(gp + t->g_goid));
	bool fresh;
	struct gt_thread *th = thread_here((__s64)goid, &fresh);
	if (th)
		mark(th, (__s64)goid, rt_off, fresh);
}

void gt_oncpu_schedule(__u32 rt_off)
{
	bool fresh;
	struct gt_thread *th = thread_here(0, &fresh);
	if (th)
		mark(th, 0, rt_off, fresh);
}

/* A switch (IN: the task takes a CPU, else leaves it): the thread's CPU time since the
 * last mark, the kernel's count (EXACT) against the last one, goes to its goroutine. The
 * difference of two counts is right even when switches were lost between them; after
 * a mid-run mark (rt not the kernel's) the clock stands in. (The two differ by the
 * interrupts and the time the hypervisor took the CPU away, which the kernel does not
 * count as the thread's: a call of a few microseconds on a CPU may show 0.) */
static __always_inline void switch_task(__u64 task, __u32 pid_off, __u32 rt_off, __u64 now,
					__u64 in)
{
	__u32 tid = 0;
	__u64 exact = 0, d;
	bpf_probe_read_kernel(&tid, sizeof(tid), (const void *)(task + pid_off));
	struct gt_thread *th = bpf_map_lookup_elem(&gt_threads, &tid);
	if (!th)
		return;
	bpf_probe_read_kernel(&exact, sizeof(exact), (const void *)(task + rt_off));
	__sync_fetch_and_add(&th->gen, 1);
	if (exact && th->rt_known)
		d = exact > th->rt ? exact - th->rt : 0;
	else
		d = th->since && now > th->since ? now - th->since : 0;
	charge(th->goid, d);
	if (exact) {
		th->rt = exact;
		th->rt_known = 1;
	} else {
		th->rt += d;
	}
	th->since = in ? now : 0;
}

void gt_oncpu_switch(void *ctx, __u32 pid_off, __u32 rt_off, __u64 now)
{
	/* raw tracepoint sched_switch(bool preempt, struct task_struct *prev, *next, ...) */
	__u64 *args = ctx;
	switch_task(args[1], pid_off, rt_off, now, 0);
	switch_task(args[2], pid_off, rt_off, now, 1);
}

__u64 gt_oncpu_now(__s64 goid, __u32 rt_off)
{
	__u64 *acc = bpf_map_lookup_elem(&gt_gcpu, &goid);
	if (!acc) {
		__u64 zero = 0;
		bpf_map_update_elem(&gt_gcpu, &goid, &zero, BPF_NOEXIST);
		acc = bpf_map_lookup_elem(&gt_gcpu, &goid);
		if (!acc)
			return 0;
	}
	bool fresh;
	struct gt_thread *th = thread_here(goid, &fresh);
	if (!th)
		return *acc;
	if (th->goid != goid || !th->since) {
		/* the goroutine runs here, on a CPU: its runtime.execute (or the switch that
		 * put the thread back) came before the trace, or was lost */
		mark(th, goid, rt_off, fresh);
		return *acc;
	}
	/* the count so far and the open part, read between no switch (else once more) */
	for (int i = 0; i < 2; i++) {
		__u64 gen = read_gen(th), c = *(volatile __u64 *)acc, since = th->since;
		__u64 now = bpf_ktime_get_ns();
		if (read_gen(th) == gen)
			return c + (since && now > since ? now - since : 0);
	}
	return *acc;
}

void gt_oncpu_forget(__s64 goid)
{
	bpf_map_delete_elem(&gt_gcpu, &goid);
}
