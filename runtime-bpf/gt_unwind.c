/* User stacks of samples (profile / interval), unwound with the target's SP deltas.
 *
 * Why not the kernel's frame-pointer walk alone: a sample may be at any PC. In a Go
 * function without a frame (a small leaf), in a prologue before BP is set or in an
 * epilogue after it is popped, BP is still the caller's, and the walk skips the caller;
 * in assembly that uses BP as a data register (crypto/sha256) the walk reads data as
 * frames. Go's own unwinder reads .gopclntab's SP delta at each PC instead (the return
 * address is at SP + delta). Here: the first frames are stepped that way, and as soon
 * as BP is the frame pointer this frame would have (SP + delta - 8), the frame-pointer
 * chain, which is right from there, is followed; a return address outside the Go text
 * ends the stack rather than be printed as a frame.
 *
 * Why in BPF and not in user space from a copy of the stack: the stack is a map key
 * (@[ustack] = count()), aggregated in BPF; the kernel's stack-trace map cannot be
 * filled from BPF, so the addresses go to a hash map of our own, keyed by their hash. */
#include "gt_runtime.h"

#include <linux/bpf.h>
#include <asm/ptrace.h>
#include <bpf/bpf_helpers.h>

#define UW_SEARCH 24  /* binary search steps: tables up to 16M rows */
#define UW_SP_STEPS 8 /* frames stepped by SP delta before the frame-pointer chain */

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

__s64 gt_unwind(void *ctx, void *tab, __u32 ntab, void *scratch, void *stacks, __u32 depth,
		__u64 pid)
{
	struct pt_regs *regs = ctx; /* bpf_perf_event_data starts with the sampled regs */
	__u32 zero = 0, n = 0;
	__u64 *v = bpf_map_lookup_elem(scratch, &zero);
	struct uw_row *last = ntab ? bpf_map_lookup_elem(tab, &(__u32){ntab - 1}) : 0;
	struct uw_row *first = bpf_map_lookup_elem(tab, &zero);
	int ok = 1;

	/* the table is the traced program's: another process, or the kernel, is not */
	if (!v || !first || !last || !pid || (bpf_get_current_pid_tgid() >> 32) != pid)
		return -1;
	__u64 pc = regs->rip, sp = regs->rsp, bp = regs->rbp;
	/* in the kernel (a system call, a fault) the user regs are the task's, which a
	 * perf-event program cannot read without BTF helpers: the kernel's walk */
	if ((regs->cs & 3) != 3)
		return -1;
	__u64 lo = first->pc, hi = last->pc;
	if (depth > GT_UNWIND_DEPTH)
		depth = GT_UNWIND_DEPTH;
	v[n++] = pc;
	int chain = 0;
	if (uw_delta(tab, ntab, pc) < 0)
		return -1; /* not in Go code (a C library, the vDSO): the kernel's walk */
	for (int i = 0; i < UW_SP_STEPS && n < depth; i++) {
		__s64 d = uw_delta(tab, ntab, pc);
		if (d < 0)
			break;
		if (d >= 8 && bp == sp + (__u64)d - 8) {
			chain = 1; /* BP is this frame's: the chain is right from here */
			break;
		}
		__u64 ra = uw_read(sp + (__u64)d, &ok);
		/* where this frame saved its caller's BP, if it has a frame pointer; a frameless
		 * one left BP alone */
		if (d >= 8)
			bp = uw_read(sp + (__u64)d - 8, &ok);
		if (!ok || uw_delta(tab, ntab, ra) < 0)
			break;
		sp += (__u64)d + 8;
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
