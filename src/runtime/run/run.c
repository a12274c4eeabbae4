/* run: rt_run(), the whole life of a trace:
 *   load (verifier) -> [dry run stops here] -> ring buffer, signal handlers -> fork the
 *   -c child (held before execve) -> gt_config -> attach -> BEGIN -> drain -> release the
 *   child -> poll loop -> detach -> drain -> END -> drain -> lost events -> stop the child.
 * Every exit path, error or not, goes through one cleanup, so nothing stays attached
 * (the links are fds: even a crash detaches them, but not a -c child). */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "common/diag.h"
#include "common/stopsig.h"
#include "common/util.h"
#include "runtime/attach/attach.h"
#include "runtime/load/load.h"
#include "runtime/otlp/otlp.h"
#include "runtime/output/output.h"
#include "runtime/profile/profile.h"
#include "runtime/session/session.h"

#define RT_POLL_MS 100
/* After a wakeup that brought records, wait this long before polling again. The ring
 * buffer wakes the consumer only when it has caught up, so while we sleep the producers
 * append without wakeups: measured on this VM, a wakeup per record costs 2-8 us per event
 * on top of the ~17 us uprobe trap, batching ~0.1 us. Output latency stays <= 5 ms. */
#define RT_BATCH_MS 5

struct rt_sigsave {
	struct stopsig_save stop;
	struct sigaction pipe;
	bool saved;
};

/* The stop signals are common/stopsig's, caught since main began: one that came before
 * the run is honoured here. */
static void signals_install(struct rt_sigsave *save)
{
	struct sigaction ign = {.sa_handler = SIG_IGN};
	sigemptyset(&ign.sa_mask);
	stopsig_install(&save->stop);
	/* A closed pipe on stdout ends the trace through the normal path (detach, END, reap
	 * the child) instead of killing gotrace with a -c child left running. */
	sigaction(SIGPIPE, &ign, &save->pipe);
	save->saved = true;
}

/* The run took its signal: a later run (rt_selftest makes several) starts afresh. */
static void signals_restore(struct rt_sigsave *save)
{
	if (!save->saved)
		return;
	stopsig_restore(&save->stop);
	sigaction(SIGPIPE, &save->pipe, NULL);
	stopsig_clear();
	save->saved = false;
}

/* A stop before anything was attached ends the run with nothing to print: no banner,
 * no BEGIN, no END. */
static bool stopped_early(const struct rt_options *opts)
{
	int sig = stopsig_pending();
	if (sig && opts->verbose)
		diag_print(DIAG_INFO, "stopping: %s, before tracing began", strsignal(sig));
	return sig != 0;
}

static int write_config(struct rt_session *s)
{
	if (s->config_fd < 0)
		return 0;
	struct bpf_map *m = bpf_object__find_map_by_name(s->obj, PLAN_MAP_CONFIG);
	uint8_t *val = xcalloc(1, bpf_map__value_size(m));
	/* CLOCK_MONOTONIC is the clock of bpf_ktime_get_ns(). */
	int ncpus = libbpf_num_possible_cpus();
	struct plan_config cfg = {.start_ns = now_ns(),
				  .filter_pid = (uint64_t)s->pid,
				  .ncpus = ncpus > 0 ? (uint64_t)ncpus : 1};
	for (int i = 0; s->pid && i < s->opts->nmore_pids && i < PLAN_MAX_PIDS - 1; i++)
		cfg.more_pids[i] = (uint64_t)s->opts->more_pids[i];
	uint32_t key = 0;
	memcpy(val, &cfg, sizeof(cfg));
	int err = bpf_map_update_elem(s->config_fd, &key, val, BPF_ANY);
	free(val);
	if (err) {
		diag_fatal("cannot write map %s: %s", PLAN_MAP_CONFIG, strerror(-err));
		return err;
	}
	return 0;
}

