/* gortypes: the runtime type descriptors DWARF names (DW_AT_go_runtime_type), so that an
 * interface's dynamic type, captured in BPF as a descriptor address, can be named. Go
 * writes the attribute as an offset from runtime.types (moduledata.types: the start of
 * .rodata, or of .data.rel.ro in a PIE, after any C data of an external link). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "binfo/binfo_int.h"
#include "binfo/dw.h"
#include "binfo/gotypes.h"
#include "common/arena.h"
#include "common/util.h"

/* Error types whose Error() is the string they start with: errors.New's and
 * fmt.Errorf's, net/http's timeouts. (Other types may have methods that print something
 * else: shown as (T)(0xADDR), never guessed.) */
static bool text_error(const char *name)
{
	static const char *const names[] = {"*errors.errorString", "*fmt.wrapError",
					    "*fmt.wrapErrors", "*net/http.timeoutError"};
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

/* Error types whose Error() returns one constant text, as the standard library has it */
static const char *const_error(const char *name)
{
	static const char *const names[][2] = {
		{"context.deadlineExceededError", "context deadline exceeded"},
		{"*net.timeoutError", "i/o timeout"},
		{"*internal/poll.DeadlineExceededError", "i/o timeout"}, /* os.ErrDeadlineExceeded */
	};
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(name, names[i][0]))
			return names[i][1];
	return NULL;
}

static enum binfo_goshow show_of(struct dw *d, Dwarf_Die die, const char *name, int *size)
{
	uint64_t kind = 0, enc = 0, sz = 0;
	dw_attr_udata(d, die, DW_AT_go_kind, &kind);
	dw_attr_udata(d, die, DW_AT_byte_size, &sz);
	*size = (int)sz;
	switch (dw_tag(d, die)) {
	case DW_TAG_pointer_type:
		return text_error(name) ? GS_PSTR : GS_PTR;
	case DW_TAG_base_type:
		dw_attr_udata(d, die, DW_AT_encoding, &enc);
		if (sz < 1 || sz > 8)
			return GS_OTHER;
		return enc == DW_ATE_boolean ? GS_BOOL
		       : enc == DW_ATE_signed || enc == DW_ATE_signed_char ? GS_INT
		       : enc == DW_ATE_unsigned || enc == DW_ATE_unsigned_char ? GS_UINT
									 : GS_OTHER;
	default:
		if (kind == RK_STRING)
			return GS_STR;
		if (kind == RK_MAP || kind == RK_CHAN || kind == RK_FUNC)
			return GS_PTR;
		return GS_OTHER;
	}
}

static int by_addr(const void *a, const void *b)
{
	const struct binfo_gortype *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int binfo_gortypes(struct binfo *bi, struct arena *a, struct binfo_gortype **out)
{
	struct dw d;
	uint64_t size, base = 0;
	*out = NULL;
	if (binfo_symbol_addr(bi, "runtime.types", &base) && /* moduledata.types */ !binfo__section(bi, bi->pie ? ".data.rel.ro" : ".rodata", &size, &base))
		return -ENOENT;
	if (!dw_open(&d, bi))
		return -ENOENT;
	VEC(struct binfo_gortype) v = {0};
	for (Dwarf_Die cu; (cu = dw_next_cu(&d));) {
		Dwarf_Die cur = NULL;
		if (dw_ok(&d, dwarf_child(cu, &cur, &d.err))) {
			for (; cur && !d.failed; cur = dw_next_sibling(&d, cur)) {
				uint64_t rt = 0;
				const char *name;
				if (!dw_attr_udata(&d, cur, DW_AT_go_runtime_type, &rt) || !rt ||
				    !(name = dw_name(&d, cur)))
					continue;
				struct binfo_gortype t = {.addr = base + rt, .name = arena_strdup(a, name)};
				t.show = show_of(&d, cur, name, &t.size);
				if ((t.text = const_error(name)))
					t.show = GS_CONST;
				vec_push(&v, t);
			}
			dw_free_die(cur);
		}
		dw_free_die(cu);
		if (d.failed)
			break;
	}
	dw_close(&d);
	if (v.n)
		qsort(v.v, (size_t)v.n, sizeof(*v.v), by_addr);
	*out = arena_alloc(a, sizeof(**out) * (size_t)(v.n ? v.n : 1));
	if (v.n)
		memcpy(*out, v.v, sizeof(**out) * (size_t)v.n);
	int n = v.n;
	vec_free(&v);
	return n;
}
