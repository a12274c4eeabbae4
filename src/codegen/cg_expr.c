/* cg_expr: expressions. Integers are carried as i64 (narrower types are truncated and
 * re-extended at casts and fetches); strings as pointers to stack buffers; `func` and
 * `probe` as the site id that user space names. */
#include "codegen/cg_int.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#include "common/util.h"

/* The SIZE-byte integer at OFF of the program's context (the saved registers, a tracepoint's record),
 * zero-extended: one load instruction in asm. An IR load lets LLVM share the address
 * ctx+OFF between two loads and spill it, and the verifier refuses a load through a
 * modified ctx pointer ("dereference of modified ctx ptr"). */
LLVMValueRef cg_load_ctx(struct cg *g, int off, int size)
{
	char text[64];
	snprintf(text, sizeof(text), "$0 = *(u%d *)($1 + %d)", size * 8, off);
	LLVMTypeRef fty = LLVMFunctionType(g->i64, &g->ptr, 1, false);
	LLVMValueRef fn = LLVMGetInlineAsm(fty, text, strlen(text), "=r,r", 4, false, false,
					   LLVMInlineAsmDialectATT, false);
	return LLVMBuildCall2(g->b, fty, fn, &g->ctx_arg, 1, "ctxv");
}

LLVMValueRef cg_load_reg(struct cg *g, int off)
{
	return cg_load_ctx(g, off, 8);
}

/* Sign- or zero-extends the low SIZE bytes of v back to i64. */
LLVMValueRef cg_narrow(struct cg *g, LLVMValueRef v, int size, bool is_signed)
{
	if (size >= 8)
		return v;
	LLVMTypeRef t = LLVMIntTypeInContext(g->ctx, (unsigned)size * 8);
	LLVMValueRef tr = LLVMBuildTrunc(g->b, v, t, "");
	return is_signed ? LLVMBuildSExt(g->b, tr, g->i64, "") : LLVMBuildZExt(g->b, tr, g->i64, "");
}

static LLVMValueRef site_id(struct cg *g)
{
	if (!cg_has_sites(g))
		return cg_const(g, (uint64_t)g->pp->site_begin); /* BEGIN/END pseudo-site */
	return LLVMBuildAnd(g->b, cg_cookie(g), cg_const(g, GT_COOKIE_SITE_MASK), "site");
}

/* The u64 a fetch rule denotes: a register's value, an address, or a loaded pointer. */
static LLVMValueRef fetch_rule(struct cg *g, const struct fetch_rule *r)
{
	switch (r->kind) {
	case FETCH_REG:
		return cg_load_reg(g, r->regs_off);
	case FETCH_OFFSET:
		return LLVMBuildAdd(g->b, fetch_rule(g, r->base), cg_const(g, (uint64_t)r->off), "");
	case FETCH_DEREF: {
		LLVMValueRef args[2] = {fetch_rule(g, r->base), LLVMConstInt(g->i32, 8, false)};
		return cg_runtime_call(g, "gt_read_uint", args, 2);
	}
	}
	abort(); /* every fetch_kind is handled above */
}

static LLVMValueRef cg_fetch_int(struct cg *g, struct ast_node *e)
{
	const struct fetch_rule *r = e->u.fetch.rule;
	LLVMValueRef v = fetch_rule(g, r);
	if (r->kind != FETCH_REG) {
		/* read TYPE at the address */
		LLVMValueRef args[2] = {v, LLVMConstInt(g->i32, (uint64_t)e->ty->size, false)};
		v = cg_runtime_call(g, "gt_read_uint", args, 2);
	}
	return cg_narrow(g, v, e->ty->size, e->ty->is_signed);
}

/* args.FIELD of a tracepoint record: ctx points at the record. */
static LLVMValueRef tp_field_ptr(struct cg *g, int off)
{
	LLVMValueRef idx = cg_const(g, (uint64_t)off);
	return LLVMBuildGEP2(g->b, g->i8, g->ctx_arg, &idx, 1, "");
}

/* fentry:bpf: an argument or the return value through bpf_get_func_arg/_ret, which
 * read the count the trampoline stored: where the verifier found the target's BTF
 * unreliable (a main function whose ctx is not its program type's: gotrace's own take
 * void *), the trampoline passes five u64 arguments, whatever that BTF says. */
static LLVMValueRef func_slot(struct cg *g, const struct sema_node *sn)
{
	LLVMValueRef tmp = cg_alloca(g, g->i64, "slot");
	LLVMBuildStore(g->b, cg_const(g, 0), tmp);
	if (sn->builtin == BI_RETVAL) {
		LLVMValueRef a[2] = {g->ctx_arg, tmp};
		cg_helper(g, BPF_FUNC_get_func_ret, g->i64, a, 2);
	} else {
		LLVMValueRef a[3] = {g->ctx_arg,
				     LLVMConstInt(g->i32, (uint64_t)sn->tp_offset / 8, false), tmp};
		cg_helper(g, BPF_FUNC_get_func_arg, g->i64, a, 3);
	}
	return LLVMBuildLoad2(g->b, g->i64, tmp, "tparg");
}

static LLVMValueRef tp_int(struct cg *g, const struct sema_node *sn)
{
	LLVMValueRef v;
	if (g->pp->kind == PLAN_PROG_FENTRY && g->pp->bpf_prog_id)
		v = func_slot(g, sn);
	else
		v = cg_load_ctx(g, sn->tp_offset, sn->tp_size);
	if (sn->tp_narrow) /* a kfunc's 8-byte slot of a narrower int */
		return cg_narrow(g, v, sn->tp_narrow, sn->tp_signed);
	return cg_narrow(g, v, sn->tp_size, sn->tp_signed);
}

static void tp_str_into(struct cg *g, const struct sema_node *sn, LLVMValueRef dst, int size)
{
	LLVMValueRef src;
	if (sn->tp_data_loc) {
		/* __data_loc: u32 (length << 16 | offset from the record start) */
		LLVMValueRef loc = cg_load_ctx(g, sn->tp_offset, 4);
		LLVMValueRef off = LLVMBuildAnd(g->b, loc, cg_const(g, 0xffff), "");
		src = LLVMBuildGEP2(g->b, g->i8, g->ctx_arg, &off, 1, "");
	} else {
		src = tp_field_ptr(g, sn->tp_offset);
	}
	LLVMValueRef args[3] = {dst, LLVMConstInt(g->i32, (uint64_t)size, false), src};
	cg_helper(g, BPF_FUNC_probe_read_kernel_str, g->i64, args, 3);
}

