/* stopsig: one record of the signals that end or poke a run. main installs it before
 * anything else, so a Ctrl-C during parsing, sema, LLVM or the verifier is kept and
 * honoured at the next stage instead of being lost (a background job of a shell starts
 * with SIGINT ignored; a signal that comes before a handler is set is then dropped). */
#include "common/stopsig.h"


static volatile sig_atomic_t stop_sig;
static volatile sig_atomic_t usr1_seen;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		usr1_seen = 1;
	else if (!stop_sig)
		stop_sig = sig;
}

void stopsig_install(struct stopsig_save *save)
{
	struct sigaction sa = {.sa_handler = on_signal};
	struct sigaction dummy[3];
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, save ? &save->intr : &dummy[0]);
	sigaction(SIGTERM, &sa, save ? &save->term : &dummy[1]);
	sigaction(SIGUSR1, &sa, save ? &save->usr1 : &dummy[2]);
	if (save)
		save->saved = true;
}

void stopsig_restore(struct stopsig_save *save)
{
	if (!save || !save->saved)
		return;
	sigaction(SIGINT, &save->intr, NULL);
	sigaction(SIGTERM, &save->term, NULL);
	sigaction(SIGUSR1, &save->usr1, NULL);
	save->saved = false;
}

int stopsig_pending(void)
{
	return stop_sig;
}

bool stopsig_take_usr1(void)
{
	if (!usr1_seen)
		return false;
	usr1_seen = 0;
	return true;
}

void stopsig_clear(void)
{
	stop_sig = 0;
	usr1_seen = 0;
}
