/* guard: --max-overhead PERCENT, what the probes cost the traced process, watched while
 * it runs, and the verdict that stops them.
 *
 * The cost of a window is, for every attached program, its hits times the uprobe trap
 * (measured at start-up on this machine: guard__new) plus its own run time, both from
 * the kernel's BPF statistics (BPF_ENABLE_STATS: run_cnt, run_time_ns). It is weighed
 * against the CPU time the traced process used in the same window (all its threads,
 * the traps included: they run on its time), so "5" reads "the probes took at most 5%
 * of the program's CPU time", whatever its number of threads. */
#ifndef GT_GUARD_H
#define GT_GUARD_H

#include <stdbool.h>

struct rt_session;
struct guard;

/* Turns the BPF statistics on and measures the trap cost. S: loaded, not attached.
 * 0 and *OUT, or a negative errno after one error message. */
int guard__new(struct guard **out, const struct rt_session *s, double max_percent);
void guard__free(struct guard *g); /* NULL-safe; turns the statistics off */
/* The first window starts: after attach, before the traced process runs on. */
void guard__start(struct guard *g, const struct rt_session *s);
/* How long the event loop may sleep before the window is due (ms, >= 1). */
int guard__timeout_ms(const struct guard *g);
/* Closes the window when it is due: true when the probes cost more than the budget
 * (then guard__report tells what, once they are detached). */
bool guard__over(struct guard *g);
/* The message: the overhead, the budget, the costliest probes and their hits. */
void guard__report(const struct guard *g);

#endif
