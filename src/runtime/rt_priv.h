/* rt_priv: what the parts of the runtime share. One rt_session lives for one rt_run();
 * every resource in it starts "absent" (NULL / -1 / 0) so the one cleanup path can
 * release whatever was acquired, in any state. */
#ifndef GT_RT_PRIV_H
#define GT_RT_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "common/plan.h"
#include "common/util.h"
#include "runtime/rt.h"
#include "runtime/rt_maps.h"
#include "runtime/rt_value.h"

/* BPF_TRACE_UPROBE_MULTI: Debian 12's UAPI headers (6.1) predate it (kernel 6.6). */
#define RT_ATTACH_UPROBE_MULTI 48

/* A site the kernel would not attach (its instruction, its offset): left out of a
 * wildcard with a warning, fatal for a probe that named this one function. */
struct rt_refused {
	int site; /* plan.sites index */
	int err;  /* negative errno */
};

struct bpf_object;
struct bpf_program;
struct ring_buffer;
struct rt_execmaps;
struct rt_output;
struct strbuf;

struct rt_session {
	struct gt_plan *plan;
	const struct rt_options *opts;

	/* load.c */
	struct bpf_object *obj;
	struct bpf_program **progs; /* [plan->nprogs], by fn_name */
	char **log_bufs;            /* [plan->nprogs] verifier logs, while loading */
	int *target_fds; /* [plan->nprogs] fentry:bpf: the target programs, while loading */
	int events_fd, lost_fd, config_fd; /* map fds owned by obj, -1 when absent */
	bool lost_percpu;

	/* attach.c, attach_perf.c */
	enum rt_attach_path path; /* of uprobe programs: uprobe_multi or perf-event uprobes */
	int *links; /* link and perf event fds, closed on detach */
	int nlinks;
	int nuprobe_links; /* of them: uprobe_multi links or perf-event uprobes */
	int first_uprobe_link; /* index in links of the first of them */
	/* links[rank_end[r + 1] .. rank_end[r]) are of the programs of attach rank r
	 * (rank_end[PLAN_ATTACH_NRANKS] = 0): detached rank by rank, lowest first */
	int rank_end[PLAN_ATTACH_NRANKS + 1];
	int nattached_sites;
	VEC(struct rt_refused) refused; /* sites the kernel refused, left out */
	VEC(int) timers; /* interval/profile events, opened disabled: started after BEGIN */
	VEC(char *) tracefs_events; /* attach_tracefs.c: GROUP/NAME, removed after detach */
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

	/* output.c + run.c */
	FILE *out;
	bool out_owned;
	struct rt_output *output;
	struct rt_maps *maps; /* @maps: print(@m), clear, zero, the dump at the end */
	struct ring_buffer *rb;
	uint64_t lost_reported;
};

/* load.c */
int rt_session__load(struct rt_session *s);
void rt_report_refused(struct rt_session *s); /* attach.c: the sites left out */
void rt_session__unload(struct rt_session *s);
void rt_libbpf_print_init(bool verbose);
void rt_libbpf_print_restore(void);

/* jit.c */
int rt_session__dump_jit(struct rt_session *s, FILE *out);

/* proglines.c: a loaded program's source lines, by offset in its dumped JIT image */
struct rt_src_line {
	uint32_t off;     /* of the first instruction the line produced */
	uint32_t idx;     /* the record's place in the kernel's list (order of the BPF code) */
	const char *file; /* as the compiler named it (in btf) */
	uint32_t line, col;
};
struct rt_prog_lines {
	struct rt_src_line *v; /* [n], by off */
	int n;
	struct btf *btf;
};
/* 0; -ENODATA when the kernel holds no line info for the program (no BTF, no JIT, an
 * older kernel, addresses hidden); or a negative errno. */
int rt_prog_lines__load(struct rt_prog_lines *pl, int prog_fd);
void rt_prog_lines__free(struct rt_prog_lines *pl);

/* attach.c */
/* A raw BPF_LINK_CREATE of type uprobe_multi (libbpf 1.1 has no wrapper): the link fd, or
 * a negative errno. */
int rt_uprobe_multi_link_create(int prog_fd, const char *path, const uint64_t *offsets,
				const uint64_t *cookies, uint32_t cnt, pid_t pid, bool ret);
int rt_session__attach(struct rt_session *s);
/* After BEGIN: the interval and profile events start, so that interval:s:1 first fires a
 * second after BEGIN, as in bpftrace (which attaches them after it). */
int rt_session__start_timers(struct rt_session *s);
void rt_session__detach(struct rt_session *s);
/* Whether an attach error is about the site (its instruction or offset: the kernel
 * refuses it) rather than the file, the process or the machine. */
bool rt_attach_err_is_site(int err);
/* Records a refused site: 0, or ERR after a fatal error when the site was the probe's
 * only function (plan_site.sole). */
int rt_session__refuse_site(struct rt_session *s, int site, int err);
/* Closes FDS from parallel threads (each close of a uprobe waits for RCU grace periods,
 * which concurrent closes share). */
