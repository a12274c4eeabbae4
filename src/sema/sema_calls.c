/* sema_calls: uses of builtins (builtins.def): the table's rules, then the checks of
 * printf and the other events, str(), time(), reg() and len() (map functions and
 * aggregations: sema_maps.c; Go identifiers: sema_expr.c). */
#include "sema/sema_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "binfo/binfo.h"
#include "common/fmt.h"
#include "sema/providers.h"

/* INT fields of a tuple keep their width; elsewhere integers travel as 8 bytes. */
static void plan_arg(struct sema *s, const struct gt_type *t, int offset, bool in_tuple,
		     struct plan_arg *a)
{
	const char *literal = a->literal;
	*a = (struct plan_arg){.offset = offset, .size = 8, .literal = literal};
	switch (t->kind) {
	case TY_STR:
		a->kind = PLAN_ARG_STR;
		a->size = t->size;
		break;
	case TY_SITE_FUNC:
		a->kind = PLAN_ARG_SITE_FUNC;
		break;
	case TY_SITE_PROBE:
		a->kind = PLAN_ARG_SITE_PROBE;
		break;
	case TY_STRFTIME:
		a->kind = PLAN_ARG_STRFTIME;
		a->literal = t->fmt;
		break;
	case TY_STRERROR:
		a->kind = PLAN_ARG_STRERROR;
		break;
	case TY_USERNAME:
		a->kind = PLAN_ARG_USERNAME;
		break;
	case TY_CGROUP_PATH:
		a->kind = PLAN_ARG_CGROUP_PATH;
		break;
	case TY_INET:
		a->kind = PLAN_ARG_INET;
		a->size = 24;
		break;
	case TY_SYM:
		a->kind = PLAN_ARG_SYM;
		a->size = 16;
		a->stack_mode = t->stack_mode;
		break;
	case TY_STACK:
		a->kind = PLAN_ARG_STACK;
		a->size = 24;
		a->stack_map = t->stack_map;
		a->stack_mode = t->stack_mode;
		break;
	case TY_BUF:
		a->kind = PLAN_ARG_BUF;
		a->size = t->size;
		break;
	case TY_TUPLE:
	case TY_STRUCT:
		if (t->kind == TY_STRUCT)
			sema_struct_field(s, (struct gt_type *)t, ""); /* a kernel struct: all fields */
		/* a record prints as a struct does */
		a->kind = t->kind == TY_TUPLE && !t->names ? PLAN_ARG_TUPLE : PLAN_ARG_STRUCT;
		a->is_record = t->kind == TY_TUPLE && t->names;
		a->size = t->size;
		a->nfields = t->nfields;
		a->fields = arena_alloc(s->arena, sizeof(*a->fields) * (size_t)(t->nfields + 1));
		for (int i = 0; i < t->nfields; i++) {
			plan_arg(s, t->fields[i], t->offsets[i], true, &a->fields[i]);
			if (t->names)
				a->fields[i].name = t->names[i];
			if (t->kind == TY_STRUCT && t->bitfields && t->bitfields[i].width) {
				a->fields[i].bit_shift = t->bitfields[i].shift;
				a->fields[i].bit_width = t->bitfields[i].width;
			}
		}
		break;
	case TY_ARRAY:
	case TY_INTARRAY: /* bpftrace prints a cast's int8[N] as numbers: [104,105,0] */
		if (t->kind == TY_ARRAY && t->pointee->kind == TY_INT && t->pointee->size == 1) {
			/* char[N] in memory: text */
			a->kind = PLAN_ARG_STR;
			a->size = t->count;
			break;
		}
		a->kind = PLAN_ARG_ARRAY;
		a->size = t->size;
		a->nfields = t->count;
		a->fields = arena_alloc(s->arena, sizeof(*a->fields));
		plan_arg(s, t->pointee, 0, true, &a->fields[0]);
		break;
	case TY_GO: /* laid out by sema_gocap.c */
		*a = *t->gocap;
		a->offset = offset;
		a->literal = t->name; /* printf's %T */
		break;
	default:
		a->kind = PLAN_ARG_INT;
		a->is_signed = t->is_signed;
		a->go_int = t->kind == TY_INT && t->go_int;
		a->is_bool = t->kind == TY_INT && t->is_bool;
		a->is_addr = t->kind == TY_PTR && t->own_stack;
		a->enum_id = t->kind == TY_INT ? t->enum_id : 0;
		a->size = in_tuple ? t->size : 8;
		break;
	}
}

void sema_plan_arg(struct sema *s, const struct gt_type *t, int offset, struct plan_arg *a)
{
	*a = (struct plan_arg){0};
	plan_arg(s, t, offset, false, a);
}

/* Record offsets of an event's arguments, from their types as they are now (a string or
 * tuple variable may still grow after the event: sema_finish_events lays them out again). */
static void layout_event(struct sema *s, struct plan_event *ev, const struct gt_type **tys)
{
	int off = 8;
	for (int i = 0; i < ev->nargs; i++) {
		struct plan_arg *a = &ev->args[i];
		const char *literal = a->literal; /* `probe` in BEGIN/END, set by sema_new_event */
		sema_plan_arg(s, tys[i], off, a);
		if (literal)
			a->literal = literal;
		off += (a->size + 7) & ~7;
	}
	ev->size = off;
}

