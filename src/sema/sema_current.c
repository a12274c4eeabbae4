/* sema_current: checks of builtins current bpftrace added (0.20-0.26) that take a
 * shape of their own: assert() (errorf and exit(1)), debugf(), probetype, ppid, the clock
 * of nsecs(). */
#include "sema/sema_int.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

#include "sema/providers.h"

static struct ast_node *mk_call(struct sema *s, struct gt_loc loc, const char *name, int n,
			       struct ast_node **args)
{
	struct ast_node *c = ast_new(s->arena, AST_CALL, loc);
	c->u.call.name = name;
	c->u.call.name_loc = loc;
	for (int i = 0; i < n; i++)
		ast_list_push(s->arena, &c->u.call.args, args[i]);
	return c;
}

static struct ast_node *mk_stmt(struct sema *s, struct ast_node *e)
{
	struct ast_node *st = ast_new(s->arena, AST_EXPR_STMT, e->loc);
	st->u.expr_stmt.expr = e;
	return st;
}

/* assert(cond, msg) is current bpftrace's stdlib macro; here the same statements:
 * { if (!cond) { errorf("assert failed: %s", msg); exit(1); } } */
int sema_check_assert(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	(void)b;
	struct gt_loc at = e->loc;
	struct ast_node *cond = e->u.call.args.v[0], *msg = e->u.call.args.v[1];
	struct ast_node *fmt = ast_new(s->arena, AST_STR, at);
	fmt->u.str.bytes = "assert failed: %s";
	fmt->u.str.len = (int)strlen(fmt->u.str.bytes);
	struct ast_node *one = ast_new(s->arena, AST_INT, at);
	one->u.int_.value = 1;
	struct ast_node *eargs[2] = {fmt, msg};
	struct ast_node *then = ast_new(s->arena, AST_BLOCK, at);
	ast_list_push(s->arena, &then->u.block.stmts, mk_stmt(s, mk_call(s, at, "errorf", 2, eargs)));
	ast_list_push(s->arena, &then->u.block.stmts, mk_stmt(s, mk_call(s, at, "exit", 1, &one)));
	struct ast_node *not = ast_new(s->arena, AST_UNARY, cond->loc);
	not->u.unary.op = OP_LNOT;
	not->u.unary.operand = cond;
	struct ast_node *iff = ast_new(s->arena, AST_IF, at);
	iff->u.if_.cond = not;
	iff->u.if_.then = then;
	struct ast_node *block = ast_new(s->arena, AST_BLOCK, at);
	ast_list_push(s->arena, &block->u.block.stmts, iff);
	e->kind = AST_BLOCK_EXPR;
	e->u.blockexpr.block = block;
	e->u.blockexpr.value = NULL;
	e->sema = NULL;
	return sema_check_expr(s, e);
}

/* debugf(fmt, a, b, c): the kernel formats it (bpf_trace_printk), so the arguments are
 * integers or strings (passed by address) */
int sema_check_debugf(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	struct ast_list *args = &e->u.call.args;
	if (args->v[0]->kind != AST_STR) {
		diag_error(s->src, args->v[0]->loc, "%s", b->usage);
		return -EINVAL;
	}
	for (int i = 0; i < args->n; i++) {
		struct ast_node *a = args->v[i];
		if (sema_check_expr(s, a))
			return -EINVAL;
		if (i && !sema_is_int(a) && a->ty->kind != TY_STR) {
			diag_error(s->src, a->loc, "%s", b->usage);
			return -EINVAL;
		}
	}
	return 0;
}

/* probetype: a constant, the same for every probe of the clause */
int sema_check_probetype(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	(void)b;
	const struct ast_list *ps = &s->clause->u.clause.probes;
	const char *t = NULL;
	for (int i = 0; i < ps->n; i++) {
		const char *prov = ps->v[i]->u.probe.provider;
		const struct provider *pv = provider_find(prov);
		const char *pt = !strcasecmp(prov, "BEGIN") || !strcasecmp(prov, "END") ? "special"
				 : pv							? pv->name
											: prov;
		if (t && strcmp(t, pt)) {
			diag_error(s->src, e->loc, "probetype differs between this clause's probes "
				   "(%s, %s): give each its own clause", t, pt);
			return -EINVAL;
		}
		t = pt;
	}
	struct sema_node *sn = sema_node_of(s, e);
	sn->builtin = BI_CONSTSTR;
	sn->const_str = t ? t : "";
	e->ty = sema_type_new(s, TY_STR, (int)strlen(sn->const_str) + 1, false);
	return 0;
}

/* ppid(task) is task.real_parent.tgid, read from the kernel's BTF as the fields are */
int sema_check_ppid(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	(void)b;
	struct ast_node *task = e->kind == AST_CALL && e->u.call.args.n ? e->u.call.args.v[0] : NULL;
	if (!task) {
		task = ast_new(s->arena, AST_IDENT, e->loc);
		task->u.name = "curtask";
	}
	struct ast_node *parent = ast_new(s->arena, AST_FIELD, e->loc);
	parent->u.field.expr = task;
	parent->u.field.name = "real_parent";
	e->kind = AST_FIELD;
	e->u.field.expr = parent;
	e->u.field.name = "tgid";
	e->u.field.arrow = false;
	e->sema = NULL;
	return sema_check_expr(s, e);
}

/* nsecs(CLOCK): which helper reads it, in const_val (0: monotonic) */
int sema_check_nsecs(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	/* sw_tai, bpftrace's TAI worked out in user space for kernels without the helper:
	 * the helper's own TAI here (5.19+) */
	static const char *const clocks[] = {"monotonic", "boot", "tai", "sw_tai"};
	if (e->kind != AST_CALL || !e->u.call.args.n)
		return 0;
	struct ast_node *a = e->u.call.args.v[0];
	for (size_t i = 0; a->kind == AST_IDENT && i < ARRAY_SIZE(clocks); i++) {
		if (!strcmp(a->u.name, clocks[i])) {
			sema_node_of(s, e)->const_val = (int64_t)i;
			return 0;
		}
	}
	diag_error(s->src, a->loc, "%s", b->usage);
	return -EINVAL;
}
