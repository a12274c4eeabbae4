/* sema_expr: names and types of expressions (calls: sema_calls.c; statements: sema_stmt.c). */
#include "sema/sema_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sema/tracepoint.h"

struct gt_type sema_ty_void = {.kind = TY_VOID, .size = 0, .is_signed = false};
struct gt_type sema_ty_i64 = {.kind = TY_INT, .size = 8, .is_signed = true};
static struct gt_type sema_ty_bool = {.kind = TY_INT, .size = 1, .is_bool = true};
struct gt_type sema_ty_u64 = {.kind = TY_INT, .size = 8, .is_signed = false};

struct sema_node *sema_node_of(struct sema *s, struct ast_node *n)
{
	if (!n->sema)
		n->sema = arena_alloc(s->arena, sizeof(struct sema_node));
	return n->sema;
}

struct gt_type *sema_type_bool(struct sema *s)
{
	struct gt_type *t = sema_type_new(s, TY_INT, 1, false);
	t->is_bool = true;
	return t;
}

struct gt_type *sema_type_new(struct sema *s, enum gt_type_kind k, int size, bool is_signed)
{
	struct gt_type *t = arena_alloc(s->arena, sizeof(*t));
	t->kind = k;
	t->size = size;
	t->is_signed = is_signed;
	return t;
}

const char *gt_type_str(const struct gt_type *t, char *buf, size_t len)
{
	switch (t ? t->kind : TY_VOID) {
	case TY_VOID:
		return "void";
	case TY_INT:
		snprintf(buf, len, "%sint%d", t->is_signed ? "" : "u", t->size * 8);
		return buf;
	case TY_STR:
		snprintf(buf, len, "string[%d]", t->size);
		return buf;
	case TY_SITE_FUNC:
		return "func";
	case TY_SITE_PROBE:
		return "probe";
	case TY_PTR: {
		char sub[64];
		snprintf(buf, len, "%s *", gt_type_str(t->pointee, sub, sizeof(sub)));
		return buf;
	}
	case TY_STRUCT:
		return t->name ? t->name : "struct";
	case TY_ARRAY:
	case TY_INTARRAY: {
		char sub[64];
		snprintf(buf, len, "%s[%d]", gt_type_str(t->pointee, sub, sizeof(sub)), t->count);
		return buf;
	}
	case TY_STRFTIME:
		return "strftime";
	case TY_STRERROR:
		return "strerror";
	case TY_USERNAME:
		return "username";
	case TY_INET:
		return "inet";
	case TY_STACK:
		return "stack";
	case TY_SYM:
		return "symbol";
	case TY_CGROUP_PATH:
		return "cgroup_path";
	case TY_BUF:
		snprintf(buf, len, "buffer[%d]", t->size - 8);
		return buf;
	case TY_GO:
		return t->name ? t->name : "go";
	case TY_NIL:
		return "nil";
	case TY_TUPLE: {
		size_t n = 0;
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "(");
		for (int i = 0; i < t->nfields; i++) {
			char sub[64];
			n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", i ? ", " : "",
					      gt_type_str(t->fields[i], sub, sizeof(sub)));
		}
		snprintf(buf + n, n < len ? len - n : 0, ")");
		return buf;
	}
	}
	return "?";
}

/* The alignment of a value in a tuple, as a C struct lays it out (bpftrace does). */
static int type_align(const struct gt_type *t)
{
	switch (t->kind) {
	case TY_INT:
		return t->size;
	case TY_STR:
		return 1;
	case TY_INTARRAY:
		return t->pointee->size;
	case TY_STRUCT:
		return t->align ? t->align : 8;
	case TY_TUPLE: {
		int a = 1;
		for (int i = 0; i < t->nfields; i++) {
			int fa = type_align(t->fields[i]);
			a = fa > a ? fa : a;
		}
		return a;
	}
	default:
		return 8; /* func, probe: site ids */
	}
}

/* Offsets and size of a tuple from its fields' (innermost first). */
static void tuple_layout(struct gt_type *t)
{
	int off = 0;
	for (int i = 0; i < t->nfields; i++) {
		if (t->fields[i]->kind == TY_TUPLE)
			tuple_layout(t->fields[i]);
		int a = type_align(t->fields[i]);
		off = (off + a - 1) / a * a;
		t->offsets[i] = off;
		off += t->fields[i]->size;
	}
	int a = type_align(t);
	t->size = off ? (off + a - 1) / a * a : 1;
}

struct gt_type *sema_type_copy(struct sema *s, const struct gt_type *t)
{
	if (t->kind == TY_STRUCT || t->kind == TY_ARRAY)
		return (struct gt_type *)t; /* C types never change: shared */
	struct gt_type *c = sema_type_new(s, t->kind, t->size, t->is_signed);
	c->fmt = t->fmt;
	c->pointee = t->pointee;
	c->is_bool = t->is_bool;
	c->own_stack = t->own_stack;
	c->count = t->count;
	c->enum_id = t->enum_id;
	c->names = t->names;
	if (t->kind != TY_TUPLE)
		return c;
	c->nfields = t->nfields;
	c->fields = arena_alloc(s->arena, sizeof(*c->fields) * (size_t)t->nfields);
	c->offsets = arena_alloc(s->arena, sizeof(*c->offsets) * (size_t)t->nfields);
	for (int i = 0; i < t->nfields; i++) {
		c->fields[i] = sema_type_copy(s, t->fields[i]);
		c->offsets[i] = t->offsets[i];
	}
	return c;
}

