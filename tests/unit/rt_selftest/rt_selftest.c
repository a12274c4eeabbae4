// rt_selftest: drives rt_run() with hand-made plans over probes.bpf.o (see there) against
// the Go program `target`, compares the trace output exactly, and checks that nothing
// stays loaded or attached and no child is left after every exit path.
//
//   rt_selftest DIR           DIR holds target, probes.bpf.o, bad.bpf.o; exit 0 = pass
//   rt_selftest --bench DIR   attach/detach time over every function, events/s
//
// Must run as root (BPF). Scenario output goes to files in a temporary directory.
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/fmt.h"
#include "common/plan.h"
#include "common/util.h"
#include "runtime/rt.h"

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			failures++;                                                                \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                       \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
		}                                                                                  \
	} while (0)

static char target[PATH_MAX], tmpdir[PATH_MAX];
static void *probes_obj, *bad_obj;
static size_t probes_size, bad_size;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	struct strbuf sb = {0};
	char buf[65536];
	size_t n;
	if (!f)
		return NULL;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_putn(&sb, buf, n);
	fclose(f);
	if (size)
		*size = sb.len;
	return sb.buf ? sb.buf : xstrdup("");
}

/* --- ELF: file offsets of functions (PT_LOAD rule, as binfo does it) --- */

struct func {
	char *name;
	uint64_t vaddr, off;
};

/* Whether the instruction at file offset `off` is int3 or int $N: uprobes refuse those
 * (ENOTSUPP), e.g. runtime.abort (int $3). */
static bool is_int3(const char *path, uint64_t off)
{
	unsigned char b = 0;
	int fd = open(path, O_RDONLY);
	bool r = fd >= 0 && pread(fd, &b, 1, (off_t)off) == 1 && (b == 0xcc || b == 0xcd);
	if (fd >= 0)
		close(fd);
	return r;
}

static int elf_funcs(const char *path, const char *only, struct func **out)
{
	VEC(struct func) v = {0};
	int fd = open(path, O_RDONLY);
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t nph = 0;
	Elf_Scn *scn = NULL;
	elf_getphdrnum(e, &nph);
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		gelf_getshdr(scn, &sh);
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			gelf_getsym(d, (int)i, &sym);
			const char *name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_value || !name)
				continue;
			if (only && strcmp(name, only))
				continue;
			for (size_t p = 0; p < nph; p++) {
				GElf_Phdr ph;
				gelf_getphdr(e, (int)p, &ph);
				if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) ||
				    sym.st_value < ph.p_vaddr || sym.st_value >= ph.p_vaddr + ph.p_memsz)
					continue;
				bool dup = false;
				for (int k = 0; k < v.n; k++)
					dup |= v.v[k].vaddr == sym.st_value;
				if (!dup)
					vec_push(&v, ((struct func){xstrdup(name), sym.st_value,
								    sym.st_value - ph.p_vaddr + ph.p_offset}));
				break;
			}
		}
	}
	elf_end(e);
	close(fd);
	*out = v.v;
	return v.n;
}

/* --- the plan matching probes.bpf.c --- */

enum { EV_BEGIN, EV_ADD, EV_EXIT, EV_END, EV_PRINT_INT, EV_PRINT_STR, EV_FLOOD, EV_TIME, EV_COUNT };

static struct plan_arg begin_args[] = {
	{PLAN_ARG_SITE_PROBE, 8, 8, false, "BEGIN"},
	{PLAN_ARG_INT, 16, 8, true, NULL},
	{PLAN_ARG_INT, 24, 8, false, NULL},
	{PLAN_ARG_INT, 32, 8, false, NULL},
	{PLAN_ARG_STR, 40, 8, false, NULL},
	{PLAN_ARG_INT, 48, 8, true, NULL},
	{PLAN_ARG_INT, 56, 8, true, NULL},
	{PLAN_ARG_INT, 64, 8, false, NULL},
	{PLAN_ARG_INT, 72, 8, false, NULL},
	{PLAN_ARG_STR, 80, 8, false, NULL},
	{PLAN_ARG_STR, 88, 8, false, NULL},
};
static struct plan_arg add_args[] = {
	{PLAN_ARG_SITE_PROBE, 8, 8, false, NULL}, {PLAN_ARG_SITE_FUNC, 16, 8, false, NULL},
	{PLAN_ARG_INT, 24, 8, true, NULL},        {PLAN_ARG_INT, 32, 8, true, NULL},
	{PLAN_ARG_INT, 40, 8, false, NULL},       {PLAN_ARG_INT, 48, 8, false, NULL},
};
static struct plan_arg end_args[] = {
	{PLAN_ARG_SITE_PROBE, 8, 8, false, "END"}, {PLAN_ARG_INT, 16, 8, false, NULL},
	{PLAN_ARG_INT, 24, 8, false, NULL},        {PLAN_ARG_INT, 32, 8, false, NULL},
	{PLAN_ARG_STR, 40, 16, false, NULL},
};
static struct plan_arg print_int_args[] = {{PLAN_ARG_INT, 8, 8, true, NULL}};
static struct plan_arg print_str_args[] = {{PLAN_ARG_STR, 8, 8, false, NULL}};
static struct plan_arg flood_args[] = {
	{PLAN_ARG_INT, 8, 8, true, NULL},
	{PLAN_ARG_STR, 16, 8, false, NULL},
};

