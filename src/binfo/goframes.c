/* goframes: a PC as the chain of frames it stands for, inlined calls expanded, from
 * .gopclntab's inline trees (as the Go runtime's own unwinder does): the innermost
 * inlined function first, the function symbol last. Each inlined frame's caller is at
 * the inline tree entry's parentPc, whose own tree index gives the next one out. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "binfo/lines_int.h"
#include "common/util.h"

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

/* SP deltas (pcsp: how far SP is below its value at the function's entry) from the
 * start of each of their runs, for every function of .gopclntab, sorted by PC, with a
 * row of -1 where no function is (after a function's last instruction). The return
 * address of a frame at PC is at SP + delta: what Go's own unwinder reads. */
int binfo_spdeltas(struct binfo *bi, struct binfo_sprow **out, int *nout)
{
	struct pcln p;
	struct binfo_sprow *rows = NULL;
	size_t n = 0, cap = 0;
	*out = NULL;
	*nout = 0;
	if (!pcln_open(bi, &p) || !p.text || p.go116 || p.nfunc > INT32_MAX)
		return -ENOENT;
	for (uint64_t i = 0; i < p.nfunc; i++) {
		struct pfunc f;
		uint32_t pcsp = 0;
		if (!pcln_func_index(&p, i, &f) || !pcln_u32(&p, f.off + 16, &pcsp))
			goto bad;
		uint64_t pos = p.pctab + pcsp, pc = f.entry;
		int32_t val = -1;
		if (n && rows[n - 1].pc > f.entry)
			goto bad; /* functab is sorted; a table that is not is not to be used */
		if (n && rows[n - 1].pc == f.entry)
			n--; /* the previous function's end row: this one starts there */
		for (bool first = pcsp != 0;; first = false) {
			uint32_t uv, pcd;
			if (!pcsp || !pcln_uvarint(&p, &pos, &uv) || (uv == 0 && !first))
				break;
			val = pcln_step(val, uv);
			if (!pcln_uvarint(&p, &pos, &pcd))
				goto bad;
			if (n + 2 > cap) {
				cap = cap ? cap * 2 : 4096;
				rows = xrealloc(rows, cap * sizeof(*rows));
			}
			if (!n || rows[n - 1].sp != (val < 0 ? -1 : val))
				rows[n++] = (struct binfo_sprow){pc, val < 0 ? -1 : val};
			pc += (uint64_t)pcd * p.quantum;
		}
		if (n + 1 > cap) {
			cap = cap ? cap * 2 : 4096;
			rows = xrealloc(rows, cap * sizeof(*rows));
		}
		rows[n++] = (struct binfo_sprow){pc, -1};
	}
	if (n > INT32_MAX)
		goto bad;
	*out = rows;
	*nout = (int)n;
	return 0;
bad:
	free(rows);
	return -EINVAL;
}
