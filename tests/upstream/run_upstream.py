#!/usr/bin/env python3
"""Run bpftrace's own runtime tests against gotrace.

The runner reads the test files of a bpftrace checkout (tests/runtime/*), picks
the cases that can run on their own on this machine, runs each with the
reference bpftrace (0.17) to find the cases it passes (the "baseline"), and then
runs the baseline with gotrace, substituting gotrace's path for {{BPFTRACE}}.
It prints PASS/FAIL per case, counts per file, the total and the gotrace
failures grouped by a coarse category.  Python 3 standard library only.

Test format (read from the checkout's files; this is an independent
implementation of the same rules as bpftrace's tests/runtime/engine):

  * One case per block of lines; blocks are separated by empty lines, lines
    starting with '#' are comments.  Each line is DIRECTIVE VALUE.
  * Two dialects, chosen from the checkout's engine/parser.py (--dialect):
      legacy (bpftrace <= 0.20): the value is the rest of the line with runs of
        whitespace collapsed to one space; EXPECT is a regular expression
        searched in the output; WILL_FAIL allows any exit status; the engine
        waits 5 s for the probes to attach.
      modern (0.21 and later): the value keeps its whitespace; lines indented
        past the directive continue PROG/EXPECT/EXPECT_REGEX; EXPECT is a
        whole line of text (leading and trailing blanks ignored), EXPECT_REGEX a
        regular expression, EXPECT_NONE / EXPECT_REGEX_NONE must not match,
        EXPECT_FILE compares the whole output with a file, EXPECT_JSON compares
        JSON (one document, or .ndjson line by line), a PROG whose first
        expectation is EXPECT_JSON is run with "-q -f json"; WILL_FAIL requires
        a non-zero exit status, RETURN_CODE sets the expected one; TIMEOUT
        defaults to 5 s; the engine waits 10 s for the probes to attach.
  * The command is RUN with {{BPFTRACE}} replaced by the tool's path, or
    `TOOL -e 'PROG'`.  It runs through /bin/sh, in its own process group, with
    the checkout's tests/ directory as working directory (so
    runtime/scripts/... and runtime/outputs/... resolve), with stdout and
    stderr merged, stdin from /dev/null and the environment PATH, test=NAME,
    __BPFTRACE_NOTIFY_PROBES_ATTACHED=1 plus the case's ENV.  bpftrace's
    "--verify-llvm-ir" (which the modern engine adds) is not added: 0.17 does
    not know it.  Lines of bpftrace's RLIMIT_MEMLOCK warning are removed from
    the output before it is checked.
  * Time limits: a tool that prints the line __BPFTRACE_NOTIFY_PROBES_ATTACHED
    when its probes are attached (bpftrace; checked once per run with
    BEGIN { exit(); }) gets, as in the engine, the attach limit to print it and
    then TIMEOUT seconds from that moment.  A tool that does not (gotrace before
    2026-11) gets TIMEOUT + 2 seconds from its start.  At the limit the
    process group gets SIGINT (bpftrace's engine sends SIGTERM:
    --stop-signal TERM; both tools treat them alike), then SIGKILL 2 s later;
    the same happens to running cases when the runner gets SIGINT, SIGTERM or
    SIGHUP, so no probes stay attached.  A case that hit the limit passes if
    its expectations hold on the output collected so far (exit status not
    checked), as in the engine.  EXPECT_FILE and EXPECT_JSON only look at the
    output after the notification line (for a tool that does not print it:
    after its first "Attaching N probes..." line, if any).
  * gotrace is run from a private copy taken at the start (once the binary
    has been left alone for 2 s), since it may be rebuilt during a run;
    --no-snapshot runs it in place.

Selection ("standalone" cases); a case is kept only if every rule holds, and
the first rule it breaks is reported as its exclusion reason:

  1. arch: no ARCH directive, or one that admits x86_64 / little endian
     (modern syntax: alternatives separated by '|', '!' negates).
  2. aot: does not use {{BPFTRACE_AOTRT}} or --aot (ahead-of-time tests).
  3. helpers: no BEFORE, AFTER, SETUP, CLEANUP, NEW_PIDNS or {{BEFORE_PID}}
     (they start test programs or change the system).
  4. testprogs: nothing in the case mentions testprogs/ or testlibs/ (binaries
     built in bpftrace's tree).
  5. probes: every probe type the program uses is one of BEGIN, END, begin,
     end, interval/i, profile/p, tracepoint/t; fentry/kfunc/fexit/kretfunc
     (f/fr) are admitted too and then need nothing beyond the other rules.
     Anything else (kprobe, kretprobe, uprobe, uretprobe, usdt, watchpoint,
     asyncwatchpoint, hardware, software, rawtracepoint, iter, self, bench...)
     excludes the case (--allow-probe TYPE admits more).  Probe types are read
     from the top level of the program text (PROG, the arguments of -e, .bt
     script files named on the RUN line, comments and strings removed), from
     the patterns given to -l/--list, and from positional arguments of the form
     TYPE:... (for programs whose probes come from $1).  Cases that use no
     probe at all (--version, -h, parse errors...) are standalone.
  6. kernel: MIN_KERNEL / MAX_KERNEL admit the running kernel.
  7. features: every REQUIRES_FEATURE (and !feature) holds according to the
     reference bpftrace's --info output; a feature it does not report counts
     as absent.
  8. requires: every REQUIRES command exits 0 (run through /bin/sh in the
     tests/ directory, 10 s limit).
  9. env: SKIP_IF_ENV_HAS does not match this environment.

Baseline: each standalone case is run with the reference bpftrace (--bpftrace,
default `bpftrace` from PATH); a failing case is tried once more
(--baseline-retries) since some cases depend on timing, unless it ran into its
time limit.  Only cases it passes are run with gotrace.  The results are cached in CACHE_DIR/baseline.json keyed
by file, case name and a hash of the case text, the dialect and the files the
case reads (scripts, expected outputs), together with bpftrace's path and
version; --refresh-baseline runs bpftrace again.

With --rewrite-begin-end the reference bpftrace is given BEGIN/END where a
case's PROG or RUN line says begin/end (current bpftrace's spelling, on which
0.17 aborts; script files are left alone), so that the newer test files yield
a useful baseline; gotrace always gets the case's own text.  Such baseline
results are cached apart from the plain ones.

Failure categories are inferred from gotrace's first diagnostic line
(FILE:LINE:COL: error: ..., "gotrace: error: ...", ERROR:/FATAL:, or getopt's
complaint about an option) or, when there is none, from how the case failed
(timeout, exit status, wrong output); see categorize().

Usage:
  run_upstream.py --bpftrace-checkout DIR [--gotrace PATH] [-k SUBSTRING]
                  [--jobs N] [--list-failures] [--json OUT] [--refresh-baseline]
                  [--rewrite-begin-end] [--select-only] [--show-selection]
"""

