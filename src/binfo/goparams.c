/*
 * goparams: Go parameters from DWARF. The first request indexes the top-level
 * subprograms of every CU (name -> DIE), and each function asked for is read then: its
 * DW_TAG_formal_parameter children (results have DW_AT_variable_parameter), their
 * types (cached by DIE offset), and where Go's register ABI puts each one.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "binfo/binfo_int.h"
#include "binfo/dw.h"
#include "binfo/godata.h"
#include "arch/arch.h"
#include "binfo/gotypes.h"
#include "common/arena.h"
#include "common/util.h"

#define ABI_INT_REGS ARCH_GO_INT_REGS
#define ABI_FLOAT_REGS ARCH_GO_FLOAT_REGS

struct ref_slot {
	Dwarf_Off off;
	void *val;
};

/* open addressing over DIE offsets (never 0 in .debug_info past its first header) */
struct ref_map {
	struct ref_slot *v;
	uint32_t cap, n;
};

struct name_slot {
	const char *name;
	Dwarf_Off off;
};

struct stored {
	const char *name;
	const struct binfo_gofunc *f;
};

struct binfo_godwarf {
	struct binfo_godata *data; /* no DWARF: the shipped data of the binary's release */
	struct binfo *bi;
	VEC(struct stored) stored; /* read from binfo_store, by name */
	/* DWARF opened at its first use (a run whose functions binfo_store kept opens it
	 * not at all); broken: it did not open, nor had the release's data */
	bool lazy, broken;
	int saved; /* functions given to binfo_store: a script's few, --funcgraph's hundreds
		    * (at most 1024) */
	bool nokeep; /* binfo_godwarf_set_keep */
	struct dw d;
	struct arena *a;
	bool indexed;
	struct name_slot *funcs; /* open addressing by name */
	uint32_t fcap, fn;
	struct ref_map types, done; /* DIE -> binfo_gotype, subprogram DIE -> binfo_gofunc */
};

static void *ref_get(const struct ref_map *m, Dwarf_Off off)
{
	for (uint32_t h = (uint32_t)(off * 2654435761u) & (m->cap - 1); m->cap; h = (h + 1) & (m->cap - 1)) {
		if (!m->v[h].off)
			return NULL;
		if (m->v[h].off == off)
			return m->v[h].val;
	}
	return NULL;
}

static void ref_put(struct ref_map *m, Dwarf_Off off, void *val)
{
	if (2 * (m->n + 1) > m->cap) {
		struct ref_map g = {xcalloc(m->cap ? 2 * m->cap : 64, sizeof(*g.v)),
				    m->cap ? 2 * m->cap : 64, 0};
		for (uint32_t i = 0; i < m->cap; i++)
			if (m->v[i].off)
				ref_put(&g, m->v[i].off, m->v[i].val);
		free(m->v);
		*m = g;
	}
	uint32_t h = (uint32_t)(off * 2654435761u) & (m->cap - 1);
	while (m->v[h].off && m->v[h].off != off)
		h = (h + 1) & (m->cap - 1);
	if (!m->v[h].off)
		m->n++;
	m->v[h] = (struct ref_slot){off, val};
}

static void name_put(struct binfo_godwarf *gd, const char *name, Dwarf_Off off)
{
	if (2 * (gd->fn + 1) > gd->fcap) {
		struct name_slot *old = gd->funcs;
		uint32_t ocap = gd->fcap;
		gd->fcap = ocap ? 2 * ocap : 1024;
		gd->funcs = xcalloc(gd->fcap, sizeof(*gd->funcs));
		gd->fn = 0;
		for (uint32_t i = 0; i < ocap; i++)
			if (old[i].name)
				name_put(gd, old[i].name, old[i].off);
		free(old);
	}
	uint32_t h = str_hash(name) & (gd->fcap - 1);
	while (gd->funcs[h].name && strcmp(gd->funcs[h].name, name))
		h = (h + 1) & (gd->fcap - 1);
	if (!gd->funcs[h].name) { /* the first concrete copy wins */
		gd->funcs[h] = (struct name_slot){arena_strdup(gd->a, name), off};
		gd->fn++;
	}
}

