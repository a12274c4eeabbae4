/* cg_maps: the script's @maps: definitions, keys, stores, reads and aggregations
 * (through runtime-bpf/gt_maps.c). */
#include "codegen/cg_int.h"

#include <stdio.h>
#include <string.h>

#include "common/util.h"

/* int gt_map_failed(u32 id, long err) (runtime-bpf/gt_runtime.h): counts the failed update
 * ERR of map ID, apart as full (E2BIG) or not, with the last other errno. Global, so the
 * verifier checks it once: a branch on ERR in the caller doubled the paths of every
 * update, and a while loop of a thousand of them ran past the 1M-instruction limit. */
/* Global BPF functions are verified once only if LLVM leaves the calls alone. */
static void no_inline(struct cg *g, LLVMValueRef fn)
{
	unsigned k = LLVMGetEnumAttributeKindForName("noinline", 8);
	LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(g->ctx, k, 0));
}

static void define_map_failed(struct cg *g)
{
	const struct cg_param params[2] = {{g->i32, g->di_u32, "id"}, {g->i64, g->di_u64, "err"}};
	cg_begin_function(g, "gt_map_failed", g->i32, g->di_int, params, 2, 1, false);
	no_inline(g, g->fn);
	cg_set_loc(g, (struct gt_loc){.line = 1, .col = 1});
	LLVMValueRef id = LLVMGetParam(g->fn, 0), err = LLVMGetParam(g->fn, 1);
	LLVMValueRef slot = cg_alloca(g, g->i32, "id.slot");
	LLVMBuildStore(g->b, id, slot);
	LLVMBasicBlockRef look = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "look");
	LLVMBasicBlockRef have = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "have");
	LLVMBasicBlockRef big = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "e2big");
	LLVMBasicBlockRef other = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "other");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "done");
	LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntNE, err, cg_const(g, 0), ""), look, done);
	LLVMPositionBuilderAtEnd(g->b, look);
	LLVMValueRef largs[2] = {g->map_full, slot};
	LLVMValueRef v = cg_helper(g, BPF_FUNC_map_lookup_elem, g->ptr, largs, 2);
	LLVMBuildCondBr(g->b, LLVMBuildIsNull(g->b, v, ""), done, have);
	/* Read as an int: before Linux 6.4 the errno comes back zero-extended (see insert()
	 * in runtime-bpf/gt_maps.c) */
	LLVMPositionBuilderAtEnd(g->b, have);
	LLVMValueRef e = LLVMBuildTrunc(g->b, err, g->i32, "");
	LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntEQ, e, LLVMConstInt(g->i32, (uint64_t)-7, true), ""), big, other);
	LLVMPositionBuilderAtEnd(g->b, big);
	LLVMBuildAtomicRMW(g->b, LLVMAtomicRMWBinOpAdd, v, cg_const(g, 1),
			   LLVMAtomicOrderingMonotonic, false);
	LLVMBuildBr(g->b, done);
	LLVMPositionBuilderAtEnd(g->b, other);
	LLVMBuildAtomicRMW(g->b, LLVMAtomicRMWBinOpAdd, cg_gep8(g, v, 8), cg_const(g, 1),
			   LLVMAtomicOrderingMonotonic, false);
	cg_store64(g, v, 16, LLVMBuildZExt(g->b, LLVMBuildNeg(g->b, e, ""), g->i64, ""));
	LLVMBuildBr(g->b, done);
	LLVMPositionBuilderAtEnd(g->b, done);
	LLVMBuildRet(g->b, LLVMConstInt(g->i32, 0, false));
}

static bool is_aggregation(enum plan_map_kind k)
{
	return k != PLAN_MAP_INT && k != PLAN_MAP_STR && k != PLAN_MAP_VALUE;
}

/* The update of aggregation map ID under KEY by V (runtime-bpf/gt_maps.c); NOW: tseries'
 * clock. A histogram's bucket is in KEY already. */
