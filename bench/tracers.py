#!/usr/bin/env python3
"""bench/tracers.py: gotrace --funcgraph next to Go's own eBPF tracers on the same work,
in one run (bench/run.sh section 7; figures in docs/performance.md).

    bench/tracers.py --gotrace build/gotrace [--out DIR] [--n 100000] [--runs 3]
                     [--sites 2000] [--tools ~/.cache/gotrace-bench/tools]

The tracers are built into --tools (outside the repo), once: delve from its Go module
(`go install github.com/go-delve/delve/cmd/dlv@VERSION`, traced with `dlv trace
--ebpf`), go-ftrace from its source in --peers (../shared/peers/build-go-ftrace.sh; the
module proxy does not serve it). One that cannot be built is skipped with the reason.

The targets are built by Go 1.24 (the newest 1.24 release, tests/gotool.py's toolchain
cache): go-ftrace reads goroutine ids through delve 1.8's DWARF reader, which cannot read
the DWARF 5 of Go 1.25+. go-ftrace attaches to a binary rather than starting it: it is
started, answered "y", and the program is run once it says "start tracing"; then SIGINT.

gotrace runs twice: as it runs by default (each call's on-CPU time measured) and with
--no-oncpu.

The same binaries serve every tracer, built with -gcflags=all=-N -l (delve's eBPF
tracing needs it: on optimised Go 1.25+ code it sets no tracepoint, "empty OP stack"):
  - tests/go/loop calls main.work N times and prints its own ns per call: the per-call
    cost of a tracer is median(traced) - median(untraced), the runs interleaved;
  - bench/gen_many.py's program with SITES functions, each called 3 times: for 1, 100 and
    all SITES of them, the time from the tracer's start to attached (gotrace: its
    "Attaching N functions..." line; go-ftrace: its "start tracing"; delve says nothing)
    and the wall time of the whole traced command (start, attach, run, detach), each
    the median of --runs runs.
Each run's output is checked against the program's own count: calls shown (gotrace:
whole trees printed + root calls it says it dropped; delve: its "> goroutine" lines).
Peak RSS is the tracer's, read by GNU time (/usr/bin/time; "-" without it)."""

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DELVE = "github.com/go-delve/delve/cmd/dlv@v1.27.2"
TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None
sys.path.insert(0, os.path.join(REPO, "tests"))
import gotool  # noqa: E402


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


def build_ftrace(tools, peers):
    """go-ftrace built by PEERS/build-go-ftrace.sh, or (None, why)."""
    d = os.path.join(tools, "go-ftrace")
    exe = os.path.join(d, "ftrace")
    if os.path.exists(exe):
        return exe, None
    script = os.path.join(peers, "build-go-ftrace.sh")
    if not os.path.exists(script):
        return None, "%s is absent" % script
    r = subprocess.run(["sh", script, d], capture_output=True, text=True, timeout=900,
                       env=dict(os.environ, PATH=os.path.dirname(go()) + os.pathsep +
                                os.environ["PATH"]))
    if r.returncode or not os.path.exists(exe):
        why = [l for l in (r.stderr + r.stdout).splitlines() if l.strip()]
        return None, (why[-1] if why else "build-go-ftrace.sh failed")[:200]
    return exe, None


def go124(notes):
    """The go command of the newest Go 1.24 release (downloaded once), or the machine's,
    with the reason in NOTES (go-ftrace reads goids of Go 1.24 and older only)."""
    rel = [r for r in gotool.releases() if r.startswith("go1.24.")]
    g = gotool.toolchain(rel[-1]) if rel else None
    if not g:
        notes.append("no Go 1.24 toolchain (%s): targets built by the machine's Go" %
                     (gotool.last_error or "the proxy lists no go1.24"))
    return g or go()


def build(src, out, gocmd):
    env = dict(os.environ, CGO_ENABLED="0", GOTOOLCHAIN="local",
               PATH=os.path.dirname(gocmd) + os.pathsep + os.environ["PATH"])
    r = subprocess.run([gocmd, "build", "-gcflags=all=-N -l", "-o", out, src], env=env,
                       capture_output=True, text=True, cwd=os.path.dirname(src))
    if r.returncode:
        sys.exit("tracers.py: go build %s: %s" % (src, r.stderr))
    return out


