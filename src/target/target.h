/* target: the processes gotrace traces besides the -c child it starts itself: a -p
 * process in any mount or pid namespace, and (follow.c) the programs a -c command runs
 * in its descendants. */
#ifndef GT_TARGET_H
#define GT_TARGET_H

#include <sys/types.h>

/* The program PID runs, as a path that reaches it from here ("/proc/PID/exe"); NULL
 * after one clear message (no such process, a kernel thread, unreadable). */
char *target_pid_program(pid_t pid);
/* -p given several times: each of MORE runs the program FIRST runs (one script, one
 * program). 0, or -errno after one message. */
int target_same_program(pid_t first, const pid_t *more, int nmore);

#endif