static void agg_update(struct cg *g, int id, LLVMValueRef key, LLVMValueRef v, LLVMValueRef now)
{
	const struct plan_map *m = &g->plan->maps[id];
	LLVMValueRef mid = LLVMConstInt(g->i32, (uint64_t)id, false);
	switch (m->kind) {
	case PLAN_MAP_AVG:
	case PLAN_MAP_STATS: {
		LLVMValueRef a[4] = {g->maps[id], key, v, mid};
		cg_runtime_call(g, "gt_agg_avg", a, 4);
		break;
	}
	case PLAN_MAP_MIN:
	case PLAN_MAP_MAX: {
		LLVMValueRef a[5] = {g->maps[id], key, v,
				     LLVMConstInt(g->i32, m->kind == PLAN_MAP_MAX, false), mid};
		cg_runtime_call(g, "gt_agg_minmax", a, 5);
		break;
	}
	case PLAN_MAP_TSERIES: {
		LLVMValueRef a[10] = {g->maps[id], key, cg_gep8(g, key, m->key_size - 8), v, now,
				      cg_const(g, m->tseries_interval), cg_const(g, m->tseries_num),
				      LLVMConstInt(g->i32, (uint64_t)m->tseries_agg, false),
				      LLVMConstInt(g->i32, m->value_signed, false), mid};
		cg_runtime_call(g, "gt_agg_tseries", a, 10);
		break;
	}
	default: { /* count, sum, hist, lhist */
		LLVMValueRef a[4] = {g->maps[id], key, v, mid};
		cg_runtime_call(g, "gt_agg_add", a, 4);
		break;
	}
	}
}

/* Keys up to this size are copied to the stack of a global update function. Larger
 * ones (a string key: 64 bytes) update inline: their copy, on top of the program's own
 * buffers, took a map-keyed-by-path probe past the verifier's 512 bytes of combined
 * stack on 6.18 (tutorial lesson 9). */
#define AGGFN_MAX_KEY 32

/* int gt_agg_ID(u8 (*key)[key_size], long v[, u64 now]): agg_update() as a global
 * function, for the reason gt_map_failed is one: the lookup's branch (present or not)
 * forked every iteration of a while loop, and verifying a loop of count() grew with its
 * square (800 iterations ran past the limit). The key is a nullable pointer to memory
 * for the verifier, which Linux 6.1's map helpers refuse ("R2 type=mem expected=fp,
 * ..."): it is copied to this function's stack first. */
static void define_aggfn(struct cg *g, int id)
{
	const struct plan_map *m = &g->plan->maps[id];
	LLVMMetadataRef sub = LLVMDIBuilderGetOrCreateSubrange(g->dib, 0, m->key_size);
	LLVMMetadataRef arr = LLVMDIBuilderCreateArrayType(g->dib, (uint64_t)m->key_size * 8, 8,
							   g->di_u8, &sub, 1);
	const struct cg_param params[3] = {
		{g->ptr, LLVMDIBuilderCreatePointerType(g->dib, arr, 64, 64, 0, NULL, 0), "key"},
		{g->i64, g->di_u64, "v"},
		{g->i64, g->di_u64, "now"}};
	char name[32];
	snprintf(name, sizeof(name), "gt_agg_%d", id);
	bool ts = m->kind == PLAN_MAP_TSERIES;
	g->aggfns[id] = cg_begin_function(g, name, g->i32, g->di_int, params, ts ? 3 : 2, 1, false);
	no_inline(g, g->fn);
	cg_set_loc(g, (struct gt_loc){.line = 1, .col = 1});
	LLVMValueRef key = LLVMGetParam(g->fn, 0);
	LLVMValueRef copy = cg_alloca(g, LLVMArrayType(g->i64, (unsigned)(m->key_size + 7) / 8),
				      "key.copy");
	LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "body");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "done");
	LLVMBuildCondBr(g->b, LLVMBuildIsNull(g->b, key, ""), done, body);
	LLVMPositionBuilderAtEnd(g->b, body);
	cg_copy(g, copy, key, m->key_size);
	agg_update(g, id, copy, LLVMGetParam(g->fn, 1), ts ? LLVMGetParam(g->fn, 2) : NULL);
	LLVMBuildBr(g->b, done);
	LLVMPositionBuilderAtEnd(g->b, done);
	LLVMBuildRet(g->b, LLVMConstInt(g->i32, 0, false));
}

