/* Internal state shared by the sema modules. */
#ifndef GT_SEMA_INT_H
#define GT_SEMA_INT_H

#include "arch/arch.h"
#include "common/pairset.h"
#include "common/util.h"
#include "sema/sema.h"

struct binfo;
struct binfo_func;
struct btf;
struct tp_format;

/* What sema knows about each plan site beyond what the runtime needs. */
struct sema_site_info {
	struct binfo *bi; /* NULL for the BEGIN/END pseudo-sites */
	const struct binfo_func *f;
	enum go_point point;
	/* an inlined copy of f (f has only a name) in this function: no arguments of its
	 * own, no return */
	const struct binfo_func *inlined_into;
};

struct sema_skip {
	struct gt_loc loc;
	const char *msg;
};

struct go_probe {
	struct ast_node *node;
	struct binfo *bi;
	const char *path, *func, *where;
	enum go_point point;
	uint64_t off;
	bool optional; /* written with a trailing '?': matching nothing skips it */
};

struct sema_map {
	const char *name; /* without '@' */
	enum plan_map_kind kind; /* -1 until something is stored */
	bool keys_known;
	struct ast_node *first_store; /* the program's first @m[keys] = ... (discover) */
	struct gt_type *keys;
	const char **key_names; /* what each key was written as first: goid, comm ... */
	int nkeys;
	uint8_t *key_open, *key_close; /* plan_map's: nested tuple keys, or NULL */
	int value_size; /* STR */
	struct gt_type *value_ty; /* VALUE, and INT maps of pointers: set by the first store */
	bool read;                /* read somewhere already (its kind cannot change) */
	bool stored;              /* a store was checked (its kind cannot change) */
	bool value_bool;          /* INT: the first store was a bool */
	bool lhist_set;
	int64_t lhist_min, lhist_max, lhist_step;
	int hist_bits; /* hist(x, k): k, the same in every use (hist_set) */
	bool hist_set;
	bool tseries_set;         /* TSERIES: the first tseries() gave these */
	bool tseries_signed;      /* its value is signed (bpftrace prints by the value's type) */
	uint64_t tseries_interval, tseries_num;
	enum gt_tseries_agg tseries_agg;
	struct gt_loc first_use;
};

/* An object-like macro with an integer (sval NULL) or string value. */
struct sema_macro {
	const char *name;
	int64_t ival;
	const char *sval;
	int enum_id; /* an enumerator: 1 + its sema.enums entry */
};

/* A named parameter getopt() reads: its default as text (to compare calls) */
struct sema_getopt {
	const char *name, *dflt, *desc;
};

struct binfo_godwarf;
struct sema_godwarf {
	struct binfo *bi;
	struct binfo_godwarf *gd; /* NULL: no DWARF */
};

