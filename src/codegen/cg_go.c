/* cg_go: Go values named through args / rets (sema_goref): words read from the
 * registers a value arrived in or from user memory (the stack, a pointee, a slice
 * element), Go strings as text, len() / cap(), and print()'s %+v capture. A read that
 * fails (a nil pointer, an index out of range: address 0) gives 0. */
#include "codegen/cg_int.h"

#include <stddef.h>
#include <string.h>


/* Where the parts of a captured value come from: REGS (a parameter's registers, OFF
 * into it) or memory at ADDR + OFF. */
struct gosrc {
	const struct sema_goref *regs;
	LLVMValueRef addr;
	int64_t off;
};

static const struct sema_goref *ref_of(const struct ast_node *e)
{
	return ((const struct sema_node *)e->sema)->go;
}

static LLVMValueRef read_mem(struct cg *g, LLVMValueRef addr, int size, bool is_signed)
{
	int n = size > 0 && size <= 8 ? size : 8;
	LLVMValueRef args[2] = {addr, LLVMConstInt(g->i32, (uint64_t)n, false)};
	return cg_narrow(g, cg_runtime_call(g, "gt_read_uint", args, 2), n, is_signed);
}

/* SIZE bytes at offset OFF of a parameter that arrived in registers R: the register of
 * the piece there (its unused high bits are not zeroed by Go: narrowed), else 0. */
static LLVMValueRef read_regs(struct cg *g, const struct sema_goref *r, int64_t off, int size,
			      bool is_signed)
{
	for (int i = 0; i < r->nregs; i++) {
		const struct sema_goword *w = &r->regs[i];
		if (w->off != off)
			continue;
		if (w->regs_off < 0)
			return cg_const(g, 0);
		int n = size < w->size ? size : w->size;
		return cg_narrow(g, cg_load_reg(g, w->regs_off), n > 0 ? n : 8, is_signed);
	}
	return cg_const(g, 0);
}

static LLVMValueRef src_word(struct cg *g, const struct gosrc *s, int64_t off, int size,
			     bool is_signed)
{
	if (s->regs)
		return read_regs(g, s->regs, s->off + off, size, is_signed);
	LLVMValueRef a = LLVMBuildAdd(g->b, s->addr, cg_const(g, (uint64_t)(s->off + off)), "");
	return read_mem(g, a, size, is_signed);
}

static LLVMValueRef ref_addr(struct cg *g, const struct sema_goref *r);
static LLVMValueRef walk_const(struct cg *g, const struct gt_gomap *walk);
static struct gosrc ref_src(struct cg *g, const struct sema_goref *r);

/* m[KEY]: the address of its value (runtime-bpf/gt_gomap.c), 0 when not found. */
static LLVMValueRef map_value_addr(struct cg *g, const struct sema_goref *r)
{
	const struct sema_goref *br = ref_of(r->base);
	struct gosrc s = ref_src(g, br);
	LLVMValueRef map = src_word(g, &s, 0, 8, false);
	LLVMTypeRef ptr = LLVMPointerTypeInContext(g->ctx, 0);
	LLVMValueRef kint = cg_const(g, 0), key = LLVMConstPointerNull(ptr);
	int klen = 0;
	if (r->map_key == GT_GOMAP_FIND_INT) {
		kint = cg_expr(g, r->index);
	} else { /* a constant string, zero-padded, as a private global */
		char buf[GT_GOMAP_KEYMAX] = {0};
		klen = r->index->u.str.len;
		memcpy(buf, r->index->u.str.bytes, (size_t)klen);
		LLVMValueRef init = LLVMConstStringInContext(g->ctx, buf, sizeof(buf), true);
		key = LLVMAddGlobal(g->mod, LLVMTypeOf(init), "gt_gomap_key");
		LLVMSetInitializer(key, init);
		LLVMSetGlobalConstant(key, true);
		LLVMSetLinkage(key, LLVMPrivateLinkage);
	}
	LLVMValueRef args[8] = {walk_const(g, r->map),
				map,
				LLVMConstInt(g->i32, (uint64_t)r->map_key, false),
				kint,
				LLVMConstInt(g->i32, (uint64_t)r->key_size, false),
				key,
				LLVMConstInt(g->i32, (uint64_t)klen, false),
				LLVMConstInt(g->i32, r->val_indirect, false)};
	return cg_runtime_call(g, "gt_go_map_find", args, 8);
}