def run(cmd, out, err, timeout=900, ready=None, then=None, stdin_text=None):
    """(wall s, peak RSS MB, exit status, stdout text, stderr text, attached s) of CMD.
    READY: a regex of a line on its stderr saying it is attached (attached s: from the
    start to that line, else None); THEN: a command run once it is, after which CMD gets
    SIGINT (a tracer that attaches to a binary instead of starting it)."""
    t0 = time.monotonic()
    seen = threading.Event()
    attached = []
    # Peak RSS through GNU time: a child of this process inherits its high-water mark
    # (the kernel keeps the larger across exec, and vfork shares this process's memory),
    # and this process holds whole outputs of 400,000 calls; time's own child does not.
    rssf = out + ".rss"
    timed = [TIME, "-q", "-f", "%M", "-o", rssf] if TIME else []
    with open(out, "w") as fo, open(err, "w") as fe:
        p = subprocess.Popen(timed + cmd, stdout=fo, stderr=subprocess.PIPE, text=True,
                             start_new_session=True,
                             stdin=subprocess.PIPE if stdin_text else subprocess.DEVNULL)
        if stdin_text:
            p.stdin.write(stdin_text)
            p.stdin.close()

        def pump():  # its stderr to ERR, the ready line timed as it comes
            for line in p.stderr:
                fe.write(line)
                if ready and not attached and re.search(ready, line):
                    attached.append(time.monotonic() - t0)
                    seen.set()
            seen.set()
        th = threading.Thread(target=pump)
        th.start()
        if then:
            seen.wait(timeout)
            if attached and p.poll() is None:
                subprocess.run(then, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               timeout=timeout)
                time.sleep(0.5)  # its last events read
                os.killpg(p.pid, signal.SIGINT)  # time ignores SIGINT; the tracer not
        deadline = t0 + timeout
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                os.killpg(p.pid, signal.SIGKILL)
                pid, status, ru = os.wait4(p.pid, 0)
                break
            time.sleep(0.02)
        p.returncode = os.waitstatus_to_exitcode(status)
        th.join()
    wall = time.monotonic() - t0
    rss = None
    if TIME and os.path.exists(rssf):
        m = re.search(r"^(\d+)\s*$", open(rssf).read(), re.M)
        rss = int(m.group(1)) / 1024 if m else None
    return (wall, rss, p.returncode, open(out).read(), open(err).read(),
            attached[0] if attached else None)


