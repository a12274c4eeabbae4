/* load: open the plan's BPF object, give each program its type, run the verifier, and
 * turn a rejection into one line that names the script line of the probe. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common/diag.h"
#include "common/util.h"
#include "runtime/attach/attach.h"
#include "runtime/load/load.h"

/* Per program. The kernel keeps the tail of the log when it overflows (rotating log since
 * 6.4), and the tail is where the error is. calloc'd: pages of a buffer are touched only
 * when its program fails to load. */
#define RT_LOG_SIZE (1u << 20)
/* Lines of the log shown with -v on a rejection. */
#define RT_LOG_TAIL_LINES 60

/* libbpf has one global print callback and no context pointer. */

/* The running kernel is MAJ.MIN or later (uname's release). */
static bool kernel_at_least(int maj, int min)
{
	struct utsname u;
	int a = 0, b = 0;
	if (uname(&u) || sscanf(u.release, "%d.%d", &a, &b) != 2)
		return false;
	return a > maj || (a == maj && b >= min);
}

static bool rt_verbose;
static libbpf_print_fn_t rt_prev_print;
static bool rt_print_installed;

static int rt_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* Silent by default: every failure that matters gets our own one-line error. With -v
	 * warnings only: libbpf's info lines (".eh_frame skipped") are noise to a user. */
	if (!rt_verbose || level != LIBBPF_WARN)
		return 0;
	/* One funnel for every message: libbpf's lines end in '\n', diag_print adds it. */
	struct strbuf sb = {0};
	strbuf_vprintf(&sb, fmt, ap);
	int n = (int)sb.len;
	if (sb.len && sb.buf[sb.len - 1] == '\n')
		sb.buf[--sb.len] = 0;
	diag_print(DIAG_PLAIN, "%s", sb.buf ? sb.buf : "");
	strbuf_free(&sb);
	return n;
}

void rt_libbpf_print_init(bool verbose)
{
	rt_verbose = verbose;
	rt_prev_print = libbpf_set_print(rt_libbpf_print);
	rt_print_installed = true;
}

void rt_libbpf_print_restore(void)
{
	if (rt_print_installed)
		libbpf_set_print(rt_prev_print);
	rt_print_installed = false;
}

/* Lines the verifier appends after the error, which say nothing about the cause. */
static bool log_line_is_noise(const char *l, size_t n)
{
	static const char *const noise[] = {
		"processed ", "verification time ", "stack depth ", "max_states_per_insn",
		"-- ", "Validating ", "Func#", "func#",
	};
	while (n && (*l == ' ' || *l == '\t')) {
		l++;
		n--;
	}
	if (!n)
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(noise); i++)
		if (n >= strlen(noise[i]) && !strncmp(l, noise[i], strlen(noise[i])))
			return true;
	return false;
}

/* Copies the last meaningful line of the verifier log into out. */
static void log_last_reason(const char *log, char *out, size_t outsz)
{
	const char *end = log + strlen(log);
	out[0] = 0;
	while (end > log) {
		const char *e = end;
		while (e > log && e[-1] == '\n')
			e--;
		const char *b = e;
		while (b > log && b[-1] != '\n')
			b--;
		if (b == e)
			break;
		if (!log_line_is_noise(b, (size_t)(e - b))) {
			size_t n = (size_t)(e - b);
			if (n >= outsz)
				n = outsz - 1;
			memcpy(out, b, n);
			out[n] = 0;
			return;
		}
		end = b;
	}
}

static void log_print_tail(const char *log, const char *prog_name)
{
	const char *p = log + strlen(log);
	int lines = 0;
	while (p > log && lines <= RT_LOG_TAIL_LINES) {
		p--;
		if (*p == '\n' && p[1])
			lines++;
	}
	if (p > log)
		p = strchr(p, '\n') + 1;
	size_t n = strlen(p);
	if (n && p[n - 1] == '\n')
		n--; /* diag_print ends the message */
	diag_print(DIAG_INFO, "verifier log of program '%s'%s:\n%.*s", prog_name,
		   p > log ? " (tail)" : "", (int)n, p);
}

static int plan_prog_index(const struct rt_session *s, const struct bpf_program *prog)
{
	for (int i = 0; i < s->plan->nprogs; i++)
		if (s->progs[i] == prog)
			return i;
	return -1;
}

