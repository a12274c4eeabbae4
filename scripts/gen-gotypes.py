#!/usr/bin/env python3
"""Generates gotrace's Go type data (data/gotypes/go1.N.P.txt) for stripped targets: for
each Go release, builds data/gotypes/probe with DWARF and runs gotrace-godata (binfo's
own DWARF reader) over it with data/gotypes/funcs.txt.

  scripts/gen-gotypes.py --godata build/gotrace-godata            the default releases
  scripts/gen-gotypes.py --godata ... --go /usr/local/go/bin/go   one go command
  scripts/gen-gotypes.py --godata ... --release go1.26.5          one release (downloaded)
  scripts/gen-gotypes.py --godata ... --check ...                 compare, write nothing

The default releases: those of tests/gotool.py (Debian's Go 1.19, the newest patch of
every minor from 1.21, downloaded once into the toolchain cache), the machine's Go, and
RELEASES below: those of the real stripped programs the tests trace. A file is one
exact release's: patch releases change standard-library types (net/http.response is
232 bytes in go1.26.8, 240 in go1.26.11)."""

import argparse
import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests"))
import gotool  # noqa: E402

DATA = os.path.join(REPO, "data", "gotypes")


# esbuild 0.28.2 (go1.26.5) and lefthook 2.2.2 (go1.27.0) of test_tools, from npm
RELEASES = ["go1.26.5", "go1.27.0"]


def is_release(version):
    return re.fullmatch(r"go1\.\d+(?:\.\d+)?", version or "") is not None


def generate(godata, gocmd, work):
    """(version, text) of GOCMD's data; raises RuntimeError with the reason."""
    version = gotool.version(gocmd)
    if not is_release(version):
        raise RuntimeError("%s: %s is not a release" % (gocmd, version))
    out = os.path.join(work, "probe-" + version)
    env = dict(os.environ, GOTOOLCHAIN="local", CGO_ENABLED="0", GOFLAGS="",
               GOCACHE=os.path.join(gotool.cache_dir(), "gocache"))
    env["PATH"] = os.path.dirname(gocmd) + os.pathsep + env.get("PATH", "")
    r = subprocess.run([gocmd, "build", "-o", out, "main.go"], cwd=os.path.join(DATA, "probe"),
                       env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s build: %s" % (version, r.stderr.strip()))
    r = subprocess.run([godata, out, version, os.path.join(DATA, "funcs.txt")],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("gotrace-godata %s: %s" % (version, r.stderr.strip()))
    return version, r.stdout


def all_gocmds():
    rels = sorted(set(gotool.releases() + RELEASES), key=gotool.key)
    cmds = [gotool.debian_go(), gotool.go()] + [gotool.toolchain(v) for v in rels]
    return [c for c in cmds if c]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--godata", required=True, help="the gotrace-godata executable")
    ap.add_argument("--go", action="append", help="a go command (default: every release)")
    ap.add_argument("--release", action="append", help="a release (go1.26.5), downloaded")
    ap.add_argument("--check", action="store_true",
                    help="compare with data/gotypes, write nothing; exit 1 on a difference")
    a = ap.parse_args()
    bad = 0
    with tempfile.TemporaryDirectory(prefix="gotypes-") as work:
        gocmds = list(a.go or [])
        for rel in a.release or []:
            g = gotool.toolchain(rel)
            if not g:
                raise SystemExit(gotool.last_error)
            gocmds.append(g)
        for gocmd in gocmds or all_gocmds():
            version, text = generate(a.godata, gocmd, work)
            path = os.path.join(DATA, version + ".txt")
            if a.check:
                old = open(path).read() if os.path.exists(path) else None
                same = old == text
                bad += not same
                print("%s: %s %s" % (version, path, "same" if same else
                                     "missing" if old is None else "DIFFERS"))
            else:
                with open(path, "w") as f:
                    f.write(text)
                print("%s: wrote %s (%d bytes)" % (version, path, len(text)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
