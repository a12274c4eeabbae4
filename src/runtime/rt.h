/* rt: the run-time half: load the BPF object of a plan, attach, stream and format
 * events, run BEGIN/END, detach everything on every exit path. The runtime's public
 * header for the rest of gotrace; inside, its rooms (session/, attach/, load/, output/,
 * profile/, run/: docs/architecture.md) each have a header of their own. */
#ifndef GT_RT_H
#define GT_RT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "common/plan.h"

struct otlp;
struct rt_output;
struct strbuf;

/* A consumer of the records the runtime does not print itself: those of call-graph
 * mode (PLAN_EV_FG_ENTRY / PLAN_EV_FG_RETURN), in ring-buffer order. */
struct rt_consumer {
	void *ctx;
	/* One record; REC (SIZE bytes, at least the event's size) is valid for the call. */
	void (*record)(void *ctx, struct rt_output *o, int event_id, const void *rec,
		       size_t size);
	/* Once, after the last record (END drained, or a failure), before the output is
	 * closed: what is still pending is printed now. */
	void (*finish)(void *ctx, struct rt_output *o);
	/* Optional: each turn of the event loop (every few ms), for what prints on time. */
	void (*tick)(void *ctx, struct rt_output *o);
	/* Optional: said on stderr once everything is attached, unless -q ("Attaching 12
	 * functions..."): the consumer's output may be a file or JSON, not stdout's text. */
	const char *attached;
};

/* For consumers: the output stream, -f json, and the printf arguments of a record
 * formatted by its event's format. The format's conversions take the event's last
 * arguments; the first SKIP conversions (with the text before them) are left out.
 * JSON strings: strbuf_json_string (common/util.h), the escaper of every JSON output. */
FILE *rt_output_file(struct rt_output *o);
bool rt_output_json(const struct rt_output *o);
void rt_output_format(struct rt_output *o, int event_id, const void *rec, int skip,
		      struct strbuf *out);
/* Call-graph mode: N root calls dropped whole, for REASON ("ring buffer", "memory"): a
 * dropped_root_calls object in -f json, else a warning "N root calls were dropped
 * whole" + WHY. Nothing when N is 0. */
void rt_output_dropped_roots(struct rt_output *o, uint64_t n, const char *reason,
			     const char *why);

/* One frame of a stack, named: the symbolizer's answer for an address. */
struct rt_frame {
	const char *func;  /* NULL: unknown (printed as the address) */
	uint64_t off;      /* from the function's entry */
	const char *file;  /* source file, or NULL */
	int line;
	bool inlined;      /* inlined into the next frame (same address) */
	const char *path;  /* the binary, or NULL (kernel) */
};

/* One mapping of a file into a process, as /proc/PID/maps or the kernel's mmap record
 * gives it. */
struct rt_mapping {
	int pid;
	uint64_t start, pgoff;      /* runtime address, file offset */
	uint32_t maj, min;          /* the file's device */
	uint64_t ino;
	const char *path;
};

/* Names addresses for ustack / kstack (the runtime does not read binaries itself). */
struct rt_symbolizer {
	void *ctx;
	/* The frames of user address PC in process PID, inlined calls expanded, innermost
	 * first; RET: PC is a return address (the call is at PC - 1). Count, 0: unknown. */
	int (*user)(void *ctx, int pid, uint64_t pc, bool ret, struct rt_frame *out, int max);
	/* The kernel symbol holding PC: 1, or 0 when unknown (RET: as for user). */
	int (*kernel)(void *ctx, uint64_t pc, bool ret, struct rt_frame *out);
	/* The address of kernel symbol NAME (kprobe_multi links by address): 0 or -ENOENT. */
	int (*kernel_addr)(void *ctx, const char *name, uint64_t *addr);
	/* The GNU build ID (LEN bytes at ID) of the binary PID maps at user address PC, and
	 * PC's offset in that file (ustack(build_id)): 0, or -ENOENT. */
	int (*build_id)(void *ctx, int pid, uint64_t pc, const uint8_t **id, size_t *len,
			uint64_t *off);
	/* While PID runs: learn where its binary is mapped (a PIE's load bias). True once
	 * known, or when nothing needs learning. */
	bool (*prime)(void *ctx, int pid);
	/* A mapping of a process seen by other means (the -c child's exec, as the kernel
	 * recorded it): learned as prime would have, even once the process is gone. */
	void (*learn)(void *ctx, const struct rt_mapping *m);
};

