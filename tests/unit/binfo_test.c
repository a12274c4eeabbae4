/* binfo unit test: builds the Go targets of tests/go/binfo{,_cgo} with the installed Go
 * toolchain (plain, -buildmode=pie, cgo with external linking, stripped by -ldflags=-s
 * and strip(1) against their unstripped twins, plus error cases) into a
 * temp dir and checks src/binfo against independent oracles: section headers for file
 * offsets, prologue byte patterns for entry addresses, 0xc3 bytes for RETs; for the Go
 * runtime layout the runtime's go_asm.h (offsets) and the TLS loads of g that the
 * linkers wrote into the code (plus -ldflags=-w and cgo builds with C thread-locals),
 * and bpftool's view of the kernel BTF for task_struct.thread.fsbase.
 *
 *   binfo_test [SOURCE_DIR]     (default: derived from __FILE__)
 *
 * Exit 0 = pass, 1 = failures, 77 = skipped (no go: scripts/find-go.sh). */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "binfo_test.h"
#include "arch/arch.h"
#include "arch/x86_64_insn.h"
#include <capstone/capstone.h>
#include "binfo/binfo.h"
#include "binfo/binfo_int.h"
#include "common/util.h"

char src_dir[PATH_MAX], tmp_dir[PATH_MAX];
int failures;

/* Read a whole small file into a NUL-terminated malloc'd buffer. */
char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return xstrdup("");
	char *buf = xcalloc(1, 65536);
	size_t n = fread(buf, 1, 65535, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

void put_image(const char *path, uint8_t *img, size_t n)
{
	FILE *f = fopen(path, "w");
	CHECK(f && fwrite(img, 1, n, f) == n, "%s: cannot write the patched copy", path);
	if (f)
		fclose(f);
	free(img);
}

/* binfo__open with stderr captured into *msg (malloc'd). */
static int open_capture(const char *path, struct binfo **bi, char **msg)
{
	char errpath[PATH_MAX + 16];
	snprintf(errpath, sizeof(errpath), "%s/stderr.txt", tmp_dir);
	fflush(stderr);
	int saved = dup(2);
	int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	dup2(fd, 2);
	close(fd);
	int rc = binfo__open(path, bi);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	*msg = slurp(errpath);
	return rc;
}

struct binfo *open_ok(const char *path)
{
	struct binfo *bi = NULL;
	char *msg;
	int rc = open_capture(path, &bi, &msg);
	CHECK(rc == 0 && bi, "binfo__open(%s) = %d: %s", path, rc, msg);
	CHECK(msg[0] == 0, "unexpected stderr: %s", msg);
	free(msg);
	return bi;
}

static void expect_open_error(const char *path, int want_rc, const char *want_tail)
{
	struct binfo *bi = (struct binfo *)1;
	char *msg, want[PATH_MAX + 256];
	int rc = open_capture(path, &bi, &msg);
	snprintf(want, sizeof(want), "gotrace: error: %s: %s\n", path, want_tail);
	CHECK(rc == want_rc, "binfo__open(%s) = %d, want %d", path, rc, want_rc);
	CHECK(bi == NULL, "*out not cleared on error");
	CHECK(strcmp(msg, want) == 0, "stderr %s\"%s\", want \"%s\"", "", msg, want);
	free(msg);
}

/* ---- independent oracles ---- */

void target_open(struct target *t, const char *path)
{
	t->path = path;
	t->fd = open(path, O_RDONLY);
	t->elf = elf_begin(t->fd, ELF_C_READ_MMAP, NULL);
	t->img = (uint8_t *)elf_rawfile(t->elf, &t->size);
}

void target_close(struct target *t)
{
	elf_end(t->elf);
	close(t->fd);
}

/* File offset from the section headers (what objdump uses), not from PT_LOAD. */
static bool sec_offset(struct target *t, uint64_t vaddr, uint64_t *off)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(t->elf, scn))) {
		GElf_Shdr sh;
		gelf_getshdr(scn, &sh);
		if (sh.sh_type == SHT_NOBITS || !(sh.sh_flags & SHF_ALLOC) || sh.sh_addr == 0)
			continue;
		if (vaddr >= sh.sh_addr && vaddr < sh.sh_addr + sh.sh_size) {
			*off = vaddr - sh.sh_addr + sh.sh_offset;
			return true;
		}
	}
	return false;
}

static uint64_t sym_addr(struct target *t, const char *name)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(t->elf, scn))) {
		GElf_Shdr sh;
		gelf_getshdr(scn, &sh);
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			gelf_getsym(d, (int)i, &s);
			const char *n = elf_strptr(t->elf, sh.sh_link, s.st_name);
			if (n && strcmp(n, name) == 0)
				return s.st_value;
		}
	}
	return 0;
}

static const uint8_t *code_at(struct target *t, uint64_t vaddr)
{
	uint64_t off;
	return sec_offset(t, vaddr, &off) ? t->img + off : NULL;
}

static size_t oracle_prologue_at(const uint8_t *p, int *shape);

/* Go 1.17+ amd64 stack-check prologue by its encodings; returns the length of the
 * prologue in bytes (entry = start + len), 0 when the bytes are not a stack check. */
static size_t oracle_prologue(const uint8_t *p, int *shape)
{
	static const uint8_t tls_g[] = {0x64, 0x4c, 0x8b, 0x34, 0x25, 0xf8, 0xff, 0xff, 0xff};
	static const uint8_t tls_g_pie[] = {0x49, 0xc7, 0xc6, 0xf8, 0xff, 0xff,
	                                    0xff, 0x64, 0x4d, 0x8b, 0x36};
	size_t skip = 0;
	*shape = 0;
	/* ABI0 (assembly) functions load g from TLS first: mov %fs:-8,%r14 (PIE: via
	 * mov $-8,%r14; mov %fs:(%r14),%r14); the morestack path jumps back before it. */
	if (memcmp(p, tls_g, sizeof(tls_g)) == 0)
		skip = sizeof(tls_g);
	else if (memcmp(p, tls_g_pie, sizeof(tls_g_pie)) == 0)
		skip = sizeof(tls_g_pie);
	size_t n = oracle_prologue_at(p + skip, shape);
	return n ? skip + n : 0;
}

