/* output: ring-buffer records -> text (bpftrace's printf/print) or JSON lines
 * (bpftrace's {"type": ..., "data": ...} shapes). Formats are parsed once, at start-up;
 * a record is checked against its event's size before any field is read. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/diag.h"
#include "common/fmt.h"
#include "common/util.h"
#include "runtime/otlp/otlp.h"
#include "runtime/output/output.h"

#define RT_REC_HDR 8 /* u64 event_id */

struct rt_output {
	const struct gt_plan *plan;
	FILE *f;
	bool json;
	bool discard;   /* after exit(): consume records, print nothing */
	bool exit_seen;
	int exit_status; /* exit(N)'s N */
	struct fmt *fmts; /* [plan->nevents], parsed for PLAN_EV_PRINTF and PLAN_EV_FG_ENTRY */
	struct rt_maps *maps;
	const struct rt_consumer *consumer; /* PLAN_EV_FG_* records, or NULL */
	char *strbuf;     /* one string argument, NUL-terminated: max arg size + 1 */
	struct strbuf text; /* one value formatted by user space (strftime, buf ...) */
	const struct diag_src *src; /* the script, for -k's warnings */
	struct strbuf line;
	uint64_t records, bad_records;
	struct otlp *otlp;  /* --otlp: printf lines as log records too */
	int64_t wall_off;   /* CLOCK_REALTIME - CLOCK_MONOTONIC, for their times */
};

static bool arg_is_text(const struct plan_arg *a)
{
	return a->kind != PLAN_ARG_INT;
}

static uint64_t rec_u64(const uint8_t *rec, int offset)
{
	uint64_t v;
	memcpy(&v, rec + offset, sizeof(v)); /* records are aligned; memcpy says so to UBSan */
	return v;
}

/* The text of a string-like argument, valid until the next call. */
static const char *arg_text(struct rt_output *o, const uint8_t *rec, const struct plan_arg *a)
{
	if (a->kind == PLAN_ARG_STRFTIME || a->kind == PLAN_ARG_STRERROR ||
	    a->kind == PLAN_ARG_USERNAME || a->kind == PLAN_ARG_INET || a->kind == PLAN_ARG_BUF ||
	    a->kind == PLAN_ARG_CGROUP_PATH || a->kind == PLAN_ARG_STRUCT ||
	    a->kind == PLAN_ARG_TUPLE || a->kind == PLAN_ARG_GO || a->kind == PLAN_ARG_STACK ||
	    a->kind == PLAN_ARG_SYM || a->kind == PLAN_ARG_ARRAY) {
		o->text.len = 0;
		rt_value_format(&o->text, o->plan, a, rec, false);
		strbuf_putc(&o->text, 0);
		return o->text.buf;
	}
	if (a->kind == PLAN_ARG_INT && a->enum_id > 0 && a->enum_id <= o->plan->nenums) {
		/* an enum's value: its enumerator, or the number when it has none */
		const struct plan_enum *en = &o->plan->enums[a->enum_id - 1];
		int64_t v = (int64_t)rec_u64(rec, a->offset);
		for (int i = 0; i < en->n; i++)
			if (en->values[i] == v)
				return en->names[i];
		o->text.len = 0;
		strbuf_printf(&o->text, "%lld", (long long)v);
		strbuf_putc(&o->text, 0);
		return o->text.buf;
	}
	if (a->kind == PLAN_ARG_STR) {
		/* NUL-padded, but not NUL-terminated when full. */
		size_t n = strnlen((const char *)rec + a->offset, (size_t)a->size);
		memcpy(o->strbuf, rec + a->offset, n);
		o->strbuf[n] = 0;
		return o->strbuf;
	}
	if (a->literal)
		return a->literal;
	/* Low 32 bits: a raw cookie (site id | flags << 32) prints the same. */
	uint64_t id = rec_u64(rec, a->offset) & 0xffffffffu;
	if (id >= (uint64_t)o->plan->nsites)
		return "?";
	const struct plan_site *site = &o->plan->sites[id];
	const char *t = a->kind == PLAN_ARG_SITE_FUNC ? site->func : site->probe;
	return t ? t : "?";
}

