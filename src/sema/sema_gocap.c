/* sema_gocap: how print() captures a Go value for Go's %+v shape: a PLAN_ARG_GO tree,
 * every part at an offset from its parent's start, bounded in size (strings GT_STRLEN,
 * slices and arrays a few elements, maps GT_GOMAP_MAX entries, pointers followed at the
 * top only, as %+v does). */
#include "sema/sema_int.h"

#include <stdlib.h>
#include <string.h>

#include "binfo/binfo.h"
#include "binfo/gotypes.h"

#define GOCAP_MAX_ELEMS 8  /* slice and array elements printed */
#define GOCAP_MAX_DEPTH 32 /* levels of a value printed (the type graph may be cyclic) */
#define GOCAP_MAX_NODES 4096 /* fields and elements laid out for one value */
#define GOCAP_MAX_BYTES 16384 /* a record; cobra.Command takes about 5 KiB */
#define GOCAP_MAX_MAPS 4 /* maps walked in one value (each walk is BPF code of its own) */
#define GOCAP_MAX_KV 128 /* Go keeps bigger keys and values out of the bucket (indirect) */

struct capctx {
	struct sema *s;
	int total; /* bytes laid out so far */
	int nodes; /* layout calls so far: a cyclic type graph must not multiply them */
	bool pie;  /* the clause's target is a PIE */
	int maps;  /* maps walked so far */
	int in_elems; /* > 0: laying out an element of a slice, array or map, copied many
			 times: no map walk in there (printed as ?) */
	int map_share; /* > 0: the most bytes the next map's entries may take (a struct's
			  maps share what its other fields leave) */
};

static struct plan_arg *layout(struct capctx *c, const struct binfo_gotype *t, int64_t go_off,
			       int depth, bool regs, bool ro);

/* fmt calls String() on a value reached through exported fields only (reflect's
 * CanInterface): an unexported field's Duration prints as its integer. */
static void time_show(struct capctx *c, struct plan_arg *a, const struct binfo_gotype *t,
		      int depth);

static bool exported(const char *name)
{
	return name && name[0] >= 'A' && name[0] <= 'Z';
}

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
		     int max, int header, int depth, bool ro)
{
	c->in_elems++;
	a->fields = layout(c, el, 0, depth + 1, false, ro);
	c->in_elems--;
	a->nfields = 1;
	int each = a->fields->size;
	while (max > 0 && !room(c, each * max))
		max--;
	a->go_max = each ? max : 0;
	a->go_stride = (int)el->size;
	a->size = header + each * a->go_max;
}

static const struct binfo_gofield *field_of(const struct binfo_gotype *t, const char *name)
{
	for (int i = 0; t && t->kind == GK_STRUCT && i < t->nfields; i++)
		if (!strcmp(t->fields[i].name, name))
			return &t->fields[i];
	return NULL;
}

/* The struct a pointer-typed field F points to, or NULL. */
static const struct binfo_gotype *pointee(const struct binfo_gofield *f)
{
	const struct binfo_gotype *t = f && f->type->kind == GK_PTR ? f->type->elem : NULL;
	return t && t->kind == GK_STRUCT ? t : NULL;
}

/* The walk of map type T from the linker's types behind its header (docs: struct
 * gt_gomap), its key and value types in *KT and *VT: false when they are not as
 * expected (a release whose layout is unknown). */
