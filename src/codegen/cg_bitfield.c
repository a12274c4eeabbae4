/* cg_bitfield: reads of C bit-fields (sema's gt_bitfield): the bytes that hold one, no
 * more (the last bits of a struct may end a page), shifted and masked as bpftrace does. */
#include "codegen/cg_int.h"

LLVMValueRef cg_bitfield_read(struct cg *g, const struct ast_node *e, LLVMValueRef addr,
			      bool user)
{
	const struct sema_node *sn = e->sema;
	int shift = sn->bitfield.shift, width = sn->bitfield.width;
	int n = (shift + width + 7) / 8; /* 9 for a packed 64-bit one past a byte's start */
	LLVMValueRef buf = cg_str_alloca(g, 16);
	cg_zero(g, buf, 16, 8);
	LLVMValueRef args[3] = {buf, LLVMConstInt(g->i32, (uint64_t)n, false),
				LLVMBuildIntToPtr(g->b, addr, g->ptr, "")};
	/* as a field's checked read (cg_expr.c): probe_read reaches kernel and user memory */
	LLVMValueRef rc = cg_helper(g, user ? BPF_FUNC_probe_read_user : BPF_FUNC_probe_read,
				    g->i64, args, 3);
	cg_helper_check(g, e, LLVMBuildICmp(g->b, LLVMIntNE, rc, cg_const(g, 0), ""), rc);
	LLVMValueRef v = LLVMBuildLoad2(g->b, g->i64, buf, "");
	if (shift)
		v = LLVMBuildLShr(g->b, v, cg_const(g, (uint64_t)shift), "");
	if (n > 8) {
		LLVMValueRef hi = LLVMBuildLoad2(g->b, g->i64, cg_gep8(g, buf, 8), "");
		hi = LLVMBuildShl(g->b, hi, cg_const(g, 64u - (unsigned)shift), "");
		v = LLVMBuildOr(g->b, v, hi, "");
	}
	if (width < 64)
		v = LLVMBuildAnd(g->b, v, cg_const(g, (1ull << width) - 1), "");
	/* an integer of its declared type: only a signed one of full width is negative */
	return cg_narrow(g, v, e->ty->size, e->ty->is_signed);
}
