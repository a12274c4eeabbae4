/* sema_go: Go values by name. args.NAME and rets.NAME (and retval) in go: probes, typed
 * from the binary's DWARF (binfo/gotypes) and placed by Go's register ABI; then the
 * fields, elements, pointees, len() and cap() of such values. Every value keeps its Go
 * type here and a sema_goref (where it lives) for codegen. */
#include "sema/sema_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "binfo/binfo.h"
#include "binfo/gotypes.h"

struct binfo_godwarf *sema_godwarf(struct sema *s, struct binfo *bi)
{
	for (int i = 0; i < s->godwarf.n; i++)
		if (s->godwarf.v[i].bi == bi)
			return s->godwarf.v[i].gd;
	struct sema_godwarf g = {.bi = bi};
	binfo_godwarf__open(bi, &g.gd);
	vec_push(&s->godwarf, g);
	return g.gd;
}

void sema_go_free(struct sema *s)
{
	for (int i = 0; i < s->godwarf.n; i++)
		binfo_godwarf__close(s->godwarf.v[i].gd);
	vec_free(&s->godwarf);
}

static const struct binfo_gotype *go_type(struct ast_node *e)
{
	const struct sema_node *sn = e->sema;
	return sn && sn->go ? sn->gotype : NULL;
}

/* The parameter NAME (a result when RESULT) of F, or NULL. Unnamed results are r0, r1 ..
 * as DWARF's ~r0, ~r1. */
static const struct binfo_goparam *find_param(const struct binfo_gofunc *f, const char *name,
					      bool result)
{
	for (int i = 0; i < f->nparams; i++) {
		const struct binfo_goparam *p = &f->params[i];
		const char *n = p->name[0] == '~' && p->name[1] == 'r' ? p->name + 1 : p->name;
		if (p->result == result && !strcmp(n, name))
			return p;
	}
	return NULL;
}

static void unknown_param(struct sema *s, struct ast_node *e, const struct binfo_gofunc *f,
			  const char *name, bool result)
{
	const char *names[64];
	int n = 0;
	char list[256] = "";
	size_t len = 0;
	for (int i = 0; i < f->nparams && n < 64; i++) {
		const struct binfo_goparam *p = &f->params[i];
		if (p->result != result)
			continue;
		names[n] = p->name[0] == '~' && p->name[1] == 'r' ? p->name + 1 : p->name;
		len += (size_t)snprintf(list + len, len < sizeof(list) ? sizeof(list) - len : 0,
					"%s%s", n ? ", " : "", names[n]);
		n++;
	}
	const char *near = sema_closest(s, name, names, n, NULL, 0);
	const char *what = result ? "result" : "parameter";
	if (near)
		diag_error(s->src, e->loc, "%s has no %s '%s' (did you mean '%s'?)", f->name, what,
			   name, near);
	else if (n)
		diag_error(s->src, e->loc, "%s has no %s '%s'; its %ss: %s", f->name, what, name,
			   what, list);
	else
		diag_error(s->src, e->loc, "%s has no %ss", f->name, what);
}

/* Whether two placements of a value are the same (wildcards: one program reads all). */
static bool same_place(const struct binfo_goparam *a, const struct binfo_goparam *b)
{
	if (strcmp(a->type->name, b->type->name) || a->on_stack != b->on_stack ||
	    a->npieces != b->npieces || (a->on_stack && a->stack_off != b->stack_off))
		return false;
	for (int i = 0; i < a->npieces; i++)
		if (memcmp(&a->pieces[i], &b->pieces[i], sizeof(a->pieces[i])))
			return false;
	return true;
}

/* Two placements of a value that differ only in types of one shape: slices, maps,
 * chans, pointers, funcs or interfaces (their header words are the same). */
