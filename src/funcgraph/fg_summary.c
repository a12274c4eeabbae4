/* fg_summary: --summary, go-ftrace's --cluster view. Instead of trees, per traced
 * function: its calls, how many returned, a histogram of their durations (bpftrace's
 * hist layout, in ns) and its most frequent results (--rets), every --interval and at
 * the end, counted since the start. Memory is bounded: a function keeps at most
 * FG_SUM_RESULTS distinct results (the others are counted together), each cut at
 * FG_SUM_TEXT bytes. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "funcgraph/fg_int.h"
#include "runtime/output/output.h"

#define FG_SUM_BUCKETS 66 /* below 0, 0, then 2^0 .. 2^63 */
#define FG_SUM_RESULTS 4096
#define FG_SUM_TEXT 256
#define FG_SUM_TOP 10

struct fg_result {
	char *text;
	uint64_t count;
};

struct fg_fstat {
	const char *func;
	uint64_t calls, returned;
	uint64_t inlined; /* of the calls, those at inlined copies: no return, no latency */
	uint64_t hist[FG_SUM_BUCKETS];
	struct fg_result *results; /* open addressing, 2 * FG_SUM_RESULTS slots, or NULL */
	int nresults;
	uint64_t other; /* results past FG_SUM_RESULTS distinct ones */
};

struct fg_summary {
	const struct gt_plan *plan;
	uint64_t interval_ns, start_ns, next_ns;
	int64_t wall_off;
	VEC(struct fg_fstat) funcs;
	int *site_func; /* [plan->nsites]: the site's function's index in funcs, -1: none yet */
	struct strbuf out, text;
};

/* bpftrace's hist() bucket: 0 below 0, 1 for 0, 2 + floor(log2(v)) */
static int bucket(int64_t v)
{
	if (v < 0)
		return 0;
	if (v == 0)
		return 1;
	return 2 + 63 - __builtin_clzll((uint64_t)v);
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The counts of the function of SITE (its entry, or one of its RETs). */
static struct fg_fstat *fstat_of(struct fg_summary *sm, int site)
{
	if (sm->site_func[site] < 0) {
		const char *func = sm->plan->sites[site].func;
		int i = 0;
		while (i < sm->funcs.n && strcmp(sm->funcs.v[i].func, func))
			i++;
		if (i == sm->funcs.n)
			vec_push(&sm->funcs, ((struct fg_fstat){.func = func}));
		sm->site_func[site] = i;
	}
	return &sm->funcs.v[sm->site_func[site]];
}

static void count_result(struct fg_fstat *f, const char *text)
{
	const size_t slots = 2 * FG_SUM_RESULTS;
	if (!f->results)
		f->results = xcalloc(slots, sizeof(*f->results));
	for (size_t i = hash_str(text) % slots;; i = (i + 1) % slots) {
		struct fg_result *r = &f->results[i];
		if (r->text && !strcmp(r->text, text)) {
			r->count++;
			return;
		}
		if (!r->text) {
			if (f->nresults >= FG_SUM_RESULTS) {
				f->other++;
				return;
			}
			r->text = xstrdup(text);
			r->count = 1;
			f->nresults++;
			return;
		}
	}
}

struct fg_summary *fg_summary_new(const struct fg_tree_opts *o, const struct gt_plan *plan)
{
	struct fg_summary *sm = xcalloc(1, sizeof(*sm));
	sm->plan = plan;
	sm->site_func = xmalloc(sizeof(int) * (size_t)(plan->nsites + 1));
	memset(sm->site_func, 0xff, sizeof(int) * (size_t)(plan->nsites + 1));
	sm->interval_ns = o->interval_ns;
	sm->start_ns = now_ns();
	sm->next_ns = sm->interval_ns ? sm->start_ns + sm->interval_ns : UINT64_MAX;
	sm->wall_off = wall_off_ns();
	return sm;
}

void fg_summary_free(struct fg_summary *sm)
{
	if (!sm)
		return;
	for (int i = 0; i < sm->funcs.n; i++) {
		struct fg_fstat *f = &sm->funcs.v[i];
		for (int k = 0; f->results && k < 2 * FG_SUM_RESULTS; k++)
			free(f->results[k].text);
		free(f->results);
	}
	vec_free(&sm->funcs);
	free(sm->site_func);
	strbuf_free(&sm->out);
	strbuf_free(&sm->text);
	free(sm);
}

void fg_summary_record(void *ctx, struct rt_output *o, int event_id, const void *rec,
		       size_t size)
{
	struct fg_summary *sm = ctx;
	const struct plan_event *ev = &sm->plan->events[event_id];
	(void)size;
	if (ev->kind != PLAN_EV_FG_ENTRY && ev->kind != PLAN_EV_FG_RETURN)
		return;
	uint64_t site = fg_field(ev, rec, FG_ARG_SITE);
	if (site >= (uint64_t)sm->plan->nsites)
		return;
	struct fg_fstat *f = fstat_of(sm, (int)site);
	if (ev->kind == PLAN_EV_FG_ENTRY) {
		f->calls++;
		f->inlined += !!(sm->plan->sites[site].cookie_flags & GT_SITE_INLINED);
		return;
	}
	f->returned++;
	f->hist[bucket((int64_t)fg_field(ev, rec, FG_ARG_DURATION))]++;
	if (ev->nargs > FG_RET_USER) {
		sm->text.len = 0;
		rt_output_format(o, event_id, rec, 0, &sm->text);
		if (sm->text.len > FG_SUM_TEXT)
			sm->text.len = FG_SUM_TEXT;
		strbuf_putc(&sm->text, 0);
		count_result(f, sm->text.buf);
	}
}

static int cmp_fstat(const void *a, const void *b)
{
	const struct fg_fstat *x = *(struct fg_fstat *const *)a, *y = *(struct fg_fstat *const *)b;
	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return strcmp(x->func, y->func);
}

static int cmp_result(const void *a, const void *b)
{
	const struct fg_result *x = *(struct fg_result *const *)a, *y = *(struct fg_result *const *)b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->text, y->text);
}

