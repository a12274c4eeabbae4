/* otlp_send: one thread POSTs the queued requests with libcurl (Debian's libcurl: HTTP/1.1
 * keep-alive, TLS, proxies and the CA settings users expect, none of it ours to write).
 *
 * The queue is bounded in bytes: a push past the bound drops the request, counted, so the
 * event loop never blocks and memory stays bounded however long the backend is away. The
 * head request is retried while the answer is retryable (no connection, a timeout, 429,
 * 502, 503, 504: the OTLP specification's list), after a backoff that doubles from 250 ms
 * to 2 s: a backend that comes back gets data within 2 s, while a full queue drops.
 * Other answers (400, 401, 404, 413, ...) reject the request: dropped, counted, the
 * status said. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include <curl/curl.h>

#include "common/diag.h"
#include "runtime/otlp/otlp_int.h"

#define BACKOFF_MIN_NS 250000000ull
#define BACKOFF_MAX_NS 2000000000ull

struct otlp_req {
	struct otlp_req *next;
	enum otlp_signal sig;
	uint64_t items;
	struct pb_buf body;
};

struct otlp_sender {
	const struct otlp_conf *conf;
	CURL *curl;
	struct curl_slist *headers, *headers_gz; /* the second with Content-Encoding */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* under lock: */
	struct otlp_req *head, **tail;
	size_t queued_bytes;
	bool stopping;
	uint64_t deadline_ns; /* stopping: when to give up */
	struct otlp_counts counts;
	uint64_t drops_said;
	char why[512];      /* the latest reason items were dropped or a POST failed */
	char send_err[256]; /* the latest failed POST, "" once one succeeded */
};

enum post_result { POST_OK, POST_RETRY, POST_REJECT };

static size_t discard_body(char *p, size_t size, size_t n, void *ctx)
{
	(void)p, (void)ctx;
	return size * n;
}

/* gzip of IN (OTEL_EXPORTER_OTLP_COMPRESSION=gzip) into OUT; false when zlib failed. */
static bool gzip_body(const struct pb_buf *in, struct pb_buf *out)
{
	z_stream z = {0};
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY))
		return false;
	uLong bound = deflateBound(&z, (uLong)in->len);
	out->data = malloc(bound);
	out->cap = bound;
	bool ok = false;
	if (out->data) {
		z.next_in = in->data;
		z.avail_in = (uInt)in->len;
		z.next_out = out->data;
		z.avail_out = (uInt)bound;
		ok = deflate(&z, Z_FINISH) == Z_STREAM_END;
		out->len = z.total_out;
	}
	deflateEnd(&z);
	return ok;
}

/* One POST of R; WHY gets the failure. Called without the lock. */
static enum post_result post(struct otlp_sender *s, const struct otlp_req *r, long timeout_ms,
			     char *why, size_t n)
{
	struct pb_buf gz = {0};
	const struct pb_buf *body = &r->body;
	if (s->conf->gzip && gzip_body(&r->body, &gz)) /* else sent as it is */
		body = &gz;
	curl_easy_setopt(s->curl, CURLOPT_HTTPHEADER, body == &gz ? s->headers_gz : s->headers);
	curl_easy_setopt(s->curl, CURLOPT_URL, s->conf->url[r->sig]);
	curl_easy_setopt(s->curl, CURLOPT_POSTFIELDS, (const char *)body->data);
	curl_easy_setopt(s->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body->len);
	curl_easy_setopt(s->curl, CURLOPT_TIMEOUT_MS, timeout_ms > 0 ? timeout_ms : 1);
	CURLcode rc = curl_easy_perform(s->curl);
	pb_buf__free(&gz);
	if (rc != CURLE_OK) {
		snprintf(why, n, "%s: %s", s->conf->url[r->sig], curl_easy_strerror(rc));
		/* a URL or TLS setting that can never work is still retried: the backend's
		 * certificate may be replaced, and the bound keeps the cost fixed */
		return POST_RETRY;
	}
	long status = 0;
	curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status >= 200 && status < 300)
		return POST_OK;
	snprintf(why, n, "%s: HTTP %ld", s->conf->url[r->sig], status);
	if (status == 429 || status == 502 || status == 503 || status == 504)
		return POST_RETRY;
	return POST_REJECT;
}

/* R, popped, freed: sent or dropped */
static void release_locked(struct otlp_sender *s, struct otlp_req *r)
{
	s->queued_bytes -= r->body.len;
	pb_buf__free(&r->body);
	free(r);
}

static void drop_locked(struct otlp_sender *s, struct otlp_req *r)
{
	s->counts.dropped[r->sig] += r->items;
	release_locked(s, r);
}

static struct otlp_req *pop_locked(struct otlp_sender *s)
{
	struct otlp_req *r = s->head;
	s->head = r->next;
	if (!s->head)
		s->tail = &s->head;
	return r;
}

static void wait_until(struct otlp_sender *s, uint64_t mono_ns)
{
	struct timespec ts = {(time_t)(mono_ns / 1000000000), (long)(mono_ns % 1000000000)};
	pthread_cond_timedwait(&s->cond, &s->lock, &ts);
}