void cg_define_script_maps(struct cg *g)
{
	const struct gt_plan *plan = g->plan;
	g->maps = xcalloc((size_t)plan->nmaps + 1, sizeof(LLVMValueRef));
	for (int i = 0; i < plan->nmaps; i++) {
		const struct plan_map *m = &plan->maps[i];
		enum bpf_map_type t = m->percpu ? (m->lru ? BPF_MAP_TYPE_LRU_PERCPU_HASH
							    : BPF_MAP_TYPE_PERCPU_HASH)
						: (m->lru ? BPF_MAP_TYPE_LRU_HASH : BPF_MAP_TYPE_HASH);
		g->maps[i] = cg_define_map_sized(g, m->bpf_name, t, m->max_entries,
						 (unsigned)m->key_size,
						 (unsigned)((m->value_size + 7) & ~7));
	}
	if (plan->nmaps) {
		g->map_full = cg_define_map_sized(g, PLAN_MAP_FULL, BPF_MAP_TYPE_ARRAY,
						  (unsigned)plan->nmaps, 4, 24);
		define_map_failed(g);
	}
	g->aggfns = xcalloc((size_t)plan->nmaps + 1, sizeof(LLVMValueRef));
	for (int i = 0; i < plan->nmaps; i++)
		if (is_aggregation(plan->maps[i].kind) && plan->maps[i].key_size <= AGGFN_MAX_KEY)
			define_aggfn(g, i);
	g->stackmaps = xcalloc((size_t)plan->nstackmaps + 1, sizeof(LLVMValueRef));
	for (int i = 0; i < plan->nstackmaps; i++)
		g->stackmaps[i] = cg_define_map_sized(g, plan->stackmaps[i].bpf_name,
						      BPF_MAP_TYPE_STACK_TRACE, CG_STACK_ENTRIES, 4,
						      (unsigned)plan->stackmaps[i].kdepth * 8);
	g->uwmaps = xcalloc((size_t)plan->nstackmaps + 1, sizeof(LLVMValueRef));
	if (!plan->nunwind)
		return;
	g->uwtab = cg_define_map_sized(g, GT_MAP_UNWIND_TAB, BPF_MAP_TYPE_ARRAY,
				       (unsigned)plan->nunwind + 1, 4, sizeof(struct plan_sprow));
	g->uwscratch = cg_define_map_sized(g, GT_MAP_UNWIND_SCRATCH, BPF_MAP_TYPE_PERCPU_ARRAY, 1, 4,
					   GT_UNWIND_DEPTH * 8);
	{
		_Static_assert(sizeof(struct gt_uwtarget) == GT_UWTARGET_WORDS * 8,
			       "struct gt_uwtarget is no longer all u64");
		uint64_t w[GT_UWTARGET_WORDS];
		LLVMValueRef c[GT_UWTARGET_WORDS];
		memcpy(w, &plan->unwind_rt, sizeof(w));
		for (int i = 0; i < GT_UWTARGET_WORDS; i++)
			c[i] = LLVMConstInt(g->i64, w[i], false);
		g->uwtarget = LLVMAddGlobal(g->mod, LLVMArrayType(g->i64, GT_UWTARGET_WORDS),
					    "gt_uwtarget");
		LLVMSetInitializer(g->uwtarget, LLVMConstArray(g->i64, c, GT_UWTARGET_WORDS));
		LLVMSetGlobalConstant(g->uwtarget, true);
		LLVMSetLinkage(g->uwtarget, LLVMPrivateLinkage);
	}
	for (int i = 0; i < plan->nstackmaps; i++) {
		const struct plan_stackmap *m = &plan->stackmaps[i];
		if (m->kernel)
			continue;
		char name[128];
		snprintf(name, sizeof(name), "%s%s", m->bpf_name, GT_UNWIND_SUFFIX);
		g->uwmaps[i] = cg_define_map_sized(g, name, BPF_MAP_TYPE_HASH, CG_STACK_ENTRIES, 8,
						   (unsigned)m->kdepth * 8);
	}
}