static void put_conv(struct rt_output *o, struct strbuf *l, const struct fmt_piece *pc,
		     const uint8_t *rec, const struct plan_arg *a)
{
	char tmp[32];

	if (!a) /* fewer arguments than conversions: checked at start-up, never here */
		return;
	if (pc->conv == FMT_BUF && a->kind == PLAN_ARG_BUF) {
		static const enum rt_buf_mode modes[] = {RT_BUF_PRINTABLE, RT_BUF_ESCAPED,
							 RT_BUF_HEX};
		uint64_t len = rec_u64(rec, a->offset);
		size_t cap = a->size > 8 ? (size_t)a->size - 8 : 0;
		struct strbuf t = {0};
		rt_buf_format(&t, rec + a->offset + 8, len < cap ? (size_t)len : cap,
			      modes[pc->buf_mode]);
		strbuf_putc(&t, 0);
		strbuf_printf(l, pc->cspec, t.buf);
		strbuf_free(&t);
		return;
	}
	if (pc->conv == FMT_TYPE) { /* sema lets only Go values through */
		struct strbuf t = {0};
		rt_go_type(&t, o->plan, a, rec);
		strbuf_putc(&t, 0);
		strbuf_printf(l, pc->cspec, t.buf);
		strbuf_free(&t);
		return;
	}
	if (pc->conv == FMT_VALUE) { /* print()'s text of any value */
		struct strbuf t = {0};
		rt_value_format(&t, o->plan, a, rec, false);
		strbuf_putc(&t, 0);
		strbuf_printf(l, pc->cspec, t.buf);
		strbuf_free(&t);
		return;
	}
	if (arg_is_text(a) || (pc->conv == FMT_STR && a->enum_id)) { /* an enum by name */
		const char *t = arg_text(o, rec, a);
		if (pc->conv == FMT_STR || pc->conv == FMT_PTR || pc->conv == FMT_BUF)
			strbuf_printf(l, pc->cspec, t);
		else
			strbuf_puts(l, t);
		return;
	}
	uint64_t v = rec_u64(rec, a->offset);
	if (a->go_int && !pc->sized && (pc->conv == FMT_SIGNED || pc->conv == FMT_UNSIGNED)) {
		/* a Go integer: all of it, as Go's fmt (captured sign- or zero-extended);
		 * %x / %o of a negative one is its magnitude after '-', as Go's */
		if (pc->conv == FMT_SIGNED)
			strbuf_printf(l, pc->cspec, (long long)v);
		else if (a->is_signed && (int64_t)v < 0 && !strchr(pc->cspec, 'u')) {
			strbuf_putc(l, '-');
			strbuf_printf(l, pc->cspec, -(unsigned long long)v);
		} else
			strbuf_printf(l, pc->cspec, (unsigned long long)v);
		return;
	}
	switch (pc->conv) {
	case FMT_SIGNED:
		strbuf_printf(l, pc->cspec, (long long)fmt_int_arg(pc, v));
		break;
	case FMT_UNSIGNED:
		strbuf_printf(l, pc->cspec, fmt_int_arg(pc, v));
		break;
	case FMT_CHAR:
		strbuf_printf(l, pc->cspec, (int)(unsigned char)v);
		break;
	case FMT_PTR:
		/* bpftrace's %p is glibc's: "0x" + hex, and "(nil)" for NULL */
		if (v)
			snprintf(tmp, sizeof(tmp), "0x%" PRIx64, v);
		else
			snprintf(tmp, sizeof(tmp), "(nil)");
		strbuf_printf(l, pc->cspec, tmp);
		break;
	case FMT_STR:
		/* An integer for %s: print it as a number rather than dereference it. */
		if (a->is_signed)
			snprintf(tmp, sizeof(tmp), "%lld", (long long)v);
		else
			snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v);
		strbuf_printf(l, pc->cspec, tmp);
		break;
	case FMT_GFP: {
		struct strbuf t = {0};
		rt_gfp_format(&t, v);
		strbuf_putc(&t, 0);
		strbuf_printf(l, pc->cspec, t.buf);
		strbuf_free(&t);
		break;
	}
	case FMT_BUF: /* an integer for %r: sema refuses it */
	case FMT_VALUE: /* formatted above */
	case FMT_TYPE:
	case FMT_NONE:
		break;
	}
}

