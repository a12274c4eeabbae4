"""--otlp: OpenTelemetry export over OTLP/HTTP, read back from real receivers built at
test time (otlplib.py): the OpenTelemetry Collector, whose file exporter writes what it
decoded, and Jaeger v2 through its query API. The oracles: what the exporter was asked
to send (tests/unit/otlp_send.c, no BPF), the same run's -f json calls, and the traced
program's own clock (tests/go/funcgraph's "took" lines)."""

import base64
import gzip
import http.server
import json
import os
import re
import subprocess
import threading
import time

import fglib
import otlplib
from fglib import M, STUDENT_ARGS, note_own_times, took
from gtlib import FETCH, PREBUILD, Suite, bpf_leftovers, describe

s = Suite("otlp")
if FETCH or PREBUILD:  # scripts/test.sh's early work: the receivers' modules, builds
    otlplib.build_otelcol(s, fetch=FETCH)
    otlplib.build_jaeger(s, fetch=FETCH)
    raise SystemExit(0)
fglib.init(s)
# the exporter alone: beside gotrace in its build directory (tests/CMakeLists.txt)
SEND = os.path.join(os.path.dirname(s.gotrace), "tests", "otlp_send")
b = s.go_build("funcgraph")
try:
    col = otlplib.Collector(otlplib.build_otelcol(s), parent=s.work).start()
except RuntimeError as e:
    s.check("the Collector builds and starts", False, e)
    s.finish()
OTEL_VARS = [k for k in s.env if k.startswith("OTEL_")]
for k in OTEL_VARS:  # the runner's own settings are not the cases'
    del s.env[k]


def env(**kw):
    return dict(s.env, **kw)


def gt_run(args, timeout=120, start=False, **kw):
    """s.run (S.start) with the variables KW set."""
    saved, s.env = s.env, env(**kw)
    try:
        return s.start(args) if start else s.run(args, timeout=timeout)
    finally:
        s.env = saved


def send(url, what, n, **kw):
    return subprocess.run([SEND, url, what, str(n)], capture_output=True, text=True,
                          timeout=60, env=env(**kw))


def wait_count(fn, n, timeout=20):
    """FN()'s items once there are N of them (or what there is at the timeout)."""
    return otlplib.wait(lambda: (lambda got: got if len(got) >= n else None)(fn()),
                        timeout) or fn()


def new_spans(before):
    """The Collector's spans after the first BEFORE."""
    return col.spans()[before:]


