/* value_go: a Go value captured by print() (PLAN_ARG_GO), printed in the shape of Go's
 * fmt %+v: {X:1 Y:2 Name:origin}, &{...} for a pointer at the top, [1 2 3], true,
 * <nil>; an interface as its dynamic value where the capture holds it (integers,
 * strings, errors.New's text), else (T)(0xADDR). */
#include "runtime/rt_value.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

static uint64_t narrow(uint64_t v, int size, bool is_signed)
{
	int sh = size > 0 && size < 8 ? 64 - 8 * size : 0;
	if (!sh)
		return v;
	return is_signed ? (uint64_t)((int64_t)(v << sh) >> sh) : (v << sh) >> sh;
}

/* Go's %v of a float: the shortest digits that read back the same, in %e form only
 * for exponents below -4 or from 21 on. */
static void put_float(struct strbuf *sb, double d)
{
	if (isnan(d) || isinf(d)) {
		strbuf_puts(sb, isnan(d) ? "NaN" : d > 0 ? "+Inf" : "-Inf");
		return;
	}
	char e[40];
	int prec = 0;
	for (prec = 0; prec < 17; prec++) {
		snprintf(e, sizeof(e), "%.*e", prec, d);
		if (strtod(e, NULL) == d)
			break;
	}
	int exp = atoi(strchr(e, 'e') + 1);
	if (exp < -4 || exp >= 21) {
		char *x = strchr(e, 'e');
		*x = 0;
		strbuf_printf(sb, "%se%c%02d", e, exp < 0 ? '-' : '+', abs(exp));
		return;
	}
	char f[400];
	snprintf(f, sizeof(f), "%.*f", prec - exp > 0 ? prec - exp : 0, d);
	strbuf_puts(sb, f);
}

static const struct plan_gotype *gotype_at(const struct gt_plan *plan, uint64_t addr)
{
	int lo = 0, hi = plan->ngotypes - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		const struct plan_gotype *t = &plan->gotypes[mid];
		if (t->addr == addr)
			return t;
		if (t->addr < addr)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

static void put_text(struct strbuf *sb, const uint8_t *p, int64_t len, int cap)
{
	if (len < 0)
		len = 0;
	if (len > cap - 1)
		len = cap - 1;
	strbuf_putn(sb, (const char *)p, len > 0 ? (size_t)len : 0);
}

static void go_format(struct strbuf *sb, const struct gt_plan *plan, const struct plan_arg *a,
		      const uint8_t *base)
{
	const uint8_t *p = base + a->offset;
	uint64_t v = a->go == PG_NOREAD ? 0 : rt_rd64(p);
	switch (a->go) {
	case PG_INT:
		strbuf_printf(sb, "%" PRId64, (int64_t)narrow(v, a->go_size, true));
		break;
	case PG_UINT:
		strbuf_printf(sb, "%" PRIu64, narrow(v, a->go_size, false));
		break;
	case PG_BOOL:
		strbuf_puts(sb, v & 0xff ? "true" : "false");
		break;
	case PG_FLOAT:
		if (a->go_size == 4) {
			float f;
			uint32_t w = (uint32_t)v;
			memcpy(&f, &w, sizeof(f));
			put_float(sb, f);
		} else {
			double d;
			memcpy(&d, &v, sizeof(d));
			put_float(sb, d);
		}
		break;
	case PG_PTR:
		if (!v)
			strbuf_puts(sb, "<nil>");
		else if (a->nfields) {
			strbuf_putc(sb, '&');
			go_format(sb, plan, &a->fields[0], p);
		} else
			strbuf_printf(sb, "0x%" PRIx64, v);
		break;
	case PG_ADDR:
		strbuf_printf(sb, v ? "0x%" PRIx64 : "<nil>", v);
		break;
	case PG_NOREAD:
		strbuf_putc(sb, '?');
		break;
	case PG_STRING:
		put_text(sb, p + 8, (int64_t)v, a->size - 8);
		break;
	case PG_STRUCT:
		strbuf_putc(sb, '{');
		for (int i = 0; i < a->nfields; i++) {
			strbuf_printf(sb, "%s%s:", i ? " " : "", a->fields[i].name);
			go_format(sb, plan, &a->fields[i], p);
		}
		strbuf_putc(sb, '}');
		break;
	case PG_ARRAY:
	case PG_SLICE: {
		int64_t n = a->go == PG_SLICE ? (int64_t)v : a->go_max;
		const uint8_t *el = a->go == PG_SLICE ? p + 16 : p;
		strbuf_putc(sb, '[');
		for (int64_t i = 0; i < n && i < a->go_max; i++) {
			strbuf_puts(sb, i ? " " : "");
			go_format(sb, plan, &a->fields[0], el + i * a->fields[0].size);
		}
		if (n > a->go_max)
			strbuf_puts(sb, a->go_max ? " ..." : "...");
		strbuf_putc(sb, ']');
		break;
	}
	case PG_IFACE: {
		uint64_t data = rt_rd64(p + 8), h0 = rt_rd64(p + 16), h1 = rt_rd64(p + 24);
		const struct plan_gotype *t = v ? gotype_at(plan, v) : NULL;
		if (!v) {
			strbuf_puts(sb, "<nil>");
			break;
		}
		switch (t ? t->show : PGS_OTHER) {
		case PGS_INT:
		case PGS_UINT:
			strbuf_printf(sb, t->show == PGS_INT ? "%" PRId64 : "%" PRIu64,
				      narrow(h0, t->size, t->show == PGS_INT));
			break;
		case PGS_BOOL:
			strbuf_puts(sb, h0 & 0xff ? "true" : "false");
			break;
		case PGS_STR:
		case PGS_PSTR:
			if (data) {
				put_text(sb, p + 32, (int64_t)h1, a->size - 32);
				break;
			}
			/* a nil *T in the interface */
			__attribute__((fallthrough));
		default:
			if (a->go_key && t) /* the address is not kept: one key per type */
				strbuf_printf(sb, "(%s)%s", t->name, data ? "" : "(nil)");
			else if (a->go_key)
				strbuf_printf(sb, "(0x%" PRIx64 ")%s", v, data ? "" : "(nil)");
			else if (t)
				strbuf_printf(sb, "(%s)(0x%" PRIx64 ")", t->name, data);
			else
				strbuf_printf(sb, "(0x%" PRIx64 ")(0x%" PRIx64 ")", v, data);
			break;
		}
		break;
	}
	}
}

void rt_go_format(struct strbuf *sb, const struct gt_plan *plan, const struct plan_arg *a,
		  const uint8_t *base, bool json)
{
	if (!json) {
		go_format(sb, plan, a, base);
		return;
	}
	struct strbuf t = {0};
	go_format(&t, plan, a, base);
	strbuf_json_string(sb, t.buf ? t.buf : "", t.len);
	strbuf_free(&t);
}

void rt_go_type(struct strbuf *sb, const struct gt_plan *plan, const struct plan_arg *a,
		const uint8_t *base)
{
	if (a->kind != PLAN_ARG_GO || a->go != PG_IFACE) {
		strbuf_puts(sb, a->literal ? a->literal : "?");
		return;
	}
	uint64_t ty = rt_rd64(base + a->offset);
	const struct plan_gotype *t = ty ? gotype_at(plan, ty) : NULL;
	if (t)
		strbuf_puts(sb, t->name);
	else if (ty)
		strbuf_printf(sb, "?(0x%" PRIx64 ")", ty);
	else
		strbuf_puts(sb, "<nil>");
}