static Dwarf_Off name_get(const struct binfo_godwarf *gd, const char *name)
{
	for (uint32_t h = str_hash(name) & (gd->fcap - 1); gd->fcap; h = (h + 1) & (gd->fcap - 1)) {
		if (!gd->funcs[h].name)
			return 0;
		if (!strcmp(gd->funcs[h].name, name))
			return gd->funcs[h].off;
	}
	return 0;
}

static bool has_attr(struct dw *d, Dwarf_Die die, Dwarf_Half at)
{
	Dwarf_Bool yes = 0;
	return dw_ok(d, dwarf_hasattr(die, at, &yes, &d->err)) && yes;
}

static bool attr_flag(struct dw *d, Dwarf_Die die, Dwarf_Half at)
{
	Dwarf_Attribute attr = NULL;
	Dwarf_Bool v = 0;
	if (!dw_ok(d, dwarf_attr(die, at, &attr, &d->err)))
		return false;
	dw_ok(d, dwarf_formflag(attr, &v, &d->err));
	dwarf_dealloc_attribute(attr);
	return v != 0;
}

static Dwarf_Die die_at(struct dw *d, Dwarf_Off off)
{
	Dwarf_Die die = NULL;
	return dw_ok(d, dwarf_offdie_b(d->dbg, off, true, &die, &d->err)) ? die : NULL;
}

/* ---- types ---- */

static const struct binfo_gotype *read_type(struct binfo_godwarf *gd, Dwarf_Off off, int depth);

static uint64_t align_of(const struct binfo_gotype *t)
{
	return t->align ? t->align : 1;
}

static void read_struct(struct binfo_godwarf *gd, Dwarf_Die die, struct binfo_gotype *t,
			int depth)
{
	struct dw *d = &gd->d;
	Dwarf_Die cur = NULL;
	int n = 0, cap = 0;
	struct binfo_gofield *f = NULL;
	t->kind = GK_STRUCT;
	t->align = 1;
	if (!dw_ok(d, dwarf_child(die, &cur, &d->err)))
		return;
	for (; cur && !d->failed; cur = dw_next_sibling(d, cur)) {
		uint64_t off;
		Dwarf_Off ref;
		if (dw_tag(d, cur) == DW_TAG_member && dw_member_offset(d, cur, &off) &&
		    dw_type_ref(d, cur, &ref)) {
			const struct binfo_gotype *ft = read_type(gd, ref, depth + 1);
			if (ft) {
				if (n == cap) {
					struct binfo_gofield *g =
					    arena_alloc(gd->a, sizeof(*g) * (size_t)(cap = cap ? 2 * cap : 8));
					if (n)
						memcpy(g, f, sizeof(*g) * (size_t)n);
					f = g;
				}
				const char *nm = dw_name(d, cur);
				f[n++] = (struct binfo_gofield){arena_strdup(gd->a, nm ? nm : "_"), off, ft,
								dw_attr_flag(d, cur, DW_AT_go_embedded_field)};
				if (align_of(ft) > t->align)
					t->align = align_of(ft);
			}
		}
	}
	dw_free_die(cur);
	t->nfields = n;
	t->fields = f;
}

static void read_base(struct dw *d, Dwarf_Die die, struct binfo_gotype *t)
{
	uint64_t enc = 0;
	dw_attr_udata(d, die, DW_AT_encoding, &enc);
	t->kind = enc == DW_ATE_boolean ? GK_BOOL
		  : enc == DW_ATE_float ? GK_FLOAT
		  : enc == DW_ATE_complex_float ? GK_COMPLEX
		  : enc == DW_ATE_signed || enc == DW_ATE_signed_char ? GK_INT
								       : GK_UINT;
	t->align = t->kind == GK_COMPLEX ? t->size / 2 : t->size;
	if (!t->align || t->align > 8)
		t->align = 8;
}