/* The source of the value R names: its registers, or memory at its address. */
static struct gosrc ref_src(struct cg *g, const struct sema_goref *r)
{
	if (r->where == GW_REGS)
		return (struct gosrc){.regs = r, .off = r->off};
	return (struct gosrc){.addr = ref_addr(g, r)};
}

/* The address of a value in memory. */
static LLVMValueRef ref_addr(struct cg *g, const struct sema_goref *r)
{
	LLVMValueRef off = cg_const(g, (uint64_t)r->off);
	switch (r->where) {
	case GW_STACK:
		return LLVMBuildAdd(g->b, cg_load_reg(g, arch_role_off[ARCH_SP]), off, "");
	case GW_PTR:
		return LLVMBuildAdd(g->b, cg_expr(g, r->base), off, "");
	case GW_ELEM: {
		const struct sema_goref *br = ref_of(r->base);
		LLVMValueRef data, len;
		if (r->count) { /* an array in memory */
			data = ref_addr(g, br);
			len = cg_const(g, (uint64_t)r->count);
		} else { /* a slice: {data, len, cap} */
			struct gosrc s = ref_src(g, br);
			data = src_word(g, &s, 0, 8, false);
			len = src_word(g, &s, 8, 8, false);
		}
		LLVMValueRef i = cg_expr(g, r->index);
		LLVMValueRef in = LLVMBuildICmp(g->b, LLVMIntULT, i, len, "inrange");
		LLVMValueRef a = LLVMBuildAdd(
		    g->b, data, LLVMBuildMul(g->b, i, cg_const(g, (uint64_t)r->stride), ""), "");
		return LLVMBuildSelect(g->b, in, LLVMBuildAdd(g->b, a, off, ""), cg_const(g, 0), "");
	}
	case GW_MAPVAL: {
		LLVMValueRef a = map_value_addr(g, r);
		LLVMValueRef none = LLVMBuildICmp(g->b, LLVMIntEQ, a, cg_const(g, 0), "");
		return LLVMBuildSelect(g->b, none, a, LLVMBuildAdd(g->b, a, off, ""), "");
	}
	case GW_REGS:
		break;
	}
	return cg_const(g, 0); /* a value in registers has no address (sema keeps it so) */
}

LLVMValueRef cg_go_value(struct cg *g, struct ast_node *e)
{
	const struct sema_goref *r = ref_of(e);
	struct gosrc s = ref_src(g, r);
	return src_word(g, &s, 0, r->size > 8 ? 8 : r->size, r->is_signed);
}

void cg_go_str_into(struct cg *g, struct ast_node *e, LLVMValueRef dst, int size)
{
	struct gosrc s = ref_src(g, ref_of(e));
	LLVMValueRef args[4] = {dst, LLVMConstInt(g->i32, (uint64_t)size, false),
				src_word(g, &s, 0, 8, false), src_word(g, &s, 8, 8, true)};
	cg_runtime_call(g, "gt_read_gotext", args, 4);
}

LLVMValueRef cg_go_len(struct cg *g, struct ast_node *call, bool cap)
{
	const struct sema_node *sn = call->sema;
	struct ast_node *a = call->u.call.args.v[0];
	const struct sema_goref *r = ref_of(a);
	if (sn->const_val >= 0) /* an array */
		return cg_const(g, (uint64_t)sn->const_val);
	struct gosrc s = ref_src(g, r);
	if (r->kind == GV_MAP || r->kind == GV_CHAN) {
		/* hmap.count / the swiss Map.used, hchan.qcount; hchan.dataqsiz after it */
		LLVMValueRef p = src_word(g, &s, 0, 8, false);
		return read_mem(g, LLVMBuildAdd(g->b, p, cg_const(g, cap ? 8 : 0), ""), 8, true);
	}
	return src_word(g, &s, cap ? 16 : 8, 8, true); /* string {ptr, len}; slice + cap */
}

