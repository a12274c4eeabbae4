/* cg_expr: expressions. Integers are carried as i64 (narrower types are truncated and
 * re-extended at casts and fetches); strings as pointers to stack buffers; `func` and
 * `probe` as the site id that user space names. */
#include "codegen/cg_int.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

static LLVMValueRef load_reg(struct cg *g, int off)
{
	LLVMValueRef idx = cg_const(g, (uint64_t)off);
	LLVMValueRef p = LLVMBuildGEP2(g->b, g->i8, g->ctx_arg, &idx, 1, "");
	LLVMValueRef v = LLVMBuildLoad2(g->b, g->i64, p, "reg");
	LLVMSetAlignment(v, 8);
	return v;
}

/* Sign- or zero-extends the low SIZE bytes of v back to i64. */
static LLVMValueRef narrow(struct cg *g, LLVMValueRef v, int size, bool is_signed)
{
	if (size >= 8)
		return v;
	LLVMTypeRef t = LLVMIntTypeInContext(g->ctx, (unsigned)size * 8);
	LLVMValueRef tr = LLVMBuildTrunc(g->b, v, t, "");
	return is_signed ? LLVMBuildSExt(g->b, tr, g->i64, "") : LLVMBuildZExt(g->b, tr, g->i64, "");
}

static LLVMValueRef site_id(struct cg *g)
{
	if (g->pp->kind != PLAN_PROG_UPROBE)
		return cg_const(g, (uint64_t)g->pp->site_begin); /* BEGIN/END pseudo-site */
	return LLVMBuildAnd(g->b, cg_cookie(g), cg_const(g, CG_COOKIE_SITE_MASK), "site");
}

/* The u64 a fetch rule denotes: a register's value, an address, or a loaded pointer. */
static LLVMValueRef fetch_rule(struct cg *g, const struct fetch_rule *r)
{
	switch (r->kind) {
	case FETCH_REG:
		return load_reg(g, sema_reg_offset(r->reg));
	case FETCH_OFFSET:
		return LLVMBuildAdd(g->b, fetch_rule(g, r->base), cg_const(g, (uint64_t)r->off), "");
	case FETCH_DEREF: {
		LLVMValueRef args[2] = {fetch_rule(g, r->base), LLVMConstInt(g->i32, 8, false)};
		return cg_runtime_call(g, "gt_read_uint", args, 2);
	}
	}
	return cg_const(g, 0);
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
	return narrow(g, v, e->ty->size, e->ty->is_signed);
}

/* args.FIELD of a tracepoint record: ctx points at the record. */
static LLVMValueRef tp_field_ptr(struct cg *g, int off)
{
	LLVMValueRef idx = cg_const(g, (uint64_t)off);
	return LLVMBuildGEP2(g->b, g->i8, g->ctx_arg, &idx, 1, "");
}

static LLVMValueRef tp_int(struct cg *g, const struct sema_node *sn)
{
	LLVMTypeRef t = LLVMIntTypeInContext(g->ctx, (unsigned)sn->tp_size * 8);
	LLVMValueRef v = LLVMBuildLoad2(g->b, t, tp_field_ptr(g, sn->tp_offset), "tparg");
	LLVMSetAlignment(v, (unsigned)sn->tp_size);
	if (sn->tp_size == 8)
		return v;
	return sn->tp_signed ? LLVMBuildSExt(g->b, v, g->i64, "") : LLVMBuildZExt(g->b, v, g->i64, "");
}

static void tp_str_into(struct cg *g, const struct sema_node *sn, LLVMValueRef dst, int size)
{
	LLVMValueRef src;
	if (sn->tp_data_loc) {
		/* __data_loc: u32 (length << 16 | offset from the record start) */
		LLVMValueRef loc = LLVMBuildLoad2(g->b, g->i32, tp_field_ptr(g, sn->tp_offset), "");
		LLVMSetAlignment(loc, 4);
		LLVMValueRef off = LLVMBuildAnd(g->b, LLVMBuildZExt(g->b, loc, g->i64, ""),
						cg_const(g, 0xffff), "");
		src = LLVMBuildGEP2(g->b, g->i8, g->ctx_arg, &off, 1, "");
	} else {
		src = tp_field_ptr(g, sn->tp_offset);
	}
	LLVMValueRef args[3] = {dst, LLVMConstInt(g->i32, (uint64_t)size, false), src};
	cg_helper(g, BPF_HELPER_probe_read_kernel_str, g->i64, args, 3);
}

