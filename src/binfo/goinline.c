/* goinline: where the inlined copies of a Go function start, for go:FUNC:entry on a
 * function the compiler inlined (everywhere, or at some call sites).
 *
 * .gopclntab has what is needed, without DWARF: each function's inline tree (funcdata
 * 3) lists the calls inlined into it, and its pcdata 2 table gives for each PC the
 * innermost inlined call there (-1 outside them). A copy's PCs are those whose chain of
 * inlined calls includes it, nested ones too; it starts at the lowest of them, which
 * its callers reach once per call as they reach the start of any inlined block. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "binfo/lines_int.h"
#include "common/util.h"

/* A run of PCs [lo, hi) with one inline-tree index. */
struct inl_run {
	uint64_t lo, hi;
	int32_t ix;
};

typedef VEC(struct inl_run) inl_runs;
typedef VEC(struct binfo_inlined) inl_copies;

/* Decodes the pc-value table at pctab+OFF of a function at ENTRY into runs (as
 * runtime.pcvalue walks it). */
#define INL_MAX (1 << 20) /* entries of one function's inline tree, at most */

static bool decode_runs(const struct pcln *p, uint32_t off, uint64_t entry, inl_runs *runs)
{
	uint64_t pos = p->pctab + off, pc = entry;
	int32_t val = -1;
	runs->n = 0;
	for (bool first = true;; first = false) {
		uint32_t uvdelta, pcdelta;
		if (!pcln_uvarint(p, &pos, &uvdelta))
			return false;
		if (uvdelta == 0 && !first)
			return true;
		val = pcln_step(val, uvdelta);
		/* an inline tree index: -1 (no inlined call) or an entry; a malformed table
		 * is refused rather than sizing the tree by it (INL_MAX) */
		if (val < -1 || val >= INL_MAX)
			return false;
		if (!pcln_uvarint(p, &pos, &pcdelta))
			return false;
		struct inl_run r = {pc, pc + (uint64_t)pcdelta * p->quantum, val};
		vec_push(runs, r);
		pc = r.hi;
	}
}

static int32_t ix_at(const inl_runs *runs, uint64_t pc)
{
	for (int i = 0; i < runs->n; i++)
		if (pc >= runs->v[i].lo && pc < runs->v[i].hi)
			return runs->v[i].ix;
	return -1;
}

/* Entry IX of F's inline tree (at go:func.* + FD): its name and its parent's index (from
 * 1.20 on, the entry whose run holds parentPc). */
static bool inl_entry(struct binfo *bi, const struct pcln *p, uint32_t fd, int32_t ix,
		      uint64_t entry, const inl_runs *runs, const char **name, int32_t *parent)
{
	int32_t ppc;
	if (!pcln_inl_entry(bi, p, fd, ix, name, &ppc, parent))
		return false;
	if (p->go120)
		*parent = ppc >= 0 ? ix_at(runs, entry + (uint64_t)ppc) : -1;
	return true;
}

/* The copies in function F, appended to OUT. */
static void func_copies(struct binfo *bi, const struct pcln *p, const struct pfunc *f,
			inl_runs *runs, inl_copies *out)
{
	uint32_t tab, fd;
	if (!pcln_inl_tree(p, f, &tab, &fd) || !decode_runs(p, tab, f->entry, runs))
		return;
	int32_t n = 0;
	for (int i = 0; i < runs->n; i++)
		if (runs->v[i].ix >= n)
			n = runs->v[i].ix + 1;
	if (!n)
		return;
	const char **names = xcalloc((size_t)n, sizeof(*names));
	int32_t *parent = xmalloc((size_t)n * sizeof(*parent));
	uint64_t *lowest = xmalloc((size_t)n * sizeof(*lowest));
	bool any = false;
	for (int32_t k = 0; k < n; k++) {
		lowest[k] = UINT64_MAX;
		if (!inl_entry(bi, p, fd, k, f->entry, runs, &names[k], &parent[k]) ||
		    parent[k] >= n)
			parent[k] = -1;
		any |= names[k] != NULL;
	}
	for (int i = 0; any && i < runs->n; i++) {
		if (runs->v[i].lo == runs->v[i].hi)
			continue;
		/* every call on the chain from the innermost out holds these PCs */
		for (int32_t k = runs->v[i].ix, depth = 0; k >= 0 && depth <= n;
		     k = parent[k], depth++)
			if (runs->v[i].lo < lowest[k])
				lowest[k] = runs->v[i].lo;
	}
	const struct binfo_func *outer = any ? binfo_func_at(bi, f->entry) : NULL;
	for (int32_t k = 0; outer && k < n; k++) {
		if (lowest[k] == UINT64_MAX || !names[k])
			continue;
		struct binfo_inlined c = {names[k], outer, lowest[k]};
		vec_push(out, c);
	}
	free(names);
	free(parent);
	free(lowest);
}

