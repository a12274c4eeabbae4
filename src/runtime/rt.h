/* rt: the run-time half: load the BPF object of a plan, attach, stream and format
 * events, run BEGIN/END, detach everything on every exit path. */
#ifndef GT_RT_H
#define GT_RT_H

#include <stdbool.h>
#include <sys/types.h>

#include "common/plan.h"

struct rt_options {
	char **child_argv;       /* -c: argv of the command (argv[0] resolved to a path), or NULL */
	pid_t pid;               /* -p: traced process, or 0 */
	const char *output_path; /* -o FILE, or NULL for stdout */
	bool json;               /* -f json */
	bool verbose;            /* -v */
	bool dry_run;            /* --dry-run: load (verifier) only, attach nothing */
};

/* Runs the plan to completion. Returns the process exit status: 0 on success,
 * 1 on a runtime failure (load, attach, target vanished). */
int rt_run(struct gt_plan *plan, const struct rt_options *opts);

#endif
