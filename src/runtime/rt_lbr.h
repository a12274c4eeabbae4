/* rt_lbr: the per-CPU perf events lbr() needs to find branches recorded (lbr.c). */
#ifndef GT_RT_LBR_H
#define GT_RT_LBR_H

#include <stdbool.h>

#include "common/plan.h"

struct rt_lbr;

/* Whether the plan calls lbr(). */
bool rt_lbr_wanted(const struct gt_plan *plan);

/* Whether this machine records branches for bpf_get_branch_snapshot(): 0, or -ENOSYS
 * (no such helper) or the -errno of opening a branch-stack event; WHY in words (--info). */
int rt_lbr_probe(const char **why);
/* lbr() in a plan on this machine: 0, or -ENOTSUP after one error saying what is missing. */
int rt_lbr_check(void);
/* One branch-recording event per CPU, kept open while the probes run: 0 or -errno (after
 * one error). */
int rt_lbr__open(struct rt_lbr **out);
void rt_lbr__close(struct rt_lbr *l); /* NULL-safe */

#endif
