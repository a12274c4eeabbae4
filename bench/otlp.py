#!/usr/bin/env python3
"""bench/otlp.py: what --otlp costs, in one run (bench/run.sh section 8; figures in
docs/performance.md).

    bench/otlp.py --gotrace build/gotrace [--out DIR] [--n 200000] [--runs 3]

The receiver is the OpenTelemetry Collector of tests/otlp/otelcol (built once into the
test cache by tests/runtime/otlplib.py), on loopback, on the same two CPUs.

1. The cost per call of --funcgraph main.work on tests/go/loop (one root call a call,
   one span each): untraced, traced with export off, traced with --otlp; the loop's
   own ns per call, medians of --runs interleaved rounds; added ns = traced - untraced.
2. The export's throughput: the spans gotrace said it sent over the wall time of the
   traced run (the loop as fast as it goes), and what the Collector received.
3. Peak memory (VmHWM) of gotrace with export off and on, by GNU time."""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path[:0] = [os.path.join(REPO, "tests"), os.path.join(REPO, "tests", "runtime")]
import otlplib  # noqa: E402

TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


def run(cmd, env=None):
    """(ns per call the loop printed, stderr, peak RSS in KiB or None, wall seconds)."""
    full = ([TIME, "-f", "GT_MAXRSS %M"] if TIME else []) + cmd
    t0 = time.time()
    r = subprocess.run(full, capture_output=True, text=True, env=env)
    wall = time.time() - t0
    out = r.stdout + r.stderr
    m = re.search(r"ns_per_call[=:\s]+([\d.]+)", out)
    rss = re.search(r"GT_MAXRSS (\d+)", r.stderr)
    if r.returncode:
        sys.exit("bench/otlp.py: failed (%d): %s\n%s" % (r.returncode, " ".join(cmd),
                                                          out[-1500:]))
    return float(m.group(1)) if m else None, r.stderr, int(rss.group(1)) if rss else None, wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gotrace", required=True)
    ap.add_argument("--out", default="/tmp/gotrace-bench/otlp")
    ap.add_argument("--n", type=int, default=200000)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    host = otlplib.Host("bench/otlp.py")
    loop = os.path.join(a.out, "loop")
    subprocess.run([host.go, "build", "-o", loop, "main.go"], check=True,
                   cwd=os.path.join(REPO, "tests", "go", "loop"),
                   env=dict(host.env, CGO_ENABLED="0"))
    col = otlplib.Collector(otlplib.build_otelcol(host), parent=a.out).start()
    fg = [a.gotrace, "-q", "-o", "/dev/null", "--funcgraph", "main.work"]
    prog = ["-c", "%s %d" % (loop, a.n)]
    rows = {"untraced": [], "export off": [], "export on": []}
    rss = {"export off": [], "export on": []}
    rates = []
    for _ in range(a.runs):
        rows["untraced"].append(run([loop, str(a.n)])[0])
        ns, _, kb, _ = run(fg + prog)
        rows["export off"].append(ns)
        rss["export off"].append(kb)
        ns, err, kb, wall = run(fg + ["--otlp=" + col.http_url] + prog)
        rows["export on"].append(ns)
        rss["export on"].append(kb)
        m = re.search(r"otlp: sent (\d+) spans", err)
        d = re.search(r"otlp: dropped (\d+) spans", err)
        rates.append((int(m.group(1)) if m else 0, int(d.group(1)) if d else 0, wall))
    base = statistics.median(rows["untraced"])
    print("# section 8: --otlp (bench/otlp.py), --funcgraph main.work, N=%d, %d runs, "
          "the Collector on the same machine" % (a.n, a.runs))
    print("%-12s %14s %14s %16s" % ("", "ns/call", "added ns/call", "gotrace peak RSS"))
    for k in ("untraced", "export off", "export on"):
        med = statistics.median(rows[k])
        kb = [x for x in rss.get(k, []) if x]
        print("%-12s %14.0f %14s %16s" % (k, med, "-" if k == "untraced" else
                                          "%.0f" % (med - base),
                                          "%d MiB" % (max(kb) // 1024) if kb else "-"))
    sent = statistics.median(r[0] for r in rates)
    wall = statistics.median(r[2] for r in rates)
    got = len(col.spans())
    print("export: %d spans sent a run (median), %d dropped at most, in %.1f s of traced "
          "run: %.0f spans/s; the Collector received %d of %d sent in all" %
          (sent, max(r[1] for r in rates), wall, sent / wall if wall else 0, got,
           sum(r[0] for r in rates)))
    col.close()


if __name__ == "__main__":
    main()