static struct plan_event events[EV_COUNT] = {
	[EV_BEGIN] = {.kind = PLAN_EV_PRINTF,
		      .fmt = "%s: hello %5d|%-5x|%c|%s|%%|%05i|%+d|%#o|%-4c|%.3s|%8s|\n",
		      .args = begin_args,
		      .nargs = 11,
		      .size = 96},
	[EV_ADD] = {.kind = PLAN_EV_PRINTF,
		    .fmt = "%s %s a=%d b=%d pid_ok=%d elapsed_ok=%d\n",
		    .args = add_args,
		    .nargs = 6,
		    .size = 56},
	[EV_EXIT] = {.kind = PLAN_EV_EXIT, .size = 8},
	[EV_END] = {.kind = PLAN_EV_PRINTF,
		    .fmt = "%s: bye %p %p %-6p|%s\n",
		    .args = end_args,
		    .nargs = 5,
		    .size = 56},
	[EV_PRINT_INT] = {.kind = PLAN_EV_PRINT, .args = print_int_args, .nargs = 1, .size = 16},
	[EV_PRINT_STR] = {.kind = PLAN_EV_PRINT, .args = print_str_args, .nargs = 1, .size = 16},
	[EV_FLOOD] = {.kind = PLAN_EV_PRINTF,
		      .fmt = "%d %s\n",
		      .args = flood_args,
		      .nargs = 2,
		      .size = 256 * 1024},
	[EV_TIME] = {.kind = PLAN_EV_TIME, .fmt = "year %Y\n", .size = 8},
};

static const char expect_begin[] =
	"BEGIN: hello    42|ff   |A|world|%|-0042|+7|010|z   |abc|   right|\n";
static const char expect_end_fixed[] =
	"END: bye (nil) 0xdeadbeef 0x1   |q\"uo\\te\t\n-7\ndone\n";
static char expect_end[128]; /* + "year YYYY\n" from time("year %Y\n") */
static int this_year;

static struct plan_site *sites;
static int nsites;

#define PROG_BEGIN {.kind = PLAN_PROG_BEGIN, .fn_name = "rtst_begin", .site_count = 0, .clause_line = 1}
#define PROG_END {.kind = PLAN_PROG_END, .fn_name = "rtst_end", .clause_line = 9}
#define PROG_ADD {.kind = PLAN_PROG_UPROBE, .fn_name = "rtst_add", .site_count = 1, .clause_line = 3}
#define PROG_ADD_EXIT {.kind = PLAN_PROG_UPROBE, .fn_name = "rtst_add_exit", .site_count = 1, .clause_line = 5}
#define PROG_FLOOD {PLAN_PROG_UPROBE, "rtst_flood", 0, 1, 7}

static struct gt_plan make_plan(struct plan_prog *progs, int nprogs)
{
	return (struct gt_plan){
		.sites = sites,
		.nsites = nsites,
		.progs = progs,
		.nprogs = nprogs,
		.events = events,
		.nevents = EV_COUNT,
		.obj = probes_obj,
		.obj_size = probes_size,
	};
}

static char *add_line(long a)
{
	static char buf[128];
	snprintf(buf, sizeof(buf), "go:main.add:entry main.add a=%ld b=%ld pid_ok=1 elapsed_ok=1\n",
		 a, 2 * a);
	return buf;
}

/* --- running one scenario with stdout (-o) and stderr captured --- */

struct result {
	int rc;
	char *out, *err;
	double secs;
};

