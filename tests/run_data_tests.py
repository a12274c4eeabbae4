#!/usr/bin/env python3
"""Runs data-file test cases against gotrace.

    run_data_tests.py --gotrace BIN --work DIR FILE.test...

A .test file holds cases; lines before the first case are comments:

    === case name
    (free text up to the first section: a description)
    --- args
    --parse-only -d ast
    --- program
    BEGIN { printf("hi\\n"); }
    --- stdout
    ...
    --- stderr
    ...
    --- status
    2

Sections:
  args     shell words (shlex), default "--parse-only -d ast"
  program  required; passed as `-e PROGRAM` after the args
  posargs  shell words after the program: its positional parameters $1, $2, ...
  env      NAME=VALUE shell words added to gotrace's environment (TZ=UTC, a
           BPFTRACE_* setting)
  stdout, stderr
           compared exactly when present (trailing newlines aside)
  status   expected exit status, default 0
  file NAME
           a file written under the case's own directory before the run (any
           number of them; NAME may hold '/'): scripts to import. A case with
           files runs in that directory, @FILES@ stands for it, and it may have no
           program (its args then name a script)
  chmod    MODE NAME lines applied to those files and directories, as octal
Trailing blank lines of every section are dropped, so cases may be separated by
blank lines; a program or an expected output cannot end in blank lines.
@WORK@ in args, program, stdout and stderr stands for the work directory, and
@GO:NAME@ for a Go target built at test time from tests/go/NAME/main.go (go build,
CGO_ENABLED=0) into WORK/bin/NAME, and @GO-s:NAME@ for the same built without symbols
and DWARF (-ldflags='-s -w') into WORK/bin/NAME-s.

Prints "PASS name" or "FAIL name" with the differences for every case, then
"N passed, M failed"; exits 1 if anything failed.
"""

import argparse
import difflib
import fcntl
import os
import re
import shlex
import shutil
import subprocess
import sys

SECTIONS = ("args", "program", "posargs", "env", "stdout", "stderr", "status", "chmod")
DEFAULT_ARGS = "--parse-only -d ast"
TIMEOUT = 60


class Case:
    def __init__(self, path, line, name):
        self.path = path
        self.line = line
        self.name = name
        self.sections = {}

    def files(self):
        return {k[5:].strip(): v for k, v in self.sections.items() if k.startswith("file ")}


def parse_file(path):
    """Returns the cases of one file; raises ValueError on a malformed file."""
    cases = []
    case = None
    section = None
    with open(path, encoding="utf-8") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if line.startswith("=== "):
                case = Case(path, lineno, line[4:].strip())
                cases.append(case)
                section = None
            elif line.startswith("--- ") and case is not None:
                section = line[4:].strip()
                if section not in SECTIONS and not section.startswith("file "):
                    raise ValueError(f"{path}:{lineno}: unknown section '{section}'")
                if section in case.sections:
                    raise ValueError(f"{path}:{lineno}: section '{section}' given twice")
                case.sections[section] = []
            elif section is not None:
                case.sections[section].append(line)
    for c in cases:
        for name, lines in c.sections.items():
            while lines and not lines[-1].strip():
                lines.pop()
            c.sections[name] = "\n".join(lines)
        if "program" not in c.sections and not c.files():
            raise ValueError(f"{c.path}:{c.line}: case '{c.name}' has no program")
    return cases


def diff(what, expected, actual):
    lines = difflib.unified_diff(
        expected.splitlines(), actual.splitlines(),
        f"expected {what}", f"actual {what}", lineterm="")
    return "\n".join("    " + l for l in lines)


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gotool  # noqa: E402  (which go builds the targets)

GO_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "go")


def go_target(name, work, stripped=False):
    """Builds tests/go/NAME once per run (cached by mtime); returns its path. Under a lock,
    into a file renamed when whole: data tests run two at a time (scripts/test.sh)."""
    src = os.path.join(GO_DIR, name)
    out = os.path.join(work, "bin", name + ("-s" if stripped else ""))
    main = os.path.join(src, "main.go")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(out) and os.path.getmtime(out) >= os.path.getmtime(main):
            return out
        env = dict(os.environ, CGO_ENABLED="0")
        env.setdefault("GOCACHE", os.path.join(work, "gocache"))
        flags = ["-ldflags=-s -w"] if stripped else []
        env["GOTOOLCHAIN"] = "local"
        r = subprocess.run([gotool.go(), "build", *flags, "-o", out + ".tmp", "main.go"],
                           cwd=src, env=env, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"go build {name}: {r.stderr}")
        os.rename(out + ".tmp", out)
    return out


