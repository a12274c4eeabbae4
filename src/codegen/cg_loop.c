/* cg_loop: for loops. The body becomes a callback (bpf_for_each_map_elem over a map,
 * bpf_loop over a range); the probe's variables, ctx and per-program values reach it
 * through a context struct of pointers on the probe's stack, so that the body reads and
 * updates them as if it ran inline. break and continue return 1 and 0; return and
 * exit() also set the struct's `returned`, and the probe ends after the helper. */
#include "codegen/cg_int.h"

#include <stdlib.h>

#include "common/util.h"

/* fields after the variables' pointers */
enum { F_CTX, F_DEPTH, F_DURATION, F_ONCPU, F_COOKIE, F_RETURNED, F_START, F_COUNT };

static LLVMValueRef field(struct cg *g, LLVMTypeRef cty, LLVMValueRef cx, int i)
{
	return LLVMBuildStructGEP2(g->b, cty, cx, (unsigned)i, "");
}

/* A key or value from its map layout SA at SRC + SOFF into type DT at DST + DOFF:
 * tuples field by field (their strings may differ in size), never more than either
 * side holds. */
static void copy(struct cg *g, LLVMValueRef dst, int doff, const struct gt_type *dt,
		 LLVMValueRef src, int soff, const struct plan_arg *sa)
{
	if (dt->kind == TY_TUPLE && sa->kind == PLAN_ARG_TUPLE) {
		for (int i = 0; i < dt->nfields && i < sa->nfields; i++)
			copy(g, dst, doff + dt->offsets[i], dt->fields[i], src,
			     soff + sa->fields[i].offset, &sa->fields[i]);
		return;
	}
	int n = dt->size < sa->size ? dt->size : sa->size;
	if (n > 0)
		cg_copy(g, cg_gep8(g, dst, doff), cg_gep8(g, src, soff), n);
}

/* $kv = (key, value): the map's key fields and value into the variable's tuple layout. */
static void fill_pair(struct cg *g, struct ast_node *st, LLVMValueRef kv, const struct gt_type *t,
		      LLVMValueRef key, LLVMValueRef value)
{
	const struct sema_node *sn = st->sema;
	const struct plan_map *m = &g->plan->maps[sn->map_id];
	cg_zero(g, kv, t->size, 8);
	const struct gt_type *kt = t->fields[0];
	if (m->nkeys == 1)
		copy(g, kv, t->offsets[0], kt, key, m->keys[0].offset, &m->keys[0]);
	else
		for (int i = 0; i < m->nkeys; i++)
			copy(g, kv, t->offsets[0] + kt->offsets[i], kt->fields[i], key,
			     m->keys[i].offset, &m->keys[i]);
	int voff = t->offsets[1];
	if (m->percpu) { /* this CPU's value is not the map's: add them up */
		LLVMValueRef v = cg_agg_read(g, sn->map_id, m, key);
		LLVMSetAlignment(LLVMBuildStore(g->b, v, cg_gep8(g, kv, voff)), 8);
		return;
	}
	if (m->kind == PLAN_MAP_VALUE) {
		copy(g, kv, voff, t->fields[1], value, 0, &m->value);
	} else { /* an integer or a string */
		const struct plan_arg whole = {.kind = PLAN_ARG_STR, .size = m->value_size};
		copy(g, kv, voff, t->fields[1], value, 0, &whole);
	}
}

/* The callback: its parameters, the probe's values read back from the context struct,
 * the loop's variable, then the body. */
