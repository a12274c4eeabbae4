/* attach: go: and uprobe: sites through one uprobe_multi link per (program, target
 * binary), a raw bpf(BPF_LINK_CREATE) (libbpf 1.1.2 has no uprobe_multi wrapper), or one
 * perf-event uprobe a site where uprobe_multi is missing (attach_perf.c); interval,
 * profile and tracepoint perf events. One link per clause is what makes attach and detach
 * fast: 2,000 sites attach in ~20 ms and detach in ~50 ms, where perf-event uprobes take
 * minutes to detach (the kernel removes them one at a time, each waiting on RCU). Sites
 * the kernel refuses are left out of a wildcard (report_refused). */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/diag.h"
#include "common/util.h"
#include "runtime/attach/attach.h"

#ifndef BPF_LINK_CREATE
#define BPF_LINK_CREATE 28
#endif

/* The uprobe_multi arm of union bpf_attr's link_create (kernel >= 6.6). */
struct rt_link_create_uprobe_multi {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, um_flags, pid;
};

int rt_uprobe_multi_link_create(int prog_fd, const char *path, const uint64_t *offsets,
				const uint64_t *cookies, uint32_t cnt, pid_t pid, bool ret)
{
	struct rt_link_create_uprobe_multi attr;
	memset(&attr, 0, sizeof(attr)); /* the kernel rejects non-zero padding / unknown tail */
	attr.prog_fd = (uint32_t)prog_fd;
	attr.attach_type = RT_ATTACH_UPROBE_MULTI;
	attr.path = (uint64_t)(uintptr_t)path;
	attr.offsets = (uint64_t)(uintptr_t)offsets;
	attr.cookies = (uint64_t)(uintptr_t)cookies;
	attr.cnt = cnt;
	attr.pid = (uint32_t)pid; /* 0 = every process that maps the file */
	attr.um_flags = ret ? 1u /* BPF_F_UPROBE_MULTI_RETURN */ : 0;
	long fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : (int)fd;
}

/* ENOTSUPP is kernel-internal (glibc has no text for it): uprobes refuse the instruction. */
#define RT_ENOTSUPP 524

static const char *attach_strerror(int err)
{
	if (err == RT_ENOTSUPP)
		return "the instruction cannot be probed (ENOTSUPP)";
	return strerror(err);
}

bool rt_attach_err_is_site(int err)
{
	/* ENOTSUPP: an instruction uprobes cannot step (LOCK prefix, int3); EINVAL: an offset
	 * past the end or inside an instruction; ENOEXEC: bytes that do not decode. Anything
	 * else (ENOENT, EACCES, EPERM, ESRCH, EMFILE, ENOMEM ...) is not about one site. */
	return err == -RT_ENOTSUPP || err == -EINVAL || err == -ENOEXEC || err == -EOPNOTSUPP;
}

static void report_site_error(const struct plan_site *site, int err, int others)
{
	char more[64] = "";
	if (others > 0)
		snprintf(more, sizeof(more), ", and at the %d other site%s of this probe", others,
			 others == 1 ? "" : "s");
	diag_fatal("cannot attach to %s: %s at %s (address 0x%llx)%s", site->target,
		   attach_strerror(-err), site->probe ? site->probe : site->func,
		   (unsigned long long)site->vaddr, more);
}

int rt_session__refuse_site(struct rt_session *s, int site, int err)
{
	const struct plan_site *ps = &s->plan->sites[site];
	if (ps->sole) {
		report_site_error(ps, err, 0);
		return err;
	}
	struct rt_refused r = {site, err};
	vec_push(&s->refused, r);
	return 0;
}

/* Attaches sites [lo, hi) of one target with one uprobe_multi link. The kernel refuses a
 * link as a whole when it refuses one site of it, so then each half is tried on its own,
 * down to the refused sites themselves, which are left out: k refused sites among n cost
 * about 2k log2(n) tries, all on this error path; the halves that attach are kept. */
