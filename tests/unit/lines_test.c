/* lines unit test: src/binfo/lines.c (PC -> function, file, line) against two oracles,
 * on Go targets built at test time with the installed toolchain:
 *   - `go tool addr2line` (Go's own pclntab reader): file:line of thousands of PCs
 *     spread over every function, through DWARF .debug_line and through .gopclntab,
 *     in a plain, a -ldflags=-w (no DWARF) and a PIE build; the function it names is
 *     the outer one (it does not expand inlined calls); an externally linked build
 *     too, whose C start-up objects add DWARF 5 line tables;
 *     (go tool addr2line cannot read a PIE: there DWARF and .gopclntab, each checked
 *     against it on the plain build, must agree with each other);
 *   - the runtime's own view: tests/go/lines prints runtime.CallersFrames (inlined
 *     calls expanded) and every frame must match the lookup of its PC (plain and PIE,
 *     less the load bias).
 * Plus the time to decode the DWARF line table.
 *
 *   lines_test [SOURCE_DIR]     (default: derived from __FILE__)
 *
 * Exit 0 = pass, 1 = failures, 77 = skipped (no go: scripts/find-go.sh). */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "binfo/binfo.h"
#include "common/util.h"

static char src_dir[PATH_MAX], tmp_dir[PATH_MAX];

static const char *source_name(enum binfo_lines_source s)
{
	return s == BINFO_LINES_DWARF ? "dwarf" : s == BINFO_LINES_PCLNTAB ? "gopclntab" : "auto";
}

/* Up to 4 PCs in each function: its entry and 1/4, 2/4, 3/4 of the way in. */
static int sample_pcs(struct binfo *bi, uint64_t **out)
{
	const struct binfo_func **fs = NULL;
	int nf = binfo_match_funcs(bi, "*", &fs);
	VEC(uint64_t) v = {0};
	for (int i = 0; i < nf; i++)
		for (uint64_t k = 0; k < 4; k++)
			if (k == 0 || fs[i]->size >= 8)
				vec_push(&v, fs[i]->addr + k * fs[i]->size / 4);
	free(fs);
	*out = v.v;
	return v.n;
}

