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
#include "common/spawn.h"
#include "common/util.h"
#include "runtime/session/execmaps_int.h"
#include "runtime/session/session.h"

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

int rt_child__spawn(struct rt_session *s)
{
	struct spawn sp;
	int err = spawn_gated(s->opts->child_argv, &sp);
	if (err)
		return err;
	s->child = sp.pid;
	s->gate_fd = sp.gate_fd;
	s->exec_err_fd = sp.exec_err_fd;
	s->pid = sp.pid;
	s->execmaps = rt_execmaps__open(sp.pid);
	/* readable when the child exits: the run loop waits on it with the ring buffer */
	long pfd = syscall(SYS_pidfd_open, sp.pid, 0);
	s->pidfd = pfd < 0 ? -1 : (int)pfd;
	return 0;
}

/* waitpid of the -c child (FLAGS: 0 or WNOHANG): when it was reaped, its status is kept
 * and s->child cleared. waitpid's result. */
static pid_t child_wait(struct rt_session *s, int flags)
{
	int status;
	pid_t r;
	do
		r = waitpid(s->child, &status, flags);
	while (r < 0 && errno == EINTR);
	if (r == s->child) {
		s->child_exited = true;
		s->child_status = status;
		s->child = 0;
	}
	return r;
}

static void child_reap(struct rt_session *s)
{
	child_wait(s, 0);
	s->child = 0;
}

/* The traced program's data made readable by probes before it runs (prefault.c). */
static void prefault(struct rt_session *s, pid_t pid)
{
	uint64_t t0 = now_ns();
	long n = rt_prefault__process(pid);
	if (!s->opts->verbose)
		return;
	if (n < 0)
		diag_print(DIAG_INFO, "data of pid %d not made present: %s", (int)pid,
			   strerror((int)-n));
	else
		diag_print(DIAG_INFO, "%ld pages of pid %d's data made present in %.1f ms", n,
			   (int)pid, (double)(now_ns() - t0) / 1e6);
}

static void prefault_at_exec(pid_t pid, void *ctx)
{
	prefault(ctx, pid);
}

int rt_child__release(struct rt_session *s)
{
	if (!s->child || s->gate_fd < 0)
		return 0;
	struct spawn sp = {.pid = s->child, .gate_fd = s->gate_fd, .exec_err_fd = s->exec_err_fd,
			   .at_exec = prefault_at_exec, .at_exec_ctx = s};
	s->gate_fd = s->exec_err_fd = -1;
	int err = spawn_release(&sp, s->opts->child_argv[0]);
	if (err)
		s->child = 0; /* reaped */
	return err;
}

static void learn_one(void *ctx, const struct rt_mapping *m)
{
	const struct rt_symbolizer *sym = ctx;
	sym->learn(sym->ctx, m);
}

void rt_child__learn_maps(struct rt_session *s, const struct rt_symbolizer *sym)
{
	if (sym && sym->learn)
		rt_execmaps__drain(s->execmaps, learn_one, (void *)sym);
}

int rt_target__open(struct rt_session *s, pid_t pid)
{
	if (pid <= 0 || (kill(pid, 0) && errno == ESRCH)) {
		diag_fatal("no process with pid %d", (int)pid);
		return -ESRCH;
	}
	s->pid = pid;
	prefault(s, pid);
	/* A pidfd turns readable when the process exits, zombie or not, which kill(pid, 0)
	 * cannot tell; without one (old kernel) fall back to kill(). */
	long fd = syscall(SYS_pidfd_open, pid, 0);
	s->pidfd = fd < 0 ? -1 : (int)fd;
	for (int i = 0; i < s->opts->nmore_pids && i < PLAN_MAX_PIDS - 1; i++) {
		pid_t p = s->opts->more_pids[i];
		if (kill(p, 0) && errno == ESRCH) {
			diag_fatal("no process with pid %d", (int)p);
			return -ESRCH;
		}
		prefault(s, p);
		fd = syscall(SYS_pidfd_open, p, 0);
		s->more_pidfds[i] = fd < 0 ? -1 : (int)fd;
	}
	return 0;
}

/* One -p process has exited (its pidfd is readable, or kill says so). */
static bool pid_gone(pid_t pid, int pidfd)
{
	if (pidfd >= 0) {
		struct pollfd p = {.fd = pidfd, .events = POLLIN};
		return poll(&p, 1, 0) > 0;
	}
	return kill(pid, 0) && errno == ESRCH;
}

void rt_target__end_with(struct rt_session *s, pid_t root)
{
	if (s->pidfd >= 0)
		close(s->pidfd);
	long fd = syscall(SYS_pidfd_open, root, 0);
	s->pidfd = fd < 0 ? -1 : (int)fd;
	s->child = root;
}

bool rt_target__gone(struct rt_session *s)
{
	if (s->child) {
		pid_t r = child_wait(s, WNOHANG);
		return r > 0 || (r < 0 && errno == ECHILD); /* ECHILD: someone else reaped it */
	}
	if (s->opts->child_argv)
		return s->child_exited;
	if (!s->pid)
		return false;
	/* -p given several times: the run ends when the last of them has exited */
	bool gone = pid_gone(s->pid, s->pidfd);
	for (int i = 0; gone && i < s->opts->nmore_pids; i++)
		gone = pid_gone(s->opts->more_pids[i], s->more_pidfds[i]);
	return gone;
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
				if (child_wait(s, WNOHANG) > 0)
					break;
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
	rt_execmaps__close(s->execmaps);
	s->execmaps = NULL;
	close_fd(&s->pidfd);
	for (int i = 0; i < PLAN_MAX_PIDS - 1; i++)
		close_fd(&s->more_pidfds[i]);
}