static size_t oracle_prologue_at(const uint8_t *p, int *shape)
{
	size_t i = 0;
	*shape = 0;
	if (p[0] == 0x49 && p[1] == 0x89 && p[2] == 0xe4) { /* mov %rsp,%r12 */
		i = 3;
		if (p[i] == 0x49 && p[i + 1] == 0x81 && p[i + 2] == 0xec) /* sub $imm32,%r12 */
			i += 7;
		else if (p[i] == 0x49 && p[i + 1] == 0x83 && p[i + 2] == 0xec) /* sub $imm8,%r12 */
			i += 4;
		else
			return 0;
		if (p[i] == 0x72) /* jb rel8 */
			i += 2;
		else if (p[i] == 0x0f && p[i + 1] == 0x82)
			i += 6;
		else
			return 0;
		*shape = 3;
	} else if (p[0] == 0x4c && p[1] == 0x8d && p[2] == 0xa4 && p[3] == 0x24) {
		i = 8; /* lea disp32(%rsp),%r12 */
		*shape = 2;
	} else if (p[0] == 0x4c && p[1] == 0x8d && p[2] == 0x64 && p[3] == 0x24) {
		i = 5; /* lea disp8(%rsp),%r12 */
		*shape = 2;
	} else {
		*shape = 1;
	}
	/* cmp disp8(%r14),%rsp | %r12 */
	if (!((p[i] == 0x49 || p[i] == 0x4d) && p[i + 1] == 0x3b && p[i + 2] == 0x66))
		return *shape = 0, 0;
	i += 4;
	if (p[i] == 0x76) /* jbe rel8 */
		return i + 2;
	if (p[i] == 0x0f && p[i + 1] == 0x86)
		return i + 6;
	return *shape = 0, 0;
}

/* Length of the instruction at P that begins a frame after the stack check: `push %rbp`
 * (Go 1.21+: push %rbp; mov %rsp,%rbp; sub $N,%rsp) or `sub $N,%rsp` with an imm8 or
 * imm32 (Go 1.17-1.20: sub, then mov %rbp,N(%rsp); lea N(%rsp),%rbp); 0 for anything
 * else. Either form on any release: the entry must be where the frame begins. */
static size_t frame_insn_len(const uint8_t *p)
{
	if (p[0] == 0x55)
		return 1;
	if (p[0] == 0x48 && p[1] == 0x83 && p[2] == 0xec)
		return 4;
	if (p[0] == 0x48 && p[1] == 0x81 && p[2] == 0xec)
		return 7;
	return 0;
}

/* Text of the first line COMMAND (printf format) prints, malloc'd; "" when none. */
static char *first_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *first_line(const char *fmt, ...)
{
	char cmd[4096], line[4096] = "";
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	FILE *p = popen(cmd, "r");
	if (p) {
		if (!fgets(line, sizeof(line), p))
			line[0] = 0;
		pclose(p);
	}
	line[strcspn(line, "\n")] = 0;
	return xstrdup(line);
}

/* The name the symbol table (`go tool nm`, the Go toolchain's reader) gives the one
 * instance of the generic main.Map of BIN: Go 1.18/1.19 spell its shapes
 * go.shape.int_0, later releases go.shape.int. Malloc'd, "" when not exactly one. */
static char *nm_map_name(const char *bin)
{
	char *n = first_line("go tool nm %s | sed -n 's/^ *[0-9a-f]* T \\(main\\.Map\\[.*\\)$/\\1/p' | "
			     "awk '{ n++; s = $0 } END { if (n == 1) print s }'",
			     bin);
	CHECK(strncmp(n, "main.Map[", 9) == 0, "%s: go tool nm shows no single main.Map[...]", bin);
	return n;
}

/* ---- checks on one built target ---- */

static const struct binfo_func *must_find(struct binfo *bi, const char *name)
{
	const struct binfo_func *f = binfo_find_func(bi, name);
	CHECK(f != NULL, "function %s not found", name);
	return f;
}

static void check_offsets(struct binfo *bi, struct target *t, const char *what, uint64_t vaddr)
{
	uint64_t want, got = 0;
	CHECK(sec_offset(t, vaddr, &want), "%s %s: no section holds 0x%lx", t->path, what,
	      (unsigned long)vaddr);
	int rc = binfo_vaddr_to_offset(bi, vaddr, &got);
	CHECK(rc == 0 && got == want, "%s %s: offset of 0x%lx = %d/0x%lx, want 0x%lx", t->path,
	      what, (unsigned long)vaddr, rc, (unsigned long)got, (unsigned long)want);
}

/* Entry address of F: equal to the byte-pattern oracle and of the given SHAPE (0 = no
 * stack check, 1 small, 2 large, 3 huge); the next instruction begins the frame. */
static void check_entry(struct binfo *bi, struct target *t, const char *name, int want_shape)
{
	const struct binfo_func *f = must_find(bi, name);
	if (!f)
		return;
	uint64_t entry = 0;
	int shape;
	const uint8_t *p = code_at(t, f->addr);
	size_t plen = oracle_prologue(p, &shape);
	CHECK(shape == want_shape, "%s %s: prologue shape %d, want %d", t->path, name, shape,
	      want_shape);
	CHECK(binfo_entry_addr(bi, f, &entry) == 0, "%s %s: entry failed", t->path, name);
	CHECK(entry == f->addr + plen, "%s %s: entry 0x%lx, want 0x%lx (+%zu)", t->path, name,
	      (unsigned long)entry, (unsigned long)(f->addr + plen), plen);
	if (want_shape) {
		const uint8_t *q = code_at(t, entry);
		CHECK(frame_insn_len(q) > 0,
		      "%s %s: no `push %%rbp` or `sub $N,%%rsp` at the entry (%02x %02x %02x)",
		      t->path, name, q[0], q[1], q[2]);
	}
	CHECK(binfo_is_insn_boundary(bi, f, entry), "%s %s: entry not a boundary", t->path, name);
}