/* Appends F formatted with the last f->nconv arguments of EV to OUT, leaving out the
 * first SKIP conversions and the text before them. */
static void format_pieces(struct rt_output *o, struct strbuf *out, const struct plan_event *ev,
			  const struct fmt *f, const uint8_t *rec, int skip)
{
	int ai = ev->nargs - f->nconv, conv = 0;
	for (int i = 0; i < f->npieces; i++) {
		const struct fmt_piece *pc = &f->pieces[i];
		bool skipped = conv < skip;
		if (!skipped)
			strbuf_puts(out, pc->literal);
		if (pc->conv == FMT_NONE)
			continue;
		if (!skipped)
			put_conv(o, out, pc, rec, ai >= 0 && ai < ev->nargs ? &ev->args[ai] : NULL);
		ai++;
		conv++;
	}
}

/* --otlp: the line as a log record of the process, its tid and goid (when known) as
 * attributes; a trailing newline is the line's end, not its text. */
static void emit_log(struct rt_output *o, const struct plan_event *ev, const uint8_t *rec)
{
	uint64_t m[PLAN_META_N];
	for (int i = 0; i < PLAN_META_N; i++)
		m[i] = rec_u64(rec, ev->args[i].offset);
	size_t n = o->line.len;
	if (n && o->line.buf[n - 1] == '\n')
		n--;
	struct otlp_kv kv[2] = {OTLP_KV_INT("thread.id", (int64_t)m[PLAN_META_TID]),
				OTLP_KV_INT("goid", (int64_t)m[PLAN_META_GOID])};
	otlp__log(o->otlp, (int)m[PLAN_META_PID], m[PLAN_META_NSECS] + (uint64_t)o->wall_off,
		  o->line.buf ? o->line.buf : "", n, kv, m[PLAN_META_GOID] ? 2 : 1);
}

static void emit_printf(struct rt_output *o, const struct plan_event *ev, const struct fmt *f,
			const uint8_t *rec)
{
	o->line.len = 0;
	if (o->line.buf)
		o->line.buf[0] = 0;
	format_pieces(o, &o->line, ev, f, rec, ev->meta);
	if (o->otlp && ev->meta == PLAN_META_N && ev->nargs >= PLAN_META_N)
		emit_log(o, ev, rec);
	if (!o->json) {
		fwrite(o->line.buf ? o->line.buf : "", 1, o->line.len, o->f);
		return;
	}
	struct strbuf j = {0};
	strbuf_puts(&j, "{\"type\": \"printf\", \"data\": ");
	strbuf_json_string(&j, o->line.buf ? o->line.buf : "", o->line.len);
	strbuf_puts(&j, "}\n");
	fwrite(j.buf, 1, j.len, o->f);
	strbuf_free(&j);
}

/* errorf(), warnf(): the formatted text as a message at the call, as bpftrace (one line:
 * a newline at its end is the message's own) */
