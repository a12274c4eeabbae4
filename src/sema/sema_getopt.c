/* sema_getopt: current bpftrace's named program parameters. getopt("NAME"[, DEFAULT[,
 * "DESCRIPTION"]]) reads --NAME[=VALUE] given after `--` on the command line. The value
 * is known before anything is compiled, so each call becomes its constant (BI_CONST,
 * BI_CONSTSTR): the program, its cache key and its checks see the value itself. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sema/sema_int.h"

enum opt_kind { OPT_BOOL, OPT_UINT, OPT_INT, OPT_STR };

/* "NAME" or "NAME=VALUE" from the command line for name; NULL when not given. The last
 * one given counts. */
static const char *given(const struct sema_options *o, const char *name, const char **value)
{
	const char *hit = NULL;
	size_t n = strlen(name);
	for (int i = 0; i < o->nnamed; i++) {
		const char *a = o->named[i];
		if (strncmp(a, name, n) || (a[n] && a[n] != '='))
			continue;
		hit = a;
		*value = a[n] == '=' ? a + n + 1 : NULL;
	}
	return hit;
}

static int bad_value(const char *name, const char *value, const char *what)
{
	diag_fatal("program command line option --%s %s (value: %s)", name, what, value);
	return -EINVAL;
}

/* The default as text, to say what an earlier call gave. */
static const char *default_text(struct sema *s, const struct ast_node *d)
{
	if (!d)
		return "false";
	if (d->kind == AST_STR)
		return d->u.str.bytes;
	if (d->kind == AST_INT && d->u.int_.is_bool)
		return d->u.int_.value ? "true" : "false";
	if (d->kind == AST_INT)
		return arena_printf(s->arena, "%llu", (unsigned long long)d->u.int_.value);
	return arena_printf(s->arena, "-%llu",
			    (unsigned long long)d->u.unary.operand->u.int_.value);
}

/* --NAME[=VALUE] was given: VALUE (NULL without '=') as the default's kind. */
static int parse_value(struct sema *s, struct ast_node *e, enum opt_kind kind, const char *name,
		       const char *value)
{
	struct sema_node *sn = sema_node_of(s, e);
	if (kind == OPT_STR) {
		if (!value)
			return bad_value(name, "true", "expects a string");
		sn->builtin = BI_CONSTSTR;
		sn->const_str = value;
		e->ty = sema_type_new(s, TY_STR, (int)strlen(value) + 1, false);
		return 0;
	}
	if (kind == OPT_BOOL) {
		if (value) {
			static const char *const yes[] = {"1", "true", "on", "yes"};
			static const char *const no[] = {"0", "false", "off", "no"};
			int v = -1;
			for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
				v = !strcasecmp(value, yes[i]) ? 1 : v;
				v = !strcasecmp(value, no[i]) ? 0 : v;
			}
			if (v < 0)
				return bad_value(name, value, "expects a boolean (e.g. 'true')");
			sn->const_val = v;
		} else {
			sn->const_val = 1;
		}
		sn->builtin = BI_CONST;
		e->ty = sema_type_bool(s);
		return 0;
	}
	if (!value)
		return bad_value(name, "true", "expects an integer");
	char *end;
	errno = 0;
	if (kind == OPT_UINT)
		sn->const_val = (int64_t)strtoull(value, &end, 0);
	else
		sn->const_val = strtoll(value, &end, 0);
	if (!*value || *end || (kind == OPT_UINT && value[strspn(value, " \t")] == '-'))
		return bad_value(name, value, "invalid integer");
	if (errno == ERANGE)
		return bad_value(name, value, "value is out of range");
	sn->builtin = BI_CONST;
	e->ty = kind == OPT_UINT ? &sema_ty_u64 : &sema_ty_i64;
	return 0;
}