void sema_finish_events(struct sema *s)
{
	for (int i = 0; i < s->events.n; i++)
		if (s->events.v[i].kind != PLAN_EV_HELPER_ERROR &&
		    s->events.v[i].kind != PLAN_EV_JOIN &&
		    s->events.v[i].kind != PLAN_EV_LBR) /* laid out when made */
			layout_event(s, &s->events.v[i], s->event_types.v[i]);
}

void sema_helper_event(struct sema *s, struct ast_node *at, int level, const char *helper)
{
	if (s->opts->helper_checks < level)
		return;
	struct plan_event ev = {.kind = PLAN_EV_HELPER_ERROR, .fmt = helper, .nargs = 1,
				.size = 16, .loc = at->loc};
	ev.args = arena_alloc(s->arena, sizeof(struct plan_arg));
	ev.args[0] = (struct plan_arg){.kind = PLAN_ARG_INT, .offset = 8, .size = 8, .is_signed = true};
	static const struct gt_type *none[1];
	vec_push(&s->events, ev);
	vec_push(&s->event_types, none);
	sema_node_of(s, at)->err_event = s->events.n; /* id + 1 */
}

int sema_new_event(struct sema *s, enum plan_event_kind kind, const char *fmt,
		   struct ast_node **args, int nargs)
{
	struct plan_event ev = {.kind = kind, .fmt = fmt, .nargs = nargs};
	ev.args = arena_alloc(s->arena, sizeof(struct plan_arg) * (size_t)(nargs ? nargs : 1));
	const struct gt_type **tys = arena_alloc(s->arena, sizeof(*tys) * (size_t)(nargs + 1));
	for (int i = 0; i < nargs; i++) {
		tys[i] = args[i]->ty;
		/* `probe` in BEGIN or END is that name (the clause is known only now); a probe
		 * read from a map (@m = probe) is where it was stored */
		bool here = args[i]->ty->kind == TY_SITE_PROBE &&
			    sema_node_of(s, args[i])->builtin == BI_PROBE;
		if (here && s->clause_kinds == (1u << PLAN_PROG_BEGIN))
			ev.args[i].literal = "BEGIN";
		else if (here && s->clause_kinds == (1u << PLAN_PROG_END))
			ev.args[i].literal = "END";
	}
	layout_event(s, &ev, tys);
	vec_push(&s->events, ev);
	vec_push(&s->event_types, tys);
	return s->events.n - 1;
}

/* fgentry(fmt, args...) / fgreturn([fmt, results...]) of call-graph mode: the fixed fields of the
 * event become ordinary (synthetic) arguments ahead of the fetched ones, and the
 * call's argument list is replaced by that list (codegen stores them all). */
static int check_fg_event(struct sema *s, struct ast_node *e, enum plan_event_kind kind,
			  const char *fmt)
{
	static const enum builtin_id entry_fields[] = {BI_GOID, BI_DEPTH, BI_NSECS, BI_FUNC,
						       BI_RETADDR};
	static const enum builtin_id return_fields[] = {BI_GOID, BI_DEPTH, BI_NSECS, BI_FUNC,
							BI_DURATION, BI_ONCPU};
	const enum builtin_id *fields = kind == PLAN_EV_FG_ENTRY ? entry_fields : return_fields;
	int nfields = kind == PLAN_EV_FG_ENTRY ? 5 : 6;
	struct ast_list *old = &e->u.call.args;
	struct ast_list list = {0};
	for (int i = 0; i < nfields; i++) {
		struct ast_node *id = ast_new(s->arena, AST_IDENT, e->loc);
		id->u.name = builtin_get(fields[i])->name;
		if (fields[i] == BI_ONCPU && !s->opts->funcgraph_oncpu) { /* --no-oncpu */
			id->kind = AST_INT;
			id->u.int_.value = 0;
		}
		if (sema_check_expr(s, id))
			return -EINVAL;
		sema_node_of(s, id)->raw_site = fields[i] == BI_FUNC;
		sema_node_of(s, id)->probe_now = fields[i] == BI_NSECS;
		ast_list_push(s->arena, &list, id);
	}
	for (int i = fmt ? 1 : 0; i < old->n; i++) /* after the format */
		ast_list_push(s->arena, &list, old->v[i]);
	*old = list;
	sema_node_of(s, e)->event_id = sema_new_event(s, kind, fmt, list.v, list.n);
	e->ty = &sema_ty_void;
	return 0;
}

/* printf() under --otlp: pid, tid, goid (0 where a clause is not only go: and uprobe:
 * probes, which alone know a goroutine) and nsecs ahead of the arguments (after the
 * format, which codegen skips), for the log record; "%d%d%d%d" ahead of the format,
 * conversions the printed text leaves out. */
