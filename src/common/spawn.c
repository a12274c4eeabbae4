#include "common/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/diag.h"

static ssize_t read_full(int fd, void *buf, size_t n)
{
	ssize_t r;
	do
		r = read(fd, buf, n);
	while (r < 0 && errno == EINTR);
	return r;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Runs in the forked child: wait for the go-ahead, then exec. Never returns. */
static void __attribute__((noreturn)) child_main(char **argv, int gate_rd, int err_wr,
						 pid_t parent)
{
	sigset_t none;
	char go;

	/* SIG_IGN survives execve; the command must start with default dispositions. */
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* The command dies with gotrace, even a SIGKILLed one (kept across execve); one
	 * that died before this line is seen by the parent check. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	/* EOF instead of the byte: gotrace gave up (load/attach failed or it died). */
	if (read_full(gate_rd, &go, 1) != 1)
		_exit(127);
	execvp(argv[0], argv);
	int e = errno;
	ssize_t w = write(err_wr, &e, sizeof(e));
	(void)w;
	_exit(127);
}

int spawn_gated(char **argv, struct spawn *out)
{
	int gate[2] = {-1, -1}, errp[2] = {-1, -1};
	int err = 0;
	pid_t parent = getpid();

	*out = (struct spawn){.pid = 0, .gate_fd = -1, .exec_err_fd = -1};
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
		child_main(argv, gate[0], errp[1], parent);
	}
	*out = (struct spawn){.pid = pid, .gate_fd = gate[1], .exec_err_fd = errp[0]};
	gate[1] = errp[0] = -1;
cleanup:
	close_fd(&gate[0]);
	close_fd(&gate[1]);
	close_fd(&errp[0]);
	close_fd(&errp[1]);
	return err;
}

/* The child seized (it waits on the gate) so that its execve stops it: true, or false
 * when ptrace is refused and the exec goes on unheld. */
static bool hold_seize(pid_t pid)
{
	return ptrace(PTRACE_SEIZE, pid, 0, (void *)(long)PTRACE_O_TRACEEXEC) == 0;
}

/* After the execve: wait for its stop, call the hook there, let the program go. Anything
 * else that stops it first (a signal, SIGSTOP) is passed on at the detach, unhooked; an
 * exit is left for the caller's waitpid (peeked with WNOWAIT, not reaped). */
static void hold_exec(const struct spawn *sp)
{
	siginfo_t si;
	int st, sig = 0;
	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)sp->pid, &si, WEXITED | WSTOPPED | WNOWAIT | __WALL)) {
			if (errno == EINTR)
				continue;
			return;
		}
		if (si.si_code != CLD_TRAPPED && si.si_code != CLD_STOPPED)
			return; /* gone: the tracer's link went with it */
		if (waitpid(sp->pid, &st, __WALL) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		break;
	}
	if (st >> 8 == (SIGTRAP | (PTRACE_EVENT_EXEC << 8)))
		sp->at_exec(sp->pid, sp->at_exec_ctx);
	else if (st >> 16 != PTRACE_EVENT_STOP && WIFSTOPPED(st))
		sig = WSTOPSIG(st); /* a signal came first: delivered now */
	ptrace(PTRACE_DETACH, sp->pid, 0, (void *)(long)sig);
}

int spawn_release(struct spawn *sp, const char *name)
{
	char go = 1;
	int e = 0;
	bool held = sp->at_exec && hold_seize(sp->pid);
	ssize_t w = write(sp->gate_fd, &go, 1);
	close_fd(&sp->gate_fd);
	if (w != 1) {
		e = errno;
		diag_fatal("cannot start %s: %s", name, strerror(e));
		close_fd(&sp->exec_err_fd);
		return -e;
	}
	/* EOF: the CLOEXEC write end went away in a successful execve. */
	ssize_t r = read_full(sp->exec_err_fd, &e, sizeof(e));
	close_fd(&sp->exec_err_fd);
	if (r == (ssize_t)sizeof(e)) {
		diag_fatal("cannot run %s: %s", name, strerror(e));
		int status;
		while (waitpid(sp->pid, &status, 0) < 0 && errno == EINTR)
			;
		sp->pid = 0;
		return -e;
	}
	if (held)
		hold_exec(sp);
	return 0;
}
