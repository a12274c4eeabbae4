/* cg_goruntime: the Go runtime prologue of a uprobe program: the target's constants
 * (struct gt_target, folded at O2), and the call-stack bookkeeping of :entry and
 * :return probes that gives `depth`, `duration` and `oncpu`; and the bodies of the
 * hidden programs that keep goroutines' on-CPU time (runtime-bpf/gt_oncpu.c). */
#include "codegen/cg_int.h"

#include <stddef.h>

#include "binfo/binfo.h"

/* struct gt_target (common/bpf_abi.h) as a private constant: { i64, i32 x 6 }. */
_Static_assert(sizeof(struct gt_target) == 8 + 6 * 4 && offsetof(struct gt_target, tp_off) == 8,
	       "struct gt_target is no longer { s64, u32 x 6 }: update target_const()");

static LLVMValueRef target_const(struct cg *g, struct binfo *bi)
{
	struct binfo_goruntime rt;
	if (binfo_goruntime(bi, &rt) < 0)
		return NULL; /* sema refused programs that need it */
	int tp = binfo_kernel_tp_offset();
	struct gt_target t = {
		.tls_g_off = rt.tls_g_offset,
		.tp_off = (__u32)(tp > 0 ? tp : 0),
		.g_stack_hi = (__u32)rt.g_stack_hi,
		.g_m = (__u32)rt.g_m,
		.g_goid = (__u32)rt.g_goid,
		.m_curg = (__u32)rt.m_curg,
	};
	LLVMTypeRef f[7] = {g->i64, g->i32, g->i32, g->i32, g->i32, g->i32, g->i32};
	LLVMTypeRef ty = LLVMStructTypeInContext(g->ctx, f, 7, false);
	LLVMValueRef v[7] = {
		LLVMConstInt(g->i64, (uint64_t)t.tls_g_off, true),
		LLVMConstInt(g->i32, t.tp_off, false),
		LLVMConstInt(g->i32, t.g_stack_hi, false),
		LLVMConstInt(g->i32, t.g_m, false),
		LLVMConstInt(g->i32, t.g_goid, false),
		LLVMConstInt(g->i32, t.m_curg, false),
		LLVMConstInt(g->i32, t.pad, false),
	};
	LLVMValueRef gv = LLVMAddGlobal(g->mod, ty, "gt_target");
	LLVMSetInitializer(gv, LLVMConstNamedStruct(ty, v, 7));
	LLVMSetGlobalConstant(gv, true);
	LLVMSetLinkage(gv, LLVMPrivateLinkage);
	return gv;
}

LLVMValueRef cg_goid(struct cg *g)
{
	if (!g->target)
		return cg_const(g, (uint64_t)-1);
	LLVMValueRef args[3] = {g->ctx_arg, g->target, cg_cookie(g)};
	return cg_runtime_call(g, "gt_goid", args, 3);
}

