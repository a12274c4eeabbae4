/* maps_print: the script's maps printed as bpftrace 0.17 prints them, text or JSON, their
 * rows in the order maps.c puts them.
 *
 * The rules (bpftrace 0.17 was the oracle; tests/unit/maps_selftest diffs against it):
 * - print_all: maps in name order (strcmp), each as print(@m) prints it.
 * - Text: "@m[k1, k2]: v" one line per key. Keys: integers in decimal (signed or not as
 *   the key field says), strings raw up to the first NUL, sites by name.
 *   After the last line of a map one '\n' ends it; avg and stats maps add one empty line;
 *   hist and lhist print "@m[k]: " (trailing space) then the bucket lines, keys separated
 *   by an empty line, and an empty line after the last. A map without entries prints just
 *   its terminator ("\n", "\n\n" for avg/stats), except a count() without keys, which
 *   prints 0 (an array in bpftrace); an empty (zero()'d) histogram prints "@m: " and no
 *   bucket lines.
 * - Histograms: lines from the lowest to the highest non-empty bucket, label left in 16
 *   columns, count right in 8, " |", bar of '@' scaled to 52 columns in float, "|".
 * - JSON: one object per map, {"type": "map"|"hist"|"stats", "data": {"@m": V}} with
 *   V = value, or {"k1,k2": value, ...} when keyed; nothing for a map without entries.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/diag.h"
#include "common/util.h"
#include "runtime/output/maps_int.h"
#include "runtime/output/output.h"

#define BAR_WIDTH 52

/* ---- formatting ------------------------------------------------------------------- */

void rt_maps_key_field(struct strbuf *sb, const struct rt_maps *ms, const struct plan_arg *f,
		       const uint8_t *key, bool json)
{
	const uint8_t *p = key + f->offset;
	switch (f->kind) {
	case PLAN_ARG_INT:
		if (f->is_bool)
			strbuf_puts(sb, *p ? "true" : "false");
		else if (f->is_signed)
			strbuf_printf(sb, "%" PRId64, (int64_t)rt_rd64(p));
		else
			strbuf_printf(sb, "%" PRIu64, rt_rd64(p));
		break;
	case PLAN_ARG_STR: {
		size_t n = strnlen((const char *)p, (size_t)f->size);
		if (json)
			strbuf_json_escape(sb, (const char *)p, n);
		else
			strbuf_putn(sb, (const char *)p, n);
		break;
	}
	case PLAN_ARG_SITE_FUNC:
	case PLAN_ARG_SITE_PROBE: {
		const char *name = rt_maps_site_name(ms, f->kind, rt_rd64(p));
		if (!name)
			strbuf_printf(sb, "%" PRIu64, rt_rd64(p) & 0xffffffffu);
		else if (json)
			strbuf_json_escape(sb, name, strlen(name));
		else
			strbuf_puts(sb, name);
		break;
	}
	case PLAN_ARG_STRFTIME:
	case PLAN_ARG_STRERROR:
	case PLAN_ARG_USERNAME:
	case PLAN_ARG_INET:
	case PLAN_ARG_CGROUP_PATH:
	case PLAN_ARG_BUF:
	case PLAN_ARG_STACK:
	case PLAN_ARG_SYM:
	case PLAN_ARG_GO: {
		struct strbuf t = {0};
		rt_value_format(&t, ms->plan, f, key, false);
		if (json)
			strbuf_json_escape(sb, t.buf ? t.buf : "", t.len);
		else
			strbuf_putn(sb, t.buf ? t.buf : "", t.len);
		strbuf_free(&t);
		break;
	}
	case PLAN_ARG_TUPLE: /* keys are never tuples nor structs (sema) */
	case PLAN_ARG_STRUCT:
	case PLAN_ARG_ARRAY:
		break;
	}
}

