/* binfo unit test, its second part: the Go runtime layout (binfo_goruntime) against the
 * runtime's own go_asm.h and the TLS loads of g the linkers wrote, and the kernel's
 * fsbase offset against bpftool's BTF (tests/unit/binfo_test.c builds the targets). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "binfo_test.h"
#include "binfo/binfo.h"
#include "binfo/binfo_int.h"
#include "common/util.h"

/* ---- Go runtime layout (binfo_goruntime) and the kernel's fsbase offset ---- */

struct rt_layout {
	int g_stack_hi, g_m, g_goid, m_g0, m_curg;
};

/* Oracle for the offsets: go_asm.h of the runtime, which the installed compiler writes
 * for the runtime's own assembly (`#define g_goid 152`, ...). `go build -a -work`
 * keeps it in the work directory. */
static bool rt_oracle(struct rt_layout *l)
{
	char out[PATH_MAX + 32];
	int g_stack = -1, stack_hi = -1;
	snprintf(out, sizeof(out), "%s/rt_asm.txt", tmp_dir);
	*l = (struct rt_layout){-1, -1, -1, -1, -1};
	if (run("cd %s && W=$(go build -a -work runtime 2>&1 | sed -n 's/^WORK=//p') && "
	        "grep -hE '^#define (g_stack|stack_hi|g_m|g_goid|m_g0|m_curg) ' "
	        "$(grep -l '^#define g_goid ' \"$W\"/b*/go_asm.h) > %s; rc=$?; "
	        "rm -rf \"$W\"; exit $rc",
	        tmp_dir, out) != 0)
		return false;
	char *s = slurp(out), *save = NULL;
	for (char *line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[64];
		int v;
		if (sscanf(line, "#define %63s %d", name, &v) != 2)
			continue;
		if (strcmp(name, "g_stack") == 0)
			g_stack = v;
		else if (strcmp(name, "stack_hi") == 0)
			stack_hi = v;
		else if (strcmp(name, "g_m") == 0)
			l->g_m = v;
		else if (strcmp(name, "g_goid") == 0)
			l->g_goid = v;
		else if (strcmp(name, "m_g0") == 0)
			l->m_g0 = v;
		else if (strcmp(name, "m_curg") == 0)
			l->m_curg = v;
	}
	free(s);
	l->g_stack_hi = g_stack >= 0 && stack_hi >= 0 ? g_stack + stack_hi : -1;
	return l->g_stack_hi >= 0 && l->g_m >= 0 && l->g_goid >= 0 && l->m_g0 >= 0 &&
	       l->m_curg >= 0;
}

/* Oracle for the TLS slot: where the linkers made Go's code load g from, in every
 * `mov %fs:disp32,%r14` (64 4c 8b 34 25 disp32; non-PIE) and every
 * `mov $imm32,%r14; mov %fs:(%r14),%r14` (49 c7 c6 imm32 64 4d 8b 36; PIE) of .text.
 * Returns how many there are, -1 when they disagree. */
static int code_tls_slot(struct target *t, int64_t *off)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	int n = 0;
	bool mismatch = false;

	elf_getshdrstrndx(t->elf, &shstrndx);
	while ((scn = elf_nextscn(t->elf, scn))) {
		gelf_getshdr(scn, &sh);
		const char *name = elf_strptr(t->elf, shstrndx, sh.sh_name);
		if (name && strcmp(name, ".text") == 0)
			break;
	}
	if (!scn)
		return 0;
	const uint8_t *p = t->img + sh.sh_offset, *end = p + sh.sh_size;
	for (const uint8_t *q = p; q + 11 <= end; q++) {
		int32_t v;
		if (q[0] == 0x64 && q[1] == 0x4c && q[2] == 0x8b && q[3] == 0x34 && q[4] == 0x25)
			memcpy(&v, q + 5, 4);
		else if (q[0] == 0x49 && q[1] == 0xc7 && q[2] == 0xc6 && q[7] == 0x64 &&
		         q[8] == 0x4d && q[9] == 0x8b && q[10] == 0x36)
			memcpy(&v, q + 3, 4);
		else
			continue;
		if (n++ == 0)
			*off = v;
		else if (*off != v)
			mismatch = true;
	}
	return mismatch ? -1 : n;
}