struct gt_type *sema_tuple_of(struct sema *s, struct gt_type **fields, int n)
{
	struct gt_type *t = sema_type_new(s, TY_TUPLE, 0, false);
	t->nfields = n;
	t->fields = arena_alloc(s->arena, sizeof(*t->fields) * (size_t)n);
	t->offsets = arena_alloc(s->arena, sizeof(*t->offsets) * (size_t)n);
	memcpy(t->fields, fields, sizeof(*t->fields) * (size_t)n);
	tuple_layout(t);
	return t;
}

static int check_tuple(struct sema *s, struct ast_node *e)
{
	struct ast_list *items = &e->u.tuple.items;
	int err = 0;
	for (int i = 0; i < items->n; i++)
		err |= sema_check_expr(s, items->v[i]);
	if (err)
		return -EINVAL;
	struct gt_type *t = sema_type_new(s, TY_TUPLE, 0, false);
	t->nfields = items->n;
	t->fields = arena_alloc(s->arena, sizeof(*t->fields) * (size_t)items->n);
	t->offsets = arena_alloc(s->arena, sizeof(*t->offsets) * (size_t)items->n);
	for (int i = 0; i < items->n; i++) {
		const struct gt_type *it = items->v[i]->ty;
		if (it->kind == TY_VOID) {
			diag_error(s->src, items->v[i]->loc, "a tuple cannot hold nothing (void)");
			return -EINVAL;
		}
		if (it->kind == TY_NIL) {
			diag_error(s->src, items->v[i]->loc, "a tuple cannot hold nil: nil only "
				   "compares (x == nil, x != nil)");
			return -EINVAL;
		}
		if (it->kind == TY_GO) {
			diag_error(s->src, items->v[i]->loc, "a tuple cannot hold a Go %s (print() it "
				   "alone, or take its fields)", it->name);
			return -EINVAL;
		}
		t->fields[i] = (struct gt_type *)it;
		for (int j = 0; e->u.tuple.names && j < i; j++) {
			if (!strcmp(e->u.tuple.names[j], e->u.tuple.names[i])) {
				diag_error(s->src, items->v[i]->loc, "the record names '%s' twice",
					   e->u.tuple.names[i]);
				return -EINVAL;
			}
		}
	}
	t->names = e->u.tuple.names; /* a record prints as a struct: { .a = 1 } */
	tuple_layout(t);
	e->ty = t;
	return 0;
}

/* Whether B can be stored where A is kept: the same kinds, field for field. Strings in A
 * grow to B's size (as string variables do) and the layout follows. */
static bool merge(struct gt_type *a, const struct gt_type *b)
{
	if (gt_type_is_int(a) != gt_type_is_int(b) || (!gt_type_is_int(a) && a->kind != b->kind))
		return false;
	if ((a->kind == TY_STR || a->kind == TY_BUF) && b->size > a->size)
		a->size = b->size;
	if (a->kind == TY_STRFTIME)
		return !strcmp(a->fmt, b->fmt);
	if (a->kind == TY_STRUCT) /* the same struct: they do not grow */
		return a == b || (a->name && b->name && !strcmp(a->name, b->name));
	if (a->kind == TY_INTARRAY) /* the same elements, as many */
		return a->size == b->size && a->pointee->size == b->pointee->size &&
		       a->pointee->is_signed == b->pointee->is_signed &&
		       a->pointee->is_bool == b->pointee->is_bool;
	if (a->kind != TY_TUPLE)
		return true;
	if (a->nfields != b->nfields || !a->names != !b->names)
		return false;
	for (int i = 0; i < a->nfields; i++) {
		/* records match by name, in any order (current bpftrace) */
		int j = a->names ? gt_record_field(b, a->names[i]) : i;
		if (j < 0 || !merge(a->fields[i], b->fields[j]))
			return false;
	}
	return true;
}

bool sema_tuple_merge(struct gt_type *a, const struct gt_type *b)
{
	if (!merge(a, b))
		return false;
	if (a->kind == TY_TUPLE)
		tuple_layout(a);
	return true;
}

/* The type of a struct field or array element as an expression: char arrays read as
 * strings, the rest as they are (structs and arrays stay in memory: their address). */
static struct gt_type *element_value_type(struct sema *s, struct gt_type *t)
{
	if (t->kind == TY_ARRAY && t->pointee->kind == TY_INT && t->pointee->size == 1)
		return sema_type_new(s, TY_STR, t->count + 1, false);
	return t;
}