# ---- the encoding: every field the exporter writes, as the Collector decoded it ----
if s.case("encoding"):
    n0 = len(col.spans())
    r = send(col.http_url, "spans", 3, OTEL_RESOURCE_ATTRIBUTES=
             "deployment.environment.name=test%20env,service.name=fromlist")
    ids = [l.split() for l in r.stdout.splitlines()]
    spans = wait_count(lambda: new_spans(n0), 6)
    by_id = {sp["spanId"]: sp for sp in spans}
    traces = [l[1] for l in ids if l[0] == "trace"]
    want = [(l[1], l[3]) for l in ids if l[0] == "span"]
    s.check("encoding: the spans sent are the spans decoded (ids, parents, traces)",
            r.returncode == 0 and len(spans) == 6 and
            all(i in by_id and by_id[i].get("parentSpanId", "") == ("" if p == "0" else p)
                for i, p in want) and
            [sp["traceId"] for sp in spans if "parentSpanId" not in sp] ==
            [t for t in traces], describe(r) + json.dumps(spans, indent=1)[:3000])
    root = next((sp for sp in spans if sp["name"] == "main.root"), {})
    child = next((sp for sp in spans if sp["name"] == "main.child"), {})
    s.check("encoding: attributes of each type, times, kind",
            otlplib.attrs(root) == {"goid": 7, "negative": -5, "zero": 0,
                                    "text": 'a "quoted" \u00fc', "empty": "", "flag": True,
                                    "ratio": 0.25} and
            root.get("kind") == 1 and root.get("startTimeUnixNano") == "1700000000000000000"
            and root.get("endTimeUnixNano") == "1700000000000001000", root)
    s.check("encoding: an event, an ERROR status with its message",
            child.get("events") == [{"timeUnixNano": "1700000000000000900", "name": "panic",
                                     "attributes": [{"key": "why",
                                                     "value": {"stringValue": "boom"}}]}] and
            child.get("status") == {"message": "panic: the call did not return", "code": 2},
            child)
    links = [(sp["spanId"], sp.get("links")) for sp in spans if sp["name"] == "main.root"]
    s.check("encoding: a link to another trace's span",
            links[0][1] is None and all(
                l and l[0]["traceId"] == traces[i] and l[0]["spanId"] == links[i][0]
                for i, (_, l) in enumerate(links[1:])), links)
    ra = root.get("_resource", {})
    s.check("encoding: the resource (OTEL_RESOURCE_ATTRIBUTES decoded, its service.name "
            "over the binary's name)",
            ra.get("service.name") == "fromlist" and
            ra.get("deployment.environment.name") == "test env" and
            ra.get("process.pid") == 4242 and ra.get("process.executable.name") == "otlp_send"
            and ra.get("process.runtime.version") == "go1.99.1" and
            ra.get("host.name") == os.uname().nodename and
            root.get("_scope", {}).get("name") == "gotrace", ra)
    n0 = len(col.spans())
    r = send(col.http_url, "spans", 1, OTEL_SERVICE_NAME="named",
             OTEL_RESOURCE_ATTRIBUTES="service.name=fromlist")
    got = wait_count(lambda: new_spans(n0), 2)
    s.check("encoding: OTEL_SERVICE_NAME outranks the list",
            len(got) == 2 and got[0]["_resource"].get("service.name") == "named", got)
    l0 = len(col.log_records())
    r = send(col.http_url, "logs", 3)
    logs = wait_count(lambda: col.log_records()[l0:], 3)
    s.check("encoding: log records (body, time, severity, attributes)",
            [(otlplib.value(l["body"]), l["timeUnixNano"], l["severityNumber"],
              otlplib.attrs(l)) for l in logs] ==
            [("line %d" % i, str(1700000000000000000 + i), 9, {"goid": 100 + i, "tid": 7})
             for i in range(3)] and "sent 3 log records" in r.stderr, describe(r) + str(logs))


# ---- what goes over the wire: a server of our own records the requests ----
class Recorder(http.server.BaseHTTPRequestHandler):
    answers = []   # status codes to give, in turn (then 200)
    got = []       # (path, headers, body)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        Recorder.got.append((self.path, dict(self.headers), body))
        code = Recorder.answers.pop(0) if Recorder.answers else 200
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *a):
        pass


