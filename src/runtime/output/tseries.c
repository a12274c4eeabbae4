/* tseries: printing a tseries() map the way current bpftrace (0.23-0.26) does.
 *
 * Each key of the BPF map is a script key plus a bucket (epoch % intervals) holding a
 * struct gt_tseries per CPU. A bucket reduces to the latest epoch any CPU wrote and
 * those CPUs' values made one (the newest for LAST, the sum, min, max, or average); a
 * bucket no CPU wrote gives epoch 0 with value 0, which bpftrace shows as a point when
 * epoch 0 is in range. The intervals shown end at the latest epoch over all keys and
 * go back num_intervals; each key's graph starts at its first epoch in that window.
 *
 * Text: per key, a header with the lowest and highest value, one line per interval
 * (local time, a 53-column graph with '*' at the value, '.' for zero when the range
 * spans it, the value or '-'), and a footer; JSON: {"type": "tseries", "data":
 * {"@m": [{"interval_start": UTC time, "value": v}, ...]}}, intervals without a value
 * left out. Floats and widths are bpftrace's, so the stars land in the same columns.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/output/maps_int.h"
#include "runtime/output/output.h"

#define GRAPH_WIDTH 53
#define PADDING 21

struct point {
	uint64_t epoch, value;
	size_t order; /* position in the snapshot: the first of equal epochs wins */
};

struct series {
	const uint8_t *key;
	struct point *pts; /* sorted by epoch, unique */
	size_t n;
};

/* One interval of the graph: its start in ns since the Unix epoch, and its value. */
struct slot {
	uint64_t ns, value;
	bool has;
};

static bool less(uint64_t a, uint64_t b, bool sgn)
{
	return sgn ? (int64_t)a < (int64_t)b : a < b;
}

/* The CPUs' values of one bucket made one: (epoch, value), (0, 0) when unwritten. */
static struct point reduce(const struct rt_map *m, const uint8_t *v)
{
	const struct plan_map *pm = m->pm;
	bool sgn = pm->value_signed;
	uint64_t latest = 0;
	for (int c = 0; c < m->nvals; c++) {
		uint64_t e = rt_rd64(v + (size_t)c * m->stride + offsetof(struct gt_tseries, epoch));
		latest = e > latest ? e : latest;
	}
	struct point r = {0, 0, 0};
	if (!latest)
		return r;
	bool have = false;
	uint64_t val = 0, meta = 0;
	for (int c = 0; c < m->nvals; c++) {
		const uint8_t *p = v + (size_t)c * m->stride;
		if (rt_rd64(p + offsetof(struct gt_tseries, epoch)) != latest)
			continue;
		uint64_t pv = rt_rd64(p), pmeta = rt_rd64(p + offsetof(struct gt_tseries, meta));
		if (!have) {
			val = pv;
			meta = pmeta;
			have = true;
			continue;
		}
		switch (pm->tseries_agg) {
		case GT_TS_LAST: /* the most recent write wins */
			if (less(meta, pmeta, sgn)) {
				val = pv;
				meta = pmeta;
			}
			break;
		case GT_TS_AVG:
			val += pv;
			meta += pmeta;
			break;
		case GT_TS_SUM:
			val += pv;
			break;
		case GT_TS_MIN:
			val = less(pv, val, sgn) ? pv : val;
			break;
		case GT_TS_MAX:
			val = less(val, pv, sgn) ? pv : val;
			break;
		}
	}
	if (pm->tseries_agg == GT_TS_AVG && meta)
		val = sgn ? (uint64_t)((int64_t)val / (int64_t)meta) : val / meta;
	r.epoch = latest;
	r.value = val;
	return r;
}

