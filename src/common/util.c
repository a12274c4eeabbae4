#include "common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>

#include "common/diag.h"

static void oom(void)
{
	diag_print(DIAG_ERROR, "out of memory");
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom();
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p = NULL;
	va_start(ap, fmt);
	int n = vasprintf(&p, fmt, ap);
	va_end(ap);
	if (n < 0)
		oom();
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		oom();
	return p;
}

static void strbuf_grow(struct strbuf *sb, size_t extra)
{
	if (sb->len + extra + 1 <= sb->cap)
		return;
	size_t cap = sb->cap ? sb->cap : 64;
	while (cap < sb->len + extra + 1)
		cap *= 2;
	sb->buf = xrealloc(sb->buf, cap);
	sb->cap = cap;
}

void strbuf_putn(struct strbuf *sb, const char *s, size_t n)
{
	strbuf_grow(sb, n);
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = 0;
}

void strbuf_putc(struct strbuf *sb, char c)
{
	strbuf_putn(sb, &c, 1);
}

void strbuf_puts(struct strbuf *sb, const char *s)
{
	strbuf_putn(sb, s, strlen(s));
}

void strbuf_vprintf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return;
	strbuf_grow(sb, (size_t)n);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void strbuf_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strbuf_vprintf(sb, fmt, ap);
	va_end(ap);
}

void strbuf_free(struct strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
}

int strbuf_read(struct strbuf *sb, FILE *f, size_t max)
{
	char buf[8192];
	size_t n, got = 0;
	while (got <= max && (n = fread(buf, 1, sizeof(buf), f)) > 0) {
		strbuf_putn(sb, buf, n);
		got += n;
	}
	return ferror(f) ? -EIO : got > max ? -EFBIG : 0;
}

/* Length of the valid UTF-8 sequence at S[0..N) (RFC 3629: no overlong forms,
 * surrogates or code points past U+10FFFF), 0 when there is none. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf; /* bounds of the second byte */
	size_t len = 0;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	if (!len || len > n)
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	for (size_t k = 1; k < len; k++, lo = 0x80, hi = 0xbf)
		if (s[k] < lo || s[k] > hi)
			return 0;
	return len;
}

void strbuf_json_escape(struct strbuf *sb, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = p[i];
		size_t len;
		switch (c) {
		case '"':
			strbuf_puts(sb, "\\\"");
			continue;
		case '\\':
			strbuf_puts(sb, "\\\\");
			continue;
		case '\n':
			strbuf_puts(sb, "\\n");
			continue;
		case '\r':
			strbuf_puts(sb, "\\r");
			continue;
		case '\t':
			strbuf_puts(sb, "\\t");
			continue;
		}
		if (c < 0x20) { /* \b and \f too: bpftrace writes \u0008 and \u000c */
			strbuf_printf(sb, "\\u%04x", c);
		} else if (c < 0x80) { /* 0x7f included: JSON allows it */
			strbuf_putc(sb, (char)c);
		} else if ((len = utf8_len(p + i, n - i)) != 0) {
			strbuf_putn(sb, s + i, len);
			i += len - 1;
		} else { /* bpftrace's \uffffffXX would read as U+FFFF and "ffXX" */
			strbuf_printf(sb, "\\u%04x", c);
		}
	}
}

void strbuf_json_string(struct strbuf *sb, const char *s, size_t n)
{
	strbuf_putc(sb, '"');
	strbuf_json_escape(sb, s, n);
	strbuf_putc(sb, '"');
}

/* The ']' of [SET] at P when SET has none of Go's name characters ". ,[*?", else NULL. */
static const char *class_end(const char *p)
{
	if (*p != '[')
		return NULL;
	const char *end = strchr(p + 1, ']');
	if (!end || end == p + 1)
		return NULL;
	for (const char *q = p + 1; q < end; q++)
		if (strchr("., [*?", *q))
			return NULL; /* Go's generic instances: F[...], F[go.shape.int] */
	return end;
}

const char *glob_class_end(const char *start, const char *p)
{
	const char *end = class_end(p);
	if (!end)
		return NULL;
	/* inside a Go bracket, every bracket is Go's */
	int depth = 0;
	for (const char *q = start; q < p; q++) {
		const char *e = depth ? NULL : class_end(q);
		if (e)
			q = e;
		else if (*q == '[')
			depth++;
		else if (*q == ']' && depth)
			depth--;
	}
	return depth ? NULL : end;
}

/* glob_class_end(PAT, PAT + i) for every i, in one pass: ENDS[i] (NULL where none) */
static void class_ends(const char *pat, const char **ends)
{
	int depth = 0;
	for (const char *q = pat; *q; q++) {
		const char *e = depth ? NULL : class_end(q);
		ends[q - pat] = e;
		if (e) {
			for (const char *r = q + 1; r <= e; r++)
				ends[r - pat] = NULL;
			q = e;
		} else if (*q == '[') {
			depth++;
		} else if (*q == ']' && depth) {
			depth--;
		}
	}
}

/* a '*', a '?' or a class; GO: not the '*' of a method's receiver "(*T)" */
static bool wildcard(const char *s, bool go)
{
	for (const char *p = s; *p; p++)
		if (*p == '?' || (*p == '*' && (!go || p == s || p[-1] != '(')) ||
		    glob_class_end(s, p))
			return true;
	return false;
}

bool has_glob(const char *s)
{
	return wildcard(s, false);
}

bool glob_go_wildcard(const char *name)
{
	return wildcard(name, true);
}

