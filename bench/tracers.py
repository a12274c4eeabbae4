#!/usr/bin/env python3
"""bench/tracers.py: gotrace --funcgraph next to Go's own eBPF tracers on the same work,
in one run (bench/run.sh section 7; figures in docs/performance.md).

    bench/tracers.py --gotrace build/gotrace [--out DIR] [--n 100000] [--runs 3]
                     [--sites 2000] [--tools ~/.cache/gotrace-bench/tools]

The tracers are built from their Go modules into --tools (outside the repo), once:
delve (`go install github.com/go-delve/delve/cmd/dlv@VERSION`, traced with `dlv trace
--ebpf`) and go-ftrace (`go install github.com/hitzhangjie/go-ftrace/cmd/ftrace@latest`).
One the module proxy does not serve is skipped with the go command's reason.

gotrace runs twice: as it runs by default (each call's on-CPU time measured) and with
--no-oncpu.

The same binaries serve every tracer, built with -gcflags=all=-N -l (delve's eBPF
tracing needs it: on optimised Go 1.25+ code it sets no tracepoint, "empty OP stack"):
  - tests/go/loop calls main.work N times and prints its own ns per call: the per-call
    cost of a tracer is median(traced) - median(untraced), the runs interleaved;
  - bench/gen_many.py's program with SITES functions, each called 3 times: the wall time
    of the whole traced command (start, attach, run, detach) for 1 and for all of them.
Each run's output is checked against the program's own count: calls shown (gotrace:
whole trees printed + root calls it says it dropped; delve: its "> goroutine" lines).
Peak RSS is the tracer's (wait4's ru_maxrss; the traced program is smaller)."""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DELVE = "github.com/go-delve/delve/cmd/dlv@v1.27.2"
FTRACE = "github.com/hitzhangjie/go-ftrace/cmd/ftrace@latest"


def go():
    return subprocess.run([os.path.join(REPO, "scripts", "find-go.sh")], capture_output=True,
                          text=True, check=True).stdout.strip()


def install(tools, pkg, name):
    """The tool's path, or (None, why) when it cannot be built here."""
    d = os.path.join(tools, re.sub(r"[^A-Za-z0-9.@-]+", "_", pkg))
    exe = os.path.join(d, name)
    if os.path.exists(exe):
        return exe, None
    os.makedirs(d, exist_ok=True)
    # delve's eBPF backend is built with cgo only ("eBPF is not supported" without)
    env = dict(os.environ, GOBIN=d, GOFLAGS="-mod=mod", CGO_ENABLED="1")
    r = subprocess.run([go(), "install", pkg], env=env, capture_output=True, text=True,
                       timeout=900)
    if r.returncode or not os.path.exists(exe):
        why = [l for l in r.stderr.splitlines() if l.strip()]
        return None, (why[0] if why else "go install failed")[:200]
    return exe, None


def build(src, out, env_extra=None):
    env = dict(os.environ, CGO_ENABLED="0", GOTOOLCHAIN="local")
    r = subprocess.run([go(), "build", "-gcflags=all=-N -l", "-o", out, src], env=env,
                       capture_output=True, text=True, cwd=os.path.dirname(src))
    if r.returncode:
        sys.exit("tracers.py: go build %s: %s" % (src, r.stderr))
    return out


def run(cmd, out, err, timeout=900):
    """(wall s, peak RSS MB, exit status, stdout text, stderr text) of CMD."""
    t0 = time.monotonic()
    with open(out, "w") as fo, open(err, "w") as fe:
        p = subprocess.Popen(cmd, stdout=fo, stderr=fe)
        deadline = t0 + timeout
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                p.kill()
                pid, status, ru = os.wait4(p.pid, 0)
                break
            time.sleep(0.02)
        p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t0
    return wall, ru.ru_maxrss / 1024, p.returncode, open(out).read(), open(err).read()


def ns_per_call(text):
    m = re.search(r"ns_per_call=([\d.]+)", text)
    return float(m.group(1)) if m else None


