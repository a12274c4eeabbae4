/* attach_kprobe: kernel functions. kfunc:/kretfunc: programs attach as they were loaded
 * (fentry/fexit on one function each, a raw-tracepoint link). kprobe: and kretprobe:
 * sites get one perf event of the kprobe PMU each (the kernel function by name, plus the
 * offset), the program attached by a BPF_PERF_EVENT link whose cookie is the site's id
 * (`func`, `probe`). A kprobe fires in every process; under -c or -p the program itself
 * keeps the traced one's (cg_stmt.c). */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/diag.h"
#include "common/util.h"
#include "runtime/rt_priv.h"

int rt_attach_fentry(struct rt_session *s, const struct plan_prog *pp, int prog_fd)
{
	int fd = bpf_raw_tracepoint_open(NULL, prog_fd);
	if (fd < 0) {
		int err = -errno;
		diag_fatal("cannot attach %s: %s", s->plan->sites[pp->site_begin].probe,
			   strerror(-err));
		return err;
	}
	s->links[s->nlinks++] = fd;
	s->nattached_sites++;
	return 0;
}

int rt_attach_kprobes(struct rt_session *s, const struct plan_prog *pp, int prog_fd)
{
	const struct rt_features *f = rt_features_probe(RT_FEAT_REST);
	if (f->kprobe_type < 0) {
		diag_fatal("this kernel has no kprobes (CONFIG_KPROBE_EVENTS): kprobe: and "
			   "kretprobe: probes cannot attach");
		return -ENOTSUP;
	}
	int err = rt_perf_reserve_fds((size_t)s->nlinks + 2 * (size_t)pp->site_count);
	int skipped = 0;
	const char *first = NULL;
	for (int i = 0; i < pp->site_count && !err; i++) {
		int id = pp->site_begin + i;
		const struct plan_site *site = &s->plan->sites[id];
		/* no pid: the function runs in any task */
		int pfd = rt_perf_probe_open(f->kprobe_type, f->kprobe_ret_bit, site->func,
					     site->file_off, 0, pp->kprobe_return);
		int fd = pfd;
		if (pfd >= 0) {
			fd = rt_perf_link_create(prog_fd, pfd, (uint64_t)id);
			if (fd < 0)
				close(pfd);
		}
		if (fd >= 0) {
			s->links[s->nlinks++] = pfd;
			s->links[s->nlinks++] = fd;
			s->nattached_sites++;
		} else if (!site->sole && (fd == -ENOENT || fd == -EINVAL || fd == -EADDRNOTAVAIL)) {
			/* a wildcard's function the kernel will not probe (blacklisted, gone with
			 * its module): left out, as bpftrace does */
			if (!skipped++)
				first = site->probe;
			if (s->opts->verbose)
				diag_print(DIAG_INFO, "%s: skipped: %s", site->probe, strerror(-fd));
		} else if (fd == -EILSEQ) {
			err = fd;
			diag_fatal("cannot attach %s: +%llu is not an instruction boundary of %s "
				   "that the kernel can probe", site->probe,
				   (unsigned long long)site->file_off, site->func);
		} else {
			err = fd;
			diag_fatal("cannot attach %s: %s", site->probe, strerror(-err));
		}
	}
	if (!err && skipped)
		diag_print(DIAG_WARNING, "skipped %d of %d functions the kernel would not probe: %s%s",
			   skipped, pp->site_count, first,
			   skipped > 1 ? " ... (-v lists all)" : "");
	return err;
}
