/* sema: resolve probes into sites, check names and types, plan the events.
 * Input: the parsed program. Output: an annotated AST (node->ty, node->sema) and the
 * site/program/event tables of the plan that codegen and the runtime share. */
#ifndef GT_SEMA_H
#define GT_SEMA_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/plan.h"
#include "parser/ast.h"
#include "sema/builtins.h"

enum gt_type_kind {
	TY_VOID,
	TY_INT,        /* size 1/2/4/8, is_signed */
	TY_STR,        /* size bytes of text incl. the NUL */
	TY_SITE_FUNC,  /* `func`: the site id, named in user space */
	TY_SITE_PROBE, /* `probe`: the site id, named in user space */
	TY_TUPLE,      /* (a, b, ...): fields at their C struct offsets, size bytes */
	TY_PTR,        /* a pointer (8 bytes, an integer that knows its pointee) */
	TY_STRUCT,     /* a C struct or union in memory: the value is its address */
	TY_ARRAY,      /* an array in memory (pointee, count): the value is its address */
	TY_INTARRAY,   /* integers or bools held by value, as bpftrace's (int8[8])x: count of
			  pointee, size bytes, kept in a buffer as strings are */
	/* values user space prints (8 bytes in BPF unless said) */
	TY_STRFTIME,   /* strftime(fmt, ns): ns, printed with fmt */
	TY_STRERROR,   /* strerror(n): n, printed as strerror(3) text */
	TY_USERNAME,   /* username: the uid, printed as its user name */
	TY_INET,       /* ntop(): u64 address family, 16 address bytes (24 bytes) */
	TY_CGROUP_PATH, /* cgroup_path(id): the id, printed as its paths in the hierarchies */
	TY_BUF,        /* buf(p, n): u64 length then size - 8 bytes */
	TY_STACK,      /* ustack, kstack: u64 stack id, u64 pid, u64 the caller's return address
			  at a go: entry (0: none); size 24; named in user space */
	TY_SYM,        /* usym(), ksym(), caller: u64 address, u64 pid (16 bytes), named in
			  user space; stack_mode is enum plan_sym_kind */
	TY_GO,         /* a Go value printed in Go's %+v shape (a struct, slice, interface,
			  array, bool ... named through args/rets): size bytes of capture laid
			  out by gocap; only print() and printf("%v") take it whole */
	TY_NIL,        /* `nil`: compares (== !=) with pointers and Go interfaces, slices,
			  maps, chans and funcs; nothing else takes it */
};

/* A C bit-field: WIDTH bits from bit SHIFT (0..7) of the byte at its field's offset;
 * width 0: an ordinary field. */
struct gt_bitfield {
	uint8_t shift, width;
};

struct gt_type {
	enum gt_type_kind kind;
	int size;
	bool is_signed;
	int nfields;             /* TY_TUPLE */
	struct gt_type **fields; /* TY_TUPLE: integers are 8 bytes, strings GT_STRLEN */
	int *offsets;            /* TY_TUPLE */
	const char *fmt;         /* TY_STRFTIME */
	struct gt_type *pointee; /* TY_PTR; TY_ARRAY: the element */
	int count;               /* TY_ARRAY */
	const char *name;        /* TY_STRUCT: "struct task_struct" */
	const char **names;      /* TY_STRUCT: field names (fields, offsets as tuples) */
	int align;               /* TY_STRUCT */
	int btf_id;              /* TY_STRUCT from kernel BTF: fields read when first used */
	const struct plan_arg *gocap; /* TY_GO: the capture (PLAN_ARG_GO, offsets from 0) */
	int stack_map;                /* TY_STACK: index into plan.stackmaps */
	int stack_mode;               /* TY_STACK: enum plan_stack_mode */
	bool go_int;                  /* TY_INT: a Go integer (plan_arg.go_int) */
	bool is_bool;                 /* TY_INT of size 1: true/false, bool casts */
	bool own_stack;               /* TY_PTR: &$x, into the BPF program's own stack (kernel
					 memory, whatever the probe) */
	int enum_id;                  /* TY_INT: 1 + its sema.enums entry (an enumerator or a
					 (enum NAME) cast; arithmetic drops it) */
	const struct gt_bitfield *bitfields; /* TY_STRUCT: per field (NULL: none is one) */
};

/* A Go value named through args / rets (sema_go.c), for codegen: what it is and where
 * it lives when the probe fires. Its scalar view is the node's ty (integers, pointers,
 * strings as text); aggregates are TY_GO. */
enum sema_gokind { GV_SCALAR, GV_STRING, GV_SLICE, GV_ARRAY, GV_STRUCT, GV_IFACE, GV_MAP,
		   GV_CHAN, GV_FLOAT };
