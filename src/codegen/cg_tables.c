/*
 * Constant text tables in .rodata that builtins copy from in BPF: signal_name(n) is
 * a real string (a map key, compared, printed with %s), so its text must exist in the
 * program, not only in user space as strerror()'s does.
 */
#include <signal.h>
#include <string.h>

#include "codegen/cg_int.h"
#include "common/plan.h"

/* Entries 0 .. NSIG-1 are strsignal(3)'s texts, as bpftrace's table ("Unknown signal 0"
 * for 0); the last, for any other number, is bpftrace's "N/A". */
#define SIGNAME_ROWS (NSIG + 1)

static LLVMValueRef signame_table(struct cg *g)
{
	if (g->signame_tab)
		return g->signame_tab;
	LLVMTypeRef row = LLVMArrayType(g->i8, GT_SIGNAME_LEN);
	LLVMValueRef rows[SIGNAME_ROWS];
	for (int i = 0; i < SIGNAME_ROWS; i++) {
		char text[GT_SIGNAME_LEN] = {0};
		const char *name = i < NSIG ? strsignal(i) : "N/A";
		strncpy(text, name ? name : "N/A", GT_SIGNAME_LEN - 1);
		rows[i] = LLVMConstStringInContext(g->ctx, text, GT_SIGNAME_LEN, true);
	}
	LLVMTypeRef ty = LLVMArrayType(row, SIGNAME_ROWS);
	g->signame_tab = LLVMAddGlobal(g->mod, ty, "gt_signame");
	LLVMSetInitializer(g->signame_tab, LLVMConstArray(row, rows, SIGNAME_ROWS));
	LLVMSetGlobalConstant(g->signame_tab, true);
	LLVMSetLinkage(g->signame_tab, LLVMPrivateLinkage);
	LLVMSetSection(g->signame_tab, ".rodata");
	return g->signame_tab;
}

void cg_signal_name_into(struct cg *g, LLVMValueRef sig, LLVMValueRef dst, int size)
{
	/* the verifier wants the index bounded: anything outside is the "N/A" row */
	LLVMValueRef in = LLVMBuildICmp(g->b, LLVMIntULT, sig, cg_const(g, NSIG), "");
	LLVMValueRef ix[2] = {cg_const(g, 0),
			      LLVMBuildSelect(g->b, in, sig, cg_const(g, NSIG), "")};
	LLVMTypeRef ty = LLVMArrayType(LLVMArrayType(g->i8, GT_SIGNAME_LEN), SIGNAME_ROWS);
	LLVMValueRef src = LLVMBuildInBoundsGEP2(g->b, ty, signame_table(g), ix, 2, "");
	int n = size < GT_SIGNAME_LEN ? size : GT_SIGNAME_LEN;
	LLVMBuildMemCpy(g->b, dst, 1, src, 1, cg_const(g, (uint64_t)n));
	if (n < size)
		cg_zero(g, cg_gep8(g, dst, n), size - n, 1);
	if (size < GT_SIGNAME_LEN) /* a shorter string still ends */
		LLVMBuildStore(g->b, LLVMConstInt(g->i8, 0, false), cg_gep8(g, dst, size - 1));
}
