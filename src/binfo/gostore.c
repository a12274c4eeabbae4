/*
 * gostore: a function's Go parameters (binfo_gofunc: names, places, the graph of their
 * types) kept by binfo_store for a binary of many functions, so that a script of a few
 * functions does not index the DWARF of all of them on every run (a web server's: ~1 s
 * of inflating and walking .debug_info). Written once read from DWARF; a record that
 * does not check out whole is read from DWARF again.
 *
 * Layout (native byte order): the header, the types (each followed by its name and its
 * fields, each field by its name), then the parameters (each followed by its pieces and
 * its name). A type is referred to by its index, -1 for none.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "binfo/binfo_int.h"
#include "binfo/gotypes.h"
#include "common/arena.h"
#include "common/util.h"

#define GOSTORE_WHAT "goparams, format 1"
#define GOSTORE_MIN_FUNCS 4096
#define GOSTORE_MAX_TYPES 65536

struct hdr {
	uint32_t ntypes, nparams;
};

struct trec {
	uint8_t kind, empty_iface;
	uint16_t pad;
	uint32_t name_len, nfields;
	int32_t elem, key, hdr;
	uint64_t size, align, count;
};

struct frec {
	uint64_t offset;
	uint32_t name_len;
	int32_t type;
	uint8_t embedded, pad[7];
};

struct prec {
	int64_t stack_off;
	uint32_t name_len;
	int32_t type;
	uint16_t npieces;
	uint8_t result, on_stack, pad[4];
};

/* the types reachable from the parameters, numbered in the order first met; an open
 * addressing table of their addresses finds a type's number */
struct numbering {
	VEC(const struct binfo_gotype *) v;
	const struct binfo_gotype **tab;
	int *idx;
	uint32_t cap;
};

static uint32_t ptr_hash(const void *p)
{
	uint64_t x = (uint64_t)(uintptr_t)p;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (uint32_t)x;
}

static int number(struct numbering *nb, const struct binfo_gotype *t)
{
	if (!t)
		return -1;
	if ((uint32_t)nb->v.n * 2 >= nb->cap) { /* grow: rehash what is numbered */
		uint32_t cap = nb->cap ? nb->cap * 2 : 256;
		free(nb->tab);
		free(nb->idx);
		nb->tab = xcalloc(cap, sizeof(*nb->tab));
		nb->idx = xcalloc(cap, sizeof(*nb->idx));
		nb->cap = cap;
		for (int i = 0; i < nb->v.n; i++) {
			uint32_t h = ptr_hash(nb->v.v[i]) & (cap - 1);
			while (nb->tab[h])
				h = (h + 1) & (cap - 1);
			nb->tab[h] = nb->v.v[i];
			nb->idx[h] = i;
		}
	}
	uint32_t h = ptr_hash(t) & (nb->cap - 1);
	for (; nb->tab[h]; h = (h + 1) & (nb->cap - 1))
		if (nb->tab[h] == t)
			return nb->idx[h];
	if (nb->v.n >= GOSTORE_MAX_TYPES)
		return -2;
	nb->tab[h] = t;
	nb->idx[h] = nb->v.n;
	vec_push(&nb->v, t);
	return nb->v.n - 1;
}

static char *key_of(const struct binfo *bi, const char *func)
{
	char *what = xasprintf("%s\n%s", GOSTORE_WHAT, func);
	char *key = binfo__store_key(bi, what);
	free(what);
	return key;
}