class Tool:
    """How one tracer traces FUNCS of BINARY run with ARGS, and what it showed."""

    def __init__(self, name, exe):
        self.name, self.exe = name, exe

    def cmd(self, binary, funcs, args, outfile):
        if self.name.startswith("gotrace"):
            pats = [a for f in funcs for a in ("--funcgraph", f)]
            if self.name.endswith("--no-oncpu"):
                pats.append("--no-oncpu")
            return [self.exe, "-v", *pats, "-o", outfile, "-c", " ".join([binary, *args])]
        if self.name == "delve":
            # its argument is a regular expression: the globs' '*' is '.*'
            regex = "^(" + "|".join(re.escape(f).replace("\\*", ".*") for f in funcs) + ")$"
            return [self.exe, "trace", "--ebpf", "--exec", binary, regex, "--", *args]
        return [self.exe, "-u", funcs[0] if len(funcs) == 1 else "main.fn*", binary]

    def shown(self, outfile, stdout, stderr):
        """(calls shown, calls it says it dropped) from its output."""
        if self.name.startswith("gotrace"):
            text = open(outfile).read() if os.path.exists(outfile) else ""
            trees = len(re.findall(r"^\S+ goid=\d+ +\S+\(.*\) \{", text, re.M))
            m = re.search(r"(\d+) root calls were dropped whole", stderr)
            return trees, int(m.group(1)) if m else 0
        if self.name == "delve":  # its trace lines go to stderr
            return len(re.findall(r"^> goroutine\(\d+\): ", stderr, re.M)), 0
        return len(re.findall(r"\{\s*$", stdout, re.M)), 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gotrace", default=os.path.join(REPO, "build", "gotrace"))
    ap.add_argument("--out", default="/tmp/gotrace-bench/tracers")
    ap.add_argument("--n", type=int, default=100000, help="calls of main.work a run")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sites", type=int, default=2000)
    ap.add_argument("--tools", default=os.path.expanduser("~/.cache/gotrace-bench/tools"))
    o = ap.parse_args()
    os.makedirs(o.out, exist_ok=True)

    # gotrace as it runs by default (on-CPU time measured), and without it
    tools = [Tool("gotrace", os.path.abspath(o.gotrace)),
             Tool("gotrace --no-oncpu", os.path.abspath(o.gotrace))]
    notes = []
    for name, pkg, exe in (("go-ftrace", FTRACE, "ftrace"), ("delve", DELVE, "dlv")):
        path, why = install(o.tools, pkg, exe)
        if path:
            tools.append(Tool(name, path))
        else:
            notes.append("%s skipped: go install %s: %s" % (name, pkg, why))
    loop = build(os.path.join(REPO, "tests", "go", "loop", "main.go"), os.path.join(o.out, "loop"))
    subprocess.run([sys.executable, os.path.join(HERE, "gen_many.py"),
                    os.path.join(o.out, "many.go"), str(o.sites)], check=True)
    many = build(os.path.join(o.out, "many.go"), os.path.join(o.out, "many"))

    rows = {}  # (metric, tool) -> text

    def checked(t, tag, binary, funcs, args, want):
        outf = os.path.join(o.out, "%s.%s.out" % (tag, t.name))
        wall, rss, st, so, se = run(t.cmd(binary, funcs, args, outf), outf + ".stdout",
                                    outf + ".stderr")
        shown, dropped = t.shown(outf, so, se)
        ok = st == 0 and shown + dropped == want
        why = "" if ok else "exit %d, %d shown + %d dropped of %d calls" % (st, shown, dropped,
                                                                            want)
        return wall, rss, so + se, ok, why, shown, dropped

    # per-call cost: untraced and traced runs interleaved, round by round
    base, traced = [], {t.name: [] for t in tools}
    for r in range(o.runs):
        _, _, _, so, _ = run([loop, str(o.n)], os.path.join(o.out, "base.out"),
                             os.path.join(o.out, "base.err"))
        base.append(ns_per_call(so))
        for t in tools:
            wall, rss, text, ok, why, shown, dropped = checked(t, "loop.r%d" % r, loop,
                                                               ["main.work"], [str(o.n)], o.n)
            v = ns_per_call(text)
            traced[t.name].append((v, ok, why, rss, dropped))
    b = statistics.median(x for x in base if x is not None)
    for t in tools:
        runs = traced[t.name]
        bad = [w for _, ok, w, _, _ in runs if not ok]
        vals = [v for v, ok, _, _, _ in runs if ok and v is not None]
        rows["cost", t.name] = ("FAILED: " + bad[0]) if bad or not vals else \
            "%.0f" % (statistics.median(vals) - b)
        rows["dropped", t.name] = "%d" % max(d for *_, d in runs)
        rows["rss_loop", t.name] = "%.1f" % max(r for *_, r, _ in runs)

    # attach: the whole command's wall time for 1 and for all SITES functions
    for label, funcs in (("1", ["main.fn0000"]), (str(o.sites), ["main.fn*"])):
        want = 3 * len(funcs) if funcs != ["main.fn*"] else 3 * o.sites
        for t in tools:
            wall, rss, text, ok, why, shown, dropped = checked(t, "many" + label, many, funcs,
                                                               ["3"], want)
            rows["wall" + label, t.name] = ("%.2f" % wall) + ("" if ok else " (wrong: %s)" % why)
            rows["rss" + label, t.name] = "%.1f" % rss
            if t.name == "gotrace":
                m = re.search(r"attached .* in ([\d.]+) ms", text)
                rows["attach" + label, t.name] = m.group(1) if m else "-"

    names = [t.name for t in tools]
    table = [
        ("untraced loop, ns/call", lambda n: "%.0f" % b if n == "gotrace" else ""),
        ("call graph of main.work, added ns/call", lambda n: rows.get(("cost", n), "-")),
        ("  root calls dropped (most of a run)", lambda n: rows.get(("dropped", n), "-")),
        ("  peak RSS, MB", lambda n: rows.get(("rss_loop", n), "-")),
        ("1 function: whole command, s", lambda n: rows.get(("wall1", n), "-")),
        ("%s functions: whole command, s" % o.sites, lambda n: rows.get(("wall%d" % o.sites, n), "-")),
        ("  peak RSS, MB", lambda n: rows.get(("rss%d" % o.sites, n), "-")),
    ]
    print("# bench/tracers.py: N=%d calls, %d runs, %d sites; outputs in %s"
          % (o.n, o.runs, o.sites, o.out))
    print("%-42s" % "metric" + "".join("%-26s" % n for n in names))
    for label, f in table:
        print("%-42s" % label + "".join("%-26s" % f(n) for n in names))
    for n in notes:
        print("# " + n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
