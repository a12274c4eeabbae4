/* otlp: export to OpenTelemetry over OTLP/HTTP (protobuf), so that what gotrace sees of
 * a fleet's Go programs lands in the Collector and the backends behind it: call-graph
 * mode's calls as spans, printf lines as log records, the script's maps as metrics.
 *
 * Configured as the OpenTelemetry SDKs are (OTEL_EXPORTER_OTLP_ENDPOINT,
 * OTEL_EXPORTER_OTLP_{TRACES,METRICS,LOGS}_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS,
 * OTEL_EXPORTER_OTLP_TIMEOUT, OTEL_EXPORTER_OTLP_CERTIFICATE, OTEL_SERVICE_NAME,
 * OTEL_RESOURCE_ATTRIBUTES; otlp_conf.c). Items are batched per signal and process
 * (otlp_enc.c) and handed to one sender thread (otlp_send.c) through a bounded queue:
 * the event loop never waits for the backend, a backend that is down is retried with
 * backoff, and what cannot be queued or sent is counted, said on stderr, and exported
 * as the metric gotrace.otlp.dropped once the backend takes data again.
 *
 * Needs nothing of the runtime's other rooms: output/ and funcgraph/ call it. */
#ifndef GT_RT_OTLP_H
#define GT_RT_OTLP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum otlp_signal { OTLP_TRACES, OTLP_METRICS, OTLP_LOGS, OTLP_NSIGNALS };

/* An attribute: a key and a typed value (OTLP's KeyValue and AnyValue). */
enum otlp_vtype { OTLP_STR, OTLP_INT, OTLP_DOUBLE, OTLP_BOOL };
struct otlp_kv {
	const char *key;
	enum otlp_vtype type;
	union {
		const char *s;
		int64_t i;
		double d;
		bool b;
	};
};
#define OTLP_KV_STR(k, v) ((struct otlp_kv){.key = (k), .type = OTLP_STR, .s = (v)})
#define OTLP_KV_INT(k, v) ((struct otlp_kv){.key = (k), .type = OTLP_INT, .i = (v)})

struct otlp_options {
	const char *url;        /* --otlp=URL, or NULL: the environment's, else
				   http://localhost:4318 */
	const char *exe_path;   /* the traced binary: service.name's default and
				   process.executable.*; NULL: none (kernel probes only) */
	const char *go_version; /* process.runtime.version ("go1.26.8"), or NULL */
	bool quiet;             /* -q: no summary line at the end */
};

struct otlp;

/* Reads the configuration and starts the sender. NULL with *ERR set (negative errno)
 * after one error through diag (a bad variable, a URL curl refuses). */
struct otlp *otlp__new(const struct otlp_options *o, int *err);
/* Sends what is batched and queued, waiting at most OTEL_EXPORTER_OTLP_TIMEOUT for the
 * backend; says on stderr what was sent and what was dropped (unless quiet); frees. */
void otlp__free(struct otlp *x);

/* Fresh random ids. */
void otlp__trace_id(struct otlp *x, uint8_t id[16]);
uint64_t otlp__span_id(struct otlp *x);

enum otlp_status { OTLP_STATUS_UNSET = 0, OTLP_STATUS_OK = 1, OTLP_STATUS_ERROR = 2 };

struct otlp_link {
	uint8_t trace_id[16];
	uint64_t span_id;
	const struct otlp_kv *attrs;
	int nattrs;
};

struct otlp_event {
	uint64_t unix_ns;
	const char *name;
	const struct otlp_kv *attrs;
	int nattrs;
};

struct otlp_span {
	uint8_t trace_id[16];
	uint64_t span_id, parent_id; /* parent 0: a root span */
	const char *name;
	uint64_t start_unix_ns, end_unix_ns;
	const struct otlp_kv *attrs;
	int nattrs;
	const struct otlp_link *links;
	int nlinks;
	const struct otlp_event *events;
	int nevents;
	enum otlp_status status;
	const char *status_msg; /* or NULL */
};

/* One span of process PID (its resource's process.pid and container.id). */
void otlp__span(struct otlp *x, int pid, const struct otlp_span *s);

/* One log record of process PID: BODY (LEN bytes, a printf line without its newline). */
void otlp__log(struct otlp *x, int pid, uint64_t unix_ns, const char *body, size_t len,
	       const struct otlp_kv *attrs, int nattrs);

/* Metrics: a Metric of data points, all of one kind (Sum, Gauge, Histogram). */
enum otlp_metric_kind { OTLP_M_SUM, OTLP_M_GAUGE, OTLP_M_HIST };
struct otlp_point {
	const struct otlp_kv *attrs;
	int nattrs;
	int64_t i;              /* SUM, GAUGE: an integer */
	/* HIST: nbounds + 1 bucket counts, their count and sum */
	const uint64_t *buckets;
	uint64_t count;
	bool has_sum; /* the observations' sum is known (bpftrace's histograms: no) */
	double sum;
};
struct otlp_metric {
	const char *name, *description;
	enum otlp_metric_kind kind;
	bool monotonic;          /* SUM */
	const double *bounds;    /* HIST: bucket i is (bounds[i - 1], bounds[i]] */
	int nbounds;
	uint64_t start_unix_ns;  /* SUM, HIST: cumulative since */
	uint64_t unix_ns;        /* the points' time */
	const struct otlp_point *points;
	int npoints;
};
/* One Metric, of process PID (0: none: the resource has no process.pid). */
void otlp__metric(struct otlp *x, int pid, const struct otlp_metric *m);
/* The exporter's own metrics, gotrace.otlp.sent and gotrace.otlp.dropped (cumulative
 * Sums of items by signal), since START_UNIX: with each export of the maps. */
void otlp__self_metrics(struct otlp *x, uint64_t start_unix);
/* How often maps are exported (OTEL_METRIC_EXPORT_INTERVAL), ns. */
uint64_t otlp__metric_interval(const struct otlp *x);

/* Batches older than the schedule delay go to the queue: each turn of the event loop. */
void otlp__tick(struct otlp *x);

/* The sender's counts (otlp_send.c, read under its lock): the summary, the self metrics. */
struct otlp_counts {
	uint64_t sent[OTLP_NSIGNALS];    /* items the backend took */
	uint64_t dropped[OTLP_NSIGNALS]; /* items given up: queue full, rejected, or
					    unsent at the end */
	uint64_t requests, retries;
};

#endif
