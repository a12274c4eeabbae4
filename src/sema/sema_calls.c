/* sema_calls: calls: printf and the other events, str(), time(), reg(), the map
 * functions and the aggregations (their maps: sema_maps.c). */
#include "sema/sema_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/fmt.h"

static const char *const later_funcs[] = {
	"usym", "ksym", "system", "join", "strftime", "buf", "ntop",
	"kaddr", "uaddr", "cat", "signal", "override", "strncmp", "sizeof", "offsetof",
	"ustack", "kstack", "printf_json",
};
static const char *const funcs_now[] = {
	"printf", "print", "exit", "reg", "str", "time", "delete", "clear", "zero", "len",
	"count", "sum", "avg", "min", "max", "stats", "hist", "lhist",
};

int sema_new_event(struct sema *s, enum plan_event_kind kind, const char *fmt,
		   struct ast_node **args, int nargs)
{
	struct plan_event ev = {.kind = kind, .fmt = fmt, .nargs = nargs};
	ev.args = arena_alloc(s->arena, sizeof(struct plan_arg) * (size_t)(nargs ? nargs : 1));
	int off = 8;
	for (int i = 0; i < nargs; i++) {
		struct plan_arg *a = &ev.args[i];
		const struct gt_type *t = args[i]->ty;
		a->offset = off;
		switch (t->kind) {
		case TY_STR:
			a->kind = PLAN_ARG_STR;
			a->size = t->size;
			break;
		case TY_SITE_FUNC:
			a->kind = PLAN_ARG_SITE_FUNC;
			a->size = 8;
			break;
		case TY_SITE_PROBE:
			a->kind = PLAN_ARG_SITE_PROBE;
			a->size = 8;
			if (s->clause_kinds == (1u << PLAN_PROG_BEGIN))
				a->literal = "BEGIN";
			else if (s->clause_kinds == (1u << PLAN_PROG_END))
				a->literal = "END";
			break;
		default:
			a->kind = PLAN_ARG_INT;
			a->size = 8;
			a->is_signed = t->is_signed;
			break;
		}
		off += (a->size + 7) & ~7;
	}
	ev.size = off;
	vec_push(&s->events, ev);
	return s->events.n - 1;
}

/* fgentry(fmt, args...) / fgreturn() of call-graph mode: the fixed fields of the
 * event become ordinary (synthetic) arguments ahead of the fetched ones, and the
 * call's argument list is replaced by that list (codegen stores them all). */
static int check_fg_event(struct sema *s, struct ast_node *e, enum plan_event_kind kind,
			  const char *fmt)
{
	static const char *const entry_fields[] = {"goid", "depth", "nsecs", "func", "__retaddr"};
	static const char *const return_fields[] = {"goid", "depth", "nsecs", "func", "duration"};
	const char *const *fields = kind == PLAN_EV_FG_ENTRY ? entry_fields : return_fields;
	struct ast_list *old = &e->u.call.args;
	struct ast_list list = {0};
	for (int i = 0; i < 5; i++) {
		struct ast_node *id = ast_new(s->arena, AST_IDENT, e->loc);
		id->u.name = fields[i];
		if (sema_check_expr(s, id)) {
			ast_list_free(&list);
			return -EINVAL;
		}
		ast_list_push(&list, id);
	}
	for (int i = kind == PLAN_EV_FG_ENTRY ? 1 : 0; i < old->n; i++)
		ast_list_push(&list, old->v[i]);
	ast_list_free(old);
	*old = list;
	sema_node_of(s, e)->event_id = sema_new_event(s, kind, fmt, list.v, list.n);
	e->ty = &sema_ty_void;
	return 0;
}

