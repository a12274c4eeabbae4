/* gotrace: command line, and the pipeline parse -> sema -> codegen -> run. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "binfo/binfo.h"
#include "cache/cache.h"
#include "codegen/cg.h"
#include "common/arena.h"
#include "common/diag.h"
#include "common/stopsig.h"
#include "common/util.h"
#include "follow_cmd.h"
#include "funcgraph/funcgraph.h"
#include "symbols/symbols.h"
#include "target/target.h"
#include "info.h"
#include "list.h"
#include "parser/ast.h"
#include "runtime/rt.h"
#include "runtime/otlp/otlp.h"
#include "runtime/profile/profile.h"
#include "sema/sema.h"

enum { EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

struct options {
	const char *program;     /* -e */
	const char *script_path; /* SCRIPT.gt */
	const char *cmd;         /* -c */
	const char *binary;      /* -b */
	const char *output;      /* -o */
	const char *list;        /* -l [PATTERN] */
	bool list_mode;
	pid_t pid;
	pid_t more_pids[PLAN_MAX_PIDS - 1]; /* -p given again */
	int nmore_pids;
	double max_overhead; /* --max-overhead PERCENT, 0: off */
	const char *probe_filter; /* --probe-filter REGEX */
	bool json, verbose, quiet, dry_run, unsafe, parse_only, no_cache;
	enum rt_profile_format profile; /* -f folded, -f pprof */
	int helper_checks; /* -k, -kk */
	bool dump_ast, dump_types, dump_sites, dump_ir, dump_bpf, dump_jit;
	VEC(char *) posargs;         /* $1 .. */
	VEC(const char *) named;     /* after --: NAME or NAME=VALUE of --NAME[=VALUE] */
	struct fg_options fg; /* --funcgraph mode when fg.patterns.n > 0 */
	bool otlp;            /* --otlp[=URL] */
	const char *otlp_url;
	VEC(const char *) includes, include_dirs; /* --include FILE, -I DIR */
};

static void usage(FILE *out)
{
	fputs("USAGE:\n"
	      "    gotrace [OPTIONS] SCRIPT.gt [ARGS...]\n"
	      "    gotrace [OPTIONS] - [ARGS...]          (the script on stdin)\n"
	      "    gotrace [OPTIONS] -e 'PROGRAM' [ARGS...]\n"
	      "    gotrace -l [PATTERN] [-b BINARY | -c CMD | -p PID]\n"
	      "    gotrace --funcgraph PATTERN [--funcgraph PATTERN...] [--drilldown FUNC]\n"
	      "            [--args 'FUNC(NAME=RULE:TYPE, ...)'...] [--rets SPEC...] [--no-color]\n"
	      "            [--no-oncpu]\n"
	      "            [--summary [--interval DURATION]]\n"
	      "            [-f json|chrome] [-o FILE] [--otlp[=URL]] (-c CMD | -p PID | BINARY)\n"
	      "\n"
	      "OPTIONS:\n"
	      "  -e PROGRAM          program text\n"
	      "  -c 'CMD ARGS'       start CMD, trace it (or the program it runs: go test,\n"
	      "                      go run, sh -c), exit when it exits, with its status\n"
	      "  -p PID              trace a running process (again: up to 8, one program)\n"
	      "  -b, --binary PATH   default target binary for go: probes\n"
	      "  -l [PATTERN]        list Go functions matching PATTERN\n"
	      "  -f FORMAT           text, json; folded, pprof: maps keyed by stacks as a profile\n"
	      "                      chrome: --funcgraph's calls as a trace for Perfetto and\n"
	      "                      chrome://tracing (Trace Event Format JSON)\n"
	      "  -o FILE             write output to FILE\n"
	      "  -d ast|types|sites|ir|bpf|jit  dump a stage and continue\n"
	      "  -v                  verbose\n"
	      "  -q                  quiet: no \"Attaching N probes...\" line\n"
	      "  -B full|line|none   stdout buffering\n"
	      "  --no-warnings       do not print warnings\n"
	      "  -k, -kk             warn when a map update or delete fails (-kk: reads too)\n"
	      "  --info              kernel and BPF features, and how go: probes attach\n"
	      "  --include FILE      the macros of a C header (errno.h: EPERM ...)\n"
	      "  -I DIR              where #include and --include look for headers\n"
	      "  --dry-run           compile and load (verifier), attach nothing\n"
	      "  --no-cache          compile even if ~/.cache/gotrace has this program\n"
	      "  --unsafe            allow unsafe actions\n"
	      "  --max-overhead PERCENT\n"
	      "                      detach the probes once they take more than PERCENT of\n"
	      "                      the -c/-p process's CPU time; print what they got\n"
	      "  --exclude PATTERN   leave matching functions out of go: wildcards and\n"
	      "                      --funcgraph (repeatable)\n"
	      "  --funcgraph PATTERN per-goroutine call trees of the matching functions\n"
	      "  --drilldown FUNC    call-graph mode: only trees rooted at FUNC\n"
	      "  --args SPEC         call-graph mode: arguments to show, go-ftrace syntax\n"
	      "  --rets SPEC         call-graph mode: results to show on the closing line\n"
	      "  --summary           call-graph mode: per function, calls, a latency histogram\n"
	      "                      and the most frequent results, instead of trees\n"
	      "  --interval DURATION how often --summary prints (default 5s; 0: at the end)\n"
	      "  --no-color          call-graph mode: no colours on a terminal\n"
	      "  --no-oncpu          call-graph mode: wall-clock time only, not time on a CPU\n"
	      "  --otlp[=URL]        to OpenTelemetry over OTLP/HTTP too: printf lines as log\n"
	      "                      records, maps as metrics, call-graph mode's calls as spans;\n"
	      "                      to URL (default: $OTEL_EXPORTER_OTLP_ENDPOINT, else\n"
	      "                      http://localhost:4318)\n"
	      "  -h, --help          this help\n"
	      "  -V, --version       version\n"
	      "\n"
	      "Probes, builtins, output formats, environment: see gotrace(8).\n",
	      out);
}

