/* fg_args: go-ftrace's argument specs, --args 'FUNC(name=RULE:TYPE, ...)', and Go
 * values by their DWARF names, --args 'FUNC(a, s.name, xs[0])':
 *
 *   main.(*Student).String(s.name=*+0(%ax):c64, s.age=+16(%ax):s64)
 *   main.(*Student).String(s.name=(*+0(%ax)):c64)      grouping parentheses allowed
 *   main.(*Student).String(s.name, s.age)              args.s.name, args.s.age
 *
 * A RULE is checked here against the fetch-rule grammar of the language
 * (%reg | (%reg) | +N(rule) | -N(rule) | *rule) and written back without grouping
 * parentheses, so that what the generated program says is known to parse. */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "common/diag.h"
#include "common/util.h"
#include "funcgraph/funcgraph.h"
#include "sema/sema.h"

static char *trim_dup(const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s)) {
		s++;
		n--;
	}
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	char *r = xmalloc(n + 1);
	memcpy(r, s, n);
	r[n] = 0;
	return r;
}

/* Index of the ')' matching the '(' at S[OPEN], or -1. */
static long match_paren(const char *s, long open)
{
	int depth = 0;
	for (long i = open; s[i]; i++) {
		if (s[i] == '(')
			depth++;
		else if (s[i] == ')' && --depth == 0)
			return i;
	}
	return -1;
}

struct rule_parser {
	const char *p;
	struct strbuf out;
	const char *err;
};

/* rule := '%' REG | '(' rule ')' | ('+'|'-') INT '(' rule ')' | '*' rule */
static bool parse_rule(struct rule_parser *rp, int depth)
{
	const char *p = rp->p;
	if (depth > 32) {
		rp->err = "nested too deeply";
		return false;
	}
	if (*p == '%') {
		const char *q = ++p;
		while (isalnum((unsigned char)*q))
			q++;
		char reg[16];
		if (q == p || q - p >= (long)sizeof(reg)) {
			rp->err = "expected a register after '%'";
			return false;
		}
		memcpy(reg, p, (size_t)(q - p));
		reg[q - p] = 0;
		if (arch_reg_offset(reg) < 0) {
			rp->err = "unknown register";
			return false;
		}
		strbuf_printf(&rp->out, "%%%s", reg);
		rp->p = q;
		return true;
	}
	if (*p == '(') { /* grouping */
		rp->p = p + 1;
		if (!parse_rule(rp, depth + 1))
			return false;
		if (*rp->p != ')') {
			rp->err = "expected ')'";
			return false;
		}
		rp->p++;
		return true;
	}
	if (*p == '*') {
		strbuf_putc(&rp->out, '*');
		rp->p = p + 1;
		return parse_rule(rp, depth + 1);
	}
	if (*p == '+' || *p == '-') {
		char *end;
		bool hex = p[1] == '0' && (p[2] == 'x' || p[2] == 'X');
		unsigned long long v = strtoull(p + 1, &end, hex ? 16 : 10);
		if (end == p + 1 || !isdigit((unsigned char)p[1]) || v > INT64_MAX) {
			rp->err = "expected a number after the sign";
			return false;
		}
		if (*end != '(') {
			rp->err = "expected '(' after the offset";
			return false;
		}
		strbuf_printf(&rp->out, "%c%llu(", *p, v);
		rp->p = end + 1;
		if (!parse_rule(rp, depth + 1))
			return false;
		if (*rp->p != ')') {
			rp->err = "expected ')'";
			return false;
		}
		strbuf_putc(&rp->out, ')');
		rp->p++;
		return true;
	}
	rp->err = "expected %REG, (RULE), +N(RULE), -N(RULE) or *RULE";
	return false;
}

static bool valid_type(const char *t)
{
	static const char *const ints[] = {"s8", "s16", "s32", "s64", "u8",
					   "u16", "u32", "u64", "str", "ptr"};
	for (size_t i = 0; i < ARRAY_SIZE(ints); i++)
		if (!strcmp(t, ints[i]))
			return true;
	if (t[0] == 'c' && t[1] >= '1' && t[1] <= '9') {
		char *end;
		long n = strtol(t + 1, &end, 10);
		return !*end && n >= 1 && n <= 1024;
	}
	return false;
}

const char *fg_arg_conv(const char *type)
{
	if (type[0] == 's' && type[1] != 't')
		return "%ld"; /* Go's integers are 64-bit */
	if (type[0] == 'u')
		return "%lu";
	if (!strcmp(type, "ptr"))
		return "%p";
	if (!strcmp(type, "v"))
		return "%v"; /* a Go value by name, in Go's %+v shape */
	return "%s"; /* cN, str */
}