/* BEGIN has run: the probes' clauses may run from now on (plan_gate), unless BEGIN
 * called exit(). Nothing else writes the gate meanwhile: the clauses wait for it. */
static int open_gate(struct rt_session *s)
{
	if (s->config_fd < 0)
		return 0;
	struct bpf_map *m = bpf_object__find_map_by_name(s->obj, PLAN_MAP_CONFIG);
	uint8_t *val = xcalloc(1, bpf_map__value_size(m));
	uint32_t key = 0;
	uint64_t gate;
	int err = bpf_map_lookup_elem(s->config_fd, &key, val) ? -errno : 0;
	memcpy(&gate, val + 8 * PLAN_CONFIG_GATE, 8);
	if (!err && gate == PLAN_GATE_CLOSED) {
		gate = PLAN_GATE_OPEN;
		memcpy(val + 8 * PLAN_CONFIG_GATE, &gate, 8);
		err = bpf_map_update_elem(s->config_fd, &key, val, BPF_ANY) ? -errno : 0;
	}
	free(val);
	if (err)
		diag_fatal("cannot write map %s: %s", PLAN_MAP_CONFIG, strerror(-err));
	return err;
}

/* Nothing but BEGIN and END, and no process to wait for: no event can come, so the run
 * ends after BEGIN, as current bpftrace does (0.17 waited for Ctrl-C). */
static bool begin_end_only(const struct rt_session *s, const struct gt_plan *plan)
{
	if (s->pid || s->pidfd >= 0)
		return false;
	for (int i = 0; i < plan->nprogs; i++)
		if (plan->progs[i].kind != PLAN_PROG_BEGIN && plan->progs[i].kind != PLAN_PROG_END)
			return false;
	return true;
}

static void report_lost(struct rt_session *s)
{
	uint64_t total = 0;
	uint32_t key = 0;

	if (s->lost_fd < 0)
		return;
	if (s->lost_percpu) {
		int ncpu = libbpf_num_possible_cpus();
		if (ncpu <= 0)
			return;
		uint64_t *vals = xcalloc((size_t)ncpu, sizeof(*vals));
		if (!bpf_map_lookup_elem(s->lost_fd, &key, vals))
			for (int i = 0; i < ncpu; i++)
				total += vals[i];
		free(vals);
	} else if (bpf_map_lookup_elem(s->lost_fd, &key, &total)) {
		return;
	}
	if (total > s->lost_reported) {
		rt_output__lost(s->output, total - s->lost_reported);
		s->lost_reported = total;
	}
}

/* Counters of the goroutine tracking in runtime-bpf: map gt_stats indexed by enum gt_stat
 * (common/bpf_abi.h). */
static const char *const rt_go_stat_names[GT_STAT_COUNT] = {
	[GT_STAT_UNPAIRED_RETURN] = "unpaired returns",
	[GT_STAT_ABANDONED] = "abandoned frames",
	[GT_STAT_STATE_FULL] = "goroutine state map full",
	[GT_STAT_NO_G] = "g unreadable",
	[GT_STAT_GOEXIT] = "goroutine states freed",
	[GT_STAT_NO_SITE] = "events at unknown sites",
	[GT_STAT_FG_DROPPED] = "root calls dropped whole",
	[GT_STAT_ONCPU_UNSEEN] = "switches in not seen (oncpu)",
	[GT_STAT_UNREAD_TEXT] = "strings unreadable",
};

static long map_count_entries(const struct bpf_map *m)
{
	size_t ks = bpf_map__key_size(m);
	uint8_t *cur = xcalloc(2, ks), *next = cur + ks;
	int fd = bpf_map__fd(m);
	long n = 0;
	for (void *prev = NULL; !bpf_map_get_next_key(fd, prev, next); prev = cur) {
		memcpy(cur, next, ks);
		n++;
	}
	free(cur);
	return n;
}

/* -v: what the goroutine tracking saw. A full state map is reported even without -v:
 * pairing (duration, depth) was wrong for some calls then. */
