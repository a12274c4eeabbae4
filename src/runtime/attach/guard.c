/* guard: --max-overhead PERCENT (attach.h says what is weighed against what).
 *
 * Granularity: the kernel counts per BPF program, and a program serves one clause's
 * go: (or uprobe:) probes of one target and one point (entry, return, offset), so a
 * clause naming one function is costed alone and a wildcard as a whole ("go:main.a:entry
 * and 11 other functions"). The goroutine tracking's own programs (the entry probes
 * `duration` pairs returns with) are costed like any other, and named so. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "arch/arch.h"
#include "common/diag.h"
#include "common/util.h"
#include "runtime/attach/attach.h"

/* A window lasts at least this long, and until the traced process has used at least
 * GUARD_MIN_CPU_NS of CPU in it: a mostly idle service is judged on that much work,
 * not on one call in an otherwise empty window. */
#define GUARD_WINDOW_NS (200 * 1000 * 1000ull)
#define GUARD_MIN_CPU_NS (20 * 1000 * 1000ull)
/* Calls timed with and without the calibration uprobes: ~3 ms of traps. */
#define GUARD_CAL_CALLS 101
/* Probes named in the message, costliest first. */
#define GUARD_NAMED 3

/* The kinds of probed instruction, as they cost (see calibrate). */
enum { GUARD_PUSH, GUARD_STEP, GUARD_KINDS };

struct guard_prog {
	int plan_prog; /* index in plan->progs */
	int fd;
	double trap_ns; /* the uprobe traps of one run (0: perf events, tracepoints) */
	uint64_t cnt0, ns0;  /* the statistics when the window opened */
	uint64_t cnt, ns;    /* and what the window added */
	double cost_ns;
};

struct guard {
	double max;       /* percent */
	int stats_fd;     /* BPF_ENABLE_STATS: counted only while this is open */
	double trap_ns[GUARD_KINDS]; /* one uprobe hit, without its program, by kind */
	const struct gt_plan *plan;
	struct guard_prog *progs;
	int nprogs;
	clockid_t cpu_clock; /* the traced process's CPU-time clock, all threads */
	bool started;
	uint64_t w_wall, w_cpu; /* the window opened at */
	/* the last window closed */
	double overhead, cost_ns;
	uint64_t win_wall, win_cpu;
};

/* The calibration targets, one per kind of probed instruction, as they cost very
 * differently (measured on 6.18: ~7 us of CPU a hit for a push, ~22 us for a cmp, xor
 * or ret): uprobes emulate a push (and branches, nops), so a hit is one trap; any other
 * instruction is single-stepped out of line, a second trap. A go: entry site is the push
 * of the frame pointer after the stack check, except in a frameless function; a :return
 * site is a RET. The targets are the processor's (arch.h). */
static void (*const guard_targets[GUARD_KINDS])(void) = {arch_trap_push, arch_trap_step};

/* Where the targets are in a file: PATH and their file offsets, from our own maps. */
static int trap_targets_file(char *path, size_t n, uint64_t *offs)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	int found = 0;
	if (!f)
		return -errno;
	while (found < GUARD_KINDS && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, pgoff;
		int pos = 0;
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %n", &lo, &hi, &pgoff, &pos) < 3 || !pos)
			continue;
		for (int k = 0; k < GUARD_KINDS; k++) {
			uintptr_t addr = (uintptr_t)guard_targets[k];
			if (addr < lo || addr >= hi || line[pos] != '/')
				continue;
			line[strcspn(line, "\n")] = 0;
			snprintf(path, n, "%s", line + pos); /* one text mapping holds both */
			offs[k] = addr - lo + pgoff;
			found++;
		}
	}
	fclose(f);
	return found == GUARD_KINDS ? 0 : -ENOENT;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The median CPU time of GUARD_CAL_CALLS calls of FN: robust to a preemption or two.
 * CPU, not wall time: it is weighed against the traced process's CPU time (in a VM a
 * trap also takes wall time that no one is charged for). */
