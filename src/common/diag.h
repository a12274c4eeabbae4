/* diag: compiler diagnostics "FILE:LINE:COL: error: MSG" + source line + caret. */
#ifndef GT_DIAG_H
#define GT_DIAG_H

#include <stdbool.h>
#include <stdio.h>

/* A source range. Lines and columns are 1-based; end_col is one past the last column. */
struct gt_loc {
	int line, col;
	int end_line, end_col;
};

struct diag_src {
	const char *name; /* script path, or "stdin" for -e */
	const char *text; /* whole program text, NUL-terminated */
};

/* Every compile-time message goes through here; count survives for the exit status. */
void diag_error(const struct diag_src *src, struct gt_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void diag_warning(const struct diag_src *src, struct gt_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A note without its own source excerpt, printed after the previous diagnostic. */
void diag_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Errors that have no script location: "gotrace: error: MSG". */
void diag_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int diag_error_count(void);
void diag_reset(void);
/* Where messages go (NULL: stderr); the fuzzer silences them. */
void diag_set_stream(FILE *f);

#endif