static int by_addr(const void *a, const void *b)
{
	const struct binfo_inlined *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int by_name_addr(const void *a, const void *b)
{
	const struct binfo_inlined *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : by_addr(a, b);
}

/* The index as binfo_store keeps it: per copy, the name's offset in the function name
 * table, the outer function's place in bi->funcs (its order is the file's) and address,
 * the copy's address, in the index's order. */
#define STORE_WHAT "inlined copies, format 2"
#define STORE_MIN_FUNCS 4096 /* below, the walk costs less than reading it back */
struct stored_copy {
	uint64_t nameoff, outer_ix, outer, addr;
};

static void save_copies(struct binfo *bi, const struct pcln *p, const inl_copies *v)
{
	const struct binfo_store *st = binfo__store();
	if (!st || !v->n || p->nfunc < STORE_MIN_FUNCS)
		return;
	struct stored_copy *s = xmalloc(sizeof(*s) * (size_t)v->n);
	const char *names = (const char *)p->d + p->funcname;
	for (int i = 0; i < v->n; i++)
		s[i] = (struct stored_copy){(uint64_t)(v->v[i].name - names),
					    (uint64_t)(v->v[i].outer - bi->funcs),
					    v->v[i].outer->addr, v->v[i].addr};
	char *key = binfo__store_key(bi, STORE_WHAT);
	st->save(st->ctx, key, s, sizeof(*s) * (size_t)v->n);
	free(key);
	free(s);
}

/* The stored index into V, when there is one and every entry holds up: a name in the
 * table, an outer function of the binary, the order of the index. */
static bool load_copies(struct binfo *bi, const struct pcln *p, inl_copies *v)
{
	const struct binfo_store *st = p->nfunc >= STORE_MIN_FUNCS ? binfo__store() : NULL;
	void *buf = NULL;
	size_t len = 0;
	char *key = st ? binfo__store_key(bi, STORE_WHAT) : NULL;
	bool ok = key && !st->load(st->ctx, key, &buf, &len) && len &&
		  len % sizeof(struct stored_copy) == 0 && len / sizeof(struct stored_copy) < INT32_MAX;
	free(key);
	const struct stored_copy *s = buf;
	for (size_t i = 0; ok && i < len / sizeof(*s); i++) {
		bool same = i && s[i].nameoff == s[i - 1].nameoff;
		const char *name = same ? v->v[v->n - 1].name
			: s[i].nameoff < UINT32_MAX ? pcln_name(p, (uint32_t)s[i].nameoff) : NULL;
		const struct binfo_func *outer =
		    s[i].outer_ix < (uint64_t)bi->nfuncs ? &bi->funcs[s[i].outer_ix] : NULL;
		struct binfo_inlined c = {name, outer, s[i].addr};
		ok = name && outer && outer->addr == s[i].outer && s[i].addr >= outer->addr &&
		     s[i].addr - outer->addr < outer->size &&
		     (!v->n || (same ? v->v[v->n - 1].addr <= c.addr
				     : by_name_addr(&v->v[v->n - 1], &c) <= 0));
		if (ok)
			vec_push(v, c);
	}
	free(buf);
	if (!ok)
		vec_free(v);
	return ok;
}

/* bi->inl: every copy of the binary, by (name, addr). */
static void index_copies(struct binfo *bi)
{
	inl_copies v = {0};
	inl_runs runs = {0};
	struct pcln p;
	bi->inl_done = true;
	if (!pcln_open(bi, &p) || !p.gofunc || p.go116) {
		bi->ninl = -ENOENT;
		return;
	}
	if (!load_copies(bi, &p, &v)) {
		for (uint64_t i = 0; i < p.nfunc; i++) {
			struct pfunc f;
			if (pcln_func_index(&p, i, &f))
				func_copies(bi, &p, &f, &runs, &v);
		}
		vec_free(&runs);
		vec_sort(&v, by_name_addr);
		save_copies(bi, &p, &v);
	}
	bi->inl = v.v;
	bi->ninl = v.n;
	bi->inl_names = xmalloc(sizeof(int) * ((size_t)v.n + 1));
	for (int i = 0; i < v.n; i++) {
		if (!i || strcmp(v.v[i].name, v.v[i - 1].name))
			bi->inl_names[bi->ninl_names++] = i;
		else /* one pointer per name (binfo.h) */
			v.v[i].name = v.v[i - 1].name;
	}
	bi->inl_names[bi->ninl_names] = v.n;
}

/* The first copy of bi->inl named NAME or after it. */
static int first_named(const struct binfo *bi, const char *name)
{
	int lo = 0, hi = bi->ninl;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (strcmp(bi->inl[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int binfo_inlined_copies(struct binfo *bi, const char *pattern, struct binfo_inlined **out)
{
	inl_copies v = {0};
	*out = NULL;
	if (!bi->inl_done)
		index_copies(bi);
	if (bi->ninl < 0)
		return bi->ninl;
	/* a name as it is (a method's "(*T)", a generic instance's "[...]" are characters
	 * of it), else a Go wildcard: --funcgraph's 490 names of a package made 490 walks
	 * over every name of a web server's copies as globs (1.1 G instructions) */
	int first = first_named(bi, pattern);
	if (first < bi->ninl && !strcmp(bi->inl[first].name, pattern)) {
		for (int i = first; i < bi->ninl && !strcmp(bi->inl[i].name, pattern); i++)
			vec_push(&v, bi->inl[i]);
	} else if (glob_go_wildcard(pattern)) {
		for (int k = 0; k < bi->ninl_names; k++) {
			int i = bi->inl_names[k];
			if (glob_match(pattern, bi->inl[i].name))
				for (; i < bi->inl_names[k + 1]; i++)
					vec_push(&v, bi->inl[i]);
		}
	}
	vec_sort(&v, by_addr);
	*out = v.v;
	return v.n;
}

char *binfo_type_args_glob(const char *name)
{
	struct strbuf sb = {0};
	for (const char *dots; (dots = strstr(name, "[...]")); name = dots + 5)
		strbuf_printf(&sb, "%.*s[*]", (int)(dots - name), name);
	strbuf_puts(&sb, name);
	return sb.buf ? sb.buf : xstrdup("");
}