/* p->f, s.f: a field of a C struct; `.` follows a pointer too, as in Go. */
static int check_struct_field(struct sema *s, struct ast_node *e)
{
	struct ast_node *base = e->u.field.expr;
	struct gt_type *st = base->ty->kind == TY_PTR ? base->ty->pointee : base->ty;
	int i = sema_struct_field(s, st, e->u.field.name);
	if (i < 0) {
		diag_error(s->src, e->loc, "%s has no field '%s'", st->name, e->u.field.name);
		return -EINVAL;
	}
	sema_node_of(s, e)->const_val = st->offsets[i];
	sema_node_of(s, e)->user_mem = sema_node_of(s, base)->user_mem;
	/* (struct foo *)&$v->f, (*p).f: the program's own stack, in every probe */
	/* a struct held in a map is read back into the program's buffer (kernel memory) */
	sema_node_of(s, e)->own_mem = base->ty->own_stack || sema_node_of(s, base)->own_mem ||
				      base->kind == AST_MAP;
	if (st->bitfields)
		sema_node_of(s, e)->bitfield = st->bitfields[i];
	e->ty = element_value_type(s, st->fields[i]);
	if (gt_type_is_int(e->ty)) /* -kk: a read of memory that fails */
		sema_helper_event(s, e, 2, "probe_read");
	return 0;
}

/* $t.N (field N of a tuple, bpftrace's spelling) and C struct fields. */
static int check_tuple_field(struct sema *s, struct ast_node *e)
{
	struct ast_node *base = e->u.field.expr;
	if (base->ty->kind == TY_STRUCT ||
	    (base->ty->kind == TY_PTR && base->ty->pointee->kind == TY_STRUCT))
		return check_struct_field(s, e);
	if (base->ty->kind != TY_TUPLE) {
		diag_error(s->src, e->loc, "%s has no field '%s'", sema_kind_word(base),
			   e->u.field.name);
		return -EINVAL;
	}
	const char *name = e->u.field.name;
	char *end;
	long i = strtol(name, &end, 10);
	if (base->ty->names) { /* a record: by name */
		for (i = 0; i < base->ty->nfields && strcmp(base->ty->names[i], name); i++)
			;
		if (i == base->ty->nfields) {
			diag_error(s->src, e->loc, "the record has no field '%s'", name);
			return -EINVAL;
		}
	} else if (e->u.field.arrow || *end || name[0] < '0' || name[0] > '9' ||
		   i >= base->ty->nfields) {
		diag_error(s->src, e->loc, "a tuple of %d element%s has no field '%s'",
			   base->ty->nfields, base->ty->nfields == 1 ? "" : "s", name);
		return -EINVAL;
	}
	/* the index: offsets are final only when every store into the tuple is seen */
	sema_node_of(s, e)->const_val = i;
	e->ty = base->ty->fields[i];
	return 0;
}

bool sema_is_int(const struct ast_node *e)
{
	return gt_type_is_int(e->ty);
}

bool sema_is_cond(const struct ast_node *e)
{
	return sema_is_int(e) || sema_go_nilable_aggregate(e);
}

bool sema_is_textual(const struct ast_node *e)
{
	if (!e->ty)
		return false;
	switch (e->ty->kind) {
	case TY_STR:
	case TY_SITE_FUNC:
	case TY_SITE_PROBE:
	case TY_STRFTIME:
	case TY_STRERROR:
	case TY_USERNAME:
	case TY_INET:
	case TY_CGROUP_PATH:
	case TY_BUF:
	case TY_STACK:
	case TY_SYM:
		return true;
	default:
		return false;
	}
}

const char *sema_kind_word(const struct ast_node *e)
{
	if (!e->ty)
		return "nothing";
	switch (e->ty->kind) {
	case TY_VOID:
		return "nothing (void)";
	case TY_INT:
		return "an integer";
	case TY_PTR:
		return "a pointer";
	case TY_TUPLE:
		return "a tuple";
	case TY_INTARRAY:
		return "an array";
	case TY_GO:
		return "a Go value (print() it, or use its fields, elements, len())";
	case TY_NIL:
		return "nil";
	default:
		return "a string";
	}
}


const char *sema_closest(struct sema *s, const char *name, const char *const *cands, int n,
			   const char *const *cands2, int n2)
{
	const char *best = NULL;
	int bestd = 3;
	for (int i = 0; i < n + n2; i++) {
		const char *c = i < n ? cands[i] : cands2[i - n];
		int d = edit_distance(name, c, bestd);
		if (d < bestd) {
			bestd = d;
			best = c;
		}
	}
	(void)s;
	return best;
}

int sema_check_probes(struct sema *s, struct ast_node *e, const char *what, unsigned allowed)
{
	static const char *const names[] = {"BEGIN", "END", "go", "interval/profile",
					    "tracepoint", "kprobe", "kfunc"};
	_Static_assert(ARRAY_SIZE(names) == PLAN_PROG_NKINDS, "a name for each program kind");
	unsigned others = s->clause_kinds & ~allowed;
	if (!others)
		return 0;
	int k = 0;
	while (!(others & (1u << k)))
		k++;
	diag_error(s->src, e->loc, "%s is not available in %s probes", what, names[k]);
	return -EINVAL;
}

