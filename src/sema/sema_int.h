/* Internal state shared by the sema modules. */
#ifndef GT_SEMA_INT_H
#define GT_SEMA_INT_H

#include "common/util.h"
#include "sema/sema.h"

struct binfo;

struct sema {
	struct arena *arena;
	const struct diag_src *src;
	const struct sema_options *opts;
	VEC(struct plan_site) sites;
	VEC(struct plan_prog) progs;
	VEC(struct plan_event) events;
	VEC(struct sema_prog) sprogs;
	struct binfo **targets;
	const char **target_paths;
	int ntargets;
	int group_site_begin;
	unsigned clause_kinds; /* 1 << plan_prog_kind of the clause being checked */
	VEC(struct sema_var) vars; /* variables of the clause being checked */
	bool in_unroll_or_loop;
};

struct binfo *sema_target(struct sema *s, const char *path, struct gt_loc loc);
int sema_expand_probes(struct sema *s, struct ast_node *clause, int ci);
int sema_check_block(struct sema *s, struct ast_node *block);
int sema_check_expr(struct sema *s, struct ast_node *e);
struct sema_node *sema_node_of(struct sema *s, struct ast_node *n);

#endif