def peak(rss):
    rss = [r for r in rss if r is not None]
    return "%.1f" % max(rss) if rss else "-"


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
            # the targets are Go 1.24's (go-ftrace's limit); delve 1.27 asks for 1.25
            return [self.exe, "trace", "--ebpf", "--check-go-version=false", "--exec",
                    binary, regex, "--", *args]
        return [self.exe, *[a for f in funcs for a in ("-u", f)], binary]

    def ready(self):
        """The line on stderr that says the tracer is attached (None: it says none)."""
        return {"go-ftrace": r"start tracing"}.get(self.name,
                                                   None if self.name == "delve" else
                                                   r"^Attaching \d+ functions?\.\.\.$")

    def shown(self, outfile, stdout, stderr):
        """(calls shown, calls it says it dropped) from its output."""
        if self.name.startswith("gotrace"):
            text = open(outfile).read() if os.path.exists(outfile) else ""
            trees = len(re.findall(r"^\S+ goid=\d+ +\S+\(.*\) \{", text, re.M))
            m = re.search(r"(\d+) root calls were dropped whole", stderr)
            return trees, int(m.group(1)) if m else 0
        if self.name == "delve":  # its trace lines go to stderr
            return len(re.findall(r"^> goroutine\(\d+\): ", stderr, re.M)), 0
        # go-ftrace: "TIME GOID ... FUNC(ARGS) { CALLER FILE:LINE" opens each call
        return len(re.findall(r"\) \{ ", stdout)), 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gotrace", default=os.path.join(REPO, "build", "gotrace"))
    ap.add_argument("--out", default="/tmp/gotrace-bench/tracers")
    ap.add_argument("--n", type=int, default=100000, help="calls of main.work a run")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sites", type=int, default=2000)
    ap.add_argument("--tools", default=os.path.expanduser("~/.cache/gotrace-bench/tools"))
    ap.add_argument("--peers", default=os.path.join(REPO, "..", "shared", "peers"),
                    help="where build-go-ftrace.sh and go-ftrace's source are")
    o = ap.parse_args()
    os.makedirs(o.out, exist_ok=True)

    # gotrace as it runs by default (on-CPU time measured), and without it
    tools = [Tool("gotrace", os.path.abspath(o.gotrace)),
             Tool("gotrace --no-oncpu", os.path.abspath(o.gotrace))]
    notes = []
    # the Go 1.24 toolchain kept beside the tools, not in bench/run.sh's per-run cache
    os.environ.setdefault("GT_GO_CACHE", os.path.join(o.tools, "go"))
    path, why = build_ftrace(o.tools, o.peers)
    if path:
        tools.append(Tool("go-ftrace", path))
    else:
        notes.append("go-ftrace skipped: %s" % why)
    path, why = install(o.tools, DELVE, "dlv")
    if path:
        tools.append(Tool("delve", path))
    else:
        notes.append("delve skipped: go install %s: %s" % (DELVE, why))
    gocmd = go124(notes)
    notes.append("targets built by %s" % gotool.version(gocmd))
    loop = build(os.path.join(REPO, "tests", "go", "loop", "main.go"),
                 os.path.join(o.out, "loop"), gocmd)
    subprocess.run([sys.executable, os.path.join(HERE, "gen_many.py"),
                    os.path.join(o.out, "many.go"), str(o.sites)], check=True)
    many = build(os.path.join(o.out, "many.go"), os.path.join(o.out, "many"), gocmd)

    rows = {}  # (metric, tool) -> text

    def checked(t, tag, binary, funcs, args, want):
        outf = os.path.join(o.out, "%s.%s.out" % (tag, t.name.replace(" ", "")))
        attach_to = t.name == "go-ftrace"  # it attaches to BINARY; the program is run apart
        prog_out = outf + ".program"
        then = ["sh", "-c", '"$0" "$@" >"%s"' % prog_out, binary, *args] if attach_to else None
        wall, rss, st, so, se, att = run(t.cmd(binary, funcs, args, outf), outf + ".stdout",
                                         outf + ".stderr", ready=t.ready(), then=then,
                                         stdin_text="y\n" if attach_to else None)
        if attach_to:  # the program's own output ("calls=", ns_per_call)
            so = so + (open(prog_out).read() if os.path.exists(prog_out) else "")
            st = 0 if st in (0, -signal.SIGINT, 130) else st
        shown, dropped = t.shown(outf, so, se)
        ok = st == 0 and shown + dropped == want and (att is not None or not t.ready())
        why = "" if ok else "exit %d, %d shown + %d dropped of %d calls%s" % (
            st, shown, dropped, want, "" if att is not None or not t.ready() else
            ", never said it was attached")
        # a run that worked but lost calls without saying so: its time stands, the loss
        # is said beside it
        lost = want - shown - dropped if st == 0 and 0 < shown + dropped < want and \
            (att is not None or not t.ready()) else 0
        return wall, rss, so + se, ok or lost > 0, why if not lost else \
            "%d of %d calls missing" % (lost, want), shown, dropped, att

    # per-call cost: untraced and traced runs interleaved, round by round
    base, traced = [], {t.name: [] for t in tools}
    for r in range(o.runs):
        so = run([loop, str(o.n)], os.path.join(o.out, "base.out"),
                 os.path.join(o.out, "base.err"))[3]
        base.append(ns_per_call(so))
        for t in tools:
            wall, rss, text, ok, why, shown, dropped, att = checked(
                t, "loop.r%d" % r, loop, ["main.work"], [str(o.n)], o.n)
            v = ns_per_call(text)
            traced[t.name].append((v, ok, why, rss, dropped))
    b = statistics.median(x for x in base if x is not None)
    for t in tools:
        runs = traced[t.name]
        bad = [w for _, ok, w, _, _ in runs if not ok]
        vals = [v for v, ok, _, _, _ in runs if ok and v is not None]
        lossy = [w for _, ok, w, _, _ in runs if ok and w]
        rows["cost", t.name] = ("FAILED: " + bad[0]) if bad or not vals else \
            "%.0f" % (statistics.median(vals) - b) + (" (%s)" % lossy[-1] if lossy else "")
        rows["dropped", t.name] = "%d" % max(d for *_, d in runs)
        rows["rss_loop", t.name] = peak([r for *_, r, _ in runs])

    # attach: start to attached, and the whole command, for 1, 100 and all SITES functions
    sets = [("1", ["main.fn0000"], 1), ("100", ["main.fn00*"], 100),
            (str(o.sites), ["main.fn*"], o.sites)]
    for label, funcs, nf in sets:
        for t in tools:
            walls, atts, rsss, bad, lossy = [], [], [], [], []
            for r in range(o.runs):
                wall, rss, text, ok, why, shown, dropped, att = checked(
                    t, "many%s.r%d" % (label, r), many, funcs, ["3"], 3 * nf)
                (walls if ok else bad).append(wall if ok else why)
                if ok and why:
                    lossy.append(why)
                rsss.append(rss)
                if ok and att is not None:
                    atts.append(att)
            rows["wall" + label, t.name] = ("FAILED: " + bad[0]) if bad else \
                "%.2f" % statistics.median(walls) + (" (%s)" % lossy[-1] if lossy else "")
            rows["attach" + label, t.name] = "%.2f" % statistics.median(atts) if atts and \
                not bad else "-"
            rows["rss" + label, t.name] = peak(rsss)

    names = [t.name for t in tools]
    table = [
        ("untraced loop, ns/call", lambda n: "%.0f" % b if n == "gotrace" else ""),
        ("call graph of main.work, added ns/call", lambda n: rows.get(("cost", n), "-")),
        ("  root calls dropped (most of a run)", lambda n: rows.get(("dropped", n), "-")),
        ("  peak RSS, MB", lambda n: rows.get(("rss_loop", n), "-"))]
    for label, _, _ in sets:
        table += [
            ("%s function%s: start to attached, s" % (label, "" if label == "1" else "s"),
             lambda n, l=label: rows.get(("attach" + l, n), "-")),
            ("  whole command, s", lambda n, l=label: rows.get(("wall" + l, n), "-")),
            ("  peak RSS, MB", lambda n, l=label: rows.get(("rss" + l, n), "-"))]
    print("# bench/tracers.py: N=%d calls, %d runs (medians), %d sites; outputs in %s"
          % (o.n, o.runs, o.sites, o.out))
    w = {n: max([len(n)] + [len(f(n)) for _, f in table]) + 2 for n in names}
    print("%-42s" % "metric" + "".join(n.ljust(w[n]) for n in names))
    for label, f in table:
        print("%-42s" % label + "".join(f(n).ljust(w[n]) for n in names))
    for n in notes:
        print("# " + n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
