/* sema_tseries: current bpftrace's time series, @m = tseries(v, interval_ns, num[, agg]).
 * The interval and the count are constants (they size and index the buckets, as
 * lhist's bounds do) and the aggregation a literal, resolved once into an enum; the
 * messages are bpftrace's (its pre_type_check and resource_analyser). */
#include "sema/sema_int.h"

#include <errno.h>
#include <string.h>

int sema_tseries_nargs(struct sema *s, struct ast_node *call)
{
	int n = call->u.call.args.n;
	if (n < 3) {
		diag_error(s->src, call->loc, "tseries() requires at least 3 arguments (%d provided)",
			   n);
		return -EINVAL;
	}
	if (n > 4) {
		diag_error(s->src, call->loc, "tseries() takes up to 4 arguments (%d provided)", n);
		return -EINVAL;
	}
	return 0;
}

/* A non-negative integer literal (a duration such as 100ms is one), or an integer $1. */
static bool literal(struct sema *s, struct ast_node *a, uint64_t *v)
{
	if (a->kind == AST_INT) {
		*v = a->u.int_.value;
		return true;
	}
	if (a->kind == AST_POSPARAM && a->ty && a->ty->kind == TY_INT) {
		int64_t c = sema_node_of(s, a)->const_val;
		*v = (uint64_t)c;
		return c >= 0;
	}
	return false;
}

/* bpftrace's names, in the order its message lists them (a std::set) */
static const struct {
	const char *name;
	enum gt_tseries_agg agg;
} aggs[] = {{"avg", GT_TS_AVG}, {"max", GT_TS_MAX}, {"min", GT_TS_MIN}, {"sum", GT_TS_SUM}};

static int agg_arg(struct sema *s, struct ast_node *call, struct ast_node *a,
		   enum gt_tseries_agg *out)
{
	if (a->kind != AST_STR) {
		diag_error(s->src, a->loc, "tseries() expects a string literal as its aggregation "
			   "function: avg, max, min or sum");
		return -EINVAL;
	}
	for (size_t i = 0; i < ARRAY_SIZE(aggs); i++) {
		if ((size_t)a->u.str.len == strlen(aggs[i].name) &&
		    !memcmp(a->u.str.bytes, aggs[i].name, (size_t)a->u.str.len)) {
			*out = aggs[i].agg;
			return 0;
		}
	}
	diag_error(s->src, call->loc, "tseries() expects one of the following aggregation "
		   "functions: avg, max, min, sum (\"%.*s\" provided)", a->u.str.len,
		   a->u.str.bytes);
	return -EINVAL;
}

int sema_tseries_args(struct sema *s, struct ast_node *call, struct sema_map *m)
{
	struct ast_list *args = &call->u.call.args;
	for (int i = 1; i < args->n; i++)
		if (sema_check_expr(s, args->v[i]))
			return -EINVAL;
	uint64_t interval, num;
	if (!literal(s, args->v[1], &interval)) {
		diag_error(s->src, call->loc, "tseries: invalid interval_ns value (must be "
			   "non-negative literal)");
		return -EINVAL;
	}
	if (!literal(s, args->v[2], &num)) {
		diag_error(s->src, call->loc, "tseries: invalid num_intervals value (must be "
			   "non-negative literal)");
		return -EINVAL;
	}
	if (interval < 1) {
		diag_error(s->src, call->loc, "tseries() interval_ns must be >= 1 (%llu provided)",
			   (unsigned long long)interval);
		return -EINVAL;
	}
	if (num < 1 || num > 1000000) {
		diag_error(s->src, call->loc, "tseries() num_intervals must be %s (%llu provided)",
			   num < 1 ? ">= 1" : "< 1000000", (unsigned long long)num);
		return -EINVAL;
	}
	enum gt_tseries_agg agg = GT_TS_LAST;
	if (args->n == 4 && agg_arg(s, call, args->v[3], &agg))
		return -EINVAL;
	if (m->tseries_set && (m->tseries_interval != interval || m->tseries_num != num ||
			       m->tseries_agg != agg)) {
		diag_error(s->src, call->loc, "Different tseries bounds in a single map unsupported");
		return -EINVAL;
	}
	if (!m->tseries_set)
		m->tseries_signed = args->v[0]->ty->is_signed;
	m->tseries_set = true;
	m->tseries_interval = interval;
	m->tseries_num = num;
	m->tseries_agg = agg;
	return 0;
}

/* The plan's fields; BPFTRACE_DUMMY_TS_MAP=@name (bpftrace's hook for its tests) makes
 * that scalar integer map's value the clock, so that the tests choose the intervals. */
int sema_tseries_finish(struct sema *s, const struct sema_map *m, struct plan_map *pm)
{
	pm->ts_map = -1;
	if (pm->kind != PLAN_MAP_TSERIES)
		return 0;
	pm->tseries_interval = m->tseries_interval;
	pm->tseries_num = m->tseries_num;
	pm->tseries_agg = m->tseries_agg;
	pm->value_signed = m->tseries_signed;
	const char *dummy = gt_getenv("DUMMY_TS_MAP");
	if (!dummy)
		return 0;
	int id;
	const struct sema_map *d = sema_map_by_name(s, dummy[0] == '@' ? dummy + 1 : dummy, &id);
	if (!d || d->kind != PLAN_MAP_INT || d->nkeys) {
		diag_print(DIAG_ERROR, "dummy_ts_map: \"%s\" %s", dummy,
			   !d ? "not found" : "must be a scalar integer map");
		return -EINVAL;
	}
	pm->ts_map = id;
	return 0;
}