static void check_rets(struct binfo *bi, struct target *t, const char *name, int want)
{
	const struct binfo_func *f = must_find(bi, name);
	if (!f)
		return;
	uint64_t *rets = NULL;
	int n = binfo_ret_addrs(bi, f, &rets);
	CHECK(n == want, "%s %s: %d RETs, want %d", t->path, name, n, want);
	for (int i = 0; i < n; i++) {
		CHECK(rets[i] >= f->addr && rets[i] < f->addr + f->size, "RET outside %s", name);
		CHECK(*code_at(t, rets[i]) == 0xc3, "%s %s: no 0xc3 at RET 0x%lx", t->path, name,
		      (unsigned long)rets[i]);
		CHECK(binfo_is_insn_boundary(bi, f, rets[i]), "%s: RET not a boundary", name);
		if (i > 0)
			CHECK(rets[i] > rets[i - 1], "RETs of %s not ascending", name);
	}
	free(rets);
}

/* Every function of the binary: entry is a boundary inside the function, and skips a
 * prologue exactly when the byte oracle sees one; RET sweep decodes. */
static void check_all_funcs(struct binfo *bi, struct target *t)
{
	const struct binfo_func **fs = NULL;
	int n = binfo_match_funcs(bi, "*", &fs), skipped = 0, go_funcs = 0, ret_errs = 0;
	CHECK(n > 1000, "%s: only %d functions", t->path, n);
	for (int i = 0; i < n; i++) {
		const struct binfo_func *f = fs[i];
		uint64_t entry, *rets = NULL;
		int shape;
		if (i > 0)
			CHECK(fs[i - 1]->addr < f->addr || (fs[i - 1]->addr == f->addr &&
			                                    strcmp(fs[i - 1]->name, f->name) < 0),
			      "match order/duplicates at %s", f->name);
		if (f->size == 0)
			continue;
		const uint8_t *p = code_at(t, f->addr);
		/* small functions too: Go 1.21+ gives runtime._System (< 32 bytes) a check */
		size_t plen = oracle_prologue(p, &shape);
		CHECK(binfo_entry_addr(bi, f, &entry) == 0, "%s: entry failed", f->name);
		bool go = strchr(f->name, '.') != NULL;
		go_funcs += go;
		skipped += entry != f->addr;
		/* Go functions only: C code (cgo) can begin with the same bytes by accident. */
		if (go && plen && plen < f->size)
			CHECK(entry == f->addr + plen, "%s: entry +%lu, oracle +%zu", f->name,
			      (unsigned long)(entry - f->addr), plen);
		else if (go)
			CHECK(entry == f->addr, "%s: entry +%lu without a stack check", f->name,
			      (unsigned long)(entry - f->addr));
		CHECK(binfo_is_insn_boundary(bi, f, entry), "%s: entry not a boundary", f->name);
		int nr = binfo_ret_addrs(bi, f, &rets);
		ret_errs += nr < 0;
		for (int k = 0; k < nr; k++)
			if (*code_at(t, rets[k]) != 0xc3 && *code_at(t, rets[k]) != 0xc2)
				CHECK(false, "%s: RET at 0x%lx is not c3", f->name,
				      (unsigned long)rets[k]);
		free(rets);
	}
	CHECK(ret_errs == 0, "%s: %d functions failed to disassemble", t->path, ret_errs);
	CHECK(skipped > go_funcs / 2, "%s: only %d/%d functions have a prologue", t->path, skipped,
	      go_funcs);
	printf("  %s: %d functions, %d with a stack-check prologue skipped\n", t->path, n, skipped);
	free(fs);
}

static void check_match(struct binfo *bi, const char *pat, const char **want, int nwant)
{
	const struct binfo_func **fs = NULL;
	int n = binfo_match_funcs(bi, pat, &fs);
	CHECK(n == nwant, "match %s: %d results, want %d", pat, n, nwant);
	for (int i = 0; i < n && i < nwant; i++)
		CHECK(strcmp(fs[i]->name, want[i]) == 0, "match %s [%d] = %s, want %s", pat, i,
		      fs[i]->name, want[i]);
	free(fs);
}

static void check_suggest(struct binfo *bi, const char *name, const char *first, const char *also)
{
	const char *out[5];
	int n = binfo_suggest(bi, name, out, 5);
	CHECK(n > 0 && strcmp(out[0], first) == 0, "suggest %s: first %s, want %s", name,
	      n > 0 ? out[0] : "(none)", first);
	bool found = also == NULL;
	for (int i = 0; i < n; i++)
		found |= also && strcmp(out[i], also) == 0;
	CHECK(found, "suggest %s: %s not among %d", name, also, n);
}

static char *go_version(void)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/goversion.txt", tmp_dir);
	run("go env GOVERSION > %s", path);
	char *v = slurp(path);
	v[strcspn(v, "\n")] = 0;
	return v;
}

