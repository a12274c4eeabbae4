/* otlp internals: the configuration (otlp_conf.c), the encoders (otlp_enc.c) and the
 * sender (otlp_send.c). */
#ifndef GT_RT_OTLP_INT_H
#define GT_RT_OTLP_INT_H

#include <stdio.h>

#include "common/pb.h"
#include "common/util.h"
#include "runtime/otlp/otlp.h"

/* ---- otlp_conf.c: what the environment and --otlp say ---- */

struct otlp_conf {
	char *url[OTLP_NSIGNALS]; /* where each signal is POSTed */
	VEC(char *) headers;      /* "Name: value" lines of OTEL_EXPORTER_OTLP_HEADERS */
	long timeout_ms;          /* OTEL_EXPORTER_OTLP_TIMEOUT: one request, and the
				     flush at the end */
	char *ca_file, *cert_file, *key_file; /* OTEL_EXPORTER_OTLP_{CERTIFICATE,
						 CLIENT_CERTIFICATE,CLIENT_KEY} */
	bool gzip;                /* OTEL_EXPORTER_OTLP_COMPRESSION=gzip */
	uint64_t delay_ns;        /* OTEL_BSP_SCHEDULE_DELAY: a batch's longest wait */
	size_t max_batch;         /* OTEL_BSP_MAX_EXPORT_BATCH_SIZE: items per request */
	size_t queue_bytes;       /* GT_OTLP_QUEUE_BYTES: the queue's bound */
	uint64_t metric_ns;       /* OTEL_METRIC_EXPORT_INTERVAL: maps exported this often */
	struct pb_buf resource;   /* the KeyValues every process's resource has */
};

/* 0, or -EINVAL after one error through diag. */
int otlp_conf__read(struct otlp_conf *c, const struct otlp_options *o);
void otlp_conf__free(struct otlp_conf *c);
/* The container id of process PID from its cgroup path (the last 64-hex-digit run, as
 * Docker, containerd and CRI-O name their scopes), in OUT[65]: true when found. */
bool otlp_container_id(int pid, char out[65]);

/* ---- otlp_enc.c: OTLP's messages ---- */

/* A KeyValue as field FIELD. */
void otlp_enc_kv(struct pb_buf *b, int field, const struct otlp_kv *kv);
/* A Span as ScopeSpans.spans; a LogRecord as ScopeLogs.log_records. */
void otlp_enc_span(struct pb_buf *b, const struct otlp_span *s);
void otlp_enc_log(struct pb_buf *b, uint64_t unix_ns, const char *body, size_t len,
		  const struct otlp_kv *attrs, int nattrs);
/* A Metric as ScopeMetrics.metrics. */
void otlp_enc_metric(struct pb_buf *b, const struct otlp_metric *m);
/* The export request of one process: the resource (COMMON's KeyValues, then PID's
 * process.pid and container.id), the scope "gotrace", and ITEMS, the encoded spans,
 * metrics or log records (each already its Scope*'s field 2). */
void otlp_enc_request(struct pb_buf *b, const struct pb_buf *common, int pid,
		      const char *container_id, const struct pb_buf *items);

/* ---- otlp_send.c: the bounded queue and its sender thread ---- */

struct otlp_sender;

/* 0 or negative errno (curl or the thread could not start: said through diag). */
int otlp_sender__new(struct otlp_sender **out, const struct otlp_conf *conf);
/* Takes BODY (left empty) holding ITEMS items of signal SIG; a full queue drops it,
 * counted. */
void otlp_sender__push(struct otlp_sender *s, enum otlp_signal sig, struct pb_buf *body,
		       uint64_t items);
/* Items dropped since the last call, and the latest reason (copied to WHY). */
uint64_t otlp_sender__new_drops(struct otlp_sender *s, char *why, size_t n);
void otlp_sender__counts(struct otlp_sender *s, struct otlp_counts *out);
/* Sends what is queued until the queue is empty or the timeout passes (then the rest is
 * dropped, counted), stops the thread, frees. WHY: the last failure, for the summary. */
void otlp_sender__free(struct otlp_sender *s, struct otlp_counts *counts, char *why,
		       size_t n);

#endif