static int log_event(struct sema *s, struct ast_node *e, const struct builtin *b,
		     const char *fmt)
{
	static const enum builtin_id fields[PLAN_META_N] = {
		[PLAN_META_PID] = BI_PID, [PLAN_META_TID] = BI_TID, [PLAN_META_GOID] = BI_GOID,
		[PLAN_META_NSECS] = BI_NSECS};
	struct ast_list *old = &e->u.call.args;
	struct ast_list list = {0};
	ast_list_push(s->arena, &list, old->v[0]); /* the format: codegen skips it */
	for (int i = 0; i < PLAN_META_N; i++) {
		struct ast_node *id = ast_new(s->arena, AST_IDENT, e->loc);
		id->u.name = builtin_get(fields[i])->name;
		if (fields[i] == BI_GOID && (s->clause_kinds & ~(1u << PLAN_PROG_UPROBE))) {
			id->kind = AST_INT;
			id->u.int_.value = 0;
		}
		if (sema_check_expr(s, id))
			return -EINVAL;
		ast_list_push(s->arena, &list, id);
	}
	for (int i = 1; i < old->n; i++) /* after the format */
		ast_list_push(s->arena, &list, old->v[i]);
	*old = list;
	size_t n = strlen(fmt) + 9;
	char *f = arena_alloc(s->arena, n);
	snprintf(f, n, "%%d%%d%%d%%d%s", fmt);
	int id = sema_new_event(s, b->event, f, list.v + 1, list.n - 1);
	sema_node_of(s, e)->event_id = id;
	s->events.v[id].meta = PLAN_META_N;
	s->events.v[id].loc = e->loc;
	e->ty = &sema_ty_void;
	return 0;
}

/* fgreturn(), or fgreturn(fmt, results...) (--rets) */
int sema_check_fgreturn(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	if (e->u.call.args.n)
		return sema_check_printf(s, e, b);
	return check_fg_event(s, e, b->event, NULL);
}

/* printf(fmt, args...), and system(), cat() and fgentry() that format the same way */
int sema_check_printf(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	struct ast_list *args = &e->u.call.args;
	int err = 0;
	if (b->id == BI_SYSTEM && !s->opts->unsafe) {
		diag_error(s->src, e->loc, "system() runs commands from the trace: it needs --unsafe");
		return -EPERM;
	}
	for (int i = 1; i < args->n; i++)
		err |= sema_check_expr(s, args->v[i]);
	if (err)
		return -EINVAL;
	if (args->n < 1 || args->v[0]->kind != AST_STR) {
		diag_error(s->src, args->n ? args->v[0]->loc : e->loc,
			   "%s: the first argument must be a format string literal", b->name);
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
		diag_error(s->src, l, "%s: %s", b->name, msg);
		return -EINVAL;
	}
	if (f.nconv != args->n - 1) {
		diag_error(s->src, e->loc,
			   "%s: the format has %d conversion%s but %d argument%s given", b->name,
			   f.nconv, f.nconv == 1 ? "" : "s", args->n - 1,
			   args->n - 1 == 1 ? " is" : "s are");
		err = -EINVAL;
	}
	for (int i = 0, a = 1; !err && i < f.npieces; i++) {
		struct fmt_piece *p = &f.pieces[i];
		if (p->conv == FMT_NONE)
			continue;
		struct ast_node *arg = args->v[a++];
		if (p->conv == FMT_TYPE && !sema_is_go(arg)) {
			diag_error(s->src, arg->loc, "%s: %%T takes a Go value (args.NAME, rets.NAME, "
				   "retval), got %s", b->name, sema_kind_word(arg));
			err = -EINVAL;
			continue;
		}
		if ((p->conv == FMT_TYPE || p->conv == FMT_VALUE) && sema_go_uniform(s, arg)) {
			err = -EINVAL;
			continue;
		}
		if (p->conv == FMT_TYPE) { /* the static type, or an interface's dynamic one */
			arg->ty = sema_go_print_type(s, arg);
			continue;
		}
		if (p->conv == FMT_VALUE) { /* anything print() takes */
			if (sema_is_go(arg) && arg->ty->kind != TY_STR)
				arg->ty = sema_go_print_type(s, arg);
			continue;
		}
		bool want_str = p->conv == FMT_STR, want_buf = p->conv == FMT_BUF;
		if (want_str)
			(void)sema_go_bytes_as_string(s, arg);
		/* an enum's value prints as its enumerator's name (current bpftrace) */
		bool ok = want_buf ? arg->ty->kind == TY_BUF
			  : want_str ? sema_is_textual(arg) || (arg->ty->kind == TY_INT &&
								arg->ty->enum_id)
				     : sema_is_int(arg);
		if (!ok) {
			diag_error(s->src, arg->loc, "%s: %%%.*s expects %s, got %s", b->name,
				   p->src_len - 1, fnode->u.str.bytes + p->src_offset + 1,
				   want_buf ? "a buffer (buf())" : want_str ? "a string" : "an integer",
				   sema_kind_word(arg));
			err = -EINVAL;
		}
	}
	fmt_free(&f);
	if (err)
		return err;
	if (b->id == BI_FGENTRY || b->id == BI_FGRETURN)
		return check_fg_event(s, e, b->event, fnode->u.str.bytes);
	s->clause_spawn |= b->id == BI_FGSPAWN;
	if (b->id == BI_PRINTF && s->opts->log_meta)
		return log_event(s, e, b, fnode->u.str.bytes);
	int id = sema_new_event(s, b->event, fnode->u.str.bytes, args->v + 1, args->n - 1);
	sema_node_of(s, e)->event_id = id;
	s->events.v[id].loc = e->loc; /* errorf, warnf */
	s->events.v[id].expanded_from = e->expanded_from;
	return 0;
}