/* Text "@m[k1, k2]: ", or JSON "\"k1,k2\": " (nothing for a map without keys). */
static void key_prefix(struct strbuf *sb, const struct rt_maps *ms, const struct rt_map *m,
		       const uint8_t *key, bool json)
{
	const struct plan_map *pm = m->pm;
	if (json) {
		if (pm->nkeys == 0)
			return;
		strbuf_putc(sb, '"');
		for (int i = 0; i < pm->nkeys; i++) {
			if (i)
				strbuf_putc(sb, ',');
			rt_maps_key_field(sb, ms, &pm->keys[i], key, true);
		}
		strbuf_puts(sb, "\": ");
		return;
	}
	strbuf_puts(sb, pm->name);
	if (pm->nkeys > 0) {
		strbuf_putc(sb, '[');
		for (int i = 0; i < pm->nkeys; i++) {
			if (i)
				strbuf_puts(sb, ", ");
			for (int p = 0; pm->key_open && p < pm->key_open[i]; p++)
				strbuf_putc(sb, '(');
			rt_maps_key_field(sb, ms, &pm->keys[i], key, false);
			for (int p = 0; pm->key_close && p < pm->key_close[i]; p++)
				strbuf_putc(sb, ')');
		}
		strbuf_putc(sb, ']');
	}
	strbuf_puts(sb, ": ");
}

static void lhist_label(struct strbuf *sb, int64_t n)
{
	if (n != 0 && n % 1048576 == 0)
		strbuf_printf(sb, "%" PRId64 "M", n / 1048576);
	else if (n != 0 && n % 1024 == 0)
		strbuf_printf(sb, "%" PRId64 "K", n / 1024);
	else
		strbuf_printf(sb, "%" PRId64, n);
}

bool rt_hist_range(const uint64_t *b, int nb, int *lo, int *hi, uint64_t *maxv)
{
	*lo = *hi = -1;
	*maxv = 0;
	for (int i = 0; i < nb; i++) {
		if (b[i] == 0)
			continue;
		if (*lo < 0)
			*lo = i;
		*hi = i;
		if (b[i] > *maxv)
			*maxv = b[i];
	}
	return *lo >= 0;
}

void rt_hist_row(struct strbuf *sb, const char *label, uint64_t count, uint64_t maxv)
{
	char bar[BAR_WIDTH + 1];
	/* bpftrace: int bar_width = values.at(i) / (float)max_value * max_width; */
	int w = (int)((float)count / (float)maxv * (float)BAR_WIDTH);
	if (w < 0)
		w = 0;
	if (w > BAR_WIDTH)
		w = BAR_WIDTH;
	memset(bar, '@', (size_t)w);
	bar[w] = 0;
	strbuf_printf(sb, "%-16s%8" PRIu64 " |%-52s|\n", label, count, bar);
}

static void hist_text(struct strbuf *sb, const struct rt_map *m, const uint64_t *b)
{
	const struct plan_map *pm = m->pm;
	int lo, hi;
	uint64_t maxv;
	if (pm->kind == PLAN_MAP_HIST) {
		if (pm->hist_bits)
			rt_histk_text(sb, pm->hist_bits, b, m->nbuckets);
		else
			rt_hist_log2_text(sb, b, m->nbuckets);
		return;
	}
	if (!rt_hist_range(b, m->nbuckets, &lo, &hi, &maxv))
		return;
	struct strbuf label = {0};
	for (int i = lo; i <= hi; i++) {
		label.len = 0;
		{
			int64_t min = pm->lhist_min, step = pm->lhist_step;
			if (i == 0) {
				strbuf_puts(&label, "(..., ");
				lhist_label(&label, min);
				strbuf_putc(&label, ')');
			} else if (i == m->nbuckets - 1) {
				strbuf_putc(&label, '[');
				lhist_label(&label, pm->lhist_max);
				strbuf_puts(&label, ", ...)");
			} else {
				strbuf_putc(&label, '[');
				lhist_label(&label, (int64_t)((uint64_t)(i - 1) * (uint64_t)step +
							      (uint64_t)min));
				strbuf_puts(&label, ", ");
				lhist_label(&label,
					    (int64_t)((uint64_t)i * (uint64_t)step + (uint64_t)min));
				strbuf_putc(&label, ')');
			}
		}
		rt_hist_row(sb, label.buf, b[i], maxv);
	}
	strbuf_free(&label);
}

