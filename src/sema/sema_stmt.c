/* sema_stmt: statements and $variables. */
#include "sema/sema_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Whether a value of type T is or holds a pointer made by & (tuples' fields too). */
static bool holds_own_stack(const struct gt_type *t)
{
	if (t->kind == TY_PTR)
		return t->own_stack;
	for (int i = 0; t->kind == TY_TUPLE && i < t->nfields; i++)
		if (holds_own_stack(t->fields[i]))
			return true;
	return false;
}

static int check_assign(struct sema *s, struct ast_node *st)
{
	struct ast_node *lhs = st->u.assign.lhs, *rhs = st->u.assign.rhs;
	if (lhs->kind == AST_MAP)
		return sema_map_assign(s, st);
	if (lhs->kind != AST_VAR) {
		diag_error(s->src, lhs->loc, "can only assign to a $variable");
		return -EINVAL;
	}
	int slot;
	if (!rhs) { /* let $x;: zero, of the type it has or will be given */
		struct sema_var *v = sema_find_var(s, lhs->u.name, &slot);
		if (!v) {
			v = arena_alloc(s->arena, sizeof(*v));
			v->name = lhs->u.name;
			v->ty = sema_ty_i64;
			v->untyped = true;
			vec_push(&s->vars, v);
			slot = s->vars.n - 1;
		}
		sema_node_of(s, lhs)->var_slot = slot;
		sema_loop_capture(s, slot);
		lhs->ty = &v->ty;
		return 0;
	}
	if (sema_check_expr(s, rhs))
		return -EINVAL;
	if (rhs->ty->kind == TY_VOID) {
		diag_error(s->src, rhs->loc, "cannot assign a value of type void");
		return -EINVAL;
	}
	if (rhs->ty->kind == TY_NIL) {
		diag_error(s->src, rhs->loc, "a variable cannot hold nil: nil only compares "
			   "(x == nil, x != nil)");
		return -EINVAL;
	}
	if (rhs->ty->kind == TY_GO) {
		diag_error(s->src, rhs->loc, "a variable cannot keep a Go %s (print() it, or keep "
			   "its fields)", rhs->ty->name);
		return -EINVAL;
	}
	if (s->for_loops.n && holds_own_stack(rhs->ty)) {
		/* the body is a callback: the verifier refuses stack pointers in the probe's
		 * frame, where the variables are */
		diag_error(s->src, rhs->loc, "a pointer made by & cannot be kept in a variable "
			   "inside a for loop (use it there, or take it before the loop)");
		return -EINVAL;
	}
	struct sema_var *v = sema_find_var(s, lhs->u.name, &slot);
	if (v && v->untyped && !st->u.assign.op) { /* the first value of let $x; */
		v->ty = *sema_type_copy(s, rhs->ty);
		v->untyped = false;
	}
	if (st->u.assign.op) {
		if (!v) {
			diag_error(s->src, lhs->loc, "variable '$%s' is used before it is assigned",
				   lhs->u.name);
			return -EINVAL;
		}
		if (!gt_type_is_int(&v->ty) || !sema_is_int(rhs)) {
			diag_error(s->src, st->loc, "operator '%s=' needs integers",
				   ast_op_str(st->u.assign.op));
			return -EINVAL;
		}
	} else if (!v) {
		struct sema_var *nv = arena_alloc(s->arena, sizeof(*nv));
		nv->name = lhs->u.name;
		/* an integer variable keeps the width of its first value, as in bpftrace
		 * ($v = (uint32)x; sizeof($v) is 4); later stores convert to it */
		nv->ty = *sema_type_copy(s, rhs->ty);
		vec_push(&s->vars, nv);
		slot = s->vars.n - 1;
		v = nv;
	} else if (gt_type_is_int(&v->ty) != gt_type_is_int(rhs->ty) ||
		   (!gt_type_is_int(&v->ty) && v->ty.kind != rhs->ty->kind) ||
		   ((v->ty.kind == TY_TUPLE || v->ty.kind == TY_INTARRAY) &&
		    !sema_tuple_merge(&v->ty, rhs->ty))) {
		char b1[32], b2[32];
		diag_error(s->src, rhs->loc, "type mismatch for $%s: %s was assigned before, now %s",
			   lhs->u.name, gt_type_str(&v->ty, b1, sizeof(b1)),
			   gt_type_str(rhs->ty, b2, sizeof(b2)));
		return -EINVAL;
	} else if (v->ty.kind == TY_STR && rhs->ty->size > v->ty.size) {
		v->ty.size = rhs->ty->size;
	}
	sema_node_of(s, lhs)->var_slot = slot;
	sema_loop_capture(s, slot);
	lhs->ty = &v->ty;
	return 0;
}

void sema_loop_capture(struct sema *s, int slot)
{
	int first = 0; /* a loop's own variable is not the business of loops around it */
	for (int i = 0; i < s->for_loops.n && s->vars.v[slot]->loop_own; i++) {
		const struct sema_node *vn = s->for_loops.v[i]->u.for_.var->sema;
		if (vn && vn->var_slot == slot)
			first = i;
	}
	for (int i = first; i < s->for_loops.n; i++) {
		struct sema_node *sn = sema_node_of(s, s->for_loops.v[i]);
		int j = 0;
		while (j < sn->nloop_slots && sn->loop_slots[j] != slot)
			j++;
		if (j < sn->nloop_slots)
			continue;
		if ((sn->nloop_slots & (sn->nloop_slots - 1)) == 0) { /* 0, 1, 2, 4 ...: grow */
			int *grown = arena_alloc(s->arena, sizeof(int) * (size_t)(2 * j + 1));
			if (j)
				memcpy(grown, sn->loop_slots, sizeof(int) * (size_t)j);
			sn->loop_slots = grown;
		}
		sn->loop_slots[sn->nloop_slots++] = slot;
	}
}