static int attach_multi_range(struct rt_session *s, int prog_fd, const char *target,
			      const uint64_t *offsets, const uint64_t *cookies, uint32_t lo,
			      uint32_t hi, bool ret)
{
	int fd = rt_uprobe_multi_link_create(prog_fd, target, offsets + lo, cookies + lo, hi - lo,
					     s->pid, ret);
	if (fd >= 0) {
		if (!s->nuprobe_links)
			s->first_uprobe_link = s->nlinks;
		s->links[s->nlinks++] = fd;
		s->nuprobe_links++;
		s->nattached_sites += (int)(hi - lo);
		return 0;
	}
	if (!rt_attach_err_is_site(fd))
		return fd;
	if (hi - lo == 1)
		return rt_session__refuse_site(s, (int)(cookies[lo] & 0xffffffffu), fd);
	uint32_t mid = lo + (hi - lo) / 2;
	int err = attach_multi_range(s, prog_fd, target, offsets, cookies, lo, mid, ret);
	return err ? err : attach_multi_range(s, prog_fd, target, offsets, cookies, mid, hi, ret);
}

/* The sites of one program in one target, for the traced process and each other -p
 * process (a link or perf event filters on one pid): 0, or an error (reported when it is
 * not about one site). */
static int attach_sites(struct rt_session *s, int pi, int prog_fd, const char *target,
			const uint64_t *offsets, const uint64_t *cookies, uint32_t cnt)
{
	const struct plan_prog *pp = &s->plan->progs[pi];
	pid_t first = s->pid;
	int err = 0;
	for (int k = -1; !err && k < (first ? s->opts->nmore_pids : 0); k++) {
		s->pid = k < 0 ? first : s->opts->more_pids[k];
		if (s->path == RT_ATTACH_TRACEFS && !pp->uprobe_return)
			err = rt_tracefs_attach_sites(s, pi, prog_fd, target, offsets, cookies, cnt);
		else if (s->path != RT_ATTACH_MULTI)
			err = rt_perf_attach_sites(s, prog_fd, target, offsets, cookies, cnt,
						   pp->uprobe_return);
		else
			err = attach_multi_range(s, prog_fd, target, offsets, cookies, 0, cnt,
						 pp->uprobe_return);
	}
	s->pid = first;
	return err;
}

/* Attaches the sites of one program, one link (uprobe_multi) or one perf event per site
 * per distinct target. The plan says all sites of a program share a target; grouping
 * costs nothing and keeps a plan that mixes binaries working. */
static int attach_prog(struct rt_session *s, int pi, int prog_fd)
{
	const struct plan_prog *pp = &s->plan->progs[pi];
	const struct plan_site *sites = s->plan->sites;
	uint64_t *offsets = xmalloc((size_t)pp->site_count * sizeof(*offsets));
	uint64_t *cookies = xmalloc((size_t)pp->site_count * sizeof(*cookies));
	bool *done = xcalloc((size_t)pp->site_count, sizeof(*done));
	int refused0 = s->refused.n, err = 0;
	/* GT_ASK_KERNEL=1: try the sites sema knows are refused too (tests: the bisection) */
	bool ask_kernel = env_flag("GT_ASK_KERNEL");

	for (int a = 0; a < pp->site_count && !err; a++) {
		if (done[a])
			continue;
		const char *target = sites[pp->site_begin + a].target;
		uint32_t cnt = 0;
		for (int b = a; b < pp->site_count; b++) {
			int si = pp->site_begin + b;
			if (done[b] || strcmp(sites[si].target, target))
				continue;
			done[b] = true;
			if (sites[si].kernel_refuses && !ask_kernel) { /* known already */
				err = rt_session__refuse_site(s, si, -RT_ENOTSUPP);
				if (err)
					break;
				continue;
			}
			offsets[cnt] = sites[si].file_off;
			/* bpf_get_attach_cookie(): plan.sites index | site flags << 32 */
			cookies[cnt] = (uint64_t)si | (uint64_t)sites[si].cookie_flags << 32;
			cnt++;
		}
		if (err || !cnt)
			continue;
		err = attach_sites(s, pi, prog_fd, target, offsets, cookies, cnt);
		/* the perf-event and tracefs paths report their own errors */
		if (err && s->path == RT_ATTACH_MULTI && !rt_attach_err_is_site(err)) {
			diag_fatal("cannot attach to %s: %s", target, attach_strerror(-err));
			if (s->opts->verbose)
				diag_print(DIAG_INFO, "(program %s, %u sites, pid filter %d)",
					   pp->fn_name, cnt, (int)s->pid);
		}
	}
	/* A probe whose every site is refused would trace nothing: that is an error. */
	int nref = s->refused.n - refused0;
	if (!err && nref && nref == pp->site_count) {
		const struct rt_refused *r = &s->refused.v[refused0];
		report_site_error(&sites[r->site], r->err, nref - 1);
		err = r->err;
	}
	free(offsets);
	free(cookies);
	free(done);
	return err;
}

