/* sema_ctypes: C struct types. The script's own definitions (struct NAME { ... } before
 * the probes, laid out as a C compiler does) and the kernel's, from its BTF
 * (/sys/kernel/btf/vmlinux), converted only as far as a script reaches into them. */
#include "sema/sema_int.h"

#include <bpf/btf.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/kbtf.h"

/* ---- kernel BTF ------------------------------------------------------------------- */

static struct btf *vmlinux(struct sema *s)
{
	if (!s->btf_tried) {
		s->btf_tried = true;
		s->btf = (struct btf *)kbtf_vmlinux(); /* shared, kept: sema never frees it */
		if (s->btf) /* libbpf 1.x: NULL with errno on failure */
			s->btf_types = arena_alloc(s->arena, sizeof(struct gt_type *) *
								 (size_t)btf__type_cnt(s->btf));
	}
	return s->btf;
}

static struct gt_type *int_type(struct sema *s, int size, bool is_signed)
{
	return sema_type_new(s, TY_INT, size > 0 && size <= 8 ? size : 8, is_signed);
}

/* The gt_type of BTF type ID; structs come back without their fields (btf_id set). */
static struct gt_type *from_btf(struct sema *s, int id)
{
	struct btf *b = vmlinux(s);
	if (!b || id <= 0 || (unsigned)id >= btf__type_cnt(b))
		return int_type(s, 8, false); /* void and what cannot be read: a u64 */
	if (s->btf_types[id])
		return s->btf_types[id];
	const struct btf_type *t = btf__type_by_id(b, (unsigned)id);
	struct gt_type *r;
	switch (btf_kind(t)) {
	case BTF_KIND_INT:
		r = int_type(s, (int)t->size, btf_int_encoding(t) & BTF_INT_SIGNED);
		break;
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		r = int_type(s, (int)t->size, btf_kflag(t));
		break;
	case BTF_KIND_PTR: {
		r = sema_type_new(s, TY_PTR, 8, false);
		s->btf_types[id] = r; /* before the pointee: lists point at themselves */
		const struct btf_type *p = btf__type_by_id(b, t->type);
		r->pointee = t->type && btf_kind(p) != BTF_KIND_FUNC_PROTO ? from_btf(s, (int)t->type)
									   : int_type(s, 1, false);
		return r;
	}
	case BTF_KIND_ARRAY: {
		const struct btf_array *a = btf_array(t);
		r = sema_type_new(s, TY_ARRAY, 0, false);
		r->pointee = from_btf(s, (int)a->type);
		r->count = (int)a->nelems;
		r->size = r->count * r->pointee->size;
		break;
	}
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
	case BTF_KIND_FWD: {
		r = sema_type_new(s, TY_STRUCT, (int)t->size, false);
		const char *n = btf__name_by_offset(b, t->name_off);
		bool un = btf_kind(t) == BTF_KIND_UNION || (btf_kind(t) == BTF_KIND_FWD && btf_kflag(t));
		r->name = arena_printf(s->arena, "%s %s", un ? "union" : "struct", n ? n : "");
		r->btf_id = id;
		r->align = t->size % 8 == 0 ? 8 : t->size % 4 == 0 ? 4 : t->size % 2 == 0 ? 2 : 1;
		break;
	}
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_CONST:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG:
		r = from_btf(s, (int)t->type);
		break;
	default:
		r = int_type(s, 8, false);
		break;
	}
	s->btf_types[id] = r;
	return r;
}

/* Adds the members of BTF struct ID at byte offset BASE to T; anonymous structs and
 * unions are flattened into it, as C lets a program name their members. BITS: T's
 * bit-fields, grown with its other arrays. */
