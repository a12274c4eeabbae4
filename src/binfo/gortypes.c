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

/* Errors that wrap another (or read several fields) and net's addresses, by name: the
 * fields their methods read, all of which the type must have. */
static const struct wrapper {
	const char *name;
	enum binfo_goshow show;
	enum binfo_gochain chain;
	const char *fields[GT_NOFFS]; /* by GT_OFF_* */
} wrappers[] = {
	{"*io/fs.PathError", GS_CHAIN, GC_PATH, {"Op", "Path", NULL, NULL, NULL, "Err"}},
	{"*os.PathError", GS_CHAIN, GC_PATH, {"Op", "Path", NULL, NULL, NULL, "Err"}}, /* < 1.16 */
	{"*os.SyscallError", GS_CHAIN, GC_SYSCALL, {"Syscall", NULL, NULL, NULL, NULL, "Err"}},
	{"*net/url.Error", GS_CHAIN, GC_URL, {"Op", "URL", NULL, NULL, NULL, "Err"}},
	{"*net.OpError", GS_CHAIN, GC_OP, {"Op", "Net", NULL, "Source", "Addr", "Err"}},
	{"*net.DNSError", GS_CHAIN, GC_DNS, {"Err", "Name", "Server", NULL, NULL, NULL}},
	{"*net.TCPAddr", GS_NETADDR, GC_NONE, {"IP", "Port", "Zone", NULL, NULL, NULL}},
	{"*net.UDPAddr", GS_NETADDR, GC_NONE, {"IP", "Port", "Zone", NULL, NULL, NULL}},
	{"*net.IPAddr", GS_NETADDR, GC_NONE, {"IP", NULL, "Zone", NULL, NULL, NULL}},
};

/* The members of the structure the pointer type PTR points to (through typedefs). */
static void pointee_members(struct dw *d, Dwarf_Die ptr, struct member_want *w, int nw)
{
	Dwarf_Off ref;
	Dwarf_Die st = NULL;
	if (!dw_type_ref(d, ptr, &ref))
		return;
	for (int depth = 0; depth < 4; depth++) {
		if (!dw_ok(d, dwarf_offdie_b(d->dbg, ref, true, &st, &d->err)))
			return;
		if (dw_tag(d, st) != DW_TAG_typedef || !dw_type_ref(d, st, &ref))
			break;
		dw_free_die(st);
		st = NULL;
	}
	if (st && dw_tag(d, st) == DW_TAG_structure_type)
		(void)dw_members(d, st, w, nw);
	dw_free_die(st);
}

/* T as one of wrappers[] when its pointee has the fields. */
static void wrapper_of(struct dw *d, Dwarf_Die die, struct binfo_gortype *t)
{
	for (size_t i = 0; i < ARRAY_SIZE(wrappers); i++) {
		const struct wrapper *wr = &wrappers[i];
		if (strcmp(t->name, wr->name) || dw_tag(d, die) != DW_TAG_pointer_type)
			continue;
		int off[GT_NOFFS], n = 0, slot[GT_NOFFS];
		struct member_want w[GT_NOFFS];
		for (int k = 0; k < GT_NOFFS; k++)
			if (wr->fields[k]) {
				slot[n] = k;
				w[n++] = (struct member_want){wr->fields[k], &off[k], NULL, false};
			}
		pointee_members(d, die, w, n);
		for (int k = 0; k < n; k++)
			if (!w[k].found)
				return; /* not the layout this release was known to have */
		for (int k = 0; k < GT_NOFFS; k++)
			t->off[k] = -1;
		for (int k = 0; k < n; k++)
			t->off[slot[k]] = off[slot[k]];
		t->show = wr->show;
		t->chain = wr->chain;
		return;
	}
}

/* The struct DIE is (through typedefs), or points to: NULL when neither. */
static Dwarf_Die struct_of(struct dw *d, Dwarf_Die die, bool *ptr)
{
	Dwarf_Off ref;
	Dwarf_Die st = NULL;
	*ptr = dw_tag(d, die) == DW_TAG_pointer_type;
	if (!*ptr)
		return dw_tag(d, die) == DW_TAG_structure_type &&
			       dw_ok(d, dwarf_offdie_b(d->dbg, dwarf_dieoffset(die, &ref, &d->err) ==
								 DW_DLV_OK ? ref : 0, true, &st, &d->err))
			   ? st
			   : NULL;
	if (!dw_type_ref(d, die, &ref) || !dw_ok(d, dwarf_offdie_b(d->dbg, ref, true, &st, &d->err)))
		return NULL;
	if (dw_tag(d, st) == DW_TAG_structure_type)
		return st;
	dw_free_die(st);
	return NULL;
}