enum sema_gowhere {
	GW_REGS,  /* registers: regs, the parameter's pieces; off: offset in the parameter */
	GW_STACK, /* memory at SP + off */
	GW_PTR,   /* memory at the value of base (a Go pointer) + off */
	GW_ELEM,  /* memory at element `index` of base (a slice, or an array in memory),
		     + off; out of range: address 0, whose reads give 0 */
	GW_MAPVAL, /* memory at the value of key `index` in map base (found by a bounded
		      walk, runtime-bpf/gt_gomap.c: map_key, map), + off; not found: 0 */
};
struct sema_goword {
	int off, size; /* bytes of the parameter */
	int regs_off;  /* in the saved registers (arch.h), -1 for a float register (unreadable) */
};
struct sema_goref {
	enum sema_gokind kind;
	enum sema_gowhere where;
	int64_t off;
	const struct sema_goword *regs;
	int nregs;
	struct ast_node *base, *index;
	int64_t stride, count; /* GW_ELEM: element size; count of an array base, 0: a slice */
	const struct gt_gomap *map; /* GW_MAPVAL: the walk */
	int map_key;                /* GW_MAPVAL: GT_GOMAP_FIND_* */
	int key_size;               /* GW_MAPVAL: an integer key's bytes */
	bool val_indirect;          /* GW_MAPVAL: the slot holds a pointer to the value */
	int size;              /* bytes in memory */
	bool is_signed, empty_iface;
	/* a wildcard's functions hold it with different types of one shape (instances of
	 * a generic function: []int, []int32): "differs between F and G", and only what
	 * does not depend on the type is read (len, cap, nil) */
	const char *varies;
};

/* Values held as their bytes in a buffer (an expression gives a pointer to them; variables,
 * records and map values copy the bytes). */
/* The field of record (named tuple) T called NAME: its index, or -1. */
static inline int gt_record_field(const struct gt_type *t, const char *name)
{
	for (int i = 0; t->names && i < t->nfields; i++)
		if (!strcmp(t->names[i], name))
			return i;
	return -1;
}

static inline bool gt_type_is_bytes(const struct gt_type *t)
{
	switch (t->kind) {
	case TY_STR:
	case TY_TUPLE:
	case TY_BUF:
	case TY_INET:
	case TY_STACK:
	case TY_SYM:
	case TY_INTARRAY:
		return true;
	default:
		return false;
	}
}

/* Integers and pointers: what arithmetic, comparisons and %d take. */
static inline bool gt_type_is_int(const struct gt_type *t)
{
	return t && (t->kind == TY_INT || t->kind == TY_PTR);
}


/* Where a uprobe program fires: Go entry (after the prologue), Go RETs, an offset; or
 * plain uprobe/uretprobe (C ABI arguments, no call stacks). */
enum go_point { GO_ENTRY, GO_RETURN, GO_OFFSET, UP_ENTRY, UP_RETURN };

/* Programs gotrace adds for per-goroutine call stacks. */
enum sema_hidden {
	HIDDEN_NONE,
	HIDDEN_ENTER,  /* push frames where no user :entry probe does */
	HIDDEN_RETURN, /* mark returns where no user :return probe does */
	HIDDEN_GOEXIT, /* runtime.goexit1: free the goroutine's state */
	/* oncpu: which goroutine each thread runs, and whether the thread is on a CPU */
	HIDDEN_EXECUTE,      /* runtime.execute: the thread starts running gp */
	HIDDEN_SCHEDULE,     /* runtime.schedule: it runs no goroutine */
	HIDDEN_SCHED_SWITCH, /* raw tracepoint sched_switch */
};

/* Per-node data sema leaves for codegen (node->sema). */
struct sema_node {
	enum builtin_id builtin; /* AST_IDENT, AST_CALL: the resolved name; BI_TPARG */
	const struct gt_type *cmp_ty; /* AST_BINARY == / != of tuples: the layout both take */
	bool resolved;           /* builtin was looked up (BI_NONE: not a builtin) */
	bool fetch_gostr;        /* AST_FETCH of type str: a Go string header */
	int err_event;           /* -k: helper-error event id + 1 of this delete/read, or 0 */
	bool user_mem;           /* a pointer, struct or array in user memory (else kernel,
				  * outside uprobes): syscall tracepoint arguments, and what
				  * fields, [] and * reach through them */
	int regs_off;      /* BI_ARGn, BI_REG, BI_RETVAL: offset in the saved registers (arch.h) */
	int var_slot;      /* AST_VAR: index into the clause's variables */
	int event_id;      /* printf/print/exit: index into plan.events */
	int map_id;        /* AST_MAP, map calls, len(@m), map assignments: plan.maps index */
	int64_t const_val; /* AST_POSPARAM integer, unroll count */
	const char *const_str; /* AST_POSPARAM string */
	int tp_offset, tp_size; /* BI_TPARG */
	/* AST_FOR: the variable slots its body uses (nested loops' too, the loop's own
	 * variable first): the callback reaches them through pointers */
	int *loop_slots;
	int nloop_slots;
	bool tp_signed, tp_string, tp_data_loc;
	int tp_narrow; /* kfunc args, retval: 8-byte context slots holding a narrower int */
	bool cast_bool; /* AST_CAST to bool: 1 for any nonzero value, as C and Go */
	bool own_mem;   /* OP_DEREF, AST_INDEX through &$x: reads of the program's own stack */
	struct gt_bitfield bitfield; /* AST_FIELD of a C bit-field (width 0: not one) */
	const struct binfo_gotype *gotype; /* with go: its Go type (sema's own) */
	struct sema_goref *go; /* a Go value (args.x, rets.y, retval and what they reach) */
	bool raw_site;  /* BI_FUNC of a call-graph event: this very site (its RET's line),
			   not the first site of the function's name */
	bool probe_now; /* BI_NSECS of a call-graph event: the probe's own clock reading, the
			   one its call's frame and duration are measured with (cg_now) */
};

