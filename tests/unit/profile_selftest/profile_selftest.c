/* profile_selftest: writes a profile with known samples through src/runtime/profile/profile.c.
 *
 *   profile_selftest DIR   writes DIR/test.pb.gz (pprof) and DIR/test.folded, checks the
 *                          folded text and the error returns; exit 0 = pass.
 *                          DIR/expected.spec says what test.pb.gz holds.
 * run.sh then reads DIR/test.pb.gz with `go tool pprof`, the real client, and
 * pprof_check.py compares what it read with expected.spec. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/profile/profile.h"

#include "check.h"

#define MAIN_GO "/src/app/main.go"
#define PROC_GO "/usr/lib/go/src/runtime/proc.go"

static const struct prof_mapping maps[] = {
	{0x400000, 0x500000, 0, "/app/bin/app", "abc123"},
	{0x7f0000000000, 0x7f0000100000, 0x1000, "/lib/x86_64-linux-gnu/libc.so.6", NULL},
};

/* main.add inlined into main.sum at one PC: one Location, two Lines */
static const struct prof_frame stack_add[] = {
	{0x401010, "main.add", MAIN_GO, 12, true, 0},
	{0x401010, "main.sum", MAIN_GO, 20, false, 0},
	{0x401100, "main.main", MAIN_GO, 30, false, 0},
	{0x402000, "runtime.main", PROC_GO, 250, false, 0},
};
/* a libc frame nobody could name */
static const struct prof_frame stack_libc[] = {
	{0x7f0000001234, NULL, NULL, 0, false, 1},
	{0x401200, "main.work", MAIN_GO, 40, false, 0},
	{0x402000, "runtime.main", PROC_GO, 250, false, 0},
};
/* a kernel frame (no mapping) on two levels of inlining */
static const struct prof_frame stack_kernel[] = {
	{0xffffffff81000000, "do_syscall_64", NULL, 0, false, -1},
	{0x401300, "main.inner", MAIN_GO, 50, true, 0},
	{0x401300, "main.mid", MAIN_GO, 55, true, 0},
	{0x401300, "main.outer", MAIN_GO, 60, false, 0},
	{0x402000, "runtime.main", PROC_GO, 250, false, 0},
};
static const struct prof_frame stack_weird[] = {
	{0x401400, "weird;name\nx", NULL, 0, false, 0},
};

static const struct prof_label lab18[] = {{"goid", NULL, 18, true}, {"comm", "app", 0, false}};
static const struct prof_label lab19[] = {{"goid", NULL, 19, true}, {"comm", "app", 0, false}};
static const struct prof_label lab_weird[] = {{"comm", "a;b", 0, false}};

static const struct prof_sample samples[] = {
	{stack_add, 4, 10, lab18, 2},
	{stack_libc, 3, 5, lab19, 2},
	{stack_add, 4, 7, lab18, 2}, /* same folded text as the first: merged there */
	{stack_kernel, 5, 3, NULL, 0},
	{stack_weird, 1, 1, lab_weird, 1},
	{NULL, 0, 2, NULL, 0}, /* no stack at all */
};
#define NSAMPLES ((int)(sizeof(samples) / sizeof(samples[0])))

static const char folded_want[] =
	"[unknown] 2\n"
	"comm=a:b;weird:name x 1\n"
	"goid=18;comm=app;runtime.main;main.main;main.sum;main.add 17\n"
	"goid=19;comm=app;runtime.main;main.work;0x7f0000001234 5\n"
	"runtime.main;main.outer;main.mid;main.inner;do_syscall_64 3\n";

static const struct prof_meta meta = {
	"samples", "count", "cpu", "nanoseconds", 1000000000 / 99,
	1700000000000000000, 5000000000,
};