static struct result run(struct gt_plan *plan, struct rt_options *o)
{
	char outp[PATH_MAX + 16], errp[PATH_MAX + 16];
	struct result r;
	snprintf(outp, sizeof(outp), "%s/out", tmpdir);
	snprintf(errp, sizeof(errp), "%s/err", tmpdir);
	unlink(outp);
	if (!o->output_path)
		o->output_path = outp;
	o->quiet = true; /* these plans count no probes: the output is the events' alone */
	fflush(stderr);
	int saved = dup(2), fd = open(errp, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	dup2(fd, 2);
	close(fd);
	double t0 = now_s();
	r.rc = rt_run(plan, o);
	r.secs = now_s() - t0;
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	r.out = slurp(o->output_path, NULL);
	r.err = slurp(errp, NULL);
	if (!r.out)
		r.out = xstrdup("");
	return r;
}

static void result_free(struct result *r)
{
	free(r->out);
	free(r->err);
}

/* Programs named rtst_* still loaded: a leaked object, or a link that pins one. */
static int count_loaded(void)
{
	__u32 id = 0;
	int n = 0;
	while (!bpf_prog_get_next_id(id, &id)) {
		int fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0)
			continue;
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		memset(&info, 0, sizeof(info));
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && !strncmp(info.name, "rtst_", 5))
			n++;
		close(fd);
	}
	return n;
}

static void check_clean(const char *scenario)
{
	int n = 0;
	/* Program release is deferred (RCU): give it a moment. */
	for (int i = 0; i < 100 && (n = count_loaded()); i++)
		usleep(20000);
	CHECK(n == 0, "%s: %d rtst_* programs still loaded", scenario, n);
	int st;
	pid_t c = waitpid(-1, &st, WNOHANG);
	CHECK(c < 0 && errno == ECHILD, "%s: a child is left (waitpid -> %d)", scenario, (int)c);
}

static void expect_eq(const char *scenario, const char *what, const char *got, const char *want)
{
	CHECK(!strcmp(got, want), "%s: %s differs\n--- got:\n%s--- want:\n%s---", scenario, what, got,
	      want);
}

static pid_t spawn(char *const argv[])
{
	pid_t p = fork();
	if (p == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	return p;
}

/* --- scenarios --- */

static void test_fmt(void)
{
	static const struct {
		const char *fmt, *cspec;
		enum fmt_conv conv;
	} ok[] = {
		{"%d", "%lld", FMT_SIGNED},      {"%-8i", "%-8lld", FMT_SIGNED},
		{"%+05ld", "%+05lld", FMT_SIGNED}, {"%#x", "%#llx", FMT_UNSIGNED},
		{"%5llu", "%5llu", FMT_UNSIGNED}, {"%#d", "%lld", FMT_SIGNED},
		{"%-10s", "%-10s", FMT_STR},      {"%.3s", "%.3s", FMT_STR},
		{"%03c", "%3c", FMT_CHAR},        {"%p", "%s", FMT_PTR},
		{"%-18p", "%-18s", FMT_PTR},      {"%hhX", "%llX", FMT_UNSIGNED},
		{"%zo", "%llo", FMT_UNSIGNED},    {"%.5d", "%.5lld", FMT_SIGNED},
		{"%.d", "%.0lld", FMT_SIGNED},    {"% d", "% lld", FMT_SIGNED},
	};
	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		struct fmt f;
		const char *msg = NULL;
		int off = -1;
		int err = fmt_parse(ok[i].fmt, &f, &msg, &off);
		CHECK(!err && f.npieces == 1 && f.nconv == 1, "fmt %s: err %d %s", ok[i].fmt, err,
		      msg ? msg : "");
		if (!err && f.npieces == 1) {
			CHECK(!strcmp(f.pieces[0].cspec, ok[i].cspec) && f.pieces[0].conv == ok[i].conv,
			      "fmt %s: cspec %s conv %d, want %s %d", ok[i].fmt, f.pieces[0].cspec,
			      f.pieces[0].conv, ok[i].cspec, ok[i].conv);
			CHECK(f.pieces[0].src_offset == 0 &&
				      f.pieces[0].src_len == (int)strlen(ok[i].fmt),
			      "fmt %s: src %d+%d", ok[i].fmt, f.pieces[0].src_offset,
			      f.pieces[0].src_len);
		}
		fmt_free(&f);
	}

	struct fmt f;
	const char *msg;
	int off;
	CHECK(!fmt_parse("a %% b %s c %d%%\n", &f, &msg, &off) && f.npieces == 3 && f.nconv == 2 &&
		      !strcmp(f.pieces[0].literal, "a % b ") && f.pieces[1].src_offset == 12 &&
		      !strcmp(f.pieces[1].literal, " c ") && f.pieces[2].conv == FMT_NONE &&
		      !strcmp(f.pieces[2].literal, "%\n"),
	      "fmt pieces");
	fmt_free(&f);
	CHECK(!fmt_parse("", &f, &msg, &off) && f.npieces == 0 && f.nconv == 0, "fmt empty");
	fmt_free(&f);

	static const struct {
		const char *fmt, *msg;
		int off;
	} bad[] = {
		{"x %q", "unknown conversion '%q'", 2},
		{"ab %-5", "incomplete conversion at end of format", 3},
		{"%", "incomplete conversion at end of format", 0},
		{"%d %ll", "incomplete conversion at end of format", 3},
		{"%*d", "unknown conversion '%*'", 0},
		{"%f", "unknown conversion '%f'", 0},
		{"%99999999d", "field width or precision too large", 0},
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		msg = NULL;
		off = -1;
		int err = fmt_parse(bad[i].fmt, &f, &msg, &off);
		CHECK(err == -EINVAL && msg && !strcmp(msg, bad[i].msg) && off == bad[i].off,
		      "fmt %s: err %d msg '%s' off %d", bad[i].fmt, err, msg ? msg : "", off);
	}
}

