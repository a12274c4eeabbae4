/* sema: the driver over clauses; see sema.h. */
#include "sema/sema_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>

#include "binfo/binfo.h"
#include "sema/tracepoint.h"

/* memcpy into the arena that tolerates empty vectors (their storage is NULL). */
static void *arena_copy(struct arena *a, const void *src, size_t n)
{
	void *p = arena_alloc(a, n ? n : 1);
	if (n)
		memcpy(p, src, n);
	return p;
}

static int check_clause(struct sema *s, struct ast_node *clause, int ci)
{
	s->clause = clause;
	s->clause_kinds = 0;
	s->clause_points = 0;
	s->clause_stack_abi = NULL;
	s->clause_uses_duration = false;
	s->clause_spawn = false;
	s->clause_uses_goruntime = false;
	s->clause_tp = NULL;
	s->clause_kfunc = 0;
	s->clause_kfunc_btf = NULL;
	s->clause_kfunc_bpf = false;
	s->clause_tp_user = false;
	s->vars.n = 0;
	s->clause_site_begin = s->sites.n;
	s->clause_reads_go_names = sema_reads_go_names(s, clause);
	int first_prog = s->sprogs.n;
	s->skips.n = 0;
	int err = sema_expand_probes(s, clause, ci);
	/* an optional probe's absence is news only when the clause has nothing else */
	for (int i = 0; i < s->skips.n && s->sprogs.n == first_prog; i++)
		diag_warning(s->src, s->skips.v[i].loc, "%s", s->skips.v[i].msg);
	if (err)
		return err;
	if (s->sprogs.n == first_prog && sema_missing_probes() != MISSING_ERROR) {
		/* every probe of the clause skipped (missing_probes): its body goes too */
		if (sema_missing_probes() == MISSING_WARN)
			diag_warning(s->src, clause->loc, "Probe has no valid attach points. It is "
				     "being removed which may cause issues with program behavior.");
		return 0;
	}
	if (clause->u.clause.pred) {
		struct ast_node *p = clause->u.clause.pred;
		err = sema_check_expr(s, p);
		if (!err && !sema_is_cond(p)) {
			diag_error(s->src, p->loc, "a predicate must be an integer expression (or a "
				   "pointer, or a Go interface or slice: true when not nil)");
			err = -EINVAL;
		}
	}
	err |= sema_check_block(s, clause->u.clause.body);
	/* Each program of the clause gets its own copy of the variable table. */
	for (int i = first_prog; i < s->sprogs.n; i++) {
		struct sema_prog *sp = &s->sprogs.v[i];
		sp->nvars = s->vars.n;
		sp->uses_duration = s->clause_uses_duration;
		sp->no_call_stack = s->clause_spawn;
		sp->needs_goruntime = s->clause_uses_goruntime || sp->point == GO_RETURN;
		sp->vars = arena_alloc(s->arena, sizeof(struct sema_var) * (size_t)(s->vars.n + 1));
		for (int j = 0; j < s->vars.n; j++)
			sp->vars[j] = *s->vars.v[j];
	}
	return err ? -EINVAL : 0;
}

/* Probes as bpftrace counts them: one per function and point of the script's own
 * programs (a :return on three RETs is one probe), one per BEGIN, END, timer or
 * tracepoint; gotrace's hidden tracking programs are not the script's. */
static int count_probes(struct sema *s)
{
	int n = 0;
	struct pairset seen = {0};
	for (int i = 0; i < s->sprogs.n; i++) {
		const struct sema_prog *sp = &s->sprogs.v[i];
		const struct plan_prog *pp = &s->progs.v[sp->plan_prog];
		if (sp->hidden)
			continue;
		pairset__clear(&seen);
		for (int j = pp->site_begin; j < pp->site_begin + pp->site_count; j++) {
			const struct sema_site_info *in = &s->site_info.v[j];
			n += !in->f || pairset__add(&seen, (uint64_t)(uintptr_t)in->f, in->point);
		}
	}
	pairset__free(&seen);
	return n;
}