static bool same_shape(const struct binfo_goparam *a, const struct binfo_goparam *b)
{
	enum binfo_gokind k = a->type->kind;
	if (k != b->type->kind || a->type->size != b->type->size || a->on_stack != b->on_stack ||
	    a->npieces != b->npieces || (a->on_stack && a->stack_off != b->stack_off))
		return false;
	if (k != GK_SLICE && k != GK_MAP && k != GK_CHAN && k != GK_PTR && k != GK_FUNC &&
	    k != GK_IFACE)
		return false;
	for (int i = 0; i < a->npieces; i++)
		if (memcmp(&a->pieces[i], &b->pieces[i], sizeof(a->pieces[i])))
			return false;
	return true;
}

/* Checks where WHAT (args or rets) may be used and finds NAME in every function the
 * clause probes: the parameter, or NULL after an error. *VARIES: set when the
 * functions hold it with types of one shape that differ (see sema_goref.varies). */
static const struct binfo_goparam *clause_param(struct sema *s, struct ast_node *e,
						const char *what, const char *name, bool result,
						const char **varies)
{
	unsigned go = (1u << GO_ENTRY) | (1u << GO_RETURN) | (1u << GO_OFFSET);
	if (!(s->clause_points & go) || (s->clause_kinds & ~(1u << PLAN_PROG_UPROBE))) {
		diag_error(s->src, e->loc, "%s.%s: Go %s are only available in go: probes", what,
			   name, result ? "results" : "parameters");
		return NULL;
	}
	if (!result && s->clause_points != (1u << GO_ENTRY)) {
		diag_error(s->src, e->loc, "args.%s is only available in go:FUNC:entry probes "
			   "(at :return the registers hold the results: rets.NAME)", name);
		return NULL;
	}
	if (result && s->clause_points != (1u << GO_RETURN)) {
		diag_error(s->src, e->loc, "rets.%s is only available in go:FUNC:return probes%s",
			   name, s->clause_points == (1u << GO_ENTRY) ? " (at :entry: args.NAME)" : "");
		return NULL;
	}
	if (s->clause_stack_abi) {
		diag_error(s->src, e->loc, "%s.%s: this program is built with %s, which passes "
			   "arguments on the stack (the register ABI came with Go 1.17); read "
			   "them with fetch rules: arg(+8(%%sp)):s64", what, name, s->clause_stack_abi);
		return NULL;
	}
	for (int i = s->clause_site_begin; i < s->sites.n; i++) {
		const struct sema_site_info *in = &s->site_info.v[i];
		if (in->inlined_into) { /* its values live wherever the caller's code has them */
			diag_error(s->src, e->loc, "%s.%s: %s is inlined into %s: an inlined copy "
				   "has no %s of its own", what, name, in->f->name,
				   in->inlined_into->name, result ? "results" : "parameters");
			return NULL;
		}
	}
	const struct binfo_goparam *found = NULL;
	const char *found_in = NULL;
	for (int i = s->clause_site_begin; i < s->sites.n; i++) {
		const struct sema_site_info *in = &s->site_info.v[i];
		if (!in->bi || !in->f || (i > s->clause_site_begin && in->f == in[-1].f))
			continue;
		struct binfo_godwarf *gd = sema_godwarf(s, in->bi);
		const struct binfo_gofunc *f;
		/* without DWARF, the data of the binary's release has the runtime's and the
		 * standard library's functions; anything else still needs DWARF */
		if (!gd || (binfo_godwarf_data_release(gd) &&
			    binfo_godwarf_func(gd, in->f->name, &f))) {
			diag_error(s->src, e->loc, "%s.%s needs DWARF, and %s has none (stripped, or "
				   "built with -ldflags=-w): read the value with a fetch rule, "
				   "such as arg0 or arg(+8(%%ax)):s64", what, name, binfo_path(in->bi));
			return NULL;
		}
		if (binfo_godwarf_func(gd, in->f->name, &f)) {
			diag_error(s->src, e->loc, "%s.%s: DWARF does not describe %s (assembly, or "
				   "a wrapper the compiler made): read the value with a fetch rule",
				   what, name, in->f->name);
			return NULL;
		}
		const struct binfo_goparam *p = find_param(f, name, result);
		if (!p) {
			unknown_param(s, e, f, name, result);
			return NULL;
		}
		if (found && !same_place(found, p) && same_shape(found, p)) {
			if (!*varies)
				*varies = arena_printf(s->arena, "%s.%s differs between %s (%s) and %s "
						       "(%s)", what, name, found_in, found->type->name,
						       in->f->name, p->type->name);
		} else if (found && !same_place(found, p)) {
			diag_error(s->src, e->loc, "%s.%s differs between %s and %s (its type or "
				   "its place): one clause reads it one way; split the clause",
				   what, name, found_in, in->f->name);
			return NULL;
		}
		found = p;
		found_in = in->f->name;
	}
	if (!found)
		diag_error(s->src, e->loc, "%s.%s: the clause probes no Go function", what, name);
	return found;
}