if s.case("wire"):
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = "http://127.0.0.1:%d" % srv.server_port
    r = send(base, "spans", 1, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=base + "/elsewhere",
             OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer%20abc, x-tenant = t1",
             OTEL_EXPORTER_OTLP_COMPRESSION="gzip")
    path, hdrs, body = Recorder.got[0] if Recorder.got else ("", {}, b"")
    try:
        plain = gzip.decompress(body)
    except OSError:
        plain = b""
    s.check("wire: --otlp=URL outranks a signal's own endpoint, headers, gzip, "
            "Content-Type", r.returncode == 0 and path == "/v1/traces" and
            hdrs.get("Authorization") == "Bearer abc" and hdrs.get("x-tenant") == "t1" and
            hdrs.get("Content-Encoding") == "gzip" and
            hdrs.get("Content-Type") == "application/x-protobuf" and len(plain) > 100,
            describe(r) + str((path, hdrs, len(body))))
    paths = []
    for kw in [{"OTEL_EXPORTER_OTLP_ENDPOINT": base + "/prefix/"},
               {"OTEL_EXPORTER_OTLP_ENDPOINT": base + "/prefix",
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": base + "/elsewhere"}]:
        Recorder.got.clear()
        r = send("-", "spans", 1, **kw)
        paths.append(Recorder.got[0][0] if Recorder.got else r.stderr)
    s.check("wire: OTEL_EXPORTER_OTLP_ENDPOINT is a base (/v1/traces added), a signal's "
            "own endpoint is used as it is", paths == ["/prefix/v1/traces", "/elsewhere"],
            paths)
    # the Collector takes the gzipped body too
    n0 = len(col.spans())
    r = send(col.http_url, "spans", 2, OTEL_EXPORTER_OTLP_COMPRESSION="gzip")
    s.check("wire: the Collector decodes the gzipped requests",
            len(wait_count(lambda: new_spans(n0), 4)) == 4 and "sent 4 spans" in r.stderr,
            describe(r))
    # retryable answers are retried, others drop the request and say so
    Recorder.got.clear()
    Recorder.answers = [503, 429]
    r = send(base, "spans", 1)
    s.check("wire: 503 and 429 are retried until the backend takes it",
            [c[0] for c in Recorder.got] == ["/v1/traces"] * 3 and "sent 2 spans" in r.stderr
            and "dropped" not in r.stderr, describe(r))
    Recorder.got.clear()
    Recorder.answers = [400]
    r = send(base, "spans", 1)
    s.check("wire: a 400 drops the request, said with its status",
            len(Recorder.got) == 1 and re.search(r"dropped 2 spans \(.*HTTP 400\)", r.stderr)
            and "sent nothing" in r.stderr, describe(r))
    srv.shutdown()


# ---- call-graph mode: each call a span, the same calls as -f json's ----
def json_calls(path):
    calls, trees = [], {}
    for line in open(path).read().splitlines():
        o = json.loads(line)
        if o.get("type") == "call":
            calls.append(o["data"])
    for c in calls:
        trees.setdefault(c["tree"], []).append(c)
    return calls, trees


def fg_run(extra, prog_args, **kw):
    out = os.path.join(s.work, "otlp-calls.json")
    if os.path.exists(out):
        os.unlink(out)
    r = gt_run(["-f", "json", "-o", out, "--otlp=" + col.http_url] + extra +
               ["-c", b + " " + prog_args], **kw)
    calls, trees = json_calls(out) if os.path.exists(out) else ([], {})
    return r, calls, trees


if s.case("funcgraph"):
    n0 = len(col.spans())
    r, calls, trees = fg_run(["--funcgraph", "main.add*", "--funcgraph", "main.(*Student).String",
                              "--args", STUDENT_ARGS, "--rets", "main.add(r)",
                              "--args", "main.add(a, b, round)"],
                             "-rounds 2 -unit 5 -panic 1 -g 2")
    note_own_times(r.stderr)
    spans = wait_count(lambda: new_spans(n0), len(calls))
    s.check("funcgraph: one span per call of -f json, all sent",
            r.returncode == 0 and len(calls) > 10 and len(spans) == len(calls) and
            "sent %d spans" % len(calls) in r.stderr, describe(r))
    # the calls in order (the exporter sends each tree in preorder, as -f json prints)
    by_trace = {}
    for sp in spans:
        by_trace.setdefault(sp["traceId"], []).append(sp)
    bad = []
    if len(by_trace) != len(trees):
        bad.append("%d traces for %d trees" % (len(by_trace), len(trees)))
    for (tid, tsp), (_, tc) in zip(sorted(by_trace.items(), key=lambda kv: kv[1][0]["startTimeUnixNano"]),
                                   sorted(trees.items(), key=lambda kv: kv[1][0]["entry_ns"])):
        ids = {}
        for sp, c in zip(tsp, tc):
            a = otlplib.attrs(sp)
            ids[c["depth"]] = sp["spanId"]
            want_parent = ids.get(c["depth"] - 1, "") if c["depth"] else ""
            dur = int(sp["endTimeUnixNano"]) - int(sp["startTimeUnixNano"])
            if (sp["name"] != c["function"] or a.get("goid") != c["goid"] or
                    sp.get("parentSpanId", "") != want_parent or
                    int(sp["startTimeUnixNano"]) != c["entry_ns"] or
                    (c["duration_ns"] is not None and dur != c["duration_ns"]) or
                    a.get("oncpu_ns") != c["oncpu_ns"] or
                    a.get("caller") != c["caller"] or
                    {k[5:]: str(v) for k, v in a.items() if k.startswith("args.")} !=
                    {k: str(v) for k, v in c["args"].items()} or
                    {k[5:]: str(v) for k, v in a.items() if k.startswith("rets.")} !=
                    {k: str(v) for k, v in c["rets"].items()} or
                    (sp.get("status", {}).get("code") == 2) != c["panic"]):
                bad.append((sp, c))
    s.check("funcgraph: spans equal the calls (function, goid, nesting, start, duration, "
            "on-CPU time, caller, args and rets by name, panics as ERROR)", not bad,
            json.dumps(bad[:3], indent=1))
    add1 = [sp for sp in spans if sp["name"] == "main.add1"]
    durs = [(int(sp["endTimeUnixNano"]) - int(sp["startTimeUnixNano"])) / 1e6 for sp in add1
            if sp.get("status", {}).get("code") != 2]
    s.check("funcgraph: durations by the program's own clock (add1 in its timed window)",
            durs and all(took("add1", d, 6 * 5) for d in durs), (durs, fglib.OWN.get("add1")))
    adds = [otlplib.attrs(sp) for sp in spans if sp["name"] == "main.add"]
    s.check("funcgraph: Go integers by name are typed (ints, not text)",
            adds and all(isinstance(x.get("args.round"), int) and
                         isinstance(x.get("rets.r"), int) for x in adds), adds[:2])
    a = otlplib.attrs(add1[0]) if add1 else {}
    s.check("funcgraph: code.function, code.filepath, code.lineno, call_site, returned_at",
            a.get("code.function") == "main.add1" and
            str(a.get("code.filepath", "")).endswith("tests/go/funcgraph/main.go") and
            isinstance(a.get("code.lineno"), int) and
            a.get("call_site") == "main.go:%d" % M["call:add1"] and
            a.get("returned_at") == "main.go:%d" % M["ret:add1"], a)
    ra = spans[0]["_resource"] if spans else {}
    s.check("funcgraph: the resource names the traced program",
            ra.get("service.name") == "funcgraph" and ra.get("process.executable.name") ==
            "funcgraph" and ra.get("process.executable.path") == os.path.realpath(b) and str(ra.get("process.runtime.version", "")).startswith("go1.") and
            isinstance(ra.get("process.pid"), int) and "container.id" not in ra, ra)

if s.case("lineage"):
    n0 = len(col.spans())
    r, calls, trees = fg_run(["--funcgraph", "main.main", "--funcgraph", "main.add"],
                             "-rounds 1 -unit 1 -g 2")
    spans = wait_count(lambda: new_spans(n0), len(calls))
    mains = [sp for sp in spans if sp["name"] == "main.main"]
    adds = [sp for sp in spans if sp["name"] == "main.add"]
    ok = len(mains) == 1 and len(adds) == 2
    for sp in adds if ok else []:
        a, l = otlplib.attrs(sp), sp.get("links", [])
        ok = ok and a.get("goroutine.parent_goid") == otlplib.attrs(mains[0]).get("goid") and \
            a.get("goroutine.go_statement") == "main.go:%d" % M["go:worker"] and \
            len(l) == 1 and l[0]["traceId"] == mains[0]["traceId"] and \
            l[0]["spanId"] == mains[0]["spanId"] and sp["traceId"] != mains[0]["traceId"]
    s.check("lineage: a goroutine's first call links to the span its go statement ran in",
            r.returncode == 0 and ok, describe(r) + json.dumps(spans, indent=1)[:4000])


# ---- a script's printf lines as log records ----
if s.case("logs"):
    adds = s.go_build("adds")
    script = ('BEGIN { printf("begin\\n"); } '
              'go:main.add:entry { printf("add a=%d b=%d pid=%d tid=%d\\n", arg0, arg1, '
              'pid, tid); }')
    plain = s.run(["-e", script, "-c", adds])
    l0 = len(col.log_records())
    r = gt_run(["--otlp=" + col.http_url, "-e", script, "-c", adds])
    lines = r.stdout.splitlines()
    logs = wait_count(lambda: col.log_records()[l0:], len(lines))
    ids = re.compile(r"pid=\d+ tid=\d+")  # the runs' own processes
    s.check("logs: the printed text unchanged by --otlp",
            r.returncode == 0 and plain.returncode == 0 and
            ids.sub("", r.stdout) == ids.sub("", plain.stdout) and
            len(lines) == 7, describe(r) + describe(plain))
    s.check("logs: one log record per printf line, its text, in order",
            [otlplib.value(l["body"]) for l in logs] == lines and
            re.search(r"otlp: sent .*\b7 log records", r.stderr),
            describe(r) + json.dumps(logs, indent=1)[:3000])
    adds_logs = [l for l in logs if otlplib.value(l["body"]).startswith("add")]
    said = [re.search(r"pid=(\d+) tid=(\d+)", otlplib.value(l["body"])) for l in adds_logs]
    # the same probe's pid and tid, as the line prints them; add runs on main's goroutine
    s.check("logs: the traced process's pid and thread, goroutine 1, times in order",
            len(adds_logs) == 6 and all(
                m and l["_resource"].get("process.pid") == int(m.group(1)) and
                otlplib.attrs(l).get("thread.id") == int(m.group(2)) and
                otlplib.attrs(l).get("goid") == 1 for m, l in zip(said, adds_logs)) and
            [int(l["timeUnixNano"]) for l in adds_logs] ==
            sorted(int(l["timeUnixNano"]) for l in adds_logs) and
            abs(int(adds_logs[0]["timeUnixNano"]) / 1e9 - time.time()) < 60 if adds_logs
            else False, json.dumps(adds_logs[:2], indent=1))
    begin = [l for l in logs if otlplib.value(l["body"]) == "begin"]
    s.check("logs: BEGIN's line without a goroutine",
            len(begin) == 1 and "goid" not in otlplib.attrs(begin[0]), begin)


# ---- a script's maps as metrics: equal to what the same run printed ----
def metric_points(metrics, name):
    """The last export's data points of metric NAME: [(attributes, point)]."""
    got = [m for m in metrics if m["name"] == name]
    if not got:
        return None, []
    m = got[-1]
    kind = next(k for k in ("sum", "gauge", "histogram") if k in m)
    return m, [(otlplib.attrs(p), p) for p in m[kind].get("dataPoints", [])]


def key_text(attrs):
    """A point's key as -f json prints it ("1", "1,x"), "" for a map without keys."""
    if "key" in attrs:
        return str(attrs["key"])
    return ",".join(str(attrs[k]) for k in sorted(attrs, key=lambda k: int(k.split(".")[1])))


if s.case("metrics"):
    adds = s.go_build("adds")
    script = ('go:main.add:entry { @calls = count(); @by[arg0] = count(); @s = sum(arg1); '
              '@h = hist(arg1); @l = lhist(arg0, 0, 10, 2); @a = avg(arg1); @mn = min(arg1); '
              '@mx = max(arg1); @st = stats(arg1); @pair[arg0, "x"] = count(); }')
    m0 = len(col.metrics())
    r = gt_run(["-f", "json", "--otlp=" + col.http_url, "-e", script, "-c", adds])
    printed = {}
    for line in r.stdout.splitlines():
        o = json.loads(line)
        if o.get("type") in ("map", "hist", "stats"):
            printed.update(o["data"])
    metrics = wait_count(lambda: col.metrics()[m0:], 12)
    bad = []

    def same(name, want, got):
        if want != got:
            bad.append((name, want, got))

    m, pts = metric_points(metrics, "calls")
    same("calls", (printed.get("@calls"), True, 2),
         (int(pts[0][1].get("asInt", -1)) if pts else None, m and m["sum"].get("isMonotonic"),
          m and m["sum"].get("aggregationTemporality")))
    for name in ("by", "pair"):
        m, pts = metric_points(metrics, name)
        same(name, printed.get("@" + name),
             {key_text(a): int(p["asInt"]) for a, p in pts})
    for name in ("s", "a", "mn", "mx"):
        m, pts = metric_points(metrics, name)
        same(name, printed.get("@" + name), int(pts[0][1]["asInt"]) if pts else None)
    for part, key in (("count", "count"), ("avg", "average"), ("total", "total")):
        m, pts = metric_points(metrics, "st." + part)
        same("st." + part, (printed.get("@st") or {}).get(key),
             int(pts[0][1]["asInt"]) if pts else None)
    for name in ("h", "l"):
        m, pts = metric_points(metrics, name)
        if not pts:
            bad.append((name, "no points"))
            continue
        p = pts[0][1]
        bounds = [float(b) for b in p.get("explicitBounds", [])]
        counts = [int(c) for c in p.get("bucketCounts", [])]
        # each printed bucket [min, max] is the OTLP bucket whose upper bound is max
        want = {b.get("max"): b["count"] for b in printed.get("@" + name, []) if b["count"]}
        got = {int(bounds[i]) if i < len(bounds) else "inf": c
               for i, c in enumerate(counts) if c}
        same(name, (want, sum(want.values())), (got, int(p.get("count", 0))))
    s.check("metrics: every map as a metric, equal to the same run's printed maps (count, "
            "per-key counts, tuple keys, sum, avg, min, max, stats, hist and lhist buckets)",
            r.returncode == 0 and not bad and len(printed) == 10,
            describe(r) + "\n" + json.dumps(bad, indent=1)[:3000])


# ---- a backend that is down, then comes back ----
def rss_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))
    except (OSError, AttributeError):
        return None