void binfo__gostore_save(struct binfo *bi, const struct binfo_gofunc *f)
{
	const struct binfo_store *st = binfo__store();
	if (!st || bi->nfuncs < GOSTORE_MIN_FUNCS)
		return;
	struct numbering nb = {0};
	bool ok = true;
	for (int i = 0; i < f->nparams; i++)
		ok &= number(&nb, f->params[i].type) != -2;
	/* every type met, breadth first: the numbering grows as it goes */
	for (int i = 0; ok && i < nb.v.n; i++) {
		const struct binfo_gotype *t = nb.v.v[i];
		ok = number(&nb, t->elem) != -2 && number(&nb, t->key) != -2 &&
		     number(&nb, t->hdr) != -2;
		for (int k = 0; ok && k < t->nfields; k++)
			ok = number(&nb, t->fields[k].type) != -2;
	}
	struct strbuf sb = {0};
	struct hdr h = {(uint32_t)nb.v.n, (uint32_t)f->nparams};
	strbuf_putn(&sb, (const char *)&h, sizeof(h));
	for (int i = 0; ok && i < nb.v.n; i++) {
		const struct binfo_gotype *t = nb.v.v[i];
		struct trec r = {.kind = (uint8_t)t->kind, .empty_iface = t->empty_iface,
				 .name_len = (uint32_t)strlen(t->name), .nfields = (uint32_t)t->nfields,
				 .elem = number(&nb, t->elem), .key = number(&nb, t->key),
				 .hdr = number(&nb, t->hdr), .size = t->size, .align = t->align,
				 .count = t->count};
		strbuf_putn(&sb, (const char *)&r, sizeof(r));
		strbuf_putn(&sb, t->name, r.name_len);
		for (int k = 0; k < t->nfields; k++) {
			const struct binfo_gofield *fd = &t->fields[k];
			struct frec fr = {.offset = fd->offset, .name_len = (uint32_t)strlen(fd->name),
					  .type = number(&nb, fd->type), .embedded = fd->embedded};
			strbuf_putn(&sb, (const char *)&fr, sizeof(fr));
			strbuf_putn(&sb, fd->name, fr.name_len);
		}
	}
	for (int i = 0; ok && i < f->nparams; i++) {
		const struct binfo_goparam *p = &f->params[i];
		struct prec r = {.stack_off = p->stack_off, .name_len = (uint32_t)strlen(p->name),
				 .type = number(&nb, p->type), .npieces = (uint16_t)p->npieces,
				 .result = p->result, .on_stack = p->on_stack};
		strbuf_putn(&sb, (const char *)&r, sizeof(r));
		if (p->npieces) /* (a parameter on the stack has none: no NULL to memcpy) */
			strbuf_putn(&sb, (const char *)p->pieces,
				    sizeof(*p->pieces) * (size_t)p->npieces);
		strbuf_putn(&sb, p->name, r.name_len);
	}
	if (ok && f->nparams < 65536) {
		char *key = key_of(bi, f->name);
		st->save(st->ctx, key, sb.buf, sb.len);
		free(key);
	}
	strbuf_free(&sb);
	vec_free(&nb.v);
	free(nb.tab);
	free(nb.idx);
}

/* A bounded reader: each take checks what is left. */
struct cur {
	const char *p, *end;
	bool ok;
};

static const void *take(struct cur *c, size_t n)
{
	if (!c->ok || (size_t)(c->end - c->p) < n) {
		c->ok = false;
		return NULL;
	}
	const void *r = c->p;
	c->p += n;
	return r;
}

/* The next N bytes copied into DST; false (and the reader stopped) when not there. */
static bool take_into(struct cur *c, void *dst, size_t n)
{
	const void *p = take(c, n);
	if (p)
		memcpy(dst, p, n);
	return p != NULL;
}

static const char *take_str(struct cur *c, struct arena *a, uint32_t n)
{
	const char *s = n < 65536 ? take(c, n) : NULL;
	if (!s)
		c->ok = false;
	return s ? arena_strndup(a, s, n) : NULL;
}

static bool index_ok(int32_t i, uint32_t n)
{
	return i >= -1 && (i < 0 || (uint32_t)i < n);
}

