/* cg_array: arrays held by value (TY_INTARRAY), current bpftrace's (int8[8])x: made from
 * an integer's or a string's bytes, indexed, cast back to an integer. Like strings they
 * live in a stack buffer and an expression gives its address. */
#include "codegen/cg_int.h"

/* N bytes at SRC as an integer (sign- or zero-extended): through an 8-byte slot, since
 * an array in a tuple is aligned to its elements only. */
static LLVMValueRef bytes_int(struct cg *g, LLVMValueRef src, int n, bool is_signed)
{
	LLVMValueRef tmp = cg_alloca(g, g->i64, "arrint");
	LLVMBuildStore(g->b, cg_const(g, 0), tmp);
	LLVMBuildMemCpy(g->b, tmp, 8, src, 1, cg_const(g, (uint64_t)n));
	return cg_narrow(g, LLVMBuildLoad2(g->b, g->i64, tmp, ""), n, is_signed);
}

LLVMValueRef cg_array_cast(struct cg *g, struct ast_node *e)
{
	struct ast_node *x = e->u.cast.expr;
	int size = e->ty->size;
	LLVMValueRef buf = cg_str_alloca(g, size);
	if (x->ty->kind == TY_STR) { /* its bytes, the NUL too */
		cg_str_into(g, x, buf, size);
		return buf;
	}
	/* an integer's little-endian bytes; a wider array gets the extended value's */
	LLVMValueRef tmp = cg_alloca(g, g->i64, "arrsrc");
	LLVMBuildStore(g->b, cg_expr(g, x), tmp);
	LLVMBuildMemCpy(g->b, buf, 1, tmp, 8, cg_const(g, (uint64_t)size));
	return buf;
}

LLVMValueRef cg_array_to_int(struct cg *g, struct ast_node *e)
{
	return bytes_int(g, cg_expr(g, e->u.cast.expr), e->ty->size, e->ty->is_signed);
}

/* $a[i]: the element, 0 past the end (the check lets the verifier take a variable i) */
LLVMValueRef cg_array_elem(struct cg *g, struct ast_node *e)
{
	const struct gt_type *at = e->u.index.expr->ty, *el = at->pointee;
	LLVMValueRef buf = cg_expr(g, e->u.index.expr), i = cg_expr(g, e->u.index.index);
	LLVMValueRef out = cg_alloca(g, g->i64, "arrelem");
	LLVMBuildStore(g->b, cg_const(g, 0), out);
	LLVMBasicBlockRef in = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "arr.in");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "arr.done");
	LLVMBuildCondBr(g->b,
			LLVMBuildICmp(g->b, LLVMIntULT, i, cg_const(g, (uint64_t)at->count), ""), in,
			done);
	LLVMPositionBuilderAtEnd(g->b, in);
	LLVMValueRef off = LLVMBuildMul(g->b, i, cg_const(g, (uint64_t)el->size), "");
	LLVMValueRef p = LLVMBuildGEP2(g->b, g->i8, buf, &off, 1, "");
	LLVMBuildStore(g->b, bytes_int(g, p, el->size, el->is_signed), out);
	LLVMBuildBr(g->b, done);
	LLVMPositionBuilderAtEnd(g->b, done);
	return LLVMBuildLoad2(g->b, g->i64, out, "");
}
