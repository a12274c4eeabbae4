/* User stacks of samples (profile / interval), unwound with the target's SP deltas.
 *
 * Why not the kernel's frame-pointer walk alone: a sample may be at any PC. In a Go
 * function without a frame (a small leaf), in a prologue before BP is set or in an
 * epilogue after it is popped, BP is still the caller's, and the walk skips the caller;
 * in assembly that uses BP as a data register (crypto/sha256) the walk reads data as
 * frames. Go's own unwinder reads .gopclntab's SP delta at each PC instead (the return
 * address is where the frame's layout puts it: SP + delta on x86-64, SP or the link
 * register on arm64; arch_*.h's GT_GOFRAME_*). Here: the first frames are stepped that
 * way, and as soon as BP is the frame pointer this frame would have, the frame-pointer
 * chain, which is right from there, is followed; a return address outside the Go text
 * ends the stack rather than be printed as a frame.
 *
 * Why in BPF and not in user space from a copy of the stack: the stack is a map key
 * (@[ustack] = count()), aggregated in BPF; the kernel's stack-trace map cannot be
 * filled from BPF, so the addresses go to a hash map of our own, keyed by their hash. */
#include "gt_runtime.h"

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define UW_SEARCH 24  /* binary search steps: tables up to 16M rows */
#define UW_SP_STEPS 8 /* frames stepped by SP delta before the frame-pointer chain */
_Static_assert(sizeof(gt_regs) <= GT_UNWIND_DEPTH * 8, "the task's regs fit in the scratch");

struct uw_row {
	__u64 pc;
	__s64 sp;
};

/* The SP delta at PC: the last row at or below it; -1 when no Go function is there.
 * N is a constant: the verifier follows a search of known bounds in few states. */
static __s64 uw_delta(void *tab, __u32 n, __u64 pc)
{
	__u32 lo = 0, hi = n, k = 0;
	struct uw_row *r = bpf_map_lookup_elem(tab, &k);
	if (!r || pc < r->pc || !pc)
		return -1;
	for (int i = 0; i < UW_SEARCH && hi - lo > 1; i++) {
		__u32 mid = lo + (hi - lo) / 2;
		r = bpf_map_lookup_elem(tab, &mid);
		if (!r)
			return -1;
		if (r->pc <= pc)
			lo = mid;
		else
			hi = mid;
	}
	r = bpf_map_lookup_elem(tab, &lo);
	return r ? r->sp : -1;
}

static __u64 uw_read(__u64 addr, int *ok)
{
	__u64 v = 0;
	if (bpf_probe_read_user(&v, sizeof(v), (const void *)addr))
		*ok = 0;
	return v;
}

/* The task's user registers (PC, SP, FP, LR) into R, read through UR: 1 when there are
 * user mode's. UR is the scratch, before the stack is written there (arm64's 272 bytes
 * on the BPF stack make the calls' combined stack too large for 6.1: 544), and this is
 * a subprogram of its own so that no load serves both UR and the sample's regs (the
 * verifier refuses an instruction used with two kinds of pointer). */
static __attribute__((noinline)) int uw_task_regs(gt_regs *ur, __u64 *r)
{
	void *ut = (void *)bpf_task_pt_regs(bpf_get_current_task_btf());
	if (!ut || bpf_probe_read_kernel(ur, sizeof(*ur), ut) || !GT_REGS_USER(ur))
		return 0;
	r[0] = GT_REGS_IP(ur);
	r[1] = GT_REGS_SP(ur);
	r[2] = GT_REGS_FP(ur);
	r[3] = GT_REGS_LR(ur);
	return 1;
}

/* The Go frame the runtime left to run code that is not Go's: runtime.nanotime1 saves
 * its caller's PC and SP in m.vdsoPC/vdsoSP before calling the vDSO (and clears vdsoSP
 * after), cgocall's entersyscall saves them in curg.syscallpc/syscallsp. 1 when found. */
static int uw_restart(const struct gt_uwtarget *t, __u64 *pc, __u64 *sp)
{
	__u64 tp = 0, g, m, rpc = 0, rsp = 0;
	int ok = 1;
	if (!t->tp_off || !t->g_m)
		return 0;
	if (bpf_probe_read_kernel(&tp, sizeof(tp),
				  (const void *)(bpf_get_current_task() + t->tp_off)) || !tp)
		return 0;
	g = uw_read(tp + (__u64)t->tls_g_off, &ok);
	m = g ? uw_read(g + t->g_m, &ok) : 0;
	if (!ok || !m)
		return 0;
	if (t->m_vdso_sp && t->m_vdso_pc) {
		rsp = uw_read(m + t->m_vdso_sp, &ok);
		rpc = rsp ? uw_read(m + t->m_vdso_pc, &ok) : 0;
	}
	if (!rsp && t->g_syscall_sp && t->g_syscall_pc && t->m_curg) {
		__u64 curg = uw_read(m + t->m_curg, &ok);
		rsp = curg ? uw_read(curg + t->g_syscall_sp, &ok) : 0;
		rpc = rsp ? uw_read(curg + t->g_syscall_pc, &ok) : 0;
	}
	if (!ok || !rsp || !rpc)
		return 0;
	*pc = rpc;
	*sp = rsp;
	return 1;
}

