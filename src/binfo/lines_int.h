/* lines_int: the .gopclntab reader and the DWARF line table of lines.c, shared with
 * golines.c (source-line sites) and goinline.c (inlined copies). Internal to binfo. */
#ifndef GT_BINFO_LINES_INT_H
#define GT_BINFO_LINES_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "binfo/binfo_int.h"

/* interned file names */
struct names {
	char **v;
	uint32_t n, cap;
	uint32_t *tab; /* open addressing: index + 1, 0 = empty */
	uint32_t mask;
};

#define PCDATA_INLTREEINDEX 2
#define FUNCDATA_INLTREE 3

struct pcln {
	const uint8_t *d; /* the table's bytes */
	uint64_t size;
	bool go120;       /* _func has startLine; inlinedCall is the 1.20 layout */
	bool go116;       /* 1.16/1.17: functab holds {entry, funcoff} as 8-byte words and
			     _func starts with an 8-byte entry (4 more bytes before each field) */
	uint32_t quantum;
	uint64_t nfunc, text;
	uint64_t funcname, cu, filetab, pctab, functab; /* offsets into d */
	uint64_t gofunc; /* vaddr of go:func.* (base of funcdata offsets), 0 = unknown */
};

/* _func fields, as offsets in the structure */
struct pfunc {
	uint64_t off; /* of the _func in d */
	uint64_t entry;
	uint32_t name, pcfile, pcln, npcdata, cuoff, nfuncdata;
};

bool pcln_open(struct binfo *bi, struct pcln *p);
bool pcln_u32(const struct pcln *p, uint64_t off, uint32_t *v);
bool pcln_uvarint(const struct pcln *p, uint64_t *off, uint32_t *v);
/* A pc-value table's next value: VAL plus the zig-zag delta UV, wrapping as Go's int32
 * does (runtime.step) instead of overflowing: a hostile table may hold any delta. */
static inline int32_t pcln_step(int32_t val, uint32_t uv)
{
	return (int32_t)((uint32_t)val + (-(uv & 1) ^ (uv >> 1)));
}
/* The _func of functab entry I (0 .. nfunc - 1). */
bool pcln_func_index(const struct pcln *p, uint64_t i, struct pfunc *f);
/* Offset in d of the pcdata / funcdata offsets that follow F's fixed fields. */
uint64_t pcln_func_tables(const struct pcln *p);
const char *pcln_name(const struct pcln *p, uint32_t nameoff);
/* F's inline tree: the pc-value table of tree indexes at pctab + *TAB, the tree at
 * go:func.* + *FD; false when F has none. */
bool pcln_inl_tree(const struct pcln *p, const struct pfunc *f, uint32_t *tab, uint32_t *fd);
/* Entry IX of that tree: the inlined function's name, the call site's offset from F's
 * entry (parentPc, whose tree index is the parent's), and before Go 1.20 the parent's
 * index as stored (-1: none; -2 from 1.20 on, where parentPc says it). */
bool pcln_inl_entry(struct binfo *bi, const struct pcln *p, uint32_t fd, int32_t ix,
		    const char **name, int32_t *parent_pc, int32_t *parent);
/* The _func holding PC. */
bool pcln_func(const struct pcln *p, uint64_t pc, struct pfunc *f);
/* The value of the pc-value table at pctab+OFF for TARGET in a function at ENTRY. */
bool pcvalue(const struct pcln *p, uint32_t off, uint64_t entry, uint64_t target, int32_t *out);
/* File and line of PC in F (the innermost inlined call's, as the table records). */
bool pcln_fileline(const struct pcln *p, const struct pfunc *f, uint64_t pc, const char **file,
		   int *line);

/* One row of the DWARF line table. */
struct line_row {
	uint64_t addr;
	uint32_t file;
	uint32_t line : 31; /* 0: no line from here (end of a sequence) */
	uint32_t stmt : 1;  /* is_stmt: a statement starts here */
};

struct binfo_lines {
	struct binfo *bi;
	enum binfo_lines_source source;
	/* DWARF: rows sorted by address; file indexes into files.v */
	struct line_row *rows;
	size_t nrows;
	struct names files;
	/* .gopclntab */
	struct pcln pcln;
	bool pcln_ok;
};

#endif
