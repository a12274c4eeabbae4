/* attach: one uprobe_multi link per (program, target binary), through a raw
 * bpf(BPF_LINK_CREATE): libbpf 1.1.2 has no uprobe_multi wrapper. One link per clause
 * is what makes attach and detach fast: 500 sites attach in ~15 ms and detach in ~30 ms,
 * where separate perf-event uprobes take minutes to detach (each close waits on RCU). */
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
#include "runtime/rt_priv.h"

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

/* Finds one site whose attach fails with `err`, by bisection: a link over many sites fails
 * as a whole, and "which function" is what the user needs. Error path only; each step
 * attaches and detaches part of the sites (a few ms). Returns -1 when a step fails
 * differently (e.g. the -p process exited meanwhile): then no site is blamed. */
static long find_failing_site(int prog_fd, const char *path, const uint64_t *offsets,
			      const uint64_t *cookies, uint32_t cnt, pid_t pid, int err)
{
	uint32_t lo = 0, hi = cnt; /* a failing site lies in [lo, hi) */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		int fd = rt_uprobe_multi_link_create(prog_fd, path, offsets + lo, cookies + lo, mid - lo,
						  pid, false);
		if (fd >= 0) {
			close(fd);
			lo = mid;
		} else if (fd == err) {
			hi = mid;
		} else {
			return -1;
		}
	}
	return lo;
}

/* Attaches sites[begin .. begin+count) of one program, one link per distinct target.
 * The plan says all sites of a program share a target; grouping costs nothing and keeps
 * a plan that mixes binaries working. */
static int attach_prog(struct rt_session *s, int pi, int prog_fd)
{
	const struct plan_prog *pp = &s->plan->progs[pi];
	const struct plan_site *sites = s->plan->sites;
	uint64_t *offsets = xmalloc((size_t)pp->site_count * sizeof(*offsets));
	uint64_t *cookies = xmalloc((size_t)pp->site_count * sizeof(*cookies));
	bool *done = xcalloc((size_t)pp->site_count, sizeof(*done));
	int err = 0;

	for (int a = 0; a < pp->site_count; a++) {
		if (done[a])
			continue;
		const char *target = sites[pp->site_begin + a].target;
		uint32_t cnt = 0;
		for (int b = a; b < pp->site_count; b++) {
			int si = pp->site_begin + b;
			if (done[b] || strcmp(sites[si].target, target))
				continue;
			done[b] = true;
			offsets[cnt] = sites[si].file_off;
			/* bpf_get_attach_cookie(): plan.sites index | site flags << 32 */
			cookies[cnt] = (uint64_t)si | (uint64_t)sites[si].cookie_flags << 32;
			cnt++;
		}
		int fd = rt_uprobe_multi_link_create(prog_fd, target, offsets, cookies, cnt, s->pid,
						  pp->uprobe_return);
		if (fd < 0) {
			err = fd;
			/* A missing or unreadable file, or a vanished process, is not about a site. */
			bool site_err = err != -ENOENT && err != -ENOTDIR && err != -EACCES &&
					err != -EPERM && err != -ESRCH;
			long k = -1;
			if (site_err)
				k = cnt == 1 ? 0
					     : find_failing_site(prog_fd, target, offsets, cookies, cnt,
								 s->pid, err);
			if (k >= 0) {
				const struct plan_site *bad = &sites[cookies[k] & 0xffffffffu];
				diag_fatal("cannot attach to %s: %s at %s (address 0x%llx)", target,
					   attach_strerror(-err), bad->probe ? bad->probe : bad->func,
					   (unsigned long long)bad->vaddr);
			} else {
				diag_fatal("cannot attach to %s: %s", target, attach_strerror(-err));
			}
			if (s->opts->verbose)
				diag_print(DIAG_INFO, "(program %s, %u sites, pid filter %d)",
					   pp->fn_name, cnt, (int)s->pid);
			break;
		}
		s->links[s->nlinks++] = fd;
		s->nattached_sites += (int)cnt;
	}
	free(offsets);
	free(cookies);
	free(done);
	return err;
}

static int perf_open(struct perf_event_attr *attr, int cpu)
{
	return (int)syscall(__NR_perf_event_open, attr, -1 /* any process */, cpu, -1,
			    PERF_FLAG_FD_CLOEXEC);
}