struct reads_ctx {
	struct sema *s;
	bool found;
};

static void reads_child(struct ast_node *c, void *ctx)
{
	struct reads_ctx *r = ctx;
	r->found = r->found || sema_reads_go_names(r->s, c);
}

bool sema_reads_go_names(struct sema *s, struct ast_node *n)
{
	if (!n)
		return false;
	if (n->kind == AST_IDENT) {
		const struct builtin *b = sema_resolve(s, n);
		return b && (b->id == BI_ARGS || b->id == BI_RETS || b->id == BI_RETVAL);
	}
	struct reads_ctx r = {s, false};
	ast_for_each_child(n, reads_child, &r);
	return r.found;
}

/* The scalar view and kind of a Go value of type T at E (an error for floats). */
static int set_type(struct sema *s, struct ast_node *e, const struct binfo_gotype *t)
{
	struct sema_node *sn = sema_node_of(s, e);
	struct sema_goref *r = sn->go;
	sn->gotype = t;
	r->size = (int)t->size;
	switch (t->kind) {
	case GK_BOOL:
	case GK_INT:
	case GK_UINT:
		r->kind = GV_SCALAR;
		r->is_signed = t->kind == GK_INT;
		e->ty = sema_type_new(s, TY_INT, t->size >= 1 && t->size <= 8 ? (int)t->size : 8,
				      r->is_signed);
		e->ty->go_int = t->kind != GK_BOOL;
		return 0;
	case GK_PTR:
	case GK_FUNC:
	case GK_MAP:
	case GK_CHAN:
		r->kind = t->kind == GK_MAP ? GV_MAP : t->kind == GK_CHAN ? GV_CHAN : GV_SCALAR;
		r->size = 8;
		e->ty = sema_type_new(s, TY_PTR, 8, false);
		e->ty->pointee = sema_type_new(s, TY_INT, 1, false);
		return 0;
	case GK_STRING:
		r->kind = GV_STRING;
		e->ty = sema_type_new(s, TY_STR, s->opts->str_len, false);
		return 0;
	case GK_FLOAT:
	case GK_COMPLEX:
		r->kind = GV_FLOAT;
		break;
	case GK_SLICE:
		r->kind = GV_SLICE;
		break;
	case GK_ARRAY:
		r->kind = GV_ARRAY;
		break;
	case GK_STRUCT:
		r->kind = GV_STRUCT;
		break;
	case GK_IFACE:
		r->kind = GV_IFACE;
		r->empty_iface = t->empty_iface;
		break;
	}
	e->ty = sema_type_new(s, TY_GO, 0, false);
	e->ty->name = arena_strdup(s->arena, t->name); /* DWARF's copy goes with sema */
	return 0;
}

/* A []byte where a string is wanted (printf's %s, str()): its text, as Go's fmt prints
 * it with %s. A slice starts as a string does, address then length, in memory and in
 * registers. Returns whether E was one. */
bool sema_go_bytes_as_string(struct sema *s, struct ast_node *e)
{
	struct sema_node *sn = sema_node_of(s, e);
	const struct binfo_gotype *t = sn->gotype;
	if (!sn->go || sn->go->kind != GV_SLICE || !t || t->kind != GK_SLICE || !t->elem ||
	    t->elem->kind != GK_UINT || t->elem->size != 1)
		return false;
	sn->go->kind = GV_STRING;
	sn->go->size = 16;
	e->ty = sema_type_new(s, TY_STR, s->opts->str_len, false);
	return true;
}

