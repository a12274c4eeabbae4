/* binfo/lines: program counter -> function, source file and line.
 *
 * File and line come from DWARF .debug_line when the binary has it (all line programs
 * decoded once, at open, into one table sorted by address), else from Go's
 * .gopclntab (Go 1.18+ layout: the pcfile / pcln tables of the function holding the PC,
 * decoded per lookup). The function is always taken from .gopclntab when it parses,
 * because it also knows inlining: the name is that of the innermost inlined call at the
 * PC, which is what the file and line of both sources describe. Without a usable
 * .gopclntab the name is the ELF symbol containing the PC.
 *
 * All addresses are link-time virtual addresses (a PIE's runtime addresses minus its
 * load bias). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libdwarf/dwarf.h>

#include "binfo/lines_int.h"
#include "common/util.h"

/* ---- interned file names ---- */

static void names_grow(struct names *ns)
{
	uint32_t size = ns->tab ? 2 * (ns->mask + 1) : 1024;
	free(ns->tab);
	ns->tab = xcalloc(size, sizeof(*ns->tab));
	ns->mask = size - 1;
	for (uint32_t i = 0; i < ns->n; i++) {
		uint32_t h = str_hash(ns->v[i]) & ns->mask;
		while (ns->tab[h])
			h = (h + 1) & ns->mask;
		ns->tab[h] = i + 1;
	}
}

static uint32_t names_intern(struct names *ns, const char *s)
{
	if (!ns->tab || 2 * (ns->n + 1) > ns->mask + 1)
		names_grow(ns);
	uint32_t h = str_hash(s) & ns->mask;
	for (; ns->tab[h]; h = (h + 1) & ns->mask)
		if (!strcmp(ns->v[ns->tab[h] - 1], s))
			return ns->tab[h] - 1;
	if (ns->n == ns->cap) {
		ns->cap = ns->cap ? 2 * ns->cap : 256;
		ns->v = xrealloc(ns->v, ns->cap * sizeof(*ns->v));
	}
	ns->v[ns->n] = xstrdup(s);
	ns->tab[h] = ns->n + 1;
	return ns->n++;
}

static void names_free(struct names *ns)
{
	for (uint32_t i = 0; i < ns->n; i++)
		free(ns->v[i]);
	free(ns->v);
	free(ns->tab);
	memset(ns, 0, sizeof(*ns));
}

/* ---- .gopclntab (Go 1.16+) ---- */

#define PCLN_MAGIC_116 0xfffffffau /* Go 1.16, 1.17 */
#define PCLN_MAGIC_118 0xfffffff0u /* Go 1.18, 1.19 */
#define PCLN_MAGIC_120 0xfffffff1u /* Go 1.20 and later */

bool pcln_u32(const struct pcln *p, uint64_t off, uint32_t *v)
{
	if (off > p->size || p->size - off < 4)
		return false;
	memcpy(v, p->d + off, 4);
	return true;
}

static uint64_t pc_word(const uint8_t *h, int i)
{
	uint64_t v;
	memcpy(&v, h + 8 + 8 * i, 8);
	return v;
}

/* A NUL-terminated string at OFF, or NULL when it does not end inside the table. */
static const char *pc_str(const struct pcln *p, uint64_t off)
{
	if (off >= p->size || !memchr(p->d + off, 0, p->size - off))
		return NULL;
	return (const char *)p->d + off;
}

static uint64_t sym_addr(struct binfo *bi, const char *const *names, int nnames)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(bi->elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		size_t n = data ? sh.sh_size / sh.sh_entsize : 0;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;
			if (!gelf_getsym(data, (int)i, &sym) || !sym.st_name)
				continue;
			const char *nm = elf_strptr(bi->elf, sh.sh_link, sym.st_name);
			for (int k = 0; nm && k < nnames; k++)
				if (!strcmp(nm, names[k]))
					return sym.st_value;
		}
	}
	return 0;
}