import argparse
import concurrent.futures
import fcntl
import json
import os
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from upcases import (Env, Expect, case_key, categorize, detect_dialect, exclusion,
                     read_cases)

DEFAULT_GOTRACE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "build", "gotrace")
DEFAULT_CACHE = "/tmp/gt-upstream-cache"
NOTIFY = "__BPFTRACE_NOTIFY_PROBES_ATTACHED"
NOTIFY_RE = re.compile(rb"(?:^|(?<=\n))" + NOTIFY.encode() + rb"\n")
MAX_OUTPUT = 16 << 20
NOISE_RE = re.compile(r"^.*couldn't set RLIMIT_MEMLOCK.*\n?", re.M)
ATTACHING_RE = re.compile(r"^Attaching \d+ probes?\.\.\.\n", re.M)
NO_NOTIFY_GRACE = 2.0
KILL_GRACE = 2.0

def log(msg):
    try:
        print(msg, flush=True)
    except BrokenPipeError:     # reader went away (| head): keep running, stop printing
        sys.stdout = open(os.devnull, "w")


# ---------------------------------------------------------------- running

class Runner:
    def __init__(self, tests_dir, dialect, stop_signal, scale=1.0):
        self.tests_dir = tests_dir
        self.dialect = dialect
        self.scale = scale          # every time limit, for emulated kernels (--timeout-scale)
        self.attach_timeout = (5 if dialect == "legacy" else 10) * scale
        self.stop_signal = stop_signal
        self.lock = threading.Lock()
        # cases that write a fixed file under /tmp (file-output's -o /tmp/bpftrace-...):
        # one at a time, or two jobs overwrite and remove each other's file
        self.tmp_lock = threading.Lock()
        self.active = set()
        self.stopping = False
        self.notifying = set()      # tools that print the notification line

    def command(self, case, tool, rewrite=False):
        q = shlex.quote(tool)
        if case.run:
            run = upcase_begin_end(case.run) if rewrite else case.run
            return run.replace("{{BPFTRACE}}", q)
        flags = ""
        if self.dialect == "modern" and case.expects and case.expects[0].mode == "json":
            flags = " -q -f json"
        prog = upcase_begin_end(case.prog) if rewrite else case.prog
        return "%s%s -e '%s'" % (q, flags, prog.replace("'", "'\\''"))

    def kill_all(self):
        with self.lock:
            groups = list(self.active)
        for pg in groups:
            kill_group(pg, self.stop_signal)
        if groups:
            time.sleep(KILL_GRACE)
        for pg in groups:
            kill_group(pg, signal.SIGKILL)

    def execute(self, case, tool, rewrite=False):
        cmd = self.command(case, tool, rewrite)
        env = {"PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"),
               "test": case.name, NOTIFY: "1",
               "__BPFTRACE_NOTIFY_AOT_PORTABILITY_DISABLED": "1"}
        env.update(case.env)
        start = time.monotonic()
        p = subprocess.Popen(cmd, shell=True, cwd=self.tests_dir, env=env,
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, start_new_session=True)
        pg = p.pid
        with self.lock:
            self.active.add(pg)
        fd = p.stdout.fileno()
        os.set_blocking(fd, False)
        buf = bytearray()
        notify_at = None   # offset just past the notification line
        if tool in self.notifying:      # as the engine: time to attach, then TIMEOUT
            deadline = start + self.attach_timeout
        else:
            deadline = start + case.timeout * self.scale + NO_NOTIFY_GRACE
        timed_out = False
        phase = "run"      # run -> stopping (stop signal sent) -> killing (SIGKILL sent)
        try:
            while True:
                now = time.monotonic()
                if now >= deadline:
                    if phase == "run":
                        timed_out = p.poll() is None
                        kill_group(pg, self.stop_signal)
                        phase, deadline = "stopping", now + KILL_GRACE
                    elif phase == "stopping":
                        kill_group(pg, signal.SIGKILL)
                        phase, deadline = "killing", now + 1.0
                    else:
                        break   # something outside the group holds the pipe open
                ready, _, _ = select.select([fd], [], [], max(0.0, min(0.2, deadline - now)))
                if not ready:
                    continue
                try:
                    chunk = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                if not chunk:
                    break
                if len(buf) < MAX_OUTPUT:
                    buf += chunk
                if notify_at is None:
                    lo = max(0, len(buf) - len(chunk) - len(NOTIFY) - 2)
                    m = NOTIFY_RE.search(buf, lo)
                    if m:
                        notify_at = m.end()
                        if phase == "run":
                            deadline = time.monotonic() + case.timeout * self.scale
            try:
                rc = p.wait(timeout=KILL_GRACE)
            except subprocess.TimeoutExpired:
                kill_group(pg, signal.SIGKILL)
                rc = p.wait()
        finally:
            if p.poll() is None:             # interrupted: stop it as at the time limit
                kill_group(pg, self.stop_signal)
                try:
                    p.wait(timeout=KILL_GRACE)
                except (subprocess.TimeoutExpired, KeyboardInterrupt):
                    pass
            kill_group(pg, signal.SIGKILL)   # whatever is left of the group
            p.stdout.close()
            with self.lock:
                self.active.discard(pg)
        out = buf.decode("utf-8", "backslashreplace")
        out = NOISE_RE.sub("", out)
        notify_text = None
        if notify_at is not None:
            notify_text = NOISE_RE.sub("", buf[notify_at:].decode("utf-8", "backslashreplace"))
        return {"command": cmd, "rc": rc, "timed_out": timed_out,
                "output": out, "after_notify": notify_text,
                "seconds": round(time.monotonic() - start, 2)}

    def check_expect(self, case, e, out):
        try:
            if e.mode == "regex":
                return re.search(e.text, out, re.M) is not None
            if e.mode == "regex_none":
                return re.search(e.text, out, re.M) is None
            if e.mode == "text":
                return re.search(r"^\s*%s\s*$" % re.escape(e.text), out, re.M) is not None
            if e.mode == "text_none":
                return re.search(r"^\s*%s\s*$" % re.escape(e.text), out, re.M) is None
            with open(os.path.join(self.tests_dir, e.text)) as f:
                want = f.read()
            if e.mode in ("file", "file_rstrip"):
                want = want.strip()
                if case.localize_ts >= 0:
                    want = time.strftime(want, time.localtime(case.localize_ts))
                if e.mode == "file_rstrip":
                    return [l.rstrip() for l in out.strip().splitlines()] == \
                        [l.rstrip() for l in want.splitlines()]
                return out.strip() == want
            lines = out.strip().splitlines()
            if e.text.endswith(".ndjson"):
                wl = want.strip().splitlines()
                return len(wl) == len(lines) and all(
                    json.loads(a) == json.loads(b) for a, b in zip(lines, wl))
            return len(lines) == 1 and json.loads(out.strip()) == json.loads(want)
        except (re.error, ValueError, OSError):
            return False

    def evaluate(self, case, res):
        """Fills status (PASS/FAIL) and reason into res, and departure_only: the case fails
        only on the departures docs/bpftrace-differences.md documents (see departure())."""
        out = res["output"]
        if case.exact:
            if res["after_notify"] is not None:
                out = res["after_notify"]
            else:   # a tool that does not notify: what follows its "Attaching N probes..."
                m = ATTACHING_RE.search(out)
                if m:
                    out = out[m.end():]
        failed = [e for e in case.expects if not self.check_expect(case, e, out)]
        res["failed_expects"] = [e.to_json() for e in failed]
        res["departure_only"] = bool(failed) and all(
            d is not None and self.check_expect(case, d, out) for d in map(departure, failed))
        err = first_error(res["output"])
        res["first_error"] = err
        if res["timed_out"]:
            if failed:
                res["status"], res["reason"] = "FAIL", "timeout after %ss, %s" % (
                    case.timeout, describe_expect(failed[0]))
            else:
                res["status"], res["reason"] = "PASS", "expectations met (stopped at time limit)"
            return res
        rc = res["rc"]
        if self.dialect == "legacy":
            bad_rc = rc != 0 and not case.will_fail
            rc_msg = "exit status %d" % rc
        else:
            bad_rc = (rc != case.return_code and not case.will_fail) or (rc == 0 and case.will_fail)
            rc_msg = ("exit status 0, expected failure" if rc == 0 and case.will_fail
                      else "exit status %d, expected %d" % (rc, case.return_code))
        if bad_rc:
            res["departure_only"] = False
            res["status"] = "FAIL"
            res["reason"] = rc_msg + (": " + err if err else "")
        elif failed:
            res["status"] = "FAIL"
            res["reason"] = describe_expect(failed[0]) + (" (%s)" % err if err and rc else "")
        else:
            res["status"], res["reason"] = "PASS", ""
        return res

    def run(self, case, tool, retries=0, rewrite=False):
        if "/tmp/" in self.command(case, tool, rewrite):
            with self.tmp_lock:
                return self.run_one(case, tool, retries, rewrite)
        return self.run_one(case, tool, retries, rewrite)

    def run_one(self, case, tool, retries=0, rewrite=False):
        res = None
        for attempt in range(retries + 1):
            if self.stopping:
                raise KeyboardInterrupt
            res = self.evaluate(case, self.execute(case, tool, rewrite))
            res["attempts"] = attempt + 1
            if res["status"] == "PASS" or res["timed_out"]:
                break       # a case that ran into its time limit is not tried again
        return res


