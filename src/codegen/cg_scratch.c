/* cg_scratch: byte buffers longer than CG_STACK_BUF_MAX (long strings under a large
 * max_strlen, the tuples and keys that hold them) live in a per-CPU scratch map instead
 * of the 512-byte BPF stack. One row per program, as a perf event's NMI may interrupt
 * another program on its CPU; in a row each buffer has its own offset for the whole
 * program and its loop callbacks (no reuse: nothing to prove about lifetimes). A
 * function that used one looks its row up once, in its entry block. */
#include "codegen/cg_int.h"

#include <errno.h>
#include <string.h>

#include "common/diag.h"

/* bpf(2) refuses per-CPU values over PCPU_MIN_UNIT_SIZE */
#define SCRATCH_ROW_MAX 32768

bool cg_scratch_wants(const struct cg *g, int size)
{
	return size > CG_STACK_BUF_MAX && g->pp != NULL;
}

LLVMValueRef cg_scratch_buf(struct cg *g, int size)
{
	if (!g->scratch_map) /* the map is made at the end, when its row size is known */
		g->scratch_map = LLVMAddGlobal(g->mod, g->i8, "gt_scratch_placeholder");
	if (!g->scratch_slot)
		g->scratch_slot = cg_alloca(g, g->ptr, "scratch.row");
	int off = g->scratch_used;
	g->scratch_used += (size + 7) & ~7;
	if (g->scratch_used > g->scratch_max)
		g->scratch_max = g->scratch_used;
	LLVMValueRef row = LLVMBuildLoad2(g->b, g->ptr, g->scratch_slot, "scratch.row");
	return cg_gep8(g, row, off);
}

void cg_scratch_end_function(struct cg *g)
{
	if (!g->scratch_slot)
		return;
	/* entry: allocas ...; br start  becomes  ...; row = lookup; br !row ? none : start */
	/* first: the alloca at the top (a runtime call inlined at the entry splits it, and
	 * an alloca past the split would be dynamic) */
	LLVMValueRef key = cg_alloca(g, g->i32, "scratch.key");
	LLVMValueRef term = LLVMGetBasicBlockTerminator(g->alloca_bb);
	LLVMBasicBlockRef start = LLVMGetSuccessor(term, 0);
	LLVMBasicBlockRef here = LLVMGetInsertBlock(g->b);
	LLVMMetadataRef loc = LLVMGetCurrentDebugLocation2(g->b);
	LLVMPositionBuilderBefore(g->b, term);
	LLVMSetCurrentDebugLocation2(g->b, LLVMInstructionGetDebugLoc(term));
	LLVMBuildStore(g->b, LLVMConstInt(g->i32, (uint64_t)(g->pp - g->plan->progs), false), key);
	LLVMValueRef args[2] = {g->scratch_map, key};
	LLVMValueRef row = cg_helper(g, BPF_FUNC_map_lookup_elem, g->ptr, args, 2);
	/* rows are 8-aligned: LLVM copies and zeroes 8 bytes at a time then, where byte by
	 * byte a 64-byte copy spilled its 64 registers past the stack's 512 bytes */
	unsigned align = LLVMGetEnumAttributeKindForName("align", 5);
	LLVMAddCallSiteAttribute(row, LLVMAttributeReturnIndex,
				 LLVMCreateEnumAttribute(g->ctx, align, 8));
	LLVMBuildStore(g->b, row, g->scratch_slot);
	LLVMBasicBlockRef none = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "scratch.none");
	LLVMBuildCondBr(g->b, LLVMBuildIsNull(g->b, row, ""), none, start);
	LLVMInstructionEraseFromParent(term);
	LLVMPositionBuilderAtEnd(g->b, none);
	LLVMTypeRef rt = LLVMGetReturnType(LLVMGlobalGetValueType(g->fn));
	LLVMBuildRet(g->b, LLVMConstInt(rt, 0, false));
	LLVMPositionBuilderAtEnd(g->b, here);
	LLVMSetCurrentDebugLocation2(g->b, loc);
	g->scratch_slot = NULL;
}

int cg_scratch_define(struct cg *g)
{
	if (!g->scratch_map)
		return 0;
	if (g->scratch_max > SCRATCH_ROW_MAX) {
		diag_fatal("one probe's strings and tuples need %d bytes of scratch space, over "
			   "the %d a per-CPU map holds: lower max_strlen (BPFTRACE_MAX_STRLEN)",
			   g->scratch_max, SCRATCH_ROW_MAX);
		return -E2BIG;
	}
	LLVMValueRef map = cg_define_map_sized(g, GT_MAP_SCRATCH, BPF_MAP_TYPE_PERCPU_ARRAY,
					       (unsigned)g->plan->nprogs, 4,
					       (unsigned)g->scratch_max);
	LLVMReplaceAllUsesWith(g->scratch_map, map);
	LLVMDeleteGlobal(g->scratch_map);
	g->scratch_map = map;
	return 0;
}
