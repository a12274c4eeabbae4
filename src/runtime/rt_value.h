/* rt_value: values the plan describes (struct plan_arg), printed as bpftrace prints them;
 * shared by print() (output.c) and the map dumps (maps.c). */
#ifndef GT_RT_VALUE_H
#define GT_RT_VALUE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/plan.h"

struct strbuf;

/* Appends the value A describes, at A->offset from BASE (a record or a map value). */
void rt_value_format(struct strbuf *sb, const struct gt_plan *plan, const struct plan_arg *a,
		     const uint8_t *base, bool json);

#endif