def hot_run(rate, seconds, extra_env, during=None):
    """tests/go/hotloop's main.step, one root call (one span) each, RATE a second for
    SECONDS, traced with --funcgraph --otlp (the text to /dev/null). DURING(p), while it
    runs. Returns (status, stderr, the program's own count of calls, the spans gotrace
    said it sent, dropped by the exporter, dropped whole in the ring buffer)."""
    p = gt_run(["-o", "/dev/null", "--otlp=" + col.http_url, "--funcgraph", "main.step",
                "-c", "%s -n %d -rate %d -work 10 -phases 1" % (hot, rate * seconds, rate)],
               start=True, **extra_env)
    lines, attached = [], threading.Event()

    def read():
        for line in p.stderr:
            lines.append(line)
            if line.startswith("Attaching"):
                attached.set()
        attached.set()
    t = threading.Thread(target=read)
    t.start()
    p.stdout.close()
    if during:
        attached.wait(60)
        during(p)
    try:
        p.wait(timeout=seconds * 4 + 120)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    t.join()
    stderr = "".join(lines)

    def num(pattern):
        m = re.search(pattern, stderr)
        return int(m.group(1)) if m else 0
    return (p.returncode, stderr, num(r"hotloop: calls=(\d+)"), num(r"otlp: sent (\d+) spans"),
            num(r"otlp: dropped (\d+) spans"), num(r"(\d+) root calls were dropped whole"))