static int parse_dump(struct options *o, const char *what)
{
	if (!strcmp(what, "ast"))
		o->dump_ast = true;
	else if (!strcmp(what, "types"))
		o->dump_types = true;
	else if (!strcmp(what, "sites"))
		o->dump_sites = true;
	else if (!strcmp(what, "ir"))
		o->dump_ir = true;
	else if (!strcmp(what, "bpf"))
		o->dump_bpf = true;
	else if (!strcmp(what, "jit"))
		o->dump_jit = true;
	else {
		diag_fatal("unknown -d stage '%s': expected ast, types, sites, ir, bpf or jit", what);
		return -EINVAL;
	}
	return 0;
}

/* The kernel's largest pid (/proc/sys/kernel/pid_max). */
static long pid_max(void)
{
	long v = 0;
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r");
	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v > 0 ? v : 4194304;
}

/* -B full|line|none: stdout's buffering, as bpftrace's -B */
static int set_buffering(const char *mode)
{
	static const struct {
		const char *name;
		int mode;
	} modes[] = {{"full", _IOFBF}, {"line", _IOLBF}, {"none", _IONBF}};
	for (size_t i = 0; i < ARRAY_SIZE(modes); i++)
		if (!strcmp(mode, modes[i].name))
			return setvbuf(stdout, NULL, modes[i].mode, 0) ? -EINVAL : 0;
	diag_fatal("-B needs full, line or none, got '%s'", mode);
	return -EINVAL;
}