ATTACHED_RE = re.compile(r"^Attached (\d+) probes?$")


def departure(e):
    """The expectation as gotrace meets it on purpose, or None. These are the departures
    docs/bpftrace-differences.md documents:
    - bpftrace's "ERROR: MSG" and "WARNING: MSG" are gotrace's "error: MSG" and
      "warning: MSG" after its location or name (so a leading ^ goes); its location
      FILE:LINE:COL-END is gotrace's FILE:LINE:COL; the tool's own name is gotrace;
    - current bpftrace's banner "Attached N probes" is bpftrace 0.17's
      "Attaching N probes..." (row 11);
    - the "\n\n" bpftrace prints at exit is not printed (row 11): a regex that ends
      with it ends with the line's own "\n";
    - the range under a quoted source line is bpftrace's ~~~~ and gotrace's ^~~~;
    - an expected file is compared without trailing blanks on its lines (bpftrace 0.17
      prints "@m: " above a histogram, current bpftrace "@m:").
    JSON files are compared as they are."""
    if e.mode == "file":
        return Expect("file_rstrip", e.text)
    if e.mode not in ("regex", "text"):
        return None
    text = e.text
    m = ATTACHED_RE.match(text) if e.mode == "text" else None
    if m:
        return Expect("regex", r"^Attaching %s probes?\.\.\.$" % m.group(1))
    if e.mode == "regex":
        text = re.sub(r"^\^(?=(ERROR|WARNING): )", "", text)
        if text.endswith("\\n\\n"):
            text = text[:-2]
    text = re.sub(r"^(\S*:\d+:\d+)-\d+: (?=(ERROR|WARNING): )", r"\1: ", text)
    # the line under the source: gotrace's caret starts the range bpftrace marks with ~
    text = re.sub(r"(?m)^( *)~(~*)$", r"\1^\2", text)
    text = text.replace("ERROR: ", "error: ").replace("WARNING: ", "warning: ")
    text = text.replace("bpftrace", "gotrace")
    if text == e.text:
        return None
    mode = e.mode
    if mode == "text":      # text is matched as a whole line: the location comes before it
        mode, text = "regex", re.escape(text) + r"\s*$"
    return Expect(mode, text)


