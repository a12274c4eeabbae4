/*
 * `func` and `probe` as values: the site id the cookie carries, made canonical. A
 * function with three RET instructions has three :return sites; keyed by the raw site
 * id, `@[func] = count()` would print three lines of the same name. Each site maps to
 * the first site of its name instead, through a constant table in .rodata (emitted only
 * when a uprobe program uses it).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>


#include "codegen/cg_int.h"
#include "common/plan.h"
#include "common/util.h"

/* ids[i] = the first site whose name (func or probe) equals site i's. */
static uint32_t *canonical_ids(const struct gt_plan *plan, bool probe)
{
	uint32_t n = (uint32_t)plan->nsites, cap = 16;
	while (cap < 2 * n)
		cap <<= 1;
	uint32_t *tab = xcalloc(cap, sizeof(*tab)), *ids = xmalloc((n ? n : 1) * sizeof(*ids));
	for (uint32_t i = 0; i < n; i++) {
		const char *name = probe ? plan->sites[i].probe : plan->sites[i].func;
		ids[i] = i;
		if (!name)
			continue;
		for (uint32_t h = str_hash(name) & (cap - 1);; h = (h + 1) & (cap - 1)) {
			uint32_t j = tab[h];
			if (!j) {
				tab[h] = i + 1;
				break;
			}
			const struct plan_site *o = &plan->sites[j - 1];
			if (!strcmp(probe ? o->probe : o->func, name)) {
				ids[i] = j - 1;
				break;
			}
		}
	}
	free(tab);
	return ids;
}

static LLVMValueRef table(struct cg *g, bool probe)
{
	LLVMValueRef *gv = probe ? &g->site_probe_tab : &g->site_func_tab;
	if (*gv)
		return *gv;
	uint32_t n = (uint32_t)g->plan->nsites, *ids = canonical_ids(g->plan, probe);
	LLVMValueRef *v = xmalloc((n ? n : 1) * sizeof(*v));
	for (uint32_t i = 0; i < n; i++)
		v[i] = LLVMConstInt(g->i32, ids[i], false);
	LLVMTypeRef ty = LLVMArrayType(g->i32, n);
	*gv = LLVMAddGlobal(g->mod, ty, probe ? "gt_site_probe" : "gt_site_func");
	LLVMSetInitializer(*gv, LLVMConstArray(g->i32, v, n));
	LLVMSetGlobalConstant(*gv, true);
	LLVMSetLinkage(*gv, LLVMPrivateLinkage);
	LLVMSetSection(*gv, ".rodata");
	free(v);
	free(ids);
	return *gv;
}

LLVMValueRef cg_site_name(struct cg *g, LLVMValueRef site, bool probe)
{
	uint64_t n = (uint64_t)g->plan->nsites;
	if (!cg_has_sites(g) || n == 0)
		return site;
	/* the verifier wants the index bounded; a site id is always < n */
	LLVMValueRef in = LLVMBuildICmp(g->b, LLVMIntULT, site, cg_const(g, n), "");
	LLVMValueRef idx = LLVMBuildSelect(g->b, in, site, cg_const(g, 0), "");
	LLVMValueRef ix[2] = {LLVMConstInt(g->i64, 0, false), idx};
	LLVMTypeRef ty = LLVMArrayType(g->i32, (unsigned)n);
	LLVMValueRef p = LLVMBuildInBoundsGEP2(g->b, ty, table(g, probe), ix, 2, "");
	return LLVMBuildZExt(g->b, LLVMBuildLoad2(g->b, g->i32, p, ""), g->i64, "");
}

/* The load bias of the probed binary: the probe's address (ctx->ip, which may be one
 * byte past the breakpoint) less the site's address as linked, to a page (a PIE is
 * mapped at a page-aligned bias). */
LLVMValueRef cg_site_bias(struct cg *g)
{
	uint32_t n = (uint32_t)g->plan->nsites;
	if (g->pp->kind != PLAN_PROG_UPROBE || n == 0)
		return cg_const(g, 0);
	if (!g->site_vaddr_tab) {
		LLVMValueRef *v = xmalloc(n * sizeof(*v));
		for (uint32_t i = 0; i < n; i++)
			v[i] = LLVMConstInt(g->i64, g->plan->sites[i].vaddr, false);
		g->site_vaddr_tab = LLVMAddGlobal(g->mod, LLVMArrayType(g->i64, n), "gt_site_vaddr");
		LLVMSetInitializer(g->site_vaddr_tab, LLVMConstArray(g->i64, v, n));
		LLVMSetGlobalConstant(g->site_vaddr_tab, true);
		LLVMSetLinkage(g->site_vaddr_tab, LLVMPrivateLinkage);
		LLVMSetSection(g->site_vaddr_tab, ".rodata");
		free(v);
	}
	LLVMValueRef site = LLVMBuildAnd(g->b, cg_cookie(g), cg_const(g, GT_COOKIE_SITE_MASK), "");
	LLVMValueRef in = LLVMBuildICmp(g->b, LLVMIntULT, site, cg_const(g, n), "");
	LLVMValueRef ix[2] = {LLVMConstInt(g->i64, 0, false),
			      LLVMBuildSelect(g->b, in, site, cg_const(g, 0), "")};
	LLVMValueRef p = LLVMBuildInBoundsGEP2(g->b, LLVMArrayType(g->i64, n), g->site_vaddr_tab,
					       ix, 2, "");
	LLVMValueRef d = LLVMBuildSub(g->b, cg_load_reg(g, arch_role_off[ARCH_IP]),
				      LLVMBuildLoad2(g->b, g->i64, p, ""), "");
	return LLVMBuildAnd(g->b, d, cg_const(g, ~(uint64_t)0xfff), "bias");
}
