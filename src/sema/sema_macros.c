/* sema_macros: #define and #include lines before the probes, and --include / -I, as in
 * bpftrace. An object-like macro whose value is an integer or a string is a name the
 * script can use; a header's macros come from the system's C preprocessor
 * (clang-16 -E -dM, run without a shell). */
#include "sema/sema_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* "(1234UL)", "-5", "0x1f", "\"text\"": the value; false for anything else. */
static bool parse_value(struct sema *s, const char *v, struct sema_macro *m)
{
	while (isspace((unsigned char)*v))
		v++;
	size_t n = strlen(v);
	while (n && isspace((unsigned char)v[n - 1]))
		n--;
	if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
		m->sval = arena_strndup(s->arena, v + 1, n - 2);
		return true;
	}
	char buf[64];
	if (n >= sizeof(buf))
		return false;
	memcpy(buf, v, n);
	buf[n] = 0;
	char *p = buf, *end;
	int parens = 0;
	while (*p == '(') {
		p++;
		parens++;
	}
	bool neg = *p == '-';
	p += neg;
	errno = 0;
	unsigned long long x = strtoull(p, &end, 0);
	if (end == p || errno)
		return false;
	while (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L')
		end++;
	while (parens && *end == ')') {
		end++;
		parens--;
	}
	if (*end || parens)
		return false;
	m->ival = neg ? -(int64_t)x : (int64_t)x;
	return true;
}

static void define(struct sema *s, const char *name, const char *value)
{
	struct sema_macro m = {.name = arena_strdup(s->arena, name)};
	if (parse_value(s, value, &m))
		vec_push(&s->macros, m);
}

/* #define NAME VALUE lines of the C preprocessor's -dM output */
static void read_defines(struct sema *s, const char *text)
{
	for (const char *l = text; l && *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		char line[512];
		if (len < sizeof(line) && !strncmp(l, "#define ", 8)) {
			memcpy(line, l + 8, len - 8);
			line[len - 8] = 0;
			char *sp = strchr(line, ' ');
			if (sp && !strchr(line, '(')) { /* object-like macros only */
				*sp = 0;
				define(s, line, sp + 1);
			}
		}
		l = nl ? nl + 1 : NULL;
	}
}

/* Runs the C preprocessor on HEADER; its macros, or a message with its first error. */
static int run_cpp(struct sema *s, const char *header, struct gt_loc loc)
{
	if (s->opts->no_cpp) {
		diag_error(s->src, loc, "#include %s: the preprocessor is off", header);
		return -EPERM;
	}
	const char *argv[64];
	int n = 0;
	argv[n++] = "clang-16";
	argv[n++] = "-E";
	argv[n++] = "-dM";
	argv[n++] = "-x";
	argv[n++] = "c";
	for (int i = 0; i < s->opts->ninclude_dirs && n < 56; i++) {
		argv[n++] = "-I";
		argv[n++] = s->opts->include_dirs[i];
	}
	argv[n++] = "-include";
	argv[n++] = header;
	argv[n++] = "/dev/null";
	argv[n] = NULL;
	int fds[2];
	if (pipe(fds))
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -errno;
	}
	if (pid == 0) {
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		close(fds[1]);
		execvp(argv[0], (char *const *)argv);
		dprintf(2, "error: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fds[1]);
	struct strbuf out = {0};
	char buf[4096];
	ssize_t r;
	while ((r = read(fds[0], buf, sizeof(buf))) > 0)
		strbuf_putn(&out, buf, (size_t)r);
	close(fds[0]);
	int st = 0;
	waitpid(pid, &st, 0);
	int err = 0;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		const char *e = out.buf ? strstr(out.buf, "error: ") : NULL;
		const char *end = e ? strchr(e, '\n') : NULL;
		diag_error(s->src, loc, "#include %s: %.*s", header,
			   e ? (int)(end ? end - e - 7 : (long)strlen(e + 7)) : 24,
			   e ? e + 7 : "the preprocessor failed");
		err = -ENOENT;
	} else {
		read_defines(s, out.buf);
	}
	strbuf_free(&out);
	return err;
}

int sema_macros_directive(struct sema *s, struct ast_node *d)
{
	const char *p = d->u.name + 1;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!strncmp(p, "include", 7)) {
		p += 7;
		while (*p == ' ' || *p == '\t')
			p++;
		char close = *p == '<' ? '>' : *p == '"' ? '"' : 0;
		const char *end = close ? strchr(p + 1, close) : NULL;
		if (!end) {
			diag_error(s->src, d->loc, "#include needs <file> or \"file\"");
			return -EINVAL;
		}
		return run_cpp(s, arena_strndup(s->arena, p + 1, (size_t)(end - p - 1)), d->loc);
	}
	if (strncmp(p, "define", 6)) { /* a conditional, #undef, #pragma (import.c) */
		diag_error(s->src, d->loc, "#%.*s: only #define and #include lines are read "
			   "before the probes", (int)strcspn(p, " \t\r"), p);
		return -EINVAL;
	}
	p += 6; /* define */
	while (*p == ' ' || *p == '\t')
		p++;
	const char *name = p;
	while (isalnum((unsigned char)*p) || *p == '_')
		p++;
	if (p == name || *p == '(') {
		diag_error(s->src, d->loc, "#define: only NAME VALUE (no function-like macros)");
		return -EINVAL;
	}
	struct sema_macro m = {.name = arena_strndup(s->arena, name, (size_t)(p - name))};
	if (!parse_value(s, p, &m)) {
		diag_error(s->src, d->loc, "#define %s: the value must be an integer or a string",
			   m.name);
		return -EINVAL;
	}
	vec_push(&s->macros, m);
	return 0;
}

int sema_macros_includes(struct sema *s)
{
	static const struct gt_loc noloc;
	int err = 0;
	for (int i = 0; i < s->opts->nincludes; i++)
		err |= run_cpp(s, s->opts->includes[i], noloc);
	return err ? -ENOENT : 0;
}

const struct sema_macro *sema_macro_find(struct sema *s, const char *name)
{
	for (int i = s->macros.n - 1; i >= 0; i--) /* the last definition wins */
		if (!strcmp(s->macros.v[i].name, name))
			return &s->macros.v[i];
	return NULL;
}
