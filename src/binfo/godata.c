/*
 * godata: Go parameters and types shipped as data, for stripped binaries. The runtime's
 * and the standard library's types are the same in every program one Go release
 * builds, so gotrace carries them per release (data/gotypes/go1.N.P.txt), written by
 * gotrace-godata from the DWARF of a build by that release: what goparams reads there,
 * placements included. A target without DWARF whose build info names a release the
 * data has reads its runtime and standard-library functions from here. The release is
 * the exact one: patch releases change standard-library types (net/http.response is
 * 232 bytes in go1.26.8, 240 in go1.26.11), so another patch's data would be a guess;
 * so would a devel or rc toolchain's, or a GOEXPERIMENT build's. Those have none.
 *
 * The text, one record a line, fields split by tabs (Go type names hold spaces):
 *   gotrace-gotypes 1 <TAB> go1.N.P
 *   T id kind size align count elem empty name      a type (elem: id or -)
 *   M offset type name                               a field of the T before it
 *   F name                                           a function
 *   P a|r type place name                            its parameters, then results;
 *       place: s<stack offset>, or pieces off:size:ireg:freg joined by ',' (- for none)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <limits.h>

#include "binfo/binfo.h"
#include "binfo/godata.h"
#include "common/arena.h"
#include "common/util.h"

#define GODATA_MAGIC "gotrace-gotypes 1"

static const char *const kind_names[] = {
	[GK_BOOL] = "bool",   [GK_INT] = "int",     [GK_UINT] = "uint",   [GK_FLOAT] = "float",
	[GK_COMPLEX] = "complex", [GK_PTR] = "ptr", [GK_STRING] = "string", [GK_SLICE] = "slice",
	[GK_ARRAY] = "array", [GK_STRUCT] = "struct", [GK_IFACE] = "iface", [GK_MAP] = "map",
	[GK_CHAN] = "chan",   [GK_FUNC] = "func",
};
#define NKINDS ((int)(sizeof(kind_names) / sizeof(kind_names[0])))

/* ---- writing ---- */

struct wtypes {
	const struct binfo_gotype **v; /* by id */
	int n, cap;
};

static int type_id(const struct wtypes *w, const struct binfo_gotype *t)
{
	for (int i = 0; i < w->n; i++) /* a few thousand types at most, written once */
		if (w->v[i] == t)
			return i;
	return -1;
}

/* Numbers T and everything it reaches, depth first in field order: the ids follow the
 * type graph, not DWARF's layout, so that two builds of one release write one file. */
static void number(struct wtypes *w, const struct binfo_gotype *t)
{
	if (!t || type_id(w, t) >= 0)
		return;
	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 256;
		w->v = xrealloc(w->v, sizeof(*w->v) * (size_t)w->cap);
	}
	w->v[w->n++] = t;
	number(w, t->elem);
	for (int i = 0; i < t->nfields; i++)
		number(w, t->fields[i].type);
}

static void write_place(FILE *out, const struct binfo_goparam *p)
{
	if (p->on_stack) {
		fprintf(out, "s%" PRId64, p->stack_off);
		return;
	}
	if (!p->npieces)
		fputc('-', out);
	for (int i = 0; i < p->npieces; i++)
		fprintf(out, "%s%u:%u:%d:%d", i ? "," : "", p->pieces[i].offset, p->pieces[i].size,
			p->pieces[i].ireg, p->pieces[i].freg);
}