static const struct binfo_gotype *read_type(struct binfo_godwarf *gd, Dwarf_Off off, int depth)
{
	struct dw *d = &gd->d;
	const struct binfo_gotype *seen = ref_get(&gd->types, off);
	if (seen || depth > 32)
		return seen;
	Dwarf_Die die = die_at(d, off);
	if (!die)
		return NULL;
	struct binfo_gotype *t = arena_alloc(gd->a, sizeof(*t));
	ref_put(&gd->types, off, t); /* before the members: a struct may point to itself */
	const char *name = dw_name(d, die);
	t->name = arena_strdup(gd->a, name ? name : "?");
	uint64_t kind = 0, size = 0;
	bool go_kind = dw_attr_udata(d, die, DW_AT_go_kind, &kind);
	dw_attr_udata(d, die, DW_AT_byte_size, &size);
	t->size = size;
	t->align = 8;
	Dwarf_Off ref;
	Dwarf_Half tag = dw_tag(d, die);
	if (go_kind && (kind == RK_MAP || kind == RK_CHAN || kind == RK_FUNC)) {
		t->kind = kind == RK_MAP ? GK_MAP : kind == RK_CHAN ? GK_CHAN : GK_FUNC;
		t->size = 8;
		if (t->kind == GK_MAP) { /* for print(): see sema_gocap */
			if (dw_attr_ref(d, die, DW_AT_go_key, &ref))
				t->key = read_type(gd, ref, depth + 1);
			if (dw_attr_ref(d, die, DW_AT_go_elem, &ref))
				t->elem = read_type(gd, ref, depth + 1);
			if (dw_type_ref(d, die, &ref))
				t->hdr = read_type(gd, ref, depth + 1);
		}
	} else if (go_kind && kind == RK_IFACE) {
		t->kind = GK_IFACE;
		t->size = 16;
		const struct binfo_gotype *u = dw_type_ref(d, die, &ref) ? read_type(gd, ref, depth + 1) : NULL;
		t->empty_iface = u && !strcmp(u->name, "runtime.eface");
	} else if (go_kind && kind == RK_STRING) {
		t->kind = GK_STRING;
		t->size = 16;
	} else if (go_kind && kind == RK_SLICE) {
		t->kind = GK_SLICE;
		t->size = 24;
		if (dw_attr_ref(d, die, DW_AT_go_elem, &ref))
			t->elem = read_type(gd, ref, depth + 1);
	} else if (tag == DW_TAG_typedef) {
		const struct binfo_gotype *u = dw_type_ref(d, die, &ref) ? read_type(gd, ref, depth + 1) : NULL;
		if (!u) {
			dw_free_die(die);
			return NULL;
		}
		const char *nm = t->name;
		*t = *u;
		if (nm[0] != '.') /* a generic's .paramN: the shape type's name says more */
			t->name = nm;
	} else if (tag == DW_TAG_base_type) {
		read_base(d, die, t);
	} else if (tag == DW_TAG_pointer_type) {
		t->kind = GK_PTR;
		t->size = 8;
		if (dw_type_ref(d, die, &ref))
			t->elem = read_type(gd, ref, depth + 1);
		if (!name)
			t->name = "unsafe.Pointer";
	} else if (tag == DW_TAG_structure_type) {
		read_struct(gd, die, t, depth);
	} else if (tag == DW_TAG_array_type) {
		t->kind = GK_ARRAY;
		if (dw_type_ref(d, die, &ref))
			t->elem = read_type(gd, ref, depth + 1);
		t->count = t->elem && t->elem->size ? size / t->elem->size : 0;
		t->align = t->elem ? align_of(t->elem) : 1;
	} else {
		t->kind = GK_FUNC; /* subroutine types and the like: a pointer */
		t->size = 8;
	}
	dw_free_die(die);
	return t;
}

/* ---- the register ABI (Go's internal ABI; its registers: arch.h) ---- */

struct assign {
	int ni, nf, np;
	struct binfo_gopiece p[ABI_INT_REGS + ABI_FLOAT_REGS];
};

