/* cg_stmt: one BPF program per sema_prog: predicate, statements, events. */
#include "codegen/cg_int.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"


static LLVMBasicBlockRef new_bb(struct cg *g, const char *name)
{
	return LLVMAppendBasicBlockInContext(g->ctx, g->fn, name);
}

void cg_store64(struct cg *g, LLVMValueRef p, int off, LLVMValueRef v)
{
	LLVMValueRef idx = LLVMConstInt(g->i64, (uint64_t)off, false);
	LLVMValueRef q = LLVMBuildGEP2(g->b, g->i8, p, &idx, 1, "");
	LLVMValueRef st = LLVMBuildStore(g->b, v, q);
	LLVMSetAlignment(st, 8);
}

/* LLVM's BPF backend lowers a memset or memcpy of up to 128 stores inline and makes a
 * call of a bigger one, which BPF cannot do: past CG_MEMSET_MAX bytes a bounded loop of
 * volatile 8-byte stores does it (volatile: not folded back into a memset), with the
 * tail under 8 bytes an intrinsic. x86 BPF takes 8-byte accesses at any alignment. */
#define CG_MEMSET_MAX 512

/* DST[i] = SRC ? SRC[i] : 0 for the 8-byte words i < WORDS */
static void word_loop(struct cg *g, LLVMValueRef dst, LLVMValueRef src, int words)
{
	LLVMBasicBlockRef from = LLVMGetInsertBlock(g->b);
	LLVMBasicBlockRef body = new_bb(g, "words.body"), done = new_bb(g, "words.done");
	LLVMBuildBr(g->b, body);
	LLVMPositionBuilderAtEnd(g->b, body);
	LLVMValueRef i = LLVMBuildPhi(g->b, g->i64, "words.i");
	LLVMValueRef off = LLVMBuildShl(g->b, i, cg_const(g, 3), "");
	LLVMValueRef v = cg_const(g, 0);
	if (src) {
		LLVMValueRef ld = LLVMBuildLoad2(g->b, g->i64,
						 LLVMBuildGEP2(g->b, g->i8, src, &off, 1, ""), "");
		LLVMSetAlignment(ld, 1);
		LLVMSetVolatile(ld, true);
		v = ld;
	}
	LLVMValueRef st = LLVMBuildStore(g->b, v, LLVMBuildGEP2(g->b, g->i8, dst, &off, 1, ""));
	LLVMSetAlignment(st, 1);
	LLVMSetVolatile(st, true);
	LLVMValueRef next = LLVMBuildAdd(g->b, i, cg_const(g, 1), "");
	LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntULT, next, cg_const(g, (uint64_t)words), ""),
			body, done);
	LLVMValueRef in[2] = {cg_const(g, 0), next};
	LLVMBasicBlockRef bbs[2] = {from, body};
	LLVMAddIncoming(i, in, bbs, 2);
	LLVMPositionBuilderAtEnd(g->b, done);
}

void cg_zero(struct cg *g, LLVMValueRef p, int size, unsigned align)
{
	LLVMValueRef zero8 = LLVMConstInt(g->i8, 0, false);
	if (size <= CG_MEMSET_MAX) {
		if (size > 0)
			LLVMBuildMemSet(g->b, p, zero8, cg_const(g, (uint64_t)size), align);
		return;
	}
	word_loop(g, p, NULL, size / 8);
	if (size % 8)
		LLVMBuildMemSet(g->b, cg_gep8(g, p, size / 8 * 8), zero8,
				cg_const(g, (uint64_t)(size % 8)), 1);
}

void cg_copy(struct cg *g, LLVMValueRef dst, LLVMValueRef src, int size)
{
	if (size <= CG_MEMSET_MAX) {
		if (size > 0)
			LLVMBuildMemCpy(g->b, dst, 1, src, 1, cg_const(g, (uint64_t)size));
		return;
	}
	word_loop(g, dst, src, size / 8);
	if (size % 8)
		LLVMBuildMemCpy(g->b, cg_gep8(g, dst, size / 8 * 8), 1, cg_gep8(g, src, size / 8 * 8),
				1, cg_const(g, (uint64_t)(size % 8)));
}

/* A ring-buffer record of EVENT: reserved (a failed reserve counts as a lost event,
 * never silently), its id stored; the caller fills it and calls record_submit. */