static void add_btf_members(struct sema *s, struct gt_type *t, int id, int base, int *cap,
			    struct gt_bitfield **bits)
{
	struct btf *b = vmlinux(s);
	const struct btf_type *bt = btf__type_by_id(b, (unsigned)id);
	const struct btf_member *m = btf_members(bt);
	for (int i = 0; i < btf_vlen(bt); i++, m++) {
		unsigned bit = btf_member_bit_offset(bt, (unsigned)i);
		unsigned width = btf_member_bitfield_size(bt, (unsigned)i);
		int off = base + (int)(bit / 8);
		const char *name = btf__name_by_offset(b, m->name_off);
		if (!name || !*name) {
			int inner = (int)m->type;
			const struct btf_type *it = btf__type_by_id(b, (unsigned)inner);
			while (btf_is_mod(it) || btf_is_typedef(it)) {
				inner = (int)it->type;
				it = btf__type_by_id(b, (unsigned)inner);
			}
			if (btf_is_composite(it) && !width)
				add_btf_members(s, t, inner, off, cap, bits);
			continue; /* or an unnamed bit-field: padding */
		}
		if (t->nfields == *cap) {
			int ncap = *cap ? 2 * *cap : 16;
			struct gt_type **f = arena_alloc(s->arena, sizeof(*f) * (size_t)ncap);
			int *o = arena_alloc(s->arena, sizeof(*o) * (size_t)ncap);
			const char **nm = arena_alloc(s->arena, sizeof(*nm) * (size_t)ncap);
			struct gt_bitfield *bf = arena_alloc(s->arena, sizeof(*bf) * (size_t)ncap);
			if (t->nfields) {
				memcpy(f, t->fields, sizeof(*f) * (size_t)t->nfields);
				memcpy(o, t->offsets, sizeof(*o) * (size_t)t->nfields);
				memcpy(nm, t->names, sizeof(*nm) * (size_t)t->nfields);
				memcpy(bf, *bits, sizeof(*bf) * (size_t)t->nfields);
			}
			t->fields = f, t->offsets = o, t->names = nm, *bits = bf, *cap = ncap;
			if (t->bitfields)
				t->bitfields = bf;
		}
		if (width) { /* an integer's WIDTH bits from BIT */
			(*bits)[t->nfields].shift = (uint8_t)(bit % 8);
			(*bits)[t->nfields].width = (uint8_t)width;
			t->bitfields = *bits;
		}
		t->fields[t->nfields] = from_btf(s, (int)m->type);
		t->offsets[t->nfields] = off;
		t->names[t->nfields++] = name;
	}
}

int sema_struct_field(struct sema *s, struct gt_type *t, const char *name)
{
	if (t->btf_id) { /* fields of a kernel struct: read now that a script names one */
		int cap = 0, id = t->btf_id;
		struct gt_bitfield *bits = NULL;
		t->btf_id = 0;
		add_btf_members(s, t, id, 0, &cap, &bits);
	}
	for (int i = 0; i < t->nfields; i++)
		if (!strcmp(t->names[i], name))
			return i;
	return -1;
}

bool sema_enum_value(struct sema *s, const char *name, int64_t *v)
{
	struct btf *b = vmlinux(s);
	for (unsigned id = 1; b && id < btf__type_cnt(b); id++) {
		const struct btf_type *t = btf__type_by_id(b, id);
		if (btf_kind(t) != BTF_KIND_ENUM)
			continue;
		const struct btf_enum *e = btf_enum(t);
		for (int i = 0; i < btf_vlen(t); i++, e++) {
			if (!strcmp(btf__name_by_offset(b, e->name_off), name)) {
				*v = e->val;
				return true;
			}
		}
	}
	return false;
}

/* ---- the script's definitions ------------------------------------------------------ */

struct cparse {
	struct sema *s;
	const char *p;
	const char *text;  /* the definition's: the script's own text up to its '}' */
	struct gt_loc loc; /* of the whole definition: messages point there */
	char tok[128];
	int err;
	bool btf_redef; /* redefining a kernel type: its members' structs come from the script */
};

static void skip_space(struct cparse *c)
{
	for (;;) {
		while (isspace((unsigned char)*c->p))
			c->p++;
		if (c->p[0] == '/' && c->p[1] == '/') {
			while (*c->p && *c->p != '\n')
				c->p++;
		} else if (c->p[0] == '/' && c->p[1] == '*') {
			const char *e = strstr(c->p + 2, "*/");
			c->p = e ? e + 2 : c->p + strlen(c->p);
		} else {
			return;
		}
	}
}

/* The next token into c->tok: a word, a number or one punctuation character. */
static const char *next(struct cparse *c)
{
	skip_space(c);
	size_t n = 0;
	if (isalnum((unsigned char)*c->p) || *c->p == '_') {
		while ((isalnum((unsigned char)*c->p) || *c->p == '_') && n < sizeof(c->tok) - 1)
			c->tok[n++] = *c->p++;
	} else if (*c->p) {
		c->tok[n++] = *c->p++;
	}
	c->tok[n] = 0;
	return c->tok;
}