/* Compares lookups of the sampled PCs with `go tool addr2line`. */
static void check_addr2line(const char *bin, enum binfo_lines_source want, bool expect_ok)
{
	struct binfo *bi;
	struct binfo_lines *l = NULL;
	if (binfo__open(bin, &bi) < 0) {
		CHECK(0, "cannot open %s", bin);
		return;
	}
	int rc = binfo_lines__open(bi, want, &l);
	if (!expect_ok) {
		CHECK(rc == -ENOENT && !l, "%s: %s source should be absent (rc %d)", bin,
		      source_name(want), rc);
		binfo_lines__close(l);
		binfo__close(bi);
		return;
	}
	CHECK(rc == 0 && l, "%s: no %s line table (rc %d)", bin, source_name(want), rc);
	if (rc) {
		binfo__close(bi);
		return;
	}
	if (want != BINFO_LINES_AUTO)
		CHECK(binfo_lines_source(l) == want, "%s: source %d", bin, binfo_lines_source(l));

	uint64_t *pcs;
	int n = sample_pcs(bi, &pcs);
	char in[PATH_MAX + 16], outp[PATH_MAX + 16];
	snprintf(in, sizeof(in), "%s/pcs.txt", tmp_dir);
	snprintf(outp, sizeof(outp), "%s/addr2line.txt", tmp_dir);
	FILE *f = fopen(in, "w");
	for (int i = 0; i < n; i++)
		fprintf(f, "%#llx\n", (unsigned long long)pcs[i]);
	fclose(f);
	if (run("go tool addr2line %s < %s > %s", bin, in, outp)) {
		CHECK(0, "go tool addr2line failed");
		free(pcs);
		binfo_lines__close(l);
		binfo__close(bi);
		return;
	}
	f = fopen(outp, "r");
	char name[4096], loc[4096];
	int compared = 0, line_bad = 0, name_bad = 0, shown = 0;
	for (int i = 0; i < n && fgets(name, sizeof(name), f) && fgets(loc, sizeof(loc), f); i++) {
		name[strcspn(name, "\n")] = 0;
		loc[strcspn(loc, "\n")] = 0;
		char *colon = strrchr(loc, ':');
		if (!colon || !strcmp(name, "?") || !strcmp(loc, "?:0"))
			continue; /* addr2line knows nothing there either */
		*colon = 0;
		int want_line = atoi(colon + 1);
		struct binfo_pcline pl;
		rc = binfo_lines_lookup(l, pcs[i], &pl);
		compared++;
		/* ":-1": a function without a line (the linker's go:textfipsstart of Go 1.24+
		 * has pc tables of line -1 and no file); gotrace must then give none */
		bool no_line = !loc[0] && want_line < 0;
		bool line_ok = no_line ? rc == 0 && !pl.file
				       : rc == 0 && pl.file && !strcmp(pl.file, loc) &&
						 pl.line == want_line;
		bool name_ok = rc == 0 && pl.outer && !strcmp(pl.outer, name);
		line_bad += !line_ok;
		name_bad += !name_ok;
		if ((!line_ok || !name_ok) && shown++ < 10)
			printf("  %s %s pc %#llx: addr2line %s %s:%d, gotrace %s %s:%d\n", bin,
			       source_name(want), (unsigned long long)pcs[i], name, loc, want_line,
			       pl.outer ? pl.outer : "-", pl.file ? pl.file : "-", pl.line);
	}
	fclose(f);
	CHECK(compared > 1000, "%s: only %d PCs compared", bin, compared);
	CHECK(line_bad == 0, "%s (%s): %d of %d file:line differ from go tool addr2line", bin,
	      source_name(want), line_bad, compared);
	CHECK(name_bad == 0, "%s (%s): %d of %d function names differ", bin, source_name(want),
	      name_bad, compared);
	printf("%s (%s): %d PCs agree with go tool addr2line\n", strrchr(bin, '/') + 1,
	       source_name(want), compared - (line_bad > name_bad ? line_bad : name_bad));
	free(pcs);
	binfo_lines__close(l);
	binfo__close(bi);
}

/* The C functions of a cgo build (DWARF 5 line tables from gcc) against LLVM's
 * addr2line (llvm-16 comes with the build's llvm-16-dev), else binutils': binutils 2.40
 * answers ??:? for every PC of a Go 1.25+ binary, whose DWARF 5 it does not take. */
static void check_c_lines(const char *bin)
{
	struct binfo *bi;
	struct binfo_lines *l = NULL;
	const char *a2l = NULL;
	static const char *const tools[] = {"llvm-addr2line-16", "llvm-addr2line", "addr2line"};
	for (size_t i = 0; i < sizeof(tools) / sizeof(*tools) && !a2l; i++) {
		char cmd[256];
		snprintf(cmd, sizeof(cmd), "%s --version > /dev/null 2>&1", tools[i]);
		if (system(cmd) == 0)
			a2l = tools[i];
	}
	if (!a2l) {
		printf("(no addr2line: C line tables not checked)\n");
		return;
	}
	if (binfo__open(bin, &bi) < 0 || binfo_lines__open(bi, BINFO_LINES_DWARF, &l)) {
		CHECK(0, "%s: no DWARF line table", bin);
		return;
	}
	const struct binfo_func **fs = NULL;
	int nf = binfo_match_funcs(bi, "*cgo*", &fs), n = 0, bad = 0;
	char in[PATH_MAX + 16], outp[PATH_MAX + 16], loc[4096];
	snprintf(in, sizeof(in), "%s/cpcs.txt", tmp_dir);
	snprintf(outp, sizeof(outp), "%s/caddr2line.txt", tmp_dir);
	FILE *f = fopen(in, "w");
	VEC(uint64_t) pcs = {0};
	for (int i = 0; i < nf; i++) {
		if (strchr(fs[i]->name, '.') || fs[i]->size < 4)
			continue; /* Go functions have a package path */
		uint64_t pc = fs[i]->addr + fs[i]->size / 2;
		vec_push(&pcs, pc);
		fprintf(f, "%#llx\n", (unsigned long long)pc);
	}
	fclose(f);
	free(fs);
	if (run("%s -e %s < %s > %s", a2l, bin, in, outp) == 0) {
		f = fopen(outp, "r");
		for (int i = 0; i < pcs.n && fgets(loc, sizeof(loc), f); i++) {
			loc[strcspn(loc, "\n")] = 0;
			char *colon = strrchr(loc, ':');
			if (!colon || loc[0] == '?')
				continue;
			*colon = 0;
			struct binfo_pcline pl;
			n++;
			if (binfo_lines_lookup(l, pcs.v[i], &pl) || !pl.file ||
			    strcmp(pl.file, loc) || pl.line != atoi(colon + 1)) {
				bad++;
				printf("  %s pc %#llx: addr2line %s:%s, gotrace %s:%d\n", bin,
				       (unsigned long long)pcs.v[i], loc, colon + 1,
				       pl.file ? pl.file : "-", pl.line);
			}
		}
		fclose(f);
	}
	CHECK(n >= 5 && bad == 0, "%s: %d of %d C PCs differ from %s", bin, bad, n, a2l);
	printf("%s: %d PCs in C code agree with %s\n", strrchr(bin, '/') + 1, n - bad, a2l);
	vec_free(&pcs);
	binfo_lines__close(l);
	binfo__close(bi);
}

