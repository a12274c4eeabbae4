"""Two real OTLP receivers for the tests of gotrace's OpenTelemetry export, built from
their Go modules at test time into the toolchain cache (gotool.cache_dir()), never into
the repository:

- Collector: the OpenTelemetry Collector v0.161.0 of tests/otlp/otelcol (the OTLP
  receiver, the contrib file exporter writing OTLP JSON lines, the debug exporter);
- Jaeger: Jaeger v2 (github.com/jaegertracing/jaeger/cmd/jaeger v1.75.0) with memory
  storage, read back through its HTTP API v3.

    col = otlplib.Collector(otlplib.build_otelcol(s)).start()
    ... gotrace exports to col.http_url ('http://127.0.0.1:PORT'; add /v1/traces) ...
    spans = otlplib.wait(col.spans)   # once some came ([] at the timeout)
    col.stop(); col.start()           # down and back up on the same ports
    col.close()

`python3 tests/runtime/otlplib.py --selftest` builds both, sends each OTLP/HTTP JSON
and reads it back."""

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

import gomods
from gtlib import REPO, TESTS, built_lock, free_port, gotool, stop_server  # noqa: F401

OTELCOL_VERSION = "v0.161.0"
OTELCOL_SRC = os.path.join(TESTS, "otlp", "otelcol")
JAEGER_VERSION = "v1.75.0"
JAEGER_MOD = "github.com/jaegertracing/jaeger"


# -- building ----------------------------------------------------------------------------

class Host:
    """What the builders need of a test suite, for a run outside one (scripts/fleet-demo.py,
    bench/otlp.py): the machine's go, the environment, and WHO's message when the
    receivers cannot be built."""
    def __init__(self, who):
        self.go = gotool.go()
        self.env = dict(os.environ, GOTOOLCHAIN="local")
        self.who = who

    def unavailable(self, msg):
        sys.exit("%s: cannot build the receivers: %s" % (self.who, msg))


def _build(s, gocmd, out, cwd, args, fetch, timeout, stamp=""):
    """OUT, built by `go build ARGS` in the module dir CWD, and rebuilt when STAMP (a
    digest of its source) is not the one it was built from. As gomods.install: locked
    while built, the proxy unreachable is s.unavailable(), FETCH only downloads (-n)."""
    if fetch:
        return _go_build(s, gocmd, out, cwd, args, fetch, timeout, stamp)
    with built_lock(out):
        if os.path.exists(out) and _read(out + ".stamp") == stamp:
            return out
        return _go_build(s, gocmd, out, cwd, args, fetch, timeout, stamp)