static void emit_diag(struct rt_output *o, const struct plan_event *ev, const struct fmt *f,
		      const uint8_t *rec)
{
	struct strbuf t = {0};
	format_pieces(o, &t, ev, f, rec, 0);
	int n = (int)t.len;
	if (n && t.buf[n - 1] == '\n')
		n--;
	fflush(o->f);
	if (ev->kind == PLAN_EV_ERRORF)
		diag_error(o->src, ev->loc, "%.*s", n, t.buf ? t.buf : "");
	else
		diag_warning(o->src, ev->loc, "%.*s", n, t.buf ? t.buf : "");
	if (ev->expanded_from && ev->kind == PLAN_EV_ERRORF) /* as bpftrace: the macro's call */
		diag_error(o->src, *ev->expanded_from, "expanded from");
	else if (ev->expanded_from)
		diag_warning(o->src, *ev->expanded_from, "expanded from");
	strbuf_free(&t);
}

static void emit_print(struct rt_output *o, const struct plan_event *ev, const uint8_t *rec)
{
	const struct plan_arg *a = &ev->args[0];
	if (a->kind == PLAN_ARG_TUPLE) {
		struct strbuf v = {0};
		if (o->json)
			strbuf_puts(&v, "{\"type\": \"value\", \"data\": ");
		rt_value_format(&v, o->plan, a, rec, o->json);
		strbuf_puts(&v, o->json ? "}\n" : "\n");
		fwrite(v.buf, 1, v.len, o->f);
		strbuf_free(&v);
		return;
	}
	if (arg_is_text(a)) {
		const char *t = arg_text(o, rec, a);
		if (!o->json) {
			fprintf(o->f, "%s\n", t);
			return;
		}
		struct strbuf j = {0};
		strbuf_puts(&j, "{\"type\": \"value\", \"data\": ");
		strbuf_json_string(&j, t, strlen(t));
		strbuf_puts(&j, "}\n");
		fwrite(j.buf, 1, j.len, o->f);
		strbuf_free(&j);
		return;
	}
	uint64_t v = rec_u64(rec, a->offset);
	if (o->json)
		fputs("{\"type\": \"value\", \"data\": ", o->f);
	if (a->is_bool)
		fputs(v & 0xff ? "true" : "false", o->f);
	else if (a->is_addr && !o->json) /* JSON has no hex numbers */
		fprintf(o->f, "0x%llx", (unsigned long long)v);
	else if (a->is_signed)
		fprintf(o->f, "%lld", (long long)v);
	else
		fprintf(o->f, "%llu", (unsigned long long)v);
	fputs(o->json ? "}\n" : "\n", o->f);
}

/* join(): the record's strings with the delimiter between them, and a newline */
static void emit_join(struct rt_output *o, const struct plan_event *ev, const uint8_t *rec)
{
	struct strbuf t = {0};
	for (int i = 0; i < ev->slots; i++) {
		const char *s = (const char *)rec + 8 + (size_t)i * (size_t)ev->slot_size;
		size_t n = strnlen(s, (size_t)ev->slot_size);
		if (!n)
			break;
		if (i)
			strbuf_puts(&t, ev->fmt ? ev->fmt : " ");
		strbuf_putn(&t, s, n);
	}
	if (o->json) {
		struct strbuf j = {0};
		strbuf_puts(&j, "{\"type\": \"join\", \"data\": ");
		strbuf_json_string(&j, t.buf ? t.buf : "", t.len);
		strbuf_puts(&j, "}\n");
		fwrite(j.buf, 1, j.len, o->f);
		strbuf_free(&j);
	} else {
		strbuf_putc(&t, '\n');
		fwrite(t.buf, 1, t.len, o->f);
	}
	strbuf_free(&t);
}

/* -k: a helper failed in the trace: a warning at the script's call (as bpftrace), or its
 * helper_error object in JSON. */
static void emit_helper_error(struct rt_output *o, const struct plan_event *ev,
			      const uint8_t *rec)
{
	int64_t rc = (int64_t)rec_u64(rec, 8);
	if (o->json) {
		fprintf(o->f,
			"{\"type\": \"helper_error\", \"helper\": \"%s\", \"retcode\": %lld, "
			"\"line\": %d, \"col\": %d}\n",
			ev->fmt, (long long)rc, ev->loc.line, ev->loc.col);
		return;
	}
	fflush(o->f);
	if (rc)
		diag_warning(o->src, ev->loc, "Failed to %s: %s (%lld)", ev->fmt, strerror((int)-rc),
			     (long long)rc);
	else
		diag_warning(o->src, ev->loc, "Failed to %s: %lld", ev->fmt, (long long)rc);
}

