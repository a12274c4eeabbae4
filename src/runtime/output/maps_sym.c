/* maps_sym: one row per printed name for maps keyed by usym()/ksym()/caller. Such a key
 * holds an address, so two call sites in one function are two BPF keys that print the
 * same ("@created[main.spawnWork]" twice, tools/goroutines.gt). The snapshot's keys are
 * rewritten to one address per name, and entries that become equal have their values
 * combined as the kind adds them up (per CPU, slot by slot). */
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "runtime/output/output.h"

struct ent {
	uint8_t *key, *val;
};

static size_t g_ks; /* qsort's key size (single-threaded printing) */

static int cmp_ent(const void *a, const void *b)
{
	return memcmp(((const struct ent *)a)->key, ((const struct ent *)b)->key, g_ks);
}

bool rt_maps_has_sym_keys(const struct plan_map *pm)
{
	for (int i = 0; i < pm->nkeys; i++)
		if (pm->keys[i].kind == PLAN_ARG_SYM)
			return true;
	return false;
}

/* Adds the per-CPU value SRC into DST (NVALS values STRIDE apart). */
static void merge_val(const struct plan_map *pm, uint8_t *dst, const uint8_t *src, size_t stride,
		      int nvals)
{
	for (int c = 0; c < nvals; c++) {
		uint8_t *d = dst + (size_t)c * stride;
		const uint8_t *p = src + (size_t)c * stride;
		uint64_t x = rt_rd64(d), y = rt_rd64(p);
		switch (pm->kind) {
		case PLAN_MAP_MIN:
		case PLAN_MAP_MAX: { /* {value, set} */
			if (!rt_rd64(p + 8))
				break;
			bool take = !rt_rd64(d + 8);
			if (!take && pm->value_signed)
				take = pm->kind == PLAN_MAP_MIN ? (int64_t)y < (int64_t)x : (int64_t)y > (int64_t)x;
			else if (!take)
				take = pm->kind == PLAN_MAP_MIN ? y < x : y > x;
			if (take)
				memcpy(d, p, 16);
			break;
		}
		case PLAN_MAP_AVG:
		case PLAN_MAP_STATS: { /* {count, total} */
			uint64_t t = rt_rd64(d + 8) + rt_rd64(p + 8);
			x += y;
			memcpy(d, &x, 8);
			memcpy(d + 8, &t, 8);
			break;
		}
		case PLAN_MAP_INT:
		case PLAN_MAP_COUNT:
		case PLAN_MAP_SUM:
		case PLAN_MAP_HIST:
		case PLAN_MAP_LHIST:
			x += y;
			memcpy(d, &x, 8);
			break;
		case PLAN_MAP_STR:
		case PLAN_MAP_VALUE:
		case PLAN_MAP_TSERIES:
			break; /* the first one's */
		}
	}
}

size_t rt_maps_merge_syms(const struct plan_map *pm, uint8_t *keys, uint8_t *vals, size_t n,
			  size_t ks, size_t vs, size_t stride, int nvals)
{
	VEC(char *) names = {0};
	VEC(uint64_t) reps = {0};
	for (size_t r = 0; r < n; r++) {
		uint8_t *k = keys + r * ks;
		for (int i = 0; i < pm->nkeys; i++) {
			const struct plan_arg *f = &pm->keys[i];
			if (f->kind != PLAN_ARG_SYM)
				continue;
			struct strbuf t = {0};
			rt_sym_format(&t, f, k + f->offset);
			const char *name = t.buf ? t.buf : "";
			int j = 0;
			while (j < names.n && strcmp(names.v[j], name))
				j++;
			if (j == names.n) {
				vec_push(&names, xstrdup(name));
				vec_push(&reps, rt_rd64(k + f->offset));
			}
			memcpy(k + f->offset, &reps.v[j], 8); /* the pid after it stays */
			strbuf_free(&t);
		}
	}
	for (int j = 0; j < names.n; j++)
		free(names.v[j]);
	vec_free(&names);
	vec_free(&reps);
	if (n < 2)
		return n;
	/* sort by the rewritten keys, merge equal ones, then lay them out again */
	struct ent *e = xmalloc(n * sizeof(*e));
	for (size_t r = 0; r < n; r++)
		e[r] = (struct ent){keys + r * ks, vals + r * vs};
	g_ks = ks;
	qsort(e, n, sizeof(*e), cmp_ent);
	uint8_t *nk = xmalloc(n * ks), *nv = xmalloc(n * vs);
	size_t w = 0;
	for (size_t r = 0; r < n; r++) {
		if (w && !memcmp(nk + (w - 1) * ks, e[r].key, ks)) {
			merge_val(pm, nv + (w - 1) * vs, e[r].val, stride, nvals);
			continue;
		}
		memcpy(nk + w * ks, e[r].key, ks);
		memcpy(nv + w * vs, e[r].val, vs);
		w++;
	}
	memcpy(keys, nk, w * ks);
	memcpy(vals, nv, w * vs);
	free(nk);
	free(nv);
	free(e);
	return w;
}
