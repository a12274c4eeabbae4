/* output: what a run prints, as bpftrace prints it, text or JSON. Ring-buffer records
 * (output.c); the script's maps (@name) read out of the kernel and printed, clear() and
 * zero() (maps.c, maps_print.c, with histk.c, tseries.c, maps_sym.c); the values the plan
 * describes (struct plan_arg: value.c, value_go.c, gfp.c, cgroup.c), shared by print()
 * and the map dumps; ustack / kstack read back from their stack-trace maps and named by
 * the run's symbolizer (stacks.c). Needs no other room of the runtime: profile/ and run/
 * use it, and funcgraph/ (histograms, values). */
#ifndef GT_RT_OUTPUT_H
#define GT_RT_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/plan.h"
#include "runtime/rt.h"

struct bpf_object;
struct rt_maps;
struct rt_output;
struct strbuf;

/* ---- records (output.c) ---- */

struct rt_output *rt_output__new(const struct gt_plan *plan, FILE *f, bool json, int *err);
void rt_output__free(struct rt_output *o);
int rt_output__handle(void *ctx, void *data, size_t size); /* ring_buffer_sample_fn */
bool rt_output__exit_seen(const struct rt_output *o);
int rt_output__exit_status(const struct rt_output *o); /* exit(N): N, else 0 */
/* The script, for the located warnings of -k. */
void rt_output__set_src(struct rt_output *o, const struct diag_src *src);
/* While discarding (after exit()), records are consumed and not printed. */
void rt_output__set_discard(struct rt_output *o, bool discard);
/* Who gets the call-graph records (NULL: they are dropped); its finish() is called by
 * rt_output__free, before the output is closed. */
void rt_output__set_consumer(struct rt_output *o, const struct rt_consumer *c);
/* The maps print(@m) / clear(@m) / zero(@m) events act on (NULL: none). */
void rt_output__set_maps(struct rt_output *o, struct rt_maps *maps);
void rt_output__lost(struct rt_output *o, uint64_t n);
/* --otlp: printf lines (events with plan_event.meta) go to X as log records too. */
struct otlp;
void rt_output__set_otlp(struct rt_output *o, struct otlp *x);
uint64_t rt_output__records(const struct rt_output *o);

/* ---- maps (maps.c, maps_print.c) ---- */

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
/* --otlp: every map as a metric of process PID (0: none), cumulative since START_UNIX
 * (maps_otlp.c). */
void rt_maps__export(struct rt_maps *m, struct otlp *x, int pid, uint64_t start_unix);
/* One warning (diag) per map that refused updates because it was full. */
void rt_maps__report_full(struct rt_maps *m);

/* maps_sym.c: whether a key field is usym()/ksym()/caller; then N snapshot entries
 * (KS-byte keys sorted by bytes, VS-byte values of NVALS per-CPU values STRIDE apart)
 * rewritten to one address per printed name and merged: returns the entries left. */
bool rt_maps_has_sym_keys(const struct plan_map *pm);
size_t rt_maps_merge_syms(const struct plan_map *pm, uint8_t *keys, uint8_t *vals, size_t n,
			  size_t ks, size_t vs, size_t stride, int nvals);

/* ---- values (value.c, value_go.c, gfp.c, cgroup.c) ---- */

/* The u64 at P of a record, key or value (memcpy: any alignment, UBSan-clean). */
static inline uint64_t rt_rd64(const uint8_t *p)
{
	uint64_t v;
	__builtin_memcpy(&v, p, sizeof(v));
	return v;
}

/* How printf's %r (and print) show a buffer: printable bytes as they are and the rest as
 * \xNN; %rx every byte as \xNN; %rh hex bytes separated by spaces. */
enum rt_buf_mode { RT_BUF_PRINTABLE, RT_BUF_ESCAPED, RT_BUF_HEX };
void rt_buf_format(struct strbuf *sb, const uint8_t *data, size_t len, enum rt_buf_mode mode);

/* cgroup_path(ID) (cgroup.c): "unified:/a/b,cpu:/..." for the hierarchies that have it. */
void rt_cgroup_path(struct strbuf *sb, uint64_t id);

/* Appends the value A describes, at A->offset from BASE (a record or a map value). */
/* printf's %gr: FLAGS as the kernel's GFP flag names (gfp.c) */
void rt_gfp_format(struct strbuf *sb, uint64_t flags);
void rt_value_format(struct strbuf *sb, const struct gt_plan *plan, const struct plan_arg *a,
		     const uint8_t *base, bool json);

/* A Go value print() captured (PLAN_ARG_GO), in Go's %+v shape (value_go.c). */
void rt_go_format(struct strbuf *sb, const struct gt_plan *plan, const struct plan_arg *a,
		  const uint8_t *base, bool json);
/* printf's %T of a Go value: its type, an interface's dynamic type (<nil> for none). */
void rt_go_type(struct strbuf *sb, const struct gt_plan *plan, const struct plan_arg *a,
		const uint8_t *base);

/* ---- stacks (stacks.c) ---- */

/* After the object is loaded; LINES: file:line on every frame (-v). */
void rt_stacks__init(const struct gt_plan *plan, struct bpf_object *obj,
		     const struct rt_symbolizer *sym, bool lines);
void rt_stacks__free(void);
/* Fills gt_unwind.c's table from plan->unwind, after load: 0 or a negative errno. */
int rt_stacks__fill_unwind(const struct gt_plan *plan, struct bpf_object *obj);
/* The addresses of the PLAN_ARG_STACK value at P, leaf first (the caller of a go:
 * entry included): how many, up to MAX (0: the stack was lost or never read). */
int rt_stack_addrs(const struct plan_arg *a, const uint8_t *p, uint64_t *out, int max);
/* The frames of ADDR, the INDEX-th address of the stack at P: count (0: unknown). */
int rt_stack_frames(const struct plan_arg *a, const uint8_t *p, uint64_t addr, int index,
		    struct rt_frame *out, int max);
/* usym(), ksym(), caller: the function (caller: and the call's file:line), or 0xADDR. */
void rt_sym_format(struct strbuf *sb, const struct plan_arg *a, const uint8_t *p);
/* A kernel address as "sym+0xoff" (with -v its file:line), or "0xADDR": lbr()'s branches. */
void rt_kaddr_format(struct strbuf *sb, uint64_t addr);
/* bpftrace's text: "\n" then one line per frame. */
void rt_stack_format(struct strbuf *sb, const struct plan_arg *a, const uint8_t *p);

#endif
