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

#include "common/bpf_abi.h"
#include "common/diag.h"

/* Names of the maps every generated object has. */
#define PLAN_MAP_EVENTS "gt_events" /* BPF_MAP_TYPE_RINGBUF */
#define PLAN_MAP_LOST "gt_lost"     /* BPF_MAP_TYPE_ARRAY, 1 x u64: ring buffer reserve failures */
#define PLAN_MAP_CONFIG "gt_config" /* BPF_MAP_TYPE_ARRAY, 1 x struct plan_config, set by runtime */
#define PLAN_MAP_FULL "gt_mapfull" /* BPF_MAP_TYPE_ARRAY, nmaps x u64: updates refused (full) */
#define PLAN_RINGBUF_SIZE (1u << 22) /* in the object; runtime/load/load.c sizes it by CPUs */

/* Values the runtime writes into gt_config before anything is attached. */
#define GT_SIGNAME_LEN 24 /* signal_name()'s string: "Real-time signal 30" fits */
#define PLAN_MAX_PIDS 8 /* -p given this many times at most */
struct plan_config {
	uint64_t start_ns; /* bpf_ktime_get_ns() base for `elapsed` */
	uint64_t filter_pid; /* tgid to trace, 0 = any (informational; attach filters too) */
	uint64_t ncpus;      /* possible CPUs: for loops add per-CPU values up over them */
	uint64_t more_pids[PLAN_MAX_PIDS - 1]; /* the other -p tgids, 0 = none */
	uint64_t gate; /* enum plan_gate: when the probes' clauses run (0 here) */
};
#define PLAN_CONFIG_MORE_PIDS 3 /* the u64 index of more_pids[0] */
#define PLAN_CONFIG_GATE (PLAN_CONFIG_MORE_PIDS + PLAN_MAX_PIDS - 1)
/* gt_config.gate: the clauses of the probes (not BEGIN's or END's) run only while it is
 * OPEN, in scripts with a BEGIN probe or an exit(): from BEGIN's end (the runtime opens
 * it; current bpftrace attaches them after BEGIN) to the first exit() (which sets
 * EXITED; bpftrace detaches them as it reads the exit). */
enum plan_gate { PLAN_GATE_CLOSED, PLAN_GATE_OPEN, PLAN_GATE_EXITED };

enum plan_prog_kind {
	PLAN_PROG_BEGIN,  /* run once by BPF_PROG_TEST_RUN before the trace starts */
	PLAN_PROG_END,    /* run once by BPF_PROG_TEST_RUN after everything is detached */
	PLAN_PROG_UPROBE, /* sites[site_begin .. +site_count]: one uprobe_multi link, or one
			     perf-event uprobe a site (runtime/attach/attach_perf.c) */
	PLAN_PROG_PERF,   /* perf software cpu-clock: interval (one CPU) or profile (every CPU) */
	PLAN_PROG_TRACEPOINT, /* a kernel tracepoint (perf event of type tracepoint) */
	PLAN_PROG_KPROBE, /* sites[site_begin .. +site_count]: kernel functions (plan_site.func,
			     file_off the offset into it), one kprobe perf event each */
	PLAN_PROG_FENTRY, /* fentry/fexit on the kernel function of its one site (plan_site.func):
			     kfunc:, kretfunc:; or on that function of the loaded BPF program
			     bpf_prog_id (fentry:bpf:) */
	PLAN_PROG_NKINDS, /* tables by kind have this many entries (checked where they are) */
};

/* The order programs attach in, highest first, and detach in, lowest first: a call that
 * starts while they attach or ends while they detach is then seen whole or not at all. */
enum plan_attach_rank {
	PLAN_ATTACH_OTHER,  /* entries and the rest */
	PLAN_ATTACH_RETURN, /* go: :return programs: before any entry is pushed, the return
			       that pops it (else a frame of a call whose RET was not probed
			       yet, at the same stack level, passes for the next call's) */
	PLAN_ATTACH_BOOKKEEPING, /* oncpu's: which goroutine each thread runs */
	PLAN_ATTACH_NRANKS,
};

