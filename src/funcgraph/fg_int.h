/* funcgraph internals shared by funcgraph.c (options, program) and fg_tree.c (consumer). */
#ifndef GT_FG_INT_H
#define GT_FG_INT_H

#include <stdio.h>

#include "binfo/binfo.h"
#include "common/pairset.h"
#include "funcgraph/funcgraph.h"
#include "runtime/otlp/otlp.h"
#include "runtime/rt.h"

/* Record layout of the generated program (see funcgraph.c):
 *   FG_ENTRY  args: goid, depth, nsecs, site, return address, ip (the probed address,
 *             reg("ip"), whose difference to the site's vaddr is a PIE's load bias), pid,
 *             then the --args values; the format is "%u%u" (for ip and pid) + the args'
 *             text.
 *   FG_RETURN args: goid, depth, nsecs, site, duration, on-CPU time (0 with
 *             --no-oncpu), then the --rets values (the format: their text). */
enum {
	FG_ARG_GOID,
	FG_ARG_DEPTH,
	FG_ARG_NSECS,
	FG_ARG_SITE,
	FG_ARG_RETADDR, /* FG_ENTRY */
	FG_ARG_DURATION = FG_ARG_RETADDR, /* FG_RETURN */
	FG_ARG_IP,
	FG_ARG_ONCPU = FG_ARG_IP, /* FG_RETURN */
	FG_ARG_PID,
	FG_ARG_USER, /* first --args value */
	FG_RET_USER = FG_ARG_ONCPU + 1, /* first --rets value */
};
/* FG_SPAWN (-f chrome's lineage): nsecs, pid, the new goroutine's goid, its parent's,
 * the go statement's pc */
enum { FG_SPAWN_NSECS, FG_SPAWN_PID, FG_SPAWN_GOID, FG_SPAWN_PARENT, FG_SPAWN_PC, FG_SPAWN_N };
#define FG_FMT_SKIP 2 /* conversions before the --args text: ip, pid */
#define FG_MAX_NODES 100000 /* calls kept per tree; later ones are counted only */
/* calls kept by all open trees (about 200 bytes each): past it, a new root call is
 * dropped whole and counted, so that memory stays bounded however many goroutines are
 * in traced calls at once */
#define FG_MAX_KEPT 150000

struct fg_tree_opts {
	struct binfo *bi;
	const struct fg_argspec *specs; /* --args, by function name */
	int nspecs;
	const struct fg_argspec *rspecs; /* --rets */
	int nrspecs;
	const char *drilldown; /* only trees rooted here, or NULL */
	bool no_color;
	bool chrome; /* -f chrome: Trace Event Format (fg_chrome.c) */
	struct otlp *otlp; /* --otlp: the calls as spans too (fg_otlp.c), or NULL */
	bool summary; /* --summary: per-function counts instead of trees (fg_summary.c) */
	bool oncpu;   /* returns carry on-CPU time (not --no-oncpu) */
	uint64_t interval_ns; /* --interval: how often the summary prints, 0: at the end */
};

struct fg_consumer;

/* fg_tree.c, shared with fg_summary.c: argument I of a record of EV (0 past its end);
 * "HH:MM:SS.uuuuuu" of a monotonic time. */
uint64_t fg_field(const struct plan_event *ev, const uint8_t *rec, int i);
void fg_time_text(char *buf, size_t n, int64_t wall_off, uint64_t mono_ns);

struct fg_consumer *fg_consumer_new(const struct fg_tree_opts *o, const struct gt_plan *plan);
void fg_consumer_free(struct fg_consumer *c);
/* rt_consumer callbacks; CTX is the fg_consumer */
void fg_consumer_record(void *ctx, struct rt_output *o, int event_id, const void *rec,
			size_t size);
void fg_consumer_finish(void *ctx, struct rt_output *o);

/* ---- fg_summary.c: --summary, the rt_consumer callbacks of its own consumer ---- */

struct fg_summary;

struct fg_summary *fg_summary_new(const struct fg_tree_opts *o, const struct gt_plan *plan);
void fg_summary_free(struct fg_summary *sm);
void fg_summary_record(void *ctx, struct rt_output *o, int event_id, const void *rec,
		       size_t size);
void fg_summary_tick(void *ctx, struct rt_output *o);
void fg_summary_finish(void *ctx, struct rt_output *o);