static void test_dry_run(void)
{
	char marker[PATH_MAX + 16], script[PATH_MAX + 64];
	snprintf(marker, sizeof(marker), "%s/ran", tmpdir);
	snprintf(script, sizeof(script), "touch %s", marker);
	char *argv[] = {"/bin/sh", "-c", script, NULL};
	struct plan_prog progs[] = {PROG_BEGIN, PROG_ADD, PROG_END};
	struct gt_plan plan = make_plan(progs, 3);
	struct rt_options o = {.child_argv = argv, .dry_run = true};
	struct result r = run(&plan, &o);
	CHECK(r.rc == 0, "dry-run: rc %d, stderr:\n%s", r.rc, r.err);
	expect_eq("dry-run", "stdout", r.out, "");
	expect_eq("dry-run", "stderr", r.err, "");
	CHECK(access(marker, F_OK) != 0, "dry-run: the command ran");
	result_free(&r);
	check_clean("dry-run");
}

static void test_child(bool json)
{
	const char *name = json ? "json" : "-c";
	char *argv[] = {target, json ? "2" : "5", "0", "0", NULL};
	/* The same binary, untraced, running all along: the pid filter must still hold after
	 * the child's execve (events of `other` would print pid_ok=0). */
	char *other_argv[] = {target, "-1", "1", "0", NULL};
	pid_t other = spawn(other_argv);
	struct plan_prog progs[] = {PROG_BEGIN, PROG_ADD, PROG_END};
	struct gt_plan plan = make_plan(progs, 3);
	struct rt_options o = {.child_argv = argv, .json = json};
	struct result r = run(&plan, &o);
	int st;
	kill(other, SIGKILL);
	waitpid(other, &st, 0);
	struct strbuf want = {0};
	if (json) {
		strbuf_puts(&want, "{\"type\": \"printf\", \"data\": \"BEGIN: hello    42|ff   "
				   "|A|world|%|-0042|+7|010|z   |abc|   right|\\n\"}\n");
		for (int a = 0; a < 2; a++)
			strbuf_printf(&want,
				      "{\"type\": \"printf\", \"data\": \"go:main.add:entry main.add "
				      "a=%d b=%d pid_ok=1 elapsed_ok=1\\n\"}\n",
				      a, 2 * a);
		strbuf_puts(&want, "{\"type\": \"printf\", \"data\": \"END: bye (nil) 0xdeadbeef 0x1   "
				   "|q\\\"uo\\\\te\\t\\n\"}\n{\"type\": \"value\", \"data\": -7}\n"
				   "{\"type\": \"value\", \"data\": \"done\"}\n");
		strbuf_printf(&want, "{\"type\": \"time\", \"data\": \"year %d\\n\"}\n",
			      this_year);
	} else {
		strbuf_puts(&want, expect_begin);
		for (int a = 0; a < 5; a++)
			strbuf_puts(&want, add_line(a));
		strbuf_puts(&want, expect_end);
	}
	CHECK(r.rc == 0, "%s: rc %d, stderr:\n%s", name, r.rc, r.err);
	expect_eq(name, "stdout", r.out, want.buf);
	expect_eq(name, "stderr", r.err, "");
	strbuf_free(&want);
	result_free(&r);
	check_clean(name);
}

static void test_child_text(void)
{
	test_child(false);
}

static void test_child_json(void)
{
	test_child(true);
}

static void test_exit(void)
{
	char *argv[] = {target, "-1", "1", "0", NULL};
	struct plan_prog progs[] = {PROG_BEGIN, PROG_ADD_EXIT, PROG_END};
	struct gt_plan plan = make_plan(progs, 3);
	struct rt_options o = {.child_argv = argv};
	struct result r = run(&plan, &o);
	struct strbuf want = {0};
	strbuf_puts(&want, expect_begin);
	for (int a = 0; a <= 3; a++)
		strbuf_puts(&want, add_line(a));
	strbuf_puts(&want, expect_end);
	CHECK(r.rc == 0, "exit(): rc %d, stderr:\n%s", r.rc, r.err);
	expect_eq("exit()", "stdout", r.out, want.buf);
	expect_eq("exit()", "stderr", r.err, "");
	CHECK(r.secs < 1.5, "exit(): took %.2f s", r.secs);
	strbuf_free(&want);
	result_free(&r);
	check_clean("exit()");
}

