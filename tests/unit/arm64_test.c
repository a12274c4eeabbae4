/* arm64 unit test, on any host: src/binfo read through src/arch/aarch64 (built here with
 * GT_ARCH_CROSS_AARCH64), on linux/arm64 Go programs built at test time (tests/go/binfo:
 * every prologue shape; with the suite's Go, and Go 1.19 when scripts/find-go.sh's
 * toolchain cache or Debian has it), plain, PIE and stripped, against Go's own tools:
 *   - `go tool objdump`: each function's entry after its stack check (the word after
 *     the check's BLS), its RET instructions, its instruction starts (every word);
 *   - `go tool nm` of the unstripped build: which of two same-named functions of the
 *     stripped build's .gopclntab is the ABI0 one;
 *   - the linker's load of g from thread-local storage (TP+16, docs/arm64.md);
 *   - the runtime's own go_asm.h for arm64 (`#define g_goid 152` ...): the offsets in g
 *     and m that binfo finds in DWARF, and for a stripped build in its table by release.
 * (PIE with the suite's Go only: its standard library is built again for it.)
 *
 *   arm64_test [SOURCE_DIR]     (default: derived from __FILE__)
 *
 * Exit 0 = pass, 1 = failures, 77 = skipped (no go). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "arch/arch.h"
#include "binfo/binfo.h"
#include "common/util.h"

static char src_dir[PATH_MAX], tmp_dir[PATH_MAX];

struct insn {
	uint64_t addr;
	uint32_t word;
	char op[16]; /* Go's mnemonic: MOVD, BLS, RET ... */
};

struct func {
	char *name;
	VEC(struct insn) insns;
};

static VEC(struct func) funcs;

/* `go tool objdump BIN`: "TEXT NAME(SB) FILE", then "  FILE:LINE\t0xADDR\tWORD\tOP ...". */
static int read_objdump(const char *bin)
{
	char cmd[PATH_MAX * 2], line[4096];
	snprintf(cmd, sizeof(cmd), "go tool objdump %s", bin);
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	for (int i = 0; i < funcs.n; i++) {
		free(funcs.v[i].name);
		vec_free(&funcs.v[i].insns);
	}
	funcs.n = 0;
	while (fgets(line, sizeof(line), p)) {
		if (!strncmp(line, "TEXT ", 5)) {
			char *end = strstr(line, "(SB)");
			struct func f = {0};
			/* a generic's name holds spaces and "(SB)" comes last before the file */
			for (char *q = end; q; q = strstr(q + 1, "(SB) "))
				end = q;
			if (!end)
				continue;
			*end = 0;
			f.name = xstrdup(line + 5);
			vec_push(&funcs, f);
			continue;
		}
		struct insn in = {0};
		if (funcs.n && sscanf(line, " %*s 0x%" SCNx64 " %8x %15s", &in.addr, &in.word,
				      in.op) == 3)
			vec_push(&funcs.v[funcs.n - 1].insns, in);
	}
	return pclose(p) ? -1 : 0;
}

/* The address the entry probe of F goes to: after the stack check's BLS when F starts
 * with `ldr x16, [x28, #16|#24]`, else F's first word. */
static uint64_t want_entry(const struct func *f)
{
	const struct insn *in = f->insns.v;
	if (f->insns.n < 2 || (in[0].word != 0xf9400b90 && in[0].word != 0xf9400f90))
		return in[0].addr;
	for (int i = 1; i < f->insns.n && i < 10; i++)
		if (!strcmp(in[i].op, "BLS"))
			return in[i].addr + 4;
	return in[0].addr;
}

