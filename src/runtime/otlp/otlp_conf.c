/* otlp_conf: the exporter's settings, read as the OpenTelemetry SDKs read them
 * (opentelemetry-specification's "OTLP Exporter Configuration" and "Environment Variable
 * Specification"), and the resource that says which program the data is about. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/diag.h"
#include "runtime/otlp/otlp_int.h"

static const char *const signal_path[OTLP_NSIGNALS] = {
	[OTLP_TRACES] = "/v1/traces", [OTLP_METRICS] = "/v1/metrics", [OTLP_LOGS] = "/v1/logs"};
static const char *const signal_var[OTLP_NSIGNALS] = {
	[OTLP_TRACES] = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
	[OTLP_METRICS] = "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
	[OTLP_LOGS] = "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"};

static const char *env(const char *name)
{
	const char *v = getenv(name);
	return v && *v ? v : NULL;
}

static bool url_ok(const char *what, const char *url)
{
	if (!strncmp(url, "http://", 7) || !strncmp(url, "https://", 8))
		return true;
	diag_fatal("otlp: %s '%s' is not an http:// or https:// URL (OTLP/HTTP; the "
		   "Collector's port is 4318)", what, url);
	return false;
}

/* A non-negative integer variable (milliseconds, counts), else DEF; -1: bad. */
static long long num_var(const char *name, long long def)
{
	const char *v = env(name);
	if (!v)
		return def;
	char *end;
	errno = 0;
	long long n = strtoll(v, &end, 10);
	if (errno || *end || n < 0) {
		diag_fatal("otlp: %s='%s' is not a non-negative integer", name, v);
		return -1;
	}
	return n;
}

/* %XX decoded in place (W3C Baggage's octets, which both lists use). */
static void percent_decode(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (r[0] == '%' && isxdigit((unsigned char)r[1]) && isxdigit((unsigned char)r[2])) {
			char hex[3] = {r[1], r[2], 0};
			*w++ = (char)strtol(hex, NULL, 16);
			r += 2;
		} else {
			*w++ = *r;
		}
	}
	*w = 0;
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	return s;
}

/* "k1=v1,k2=v2" (OTEL_EXPORTER_OTLP_HEADERS, OTEL_RESOURCE_ATTRIBUTES): FN for each pair,
 * decoded; -EINVAL when a member has no '=' or an empty key. */
static int each_pair(const char *var, const char *list,
		     void (*fn)(void *ctx, const char *k, const char *v), void *ctx)
{
	char *copy = xstrdup(list), *save = NULL;
	int err = 0;
	for (char *m = strtok_r(copy, ",", &save); m; m = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(m, '=');
		if (!eq) {
			if (!*trim(m))
				continue;
			diag_fatal("otlp: %s: '%s' is not KEY=VALUE", var, trim(m));
			err = -EINVAL;
			break;
		}
		*eq = 0;
		char *k = trim(m), *v = trim(eq + 1);
		percent_decode(k);
		percent_decode(v);
		if (!*k) {
			diag_fatal("otlp: %s: an empty key", var);
			err = -EINVAL;
			break;
		}
		fn(ctx, k, v);
	}
	free(copy);
	return err;
}

static void add_header(void *ctx, const char *k, const char *v)
{
	struct otlp_conf *c = ctx;
	vec_push(&c->headers, xasprintf("%s: %s", k, v));
}

struct res_ctx {
	struct pb_buf *b;
	const char *service; /* service.name from the list, if any */
	char *service_copy;
};

static void add_resource(void *ctx, const char *k, const char *v)
{
	struct res_ctx *r = ctx;
	if (!strcmp(k, "service.name")) { /* written once, below, by precedence */
		free(r->service_copy);
		r->service = r->service_copy = xstrdup(v);
		return;
	}
	struct otlp_kv kv = OTLP_KV_STR(k, v);
	otlp_enc_kv(r->b, 1, &kv);
}

static int read_resource(struct otlp_conf *c, const struct otlp_options *o)
{
	struct res_ctx r = {.b = &c->resource};
	const char *attrs = env("OTEL_RESOURCE_ATTRIBUTES");
	if (attrs && each_pair("OTEL_RESOURCE_ATTRIBUTES", attrs, add_resource, &r)) {
		free(r.service_copy);
		return -EINVAL;
	}
	const char *exe = o->exe_path ? o->exe_path : "";
	const char *base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	const char *service = env("OTEL_SERVICE_NAME");
	if (!service)
		service = r.service ? r.service : *base ? base : "unknown_service:gotrace";
	char host[256] = "";
	gethostname(host, sizeof(host) - 1);
	struct otlp_kv kvs[] = {
		OTLP_KV_STR("service.name", service),
		OTLP_KV_STR("host.name", host),
		OTLP_KV_STR("process.executable.name", base),
		OTLP_KV_STR("process.executable.path", exe),
		OTLP_KV_STR("process.runtime.name", "go"),
		OTLP_KV_STR("process.runtime.version", o->go_version),
		OTLP_KV_STR("telemetry.sdk.name", "gotrace"),
		OTLP_KV_STR("telemetry.sdk.version", GT_VERSION),
	};
	for (size_t i = 0; i < sizeof(kvs) / sizeof(kvs[0]); i++)
		if (kvs[i].s && *kvs[i].s)
			otlp_enc_kv(&c->resource, 1, &kvs[i]);
	free(r.service_copy);
	return c->resource.err;
}

