/* value: a value the plan describes (struct plan_arg) read from a record or a map value
 * and printed as bpftrace prints it: integers, strings, site names and tuples, as text
 * (`(1, abc)`) or JSON (`[1,"abc"]`, no spaces, as bpftrace). */
#include "runtime/rt_value.h"

#include <inttypes.h>
#include <string.h>

#include "common/util.h"

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

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

static void put_text(struct strbuf *sb, const char *t, size_t n, bool json)
{
	if (json)
		strbuf_json_string(sb, t, n);
	else
		strbuf_putn(sb, t, n);
}

void rt_value_format(struct strbuf *sb, const struct gt_plan *plan, const struct plan_arg *a,
		     const uint8_t *base, bool json)
{
	const uint8_t *p = base + a->offset;
	switch (a->kind) {
	case PLAN_ARG_INT:
		if (a->is_signed)
			strbuf_printf(sb, "%" PRId64, (int64_t)rd_int(p, a->size, true));
		else
			strbuf_printf(sb, "%" PRIu64, rd_int(p, a->size, false));
		break;
	case PLAN_ARG_STR:
		put_text(sb, (const char *)p, strnlen((const char *)p, (size_t)a->size), json);
		break;
	case PLAN_ARG_SITE_FUNC:
	case PLAN_ARG_SITE_PROBE: {
		/* low 32 bits: a raw cookie (site id | flags << 32) names the same site */
		uint64_t id = rd64(p) & 0xffffffffu;
		const char *t = a->literal;
		if (!t && id < (uint64_t)plan->nsites)
			t = a->kind == PLAN_ARG_SITE_FUNC ? plan->sites[id].func
							   : plan->sites[id].probe;
		if (!t)
			t = "?";
		put_text(sb, t, strlen(t), json);
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