/* Attaches PROG_FD to an open perf event and keeps the event's fd as the link. */
static int perf_attach(struct rt_session *s, int pfd, int prog_fd)
{
	if (ioctl(pfd, PERF_EVENT_IOC_SET_BPF, prog_fd) || ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0)) {
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
		int err = perf_attach(s, pfd, prog_fd);
		if (err) {
			diag_fatal("cannot attach %s to a perf event: %s", pp->fn_name,
				   strerror(-err));
			return err;
		}
		attached++;
	}
	s->nattached_sites += attached;
	return 0;
}

static int attach_tracepoint(struct rt_session *s, const struct plan_prog *pp, int prog_fd)
{
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
	int err = perf_attach(s, pfd, prog_fd);
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
	size_t max_links = 1;
	for (int i = 0; i < plan->nprogs; i++) {
		const struct plan_prog *pp = &plan->progs[i];
		if (pp->kind != PLAN_PROG_UPROBE || pp->site_count <= 0)
			continue;
		if (pp->site_begin < 0 || pp->site_begin + pp->site_count > plan->nsites) {
			diag_fatal("internal error: program %s has sites %d..%d of %d", pp->fn_name,
				   pp->site_begin, pp->site_begin + pp->site_count, plan->nsites);
			return -EINVAL;
		}
		max_links += (size_t)pp->site_count;
	}
	for (int i = 0; i < plan->nprogs; i++) {
		const struct plan_prog *pp = &plan->progs[i];
		if (pp->kind == PLAN_PROG_PERF)
			max_links += pp->perf_all_cpus ? (size_t)libbpf_num_possible_cpus() : 1;
		else if (pp->kind == PLAN_PROG_TRACEPOINT)
			max_links++;
	}
	s->links = xcalloc(max_links, sizeof(*s->links));
	for (int i = 0; i < plan->nprogs; i++) {
		const struct plan_prog *pp = &plan->progs[i];
		int fd = bpf_program__fd(s->progs[i]);
		if (pp->kind == PLAN_PROG_PERF)
			err = attach_perf(s, pp, fd);
		else if (pp->kind == PLAN_PROG_TRACEPOINT)
			err = attach_tracepoint(s, pp, fd);
		else if (pp->kind == PLAN_PROG_UPROBE && pp->site_count > 0)
			err = attach_prog(s, i, fd);
		if (err)
			return err; /* the caller detaches what is already attached */
	}
	if (s->opts->verbose)
		diag_print(DIAG_INFO, "attached %d sites with %d uprobe_multi links in %.1f ms",
			   s->nattached_sites, s->nlinks, (double)(now_ns() - t0) / 1e6);
	return 0;
}

/* Closing a uprobe_multi link waits for an RCU-tasks-trace grace period (~45 ms here),
 * one link after the other: 32 clauses took 1.5 s to detach. Closes issued concurrently
 * share grace periods, so each link gets its own thread (at most RT_DETACH_THREADS). */
#define RT_DETACH_THREADS 64

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

static void close_links(int *fds, int n)
{
	int nt = n < RT_DETACH_THREADS ? n : RT_DETACH_THREADS;
	pthread_t th[RT_DETACH_THREADS];
	struct detach_job jobs[RT_DETACH_THREADS];
	int started = 0;

	for (int t = 1; t < nt; t++) {
		jobs[t] = (struct detach_job){fds + t, n - t, nt};
		if (pthread_create(&th[t], NULL, detach_worker, &jobs[t]))
			break;
		started = t;
	}
	/* This thread closes slot 0 and whatever no thread could be started for. */
	for (int t = started + 1; t < nt; t++) {
		jobs[t] = (struct detach_job){fds + t, n - t, nt};
		detach_worker(&jobs[t]);
	}
	jobs[0] = (struct detach_job){fds, n, nt};
	detach_worker(&jobs[0]);
	for (int t = 1; t <= started; t++)
		pthread_join(th[t], NULL);
}

void rt_session__detach(struct rt_session *s)
{
	if (!s->nlinks) {
		free(s->links);
		s->links = NULL;
		return;
	}
	uint64_t t0 = now_ns();
	close_links(s->links, s->nlinks);
	if (s->opts->verbose)
		diag_print(DIAG_INFO, "detached %d links in %.1f ms", s->nlinks,
			   (double)(now_ns() - t0) / 1e6);
	free(s->links);
	s->links = NULL;
	s->nlinks = 0;
}