/* for ($kv : @m) { } and for ($i : a..b) { }: the loop's variable lives in its body only. */
static int check_for(struct sema *s, struct ast_node *st)
{
	struct ast_node *var = st->u.for_.var, *iter = st->u.for_.iter, *end = st->u.for_.end;
	int slot, err = 0;
	if (sema_find_var(s, var->u.name, &slot)) {
		diag_error(s->src, var->loc, "the loop's variable $%s is already a variable here",
			   var->u.name);
		return -EINVAL;
	}
	struct gt_type *ty = NULL;
	if (end) {
		err = sema_check_expr(s, iter) | sema_check_expr(s, end);
		for (int i = 0; i < 2 && !err; i++) {
			struct ast_node *e = i ? end : iter;
			if (!sema_is_int(e)) {
				diag_error(s->src, e->loc, "a range is made of integers, not %s",
					   sema_kind_word(e));
				err = -EINVAL;
			}
		}
		ty = &sema_ty_i64;
	} else if (iter->kind != AST_MAP || iter->u.map.has_brackets) {
		diag_error(s->src, iter->loc, "a for loop goes over a map (for ($kv : @m)) or a "
			   "range (for ($i : 0..10))");
		return -EINVAL;
	} else {
		ty = sema_map_iter_type(s, st);
	}
	if (err || !ty)
		return -EINVAL;
	struct sema_var *v = arena_alloc(s->arena, sizeof(*v));
	v->name = var->u.name;
	v->ty = *ty;
	v->loop_own = true;
	vec_push(&s->vars, v);
	slot = s->vars.n - 1;
	sema_node_of(s, var)->var_slot = slot;
	var->ty = &v->ty;
	vec_push(&s->for_loops, st);
	sema_loop_capture(s, slot);
	s->loop_depth++;
	err = sema_check_block(s, st->u.for_.body);
	s->loop_depth--;
	s->for_loops.n--;
	v->out_of_scope = true;
	return err;
}

static int check_stmt(struct sema *s, struct ast_node *st)
{
	switch (st->kind) {
	case AST_BLOCK:
		return sema_check_block(s, st);
	case AST_EXPR_STMT:
		return sema_check_expr(s, st->u.expr_stmt.expr);
	case AST_ASSIGN:
		return check_assign(s, st);
	case AST_IF: {
		int err = sema_check_expr(s, st->u.if_.cond);
		if (!err && !sema_is_cond(st->u.if_.cond)) {
			diag_error(s->src, st->u.if_.cond->loc, "condition must be an integer, got %s",
				   sema_kind_word(st->u.if_.cond));
			err = -EINVAL;
		}
		err |= sema_check_block(s, st->u.if_.then);
		if (st->u.if_.els)
			err |= check_stmt(s, st->u.if_.els);
		return err ? -EINVAL : 0;
	}
	case AST_UNROLL: {
		struct ast_node *n = st->u.loop.expr;
		int err = sema_check_expr(s, n);
		int64_t count = -1;
		if (!err && n->kind == AST_INT)
			count = (int64_t)n->u.int_.value;
		else if (!err && n->kind == AST_POSPARAM && sema_is_int(n))
			count = sema_node_of(s, n)->const_val;
		if (!err && n->kind != AST_INT && count < 0) {
			diag_error(s->src, n->loc, "unroll needs a constant count (1 to 100)");
			err = -EINVAL;
		} else if (!err && (count < 1 || count > 100)) {
			diag_error(s->src, n->loc, "unroll %s value is %d",
				   count < 1 ? "minimum" : "maximum", count < 1 ? 1 : 100);
			err = -EINVAL;
		}
		sema_node_of(s, st)->const_val = count;
		return err | sema_check_block(s, st->u.loop.body) ? -EINVAL : 0;
	}
	case AST_WHILE: {
		int err = sema_check_expr(s, st->u.loop.expr);
		if (!err && !sema_is_int(st->u.loop.expr)) {
			diag_error(s->src, st->u.loop.expr->loc,
				   "condition must be an integer, got %s", sema_kind_word(st->u.loop.expr));
			err = -EINVAL;
		}
		s->loop_depth++;
		err |= sema_check_block(s, st->u.loop.body);
		s->loop_depth--;
		return err ? -EINVAL : 0;
	}
	case AST_FOR:
		return check_for(s, st);
	case AST_BREAK:
	case AST_CONTINUE:
		if (s->loop_depth)
			return 0;
		/* bpftrace's words; an unroll is not a loop to it either */
		diag_error(s->src, st->loc, "%s used outside of a loop", ast_kind_name(st->kind));
		return -EINVAL;
	case AST_RETURN:
		return 0;
	default:
		diag_error(s->src, st->loc, "unexpected %s", ast_kind_name(st->kind));
		return -EINVAL;
	}
}

int sema_check_block(struct sema *s, struct ast_node *block)
{
	int err = 0;
	/* no "Unreachable statement" warning after exit() as current bpftrace gives:
	 * bpftrace 0.17's scripts run without it (conformance exit_end) */
	for (int i = 0; i < block->u.block.stmts.n; i++)
		err |= check_stmt(s, block->u.block.stmts.v[i]);
	return err ? -EINVAL : 0;
}