static const char *peek(struct cparse *c)
{
	const char *save = c->p;
	next(c);
	c->p = save;
	return c->tok;
}

static void fail(struct cparse *c, const char *msg, const char *what)
{
	if (!c->err)
		diag_error(c->s->src, c->loc, "%s%s%s", msg, what ? what : "", what ? "'" : "");
	c->err = -EINVAL;
}

/* Where the definition's text [FROM, c->p) is in the script. */
static struct gt_loc text_loc(const struct cparse *c, const char *from)
{
	struct gt_loc l = c->loc;
	int line = l.line, col = l.col;
	for (const char *q = c->text; q < c->p && *q; q++) {
		if (q == from)
			l.line = line, l.col = col;
		if (*q == '\n')
			line++, col = 1;
		else
			col++;
	}
	l.end_line = line, l.end_col = col;
	return l;
}

/* An error about the definition's text from FROM to here. */
static void failf(struct cparse *c, const char *from, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void failf(struct cparse *c, const char *from, const char *fmt, ...)
{
	if (!c->err) {
		char msg[512];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		diag_error(c->s->src, text_loc(c, from), "%s", msg);
	}
	c->err = -EINVAL;
}

static struct gt_type *parse_struct_body(struct cparse *c, const char *kw, const char *name);

/* The kernel's BTF id of "struct NAME" or "union NAME", or 0 */
static int kernel_struct_id(struct sema *s, const char *full)
{
	struct btf *b = vmlinux(s);
	const char *sp = strchr(full, ' ');
	if (!b || !sp)
		return 0;
	bool un = !strncmp(full, "union", 5);
	int id = btf__find_by_name_kind(b, sp + 1, un ? BTF_KIND_UNION : BTF_KIND_STRUCT);
	return id > 0 ? id : 0;
}

static struct gt_type *script_struct(struct sema *s, const char *name)
{
	for (int i = s->structs.n - 1; i >= 0; i--)
		if (!strcmp(s->structs.v[i]->name, name))
			return s->structs.v[i];
	return NULL;
}

/* C's integer names and the fixed-width ones (uint32_t, u32, __u32 ...). */
static const struct {
	const char *name;
	int size;
	bool sgn;
} named[] = {
	{"int8_t", 1, 1},  {"int16_t", 2, 1},  {"int32_t", 4, 1}, {"int64_t", 8, 1},
	{"uint8_t", 1, 0}, {"uint16_t", 2, 0}, {"uint32_t", 4, 0}, {"uint64_t", 8, 0},
	{"s8", 1, 1},      {"s16", 2, 1},      {"s32", 4, 1},      {"s64", 8, 1},
	{"u8", 1, 0},      {"u16", 2, 0},      {"u32", 4, 0},      {"u64", 8, 0},
	{"__s8", 1, 1},    {"__s16", 2, 1},    {"__s32", 4, 1},    {"__s64", 8, 1},
	{"__u8", 1, 0},    {"__u16", 2, 0},    {"__u32", 4, 0},    {"__u64", 8, 0},
	{"int8", 1, 1},    {"int16", 2, 1},    {"int32", 4, 1},    {"int64", 8, 1},
	{"uint8", 1, 0},   {"uint16", 2, 0},   {"uint32", 4, 0},   {"uint64", 8, 0},
	{"bool", 1, 0},    {"_Bool", 1, 0},    {"size_t", 8, 0},   {"ssize_t", 8, 1},
	{"pid_t", 4, 1},   {"uid_t", 4, 0},    {"gid_t", 4, 0},    {"void", 1, 0},
};

struct gt_type *sema_ctype_int_named(struct sema *s, const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(named); i++)
		if (!strcmp(name, named[i].name))
			return int_type(s, named[i].size, named[i].sgn);
	return NULL;
}

