/* Internal state of the code generator. */
#ifndef GT_CG_INT_H
#define GT_CG_INT_H

#include <linux/bpf.h>
#include <llvm-c/Core.h>
#include <llvm-c/DebugInfo.h>
#include <llvm-c/TargetMachine.h>

#include "arch/arch.h"
#include "codegen/cg.h"

struct cg {
	LLVMContextRef ctx;
	LLVMModuleRef mod;
	LLVMBuilderRef b;
	LLVMDIBuilderRef dib;
	LLVMTargetMachineRef tm;
	const struct diag_src *src;
	struct gt_plan *plan;
	const struct cg_options *opts;
	char *llvm_error; /* first error from LLVM's diagnostic handler */

	LLVMTypeRef i1, i8, i32, i64, ptr;
	LLVMMetadataRef di_file, di_cu, di_int, di_u8, di_u32, di_u64, di_ptr;
	LLVMValueRef map_events, map_lost, map_config, map_full;
	LLVMValueRef *maps; /* [plan->nmaps] */
	LLVMValueRef *aggfns; /* [plan->nmaps]: an aggregation map's global update function */
	LLVMValueRef scratch_map;  /* cg_scratch.c: GT_MAP_SCRATCH (a placeholder until the end) */
	LLVMValueRef scratch_slot; /* per function: the alloca holding its row's address */
	int scratch_used;          /* per program: bytes of its row given out */
	int scratch_max;           /* the largest row */
	LLVMValueRef *stackmaps; /* [plan->nstackmaps] */
	LLVMValueRef *uwmaps;    /* [plan->nstackmaps]: unwound user stacks, when plan->nunwind */
	LLVMValueRef uwtab, uwscratch; /* gt_unwind.c's table and scratch */
	LLVMValueRef uwtarget;         /* its struct gt_uwtarget (a constant) */
	LLVMValueRef site_func_tab, site_probe_tab, site_vaddr_tab; /* cg_sites.c, on first use */
	LLVMValueRef signame_tab; /* cg_tables.c, on first use */
	bool funcgraph; /* the program records call graphs: root calls may be dropped whole */

	/* per program */
	LLVMValueRef fn, ctx_arg;
	LLVMMetadataRef di_sp;
	const struct sema_prog *sp;
	const struct plan_prog *pp;
	LLVMValueRef *vars; /* alloca per variable slot */
	LLVMBasicBlockRef exit_bb;   /* return: the probe ends */
	LLVMBasicBlockRef alloca_bb;
	LLVMBasicBlockRef brk_bb, cont_bb; /* break, continue of the innermost loop */
	LLVMValueRef cookie;    /* i64: site id | flags << 32 (uprobe programs) */
	LLVMValueRef now;       /* i64: ktime at program start */
	LLVMValueRef target;    /* constant struct gt_target, or NULL */
	LLVMValueRef gomap_out; /* alloca of print()'s Go map walks (one for all), or NULL */
	LLVMValueRef depth;     /* alloca i64, or NULL */
	LLVMValueRef duration;  /* alloca i64, or NULL */
	LLVMValueRef oncpu;     /* alloca i64 (the script uses oncpu), or NULL */
	/* buffers of the statement being lowered (strings, tuples, keys): live from their
	 * first use to the statement's end, so that LLVM reuses their stack bytes */
	struct cg_temp {
		LLVMValueRef buf;
		int size;
	} *temps;
	int ntemps, captemps;
};

/* cg_module.c */
/* A call of BPF helper ID (enum bpf_func_id of <linux/bpf.h>). */
LLVMValueRef cg_helper(struct cg *g, enum bpf_func_id id, LLVMTypeRef ret, LLVMValueRef *args,
		       int nargs);
/* Stops on a node that sema should not have let through: a bug, said loudly. */
_Noreturn void cg_internal_error(struct cg *g, const struct ast_node *n, const char *what);
LLVMValueRef cg_runtime_call(struct cg *g, const char *name, LLVMValueRef *args, int nargs);
LLVMValueRef cg_alloca(struct cg *g, LLVMTypeRef ty, const char *name);
/* A buffer for the statement being lowered (see cg.temps); cg_temps_end() ends it. Over
 * CG_STACK_BUF_MAX bytes it is in the scratch map. */
LLVMValueRef cg_str_alloca(struct cg *g, int size);
/* The same on the stack whatever its size (what a helper wants on the stack: bpf_loop's
 * and bpf_for_each_map_elem's context). */
