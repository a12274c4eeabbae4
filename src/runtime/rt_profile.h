/* rt_profile: maps keyed by stacks written as profiles, -f folded / -f pprof (profout.c,
 * with the writer of profile.c). */
#ifndef GT_RT_PROFILE_H
#define GT_RT_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/plan.h"

struct rt_maps;

/* Whether some map of PLAN has a ustack / kstack key; whether map MAP_ID does. */
bool rt_profile_has_stacks(const struct gt_plan *plan);
bool rt_profile_map(const struct gt_plan *plan, int map_id);
/* Every map keyed by a stack as one profile into OUT: gzipped profile.proto (PPROF) or
 * folded stacks. 0 or a negative errno. */
int rt_profile_write(struct rt_maps *ms, const struct gt_plan *plan, bool pprof, FILE *out,
		     int64_t duration_ns);

#endif
