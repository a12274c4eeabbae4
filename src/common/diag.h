/* diag: every message gotrace writes to stderr. Compile-time diagnostics are
 * "FILE:LINE:COL: error: MSG" + source line + caret; the rest is "gotrace: LEVEL: MSG". */
#ifndef GT_DIAG_H
#define GT_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

struct diag_src;

/* A source range. Lines and columns are 1-based; end_col is one past the last column.
 * src: the file it is in when that is not the one a message is given (an import). */
struct gt_loc {
	int line, col;
	int end_line, end_col;
	const struct diag_src *src;
};

/* Where a program's text came from: a file names a place to read it again (imports
 * next to it, BTF line info); a generated one (--funcgraph's) is not the user's, so
 * messages about it name no place in it. */
enum diag_origin {
	DIAG_SRC_TEXT,      /* -e PROGRAM, or a script on stdin: name "stdin" */
	DIAG_SRC_FILE,      /* a script file: name is its path */
	DIAG_SRC_GENERATED, /* a program gotrace wrote */
};

struct diag_src {
	const char *name; /* script path, or "stdin" for -e */
	const char *text; /* whole program text, NUL-terminated */
	enum diag_origin origin;
};

/* Messages without a script location, by their prefix. */
enum diag_level {
	DIAG_ERROR,   /* "gotrace: error: MSG" */
	DIAG_WARNING, /* "gotrace: warning: MSG" */
	DIAG_INFO,    /* "gotrace: MSG": what -v reports */
	DIAG_PLAIN,   /* "MSG": bpftrace's own wording ("Lost N events"), libbpf's lines */
};

/* The one sink: prefix, MSG, '\n'. stdout is flushed first, so that on a terminal the
 * message comes after what was printed before it. */
void diag_print(enum diag_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void diag_vprint(enum diag_level level, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/* A message about the script at LOC (without a location: as diag_print). */
void diag_error(const struct diag_src *src, struct gt_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void diag_warning(const struct diag_src *src, struct gt_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* diag_print(DIAG_ERROR, ...): errors that have no script location. */
void diag_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* --no-warnings: warnings are dropped, errors still print. */
void diag_set_warnings(bool on);
/* Where messages go (NULL: stderr); the fuzzer silences them. */
void diag_set_stream(FILE *f);

#endif