int sema_check_uprobe_only(struct sema *s, struct ast_node *e, const char *what)
{
	return sema_check_probes(s, e, what, P_UPROBE);
}

/* args.FIELD of the clause's tracepoint */
static int check_tp_arg(struct sema *s, struct ast_node *e)
{
	if (s->clause_kinds & (1u << PLAN_PROG_FENTRY))
		return sema_check_kfunc_arg(s, e);
	if (s->clause_kinds != (1u << PLAN_PROG_TRACEPOINT) || !s->clause_tp) {
		diag_error(s->src, e->loc, "args.%s is only available in tracepoint probes here "
			   "(Go parameters from DWARF are not supported yet)", e->u.field.name);
		return -ENOTSUP;
	}
	if (s->clause_tp == (struct tp_format *)-1) {
		diag_error(s->src, e->loc, "args in a clause with several tracepoints is not "
			   "supported yet");
		return -ENOTSUP;
	}
	const struct tp_field *f = tp_field_find(s->clause_tp, e->u.field.name);
	if (!f) {
		diag_error(s->src, e->loc, "the tracepoint has no field '%s'", e->u.field.name);
		return -EINVAL;
	}
	struct sema_node *sn = sema_node_of(s, e);
	sn->builtin = BI_TPARG;
	sn->tp_offset = f->offset;
	sn->tp_size = f->size;
	sn->tp_signed = f->is_signed;
	sn->tp_string = f->is_string;
	sn->tp_data_loc = f->is_data_loc;
	struct gt_type *ptr = !f->is_string && !f->is_data_loc && f->size == 8 && strchr(f->decl, '*')
				      ? sema_ctype_from_decl(s, f->decl)
				      : NULL;
	if (ptr) {
		e->ty = ptr; /* struct X *: its fields through -> (kernel BTF) */
		sn->user_mem = s->clause_tp_user;
	}
	else if (f->is_string || f->is_data_loc)
		e->ty = sema_type_new(s, TY_STR, f->is_string ? f->size + 1 : s->opts->str_len, false);
	else if (f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8)
		e->ty = sema_type_new(s, TY_INT, f->size, f->is_signed);
	else {
		diag_error(s->src, e->loc, "field '%s' (%d bytes) is not supported yet",
			   e->u.field.name, f->size);
		return -ENOTSUP;
	}
	return 0;
}

/* goid, duration, oncpu, depth, retval: the Go runtime builtins. */
int sema_check_go_ident(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	struct sema_node *sn = sema_node_of(s, e);
	if (b->id == BI_RETVAL && (s->clause_kinds & (1u << PLAN_PROG_FENTRY)))
		return sema_check_kfunc_retval(s, e);
	if (b->id == BI_RETVAL) {
		int r = sema_go_retval(s, e);
		if (r <= 0)
			return r;
		sn->regs_off = arch_role_off[ARCH_RET0];
	}
	if (b->id == BI_RETVAL && s->clause_points == (1u << UP_RETURN)) {
		e->ty = &sema_ty_i64; /* uretprobe on C code */
		return 0;
	}
	if (b->id == BI_RETVAL && (s->clause_kinds & (1u << PLAN_PROG_KPROBE)) &&
	    s->clause_points != (1u << UP_RETURN)) {
		diag_error(s->src, e->loc, "retval is only available in kretprobe probes");
		return -EINVAL;
	}
	bool timed = b->id == BI_DURATION || b->id == BI_ONCPU;
	if ((timed || b->id == BI_RETVAL) && s->clause_points != (1u << GO_RETURN)) {
		diag_error(s->src, e->loc, "%s is only available in go:FUNC:return probes", b->name);
		return -EINVAL;
	}
	if (timed)
		s->clause_uses_duration = true;
	if (b->id == BI_ONCPU)
		s->uses_oncpu = true;
	if (b->id == BI_DEPTH)
		s->uses_depth = true;
	e->ty = b->id == BI_DEPTH || timed ? &sema_ty_u64 : &sema_ty_i64;
	if (timed || b->id == BI_RETVAL) { /* Go's: printf's %d prints all */
		e->ty = sema_type_new(s, TY_INT, 8, b->id == BI_RETVAL);
		e->ty->go_int = true;
	}
	return 0;
}

/* arg0..arg8: Go's register ABI in go: probes, C's in uprobe: probes. */
int sema_check_argn(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	struct sema_node *sn = sema_node_of(s, e);
	int n = b->id - BI_ARG0;
	unsigned up = (1u << UP_ENTRY) | (1u << UP_RETURN);
	if ((s->clause_points & up) && (s->clause_points & ~up)) {
		diag_error(s->src, e->loc,
			   "%s: go: and uprobe: probes in one clause pass arguments differently "
			   "(Go's register ABI vs C's); split the clause",
			   b->name);
		return -EINVAL;
	}
	if (s->clause_points & up) {
		if (n >= ARCH_C_ARG_REGS) {
			diag_error(s->src, e->loc, "%s: the C ABI passes six integer arguments in "
				   "registers (arg0..arg5)", b->name);
			return -EINVAL;
		}
		sn->regs_off = arch_reg_offset(arch_c_arg_regs[n]);
		e->ty = &sema_ty_u64; /* as bpftrace */
		return 0;
	}
	if (s->clause_stack_abi) {
		diag_error(s->src, e->loc,
			   "%s: this program is built with %s, which passes arguments on the "
			   "stack (the register ABI came with Go 1.17); read them with fetch "
			   "rules: arg(+%d(%%sp)):s64",
			   b->name, s->clause_stack_abi, 8 * (n + 1));
		return -EINVAL;
	}
	/* Go's integer parameters are mostly int: signed, so `arg1 < 0` works */
	sn->regs_off = arch_reg_offset(arch_go_int_regs[n]);
	e->ty = &sema_ty_i64;
	return 0;
}

