// maps_selftest: loads maps.bpf.o, fills its maps with BPF_PROG_TEST_RUN and prints them
// with src/runtime/output/maps.c through a hand-made plan (maps only).
//
//   maps_selftest OBJ text|json   print what oracle.bt makes bpftrace print (run.sh diffs)
//   maps_selftest OBJ check       gotrace-only checks (values bpftrace 0.17 gets wrong,
//                                 sites, full maps, per-CPU min/max); exit 0 = pass
//
// Must run as root (BPF).
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/diag.h"
#include "common/plan.h"
#include "common/util.h"
#include "runtime/output/output.h"

#include "maps_selftest.h"

struct mdef {
	const char *name, *bpf;
	enum plan_map_kind kind;
	bool percpu;
	const char *keys; /* one letter a field: i int, s string, f site func, p site probe */
	bool is_unsigned;
	int64_t lmin, lmax, lstep;
	uint32_t max_entries;
};

#define M(n, b, k, pc, keys) {n, b, PLAN_MAP_##k, pc, keys, false, 0, 0, 0, 4096}
#define L(n, b, pc, keys, lo, hi, st) {n, b, PLAN_MAP_LHIST, pc, keys, false, lo, hi, st, 4096}

/* The maps of oracle.bt (maps.bpf.c's first block). */
static const struct mdef dump_maps[] = {
	M("@h", "m_h", HIST, true, ""),
	L("@l", "m_l", false, "", 0, 10, 2),
	M("@s", "m_s", STATS, true, ""),
	M("@a", "m_a", AVG, true, ""),
	M("@c", "m_c", COUNT, true, "si"),
	M("@m", "m_m", MIN, false, ""),
	M("@x", "m_x", MAX, false, ""),
	M("@y", "m_y", INT, false, ""),
	M("@z", "m_z", STR, false, ""),
	M("@n", "m_n", SUM, true, "i"),
	M("@yn", "m_yn", INT, false, ""),
	{"@yu", "m_yu", PLAN_MAP_INT, false, "", true, 0, 0, 0, 4096},
	M("@ymin", "m_ymin", INT, false, ""),
	M("@sov", "m_sov", SUM, false, ""),
	M("@an", "m_an", AVG, false, ""),
	M("@sn", "m_sn", STATS, false, ""),
	M("@ak", "m_ak", AVG, false, "s"),
	M("@mk", "m_mk", MIN, true, "i"),
	M("@xk", "m_xk", MAX, true, "i"),
	M("@ck", "m_ck", COUNT, false, "s"),
	M("@zs", "m_zs", STR, false, "s"),
	M("@zi", "m_zi", STR, false, "i"),
	M("@zm", "m_zm", STR, false, "is"),
	M("@esc", "m_esc", STR, false, "s"),
	M("@", "m_anon", INT, false, ""),
	M("@B", "m_B", INT, false, ""),
	M("@ht", "m_ht", HIST, true, "i"),
	M("@hu", "m_hu", HIST, false, "i"),
	M("@hs", "m_hs", HIST, false, "s"),
	L("@lk", "m_lk", false, "is", 0, 4096, 1024),
	L("@lo", "m_lo", false, "", 0, 10, 3),
	L("@lM", "m_lM", false, "", 0, 3145728, 1048576),
	M("@sk", "m_sk", STATS, true, "i"),
	M("@av", "m_av", AVG, false, "i"),
	M("@never", "m_never", COUNT, false, ""),
	M("@nk", "m_nk", COUNT, false, "i"),
	M("@nh", "m_nh", HIST, false, ""),
	M("@ns", "m_ns", STATS, false, ""),
	M("@nz", "m_nz", STR, false, ""),
	M("@zc", "m_zc", COUNT, true, "i"),
	M("@zh", "m_zh", HIST, false, ""),
	M("@zhk", "m_zhk", HIST, false, "i"),
	L("@zl", "m_zl", false, "", 0, 10, 1),
	M("@zmin", "m_zmin", MIN, true, ""),
	M("@zmax", "m_zmax", MAX, false, "i"),
	M("@zst", "m_zst", STATS, false, ""),
	M("@zst2", "m_zst2", STATS, false, "i"),
	M("@zstr", "m_zstr", STR, false, ""),
	M("@zsk", "m_zsk", STR, false, "s"),
	M("@za", "m_za", AVG, false, ""),
	M("@zi2", "m_zi2", INT, false, ""),
	M("@zcnt", "m_zcnt", COUNT, false, ""),
	M("@ca", "m_ca", AVG, false, ""),
	M("@cc", "m_cc", COUNT, true, "i"),
	M("@ch", "m_ch", HIST, false, ""),
	M("@chk", "m_chk", HIST, false, "i"),
	M("@cs", "m_cs", STATS, false, ""),
	M("@cstr", "m_cstr", STR, false, ""),
	M("@cm", "m_cm", MIN, false, ""),
	L("@cl", "m_cl", false, "", 0, 10, 1),
	M("@ccnt", "m_ccnt", COUNT, false, ""),
};

