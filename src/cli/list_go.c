/* list_go: -l go:PATTERN. With DWARF each function is printed with its Go signature
 * (go:main.Greet(name string, times int) string); -lv adds each parameter's place (the
 * registers or the stack offset Go's ABI gives it) and the layout of the struct types
 * the parameters hold or point to, enough to write fetch rules by hand. Functions that
 * exist only as inlined copies follow, marked (inlined). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binfo/binfo.h"
#include "binfo/gotypes.h"
#include "common/diag.h"
#include "common/util.h"
#include "list.h"

/* "~r0" (an unnamed result) and "~p0" (a blank parameter) are not Go names. */
static bool unnamed(const struct binfo_goparam *p)
{
	return p->name[0] == '~';
}

static void print_signature(const struct binfo_gofunc *f)
{
	int nres = 0;
	printf("(");
	for (int i = 0, k = 0; i < f->nparams; i++) {
		const struct binfo_goparam *p = &f->params[i];
		if (p->result) {
			nres++;
			continue;
		}
		printf("%s%s %s", k++ ? ", " : "", unnamed(p) ? "_" : p->name, p->type->name);
	}
	printf(")");
	if (!nres)
		return;
	const struct binfo_goparam *r = &f->params[f->nparams - nres];
	bool paren = nres > 1 || !unnamed(r);
	printf(paren ? " (" : " ");
	for (int i = 0; i < nres; i++, r++) {
		if (unnamed(r))
			printf("%s%s", i ? ", " : "", r->type->name);
		else
			printf("%s%s %s", i ? ", " : "", r->name, r->type->name);
	}
	printf(paren ? ")" : "");
}

static void print_place(const struct binfo_goparam *p)
{
	if (p->on_stack) {
		printf("stack %+lld", (long long)p->stack_off);
		return;
	}
	if (!p->npieces)
		printf("(no bytes)");
	for (int i = 0; i < p->npieces; i++) {
		const struct binfo_gopiece *pc = &p->pieces[i];
		printf("%s%s", i ? " " : "",
		       pc->ireg >= 0 ? binfo_goreg_name(pc->ireg) : binfo_gofreg_name(pc->freg));
	}
}

/* Struct layouts once each: the parameter's type, or what a pointer points to. */
static void print_layouts(const struct binfo_gofunc *f)
{
	const struct binfo_gotype *shown[64];
	int nshown = 0;
	for (int i = 0; i < f->nparams && nshown < 64; i++) {
		const struct binfo_gotype *t = f->params[i].type;
		if (t->kind == GK_PTR && t->elem)
			t = t->elem;
		bool seen = t->kind != GK_STRUCT;
		for (int k = 0; k < nshown && !seen; k++)
			seen = shown[k] == t;
		if (seen)
			continue;
		shown[nshown++] = t;
		printf("    %s: %llu bytes\n", t->name, (unsigned long long)t->size);
		for (int k = 0; k < t->nfields; k++)
			printf("        +%-4llu %s %s (%llu)\n",
			       (unsigned long long)t->fields[k].offset, t->fields[k].name,
			       t->fields[k].type->name, (unsigned long long)t->fields[k].type->size);
	}
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Functions with inlined copies only (no code of their own), by name: their :entry
 * probes go at the start of each copy. Returns how many it lists. */
static int list_inlined(struct binfo *bi, const char *pat)
{
	struct binfo_inlined *cs = NULL;
	int n = binfo_inlined_copies(bi, pat, &cs), listed = 0;
	VEC(const char *) names = {0};
	if (n < 0)
		return 0; /* no inline trees (stripped): out-of-line functions only */
	for (int i = 0; i < n; i++)
		if (!binfo_find_func(bi, cs[i].name))
			vec_push(&names, cs[i].name);
	vec_sort(&names, cmp_name);
	for (int i = 0; i < names.n; i++)
		if (!i || strcmp(names.v[i], names.v[i - 1])) {
			printf("go:%s (inlined)\n", names.v[i]);
			listed++;
		}
	vec_free(&names);
	free(cs);
	return listed;
}

/* Nothing matched PAT: an error, with the closest names for a plain name (a
 * package left out, a typo), as a probe's "no function" error gives them. */
static void no_match(struct binfo *bi, const char *pat, const char *target)
{
	const char *best[3];
	int n = strpbrk(pat, "*?[") ? 0 : binfo_suggest(bi, pat, best, 3);
	struct strbuf sb = {0};
	for (int i = 0; i < n; i++)
		strbuf_printf(&sb, "%s%s", i ? (i == n - 1 ? " or " : ", ") : "; did you mean ",
			      best[i]);
	diag_fatal("no Go function %s '%s' in %s%s%s", n || !strpbrk(pat, "*?[") ? "named"
		   : "matches", pat, target, sb.buf ? sb.buf : "", n ? "?" : "");
	strbuf_free(&sb);
}

int list_go(const char *pat, const char *target, bool verbose)
{
	struct binfo *bi;
	struct binfo_godwarf *gd = NULL;
	if (binfo__open(target, &bi) < 0)
		return -ENOENT;
	binfo_godwarf__open(bi, &gd); /* none: names only */
	binfo_godwarf_set_keep(gd, false);
	const struct binfo_func **fs = NULL;
	char *glob = binfo_type_args_glob(pat);
	int n = binfo_match_funcs(bi, glob, &fs);
	for (int i = 0; i < n; i++) {
		const struct binfo_gofunc *f = NULL;
		printf("go:%s", fs[i]->name);
		if (gd && binfo_godwarf_func(gd, fs[i]->name, &f) == 0)
			print_signature(f);
		printf("\n");
		if (!verbose || !f)
			continue;
		for (int k = 0; k < f->nparams; k++) {
			const struct binfo_goparam *p = &f->params[k];
			printf("    %s %s %s: ", p->result ? "result" : "param", p->name, p->type->name);
			print_place(p);
			printf("\n");
		}
		print_layouts(f);
	}
	free(fs);
	int listed = (n > 0 ? n : 0) + list_inlined(bi, glob);
	free(glob);
	if (!listed)
		no_match(bi, pat, target);
	binfo_godwarf__close(gd);
	binfo__close(bi);
	return listed ? 0 : -ENOENT;
}
