/* value: a value the plan describes (struct plan_arg) read from a record or a map value
 * and printed as bpftrace prints it: integers, strings, site names and tuples, as text
 * (`(1, abc)`) or JSON (`[1,"abc"]`, no spaces, as bpftrace). */
#include "runtime/output/output.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <pwd.h>
#include <string.h>
#include <time.h>

#include "common/util.h"

/* An integer of SIZE bytes (tuple fields keep their width), sign-extended if signed. */
static uint64_t rd_int(const uint8_t *p, int size, bool is_signed)
{
	uint64_t v = 0;
	memcpy(&v, p, size > 0 && size < 8 ? (size_t)size : 8); /* little endian */
	int sh = size > 0 && size < 8 ? 64 - 8 * size : 0;
	if (!sh)
		return v;
	return is_signed ? (uint64_t)((int64_t)(v << sh) >> sh) : v;
}

/* A C bit-field's bits at P, zero-extended as bpftrace reads them (an integer of the
 * declared type from then on: only a signed one of its type's full width is negative).
 * A packed one may reach into a ninth byte. */
static uint64_t rd_bits(const uint8_t *p, const struct plan_arg *a)
{
	uint8_t b[16] = {0};
	memcpy(b, p, (size_t)(a->bit_shift + a->bit_width + 7) / 8);
	uint64_t lo, hi;
	memcpy(&lo, b, 8);
	memcpy(&hi, b + 8, 8);
	uint64_t v = lo >> a->bit_shift | (a->bit_shift ? hi << (64 - a->bit_shift) : 0);
	return a->bit_width < 64 ? v & ((1ull << a->bit_width) - 1) : v;
}

static void put_text(struct strbuf *sb, const char *t, size_t n, bool json)
{
	if (json)
		strbuf_json_string(sb, t, n);
	else
		strbuf_putn(sb, t, n);
}

void rt_buf_format(struct strbuf *sb, const uint8_t *data, size_t len, enum rt_buf_mode mode)
{
	for (size_t i = 0; i < len; i++) {
		if (mode == RT_BUF_HEX)
			strbuf_printf(sb, "%s%02x", i ? " " : "", data[i]);
		else if (mode == RT_BUF_PRINTABLE && data[i] >= 0x20 && data[i] < 0x7f)
			strbuf_putc(sb, (char)data[i]);
		else
			strbuf_printf(sb, "\\x%02x", data[i]);
	}
}

/* strftime(3) of the wall-clock time of CLOCK_MONOTONIC NS, with bpftrace's %f
 * (microseconds, 6 digits). */
static void format_strftime(struct strbuf *sb, const char *fmt, uint64_t ns)
{
	int64_t wall = (int64_t)ns + wall_off_ns();
	time_t secs = (time_t)(wall / 1000000000);
	long us = (long)(wall % 1000000000 / 1000);
	struct strbuf f = {0};
	for (const char *c = fmt; *c; c++) {
		if (c[0] == '%' && c[1] == 'f') {
			strbuf_printf(&f, "%06ld", us);
			c++;
		} else if (c[0] == '%' && c[1]) {
			strbuf_putn(&f, c, 2);
			c++;
		} else {
			strbuf_putc(&f, *c);
		}
	}
	struct tm tm;
	char out[1024];
	localtime_r(&secs, &tm);
	size_t n = f.buf ? strftime(out, sizeof(out), f.buf, &tm) : 0;
	strbuf_putn(sb, out, n);
	strbuf_free(&f);
}

