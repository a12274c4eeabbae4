/* spawn: a command started on a gate. The child is forked at once and waits for a byte
 * on the gate before its execve, so nothing of it runs before gotrace is ready (probes
 * attached, or a watcher of its execs loaded); it dies with gotrace (PR_SET_PDEATHSIG,
 * SIGKILL), and starts with default signal dispositions and an empty mask. */
#ifndef GT_SPAWN_H
#define GT_SPAWN_H

#include <sys/types.h>

struct spawn {
	pid_t pid;
	int gate_fd;     /* write one byte: the child execs; close it: the child exits 127 */
	int exec_err_fd; /* EOF after a successful execve, else the child's errno */
	/* Set before spawn_release, or NULL: called with the child held stopped at its new
	 * program's first instruction (ptrace's exec stop), where nothing of it has run yet
	 * and its mappings exist. Skipped when ptrace is refused (Yama's ptrace_scope 3). */
	void (*at_exec)(pid_t pid, void *ctx);
	void *at_exec_ctx;
};

/* 0, or -errno after one message naming ARGV[0]. */
int spawn_gated(char **argv, struct spawn *out);
/* Opens the gate: 0 once ARGV[0] runs; -errno after one message when it could not be
 * run (the child is then reaped). Closes both fds either way. */
int spawn_release(struct spawn *sp, const char *name);

#endif