def rss_while_down(p, samples):
    """gotrace's memory every 100 ms for 3 s from when it traces, the backend away."""
    t_end = time.time() + 3
    while time.time() < t_end and p.poll() is None:
        samples.append(rss_kb(p.pid))
        time.sleep(0.1)
    col.start()  # back, on the same port


hot = s.go_build("hotloop")
if s.case("backend down"):
    col.stop()
    qbytes = 1 << 20
    rss = []
    # (an ASan build holds freed memory in quarantine: none, so that its RSS is gotrace's)
    asan = ":".join(filter(None, [s.env.get("ASAN_OPTIONS"), "quarantine_size_mb=0"]))
    rc, err, calls, sent, dropped, ring = hot_run(
        20000, 6, dict(GT_OTLP_QUEUE_BYTES=str(qbytes), OTEL_BSP_SCHEDULE_DELAY="100",
                       ASAN_OPTIONS=asan), lambda p: rss_while_down(p, rss))
    got = wait_count(lambda: col.spans(col.runs), sent)
    s.check("backend down: what was sent arrived after it came back, what was not is said "
            "as dropped, and the two (with the ring buffer's) are every call the program made",
            rc == 0 and calls == 120000 and sent > 0 and dropped > 0 and len(got) == sent and
            sent + dropped + ring == calls,
            "status %s, %d calls by the program's count, %d sent, %d dropped by the exporter, "
            "%d in the ring buffer, %d arrived\n%s" %
            (rc, calls, sent, dropped, ring, len(got), err[-2000:]))
    print("    %d calls: %d sent, %d dropped by the exporter, %d in the ring buffer" %
          (calls, sent, dropped, ring))
    m, pts = metric_points(wait_count(lambda: [x for x in col.metrics(col.runs) if x["name"]
                                               == "gotrace.otlp.dropped"], 1),
                           "gotrace.otlp.dropped")
    said = {a.get("signal"): int(p["asInt"]) for a, p in pts}
    s.check("backend down: the drops as a metric too (gotrace.otlp.dropped, at most what "
            "was said at the end)", 0 < said.get("traces", 0) <= dropped, said)
    rss = [x for x in rss if x]
    half = len(rss) // 2
    # the queue (1 MiB) fills in a third of a second; unbounded, the second half of the
    # outage alone (1.5 s, 30,000 spans) would add ~5 MB
    s.check("backend down: no growth while the backend is away (the queue's bound holds)",
            len(rss) > 10 and max(rss[half:]) - max(rss[:half]) <= qbytes // 1024, rss)
    s.check("backend down: said while running, not only at the end, with the backend's "
            "answer", re.search(r"warning: otlp: \d+ items dropped \(the export queue is full; "
                                r"the backend: .*(refused|connect)[^\n]*\n(.*\n)*hotloop: calls",
                                err), err[-1500:])

if s.case("50000 spans a second"):
    t0 = time.time()
    rc, err, calls, sent, dropped, ring = hot_run(50000, 30, {})
    took_s = time.time() - t0
    got = wait_count(lambda: col.spans(col.runs), sent, timeout=60)
    s.check("50000 spans a second for 30 s: every call sent or said as dropped (by the "
            "program's own count)",
            rc == 0 and calls == 1500000 and sent + dropped + ring == calls and
            len(got) >= sent,
            "status %s, %d calls, %d sent, %d dropped by the exporter, %d in the ring buffer, "
            "%d arrived, %.0f s\n%s" % (rc, calls, sent, dropped, ring, len(got), took_s,
                                       err[-1500:]))
    print("    %d calls in %.0f s: %d sent, %d dropped by the exporter, %d in the ring buffer"
          % (calls, took_s, sent, dropped, ring))


# ---- Jaeger: the trace in its query API ----
if s.case("jaeger"):
    try:
        jg = otlplib.Jaeger(otlplib.build_jaeger(s), parent=s.work).start()
    except RuntimeError as e:
        jg = None
        s.check("jaeger: builds and starts", False, e)
    if jg:
        out = os.path.join(s.work, "otlp-jaeger.json")
        if os.path.exists(out):
            os.unlink(out)
        t0 = time.time()
        r = gt_run(["-f", "json", "-o", out, "--otlp=" + jg.http_url, "--funcgraph",
                    "main.add*", "-c", b + " -rounds 2 -unit 1"], OTEL_SERVICE_NAME="gt-jaeger")
        calls, trees = json_calls(out) if os.path.exists(out) else ([], {})
        spans = otlplib.wait(lambda: (lambda sp: sp if len(sp) >= len(calls) else None)(
            jg.spans("gt-jaeger", start=t0 - 60)), 20) or jg.spans("gt-jaeger", start=t0 - 60)
        s.check("jaeger: the service and one trace per tree, every call a span",
                r.returncode == 0 and "gt-jaeger" in jg.services() and
                len({sp["traceId"] for sp in spans}) == len(trees) and
                sorted(sp["name"] for sp in spans) == sorted(c["function"] for c in calls),
                describe(r) + json.dumps(spans, indent=1)[:2000])
        jg.close()


# ---- docs/fleet.md's one command: Collector -> Jaeger, the workshop app traced ----
if s.case("fleet demo"):
    r = subprocess.run([os.path.join(otlplib.REPO, "scripts", "fleet-demo.py"), "--gotrace",
                        s.gotrace, "-d", "1s"], capture_output=True, text=True, timeout=600,
                       env=s.env)
    m = re.search(r"Jaeger holds (\d+) spans in (\d+) traces of service workshop \(gotrace "
                  r"sent (\d+) spans of (\d+) call trees\)", r.stdout)
    s.check("fleet demo: Jaeger holds every span gotrace sent, one trace per tree",
            r.returncode == 0 and m and m.group(1) == m.group(3) and int(m.group(1)) > 100
            and m.group(2) == m.group(4) and "OK: every span arrived" in r.stdout,
            describe(r))


# ---- bad settings: one message, exit 2, nothing attached ----
if s.case("errors"):
    for name, args, kw, want in [
        ("a URL that is not http", ["--otlp=ftp://x:1", "--funcgraph", "main.add"], {},
         "'ftp://x:1' is not an http:// or https:// URL"),
        ("gRPC asked for", ["--otlp", "--funcgraph", "main.add"],
         {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "sends http/protobuf only"),
        ("a bad header list", ["--otlp", "--funcgraph", "main.add"],
         {"OTEL_EXPORTER_OTLP_HEADERS": "novalue"}, "'novalue' is not KEY=VALUE"),
        ("a bad timeout", ["--otlp", "--funcgraph", "main.add"],
         {"OTEL_EXPORTER_OTLP_TIMEOUT": "soon"}, "is not a non-negative integer"),
        ("--otlp with --summary", ["--otlp", "--summary", "--funcgraph", "main.add"], {},
         "--summary counts calls per function; --otlp is for the trees"),
    ]:
        r = gt_run(args + ["-c", b + " -rounds 1 -unit 1"], **kw)
        errs = [l for l in r.stderr.splitlines() if "error" in l]
        s.check("errors: " + name, r.returncode == 2 and len(errs) == 1 and want in errs[0]
                and not r.stdout, describe(r))
    s.check("errors: nothing left attached", not bpf_leftovers(), bpf_leftovers())

col.close()
s.finish()