/* Says why bpf_object__load failed: a verifier rejection (log present) or anything else. */
static void report_load_failure(struct rt_session *s, int err)
{
	char reason[512];
	int i;

	/* libbpf unloads every program after a failure, so fds say nothing. It loads without
	 * a log first and retries at level 1 only the program that failed: the one log that
	 * is not empty is the rejected program's. */
	for (i = 0; i < s->plan->nprogs; i++)
		if (s->log_bufs[i][0])
			break;
	if (i == s->plan->nprogs) {
		bool bpf_fentry = false;
		for (int j = 0; j < s->plan->nprogs; j++)
			bpf_fentry |= s->plan->progs[j].bpf_prog_id != 0;
		/* as kfunc: where the kernel refuses fentry on its functions (attach/features.c) */
		if (bpf_fentry && err == -EPERM)
			diag_fatal("this kernel refuses fentry programs on BPF programs: fentry:bpf: "
				   "and fexit:bpf: probes cannot attach");
		else
			diag_fatal("cannot load the BPF object: %s", strerror(-err));
		return;
	}
	const char *log = s->log_bufs[i];
	const char *name = s->plan->progs[i].fn_name;
	if (s->opts->verbose)
		log_print_tail(log, name);
	if (strlen(log) >= RT_LOG_SIZE - 1)
		/* full: a kernel before 6.4 keeps a log's start, its last line is cut anywhere */
		snprintf(reason, sizeof(reason),
			 "its log filled %u MiB before the verifier said why (a kernel before 6.4 "
			 "keeps the start of a log)", RT_LOG_SIZE >> 20);
	else
		log_last_reason(log, reason, sizeof(reason));
	/* write_user(): the helper exists, and only lockdown takes it away from root */
	if (strstr(reason, "cannot use helper bpf_probe_write_user"))
		snprintf(reason + strlen(reason), sizeof(reason) - strlen(reason), "%s",
			 " (write_user(): the kernel's lockdown, integrity or confidentiality, "
			 "forbids writing user memory from BPF)");
	int line = s->plan->progs[i].clause_line;
	if (line > 0)
		diag_fatal("the BPF verifier rejected the program for the probe at line %d: %s",
			   line, reason[0] ? reason : strerror(-err));
	else
		diag_fatal("the BPF verifier rejected program '%s': %s", name,
			   reason[0] ? reason : strerror(-err));
}

static int find_map_fd(struct rt_session *s, const char *name, bool required)
{
	struct bpf_map *map = bpf_object__find_map_by_name(s->obj, name);
	if (!map) {
		if (required)
			diag_fatal("internal error: the BPF object has no map %s", name);
		else if (s->opts->verbose)
			diag_print(DIAG_INFO, "the BPF object has no map %s", name);
		return required ? -ENOENT : -1;
	}
	return bpf_map__fd(map);
}

/* fentry:bpf: the program of PLAN_PROG I is fixed at load to a function of the loaded
 * program bpf_prog_id, by an fd of it, held until the load is over. */
static int target_prog_fd(struct rt_session *s, int i)
{
	const struct plan_prog *pp = &s->plan->progs[i];
	if (!s->target_fds) {
		s->target_fds = xcalloc((size_t)s->plan->nprogs, sizeof(*s->target_fds));
		for (int j = 0; j < s->plan->nprogs; j++)
			s->target_fds[j] = -1;
	}
	s->target_fds[i] = bpf_prog_get_fd_by_id(pp->bpf_prog_id);
	if (s->target_fds[i] < 0) {
		int err = -errno;
		diag_fatal("cannot attach %s: %s", s->plan->sites[pp->site_begin].probe,
			   err == -ENOENT ? "the BPF program is no longer loaded" : strerror(-err));
		return -ESRCH;
	}
	return 0;
}

static void close_targets(struct rt_session *s)
{
	for (int i = 0; s->target_fds && i < s->plan->nprogs; i++)
		if (s->target_fds[i] >= 0)
			close(s->target_fds[i]);
	free(s->target_fds);
	s->target_fds = NULL;
}