/* binfo_goruntime on PATH: offsets equal to the go_asm.h oracle (WANT), the expected
 * source and TLS mode, and a TLS slot equal to the one in the code (and to WANT_TLS
 * unless 0). */
static int64_t check_goruntime(const char *path, const struct rt_layout *want,
                               const char *want_source, enum binfo_tls_mode want_mode,
                               int64_t want_tls)
{
	struct binfo_goruntime gr;
	struct target t;
	int64_t code_off = 0;
	struct binfo *bi = open_ok(path);
	if (!bi)
		return 0;
	target_open(&t, path);
	uint64_t t0 = now_ns();
	int rc = binfo_goruntime(bi, &gr);
	uint64_t t1 = now_ns();
	CHECK(rc == 0, "%s: binfo_goruntime = %d", path, rc);
	if (rc == 0) {
		CHECK(gr.source && strcmp(gr.source, want_source) == 0, "%s: source %s, want %s",
		      path, gr.source, want_source);
		CHECK(gr.g_stack_hi == want->g_stack_hi && gr.g_m == want->g_m &&
		          gr.g_goid == want->g_goid && gr.m_g0 == want->m_g0 &&
		          gr.m_curg == want->m_curg,
		      "%s: stack.hi %d m %d goid %d g0 %d curg %d, want %d %d %d %d %d", path,
		      gr.g_stack_hi, gr.g_m, gr.g_goid, gr.m_g0, gr.m_curg, want->g_stack_hi,
		      want->g_m, want->g_goid, want->m_g0, want->m_curg);
		CHECK(gr.regabi, "%s: regabi false for %s", path, binfo_go_version(bi));
		CHECK(gr.tls_mode == want_mode, "%s: TLS mode %d, want %d", path, gr.tls_mode,
		      want_mode);
		int n = code_tls_slot(&t, &code_off);
		CHECK(n > 50, "%s: %d TLS loads of g in .text (-1: they disagree)", path, n);
		CHECK(gr.tls_g_offset == code_off, "%s: g at fsbase%+lld, the code says %+lld",
		      path, (long long)gr.tls_g_offset, (long long)code_off);
		if (want_tls)
			CHECK(gr.tls_g_offset == want_tls, "%s: g at fsbase%+lld, want %+lld", path,
			      (long long)gr.tls_g_offset, (long long)want_tls);
		struct binfo_goruntime again;
		unsigned computed = binfo_goruntime_computed();
		CHECK(binfo_goruntime(bi, &again) == 0 && again.source == gr.source &&
		          again.g_stack_hi == gr.g_stack_hi && again.g_m == gr.g_m &&
		          again.g_goid == gr.g_goid && again.m_g0 == gr.m_g0 &&
		          again.m_curg == gr.m_curg && again.tls_mode == gr.tls_mode &&
		          again.tls_g_offset == gr.tls_g_offset && again.regabi == gr.regabi,
		      "%s: second binfo_goruntime differs", path);
		/* the second call takes the kept layout: counted, not timed (a busy machine
		 * once made the cached call take 3 ms) */
		CHECK(binfo_goruntime_computed() == computed,
		      "%s: the second binfo_goruntime worked the layout out again (not cached)",
		      path);
		printf("  %s: %s, goid +%d, curg +%d, g at fsbase%+lld (%s; %d loads in the "
		       "code agree), %.1f ms\n",
		       path, gr.source, gr.g_goid, gr.m_curg, (long long)gr.tls_g_offset,
		       gr.tls_mode == BINFO_TLS_EXTERNAL ? "external" : "internal", n,
		       (double)(t1 - t0) / 1e6);
	}
	binfo__close(bi);
	target_close(&t);
	return rc == 0 ? gr.tls_g_offset : 0;
}

