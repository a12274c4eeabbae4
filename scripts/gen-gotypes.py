#!/usr/bin/env python3
"""Generates gotrace's Go type data (data/gotypes/go1.N.txt) for stripped targets: for
each Go release, builds data/gotypes/probe with DWARF and runs gotrace-godata (binfo's
own DWARF reader) over it with data/gotypes/funcs.txt.

  scripts/gen-gotypes.py --godata build/gotrace-godata            all releases
  scripts/gen-gotypes.py --godata ... --go /usr/local/go/bin/go   one go command
  scripts/gen-gotypes.py --godata ... --check DIR                 compare, write nothing

The releases are those of tests/gotool.py: Debian's Go 1.19 and the newest patch of
every minor from 1.21 (downloaded once into the toolchain cache). The file is keyed by
minor: two patches of one minor write the same bytes (the test regenerates with the
machine's patch and compares)."""

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


def minor_of(version):
    m = re.fullmatch(r"go1\.(\d+)(?:\.\d+)?", version or "")
    return "go1.%s" % m.group(1) if m else None


def generate(godata, gocmd, work):
    """(minor, text) of GOCMD's data; raises RuntimeError with the reason."""
    version = gotool.version(gocmd)
    minor = minor_of(version)
    if not minor:
        raise RuntimeError("%s: %s is not a release" % (gocmd, version))
    out = os.path.join(work, "probe-" + version)
    env = dict(os.environ, GOTOOLCHAIN="local", CGO_ENABLED="0", GOFLAGS="",
               GOCACHE=os.path.join(gotool.cache_dir(), "gocache"))
    env["PATH"] = os.path.dirname(gocmd) + os.pathsep + env.get("PATH", "")
    r = subprocess.run([gocmd, "build", "-o", out, "main.go"], cwd=os.path.join(DATA, "probe"),
                       env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s build: %s" % (version, r.stderr.strip()))
    r = subprocess.run([godata, out, minor, os.path.join(DATA, "funcs.txt")],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("gotrace-godata %s: %s" % (version, r.stderr.strip()))
    return minor, version, r.stdout


def all_gocmds():
    cmds = [gotool.debian_go()] + [gotool.toolchain(v) for v in gotool.releases()]
    return [c for c in cmds if c]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--godata", required=True, help="the gotrace-godata executable")
    ap.add_argument("--go", action="append", help="a go command (default: every release)")
    ap.add_argument("--check", action="store_true",
                    help="compare with data/gotypes, write nothing; exit 1 on a difference")
    a = ap.parse_args()
    bad = 0
    with tempfile.TemporaryDirectory(prefix="gotypes-") as work:
        for gocmd in a.go or all_gocmds():
            minor, version, text = generate(a.godata, gocmd, work)
            path = os.path.join(DATA, minor + ".txt")
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
