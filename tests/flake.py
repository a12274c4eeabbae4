#!/usr/bin/env python3
"""Hunts flaky checks: runs chosen ctest tests N times, beside busy loops, and reports
every check that failed, with how often.

    tests/flake.py [-n 10] [--load 2] [--build build] [--log DIR] REGEX...

Each round runs `ctest -R REGEX -j1 -V` once for every REGEX (ctest's own names:
'runtime/', 'conformance', 'kernels/linux-6.1'), with LOAD processes each spinning
on a CPU for the whole hunt (`--load 0`: none). Every FAIL line of a test's output
counts as one failure of that check (its `[N s]` timing and a trailing
`(... s)` figure are taken off the name, so the same check of two rounds is one row);
a test that fails without a FAIL line (a crash, a timeout) counts as a failure of
"<whole test>". The failures' full output is kept in LOG/round-N.log (default
build/flake), and the table so far in LOG/table.md after every round. The tests get
scripts/test.sh's environment (GT_REQUIRE_BPF=1, its GOCACHE and GT_TESTBIN). Ends
with a table (markdown, for docs/reliability.md) of every test run:
its rounds, failed rounds and each failing check; exit status 1 when anything
failed."""

import argparse
import io
import collections
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

START = re.compile(r"^\s*Start\s+(\d+): (\S+)")
RESULT = re.compile(r"^\s*\d+/\d+ Test\s+#(\d+): (\S+) \.+\**\s*(\w[\w ]*?)\s+[\d.]+ sec")
TIMING = re.compile(r" \[[\d.]+ s\]$")
FIGURE = re.compile(r" \([^()]*\d+(?:\.\d+)?\s*m?s[^()]*\)$")


def spin():
    """A busy loop of its own: one process per CPU of load."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def check_name(line):
    name = TIMING.sub("", line[5:].strip())
    return FIGURE.sub("", name)


def run_round(build, regex, log):
    """(per test {name: passed?}, per test [failed checks]) of one ctest -R REGEX."""
    t0 = time.time()
    p = subprocess.run(["ctest", "-R", regex, "-j1", "-V"], cwd=build,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    names, results, fails = {}, {}, collections.defaultdict(list)
    for line in p.stdout.splitlines():
        m = START.match(line)
        if m:
            names[m.group(1)] = m.group(2)
            continue
        m = RESULT.match(line)
        if m:
            results[m.group(2)] = m.group(3).strip() == "Passed"
            continue
        m = re.match(r"^(\d+): (.*)$", line)
        if m and m.group(2).startswith("FAIL "):
            fails[names.get(m.group(1), "test " + m.group(1))].append(check_name(m.group(2)))
    for t, ok in results.items():
        if not ok and not fails.get(t):
            fails[t].append("<whole test>")
    if not results:
        fails[regex].append("<no test matched, or ctest failed: status %d>" % p.returncode)
    if fails:
        with open(log, "a") as f:
            f.write("==== ctest -R %s (%.0f s)\n%s\n" % (regex, time.time() - t0, p.stdout))
    return results, fails


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=10, help="rounds (default 10)")
    ap.add_argument("--load", type=int, default=2, help="busy loops beside (default 2)")
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--log", default=None)
    ap.add_argument("regex", nargs="+")
    a = ap.parse_args()
    logdir = a.log or os.path.join(a.build, "flake")
    os.makedirs(logdir, exist_ok=True)
    # the environment scripts/test.sh gives the tests
    gocache = os.environ.get("GT_GO_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "gotrace-tests", "go")
    os.environ.setdefault("GT_REQUIRE_BPF", "1")
    os.environ.setdefault("GOCACHE", os.path.join(gocache, "gocache"))
    os.environ.setdefault("GT_TESTBIN", os.path.join(os.path.abspath(a.build), "testwork", "bin"))
    loads = [spin() for _ in range(a.load)]
    runs = collections.Counter()
    failed_rounds = collections.Counter()
    checks = collections.defaultdict(collections.Counter)
    t0 = time.time()
    done = 0
    try:
        for n in range(1, a.n + 1):
            log = os.path.join(logdir, "round-%d.log" % n)
            if os.path.exists(log):
                os.unlink(log)
            for regex in a.regex:
                results, fails = run_round(a.build, regex, log)
                for t in results:
                    runs[t] += 1
                for t, cs in fails.items():
                    failed_rounds[t] += 1
                    for c in cs:
                        checks[t][c] += 1
                bad = sum(len(v) for v in fails.values())
                print("round %d/%d: %s: %d tests, %d failed checks (%.0f s so far)%s"
                      % (n, a.n, regex, len(results), bad, time.time() - t0,
                         (": see " + log) if bad else ""), flush=True)
            done = n
            # the table so far, should the hunt be stopped
            with open(os.path.join(logdir, "table.md"), "w") as f:
                f.write(table(a, done, runs, failed_rounds, checks, time.time() - t0))
    finally:
        for p in loads:
            p.kill()
            p.wait()
    print()
    print(table(a, done, runs, failed_rounds, checks, time.time() - t0), end="")
    sys.exit(1 if failed_rounds else 0)


def table(a, done, runs, failed_rounds, checks, secs):
    out = io.StringIO()
    out.write("%d rounds of %d beside %d busy loops, %.0f min; `tests/flake.py -n %d --load %d %s`\n\n"
              % (done, a.n, a.load, secs / 60, a.n, a.load, " ".join(a.regex)))
    out.write("| test | rounds | failed rounds | failing checks (times) |\n|---|---|---|---|\n")
    for t in sorted(runs):
        cs = "; ".join("%s (%d)" % (c, k) for c, k in checks[t].most_common()) or "-"
        out.write("| %s | %d | %d | %s |\n" % (t, runs[t], failed_rounds[t], cs))
    for t in sorted(set(checks) - set(runs)):
        out.write("| %s | 0 | %d | %s |\n" % (t, failed_rounds[t], "; ".join(checks[t])))
    return out.getvalue()


if __name__ == "__main__":
    main()
