/* fg_chrome: -f chrome, the calls of call-graph mode as Chrome's Trace Event Format, the
 * JSON that Perfetto (ui.perfetto.dev) and chrome://tracing open:
 *
 *   {"displayTimeUnit": "ns", "otherData": {...}, "traceEvents": [
 *   {"name": "process_name", "ph": "M", "pid": 4242, "args": {"name": "demo"}},
 *   {"name": "thread_name", "ph": "M", "pid": 4242, "tid": 6, "args": {"name": "goroutine 6"}},
 *   {"name": "main.add", "cat": "go", "ph": "X", "pid": 4242, "tid": 6, "ts": 1021.532,
 *    "dur": 31119.004, "args": {"args": "a=0, b=0", "caller": "main.doSomething", ...}},
 *   ...
 *   ]}
 *
 * One complete event ("X") per call, the process's pid, the goroutine id as the thread:
 * each goroutine is a track, named by a metadata event ("M") before its first call, with
 * the goroutine that made it and where (lineage: put_lineage).
 * ts and dur are microseconds with the nanoseconds as three decimals; ts counts from the
 * start of the trace (small numbers keep the nanoseconds exact in a double), whose wall
 * clock otherData gives. The consumer writes a tree's calls when the tree completes, so
 * events are not in time order: both viewers sort them. */
#include <inttypes.h>
#include <string.h>

#include "funcgraph/fg_int.h"

#define PROCESS_KEY (1ull << 63) /* (pid | PROCESS_KEY, 0) in named: the process track */

void fg_chrome_init(struct fg_chrome *ch, uint64_t origin_ns, int64_t wall_off, const char *process)
{
	memset(ch, 0, sizeof(*ch));
	ch->origin_ns = origin_ns;
	ch->wall_off = wall_off;
	ch->process = process;
}

void fg_chrome_free(struct fg_chrome *ch)
{
	pairset__free(&ch->named);
}

static void put_str(struct strbuf *out, const char *s)
{
	strbuf_json_string(out, s, strlen(s));
}

/* NS as microseconds: "1021.532" */
static void put_us(struct strbuf *out, int64_t ns)
{
	uint64_t v = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;
	strbuf_printf(out, "%s%" PRIu64 ".%03u", ns < 0 ? "-" : "", v / 1000, (unsigned)(v % 1000));
}

static void put_head(struct fg_chrome *ch, struct strbuf *out)
{
	ch->started = true;
	strbuf_printf(out,
		      "{\"displayTimeUnit\": \"ns\", \"otherData\": {\"source\": \"gotrace "
		      "--funcgraph\", \"ts_zero_unix_ns\": %lld},\n\"traceEvents\": [\n",
		      (long long)ch->origin_ns + (long long)ch->wall_off);
}

/* Before each event: the document's head, or the comma after the last event. */
static void next_event(struct fg_chrome *ch, struct strbuf *out)
{
	if (!ch->started)
		put_head(ch, out);
	else
		strbuf_puts(out, ",\n");
	ch->events++;
}

/* Names the process and the goroutine's track the first time either is seen (SP: where
 * the goroutine came from, or NULL). */
static void name_track(struct fg_chrome *ch, struct strbuf *out, int64_t pid, int64_t goid,
		       const struct fg_spawn *sp)
{
	if (pairset__add(&ch->named, (uint64_t)pid | PROCESS_KEY, 0)) {
		next_event(ch, out);
		strbuf_printf(out,
			      "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %" PRId64
			      ", \"args\": {\"name\": ",
			      pid);
		put_str(out, ch->process);
		strbuf_puts(out, "}}");
	}
	if (pairset__add(&ch->named, (uint64_t)pid, (uint64_t)goid)) {
		next_event(ch, out);
		strbuf_printf(out,
			      "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %" PRId64
			      ", \"tid\": %" PRId64 ", \"args\": {\"name\": ",
			      pid, goid);
		struct strbuf name = {0};
		strbuf_printf(&name, "goroutine %" PRId64, goid);
		if (sp)
			strbuf_printf(&name, " (go from goroutine %" PRId64 "%s%s)", sp->parent,
				      sp->site ? " at " : "", sp->site ? sp->site : "");
		put_str(out, name.buf);
		strbuf_free(&name);
		if (sp) {
			strbuf_printf(out, ", \"parent_goid\": %" PRId64 ", \"go_statement\": ",
				      sp->parent);
			put_str(out, sp->site ? sp->site : "");
		}
		strbuf_puts(out, "}}");
	}
}

/* The go statement that made CALL's goroutine: a short slice in the parent's track and
 * a flow (Trace Event Format "s" and "f" events, id the new goroutine's) from it to the
 * goroutine's first call, which Perfetto draws as an arrow; all three in cat "lineage"
 * (the calls are cat "go"). */