static LLVMValueRef callback(struct cg *g, struct ast_node *st, LLVMTypeRef cty, int nslots)
{
	const struct sema_node *sn = st->sema;
	bool range = st->u.for_.end != NULL;
	const struct cg_param map_params[4] = {{g->ptr, g->di_ptr, "map"},
					       {g->ptr, g->di_ptr, "key"},
					       {g->ptr, g->di_ptr, "value"},
					       {g->ptr, g->di_ptr, "ctx"}};
	const struct cg_param range_params[2] = {{g->i64, g->di_u64, "index"},
						 {g->ptr, g->di_ptr, "ctx"}};
	LLVMValueRef fn = cg_begin_function(g, range ? "gt_loop_cb" : "gt_for_each_cb", g->i64,
					    g->di_u64, range ? range_params : map_params,
					    range ? 2 : 4, st->loc.line, true);
	cg_set_loc(g, st->loc);
	LLVMValueRef cx = LLVMGetParam(fn, range ? 1 : 3);

	LLVMValueRef *outer = g->vars;
	g->vars = xcalloc((size_t)g->sp->nvars + 1, sizeof(LLVMValueRef));
	for (int i = 0; i < nslots; i++)
		g->vars[sn->loop_slots[i]] = LLVMBuildLoad2(g->b, g->ptr, field(g, cty, cx, i), "");
	g->ctx_arg = LLVMBuildLoad2(g->b, g->ptr, field(g, cty, cx, nslots + F_CTX), "ctx");
	g->depth = g->depth ? LLVMBuildLoad2(g->b, g->ptr, field(g, cty, cx, nslots + F_DEPTH), "")
			    : NULL;
	g->duration = g->duration ? LLVMBuildLoad2(g->b, g->ptr,
						   field(g, cty, cx, nslots + F_DURATION), "")
				  : NULL;
	g->oncpu = g->oncpu ? LLVMBuildLoad2(g->b, g->ptr, field(g, cty, cx, nslots + F_ONCPU), "")
			    : NULL;
	g->cookie = g->cookie ? LLVMBuildLoad2(g->b, g->i64, field(g, cty, cx, nslots + F_COOKIE), "")
			      : NULL;
	g->now = NULL;

	LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(g->ctx, fn, "for.body");
	g->exit_bb = LLVMAppendBasicBlockInContext(g->ctx, fn, "for.return");
	g->brk_bb = LLVMAppendBasicBlockInContext(g->ctx, fn, "for.break");
	g->cont_bb = LLVMAppendBasicBlockInContext(g->ctx, fn, "for.continue");

	const struct sema_node *vn = st->u.for_.var->sema;
	LLVMValueRef var = g->vars[vn->var_slot];
	if (range) {
		LLVMValueRef start =
			LLVMBuildLoad2(g->b, g->i64, field(g, cty, cx, nslots + F_START), "");
		LLVMBuildStore(g->b, LLVMBuildAdd(g->b, start, LLVMGetParam(fn, 0), ""), var);
	} else {
		fill_pair(g, st, var, &g->sp->vars[vn->var_slot].ty, LLVMGetParam(fn, 1),
			  LLVMGetParam(fn, 2));
	}
	LLVMBuildBr(g->b, body);
	LLVMPositionBuilderAtEnd(g->b, body);
	cg_block(g, st->u.for_.body);
	if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(g->b)))
		LLVMBuildBr(g->b, g->cont_bb);

	cg_set_loc(g, st->loc);
	LLVMPositionBuilderAtEnd(g->b, g->exit_bb);
	LLVMBuildStore(g->b, cg_const(g, 1), field(g, cty, cx, nslots + F_RETURNED));
	LLVMBuildRet(g->b, cg_const(g, 1)); /* stop the iteration */
	LLVMPositionBuilderAtEnd(g->b, g->brk_bb);
	LLVMBuildRet(g->b, cg_const(g, 1));
	LLVMPositionBuilderAtEnd(g->b, g->cont_bb);
	LLVMBuildRet(g->b, cg_const(g, 0));
	cg_scratch_end_function(g);
	free(g->vars);
	g->vars = outer;
	return fn;
}