/* gotrace-only checks (maps.bpf.c's second block); @full must be MT_FULL_ID. */
static const struct mdef check_maps[] = {
	{"@full", "m_full", PLAN_MAP_COUNT, false, "i", false, 0, 0, 0, MT_FULL_ENTRIES},
	{"@big", "m_big", PLAN_MAP_HIST, false, "", true, 0, 0, 0, 4096},
	M("@mn", "m_mn", MIN, false, ""),
	M("@mx", "m_mx", MAX, false, ""),
	M("@mnp", "m_mnp", MIN, true, "i"),
	M("@mxp", "m_mxp", MAX, true, "i"),
	M("@utf", "m_utf", STR, false, ""),
	M("@site", "m_site", COUNT, false, "fp"),
	M("@ct", "m_ct", COUNT, false, "i"),
	L("@lneg", "m_lneg", false, "", -10, 10, 5),
};

static struct plan_site sites[] = {
	{"/bin/t", "main.add", "go:main.add:entry", 0, 0, 0, false, false},
	{"/bin/t", "main.sub", "go:main.sub:entry", 0, 0, 0, false, false},
};

static void build_plan(struct gt_plan *plan, const struct mdef *defs, int n)
{
	memset(plan, 0, sizeof(*plan));
	plan->sites = sites;
	plan->nsites = (int)ARRAY_SIZE(sites);
	plan->maps = xcalloc((size_t)n, sizeof(*plan->maps));
	plan->nmaps = n;
	for (int i = 0; i < n; i++) {
		const struct mdef *d = &defs[i];
		struct plan_map *pm = &plan->maps[i];
		int nk = (int)strlen(d->keys), off = 0;
		pm->name = d->name;
		pm->bpf_name = d->bpf;
		pm->kind = d->kind;
		pm->percpu = d->percpu;
		pm->keys = xcalloc((size_t)(nk ? nk : 1), sizeof(*pm->keys));
		pm->nkeys = nk;
		for (int k = 0; k < nk; k++) {
			struct plan_arg *f = &pm->keys[k];
			f->offset = off;
			f->is_signed = true;
			switch (d->keys[k]) {
			case 'i': f->kind = PLAN_ARG_INT; f->size = 8; break;
			case 's': f->kind = PLAN_ARG_STR; f->size = MT_SLEN; break;
			case 'f': f->kind = PLAN_ARG_SITE_FUNC; f->size = 8; break;
			case 'p': f->kind = PLAN_ARG_SITE_PROBE; f->size = 8; break;
			}
			off += f->size;
		}
		bool hist = d->kind == PLAN_MAP_HIST || d->kind == PLAN_MAP_LHIST;
		pm->key_size = (nk ? off : 8) + (hist ? 8 : 0);
		switch (d->kind) {
		case PLAN_MAP_STR: pm->value_size = MT_VSTR; break;
		case PLAN_MAP_AVG:
		case PLAN_MAP_STATS:
		case PLAN_MAP_MIN:
		case PLAN_MAP_MAX: pm->value_size = 16; break;
		default: pm->value_size = 8; break;
		}
		pm->value_signed = !d->is_unsigned;
		pm->lhist_min = d->lmin;
		pm->lhist_max = d->lmax;
		pm->lhist_step = d->lstep;
		pm->max_entries = d->max_entries;
	}
}