static void hist_json(struct strbuf *sb, const struct rt_map *m, const uint64_t *b)
{
	const struct plan_map *pm = m->pm;
	int lo, hi;
	uint64_t maxv;
	if (pm->kind == PLAN_MAP_HIST) {
		if (pm->hist_bits)
			rt_histk_json(sb, pm->hist_bits, b, m->nbuckets);
		else
			rt_hist_log2_json(sb, b, m->nbuckets);
		return;
	}
	strbuf_putc(sb, '[');
	if (rt_hist_range(b, m->nbuckets, &lo, &hi, &maxv)) {
		for (int i = lo; i <= hi; i++) {
			if (i > lo)
				strbuf_puts(sb, ", ");
			strbuf_putc(sb, '{');
			{
				int64_t min = pm->lhist_min, step = pm->lhist_step;
				if (i == 0)
					strbuf_printf(sb, "\"max\": %" PRId64 ", ",
						      (int64_t)((uint64_t)min - 1));
				else if (i == m->nbuckets - 1)
					strbuf_printf(sb, "\"min\": %" PRId64 ", ", pm->lhist_max);
				else
					strbuf_printf(
						sb, "\"min\": %" PRId64 ", \"max\": %" PRId64 ", ",
						(int64_t)((uint64_t)(i - 1) * (uint64_t)step +
							  (uint64_t)min),
						(int64_t)((uint64_t)i * (uint64_t)step + (uint64_t)min -
							  1));
			}
			strbuf_printf(sb, "\"count\": %" PRIu64 "}", b[i]);
		}
	}
	strbuf_putc(sb, ']');
}

static void value_str(struct strbuf *sb, const struct rt_maps *ms, const struct rt_map *m,
		      const struct row *r, bool json)
{
	const struct plan_map *pm = m->pm;
	switch (pm->kind) {
	case PLAN_MAP_COUNT:
		strbuf_printf(sb, "%" PRIu64, r->num);
		break;
	case PLAN_MAP_INT:
	case PLAN_MAP_SUM:
	case PLAN_MAP_MIN:
	case PLAN_MAP_MAX:
		if (pm->value_bool)
			strbuf_puts(sb, r->num & 0xff ? "true" : "false");
		else if (pm->value_addr && !json) /* JSON has no hex numbers */
			strbuf_printf(sb, "0x%" PRIx64, r->num);
		else if (pm->value_signed)
			strbuf_printf(sb, "%" PRId64, (int64_t)r->num);
		else
			strbuf_printf(sb, "%" PRIu64, r->num);
		break;
	case PLAN_MAP_STR:
		if (json) {
			strbuf_json_string(sb, r->str, r->slen);
		} else {
			strbuf_putn(sb, r->str, r->slen);
		}
		break;
	case PLAN_MAP_VALUE:
		rt_value_format(sb, ms->plan, &pm->value, r->tuple, json);
		break;
	case PLAN_MAP_AVG:
		strbuf_printf(sb, "%" PRId64, r->avg);
		break;
	case PLAN_MAP_STATS:
		if (json)
			strbuf_printf(sb,
				      "{\"count\": %" PRId64 ", \"average\": %" PRId64
				      ", \"total\": %" PRId64 "}",
				      r->count, r->avg, r->total);
		else
			strbuf_printf(sb, "count %" PRId64 ", average %" PRId64 ", total %" PRId64,
				      r->count, r->avg, r->total);
		break;
	case PLAN_MAP_HIST:
	case PLAN_MAP_LHIST:
		if (json)
			hist_json(sb, m, r->buckets);
		else
			hist_text(sb, m, r->buckets);
		break;
	case PLAN_MAP_TSERIES: /* rt_tseries_format */
		break;
	}
}

static const char *json_type(enum plan_map_kind k)
{
	switch (k) {
	case PLAN_MAP_HIST:
	case PLAN_MAP_LHIST:
		return "hist";
	case PLAN_MAP_AVG:
	case PLAN_MAP_STATS:
		return "stats";
	default:
		return "map";
	}
}

/* print(@m, top, div): the last TOP rows of the print order (0: all), values divided by
 * DIV (0 or 1: as they are), as bpftrace. */