int sema_check_len(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	struct ast_list *args = &e->u.call.args;
	struct ast_node *mn = args->n == 1 ? args->v[0] : NULL;
	int id;
	if (mn && mn->kind != AST_MAP) { /* a Go string, slice, array, map or chan */
		if (sema_check_expr(s, mn))
			return -EINVAL;
		if (sema_is_go(mn))
			return sema_go_len(s, e, b->id == BI_CAP);
	}
	if (b->id == BI_CAP || !mn || mn->kind != AST_MAP || mn->u.map.keys.n) {
		if (b->id == BI_CAP) {
			diag_error(s->src, e->loc, "%s", b->usage);
			return -EINVAL;
		}
		diag_error(s->src, e->loc, "len() takes a whole map, len(@m), or a Go string, "
			   "slice, array, map or chan: len(args.xs)");
		return -EINVAL;
	}
	const struct sema_map *m = sema_map_by_name(s, mn->u.map.name, &id);
	if (!m) {
		diag_error(s->src, mn->loc, "map @%s is never stored into", mn->u.map.name);
		return -EINVAL;
	}
	if (m->kind == PLAN_MAP_HIST || m->kind == PLAN_MAP_LHIST || m->kind == PLAN_MAP_TSERIES) {
		diag_error(s->src, mn->loc, "len() of a %s map is not supported yet",
			   m->kind == PLAN_MAP_TSERIES ? "tseries" : "hist");
		return -ENOTSUP;
	}
	if (m->keys_known && !m->nkeys) { /* bpftrace's words */
		diag_error(s->src, e->loc, "call to len() expects a map with explicit keys "
			   "(non-scalar map)");
		return -EINVAL;
	}
	sema_node_of(s, e)->map_id = id;
	return 0;
}

/* The first argument of E, checked and an integer; else its usage (with the kind found
 * when GOT) is reported. */
static int int_arg(struct sema *s, struct ast_node *e, const struct builtin *b, bool got)
{
	struct ast_node *a = e->u.call.args.v[0];
	if (sema_check_expr(s, a))
		return -EINVAL;
	if (!sema_is_int(a)) {
		diag_error(s->src, a->loc, "%s%s%s", b->usage, got ? ", got " : "",
			   got ? sema_kind_word(a) : "");
		return -EINVAL;
	}
	return 0;
}

int sema_check_bswap(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	struct ast_node *a = e->u.call.args.v[0];
	if (int_arg(s, e, b, false))
		return -EINVAL;
	/* the bytes of the argument's own width, as bpftrace: bswap((uint16)x) */
	e->ty = sema_type_new(s, TY_INT, a->ty->size, false);
	return 0;
}

static int check_strings(struct sema *s, struct ast_node *e, int n, const struct builtin *b)
{
	for (int i = 0; i < n; i++) {
		struct ast_node *a = e->u.call.args.v[i];
		if (sema_check_expr(s, a))
			return -EINVAL;
		(void)sema_go_bytes_as_string(s, a);
		if (a->ty->kind != TY_STR) {
			diag_error(s->src, a->loc, "%s: %s is not a string", b->name,
				   sema_kind_word(a));
			return -EINVAL;
		}
	}
	return 0;
}

int sema_check_strncmp(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	if (check_strings(s, e, 2, b))
		return -EINVAL;
	struct ast_node *n = e->u.call.args.v[2];
	if (sema_check_expr(s, n))
		return -EINVAL;
	int64_t len = n->kind == AST_INT ? (int64_t)n->u.int_.value
		      : n->kind == AST_POSPARAM && sema_is_int(n) ? sema_node_of(s, n)->const_val
								    : -1;
	if (len < 0) {
		diag_error(s->src, n->loc, "strncmp()'s length must be a constant: %s", b->usage);
		return -EINVAL;
	}
	sema_node_of(s, e)->const_val = len;
	return 0;
}

/* write_user(dst, src, len): refused without --unsafe before anything else, as bpftrace
 * (it can corrupt the traced program). SRC is bytes the probe holds; LEN is clamped to
 * them in codegen. */
int sema_check_write_user(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	struct ast_node **a = e->u.call.args.v;
	if (!s->opts->unsafe) {
		diag_error(s->src, e->loc, "write_user() is unsafe. To use you need the --unsafe flag");
		return -EPERM;
	}
	for (int i = 0; i < 3; i++)
		if (sema_check_expr(s, a[i]))
			return -EINVAL;
	if (!sema_is_int(a[0]) || !gt_type_is_bytes(a[1]->ty) || !sema_is_int(a[2])) {
		diag_error(s->src, e->loc, "%s", b->usage);
		return -EINVAL;
	}
	return 0;
}

/* strcontains(h, n), strstr(h, n), strlen(s) */
int sema_check_strcontains(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	return check_strings(s, e, e->u.call.args.n, b);
}