static struct gt_type *base_type(struct cparse *c)
{
	bool sgn = true, seen = false;
	int size = 0, longs = 0;
	for (;;) {
		const char *w = peek(c);
		if (!strcmp(w, "const") || !strcmp(w, "volatile")) {
			next(c);
		} else if (!strcmp(w, "unsigned") || !strcmp(w, "signed")) {
			sgn = w[0] == 's';
			seen = true;
			next(c);
		} else if (!strcmp(w, "char") || !strcmp(w, "short") || !strcmp(w, "int")) {
			size = w[0] == 'c' ? 1 : w[0] == 's' ? 2 : size ? size : 4;
			seen = true;
			next(c);
		} else if (!strcmp(w, "long")) {
			longs++;
			seen = true;
			next(c);
		} else {
			break;
		}
	}
	if (seen)
		return int_type(c->s, longs ? 8 : size ? size : 4, sgn);
	char w[128];
	snprintf(w, sizeof(w), "%s", next(c));
	if (!strcmp(w, "struct") || !strcmp(w, "union")) {
		if (!strcmp(peek(c), "{"))
			return parse_struct_body(c, w, NULL); /* struct { ... } member; */
		char full[300], tag[128];
		snprintf(tag, sizeof(tag), "%s", next(c));
		snprintf(full, sizeof(full), "%s %s", w, tag);
		if (!strcmp(peek(c), "{")) { /* struct Bar { ... } member;: Bar is defined too */
			struct gt_type *t = parse_struct_body(c, w, tag);
			if (t)
				vec_push(&c->s->structs, t);
			return t;
		}
		/* as bpftrace and a C compiler: a member of a redefined kernel type that holds a
		 * struct by value needs that struct's definition in the script */
		if (c->btf_redef && strcmp(peek(c), "*") && !script_struct(c->s, full)) {
			fail(c, "field has incomplete type '", full);
			return NULL;
		}
		struct gt_type *t = sema_struct_named(c->s, full);
		if (!t)
			fail(c, "unknown type '", full);
		return t;
	}
	struct gt_type *nt = sema_ctype_int_named(c->s, w);
	if (nt)
		return nt;
	struct btf *b = vmlinux(c->s);
	int id = b ? btf__find_by_name_kind(b, w, BTF_KIND_TYPEDEF) : -1;
	if (id > 0)
		return from_btf(c->s, id);
	fail(c, "unknown type '", w);
	return NULL;
}

/* __attribute__((packed)), __attribute__((aligned(N))) (any number of them, several in
 * one list) after a definition's '}': what a C compiler does with the layout. */
static int attributes(struct cparse *c, const char *what, int *packed, int *aligned)
{
	while (!strcmp(peek(c), "__attribute__")) {
		next(c);
		if (strcmp(next(c), "(") || strcmp(next(c), "(")) {
			fail(c, "expected '((' after __attribute__ in '", what);
			return -EINVAL;
		}
		for (;;) {
			const char *w = next(c);
			if (!strcmp(w, "packed") || !strcmp(w, "__packed__")) {
				*packed = 1;
			} else if (!strcmp(w, "aligned") || !strcmp(w, "__aligned__")) {
				if (strcmp(next(c), "(")) {
					fail(c, "expected aligned(N) in '", what);
					return -EINVAL;
				}
				int n = atoi(next(c));
				if (n <= 0 || (n & (n - 1)) || strcmp(next(c), ")")) {
					fail(c, "aligned(N) wants a power of two in '", what);
					return -EINVAL;
				}
				*aligned = n > *aligned ? n : *aligned;
			} else {
				fail(c, "only the packed and aligned(N) attributes are supported in '",
				     what);
				return -EINVAL;
			}
			w = next(c);
			if (!strcmp(w, ")"))
				break;
			if (strcmp(w, ",")) {
				fail(c, "expected ',' or ')' in the __attribute__ of '", what);
				return -EINVAL;
			}
		}
		if (strcmp(next(c), ")")) {
			fail(c, "expected '))' closing the __attribute__ of '", what);
			return -EINVAL;
		}
	}
	return 0;
}

/* The width after ':' of bit-field NAME (NULL: unnamed) of type T, declared from FROM,
 * checked as clang checks it (bpftrace's definitions go through clang). */
