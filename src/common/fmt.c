/* fmt: printf format strings -> pieces, each with a C conversion rewritten for the
 * argument type the runtime hands snprintf:
 *   FMT_SIGNED    cspec takes a long long            ("%-8lld")
 *   FMT_UNSIGNED  cspec takes an unsigned long long  ("%#llx")
 *   FMT_CHAR      cspec takes an int                 ("%-3c")
 *   FMT_STR       cspec takes a char *               ("%-10.4s")
 *   FMT_PTR       cspec takes a char *: the runtime formats the pointer as "0x" + hex
 *                 (bpftrace's %p, also for 0) and pads it with width / '-' ("%-18s")
 * Flags that C leaves undefined for a conversion (e.g. '#' on %d, '0' on %s) are dropped
 * so snprintf never sees them. */
#include "common/fmt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

/* Larger fields are almost certainly typos, and they bound the size of one piece. */
#define FMT_MAX_FIELD 65535

/* Error messages with the offending character need storage that outlives the call. */
static __thread char fmt_errbuf[64];

static int fmt_fail(const char *msg, int offset, const char **err_msg, int *err_offset)
{
	if (err_msg)
		*err_msg = msg;
	if (err_offset)
		*err_offset = offset;
	return -EINVAL;
}

/* Appends the flags of `have` that conversion `conv` defines, in a canonical order. */
static void put_flags(char *dst, size_t *n, const char *have, const char *allowed)
{
	static const char order[] = "-+ #0";
	for (const char *f = order; *f; f++)
		if (strchr(have, *f) && strchr(allowed, *f))
			dst[(*n)++] = *f;
}

unsigned long long fmt_int_arg(const struct fmt_piece *pc, unsigned long long v)
{
	int sh = 64 - (pc->bits ? pc->bits : 64);
	if (!sh)
		return v;
	v = v << sh;
	return pc->conv == FMT_SIGNED ? (unsigned long long)((long long)v >> sh) : v >> sh;
}