static void test_pid(void)
{
	/* A is traced, B runs the same binary at the same time and must not show up. */
	char *argv[] = {target, "20", "5", "300", NULL};
	pid_t a = spawn(argv), b = spawn(argv);
	struct plan_prog progs[] = {PROG_BEGIN, PROG_ADD, PROG_END};
	struct gt_plan plan = make_plan(progs, 3);
	struct rt_options o = {.pid = a};
	struct result r = run(&plan, &o);
	struct strbuf want = {0};
	strbuf_puts(&want, expect_begin);
	for (int i = 0; i < 20; i++)
		strbuf_puts(&want, add_line(i));
	strbuf_puts(&want, expect_end);
	CHECK(r.rc == 0, "-p: rc %d, stderr:\n%s", r.rc, r.err);
	expect_eq("-p", "stdout", r.out, want.buf);
	expect_eq("-p", "stderr", r.err, "");
	CHECK(r.secs < 2, "-p: took %.2f s after the process exited", r.secs);
	int st;
	CHECK(waitpid(a, &st, 0) == a && WIFEXITED(st) && !WEXITSTATUS(st), "-p: target A");
	CHECK(waitpid(b, &st, 0) == b && WIFEXITED(st) && !WEXITSTATUS(st), "-p: target B");
	strbuf_free(&want);
	result_free(&r);
	check_clean("-p");

	/* A pid that does not exist. */
	pid_t gone = spawn((char *[]){"/bin/true", NULL});
	waitpid(gone, &st, 0);
	o = (struct rt_options){.pid = gone};
	r = run(&plan, &o);
	char msg[128];
	snprintf(msg, sizeof(msg), "gotrace: error: no process with pid %d\n", (int)gone);
	CHECK(r.rc == 1, "-p gone: rc %d", r.rc);
	expect_eq("-p gone", "stderr", r.err, msg);
	expect_eq("-p gone", "stdout", r.out, "");
	result_free(&r);
	check_clean("-p gone");
}

static void ignore_signal(int sig)
{
	(void)sig;
}

static void test_sigint(void)
{
	char *argv[] = {target, "-1", "1", "0", NULL};
	struct plan_prog progs[] = {PROG_BEGIN, PROG_ADD, PROG_END};
	struct gt_plan plan = make_plan(progs, 3);
	struct rt_options o = {.child_argv = argv};
	/* Outside rt_run a stray SIGINT must not kill the test. */
	struct sigaction sa = {.sa_handler = ignore_signal}, old;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old);
	pid_t me = getpid(), killer = fork();
	if (killer == 0) {
		usleep(500 * 1000);
		kill(me, SIGINT);
		_exit(0);
	}
	struct result r = run(&plan, &o);
	int st;
	waitpid(killer, &st, 0);
	sigaction(SIGINT, &old, NULL);

	CHECK(r.rc == 0, "SIGINT: rc %d, stderr:\n%s", r.rc, r.err);
	expect_eq("SIGINT", "stderr", r.err, "");
	/* BEGIN, then a = 0, 1, 2 ... without a gap, then END. */
	size_t lb = strlen(expect_begin), le = strlen(expect_end), lo = strlen(r.out);
	CHECK(lo > lb + le && !strncmp(r.out, expect_begin, lb) &&
		      !strcmp(r.out + lo - le, expect_end),
	      "SIGINT: output:\n%s", r.out);
	int n = 0;
	const char *p = r.out + lb;
	while (lo > lb + le && p < r.out + lo - le) {
		const char *want = add_line(n);
		if (strncmp(p, want, strlen(want))) {
			CHECK(false, "SIGINT: line %d: %.80s", n, p);
			break;
		}
		p += strlen(want);
		n++;
	}
	CHECK(n >= 10, "SIGINT: only %d events in 0.5 s", n);
	CHECK(r.secs < 1.5, "SIGINT: took %.2f s", r.secs);
	result_free(&r);
	check_clean("SIGINT");
}

