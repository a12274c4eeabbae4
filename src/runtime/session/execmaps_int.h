/* execmaps_int: the executable mappings a -c child's execve makes, recorded by the kernel
 * (PERF_RECORD_MMAP2) so that they can be read after the child has exited
 * (execmaps.c), for child.c: session/'s own. */
#ifndef GT_RT_EXECMAPS_INT_H
#define GT_RT_EXECMAPS_INT_H

#include <sys/types.h>

#include "runtime/rt.h"

struct rt_execmaps;

/* Starts recording the mappings of PID from its next execve on (PID is forked, not yet
 * exec'd). NULL when perf events cannot do it: /proc/PID/maps alone is read then. */
struct rt_execmaps *rt_execmaps__open(pid_t pid);
/* Calls FN for each mapping recorded since the last call, oldest first: how many.
 * NULL EM: none. */
typedef void (*rt_execmaps_fn)(void *ctx, const struct rt_mapping *m);
int rt_execmaps__drain(struct rt_execmaps *em, rt_execmaps_fn fn, void *ctx);
void rt_execmaps__close(struct rt_execmaps *em);

#endif