/* A copy of BIN whose .go.buildinfo claims Go 1.99 (same length): no DWARF, no table. */
static void check_goruntime_unknown(const char *bin, const char *gover)
{
	char p[PATH_MAX + 64], fake[64];
	struct target t;
	size_t shstrndx, vlen = strlen(gover);
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	uint8_t *hit = NULL;

	snprintf(p, sizeof(p), "%s/nodwarf.go199", tmp_dir);
	snprintf(fake, sizeof(fake), "%s", gover);
	if (strncmp(fake, "go1.", 4) != 0) {
		CHECK(false, "unexpected go version %s", gover);
		return;
	}
	for (char *c = fake + 4; *c >= '0' && *c <= '9'; c++)
		*c = '9';
	target_open(&t, bin);
	uint8_t *img = xmalloc(t.size);
	memcpy(img, t.img, t.size);
	elf_getshdrstrndx(t.elf, &shstrndx);
	while ((scn = elf_nextscn(t.elf, scn))) {
		gelf_getshdr(scn, &sh);
		const char *name = elf_strptr(t.elf, shstrndx, sh.sh_name);
		if (name && strcmp(name, ".go.buildinfo") == 0) {
			hit = memmem(img + sh.sh_offset, sh.sh_size, gover, vlen);
			break;
		}
	}
	CHECK(hit != NULL, "%s: version %s not in .go.buildinfo", bin, gover);
	if (hit)
		memcpy(hit, fake, vlen);
	put_image(p, img, t.size);
	target_close(&t);

	struct binfo *bi = open_ok(p);
	if (!bi)
		return;
	struct binfo_goruntime gr;
	memset(&gr, 0x55, sizeof(gr));
	CHECK(binfo_go_version(bi) && strcmp(binfo_go_version(bi), fake) == 0,
	      "%s: version %s, want %s", p, binfo_go_version(bi), fake);
	int rc = binfo_goruntime(bi, &gr);
	CHECK(rc == -ENOENT, "%s (%s, no DWARF): binfo_goruntime = %d, want -ENOENT", p, fake, rc);
	CHECK(gr.source == NULL && gr.g_goid == 0, "%s: *out not cleared", p);
	printf("  %s (%s, no DWARF): %d\n", p, fake, rc);
	binfo__close(bi);
}

/* task_struct.thread.fsbase from BTF: plausible, cached, and equal to what bpftool
 * prints for the same BTF when bpftool is installed. */
void check_tp(void)
{
	char out[PATH_MAX + 32];
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		printf("  SKIP: no /sys/kernel/btf/vmlinux\n");
		return;
	}
	uint64_t t0 = now_ns();
	int off = binfo_kernel_tp_offset();
	uint64_t t1 = now_ns();
	int again = binfo_kernel_tp_offset();
	uint64_t t2 = now_ns();
	CHECK(off > 512 && off < 65536 && off % 8 == 0, "fsbase offset %d", off);
	CHECK(again == off, "fsbase offset %d, then %d", off, again);
	printf("  task_struct.thread.fsbase at %d (%.1f ms; cached %.3f ms)\n", off,
	       (double)(t1 - t0) / 1e6, (double)(t2 - t1) / 1e6);

	snprintf(out, sizeof(out), "%s/fsbase.txt", tmp_dir);
	if (system("command -v bpftool >/dev/null 2>&1") != 0)
		return;
	/* bits_offset of task_struct.thread and of thread_struct.fsbase, top level only
	 * (this kernel's task_struct has no anonymous wrapper around `thread`). */
	run("bpftool btf dump file /sys/kernel/btf/vmlinux | awk '"
	    "/^\\[[0-9]+\\] STRUCT .task_struct. /{s=1;next} "
	    "/^\\[[0-9]+\\] STRUCT .thread_struct. /{s=2;next} /^\\[/{s=0} "
	    "{gsub(/\\047/, \"\", $1)} "
	    "s==1 && $1==\"thread\"{split($3,a,\"=\"); t=a[2]} "
	    "s==2 && $1==\"fsbase\"{split($3,a,\"=\"); f=a[2]} "
	    "END{if (t != \"\" && f != \"\") print (t+f)/8}' > %s",
	    out);
	char *s = slurp(out);
	if (s[0]) {
		CHECK(atoi(s) == off, "fsbase offset %d, bpftool says %s", off, s);
		printf("  bpftool btf dump: %s", s);
	} else
		printf("  (bpftool: task_struct.thread/fsbase not found at the top level)\n");
	free(s);
}