/* NAME into the warning's list of the first three */
static void list_name(struct strbuf *sb, int *shown, bool *more, const char *name)
{
	if (*shown == 3) {
		*more = true;
		return;
	}
	strbuf_printf(sb, "%s%s", *shown ? ", " : "", name);
	(*shown)++;
}

/* The refused sites, and the functions sema found no probeable entry for (as refused
 * with RT_ENOTSUPP): one warning (--no-warnings drops it), every site under -v. */
void rt_report_refused(struct rt_session *s)
{
	const struct plan_site *sites = s->plan->sites;
	int nu = s->plan->nunprobed, n = s->refused.n + nu, shown = 0;
	int total = n + s->nattached_sites;
	struct strbuf names = {0};
	const char *last = NULL;
	bool same = true, more = false;
	if (!n)
		return;
	int first = nu ? -RT_ENOTSUPP : s->refused.v[0].err;
	for (int i = 0; i < nu; i++)
		list_name(&names, &shown, &more, s->plan->unprobed[i]);
	for (int i = 0; i < s->refused.n; i++) {
		const struct plan_site *ps = &sites[s->refused.v[i].site];
		const char *name = ps->probe ? ps->probe : ps->func;
		same &= s->refused.v[i].err == first;
		if (last && !strcmp(name, last))
			continue; /* the RETs of one function share its probe name */
		last = name;
		list_name(&names, &shown, &more, name);
	}
	int err = -first;
	diag_print(DIAG_WARNING, "skipped %d of %d sites (%s): %s%s (-v lists all)", n, total,
		   !same ? "the kernel refused them"
		   : err == RT_ENOTSUPP ? "the kernel cannot probe their instruction"
					: strerror(err),
		   names.buf, more ? ", ..." : "");
	strbuf_free(&names);
	if (!s->opts->verbose)
		return;
	for (int i = 0; i < nu; i++)
		diag_print(DIAG_INFO, "skipped %s: the kernel cannot probe its first instruction",
			   s->plan->unprobed[i]);
	for (int i = 0; i < s->refused.n; i++) {
		const struct plan_site *ps = &sites[s->refused.v[i].site];
		diag_print(DIAG_INFO, "skipped %s (address 0x%llx in %s): %s",
			   ps->probe ? ps->probe : ps->func, (unsigned long long)ps->vaddr, ps->target,
			   attach_strerror(-s->refused.v[i].err));
	}
}

static const char *rt_path_links(enum rt_attach_path p)
{
	return p == RT_ATTACH_PERF ? "perf-event uprobes"
	       : p == RT_ATTACH_TRACEFS ? "tracefs uprobe events"
					: "uprobe_multi links";
}

static int perf_open(struct perf_event_attr *attr, int cpu)
{
	return (int)syscall(__NR_perf_event_open, attr, -1 /* any process */, cpu, -1,
			    PERF_FLAG_FD_CLOEXEC);
}