/* F's results, most frequent first (the caller frees the array; N of them). */
static struct fg_result **top_results(const struct fg_fstat *f, int *n)
{
	struct fg_result **v = xmalloc(sizeof(*v) * (size_t)(f->nresults + 1));
	*n = 0;
	for (int k = 0; f->results && k < 2 * FG_SUM_RESULTS; k++)
		if (f->results[k].text)
			v[(*n)++] = &f->results[k];
	qsort(v, (size_t)*n, sizeof(*v), cmp_result);
	return v;
}

static void print_text(struct fg_summary *sm, struct fg_fstat **fs, uint64_t now, bool final)
{
	struct strbuf *sb = &sm->out;
	char ts[64];
	fg_time_text(ts, sizeof(ts), sm->wall_off, now);
	strbuf_printf(sb, "%s summary%s, %.3fs since the start\n", ts, final ? " at the end" : "",
		      (double)(now - sm->start_ns) / 1e9);
	for (int i = 0; i < sm->funcs.n; i++) {
		const struct fg_fstat *f = fs[i];
		strbuf_printf(sb, "\n%s: %" PRIu64 " call%s, %" PRIu64 " returned", f->func,
			      f->calls, f->calls == 1 ? "" : "s", f->returned);
		if (f->inlined)
			strbuf_printf(sb, ", %" PRIu64 " inlined (no return to time)", f->inlined);
		strbuf_putc(sb, '\n');
		if (f->returned) {
			strbuf_puts(sb, "latency (ns):\n");
			rt_hist_log2_text(sb, f->hist, FG_SUM_BUCKETS);
		}
		int nr;
		struct fg_result **top = top_results(f, &nr);
		if (nr > FG_SUM_TOP && top[0]->count == 1) {
			/* a ranking of values that never repeat (addresses, times) says nothing */
			strbuf_printf(sb, "results: %d distinct%s, none repeated (e.g. %s)\n", nr,
				      f->other ? " and more not kept" : "", top[0]->text);
		} else if (nr) {
			strbuf_printf(sb, "results (the %d most frequent of %d%s):\n",
				      nr < FG_SUM_TOP ? nr : FG_SUM_TOP, nr,
				      f->other ? ", more not kept" : "");
			for (int k = 0; k < nr && k < FG_SUM_TOP; k++)
				strbuf_printf(sb, "%8" PRIu64 "  %s\n", top[k]->count, top[k]->text);
		}
		free(top);
	}
	strbuf_putc(sb, '\n');
}