static LLVMValueRef record_begin(struct cg *g, int event, LLVMBasicBlockRef *done)
{
	const struct plan_event *ev = &g->plan->events[event];
	LLVMValueRef args[3] = {g->map_events, cg_const(g, (uint64_t)ev->size), cg_const(g, 0)};
	LLVMValueRef rec = cg_helper(g, BPF_FUNC_ringbuf_reserve, g->ptr, args, 3);
	LLVMBasicBlockRef ok = new_bb(g, "ev.ok"), lost = new_bb(g, "ev.lost");
	*done = new_bb(g, "ev.done");
	LLVMBuildCondBr(g->b, LLVMBuildIsNull(g->b, rec, ""), lost, ok);

	LLVMPositionBuilderAtEnd(g->b, lost);
	LLVMValueRef key = cg_alloca(g, g->i32, "key");
	LLVMBuildStore(g->b, LLVMConstInt(g->i32, 0, false), key);
	LLVMValueRef largs[2] = {g->map_lost, key};
	LLVMValueRef slot = cg_helper(g, BPF_FUNC_map_lookup_elem, g->ptr, largs, 2);
	LLVMBasicBlockRef inc = new_bb(g, "lost.inc");
	LLVMBuildCondBr(g->b, LLVMBuildIsNull(g->b, slot, ""), *done, inc);
	LLVMPositionBuilderAtEnd(g->b, inc);
	LLVMBuildAtomicRMW(g->b, LLVMAtomicRMWBinOpAdd, slot, cg_const(g, 1),
			   LLVMAtomicOrderingMonotonic, false);
	LLVMBuildBr(g->b, *done);

	LLVMPositionBuilderAtEnd(g->b, ok);
	cg_store64(g, rec, 0, cg_const(g, (uint64_t)event));
	return rec;
}

static void record_submit(struct cg *g, LLVMValueRef rec, LLVMBasicBlockRef done)
{
	LLVMValueRef sargs[2] = {rec, cg_const(g, 0)};
	cg_helper(g, BPF_FUNC_ringbuf_submit, LLVMVoidTypeInContext(g->ctx), sargs, 2);
	LLVMBuildBr(g->b, done);
	LLVMPositionBuilderAtEnd(g->b, done);
}

/* One record for a printf/print/exit call: its arguments in the event's layout. */
static void cg_event(struct cg *g, struct ast_node *call, int first)
{
	const struct sema_node *sn = call->sema;
	const struct plan_event *ev = &g->plan->events[sn->event_id];
	struct ast_node **argv = call->u.call.args.v;
	/* an argument { stmts; value }: its statements first, so that what they print comes
	 * before this record (the ring buffer keeps the order records were reserved in) */
	for (int i = 0; i < ev->nargs; i++)
		if (argv[first + i]->kind == AST_BLOCK_EXPR && argv[first + i]->u.blockexpr.value)
			cg_block(g, argv[first + i]->u.blockexpr.block);
	LLVMBasicBlockRef done;
	LLVMValueRef rec = record_begin(g, sn->event_id, &done);
	for (int i = 0; i < ev->nargs; i++) {
		const struct plan_arg *a = &ev->args[i];
		struct ast_node *e = argv[first + i];
		if (e->kind == AST_BLOCK_EXPR && e->u.blockexpr.value)
			e = e->u.blockexpr.value;
		if (a->kind == PLAN_ARG_STR || a->kind == PLAN_ARG_TUPLE || a->kind == PLAN_ARG_BUF ||
		    a->kind == PLAN_ARG_INET || a->kind == PLAN_ARG_STRUCT || a->kind == PLAN_ARG_GO ||
		    a->kind == PLAN_ARG_STACK || a->kind == PLAN_ARG_SYM ||
		    a->kind == PLAN_ARG_ARRAY) {
			LLVMValueRef idx = cg_const(g, (uint64_t)a->offset);
			LLVMValueRef dst = LLVMBuildGEP2(g->b, g->i8, rec, &idx, 1, "");
			if (a->kind == PLAN_ARG_GO)
				cg_go_capture(g, e, dst, a);
			else if (a->kind == PLAN_ARG_STRUCT && e->ty->kind == TY_STRUCT)
				cg_struct_into(g, e, dst);
			else if (a->kind == PLAN_ARG_TUPLE || a->kind == PLAN_ARG_STRUCT) /* a record */
				cg_tuple_into(g, e, dst, e->ty);
			else
				cg_str_into(g, e, dst, a->size);
		} else {
			cg_store64(g, rec, a->offset, cg_expr(g, e));
		}
	}
	record_submit(g, rec, done);
}