static void check_common(struct binfo *bi, struct target *t, const char *gover, bool pie)
{
	char rp[PATH_MAX];
	CHECK(realpath(t->path, rp) && strcmp(binfo_path(bi), rp) == 0, "path %s", binfo_path(bi));
	CHECK(binfo_go_version(bi) && strcmp(binfo_go_version(bi), gover) == 0,
	      "%s: go version %s, want %s", t->path, binfo_go_version(bi), gover);
	CHECK(binfo_is_pie(bi) == pie, "%s: pie %d", t->path, binfo_is_pie(bi));

	/* Offsets: text (functions) and data (a different PT_LOAD delta in cgo builds). */
	check_offsets(bi, t, "main.add", must_find(bi, "main.add")->addr);
	check_offsets(bi, t, "runtime.main", must_find(bi, "runtime.main")->addr);
	check_offsets(bi, t, "runtime.buildVersion", sym_addr(t, "runtime.buildVersion"));
	check_offsets(bi, t, "runtime.buildVersion.str", sym_addr(t, "runtime.buildVersion.str"));
	uint64_t off;
	CHECK(binfo_vaddr_to_offset(bi, 0x10, &off) == -ENOENT, "0x10 maps");
	CHECK(binfo_vaddr_to_offset(bi, ~0ull, &off) == -ENOENT, "~0 maps");

	check_entry(bi, t, "main.Add", 0);
	check_entry(bi, t, "main.add", 1);
	check_rets(bi, t, "main.Add", 1);
	check_rets(bi, t, "main.add", 1);

	/* Boundaries of main.add: cmp (4 bytes) at +0, jbe rel8 at +4, at +6 the frame's
	 * first instruction, whose length its bytes say (frame_insn_len). */
	const struct binfo_func *f = must_find(bi, "main.add");
	CHECK(binfo_is_insn_boundary(bi, f, f->addr), "add +0");
	CHECK(binfo_is_insn_boundary(bi, f, f->addr + 4), "add +4");
	CHECK(!binfo_is_insn_boundary(bi, f, f->addr + 5), "add +5");
	CHECK(binfo_is_insn_boundary(bi, f, f->addr + 6), "add +6");
	size_t flen = frame_insn_len(code_at(t, f->addr + 6));
	CHECK(flen > 0, "add +6: no frame set-up");
	for (size_t k = 1; k < flen; k++)
		CHECK(!binfo_is_insn_boundary(bi, f, f->addr + 6 + k), "add +%zu", 6 + k);
	CHECK(flen == 0 || binfo_is_insn_boundary(bi, f, f->addr + 6 + flen), "add +%zu",
	      6 + flen);
	CHECK(!binfo_is_insn_boundary(bi, f, f->addr + f->size), "add +size");
	CHECK(!binfo_is_insn_boundary(bi, f, f->addr - 1), "add -1");
	const struct binfo_func *a = must_find(bi, "main.Add");
	uint64_t *rets = NULL;
	CHECK(binfo_ret_addrs(bi, a, &rets) == 1 && rets[0] == a->addr + 3, "main.Add RET");
	free(rets);

	CHECK(binfo_find_func(bi, "main.nope") == NULL, "main.nope found");
	CHECK(binfo_find_func(bi, "main.ad") == NULL, "main.ad found");
	check_suggest(bi, "main.Ad", "main.Add", NULL);
	check_suggest(bi, "main.adx", "main.add", NULL);
	check_suggest(bi, "Add", "main.Add", NULL);
	check_all_funcs(bi, t);
}

static void check_main_target(const char *path, const char *gover, bool pie)
{
	struct target t;
	struct binfo *bi = open_ok(path);
	if (!bi)
		return;
	target_open(&t, path);
	check_common(bi, &t, gover, pie);

	check_entry(bi, &t, "main.large", 2);
	check_entry(bi, &t, "main.huge", 3);
	check_entry(bi, &t, "main.nosplit", 0);
	check_entry(bi, &t, "main.multiRet", 1);
	check_entry(bi, &t, "main.(*Student).String", 1);
	check_rets(bi, &t, "main.multiRet", 3);
	check_rets(bi, &t, "main.large", 1);
	check_rets(bi, &t, "main.huge", 1);
	must_find(bi, "main.Rect.Area");
	must_find(bi, "main.main.func1");
	char *map_name = nm_map_name(path);
	must_find(bi, map_name);

	const char *adds[] = {"main.add", "main.add1", "main.add2"};
	check_match(bi, "main.add*", adds, 3);
	check_match(bi, "main.add?", adds + 1, 2);
	check_match(bi, "main.add", adds, 1);
	const char *add[] = {"main.Add"};
	check_match(bi, "main.Add", add, 1);
	check_match(bi, "main.nope", NULL, 0);
	check_match(bi, "main.nope*", NULL, 0);
	const char *str[] = {"main.(*Student).String"};
	check_match(bi, "main.(*Student).*", str, 1);
	check_match(bi, "*Student*", str, 1);
	const char *map[] = {map_name};
	check_match(bi, "main.Map[*]", map, 1);
	free(map_name);

	check_suggest(bi, "main.adx", "main.add", "main.add1");
	check_suggest(bi, "main.Strng", "main.(*Student).String", NULL);
	check_suggest(bi, "main.lrage", "main.large", NULL);

	binfo__close(bi);
	target_close(&t);
}

static void check_cgo_target(const char *path, const char *gover)
{
	struct target t;
	struct binfo *bi = open_ok(path);
	if (!bi)
		return;
	target_open(&t, path);
	check_common(bi, &t, gover, false);
	/* cgo lists _cgo_*_Cfunc_c_twice twice (LOCAL + GLOBAL): reported once. */
	const struct binfo_func **fs = NULL;
	int n = binfo_match_funcs(bi, "_cgo_*_Cfunc_c_twice", &fs);
	CHECK(n == 1, "cgo C function matched %d times", n);
	free(fs);
	binfo__close(bi);
	target_close(&t);
}