def _go_build(s, gocmd, out, cwd, args, fetch, timeout, stamp):
    env = dict(gomods.build_env(s, gocmd), GOWORK="off")
    tmp = "%s.tmp%d" % (out, os.getpid())
    cmd = [gocmd, "build"] + (["-n"] if fetch else []) + ["-trimpath", "-o", tmp] + args
    t0 = time.time()
    for extra in ({}, {"GOSUMDB": "off"}):  # where the checksum database is unreachable
        try:
            r = subprocess.run(cmd, cwd=cwd, env=dict(env, **extra), capture_output=True,
                               text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            s.unavailable("%s: %s timed out" % (gotool.version(gocmd), " ".join(cmd[1:])))
        if r.returncode == 0 or ("verifying" not in r.stderr and "sum.golang" not in r.stderr):
            break
    if r.returncode != 0:
        if "requires go >= " in r.stderr:  # collector v0.161.0: go 1.26.0, and $GT_GO older
            s.unavailable("%s: %s" % (" ".join(cmd[1:]), r.stderr.strip()[-300:]))
        if any(w in r.stderr for w in gomods.NET_ERRORS):
            s.unavailable("module proxy unreachable (%s: %s)"
                          % (" ".join(cmd[1:]), r.stderr.strip()[-300:]))
        raise RuntimeError("%s failed:\n%s" % (" ".join(cmd), r.stderr))
    if fetch:
        print("fetched %s's modules in %.0f s" % (os.path.basename(out), time.time() - t0))
        return out
    os.rename(tmp, out)
    with open(out + ".stamp", "w") as f:
        f.write(stamp)
    print("built %s (%.0f MB) with %s in %.0f s" % (
        out, os.path.getsize(out) / 1e6, gotool.version(gocmd), time.time() - t0))
    return out


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def build_otelcol(s, gocmd=None, fetch=False, timeout=1800):
    """The collector of tests/otlp/otelcol (~600 packages: minutes of CPU cold), built
    in place with -mod=readonly: its go.sum is whole, and nothing is written there."""
    h = hashlib.sha256()
    for n in ("main.go", "go.mod", "go.sum"):
        with open(os.path.join(OTELCOL_SRC, n), "rb") as f:
            h.update(f.read())
    out = os.path.join(gotool.cache_dir(), "otelcol-" + OTELCOL_VERSION, "otelcol")
    return _build(s, gocmd or s.go, out, OTELCOL_SRC, ["-mod=readonly", "."], fetch,
                  timeout, h.hexdigest())


def build_jaeger(s, gocmd=None, fetch=False, timeout=1800):
    """Jaeger v2, from a module that requires it: `go install .../cmd/jaeger@v1.75.0`
    refuses a module whose go.mod has a replace directive, as jaeger's has
    (Shopify/sarama => v1.33.0); the wrapper repeats it, so the build graph is
    upstream's."""
    out = os.path.join(gotool.cache_dir(), "jaeger-" + JAEGER_VERSION, "jaeger")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    wrap = tempfile.mkdtemp(prefix="wrap-", dir=os.path.dirname(out))
    try:
        with open(os.path.join(wrap, "go.mod"), "w") as f:
            f.write("module gotrace.test/wrap\n\ngo 1.24.6\n\nrequire %s %s\n\n"
                    "replace github.com/Shopify/sarama => github.com/Shopify/sarama v1.33.0\n"
                    % (JAEGER_MOD, JAEGER_VERSION))
        return _build(s, gocmd or s.go, out, wrap, ["-mod=mod", JAEGER_MOD + "/cmd/jaeger"],
                      fetch, timeout, JAEGER_VERSION)
    finally:
        shutil.rmtree(wrap, ignore_errors=True)


# -- reading OTLP JSON -------------------------------------------------------------------

def value(v):
    """The Python value of an OTLP JSON AnyValue (intValue comes as a string: int64)."""
    if "stringValue" in v:
        return v["stringValue"]
    if "intValue" in v:
        return int(v["intValue"])
    if "doubleValue" in v:
        return float(v["doubleValue"])
    if "boolValue" in v:
        return v["boolValue"]
    if "arrayValue" in v:
        return [value(x) for x in v["arrayValue"].get("values", [])]
    if "kvlistValue" in v:
        return {kv["key"]: value(kv.get("value", {})) for kv in v["kvlistValue"].get("values", [])}
    if "bytesValue" in v:
        return v["bytesValue"]  # base64, as OTLP JSON has it
    return None


def attrs(obj):
    """{key: value} of the 'attributes' of a span, resource, data point, log record..."""
    return {kv["key"]: value(kv.get("value", {})) for kv in (obj or {}).get("attributes", [])}


def _flat(resources, scopes_key, items_key):
    """The items of RESOURCES (resourceSpans...), each with '_resource' (its resource's
    attributes, a dict) and '_scope' (its InstrumentationScope) added."""
    out = []
    for r in resources:
        ra = attrs(r.get("resource"))
        for sc in r.get(scopes_key, []):
            for it in sc.get(items_key, []):
                out.append(dict(it, _resource=ra, _scope=sc.get("scope", {})))
    return out


def wait(fn, timeout=15, interval=0.1):
    """FN()'s first truthy result, polled for up to TIMEOUT s; its last result else."""
    deadline = time.time() + timeout
    while True:
        got = fn()
        if got or time.time() > deadline:
            return got
        time.sleep(interval)


def _port_open(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


# -- receivers ---------------------------------------------------------------------------

def _die_with_parent():
    """In the child: SIGKILL when the thread that started it ends, so that a test
    killed (or its output piped to head) leaves no receiver holding its ports."""
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class _Receiver:
    """A receiver process run in a temporary directory on ports chosen once, so that
    stop() and start() again bring it back where an exporter left it."""
    name = "receiver"

    def __init__(self, binary, parent=None, ready_timeout=60):
        self.binary = binary
        self.dir = tempfile.mkdtemp(prefix="gt-%s-" % self.name, dir=parent)  # e.g. s.work
        self.ready_timeout = ready_timeout
        self.proc = None
        self.runs = 0  # starts so far; run N logs to log-N.txt

    def start(self):
        """Starts it and returns once it serves; RuntimeError (with its log) if it ends
        or is not ready within ready_timeout s."""
        assert self.proc is None, "already running"
        self.runs += 1
        cfg = os.path.join(self.dir, "config-%d.yaml" % self.runs)
        with open(cfg, "w") as f:
            f.write(self.config())
        with open(self.log_path(), "w") as log:
            self.proc = subprocess.Popen([self.binary, "--config", "file:" + cfg], cwd=self.dir,
                                         stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
        deadline = time.time() + self.ready_timeout
        while not self.ready():
            if self.proc.poll() is not None or time.time() > deadline:
                rc = self.proc.poll()
                self.stop(kill=True)
                raise RuntimeError("%s %s (config %s):\n%s" % (
                    self.name, "exited %s" % rc if rc is not None else "not ready in %d s"
                    % self.ready_timeout, cfg, self.log()[-3000:]))
            time.sleep(0.05)
        return self

    def stop(self, kill=False):
        """Ends it: SIGTERM (a graceful shutdown), or SIGKILL, a backend that dies (the
    collector's file exporter then loses what it had not flushed: 100 ms' worth)."""
        if self.proc:
            if kill:
                self.proc.kill()
                self.proc.wait()
            else:
                stop_server(self.proc)
            self.proc = None

    def restart(self, kill=False):
        self.stop(kill)
        return self.start()

    def close(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()

    def log_path(self, run=None):
        return os.path.join(self.dir, "log-%d.txt" % (run or self.runs))

    def log(self, run=None):
        """The output of run RUN (default: the last)."""
        return _read(self.log_path(run)) or ""


class Collector(_Receiver):
    """The collector: OTLP/HTTP at http_url (gRPC at grpc_port too if GRPC), everything
    it gets written by the file exporter, one file per run (out-N.jsonl), and logged
    in brief by the debug exporter."""
    name = "otelcol"

    def __init__(self, binary, grpc=False, forward=None, **kw):
        """FORWARD: an OTLP/HTTP URL (Jaeger's) the traces go on to as well."""
        super().__init__(binary, **kw)
        self.http_port = free_port()
        self.http_url = "http://127.0.0.1:%d" % self.http_port
        self.grpc_port = free_port() if grpc else None
        self.forward = forward

    def config(self):
        grpc = ("      grpc:\n        endpoint: 127.0.0.1:%d\n" % self.grpc_port
                if self.grpc_port else "")  # a protocol left out is not served
        pipe = "{receivers: [otlp], exporters: [file, debug]}"
        tpipe = ("{receivers: [otlp], exporters: [file, debug, otlphttp]}" if self.forward
                 else pipe)
        fwd = ("  otlphttp:\n    endpoint: %s\n" % self.forward) if self.forward else ""
        return """receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
%sexporters:
%s  file:
    path: %s
    flush_interval: 100ms  # buffered, flushed each 1 s by default
  debug:
    verbosity: basic
service:
  telemetry:
    metrics:
      level: none  # else a Prometheus endpoint on :8888
  pipelines:
    traces: %s
    metrics: %s
    logs: %s
""" % (self.http_port, grpc, fwd, self.out_path(), tpipe, pipe, pipe)

    def ready(self):
        # receivers start after the exporters: a listening receiver is a whole pipeline
        return _port_open(self.http_port) and (not self.grpc_port or
                                               _port_open(self.grpc_port))

    def out_path(self, run=None):
        return os.path.join(self.dir, "out-%d.jsonl" % (run or self.runs))

    def documents(self, run=None):
        """The TracesData/MetricsData/LogsData JSON objects written so far, one a
        request (a batch), of run RUN or (None) of every run, in order."""
        docs = []
        for n in [run] if run else range(1, self.runs + 1):
            text = _read(self.out_path(n)) or ""
            # a line is written, then its newline: a last line without one is unfinished
            docs += [json.loads(l) for l in text.split("\n")[:-1] if l.strip()]
        return docs

    def resource_spans(self, run=None):
        return [r for d in self.documents(run) for r in d.get("resourceSpans", [])]

    def resource_metrics(self, run=None):
        return [r for d in self.documents(run) for r in d.get("resourceMetrics", [])]

    def resource_logs(self, run=None):
        return [r for d in self.documents(run) for r in d.get("resourceLogs", [])]

    def spans(self, run=None):
        """Every span, with '_resource' (attributes) and '_scope' added."""
        return _flat(self.resource_spans(run), "scopeSpans", "spans")

    def metrics(self, run=None):
        return _flat(self.resource_metrics(run), "scopeMetrics", "metrics")

    def log_records(self, run=None):
        return _flat(self.resource_logs(run), "scopeLogs", "logRecords")


class Jaeger(_Receiver):
    """Jaeger v2 all in one with memory storage (empty again after a restart): OTLP/HTTP
    at http_url, the query service (HTTP API v3 and UI) at query_url."""
    name = "jaeger"

    def __init__(self, binary, **kw):
        super().__init__(binary, **kw)
        self.http_port = free_port()
        self.http_url = "http://127.0.0.1:%d" % self.http_port
        self.query_port = free_port()
        self.query_url = "http://127.0.0.1:%d" % self.query_port
        self.query_grpc_port = free_port()  # served whatever we say: not its 16685

    def config(self):
        return """service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none  # else a Prometheus endpoint on :8888
extensions:
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 100000
  jaeger_query:
    storage:
      traces: mem
    enable_tracing: false  # on by default in v2: it would export its own spans
    http:
      endpoint: 127.0.0.1:%d
    grpc:
      endpoint: 127.0.0.1:%d
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
""" % (self.query_port, self.query_grpc_port, self.http_port)

    def ready(self):
        return _port_open(self.http_port) and self._get("/api/v3/services") is not None

    def _get(self, path, **query):
        url = self.query_url + path + ("?" + urllib.parse.urlencode(query) if query else "")
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                return json.load(r)
        except urllib.error.HTTPError as e:
            if e.code == 404:  # what /api/v3/traces answers for no trace
                return {}
            raise RuntimeError("GET %s: %s %s" % (url, e.code, e.read()[:500]))
        except OSError:
            return None

    def services(self):
        return (self._get("/api/v3/services") or {}).get("services", [])

    def traces(self, service, start=0, end=None, raw=False, limit=1000):
        """The resourceSpans of the traces of SERVICE (a resource's service.name) that
        started between START and END (Unix seconds; default: from 1970 to a day from
        now). RAW: as stored, without the query service's adjustments (clock skew,
        span links, ...). The memory store needs query.num_traces: LIMIT."""
        def rfc3339(t):
            return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
        got = self._get("/api/v3/traces", **{
            "query.service_name": service,
            "query.start_time_min": rfc3339(int(start)),
            "query.start_time_max": rfc3339(int(end or time.time() + 86400) + 1),
            "query.num_traces": limit, "query.raw_traces": "true" if raw else "false"})
        return (got or {}).get("result", {}).get("resourceSpans", [])

    def spans(self, service, **kw):
        """Every span of SERVICE's traces, with '_resource' and '_scope' added."""
        return _flat(self.traces(service, **kw), "scopeSpans", "spans")


# -- self-check --------------------------------------------------------------------------

def post(url, doc, timeout=10):
    """(status, body) of an OTLP/HTTP JSON request; status None if nothing listens."""
    req = urllib.request.Request(url, data=json.dumps(doc).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError as e:
        return None, str(e)


def _selftest():
    from gtlib import Suite

    class Standalone:  # what the builders need of a Suite
        env = dict(os.environ)
        go = gotool.go()
        unavailable = staticmethod(Suite.unavailable)
    s = Standalone()
    results = []

    def check(name, ok, detail=""):
        print("%s %s%s" % ("ok  " if ok else "FAIL", name, (": " + detail) if detail else ""))
        results.append(bool(ok))

    now = time.time_ns()
    resource = {"attributes": [{"key": "service.name",
                                "value": {"stringValue": "otlplib-selftest"}}]}
    scope = {"name": "otlplib", "version": "1"}

    def traces(span_id, name):
        # OTLP/HTTP JSON: ids in hex (not base64 as protobuf's JSON mapping has
        # bytes), int64 and fixed64 as decimal strings, enums as numbers
        return {"resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": scope,
                "spans": [{"traceId": "5b8efff798038103d269b633813fc60c", "spanId": span_id,
                           "name": name, "kind": 2, "startTimeUnixNano": str(now),
                           "endTimeUnixNano": str(now + 1500000),
                           "attributes": [{"key": "http.status", "value": {"intValue": "200"}}],
                           "status": {}}]}]}]}
    metrics = {"resourceMetrics": [{"resource": resource, "scopeMetrics": [{"scope": scope,
               "metrics": [{"name": "selftest.calls", "unit": "1", "sum": {
                   "aggregationTemporality": 2, "isMonotonic": True, "dataPoints": [{
                       "startTimeUnixNano": str(now - 10**9), "timeUnixNano": str(now),
                       "asInt": "42", "attributes": [{"key": "fn", "value": {
                           "stringValue": "main.work"}}]}]}}]}]}]}
    logs = {"resourceLogs": [{"resource": resource, "scopeLogs": [{"scope": scope,
            "logRecords": [{"timeUnixNano": str(now), "severityNumber": 9,
                            "severityText": "INFO", "body": {"stringValue": "hello"},
                            "traceId": "5b8efff798038103d269b633813fc60c",
                            "spanId": "eee19b7ec3c1b174"}]}]}]}

    t0 = time.time()
    oc = build_otelcol(s)
    t1 = time.time()
    jg = build_jaeger(s)
    print("builds: otelcol %.0f s (%.1f MB), jaeger %.0f s (%.1f MB)" % (
        t1 - t0, os.path.getsize(oc) / 1e6, time.time() - t1, os.path.getsize(jg) / 1e6))

    col = Collector(oc)
    try:
        t = time.time()
        col.start()
        print("collector ready in %.2f s at %s" % (time.time() - t, col.http_url))
        for path, doc in (("/v1/traces", traces("eee19b7ec3c1b174", "selftest-span")),
                          ("/v1/metrics", metrics), ("/v1/logs", logs)):
            st, body = post(col.http_url + path, doc)
            check("collector POST " + path, st == 200, "%s %s" % (st, body))
        sp = wait(col.spans)
        print("collector spans:", json.dumps(sp))
        check("collector span", len(sp) == 1 and sp[0]["name"] == "selftest-span"
              and sp[0]["traceId"] == "5b8efff798038103d269b633813fc60c"
              and attrs(sp[0]) == {"http.status": 200}
              and sp[0]["_resource"].get("service.name") == "otlplib-selftest")
        ms = wait(col.metrics)
        print("collector metrics:", json.dumps(ms))
        check("collector metric", len(ms) == 1 and ms[0]["name"] == "selftest.calls"
              and ms[0]["sum"]["dataPoints"][0]["asInt"] == "42")
        lg = wait(col.log_records)
        print("collector logs:", json.dumps(lg))
        check("collector log", len(lg) == 1 and lg[0]["body"] == {"stringValue": "hello"})
        # down: refused; back on the same port: served, the first run's data kept
        col.stop(kill=True)
        st, body = post(col.http_url + "/v1/traces", traces("eee19b7ec3c1b175", "x"))
        check("collector down refuses", st is None, body)
        t = time.time()
        col.start()
        print("collector restarted in %.2f s on port %d" % (time.time() - t, col.http_port))
        st, body = post(col.http_url + "/v1/traces", traces("eee19b7ec3c1b175", "after"))
        check("collector back", st == 200, "%s %s" % (st, body))
        sp = wait(lambda: len(col.spans()) == 2 and col.spans())
        check("collector spans of both runs", [x["name"] for x in sp or []]
              == ["selftest-span", "after"], json.dumps([x["name"] for x in sp or []]))
        col.stop()
        print("collector debug exporter said:", [l for l in col.log().splitlines()
                                                  if "Traces" in l][:1])
    finally:
        col.close()

    jae = Jaeger(jg)
    try:
        t = time.time()
        jae.start()
        print("jaeger ready in %.2f s at %s, query %s" % (time.time() - t, jae.http_url,
                                                          jae.query_url))
        st, body = post(jae.http_url + "/v1/traces", traces("eee19b7ec3c1b174", "selftest-span"))
        check("jaeger POST /v1/traces", st == 200, "%s %s" % (st, body))
        sv = wait(lambda: "otlplib-selftest" in jae.services() and jae.services())
        check("jaeger services", sv and "otlplib-selftest" in sv, json.dumps(sv))
        tr = wait(lambda: jae.traces("otlplib-selftest"))
        print("jaeger traces:", json.dumps(tr))
        sp = jae.spans("otlplib-selftest")
        check("jaeger span", len(sp) == 1 and sp[0]["name"] == "selftest-span"
              and sp[0]["traceId"] == "5b8efff798038103d269b633813fc60c"
              and attrs(sp[0]).get("http.status") == 200, json.dumps(sp))
        jae.restart()
        check("jaeger restarted on its ports, empty", jae.traces("otlplib-selftest") == [])
        st, body = post(jae.http_url + "/v1/traces", traces("eee19b7ec3c1b175", "after"))
        sp = wait(lambda: jae.spans("otlplib-selftest"))
        check("jaeger back", st == 200 and [x["name"] for x in sp] == ["after"],
              "%s %s" % (st, json.dumps(sp)))
    finally:
        jae.close()
    print("%d passed, %d failed" % (results.count(True), results.count(False)))
    return 0 if all(results) else 1


if __name__ == "__main__":
    if sys.argv[1:] != ["--selftest"]:
        sys.exit("usage: otlplib.py --selftest")
    sys.exit(_selftest())
