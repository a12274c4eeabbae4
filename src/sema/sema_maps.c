/* sema_maps: @maps. A map's value kind comes from what is stored in it (a plain value
 * or an aggregation such as count()); its key layout from the keys it is used with.
 * String sizes grow to the largest use and offsets are fixed once every clause is
 * checked (sema_finish_maps). */
#include "sema/sema_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const struct builtin *sema_aggregation(struct sema *s, struct ast_node *e)
{
	if (e->kind != AST_CALL)
		return NULL;
	const struct builtin *b = sema_resolve(s, e);
	return b && (b->flags & BF_AGG) ? b : NULL;
}

/* Whether E is a value only user space prints (strftime(), buf() ...). */
static bool stores_uval(struct sema *s, struct ast_node *e)
{
	const struct builtin *b = e->kind == AST_CALL ? sema_resolve(s, e) : NULL;
	return b && (b->flags & BF_UVAL);
}

/* Whether storing E makes a string map, judged before E is checked: a literal, a
 * string-valued builtin, or a fetch of text. */
static bool stores_string(struct sema *s, struct ast_node *e)
{
	struct gt_type *ty;
	bool gostr;
	switch (e->kind) {
	case AST_STR:
		return true;
	case AST_IDENT:
	case AST_CALL: {
		const struct builtin *b = sema_resolve(s, e);
		return b && b->result == RES_STR;
	}
	case AST_FETCH:
		return sema_fetch_type(s, e->u.fetch.type, &ty, &gostr) == 0 && ty->kind == TY_STR;
	default:
		return false;
	}
}

static const char *kind_name(enum plan_map_kind k)
{
	static const char *const names[] = {"an integer", "a string", "count()", "sum()",
					    "avg()", "min()", "max()", "stats()", "hist()",
					    "lhist()", "a tuple", "tseries()"};
	return names[k];
}

static struct sema_map *find_map(struct sema *s, const char *name, int *id)
{
	for (int i = 0; i < s->maps.n; i++) {
		if (!strcmp(s->maps.v[i].name, name)) {
			*id = i;
			return &s->maps.v[i];
		}
	}
	return NULL;
}

const struct sema_map *sema_map_by_name(struct sema *s, const char *name, int *id)
{
	const struct sema_map *m = find_map(s, name, id);
	return m && (int)m->kind >= 0 ? m : NULL;
}

static struct sema_map *get_map(struct sema *s, const char *name, int *id)
{
	struct sema_map *m = find_map(s, name, id);
	if (m)
		return m;
	struct sema_map nm = {.name = name, .kind = -1};
	vec_push(&s->maps, nm);
	*id = s->maps.n - 1;
	return &s->maps.v[*id];
}

/* Pre-pass: the value kind of every map from the statements that store into it, so
 * that a clause may read a map that a later clause writes. */
static void discover(struct sema *s, struct ast_node *n)
{
	if (!n)
		return;
	switch (n->kind) {
	case AST_PROGRAM:
		for (int i = 0; i < n->u.program.clauses.n; i++)
			discover(s, n->u.program.clauses.v[i]);
		break;
	case AST_CLAUSE:
		discover(s, n->u.clause.body);
		break;
	case AST_BLOCK:
		for (int i = 0; i < n->u.block.stmts.n; i++)
			discover(s, n->u.block.stmts.v[i]);
		break;
	case AST_IF:
		discover(s, n->u.if_.then);
		discover(s, n->u.if_.els);
		break;
	case AST_UNROLL:
	case AST_WHILE:
		discover(s, n->u.loop.body);
		break;
	case AST_FOR:
		discover(s, n->u.for_.body);
		break;
	case AST_EXPR_STMT: {
		struct ast_node *e = n->u.expr_stmt.expr;
		int id;
		if (e->kind == AST_INCDEC && e->u.incdec.operand->kind == AST_MAP) {
			struct sema_map *m = get_map(s, e->u.incdec.operand->u.map.name, &id);
			if ((int)m->kind < 0)
				m->kind = PLAN_MAP_INT;
		}
		break;
	}
	case AST_ASSIGN: {
		struct ast_node *lhs = n->u.assign.lhs, *rhs = n->u.assign.rhs;
		if (lhs->kind != AST_MAP)
			break;
		int id;
		struct sema_map *m = get_map(s, lhs->u.map.name, &id);
		if (!m->first_store && lhs->u.map.keys.n)
			m->first_store = lhs;
		if ((int)m->kind >= 0)
			break;
		const struct builtin *agg = sema_aggregation(s, rhs);
		if (agg && !n->u.assign.op)
			m->kind = agg->agg;
		else if (!n->u.assign.op && stores_string(s, rhs))
			m->kind = PLAN_MAP_STR;
		else if (!n->u.assign.op && (rhs->kind == AST_TUPLE || stores_uval(s, rhs)))
			m->kind = PLAN_MAP_VALUE;
		else
			m->kind = PLAN_MAP_INT;
		break;
	}
	default:
		break;
	}
}

void sema_discover_maps(struct sema *s, struct ast_node *program)
{
	discover(s, program);
}