static void check_errors(const char *plain)
{
	char p[PATH_MAX + 64], self[PATH_MAX];

	snprintf(p, sizeof(p), "%s/does-not-exist", tmp_dir);
	expect_open_error(p, -ENOENT, "No such file or directory");
	expect_open_error(tmp_dir, -EISDIR, "Is a directory");

	snprintf(p, sizeof(p), "%s/text.txt", tmp_dir);
	run("echo 'not an elf at all, just some text' > %s", p);
	expect_open_error(p, -ENOEXEC, "not an ELF file");
	snprintf(p, sizeof(p), "%s/empty", tmp_dir);
	run(": > %s", p);
	expect_open_error(p, -ENOEXEC, "not an ELF file");
	expect_open_error("/dev/null", -ENOEXEC, "not an ELF file");

	if (geteuid() != 0) { /* root reads anything */
		snprintf(p, sizeof(p), "%s/unreadable", tmp_dir);
		run("cp %s %s && chmod 000 %s", plain, p, p);
		expect_open_error(p, -EACCES, "Permission denied");
	}

	/* ELFCLASS32 copy of a Go binary, and a real arm64 Go build. */
	snprintf(p, sizeof(p), "%s/class32", tmp_dir);
	run("cp %s %s && printf '\\001' | dd of=%s bs=1 seek=4 conv=notrunc status=none", plain, p,
	    p);
	expect_open_error(p, -ENOEXEC, "not an x86-64 ELF executable");
	snprintf(p, sizeof(p), "%s/arm64", tmp_dir);
	if (run("cd %s/tests/go/binfo && GOARCH=arm64 CGO_ENABLED=0 go build -o %s main.go",
	        src_dir, p) == 0)
		expect_open_error(p, -ENOEXEC, "not an x86-64 ELF executable");
	else
		failures++;

	/* This test program: x86-64 ELF, not Go. */
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = 0;
	expect_open_error(self, -ENOEXEC, "not a Go binary (no .gopclntab or Go build info)");

	/* Stripped and .gopclntab unreadable (its magic broken): no function source left. */
	snprintf(p, sizeof(p), "%s/stripped.badpcln", tmp_dir);
	if (run("cd %s/tests/go/binfo && CGO_ENABLED=0 go build -ldflags=-s -o %s "
	        "main.go",
	        src_dir, p) == 0) {
		struct target t;
		target_open(&t, p);
		uint8_t *img = xmalloc(t.size);
		memcpy(img, t.img, t.size);
		size_t shstrndx;
		Elf_Scn *scn = NULL;
		GElf_Shdr sh;
		bool hit = false;
		elf_getshdrstrndx(t.elf, &shstrndx);
		while ((scn = elf_nextscn(t.elf, scn))) {
			gelf_getshdr(scn, &sh);
			const char *name = elf_strptr(t.elf, shstrndx, sh.sh_name);
			if (name && strcmp(name, ".gopclntab") == 0) {
				img[sh.sh_offset] ^= 0xff;
				hit = true;
			}
		}
		target_close(&t);
		CHECK(hit, "%s: no .gopclntab", p);
		put_image(p, img, t.size);
		expect_open_error(p, -EOPNOTSUPP,
		                  "has no symbol table and no readable .gopclntab (Go 1.16+)");
	} else {
		failures++;
	}
}

/* Functions of REF (with .symtab) that STRIPPED (functions from .gopclntab) must have at
 * the same address with the same size: all main.* and a sample of the runtime. */
static const char *const stripped_sample[] = {
    "runtime.main",           "runtime.goexit1",    "runtime.mallocgc", "runtime.newproc",
    "runtime.morestack.abi0", "runtime.gopark",     "runtime.schedule", "runtime.memmove",
    "runtime.rt0_go.abi0",    "runtime.casgstatus",
};

/* Whether .gopclntab elides type arguments ("main.Map[...]", Go 1.18/1.19) rather than
 * keeping the symbol's "main.Map[go.shape.int,go.shape.int]" (later releases): what
 * `go tool addr2line` of a stripped build names main.Map's address (set in main). */
static bool pcln_elides;

/* The name .gopclntab gives a symbol: without the ".abi0" of assembly functions, type
 * arguments elided where pcln_elides. */
static void pcln_name(const char *sym, char *out, size_t size)
{
	snprintf(out, size, "%s", sym);
	size_t n = strlen(out);
	if (n > 5 && strcmp(out + n - 5, ".abi0") == 0)
		out[n - 5] = 0;
	char *l = strchr(out, '['), *r = strrchr(out, ']');
	if (pcln_elides && l && r && r > l) {
		char tail[512];
		snprintf(tail, sizeof(tail), "%s", r + 1);
		snprintf(l, size - (size_t)(l - out), "[...]%s", tail);
	}
}

static void same_func(struct binfo *ref, struct binfo *st, struct target *tt,
                      const struct binfo_func *rf)
{
	char nm[512];
	pcln_name(rf->name, nm, sizeof(nm));
	const struct binfo_func *sf = binfo_find_func(st, nm);
	CHECK(sf != NULL, "%s: %s missing", tt->path, rf->name);
	if (!sf)
		return;
	CHECK(sf->addr == rf->addr && sf->size == rf->size,
	      "%s: %s at 0x%lx size %lu, with symbols 0x%lx size %lu", tt->path, rf->name,
	      (unsigned long)sf->addr, (unsigned long)sf->size, (unsigned long)rf->addr,
	      (unsigned long)rf->size);
	uint64_t e1 = 1, e2 = 2, *r1 = NULL, *r2 = NULL;
	CHECK(binfo_entry_addr(ref, rf, &e1) == 0 && binfo_entry_addr(st, sf, &e2) == 0 && e1 == e2,
	      "%s: %s entry 0x%lx, with symbols 0x%lx", tt->path, rf->name, (unsigned long)e2,
	      (unsigned long)e1);
	int n1 = binfo_ret_addrs(ref, rf, &r1), n2 = binfo_ret_addrs(st, sf, &r2);
	CHECK(n1 == n2 && (n1 <= 0 || memcmp(r1, r2, (size_t)n1 * sizeof(*r1)) == 0),
	      "%s: %s RETs differ (%d vs %d with symbols)", tt->path, rf->name, n2, n1);
	free(r1);
	free(r2);
}