static void text(struct cg *g, LLVMValueRef dst, int size, LLVMValueRef ptr, LLVMValueRef len)
{
	LLVMValueRef args[4] = {dst, LLVMConstInt(g->i32, (uint64_t)size, false), ptr, len};
	cg_runtime_call(g, "gt_read_bytes", args, 4);
}

/* A string's text, where the words are known to be one: the length to keep, 0 when the
 * text could not be read (gt_read_gotext). */
static LLVMValueRef gotext(struct cg *g, LLVMValueRef dst, int size, LLVMValueRef ptr,
			   LLVMValueRef len)
{
	LLVMValueRef args[4] = {dst, LLVMConstInt(g->i32, (uint64_t)size, false), ptr, len};
	return cg_runtime_call(g, "gt_read_gotext", args, 4);
}

/* WALK as a private constant (the BPF side reads it, folded at O2). */
static LLVMValueRef walk_const(struct cg *g, const struct gt_gomap *walk)
{
	enum { N = sizeof(*walk) / sizeof(__u32) };
	_Static_assert(sizeof(struct gt_gomap) == N * sizeof(__u32), "gt_gomap: u32s only");
	__u32 w[N];
	LLVMValueRef v[N];
	memcpy(w, walk, sizeof(w));
	for (int i = 0; i < N; i++)
		v[i] = LLVMConstInt(g->i32, w[i], false);
	LLVMTypeRef ty = LLVMArrayType(g->i32, N);
	LLVMValueRef gv = LLVMAddGlobal(g->mod, ty, "gt_gomap");
	LLVMSetInitializer(gv, LLVMConstArray(g->i32, v, N));
	LLVMSetGlobalConstant(gv, true);
	LLVMSetLinkage(gv, LLVMPrivateLinkage);
	return gv;
}

static void capture(struct cg *g, const struct plan_arg *a, const struct gosrc *s, LLVMValueRef dst);

/* A map: the count, then the entries gt_go_map_walk finds, each key and value copied
 * from its slot (an entry not found: address 0, zeros). */
static void capture_map(struct cg *g, const struct plan_arg *a, LLVMValueRef m, LLVMValueRef p)
{
	const struct gt_gomap *w = a->go_map;
	LLVMTypeRef aty = LLVMArrayType(g->i64, 2 * GT_GOMAP_MAX);
	if (!g->gomap_out) /* one for every walk: the stack is 512 bytes */
		g->gomap_out = cg_alloca(g, aty, "mapents");
	LLVMValueRef out = g->gomap_out;
	LLVMValueRef n = cg_const(g, 0);
	if (a->go_max > 0) { /* else its count only (sema_gocap.c's map_layout) */
		LLVMValueRef args[3] = {walk_const(g, w), m, out};
		n = LLVMBuildZExt(g->b, cg_runtime_call(g, "gt_go_map_walk", args, 3), g->i64, "");
	}
	LLVMValueRef cnt = read_mem(g, LLVMBuildAdd(g->b, m, cg_const(g, w->count_off), ""), 8, true);
	LLVMValueRef nil = LLVMBuildICmp(g->b, LLVMIntEQ, m, cg_const(g, 0), "");
	cg_store64(g, p, 0, LLVMBuildSelect(g->b, nil, cg_const(g, 0), cnt, ""));
	cg_store64(g, p, 8, n);
	for (int i = 0; i < a->go_max; i++) {
		LLVMValueRef ent = cg_gep8(g, p, 16 + i * a->go_stride);
		for (int kv = 0; kv < 2; kv++) {
			LLVMValueRef idx[2] = {cg_const(g, 0), cg_const(g, (uint64_t)(2 * i + kv))};
			LLVMValueRef slot = LLVMBuildGEP2(g->b, aty, out, idx, 2, "");
			struct gosrc at = {.addr = LLVMBuildLoad2(g->b, g->i64, slot, "")};
			capture(g, &a->fields[kv], &at, ent);
		}
	}
}