static void test_lost(void)
{
	char *argv[] = {target, "200", "0", "0", NULL};
	struct plan_prog progs[] = {PROG_FLOOD};
	struct gt_plan plan = make_plan(progs, 1);
	struct rt_options o = {.child_argv = argv};
	struct result r = run(&plan, &o);
	CHECK(r.rc == 0, "lost: rc %d", r.rc);
	long printed = 0, lost = 0;
	for (const char *p = r.out; *p; p++)
		printed += *p == '\n';
	/* Every stderr line must be "Lost N events". */
	for (const char *p = r.err; *p;) {
		long n;
		int len = 0;
		if (sscanf(p, "Lost %ld events\n%n", &n, &len) != 1 || !len) {
			CHECK(false, "lost: stderr line: %.80s", p);
			break;
		}
		lost += n;
		p += len;
	}
	CHECK(printed + lost == 200 * 20, "lost: printed %ld + lost %ld != %d", printed, lost,
	      200 * 20);
	CHECK(lost > 0, "lost: nothing lost (printed %ld)", printed);
	fprintf(stderr, "  lost: %ld records printed, %ld reported lost\n", printed, lost);
	result_free(&r);
	check_clean("lost");
}

static void test_verifier(bool verbose)
{
	const char *name = verbose ? "verifier -v" : "verifier";
	char *argv[] = {target, "-1", "1", "0", NULL};
	struct plan_prog progs[] = {PROG_BEGIN, {PLAN_PROG_UPROBE, "rtst_bad", 0, 1, 7}};
	struct gt_plan plan = make_plan(progs, 2);
	plan.obj = bad_obj;
	plan.obj_size = bad_size;
	plan.events = NULL;
	plan.nevents = 0;
	struct rt_options o = {.child_argv = argv, .verbose = verbose};
	struct result r = run(&plan, &o);
	CHECK(r.rc == 1, "%s: rc %d", name, r.rc);
	const char *want = "gotrace: error: the BPF verifier rejected the program for the probe "
			   "at line 7: R0 invalid mem access 'ringbuf_mem_or_null'\n";
	if (!verbose)
		expect_eq(name, "stderr", r.err, want);
	else
		CHECK(strstr(r.err, want) && strstr(r.err, "verifier log of program 'rtst_bad'"),
		      "%s: stderr:\n%s", name, r.err);
	expect_eq(name, "stdout", r.out, "");
	result_free(&r);
	check_clean(name);
}

static void test_verifier_plain(void)
{
	test_verifier(false);
}

static void test_verifier_verbose(void)
{
	test_verifier(true);
}

static void test_attach_failure(void)
{
	char *argv[] = {target, "-1", "1", "0", NULL};
	struct plan_site two[2] = {sites[0], sites[0]};
	two[1].target = "/nonexistent/bin";
	struct plan_prog progs[] = {PROG_BEGIN, PROG_ADD, {PLAN_PROG_UPROBE, "rtst_add_exit", 1, 1, 5}};
	struct gt_plan plan = make_plan(progs, 3);
	plan.sites = two;
	plan.nsites = 2;
	struct rt_options o = {.child_argv = argv};
	struct result r = run(&plan, &o);
	CHECK(r.rc == 1, "attach failure: rc %d", r.rc);
	expect_eq("attach failure", "stderr", r.err,
		  "gotrace: error: cannot attach to /nonexistent/bin: No such file or directory\n");
	expect_eq("attach failure", "stdout", r.out, "");
	result_free(&r);
	check_clean("attach failure");

	/* An offset the kernel refuses (past the end of the file). */
	two[1] = sites[0];
	two[1].file_off = 1ull << 40;
	r = run(&plan, &o);
	CHECK(r.rc == 1 && strstr(r.err, "gotrace: error: cannot attach to "),
	      "bad offset: rc %d stderr %s", r.rc, r.err);
	result_free(&r);
	check_clean("bad offset");

	/* A site uprobes refuse (int $3: runtime.abort) in a running process (-p writes the
	 * breakpoints at attach time): the error names the site, the process is unharmed. */
	struct func *ab;
	if (elf_funcs(target, "runtime.abort.abi0", &ab) == 1 && is_int3(target, ab[0].off)) {
		char *argv_live[] = {target, "-1", "1", "0", NULL};
		pid_t live = spawn(argv_live);
		usleep(100 * 1000);
		struct plan_site many[40];
		for (int i = 0; i < 40; i++)
			many[i] = sites[0];
		/* sole: the probe named this function alone (a wildcard would skip it) */
		many[29] = (struct plan_site){.target = target, .func = ab[0].name,
					      .probe = "go:runtime.abort.abi0:entry",
					      .vaddr = ab[0].vaddr, .file_off = ab[0].off,
					      .sole = true};
		struct plan_prog p1[] = {{PLAN_PROG_UPROBE, "rtst_add", 0, 40, 4}};
		struct gt_plan plan40 = make_plan(p1, 1);
		plan40.sites = many;
		plan40.nsites = 40;
		o = (struct rt_options){.pid = live};
		r = run(&plan40, &o);
		char want[PATH_MAX + 256];
		snprintf(want, sizeof(want),
			 "gotrace: error: cannot attach to %s: the instruction cannot be probed "
			 "(ENOTSUPP) at go:runtime.abort.abi0:entry (address 0x%llx)\n",
			 target, (unsigned long long)ab[0].vaddr);
		CHECK(r.rc == 1, "int3 site: rc %d", r.rc);
		expect_eq("int3 site", "stderr", r.err, want);
		CHECK(kill(live, 0) == 0, "int3 site: the traced process died");
		kill(live, SIGKILL);
		int st;
		waitpid(live, &st, 0);
		result_free(&r);
		check_clean("int3 site");
		free(ab[0].name);
		free(ab);
	} else {
		CHECK(false, "no runtime.abort.abi0 (int3) in %s", target);
	}

	/* -o into a directory that does not exist: nothing is loaded. */
	o = (struct rt_options){.child_argv = argv, .output_path = "/nonexistent/out"};
	r = run(&plan, &o);
	CHECK(r.rc == 1 && !strcmp(r.err, "gotrace: error: cannot open /nonexistent/out: No such "
					  "file or directory\n"),
	      "-o: rc %d stderr %s", r.rc, r.err);
	result_free(&r);
	check_clean("-o");
}