static int check_printf(struct sema *s, struct ast_node *e)
{
	struct ast_list *args = &e->u.call.args;
	if (args->n < 1 || args->v[0]->kind != AST_STR) {
		diag_error(s->src, args->n ? args->v[0]->loc : e->loc,
			   "printf: the first argument must be a format string literal");
		return -EINVAL;
	}
	struct ast_node *fnode = args->v[0];
	struct fmt f;
	const char *msg;
	int eoff;
	if (fmt_parse(fnode->u.str.bytes, &f, &msg, &eoff) < 0) {
		struct gt_loc l = fnode->loc;
		if (l.line == l.end_line && eoff >= 0 && eoff + 1 < l.end_col - l.col) {
			/* best effort: point into the literal (exact when it has no escapes) */
			l.col += eoff + 1;
			l.end_col = l.col + 2;
		}
		diag_error(s->src, l, "printf: %s", msg);
		return -EINVAL;
	}
	int err = 0;
	if (f.nconv != args->n - 1) {
		diag_error(s->src, e->loc,
			   "printf: the format has %d conversion%s but %d argument%s given",
			   f.nconv, f.nconv == 1 ? "" : "s", args->n - 1,
			   args->n - 1 == 1 ? " is" : "s are");
		err = -EINVAL;
	}
	for (int i = 0, a = 1; !err && i < f.npieces; i++) {
		struct fmt_piece *p = &f.pieces[i];
		if (p->conv == FMT_NONE)
			continue;
		struct ast_node *arg = args->v[a++];
		bool want_str = p->conv == FMT_STR;
		if (want_str ? !sema_is_textual(arg) : !sema_is_int(arg)) {
			diag_error(s->src, arg->loc, "printf: %%%.*s expects %s, got %s",
				   p->src_len - 1, fnode->u.str.bytes + p->src_offset + 1,
				   want_str ? "a string" : "an integer", sema_kind_word(arg));
			err = -EINVAL;
		}
	}
	fmt_free(&f);
	if (err)
		return err;
	if (!strcmp(e->u.call.name, "fgentry"))
		return check_fg_event(s, e, PLAN_EV_FG_ENTRY, fnode->u.str.bytes);
	sema_node_of(s, e)->event_id =
		sema_new_event(s, PLAN_EV_PRINTF, fnode->u.str.bytes, args->v + 1, args->n - 1);
	e->ty = &sema_ty_void;
	return 0;
}