struct plan_site {
	const char *target;   /* absolute path of the binary */
	const char *func;     /* Go function name (symbol) */
	const char *probe;    /* full probe name for `probe`, e.g. "go:main.add:entry" */
	uint64_t vaddr;       /* address of the probed instruction */
	uint64_t file_off;    /* file offset of the probed instruction */
	uint32_t cookie_flags; /* GT_SITE_* (common/bpf_abi.h): the cookie's high bits */
	bool sole; /* the probe named this one function: a refusal is fatal, not skipped */
	bool kernel_refuses; /* its instruction is one uprobes refuse (binfo_uprobe_refuses):
				not tried, refused as ENOTSUPP */
};


struct plan_prog {
	enum plan_prog_kind kind;
	const char *fn_name; /* function (and program) name in the BPF object */
	int site_begin, site_count;
	int clause_line;     /* script line of the clause, for messages */
	/* PERF: sample_period in ns (interval, profile:ms/us) or a frequency (profile:hz) */
	uint64_t perf_period_ns, perf_freq;
	bool perf_all_cpus; /* profile: every CPU; interval: CPU 0 only */
	uint32_t perf_type;   /* PERF_TYPE_SOFTWARE (cpu-clock for interval/profile) or _HARDWARE */
	uint64_t perf_config; /* the event: PERF_COUNT_SW_CPU_CLOCK ... */
	bool uprobe_return; /* UPROBE: a uretprobe on a C function (uretprobe:); go: :return
			       sites are entry-style uprobes on RET instructions */
	bool kprobe_return; /* KPROBE: kretprobe:; FENTRY: kretfunc: (fexit) */
	/* FENTRY on a loaded BPF program's function (fentry:bpf:): the program's id, and
	 * the id of its BTF (the cache key: the object is typed from it); 0: a kernel one */
	uint32_t bpf_prog_id, bpf_btf_id;
	/* TRACEPOINT: sema read its format; the id is what perf_event_open wants */
	const char *tp_category, *tp_name;
	int tp_id;
	bool tp_raw; /* a raw tracepoint (tp_name) of the kernel's arguments, not a record */
	enum plan_attach_rank attach_rank;
};

enum plan_arg_kind {
	PLAN_ARG_INT,        /* 8-byte integer; is_signed tells how %d-style print it */
	PLAN_ARG_STR,        /* `size` bytes of text */
	PLAN_ARG_SITE_FUNC,  /* 8-byte site id -> plan.sites[id].func */
	PLAN_ARG_SITE_PROBE, /* 8-byte site id -> plan.sites[id].probe, or the literal below */
	PLAN_ARG_TUPLE,      /* `size` bytes holding the fields, at their offsets in it */
	PLAN_ARG_STRFTIME,   /* 8-byte CLOCK_MONOTONIC ns, printed with strftime(literal) */
	PLAN_ARG_STRERROR,   /* 8-byte errno, printed as strerror(3) */
	PLAN_ARG_USERNAME,   /* 8-byte uid, printed as its user name */
	PLAN_ARG_INET,       /* u64 AF_INET/AF_INET6, 16 bytes: printed by inet_ntop(3) */
	PLAN_ARG_CGROUP_PATH, /* 8-byte cgroup id: "unified:/a/b,cpu:/..." as bpftrace */
	PLAN_ARG_STRUCT,     /* a C struct's bytes: named fields (plan_arg.name) at offsets */
	PLAN_ARG_ARRAY,      /* nfields elements laid out as fields[0], fields[0].size apart */
	PLAN_ARG_BUF,        /* u64 length, then size - 8 bytes: printed with \xNN escapes */
	PLAN_ARG_GO,         /* a Go value printed as Go's %+v (plan_arg.go says what) */
	PLAN_ARG_SYM,        /* 16 bytes: u64 address, u64 pid (enum plan_sym_kind) */
	PLAN_ARG_STACK,      /* 24 bytes: u64 stack id in plan.stackmaps[stack_map] (negative:
				bpf_get_stackid's error), u64 pid, u64 a return address to show
				after the first frame (a go: entry, before the frame is pushed) */
};

