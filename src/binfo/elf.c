/* binfo/elf: open a Go ELF executable, index its functions, map addresses to file
 * offsets, read the Go version. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch/arch.h"
#include "binfo/binfo_int.h"
#include "binfo/lines_int.h"
#include "common/diag.h"
#include "common/util.h"

/* Symbols needed to read the Go version when .go.buildinfo does not help. */
struct version_syms {
	uint64_t hdr_addr; /* runtime.buildVersion: Go string header {ptr, len} */
	uint64_t str_addr; /* runtime.buildVersion.str: the bytes (pointer-free, so PIE-safe) */
};

const char *binfo_path(const struct binfo *bi)
{
	return bi->path;
}

bool binfo_same_file(const struct binfo *bi, dev_t dev, ino_t ino)
{
	return bi->dev == dev && bi->ino == ino;
}

/* The file binfo read, opened again by its descriptor: the same file even when its
 * path was replaced, removed, or names a file of another mount namespace. */
int binfo_reopen(const struct binfo *bi)
{
	char fdpath[64];
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", bi->fd);
	int fd = open(fdpath, O_RDONLY | O_CLOEXEC);
	return fd >= 0 ? fd : open(bi->path, O_RDONLY | O_CLOEXEC);
}

/* realpath(PATH) when it names the file opened (dev, ino); else PATH as given:
 * /proc/PID/exe's link text is a path in the process's mount namespace, or ends in
 * " (deleted)", and /proc/PID/exe itself reaches the file from here. */
static char *own_path(const char *path, const struct stat *opened)
{
	char *rp = realpath(path, NULL);
	struct stat st;
	if (rp && !stat(rp, &st) && st.st_dev == opened->st_dev && st.st_ino == opened->st_ino)
		return rp;
	free(rp);
	return xstrdup(path);
}

const char *binfo_go_version(const struct binfo *bi)
{
	return bi->go_version;
}

bool binfo_is_pie(const struct binfo *bi)
{
	return bi->pie;
}

int binfo_vaddr_to_offset(const struct binfo *bi, uint64_t vaddr, uint64_t *off)
{
	for (int i = 0; i < bi->nloads; i++) {
		const struct binfo_load *l = &bi->loads[i];
		if (vaddr >= l->vaddr && vaddr - l->vaddr < l->filesz) {
			*off = vaddr - l->vaddr + l->offset;
			return 0;
		}
	}
	return -ENOENT;
}

int binfo_gnu_build_id(const struct binfo *bi, const uint8_t **id, size_t *len)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(bi->elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off, next;
		/* gelf_getnote bounds every note by the section's data */
		while (d && (next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && nh.n_descsz &&
			    !memcmp((const char *)d->d_buf + name_off, "GNU", 4)) {
				*id = (const uint8_t *)d->d_buf + desc_off;
				*len = nh.n_descsz;
				return 0;
			}
			off = next;
		}
	}
	return -ENOENT;
}

int binfo_symbol_addr(const struct binfo *bi, const char *name, uint64_t *addr)
{
	GElf_Shdr sh;
	Elf_Scn *scn = binfo_elf_section(bi->elf, ".symtab", SHT_SYMTAB, &sh);
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
	size_t n = data && sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *nm;
		if (gelf_getsym(data, (int)i, &sym) && sym.st_value &&
		    (nm = elf_strptr(bi->elf, sh.sh_link, sym.st_name)) && !strcmp(nm, name)) {
			*addr = sym.st_value;
			return 0;
		}
	}
	const struct binfo_func *f = binfo_find_func((struct binfo *)bi, name);
	if (!f)
		return -ENOENT; /* no .symtab: the functions .gopclntab names still count */
	*addr = f->addr;
	return 0;
}

/* The kernel maps a PT_LOAD segment from its first page: file offset PAGE_DOWN(p_offset)
 * at PAGE_DOWN(p_vaddr). Two segments can share a page of the file (lld packs them: a
 * cgo build's R and R E segments), and that page, as a mapping's offset, is then the
 * second one's start: a segment whose first page is OFF is taken before one that holds
 * OFF (else the text's bias came out a page size off, and every frame of a stack with
 * it). */
