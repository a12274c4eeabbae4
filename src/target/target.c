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
#include <string.h>
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