/* Every function: entry, RETs and instruction starts as objdump has them. */
static void check_code(const char *tag, struct binfo *bi)
{
	int nfuncs = 0, nchecks = 0, bad_entry = 0, bad_ret = 0, bad_bound = 0;
	for (int i = 0; i < funcs.n; i++) {
		const struct func *f = &funcs.v[i];
		if (!f->insns.n)
			continue;
		const struct binfo_func *bf = binfo_find_func(bi, f->name);
		if (!bf || bf->addr != f->insns.v[0].addr)
			continue; /* a duplicate name: the table's other one */
		nfuncs++;
		uint64_t entry = 0, want = want_entry(f);
		int err = binfo_entry_addr(bi, bf, &entry);
		if ((err || entry != want) && bad_entry++ < 5)
			CHECK(0, "%s: %s: entry %#" PRIx64 " (%d), objdump's %#" PRIx64, tag, f->name,
			      entry, err, want);
		uint64_t *rets = NULL;
		int n = binfo_ret_addrs(bi, bf, &rets), k = 0;
		bool same = n >= 0;
		for (int j = 0; same && j < f->insns.n; j++) {
			if (strcmp(f->insns.v[j].op, "RET"))
				continue;
			same = k < n && rets[k] == f->insns.v[j].addr;
			k++;
		}
		if ((!same || k != n) && bad_ret++ < 5)
			CHECK(0, "%s: %s: %d RETs, objdump %d (first differing at %d)", tag, f->name,
			      n, k, k);
		free(rets);
		for (int j = 0; j < f->insns.n; j++) {
			uint64_t a = f->insns.v[j].addr;
			if ((!binfo_is_insn_boundary(bi, bf, a) || binfo_is_insn_boundary(bi, bf, a + 2)) &&
			    bad_bound++ < 5)
				CHECK(0, "%s: %s: %#" PRIx64 " is an instruction start", tag, f->name, a);
			nchecks++;
		}
	}
	printf("%s: %d functions, %d instructions: entry %d, RETs %d, starts %d differ\n", tag,
	       nfuncs, nchecks, bad_entry, bad_ret, bad_bound);
	CHECK(nfuncs > 500 && !bad_entry && !bad_ret && !bad_bound, "%s: objdump's view", tag);
}

/* The shapes tests/go/binfo has on purpose, by name: the entry after the check or not. */
static void check_shapes(const char *tag, struct binfo *bi)
{
	static const struct {
		const char *name;
		bool check; /* starts with the stack check */
	} shapes[] = {{"main.Add", false}, {"main.add", true}, {"main.large", true},
		      {"main.huge", true}, {"main.nosplit", false}};
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		const struct binfo_func *f = binfo_find_func(bi, shapes[i].name);
		uint64_t entry = 0;
		CHECK(f && !binfo_entry_addr(bi, f, &entry) &&
			      (entry != f->addr) == shapes[i].check,
		      "%s: %s: entry %#" PRIx64 " of %#" PRIx64 ", a stack check: %d", tag,
		      shapes[i].name, entry, f ? f->addr : 0, shapes[i].check);
	}
	/* the leaf keeps its return address in the link register */
	const struct binfo_func *leaf = binfo_find_func(bi, "main.Add");
	const struct binfo_func *framed = binfo_find_func(bi, "main.add");
	CHECK(leaf && binfo_frameless(bi, leaf), "%s: main.Add frameless", tag);
	CHECK(framed && !binfo_frameless(bi, framed), "%s: main.add has a frame", tag);
	uint64_t e;
	CHECK(framed && !binfo_entry_addr(bi, framed, &e) && binfo_is_push_rbp(bi, e),
	      "%s: main.add's entry is its frame push (%s)", tag, arch_frame_push_text);
}

