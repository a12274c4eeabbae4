/* maps_otlp: --otlp, the script's maps as OpenTelemetry metrics, read as print() reads
 * them (rt_maps_snapshot, rt_maps_rows) every OTEL_METRIC_EXPORT_INTERVAL and at the end:
 *   count()                        a monotonic cumulative Sum
 *   sum()                          a cumulative Sum
 *   an integer, avg(), min(), max() a Gauge
 *   stats()                        NAME.count (Sum), NAME.avg (Gauge), NAME.total (Sum)
 *   hist(), lhist()                a cumulative Histogram, one bucket per bpftrace bucket:
 *                                  bpftrace's [lo, hi) of integers is OTLP's (lo-1, hi-1]
 * The metric is the map's name without '@' ("map" for @); the key is the attribute "key",
 * or key.0, key.1, ... for a tuple; integers typed, the rest as print() shows them.
 * Strings, tuples as values and tseries() are not exported. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/otlp/otlp.h"
#include "runtime/output/maps_int.h"

/* The inclusive upper bound of hist/lhist bucket I: OTLP's explicit bound. */
static double upper(const struct plan_map *pm, int i)
{
	if (pm->kind == PLAN_MAP_LHIST) /* 0: below min; i: [min + (i-1)step, min + i*step) */
		return (double)(pm->lhist_min + (int64_t)i * pm->lhist_step - 1);
	if (i == 0) /* below 0 */
		return -1;
	if (!pm->hist_bits) /* 1: the value 0; i: [2^(i-2), 2^(i-1)) */
		return i == 1 ? 0 : (double)((1ull << (i - 1)) - 1);
	int k = pm->hist_bits; /* histk.c's label(i) - 1 */
	if (i <= (2 << k))
		return i - 1;
	uint32_t n = 1u << k, interval = (uint32_t)i & (n - 1), power = ((uint32_t)i >> k) - 1;
	return (double)(((uint64_t)1 << power) * (n + interval)) - 1;
}

struct point_set {
	struct otlp_point *pts;
	struct otlp_kv *kvs; /* nkeys per point */
	struct strbuf *texts; /* nkeys per point: the key fields' text */
	int n, nkeys;
};

static void key_attrs(const struct rt_maps *ms, const struct plan_map *pm, const uint8_t *key,
		      struct point_set *ps, char **names)
{
	struct otlp_kv *kv = &ps->kvs[ps->n * ps->nkeys];
	struct strbuf *tx = &ps->texts[ps->n * ps->nkeys];
	for (int f = 0; f < pm->nkeys; f++) {
		const struct plan_arg *a = &pm->keys[f];
		if (a->kind == PLAN_ARG_INT && !a->enum_id && !a->is_bool && !a->is_addr &&
		    !a->bit_width && a->size == 8) {
			int64_t v;
			memcpy(&v, key + a->offset, sizeof(v));
			kv[f] = OTLP_KV_INT(names[f], v);
			continue;
		}
		rt_maps_key_field(&tx[f], ms, a, key, false);
		kv[f] = OTLP_KV_STR(names[f], tx[f].buf ? tx[f].buf : "");
	}
	ps->pts[ps->n].attrs = kv;
	ps->pts[ps->n].nattrs = pm->nkeys;
}