static void check_stripped(const char *refpath, const char *path, const char *gover, bool pie,
                           bool main_target)
{
	struct target rt, tt;
	struct binfo *ref = open_ok(refpath), *st = open_ok(path);
	if (!ref || !st) {
		binfo__close(ref);
		binfo__close(st);
		return;
	}
	target_open(&rt, refpath);
	target_open(&tt, path);
	CHECK(sym_addr(&tt, "runtime.main") == 0, "%s still has symbols", path);
	CHECK(binfo_go_version(st) && strcmp(binfo_go_version(st), gover) == 0,
	      "%s: go version %s, want %s", path, binfo_go_version(st), gover);
	CHECK(binfo_is_pie(st) == pie, "%s: pie %d", path, binfo_is_pie(st));

	const struct binfo_func **fs = NULL;
	int n = binfo_match_funcs(ref, "main.*", &fs), nmain = n;
	CHECK(n >= 4, "%s: only %d main.* functions", refpath, n);
	for (int i = 0; i < n; i++)
		same_func(ref, st, &tt, fs[i]);
	free(fs);
	for (size_t i = 0; i < sizeof(stripped_sample) / sizeof(*stripped_sample); i++) {
		const struct binfo_func *rf = must_find(ref, stripped_sample[i]);
		if (rf)
			same_func(ref, st, &tt, rf);
	}
	/* Every function from .gopclntab is a symbol of the same address and size. */
	const struct binfo_func **rs = NULL;
	int nr = binfo_match_funcs(ref, "*", &rs), bad = 0;
	n = binfo_match_funcs(st, "*", &fs);
	for (int i = 0, k = 0; i < n; i++) {
		bool ok = false;
		char nm[512];
		while (k < nr && rs[k]->addr < fs[i]->addr)
			k++;
		for (int j = k; j < nr && rs[j]->addr == fs[i]->addr && !ok; j++) {
			pcln_name(rs[j]->name, nm, sizeof(nm));
			/* an ABI0 twin of a pclntab name is NAME.abi0, as in the symbols */
			ok = rs[j]->size == fs[i]->size && (strcmp(nm, fs[i]->name) == 0 ||
							    strcmp(rs[j]->name, fs[i]->name) == 0);
		}
		if (!ok && bad++ < 5)
			CHECK(false, "%s: %s (0x%lx, %lu) is no symbol of %s", path, fs[i]->name,
			      (unsigned long)fs[i]->addr, (unsigned long)fs[i]->size, refpath);
	}
	free(rs);
	CHECK(bad == 0, "%s: %d functions differ from the symbols", path, bad);
	free(fs);
	check_entry(st, &tt, "main.add", 1);
	if (main_target) {
		check_entry(st, &tt, "main.large", 2);
		check_entry(st, &tt, "main.huge", 3);
		check_rets(st, &tt, "main.multiRet", 3);
	}
	check_all_funcs(st, &tt);
	printf("  %s: %d functions (%d main.*) as with symbols\n", path, n, nmain);
	binfo__close(ref);
	binfo__close(st);
	target_close(&rt);
	target_close(&tt);
}

/* Version from the runtime.buildVersion symbols when .go.buildinfo is not found: a
 * copy of BIN with that section renamed in .shstrtab. */
static void check_version_fallback(const char *bin, const char *name, const char *gover)
{
	char p[PATH_MAX + 64];
	struct target t;
	size_t shstrndx;
	GElf_Shdr sh;

	snprintf(p, sizeof(p), "%s/%s", tmp_dir, name);
	target_open(&t, bin);
	elf_getshdrstrndx(t.elf, &shstrndx);
	gelf_getshdr(elf_getscn(t.elf, shstrndx), &sh);
	uint8_t *img = xmalloc(t.size);
	memcpy(img, t.img, t.size);
	uint8_t *hit = memmem(img + sh.sh_offset, sh.sh_size, ".go.buildinfo", 14);
	CHECK(hit != NULL, "no .go.buildinfo in .shstrtab of %s", bin);
	if (hit)
		hit[12] = 'X';
	put_image(p, img, t.size);
	target_close(&t);

	struct binfo *bi = open_ok(p);
	if (bi) {
		CHECK(binfo_go_version(bi) && strcmp(binfo_go_version(bi), gover) == 0,
		      "%s: version %s from symbols, want %s", p, binfo_go_version(bi), gover);
		binfo__close(bi);
	}
}

/* moduledata.text found by scanning for the pointer to .gopclntab (what Go 1.26+,
 * whose pclntab header no longer holds the text start, needs when stripped) equals
 * runtime.text of the unstripped twin: non-PIE (a plain word) and PIE (a relocation). */
static void check_moduledata(const char *refpath, const char *path)
{
	struct target rt;
	struct binfo *bi = open_ok(path);
	uint64_t size, addr = 0;
	if (!bi)
		return;
	target_open(&rt, refpath);
	if (!binfo__section(bi, ".gopclntab", &size, &addr))
		binfo__section(bi, ".data.rel.ro.gopclntab", &size, &addr);
	uint64_t want = sym_addr(&rt, "runtime.text"), got = binfo__moduledata_text(bi, addr);
	CHECK(want && got == want, "%s: moduledata.text 0x%lx, runtime.text 0x%lx", path,
	      (unsigned long)got, (unsigned long)want);
	target_close(&rt);
	binfo__close(bi);
}