void cg_helper_check(struct cg *g, const struct ast_node *at, LLVMValueRef failed, LLVMValueRef rc)
{
	const struct sema_node *sn = at->sema;
	if (!sn || !sn->err_event)
		return;
	LLVMBasicBlockRef report = new_bb(g, "helper.err"), on = new_bb(g, "helper.ok");
	LLVMBuildCondBr(g->b, failed, report, on);
	LLVMPositionBuilderAtEnd(g->b, report);
	LLVMBasicBlockRef done;
	LLVMValueRef rec = record_begin(g, sn->err_event - 1, &done);
	cg_store64(g, rec, 8, rc);
	record_submit(g, rec, done);
	LLVMBuildBr(g->b, on);
	LLVMPositionBuilderAtEnd(g->b, on);
}

/* A condition: its buffers end before the branch on it. */
static LLVMValueRef cond_value(struct cg *g, struct ast_node *e)
{
	int mark = g->ntemps;
	LLVMValueRef c = cg_cond(g, e);
	cg_temps_end(g, mark);
	return c;
}

/* A call as a statement: an event, delete(), or a value thrown away. */
static void cg_call_stmt(struct cg *g, struct ast_node *e)
{
	const struct sema_node *sn = e->sema;
	switch (sn->builtin) {
	case BI_DELETE:
		cg_map_delete(g, e);
		break;
	case BI_DEBUGF: { /* bpf_trace_printk(fmt, size, a, b, c): strings by address */
		struct ast_list *a = &e->u.call.args;
		LLVMValueRef args[5];
		int n = 0, len = a->v[0]->u.str.len;
		args[n++] = cg_expr(g, a->v[0]);
		args[n++] = LLVMConstInt(g->i32, (uint64_t)len + 1, false);
		for (int i = 1; i < a->n; i++) {
			LLVMValueRef v = cg_expr(g, a->v[i]);
			args[n++] = a->v[i]->ty->kind == TY_STR ? LLVMBuildPtrToInt(g->b, v, g->i64, "")
								: v;
		}
		cg_helper(g, BPF_FUNC_trace_printk, g->i64, args, n);
		break;
	}
	case BI_PRINTF:
	case BI_ERRORF:
	case BI_WARNF:
	case BI_SYSTEM:
	case BI_CAT:
	case BI_FGSPAWN:
		cg_event(g, e, 1); /* the format is not a record field */
		break;
	case BI_JOIN: { /* the strings, read in BPF; joined by user space */
		const struct plan_event *ev = &g->plan->events[sn->event_id];
		LLVMBasicBlockRef done;
		LLVMValueRef argv = cg_expr(g, e->u.call.args.v[0]);
		LLVMValueRef rec = record_begin(g, sn->event_id, &done);
		LLVMValueRef idx = cg_const(g, 8);
		LLVMValueRef args[4] = {LLVMBuildGEP2(g->b, g->i8, rec, &idx, 1, ""),
					LLVMConstInt(g->i32, (uint64_t)ev->slots, false),
					LLVMConstInt(g->i32, (uint64_t)ev->slot_size, false), argv};
		cg_runtime_call(g, "gt_join", args, 4);
		record_submit(g, rec, done);
		break;
	}
	case BI_LBR: { /* straight into the record: 768 bytes do not fit the BPF stack */
		const struct plan_event *ev = &g->plan->events[sn->event_id];
		LLVMBasicBlockRef done;
		LLVMValueRef rec = record_begin(g, sn->event_id, &done);
		LLVMValueRef idx = cg_const(g, 16);
		LLVMValueRef args[3] = {LLVMBuildGEP2(g->b, g->i8, rec, &idx, 1, ""),
					LLVMConstInt(g->i32, (uint64_t)(ev->slots * ev->slot_size), false),
					cg_const(g, 0)};
		cg_store64(g, rec, 8, cg_helper(g, BPF_FUNC_get_branch_snapshot, g->i64, args, 3));
		record_submit(g, rec, done);
		break;
	}
	case BI_EXIT: /* and the probe ends here, as in bpftrace */
		cg_config_set(g, PLAN_CONFIG_GATE, cg_const(g, PLAN_GATE_EXITED));
		cg_event(g, e, 0);
		LLVMBuildBr(g->b, g->exit_bb);
		break;
	case BI_PRINT:
	case BI_TIME:
	case BI_CLEAR:
	case BI_ZERO:
	case BI_FGENTRY: /* sema made its argument list the record's fields */
	case BI_FGRETURN:
		if (g->depth) { /* not inside a root call dropped whole */
			LLVMValueRef d = LLVMBuildLoad2(g->b, g->i64, g->depth, "");
			LLVMValueRef skip = LLVMBuildAnd(g->b, d, cg_const(g, GT_DEPTH_SKIP), "");
			LLVMBasicBlockRef rec = new_bb(g, "fg.rec"), done = new_bb(g, "fg.done");
			LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntEQ, skip, cg_const(g, 0), ""),
					rec, done);
			LLVMPositionBuilderAtEnd(g->b, rec);
			cg_event(g, e, 0);
			LLVMBuildBr(g->b, done);
			LLVMPositionBuilderAtEnd(g->b, done);
			break;
		}
		cg_event(g, e, 0);
		break;
	default:
		cg_expr(g, e);
		break;
	}
}

