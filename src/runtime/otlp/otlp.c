/* otlp: the exporter's front (see otlp.h): ids, batches per signal and process, the
 * drops said while running and the summary at the end. Called from the event loop's
 * thread only; the sender thread has its own lock. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "common/diag.h"
#include "runtime/otlp/otlp_int.h"

#define MAX_BATCHES 16            /* open batches (signal, process) */
#define WARN_EVERY_NS 10000000000ull /* drops are said at most this often */

struct batch {
	bool used;
	enum otlp_signal sig;
	int pid; /* 0: no process (the script's maps of every process) */
	char container[65];
	struct pb_buf items;
	uint64_t n, since_ns;
};

struct otlp {
	struct otlp_conf conf;
	struct otlp_sender *sender;
	bool quiet;
	uint64_t rng[2]; /* xorshift128+: ids need to be unique, not secret */
	struct batch batches[MAX_BATCHES];
	uint64_t warned_ns;
};

static const char *const item_name[OTLP_NSIGNALS] = {
	[OTLP_TRACES] = "spans", [OTLP_METRICS] = "data points", [OTLP_LOGS] = "log records"};

struct otlp *otlp__new(const struct otlp_options *o, int *err)
{
	struct otlp *x = calloc(1, sizeof(*x));
	if (!x) {
		*err = -ENOMEM;
		return NULL;
	}
	x->quiet = o->quiet;
	*err = otlp_conf__read(&x->conf, o);
	if (!*err)
		*err = otlp_sender__new(&x->sender, &x->conf);
	if (*err) {
		otlp_conf__free(&x->conf);
		free(x);
		return NULL;
	}
	if (getrandom(x->rng, sizeof(x->rng), 0) != sizeof(x->rng) || !(x->rng[0] | x->rng[1]))
		x->rng[0] = now_ns() | 1, x->rng[1] = (uint64_t)getpid() << 32 | 1;
	return x;
}

static uint64_t next_rand(struct otlp *x)
{
	uint64_t a = x->rng[0], b = x->rng[1];
	x->rng[0] = b;
	a ^= a << 23;
	x->rng[1] = a ^ b ^ (a >> 17) ^ (b >> 26);
	return x->rng[1] + b;
}

void otlp__trace_id(struct otlp *x, uint8_t id[16])
{
	uint64_t hi = next_rand(x), lo = next_rand(x);
	for (int i = 0; i < 8; i++) {
		id[i] = (uint8_t)(hi >> (56 - 8 * i));
		id[8 + i] = (uint8_t)(lo >> (56 - 8 * i));
	}
	if (!(hi | lo)) /* the all-zero id is invalid */
		id[15] = 1;
}

uint64_t otlp__span_id(struct otlp *x)
{
	uint64_t v = next_rand(x);
	return v ? v : 1;
}

static void flush(struct otlp *x, struct batch *b)
{
	if (b->n) {
		struct pb_buf req = {0};
		otlp_enc_request(&req, &x->conf.resource, b->pid, b->container, &b->items);
		otlp_sender__push(x->sender, b->sig, &req, b->n);
	}
	b->items.len = 0;
	b->items.err = 0;
	b->n = 0;
}

/* The batch of (SIG, PID): its own, a free slot, or the oldest one flushed. */
static struct batch *batch_for(struct otlp *x, enum otlp_signal sig, int pid)
{
	struct batch *free_slot = NULL, *oldest = NULL;
	for (int i = 0; i < MAX_BATCHES; i++) {
		struct batch *b = &x->batches[i];
		if (b->used && b->pid == pid && b->sig == sig)
			return b;
		if (!b->used && !free_slot)
			free_slot = b;
		if (b->used && (!oldest || b->since_ns < oldest->since_ns))
			oldest = b;
	}
	struct batch *b = free_slot;
	if (!b) {
		flush(x, oldest);
		b = oldest;
	}
	b->used = true;
	b->sig = sig;
	b->pid = pid;
	if (pid <= 0 || !otlp_container_id(pid, b->container))
		b->container[0] = 0;
	return b;
}

/* Bookkeeping after an item went into B. */
static void added(struct otlp *x, struct batch *b)
{
	if (!b->n++)
		b->since_ns = now_ns();
	if (b->n >= x->conf.max_batch)
		flush(x, b);
}

void otlp__span(struct otlp *x, int pid, const struct otlp_span *s)
{
	struct batch *b = batch_for(x, OTLP_TRACES, pid);
	otlp_enc_span(&b->items, s);
	added(x, b);
}

