/*
 * hist(x, k) with k > 0 (bpftrace 0.21): each power of two split into 2^k buckets.
 * Index 0 holds v < 0; index i up to 2^(k+1) holds the single value i - 1; a higher
 * index i covers [label(i - 1), label(i)), label(i) = 2^((i >> k) - 1) * (2^k + (i's
 * low k bits)), printed with K, M, G, T, P, E for each power of 2^10. The rows are
 * bpftrace's current ones (a bucket of one value is "[v]"); hist(x) keeps 0.17's, whose
 * rows are at the end (rt_hist_log2_text/json).
 */
#include <inttypes.h>

#include "common/util.h"
#include "runtime/output/maps_int.h"

/* The exclusive upper bound of bucket I: its value, and its text in *SB when SB. */
static uint64_t label(struct strbuf *sb, int k, int i)
{
	if (i <= (2 << k)) {
		if (sb)
			strbuf_printf(sb, "%d", i);
		return (uint64_t)i;
	}
	uint32_t n = 1u << k, interval = (uint32_t)i & (n - 1), power = ((uint32_t)i >> k) - 1;
	uint64_t value = ((uint64_t)1 << power) * (n + interval);
	uint32_t decade = power / 10;
	if (sb) {
		strbuf_printf(sb, "%" PRIu64, ((uint64_t)1 << (power - 10 * decade)) * (n + interval));
		if (decade)
			strbuf_putc(sb, "\0KMGTPE"[decade]);
	}
	return value;
}

/* bpftrace prints "[a]" where two numeric bounds are a and a + 1 (one value) */
static bool numeric(int k, int i)
{
	return i <= (2 << k);
}

void rt_histk_text(struct strbuf *sb, int k, const uint64_t *b, int nb)
{
	int lo, hi;
	uint64_t maxv;
	if (!rt_hist_range(b, nb, &lo, &hi, &maxv))
		return;
	struct strbuf head = {0};
	for (int i = lo; i <= hi; i++) {
		head.len = 0;
		if (i == 0) {
			strbuf_puts(&head, "(..., 0)");
		} else if (numeric(k, i - 1) && numeric(k, i)) {
			strbuf_printf(&head, "[%d]", i - 1); /* one value */
		} else {
			strbuf_putc(&head, '[');
			label(&head, k, i - 1);
			strbuf_puts(&head, ", ");
			label(&head, k, i);
			strbuf_putc(&head, ')');
		}
		rt_hist_row(sb, head.buf, b[i], maxv);
	}
	strbuf_free(&head);
}

void rt_histk_json(struct strbuf *sb, int k, const uint64_t *b, int nb)
{
	int lo, hi;
	uint64_t maxv;
	strbuf_putc(sb, '[');
	if (rt_hist_range(b, nb, &lo, &hi, &maxv)) {
		for (int i = lo; i <= hi; i++) {
			if (i > lo)
				strbuf_puts(sb, ", ");
			strbuf_putc(sb, '{');
			if (i > 0) /* bucket 0 (v < 0) has no lower bound */
				strbuf_printf(sb, "\"min\": %" PRIu64 ", ", label(NULL, k, i - 1));
			strbuf_printf(sb, "\"max\": %" PRId64 ", \"count\": %" PRIu64 "}",
				      (int64_t)(label(NULL, k, i) - 1), b[i]);
		}
	}
	strbuf_putc(sb, ']');
}

/* ---- hist(x): bpftrace 0.17's log2 rows, for maps.c and consumers that count ---- */

/* bpftrace's hist_index_label: K, M, G, T, then multiples of T (1024T, ...). */
static void hist_label(struct strbuf *sb, int power)
{
	const char *suffix = "";
	if (power >= 40) {
		suffix = "T";
		power -= 40;
	} else if (power >= 30) {
		suffix = "G";
		power -= 30;
	} else if (power >= 20) {
		suffix = "M";
		power -= 20;
	} else if (power >= 10) {
		suffix = "K";
		power -= 10;
	}
	strbuf_printf(sb, "%" PRIu64 "%s", (uint64_t)1 << power, suffix);
}

void rt_hist_log2_text(struct strbuf *sb, const uint64_t *b, int nb)
{
	int lo, hi;
	uint64_t maxv;
	if (!rt_hist_range(b, nb, &lo, &hi, &maxv))
		return;
	struct strbuf label = {0};
	for (int i = lo; i <= hi; i++) {
		label.len = 0;
		if (i == 0) {
			strbuf_puts(&label, "(..., 0)");
		} else if (i == 1) {
			strbuf_puts(&label, "[0]");
		} else if (i == 2) {
			strbuf_puts(&label, "[1]");
		} else {
			strbuf_putc(&label, '[');
			hist_label(&label, i - 2);
			strbuf_puts(&label, ", ");
			hist_label(&label, i - 1);
			strbuf_putc(&label, ')');
		}
		rt_hist_row(sb, label.buf, b[i], maxv);
	}
	strbuf_free(&label);
}

void rt_hist_log2_json(struct strbuf *sb, const uint64_t *b, int nb)
{
	int lo, hi;
	uint64_t maxv;
	strbuf_putc(sb, '[');
	if (!rt_hist_range(b, nb, &lo, &hi, &maxv))
		lo = 0, hi = -1;
	for (int i = lo; i <= hi; i++) {
		if (i > lo)
			strbuf_puts(sb, ", ");
		if (i == 0)
			strbuf_puts(sb, "{\"max\": -1, ");
		else if (i == 1)
			strbuf_puts(sb, "{\"min\": 0, \"max\": 0, ");
		else if (i == 2)
			strbuf_puts(sb, "{\"min\": 1, \"max\": 1, ");
		else
			strbuf_printf(sb, "{\"min\": %" PRIu64 ", \"max\": %" PRIu64 ", ",
				      (uint64_t)1 << (i - 2), ((uint64_t)1 << (i - 2)) * 2 - 1);
		strbuf_printf(sb, "\"count\": %" PRIu64 "}", b[i]);
	}
	strbuf_putc(sb, ']');
}