__s64 gt_unwind(void *ctx, void *tab, __u32 ntab, void *scratch, void *stacks, __u32 depth,
		__u64 pid, const struct gt_uwtarget *t)
{
	gt_regs *regs = ctx; /* bpf_perf_event_data starts with the sampled regs */
	__u32 zero = 0, n = 0;
	__u64 *v = bpf_map_lookup_elem(scratch, &zero);
	struct uw_row *last = ntab ? bpf_map_lookup_elem(tab, &(__u32){ntab - 1}) : 0;
	struct uw_row *first = bpf_map_lookup_elem(tab, &zero);
	int ok = 1;

	/* the table is the traced program's: another process, or the kernel, is not */
	if (!v || !first || !last || !pid || (bpf_get_current_pid_tgid() >> 32) != pid)
		return -1;
	__u64 pc = GT_REGS_IP(regs), sp = GT_REGS_SP(regs), bp = GT_REGS_FP(regs);
	__u64 lr = GT_REGS_LR(regs); /* the sampled frame's only: 0 where none */
	/* loaded now, each from the context: the compiler would otherwise load each later
	 * through a pointer chosen between the context and the task's copy below, which the
	 * verifier refuses (one instruction, two kinds of pointer) */
	asm volatile("" : "+r"(pc), "+r"(sp), "+r"(bp), "+r"(lr));
	int user = GT_REGS_USER(regs);
	if (!user && t->task_regs) {
		/* in the kernel (a system call, a fault, a signal on its way out): the user
		 * regs are the task's, read as plain values */
		__u64 r[4];
		if (uw_task_regs((gt_regs *)v, r)) {
			pc = r[0];
			sp = r[1];
			bp = r[2];
			lr = r[3];
			user = 1;
		}
	}
	__u64 lo = first->pc, hi = last->pc;
	if (depth > GT_UNWIND_DEPTH)
		depth = GT_UNWIND_DEPTH;
	int chain = 0, steps = UW_SP_STEPS;
	if (!user || uw_delta(tab, ntab, pc) < 0) {
		/* Not in Go code (the vDSO, cgo's C, the C library of -c's child before its
		 * exec): no frame of the binary is here, and C code need not keep a frame
		 * pointer. Restart where the runtime left its Go frame, as Go's profiler does;
		 * else the stack is Go's own marker. (!user: the task's user regs could not
		 * be read; if no Go frame is known, the kernel's walk, cut in user space.) */
		if (!uw_restart(t, &pc, &sp) || uw_delta(tab, ntab, pc) < 0) {
			if (!user || !t->external_pc)
				return -1;
			pc = t->external_pc;
			steps = 0;
		}
		bp = 0; /* not this Go frame's: the frames' saved ones are read instead */
		lr = 0;
	}
	v[n++] = pc;
	for (int i = 0; i < steps && n < depth; i++) {
		__s64 d = uw_delta(tab, ntab, pc);
		if (d < 0)
			break;
		if (GT_GOFRAME_HAS_FP(d) && bp == GT_GOFRAME_FP(sp, (__u64)d)) {
			chain = 1; /* BP is this frame's: the chain is right from here */
			break;
		}
		/* with a link register, a frame not set up yet has its return address there:
		 * the sampled frame only (a caller's is always stored) */
		__u64 ra = GT_HAS_LR && !d ? lr : uw_read(GT_GOFRAME_RA(sp, (__u64)d), &ok);
		lr = 0;
		/* where this frame saved its caller's BP, if it has a frame pointer; a frameless
		 * one left BP alone */
		if (GT_GOFRAME_HAS_FP(d))
			bp = uw_read(GT_GOFRAME_FP(sp, (__u64)d), &ok);
		if (!ok || uw_delta(tab, ntab, ra) < 0)
			break;
		sp = GT_GOFRAME_CALLER_SP(sp, (__u64)d);
		pc = ra;
		if (n < GT_UNWIND_DEPTH)
			v[n++] = ra;
	}
	for (int i = 0; chain && i < GT_UNWIND_DEPTH && n < depth; i++) {
		__u64 ra = uw_read(bp + 8, &ok), next = uw_read(bp, &ok);
		if (!ok || ra < lo || ra >= hi)
			break;
		if (n < GT_UNWIND_DEPTH)
			v[n++] = ra;
		if (next <= bp || (next & 7))
			break; /* callers' frames are above: anything else is not a frame pointer */
		bp = next;
	}
	__u64 h = 0xcbf29ce484222325ull;
	for (__u32 i = 0; i < GT_UNWIND_DEPTH; i++) {
		if (i >= n)
			v[i] = 0;
		h = (h ^ v[i]) * 0x100000001b3ull;
	}
	/* the id is the hash: 2^62 of them make a collision of two stacks of a run
	 * negligible, and no comparison of addresses is needed */
	__u64 id = (h & (GT_UNWIND_ID - 1)) | GT_UNWIND_ID;
	if (!bpf_map_lookup_elem(stacks, &id) &&
	    bpf_map_update_elem(stacks, &id, v, BPF_NOEXIST) && !bpf_map_lookup_elem(stacks, &id))
		return -1; /* full */
	return (__s64)id;
}