static bool piece(struct assign *a, uint64_t off, uint64_t size, bool flt)
{
	if (flt ? a->nf >= ABI_FLOAT_REGS : a->ni >= ABI_INT_REGS)
		return false;
	a->p[a->np++] = (struct binfo_gopiece){(uint32_t)off, (uint32_t)size,
					      (int8_t)(flt ? -1 : a->ni++),
					      (int8_t)(flt ? a->nf++ : -1)};
	return true;
}

/* Register-assigns T at OFF of the value; false when it does not fit (then the whole
 * parameter goes to the stack and the counts are restored by the caller). read_type
 * keeps the type graph as DWARF has it, cycles included (a hostile binary's struct that
 * holds itself, an array of itself): DEPTH bounds the walk, far past any real value
 * that fits in nine registers. */
#define ASSIGN_DEPTH_MAX 64
static bool assign(struct assign *a, const struct binfo_gotype *t, uint64_t off, int depth)
{
	if (depth > ASSIGN_DEPTH_MAX)
		return false;
	switch (t->kind) {
	case GK_FLOAT:
		return piece(a, off, t->size, true);
	case GK_COMPLEX:
		return piece(a, off, t->size / 2, true) && piece(a, off + t->size / 2, t->size / 2, true);
	case GK_STRING:
	case GK_IFACE:
		return piece(a, off, 8, false) && piece(a, off + 8, 8, false);
	case GK_SLICE:
		return piece(a, off, 8, false) && piece(a, off + 8, 8, false) &&
		       piece(a, off + 16, 8, false);
	case GK_ARRAY:
		if (t->count == 0)
			return true;
		return t->count == 1 && t->elem && assign(a, t->elem, off, depth + 1);
	case GK_STRUCT:
		for (int i = 0; i < t->nfields; i++)
			if (!assign(a, t->fields[i].type, off + t->fields[i].offset, depth + 1))
				return false;
		return true;
	default:
		return t->size == 0 || piece(a, off, t->size, false);
	}
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return a ? (v + a - 1) / a * a : v;
}

/* Places params [from, to) (all arguments, or all results): registers from 0, the rest
 * on the stack from *STACK (bytes past the return address). */
static void place(struct binfo_godwarf *gd, struct binfo_goparam *ps, int from, int to,
		  uint64_t *stack, bool dict)
{
	struct assign a = {0};
	if (dict) { /* the hidden dictionary of a shape instance: the first integer register (or the stack) */
		if (!piece(&a, 0, 8, false))
			*stack += 8;
		a.np = 0;
	}
	for (int i = from; i < to; i++) {
		struct assign save = a;
		save.np = 0;
		a.np = 0;
		if (assign(&a, ps[i].type, 0, 0)) {
			struct binfo_gopiece *p = arena_alloc(gd->a, sizeof(*p) * (size_t)(a.np ? a.np : 1));
			memcpy(p, a.p, sizeof(*p) * (size_t)a.np);
			ps[i].pieces = p;
			ps[i].npieces = a.np;
			continue;
		}
		a = save;
		*stack = align_up(*stack, align_of(ps[i].type));
		ps[i].on_stack = true;
		ps[i].stack_off = 8 + (int64_t)*stack;
		*stack += ps[i].type->size;
	}
	*stack = align_up(*stack, 8);
}

/* ---- functions ---- */

/* A subprogram's name, or its abstract origin's: the out-of-line code of a function
 * that is also inlined names itself only there. */
static const char *origin_name(struct dw *d, Dwarf_Die die)
{
	const char *name = dw_name(d, die);
	Dwarf_Off ref;
	Dwarf_Die org;
	if (name || !dw_attr_ref(d, die, DW_AT_abstract_origin, &ref) || !(org = die_at(d, ref)))
		return name;
	name = dw_name(d, org); /* in .debug_str: outlives the DIE */
	dw_free_die(org);
	return name;
}

