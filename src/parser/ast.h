/* ast: the syntax tree. Nodes are a tagged union allocated from an arena; every node
 * carries its source range. The parser builds it, sema annotates it (ty, sym fields),
 * codegen reads it. */
#ifndef GT_AST_H
#define GT_AST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/arena.h"
#include "common/diag.h"

struct ast_node;
struct gt_type; /* sema/types.h */

/* Storage comes from the arena: lists are never freed one by one. */
struct ast_list {
	struct ast_node **v;
	int n, cap;
};

/* Operators, resolved by the parser; ast_op_str() spells them for messages. */
enum ast_op {
	OP_NONE, /* plain '=' of an assignment */
	/* binary, also compound assignment (+= ...) */
	OP_ADD,
	OP_SUB,
	OP_MUL,
	OP_DIV,
	OP_MOD,
	OP_BAND,
	OP_BOR,
	OP_BXOR,
	OP_SHL,
	OP_SHR,
	/* binary, compare and logic: the result is 0 or 1 */
	OP_EQ,
	OP_NE,
	OP_LT,
	OP_LE,
	OP_GT,
	OP_GE,
	OP_LAND,
	OP_LOR,
	/* unary */
	OP_NEG,
	OP_LNOT,
	OP_BNOT,
	OP_DEREF,
	OP_ADDR,
	OP_COUNT
};

enum ast_kind {
	/* top level */
	AST_PROGRAM, /* u.program */
	AST_CLAUSE,  /* u.clause: probe list, predicate, body */
	AST_PROBE,   /* u.probe: one probe spec such as go:main.add*:entry */
	AST_CDEF,    /* u.name: the text of a C definition, struct NAME { ... } */
	AST_DIRECTIVE, /* u.name: a #define or #include line */
	AST_CONFIG,    /* u.config: NAME = VALUE of a config = { ... } block */
	AST_MACRO,     /* u.macro: macro NAME(params) { body }; expanded by ast_expand_macros */
	AST_MAPDECL,   /* u.mapdecl: let @NAME = TYPE(ENTRIES); */
	AST_IMPORT,    /* u.str: import "PATH"; (import.c reads and merges it) */
	/* statements */
	AST_BLOCK,     /* u.block.stmts */
	AST_EXPR_STMT, /* u.expr_stmt.expr */
	AST_ASSIGN,    /* u.assign: lhs op= rhs; op is OP_NONE for plain '='; rhs NULL: let $x;
			  (the variable zeroed) */
	AST_IF,        /* u.if_: cond, then, els (NULL, AST_BLOCK or AST_IF) */
	AST_UNROLL,    /* u.loop: count expr, body */
	AST_WHILE,     /* u.loop: cond expr, body */
	AST_FOR,       /* u.for_: $var over a map (end NULL) or the range iter..end */
	AST_BREAK,     /* no payload */
	AST_CONTINUE,  /* no payload */
	AST_RETURN,    /* no payload */
	/* expressions */
	AST_INT,      /* u.int_.value */
	AST_STR,      /* u.str: unescaped bytes */
	AST_VAR,      /* u.name: $name (without '$') */
	AST_MAP,      /* u.map: @name[keys]; name "" for the anonymous map '@' */
	AST_IDENT,    /* u.name: bare identifier: builtin (pid, arg0, func...) or args/rets */
	AST_POSPARAM, /* u.posparam: $1 .. ($# has n == -1) */
	AST_UNARY,    /* u.unary: OP_NEG, OP_LNOT, OP_BNOT, OP_DEREF, OP_ADDR */
	AST_INCDEC,   /* u.incdec: ++/-- on lvalue, prefix or postfix */
	AST_BINARY,   /* u.binary: OP_ADD .. OP_LOR */
	AST_TERNARY,  /* u.ternary; then NULL: c ?: els, c's own value when nonzero */
	AST_CAST,     /* u.cast: (type)expr */
	AST_FIELD,    /* u.field: expr.name or expr->name */
	AST_INDEX,    /* u.index: expr[index] */
	AST_CALL,     /* u.call: name(args) */
	AST_TUPLE,    /* u.tuple.items: (a, b) */
	AST_FETCH,    /* u.fetch: arg(RULE):TYPE */
	AST_TYPE,     /* u.type: a type name as a call's argument, sizeof(uint32) */
	AST_BLOCK_EXPR, /* u.blockexpr: { stmts; value }: the statements, then the value's
			   value (value NULL: no value) */
	AST_KIND_COUNT
};