int sema_check(struct arena *a, const struct diag_src *src, struct ast_node *program,
	       const struct sema_options *opts, struct gt_plan *plan, struct sema_result *out)
{
	struct sema s = {.arena = a, .src = src, .opts = opts};
	int err = 0;
	struct ast_list *cl = &program->u.program.clauses;
	err |= sema_macros_includes(&s);
	for (int i = 0; i < program->u.program.cdefs.n; i++) {
		struct ast_node *d = program->u.program.cdefs.v[i];
		switch (d->kind) {
		case AST_DIRECTIVE:
			err |= sema_macros_directive(&s, d);
			break;
		case AST_MAPDECL:
			err |= sema_map_declare(&s, d);
			break;
		case AST_CONFIG: /* applied before: sema_config_apply */
			break;
		default:
			err |= sema_ctypes_define(&s, d);
			break;
		}
	}
	/* the probes are not checked against definitions that failed: one message, no
	 * cascade of unknown fields */
	if (!err) {
		sema_discover_maps(&s, program);
		for (int i = 0; i < cl->n; i++)
			err |= check_clause(&s, cl->v[i], i);
	}
	if (!err)
		err = sema_getopt_finish(&s);
	if (!err)
		err = sema_finish_tracking(&s);
	if (!err)
		err = sema_finish_maps(&s, plan, a);
	if (!err)
		sema_finish_events(&s);
	if (!err)
		err = sema_go_finish(&s, plan);
	sema_stack_finish(&s, plan);
	sema_go_free(&s);

	plan->nprobes = count_probes(&s);
	/* The plan owns copies in the arena; the vectors go. */
	plan->nsites = s.sites.n;
	plan->sites = arena_copy(a, s.sites.v, sizeof(struct plan_site) * (size_t)s.sites.n);
	plan->nprogs = s.progs.n;
	plan->progs = arena_copy(a, s.progs.v, sizeof(struct plan_prog) * (size_t)s.progs.n);
	plan->nevents = s.events.n;
	plan->events = arena_copy(a, s.events.v, sizeof(struct plan_event) * (size_t)s.events.n);
	out->nprogs = s.sprogs.n;
	out->progs = arena_copy(a, s.sprogs.v, sizeof(struct sema_prog) * (size_t)s.sprogs.n);
	out->targets = s.targets;
	out->ntargets = s.ntargets;
	free(s.target_paths);
	vec_free(&s.sites);
	vec_free(&s.site_info);
	pairset__free(&s.group_sites);
	pairset__free(&s.inl_funcs);
	vec_free(&s.progs);
	vec_free(&s.events);
	vec_free(&s.event_types);
	vec_free(&s.sprogs);
	vec_free(&s.vars);
	vec_free(&s.for_loops);
	vec_free(&s.maps);
	vec_free(&s.getopts);
	plan->nenums = s.enums.n;
	plan->nunprobed = s.unprobed.n;
	plan->unprobed = arena_copy(a, s.unprobed.v, sizeof(*s.unprobed.v) * (size_t)s.unprobed.n);
	vec_free(&s.unprobed);
	plan->enums = arena_copy(a, s.enums.v, sizeof(struct plan_enum) * (size_t)s.enums.n);
	vec_free(&s.enums);
	vec_free(&s.mapdecls);
	vec_free(&s.structs);
	vec_free(&s.macros);
	for (int i = 0; i < s.tp_formats.n; i++)
		tp_format_free(s.tp_formats.v[i]);
	vec_free(&s.tp_formats);
	vec_free(&s.bad_targets);
	vec_free(&s.skips);
	if (!err && s.gen_unprobed)
		diag_print(DIAG_WARNING, "%d of the functions matched are left out (%s%s): no "
			   "instruction of their own the kernel can probe (a trap, or inlined "
			   "copies where another function's probe is)", s.gen_unprobed,
			   s.gen_unprobed_first, s.gen_unprobed > 1 ? ", ..." : "");
	if (!err && plan->nprogs == 0) {
		diag_fatal("the program has no probes");
		err = -EINVAL;
	}
	return err ? -EINVAL : 0;
}

void sema_result_free(struct sema_result *r)
{
	binfo_kallsyms_free();
	binfo_kernel_funcs_free();
	binfo_bpf_funcs_free();
	for (int i = 0; i < r->ntargets; i++)
		binfo__close(r->targets[i]);
	free(r->targets);
	r->targets = NULL;
	r->ntargets = 0;
}