/* PLAN_ARG_SYM (plan_arg.stack_mode): what names the address. */
enum plan_sym_kind {
	PLAN_SYM_USER,   /* usym(): the function holding the address */
	PLAN_SYM_KERNEL, /* ksym() */
	PLAN_SYM_CALLER, /* caller: a return address, "func file:line" of the call */
};

/* How a stack prints (bpftrace's ustack(mode)): "    sym+off" lines, or perf's
 * "\taddr sym+off (path)". */
/* raw: addresses only; build_id: a user frame as its file's GNU build ID and offset */
enum plan_stack_mode { PLAN_STACK_BPFTRACE, PLAN_STACK_PERF, PLAN_STACK_RAW, PLAN_STACK_BUILD_ID };

/* A BPF_MAP_TYPE_STACK_TRACE map: ustack / kstack of one depth. */
struct plan_stackmap {
	const char *bpf_name;
	bool kernel;
	int depth;  /* frames a stack of this map prints */
	/* frames the kernel keeps (value: kdepth u64 addresses): depth - 1 where user space
	 * puts back the caller that a go: entry or RET walk skips, else depth */
	int kdepth;
};

/* From PC on the return address is at SP + sp (sp -1: no Go function there). */
struct plan_sprow {
	uint64_t pc;
	int64_t sp;
};

/* What a PLAN_ARG_GO capture holds. Offsets of its parts are from the capture's start;
 * go_off is where the part lies in its parent Go value (for codegen's reads). */
/* Well-known types whose String() fmt calls (where the value is reachable through
 * exported fields only): printed by user space from the captured value. */
enum plan_go_show {
	PGW_NONE,
	PGW_DURATION, /* time.Duration (PG_INT): 1m30.25s */
	PGW_IP,       /* net.IP (PG_SLICE of 16 bytes): 192.168.1.20, 2001:db8::1 */
	PGW_TIME,     /* time.Time (PG_STRUCT wall, ext, loc): 2009-11-10 23:00:00 +0000 UTC */
};

enum plan_go_kind {
	PG_INT,    /* 8 bytes, go_size wide (is_signed) */
	PG_UINT,
	PG_BOOL,
	PG_FLOAT,  /* 8 bytes: the float's bits (go_size 4 or 8) */
	PG_PTR,    /* 8 bytes; fields[0] (optional): the pointee, captured after it (&{...}) */
	PG_ADDR,   /* 8 bytes: a map, chan or func, printed as its address */
	PG_NOREAD, /* nothing: a value in X registers, printed as ? */
	PG_STRING, /* u64 length, then size - 8 bytes of text */
	PG_STRUCT, /* fields (named) */
	PG_ARRAY,  /* go_max elements of fields[0], go_stride apart in memory */
	PG_SLICE,  /* u64 len, u64 cap, then up to go_max elements of fields[0] */
	PG_IFACE,  /* u64 type descriptor, u64 data word, 16 bytes at data, then text
		      (go_stride bytes) of the string header those 16 bytes may be; an
		      `error` of go_chain levels: PLAN_ERR_LEVELS of those, laid out below */
	PG_MAP,    /* u64 count, u64 entries copied, then go_max entries go_stride bytes
		      apart: the key fields[0] then the value fields[1] (go_map: the walk) */
};

/* An `error` captured with what its wrappers (PGS_CHAIN) hold: PLAN_ERR_LEVELS levels of
 * plan_err_level(TEXT) bytes, the next one the wrapped error: at 0 the type (as linked),
 * 8 the data word, 16 and 24 the words at data (a wrapper's: its first string's header),
 * 32 TEXT bytes of the string they may be, then the second and the third string (each a
 * u64 length and TEXT bytes), then two addresses (net.Addr: the source, the address) of
 * PLAN_ERR_ADDR bytes each: the type, the IP's length, 16 bytes of it, the port. */
#define PLAN_ERR_LEVELS 4
#define PLAN_ERR_ADDR 40
static inline int plan_err_text(int text, int k) /* string K (0-2): its bytes, its length before */
{
	return 32 + k * (text + 8);
}
static inline int plan_err_addr(int text, int k) /* address K (0, 1) of a level */
{
	return 32 + 3 * text + 16 + k * PLAN_ERR_ADDR;
}
static inline int plan_err_level(int text)
{
	return plan_err_addr(text, 2);
}

