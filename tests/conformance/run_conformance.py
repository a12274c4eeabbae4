#!/usr/bin/env python3
"""bpftrace conformance: every script in this folder runs under bpftrace 0.17 and under
gotrace, and their outputs must be identical.

    run_conformance.py --gotrace BIN --work DIR [-k TEXT] [--bpftrace PATH]

Scripts: NAME.bt holds the program for both tools. When only the probe spelling
differs (`uprobe:@BIN@:main.work` / `go:@BIN@:main.work:entry`, `reg("ax")` / `arg0`),
NAME.gt holds gotrace's version. `@BIN@` is replaced by the Go conformance target
(tests/go/conformance_target, built with `go build` as the runtime tests build theirs).

Header: the `//` comment lines at the top of NAME.bt may carry directives.
    // run: ARGS                 extra command-line arguments for both tools, split
                                 with shlex (e.g. `-c "@BIN@ calls"`)
    // format: json              run both with `-f json`; compare the parsed objects
    // order: unspecified        compare the lines (json: the objects) as sorted lists
    // timeout: SECONDS          per tool (default 30)
    // expect-difference: WHY    gotrace intentionally differs (docs/bpftrace-differences.md);
                                 its output must equal NAME.gotrace.out instead

Normalisation (only this, nothing else):
  - bpftrace's first stdout line `Attaching N probe(s)...` (text) or its
    {"type": "attached_probes"} object (json);
  - bpftrace's RLIMIT_MEMLOCK warning on stderr (stderr is not compared anyway);
  - json only: bpftrace writes "\\n\\n" before the map dump even in JSON mode; those empty
    lines are not JSON and are dropped from bpftrace's output. gotrace's JSON output must
    have no empty lines: every line of it must parse with json.loads.
Both tools must exit with status 0. Ends with `N passed, M failed`.
"""

import difflib
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "runtime"))

# gtlib's Suite parses --gotrace/--work/-k; --bpftrace is ours.
_BPFTRACE = os.environ.get("GT_BPFTRACE", "bpftrace")
if "--bpftrace" in sys.argv:
    i = sys.argv.index("--bpftrace")
    _BPFTRACE = sys.argv[i + 1]
    del sys.argv[i:i + 2]

from gtlib import Suite, TESTS  # noqa: E402

ATTACHING = re.compile(r"^Attaching \d+ probes?\.\.\.$")
RLIMIT = re.compile(r"couldn't set RLIMIT_MEMLOCK")


def parse_header(text):
    hdr = {"run": "", "format": "text", "order": "specified", "timeout": "30"}
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("//"):
            break
        m = re.match(r"//\s*([a-z-]+):\s*(.*)$", line)
        if m and m.group(1) in ("run", "format", "order", "timeout", "expect-difference"):
            hdr[m.group(1)] = m.group(2).strip()
    return hdr


def run_tool(argv, timeout):
    t0 = time.time()
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
        rc, out, err = r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired as e:
        rc = "timeout"
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
    return rc, out, err, time.time() - t0


def norm_bpftrace_text(out):
    lines = out.split("\n")
    if lines and ATTACHING.match(lines[0]):
        lines = lines[1:]
    return "\n".join(lines)


def norm_stderr(err):
    return "".join(l for l in err.splitlines(True) if not RLIMIT.search(l))


def parse_json_lines(out, who, drop_empty):
    """-> (objects, error or None)."""
    objs = []
    for n, line in enumerate(out.split("\n"), 1):
        if line == "" and (drop_empty or n == len(out.split("\n"))):
            continue
        try:
            objs.append(json.loads(line))
        except ValueError as e:
            return objs, "%s line %d is not JSON (%s): %r" % (who, n, e, line)
    return objs, None


def diff(a, b, la, lb):
    return "".join(difflib.unified_diff(a.splitlines(True), b.splitlines(True), la, lb))