static void format_map(struct rt_maps *ms, struct rt_map *m, struct strbuf *sb, bool json,
		       int64_t top, int64_t div)
{
	const struct plan_map *pm = m->pm;
	struct snap s;
	int err = rt_maps_snapshot(m, &s);
	if (err)
		diag_print(DIAG_WARNING, "cannot read map %s: %s", pm->name, strerror(-err));
	if (pm->kind == PLAN_MAP_TSERIES) { /* bpftrace 0.23's own layout: tseries.c */
		rt_tseries_format(sb, ms, m, &s, json);
		rt_maps_snap_free(&s);
		return;
	}

	struct row *rows, **order;
	uint64_t *bucket_mem;
	size_t n = rt_maps_rows(ms, m, &s, &rows, &order, &bucket_mem);
	size_t first = top > 0 && n > (size_t)top ? n - (size_t)top : 0;
	for (size_t i = 0; div > 1 && i < n; i++) {
		struct row *r = &rows[i];
		r->num = pm->value_signed && pm->kind != PLAN_MAP_COUNT
				 ? (uint64_t)((int64_t)r->num / div)
				 : r->num / (uint64_t)div;
		r->avg /= div;
	}

	if (json) {
		if (n > 0) {
			strbuf_printf(sb, "{\"type\": \"%s\", \"data\": {\"", json_type(pm->kind));
			strbuf_json_escape(sb, pm->name, strlen(pm->name));
			strbuf_puts(sb, "\": ");
			if (pm->nkeys > 0)
				strbuf_putc(sb, '{');
			for (size_t i = first; i < n; i++) {
				if (i > first)
					strbuf_puts(sb, ", ");
				key_prefix(sb, ms, m, order[i]->key, true);
				value_str(sb, ms, m, order[i], true);
			}
			if (pm->nkeys > 0)
				strbuf_putc(sb, '}');
			strbuf_puts(sb, "}}\n");
		}
	} else {
		for (size_t i = first; i < n; i++) {
			if (i > first)
				strbuf_putc(sb, '\n');
			key_prefix(sb, ms, m, order[i]->key, false);
			if (m->is_hist)
				strbuf_putc(sb, '\n');
			value_str(sb, ms, m, order[i], false);
		}
		strbuf_putc(sb, '\n');
		if (pm->kind == PLAN_MAP_AVG || pm->kind == PLAN_MAP_STATS)
			strbuf_putc(sb, '\n');
	}

	free(order);
	free(rows);
	free(bucket_mem);
	rt_maps_snap_free(&s);
}

static void emit(struct strbuf *sb, FILE *out)
{
	if (sb->len)
		fwrite(sb->buf, 1, sb->len, out);
	fflush(out);
}

/* ---- the API ---------------------------------------------------------------------- */

static int cmp_names(const void *a, const void *b)
{
	const struct rt_map *x = *(const struct rt_map *const *)a;
	const struct rt_map *y = *(const struct rt_map *const *)b;
	return strcmp(x->pm->name, y->pm->name);
}

void rt_maps__print_all(struct rt_maps *m, FILE *out, bool json)
{
	rt_maps__print_some(m, out, json, NULL);
}

void rt_maps__print_some(struct rt_maps *m, FILE *out, bool json,
			 bool (*skip)(const struct gt_plan *plan, int map_id))
{
	if (!m || m->nmaps <= 0)
		return;
	struct rt_map **byname = xmalloc((size_t)m->nmaps * sizeof(*byname));
	int n = 0;
	for (int i = 0; i < m->nmaps; i++)
		if (!skip || !skip(m->plan, i))
			byname[n++] = &m->maps[i];
	qsort(byname, (size_t)n, sizeof(*byname), cmp_names);
	struct strbuf sb = {0};
	for (int i = 0; i < n; i++)
		format_map(m, byname[i], &sb, json, 0, 0);
	emit(&sb, out);
	strbuf_free(&sb);
	free(byname);
}

void rt_maps__print(struct rt_maps *m, int map_id, FILE *out, bool json, int64_t top,
		    int64_t div)
{
	if (!m || map_id < 0 || map_id >= m->nmaps)
		return;
	struct strbuf sb = {0};
	format_map(m, &m->maps[map_id], &sb, json, top, div);
	emit(&sb, out);
	strbuf_free(&sb);
}