static int decode(struct cur *c, struct arena *a, const char *name, struct binfo_gofunc **out)
{
	struct hdr h;
	if (!take_into(c, &h, sizeof(h)))
		return -EINVAL;
	if (h.ntypes > GOSTORE_MAX_TYPES || h.nparams > 256)
		return -EINVAL;
	struct binfo_gotype *ts = arena_alloc(a, sizeof(*ts) * (h.ntypes ? h.ntypes : 1));
	int32_t(*links)[3] = xcalloc(h.ntypes ? h.ntypes : 1, sizeof(*links));
	for (uint32_t i = 0; c->ok && i < h.ntypes; i++) {
		struct trec r;
		c->ok = take_into(c, &r, sizeof(r)) && r.kind <= GK_FUNC && r.nfields <= 65536 &&
			index_ok(r.elem, h.ntypes) && index_ok(r.key, h.ntypes) &&
			index_ok(r.hdr, h.ntypes);
		if (!c->ok)
			break;
		ts[i] = (struct binfo_gotype){.kind = (enum binfo_gokind)r.kind,
					      .empty_iface = r.empty_iface, .size = r.size,
					      .align = r.align, .count = r.count,
					      .nfields = (int)r.nfields};
		links[i][0] = r.elem;
		links[i][1] = r.key;
		links[i][2] = r.hdr;
		ts[i].name = take_str(c, a, r.name_len);
		struct binfo_gofield *fs = arena_alloc(a, sizeof(*fs) * (r.nfields ? r.nfields : 1));
		for (uint32_t k = 0; c->ok && k < r.nfields; k++) {
			struct frec fr;
			c->ok = take_into(c, &fr, sizeof(fr)) && index_ok(fr.type, h.ntypes) &&
				fr.type >= 0;
			if (!c->ok)
				break;
			fs[k] = (struct binfo_gofield){.offset = fr.offset, .type = &ts[fr.type],
						       .embedded = fr.embedded != 0};
			fs[k].name = take_str(c, a, fr.name_len);
		}
		ts[i].fields = fs;
	}
	for (uint32_t i = 0; c->ok && i < h.ntypes; i++) {
		ts[i].elem = links[i][0] >= 0 ? &ts[links[i][0]] : NULL;
		ts[i].key = links[i][1] >= 0 ? &ts[links[i][1]] : NULL;
		ts[i].hdr = links[i][2] >= 0 ? &ts[links[i][2]] : NULL;
	}
	free(links);
	struct binfo_goparam *ps = arena_alloc(a, sizeof(*ps) * (h.nparams ? h.nparams : 1));
	for (uint32_t i = 0; c->ok && i < h.nparams; i++) {
		struct prec r;
		c->ok = take_into(c, &r, sizeof(r)) && index_ok(r.type, h.ntypes) && r.type >= 0 &&
			r.npieces <= 64;
		if (!c->ok)
			break;
		struct binfo_gopiece *pc = arena_alloc(a, sizeof(*pc) * (r.npieces ? r.npieces : 1));
		bool pp = take_into(c, pc, sizeof(*pc) * r.npieces);
		for (int k = 0; pp && k < r.npieces; k++)
			c->ok &= pc[k].ireg >= -1 && pc[k].ireg < 9 && pc[k].freg >= -1 &&
				 pc[k].freg < 15;
		ps[i] = (struct binfo_goparam){.result = r.result != 0, .type = &ts[r.type],
					       .on_stack = r.on_stack != 0,
					       .stack_off = r.stack_off, .npieces = r.npieces,
					       .pieces = pc};
		ps[i].name = take_str(c, a, r.name_len);
	}
	if (!c->ok || c->p != c->end)
		return -EINVAL;
	struct binfo_gofunc *f = arena_alloc(a, sizeof(*f));
	*f = (struct binfo_gofunc){arena_strdup(a, name), (int)h.nparams, ps};
	*out = f;
	return 0;
}

int binfo__gostore_load(struct binfo *bi, struct arena *a, const char *func,
			const struct binfo_gofunc **out)
{
	const struct binfo_store *st = bi->nfuncs >= GOSTORE_MIN_FUNCS ? binfo__store() : NULL;
	void *buf = NULL;
	size_t len = 0;
	char *key = st ? key_of(bi, func) : NULL;
	int err = key ? st->load(st->ctx, key, &buf, &len) : -ENOENT;
	free(key);
	if (!err && !buf)
		err = -ENOENT;
	if (!err) {
		struct cur c = {buf, (const char *)buf + len, true};
		struct binfo_gofunc *f = NULL;
		err = decode(&c, a, func, &f);
		*out = f;
	}
	free(buf);
	return err;
}