BEGIN_END_RE = re.compile(r"(?<![\w$@.:%\"])(begin|end)(?=\s*[{/,])")


def upcase_begin_end(text):
    """begin/end probes -> BEGIN/END (for --rewrite-begin-end)."""
    return BEGIN_END_RE.sub(lambda m: m.group(1).upper(), text)


def kill_group(pg, sig):
    try:
        os.killpg(pg, sig)
    except (ProcessLookupError, PermissionError):
        pass


def describe_expect(e):
    t = e.text if len(e.text) <= 60 else e.text[:57] + "..."
    return {
        "regex": "expected regex not found: %r" % t,
        "text": "expected line not found: %r" % t,
        "text_none": "unwanted line found: %r" % t,
        "regex_none": "unwanted regex found: %r" % t,
        "file": "output differs from %s" % t,
        "json": "JSON output differs from %s" % t,
    }[e.mode]


ERR_LINE_RE = re.compile(
    r"^\S+:\d+:\d+(?:-\d+)?: (?:error|ERROR)\b"             # file:line:col: error: ...
    r"|^(?:\S*gotrace: )?(?:error|ERROR|FATAL)\b"             # gotrace: error: / ERROR: ...
    r"|^\S*gotrace: .*(?:invalid option|unrecognized option|option requires)")