static void index_funcs(struct binfo_godwarf *gd)
{
	struct dw *d = &gd->d;
	gd->indexed = true;
	for (Dwarf_Die cu; (cu = dw_next_cu(d));) {
		Dwarf_Die cur = NULL;
		if (dw_ok(d, dwarf_child(cu, &cur, &d->err))) {
			for (; cur && !d->failed; cur = dw_next_sibling(d, cur)) {
				const char *name;
				Dwarf_Off off;
				if (dw_tag(d, cur) == DW_TAG_subprogram && has_attr(d, cur, DW_AT_low_pc) &&
				    (name = origin_name(d, cur)) &&
				    dw_ok(d, dwarf_dieoffset(cur, &off, &d->err)))
					name_put(gd, name, off);
			}
			dw_free_die(cur);
		}
		dw_free_die(cu);
		if (d->failed)
			break;
	}
}

/* DIE's attribute AT, else its abstract origin's (inlinable functions keep names,
 * types and the result flag there). */
static Dwarf_Die origin_of(struct dw *d, Dwarf_Die die)
{
	Dwarf_Off ref;
	return dw_attr_ref(d, die, DW_AT_abstract_origin, &ref) ? die_at(d, ref) : NULL;
}

static bool read_param(struct binfo_godwarf *gd, Dwarf_Die die, struct binfo_goparam *p)
{
	struct dw *d = &gd->d;
	Dwarf_Die org = origin_of(d, die), src = org ? org : die;
	const char *name = dw_name(d, src);
	Dwarf_Off ref;
	bool ok = name && dw_type_ref(d, src, &ref);
	if (ok) {
		p->name = arena_strdup(gd->a, name);
		p->result = attr_flag(d, src, DW_AT_variable_parameter);
		p->type = read_type(gd, ref, 0);
		ok = p->type != NULL;
	}
	dw_free_die(org);
	return ok;
}

/* Go 1.19 lists a result twice in a function with a defer (two ~r0 entries, the same
 * line and type); Go names are unique, so a repeated name is that copy. */
static bool seen_param(const struct binfo_goparam *ps, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(ps[i].name, ps[n].name))
			return true;
	return false;
}

static const struct binfo_gofunc *read_func(struct binfo_godwarf *gd, const char *name,
					    Dwarf_Off off)
{
	struct dw *d = &gd->d;
	Dwarf_Die die = die_at(d, off), cur = NULL;
	struct binfo_goparam ps[256];
	int n = 0;
	if (!die)
		return NULL;
	if (dw_ok(d, dwarf_child(die, &cur, &d->err))) {
		for (; cur && !d->failed && n < 256; cur = dw_next_sibling(d, cur)) {
			if (dw_tag(d, cur) == DW_TAG_formal_parameter) {
				memset(&ps[n], 0, sizeof(ps[n]));
				if (read_param(gd, cur, &ps[n]) && !seen_param(ps, n))
					n++;
			}
		}
		dw_free_die(cur);
	}
	dw_free_die(die);
	/* arguments first, then results, each in declaration order */
	struct binfo_goparam *v = arena_alloc(gd->a, sizeof(*v) * (size_t)(n ? n : 1));
	int k = 0, nargs;
	for (int i = 0; i < n; i++)
		if (!ps[i].result)
			v[k++] = ps[i];
	nargs = k;
	for (int i = 0; i < n; i++)
		if (ps[i].result)
			v[k++] = ps[i];
	uint64_t stack = 0;
	/* A generic function compiled for a shape (main.Map[go.shape.int_0,...]) takes a
	 * dictionary pointer before its parameters, which DWARF does not list before Go
	 * 1.27; 1.27 lists it, as ".dict" (counted twice, it moved every parameter one
	 * register on). */
	bool dict = strstr(name, "[go.shape.") != NULL && !(nargs && !strcmp(v[0].name, ".dict"));
	place(gd, v, 0, nargs, &stack, dict);
	place(gd, v, nargs, n, &stack, false);
	struct binfo_gofunc *f = arena_alloc(gd->a, sizeof(*f));
	*f = (struct binfo_gofunc){arena_strdup(gd->a, name), n, v};
	return f;
}

/* No DWARF: the data of the binary's release, whose file must say it is that release (a
 * copy under another name would be a guess). 0, or -ENOENT. */