/* A literal's bytes in a stack buffer of the type's size. */
static LLVMValueRef str_const(struct cg *g, const char *bytes, int len, int size)
{
	LLVMValueRef buf = cg_str_alloca(g, size);
	cg_zero(g, buf, size, 8);
	for (int i = 0; i < len && i < size - 1; i++) {
		LLVMValueRef idx = cg_const(g, (uint64_t)i);
		LLVMValueRef p = LLVMBuildGEP2(g->b, g->i8, buf, &idx, 1, "");
		LLVMBuildStore(g->b, LLVMConstInt(g->i8, (unsigned char)bytes[i], false), p);
	}
	return buf;
}

/* Writes the bytes of a string- or tuple-typed expression into dst (size bytes). */
void cg_str_into(struct cg *g, struct ast_node *e, LLVMValueRef dst, int size)
{
	const struct sema_node *sn = e->sema;
	if (sn && sn->go) {
		cg_go_str_into(g, e, dst, size);
		return;
	}
	if (e->kind == AST_FIELD && sn && sn->builtin == BI_TPARG) {
		tp_str_into(g, sn, dst, size);
		return;
	}
	if (sn && (sn->builtin == BI_USTACK || sn->builtin == BI_KSTACK) &&
	    (e->kind == AST_IDENT || e->kind == AST_CALL)) {
		cg_stack_into(g, e, dst);
		return;
	}
	if (sn && (sn->builtin == BI_USYM || sn->builtin == BI_KSYM || sn->builtin == BI_CALLER) &&
	    (e->kind == AST_IDENT || e->kind == AST_CALL)) {
		cg_sym_into(g, e, dst);
		return;
	}
	if (e->kind == AST_IDENT && sn && sn->builtin == BI_COMM) {
		LLVMValueRef args[2] = {dst, LLVMConstInt(g->i32, (uint64_t)(size < 16 ? size : 16),
							  false)};
		cg_helper(g, BPF_FUNC_get_current_comm, g->i64, args, 2);
		return;
	}
	if (e->kind == AST_CALL && sn && sn->builtin == BI_SIGNAL_NAME) {
		cg_signal_name_into(g, cg_expr(g, e->u.call.args.v[0]), dst, size);
		return;
	}
	if (e->kind == AST_CALL && sn && sn->builtin == BI_STR && sn->const_str) {
		LLVMValueRef src = str_const(g, sn->const_str, (int)strlen(sn->const_str), size);
		cg_copy(g, dst, src, size);
		return;
	}
	if (e->kind == AST_CALL && sn && sn->builtin == BI_STR) {
		struct ast_node **a = e->u.call.args.v;
		if (a[0]->ty->kind == TY_STR) {
			cg_str_into(g, a[0], dst, size);
			return;
		}
		LLVMValueRef addr = cg_expr(g, a[0]);
		LLVMValueRef size_v = LLVMConstInt(g->i32, (uint64_t)size, false);
		if (e->u.call.args.n == 2 && a[1]->kind != AST_INT) {
			LLVMValueRef args[4] = {dst, size_v, addr, cg_expr(g, a[1])};
			cg_runtime_call(g, "gt_read_bytes", args, 4);
		} else {
			LLVMValueRef args[3] = {dst, size_v, addr};
			cg_runtime_call(g, "gt_read_cstr", args, 3);
		}
		return;
	}
	if (e->kind == AST_FETCH) {
		LLVMValueRef addr = fetch_rule(g, e->u.fetch.rule);
		LLVMValueRef args[3] = {dst, LLVMConstInt(g->i32, (uint64_t)size, false), addr};
		cg_runtime_call(g, sn->fetch_gostr ? "gt_read_gostr" : "gt_read_cstr", args, 3);
		return;
	}
	LLVMValueRef src = cg_expr(g, e);
	int n = e->ty->size < size ? e->ty->size : size;
	cg_copy(g, dst, src, n);
	if (n < size) /* keep the record free of stale bytes */
		cg_zero(g, cg_gep8(g, dst, n), size - n, 1);
}

LLVMValueRef cg_gep8(struct cg *g, LLVMValueRef p, int off)
{
	LLVMValueRef idx = cg_const(g, (uint64_t)off);
	return LLVMBuildGEP2(g->b, g->i8, p, &idx, 1, "");
}

/* An integer of SIZE bytes at P, extended to i64 / stored from an i64. */
/* $s[i]: the byte at i of a string buffer of size bytes, 0 at or past its end (the
 * check is what lets the verifier take a variable i). */
static LLVMValueRef str_byte(struct cg *g, LLVMValueRef buf, LLVMValueRef i, int size)
{
	LLVMValueRef out = cg_alloca(g, g->i64, "strbyte");
	LLVMBuildStore(g->b, cg_const(g, 0), out);
	LLVMBasicBlockRef in = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "str.in");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "str.done");
	LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntULT, i, cg_const(g, (uint64_t)size), ""),
			in, done);
	LLVMPositionBuilderAtEnd(g->b, in);
	LLVMValueRef c = LLVMBuildLoad2(g->b, g->i8, LLVMBuildGEP2(g->b, g->i8, buf, &i, 1, ""), "");
	LLVMBuildStore(g->b, LLVMBuildSExt(g->b, c, g->i64, ""), out);
	LLVMBuildBr(g->b, done);
	LLVMPositionBuilderAtEnd(g->b, done);
	return LLVMBuildLoad2(g->b, g->i64, out, "");
}

static LLVMValueRef load_int(struct cg *g, LLVMValueRef p, int size, bool is_signed)
{
	LLVMTypeRef t = LLVMIntTypeInContext(g->ctx, (unsigned)size * 8);
	LLVMValueRef v = LLVMBuildLoad2(g->b, t, p, "");
	LLVMSetAlignment(v, (unsigned)size);
	if (size == 8)
		return v;
	return is_signed ? LLVMBuildSExt(g->b, v, g->i64, "") : LLVMBuildZExt(g->b, v, g->i64, "");
}

static void store_int(struct cg *g, LLVMValueRef p, LLVMValueRef v, int size)
{
	LLVMTypeRef t = LLVMIntTypeInContext(g->ctx, (unsigned)size * 8);
	LLVMValueRef st = LLVMBuildStore(g->b, size == 8 ? v : LLVMBuildTrunc(g->b, v, t, ""), p);
	LLVMSetAlignment(st, (unsigned)size);
}

/* Tuple SRC (laid out as ST) into DST (as DT): the same fields, perhaps other widths and
 * string sizes (a variable's tuple grows to every value stored in it). */
