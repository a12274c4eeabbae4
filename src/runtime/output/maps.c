/* maps: the script's maps read out of the kernel (a snapshot of each, the CPUs' values
 * combined) and put in the order bpftrace 0.17 prints them; clear(), zero(), and the
 * warnings of maps that were full. maps_print.c prints them.
 *
 * The order (bpftrace 0.17 was the oracle; tests/unit/maps_selftest diffs against it):
 * - Order of the keys: int, count, sum, min, max by value (ascending; ties, which bpftrace
 *   leaves in hash order, by key as below); string-valued maps by key: field by field,
 *   integers as unsigned 64-bit numbers (so -1 sorts last, as bpftrace), strings by
 *   strncmp, sites by name; hist/lhist by the sum of their buckets, avg/stats by the
 *   average, both exactly as bpftrace: keys in byte order first, then libstdc++'s
 *   std::sort (an introsort, unstable: ties beyond 16 keys move), replicated below.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/diag.h"
#include "common/util.h"
#include "runtime/output/maps_int.h"
#include "runtime/output/output.h"

#define LHIST_MAX_BUCKETS (1 << 20)

/* ---- small helpers ---------------------------------------------------------------- */

static bool is_percpu_type(enum bpf_map_type t)
{
	return t == BPF_MAP_TYPE_PERCPU_HASH || t == BPF_MAP_TYPE_PERCPU_ARRAY ||
	       t == BPF_MAP_TYPE_LRU_PERCPU_HASH;
}

static size_t round8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static int64_t div_trunc(int64_t a, int64_t b)
{
	if (b == 0)
		return 0;
	if (b == -1) /* INT64_MIN / -1 overflows */
		return (int64_t)(0 - (uint64_t)a);
	return a / b;
}

const char *rt_maps_site_name(const struct rt_maps *ms, enum plan_arg_kind kind, uint64_t id)
{
	uint64_t i = id & 0xffffffffu;
	if (!ms->plan->sites || i >= (uint64_t)ms->plan->nsites)
		return NULL;
	const struct plan_site *s = &ms->plan->sites[i];
	return kind == PLAN_ARG_SITE_FUNC ? s->func : s->probe;
}

/* ---- reading ---------------------------------------------------------------------- */

static int cmp_key_bytes(const void *a, const void *b, void *ctx)
{
	return memcmp(a, b, *(const size_t *)ctx);
}

int rt_maps_snapshot(const struct rt_map *m, struct snap *s)
{
	size_t ks = m->key_size, vs = m->stride * (size_t)m->nvals;
	size_t cap = 0, limit = 2 * (size_t)m->max_entries + 64;
	int ret = 0;

	memset(s, 0, sizeof(*s));
	/* Iteration restarts from the first key when the previous one was deleted under
	 * us; the limit stops a map that keeps changing, duplicates are dropped below. */
	for (size_t steps = 0; steps < limit; steps++) {
		if (s->n == cap) {
			cap = cap ? 2 * cap : 64;
			s->keys = xrealloc(s->keys, cap * ks);
		}
		const uint8_t *prev = s->n ? s->keys + (s->n - 1) * ks : NULL;
		if (bpf_map_get_next_key(m->fd, prev, s->keys + s->n * ks)) {
			if (errno != ENOENT)
				ret = -errno;
			break;
		}
		s->n++;
	}
	if (s->n > 1) {
		/* sort whole entries by key bytes, then drop duplicates */
		qsort_r(s->keys, s->n, ks, cmp_key_bytes, &ks);
		size_t w = 1;
		for (size_t r = 1; r < s->n; r++) {
			if (memcmp(s->keys + r * ks, s->keys + (w - 1) * ks, ks) == 0)
				continue;
			if (w != r)
				memcpy(s->keys + w * ks, s->keys + r * ks, ks);
			w++;
		}
		s->n = w;
	}
	s->vals = xmalloc(s->n * vs + 1);
	size_t w = 0;
	for (size_t r = 0; r < s->n; r++) {
		uint8_t *k = s->keys + r * ks;
		if (bpf_map_lookup_elem(m->fd, k, s->vals + w * vs)) {
			if (errno != ENOENT && !ret)
				ret = -errno;
			continue;
		}
		if (w != r)
			memmove(s->keys + w * ks, k, ks);
		w++;
	}
	s->n = w;
	if (rt_maps_has_sym_keys(m->pm)) /* one row per printed name, not per address */
		s->n = rt_maps_merge_syms(m->pm, s->keys, s->vals, s->n, ks, vs, m->stride, m->nvals);
	return ret;
}

