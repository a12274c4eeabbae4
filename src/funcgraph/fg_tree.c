/* fg_tree: the call-graph consumer. Records arrive in ring-buffer order, which is each
 * goroutine's own order; every goroutine with a traced call in progress has one open
 * tree. A tree is printed whole when its outermost call returns, so trees of
 * concurrent goroutines never interleave:
 *
 *   22:01:03.120431 goid=1           main.add(a=1, b=2) { main.doSomething main.go:12
 *   22:01:03.120433 goid=1             main.add1(a=1, b=2) { main.add main.go:20
 *   22:01:03.722511 goid=1 602.078ms   } main.add1 main.go:24
 *   22:01:03.722514 goid=1 602.083ms } main.add main.go:21
 *
 * wall-clock time (local), goroutine, a duration column (filled on closing lines),
 * two spaces per depth, then `FUNC(ARGS) { CALLER FILE:LINE` (the caller and the line
 * of the CALL) or `} FUNC FILE:LINE` (the RET that fired).
 *
 * Nesting follows the depth the BPF side keeps per goroutine (frames keyed by stack
 * position). A call whose RET never fires (a panic unwound it) is found out when an
 * outer frame returns, or when a call at its depth or above enters: it is closed then
 * and marked `(panic: no return)`. Trees still open at the end are printed with their
 * open calls marked `(unfinished)`. -f json prints a tree's calls as JSON lines, -f
 * chrome as a trace's events (fg_chrome.c). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/diag.h"
#include "funcgraph/fg_int.h"
#include "runtime/output/output.h"

#define FG_HASH 1024         /* goroutine -> open tree buckets */
#define FG_SPAWNS 65536      /* goroutines whose lineage waits for their first tree */
#define FG_DUR_WIDTH 9       /* "602.078ms" */

/* FG_INLINED: an inlined copy's start, a leaf with no duration (GT_SITE_INLINED) */
enum fg_end { FG_OPEN, FG_RETURNED, FG_PANIC, FG_UNFINISHED, FG_INLINED };

struct fg_node {
	uint32_t site;     /* entry site: the function */
	uint32_t ret_site; /* the RET that fired (FG_RETURNED) */
	int depth;         /* in the tree: 0 = root */
	int event_id;      /* of the entry record */
	uint64_t absdepth; /* the goroutine's traced-call depth (BPF) */
	uint64_t entry_ns, end_ns, duration; /* CLOCK_MONOTONIC */
	uint64_t oncpu; /* ns on a CPU of the duration (FG_RETURNED, o.oncpu) */
	uint64_t caller_pc; /* link-time return address, 0 = unknown */
	enum fg_end end;
	uint8_t *rec; /* copy of the entry record: args are formatted when printed */
	uint8_t *ret_rec; /* and of the return record, when it holds --rets values */
	int ret_event_id;
	uint64_t span_id; /* --otlp */
};

struct fg_tree {
	struct fg_tree *next; /* bucket chain */
	int64_t goid;
	uint64_t seq; /* creation order */
	VEC(struct fg_node) nodes; /* in entry order (preorder) */
	VEC(int) open;             /* indexes of the open calls, innermost last */
	uint64_t dropped;          /* calls not kept (FG_MAX_NODES) */
	bool skipping;             /* a root call dropped whole (FG_MAX_KEPT): nothing kept */
	uint64_t root_depth;       /* ... until the call at this depth ends */
	uint8_t trace_id[16];      /* --otlp: the root call's trace */
};

/* -f chrome, --otlp: a goroutine made (FG_SPAWN), until its first tree is written */
struct fg_spawned {
	uint64_t goid; /* 0: a free slot */
	int64_t pid;   /* goids are the process's own: a BINARY target runs in several */
	int64_t parent;
	uint64_t ns, pc; /* pc: the go statement's, as the process has it */
	uint64_t link_span; /* --otlp: the parent's innermost open call then, or 0 */
	uint8_t link_trace[16];
};

struct fg_consumer {
	struct fg_tree_opts o;
	struct fg_spawned *spawns; /* [FG_SPAWNS], open addressing by goid; -f chrome and
				      --otlp only */
	const struct gt_plan *plan;
	bool plan_ok;
	struct binfo_lines *lines;
	bool lines_tried;
	struct fg_tree *hash[FG_HASH];
	int64_t wall_off; /* CLOCK_REALTIME - CLOCK_MONOTONIC at start, ns */
	uint64_t seq, printed;
	uint64_t untracked, bad, dropped;
	uint64_t kept;          /* calls held by the open trees */
	uint64_t max_kept;      /* FG_MAX_KEPT (GT_FUNCGRAPH_MAX_KEPT: the tests' smaller one) */
	uint64_t dropped_roots; /* root calls dropped whole (FG_MAX_KEPT) */
	int color; /* -1: not decided yet */
	struct fg_chrome chrome; /* -f chrome */
	/* GT_FUNCGRAPH_TEXT=FILE: the text trees too, written there, of a run in another
	 * format (the tests compare the two on the same calls) */
	FILE *text_copy;
	struct strbuf out, text; /* out: what is written next, the only thing written */
};

/* ---- records ---- */

uint64_t fg_field(const struct plan_event *ev, const uint8_t *rec, int i)
{
	uint64_t v = 0;
	if (i < ev->nargs)
		memcpy(&v, rec + ev->args[i].offset, sizeof(v));
	return v;
}