void rt_close_fds(int *fds, int n);

/* features.c: probes only WHAT (RT_FEAT_* bits) of what is not known yet; a gotrace
 * run probes what its path needs, --info everything (rt_features_get). */
enum {
	RT_FEAT_MULTI = 1,   /* uprobe_multi */
	RT_FEAT_PERF = 2,    /* the uprobe PMU and cookies on its perf links */
	RT_FEAT_RINGBUF = 4,
	RT_FEAT_REST = 8,
	RT_FEAT_ALL = 15,
};
const struct rt_features *rt_features_probe(unsigned what);

/* attach_perf.c */
/* A uprobe perf event (uretprobe when RET) at OFF of PATH for PID (0: every process):
 * the fd, or a negative errno. */
int rt_perf_probe_open(int type, int ret_bit, const char *name, uint64_t off, pid_t pid,
		       bool ret);
int rt_perf_uprobe_open(const struct rt_features *f, const char *path, uint64_t off, pid_t pid,
			bool ret);
/* A BPF_PERF_EVENT link of PROG_FD to the perf event PFD carrying COOKIE: fd or -errno. */
int rt_perf_link_create(int prog_fd, int pfd, uint64_t cookie);
/* Attaches CNT sites of one target as perf-event uprobes; refused sites are recorded
 * (rt_session__refuse_site). 0 or a negative errno, reported. */
int rt_perf_attach_sites(struct rt_session *s, int prog_fd, const char *path,
			 const uint64_t *offsets, const uint64_t *cookies, uint32_t cnt, bool ret);
/* attach_kprobe.c: a kprobe perf event for each site of the KPROBE program PP (the
 * site's id its cookie). 0 or a negative errno, reported. */
int rt_attach_kprobes(struct rt_session *s, const struct plan_prog *pp, int prog_fd);
/* PP (kprobe:/kretprobe:) attaches through one kprobe_multi link: loaded with that attach
 * type. */
bool rt_kprobe_multi(const struct plan_prog *pp);
/* ... and a FENTRY program: 0 or a negative errno, reported. */
int rt_attach_fentry(struct rt_session *s, const struct plan_prog *pp, int prog_fd);
/* attach_tracefs.c */
/* Whether tracefs's uprobe_events can be written (mounted, root). */
bool rt_tracefs_usable(void);
/* Attaches CNT sites of program PI (one target) as one tracefs uprobe event, or as
 * perf-event uprobes where the target is not an executable; refused sites are recorded.
 * 0 or a negative errno, reported. */
int rt_tracefs_attach_sites(struct rt_session *s, int pi, int prog_fd, const char *path,
			    const uint64_t *offsets, const uint64_t *cookies, uint32_t cnt);
/* Removes the events attach made (after their perf events are closed). */
void rt_tracefs_remove_events(struct rt_session *s);
/* Raises RLIMIT_NOFILE for NFDS more descriptors: 0, or -EMFILE reported. */
int rt_perf_reserve_fds(size_t nfds);

/* child.c */
int rt_child__spawn(struct rt_session *s);
int rt_child__release(struct rt_session *s);
/* Hands SYM the -c child's mappings the kernel recorded since the last call (its exec's:
 * a PIE's load bias, even once the child is gone). */
void rt_child__learn_maps(struct rt_session *s, const struct rt_symbolizer *sym);
int rt_target__open(struct rt_session *s, pid_t pid);
/* The run ends with ROOT (a -c command followed into the program traced), and ROOT is
 * the child stopped and reaped at the end. */
void rt_target__end_with(struct rt_session *s, pid_t root);
bool rt_target__gone(struct rt_session *s);
void rt_child__stop(struct rt_session *s, bool terminate);

/* output.c */
struct rt_output *rt_output__new(const struct gt_plan *plan, FILE *f, bool json, int *err);
void rt_output__free(struct rt_output *o);
int rt_output__handle(void *ctx, void *data, size_t size); /* ring_buffer_sample_fn */
bool rt_output__exit_seen(const struct rt_output *o);
int rt_output__exit_status(const struct rt_output *o); /* exit(N): N, else 0 */
/* The script, for the located warnings of -k. */
void rt_output__set_src(struct rt_output *o, const struct diag_src *src);
/* While discarding (after exit()), records are consumed and not printed. */
void rt_output__set_discard(struct rt_output *o, bool discard);
/* Who gets the call-graph records (NULL: they are dropped); its finish() is called by
 * rt_output__free, before the output is closed. */
void rt_output__set_consumer(struct rt_output *o, const struct rt_consumer *c);
/* The maps print(@m) / clear(@m) / zero(@m) events act on (NULL: none). */
void rt_output__set_maps(struct rt_output *o, struct rt_maps *maps);
void rt_output__lost(struct rt_output *o, uint64_t n);
uint64_t rt_output__records(const struct rt_output *o);

#endif