static void tuple_copy(struct cg *g, LLVMValueRef dst, const struct gt_type *dt, LLVMValueRef src,
		       const struct gt_type *st)
{
	for (int i = 0; i < dt->nfields; i++) {
		/* a record's fields by name: (b = 1, a = 2) into a variable of (a, b) */
		int j = dt->names && st->names ? gt_record_field(st, dt->names[i]) : i;
		if (j < 0)
			continue;
		const struct gt_type *df = dt->fields[i], *sf = st->fields[j];
		LLVMValueRef dp = cg_gep8(g, dst, dt->offsets[i]), sp = cg_gep8(g, src, st->offsets[j]);
		switch (df->kind) {
		case TY_TUPLE:
			tuple_copy(g, dp, df, sp, sf);
			break;
		case TY_STR:
		case TY_BUF:
		case TY_INET:
		case TY_STACK:
		case TY_SYM:
		case TY_INTARRAY: {
			int n = sf->size < df->size ? sf->size : df->size;
			cg_copy(g, dp, sp, n);
			break;
		}
		case TY_INT:
			store_int(g, dp, load_int(g, sp, sf->size, sf->is_signed), df->size);
			break;
		default: /* func, probe: 8-byte site ids */
			store_int(g, dp, load_int(g, sp, 8, false), 8);
			break;
		}
	}
}

void cg_tuple_into(struct cg *g, struct ast_node *e, LLVMValueRef dst, const struct gt_type *dt)
{
	LLVMValueRef src = cg_expr(g, e);
	/* zeroed first: padding and the tails of shorter strings never carry old bytes */
	cg_zero(g, dst, dt->size, 1);
	tuple_copy(g, dst, dt, src, e->ty);
}

LLVMValueRef cg_cond(struct cg *g, struct ast_node *e)
{
	return LLVMBuildICmp(g->b, LLVMIntNE, cg_expr(g, e), cg_const(g, 0), "cond");
}

static LLVMValueRef cg_logical(struct cg *g, struct ast_node *e, bool is_and)
{
	LLVMValueRef res = cg_alloca(g, g->i64, "logic");
	LLVMBasicBlockRef rhs_bb = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "logic.rhs");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "logic.done");
	LLVMBuildStore(g->b, cg_const(g, is_and ? 0 : 1), res);
	LLVMValueRef l = cg_cond(g, e->u.binary.lhs);
	if (is_and)
		LLVMBuildCondBr(g->b, l, rhs_bb, done);
	else
		LLVMBuildCondBr(g->b, l, done, rhs_bb);
	LLVMPositionBuilderAtEnd(g->b, rhs_bb);
	LLVMValueRef r = cg_cond(g, e->u.binary.rhs);
	LLVMBuildStore(g->b, LLVMBuildZExt(g->b, r, g->i64, ""), res);
	LLVMBuildBr(g->b, done);
	LLVMPositionBuilderAtEnd(g->b, done);
	return LLVMBuildLoad2(g->b, g->i64, res, "");
}

/* Signed l / r or l % r, truncating toward zero as C and Go do. BPF before cpu v4 has
 * only unsigned division: divide the magnitudes and give the result its sign (the
 * quotient's from both signs, the remainder's from the dividend's). As BPF's own
 * division, x / 0 is 0 and x % 0 is x. */
static LLVMValueRef signed_divrem(struct cg *g, LLVMValueRef l, LLVMValueRef r, bool rem)
{
	LLVMValueRef zero = cg_const(g, 0);
	LLVMValueRef lneg = LLVMBuildICmp(g->b, LLVMIntSLT, l, zero, "");
	LLVMValueRef rneg = LLVMBuildICmp(g->b, LLVMIntSLT, r, zero, "");
	LLVMValueRef la = LLVMBuildSelect(g->b, lneg, LLVMBuildNeg(g->b, l, ""), l, "");
	LLVMValueRef ra = LLVMBuildSelect(g->b, rneg, LLVMBuildNeg(g->b, r, ""), r, "");
	LLVMValueRef v = rem ? LLVMBuildURem(g->b, la, ra, "") : LLVMBuildUDiv(g->b, la, ra, "");
	LLVMValueRef neg = rem ? lneg : LLVMBuildXor(g->b, lneg, rneg, "");
	return LLVMBuildSelect(g->b, neg, LLVMBuildNeg(g->b, v, ""), v, "");
}

LLVMValueRef cg_ptr_step(struct cg *g, const struct gt_type *t, LLVMValueRef n)
{
	if (!t || t->kind != TY_PTR || t->pointee->size <= 1)
		return n;
	return LLVMBuildMul(g->b, n, cg_const(g, (uint64_t)t->pointee->size), "");
}

LLVMValueRef cg_arith(struct cg *g, const struct ast_node *at, enum ast_op op, LLVMValueRef l,
		      bool l_signed, LLVMValueRef r, bool r_signed)
{
	bool sgn = l_signed && r_signed;
	switch (op) {
	case OP_ADD:
		return LLVMBuildAdd(g->b, l, r, "");
	case OP_SUB:
		return LLVMBuildSub(g->b, l, r, "");
	case OP_MUL:
		return LLVMBuildMul(g->b, l, r, "");
	case OP_DIV:
		return sgn ? signed_divrem(g, l, r, false) : LLVMBuildUDiv(g->b, l, r, "");
	case OP_MOD:
		return sgn ? signed_divrem(g, l, r, true) : LLVMBuildURem(g->b, l, r, "");
	case OP_BAND:
		return LLVMBuildAnd(g->b, l, r, "");
	case OP_BOR:
		return LLVMBuildOr(g->b, l, r, "");
	case OP_BXOR:
		return LLVMBuildXor(g->b, l, r, "");
	case OP_SHL:
		return LLVMBuildShl(g->b, l, r, "");
	case OP_SHR:
		return l_signed ? LLVMBuildAShr(g->b, l, r, "") : LLVMBuildLShr(g->b, l, r, "");
	default:
		cg_internal_error(g, at, "a non-arithmetic operator");
	}
}

