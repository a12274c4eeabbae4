/* cg_stack: ustack / kstack as a 24-byte value: the id bpf_get_stackid gives the stack
 * in its stack-trace map, the process (user space names user stacks with its mappings),
 * and, where the site's cookie says it is there, the return address on top of the stack.
 * An entry probe fires after the stack check but before the function pushes its frame
 * pointer, a return probe on a RET after it popped it, and a function without a frame
 * never pushes one, so the kernel's frame-pointer walk goes from the function straight
 * to its caller's caller: user space puts the caller back after the first frame. */
#include "codegen/cg_int.h"

#include <stddef.h>


/* The return address where a function's entry has it (on top of the stack, or in the
 * link register: arch.h), where the site says it is still there (sema: an entry, a RET, a
 * function without a frame) and, for a stack, the kernel's walk does not hold it
 * already; else 0. */
static LLVMValueRef entry_caller(struct cg *g, bool for_stack)
{
	LLVMValueRef ra;
	if (arch_entry_ret_addr.in_reg) {
		ra = cg_load_reg(g, arch_entry_ret_addr.reg_off);
	} else {
		LLVMValueRef a[2] = {cg_load_reg(g, arch_role_off[ARCH_SP]),
				     LLVMConstInt(g->i32, 8, false)};
		ra = cg_runtime_call(g, "gt_read_uint", a, 2);
	}
	uint64_t mask = GT_COOKIE_CALLER_AT_SP | (for_stack ? GT_COOKIE_KERNEL_ADDS_CALLER : 0);
	LLVMValueRef at = LLVMBuildAnd(g->b, cg_cookie(g), cg_const(g, mask), "");
	LLVMValueRef yes = LLVMBuildICmp(g->b, LLVMIntEQ, at, cg_const(g, GT_COOKIE_CALLER_AT_SP), "");
	return LLVMBuildSelect(g->b, yes, ra, cg_const(g, 0), "");
}

void cg_stack_into(struct cg *g, struct ast_node *e, LLVMValueRef dst)
{
	const struct gt_type *t = e->ty;
	bool kernel = g->plan->stackmaps[t->stack_map].kernel;
	if (g->pp->kind == PLAN_PROG_BEGIN || g->pp->kind == PLAN_PROG_END) {
		/* BEGIN and END run in gotrace, not in anything traced: no stack (the walk
		 * would show gotrace's bpf() call), as current bpftrace's are empty */
		cg_store64(g, dst, 0, cg_const(g, (uint64_t)-14 /* -EFAULT: none */));
		cg_store64(g, dst, 8, cg_const(g, 0));
		cg_store64(g, dst, 16, cg_const(g, 0));
		return;
	}
	LLVMValueRef args[3] = {g->ctx_arg, g->stackmaps[t->stack_map],
				cg_const(g, kernel ? 0 : BPF_F_USER_STACK)};
	LLVMValueRef id;
	if (!kernel && g->pp->kind == PLAN_PROG_PERF && g->uwmaps[t->stack_map]) {
		/* a sample: unwound with the SP deltas (gt_unwind.c), else the kernel's walk */
		LLVMValueRef ua[8] = {g->ctx_arg,
				      g->uwtab,
				      LLVMConstInt(g->i32, (uint64_t)g->plan->nunwind, false),
				      g->uwscratch,
				      g->uwmaps[t->stack_map],
				      LLVMConstInt(g->i32, (uint64_t)g->plan->stackmaps[t->stack_map].kdepth,
						   false),
				      cg_config(g, 1 /* filter_pid */),
				      g->uwtarget};
		LLVMValueRef uw = cg_runtime_call(g, "gt_unwind", ua, 8);
		LLVMBasicBlockRef from = LLVMGetInsertBlock(g->b);
		LLVMBasicBlockRef walk = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "stack.fp");
		LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "stack.done");
		LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntSGE, uw, cg_const(g, 0), ""), done,
				walk);
		LLVMPositionBuilderAtEnd(g->b, walk);
		LLVMValueRef fp = cg_helper(g, BPF_FUNC_get_stackid, g->i64, args, 3);
		walk = LLVMGetInsertBlock(g->b);
		LLVMBuildBr(g->b, done);
		LLVMPositionBuilderAtEnd(g->b, done);
		id = LLVMBuildPhi(g->b, g->i64, "stackid");
		LLVMValueRef vals[2] = {uw, fp};
		LLVMBasicBlockRef bbs[2] = {from, walk};
		LLVMAddIncoming(id, vals, bbs, 2);
	} else {
		id = cg_helper(g, BPF_FUNC_get_stackid, g->i64, args, 3);
	}
	cg_store64(g, dst, 0, id);
	/* the process names a user stack; a kernel stack is the same in every process */
	LLVMValueRef pid = cg_const(g, 0);
	if (!kernel)
		pid = LLVMBuildLShr(g->b, cg_helper(g, BPF_FUNC_get_current_pid_tgid, g->i64, NULL, 0),
				    cg_const(g, 32), "");
	cg_store64(g, dst, 8, pid);
	LLVMValueRef caller = cg_const(g, 0);
	if (!kernel && g->pp->kind == PLAN_PROG_UPROBE)
		caller = entry_caller(g, true);
	cg_store64(g, dst, 16, caller);
}

void cg_sym_into(struct cg *g, struct ast_node *e, LLVMValueRef dst)
{
	const struct sema_node *sn = e->sema;
	LLVMValueRef addr;
	if (sn->builtin == BI_CALLER) { /* at a go: entry or RET: the return address */
		addr = entry_caller(g, false);
	} else {
		addr = cg_expr(g, e->u.call.args.v[0]);
	}
	cg_store64(g, dst, 0, addr);
	cg_store64(g, dst, 8, LLVMBuildLShr(g->b, cg_helper(g, BPF_FUNC_get_current_pid_tgid, g->i64,
						       NULL, 0),
				       cg_const(g, 32), ""));
}