static void free_plan(struct gt_plan *plan)
{
	for (int i = 0; i < plan->nmaps; i++)
		free(plan->maps[i].keys);
	free(plan->maps);
}

static int run_prog(struct bpf_object *obj, const char *name)
{
	struct bpf_program *p = bpf_object__find_program_by_name(obj, name);
	if (!p) {
		fprintf(stderr, "maps_selftest: no program %s\n", name);
		return -1;
	}
	int ncpus = libbpf_num_possible_cpus();
	for (uint64_t phase = 0; phase < 2; phase++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = &phase, .ctx_size_in = sizeof(phase),
			    .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = ncpus > 1 ? (uint32_t)phase : 0);
		int err = bpf_prog_test_run_opts(bpf_program__fd(p), &o);
		if (err) {
			fprintf(stderr, "maps_selftest: running %s: %s\n", name, strerror(-err));
			return -1;
		}
	}
	return 0;
}

static int id_of(const struct gt_plan *plan, const char *name)
{
	for (int i = 0; i < plan->nmaps; i++)
		if (strcmp(plan->maps[i].name, name) == 0)
			return i;
	fprintf(stderr, "maps_selftest: no map %s\n", name);
	exit(1);
}

/* oracle.bt's print()/zero()/clear() calls, in its order, then the exit dump. */
static void dump(struct rt_maps *ms, const struct gt_plan *plan, bool json)
{
	static const char *print1[] = {"@c", "@h", "@s", "@ak", "@hs", "@esc"};
	static const char *zero[] = {"@zc", "@zh", "@zhk", "@zl", "@zmin", "@zmax", "@zst",
				     "@zst2", "@zstr", "@zsk", "@za", "@zi2", "@zcnt"};
	static const char *clear[] = {"@ca", "@cc", "@ch", "@chk", "@cs", "@cstr", "@cm",
				      "@cl", "@ccnt"};
	static const char *print2[] = {"@ch", "@zh", "@zhk", "@ca", "@zst", "@ccnt", "@never"};
	for (size_t i = 0; i < ARRAY_SIZE(print1); i++)
		rt_maps__print(ms, id_of(plan, print1[i]), stdout, json, 0, 0);
	for (size_t i = 0; i < ARRAY_SIZE(zero); i++)
		rt_maps__zero(ms, id_of(plan, zero[i]));
	for (size_t i = 0; i < ARRAY_SIZE(clear); i++)
		rt_maps__clear(ms, id_of(plan, clear[i]));
	for (size_t i = 0; i < ARRAY_SIZE(print2); i++)
		rt_maps__print(ms, id_of(plan, print2[i]), stdout, json, 0, 0);
	fputs("\n\n", stdout); /* bpftrace's main() before the exit dump, in both formats */
	rt_maps__print_all(ms, stdout, json);
}

/* ---- check mode ---- */

static int failures;

static char *capture(struct rt_maps *ms, int id, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (id < 0) { /* its warnings go through diag */
		diag_set_stream(f);
		rt_maps__report_full(ms);
		diag_set_stream(NULL);
	} else {
		rt_maps__print(ms, id, f, json, 0, 0);
	}
	fclose(f);
	return buf;
}

static void expect(const char *what, const char *got, const char *want, bool exact)
{
	bool ok = exact ? strcmp(got, want) == 0 : strstr(got, want) != NULL;
	if (ok)
		return;
	failures++;
	fprintf(stderr, "FAIL %s: %s\n--- want ---\n%s\n--- got ---\n%s\n", what,
		exact ? "differs" : "missing", want, got);
}