bool pcln_open(struct binfo *bi, struct pcln *p)
{
	static const char *const gofunc[] = {"go:func.*", "go.func.*"};
	static const char *const text[] = {"runtime.text"};
	uint64_t addr = 0;
	memset(p, 0, sizeof(*p));
	p->d = binfo__section(bi, ".gopclntab", &p->size, &addr);
	if (!p->d) /* PIE */
		p->d = binfo__section(bi, ".data.rel.ro.gopclntab", &p->size, &addr);
	if (!p->d || p->size < 72)
		return false;
	uint32_t magic;
	memcpy(&magic, p->d, 4);
	if ((magic != PCLN_MAGIC_116 && magic != PCLN_MAGIC_118 && magic != PCLN_MAGIC_120) ||
	    p->d[4] || p->d[5] || p->d[7] != 8 || !p->d[6])
		return false;
	p->go120 = magic == PCLN_MAGIC_120;
	p->go116 = magic == PCLN_MAGIC_116;
	p->quantum = p->d[6];
	p->nfunc = pc_word(p->d, 0);
	/* 1.16/1.17 have no textStart word: functab entries are absolute addresses. */
	int w = p->go116 ? 2 : 3; /* index of funcnameOffset */
	if (!p->go116) {
		/* textStart is relocated at run time in a PIE (0 in the file): prefer the symbol. */
		p->text = sym_addr(bi, text, 1);
		if (!p->text)
			p->text = pc_word(p->d, 2);
		if (!p->text) /* stripped PIE: no symbol, the header word is relocated */
			p->text = binfo__relative_addend(bi, addr + 8 + 8 * 2);
		if (!p->text) /* Go 1.26+ leaves the header word 0: moduledata.text has it */
			p->text = binfo__moduledata_text(bi, addr);
	}
	p->funcname = pc_word(p->d, w);
	p->cu = pc_word(p->d, w + 1);
	p->filetab = pc_word(p->d, w + 2);
	p->pctab = pc_word(p->d, w + 3);
	p->functab = pc_word(p->d, w + 4);
	uint64_t fte = p->go116 ? 16 : 8;
	if (p->functab >= p->size || p->nfunc >= (p->size - p->functab) / fte || !p->nfunc)
		return false;
	p->gofunc = sym_addr(bi, gofunc, 2);
	/* stripped: moduledata has it (the inline trees, hence inlined frames in ustack
	 * and :entry on inlined copies, were missing from stripped binaries) */
	if (!p->gofunc && bi->go_version)
		p->gofunc = binfo__moduledata_gofunc(bi, addr);
	return true;
}

/* Entry I of functab: the function's entry address (I = nfunc: the end of the text) and
 * the offset of its _func from functab. A PIE of 1.16/1.17 would need the words'
 * relocations: its entries are taken as they are in the file. */
static bool ft_entry(const struct pcln *p, uint64_t i, uint64_t *entry, uint32_t *funcoff)
{
	if (p->go116) {
		uint64_t off = p->functab + 16 * i;
		if (off > p->size || p->size - off < 16)
			return false;
		uint64_t fo;
		memcpy(entry, p->d + off, 8);
		memcpy(&fo, p->d + off + 8, 8);
		if (funcoff)
			*funcoff = (uint32_t)fo;
		return fo <= UINT32_MAX;
	}
	uint32_t e;
	if (!pcln_u32(p, p->functab + 8 * i, &e) ||
	    (funcoff && !pcln_u32(p, p->functab + 8 * i + 4, funcoff)))
		return false;
	*entry = p->text + e;
	return true;
}

/* 4-byte field at byte OFF of a 1.18+ _func, wherever the binary's layout has it. */
static bool func_u32(const struct pcln *p, uint64_t func, uint64_t off, uint32_t *v)
{
	return pcln_u32(p, func + off + (p->go116 ? 4 : 0), v);
}

bool pcln_uvarint(const struct pcln *p, uint64_t *off, uint32_t *v)
{
	uint64_t x;
	if (*off >= p->size)
		return false;
	const uint8_t *q = p->d + *off;
	if (!binfo_uleb128(&q, p->d + p->size, &x))
		return false;
	*off = (uint64_t)(q - p->d);
	*v = (uint32_t)x; /* the tables' values are 32-bit (runtime.readvarint) */
	return true;
}

/* The value of the pc-value table at pctab+OFF for TARGET in a function at ENTRY; false
 * when TARGET is past the table (or the table is malformed). As runtime.pcvalue. */
bool pcvalue(const struct pcln *p, uint32_t off, uint64_t entry, uint64_t target, int32_t *out)
{
	uint64_t pos = p->pctab + off, pc = entry;
	int32_t val = -1;
	if (!off || p->pctab >= p->size)
		return false;
	for (bool first = true;; first = false) {
		uint32_t uvdelta, pcdelta;
		if (!pcln_uvarint(p, &pos, &uvdelta))
			return false;
		if (uvdelta == 0 && !first)
			return false;
		val = pcln_step(val, uvdelta);
		if (!pcln_uvarint(p, &pos, &pcdelta))
			return false;
		pc += (uint64_t)pcdelta * p->quantum;
		if (target < pc) {
			*out = val;
			return true;
		}
	}
}

