#include "common/diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static FILE *diag_out; /* NULL: stderr */

static const char *const level_prefix[] = {
	[DIAG_ERROR] = "gotrace: error: ",
	[DIAG_WARNING] = "gotrace: warning: ",
	[DIAG_INFO] = "gotrace: ",
	[DIAG_PLAIN] = "",
};

void diag_set_stream(FILE *f)
{
	diag_out = f;
}

static FILE *out(void)
{
	return diag_out ? diag_out : stderr;
}

/* Prints the source line of loc and a caret + tildes under the range. */
static void print_excerpt(const struct diag_src *src, struct gt_loc loc)
{
	if (!src || !src->text || loc.line <= 0)
		return;
	const char *p = src->text;
	for (int l = 1; l < loc.line && *p; l++) {
		const char *nl = strchr(p, '\n');
		if (!nl)
			return;
		p = nl + 1;
	}
	const char *end = strchr(p, '\n');
	int len = end ? (int)(end - p) : (int)strlen(p);
	fprintf(out(), "%.*s\n", len, p);
	int col = loc.col > 0 ? loc.col : 1;
	int stop = (loc.end_line == loc.line && loc.end_col > col) ? loc.end_col : col + 1;
	if (loc.end_line > loc.line)
		stop = len + 1 > col ? len + 1 : col + 1;
	for (int c = 1; c < col; c++)
		fputc(c - 1 < len && p[c - 1] == '\t' ? '\t' : ' ', out());
	fputc('^', out());
	for (int c = col + 1; c < stop; c++)
		fputc('~', out());
	fputc('\n', out());
}

static bool no_warnings;

void diag_set_warnings(bool on)
{
	no_warnings = !on;
}

void diag_vprint(enum diag_level level, const char *fmt, va_list ap)
{
	if (level == DIAG_WARNING && no_warnings)
		return;
	fflush(stdout);
	fputs(level_prefix[level], out());
	vfprintf(out(), fmt, ap);
	fputc('\n', out());
}

void diag_print(enum diag_level level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vprint(level, fmt, ap);
	va_end(ap);
}

static void vreport(const struct diag_src *src, struct gt_loc loc, enum diag_level level,
		    const char *fmt, va_list ap)
{
	if (loc.src)
		src = loc.src;
	if (!src || loc.line <= 0 || src->origin == DIAG_SRC_GENERATED) {
		diag_vprint(level, fmt, ap);
		return;
	}
	if (level == DIAG_WARNING && no_warnings)
		return;
	fflush(stdout);
	fprintf(out(), "%s:%d:%d: %s: ", src->name, loc.line, loc.col,
		level == DIAG_ERROR ? "error" : "warning");
	vfprintf(out(), fmt, ap);
	fputc('\n', out());
	print_excerpt(src, loc);
}

void diag_error(const struct diag_src *src, struct gt_loc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(src, loc, DIAG_ERROR, fmt, ap);
	va_end(ap);
}

void diag_warning(const struct diag_src *src, struct gt_loc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(src, loc, DIAG_WARNING, fmt, ap);
	va_end(ap);
}

void diag_fatal(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vprint(DIAG_ERROR, fmt, ap);
	va_end(ap);
}
