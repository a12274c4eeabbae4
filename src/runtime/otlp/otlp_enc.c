/* otlp_enc: OTLP's protobuf messages, field numbers from opentelemetry-proto's
 * common/v1, resource/v1, trace/v1 and logs/v1 (metrics/v1 in otlp_metrics.c). Every
 * export request has the same shape (ExportTraceServiceRequest, ExportLogsService-
 * Request, ExportMetricsServiceRequest):
 *   request      { 1: Resource* }
 *   Resource*    { 1: Resource { 1: KeyValue... }, 2: Scope* }
 *   Scope*       { 1: InstrumentationScope { 1: name, 2: version }, 2: item... }
 * so one writer wraps the items of any signal. */
#include <string.h>

#include "runtime/otlp/otlp_int.h"

/* AnyValue's oneof: string_value 1, bool_value 2, int_value 3, double_value 4 */
static void enc_value(struct pb_buf *b, int field, const struct otlp_kv *kv)
{
	size_t m = pb_buf__open(b, field);
	switch (kv->type) {
	case OTLP_STR:
		pb_buf__str(b, 1, kv->s ? kv->s : "");
		break;
	case OTLP_BOOL:
		pb_buf__uint_always(b, 2, kv->b);
		break;
	case OTLP_INT:
		pb_buf__uint_always(b, 3, (uint64_t)kv->i);
		break;
	case OTLP_DOUBLE:
		pb_buf__double(b, 4, kv->d);
		break;
	}
	pb_buf__close(b, m);
}

void otlp_enc_kv(struct pb_buf *b, int field, const struct otlp_kv *kv)
{
	size_t m = pb_buf__open(b, field); /* KeyValue: key 1, value 2 */
	pb_buf__str(b, 1, kv->key);
	enc_value(b, 2, kv);
	pb_buf__close(b, m);
}

static void enc_kvs(struct pb_buf *b, int field, const struct otlp_kv *kvs, int n)
{
	for (int i = 0; i < n; i++)
		otlp_enc_kv(b, field, &kvs[i]);
}

static void enc_span_id(struct pb_buf *b, int field, uint64_t id)
{
	uint8_t be[8]; /* W3C's byte order: the hex text reads left to right */
	for (int i = 0; i < 8; i++)
		be[i] = (uint8_t)(id >> (56 - 8 * i));
	pb_buf__bytes(b, field, be, sizeof(be));
}

/* Span: trace_id 1, span_id 2, parent_span_id 4, name 5, kind 6, start 7, end 8,
 * attributes 9, events 11, links 13, status 15; Event: time 1, name 2, attributes 3;
 * Link: trace_id 1, span_id 2, attributes 4; Status: message 2, code 3. */
void otlp_enc_span(struct pb_buf *b, const struct otlp_span *s)
{
	size_t m = pb_buf__open(b, 2);
	pb_buf__bytes(b, 1, s->trace_id, 16);
	enc_span_id(b, 2, s->span_id);
	if (s->parent_id)
		enc_span_id(b, 4, s->parent_id);
	pb_buf__str(b, 5, s->name);
	pb_buf__uint(b, 6, 1); /* SPAN_KIND_INTERNAL: a function call inside the process */
	pb_buf__fixed64(b, 7, s->start_unix_ns);
	pb_buf__fixed64(b, 8, s->end_unix_ns);
	enc_kvs(b, 9, s->attrs, s->nattrs);
	for (int i = 0; i < s->nevents; i++) {
		size_t e = pb_buf__open(b, 11);
		pb_buf__fixed64(b, 1, s->events[i].unix_ns);
		pb_buf__str(b, 2, s->events[i].name);
		enc_kvs(b, 3, s->events[i].attrs, s->events[i].nattrs);
		pb_buf__close(b, e);
	}
	for (int i = 0; i < s->nlinks; i++) {
		size_t l = pb_buf__open(b, 13);
		pb_buf__bytes(b, 1, s->links[i].trace_id, 16);
		enc_span_id(b, 2, s->links[i].span_id);
		enc_kvs(b, 4, s->links[i].attrs, s->links[i].nattrs);
		pb_buf__close(b, l);
	}
	if (s->status != OTLP_STATUS_UNSET || s->status_msg) {
		size_t st = pb_buf__open(b, 15);
		if (s->status_msg)
			pb_buf__str(b, 2, s->status_msg);
		pb_buf__uint(b, 3, (uint64_t)s->status);
		pb_buf__close(b, st);
	}
	pb_buf__close(b, m);
}