/* lbr(): the branches oldest first, as bpflbr lists them ([#0] is the newest), each
 * "from -> to" named from kallsyms; or why there are none. */
static void emit_lbr(struct rt_output *o, const struct plan_event *ev, const uint8_t *rec)
{
	int64_t rc = (int64_t)rec_u64(rec, 8);
	struct strbuf t = {0};
	if (rc < 0) {
		if (o->json)
			fprintf(o->f, "{\"type\": \"lbr\", \"error\": \"%s\", \"retcode\": %lld}\n",
				strerror((int)-rc), (long long)rc);
		else
			fprintf(o->f, "lbr: no branch records: %s (%lld)\n", strerror((int)-rc),
				(long long)rc);
		return;
	}
	int n = (int)(rc / ev->slot_size);
	if (n > ev->slots)
		n = ev->slots;
	strbuf_puts(&t, o->json ? "{\"type\": \"lbr\", \"data\": [" : "");
	if (!o->json)
		strbuf_printf(&t, "lbr: %d branches, oldest first\n", n);
	for (int i = n - 1; i >= 0; i--) {
		const uint8_t *e = rec + 16 + (size_t)i * (size_t)ev->slot_size;
		struct strbuf from = {0}, to = {0};
		rt_kaddr_format(&from, rec_u64(e, 0));
		rt_kaddr_format(&to, rec_u64(e, 8));
		if (o->json) {
			strbuf_puts(&t, i == n - 1 ? "{\"from\": " : ", {\"from\": ");
			strbuf_json_string(&t, from.buf, from.len);
			strbuf_puts(&t, ", \"to\": ");
			strbuf_json_string(&t, to.buf, to.len);
			strbuf_puts(&t, "}");
		} else {
			strbuf_printf(&t, "    [#%d] %s -> %s\n", i, from.buf, to.buf);
		}
		strbuf_free(&from);
		strbuf_free(&to);
	}
	if (o->json)
		strbuf_puts(&t, "]}\n");
	fwrite(t.buf, 1, t.len, o->f);
	strbuf_free(&t);
}

/* GT_CAT_BYTES_MAX (bpftrace's BPFTRACE_CAT_BYTES_MAX too), 10 KiB by default */
static size_t cat_bytes_max(void)
{
	const char *v = gt_getenv("CAT_BYTES_MAX");
	long n = v ? strtol(v, NULL, 10) : 0;
	return n > 0 ? (size_t)n : 10240;
}

/* system(fmt, ...): the command runs (sh -c) with its output in ours; cat(fmt, ...): the
 * file's first 10 KiB, as bpftrace (BPFTRACE_CAT_BYTES_MAX). Both when the record is
 * consumed, in the order of the other output. */
