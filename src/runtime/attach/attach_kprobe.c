/* attach_kprobe: kernel functions. kfunc:/kretfunc: programs attach as they were loaded
 * (fentry/fexit on one function each, a raw-tracepoint link). A kprobe: or kretprobe:
 * program of several functions (a wildcard) gets one kprobe_multi link where the kernel
 * has them (5.18), as bpftrace does: one link is made in milliseconds, where a perf
 * event a function costs each its own creation and teardown. Otherwise its sites get one
 * perf event of the kprobe PMU each (the kernel function by name, plus the
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
#include "runtime/attach/attach.h"

int rt_attach_fentry(struct rt_session *s, const struct plan_prog *pp, int prog_fd)
{
	int fd = bpf_raw_tracepoint_open(NULL, prog_fd);
	if (fd < 0) {
		int err = -errno;
		/* ENOTSUPP (524, the kernel's own): no BPF trampoline here, as on arm64
		 * before 6.4 (fentry needs ftrace's direct calls) */
		if (err == -524)
			diag_fatal("cannot attach %s: this kernel has no BPF trampolines for "
				   "fentry programs (kfunc:/kretfunc:); kprobe:/kretprobe: work "
				   "instead", s->plan->sites[pp->site_begin].probe);
		else
			diag_fatal("cannot attach %s: %s", s->plan->sites[pp->site_begin].probe,
				   strerror(-err));
		return err;
	}
	s->links[s->nlinks++] = fd;
	s->nattached_sites++;
	return 0;
}

bool rt_kprobe_multi(const struct plan_prog *pp)
{
	return pp->kind == PLAN_PROG_KPROBE && pp->site_count > 1 &&
	       rt_features_probe(RT_FEAT_REST)->kprobe_multi;
}

/* One kprobe_multi link for all of PP's functions, each site's id its cookie: by name,
 * else (6.1 looks names up in vmlinux only, not in modules) by address from kallsyms,
 * leaving out the names kallsyms no longer has (a module gone since). */
static int attach_multi(struct rt_session *s, const struct plan_prog *pp, int prog_fd)
{
	size_t n = (size_t)pp->site_count, k = 0;
	const char **syms = xcalloc(n, sizeof(*syms));
	__u64 *cookies = xcalloc(n, sizeof(*cookies));
	unsigned long *addrs = NULL;
	for (size_t i = 0; i < n; i++) {
		syms[i] = s->plan->sites[pp->site_begin + (int)i].func;
		cookies[i] = (__u64)pp->site_begin + i;
	}
	LIBBPF_OPTS(bpf_link_create_opts, o, .kprobe_multi.syms = syms,
		    .kprobe_multi.cnt = (uint32_t)n, .kprobe_multi.cookies = cookies,
		    .kprobe_multi.flags = pp->kprobe_return ? BPF_F_KPROBE_MULTI_RETURN : 0);
	/* GT_KPROBE_MULTI_BY_ADDRESS=1: the way of kernels before 6.2 on a newer one (tests) */
	bool by_addr = env_flag("GT_KPROBE_MULTI_BY_ADDRESS");
	int fd = by_addr ? -1 : bpf_link_create(prog_fd, 0, BPF_TRACE_KPROBE_MULTI, &o);
	int err = by_addr ? -ESRCH : fd < 0 ? -errno : 0;
	const char *how = "by name";
	if ((err == -ESRCH || err == -ENOENT) && s->opts->sym && s->opts->sym->kernel_addr) {
		addrs = xcalloc(n, sizeof(*addrs));
		for (size_t i = 0; i < n; i++) {
			uint64_t a;
			if (!s->opts->sym->kernel_addr(s->opts->sym->ctx, syms[i], &a)) {
				addrs[k] = (unsigned long)a;
				cookies[k++] = cookies[i];
			} else if (s->opts->verbose) {
				diag_print(DIAG_INFO, "%s: skipped: not in /proc/kallsyms",
					   s->plan->sites[pp->site_begin + (int)i].probe);
			}
		}
		o.kprobe_multi.syms = NULL;
		o.kprobe_multi.addrs = addrs;
		o.kprobe_multi.cnt = (uint32_t)k;
		fd = k ? bpf_link_create(prog_fd, 0, BPF_TRACE_KPROBE_MULTI, &o) : -1;
		err = fd < 0 ? (k ? -errno : -ENOENT) : 0;
		how = "by address";
		if (!err && k < n)
			diag_print(DIAG_WARNING, "skipped %zu of %zu functions the kernel no longer "
				   "has (-v lists them)", n - k, n);
	} else {
		k = n;
	}
	if (err) {
		diag_fatal("cannot attach %s (%d functions, one kprobe_multi link): %s",
			   s->plan->sites[pp->site_begin].probe, pp->site_count, strerror(-err));
	} else {
		s->links[s->nlinks++] = fd;
		s->nattached_sites += (int)k;
		if (s->opts->verbose)
			diag_print(DIAG_INFO, "%s: %zu functions, one kprobe_multi link (%s)",
				   pp->fn_name, k, how);
	}
	free(syms);
	free(cookies);
	free(addrs);
	return err;
}

int rt_attach_kprobes(struct rt_session *s, const struct plan_prog *pp, int prog_fd)
{
	if (rt_kprobe_multi(pp))
		return attach_multi(s, pp, prog_fd);
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