void sema_dump_sites(FILE *out, const struct gt_plan *plan)
{
	static const char *const kinds[] = {"BEGIN",      "END",    "uprobe_multi", "perf_event",
					    "tracepoint", "kprobe", "fentry"};
	_Static_assert(ARRAY_SIZE(kinds) == PLAN_PROG_NKINDS, "a name for each program kind");
	for (int i = 0; i < plan->nprogs; i++) {
		const struct plan_prog *p = &plan->progs[i];
		fprintf(out, "program %s (%s, line %d)\n", p->fn_name, kinds[p->kind],
			p->clause_line);
		for (int j = p->site_begin; j < p->site_begin + p->site_count; j++) {
			const struct plan_site *st = &plan->sites[j];
			fprintf(out, "  site %d %s %s addr=0x%llx off=0x%llx%s\n", j, st->probe,
				st->target, (unsigned long long)st->vaddr,
				(unsigned long long)st->file_off,
				st->cookie_flags & GT_SITE_INLINED ? " (an inlined copy)" : "");
		}
	}
}

static void dump_types(FILE *out, const struct ast_node *n, int depth);

static void dump_list(FILE *out, const struct ast_list *l, int depth)
{
	for (int i = 0; i < l->n; i++)
		dump_types(out, l->v[i], depth);
}

/* Prints every typed expression with its type, outermost first. */
static void dump_types(FILE *out, const struct ast_node *n, int depth)
{
	if (!n)
		return;
	if (n->ty) {
		char buf[40];
		fprintf(out, "%*s%d:%d %s : %s\n", depth * 2, "", n->loc.line, n->loc.col,
			ast_kind_name(n->kind), gt_type_str(n->ty, buf, sizeof(buf)));
	}
	switch (n->kind) {
	case AST_PROGRAM:
		dump_list(out, &n->u.program.clauses, depth);
		break;
	case AST_CLAUSE:
		dump_types(out, n->u.clause.pred, depth + 1);
		dump_types(out, n->u.clause.body, depth + 1);
		break;
	case AST_BLOCK:
		dump_list(out, &n->u.block.stmts, depth);
		break;
	case AST_EXPR_STMT:
		dump_types(out, n->u.expr_stmt.expr, depth);
		break;
	case AST_ASSIGN:
		dump_types(out, n->u.assign.lhs, depth);
		dump_types(out, n->u.assign.rhs, depth);
		break;
	case AST_IF:
		dump_types(out, n->u.if_.cond, depth);
		dump_types(out, n->u.if_.then, depth + 1);
		dump_types(out, n->u.if_.els, depth + 1);
		break;
	case AST_UNROLL:
	case AST_WHILE:
		dump_types(out, n->u.loop.expr, depth);
		dump_types(out, n->u.loop.body, depth + 1);
		break;
	case AST_FOR:
		dump_types(out, n->u.for_.var, depth);
		dump_types(out, n->u.for_.iter, depth);
		dump_types(out, n->u.for_.end, depth);
		dump_types(out, n->u.for_.body, depth + 1);
		break;
	case AST_UNARY:
		dump_types(out, n->u.unary.operand, depth + 1);
		break;
	case AST_INCDEC:
		dump_types(out, n->u.incdec.operand, depth + 1);
		break;
	case AST_BINARY:
		dump_types(out, n->u.binary.lhs, depth + 1);
		dump_types(out, n->u.binary.rhs, depth + 1);
		break;
	case AST_TERNARY:
		dump_types(out, n->u.ternary.cond, depth + 1);
		dump_types(out, n->u.ternary.then, depth + 1);
		dump_types(out, n->u.ternary.els, depth + 1);
		break;
	case AST_CAST:
		dump_types(out, n->u.cast.expr, depth + 1);
		break;
	case AST_CALL:
		fprintf(out, "%*s%d:%d call %s\n", depth * 2, "", n->loc.line, n->loc.col,
			n->u.call.name);
		dump_list(out, &n->u.call.args, depth + 1);
		break;
	default:
		break;
	}
}

void sema_dump_types(FILE *out, const struct ast_node *program)
{
	dump_types(out, program, 0);
}