void rt_maps_snap_free(struct snap *s)
{
	free(s->keys);
	free(s->vals);
	memset(s, 0, sizeof(*s));
}

/* The keys only, for clear() and zero(). */
static size_t collect_keys(const struct rt_map *m, uint8_t **out)
{
	size_t ks = m->key_size, n = 0, cap = 64;
	size_t limit = 2 * (size_t)m->max_entries + 64;
	uint8_t *keys = xmalloc(cap * ks);
	for (size_t steps = 0; steps < limit; steps++) {
		if (n == cap) {
			cap *= 2;
			keys = xrealloc(keys, cap * ks);
		}
		if (bpf_map_get_next_key(m->fd, n ? keys + (n - 1) * ks : NULL, keys + n * ks))
			break;
		n++;
	}
	*out = keys;
	return n;
}

/* ---- combining the CPUs ----------------------------------------------------------- */

static void combine(const struct rt_map *m, const uint8_t *v, struct row *r)
{
	const struct plan_map *pm = m->pm;
	switch (pm->kind) {
	case PLAN_MAP_INT:
	case PLAN_MAP_COUNT:
	case PLAN_MAP_SUM:
		for (int c = 0; c < m->nvals; c++)
			r->num += rt_rd64(v + (size_t)c * m->stride);
		break;
	case PLAN_MAP_VALUE: /* never per CPU */
		r->tuple = v;
		break;
	case PLAN_MAP_STR:
		/* Per CPU only by accident: the first CPU that has text wins. */
		r->str = (const char *)v;
		r->slen = strnlen(r->str, (size_t)pm->value_size);
		for (int c = 1; c < m->nvals && r->slen == 0; c++) {
			r->str = (const char *)v + (size_t)c * m->stride;
			r->slen = strnlen(r->str, (size_t)pm->value_size);
		}
		break;
	case PLAN_MAP_MIN:
	case PLAN_MAP_MAX: {
		bool any = false;
		uint64_t best = 0;
		for (int c = 0; c < m->nvals; c++) {
			const uint8_t *p = v + (size_t)c * m->stride;
			if (!rt_rd64(p + 8))
				continue;
			uint64_t x = rt_rd64(p);
			bool better;
			if (pm->value_signed)
				better = pm->kind == PLAN_MAP_MIN ? (int64_t)x < (int64_t)best
								  : (int64_t)x > (int64_t)best;
			else
				better = pm->kind == PLAN_MAP_MIN ? x < best : x > best;
			if (!any || better)
				best = x;
			any = true;
		}
		r->num = best; /* never set (zero()'d): 0, as bpftrace prints it */
		break;
	}
	case PLAN_MAP_AVG:
	case PLAN_MAP_STATS: {
		uint64_t cnt = 0, tot = 0;
		for (int c = 0; c < m->nvals; c++) {
			cnt += rt_rd64(v + (size_t)c * m->stride);
			tot += rt_rd64(v + (size_t)c * m->stride + 8);
		}
		r->count = (int64_t)cnt;
		r->total = (int64_t)tot;
		r->avg = div_trunc(r->total, r->count);
		break;
	}
	case PLAN_MAP_HIST:
	case PLAN_MAP_LHIST:
	case PLAN_MAP_TSERIES:
		break; /* grouped by the caller; tseries.c */
	}
}

/* ---- libstdc++'s std::sort (GCC 12), as bpftrace 0.17 sorts histograms and stats ----
 * Ties are not stable beyond 16 elements; replicating the algorithm step by step gives
 * bpftrace's exact order from the same (byte-ordered) input. */

struct sorter {
	bool (*less)(const struct row *a, const struct row *b, const void *ctx);
	const void *ctx;
};