int binfo_godata_write(FILE *out, const char *release, const struct binfo_gofunc *const *fs,
		       int n)
{
	struct wtypes w = {0};
	for (int i = 0; i < n; i++)
		for (int j = 0; j < fs[i]->nparams; j++)
			number(&w, fs[i]->params[j].type);
	fprintf(out, "%s\t%s\n", GODATA_MAGIC, release);
	for (int i = 0; i < w.n; i++) {
		const struct binfo_gotype *t = w.v[i];
		fprintf(out, "T\t%d\t%s\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t", i,
			kind_names[t->kind], t->size, t->align, t->count);
		if (t->elem)
			fprintf(out, "%d", type_id(&w, t->elem));
		else
			fputc('-', out);
		fprintf(out, "\t%d\t%s\n", t->empty_iface, t->name);
		for (int j = 0; j < t->nfields; j++)
			fprintf(out, "M\t%" PRIu64 "\t%d\t%s\n", t->fields[j].offset,
				type_id(&w, t->fields[j].type), t->fields[j].name);
	}
	for (int i = 0; i < n; i++) {
		fprintf(out, "F\t%s\n", fs[i]->name);
		for (int j = 0; j < fs[i]->nparams; j++) {
			const struct binfo_goparam *p = &fs[i]->params[j];
			fprintf(out, "P\t%c\t%d\t", p->result ? 'r' : 'a', type_id(&w, p->type));
			write_place(out, p);
			fprintf(out, "\t%s\n", p->name);
		}
	}
	free(w.v);
	return ferror(out) ? -EIO : 0;
}

/* ---- reading ---- */

struct binfo_godata {
	struct arena *a;
	char *release;
	struct binfo_gofunc *funcs; /* sorted by name */
	int nfuncs;
};

/* Types, fields and parameters as read: ids until every T is known. */
struct rfield {
	struct binfo_gofield f;
	long id;
};

struct rtype {
	struct binfo_gotype *t;
	long elem;
	int nfields, cap;
	struct rfield *fields;
};

/* Splits LINE at tabs into at most MAX fields (the last keeps any further tabs). */
static int split(char *line, char **f, int max)
{
	int n = 0;
	line[strcspn(line, "\n")] = 0;
	while (n < max - 1) {
		f[n++] = line;
		char *tab = strchr(line, '\t');
		if (!tab)
			return n;
		*tab = 0;
		line = tab + 1;
	}
	f[n++] = line;
	return n;
}

static bool num(const char *s, long long lo, long long hi, long long *v)
{
	char *end;
	errno = 0;
	*v = strtoll(s, &end, 10);
	return *s && !*end && !errno && *v >= lo && *v <= hi;
}

static bool read_place(struct arena *a, const char *s, struct binfo_goparam *p)
{
	long long v;
	if (s[0] == 's') {
		p->on_stack = true;
		if (!num(s + 1, 0, 1 << 20, &v))
			return false;
		p->stack_off = v;
		return true;
	}
	if (!strcmp(s, "-"))
		return true;
	int n = 1;
	for (const char *c = s; *c; c++)
		n += *c == ',';
	struct binfo_gopiece *pc = arena_alloc(a, sizeof(*pc) * (size_t)n);
	for (int i = 0; i < n; i++) {
		unsigned off, size;
		int ireg, freg, len = 0;
		if (sscanf(s, "%u:%u:%d:%d%n", &off, &size, &ireg, &freg, &len) != 4 || ireg < -1 ||
		    ireg > 8 || freg < -1 || freg > 14 || (s[len] && s[len] != ','))
			return false;
		pc[i] = (struct binfo_gopiece){off, size, (int8_t)ireg, (int8_t)freg};
		s += len + (s[len] == ',');
	}
	p->pieces = pc;
	p->npieces = n;
	return true;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct binfo_gofunc *)a)->name, ((const struct binfo_gofunc *)b)->name);
}

#define PUSH(v, n, cap, x)                                                                 \
	do {                                                                               \
		if ((n) == (cap)) {                                                        \
			(cap) = (cap) ? 2 * (cap) : 16;                                    \
			(v) = xrealloc((v), sizeof(*(v)) * (size_t)(cap));                 \
		}                                                                          \
		(v)[(n)++] = (x);                                                          \
	} while (0)