/* sizeof(TYPE) or sizeof(expr): the bytes of the type, a constant */
int sema_check_sizeof(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	struct ast_node *a = e->u.call.args.v[0];
	struct sema_node *sn = sema_node_of(s, e);
	(void)b;
	if (a->kind == AST_TYPE) {
		if (sema_typeof(s, &a->u.type))
			return -EINVAL;
		bool is_struct = !strncmp(a->u.type.name, "struct ", 7) ||
				 !strncmp(a->u.type.name, "union ", 6);
		struct gt_type *t = a->u.type.ptr_depth ? &sema_ty_u64
				    : is_struct	     ? sema_struct_named(s, a->u.type.name)
							     : sema_int_type_named(s, &a->u.type);
		if (!t) {
			diag_error(s->src, a->loc, "sizeof: unknown type '%s'", a->u.type.name);
			return -EINVAL;
		}
		sn->const_val = t->size;
		return 0;
	}
	struct gt_type *ct;
	if (a->kind == AST_IDENT && !sema_resolve(s, a) && !sema_macro_find(s, a->u.name) &&
	    (ct = sema_ctype_int_named(s, a->u.name))) { /* sizeof(uint64_t), sizeof(u32) */
		sn->const_val = ct->size;
		return 0;
	}
	if (sema_check_expr(s, a))
		return -EINVAL;
	if (a->ty->kind == TY_VOID) {
		diag_error(s->src, a->loc, "sizeof: %s has no size", sema_kind_word(a));
		return -EINVAL;
	}
	sn->const_val = a->ty->size;
	return 0;
}

int sema_check_strftime(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	struct ast_node **a = e->u.call.args.v;
	if (a[0]->kind != AST_STR) {
		diag_error(s->src, a[0]->loc, "%s", b->usage);
		return -EINVAL;
	}
	if (sema_check_expr(s, a[1]))
		return -EINVAL;
	if (!sema_is_int(a[1])) {
		diag_error(s->src, a[1]->loc, "strftime() needs a time in ns, got %s",
			   sema_kind_word(a[1]));
		return -EINVAL;
	}
	e->ty = sema_type_new(s, TY_STRFTIME, 8, false);
	e->ty->fmt = a[0]->u.str.bytes;
	return 0;
}

int sema_check_cgroup_path(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	if (int_arg(s, e, b, false))
		return -EINVAL;
	e->ty = sema_type_new(s, TY_CGROUP_PATH, 8, false);
	return 0;
}

/* username: the uid, named by user space */
/* curtask: the current task_struct (kernel BTF, or the script's own definition) */
int sema_check_curtask(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	struct gt_type *t = sema_struct_named(s, "struct task_struct");
	(void)b;
	if (!t) {
		diag_error(s->src, e->loc, "curtask needs struct task_struct: the kernel has no "
			   "BTF and the script defines none");
		return -ENOENT;
	}
	e->ty = sema_type_new(s, TY_PTR, 8, false);
	e->ty->pointee = t;
	return 0;
}

/* ctx: the probe's context (the saved registers, a tracepoint record ...) as a void * */
int sema_check_ctx(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	(void)b;
	e->ty = sema_type_new(s, TY_PTR, 8, false);
	e->ty->pointee = sema_type_new(s, TY_INT, 1, false);
	return 0;
}

/* cpid: bpftrace's words where there is no -c */
int sema_check_cpid(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	(void)b;
	if (s->opts->child)
		return 0;
	diag_error(s->src, e->loc, "cpid cannot be used without child command");
	return -EINVAL;
}

int sema_check_username(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	(void)b;
	e->ty = sema_type_new(s, TY_USERNAME, 8, false);
	return 0;
}

/* ntop(ipv4) or ntop(af, addr): addr is pton()'s bytes, an array or a pointer */
int sema_check_ntop(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	struct ast_list *args = &e->u.call.args;
	for (int i = 0; i < args->n; i++)
		if (sema_check_expr(s, args->v[i]))
			return -EINVAL;
	struct ast_node *a = args->v[args->n - 1];
	bool v4v6 = a->ty->kind == TY_INTARRAY && a->ty->pointee->size == 1 &&
		    (a->ty->count == 4 || a->ty->count == 16); /* ntop(pton(s)): by its size */
	bool ok = args->n == 1 ? sema_is_int(a) || v4v6
			       : sema_is_int(args->v[0]) &&
				     (a->ty->kind == TY_BUF || a->ty->kind == TY_ARRAY ||
				      a->ty->kind == TY_INTARRAY ||
				      a->ty->kind == TY_PTR || a->ty->kind == TY_STR);
	if (!ok) {
		diag_error(s->src, e->loc, "%s", b->usage);
		return -EINVAL;
	}
	e->ty = sema_type_new(s, TY_INET, 24, false);
	return 0;
}

/* join(argv[, "delim"]): up to 16 strings of a NULL-terminated array in user memory
 * (GT_STRLEN bytes each), printed joined, as bpftrace */