struct sema {
	struct arena *arena;
	const struct diag_src *src;
	const struct sema_options *opts;
	VEC(struct plan_site) sites;
	VEC(struct sema_site_info) site_info; /* parallel to sites */
	VEC(struct plan_prog) progs;
	VEC(struct plan_event) events;
	VEC(const struct gt_type **) event_types; /* parallel to events: their arguments' types */
	VEC(struct sema_prog) sprogs;
	VEC(struct sema_map) maps;
	VEC(struct tp_format *) tp_formats; /* freed at the end of sema */
	struct tp_format *clause_tp; /* the clause's tracepoint; (void *)-1 for several */
	int clause_kfunc; /* the BTF id of the clause's kfunc/kretfunc FUNC, -1 for several */
	const struct btf *clause_kfunc_btf; /* where that id is: vmlinux's, a module's or a
					     * BPF program's BTF */
	bool clause_kfunc_bpf;              /* fentry:bpf: the id is a BPF program's */
	bool clause_tp_user;         /* its pointer fields point into user memory */
	struct binfo **targets;
	const char **target_paths;
	VEC(const char *) bad_targets; /* paths that did not open: said once, not per probe */
	/* the clause's optional probes that matched nothing: warned about only when none of
	 * its probes is there (tools name functions of some Go releases only) */
	VEC(struct sema_skip) skips;
	/* a generated program's (--funcgraph) functions with no site the kernel can probe:
	 * left out, said once (sema.c) */
	int gen_unprobed;
	const char *gen_unprobed_first;
	VEC(const char *) unprobed; /* plan.unprobed */
	int ntargets;
	int group_site_begin;      /* sema_open_group: where the open program's sites begin */
	struct pairset group_sites; /* (target, file offset) of those sites (add_site's dedup) */
	struct pairset inl_funcs; /* (target, inlined name) -> its name-only binfo_func */
	struct ast_node *clause; /* the clause being checked */
	unsigned clause_kinds;  /* 1 << plan_prog_kind of the clause being checked */
	unsigned clause_points; /* 1 << go_point of its go probes */
	int stack_caller_known; /* kernel_adds_caller (sema_stack.c): 0 not asked, 1 yes, -1 no */
	const char *clause_stack_abi; /* Go version of a target older than the register
					 ABI (Go 1.17), NULL when none is */
	bool clause_uses_duration;
	bool clause_spawn; /* fgspawn(): at runtime.newproc1's RET, on the system stack */
	bool clause_uses_goruntime; /* goid, duration or depth */
	bool clause_reads_go_names; /* args, rets or retval (sema_reads_go_names) */
	bool uses_depth; /* anywhere: then every traced function keeps call stacks */
	bool uses_oncpu; /* anywhere: then calls keep on-CPU time (gt_oncpu.c) */
	/* variables of the clause being checked; arena-allocated, so that the expression
	 * types that point at them (AST_VAR) stay valid through codegen */
	VEC(struct sema_var *) vars;
	/* C types (sema_ctypes.c): the script's structs, kernel BTF and its converted types */
	VEC(struct gt_type *) structs;
	struct btf *btf;
	bool btf_tried;
	struct gt_type **btf_types; /* by BTF id */
	VEC(struct sema_macro) macros; /* #define, #include, --include (sema_macros.c) */
	VEC(struct sema_getopt) getopts; /* getopt()'s names, first use first */
	VEC(struct plan_enum) enums;     /* the script's enum definitions (sema_ctypes.c) */
	VEC(const struct ast_node *) mapdecls; /* let @m = hash(N); */
	int loop_depth; /* while and for loops around the statement: break, continue */
	VEC(struct ast_node *) for_loops; /* AST_FOR around it, outermost first */
	/* Go values by name (sema_go.c) */
	VEC(struct sema_godwarf) godwarf; /* opened on first use, per target */
	int clause_site_begin; /* the clause's first site */
	bool want_gotypes;     /* an interface is printed: plan.gotypes */
	VEC(struct plan_stackmap) stackmaps; /* ustack / kstack (sema_stack.c) */
	bool unwind; /* a ustack in a profile / interval clause: the target's SP deltas */
};

struct binfo *sema_target(struct sema *s, const char *path, struct gt_loc loc);
struct binfo *sema_target_elf(struct sema *s, const char *path, struct gt_loc loc, bool need_go);
int sema_expand_probes(struct sema *s, struct ast_node *clause, int ci);
int sema_add_func_sites(struct sema *s, struct binfo *bi, const struct binfo_func *f,
			enum go_point point, uint64_t off, struct gt_loc loc, bool quiet);
/* A program over one pseudo-site named PROBE (timers, perf events, tracepoints: `probe`
 * names it), called gt_NAME<N> in the object; CLAUSE NULL for a hidden one. */
struct plan_prog *sema_pseudo_site(struct sema *s, struct ast_node *clause, int prog_kind,
				   const char *probe, enum sema_hidden hidden, const char *name);
/* "+N" (decimal or 0x hex) of a probe name: true and *OUT, or false. */
bool sema_parse_offset(const char *s, uint64_t *out);
struct provider;
/* sema_kernel.c: kprobe:/kretprobe: and kfunc:/kretfunc: probes of a clause. */
int sema_expand_kprobe(struct sema *s, struct ast_node *clause, struct ast_node *p,
		       const struct provider *pv, int ci);
int sema_expand_kfunc(struct sema *s, struct ast_node *clause, struct ast_node *p,
		      const struct provider *pv, int ci);