struct sema_var *sema_find_var(struct sema *s, const char *name, int *slot)
{
	for (int i = 0; i < s->vars.n; i++) {
		if (!s->vars.v[i]->out_of_scope && !strcmp(s->vars.v[i]->name, name)) {
			*slot = i;
			return s->vars.v[i];
		}
	}
	return NULL;
}

int sema_fetch_type(struct sema *s, const char *t, struct gt_type **ty, bool *gostr)
{
	int bits = 0;
	*gostr = false;
	if ((t[0] == 's' || t[0] == 'u') && t[1] && (bits = atoi(t + 1)) &&
	    (bits == 8 || bits == 16 || bits == 32 || bits == 64) &&
	    !strcmp(t + 1, bits == 8 ? "8" : bits == 16 ? "16" : bits == 32 ? "32" : "64")) {
		*ty = sema_type_new(s, TY_INT, bits / 8, t[0] == 's');
		return 0;
	}
	if (!strcmp(t, "ptr")) {
		*ty = &sema_ty_u64;
		return 0;
	}
	if (!strcmp(t, "str")) {
		*ty = sema_type_new(s, TY_STR, s->opts->str_len, false);
		*gostr = true;
		return 0;
	}
	if (t[0] == 'c' && t[1] >= '1' && t[1] <= '9') {
		char *end;
		long n = strtol(t + 1, &end, 10);
		if (!*end && n > 0 && n <= 1024) {
			*ty = sema_type_new(s, TY_STR, (int)n + 1, false);
			return 0;
		}
	}
	return -1;
}

static int check_fetch(struct sema *s, struct ast_node *e)
{
	if (sema_check_uprobe_only(s, e, "arg(...)"))
		return -EINVAL;
	for (struct fetch_rule *r = e->u.fetch.rule; r; r = r->base) {
		if (r->kind != FETCH_REG)
			continue;
		r->regs_off = arch_reg_offset(r->reg);
		if (r->regs_off < 0) {
			diag_error(s->src, r->loc, "unknown register '%%%s'", r->reg);
			return -EINVAL;
		}
	}
	struct sema_node *sn = sema_node_of(s, e);
	if (sema_fetch_type(s, e->u.fetch.type, &e->ty, &sn->fetch_gostr) == 0)
		return 0;
	diag_error(s->src, e->u.fetch.type_loc,
		   "unknown fetch type '%s': expected s8 s16 s32 s64 u8 u16 u32 u64, cN (N bytes "
		   "of text, 1..1024), str or ptr",
		   e->u.fetch.type);
	return -EINVAL;
}

int sema_check_nil(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	(void)s;
	(void)b;
	static struct gt_type nil_ty = {.kind = TY_NIL, .size = 8};
	e->ty = &nil_ty;
	return 0;
}

/* X == nil, X != nil (either side): X is a pointer (Go's *T, map, chan, func are) or a
 * Go interface or slice, whose first word is 0 when nil; nil == nil is true. */
static int check_nil_compare(struct sema *s, struct ast_node *e, struct ast_node *nil,
			     struct ast_node *x)
{
	enum ast_op op = e->u.binary.op;
	if (op != OP_EQ && op != OP_NE) {
		diag_error(s->src, nil->loc, "operator '%s' does not take nil: nil compares with "
			   "== and != only", ast_op_str(op));
		return -EINVAL;
	}
	if (x->ty->kind != TY_NIL && x->ty->kind != TY_PTR && !sema_go_nilable_aggregate(x)) {
		const char *go = sema_go_describe(s, x);
		diag_error(s->src, x->loc, "%s%s cannot be nil: nil compares with a pointer, an "
			   "interface, a slice, a map, a chan or a func", go ? go : "",
			   go ? "" : sema_kind_word(x));
		return -EINVAL;
	}
	e->ty = &sema_ty_i64;
	return 0;
}

