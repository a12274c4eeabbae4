/* attach: the kernel's side of a run. What this kernel allows, found by trying
 * (features.c); the programs attached and detached (attach.c: uprobe_multi, timers,
 * tracepoints; attach_perf.c, attach_tracefs.c: uprobes without uprobe_multi;
 * attach_kprobe.c: kernel functions); the per-CPU events lbr() needs (lbr.c); and
 * --max-overhead's watch over what the attached probes cost (guard.c). Above session/
 * (the links are kept in struct rt_session); load/ asks it which attach type a program
 * gets, run/ attaches and detaches. */
#ifndef GT_RT_ATTACH_H
#define GT_RT_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/plan.h"
#include "runtime/rt.h"
#include "runtime/session/session.h"

/* BPF_TRACE_UPROBE_MULTI: Debian 12's UAPI headers (6.1) predate it (kernel 6.6). */
#define RT_ATTACH_UPROBE_MULTI 48

/* A site the kernel would not attach (its instruction, its offset): left out of a
 * wildcard with a warning, fatal for a probe that named this one function. */
struct rt_refused {
	int site; /* plan.sites index */
	int err;  /* negative errno */
};

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
/* The sites left out (refused, or with no probeable entry): one warning. */
void rt_report_refused(struct rt_session *s);
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

/* lbr.c: the per-CPU perf events lbr() needs to find branches recorded (rt_lbr_probe,
 * what --info says of them, is in rt.h). */
struct rt_lbr;

/* Whether the plan calls lbr(). */
bool rt_lbr_wanted(const struct gt_plan *plan);

/* lbr() in a plan on this machine: 0, or -ENOTSUP after one error saying what is missing. */
int rt_lbr_check(void);
/* One branch-recording event per CPU, kept open while the probes run: 0 or -errno (after
 * one error). */
int rt_lbr__open(struct rt_lbr **out);
void rt_lbr__close(struct rt_lbr *l); /* NULL-safe */

/* guard.c: --max-overhead PERCENT, what the probes cost the traced process, watched while
 * it runs, and the verdict that stops them.
 *
 * The cost of a window is, for every attached program, its hits times the uprobe trap
 * (measured at start-up on this machine: guard__new) plus its own run time, both from
 * the kernel's BPF statistics (BPF_ENABLE_STATS: run_cnt, run_time_ns). It is weighed
 * against the CPU time the traced process used in the same window (all its threads,
 * the traps included: they run on its time), so "5" reads "the probes took at most 5%
 * of the program's CPU time", whatever its number of threads. */
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
