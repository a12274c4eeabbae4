/* macro: current bpftrace's script macros, expanded in the syntax tree before sema.
 *
 *   macro NAME($v, @m, e) { statements; value }
 *
 * A call NAME(args) (NAME alone without parameters) becomes a block expression of the
 * body, or the body's value alone when it has no statements. The macros are hygienic,
 * as bpftrace's: the body sees only what it is given. $v stands for the caller's
 * variable (by reference), @m for the caller's map, e for a copy of the caller's
 * expression wherever it is used; the body's own $variables are its own (renamed for
 * each expansion), and a map it was not given is an error. A call finds the macro of
 * its name and number of arguments; user macros are expanded before builtins are
 * looked up, so a macro may take a builtin's name. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/diag.h"
#include "common/util.h"
#include "parser/ast.h"

#define MACRO_MAX_DEPTH 64

struct expander {
	struct arena *a;
	const struct diag_src *src;
	const struct ast_list *macros;
	int depth;   /* expansions open around the current one */
	int serial;  /* expansions made: renames the body's variables apart */
	int err;
};

/* One expansion: the macro, its arguments (already expanded) and the rename suffix. */
struct call_env {
	struct expander *x;
	const struct ast_node *macro;
	struct ast_node **args;
	int serial;
};

static void expand_slots(struct expander *x, struct ast_node *n);

static const struct ast_node *find_macro(const struct expander *x, const char *name, int nargs)
{
	for (int i = 0; i < x->macros->n; i++) {
		const struct ast_node *m = x->macros->v[i];
		if (!strcmp(m->u.macro.name, name) && m->u.macro.params.n == nargs)
			return m;
	}
	return NULL;
}

/* The parameter of the macro named like n (same kind: $v, @m or e), or -1. */
static int param_of(const struct ast_node *macro, const struct ast_node *n)
{
	const struct ast_list *ps = &macro->u.macro.params;
	for (int i = 0; i < ps->n; i++) {
		const struct ast_node *p = ps->v[i];
		if (p->kind != n->kind)
			continue;
		const char *pn = p->kind == AST_MAP ? p->u.map.name : p->u.name;
		const char *nn = n->kind == AST_MAP ? n->u.map.name : n->u.name;
		if (!strcmp(pn, nn))
			return i;
	}
	return -1;
}

/* ast_clone's hook: what the body's node becomes in this expansion. */
static struct ast_node *substitute(const struct ast_node *n, void *ctx)
{
	struct call_env *env = ctx;
	struct expander *x = env->x;
	int i;
	switch (n->kind) {
	case AST_VAR: {
		struct ast_node *v = ast_new(x->a, AST_VAR, n->loc);
		if ((i = param_of(env->macro, n)) >= 0)
			v->u.name = env->args[i]->u.name;
		else /* the body's own: '.' keeps it apart from any name a script can write */
			v->u.name = arena_printf(x->a, "%s.%d", n->u.name, env->serial);
		return v;
	}
	case AST_MAP: {
		if ((i = param_of(env->macro, n)) < 0) {
			diag_error(x->src, n->loc, "macro '%s' uses @%s, which it was not given: pass it "
				   "as a parameter (macro %s(@%s))", env->macro->u.macro.name,
				   n->u.map.name, env->macro->u.macro.name, n->u.map.name);
			x->err = -EINVAL;
			return NULL;
		}
		struct ast_node *m = ast_new(x->a, AST_MAP, n->loc);
		m->u.map = n->u.map;
		m->u.map.name = env->args[i]->u.map.name;
		m->u.map.keys = (struct ast_list){0};
		for (int k = 0; k < n->u.map.keys.n; k++)
			ast_list_push(x->a, &m->u.map.keys,
				      ast_clone(x->a, n->u.map.keys.v[k], substitute, ctx));
		return m;
	}
	case AST_IDENT:
		if ((i = param_of(env->macro, n)) >= 0)
			return ast_clone(x->a, env->args[i], NULL, NULL);
		return NULL;
	case AST_CALL:
		/* a parameter named like a function stands for its argument only as a name */
		return NULL;
	default:
		return NULL;
	}
}

/* Checks the arguments against the parameters' kinds: $v takes a variable, @m a map
 * without keys, e anything. */