void cg_goruntime_prologue(struct cg *g)
{
	const struct sema_prog *sp = g->sp;
	if (!sp->bi || !sp->needs_goruntime)
		return;
	g->target = target_const(g, sp->bi);
	if (!g->target)
		return;
	LLVMValueRef ctx = g->ctx_arg;
	/* oncpu: the offset of task_struct's se.sum_exec_runtime, 0 when unused */
	LLVMValueRef oncpu = cg_const(g, (uint64_t)sp->task_runtime_off);
	LLVMValueRef rt_off = LLVMConstInt(g->i32, (uint64_t)sp->task_runtime_off, false);
	if (sp->hidden == HIDDEN_GOEXIT) {
		LLVMValueRef args[4] = {ctx, g->target, cg_cookie(g), oncpu};
		cg_runtime_call(g, "gt_goroutine_exit", args, 4);
		return;
	}
	if (sp->hidden == HIDDEN_EXECUTE) {
		LLVMValueRef args[3] = {ctx, g->target, rt_off};
		cg_runtime_call(g, "gt_oncpu_execute", args, 3);
		return;
	}
	if (sp->hidden == HIDDEN_SCHEDULE) {
		cg_runtime_call(g, "gt_oncpu_schedule", &rt_off, 1);
		return;
	}
	g->depth = cg_alloca(g, g->i64, "depth");
	LLVMBuildStore(g->b, cg_const(g, 0), g->depth);
	if (sp->point == GO_ENTRY) {
		/* push only where the site asks (functions whose returns are traced) */
		LLVMBasicBlockRef push = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "push");
		LLVMBasicBlockRef nopush = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "nopush");
		LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "pushed");
		LLVMValueRef track =
			LLVMBuildAnd(g->b, cg_cookie(g), cg_const(g, GT_COOKIE_TRACK), "");
		LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntNE, track, cg_const(g, 0), ""), push,
				nopush);
		LLVMPositionBuilderAtEnd(g->b, push);
		/* call-graph mode: a root call entered while the ring buffer is over half full
		 * is dropped whole (gt_call_enter), never a tree with holes from lost records */
		LLVMValueRef over = cg_const(g, 0);
		if (g->funcgraph) {
			LLVMValueRef q[2] = {g->map_events, cg_const(g, BPF_RB_AVAIL_DATA)};
			LLVMValueRef used = cg_helper(g, BPF_FUNC_ringbuf_query, g->i64, q, 2);
			q[1] = cg_const(g, BPF_RB_RING_SIZE);
			LLVMValueRef size = cg_helper(g, BPF_FUNC_ringbuf_query, g->i64, q, 2);
			over = LLVMBuildZExt(g->b,
					     LLVMBuildICmp(g->b, LLVMIntUGT, used,
							   LLVMBuildLShr(g->b, size, cg_const(g, 1), ""),
							   "over"),
					     g->i64, "");
		}
		LLVMValueRef args[6] = {ctx, g->target, cg_cookie(g), cg_now(g), over, oncpu};
		LLVMBuildStore(g->b, cg_runtime_call(g, "gt_call_enter", args, 6), g->depth);
		LLVMBuildBr(g->b, done);
		/* an inlined copy's start, in the clause of its out-of-line code: a point in the
		 * caller's code, at the caller's depth (--funcgraph's leaves) */
		LLVMPositionBuilderAtEnd(g->b, nopush);
		LLVMValueRef inl =
			LLVMBuildAnd(g->b, cg_cookie(g),
				     cg_const(g, (uint64_t)GT_SITE_INLINED << GT_COOKIE_FLAGS_SHIFT), "");
		LLVMBasicBlockRef at = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "inlined");
		LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntNE, inl, cg_const(g, 0), ""), at,
				done);
		LLVMPositionBuilderAtEnd(g->b, at);
		LLVMValueRef dargs[3] = {ctx, g->target, cg_cookie(g)};
		LLVMBuildStore(g->b, cg_runtime_call(g, "gt_call_depth", dargs, 3), g->depth);
		LLVMBuildBr(g->b, done);
		LLVMPositionBuilderAtEnd(g->b, done);
	} else if (sp->point == GO_RETURN && sp->no_call_stack) {
		/* runtime.newproc1 runs on g0, whose stack keys would pop the parent's frames */
	} else if (sp->point == GO_RETURN) {
		LLVMValueRef entry = cg_alloca(g, g->i64, "entry_ns");
		g->duration = cg_alloca(g, g->i64, "duration");
		LLVMValueRef cpu = cg_alloca(g, g->i64, "oncpu");
		if (sp->task_runtime_off)
			g->oncpu = cpu;
		LLVMValueRef args[8] = {ctx,	 g->target, cg_cookie(g), cg_now(g),
					entry, g->depth,   cpu,		 oncpu};
		/* 0: paired, 1: a call of no length (a one-RET function), -1: unpaired */
		LLVMValueRef r = cg_runtime_call(g, "gt_call_return", args, 8);
		LLVMValueRef timed = LLVMBuildICmp(g->b, LLVMIntEQ, r, cg_const(g, 0), "");
		LLVMValueRef paired = LLVMBuildICmp(g->b, LLVMIntNE, r, cg_const(g, (uint64_t)-1),
						    "paired");
		LLVMValueRef start = LLVMBuildLoad2(g->b, g->i64, entry, "");
		LLVMValueRef d = LLVMBuildSub(g->b, cg_now(g), start, "");
		LLVMBuildStore(g->b, LLVMBuildSelect(g->b, timed, d, cg_const(g, 0), ""),
			       g->duration);
		if (sp->uses_duration) {
			/* a return whose entry was never seen has no duration: skip it */
			LLVMBasicBlockRef go = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "paired");
			LLVMBuildCondBr(g->b, paired, go, g->exit_bb);
			LLVMPositionBuilderAtEnd(g->b, go);
		}
	} else {
		LLVMValueRef args[3] = {ctx, g->target, cg_cookie(g)};
		LLVMBuildStore(g->b, cg_runtime_call(g, "gt_call_depth", args, 3), g->depth);
	}
}

/* oncpu's sched_switch program: a thread leaves its CPU, another takes it. */
void cg_oncpu_switch(struct cg *g)
{
	LLVMValueRef args[4] = {g->ctx_arg, LLVMConstInt(g->i32, (uint64_t)g->sp->task_pid_off, false),
				LLVMConstInt(g->i32, (uint64_t)g->sp->task_runtime_off, false),
				cg_now(g)};
	cg_runtime_call(g, "gt_oncpu_switch", args, 4);
}