/* Parses one conversion starting at fmt[*pos] == '%'. On success *pos is one past it. */
static int parse_conv(const char *fmt, int *pos, struct fmt_piece *pc, bool *is_percent,
		      const char **err_msg, int *err_offset)
{
	int start = *pos, i = start + 1;
	char flags[8] = "";
	size_t nflags = 0;
	long width = -1, prec = -1;

	*is_percent = false;
	while (fmt[i] && strchr("-+ #0", fmt[i])) {
		if (!strchr(flags, fmt[i]) && nflags < sizeof(flags) - 1)
			flags[nflags++] = fmt[i];
		i++;
	}
	if (fmt[i] >= '0' && fmt[i] <= '9') {
		width = 0;
		while (fmt[i] >= '0' && fmt[i] <= '9') {
			if (width <= FMT_MAX_FIELD)
				width = width * 10 + (fmt[i] - '0');
			i++;
		}
	}
	if (fmt[i] == '.') {
		i++;
		prec = 0; /* "%.d" means precision 0, as in C */
		while (fmt[i] >= '0' && fmt[i] <= '9') {
			if (prec <= FMT_MAX_FIELD)
				prec = prec * 10 + (fmt[i] - '0');
			i++;
		}
	}
	if (width > FMT_MAX_FIELD || prec > FMT_MAX_FIELD)
		return fmt_fail("field width or precision too large", start, err_msg, err_offset);
	/* Length modifiers: the integer's width, as C (and so bpftrace) reads it */
	pc->bits = 32;
	if (fmt[i] == 'h' || fmt[i] == 'l') {
		char m = fmt[i++];
		pc->sized = true;
		pc->bits = m == 'l' ? 64 : 16;
		if (fmt[i] == m) {
			i++;
			pc->bits = m == 'l' ? 64 : 8;
		}
	} else if (fmt[i] == 'z' || fmt[i] == 'j' || fmt[i] == 't') {
		i++;
		pc->sized = true;
		pc->bits = 64;
	}
	if (!fmt[i])
		return fmt_fail("incomplete conversion at end of format", start, err_msg, err_offset);

	char c = fmt[i++];
	const char *allowed, *len = "";
	char conv = c;
	switch (c) {
	case 'd':
	case 'i':
		pc->conv = FMT_SIGNED;
		allowed = "-+ 0";
		len = "ll";
		conv = 'd';
		break;
	case 'u':
		pc->conv = FMT_UNSIGNED;
		allowed = "-0";
		len = "ll";
		break;
	case 'x':
	case 'X':
	case 'o':
		pc->conv = FMT_UNSIGNED;
		allowed = "-#0";
		len = "ll";
		break;
	case 'c':
		pc->conv = FMT_CHAR;
		allowed = "-";
		prec = -1; /* undefined for %c */
		break;
	case 's':
		pc->conv = FMT_STR;
		allowed = "-";
		break;
	case 'r':
		/* bpftrace's buffers: %r printable bytes and \xNN, %rx all \xNN, %rh hex */
		pc->conv = FMT_BUF;
		pc->buf_mode = fmt[i] == 'x' ? 1 : fmt[i] == 'h' ? 2 : 0;
		if (pc->buf_mode)
			i++;
		allowed = "-";
		prec = -1;
		conv = 's';
		break;
	case 'g':
		if (fmt[i] != 'r')
			goto unknown;
		i++;
		pc->conv = FMT_GFP;
		allowed = "-";
		prec = -1;
		conv = 's'; /* the runtime names the flags */
		break;
	case 'v':
	case 'T':
		pc->conv = c == 'v' ? FMT_VALUE : FMT_TYPE;
		allowed = "-";
		prec = -1;
		conv = 's'; /* the runtime formats the value as print() does */
		break;
	case 'p':
		pc->conv = FMT_PTR;
		allowed = "-";
		prec = -1;
		conv = 's'; /* see the header comment: the runtime pre-formats "0x..." */
		break;
	case '%':
		/* "%%" (glibc also prints "%" for "%5%"): literal text, not a conversion. */
		*is_percent = true;
		*pos = i;
		return 0;
	default:
	unknown:
		if (c > ' ' && c < 0x7f)
			snprintf(fmt_errbuf, sizeof(fmt_errbuf), "unknown conversion '%%%c'", c);
		else
			snprintf(fmt_errbuf, sizeof(fmt_errbuf), "unknown conversion '%%\\x%02x'",
				 (unsigned char)c);
		return fmt_fail(fmt_errbuf, start, err_msg, err_offset);
	}

	size_t n = 0;
	char *d = pc->cspec;
	d[n++] = '%';
	put_flags(d, &n, flags, allowed);
	/* Bounded by FMT_MAX_FIELD: at most 1 + 5 + 5 + 6 + 2 + 1 + 1 bytes < sizeof(cspec). */
	if (width >= 0)
		n += (size_t)sprintf(d + n, "%ld", width);
	if (prec >= 0)
		n += (size_t)sprintf(d + n, ".%ld", prec);
	n += (size_t)sprintf(d + n, "%s%c", len, conv);
	pc->src_offset = start;
	pc->src_len = i - start;
	*pos = i;
	return 0;
}

int fmt_parse(const char *fmt, struct fmt *out, const char **err_msg, int *err_offset)
{
	VEC(struct fmt_piece) pieces = {0};
	struct strbuf lit = {0};
	int pos = 0, nconv = 0, err = 0;

	memset(out, 0, sizeof(*out));
	while (fmt[pos]) {
		if (fmt[pos] != '%') {
			strbuf_putc(&lit, fmt[pos++]);
			continue;
		}
		struct fmt_piece pc = {0};
		bool is_percent;
		err = parse_conv(fmt, &pos, &pc, &is_percent, err_msg, err_offset);
		if (err)
			goto cleanup;
		if (is_percent) {
			strbuf_putc(&lit, '%');
			continue;
		}
		pc.literal = lit.buf ? lit.buf : xstrdup("");
		lit = (struct strbuf){0};
		vec_push(&pieces, pc);
		nconv++;
	}
	if (lit.len) {
		struct fmt_piece pc = {.literal = lit.buf, .conv = FMT_NONE, .src_offset = pos};
		lit = (struct strbuf){0};
		vec_push(&pieces, pc);
	}
	out->pieces = pieces.v;
	out->npieces = pieces.n;
	out->nconv = nconv;
	return 0;

cleanup:
	for (int i = 0; i < pieces.n; i++)
		free(pieces.v[i].literal);
	vec_free(&pieces);
	strbuf_free(&lit);
	return err;
}

void fmt_free(struct fmt *f)
{
	if (!f)
		return;
	for (int i = 0; i < f->npieces; i++)
		free(f->pieces[i].literal);
	free(f->pieces);
	f->pieces = NULL;
	f->npieces = f->nconv = 0;
}
