/* cg: lower the checked AST to one BPF program per sema_prog through the LLVM-C API,
 * link the runtime-bpf bitcode, optimise at O2 and emit a BPF ELF object into the plan. */
#ifndef GT_CG_H
#define GT_CG_H

#include <stdbool.h>

#include "common/plan.h"
#include "sema/sema.h"

struct cg_options {
	bool dump_ir;  /* -d ir: print the optimised module on stdout */
	bool dump_bpf; /* -d bpf: print BPF instructions with script lines */
	bool verbose;
	const char *src_name;
};

/* Returns 0 and fills plan->obj / obj_size, or a negative errno after a message.
 * Defined in the code generator module (gotrace-cg.so), which links LLVM. */
int cg_generate(const struct diag_src *src, struct sema_result *sr, struct gt_plan *plan,
		const struct cg_options *opts);

/* The tool's side (cg_load.c): cg_generate of the module, loaded on first use from
 * GT_CODEGEN, else next to the executable (the build tree), else ../lib/gotrace. */
/* Where cg_load_generate finds the module (its identity is part of the cache key). */
void cg_load_module_path(char *out, size_t len);
int cg_load_generate(const struct diag_src *src, struct sema_result *sr, struct gt_plan *plan,
		     const struct cg_options *opts);

#endif