/* c ? printf(..) : exit() as a statement: an if/else over the two calls. */
static void cg_void_ternary(struct cg *g, struct ast_node *e)
{
	LLVMBasicBlockRef bbs[2] = {new_bb(g, "sel.t"), new_bb(g, "sel.f")};
	LLVMBasicBlockRef done = new_bb(g, "sel.done");
	LLVMBuildCondBr(g->b, cond_value(g, e->u.ternary.cond), bbs[0], bbs[1]);
	struct ast_node *arms[2] = {e->u.ternary.then, e->u.ternary.els};
	for (int i = 0; i < 2; i++) {
		LLVMPositionBuilderAtEnd(g->b, bbs[i]);
		if (arms[i]->kind == AST_CALL)
			cg_call_stmt(g, arms[i]);
		else if (arms[i]->kind == AST_TERNARY)
			cg_void_ternary(g, arms[i]);
		if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(g->b)))
			LLVMBuildBr(g->b, done);
	}
	LLVMPositionBuilderAtEnd(g->b, done);
}

static void cg_assign(struct cg *g, struct ast_node *st)
{
	struct ast_node *lhs = st->u.assign.lhs, *rhs = st->u.assign.rhs;
	if (lhs->kind == AST_MAP) {
		cg_map_assign(g, st);
		return;
	}
	const struct sema_node *sn = lhs->sema;
	const struct sema_var *v = &g->sp->vars[sn->var_slot];
	LLVMValueRef slot = g->vars[sn->var_slot];
	if (!rhs) { /* let $x;: zero */
		if (gt_type_is_int(&v->ty))
			LLVMBuildStore(g->b, cg_const(g, 0), slot);
		else
			cg_zero(g, slot, v->ty.size, 1);
		return;
	}
	if (v->ty.kind == TY_TUPLE) {
		cg_tuple_into(g, rhs, slot, &v->ty);
		return;
	}
	if (gt_type_is_bytes(&v->ty)) {
		int n = rhs->ty->size < v->ty.size ? rhs->ty->size : v->ty.size;
		cg_str_into(g, rhs, slot, n);
		/* the bytes of a longer earlier value go: "a" after "xxxxx" must be the same
		 * map key as any other "a" */
		if (n < v->ty.size)
			cg_zero(g, cg_gep8(g, slot, n), v->ty.size - n, 1);
		return;
	}
	LLVMValueRef val = cg_expr(g, rhs);
	if (st->u.assign.op == OP_ADD || st->u.assign.op == OP_SUB)
		val = cg_ptr_step(g, lhs->ty, val); /* $p += n: n elements on */
	if (st->u.assign.op) /* $x op= y  is  $x = $x op y */
		val = cg_arith(g, st, st->u.assign.op, LLVMBuildLoad2(g->b, g->i64, slot, ""),
			       lhs->ty->is_signed, val, rhs->ty->is_signed);
	/* converted to the variable's width, as C converts on assignment */
	LLVMBuildStore(g->b, cg_narrow(g, val, v->ty.size, v->ty.is_signed), slot);
}

static void cg_stmt_kind(struct cg *g, struct ast_node *st);

static void cg_stmt(struct cg *g, struct ast_node *st)
{
	if (LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(g->b)))
		LLVMPositionBuilderAtEnd(g->b, new_bb(g, "dead")); /* after return */
	cg_set_loc(g, st->loc);
	int mark = g->ntemps;
	cg_stmt_kind(g, st);
	cg_temps_end(g, mark);
}