/* --- bench --- */

static void bench(void)
{
	struct func *fs;
	int nfs = elf_funcs(target, NULL, &fs), n = 0;
	struct plan_site *all = xcalloc((size_t)nfs, sizeof(*all));
	for (int i = 0; i < nfs; i++)
		if (!is_int3(target, fs[i].off))
			all[n++] = (struct plan_site){.target = target, .func = fs[i].name, .probe = fs[i].name,
					    .vaddr = fs[i].vaddr, .file_off = fs[i].off};
	char *argv1[] = {target, "1", "0", "0", NULL};
	struct plan_prog nop[] = {{PLAN_PROG_UPROBE, "rtst_nop", 0, n, 1}};
	struct gt_plan plan = make_plan(nop, 1);
	plan.sites = all;
	plan.nsites = n;
	struct rt_options o = {.child_argv = argv1, .verbose = true};
	for (int rep = 0; rep < 3; rep++) {
		struct result r = run(&plan, &o);
		fprintf(stderr, "every function (%d sites), rc %d, %.3f s:\n", n, r.rc, r.secs);
		for (char *l = strtok(r.err, "\n"); l; l = strtok(NULL, "\n"))
			if (strstr(l, "attached") || strstr(l, "detached"))
				fprintf(stderr, "  %s\n", l);
		result_free(&r);
	}
	/* -p: the binary is mapped already, so attach writes every breakpoint now. */
	char *argv_p[] = {target, "1", "0", "3000", NULL};
	for (int rep = 0; rep < 2; rep++) {
		pid_t p = spawn(argv_p);
		usleep(100 * 1000);
		o = (struct rt_options){.pid = p, .verbose = true};
		struct result r = run(&plan, &o);
		int st;
		waitpid(p, &st, 0);
		fprintf(stderr, "every function (%d sites), -p, rc %d, %.3f s:\n", n, r.rc, r.secs);
		for (char *l = strtok(r.err, "\n"); l; l = strtok(NULL, "\n"))
			if (strstr(l, "attached") || strstr(l, "detached") || strstr(l, "error"))
				fprintf(stderr, "  %s\n", l);
		result_free(&r);
	}
	/* Many links (one per clause in gotrace): each close waits for a grace period. */
	for (int nl = 4; nl <= 32; nl *= 2) {
		struct plan_prog *many = xcalloc((size_t)nl, sizeof(*many));
		for (int i = 0; i < nl; i++)
			many[i] = (struct plan_prog){PLAN_PROG_UPROBE, "rtst_nop", i * (n / nl), n / nl,
						     1};
		plan = make_plan(many, nl);
		plan.sites = all;
		plan.nsites = n;
		o = (struct rt_options){.child_argv = argv1, .verbose = true};
		struct result r = run(&plan, &o);
		fprintf(stderr, "%d links x %d sites, rc %d:", nl, n / nl, r.rc);
		for (char *l = strtok(r.err, "\n"); l; l = strtok(NULL, "\n"))
			if (strstr(l, "attached") || strstr(l, "detached"))
				fprintf(stderr, " %s;", strstr(l, " in ") + 4);
		fputc('\n', stderr);
		result_free(&r);
		free(many);
	}
	check_clean("bench attach");

	static const struct {
		const char *calls, *procs;
	} loads[] = {{"300000", "1"}, {"200000", "2"}};
	for (size_t k = 0; k < ARRAY_SIZE(loads); k++) {
		char *argv[] = {target, (char *)loads[k].calls, "0", "0", (char *)loads[k].procs, NULL};
		long calls = atol(loads[k].calls) * atol(loads[k].procs);
		char outp[PATH_MAX + 16];
		snprintf(outp, sizeof(outp), "%s/bench.out", tmpdir);
		/* The same calls with a program that does nothing: the cost of the trap alone. */
		struct plan_prog nop1[] = {{PLAN_PROG_UPROBE, "rtst_nop", 0, 1, 1}};
		plan = make_plan(nop1, 1);
		o = (struct rt_options){.child_argv = argv, .output_path = outp};
		struct result r = run(&plan, &o);
		double base = r.secs;
		result_free(&r);

		struct plan_prog progs[] = {PROG_ADD};
		plan = make_plan(progs, 1);
		o = (struct rt_options){.child_argv = argv, .output_path = outp};
		r = run(&plan, &o);
		long lines = 0, lost = 0;
		for (const char *q = r.out; *q; q++)
			lines += *q == '\n';
		for (const char *q = r.err; (q = strstr(q, "Lost ")); q += 5)
			lost += atol(q + 5);
		fprintf(stderr,
			"%s goroutine(s) x %s calls: no-op probe %.3f s (%.1f us/hit), printf probe "
			"%.3f s: %ld lines, %ld lost, %.0f events/s, %+.2f us/event over no-op\n",
			loads[k].procs, loads[k].calls, base, base / (double)calls * 1e6, r.secs, lines,
			lost, (double)lines / r.secs, (r.secs - base) / (double)calls * 1e6);
		CHECK(lines + lost == calls, "bench: %ld + %ld != %ld", lines, lost, calls);
		result_free(&r);
	}
	check_clean("bench");
	for (int i = 0; i < nfs; i++)
		free(fs[i].name);
	free(fs);
	free(all);
}