#define LESS(s, a, b) ((s)->less((a), (b), (s)->ctx))
#define SORT_THRESHOLD 16

static void row_swap(struct row **a, struct row **b)
{
	struct row *t = *a;
	*a = *b;
	*b = t;
}

static void unguarded_linear_insert(struct row **last, const struct sorter *s)
{
	struct row *val = *last;
	struct row **next = last - 1;
	while (LESS(s, val, *next)) {
		*last = *next;
		last = next;
		--next;
	}
	*last = val;
}

static void insertion_sort(struct row **first, struct row **last, const struct sorter *s)
{
	if (first == last)
		return;
	for (struct row **i = first + 1; i != last; ++i) {
		if (LESS(s, *i, *first)) {
			struct row *val = *i;
			memmove(first + 1, first, (size_t)(i - first) * sizeof(*first));
			*first = val;
		} else {
			unguarded_linear_insert(i, s);
		}
	}
}

static void final_insertion_sort(struct row **first, struct row **last, const struct sorter *s)
{
	if (last - first > SORT_THRESHOLD) {
		insertion_sort(first, first + SORT_THRESHOLD, s);
		for (struct row **i = first + SORT_THRESHOLD; i != last; ++i)
			unguarded_linear_insert(i, s);
	} else {
		insertion_sort(first, last, s);
	}
}

static void move_median_to_first(struct row **result, struct row **a, struct row **b,
				 struct row **c, const struct sorter *s)
{
	if (LESS(s, *a, *b)) {
		if (LESS(s, *b, *c))
			row_swap(result, b);
		else if (LESS(s, *a, *c))
			row_swap(result, c);
		else
			row_swap(result, a);
	} else if (LESS(s, *a, *c)) {
		row_swap(result, a);
	} else if (LESS(s, *b, *c)) {
		row_swap(result, c);
	} else {
		row_swap(result, b);
	}
}

static struct row **unguarded_partition(struct row **first, struct row **last,
					struct row **pivot, const struct sorter *s)
{
	for (;;) {
		while (LESS(s, *first, *pivot))
			++first;
		--last;
		while (LESS(s, *pivot, *last))
			--last;
		if (!(first < last))
			return first;
		row_swap(first, last);
		++first;
	}
}

static void push_heap(struct row **first, ptrdiff_t hole, ptrdiff_t top, struct row *value,
		      const struct sorter *s)
{
	ptrdiff_t parent = (hole - 1) / 2;
	while (hole > top && LESS(s, first[parent], value)) {
		first[hole] = first[parent];
		hole = parent;
		parent = (hole - 1) / 2;
	}
	first[hole] = value;
}

static void adjust_heap(struct row **first, ptrdiff_t hole, ptrdiff_t len, struct row *value,
			const struct sorter *s)
{
	const ptrdiff_t top = hole;
	ptrdiff_t child = hole;
	while (child < (len - 1) / 2) {
		child = 2 * (child + 1);
		if (LESS(s, first[child], first[child - 1]))
			child--;
		first[hole] = first[child];
		hole = child;
	}
	if ((len & 1) == 0 && child == (len - 2) / 2) {
		child = 2 * (child + 1);
		first[hole] = first[child - 1];
		hole = child - 1;
	}
	push_heap(first, hole, top, value, s);
}

static void pop_heap(struct row **first, struct row **last, struct row **result,
		     const struct sorter *s)
{
	struct row *value = *result;
	*result = *first;
	adjust_heap(first, 0, last - first, value, s);
}

static void heap_sort_all(struct row **first, struct row **last, const struct sorter *s)
{
	/* __partial_sort(first, last, last): __heap_select (make_heap only) + __sort_heap */
	ptrdiff_t len = last - first;
	if (len >= 2) {
		for (ptrdiff_t parent = (len - 2) / 2;; parent--) {
			adjust_heap(first, parent, len, first[parent], s);
			if (parent == 0)
				break;
		}
	}
	while (last - first > 1) {
		--last;
		pop_heap(first, last, last, s);
	}
}