static LLVMValueRef cg_binary(struct cg *g, struct ast_node *e)
{
	enum ast_op op = e->u.binary.op;
	if (op == OP_LAND || op == OP_LOR)
		return cg_logical(g, e, op == OP_LAND);
	struct ast_node *ln = e->u.binary.lhs, *rn = e->u.binary.rhs;
	const struct sema_node *sn = e->sema;
	if (sn && sn->cmp_ty) { /* tuples: both in one layout, then their bytes */
		int n = sn->cmp_ty->size;
		LLVMValueRef a = cg_str_alloca(g, n), b = cg_str_alloca(g, n);
		cg_tuple_into(g, ln, a, sn->cmp_ty);
		cg_tuple_into(g, rn, b, sn->cmp_ty);
		LLVMValueRef args[3] = {a, b, LLVMConstInt(g->i32, (uint64_t)n, false)};
		LLVMValueRef eq = cg_runtime_call(g, "gt_memeq", args, 3);
		return op == OP_EQ ? eq : LLVMBuildXor(g->b, eq, cg_const(g, 1), "");
	}
	if (ln->ty->kind == TY_BUF) { /* buffers: the same length and bytes */
		LLVMValueRef args[4] = {cg_expr(g, ln), cg_expr(g, rn),
					LLVMConstInt(g->i32, (uint64_t)ln->ty->size, false),
					LLVMConstInt(g->i32, (uint64_t)rn->ty->size, false)};
		LLVMValueRef eq = cg_runtime_call(g, "gt_bufeq", args, 4);
		return op == OP_EQ ? eq : LLVMBuildXor(g->b, eq, cg_const(g, 1), "");
	}
	if (ln->ty->kind == TY_STR) {
		/* string == / != */
		int n = ln->ty->size < rn->ty->size ? ln->ty->size : rn->ty->size;
		LLVMValueRef args[3] = {cg_expr(g, ln), cg_expr(g, rn),
					LLVMConstInt(g->i32, (uint64_t)n, false)};
		LLVMValueRef eq = cg_runtime_call(g, "gt_streq", args, 3);
		return op == OP_EQ ? eq : LLVMBuildXor(g->b, eq, cg_const(g, 1), "");
	}
	LLVMValueRef l = cg_expr(g, ln), r = cg_expr(g, rn);
	bool sgn = ln->ty->is_signed && rn->ty->is_signed;
	if (ast_op_is_compare(op)) {
		static const LLVMIntPredicate pred[][2] = {
			[OP_EQ] = {LLVMIntEQ, LLVMIntEQ},   [OP_NE] = {LLVMIntNE, LLVMIntNE},
			[OP_LT] = {LLVMIntULT, LLVMIntSLT}, [OP_LE] = {LLVMIntULE, LLVMIntSLE},
			[OP_GT] = {LLVMIntUGT, LLVMIntSGT}, [OP_GE] = {LLVMIntUGE, LLVMIntSGE},
		};
		LLVMValueRef c = LLVMBuildICmp(g->b, pred[op][sgn], l, r, "");
		return LLVMBuildZExt(g->b, c, g->i64, "");
	}
	bool lp = ln->ty->kind == TY_PTR, rp = rn->ty->kind == TY_PTR;
	if (op == OP_SUB && lp && rp) { /* elements between two pointers, as C */
		LLVMValueRef d = LLVMBuildSub(g->b, l, r, "");
		int size = ln->ty->pointee->size;
		return size > 1 ? LLVMBuildSDiv(g->b, d, cg_const(g, (uint64_t)size), "") : d;
	}
	if ((op == OP_ADD || op == OP_SUB) && lp != rp) { /* p + n: n elements on */
		if (lp)
			r = cg_ptr_step(g, ln->ty, r);
		else
			l = cg_ptr_step(g, rn->ty, l);
	}
	return cg_arith(g, e, op, l, ln->ty->is_signed, r, rn->ty->is_signed);
}

static LLVMValueRef cg_ident(struct cg *g, struct ast_node *e)
{
	const struct sema_node *sn = e->sema;
	switch (sn->builtin) {
	case BI_NIL: /* the zero word of a pointer, an interface's itab/type, a slice's data */
		return cg_const(g, 0);
	case BI_PID:
	case BI_TID: {
		LLVMValueRef v = cg_helper(g, BPF_FUNC_get_current_pid_tgid, g->i64, NULL, 0);
		return sn->builtin == BI_PID ? LLVMBuildLShr(g->b, v, cg_const(g, 32), "")
					     : LLVMBuildAnd(g->b, v, cg_const(g, 0xffffffff), "");
	}
	case BI_UID:
	case BI_GID: {
		LLVMValueRef v = cg_helper(g, BPF_FUNC_get_current_uid_gid, g->i64, NULL, 0);
		return sn->builtin == BI_GID ? LLVMBuildLShr(g->b, v, cg_const(g, 32), "")
					     : LLVMBuildAnd(g->b, v, cg_const(g, 0xffffffff), "");
	}
	case BI_NSECS: {
		/* a call-graph record's time: the reading its call's frame is timed with */
		if (sn->probe_now)
			return cg_now(g);
		static const int helper[] = {BPF_FUNC_ktime_get_ns, BPF_FUNC_ktime_get_boot_ns,
					     BPF_FUNC_ktime_get_tai_ns, BPF_FUNC_ktime_get_tai_ns};
		return cg_helper(g, helper[sn->const_val], g->i64, NULL, 0);
	}
	case BI_NCPUS:
		return cg_config(g, 2 /* ncpus */);
	case BI_USERMODE:
		/* a sample: the interrupted code's privilege level (CS's low bits); the kernel's
		 * probes fire in the kernel; BEGIN/END run from gotrace, go: and uprobe: in the
		 * process */
		if (g->pp->kind == PLAN_PROG_PERF) {
			const struct arch_user_mode *um = &arch_user_mode;
			LLVMValueRef w = cg_load_reg(g, um->off);
			return LLVMBuildZExt(g->b, LLVMBuildICmp(g->b, LLVMIntEQ,
								 LLVMBuildAnd(g->b, w, cg_const(g, um->mask), ""),
								 cg_const(g, um->value), ""),
					     g->i64, "");
		}
		return cg_const(g, g->pp->kind == PLAN_PROG_UPROBE || g->pp->kind == PLAN_PROG_BEGIN ||
					   g->pp->kind == PLAN_PROG_END);
	case BI_JIFFIES:
		return cg_helper(g, BPF_FUNC_jiffies64, g->i64, NULL, 0);
	case BI_RAND:
		return LLVMBuildZExt(g->b, cg_helper(g, BPF_FUNC_get_prandom_u32, g->i32, NULL, 0),
				     g->i64, "");
	case BI_NUMAID:
		return LLVMBuildZExt(g->b, cg_helper(g, BPF_FUNC_get_numa_node_id, g->i32, NULL, 0),
				     g->i64, "");
	case BI_CGROUP:
		return cg_helper(g, BPF_FUNC_get_current_cgroup_id, g->i64, NULL, 0);
	case BI_CURTASK:
		return cg_helper(g, BPF_FUNC_get_current_task, g->i64, NULL, 0);
	case BI_CTX:
		return LLVMBuildPtrToInt(g->b, g->ctx_arg, g->i64, "");
	case BI_CONST:
		return cg_const(g, (uint64_t)sn->const_val);
	case BI_CONSTSTR:
		return str_const(g, sn->const_str, (int)strlen(sn->const_str), e->ty->size);
	case BI_USERNAME: /* the uid; user space names it */
		return LLVMBuildAnd(g->b, cg_helper(g, BPF_FUNC_get_current_uid_gid, g->i64, NULL, 0),
				    cg_const(g, 0xffffffff), "");
	case BI_CPID: /* the traced command's tgid, written before anything attaches */
		return cg_config(g, 1 /* filter_pid */);
	case BI_ELAPSED: {
		LLVMValueRef now = cg_helper(g, BPF_FUNC_ktime_get_ns, g->i64, NULL, 0);
		return LLVMBuildSub(g->b, now, cg_config(g, 0 /* start_ns */), "");
	}
	case BI_CPU: {
		LLVMValueRef v = cg_helper(g, BPF_FUNC_get_smp_processor_id, g->i32, NULL, 0);
		return LLVMBuildZExt(g->b, v, g->i64, "");
	}
	case BI_FUNC:
	case BI_PROBE:
		return sn->raw_site ? site_id(g)
				    : cg_site_name(g, site_id(g), sn->builtin == BI_PROBE);
	case BI_GOID:
		return cg_goid(g);
	case BI_DEPTH:
		if (!g->depth)
			return cg_const(g, 0);
		return LLVMBuildAnd(g->b, LLVMBuildLoad2(g->b, g->i64, g->depth, "depth"),
				    cg_const(g, ~GT_DEPTH_SKIP), "");
	case BI_DURATION:
		return g->duration ? LLVMBuildLoad2(g->b, g->i64, g->duration, "duration")
				   : cg_const(g, 0);
	case BI_ONCPU:
		return g->oncpu ? LLVMBuildLoad2(g->b, g->i64, g->oncpu, "oncpu") : cg_const(g, 0);
	case BI_RETVAL:
		if (g->pp->kind == PLAN_PROG_FENTRY)
			return tp_int(g, sn); /* the slot after the arguments */
		return cg_load_reg(g, sn->regs_off);
	case BI_ARG0 ... BI_ARG8:
		return cg_load_reg(g, sn->regs_off);
	case BI_RETADDR: {
		/* at an :entry probe: on top of the stack, or in the link register */
		if (arch_entry_ret_addr.in_reg)
			return cg_load_reg(g, arch_entry_ret_addr.reg_off);
		LLVMValueRef args[2] = {cg_load_reg(g, arch_role_off[ARCH_SP]),
					LLVMConstInt(g->i32, 8, false)};
		return cg_runtime_call(g, "gt_read_uint", args, 2);
	}
	case BI_USTACK:
	case BI_KSTACK: {
		LLVMValueRef buf = cg_str_alloca(g, 24);
		cg_stack_into(g, e, buf);
		return buf;
	}
	case BI_CALLER: {
		LLVMValueRef buf = cg_str_alloca(g, 16);
		cg_sym_into(g, e, buf);
		return buf;
	}
	case BI_COMM: {
		LLVMValueRef buf = cg_str_alloca(g, 16);
		cg_str_into(g, e, buf, 16);
		return buf;
	}
	default:
		cg_internal_error(g, e, "an identifier sema did not resolve");
	}
}