/* Attaches PROG_FD to an open perf event and keeps the event's fd as the link. */
static int perf_attach(struct rt_session *s, int pfd, int prog_fd, bool enable)
{
	if (ioctl(pfd, PERF_EVENT_IOC_SET_BPF, prog_fd) ||
	    (enable && ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0))) {
		int err = -errno;
		close(pfd);
		return err;
	}
	s->links[s->nlinks++] = pfd;
	return 0;
}

/* interval: one CPU; profile, software:, hardware: every online CPU (interval and
 * profile on the cpu-clock software event, like bpftrace). */
static int attach_perf(struct rt_session *s, const struct plan_prog *pp, int prog_fd)
{
	struct perf_event_attr attr = {
		.type = pp->perf_type,
		.size = sizeof(attr),
		.config = pp->perf_config,
		.disabled = 1, /* rt_session__start_timers */
	};
	if (pp->perf_freq) {
		attr.freq = 1;
		attr.sample_freq = pp->perf_freq;
	} else {
		attr.sample_period = pp->perf_period_ns;
	}
	int ncpus = pp->perf_all_cpus ? libbpf_num_possible_cpus() : 1;
	int attached = 0;
	for (int cpu = 0; cpu < ncpus; cpu++) {
		int pfd = perf_open(&attr, cpu);
		if (pfd < 0) {
			if (errno == ENODEV)
				continue; /* a possible CPU that is offline */
			diag_fatal("cannot open a perf event for %s: %s", pp->fn_name,
				   strerror(errno));
			return -errno;
		}
		int err = perf_attach(s, pfd, prog_fd, false);
		if (err) {
			diag_fatal("cannot attach %s to a perf event: %s", pp->fn_name,
				   strerror(-err));
			return err;
		}
		vec_push(&s->timers, pfd);
		attached++;
	}
	s->nattached_sites += attached;
	return 0;
}

static int attach_tracepoint(struct rt_session *s, const struct plan_prog *pp, int prog_fd)
{
	if (pp->tp_raw) {
		int fd = bpf_raw_tracepoint_open(pp->tp_name, prog_fd);
		if (fd < 0) {
			diag_fatal("cannot attach to raw tracepoint %s: %s", pp->tp_name,
				   strerror(errno));
			return -errno;
		}
		s->links[s->nlinks++] = fd;
		s->nattached_sites++;
		return 0;
	}
	if (pp->tp_id <= 0) {
		diag_fatal("internal error: tracepoint %s:%s has no id in the plan", pp->tp_category,
			   pp->tp_name);
		return -EINVAL;
	}
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
		.config = (uint64_t)pp->tp_id,
		.sample_period = 1,
		.wakeup_events = 1,
	};
	/* The program hangs off the tracepoint itself: one event fires on every CPU. */
	int pfd = perf_open(&attr, 0);
	if (pfd < 0) {
		diag_fatal("cannot open tracepoint %s:%s: %s", pp->tp_category, pp->tp_name,
			   strerror(errno));
		return -errno;
	}
	int err = perf_attach(s, pfd, prog_fd, true);
	if (err)
		diag_fatal("cannot attach to tracepoint %s:%s: %s", pp->tp_category, pp->tp_name,
			   strerror(-err));
	else
		s->nattached_sites++;
	return err;
}