/* A go-ftrace fetch rule: %reg | (%reg) | +N(rule) | -N(rule) | *rule. */
enum fetch_kind {
	FETCH_REG,    /* a register: its value */
	FETCH_OFFSET, /* address = base + off */
	FETCH_DEREF,  /* address = 8-byte load at base */
};

struct fetch_rule {
	enum fetch_kind kind;
	struct gt_loc loc;
	const char *reg;          /* FETCH_REG: canonical name without '%' ("ax", "r8") */
	int regs_off;             /* FETCH_REG: offset in the saved registers, set by sema */
	int64_t off;              /* FETCH_OFFSET */
	struct fetch_rule *base;  /* FETCH_OFFSET, FETCH_DEREF */
	bool parenthesized;       /* FETCH_REG written as (%reg) */
};

struct type_name {
	const char *name; /* "int32", "uint64", "bool", "string", ... */
	int ptr_depth;    /* (uint64 *) has 1 */
	bool is_array;    /* (int8[8]), (int8[]): an array of the named integers */
	int64_t count;    /* is_array: its elements; 0 for [], sized by the value cast */
	struct ast_node *of; /* typeof(e): e's type, by sema (name "typeof" until then) */
	struct gt_loc loc;
};

struct ast_node {
	enum ast_kind kind;
	struct gt_loc loc;
	const struct gt_loc *expanded_from; /* in a macro's expansion: the call's range */
	struct gt_type *ty; /* set by sema for expressions */
	void *sema;         /* sema's per-node data (resolved builtin, variable slot ...) */
	union {
		struct {
			struct ast_list clauses;
			struct ast_list cdefs; /* AST_CDEF, AST_DIRECTIVE, AST_CONFIG, AST_MAPDECL */
			struct ast_list macros; /* AST_MACRO */
			struct ast_list imports; /* AST_IMPORT, as written in this file */
			/* the files imports brought in, for what keys on the program's text */
			const struct diag_src **sources;
			int nsources;
		} program;
		struct {
			const char *name, *value; /* as written: stack_mode, BPFTRACE_MAX_STRLEN */
		} config;
		struct {
			const char *name; /* without '@' */
			const char *type; /* hash, lruhash, percpuhash, percpulruhash */
			uint64_t entries;
		} mapdecl;
		struct {
			struct ast_list probes;      /* AST_PROBE nodes */
			struct ast_node *pred;       /* NULL without /pred/ */
			struct ast_node *body;       /* AST_BLOCK */
			bool angle;                  /* written with < > */
		} clause;
		struct {
			const char *raw;       /* as written, quotes included */
			const char *provider;  /* "go", "BEGIN", "END", "uprobe", "tracepoint", ... */
			const char **parts;    /* fields after the provider split on ':' (unquoted) */
			int nparts;
		} probe;
		struct {
			struct ast_list stmts;
			bool open_tail; /* the last statement has no ';' (a block expression's value) */
		} block;
		struct {
			struct ast_node *block; /* AST_BLOCK */
			struct ast_node *value; /* NULL: the block has no value */
		} blockexpr;
		struct {
			const char *name;
			struct ast_list params; /* AST_VAR ($x), AST_MAP (@m) or AST_IDENT (x) */
			struct ast_node *body;  /* AST_BLOCK */
		} macro;
		struct {
			struct ast_node *expr;
		} expr_stmt;
		struct {
			struct ast_node *lhs, *rhs;
			enum ast_op op;
		} assign;
		struct {
			struct ast_node *cond, *then, *els;
		} if_;
		struct {
			struct ast_node *expr; /* unroll count or while condition */
			struct ast_node *body;
		} loop;
		struct {
			struct ast_node *var;  /* AST_VAR: the loop's own variable */
			struct ast_node *iter; /* the AST_MAP, or the range's start */
			struct ast_node *end;  /* the range's end (excluded), NULL over a map */
			struct ast_node *body;
		} for_;
		struct {
			uint64_t value;
			bool is_unsigned; /* literal did not fit int64 */
			bool is_bool;     /* true or false */
		} int_;
		struct {
			const char *bytes;
			int len;
		} str;
		const char *name;
		struct {
			const char *name;
			struct ast_list keys; /* empty for scalar maps */
			bool has_brackets;
		} map;
		struct {
			int n; /* -1 for $# */
		} posparam;
		struct {
			enum ast_op op;
			struct ast_node *operand;
		} unary;
		struct {
			bool inc, prefix;
			struct ast_node *operand;
		} incdec;
		struct {
			enum ast_op op;
			struct ast_node *lhs, *rhs;
		} binary;
		struct {
			struct ast_node *cond, *then, *els;
		} ternary;
		struct {
			struct type_name type;
			struct ast_node *expr;
		} cast;
		struct {
			struct ast_node *expr;
			const char *name;
			bool arrow;
		} field;
		struct {
			struct ast_node *expr, *index;
		} index;
		struct {
			const char *name;
			struct gt_loc name_loc;
			struct ast_list args;
		} call;
		struct {
			struct ast_list items;
			const char **names; /* a record, (a=1, b="x"): the items' names; else NULL */
		} tuple;
		struct type_name type;
		struct {
			struct fetch_rule *rule;
			const char *type; /* "s64", "c64", "str", "ptr", ... */
			struct gt_loc type_loc;
		} fetch;
	} u;
};