/* The value of type T stored at ADDR in memory (user memory in uprobes, kernel memory
 * elsewhere): structs and arrays stay there (their address), char arrays are read as
 * strings, integers and pointers are loaded. */
/* -kk: an integer read with bpf_probe_read_*, its failure reported (helper_error).
 * Kernel-side reads use the compat bpf_probe_read, as bpftrace 0.17 does, so that a
 * bad address reports -EFAULT (probe_read_kernel says -ERANGE below TASK_SIZE). */
static LLVMValueRef checked_read(struct cg *g, const struct ast_node *at, LLVMValueRef addr,
				 const struct gt_type *t, bool user)
{
	int size = t->kind == TY_INT ? t->size : 8;
	LLVMValueRef tmp = cg_alloca(g, g->i64, "read");
	LLVMBuildStore(g->b, cg_const(g, 0), tmp);
	LLVMValueRef args[3] = {tmp, LLVMConstInt(g->i32, (uint64_t)size, false),
				LLVMBuildIntToPtr(g->b, addr, g->ptr, "")};
	LLVMValueRef rc = cg_helper(g, user ? BPF_FUNC_probe_read_user : BPF_FUNC_probe_read,
				    g->i64, args, 3);
	cg_helper_check(g, at, LLVMBuildICmp(g->b, LLVMIntNE, rc, cg_const(g, 0), ""), rc);
	return cg_narrow(g, LLVMBuildLoad2(g->b, g->i64, tmp, ""), size, t->is_signed);
}

/* The value of type T at ADDR, read as AT (an OP_DEREF, AST_FIELD or AST_INDEX) says:
 * through &$x the program's own stack (kernel memory), else user memory in uprobes and
 * where sema found it. */
static LLVMValueRef mem_value(struct cg *g, LLVMValueRef addr, const struct gt_type *t,
			      const struct sema_node *at)
{
	bool user = !at->own_mem && (at->user_mem || g->pp->kind == PLAN_PROG_UPROBE);
	if (t->kind == TY_STRUCT || t->kind == TY_ARRAY)
		return addr;
	if (gt_type_is_bytes(t) && t->kind != TY_STR) { /* *&$t: a tuple's bytes */
		LLVMValueRef buf = cg_str_alloca(g, t->size);
		LLVMValueRef args[4] = {buf, LLVMConstInt(g->i32, (uint64_t)t->size, false), addr,
					LLVMConstInt(g->i32, user, false)};
		cg_runtime_call(g, "gt_read_raw", args, 4);
		return buf;
	}
	if (t->kind == TY_STR) {
		LLVMValueRef buf = cg_str_alloca(g, t->size);
		LLVMValueRef args[4] = {buf, LLVMConstInt(g->i32, (uint64_t)t->size, false), addr,
					LLVMConstInt(g->i32, user, false)};
		cg_runtime_call(g, "gt_read_chars", args, 4);
		return buf;
	}
	int size = t->kind == TY_INT ? t->size : 8;
	LLVMValueRef args[2] = {addr, LLVMConstInt(g->i32, (uint64_t)size, false)};
	LLVMValueRef v = cg_runtime_call(g, user ? "gt_read_uint" : "gt_read_kuint", args, 2);
	return cg_narrow(g, v, size, t->is_signed);
}

void cg_struct_into(struct cg *g, struct ast_node *e, LLVMValueRef dst)
{
	const struct sema_node *sn = e->sema;
	bool user = !e->ty->own_stack && !(sn && sn->own_mem) &&
		    (sema_user_mem(e) || g->pp->kind == PLAN_PROG_UPROBE);
	cg_zero(g, dst, e->ty->size, 8); /* a record's field: 8-aligned */
	LLVMValueRef args[4] = {dst, LLVMConstInt(g->i32, (uint64_t)e->ty->size, false),
				cg_expr(g, e), LLVMConstInt(g->i32, user, false)};
	cg_runtime_call(g, "gt_read_raw", args, 4);
}