/* Writes the text of a string-typed expression into dst (size bytes). */
void cg_str_into(struct cg *g, struct ast_node *e, LLVMValueRef dst, int size)
{
	const struct sema_node *sn = e->sema;
	if (e->kind == AST_FIELD && sn && sn->builtin == BI_TPARG) {
		tp_str_into(g, sn, dst, size);
		return;
	}
	if (e->kind == AST_IDENT && sn && sn->builtin == BI_COMM) {
		LLVMValueRef args[2] = {dst, LLVMConstInt(g->i32, (uint64_t)(size < 16 ? size : 16),
							  false)};
		cg_helper(g, BPF_HELPER_get_current_comm, g->i64, args, 2);
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
		cg_runtime_call(g, !strcmp(e->u.fetch.type, "str") ? "gt_read_gostr" : "gt_read_cstr",
				args, 3);
		return;
	}
	LLVMValueRef src = cg_expr(g, e);
	int n = e->ty->size < size ? e->ty->size : size;
	LLVMBuildMemCpy(g->b, dst, 1, src, 1, cg_const(g, (uint64_t)n));
	if (n < size) /* keep the record free of stale bytes */
		LLVMBuildMemSet(g->b,
				LLVMBuildGEP2(g->b, g->i8, dst, (LLVMValueRef[]){cg_const(g, (uint64_t)n)},
					      1, ""),
				LLVMConstInt(g->i8, 0, false), cg_const(g, (uint64_t)(size - n)), 1);
}

/* A literal's bytes in a stack buffer of the type's size. */
static LLVMValueRef str_const(struct cg *g, const char *bytes, int len, int size)
{
	LLVMValueRef buf = cg_str_alloca(g, size);
	LLVMBuildMemSet(g->b, buf, LLVMConstInt(g->i8, 0, false), cg_const(g, (uint64_t)size), 8);
	for (int i = 0; i < len && i < size - 1; i++) {
		LLVMValueRef idx = cg_const(g, (uint64_t)i);
		LLVMValueRef p = LLVMBuildGEP2(g->b, g->i8, buf, &idx, 1, "");
		LLVMBuildStore(g->b, LLVMConstInt(g->i8, (unsigned char)bytes[i], false), p);
	}
	return buf;
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

static LLVMValueRef cg_binary(struct cg *g, struct ast_node *e)
{
	const char *op = e->u.binary.op;
	if (!strcmp(op, "&&") || !strcmp(op, "||"))
		return cg_logical(g, e, op[0] == '&');
	struct ast_node *ln = e->u.binary.lhs, *rn = e->u.binary.rhs;
	if (ln->ty->kind == TY_STR) {
		/* string == / != */
		int n = ln->ty->size < rn->ty->size ? ln->ty->size : rn->ty->size;
		LLVMValueRef args[3] = {cg_expr(g, ln), cg_expr(g, rn),
					LLVMConstInt(g->i32, (uint64_t)n, false)};
		LLVMValueRef eq = cg_runtime_call(g, "gt_streq", args, 3);
		return op[0] == '=' ? eq : LLVMBuildXor(g->b, eq, cg_const(g, 1), "");
	}
	LLVMValueRef l = cg_expr(g, ln), r = cg_expr(g, rn);
	bool sgn = ln->ty->is_signed && rn->ty->is_signed;
	static const struct {
		const char *op;
		LLVMIntPredicate s, u;
	} cmps[] = {
		{"==", LLVMIntEQ, LLVMIntEQ},   {"!=", LLVMIntNE, LLVMIntNE},
		{"<", LLVMIntSLT, LLVMIntULT},  {"<=", LLVMIntSLE, LLVMIntULE},
		{">", LLVMIntSGT, LLVMIntUGT},  {">=", LLVMIntSGE, LLVMIntUGE},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cmps); i++) {
		if (!strcmp(op, cmps[i].op)) {
			LLVMValueRef c = LLVMBuildICmp(g->b, sgn ? cmps[i].s : cmps[i].u, l, r, "");
			return LLVMBuildZExt(g->b, c, g->i64, "");
		}
	}
	switch (op[0]) {
	case '+':
		return LLVMBuildAdd(g->b, l, r, "");
	case '-':
		return LLVMBuildSub(g->b, l, r, "");
	case '*':
		return LLVMBuildMul(g->b, l, r, "");
	case '/': /* BPF has no signed division (before cpu v4): like bpftrace, unsigned */
		return LLVMBuildUDiv(g->b, l, r, "");
	case '%':
		return LLVMBuildURem(g->b, l, r, "");
	case '&':
		return LLVMBuildAnd(g->b, l, r, "");
	case '|':
		return LLVMBuildOr(g->b, l, r, "");
	case '^':
		return LLVMBuildXor(g->b, l, r, "");
	case '<':
		return LLVMBuildShl(g->b, l, r, "");
	case '>':
		return ln->ty->is_signed ? LLVMBuildAShr(g->b, l, r, "") : LLVMBuildLShr(g->b, l, r, "");
	}
	return cg_const(g, 0);
}

