/* child: the -c command and the -p process.
 *
 * The -c child is forked before anything is attached and waits on a pipe before execve,
 * so none of its code runs untraced: its pid is known when the uprobe_multi links are
 * created (pid filter), and it execs only after BEGIN has run.
 *
 * The uprobe_multi pid filter keeps matching across the child's execve (same pid, new
 * address space; breakpoints are installed when the exec maps the binary). Verified on
 * 6.18 by tests/unit/rt_selftest: the child's events arrive with gt_config.filter_pid ==
 * its tgid, and another process running the same binary meanwhile is filtered out. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/diag.h"
#include "common/util.h"
#include "runtime/rt_priv.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* How long a -c child gets to exit after SIGTERM before SIGKILL. */
#define RT_CHILD_TERM_MS 2000

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static ssize_t read_full(int fd, void *buf, size_t n)
{
	ssize_t r;
	do
		r = read(fd, buf, n);
	while (r < 0 && errno == EINTR);
	return r;
}

/* Runs in the forked child: wait for the go-ahead, then exec. Never returns. */
static void __attribute__((noreturn)) child_main(char **argv, int gate_rd, int err_wr)
{
	sigset_t none;
	char go;

	/* SIG_IGN survives execve; the command must start with default dispositions. */
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* EOF instead of the byte: gotrace gave up (load/attach failed or it died). */
	if (read_full(gate_rd, &go, 1) != 1)
		_exit(127);
	execvp(argv[0], argv);
	int e = errno;
	ssize_t w = write(err_wr, &e, sizeof(e));
	(void)w;
	_exit(127);
}

int rt_child__spawn(struct rt_session *s)
{
	char **argv = s->opts->child_argv;
	int gate[2] = {-1, -1}, errp[2] = {-1, -1};
	int err = 0;

	if (pipe2(gate, O_CLOEXEC) || pipe2(errp, O_CLOEXEC)) {
		err = -errno;
		diag_fatal("cannot start %s: %s", argv[0], strerror(-err));
		goto cleanup;
	}
	/* The child inherits stdio buffers; it never flushes them (_exit or execve). */
	pid_t pid = fork();
	if (pid < 0) {
		err = -errno;
		diag_fatal("cannot start %s: %s", argv[0], strerror(-err));
		goto cleanup;
	}
	if (pid == 0) {
		close(gate[1]);
		close(errp[0]);
		child_main(argv, gate[0], errp[1]);
	}
	s->child = pid;
	s->gate_fd = gate[1];
	s->exec_err_fd = errp[0];
	gate[1] = errp[0] = -1;
	s->pid = pid;
	/* readable when the child exits: the run loop waits on it with the ring buffer */
	long pfd = syscall(SYS_pidfd_open, pid, 0);
	s->pidfd = pfd < 0 ? -1 : (int)pfd;
cleanup:
	close_fd(&gate[0]);
	close_fd(&gate[1]);
	close_fd(&errp[0]);
	close_fd(&errp[1]);
	return err;
}

static void child_reap(struct rt_session *s)
{
	int status;
	pid_t r;
	do
		r = waitpid(s->child, &status, 0);
	while (r < 0 && errno == EINTR);
	if (r == s->child) {
		s->child_exited = true;
		s->child_status = status;
	}
	s->child = 0;
}

int rt_child__release(struct rt_session *s)
{
	char go = 1;
	int e = 0;

	if (!s->child || s->gate_fd < 0)
		return 0;
	ssize_t w = write(s->gate_fd, &go, 1);
	close_fd(&s->gate_fd);
	if (w != 1) {
		e = errno;
		diag_fatal("cannot start %s: %s", s->opts->child_argv[0], strerror(e));
		return -e;
	}
	/* EOF: the CLOEXEC write end went away in a successful execve. */
	ssize_t r = read_full(s->exec_err_fd, &e, sizeof(e));
	close_fd(&s->exec_err_fd);
	if (r == (ssize_t)sizeof(e)) {
		diag_fatal("cannot run %s: %s", s->opts->child_argv[0], strerror(e));
		child_reap(s);
		return -e;
	}
	return 0;
}

int rt_target__open(struct rt_session *s, pid_t pid)
{
	if (pid <= 0 || (kill(pid, 0) && errno == ESRCH)) {
		diag_fatal("no process with pid %d", (int)pid);
		return -ESRCH;
	}
	s->pid = pid;
	/* A pidfd turns readable when the process exits, zombie or not, which kill(pid, 0)
	 * cannot tell; without one (old kernel) fall back to kill(). */
	long fd = syscall(SYS_pidfd_open, pid, 0);
	s->pidfd = fd < 0 ? -1 : (int)fd;
	return 0;
}

bool rt_target__gone(struct rt_session *s)
{
	if (s->child) {
		int status;
		pid_t r = waitpid(s->child, &status, WNOHANG);
		if (r == s->child) {
			s->child_exited = true;
			s->child_status = status;
			s->child = 0;
			return true;
		}
		return r < 0 && errno == ECHILD; /* someone else reaped it */
	}
	if (s->opts->child_argv)
		return s->child_exited;
	if (!s->pid)
		return false;
	if (s->pidfd >= 0) {
		struct pollfd p = {.fd = s->pidfd, .events = POLLIN};
		return poll(&p, 1, 0) > 0;
	}
	return kill(s->pid, 0) && errno == ESRCH;
}

/* Ends the -c child: SIGKILL if it never got to exec (none of its code ran), SIGTERM and
 * then SIGKILL after RT_CHILD_TERM_MS if `terminate`, else only reap it. Never touches a
 * -p process. */
void rt_child__stop(struct rt_session *s, bool terminate)
{
	if (s->child) {
		if (s->gate_fd >= 0) {
			kill(s->child, SIGKILL);
		} else if (terminate) {
			kill(s->child, SIGTERM);
			for (int ms = 0; ms < RT_CHILD_TERM_MS; ms += 10) {
				int status;
				pid_t r = waitpid(s->child, &status, WNOHANG);
				if (r == s->child) {
					s->child_exited = true;
					s->child_status = status;
					s->child = 0;
					break;
				}
				nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
			}
			if (s->child)
				kill(s->child, SIGKILL);
		}
		if (s->child)
			child_reap(s);
	}
	close_fd(&s->gate_fd);
	close_fd(&s->exec_err_fd);
	close_fd(&s->pidfd);
}