static void cg_stmt_kind(struct cg *g, struct ast_node *st)
{
	switch (st->kind) {
	case AST_BLOCK:
		cg_block(g, st);
		break;
	case AST_EXPR_STMT: {
		struct ast_node *e = st->u.expr_stmt.expr;
		if (e->kind == AST_CALL)
			cg_call_stmt(g, e);
		else if (e->kind == AST_TERNARY && e->ty->kind == TY_VOID)
			cg_void_ternary(g, e);
		else
			cg_expr(g, e);
		break;
	}
	case AST_ASSIGN:
		cg_assign(g, st);
		break;
	case AST_IF: {
		LLVMBasicBlockRef then = new_bb(g, "if.then"), els = new_bb(g, "if.else"),
				  done = new_bb(g, "if.done");
		LLVMBuildCondBr(g->b, cond_value(g, st->u.if_.cond), then, els);
		LLVMPositionBuilderAtEnd(g->b, then);
		cg_block(g, st->u.if_.then);
		if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(g->b)))
			LLVMBuildBr(g->b, done);
		LLVMPositionBuilderAtEnd(g->b, els);
		if (st->u.if_.els)
			cg_stmt(g, st->u.if_.els);
		if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(g->b)))
			LLVMBuildBr(g->b, done);
		LLVMPositionBuilderAtEnd(g->b, done);
		break;
	}
	case AST_UNROLL: {
		const struct sema_node *sn = st->sema;
		for (int64_t i = 0; i < sn->const_val; i++)
			cg_block(g, st->u.loop.body);
		break;
	}
	case AST_WHILE: {
		LLVMBasicBlockRef cond = new_bb(g, "while.cond"), body = new_bb(g, "while.body"),
				  done = new_bb(g, "while.done");
		LLVMBasicBlockRef outer_brk = g->brk_bb, outer_cont = g->cont_bb;
		LLVMBuildBr(g->b, cond);
		LLVMPositionBuilderAtEnd(g->b, cond);
		LLVMBuildCondBr(g->b, cond_value(g, st->u.loop.expr), body, done);
		LLVMPositionBuilderAtEnd(g->b, body);
		g->brk_bb = done;
		g->cont_bb = cond;
		cg_block(g, st->u.loop.body);
		g->brk_bb = outer_brk;
		g->cont_bb = outer_cont;
		if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(g->b)))
			LLVMBuildBr(g->b, cond);
		LLVMPositionBuilderAtEnd(g->b, done);
		break;
	}
	case AST_FOR:
		cg_for(g, st);
		break;
	case AST_BREAK:
		LLVMBuildBr(g->b, g->brk_bb);
		break;
	case AST_CONTINUE:
		LLVMBuildBr(g->b, g->cont_bb);
		break;
	case AST_RETURN:
		LLVMBuildBr(g->b, g->exit_bb);
		break;
	default:
		cg_internal_error(g, st, "a statement sema refuses");
	}
}

void cg_block(struct cg *g, struct ast_node *block)
{
	for (int i = 0; i < block->u.block.stmts.n; i++)
		cg_stmt(g, block->u.block.stmts.v[i]);
}