static bool key_type_ok(const struct gt_type *t)
{
	return t && (gt_type_is_int(t) || t->kind == TY_STR || t->kind == TY_SITE_FUNC ||
		     t->kind == TY_SITE_PROBE || t->kind == TY_STRFTIME ||
		     t->kind == TY_STRERROR || t->kind == TY_USERNAME || t->kind == TY_BUF ||
		     t->kind == TY_INET || t->kind == TY_CGROUP_PATH || t->kind == TY_STACK ||
		     t->kind == TY_SYM);
}

/* The keys of one use, flattened: current bpftrace's @m[(a, b)] and @m[$t] ($t a tuple,
 * or a map read whose value is one) are @m[a, b] and @m[$t.0, $t.1]; a tuple among several keys (@m[a, (b, c)]) gives its
 * items too, and the '(' and ')' around them are counted for printing. */
#define KEYS_MAX 64
struct key_flat {
	struct ast_list keys;
	uint8_t open[KEYS_MAX], close[KEYS_MAX];
	int pending_open; /* '(' seen, for the next key */
	bool nested;
};

static bool tuple_var(const struct ast_node *k)
{
	while (k->kind == AST_FIELD)
		k = k->u.field.expr;
	return k->kind == AST_VAR;
}

static int flat_key(struct sema *s, struct ast_node *k, struct key_flat *kf, bool paren)
{
	struct ast_list items = {0};
	if (k->kind == AST_TUPLE && !k->u.tuple.names) {
		items = k->u.tuple.items;
	} else if (k->kind == AST_VAR || k->kind == AST_MAP ||
		   (k->kind == AST_FIELD && tuple_var(k))) {
		/* a map's tuple value too (@us[@p[goid]]): read once per item */
		if (k->kind == AST_VAR && !sema_find_var(s, k->u.name, &(int){0}))
			goto leaf; /* reported as an unknown variable */
		if (sema_check_expr(s, k))
			return -EINVAL;
		if (k->ty->kind != TY_TUPLE || k->ty->names)
			goto leaf;
		for (int i = 0; i < k->ty->nfields; i++) {
			struct ast_node *f = ast_new(s->arena, AST_FIELD, k->loc);
			f->u.field.expr = k;
			f->u.field.name = arena_printf(s->arena, "%d", i);
			ast_list_push(s->arena, &items, f);
		}
	} else {
		goto leaf;
	}
	if (paren) {
		kf->pending_open++;
		kf->nested = true;
	}
	for (int i = 0; i < items.n; i++)
		if (flat_key(s, items.v[i], kf, true))
			return -EINVAL;
	if (paren && kf->keys.n)
		kf->close[kf->keys.n - 1]++;
	return 0;
leaf:
	if (kf->keys.n == KEYS_MAX) {
		diag_error(s->src, k->loc, "more than %d keys", KEYS_MAX);
		return -EINVAL;
	}
	kf->open[kf->keys.n] = (uint8_t)kf->pending_open;
	kf->close[kf->keys.n] = 0;
	kf->pending_open = 0;
	ast_list_push(s->arena, &kf->keys, k);
	return 0;
}

static int flatten_keys(struct sema *s, struct ast_list *keys, struct key_flat *kf)
{
	memset(kf, 0, sizeof(*kf));
	bool one = keys->n == 1; /* @m[(a, b)] is @m[a, b] */
	for (int i = 0; i < keys->n; i++)
		if (flat_key(s, keys->v[i], kf, !one))
			return -EINVAL;
	*keys = kf->keys;
	return 0;
}

