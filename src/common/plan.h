/* plan: what the compiler hands the runtime. Sema fills sites and events, codegen adds
 * the BPF object and the programs, the runtime loads, attaches and formats from it.
 *
 * Ring-buffer record layout (all little endian, 8-byte aligned):
 *   u64 event_id        index into plan.events
 *   args...             each at plan_arg.offset from the record start
 * Integers are 8 bytes. Strings are plan_arg.size bytes, NUL-padded (not necessarily
 * NUL-terminated when full). Site ids are the uprobe cookie (index into plan.sites). */
#ifndef GT_PLAN_H
#define GT_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/diag.h"

/* Names of the maps every generated object has. */
#define PLAN_MAP_EVENTS "gt_events" /* BPF_MAP_TYPE_RINGBUF */
#define PLAN_MAP_LOST "gt_lost"     /* BPF_MAP_TYPE_ARRAY, 1 x u64: ring buffer reserve failures */
#define PLAN_MAP_CONFIG "gt_config" /* BPF_MAP_TYPE_ARRAY, 1 x struct plan_config, set by runtime */
#define PLAN_RINGBUF_SIZE (1u << 22)

/* Values the runtime writes into gt_config before anything is attached. */
struct plan_config {
	uint64_t start_ns; /* bpf_ktime_get_ns() base for `elapsed` */
	uint64_t filter_pid; /* tgid to trace, 0 = any (informational; attach filters too) */
};

enum plan_prog_kind {
	PLAN_PROG_BEGIN,  /* run once by BPF_PROG_TEST_RUN before the trace starts */
	PLAN_PROG_END,    /* run once by BPF_PROG_TEST_RUN after everything is detached */
	PLAN_PROG_UPROBE, /* one uprobe_multi link over sites[site_begin .. +site_count] */
};

struct plan_site {
	const char *target;   /* absolute path of the binary */
	const char *func;     /* Go function name (symbol) */
	const char *probe;    /* full probe name for `probe`, e.g. "go:main.add:entry" */
	uint64_t vaddr;       /* address of the probed instruction */
	uint64_t file_off;    /* file offset of the probed instruction */
	uint32_t cookie_flags; /* cookie = site index | (u64)cookie_flags << 32 */
};

/* cookie_flags bits (runtime-bpf/gt_runtime.h has the same, shifted by 32) */
#define SITE_R14_IS_G 0x1u /* ABIInternal code: R14 holds g at this site */
#define SITE_TRACK 0x2u    /* keep the goroutine's call stack at this entry */

struct plan_prog {
	enum plan_prog_kind kind;
	const char *fn_name; /* function (and program) name in the BPF object */
	int site_begin, site_count;
	int clause_line;     /* script line of the clause, for messages */
};

enum plan_arg_kind {
	PLAN_ARG_INT,        /* 8-byte integer; is_signed tells how %d-style print it */
	PLAN_ARG_STR,        /* `size` bytes of text */
	PLAN_ARG_SITE_FUNC,  /* 8-byte site id -> plan.sites[id].func */
	PLAN_ARG_SITE_PROBE, /* 8-byte site id -> plan.sites[id].probe, or the literal below */
};

struct plan_arg {
	enum plan_arg_kind kind;
	int offset, size;
	bool is_signed;
	const char *literal; /* SITE_PROBE in BEGIN/END: "BEGIN"/"END" (id is ignored) */
};

enum plan_event_kind {
	PLAN_EV_PRINTF, /* fmt + args */
	PLAN_EV_PRINT,  /* print(x): one arg, printed as bpftrace prints a value + newline */
	PLAN_EV_EXIT,   /* exit(): stop the trace */
};

struct plan_event {
	enum plan_event_kind kind;
	const char *fmt;
	struct plan_arg *args;
	int nargs;
	int size; /* record size in bytes */
};

struct gt_plan {
	struct plan_site *sites;
	int nsites;
	struct plan_prog *progs;
	int nprogs;
	struct plan_event *events;
	int nevents;
	void *obj;          /* BPF ELF object (malloc'd) */
	size_t obj_size;
	int filter_pid;     /* -p / -c: only this process (0 = all) */
};

#endif
