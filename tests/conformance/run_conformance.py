#!/usr/bin/env python3
"""bpftrace conformance: every script in this folder runs under bpftrace 0.17 and under
gotrace, and their outputs must be identical.

    run_conformance.py --gotrace BIN --work DIR [-k TEXT] [--bpftrace PATH]

Scripts: NAME.bt holds the program for both tools. When only the probe spelling
differs (`uprobe:@BIN@:main.work` / `go:@BIN@:main.work:entry`, `reg("ax")` / `arg0`),
NAME.gt holds gotrace's version. `@BIN@` is replaced by the Go conformance target
(tests/go/conformance_target, built with `go build` as the runtime tests build theirs).

Header: the `//` comment lines at the top of NAME.bt may carry directives.
    // args: WORDS               positional parameters ($1 ...) after the script, for both
                                 tools (shlex)
    // run: ARGS                 extra command-line arguments for both tools, split
                                 with shlex (e.g. `-c "@BIN@ calls"`); `@OUT@` becomes a
                                 file per tool (for `-o @OUT@`): then that file's content
                                 is compared instead of stdout
    // format: json              run both with `-f json`; compare the parsed objects
    // compare: bytes            (json) compare the lines as printed instead: how each
                                 byte of a string is escaped (bpftrace's output need not
                                 parse then; gotrace's must)
    // order: unspecified        compare the lines (json: the objects) as sorted lists
    // timeout: SECONDS          per tool (default 30)
    // expect-difference: WHY    gotrace intentionally differs (docs/bpftrace-differences.md);
                                 its output must equal NAME.gotrace.out instead
    // bpftrace-bug: WHY         bpftrace 0.17 does not agree with itself on this script
                                 (a key with uninitialised bytes: its output changes from
                                 run to run); gotrace's output must equal NAME.gotrace.out,
                                 worked out by hand from the target's source, and
                                 bpftrace is only run (the script must be valid bpftrace)

Both print `Attaching N probe(s)...` (json: {"type": "attached_probes", ...}) first, and
it is compared like every other line: gotrace counts probes as bpftrace does.

Normalisation (only this, nothing else):
  - bpftrace's RLIMIT_MEMLOCK warning on stderr (stderr is not compared; gotrace's must
    be empty);
  - bpftrace's two empty lines before the map dump at exit, an intended difference
    (docs/bpftrace-differences.md, "Differences" row 11): bpftrace writes them with
    std::cout even when `-o FILE` sends everything else to FILE, so the runner runs
    bpftrace with `-o FILE`, takes FILE as its output and checks that its stdout was
    exactly "\\n\\n". No guessing where they were. (Should gotrace start printing them,
    set EXIT_NEWLINES_DIFFER = False: bpftrace's stdout is then compared as it is.)
gotrace's JSON output must parse line by line with json.loads (no empty lines).
Both tools must exit with status 0. Ends with `N passed, M failed`.

GT_BPFTRACE_CACHE=DIR keeps bpftrace's clean outputs, keyed by its version, arguments,
script and target, and serves them again (scripts/test.sh: the ASan pass reuses the
plain pass's).

The oracle must agree with itself: when gotrace's output differs from bpftrace's,
bpftrace runs twice more, and if its three outputs are not all the same the case fails
as "oracle unstable" (with bpftrace's outputs) instead of judging gotrace: such a
construct belongs in a `bpftrace-bug` case.
"""

import difflib
import glob
import hashlib
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

# docs/bpftrace-differences.md, Differences row 11: gotrace does not print bpftrace's "\n\n"
# before the map dump.
EXIT_NEWLINES_DIFFER = True

_BPFTRACE_VERSION = ""

RLIMIT = re.compile(r"couldn't set RLIMIT_MEMLOCK")


