/* builtins: the table of builtin names (builtins.def). Sema resolves every name to its
 * entry once; codegen and the runtime switch on the id. */
#ifndef GT_BUILTINS_H
#define GT_BUILTINS_H

#include <stdbool.h>

#include "common/plan.h"

enum builtin_id {
	BI_NONE,
#define IDENT(ID, ...) BI_##ID,
#define CALL(ID, ...) BI_##ID,
#define BOTH(ID, ...) BI_##ID,
#include "sema/builtins.def"
#undef IDENT
#undef CALL
#undef BOTH
	BI_TABLE_END,
	/* resolved forms that are not names of their own */
	BI_TPARG = BI_TABLE_END, /* args.FIELD of a tracepoint */
	BI_CONST,                /* a #define'd integer or a kernel enum constant: const_val */
	BI_CONSTSTR,             /* a #define'd string: const_str */
};

enum builtin_result { RES_NONE, RES_VOID, RES_I64, RES_U64, RES_BOOL, RES_STR, RES_FUNC, RES_PROBE };

enum builtin_flags {
	BF_EVENT = 1 << 0,     /* emits a ring-buffer record of kind .event */
	BF_AGG = 1 << 1,       /* an aggregation: @m = f(...), map kind .agg */
	BF_GORUNTIME = 1 << 2, /* needs the goroutine runtime (goid, call stacks) */
	BF_FUNCGRAPH = 1 << 3, /* exists only in call-graph mode */
	BF_LATER = 1 << 4,     /* a bpftrace name gotrace does not support yet */
	BF_UVAL = 1 << 5,      /* its value is printed by user space (strftime, buf ...) */
};

enum builtin_form { BFORM_IDENT = 1, BFORM_CALL = 2 };

/* probes: where a builtin may be used (plan_prog_kind bits; 0 everywhere) */
#define P_UPROBE (1u << PLAN_PROG_UPROBE)
#define P_KPROBE (1u << PLAN_PROG_KPROBE)
#define P_FENTRY (1u << PLAN_PROG_FENTRY)
/* probes that fire on a task: not BEGIN / END */
#define P_SPECIAL ((1u << PLAN_PROG_BEGIN) | (1u << PLAN_PROG_END))
#define P_TRACED ((1u << PLAN_PROG_UPROBE) | (1u << PLAN_PROG_PERF) | (1u << PLAN_PROG_TRACEPOINT))

struct sema;
struct ast_node;
struct builtin;
typedef int (*builtin_check_fn)(struct sema *s, struct ast_node *e, const struct builtin *b);

struct builtin {
	const char *name;
	enum builtin_id id;
	unsigned forms; /* enum builtin_form bits */
	enum builtin_result result;
	int str_size; /* RES_STR: bytes, NUL included */
	unsigned probes;
	unsigned flags;
	int event; /* enum plan_event_kind */
	int agg;   /* enum plan_map_kind */
	int min_args, max_args;
	const char *usage;
	builtin_check_fn check;
};

/* The entry of an id from the table (never NULL for ids below BI_TABLE_END). */
const struct builtin *builtin_get(enum builtin_id id);
/* The entry named NAME usable in FORM, or NULL; funcgraph entries only when asked. */
const struct builtin *builtin_find(const char *name, enum builtin_form form, bool funcgraph);
/* Names of FORM (no funcgraph entries), for suggestions; returns how many. */
int builtin_names(enum builtin_form form, const char **out, int max);

#endif