/* The stripped build's ABI0 twins, named as the unstripped build's symbol table has them. */
static void check_abi0(const char *tag, const char *plain, const char *stripped)
{
	char cmd[PATH_MAX * 2], line[4096];
	struct binfo *bi = NULL;
	CHECK(binfo__open(stripped, &bi) == 0, "%s: open %s", tag, stripped);
	if (!bi)
		return;
	snprintf(cmd, sizeof(cmd), "go tool nm %s | sort -k3", plain);
	FILE *p = popen(cmd, "r");
	int named = 0, want = 0;
	char last[1024] = "";
	/* sorted by name: NAME comes right before NAME.abi0 when both are there */
	while (p && fgets(line, sizeof(line), p)) {
		uint64_t addr;
		char kind, name[1024];
		if (sscanf(line, " %" SCNx64 " %c %1023[^\n]", &addr, &kind, name) != 3 ||
		    kind != 'T')
			continue;
		size_t len = strlen(name);
		bool twin = len > 5 && !strcmp(name + len - 5, ".abi0") &&
			    strlen(last) == len - 5 && !strncmp(name, last, len - 5);
		snprintf(last, sizeof(last), "%s", name);
		if (!twin)
			continue; /* not the ABI0 one of two: an assembly function alone */
		want++;
		const struct binfo_func *f = binfo_find_func(bi, name);
		if (f && f->addr == addr)
			named++;
		else if (want - named <= 5)
			CHECK(0, "%s: %s at %#" PRIx64 " not named so in the stripped build (%#" PRIx64
			      ")", tag, name, addr, f ? f->addr : 0);
	}
	if (p)
		pclose(p);
	printf("%s: %d of %d ABI0 twins named\n", tag, named, want);
	CHECK(want > 10 && named == want, "%s: ABI0 twins", tag);
	binfo__close(bi);
}

/* PIE: the PIE build too (its standard library is built again for it, the cost of this
 * test on an empty cache: for one release only). */
struct rt_layout {
	int g_stack_hi, g_m, g_goid, m_g0, m_curg;
};

/* The arm64 runtime's go_asm.h, as GO writes it for the runtime's own assembly (kept by
 * `go build -a -work`): true with L. */
static bool rt_oracle(const char *go, struct rt_layout *l)
{
	char out[PATH_MAX + 32], line[256];
	int g_stack = -1, stack_hi = -1;
	snprintf(out, sizeof(out), "%s/rt_asm.txt", tmp_dir);
	*l = (struct rt_layout){-1, -1, -1, -1, -1};
	if (run("cd %s && W=$(GOARCH=arm64 CGO_ENABLED=0 %s build -a -work runtime 2>&1 | "
		"sed -n 's/^WORK=//p') && grep -hE '^#define (g_stack|stack_hi|g_m|g_goid|m_g0|"
		"m_curg) ' $(grep -l '^#define g_goid ' \"$W\"/b*/go_asm.h) > %s; rc=$?; "
		"rm -rf \"$W\"; exit $rc", tmp_dir, go, out))
		return false;
	FILE *f = fopen(out, "r");
	while (f && fgets(line, sizeof(line), f)) {
		char name[64];
		int v;
		if (sscanf(line, "#define %63s %d", name, &v) != 2)
			continue;
		int *slot = !strcmp(name, "g_stack")    ? &g_stack
			    : !strcmp(name, "stack_hi") ? &stack_hi
			    : !strcmp(name, "g_m")      ? &l->g_m
			    : !strcmp(name, "g_goid")   ? &l->g_goid
			    : !strcmp(name, "m_g0")     ? &l->m_g0
			    : !strcmp(name, "m_curg")   ? &l->m_curg
							: NULL;
		if (slot)
			*slot = v;
	}
	if (f)
		fclose(f);
	l->g_stack_hi = g_stack >= 0 && stack_hi >= 0 ? g_stack + stack_hi : -1;
	return l->g_stack_hi >= 0 && l->g_m >= 0 && l->g_goid >= 0 && l->m_g0 >= 0 &&
	       l->m_curg >= 0;
}