/* The key of @m[k...] in a zeroed stack buffer (the bucket slot, if any, is last). */
static LLVMValueRef build_key(struct cg *g, struct ast_node *mn, const struct plan_map *m)
{
	LLVMValueRef key = cg_str_alloca(g, m->key_size);
	cg_zero(g, key, m->key_size, 8);
	struct ast_list *keys = &mn->u.map.keys;
	for (int i = 0; i < keys->n && i < m->nkeys; i++) {
		const struct plan_arg *f = &m->keys[i];
		if (f->kind == PLAN_ARG_GO) /* a Go interface: what %v shows of it */
			cg_go_key(g, keys->v[i], cg_gep8(g, key, f->offset), f);
		else if (f->kind == PLAN_ARG_STR || f->kind == PLAN_ARG_BUF || f->kind == PLAN_ARG_INET ||
		    f->kind == PLAN_ARG_STACK || f->kind == PLAN_ARG_SYM)
			cg_str_into(g, keys->v[i], cg_gep8(g, key, f->offset), f->size);
		else
			cg_store64(g, key, f->offset, cg_expr(g, keys->v[i]));
	}
	return key;
}

static const struct plan_map *map_of(struct cg *g, struct ast_node *mn, int *id)
{
	*id = ((const struct sema_node *)mn->sema)->map_id;
	return &g->plan->maps[*id];
}

static LLVMValueRef lookup(struct cg *g, int id, LLVMValueRef key)
{
	LLVMValueRef args[2] = {g->maps[id], key};
	return cg_helper(g, BPF_FUNC_map_lookup_elem, g->ptr, args, 2);
}

/* bpf_map_update_elem; a failure is counted (full, or another errno) by gt_map_failed,
 * called on every update: a branch here would fork the verifier's paths. */
static void update(struct cg *g, int id, LLVMValueRef key, LLVMValueRef val)
{
	LLVMValueRef args[4] = {g->maps[id], key, val, cg_const(g, 0 /* BPF_ANY */)};
	LLVMValueRef r = cg_helper(g, BPF_FUNC_map_update_elem, g->i64, args, 4);
	LLVMValueRef fargs[2] = {LLVMConstInt(g->i32, (uint64_t)id, false), r};
	cg_runtime_call(g, "gt_map_failed", fargs, 2);
}

/* The i64 at byte OFF of the value under KEY in MAP, or 0 when the key is absent. */
static LLVMValueRef load_at_or_zero(struct cg *g, LLVMValueRef map, LLVMValueRef key, int off)
{
	LLVMValueRef largs[2] = {map, key};
	LLVMValueRef p = cg_helper(g, BPF_FUNC_map_lookup_elem, g->ptr, largs, 2);
	LLVMValueRef res = cg_alloca(g, g->i64, "mapval");
	LLVMBuildStore(g->b, cg_const(g, 0), res);
	LLVMBasicBlockRef have = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "map.have");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "map.read");
	LLVMBuildCondBr(g->b, LLVMBuildIsNull(g->b, p, ""), done, have);
	LLVMPositionBuilderAtEnd(g->b, have);
	LLVMValueRef v = LLVMBuildLoad2(g->b, g->i64, cg_gep8(g, p, off), "");
	LLVMSetAlignment(v, 8);
	LLVMBuildStore(g->b, v, res);
	LLVMBuildBr(g->b, done);
	LLVMPositionBuilderAtEnd(g->b, done);
	return LLVMBuildLoad2(g->b, g->i64, res, "");
}

LLVMValueRef cg_load_or_zero(struct cg *g, LLVMValueRef map, LLVMValueRef key)
{
	return load_at_or_zero(g, map, key, 0);
}