struct plan_arg {
	enum plan_arg_kind kind;
	int offset, size;
	bool is_signed;
	const char *literal; /* SITE_PROBE in BEGIN/END: "BEGIN"/"END" (id is ignored);
				STRFTIME: the format */
	struct plan_arg *fields; /* TUPLE, STRUCT: offsets relative to its start; ARRAY: one */
	int nfields;             /* ARRAY: the number of elements */
	const char *name;        /* a STRUCT field's name */
	enum plan_go_kind go;    /* GO */
	int64_t go_off;          /* GO: offset of the part in its parent Go value */
	int go_size, go_max, go_stride; /* GO: scalar width; elements captured, their step */
	bool go_empty_iface;     /* GO, PG_IFACE: interface{} (type word first), else itab */
	int go_chain;            /* GO, PG_IFACE: an error's levels captured (0: one, no
				    wrapper fields) */
	int stack_map, stack_mode; /* STACK */
	const struct gt_gomap *go_map; /* GO, PG_MAP: how codegen walks the map */
	bool go_rebase;          /* GO, PG_IFACE in a PIE: the type's address is stored as
				    linked (the load bias taken off), as plan.gotypes has it */
	enum plan_go_show go_show; /* GO: a well-known type printed as its String() does */
	bool is_record;          /* STRUCT: a record (named tuple): its JSON is current
				    bpftrace's {"a": 1}, a C struct's 0.17's { "a": 1 } */
	bool is_bool;            /* INT: printed true or false (%d-style formats: 1, 0) */
	bool is_addr;            /* INT: &$x's pointer, printed 0x... as current bpftrace prints
				    pointers (0.17's decimal stays for the others: it has no &) */
	int enum_id;             /* INT: 1 + its plan.enums entry: %s prints the enumerator */
	int bit_shift, bit_width; /* INT: a C bit-field, BIT_WIDTH bits from bit BIT_SHIFT
				     (0..7) of the bytes at offset (width 0: not one) */
	bool go_int;             /* INT: a Go integer (args, rets, retval, duration): %d, %u,
				    %x without a length print all of it, as Go's fmt */
	bool go_key;             /* GO, PG_IFACE as a map key: only what %v shows is kept
				    (the data word is 1 or 0 (nil); the text of a string or
				    errors.New / fmt.Errorf error, an integer's value; nothing
				    of other types, which print as (TYPE)) */
};

/* How an interface holding a value of a runtime type is printed (plan.gotypes). */
enum plan_goshow { PGS_OTHER, PGS_PTR, PGS_PSTR, PGS_INT, PGS_UINT, PGS_BOOL, PGS_STR, PGS_CONST,
		   PGS_ERRNO, PGS_CHAIN, PGS_NETADDR };
/* PGS_CHAIN: which wrapping error (binfo's enum binfo_gochain) */
enum plan_gochain { PGC_NONE, PGC_PATH, PGC_SYSCALL, PGC_URL, PGC_OP, PGC_DNS, PGC_EMBED };
/* plan_gotype.off: PGS_CHAIN's three strings, source and address (net.Addr) and wrapped
 * error; PGS_NETADDR's IP, Port and Zone (the first three) */
enum plan_gooff { PGO_S1, PGO_S2, PGO_S3, PGO_SRC, PGO_ADDR, PGO_NEXT, PGO_N };
enum { PGO_IP, PGO_PORT, PGO_ZONE };
struct plan_gotype {
	uint64_t addr; /* the type descriptor's address (as linked; PIE: unrelocated) */
	const char *name;
	enum plan_goshow show;
	int size;
	const char *text; /* PGS_CONST: the error's text */
	enum plan_gochain chain;
	int off[PGO_N]; /* in the pointee, by plan_gooff; -1: none */
};