/* A PIE: DWARF and .gopclntab lookups of the sampled PCs agree, names with symbols. */
static void check_agree(const char *bin)
{
	struct binfo *bi;
	struct binfo_lines *dw = NULL, *pc = NULL;
	if (binfo__open(bin, &bi) < 0 || binfo_lines__open(bi, BINFO_LINES_DWARF, &dw) ||
	    binfo_lines__open(bi, BINFO_LINES_PCLNTAB, &pc)) {
		CHECK(0, "%s: cannot open both line tables", bin);
		return;
	}
	uint64_t *pcs;
	int n = sample_pcs(bi, &pcs), bad = 0, known = 0;
	for (int i = 0; i < n; i++) {
		struct binfo_pcline a, b;
		int ra = binfo_lines_lookup(dw, pcs[i], &a);
		int rb = binfo_lines_lookup(pc, pcs[i], &b);
		const struct binfo_func *sym = binfo_func_at(bi, pcs[i]);
		/* The ELF symbols of assembly functions end in ".abi0", .gopclntab's names
		 * do not; its type..eq.[N]T functions are named type..eq.[...]T; the
		 * linker spells '·' as '.' in symbols (type:.eq.runtime.untracedG·7). */
		size_t sl = sym ? strlen(sym->name) : 0;
		if (sl > 5 && !strcmp(sym->name + sl - 5, ".abi0"))
			sl -= 5;
		char dotted[1024] = "";
		for (size_t k = 0, o = 0; a.outer && a.outer[k] && o + 1 < sizeof(dotted); k++)
			if ((unsigned char)a.outer[k] == 0xc2 && (unsigned char)a.outer[k + 1] == 0xb7)
				dotted[o++] = '.', dotted[o] = 0, k++;
			else
				dotted[o++] = a.outer[k], dotted[o] = 0;
		bool name_ok = !a.outer || !sym || strstr(a.outer, "[...]") ||
			       (strlen(dotted) == sl && !strncmp(dotted, sym->name, sl));
		bool ok = ra == rb && (!a.file) == (!b.file) &&
			  (!a.file || (!strcmp(a.file, b.file) && a.line == b.line)) && name_ok &&
			  (!a.outer) == (!b.outer) && (!a.outer || !strcmp(a.outer, b.outer));
		known += a.file != NULL;
		if (!ok && bad++ < 10)
			printf("  %s pc %#llx: dwarf %s %s:%d, gopclntab %s %s:%d, symbol %s\n",
			       bin, (unsigned long long)pcs[i], a.outer ? a.outer : "-",
			       a.file ? a.file : "-", a.line, b.outer ? b.outer : "-",
			       b.file ? b.file : "-", b.line, sym ? sym->name : "-");
	}
	CHECK(bad == 0 && known > 1000, "%s: %d of %d PCs differ (%d with a line)", bin, bad, n,
	      known);
	printf("%s: dwarf and gopclntab agree on %d PCs\n", strrchr(bin, '/') + 1, n - bad);
	free(pcs);
	binfo_lines__close(dw);
	binfo_lines__close(pc);
	binfo__close(bi);
}