bool sema_go_map_walk(const struct binfo_gotype *t, struct gt_gomap *w,
		      const struct binfo_gotype **kt, const struct binfo_gotype **vt)
{
	const struct binfo_gotype *h = t->hdr && t->hdr->kind == GK_PTR ? t->hdr->elem : NULL;
	const struct binfo_gofield *f;
	*w = (struct gt_gomap){0};
	if (!h || h->kind != GK_STRUCT)
		return false;
	if ((f = field_of(h, "buckets"))) { /* hmap */
		const struct binfo_gotype *b = pointee(f);
		const struct binfo_gofield *cnt = field_of(h, "count"), *B = field_of(h, "B"),
					   *fl = field_of(h, "flags"), *old = field_of(h, "oldbuckets"),
					   *th = field_of(b, "tophash"), *ks = field_of(b, "keys"),
					   *vs = field_of(b, "values"), *ov = field_of(b, "overflow");
		if (!b || !cnt || !B || !fl || !old || !th || !ks || !vs || !ov ||
		    ks->type->kind != GK_ARRAY || vs->type->kind != GK_ARRAY || !ks->type->elem ||
		    !vs->type->elem)
			return false;
		*w = (struct gt_gomap){
			.count_off = (__u32)cnt->offset, .hdr_b = (__u32)B->offset,
			.hdr_flags = (__u32)fl->offset, .hdr_old = (__u32)old->offset,
			.hdr_dir = (__u32)f->offset, .grp_size = (__u32)b->size,
			.grp_ctrl = (__u32)th->offset, .grp_next = (__u32)ov->offset,
			.key_off = (__u32)ks->offset, .key_stride = (__u32)ks->type->elem->size,
			.val_off = (__u32)vs->offset, .val_stride = (__u32)vs->type->elem->size,
		};
		*kt = ks->type->elem;
		*vt = vs->type->elem;
		return true;
	}
	if ((f = field_of(h, "dirPtr"))) { /* swiss: dirPtr is **table<K,V> */
		const struct binfo_gotype *tp = f->type->kind == GK_PTR ? f->type->elem : NULL;
		const struct binfo_gotype *tab = tp && tp->kind == GK_PTR ? tp->elem : NULL;
		const struct binfo_gofield *used = field_of(h, "used"), *dl = field_of(h, "dirLen"),
					   *gr = field_of(tab, "groups");
		const struct binfo_gotype *ref = gr ? gr->type : NULL;
		const struct binfo_gofield *data = field_of(ref, "data"), *mask = field_of(ref, "lengthMask");
		const struct binfo_gotype *g = pointee(data);
		const struct binfo_gofield *ctrl = field_of(g, "ctrl"), *slots = field_of(g, "slots");
		const struct binfo_gotype *slot = slots && slots->type->kind == GK_ARRAY ? slots->type->elem : NULL;
		const struct binfo_gofield *k = field_of(slot, "key"), *v = field_of(slot, "elem");
		if (!used || !dl || !mask || !ctrl || !k || !v)
			return false;
		*w = (struct gt_gomap){
			.swiss = 1, .count_off = (__u32)used->offset, .hdr_dir = (__u32)f->offset,
			.hdr_dirlen = (__u32)dl->offset,
			.tab_data = (__u32)(gr->offset + data->offset),
			.tab_mask = (__u32)(gr->offset + mask->offset),
			.grp_size = (__u32)g->size, .grp_ctrl = (__u32)ctrl->offset,
			.key_off = (__u32)(slots->offset + k->offset), .key_stride = (__u32)slot->size,
			.val_off = (__u32)(slots->offset + v->offset), .val_stride = (__u32)slot->size,
		};
		*kt = k->type;
		*vt = v->type;
		return true;
	}
	return false;
}

/* A map: its entries copied by a bounded walk (GT_GOMAP_MAX of them; the BPF side
 * stops after GT_GOMAP_STEPS buckets or groups), keys and values laid out as any value
 * in memory. A map whose layout is unknown prints as its address, as before; one in
 * an element of a slice, array or map as ?; past GOCAP_MAX_MAPS, by its count. */