/* The dynamic type of the interface at OFF of S: interface{} holds it, others hold the
 * itab, whose type is its second word; REBASE: as linked (nil stays nil). */
static LLVMValueRef iface_type(struct cg *g, const struct gosrc *s, int64_t off, bool empty,
			       bool rebase)
{
	LLVMValueRef w0 = src_word(g, s, off, 8, false);
	LLVMValueRef ty = empty ? w0 : read_mem(g, LLVMBuildAdd(g->b, w0, cg_const(g, 8), ""), 8, false);
	if (rebase)
		ty = LLVMBuildSelect(g->b, LLVMBuildICmp(g->b, LLVMIntEQ, ty, cg_const(g, 0), ""), ty,
				     LLVMBuildSub(g->b, ty, cg_site_bias(g), ""), "");
	return ty;
}

static LLVMValueRef add(struct cg *g, LLVMValueRef v, int64_t n)
{
	return LLVMBuildAdd(g->b, v, cg_const(g, (uint64_t)n), "");
}

/* OFF of the types plan.gotypes shows as SHOW, for the type TY (as linked): OFF + 1
 * where TY is one, else 0 (none: then every read it leads to is at address 0). */
static LLVMValueRef type_off(struct cg *g, LLVMValueRef ty, enum plan_goshow show, int which)
{
	LLVMValueRef v = cg_const(g, 0);
	for (int i = 0; i < g->plan->ngotypes; i++) {
		const struct plan_gotype *t = &g->plan->gotypes[i];
		if (t->show != show || t->off[which] < 0)
			continue;
		LLVMValueRef is = LLVMBuildICmp(g->b, LLVMIntEQ, ty, cg_const(g, t->addr), "");
		v = LLVMBuildSelect(g->b, is, cg_const(g, (uint64_t)t->off[which] + 1), v, "");
	}
	return v;
}

/* DATA + OFF - 1 for a type_off() result, else 0 */
static LLVMValueRef at_off(struct cg *g, LLVMValueRef data, LLVMValueRef off1)
{
	LLVMValueRef none = LLVMBuildICmp(g->b, LLVMIntEQ, off1, cg_const(g, 0), "");
	LLVMValueRef a = LLVMBuildSub(g->b, LLVMBuildAdd(g->b, data, off1, ""), cg_const(g, 1), "");
	return LLVMBuildSelect(g->b, none, cg_const(g, 0), a, "");
}

/* The type (as linked, 0 for nil) and data word of the non-empty interface (error,
 * net.Addr) at AT. */
static LLVMValueRef nested_iface(struct cg *g, LLVMValueRef at, LLVMValueRef *data)
{
	LLVMValueRef itab = read_mem(g, at, 8, false);
	*data = read_mem(g, add(g, at, 8), 8, false);
	LLVMValueRef nil = LLVMBuildICmp(g->b, LLVMIntEQ, itab, cg_const(g, 0), "");
	LLVMValueRef ty = read_mem(g, LLVMBuildSelect(g->b, nil, cg_const(g, 0), add(g, itab, 8), ""),
				   8, false);
	LLVMValueRef zero = LLVMBuildICmp(g->b, LLVMIntEQ, ty, cg_const(g, 0), "");
	return LLVMBuildSelect(g->b, zero, ty, LLVMBuildSub(g->b, ty, cg_site_bias(g), ""), "");
}

/* A net.Addr interface at AT (0: none) into DST: its type, its IP's length and bytes
 * (4 or 16), its port. */
