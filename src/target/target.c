/* target: a -p process's program.
 *
 * /proc/PID/exe is opened, never its link text: the text names the file in the
 * process's own mount namespace (a container's, where the host has no such path) or
 * ends in " (deleted)" once a deploy replaced the binary; the magic link reaches the
 * file the process runs in both cases. binfo keeps that path (its realpath names
 * another file) and reopens the file through its own descriptor, so names still come
 * after the process exits. */
#include "target/target.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/diag.h"
#include "common/util.h"

char *target_pid_program(pid_t pid)
{
	char exe[64], link[PATH_MAX];
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	if (pid <= 0 || (kill(pid, 0) && errno == ESRCH)) {
		diag_fatal("no process with pid %d", (int)pid);
		return NULL;
	}
	if (readlink(exe, link, sizeof(link) - 1) < 0 && errno == ENOENT) {
		diag_fatal("pid %d runs no program (a kernel thread, or it is exiting)", (int)pid);
		return NULL;
	}
	int fd = open(exe, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		diag_fatal("cannot read the program of pid %d (%s): %s", (int)pid, exe,
			   strerror(errno));
		return NULL;
	}
	close(fd);
	return xstrdup(exe);
}

int target_same_program(pid_t first, const pid_t *more, int nmore)
{
	char a[64], b[64];
	struct stat sa, sb;
	snprintf(a, sizeof(a), "/proc/%d/exe", (int)first);
	if (stat(a, &sa)) {
		diag_fatal("cannot read the program of pid %d (%s): %s", (int)first, a,
			   strerror(errno));
		return -errno;
	}
	for (int i = 0; i < nmore; i++) {
		char *p = target_pid_program(more[i]);
		if (!p)
			return -ESRCH;
		free(p);
		snprintf(b, sizeof(b), "/proc/%d/exe", (int)more[i]);
		if (stat(b, &sb)) {
			diag_fatal("cannot read the program of pid %d (%s): %s", (int)more[i], b,
				   strerror(errno));
			return -errno;
		}
		if (sa.st_dev != sb.st_dev || sa.st_ino != sb.st_ino) {
			char la[PATH_MAX] = "?", lb[PATH_MAX] = "?";
			ssize_t n = readlink(a, la, sizeof(la) - 1);
			la[n > 0 ? n : 1] = 0;
			n = readlink(b, lb, sizeof(lb) - 1);
			lb[n > 0 ? n : 1] = 0;
			diag_fatal("-p: pid %d runs %s and pid %d runs %s: the processes of one run must "
				   "run one program (run gotrace once for each)", (int)first, la,
				   (int)more[i], lb);
			return -EINVAL;
		}
	}
	return 0;
}
