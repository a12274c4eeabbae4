/* value_go: a Go value captured by print() (PLAN_ARG_GO), printed in the shape of Go's
 * fmt %+v: {X:1 Y:2 Name:origin}, &{...} for a pointer at the top, [1 2 3], true,
 * <nil>; an interface as its dynamic value where the capture holds it (integers,
 * strings, errors.New's text), else (T)(0xADDR); a map as map[k:v ...] in the order of
 * Go's internal/fmtsort, " ..." after the entries copied when the map has more. */
#include "runtime/output/output.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/util.h"

static uint64_t narrow(uint64_t v, int size, bool is_signed)
{
	int sh = size > 0 && size < 8 ? 64 - 8 * size : 0;
	if (!sh)
		return v;
	return is_signed ? (uint64_t)((int64_t)(v << sh) >> sh) : (v << sh) >> sh;
}

/* Go's %v of a float: the shortest digits that read back the same, in %e form only
 * for exponents below -4 or from 21 on. */
static void put_float(struct strbuf *sb, double d)
{
	if (isnan(d) || isinf(d)) {
		strbuf_puts(sb, isnan(d) ? "NaN" : d > 0 ? "+Inf" : "-Inf");
		return;
	}
	char e[40];
	int prec = 0;
	for (prec = 0; prec < 17; prec++) {
		snprintf(e, sizeof(e), "%.*e", prec, d);
		if (strtod(e, NULL) == d)
			break;
	}
	int exp = atoi(strchr(e, 'e') + 1);
	if (exp < -4 || exp >= 21) {
		char *x = strchr(e, 'e');
		*x = 0;
		strbuf_printf(sb, "%se%c%02d", e, exp < 0 ? '-' : '+', abs(exp));
		return;
	}
	char f[400];
	snprintf(f, sizeof(f), "%.*f", prec - exp > 0 ? prec - exp : 0, d);
	strbuf_puts(sb, f);
}

/* N's last DIGITS decimal digits as Go's Duration.String writes a fraction: ".25",
 * nothing when they are all 0. */
static void put_frac(struct strbuf *sb, uint64_t n, int digits)
{
	char d[20];
	int len = 0;
	for (int i = digits - 1; i >= 0; i--, n /= 10)
		d[i] = (char)('0' + n % 10);
	for (len = digits; len > 0 && d[len - 1] == '0'; len--)
		;
	if (len)
		strbuf_printf(sb, ".%.*s", len, d);
}

/* time.Duration's String(): 1m30.25s, 1.5ms, -1ns, 0s. */
static void put_duration(struct strbuf *sb, int64_t d)
{
	uint64_t u = d < 0 ? -(uint64_t)d : (uint64_t)d;
	const char *sign = d < 0 ? "-" : "";
	if (u == 0) {
		strbuf_puts(sb, "0s");
	} else if (u < 1000) {
		strbuf_printf(sb, "%s%" PRIu64 "ns", sign, u);
	} else if (u < 1000000000) {
		int prec = u < 1000000 ? 3 : 6;
		uint64_t div = prec == 3 ? 1000 : 1000000;
		strbuf_printf(sb, "%s%" PRIu64, sign, u / div);
		put_frac(sb, u % div, prec);
		strbuf_puts(sb, prec == 3 ? "\xc2\xb5s" : "ms"); /* µs */
	} else {
		uint64_t sec = u / 1000000000, h = sec / 3600, m = sec / 60 % 60;
		strbuf_puts(sb, sign);
		if (h)
			strbuf_printf(sb, "%" PRIu64 "h", h);
		if (h || m)
			strbuf_printf(sb, "%" PRIu64 "m", m);
		strbuf_printf(sb, "%" PRIu64, sec % 60);
		put_frac(sb, u % 1000000000, 9);
		strbuf_putc(sb, 's');
	}
}

/* net.IP's String(): <nil>, a.b.c.d for 4 bytes or an IPv4-in-IPv6 address, RFC 5952
 * for 16, ? and the bytes in hex for other lengths. */
