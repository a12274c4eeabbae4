/* sema_cast: type names and casts: (uint32)x, (int32 *)p, (bool)x, (enum NAME)x,
 * (int8[8])x and back, and the integer types that let $x: TYPE and sizeof(TYPE) name. */
#include "sema/sema_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const cast_types[] = {"int8",   "int16",  "int32", "int64", "uint8",
					 "uint16", "uint32", "uint64", "bool"};

/* C's integer spellings, as a C compiler reads them (unsigned long long, short int, char:
 * signed), or a typedef sema_ctype_int_named knows (size_t, uint64_t, void); NULL when
 * NAME is none of them. */
static struct gt_type *c_int_type(struct sema *s, const char *name)
{
	struct gt_type *t = strchr(name, ' ') ? NULL : sema_ctype_int_named(s, name);
	if (t)
		return t; /* void too: one byte behind a pointer, as bpftrace reads it */
	bool sgn = true;
	int size = 0, longs = 0;
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", name);
	for (char *save = NULL, *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (!strcmp(w, "unsigned") || !strcmp(w, "signed"))
			sgn = w[0] == 's';
		else if (!strcmp(w, "char") && !size && !longs)
			size = 1;
		else if (!strcmp(w, "short") && !size && !longs)
			size = 2;
		else if (!strcmp(w, "int") && size != 1)
			size = size ? size : 4;
		else if (!strcmp(w, "long") && longs < 2 && size != 1 && size != 2)
			longs++;
		else
			return NULL;
	}
	return sema_type_new(s, TY_INT, longs ? 8 : size ? size : 4, sgn);
}

/* (T *), (T **) ...: a pointer to an integer type (or to a pointer), or NULL after an
 * error. */
struct gt_type *sema_ptr_type_named(struct sema *s, const struct type_name *tn)
{
	struct type_name base = *tn;
	base.ptr_depth = 0;
	bool is_struct = !strncmp(tn->name, "struct ", 7) || !strncmp(tn->name, "union ", 6);
	struct gt_type *t = is_struct ? sema_struct_named(s, tn->name) : sema_int_type_named(s, &base);
	if (!t) {
		diag_error(s->src, tn->loc, is_struct ? "unknown type '%s': no definition in the "
					     "script and none in the kernel's BTF"
					   : "cannot cast to a pointer to '%s' yet",
			   tn->name);
		return NULL;
	}
	for (int i = 0; i < tn->ptr_depth; i++) {
		struct gt_type *p = sema_type_new(s, TY_PTR, 8, false);
		p->pointee = t;
		t = p;
	}
	return t;
}

int sema_typeof(struct sema *s, struct type_name *tn)
{
	if (!tn->of)
		return 0;
	struct ast_node *e = tn->of;
	if (sema_check_expr(s, e))
		return -EINVAL;
	const struct gt_type *t = e->ty;
	int depth = tn->ptr_depth;
	for (; t->kind == TY_PTR && t->pointee; t = t->pointee)
		depth++;
	if (t->kind == TY_INT && t->is_bool) {
		tn->name = "bool";
	} else if (t->kind == TY_INT && !t->enum_id && (t->size == 1 || t->size == 2 ||
							t->size == 4 || t->size == 8)) {
		tn->name = arena_printf(s->arena, "%sint%d", t->is_signed ? "" : "u", t->size * 8);
	} else if (t->kind == TY_STRUCT && depth && t->name) {
		tn->name = t->name;
	} else {
		diag_error(s->src, e->loc, "typeof() of %s is not supported yet", sema_kind_word(e));
		return -ENOTSUP;
	}
	tn->ptr_depth = depth;
	tn->of = NULL; /* resolved: the name says it now */
	return 0;
}

struct gt_type *sema_int_type_named(struct sema *s, const struct type_name *tn)
{
	if (!strncmp(tn->name, "enum ", 5)) { /* (enum NAME)x: printf("%s") names it */
		for (int i = 0; i < s->enums.n; i++) {
			if (s->enums.v[i].name && !strcmp(s->enums.v[i].name, tn->name + 5)) {
				struct gt_type *t = sema_type_new(s, TY_INT, 8, true);
				t->enum_id = i + 1;
				return t;
			}
		}
		return NULL;
	}
	for (size_t i = 0; i < ARRAY_SIZE(cast_types); i++) {
		if (strcmp(tn->name, cast_types[i]))
			continue;
		if (!strcmp(tn->name, "bool"))
			return sema_type_bool(s);
		return sema_type_new(s, TY_INT, atoi(tn->name + (tn->name[0] == 'u' ? 4 : 3)) / 8,
				     tn->name[0] != 'u');
	}
	return c_int_type(s, tn->name);
}