int sema_check_join(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	struct ast_list *args = &e->u.call.args;
	if (sema_check_expr(s, args->v[0]))
		return -EINVAL;
	if (!sema_is_int(args->v[0]) || (args->n == 2 && args->v[1]->kind != AST_STR)) {
		diag_error(s->src, e->loc, "%s", b->usage);
		return -EINVAL;
	}
	int id = sema_node_of(s, e)->event_id =
		sema_new_event(s, b->event, args->n == 2 ? args->v[1]->u.str.bytes : " ", NULL, 0);
	struct plan_event *ev = &s->events.v[id];
	ev->slots = 16;
	ev->slot_size = s->opts->str_len;
	ev->size = 8 + ev->slots * ev->slot_size;
	return 0;
}

/* lbr(): the record has room for 32 branch records, the deepest LBR of Intel's CPUs;
 * the kernel fills as many as the CPU keeps. */
int sema_check_lbr(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	int id = sema_node_of(s, e)->event_id = sema_new_event(s, b->event, NULL, NULL, 0);
	struct plan_event *ev = &s->events.v[id];
	ev->slots = 32;
	ev->slot_size = 24; /* struct perf_branch_entry: from, to, flags */
	ev->size = 16 + ev->slots * ev->slot_size;
	return 0;
}

/* pton("addr"): its 4 or 16 bytes, found at compile time: bpftrace's uint8[4], uint8[16]
 * ((uint32)pton("127.0.0.1") is the address as it lies in memory) */
int sema_check_pton(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	struct ast_node *a = e->u.call.args.v[0];
	unsigned char bytes[16];
	int n = 0;
	if (a->kind == AST_STR)
		n = inet_pton(AF_INET, a->u.str.bytes, bytes) == 1	  ? 4
		    : inet_pton(AF_INET6, a->u.str.bytes, bytes) == 1 ? 16
								      : 0;
	if (!n) {
		diag_error(s->src, a->loc, "%s", b->usage);
		return -EINVAL;
	}
	struct sema_node *sn = sema_node_of(s, e);
	sn->const_str = arena_strndup(s->arena, (const char *)bytes, (size_t)n);
	sn->const_val = n;
	e->ty = sema_type_new(s, TY_INTARRAY, n, false);
	e->ty->pointee = sema_type_new(s, TY_INT, 1, false);
	e->ty->count = n;
	return 0;
}

int sema_check_strerror(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	if (int_arg(s, e, b, true))
		return -EINVAL;
	e->ty = sema_type_new(s, TY_STRERROR, 8, true);
	return 0;
}

/* signal_name(n): a string made in BPF from a table of the names (codegen's) */
int sema_check_signal_name(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	if (int_arg(s, e, b, true))
		return -EINVAL;
	e->ty = sema_type_new(s, TY_STR, GT_SIGNAME_LEN, false);
	return 0;
}

/* buf(str) / buf(str, n) / buf(addr, n): n bytes (a constant sizes the buffer; a run-time
 * n reads at most GT_STRLEN), printed with \xNN for what is not printable. */
int sema_check_buf(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	struct ast_list *args = &e->u.call.args;
	for (int i = 0; i < args->n; i++)
		if (sema_check_expr(s, args->v[i]))
			return -EINVAL;
	struct ast_node *src = args->v[0], *n = args->n == 2 ? args->v[1] : NULL;
	if ((src->ty->kind != TY_STR && !sema_is_int(src)) || (n && !sema_is_int(n)) ||
	    (!n && src->ty->kind != TY_STR)) {
		diag_error(s->src, e->loc, "%s", b->usage);
		return -EINVAL;
	}
	int len = src->ty->kind == TY_STR ? src->ty->size : s->opts->str_len;
	if (n && n->kind == AST_INT) {
		if (n->u.int_.value < 1 || n->u.int_.value > 1024) {
			diag_error(s->src, n->loc, "buf()'s length must be between 1 and 1024");
			return -EINVAL;
		}
		len = (int)n->u.int_.value;
	}
	e->ty = sema_type_new(s, TY_BUF, 8 + len, false);
	return 0;
}

/* str($1), str($1 + n): the text of a positional parameter (from byte n on), as bpftrace
 * reads it, even when it looks like a number. NULL when ARG is not that. */
static const char *posparam_text(struct sema *s, struct ast_node *arg)
{
	int64_t skip = 0;
	if (arg->kind == AST_BINARY && arg->u.binary.op == OP_ADD &&
	    arg->u.binary.rhs->kind == AST_INT) {
		skip = (int64_t)arg->u.binary.rhs->u.int_.value;
		arg = arg->u.binary.lhs;
	}
	if (arg->kind != AST_POSPARAM || arg->u.posparam.n < 1)
		return NULL;
	int n = arg->u.posparam.n;
	const char *v = n <= s->opts->nposargs ? s->opts->posargs[n - 1] : "";
	return skip >= 0 && (size_t)skip <= strlen(v) ? v + skip : "";
}