int rt_session__attach(struct rt_session *s)
{
	const struct gt_plan *plan = s->plan;
	uint64_t t0 = now_ns();
	int err = 0;

	/* Upper bound: one link per site of each program (clauses may share sites). */
	size_t max_links = 1, nusites = 0;
	for (int i = 0; i < plan->nprogs; i++) {
		const struct plan_prog *pp = &plan->progs[i];
		if (pp->kind != PLAN_PROG_UPROBE || pp->site_count <= 0)
			continue;
		if (pp->site_begin < 0 || pp->site_begin + pp->site_count > plan->nsites) {
			diag_fatal("internal error: program %s has sites %d..%d of %d", pp->fn_name,
				   pp->site_begin, pp->site_begin + pp->site_count, plan->nsites);
			return -EINVAL;
		}
		nusites += (size_t)pp->site_count;
	}
	/* perf-event uprobes: the event and its link; for each -p process */
	max_links += 2 * nusites * (size_t)(1 + s->opts->nmore_pids);
	for (int i = 0; i < plan->nprogs; i++) {
		const struct plan_prog *pp = &plan->progs[i];
		if (pp->kind == PLAN_PROG_PERF)
			max_links += pp->perf_all_cpus ? (size_t)libbpf_num_possible_cpus() : 1;
		else if (pp->kind == PLAN_PROG_TRACEPOINT)
			max_links++;
		else if (pp->kind == PLAN_PROG_KPROBE)
			max_links += 2 * (size_t)pp->site_count;
		else if (pp->kind == PLAN_PROG_FENTRY)
			max_links++;
	}
	s->links = xcalloc(max_links, sizeof(*s->links));
	const char *why;
	s->path = rt_attach_path(&why);
	if (s->opts->verbose && nusites)
		diag_print(DIAG_INFO, "attach path: %s", why);
	/* by rank, highest first (plan_attach_rank); -1: the rank was not reached */
	for (int r = 0; r < PLAN_ATTACH_NRANKS; r++)
		s->rank_end[r] = -1;
	s->rank_end[PLAN_ATTACH_NRANKS] = 0;
	for (int i = 0, rank = PLAN_ATTACH_NRANKS - 1; rank >= 0; i++) {
		if (i == plan->nprogs) {
			s->rank_end[rank--] = s->nlinks;
			i = -1;
			continue;
		}
		const struct plan_prog *pp = &plan->progs[i];
		if ((int)pp->attach_rank != rank)
			continue;
		int fd = bpf_program__fd(s->progs[i]);
		if (pp->kind == PLAN_PROG_PERF)
			err = attach_perf(s, pp, fd);
		else if (pp->kind == PLAN_PROG_TRACEPOINT)
			err = attach_tracepoint(s, pp, fd);
		else if (pp->kind == PLAN_PROG_KPROBE)
			err = rt_attach_kprobes(s, pp, fd);
		else if (pp->kind == PLAN_PROG_FENTRY)
			err = rt_attach_fentry(s, pp, fd);
		else if (pp->kind == PLAN_PROG_UPROBE && pp->site_count > 0)
			err = attach_prog(s, i, fd);
		if (err)
			return err; /* the caller detaches what is already attached */
	}
	rt_report_refused(s);
	if (s->opts->verbose)
		diag_print(DIAG_INFO, "attached %d sites with %d %s in %.1f ms", s->nattached_sites,
			   s->nuprobe_links ? s->nuprobe_links : s->nlinks,
			   s->nuprobe_links ? rt_path_links(s->path) : "links and events",
			   (double)(now_ns() - t0) / 1e6);
	return 0;
}

/* Closing a uprobe_multi link waits for an RCU-tasks-trace grace period (~45 ms here),
 * one link after the other: 32 clauses took 1.5 s to detach; a perf-event uprobe waits
 * for grace periods too. Closes issued concurrently share grace periods, so the fds are
 * spread over up to RT_DETACH_THREADS threads. */
#define RT_DETACH_THREADS 64
/* From this many perf-event uprobes on, detach times one and says how long the rest will
 * take when that is more than 10 s. */
#define RT_PERF_SLOW_DETACH 20
/* The workers only call close(): a small stack each. */
#define RT_WORKER_STACK (64 * 1024)

struct detach_job {
	const int *fds;
	int n, stride;
};

static void *detach_worker(void *arg)
{
	const struct detach_job *j = arg;
	for (int i = 0; i < j->n; i += j->stride)
		close(j->fds[i]);
	return NULL;
}