int sema_check_call(struct sema *s, struct ast_node *e)
{
	const char *name = e->u.call.name;
	struct ast_list *args = &e->u.call.args;
	int err = 0;
	if (s->opts->funcgraph && !strcmp(name, "fgreturn"))
		return check_fg_event(s, e, PLAN_EV_FG_RETURN, NULL);
	if (!strcmp(name, "printf") || (s->opts->funcgraph && !strcmp(name, "fgentry"))) {
		for (int i = 1; i < args->n; i++)
			err |= sema_check_expr(s, args->v[i]);
		return err ? -EINVAL : check_printf(s, e);
	}
	if (!strcmp(name, "delete") || !strcmp(name, "clear") || !strcmp(name, "zero") ||
	    (!strcmp(name, "print") && args->n == 1 && args->v[0]->kind == AST_MAP))
		return sema_map_call(s, e);
	if (!strcmp(name, "len")) {
		struct ast_node *mn = args->n == 1 ? args->v[0] : NULL;
		int id;
		if (!mn || mn->kind != AST_MAP || mn->u.map.keys.n) {
			diag_error(s->src, e->loc, "len() takes a whole map: len(@m)");
			return -EINVAL;
		}
		const struct sema_map *m = sema_map_by_name(s, mn->u.map.name, &id);
		if (!m) {
			diag_error(s->src, mn->loc, "map @%s is never stored into", mn->u.map.name);
			return -EINVAL;
		}
		if (m->kind == PLAN_MAP_HIST || m->kind == PLAN_MAP_LHIST) {
			diag_error(s->src, mn->loc, "len() of a hist map is not supported yet");
			return -ENOTSUP;
		}
		struct sema_node *sn = sema_node_of(s, e);
		sn->builtin = BI_MAPLEN;
		sn->map_id = id;
		e->ty = &sema_ty_i64;
		return 0;
	}
	if (sema_is_aggregation(name, NULL)) {
		diag_error(s->src, e->u.call.name_loc,
			   "%s() must be stored in a map: @name = %s(...)", name, name);
		return -EINVAL;
	}
	if (!strcmp(name, "str")) {
		if (args->n < 1 || args->n > 2) {
			diag_error(s->src, e->loc, "str() takes an address and an optional length");
			return -EINVAL;
		}
		for (int i = 0; i < args->n; i++)
			if (sema_check_expr(s, args->v[i]))
				return -EINVAL;
		struct sema_node *sn = sema_node_of(s, e);
		/* str() of a string is that string: bpftrace wants str(args->filename) */
		if (args->n == 1 && args->v[0]->ty->kind == TY_STR) {
			sn->builtin = BI_STR;
			e->ty = args->v[0]->ty;
			return 0;
		}
		for (int i = 0; i < args->n; i++) {
			if (!sema_is_int(args->v[i])) {
				diag_error(s->src, args->v[i]->loc, "str() needs an integer, got %s",
					   sema_kind_word(args->v[i]));
				return -EINVAL;
			}
		}
		int size = s->opts->str_len;
		if (args->n == 2 && args->v[1]->kind == AST_INT) {
			if (args->v[1]->u.int_.value < 1 || args->v[1]->u.int_.value > 1024) {
				diag_error(s->src, args->v[1]->loc,
					   "str()'s length must be between 1 and 1024");
				return -EINVAL;
			}
			size = (int)args->v[1]->u.int_.value + 1;
		}
		/* str(p, len) with a run-time len reads exactly len bytes (at most the string
		 * size - 1): a Go string's pointer and length, for instance */
		sn->builtin = BI_STR;
		e->ty = sema_type_new(s, TY_STR, size, false);
		return 0;
	}
	if (!strcmp(name, "time")) {
		if (args->n > 1 || (args->n == 1 && args->v[0]->kind != AST_STR)) {
			diag_error(s->src, e->loc, "time() takes an optional format string literal");
			return -EINVAL;
		}
		sema_node_of(s, e)->event_id = sema_new_event(
			s, PLAN_EV_TIME, args->n ? args->v[0]->u.str.bytes : "%H:%M:%S\n", NULL, 0);
		e->ty = &sema_ty_void;
		return 0;
	}
	if (!strcmp(name, "print")) {
		if (args->n != 1) {
			diag_error(s->src, e->loc, "print() takes one argument");
			return -EINVAL;
		}
		if (sema_check_expr(s, args->v[0]))
			return -EINVAL;
		if (!sema_is_int(args->v[0]) && !sema_is_textual(args->v[0])) {
			diag_error(s->src, args->v[0]->loc, "print() cannot print %s",
				   sema_kind_word(args->v[0]));
			return -EINVAL;
		}
		sema_node_of(s, e)->event_id = sema_new_event(s, PLAN_EV_PRINT, NULL, args->v, 1);
		e->ty = &sema_ty_void;
		return 0;
	}
	if (!strcmp(name, "exit")) {
		if (args->n != 0) {
			diag_error(s->src, e->loc, "exit() takes no arguments");
			return -EINVAL;
		}
		sema_node_of(s, e)->event_id = sema_new_event(s, PLAN_EV_EXIT, NULL, NULL, 0);
		e->ty = &sema_ty_void;
		return 0;
	}
	if (!strcmp(name, "reg")) {
		if (sema_check_uprobe_only(s, e, "reg()"))
			return -EINVAL;
		if (args->n != 1 || args->v[0]->kind != AST_STR) {
			diag_error(s->src, e->loc, "reg() takes a register name string: reg(\"ax\")");
			return -EINVAL;
		}
		int off = sema_reg_offset(args->v[0]->u.str.bytes);
		if (off < 0) {
			diag_error(s->src, args->v[0]->loc,
				   "unknown register '%s': expected ax bx cx dx si di bp sp ip "
				   "r8..r15",
				   args->v[0]->u.str.bytes);
			return -EINVAL;
		}
		struct sema_node *sn = sema_node_of(s, e);
		sn->builtin = BI_REG;
		sn->regs_off = off;
		e->ty = &sema_ty_u64;
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(later_funcs); i++) {
		if (!strcmp(later_funcs[i], name)) {
			diag_error(s->src, e->u.call.name_loc, "%s() is not supported yet", name);
			return -ENOTSUP;
		}
	}
	const char *c = sema_closest(s, name, funcs_now, (int)ARRAY_SIZE(funcs_now), later_funcs,
				(int)ARRAY_SIZE(later_funcs));
	if (c)
		diag_error(s->src, e->u.call.name_loc, "unknown function '%s'; did you mean '%s'?",
			   name, c);
	else
		diag_error(s->src, e->u.call.name_loc, "unknown function '%s'", name);
	return -EINVAL;
}
