/* goframes: a PC as the chain of frames it stands for, inlined calls expanded, from
 * .gopclntab's inline trees (as the Go runtime's own unwinder does): the innermost
 * inlined function first, the function symbol last. Each inlined frame's caller is at
 * the inline tree entry's parentPc, whose own tree index gives the next one out. */
#include <errno.h>
#include <string.h>

#include "binfo/lines_int.h"

int binfo_lines_frames(struct binfo_lines *l, uint64_t pc, struct binfo_frame *out, int max)
{
	const struct pcln *p = &l->pcln;
	struct pfunc f;
	int n = 0;
	if (max <= 0)
		return 0;
	if (!l->pcln_ok || !pcln_func(p, pc, &f)) {
		const struct binfo_func *sym = binfo_func_at(l->bi, pc);
		if (!sym)
			return -ENOENT;
		out[0] = (struct binfo_frame){.func = sym->name, .off = pc - sym->addr};
		return 1;
	}
	uint32_t tab = 0, fd = UINT32_MAX;
	bool tree = p->gofunc && !p->go116 && pcln_inl_tree(p, &f, &tab, &fd);
	uint64_t at = pc;
	for (int depth = 0; tree && n < max - 1 && depth < 64; depth++) {
		int32_t ix, parent, unused;
		const char *name;
		if (!pcvalue(p, tab, f.entry, at, &ix) || ix < 0 ||
		    !pcln_inl_entry(l->bi, p, fd, ix, &name, &parent, &unused))
			break;
		struct binfo_frame *fr = &out[n++];
		*fr = (struct binfo_frame){.func = name, .inlined = true};
		pcln_fileline(p, &f, at, &fr->file, &fr->line);
		at = f.entry + (uint32_t)parent; /* the call site in the caller */
	}
	struct binfo_frame *fr = &out[n++];
	*fr = (struct binfo_frame){.func = pcln_name(p, f.name), .off = pc - f.entry};
	pcln_fileline(p, &f, at, &fr->file, &fr->line);
	return n;
}