static void report_go_stats(struct rt_session *s)
{
	struct bpf_map *m = bpf_object__find_map_by_name(s->obj, GT_MAP_STATS);
	struct strbuf sb = {0};
	uint64_t full = 0, dropped = 0, unread = 0;

	if (!m || bpf_map__value_size(m) != sizeof(uint64_t))
		return;
	for (uint32_t i = 0; i < bpf_map__max_entries(m) && i < ARRAY_SIZE(rt_go_stat_names); i++) {
		uint64_t v = 0;
		bpf_map_lookup_elem(bpf_map__fd(m), &i, &v);
		if (i == GT_STAT_STATE_FULL)
			full = v;
		if (i == GT_STAT_FG_DROPPED)
			dropped = v;
		if (i == GT_STAT_UNREAD_TEXT)
			unread = v;
		strbuf_printf(&sb, "%s%s: %llu", i ? ", " : "", rt_go_stat_names[i],
			      (unsigned long long)v);
	}
	/* call-graph mode under overload: said at the end, in the output's own format */
	rt_output_dropped_roots(s->output, dropped, "ring buffer",
				", with every call under them: calls came faster than they could "
				"be printed");
	if (s->opts->verbose) {
		diag_print(DIAG_INFO, "%s", sb.buf ? sb.buf : "");
		struct bpf_map *gs = bpf_object__find_map_by_name(s->obj, "gt_gstate");
		struct bpf_map *fr = bpf_object__find_map_by_name(s->obj, "gt_frames");
		if (gs && fr)
			diag_print(DIAG_INFO, "goroutine states left: %ld, frames left: %ld",
				   map_count_entries(gs), map_count_entries(fr));
	} else if (full) {
		diag_print(DIAG_WARNING,
			   "%llu calls were not tracked (goroutine state map full): duration and "
			   "depth may be wrong",
			   (unsigned long long)full);
	}
	/* BPF cannot fault a page in; session/prefault.c makes the binary's own present */
	if (unread)
		diag_print(DIAG_WARNING,
			   "%llu strings could not be read (their memory was not present): "
			   "printed empty",
			   (unsigned long long)unread);
	strbuf_free(&sb);
}

/* Consumes everything in the ring buffer (producers are stopped or quiescent). */
static void drain(struct rt_session *s)
{
	if (!s->rb)
		return;
	for (int i = 0; i < 64 && ring_buffer__consume(s->rb) > 0; i++)
		;
}

/* Flushes the output; false when it can no longer be written (EPIPE ends quietly). */
static bool flush_output(struct rt_session *s, bool *failed)
{
	if (fflush(s->out) == 0 && !ferror(s->out))
		return true;
	if (errno != EPIPE) {
		diag_fatal("cannot write the output: %s", strerror(errno));
		*failed = true;
	}
	return false;
}

/* BEGIN and END programs: BPF_PROG_TEST_RUN of a raw tracepoint program. The context is
 * zeroed and as large as a raw tracepoint's may be (12 u64 args), whatever it reads. */
static int run_kind(struct rt_session *s, enum plan_prog_kind kind)
{
	for (int i = 0; i < s->plan->nprogs; i++) {
		const struct plan_prog *pp = &s->plan->progs[i];
		uint64_t ctx[12] = {0};
		LIBBPF_OPTS(bpf_test_run_opts, topts, .ctx_in = ctx, .ctx_size_in = sizeof(ctx));
		if (pp->kind != kind)
			continue;
		int err = bpf_prog_test_run_opts(bpf_program__fd(s->progs[i]), &topts);
		if (err) {
			diag_fatal("cannot run the %s probe at line %d: %s",
				   kind == PLAN_PROG_BEGIN ? "BEGIN" : "END", pp->clause_line,
				   strerror(-err));
			return err;
		}
	}
	return 0;
}

