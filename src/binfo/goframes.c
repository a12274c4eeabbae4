/* goframes: a PC as the chain of frames it stands for, inlined calls expanded, from
 * .gopclntab's inline trees (as the Go runtime's own unwinder does): the innermost
 * inlined function first, the function symbol last. Each inlined frame's caller is at
 * the inline tree entry's parentPc, whose own tree index gives the next one out. */
#include <errno.h>
#include <string.h>

#include "binfo/lines_int.h"

/* Inline tree entry IX of F: its function's name and parentPc (offset from entry). */
static bool inl_entry(struct binfo *bi, const struct pcln *p, uint32_t fd, int32_t ix,
		      const char **name, uint32_t *parent_pc)
{
	/* inlinedCall: 1.18/1.19 {parent i16, funcID u8, _ u8, file, line, func_, parentPc}
	 * (20 bytes); 1.20+ {funcID u8, _ [3]u8, nameOff, parentPc, startLine} (16 bytes) */
	uint64_t esize = p->go120 ? 16 : 20, noff = p->go120 ? 4 : 12, poff = p->go120 ? 8 : 16;
	const uint8_t *e = binfo__bytes_at(bi, p->gofunc + fd + (uint64_t)ix * esize, esize);
	int32_t nm;
	if (!e)
		return false;
	memcpy(&nm, e + noff, 4);
	memcpy(parent_pc, e + poff, 4);
	*name = nm >= 0 ? pcln_name(p, (uint32_t)nm) : NULL;
	return *name != NULL;
}

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
	uint64_t base = f.off + pcln_func_tables(p);
	bool tree = p->gofunc && !p->go116 && f.npcdata > PCDATA_INLTREEINDEX &&
		    f.nfuncdata > FUNCDATA_INLTREE && pcln_u32(p, base + 4 * PCDATA_INLTREEINDEX, &tab) &&
		    tab && pcln_u32(p, base + 4 * (uint64_t)f.npcdata + 4 * FUNCDATA_INLTREE, &fd) &&
		    fd != UINT32_MAX;
	uint64_t at = pc;
	for (int depth = 0; tree && n < max - 1 && depth < 64; depth++) {
		int32_t ix;
		const char *name;
		uint32_t parent;
		if (!pcvalue(p, tab, f.entry, at, &ix) || ix < 0 || !inl_entry(l->bi, p, fd, ix, &name, &parent))
			break;
		struct binfo_frame *fr = &out[n++];
		*fr = (struct binfo_frame){.func = name, .inlined = true};
		pcln_fileline(p, &f, at, &fr->file, &fr->line);
		at = f.entry + parent; /* the call site in the caller */
	}
	struct binfo_frame *fr = &out[n++];
	*fr = (struct binfo_frame){.func = pcln_name(p, f.name), .off = pc - f.entry};
	pcln_fileline(p, &f, at, &fr->file, &fr->line);
	return n;
}
