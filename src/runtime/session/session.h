/* session: the runtime's lowest room: the state of one run, and the process it traces
 * (child.c: the -c child and the -p target; execmaps.c: the child's exec mappings).
 * One rt_session lives for one rt_run() (run/run.c). The rooms above fill their parts of
 * it (load/: the object and its programs, attach/: the links, run/: the output) and read
 * the parts filled before their turn (attach/ attaches the programs load/ loaded), which
 * is why the struct sits below them all. Every resource in it starts "absent" (NULL / -1
 * / 0) so the one cleanup path can release whatever was acquired, in any state. */
#ifndef GT_RT_SESSION_H
#define GT_RT_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "common/plan.h"
#include "common/util.h"
#include "runtime/rt.h"

struct bpf_object;
struct bpf_program;
struct ring_buffer;
struct rt_execmaps;
struct rt_maps;
struct rt_output;
struct rt_refused;

struct rt_session {
	struct gt_plan *plan;
	const struct rt_options *opts;

	/* load/ */
	struct bpf_object *obj;
	struct bpf_program **progs; /* [plan->nprogs], by fn_name */
	char **log_bufs;            /* [plan->nprogs] verifier logs, while loading */
	int *target_fds; /* [plan->nprogs] fentry:bpf: the target programs, while loading */
	int events_fd, lost_fd, config_fd; /* map fds owned by obj, -1 when absent */
	bool lost_percpu;

	/* attach/ */
	enum rt_attach_path path; /* of uprobe programs: uprobe_multi or perf-event uprobes */
	int *links; /* link and perf event fds, closed on detach */
	int nlinks;
	int nuprobe_links; /* of them: uprobe_multi links or perf-event uprobes */
	int first_uprobe_link; /* index in links of the first of them */
	/* links[rank_end[r + 1] .. rank_end[r]) are of the programs of attach rank r
	 * (rank_end[PLAN_ATTACH_NRANKS] = 0): detached rank by rank, lowest first */
	int rank_end[PLAN_ATTACH_NRANKS + 1];
	int nattached_sites;
	VEC(struct rt_refused) refused; /* sites the kernel refused, left out (attach/attach.h) */
	VEC(int) timers; /* interval/profile events, opened disabled: started after BEGIN */
	VEC(char *) tracefs_events; /* attach/attach_tracefs.c: GROUP/NAME, removed after detach */
	int tracefs_seq;            /* events made so far (names them) */

	/* child.c: -c child and -p target */
	pid_t pid;          /* effective pid filter, 0 = any process */
	pid_t child;        /* -c child until reaped, else 0 */
	int gate_fd;        /* write end of the pipe the child waits on before execve */
	int exec_err_fd;    /* read end: the child's errno if execve fails, EOF on success */
	struct rt_execmaps *execmaps; /* the child's exec mappings (execmaps.c), or NULL */
	int pidfd;          /* pidfd of the traced process (-c or -p), -1 if none */
	int more_pidfds[PLAN_MAX_PIDS - 1]; /* of opts->more_pids, -1 if none */
	bool child_exited;  /* reaped; child_status holds the wait status */
	int child_status;

	/* run/, with output/ */
	FILE *out;
	bool out_owned;
	struct rt_output *output;
	struct rt_maps *maps; /* @maps: print(@m), clear, zero, the dump at the end */
	struct ring_buffer *rb;
	uint64_t lost_reported;
};

/* child.c */
int rt_child__spawn(struct rt_session *s);
int rt_child__release(struct rt_session *s);
/* Hands SYM the -c child's mappings the kernel recorded since the last call (its exec's:
 * a PIE's load bias, even once the child is gone). */
void rt_child__learn_maps(struct rt_session *s, const struct rt_symbolizer *sym);
int rt_target__open(struct rt_session *s, pid_t pid);
/* prefault.c: every page of PID's non-executable mappings of its own binary made
 * present in its page tables, so that probes can read them: the pages read, or -errno. */
long rt_prefault__process(pid_t pid);
/* The run ends with ROOT (a -c command followed into the program traced), and ROOT is
 * the child stopped and reaped at the end. */
void rt_target__end_with(struct rt_session *s, pid_t root);
bool rt_target__gone(struct rt_session *s);
void rt_child__stop(struct rt_session *s, bool terminate);

#endif