static int cmp_points(const void *a, const void *b)
{
	const struct point *x = a, *y = b;
	if (x->epoch != y->epoch)
		return x->epoch < y->epoch ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The snapshot's keys grouped by script key (adjacent: the keys are in byte order),
 * each group's buckets reduced, sorted and made unique. Returns the number of keys. */
static size_t collect(const struct rt_map *m, const struct snap *s, struct series **out,
		      struct point **mem)
{
	size_t ks = m->key_size, vs = m->stride * (size_t)m->nvals;
	struct series *sr = xcalloc(s->n ? s->n : 1, sizeof(*sr));
	struct point *pts = xcalloc(s->n ? s->n : 1, sizeof(*pts));
	size_t n = 0;
	for (size_t i = 0; i < s->n; i++) {
		const uint8_t *k = s->keys + i * ks;
		if (!n || memcmp(k, sr[n - 1].key, m->prefix_size)) {
			sr[n].key = k;
			sr[n].pts = pts + i;
			n++;
		}
		struct point p = reduce(m, s->vals + i * vs);
		p.order = i;
		sr[n - 1].pts[sr[n - 1].n++] = p;
	}
	for (size_t i = 0; i < n; i++) {
		struct series *x = &sr[i];
		qsort(x->pts, x->n, sizeof(*x->pts), cmp_points);
		size_t w = 0;
		for (size_t r = 0; r < x->n; r++)
			if (!w || x->pts[r].epoch != x->pts[w - 1].epoch)
				x->pts[w++] = x->pts[r];
		x->n = w;
	}
	*out = sr;
	*mem = pts;
	return n;
}

/* The intervals [first, last] of one key, from its first epoch in them on. */
static size_t slots_of(const struct rt_map *m, const struct series *x, uint64_t first,
		       uint64_t last, struct slot *out)
{
	uint64_t start = last;
	for (size_t i = 0; i < x->n; i++)
		if (x->pts[i].epoch >= first && x->pts[i].epoch < start)
			start = x->pts[i].epoch;
	size_t n = 0, j = 0;
	if (first > last) /* fewer epochs than intervals since 0: bpftrace shows none */
		return 0;
	for (uint64_t e = first;; e++) {
		if (e >= start) {
			while (j < x->n && x->pts[j].epoch < e)
				j++;
			struct slot *sl = &out[n++];
			sl->ns = e * m->pm->tseries_interval;
			sl->has = j < x->n && x->pts[j].epoch == e;
			sl->value = sl->has ? x->pts[j].value : 0;
		}
		if (e == last)
			break;
	}
	return n;
}

static void put_value(struct strbuf *sb, uint64_t v, bool sgn)
{
	if (sgn)
		strbuf_printf(sb, "%" PRId64, (int64_t)v);
	else
		strbuf_printf(sb, "%" PRIu64, v);
}

/* bpftrace's distance(p, other) of two values of the series' type (OTHER_INT: other
 * is the int64 literal 0 of its zero line) */
static int64_t distance(uint64_t p, bool sgn, int64_t other)
{
	if (sgn)
		return (int64_t)(p - (uint64_t)other);
	if (other < 0)
		return (int64_t)((uint64_t)0 - (uint64_t)other + p);
	if (p > (uint64_t)other)
		return (int64_t)(p - (uint64_t)other);
	return -(int64_t)((uint64_t)other - p);
}

/* bpftrace's duration_str: the unit of the intervals, and its fraction's digits */
static int frac_digits(uint64_t ns, const char **unit)
{
	if (ns >= 1000000000) {
		*unit = "s";
		return 0;
	}
	if (ns >= 1000000) {
		*unit = "ms";
		return 3;
	}
	if (ns >= 1000) {
		*unit = "μs";
		return 6;
	}
	*unit = "ns";
	return 9;
}

/* "min" left in PADDING columns, "max" right in the rest of the graph's width */
static void bounds_line(struct strbuf *sb, int indent, uint64_t lo, uint64_t hi, bool sgn)
{
	struct strbuf a = {0}, b = {0};
	put_value(&a, lo, sgn);
	put_value(&b, hi, sgn);
	strbuf_printf(sb, "%*s%-*s%*s\n", indent, "", PADDING, a.buf,
		      GRAPH_WIDTH - PADDING, b.buf);
	strbuf_free(&a);
	strbuf_free(&b);
}

static void graph_text(struct strbuf *sb, const struct slot *sl, size_t n, bool sgn)
{
	if (!n) {
		strbuf_puts(sb, "<no data>");
		return;
	}
	uint64_t lo = sl[0].value, hi = sl[0].value;
	for (size_t i = 0; i < n; i++) {
		if (!sl[i].has)
			continue;
		lo = less(sl[i].value, lo, sgn) ? sl[i].value : lo;
		hi = less(hi, sl[i].value, sgn) ? sl[i].value : hi;
	}
	if (lo == hi) { /* room on both sides, unless at the type's limit */
		if (sgn ? (int64_t)lo > INT64_MIN : lo > 0)
			lo--;
		if (sgn ? (int64_t)hi < INT64_MAX : hi < UINT64_MAX)
			hi++;
	}
	const char *unit;
	int digits = frac_digits((sl[n - 1].ns - sl[0].ns) / (n > 1 ? n - 1 : 1), &unit);
	char fmt[24];
	snprintf(fmt, sizeof(fmt), "hh:mm:ss%s%s", digits ? "." : "", digits ? unit : "");
	int tsize = 8 + (digits ? 1 + digits : 0);

	bounds_line(sb, tsize + 1, lo, hi, sgn);
	strbuf_printf(sb, "%-*s|", tsize + 1, fmt);
	for (int i = 0; i < GRAPH_WIDTH - 2; i++)
		strbuf_putc(sb, '_');
	strbuf_puts(sb, "|\n");

	int zero = 0;
	int64_t span = distance(lo, sgn, (int64_t)hi);
	if (distance(lo, sgn, 0) < 0 && (int64_t)(0 - hi) < 0) /* below and above 0 */
		zero = (int)((float)GRAPH_WIDTH * (float)distance(lo, sgn, 0) / (float)span);
	for (size_t i = 0; i < n; i++) {
		char line[GRAPH_WIDTH + 1];
		memset(line, ' ', GRAPH_WIDTH);
		line[GRAPH_WIDTH] = 0;
		line[0] = line[GRAPH_WIDTH - 1] = '|';
		if (zero > 0)
			line[zero] = '.';
		time_t secs = (time_t)(sl[i].ns / 1000000000);
		uint64_t frac = sl[i].ns % 1000000000;
		struct tm tm;
		char hms[32];
		localtime_r(&secs, &tm);
		strftime(hms, sizeof(hms), "%H:%M:%S", &tm);
		strbuf_puts(sb, hms);
		if (digits == 3)
			strbuf_printf(sb, ".%03" PRIu64, frac / 1000000);
		else if (digits == 6)
			strbuf_printf(sb, ".%06" PRIu64, frac / 1000);
		else if (digits == 9)
			strbuf_printf(sb, ".%09" PRIu64, frac);
		strbuf_putc(sb, ' ');
		if (!sl[i].has) {
			strbuf_printf(sb, "%s -\n", line);
			continue;
		}
		int at = GRAPH_WIDTH / 2;
		if (lo != hi)
			at = (int)((float)(GRAPH_WIDTH - 1) *
				   (float)distance(lo, sgn, (int64_t)sl[i].value) / (float)span);
		at = at < 0 ? 0 : at > GRAPH_WIDTH - 1 ? GRAPH_WIDTH - 1 : at;
		line[at] = '*';
		strbuf_printf(sb, "%s ", line);
		put_value(sb, sl[i].value, sgn);
		strbuf_putc(sb, '\n');
	}
	strbuf_printf(sb, "%*s v", tsize, "");
	for (int i = 0; i < GRAPH_WIDTH - 2; i++)
		strbuf_putc(sb, '_');
	strbuf_puts(sb, "v\n");
	bounds_line(sb, tsize + 1, lo, hi, sgn);
}

static void graph_json(struct strbuf *sb, const struct slot *sl, size_t n, bool sgn)
{
	bool first = true;
	strbuf_putc(sb, '[');
	for (size_t i = 0; i < n; i++) {
		if (!sl[i].has)
			continue;
		time_t secs = (time_t)(sl[i].ns / 1000000000);
		struct tm tm;
		char ymd[48];
		gmtime_r(&secs, &tm);
		strftime(ymd, sizeof(ymd), "%Y-%m-%d %H:%M:%S", &tm);
		strbuf_printf(sb, "%s{\"interval_start\":\"%s.%09" PRIu64 "\",\"value\":",
			      first ? "" : ",", ymd, sl[i].ns % 1000000000);
		put_value(sb, sl[i].value, sgn);
		strbuf_putc(sb, '}');
		first = false;
	}
	strbuf_putc(sb, ']');
}

/* Text "@m[k1, k2]", JSON "k1,k2" (bpftrace drops the tuple's spaces there). */
static void key_text(struct strbuf *sb, const struct rt_maps *ms, const struct plan_map *pm,
		     const uint8_t *key, bool json)
{
	if (!json)
		strbuf_puts(sb, pm->name);
	if (!pm->nkeys)
		return;
	strbuf_puts(sb, json ? "\"" : "[");
	for (int i = 0; i < pm->nkeys; i++) {
		if (i)
			strbuf_puts(sb, json ? "," : ", ");
		for (int p = 0; !json && pm->key_open && p < pm->key_open[i]; p++)
			strbuf_putc(sb, '('); /* a tuple inside the key, as maps.c */
		rt_maps_key_field(sb, ms, &pm->keys[i], key, json);
		for (int p = 0; !json && pm->key_close && p < pm->key_close[i]; p++)
			strbuf_putc(sb, ')');
	}
	strbuf_puts(sb, json ? "\": " : "]");
}

void rt_tseries_format(struct strbuf *sb, const struct rt_maps *ms, const struct rt_map *m,
		       const struct snap *s, bool json)
{
	const struct plan_map *pm = m->pm;
	bool sgn = pm->value_signed;
	struct series *sr;
	struct point *mem;
	size_t n = collect(m, s, &sr, &mem);
	if (!n || !pm->tseries_num) { /* nothing stored, or cleared: bpftrace prints nothing */
		free(sr);
		free(mem);
		return;
	}
	uint64_t last = 0;
	for (size_t i = 0; i < n; i++)
		if (sr[i].n && sr[i].pts[sr[i].n - 1].epoch > last)
			last = sr[i].pts[sr[i].n - 1].epoch;
	uint64_t first = last - pm->tseries_num + 1; /* wraps as bpftrace's does */
	struct slot *sl = xcalloc((size_t)pm->tseries_num, sizeof(*sl));

	if (json) {
		strbuf_puts(sb, "{\"type\": \"tseries\", \"data\": {\"");
		strbuf_json_escape(sb, pm->name, strlen(pm->name));
		strbuf_puts(sb, pm->nkeys ? "\": {" : "\": ");
	}
	for (size_t i = 0; i < n; i++) {
		size_t ns = slots_of(m, &sr[i], first, last, sl);
		if (json) {
			if (i)
				strbuf_puts(sb, ", ");
			key_text(sb, ms, pm, sr[i].key, true);
			graph_json(sb, sl, ns, sgn);
			if (!pm->nkeys)
				break; /* a scalar map: its one series */
		} else {
			key_text(sb, ms, pm, sr[i].key, false);
			strbuf_puts(sb, ":\n");
			graph_text(sb, sl, ns, sgn);
			strbuf_putc(sb, '\n');
		}
	}
	if (json)
		strbuf_puts(sb, pm->nkeys ? "}}}\n" : "}}\n");
	free(sl);
	free(sr);
	free(mem);
}
