/* sema_gocap: how print() captures a Go value for Go's %+v shape: a PLAN_ARG_GO tree,
 * every part at an offset from its parent's start, bounded in size (strings GT_STRLEN,
 * slices and arrays a few elements, pointers followed at the top only, as %+v does). */
#include "sema/sema_int.h"

#include <stdlib.h>
#include <string.h>

#include "binfo/binfo.h"
#include "binfo/gotypes.h"

#define GOCAP_MAX_ELEMS 8  /* slice and array elements printed */
#define GOCAP_MAX_DEPTH 32 /* levels of a value printed (the type graph may be cyclic) */
#define GOCAP_MAX_NODES 4096 /* fields and elements laid out for one value */
#define GOCAP_MAX_BYTES 4096

struct capctx {
	struct sema *s;
	int total; /* bytes laid out so far */
	int nodes; /* layout calls so far: a cyclic type graph must not multiply them */
	bool pie;  /* the clause's target is a PIE */
};

static struct plan_arg *layout(struct capctx *c, const struct binfo_gotype *t, int64_t go_off,
			       int depth, bool regs);

static int pad8(int n)
{
	return (n + 7) & ~7;
}

/* Room for N more bytes, else the part is left out (printed as ?). */
static bool room(struct capctx *c, int n)
{
	if (c->total + n > GOCAP_MAX_BYTES)
		return false;
	c->total += n;
	return true;
}

static void leaf(struct capctx *c, struct plan_arg *a, enum plan_go_kind k, int size)
{
	a->go = room(c, size) ? k : PG_NOREAD;
	a->size = a->go == PG_NOREAD ? 0 : size;
}

/* Elements of a slice or an array: up to MAX copies of the element's layout. */
static void elements(struct capctx *c, struct plan_arg *a, const struct binfo_gotype *el,
		     int max, int header, int depth)
{
	a->fields = layout(c, el, 0, depth + 1, false);
	a->nfields = 1;
	int each = a->fields->size;
	while (max > 0 && !room(c, each * max))
		max--;
	a->go_max = each ? max : 0;
	a->go_stride = (int)el->size;
	a->size = header + each * a->go_max;
}

static struct plan_arg *layout(struct capctx *c, const struct binfo_gotype *t, int64_t go_off,
			       int depth, bool regs)
{
	struct sema *s = c->s;
	struct plan_arg *a = arena_alloc(s->arena, sizeof(*a));
	a->kind = PLAN_ARG_GO;
	a->go_off = go_off;
	a->go_size = (int)t->size;
	/* DWARF's type graph may be cyclic (a hostile binary's struct that holds itself):
	 * past GOCAP_MAX_DEPTH levels, or GOCAP_MAX_NODES parts, nothing more is read */
	if (depth > GOCAP_MAX_DEPTH || ++c->nodes > GOCAP_MAX_NODES) {
		leaf(c, a, PG_NOREAD, 0);
		return a;
	}
	switch (t->kind) {
	case GK_BOOL:
	case GK_INT:
	case GK_UINT:
		a->is_signed = t->kind == GK_INT;
		leaf(c, a, t->kind == GK_BOOL ? PG_BOOL : t->kind == GK_INT ? PG_INT : PG_UINT, 8);
		break;
	case GK_FLOAT: /* X registers: unreadable; in memory: its bits */
		leaf(c, a, regs ? PG_NOREAD : PG_FLOAT, regs ? 0 : 8);
		break;
	case GK_COMPLEX:
		leaf(c, a, PG_NOREAD, 0);
		break;
	case GK_MAP:
	case GK_CHAN:
	case GK_FUNC:
		leaf(c, a, PG_ADDR, 8);
		break;
	case GK_PTR:
		leaf(c, a, PG_PTR, 8);
		/* %+v shows &{...} for a pointer to a struct or an array at the top only */
		if (a->go == PG_PTR && depth == 0 && t->elem &&
		    (t->elem->kind == GK_STRUCT || t->elem->kind == GK_ARRAY)) {
			a->fields = layout(c, t->elem, 0, depth + 1, false);
			a->nfields = 1;
			a->fields->offset = 8;
			a->size = 8 + a->fields->size;
		}
		break;
	case GK_STRING:
		leaf(c, a, PG_STRING, 8 + pad8(s->opts->str_len));
		break;
	case GK_IFACE:
		leaf(c, a, PG_IFACE, 32 + pad8(s->opts->str_len));
		a->go_empty_iface = t->empty_iface;
		a->go_rebase = c->pie;
		sema_go_want_types(s);
		break;
	case GK_STRUCT: {
		a->go = PG_STRUCT;
		a->nfields = t->nfields;
		a->fields = arena_alloc(s->arena, sizeof(*a->fields) * (size_t)(t->nfields + 1));
		int off = 0;
		for (int i = 0; i < t->nfields; i++) {
			struct plan_arg *f = layout(c, t->fields[i].type, (int64_t)t->fields[i].offset,
						    depth + 1, regs); /* as %+v: &{} at the top only */
			f->offset = off;
			f->name = arena_strdup(s->arena, t->fields[i].name);
			a->fields[i] = *f;
			off += f->size;
		}
		a->size = off;
		break;
	}
	case GK_ARRAY:
		a->go = PG_ARRAY;
		if (!t->elem) {
			leaf(c, a, PG_NOREAD, 0);
			break;
		}
		elements(c, a, t->elem, t->count < GOCAP_MAX_ELEMS ? (int)t->count : GOCAP_MAX_ELEMS,
			 0, depth);
		break;
	case GK_SLICE:
		a->go = PG_SLICE;
		if (!t->elem || !room(c, 16)) {
			leaf(c, a, PG_NOREAD, 0);
			break;
		}
		elements(c, a, t->elem, depth < 4 ? GOCAP_MAX_ELEMS : 0, 16, depth);
		break;
	}
	return a;
}