/* metrics/v1: Metric: name 1, description 2, gauge 5, sum 7, histogram 9; Gauge, Sum,
 * Histogram: data_points 1, aggregation_temporality 2 (CUMULATIVE: 2), Sum's
 * is_monotonic 3; NumberDataPoint: start 2, time 3, as_int 6 (sfixed64), attributes 7;
 * HistogramDataPoint: start 2, time 3, count 4, sum 5, bucket_counts 6 and
 * explicit_bounds 7 (packed), attributes 9. */
void otlp_enc_metric(struct pb_buf *b, const struct otlp_metric *m)
{
	static const int data_field[] = {[OTLP_M_SUM] = 7, [OTLP_M_GAUGE] = 5, [OTLP_M_HIST] = 9};
	size_t mm = pb_buf__open(b, 2);
	pb_buf__str(b, 1, m->name);
	if (m->description)
		pb_buf__str(b, 2, m->description);
	size_t d = pb_buf__open(b, data_field[m->kind]);
	for (int i = 0; i < m->npoints; i++) {
		const struct otlp_point *p = &m->points[i];
		size_t dp = pb_buf__open(b, 1);
		if (m->kind != OTLP_M_GAUGE)
			pb_buf__fixed64(b, 2, m->start_unix_ns);
		pb_buf__fixed64(b, 3, m->unix_ns);
		if (m->kind == OTLP_M_HIST) {
			pb_buf__fixed64(b, 4, p->count);
			if (p->has_sum)
				pb_buf__double(b, 5, p->sum);
			pb_buf__head(b, 6, 8 * ((size_t)m->nbounds + 1));
			for (int k = 0; k <= m->nbounds; k++)
				pb_buf__le64(b, p->buckets[k]);
			pb_buf__head(b, 7, 8 * (size_t)m->nbounds);
			for (int k = 0; k < m->nbounds; k++) {
				uint64_t bits;
				memcpy(&bits, &m->bounds[k], sizeof(bits));
				pb_buf__le64(b, bits);
			}
			enc_kvs(b, 9, p->attrs, p->nattrs);
		} else {
			pb_buf__fixed64(b, 6, (uint64_t)p->i); /* sfixed64: the same bytes */
			enc_kvs(b, 7, p->attrs, p->nattrs);
		}
		pb_buf__close(b, dp);
	}
	if (m->kind != OTLP_M_GAUGE)
		pb_buf__uint(b, 2, 2); /* AGGREGATION_TEMPORALITY_CUMULATIVE */
	if (m->kind == OTLP_M_SUM)
		pb_buf__uint(b, 3, m->monotonic);
	pb_buf__close(b, d);
	pb_buf__close(b, mm);
}

/* LogRecord: time 1, severity_number 2, severity_text 3, body 5 (AnyValue),
 * attributes 6, observed_time 11. A printf line is INFO: the script chose to say it. */
void otlp_enc_log(struct pb_buf *b, uint64_t unix_ns, const char *body, size_t len,
		  const struct otlp_kv *attrs, int nattrs)
{
	size_t m = pb_buf__open(b, 2);
	pb_buf__fixed64(b, 1, unix_ns);
	pb_buf__uint(b, 2, 9); /* SEVERITY_NUMBER_INFO */
	pb_buf__str(b, 3, "INFO");
	size_t v = pb_buf__open(b, 5);
	pb_buf__head(b, 1, len); /* string_value, not NUL-terminated */
	pb_buf__append(b, body, len);
	pb_buf__close(b, v);
	enc_kvs(b, 6, attrs, nattrs);
	pb_buf__fixed64(b, 11, unix_ns);
	pb_buf__close(b, m);
}

void otlp_enc_request(struct pb_buf *b, const struct pb_buf *common, int pid,
		      const char *container_id, const struct pb_buf *items)
{
	size_t rs = pb_buf__open(b, 1);
	size_t r = pb_buf__open(b, 1);
	pb_buf__append(b, common->data, common->len);
	struct otlp_kv kv = OTLP_KV_INT("process.pid", pid);
	if (pid > 0)
		otlp_enc_kv(b, 1, &kv);
	if (container_id && *container_id) {
		kv = OTLP_KV_STR("container.id", container_id);
		otlp_enc_kv(b, 1, &kv);
	}
	pb_buf__close(b, r);
	size_t ss = pb_buf__open(b, 2);
	size_t sc = pb_buf__open(b, 1);
	pb_buf__str(b, 1, "gotrace");
	pb_buf__str(b, 2, GT_VERSION);
	pb_buf__close(b, sc);
	pb_buf__append(b, items->data, items->len);
	pb_buf__close(b, ss);
	pb_buf__close(b, rs);
}