static int open_output(struct rt_session *s)
{
	if (!s->opts->output_path) {
		s->out = stdout;
		return 0;
	}
	s->out = fopen(s->opts->output_path, "w");
	if (!s->out) {
		int err = -errno;
		diag_fatal("cannot open %s: %s", s->opts->output_path, strerror(-err));
		return err;
	}
	s->out_owned = true;
	return 0;
}

/* Waits for records or for the traced process to exit, whichever is first, so the end
 * of a -c command is noticed at once rather than at the next poll timeout; then
 * consumes the records. */
static int wait_events(struct rt_session *s, int timeout_ms)
{
	struct pollfd fds[2] = {
		{.fd = ring_buffer__epoll_fd(s->rb), .events = POLLIN},
		{.fd = s->pidfd, .events = POLLIN},
	};
	if (poll(fds, s->pidfd >= 0 ? 2 : 1, timeout_ms) < 0)
		return errno == EINTR ? 0 : -errno;
	return ring_buffer__consume(s->rb);
}

/* A PIE's load address for naming stacks: first the -c child's exec mappings as the
 * kernel recorded them (they outlive a short command gotrace was too slow to look at),
 * then /proc/PID/maps of each traced process. True once nothing is left to learn. */
static bool prime_targets(struct rt_session *s, const struct rt_options *opts)
{
	rt_child__learn_maps(s, opts->sym);
	bool primed = opts->sym->prime(opts->sym->ctx, (int)s->pid);
	for (int i = 0; i < opts->nmore_pids; i++)
		primed &= opts->sym->prime(opts->sym->ctx, (int)opts->more_pids[i]);
	return primed;
}

/* -f folded / -f pprof: the stack-keyed maps as a profile, into its own file or the
 * output stream. */
static int write_profile(struct rt_session *s, const struct rt_options *opts, uint64_t dur_ns)
{
	bool own = opts->profile_path != NULL;
	FILE *f = own ? fopen(opts->profile_path, "wb") : s->out;
	int err = f ? 0 : -errno;
	if (f)
		err = rt_profile_write(s->maps, s->plan, opts->profile == RT_PROFILE_PPROF, f,
				       (int64_t)dur_ns);
	if (f && (own ? fclose(f) : fflush(f)) && !err)
		err = -errno;
	if (err)
		diag_fatal("cannot write the profile to %s: %s",
			   opts->profile_path ? opts->profile_path : "the output", strerror(-err));
	return err;
}