struct gt_type *sema_go_print_type(struct sema *s, struct ast_node *e)
{
	const struct sema_node *sn = e->sema;
	const struct sema_site_info *in = &s->site_info.v[s->clause_site_begin];
	struct capctx c = {.s = s, .pie = s->clause_site_begin < s->sites.n && in->bi &&
					  binfo_is_pie(in->bi)};
	struct gt_type *t = sema_type_new(s, TY_GO, 0, false);
	t->gocap = layout(&c, sn->gotype, 0, 0, sn->go->where == GW_REGS);
	t->size = t->gocap->size ? t->gocap->size : 8;
	t->name = e->ty->name; /* sema's copy */
	return t;
}

struct gt_type *sema_go_key_type(struct sema *s, struct ast_node *e)
{
	const struct sema_node *sn = e->sema;
	if (!sn || !sn->go || !sn->gotype || sn->gotype->kind != GK_IFACE)
		return NULL;
	struct gt_type *t = sema_go_print_type(s, e);
	struct plan_arg *a = arena_alloc(s->arena, sizeof(*a));
	*a = *t->gocap;
	a->go_key = true;
	t->gocap = a;
	return t;
}

void sema_go_want_types(struct sema *s)
{
	s->want_gotypes = true;
}

static int by_addr(const void *a, const void *b)
{
	const struct plan_gotype *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* plan.gotypes: the runtime types of every binary a printed interface may hold values
 * of (the clause's binaries), read once. */
int sema_go_finish(struct sema *s, struct gt_plan *plan)
{
	static const enum plan_goshow show[] = {
		[GS_OTHER] = PGS_OTHER, [GS_PTR] = PGS_PTR,   [GS_PSTR] = PGS_PSTR, [GS_INT] = PGS_INT,
		[GS_UINT] = PGS_UINT,   [GS_BOOL] = PGS_BOOL, [GS_STR] = PGS_STR,
	};
	if (!s->want_gotypes)
		return 0;
	VEC(struct plan_gotype) v = {0};
	for (int i = 0; i < s->ntargets; i++) {
		struct binfo_gortype *rt;
		int n = binfo_gortypes(s->targets[i], s->arena, &rt);
		for (int j = 0; j < n; j++) {
			struct plan_gotype g = {rt[j].addr, rt[j].name, show[rt[j].show], rt[j].size};
			vec_push(&v, g);
		}
	}
	if (v.n)
		qsort(v.v, (size_t)v.n, sizeof(*v.v), by_addr);
	plan->ngotypes = v.n;
	plan->gotypes = arena_alloc(s->arena, sizeof(*plan->gotypes) * (size_t)(v.n + 1));
	if (v.n)
		memcpy(plan->gotypes, v.v, sizeof(*plan->gotypes) * (size_t)v.n);
	vec_free(&v);
	return 0;
}