static int load_data(struct binfo_godwarf *gd, struct binfo *bi)
{
	char path[PATH_MAX];
	if (binfo_godata_path(bi->go_version, path, sizeof(path)) ||
	    binfo_godata__load(path, &gd->data) ||
	    strcmp(binfo_godata_release(gd->data), bi->go_version)) {
		binfo_godata__free(gd->data);
		gd->data = NULL;
		return -ENOENT;
	}
	return 0;
}

/* The DWARF reader, opened now if not yet; false: none (gd->data may have come instead) */
static bool open_dwarf(struct binfo_godwarf *gd)
{
	if (gd->lazy) {
		gd->lazy = false;
		if (!dw_open(&gd->d, gd->bi)) {
			gd->d.fd = -1;
			gd->broken = load_data(gd, gd->bi) != 0;
		}
	}
	return !gd->data && !gd->broken;
}

int binfo_godwarf__open(struct binfo *bi, struct binfo_godwarf **out)
{
	struct binfo_godwarf *gd = xcalloc(1, sizeof(*gd));
	*out = NULL;
	gd->d.fd = -1;
	if (dw_present(bi)) {
		gd->lazy = true;
	} else if (load_data(gd, bi)) {
		free(gd);
		return -ENOENT;
	}
	gd->a = arena__new();
	gd->bi = bi;
	*out = gd;
	return 0;
}

void binfo_godwarf__close(struct binfo_godwarf *gd)
{
	if (!gd)
		return;
	binfo_godata__free(gd->data);
	dw_close(&gd->d);
	arena__free(gd->a);
	free(gd->funcs);
	free(gd->types.v);
	free(gd->done.v);
	vec_free(&gd->stored);
	free(gd);
}

void binfo_godwarf_set_keep(struct binfo_godwarf *gd, bool keep)
{
	if (gd)
		gd->nokeep = !keep;
}

const char *binfo_godwarf_data_release(const struct binfo_godwarf *gd)
{
	return gd->data ? binfo_godata_release(gd->data) : NULL;
}

int binfo_godwarf_names(struct binfo_godwarf *gd, const char ***out)
{
	*out = NULL;
	if (!open_dwarf(gd))
		return -ENOENT;
	if (!gd->indexed)
		index_funcs(gd);
	const char **v = xcalloc(gd->fn + 1, sizeof(*v));
	int n = 0;
	for (uint32_t i = 0; i < gd->fcap; i++)
		if (gd->funcs[i].name)
			v[n++] = gd->funcs[i].name;
	*out = v;
	return n;
}

int binfo_godwarf_func(struct binfo_godwarf *gd, const char *func, const struct binfo_gofunc **out)
{
	if (gd->data)
		return binfo_godata_func(gd->data, func, out);
	/* a binary of many functions: its parameters as a run before read them, if kept */
	for (int i = 0; i < gd->stored.n; i++)
		if (!strcmp(gd->stored.v[i].name, func)) {
			*out = gd->stored.v[i].f;
			return 0;
		}
	if (!gd->indexed && !gd->data && !binfo__gostore_load(gd->bi, gd->a, func, out)) {
		struct stored st = {(*out)->name, *out};
		vec_push(&gd->stored, st);
		return 0;
	}
	if (!open_dwarf(gd)) {
		*out = NULL;
		return gd->data ? binfo_godata_func(gd->data, func, out) : -ENOENT;
	}
	if (!gd->indexed)
		index_funcs(gd);
	Dwarf_Off off = name_get(gd, func);
	*out = NULL;
	if (!off)
		return -ENOENT;
	const struct binfo_gofunc *f = ref_get(&gd->done, off);
	if (!f) {
		f = read_func(gd, func, off);
		if (!f)
			return -ENOENT;
		ref_put(&gd->done, off, (void *)f);
		if (!gd->nokeep && gd->saved++ < 1024)
			binfo__gostore_save(gd->bi, f);
	}
	*out = f;
	return 0;
}

const char *binfo_goreg_name(int ireg)
{
	return ireg >= 0 && ireg < ABI_INT_REGS ? arch_go_int_names[ireg] : "?";
}

const char *binfo_gofreg_name(int freg)
{
	return freg >= 0 && freg < ABI_FLOAT_REGS ? arch_go_float_names[freg] : "?";
}