/* Open (and with GORUNTIME, binfo_goruntime: its first call for that file) timings. */
static void report_speed(const char *path, bool goruntime)
{
	struct binfo *bi = NULL;
	uint64_t t0 = now_ns();
	int rc = binfo__open(path, &bi);
	uint64_t t1 = now_ns();
	CHECK(rc == 0, "open %s", path);
	if (rc == 0) {
		const struct binfo_func *f = binfo_find_func(bi, "main.main");
		struct binfo_goruntime gr;
		uint64_t e;
		CHECK(f && binfo_entry_addr(bi, f, &e) == 0, "main.main in %s", path);
		if (goruntime) {
			uint64_t t2 = now_ns();
			int grc = binfo_goruntime(bi, &gr);
			uint64_t t3 = now_ns();
			CHECK(grc == 0, "binfo_goruntime(%s) = %d", path, grc);
			printf("  goruntime %s: %.2f ms (%s, goid +%d, g at fsbase%+lld)\n", path,
			       (double)(t3 - t2) / 1e6, grc == 0 ? gr.source : "failed", gr.g_goid,
			       (long long)gr.tls_g_offset);
		}
		binfo__close(bi);
	}
	printf("  open %s: %.2f ms\n", path, (double)(t1 - t0) / 1e6);
	/* printed, not bounded: speed is bench/run.sh's to measure */
}

/* ---- instructions the kernel's uprobes refuse (arch/x86_64_insn.c), as the kernel's rule reads:
 * LOCK or ES/CS/SS/DS among the prefixes, MOV to SS, POP SS; the locked target's
 * main.lkLocked (LOCK INCQ) is refused by the kernel itself in test_attach ---- */
