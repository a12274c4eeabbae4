/*
 * runtime.firstmoduledata of a Go binary, found without symbols: the word that points
 * at .gopclntab (moduledata.pcHeader) starts it. Go 1.26 no longer writes textStart
 * into the pclntab header, so a stripped binary's text start comes from here.
 */
#include <string.h>

#include "arch/arch.h"
#include "binfo/binfo_int.h"

/* moduledata's head has kept this layout since Go 1.16: pcHeader, five slices
 * (funcnametab, cutab, filetab, pctab, pclntable), ftab, findfunctab, minpc, maxpc,
 * text, etext. Word indexes: */
#define MD_TEXT 22

/* Calls FN(ctx, rela) for each relative relocation (arch.h) until it returns true. */
static bool each_relative(const struct binfo *bi, bool (*fn)(void *, const Elf64_Rela *),
			  void *ctx)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(bi->elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    sh.sh_entsize != sizeof(Elf64_Rela) || sh.sh_offset > bi->img_size ||
		    sh.sh_size > bi->img_size - sh.sh_offset)
			continue;
		size_t n = sh.sh_size / sizeof(Elf64_Rela);
		for (size_t i = 0; i < n; i++) {
			Elf64_Rela r;
			memcpy(&r, bi->img + sh.sh_offset + i * sizeof(r), sizeof(r));
			if (ELF64_R_TYPE(r.r_info) == arch_reloc_relative && fn(ctx, &r))
				return true;
		}
	}
	return false;
}

struct rel_match {
	uint64_t key, found; /* key: r_offset or addend, depending on the matcher */
};

static bool at_offset(void *ctx, const Elf64_Rela *r)
{
	struct rel_match *m = ctx;
	if (r->r_offset != m->key)
		return false;
	m->found = (uint64_t)r->r_addend;
	return true;
}

static bool with_addend(void *ctx, const Elf64_Rela *r)
{
	struct rel_match *m = ctx;
	if ((uint64_t)r->r_addend != m->key)
		return false;
	m->found = r->r_offset;
	return true;
}

uint64_t binfo__relative_addend(const struct binfo *bi, uint64_t vaddr)
{
	struct rel_match m = {vaddr, 0};
	return each_relative(bi, at_offset, &m) ? m.found : 0;
}

/* The pointer-sized word at VADDR as the loaded program sees it (a PIE's are filled in
 * by relocations), 0 when unknown. */
static uint64_t loaded_word(const struct binfo *bi, uint64_t vaddr)
{
	const uint8_t *p = binfo__bytes_at(bi, vaddr, 8);
	uint64_t v = p ? binfo_le64(p) : 0;
	return v ? v : binfo__relative_addend(bi, vaddr);
}

/* Address of moduledata: an aligned word equal to PCLNTAB in the data sections Go's
 * linker puts it in, else (PIE) the target of a relocation whose addend is PCLNTAB. */
static uint64_t find_moduledata(const struct binfo *bi, uint64_t pclntab)
{
	static const char *const secs[] = {".go.module", ".noptrdata", ".data",
					   ".data.rel.ro"};
	for (size_t s = 0; s < sizeof(secs) / sizeof(secs[0]); s++) {
		uint64_t size, addr;
		const uint8_t *d = binfo__section(bi, secs[s], &size, &addr);
		for (uint64_t o = 0; d && o + 8 * (MD_TEXT + 1) <= size; o += 8)
			if (binfo_le64(d + o) == pclntab)
				return addr + o;
	}
	struct rel_match m = {pclntab, 0};
	return each_relative(bi, with_addend, &m) ? m.found : 0;
}

uint64_t binfo__moduledata_text(const struct binfo *bi, uint64_t pclntab)
{
	uint64_t md = find_moduledata(bi, pclntab);
	return md ? loaded_word(bi, md + 8 * MD_TEXT) : 0;
}

/* Word index of moduledata.gofunc, by release: 1.20 added covctrs, ecovctrs before it;
 * 1.27 typedesclen, itaboffset, itabsize (runtime/symtab.go). rodata precedes it. */