static uint64_t median_call_ns(void (*fn)(void))
{
	uint64_t d[GUARD_CAL_CALLS];
	void (*volatile call)(void) = fn;
	for (int i = 0; i < GUARD_CAL_CALLS; i++) {
		uint64_t t0 = thread_cpu_ns();
		call();
		d[i] = thread_cpu_ns() - t0;
	}
	qsort(d, GUARD_CAL_CALLS, sizeof(d[0]), cmp_u64);
	return d[GUARD_CAL_CALLS / 2];
}

/* What a uprobe hit costs on this machine, per kind of instruction: calls of the
 * targets timed with an empty program on them (attached the way go: probes will be,
 * for this process only) and without. */
static int calibrate(struct guard *g)
{
	struct bpf_insn insns[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	bool multi = rt_attach_path(NULL) == RT_ATTACH_MULTI;
	LIBBPF_OPTS(bpf_prog_load_opts, o,
		    .expected_attach_type = multi ? (enum bpf_attach_type)RT_ATTACH_UPROBE_MULTI
						  : (enum bpf_attach_type)0);
	char path[4096];
	uint64_t offs[GUARD_KINDS], cookies[GUARD_KINDS] = {0}, plain[GUARD_KINDS];
	int prog = -1, fds[2 * GUARD_KINDS], nfds = 0;
	int err = trap_targets_file(path, sizeof(path), offs);
	if (err)
		goto out;
	prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "gt_guard_trap", "GPL", insns,
			     ARRAY_SIZE(insns), &o);
	if (prog < 0) {
		err = -errno;
		goto out;
	}
	for (int k = 0; k < GUARD_KINDS; k++)
		plain[k] = median_call_ns(guard_targets[k]);
	if (multi) {
		int fd = rt_uprobe_multi_link_create(prog, path, offs, cookies, GUARD_KINDS,
						     getpid(), false);
		if (fd < 0)
			err = fd;
		else
			fds[nfds++] = fd;
	} else {
		const struct rt_features *f = rt_features_probe(RT_FEAT_PERF);
		for (int k = 0; k < GUARD_KINDS && !err; k++) {
			int pfd = f->uprobe_type < 0 ? -ENOTSUP
						     : rt_perf_uprobe_open(f, path, offs[k], getpid(), false);
			int fd = pfd < 0 ? pfd : rt_perf_link_create(prog, pfd, 0);
			if (pfd >= 0)
				fds[nfds++] = pfd;
			if (fd < 0)
				err = fd;
			else
				fds[nfds++] = fd;
		}
	}
	for (int k = 0; k < GUARD_KINDS && !err; k++) {
		uint64_t probed = median_call_ns(guard_targets[k]);
		g->trap_ns[k] = probed > plain[k] ? (double)(probed - plain[k]) : 0;
	}
out:
	rt_close_fds(fds, nfds);
	if (prog >= 0)
		close(prog);
	if (err)
		diag_fatal("--max-overhead: cannot measure what a uprobe hit costs here: %s",
			   strerror(-err));
	return err;
}

/* Whether the instruction at OFF of FD is a push uprobes emulate: push %reg (0x50-0x57,
 * REX.B 0x41 for %r8-%r15). Unreadable: no (the dearer kind). */
static bool site_is_push(int fd, uint64_t off)
{
	uint8_t b[2];
	if (fd < 0 || pread(fd, b, sizeof(b), (off_t)off) != (ssize_t)sizeof(b))
		return false;
	return (b[0] >= 0x50 && b[0] <= 0x57) || (b[0] == 0x41 && b[1] >= 0x50 && b[1] <= 0x57);
}

/* What one run of uprobe program PP costs in traps: its sites' kinds priced at what
 * calibrate measured, averaged over its sites (the kernel does not count hits per site);
 * a uretprobe traps twice, at the entry and at the return. */
static double prog_trap_ns(const struct guard *g, const struct gt_plan *plan,
			   const struct plan_prog *pp)
{
	double sum = 0;
	int n = 0, fd = -1;
	const char *fd_path = NULL;
	for (int i = pp->site_begin; i < pp->site_begin + pp->site_count; i++) {
		const struct plan_site *site = &plan->sites[i];
		if (site->kernel_refuses)
			continue;
		if (!fd_path || strcmp(fd_path, site->target)) {
			if (fd >= 0)
				close(fd);
			fd = open(site->target, O_RDONLY | O_CLOEXEC);
			fd_path = site->target;
		}
		sum += g->trap_ns[site_is_push(fd, site->file_off) ? GUARD_PUSH : GUARD_STEP];
		n++;
	}
	if (fd >= 0)
		close(fd);
	return (n ? sum / n : g->trap_ns[GUARD_STEP]) * (pp->uprobe_return ? 2 : 1);
}