static void put_lineage(struct fg_chrome *ch, struct strbuf *out, const struct fg_call *call)
{
	const struct fg_spawn *sp = call->spawn;
	int64_t at = (int64_t)(sp->ns - ch->origin_ns);
	name_track(ch, out, call->pid, sp->parent, NULL);
	next_event(ch, out);
	strbuf_printf(out,
		      "{\"name\": \"go\", \"cat\": \"lineage\", \"ph\": \"X\", \"pid\": %" PRId64
		      ", \"tid\": %" PRId64 ", \"ts\": ",
		      call->pid, sp->parent);
	put_us(out, at);
	strbuf_printf(out, ", \"dur\": 1.000, \"args\": {\"goroutine\": %" PRId64, call->goid);
	if (sp->site) {
		strbuf_puts(out, ", \"go_statement\": ");
		put_str(out, sp->site);
	}
	strbuf_puts(out, "}}");
	next_event(ch, out);
	strbuf_printf(out,
		      "{\"name\": \"go\", \"cat\": \"lineage\", \"ph\": \"s\", \"id\": %" PRId64
		      ", \"pid\": %" PRId64 ", \"tid\": %" PRId64 ", \"ts\": ",
		      call->goid, call->pid, sp->parent);
	put_us(out, at);
	strbuf_puts(out, "}");
	next_event(ch, out);
	strbuf_printf(out,
		      "{\"name\": \"go\", \"cat\": \"lineage\", \"ph\": \"f\", \"bp\": \"e\", "
		      "\"id\": %" PRId64 ", \"pid\": %" PRId64 ", \"tid\": %" PRId64
		      ", \"ts\": ",
		      call->goid, call->pid, call->goid);
	put_us(out, (int64_t)(call->entry_ns - ch->origin_ns));
	strbuf_puts(out, "}");
}

static void put_arg(struct strbuf *out, bool *first, const char *key, const char *val)
{
	if (!val)
		return;
	strbuf_puts(out, *first ? "" : ", ");
	*first = false;
	put_str(out, key);
	strbuf_puts(out, ": ");
	put_str(out, val);
}

void fg_chrome_call(struct fg_chrome *ch, struct strbuf *out, const struct fg_call *call)
{
	bool first = true;
	name_track(ch, out, call->pid, call->goid, call->spawn);
	if (call->spawn)
		put_lineage(ch, out, call);
	next_event(ch, out);
	strbuf_puts(out, "{\"name\": ");
	put_str(out, call->func);
	strbuf_printf(out,
		      ", \"cat\": \"go\", \"ph\": \"X\", \"pid\": %" PRId64 ", \"tid\": %" PRId64
		      ", \"ts\": ",
		      call->pid, call->goid);
	put_us(out, (int64_t)(call->entry_ns - ch->origin_ns));
	strbuf_puts(out, ", \"dur\": ");
	put_us(out, (int64_t)call->dur_ns);
	strbuf_puts(out, ", \"args\": {");
	if (call->oncpu_ns >= 0) {
		strbuf_printf(out, "\"oncpu_ns\": %" PRId64, call->oncpu_ns);
		first = false;
	}
	put_arg(out, &first, "args", call->args);
	put_arg(out, &first, "rets", call->rets);
	put_arg(out, &first, "caller", call->caller);
	put_arg(out, &first, "call_site", call->call_site);
	put_arg(out, &first, "returned_at", call->returned_at);
	put_arg(out, &first, "end", call->mark);
	strbuf_puts(out, "}}");
}

void fg_chrome_dropped(struct fg_chrome *ch, struct strbuf *out, int64_t pid, int64_t goid,
		       uint64_t ns, uint64_t calls)
{
	name_track(ch, out, pid, goid, NULL);
	next_event(ch, out);
	strbuf_printf(
	    out,
	    "{\"name\": \"calls not shown\", \"cat\": \"go\", \"ph\": \"i\", \"s\": \"t\", "
	    "\"pid\": %" PRId64 ", \"tid\": %" PRId64 ", \"ts\": ",
	    pid, goid);
	put_us(out, (int64_t)(ns - ch->origin_ns));
	strbuf_printf(out, ", \"args\": {\"calls\": %" PRIu64 ", \"kept\": %d}}", calls,
		      FG_MAX_NODES);
}

void fg_chrome_end(struct fg_chrome *ch, struct strbuf *out)
{
	if (!ch->started)
		put_head(ch, out); /* an empty trace */
	strbuf_puts(out, ch->events ? "\n]}\n" : "]}\n");
}