static void introsort_loop(struct row **first, struct row **last, long depth,
			   const struct sorter *s)
{
	while (last - first > SORT_THRESHOLD) {
		if (depth == 0) {
			heap_sort_all(first, last, s);
			return;
		}
		--depth;
		struct row **mid = first + (last - first) / 2;
		move_median_to_first(first, first + 1, mid, last - 1, s);
		struct row **cut = unguarded_partition(first + 1, last, first, s);
		introsort_loop(cut, last, depth, s);
		last = cut;
	}
}

static void std_sort(struct row **first, size_t n, const struct sorter *s)
{
	if (n == 0)
		return;
	long lg = (long)(sizeof(unsigned long) * 8 - 1) - __builtin_clzl((unsigned long)n);
	introsort_loop(first, first + n, lg * 2, s);
	final_insertion_sort(first, first + n, s);
}

/* ---- ordering --------------------------------------------------------------------- */

struct order_ctx {
	const struct rt_maps *ms;
	const struct rt_map *m;
};

/* bpftrace's sort_by_key: field by field, integers unsigned, strings strncmp; sites by
 * name (bpftrace leaves them unsorted); then the bytes so the order is total. */
static int cmp_keys(const struct order_ctx *c, const uint8_t *a, const uint8_t *b)
{
	const struct plan_map *pm = c->m->pm;
	for (int i = 0; i < pm->nkeys; i++) {
		const struct plan_arg *f = &pm->keys[i];
		const uint8_t *pa = a + f->offset, *pb = b + f->offset;
		int r = 0;
		switch (f->kind) {
		case PLAN_ARG_INT: {
			uint64_t x = rt_rd64(pa), y = rt_rd64(pb);
			r = x < y ? -1 : x > y;
			break;
		}
		case PLAN_ARG_STR:
			r = strncmp((const char *)pa, (const char *)pb, (size_t)f->size);
			break;
		case PLAN_ARG_SITE_FUNC:
		case PLAN_ARG_SITE_PROBE: {
			const char *x = rt_maps_site_name(c->ms, f->kind, rt_rd64(pa));
			const char *y = rt_maps_site_name(c->ms, f->kind, rt_rd64(pb));
			r = strcmp(x ? x : "", y ? y : "");
			break;
		}
		case PLAN_ARG_STRFTIME:
		case PLAN_ARG_STRERROR:
		case PLAN_ARG_USERNAME:
		case PLAN_ARG_CGROUP_PATH: {
			uint64_t x = rt_rd64(pa), y = rt_rd64(pb);
			r = x < y ? -1 : x > y;
			break;
		}
		case PLAN_ARG_BUF:
		case PLAN_ARG_INET:
		case PLAN_ARG_STACK:
		case PLAN_ARG_SYM:
			r = memcmp(pa, pb, (size_t)f->size);
			break;
		case PLAN_ARG_GO: { /* a Go interface: by the text %v shows */
			struct strbuf x = {0}, y = {0};
			rt_value_format(&x, c->ms->plan, f, a, false);
			rt_value_format(&y, c->ms->plan, f, b, false);
			r = strcmp(x.buf ? x.buf : "", y.buf ? y.buf : "");
			strbuf_free(&x);
			strbuf_free(&y);
			break;
		}
		case PLAN_ARG_TUPLE: /* keys are never tuples nor structs (sema) */
		case PLAN_ARG_STRUCT:
		case PLAN_ARG_ARRAY:
			break;
		}
		if (r)
			return r;
	}
	return memcmp(a, b, c->m->prefix_size);
}

static int cmp_rows(const void *pa, const void *pb, void *ctx)
{
	const struct order_ctx *c = ctx;
	const struct row *a = *(const struct row *const *)pa, *b = *(const struct row *const *)pb;
	const struct plan_map *pm = c->m->pm;
	switch (pm->kind) {
	case PLAN_MAP_INT:
	case PLAN_MAP_SUM:
	case PLAN_MAP_MIN:
	case PLAN_MAP_MAX:
	case PLAN_MAP_COUNT:
		if (a->num != b->num) {
			if (pm->value_signed && pm->kind != PLAN_MAP_COUNT)
				return (int64_t)a->num < (int64_t)b->num ? -1 : 1;
			return a->num < b->num ? -1 : 1;
		}
		break;
	default:
		break;
	}
	return cmp_keys(c, a->key, b->key);
}

