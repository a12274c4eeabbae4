/* follow_cmd: which program -c traces: the command's own, or one it runs (go test, go
 * run, wrappers) found by target/follow.c. */
#ifndef GT_FOLLOW_CMD_H
#define GT_FOLLOW_CMD_H

#include <stdbool.h>
#include <sys/types.h>

#include "target/follow.h"

/* Does the script fit the program at PATH (sema passes with it as the target)? */
struct fcmd_fit {
	bool (*fits)(void *ctx, const char *path);
	void *ctx;
};

/* Is the -c program CMD (argv[0] resolved) followed rather than traced itself? BIN: -b. */
bool fcmd_should_follow(const char *cmd, const char *bin, const struct fcmd_fit *fit);
/* Starts ARGV under the watcher and waits for the program to trace: 0 with *OUT and
 * *PID (held stopped: follow__resume lets it run); else -errno after one message, with
 * *STATUS the exit status gotrace should end with (the command's, when it ended first). */
int fcmd_find(char **argv, const char *bin, const struct fcmd_fit *fit, bool verbose,
	      struct follow **out, pid_t *pid, int *status);

#endif