static void *sender_main(void *arg)
{
	struct otlp_sender *s = arg;
	uint64_t backoff = BACKOFF_MIN_NS;
	char why[256];
	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (!s->head && !s->stopping)
			pthread_cond_wait(&s->cond, &s->lock);
		if (!s->head)
			break;
		struct otlp_req *r = s->head;
		long timeout = s->conf->timeout_ms;
		if (s->stopping) {
			uint64_t now = now_ns();
			if (now >= s->deadline_ns)
				goto give_up;
			if ((s->deadline_ns - now) / 1000000 < (uint64_t)timeout)
				timeout = (long)((s->deadline_ns - now) / 1000000);
		}
		pthread_mutex_unlock(&s->lock);
		/* R stays the head: only this thread pops */
		enum post_result res = post(s, r, timeout, why, sizeof(why));
		pthread_mutex_lock(&s->lock);
		s->counts.requests++;
		if (res == POST_OK) {
			s->counts.sent[r->sig] += r->items;
			release_locked(s, pop_locked(s));
			backoff = BACKOFF_MIN_NS;
			s->send_err[0] = 0;
			continue;
		}
		snprintf(s->why, sizeof(s->why), "%s", why);
		snprintf(s->send_err, sizeof(s->send_err), "%s", why);
		if (res == POST_REJECT) {
			drop_locked(s, pop_locked(s));
			continue;
		}
		s->counts.retries++;
		uint64_t until = now_ns() + backoff;
		if (s->stopping && until >= s->deadline_ns)
			goto give_up;
		while (!s->stopping && now_ns() < until)
			wait_until(s, until);
		backoff = backoff * 2 > BACKOFF_MAX_NS ? BACKOFF_MAX_NS : backoff * 2;
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
give_up: /* stopping, the backend still away: the rest is dropped, counted */
	while (s->head)
		drop_locked(s, pop_locked(s));
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

static void init_curl(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

int otlp_sender__new(struct otlp_sender **out, const struct otlp_conf *conf)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	struct otlp_sender *s = calloc(1, sizeof(*s));
	int err = -ENOMEM;
	if (!s)
		return err;
	s->conf = conf;
	s->tail = &s->head;
	pthread_once(&once, init_curl);
	s->curl = curl_easy_init();
	if (!s->curl) {
		diag_fatal("otlp: libcurl could not start");
		err = -EIO;
		goto fail;
	}
	s->headers_gz = curl_slist_append(NULL, "Content-Encoding: gzip");
	for (int k = 0; k < 2; k++) {
		struct curl_slist **l = k ? &s->headers_gz : &s->headers;
		*l = curl_slist_append(*l, "Content-Type: application/x-protobuf");
		*l = curl_slist_append(*l, "Expect:"); /* no 100-continue round trip */
		for (int i = 0; i < conf->headers.n; i++)
			*l = curl_slist_append(*l, conf->headers.v[i]);
	}
	curl_easy_setopt(s->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(s->curl, CURLOPT_WRITEFUNCTION, discard_body);
	curl_easy_setopt(s->curl, CURLOPT_USERAGENT, "gotrace/" GT_VERSION);
	curl_easy_setopt(s->curl, CURLOPT_CONNECTTIMEOUT_MS, 2000L);
	if (conf->ca_file)
		curl_easy_setopt(s->curl, CURLOPT_CAINFO, conf->ca_file);
	if (conf->cert_file)
		curl_easy_setopt(s->curl, CURLOPT_SSLCERT, conf->cert_file);
	if (conf->key_file)
		curl_easy_setopt(s->curl, CURLOPT_SSLKEY, conf->key_file);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* now_ns()'s clock */
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&s->lock, NULL);
	err = -pthread_create(&s->thread, NULL, sender_main, s);
	if (err) {
		diag_fatal("otlp: no sender thread: %s", strerror(-err));
		pthread_cond_destroy(&s->cond);
		pthread_mutex_destroy(&s->lock);
		goto fail;
	}
	*out = s;
	return 0;
fail:
	curl_slist_free_all(s->headers);
	curl_slist_free_all(s->headers_gz);
	if (s->curl)
		curl_easy_cleanup(s->curl);
	free(s);
	return err;
}

void otlp_sender__push(struct otlp_sender *s, enum otlp_signal sig, struct pb_buf *body,
		       uint64_t items)
{
	struct otlp_req *r = calloc(1, sizeof(*r));
	pthread_mutex_lock(&s->lock);
	if (!r || body->err || s->queued_bytes + body->len > s->conf->queue_bytes) {
		s->counts.dropped[sig] += items;
		if (body->err)
			snprintf(s->why, sizeof(s->why), "out of memory");
		else /* with why the queue is not draining */
			snprintf(s->why, sizeof(s->why), "the export queue is full%s%s",
				 s->send_err[0] ? "; the backend: " : " (the backend is slower than "
				 "the events)", s->send_err);
		pthread_mutex_unlock(&s->lock);
		free(r);
		pb_buf__free(body);
		return;
	}
	r->sig = sig;
	r->items = items;
	r->body = *body;
	*body = (struct pb_buf){0};
	*s->tail = r;
	s->tail = &r->next;
	s->queued_bytes += r->body.len;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

uint64_t otlp_sender__new_drops(struct otlp_sender *s, char *why, size_t n)
{
	pthread_mutex_lock(&s->lock);
	uint64_t all = 0;
	for (int i = 0; i < OTLP_NSIGNALS; i++)
		all += s->counts.dropped[i];
	uint64_t fresh = all - s->drops_said;
	s->drops_said = all;
	snprintf(why, n, "%s", s->why);
	pthread_mutex_unlock(&s->lock);
	return fresh;
}

void otlp_sender__counts(struct otlp_sender *s, struct otlp_counts *out)
{
	pthread_mutex_lock(&s->lock);
	*out = s->counts;
	pthread_mutex_unlock(&s->lock);
}

void otlp_sender__free(struct otlp_sender *s, struct otlp_counts *counts, char *why, size_t n)
{
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	s->deadline_ns = now_ns() + (uint64_t)s->conf->timeout_ms * 1000000;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	*counts = s->counts;
	snprintf(why, n, "%s", s->why);
	curl_slist_free_all(s->headers);
	curl_slist_free_all(s->headers_gz);
	curl_easy_cleanup(s->curl);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