static struct sema_goref *new_ref(struct sema *s, struct ast_node *e)
{
	struct sema_node *sn = sema_node_of(s, e);
	sn->go = arena_alloc(s->arena, sizeof(*sn->go));
	return sn->go;
}

/* A whole parameter or result: its registers or its stack slot. */
static int param_ref(struct sema *s, struct ast_node *e, const struct binfo_goparam *p)
{
	struct sema_goref *r = new_ref(s, e);
	if (p->on_stack) {
		r->where = GW_STACK;
		r->off = p->stack_off;
	} else {
		struct sema_goword *w = arena_alloc(s->arena, sizeof(*w) * (size_t)(p->npieces + 1));
		for (int i = 0; i < p->npieces; i++) {
			const struct binfo_gopiece *pc = &p->pieces[i];
			w[i] = (struct sema_goword){(int)pc->offset, (int)pc->size,
						    pc->ireg >= 0 ? arch_reg_offset(arch_go_int_regs[pc->ireg]) : -1};
		}
		r->where = GW_REGS;
		r->regs = w;
		r->nregs = p->npieces;
	}
	return set_type(s, e, p->type);
}

/* A value that is a part of BASE's (a field, or element 0 of a one-element array in
 * registers): the same place, OFF bytes on. */
static int part_ref(struct sema *s, struct ast_node *e, struct ast_node *base, int64_t off,
		    const struct binfo_gotype *t)
{
	struct sema_goref *r = new_ref(s, e);
	*r = *((struct sema_node *)base->sema)->go;
	r->off += off;
	return set_type(s, e, t);
}

/* A value in memory that BASE points to, OFF bytes on. */
static int pointee_ref(struct sema *s, struct ast_node *e, struct ast_node *base, int64_t off,
		       const struct binfo_gotype *t)
{
	struct sema_goref *r = new_ref(s, e);
	r->where = GW_PTR;
	r->base = base;
	r->off = off;
	return set_type(s, e, t);
}

int sema_go_retval(struct sema *s, struct ast_node *e)
{
	if (s->clause_points != (1u << GO_RETURN))
		return 1; /* not ours: sema_check_go_ident reports it */
	const struct binfo_goparam *p = NULL;
	/* the first result of every probed function, when DWARF has them all */
	for (int i = s->clause_site_begin; i < s->sites.n && !s->clause_stack_abi; i++) {
		const struct sema_site_info *in = &s->site_info.v[i];
		struct binfo_godwarf *gd = in->bi && in->f ? sema_godwarf(s, in->bi) : NULL;
		const struct binfo_gofunc *f;
		const struct binfo_goparam *q = NULL;
		if (gd && !binfo_godwarf_func(gd, in->f->name, &f))
			for (int j = 0; j < f->nparams && !q; j++)
				q = f->params[j].result ? &f->params[j] : NULL;
		if (!q || (p && !same_place(p, q)))
			return 1; /* as without DWARF: the first integer result register */
		p = q;
	}
	if (!p)
		return 1;
	if (p->type->kind == GK_FLOAT || p->type->kind == GK_COMPLEX) {
		diag_error(s->src, e->loc, "retval is a %s, which Go returns in X0, and uprobes "
			   "cannot read X registers", p->type->name);
		return -EINVAL;
	}
	return param_ref(s, e, p);
}

static int float_error(struct sema *s, struct ast_node *e, const char *what)
{
	const struct sema_goref *r = ((struct sema_node *)e->sema)->go;
	if (r->where == GW_REGS)
		diag_error(s->src, e->loc, "%s is a %s: Go passes floats in X registers, which "
			   "uprobes cannot read", what, go_type(e)->name);
	else
		diag_error(s->src, e->loc, "%s is a %s, and gotrace expressions have no floats "
			   "(print() the value that holds it)", what, go_type(e)->name);
	return -EINVAL;
}

