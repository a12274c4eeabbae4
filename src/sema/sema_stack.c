/* sema_stack: ustack and kstack, bpftrace's forms: ustack, ustack(N), ustack(perf),
 * ustack(bpftrace, N). One BPF stack-trace map per (user or kernel, depth); the value is
 * a stack id that user space names (runtime/stacks.c). */
#include "sema/sema_int.h"

#include <errno.h>
#include <string.h>

#define STACK_MAX_DEPTH 127 /* PERF_MAX_STACK_DEPTH, the kernel's default limit */

static int stack_map(struct sema *s, bool kernel, int depth)
{
	for (int i = 0; i < s->stackmaps.n; i++)
		if (s->stackmaps.v[i].kernel == kernel && s->stackmaps.v[i].depth == depth)
			return i;
	struct plan_stackmap m = {
		.bpf_name = arena_printf(s->arena, "gt_%cstack_%d", kernel ? 'k' : 'u', depth),
		.kernel = kernel,
		.depth = depth,
	};
	vec_push(&s->stackmaps, m);
	return s->stackmaps.n - 1;
}

int sema_check_stack(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	bool kernel = b->id == BI_KSTACK;
	int mode = PLAN_STACK_BPFTRACE, depth = STACK_MAX_DEPTH;
	struct ast_list *args = e->kind == AST_CALL ? &e->u.call.args : NULL;
	for (int i = 0; args && i < args->n; i++) {
		struct ast_node *a = args->v[i];
		if (i == 0 && a->kind == AST_IDENT &&
		    (!strcmp(a->u.name, "perf") || !strcmp(a->u.name, "bpftrace"))) {
			mode = a->u.name[0] == 'p' ? PLAN_STACK_PERF : PLAN_STACK_BPFTRACE;
			continue;
		}
		if (a->kind != AST_INT || a->u.int_.value < 1 || a->u.int_.value > STACK_MAX_DEPTH) {
			diag_error(s->src, a->loc, "%s: expected perf, bpftrace or a depth from 1 to %d",
				   b->name, STACK_MAX_DEPTH);
			return -EINVAL;
		}
		depth = (int)a->u.int_.value;
	}
	e->ty = sema_type_new(s, TY_STACK, 24, false);
	e->ty->stack_map = stack_map(s, kernel, depth);
	e->ty->stack_mode = mode;
	return 0;
}

void sema_stack_finish(struct sema *s, struct gt_plan *plan)
{
	plan->nstackmaps = s->stackmaps.n;
	plan->stackmaps = arena_alloc(s->arena, sizeof(*plan->stackmaps) * (size_t)(s->stackmaps.n + 1));
	if (s->stackmaps.n)
		memcpy(plan->stackmaps, s->stackmaps.v, sizeof(*plan->stackmaps) * (size_t)s->stackmaps.n);
	vec_free(&s->stackmaps);
}
