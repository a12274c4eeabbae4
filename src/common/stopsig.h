/* stopsig: SIGINT and SIGTERM end a run whenever they come (stopsig.c). */
#ifndef GT_STOPSIG_H
#define GT_STOPSIG_H

#include <signal.h>
#include <stdbool.h>

struct stopsig_save {
	struct sigaction intr, term, usr1;
	bool saved;
};

/* Catches SIGINT and SIGTERM (a stop) and SIGUSR1 (print the maps), also where they were
 * inherited ignored, as by a shell's background job. No SA_RESTART: a signal interrupts
 * a wait so the loop notices it at once. A pending stop is kept. SAVE, when not NULL,
 * gets the earlier handlers for stopsig_restore(). */
void stopsig_install(struct stopsig_save *save);
void stopsig_restore(struct stopsig_save *save);
/* The signal that asked to stop, or 0. */
int stopsig_pending(void);
/* Whether SIGUSR1 came since the last call. */
bool stopsig_take_usr1(void);
/* Forgets a stop and a SIGUSR1: the run that took them is over. */
void stopsig_clear(void);

#endif