static int configure_programs(struct rt_session *s)
{
	struct gt_plan *plan = s->plan;
	struct bpf_program *prog;
	int err;

	s->progs = xcalloc((size_t)plan->nprogs, sizeof(*s->progs));
	s->log_bufs = xcalloc((size_t)plan->nprogs, sizeof(*s->log_bufs));
	for (int i = 0; i < plan->nprogs; i++) {
		const struct plan_prog *pp = &plan->progs[i];
		prog = bpf_object__find_program_by_name(s->obj, pp->fn_name);
		if (!prog) {
			diag_fatal("internal error: the BPF object has no program %s", pp->fn_name);
			return -ENOENT;
		}
		s->progs[i] = prog;
		/* The section name codegen picked does not matter: the plan says what runs how. */
		if (pp->kind == PLAN_PROG_UPROBE) {
			/* The attach type picks bpf_get_attach_cookie's implementation: a
			 * uprobe_multi program reads its link's cookie array, one loaded without
			 * (0) the cookie of its perf-event link. */
			err = bpf_program__set_type(prog, BPF_PROG_TYPE_KPROBE);
			if (!err)
				err = bpf_program__set_expected_attach_type(
					prog, rt_attach_path(NULL) == RT_ATTACH_MULTI
						      ? (enum bpf_attach_type)RT_ATTACH_UPROBE_MULTI
						      : (enum bpf_attach_type)0);
		} else if (pp->kind == PLAN_PROG_KPROBE) {
			err = bpf_program__set_type(prog, BPF_PROG_TYPE_KPROBE);
			if (!err)
				err = bpf_program__set_expected_attach_type(
					prog, rt_kprobe_multi(pp) ? BPF_TRACE_KPROBE_MULTI
								  : (enum bpf_attach_type)0);
		} else if (pp->kind == PLAN_PROG_FENTRY) {
			/* fentry/fexit: the function is fixed at load (its BTF id) */
			err = bpf_program__set_type(prog, BPF_PROG_TYPE_TRACING);
			if (!err)
				err = bpf_program__set_expected_attach_type(
					prog, pp->kprobe_return ? BPF_TRACE_FEXIT : BPF_TRACE_FENTRY);
			if (!err && pp->bpf_prog_id)
				err = target_prog_fd(s, i);
			if (!err)
				err = bpf_program__set_attach_target(prog, pp->bpf_prog_id ?
									 s->target_fds[i] : 0,
								     plan->sites[pp->site_begin].func);
			if (err == -ESRCH)
				return err; /* said why */
		} else if (pp->kind == PLAN_PROG_PERF) {
			err = bpf_program__set_type(prog, BPF_PROG_TYPE_PERF_EVENT);
		} else if (pp->kind == PLAN_PROG_TRACEPOINT && !pp->tp_raw) {
			err = bpf_program__set_type(prog, BPF_PROG_TYPE_TRACEPOINT);
		} else {
			/* BEGIN/END are run by BPF_PROG_TEST_RUN, which raw tracepoints support;
			 * oncpu's sched_switch is one. */
			err = bpf_program__set_type(prog, BPF_PROG_TYPE_RAW_TRACEPOINT);
			if (!err)
				err = bpf_program__set_expected_attach_type(prog, 0);
		}
		/* Log level stays 0: libbpf loads without a log first and, only on failure,
		 * retries at level 1 into this buffer. A level-1 log of a large program that
		 * verifies would otherwise fail the load with ENOSPC. */
		s->log_bufs[i] = xcalloc(1, RT_LOG_SIZE);
		if (!err)
			err = bpf_program__set_log_buf(prog, s->log_bufs[i], RT_LOG_SIZE);
		if (err) {
			diag_fatal("internal error: cannot configure BPF program %s: %s", pp->fn_name,
				   strerror(-err));
			return err;
		}
	}
	/* Anything else in the object has no kind, and libbpf would refuse to load it. */
	bpf_object__for_each_program(prog, s->obj)
	{
		if (plan_prog_index(s, prog) >= 0)
			continue;
		if (s->opts->verbose)
			diag_print(DIAG_INFO, "BPF program %s is not in the plan, not loaded",
				   bpf_program__name(prog));
		bpf_program__set_autoload(prog, false);
	}
	return 0;
}

static void free_logs(struct rt_session *s)
{
	for (int i = 0; s->log_bufs && i < s->plan->nprogs; i++)
		free(s->log_bufs[i]);
	free(s->log_bufs);
	s->log_bufs = NULL;
}