/* Calls that produce a value (events are statements: cg_stmt.c). */
static LLVMValueRef cg_call(struct cg *g, struct ast_node *e)
{
	const struct sema_node *sn = e->sema;
	switch (sn->builtin) {
	case BI_REG:
		return cg_load_reg(g, sn->regs_off);
	case BI_USTACK:
	case BI_KSTACK: {
		LLVMValueRef buf = cg_str_alloca(g, 24);
		cg_stack_into(g, e, buf);
		return buf;
	}
	case BI_USYM:
	case BI_KSYM: {
		LLVMValueRef buf = cg_str_alloca(g, 16);
		cg_sym_into(g, e, buf);
		return buf;
	}
	case BI_UADDR:
		return cg_const(g, (uint64_t)sn->const_val);
	case BI_DELETE:
		return cg_map_delete(g, e);
	case BI_CONST: /* getopt(): its value */
	case BI_CONSTSTR:
	case BI_NSECS: /* nsecs(boot) */
	case BI_USERMODE:
	case BI_NCPUS:
	case BI_JIFFIES:
		return cg_ident(g, e);
	case BI_STRLEN: {
		struct ast_node *a = e->u.call.args.v[0];
		LLVMValueRef args[2] = {cg_expr(g, a), LLVMConstInt(g->i32, (uint64_t)a->ty->size, false)};
		return cg_runtime_call(g, "gt_strlen", args, 2);
	}
	case BI_LEN:
	case BI_CAP:
		if (e->u.call.args.v[0]->kind != AST_MAP)
			return cg_go_len(g, e, sn->builtin == BI_CAP);
		return cg_runtime_call(g, "gt_map_len", &g->maps[sn->map_id], 1);
	case BI_HAS_KEY:
		return cg_map_has(g, e->u.call.args.v[0]);
	case BI_STR:
	case BI_SIGNAL_NAME: {
		LLVMValueRef buf = cg_str_alloca(g, e->ty->size);
		cg_str_into(g, e, buf, e->ty->size);
		return buf;
	}
	case BI_SIZEOF:
	case BI_KADDR:
		return cg_const(g, (uint64_t)sn->const_val);
	case BI_STRFTIME: /* the time; user space formats it */
		return cg_expr(g, e->u.call.args.v[1]);
	case BI_STRERROR:
	case BI_CGROUP_PATH: /* the number; user space names it */
		return cg_expr(g, e->u.call.args.v[0]);
	case BI_PTON: { /* the bytes found at compile time, an array */
		int n = (int)sn->const_val;
		LLVMValueRef buf = cg_str_alloca(g, n);
		for (int i = 0; i < n; i++)
			LLVMBuildStore(g->b, LLVMConstInt(g->i8, (unsigned char)sn->const_str[i], false),
				       cg_gep8(g, buf, i));
		return buf;
	}
	case BI_NTOP: { /* u64 family, then 16 address bytes; inet_ntop(3) in user space */
		struct ast_node **a = e->u.call.args.v;
		LLVMValueRef buf = cg_str_alloca(g, 24);
		cg_zero(g, buf, 24, 8);
		if (e->u.call.args.n == 1 && a[0]->ty->kind == TY_INTARRAY) { /* 4 or 16 bytes */
			int n = a[0]->ty->size;
			store_int(g, buf, cg_const(g, n == 4 ? 2 /* AF_INET */ : 10 /* AF_INET6 */), 8);
			cg_copy(g, cg_gep8(g, buf, 8), cg_expr(g, a[0]), n);
			return buf;
		}
		if (e->u.call.args.n == 1) { /* an IPv4 address in an integer, as it lies in memory */
			store_int(g, buf, cg_const(g, 2 /* AF_INET */), 8);
			store_int(g, cg_gep8(g, buf, 8), cg_expr(g, a[0]), 4);
			return buf;
		}
		store_int(g, buf, cg_expr(g, a[0]), 8);
		const struct gt_type *t = a[1]->ty;
		LLVMValueRef src = cg_expr(g, a[1]);
		if (t->kind == TY_BUF || t->kind == TY_STR || t->kind == TY_INTARRAY) {
			int off = t->kind == TY_BUF ? 8 : 0, n = t->size - off;
			cg_copy(g, cg_gep8(g, buf, 8), cg_gep8(g, src, off), (n < 16 ? n : 16));
		} else { /* an address in memory */
			bool user = sema_user_mem(a[1]) || g->pp->kind == PLAN_PROG_UPROBE;
			LLVMValueRef args[4] = {cg_gep8(g, buf, 8), LLVMConstInt(g->i32, 16, false), src,
						LLVMConstInt(g->i32, user, false)};
			cg_runtime_call(g, "gt_read_raw", args, 4);
		}
		return buf;
	}
	case BI_BUF: {
		/* u64 length, then the bytes */
		struct ast_node **a = e->u.call.args.v;
		int cap = e->ty->size - 8;
		LLVMValueRef buf = cg_str_alloca(g, e->ty->size);
		if (a[0]->ty->kind == TY_STR) {
			int n = a[0]->ty->size < cap ? a[0]->ty->size : cap;
			cg_zero(g, buf, e->ty->size, 8);
			cg_copy(g, cg_gep8(g, buf, 8), cg_expr(g, a[0]), n);
			LLVMValueRef len = e->u.call.args.n == 2 && a[1]->kind != AST_INT
						   ? cg_expr(g, a[1])
						   : cg_const(g, (uint64_t)cap);
			/* a run-time length is clamped to the buffer */
			LLVMValueRef big = LLVMBuildICmp(g->b, LLVMIntUGT, len,
							 cg_const(g, (uint64_t)cap), "");
			len = LLVMBuildSelect(g->b, big, cg_const(g, (uint64_t)cap), len, "");
			store_int(g, buf, len, 8);
			return buf;
		}
		LLVMValueRef len = e->u.call.args.n == 2 ? cg_expr(g, a[1]) : cg_const(g, (uint64_t)cap);
		LLVMValueRef args[4] = {buf, LLVMConstInt(g->i32, (uint64_t)e->ty->size, false),
					cg_expr(g, a[0]), len};
		cg_runtime_call(g, "gt_read_buf", args, 4);
		return buf;
	}
	case BI_BSWAP: {
		struct ast_node *a = e->u.call.args.v[0];
		LLVMValueRef v = cg_expr(g, a);
		if (a->ty->size < 2)
			return cg_narrow(g, v, 1, false);
		LLVMTypeRef t = LLVMIntTypeInContext(g->ctx, (unsigned)a->ty->size * 8);
		unsigned id = LLVMLookupIntrinsicID("llvm.bswap", 10);
		LLVMValueRef fn = LLVMGetIntrinsicDeclaration(g->mod, id, &t, 1);
		LLVMValueRef tr = LLVMBuildTrunc(g->b, v, t, "");
		LLVMValueRef sw = LLVMBuildCall2(g->b, LLVMIntrinsicGetType(g->ctx, id, &t, 1), fn,
						 &tr, 1, "");
		return LLVMBuildZExt(g->b, sw, g->i64, "");
	}
	case BI_STRNCMP: {
		/* 0 when the first n bytes match (up to a NUL), else 1: bpftrace's strncmp */
		struct ast_node **a = e->u.call.args.v;
		int64_t n = sn->const_val;
		n = n < a[0]->ty->size ? n : a[0]->ty->size;
		n = n < a[1]->ty->size ? n : a[1]->ty->size;
		LLVMValueRef args[3] = {cg_expr(g, a[0]), cg_expr(g, a[1]),
					LLVMConstInt(g->i32, (uint64_t)n, false)};
		return LLVMBuildXor(g->b, cg_runtime_call(g, "gt_streq", args, 3), cg_const(g, 1), "");
	}
	case BI_WRITE_USER: { /* 1 when written; LEN clamped to 1 .. SRC's size */
		struct ast_node **a = e->u.call.args.v;
		LLVMValueRef dst = LLVMBuildIntToPtr(g->b, cg_expr(g, a[0]), g->ptr, "");
		LLVMValueRef src = cg_expr(g, a[1]);
		LLVMValueRef n = cg_expr(g, a[2]), max = cg_const(g, (uint64_t)a[1]->ty->size);
		n = LLVMBuildSelect(g->b, LLVMBuildICmp(g->b, LLVMIntUGT, n, max, ""), max, n, "");
		LLVMValueRef ok = cg_alloca(g, g->i64, "written");
		LLVMBuildStore(g->b, cg_const(g, 1), ok);
		LLVMBasicBlockRef call = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "wu.call");
		LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "wu.done");
		LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntEQ, n, cg_const(g, 0), ""), done,
				call);
		LLVMPositionBuilderAtEnd(g->b, call);
		LLVMValueRef args[3] = {dst, src, LLVMBuildTrunc(g->b, n, g->i32, "")};
		LLVMValueRef r = cg_helper(g, BPF_FUNC_probe_write_user, g->i64, args, 3);
		LLVMBuildStore(g->b, LLVMBuildZExt(g->b, LLVMBuildICmp(g->b, LLVMIntEQ, r,
								     cg_const(g, 0), ""),
						 g->i64, ""),
			       ok);
		LLVMBuildBr(g->b, done);
		LLVMPositionBuilderAtEnd(g->b, done);
		return LLVMBuildLoad2(g->b, g->i64, ok, "");
	}
	case BI_STRCONTAINS:
	case BI_STRSTR: {
		struct ast_node **a = e->u.call.args.v;
		LLVMValueRef args[4] = {cg_expr(g, a[0]),
					LLVMConstInt(g->i32, (uint64_t)a[0]->ty->size, false),
					cg_expr(g, a[1]),
					LLVMConstInt(g->i32, (uint64_t)a[1]->ty->size, false)};
		return cg_runtime_call(g, sn->builtin == BI_STRSTR ? "gt_strstr" : "gt_strcontains",
				       args, 4);
	}
	default:
		cg_internal_error(g, e, "a call without a value");
	}
}

