/* libFuzzer target over the binary readers (src/binfo): ELF, symbols, .gopclntab (pc
 * tables, inline trees), DWARF types and parameters, DWARF line tables, build info,
 * the runtime's offsets, the x86 decoding of a function's prologue and RETs.
 *
 * An input is a recipe, not a binary: byte 0 picks a seed binary (real Go builds of
 * several releases, plain, PIE, stripped, compressed DWARF: make_binfo_seeds.py),
 * bytes 1-3 pick the readers' work (which function, which pcs, the extra readers), then
 * each 8-byte record is one mutation of the seed: op (mutation kind + structure kind),
 * a 24-bit slot selector and a 32-bit value. The seed's map lists where its structures
 * are (DIE type references, constants, abbreviations, line programs, _func fields,
 * pc-value tables, inline trees, ELF headers, symbols ...), so that a mutation rewires
 * a DW_AT_type to another type DIE, rewrites the n-th varint of a pc-value table, points
 * a _func at another function's tables, or flips bytes inside one section.
 *
 * The seeds are copied once into files of a private directory (tmpfs when there is
 * one); an input writes its mutations into its seed's file, the readers open that file
 * by path as gotrace does, and the bytes are put back afterwards: a few pwrites per
 * input instead of a 1.5 MB copy. Messages go to /dev/null.
 *
 * $GT_FUZZ_BINFO_SEEDS: the seeds.txt of make_binfo_seeds.py (else the one the run
 * script writes). $GT_FUZZ_BINFO_SHOW=1: print each mutation and reader call (to
 * reproduce a crash by hand); $GT_FUZZ_BINFO_KEEP=FILE: copy the mutated binary there. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sanitizer/common_interface_defs.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "binfo/binfo.h"
#include "binfo/gotypes.h"
#include "common/arena.h"
#include "common/diag.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
static void profile(int groups);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum slot_kind {
	K_TYPEREF = 1, K_REF, K_DUDATA, K_ABBREV, K_STRREF, K_LINEHDR, K_LINEOPS, K_PCHDR,
	K_FUNCFLD, K_PCTAB, K_FTAB, K_INLTREE, K_ELFHDR, K_SHDR, K_PHDR, K_SYM, K_BUILDINF,
	K_SECTION, K_NKINDS,
	K_TYPEDIE = 100,
};

/* What a kind's mutations make the target re-read beyond the cheap readers. */
enum {
	R_DWARF = 1,  /* types and parameters (godwarf), runtime types, runtime offsets */
	R_LINES = 2,  /* the DWARF line table */
	R_INLINE = 4, /* every inline tree (binfo_inlined_copies) */
};

struct slot {
	uint8_t kind, enc;
	uint16_t pad;
	uint32_t off, width, bias;
};

struct seed {
	char name[96];
	int fd;
	char path[256];
	uint8_t *orig;
	size_t size;
	struct slot *slots[K_NKINDS];
	uint32_t nslots[K_NKINDS];
	uint32_t *typedies;
	uint32_t ntypedies;
};

static struct seed *seeds;
static int nseeds;
static char workdir[200];
static FILE *devnull;
static bool show;
static uint64_t stamp = 1;

/* The undo log of the current input: bytes written, restored afterwards. */
#define MAX_MUTATIONS 8 /* records read from an input (4 + 8 * 8 bytes) */
#define MAX_UNDO 64
static struct {
	uint32_t off, len;
	uint8_t old[16];
} undo[MAX_UNDO];
static int nundo;
static size_t cut_at; /* truncated to this size (0: not truncated) */