void fg_time_text(char *buf, size_t n, int64_t wall_off, uint64_t mono_ns)
{
	int64_t wall = (int64_t)mono_ns + wall_off;
	time_t sec = (time_t)(wall / 1000000000);
	struct tm tm;
	localtime_r(&sec, &tm);
	size_t k = strftime(buf, n, "%H:%M:%S", &tm);
	snprintf(buf + k, n - k, ".%06lld", (long long)(wall % 1000000000) / 1000);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static bool plan_usable(const struct gt_plan *plan)
{
	for (int i = 0; i < plan->nevents; i++) {
		const struct plan_event *ev = &plan->events[i];
		if (ev->kind == PLAN_EV_FG_ENTRY &&
		    (ev->nargs < FG_ARG_USER || ev->args[FG_ARG_IP].kind != PLAN_ARG_INT ||
		     ev->args[FG_ARG_PID].kind != PLAN_ARG_INT))
			return false;
		if (ev->kind == PLAN_EV_FG_RETURN && ev->nargs < FG_ARG_DURATION + 1)
			return false;
	}
	return true;
}

struct fg_consumer *fg_consumer_new(const struct fg_tree_opts *o, const struct gt_plan *plan)
{
	struct fg_consumer *c = xcalloc(1, sizeof(*c));
	c->o = *o;
	c->plan = plan;
	c->plan_ok = plan_usable(plan);
	c->color = -1;
	c->wall_off = wall_off_ns();
	if (!c->plan_ok)
		diag_fatal("internal error: the call-graph events do not have the expected layout");
	if (o->chrome)
		fg_chrome_init(&c->chrome, now_ns(), c->wall_off, base_name(binfo_path(o->bi)));
	if (o->chrome || o->otlp)
		c->spawns = xcalloc(FG_SPAWNS, sizeof(*c->spawns));
	const char *mk = getenv("GT_FUNCGRAPH_MAX_KEPT");
	c->max_kept = mk && *mk ? strtoull(mk, NULL, 10) : FG_MAX_KEPT;
	const char *copy = getenv("GT_FUNCGRAPH_TEXT");
	if (copy && *copy && !(c->text_copy = fopen(copy, "w")))
		diag_print(DIAG_WARNING, "GT_FUNCGRAPH_TEXT: cannot open %s: %s", copy,
			   strerror(errno));
	return c;
}

/* A PIE's load bias from an entry record of SITE (its probed address, reg("ip"), against
 * the site's link-time one); 0 otherwise. */
static uint64_t load_bias(const struct fg_consumer *c, int event_id, const uint8_t *rec,
			  uint32_t site)
{
	uint64_t ip = fg_field(&c->plan->events[event_id], rec, FG_ARG_IP);
	return ip ? ip - c->plan->sites[site].vaddr : 0;
}

/* ---- open trees ---- */

static struct fg_tree **bucket(struct fg_consumer *c, int64_t goid)
{
	return &c->hash[(uint64_t)goid * 0x9e3779b97f4a7c15ull >> 54]; /* FG_HASH = 2^10 */
}

static struct fg_tree *find_tree(struct fg_consumer *c, int64_t goid)
{
	for (struct fg_tree *t = *bucket(c, goid); t; t = t->next)
		if (t->goid == goid)
			return t;
	return NULL;
}

static void unlink_tree(struct fg_consumer *c, struct fg_tree *t)
{
	for (struct fg_tree **p = bucket(c, t->goid); *p; p = &(*p)->next)
		if (*p == t) {
			*p = t->next;
			return;
		}
}

static void free_tree(struct fg_tree *t)
{
	for (int i = 0; i < t->nodes.n; i++) {
		free(t->nodes.v[i].rec);
		free(t->nodes.v[i].ret_rec);
	}
	vec_free(&t->nodes);
	vec_free(&t->open);
	free(t);
}

/* ---- printing ---- */

static const char *const C_TIME = "\033[33m", *const C_DUR = "\033[32m",
			 *const C_FUNC = "\033[31m", *const C_ARGS = "\033[35m",
			 *const C_CALLER = "\033[32m", *const C_LINE = "\033[36m",
			 *const C_MARK = "\033[1;31m", *const C_CPU = "\033[34m",
			 *const C_OFF = "\033[0m";

static void colored(struct fg_consumer *c, const char *color, const char *text)
{
	if (c->color)
		strbuf_printf(&c->out, "%s%s%s", color, text, C_OFF);
	else
		strbuf_puts(&c->out, text);
}

static void put_time(struct fg_consumer *c, uint64_t mono_ns)
{
	char buf[64];
	fg_time_text(buf, sizeof(buf), c->wall_off, mono_ns);
	colored(c, C_TIME, buf);
}

static void fmt_duration(char *buf, size_t n, uint64_t ns)
{
	if (ns < 1000000)
		snprintf(buf, n, "%.3fus", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, n, "%.3fms", (double)ns / 1e6);
	else
		snprintf(buf, n, "%.6fs", (double)ns / 1e9);
}

static struct binfo_lines *lines(struct fg_consumer *c)
{
	if (!c->lines_tried) {
		c->lines_tried = true;
		if (binfo_lines__open(c->o.bi, BINFO_LINES_AUTO, &c->lines))
			diag_print(DIAG_WARNING,
				   "%s has neither DWARF line tables nor a readable .gopclntab: no "
				   "call sites",
				   binfo_path(c->o.bi));
	}
	return c->lines;
}

/* "FILE:LINE" of PC (basename) into BUF, and the function at PC; false when unknown. */
static bool site_text(struct fg_consumer *c, uint64_t pc, char *buf, size_t n, const char **fn)
{
	struct binfo_pcline pl;
	struct binfo_lines *l = lines(c);
	*fn = NULL;
	if (!pc || !l || binfo_lines_lookup(l, pc, &pl))
		return false;
	*fn = pl.func;
	if (!pl.file)
		return false;
	snprintf(buf, n, "%s:%d", base_name(pl.file), pl.line);
	return true;
}

/* An inlined copy's caller, and the file and line of the inlined call: the next frame of
 * the inline tree at the copy's start; false when unknown. */
static bool inlined_frame(struct fg_consumer *c, const struct fg_node *nd, struct binfo_frame *out)
{
	struct binfo_frame fr[8];
	struct binfo_lines *l = lines(c);
	if (!l || binfo_lines_frames(l, c->plan->sites[nd->site].vaddr, fr, 8) < 2)
		return false;
	*out = fr[1];
	return true;
}

/* ... as site_text() gives a call's: "FILE:LINE" (basename) into BUF, the caller in *FN */
static bool inlined_caller(struct fg_consumer *c, const struct fg_node *nd, char *buf, size_t n,
			   const char **fn)
{
	struct binfo_frame f;
	*fn = NULL;
	if (!inlined_frame(c, nd, &f))
		return false;
	*fn = f.func;
	if (!f.file)
		return false;
	snprintf(buf, n, "%s:%d", base_name(f.file), f.line);
	return true;
}

/* The arguments (RETS: the results) as text: control bytes (a cN read past a Go string)
 * escaped. */
static const char *values_text(struct fg_consumer *c, struct rt_output *o,
			       const struct fg_node *nd, bool rets)
{
	struct strbuf raw = {0};
	c->text.len = 0;
	strbuf_puts(&c->text, "");
	if (rets)
		rt_output_format(o, nd->ret_event_id, nd->ret_rec, 0, &raw);
	else
		rt_output_format(o, nd->event_id, nd->rec, FG_FMT_SKIP, &raw);
	for (size_t i = 0; i < raw.len; i++) {
		unsigned char ch = (unsigned char)raw.buf[i];
		if (ch < 0x20 || ch == 0x7f)
			strbuf_printf(&c->text, "\\x%02x", ch);
		else
			strbuf_putc(&c->text, (char)ch);
	}
	strbuf_free(&raw);
	return c->text.buf;
}

/* time, goid, the wall-clock duration DUR and on-CPU time CPU of a closing line (NULL:
 * blank columns), then the indentation of DEPTH */
static void line_head(struct fg_consumer *c, const struct fg_tree *t, uint64_t ns,
		      const char *dur, const char *cpu, int depth)
{
	put_time(c, ns);
	strbuf_printf(&c->out, " goid=%" PRId64 " ", t->goid);
	if (dur && c->color)
		strbuf_printf(&c->out, "%s%*s%s", C_DUR, FG_DUR_WIDTH, dur, C_OFF);
	else
		strbuf_printf(&c->out, "%*s", FG_DUR_WIDTH, dur ? dur : "");
	if (cpu && c->color)
		strbuf_printf(&c->out, " cpu %s%*s%s", C_CPU, FG_DUR_WIDTH, cpu, C_OFF);
	else if (cpu)
		strbuf_printf(&c->out, " cpu %*s", FG_DUR_WIDTH, cpu);
	else if (c->o.oncpu)
		strbuf_printf(&c->out, "%*s", FG_DUR_WIDTH + 5, "");
	strbuf_printf(&c->out, " %*s", 2 * depth, "");
}

static void print_open(struct fg_consumer *c, struct rt_output *o, const struct fg_tree *t,
		       const struct fg_node *nd)
{
	char where[512];
	const char *caller;
	bool known = nd->end == FG_INLINED
			     ? inlined_caller(c, nd, where, sizeof(where), &caller)
			     : site_text(c, nd->caller_pc ? nd->caller_pc - 1 : 0, where,
					 sizeof(where), &caller);
	line_head(c, t, nd->entry_ns, NULL, NULL, nd->depth);
	colored(c, C_FUNC, c->plan->sites[nd->site].func);
	strbuf_putc(&c->out, '(');
	colored(c, C_ARGS, values_text(c, o, nd, false));
	strbuf_puts(&c->out, ") { ");
	colored(c, C_CALLER, caller ? caller : "?");
	if (known) {
		strbuf_putc(&c->out, ' ');
		colored(c, C_LINE, where);
	}
	if (nd->end == FG_INLINED) { /* a leaf of no duration: no line of its own closes it */
		strbuf_puts(&c->out, " } ");
		colored(c, C_MARK, "(inlined)");
	}
	strbuf_putc(&c->out, '\n');
}

static void print_close(struct fg_consumer *c, struct rt_output *o, const struct fg_tree *t,
			const struct fg_node *nd)
{
	char dur[32], cpu[32], where[512];
	const char *fn;
	bool returned = nd->end == FG_RETURNED;
	if (returned) {
		fmt_duration(dur, sizeof(dur), nd->duration);
		fmt_duration(cpu, sizeof(cpu), nd->oncpu);
	}
	line_head(c, t, nd->end_ns, returned ? dur : NULL, returned && c->o.oncpu ? cpu : NULL,
		  nd->depth);
	strbuf_puts(&c->out, "} ");
	colored(c, C_FUNC, c->plan->sites[nd->site].func);
	if (nd->ret_rec) { /* as Go writes results: main.div (q=3, err=<nil>) */
		strbuf_puts(&c->out, " (");
		colored(c, C_ARGS, values_text(c, o, nd, true));
		strbuf_putc(&c->out, ')');
	}
	if (nd->end == FG_RETURNED) {
		if (site_text(c, c->plan->sites[nd->ret_site].vaddr, where, sizeof(where), &fn)) {
			strbuf_putc(&c->out, ' ');
			colored(c, C_LINE, where);
		}
	} else {
		strbuf_putc(&c->out, ' ');
		colored(c, C_MARK, nd->end == FG_PANIC ? "(panic: no return)" : "(unfinished)");
	}
	strbuf_putc(&c->out, '\n');
}

static void print_text(struct fg_consumer *c, struct rt_output *o, const struct fg_tree *t)
{
	VEC(int) st = {0};
	for (int i = 0; i < t->nodes.n; i++) {
		const struct fg_node *nd = &t->nodes.v[i];
		while (st.n && t->nodes.v[st.v[st.n - 1]].depth >= nd->depth)
			print_close(c, o, t, &t->nodes.v[st.v[--st.n]]);
		print_open(c, o, t, nd);
		if (nd->end != FG_INLINED)
			vec_push(&st, i);
	}
	while (st.n)
		print_close(c, o, t, &t->nodes.v[st.v[--st.n]]);
	vec_free(&st);
	if (t->dropped)
		strbuf_printf(&c->out,
			      "... goid=%" PRId64 ": %" PRIu64 " more calls of this tree not shown "
			      "(a tree keeps %d, all open trees %" PRIu64 ")\n",
			      t->goid, t->dropped, FG_MAX_NODES, c->max_kept);
}

static void json_str(struct strbuf *sb, const char *s)
{
	if (s)
		strbuf_json_string(sb, s, strlen(s));
	else
		strbuf_puts(sb, "null");
}

/* The --args (RETS: --rets) spec of ND's function, or NULL; its record, event and first
 * value's argument index. */
static const struct fg_argspec *node_spec(const struct fg_consumer *c, const struct fg_node *nd,
					  bool rets, const struct plan_event **ev,
					  const uint8_t **rec, int *first)
{
	const char *fn = c->plan->sites[nd->site].func;
	const struct fg_argspec *specs = rets ? c->o.rspecs : c->o.specs;
	int nspecs = rets ? c->o.nrspecs : c->o.nspecs;
	*first = rets ? FG_RET_USER : FG_ARG_USER;
	*rec = rets ? nd->ret_rec : nd->rec;
	*ev = &c->plan->events[rets ? nd->ret_event_id : nd->event_id];
	for (int i = 0; i < nspecs && *rec; i++)
		if (!strcmp(specs[i].func, fn))
			return &specs[i];
	return NULL;
}

/* The --args (RETS: --rets) values of ND by name, the text ones in allocated copies
 * (values_free). */
static int node_values(struct fg_consumer *c, const struct fg_node *nd, bool rets,
		       struct fg_value **out)
{
	const struct plan_event *ev;
	const uint8_t *rec;
	int first;
	const struct fg_argspec *spec = node_spec(c, nd, rets, &ev, &rec, &first);
	int n = 0;
	*out = spec && spec->nargs ? xcalloc((size_t)spec->nargs, sizeof(**out)) : NULL;
	for (int k = 0; spec && k < spec->nargs && first + k < ev->nargs; k++, n++) {
		const struct plan_arg *a = &ev->args[first + k];
		struct fg_value *v = &(*out)[k];
		v->name = spec->args[k].name;
		if (a->kind == PLAN_ARG_STR) {
			const char *str = (const char *)rec + a->offset;
			v->text = strndup(str, strnlen(str, (size_t)a->size));
		} else if (a->kind != PLAN_ARG_INT) { /* a Go value by name: its %+v text */
			struct strbuf sb = {0};
			rt_value_format(&sb, c->plan, a, rec, false);
			v->text = sb.buf ? sb.buf : xstrdup("");
			fg_value_type(a, v);
		} else {
			v->kind = FG_V_INT;
			v->is_signed = a->is_signed;
			v->i = fg_field(ev, rec, first + k);
		}
	}
	return n;
}

static void values_free(struct fg_value *v, int n)
{
	for (int i = 0; i < n; i++)
		free((char *)v[i].text);
	free(v);
}

/* The --args (RETS: --rets) values of ND as a JSON object, {} without them. */
static void json_values(struct fg_consumer *c, const struct fg_node *nd, bool rets)
{
	const struct plan_event *ev;
	const uint8_t *rec;
	int first;
	const struct fg_argspec *spec = node_spec(c, nd, rets, &ev, &rec, &first);
	strbuf_putc(&c->out, '{');
	for (int k = 0; spec && k < spec->nargs && first + k < ev->nargs; k++) {
		const struct plan_arg *a = &ev->args[first + k];
		json_str(&c->out, spec->args[k].name);
		strbuf_puts(&c->out, ": ");
		if (a->kind == PLAN_ARG_STR) {
			const char *s = (const char *)rec + a->offset;
			strbuf_json_string(&c->out, s, strnlen(s, (size_t)a->size));
		} else if (a->kind != PLAN_ARG_INT) { /* a Go value by name: its %+v text */
			rt_value_format(&c->out, c->plan, a, rec, true);
		} else {
			uint64_t v = fg_field(ev, rec, first + k);
			if (a->is_signed)
				strbuf_printf(&c->out, "%lld", (long long)v);
			else
				strbuf_printf(&c->out, "%llu", (unsigned long long)v);
		}
		if (k + 1 < spec->nargs)
			strbuf_puts(&c->out, ", ");
	}
	strbuf_putc(&c->out, '}');
}

static void json_site(struct fg_consumer *c, const char *key, uint64_t pc, bool want_fn)
{
	struct binfo_pcline pl = {0};
	struct binfo_lines *l = lines(c);
	bool ok = pc && l && !binfo_lines_lookup(l, pc, &pl);
	if (want_fn) {
		strbuf_puts(&c->out, ", \"caller\": ");
		json_str(&c->out, ok ? pl.func : NULL);
	}
	strbuf_printf(&c->out, ", \"%s_file\": ", key);
	json_str(&c->out, ok ? pl.file : NULL);
	strbuf_printf(&c->out, ", \"%s_line\": %d", key, ok ? pl.line : 0);
}

/* json_site()'s caller and call site, of an inlined copy */
static void json_inlined_site(struct fg_consumer *c, const struct fg_node *nd)
{
	struct binfo_frame f = {0};
	bool ok = inlined_frame(c, nd, &f);
	strbuf_puts(&c->out, ", \"caller\": ");
	json_str(&c->out, ok ? f.func : NULL);
	strbuf_puts(&c->out, ", \"call_file\": ");
	json_str(&c->out, ok ? f.file : NULL);
	strbuf_printf(&c->out, ", \"call_line\": %d", ok ? f.line : 0);
}

static void print_json(struct fg_consumer *c, const struct fg_tree *t)
{
	for (int i = 0; i < t->nodes.n; i++) {
		const struct fg_node *nd = &t->nodes.v[i];
		strbuf_printf(&c->out,
			      "{\"type\": \"call\", \"data\": {\"tree\": %" PRIu64
			      ", \"goid\": %" PRId64 ", \"depth\": %d, \"function\": ",
			      c->printed, t->goid, nd->depth);
		json_str(&c->out, c->plan->sites[nd->site].func);
		strbuf_puts(&c->out, ", \"args\": ");
		json_values(c, nd, false);
		strbuf_puts(&c->out, ", \"rets\": ");
		json_values(c, nd, true);
		strbuf_printf(&c->out, ", \"entry_ns\": %lld, \"duration_ns\": ",
			      (long long)nd->entry_ns + (long long)c->wall_off);
		if (nd->end == FG_RETURNED)
			strbuf_printf(&c->out, "%" PRIu64, nd->duration);
		else
			strbuf_puts(&c->out, "null");
		strbuf_puts(&c->out, ", \"oncpu_ns\": ");
		if (nd->end == FG_RETURNED && c->o.oncpu)
			strbuf_printf(&c->out, "%" PRIu64, nd->oncpu);
		else
			strbuf_puts(&c->out, "null");
		if (nd->end == FG_INLINED)
			json_inlined_site(c, nd);
		else
			json_site(c, "call", nd->caller_pc ? nd->caller_pc - 1 : 0, true);
		json_site(c, "return",
			  nd->end == FG_RETURNED ? c->plan->sites[nd->ret_site].vaddr : 0, false);
		strbuf_printf(&c->out, ", \"panic\": %s, \"unfinished\": %s, \"inlined\": %s}}\n",
			      nd->end == FG_PANIC ? "true" : "false",
			      nd->end == FG_UNFINISHED ? "true" : "false",
			      nd->end == FG_INLINED ? "true" : "false");
	}
	if (t->dropped)
		strbuf_printf(&c->out,
			      "{\"type\": \"calls_not_shown\", \"data\": {\"tree\": %" PRIu64
			      ", \"goid\": %" PRId64 ", \"calls\": %" PRIu64 "}}\n",
			      c->printed, t->goid, t->dropped);
}

/* The slot of goroutine GOID of process PID in the spawn table: its own, else a free one
 * (NULL: neither within a few slots, the table being full there). */
static struct fg_spawned *spawn_slot(struct fg_consumer *c, int64_t pid, uint64_t goid)
{
	for (uint64_t i = 0; i < 16; i++) {
		struct fg_spawned *s = &c->spawns[(goid + (uint64_t)pid * 31 + i) % FG_SPAWNS];
		if ((s->goid == goid && s->pid == pid) || !s->goid)
			return s;
	}
	return NULL;
}

static void on_spawn(struct fg_consumer *c, const struct plan_event *ev, const uint8_t *rec)
{
	if (!c->spawns || ev->nargs != FG_SPAWN_N)
		return;
	uint64_t goid = fg_field(ev, rec, FG_SPAWN_GOID);
	int64_t pid = (int64_t)fg_field(ev, rec, FG_SPAWN_PID);
	struct fg_spawned *s = goid ? spawn_slot(c, pid, goid) : NULL;
	if (!s)
		return;
	*s = (struct fg_spawned){.goid = goid,
				 .pid = pid,
				 .parent = (int64_t)fg_field(ev, rec, FG_SPAWN_PARENT),
				 .ns = fg_field(ev, rec, FG_SPAWN_NSECS),
				 .pc = fg_field(ev, rec, FG_SPAWN_PC)};
	/* --otlp: the span the go statement ran in, for a link from the goroutine's first */
	const struct fg_tree *pt = c->o.otlp ? find_tree(c, s->parent) : NULL;
	if (pt && !pt->skipping && pt->open.n) {
		s->link_span = pt->nodes.v[pt->open.v[pt->open.n - 1]].span_id;
		memcpy(s->link_trace, pt->trace_id, sizeof(s->link_trace));
	}
}

/* "FILE:LINE" of where a function starts: FILE in full, for code.filepath */
static const char *func_place(struct fg_consumer *c, uint32_t site, int *line)
{
	struct binfo_pcline pl;
	struct binfo_lines *l = lines(c);
	*line = 0;
	if (!l || binfo_lines_lookup(l, c->plan->sites[site].vaddr, &pl) || !pl.file)
		return NULL;
	*line = pl.line;
	return pl.file;
}

/* -f chrome: a complete event per call; --otlp: a span. A call that did not return lasts
 * until it was found out (or until the end): the interval its marked line shows. */
static void print_calls(struct fg_consumer *c, struct rt_output *o, const struct fg_tree *t)
{
	static const char *const marks[] = {[FG_PANIC] = "panic: no return",
					    [FG_UNFINISHED] = "unfinished",
					    [FG_INLINED] = "inlined"};
	int64_t pid = 0;
	/* the goroutine's lineage, once: with its first tree */
	struct fg_spawned *sd = NULL;
	struct fg_spawn spawn = {0};
	char go_site[512];
	if (c->spawns && t->nodes.n) {
		const struct fg_node *n0 = &t->nodes.v[0];
		const struct plan_event *ev0 = &c->plan->events[n0->event_id];
		pid = (int64_t)fg_field(ev0, n0->rec, FG_ARG_PID);
		sd = spawn_slot(c, pid, (uint64_t)t->goid);
	}
	if (sd && sd->goid == (uint64_t)t->goid) {
		const struct fg_node *n0 = &t->nodes.v[0];
		const char *fn;
		spawn = (struct fg_spawn){sd->parent, sd->ns, NULL,
					  sd->link_span ? sd->link_trace : NULL, sd->link_span};
		if (sd->pc && site_text(c, sd->pc - load_bias(c, n0->event_id, n0->rec, n0->site) - 1,
					go_site, sizeof(go_site), &fn))
			spawn.site = go_site;
		sd->goid = 0;
	} else {
		sd = NULL;
	}
	/* the spans' parents: the latest node at each depth (a depth is below the count) */
	int *stack = xmalloc(((size_t)t->nodes.n + 1) * sizeof(*stack));
	for (int i = 0; i < t->nodes.n; i++) {
		const struct fg_node *nd = &t->nodes.v[i];
		const struct plan_event *ev = &c->plan->events[nd->event_id];
		char call[512], ret[512];
		int depth = nd->depth < t->nodes.n ? nd->depth : t->nodes.n - 1;
		stack[depth] = i;
		/* both texts are made in c->text: the results' copied first */
		char *rets = nd->ret_rec ? xstrdup(values_text(c, o, nd, true)) : NULL;
		const char *fn, *args = values_text(c, o, nd, false);
		bool returned = nd->end == FG_RETURNED;
		pid = (int64_t)fg_field(ev, nd->rec, FG_ARG_PID);
		struct fg_call cc = {
			.pid = pid,
			.goid = t->goid,
			.func = c->plan->sites[nd->site].func,
			.entry_ns = nd->entry_ns,
			.dur_ns = returned ? nd->duration : nd->end_ns - nd->entry_ns,
			.oncpu_ns = returned && c->o.oncpu ? (int64_t)nd->oncpu : -1,
			.args = *args ? args : NULL,
			.rets = rets,
			.spawn = sd && i == 0 ? &spawn : NULL,
			.mark = returned ? NULL : marks[nd->end],
			.depth = nd->depth,
			.trace_id = t->trace_id,
			.span_id = nd->span_id,
			.parent_id = depth ? t->nodes.v[stack[depth - 1]].span_id : 0,
			.panicked = nd->end == FG_PANIC,
			.unfinished = nd->end == FG_UNFINISHED,
			.inlined = nd->end == FG_INLINED,
		};
		if (nd->end_ns < nd->entry_ns && !returned)
			cc.dur_ns = 0;
		if (nd->end == FG_INLINED ? inlined_caller(c, nd, call, sizeof(call), &cc.caller)
					  : site_text(c, nd->caller_pc ? nd->caller_pc - 1 : 0, call,
						      sizeof(call), &cc.caller))
			cc.call_site = call;
		else if (nd->caller_pc) { /* no line table: the return address */
			snprintf(call, sizeof(call), "0x%" PRIx64, nd->caller_pc);
			cc.call_site = call;
		}
		if (returned &&
		    site_text(c, c->plan->sites[nd->ret_site].vaddr, ret, sizeof(ret), &fn))
			cc.returned_at = ret;
		struct fg_value *argv = NULL, *retv = NULL;
		if (c->o.otlp) {
			cc.func_file = func_place(c, nd->site, &cc.func_line);
			cc.nargv = node_values(c, nd, false, &argv);
			cc.nretv = node_values(c, nd, true, &retv);
			cc.argv = argv;
			cc.retv = retv;
			fg_otlp_call(c->o.otlp, c->wall_off, &cc);
			values_free(argv, cc.nargv);
			values_free(retv, cc.nretv);
		}
		if (c->o.chrome)
			fg_chrome_call(&c->chrome, &c->out, &cc);
		free(rets);
	}
	free(stack);
	if (c->o.chrome && t->dropped && t->nodes.n)
		fg_chrome_dropped(&c->chrome, &c->out, pid, t->goid, t->nodes.v[0].entry_ns,
				  t->dropped);
}

/* The one place output is written: what OUT has gathered, to F. */
static void write_out(struct fg_consumer *c, FILE *f)
{
	fwrite(c->out.buf ? c->out.buf : "", 1, c->out.len, f);
	c->out.len = 0;
}

/* Prints T (open calls marked unfinished at NOW) and frees it. */
static void emit_tree(struct fg_consumer *c, struct rt_output *o, struct fg_tree *t, uint64_t now)
{
	FILE *f = rt_output_file(o);
	if (c->color < 0)
		c->color = !c->o.no_color && !c->o.chrome && !rt_output_json(o) &&
			   isatty(fileno(f));
	for (int i = 0; i < t->open.n; i++) {
		struct fg_node *nd = &t->nodes.v[t->open.v[i]];
		nd->end = FG_UNFINISHED;
		nd->end_ns = now;
	}
	c->out.len = 0;
	if (c->o.chrome || c->o.otlp) /* -f chrome's events; --otlp's spans, beside the text */
		print_calls(c, o, t);
	if (!c->o.chrome && rt_output_json(o))
		print_json(c, t);
	else if (!c->o.chrome)
		print_text(c, o, t);
	write_out(c, f);
	if (c->text_copy && (c->o.chrome || rt_output_json(o))) {
		print_text(c, o, t);
		write_out(c, c->text_copy);
	}
	c->printed++;
	c->dropped += t->dropped;
	c->kept -= (uint64_t)t->nodes.n;
	unlink_tree(c, t);
	free_tree(t);
}

/* ---- events ---- */

/* Open calls at DEPTH or deeper were left without a return: closed at NS, marked. */
static void close_abandoned(struct fg_tree *t, uint64_t depth, uint64_t ns)
{
	while (t->open.n) {
		struct fg_node *nd = &t->nodes.v[t->open.v[t->open.n - 1]];
		if (nd->absdepth < depth)
			break;
		nd->end = FG_PANIC;
		nd->end_ns = ns;
		t->open.n--;
	}
}

/* A call's entry, or an inlined copy's start (GT_SITE_INLINED): a leaf in the call open
 * at the goroutine's traced DEPTH there, or a tree of one line at depth 0. */
static void on_entry(struct fg_consumer *c, struct rt_output *o, int id,
		     const struct plan_event *ev, const uint8_t *rec, size_t size)
{
	int64_t goid = (int64_t)fg_field(ev, rec, FG_ARG_GOID);
	uint64_t depth = fg_field(ev, rec, FG_ARG_DEPTH), ns = fg_field(ev, rec, FG_ARG_NSECS);
	uint32_t site = (uint32_t)fg_field(ev, rec, FG_ARG_SITE);
	bool inlined = c->plan->sites[site].cookie_flags & GT_SITE_INLINED;
	struct fg_tree *t = find_tree(c, goid);

	if (inlined)
		depth++; /* its own, as a call's would be */
	if (t && t->skipping) {
		if (depth > t->root_depth)
			return; /* inside the dropped root call */
		unlink_tree(c, t); /* the dropped call was left (a panic): a new root */
		free_tree(t);
		t = NULL;
	}
	if (t) {
		close_abandoned(t, depth, ns);
		if (!t->open.n) { /* even its root was left: the tree is complete */
			emit_tree(c, o, t, ns);
			t = NULL;
		}
	}
	if (!t) {
		if (c->o.drilldown && strcmp(c->plan->sites[site].func, c->o.drilldown))
			return; /* outside every tree rooted at the drilldown function */
		t = xcalloc(1, sizeof(*t));
		t->goid = goid;
		t->seq = c->seq++;
		if (c->o.otlp)
			otlp__trace_id(c->o.otlp, t->trace_id);
		struct fg_tree **b = bucket(c, goid);
		t->next = *b;
		*b = t;
		if (c->kept >= c->max_kept) {
			t->skipping = true;
			t->root_depth = depth;
			c->dropped_roots++;
			return;
		}
	}
	if (t->nodes.n >= FG_MAX_NODES || c->kept >= c->max_kept) {
		t->dropped++;
		return;
	}
	uint64_t ret = inlined ? 0 : fg_field(ev, rec, FG_ARG_RETADDR);
	uint64_t bias = ret ? load_bias(c, id, rec, site) : 0;
	struct fg_node nd = {
		.site = site,
		.depth = t->open.n,
		.event_id = id,
		.absdepth = depth,
		.entry_ns = ns,
		.end_ns = inlined ? ns : 0,
		.caller_pc = ret ? ret - bias : 0,
		.end = inlined ? FG_INLINED : FG_OPEN,
		.rec = xmalloc(size),
		.span_id = c->o.otlp ? otlp__span_id(c->o.otlp) : 0,
	};
	memcpy(nd.rec, rec, size);
	vec_push(&t->nodes, nd);
	c->kept++;
	if (!inlined)
		vec_push(&t->open, t->nodes.n - 1);
	else if (!t->open.n)
		emit_tree(c, o, t, ns);
}

static void on_return(struct fg_consumer *c, struct rt_output *o, int id,
		      const struct plan_event *ev, const uint8_t *rec, size_t size)
{
	int64_t goid = (int64_t)fg_field(ev, rec, FG_ARG_GOID);
	uint64_t depth = fg_field(ev, rec, FG_ARG_DEPTH), ns = fg_field(ev, rec, FG_ARG_NSECS);
	struct fg_tree *t = find_tree(c, goid);
	if (!t)
		return; /* a call outside the trees (begun before the trace, or not drilled) */
	if (t->skipping) {
		if (depth <= t->root_depth) { /* the dropped root call ended */
			unlink_tree(c, t);
			free_tree(t);
		}
		return;
	}
	close_abandoned(t, depth + 1, ns);
	if (t->open.n) {
		struct fg_node *nd = &t->nodes.v[t->open.v[t->open.n - 1]];
		if (nd->absdepth == depth) {
			nd->end = FG_RETURNED;
			nd->end_ns = ns;
			nd->duration = fg_field(ev, rec, FG_ARG_DURATION);
			nd->oncpu = fg_field(ev, rec, FG_ARG_ONCPU);
			nd->ret_site = (uint32_t)fg_field(ev, rec, FG_ARG_SITE);
			if (ev->nargs > FG_RET_USER) {
				nd->ret_rec = xmalloc(size);
				memcpy(nd->ret_rec, rec, size);
				nd->ret_event_id = id;
			}
			t->open.n--;
		}
	}
	if (!t->open.n)
		emit_tree(c, o, t, ns);
}

void fg_consumer_record(void *ctx, struct rt_output *o, int event_id, const void *rec,
			size_t size)
{
	struct fg_consumer *c = ctx;
	const struct plan_event *ev = &c->plan->events[event_id];
	if (!c->plan_ok)
		return;
	if (ev->kind == PLAN_EV_FG_SPAWN) { /* fields of its own: no site, no depth */
		on_spawn(c, ev, rec);
		return;
	}
	if ((uint32_t)fg_field(ev, rec, FG_ARG_SITE) >= (uint32_t)c->plan->nsites) {
		c->bad++;
		return;
	}
	if (ev->kind == PLAN_EV_FG_ENTRY &&
	    c->plan->sites[fg_field(ev, rec, FG_ARG_SITE)].cookie_flags & GT_SITE_INLINED) {
		on_entry(c, o, event_id, ev, rec, size); /* depth 0: no traced call is open */
		return;
	}
	if (!fg_field(ev, rec, FG_ARG_DEPTH)) {
		c->untracked++; /* no call stack could be kept for it (state map full) */
		return;
	}
	if (ev->kind == PLAN_EV_FG_ENTRY)
		on_entry(c, o, event_id, ev, rec, size);
	else if (ev->kind == PLAN_EV_FG_RETURN)
		on_return(c, o, event_id, ev, rec, size);
}

static int tree_seq_cmp(const void *a, const void *b)
{
	const struct fg_tree *x = *(struct fg_tree *const *)a, *y = *(struct fg_tree *const *)b;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void fg_consumer_finish(void *ctx, struct rt_output *o)
{
	struct fg_consumer *c = ctx;
	VEC(struct fg_tree *) left = {0};
	for (int i = 0; i < FG_HASH; i++)
		for (struct fg_tree *t = c->hash[i]; t; t = t->next)
			vec_push(&left, t);
	vec_sort(&left, tree_seq_cmp);
	uint64_t now = now_ns();
	/* Not after the output failed (a closed pipe): SIGPIPE is no longer ignored now. */
	bool writable = !ferror(rt_output_file(o));
	for (int i = 0; i < left.n; i++) {
		if (writable && !left.v[i]->skipping) {
			emit_tree(c, o, left.v[i], now);
		} else {
			unlink_tree(c, left.v[i]);
			free_tree(left.v[i]);
		}
	}
	vec_free(&left);
	if (c->o.chrome && writable) {
		c->out.len = 0;
		fg_chrome_end(&c->chrome, &c->out);
		write_out(c, rt_output_file(o));
	}
	if (c->untracked)
		diag_print(DIAG_WARNING,
			   "%" PRIu64 " calls were not tracked (goroutine state map full) and are "
			   "missing from the trees",
			   c->untracked);
	if (c->dropped)
		diag_print(DIAG_WARNING, "%" PRIu64 " calls not shown: trees are kept to %d calls "
			   "each, all open trees to %" PRIu64, c->dropped, FG_MAX_NODES, c->max_kept);
	if (c->bad)
		diag_print(DIAG_WARNING, "%" PRIu64 " malformed call-graph records", c->bad);
	char why[64];
	snprintf(why, sizeof(why), ": the open trees held %" PRIu64 " calls", c->max_kept);
	rt_output_dropped_roots(o, c->dropped_roots, "memory", why);
}

void fg_consumer_free(struct fg_consumer *c)
{
	if (!c)
		return;
	for (int i = 0; i < FG_HASH; i++)
		while (c->hash[i]) {
			struct fg_tree *t = c->hash[i];
			c->hash[i] = t->next;
			free_tree(t);
		}
	binfo_lines__close(c->lines);
	fg_chrome_free(&c->chrome);
	free(c->spawns);
	if (c->text_copy)
		fclose(c->text_copy);
	strbuf_free(&c->out);
	strbuf_free(&c->text);
	free(c);
}
