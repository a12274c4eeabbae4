/* sema_stack: ustack and kstack, bpftrace's forms: ustack, ustack(N), ustack(perf),
 * ustack(bpftrace, N). One BPF stack-trace map per (user or kernel, depth); the value is
 * a stack id that user space names (runtime/output/stacks.c). */
#include "sema/sema_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binfo/binfo.h"

#define STACK_MAX_DEPTH 127 /* PERF_MAX_STACK_DEPTH, the kernel's default limit */

static bool kernel_adds_caller(struct sema *s)
{
	if (!s->stack_caller_known)
		s->stack_caller_known = s->opts->uprobe_stack_has_caller &&
						s->opts->uprobe_stack_has_caller()
					? 1
					: -1;
	return s->stack_caller_known > 0;
}

static int stack_map(struct sema *s, bool kernel, int depth)
{
	/* At go: :entry and :return sites codegen adds the caller the kernel's walk misses:
	 * the kernel then keeps one frame less, or stacks that differ only past the last
	 * printed frame would be separate keys. */
	unsigned entret = (1u << GO_ENTRY) | (1u << GO_RETURN);
	bool plus_caller = !kernel && depth > 1 && s->clause_points &&
			   !(s->clause_points & ~entret) &&
			   s->clause_kinds == (1u << PLAN_PROG_UPROBE);
	/* ... unless the kernel adds it at every site: entries at `push %rbp` on kernels
	 * whose uprobe stacks hold the caller there (asked once, and only here) */
	bool any = false;
	for (int i = s->clause_site_begin; plus_caller && i < s->sites.n; i++) {
		struct plan_site *site = &s->sites.v[i];
		const struct sema_site_info *in = &s->site_info.v[i];
		if ((site->cookie_flags & GT_SITE_CALLER_AT_SP) && in->point == GO_ENTRY &&
		    in->bi && binfo_is_push_rbp(in->bi, site->vaddr) && kernel_adds_caller(s))
			site->cookie_flags |= GT_SITE_KERNEL_ADDS_CALLER;
		any |= (site->cookie_flags & (GT_SITE_CALLER_AT_SP | GT_SITE_KERNEL_ADDS_CALLER)) ==
		       GT_SITE_CALLER_AT_SP;
	}
	plus_caller = plus_caller && any;
	int kdepth = plus_caller ? depth - 1 : depth;
	for (int i = 0; i < s->stackmaps.n; i++)
		if (s->stackmaps.v[i].kernel == kernel && s->stackmaps.v[i].depth == depth &&
		    s->stackmaps.v[i].kdepth == kdepth)
			return i;
	struct plan_stackmap m = {
		.bpf_name = arena_printf(s->arena, "gt_%cstack_%d%s", kernel ? 'k' : 'u', depth,
					 plus_caller ? "_c" : ""),
		.kernel = kernel,
		.depth = depth,
		.kdepth = kdepth,
	};
	vec_push(&s->stackmaps, m);
	return s->stackmaps.n - 1;
}