void cg_for(struct cg *g, struct ast_node *st)
{
	const struct sema_node *sn = st->sema;
	int nslots = sn->nloop_slots;
	LLVMTypeRef *ft = xcalloc((size_t)(nslots + F_COUNT), sizeof(LLVMTypeRef));
	for (int i = 0; i < nslots + F_COUNT; i++)
		ft[i] = i < nslots + F_COOKIE ? g->ptr : g->i64;
	LLVMTypeRef cty = LLVMStructTypeInContext(g->ctx, ft, (unsigned)(nslots + F_COUNT), false);
	free(ft);
	/* buffers of the statement: loops one after another share the bytes */
	LLVMValueRef cx = cg_stack_temp(g, 8 * (nslots + F_COUNT)); /* the helpers want stack */
	const struct sema_node *vn = st->u.for_.var->sema;
	g->vars[vn->var_slot] = cg_str_alloca(g, g->sp->vars[vn->var_slot].ty.size);

	LLVMBasicBlockRef skip = NULL;
	LLVMValueRef count = NULL;
	if (st->u.for_.end) { /* start .. end, end excluded: nothing when end <= start */
		LLVMValueRef start = cg_expr(g, st->u.for_.iter);
		LLVMValueRef end = cg_expr(g, st->u.for_.end);
		LLVMBuildStore(g->b, start, field(g, cty, cx, nslots + F_START));
		count = LLVMBuildSub(g->b, end, start, "");
		LLVMBasicBlockRef run = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "range.run");
		skip = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "range.done");
		LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntSGT, count, cg_const(g, 0), ""), run,
				skip);
		LLVMPositionBuilderAtEnd(g->b, run);
	}
	for (int i = 0; i < nslots; i++)
		LLVMBuildStore(g->b, g->vars[sn->loop_slots[i]], field(g, cty, cx, i));
	LLVMBuildStore(g->b, g->ctx_arg, field(g, cty, cx, nslots + F_CTX));
	LLVMValueRef null = LLVMConstNull(g->ptr);
	LLVMBuildStore(g->b, g->depth ? g->depth : null, field(g, cty, cx, nslots + F_DEPTH));
	LLVMBuildStore(g->b, g->duration ? g->duration : null,
		       field(g, cty, cx, nslots + F_DURATION));
	LLVMBuildStore(g->b, g->oncpu ? g->oncpu : null, field(g, cty, cx, nslots + F_ONCPU));
	if (cg_has_sites(g))
		cg_cookie(g);
	LLVMBuildStore(g->b, g->cookie ? g->cookie : cg_const(g, 0),
		       field(g, cty, cx, nslots + F_COOKIE));
	LLVMBuildStore(g->b, cg_const(g, 0), field(g, cty, cx, nslots + F_RETURNED));

	/* the callback is made with the probe's state swapped out, then put back */
	struct cg outer = *g;
	LLVMBasicBlockRef at = LLVMGetInsertBlock(g->b);
	g->gomap_out = NULL; /* the probe's allocas are not the callback's */
	LLVMValueRef cb = callback(g, st, cty, nslots);
	g->fn = outer.fn;
	g->gomap_out = outer.gomap_out;
	g->di_sp = outer.di_sp;
	g->alloca_bb = outer.alloca_bb;
	g->scratch_slot = outer.scratch_slot;
	g->exit_bb = outer.exit_bb;
	g->brk_bb = outer.brk_bb;
	g->cont_bb = outer.cont_bb;
	g->ctx_arg = outer.ctx_arg;
	g->depth = outer.depth;
	g->duration = outer.duration;
	g->oncpu = outer.oncpu;
	g->cookie = outer.cookie;
	g->now = outer.now;
	LLVMPositionBuilderAtEnd(g->b, at);
	cg_set_loc(g, st->loc);

	if (count) {
		LLVMValueRef args[4] = {LLVMBuildTrunc(g->b, count, g->i32, ""), cb, cx,
					cg_const(g, 0)};
		args[0] = LLVMBuildZExt(g->b, args[0], g->i64, "");
		cg_helper(g, BPF_FUNC_loop, g->i64, args, 4);
	} else {
		const struct sema_node *mn = st->u.for_.iter->sema;
		LLVMValueRef args[4] = {g->maps[mn->map_id], cb, cx, cg_const(g, 0)};
		cg_helper(g, BPF_FUNC_for_each_map_elem, g->i64, args, 4);
	}
	LLVMValueRef returned =
		LLVMBuildLoad2(g->b, g->i64, field(g, cty, cx, nslots + F_RETURNED), "");
	LLVMBasicBlockRef after = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "for.done");
	LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntNE, returned, cg_const(g, 0), ""),
			g->exit_bb, after);
	if (skip) {
		LLVMPositionBuilderAtEnd(g->b, skip);
		LLVMBuildBr(g->b, after);
	}
	LLVMPositionBuilderAtEnd(g->b, after);
}