/* Checks the keys of one use and merges them into the map's key layout. */
int sema_map_use(struct sema *s, struct ast_node *e, struct sema_map **out)
{
	int id;
	struct sema_map *m = find_map(s, e->u.map.name, &id);
	if (!m || (int)m->kind < 0) {
		diag_error(s->src, e->loc, "map %s%s is read but nothing is ever stored in it",
			   "@", e->u.map.name);
		return -EINVAL;
	}
	struct ast_list *keys = &e->u.map.keys;
	int err = 0;
	struct key_flat kf;
	if (flatten_keys(s, keys, &kf))
		return -EINVAL;
	/* Go interfaces' key types (a capture of what %v shows), else NULL */
	struct gt_type **gokeys = arena_alloc(s->arena, sizeof(*gokeys) * (size_t)(keys->n + 1));
	for (int i = 0; i < keys->n; i++) {
		struct ast_node *k = keys->v[i];
		if (sema_check_expr(s, k) || sema_go_uniform(s, k))
			err = -EINVAL;
		else if (k->ty->kind == TY_GO && !(gokeys[i] = sema_go_key_type(s, k))) {
			diag_error(s->src, k->loc, "a map key must be an integer, a string or a Go "
				   "interface (an error: its text), not a Go %s (use its fields)",
				   k->ty->name);
			err = -EINVAL;
		} else if (k->ty->kind != TY_GO && !key_type_ok(k->ty)) {
			diag_error(s->src, k->loc, "a map key must be an integer or a string");
			err = -EINVAL;
		}
	}
	if (err)
		return err;
	if (!m->keys_known) {
		m->keys_known = true;
		m->nkeys = keys->n;
		m->keys = arena_alloc(s->arena, sizeof(struct gt_type) * (size_t)(keys->n + 1));
		m->key_names = arena_alloc(s->arena, sizeof(*m->key_names) * (size_t)(keys->n + 1));
		for (int i = 0; i < keys->n; i++) {
			/* a profile's label names: goid, comm, func ... (-f pprof, folded) */
			const struct ast_node *k = keys->v[i];
			m->key_names[i] = k->kind == AST_IDENT ? k->u.name
					  : k->kind == AST_CALL ? k->u.call.name
					  : k->kind == AST_VAR ? k->u.name
								: arena_printf(s->arena, "key%d", i + 1);
			m->keys[i] = gokeys[i] ? *gokeys[i] : *keys->v[i]->ty;
			if (gt_type_is_int(&m->keys[i]))
				m->keys[i].size = 8;
		}
		m->first_use = e->loc;
		if (kf.nested) {
			m->key_open = arena_alloc(s->arena, (size_t)keys->n);
			m->key_close = arena_alloc(s->arena, (size_t)keys->n);
			memcpy(m->key_open, kf.open, (size_t)keys->n);
			memcpy(m->key_close, kf.close, (size_t)keys->n);
		}
	} else {
		if (m->nkeys != keys->n) {
			diag_error(s->src, e->loc,
				   "@%s is used with %d key%s here but with %d before", e->u.map.name,
				   keys->n, keys->n == 1 ? "" : "s", m->nkeys);
			return -EINVAL;
		}
		if (kf.nested != !!m->key_open ||
		    (kf.nested && (memcmp(m->key_open, kf.open, (size_t)keys->n) ||
				   memcmp(m->key_close, kf.close, (size_t)keys->n)))) {
			diag_error(s->src, e->loc, "the keys of @%s are nested in tuples "
				   "differently here than before", e->u.map.name);
			return -EINVAL;
		}
		for (int i = 0; i < keys->n; i++) {
			const struct gt_type *t = keys->v[i]->ty;
			bool was_int = gt_type_is_int(&m->keys[i]), is_int = gt_type_is_int(t);
			if (was_int != is_int || (!is_int && t->kind != m->keys[i].kind &&
						  (t->kind == TY_STR || m->keys[i].kind == TY_STR))) {
				diag_error(s->src, keys->v[i]->loc,
					   "key %d of @%s is %s here but was %s before", i + 1,
					   e->u.map.name, is_int ? "an integer" : t->kind == TY_GO ?
					   "a Go interface" : "a string", was_int ? "an integer"
					   : m->keys[i].kind == TY_GO ? "a Go interface" : "a string");
				return -EINVAL;
			}
			if ((t->kind == TY_GO) != (m->keys[i].kind == TY_GO) ||
			    (gokeys[i] && gokeys[i]->size != m->keys[i].size)) {
				diag_error(s->src, keys->v[i]->loc, "key %d of @%s is %s here but "
					   "%s before", i + 1, e->u.map.name,
					   gokeys[i] ? "a Go interface" : "not a Go interface",
					   m->keys[i].kind == TY_GO ? "was one" : "another kind");
				return -EINVAL;
			}
			if (t->kind == TY_STACK && (m->keys[i].kind != TY_STACK ||
						    t->stack_map != m->keys[i].stack_map ||
						    t->stack_mode != m->keys[i].stack_mode)) {
				char now[48], before[48];
				sema_stack_name(s, t, now, sizeof(now));
				sema_stack_name(s, &m->keys[i], before, sizeof(before));
				diag_error(s->src, keys->v[i]->loc, "key %d of @%s is %s here but %s at "
					   "line %d", i + 1, e->u.map.name, now, before,
					   m->first_use.line);
				return -EINVAL;
			}
			if (t->kind == TY_STR && t->size > m->keys[i].size)
				m->keys[i].size = t->size;
			if (is_int && !t->is_signed)
				m->keys[i].is_signed = false;
		}
	}
	struct sema_node *sn = sema_node_of(s, e);
	sn->map_id = id;
	*out = m;
	return 0;
}

/* @m[k] in an expression: the stored value, 0 or "" when absent. */
int sema_map_read(struct sema *s, struct ast_node *e)
{
	struct sema_map *m;
	if (sema_map_use(s, e, &m))
		return -EINVAL;
	sema_helper_event(s, e, 2, "map_lookup_elem");
	m->read = true;
	if (m->kind == PLAN_MAP_INT) {
		static struct gt_type i64 = {.kind = TY_INT, .size = 8, .is_signed = true};
		e->ty = m->value_ty ? m->value_ty : &i64;
		return 0;
	}
	if (m->kind == PLAN_MAP_STR) {
		struct gt_type *t = arena_alloc(s->arena, sizeof(*t));
		t->kind = TY_STR;
		t->size = m->value_size ? m->value_size : s->opts->str_len;
		e->ty = t;
		return 0;
	}
	if (m->kind == PLAN_MAP_VALUE) {
		if (!m->value_ty) {
			diag_error(s->src, e->loc, "@%s is read before a tuple is stored in it",
				   e->u.map.name);
			return -EINVAL;
		}
		e->ty = m->value_ty;
		return 0;
	}
	if (m->kind == PLAN_MAP_COUNT || m->kind == PLAN_MAP_SUM || m->kind == PLAN_MAP_MIN ||
	    m->kind == PLAN_MAP_MAX || m->kind == PLAN_MAP_AVG) {
		/* current bpftrace: the value user space would print, the CPUs' parts
		 * made one in BPF (cg_agg_read) */
		e->ty = m->kind == PLAN_MAP_COUNT ? &sema_ty_u64 : &sema_ty_i64;
		return 0;
	}
	diag_error(s->src, e->loc,
		   "@%s holds %s: aggregations are read by user space; print(@%s) shows it",
		   e->u.map.name, kind_name(m->kind), e->u.map.name);
	return -EINVAL;
}