enum plan_event_kind {
	PLAN_EV_PRINTF,    /* fmt + args */
	PLAN_EV_PRINT,     /* print(x): one arg, printed as bpftrace prints a value + newline */
	PLAN_EV_EXIT,      /* exit(): stop the trace */
	PLAN_EV_PRINT_MAP, /* print(@m): map_id; dump it now as at exit */
	PLAN_EV_CLEAR_MAP, /* clear(@m): map_id; delete every key */
	PLAN_EV_ZERO_MAP,  /* zero(@m): map_id; set every value to zero, keep the keys */
	PLAN_EV_TIME,      /* time(fmt): strftime(fmt) of the wall clock now (fmt "%H:%M:%S\n" default) */
	PLAN_EV_SYSTEM,    /* system(fmt, args): the formatted command runs, its output printed */
	PLAN_EV_CAT,       /* cat(fmt, args): the formatted file's first 10 KiB printed */
	/* call-graph mode (--funcgraph): handed to the funcgraph consumer, not printed.
	 * FG_ENTRY args: goid, depth, nsecs, site (SITE_FUNC), caller pc (the return
	 *   address), then the fetched arguments formatted by fmt (printf conversions).
	 * FG_RETURN args: goid, depth, nsecs, site (SITE_FUNC), duration, then the results
	 *   --rets fetches, formatted by fmt (NULL: none). */
	PLAN_EV_FG_ENTRY,
	PLAN_EV_FG_RETURN,
	/* FG_SPAWN args (fmt "%u%u%u%u%u"): nsecs, pid, the new goroutine's goid, its
	 * parent's, the go statement's pc: a goroutine made (runtime.newproc1's RET), for
	 * -f chrome's lineage */
	PLAN_EV_FG_SPAWN,
	PLAN_EV_HELPER_ERROR, /* -k: fmt the helper's name, loc the call; arg: its return code */
	PLAN_EV_JOIN,      /* join(argv, delim): fmt the delimiter; record: slots x slot_size */
	PLAN_EV_LBR,       /* lbr(): i64 at 8, bpf_get_branch_snapshot's bytes or -errno, then
			    * slots struct perf_branch_entry of slot_size bytes */
	PLAN_EV_ERRORF,    /* errorf(fmt, args): as printf, a message at loc on stderr */
	PLAN_EV_WARNF,     /* warnf(fmt, args): the same as a warning */
};

struct plan_event {
	enum plan_event_kind kind;
	int map_id; /* PRINT_MAP, CLEAR_MAP, ZERO_MAP: index into plan.maps */
	int64_t top, div; /* PRINT_MAP: print(@m, top, div); 0 when not given */
	const char *fmt;
	struct plan_arg *args;
	int nargs;
	int size; /* record size in bytes */
	struct gt_loc loc; /* HELPER_ERROR, ERRORF, WARNF: where in the script */
	const struct gt_loc *expanded_from; /* ERRORF, WARNF in a macro: the macro's call */
	int slots, slot_size; /* JOIN: strings at 8 + i * slot_size, empty after the last */
	int meta; /* PRINTF under --otlp: PLAN_META_N hidden leading arguments (pid, tid, goid,
		     nsecs: a log record's), the format's first conversions; 0 otherwise */
};
enum { PLAN_META_PID, PLAN_META_TID, PLAN_META_GOID, PLAN_META_NSECS, PLAN_META_N };

/* Maps (@name). A BPF map each, named bpf_name in the object. Keys are the
 * concatenated key fields (8-byte ints, strings of their size), or a single u64 0 for
 * a map without keys. HIST/LHIST maps append a u64 bucket index to the key and count
 * per bucket; so does TSERIES, whose bucket is an interval (epoch % tseries_num).
 * Values, per CPU when percpu (user space adds the CPUs up):
 *   INT: s64   STR: char[value_size]   COUNT, SUM: s64   VALUE: plan_map.value
 *   AVG, STATS: struct { s64 count; s64 total; }
 *   MIN, MAX: struct { s64 value; u64 set; }  (set != 0 once a value was stored)
 *   HIST, LHIST: u64 count of the bucket
 *   TSERIES: struct gt_tseries (common/bpf_abi.h) */
enum plan_map_kind {
	PLAN_MAP_INT,
	PLAN_MAP_STR,
	PLAN_MAP_COUNT,
	PLAN_MAP_SUM,
	PLAN_MAP_AVG,
	PLAN_MAP_MIN,
	PLAN_MAP_MAX,
	PLAN_MAP_STATS,
	PLAN_MAP_HIST,
	PLAN_MAP_LHIST,
	PLAN_MAP_VALUE, /* value: any value plan_map.value describes (a tuple, a strftime ...) */
	PLAN_MAP_TSERIES, /* current bpftrace's tseries(v, interval, num[, agg]) */
};