static void emit_action(struct rt_output *o, const struct plan_event *ev, const struct fmt *f,
			const uint8_t *rec)
{
	o->line.len = 0;
	format_pieces(o, &o->line, ev, f, rec, 0);
	strbuf_putc(&o->line, 0);
	const char *what = o->line.buf;
	FILE *in = ev->kind == PLAN_EV_SYSTEM ? popen(what, "r") : fopen(what, "r");
	if (!in) {
		diag_print(DIAG_ERROR, "%s '%s': %s",
			   ev->kind == PLAN_EV_SYSTEM ? "cannot run" : "failed to open file", what,
			   strerror(errno));
		return;
	}
	char buf[4096];
	size_t n, total = 0, cap = ev->kind == PLAN_EV_CAT ? cat_bytes_max() : SIZE_MAX;
	struct strbuf text = {0};
	while (total < cap && (n = fread(buf, 1, sizeof(buf), in)) > 0) {
		if (n > cap - total)
			n = cap - total;
		strbuf_putn(&text, buf, n);
		total += n;
	}
	if (ev->kind == PLAN_EV_SYSTEM)
		pclose(in);
	else
		fclose(in);
	if (o->json) { /* bpftrace's types for these */
		struct strbuf j = {0};
		strbuf_printf(&j, "{\"type\": \"%s\", \"data\": ",
			      ev->kind == PLAN_EV_SYSTEM ? "syscall" : "cat");
		strbuf_json_string(&j, text.buf ? text.buf : "", text.len);
		strbuf_puts(&j, "}\n");
		fwrite(j.buf, 1, j.len, o->f);
		strbuf_free(&j);
	} else if (text.len) {
		fwrite(text.buf, 1, text.len, o->f);
	}
	strbuf_free(&text);
	fflush(o->f);
}

/* time(fmt): the wall clock when the record is printed, as bpftrace (not when it fired). */
static void emit_time(struct rt_output *o, const struct plan_event *ev)
{
	char buf[1024];
	struct tm tm;
	time_t now = time(NULL);

	localtime_r(&now, &tm);
	size_t n = strftime(buf, sizeof(buf), ev->fmt ? ev->fmt : "%H:%M:%S\n", &tm);
	if (!o->json) {
		fwrite(buf, 1, n, o->f);
		return;
	}
	struct strbuf j = {0};
	strbuf_puts(&j, "{\"type\": \"time\", \"data\": ");
	strbuf_json_string(&j, buf, n);
	strbuf_puts(&j, "}\n");
	fwrite(j.buf, 1, j.len, o->f);
	strbuf_free(&j);
}

int rt_output__handle(void *ctx, void *data, size_t size)
{
	struct rt_output *o = ctx;
	const uint8_t *rec = data;

	o->records++;
	if (size < RT_REC_HDR) {
		o->bad_records++;
		return 0;
	}
	uint64_t id = rec_u64(rec, 0);
	if (id >= (uint64_t)o->plan->nevents || size < (size_t)o->plan->events[id].size) {
		o->bad_records++;
		return 0;
	}
	const struct plan_event *ev = &o->plan->events[id];
	if (ev->kind == PLAN_EV_EXIT) {
		/* As bpftrace: what the probes emitted after exit() is not printed. The
		 * first exit(status) is gotrace's. */
		if (!o->exit_seen && ev->nargs == 1)
			o->exit_status = (int)rec_u64(rec, ev->args[0].offset);
		o->exit_seen = true;
		o->discard = true;
		return 0;
	}
	if (o->discard)
		return 0;
	switch (ev->kind) {
	case PLAN_EV_PRINTF:
		emit_printf(o, ev, &o->fmts[id], rec);
		break;
	case PLAN_EV_ERRORF:
	case PLAN_EV_WARNF:
		emit_diag(o, ev, &o->fmts[id], rec);
		break;
	case PLAN_EV_PRINT:
		emit_print(o, ev, rec);
		break;
	case PLAN_EV_TIME:
		emit_time(o, ev);
		break;
	case PLAN_EV_SYSTEM:
	case PLAN_EV_CAT:
		emit_action(o, ev, &o->fmts[id], rec);
		break;
	/* Map events act when the record is consumed, not when the probe fired: updates in
	 * between are in the dump (bpftrace has the same asynchrony). */
	case PLAN_EV_PRINT_MAP:
		if (o->maps)
			rt_maps__print(o->maps, ev->map_id, o->f, o->json, ev->top, ev->div);
		break;
	case PLAN_EV_CLEAR_MAP:
		if (o->maps)
			rt_maps__clear(o->maps, ev->map_id);
		break;
	case PLAN_EV_ZERO_MAP:
		if (o->maps)
			rt_maps__zero(o->maps, ev->map_id);
		break;
	case PLAN_EV_FG_ENTRY:
	case PLAN_EV_FG_RETURN:
	case PLAN_EV_FG_SPAWN:
		if (o->consumer)
			o->consumer->record(o->consumer->ctx, o, (int)id, rec, size);
		break;
	case PLAN_EV_HELPER_ERROR:
		emit_helper_error(o, ev, rec);
		break;
	case PLAN_EV_JOIN:
		emit_join(o, ev, rec);
		break;
	case PLAN_EV_LBR:
		emit_lbr(o, ev, rec);
		break;
	case PLAN_EV_EXIT:
		break;
	}
	return 0;
}

