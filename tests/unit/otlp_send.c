/* otlp_send: the exporter (src/runtime/otlp) without BPF, for test_otlp.py's encoding
 * case: it sends what its arguments say, and the test reads back what a real
 * OpenTelemetry Collector decoded from it.
 *
 * URL "-": none given, the environment's (as gotrace without --otlp=URL).
 *
 *   otlp_send URL spans N      N root spans, each with one child: every attribute type,
 *                              an event, a link to the previous root, an ERROR status
 *   otlp_send URL logs N       N log records "line I"
 *
 * It prints, one per line, what the test compares: "trace HEX", "span HEX parent HEX";
 * the exporter's summary ("otlp: sent ...", "otlp: dropped ...") goes to stderr. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/otlp/otlp.h"

static void hex(const uint8_t *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: otlp_send URL spans|logs N\n");
		return 2;
	}
	struct otlp_options o = {.url = strcmp(argv[1], "-") ? argv[1] : NULL, .exe_path = "/usr/bin/otlp_send",
				 .go_version = "go1.99.1"};
	int err, n = atoi(argv[3]);
	struct otlp *x = otlp__new(&o, &err);
	if (!x)
		return 1;
	uint8_t prev_trace[16] = {0};
	uint64_t prev_span = 0;
	for (int i = 0; i < n; i++) {
		if (!strcmp(argv[2], "logs")) {
			char line[64];
			int len = snprintf(line, sizeof(line), "line %d", i);
			struct otlp_kv kv[] = {OTLP_KV_INT("goid", 100 + i), OTLP_KV_INT("tid", 7)};
			otlp__log(x, 4242, 1700000000000000000ull + (uint64_t)i, line, (size_t)len,
				  kv, 2);
			continue;
		}
		uint8_t trace[16];
		otlp__trace_id(x, trace);
		uint64_t root = otlp__span_id(x), child = otlp__span_id(x);
		uint64_t t0 = 1700000000000000000ull + (uint64_t)i * 1000000;
		struct otlp_kv attrs[] = {
			OTLP_KV_INT("goid", 7 + i),
			OTLP_KV_INT("negative", -5),
			OTLP_KV_INT("zero", 0),
			OTLP_KV_STR("text", "a \"quoted\" ü"),
			OTLP_KV_STR("empty", ""),
			{.key = "flag", .type = OTLP_BOOL, .b = true},
			{.key = "ratio", .type = OTLP_DOUBLE, .d = 0.25},
		};
		struct otlp_kv ev_attr = OTLP_KV_STR("why", "boom");
		struct otlp_event ev = {.unix_ns = t0 + 900, .name = "panic", .attrs = &ev_attr,
					.nattrs = 1};
		struct otlp_link link = {.span_id = prev_span};
		memcpy(link.trace_id, prev_trace, 16);
		struct otlp_span s = {
			.span_id = root, .name = "main.root",
			.start_unix_ns = t0, .end_unix_ns = t0 + 1000,
			.attrs = attrs, .nattrs = 7,
			.links = &link, .nlinks = prev_span ? 1 : 0,
		};
		memcpy(s.trace_id, trace, 16);
		struct otlp_span c = {
			.span_id = child, .parent_id = root, .name = "main.child",
			.start_unix_ns = t0 + 100, .end_unix_ns = t0 + 900,
			.attrs = attrs, .nattrs = 1,
			.events = &ev, .nevents = 1,
			.status = OTLP_STATUS_ERROR, .status_msg = "panic: the call did not return",
		};
		memcpy(c.trace_id, trace, 16);
		otlp__span(x, 4242, &c);
		otlp__span(x, 4242, &s);
		char th[33];
		hex(trace, 16, th);
		printf("trace %s\nspan %016" PRIx64 " parent 0\nspan %016" PRIx64 " parent %016" PRIx64
		       "\n", th, root, child, root);
		memcpy(prev_trace, trace, 16);
		prev_span = root;
	}
	otlp__free(x);
	return 0;
}