LLVMValueRef cg_expr(struct cg *g, struct ast_node *e)
{
	const struct sema_node *sn = e->sema;
	if (sn && sn->go) { /* args.x and what it reaches */
		if (e->ty->kind != TY_STR)
			return cg_go_value(g, e);
		LLVMValueRef buf = cg_str_alloca(g, e->ty->size);
		cg_go_str_into(g, e, buf, e->ty->size);
		return buf;
	}
	switch (e->kind) {
	case AST_INT:
		return cg_const(g, e->u.int_.value);
	case AST_STR:
		return str_const(g, e->u.str.bytes, e->u.str.len, e->ty->size);
	case AST_VAR: {
		LLVMValueRef slot = g->vars[sn->var_slot];
		if (gt_type_is_bytes(e->ty))
			return slot;
		return LLVMBuildLoad2(g->b, g->i64, slot, "");
	}
	case AST_IDENT:
		return cg_ident(g, e);
	case AST_POSPARAM:
		if (e->ty->kind == TY_STR)
			return str_const(g, sn->const_str, (int)strlen(sn->const_str), e->ty->size);
		return cg_const(g, (uint64_t)sn->const_val);
	case AST_UNARY: {
		if (e->u.unary.op == OP_ADDR) /* &$x: where its slot is on the stack */
			return LLVMBuildPtrToInt(
				g->b, g->vars[((const struct sema_node *)e->u.unary.operand->sema)->var_slot],
				g->i64, "");
		LLVMValueRef v = cg_expr(g, e->u.unary.operand);
		switch (e->u.unary.op) {
		case OP_DEREF:
			return mem_value(g, v, e->ty, sn);
		case OP_NEG:
			return LLVMBuildNeg(g->b, v, "");
		case OP_BNOT:
			return LLVMBuildNot(g->b, v, "");
		case OP_LNOT:
			return LLVMBuildZExt(g->b, LLVMBuildICmp(g->b, LLVMIntEQ, v, cg_const(g, 0), ""),
					     g->i64, "");
		default:
			cg_internal_error(g, e, "an unsupported unary operator");
		}
	}
	case AST_MAP:
		return cg_map_read(g, e);
	case AST_INCDEC: {
		struct ast_node *var = e->u.incdec.operand;
		if (var->kind == AST_MAP)
			return cg_map_incdec(g, e);
		LLVMValueRef slot = g->vars[((const struct sema_node *)var->sema)->var_slot];
		LLVMValueRef old = LLVMBuildLoad2(g->b, g->i64, slot, "");
		LLVMValueRef one = cg_ptr_step(g, var->ty, cg_const(g, 1));
		LLVMValueRef nv = e->u.incdec.inc ? LLVMBuildAdd(g->b, old, one, "")
						  : LLVMBuildSub(g->b, old, one, "");
		nv = cg_narrow(g, nv, var->ty->size, var->ty->is_signed); /* the variable's width */
		LLVMBuildStore(g->b, nv, slot);
		return e->u.incdec.prefix ? nv : old;
	}
	case AST_BINARY:
		return cg_binary(g, e);
	case AST_TERNARY: {
		if (!e->u.ternary.then) { /* c ?: f */
			LLVMValueRef c = cg_expr(g, e->u.ternary.cond);
			LLVMValueRef res = cg_alloca(g, g->i64, "elvis");
			LLVMBuildStore(g->b, c, res);
			LLVMBasicBlockRef f = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "elvis.f");
			LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "elvis.done");
			LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntNE, c, cg_const(g, 0), ""), done, f);
			LLVMPositionBuilderAtEnd(g->b, f);
			LLVMBuildStore(g->b, cg_expr(g, e->u.ternary.els), res);
			LLVMBuildBr(g->b, done);
			LLVMPositionBuilderAtEnd(g->b, done);
			return LLVMBuildLoad2(g->b, g->i64, res, "");
		}
		bool tup = e->ty->kind == TY_TUPLE;
		bool str = e->ty->kind == TY_STR || e->ty->kind == TY_BUF || tup;
		LLVMValueRef res = str ? cg_str_alloca(g, e->ty->size) : cg_alloca(g, g->i64, "sel");
		LLVMBasicBlockRef t = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "sel.t");
		LLVMBasicBlockRef f = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "sel.f");
		LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "sel.done");
		LLVMBuildCondBr(g->b, cg_cond(g, e->u.ternary.cond), t, f);
		struct ast_node *arms[2] = {e->u.ternary.then, e->u.ternary.els};
		LLVMBasicBlockRef bbs[2] = {t, f};
		for (int i = 0; i < 2; i++) {
			LLVMPositionBuilderAtEnd(g->b, bbs[i]);
			if (tup) /* each arm into the merged layout */
				cg_tuple_into(g, arms[i], res, e->ty);
			else if (str)
				cg_str_into(g, arms[i], res, e->ty->size);
			else
				LLVMBuildStore(g->b, cg_expr(g, arms[i]), res);
			LLVMBuildBr(g->b, done);
		}
		LLVMPositionBuilderAtEnd(g->b, done);
		return str ? res : LLVMBuildLoad2(g->b, g->i64, res, "");
	}
	case AST_CAST:
		if (e->ty->kind == TY_INTARRAY)
			return cg_array_cast(g, e);
		if (e->u.cast.expr->ty->kind == TY_INTARRAY)
			return cg_array_to_int(g, e);
		if (e->u.cast.expr->ty->kind == TY_ARRAY) /* (int32)p->bytes: read as an int */
			return mem_value(g, cg_expr(g, e->u.cast.expr), e->ty, e->u.cast.expr->sema);
		if (sn && sn->cast_bool && e->u.cast.expr->ty->kind == TY_STR) /* not "" */
			return LLVMBuildZExt(g->b, LLVMBuildICmp(g->b, LLVMIntNE,
								 LLVMBuildLoad2(g->b, g->i8,
										cg_expr(g, e->u.cast.expr), ""),
								 LLVMConstInt(g->i8, 0, false), ""),
					     g->i64, "");
		if (sn && sn->cast_bool)
			return LLVMBuildZExt(g->b, LLVMBuildICmp(g->b, LLVMIntNE, cg_expr(g, e->u.cast.expr),
								 cg_const(g, 0), ""),
					     g->i64, "");
		return cg_narrow(g, cg_expr(g, e->u.cast.expr), e->ty->size, e->ty->is_signed);
	case AST_CALL:
		return cg_call(g, e);
	case AST_BLOCK_EXPR:
		cg_block(g, e->u.blockexpr.block);
		return e->u.blockexpr.value ? cg_expr(g, e->u.blockexpr.value) : cg_const(g, 0);
	case AST_FIELD:
		if (e->u.field.expr->ty && e->u.field.expr->ty->kind != TY_TUPLE &&
		    sn->builtin != BI_TPARG) { /* a C struct's field: its address, then read */
			LLVMValueRef base = cg_expr(g, e->u.field.expr);
			if (LLVMGetTypeKind(LLVMTypeOf(base)) == LLVMPointerTypeKind) /* @m.f */
				base = LLVMBuildPtrToInt(g->b, base, g->i64, "");
			LLVMValueRef a = LLVMBuildAdd(g->b, base, cg_const(g, (uint64_t)sn->const_val),
						      "");
			bool user = !sn->own_mem &&
				    (sn->user_mem || g->pp->kind == PLAN_PROG_UPROBE);
			if (sn->bitfield.width)
				return cg_bitfield_read(g, e, a, user);
			if (sn->err_event)
				return checked_read(g, e, a, e->ty, user);
			return mem_value(g, a, e->ty, sn);
		}
		if (e->u.field.expr->ty && e->u.field.expr->ty->kind == TY_TUPLE) {
			/* $t.N: a pointer into the tuple, or the integer there */
			const struct gt_type *tt = e->u.field.expr->ty;
			LLVMValueRef p = cg_gep8(g, cg_expr(g, e->u.field.expr),
					      tt->offsets[sn->const_val]);
			if (gt_type_is_bytes(e->ty))
				return p;
			return load_int(g, p, e->ty->kind == TY_INT ? e->ty->size : 8,
					e->ty->is_signed);
		}
		if (sn->builtin != BI_TPARG)
			cg_internal_error(g, e, "a field sema did not resolve");
		if (e->ty->kind == TY_STR) {
			LLVMValueRef buf = cg_str_alloca(g, e->ty->size);
			cg_str_into(g, e, buf, e->ty->size);
			return buf;
		}
		return tp_int(g, sn);
	case AST_INDEX: {
		/* a[i]: the element's address, then its value */
		const struct gt_type *bt = e->u.index.expr->ty;
		if (bt->kind == TY_INTARRAY)
			return cg_array_elem(g, e);
		LLVMValueRef i = cg_expr(g, e->u.index.index);
		if (bt->kind == TY_STR)
			return str_byte(g, cg_expr(g, e->u.index.expr), i, bt->size);
		LLVMValueRef off = LLVMBuildMul(g->b, i, cg_const(g, (uint64_t)bt->pointee->size), "");
		LLVMValueRef a = LLVMBuildAdd(g->b, cg_expr(g, e->u.index.expr), off, "");
		return mem_value(g, a, e->ty, sn);
	}
	case AST_TUPLE: {
		/* a zeroed buffer with each element at its offset, in its own width */
		LLVMValueRef buf = cg_str_alloca(g, e->ty->size);
		cg_zero(g, buf, e->ty->size, 8);
		for (int i = 0; i < e->u.tuple.items.n; i++) {
			struct ast_node *it = e->u.tuple.items.v[i];
			const struct gt_type *ft = e->ty->fields[i];
			LLVMValueRef dst = cg_gep8(g, buf, e->ty->offsets[i]);
			if (ft->kind == TY_TUPLE)
				cg_tuple_into(g, it, dst, ft);
			else if (gt_type_is_bytes(ft))
				cg_str_into(g, it, dst, ft->size);
			else
				store_int(g, dst, cg_expr(g, it), ft->kind == TY_INT ? ft->size : 8);
		}
		return buf;
	}
	case AST_FETCH:
		if (e->ty->kind == TY_STR) {
			LLVMValueRef buf = cg_str_alloca(g, e->ty->size);
			cg_str_into(g, e, buf, e->ty->size);
			return buf;
		}
		return cg_fetch_int(g, e);
	default:
		cg_internal_error(g, e, "an expression sema refuses");
	}
}