bool pcln_func(const struct pcln *p, uint64_t pc, struct pfunc *f)
{
	uint64_t e, lo = 0, hi = p->nfunc;
	/* last entry with entry <= pc; functab[nfunc] is the end of the text */
	if (!ft_entry(p, p->nfunc, &e, NULL) || pc >= e || !ft_entry(p, 0, &e, NULL) || pc < e)
		return false;
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (!ft_entry(p, mid, &e, NULL))
			return false;
		if (e <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return pcln_func_index(p, lo, f) && f->entry <= pc;
}

bool pcln_func_index(const struct pcln *p, uint64_t i, struct pfunc *f)
{
	uint32_t funcoff;
	if (!ft_entry(p, i, &f->entry, &funcoff))
		return false;
	f->off = p->functab + funcoff;
	uint32_t nf4 = 0;
	bool ok = func_u32(p, f->off, 4, &f->name) && func_u32(p, f->off, 20, &f->pcfile) &&
		  func_u32(p, f->off, 24, &f->pcln) && func_u32(p, f->off, 28, &f->npcdata) &&
		  func_u32(p, f->off, 32, &f->cuoff) &&
		  func_u32(p, f->off, p->go120 ? 40 : 36, &nf4);
	f->nfuncdata = nf4 >> 24;
	return ok;
}

uint64_t pcln_func_tables(const struct pcln *p)
{
	return p->go120 ? 44 : p->go116 ? 44 : 40;
}

const char *pcln_name(const struct pcln *p, uint32_t nameoff)
{
	return pc_str(p, p->funcname + nameoff);
}

bool pcln_inl_tree(const struct pcln *p, const struct pfunc *f, uint32_t *tab, uint32_t *fd)
{
	if (f->npcdata <= PCDATA_INLTREEINDEX || f->nfuncdata <= FUNCDATA_INLTREE)
		return false;
	uint64_t base = f->off + pcln_func_tables(p);
	return pcln_u32(p, base + 4 * PCDATA_INLTREEINDEX, tab) && *tab &&
	       pcln_u32(p, base + 4 * (uint64_t)f->npcdata + 4 * FUNCDATA_INLTREE, fd) &&
	       *fd != UINT32_MAX;
}

bool pcln_inl_entry(struct binfo *bi, const struct pcln *p, uint32_t fd, int32_t ix,
		    const char **name, int32_t *parent_pc, int32_t *parent)
{
	/* inlinedCall: 1.18/1.19 {parent i16, funcID u8, _ u8, file, line, func_, parentPc}
	 * (20 bytes); 1.20+ {funcID u8, _ [3]u8, nameOff, parentPc, startLine} (16 bytes) */
	uint64_t esize = p->go120 ? 16 : 20;
	const uint8_t *e = binfo__bytes_at(bi, p->gofunc + fd + (uint64_t)ix * esize, esize);
	int32_t nameoff;
	int16_t par = -2;
	if (!e)
		return false;
	memcpy(&nameoff, e + (p->go120 ? 4 : 12), 4);
	memcpy(parent_pc, e + (p->go120 ? 8 : 16), 4);
	if (!p->go120)
		memcpy(&par, e, 2);
	*parent = par;
	*name = nameoff >= 0 ? pcln_name(p, (uint32_t)nameoff) : NULL;
	return *name != NULL;
}

/* Name of the innermost inlined call at PC in F, or NULL when PC is not in one. */
static const char *pcln_inlined(struct binfo *bi, const struct pcln *p, const struct pfunc *f,
				uint64_t pc)
{
	uint32_t tab, fd;
	int32_t ix, ppc, par;
	const char *name;
	if (!p->gofunc || p->go116 || !pcln_inl_tree(p, f, &tab, &fd) ||
	    !pcvalue(p, tab, f->entry, pc, &ix) || ix < 0 ||
	    !pcln_inl_entry(bi, p, fd, ix, &name, &ppc, &par))
		return NULL;
	return name;
}

bool pcln_fileline(const struct pcln *p, const struct pfunc *f, uint64_t pc, const char **file,
		   int *line)
{
	int32_t fno, ln;
	uint32_t foff;
	if (!pcvalue(p, f->pcfile, f->entry, pc, &fno) || fno < 0 ||
	    !pcvalue(p, f->pcln, f->entry, pc, &ln) || ln <= 0)
		return false;
	if (!pcln_u32(p, p->cu + 4 * ((uint64_t)f->cuoff + (uint32_t)fno), &foff) ||
	    foff == UINT32_MAX)
		return false;
	*file = pc_str(p, p->filetab + foff);
	*line = ln;
	return *file != NULL;
}

/* Bytes covered by the pc-value table at pctab+OFF (the function's code size, without
 * the linker's alignment padding after it); 0 when it is absent or malformed. */
static uint64_t pcvalue_span(const struct pcln *p, uint32_t off)
{
	uint64_t pos = p->pctab + off, span = 0;
	if (!off || p->pctab >= p->size)
		return 0;
	for (bool first = true;; first = false) {
		uint32_t uvdelta, pcdelta;
		if (!pcln_uvarint(p, &pos, &uvdelta))
			return 0;
		if (uvdelta == 0 && !first)
			return span;
		if (!pcln_uvarint(p, &pos, &pcdelta))
			return 0;
		span += (uint64_t)pcdelta * p->quantum;
	}
}

int binfo__pcln_funcs(struct binfo *bi, struct binfo_func **out, int *nout)
{
	struct pcln p;
	*out = NULL;
	*nout = 0;
	if (!pcln_open(bi, &p) || (!p.text && !p.go116) || p.nfunc > INT32_MAX)
		return -ENOENT;
	struct binfo_func *fs = xmalloc(p.nfunc * sizeof(*fs));
	int n = 0;
	for (uint64_t i = 0; i < p.nfunc; i++) {
		/* NEXT of the last function is functab[nfunc], the end of the text */
		uint64_t entry, next;
		uint32_t funcoff, nameoff, pcsp;
		if (!ft_entry(&p, i, &entry, &funcoff) || !ft_entry(&p, i + 1, &next, NULL) ||
		    next < entry || !func_u32(&p, p.functab + funcoff, 4, &nameoff) ||
		    !func_u32(&p, p.functab + funcoff, 16, &pcsp)) {
			free(fs);
			return -EINVAL;
		}
		const char *name = pcln_name(&p, nameoff);
		if (!name || !name[0] || binfo__is_text_marker(name))
			continue;
		uint64_t size = next - entry, span = pcvalue_span(&p, pcsp);
		if (span && span < size)
			size = span;
		fs[n++] = (struct binfo_func){name, entry, size};
	}
	*out = fs;
	*nout = n;
	return 0;
}

/* ---- DWARF .debug_line ----
 *
 * The line programs of all compile units are run once, at open, into one array of rows
 * sorted by address. They are decoded here rather than through libdwarf: libdwarf
 * allocates an object per row and took ~200 ms for the 1.6 MB .debug_line of a 15 MB
 * Go binary (cmd/go), ~100 ms for its runtime CU alone; this takes ~25 ms for the whole
 * table, decompression (libelf) included. DWARF 2 to 5. */

struct rd {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t rd_n(struct rd *r, int n)
{
	uint64_t v = 0;
	if (r->bad || r->end - r->p < n) {
		r->bad = true;
		return 0;
	}
	memcpy(&v, r->p, (size_t)n); /* little endian */
	r->p += n;
	return v;
}

static uint64_t rd_uleb(struct rd *r)
{
	uint64_t v = 0;
	if (r->bad || !binfo_uleb128(&r->p, r->end, &v))
		r->bad = true;
	return v;
}

static int64_t rd_sleb(struct rd *r)
{
	int64_t v = 0;
	if (r->bad || !binfo_sleb128(&r->p, r->end, &v))
		r->bad = true;
	return v;
}

static const char *rd_str(struct rd *r)
{
	const uint8_t *nul = r->bad ? NULL : memchr(r->p, 0, (size_t)(r->end - r->p));
	if (!nul) {
		r->bad = true;
		return "";
	}
	const char *s = (const char *)r->p;
	r->p = nul + 1;
	return s;
}

/* A section's bytes (decompressed) from a private libelf handle. */
struct sec {
	const uint8_t *d;
	size_t size;
};

struct dwsecs {
	struct sec line, str, line_str;
	bool dwarf64;
	int addr_size;
};

static const char *sec_str(const struct sec *s, uint64_t off)
{
	if (!s->d || off >= s->size || !memchr(s->d + off, 0, s->size - off))
		return NULL;
	return (const char *)s->d + off;
}

/* A string-valued attribute of a DWARF 5 entry, or NULL (after skipping the value)
 * for other forms; r->bad for forms this reader does not know. */
static const char *rd_form(struct rd *r, const struct dwsecs *ds, uint64_t form, uint64_t *num)
{
	*num = 0;
	switch (form) {
	case DW_FORM_string:
		return rd_str(r);
	case DW_FORM_line_strp:
		return sec_str(&ds->line_str, rd_n(r, ds->dwarf64 ? 8 : 4));
	case DW_FORM_strp:
		return sec_str(&ds->str, rd_n(r, ds->dwarf64 ? 8 : 4));
	case DW_FORM_udata:
		*num = rd_uleb(r);
		return NULL;
	case DW_FORM_data1:
		*num = rd_n(r, 1);
		return NULL;
	case DW_FORM_data2:
		*num = rd_n(r, 2);
		return NULL;
	case DW_FORM_data4:
		*num = rd_n(r, 4);
		return NULL;
	case DW_FORM_data8:
		*num = rd_n(r, 8);
		return NULL;
	case DW_FORM_data16:
		rd_n(r, 8);
		rd_n(r, 8);
		return NULL;
	case DW_FORM_block: {
		uint64_t n = rd_uleb(r);
		if (n > (uint64_t)(r->end - r->p))
			r->bad = true;
		else
			r->p += n;
		return NULL;
	}
	default:
		r->bad = true;
		return NULL;
	}
}

struct lp_files {
	VEC(const char *) dirs;
	VEC(uint32_t) files; /* interned indexes, by file number - base */
	int base;            /* number of the first file: 1 before DWARF 5, 0 after */
	struct strbuf path;
};

static void lp_add_file(struct binfo_lines *l, struct lp_files *f, const char *name,
			uint64_t dir)
{
	/* "." adds nothing: Go's DWARF 5 tables name directory 0 (the compilation
	 * directory) "." and put <autogenerated> there, which Go's tools print bare */
	if (name[0] != '/' && dir < (uint64_t)f->dirs.n && f->dirs.v[dir][0] &&
	    strcmp(f->dirs.v[dir], ".") != 0) {
		const char *d = f->dirs.v[dir];
		size_t n = strlen(d);
		f->path.len = 0;
		/* a directory that ends in '/' (the kernel's TRACE_INCLUDE_PATH ones): one '/',
		 * as addr2line prints it */
		strbuf_printf(&f->path, "%.*s/%s", (int)(n > 1 && d[n - 1] == '/' ? n - 1 : n), d,
			      name);
		name = f->path.buf;
	}
	uint32_t ix = names_intern(&l->files, name);
	vec_push(&f->files, ix);
}

/* DWARF 5 directory or file entries: COUNT entries of the formats given first. */
static void lp_entries_v5(struct binfo_lines *l, struct rd *r, const struct dwsecs *ds,
			  struct lp_files *f, bool files)
{
	uint64_t fmt[32][2];
	int nfmt = (int)rd_n(r, 1);
	if (nfmt > 32) {
		r->bad = true;
		return;
	}
	for (int i = 0; i < nfmt; i++) {
		fmt[i][0] = rd_uleb(r);
		fmt[i][1] = rd_uleb(r);
	}
	uint64_t count = rd_uleb(r);
	for (uint64_t e = 0; e < count && !r->bad; e++) {
		/* an entry reads at least one byte: a count beyond what is left, or formats
		 * that read nothing, would loop (and grow the lists) for as long as COUNT says
		 * (the binary fuzzer's timeout-245b0aea) */
		const uint8_t *at = r->p;
		const char *path = NULL;
		uint64_t dir = 0, num;
		for (int i = 0; i < nfmt && !r->bad; i++) {
			const char *sv = rd_form(r, ds, fmt[i][1], &num);
			if (fmt[i][0] == DW_LNCT_path)
				path = sv;
			else if (fmt[i][0] == DW_LNCT_directory_index)
				dir = num;
		}
		if (r->p == at) {
			r->bad = true;
			break;
		}
		if (files)
			lp_add_file(l, f, path ? path : "?", dir);
		else
			vec_push(&f->dirs, path ? path : "");
	}
}

struct line_rows {
	struct line_row *v;
	int n, cap;
};

/* A sequence of rows (one run of the state machine up to end_sequence): increasing
 * addresses in every line program seen so far, so the table is sorted by sorting them. */
struct lp_seq {
	uint64_t addr;
	size_t start, n;
};

struct lp_seqs {
	struct lp_seq *v;
	int n, cap;
	bool unsorted; /* a sequence whose addresses go down: sort the rows instead */
};

struct lp_state {
	uint64_t addr;
	uint64_t file, line;
	bool stmt; /* is_stmt */
	size_t seq_start; /* first row of the current sequence */
};

static void lp_end_seq(struct line_rows *rows, struct lp_seqs *seqs, const struct lp_state *st)
{
	if ((size_t)rows->n > st->seq_start) {
		struct lp_seq q = {rows->v[st->seq_start].addr, st->seq_start,
				   (size_t)rows->n - st->seq_start};
		vec_push(seqs, q);
	}
}

static void lp_emit(struct line_rows *rows, struct lp_seqs *seqs, struct lp_state *st,
		    const struct lp_files *f, bool end)
{
	struct line_row r = {.addr = st->addr, .file = UINT32_MAX};
	uint64_t fi = st->file - (uint64_t)f->base;
	if (!end && st->file >= (uint64_t)f->base && fi < (uint64_t)f->files.n && st->line &&
	    st->line <= INT32_MAX) {
		r.file = f->files.v[fi];
		r.line = (uint32_t)st->line;
		r.stmt = st->stmt;
	}
	/* rows at one address: the last one describes it (a statement still starts there
	 * when an earlier row of the same line said so) */
	if ((size_t)rows->n > st->seq_start && rows->v[rows->n - 1].addr >= r.addr) {
		struct line_row *last = &rows->v[rows->n - 1];
		if (last->addr == r.addr) {
			if (last->file == r.file && last->line == r.line)
				r.stmt |= last->stmt;
			*last = r;
			return;
		}
		seqs->unsorted = true;
	}
	vec_push(rows, r);
}

/* Runs the line program of the unit at R (R is left after it). */
static void lp_unit(struct binfo_lines *l, struct rd *r, struct dwsecs *ds,
		    struct line_rows *rows, struct lp_seqs *seqs)
{
	struct lp_files f = {0};
	uint8_t stdlen[256] = {0};
	uint64_t len = rd_n(r, 4);
	ds->dwarf64 = len == 0xffffffffu;
	if (ds->dwarf64)
		len = rd_n(r, 8);
	if (r->bad || len > (uint64_t)(r->end - r->p)) {
		r->bad = true;
		return;
	}
	struct rd u = {r->p, r->p + len, false};
	r->p += len;
	unsigned version = (unsigned)rd_n(&u, 2);
	if (version < 2 || version > 5)
		return; /* not one we know: skip the unit */
	if (version >= 5) {
		ds->addr_size = (int)rd_n(&u, 1);
		rd_n(&u, 1); /* segment selector size */
	}
	uint64_t hlen = rd_n(&u, ds->dwarf64 ? 8 : 4);
	if (u.bad || hlen > (uint64_t)(u.end - u.p))
		return;
	struct rd prog = {u.p + hlen, u.end, false};
	uint64_t min_len = rd_n(&u, 1);
	uint64_t max_ops = version >= 4 ? rd_n(&u, 1) : 1;
	bool default_stmt = rd_n(&u, 1) != 0;
	int64_t line_base = (int8_t)rd_n(&u, 1);
	uint64_t line_range = rd_n(&u, 1);
	uint64_t op_base = rd_n(&u, 1);
	if (u.bad || !line_range || !op_base || !max_ops)
		return;
	for (uint64_t i = 1; i < op_base; i++)
		stdlen[i] = (uint8_t)rd_n(&u, 1);
	if (version >= 5) {
		f.base = 0;
		lp_entries_v5(l, &u, ds, &f, false);
		lp_entries_v5(l, &u, ds, &f, true);
	} else {
		f.base = 1;
		vec_push(&f.dirs, ""); /* 0: the compilation directory */
		for (const char *d; !u.bad && *(d = rd_str(&u));)
			vec_push(&f.dirs, d);
		for (const char *n; !u.bad && *(n = rd_str(&u));) {
			uint64_t dir = rd_uleb(&u);
			rd_uleb(&u); /* mtime */
			rd_uleb(&u); /* length */
			lp_add_file(l, &f, n, dir);
		}
	}
	if (u.bad)
		goto out;

	struct lp_state st = {.file = 1, .line = 1, .seq_start = (size_t)rows->n,
			      .stmt = default_stmt};
	uint64_t op_index = 0;
	while (prog.p < prog.end && !prog.bad) {
		uint64_t op = rd_n(&prog, 1), adv;
		if (op >= op_base) {
			uint64_t adj = op - op_base;
			adv = adj / line_range;
			st.addr += min_len * ((op_index + adv) / max_ops);
			op_index = (op_index + adv) % max_ops;
			st.line += (uint64_t)(line_base + (int64_t)(adj % line_range));
			lp_emit(rows, seqs, &st, &f, false);
			continue;
		}
		switch (op) {
		case 0: { /* extended */
			uint64_t elen = rd_uleb(&prog);
			if (prog.bad || !elen || elen > (uint64_t)(prog.end - prog.p)) {
				prog.bad = true;
				break;
			}
			const uint8_t *next = prog.p + elen;
			uint64_t sub = rd_n(&prog, 1);
			if (sub == DW_LNE_end_sequence) {
				lp_emit(rows, seqs, &st, &f, true);
				lp_end_seq(rows, seqs, &st);
				st = (struct lp_state){.file = 1, .line = 1,
						       .seq_start = (size_t)rows->n,
						       .stmt = default_stmt};
				op_index = 0;
			} else if (sub == DW_LNE_set_address && elen - 1 <= 8) {
				st.addr = rd_n(&prog, (int)(elen - 1));
				op_index = 0;
				/* Go's compiler (cmd/internal/obj generateDebugLinesSymbol) starts
				 * each function with set_address and writes a row only when file,
				 * line or is_stmt differ from the initial state: a first
				 * instruction at file 1, line 1 (<autogenerated> code since DWARF
				 * 5 put "?" at file 0) gets none. That state is what holds there,
				 * as .gopclntab says; a real row at this address replaces it. */
				if ((size_t)rows->n == st.seq_start && st.file == 1 && st.line == 1)
					lp_emit(rows, seqs, &st, &f, false);
			} else if (sub == DW_LNE_define_file && version < 5) {
				const char *n = rd_str(&prog);
				uint64_t dir = rd_uleb(&prog);
				if (!prog.bad)
					lp_add_file(l, &f, n, dir);
			}
			prog.p = next;
			break;
		}
		case DW_LNS_copy:
			lp_emit(rows, seqs, &st, &f, false);
			break;
		case DW_LNS_advance_pc:
			adv = rd_uleb(&prog);
			st.addr += min_len * ((op_index + adv) / max_ops);
			op_index = (op_index + adv) % max_ops;
			break;
		case DW_LNS_advance_line:
			st.line += (uint64_t)rd_sleb(&prog);
			break;
		case DW_LNS_set_file:
			st.file = rd_uleb(&prog);
			break;
		case DW_LNS_negate_stmt:
			st.stmt = !st.stmt;
			break;
		case DW_LNS_const_add_pc:
			adv = (255 - op_base) / line_range;
			st.addr += min_len * ((op_index + adv) / max_ops);
			op_index = (op_index + adv) % max_ops;
			break;
		case DW_LNS_fixed_advance_pc:
			st.addr += rd_n(&prog, 2);
			op_index = 0;
			break;
		default: /* column, basic_block, prologue/epilogue, isa, unknown */
			for (int i = 0; i < stdlen[op]; i++)
				rd_uleb(&prog);
			break;
		}
	}
	lp_end_seq(rows, seqs, &st); /* a sequence left without its end (malformed) */
out:
	vec_free(&f.dirs);
	vec_free(&f.files);
	strbuf_free(&f.path);
}

static int seq_cmp(const void *a, const void *b)
{
	const struct lp_seq *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int row_cmp(const void *a, const void *b)
{
	const struct line_row *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* an end-of-sequence marker sorts before a sequence starting at the same address */
	return (x->line != 0) - (y->line != 0);
}

/* Decompressed bytes of section NAME (or .zdebug_NAME) of E, or an empty sec. */
static struct sec dw_section(Elf *e, const char *name)
{
	struct sec out = {0};
	char zname[64];
	GElf_Shdr sh;
	bool gnu = false;
	Elf_Scn *scn = binfo_elf_section(e, name, SHT_NULL, &sh);
	if (!scn) { /* ".debug_line" -> ".zdebug_line" */
		snprintf(zname, sizeof(zname), ".zdebug_%s", name + 7);
		scn = binfo_elf_section(e, zname, SHT_NULL, &sh);
		gnu = scn != NULL;
	}
	if (!scn)
		return out;
	if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return out;
	if (gnu && elf_compress_gnu(scn, 0, 0) < 0)
		return out;
	Elf_Data *d = elf_getdata(scn, NULL);
	if (d && d->d_buf) {
		out.d = d->d_buf;
		out.size = d->d_size;
	}
	return out;
}

/* 0 with the table built, -ENOENT when the binary has no usable .debug_line. */
static int dwarf_lines(struct binfo_lines *l)
{
	struct line_rows rows = {0};
	struct lp_seqs seqs = {0};
	struct dwsecs ds = {0};
	int err = -ENOENT;
	/* a private handle: decompression replaces section data in the handle */
	int fd = binfo_reopen(l->bi);
	if (fd < 0)
		return -errno;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e)
		goto out;
	ds.line = dw_section(e, ".debug_line");
	ds.str = dw_section(e, ".debug_str");
	ds.line_str = dw_section(e, ".debug_line_str");
	if (!ds.line.d) /* no .debug_line (stripped): NULL + 0 is undefined too */
		goto out;
	struct rd r = {ds.line.d, ds.line.d + ds.line.size, false};
	while (r.p < r.end && !r.bad)
		lp_unit(l, &r, &ds, &rows, &seqs);
	if (!rows.n)
		goto out;
	if (!seqs.unsorted) {
		/* concatenate the sequences in address order */
		vec_sort(&seqs, seq_cmp);
		struct line_row *sorted = xmalloc((size_t)rows.n * sizeof(*sorted));
		size_t k = 0;
		for (int i = 0; i < seqs.n; i++) {
			memcpy(sorted + k, rows.v + seqs.v[i].start, seqs.v[i].n * sizeof(*sorted));
			k += seqs.v[i].n;
		}
		free(rows.v);
		rows.v = sorted;
		rows.n = (int)k;
	}
	bool sorted = true;
	for (int i = 1; i < rows.n && sorted; i++)
		sorted = row_cmp(&rows.v[i - 1], &rows.v[i]) <= 0;
	if (!sorted) /* overlapping sequences or ones going down: sort the rows */
		vec_sort(&rows, row_cmp);
	l->rows = rows.v;
	l->nrows = (size_t)rows.n;
	rows.v = NULL;
	err = 0;
out:
	vec_free(&rows);
	vec_free(&seqs);
	if (e)
		elf_end(e);
	close(fd);
	return err;
}

/* The row describing PC: the last one at or below it, unless that ends a sequence. */
static const struct line_row *dwarf_row(const struct binfo_lines *l, uint64_t pc)
{
	size_t lo = 0, hi = l->nrows;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l->rows[mid].addr <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || !l->rows[lo - 1].line)
		return NULL;
	return &l->rows[lo - 1];
}

/* ---- API ---- */

int binfo_lines__open(struct binfo *bi, enum binfo_lines_source want, struct binfo_lines **out)
{
	struct binfo_lines *l = xcalloc(1, sizeof(*l));
	l->bi = bi;
	l->pcln_ok = pcln_open(bi, &l->pcln);
	*out = NULL;
	if (want != BINFO_LINES_PCLNTAB && dwarf_lines(l) == 0)
		l->source = BINFO_LINES_DWARF;
	else if (want != BINFO_LINES_DWARF && l->pcln_ok)
		l->source = BINFO_LINES_PCLNTAB;
	else {
		binfo_lines__close(l);
		return -ENOENT;
	}
	*out = l;
	return 0;
}

void binfo_lines__close(struct binfo_lines *l)
{
	if (!l)
		return;
	free(l->rows);
	names_free(&l->files);
	free(l);
}

enum binfo_lines_source binfo_lines_source(const struct binfo_lines *l)
{
	return l->source;
}

const struct binfo_func *binfo_func_at(struct binfo *bi, uint64_t addr)
{
	int lo = 0, hi = bi->nfuncs;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (bi->funcs[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* same-address aliases sort by name: any of them holds ADDR if one does */
	for (int i = lo - 1; i >= 0 && bi->funcs[i].addr == bi->funcs[lo - 1].addr; i--)
		if (addr - bi->funcs[i].addr < bi->funcs[i].size)
			return &bi->funcs[i];
	return NULL;
}

int binfo_lines_lookup(struct binfo_lines *l, uint64_t pc, struct binfo_pcline *out)
{
	struct pfunc f;
	bool have_func = l->pcln_ok && pcln_func(&l->pcln, pc, &f);
	memset(out, 0, sizeof(*out));
	if (have_func) {
		out->outer = pcln_name(&l->pcln, f.name);
		out->func = pcln_inlined(l->bi, &l->pcln, &f, pc);
	}
	if (!out->outer) {
		const struct binfo_func *sym = binfo_func_at(l->bi, pc);
		out->outer = sym ? sym->name : NULL;
	}
	if (!out->func)
		out->func = out->outer;
	if (l->source == BINFO_LINES_DWARF) {
		const struct line_row *r = dwarf_row(l, pc);
		if (r) {
			out->file = l->files.v[r->file];
			out->line = (int)r->line;
		}
	} else if (have_func && !pcln_fileline(&l->pcln, &f, pc, &out->file, &out->line)) {
		out->file = NULL;
		out->line = 0;
	}
	return out->func || out->file ? 0 : -ENOENT;
}