static void map_layout(struct capctx *c, struct plan_arg *a, const struct binfo_gotype *t,
		       int depth, bool ro)
{
	struct sema *s = c->s;
	struct gt_gomap w;
	const struct binfo_gotype *kt, *vt;
	int share = c->map_share; /* this map's, not its keys' or values' */
	c->map_share = 0;
	if (!sema_go_map_walk(t, &w, &kt, &vt)) {
		leaf(c, a, PG_ADDR, 8);
		return;
	}
	if (c->in_elems || !room(c, 16)) {
		leaf(c, a, PG_NOREAD, 0);
		return;
	}
	a->go = PG_MAP;
	a->fields = arena_alloc(s->arena, sizeof(*a->fields) * 2);
	a->nfields = 2;
	struct gt_gomap *wp = arena_alloc(s->arena, sizeof(*wp));
	if (c->maps >= GOCAP_MAX_MAPS) {
		/* its count only, no walk: map[] when empty (as most of a request's are),
		 * map[...] when not */
		a->fields[0] = a->fields[1] = (struct plan_arg){.kind = PLAN_ARG_GO, .go = PG_NOREAD};
		w.max = 0;
		*wp = w;
		a->go_map = wp;
		a->size = 16;
		return;
	}
	c->maps++;
	c->in_elems++;
	/* a key or value Go keeps behind a pointer (over GOCAP_MAX_KV bytes) is left out */
	struct plan_arg *k = t->key && t->key->size > GOCAP_MAX_KV
				     ? NULL
				     : layout(c, kt, 0, depth + 1, false, ro);
	struct plan_arg *v = t->elem && t->elem->size > GOCAP_MAX_KV
				     ? NULL
				     : layout(c, vt, 0, depth + 1, false, ro);
	c->in_elems--;
	a->fields[0] = k ? *k : (struct plan_arg){.kind = PLAN_ARG_GO, .go = PG_NOREAD};
	a->fields[1] = v ? *v : (struct plan_arg){.kind = PLAN_ARG_GO, .go = PG_NOREAD};
	a->fields[1].offset = a->fields[0].size;
	int each = a->fields[0].size + a->fields[1].size;
	int max = GT_GOMAP_MAX;
	while (max > 0 && ((share > 0 && each * max > share) || !room(c, each * max)))
		max--;
	w.max = (__u32)max;
	a->go_max = max;
	a->go_stride = each;
	a->size = 16 + each * max;
	*wp = w;
	a->go_map = wp;
}

