/* attach_tracefs: go: and uprobe: probes where uprobe_multi is missing (kernels before
 * 6.6, or GT_NO_UPROBE_MULTI=1). One tracefs uprobe event per program and target holds
 * all its sites (a multi-probe event, Linux 5.5), opened as one tracepoint perf event with
 * one BPF link (a cookie on it: 5.15). The link's cookie says to find the site by address
 * (GT_LINK_BY_IP, common/bpf_abi.h; map gt_sites).
 *
 * Why: the kernel destroys a perf-event uprobe under its global event_mutex and waits
 * for grace periods each time (~0.1 s on 6.18); one event of 2,000 sites goes with one
 * wait, where 2,000 one-site events took 209 s (docs/performance.md).
 *
 * Only for executables (ET_EXEC, or a PIE): ip - mm->start_code is then the site's
 * address relative to the binary's first code. A shared library's sites, and uretprobes
 * (at a uretprobe the IP is the return address), keep one perf-event uprobe a site
 * (attach_perf.c). Events are gotrace_PID/pN_K; those of a gotrace that died are removed
 * when the next one starts. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/diag.h"
#include "common/kbtf.h"
#include "common/util.h"
#include "runtime/attach/attach.h"

/* Sites per event. Adding a probe line costs time in the number of lines already there
 * (the kernel looks the event up among all uprobe events, then compares the probe with
 * the event's others): docker's 35,103 sites took 20 s to write as one event, 14 s as
 * 18 events of 2,048; each event costs a grace period to remove (~0.1 s). */
#define RT_TRACEFS_CHUNK 2048

/* tracefs, when its uprobe_events can be written. It is not mounted from here: without
 * it, go: probes take one perf-event uprobe a site. */
static const char *tracefs_dir(void)
{
	static const char *dir;
	static bool looked;
	if (!looked) {
		looked = true;
		const char *root = tracefs_root(false);
		char p[128];
		snprintf(p, sizeof(p), "%s/uprobe_events", root ? root : "");
		if (root && !access(p, W_OK))
			dir = root;
	}
	return dir;
}

bool rt_tracefs_usable(void)
{
	return tracefs_dir() != NULL;
}

/* offsetof(task_struct, mm) and offsetof(mm_struct, start_code) from the kernel's BTF,
 * each below 64 KiB to fit the link cookie: 0, or -ENOENT. */
static int kernel_offsets(uint64_t *mm_off, uint64_t *start_off)
{
	long mm = kbtf_offsetof("task_struct", "mm");
	long start = kbtf_offsetof("mm_struct", "start_code");
	if (mm < 0 || start < 0 || mm >= 0x10000 || start >= 0x10000)
		return -ENOENT;
	*mm_off = (uint64_t)mm;
	*start_off = (uint64_t)start;
	return 0;
}

/* Whether PATH is an executable (ET_EXEC, or ET_DYN flagged DF_1_PIE) and the lowest
 * vaddr of its executable PT_LOADs: what the kernel makes mm->start_code (plus the load
 * bias). */
static bool exe_text_start(const char *path, uint64_t *start)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr eh;
	bool exe = false;
	size_t n = 0;
	uint64_t lo = UINT64_MAX;
	if (!e || !gelf_getehdr(e, &eh) || elf_getphdrnum(e, &n))
		goto out;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph))
			continue;
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && ph.p_vaddr < lo)
			lo = ph.p_vaddr;
		if (ph.p_type == PT_DYNAMIC && eh.e_type == ET_DYN) {
			Elf_Scn *scn = gelf_offscn(e, ph.p_offset);
			Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
			GElf_Dyn dyn;
			for (int k = 0; d && gelf_getdyn(d, k, &dyn); k++)
				if (dyn.d_tag == DT_FLAGS_1 && (dyn.d_un.d_val & DF_1_PIE))
					exe = true;
		}
	}
	exe = (eh.e_type == ET_EXEC || exe) && lo != UINT64_MAX;
	*start = lo;
out:
	if (e)
		elf_end(e);
	close(fd);
	return exe;
}

/* Writes LINES (each ending in '\n') to uprobe_events, whole lines per write: 0 or -errno. */
static int write_events(const char *lines, size_t len)
{
	char p[128];
	snprintf(p, sizeof(p), "%s/uprobe_events", tracefs_dir());
	int fd = open(p, O_WRONLY | O_APPEND | O_CLOEXEC), err = 0;
	if (fd < 0)
		return -errno;
	while (len && !err) {
		size_t n = len;
		if (n > 4000) { /* the kernel parses at most 4 KiB of a write at once */
			n = 4000;
			while (n && lines[n - 1] != '\n')
				n--;
		}
		if (!n || write(fd, lines, n) != (ssize_t)n)
			err = n ? -errno : -EINVAL;
		lines += n;
		len -= n;
	}
	close(fd);
	return err;
}

static void remove_event(const char *name)
{
	char line[96];
	snprintf(line, sizeof(line), "-:%s\n", name);
	write_events(line, strlen(line));
}

/* Removes the events of gotraces that are gone (a crash, SIGKILL). */
static void remove_stale(void)
{
	char p[128], line[4096];
	snprintf(p, sizeof(p), "%s/uprobe_events", tracefs_dir());
	FILE *f = fopen(p, "re");
	VEC(char *) gone = {0};
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		int pid = 0, end = 0;
		/* p:gotrace_PID/NAME PATH:0xOFF: one line per site, the event named in each */
		if (sscanf(line, "%*c:gotrace_%d/%*[^ ]%n", &pid, &end) < 1 || !end || pid <= 0)
			continue;
		if (kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		line[end] = 0;
		char *name = line + 2;
		if (!gone.n || strcmp(gone.v[gone.n - 1], name))
			vec_push(&gone, xstrdup(name));
	}
	fclose(f);
	for (int i = 0; i < gone.n; i++) {
		remove_event(gone.v[i]);
		free(gone.v[i]);
	}
	vec_free(&gone);
}