LLVMValueRef cg_config(struct cg *g, int field)
{
	LLVMValueRef key = cg_alloca(g, g->i32, "key");
	LLVMBuildStore(g->b, LLVMConstInt(g->i32, 0, false), key);
	return load_at_or_zero(g, g->map_config, key, 8 * field);
}

void cg_config_set(struct cg *g, int field, LLVMValueRef v)
{
	LLVMValueRef key = cg_alloca(g, g->i32, "key");
	LLVMBuildStore(g->b, LLVMConstInt(g->i32, 0, false), key);
	LLVMValueRef largs[2] = {g->map_config, key};
	LLVMValueRef p = cg_helper(g, BPF_FUNC_map_lookup_elem, g->ptr, largs, 2);
	LLVMBasicBlockRef have = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "cfg.have");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "cfg.set");
	LLVMBuildCondBr(g->b, LLVMBuildIsNull(g->b, p, ""), done, have);
	LLVMPositionBuilderAtEnd(g->b, have);
	LLVMValueRef st = LLVMBuildStore(g->b, v, cg_gep8(g, p, 8 * field));
	LLVMSetAlignment(st, 8);
	LLVMBuildBr(g->b, done);
	LLVMPositionBuilderAtEnd(g->b, done);
}

static LLVMValueRef read_int(struct cg *g, int id, LLVMValueRef key)
{
	return cg_load_or_zero(g, g->maps[id], key);
}

static void aggregate(struct cg *g, int id, const struct plan_map *m, struct ast_node *mn,
		      struct ast_node *call)
{
	struct ast_node **args = call->u.call.args.v;
	LLVMValueRef v = m->kind == PLAN_MAP_COUNT ? cg_const(g, 1) : cg_expr(g, args[0]);
	LLVMValueRef key = build_key(g, mn, m);
	LLVMValueRef a[3] = {key, v, NULL};
	int n = 2;
	switch (m->kind) {
	case PLAN_MAP_HIST:
	case PLAN_MAP_LHIST: {
		LLVMValueRef b;
		if (m->kind == PLAN_MAP_HIST) {
			LLVMValueRef hk[2] = {v, cg_const(g, (uint64_t)m->hist_bits)};
			b = m->hist_bits ? cg_runtime_call(g, "gt_hist_bucket_k", hk, 2)
					 : cg_runtime_call(g, "gt_hist_bucket", &v, 1);
		} else {
			LLVMValueRef la[4] = {v, cg_const(g, (uint64_t)m->lhist_min),
					      cg_const(g, (uint64_t)m->lhist_max),
					      cg_const(g, (uint64_t)m->lhist_step)};
			b = cg_runtime_call(g, "gt_lhist_bucket", la, 4);
		}
		cg_store64(g, key, m->key_size - 8, b);
		a[1] = cg_const(g, 1);
		break;
	}
	case PLAN_MAP_TSERIES:
		/* bpftrace's clock for tseries is TAI (its sw_tai); its tests set the time
		 * through a map instead (BPFTRACE_DUMMY_TS_MAP) */
		if (m->ts_map >= 0) {
			LLVMValueRef zero = cg_alloca(g, g->i64, "tskey");
			LLVMBuildStore(g->b, cg_const(g, 0), zero);
			a[2] = cg_load_or_zero(g, g->maps[m->ts_map], zero);
		} else {
			a[2] = cg_helper(g, BPF_FUNC_ktime_get_tai_ns, g->i64, NULL, 0);
		}
		n = 3;
		break;
	default:
		if (!is_aggregation(m->kind))
			cg_internal_error(g, call, "an aggregation into a plain map");
	}
	LLVMValueRef fn = g->aggfns[id];
	if (fn) /* else a long key, updated inline: its copy could overrun the 512-byte stack */
		LLVMBuildCall2(g->b, LLVMGlobalGetValueType(fn), fn, a, (unsigned)n, "");
	else
		agg_update(g, id, key, a[1], a[2]);
}