struct ast_node *ast_new(struct arena *a, enum ast_kind kind, struct gt_loc loc);
void ast_list_push(struct arena *a, struct ast_list *l, struct ast_node *n);
const char *ast_kind_name(enum ast_kind kind);
/* Splits u.probe.raw on unquoted ':' and drops the quotes:
 * go:"main.(*T).M":entry -> provider "go", parts ["main.(*T).M", "entry"]. */
void ast_probe_split(struct arena *a, struct ast_node *n);
/* "+", "<<=" is OP_SHL with assign; "" for OP_NONE. */
const char *ast_op_str(enum ast_op op);
/* ==, !=, <, <=, >, >= */
bool ast_op_is_compare(enum ast_op op);

/* The child slots of n, in source order: one(slot) for each single child that is there,
 * list(l) for each list of children (a rewrite can replace what they hold). */
void ast_for_each_slot(struct ast_node *n, void (*one)(struct ast_node **slot, void *ctx),
		       void (*list)(struct ast_list *l, void *ctx), void *ctx);
/* Calls fn on each child node of n that is there, in source order. */
void ast_for_each_child(struct ast_node *n, void (*fn)(struct ast_node *child, void *ctx),
			void *ctx);
/* A deep copy of n from arena a. Where hook returns a node, that node stands for the
 * one it was given (the hook copies it if it must). */
struct ast_node *ast_clone(struct arena *a, const struct ast_node *n,
			   struct ast_node *(*hook)(const struct ast_node *n, void *ctx), void *ctx);
/* --probe-filter REGEX: drops the probes whose name (as written) the extended regex does
 * not match, BEGIN and END kept, then the clauses left without one. 0, or -EINVAL after
 * a message (a bad regex, nothing left). */
int ast_filter_probes(struct ast_node *program, const char *regex);
/* A probe written as a positional parameter ($1 { }) becomes the parameter's text, split
 * as a probe; 0, or -EINVAL after a message (no such parameter). */
int ast_probe_params(struct arena *a, const struct diag_src *src, struct ast_node *program,
		     char *const *posargs, int nposargs);
/* macro.c: replaces every call of a script macro by its body (parse_program does). 0, or
 * -EINVAL after reporting errors. */
int ast_expand_macros(struct arena *a, const struct diag_src *src, struct ast_node *program);

/* -d ast: an indented S-expression-like dump, stable for tests. */
void ast_dump(FILE *out, const struct ast_node *program);

/* Parses program text, with what it imports and its macros expanded. Returns the
 * AST_PROGRAM node, or NULL after reporting errors through diag. Nodes come from `a`. */
struct ast_node *parse_program(struct arena *a, const struct diag_src *src);
/* The grammar alone over one file; HEADER: an imported .h (C definitions only). */
struct ast_node *parse_source(struct arena *a, const struct diag_src *src, bool header);
/* import.c: reads the files program's `import` lines name and merges them into it
 * (parse_program does). 0, or a negative errno after reporting the error. */
int ast_import(struct arena *a, const struct diag_src *src, struct ast_node *program);

#endif
