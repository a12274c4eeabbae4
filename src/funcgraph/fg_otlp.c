/* fg_otlp: --funcgraph --otlp, each traced call an OpenTelemetry span. One trace per
 * root call, each call's span the child of its caller's; the attributes:
 *   goid, oncpu_ns (not with --no-oncpu), code.function, code.filepath, code.lineno
 *   (where the function starts), caller, call_site (FILE:LINE of the call),
 *   returned_at (FILE:LINE of the RET that returned), args.NAME and rets.NAME for the
 *   --args / --rets values (integers, bools and floats typed, the rest as text: a Go
 *   value's %+v);
 * a call left by a panic has status ERROR and a "panic" event where it was found out;
 * one still open at the end has gotrace.unfinished; an inlined copy's start (a leaf with
 * no duration) gotrace.inlined. A goroutine's first traced call links to the span its
 * go statement ran in (goroutine lineage), and carries its parent's goid and the go
 * statement's place. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "funcgraph/fg_int.h"

#define MAX_ATTRS 12 /* fixed attributes, before the values' */

/* A Go integer, bool or float (not a Duration's text) typed from its %+v text. */
void fg_value_type(const struct plan_arg *a, struct fg_value *v)
{
	char *end;
	if (a->kind != PLAN_ARG_GO || a->go_show != PGW_NONE || !*v->text)
		return;
	errno = 0;
	if (a->go == PG_INT || a->go == PG_UINT) {
		v->i = a->go == PG_INT ? (uint64_t)strtoll(v->text, &end, 10)
				       : strtoull(v->text, &end, 10);
		if (!*end && !errno) {
			v->kind = FG_V_INT;
			v->is_signed = a->go == PG_INT;
		}
	} else if (a->go == PG_BOOL) {
		v->kind = FG_V_BOOL;
		v->i = !strcmp(v->text, "true");
	} else if (a->go == PG_FLOAT) {
		v->d = strtod(v->text, &end);
		if (!*end)
			v->kind = FG_V_FLOAT;
	}
}

/* The keys and texts made here are kept in MADE[2 * index], [2 * index + 1]. */
static void add_values(struct otlp_kv *kv, int *n, const char *prefix,
		       const struct fg_value *v, int nv, char **made)
{
	for (int i = 0; i < nv; i++) {
		char *key = made[2 * *n] = xasprintf("%s.%s", prefix, v[i].name);
		if (v[i].kind == FG_V_TEXT)
			kv[*n] = OTLP_KV_STR(key, v[i].text);
		else if (v[i].kind == FG_V_BOOL)
			kv[*n] = (struct otlp_kv){.key = key, .type = OTLP_BOOL, .b = v[i].i};
		else if (v[i].kind == FG_V_FLOAT)
			kv[*n] = (struct otlp_kv){.key = key, .type = OTLP_DOUBLE, .d = v[i].d};
		else if (v[i].is_signed || v[i].i <= INT64_MAX)
			kv[*n] = OTLP_KV_INT(key, (int64_t)v[i].i);
		else /* a uint64 past int64: OTLP has no unsigned; text keeps it exact */
			kv[*n] = OTLP_KV_STR(key, made[2 * *n + 1] = xasprintf("%llu",
						       (unsigned long long)v[i].i));
		(*n)++;
	}
}

void fg_otlp_call(struct otlp *x, int64_t wall_off, const struct fg_call *call)
{
	int cap = MAX_ATTRS + call->nargv + call->nretv, n = 0;
	struct otlp_kv *kv = xcalloc((size_t)cap, sizeof(*kv));
	char **made = xcalloc(2 * (size_t)cap, sizeof(*made));
	kv[n++] = OTLP_KV_INT("goid", call->goid);
	kv[n++] = OTLP_KV_STR("code.function", call->func);
	if (call->func_file) {
		kv[n++] = OTLP_KV_STR("code.filepath", call->func_file);
		kv[n++] = OTLP_KV_INT("code.lineno", call->func_line);
	}
	if (call->oncpu_ns >= 0)
		kv[n++] = OTLP_KV_INT("oncpu_ns", call->oncpu_ns);
	if (call->caller)
		kv[n++] = OTLP_KV_STR("caller", call->caller);
	if (call->call_site)
		kv[n++] = OTLP_KV_STR("call_site", call->call_site);
	if (call->returned_at)
		kv[n++] = OTLP_KV_STR("returned_at", call->returned_at);
	if (call->unfinished)
		kv[n++] = (struct otlp_kv){.key = "gotrace.unfinished", .type = OTLP_BOOL, .b = true};
	if (call->inlined)
		kv[n++] = (struct otlp_kv){.key = "gotrace.inlined", .type = OTLP_BOOL, .b = true};
	const struct fg_spawn *sp = call->spawn;
	if (sp) {
		kv[n++] = OTLP_KV_INT("goroutine.parent_goid", sp->parent);
		if (sp->site)
			kv[n++] = OTLP_KV_STR("goroutine.go_statement", sp->site);
	}
	add_values(kv, &n, "args", call->argv, call->nargv, made);
	add_values(kv, &n, "rets", call->retv, call->nretv, made);

	uint64_t start = call->entry_ns + (uint64_t)wall_off;
	struct otlp_span s = {
		.span_id = call->span_id,
		.parent_id = call->parent_id,
		.name = call->func,
		.start_unix_ns = start,
		.end_unix_ns = start + call->dur_ns,
		.attrs = kv,
		.nattrs = n,
	};
	memcpy(s.trace_id, call->trace_id, sizeof(s.trace_id));
	struct otlp_event panic = {.unix_ns = start + call->dur_ns, .name = "panic"};
	if (call->panicked) {
		s.status = OTLP_STATUS_ERROR;
		s.status_msg = "panic: the call did not return";
		s.events = &panic;
		s.nevents = 1;
	}
	struct otlp_kv link_kv[2] = {OTLP_KV_STR("gotrace.link", "go statement")};
	struct otlp_link link = {.span_id = sp ? sp->link_span : 0, .attrs = link_kv, .nattrs = 1};
	if (sp && sp->link_trace) {
		memcpy(link.trace_id, sp->link_trace, sizeof(link.trace_id));
		if (sp->site)
			link_kv[link.nattrs++] = OTLP_KV_STR("goroutine.go_statement", sp->site);
		s.links = &link;
		s.nlinks = 1;
	}
	otlp__span(x, (int)call->pid, &s);
	for (int i = 0; i < 2 * cap; i++)
		free(made[i]);
	free(made);
	free(kv);
}