static int parse_one(const char *opt, const char *spec, const char *item, size_t n, struct fg_arg *a)
{
	char *text = trim_dup(item, n);
	char *eq = strchr(text, '=');
	char *colon = strrchr(text, ':');
	int err = -EINVAL;
	memset(a, 0, sizeof(*a));
	if (!eq && !colon) { /* a Go value by name: PARAM(.FIELD | [N])* */
		bool ok = isalpha((unsigned char)text[0]) || text[0] == '_';
		for (const char *p = text; *p && ok; p++)
			ok = isalnum((unsigned char)*p) || strchr("_.[]", *p);
		if (!ok) {
			diag_fatal("%s '%s': '%s' is neither NAME=RULE:TYPE nor a Go parameter "
				   "by name (p, p.Field, xs[0])", opt, spec, text);
			goto out;
		}
		a->name = text;
		a->type = xstrdup("v");
		return 0;
	}
	if (!eq || !colon || colon < eq) {
		diag_fatal("%s '%s': '%s' is not NAME=RULE:TYPE", opt, spec, text);
		goto out;
	}
	a->name = trim_dup(text, (size_t)(eq - text));
	a->type = trim_dup(colon + 1, strlen(colon + 1));
	/* the rule, blanks removed */
	struct strbuf raw = {0};
	for (const char *p = eq + 1; p < colon; p++)
		if (!isspace((unsigned char)*p))
			strbuf_putc(&raw, *p);
	bool bad_name = !a->name[0];
	for (const char *p = a->name; *p; p++)
		bad_name |= *p == '%' || *p == '"' || *p == '\\' || (unsigned char)*p < 0x20;
	if (bad_name) {
		diag_fatal("%s '%s': bad argument name '%s' (no %%, quotes or backslashes)",
			   opt, spec, a->name);
	} else if (!valid_type(a->type)) {
		diag_fatal("%s '%s': unknown type '%s' for %s: expected s8 s16 s32 s64 u8 "
			   "u16 u32 u64, cN (N bytes of text, 1..1024), str or ptr",
			   opt, spec, a->type, a->name);
	} else {
		struct rule_parser rp = {.p = raw.buf ? raw.buf : ""};
		if (!parse_rule(&rp, 0) || *rp.p) {
			diag_fatal("%s '%s': bad fetch rule '%s' for %s: %s", opt, spec,
				   raw.buf ? raw.buf : "", a->name,
				   rp.err ? rp.err : "unexpected text after the rule");
			strbuf_free(&rp.out);
		} else {
			a->rule = rp.out.buf;
			err = 0;
		}
	}
	strbuf_free(&raw);
out:
	free(text);
	return err;
}

void fg_argspec_free(struct fg_argspec *a)
{
	for (int i = 0; i < a->nargs; i++) {
		free(a->args[i].name);
		free(a->args[i].rule);
		free(a->args[i].type);
	}
	free(a->args);
	free(a->func);
	memset(a, 0, sizeof(*a));
}

int fg_argspec_parse(const char *opt, const char *spec, struct fg_argspec *out)
{
	memset(out, 0, sizeof(*out));
	char *s = trim_dup(spec, strlen(spec));
	long len = (long)strlen(s), open = -1;
	int err = -EINVAL;
	/* FUNC itself has parentheses (main.(*T).M): the list is the group that ends the
	 * spec, found by matching backwards from the last ')' */
	if (len && s[len - 1] == ')') {
		int depth = 0;
		for (long i = len - 1; i >= 0; i--) {
			if (s[i] == ')')
				depth++;
			else if (s[i] == '(' && --depth == 0) {
				open = i;
				break;
			}
		}
	}
	if (open <= 0 || match_paren(s, open) != len - 1) {
		diag_fatal("%s '%s': expected FUNC(NAME=RULE:TYPE, ...), e.g. "
			   "'main.add(a=%%ax:s64, b=%%bx:s64)'",
			   opt, spec);
		goto out;
	}
	out->func = trim_dup(s, (size_t)open);
	VEC(struct fg_arg) args = {0};
	const char *item = s + open + 1, *end = s + len - 1;
	int depth = 0;
	bool empty = true;
	for (const char *p = item; p < end; p++)
		empty &= isspace((unsigned char)*p) != 0;
	for (const char *p = item; !empty && p <= end; p++) {
		if (p < end && *p == '(')
			depth++;
		else if (p < end && *p == ')')
			depth--;
		if (p < end && (*p != ',' || depth))
			continue;
		struct fg_arg a;
		if (parse_one(opt, spec, item, (size_t)(p - item), &a)) {
			free(a.name);
			free(a.type);
			out->args = args.v;
			out->nargs = args.n;
			fg_argspec_free(out);
			goto out;
		}
		vec_push(&args, a);
		item = p + 1;
	}
	out->args = args.v;
	out->nargs = args.n;
	for (int i = 0; i < out->nargs; i++)
		for (int j = 0; j < i; j++)
			if (!strcmp(out->args[i].name, out->args[j].name)) {
				diag_fatal("%s '%s': argument %s is named twice", opt,
					   spec, out->args[i].name);
				fg_argspec_free(out);
				goto out;
			}
	err = 0;
out:
	free(s);
	return err;
}