/* A plan the records cannot satisfy is a compiler bug: say so before anything runs. */
static int check_event(const struct gt_plan *plan, int id, struct fmt *f, int *max_str)
{
	const struct plan_event *ev = &plan->events[id];
	const char *msg;
	int off;

	if (ev->size < RT_REC_HDR || ev->nargs < 0 || (ev->nargs && !ev->args)) {
		diag_fatal("internal error: event %d has size %d and %d arguments", id, ev->size,
			   ev->nargs);
		return -EINVAL;
	}
	for (int i = 0; i < ev->nargs; i++) {
		const struct plan_arg *a = &ev->args[i];
		int size = a->kind == PLAN_ARG_STR ? a->size : 8;
		if (a->kind == PLAN_ARG_STR && a->size > *max_str)
			*max_str = a->size;
		if (a->literal && a->kind != PLAN_ARG_STR)
			continue; /* nothing is read from the record */
		if (a->offset < RT_REC_HDR || size < 0 || a->offset + size > ev->size) {
			diag_fatal("internal error: event %d argument %d at %d+%d outside a record "
				   "of %d bytes",
				   id, i, a->offset, size, ev->size);
			return -EINVAL;
		}
	}
	switch (ev->kind) {
	case PLAN_EV_PRINTF:
	case PLAN_EV_ERRORF:
	case PLAN_EV_WARNF:
	case PLAN_EV_SYSTEM:
	case PLAN_EV_CAT:
	case PLAN_EV_FG_ENTRY:
	case PLAN_EV_FG_RETURN:
	case PLAN_EV_FG_SPAWN:
		if (fmt_parse(ev->fmt ? ev->fmt : "", f, &msg, &off)) {
			diag_fatal("internal error: event %d: format at byte %d: %s", id, off, msg);
			return -EINVAL;
		}
		/* FG_ENTRY: goid, depth, nsecs, site, caller pc, then the formatted ones;
		 * FG_RETURN: goid, depth, nsecs, site, duration, oncpu, then the formatted
		 * ones */
		if (f->nconv != ev->nargs - (ev->kind == PLAN_EV_FG_ENTRY    ? 5
					     : ev->kind == PLAN_EV_FG_RETURN ? 6
									     : 0)) {
			diag_fatal("internal error: event %d: format has %d conversions for %d "
				   "arguments",
				   id, f->nconv, ev->nargs);
			return -EINVAL;
		}
		break;
	case PLAN_EV_PRINT:
		if (ev->nargs != 1) {
			diag_fatal("internal error: print event %d has %d arguments", id, ev->nargs);
			return -EINVAL;
		}
		break;
	case PLAN_EV_PRINT_MAP:
	case PLAN_EV_CLEAR_MAP:
	case PLAN_EV_ZERO_MAP:
		if (ev->map_id < 0 || ev->map_id >= plan->nmaps) {
			diag_fatal("internal error: event %d names map %d of %d", id, ev->map_id,
				   plan->nmaps);
			return -EINVAL;
		}
		break;
	case PLAN_EV_EXIT:
	case PLAN_EV_TIME:
	case PLAN_EV_HELPER_ERROR:
	case PLAN_EV_JOIN:
		break;
	case PLAN_EV_LBR:
		if (ev->slot_size != 24 || ev->size != 16 + ev->slots * ev->slot_size) {
			diag_fatal("internal error: lbr() event %d of %d bytes", id, ev->size);
			return -EINVAL;
		}
		break;
	}
	return 0;
}

