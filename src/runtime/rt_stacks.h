/* rt_stacks: ustack / kstack values read back from their stack-trace maps and named by
 * the run's symbolizer (stacks.c). */
#ifndef GT_RT_STACKS_H
#define GT_RT_STACKS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/plan.h"
#include "runtime/rt.h"

struct bpf_object;

/* After the object is loaded; LINES: file:line on every frame (-v). */
void rt_stacks__init(const struct gt_plan *plan, struct bpf_object *obj,
		     const struct rt_symbolizer *sym, bool lines);
void rt_stacks__free(void);
/* Fills gt_unwind.c's table from plan->unwind, after load: 0 or a negative errno. */
int rt_stacks__fill_unwind(const struct gt_plan *plan, struct bpf_object *obj);
/* The addresses of the PLAN_ARG_STACK value at P, leaf first (the caller of a go:
 * entry included): how many, up to MAX (0: the stack was lost or never read). */
int rt_stack_addrs(const struct plan_arg *a, const uint8_t *p, uint64_t *out, int max);
/* The frames of ADDR, the INDEX-th address of the stack at P: count (0: unknown). */
int rt_stack_frames(const struct plan_arg *a, const uint8_t *p, uint64_t addr, int index,
		    struct rt_frame *out, int max);
/* usym(), ksym(), caller: the function (caller: and the call's file:line), or 0xADDR. */
void rt_sym_format(struct strbuf *sb, const struct plan_arg *a, const uint8_t *p);
/* A kernel address as "sym+0xoff" (with -v its file:line), or "0xADDR": lbr()'s branches. */
void rt_kaddr_format(struct strbuf *sb, uint64_t addr);
/* bpftrace's text: "\n" then one line per frame. */
void rt_stack_format(struct strbuf *sb, const struct plan_arg *a, const uint8_t *p);

#endif