void cg_map_assign(struct cg *g, struct ast_node *st)
{
	struct ast_node *mn = st->u.assign.lhs, *rhs = st->u.assign.rhs;
	int id;
	const struct plan_map *m = map_of(g, mn, &id);
	if (is_aggregation(m->kind)) {
		aggregate(g, id, m, mn, rhs);
		return;
	}
	if (m->kind == PLAN_MAP_STR || m->kind == PLAN_MAP_VALUE) {
		int vsize = (m->value_size + 7) & ~7;
		LLVMValueRef val = cg_str_alloca(g, vsize);
		cg_zero(g, val, vsize, 8);
		if (m->kind == PLAN_MAP_VALUE && mn->ty->kind == TY_TUPLE)
			cg_tuple_into(g, rhs, val, mn->ty); /* sema made mn->ty the map's type */
		else if (m->kind == PLAN_MAP_VALUE && mn->ty->kind == TY_STRUCT)
			cg_struct_into(g, rhs, val); /* the struct's bytes from memory */
		else if (m->kind == PLAN_MAP_VALUE && !gt_type_is_bytes(mn->ty))
			cg_store64(g, val, 0, cg_expr(g, rhs)); /* strftime, strerror: 8 bytes */
		else
			cg_str_into(g, rhs, val,
				    rhs->ty->size < m->value_size ? rhs->ty->size : m->value_size);
		update(g, id, build_key(g, mn, m), val);
		return;
	}
	LLVMValueRef v = cg_expr(g, rhs);
	LLVMValueRef key = build_key(g, mn, m);
	if (st->u.assign.op == OP_ADD || st->u.assign.op == OP_SUB)
		v = cg_ptr_step(g, mn->ty, v); /* a map of pointers: n elements on */
	if (st->u.assign.op) /* map values are signed, as bpftrace's */
		v = cg_arith(g, st, st->u.assign.op, read_int(g, id, key), true, v,
			     rhs->ty->is_signed);
	LLVMValueRef slot = cg_alloca(g, g->i64, "mapnew");
	LLVMBuildStore(g->b, v, slot);
	update(g, id, key, slot);
}

LLVMValueRef cg_map_incdec(struct cg *g, struct ast_node *e)
{
	struct ast_node *mn = e->u.incdec.operand;
	int id;
	const struct plan_map *m = map_of(g, mn, &id);
	LLVMValueRef key = build_key(g, mn, m);
	LLVMValueRef old = read_int(g, id, key);
	LLVMValueRef one = cg_ptr_step(g, mn->ty, cg_const(g, 1));
	LLVMValueRef nv = e->u.incdec.inc ? LLVMBuildAdd(g->b, old, one, "")
					  : LLVMBuildSub(g->b, old, one, "");
	LLVMValueRef slot = cg_alloca(g, g->i64, "mapnew");
	LLVMBuildStore(g->b, nv, slot);
	update(g, id, key, slot);
	return e->u.incdec.prefix ? nv : old;
}

LLVMValueRef cg_agg_read(struct cg *g, int id, const struct plan_map *m, LLVMValueRef key)
{
	static const enum gt_agg_read how[] = {
		[PLAN_MAP_COUNT] = GT_AGG_READ_SUM, [PLAN_MAP_SUM] = GT_AGG_READ_SUM,
		[PLAN_MAP_MIN] = GT_AGG_READ_MIN,   [PLAN_MAP_MAX] = GT_AGG_READ_MAX,
		[PLAN_MAP_AVG] = GT_AGG_READ_AVG,
	};
	LLVMValueRef args[4] = {g->maps[id], key,
				LLVMConstInt(g->i32, (uint64_t)how[m->kind], false),
				LLVMBuildTrunc(g->b, cg_config(g, 2 /* ncpus */), g->i32, "")};
	return cg_runtime_call(g, "gt_agg_read", args, 4);
}