/* A cgo target with C thread-locals (one 64-byte aligned) in the executable's TLS
 * segment, so that external linking moves g away from fsbase-8. */
static const char tls_target[] =
    "package main\n\n"
    "/*\n"
    "__thread char c_tls_small[24] = {1};\n"
    "__thread long long c_tls_big[100] __attribute__((aligned(64)));\n"
    "static int c_touch(int x) { c_tls_small[x & 7] = (char)x; c_tls_big[x & 63] = x;\n"
    "\treturn c_tls_small[0] + (int)c_tls_big[x & 63]; }\n"
    "*/\n"
    "import \"C\"\n\n"
    "import (\n\t\"fmt\"\n\t\"os\"\n)\n\n"
    "//go:noinline\n"
    "func add(a, b int) int { return a + b + int(C.c_touch(C.int(a))) }\n\n"
    "func main() { fmt.Println(add(len(os.Args), 2)) }\n";

/* The go-version table against the DWARF of a real binary of another release than the
 * installed toolchain's: BIN's offsets from its DWARF equal the table's for its version,
 * read from a copy without DWARF (strip -g). The docker CLI (Go 1.24, DWARF) is on this
 * machine kind; absent elsewhere, the check says so. */
static void check_table_vs_dwarf(const char *bin)
{
	struct binfo_goruntime gr;
	char nodw[PATH_MAX + 64];
	if (access(bin, R_OK) != 0) {
		printf("  %s: absent, not checked\n", bin);
		return;
	}
	struct binfo *bi = open_ok(bin);
	if (!bi)
		return;
	int rc = binfo_goruntime(bi, &gr);
	CHECK(rc == 0 && strcmp(gr.source, "dwarf") == 0, "%s: no layout from DWARF", bin);
	printf("  %s (%s): dwarf says goid +%d, curg +%d\n", bin, binfo_go_version(bi),
	       gr.g_goid, gr.m_curg);
	binfo__close(bi);
	snprintf(nodw, sizeof(nodw), "%s/real.nodwarf", tmp_dir);
	if (rc != 0 || run("strip -g -o %s %s", nodw, bin)) {
		failures++;
		return;
	}
	struct binfo_goruntime tab;
	bi = open_ok(nodw);
	if (!bi)
		return;
	rc = binfo_goruntime(bi, &tab);
	CHECK(rc == 0 && strcmp(tab.source, "go-version table") == 0 &&
	      tab.g_stack_hi == gr.g_stack_hi && tab.g_m == gr.g_m && tab.g_goid == gr.g_goid &&
	      tab.m_g0 == gr.m_g0 && tab.m_curg == gr.m_curg && tab.tls_mode == gr.tls_mode &&
	      tab.tls_g_offset == gr.tls_g_offset,
	      "%s: the table (%s) says goid +%d, curg +%d, g at fsbase%+lld", nodw,
	      rc ? "none" : tab.source, tab.g_goid, tab.m_curg, (long long)tab.tls_g_offset);
	binfo__close(bi);
}