static struct plan_arg *layout(struct capctx *c, const struct binfo_gotype *t, int64_t go_off,
			       int depth, bool regs, bool ro)
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
		if (!ro && t->kind == GK_INT && t->size == 8 && !strcmp(t->name, "time.Duration"))
			a->go_show = PGW_DURATION;
		break;
	case GK_FLOAT: /* X registers: unreadable; in memory: its bits */
		leaf(c, a, regs ? PG_NOREAD : PG_FLOAT, regs ? 0 : 8);
		break;
	case GK_COMPLEX:
		leaf(c, a, PG_NOREAD, 0);
		break;
	case GK_MAP:
		map_layout(c, a, t, depth, ro);
		break;
	case GK_CHAN:
	case GK_FUNC:
		leaf(c, a, PG_ADDR, 8);
		break;
	case GK_PTR:
		leaf(c, a, PG_PTR, 8);
		/* %+v shows &{...} for a pointer to a struct or an array at the top only */
		if (a->go == PG_PTR && depth == 0 && t->elem &&
		    (t->elem->kind == GK_STRUCT || t->elem->kind == GK_ARRAY)) {
			a->fields = layout(c, t->elem, 0, depth + 1, false, false);
			a->nfields = 1;
			a->fields->offset = 8;
			a->size = 8 + a->fields->size;
		}
		break;
	case GK_STRING:
		leaf(c, a, PG_STRING, 8 + pad8(s->opts->str_len));
		break;
	case GK_IFACE:
		/* an error, not in a slice's or map's elements: with the errors it wraps (the
		 * standard library's wrappers: *fs.PathError, *net.OpError ...) */
		a->go_stride = pad8(s->opts->str_len);
		if (!strcmp(t->name, "error") && !c->in_elems &&
		    room(c, PLAN_ERR_LEVELS * plan_err_level(a->go_stride))) {
			a->go = PG_IFACE;
			a->size = PLAN_ERR_LEVELS * plan_err_level(a->go_stride);
			a->go_chain = PLAN_ERR_LEVELS;
		} else {
			leaf(c, a, PG_IFACE, 32 + a->go_stride);
		}
		a->go_empty_iface = t->empty_iface;
		a->go_rebase = c->pie;
		sema_go_want_types(s);
		break;
	case GK_STRUCT: {
		a->go = PG_STRUCT;
		a->nfields = t->nfields;
		a->fields = arena_alloc(s->arena, sizeof(*a->fields) * (size_t)(t->nfields + 1));
		/* the maps last: their entries take what room the other fields leave (four
		 * maps of an http.Request had left its RemoteAddr and the rest as ?) */
		int nmaps = 0;
		for (int i = 0; i < t->nfields; i++)
			nmaps += t->fields[i].type && t->fields[i].type->kind == GK_MAP;
		for (int pass = 0; pass < 2; pass++) {
			for (int i = 0; i < t->nfields; i++) {
				const struct binfo_gotype *ft = t->fields[i].type;
				if ((ft && ft->kind == GK_MAP) != pass)
					continue;
				if (pass) /* an equal share of what is left for each map */
					c->map_share = (GOCAP_MAX_BYTES - c->total) / nmaps--;
				struct plan_arg *f =
					layout(c, ft, (int64_t)t->fields[i].offset, depth + 1, regs,
					       ro || !exported(t->fields[i].name));
				f->name = arena_strdup(s->arena, t->fields[i].name);
				a->fields[i] = *f;
			}
		}
		int off = 0; /* in the fields' order */
		for (int i = 0; i < t->nfields; i++) {
			a->fields[i].offset = off;
			off += a->fields[i].size;
		}
		a->size = off;
		if (!ro && !strcmp(t->name, "time.Time"))
			time_show(c, a, t, depth);
		break;
	}
	case GK_ARRAY:
		a->go = PG_ARRAY;
		if (!t->elem) {
			leaf(c, a, PG_NOREAD, 0);
			break;
		}
		elements(c, a, t->elem, t->count < GOCAP_MAX_ELEMS ? (int)t->count : GOCAP_MAX_ELEMS,
			 0, depth, ro);
		break;
	case GK_SLICE:
		a->go = PG_SLICE;
		if (!t->elem || !room(c, 16)) {
			leaf(c, a, PG_NOREAD, 0);
			break;
		}
		if (!ro && t->elem->size == 1 && !strcmp(t->name, "net.IP")) {
			elements(c, a, t->elem, 16, 16, depth, ro); /* IPv4 in IPv6 form: 16 */
			a->go_show = PGW_IP;
			break;
		}
		elements(c, a, t->elem, depth < 4 ? GOCAP_MAX_ELEMS : 0, 16, depth, ro);
		break;
	}
	return a;
}

static const struct binfo_gofield *field_named(const struct binfo_gotype *t, const char *name)
{
	for (int i = 0; t && t->kind == GK_STRUCT && i < t->nfields; i++)
		if (!strcmp(t->fields[i].name, name))
			return &t->fields[i];
	return NULL;
}

/* A struct of the named fields of T (each laid out alone), in NAMES' order: NULL when
 * T lacks one. */
static struct plan_arg *pick(struct capctx *c, const struct binfo_gotype *t,
			     const char *const *names, int n, int depth)
{
	struct plan_arg *a = arena_alloc(c->s->arena, sizeof(*a));
	a->kind = PLAN_ARG_GO;
	a->go = PG_STRUCT;
	a->go_size = (int)t->size;
	a->fields = arena_alloc(c->s->arena, sizeof(*a->fields) * (size_t)n);
	a->nfields = n;
	for (int i = 0; i < n; i++) {
		const struct binfo_gofield *f = field_named(t, names[i]);
		if (!f)
			return NULL;
		struct plan_arg *p = layout(c, f->type, (int64_t)f->offset, depth + 1, false, true);
		p->offset = a->size;
		p->name = names[i];
		a->fields[i] = *p;
		a->size += p->size;
	}
	return a;
}

/* LOC, a *P field, followed to the fields of *P that BODY lays out (&{...}). */
static void follow(struct plan_arg *loc, struct plan_arg *body)
{
	loc->fields = body;
	loc->nfields = 1;
	body->offset = 8;
	loc->size = 8 + body->size;
}