int sema_check_getopt(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	(void)b;
	struct ast_list *args = &e->u.call.args;
	struct ast_node *name = args->v[0], *dflt = args->n > 1 ? args->v[1] : NULL;
	struct ast_node *desc = args->n > 2 ? args->v[2] : NULL;
	if (name->kind != AST_STR) {
		diag_error(s->src, name->loc, "First argument to 'getopt' must be a string literal.");
		return -EINVAL;
	}
	enum opt_kind kind = OPT_BOOL;
	if (!dflt || (dflt->kind == AST_INT && dflt->u.int_.is_bool))
		kind = OPT_BOOL;
	else if (dflt->kind == AST_STR)
		kind = OPT_STR;
	else if (dflt->kind == AST_INT)
		kind = OPT_UINT;
	else if (dflt->kind == AST_UNARY && dflt->u.unary.op == OP_NEG &&
		 dflt->u.unary.operand->kind == AST_INT && !dflt->u.unary.operand->u.int_.is_bool)
		kind = OPT_INT;
	else {
		diag_error(s->src, dflt->loc, "Second argument to 'getopt' must be a string literal, "
			   "integer literal, or a boolean literal.");
		return -EINVAL;
	}
	if (desc && desc->kind != AST_STR) {
		diag_warning(s->src, desc->loc, "Function 'getopt' requires the third parameter to "
			     "be a string literal.");
		desc = NULL;
	}
	const char *n = name->u.str.bytes, *text = default_text(s, dflt);
	struct sema_getopt *prev = NULL;
	for (int i = 0; i < s->getopts.n; i++)
		if (!strcmp(s->getopts.v[i].name, n))
			prev = &s->getopts.v[i];
	if (prev && strcmp(prev->dflt, text)) {
		diag_error(s->src, e->loc, "Command line option '%s' needs to have the same default "
			   "value in all places it is used. Previous default value: %s", n,
			   prev->dflt);
		return -EINVAL;
	}
	if (prev && desc && prev->desc && strcmp(prev->desc, desc->u.str.bytes)) {
		diag_error(s->src, e->loc, "Command line option '%s' must have the same description "
			   "in all places it's used. Hint: You can wrap it in a macro", n);
		return -EINVAL;
	}
	if (!prev)
		vec_push(&s->getopts, ((struct sema_getopt){n, text, NULL}));
	prev = prev ? prev : &s->getopts.v[s->getopts.n - 1];
	if (desc && !prev->desc)
		prev->desc = desc->u.str.bytes;

	const char *value = NULL;
	bool is_given = given(s->opts, n, &value) != NULL;
	if (is_given)
		return parse_value(s, e, kind, n, value);
	/* not given: the default */
	struct sema_node *sn = sema_node_of(s, e);
	switch (kind) {
	case OPT_STR:
		sn->builtin = BI_CONSTSTR;
		sn->const_str = dflt->u.str.bytes;
		e->ty = sema_type_new(s, TY_STR, dflt->u.str.len + 1, false);
		return 0;
	case OPT_BOOL:
		sn->const_val = dflt ? (int64_t)dflt->u.int_.value : 0;
		e->ty = sema_type_bool(s);
		break;
	case OPT_UINT:
		sn->const_val = (int64_t)dflt->u.int_.value;
		e->ty = &sema_ty_u64;
		break;
	case OPT_INT:
		sn->const_val = -(int64_t)dflt->u.unary.operand->u.int_.value;
		e->ty = &sema_ty_i64;
		break;
	}
	sn->builtin = BI_CONST;
	return 0;
}

/* The options the program reads, for a hint: "--a: --b" (or one a line, with their
 * descriptions, for --help). */
static void hint(struct sema *s, bool help)
{
	struct strbuf sb = {0};
	if (!s->getopts.n)
		strbuf_puts(&sb, "no custom program options defined.");
	else
		strbuf_puts(&sb, help ? "expected program options:\n" : "expected program options: ");
	for (int i = 0; i < s->getopts.n; i++) {
		const struct sema_getopt *g = &s->getopts.v[i];
		strbuf_printf(&sb, "%s--%s", i ? (help ? "\n" : ": ") : "", g->name);
		if (help && g->desc)
			strbuf_printf(&sb, ": %s", g->desc);
	}
	diag_print(DIAG_PLAIN, "HINT: %s", sb.buf);
	strbuf_free(&sb);
}

int sema_getopt_finish(struct sema *s)
{
	struct strbuf bad = {0};
	bool help = false;
	for (int i = 0; i < s->opts->nnamed; i++) {
		const char *a = s->opts->named[i];
		size_t n = strcspn(a, "=");
		bool known = false;
		for (int j = 0; j < s->getopts.n && !known; j++)
			known = strlen(s->getopts.v[j].name) == n && !strncmp(s->getopts.v[j].name, a, n);
		if (known)
			continue;
		if (n == 4 && !strncmp(a, "help", 4)) {
			help = true;
			continue;
		}
		strbuf_printf(&bad, "%s--%.*s", bad.len ? ", " : "", (int)n, a);
	}
	int err = 0;
	if (bad.len) {
		diag_fatal("unexpected program command line options: %s", bad.buf);
		err = -EINVAL;
	}
	if (bad.len || help) {
		hint(s, help);
		err = -EINVAL;
	}
	strbuf_free(&bad);
	return err;
}