/* "pkg/path.T" (POINTER: its *T) -> the method symbol "pkg/path.T.Error" or
 * "pkg/path.(*T).Error"; NULL for a name without a package. */
static char *error_method(const char *type, bool pointer)
{
	const char *slash = strrchr(type, '/');
	const char *dot = strchr(slash ? slash : type, '.');
	if (!dot || strchr(type, '['))
		return NULL;
	struct strbuf sb = {0};
	if (pointer)
		strbuf_printf(&sb, "%.*s.(*%s).Error", (int)(dot - type), type, dot + 1);
	else
		strbuf_printf(&sb, "%s.Error", type);
	return sb.buf;
}

/* T as GC_EMBED: a struct that embeds `error`, whose Error() (T's or *T's) is the
 * compiler's promotion wrapper, at <autogenerated>:1 in .gopclntab; a method of its own
 * could say anything, and is left alone. */
static void embed_of(struct binfo *bi, struct dw *d, Dwarf_Die die, struct binfo_gortype *t,
		     struct binfo_lines *lines)
{
	bool ptr;
	const char *name = t->name[0] == '*' ? t->name + 1 : t->name;
	Dwarf_Die st = lines ? struct_of(d, die, &ptr) : NULL, cur = NULL;
	if (!st)
		return;
	int off = -1;
	if (dw_ok(d, dwarf_child(st, &cur, &d->err))) {
		for (; cur && !d->failed && off < 0; cur = dw_next_sibling(d, cur)) {
			const char *nm = dw_name(d, cur);
			Dwarf_Off ref;
			Dwarf_Die ft = NULL;
			uint64_t o;
			if (dw_tag(d, cur) != DW_TAG_member || !nm || strcmp(nm, "error") ||
			    !dw_attr_flag(d, cur, DW_AT_go_embedded_field) ||
			    !dw_member_offset(d, cur, &o) || !dw_type_ref(d, cur, &ref) ||
			    !dw_ok(d, dwarf_offdie_b(d->dbg, ref, true, &ft, &d->err)))
				continue;
			const char *tn = dw_name(d, ft);
			if (tn && !strcmp(tn, "error"))
				off = (int)o;
			dw_free_die(ft);
		}
		dw_free_die(cur);
	}
	dw_free_die(st);
	char *m = off >= 0 ? error_method(name, ptr) : NULL;
	const struct binfo_func *f = m ? binfo_find_func(bi, m) : NULL;
	struct binfo_pcline pl;
	free(m);
	if (!f || binfo_lines_lookup(lines, f->addr, &pl) || !pl.file ||
	    strcmp(pl.file, "<autogenerated>"))
		return;
	for (int k = 0; k < GT_NOFFS; k++)
		t->off[k] = -1;
	t->off[GT_OFF_NEXT] = off;
	t->show = GS_CHAIN;
	t->chain = GC_EMBED;
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

/* The table kept by binfo_store for a binary of many functions: its DWARF walk over
 * every type is long (a web server's: ~2 s), and a cached program still needs the names.
 * Records of struct rec, each followed by its name and text (no NULs). */
#define GORTYPES_WHAT "gortypes, format 1"
#define GORTYPES_MIN_FUNCS 4096
struct rec {
	uint64_t addr;
	int32_t size, off[GT_NOFFS];
	uint8_t show, chain;
	uint16_t pad;
	uint32_t name_len, text_len; /* text_len: UINT32_MAX for no text */
};

static void save_types(struct binfo *bi, const struct binfo_gortype *v, int n)
{
	const struct binfo_store *st = binfo__store();
	if (!st || bi->nfuncs < GORTYPES_MIN_FUNCS)
		return;
	struct strbuf sb = {0};
	for (int i = 0; i < n; i++) {
		struct rec r = {.addr = v[i].addr, .size = v[i].size, .show = (uint8_t)v[i].show,
				.chain = (uint8_t)v[i].chain, .name_len = (uint32_t)strlen(v[i].name),
				.text_len = v[i].text ? (uint32_t)strlen(v[i].text) : UINT32_MAX};
		memcpy(r.off, v[i].off, sizeof(r.off));
		strbuf_putn(&sb, (const char *)&r, sizeof(r));
		strbuf_putn(&sb, v[i].name, r.name_len);
		if (v[i].text)
			strbuf_putn(&sb, v[i].text, r.text_len);
	}
	char *key = binfo__store_key(bi, GORTYPES_WHAT);
	st->save(st->ctx, key, sb.buf ? sb.buf : "", sb.len);
	free(key);
	strbuf_free(&sb);
}

/* The stored table, each record checked: its count, or -1 (absent or not whole). */
static int load_types(struct binfo *bi, struct arena *a, struct binfo_gortype **out)
{
	const struct binfo_store *st = bi->nfuncs >= GORTYPES_MIN_FUNCS ? binfo__store() : NULL;
	void *buf = NULL;
	size_t len = 0;
	char *key = st ? binfo__store_key(bi, GORTYPES_WHAT) : NULL;
	bool ok = key && !st->load(st->ctx, key, &buf, &len);
	free(key);
	VEC(struct binfo_gortype) v = {0};
	const char *p = buf, *end = ok && p ? p + len : p; /* (NULL + 0 is undefined) */
	while (ok && p < end) {
		struct rec r = {0};
		ok = (size_t)(end - p) >= sizeof(r);
		if (ok)
			memcpy(&r, p, sizeof(r));
		size_t tl = ok && r.text_len != UINT32_MAX ? r.text_len : 0;
		ok = ok && r.show <= GS_NETADDR && r.chain <= GC_EMBED && r.size >= -1 &&
		     r.name_len < 65536 && tl < 65536 &&
		     (size_t)(end - p) - sizeof(r) >= (size_t)r.name_len + tl &&
		     (!v.n || v.v[v.n - 1].addr <= r.addr);
		for (int k = 0; ok && k < GT_NOFFS; k++)
			ok = r.off[k] >= -1 && r.off[k] < 65536;
		if (!ok)
			break;
		p += sizeof(r);
		struct binfo_gortype t = {.addr = r.addr, .size = r.size,
					  .show = (enum binfo_goshow)r.show,
					  .chain = (enum binfo_gochain)r.chain};
		memcpy(t.off, r.off, sizeof(t.off));
		t.name = arena_strndup(a, p, r.name_len);
		p += r.name_len;
		if (r.text_len != UINT32_MAX) {
			t.text = arena_strndup(a, p, tl);
			p += tl;
		}
		vec_push(&v, t);
	}
	free(buf);
	int n = ok ? v.n : -1;
	if (ok) {
		*out = arena_alloc(a, sizeof(**out) * (size_t)(v.n ? v.n : 1));
		if (v.n)
			memcpy(*out, v.v, sizeof(**out) * (size_t)v.n);
	}
	vec_free(&v);
	return n;
}

int binfo_gortypes(struct binfo *bi, struct arena *a, struct binfo_gortype **out)
{
	int stored = load_types(bi, a, out);
	if (stored >= 0)
		return stored;
	struct dw d;
	uint64_t size, base = 0;
	*out = NULL;
	if (binfo_symbol_addr(bi, "runtime.types", &base) && /* moduledata.types */ !binfo__section(bi, bi->pie ? ".data.rel.ro" : ".rodata", &size, &base))
		return -ENOENT;
	if (!dw_open(&d, bi))
		return -ENOENT;
	struct binfo_lines *lines = NULL; /* embed_of's: .gopclntab's, looked up per function */
	if (binfo_lines__open(bi, BINFO_LINES_PCLNTAB, &lines))
		lines = NULL;
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
				else if (!strcmp(name, "syscall.Errno") && t.size == 8)
					t.show = GS_ERRNO;
				else
					wrapper_of(&d, cur, &t);
				if (t.show == GS_OTHER || t.show == GS_PTR)
					embed_of(bi, &d, cur, &t, lines);
				vec_push(&v, t);
			}
			dw_free_die(cur);
		}
		dw_free_die(cu);
		if (d.failed)
			break;
	}
	dw_close(&d);
	if (lines)
		binfo_lines__close(lines);
	if (v.n)
		qsort(v.v, (size_t)v.n, sizeof(*v.v), by_addr);
	*out = arena_alloc(a, sizeof(**out) * (size_t)(v.n ? v.n : 1));
	if (v.n)
		memcpy(*out, v.v, sizeof(**out) * (size_t)v.n);
	int n = v.n;
	save_types(bi, *out, n);
	vec_free(&v);
	return n;
}