static int prog_stats(int fd, uint64_t *cnt, uint64_t *ns)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	*cnt = info.run_cnt;
	*ns = info.run_time_ns;
	return 0;
}

int guard__new(struct guard **out, const struct rt_session *s, double max_percent)
{
	struct guard *g = xcalloc(1, sizeof(*g));
	int err;
	g->max = max_percent;
	g->plan = s->plan;
	g->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (g->stats_fd < 0) {
		err = -errno;
		diag_fatal("--max-overhead needs the kernel's BPF statistics (BPF_ENABLE_STATS, "
			   "Linux 5.8): %s",
			   strerror(-err));
		goto fail;
	}
	err = calibrate(g);
	if (err)
		goto fail;
	g->progs = xcalloc((size_t)s->plan->nprogs + 1, sizeof(*g->progs));
	for (int i = 0; i < s->plan->nprogs; i++) {
		const struct plan_prog *pp = &s->plan->progs[i];
		if (pp->kind == PLAN_PROG_BEGIN || pp->kind == PLAN_PROG_END || !s->progs[i])
			continue; /* BEGIN, END: run once, by gotrace, not in the traced process */
		struct guard_prog *gp = &g->progs[g->nprogs++];
		gp->plan_prog = i;
		gp->fd = bpf_program__fd(s->progs[i]);
		gp->trap_ns = pp->kind == PLAN_PROG_UPROBE ? prog_trap_ns(g, s->plan, pp) : 0;
	}
	if (s->opts->verbose)
		diag_print(DIAG_INFO, "--max-overhead %g%%: a uprobe hit costs %.1f us of CPU on "
			   "a push, %.1f us on other instructions (measured), %d program(s) watched",
			   g->max, g->trap_ns[GUARD_PUSH] / 1e3, g->trap_ns[GUARD_STEP] / 1e3,
			   g->nprogs);
	*out = g;
	return 0;
fail:
	guard__free(g);
	return err;
}

void guard__free(struct guard *g)
{
	if (!g)
		return;
	if (g->stats_fd >= 0)
		close(g->stats_fd);
	free(g->progs);
	free(g);
}

/* The traced process's CPU time (ns): false once it is gone. */
static bool process_cpu(const struct guard *g, uint64_t *ns)
{
	struct timespec ts;
	if (clock_gettime(g->cpu_clock, &ts))
		return false;
	*ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	return true;
}

/* Opens a window at NOW, CPU. */
static void open_window(struct guard *g, uint64_t now, uint64_t cpu)
{
	g->w_wall = now;
	g->w_cpu = cpu;
	for (int i = 0; i < g->nprogs; i++)
		if (prog_stats(g->progs[i].fd, &g->progs[i].cnt0, &g->progs[i].ns0))
			g->progs[i].cnt0 = g->progs[i].ns0 = 0;
}

void guard__start(struct guard *g, const struct rt_session *s)
{
	uint64_t cpu = 0;
	/* no process (a trace of every process of a binary) or its clock unreadable: the
	 * guard cannot weigh anything; main.c asks for -c or -p */
	if (!s->pid || clock_getcpuclockid(s->pid, &g->cpu_clock) || !process_cpu(g, &cpu))
		return;
	g->started = true;
	open_window(g, now_ns(), cpu);
}

int guard__timeout_ms(const struct guard *g)
{
	int64_t left = (int64_t)(g->w_wall + GUARD_WINDOW_NS) - (int64_t)now_ns();
	if (left <= 0) /* due, stretched until the process has worked enough */
		return (int)(GUARD_WINDOW_NS / 4 / 1000000);
	return (int)(left / 1000000) + 1;
}

