/* rt_maps: reading the script's maps (@name) out of the kernel and printing them the
 * way bpftrace 0.17 does, as text or JSON; clear() and zero(). */
#ifndef GT_RT_MAPS_H
#define GT_RT_MAPS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/plan.h"

struct bpf_object;
struct rt_maps;
struct strbuf;

/* histk.c: the rows of a hist(x, k) with k > 0 from its NB bucket counts, as current
 * bpftrace prints them (its labels, not 0.17's: 0.17 has no k) */
void rt_histk_text(struct strbuf *sb, int k, const uint64_t *b, int nb);
void rt_histk_json(struct strbuf *sb, int k, const uint64_t *b, int nb);
/* histk.c: a hist(x)'s rows (bucket 0: below 0, 1: 0, i: [2^(i-2), 2^(i-1))) and its JSON
 * array, as bpftrace 0.17 prints them; for the buckets a consumer counts itself too */
void rt_hist_log2_text(struct strbuf *sb, const uint64_t *b, int nb);
void rt_hist_log2_json(struct strbuf *sb, const uint64_t *b, int nb);

/* After the object is loaded. Returns NULL and sets *err (negative errno) on failure. */
struct rt_maps *rt_maps__new(const struct gt_plan *plan, struct bpf_object *obj, int *err);
void rt_maps__free(struct rt_maps *m);

/* Every map, in bpftrace's order and format, as at the end of a run. */
void rt_maps__print_all(struct rt_maps *m, FILE *out, bool json);
/* The same, leaving out the maps SKIP says (NULL: none). */
void rt_maps__print_some(struct rt_maps *m, FILE *out, bool json,
			 bool (*skip)(const struct gt_plan *plan, int map_id));
/* One map, for print(@m). */
/* print(@m, top, div): the last TOP rows in print order (0: all), values / DIV (0, 1: as
 * they are). */
void rt_maps__print(struct rt_maps *m, int map_id, FILE *out, bool json, int64_t top,
		    int64_t div);
void rt_maps__clear(struct rt_maps *m, int map_id);
/* FN for every key of map MAP_ID (in print order) with its value as a count: the number
 * of INT, COUNT and SUM maps, a histogram's total, an avg's or stats' count. */
int rt_maps__each(struct rt_maps *m, int map_id,
		  void (*fn)(void *ctx, const uint8_t *key, int64_t value), void *ctx);
void rt_maps__zero(struct rt_maps *m, int map_id);
/* One warning (diag) per map that refused updates because it was full. */
void rt_maps__report_full(struct rt_maps *m);

/* maps_sym.c: whether a key field is usym()/ksym()/caller; then N snapshot entries
 * (KS-byte keys sorted by bytes, VS-byte values of NVALS per-CPU values STRIDE apart)
 * rewritten to one address per printed name and merged: returns the entries left. */
bool rt_maps_has_sym_keys(const struct plan_map *pm);
size_t rt_maps_merge_syms(const struct plan_map *pm, uint8_t *keys, uint8_t *vals, size_t n,
			  size_t ks, size_t vs, size_t stride, int nvals);

#endif