static LLVMValueRef cg_ident(struct cg *g, struct ast_node *e)
{
	const struct sema_node *sn = e->sema;
	switch (sn->builtin) {
	case BI_PID:
	case BI_TID: {
		LLVMValueRef v = cg_helper(g, BPF_HELPER_get_current_pid_tgid, g->i64, NULL, 0);
		return sn->builtin == BI_PID ? LLVMBuildLShr(g->b, v, cg_const(g, 32), "")
					     : LLVMBuildAnd(g->b, v, cg_const(g, 0xffffffff), "");
	}
	case BI_UID:
	case BI_GID: {
		LLVMValueRef v = cg_helper(g, BPF_HELPER_get_current_uid_gid, g->i64, NULL, 0);
		return sn->builtin == BI_GID ? LLVMBuildLShr(g->b, v, cg_const(g, 32), "")
					     : LLVMBuildAnd(g->b, v, cg_const(g, 0xffffffff), "");
	}
	case BI_NSECS:
		return cg_helper(g, BPF_HELPER_ktime_get_ns, g->i64, NULL, 0);
	case BI_ELAPSED: {
		LLVMValueRef now = cg_helper(g, BPF_HELPER_ktime_get_ns, g->i64, NULL, 0);
		LLVMValueRef key = cg_alloca(g, g->i32, "key");
		LLVMBuildStore(g->b, LLVMConstInt(g->i32, 0, false), key);
		/* plan_config.start_ns is the first field */
		return LLVMBuildSub(g->b, now, cg_load_or_zero(g, g->map_config, key), "");
	}
	case BI_CPU: {
		LLVMValueRef v = cg_helper(g, BPF_HELPER_get_smp_processor_id, g->i32, NULL, 0);
		return LLVMBuildZExt(g->b, v, g->i64, "");
	}
	case BI_FUNC:
	case BI_PROBE:
		return site_id(g);
	case BI_GOID:
		return cg_goid(g);
	case BI_DEPTH:
		return g->depth ? LLVMBuildLoad2(g->b, g->i64, g->depth, "depth") : cg_const(g, 0);
	case BI_DURATION:
		return g->duration ? LLVMBuildLoad2(g->b, g->i64, g->duration, "duration")
				   : cg_const(g, 0);
	case BI_RETVAL:
		return load_reg(g, sn->regs_off);
	case BI_RETADDR: {
		/* at an :entry probe the return address is on top of the stack */
		LLVMValueRef args[2] = {load_reg(g, sema_reg_offset("sp")),
					LLVMConstInt(g->i32, 8, false)};
		return cg_runtime_call(g, "gt_read_uint", args, 2);
	}
	case BI_COMM: {
		LLVMValueRef buf = cg_str_alloca(g, 16);
		cg_str_into(g, e, buf, 16);
		return buf;
	}
	default:
		if (sn->builtin >= BI_ARG0 && sn->builtin <= BI_ARG8)
			return load_reg(g, sn->regs_off);
		return cg_const(g, 0);
	}
}