/* --max-overhead PERCENT: a number above 0 and at most 100, decimals allowed. */
static int parse_percent(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end != s && *end == '%')
		end++;
	if (!*s || *end || errno || !isfinite(v) || v <= 0 || v > 100) {
		diag_fatal("--max-overhead needs a percentage above 0 and at most 100, got '%s'", s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	enum { OPT_DRY_RUN = 256, OPT_UNSAFE, OPT_PARSE_ONLY, OPT_FUNCGRAPH, OPT_DRILLDOWN,
	       OPT_ARGS, OPT_RETS, OPT_SUMMARY, OPT_INTERVAL, OPT_NO_COLOR, OPT_NO_WARNINGS, OPT_INFO, OPT_INCLUDE,
	       OPT_EXCLUDE, OPT_NO_CACHE, OPT_MAX_OVERHEAD, OPT_PROBE_FILTER, OPT_NO_ONCPU, OPT_OTLP };
	static const struct option longopts[] = {
		{"binary", required_argument, NULL, 'b'},
		{"dry-run", no_argument, NULL, OPT_DRY_RUN},
		{"no-cache", no_argument, NULL, OPT_NO_CACHE},
		{"unsafe", no_argument, NULL, OPT_UNSAFE},
		{"parse-only", no_argument, NULL, OPT_PARSE_ONLY},
		{"funcgraph", required_argument, NULL, OPT_FUNCGRAPH},
		{"drilldown", required_argument, NULL, OPT_DRILLDOWN},
		{"args", required_argument, NULL, OPT_ARGS},
		{"rets", required_argument, NULL, OPT_RETS},
		{"summary", no_argument, NULL, OPT_SUMMARY},
		{"interval", required_argument, NULL, OPT_INTERVAL},
		{"no-color", no_argument, NULL, OPT_NO_COLOR},
		{"no-oncpu", no_argument, NULL, OPT_NO_ONCPU},
		{"otlp", optional_argument, NULL, OPT_OTLP},
		{"no-warnings", no_argument, NULL, OPT_NO_WARNINGS},
		{"info", no_argument, NULL, OPT_INFO},
		{"include", required_argument, NULL, OPT_INCLUDE},
		{"exclude", required_argument, NULL, OPT_EXCLUDE},
		{"max-overhead", required_argument, NULL, OPT_MAX_OVERHEAD},
		{"probe-filter", required_argument, NULL, OPT_PROBE_FILTER},
		{"output", required_argument, NULL, 'o'}, /* current bpftrace's spellings */
		{"list", no_argument, NULL, 'l'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{0},
	};
	int c;
	/* as bpftrace's getopt: options anywhere, also after the script (a `#!` script run
	 * as `./x.gt -p PID`); words from `--` on are ARGS whatever they look like. The
	 * words left, in order, from optind on. */
	while ((c = getopt_long(argc, argv, "e:c:p:b:lf:o:d:vhVqkB:I:", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			o->program = optarg;
			break;
		case 'c':
			o->cmd = optarg;
			break;
		case 'p': {
			char *end;
			errno = 0;
			long v = strtol(optarg, &end, 10);
			long max = pid_max();
			if (!*optarg || *end || errno) {
				diag_fatal("pid '%s' is not a valid decimal number", optarg);
				return -EINVAL;
			}
			if (v < 1 || v > max) {
				diag_fatal("pid '%s' out of valid pid range [1,%ld]", optarg, max);
				return -EINVAL;
			}
			if (!o->pid || o->pid == (pid_t)v) {
				o->pid = (pid_t)v;
				break;
			}
			bool again = false;
			for (int i = 0; i < o->nmore_pids; i++)
				again |= o->more_pids[i] == (pid_t)v;
			if (again)
				break;
			if (o->nmore_pids == PLAN_MAX_PIDS - 1) {
				diag_fatal("-p: at most %d processes", PLAN_MAX_PIDS);
				return -EINVAL;
			}
			o->more_pids[o->nmore_pids++] = (pid_t)v;
			break;
		}
		case 'b':
			o->binary = optarg;
			break;
		case 'l':
			o->list_mode = true;
			break;
		case 'f':
			o->fg.chrome = !strcmp(optarg, "chrome"); /* the last -f wins over it */
			if (!strcmp(optarg, "json"))
				o->json = true;
			else if (!strcmp(optarg, "folded"))
				o->profile = RT_PROFILE_FOLDED;
			else if (!strcmp(optarg, "pprof"))
				o->profile = RT_PROFILE_PPROF;
			else if (o->fg.chrome) {
				o->json = false;
				o->profile = RT_PROFILE_NONE;
			} else if (strcmp(optarg, "text")) {
				diag_fatal("Invalid output format \"%s\"", optarg);
				diag_print(DIAG_PLAIN,
					   "Valid formats: 'text', 'json', 'folded', 'pprof', 'chrome'");
				return -EINVAL;
			}
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'd':
			if (parse_dump(o, optarg))
				return -EINVAL;
			break;
		case 'v':
			o->verbose = true;
			break;
		case OPT_DRY_RUN:
			o->dry_run = true;
			break;
		case OPT_NO_CACHE:
			o->no_cache = true;
			break;
		case OPT_UNSAFE:
			o->unsafe = true;
			break;
		case OPT_PARSE_ONLY:
			o->parse_only = true;
			break;
		case OPT_FUNCGRAPH:
			vec_push(&o->fg.patterns, optarg);
			break;
		case OPT_DRILLDOWN:
			o->fg.drilldown = optarg;
			break;
		case OPT_ARGS:
			vec_push(&o->fg.args, optarg);
			break;
		case OPT_RETS:
			vec_push(&o->fg.rets, optarg);
			break;
		case OPT_SUMMARY:
			o->fg.summary = true;
			break;
		case OPT_INTERVAL:
			o->fg.interval = optarg;
			break;
		case OPT_NO_COLOR:
			o->fg.no_color = true;
			break;
		case OPT_NO_ONCPU:
			o->fg.no_oncpu = true;
			break;
		case OPT_OTLP:
			o->otlp = o->fg.otlp = true;
			o->otlp_url = optarg;
			break;
		case OPT_NO_WARNINGS:
			diag_set_warnings(false);
			break;
		case OPT_INCLUDE:
			vec_push(&o->includes, optarg);
			break;
		case OPT_EXCLUDE:
			vec_push(&o->fg.excludes, optarg);
			break;
		case OPT_PROBE_FILTER:
			o->probe_filter = optarg;
			break;
		case OPT_MAX_OVERHEAD:
			if (parse_percent(optarg, &o->max_overhead))
				return -EINVAL;
			break;
		case 'I':
			vec_push(&o->include_dirs, optarg);
			break;
		case OPT_INFO:
			info_report(stdout, GT_VERSION);
			exit(0);
		case 'q':
			o->quiet = true;
			break;
		case 'k': /* -k, -kk */
			o->helper_checks = o->helper_checks < 2 ? o->helper_checks + 1 : 2;
			break;
		case 'B':
			if (set_buffering(optarg))
				return -EINVAL;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("gotrace v%s\n", GT_VERSION);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	int rest = optind;
	/* getopt took a `--` of its own: what follows may hold named parameters */
	bool dashdash = rest > 1 && !strcmp(argv[rest - 1], "--");
	if (o->list_mode) {
		/* -l PATTERN may be followed by more options: -l 'main.*' -b ./prog */
		if (rest < argc)
			o->list = argv[rest++];
		if (rest < argc) {
			diag_fatal("-l takes one pattern");
			return -EINVAL;
		}
		return 0;
	}
	if (o->fg.patterns.n) {
		/* call-graph mode: the program is generated; one optional BINARY, which may be
		 * followed by more options */
		if (o->program) {
			diag_fatal("--funcgraph generates the program: -e cannot be used with it");
			return -EINVAL;
		}
		if (rest < argc)
			o->script_path = argv[rest++]; /* the BINARY, kept here until main */
		if (rest < argc) {
			diag_fatal("--funcgraph takes one BINARY, got '%s' too", argv[rest]);
			return -EINVAL;
		}
		if (o->script_path && (o->cmd || o->pid || o->binary)) {
			diag_fatal("--funcgraph: give the target once: -c, -p or a BINARY path");
			return -EINVAL;
		}
		if (o->script_path)
			o->binary = o->script_path;
		o->script_path = NULL;
		o->fg.verbose = o->verbose;
	} else if (o->fg.drilldown || o->fg.args.n || o->fg.rets.n || o->fg.no_color ||
		   o->fg.summary || o->fg.interval || o->fg.no_oncpu) {
		diag_fatal("--drilldown, --args, --rets, --summary, --interval, --no-color and "
			   "--no-oncpu need --funcgraph");
		return -EINVAL;
	} else if (o->fg.chrome) {
		diag_fatal("-f chrome writes the calls of --funcgraph: "
			   "give it --funcgraph PATTERN");
		return -EINVAL;
	}

	if (!o->program && !o->fg.patterns.n) {
		if (rest >= argc) {
			usage(stderr);
			return -EINVAL;
		}
		o->script_path = argv[rest++];
	}
	/* as current bpftrace: positional parameters before and after a `--`, and after it
	 * --NAME[=VALUE] for getopt() */
	for (int i = rest; i < argc; i++) {
		if (!strcmp(argv[i], "--") && !dashdash)
			dashdash = true;
		else if (dashdash && !strncmp(argv[i], "--", 2) && argv[i][2])
			vec_push(&o->named, argv[i] + 2);
		else
			vec_push(&o->posargs, argv[i]);
	}
	if (o->cmd && o->pid) {
		diag_fatal("-c and -p cannot be used together");
		return -EINVAL;
	}
	if (o->max_overhead > 0 && !o->cmd && !o->pid) {
		diag_fatal("--max-overhead weighs the probes against the traced process's CPU "
			   "time: give it -c CMD or -p PID");
		return -EINVAL;
	}
	return 0;
}

static char *read_file(const char *path)
{
	/* "-": the script comes on stdin, as in bpftrace */
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	if (!f) {
		diag_fatal("failed to open file '%s': %s", path, strerror(errno));
		return NULL;
	}
	struct strbuf sb = {0};
	bool bad = strbuf_read(&sb, f, SIZE_MAX) != 0;
	if (f != stdin)
		fclose(f);
	if (bad) {
		diag_fatal("%s: %s", path, strerror(EIO));
		strbuf_free(&sb);
		return NULL;
	}
	if (!sb.buf)
		strbuf_puts(&sb, "");
	return sb.buf;
}

/* Splits -c 'CMD ARGS' on blanks, honouring single and double quotes. */
static char **split_command(const char *cmd)
{
	VEC(char *) v = {0};
	struct strbuf cur = {0};
	bool in_word = false;
	char quote = 0;
	for (const char *p = cmd;; p++) {
		char ch = *p;
		if (!ch || (!quote && (ch == ' ' || ch == '\t'))) {
			if (in_word) {
				vec_push(&v, xstrdup(cur.buf ? cur.buf : ""));
				strbuf_free(&cur);
				in_word = false;
			}
			if (!ch)
				break;
			continue;
		}
		in_word = true;
		if (quote && ch == quote)
			quote = 0;
		else if (!quote && (ch == '\'' || ch == '"'))
			quote = ch;
		else if (ch == '\\' && quote != '\'' && p[1])
			strbuf_putc(&cur, *++p);
		else
			strbuf_putc(&cur, ch);
	}
	vec_push(&v, NULL);
	return v.v;
}

static void free_argv(char **argv)
{
	if (!argv)
		return;
	for (char **p = argv; *p; p++)
		free(*p);
	free(argv);
}

/* argv[0] of -c resolved like execvp would, so it is also the default target. */
static char *resolve_command(const char *name)
{
	if (strchr(name, '/'))
		return xstrdup(name);
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *colon = strchr(path, ':');
		size_t len = colon ? (size_t)(colon - path) : strlen(path);
		char cand[PATH_MAX];
		snprintf(cand, sizeof(cand), "%.*s/%s", (int)len, len ? path : ".", name);
		if (access(cand, X_OK) == 0)
			return xstrdup(cand);
		path += len + (colon ? 1 : 0);
	}
	return xstrdup(name);
}

static int str_len_from_env(void)
{
	const char *s = gt_getenv("STRLEN");
	if (!s)
		return 64;
	long v = strtol(s, NULL, 10);
	if (v < 8)
		v = 8;
	if (v > 1024)
		v = 1024;
	return (int)v;
}

/* Everything that changes the compiled object: gotrace itself, the kernel and its
 * features, the options sema took, the targets, the script and what it imports (cache.c
 * compares it all). */
static void cache_key_of(struct cache_key *k, const struct options *o,
			 const struct sema_options *so, const struct sema_result *sr,
			 const struct gt_plan *plan, const struct diag_src *src,
			 const struct ast_node *prog)
{
	struct utsname u;
	const char *why, *env;
	char exe[PATH_MAX];
	cache_key_add(k, "gotrace", "%s", GT_VERSION);
	if (realpath("/proc/self/exe", exe))
		cache_key_file(k, "exe", exe);
	cg_load_module_path(exe, sizeof(exe)); /* the code generator is built apart */
	cache_key_file(k, "codegen", exe);
	if (!uname(&u))
		cache_key_add(k, "kernel", "%s %s", u.release, u.version);
	cache_key_file(k, "btf", "/sys/kernel/btf/vmlinux");
	cache_key_add(k, "attach", "%d", (int)rt_attach_path(&why));
	env = getenv("GT_HIDE_FEATURES");
	cache_key_add(k, "hide", "%s", env ? env : "");
	cache_key_add(k, "options", "strlen=%d k=%d unsafe=%d funcgraph=%d oncpu=%d logs=%d",
		      so->str_len, so->helper_checks, so->unsafe, so->funcgraph,
		      so->funcgraph_oncpu, so->log_meta);
	for (int i = 0; i < so->nposargs; i++)
		cache_key_add(k, "arg", "%s", so->posargs[i]);
	for (int i = 0; i < so->nnamed; i++)
		cache_key_add(k, "named", "%s", so->named[i]);
	for (int i = 0; i < so->nexcludes; i++)
		cache_key_add(k, "exclude", "%s", so->excludes[i]);
	for (int i = 0; i < sr->ntargets; i++)
		cache_key_file(k, "target", binfo_path(sr->targets[i]));
	if (so->default_target && !strncmp(so->default_target, "/proc/", 6))
		cache_key_file(k, "target0", so->default_target);
	else
		cache_key_add(k, "target0", "%s", so->default_target ? so->default_target : "");
	/* fentry:bpf: which loaded programs, typed from which BTF (ids are not reused) */
	for (int i = 0; i < plan->nprogs; i++)
		if (plan->progs[i].bpf_prog_id)
			cache_key_add(k, "bpfprog", "%u %u %s", plan->progs[i].bpf_prog_id,
				      plan->progs[i].bpf_btf_id,
				      plan->sites[plan->progs[i].site_begin].func);
	cache_key_add(k, "probe-filter", "%s", o->probe_filter ? o->probe_filter : "");
	/* tseries()'s clock: the map BPFTRACE_DUMMY_TS_MAP names, or the kernel's (-1) */
	for (int i = 0; i < plan->nmaps; i++)
		if (plan->maps[i].kind == PLAN_MAP_TSERIES)
			cache_key_add(k, "tseries-clock", "%d %d", i, plan->maps[i].ts_map);
	/* the name too: the object's line info (-d jit) names the script */
	cache_key_add(k, "script", "%s\n%s", src->name, src->text);
	for (int i = 0; i < prog->u.program.nsources; i++)
		cache_key_add(k, "import", "%s\n%s", prog->u.program.sources[i]->name,
			      prog->u.program.sources[i]->text);
}

/* #include runs the C preprocessor over files the key does not hold */
static bool includes_headers(const struct diag_src *src, const struct ast_node *prog)
{
	bool inc = strstr(src->text, "#include") != NULL;
	for (int i = 0; i < prog->u.program.nsources; i++)
		inc |= strstr(prog->u.program.sources[i]->text, "#include") != NULL;
	return inc;
}

/* Does the script fit the program at PATH: parse and check it again against PATH,
 * silently (a followed -c tries each program its command runs). */
struct fits_ctx {
	const struct diag_src *src;
	const struct sema_options *so;
};

/* sema_options.uprobe_stack_has_caller: what this kernel does, tried by the runtime */
static bool stack_has_caller(void)
{
	return rt_uprobe_stack_has_caller(env_flag("GT_PROBE_STACK_CALLER"));
}

static bool script_fits(void *vctx, const char *path)
{
	struct fits_ctx *c = vctx;
	FILE *null = fopen("/dev/null", "w");
	if (!null)
		return false;
	diag_set_stream(null);
	struct arena *a = arena__new();
	struct ast_node *p = parse_program(a, c->src);
	struct gt_plan plan = {0};
	struct sema_result sr = {0};
	struct sema_options so = *c->so;
	so.default_target = path;
	bool ok = p && !sema_check(a, c->src, p, &so, &plan, &sr);
	sema_result_free(&sr);
	free(plan.obj);
	arena__free(a);
	diag_set_stream(NULL);
	fclose(null);
	return ok;
}

static void follow_started(void *ctx)
{
	follow__resume(ctx);
}

static void follow_tick(void *ctx)
{
	follow__poll(ctx);
}

/* A SIGINT or SIGTERM before tracing began: the run ends here, as it would have ended
 * by that signal later (status 0), with nothing attached. */
static bool stopped(const struct options *o)
{
	int sig = stopsig_pending();
	if (sig && o->verbose)
		diag_print(DIAG_INFO, "stopping: %s, before tracing began", strsignal(sig));
	return sig != 0;
}

/* --otlp's exporter, its resource named after the traced binary. */
static struct otlp *otlp_start(const struct options *o, const struct sema_result *sr,
			       const char *target)
{
	char exe[PATH_MAX];
	/* absolute; a followed program's /proc/PID/exe: the program's own path; no target
	 * (kernel probes only): OpenTelemetry's unknown_service:NAME */
	if (target && !realpath(target, exe))
		snprintf(exe, sizeof(exe), "%s", target);
	struct otlp_options oo = {
		.url = o->otlp_url,
		.exe_path = target ? exe : NULL,
		.go_version = sr->ntargets ? binfo_go_version(sr->targets[0]) : NULL,
		.quiet = o->quiet,
	};
	int err;
	return otlp__new(&oo, &err);
}

int main(int argc, char **argv)
{
	struct options o = {0};
	int status = EXIT_USAGE;
	char *text = NULL, *target = NULL;
	char **child_argv = NULL;
	struct arena *arena = NULL;
	struct gt_plan plan = {0};
	struct sema_result sr = {0};
	struct ast_node *prog = NULL;
	struct funcgraph *fg = NULL;
	struct symbols *syms = NULL;
	struct stopsig_save inherited = {0};
	struct follow *fol = NULL; /* -c followed into a program it runs */
	pid_t followed = 0;
	struct binfo_store bstore;
	struct cache *bcache = NULL; /* binfo's indexes of the binaries (--no-cache: none) */
	struct otlp *otlp = NULL;    /* --otlp's exporter */

	/* First of all: from here on a Ctrl-C is kept and ends the run at the next stage
	 * (rt_run honours one that came before it), even in a background job that started
	 * with SIGINT ignored. */
	stopsig_install(&inherited);
	if (parse_args(argc, argv, &o))
		goto out;
	char *bwhy = NULL;
	if (!o.no_cache && (bcache = cache_open(&bwhy))) {
		cache_binfo_store(bcache, &bstore);
		binfo_set_store(&bstore);
	}
	free(bwhy);
	if (o.cmd) {
		child_argv = split_command(o.cmd);
		if (!child_argv[0]) {
			diag_fatal("-c needs a command");
			goto out;
		}
		char *resolved = resolve_command(child_argv[0]);
		free(child_argv[0]);
		child_argv[0] = resolved;
	}
	if (o.binary)
		target = xstrdup(o.binary);
	else if (child_argv)
		target = xstrdup(child_argv[0]);
	else if (o.pid) {
		target = target_pid_program(o.pid);
		if (!target || target_same_program(o.pid, o.more_pids, o.nmore_pids)) {
			status = EXIT_RUNTIME;
			goto out;
		}
	}
	if (o.list_mode) {
		/* -l has nothing to end cleanly: a Ctrl-C just ends it, as before */
		stopsig_restore(&inherited);
		if (stopsig_pending()) {
			status = 0;
			goto out;
		}
		/* -l -e PROGRAM, -l SCRIPT.bt: the probes of that program (current bpftrace) */
		size_t ll = o.list ? strlen(o.list) : 0;
		bool script = ll > 3 && (!strcmp(o.list + ll - 3, ".bt") ||
					 !strcmp(o.list + ll - 3, ".gt"));
		if (script && access(o.list, F_OK) && errno == ENOENT) {
			diag_print(DIAG_WARNING,
				   "It appears that '%s' is a filename but the file does not "
				   "exist. Treating '%s' as a search pattern.", o.list, o.list);
			script = false;
		}
		if ((o.program && !o.list) || script) {
			text = script ? read_file(o.list) : xstrdup(o.program);
			status = !text || list_program(text, script ? o.list : NULL, target,
						       o.verbose) ? EXIT_USAGE : 0;
			goto out;
		}
		status = list_probes(o.list, target, o.verbose) ? EXIT_USAGE : 0;
		goto out;
	}

	if (o.fg.patterns.n) {
		fg = funcgraph_new(&o.fg, target);
		if (!fg)
			goto out;
		text = xstrdup(funcgraph_program(fg));
	} else {
		text = o.program ? xstrdup(o.program) : read_file(o.script_path);
	}
	if (!text)
		goto out;
	bool stdin_text = !fg && (o.program || !strcmp(o.script_path, "-"));
	struct diag_src src = {
		.name = fg ? "funcgraph" : stdin_text ? "stdin" : o.script_path,
		.text = text,
		.origin = fg ? DIAG_SRC_GENERATED : stdin_text ? DIAG_SRC_TEXT : DIAG_SRC_FILE,
	};
	arena = arena__new();
	uint64_t t0 = now_ns();
	prog = parse_program(arena, &src);
	if (!prog || sema_config_apply(arena, &src, prog) ||
	    ast_probe_params(arena, &src, prog, o.posargs.v, o.posargs.n) ||
	    (o.probe_filter && ast_filter_probes(prog, o.probe_filter)))
		goto out;
	if (o.dump_ast)
		ast_dump(stdout, prog);
	if (o.parse_only || stopped(&o)) {
		status = 0;
		goto out;
	}
	uint64_t t1 = now_ns();

	if (o.profile == RT_PROFILE_PPROF && !o.output) {
		diag_fatal("-f pprof writes a binary file: give it with -o FILE");
		goto out;
	}
	struct sema_options so = {
		.default_target = target,
		.posargs = o.posargs.v,
		.nposargs = o.posargs.n,
		.named = o.named.v,
		.nnamed = o.named.n,
		.helper_checks = o.helper_checks,
		.includes = o.includes.v,
		.nincludes = o.includes.n,
		.excludes = o.fg.excludes.v,
		.nexcludes = o.fg.excludes.n,
		.include_dirs = o.include_dirs.v,
		.ninclude_dirs = o.include_dirs.n,
		.unsafe = o.unsafe,
		.child = child_argv != NULL,
		.str_len = str_len_from_env(),
		.funcgraph = fg != NULL,
		.funcgraph_oncpu = fg != NULL && !o.fg.no_oncpu,
		.log_meta = o.otlp && !fg,
		.uprobe_stack_has_caller = stack_has_caller,
	};
	/* -c go test, go run, a wrapper: the program to trace is one the command runs */
	if (child_argv && !fg && !o.dry_run) {
		struct fits_ctx fc = {&src, &so};
		struct fcmd_fit fit = {script_fits, &fc};
		if (fcmd_should_follow(child_argv[0], o.binary, &fit)) {
			int st = 0;
			int err = fcmd_find(child_argv, o.binary, &fit, o.verbose, &fol, &followed,
					    &st);
			if (err) {
				status = err == -EINTR ? 0 : st ? st : EXIT_RUNTIME;
				goto out;
			}
			free(target);
			target = xasprintf("/proc/%d/exe", (int)followed);
			so.default_target = target;
			if (o.verbose)
				diag_print(DIAG_INFO, "-c: tracing pid %d, which %s runs", (int)followed,
					   child_argv[0]);
		}
	}
	if (sema_check(arena, &src, prog, &so, &plan, &sr))
		goto out;
	/* samples in the kernel are unwound from the task's user regs where it can */
	if (plan.nunwind)
		plan.unwind_rt.task_regs = rt_can_read_task_regs();
	if (o.profile && !rt_profile_has_stacks(&plan)) {
		diag_fatal("-f %s writes maps keyed by a stack, and no map is: store one such as "
			   "@[ustack] = count()", o.profile == RT_PROFILE_PPROF ? "pprof" : "folded");
		goto out;
	}
	if (o.dump_sites)
		sema_dump_sites(stdout, &plan);
	if (o.dump_types)
		sema_dump_types(stdout, prog);
	if (stopped(&o)) {
		status = 0;
		goto out;
	}
	uint64_t t2 = now_ns();

	/* the compiled object of an identical run, when the cache has it: no LLVM */
	bool cacheable = !o.no_cache && !o.dump_ir && !o.dump_bpf && !o.includes.n &&
			 !includes_headers(&src, prog);
	struct cache_key ck = {0};
	struct cache *cache = NULL;
	char *distrust = NULL; /* why a cache another user could write is not used */
	bool hit = false;
	if (cacheable && (cache = cache_open(&distrust))) {
		cache_key_of(&ck, &o, &so, &sr, &plan, &src, prog);
		if (cache_lookup(cache, &ck, &plan.obj, &plan.obj_size, &distrust) == -EPERM) {
			cache_close(cache);
			cache = NULL;
		}
		hit = plan.obj != NULL;
	}
	struct cg_options co = {.dump_ir = o.dump_ir, .dump_bpf = o.dump_bpf, .verbose = o.verbose};
	if (!hit && cg_load_generate(&src, &sr, &plan, &co)) {
		cache_key_free(&ck);
		cache_close(cache);
		free(distrust);
		goto out;
	}
	if (cache && !hit)
		cache_store(cache, &ck, plan.obj, plan.obj_size);
	cache_key_free(&ck);
	cache_close(cache);
	uint64_t t3 = now_ns();
	if (o.verbose && distrust)
		diag_print(DIAG_INFO, "cache: not used: %s", distrust);
	else if (o.verbose)
		diag_print(DIAG_INFO, "cache: %s", !cacheable ? "not used" : hit ? "hit, LLVM not run"
								   : "miss, the object stored");
	free(distrust);
	if (o.verbose)
		diag_print(DIAG_INFO,
			   "%d site(s), %d program(s), %d event kind(s); parse %.2f ms, sema %.2f ms, "
			   "codegen (or cache) %.2f ms, object %zu bytes",
			   plan.nsites, plan.nprogs, plan.nevents, (t1 - t0) / 1e6, (t2 - t1) / 1e6,
			   (t3 - t2) / 1e6, plan.obj_size);
	fflush(stdout);

	syms = symbols__new(sr.targets, sr.ntargets, target);
	if (o.verbose) /* FILE:LINE on every frame: kernel frames' too */
		symbols_kernel_lines(syms);
	struct rt_symbolizer rsym = symbols_rt(syms);
	struct rt_options ro = {
		.sym = &rsym,
		.child_argv = child_argv,
		.pid = o.pid,
		.more_pids = o.more_pids,
		.nmore_pids = o.nmore_pids,
		.output_path = o.profile ? NULL : o.output, /* -f folded/pprof: -o is the profile */
		.json = o.json,
		.profile = o.profile,
		.profile_path = o.profile ? o.output : NULL,
		.verbose = o.verbose,
		.quiet = o.quiet,
		.src = &src,
		.dry_run = o.dry_run,
		.dump_jit = o.dump_jit,
		.max_overhead = o.max_overhead,
	};
	if (fol) {
		ro.child_argv = NULL;
		ro.pid = followed;
		ro.follow_root = follow__root(fol);
		ro.started = follow_started;
		ro.tick = follow_tick;
		ro.hook_ctx = fol;
	}
	plan.filter_pid = ro.pid;
	if (o.otlp && !o.dry_run && !(otlp = otlp_start(&o, &sr, target))) {
		status = EXIT_USAGE;
		goto out;
	}
	if (otlp && fg)
		funcgraph_set_otlp(fg, otlp);
	ro.otlp = otlp;
	ro.consumer = fg ? funcgraph_consumer(fg, &plan) : NULL;
	status = rt_run(&plan, &ro);
	otlp__free(otlp); /* what the consumer's finish batched is sent first */
	otlp = NULL;
out:
	otlp__free(otlp);
	binfo_set_store(NULL);
	cache_close(bcache);
	follow__free(fol); /* lets anything it held run */
	symbols__free(syms);
	funcgraph_free(fg);
	fg_options_free(&o.fg);
	vec_free(&o.includes);
	vec_free(&o.include_dirs);
	vec_free(&o.posargs);
	vec_free(&o.named);
	sema_result_free(&sr);
	free(plan.obj);
	if (arena)
		arena__free(arena);
	free(text);
	free(target);
	free_argv(child_argv);
	return status;
}