int rt_run(struct gt_plan *plan, const struct rt_options *opts)
{
	struct rt_session s = {
		.plan = plan,
		.opts = opts,
		.events_fd = -1,
		.lost_fd = -1,
		.config_fd = -1,
		.gate_fd = -1,
		.exec_err_fd = -1,
		.pidfd = -1,
	};
	for (int i = 0; i < PLAN_MAX_PIDS - 1; i++)
		s.more_pidfds[i] = -1;
	struct rt_sigsave sigsave = {0};
	struct guard *guard = NULL; /* --max-overhead */
	struct rt_lbr *lbr = NULL;  /* lbr(): the CPUs' branch-recording events */
	bool out_failed = false, over = false;
	uint64_t t_start = now_ns();
	/* --otlp: the maps' metrics are cumulative from the start, exported on an interval */
	uint64_t metrics_ns = t_start, metrics_start = t_start + (uint64_t)wall_off_ns();
	int ret = 1, err;

	rt_libbpf_print_init(opts->verbose);
	signals_install(&sigsave);

	err = open_output(&s);
	if (err)
		goto cleanup;
	s.output = rt_output__new(plan, s.out, opts->json, &err);
	if (!s.output)
		goto cleanup;
	rt_output__set_consumer(s.output, opts->consumer);
	if (opts->otlp)
		rt_output__set_otlp(s.output, opts->otlp);
	/* -p is checked before the (slow) compile result is loaded. plan->filter_pid is a
	 * -p given through the plan; opts win. The effective pid is written back. */
	if (!opts->dry_run && !opts->child_argv && (opts->pid || plan->filter_pid)) {
		err = rt_target__open(&s, opts->pid ? opts->pid : plan->filter_pid);
		if (err)
			goto cleanup;
		if (opts->follow_root)
			rt_target__end_with(&s, opts->follow_root);
	}

	/* One clear error on an old kernel, before the verifier's or the attach's. */
	err = rt_features_check(plan, !opts->dry_run);
	if (err)
		goto cleanup;
	err = rt_session__load(&s);
	if (!err && opts->dump_jit)
		rt_session__dump_jit(&s, stdout);
	if (err)
		goto cleanup;
	if (opts->dry_run) {
		rt_report_refused(&s); /* what a wildcard left out (no site refused: none tried) */
		ret = 0;
		goto cleanup;
	}
	if (stopped_early(opts)) {
		ret = 0;
		goto cleanup;
	}
	if (opts->max_overhead > 0) {
		err = guard__new(&guard, &s, opts->max_overhead);
		if (err)
			goto cleanup;
	}
	s.maps = rt_maps__new(plan, s.obj, &err);
	if (!s.maps)
		goto cleanup;
	rt_stacks__init(plan, s.obj, opts->sym, opts->verbose);
	err = rt_stacks__fill_unwind(plan, s.obj);
	if (err) {
		diag_fatal("cannot fill the unwinding table of ustack: %s", strerror(-err));
		goto cleanup;
	}
	rt_output__set_maps(s.output, s.maps);
	rt_output__set_src(s.output, opts->src);

	if (opts->child_argv) {
		err = rt_child__spawn(&s);
		if (err)
			goto cleanup;
	}
	/* mapped after the fork: the child would copy the mapping's page tables and drop
	 * them again at its execve */
	if (s.events_fd >= 0) {
		s.rb = ring_buffer__new(s.events_fd, rt_output__handle, s.output, NULL);
		if (!s.rb) {
			diag_fatal("cannot map the ring buffer %s: %s", PLAN_MAP_EVENTS,
				   strerror(errno));
			goto cleanup;
		}
	}
	plan->filter_pid = (int)s.pid;
	err = write_config(&s);
	if (err)
		goto cleanup;
	/* the last moment a stop leaves nothing to say: the child never ran */
	if (stopped_early(opts)) {
		ret = 0;
		goto cleanup;
	}
	if (rt_lbr_wanted(plan)) { /* recording before the first lbr() can run */
		err = rt_lbr__open(&lbr);
		if (err)
			goto cleanup;
	}
	err = rt_session__attach(&s);
	if (err)
		goto cleanup;
	if (!opts->quiet && opts->consumer && opts->consumer->attached)
		fprintf(stderr, "%s\n", opts->consumer->attached);
	if (!opts->quiet && !opts->consumer) {
		/* bpftrace's banner, before BEGIN's output; -q drops it */
		if (opts->json)
			fprintf(s.out, "{\"type\": \"attached_probes\", \"data\": {\"probes\": %d}}\n",
				plan->nprobes);
		else
			fprintf(s.out, "Attaching %d probe%s...\n", plan->nprobes,
				plan->nprobes == 1 ? "" : "s");
	}
	/* bpftrace's test frameworks wait for this line before they run the traced command
	 * (its runtime tests' AFTER); on stderr, as bpftrace 0.17 writes it, so that piped
	 * and -f json output stay its own; -q does not drop it */
	if (getenv("__BPFTRACE_NOTIFY_PROBES_ATTACHED")) {
		fflush(s.out);
		fputs("__BPFTRACE_NOTIFY_PROBES_ATTACHED\n", stderr);
	}

	/* A PIE's load address for naming stacks: learned once, while the process runs
	 * (the symbolizer says when nothing is left to learn). A -p process's now, before
	 * BEGIN's output can tell anyone to go on: it may exit at once, and under load the
	 * loop below looked too late (test_targets 'deleted', the flake hunt) */
	bool primed = !opts->sym || !opts->sym->prime;
	if (!primed && s.pid && !opts->child_argv && !opts->follow_root)
		primed = prime_targets(&s, opts);

	/* attached, BEGIN runs even if a stop came meanwhile: END is paired with it */
	err = run_kind(&s, PLAN_PROG_BEGIN);
	if (!err)
		err = open_gate(&s);
	if (!err)
		err = rt_session__start_timers(&s);
	if (err)
		goto cleanup;
	drain(&s);
	flush_output(&s, &out_failed);
	if (out_failed)
		goto cleanup;
	if (opts->verbose)
		diag_print(DIAG_INFO, "tracing (started in %.1f ms)",
			   (double)(now_ns() - t_start) / 1e6);

	if (guard)
		guard__start(guard, &s);
	/* Not released after exit() in BEGIN or a signal: the command never runs. */
	if (!stopsig_pending() && !rt_output__exit_seen(s.output)) {
		err = rt_child__release(&s);
		if (err)
			goto cleanup;
		/* as soon as the command has exec'd: a short-lived one may be gone before
		 * the loop below looks (the kernel's record of the exec still tells). A
		 * followed program is held at its first instruction until started: mapped,
		 * and none of it run. */
		for (int i = 0; (opts->child_argv || opts->follow_root) && !primed && i < 100; i++)
			if (!(primed = prime_targets(&s, opts)))
				poll(NULL, 0, 1);
		if (opts->started)
			opts->started(opts->hook_ctx);
	}

	bool idle = begin_end_only(&s, plan);
	while (!idle && !stopsig_pending() && !rt_output__exit_seen(s.output)) {
		int n = 0, wait_ms = RT_POLL_MS;
		/* before the events that may need it are read */
		if (!primed && s.pid)
			primed = prime_targets(&s, opts);
		if (guard && guard__timeout_ms(guard) < wait_ms)
			wait_ms = guard__timeout_ms(guard);
		if (s.rb) {
			n = wait_events(&s, wait_ms);
			if (n < 0 && n != -EINTR) {
				diag_fatal("cannot read the ring buffer: %s", strerror(-n));
				goto cleanup;
			}
		} else {
			poll(NULL, 0, wait_ms);
		}
		if (opts->tick)
			opts->tick(opts->hook_ctx);
		if (opts->consumer && opts->consumer->tick)
			opts->consumer->tick(opts->consumer->ctx, s.output);
		if (opts->otlp && now_ns() - metrics_ns >= otlp__metric_interval(opts->otlp)) {
			rt_maps__export(s.maps, opts->otlp, (int)s.pid, metrics_start);
			otlp__self_metrics(opts->otlp, metrics_start);
			metrics_ns = now_ns();
		}
		if (opts->otlp) /* batches sent on time, drops said */
			otlp__tick(opts->otlp);
		if (stopsig_take_usr1() && s.maps) {
			/* as bpftrace: every map now, in the dump's format, and the trace goes on */
			rt_maps__print_all(s.maps, s.out, opts->json);
		}
		if (!flush_output(&s, &out_failed))
			break;
		report_lost(&s);
		if (rt_target__gone(&s))
			break;
		if (guard && (over = guard__over(guard)))
			break;
		if (n > 0 && !stopsig_pending() && !rt_output__exit_seen(s.output)) {
			/* a signal interrupts it; so does the traced process's exit */
			struct pollfd pf = {.fd = s.pidfd, .events = POLLIN};
			poll(&pf, s.pidfd >= 0 ? 1 : 0, RT_BATCH_MS);
		}
	}
	if (opts->verbose) {
		const char *why = over ? "--max-overhead"
				  : stopsig_pending()      ? strsignal(stopsig_pending())
				  : rt_output__exit_seen(s.output) ? "exit()"
				  : idle ? "only BEGIN and END probes"
				  : s.child_exited || s.pid         ? "the traced process exited"
								    : "output closed";
		diag_print(DIAG_INFO, "stopping: %s", why);
	}

	if (!primed && s.pid) /* the maps' stacks, when the loop never learned it */
		primed = prime_targets(&s, opts);
	/* Detach first: END must see the final state, and nothing may fire after it. */
	rt_session__detach(&s);
	if (over)
		guard__report(guard);
	drain(&s); /* after exit(), only counts and discards */
	rt_output__set_discard(s.output, false);
	if (!out_failed) {
		err = run_kind(&s, PLAN_PROG_END);
		if (err)
			goto cleanup;
		drain(&s);
	}
	report_lost(&s);
	/* As bpftrace: END's output, then every map (the stack-keyed ones as a profile). */
	if (s.maps && !out_failed && opts->profile) {
		rt_maps__print_some(s.maps, s.out, opts->json, rt_profile_map);
		flush_output(&s, &out_failed);
		out_failed |= write_profile(&s, opts, now_ns() - t_start) != 0;
		rt_maps__report_full(s.maps);
	} else if (s.maps && !out_failed) {
		/* print_maps_on_exit = 0 (config block, BPFTRACE_PRINT_MAPS_ON_EXIT): none */
		const char *pm = gt_getenv("PRINT_MAPS_ON_EXIT");
		if (!pm || strcmp(pm, "0"))
			rt_maps__print_all(s.maps, s.out, opts->json);
		rt_maps__report_full(s.maps);
	}
	flush_output(&s, &out_failed);
	if (opts->otlp) { /* the maps as they ended, after END, as printed */
		rt_maps__export(s.maps, opts->otlp, (int)s.pid, metrics_start);
		otlp__self_metrics(opts->otlp, metrics_start);
	}
	report_go_stats(&s);
	/* --max-overhead: a -c command runs on, untraced, to its end, as -c promises */
	while (over && s.child && !stopsig_pending() && !rt_target__gone(&s)) {
		struct pollfd pf = {.fd = s.pidfd, .events = POLLIN};
		poll(&pf, s.pidfd >= 0 ? 1 : 0, RT_POLL_MS);
	}
	ret = out_failed ? 1 : over ? RT_EXIT_OVERHEAD : rt_output__exit_status(s.output);
	/* A -c command that failed on its own (not stopped by gotrace): its status is
	 * gotrace's, as a shell reports it (128 + a signal's number), so a CI job that
	 * traces its tests still fails when they do. */
	if (!ret && (opts->child_argv || opts->follow_root) && s.child_exited && !stopsig_pending() &&
	    !rt_output__exit_seen(s.output) && s.child_status) {
		int st = s.child_status;
		ret = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
	}

cleanup:
	rt_session__detach(&s); /* no-op when already detached */
	rt_lbr__close(lbr);
	rt_child__stop(&s, true);
	if (opts->verbose && s.child_exited) {
		int st = s.child_status;
		diag_print(DIAG_INFO, "command exited with %s %d",
			   WIFSIGNALED(st) ? "signal" : "status",
			   WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	}
	if (opts->verbose && s.output)
		diag_print(DIAG_INFO, "%llu records, %llu lost, %.3f s",
			   (unsigned long long)rt_output__records(s.output),
			   (unsigned long long)s.lost_reported, (double)(now_ns() - t_start) / 1e9);
	ring_buffer__free(s.rb); /* NULL-safe */
	if (s.maps)
		rt_maps__free(s.maps); /* before the object that owns the map fds */
	rt_stacks__free();
	rt_session__unload(&s);
	guard__free(guard); /* the BPF statistics off */
	signals_restore(&sigsave);
	rt_output__free(s.output);
	if (s.out_owned) {
		if (fclose(s.out) && ret == 0) {
			diag_fatal("cannot write %s: %s", opts->output_path, strerror(errno));
			ret = 1;
		}
	} else if (s.out) {
		fflush(s.out);
	}
	rt_libbpf_print_restore();
	return ret;
}