/* Each frame the Go runtime prints for its own stack (inlined calls expanded) must be
 * what a lookup of its PC gives: function, file and line. */
static void check_frames(const char *bin, enum binfo_lines_source want)
{
	struct binfo *bi;
	struct binfo_lines *l = NULL;
	char outp[PATH_MAX + 16];
	snprintf(outp, sizeof(outp), "%s/frames.txt", tmp_dir);
	if (run("%s > %s", bin, outp) || binfo__open(bin, &bi) < 0) {
		CHECK(0, "cannot run or open %s", bin);
		return;
	}
	if (binfo_lines__open(bi, want, &l)) {
		CHECK(0, "%s: no %s line table", bin, source_name(want));
		binfo__close(bi);
		return;
	}
	FILE *f = fopen(outp, "r");
	char fn[1024], file[4096];
	unsigned long long pc, outer_rt = 0;
	int line, n = 0, inlined = 0;
	const struct binfo_func *outer = binfo_find_func(bi, "main.outer");
	CHECK(fscanf(f, "%llx main.outer", &outer_rt) == 1 && outer, "%s: no main.outer", bin);
	uint64_t bias = outer ? outer_rt - outer->addr : 0;
	CHECK(binfo_is_pie(bi) || bias == 0, "%s: bias %#llx without PIE", bin,
	      (unsigned long long)bias);
	while (fscanf(f, "%llx %1023s %4095s %d", &pc, fn, file, &line) == 4) {
		struct binfo_pcline pl;
		pc -= bias;
		if (!strcmp(fn, "runtime.goexit"))
			continue; /* its PC is the entry + 1 that the runtime fakes */
		n++;
		int rc = binfo_lines_lookup(l, pc, &pl);
		CHECK(rc == 0 && pl.func && !strcmp(pl.func, fn) && pl.file &&
			      !strcmp(pl.file, file) && pl.line == line,
		      "%s (%s) pc %#llx: runtime says %s %s:%d, gotrace %s %s:%d", bin,
		      source_name(want), pc, fn, file, line, pl.func ? pl.func : "-",
		      pl.file ? pl.file : "-", pl.line);
		if (rc == 0 && pl.func && pl.outer && strcmp(pl.func, pl.outer))
			inlined++;
	}
	fclose(f);
	CHECK(n >= 5 && inlined >= 2, "%s: %d frames, %d inlined", bin, n, inlined);
	printf("%s (%s): %d runtime frames (%d inlined) checked\n", strrchr(bin, '/') + 1,
	       source_name(want), n, inlined);
	binfo_lines__close(l);
	binfo__close(bi);
}