static void capture_addr(struct cg *g, LLVMValueRef at, LLVMValueRef dst)
{
	LLVMValueRef data;
	LLVMValueRef ty = nested_iface(g, at, &data);
	LLVMValueRef ipf = at_off(g, data, type_off(g, ty, PGS_NETADDR, PGO_IP));
	LLVMValueRef ipp = read_mem(g, ipf, 8, false), len = read_mem(g, add(g, ipf, 8), 8, true);
	LLVMValueRef is16 = LLVMBuildICmp(g->b, LLVMIntEQ, len, cg_const(g, 16), "");
	LLVMValueRef is4 = LLVMBuildICmp(g->b, LLVMIntEQ, len, cg_const(g, 4), "");
	LLVMValueRef lo = read_mem(g, LLVMBuildSelect(g->b, is16, ipp, cg_const(g, 0), ""), 8, false);
	LLVMValueRef hi = read_mem(g, LLVMBuildSelect(g->b, is16, add(g, ipp, 8), cg_const(g, 0), ""),
				   8, false);
	LLVMValueRef v4 = read_mem(g, LLVMBuildSelect(g->b, is4, ipp, cg_const(g, 0), ""), 4, false);
	cg_store64(g, dst, 0, ty);
	cg_store64(g, dst, 8, len);
	cg_store64(g, dst, 16, LLVMBuildSelect(g->b, is4, v4, lo, ""));
	cg_store64(g, dst, 24, hi);
	cg_store64(g, dst, 32, read_mem(g, at_off(g, data, type_off(g, ty, PGS_NETADDR, PGO_PORT)),
					8, true));
}

/* An error and the ones it wraps (plan_err_level's layout), from its type TY (as
 * linked) and data word: each level's words at data (a wrapper's first string instead),
 * and what its wrapper type holds. */
static void capture_error(struct cg *g, const struct plan_arg *a, LLVMValueRef p,
			  LLVMValueRef ty, LLVMValueRef data)
{
	int text_size = a->go_stride, lvl = plan_err_level(text_size);
	for (int l = 0; l < a->go_chain; l++) {
		LLVMValueRef q = cg_gep8(g, p, l * lvl);
		cg_store64(g, q, 0, ty);
		cg_store64(g, q, 8, data);
		LLVMValueRef s1 = type_off(g, ty, PGS_CHAIN, PGO_S1);
		LLVMValueRef at = LLVMBuildSelect(g->b, LLVMBuildICmp(g->b, LLVMIntEQ, s1,
								      cg_const(g, 0), ""),
						  data, at_off(g, data, s1), "");
		LLVMValueRef h0 = read_mem(g, at, 8, false);
		LLVMValueRef h1 = read_mem(g, add(g, at, 8), 8, true);
		cg_store64(g, q, 16, h0);
		cg_store64(g, q, 24, h1);
		text(g, cg_gep8(g, q, plan_err_text(text_size, 0)), text_size, h0, h1);
		for (int k = 1; k <= 2; k++) {
			LLVMValueRef s = at_off(g, data, type_off(g, ty, PGS_CHAIN, k == 1 ? PGO_S2
											   : PGO_S3));
			LLVMValueRef len = read_mem(g, add(g, s, 8), 8, true);
			int off = plan_err_text(text_size, k);
			cg_store64(g, q, off - 8,
				   gotext(g, cg_gep8(g, q, off), text_size, read_mem(g, s, 8, false),
					  len));
		}
		for (int k = 0; k < 2; k++)
			capture_addr(g, at_off(g, data, type_off(g, ty, PGS_CHAIN,
								  k ? PGO_ADDR : PGO_SRC)),
				     cg_gep8(g, q, plan_err_addr(text_size, k)));
		if (l + 1 < a->go_chain)
			ty = nested_iface(g, at_off(g, data, type_off(g, ty, PGS_CHAIN, PGO_NEXT)),
					  &data);
	}
}