static void check_map(struct rt_maps *ms, const struct gt_plan *plan, const char *name,
		      const char *text, const char *json)
{
	int id = id_of(plan, name);
	char *t = capture(ms, id, false), *j = capture(ms, id, true);
	if (text)
		expect(name, t, text, true);
	if (json)
		expect(name, j, json, true);
	free(t);
	free(j);
}

/* The per-CPU cases only test something if the two phases ran on two CPUs. */
static void check_percpu_split(struct bpf_object *obj)
{
	int ncpus = libbpf_num_possible_cpus();
	if (ncpus < 2) {
		fprintf(stderr, "maps_selftest: one CPU, per-CPU combining not exercised\n");
		return;
	}
	struct v_mm *v = xcalloc((size_t)ncpus, sizeof(*v));
	struct k1 k = {2};
	int fd = bpf_object__find_map_fd_by_name(obj, "m_mnp");
	if (bpf_map_lookup_elem(fd, &k, v) || !v[0].set || v[0].value != -8 || v[1].set) {
		failures++;
		fprintf(stderr, "FAIL per-CPU split: @mnp[2] cpu0 %lld/%llu cpu1 %lld/%llu\n",
			(long long)v[0].value, (unsigned long long)v[0].set, (long long)v[1].value,
			(unsigned long long)v[1].set);
	}
	free(v);
}