/* offsetof(struct T, a.b.c): the fields' offsets added up, a constant */
int sema_check_offsetof(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	struct ast_node *ta = e->u.call.args.v[0], *fa = e->u.call.args.v[1];
	struct gt_type *t = NULL;
	if (ta->kind == AST_TYPE && !ta->u.type.ptr_depth)
		t = sema_struct_named(s, ta->u.type.name);
	else if (ta->kind == AST_IDENT) /* offsetof(qspinlock, tail): a struct or union */
		t = sema_struct_named(s, arena_printf(s->arena, "struct %s", ta->u.name));
	if (ta->kind == AST_IDENT && !t)
		t = sema_struct_named(s, arena_printf(s->arena, "union %s", ta->u.name));
	if (!t || t->kind != TY_STRUCT) {
		diag_error(s->src, ta->loc, "%s: not a struct or union the script or the kernel's "
			   "BTF defines", b->name);
		return -EINVAL;
	}
	const char *path[16];
	int n = 0;
	struct ast_node *f = fa;
	for (; f->kind == AST_FIELD && !f->u.field.arrow && n < 15; f = f->u.field.expr)
		path[n++] = f->u.field.name;
	if (f->kind != AST_IDENT) {
		diag_error(s->src, fa->loc, "%s", b->usage);
		return -EINVAL;
	}
	path[n++] = f->u.name;
	int64_t off = 0;
	for (int i = n - 1; i >= 0; i--) { /* outermost first */
		int k = t && t->kind == TY_STRUCT ? sema_struct_field(s, t, path[i]) : -1;
		if (k < 0) {
			diag_error(s->src, fa->loc, "%s: no field '%s'", b->name, path[i]);
			return -EINVAL;
		}
		if (t->bitfields && t->bitfields[k].width) { /* as C: it has no byte of its own */
			diag_error(s->src, fa->loc, "%s: '%s' is a bit-field", b->name, path[i]);
			return -EINVAL;
		}
		off += t->offsets[k];
		t = t->fields[k];
	}
	struct sema_node *sn = sema_node_of(s, e);
	sn->builtin = BI_CONST;
	sn->const_val = off;
	e->ty = &sema_ty_u64;
	return 0;
}

/* Bigger arrays would not come from an integer or a string of the BPF stack anyway. */
#define MAX_ARRAY_CAST 1024

/* (int8[8])x, (bool[2])x, (uint8[])"s": the bytes of an integer or a string, by value.
 * As bpftrace: the sizes match, or an integer widens to an array of at most 8 bytes; []
 * takes as many elements as the value's bytes hold. */
static int check_array_cast(struct sema *s, struct ast_node *e)
{
	struct type_name *tn = &e->u.cast.type, base = *tn;
	struct ast_node *x = e->u.cast.expr;
	base.is_array = false;
	struct gt_type *el = tn->ptr_depth ? NULL : sema_int_type_named(s, &base);
	if (!el || el->enum_id) {
		diag_error(s->src, tn->loc, "an array cast takes integer or bool elements, not "
			   "'%s%s'", tn->name, tn->ptr_depth ? " *" : "");
		return -EINVAL;
	}
	char b1[64], b2[64];
	if (x->ty->kind != TY_INT && x->ty->kind != TY_STR) {
		diag_error(s->src, x->loc, "cannot cast %s to an array (an integer or a string "
			   "can be)", sema_kind_word(x));
		return -EINVAL;
	}
	int64_t count = tn->count, xsize = x->ty->size;
	if (!count && xsize % el->size) {
		diag_error(s->src, e->loc, "cannot size %s[]: %s is %lld bytes, not a multiple of "
			   "%d", tn->name, gt_type_str(x->ty, b1, sizeof(b1)), (long long)xsize,
			   el->size);
		return -EINVAL;
	}
	if (!count)
		count = xsize / el->size;
	if (count < 0 || count > MAX_ARRAY_CAST / el->size) {
		diag_error(s->src, e->loc, "an array cast makes at most %d bytes", MAX_ARRAY_CAST);
		return -EINVAL;
	}
	int64_t size = count * el->size;
	bool widens = x->ty->kind == TY_INT && size > xsize && size <= 8;
	if (size != xsize && !widens) {
		diag_error(s->src, e->loc, "cannot cast %s (%lld bytes) to %s[%lld] (%lld bytes): "
			   "the sizes must match", gt_type_str(x->ty, b1, sizeof(b1)),
			   (long long)xsize, gt_type_str(el, b2, sizeof(b2)), (long long)count,
			   (long long)size);
		return -EINVAL;
	}
	struct gt_type *t = sema_type_new(s, TY_INTARRAY, (int)size, false);
	t->pointee = el;
	t->count = (int)count;
	e->ty = t;
	return 0;
}