/* Whether expression E points into (or is in) user memory (sema_node.user_mem). */
static inline bool sema_user_mem(const struct ast_node *e)
{
	return e->sema && ((const struct sema_node *)e->sema)->user_mem;
}

struct sema_var {
	const char *name;
	struct gt_type ty;
	bool loop_own;     /* a for loop's variable: stored only while its loop runs */
	bool out_of_scope; /* a for loop's variable after its loop */
	bool untyped;      /* made by let $x; alone: an integer 0 until a value gives its type */
};

struct binfo;
struct binfo_gotype;

/* One BPF program: a clause compiled for one probe kind and one target. */
struct sema_prog {
	struct ast_node *clause; /* NULL for hidden programs */
	int plan_prog; /* index into plan.progs */
	struct binfo *bi;        /* target of go probes */
	enum go_point point;
	enum sema_hidden hidden;
	bool uses_duration;      /* skip the body on an unpaired return */
	bool no_call_stack;      /* a RET on the system stack (g0): its keys are not the
				    goroutine's, so the goroutine's call stack is left alone */
	bool needs_goruntime;    /* goid / call stacks: gt_target constants needed */
	/* the offsets of pid and se.sum_exec_runtime in task_struct when the script uses
	 * oncpu (frames keep on-CPU time), else 0 */
	int task_pid_off, task_runtime_off;
	struct sema_var *vars;
	int nvars;
};

struct sema_options {
	const char *default_target; /* -c / -p / -b binary, or NULL */
	struct binfo *default_bi;   /* optional: default_target already opened with
	                               binfo__open (the fuzzer); used, never closed */
	char **posargs;             /* $1.. */
	int nposargs;
	const char *const *named;   /* getopt(): NAME or NAME=VALUE of --NAME[=VALUE] */
	int nnamed;
	bool unsafe;
	bool child;                 /* -c: a command runs (cpid) */
	int str_len;                /* GT_STRLEN, default 64 */
	bool funcgraph;             /* call-graph mode: fgentry(), fgreturn(), __retaddr */
	bool funcgraph_oncpu;       /* ... whose fgreturn() records carry oncpu (else 0) */
	bool log_meta;              /* --otlp: printf records carry pid, tid, goid and nsecs
				       ahead of their arguments (plan_event.meta) */
	const char **includes;      /* --include FILE: headers whose macros the script sees */
	int nincludes;
	const char **include_dirs;  /* -I DIR */
	const char **excludes;      /* --exclude PATTERN: left out of go: wildcards */
	int nexcludes;
	int ninclude_dirs;
	bool no_cpp;                /* #include refused: the fuzzer runs no preprocessor */
	int helper_checks;          /* -k 1: failed map updates and deletes; -kk 2: lookups too */
	/* optional: whether a uprobe's user stack at `push %rbp` holds the caller, asked
	 * only when a user stack is taken at such a go: entry (the runtime tries it) */
	bool (*uprobe_stack_has_caller)(void);
};

struct sema_result {
	struct sema_prog *progs;
	int nprogs;
	struct binfo **targets; /* opened target binaries, closed by sema_result_free */
	int ntargets;
};

/* sema_config.c: checks the script's config block and hands its settings to gt_getenv
 * (before anything reads them). 0, or -EINVAL after reporting errors. */
int sema_config_apply(struct arena *a, const struct diag_src *src,
		      const struct ast_node *program);

/* Returns 0, or -EINVAL after reporting every error through diag. */
int sema_check(struct arena *a, const struct diag_src *src, struct ast_node *program,
	       const struct sema_options *opts, struct gt_plan *plan, struct sema_result *out);
void sema_result_free(struct sema_result *r);

/* -d sites */
void sema_dump_sites(FILE *out, const struct gt_plan *plan);
/* -d types */
void sema_dump_types(FILE *out, const struct ast_node *program);

const char *gt_type_str(const struct gt_type *t, char *buf, size_t len);

#endif
