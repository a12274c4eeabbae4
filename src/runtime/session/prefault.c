/* prefault: the traced program's data pages made present before a probe reads them.
 *
 * A BPF program cannot fault a page in: bpf_probe_read_user fails on a page the process
 * has mapped but not yet touched. A Go string constant lives in .rodata, which a program
 * touches page by page as its own code first reads it, so a probe that reads a literal
 * before the program does read nothing (test_gomatrix's `print() as %+v` on a PIE: the
 * first call's Use: empty, one run in a few). bpftrace 0.17 prints nothing there too.
 *
 * A read of one byte per page with process_vm_readv goes through the kernel's
 * get_user_pages on the target's memory: the same fault as the program's own first read,
 * filled from the page cache. The target's memory is unchanged (a private writable page
 * is mapped read-only until the program writes it, as after its own read); its RSS
 * grows by the shared file pages read. Only the binary's own non-executable mappings
 * (.rodata, .gopclntab, .noptrdata, .data): code is present where it runs. Pages the
 * kernel reclaims later under memory pressure can be missing again: best effort. */
#include "runtime/session/session.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/util.h"

#define PREFAULT_BATCH 512 /* remote iovecs per process_vm_readv (IOV_MAX is 1024) */

/* One byte of each page of [START, END) of PID: the pages read. */
static long touch_range(pid_t pid, uint64_t start, uint64_t end, long page)
{
	struct iovec remote[PREFAULT_BATCH];
	char sink[PREFAULT_BATCH];
	struct iovec local = {.iov_base = sink, .iov_len = sizeof(sink)};
	long done = 0;
	uint64_t at = start;
	while (at < end) {
		int n = 0;
		for (uint64_t a = at; a < end && n < PREFAULT_BATCH; a += (uint64_t)page)
			remote[n++] = (struct iovec){.iov_base = (void *)(uintptr_t)a, .iov_len = 1};
		local.iov_len = (size_t)n;
		ssize_t r = process_vm_readv(pid, &local, 1, remote, (unsigned long)n, 0);
		if (r < 0)
			return done ? done : -errno;
		done += r;
		/* a short read stops at a page that cannot be read: go on after it */
		at += (uint64_t)(r < n ? r + 1 : n) * (uint64_t)page;
	}
	return done;
}

long rt_prefault__process(pid_t pid)
{
	char path[64];
	struct stat exe;
	/* the tests' way to the unread path (and proof that their pages start cold) */
	const char *no = getenv("GT_NO_PREFAULT");
	if (no && *no && strcmp(no, "0"))
		return -ECANCELED;
	char exe_path[PATH_MAX];
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	ssize_t n_exe = readlink(path, exe_path, sizeof(exe_path) - 1);
	exe_path[n_exe > 0 ? n_exe : 0] = 0;
	if (stat(path, &exe))
		return -errno;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	long page = sysconf(_SC_PAGESIZE), pages = 0;
	char line[4096];
	while (fgets(line, sizeof(line), f)) {
		uint64_t start, end, off, ino;
		unsigned int maj, min;
		char perms[8];
		int at = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n",
			   &start, &end, perms, &off, &maj, &min, &ino, &at) != 7)
			continue;
		/* the binary by its identity, or by its name: on overlayfs (a container's, the
		 * test guests') maps names the file beneath, exe the overlay's own inode */
		line[strcspn(line, "\n")] = 0;
		bool same = (ino == (uint64_t)exe.st_ino && makedev(maj, min) == exe.st_dev) ||
			    (at && exe_path[0] && !strcmp(line + at, exe_path));
		if (!same || perms[0] != 'r' || perms[2] == 'x')
			continue;
		long n = touch_range(pid, start, end, page);
		if (n < 0) {
			pages = pages ? pages : n;
			break;
		}
		pages += n;
	}
	fclose(f);
	return pages;
}