LLVMValueRef cg_expr(struct cg *g, struct ast_node *e)
{
	const struct sema_node *sn = e->sema;
	switch (e->kind) {
	case AST_INT:
		return cg_const(g, e->u.int_.value);
	case AST_STR:
		return str_const(g, e->u.str.bytes, e->u.str.len, e->ty->size);
	case AST_VAR: {
		LLVMValueRef slot = g->vars[sn->var_slot];
		if (e->ty->kind == TY_STR)
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
		LLVMValueRef v = cg_expr(g, e->u.unary.operand);
		switch (e->u.unary.op[0]) {
		case '-':
			return LLVMBuildNeg(g->b, v, "");
		case '~':
			return LLVMBuildNot(g->b, v, "");
		case '!':
			return LLVMBuildZExt(g->b, LLVMBuildICmp(g->b, LLVMIntEQ, v, cg_const(g, 0), ""),
					     g->i64, "");
		}
		return v;
	}
	case AST_MAP:
		return cg_map_read(g, e);
	case AST_INCDEC: {
		struct ast_node *var = e->u.incdec.operand;
		if (var->kind == AST_MAP)
			return cg_map_incdec(g, e);
		LLVMValueRef slot = g->vars[((const struct sema_node *)var->sema)->var_slot];
		LLVMValueRef old = LLVMBuildLoad2(g->b, g->i64, slot, "");
		LLVMValueRef nv = e->u.incdec.inc ? LLVMBuildAdd(g->b, old, cg_const(g, 1), "")
						  : LLVMBuildSub(g->b, old, cg_const(g, 1), "");
		LLVMBuildStore(g->b, nv, slot);
		return e->u.incdec.prefix ? nv : old;
	}
	case AST_BINARY:
		return cg_binary(g, e);
	case AST_TERNARY: {
		bool str = e->ty->kind == TY_STR;
		LLVMValueRef res = str ? cg_str_alloca(g, e->ty->size) : cg_alloca(g, g->i64, "sel");
		LLVMBasicBlockRef t = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "sel.t");
		LLVMBasicBlockRef f = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "sel.f");
		LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "sel.done");
		LLVMBuildCondBr(g->b, cg_cond(g, e->u.ternary.cond), t, f);
		struct ast_node *arms[2] = {e->u.ternary.then, e->u.ternary.els};
		LLVMBasicBlockRef bbs[2] = {t, f};
		for (int i = 0; i < 2; i++) {
			LLVMPositionBuilderAtEnd(g->b, bbs[i]);
			if (str)
				cg_str_into(g, arms[i], res, e->ty->size);
			else
				LLVMBuildStore(g->b, cg_expr(g, arms[i]), res);
			LLVMBuildBr(g->b, done);
		}
		LLVMPositionBuilderAtEnd(g->b, done);
		return str ? res : LLVMBuildLoad2(g->b, g->i64, res, "");
	}
	case AST_CAST:
		return narrow(g, cg_expr(g, e->u.cast.expr), e->ty->size, e->ty->is_signed);
	case AST_CALL:
		if (sn && sn->builtin == BI_REG)
			return load_reg(g, sn->regs_off);
		if (sn && sn->builtin == BI_MAPLEN)
			return cg_runtime_call(g, "gt_map_len", &g->maps[sn->map_id], 1);
		if (sn && sn->builtin == BI_STR) {
			LLVMValueRef buf = cg_str_alloca(g, e->ty->size);
			cg_str_into(g, e, buf, e->ty->size);
			return buf;
		}
		return cg_const(g, 0);
	case AST_FIELD:
		if (sn && sn->builtin == BI_TPARG) {
			if (e->ty->kind == TY_STR) {
				LLVMValueRef buf = cg_str_alloca(g, e->ty->size);
				cg_str_into(g, e, buf, e->ty->size);
				return buf;
			}
			return tp_int(g, sn);
		}
		return cg_const(g, 0);
	case AST_FETCH:
		if (e->ty->kind == TY_STR) {
			LLVMValueRef buf = cg_str_alloca(g, e->ty->size);
			cg_str_into(g, e, buf, e->ty->size);
			return buf;
		}
		return cg_fetch_int(g, e);
	default:
		return cg_const(g, 0);
	}
}