static void die(const char *what)
{
	fprintf(stderr, "fuzz_binfo: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void cleanup(void)
{
	for (int i = 0; i < nseeds; i++)
		unlink(seeds[i].path);
	rmdir(workdir);
}

static void load_map(struct seed *s, const char *map)
{
	FILE *f = fopen(map, "rb");
	if (!f)
		die(map);
	struct slot sl;
	static struct slot *all[K_NKINDS];
	static uint32_t cap[K_NKINDS];
	uint32_t tcap = 0;
	memset(all, 0, sizeof(all));
	memset(cap, 0, sizeof(cap));
	while (fread(&sl, sizeof(sl), 1, f) == 1) {
		if (sl.kind == K_TYPEDIE) {
			if (s->ntypedies == tcap) {
				tcap = tcap ? 2 * tcap : 1024;
				s->typedies = realloc(s->typedies, tcap * sizeof(*s->typedies));
			}
			s->typedies[s->ntypedies++] = sl.off;
			continue;
		}
		/* a slot must lie inside the file: the map may be of another build */
		if (sl.kind == 0 || sl.kind >= K_NKINDS || sl.off > s->size ||
		    sl.width > s->size - sl.off)
			continue;
		uint32_t k = sl.kind;
		if (s->nslots[k] == cap[k]) {
			cap[k] = cap[k] ? 2 * cap[k] : 256;
			all[k] = realloc(all[k], cap[k] * sizeof(sl));
		}
		all[k][s->nslots[k]++] = sl;
	}
	fclose(f);
	memcpy(s->slots, all, sizeof(all));
}

/* The directories of fuzzers that died without cleaning up (a crash): 135 MB of tmpfs
 * each with the full seed set. */
static void remove_stale(const char *tmp)
{
	DIR *d = opendir(tmp);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		int pid;
		char path[512];
		if (sscanf(e->d_name, "gt-fuzz-binfo.%d", &pid) != 1 || pid <= 0 ||
		    kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "%s/%s", tmp, e->d_name);
		DIR *sd = opendir(path);
		struct dirent *f;
		while (sd && (f = readdir(sd))) {
			char fp[800];
			snprintf(fp, sizeof(fp), "%s/%s", path, f->d_name);
			if (f->d_name[0] != '.')
				unlink(fp);
		}
		if (sd)
			closedir(sd);
		rmdir(path);
	}
	if (d)
		closedir(d);
}

static void load_seeds(const char *list)
{
	FILE *f = fopen(list, "r");
	if (!f)
		die(list);
	const char *tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	remove_stale(tmp);
	snprintf(workdir, sizeof(workdir), "%s/gt-fuzz-binfo.%d", tmp, (int)getpid());
	if (mkdir(workdir, 0700) < 0)
		die(workdir);
	atexit(cleanup);
	__sanitizer_set_death_callback(cleanup); /* a crash found: abort, no atexit */
	char line[1024], name[96], bin[400], map[400];
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%95s %399s %399s", name, bin, map) != 3)
			continue;
		seeds = realloc(seeds, (size_t)(nseeds + 1) * sizeof(*seeds));
		struct seed *s = &seeds[nseeds];
		memset(s, 0, sizeof(*s));
		snprintf(s->name, sizeof(s->name), "%s", name);
		int in = open(bin, O_RDONLY);
		struct stat st;
		if (in < 0 || fstat(in, &st) < 0)
			die(bin);
		s->size = (size_t)st.st_size;
		s->orig = malloc(s->size);
		if (read(in, s->orig, s->size) != (ssize_t)s->size)
			die(bin);
		close(in);
		snprintf(s->path, sizeof(s->path), "%s/%d", workdir, nseeds);
		s->fd = open(s->path, O_RDWR | O_CREAT | O_TRUNC, 0700);
		if (s->fd < 0 || pwrite(s->fd, s->orig, s->size, 0) != (ssize_t)s->size)
			die(s->path);
		nseeds++; /* counted before load_map: cleanup unlinks its file */
		load_map(s, map);
	}
	fclose(f);
	if (!nseeds) {
		fprintf(stderr, "fuzz_binfo: no seeds in %s\n", list);
		exit(1);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	const char *list = getenv("GT_FUZZ_BINFO_SEEDS");
	if (!list || !*list)
		list = "seeds/seeds.txt";
	load_seeds(list);
	const char *sh = getenv("GT_FUZZ_BINFO_SHOW");
	show = sh && !strcmp(sh, "1");
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		die("/dev/null");
	diag_set_stream(show ? stderr : devnull);
	const char *prof = getenv("GT_FUZZ_BINFO_PROFILE");
	if (prof && *prof)
		profile(atoi(prof));
	return 0;
}

/* ---- mutations ---- */

static void put(struct seed *s, uint64_t off, const void *bytes, uint32_t len)
{
	if (off >= s->size || nundo == MAX_UNDO)
		return;
	if (len > s->size - off)
		len = (uint32_t)(s->size - off);
	if (len > sizeof(undo[0].old))
		len = sizeof(undo[0].old);
	undo[nundo].off = (uint32_t)off;
	undo[nundo].len = len;
	if (pread(s->fd, undo[nundo].old, len, (off_t)off) != (ssize_t)len)
		return;
	nundo++;
	if (pwrite(s->fd, bytes, len, (off_t)off) != (ssize_t)len)
		die("pwrite");
}

static uint64_t get(struct seed *s, uint64_t off, uint32_t len)
{
	uint64_t v = 0;
	if (len > 8)
		len = 8;
	if (off < s->size && len <= s->size - off && pread(s->fd, &v, len, (off_t)off) < 0)
		die("pread");
	return v;
}

static void put_uint(struct seed *s, const struct slot *sl, uint64_t v)
{
	if (sl->enc == 1) { /* ULEB128 of the slot's width: padded with 0x80s */
		uint8_t b[16];
		uint32_t w = sl->width < sizeof(b) ? sl->width : sizeof(b);
		for (uint32_t i = 0; i < w; i++, v >>= 7)
			b[i] = (uint8_t)((v & 0x7f) | (i + 1 < w ? 0x80 : 0));
		put(s, sl->off, b, w);
		return;
	}
	uint32_t w = sl->width < 8 ? sl->width : 8;
	put(s, sl->off, &v, w);
}

static const uint64_t interesting[] = {
	0, 1, 2, 3, 4, 7, 8, 16, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff, 0x10000,
	0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff, 0x100000000ull, 0x7fffffffffffffffull,
	0x8000000000000000ull, 0xffffffffffffffffull, 1000000, 1u << 20, 1u << 24, 1u << 30,
};

/* The value of one mutation: VAL picks an interesting value, a small number, or itself. */
static uint64_t pick_value(uint32_t val)
{
	switch (val >> 30) {
	case 0:
		return interesting[(val & 0xff) % (sizeof(interesting) / sizeof(interesting[0]))];
	case 1:
		return val & 0xff;
	case 2:
		return (uint64_t)(int64_t)(int32_t)(val | 0xc0000000u); /* small negative */
	default:
		return val;
	}
}

/* Rewrite the N-th varint of the region SL (a pc-value table, a line program) as V. */
static void put_varint(struct seed *s, const struct slot *sl, uint32_t n, uint64_t v)
{
	uint64_t off = sl->off, end = (uint64_t)sl->off + sl->width;
	for (uint32_t k = 0; k < n && off < end; k++)
		while (off < end && (get(s, off++, 1) & 0x80))
			;
	uint8_t b[10];
	uint32_t w = 0;
	do {
		b[w] = (uint8_t)(v & 0x7f);
		v >>= 7;
		b[w] |= v ? 0x80 : 0;
		w++;
	} while (v && w < sizeof(b));
	put(s, off, b, w);
}

static const char *const kind_names[K_NKINDS] = {
	"file", "typeref", "ref", "dudata", "abbrev", "strref", "linehdr", "lineops", "pchdr",
	"funcfld", "pctab", "ftab", "inltree", "elfhdr", "shdr", "phdr", "sym", "buildinf",
	"section"};

/* One 8-byte record: op = mutation (low 3 bits) and kind (the rest), a 24-bit selector,
 * a 32-bit value. Returns the readers it concerns (R_*). */
static int mutate(struct seed *s, const uint8_t *r)
{
	int m = r[0] & 7, kind = 1 + (r[0] >> 3) % (K_NKINDS - 1);
	uint32_t sel = r[1] | (uint32_t)r[2] << 8 | (uint32_t)r[3] << 16;
	uint32_t val = r[4] | (uint32_t)r[5] << 8 | (uint32_t)r[6] << 16 | (uint32_t)r[7] << 24;
	if (m == 7) { /* a bit flip anywhere in the file */
		uint64_t off = ((uint64_t)val << 8 | r[3]) % s->size;
		uint8_t b = (uint8_t)(get(s, off, 1) ^ (1u << (r[2] & 7)));
		if (show)
			fprintf(stderr, "mutate: flip bit %d at %#llx\n", r[2] & 7,
				(unsigned long long)off);
		put(s, off, &b, 1);
		return 1 << (r[1] % 3); /* one of the costly readers */
	}
	if (!s->nslots[kind])
		return 0;
	const struct slot *sl = &s->slots[kind][sel % s->nslots[kind]];
	const struct slot *other = &s->slots[kind][val % s->nslots[kind]];
	uint64_t v = 0;
	switch (m) {
	case 0: /* an interesting or arbitrary value */
	case 1:
		v = pick_value(val);
		if (sl->width > 8) /* a region: its n-th varint */
			put_varint(s, sl, val & 0xff, pick_value(val >> 8));
		else
			put_uint(s, sl, v);
		break;
	case 2: /* rewire: a type reference to a type DIE, anything else to another slot's value */
		if ((kind == K_TYPEREF || kind == K_REF) && s->ntypedies) {
			v = s->typedies[val % s->ntypedies] - sl->bias;
			put_uint(s, sl, (uint32_t)v);
		} else if (sl->width <= 8 && other->width <= 8) {
			v = get(s, other->off, other->width);
			put_uint(s, sl, v);
		}
		break;
	case 3: /* a small step up or down */
		v = get(s, sl->off, sl->width <= 8 ? sl->width : 1) +
		    (uint64_t)(int64_t)(int8_t)(val & 0xff);
		if (sl->width > 8) {
			uint8_t b = (uint8_t)v;
			put(s, sl->off, &b, 1);
		} else {
			put_uint(s, sl, v);
		}
		break;
	case 4: /* the n-th varint of a region, or the value itself */
		if (sl->width > 8)
			put_varint(s, sl, val % 256, pick_value(val >> 8));
		else
			put_uint(s, sl, pick_value(val));
		break;
	case 5: { /* a byte inside the slot's bytes (a region: anywhere in it) */
		uint64_t at = sl->off + (sl->width ? (val & 0xffffff) % sl->width : 0);
		uint8_t b = (uint8_t)(val >> 24);
		put(s, at, &b, 1);
		break;
	}
	case 6: { /* swap with another slot of the kind */
		uint64_t a = get(s, sl->off, sl->width <= 8 ? sl->width : 8);
		uint64_t b = get(s, other->off, other->width <= 8 ? other->width : 8);
		if (sl->width <= 8 && other->width <= 8) {
			put_uint(s, sl, b);
			put_uint(s, other, a);
		}
		break;
	}
	}
	if (show)
		fprintf(stderr, "mutate: %s slot %u (at %#x, %u bytes) op %d val %#x\n",
			kind_names[kind], sel % s->nslots[kind], sl->off, sl->width, m, val);
	switch (kind) {
	case K_TYPEREF: case K_REF: case K_DUDATA: case K_ABBREV: case K_STRREF:
		return R_DWARF;
	case K_LINEHDR: case K_LINEOPS:
		return R_LINES;
	case K_PCHDR: case K_FUNCFLD: case K_PCTAB: case K_FTAB: case K_INLTREE:
		return R_INLINE;
	default: /* ELF structure: the cheap readers and one of the costly ones */
		return 1 << (sel % 3);
	}
}

static void restore(struct seed *s)
{
	if (cut_at) {
		if (pwrite(s->fd, s->orig + cut_at, s->size - cut_at, (off_t)cut_at) < 0)
			die("pwrite");
		cut_at = 0;
	}
	/* newest first: a byte written twice gets its first old value back */
	for (int i = nundo - 1; i >= 0; i--)
		if (pwrite(s->fd, undo[i].old, undo[i].len, undo[i].off) != (ssize_t)undo[i].len)
			die("pwrite");
	nundo = 0;
}

/* ---- the readers ---- */

/* An offset into F from V: a mutated size may be UINT64_MAX, where size + 1 is 0
 * (crash-ef1922d1 was this harness's own % 0). */
static uint64_t in_func(const struct binfo_func *f, uint64_t v)
{
	return f->size < UINT64_MAX ? v % (f->size + 1) : v;
}

static void run_readers(struct seed *s, unsigned pick, unsigned flags)
{
	struct binfo *bi;
	const char *keep = getenv("GT_FUZZ_BINFO_KEEP");
	if (keep) { /* the mutated binary itself, to run gotrace on */
		char cmd[8192];
		snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", s->path, keep);
		if (system(cmd) != 0)
			die("GT_FUZZ_BINFO_KEEP");
	}
	if (binfo__open(s->path, &bi) < 0)
		return;
	(void)binfo_go_version(bi);
	(void)binfo_go_minor(bi);
	(void)binfo_is_pie(bi);
	const uint8_t *bid;
	size_t bidlen;
	if (binfo_gnu_build_id(bi, &bid, &bidlen) == 0) { /* every byte of it is readable */
		volatile uint8_t sum = 0;
		for (size_t i = 0; i < bidlen; i++)
			sum += bid[i];
	}

	/* the function to read: one of main's (what a script names), else any */
	const struct binfo_func **fs = NULL, *f = NULL;
	int n = binfo_match_funcs(bi, "main.*", &fs);
	if (n > 0 && !(pick & 0x8000))
		f = fs[pick % (unsigned)n];
	free(fs);
	if (!f) {
		n = binfo_match_funcs(bi, "*", &fs);
		f = n > 0 ? fs[pick % (unsigned)n] : NULL;
		free(fs);
	}
	if (show)
		fprintf(stderr, "readers: %s (%#x), flags %#x\n", f ? f->name : "-", pick, flags);
	uint64_t addr;
	(void)binfo_symbol_addr(bi, "runtime.main", &addr);
	if (f) {
		(void)binfo_find_func(bi, f->name);
		uint64_t entry = f->addr, off, *rets = NULL;
		if (binfo_entry_addr(bi, f, &entry) == 0) {
			(void)binfo_can_probe(bi, entry);
			(void)binfo_is_push_rbp(bi, entry);
			(void)binfo_uprobe_refuses(bi, entry);
		}
		(void)binfo_vaddr_to_offset(bi, f->addr, &off);
		(void)binfo_is_insn_boundary(bi, f, f->addr + in_func(f, pick >> 4));
		(void)binfo_frameless(bi, f);
		int nr = binfo_ret_addrs(bi, f, &rets);
		for (int i = 0; i < nr && i < 4; i++)
			(void)binfo_is_ret(bi, rets[i]);
		free(rets);

		/* .gopclntab: lines and frames at a few pcs of F */
		struct binfo_lines *l;
		if (binfo_lines__open(bi, BINFO_LINES_PCLNTAB, &l) == 0) {
			struct binfo_pcline pl;
			struct binfo_frame fr[8];
			uint64_t pcs[3] = {f->addr, entry, f->addr + in_func(f, pick * 7)};
			for (int i = 0; i < 3; i++) {
				(void)binfo_lines_lookup(l, pcs[i], &pl);
				(void)binfo_lines_frames(l, pcs[i], fr, 8);
			}
			binfo_lines__close(l);
		}
		if (flags & R_INLINE) {
			struct binfo_inlined *ic = NULL;
			char *glob = binfo_type_args_glob(f->name);
			int k = binfo_inlined_copies(bi, (pick & 0x4000) ? "main.*" : glob, &ic);
			(void)k;
			free(ic);
			free(glob);
		}
		if (flags & R_DWARF) {
			struct binfo_godwarf *gd;
			if (binfo_godwarf__open(bi, &gd) == 0) {
				const struct binfo_gofunc *gf;
				(void)binfo_godwarf_func(gd, f->name, &gf);
				(void)binfo_godwarf_func(gd, "main.main", &gf);
				binfo_godwarf__close(gd);
			}
		}
		/* two more walks over every unit: one input in four */
		if ((flags & R_DWARF) && (pick & 0x3000) == 0x3000) {
			struct binfo_goruntime rt;
			(void)binfo_goruntime(bi, &rt);
			struct arena *a = arena__new();
			struct binfo_gortype *rts = NULL;
			(void)binfo_gortypes(bi, a, &rts); /* in the arena */
			arena__free(a);
		}
		if (flags & R_LINES) {
			if (binfo_lines__open(bi, BINFO_LINES_DWARF, &l) == 0) {
				struct binfo_pcline pl;
				(void)binfo_lines_lookup(l, entry, &pl);
				struct binfo_line_site *ls = NULL;
				struct binfo_line_query q = {.file = "main.go",
							     .line = 1 + (int)(pick % 170)};
				(void)binfo_line_sites(l, &q, &ls);
				free(ls);
				binfo_lines__close(l);
			}
		}
	}
	binfo__close(bi);
}

/* GT_FUZZ_BINFO_PROFILE=MASK: the time of groups of readers on each seed, unmutated:
 * bit 0 the cheap readers alone, 1 with the inline trees, 2 DWARF, 3 DWARF lines. */
static void profile(int which)
{
	static const unsigned groups[] = {0, R_INLINE, R_DWARF, R_LINES};
	for (int i = 0; i < nseeds; i++) {
		fprintf(stderr, "%-28s", seeds[i].name);
		for (int g = 0; g < 4; g++) {
			struct timespec a, b;
			if (!(which & (1 << g)))
				continue;
			clock_gettime(CLOCK_MONOTONIC, &a);
			for (int k = 0; k < 5; k++)
				run_readers(&seeds[i], (unsigned)k, groups[g]);
			clock_gettime(CLOCK_MONOTONIC, &b);
			fprintf(stderr, " %8.3f ms", ((double)(b.tv_sec - a.tv_sec) * 1e3 +
						    (double)(b.tv_nsec - a.tv_nsec) / 1e6) / 5);
		}
		fprintf(stderr, "\n");
	}
	exit(0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 4)
		return 0;
	struct seed *s = &seeds[data[0] % nseeds];
	/* the costly readers run for the structures the mutations touched (mutate's
	 * answer), and for any when byte 3 asks (bit 3, then its bits 0-2) */
	unsigned pick = data[1] | (unsigned)data[2] << 8, flags = data[3] & 8 ? data[3] & 7 : 0;
	if (show)
		fprintf(stderr, "seed: %s\n", s->name);
	for (size_t i = 4; i + 8 <= size && i < 4 + 8 * MAX_MUTATIONS; i += 8)
		flags |= (unsigned)mutate(s, data + i);
	if (size >= 4 + 8 && (data[3] & 0xf0) == 0xf0) {
		/* a truncated file: cut at a point the value of the first record gives */
		size_t at = (size_t)(data[8] | data[9] << 8 | data[10] << 16) * 8 % s->size;
		if (at && ftruncate(s->fd, (off_t)at) == 0)
			cut_at = at;
	}
	/* a new mtime each input: binfo_goruntime caches by file identity and time */
	struct timespec ts[2] = {{0, UTIME_OMIT}, {(time_t)(stamp / 1000000000), (long)(stamp % 1000000000)}};
	stamp++;
	futimens(s->fd, ts);
	run_readers(s, pick, flags);
	restore(s);
	return 0;
}