/* Creates event NAME over sites [lo, hi), opens and links it: 0, or -errno (the event is
 * removed again then). */
static int open_event(struct rt_session *s, int prog_fd, const char *name, const char *path,
		      const uint64_t *offsets, uint32_t lo, uint32_t hi, uint64_t link_cookie)
{
	struct strbuf sb = {0};
	char p[192];
	int err, pfd = -1, id = 0;
	for (uint32_t i = lo; i < hi; i++)
		strbuf_printf(&sb, "p:%s %s:0x%llx\n", name, path, (unsigned long long)offsets[i]);
	err = write_events(sb.buf, sb.len);
	strbuf_free(&sb);
	if (err)
		goto fail;
	snprintf(p, sizeof(p), "%s/events/%s/id", tracefs_dir(), name);
	FILE *f = fopen(p, "re");
	if (!f || fscanf(f, "%d", &id) != 1)
		err = -ENOENT;
	if (f)
		fclose(f);
	if (err)
		goto fail;
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
		.config = (uint64_t)id,
		.sample_period = 1,
	};
	/* as a perf-event uprobe: the traced process's mm, or every process (on CPU 0) */
	pfd = (int)syscall(__NR_perf_event_open, &attr, s->pid > 0 ? s->pid : -1,
			   s->pid > 0 ? -1 : 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (pfd < 0) {
		err = -errno;
		goto fail;
	}
	int fd = rt_perf_link_create(prog_fd, pfd, link_cookie);
	if (fd < 0) {
		err = fd;
		close(pfd);
		goto fail;
	}
	if (!s->nuprobe_links)
		s->first_uprobe_link = s->nlinks;
	s->links[s->nlinks++] = pfd;
	s->links[s->nlinks++] = fd;
	s->nuprobe_links++;
	s->nattached_sites += (int)(hi - lo);
	vec_push(&s->tracefs_events, xstrdup(name));
	return 0;
fail:
	remove_event(name);
	return err;
}

/* One event over [lo, hi); where the kernel refuses a site, the halves on their own,
 * down to the refused sites (as attach.c does with uprobe_multi links). */
static int attach_range(struct rt_session *s, int pi, int prog_fd, const char *path,
			const uint64_t *offsets, const uint64_t *cookies, uint32_t lo,
			uint32_t hi, uint64_t link_cookie)
{
	char name[64];
	snprintf(name, sizeof(name), "gotrace_%d/p%d_%d", (int)getpid(), pi, s->tracefs_seq++);
	int err = open_event(s, prog_fd, name, path, offsets, lo, hi, link_cookie);
	if (!err || !rt_attach_err_is_site(err))
		return err;
	if (hi - lo == 1)
		return rt_session__refuse_site(s, (int)(cookies[lo] & GT_COOKIE_SITE_MASK), err);
	uint32_t mid = lo + (hi - lo) / 2;
	err = attach_range(s, pi, prog_fd, path, offsets, cookies, lo, mid, link_cookie);
	return err ? err
		   : attach_range(s, pi, prog_fd, path, offsets, cookies, mid, hi, link_cookie);
}

int rt_tracefs_attach_sites(struct rt_session *s, int pi, int prog_fd, const char *path,
			    const uint64_t *offsets, const uint64_t *cookies, uint32_t cnt)
{
	const struct plan_site *sites = s->plan->sites;
	uint64_t mm_off, start_off, text;
	struct bpf_map *m = bpf_object__find_map_by_name(s->obj, GT_MAP_SITES);
	/* no gt_sites: no program of the object asks for its site (as @c = count()) */
	if (kernel_offsets(&mm_off, &start_off) || !exe_text_start(path, &text) || pi > 0xffff ||
	    (m && bpf_map__max_entries(m) < (uint32_t)s->plan->nsites))
		return rt_perf_attach_sites(s, prog_fd, path, offsets, cookies, cnt, false);
	if (!s->tracefs_seq)
		remove_stale();
	for (uint32_t i = 0; m && i < cnt; i++) {
		uint64_t site = cookies[i] & GT_COOKIE_SITE_MASK;
		struct gt_site_key k = {sites[site].vaddr - text, (uint64_t)pi};
		if (bpf_map_update_elem(bpf_map__fd(m), &k, &cookies[i], BPF_ANY)) {
			int err = -errno;
			diag_fatal("cannot write map %s: %s", GT_MAP_SITES, strerror(-err));
			return err;
		}
	}
	uint64_t link = GT_LINK_BY_IP | (uint64_t)pi | mm_off << 16 | start_off << 32;
	int err = 0;
	for (uint32_t lo = 0; lo < cnt && !err; lo += RT_TRACEFS_CHUNK)
		err = attach_range(s, pi, prog_fd, path, offsets, cookies, lo,
				   cnt - lo < RT_TRACEFS_CHUNK ? cnt : lo + RT_TRACEFS_CHUNK, link);
	if (err && !rt_attach_err_is_site(err)) {
		diag_fatal("cannot attach to %s: %s", path, strerror(-err));
		if (s->opts->verbose)
			diag_print(DIAG_INFO, "(tracefs uprobe event of %u sites, pid filter %d)", cnt,
				   (int)s->pid);
	}
	return err;
}

void rt_tracefs_remove_events(struct rt_session *s)
{
	for (int i = 0; i < s->tracefs_events.n; i++) {
		remove_event(s->tracefs_events.v[i]);
		free(s->tracefs_events.v[i]);
	}
	vec_free(&s->tracefs_events);
}