LLVMValueRef cg_map_read(struct cg *g, struct ast_node *e)
{
	int id;
	const struct plan_map *m = map_of(g, e, &id);
	LLVMValueRef key = build_key(g, e, m);
	if (m->percpu) /* count(), sum(), min(), max(), avg(): sema lets only these through */
		return cg_agg_read(g, id, m, key);
	if (e->sema && ((const struct sema_node *)e->sema)->err_event) /* -kk: a missing key */
		cg_helper_check(g, e, LLVMBuildIsNull(g->b, lookup(g, id, key), ""), cg_const(g, 0));
	if (m->kind == PLAN_MAP_INT ||
	    (m->kind == PLAN_MAP_VALUE && (e->ty->kind == TY_STRFTIME || e->ty->kind == TY_STRERROR ||
					   e->ty->kind == TY_USERNAME || e->ty->kind == TY_SITE_PROBE ||
					   e->ty->kind == TY_SITE_FUNC || e->ty->kind == TY_CGROUP_PATH)))
		return read_int(g, id, key);
	/* string: copy out, or "" when absent */
	int size = e->ty->size;
	LLVMValueRef buf = cg_str_alloca(g, size);
	cg_zero(g, buf, size, 8);
	LLVMValueRef p = lookup(g, id, key);
	LLVMBasicBlockRef have = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "map.have");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "map.read");
	LLVMBuildCondBr(g->b, LLVMBuildIsNull(g->b, p, ""), done, have);
	LLVMPositionBuilderAtEnd(g->b, have);
	int n = size < m->value_size ? size : m->value_size;
	cg_copy(g, buf, p, n);
	LLVMBuildBr(g->b, done);
	LLVMPositionBuilderAtEnd(g->b, done);
	return buf;
}

LLVMValueRef cg_map_delete(struct cg *g, struct ast_node *call)
{
	struct ast_node *mn = call->u.call.args.v[0];
	int id;
	const struct plan_map *m = map_of(g, mn, &id);
	LLVMValueRef key = build_key(g, mn, m);
	LLVMValueRef args[2] = {g->maps[id], key};
	if (m->kind != PLAN_MAP_HIST && m->kind != PLAN_MAP_LHIST) {
		LLVMValueRef r = cg_helper(g, BPF_FUNC_map_delete_elem, g->i64, args, 2);
		LLVMValueRef failed = LLVMBuildICmp(g->b, LLVMIntNE, r, cg_const(g, 0), "");
		cg_helper_check(g, call, failed, r);
		return LLVMBuildZExt(g->b, LLVMBuildNot(g->b, failed, ""), g->i64, "");
	}
	/* a hist key is one map key per bucket: delete every bucket (a bounded loop) */
	uint64_t nb = m->kind == PLAN_MAP_HIST
			      ? (uint64_t)plan_hist_buckets(m)
			      : 2 + ((uint64_t)m->lhist_max - (uint64_t)m->lhist_min) /
					    (uint64_t)m->lhist_step;
	LLVMValueRef i = cg_alloca(g, g->i64, "bucket");
	LLVMBuildStore(g->b, cg_const(g, 0), i);
	LLVMBasicBlockRef cond = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "del.cond");
	LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "del.body");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "del.done");
	LLVMBuildBr(g->b, cond);
	LLVMPositionBuilderAtEnd(g->b, cond);
	LLVMValueRef cur = LLVMBuildLoad2(g->b, g->i64, i, "");
	LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntULT, cur, cg_const(g, nb), ""), body,
			done);
	LLVMPositionBuilderAtEnd(g->b, body);
	cg_store64(g, key, m->key_size - 8, cur);
	cg_helper(g, BPF_FUNC_map_delete_elem, g->i64, args, 2);
	LLVMBuildStore(g->b, LLVMBuildAdd(g->b, cur, cg_const(g, 1), ""), i);
	LLVMBuildBr(g->b, cond);
	LLVMPositionBuilderAtEnd(g->b, done);
	return cg_const(g, 1); /* the buckets there were are gone */
}

LLVMValueRef cg_map_has(struct cg *g, struct ast_node *mn)
{
	int id;
	const struct plan_map *m = map_of(g, mn, &id);
	LLVMValueRef p = lookup(g, id, build_key(g, mn, m));
	return LLVMBuildZExt(g->b, LLVMBuildIsNotNull(g->b, p, ""), g->i64, "");
}