/* A value readable as a scalar expression (ints, pointers, strings) or a whole one
 * print() takes: floats in registers are not. */
static int check_readable(struct sema *s, struct ast_node *e, const char *what)
{
	const struct sema_goref *r = ((struct sema_node *)e->sema)->go;
	/* a float in memory is its bits, which print() and %v show; X registers are not
	 * readable */
	if (r->kind == GV_FLOAT && (r->where == GW_REGS || go_type(e)->kind == GK_COMPLEX))
		return float_error(s, e, what);
	return 0;
}

static char *expr_name(struct sema *s, struct ast_node *e)
{
	if (e->kind == AST_FIELD)
		return arena_printf(s->arena, "%s.%s", expr_name(s, e->u.field.expr), e->u.field.name);
	if (e->kind == AST_IDENT)
		return arena_strdup(s->arena, e->u.name);
	if (e->kind == AST_INDEX)
		return arena_printf(s->arena, "%s[]", expr_name(s, e->u.index.expr));
	return arena_strdup(s->arena, "the value");
}

/* How many fields named NAME the struct ST promotes from DEPTH levels of embedding down
 * (Go's rule: the shallowest wins, two at one depth are ambiguous). */
static int promoted_at(const struct binfo_gotype *st, const char *name, int depth)
{
	int n = 0;
	for (int i = 0; st && i < st->nfields; i++) {
		const struct binfo_gofield *f = &st->fields[i];
		if (depth == 0) {
			n += !strcmp(f->name, name);
			continue;
		}
		const struct binfo_gotype *t = f->type;
		if (t && t->kind == GK_PTR)
			t = t->elem;
		if (f->embedded && t && t->kind == GK_STRUCT)
			n += promoted_at(t, name, depth - 1);
	}
	return n;
}

/* The embedded field of ST through which NAME is promoted (its shallowest, unambiguous
 * occurrence, at most 4 levels down), or NULL. */
static const char *promoted_via(const struct binfo_gotype *st, const char *name, int from)
{
	for (int depth = from; depth <= 4; depth++) {
		int n = promoted_at(st, name, depth);
		if (n > 1)
			return NULL; /* ambiguous, as Go's compiler says */
		if (n == 0)
			continue;
		for (int i = 0; i < st->nfields; i++) {
			const struct binfo_gotype *t = st->fields[i].type;
			if (t && t->kind == GK_PTR)
				t = t->elem;
			if (st->fields[i].embedded && t && t->kind == GK_STRUCT &&
			    promoted_at(t, name, depth - 1) == 1)
				return st->fields[i].name;
		}
	}
	return NULL;
}