int binfo_offset_to_vaddr(const struct binfo *bi, uint64_t off, uint64_t *vaddr)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t mask = ~((uint64_t)(pg > 0 ? pg : 4096) - 1);
	for (int i = 0; i < bi->nloads; i++) {
		const struct binfo_load *l = &bi->loads[i];
		if ((l->offset & mask) == off && l->offset - off <= l->vaddr) {
			*vaddr = l->vaddr - (l->offset - off);
			return 0;
		}
	}
	for (int i = 0; i < bi->nloads; i++) {
		const struct binfo_load *l = &bi->loads[i];
		if (off >= l->offset && off - l->offset < l->filesz) {
			*vaddr = off - l->offset + l->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

const uint8_t *binfo__bytes_at(const struct binfo *bi, uint64_t vaddr, uint64_t len)
{
	for (int i = 0; i < bi->nloads; i++) {
		const struct binfo_load *l = &bi->loads[i];
		if (vaddr < l->vaddr || vaddr - l->vaddr >= l->filesz)
			continue;
		/* The whole range must come from this one segment's file bytes. */
		if (len > l->filesz - (vaddr - l->vaddr))
			return NULL;
		uint64_t off = vaddr - l->vaddr + l->offset;
		if (off > bi->img_size || len > bi->img_size - off)
			return NULL;
		return bi->img + off;
	}
	return NULL;
}

/* A plausible Go version string ("go1.19.8", "devel go1.22-abc ..."): short, printable. */
static char *version_dup(const uint8_t *s, uint64_t len)
{
	if (!s || len == 0 || len > 128)
		return NULL;
	for (uint64_t i = 0; i < len; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return NULL;
	if (len < 2 || (memcmp(s, "go", 2) != 0 && (len < 5 || memcmp(s, "devel", 5) != 0)))
		return NULL;
	char *v = xmalloc(len + 1);
	memcpy(v, s, len);
	v[len] = 0;
	return v;
}

/* Any length (DWARF allows padding bytes); bits past 64 are dropped, as Go's
 * readvarint and the DWARF readers do. */
bool binfo_uleb128(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;
	for (int shift = 0; *p < end; shift += 7) {
		uint8_t b = *(*p)++;
		if (shift < 64)
			x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

bool binfo_sleb128(const uint8_t **p, const uint8_t *end, int64_t *v)
{
	uint64_t x = 0;
	for (int shift = 0; *p < end;) {
		uint8_t b = *(*p)++;
		if (shift < 64)
			x |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				x |= ~0ull << shift; /* sign-extend */
			*v = (int64_t)x;
			return true;
		}
	}
	return false;
}

Elf_Scn *binfo_elf_section(Elf *e, const char *name, unsigned type, GElf_Shdr *sh)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		if (!gelf_getshdr(scn, sh) || sh->sh_type == SHT_NOBITS ||
		    (type != SHT_NULL && sh->sh_type != type))
			continue;
		const char *nm = elf_strptr(e, shstrndx, sh->sh_name);
		if (nm && !strcmp(nm, name))
			return scn;
	}
	return NULL;
}

const uint8_t *binfo__section(const struct binfo *bi, const char *name, uint64_t *size,
                              uint64_t *addr)
{
	GElf_Shdr sh;
	if (!binfo_elf_section(bi->elf, name, SHT_PROGBITS, &sh) || sh.sh_offset > bi->img_size ||
	    sh.sh_size > bi->img_size - sh.sh_offset)
		return NULL;
	*size = sh.sh_size;
	if (addr)
		*addr = sh.sh_addr;
	return bi->img + sh.sh_offset;
}

/* Go string header {data, len} at VADDR -> copy of the version, NULL when it does not
 * resolve from file bytes (in a PIE the pointer is filled in by a relocation). */
static char *version_from_header(const struct binfo *bi, uint64_t vaddr, uint64_t str_addr)
{
	const uint8_t *h = binfo__bytes_at(bi, vaddr, 16);
	if (!h)
		return NULL;
	uint64_t data = binfo_le64(h), len = binfo_le64(h + 8);
	char *v = version_dup(binfo__bytes_at(bi, data, len), len);
	if (!v && str_addr)
		v = version_dup(binfo__bytes_at(bi, str_addr, len), len);
	return v;
}

/* .go.buildinfo: 16-byte header "\xff Go buildinf:", ptrsize, flags. Go >= 1.18 sets
 * flag 0x2 and stores varint-length strings inline at offset 32 (version first);
 * older ones store two pointers at offset 16, the first to the version's string header. */
static char *version_from_buildinfo(const struct binfo *bi, const uint8_t *p, size_t n,
                                    const struct version_syms *vs)
{
	static const char magic[] = "\xff Go buildinf:";
	if (n < 32 || memcmp(p, magic, sizeof(magic) - 1) != 0)
		return NULL;
	uint8_t ptrsize = p[14], flags = p[15];
	if (flags & 0x2) {
		const uint8_t *q = p + 32, *end = p + n;
		uint64_t len;
		if (!binfo_uleb128(&q, end, &len) || len > (uint64_t)(end - q))
			return NULL;
		return version_dup(q, len);
	}
	if (ptrsize != 8 || (flags & 0x1)) /* 64-bit little-endian only */
		return NULL;
	return version_from_header(bi, binfo_le64(p + 16), vs->str_addr);
}

static int func_cmp_addr(const void *a, const void *b)
{
	const struct binfo_func *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void sort_funcs(struct binfo *bi);

/* Collect defined STT_FUNC symbols of SCN; note the version symbols on the way. */
static void load_symbols(struct binfo *bi, Elf_Scn *scn, struct version_syms *vs)
{
	GElf_Shdr sh, strsh;
	Elf_Data *d, *sd;
	Elf_Scn *strscn;

	if (!gelf_getshdr(scn, &sh) || sh.sh_entsize != sizeof(Elf64_Sym))
		return;
	strscn = elf_getscn(bi->elf, sh.sh_link);
	if (!strscn || !gelf_getshdr(strscn, &strsh) || strsh.sh_type != SHT_STRTAB)
		return;
	d = elf_getdata(scn, NULL);
	sd = elf_getdata(strscn, NULL);
	if (!d || !sd || !d->d_buf || !sd->d_buf || sd->d_size == 0)
		return;
	const char *strs = sd->d_buf;
	size_t strsz = sd->d_size;
	if (strs[strsz - 1] != 0) /* names must end inside the table */
		return;

	/* Native layout (ELF64 LSB on x86-64): walk the array directly, no copies. */
	const Elf64_Sym *syms = d->d_buf;
	size_t nsyms = d->d_size / sizeof(Elf64_Sym);
	bi->funcs = xmalloc((nsyms ? nsyms : 1) * sizeof(*bi->funcs));
	int n = 0;
	for (size_t i = 0; i < nsyms; i++) {
		const Elf64_Sym *s = &syms[i];
		int type = ELF64_ST_TYPE(s->st_info);
		if (s->st_shndx == SHN_UNDEF || s->st_name == 0 || s->st_name >= strsz)
			continue;
		const char *name = strs + s->st_name;
		if (type == STT_OBJECT && name[0] == 'r' &&
		    strncmp(name, "runtime.buildVersion", 20) == 0) {
			if (name[20] == 0)
				vs->hdr_addr = s->st_value;
			else if (strcmp(name + 20, ".str") == 0)
				vs->str_addr = s->st_value;
			continue;
		}
		if (type != STT_FUNC || binfo__is_text_marker(name))
			continue;
		bi->funcs[n].name = name;
		bi->funcs[n].addr = s->st_value;
		bi->funcs[n].size = s->st_size;
		n++;
	}
	bi->nfuncs = n;
	sort_funcs(bi);
}

/* Sort bi->funcs by (addr, name) and drop exact duplicates. */
static void sort_funcs(struct binfo *bi)
{
	int n = bi->nfuncs;
	if (n == 0) {
		free(bi->funcs);
		bi->funcs = NULL;
		return;
	}

	/* Go's linker emits symbols in a few runs of address order (Caddy's 71,580: five):
	 * merged, not sorted (glibc's qsort compared n log n times: 41 M instructions) */
	sort_runs(bi->funcs, (size_t)n, sizeof(*bi->funcs), func_cmp_addr);
	int m = 0;
	for (int i = 0; i < n; i++) {
		if (m > 0 && bi->funcs[m - 1].addr == bi->funcs[i].addr &&
		    strcmp(bi->funcs[m - 1].name, bi->funcs[i].name) == 0)
			continue; /* cgo binaries list some symbols twice (LOCAL and GLOBAL) */
		bi->funcs[m++] = bi->funcs[i];
	}
	bi->nfuncs = m;
	bi->funcs = xrealloc(bi->funcs, (size_t)m * sizeof(*bi->funcs));
}

bool binfo__is_text_marker(const char *name)
{
	/* cmd/link fips140.go: 1-byte symbols around the FIPS 140 module's code (Go 1.24+);
	 * .gopclntab lists them as functions up to the next entry, the symbols as FUNC */
	return name[0] == 'g' && (strcmp(name, "go:textfipsstart") == 0 ||
				  strcmp(name, "go:textfipsend") == 0);
}

/* A Go binary without .symtab (go build -ldflags=-s, strip): add the functions of
 * .gopclntab to what .dynsym gave (the C functions of a stripped cgo build). */
static void load_pclntab_funcs(struct binfo *bi)
{
	struct binfo_func *pf;
	int n;
	if (binfo__pcln_funcs(bi, &pf, &n) != 0 || n == 0) {
		free(pf); /* a table of nameless functions gives an empty list */
		return;
	}
	/* The linker writes '·' as '.' into the symbol table ("for ASCII-only tools",
	 * cmd/link symtab.go); .gopclntab keeps it (type:.eq.runtime.untracedG·7 of Go
	 * 1.26). Spell it as the symbols do, so that a stripped binary's functions have
	 * the names its unstripped build has. */
	size_t len = 0;
	for (int i = 0; i < n; i++)
		if (strstr(pf[i].name, "\xc2\xb7"))
			len += strlen(pf[i].name) + 1;
	char *q = bi->dotted = len ? xmalloc(len) : NULL;
	for (int i = 0; q && i < n; i++) {
		if (!strstr(pf[i].name, "\xc2\xb7"))
			continue;
		const char *s = pf[i].name;
		pf[i].name = q;
		while (*s)
			if ((unsigned char)s[0] == 0xc2 && (unsigned char)s[1] == 0xb7)
				*q++ = '.', s += 2;
			else
				*q++ = *s++;
		*q++ = 0;
	}
	bi->funcs = xrealloc(bi->funcs, ((size_t)bi->nfuncs + (size_t)n) * sizeof(*bi->funcs));
	memcpy(bi->funcs + bi->nfuncs, pf, (size_t)n * sizeof(*pf));
	bi->nfuncs += n;
	free(pf);
	sort_funcs(bi);
}

/* Hash index by name; O(n), cheaper than sorting ~100k long, shared-prefix names. */
static void build_name_index(struct binfo *bi)
{
	uint32_t cap = 16;
	while (cap < 2u * (uint32_t)bi->nfuncs)
		cap <<= 1;
	bi->name_tab = xcalloc(cap, sizeof(*bi->name_tab));
	bi->name_mask = cap - 1;
	bi->same_next = xmalloc((size_t)(bi->nfuncs ? bi->nfuncs : 1) * sizeof(*bi->same_next));
	for (int i = 0; i < bi->nfuncs; i++) {
		const char *name = bi->funcs[i].name;
		uint32_t h = str_hash(name) & bi->name_mask;
		bi->same_next[i] = -1;
		for (;; h = (h + 1) & bi->name_mask) {
			uint32_t slot = bi->name_tab[h];
			if (slot == 0) {
				bi->name_tab[h] = (uint32_t)i + 1;
				break;
			}
			if (strcmp(bi->funcs[slot - 1].name, name) == 0) {
				/* Append: chains stay in address order. */
				int j = (int)slot - 1;
				while (bi->same_next[j] >= 0)
					j = bi->same_next[j];
				bi->same_next[j] = i;
				break;
			}
		}
	}
}

static bool is_abi0_wrapper(const struct binfo *bi, const struct binfo_func *f)
{
	const uint8_t *p = binfo__bytes_at(bi, f->addr, ARCH_GO_WRAPPER_PEEK);
	return p && f->size >= ARCH_GO_WRAPPER_PEEK && arch_go_abi0_wrapper(p, ARCH_GO_WRAPPER_PEEK);
}

static int lookup_index(const struct binfo *bi, const char *name);

/* Offset in F's code (a wrapper: small) of a direct call/jmp to TARGET, -1 when none. */
static int64_t call_at(const struct binfo *bi, const struct binfo_func *f, uint64_t target)
{
	uint64_t n = f->size < 256 ? f->size : 256;
	const uint8_t *p = binfo__bytes_at(bi, f->addr, n);
	return p ? arch_branch_to(p, (size_t)n, f->addr, target) : -1;
}

/* Whether wrapper F, calling its twin at byte AT, is the ABI0 one (arch.h). */
static bool abi0_caller(const struct binfo *bi, const struct binfo_func *f, int64_t at)
{
	const uint8_t *p = binfo__bytes_at(bi, f->addr, (uint64_t)at);
	return p && arch_go_abi0_caller(p, (size_t)at);
}

/* Whether F is assembly, by the source file .gopclntab gives its entry: 1, 0 (Go), -1
 * (not known). A wrapper calls its twin: the ABI0 one when the twin is assembly (the
 * ABIInternal wrapper Go code calls it through), the ABIInternal one when the twin is Go
 * (the ABI0 wrapper assembly calls it through). Where a wrapper's bytes cannot tell
 * (arm64: g in R28 under both ABIs; no arguments to move), this can. */
static int is_asm(const struct pcln *p, bool ok, const struct binfo_func *f)
{
	struct pfunc pf;
	const char *file;
	int line;
	if (!ok || !pcln_func(p, f->addr, &pf) || !pcln_fileline(p, &pf, f->addr, &file, &line))
		return -1;
	size_t n = strlen(file);
	return n > 2 && !strcmp(file + n - 2, ".s");
}

/* Of twins A and B, where W (one of them) calls the other at byte AT: the ABI0 one. */
static int abi0_twin(const struct binfo *bi, const struct pcln *p, bool ok, int w, int t,
		     int64_t at)
{
	int s = is_asm(p, ok, &bi->funcs[t]);
	if (s >= 0)
		return s ? t : w;
	return abi0_caller(bi, &bi->funcs[w], at) ? w : t;
}

/* .gopclntab names a function and its ABI wrapper alike (runtime.goexit1 twice), so a
 * wildcard would probe both and count each call twice. The symbol table calls the ABI0
 * one NAME.abi0: the ABI0 wrapper of a Go function, or the assembly function that an
 * ABIInternal wrapper calls. Name it so here too. Returns whether any was renamed. */
static bool name_abi0_wrappers(struct binfo *bi)
{
	size_t len = 0;
	bool *abi0 = xcalloc((size_t)bi->nfuncs + 1, sizeof(*abi0));
	struct pcln p;
	bool ok = pcln_open(bi, &p);
	for (int i = 0; i < bi->nfuncs; i++) {
		int a = lookup_index(bi, bi->funcs[i].name), b = a >= 0 ? bi->same_next[a] : -1;
		if (a != i || b < 0 || bi->same_next[b] >= 0)
			continue; /* not the first of exactly two */
		const struct binfo_func *fa = &bi->funcs[a], *fb = &bi->funcs[b];
		/* The wrapper calls its twin (see abi0_caller). */
		int64_t at;
		int k = is_abi0_wrapper(bi, fa) ? a : is_abi0_wrapper(bi, fb) ? b : -1;
		if (k < 0 && (at = call_at(bi, fa, fb->addr)) >= 0)
			k = abi0_twin(bi, &p, ok, a, b, at);
		else if (k < 0 && (at = call_at(bi, fb, fa->addr)) >= 0)
			k = abi0_twin(bi, &p, ok, b, a, at);
		if (k >= 0) {
			abi0[k] = true;
			len += strlen(bi->funcs[k].name) + sizeof(".abi0");
		}
	}
	char *q = bi->renamed = len ? xmalloc(len) : NULL;
	for (int i = 0; q && i < bi->nfuncs; i++)
		if (abi0[i]) {
			int w = sprintf(q, "%s.abi0", bi->funcs[i].name);
			bi->funcs[i].name = q;
			q += w + 1;
		}
	free(abi0);
	return len > 0;
}

static int lookup_index(const struct binfo *bi, const char *name)
{
	if (!bi->name_tab)
		return -1;
	for (uint32_t h = str_hash(name) & bi->name_mask;; h = (h + 1) & bi->name_mask) {
		uint32_t slot = bi->name_tab[h];
		if (slot == 0)
			return -1;
		if (strcmp(bi->funcs[slot - 1].name, name) == 0)
			return (int)slot - 1;
	}
}


const struct binfo_func *binfo_find_func(struct binfo *bi, const char *name)
{
	int i = lookup_index(bi, name);
	return i < 0 ? NULL : &bi->funcs[i];
}

/* Not functions, though .gopclntab lists them: the linker's markers of the text's start
 * and end (runtime.text, runtime.etext: an int3) and of an external object's code
 * ("net(.text)": C code of cgo, whose functions have names of their own). A wildcard
 * and -l leave them out; named alone, they are what they are. */
static bool is_text_marker(const char *name)
{
	size_t n = strlen(name);
	return (n > 7 && !memcmp(name + n - 7, "(.text)", 7)) || !strcmp(name, "runtime.text") ||
	       !strcmp(name, "runtime.etext");
}

int binfo_match_funcs(struct binfo *bi, const char *pattern, const struct binfo_func ***out)
{
	VEC(const struct binfo_func *) v = {0};

	if (!has_glob(pattern)) {
		for (int i = lookup_index(bi, pattern); i >= 0; i = bi->same_next[i])
			vec_push(&v, &bi->funcs[i]);
	} else {
		for (int i = 0; i < bi->nfuncs; i++)
			if (glob_match(pattern, bi->funcs[i].name) &&
			    !is_text_marker(bi->funcs[i].name))
				vec_push(&v, &bi->funcs[i]);
	}
	*out = v.v;
	return v.n;
}

static bool has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && memcmp(s + n - m, suf, m) == 0;
}

static const struct binfo_store *store;

void binfo_set_store(const struct binfo_store *s)
{
	store = s;
}

const struct binfo_store *binfo__store(void)
{
	return store;
}

char *binfo__store_key(const struct binfo *bi, const char *what)
{
	struct strbuf sb = {0};
	strbuf_printf(&sb, "%s\n%s:%lld:%lld.%09ld:%llu:%llu", what, bi->path,
		      (long long)bi->size, (long long)bi->mtime.tv_sec, bi->mtime.tv_nsec,
		      (unsigned long long)bi->ino, (unsigned long long)bi->dev);
	return sb.buf;
}

static int open_impl(const char *path, struct binfo **out, bool need_go, bool quiet);

/* open_impl's one message, unless the caller only wants to know whether it opens. */
__attribute__((format(printf, 2, 3))) static void open_error(bool quiet, const char *fmt, ...)
{
	if (quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	char msg[1024];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	diag_fatal("%s", msg);
}

int binfo__open(const char *path, struct binfo **out)
{
	return open_impl(path, out, true, false);
}

int binfo__open_elf(const char *path, struct binfo **out)
{
	return open_impl(path, out, false, false);
}

int binfo__open_quiet(const char *path, struct binfo **out)
{
	return open_impl(path, out, false, true);
}

bool binfo_is_go(const struct binfo *bi)
{
	return bi->is_go;
}

static int open_impl(const char *path, struct binfo **out, bool need_go, bool quiet)
{
	struct binfo *bi = xcalloc(1, sizeof(*bi));
	struct version_syms vs = {0};
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
	const uint8_t *buildinfo = NULL;
	size_t buildinfo_size = 0, shstrndx, nphdr;
	bool has_pclntab = false;
	struct stat st;
	GElf_Ehdr eh;
	int err;

	*out = NULL;
	bi->fd = -1;

	/* O_NONBLOCK: a FIFO must not hang us; it is then refused as "not an ELF file". */
	bi->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (bi->fd < 0) {
		err = -errno;
		open_error(quiet, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (fstat(bi->fd, &st) < 0) {
		err = -errno;
		open_error(quiet, "%s: %s", path, strerror(errno));
		goto fail;
	}
	bi->dev = st.st_dev;
	bi->ino = st.st_ino;
	bi->size = st.st_size;
	bi->mtime = st.st_mtim;
	if (S_ISDIR(st.st_mode)) {
		err = -EISDIR;
		open_error(quiet, "%s: %s", path, strerror(EISDIR));
		goto fail;
	}
	if (!S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf64_Ehdr))
		goto not_elf;

	elf_version(EV_CURRENT);
	bi->elf = elf_begin(bi->fd, ELF_C_READ_MMAP, NULL);
	if (!bi->elf || elf_kind(bi->elf) != ELF_K_ELF)
		goto not_elf;
	bi->img = (const uint8_t *)elf_rawfile(bi->elf, &bi->img_size);
	if (!bi->img)
		goto not_elf;

	const unsigned char *ident = (const unsigned char *)elf_getident(bi->elf, NULL);
	if (!ident || ident[EI_CLASS] != ELFCLASS64 || ident[EI_DATA] != ELFDATA2LSB ||
	    !gelf_getehdr(bi->elf, &eh) || eh.e_machine != arch_elf_machine ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)) {
		err = -ENOEXEC;
		open_error(quiet, "%s: not an %s ELF executable", path, arch_title);
		goto fail;
	}
	bi->pie = eh.e_type == ET_DYN;

	if (elf_getphdrnum(bi->elf, &nphdr) == 0 && nphdr > 0) {
		bi->loads = xcalloc(nphdr, sizeof(*bi->loads));
		for (size_t i = 0; i < nphdr; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(bi->elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
			    ph.p_filesz == 0)
				continue;
			bi->loads[bi->nloads++] = (struct binfo_load){
			    .vaddr = ph.p_vaddr, .filesz = ph.p_filesz, .offset = ph.p_offset};
		}
	}

	if (elf_getshdrstrndx(bi->elf, &shstrndx) != 0)
		shstrndx = 0;
	while ((scn = elf_nextscn(bi->elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *name = shstrndx ? elf_strptr(bi->elf, shstrndx, sh.sh_name) : NULL;
		if (sh.sh_type == SHT_SYMTAB)
			symtab = scn;
		else if (sh.sh_type == SHT_DYNSYM)
			dynsym = scn;
		if (!name)
			continue;
		/* PIE builds name it .data.rel.ro.gopclntab. */
		if (has_suffix(name, ".gopclntab"))
			has_pclntab = true;
		else if (strcmp(name, ".go.buildinfo") == 0 && sh.sh_type == SHT_PROGBITS &&
		         sh.sh_offset <= bi->img_size &&
		         sh.sh_size <= bi->img_size - sh.sh_offset) {
			buildinfo = bi->img + sh.sh_offset;
			buildinfo_size = sh.sh_size;
		}
	}

	if (symtab || dynsym)
		load_symbols(bi, symtab ? symtab : dynsym, &vs);

	bi->is_go = has_pclntab || buildinfo || vs.hdr_addr;
	if (!bi->is_go && !need_go) {
		build_name_index(bi);
		if (bi->nfuncs == 0) {
			err = -EOPNOTSUPP;
			open_error(quiet, "%s: has no symbol table", path);
			goto fail;
		}
		bi->path = own_path(path, &st);
		*out = bi;
		return 0;
	}
	if (!bi->is_go) {
		err = -ENOEXEC;
		open_error(quiet, "%s: not a Go binary (no .gopclntab or Go build info)", path);
		goto fail;
	}
	if (!symtab)
		load_pclntab_funcs(bi);
	build_name_index(bi);
	if (!symtab && name_abi0_wrappers(bi)) {
		free(bi->name_tab);
		free(bi->same_next);
		build_name_index(bi);
	}
	/* Without .symtab, .dynsym of a cgo build still defines a few C functions
	 * (crosscall2, x_cgo_*): not having runtime.main says the Go functions are gone. */
	if (bi->nfuncs == 0 || (!symtab && !binfo_find_func(bi, "runtime.main"))) {
		err = -EOPNOTSUPP;
		open_error(quiet, "%s: has no symbol table and no readable .gopclntab (Go 1.16+)", path);
		goto fail;
	}

	if (buildinfo)
		bi->go_version = version_from_buildinfo(bi, buildinfo, buildinfo_size, &vs);
	if (!bi->go_version && vs.hdr_addr)
		bi->go_version = version_from_header(bi, vs.hdr_addr, vs.str_addr);
	if (!bi->go_version && bi->is_go) {
		uint64_t len, at = binfo__scan_version(bi, &len);
		bi->go_version = at ? version_dup(binfo__bytes_at(bi, at, len), len) : NULL;
	}

	bi->path = own_path(path, &st);
	*out = bi;
	return 0;

not_elf:
	err = -ENOEXEC;
	open_error(quiet, "%s: not an ELF file", path);
fail:
	binfo__close(bi);
	return err;
}

void binfo__close(struct binfo *bi)
{
	if (!bi)
		return;
	arch_dis_free(bi->dis);
	if (bi->elf)
		elf_end(bi->elf);
	if (bi->fd >= 0)
		close(bi->fd);
	free(bi->path);
	free(bi->go_version);
	free(bi->loads);
	free(bi->funcs);
	free(bi->name_tab);
	free(bi->same_next);
	free(bi->renamed);
	free(bi->dotted);
	free(bi->entry_memo);
	free(bi->frameless_memo);
	for (int i = 0; bi->insn_memo && i < bi->nfuncs; i++)
		free(bi->insn_memo[i]);
	free(bi->insn_memo);
	free(bi->inl);
	free(bi->inl_names);
	free(bi);
}