/* A key or value as the loop's variable holds it: integers in 8 bytes as in the map
 * (TOP: not inside a tuple), strings of at least GT_STRLEN bytes, since the map's may
 * still grow; codegen copies field by field and never more than either side has. */
static void widen(struct sema *s, struct gt_type *t, bool top)
{
	if (gt_type_is_int(t) && top)
		t->size = 8;
	if (t->kind == TY_STR && t->size < s->opts->str_len)
		t->size = s->opts->str_len;
	if (t->kind != TY_TUPLE)
		return;
	for (int i = 0; i < t->nfields; i++)
		widen(s, t->fields[i], false);
	sema_tuple_merge(t, t); /* lays it out again */
}

static struct gt_type *iter_field(struct sema *s, const struct gt_type *t)
{
	struct gt_type *c = sema_type_copy(s, t);
	widen(s, c, true);
	return c;
}

struct gt_type *sema_map_iter_type(struct sema *s, struct ast_node *for_node)
{
	struct ast_node *mn = for_node->u.for_.iter;
	int id;
	struct sema_map *m = find_map(s, mn->u.map.name, &id);
	if (!m || (int)m->kind < 0) {
		diag_error(s->src, mn->loc, "map @%s is read but nothing is ever stored in it",
			   mn->u.map.name);
		return NULL;
	}
	/* current bpftrace types maps from the whole program: a loop before the store learns
	 * the keys from it, when they are literals (nothing of the store's context needed)
	 * and the value's type is its kind's (an integer, an aggregation) */
	bool literal = m->first_store && m->kind != PLAN_MAP_STR && m->kind != PLAN_MAP_VALUE;
	struct sema_map *late;
	for (int i = 0; literal && i < m->first_store->u.map.keys.n; i++) {
		enum ast_kind k = m->first_store->u.map.keys.v[i]->kind;
		literal = k == AST_INT || k == AST_STR;
	}
	if (!m->keys_known && literal && sema_map_use(s, m->first_store, &late))
		return NULL;
	if (!m->keys_known) {
		diag_error(s->src, mn->loc, "@%s is looped over before anything is stored in it: "
			   "put the probe that stores first", mn->u.map.name);
		return NULL;
	}
	if (!m->nkeys) {
		diag_error(s->src, mn->loc, "@%s has no keys (a scalar map): there is nothing to "
			   "loop over", mn->u.map.name);
		return NULL;
	}
	if (m->key_open) {
		diag_error(s->src, mn->loc, "@%s has a tuple inside its keys, which a loop "
			   "cannot hold yet: print(@%s) shows it", mn->u.map.name, mn->u.map.name);
		return NULL;
	}
	for (int i = 0; i < m->nkeys; i++)
		if (m->keys[i].kind == TY_GO) {
			diag_error(s->src, mn->loc, "@%s is keyed by a Go interface, which a loop "
				   "cannot hold yet: print(@%s) shows it", mn->u.map.name,
				   mn->u.map.name);
			return NULL;
		}
	struct gt_type *value = NULL;
	switch (m->kind) {
	case PLAN_MAP_INT:
		value = iter_field(s, m->value_ty ? m->value_ty : &sema_ty_i64);
		break;
	case PLAN_MAP_STR: {
		struct gt_type str = {.kind = TY_STR, .size = m->value_size};
		value = iter_field(s, &str);
		break;
	}
	case PLAN_MAP_COUNT:
	case PLAN_MAP_SUM:
	case PLAN_MAP_MIN:
	case PLAN_MAP_MAX:
	case PLAN_MAP_AVG:
		value = &sema_ty_i64;
		break;
	case PLAN_MAP_VALUE:
		if (m->value_ty)
			value = iter_field(s, m->value_ty);
		break;
	default:
		break;
	}
	if (!value) {
		diag_error(s->src, mn->loc, "cannot loop over @%s: it holds %s", mn->u.map.name,
			   kind_name(m->kind));
		return NULL;
	}
	struct gt_type *key;
	if (m->nkeys == 1) {
		key = iter_field(s, &m->keys[0]);
	} else {
		struct gt_type **keys = arena_alloc(s->arena, sizeof(*keys) * (size_t)m->nkeys);
		for (int i = 0; i < m->nkeys; i++)
			keys[i] = iter_field(s, &m->keys[i]);
		key = sema_tuple_of(s, keys, m->nkeys);
	}
	m->read = true;
	sema_node_of(s, mn)->map_id = id;
	sema_node_of(s, for_node)->map_id = id;
	struct gt_type *kv[2] = {key, value};
	return sema_tuple_of(s, kv, 2);
}