static void check_uprobe_refuses(void)
{
	static const struct {
		const char *what;
		uint8_t b[15];
		bool refused;
	} cases[] = {
		{"lock incq (%rax)", {0xf0, 0x48, 0xff, 0x00}, true},
		{"lock xaddl", {0xf0, 0x0f, 0xc1, 0x0b}, true},
		{"lock cmpxchg with REX.W", {0xf0, 0x48, 0x0f, 0xb1, 0x0a}, true},
		{"66 lock cmpxchg", {0x66, 0xf0, 0x0f, 0xb1, 0x0a}, true},
		{"cs nopw (padding)", {0x2e, 0x66, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0}, true},
		{"ds prefix", {0x3e, 0xff, 0xe0}, true},
		{"mov %eax,%ss", {0x8e, 0xd0}, true},
		{"pop %ss", {0x17}, true},
		{"hlt (cgo's __stack_chk_fail)", {0xf4, 0xc3}, true},
		{"int3", {0xcc}, true},
		{"mov %fs:0xfffffffffffffff8,%r14 (Go's g)", {0x64, 0x4c, 0x8b, 0x34, 0x25, 0xf8, 0xff, 0xff, 0xff}, false},
		{"cmp 0x10(%r14),%rsp (Go's prologue)", {0x49, 0x3b, 0x66, 0x10}, false},
		{"rep stos", {0xf3, 0x48, 0xab}, false},
		{"mov %eax,%ds is not SS", {0x8e, 0xd8}, false},
		{"ret", {0xc3}, false},
		{"push %rbp", {0x55}, false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK((arch_uprobe_verdict(cases[i].b, sizeof(cases[i].b)) != ARCH_UPROBE_OK) ==
			      cases[i].refused,
		      "uprobe refusal of %s: want %d", cases[i].what, cases[i].refused);
}

/* ---- the hand x86-64 length decoder (arch/x86_64_insn.c) against capstone ---- */

/* Every function of PATH swept by both: the same instruction lengths and RETs wherever
 * the hand decoder answers; it may pass a function to capstone (answer 0), rarely. */
static void check_x86len(const char *path, bool go)
{
	struct binfo *bi = NULL;
	csh cs;
	if ((go ? binfo__open(path, &bi) : binfo__open_elf(path, &bi)) != 0) {
		CHECK(false, "open %s", path);
		return;
	}
	CHECK(cs_open(CS_ARCH_X86, CS_MODE_64, &cs) == CS_ERR_OK, "cs_open");
	cs_insn *in = cs_malloc(cs);
	long insns = 0, funcs = 0, unsure = 0, bad = 0;
	for (int i = 0; i < bi->nfuncs; i++) {
		const struct binfo_func *f = &bi->funcs[i];
		const uint8_t *code = f->size ? binfo__bytes_at(bi, f->addr, f->size) : NULL;
		if (!code)
			continue;
		funcs++;
		const uint8_t *p = code;
		size_t left = f->size;
		uint64_t pc = f->addr;
		while (cs_disasm_iter(cs, &p, &left, &pc, in)) {
			bool ret;
			size_t at = (size_t)(in->address - f->addr);
			int n = x86_insn_len(code + at, f->size - at, &ret);
			insns++;
			if (n == 0) {
				if (getenv("BINFO_TEST_X86_SHOW"))
					printf("    left to capstone: %s+%zu %s %s\n", f->name, at,
					       in->mnemonic, in->op_str);
				unsure++;
				break;
			}
			if (n != in->size || ret != (in->id == X86_INS_RET)) {
				if (bad++ < 10)
					CHECK(false, "%s: %s+%zu %s %s: length %d ret %d, capstone %u %d",
					      path, f->name, at, in->mnemonic, in->op_str, n, ret,
					      in->size, in->id == X86_INS_RET);
				break;
			}
		}
	}
	cs_free(in, 1);
	cs_close(&cs);
	printf("  %s: %ld functions, %ld instructions, %ld left to capstone, %ld differ\n",
	       path, funcs, insns, unsure, bad);
	CHECK(bad == 0, "%s: %ld instructions decoded differently", path, bad);
	CHECK(funcs > 100 && unsure * 100 < funcs, "%s: %ld of %ld functions left to capstone",
	      path, unsure, funcs);
	binfo__close(bi);
}

int main(int argc, char **argv)
{
	char plain[PATH_MAX + 32], pie[PATH_MAX + 32], cgo[PATH_MAX + 32];

	if (argc > 1) {
		snprintf(src_dir, sizeof(src_dir), "%s", argv[1]);
	} else {
		snprintf(src_dir, sizeof(src_dir), "%s", __FILE__);
		char *s = strstr(src_dir, "/tests/unit/");
		if (s)
			*s = 0;
		else
			snprintf(src_dir, sizeof(src_dir), ".");
	}
	if (use_test_go(src_dir) != 0 || system("go version >/dev/null 2>&1") != 0) {
		printf("SKIP: no go toolchain in PATH\n");
		return 77;
	}
	elf_version(EV_CURRENT);
	snprintf(tmp_dir, sizeof(tmp_dir), "%s/binfo_test.XXXXXX",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp_dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(plain, sizeof(plain), "%s/plain", tmp_dir);
	snprintf(pie, sizeof(pie), "%s/pie", tmp_dir);
	snprintf(cgo, sizeof(cgo), "%s/cgo", tmp_dir);
	/* no -trimpath: the runtime tests' builds make the same compiles, which the shared
	 * build cache then has (a cold run compiled the standard library again for it) */
	if (run("cd %s/tests/go/binfo && CGO_ENABLED=0 go build -o %s main.go && "
	        "go build -buildmode=pie -o %s main.go",
	        src_dir, plain, pie) != 0 ||
	    run("cd %s/tests/go/binfo_cgo && CGO_ENABLED=1 go build "
	        "-ldflags=-linkmode=external -o %s main.go",
	        src_dir, cgo) != 0) {
		run("rm -rf %s", tmp_dir);
		printf("FAIL: go build\n");
		return 1;
	}
	char *gover = go_version();

	printf("plain build\n");
	check_main_target(plain, gover, false);
	printf("-buildmode=pie\n");
	check_main_target(pie, gover, true);
	printf("cgo, external linking\n");
	check_cgo_target(cgo, gover);
	printf("version from symbols\n");
	check_version_fallback(plain, "plain.nobuildinfo", gover);
	check_version_fallback(pie, "pie.nobuildinfo", gover);
	check_version_fallback(cgo, "cgo.nobuildinfo", gover);
	printf("stripped: go build -ldflags=-s, strip(1)\n");
	char sp[4][PATH_MAX + 32];
	const char *sname[4] = {"plain.s", "pie.s", "plain.strip", "pie.strip"};
	for (int i = 0; i < 4; i++)
		snprintf(sp[i], sizeof(sp[i]), "%s/%s", tmp_dir, sname[i]);
	if (run("cd %s/tests/go/binfo && CGO_ENABLED=0 go build -ldflags=-s -o %s "
	        "main.go && go build -buildmode=pie -ldflags=-s -o %s main.go && "
	        "strip -o %s %s && strip -o %s %s && strip -o %s/cgo.strip %s",
	        src_dir, sp[0], sp[1], sp[2], plain, sp[3], pie, tmp_dir, cgo) == 0) {
		/* go tool addr2line reads .gopclntab; it cannot read a PIE, and the
		 * compiler names alike in every build mode: plain.s speaks for all */
		char *map = nm_map_name(plain);
		char *addr = first_line("go tool nm %s | awk '$2 == \"T\" && index($0, \"%s\") && !n++ { "
					"print \"0x\" $1 }'",
					plain, map);
		char *pcln = first_line("echo %s | go tool addr2line %s", addr, sp[0]);
		pcln_elides = strstr(pcln, "[...]") != NULL;
		CHECK(strcmp(pcln, map) == 0 || pcln_elides, "%s: .gopclntab names %s %s", sp[0],
		      map, pcln);
		printf("  .gopclntab names %s %s\n", map, pcln);
		free(map);
		free(addr);
		free(pcln);
		check_stripped(plain, sp[0], gover, false, true);
		check_stripped(pie, sp[1], gover, true, true);
		check_stripped(plain, sp[2], gover, false, true);
		check_stripped(pie, sp[3], gover, true, true);
		char cs[PATH_MAX + 32];
		snprintf(cs, sizeof(cs), "%s/cgo.strip", tmp_dir);
		check_stripped(cgo, cs, gover, false, false);
		printf("stripped: text start from moduledata, version from a data scan\n");
		check_moduledata(plain, sp[0]);
		check_moduledata(pie, sp[1]);
		check_moduledata(cgo, cs);
		/* no build info and no symbols: runtime.buildVersion's string header */
		check_version_fallback(sp[0], "plain.s.nobuildinfo", gover);
		check_version_fallback(sp[1], "pie.s.nobuildinfo", gover);
		check_version_fallback(cs, "cgo.strip.nobuildinfo", gover);
	} else {
		failures++;
	}
	printf("errors\n");
	check_errors(plain);
	printf("go runtime layout\n");
	check_goruntime_all(plain, pie, cgo, gover);
	printf("kernel thread pointer offset\n");
	check_tp();
	printf("x86-64 lengths: the hand decoder against capstone\n");
	check_uprobe_refuses();
	check_x86len(plain, true);
	check_x86len(cgo, true);
	check_x86len("/proc/self/exe", false); /* C code from gcc -O2 */
	char tool[PATH_MAX];
	FILE *gt = popen("go env GOTOOLDIR", "r");
	if (gt && fgets(tool, sizeof(tool) - 16, gt)) {
		tool[strcspn(tool, "\n")] = 0;
		strcat(tool, "/compile"); /* the Go compiler: a large Go program */
		check_x86len(tool, true);
	}
	if (gt)
		pclose(gt);
	if (access("/usr/local/bin/docker", R_OK) == 0) /* Go 1.24 where the image has it */
		check_x86len("/usr/local/bin/docker", true);
	if (getenv("BINFO_TEST_X86"))
		check_x86len(getenv("BINFO_TEST_X86"), true);
	printf("speed\n");
	report_speed(plain, false); /* binfo_goruntime(plain) was timed above */
	if (getenv("BINFO_TEST_BIG")) /* e.g. a 40 MB Go binary with symbols */
		report_speed(getenv("BINFO_TEST_BIG"), true);

	free(gover);
	run("rm -rf %s", tmp_dir);
	printf("%s (%d failures)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