/* Whether C is in the class [SET] (SET from set to end): ranges a-z, ! or ^ negates. */
static bool in_class(const char *set, const char *end, char c)
{
	bool neg = *set == '!' || *set == '^';
	bool in = false;
	for (const char *q = set + neg; q < end; q++) {
		if (q + 2 < end && q[1] == '-') {
			in |= c >= q[0] && c <= q[2];
			q += 2;
		} else {
			in |= c == *q;
		}
	}
	return in != neg;
}

bool glob_match(const char *pat, const char *s)
{
	const char *star = NULL, *resume = NULL, *start = pat;
	const char *few[128], **ends = NULL;
	if (strchr(pat, '[')) { /* the classes, found once (Go's brackets are not classes) */
		size_t n = strlen(pat);
		ends = n < ARRAY_SIZE(few) ? few : xmalloc((n + 1) * sizeof(*ends));
		class_ends(pat, ends);
		ends[n] = NULL; /* at the pattern's end too */
	}
	bool match = true;
	while (*s && match) {
		const char *cls = ends ? ends[pat - start] : NULL;
		if (cls && in_class(pat + 1, cls, *s)) {
			pat = cls + 1;
			s++;
		} else if (!cls && (*pat == '?' || *pat == *s)) {
			pat++;
			s++;
		} else if (*pat == '*') {
			star = pat++;
			resume = s;
		} else if (star) {
			pat = star + 1;
			s = ++resume;
		} else {
			match = false;
		}
	}
	if (ends && ends != few)
		free(ends);
	while (match && *pat == '*')
		pat++;
	return match && *pat == 0;
}

bool glob_match_any(const char *const *pats, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (glob_match(pats[i], s))
			return true;
	return false;
}

int edit_distance(const char *a, const char *b, int cap)
{
	size_t la = strlen(a), lb = strlen(b);
	if ((la > lb ? la - lb : lb - la) > (size_t)cap)
		return cap + 1;
	int *row = xmalloc((lb + 1) * sizeof(int));
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int prev = row[0], best;
		row[0] = (int)i;
		best = row[0];
		for (size_t j = 1; j <= lb; j++) {
			int cur = row[j];
			int sub = prev + (a[i - 1] != b[j - 1]);
			int del = row[j] + 1, ins = row[j - 1] + 1;
			row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
			prev = cur;
			if (row[j] < best)
				best = row[j];
		}
		if (best > cap) {
			free(row);
			return cap + 1;
		}
	}
	int d = row[lb];
	free(row);
	return d > cap ? cap + 1 : d;
}

uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int64_t wall_off_ns(void)
{
	struct timespec rt, mono;
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	return ((int64_t)rt.tv_sec - (int64_t)mono.tv_sec) * 1000000000 +
	       ((int64_t)rt.tv_nsec - (int64_t)mono.tv_nsec);
}

/* The script's config block: a few settings, so a short list */
static struct {
	const char *name, *value;
} config[32];
static int nconfig;

void gt_config_set(const char *name, const char *value)
{
	for (int i = 0; i < nconfig; i++) {
		if (!strcmp(config[i].name, name)) {
			config[i].value = value;
			return;
		}
	}
	if (nconfig < (int)ARRAY_SIZE(config))
		config[nconfig++] = (typeof(config[0])){name, value};
}

void gt_config_reset(void)
{
	nconfig = 0;
}

const char *gt_getenv(const char *name)
{
	char buf[128];
	snprintf(buf, sizeof(buf), "GT_%s", name);
	const char *v = getenv(buf);
	if (v)
		return v;
	snprintf(buf, sizeof(buf), "BPFTRACE_%s", name);
	if ((v = getenv(buf)))
		return v;
	for (int i = 0; i < nconfig; i++)
		if (!strcmp(config[i].name, name))
			return config[i].value;
	return NULL;
}

uint32_t str_hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

bool env_flag(const char *name)
{
	const char *v = getenv(name);
	return v && *v && strcmp(v, "0");
}

const char *tracefs_root(bool mount_it)
{
	static const char *const dirs[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		char probe[256];
		snprintf(probe, sizeof(probe), "%s/events", dirs[i]);
		if (access(probe, R_OK) == 0)
			return dirs[i];
	}
	/* tracefs is not always mounted on this machine kind: mount it like bpftrace users do */
	if (mount_it && mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0 &&
	    access("/sys/kernel/tracing/events", R_OK) == 0)
		return "/sys/kernel/tracing";
	return NULL;
}

void sort_runs(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	char *a = base;
	if (n < 2)
		return;
	/* the runs' starts, and n after the last */
	size_t *run = xmalloc(sizeof(*run) * (n + 1)), nrun = 0;
	run[nrun++] = 0;
	for (size_t i = 1; i < n; i++)
		if (cmp(a + (i - 1) * size, a + i * size) > 0)
			run[nrun++] = i;
	run[nrun] = n;
	char *tmp = nrun > 1 ? xmalloc(n * size) : NULL;
	while (nrun > 1) {
		size_t m = 0;
		for (size_t r = 0; r < nrun; r += 2) {
			size_t lo = run[r], mid = run[r + 1], hi = r + 2 <= nrun ? run[r + 2] : n;
			if (r + 1 < nrun) { /* merge [lo, mid) and [mid, hi) into tmp, back */
				size_t i = lo, j = mid, k = 0;
				while (i < mid && j < hi) {
					size_t from = cmp(a + j * size, a + i * size) < 0 ? j++ : i++;
					memcpy(tmp + k++ * size, a + from * size, size);
				}
				memcpy(tmp + k * size, a + i * size, (mid - i) * size);
				k += mid - i;
				memcpy(tmp + k * size, a + j * size, (hi - j) * size);
				k += hi - j;
				memcpy(a + lo * size, tmp, k * size);
			}
			run[m++] = lo;
		}
		run[m] = n;
		nrun = m;
	}
	free(tmp);
	free(run);
}