/* The parameters of the functions, each placed in the arena once the types are linked. */
struct rparam {
	struct binfo_goparam p;
	long id;
};

struct rfunc {
	const char *name;
	int nparams, cap;
	struct rparam *params;
};

static int parse(struct binfo_godata *d, FILE *f)
{
	struct rtype *ts = NULL;
	struct rfunc *fs = NULL;
	int nt = 0, ct = 0, nf = 0, cf = 0, err = -EINVAL;
	char *line = NULL, *fl[10];
	size_t lcap = 0;
	long long v[6];
	if (getline(&line, &lcap, f) < 0 || split(line, fl, 3) != 2 || strcmp(fl[0], GODATA_MAGIC))
		goto out;
	d->release = arena_strdup(d->a, fl[1]);
	while (getline(&line, &lcap, f) >= 0) {
		int n = split(line, fl, 10);
		if (!strcmp(fl[0], "T") && n == 9) {
			int k = 0;
			while (k < NKINDS && strcmp(kind_names[k], fl[2]))
				k++;
			if (k == NKINDS || !num(fl[1], nt, nt, &v[0]) ||
			    !num(fl[3], 0, INT64_MAX, &v[1]) || !num(fl[4], 0, 4096, &v[2]) ||
			    !num(fl[5], 0, INT64_MAX, &v[3]) || !num(fl[7], 0, 1, &v[4]))
				goto out;
			if (strcmp(fl[6], "-") && !num(fl[6], 0, INT32_MAX, &v[5]))
				goto out;
			struct binfo_gotype *t = arena_alloc(d->a, sizeof(*t));
			*t = (struct binfo_gotype){.kind = (enum binfo_gokind)k,
						   .name = arena_strdup(d->a, fl[8]),
						   .size = (uint64_t)v[1], .align = (uint64_t)v[2],
						   .count = (uint64_t)v[3], .empty_iface = v[4]};
			struct rtype r = {t, strcmp(fl[6], "-") ? (long)v[5] : -1, 0, 0, NULL};
			PUSH(ts, nt, ct, r);
		} else if (!strcmp(fl[0], "M") && n == 4 && nt) {
			struct rtype *r = &ts[nt - 1];
			if (!num(fl[1], 0, INT64_MAX, &v[0]) || !num(fl[2], 0, INT32_MAX, &v[1]))
				goto out;
			/* the type data does not keep which fields are embedded: none promoted */
			struct rfield fd = {{arena_strdup(d->a, fl[3]), (uint64_t)v[0], NULL, false},
					    (long)v[1]};
			PUSH(r->fields, r->nfields, r->cap, fd);
		} else if (!strcmp(fl[0], "F") && n == 2) {
			struct rfunc r = {arena_strdup(d->a, fl[1]), 0, 0, NULL};
			PUSH(fs, nf, cf, r);
		} else if (!strcmp(fl[0], "P") && n == 5 && nf && (!strcmp(fl[1], "a") ||
								   !strcmp(fl[1], "r"))) {
			struct rfunc *r = &fs[nf - 1];
			struct rparam p = {{.name = arena_strdup(d->a, fl[4]),
					    .result = fl[1][0] == 'r'}, 0};
			if (!num(fl[2], 0, INT32_MAX, &v[0]) || !read_place(d->a, fl[3], &p.p))
				goto out;
			p.id = (long)v[0];
			PUSH(r->params, r->nparams, r->cap, p);
		} else {
			goto out;
		}
	}
	/* link: every id must name a type the file has */
	for (int i = 0; i < nt; i++) {
		struct rtype *r = &ts[i];
		if (r->elem >= nt)
			goto out;
		r->t->elem = r->elem >= 0 ? ts[r->elem].t : NULL;
		if (r->nfields) {
			struct binfo_gofield *fd = arena_alloc(d->a, sizeof(*fd) * (size_t)r->nfields);
			for (int j = 0; j < r->nfields; j++) {
				if (r->fields[j].id >= nt)
					goto out;
				fd[j] = r->fields[j].f;
				fd[j].type = ts[r->fields[j].id].t;
			}
			r->t->fields = fd;
			r->t->nfields = r->nfields;
		}
	}
	d->funcs = arena_alloc(d->a, sizeof(*d->funcs) * (size_t)(nf ? nf : 1));
	for (int i = 0; i < nf; i++) {
		struct rfunc *r = &fs[i];
		struct binfo_goparam *ps = arena_alloc(d->a, sizeof(*ps) * (size_t)(r->nparams + 1));
		for (int j = 0; j < r->nparams; j++) {
			if (r->params[j].id >= nt)
				goto out;
			ps[j] = r->params[j].p;
			ps[j].type = ts[r->params[j].id].t;
		}
		d->funcs[i] = (struct binfo_gofunc){r->name, r->nparams, ps};
	}
	d->nfuncs = nf;
	qsort(d->funcs, (size_t)nf, sizeof(*d->funcs), by_name);
	err = 0;
out:
	for (int i = 0; i < nt; i++)
		free(ts[i].fields);
	for (int i = 0; i < nf; i++)
		free(fs[i].params);
	free(ts);
	free(fs);
	free(line);
	return err;
}