void check_goruntime_all(const char *plain, const char *pie, const char *cgo,
                         const char *gover)
{
	char nodwarf[PATH_MAX + 32], cgo_nodwarf[PATH_MAX + 32], tls_ext[PATH_MAX + 32],
	    tls_pie[PATH_MAX + 32], src[PATH_MAX + 32];
	struct rt_layout want;

	if (!rt_oracle(&want)) {
		CHECK(false, "no runtime go_asm.h from `go build -a -work runtime`");
		return;
	}
	printf("  go_asm.h: g.stack.hi %d, g.m %d, g.goid %d, m.g0 %d, m.curg %d\n",
	       want.g_stack_hi, want.g_m, want.g_goid, want.m_g0, want.m_curg);

	snprintf(nodwarf, sizeof(nodwarf), "%s/nodwarf", tmp_dir);
	snprintf(cgo_nodwarf, sizeof(cgo_nodwarf), "%s/cgo.nodwarf", tmp_dir);
	snprintf(tls_ext, sizeof(tls_ext), "%s/tlscgo", tmp_dir);
	snprintf(tls_pie, sizeof(tls_pie), "%s/tlscgo.pie", tmp_dir);
	snprintf(src, sizeof(src), "%s/tlscgo.go", tmp_dir);
	FILE *f = fopen(src, "w");
	fputs(tls_target, f);
	fclose(f);
	if (run("cd %s/tests/go/binfo && CGO_ENABLED=0 go build -ldflags=-w -o %s "
	        "main.go",
	        src_dir, nodwarf) != 0 ||
	    run("cd %s/tests/go/binfo_cgo && CGO_ENABLED=1 go build "
	        "'-ldflags=-w -linkmode=external' -o %s main.go",
	        src_dir, cgo_nodwarf) != 0 ||
	    run("cd %s && CGO_ENABLED=1 go build -o %s tlscgo.go && "
	        "CGO_ENABLED=1 go build -buildmode=pie -o %s tlscgo.go",
	        tmp_dir, tls_ext, tls_pie) != 0) {
		failures++;
		return;
	}

	/* Internal linking: g at fsbase-8 (PIE has an 8-byte PT_TLS but no runtime.tlsg). */
	check_goruntime(plain, &want, "dwarf", BINFO_TLS_INTERNAL, -8);
	check_goruntime(pie, &want, "dwarf", BINFO_TLS_INTERNAL, -8);
	check_goruntime(nodwarf, &want, "go-version table", BINFO_TLS_INTERNAL, -8);
	/* Stripped (no .symtab, no DWARF; built in main): the version from .go.buildinfo. */
	char stripped[PATH_MAX + 32];
	snprintf(stripped, sizeof(stripped), "%s/plain.s", tmp_dir);
	check_goruntime(stripped, &want, "go-version table", BINFO_TLS_INTERNAL, -8);
	snprintf(stripped, sizeof(stripped), "%s/pie.strip", tmp_dir);
	check_goruntime(stripped, &want, "go-version table", BINFO_TLS_INTERNAL, -8);
	/* External linking: runtime.tlsg alone in the TLS segment (-8 again), then behind
	 * 24 + 800 bytes of C thread-locals aligned to 64 (with Debian 12's gcc/ld: PT_TLS
	 * memsz 0x3a0 rounded up to 0x3c0, runtime.tlsg at 0x40: fsbase-0x380). */
	check_goruntime(cgo, &want, "dwarf", BINFO_TLS_EXTERNAL, -8);
	check_goruntime(cgo_nodwarf, &want, "go-version table", BINFO_TLS_EXTERNAL, -8);
	int64_t ext = check_goruntime(tls_ext, &want, "dwarf", BINFO_TLS_EXTERNAL, 0);
	int64_t epie = check_goruntime(tls_pie, &want, "dwarf", BINFO_TLS_EXTERNAL, 0);
	CHECK(ext < -8 && epie < -8, "C thread-locals did not move g: %lld %lld", (long long)ext,
	      (long long)epie);
	/* Stripped, runtime.tlsg is gone: the slot is read from runtime.load_g's code. */
	char tls_strip[PATH_MAX + 64], tls_pie_strip[PATH_MAX + 64];
	snprintf(tls_strip, sizeof(tls_strip), "%s.strip", tls_ext);
	snprintf(tls_pie_strip, sizeof(tls_pie_strip), "%s.strip", tls_pie);
	if (run("strip -o %s %s", tls_strip, tls_ext)) {
		failures++;
		return;
	}
	check_goruntime(tls_strip, &want, "go-version table", BINFO_TLS_EXTERNAL, ext);
	(void)tls_pie_strip; /* a stripped cgo PIE has no readable pclntab yet (see notes) */
	check_goruntime_unknown(nodwarf, gover);
	check_table_vs_dwarf(access("/usr/local/bin/docker", R_OK) == 0 ? "/usr/local/bin/docker"
									: "/usr/bin/docker");
}