/* kfunc args.NAME and kretfunc retval: 0, or a negative errno after an error. */
int sema_check_kfunc_arg(struct sema *s, struct ast_node *e);
int sema_check_kfunc_retval(struct sema *s, struct ast_node *e);

/* Starts the sites of one program (sema_close_group ends it). */
void sema_open_group(struct sema *s);
void sema_close_group(struct sema *s, struct ast_node *clause, int kind, struct binfo *bi,
		      enum go_point point, enum sema_hidden hidden, const char *name);
int sema_finish_tracking(struct sema *s);
int sema_new_event(struct sema *s, enum plan_event_kind kind, const char *fmt,
		   struct ast_node **args, int nargs);
/* -k: a helper-error event for AT (its err_event) when checks reach LEVEL. */
void sema_helper_event(struct sema *s, struct ast_node *at, int level, const char *helper);
/* Lays every event's record out again from its arguments' final types. */
void sema_finish_events(struct sema *s);

/* sema_expr.c: shared by the checkers */
extern struct gt_type sema_ty_void, sema_ty_i64, sema_ty_u64;
struct gt_type *sema_type_new(struct sema *s, enum gt_type_kind k, int size, bool is_signed);
/* A fresh bool (TY_INT of one byte, is_bool): true/false, (bool)x, has_key(), delete() */
struct gt_type *sema_type_bool(struct sema *s);
bool sema_is_int(const struct ast_node *e);
/* An integer, a pointer, or a Go interface or slice (true when not nil): what a
 * predicate, if, ?:, !, && and || take. */
bool sema_is_cond(const struct ast_node *e);
bool sema_is_textual(const struct ast_node *e);
const char *sema_kind_word(const struct ast_node *e); /* "an integer", "a string" ... */
/* A copy of T that a variable or map can grow (tuples: deeply). */
struct gt_type *sema_type_copy(struct sema *s, const struct gt_type *t);
/* Whether B can be stored where A is kept (tuples: the same kinds, field for field); A's
 * strings and buffers grow to B's and a tuple's layout is made again. */
bool sema_tuple_merge(struct gt_type *a, const struct gt_type *b);
/* How the runtime reads a value of type T at OFFSET of a record or map value. */
void sema_plan_arg(struct sema *s, const struct gt_type *t, int offset, struct plan_arg *a);
/* The candidate closest to NAME (edit distance < 3), or NULL. */
const char *sema_closest(struct sema *s, const char *name, const char *const *cands, int n,
			 const char *const *cands2, int n2);
/* WHAT may be used only in probes of the ALLOWED plan_prog_kind bits. */
int sema_check_probes(struct sema *s, struct ast_node *e, const char *what, unsigned allowed);
int sema_check_uprobe_only(struct sema *s, struct ast_node *e, const char *what);
struct sema_var *sema_find_var(struct sema *s, const char *name, int *slot);
/* Variable SLOT is used here: each for loop around passes it to its body. */
void sema_loop_capture(struct sema *s, int slot);
/* A tuple of N fields, laid out. */
struct gt_type *sema_tuple_of(struct sema *s, struct gt_type **fields, int n);

/* The table entry of an AST_IDENT or AST_CALL node, looked up once (NULL: none). */
const struct builtin *sema_resolve(struct sema *s, struct ast_node *e);
/* Checks a use of a builtin: table rules, then its .check. */
int sema_check_builtin(struct sema *s, struct ast_node *e);
/* Type of a fetch rule's :TYPE; -1 if unknown. gostr: a Go string header. */
int sema_fetch_type(struct sema *s, const char *t, struct gt_type **ty, bool *gostr);

