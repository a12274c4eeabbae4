/* rt_value: values the plan describes (struct plan_arg), printed as bpftrace prints them;
 * shared by print() (output.c) and the map dumps (maps.c). */
#ifndef GT_RT_VALUE_H
#define GT_RT_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/plan.h"

struct strbuf;

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

#endif