static void check_build(const char *go, const char *tag, bool pie_too)
{
	char plain[PATH_MAX + 64], pie[PATH_MAX + 64], stripped[PATH_MAX + 64];
	snprintf(plain, sizeof(plain), "%s/%s", tmp_dir, tag);
	snprintf(pie, sizeof(pie), "%s/%s-pie", tmp_dir, tag);
	snprintf(stripped, sizeof(stripped), "%s/%s-s", tmp_dir, tag);
	if (run("cd %s/tests/go/binfo && GOARCH=arm64 CGO_ENABLED=0 %s build -o %s main.go && "
		"GOARCH=arm64 CGO_ENABLED=0 %s build -ldflags=-s -o %s main.go",
		src_dir, go, plain, go, stripped) ||
	    (pie_too && run("cd %s/tests/go/binfo && GOARCH=arm64 CGO_ENABLED=0 %s build "
			    "-buildmode=pie -o %s main.go", src_dir, go, pie))) {
		CHECK(0, "%s: arm64 builds", tag);
		return;
	}
	struct rt_layout want;
	bool have = rt_oracle(go, &want);
	CHECK(have, "%s: the arm64 runtime's go_asm.h", tag);
	const char *bins[] = {plain, pie, stripped};
	/* objdump needs the symbol table: the stripped build's code is the plain one's */
	const char *dump[] = {plain, pie, plain};
	for (int b = 0; b < 3; b++) {
		char t[256];
		if (b == 1 && !pie_too)
			continue;
		struct binfo *bi = NULL;
		snprintf(t, sizeof(t), "%s%s", tag, b == 1 ? "/pie" : b == 2 ? "/stripped" : "");
		CHECK(binfo__open(bins[b], &bi) == 0 && bi, "%s: binfo opens it", t);
		if (!bi || read_objdump(dump[b])) {
			CHECK(0, "%s: go tool objdump", t);
			binfo__close(bi);
			continue;
		}
		check_code(t, bi);
		check_shapes(t, bi);
		/* g's offsets from DWARF, and the stripped build's from the table by release */
		struct binfo_goruntime rt;
		int rc = binfo_goruntime(bi, &rt);
		CHECK(!rc && rt.tls_g_offset == ARCH_GO_TLS_G_INTERNAL, "%s: g at TP%+d, want TP+%d",
		      t, rc ? 0 : (int)rt.tls_g_offset, ARCH_GO_TLS_G_INTERNAL);
		if (!rc && have) {
			printf("%s: g.stack.hi %d, g.m %d, g.goid %d, m.g0 %d, m.curg %d (%s)\n", t,
			       rt.g_stack_hi, rt.g_m, rt.g_goid, rt.m_g0, rt.m_curg, rt.source);
			CHECK(rt.g_stack_hi == want.g_stack_hi && rt.g_m == want.g_m &&
				      rt.g_goid == want.g_goid && rt.m_g0 == want.m_g0 &&
				      rt.m_curg == want.m_curg,
			      "%s: offsets %d %d %d %d %d (%s), go_asm.h's %d %d %d %d %d", t,
			      rt.g_stack_hi, rt.g_m, rt.g_goid, rt.m_g0, rt.m_curg, rt.source,
			      want.g_stack_hi, want.g_m, want.g_goid, want.m_g0, want.m_curg);
		}
		binfo__close(bi);
	}
	check_abi0(tag, plain, stripped);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		snprintf(src_dir, sizeof(src_dir), "%s", argv[1]);
	else {
		snprintf(src_dir, sizeof(src_dir), "%s", __FILE__);
		for (int i = 0; i < 3; i++) /* tests/unit/arm64_test.c -> the repository */
			*strrchr(src_dir, '/') = 0;
	}
	if (use_test_go(src_dir)) {
		printf("SKIP: no go (scripts/find-go.sh)\n");
		return 77;
	}
	snprintf(tmp_dir, sizeof(tmp_dir), "/tmp/gt-arm64-test.XXXXXX");
	if (!mkdtemp(tmp_dir))
		return 1;
	CHECK(arch_elf_machine == 183, "built for arm64's binaries (EM_AARCH64)");
	check_build("go", "arm64", true);
	/* Go 1.19, the oldest release gotrace reads: Debian's, when installed */
	if (access("/usr/lib/go-1.19/bin/go", X_OK) == 0)
		check_build("/usr/lib/go-1.19/bin/go", "arm64-go1.19", false);
	else
		printf("SKIP go1.19: no /usr/lib/go-1.19/bin/go\n");
	run("rm -rf %s", tmp_dir);
	printf("%s\n", failures ? "FAILED" : "PASSED");
	return failures ? 1 : 0;
}