struct rt_options {
	char **child_argv;       /* -c: argv of the command (argv[0] resolved to a path), or NULL */
	pid_t pid;               /* -p: traced process, or 0 */
	const pid_t *more_pids;  /* -p given again: the other processes (same program) */
	int nmore_pids;          /* < PLAN_MAX_PIDS */
	const char *output_path; /* -o FILE, or NULL for stdout */
	bool json;               /* -f json */
	bool verbose;            /* -v */
	bool quiet;              /* -q: no "Attaching N probes..." */
	const struct diag_src *src; /* the script: -k's warnings point into it */
	bool dry_run;            /* --dry-run: load (verifier) only, attach nothing */
	bool dump_jit;           /* -d jit: disassemble the JIT code of every program */
	const struct rt_consumer *consumer; /* call-graph mode, or NULL */
	struct otlp *otlp;       /* --otlp: printf lines as log records (runtime/otlp), the
				    exporter ticked each turn; or NULL */
	const struct rt_symbolizer *sym;    /* names stacks' addresses, or NULL */
	enum rt_profile_format {
		RT_PROFILE_NONE,
		RT_PROFILE_FOLDED, /* -f folded: maps keyed by stacks as folded stacks */
		RT_PROFILE_PPROF,  /* -f pprof -o FILE: as a gzipped profile.proto */
	} profile;
	const char *profile_path; /* where the profile goes (NULL: the output stream) */
	double max_overhead;      /* --max-overhead PERCENT (runtime/attach/guard.c), 0: off */
	/* -c followed into a program it runs (target/follow.c): the command gotrace started,
	 * whose end ends the run and gives the exit status; `pid` is the program traced,
	 * held stopped until `started` lets it run after BEGIN; `tick` each turn. */
	pid_t follow_root;
	void (*started)(void *ctx);
	void (*tick)(void *ctx);
	void *hook_ctx;
};

/* What the running kernel allows, probed once (attach/features.c). GT_HIDE_FEATURES=a,b (names
 * as in --info: uprobe_multi, perf_uprobe_cookie, tracefs, ringbuf, kprobe_multi) makes it
 * report them absent: how the tests reach the paths of older kernels on a new one. */
struct rt_features {
	bool uprobe_multi;   /* BPF_TRACE_UPROBE_MULTI links (kernel 6.6) */
	bool uprobe_pmu;     /* perf_event_open uprobes */
	bool perf_uprobe_cookie; /* BPF_PERF_EVENT links with a cookie on a uprobe (5.15) */
	bool tracefs;        /* tracefs's uprobe_events is writable (mounted, root) */
	int uprobe_type;     /* the uprobe PMU's perf type, -1 when absent */
	int uprobe_ret_bit;  /* its retprobe bit in attr.config (format/retprobe) */
	bool kprobe_pmu;
	int kprobe_type, kprobe_ret_bit; /* the kprobe PMU's, as uprobe_type/_ret_bit */
	bool kprobe_multi;   /* BPF_TRACE_KPROBE_MULTI links (5.18, fprobe) */
	bool perf_cpu_clock; /* software cpu-clock events: profile:, interval: */
	bool ringbuf;
	bool btf;            /* /sys/kernel/btf/vmlinux */
	bool fentry;
	bool raw_tp, tracepoint;
};
const struct rt_features *rt_features_get(void);
/* A perf-event program may read the current task's user regs (bpf_task_pt_regs, 5.15). */
bool rt_can_read_task_regs(void);
/* A uprobe's user stack at a `push %rbp` holds the caller (Linux 6.11, or a backport):
 * tried once (attach/features.c), or taken as yes on 6.11+ unless TRY_ANYWAY (--info). */
bool rt_uprobe_stack_has_caller(bool try_anyway);

/* Whether this machine records branches for bpf_get_branch_snapshot() (lbr(),
 * attach/lbr.c): 0, or -ENOSYS (no such helper) or the -errno of opening a branch-stack
 * event; WHY in words (--info). */
int rt_lbr_probe(const char **why);

/* How go: (and uprobe:) probes attach on this kernel. */
enum rt_attach_path {
	RT_ATTACH_NONE,         /* neither path works here */
	RT_ATTACH_MULTI,        /* one uprobe_multi link per program and target */
	RT_ATTACH_PERF,         /* one perf-event uprobe per site, with a BPF cookie */
	RT_ATTACH_TRACEFS,      /* one tracefs uprobe event per program and target */
};
/* The path, and why in words for --info and -v (static text). GT_NO_UPROBE_MULTI=1
 * chooses what kernels before 6.6 get where uprobe_multi exists: tracefs events, or
 * perf-event uprobes where tracefs is not mounted (GT_HIDE_FEATURES=tracefs). */
enum rt_attach_path rt_attach_path(const char **why);
/* What the plan needs that this kernel lacks, as ONE error naming the minimum kernel:
 * 0, or -ENOTSUP after the error is printed. */
int rt_features_check(const struct gt_plan *plan, bool attach);

/* Runs the plan to completion. Returns the process exit status: 0 on success,
 * 1 on a runtime failure (load, attach, target vanished), RT_EXIT_OVERHEAD when
 * --max-overhead detached the probes (what was collected is printed). */
#define RT_EXIT_OVERHEAD 3
int rt_run(struct gt_plan *plan, const struct rt_options *opts);

#endif