static int bitfield_width(struct cparse *c, const struct gt_type *t, bool is_bool,
			  const char *name, const char *from)
{
	char what[160];
	if (name)
		snprintf(what, sizeof(what), "bit-field '%s'", name);
	else
		snprintf(what, sizeof(what), "anonymous bit-field");
	next(c); /* : */
	bool neg = !strcmp(peek(c), "-");
	if (neg)
		next(c);
	const char *num = next(c);
	char *end;
	errno = 0;
	long long w = strtoll(num, &end, 0);
	if (!isdigit((unsigned char)num[0]) || *end || errno == ERANGE) {
		failf(c, from, "the width of %s must be an integer constant, not '%s'", what, num);
		return -1;
	}
	w = neg ? -w : w;
	if (t->kind != TY_INT) {
		char b[64];
		failf(c, from, "%s has non-integral type '%s'", what, gt_type_str(t, b, sizeof(b)));
		return -1;
	}
	int bits = t->is_bool || is_bool ? 1 : 8 * t->size;
	if (w < 0)
		failf(c, from, "%s has negative width (%lld)", what, w);
	else if (w == 0 && name)
		failf(c, from, "named %s has zero width", what);
	else if (w > bits)
		failf(c, from, "width of %s (%lld bits) exceeds the width of its type (%d bit%s)",
		      what, w, bits, bits == 1 ? "" : "s");
	return c->err ? -1 : (int)w;
}

/* { member; ... } after `struct NAME` (NAME NULL: an anonymous member type) */
static struct gt_type *parse_struct_body(struct cparse *c, const char *kw, const char *name)
{
	struct sema *s = c->s;
	bool un = !strcmp(kw, "union");
	struct gt_type *t = sema_type_new(s, TY_STRUCT, 0, false);
	t->name = name ? arena_printf(s->arena, "%s %s", kw, name) : arena_strdup(s->arena, kw);
	if (strcmp(next(c), "{")) {
		fail(c, "expected '{' in the definition of '", t->name);
		return NULL;
	}
	VEC(struct clayout_member) members = {0};
	while (!c->err && strcmp(peek(c), "}")) {
		if (!*peek(c)) {
			fail(c, "unterminated definition of '", t->name);
			break;
		}
		/* bool and _Bool are one-byte integers here, one bit wide as bit-fields */
		bool is_bool = !strcmp(peek(c), "bool") || !strcmp(peek(c), "_Bool");
		struct gt_type *base = base_type(c);
		while (!c->err && base) {
			struct gt_type *ft = base;
			skip_space(c);
			const char *decl = c->p; /* this member's declarator, for messages */
			while (!strcmp(peek(c), "*")) {
				next(c);
				struct gt_type *p = sema_type_new(s, TY_PTR, 8, false);
				p->pointee = ft;
				ft = p;
			}
			const char *fname = NULL; /* int :3; has none */
			if (strcmp(peek(c), ":")) {
				fname = arena_strdup(s->arena, next(c));
				if (!isalpha((unsigned char)fname[0]) && fname[0] != '_') {
					fail(c, "expected a member name in '", t->name);
					break;
				}
			}
			int dims[8], ndims = 0;
			while (!strcmp(peek(c), "[") && ndims < 8) {
				next(c);
				dims[ndims++] = atoi(next(c));
				if (strcmp(next(c), "]"))
					fail(c, "expected ']' in '", t->name);
			}
			for (int d = ndims - 1; d >= 0; d--) {
				struct gt_type *a = sema_type_new(s, TY_ARRAY, 0, false);
				a->pointee = ft;
				a->count = dims[d];
				a->size = dims[d] * ft->size;
				ft = a;
			}
			struct clayout_member m = {.ty = ft, .name = fname, .width = -1};
			if (!fname || !strcmp(peek(c), ":"))
				m.width = bitfield_width(c, ft, is_bool && ft == base, fname, decl);
			if (c->err)
				break;
			vec_push(&members, m);
			if (strcmp(peek(c), ","))
				break;
			next(c);
		}
		if (!strcmp(peek(c), ";"))
			next(c);
		else if (strcmp(peek(c), "}"))
			fail(c, "expected ';' in the definition of '", t->name);
	}
	next(c); /* } */
	int packed = 0, aligned = 0;
	if (!c->err && attributes(c, t->name, &packed, &aligned))
		c->err = -EINVAL;
	/* the layout, once the attributes are known */
	sema_clayout(s, t, members.v, members.n, un, packed, aligned);
	vec_free(&members);
	return c->err ? NULL : t;
}

