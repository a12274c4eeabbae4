/* sema_addr: current bpftrace's address-of a variable, &$x: a pointer into the BPF
 * program's own stack, where the variable lives. */
#include "sema/sema_int.h"

#include <errno.h>

/* Whether a variable of type T holds the value's own bytes (an integer's 8-byte slot, a
 * string's buffer ...): then its address is the value's. A C struct or array variable
 * holds an address in memory, a Go value is not kept. */
static bool holds_value(const struct gt_type *t)
{
	switch (t->kind) {
	case TY_INT:
	case TY_PTR:
	case TY_SITE_FUNC:
	case TY_SITE_PROBE:
	case TY_STRFTIME:
	case TY_STRERROR:
	case TY_USERNAME:
	case TY_CGROUP_PATH:
		return true;
	default:
		return gt_type_is_bytes(t);
	}
}

int sema_check_addr(struct sema *s, struct ast_node *e)
{
	struct ast_node *v = e->u.unary.operand;
	if (v->kind == AST_MAP) { /* bpftrace's &@m is the BPF map, for its stdlib's helpers */
		diag_error(s->src, e->loc, "the address of a map cannot be taken (& takes a "
			   "variable: &$x)");
		return -EINVAL;
	}
	if (v->kind != AST_VAR) {
		diag_error(s->src, e->loc, "address-of (&) takes a variable: &$x");
		return -EINVAL;
	}
	if (sema_check_expr(s, v))
		return -EINVAL;
	int slot;
	struct sema_var *var = sema_find_var(s, v->u.name, &slot);
	if (var->untyped) {
		diag_error(s->src, v->loc, "$%s has no type yet: assign it a value before &$%s",
			   v->u.name, v->u.name);
		return -EINVAL;
	}
	if (!holds_value(&var->ty)) {
		char b[64];
		diag_error(s->src, e->loc, "the address of $%s cannot be taken: it holds %s, "
			   "kept as an address in memory, not as its bytes", v->u.name,
			   gt_type_str(&var->ty, b, sizeof(b)));
		return -EINVAL;
	}
	/* the variable's own type: a string variable that grows later is read whole */
	struct gt_type *p = sema_type_new(s, TY_PTR, 8, false);
	p->pointee = &var->ty;
	p->own_stack = true;
	e->ty = p;
	return 0;
}