static int check_binary(struct sema *s, struct ast_node *e)
{
	struct ast_node *l = e->u.binary.lhs, *r = e->u.binary.rhs;
	if (sema_check_expr(s, l) | sema_check_expr(s, r))
		return -EINVAL;
	enum ast_op op = e->u.binary.op;
	bool cmp = op == OP_EQ || op == OP_NE;
	if (l->ty->kind == TY_NIL || r->ty->kind == TY_NIL)
		return l->ty->kind == TY_NIL ? check_nil_compare(s, e, l, r)
					      : check_nil_compare(s, e, r, l);
	if ((op == OP_LAND || op == OP_LOR) && sema_is_cond(l) && sema_is_cond(r)) {
		e->ty = &sema_ty_i64;
		return 0;
	}
	if (cmp && l->ty->kind == TY_TUPLE && r->ty->kind == TY_TUPLE) {
		/* current bpftrace: field by field, both laid out alike (strings at the longer
		 * size), then the bytes compared */
		struct gt_type *t = sema_type_copy(s, l->ty);
		if (!sema_tuple_merge(t, r->ty)) {
			char b1[64], b2[64];
			diag_error(s->src, e->loc, "cannot compare %s with %s",
				   gt_type_str(l->ty, b1, sizeof(b1)), gt_type_str(r->ty, b2, sizeof(b2)));
			return -EINVAL;
		}
		sema_node_of(s, e)->cmp_ty = t;
		e->ty = &sema_ty_i64;
		return 0;
	}
	if (cmp && l->ty->kind == TY_BUF && r->ty->kind == TY_BUF) {
		e->ty = &sema_ty_i64; /* the same length and bytes */
		return 0;
	}
	if (cmp && l->ty->kind == TY_USERNAME && r->ty->kind == TY_USERNAME &&
	    (op == OP_EQ || op == OP_NE)) {
		e->ty = &sema_ty_i64; /* the same user: the same uid (each is its uid in BPF) */
		return 0;
	}
	if (cmp && sema_is_textual(l) && sema_is_textual(r)) {
		if (l->ty->kind != TY_STR || r->ty->kind != TY_STR) {
			diag_error(s->src, e->loc, "func and probe cannot be compared yet");
			return -ENOTSUP;
		}
		static struct gt_type cmp_ty = {.kind = TY_INT, .size = 8, .is_signed = true};
		e->ty = &cmp_ty;
		return 0;
	}
	struct ast_node *bad = !sema_is_int(l) ? l : !sema_is_int(r) ? r : NULL;
	if (bad && sema_go_nilable_aggregate(bad)) {
		diag_error(s->src, bad->loc, "operator '%s' needs integers, got %s: compare it "
			   "with nil (== nil, != nil), or test it alone (true when not nil)",
			   ast_op_str(op), sema_go_describe(s, bad));
		return -EINVAL;
	}
	if (bad) {
		diag_error(s->src, bad->loc, "operator '%s' needs integers, got %s", ast_op_str(op),
			   sema_kind_word(bad));
		return -EINVAL;
	}
	bool lp = l->ty->kind == TY_PTR, rp = r->ty->kind == TY_PTR;
	if ((op == OP_ADD && lp != rp) || (op == OP_SUB && lp && !rp))
		e->ty = lp ? l->ty : r->ty; /* p + n: n elements on, as in C */
	else if (op == OP_SUB && lp && rp)
		e->ty = &sema_ty_i64; /* elements between */
	else if (ast_op_is_compare(op) || op == OP_LAND || op == OP_LOR)
		e->ty = &sema_ty_i64;
	else if (op == OP_SHL || op == OP_SHR)
		e->ty = l->ty->is_signed ? &sema_ty_i64 : &sema_ty_u64; /* as C: the left side's */
	else
		e->ty = (l->ty->is_signed && r->ty->is_signed) ? &sema_ty_i64 : &sema_ty_u64;
	return 0;
}

static int check_posparam(struct sema *s, struct ast_node *e)
{
	struct sema_node *sn = sema_node_of(s, e);
	int n = e->u.posparam.n;
	if (n < 0) {
		sn->const_val = s->opts->nposargs;
		e->ty = &sema_ty_i64;
		return 0;
	}
	const char *v = n >= 1 && n <= s->opts->nposargs ? s->opts->posargs[n - 1] : NULL;
	if (!v) {
		/* bpftrace: a missing parameter is 0, or "" where a string is used */
		sn->const_val = 0;
		e->ty = &sema_ty_i64;
		return 0;
	}
	char *end;
	errno = 0;
	long long iv = strtoll(v, &end, 0);
	unsigned long long uv = 0;
	bool big = false;
	if (errno == ERANGE && *v != '-') { /* 0xffffffffffffffff: a uint64, as in bpftrace */
		errno = 0;
		uv = strtoull(v, &end, 0);
		big = true;
	}
	if (*v && !*end && !errno) {
		sn->const_val = big ? (int64_t)uv : iv;
		e->ty = big ? &sema_ty_u64 : &sema_ty_i64;
	} else {
		sn->const_str = v;
		int len = (int)strlen(v) + 1;
		e->ty = sema_type_new(s, TY_STR, len > s->opts->str_len ? s->opts->str_len : len, false);
	}
	return 0;
}

