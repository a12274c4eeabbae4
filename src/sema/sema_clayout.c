/* sema_clayout: where the members of a script's struct or union go, as GCC lays them out
 * on x86-64 (the SysV ABI), bit-fields included, so that its reads find what a C program
 * of the traced process wrote. */
#include "sema/sema_int.h"

static int type_align(const struct gt_type *t)
{
	switch (t->kind) {
	case TY_INT:
		return t->size;
	case TY_STRUCT:
		return t->align ? t->align : 1;
	case TY_ARRAY:
		return type_align(t->pointee);
	default:
		return 8;
	}
}

static int64_t round_up(int64_t v, int64_t a)
{
	return (v + a - 1) / a * a;
}

void sema_clayout(struct sema *s, struct gt_type *t, const struct clayout_member *m, int n,
		  bool un, bool packed, int aligned)
{
	size_t cap = (size_t)n + 1;
	t->fields = arena_alloc(s->arena, sizeof(*t->fields) * cap);
	t->offsets = arena_alloc(s->arena, sizeof(*t->offsets) * cap);
	t->names = arena_alloc(s->arena, sizeof(*t->names) * cap);
	struct gt_bitfield *bits = arena_alloc(s->arena, sizeof(*bits) * cap);
	bool any_bits = false;
	int64_t pos = 0, end = 0; /* in bits */
	int align = 1, k = 0;
	for (int i = 0; i < n; i++) {
		const struct clayout_member *f = &m[i];
		int ta = type_align(f->ty);
		int64_t at = 0;
		if (f->width < 0) { /* packed members sit at any byte */
			int a = packed ? 1 : ta;
			if (!un)
				at = round_up(pos, 8 * a);
			pos = at + 8 * (int64_t)f->ty->size;
			align = a > align ? a : align;
		} else {
			int64_t unit = 8 * (int64_t)ta;
			if (un)
				at = 0;
			else if (f->width == 0) /* :0 ends the unit, packed or not (GCC) */
				at = round_up(pos, unit);
			else if (!packed && pos / unit != (pos + f->width - 1) / unit)
				at = round_up(pos, unit); /* it would straddle its type's unit */
			else
				at = pos;
			pos = at + f->width;
			/* SysV: unnamed bit-fields leave the alignment as it is */
			if (f->name && !packed)
				align = ta > align ? ta : align;
		}
		end = pos > end ? pos : end;
		if (!f->name)
			continue;
		t->fields[k] = f->ty;
		t->offsets[k] = (int)(at / 8);
		t->names[k] = f->name;
		if (f->width > 0) {
			bits[k].shift = (uint8_t)(at % 8);
			bits[k].width = (uint8_t)f->width;
			any_bits = true;
		}
		k++;
	}
	if (aligned > align)
		align = aligned;
	int64_t bytes = (end + 7) / 8;
	t->size = bytes ? (int)round_up(bytes, align) : 0;
	t->align = align;
	t->nfields = k;
	t->bitfields = any_bits ? bits : NULL;
}