static void check_folded(const char *dir)
{
	char *text = NULL, path[4096];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	CHECK(f, "open_memstream");
	if (!f)
		return;
	int err = prof_write_folded(f, samples, NSAMPLES);
	fclose(f);
	CHECK(err == 0, "prof_write_folded: %d", err);
	CHECK(text && !strcmp(text, folded_want), "folded output:\n%s--- wanted:\n%s",
	      text ? text : "(null)", folded_want);
	snprintf(path, sizeof(path), "%s/test.folded", dir);
	f = fopen(path, "w");
	CHECK(f, "%s: %s", path, strerror(errno));
	if (f) {
		CHECK(fputs(text ? text : "", f) >= 0, "write %s", path);
		fclose(f);
	}
	free(text);
}

static void check_errors(void)
{
	static const struct prof_frame bad_map[] = {{0x1, "f", NULL, 0, false, 2}};
	static const struct prof_label bad_label[] = {{"k", NULL, 0, false}};
	const struct prof_sample bad1 = {bad_map, 1, 1, NULL, 0};
	const struct prof_sample bad2 = {NULL, 0, 1, bad_label, 1};
	FILE *f = fopen("/dev/null", "w");
	CHECK(f, "/dev/null");
	if (!f)
		return;
	CHECK(prof_write_pprof(f, &meta, &bad1, 1, maps, 2) == -EINVAL, "mapping out of range");
	CHECK(prof_write_pprof(f, &meta, &bad2, 1, maps, 2) == -EINVAL, "label without value");
	CHECK(prof_write_folded(f, &bad2, 1) == -EINVAL, "folded: label without value");
	CHECK(prof_write_pprof(f, &meta, samples, -1, maps, 2) == -EINVAL, "n < 0");
	CHECK(prof_write_pprof(NULL, &meta, samples, 1, maps, 2) == -EINVAL, "no FILE");
	/* no samples, no meta: still a valid (empty) profile */
	CHECK(prof_write_pprof(f, NULL, NULL, 0, NULL, 0) == 0, "empty profile");
	CHECK(prof_write_folded(f, NULL, 0) == 0, "empty folded");
	fclose(f);
	/* a write error comes back as the errno of the failed write */
	f = fopen("/dev/full", "w");
	if (f) {
		int err = prof_write_pprof(f, &meta, samples, NSAMPLES, maps, 2);
		CHECK(err == -ENOSPC, "pprof to /dev/full: %d", err);
		err = prof_write_folded(f, samples, NSAMPLES);
		CHECK(err == -ENOSPC, "folded to /dev/full: %d", err);
		fclose(f);
	}
}

/* A string of the spec: bytes that would break its fields (space, tab, newline, '|',
 * '=', '%', non-ASCII) as %XX, which pprof_check.py decodes. */
static void spec_str(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++)
		if (*p <= ' ' || *p >= 0x7f || *p == '%' || *p == '|' || *p == '=')
			fprintf(f, "%%%02X", *p);
		else
			fputc(*p, f);
}

/* DIR/expected.spec: what was written, in the terms pprof_check.py reads back from
 * `go tool pprof -raw` (one line per sample, mapping, meta), so that the oracle is this
 * test's input and not the text one pprof release prints:
 *   meta SAMPLE_TYPE/UNIT PERIOD_TYPE/UNIT PERIOD TIME_NS DURATION_NS
 *   mapping START LIMIT OFFSET FILE BUILD_ID
 *   sample VALUE KEY=VALUE|... FRAME|FRAME...  (leaf first; FRAME = ADDR,MAPFILE or
 *     -,FUNC,FILE,LINE,INL where INL = 1 for a frame inlined into the next; no FUNC:
 *     ADDR,MAPFILE only) */