struct rt_output *rt_output__new(const struct gt_plan *plan, FILE *f, bool json, int *err)
{
	struct rt_output *o = xcalloc(1, sizeof(*o));
	int max_str = 0;

	o->plan = plan;
	o->f = f;
	o->json = json;
	o->fmts = xcalloc((size_t)plan->nevents, sizeof(*o->fmts));
	for (int i = 0; i < plan->nevents; i++) {
		*err = check_event(plan, i, &o->fmts[i], &max_str);
		if (*err) {
			rt_output__free(o);
			return NULL;
		}
	}
	o->strbuf = xmalloc((size_t)max_str + 1);
	*err = 0;
	return o;
}

void rt_output__free(struct rt_output *o)
{
	if (!o)
		return;
	if (o->consumer && o->consumer->finish)
		o->consumer->finish(o->consumer->ctx, o);
	if (o->bad_records)
		diag_print(DIAG_WARNING, "%llu malformed event records ignored",
			   (unsigned long long)o->bad_records);
	for (int i = 0; i < o->plan->nevents; i++)
		fmt_free(&o->fmts[i]);
	free(o->fmts);
	free(o->strbuf);
	strbuf_free(&o->text);
	strbuf_free(&o->line);
	free(o);
}

bool rt_output__exit_seen(const struct rt_output *o)
{
	return o->exit_seen;
}

int rt_output__exit_status(const struct rt_output *o)
{
	return o->exit_status & 0xff; /* as a process's */
}

void rt_output__set_maps(struct rt_output *o, struct rt_maps *maps)
{
	o->maps = maps;
}

void rt_output__set_consumer(struct rt_output *o, const struct rt_consumer *c)
{
	o->consumer = c;
}

FILE *rt_output_file(struct rt_output *o)
{
	return o->f;
}

bool rt_output_json(const struct rt_output *o)
{
	return o->json;
}

void rt_output_format(struct rt_output *o, int event_id, const void *rec, int skip,
		      struct strbuf *out)
{
	if (event_id < 0 || event_id >= o->plan->nevents)
		return;
	format_pieces(o, out, &o->plan->events[event_id], &o->fmts[event_id], rec, skip);
}

void rt_output__set_src(struct rt_output *o, const struct diag_src *src)
{
	o->src = src;
}

void rt_output__set_discard(struct rt_output *o, bool discard)
{
	o->discard = discard;
}

uint64_t rt_output__records(const struct rt_output *o)
{
	return o->records;
}

void rt_output_dropped_roots(struct rt_output *o, uint64_t n, const char *reason,
			     const char *why)
{
	if (n && o->json && !ferror(o->f)) {
		fprintf(o->f, "{\"type\": \"dropped_root_calls\", \"data\": {\"calls\": %llu, "
			"\"reason\": \"%s\"}}\n", (unsigned long long)n, reason);
		fflush(o->f);
	} else if (n) {
		diag_print(DIAG_WARNING, "%llu root calls were dropped whole%s",
			   (unsigned long long)n, why);
	}
}

void rt_output__set_otlp(struct rt_output *o, struct otlp *x)
{
	o->wall_off = wall_off_ns();
	o->otlp = x;
}

void rt_output__lost(struct rt_output *o, uint64_t n)
{
	/* Text: stderr (diag, in bpftrace's words), so the trace on stdout stays exactly what
	 * the probes printed. JSON: in the output stream, where a consumer of the JSON lines
	 * will see it. */
	if (o->json)
		fprintf(o->f, "{\"type\": \"lost_events\", \"data\": {\"events\": %llu}}\n",
			(unsigned long long)n);
	else
		diag_print(DIAG_PLAIN, "Lost %llu events", (unsigned long long)n);
}