/* Captures part A of a value from S into DST (the parent's start). */
static void capture(struct cg *g, const struct plan_arg *a, const struct gosrc *s, LLVMValueRef dst)
{
	LLVMValueRef p = cg_gep8(g, dst, a->offset);
	int64_t off = a->go_off;
	switch (a->go) {
	case PG_INT:
	case PG_UINT:
	case PG_BOOL:
	case PG_FLOAT:
	case PG_ADDR:
	case PG_PTR: {
		LLVMValueRef v = src_word(g, s, off, a->go_size, a->go == PG_INT);
		cg_store64(g, p, 0, v);
		if (a->go == PG_PTR && a->nfields) { /* &{...}: nil reads fail, as zeros */
			struct gosrc to = {.addr = v};
			capture(g, &a->fields[0], &to, p);
		}
		break;
	}
	case PG_NOREAD:
		break;
	case PG_MAP:
		capture_map(g, a, src_word(g, s, off, 8, false), p);
		break;
	case PG_STRING: {
		LLVMValueRef len = src_word(g, s, off + 8, 8, true);
		cg_store64(g, p, 0,
			   gotext(g, cg_gep8(g, p, 8), a->size - 8, src_word(g, s, off, 8, false),
				  len));
		break;
	}
	case PG_STRUCT:
		for (int i = 0; i < a->nfields; i++) {
			struct gosrc in = *s;
			in.off += off;
			capture(g, &a->fields[i], &in, p);
		}
		break;
	case PG_ARRAY:
		for (int i = 0; i < a->go_max; i++) {
			struct gosrc in = *s;
			in.off += off + (int64_t)i * a->go_stride;
			capture(g, &a->fields[0], &in, cg_gep8(g, p, i * a->fields[0].size));
		}
		break;
	case PG_SLICE: {
		LLVMValueRef data = src_word(g, s, off, 8, false), len = src_word(g, s, off + 8, 8, true);
		cg_store64(g, p, 0, len);
		cg_store64(g, p, 8, src_word(g, s, off + 16, 8, true));
		for (int i = 0; i < a->go_max; i++) {
			/* past len: address 0, whose reads give zeros (no branch per element) */
			LLVMValueRef in = LLVMBuildICmp(g->b, LLVMIntSLT, cg_const(g, (uint64_t)i), len, "");
			LLVMValueRef ea = LLVMBuildAdd(g->b, data,
						       cg_const(g, (uint64_t)i * (uint64_t)a->go_stride), "");
			struct gosrc el = {.addr = LLVMBuildSelect(g->b, in, ea, cg_const(g, 0), "")};
			capture(g, &a->fields[0], &el, cg_gep8(g, p, 16 + i * a->fields[0].size));
		}
		break;
	}
	case PG_IFACE: {
		LLVMValueRef data = src_word(g, s, off + 8, 8, false);
		LLVMValueRef ty = iface_type(g, s, off, a->go_empty_iface, a->go_rebase);
		if (a->go_chain) {
			capture_error(g, a, p, ty, data);
			break;
		}
		cg_store64(g, p, 0, ty);
		cg_store64(g, p, 8, data);
		LLVMValueRef h0 = read_mem(g, data, 8, false);
		LLVMValueRef h1 = read_mem(g, LLVMBuildAdd(g->b, data, cg_const(g, 8), ""), 8, true);
		cg_store64(g, p, 16, h0);
		cg_store64(g, p, 24, h1);
		text(g, cg_gep8(g, p, 32), a->go_stride, h0, h1);
		break;
	}
	}
}

void cg_go_capture(struct cg *g, struct ast_node *e, LLVMValueRef dst, const struct plan_arg *a)
{
	struct plan_arg root = *a;
	root.offset = 0;
	cg_zero(g, dst, a->size, 8);
	struct gosrc s = ref_src(g, ref_of(e));
	capture(g, &root, &s, dst);
}

/* How a map key keeps an interface's value (plan_arg.go_key): by what %v shows of its
 * dynamic type (plan.gotypes). */
enum keyclass { KC_OTHER, KC_TEXT, KC_INT1, KC_INT2, KC_INT4, KC_INT8, KC_NCLASSES };

static enum keyclass key_class(const struct plan_gotype *t)
{
	switch (t->show) {
	case PGS_STR:
	case PGS_PSTR:
		return KC_TEXT;
	case PGS_INT:
	case PGS_UINT:
	case PGS_BOOL:
	case PGS_ERRNO:
		return t->size == 1 ? KC_INT1 : t->size == 2 ? KC_INT2 : t->size == 4 ? KC_INT4
										: KC_INT8;
	default:
		return KC_OTHER;
	}
}