def parse_header(text):
    hdr = {"run": "", "args": "", "format": "text", "order": "specified", "timeout": "30"}
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("//"):
            break
        m = re.match(r"//\s*([a-z-]+):\s*(.*)$", line)
        if m and m.group(1) in ("run", "args", "format", "order", "timeout",
                                "expect-difference", "bpftrace-bug"):
            hdr[m.group(1)] = m.group(2).strip()
        elif m and m.group(1) == "compare":
            hdr["compare"] = m.group(2).strip()
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
    """Both tools print "Attaching N probes..." first (gotrace counts as bpftrace does):
    compared like every other line."""
    return out


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


def json_lines(out, drop_empty):
    """The lines of -f json output as printed."""
    lines = out.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [l for l in lines if l or not drop_empty]


def diff(a, b, la, lb):
    return "".join(difflib.unified_diff(a.splitlines(True), b.splitlines(True), la, lb))


def bpftrace_key(bextra, bt_file, pos, outfile, target):
    """What bpftrace's output depends on: its version, its arguments (the output file's
    path aside), the script's text and the target's identity."""
    st = os.stat(target)
    with open(bt_file) as f:
        text = f.read()
    key = [_BPFTRACE_VERSION, [a.replace(outfile, "@OUTFILE@") for a in bextra], text, pos,
           target, st.st_size, st.st_mtime_ns]
    return hashlib.sha256(json.dumps(key).encode()).hexdigest()


def run_bpftrace(bextra, bt_file, pos, timeout, outfile, uses_out, target=None):
    """bpftrace's side of a case: (status, output, stderr, seconds, problems, kept). The
    output is
    its -o FILE (see EXIT_NEWLINES_DIFFER), or the case's @OUT@ file. With TARGET and
    GT_BPFTRACE_CACHE (scripts/test.sh: the plain pass writes it, the ASan pass reads
    it; the oracle does not change with the build of gotrace), a clean run is kept there
    and served again (KEPT); the oracle's stability check passes no TARGET."""
    cached = None
    if target and os.environ.get("GT_BPFTRACE_CACHE"):
        cached = os.path.join(os.environ["GT_BPFTRACE_CACHE"],
                              bpftrace_key(bextra, bt_file, pos, outfile, target) + ".json")
        try:
            with open(cached) as f:
                rc, out, err = json.load(f)
            return rc, out, err, 0.0, [], True
        except (OSError, ValueError):
            pass
    rc, out, err, secs, problems = _run_bpftrace(bextra, bt_file, pos, timeout, outfile,
                                                 uses_out)
    if cached and rc == 0 and not problems:
        os.makedirs(os.path.dirname(cached), exist_ok=True)
        with open(cached + ".tmp", "w") as f:
            json.dump([rc, out, err], f)
        os.rename(cached + ".tmp", cached)
    return rc, out, err, secs, problems, False


def _run_bpftrace(bextra, bt_file, pos, timeout, outfile, uses_out):
    if os.path.exists(outfile):
        os.unlink(outfile)
    rc, out, err, secs = run_tool([_BPFTRACE, *bextra, bt_file, *pos], timeout)
    problems = []
    if EXIT_NEWLINES_DIFFER or uses_out:
        if not uses_out and out != "\n\n":
            problems.append("bpftrace -o FILE: stdout was %r, not the two empty lines "
                            "of its exit" % out[:300])
        try:
            with open(outfile) as f:
                out = f.read()
        except OSError as e:
            problems.append("bpftrace wrote no output file: %s" % e)
            out = ""
    err = norm_stderr(err)
    if rc != 0:
        problems.append("bpftrace exited %s (the script must be valid bpftrace)\n%s"
                        % (rc, err))
    return rc, out, err, secs, problems


def canon(hdr, out):
    """OUT as the comparison sees it: its JSON objects or its lines, sorted when the
    order is unspecified. For telling whether two runs of bpftrace agree."""
    if hdr["format"] == "json" and hdr.get("compare") != "bytes":
        objs, _ = parse_json_lines(out, "bpftrace", True)
        items = [json.dumps(o, sort_keys=True) for o in objs]
    else:
        items = out.splitlines()
    if hdr["order"] == "unspecified":
        items = sorted(items)
    return "\n".join(items)