int main(int argc, char **argv)
{
	bool do_bench = argc == 3 && !strcmp(argv[1], "--bench");
	if (argc != 2 && !do_bench) {
		fprintf(stderr, "usage: %s [--bench] DIR\n", argv[0]);
		return 2;
	}
	const char *dir = argv[argc - 1];
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/target", dir);
	if (!realpath(path, target)) {
		perror(path);
		return 2;
	}
	snprintf(path, sizeof(path), "%s/probes.bpf.o", dir);
	probes_obj = slurp(path, &probes_size);
	snprintf(path, sizeof(path), "%s/bad.bpf.o", dir);
	bad_obj = slurp(path, &bad_size);
	if (!probes_obj || !bad_obj) {
		fprintf(stderr, "%s: missing probes.bpf.o or bad.bpf.o\n", dir);
		return 2;
	}
	/* A hang (a stop condition missed) fails the test instead of blocking ctest. */
	alarm(do_bench ? 600 : 120);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/rt_selftest.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 2;
	}

	struct func *fs;
	int nf = elf_funcs(target, "main.add", &fs);
	if (nf != 1) {
		fprintf(stderr, "%s: no main.add\n", target);
		return 2;
	}
	nsites = 1;
	sites = xcalloc(1, sizeof(*sites));
	/* Flags in the cookie's high half: the BPF side stores the raw cookie as the site id,
	 * so the output must mask it. */
	sites[0] = (struct plan_site){.target = target,
				      .func = "main.add",
				      .probe = "go:main.add:entry",
				      .vaddr = fs[0].vaddr,
				      .file_off = fs[0].off,
				      .cookie_flags = GT_SITE_G_IN_REG | GT_SITE_TRACK};

	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	this_year = tm.tm_year + 1900;
	snprintf(expect_end, sizeof(expect_end), "%syear %d\n", expect_end_fixed, this_year);

	if (do_bench) {
		bench();
	} else {
		static const struct {
			const char *name;
			void (*fn)(void);
		} tests[] = {
			{"fmt", test_fmt},
			{"dry-run", test_dry_run},
			{"-c", test_child_text},
			{"json", test_child_json},
			{"verifier", test_verifier_plain},
			{"verifier -v", test_verifier_verbose},
			{"exit()", test_exit},
			{"-p", test_pid},
			{"SIGINT", test_sigint},
			{"lost", test_lost},
			{"attach failure", test_attach_failure},
		};
		for (size_t i = 0; i < ARRAY_SIZE(tests); i++) {
			int before = failures;
			double t0 = now_s();
			tests[i].fn();
			fprintf(stderr, "%s %s (%.2f s)\n", failures == before ? "ok  " : "FAIL",
				tests[i].name, now_s() - t0);
		}
	}

	free(fs[0].name);
	free(fs);
	free(sites);
	free(probes_obj);
	free(bad_obj);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd)) {
	}
	fprintf(stderr, "%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