bool guard__over(struct guard *g)
{
	uint64_t now = now_ns(), cpu;
	if (!g->started || now - g->w_wall < GUARD_WINDOW_NS || !process_cpu(g, &cpu) ||
	    cpu - g->w_cpu < GUARD_MIN_CPU_NS)
		return false;
	double cost = 0;
	for (int i = 0; i < g->nprogs; i++) {
		struct guard_prog *gp = &g->progs[i];
		uint64_t cnt, ns;
		if (prog_stats(gp->fd, &cnt, &ns))
			cnt = gp->cnt0, ns = gp->ns0;
		gp->cnt = cnt - gp->cnt0;
		gp->ns = ns - gp->ns0;
		gp->cost_ns = (double)gp->cnt * gp->trap_ns + (double)gp->ns;
		cost += gp->cost_ns;
	}
	g->win_wall = now - g->w_wall;
	g->win_cpu = cpu - g->w_cpu;
	/* an estimate: a few traps slower than the calibration's may exceed the whole */
	g->overhead = cost >= (double)g->win_cpu ? 100.0 : 100.0 * cost / (double)g->win_cpu;
	g->cost_ns = cost;
	if (g->overhead > g->max)
		return true;
	open_window(g, now, cpu);
	return false;
}

/* 4120331 -> "4,120,331" */
static void put_count(struct strbuf *sb, uint64_t v)
{
	char digits[32];
	int n = snprintf(digits, sizeof(digits), "%" PRIu64, v);
	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			strbuf_putc(sb, ',');
		strbuf_putc(sb, digits[i]);
	}
}

/* A program by its probes: the one probe, or the first and how many functions more (a
 * :return probe has a site per RET; a function's sites are contiguous). */
static void put_prog_name(struct strbuf *sb, const struct gt_plan *plan, int pi)
{
	const struct plan_prog *pp = &plan->progs[pi];
	const struct plan_site *site = pp->site_count > 0 ? &plan->sites[pp->site_begin] : NULL;
	const char *name = site ? (site->probe ? site->probe : site->func) : NULL;
	int others = 0;
	if (!name) {
		strbuf_printf(sb, "the probe at line %d", pp->clause_line);
		return;
	}
	for (int i = 1; i < pp->site_count; i++)
		others += !site[i].func || !site[i - 1].func || strcmp(site[i].func, site[i - 1].func);
	strbuf_puts(sb, name);
	if (others)
		strbuf_printf(sb, " and %d other function%s", others, others == 1 ? "" : "s");
	if (!pp->clause_line) /* no clause: what duration and depth pair calls with */
		strbuf_puts(sb, " (goroutine tracking)");
	else if (others)
		strbuf_printf(sb, " (line %d)", pp->clause_line);
}

static int cmp_cost(const void *a, const void *b)
{
	const struct guard_prog *x = a, *y = b;
	return x->cost_ns < y->cost_ns ? 1 : x->cost_ns > y->cost_ns ? -1 : 0;
}

void guard__report(const struct guard *g)
{
	struct strbuf sb = {0};
	struct guard_prog *byc = xcalloc((size_t)g->nprogs + 1, sizeof(*byc));
	memcpy(byc, g->progs, (size_t)g->nprogs * sizeof(*byc));
	qsort(byc, (size_t)g->nprogs, sizeof(*byc), cmp_cost);
	strbuf_printf(&sb,
		      "overhead %.1f%% of the traced process's CPU time over the last %.0f ms "
		      "exceeds --max-overhead %g%%: probes detached",
		      g->overhead, (double)g->win_wall / 1e6, g->max);
	for (int i = 0; i < g->nprogs && i < GUARD_NAMED; i++) {
		/* shares of the overhead, so that they add up to it when it is capped at 100 */
		double pct = g->cost_ns > 0 ? g->overhead * byc[i].cost_ns / g->cost_ns : 0;
		if (i && pct < 0.05) /* what prints as 0.0% */
			break;
		strbuf_puts(&sb, i ? ", " : "; ");
		put_prog_name(&sb, g->plan, byc[i].plan_prog);
		strbuf_printf(&sb, " cost %.1f%% (", pct);
		put_count(&sb, byc[i].cnt);
		strbuf_printf(&sb, " hit%s)", byc[i].cnt == 1 ? "" : "s");
	}
	diag_print(DIAG_INFO, "%s", sb.buf);
	strbuf_free(&sb);
	free(byc);
}