/* bpftrace's stack modes by name: enum plan_stack_mode, or -1 */
static int stack_mode(const char *name)
{
	static const char *const names[] = {"bpftrace", "perf", "raw", "build_id"};
	for (int i = 0; i < (int)ARRAY_SIZE(names); i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

int sema_check_stack(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	bool kernel = b->id == BI_KSTACK;
	/* a sample may be at any PC: the frame pointer alone loses a frameless function's
	 * caller and reads assembly's data in BP as frames (runtime-bpf/gt_unwind.c) */
	if (!kernel && (s->clause_kinds & (1u << PLAN_PROG_PERF)))
		s->unwind = true;
	/* the default: bpftrace's stack_mode (BPFTRACE_STACK_MODE, a config block) */
	const char *dm = gt_getenv("STACK_MODE");
	int mode = dm ? stack_mode(dm) : PLAN_STACK_BPFTRACE;
	if (mode < 0)
		mode = PLAN_STACK_BPFTRACE;
	int depth = STACK_MAX_DEPTH;
	struct ast_list *args = e->kind == AST_CALL ? &e->u.call.args : NULL;
	for (int i = 0; args && i < args->n; i++) {
		struct ast_node *a = args->v[i];
		if (i == 0 && a->kind == AST_IDENT && stack_mode(a->u.name) >= 0) {
			mode = stack_mode(a->u.name);
			if (kernel && mode == PLAN_STACK_BUILD_ID) {
				diag_error(s->src, a->loc,
					   "'build_id' stack mode can only be used for ustack");
				return -EINVAL;
			}
			continue;
		}
		if (i == 1 && args->v[0]->kind != AST_IDENT) { /* a mode, then the depth */
			diag_error(s->src, e->loc, "%s", b->usage);
			return -EINVAL;
		}
		if (a->kind != AST_INT || a->u.int_.value < 1 || a->u.int_.value > STACK_MAX_DEPTH) {
			diag_error(s->src, a->loc,
				   "%s: expected perf, bpftrace, raw%s or a depth from 1 to %d", b->name,
				   kernel ? "" : ", build_id", STACK_MAX_DEPTH);
			return -EINVAL;
		}
		depth = (int)a->u.int_.value;
	}
	if (kernel && mode == PLAN_STACK_BUILD_ID) { /* the default's: as bpftrace */
		diag_warning(s->src, e->loc, "'build_id' stack mode can only be used for ustack. "
					     "Falling back to 'raw' mode.");
		mode = PLAN_STACK_RAW;
	}
	e->ty = sema_type_new(s, TY_STACK, 24, false);
	e->ty->stack_map = stack_map(s, kernel, depth);
	e->ty->stack_mode = mode;
	return 0;
}

/* usym(addr), ksym(addr), caller: an address user space names. */
int sema_check_sym(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	if (b->id == BI_CALLER) {
		unsigned ok = (1u << GO_ENTRY) | (1u << GO_RETURN);
		if (s->clause_points & ~ok) {
			diag_error(s->src, e->loc, "caller is available at go:FUNC:entry and :return, "
				   "where the return address is on top of the stack");
			return -EINVAL;
		}
	} else {
		struct ast_node *a = e->u.call.args.v[0];
		if (sema_check_expr(s, a))
			return -EINVAL;
		if (!sema_is_int(a)) {
			diag_error(s->src, a->loc, "%s", b->usage);
			return -EINVAL;
		}
	}
	e->ty = sema_type_new(s, TY_SYM, 16, false);
	e->ty->stack_mode = b->id == BI_CALLER ? PLAN_SYM_CALLER
			    : b->id == BI_KSYM   ? PLAN_SYM_KERNEL
						 : PLAN_SYM_USER;
	return 0;
}

/* uaddr("sym"): the symbol's address in the clause's binary, as linked. */
int sema_check_uaddr(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	struct ast_node *a = e->u.call.args.v[0];
	if (a->kind != AST_STR) {
		diag_error(s->src, a->loc, "%s", b->usage);
		return -EINVAL;
	}
	struct binfo *bi = s->clause_site_begin < s->sites.n ? s->site_info.v[s->clause_site_begin].bi
							     : NULL;
	uint64_t addr;
	if (!bi) {
		diag_error(s->src, e->loc, "uaddr() needs a go: or uprobe: probe: the binary it "
			   "looks the symbol up in");
		return -EINVAL;
	}
	if (binfo_symbol_addr(bi, a->u.str.bytes, &addr)) {
		diag_error(s->src, a->loc, "no symbol '%s' in %s", a->u.str.bytes, binfo_path(bi));
		return -EINVAL;
	}
	if (binfo_is_pie(bi)) {
		diag_error(s->src, e->loc, "uaddr() in a PIE: the address is known only once the "
			   "program is loaded");
		return -ENOTSUP;
	}
	sema_node_of(s, e)->const_val = (int64_t)addr;
	e->ty = &sema_ty_u64;
	return 0;
}

void sema_stack_name(struct sema *s, const struct gt_type *t, char *buf, size_t len)
{
	if (t->kind != TY_STACK) {
		snprintf(buf, len, "not a stack");
		return;
	}
	const struct plan_stackmap *m = &s->stackmaps.v[t->stack_map];
	static const char *const modes[] = {"", "perf, ", "raw, ", "build_id, "};
	snprintf(buf, len, "%s(%s%d)", m->kernel ? "kstack" : "ustack", modes[t->stack_mode],
		 m->depth);
}

/* What gt_unwind.c needs when a sample's PC is not in Go code (the vDSO, cgo's C). */
static void unwind_target(struct binfo *bi, struct gt_uwtarget *t)
{
	struct binfo_goruntime rt;
	const struct binfo_func *ext = binfo_find_func(bi, "runtime._ExternalCode");
	memset(t, 0, sizeof(*t));
	/* +1: inside it, as Go's profiler records it (a return address is looked up at -1) */
	t->external_pc = ext && ext->size > 1 ? ext->addr + 1 : 0;
	int tp = binfo_kernel_tp_offset();
	if (binfo_goruntime(bi, &rt) < 0 || tp <= 0)
		return;
	t->tls_g_off = rt.tls_g_offset;
	t->tp_off = (__u64)tp;
	t->g_m = (__u64)rt.g_m;
	t->m_curg = (__u64)rt.m_curg;
	t->m_vdso_sp = (__u64)rt.m_vdso_sp;
	t->m_vdso_pc = (__u64)rt.m_vdso_pc;
	t->g_syscall_sp = (__u64)rt.g_syscall_sp;
	t->g_syscall_pc = (__u64)rt.g_syscall_pc;
}

void sema_stack_finish(struct sema *s, struct gt_plan *plan)
{
	plan->nstackmaps = s->stackmaps.n;
	plan->stackmaps = arena_alloc(s->arena, sizeof(*plan->stackmaps) * (size_t)(s->stackmaps.n + 1));
	if (s->stackmaps.n)
		memcpy(plan->stackmaps, s->stackmaps.v, sizeof(*plan->stackmaps) * (size_t)s->stackmaps.n);
	vec_free(&s->stackmaps);
	/* the -c / -p / -b program's table; a PIE's addresses are known only once loaded */
	struct binfo *bi = s->unwind && s->opts->default_target
				   ? sema_target_elf(s, s->opts->default_target, (struct gt_loc){0}, false)
				   : NULL;
	struct binfo_sprow *rows = NULL;
	int n = 0;
	if (bi && binfo_is_go(bi) && !binfo_is_pie(bi) && !binfo_spdeltas(bi, &rows, &n) && n) {
		plan->unwind = arena_alloc(s->arena, sizeof(*plan->unwind) * (size_t)n);
		for (int i = 0; i < n; i++)
			plan->unwind[i] = (struct plan_sprow){rows[i].pc, rows[i].sp};
		plan->nunwind = n;
		unwind_target(bi, &plan->unwind_rt);
	}
	free(rows);
}