int rt_session__load(struct rt_session *s)
{
	LIBBPF_OPTS(bpf_object_open_opts, open_opts, .object_name = "gotrace");
	uint64_t t0 = now_ns();
	int err;

	s->obj = bpf_object__open_mem(s->plan->obj, s->plan->obj_size, &open_opts);
	if (!s->obj) {
		err = -errno;
		diag_fatal("cannot open the BPF object: %s", strerror(-err));
		return err;
	}
	err = configure_programs(s);
	if (err) {
		close_targets(s);
		return err;
	}
	/* The ring buffer's room grows with the CPUs that fill it: 512 KiB each (1 MiB at
	 * least, 16 MiB at most; a power of 2). The consumer drains it every 5 ms at most; a
	 * CPU hitting uprobes (~10 us each) writes ~500 records in that time. Zeroing and
	 * mapping 4 MiB cost ~1 ms of a warm one-liner's ~45 ms on 2 CPUs. */
	struct bpf_map *events = bpf_object__find_map_by_name(s->obj, PLAN_MAP_EVENTS);
	if (events) {
		int ncpu = libbpf_num_possible_cpus();
		uint32_t size = 1u << 20;
		while (size < (1u << 24) && ncpu > 0 && size < (uint32_t)ncpu * (512u << 10))
			size <<= 1;
		bpf_map__set_max_entries(events, size);
	}
	/* The unwound stacks' hash maps (one per ustack map): allocated as stacks come, not
	 * all up front (16.6 MB zeroed at start-up), where the kernel lets a perf-event
	 * program use such a map (6.1: bpf_mem_alloc). */
	if (kernel_at_least(6, 1)) {
		struct bpf_map *m;
		bpf_object__for_each_map(m, s->obj) {
			const char *n = bpf_map__name(m);
			size_t ln = strlen(n), ls = strlen(GT_UNWIND_SUFFIX);
			if (ln > ls && !strcmp(n + ln - ls, GT_UNWIND_SUFFIX) &&
			    bpf_map__type(m) == BPF_MAP_TYPE_HASH)
				bpf_map__set_map_flags(m, bpf_map__map_flags(m) | BPF_F_NO_PREALLOC);
		}
	}
	/* tracefs events find each event's site by address (attach/attach_tracefs.c) */
	struct bpf_map *sites = bpf_object__find_map_by_name(s->obj, GT_MAP_SITES);
	if (sites && s->plan->nsites > 0 && rt_attach_path(NULL) == RT_ATTACH_TRACEFS)
		bpf_map__set_max_entries(sites, (uint32_t)s->plan->nsites);
	err = bpf_object__load(s->obj);
	close_targets(s); /* a loaded fentry program holds its target itself */
	if (err) {
		report_load_failure(s, err);
		return err;
	}

	s->events_fd = find_map_fd(s, PLAN_MAP_EVENTS, s->plan->nevents > 0);
	if (s->events_fd == -ENOENT)
		return -ENOENT;
	s->lost_fd = find_map_fd(s, PLAN_MAP_LOST, false);
	s->config_fd = find_map_fd(s, PLAN_MAP_CONFIG, false);
	if (s->lost_fd >= 0) {
		struct bpf_map *m = bpf_object__find_map_by_name(s->obj, PLAN_MAP_LOST);
		s->lost_percpu = bpf_map__type(m) == BPF_MAP_TYPE_PERCPU_ARRAY;
		if (bpf_map__value_size(m) != sizeof(uint64_t)) {
			diag_fatal("internal error: map %s has values of %u bytes, not 8",
				   PLAN_MAP_LOST, bpf_map__value_size(m));
			return -EINVAL;
		}
	}
	if (s->config_fd >= 0) {
		struct bpf_map *m = bpf_object__find_map_by_name(s->obj, PLAN_MAP_CONFIG);
		if (bpf_map__value_size(m) < sizeof(struct plan_config)) {
			diag_fatal("internal error: map %s has values of %u bytes, want %zu",
				   PLAN_MAP_CONFIG, bpf_map__value_size(m), sizeof(struct plan_config));
			return -EINVAL;
		}
	}
	if (s->opts->verbose)
		diag_print(DIAG_INFO, "loaded %d programs (verifier) in %.1f ms", s->plan->nprogs,
			   (double)(now_ns() - t0) / 1e6);
	free_logs(s); /* only needed while loading */
	return 0;
}

void rt_session__unload(struct rt_session *s)
{
	bpf_object__close(s->obj); /* NULL-safe; closes program and map fds */
	s->obj = NULL;
	free(s->progs);
	s->progs = NULL;
	free_logs(s);
	close_targets(s);
	s->events_fd = s->lost_fd = s->config_fd = -1;
}
