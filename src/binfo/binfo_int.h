/* binfo internals shared by the files of src/binfo; not for other modules. */
#ifndef GT_BINFO_INT_H
#define GT_BINFO_INT_H

#include <string.h>
#include <time.h>
#include <gelf.h>
#include <libelf.h>

#include "binfo/binfo.h"

struct binfo_load {
	uint64_t vaddr, filesz, offset;
};

struct arch_dis;

struct binfo {
	bool is_go; /* .gopclntab, Go build info or runtime.buildVersion */
	char *path; /* realpath, or the path as given when that names another file
		     * (/proc/PID/exe of a process in another mount namespace) */
	char *go_version;
	int fd;
	dev_t dev; /* the opened file's: /proc/PID/maps names a file by them too */
	ino_t ino;
	off_t size;             /* with dev, ino: the file's identity for binfo_store */
	struct timespec mtime;
	Elf *elf;
	const uint8_t *img; /* whole file, mapped by libelf (ELF_C_READ_MMAP) */
	size_t img_size;
	/* dw.c's dwarf_sane, once per binary (it inflates the lists): 0 not yet, 1, -1 */
	int dwarf_checked;
	bool pie;

	struct binfo_load *loads;
	int nloads;

	/* Functions sorted by (addr, name), deduplicated. Names point into img. */
	struct binfo_func *funcs;
	int nfuncs;
	/* Name hash: open addressing over funcs indexes + 1 (0 = empty). Only the
	 * lowest-address function of a name is in the table; same_next chains the
	 * others (C statics of a cgo binary can share a name). */
	uint32_t *name_tab;
	uint32_t name_mask;
	int32_t *same_next;
	char *renamed; /* names this binfo made (ABI0 wrappers of a stripped binary) */
	char *dotted;  /* .gopclntab names with '·' spelled '.', as in the symbol table */
	/* binfo_entry_addr's answers by funcs index: entry - addr + 1 (0 = not yet) */
	uint32_t *entry_memo;
	/* binfo_frameless's by funcs index: 1 has a frame, 2 has none (0 = not yet) */
	uint8_t *frameless_memo;
	/* binfo_is_insn_boundary's by funcs index: a bitmap of the instruction starts */
	uint8_t **insn_memo;
	/* every inlined copy, by (name, addr), made on first use (goinline.c): one walk of
	 * the inline trees for all patterns, not one each (500 of a web server's: 20 s) */
	struct binfo_inlined *inl;
	int ninl;       /* -ENOENT: no trees to read */
	int *inl_names; /* the index in inl of each name's first copy, and ninl after them */
	int ninl_names;
	bool inl_done;

	struct arch_dis *dis; /* the processor's decoder (arch.h), made on first use */
};

/* Pointer to LEN file bytes at virtual address VADDR, or NULL when not all in the file. */
/* binfo_set_store's, or NULL */
const struct binfo_store *binfo__store(void);
/* KEY for binfo_store: WHAT (with its format's version) of BI's file, by its identity.
 * Malloc'd. */
char *binfo__store_key(const struct binfo *bi, const char *what);
const uint8_t *binfo__bytes_at(const struct binfo *bi, uint64_t vaddr, uint64_t len);

/* A function's Go parameters kept by binfo_store (gostore.c): 0 and *OUT (in A), or
 * -errno when not kept or not whole. */
struct binfo_gofunc;
struct arena;
void binfo__gostore_save(struct binfo *bi, const struct binfo_gofunc *f);
int binfo__gostore_load(struct binfo *bi, struct arena *a, const char *func,
			const struct binfo_gofunc **out);

/* The block F's stack check branches to (calling runtime.morestack and jumping back to
 * F's start), 0 when F has no stack check (disasm.c). */
uint64_t binfo__morestack_block(struct binfo *bi, const struct binfo_func *f);

/* An unsigned / signed LEB128 (Go's uvarint, DWARF's ULEB128 / SLEB128) at *P,
 * advancing *P; false when it runs past END. */
bool binfo_uleb128(const uint8_t **p, const uint8_t *end, uint64_t *v);
bool binfo_sleb128(const uint8_t **p, const uint8_t *end, int64_t *v);

/* The 8-byte word at P (x86-64 only: host and target are little-endian). */
static inline uint64_t binfo_le64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/* The first section of E called NAME and of TYPE (SHT_NULL: any type with file bytes),
 * its header in *SH; NULL when there is none. */
Elf_Scn *binfo_elf_section(Elf *e, const char *name, unsigned type, GElf_Shdr *sh);
/* The file bytes of PROGBITS section NAME of BI's image, its size and (ADDR not NULL)
 * address; NULL when absent or not inside the file. */
const uint8_t *binfo__section(const struct binfo *bi, const char *name, uint64_t *size,
                              uint64_t *addr);

/* Functions from .gopclntab (Go 1.18+), for binaries without a symbol table: name
 * (pointing into the image), entry, size (the code its pc tables cover, at most the
 * distance to the next function's entry). In address order. Returns 0 with *out
 * malloc'd, or -ENOENT / -EINVAL when the table is absent / malformed. */
int binfo__pcln_funcs(struct binfo *bi, struct binfo_func **out, int *nout);
/* Whether NAME is one of the linker's text markers (go:textfipsstart ...): symbols that
 * bracket a range of text, neither code nor a function to probe. */
bool binfo__is_text_marker(const char *name);

/* Addend of the relative relocation (arch.h) of the word at VADDR, 0 when none: in a
 * PIE the dynamic loader fills pointers such as pclntab's textStart in from these. */
uint64_t binfo__relative_addend(const struct binfo *bi, uint64_t vaddr);
/* moduledata.text of the module whose .gopclntab is at PCLNTAB, 0 when not found. */
uint64_t binfo__moduledata_text(const struct binfo *bi, uint64_t pclntab);
/* moduledata.gofunc (where the go:func.* symbol is: the base of funcdata offsets) of a
 * binary without symbols, 0 when unknown; needs the Go version. */
uint64_t binfo__moduledata_gofunc(const struct binfo *bi, uint64_t pclntab);
/* Address and length of the Go version string found by scanning the data for a string
 * header (binaries without build info or symbols), 0 when none is found. */
uint64_t binfo__scan_version(const struct binfo *bi, uint64_t *len);

#endif
