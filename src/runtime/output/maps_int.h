/* maps_int: what the map readers and printers share inside output/ (maps.c, the reading
 * and bpftrace 0.17's order; maps_print.c, the 0.17 formats; tseries.c, current
 * bpftrace's time series; histk.c, hist(x, k)). */
#ifndef GT_RT_MAPS_INT_H
#define GT_RT_MAPS_INT_H

#include <stddef.h>

#include "common/util.h"
#include "runtime/output/output.h"

/* maps_print.c: the buckets of a histogram that hold counts: the first and last (*LO,
 * *HI) and the largest count; false when none does. */
bool rt_hist_range(const uint64_t *b, int nb, int *lo, int *hi, uint64_t *maxv);
/* One row of a histogram's text: LABEL, COUNT and bpftrace's bar (52 columns at MAXV). */
void rt_hist_row(struct strbuf *sb, const char *label, uint64_t count, uint64_t maxv);

struct rt_map {
	const struct plan_map *pm;
	int fd;
	bool is_array;        /* clear() zeroes instead of deleting */
	bool is_hist;         /* HIST or LHIST: key ends in a u64 bucket index */
	size_t key_size;      /* whole BPF key */
	size_t prefix_size;   /* the key without the bucket index (HIST, LHIST, TSERIES) */
	size_t stride;        /* bytes per value: the BPF value size, rounded up to 8 per CPU */
	int nvals;            /* values per key: possible CPUs when per CPU, else 1 */
	uint32_t max_entries;
	int nbuckets;         /* HIST, LHIST */
};

struct rt_maps {
	const struct gt_plan *plan;
	struct rt_map *maps;
	int nmaps;
	int full_fd; /* PLAN_MAP_FULL, -1 when absent */
	int full_nvals;
};

/* A snapshot of a map: the keys (sorted by bytes, unique) and their raw values. */
struct snap {
	uint8_t *keys, *vals;
	size_t n;
};

/* maps.c: all keys and values; keys in byte order. Keys that vanish between get_next_key
 * and lookup (a probe deleted them) are skipped. Returns 0, or a negative errno with what
 * was read so far in *s. */
int rt_maps_snapshot(const struct rt_map *m, struct snap *s);
void rt_maps_snap_free(struct snap *s);

/* One key of a map after the CPUs are combined (for histograms: one key prefix). */
struct row {
	const uint8_t *key; /* prefix_size bytes */
	uint64_t num;       /* INT, COUNT, SUM, MIN, MAX: the value's bits */
	const char *str;    /* STR */
	size_t slen;
	const uint8_t *tuple; /* TUPLE: the value's bytes (plan_map.value) */
	int64_t count, total, avg; /* AVG, STATS */
	uint64_t *buckets;  /* HIST, LHIST: nbuckets counts */
	uint64_t sum;       /* HIST, LHIST: sum of the buckets */
};

/* maps.c: the rows of a map in print order. Returns the count; *rows and *bucket_mem are
 * freed by the caller. */
size_t rt_maps_rows(const struct rt_maps *ms, const struct rt_map *m, const struct snap *s,
		    struct row **rows_out, struct row ***order_out, uint64_t **bucket_mem);
/* maps.c: the function or probe name (KIND) of the site ID, NULL when unknown. */
const char *rt_maps_site_name(const struct rt_maps *ms, enum plan_arg_kind kind, uint64_t id);

/* maps_print.c: one key field of KEY as print shows it (text, or escaped for a JSON
 * string). */
void rt_maps_key_field(struct strbuf *sb, const struct rt_maps *ms, const struct plan_arg *f,
		       const uint8_t *key, bool json);

/* tseries.c: a TSERIES map's snapshot S as current bpftrace prints it. */
void rt_tseries_format(struct strbuf *sb, const struct rt_maps *ms, const struct rt_map *m,
		       const struct snap *s, bool json);

#endif
