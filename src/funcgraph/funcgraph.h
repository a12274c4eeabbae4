/* funcgraph: call-graph mode (--funcgraph), go-ftrace's per-goroutine call trees.
 *
 * It is a front end and a consumer around the ordinary pipeline: funcgraph_new expands
 * the patterns in the target and writes a program of fgentry()/fgreturn() clauses
 * (compiled with sema_options.funcgraph), and the consumer it hands to rt_run receives
 * the PLAN_EV_FG_* records, keeps each goroutine's open tree and prints it when the
 * goroutine's outermost traced call returns. */
#ifndef GT_FUNCGRAPH_H
#define GT_FUNCGRAPH_H

#include <stdbool.h>

#include "common/plan.h"
#include "common/util.h"

struct rt_consumer;

struct fg_options {
	VEC(const char *) patterns; /* --funcgraph PATTERN, repeatable */
	VEC(const char *) args;     /* --args 'FUNC(name=RULE:TYPE, ...)' or 'FUNC(a, s.f)',
				       repeatable; --args auto: every parameter DWARF places */
	VEC(const char *) rets;     /* --rets, as --args for the results, shown on the
				       closing line; --rets auto: every result DWARF places */
	VEC(const char *) excludes; /* --exclude PATTERN: left out of the wildcards */
	const char *drilldown;      /* --drilldown FUNC */
	bool no_color;              /* --no-color */
	bool chrome;                /* -f chrome: Trace Event Format JSON for Perfetto */
	bool otlp;                  /* --otlp: the calls as spans too (lineage probes) */
	bool summary;               /* --summary: per-function counts, not trees */
	bool no_oncpu;              /* --no-oncpu: wall time only (no scheduler probes) */
	const char *interval;       /* --interval DURATION of the summary (NULL: 5s) */
	bool verbose;               /* -v: show the generated program */
};

void fg_options_free(struct fg_options *o);

struct funcgraph;

/* Expands the patterns in TARGET (the binary of -c, -p or the BINARY argument), checks
 * --drilldown and --args, and writes the program. NULL after reporting through diag. */
struct funcgraph *funcgraph_new(const struct fg_options *o, const char *target);
void funcgraph_free(struct funcgraph *fg);

/* --otlp: where the calls go as spans (before funcgraph_consumer). */
struct otlp;
void funcgraph_set_otlp(struct funcgraph *fg, struct otlp *x);

/* The generated program text (valid until funcgraph_free). */
const char *funcgraph_program(const struct funcgraph *fg);

/* The consumer of the compiled PLAN's records, for rt_options.consumer. */
const struct rt_consumer *funcgraph_consumer(struct funcgraph *fg, const struct gt_plan *plan);

/* ---- fg_args.c: go-ftrace's argument specs ---- */

struct fg_arg {
	char *name; /* as written: "s.name" */
	char *rule; /* fetch rule without grouping parentheses: "*+0(%ax)"; NULL: NAME is a
		       Go value by its DWARF name (args.NAME), type "v" */
	char *type; /* s8..s64, u8..u64, cN, str, ptr, v */
};

struct fg_argspec {
	char *func;
	struct fg_arg *args;
	int nargs;
};

/* Parses "FUNC(name=RULE:TYPE, ...)" (go-ftrace syntax; a RULE may be wrapped in
 * parentheses) given to option OPT ("--args", "--rets"). Returns 0, or -EINVAL after
 * reporting through diag. */
int fg_argspec_parse(const char *opt, const char *spec, struct fg_argspec *out);
void fg_argspec_free(struct fg_argspec *a);

/* The printf conversion that prints a value fetched as TYPE: "%d", "%u", "%s", "%p". */
const char *fg_arg_conv(const char *type);

#endif