static void report_speed(const char *bin)
{
	struct binfo *bi;
	struct binfo_lines *l = NULL;
	if (binfo__open(bin, &bi) < 0)
		return;
	uint64_t t0 = now_ns();
	int rc = binfo_lines__open(bi, BINFO_LINES_DWARF, &l);
	uint64_t t1 = now_ns();
	CHECK(rc == 0, "%s: no DWARF line table", bin);
	/* printed, not bounded: speed is bench/run.sh's to measure (a fixed bound failed
	 * the ASan pass of a cold run on a busy machine) */
	printf("%s: .debug_line decoded in %.1f ms\n", strrchr(bin, '/') + 1, (t1 - t0) / 1e6);
	binfo_lines__close(l);
	binfo__close(bi);
	/* GT_LINES_BIG=BINARY: time a big binary too (e.g. `go build -o /tmp/gobin cmd/go`) */
	const char *big = getenv("GT_LINES_BIG");
	if (big && binfo__open(big, &bi) == 0) {
		t0 = now_ns();
		rc = binfo_lines__open(bi, BINFO_LINES_DWARF, &l);
		t1 = now_ns();
		CHECK(rc == 0, "%s: rc %d", big, rc);
		printf("%s: .debug_line decoded in %.1f ms\n", big, (t1 - t0) / 1e6);
		binfo_lines__close(l);
		binfo__close(bi);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1)
		snprintf(src_dir, sizeof(src_dir), "%s", argv[1]);
	else {
		snprintf(src_dir, sizeof(src_dir), "%s", __FILE__);
		for (int i = 0; i < 3; i++)
			*strrchr(src_dir, '/') = 0;
	}
	if (use_test_go(src_dir) != 0 || system("go version > /dev/null 2>&1") != 0) {
		printf("SKIP: no go toolchain\n");
		return 77;
	}
	snprintf(tmp_dir, sizeof(tmp_dir), "/tmp/gt_lines_test.XXXXXX");
	if (!mkdtemp(tmp_dir)) {
		perror("mkdtemp");
		return 1;
	}
	char plain[PATH_MAX + 32], nodwarf[PATH_MAX + 32], pie[PATH_MAX + 32], ext[PATH_MAX + 32];
	char frames[PATH_MAX + 32], frames_pie[PATH_MAX + 32];
	snprintf(plain, sizeof(plain), "%s/fg", tmp_dir);
	snprintf(nodwarf, sizeof(nodwarf), "%s/fg-w", tmp_dir);
	snprintf(pie, sizeof(pie), "%s/fg-pie", tmp_dir);
	snprintf(ext, sizeof(ext), "%s/fg-ext", tmp_dir);
	snprintf(frames, sizeof(frames), "%s/lines", tmp_dir);
	snprintf(frames_pie, sizeof(frames_pie), "%s/lines-pie", tmp_dir);
	const char *env = "CGO_ENABLED=0 GOFLAGS=-mod=mod GO111MODULE=auto";
	if (run("cd %s/tests/go/funcgraph && %s go build -o %s main.go", src_dir, env, plain) ||
	    run("cd %s/tests/go/funcgraph && %s go build -ldflags=-w -o %s main.go", src_dir, env,
		nodwarf) ||
	    run("cd %s/tests/go/funcgraph && %s go build -buildmode=pie -o %s main.go", src_dir,
		env, pie) ||
	    run("cd %s/tests/go/funcgraph && GOFLAGS=-mod=mod CGO_ENABLED=1 go build "
		"-ldflags=-linkmode=external -o %s main.go",
		src_dir, ext) ||
	    run("cd %s/tests/go/lines && %s go build -o %s main.go", src_dir, env, frames) ||
	    run("cd %s/tests/go/lines && %s go build -buildmode=pie -o %s main.go", src_dir, env,
		frames_pie)) {
		printf("FAIL: go build\n");
		return 1;
	}

	check_addr2line(plain, BINFO_LINES_DWARF, true);
	check_addr2line(plain, BINFO_LINES_PCLNTAB, true);
	check_addr2line(nodwarf, BINFO_LINES_DWARF, false);
	check_addr2line(nodwarf, BINFO_LINES_AUTO, true);
	check_agree(pie);
	/* external linking: the C start-up objects bring DWARF 5 line tables along */
	check_addr2line(ext, BINFO_LINES_DWARF, true);
	check_addr2line(ext, BINFO_LINES_PCLNTAB, true);
	check_c_lines(ext);
	check_frames(frames, BINFO_LINES_DWARF);
	check_frames(frames, BINFO_LINES_PCLNTAB);
	check_frames(frames_pie, BINFO_LINES_DWARF);
	check_frames(frames_pie, BINFO_LINES_PCLNTAB);
	report_speed(plain);

	run("rm -rf %s", tmp_dir);
	printf("%s\n", failures ? "FAILED" : "PASSED");
	return failures ? 1 : 0;
}