/* kaddr("sym"), kaddr(str($1)): the kernel symbol's address, a constant */
int sema_check_kaddr(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	struct ast_node *a = e->u.call.args.v[0];
	const char *name = a->kind == AST_STR ? a->u.str.bytes : NULL;
	if (!name && a->kind == AST_CALL && sema_resolve(s, a) && sema_node_of(s, a)->builtin == BI_STR &&
	    a->u.call.args.n == 1)
		name = posparam_text(s, a->u.call.args.v[0]);
	if (!name) {
		diag_error(s->src, a->loc, "%s", b->usage);
		return -EINVAL;
	}
	uint64_t addr;
	if (binfo_kallsyms_addr(name, &addr)) {
		diag_error(s->src, e->loc, "Failed to resolve kernel symbol: %s", name);
		return -ENOENT;
	}
	sema_node_of(s, e)->const_val = (int64_t)addr;
	return 0;
}

int sema_check_str(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	struct ast_list *args = &e->u.call.args;
	(void)b;
	const char *text = args->n >= 1 ? posparam_text(s, args->v[0]) : NULL;
	/* str($1, N): the parameter's first N characters, as bpftrace 0.17 takes them */
	int64_t max = args->n == 2 && args->v[1]->kind == AST_INT ? args->v[1]->u.int_.value : 0;
	if (text && (args->n == 1 || (max >= 1 && max <= 1024))) {
		if (max && (int64_t)strlen(text) > max)
			text = arena_strndup(s->arena, text, (size_t)max);
		int len = (int)strlen(text) + 1;
		sema_node_of(s, e)->const_str = text;
		e->ty = sema_type_new(s, TY_STR, len > s->opts->str_len ? s->opts->str_len : len,
				      false);
		return 0;
	}
	for (int i = 0; i < args->n; i++)
		if (sema_check_expr(s, args->v[i]))
			return -EINVAL;
	/* str() of a string is that string: bpftrace wants str(args->filename); and of a
	 * Go []byte, its text */
	if (args->n == 1)
		(void)sema_go_bytes_as_string(s, args->v[0]);
	if (args->n == 1 && args->v[0]->ty->kind == TY_STR) {
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
	e->ty = sema_type_new(s, TY_STR, size, false);
	return 0;
}

/* exit(), or exit(status) as current bpftrace: gotrace's exit status */
int sema_check_exit(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	struct ast_list *args = &e->u.call.args;
	if (args->n && sema_check_expr(s, args->v[0]))
		return -EINVAL;
	if (args->n && !sema_is_int(args->v[0])) {
		diag_error(s->src, args->v[0]->loc, "%s", b->usage);
		return -EINVAL;
	}
	sema_node_of(s, e)->event_id = sema_new_event(s, b->event, NULL, args->v, args->n);
	return 0;
}

int sema_check_time(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	struct ast_list *args = &e->u.call.args;
	if (args->n == 1 && args->v[0]->kind != AST_STR) {
		diag_error(s->src, e->loc, "%s", b->usage);
		return -EINVAL;
	}
	sema_node_of(s, e)->event_id = sema_new_event(
		s, b->event, args->n ? args->v[0]->u.str.bytes : "%H:%M:%S\n", NULL, 0);
	return 0;
}

int sema_check_print(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	struct ast_node *arg = e->u.call.args.v[0];
	/* print(@m) dumps the map; print(@m[k]) is a value (current bpftrace) */
	if (arg->kind == AST_MAP && (!arg->u.map.keys.n || e->u.call.args.n > 1))
		return sema_map_call(s, e, b);
	if (e->u.call.args.n != 1) {
		diag_error(s->src, e->loc, "print() of a value takes one argument (top and divisor "
			   "are for maps: print(@m, top, div))");
		return -EINVAL;
	}
	if (sema_check_expr(s, arg) || sema_go_uniform(s, arg))
		return -EINVAL;
	if (sema_is_go(arg) && arg->ty->kind != TY_STR) /* in Go's %+v shape */
		arg->ty = sema_go_print_type(s, arg);
	if (arg->ty->kind == TY_STRUCT && arg->ty->size > SEMA_MAX_STRUCT_COPY) {
		diag_error(s->src, arg->loc, "%s is %d bytes: print() copies at most %d", arg->ty->name,
			   arg->ty->size, SEMA_MAX_STRUCT_COPY);
		return -EINVAL;
	}
	if (!sema_is_int(arg) && !sema_is_textual(arg) && arg->ty->kind != TY_TUPLE &&
	    arg->ty->kind != TY_STRUCT && arg->ty->kind != TY_GO && arg->ty->kind != TY_INTARRAY) {
		diag_error(s->src, arg->loc, "print() cannot print %s", sema_kind_word(arg));
		return -EINVAL;
	}
	sema_node_of(s, e)->event_id = sema_new_event(s, b->event, NULL, &arg, 1);
	return 0;
}

int sema_check_reg(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	struct ast_node *arg = e->u.call.args.v[0];
	if (arg->kind != AST_STR) {
		diag_error(s->src, e->loc, "%s", b->usage);
		return -EINVAL;
	}
	int off = arch_reg_offset(arg->u.str.bytes);
	if (off < 0) {
		diag_error(s->src, arg->loc, "unknown register '%s': expected %s",
			   arg->u.str.bytes, arch_reg_all_help);
		return -EINVAL;
	}
	sema_node_of(s, e)->regs_off = off;
	return 0;
}

/* Current bpftrace's spellings of a builtin: __builtin_NAME for NAME, and NAME() for
 * the identifier NAME (its stdlib wraps each builtin in a macro). The call becomes the
 * identifier it stands for. */
static void builtin_spelling(struct sema *s, struct ast_node *e)
{
	bool call = e->kind == AST_CALL;
	const char **name = call ? &e->u.call.name : &e->u.name;
	if (!strncmp(*name, "__builtin_", 10) && (*name)[10])
		*name += 10;
	if (call && !e->u.call.args.n &&
	    !builtin_find(*name, BFORM_CALL, s->opts->funcgraph) &&
	    builtin_find(*name, BFORM_IDENT, s->opts->funcgraph)) {
		const char *n = *name;
		e->kind = AST_IDENT;
		e->u.name = n;
	}
}

const struct builtin *sema_resolve(struct sema *s, struct ast_node *e)
{
	struct sema_node *sn = sema_node_of(s, e);
	if (!sn->resolved) {
		builtin_spelling(s, e);
		bool call = e->kind == AST_CALL;
		const struct builtin *b =
			builtin_find(call ? e->u.call.name : e->u.name,
				     call ? BFORM_CALL : BFORM_IDENT, s->opts->funcgraph);
		sn->resolved = true;
		sn->builtin = b ? b->id : BI_NONE;
	}
	return builtin_get(sn->builtin);
}

static struct gt_type *result_type(struct sema *s, const struct builtin *b)
{
	switch (b->result) {
	case RES_VOID:
		return &sema_ty_void;
	case RES_I64:
		return &sema_ty_i64;
	case RES_U64:
		return &sema_ty_u64;
	case RES_BOOL:
		return sema_type_bool(s);
	case RES_STR:
		return sema_type_new(s, TY_STR, b->str_size ? b->str_size : s->opts->str_len,
				     false);
	case RES_FUNC:
		return sema_type_new(s, TY_SITE_FUNC, 8, false);
	case RES_PROBE:
		return sema_type_new(s, TY_SITE_PROBE, 8, false);
	case RES_NONE:
		break;
	}
	return NULL;
}

static int unknown_name(struct sema *s, struct ast_node *e, bool call)
{
	int64_t v;
	const struct sema_macro *m = call ? NULL : sema_macro_find(s, e->u.name);
	if (m && m->sval) { /* a #define'd string */
		struct sema_node *sn = sema_node_of(s, e);
		sn->builtin = BI_CONSTSTR;
		sn->const_str = m->sval;
		e->ty = sema_type_new(s, TY_STR, (int)strlen(m->sval) + 1, false);
		return 0;
	}
	if (m || (!call && sema_enum_value(s, e->u.name, &v))) { /* a macro, a kernel enum */
		struct sema_node *sn = sema_node_of(s, e);
		sn->builtin = BI_CONST;
		sn->const_val = m ? m->ival : v;
		e->ty = &sema_ty_i64;
		if (m && m->enum_id) { /* an enumerator: printf("%s") names it */
			e->ty = sema_type_new(s, TY_INT, 8, true);
			e->ty->enum_id = m->enum_id;
		}
		return 0;
	}
	const char *names[BI_TABLE_END];
	int n = builtin_names(call ? BFORM_CALL : BFORM_IDENT, names, BI_TABLE_END);
	const char *name = call ? e->u.call.name : e->u.name;
	struct gt_loc loc = call ? e->u.call.name_loc : e->loc;
	const char *what = call ? "function" : "identifier";
	const char *c = sema_closest(s, name, names, n, NULL, 0);
	if (c)
		diag_error(s->src, loc, "unknown %s '%s'; did you mean '%s'?", what, name, c);
	else
		diag_error(s->src, loc, "unknown %s '%s'", what, name);
	return -EINVAL;
}

int sema_check_builtin(struct sema *s, struct ast_node *e)
{
	const struct builtin *b = sema_resolve(s, e); /* first: it may respell e */
	bool call = e->kind == AST_CALL;
	if (!b)
		return unknown_name(s, e, call);
	if (b->flags & BF_LATER) {
		if (call)
			diag_error(s->src, e->u.call.name_loc, "%s() is not supported yet", b->name);
		else
			diag_error(s->src, e->loc, "'%s' is not supported yet", b->name);
		return -ENOTSUP;
	}
	if (b->flags & BF_AGG) {
		diag_error(s->src, e->u.call.name_loc,
			   "%s() must be stored in a map: @name = %s(...)", b->name, b->name);
		return -EINVAL;
	}
	if (b->probes) {
		char what[48];
		snprintf(what, sizeof(what), call ? "%s()" : "%s", b->name);
		if (sema_check_probes(s, e, what, b->probes))
			return -EINVAL;
	}
	int n = call ? e->u.call.args.n : 0;
	if (b->usage && (n < b->min_args || n > b->max_args)) {
		diag_error(s->src, e->loc, "%s", b->usage);
		return -EINVAL;
	}
	if (b->flags & BF_GORUNTIME)
		s->clause_uses_goruntime = true;
	e->ty = result_type(s, b);
	if (b->check)
		return b->check(s, e, b);
	if (b->flags & BF_EVENT)
		sema_node_of(s, e)->event_id = sema_new_event(s, b->event, NULL, NULL, 0);
	return 0;
}