static void check(struct rt_maps *ms, const struct gt_plan *plan)
{
	char *s;

	check_map(ms, plan, "@mn", "@mn: 9223372036854775807\n",
		  "{\"type\": \"map\", \"data\": {\"@mn\": 9223372036854775807}}\n");
	check_map(ms, plan, "@mx", "@mx: -1\n", "{\"type\": \"map\", \"data\": {\"@mx\": -1}}\n");
	/* set on one CPU only: the unset CPU's zero must not win */
	check_map(ms, plan, "@mnp", "@mnp[2]: -8\n@mnp[1]: -3\n@mnp[3]: 6\n",
		  "{\"type\": \"map\", \"data\": {\"@mnp\": {\"2\": -8, \"1\": -3, \"3\": 6}}}\n");
	check_map(ms, plan, "@mxp", "@mxp[1]: -7\n@mxp[2]: -1\n", NULL);
	check_map(ms, plan, "@utf", "@utf: \xc3\xa9\xff\x80" "a\xe2\x82\n",
		  "{\"type\": \"map\", \"data\": {\"@utf\": \"\xc3\xa9\\u00ff\\u0080a\\u00e2\\u0082\"}}\n");
	check_map(ms, plan, "@site",
		  "@site[main.sub, go:main.sub:entry]: 1\n@site[main.add, go:main.add:entry]: 2\n",
		  "{\"type\": \"map\", \"data\": {\"@site\": {\"main.sub,go:main.sub:entry\": 1, "
		  "\"main.add,go:main.add:entry\": 2}}}\n");
	/* count ties: by key, integers unsigned as bpftrace orders keys */
	check_map(ms, plan, "@ct", "@ct[1]: 1\n@ct[3]: 1\n@ct[-1]: 1\n@ct[7]: 2\n", NULL);
	check_map(ms, plan, "@lneg",
		  "@lneg: \n"
		  "(..., -10)             1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		  "[-10, -5)              1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		  "[-5, 0)                0 |                                                    |\n"
		  "[0, 5)                 0 |                                                    |\n"
		  "[5, 10)                1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		  "[10, ...)              1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n\n",
		  "{\"type\": \"hist\", \"data\": {\"@lneg\": [{\"max\": -11, \"count\": 1}, "
		  "{\"min\": -10, \"max\": -6, \"count\": 1}, {\"min\": -5, \"max\": -1, \"count\": 0}, "
		  "{\"min\": 0, \"max\": 4, \"count\": 0}, {\"min\": 5, \"max\": 9, \"count\": 1}, "
		  "{\"min\": 10, \"count\": 1}]}}\n");

	/* buckets beyond bpftrace's 32-bit log2: labels in multiples of T as bpftrace's
	 * formula gives them, JSON bounds exact */
	int big = id_of(plan, "@big");
	s = capture(ms, big, false);
	expect("@big [1]", s, "\n[1]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n", false);
	expect("@big 2G", s, "\n[2G, 4G)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n", false);
	expect("@big 1T", s, "\n[1T, 2T)               1 |", false);
	expect("@big 2^62", s, "\n[4194304T, 8388608T)       2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n", false);
	expect("@big 2^63", s, "\n[8388608T, 16777216T)       1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n\n", false);
	int lines = 0;
	for (char *p = s; *p; p++)
		lines += *p == '\n';
	if (lines != 66) { /* "@big: ", 64 buckets [1] .. [2^63, 2^64), the empty line */
		failures++;
		fprintf(stderr, "FAIL @big: %d lines\n%s", lines, s);
	}
	free(s);
	s = capture(ms, big, true);
	expect("@big json 2^31", s, "{\"min\": 2147483648, \"max\": 4294967295, \"count\": 1}", false);
	expect("@big json 2^63", s,
	       "{\"min\": 4611686018427387904, \"max\": 9223372036854775807, \"count\": 2}, "
	       "{\"min\": 9223372036854775808, \"max\": 18446744073709551615, \"count\": 1}]}}\n",
	       false);
	free(s);

	s = capture(ms, -1, false);
	expect("report_full", s,
	       "gotrace: warning: Map full; can't update element: map @full is full (4 keys): 2 updates were dropped\n", true);
	free(s);

	/* zero() keeps the keys with zero values (every CPU), clear() deletes them */
	int mnp = id_of(plan, "@mnp");
	rt_maps__zero(ms, mnp);
	check_map(ms, plan, "@mnp", "@mnp[1]: 0\n@mnp[2]: 0\n@mnp[3]: 0\n", NULL);
	rt_maps__clear(ms, mnp);
	check_map(ms, plan, "@mnp", "\n", "");
	int full = id_of(plan, "@full");
	rt_maps__clear(ms, full);
	check_map(ms, plan, "@full", "\n", "");

	/* out-of-range ids and NULL are ignored */
	rt_maps__print(ms, -1, stdout, false, 0, 0);
	rt_maps__print(ms, plan->nmaps, stdout, false, 0, 0);
	rt_maps__zero(ms, plan->nmaps);
	rt_maps__clear(ms, -5);
	rt_maps__print_all(NULL, stdout, false);
	rt_maps__free(NULL);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: maps_selftest OBJ text|json|check\n");
		return 2;
	}
	bool is_check = strcmp(argv[2], "check") == 0;
	bool json = strcmp(argv[2], "json") == 0;
	libbpf_set_strict_mode(LIBBPF_STRICT_ALL);
	struct bpf_object *obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "maps_selftest: cannot open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	int err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "maps_selftest: cannot load %s: %s\n", argv[1], strerror(-err));
		bpf_object__close(obj);
		return 1;
	}
	if (run_prog(obj, is_check ? "mt_check" : "mt_fill")) {
		bpf_object__close(obj);
		return 1;
	}
	struct gt_plan plan;
	if (is_check)
		build_plan(&plan, check_maps, (int)ARRAY_SIZE(check_maps));
	else
		build_plan(&plan, dump_maps, (int)ARRAY_SIZE(dump_maps));
	struct rt_maps *ms = rt_maps__new(&plan, obj, &err);
	if (!ms) {
		fprintf(stderr, "maps_selftest: rt_maps__new: %s\n", strerror(-err));
		free_plan(&plan);
		bpf_object__close(obj);
		return 1;
	}
	if (is_check) {
		check_percpu_split(obj);
		check(ms, &plan);
	}
	else
		dump(ms, &plan, json);
	rt_maps__free(ms);
	free_plan(&plan);
	bpf_object__close(obj);
	if (is_check) {
		fprintf(stderr, "maps_selftest check: %s\n", failures ? "FAIL" : "ok");
		return failures ? 1 : 0;
	}
	return 0;
}
