/* funcgraph internals shared by funcgraph.c (options, program) and fg_tree.c (consumer). */
#ifndef GT_FG_INT_H
#define GT_FG_INT_H

#include <stdio.h>

#include "binfo/binfo.h"
#include "funcgraph/funcgraph.h"
#include "runtime/rt.h"

/* Record layout of the generated program (see funcgraph.c):
 *   FG_ENTRY  args: goid, depth, nsecs, site, return address, ip (the probed address,
 *             reg("ip"), whose difference to the site's vaddr is a PIE's load bias),
 *             then the --args values; the format is "%u" (for ip) + the args' text.
 *   FG_RETURN args: goid, depth, nsecs, site, duration. */
enum {
	FG_ARG_GOID,
	FG_ARG_DEPTH,
	FG_ARG_NSECS,
	FG_ARG_SITE,
	FG_ARG_RETADDR, /* FG_ENTRY */
	FG_ARG_DURATION = FG_ARG_RETADDR, /* FG_RETURN */
	FG_ARG_IP,
	FG_ARG_USER, /* first --args value */
};
#define FG_FMT_SKIP 1 /* conversions before the --args text: ip */

struct fg_tree_opts {
	struct binfo *bi;
	const struct fg_argspec *specs; /* --args, by function name */
	int nspecs;
	const char *drilldown; /* only trees rooted here, or NULL */
	bool no_color;
};

struct fg_consumer;

struct fg_consumer *fg_consumer_new(const struct fg_tree_opts *o, const struct gt_plan *plan);
void fg_consumer_free(struct fg_consumer *c);
/* rt_consumer callbacks; CTX is the fg_consumer */
void fg_consumer_record(void *ctx, struct rt_output *o, int event_id, const void *rec,
			size_t size);
void fg_consumer_finish(void *ctx, struct rt_output *o);

#endif