int sema_go_field(struct sema *s, struct ast_node *e, bool result)
{
	const char *name = e->u.field.name;
	struct ast_node *base = e->u.field.expr;
	const struct builtin *root = base->kind == AST_IDENT ? sema_resolve(s, base) : NULL;
	if (root && (root->id == BI_ARGS || root->id == BI_RETS)) { /* args.NAME, rets.NAME */
		const char *varies = NULL;
		const struct binfo_goparam *p =
		    clause_param(s, e, result ? "rets" : "args", name, result, &varies);
		if (!p || param_ref(s, e, p))
			return -EINVAL;
		((struct sema_node *)e->sema)->go->varies = varies;
		return check_readable(s, e, expr_name(s, e));
	}
	if (sema_go_uniform(s, base))
		return -EINVAL;
	const struct binfo_gotype *t = go_type(base);
	int64_t off = 0;
	bool through_ptr = t->kind == GK_PTR && t->elem && t->elem->kind == GK_STRUCT;
	const struct binfo_gotype *st = through_ptr ? t->elem : t;
	if (st->kind != GK_STRUCT) {
		diag_error(s->src, e->loc, "%s (%s) is not a struct: it has no field '%s'",
			   expr_name(s, base), t->name, name);
		return -EINVAL;
	}
	const struct binfo_gofield *f = NULL;
	const char *names[64];
	int n = 0;
	for (int i = 0; i < st->nfields; i++) {
		if (!strcmp(st->fields[i].name, name))
			f = &st->fields[i];
		if (n < 64)
			names[n++] = st->fields[i].name;
	}
	const char *via = NULL;
	if (!f && (via = promoted_via(st, name, 1))) {
		/* a promoted field, as Go has it: args.c.pa is args.c.parseState.pa */
		struct ast_node *mid = ast_new(s->arena, AST_FIELD, e->loc);
		mid->u.field.expr = base;
		mid->u.field.name = via;
		e->u.field.expr = mid;
		if (sema_check_expr(s, mid))
			return -EINVAL;
		return sema_go_field(s, e, false);
	}
	if (!f) {
		const char *near = sema_closest(s, name, names, n, NULL, 0);
		diag_error(s->src, e->loc, "%s has no field '%s'%s%s%s", st->name, name,
			   near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
		return -EINVAL;
	}
	off = (int64_t)f->offset;
	int err = through_ptr ? pointee_ref(s, e, base, off, f->type)
			      : part_ref(s, e, base, off, f->type);
	return err ? err : check_readable(s, e, expr_name(s, e));
}

/* m[KEY]: a map of integer keys by an integer, of string keys by a constant string; the
 * value is found by a bounded walk of the map (as print()'s), not by Go's hash, whose
 * seed is the process's own. */
static int map_index(struct sema *s, struct ast_node *e, const struct binfo_gotype *t)
{
	struct ast_node *base = e->u.index.expr, *idx = e->u.index.index;
	struct gt_gomap w;
	const struct binfo_gotype *kt, *vt;
	if (!t->key || !t->elem || !sema_go_map_walk(t, &w, &kt, &vt)) {
		diag_error(s->src, e->loc, "%s (%s) cannot be indexed: its layout is not one "
			   "gotrace knows", expr_name(s, base), t->name);
		return -EINVAL;
	}
	int kind;
	if ((t->key->kind == GK_INT || t->key->kind == GK_UINT) && t->key->size <= 8 &&
	    kt->size == t->key->size && sema_is_int(idx)) {
		kind = GT_GOMAP_FIND_INT;
	} else if (t->key->kind == GK_STRING && kt->kind == GK_STRING && idx->kind == AST_STR) {
		if (idx->u.str.len > GT_GOMAP_KEYMAX) {
			diag_error(s->src, idx->loc, "a map's key is at most %d bytes here",
				   GT_GOMAP_KEYMAX);
			return -EINVAL;
		}
		kind = GT_GOMAP_FIND_STR;
	} else {
		diag_error(s->src, idx->loc, "%s (%s) is indexed by %s", expr_name(s, base),
			   t->name,
			   t->key->kind == GK_STRING ? "a constant string"
			   : t->key->kind == GK_INT || t->key->kind == GK_UINT
			       ? "an integer"
			       : "an integer or a string key only, not this map's key type");
		return -EINVAL;
	}
	struct gt_gomap *wp = arena_alloc(s->arena, sizeof(*wp));
	*wp = w;
	wp->max = 1;
	struct sema_goref *r = new_ref(s, e);
	r->where = GW_MAPVAL;
	r->base = base;
	r->index = idx;
	r->map = wp;
	r->map_key = kind;
	r->key_size = (int)t->key->size;
	/* Go keeps a value over 128 bytes out of the slot, behind a pointer */
	r->val_indirect = vt->size != t->elem->size;
	if (set_type(s, e, t->elem))
		return -EINVAL;
	return check_readable(s, e, expr_name(s, e));
}

int sema_go_index(struct sema *s, struct ast_node *e)
{
	struct ast_node *base = e->u.index.expr, *idx = e->u.index.index;
	const struct binfo_gotype *t = go_type(base);
	const struct sema_goref *br = ((struct sema_node *)base->sema)->go;
	if (sema_check_expr(s, idx) || sema_go_uniform(s, base))
		return -EINVAL;
	if (t->kind == GK_MAP)
		return map_index(s, e, t);
	if (!sema_is_int(idx) || (t->kind != GK_SLICE && t->kind != GK_ARRAY) || !t->elem) {
		diag_error(s->src, e->loc, "%s (%s) cannot be indexed: only a slice or an array "
			   "can, by an integer, and a map by a key", expr_name(s, base), t->name);
		return -EINVAL;
	}
	if (t->kind == GK_ARRAY && br->where == GW_REGS) {
		/* a one-element array is the only one Go passes in registers */
		if (idx->kind != AST_INT || idx->u.int_.value >= t->count) {
			diag_error(s->src, idx->loc, "index out of range for %s (an array passed "
				   "in registers is indexed by a constant)", t->name);
			return -EINVAL;
		}
		return part_ref(s, e, base, (int64_t)(idx->u.int_.value * t->elem->size), t->elem);
	}
	struct sema_goref *r = new_ref(s, e);
	r->where = GW_ELEM;
	r->base = base;
	r->index = idx;
	r->stride = (int64_t)t->elem->size;
	r->count = t->kind == GK_ARRAY ? (int64_t)t->count : 0;
	if (set_type(s, e, t->elem))
		return -EINVAL;
	return check_readable(s, e, expr_name(s, e));
}

int sema_go_deref(struct sema *s, struct ast_node *e)
{
	struct ast_node *p = e->u.unary.operand;
	if (sema_go_uniform(s, p))
		return -EINVAL;
	const struct binfo_gotype *t = go_type(p);
	if (t->kind != GK_PTR || !t->elem) {
		diag_error(s->src, p->loc, "only a pointer can be dereferenced, not %s (%s)",
			   expr_name(s, p), t->name);
		return -EINVAL;
	}
	if (pointee_ref(s, e, p, 0, t->elem))
		return -EINVAL;
	return check_readable(s, e, "*p");
}

bool sema_is_go(const struct ast_node *e)
{
	return go_type((struct ast_node *)e) != NULL;
}

int sema_go_uniform(struct sema *s, struct ast_node *e)
{
	const struct sema_node *sn = e->sema;
	if (!sn || !sn->go || !sn->go->varies)
		return 0;
	diag_error(s->src, e->loc, "%s: len(), cap() and comparisons with nil read it in every "
		   "instance; for the rest, split the clause", sn->go->varies);
	return -EINVAL;
}

bool sema_go_nilable_aggregate(const struct ast_node *e)
{
	const struct binfo_gotype *t = go_type((struct ast_node *)e);
	return t && (t->kind == GK_IFACE || t->kind == GK_SLICE);
}

const char *sema_go_describe(struct sema *s, struct ast_node *e)
{
	const struct binfo_gotype *t = go_type(e);
	return t ? arena_printf(s->arena, "%s (%s)", expr_name(s, e), t->name) : NULL;
}

/* len(x) / cap(x) of a Go string, slice, array, map or chan. */
int sema_go_len(struct sema *s, struct ast_node *e, bool cap)
{
	struct ast_node *a = e->u.call.args.v[0];
	const struct binfo_gotype *t = go_type(a);
	enum binfo_gokind k = t->kind;
	bool ok = cap ? k == GK_SLICE || k == GK_ARRAY || k == GK_CHAN
		      : k == GK_STRING || k == GK_SLICE || k == GK_ARRAY || k == GK_MAP ||
			    k == GK_CHAN;
	if (!ok) {
		diag_error(s->src, a->loc, "%s() of %s (%s): it takes a %s", cap ? "cap" : "len",
			   expr_name(s, a), t->name,
			   cap ? "slice, an array or a chan" : "string, a slice, an array, a map or a chan");
		return -EINVAL;
	}
	struct sema_node *sn = sema_node_of(s, e);
	sn->const_val = k == GK_ARRAY ? (int64_t)t->count : -1;
	e->ty = &sema_ty_i64;
	return 0;
}