static void write_spec(const char *dir)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/expected.spec", dir);
	FILE *f = fopen(path, "w");
	CHECK(f, "%s: %s", path, strerror(errno));
	if (!f)
		return;
	fprintf(f, "meta %s/%s %s/%s %lld %lld %lld\n", meta.sample_type, meta.sample_unit,
		meta.period_type, meta.period_unit, (long long)meta.period,
		(long long)meta.time_nanos, (long long)meta.duration_nanos);
	for (size_t i = 0; i < sizeof(maps) / sizeof(*maps); i++) {
		fprintf(f, "mapping %#llx %#llx %#llx ", (unsigned long long)maps[i].start,
			(unsigned long long)maps[i].limit, (unsigned long long)maps[i].offset);
		spec_str(f, maps[i].file);
		fputc(' ', f);
		spec_str(f, maps[i].build_id);
		fputc('\n', f);
	}
	for (int i = 0; i < NSAMPLES; i++) {
		const struct prof_sample *sm = &samples[i];
		fprintf(f, "sample %lld ", (long long)sm->value);
		for (int k = 0; k < sm->nlabels; k++) {
			const struct prof_label *lb = &sm->labels[k];
			if (k)
				fputc('|', f);
			spec_str(f, lb->key);
			fputc('=', f);
			if (lb->is_num)
				fprintf(f, "%lld", (long long)lb->num);
			else
				spec_str(f, lb->str);
		}
		fputc(' ', f);
		for (int k = 0; k < sm->nframes; k++) {
			const struct prof_frame *fr = &sm->frames[k];
			fprintf(f, "%s%#llx,", k ? "|" : "", (unsigned long long)fr->addr);
			if (fr->mapping >= 0)
				spec_str(f, maps[fr->mapping].file);
			else
				fputc('-', f);
			if (!fr->func)
				continue;
			fputc(',', f);
			spec_str(f, fr->func);
			fputc(',', f);
			spec_str(f, fr->file);
			fprintf(f, ",%d,%d", fr->line, fr->inlined);
		}
		fputc('\n', f);
	}
	CHECK(fclose(f) == 0, "close %s", path);
}

/* Enough distinct functions, locations and strings to grow every index several times:
 * BIG samples of leaf f<i%300> (300 PCs), g<i%7>, main.main; run.sh counts them in -raw. */
#define BIG 1000
static void write_big(const char *dir)
{
	static char names[300 + 7][32];
	static struct prof_frame frames[BIG][3];
	static struct prof_sample big[BIG];
	char path[4096];
	for (int i = 0; i < 300; i++)
		snprintf(names[i], sizeof(names[i]), "main.f%d", i);
	for (int i = 0; i < 7; i++)
		snprintf(names[300 + i], sizeof(names[i]), "main.g%d", i);
	for (int i = 0; i < BIG; i++) {
		frames[i][0] = (struct prof_frame){0x410000 + (uint64_t)(i % 300) * 16,
						   names[i % 300], MAIN_GO, i % 300 + 1, false, 0};
		frames[i][1] = (struct prof_frame){0x420000 + (uint64_t)(i % 7) * 16,
						   names[300 + i % 7], MAIN_GO, 1000, false, 0};
		frames[i][2] = (struct prof_frame){0x401100, "main.main", MAIN_GO, 30, false, 0};
		big[i] = (struct prof_sample){frames[i], 3, 1, NULL, 0};
	}
	snprintf(path, sizeof(path), "%s/big.pb.gz", dir);
	FILE *f = fopen(path, "w");
	CHECK(f, "%s: %s", path, strerror(errno));
	if (f) {
		int err = prof_write_pprof(f, &meta, big, BIG, maps, 1);
		CHECK(err == 0, "prof_write_pprof (big): %d", err);
		CHECK(fclose(f) == 0, "close %s", path);
	}
}

int main(int argc, char **argv)
{
	char path[4096];
	if (argc != 2) {
		fprintf(stderr, "usage: profile_selftest DIR\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/test.pb.gz", argv[1]);
	FILE *f = fopen(path, "w");
	CHECK(f, "%s: %s", path, strerror(errno));
	if (f) {
		int err = prof_write_pprof(f, &meta, samples, NSAMPLES, maps, 2);
		CHECK(err == 0, "prof_write_pprof: %d", err);
		CHECK(fclose(f) == 0, "close %s", path);
	}
	write_spec(argv[1]);
	check_folded(argv[1]);
	check_errors();
	write_big(argv[1]);
	if (failures)
		printf("profile_selftest: %d failure(s)\n", failures);
	return failures ? 1 : 0;
}