def compare(hdr, bout, gout, expect):
    """Problems of gotrace's output GOUT against bpftrace's BOUT, or against EXPECT (a
    NAME.gotrace.out) when there is one; [] when they agree."""
    problems = []
    unordered = hdr["order"] == "unspecified"
    json_mode = hdr["format"] == "json"
    if json_mode and hdr.get("compare") == "bytes":
        _, gerr_j = parse_json_lines(gout, "gotrace", False)
        if gerr_j:
            problems.append(gerr_j)
        want = json_lines(bout if expect is None else expect,
                          expect is None and not EXIT_NEWLINES_DIFFER)
        got = json_lines(gout, False)
        if unordered:
            want, got = sorted(want), sorted(got)
        if want != got:
            problems.append("JSON lines differ:\n" +
                            diff("\n".join(want), "\n".join(got),
                                 "expected" if expect else "bpftrace", "gotrace"))
    elif json_mode:
        bobjs, berr_j = parse_json_lines(bout, "bpftrace", not EXIT_NEWLINES_DIFFER)
        gobjs, gerr_j = parse_json_lines(gout, "gotrace", False)
        if berr_j and expect is None:
            problems.append(berr_j)
        if gerr_j:
            problems.append(gerr_j)
        want = bobjs
        if expect is not None:
            want, e = parse_json_lines(expect, "the .gotrace.out", False)
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
    return problems


def cache_hit_problems(gotrace, gextra, gt_file, pos, timeout, first, outfile, unordered):
    """The same case again, served by the cache the first run filled: the same bytes."""
    rc, out, err, _ = run_tool([gotrace, "-v", *gextra, gt_file, *pos], timeout)
    if outfile:
        try:
            with open(outfile) as f:
                out = f.read()
        except OSError as e:
            return ["cache hit: no output file: %s" % e]
    if rc != 0:
        return ["cache hit: gotrace exited %s\n%s" % (rc, err)]
    # "not used" alone: a case the cache does not keep (#include); "not used: WHY" is a
    # cache directory refused as another user's (issue 23), which would hide a failure
    if "cache: hit" not in err and not any(l.endswith("cache: not used") for l in err.splitlines()):
        return ["the second run was not served by the cache:\n" + err]
    if unordered:
        first = "".join(sorted(first.splitlines(True)))
        out = "".join(sorted(out.splitlines(True)))
    if out != first:
        return ["a cache hit printed something else than the miss:\n" +
                diff(first, out, "miss", "hit")]
    return []