static bool less_sum(const struct row *a, const struct row *b, const void *ctx)
{
	(void)ctx;
	return a->sum < b->sum;
}

static bool less_avg(const struct row *a, const struct row *b, const void *ctx)
{
	(void)ctx;
	return a->avg < b->avg;
}

/* ---- rows in print order --------------------------------------------------------- */

size_t rt_maps_rows(const struct rt_maps *ms, const struct rt_map *m, const struct snap *s,
		    struct row **rows_out, struct row ***order_out, uint64_t **bucket_mem)
{
	const struct plan_map *pm = m->pm;
	size_t ks = m->key_size, vs = m->stride * (size_t)m->nvals;
	struct row *rows = xcalloc(s->n ? s->n : 1, sizeof(*rows));
	size_t n = 0;
	*bucket_mem = NULL;

	if (m->is_hist) {
		/* keys are in byte order, so one prefix's buckets are adjacent */
		size_t ngroups = 0;
		for (size_t i = 0; i < s->n; i++)
			if (i == 0 || memcmp(s->keys + i * ks, s->keys + (i - 1) * ks, m->prefix_size))
				ngroups++;
		uint64_t *mem = xcalloc(ngroups ? ngroups * (size_t)m->nbuckets : 1, sizeof(uint64_t));
		*bucket_mem = mem;
		for (size_t i = 0; i < s->n; i++) {
			const uint8_t *k = s->keys + i * ks;
			if (n == 0 || memcmp(k, rows[n - 1].key, m->prefix_size)) {
				rows[n].key = k;
				rows[n].buckets = mem + n * (size_t)m->nbuckets;
				n++;
			}
			struct row *r = &rows[n - 1];
			uint64_t bucket = rt_rd64(k + m->prefix_size), cnt = 0;
			for (int c = 0; c < m->nvals; c++)
				cnt += rt_rd64(s->vals + i * vs + (size_t)c * m->stride);
			if (bucket < (uint64_t)m->nbuckets)
				r->buckets[bucket] += cnt;
			r->sum += cnt;
		}
	} else {
		for (size_t i = 0; i < s->n; i++) {
			rows[n].key = s->keys + i * ks;
			combine(m, s->vals + i * vs, &rows[n]);
			n++;
		}
	}

	/* bpftrace 0.17 keeps a keyless count() in an array: it always has a value, 0 when
	 * nothing was counted or after clear(). */
	static const uint8_t zero_key[8];
	if (n == 0 && pm->kind == PLAN_MAP_COUNT && pm->nkeys == 0 && m->prefix_size <= 8) {
		rows[0].key = zero_key;
		n = 1;
	}

	struct row **order = xmalloc((n ? n : 1) * sizeof(*order));
	for (size_t i = 0; i < n; i++)
		order[i] = &rows[i];
	struct order_ctx oc = {ms, m};
	if (m->is_hist) {
		struct sorter st = {less_sum, NULL};
		std_sort(order, n, &st);
	} else if (pm->kind == PLAN_MAP_AVG || pm->kind == PLAN_MAP_STATS) {
		struct sorter st = {less_avg, NULL};
		std_sort(order, n, &st);
	} else {
		qsort_r(order, n, sizeof(*order), cmp_rows, &oc);
	}
	*rows_out = rows;
	*order_out = order;
	return n;
}

/* ---- the API ---------------------------------------------------------------------- */

