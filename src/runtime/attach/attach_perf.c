/* attach_perf: go: and uprobe: probes on kernels without uprobe_multi (before 6.6), or
 * under GT_NO_UPROBE_MULTI=1: one uprobe perf event per site (the "uprobe" PMU), the
 * program attached to each by a BPF_PERF_EVENT link that carries the site's cookie
 * (kernel 5.15). Go sites are entry-style uprobes even for :return (they sit on RET
 * instructions); only uretprobe: on C functions sets the PMU's retprobe bit.
 *
 * The kernel creates and destroys these events one at a time (under its event_mutex),
 * and each destroy waits for RCU grace periods (~0.1 s on 6.18): threads do not help
 * (measured: docs/performance.md), so sites attach in order, and 2,000 of them take
 * minutes to detach, as with bpftrace. Two fds a site: the event and its link. */
#include <bpf/bpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/diag.h"
#include "common/util.h"
#include "runtime/attach/attach.h"

/* One event of a probe PMU (uprobe or kprobe: their attrs differ only in the type, the
 * return bit and what config1 names, a file or a kernel function). A pid filter: that
 * process (every thread: uprobes filter on its mm); none: every process, with the event
 * on CPU 0 (the program runs on whichever CPU is hit). */
int rt_perf_probe_open(int type, int ret_bit, const char *name, uint64_t off, pid_t pid, bool ret)
{
	struct perf_event_attr attr = {
		.type = (uint32_t)type,
		.size = sizeof(attr),
		.config = ret ? 1ull << ret_bit : 0,
		.config1 = (uint64_t)(uintptr_t)name, /* uprobe_path or kprobe_func */
		.config2 = off,                       /* probe_offset */
	};
	long fd = syscall(__NR_perf_event_open, &attr, pid > 0 ? pid : -1, pid > 0 ? -1 : 0, -1,
			  PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

int rt_perf_uprobe_open(const struct rt_features *f, const char *path, uint64_t off, pid_t pid,
			bool ret)
{
	return rt_perf_probe_open(f->uprobe_type, f->uprobe_ret_bit, path, off, pid, ret);
}

int rt_perf_link_create(int prog_fd, int pfd, uint64_t cookie)
{
	LIBBPF_OPTS(bpf_link_create_opts, o, .perf_event.bpf_cookie = cookie);
	int fd = bpf_link_create(prog_fd, pfd, BPF_PERF_EVENT, &o);
	return fd < 0 ? -errno : fd;
}

int rt_perf_reserve_fds(size_t nfds)
{
	struct rlimit rl;
	/* what is open already (stdio, maps, programs), and the attach threads' fds */
	rlim_t want = (rlim_t)nfds + 256;
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -errno;
	if (rl.rlim_cur >= want)
		return 0;
	rl.rlim_cur = want;
	if (rl.rlim_max < want)
		rl.rlim_max = want; /* root may raise it, up to fs.nr_open */
	if (setrlimit(RLIMIT_NOFILE, &rl)) {
		int err = -errno;
		getrlimit(RLIMIT_NOFILE, &rl);
		diag_fatal("%zu perf-event uprobes need as many open files, and the limit is %llu "
			   "(ulimit -n): %s",
			   nfds, (unsigned long long)rl.rlim_cur, strerror(-err));
		return -EMFILE;
	}
	return 0;
}

int rt_perf_attach_sites(struct rt_session *s, int prog_fd, const char *path,
			 const uint64_t *offsets, const uint64_t *cookies, uint32_t cnt, bool ret)
{
	const struct rt_features *f = rt_features_probe(RT_FEAT_PERF);
	int err = rt_perf_reserve_fds((size_t)s->nlinks + 2 * (size_t)cnt);
	for (uint32_t i = 0; i < cnt && !err; i++) {
		int pfd = rt_perf_uprobe_open(f, path, offsets[i], s->pid, ret), fd = pfd;
		if (pfd >= 0) {
			fd = rt_perf_link_create(prog_fd, pfd, cookies[i]);
			if (fd < 0)
				close(pfd);
		}
		if (fd >= 0) {
			/* The event's fd stays open beside the link: BPF_TASK_FD_QUERY (bpftool
			 * perf show) finds a uprobe through it, not through a link. */
			if (!s->nuprobe_links)
				s->first_uprobe_link = s->nlinks;
			s->links[s->nlinks++] = pfd;
			s->links[s->nlinks++] = fd;
			s->nuprobe_links++;
			s->nattached_sites++;
		} else if (rt_attach_err_is_site(fd)) {
			err = rt_session__refuse_site(s, (int)(cookies[i] & 0xffffffffu), fd);
		} else {
			err = fd;
			diag_fatal("cannot attach to %s: %s", path, strerror(-err));
			if (s->opts->verbose)
				diag_print(DIAG_INFO, "(perf-event uprobe at offset 0x%llx, pid filter %d)",
					   (unsigned long long)offsets[i], (int)s->pid);
		}
	}
	return err;
}
