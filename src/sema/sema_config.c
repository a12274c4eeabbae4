/* sema_config: current bpftrace's config block, config = { NAME = VALUE; ... }. Names are
 * bpftrace's config variables (stack_mode, STACK_MODE and BPFTRACE_STACK_MODE are one);
 * values are checked here and handed to gt_getenv's table, so that a setting read from
 * the environment (which still wins) can come from the script too. Variables that tune
 * bpftrace's own machinery (log_size, on_stack_limit ...) are accepted and change nothing:
 * gotrace has no such knob (docs/bpftrace-differences.md). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/arena.h"
#include "common/util.h"
#include "sema/sema_int.h"
#include "sema/sema.h"

enum cfg_kind { CFG_INT, CFG_BOOL, CFG_ENUM, CFG_LICENSE, CFG_STR };

static const struct cfg_var {
	const char *name;
	enum cfg_kind kind;
	const char *values; /* CFG_ENUM: the accepted words, space-separated */
	const char *env;    /* what gt_getenv reads it as; NULL: no effect in gotrace */
	const char *later;  /* CFG_ENUM: values gotrace refuses (not supported yet) */
} vars[] = {
	{"cache_user_symbols", CFG_ENUM, "per_pid per_program none 1 0", NULL, NULL},
	{"cpp_demangle", CFG_BOOL, NULL, NULL, NULL},
	{"lazy_symbolication", CFG_BOOL, NULL, NULL, NULL},
	{"license", CFG_LICENSE, NULL, NULL, NULL},
	{"log_size", CFG_INT, NULL, NULL, NULL},
	{"max_bpf_progs", CFG_INT, NULL, NULL, NULL},
	{"max_cat_bytes", CFG_INT, NULL, "CAT_BYTES_MAX", NULL},
	{"max_map_keys", CFG_INT, NULL, "MAX_MAP_KEYS", NULL},
	{"max_probes", CFG_INT, NULL, NULL, NULL},
	{"max_strlen", CFG_INT, NULL, "STRLEN", NULL},
	{"missing_probes", CFG_ENUM, "error warn ignore", "MISSING_PROBES", NULL},
	{"on_stack_limit", CFG_INT, NULL, NULL, NULL},
	{"perf_rb_pages", CFG_INT, NULL, NULL, NULL},
	{"print_maps_on_exit", CFG_BOOL, NULL, "PRINT_MAPS_ON_EXIT", NULL},
	{"show_debug_info", CFG_BOOL, NULL, NULL, NULL},
	{"stack_mode", CFG_ENUM, "bpftrace perf raw build_id", "STACK_MODE", NULL},
	{"str_trunc_trailer", CFG_STR, NULL, NULL, NULL},
};

/* bpftrace's list, in the order its message gives them */
static const char *const licenses[] = {"Dual MIT/GPL", "Dual BSD/GPL", "Dual MPL/GPL",
				       "GPL and additional rights", "GPL v2", "GPL"};

static bool word_in(const char *list, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = list; p && *p;) {
		size_t k = strcspn(p, " ");
		if (k == n && !strncasecmp(p, w, n))
			return true;
		p += k + (p[k] == ' ');
	}
	return false;
}

/* "BPFTRACE_STACK_MODE", "STACK_MODE", "stack_mode": the variable, or NULL */
static const struct cfg_var *find(const char *name)
{
	if (!strncmp(name, "BPFTRACE_", 9))
		name += 9;
	for (size_t i = 0; i < ARRAY_SIZE(vars); i++)
		if (!strcasecmp(vars[i].name, name))
			return &vars[i];
	/* unstable_FEATURE = enable | warn | error: features gotrace has or lacks anyway */
	if (!strncasecmp(name, "unstable_", 9)) {
		static const struct cfg_var unstable = {"unstable", CFG_ENUM, "enable warn error",
							NULL, NULL};
		return &unstable;
	}
	return NULL;
}

static int check_one(struct arena *a, const struct diag_src *src, const struct ast_node *c)
{
	const char *name = c->u.config.name, *v = c->u.config.value;
	const struct cfg_var *var = find(name);
	if (!var) {
		diag_error(src, c->loc, "%s: not a known configuration option", name);
		return -EINVAL;
	}
	switch (var->kind) {
	case CFG_INT: {
		char *end;
		errno = 0;
		long long n = strtoll(v, &end, 0);
		if (!*v || *end || errno || n < 0) {
			diag_error(src, c->loc, "%s: expecting a number, got %s", name, v);
			return -EINVAL;
		}
		break;
	}
	case CFG_BOOL:
		if (!word_in("true false 1 0", v)) {
			diag_error(src, c->loc, "%s: Invalid bool value: valid values are true, false, "
				   "1 or 0.", name);
			return -EINVAL;
		}
		/* the environment's spelling: 1 or 0 */
		v = !strcasecmp(v, "true") || !strcmp(v, "1") ? "1" : "0";
		break;
	case CFG_ENUM:
		if (!word_in(var->values, v)) {
			diag_error(src, c->loc, "%s: invalid value '%s'; valid values are %s", name, v,
				   var->values);
			return -EINVAL;
		}
		if (var->later && word_in(var->later, v)) {
			diag_error(src, c->loc, "%s=%s is not supported yet", name, v);
			return -ENOTSUP;
		}
		break;
	case CFG_LICENSE: {
		bool ok = false;
		for (size_t i = 0; i < ARRAY_SIZE(licenses); i++)
			ok |= !strcmp(v, licenses[i]);
		if (!ok) {
			struct strbuf sb = {0};
			for (size_t i = 0; i < ARRAY_SIZE(licenses); i++)
				strbuf_printf(&sb, "%s%s", i ? ", " : "", licenses[i]);
			diag_error(src, c->loc, "Invalid value for license. Found: %s. Valid values: %s",
				   v, sb.buf);
			strbuf_free(&sb);
			return -EINVAL;
		}
		break;
	}
	case CFG_STR:
		break;
	}
	if (var->env)
		gt_config_set(var->env, arena_strdup(a, v));
	return 0;
}

int sema_config_apply(struct arena *a, const struct diag_src *src, const struct ast_node *program)
{
	int err = 0;
	const struct ast_list *l = &program->u.program.cdefs;
	for (int i = 0; i < l->n; i++)
		if (l->v[i]->kind == AST_CONFIG)
			err |= check_one(a, src, l->v[i]);
	/* current bpftrace's environment names are BPFTRACE_ and the config name
	 * (BPFTRACE_MAX_CAT_BYTES); gotrace's older ones (BPFTRACE_CAT_BYTES_MAX) win */
	for (size_t i = 0; i < ARRAY_SIZE(vars); i++) {
		char name[64];
		size_t n = (size_t)snprintf(name, sizeof(name), "BPFTRACE_%s", vars[i].name);
		for (size_t k = 9; k < n && k < sizeof(name); k++)
			name[k] = (char)toupper((unsigned char)name[k]);
		const char *v = vars[i].env ? getenv(name) : NULL;
		if (v && strcmp(name + 9, vars[i].env))
			gt_config_set(vars[i].env, v);
	}
	return err ? -EINVAL : 0;
}

enum sema_missing sema_missing_probes(void)
{
	const char *v = gt_getenv("MISSING_PROBES");
	if (v && !strcasecmp(v, "warn"))
		return MISSING_WARN;
	if (v && !strcasecmp(v, "ignore"))
		return MISSING_IGNORE;
	return MISSING_ERROR;
}