struct rt_maps *rt_maps__new(const struct gt_plan *plan, struct bpf_object *obj, int *err)
{
	int ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0) {
		diag_fatal("cannot count the possible CPUs: %s", strerror(ncpus ? -ncpus : EINVAL));
		*err = ncpus ? ncpus : -EINVAL;
		return NULL;
	}
	struct rt_maps *ms = xcalloc(1, sizeof(*ms));
	ms->plan = plan;
	ms->full_fd = -1;
	ms->nmaps = plan->nmaps;
	ms->maps = xcalloc(plan->nmaps > 0 ? (size_t)plan->nmaps : 1, sizeof(*ms->maps));

	for (int i = 0; i < plan->nmaps; i++) {
		const struct plan_map *pm = &plan->maps[i];
		struct rt_map *m = &ms->maps[i];
		struct bpf_map *bm = bpf_object__find_map_by_name(obj, pm->bpf_name);
		const char *why = NULL;
		*err = -EINVAL;
		if (!bm) {
			why = "is not in the BPF object";
			*err = -ENOENT;
		} else if (bpf_map__fd(bm) < 0) {
			why = "is not loaded";
		} else if (bpf_map__key_size(bm) != (uint32_t)pm->key_size) {
			why = "has another key size than the plan";
		} else if (pm->value_size <= 0 || bpf_map__value_size(bm) < (uint32_t)pm->value_size ||
			   bpf_map__value_size(bm) > round8((size_t)pm->value_size)) {
			why = "has another value size than the plan"; /* codegen may round up to 8 */
		} else if (is_percpu_type(bpf_map__type(bm)) != pm->percpu) {
			why = pm->percpu ? "is not per CPU" : "is per CPU";
		}
		bool hist = pm->kind == PLAN_MAP_HIST || pm->kind == PLAN_MAP_LHIST;
		bool bucket = hist || pm->kind == PLAN_MAP_TSERIES; /* the key ends in a u64 */
		size_t need = pm->kind == PLAN_MAP_STR || pm->kind == PLAN_MAP_VALUE ? 1
			      : pm->kind == PLAN_MAP_TSERIES ? sizeof(struct gt_tseries)
			      : pm->kind == PLAN_MAP_AVG || pm->kind == PLAN_MAP_STATS ||
					pm->kind == PLAN_MAP_MIN || pm->kind == PLAN_MAP_MAX
				      ? 16
				      : 8;
		if (!why && ((bucket && pm->key_size < 8) || pm->key_size <= 0 ||
			     (size_t)pm->value_size < need))
			why = "has a layout the runtime does not know";
		for (int k = 0; !why && k < pm->nkeys; k++) {
			const struct plan_arg *f = &pm->keys[k];
			int size = f->kind == PLAN_ARG_STR ? f->size : 8;
			if (f->offset < 0 || size <= 0 ||
			    f->offset + size > pm->key_size - (bucket ? 8 : 0))
				why = "has a key field outside its key";
		}
		if (why) {
			diag_fatal("internal error: map %s (%s) %s", pm->name, pm->bpf_name, why);
			rt_maps__free(ms);
			return NULL;
		}
		enum bpf_map_type t = bpf_map__type(bm);
		m->pm = pm;
		m->fd = bpf_map__fd(bm);
		m->is_array = t == BPF_MAP_TYPE_ARRAY || t == BPF_MAP_TYPE_PERCPU_ARRAY;
		m->is_hist = hist;
		m->key_size = (size_t)pm->key_size;
		m->prefix_size = m->key_size - (bucket ? 8 : 0);
		m->nvals = pm->percpu ? ncpus : 1;
		m->stride = pm->percpu ? round8(bpf_map__value_size(bm)) : bpf_map__value_size(bm);
		m->max_entries = bpf_map__max_entries(bm);
		if (pm->max_entries > m->max_entries)
			m->max_entries = pm->max_entries;
		if (pm->kind == PLAN_MAP_HIST) {
			m->nbuckets = plan_hist_buckets(pm);
		} else if (pm->kind == PLAN_MAP_LHIST) {
			int64_t nb = 2;
			if (pm->lhist_step > 0 && pm->lhist_max > pm->lhist_min)
				nb = (int64_t)(((uint64_t)pm->lhist_max - (uint64_t)pm->lhist_min) /
					       (uint64_t)pm->lhist_step) +
				     2;
			m->nbuckets = nb > LHIST_MAX_BUCKETS ? LHIST_MAX_BUCKETS : (int)nb;
		}
	}

	struct bpf_map *full = bpf_object__find_map_by_name(obj, PLAN_MAP_FULL);
	if (full && bpf_map__fd(full) >= 0 && bpf_map__key_size(full) == 4 &&
	    bpf_map__value_size(full) == 24) {
		ms->full_fd = bpf_map__fd(full);
		ms->full_nvals = is_percpu_type(bpf_map__type(full)) ? ncpus : 1;
	}
	*err = 0;
	return ms;
}