/* (uint64)$a of an array $a = (int8[8])x: its bytes as an integer of the same size */
static int check_array_to_int(struct sema *s, struct ast_node *e, struct gt_type *t)
{
	struct ast_node *x = e->u.cast.expr;
	if (t->is_bool || t->size != x->ty->size) {
		char b[64];
		diag_error(s->src, e->loc, "cannot cast %s (%d bytes) to %s: an array casts to an "
			   "integer of its size", gt_type_str(x->ty, b, sizeof(b)), x->ty->size,
			   e->u.cast.type.name);
		return -EINVAL;
	}
	e->ty = t;
	return 0;
}

/* The C array of integers in memory X reads (a char array field reads as text), or NULL. */
static struct gt_type *mem_int_array(struct sema *s, const struct ast_node *x)
{
	struct gt_type *t = x->ty;
	if (x->kind == AST_FIELD && x->ty->kind == TY_STR && x->u.field.expr->ty) {
		struct gt_type *st = x->u.field.expr->ty;
		st = st->kind == TY_PTR ? st->pointee : st;
		int i = st->kind == TY_STRUCT ? sema_struct_field(s, st, x->u.field.name) : -1;
		t = i >= 0 ? st->fields[i] : NULL;
	}
	return t && t->kind == TY_ARRAY && t->pointee->kind == TY_INT ? t : NULL;
}

/* (int32)p->bytes of a C array in memory: its bytes read as an integer of its size */
static int check_mem_array_to_int(struct sema *s, struct ast_node *e, struct gt_type *arr,
				  struct gt_type *t)
{
	struct ast_node *x = e->u.cast.expr;
	int size = arr->count * arr->pointee->size;
	if (t->is_bool || t->size != size) {
		char b[64];
		diag_error(s->src, e->loc, "cannot cast %s (%d bytes) to %s: an array casts to an "
			   "integer of its size", gt_type_str(arr, b, sizeof(b)), size,
			   e->u.cast.type.name);
		return -EINVAL;
	}
	x->ty = arr; /* its address, which codegen reads */
	e->ty = t;
	return 0;
}

/* $a[i] of an array cast: an element; a constant i must be in the array */
int sema_intarray_index(struct sema *s, struct ast_node *e)
{
	const struct gt_type *at = e->u.index.expr->ty;
	struct ast_node *i = e->u.index.index;
	if (i->kind == AST_INT && i->u.int_.value >= (uint64_t)at->count) {
		diag_error(s->src, i->loc, "index %llu is past the end of %s",
			   (unsigned long long)i->u.int_.value, gt_type_str(at, (char[64]){0}, 64));
		return -EINVAL;
	}
	e->ty = at->pointee;
	return 0;
}

int sema_check_cast(struct sema *s, struct ast_node *e)
{
	struct type_name *tn = &e->u.cast.type;
	if (sema_typeof(s, tn) || sema_check_expr(s, e->u.cast.expr))
		return -EINVAL;
	if (tn->is_array)
		return check_array_cast(s, e);
	if (tn->ptr_depth) {
		struct gt_type *t = sema_ptr_type_named(s, tn);
		if (!t)
			return -EINVAL;
		if (!sema_is_int(e->u.cast.expr)) {
			diag_error(s->src, e->u.cast.expr->loc, "cannot cast %s to a pointer",
				   sema_kind_word(e->u.cast.expr));
			return -EINVAL;
		}
		t->own_stack = e->u.cast.expr->ty->own_stack; /* (int8 *)&$s reads $s still */
		e->ty = t;
		return 0;
	}
	struct gt_type *t = strcmp(tn->name, "void") ? sema_int_type_named(s, tn) : NULL;
	if (!t) {
		diag_error(s->src, tn->loc, "cannot cast to '%s'%s", tn->name,
			   strcmp(tn->name, "void") ? " yet" : "");
		return -ENOTSUP;
	}
	if (e->u.cast.expr->ty->kind == TY_INTARRAY)
		return check_array_to_int(s, e, t);
	struct gt_type *arr = mem_int_array(s, e->u.cast.expr);
	if (arr && !(t->is_bool && e->u.cast.expr->ty->kind == TY_STR)) /* (bool)p->name: "" */
		return check_mem_array_to_int(s, e, arr, t);
	bool str_bool = !strcmp(tn->name, "bool") && e->u.cast.expr->ty->kind == TY_STR;
	if (!sema_is_int(e->u.cast.expr) && !str_bool) { /* (bool)"s": not "" */
		diag_error(s->src, e->u.cast.expr->loc, "cannot cast %s to %s",
			   sema_kind_word(e->u.cast.expr), tn->name);
		return -EINVAL;
	}
	sema_node_of(s, e)->cast_bool = !strcmp(tn->name, "bool");
	e->ty = t;
	return 0;
}