static void print_json(struct fg_summary *sm, struct fg_fstat **fs, uint64_t now, bool final)
{
	struct strbuf *sb = &sm->out;
	strbuf_printf(sb,
		      "{\"type\": \"summary\", \"data\": {\"time_ns\": %lld, \"elapsed_ns\": "
		      "%" PRIu64 ", \"final\": %s, \"functions\": [",
		      (long long)now + (long long)sm->wall_off, now - sm->start_ns,
		      final ? "true" : "false");
	for (int i = 0; i < sm->funcs.n; i++) {
		const struct fg_fstat *f = fs[i];
		strbuf_puts(sb, i ? ", {\"function\": " : "{\"function\": ");
		strbuf_json_string(sb, f->func, strlen(f->func));
		strbuf_printf(sb, ", \"calls\": %" PRIu64 ", \"returned\": %" PRIu64
			      ", \"inlined\": %" PRIu64 ", \"latency_ns\": ", f->calls, f->returned,
			      f->inlined);
		rt_hist_log2_json(sb, f->hist, FG_SUM_BUCKETS);
		strbuf_puts(sb, ", \"results\": [");
		int nr;
		struct fg_result **top = top_results(f, &nr);
		for (int k = 0; k < nr && k < FG_SUM_TOP; k++) {
			strbuf_puts(sb, k ? ", {\"rets\": " : "{\"rets\": ");
			strbuf_json_string(sb, top[k]->text, strlen(top[k]->text));
			strbuf_printf(sb, ", \"count\": %" PRIu64 "}", top[k]->count);
		}
		free(top);
		strbuf_printf(sb, "], \"distinct_results\": %d, \"results_not_kept\": %" PRIu64
			      "}", nr, f->other);
	}
	strbuf_puts(sb, "]}}\n");
}

static void emit(struct fg_summary *sm, struct rt_output *o, uint64_t now, bool final)
{
	FILE *f = rt_output_file(o);
	/* the busiest first */
	struct fg_fstat **fs = xmalloc(sizeof(*fs) * (size_t)(sm->funcs.n + 1));
	for (int i = 0; i < sm->funcs.n; i++)
		fs[i] = &sm->funcs.v[i];
	qsort(fs, (size_t)sm->funcs.n, sizeof(*fs), cmp_fstat);
	sm->out.len = 0;
	if (rt_output_json(o))
		print_json(sm, fs, now, final);
	else
		print_text(sm, fs, now, final);
	free(fs);
	fwrite(sm->out.buf ? sm->out.buf : "", 1, sm->out.len, f);
	fflush(f);
}

void fg_summary_tick(void *ctx, struct rt_output *o)
{
	struct fg_summary *sm = ctx;
	uint64_t now = now_ns();
	if (now < sm->next_ns)
		return;
	while (sm->next_ns <= now)
		sm->next_ns += sm->interval_ns;
	emit(sm, o, now, false);
}

void fg_summary_finish(void *ctx, struct rt_output *o)
{
	struct fg_summary *sm = ctx;
	if (!ferror(rt_output_file(o)))
		emit(sm, o, now_ns(), true);
}