/* ---- fg_chrome.c: -f chrome, a trace for Perfetto and chrome://tracing ---- */

struct fg_chrome {
	uint64_t origin_ns;  /* CLOCK_MONOTONIC of ts 0 */
	int64_t wall_off;    /* CLOCK_REALTIME - CLOCK_MONOTONIC, ns */
	const char *process; /* the process tracks' name */
	struct pairset named; /* tracks named so far: (pid, goid), (pid | 1 << 63, 0) */
	uint64_t events;      /* written */
	bool started;         /* the document's head is written */
};

/* Where a goroutine came from (-f chrome's and --otlp's lineage): its parent, when and
 * where the go statement ran, and (--otlp) the span the parent was in then. */
struct fg_spawn {
	int64_t parent;
	uint64_t ns;      /* CLOCK_MONOTONIC */
	const char *site; /* FILE:LINE of the go statement, or NULL */
	const uint8_t *link_trace; /* NULL: the parent was in no traced call */
	uint64_t link_span;
};

/* An --args or --rets value by its name: an integer (a rule's, or a Go integer's), a Go
 * bool or float, or text (a string, any other Go value's %+v). */
struct fg_value {
	const char *name;
	enum fg_vkind { FG_V_TEXT, FG_V_INT, FG_V_BOOL, FG_V_FLOAT } kind;
	bool is_signed; /* FG_V_INT */
	uint64_t i;     /* FG_V_INT, FG_V_BOOL */
	double d;       /* FG_V_FLOAT */
	const char *text; /* FG_V_TEXT, and the Go values' text */
};

/* One traced call, as -f chrome and --otlp write it. */
struct fg_call {
	int64_t pid, goid;
	const char *func;
	uint64_t entry_ns, dur_ns; /* CLOCK_MONOTONIC */
	int64_t oncpu_ns;          /* of dur_ns, on a CPU; -1: not measured */
	/* "args" of the event, each left out when NULL: */
	const char *args;        /* the --args values as the text shows them */
	const char *rets;        /* the --rets values, the same way */
	const char *caller;      /* the calling function */
	const char *call_site;   /* FILE:LINE of the call, or the return address */
	const char *returned_at; /* FILE:LINE of the RET that returned */
	const char *mark;        /* "panic: no return", "unfinished" */
	/* the goroutine's first call in the trace and where it came from, or NULL: a flow
	 * from the go statement in the parent's track to this call, and the lineage in
	 * the track's name */
	const struct fg_spawn *spawn;
	/* --otlp: */
	int depth;                 /* in the tree: 0 = the root */
	const uint8_t *trace_id;   /* the tree's */
	uint64_t span_id, parent_id; /* parent 0: the root */
	const char *func_file;     /* where the function is (its entry), or NULL */
	int func_line;
	const struct fg_value *argv, *retv; /* by name */
	int nargv, nretv;
	bool panicked, unfinished, inlined;
};

void fg_chrome_init(struct fg_chrome *ch, uint64_t origin_ns, int64_t wall_off,
		    const char *process);
void fg_chrome_free(struct fg_chrome *ch);
/* Each appends to OUT, the consumer's one output buffer. */
void fg_chrome_call(struct fg_chrome *ch, struct strbuf *out, const struct fg_call *call);
/* An instant event: CALLS of the goroutine's tree at NS were not kept (FG_MAX_NODES). */
void fg_chrome_dropped(struct fg_chrome *ch, struct strbuf *out, int64_t pid, int64_t goid,
		       uint64_t ns, uint64_t calls);
/* The end of the document (the whole of it when no call was written). */
void fg_chrome_end(struct fg_chrome *ch, struct strbuf *out);

/* ---- fg_otlp.c: --otlp, each call a span ---- */

/* CALL as a span of trace CALL->trace_id (the tree's root call is the trace's root);
 * WALL_OFF: CLOCK_REALTIME - CLOCK_MONOTONIC. */
void fg_otlp_call(struct otlp *x, int64_t wall_off, const struct fg_call *call);
/* V (a Go value's by name, its text set) typed as FG_V_INT, _BOOL or _FLOAT where A is a
 * Go integer, bool or float shown as itself. */
void fg_value_type(const struct plan_arg *a, struct fg_value *v);

#endif