LLVMValueRef cg_begin_function(struct cg *g, const char *name, LLVMTypeRef ret,
			       LLVMMetadataRef di_ret, const struct cg_param *params, int nparams,
			       int line, bool local)
{
	LLVMTypeRef types[4];
	LLVMMetadataRef di_types[5] = {di_ret};
	for (int i = 0; i < nparams; i++) {
		types[i] = params[i].ty;
		di_types[i + 1] = params[i].di;
	}
	/* runtime-bpf may have declared it (gt_map_failed) */
	g->fn = LLVMGetNamedFunction(g->mod, name);
	if (!g->fn || !LLVMIsDeclaration(g->fn))
		g->fn = LLVMAddFunction(g->mod, name,
					LLVMFunctionType(ret, types, (unsigned)nparams, false));
	LLVMMetadataRef sty = LLVMDIBuilderCreateSubroutineType(
		g->dib, g->di_file, di_types, (unsigned)nparams + 1, LLVMDIFlagZero);
	g->di_sp = LLVMDIBuilderCreateFunction(g->dib, g->di_file, name, strlen(name), name,
					       strlen(name), g->di_file, (unsigned)line, sty, local,
					       true, (unsigned)line, LLVMDIFlagPrototyped, true);
	LLVMSetSubprogram(g->fn, g->di_sp);
	if (local) /* BTF then says static: the verifier wants callbacks static */
		LLVMSetLinkage(g->fn, LLVMInternalLinkage);
	g->alloca_bb = new_bb(g, "entry");
	g->scratch_slot = NULL;
	LLVMPositionBuilderAtEnd(g->b, g->alloca_bb);
	LLVMMetadataRef loc =
		LLVMDIBuilderCreateDebugLocation(g->ctx, (unsigned)line, 1, g->di_sp, NULL);
	/* named parameters: BTF's function info wants them */
	for (int i = 0; i < nparams; i++) {
		LLVMValueRef p = LLVMGetParam(g->fn, (unsigned)i);
		const char *pn = params[i].name;
		LLVMSetValueName2(p, pn, strlen(pn));
		LLVMMetadataRef var = LLVMDIBuilderCreateParameterVariable(
			g->dib, g->di_sp, pn, strlen(pn), (unsigned)i + 1, g->di_file, (unsigned)line,
			params[i].di, true, 0);
		LLVMDIBuilderInsertDbgValueAtEnd(g->dib, p, var,
						 LLVMDIBuilderCreateExpression(g->dib, NULL, 0), loc,
						 g->alloca_bb);
	}
	/* the entry block holds allocas only (and what is made at the top of it); its
	 * branch to the code is where cg_scratch_end_function puts the row's lookup */
	LLVMBasicBlockRef start = new_bb(g, "start");
	LLVMSetCurrentDebugLocation2(g->b, loc);
	LLVMBuildBr(g->b, start);
	LLVMPositionBuilderAtEnd(g->b, start);
	return g->fn;
}

/* Ends the program unless the current process is gt_config.filter_pid (0: any) or one
 * of more_pids (-p given several times; unused slots are 0). */
static void pid_filter(struct cg *g)
{
	LLVMValueRef want = cg_config(g, 1 /* filter_pid */);
	LLVMBasicBlockRef check = new_bb(g, "pid.check"), pass = new_bb(g, "pid.pass");
	LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntEQ, want, cg_const(g, 0), ""), pass, check);
	LLVMPositionBuilderAtEnd(g->b, check);
	LLVMValueRef tgid = LLVMBuildLShr(g->b, cg_helper(g, BPF_FUNC_get_current_pid_tgid, g->i64,
							  NULL, 0),
					  cg_const(g, 32), "");
	LLVMValueRef more = LLVMConstInt(LLVMInt1TypeInContext(g->ctx), 0, false);
	for (int i = 0; i < PLAN_MAX_PIDS - 1; i++)
		more = LLVMBuildOr(g->b, more,
				   LLVMBuildICmp(g->b, LLVMIntEQ, tgid,
						 cg_config(g, PLAN_CONFIG_MORE_PIDS + i), ""),
				   "");
	/* the idle task's tgid is 0, as an unused slot is: it never matches one */
	more = LLVMBuildAnd(g->b, more, LLVMBuildICmp(g->b, LLVMIntNE, tgid, cg_const(g, 0), ""),
			    "");
	LLVMValueRef any = LLVMBuildOr(g->b, LLVMBuildICmp(g->b, LLVMIntEQ, tgid, want, ""), more, "");
	LLVMBuildCondBr(g->b, any, pass, g->exit_bb);
	LLVMPositionBuilderAtEnd(g->b, pass);
}

/* Whether the probes' clauses need plan_gate: a BEGIN probe or an exit() in the script */
static bool gated(const struct gt_plan *plan)
{
	for (int i = 0; i < plan->nevents; i++)
		if (plan->events[i].kind == PLAN_EV_EXIT)
			return true;
	for (int i = 0; i < plan->nprogs; i++)
		if (plan->progs[i].kind == PLAN_PROG_BEGIN)
			return true;
	return false;
}

/* The clause runs only while gt_config.gate is OPEN. gotrace attaches before BEGIN runs
 * and detaches a while after it reads an exit(); a probe that fires every millisecond
 * would see BEGIN's maps half set, or go on changing the maps exit() left (bpftrace's
 * tseries tests count on neither). */