static int const_arg(struct sema *s, struct ast_node *a, int64_t *v)
{
	if (a->kind == AST_INT) {
		*v = (int64_t)a->u.int_.value;
		return 0;
	}
	if (a->kind == AST_UNARY && a->u.unary.op == OP_NEG &&
	    a->u.unary.operand->kind == AST_INT) {
		*v = (int64_t)(0 - a->u.unary.operand->u.int_.value); /* -INT64_MIN: no UB */
		return 0;
	}
	if (a->kind == AST_POSPARAM && a->ty && a->ty->kind == TY_INT) {
		*v = sema_node_of(s, a)->const_val;
		return 0;
	}
	diag_error(s->src, a->loc, "lhist() needs constant min, max and step");
	return -EINVAL;
}

/* @m[k] = value, @m[k] op= value, @m[k] = aggregation(...) */
int sema_map_assign(struct sema *s, struct ast_node *st)
{
	struct ast_node *lhs = st->u.assign.lhs, *rhs = st->u.assign.rhs;
	struct sema_map *m;
	if (sema_map_use(s, lhs, &m))
		return -EINVAL;
	const struct builtin *b = sema_aggregation(s, rhs);
	if (b) {
		struct ast_list *args = &rhs->u.call.args;
		enum plan_map_kind agg = b->agg;
		int want = b->min_args;
		if (st->u.assign.op) {
			diag_error(s->src, st->loc, "use @m = %s(...), not %s=", rhs->u.call.name,
				   ast_op_str(st->u.assign.op));
			return -EINVAL;
		}
		if (agg == PLAN_MAP_HIST && (args->n == 1 || args->n == 2)) {
			/* current bpftrace's hist(x, k): 2^k buckets a power of 2; k = 0 is
			 * hist(x) */
			int64_t k = 0;
			if (args->n == 2 &&
			    (sema_check_expr(s, args->v[1]) || const_arg(s, args->v[1], &k)))
				return -EINVAL;
			if (k < 0 || k > 5) {
				diag_error(s->src, args->v[1]->loc, "hist(x, k) takes k from 0 to 5");
				return -EINVAL;
			}
			if (m->hist_set && m->hist_bits != (int)k) {
				diag_error(s->src, rhs->loc, "@%s was given hist(x, %d) before",
					   lhs->u.map.name, m->hist_bits);
				return -EINVAL;
			}
			m->hist_set = true;
			m->hist_bits = (int)k;
		} else if (agg == PLAN_MAP_TSERIES) {
			if (sema_tseries_nargs(s, rhs))
				return -EINVAL;
		} else if (args->n != want) {
			diag_error(s->src, rhs->loc, "%s() takes %d argument%s", rhs->u.call.name,
				   want, want == 1 ? "" : "s");
			return -EINVAL;
		}
		if (m->kind != agg) {
			diag_error(s->src, rhs->loc, "@%s holds %s, it cannot also take %s()",
				   lhs->u.map.name, kind_name(m->kind), rhs->u.call.name);
			return -EINVAL;
		}
		if (want && sema_check_expr(s, args->v[0]))
			return -EINVAL;
		if (want && !gt_type_is_int(args->v[0]->ty)) {
			diag_error(s->src, args->v[0]->loc, "%s() needs an integer",
				   rhs->u.call.name);
			return -EINVAL;
		}
		if (agg == PLAN_MAP_LHIST) {
			int64_t lo, hi, step;
			for (int i = 1; i < 4; i++)
				if (sema_check_expr(s, args->v[i]))
					return -EINVAL;
			if (const_arg(s, args->v[1], &lo) || const_arg(s, args->v[2], &hi) ||
			    const_arg(s, args->v[3], &step))
				return -EINVAL;
			if (step <= 0 || hi <= lo ||
			    ((uint64_t)hi - (uint64_t)lo) / (uint64_t)step > 1000) {
				diag_error(s->src, rhs->loc,
					   "lhist(x, min, max, step) needs min < max, step > 0 and "
					   "at most 1000 buckets");
				return -EINVAL;
			}
			if (m->lhist_set && (m->lhist_min != lo || m->lhist_max != hi ||
					     m->lhist_step != step)) {
				diag_error(s->src, rhs->loc,
					   "@%s was given other lhist() bounds before",
					   lhs->u.map.name);
				return -EINVAL;
			}
			m->lhist_set = true;
			m->lhist_min = lo;
			m->lhist_max = hi;
			m->lhist_step = step;
		}
		if (agg == PLAN_MAP_TSERIES && sema_tseries_args(s, rhs, m))
			return -EINVAL;
		rhs->ty = arena_alloc(s->arena, sizeof(struct gt_type)); /* void */
		sema_node_of(s, st)->map_id = sema_node_of(s, lhs)->map_id;
		return 0;
	}
	if (sema_check_expr(s, rhs))
		return -EINVAL;
	bool first = !m->stored && !m->read && !st->u.assign.op;
	m->stored = true;
	if (m->kind == PLAN_MAP_INT && first && !m->value_ty && rhs->ty->kind == TY_STR)
		m->kind = PLAN_MAP_STR; /* @m = $s: discover could not see a string */
	if (m->kind == PLAN_MAP_INT && gt_type_is_int(rhs->ty)) {
		if (first)
			m->value_bool = rhs->ty->is_bool;
		/* a map that holds pointers keeps their type: @p += 1 moves one element */
		if (!st->u.assign.op && (rhs->ty->kind == TY_PTR || (first && rhs->ty->enum_id)) &&
		    !m->value_ty)
			m->value_ty = rhs->ty; /* an enum's value keeps its names for printf */
		lhs->ty = m->value_ty ? m->value_ty : rhs->ty;
		return 0;
	}
	if (rhs->ty->kind == TY_STRUCT && rhs->ty->size > SEMA_MAX_STRUCT_COPY) {
		diag_error(s->src, rhs->loc, "%s is %d bytes: a copy of at most %d fits the BPF stack "
			   "(store its fields instead)", rhs->ty->name, rhs->ty->size,
			   SEMA_MAX_STRUCT_COPY);
		return -EINVAL;
	}
	bool value = rhs->ty->kind == TY_TUPLE || rhs->ty->kind == TY_STRUCT ||
		     rhs->ty->kind == TY_INTARRAY ||
		     rhs->ty->kind == TY_STRFTIME ||
		     rhs->ty->kind == TY_STRERROR || rhs->ty->kind == TY_USERNAME ||
		     rhs->ty->kind == TY_BUF || rhs->ty->kind == TY_INET || rhs->ty->kind == TY_STACK || rhs->ty->kind == TY_SYM ||
		     rhs->ty->kind == TY_CGROUP_PATH || rhs->ty->kind == TY_SITE_PROBE ||
		     rhs->ty->kind == TY_SITE_FUNC;
	if (m->kind == PLAN_MAP_INT && first && !m->value_ty && value)
		m->kind = PLAN_MAP_VALUE; /* @s = *p, @t = $tuple: discover took it for an int */
	if (m->kind == PLAN_MAP_VALUE && value && !st->u.assign.op &&
	    (!m->value_ty || sema_tuple_merge(m->value_ty, rhs->ty))) {
		if (!m->value_ty)
			m->value_ty = sema_type_copy(s, rhs->ty);
		lhs->ty = m->value_ty; /* what codegen stores into */
		return 0;
	}
	if (m->kind == PLAN_MAP_STR && rhs->ty->kind == TY_STR && !st->u.assign.op) {
		if (rhs->ty->size > m->value_size)
			m->value_size = rhs->ty->size;
		lhs->ty = rhs->ty;
		return 0;
	}
	if (m->kind == PLAN_MAP_VALUE && value && m->value_ty) {
		char b1[128], b2[128];
		diag_error(s->src, rhs->loc, "@%s holds %s, it cannot store %s", lhs->u.map.name,
			   gt_type_str(m->value_ty, b1, sizeof(b1)),
			   gt_type_str(rhs->ty, b2, sizeof(b2)));
		return -EINVAL;
	}
	diag_error(s->src, rhs->loc, "@%s holds %s, it cannot store %s here", lhs->u.map.name,
		   kind_name(m->kind),
		   rhs->ty->kind == TY_VOID ? "nothing" : sema_kind_word(rhs));
	return -EINVAL;
}

