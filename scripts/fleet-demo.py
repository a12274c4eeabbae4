#!/usr/bin/env python3
"""The fleet pipeline on one machine (docs/fleet.md): Jaeger v2 and an OpenTelemetry
Collector built from their Go modules (once, into ~/.cache/gotrace-tests: minutes the
first time), the workshop app traced with --funcgraph --otlp into the Collector, which
passes the spans on to Jaeger; then the traces as Jaeger's query API gives them.

    scripts/fleet-demo.py [--gotrace build/gotrace] [-d 2s] [--keep]

--keep leaves Jaeger (its UI and API) and the Collector running until Ctrl-C. Exit 0 when
Jaeger holds every span gotrace sent, one trace per call tree gotrace printed."""

import argparse
import json
import os
import re
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(REPO, "tests"), os.path.join(REPO, "tests", "runtime")]
import otlplib  # noqa: E402


def say(msg):
    print("fleet-demo: " + msg, flush=True)


def tree_text(spans):
    """One trace's spans as an indented tree: name, duration, goid."""
    kids = {}
    for sp in spans:
        kids.setdefault(sp.get("parentSpanId", ""), []).append(sp)
    lines = []

    def walk(parent, depth):
        for sp in sorted(kids.get(parent, []), key=lambda x: int(x["startTimeUnixNano"])):
            a = otlplib.attrs(sp)
            us = (int(sp["endTimeUnixNano"]) - int(sp["startTimeUnixNano"])) / 1e3
            lines.append("  %s%s  %.1f us  goid=%s" % ("  " * depth, sp["name"], us,
                                                       a.get("goid")))
            walk(sp["spanId"], depth + 1)
    walk("", 0)
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gotrace", default=os.path.join(REPO, "build", "gotrace"))
    ap.add_argument("-d", default="2s", help="how long the workshop app runs")
    ap.add_argument("--keep", action="store_true", help="leave the receivers running")
    a = ap.parse_args()
    if not os.access(a.gotrace, os.X_OK):
        sys.exit("fleet-demo: no %s: build it first (the README's first command)" % a.gotrace)
    host = otlplib.Host("fleet-demo")
    work = os.path.join(REPO, "build", "fleet-demo")
    os.makedirs(work, exist_ok=True)
    app = os.path.join(work, "workshop")
    subprocess.run([host.go, "build", "-o", app, "main.go"], check=True, env=dict(
        host.env, CGO_ENABLED="0"), cwd=os.path.join(REPO, "examples", "workshop"))
    say("building Jaeger %s and the Collector %s (once; minutes the first time)" %
        (otlplib.JAEGER_VERSION, otlplib.OTELCOL_VERSION))
    jaeger = otlplib.Jaeger(otlplib.build_jaeger(host), parent=work).start()
    col = otlplib.Collector(otlplib.build_otelcol(host), parent=work,
                            forward=jaeger.http_url).start()
    say("Jaeger: OTLP at %s, query API and UI at %s" % (jaeger.http_url, jaeger.query_url))
    say("Collector: OTLP at %s, traces on to Jaeger" % col.http_url)
    calls = os.path.join(work, "calls.json")
    cmd = [a.gotrace, "--otlp=" + col.http_url, "--funcgraph", "main.*Work",
           "--funcgraph", "main.Checkout", "--funcgraph", "main.mayPanic",
           "-f", "json", "-o", calls, "-c", "%s -d %s" % (app, a.d)]
    say("OTEL_SERVICE_NAME=workshop " + " ".join(
        "'%s'" % c if re.search(r"[ *()]", c) else c for c in cmd))
    t0 = time.time()
    r = subprocess.run(cmd, env=dict(os.environ, OTEL_SERVICE_NAME="workshop"),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    m = re.search(r"otlp: sent (\d+) spans", r.stderr)
    sent = int(m.group(1)) if m else 0
    trees = set()
    if os.path.exists(calls):
        for line in open(calls):
            o = json.loads(line)
            if o.get("type") == "call":
                trees.add(o["data"]["tree"])
    # the Collector batches for up to a second before it passes spans on
    spans = otlplib.wait(lambda: (lambda sp: sp if len(sp) >= sent else None)(
        jaeger.spans("workshop", start=t0 - 60, limit=100000)), 30) or \
        jaeger.spans("workshop", start=t0 - 60, limit=100000)
    by_trace = {}
    for sp in spans:
        by_trace.setdefault(sp["traceId"], []).append(sp)
    say("Jaeger holds %d spans in %d traces of service workshop (gotrace sent %d spans of "
        "%d call trees)" % (len(spans), len(by_trace), sent, len(trees)))
    if by_trace:
        tid, first = max(by_trace.items(), key=lambda kv: len(kv[1]))
        say("the largest trace, %s:\n%s" % (tid, tree_text(first)))
        say("ask Jaeger yourself: curl '%s/api/v3/traces/%s'" % (jaeger.query_url, tid))
    ok = r.returncode == 0 and sent > 0 and len(spans) == sent and len(by_trace) == len(trees)
    say("OK: every span arrived" if ok else "MISMATCH: not every span arrived")
    if a.keep:
        say("Jaeger's UI: %s (Ctrl-C ends it)" % jaeger.query_url)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
    col.close()
    jaeger.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