void otlp__log(struct otlp *x, int pid, uint64_t unix_ns, const char *body, size_t len,
	       const struct otlp_kv *attrs, int nattrs)
{
	struct batch *b = batch_for(x, OTLP_LOGS, pid);
	otlp_enc_log(&b->items, unix_ns, body, len, attrs, nattrs);
	added(x, b);
}

void otlp__metric(struct otlp *x, int pid, const struct otlp_metric *m)
{
	if (m->npoints <= 0)
		return;
	struct batch *b = batch_for(x, OTLP_METRICS, pid);
	otlp_enc_metric(&b->items, m);
	b->n += (uint64_t)m->npoints - 1; /* items: data points */
	added(x, b);
}

void otlp__self_metrics(struct otlp *x, uint64_t start_unix)
{
	static const char *const signal_name[OTLP_NSIGNALS] = {
		[OTLP_TRACES] = "traces", [OTLP_METRICS] = "metrics", [OTLP_LOGS] = "logs"};
	struct otlp_counts c;
	otlp_sender__counts(x->sender, &c);
	struct otlp_kv kv[2][OTLP_NSIGNALS];
	struct otlp_point pts[2][OTLP_NSIGNALS];
	for (int s = 0; s < OTLP_NSIGNALS; s++)
		for (int k = 0; k < 2; k++) {
			kv[k][s] = OTLP_KV_STR("signal", signal_name[s]);
			pts[k][s] = (struct otlp_point){.attrs = &kv[k][s], .nattrs = 1,
							.i = (int64_t)(k ? c.dropped[s] : c.sent[s])};
		}
	for (int k = 0; k < 2; k++) {
		struct otlp_metric m = {
			.name = k ? "gotrace.otlp.dropped" : "gotrace.otlp.sent",
			.description = k ? "items the exporter gave up (queue full, rejected, unsent)"
					 : "items the backend took",
			.kind = OTLP_M_SUM, .monotonic = true, .start_unix_ns = start_unix,
			.unix_ns = now_ns() + (uint64_t)wall_off_ns(),
			.points = pts[k], .npoints = OTLP_NSIGNALS,
		};
		otlp__metric(x, 0, &m);
	}
}

uint64_t otlp__metric_interval(const struct otlp *x)
{
	return x->conf.metric_ns;
}

void otlp__tick(struct otlp *x)
{
	uint64_t now = now_ns();
	for (int i = 0; i < MAX_BATCHES; i++) {
		struct batch *b = &x->batches[i];
		if (b->n && now - b->since_ns >= x->conf.delay_ns)
			flush(x, b);
	}
	if (x->warned_ns && now - x->warned_ns < WARN_EVERY_NS)
		return;
	char why[512];
	uint64_t n = otlp_sender__new_drops(x->sender, why, sizeof(why));
	if (n) {
		diag_print(DIAG_WARNING, "otlp: %" PRIu64 " items dropped (%s)", n, why);
		x->warned_ns = now;
	}
}

void otlp__free(struct otlp *x)
{
	if (!x)
		return;
	for (int i = 0; i < MAX_BATCHES; i++) {
		flush(x, &x->batches[i]);
		pb_buf__free(&x->batches[i].items);
	}
	struct otlp_counts c;
	char why[512];
	otlp_sender__free(x->sender, &c, why, sizeof(why));
	uint64_t dropped = 0;
	struct strbuf sent = {0}, lost = {0};
	for (int s = 0; s < OTLP_NSIGNALS; s++) {
		if (c.sent[s])
			strbuf_printf(&sent, "%s%" PRIu64 " %s", sent.len ? ", " : "", c.sent[s],
				      item_name[s]);
		if (c.dropped[s])
			strbuf_printf(&lost, "%s%" PRIu64 " %s", lost.len ? ", " : "",
				      c.dropped[s], item_name[s]);
		dropped += c.dropped[s];
	}
	if (dropped)
		diag_print(DIAG_WARNING, "otlp: dropped %s (%s)", lost.buf, why);
	int first = OTLP_TRACES; /* the URL named: the first signal that sent anything */
	while (first < OTLP_NSIGNALS - 1 && !c.sent[first])
		first++;
	if (!x->quiet)
		diag_print(DIAG_INFO, "otlp: sent %s to %s", sent.len ? sent.buf : "nothing",
			   x->conf.url[c.sent[first] ? first : OTLP_TRACES]);
	strbuf_free(&sent);
	strbuf_free(&lost);
	otlp_conf__free(&x->conf);
	free(x);
}