/* time.Time {wall, ext, loc}: String() needs the zone Go cached in *loc (name,
 * cacheStart, cacheEnd, cacheZone -> {name, offset}): those are followed too. Without
 * them (another layout of the runtime's types) it prints as a struct. */
static void time_show(struct capctx *c, struct plan_arg *a, const struct binfo_gotype *t,
		      int depth)
{
	static const char *const tf[] = {"wall", "ext", "loc"};
	static const char *const lf[] = {"name", "cacheStart", "cacheEnd", "cacheZone"};
	static const char *const zf[] = {"name", "offset"};
	const struct binfo_gofield *loc = field_named(t, "loc"), *zone;
	const struct binfo_gotype *lt = loc && loc->type->kind == GK_PTR ? loc->type->elem : NULL;
	zone = field_named(lt, "cacheZone");
	if (!lt || !zone || zone->type->kind != GK_PTR || !zone->type->elem || depth > 8)
		return;
	struct plan_arg *ta = pick(c, t, tf, 3, depth);
	struct plan_arg *la = ta ? pick(c, lt, lf, 4, depth + 1) : NULL;
	struct plan_arg *za = la ? pick(c, zone->type->elem, zf, 2, depth + 2) : NULL;
	if (!za || ta->fields[2].go != PG_PTR || la->fields[3].go != PG_PTR)
		return;
	follow(&la->fields[3], za);
	la->size += za->size;
	follow(&ta->fields[2], la);
	ta->size += la->size;
	c->total -= a->size; /* pick() counted its parts: those of A's first layout go back */
	int64_t off = a->go_off;
	*a = *ta;
	a->go_off = off;
	a->go_show = PGW_TIME;
}

struct gt_type *sema_go_print_type(struct sema *s, struct ast_node *e)
{
	const struct sema_node *sn = e->sema;
	const struct sema_site_info *in = &s->site_info.v[s->clause_site_begin];
	struct capctx c = {.s = s, .pie = s->clause_site_begin < s->sites.n && in->bi &&
					  binfo_is_pie(in->bi)};
	struct gt_type *t = sema_type_new(s, TY_GO, 0, false);
	t->gocap = layout(&c, sn->gotype, 0, 0, sn->go->where == GW_REGS, false);
	t->size = t->gocap->size ? t->gocap->size : 8;
	/* printf's %T: the Go type (sema's copy of DWARF's name) */
	t->name = sn->gotype && sn->gotype->name ? arena_strdup(s->arena, sn->gotype->name)
						 : e->ty->name;
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
	if (a->go_chain) { /* a key keeps the type and the first level's text only */
		a->go_chain = 0;
		a->size = 32 + a->go_stride;
		t->size = a->size;
	}
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
		[GS_CONST] = PGS_CONST, [GS_ERRNO] = PGS_ERRNO, [GS_CHAIN] = PGS_CHAIN,
		[GS_NETADDR] = PGS_NETADDR,
	};
	static const enum plan_gochain chain[] = {
		[GC_NONE] = PGC_NONE, [GC_PATH] = PGC_PATH, [GC_SYSCALL] = PGC_SYSCALL,
		[GC_URL] = PGC_URL, [GC_OP] = PGC_OP, [GC_DNS] = PGC_DNS, [GC_EMBED] = PGC_EMBED,
	};
	_Static_assert((int)GT_NOFFS == (int)PGO_N && (int)GT_OFF_NEXT == (int)PGO_NEXT &&
		       (int)GT_OFF_S3 == (int)PGO_S3 && (int)GT_OFF_PORT == (int)PGO_PORT,
		       "plan_gotype.off holds binfo's offsets");
	if (!s->want_gotypes)
		return 0;
	VEC(struct plan_gotype) v = {0};
	for (int i = 0; i < s->ntargets; i++) {
		struct binfo_gortype *rt;
		int n = binfo_gortypes(s->targets[i], s->arena, &rt);
		for (int j = 0; j < n; j++) {
			struct plan_gotype g = {rt[j].addr, rt[j].name, show[rt[j].show], rt[j].size,
						rt[j].text, chain[rt[j].chain], {0}};
			memcpy(g.off, rt[j].off, sizeof(g.off));
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