LLVMValueRef cg_stack_temp(struct cg *g, int size);
/* A buffer live for the whole program ($variables). */
LLVMValueRef cg_buf_alloca(struct cg *g, int size);
/* Ends the buffers made since cg.ntemps was MARK (at the insert point). */
void cg_temps_end(struct cg *g, int mark);
LLVMValueRef cg_cookie(struct cg *g); /* bpf_get_attach_cookie(), uprobe programs */
LLVMValueRef cg_now(struct cg *g);    /* bpf_ktime_get_ns() at the program's start */
void cg_set_loc(struct cg *g, struct gt_loc loc);
LLVMValueRef cg_const(struct cg *g, uint64_t v);

LLVMValueRef cg_define_map_sized(struct cg *g, const char *name, unsigned type, unsigned max,
				 unsigned key_size, unsigned value_size);

/* cg_sites.c */
/* The first site with the name (function, or probe when PROBE) of SITE (an i64). */
LLVMValueRef cg_site_name(struct cg *g, LLVMValueRef site, bool probe);
/* The probed binary's load bias (0 as linked). */
LLVMValueRef cg_site_bias(struct cg *g);

/* cg_maps.c */
void cg_define_script_maps(struct cg *g);
void cg_map_assign(struct cg *g, struct ast_node *st);
LLVMValueRef cg_map_read(struct cg *g, struct ast_node *e);
/* The value of an aggregation (plan_map.percpu) at key, its CPUs' parts made one. */
LLVMValueRef cg_agg_read(struct cg *g, int id, const struct plan_map *m, LLVMValueRef key);
/* delete(): 1 when the key was there (current bpftrace's bool), else 0 */
LLVMValueRef cg_map_delete(struct cg *g, struct ast_node *call);
LLVMValueRef cg_map_has(struct cg *g, struct ast_node *mn); /* has_key(): 0 or 1 */
LLVMValueRef cg_load_or_zero(struct cg *g, LLVMValueRef map, LLVMValueRef key);
/* u64 number FIELD of gt_config (struct plan_config, in its order), 0 if unreadable. */
LLVMValueRef cg_config(struct cg *g, int field);
void cg_config_set(struct cg *g, int field, LLVMValueRef v); /* the u64 FIELD of gt_config */
LLVMValueRef cg_map_incdec(struct cg *g, struct ast_node *e);

/* cg_expr.c */
LLVMValueRef cg_expr(struct cg *g, struct ast_node *e);
/* l OP r for an arithmetic, bitwise or shift operator (binary and compound assignment):
 * signed / and % when both sides are signed, >> arithmetic when the left one is. */
/* N elements of pointer type T in bytes (N itself when T is not a pointer). */
LLVMValueRef cg_ptr_step(struct cg *g, const struct gt_type *t, LLVMValueRef n);
LLVMValueRef cg_arith(struct cg *g, const struct ast_node *at, enum ast_op op, LLVMValueRef l,
		      bool l_signed, LLVMValueRef r, bool r_signed);
void cg_str_into(struct cg *g, struct ast_node *e, LLVMValueRef dst, int size);
/* The bytes of the struct E is (an address in memory) into DST. */
void cg_struct_into(struct cg *g, struct ast_node *e, LLVMValueRef dst);
/* Writes tuple-typed E into DST laid out as DT (same fields; widths and sizes may differ). */
void cg_tuple_into(struct cg *g, struct ast_node *e, LLVMValueRef dst, const struct gt_type *dt);
LLVMValueRef cg_cond(struct cg *g, struct ast_node *e); /* i1 */
/* The low SIZE bytes of v, sign- or zero-extended back to i64. */
LLVMValueRef cg_narrow(struct cg *g, LLVMValueRef v, int size, bool is_signed);

LLVMValueRef cg_load_reg(struct cg *g, int off); /* u64 at OFF of the saved registers (arch.h) */
LLVMValueRef cg_load_ctx(struct cg *g, int off, int size); /* SIZE bytes at OFF of ctx */
LLVMValueRef cg_gep8(struct cg *g, LLVMValueRef p, int off); /* P + OFF bytes */
/* signal_name(n)'s text into DST (SIZE bytes), from a table in .rodata */
void cg_signal_name_into(struct cg *g, LLVMValueRef sig, LLVMValueRef dst, int size);
/* Stores i64 V at P + OFF (8-aligned: records, keys and buffers are). */
void cg_store64(struct cg *g, LLVMValueRef p, int off, LLVMValueRef v);
/* SIZE bytes at P set to 0, whatever SIZE (a loop when big; P then ALIGN 8) */
void cg_zero(struct cg *g, LLVMValueRef p, int size, unsigned align);
/* memcpy of SIZE bytes that BPF can run at any size */
void cg_copy(struct cg *g, LLVMValueRef dst, LLVMValueRef src, int size);