int binfo_godata__load(const char *path, struct binfo_godata **out)
{
	FILE *f = fopen(path, "re");
	*out = NULL;
	if (!f)
		return -errno;
	struct binfo_godata *d = xcalloc(1, sizeof(*d));
	d->a = arena__new();
	int err = parse(d, f);
	fclose(f);
	if (err) {
		binfo_godata__free(d);
		return err;
	}
	*out = d;
	return 0;
}

void binfo_godata__free(struct binfo_godata *d)
{
	if (!d)
		return;
	arena__free(d->a);
	free(d);
}

const char *binfo_godata_release(const struct binfo_godata *d)
{
	return d->release;
}

int binfo_godata_func(const struct binfo_godata *d, const char *name,
		      const struct binfo_gofunc **out)
{
	struct binfo_gofunc key = {.name = name};
	*out = bsearch(&key, d->funcs, (size_t)d->nfuncs, sizeof(*d->funcs), by_name);
	return *out ? 0 : -ENOENT;
}

/* Whether V is a release's version string, "go1.N" or "go1.N.P": a devel or rc
 * toolchain, or a GOEXPERIMENT build (" X:..."), may lay the runtime out otherwise. */
static bool is_release(const char *v)
{
	const char *p = v && !strncmp(v, "go1.", 4) ? v + 4 : NULL;
	if (!p || *p < '1' || *p > '9')
		return false;
	size_t n = strspn(p, "0123456789");
	const char *rest = p + n;
	if (*rest == '.' && rest[1] >= '0' && rest[1] <= '9')
		rest += 1 + strspn(rest + 1, "0123456789");
	return !*rest && n <= 3 && rest - v < 16;
}

int binfo_godata_path(const char *version, char *out, size_t len)
{
	char exe[PATH_MAX];
	const char *rel = version;
	if (!is_release(rel))
		return -ENOENT;
	const char *dir = gt_getenv("GOTYPES_DIR");
	if (dir && dir[0]) {
		snprintf(out, len, "%s/%s.txt", dir, rel);
		return access(out, R_OK) ? -ENOENT : 0;
	}
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -ENOENT;
	exe[n] = 0;
	*strrchr(exe, '/') = 0;
	/* the build directory has gotypes/ beside the executable; an install has
	 * PREFIX/share/gotrace/gotypes beside PREFIX/bin */
	snprintf(out, len, "%s/gotypes/%s.txt", exe, rel);
	if (!access(out, R_OK))
		return 0;
	snprintf(out, len, "%s/../share/gotrace/gotypes/%s.txt", exe, rel);
	return access(out, R_OK) ? -ENOENT : 0;
}