static int check_args(struct expander *x, const struct ast_node *call, const struct ast_node *m,
		      struct ast_node **args)
{
	const struct ast_list *ps = &m->u.macro.params;
	for (int i = 0; i < ps->n; i++) {
		const struct ast_node *p = ps->v[i], *a = args[i];
		if (p->kind == AST_VAR && a->kind != AST_VAR) {
			diag_error(x->src, a->loc, "macro '%s' takes a variable for $%s", m->u.macro.name,
				   p->u.name);
			return -EINVAL;
		}
		if (p->kind == AST_MAP && (a->kind != AST_MAP || a->u.map.keys.n)) {
			diag_error(x->src, a->loc, "macro '%s' takes a map for @%s", m->u.macro.name,
				   p->u.map.name);
			return -EINVAL;
		}
	}
	(void)call;
	return 0;
}

/* Every node of an expansion's body remembers the call (errorf's "expanded from"), the
 * nodes of an inner expansion their own inner call. */
static void mark_child(struct ast_node *n, void *ctx)
{
	if (n->expanded_from)
		return;
	n->expanded_from = ctx;
	ast_for_each_child(n, mark_child, ctx);
}

static void mark_expanded(struct ast_node *body, const struct gt_loc *at)
{
	mark_child(body, (void *)at);
}

/* The expansion of call n of macro m, or NULL after an error. */
static struct ast_node *expand_call(struct expander *x, struct ast_node *n, const struct ast_node *m)
{
	struct ast_node *noargs[1];
	struct ast_node **args = n->kind == AST_CALL ? n->u.call.args.v : noargs;
	if (check_args(x, n, m, args))
		return NULL;
	if (x->depth >= MACRO_MAX_DEPTH) {
		diag_error(x->src, n->loc, "macro '%s' expands itself without end", m->u.macro.name);
		return NULL;
	}
	struct call_env env = {x, m, args, ++x->serial};
	int err0 = x->err;
	struct ast_node *body = ast_clone(x->a, m->u.macro.body, substitute, &env);
	if (x->err != err0)
		return NULL;
	struct gt_loc *at = arena_alloc(x->a, sizeof(*at));
	*at = n->loc;
	mark_expanded(body, at);
	x->depth++;
	expand_slots(x, body); /* macros the body calls */
	x->depth--;
	struct ast_list *l = &body->u.block.stmts;
	struct ast_node *value = NULL;
	if (body->u.block.open_tail && l->n && l->v[l->n - 1]->kind == AST_EXPR_STMT)
		value = l->v[--l->n]->u.expr_stmt.expr;
	if (!l->n && value)
		return value;
	struct ast_node *e = ast_new(x->a, AST_BLOCK_EXPR, n->loc);
	e->u.blockexpr.block = body;
	e->u.blockexpr.value = value;
	return e;
}

static void expand_slot(struct ast_node **slot, void *ctx)
{
	struct expander *x = ctx;
	struct ast_node *n = *slot;
	expand_slots(x, n); /* the arguments first: the body gets them expanded */
	const struct ast_node *m = NULL;
	if (n->kind == AST_CALL)
		m = find_macro(x, n->u.call.name, n->u.call.args.n);
	else if (n->kind == AST_IDENT)
		m = find_macro(x, n->u.name, 0);
	if (!m)
		return;
	struct ast_node *r = expand_call(x, n, m);
	if (r)
		*slot = r;
	else
		x->err = -EINVAL;
}

static void expand_list(struct ast_list *l, void *ctx)
{
	for (int i = 0; i < l->n; i++)
		expand_slot(&l->v[i], ctx);
}

static void expand_slots(struct expander *x, struct ast_node *n)
{
	if (n->kind == AST_MACRO || n->kind == AST_PROBE)
		return;
	ast_for_each_slot(n, expand_slot, expand_list, x);
}

int ast_expand_macros(struct arena *a, const struct diag_src *src, struct ast_node *program)
{
	struct ast_list *ms = &program->u.program.macros;
	if (!ms->n)
		return 0;
	struct expander x = {.a = a, .src = src, .macros = ms};
	for (int i = 0; i < ms->n; i++) {
		const struct ast_node *m = ms->v[i];
		for (int j = 0; j < i; j++) {
			if (!strcmp(ms->v[j]->u.macro.name, m->u.macro.name) &&
			    ms->v[j]->u.macro.params.n == m->u.macro.params.n) {
				diag_error(src, m->loc, "macro '%s' with %d parameters is defined twice",
					   m->u.macro.name, m->u.macro.params.n);
				x.err = -EINVAL;
			}
		}
	}
	for (int i = 0; i < program->u.program.clauses.n && !x.err; i++)
		expand_slots(&x, program->u.program.clauses.v[i]);
	return x.err;
}