/* cg_array.c: arrays held by value (TY_INTARRAY) */
LLVMValueRef cg_array_cast(struct cg *g, struct ast_node *e);   /* (int8[8])x: its buffer */
LLVMValueRef cg_array_to_int(struct cg *g, struct ast_node *e); /* (uint64)$a */
LLVMValueRef cg_array_elem(struct cg *g, struct ast_node *e);   /* $a[i] */

/* cg_go.c: Go values named through args / rets */
LLVMValueRef cg_go_value(struct cg *g, struct ast_node *e); /* an integer or a pointer */
void cg_go_str_into(struct cg *g, struct ast_node *e, LLVMValueRef dst, int size);
LLVMValueRef cg_go_len(struct cg *g, struct ast_node *call, bool cap);
/* print(): E's capture as plan_arg A lays it out, into DST */
void cg_go_capture(struct cg *g, struct ast_node *e, LLVMValueRef dst, const struct plan_arg *a);
/* A Go interface as a map key (plan_arg.go_key) into DST. */
void cg_go_key(struct cg *g, struct ast_node *e, LLVMValueRef dst, const struct plan_arg *a);

/* cg_stack.c: ustack / kstack into DST (24 bytes: id, pid, caller at a go: entry) */
#define CG_STACK_ENTRIES 16384 /* distinct stacks a stack map keeps */
void cg_stack_into(struct cg *g, struct ast_node *e, LLVMValueRef dst);
/* usym(a), ksym(a), caller into DST (16 bytes: the address, the pid) */
void cg_sym_into(struct cg *g, struct ast_node *e, LLVMValueRef dst);

/* cg_bitfield.c: the C bit-field field access E names (sema_node.bitfield), in the
 * struct at ADDR (its field's byte offset added), in user or kernel memory */
LLVMValueRef cg_bitfield_read(struct cg *g, const struct ast_node *e, LLVMValueRef addr,
			      bool user);

/* cg_goruntime.c */
void cg_goruntime_prologue(struct cg *g);
/* The body of oncpu's hidden sched_switch program (HIDDEN_SCHED_SWITCH). */
void cg_oncpu_switch(struct cg *g);
LLVMValueRef cg_goid(struct cg *g);

/* cg_stmt.c */
/* -k: when FAILED (i1), a helper-error record of AT's event (sema_node.err_event) with
 * the helper's return code RC; nothing without one. */
void cg_helper_check(struct cg *g, const struct ast_node *at, LLVMValueRef failed, LLVMValueRef rc);
void cg_program(struct cg *g, const struct sema_prog *sp);
void cg_block(struct cg *g, struct ast_node *block);
struct cg_param {
	LLVMTypeRef ty;
	LLVMMetadataRef di;
	const char *name;
};
/* Starts function NAME (at most 4 parameters) with the debug info BTF needs: sets
 * g->fn, g->di_sp and g->alloca_bb, the builder at its end. LOCAL: a static function. */
LLVMValueRef cg_begin_function(struct cg *g, const char *name, LLVMTypeRef ret,
			       LLVMMetadataRef di_ret, const struct cg_param *params, int nparams,
			       int line, bool local);

/* cg_scratch.c */
#define CG_STACK_BUF_MAX 64
bool cg_scratch_wants(const struct cg *g, int size);
/* SIZE bytes of the program's scratch row */
LLVMValueRef cg_scratch_buf(struct cg *g, int size);
/* At a function's end: its row's lookup in the entry block, when it used one. */
void cg_scratch_end_function(struct cg *g);
/* After the programs: the map, its rows as long as the longest. 0 or -E2BIG. */
int cg_scratch_define(struct cg *g);

/* cg_loop.c */
/* for ($kv : @m) and for ($i : a..b): the body is a callback of bpf_for_each_map_elem or
 * bpf_loop, reaching the probe's variables through pointers. */
void cg_for(struct cg *g, struct ast_node *st);

/* The program's sites are told apart by its link's cookie (plan_site ids): uprobes and
 * kprobes; the other kinds have one pseudo-site. */
static inline bool cg_has_sites(const struct cg *g)
{
	return g->pp->kind == PLAN_PROG_UPROBE || g->pp->kind == PLAN_PROG_KPROBE;
}

#endif
