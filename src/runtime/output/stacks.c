/* stacks: ustack / kstack values (a stack id in a BPF stack-trace map, the pid, the
 * caller a go: entry probe adds) read back and printed as bpftrace prints them:
 *   bpftrace mode  "\n    sym+off\n ..." (an unknown address as 0xADDR)
 *   perf mode      "\n\taddr sym+off (path)\n ..."
 * with Go's inlined calls expanded (a "func (inlined)" line above the frame that holds
 * them) and, with -v, each frame's file:line. One run traces once: the state is the
 * run's, set by rt_stacks__init. */
#include "runtime/output/output.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bpf_abi.h"
#include "common/util.h"

#define STACK_FRAMES_MAX 127
#define INLINE_MAX 16

static struct {
	const struct gt_plan *plan;
	const struct rt_symbolizer *sym;
	int *fds;    /* per plan.stackmaps */
	int *uwfds;  /* per plan.stackmaps: stacks gt_unwind.c unwound (-1: none) */
	bool lines;
} st;

void rt_stacks__init(const struct gt_plan *plan, struct bpf_object *obj,
		     const struct rt_symbolizer *sym, bool lines)
{
	st.plan = plan;
	st.sym = sym;
	st.lines = lines;
	free(st.fds);
	st.fds = xcalloc((size_t)plan->nstackmaps + 1, sizeof(*st.fds));
	free(st.uwfds);
	st.uwfds = xcalloc((size_t)plan->nstackmaps + 1, sizeof(*st.uwfds));
	for (int i = 0; i < plan->nstackmaps; i++) {
		char name[128];
		st.fds[i] = obj ? bpf_object__find_map_fd_by_name(obj, plan->stackmaps[i].bpf_name) : -1;
		snprintf(name, sizeof(name), "%s%s", plan->stackmaps[i].bpf_name, GT_UNWIND_SUFFIX);
		st.uwfds[i] = obj && plan->nunwind ? bpf_object__find_map_fd_by_name(obj, name) : -1;
	}
}

int rt_stacks__fill_unwind(const struct gt_plan *plan, struct bpf_object *obj)
{
	if (!plan->nunwind || !obj)
		return 0;
	int fd = bpf_object__find_map_fd_by_name(obj, GT_MAP_UNWIND_TAB);
	if (fd < 0)
		return 0; /* no program unwinds (the table is made for any ustack in a profile) */
	uint32_t n = (uint32_t)plan->nunwind;
	uint32_t *keys = xcalloc(n, sizeof(*keys));
	for (uint32_t i = 0; i < n; i++)
		keys[i] = i;
	/* one call for the whole table where the kernel has batches (5.6), else per row */
	int err = bpf_map_update_batch(fd, keys, plan->unwind, &n, NULL);
	for (uint32_t i = err ? 0 : (uint32_t)plan->nunwind; i < (uint32_t)plan->nunwind; i++) {
		err = bpf_map_update_elem(fd, &keys[i], &plan->unwind[i], BPF_ANY);
		if (err)
			break;
	}
	/* the row after the last: the count (gt_unwind.c's search reads it) */
	struct plan_sprow count = {(uint64_t)plan->nunwind, -1};
	uint32_t k = (uint32_t)plan->nunwind;
	if (!err)
		err = bpf_map_update_elem(fd, &k, &count, BPF_ANY);
	free(keys);
	return err;
}

void rt_stacks__free(void)
{
	free(st.fds);
	free(st.uwfds);
	memset(&st, 0, sizeof(st));
}

/* A user stack of the kernel's walk where gt_unwind.c left it that (a sample in the
 * kernel: the user regs are not at hand there) may hold what is not the target's Go code
 * (the C library of `-c`'s child before its exec, the vDSO, cgo's C): a frame-pointer
 * walk through it reads anything. The stack ends at its first such frame, and one whose
 * leaf is such is Go's own marker runtime._ExternalCode (docs: ustack). */