def write_files(case, work):
    """Writes the case's files into a fresh directory of its own; returns it or None."""
    files = case.files()
    if not files:
        return None
    slug = re.sub(r"[^A-Za-z0-9]+", "-", f"{os.path.basename(case.path)}-{case.line}")
    top = os.path.join(work, "files", slug)
    shutil.rmtree(top, ignore_errors=True)
    for name, text in files.items():
        path = os.path.join(top, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace("@FILES@", top) + "\n")
    # gotrace imports only what no one else could write, whatever the umask is
    os.chmod(os.path.join(work, "files"), 0o755)
    for d, _, names in os.walk(top):
        os.chmod(d, 0o755)
        for n in names:
            os.chmod(os.path.join(d, n), 0o644)
    for line in case.sections.get("chmod", "").splitlines():
        if line.strip():
            mode, name = line.split(None, 1)
            os.chmod(os.path.join(top, name.strip()), int(mode, 8))
    return top


def run_case(case, gotrace, work):
    """Returns a list of failure descriptions (empty when the case passes)."""
    files = write_files(case, work)

    def sub(text):
        text = re.sub(r"@GO(-s)?:([A-Za-z0-9_]+)@",
                      lambda m: go_target(m.group(2), work, bool(m.group(1))), text)
        if files:
            text = text.replace("@FILES@", files)
        return text.replace("@WORK@", work)
    args = shlex.split(sub(case.sections.get("args", DEFAULT_ARGS)))
    if "program" in case.sections:
        args += ["-e", sub(case.sections["program"])]
    try:
        posargs = shlex.split(sub(case.sections.get("posargs", "")))
        env = dict(os.environ)
        env.update(w.split("=", 1) for w in shlex.split(sub(case.sections.get("env", ""))))
        p = subprocess.run([gotrace] + args + posargs, cwd=files or work,
                           capture_output=True, timeout=TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        return [f"    timed out after {TIMEOUT}s"]
    out = p.stdout.decode("utf-8", "replace").rstrip("\n")
    err = p.stderr.decode("utf-8", "replace").rstrip("\n")
    problems = []
    status = case.sections.get("status", "0").strip()
    if p.returncode < 0:
        problems.append(f"    killed by signal {-p.returncode}")
    elif str(p.returncode) != status:
        problems.append(f"    exit status {p.returncode}, expected {status}")
    for name, actual in (("stdout", out), ("stderr", err)):
        if name in case.sections and sub(case.sections[name]) != actual:
            problems.append(diff(name, sub(case.sections[name]), actual))
    # An unexpected message explains a wrong status; show it when nothing else does.
    if problems and "stderr" not in case.sections and err:
        problems.append("    stderr:\n" + "\n".join("      " + l for l in err.splitlines()))
    return problems


def main():
    ap = argparse.ArgumentParser(description="run gotrace data-file tests")
    ap.add_argument("--gotrace", required=True, help="the gotrace binary")
    ap.add_argument("--work", required=True, help="scratch directory (created)")
    ap.add_argument("-k", metavar="TEXT", help="only cases whose name contains TEXT")
    ap.add_argument("files", nargs="+", metavar="FILE.test")
    opts = ap.parse_args()

    gotrace = os.path.abspath(opts.gotrace)
    work = os.path.abspath(opts.work)
    os.makedirs(work, exist_ok=True)
    passed = failed = 0
    for path in opts.files:
        try:
            cases = parse_file(path)
        except (OSError, ValueError) as e:
            print(f"FAIL {path}: {e}")
            failed += 1
            continue
        for case in cases:
            if opts.k and opts.k not in case.name:
                continue
            problems = run_case(case, gotrace, work)
            if problems:
                failed += 1
                print(f"FAIL {case.name} ({case.path}:{case.line})")
                print("\n".join(problems))
            else:
                passed += 1
                print(f"PASS {case.name}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