void rt_maps__free(struct rt_maps *m)
{
	if (!m)
		return;
	free(m->maps);
	free(m);
}

int rt_maps__each(struct rt_maps *ms, int map_id,
		  void (*fn)(void *ctx, const uint8_t *key, int64_t value), void *ctx)
{
	if (!ms || map_id < 0 || map_id >= ms->nmaps)
		return -EINVAL;
	struct rt_map *m = &ms->maps[map_id];
	struct snap s;
	struct row *rows, **order;
	uint64_t *buckets;
	int err = rt_maps_snapshot(m, &s);
	if (err)
		return err;
	size_t n = rt_maps_rows(ms, m, &s, &rows, &order, &buckets);
	for (size_t i = 0; i < n; i++)
		fn(ctx, order[i]->key, m->is_hist ? (int64_t)order[i]->sum
				   : m->pm->kind == PLAN_MAP_AVG || m->pm->kind == PLAN_MAP_STATS
				       ? order[i]->count
				       : (int64_t)order[i]->num);
	free(order);
	free(rows);
	free(buckets);
	rt_maps_snap_free(&s);
	return 0;
}

void rt_maps__zero(struct rt_maps *m, int map_id)
{
	if (!m || map_id < 0 || map_id >= m->nmaps)
		return;
	struct rt_map *mp = &m->maps[map_id];
	uint8_t *keys;
	size_t n = collect_keys(mp, &keys);
	void *zero = xcalloc(1, mp->stride * (size_t)mp->nvals);
	for (size_t i = 0; i < n; i++) {
		/* BPF_EXIST: a key deleted meanwhile stays deleted */
		if (bpf_map_update_elem(mp->fd, keys + i * mp->key_size, zero, BPF_EXIST) &&
		    errno != ENOENT) {
			diag_print(DIAG_WARNING, "cannot zero map %s: %s", mp->pm->name,
				   strerror(errno));
			break;
		}
	}
	free(zero);
	free(keys);
}

void rt_maps__clear(struct rt_maps *m, int map_id)
{
	if (!m || map_id < 0 || map_id >= m->nmaps)
		return;
	struct rt_map *mp = &m->maps[map_id];
	if (mp->is_array) { /* array elements cannot be deleted */
		rt_maps__zero(m, map_id);
		return;
	}
	uint8_t *keys;
	size_t n = collect_keys(mp, &keys);
	for (size_t i = 0; i < n; i++) {
		if (bpf_map_delete_elem(mp->fd, keys + i * mp->key_size) && errno != ENOENT) {
			diag_print(DIAG_WARNING, "cannot clear map %s: %s", mp->pm->name,
				   strerror(errno));
			break;
		}
	}
	free(keys);
}

void rt_maps__report_full(struct rt_maps *m)
{
	if (!m || m->full_fd < 0)
		return;
	uint64_t(*vals)[3] = xcalloc((size_t)m->full_nvals, sizeof(*vals));
	for (int i = 0; i < m->nmaps; i++) {
		uint32_t key = (uint32_t)i;
		if (bpf_map_lookup_elem(m->full_fd, &key, vals))
			continue;
		uint64_t dropped = 0, failed = 0, err = 0;
		for (int c = 0; c < m->full_nvals; c++) {
			dropped += vals[c][0];
			failed += vals[c][1];
			err = vals[c][2] ? vals[c][2] : err;
		}
		const char *name = m->maps[i].pm->name;
		if (dropped)
			diag_print(DIAG_WARNING,
				   "Map full; can't update element: map %s is full (%" PRIu32
				   " keys): %" PRIu64 " updates were dropped",
				   name,
				   m->maps[i].pm->max_entries ? m->maps[i].pm->max_entries
							      : m->maps[i].max_entries,
				   dropped);
		if (failed)
			diag_print(DIAG_WARNING, "map %s: %" PRIu64 " updates failed: %s%s", name,
				   failed, strerror((int)err),
				   err == EBUSY ? " (the kernel's lock of the map was held on that "
						  "CPU: a program updating it was interrupted there)"
						: "");
	}
	free(vals);
}