/* hist bucket index of value v (as bpftrace 0.17): 0 for v < 0, 1 for v == 0,
 * 2 + floor(log2(v)) for v >= 1 (so [1] is index 2, [2, 4) index 3, ...).
 * lhist index: 0 below min, 1 + (v - min) / step inside, 1 + (max - min) / step at or
 * above max. */

struct plan_map {
	const char *name;     /* "@m", or "@" for the anonymous map */
	const char *bpf_name; /* map name in the BPF object */
	enum plan_map_kind kind;
	bool percpu;
	struct plan_arg *keys; /* key fields: integers are 8 bytes */
	int nkeys;      /* 0: a scalar map (key is a u64 0) */
	/* nested tuple keys (@m[a, (b, c)]), kept flat: the '(' before each key and the
	 * ')' after it, for printing; NULL when there are none */
	const uint8_t *key_open, *key_close;
	int key_size;   /* bytes, bucket index included */
	int value_size; /* bytes per CPU */
	bool value_signed;
	bool value_bool; /* INT: the values are bools, printed true or false */
	bool value_addr; /* INT: &$x's pointers, printed 0x... (plan_arg.is_addr) */
	struct plan_arg value; /* VALUE: the value's layout (offset 0) */
	int64_t lhist_min, lhist_max, lhist_step;
	int hist_bits; /* HIST: hist(x, k)'s k, 0 to 5: 2^k buckets a power of 2 */
	/* TSERIES: interval in ns, number of intervals kept, how an interval's values make
	 * one; TS_MAP: the map whose value replaces the clock (bpftrace's test hook
	 * BPFTRACE_DUMMY_TS_MAP=@name), -1 for the clock */
	uint64_t tseries_interval, tseries_num;
	enum gt_tseries_agg tseries_agg;
	int ts_map;
	uint32_t max_entries;
	bool lru; /* let @m = lruhash(N) / percpulruhash(N): the least recent key makes room */
};

/* A hist map's bucket indexes: 0 (< 0), 1 (0), 2 + log2(v) for v in [1, 2^64) for
 * hist(x); for hist(x, k) up to (64 - k) << k (v below 2^63). */
static inline int plan_hist_buckets(const struct plan_map *m)
{
	return m->hist_bits ? ((64 - m->hist_bits) << m->hist_bits) + 1 : 66;
}

/* enum NAME { A = 1, B }: what printf's %s prints for a value of the type */
struct plan_enum {
	const char *name; /* NULL for an anonymous enum */
	int n;
	const char **names;
	int64_t *values;
};

struct gt_plan {
	struct plan_site *sites;
	int nsites;
	struct plan_prog *progs;
	int nprogs;
	struct plan_event *events;
	int nevents;
	int nprobes;        /* probes as bpftrace counts them ("Attaching N probes...") */
	struct plan_map *maps;
	int nmaps;
	void *obj;          /* BPF ELF object (malloc'd) */
	size_t obj_size;
	int filter_pid;     /* -p / -c: only this process (0 = all) */
	struct plan_gotype *gotypes; /* sorted by addr: names of interfaces' dynamic types */
	int ngotypes;
	struct plan_stackmap *stackmaps;
	int nstackmaps;
	struct plan_enum *enums; /* the script's enum definitions: printf("%s", ENUMERATOR) */
	int nenums;
	/* The target's SP deltas (binfo_spdeltas) for ustack in profile / interval programs:
	 * their BPF unwinder's table (runtime-bpf/gt_unwind.c); 0 rows: the kernel's walk. */
	struct plan_sprow *unwind;
	int nunwind;
	struct gt_uwtarget unwind_rt; /* where to restart outside Go code */
	/* a wildcard's functions whose entry the kernel cannot probe (an int3, bytes that do
	 * not decode), by name: reported with the sites it refuses (runtime/attach/attach.c) */
	const char **unprobed;
	int nunprobed;
};

#endif