def first_error(out):
    for line in out.splitlines():
        if line.startswith(NOTIFY):
            continue
        if ERR_LINE_RE.search(line):
            return line.strip()[:200]
    return ""


# ---------------------------------------------------------------- cache

class Cache:
    def __init__(self, directory, tool_id):
        self.dir = directory
        self.path = os.path.join(directory, "baseline.json")
        self.tool_id = tool_id
        os.makedirs(directory, exist_ok=True)
        self.data = self._load()
        self.pending = {}

    def _load(self):
        try:
            with open(self.path) as f:
                d = json.load(f)
            return d.get("tools", {}).get(self.tool_id, {})
        except (OSError, ValueError):
            return {}

    def get(self, key):
        return self.data.get(key)

    def put(self, key, value):
        self.data[key] = value
        self.pending[key] = value

    def save(self):
        if not self.pending:
            return
        with open(self.path + ".lock", "w") as lk:
            fcntl.flock(lk, fcntl.LOCK_EX)
            try:
                with open(self.path) as f:
                    d = json.load(f)
            except (OSError, ValueError):
                d = {}
            d.setdefault("tools", {}).setdefault(self.tool_id, {}).update(self.pending)
            tmp = self.path + ".tmp.%d" % os.getpid()
            with open(tmp, "w") as f:
                json.dump(d, f, indent=1, sort_keys=True)
            os.replace(tmp, self.path)
        self.pending = {}


# ---------------------------------------------------------------- main

def tool_version(path):
    try:
        r = subprocess.run([path, "--version"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True, timeout=30)
        return NOISE_RE.sub("", r.stdout).strip().splitlines()[0] if r.stdout.strip() else "?"
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return "?"


def tool_notifies(path):
    """Whether the tool prints the probes-attached notification line."""
    env = {"PATH": os.environ.get("PATH", ""), NOTIFY: "1"}
    try:
        r = subprocess.run([path, "-e", "BEGIN { exit(); }"], env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30,
                           start_new_session=True)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return NOTIFY.encode() + b"\n" in r.stdout


def run_many(runner, items, tool, jobs, retries, on_done, rewrite=False):
    """Runs (case) items with tool; on_done(case, res) is called in order of completion."""
    if jobs <= 1:
        for case in items:
            on_done(case, runner.run(case, tool, retries, rewrite))
        return
    ex = concurrent.futures.ThreadPoolExecutor(max_workers=jobs)
    try:
        futs = {ex.submit(runner.run, c, tool, retries, rewrite): c for c in items}
        for f in concurrent.futures.as_completed(futs):
            on_done(futs[f], f.result())
    except KeyboardInterrupt:
        runner.stopping = True
        ex.shutdown(wait=False, cancel_futures=True)
        runner.kill_all()
        raise
    finally:
        ex.shutdown(wait=True)


def short(s, n=110):
    s = s.replace("\n", "\\n")
    return s if len(s) <= n else s[:n - 3] + "..."


def snapshot(path, directory):
    """Copies the binary (another engineer may rebuild it mid-run) once it has
    been left alone for 2 s and answers --version; returns the copy's path."""
    dest = os.path.join(directory, os.path.basename(path))
    for _ in range(30):
        age = time.time() - os.stat(path).st_mtime
        if age < 2:
            time.sleep(2 - age)
            continue
        shutil.copy2(path, dest)
        # the code generator is built apart, loaded from beside the binary
        cg = os.path.join(os.path.dirname(path), "gotrace-cg.so")
        if os.path.exists(cg):
            shutil.copy2(cg, os.path.join(directory, "gotrace-cg.so"))
        if os.stat(path).st_mtime == os.stat(dest).st_mtime and tool_version(dest) != "?":
            return dest
        time.sleep(1)
    raise SystemExit("cannot take a stable copy of %s" % path)


def interrupt(signum, frame):
    raise KeyboardInterrupt


def main():
    signal.signal(signal.SIGTERM, interrupt)
    signal.signal(signal.SIGHUP, interrupt)
    signal.signal(signal.SIGINT, interrupt)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bpftrace-checkout", required=True,
                    help="bpftrace source tree (the directory holding tests/runtime)")
    ap.add_argument("--gotrace", default=DEFAULT_GOTRACE, help="gotrace binary (%(default)s)")
    ap.add_argument("--bpftrace", default="bpftrace",
                    help="reference bpftrace binary for the baseline (%(default)s)")
    ap.add_argument("-k", dest="filter", action="append", default=[],
                    help="only cases whose FILE.NAME contains SUBSTRING (repeatable)")
    ap.add_argument("--jobs", type=int, default=1, help="cases run at once (%(default)s)")
    ap.add_argument("--list-failures", action="store_true",
                    help="print command, reason and output of every gotrace failure")
    ap.add_argument("--json", metavar="OUT", help="write machine-readable results to OUT")
    ap.add_argument("--refresh-baseline", action="store_true",
                    help="run bpftrace again instead of using the cache")
    ap.add_argument("--cache-dir", default=DEFAULT_CACHE, help="(%(default)s)")
    ap.add_argument("--dialect", choices=["auto", "legacy", "modern"], default="auto")
    ap.add_argument("--allow-probe", action="append", default=[], metavar="TYPE",
                    help="also admit cases using this probe type")
    ap.add_argument("--baseline-retries", type=int, default=1)
    ap.add_argument("--rewrite-begin-end", action="store_true",
                    help="for the baseline only, give bpftrace BEGIN/END where the case "
                         "says begin/end (0.17 aborts on the lowercase names); gotrace "
                         "still gets the original text")
    ap.add_argument("--retries", type=int, default=0, help="extra gotrace attempts on failure")
    ap.add_argument("--stop-signal", choices=["INT", "TERM"], default="INT",
                    help="signal sent at the time limit before SIGKILL (%(default)s)")
    ap.add_argument("--show-selection", action="store_true",
                    help="print why each case was excluded, and bpftrace's baseline failures")
    ap.add_argument("--select-only", action="store_true",
                    help="print the selection and stop (implies --show-selection)")
    ap.add_argument("--baseline-only", action="store_true", help="do not run gotrace")
    ap.add_argument("--beyond-baseline", action="store_true",
                    help="also run gotrace on the standalone cases the reference bpftrace fails "
                         "(features newer than it) and report them apart")
    ap.add_argument("--no-snapshot", action="store_true",
                    help="run gotrace in place instead of from a private copy made at the start")
    ap.add_argument("--timeout-scale", type=float,
                    default=float(os.environ.get("GT_UPSTREAM_TIMEOUT_SCALE") or
                                  (8 if os.environ.get("GT_VM") else 1)),
                    help="multiply every case's time limit (default 8 under tests/kernels/vm.sh's "
                         "emulation, GT_VM set; else 1)")
    ap.add_argument("-q", "--quiet", action="store_true", help="no per-case lines")
    args = ap.parse_args()

    t0 = time.monotonic()
    co = os.path.abspath(args.bpftrace_checkout)
    tests_dir = co if os.path.isdir(os.path.join(co, "runtime")) else os.path.join(co, "tests")
    if not os.path.isdir(os.path.join(tests_dir, "runtime")):
        ap.error("no tests/runtime under %s" % co)
    dialect = detect_dialect(tests_dir) if args.dialect == "auto" else args.dialect
    bpftrace = shutil.which(args.bpftrace) or args.bpftrace
    bpftrace = os.path.abspath(bpftrace)
    gotrace = os.path.abspath(args.gotrace)
    if not args.baseline_only and not os.access(gotrace, os.X_OK):
        ap.error("gotrace not executable: %s" % gotrace)
    stop = signal.SIGINT if args.stop_signal == "INT" else signal.SIGTERM

    gt_mtime = os.stat(gotrace).st_mtime if os.path.exists(gotrace) else 0
    gotrace_src, snapdir = gotrace, None
    if not args.baseline_only and not args.no_snapshot:
        snapdir = tempfile.mkdtemp(prefix="gt-upstream-")
        gotrace = snapshot(gotrace_src, snapdir)
        gt_mtime = 0
    try:
        return run(args, ap, t0, co, tests_dir, dialect, bpftrace, gotrace, gotrace_src,
                   gt_mtime, stop)
    finally:
        if snapdir:
            shutil.rmtree(snapdir, ignore_errors=True)