/* An integer known before the program runs: a literal, or +, -, * of such. */
static bool const_int(struct sema *s, const struct ast_node *e, int64_t *out)
{
	int64_t a, b;
	switch (e->kind) {
	case AST_INT:
		*out = (int64_t)e->u.int_.value;
		return true;
	case AST_POSPARAM:
		*out = sema_node_of(s, (struct ast_node *)e)->const_val;
		return sema_is_int(e);
	case AST_UNARY:
		if (e->u.unary.op != OP_NEG || !const_int(s, e->u.unary.operand, &a))
			return false;
		*out = -a;
		return true;
	case AST_BINARY:
		if (!const_int(s, e->u.binary.lhs, &a) || !const_int(s, e->u.binary.rhs, &b))
			return false;
		switch (e->u.binary.op) {
		case OP_ADD: *out = a + b; return true;
		case OP_SUB: *out = a - b; return true;
		case OP_MUL: *out = a * b; return true;
		default: return false;
		}
	default:
		return false;
	}
}

int sema_check_expr(struct sema *s, struct ast_node *e)
{
	switch (e->kind) {
	case AST_INT:
		e->ty = e->u.int_.is_bool	  ? &sema_ty_bool
			: e->u.int_.is_unsigned ? &sema_ty_u64
						: &sema_ty_i64;
		return 0;
	case AST_BLOCK_EXPR: {
		struct ast_node *v = e->u.blockexpr.value;
		if (sema_check_block(s, e->u.blockexpr.block) || (v && sema_check_expr(s, v)))
			return -EINVAL;
		if (v && v->ty->kind == TY_VOID) { /* { printf("hi") }: a statement after all */
			struct ast_node *st = ast_new(s->arena, AST_EXPR_STMT, v->loc);
			st->u.expr_stmt.expr = v;
			ast_list_push(s->arena, &e->u.blockexpr.block->u.block.stmts, st);
			e->u.blockexpr.value = v = NULL;
		}
		e->ty = v ? v->ty : &sema_ty_void;
		return 0;
	}
	case AST_STR: {
		int len = e->u.str.len + 1;
		e->ty = sema_type_new(s, TY_STR, len, false);
		return 0;
	}
	case AST_VAR: {
		int slot;
		struct sema_var *v = sema_find_var(s, e->u.name, &slot);
		if (!v) {
			diag_error(s->src, e->loc, "variable '$%s' is used before it is assigned",
				   e->u.name);
			return -EINVAL;
		}
		sema_node_of(s, e)->var_slot = slot;
		sema_loop_capture(s, slot);
		e->ty = &v->ty;
		return 0;
	}
	case AST_MAP:
		return sema_map_read(s, e);
	case AST_IDENT:
		return sema_check_builtin(s, e);
	case AST_POSPARAM:
		return check_posparam(s, e);
	case AST_UNARY: {
		enum ast_op op = e->u.unary.op;
		if (op == OP_ADDR)
			return sema_check_addr(s, e);
		if (op == OP_DEREF) {
			struct ast_node *p = e->u.unary.operand;
			if (sema_check_expr(s, p))
				return -EINVAL;
			if (sema_is_go(p))
				return sema_go_deref(s, e);
			if (p->ty->kind != TY_PTR) {
				diag_error(s->src, p->loc, "only a pointer can be dereferenced, not %s",
					   sema_kind_word(p));
				return -EINVAL;
			}
			sema_node_of(s, e)->user_mem = sema_node_of(s, p)->user_mem;
			sema_node_of(s, e)->own_mem = p->ty->own_stack;
			e->ty = element_value_type(s, p->ty->pointee);
			if (p->ty->own_stack && (e->ty->kind == TY_STRUCT || e->ty->kind == TY_ARRAY)) {
				/* *(struct foo *)&$v: held by address, which stays the stack's */
				e->ty = sema_type_copy(s, e->ty);
				e->ty->own_stack = true;
			}
			return 0;
		}
		if (sema_check_expr(s, e->u.unary.operand))
			return -EINVAL;
		if (op == OP_LNOT && sema_is_cond(e->u.unary.operand)) {
			e->ty = &sema_ty_i64; /* !err: true when nil */
			return 0;
		}
		if (!sema_is_int(e->u.unary.operand)) {
			diag_error(s->src, e->u.unary.operand->loc,
				   "operator '%s' needs an integer, got %s", ast_op_str(op),
				   sema_kind_word(e->u.unary.operand));
			return -EINVAL;
		}
		e->ty = op == OP_LNOT || op == OP_NEG ? &sema_ty_i64 : e->u.unary.operand->ty;
		return 0;
	}
	case AST_INCDEC: {
		struct ast_node *v = e->u.incdec.operand;
		if (v->kind != AST_VAR && v->kind != AST_MAP) {
			diag_error(s->src, v->loc, "++ and -- need a variable or a map");
			return -EINVAL;
		}
		if (sema_check_expr(s, v))
			return -EINVAL;
		if (!sema_is_int(v)) {
			diag_error(s->src, v->loc, "++ and -- need an integer variable");
			return -EINVAL;
		}
		e->ty = v->ty;
		return 0;
	}
	case AST_BINARY:
		return check_binary(s, e);
	case AST_TERNARY: {
		struct ast_node *c = e->u.ternary.cond, *t = e->u.ternary.then,
				*f = e->u.ternary.els;
		if (!t) { /* c ?: f */
			if (sema_check_expr(s, c) | sema_check_expr(s, f))
				return -EINVAL;
			if (!sema_is_int(c) || !sema_is_int(f)) {
				diag_error(s->src, e->loc, "?: without a middle operand takes integers");
				return -EINVAL;
			}
			e->ty = c->ty->is_signed && f->ty->is_signed ? &sema_ty_i64 : &sema_ty_u64;
			return 0;
		}
		if (sema_check_expr(s, c) | sema_check_expr(s, t) | sema_check_expr(s, f))
			return -EINVAL;
		if (!sema_is_cond(c)) {
			diag_error(s->src, c->loc, "condition must be an integer, got %s",
				   sema_kind_word(c));
			return -EINVAL;
		}
		if (t->ty->is_bool && f->ty->is_bool) {
			e->ty = t->ty;
			return 0;
		}
		if (sema_is_int(t) && sema_is_int(f)) {
			e->ty = t->ty->is_signed && f->ty->is_signed ? &sema_ty_i64 : &sema_ty_u64;
			return 0;
		}
		if (t->ty->kind == TY_VOID && f->ty->kind == TY_VOID) {
			e->ty = &sema_ty_void; /* c ? printf(..) : exit(): a statement */
			return 0;
		}
		if ((t->ty->kind == TY_STR || t->ty->kind == TY_BUF) && f->ty->kind == t->ty->kind) {
			/* the longer of the two; buf()'s length travels with its bytes */
			e->ty = sema_type_new(s, t->ty->kind, t->ty->size > f->ty->size ? t->ty->size
										: f->ty->size,
					 false);
			return 0;
		}
		if (t->ty->kind == TY_TUPLE && f->ty->kind == TY_TUPLE) {
			struct gt_type *m = sema_type_copy(s, t->ty); /* strings at the longer size */
			if (sema_tuple_merge(m, f->ty)) {
				e->ty = m;
				return 0;
			}
		}
		diag_error(s->src, e->loc, "both branches of ?: must have the same type (%s vs %s)",
			   sema_kind_word(t), sema_kind_word(f));
		return -EINVAL;
	}
	case AST_CAST:
		return sema_check_cast(s, e);
	case AST_FIELD: {
		struct ast_node *base = e->u.field.expr;
		const struct builtin *b = base->kind == AST_IDENT ? sema_resolve(s, base) : NULL;
		enum builtin_id id = b ? b->id : BI_NONE;
		unsigned ctx_args = (1u << PLAN_PROG_TRACEPOINT) | (1u << PLAN_PROG_FENTRY);
		if (id == BI_ARGS && (s->clause_kinds & ctx_args))
			return check_tp_arg(s, e);
		if (id == BI_ARGS || id == BI_RETS)
			return sema_go_field(s, e, id == BI_RETS);
		if (sema_check_expr(s, base))
			return -EINVAL;
		if (sema_is_go(base))
			return sema_go_field(s, e, false);
		return check_tuple_field(s, e);
	}
	case AST_INDEX: {
		/* a[i] of an array or a pointer in memory */
		struct ast_node *b = e->u.index.expr, *i = e->u.index.index;
		if (sema_check_expr(s, b))
			return -EINVAL;
		if (sema_is_go(b))
			return sema_go_index(s, e);
		if (sema_check_expr(s, i))
			return -EINVAL;
		int64_t k;
		if (b->ty->kind == TY_TUPLE && const_int(s, i, &k)) {
			/* $t[1] is $t.1 (current bpftrace): the index is known here */
			e->kind = AST_FIELD;
			e->u.field.expr = b;
			e->u.field.name = arena_printf(s->arena, "%lld", (long long)k);
			e->u.field.arrow = false;
			return check_tuple_field(s, e);
		}
		if (b->ty->kind == TY_STR && sema_is_int(i)) { /* a byte of the text, 0 past it */
			e->ty = sema_type_new(s, TY_INT, 1, true);
			return 0;
		}
		if (b->ty->kind == TY_INTARRAY && sema_is_int(i))
			return sema_intarray_index(s, e);
		if ((b->ty->kind != TY_ARRAY && b->ty->kind != TY_PTR) || !sema_is_int(i)) {
			diag_error(s->src, e->loc, "only an array or a pointer can be indexed, "
				   "by an integer");
			return -EINVAL;
		}
		sema_node_of(s, e)->user_mem = sema_node_of(s, b)->user_mem;
		sema_node_of(s, e)->own_mem = b->ty->own_stack;
		e->ty = element_value_type(s, b->ty->pointee);
		return 0;
	}
	case AST_CALL:
		return sema_check_builtin(s, e);
	case AST_TUPLE:
		return check_tuple(s, e);
	case AST_FETCH:
		return check_fetch(s, e);
	case AST_TYPE:
		diag_error(s->src, e->loc, "a type is not a value here (sizeof(%s) is)", e->u.type.name);
		return -EINVAL;
	default:
		diag_error(s->src, e->loc, "unexpected %s in an expression", ast_kind_name(e->kind));
		return -EINVAL;
	}
}