static void cut_foreign(uint64_t *v, int kdepth)
{
	const struct gt_plan *pl = st.plan;
	if (!pl->nunwind)
		return;
	uint64_t lo = pl->unwind[0].pc, hi = pl->unwind[pl->nunwind - 1].pc;
	for (int i = 0; i < kdepth && v[i]; i++) {
		if (v[i] >= lo && v[i] < hi)
			continue;
		if (i == 0 && pl->unwind_rt.external_pc)
			v[i++] = pl->unwind_rt.external_pc;
		for (; i < kdepth; i++)
			v[i] = 0;
		return;
	}
}

int rt_stack_addrs(const struct plan_arg *a, const uint8_t *p, uint64_t *out, int max)
{
	int64_t id = (int64_t)rt_rd64(p);
	uint64_t caller = rt_rd64(p + 16);
	if (!st.plan || a->stack_map < 0 || a->stack_map >= st.plan->nstackmaps || id < 0)
		return 0;
	int fd = id & GT_UNWIND_ID ? st.uwfds[a->stack_map] : st.fds[a->stack_map];
	if (fd < 0)
		return 0;
	int depth = st.plan->stackmaps[a->stack_map].depth;
	int kdepth = st.plan->stackmaps[a->stack_map].kdepth;
	uint64_t *v = xcalloc((size_t)kdepth, sizeof(*v));
	uint32_t key = (uint32_t)id;
	uint64_t key64 = (uint64_t)id;
	int n = 0;
	if (!bpf_map_lookup_elem(fd, id & GT_UNWIND_ID ? (void *)&key64 : (void *)&key, v)) {
		if (!(id & GT_UNWIND_ID) && st.uwfds[a->stack_map] >= 0)
			cut_foreign(v, kdepth);
		for (int i = 0; i < kdepth && v[i] && n < max && n < depth; i++) {
			out[n++] = v[i];
			/* the caller the walk skipped: the site's return address on top of the
			 * stack (entries, RETs, functions without a frame; cg_stack.c). Linux
			 * 6.11+ puts it there itself when the probed instruction is `push %rbp`,
			 * as Go 1.21+'s prologue has at an entry site: then it is v[1]. */
			if (i == 0 && caller && n < max && n < depth &&
			    !(kdepth > 1 && v[1] == caller))
				out[n++] = caller;
		}
	}
	free(v);
	return n;
}

int rt_stack_frames(const struct plan_arg *a, const uint8_t *p, uint64_t addr, int index,
		    struct rt_frame *out, int max)
{
	bool kernel = st.plan->stackmaps[a->stack_map].kernel;
	memset(out, 0, sizeof(*out));
	if (!st.sym)
		return 0;
	if (kernel)
		return st.sym->kernel(st.sym->ctx, addr, index > 0, out);
	return st.sym->user(st.sym->ctx, (int)rt_rd64(p + 8), addr, index > 0, out, max);
}

static void put_frame(struct strbuf *sb, const struct rt_frame *f, uint64_t addr, bool perf,
		      bool kernel)
{
	if (perf) {
		strbuf_printf(sb, "\t%" PRIx64 " ", addr);
		if (f->func)
			strbuf_printf(sb, "%s+%" PRIu64, f->func, f->off);
		else
			strbuf_printf(sb, "0x%" PRIx64, addr);
		if (!kernel)
			strbuf_printf(sb, " (%s)", f->path ? f->path : "[unknown]");
	} else if (!f->func) {
		strbuf_printf(sb, "    0x%" PRIx64, addr);
	} else if (f->inlined) {
		strbuf_printf(sb, "    %s (inlined)", f->func);
	} else {
		strbuf_printf(sb, "    %s+%" PRIu64, f->func, f->off);
	}
	if (st.lines && f->file)
		strbuf_printf(sb, " %s:%d", f->file, f->line);
	strbuf_putc(sb, '\n');
}

/* bpftrace's raw and build_id modes: the address in hex; a user frame in build_id mode
 * as the kernel's BPF_F_USER_BUILD_ID gives it (40 hex digits, 0xOFFSET in the file), or
 * the address where its file has no build ID (as a Go binary linked internally) */