static void put_ip(struct strbuf *sb, const uint8_t *b, int64_t len)
{
	static const uint8_t v4in6[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	if (len == 0) {
		strbuf_puts(sb, "<nil>");
		return;
	}
	if (len == 16 && !memcmp(b, v4in6, 12)) {
		b += 12;
		len = 4;
	}
	if (len == 4) {
		strbuf_printf(sb, "%u.%u.%u.%u", b[0], b[1], b[2], b[3]);
		return;
	}
	if (len != 16) {
		strbuf_putc(sb, '?');
		for (int64_t i = 0; i < len; i++)
			strbuf_printf(sb, "%02x", b[i]);
		return;
	}
	/* the longest run of two or more zero groups, the first of equals, is "::" */
	int best = -1, bestn = 1;
	for (int i = 0; i < 8;) {
		int j = i;
		while (j < 8 && !b[2 * j] && !b[2 * j + 1])
			j++;
		if (j - i > bestn) {
			best = i;
			bestn = j - i;
		}
		i = j > i ? j : i + 1;
	}
	for (int i = 0; i < 8; i++) {
		if (i == best) {
			strbuf_puts(sb, "::");
			i += bestn - 1;
			continue;
		}
		strbuf_printf(sb, "%s%x", i && i != best + bestn ? ":" : "",
			      (unsigned)(b[2 * i] << 8 | b[2 * i + 1]));
	}
}

/* time.Time's String(): "2009-11-10 23:00:00.000000005 +0100 CET m=+0.001234567",
 * from the capture of sema_gocap's time_show: wall, ext, loc -> &{name, cacheStart,
 * cacheEnd, cacheZone -> &{name, offset}}. The zone is the one Go cached in the
 * Location (nil: UTC); time.Local before the program used it: this machine's zone;
 * another time out of the cache is printed in UTC, named so. */
static void put_time(struct strbuf *sb, const struct plan_arg *a, const uint8_t *p)
{
	const struct plan_arg *f = a->fields;
	uint64_t wall = rt_rd64(p + f[0].offset);
	int64_t ext = (int64_t)rt_rd64(p + f[1].offset);
	bool mono = wall >> 63;
	/* seconds since January 1 of year 1; the wall clock's from 1885 when monotonic */
	int64_t sec = mono ? 59453308800 + (int64_t)((wall << 1) >> 31) : ext;
	int64_t unix_sec = sec - 62135596800, off = 0;
	const char *zname = "UTC";
	int64_t zlen = 3;
	const uint8_t *loc = p + f[2].offset;
	if (rt_rd64(loc)) {
		const struct plan_arg *l = f[2].fields[0].fields;
		const uint8_t *lb = loc + f[2].fields[0].offset;
		const uint8_t *zp = lb + l[3].offset;
		int64_t start = (int64_t)rt_rd64(lb + l[1].offset);
		int64_t end = (int64_t)rt_rd64(lb + l[2].offset);
		if (rt_rd64(zp) && start <= unix_sec && unix_sec < end) {
			const struct plan_arg *z = l[3].fields[0].fields;
			const uint8_t *zb = zp + l[3].fields[0].offset;
			zname = (const char *)zb + z[0].offset + 8;
			zlen = (int64_t)rt_rd64(zb + z[0].offset);
			if (zlen > z[0].size - 9)
				zlen = z[0].size - 9;
			off = (int64_t)rt_rd64(zb + z[1].offset);
		} else if (rt_rd64(lb + l[0].offset) == 0 ||
			   (rt_rd64(lb + l[0].offset) == 5 && !memcmp(lb + l[0].offset + 8, "Local", 5))) {
			/* time.Local, not read by the program yet (Go fills it at its first
			 * use): the zone of this machine, as the program would find it */
			time_t u = (time_t)unix_sec;
			struct tm lt;
			if (localtime_r(&u, &lt)) {
				off = lt.tm_gmtoff;
				zname = lt.tm_zone ? lt.tm_zone : "";
				zlen = (int64_t)strlen(zname);
			}
		} else if (rt_rd64(lb + l[0].offset) != 3 ||
			   memcmp(lb + l[0].offset + 8, "UTC", 3)) {
			zname = "UTC (zone not cached)";
			zlen = (int64_t)strlen(zname);
		}
	}
	time_t t = (time_t)(unix_sec + off);
	struct tm tm;
	if (!gmtime_r(&t, &tm)) {
		strbuf_printf(sb, "?(%" PRId64 "s)", unix_sec);
		return;
	}
	strbuf_printf(sb, "%04lld-%02d-%02d %02d:%02d:%02d", (long long)tm.tm_year + 1900,
		      tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
	put_frac(sb, wall & ((1u << 30) - 1), 9);
	int64_t m = off < 0 ? -off / 60 : off / 60;
	strbuf_printf(sb, " %c%02" PRId64 "%02" PRId64 " %.*s", off < 0 ? '-' : '+', m / 60, m % 60,
		      (int)(zlen > 0 ? zlen : 0), zname);
	if (mono) {
		uint64_t u = ext < 0 ? -(uint64_t)ext : (uint64_t)ext;
		strbuf_printf(sb, " m=%c%" PRIu64 ".%09" PRIu64, ext < 0 ? '-' : '+', u / 1000000000,
			      u % 1000000000);
	}
}

static const struct plan_gotype *gotype_at(const struct gt_plan *plan, uint64_t addr)
{
	int lo = 0, hi = plan->ngotypes - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		const struct plan_gotype *t = &plan->gotypes[mid];
		if (t->addr == addr)
			return t;
		if (t->addr < addr)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

static void put_text(struct strbuf *sb, const uint8_t *p, int64_t len, int cap)
{
	if (len < 0)
		len = 0;
	if (len > cap - 1)
		len = cap - 1;
	strbuf_putn(sb, (const char *)p, len > 0 ? (size_t)len : 0);
}

static int cmp_u(uint64_t x, uint64_t y)
{
	return x < y ? -1 : x > y;
}

/* Go's Errno.Error(): the C library's text with its first letter lowered (as Go's
 * table is generated from it), "errno N" for a number it has no text for. */
static void put_errno(struct strbuf *sb, uint64_t e)
{
	const char *s = e < 4096 ? strerrordesc_np((int)e) : NULL;
	if (!s) {
		strbuf_printf(sb, "errno %" PRIu64, e);
		return;
	}
	if (s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'a' && s[1] <= 'z') {
		strbuf_putc(sb, (char)(s[0] - 'A' + 'a'));
		s++;
	}
	strbuf_puts(sb, s);
}

/* An interface's value from the capture at P (type, data, the two words at data, the
 * text of A->go_stride bytes they may be), as %v shows it. */
static void put_iface(struct strbuf *sb, const struct gt_plan *plan, const struct plan_arg *a,
		      const uint8_t *p)
{
	uint64_t v = rt_rd64(p), data = rt_rd64(p + 8), h0 = rt_rd64(p + 16), h1 = rt_rd64(p + 24);
	const struct plan_gotype *t = v ? gotype_at(plan, v) : NULL;
	if (!v) {
		strbuf_puts(sb, "<nil>");
		return;
	}
	switch (t ? t->show : PGS_OTHER) {
	case PGS_INT:
	case PGS_UINT:
		strbuf_printf(sb, t->show == PGS_INT ? "%" PRId64 : "%" PRIu64,
			      narrow(h0, t->size, t->show == PGS_INT));
		break;
	case PGS_BOOL:
		strbuf_puts(sb, h0 & 0xff ? "true" : "false");
		break;
	case PGS_CONST: /* one text per type: a key of one per type prints it too */
		strbuf_puts(sb, t->text);
		break;
	case PGS_ERRNO:
		put_errno(sb, h0);
		break;
	case PGS_STR:
	case PGS_PSTR:
		if (data) {
			put_text(sb, p + 32, (int64_t)h1, a->go_stride);
			break;
		}
		/* a nil *T in the interface */
		__attribute__((fallthrough));
	default:
		if (a->go_key && t) /* the address is not kept: one key per type */
			strbuf_printf(sb, "(%s)%s", t->name, data ? "" : "(nil)");
		else if (a->go_key)
			strbuf_printf(sb, "(0x%" PRIx64 ")%s", v, data ? "" : "(nil)");
		else if (t)
			strbuf_printf(sb, "(%s)(0x%" PRIx64 ")", t->name, data);
		else
			strbuf_printf(sb, "(0x%" PRIx64 ")(0x%" PRIx64 ")", v, data);
		break;
	}
}

/* strconv.Quote's form of the N bytes at S, for the ASCII a URL holds (other bytes as
 * they are). */
static void put_quoted(struct strbuf *sb, const uint8_t *s, int64_t n)
{
	static const char esc[] = "\\a\\b\\t\\n\\v\\f\\r";
	strbuf_putc(sb, '"');
	for (int64_t i = 0; i < n; i++) {
		uint8_t c = s[i];
		if (c == '"' || c == '\\')
			strbuf_printf(sb, "\\%c", c);
		else if (c >= 7 && c <= 13)
			strbuf_putn(sb, esc + 2 * (c - 7), 2);
		else if (c < 0x20 || c == 0x7f)
			strbuf_printf(sb, "\\x%02x", c);
		else
			strbuf_putc(sb, (char)c);
	}
	strbuf_putc(sb, '"');
}

/* A net.Addr captured at P (PLAN_ERR_ADDR bytes) as its String(): "IP:port", IPv6 in
 * brackets; "?" for a type gotrace does not read. */
static void put_netaddr(struct strbuf *sb, const struct gt_plan *plan, const uint8_t *p)
{
	const struct plan_gotype *t = gotype_at(plan, rt_rd64(p));
	int64_t len = (int64_t)rt_rd64(p + 8);
	if (!t || t->show != PGS_NETADDR) {
		strbuf_putc(sb, '?');
		return;
	}
	struct strbuf ip = {0};
	if (len == 4 || len == 16)
		put_ip(&ip, p + 16, len);
	bool port = t->off[PGO_PORT] >= 0, v6 = ip.buf && strchr(ip.buf, ':');
	if (port && v6)
		strbuf_printf(sb, "[%s]", ip.buf);
	else
		strbuf_puts(sb, ip.buf ? ip.buf : "");
	if (port)
		strbuf_printf(sb, ":%" PRId64, (int64_t)rt_rd64(p + 32));
	strbuf_free(&ip);
}

/* Level L of an error's capture (plan_err_level's layout) as its Error() reads: a
 * wrapper's fields, then the error it wraps; any other error as put_iface shows it. */
static void put_error(struct strbuf *sb, const struct gt_plan *plan, const struct plan_arg *a,
		      const uint8_t *base, int l)
{
	int tx = a->go_stride;
	const uint8_t *p = base + l * plan_err_level(tx);
	uint64_t v = rt_rd64(p), data = rt_rd64(p + 8);
	const struct plan_gotype *t = v ? gotype_at(plan, v) : NULL;
	if (!t || t->show != PGS_CHAIN || !data) {
		put_iface(sb, plan, a, p);
		return;
	}
	if (t->chain == PGC_EMBED) { /* Error() is the embedded error's */
		if (l + 1 < a->go_chain)
			put_error(sb, plan, a, base, l + 1);
		else
			strbuf_puts(sb, "...");
		return;
	}
	const uint8_t *s[3], *src = p + plan_err_addr(tx, 0), *addr = p + plan_err_addr(tx, 1);
	int64_t n[3];
	for (int k = 0; k < 3; k++) {
		s[k] = p + plan_err_text(tx, k);
		n[k] = (int64_t)rt_rd64(s[k] - 8);
	}
	if (t->chain == PGC_DNS) { /* its Err is a string: the end of the chain */
		strbuf_puts(sb, "lookup ");
		put_text(sb, s[1], n[1], tx);
		if (n[2] > 0) {
			strbuf_puts(sb, " on ");
			put_text(sb, s[2], n[2], tx);
		}
		strbuf_puts(sb, ": ");
		put_text(sb, s[0], n[0], tx);
		return;
	}
	put_text(sb, s[0], n[0], tx);
	switch (t->chain) {
	case PGC_PATH:
		strbuf_putc(sb, ' ');
		put_text(sb, s[1], n[1], tx);
		break;
	case PGC_URL:
		strbuf_putc(sb, ' ');
		put_quoted(sb, s[1], n[1] < tx ? n[1] : tx - 1);
		break;
	case PGC_OP:
		if (n[1] > 0) {
			strbuf_putc(sb, ' ');
			put_text(sb, s[1], n[1], tx);
		}
		if (rt_rd64(src)) {
			strbuf_putc(sb, ' ');
			put_netaddr(sb, plan, src);
		}
		if (rt_rd64(addr)) {
			strbuf_puts(sb, rt_rd64(src) ? "->" : " ");
			put_netaddr(sb, plan, addr);
		}
		break;
	default:
		break;
	}
	strbuf_puts(sb, ": ");
	if (l + 1 < a->go_chain)
		put_error(sb, plan, a, base, l + 1);
	else
		strbuf_puts(sb, "...");
}

/* fmtsort's order of two captured values of part A (X and Y: their parents' starts):
 * numbers by value (NaN first), strings bytewise, false before true, pointers by
 * address, structs and arrays part by part, nil interfaces first. */
static int go_cmp(const struct plan_arg *a, const uint8_t *x, const uint8_t *y)
{
	const uint8_t *p = x + a->offset, *q = y + a->offset;
	uint64_t u = a->go == PG_NOREAD ? 0 : rt_rd64(p), v = a->go == PG_NOREAD ? 0 : rt_rd64(q);
	switch (a->go) {
	case PG_INT: {
		int64_t i = (int64_t)narrow(u, a->go_size, true), j = (int64_t)narrow(v, a->go_size, true);
		return i < j ? -1 : i > j;
	}
	case PG_UINT:
		return cmp_u(narrow(u, a->go_size, false), narrow(v, a->go_size, false));
	case PG_BOOL:
		return cmp_u(u & 0xff, v & 0xff);
	case PG_FLOAT: {
		double d, e;
		if (a->go_size == 4) {
			float f, g;
			uint32_t w = (uint32_t)u, z = (uint32_t)v;
			memcpy(&f, &w, sizeof(f));
			memcpy(&g, &z, sizeof(g));
			d = f;
			e = g;
		} else {
			memcpy(&d, &u, sizeof(d));
			memcpy(&e, &v, sizeof(e));
		}
		if (isnan(d) || isnan(e))
			return isnan(d) && !isnan(e) ? -1 : !isnan(d) && isnan(e);
		return d < e ? -1 : d > e;
	}
	case PG_PTR:
	case PG_ADDR:
	case PG_MAP:
		return cmp_u(u, v);
	case PG_STRING: {
		int64_t m = a->size - 9;
		int64_t lu = (int64_t)u < 0 ? 0 : (int64_t)u > m ? m : (int64_t)u;
		int64_t lv = (int64_t)v < 0 ? 0 : (int64_t)v > m ? m : (int64_t)v;
		int c = memcmp(p + 8, q + 8, (size_t)(lu < lv ? lu : lv));
		return c ? (c < 0 ? -1 : 1) : lu < lv ? -1 : lu > lv;
	}
	case PG_STRUCT:
		for (int i = 0; i < a->nfields; i++) {
			int c = go_cmp(&a->fields[i], p, q);
			if (c)
				return c;
		}
		return 0;
	case PG_ARRAY:
		for (int i = 0; i < a->go_max; i++) {
			int c = go_cmp(&a->fields[0], p + i * a->fields[0].size, q + i * a->fields[0].size);
			if (c)
				return c;
		}
		return 0;
	case PG_IFACE: /* nil first, then by type, then by the words the capture holds */
		if (!u || !v)
			return cmp_u(u != 0, v != 0);
		if (u != v)
			return cmp_u(u, v);
		return cmp_u(rt_rd64(p + 16), rt_rd64(q + 16)) ?: cmp_u(rt_rd64(p + 24), rt_rd64(q + 24));
	case PG_NOREAD:
	case PG_SLICE:
		break;
	}
	return 0;
}

static void go_format(struct strbuf *sb, const struct gt_plan *plan, const struct plan_arg *a,
		      const uint8_t *base);

/* map[k:v k:v]: the entries copied, sorted as fmt sorts them. */
static void put_map(struct strbuf *sb, const struct gt_plan *plan, const struct plan_arg *a,
		    const uint8_t *p)
{
	int64_t count = (int64_t)rt_rd64(p), n = (int64_t)rt_rd64(p + 8);
	const uint8_t *ent[GT_GOMAP_MAX];
	int k = 0;
	for (int64_t i = 0; i < n && i < a->go_max && k < GT_GOMAP_MAX; i++) {
		const uint8_t *e = p + 16 + i * a->go_stride;
		int j = k++;
		for (; j > 0 && go_cmp(&a->fields[0], ent[j - 1], e) > 0; j--)
			ent[j] = ent[j - 1];
		ent[j] = e;
	}
	strbuf_puts(sb, "map[");
	for (int i = 0; i < k; i++) {
		strbuf_puts(sb, i ? " " : "");
		go_format(sb, plan, &a->fields[0], ent[i]);
		strbuf_putc(sb, ':');
		go_format(sb, plan, &a->fields[1], ent[i]);
	}
	if (count > k) /* not fmt's: the entries past those copied */
		strbuf_puts(sb, k ? " ..." : "...");
	strbuf_putc(sb, ']');
}

static void go_format(struct strbuf *sb, const struct gt_plan *plan, const struct plan_arg *a,
		      const uint8_t *base)
{
	const uint8_t *p = base + a->offset;
	uint64_t v = a->go == PG_NOREAD ? 0 : rt_rd64(p);
	switch (a->go) {
	case PG_INT:
		if (a->go_show == PGW_DURATION)
			put_duration(sb, (int64_t)v);
		else
			strbuf_printf(sb, "%" PRId64, (int64_t)narrow(v, a->go_size, true));
		break;
	case PG_UINT:
		strbuf_printf(sb, "%" PRIu64, narrow(v, a->go_size, false));
		break;
	case PG_BOOL:
		strbuf_puts(sb, v & 0xff ? "true" : "false");
		break;
	case PG_FLOAT:
		if (a->go_size == 4) {
			float f;
			uint32_t w = (uint32_t)v;
			memcpy(&f, &w, sizeof(f));
			put_float(sb, f);
		} else {
			double d;
			memcpy(&d, &v, sizeof(d));
			put_float(sb, d);
		}
		break;
	case PG_PTR:
		if (!v)
			strbuf_puts(sb, "<nil>");
		else if (a->nfields) {
			strbuf_putc(sb, '&');
			go_format(sb, plan, &a->fields[0], p);
		} else
			strbuf_printf(sb, "0x%" PRIx64, v);
		break;
	case PG_ADDR:
		strbuf_printf(sb, v ? "0x%" PRIx64 : "<nil>", v);
		break;
	case PG_NOREAD:
		strbuf_putc(sb, '?');
		break;
	case PG_MAP:
		put_map(sb, plan, a, p);
		break;
	case PG_STRING:
		put_text(sb, p + 8, (int64_t)v, a->size - 8);
		break;
	case PG_STRUCT:
		if (a->go_show == PGW_TIME) {
			put_time(sb, a, p);
			break;
		}
		strbuf_putc(sb, '{');
		for (int i = 0; i < a->nfields; i++) {
			strbuf_printf(sb, "%s%s:", i ? " " : "", a->fields[i].name);
			go_format(sb, plan, &a->fields[i], p);
		}
		strbuf_putc(sb, '}');
		break;
	case PG_ARRAY:
	case PG_SLICE: {
		/* an array's length is its size over its stride (0-sized elements: as captured) */
		int64_t n = a->go == PG_SLICE ? (int64_t)v
			    : a->go_stride > 0 ? a->go_size / a->go_stride : a->go_max;
		const uint8_t *el = a->go == PG_SLICE ? p + 16 : p;
		if (a->go_show == PGW_IP && n <= a->go_max && a->fields[0].size == 8) {
			uint8_t ip[16];
			for (int64_t i = 0; i < n && i < 16; i++)
				ip[i] = (uint8_t)rt_rd64(el + i * 8);
			put_ip(sb, ip, n);
			break;
		}
		strbuf_putc(sb, '[');
		for (int64_t i = 0; i < n && i < a->go_max; i++) {
			strbuf_puts(sb, i ? " " : "");
			go_format(sb, plan, &a->fields[0], el + i * a->fields[0].size);
		}
		if (n > a->go_max)
			strbuf_puts(sb, a->go_max ? " ..." : "...");
		strbuf_putc(sb, ']');
		break;
	}
	case PG_IFACE:
		if (a->go_chain)
			put_error(sb, plan, a, p, 0);
		else
			put_iface(sb, plan, a, p);
		break;
	}
}

void rt_go_format(struct strbuf *sb, const struct gt_plan *plan, const struct plan_arg *a,
		  const uint8_t *base, bool json)
{
	if (!json) {
		go_format(sb, plan, a, base);
		return;
	}
	struct strbuf t = {0};
	go_format(&t, plan, a, base);
	strbuf_json_string(sb, t.buf ? t.buf : "", t.len);
	strbuf_free(&t);
}

void rt_go_type(struct strbuf *sb, const struct gt_plan *plan, const struct plan_arg *a,
		const uint8_t *base)
{
	if (a->kind != PLAN_ARG_GO || a->go != PG_IFACE) {
		strbuf_puts(sb, a->literal ? a->literal : "?");
		return;
	}
	uint64_t ty = rt_rd64(base + a->offset);
	const struct plan_gotype *t = ty ? gotype_at(plan, ty) : NULL;
	if (t)
		strbuf_puts(sb, t->name);
	else if (ty)
		strbuf_printf(sb, "?(0x%" PRIx64 ")", ty);
	else
		strbuf_puts(sb, "<nil>");
}