static void export_map(struct rt_maps *ms, struct rt_map *m, struct otlp *x, int pid,
		       uint64_t start_unix, uint64_t now_unix)
{
	const struct plan_map *pm = m->pm;
	enum plan_map_kind k = pm->kind;
	if (k == PLAN_MAP_STR || k == PLAN_MAP_VALUE || k == PLAN_MAP_TSERIES)
		return;
	struct snap s;
	if (rt_maps_snapshot(m, &s)) {
		rt_maps_snap_free(&s);
		return;
	}
	struct row *rows, **order;
	uint64_t *bucket_mem;
	size_t n = rt_maps_rows(ms, m, &s, &rows, &order, &bucket_mem);
	int nk = pm->nkeys;
	char **names = xcalloc((size_t)nk + 1, sizeof(*names));
	for (int f = 0; f < nk; f++)
		names[f] = nk == 1 ? xstrdup("key") : xasprintf("key.%d", f);
	/* stats(): three metrics of the same points */
	struct point_set ps[3] = {{0}};
	int nsets = k == PLAN_MAP_STATS ? 3 : 1;
	for (int j = 0; j < nsets; j++) {
		ps[j].pts = xcalloc(n + 1, sizeof(*ps[j].pts));
		ps[j].kvs = xcalloc((n + 1) * (size_t)(nk + 1), sizeof(*ps[j].kvs));
		ps[j].texts = xcalloc((n + 1) * (size_t)(nk + 1), sizeof(*ps[j].texts));
		ps[j].nkeys = nk;
	}
	for (size_t i = 0; i < n; i++) {
		const struct row *r = order[i];
		for (int j = 0; j < nsets; j++) {
			key_attrs(ms, pm, r->key, &ps[j], names);
			struct otlp_point *p = &ps[j].pts[ps[j].n++];
			if (k == PLAN_MAP_HIST || k == PLAN_MAP_LHIST) {
				p->buckets = r->buckets;
				p->count = r->sum; /* rows' sum: the buckets' total count */
			} else if (k == PLAN_MAP_AVG || k == PLAN_MAP_STATS) {
				p->i = j == 0 && k == PLAN_MAP_STATS ? r->count
				       : j == 2 ? r->total : r->avg;
			} else {
				p->i = (int64_t)r->num;
			}
		}
	}
	const char *base = pm->name[1] ? pm->name + 1 : "map";
	double *bounds = NULL;
	struct otlp_metric om = {.name = base, .start_unix_ns = start_unix, .unix_ns = now_unix,
				 .points = ps[0].pts, .npoints = ps[0].n};
	if (k == PLAN_MAP_HIST || k == PLAN_MAP_LHIST) {
		om.kind = OTLP_M_HIST;
		om.nbounds = m->nbuckets - 1;
		bounds = xcalloc((size_t)m->nbuckets, sizeof(*bounds));
		for (int i = 0; i < om.nbounds; i++)
			bounds[i] = upper(pm, i);
		om.bounds = bounds;
		otlp__metric(x, pid, &om);
	} else if (k == PLAN_MAP_STATS) {
		static const char *const part[3] = {"count", "avg", "total"};
		for (int j = 0; j < 3; j++) {
			char *nm = xasprintf("%s.%s", base, part[j]);
			om.name = nm;
			om.kind = j == 1 ? OTLP_M_GAUGE : OTLP_M_SUM;
			om.monotonic = j == 0;
			om.points = ps[j].pts;
			om.npoints = ps[j].n;
			otlp__metric(x, pid, &om);
			free(nm);
		}
	} else {
		om.kind = k == PLAN_MAP_COUNT || k == PLAN_MAP_SUM ? OTLP_M_SUM : OTLP_M_GAUGE;
		om.monotonic = k == PLAN_MAP_COUNT;
		otlp__metric(x, pid, &om);
	}
	free(bounds);
	for (int j = 0; j < nsets; j++) {
		for (int t = 0; t < ps[j].n * nk; t++)
			strbuf_free(&ps[j].texts[t]);
		free(ps[j].texts);
		free(ps[j].kvs);
		free(ps[j].pts);
	}
	for (int f = 0; f < nk; f++)
		free(names[f]);
	free(names);
	free(order);
	free(rows);
	free(bucket_mem);
	rt_maps_snap_free(&s);
}

void rt_maps__export(struct rt_maps *ms, struct otlp *x, int pid, uint64_t start_unix)
{
	if (!ms || !x)
		return;
	uint64_t now_unix = now_ns() + (uint64_t)wall_off_ns();
	for (int i = 0; i < ms->nmaps; i++)
		export_map(ms, &ms->maps[i], x, pid, start_unix, now_unix);
}