void rt_value_format(struct strbuf *sb, const struct gt_plan *plan, const struct plan_arg *a,
		     const uint8_t *base, bool json)
{
	const uint8_t *p = base + a->offset;
	switch (a->kind) {
	case PLAN_ARG_STRFTIME:
	case PLAN_ARG_STRERROR:
	case PLAN_ARG_USERNAME:
	case PLAN_ARG_INET:
	case PLAN_ARG_CGROUP_PATH:
	case PLAN_ARG_BUF: {
		struct strbuf t = {0};
		if (a->kind == PLAN_ARG_STRFTIME) {
			format_strftime(&t, a->literal ? a->literal : "", rt_rd64(p));
		} else if (a->kind == PLAN_ARG_STRERROR) {
			strbuf_puts(&t, strerror((int)rt_rd64(p)));
		} else if (a->kind == PLAN_ARG_CGROUP_PATH) {
			rt_cgroup_path(&t, rt_rd64(p));
		} else if (a->kind == PLAN_ARG_INET) {
			char ip[INET6_ADDRSTRLEN];
			int af = (int)rt_rd64(p);
			if (inet_ntop(af, p + 8, ip, sizeof(ip)))
				strbuf_puts(&t, ip);
			else
				strbuf_printf(&t, "(address family %d)", af);
		} else if (a->kind == PLAN_ARG_USERNAME) {
			struct passwd pw, *res = NULL;
			char pbuf[1024];
			uid_t uid = (uid_t)rt_rd64(p);
			if (!getpwuid_r(uid, &pw, pbuf, sizeof(pbuf), &res) && res)
				strbuf_puts(&t, pw.pw_name);
			else
				strbuf_printf(&t, "%u", (unsigned)uid);
		} else {
			uint64_t len = rt_rd64(p);
			size_t cap = a->size > 8 ? (size_t)a->size - 8 : 0;
			rt_buf_format(&t, p + 8, len < cap ? (size_t)len : cap, RT_BUF_PRINTABLE);
		}
		put_text(sb, t.buf ? t.buf : "", t.len, json);
		strbuf_free(&t);
		break;
	}
	case PLAN_ARG_INT: {
		uint8_t bits[8];
		if (a->bit_width) {
			uint64_t v = rd_bits(p, a);
			memcpy(bits, &v, 8);
			p = bits;
		}
		if (a->is_bool)
			strbuf_puts(sb, rd_int(p, a->size, false) & 0xff ? "true" : "false");
		else if (a->is_addr && !json) /* JSON has no hex numbers */
			strbuf_printf(sb, "0x%" PRIx64, rd_int(p, a->size, false));
		else if (a->is_signed)
			strbuf_printf(sb, "%" PRId64, (int64_t)rd_int(p, a->size, true));
		else
			strbuf_printf(sb, "%" PRIu64, rd_int(p, a->size, false));
		break;
	}
	case PLAN_ARG_STR:
		put_text(sb, (const char *)p, strnlen((const char *)p, (size_t)a->size), json);
		break;
	case PLAN_ARG_SITE_FUNC:
	case PLAN_ARG_SITE_PROBE: {
		/* low 32 bits: a raw cookie (site id | flags << 32) names the same site */
		uint64_t id = rt_rd64(p) & 0xffffffffu;
		const char *t = a->literal;
		if (!t && id < (uint64_t)plan->nsites)
			t = a->kind == PLAN_ARG_SITE_FUNC ? plan->sites[id].func
							   : plan->sites[id].probe;
		if (!t)
			t = "?";
		put_text(sb, t, strlen(t), json);
		break;
	}
	case PLAN_ARG_STRUCT: { /* bpftrace's: { .a = 1, .b = { .c = 2 } }, JSON { "a": 1, ... } */
		bool tight = json && a->is_record;
		strbuf_puts(sb, tight ? "{" : "{ ");
		for (int i = 0; i < a->nfields; i++) {
			const char *n = a->fields[i].name ? a->fields[i].name : "";
			strbuf_printf(sb, json ? "%s\"%s\": " : "%s.%s = ", i ? ", " : "", n);
			rt_value_format(sb, plan, &a->fields[i], p, json);
		}
		strbuf_puts(sb, tight ? "}" : " }");
		break;
	}
	case PLAN_ARG_ARRAY: {
		struct plan_arg el = a->fields[0];
		strbuf_putc(sb, '[');
		for (int i = 0; i < a->nfields; i++) {
			el.offset = i * a->fields[0].size;
			strbuf_puts(sb, i ? "," : "");
			rt_value_format(sb, plan, &el, p, json);
		}
		strbuf_putc(sb, ']');
		break;
	}
	case PLAN_ARG_GO:
		rt_go_format(sb, plan, a, base, json);
		break;
	case PLAN_ARG_STACK:
	case PLAN_ARG_SYM: {
		struct strbuf t = {0};
		if (a->kind == PLAN_ARG_SYM)
			rt_sym_format(&t, a, p);
		else
			rt_stack_format(&t, a, p);
		put_text(sb, t.buf ? t.buf : "", t.len, json);
		strbuf_free(&t);
		break;
	}
	case PLAN_ARG_TUPLE:
		strbuf_putc(sb, json ? '[' : '(');
		for (int i = 0; i < a->nfields; i++) {
			if (i)
				strbuf_puts(sb, json ? "," : ", ");
			rt_value_format(sb, plan, &a->fields[i], p, json);
		}
		strbuf_putc(sb, json ? ']' : ')');
		break;
	}
}