def ensure_debugfs():
    """bpftrace's debugf cases read /sys/kernel/debug/tracing/trace, as on its CI
    machines; a machine that mounts only tracefs gets debugfs mounted (as root)."""
    if os.path.isdir("/sys/kernel/debug/tracing") or os.geteuid() != 0:
        return
    r = subprocess.run(["mount", "-t", "debugfs", "debugfs", "/sys/kernel/debug"],
                       capture_output=True, text=True)
    log("mounted debugfs on /sys/kernel/debug" if r.returncode == 0 else
        "debugfs not mounted (%s): the debugf cases will fail" % r.stderr.strip())


def run(args, ap, t0, co, tests_dir, dialect, bpftrace, gotrace, gotrace_src, gt_mtime, stop):
    cases = read_cases(tests_dir, dialect)
    ensure_debugfs()
    env = Env(bpftrace, tests_dir, args.allow_probe)
    runner = Runner(tests_dir, dialect, stop, args.timeout_scale)
    for tool in (bpftrace, gotrace):
        if tool_notifies(tool):
            runner.notifying.add(tool)
    bt_version = tool_version(bpftrace)
    log("checkout %s (tests %s), dialect %s, %d cases in %d files" % (
        co, tests_dir, dialect, len(cases), len({c.file for c in cases})))
    log("reference %s (%s); gotrace %s%s (%s)" % (
        bpftrace, bt_version, gotrace_src,
        "" if gotrace == gotrace_src else ", run from a copy in " + os.path.dirname(gotrace),
        tool_version(gotrace)))
    log("tools printing %s: %s" % (NOTIFY, ", ".join(sorted(runner.notifying)) or "none"))

    if args.filter:
        cases = [c for c in cases if any(f in c.ident for f in args.filter)]
        log("filter %s: %d cases" % (args.filter, len(cases)))

    excluded = {}
    standalone = []
    records = {}
    for c in cases:
        c.key = case_key(c, dialect, tests_dir)
        why = exclusion(c, env)
        rec = {"file": c.file, "name": c.name, "ident": c.ident, "line": c.lineno,
               "key": c.key, "standalone": why is None}
        records[c.ident] = rec
        if why:
            rec["excluded"] = "%s: %s" % why
            excluded.setdefault(why[0], []).append((c, why[1]))
        else:
            standalone.append(c)
    log("standalone: %d of %d; excluded: %s" % (
        len(standalone), len(cases),
        ", ".join("%s %d" % (k, len(v)) for k, v in sorted(excluded.items(), key=lambda kv: -len(kv[1])))))
    if args.show_selection or args.select_only:
        for rule, lst in sorted(excluded.items()):
            for c, d in lst:
                log("  excluded [%s] %s: %s" % (rule, c.ident, d))
    if args.select_only:
        for c in standalone:
            log("  standalone %s" % c.ident)
        return 0

    # Baseline.
    cache = Cache(args.cache_dir, "%s %s%s" % (bpftrace, bt_version,
                                               " +begin-end" if args.rewrite_begin_end else ""))
    todo = [c for c in standalone if args.refresh_baseline or cache.get(c.key) is None]
    interrupted = False
    if todo:
        log("baseline: running %d cases with bpftrace (%d cached)" % (len(todo), len(standalone) - len(todo)))
        done = [0]

        def bt_done(case, res):
            done[0] += 1
            cache.put(case.key, {"status": res["status"], "reason": res["reason"],
                                 "seconds": res["seconds"], "attempts": res["attempts"],
                                 "ident": case.ident})
            if done[0] % 25 == 0:
                cache.save()
            if not args.quiet:
                log("  bpftrace %s %s%s" % (res["status"], case.ident,
                                            (": " + short(res["reason"])) if res["reason"] else ""))
        try:
            run_many(runner, todo, bpftrace, args.jobs, args.baseline_retries, bt_done,
                     args.rewrite_begin_end)
        except KeyboardInterrupt:
            interrupted = True
            runner.kill_all()
        cache.save()
        if interrupted:
            log("interrupted")
            return 130
    baseline = []
    for c in standalone:
        b = cache.get(c.key) or {}
        records[c.ident]["bpftrace"] = b
        if b.get("status") == "PASS":
            baseline.append(c)
    log("baseline: bpftrace passes %d of %d standalone cases" % (len(baseline), len(standalone)))
    if args.show_selection:
        for c in standalone:
            b = records[c.ident]["bpftrace"]
            if b.get("status") != "PASS":
                log("  not in baseline (bpftrace fails) %s: %s" % (c.ident, short(b.get("reason", "?"))))

    def run_gotrace(items, into, prefix):
        """gotrace over ITEMS, results into INTO; True when interrupted."""
        def done(case, res):
            into[case.ident] = res
            if res["status"] == "FAIL":
                res["category"], res["detail"] = categorize(case, res, tests_dir)
            if not args.quiet:
                log("%s%s %s%s" % (prefix, res["status"], case.ident,
                                   (": " + short(res["reason"])) if res["reason"] and res["status"] == "FAIL" else ""))
        try:
            run_many(runner, items, gotrace, args.jobs, args.retries, done)
        except KeyboardInterrupt:
            runner.kill_all()
            return True
        return False

    results = {}
    if not args.baseline_only and baseline:
        log("running %d baseline cases with gotrace" % len(baseline))
        interrupted = run_gotrace(baseline, results, "")

    beyond = {}
    if args.beyond_baseline and not args.baseline_only and not interrupted:
        extra = [c for c in standalone if c not in baseline]
        log("running %d cases beyond the baseline with gotrace" % len(extra))
        interrupted = run_gotrace(extra, beyond, "beyond ")

    # Report.
    passed = sum(1 for r in results.values() if r["status"] == "PASS")
    per_file = {}
    for c in baseline:
        st = per_file.setdefault(c.file, [0, 0, 0])
        st[1] += 1
        r = results.get(c.ident)
        if r and r["status"] == "PASS":
            st[0] += 1
    for c in cases:
        per_file.setdefault(c.file, [0, 0, 0])[2] += 1

    cats = {}
    fails = [(c, results[c.ident]) for c in baseline
             if c.ident in results and results[c.ident]["status"] == "FAIL"]
    for c, r in fails:
        cats.setdefault(r["category"], []).append((c, r))

    if not args.baseline_only:
        log("")
        log("per file (gotrace passes / baseline / cases in file):")
        for f in sorted(per_file):
            p, b, t = per_file[f]
            if b:
                log("  %-22s %3d / %3d  (%d)" % (f, p, b, t))
        log("")
        log("failure categories:")
        for cat, lst in sorted(cats.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            log("  %-36s %3d" % (cat, len(lst)))
            details = {}
            for c, r in lst:
                details.setdefault(r["detail"], []).append(c)
            for d, cs in sorted(details.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:8]:
                log("      %3d  %-40s e.g. %s" % (len(cs), short(d, 40), ", ".join(x.ident for x in cs[:3])))
            if len(details) > 8:
                log("      ... %d more details" % (len(details) - 8))
        if args.list_failures:
            log("")
            log("failures:")
            for c, r in fails:
                log("  %s (%s:%d)" % (c.ident, c.file, c.lineno))
                log("      command:  %s" % short(r["command"], 300))
                log("      reason:   %s" % r["reason"])
                log("      category: %s / %s" % (r["category"], r["detail"]))
                for line in r["output"].splitlines()[:6]:
                    log("      | %s" % short(line, 150))
        log("")
        if gt_mtime and os.path.exists(gotrace) and os.stat(gotrace).st_mtime != gt_mtime:
            log("WARNING: %s changed during the run" % gotrace)
        elif gotrace != gotrace_src and os.stat(gotrace_src).st_mtime != os.stat(gotrace).st_mtime:
            log("note: %s was rebuilt during the run; the results are for the copy taken at the start"
                % gotrace_src)
        pct = 100.0 * passed / len(baseline) if baseline else 0.0
        log("standalone cases: %d, baseline (bpftrace %s passes): %d" % (
            len(standalone), bt_version, len(baseline)))
        log("gotrace passes %d of %d (%.1f %%)%s" % (passed, len(baseline), pct,
                                                    " [interrupted]" if interrupted else ""))
        dep = sum(1 for r in results.values()
                  if r["status"] == "FAIL" and r.get("departure_only"))
        if baseline:
            log("counting the departures documented in docs/bpftrace-differences.md "
                "(error:/warning: for ERROR:/WARNING:, the tool's own name) as passes: "
                "%d of %d (%.1f %%)" % (passed + dep, len(baseline),
                                         100.0 * (passed + dep) / len(baseline)))
        if beyond:
            bfiles = {}
            for c in standalone:
                if c.ident in beyond:
                    st = bfiles.setdefault(c.file, [0, 0])
                    st[1] += 1
                    st[0] += beyond[c.ident]["status"] == "PASS"
            if args.list_failures:
                log("")
                log("failures beyond the baseline:")
                for c in standalone:
                    r = beyond.get(c.ident)
                    if not r or r["status"] == "PASS":
                        continue
                    log("  %s (%s:%d)" % (c.ident, c.file, c.lineno))
                    log("      command:  %s" % short(r["command"], 300))
                    log("      reason:   %s" % r["reason"])
                    for line in r["output"].splitlines()[:8]:
                        log("      | %s" % short(line, 150))
            log("beyond the baseline (cases %s fails, not counted above): gotrace passes %d of %d; "
                "per file: %s" % (bt_version, sum(v[0] for v in bfiles.values()), len(beyond),
                                  ", ".join("%s %d/%d" % (f, v[0], v[1]) for f, v in sorted(bfiles.items()))))
            bdep = [c.ident for c in standalone if c.ident in beyond and
                    beyond[c.ident]["status"] == "FAIL" and beyond[c.ident].get("departure_only")]
            log("beyond the baseline, counting the departures documented in "
                "docs/bpftrace-differences.md as passes: %d of %d (%d departures: %s)" % (
                    sum(v[0] for v in bfiles.values()) + len(bdep), len(beyond), len(bdep),
                    ", ".join(bdep)))
    log("elapsed %.0f s" % (time.monotonic() - t0))

    if args.json:
        for ident, r in list(results.items()) + list(beyond.items()):
            rec = records[ident]
            rec["gotrace"] = {k: r.get(k) for k in ("status", "reason", "category", "detail",
                                                     "rc", "timed_out", "seconds", "command",
                                                     "first_error", "failed_expects",
                                                     "departure_only")}
            rec["gotrace"]["output"] = r["output"][:4000]
        doc = {
            "checkout": co, "tests_dir": tests_dir, "dialect": dialect,
            "bpftrace": bpftrace, "bpftrace_version": bt_version, "gotrace": gotrace_src,
            "filter": args.filter,
            "counts": {"cases": len(cases), "standalone": len(standalone),
                       "baseline": len(baseline), "gotrace_pass": passed,
                       "gotrace_fail": len(fails)},
            "excluded": {k: len(v) for k, v in excluded.items()},
            "per_file": {f: {"pass": v[0], "baseline": v[1], "cases": v[2]}
                         for f, v in sorted(per_file.items())},
            "categories": {k: {"count": len(v),
                               "cases": [{"case": c.ident, "detail": r["detail"]} for c, r in v]}
                           for k, v in cats.items()},
            "cases": [records[c.ident] for c in cases],
            "elapsed_seconds": round(time.monotonic() - t0, 1),
        }
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
    return 130 if interrupted else 0


if __name__ == "__main__":
    sys.exit(main())