def main():
    s = Suite("conformance")
    if shutil.which(_BPFTRACE) is None:
        s.unavailable("bpftrace (0.17) is not installed: nothing to compare against")
    global _BPFTRACE_VERSION
    v = subprocess.run([_BPFTRACE, "--version"], capture_output=True, text=True).stdout
    _BPFTRACE_VERSION = v.strip()
    if "v0.17" not in v:
        print("note: the reference is bpftrace 0.17; found %s" % v.strip())

    target = s.go_build("conftarget", src_dir=os.path.join(TESTS, "go", "conformance_target"))
    work = os.path.join(s.work, "conformance")
    os.makedirs(work, exist_ok=True)

    # gotrace's compiled-program cache, fresh: each case's first run compiles and
    # stores, a second run must print byte for byte the same from the cache
    cache = os.path.join(work, "cache")
    shutil.rmtree(cache, ignore_errors=True)
    os.environ["XDG_CACHE_HOME"] = cache

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
        outfiles = {}
        for tool in ("bpftrace", "gotrace"):
            outfiles[tool] = os.path.join(work, "%s.%s.outfile" % (name, tool))
            if os.path.exists(outfiles[tool]):
                os.unlink(outfiles[tool])
        uses_out = "@OUT@" in hdr["run"]
        extra = shlex.split(sub(hdr["run"]))
        bextra = [a.replace("@OUT@", outfiles["bpftrace"]) for a in extra]
        if EXIT_NEWLINES_DIFFER and not uses_out:
            bextra = ["-o", outfiles["bpftrace"]] + bextra
        gextra = [a.replace("@OUT@", outfiles["gotrace"]) for a in extra]
        if json_mode:
            bextra = ["-f", "json"] + bextra
            gextra = ["-f", "json"] + gextra
        timeout = float(hdr["timeout"])

        pos = shlex.split(sub(hdr["args"]))
        brc, bout, _, bt_s, bproblems, kept = run_bpftrace(
            bextra, bt_file, pos, timeout, outfiles["bpftrace"], uses_out, target)
        grc, gout, gerr, gt_s = run_tool([s.gotrace, *gextra, gt_file, *pos], timeout)
        t_bt += bt_s
        t_gt += gt_s
        title = "%s (bpftrace %.2fs, gotrace %.2fs)" % (name, bt_s, gt_s)
        problems = []
        if grc != 0:
            problems.append("gotrace exited %s" % grc)
        if gerr.strip():
            problems.append("gotrace stderr:\n" + gerr)
        if uses_out:
            try:
                with open(outfiles["gotrace"]) as f:
                    gout = f.read()
            except OSError as e:
                problems.append("gotrace wrote no output file: %s" % e)
                gout = ""

        expect = None
        kind = next((k for k in ("expect-difference", "bpftrace-bug") if k in hdr), None)
        if kind:
            exp_path = os.path.join(HERE, name + ".gotrace.out")
            if not os.path.exists(exp_path):
                problems.append("%s without %s.gotrace.out" % (kind, name))
            else:
                with open(exp_path) as f:
                    expect = f.read()

        differ = compare(hdr, bout, gout, expect)
        if differ and kept:
            # a kept output (GT_BPFTRACE_CACHE) that differs: bpftrace's own, now
            brc, bout, _, secs, bproblems, _ = run_bpftrace(
                bextra, bt_file, pos, timeout, outfiles["bpftrace"], uses_out)
            t_bt += secs
            title = "%s (bpftrace kept, again %.2fs, gotrace %.2fs)" % (name, secs, gt_s)
            differ = compare(hdr, bout, gout, expect)
        problems = bproblems + problems
        if differ and expect is None and brc == 0:
            # is the oracle stable? bpftrace twice more; its outputs must all be one
            outs = [bout]
            for _ in range(2):
                rc2, out2, _, secs, _, _ = run_bpftrace(bextra, bt_file, pos, timeout,
                                                        outfiles["bpftrace"], uses_out)
                t_bt += secs
                outs.append(out2 if rc2 == 0 else "(bpftrace exited %s)" % rc2)
            canons = [canon(hdr, o) for o in outs]
            if any(c != canons[0] for c in canons[1:]):
                differ = ["oracle unstable: bpftrace 0.17 printed %d different outputs in "
                          "3 runs of this script, so it cannot judge gotrace's (make the "
                          "case avoid the construct, or mark it `// bpftrace-bug:` with "
                          "the output worked out by hand in %s.gotrace.out):\n%s"
                          % (len(set(canons)), name,
                             "\n".join("--- bpftrace run %d\n%s" % (i + 1, o)
                                       for i, o in enumerate(outs)))]
        problems += differ
        # (a bpftrace-bug shows now and then: one right output of bpftrace says nothing)
        if "expect-difference" in hdr and not problems and \
                compare(hdr, bout, bout, expect) == []:
            print("note: %s: bpftrace now prints the expected gotrace output; is the "
                  "expect-difference still needed?" % name)
        if not problems:
            problems += cache_hit_problems(s.gotrace, gextra, gt_file, pos, timeout, gout,
                                           outfiles["gotrace"] if uses_out else None,
                                           hdr["order"] == "unspecified")
        s.check(title, not problems, "\n".join(problems))

    print("time: total %.1fs (bpftrace %.1fs, gotrace %.1fs)"
          % (time.time() - t_all, t_bt, t_gt))
    s.finish()


if __name__ == "__main__":
    main()