static void gate(struct cg *g)
{
	LLVMBasicBlockRef pass = new_bb(g, "gate.open");
	LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntEQ, cg_config(g, PLAN_CONFIG_GATE),
					    cg_const(g, PLAN_GATE_OPEN), ""),
			pass, g->exit_bb);
	LLVMPositionBuilderAtEnd(g->b, pass);
}

void cg_program(struct cg *g, const struct sema_prog *sp)
{
	const struct plan_prog *pp = &g->plan->progs[sp->plan_prog];
	struct ast_node *clause = sp->clause;
	static const struct ast_node hidden_clause = {
	    .kind = AST_CLAUSE, .loc = {.line = 1, .col = 1, .end_line = 1, .end_col = 2}};
	if (!clause)
		clause = (struct ast_node *)&hidden_clause;
	g->sp = sp;
	g->pp = pp;
	g->scratch_used = 0;
	g->cookie = g->now = g->target = g->depth = g->duration = g->oncpu = g->gomap_out = NULL;
	static const char *const sections[] = {"raw_tp", "raw_tp", "uprobe", "perf_event",
					       "tracepoint", "kprobe", "fentry"};
	_Static_assert(ARRAY_SIZE(sections) == PLAN_PROG_NKINDS, "a section for each kind");
	const struct cg_param ctx = {g->ptr, g->di_ptr, "ctx"};
	cg_begin_function(g, pp->fn_name, g->i32, g->di_int, &ctx, 1, clause->loc.line, false);
	LLVMSetSection(g->fn, pp->tp_raw ? "raw_tp" : sections[pp->kind]);
	g->ctx_arg = LLVMGetParam(g->fn, 0);
	g->brk_bb = g->cont_bb = NULL;
	cg_set_loc(g, clause->loc);
	g->exit_bb = new_bb(g, "exit");
	if (pp->kind == PLAN_PROG_UPROBE)
		cg_goruntime_prologue(g);
	else if (sp->hidden == HIDDEN_SCHED_SWITCH)
		cg_oncpu_switch(g);
	if (sp->hidden) {
		if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(g->b)))
			LLVMBuildBr(g->b, g->exit_bb);
		LLVMPositionBuilderAtEnd(g->b, g->exit_bb);
		LLVMBuildRet(g->b, LLVMConstInt(g->i32, 0, false));
		cg_scratch_end_function(g);
		return;
	}

	/* profile, software, hardware and tracepoint events fire in every process: under -c
	 * or -p only the traced one's count (interval timers are not a process's) */
	if ((pp->kind == PLAN_PROG_PERF && pp->perf_all_cpus) || pp->kind == PLAN_PROG_TRACEPOINT ||
	    pp->kind == PLAN_PROG_KPROBE || pp->kind == PLAN_PROG_FENTRY)
		pid_filter(g);
	if (pp->kind != PLAN_PROG_BEGIN && pp->kind != PLAN_PROG_END && gated(g->plan))
		gate(g);

	g->vars = xcalloc((size_t)sp->nvars + 1, sizeof(LLVMValueRef));
	for (int i = 0; i < sp->nvars; i++) {
		const struct sema_var *v = &sp->vars[i];
		if (v->loop_own)
			continue; /* cg_for makes it */
		if (gt_type_is_bytes(&v->ty)) {
			g->vars[i] = cg_buf_alloca(g, v->ty.size);
		} else {
			g->vars[i] = cg_alloca(g, g->i64, v->name);
			LLVMBuildStore(g->b, cg_const(g, 0), g->vars[i]);
		}
	}
	LLVMBasicBlockRef body = new_bb(g, "body");
	LLVMBuildBr(g->b, body);
	LLVMPositionBuilderAtEnd(g->b, body);
	if (clause->u.clause.pred) {
		cg_set_loc(g, clause->u.clause.pred->loc);
		LLVMBasicBlockRef pass = new_bb(g, "pred.pass");
		LLVMBuildCondBr(g->b, cond_value(g, clause->u.clause.pred), pass, g->exit_bb);
		LLVMPositionBuilderAtEnd(g->b, pass);
	}
	cg_block(g, clause->u.clause.body);
	if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(g->b)))
		LLVMBuildBr(g->b, g->exit_bb);
	LLVMPositionBuilderAtEnd(g->b, g->exit_bb);
	cg_set_loc(g, clause->loc);
	LLVMBuildRet(g->b, LLVMConstInt(g->i32, 0, false));
	cg_scratch_end_function(g);
	free(g->vars);
	g->vars = NULL;
}