/* f(@m, key), current bpftrace's spelling of delete and has_key, becomes f(@m[key]); a
 * tuple key of a map with several keys gives them one by one ($kv.0 of a loop: $kv.0.0,
 * $kv.0.1 ...). */
static int map_pair(struct sema *s, struct ast_node *call)
{
	struct ast_list *args = &call->u.call.args;
	struct ast_node *mn = args->v[0], *k = args->v[1];
	if (mn->kind != AST_MAP || mn->u.map.has_brackets)
		return 0; /* reported as delete(@m[key]) is */
	struct ast_node *keyed = ast_new(s->arena, AST_MAP, mn->loc);
	keyed->u.map.name = mn->u.map.name;
	keyed->u.map.has_brackets = true;
	int id;
	const struct sema_map *m = find_map(s, mn->u.map.name, &id);
	if (k->kind == AST_TUPLE) {
		keyed->u.map.keys = k->u.tuple.items;
	} else if (m && m->keys_known && m->nkeys > 1) {
		if (sema_check_expr(s, k))
			return -EINVAL;
		if (k->ty->kind == TY_TUPLE && tuple_var(k)) {
			/* $t or $kv.0: flattened as @m[$t] is */
			ast_list_push(s->arena, &keyed->u.map.keys, k);
			args->v[0] = keyed;
			args->n = 1;
			return 0;
		}
		if (k->ty->kind != TY_TUPLE || k->ty->nfields != m->nkeys) {
			diag_error(s->src, k->loc, "@%s has %d keys: delete(@%s, (k1, k2 ...))",
				   mn->u.map.name, m->nkeys, mn->u.map.name);
			return -EINVAL;
		}
		for (int i = 0; i < m->nkeys; i++) {
			struct ast_node *f = ast_new(s->arena, AST_FIELD, k->loc);
			f->u.field.expr = k;
			f->u.field.name = arena_printf(s->arena, "%d", i);
			ast_list_push(s->arena, &keyed->u.map.keys, f);
		}
	} else {
		ast_list_push(s->arena, &keyed->u.map.keys, k);
	}
	args->v[0] = keyed;
	args->n = 1;
	return 0;
}