/* A Go interface as a map key into DST (zeroed): type, data != 0, then only what %v
 * prints of it, so that equal texts are one key whatever their addresses: a string's
 * or an errors.New / fmt.Errorf error's length and text, an integer's value (its width
 * only); nothing more of other types (printed as their type). The type's class comes
 * from a switch over the binaries' type descriptors (plan.gotypes, sorted). */
void cg_go_key(struct cg *g, struct ast_node *e, LLVMValueRef dst, const struct plan_arg *a)
{
	const struct sema_goref *r = ref_of(e);
	struct gosrc s = ref_src(g, r);
	LLVMValueRef ty = iface_type(g, &s, 0, r->empty_iface, true);
	LLVMValueRef data = src_word(g, &s, 8, 8, false);
	LLVMValueRef cls = cg_alloca(g, g->i64, "keyclass");
	LLVMBuildStore(g->b, cg_const(g, KC_OTHER), cls);
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "key.class");
	LLVMBasicBlockRef bbs[KC_NCLASSES];
	for (int c = 0; c < KC_NCLASSES; c++)
		bbs[c] = c == KC_OTHER ? done : LLVMAppendBasicBlockInContext(g->ctx, g->fn, "key.c");
	int ncases = 0;
	for (int i = 0; i < g->plan->ngotypes; i++)
		ncases += key_class(&g->plan->gotypes[i]) != KC_OTHER;
	LLVMValueRef sw = LLVMBuildSwitch(g->b, ty, done, (unsigned)ncases);
	for (int i = 0; i < g->plan->ngotypes; i++) {
		const struct plan_gotype *t = &g->plan->gotypes[i];
		enum keyclass c = key_class(t);
		/* sorted: one case per address (two binaries may share one) */
		if (c != KC_OTHER && (i == 0 || g->plan->gotypes[i - 1].addr != t->addr))
			LLVMAddCase(sw, cg_const(g, t->addr), bbs[c]);
	}
	for (int c = 0; c < KC_NCLASSES; c++) {
		if (c == KC_OTHER)
			continue;
		LLVMPositionBuilderAtEnd(g->b, bbs[c]);
		LLVMBuildStore(g->b, cg_const(g, (uint64_t)c), cls);
		LLVMBuildBr(g->b, done);
	}
	LLVMPositionBuilderAtEnd(g->b, done);
	LLVMValueRef k = LLVMBuildLoad2(g->b, g->i64, cls, "");
	LLVMValueRef has = LLVMBuildICmp(g->b, LLVMIntNE, data, cg_const(g, 0), "");
	LLVMValueRef is_text = LLVMBuildAnd(g->b, has, LLVMBuildICmp(g->b, LLVMIntEQ, k,
						cg_const(g, KC_TEXT), ""), "");
	LLVMValueRef mask = cg_const(g, 0);
	static const struct { enum keyclass c; uint64_t mask; } masks[] = {
		{KC_INT1, 0xff}, {KC_INT2, 0xffff}, {KC_INT4, 0xffffffffu}, {KC_INT8, ~0ull}};
	for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]); i++)
		mask = LLVMBuildSelect(g->b, LLVMBuildICmp(g->b, LLVMIntEQ, k, cg_const(g, masks[i].c), ""),
				       cg_const(g, masks[i].mask), mask, "");
	LLVMValueRef h0 = read_mem(g, data, 8, false);
	LLVMValueRef h1 = read_mem(g, LLVMBuildAdd(g->b, data, cg_const(g, 8), ""), 8, true);
	LLVMValueRef len = LLVMBuildSelect(g->b, is_text, h1, cg_const(g, 0), "");
	cg_store64(g, dst, 0, ty);
	cg_store64(g, dst, 8, LLVMBuildZExt(g->b, has, g->i64, ""));
	cg_store64(g, dst, 16, LLVMBuildAnd(g->b, h0, mask, ""));
	cg_store64(g, dst, 24, len);
	text(g, cg_gep8(g, dst, 32), a->size - 32, h0, len); /* length 0: zeros */
}