def main():
    s = Suite("conformance")
    if shutil.which(_BPFTRACE) is None:
        msg = "bpftrace (0.17) is not installed: nothing to compare against"
        if os.environ.get("GT_REQUIRE_BPF") == "1":
            print("FAIL " + msg)
            print("0 passed, 1 failed")
            sys.exit(1)
        print("SKIP " + msg)
        print("0 passed, 0 failed, 1 skipped")
        sys.exit(0)
    v = subprocess.run([_BPFTRACE, "--version"], capture_output=True, text=True).stdout
    if "v0.17" not in v:
        print("note: the reference is bpftrace 0.17; found %s" % v.strip())

    target = s.go_build("conftarget", src_dir=os.path.join(TESTS, "go", "conformance_target"))
    work = os.path.join(s.work, "conformance")
    os.makedirs(work, exist_ok=True)

    t_all = time.time()
    t_bt = t_gt = 0.0
    for bt_path in sorted(glob.glob(os.path.join(HERE, "*.bt"))):
        name = os.path.basename(bt_path)[:-3]
        if not s.case(name):
            continue
        with open(bt_path) as f:
            bt_text = f.read()
        gt_path = os.path.join(HERE, name + ".gt")
        gt_text = bt_text
        if os.path.exists(gt_path):
            with open(gt_path) as f:
                gt_text = f.read()
        hdr = parse_header(bt_text)
        json_mode = hdr["format"] == "json"
        sub = lambda t: t.replace("@BIN@", target)  # noqa: E731
        bt_file = os.path.join(work, name + ".bt")
        gt_file = os.path.join(work, name + ".gt")
        with open(bt_file, "w") as f:
            f.write(sub(bt_text))
        with open(gt_file, "w") as f:
            f.write(sub(gt_text))
        extra = shlex.split(sub(hdr["run"]))
        if json_mode:
            extra = ["-f", "json"] + extra
        timeout = float(hdr["timeout"])

        brc, bout, berr, bt_s = run_tool([_BPFTRACE, *extra, bt_file], timeout)
        grc, gout, gerr, gt_s = run_tool([s.gotrace, *extra, gt_file], timeout)
        t_bt += bt_s
        t_gt += gt_s
        berr = norm_stderr(berr)
        title = "%s (bpftrace %.2fs, gotrace %.2fs)" % (name, bt_s, gt_s)
        problems = []
        if brc != 0:
            problems.append("bpftrace exited %s (the script must be valid bpftrace)\n%s"
                            % (brc, berr))
        if grc != 0:
            problems.append("gotrace exited %s" % grc)
        if gerr.strip():
            problems.append("gotrace stderr:\n" + gerr)

        expect = None
        if "expect-difference" in hdr:
            exp_path = os.path.join(HERE, name + ".gotrace.out")
            if not os.path.exists(exp_path):
                problems.append("expect-difference without %s.gotrace.out" % name)
            else:
                with open(exp_path) as f:
                    expect = f.read()

        unordered = hdr["order"] == "unspecified"
        if json_mode:
            bobjs, berr_j = parse_json_lines(bout, "bpftrace", True)
            bobjs = [o for o in bobjs if not (isinstance(o, dict) and
                                              o.get("type") == "attached_probes")]
            gobjs, gerr_j = parse_json_lines(gout, "gotrace", False)
            if berr_j:
                problems.append(berr_j)
            if gerr_j:
                problems.append(gerr_j)
            want = bobjs
            if expect is not None:
                want, e = parse_json_lines(expect, name + ".gotrace.out", False)
                if e:
                    problems.append(e)
            if unordered:
                key = lambda o: json.dumps(o, sort_keys=True)  # noqa: E731
                want, gobjs = sorted(want, key=key), sorted(gobjs, key=key)
            if want != gobjs:
                a = "".join(json.dumps(o) + "\n" for o in want)
                b = "".join(json.dumps(o) + "\n" for o in gobjs)
                problems.append("JSON objects differ:\n" +
                                diff(a, b, "expected" if expect else "bpftrace", "gotrace"))
        else:
            want = norm_bpftrace_text(bout) if expect is None else expect
            got = gout
            if unordered:
                want = "".join(sorted(want.splitlines(True)))
                got = "".join(sorted(got.splitlines(True)))
            if want != got:
                problems.append("stdout differs:\n" +
                                diff(want, got, "expected" if expect else "bpftrace", "gotrace"))
        if expect is not None and not problems:
            bt_norm = norm_bpftrace_text(bout) if not json_mode else None
            if bt_norm is not None and bt_norm == expect:
                print("note: %s: bpftrace now prints the expected gotrace output; "
                      "is the expect-difference still needed?" % name)
        s.check(title, not problems, "\n".join(problems))

    print("time: total %.1fs (bpftrace %.1fs, gotrace %.1fs)"
          % (time.time() - t_all, t_bt, t_gt))
    s.finish()


if __name__ == "__main__":
    main()
