/* follow: under -c, the program that the command runs in one of its descendants (go
 * test's test binary, go run's build, the program behind a shell or env wrapper),
 * found at its exec and held stopped until it is traced. */
#ifndef GT_FOLLOW_H
#define GT_FOLLOW_H

#include <stdbool.h>
#include <sys/types.h>

struct follow;

/* Is the program at PATH (/proc/PID/exe of a stopped exec) the one to trace? */
typedef bool (*follow_match_fn)(void *ctx, const char *path);

/* Loads the exec watcher, starts ARGV and follows its process tree. 0 or -errno after
 * one message. VERBOSE: each exec and what became of it on stderr (-v). */
int follow__start(struct follow **out, char **argv, bool verbose);
pid_t follow__root(const struct follow *f);
/* Until a program of the tree matches: 0 with *PID, held stopped; -ECHILD when the
 * command ended first; -EINTR on SIGINT/SIGTERM. Execs that do not match run on. */
int follow__wait(struct follow *f, follow_match_fn match, void *ctx, pid_t *pid);
/* After the match: the program held stopped runs (its probes are attached). */
void follow__resume(struct follow *f);
/* While tracing: later execs run on at once. */
void follow__poll(struct follow *f);
/* The command's wait status when follow__wait saw it end. */
bool follow__root_status(const struct follow *f, int *status);
/* Unloads the watcher and lets every process it stopped run. */
void follow__free(struct follow *f);

#endif