void rt_close_fds(int *fds, int n)
{
	if (n <= 0)
		return;
	int nt = n < RT_DETACH_THREADS ? n : RT_DETACH_THREADS;
	pthread_t *th = xcalloc((size_t)nt, sizeof(*th));
	struct detach_job *jobs = xcalloc((size_t)nt, sizeof(*jobs));
	pthread_attr_t attr;
	int started = 0;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, RT_WORKER_STACK);
	for (int t = 1; t < nt; t++) {
		jobs[t] = (struct detach_job){fds + t, n - t, nt};
		if (pthread_create(&th[t], &attr, detach_worker, &jobs[t]))
			break;
		started = t;
	}
	pthread_attr_destroy(&attr);
	/* This thread closes slot 0 and whatever no thread could be started for. */
	for (int t = started + 1; t < nt; t++) {
		jobs[t] = (struct detach_job){fds + t, n - t, nt};
		detach_worker(&jobs[t]);
	}
	jobs[0] = (struct detach_job){fds, n, nt};
	detach_worker(&jobs[0]);
	for (int t = 1; t <= started; t++)
		pthread_join(th[t], NULL);
	free(th);
	free(jobs);
}

void rt_session__detach(struct rt_session *s)
{
	vec_free(&s->refused);
	vec_free(&s->timers);
	if (!s->nlinks) {
		rt_tracefs_remove_events(s);
		free(s->links);
		s->links = NULL;
		return;
	}
	uint64_t t0 = now_ns();
	int nlinks = s->nlinks;
	if (s->path == RT_ATTACH_PERF && s->nuprobe_links >= RT_PERF_SLOW_DETACH &&
	    s->rank_end[PLAN_ATTACH_OTHER + 1] >= 0 &&
	    s->first_uprobe_link >= s->rank_end[PLAN_ATTACH_OTHER + 1]) {
		/* The kernel removes perf-event uprobes one at a time: time one, say how long
		 * the rest will take, so that a long detach does not look like a hang. */
		int k = s->first_uprobe_link; /* the event, then its link */
		close(s->links[k]);
		close(s->links[k + 1]);
		s->links[k + 1] = s->links[--s->nlinks];
		s->links[k] = s->links[--s->nlinks];
		double each = (double)(now_ns() - t0) / 1e9;
		if (each * s->nuprobe_links > 10.0)
			diag_print(DIAG_WARNING,
				   "detaching %d perf-event uprobes will take about %.0f s (%.0f ms each: "
				   "the kernel removes them one at a time; uprobe_multi, Linux 6.6, at once)",
				   s->nuprobe_links - 1, each * (s->nuprobe_links - 1), each * 1e3);
	}
	/* rank by rank, lowest first: each stays while the ones before it go. A rank whose
	 * attach failed or was not reached ends with the links. */
	for (int r = PLAN_ATTACH_NRANKS - 1; r >= 0; r--)
		if (s->rank_end[r] < 0 || r == PLAN_ATTACH_OTHER)
			s->rank_end[r] = s->nlinks;
	for (int r = PLAN_ATTACH_OTHER; r < PLAN_ATTACH_NRANKS; r++)
		rt_close_fds(s->links + s->rank_end[r + 1], s->rank_end[r] - s->rank_end[r + 1]);
	rt_tracefs_remove_events(s);
	if (s->opts->verbose)
		diag_print(DIAG_INFO, "detached %d %s in %.1f ms",
			   s->path == RT_ATTACH_MULTI ? nlinks : s->nuprobe_links,
			   s->path == RT_ATTACH_MULTI ? "links" : rt_path_links(s->path),
			   (double)(now_ns() - t0) / 1e6);
	free(s->links);
	s->links = NULL;
	s->nlinks = 0;
}

int rt_session__start_timers(struct rt_session *s)
{
	for (int i = 0; i < s->timers.n; i++)
		if (ioctl(s->timers.v[i], PERF_EVENT_IOC_ENABLE, 0)) {
			int err = -errno;
			diag_fatal("cannot start a perf event: %s", strerror(-err));
			return err;
		}
	s->timers.n = 0;
	return 0;
}