/* .check functions of builtins.def */
int sema_check_argn(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_go_ident(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_nil(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_printf(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_fgreturn(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_print(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_time(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_reg(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_str(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_len(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_bswap(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_strncmp(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_write_user(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_strcontains(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_sizeof(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_strftime(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_strerror(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_signal_name(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_buf(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_username(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_curtask(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_ctx(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_kaddr(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_ntop(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_join(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_lbr(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_cpid(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_nsecs(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_assert(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_debugf(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_probetype(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_ppid(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_offsetof(struct sema *s, struct ast_node *e, const struct builtin *b);
/* sema_getopt.c: getopt() becomes its value; after every clause, the --NAME options no
 * getopt() reads are an error (and --help lists them) */
int sema_check_getopt(struct sema *s, struct ast_node *e, const struct builtin *b);
/* let @m = TYPE(N); checked and kept for sema_finish_maps */
int sema_map_declare(struct sema *s, const struct ast_node *d);
int sema_getopt_finish(struct sema *s);
int sema_check_exit(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_cgroup_path(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_pton(struct sema *s, struct ast_node *e, const struct builtin *b);
/* int8 .. uint64, bool: the integer type of a cast or sizeof, or NULL */
struct gt_type *sema_int_type_named(struct sema *s, const struct type_name *tn);
/* typeof(e) in TN: named after e's type (an integer, a bool, a pointer to one or to a
 * struct); 0, or -EINVAL after an error. Nothing to do for any other type name. */
int sema_typeof(struct sema *s, struct type_name *tn);

/* config = { missing_probes = ... } (bpftrace's): a probe that matches nothing is an
 * error, or skipped with a warning, or skipped */
enum sema_missing { MISSING_ERROR, MISSING_WARN, MISSING_IGNORE };
enum sema_missing sema_missing_probes(void);
struct gt_type *sema_ptr_type_named(struct sema *s, const struct type_name *tn);
/* sema_cast.c: (TYPE)expr */
int sema_check_cast(struct sema *s, struct ast_node *e);
/* $a[i] of a by-value array (TY_INTARRAY) */
int sema_intarray_index(struct sema *s, struct ast_node *e);
/* sema_addr.c: &$x */
int sema_check_addr(struct sema *s, struct ast_node *e);
int sema_map_call(struct sema *s, struct ast_node *call, const struct builtin *b);
int sema_check_has_key(struct sema *s, struct ast_node *e, const struct builtin *b);

/* A struct value (@m = *p, print(*p)) is copied through the 512-byte BPF stack. */
#define SEMA_MAX_STRUCT_COPY 256

/* sema_ctypes.c */
/* Parses a C definition (struct NAME { ... }) into a script type. */
int sema_ctypes_define(struct sema *s, struct ast_node *cdef);
/* C's integer type names (uint64_t, u32, size_t ...), or NULL. */
struct gt_type *sema_ctype_int_named(struct sema *s, const char *name);
/* "struct NAME": the script's definition, else the kernel's (BTF), else NULL. */
struct gt_type *sema_struct_named(struct sema *s, const char *name);
/* The index of field NAME in struct T (a kernel struct's fields are read now), or -1. */
int sema_struct_field(struct sema *s, struct gt_type *t, const char *name);
/* A kernel enum constant (BTF). */
bool sema_enum_value(struct sema *s, const char *name, int64_t *v);
/* A tracepoint field's declaration, "struct X * name": that pointer type, or NULL. */
struct gt_type *sema_ctype_from_decl(struct sema *s, const char *decl);
/* The type of kernel BTF type ID (ints, pointers, structs ...). */
struct gt_type *sema_ctype_from_btf(struct sema *s, int id);

/* sema_clayout.c: a script's C definition laid out as GCC does on x86-64 (SysV) */
struct clayout_member {
	struct gt_type *ty;
	const char *name; /* NULL: an unnamed bit-field (padding, or :0) */
	int width;        /* a bit-field's width in bits, -1: not a bit-field */
};
/* The offsets, bit-fields, size and alignment of T from its N members; PACKED and
 * ALIGNED (0: none) from __attribute__((packed, aligned(N))). */
void sema_clayout(struct sema *s, struct gt_type *t, const struct clayout_member *m, int n,
		  bool un, bool packed, int aligned);

/* sema_go.c: args.NAME, rets.NAME, retval and what they reach */
struct binfo_godwarf *sema_godwarf(struct sema *s, struct binfo *bi);
void sema_go_free(struct sema *s);
bool sema_is_go(const struct ast_node *e);
/* Whether N (a clause, statement or expression) names args, rets or retval: its go:
 * :entry probes leave out inlined copies of a function that also has out-of-line
 * code, whose values live wherever the caller's code put them. */
bool sema_reads_go_names(struct sema *s, struct ast_node *n);
/* A Go interface or slice: nil when its first word (itab or type; data) is 0, which is
 * the word codegen reads for it as a scalar. */
bool sema_go_nilable_aggregate(const struct ast_node *e);
/* 0, or -EINVAL after an error when E's type differs between the clause's functions
 * (sema_goref.varies) and its use depends on that type. */
int sema_go_uniform(struct sema *s, struct ast_node *e);
/* "rets.err (error)": a Go value's name and type for messages, or NULL. */
const char *sema_go_describe(struct sema *s, struct ast_node *e);
int sema_go_field(struct sema *s, struct ast_node *e, bool result);
int sema_go_index(struct sema *s, struct ast_node *e);
int sema_go_deref(struct sema *s, struct ast_node *e);
int sema_go_len(struct sema *s, struct ast_node *e, bool cap);
/* retval typed from DWARF: 0, 1 when DWARF cannot say (the first integer result register then), or -EINVAL. */
int sema_go_retval(struct sema *s, struct ast_node *e);
/* sema_gocap.c: print()'s capture of a Go value */
/* The walk of map type T (struct gt_gomap) from the linker's types behind its header,
 * the types of its slots' keys and values in *KT and *VT (a pointer where Go keeps them
 * out of the slot): false when the layout is not one gotrace knows. */
bool sema_go_map_walk(const struct binfo_gotype *t, struct gt_gomap *w,
		      const struct binfo_gotype **kt, const struct binfo_gotype **vt);
struct gt_type *sema_go_print_type(struct sema *s, struct ast_node *e);
bool sema_go_bytes_as_string(struct sema *s, struct ast_node *e);
/* A Go interface as a map key: its type (a PG_IFACE capture with go_key), or NULL when
 * E is not an interface. */
struct gt_type *sema_go_key_type(struct sema *s, struct ast_node *e);
void sema_go_want_types(struct sema *s);
int sema_go_finish(struct sema *s, struct gt_plan *plan);

/* sema_stack.c: ustack, kstack */
int sema_check_stack(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_sym(struct sema *s, struct ast_node *e, const struct builtin *b);
int sema_check_uaddr(struct sema *s, struct ast_node *e, const struct builtin *b);
void sema_stack_finish(struct sema *s, struct gt_plan *plan);
/* "ustack(127)", "kstack(perf, 5)": a stack type in messages. */
void sema_stack_name(struct sema *s, const struct gt_type *t, char *buf, size_t len);

/* sema_macros.c */
int sema_macros_directive(struct sema *s, struct ast_node *d);
int sema_macros_includes(struct sema *s); /* --include FILE */
const struct sema_macro *sema_macro_find(struct sema *s, const char *name);

/* sema_maps.c */
/* The aggregation entry of an AST_CALL node (count(), hist() ...), or NULL. */
const struct builtin *sema_aggregation(struct sema *s, struct ast_node *e);
void sema_discover_maps(struct sema *s, struct ast_node *program);
int sema_map_use(struct sema *s, struct ast_node *e, struct sema_map **out);
/* A map something is stored in, or NULL. */
const struct sema_map *sema_map_by_name(struct sema *s, const char *name, int *id);
int sema_map_read(struct sema *s, struct ast_node *e);
/* for ($kv : @m): the type of $kv, (key, value), or NULL after an error. */
struct gt_type *sema_map_iter_type(struct sema *s, struct ast_node *for_node);
int sema_map_assign(struct sema *s, struct ast_node *st);
/* sema_tseries.c: tseries()'s argument count (bpftrace's messages), then its arguments
 * merged into map M; the plan's tseries fields of a finished map */
int sema_tseries_nargs(struct sema *s, struct ast_node *call);
int sema_tseries_args(struct sema *s, struct ast_node *call, struct sema_map *m);
int sema_tseries_finish(struct sema *s, const struct sema_map *m, struct plan_map *pm);
int sema_finish_maps(struct sema *s, struct gt_plan *plan, struct arena *a);
int sema_check_block(struct sema *s, struct ast_node *block);
int sema_check_expr(struct sema *s, struct ast_node *e);
struct sema_node *sema_node_of(struct sema *s, struct ast_node *n);

#endif