/* enum [NAME] { A = 1, B, C }: its enumerators are integer constants (as #define) */
static int define_enum(struct cparse *c)
{
	struct plan_enum en = {0};
	if (strcmp(peek(c), "{")) /* the name: enum types are ints, (enum NAME)x names them */
		en.name = arena_strdup(c->s->arena, next(c));
	if (strcmp(next(c), "{")) {
		fail(c, "expected '{' in an enum definition", NULL);
		return -EINVAL;
	}
	VEC(const char *) names = {0};
	VEC(int64_t) values = {0};
	int id = c->s->enums.n + 1;
	int64_t v = 0;
	bool past_max = false; /* the last value was INT64_MAX: the next one has none */
	while (!c->err && strcmp(peek(c), "}")) {
		const char *n = arena_strdup(c->s->arena, next(c));
		if (!isalpha((unsigned char)n[0]) && n[0] != '_') {
			fail(c, "expected an enumerator name, got '", n);
			break;
		}
		if (!strcmp(peek(c), "=")) {
			next(c);
			bool neg = !strcmp(peek(c), "-");
			if (neg)
				next(c);
			char *end;
			const char *num = next(c);
			errno = 0;
			long long x = strtoll(num, &end, 0);
			if (*end) {
				fail(c, "an enumerator's value must be an integer, not '", num);
				break;
			}
			if (errno == ERANGE || (neg && x == LLONG_MIN)) {
				fail(c, "an enumerator's value must fit in 64 bits, not '", num);
				break;
			}
			v = neg ? -x : x;
			past_max = false;
		}
		if (past_max) {
			fail(c, "an enumerator's value must fit in 64 bits, not '", n);
			break;
		}
		vec_push(&names, n);
		vec_push(&values, v);
		struct sema_macro m = {.name = n, .ival = v, .enum_id = id};
		vec_push(&c->s->macros, m);
		if (v == INT64_MAX)
			past_max = true;
		else
			v++;
		if (!strcmp(peek(c), ","))
			next(c);
		else if (strcmp(peek(c), "}"))
			fail(c, "expected ',' or '}' in an enum definition", NULL);
	}
	en.n = names.n;
	en.names = arena_alloc(c->s->arena, sizeof(char *) * (size_t)(names.n + 1));
	en.values = arena_alloc(c->s->arena, sizeof(int64_t) * (size_t)(values.n + 1));
	for (int i = 0; i < names.n; i++) {
		en.names[i] = names.v[i];
		en.values[i] = values.v[i];
	}
	vec_free(&names);
	vec_free(&values);
	vec_push(&c->s->enums, en);
	return c->err;
}

int sema_ctypes_define(struct sema *s, struct ast_node *cdef)
{
	struct cparse c = {.s = s, .p = cdef->u.name, .text = cdef->u.name, .loc = cdef->loc};
	char kw[16], name[128];
	snprintf(kw, sizeof(kw), "%s", next(&c));
	if (!strcmp(kw, "enum"))
		return define_enum(&c);
	snprintf(name, sizeof(name), "%s", next(&c));
	char full[160];
	snprintf(full, sizeof(full), "%s %s", kw, name);
	c.btf_redef = kernel_struct_id(s, full) != 0;
	struct gt_type *t = parse_struct_body(&c, kw, name);
	if (!t)
		return -EINVAL;
	vec_push(&s->structs, t);
	return 0;
}

struct gt_type *sema_struct_named(struct sema *s, const char *name)
{
	struct gt_type *t = script_struct(s, name);
	if (t)
		return t;
	int id = kernel_struct_id(s, name);
	return id ? from_btf(s, id) : NULL;
}

struct gt_type *sema_ctype_from_btf(struct sema *s, int id)
{
	return from_btf(s, id);
}

struct gt_type *sema_ctype_from_decl(struct sema *s, const char *decl)
{
	/* "struct __kernel_timespec * rqtp": the struct name and the pointer depth */
	const char *st = strstr(decl, "struct ");
	if (!st)
		return NULL;
	char name[160];
	int n = 0;
	const char *p = st + 7;
	while (*p == ' ')
		p++;
	while ((isalnum((unsigned char)*p) || *p == '_') && n < 150)
		name[n++] = *p++;
	name[n] = 0;
	int depth = 0;
	for (; *p; p++)
		depth += *p == '*';
	char full[170];
	snprintf(full, sizeof(full), "struct %s", name);
	struct gt_type *t = sema_struct_named(s, full);
	for (int i = 0; t && i < depth; i++) {
		struct gt_type *ptr = sema_type_new(s, TY_PTR, 8, false);
		ptr->pointee = t;
		t = ptr;
	}
	return t && t->kind == TY_PTR ? t : NULL;
}