static int gofunc_index(int minor)
{
	/* funcdata offsets are from go:func.* since 1.18 */
	return minor >= 27 ? 43 : minor >= 20 ? 40 : minor >= 18 ? 38 : -1;
}

uint64_t binfo__moduledata_gofunc(const struct binfo *bi, uint64_t pclntab)
{
	int ix = gofunc_index(binfo_go_minor(bi));
	uint64_t md, size, addr;
	if (ix < 0 || !(md = find_moduledata(bi, pclntab)) ||
	    !binfo__section(bi, ".rodata", &size, &addr))
		return 0;
	/* a layout this does not know (a release past 1.27 may move the fields again):
	 * the word before is not moduledata.rodata, and the inline trees stay unread */
	uint64_t ro = loaded_word(bi, md + 8 * (uint64_t)(ix - 1));
	if (ro < addr || ro - addr >= size)
		return 0;
	uint64_t g = loaded_word(bi, md + 8 * (uint64_t)ix);
	return g && binfo__bytes_at(bi, g, 8) ? g : 0;
}

/* "go1.N" or "go1.N.P" at S (LEN bytes, not NUL-terminated), optionally followed by a
 * space and the experiments ("go1.26.5 X:nodwarf5"): its (minor, patch) as one number
 * for ordering, -1 when it is not a release version. */
static long release_rank(const uint8_t *s, uint64_t len)
{
	if (!s || len < 5 || len > 64 || memcmp(s, "go1.", 4) != 0)
		return -1;
	long minor = 0, patch = 0, *cur = &minor;
	uint64_t i = 4;
	for (; i < len && s[i] != ' '; i++) {
		if (s[i] >= '0' && s[i] <= '9' && *cur < 100000)
			*cur = *cur * 10 + (s[i] - '0');
		else if (s[i] == '.' && cur == &minor && i > 4)
			cur = &patch;
		else
			return -1;
	}
	for (; i < len; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return -1;
	return minor * 100000 + patch;
}

/* runtime.buildVersion of a binary without build info or symbols: a Go string header
 * {ptr, len} in the data sections pointing at "go1.N[.P]". go/build's release tags
 * ("go1.1" .. "go1.N", N the toolchain's) can be there too: the highest wins, and it is
 * the toolchain's either way. In a PIE the pointer word is 0 in the file and carried by
 * a relocation, which each_relative finds. Returns the address of the bytes and their
 * length in *LEN, 0 when nothing is found. */
struct ver_scan {
	const struct binfo *bi;
	long best;
	uint64_t addr, len;
};

static void ver_consider(struct ver_scan *v, uint64_t ptr, uint64_t len)
{
	long r = len <= 64 ? release_rank(binfo__bytes_at(v->bi, ptr, len), len) : -1;
	if (r > v->best) {
		v->best = r;
		v->addr = ptr;
		v->len = len;
	}
}

static bool ver_reloc(void *ctx, const Elf64_Rela *r)
{
	struct ver_scan *v = ctx;
	const uint8_t *len = binfo__bytes_at(v->bi, r->r_offset + 8, 8);
	if (len)
		ver_consider(v, (uint64_t)r->r_addend, binfo_le64(len));
	return false; /* look at them all */
}

uint64_t binfo__scan_version(const struct binfo *bi, uint64_t *len)
{
	static const char *const secs[] = {".data", ".noptrdata", ".data.rel.ro"};
	struct ver_scan v = {bi, -1, 0, 0};
	for (size_t s = 0; s < sizeof(secs) / sizeof(secs[0]); s++) {
		uint64_t size, addr;
		const uint8_t *d = binfo__section(bi, secs[s], &size, &addr);
		for (uint64_t o = 0; d && o + 16 <= size; o += 8) {
			uint64_t n = binfo_le64(d + o + 8);
			if (n >= 5 && n <= 64)
				ver_consider(&v, binfo_le64(d + o), n);
		}
	}
	if (bi->pie)
		each_relative(bi, ver_reloc, &v);
	*len = v.len;
	return v.addr;
}
