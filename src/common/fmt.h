/* fmt: printf format strings, parsed once by sema (to check arguments) and by the
 * runtime (to print). Conversions: %d %i %u %x %X %o %s %c %p %r %% with flags "-+ #0",
 * width, precision; length modifiers as C applies them to an integer argument, which is
 * what bpftrace 0.17 does: hh 8 bits, h 16, none 32, l ll z j t 64. */
#ifndef GT_FMT_H
#define GT_FMT_H

#include <stdbool.h>

enum fmt_conv {
	FMT_NONE,   /* trailing literal text only */
	FMT_SIGNED, /* d i */
	FMT_UNSIGNED, /* u x X o */
	FMT_CHAR,   /* c */
	FMT_STR,    /* s */
	FMT_PTR,    /* p */
	FMT_BUF,    /* r, rx, rh: a buffer (buf()) */
	FMT_VALUE,  /* v: any value as print() shows it (Go values in Go's %+v shape) */
	FMT_TYPE,   /* T: a Go value's type (an interface's dynamic type), as Go's %T */
	FMT_GFP,    /* gr: an integer as GFP flags by name (current bpftrace) */
};

struct fmt_piece {
	char *literal;    /* text before the conversion, "%%" already collapsed */
	char cspec[40];   /* C conversion to hand to snprintf with a (long long) / char* arg,
			     e.g. "%-8lld", "%#llx", "%.*s" is never used: precision is inline */
	enum fmt_conv conv;
	int bits;         /* FMT_SIGNED, FMT_UNSIGNED: the argument's width (8, 16, 32, 64) */
	bool sized;       /* a length modifier was given (hh h l ll z j t) */
	int buf_mode;     /* FMT_BUF: 0 %r, 1 %rx, 2 %rh */
	int src_offset;   /* byte offset of the '%' in the format string, for diagnostics */
	int src_len;      /* length of the conversion spec in the format string */
};

struct fmt {
	struct fmt_piece *pieces;
	int npieces; /* the last piece may have conv == FMT_NONE */
	int nconv;   /* number of conversions (arguments expected) */
};

/* Returns 0, or -EINVAL with *err_msg and *err_offset (byte offset in fmt) set. */
int fmt_parse(const char *fmt, struct fmt *out, const char **err_msg, int *err_offset);
void fmt_free(struct fmt *f);

/* V as the integer conversion of PC prints it: truncated to pc->bits, sign-extended
 * for FMT_SIGNED. */
unsigned long long fmt_int_arg(const struct fmt_piece *pc, unsigned long long v);

#endif