/* has_key(@m, k): whether the key is there */
int sema_check_has_key(struct sema *s, struct ast_node *e, const struct builtin *b)
{
	struct ast_list *args = &e->u.call.args;
	int id;
	const struct sema_map *m = args->v[0]->kind == AST_MAP
					   ? find_map(s, args->v[0]->u.map.name, &id)
					   : NULL;
	if (m && m->keys_known && !m->nkeys) {
		diag_error(s->src, e->loc, "call to has_key() expects a map with explicit keys");
		return -EINVAL;
	}
	if (map_pair(s, e))
		return -EINVAL;
	struct ast_node *mn = args->v[0];
	if (mn->kind != AST_MAP || mn->u.map.keys.n == 0 || args->n != 1) {
		diag_error(s->src, e->loc, "%s", b->usage);
		return -EINVAL;
	}
	struct sema_map *used;
	if (sema_map_use(s, mn, &used))
		return -EINVAL;
	if (used->kind == PLAN_MAP_HIST || used->kind == PLAN_MAP_LHIST ||
	    used->kind == PLAN_MAP_TSERIES) {
		diag_error(s->src, mn->loc, "has_key() of a %s map: its keys are buckets",
			   kind_name(used->kind));
		return -EINVAL;
	}
	used->read = true;
	sema_node_of(s, e)->map_id = sema_node_of(s, mn)->map_id;
	return 0;
}

/* print/clear/zero(@m), delete(@m[k]), delete(@m, k) */
int sema_map_call(struct sema *s, struct ast_node *call, const struct builtin *b)
{
	const char *name = b->name;
	bool del = b->id == BI_DELETE;
	struct ast_list *args = &call->u.call.args;
	if (del && args->n == 2 && map_pair(s, call))
		return -EINVAL;
	int most = b->id == BI_PRINT ? 3 : 1;
	if (args->n < 1 || args->n > most || args->v[0]->kind != AST_MAP) {
		diag_error(s->src, call->loc, "%s() takes a map: %s(@m%s)", name, name,
			   del ? "[key]" : "");
		return -EINVAL;
	}
	int64_t opt[2] = {0, 0}; /* print(@m, top, div) */
	for (int i = 1; i < args->n; i++) {
		struct ast_node *a = args->v[i];
		if (sema_check_expr(s, a))
			return -EINVAL;
		bool lit = a->kind == AST_INT || (a->kind == AST_POSPARAM && sema_is_int(a));
		opt[i - 1] = a->kind == AST_INT ? (int64_t)a->u.int_.value
						: lit ? sema_node_of(s, a)->const_val : -1;
		if (!lit || opt[i - 1] < 0) {
			diag_error(s->src, a->loc, "print(@m, top, div) takes constant, non-negative "
				   "top and div");
			return -EINVAL;
		}
	}
	struct ast_node *mn = args->v[0];
	struct sema_map *m;
	int id;
	if (del && !mn->u.map.keys.n) {
		struct sema_map *sm = find_map(s, mn->u.map.name, &id);
		if (sm && sm->keys_known && sm->nkeys) {
			diag_error(s->src, mn->loc,
				   "delete() needs a key: delete(@m[key]); clear(@m) empties a map");
			return -EINVAL;
		}
	}
	if (del || mn->u.map.keys.n) {
		if (sema_map_use(s, mn, &m))
			return -EINVAL;
		id = sema_node_of(s, mn)->map_id;
		if (del && m->kind == PLAN_MAP_TSERIES) { /* up to a million buckets per key */
			diag_error(s->src, call->loc, "delete() of a tseries() map's key is not "
				   "supported yet: clear(@%s) empties it", mn->u.map.name);
			return -ENOTSUP;
		}
	} else if (!(m = find_map(s, mn->u.map.name, &id)) || (int)m->kind < 0) {
		diag_error(s->src, mn->loc, "map @%s is never stored into", mn->u.map.name);
		return -EINVAL;
	}
	if (!del && mn->u.map.keys.n) {
		diag_error(s->src, mn->loc, "%s() takes a whole map: %s(@%s)", name, name,
			   mn->u.map.name);
		return -EINVAL;
	}
	call->ty = &sema_ty_void;
	if (del) /* current bpftrace: whether the key was there */
		call->ty = sema_type_bool(s);
	struct sema_node *sn = sema_node_of(s, call);
	sn->map_id = id;
	if (del)
		sema_helper_event(s, call, 1, "map_delete_elem");
	if (b->flags & BF_EVENT) {
		/* print(@m) dumps the map; print(x) is another event of the same builtin */
		int k = b->id == BI_PRINT ? PLAN_EV_PRINT_MAP : b->event;
		sn->event_id = sema_new_event(s, k, NULL, NULL, 0);
		s->events.v[sn->event_id].map_id = id;
		s->events.v[sn->event_id].top = opt[0];
		s->events.v[sn->event_id].div = opt[1];
	}
	return 0;
}

static const struct ast_node *declared(struct sema *s, const char *name)
{
	for (int i = 0; i < s->mapdecls.n; i++)
		if (!strcmp(s->mapdecls.v[i]->u.mapdecl.name, name))
			return s->mapdecls.v[i];
	return NULL;
}