int otlp_conf__read(struct otlp_conf *c, const struct otlp_options *o)
{
	memset(c, 0, sizeof(*c));
	const char *proto = env("OTEL_EXPORTER_OTLP_PROTOCOL");
	if (proto && strcmp(proto, "http/protobuf")) {
		diag_fatal("otlp: OTEL_EXPORTER_OTLP_PROTOCOL=%s: gotrace sends http/protobuf "
			   "only (OTLP/HTTP, the Collector's port 4318)", proto);
		return -EINVAL;
	}
	const char *base = o->url ? o->url : env("OTEL_EXPORTER_OTLP_ENDPOINT");
	if (!base)
		base = "http://localhost:4318";
	if (!url_ok(o->url ? "--otlp" : "OTEL_EXPORTER_OTLP_ENDPOINT", base))
		return -EINVAL;
	size_t n = strlen(base);
	while (n && base[n - 1] == '/')
		n--;
	for (int s = 0; s < OTLP_NSIGNALS; s++) {
		/* a signal's own variable is its whole URL; --otlp=URL outranks them all */
		const char *own = o->url ? NULL : env(signal_var[s]);
		if (own && !url_ok(signal_var[s], own))
			return -EINVAL;
		c->url[s] = own ? xstrdup(own) : xasprintf("%.*s%s", (int)n, base, signal_path[s]);
	}
	const char *hdrs = env("OTEL_EXPORTER_OTLP_HEADERS");
	if (hdrs && each_pair("OTEL_EXPORTER_OTLP_HEADERS", hdrs, add_header, c))
		return -EINVAL;
	long long timeout = num_var("OTEL_EXPORTER_OTLP_TIMEOUT", 10000);
	long long delay = num_var("OTEL_BSP_SCHEDULE_DELAY", 1000);
	long long batch = num_var("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512);
	long long qbytes = num_var("GT_OTLP_QUEUE_BYTES", 32 << 20);
	long long mint = num_var("OTEL_METRIC_EXPORT_INTERVAL", 60000);
	if (timeout < 0 || delay < 0 || batch < 0 || qbytes < 0 || mint < 0)
		return -EINVAL;
	c->metric_ns = (uint64_t)(mint ? mint : 60000) * 1000000;
	c->timeout_ms = timeout ? (long)timeout : 10000;
	c->delay_ns = (uint64_t)delay * 1000000;
	c->max_batch = batch ? (size_t)batch : 512;
	c->queue_bytes = (size_t)qbytes;
	const char *comp = env("OTEL_EXPORTER_OTLP_COMPRESSION");
	if (comp && strcmp(comp, "gzip") && strcmp(comp, "none")) {
		diag_fatal("otlp: OTEL_EXPORTER_OTLP_COMPRESSION=%s: gzip or none", comp);
		return -EINVAL;
	}
	c->gzip = comp && !strcmp(comp, "gzip");
	const char *ca = env("OTEL_EXPORTER_OTLP_CERTIFICATE");
	const char *cert = env("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE");
	const char *key = env("OTEL_EXPORTER_OTLP_CLIENT_KEY");
	c->ca_file = ca ? xstrdup(ca) : NULL;
	c->cert_file = cert ? xstrdup(cert) : NULL;
	c->key_file = key ? xstrdup(key) : NULL;
	return read_resource(c, o);
}

void otlp_conf__free(struct otlp_conf *c)
{
	for (int s = 0; s < OTLP_NSIGNALS; s++)
		free(c->url[s]);
	for (int i = 0; i < c->headers.n; i++)
		free(c->headers.v[i]);
	vec_free(&c->headers);
	free(c->ca_file);
	free(c->cert_file);
	free(c->key_file);
	pb_buf__free(&c->resource);
}

bool otlp_container_id(int pid, char out[65])
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	char line[4096];
	bool found = false;
	while (fgets(line, sizeof(line), f)) {
		/* "0::/system.slice/docker-<id>.scope", "…/kubepods/…/cri-containerd-<id>.scope",
		 * "…/libpod-<id>", "…/<id>": the last run of exactly 64 hex digits */
		size_t run = 0;
		for (char *p = line;; p++) {
			if (isxdigit((unsigned char)*p) && !isupper((unsigned char)*p)) {
				run++;
				continue;
			}
			if (run == 64) {
				memcpy(out, p - 64, 64);
				out[64] = 0;
				found = true;
			}
			run = 0;
			if (!*p)
				break;
		}
	}
	fclose(f);
	return found;
}