static void put_raw(struct strbuf *sb, const struct plan_arg *a, const uint8_t *p,
		    uint64_t addr, bool kernel)
{
	const uint8_t *id;
	size_t len;
	uint64_t off;
	if (a->stack_mode == PLAN_STACK_BUILD_ID && !kernel && st.sym && st.sym->build_id &&
	    !st.sym->build_id(st.sym->ctx, (int)rt_rd64(p + 8), addr, &id, &len, &off)) {
		for (size_t i = 0; i < 20; i++) /* the kernel's is 20 bytes, zero-padded */
			strbuf_printf(sb, "%02x", i < len ? id[i] : 0);
		strbuf_printf(sb, " 0x%02" PRIx64 "\n", off);
		return;
	}
	strbuf_printf(sb, "%" PRIx64 "\n", addr);
}

void rt_stack_format(struct strbuf *sb, const struct plan_arg *a, const uint8_t *p)
{
	uint64_t addrs[STACK_FRAMES_MAX + 1];
	int n = rt_stack_addrs(a, p, addrs, STACK_FRAMES_MAX + 1);
	bool perf = a->stack_mode == PLAN_STACK_PERF;
	bool kernel = st.plan && a->stack_map >= 0 && st.plan->stackmaps[a->stack_map].kernel;
	if (n == 0)
		return; /* as bpftrace: an empty stack prints nothing */
	strbuf_putc(sb, '\n');
	if (a->stack_mode == PLAN_STACK_RAW || a->stack_mode == PLAN_STACK_BUILD_ID) {
		for (int i = 0; i < n; i++)
			put_raw(sb, a, p, addrs[i], kernel);
		return;
	}
	for (int i = 0; i < n; i++) {
		struct rt_frame fr[INLINE_MAX];
		int k = rt_stack_frames(a, p, addrs[i], i, fr, INLINE_MAX);
		if (k <= 0) {
			struct rt_frame none = {0};
			put_frame(sb, &none, addrs[i], perf, kernel);
			continue;
		}
		for (int j = 0; j < k; j++)
			put_frame(sb, &fr[j], addrs[i], perf, kernel);
	}
}

void rt_sym_format(struct strbuf *sb, const struct plan_arg *a, const uint8_t *p)
{
	uint64_t addr = rt_rd64(p);
	struct rt_frame fr[INLINE_MAX];
	int n = 0;
	if (st.sym && a->stack_mode == PLAN_SYM_KERNEL)
		n = st.sym->kernel(st.sym->ctx, addr, false, fr);
	else if (st.sym)
		n = st.sym->user(st.sym->ctx, (int)rt_rd64(p + 8), addr, a->stack_mode == PLAN_SYM_CALLER,
				 fr, INLINE_MAX);
	if (n <= 0) {
		strbuf_printf(sb, "0x%" PRIx64, addr);
		return;
	}
	if (a->stack_mode != PLAN_SYM_CALLER) { /* as bpftrace: the symbol holding ADDR */
		strbuf_puts(sb, fr[n - 1].func);
		if (st.lines && a->stack_mode == PLAN_SYM_KERNEL && fr[0].file) /* -v */
			strbuf_printf(sb, " %s:%d", fr[0].file, fr[0].line);
		return;
	}
	/* the innermost frame of the call: an inlined function calls too */
	strbuf_puts(sb, fr[0].func);
	if (fr[0].file)
		strbuf_printf(sb, " %s:%d", strrchr(fr[0].file, '/') ? strrchr(fr[0].file, '/') + 1
								 : fr[0].file, fr[0].line);
}

void rt_kaddr_format(struct strbuf *sb, uint64_t addr)
{
	struct rt_frame fr[INLINE_MAX];
	int n = st.sym ? st.sym->kernel(st.sym->ctx, addr, false, fr) : 0;
	if (n <= 0) {
		strbuf_printf(sb, "0x%" PRIx64, addr);
		return;
	}
	strbuf_printf(sb, "%s+0x%" PRIx64, fr[n - 1].func, fr[n - 1].off);
	if (st.lines && fr[0].file)
		strbuf_printf(sb, " %s:%d", fr[0].file, fr[0].line);
}