/* Fixes key offsets and value sizes into plan.maps. */
int sema_finish_maps(struct sema *s, struct gt_plan *plan, struct arena *a)
{
	uint32_t max_entries = 4096;
	const char *env = gt_getenv("MAX_MAP_KEYS");
	if (!env)
		env = gt_getenv("MAP_KEYS_MAX"); /* bpftrace's name */
	if (env && atol(env) > 0)
		max_entries = (uint32_t)atol(env);
	plan->nmaps = s->maps.n;
	plan->maps = arena_alloc(a, sizeof(struct plan_map) * (size_t)(s->maps.n + 1));
	for (int i = 0; i < s->maps.n; i++) {
		struct sema_map *m = &s->maps.v[i];
		struct plan_map *pm = &plan->maps[i];
		pm->name = arena_printf(a, "@%s", m->name);
		pm->bpf_name = arena_printf(a, "gtm_%s", m->name[0] ? m->name : "_");
		pm->kind = (int)m->kind < 0 ? PLAN_MAP_INT : m->kind;
		pm->percpu = pm->kind != PLAN_MAP_INT && pm->kind != PLAN_MAP_STR &&
			     pm->kind != PLAN_MAP_VALUE;
		pm->value_bool = m->value_bool;
		pm->value_addr = m->value_ty && m->value_ty->kind == TY_PTR && m->value_ty->own_stack;
		pm->nkeys = m->nkeys;
		pm->key_open = m->key_open;
		pm->key_close = m->key_close;
		pm->keys = arena_alloc(a, sizeof(struct plan_arg) * (size_t)(m->nkeys + 1));
		int off = 0;
		for (int k = 0; k < m->nkeys; k++) {
			struct plan_arg *f = &pm->keys[k];
			const struct gt_type *t = &m->keys[k];
			sema_plan_arg(s, t, off, f);
			f->name = m->key_names[k];
			off += (f->size + 7) & ~7;
		}
		if (!m->nkeys)
			off = 8; /* scalar maps have one u64 0 key */
		if (pm->kind == PLAN_MAP_HIST || pm->kind == PLAN_MAP_LHIST ||
		    pm->kind == PLAN_MAP_TSERIES)
			off += 8; /* bucket index */
		pm->key_size = off;
		switch (pm->kind) {
		case PLAN_MAP_STR:
			pm->value_size = m->value_size ? m->value_size : s->opts->str_len;
			break;
		case PLAN_MAP_VALUE:
			if (!m->value_ty) /* stored only in code sema refused */
				return -EINVAL;
			pm->value_size = m->value_ty->size;
			sema_plan_arg(s, m->value_ty, 0, &pm->value);
			break;
		case PLAN_MAP_AVG:
		case PLAN_MAP_STATS:
		case PLAN_MAP_MIN:
		case PLAN_MAP_MAX:
			pm->value_size = 16;
			break;
		case PLAN_MAP_TSERIES:
			pm->value_size = (int)sizeof(struct gt_tseries);
			break;
		default:
			pm->value_size = 8;
			break;
		}
		pm->value_signed = true;
		pm->lhist_min = m->lhist_min;
		pm->hist_bits = m->hist_bits;
		pm->lhist_max = m->lhist_max;
		pm->lhist_step = m->lhist_step;
		if (sema_tseries_finish(s, m, pm))
			return -EINVAL;
		pm->max_entries = max_entries;
		const struct ast_node *d = declared(s, m->name);
		if (d) {
			pm->max_entries = (uint32_t)d->u.mapdecl.entries;
			pm->lru = strstr(d->u.mapdecl.type, "lru") != NULL;
		}
	}
	for (int i = 0; i < s->mapdecls.n; i++) {
		const struct ast_node *d = s->mapdecls.v[i];
		int id;
		if (!find_map(s, d->u.mapdecl.name, &id))
			diag_warning(s->src, d->loc, "Unused map: @%s", d->u.mapdecl.name);
	}
	return 0;
}

/* let @m = TYPE(N);: the type one of bpftrace's four, N keys (at least one), once */
int sema_map_declare(struct sema *s, const struct ast_node *d)
{
	static const char *const types[] = {"hash", "lruhash", "percpuhash", "percpulruhash"};
	bool ok = false;
	for (size_t i = 0; i < ARRAY_SIZE(types); i++)
		ok |= !strcmp(d->u.mapdecl.type, types[i]);
	if (!ok) {
		diag_error(s->src, d->loc, "unknown map type '%s': a map is declared as hash(N), "
			   "lruhash(N), percpuhash(N) or percpulruhash(N)", d->u.mapdecl.type);
		return -EINVAL;
	}
	if (!d->u.mapdecl.entries || d->u.mapdecl.entries > UINT32_MAX) {
		diag_error(s->src, d->loc, "@%s: a map holds from 1 to %u keys", d->u.mapdecl.name,
			   UINT32_MAX);
		return -EINVAL;
	}
	if (declared(s, d->u.mapdecl.name)) {
		diag_error(s->src, d->loc, "@%s is declared twice", d->u.mapdecl.name);
		return -EINVAL;
	}
	vec_push(&s->mapdecls, d);
	return 0;
}
