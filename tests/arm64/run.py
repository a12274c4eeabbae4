#!/usr/bin/env python3
"""gotrace on Debian's arm64 kernels, checked against the traced programs' own output.

    python3 tests/arm64/run.py [--kernel 6.1] [--build build-arm64]

Run on the host: the Go targets of tests/go are built here for arm64 (GOARCH=arm64, the
suite's Go) into BUILD/testbin, one guest (tests/kernels/vm.sh --arch arm64) runs every
case's gotrace command with BUILD's arm64 gotrace (tests/arm64/toolchain.cmake), and the
checks are made here on what came back:
  values   tests/go/ctapp: args.r's fields as the program's %+v says them;
  goids    tests/go/goparents: goid at main.report = the goroutine runtime.Stack names;
  returns  tests/go/rets: retval at each of Sign's three RETs, a one-RET method, a
           promoted-method wrapper: the counts its loop makes;
  stacks   ustack at a leaf's entry and return: its caller from the link register;
  funcgraph tests/go/funcgraph: every call's duration between the program's own inner
           and outer clocks (gtlib.own_times), nested as the program calls them.
Exit status 1 when any check failed."""

import argparse
import os
import re
import subprocess
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests"))
sys.path.insert(0, os.path.join(REPO, "tests", "runtime"))
import gotool  # noqa: E402
import gtlib  # noqa: E402

TARGETS = ["ctapp", "goparents", "rets", "funcgraph"]
CASES = {
    "values": ("printf 'alpha\\nbeta\\ngamma\\n' | $G -c $B/ctapp -e "
               "'go:main.handle:entry { printf(\"T %d %s\\n\", args.r.N, args.r.Word); }'"),
    "goids": "$G -c $B/goparents -e 'go:main.report:entry { printf(\"G %d\\n\", goid); }'",
    "returns": ("$G -c \"$B/rets 12\" -e 'go:main.Sign:return { @s[retval] = count(); } "
                "go:\"main.T.Nop\":return { @nop = count(); } "
                "go:\"main.(*Inner).Name\":return { @name = count(); }'"),
    "stacks": ("$G -c \"$B/rets 2\" -e 'go:main.Sign:entry, go:main.Sign:return "
               "{ @[probe, ustack(3)] = count(); }'"),
    "funcgraph": "$G --funcgraph 'main.add*' -c $B/funcgraph",
}


def build(go, out):
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ, GOARCH="arm64", CGO_ENABLED="0", GOTOOLCHAIN="local",
               GOFLAGS="-mod=mod", GO111MODULE="auto")
    for t in TARGETS:
        src = os.path.join(REPO, "tests", "go", t)
        files = sorted(f for f in os.listdir(src) if f.endswith(".go"))
        subprocess.run([go, "build", "-o", os.path.join(out, t), *files], cwd=src, env=env,
                       check=True)


def sections(text):
    """'=== NAME' lines split the guest's output by case."""
    out, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"^=== (\w+)$", line)
        if m:
            cur = out.setdefault(m.group(1), [])
        elif cur is not None:
            cur.append(line)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel", default="6.1")
    ap.add_argument("--build", default="build-arm64")
    a = ap.parse_args()
    os.chdir(REPO)
    gotrace = os.path.abspath(os.path.join(a.build, "gotrace"))
    if not os.path.exists(gotrace):
        sys.exit("no %s: build it with tests/arm64/toolchain.cmake" % gotrace)
    testbin = os.path.abspath(os.path.join(a.build, "testbin"))
    build(gotool.go(), testbin)
    batch = os.path.join(a.build, "arm64-cases.sh")
    with open(batch, "w") as f:
        f.write("G=%s\nB=%s\n" % (gotrace, testbin))
        for name, cmd in CASES.items():
            f.write("echo '=== %s'\n%s 2>&1\n" % (name, cmd))
    r = subprocess.run(["sh", "tests/kernels/vm.sh", "--arch", "arm64", "--kernel", a.kernel,
                        "--timeout", "1500", "--", "sh", batch],
                       capture_output=True, text=True, timeout=1800)
    got = sections(r.stdout)
    failed = 0

    def check(name, ok, detail):
        nonlocal failed
        print("%s %s" % ("PASS" if ok else "FAIL", name))
        if not ok:
            failed += 1
            print("    " + "\n    ".join(detail.splitlines()[-40:]))

    text = {k: "\n".join(v) for k, v in got.items()}
    # values: "H {N:1 Word:alpha}" from the program, "T 1 alpha" from the probe
    own = [re.sub(r"^H \{N:(\d+) Word:(.*)\}$", r"\1 \2", l) for l in got.get("values", [])
           if l.startswith("H ")]
    traced = [l[2:] for l in got.get("values", []) if l.startswith("T ")]
    check("values: args.r.N and args.r.Word as the program's %+v", len(own) == 3 and
          sorted(traced) == sorted(own), text.get("values", r.stderr))
    # goids: "goroutine N: created by ..." from runtime.Stack, "G N" from the probe
    own = sorted(int(m) for m in re.findall(r"^goroutine (\d+): created by", text.get("goids", ""),
                                          re.M))
    traced = sorted(int(m) for m in re.findall(r"^G (\d+)$", text.get("goids", ""), re.M))
    check("goids: goid at main.report is the goroutine runtime.Stack names (%d)" % len(own),
          len(own) == 4 + 3 + 4 + 5 + 6 and traced == own, text.get("goids", r.stderr))
    # returns: rets 12 calls Sign(-1), Sign(0), Sign(1) and Nop 12 times, Name 12 times
    # (half of them through (*Outer).Name's wrapper)
    rt = text.get("returns", "")
    want = ["@name: 12", "@nop: 12", "@s[-1]: 12", "@s[0]: 12", "@s[1]: 12"]
    check("returns: retval at each of Sign's RETs, a one-RET method, through a wrapper",
          all(w in rt.splitlines() for w in want), rt)
    # stacks: Sign's caller main.main at entry and return (from LR), then runtime.main
    st = text.get("stacks", "")
    # (one key a call site: main.main calls Sign from three places)
    stacks = re.findall(r"^@\[(go:main\.Sign:\w+), \n(.*?)\n\]: (\d+)$", st, re.S | re.M)
    per = Counter()
    ok = len(stacks) == 6
    for probe, frames, n in stacks:
        names = [re.sub(r"\+\d+$", "", f.strip()) for f in frames.splitlines() if f.strip()]
        ok = ok and names == ["main.Sign", "main.main", "runtime.main"]
        per[probe] += int(n)
    check("stacks: ustack at Sign's entry and return: Sign, main.main, runtime.main (6 each)",
          ok and per == {"go:main.Sign:entry": 6, "go:main.Sign:return": 6}, st)
    # funcgraph: each call within the program's own inner and outer times
    fg = text.get("funcgraph", "")
    owns = gtlib.own_times(fg)
    calls = re.findall(r"^\S+ goid=\d+ +([\d.]+)(ms|us|s) .*?\} (main\.add\d*) ", fg, re.M)
    unit = {"s": 1e6, "ms": 1e3, "us": 1}
    bad = []
    left = {k: list(v) for k, v in owns.items()}
    for v, u, name in calls:
        us = float(v) * unit[u]
        name = name[len("main."):]  # the program's own names
        if name not in owns:
            continue  # main.add: not timed by the program
        for i, o in enumerate(left.get(name, [])):
            if gtlib.matches_own(us, o):
                left[name].pop(i)
                break
        else:
            bad.append("%s %.1f us matches none of %s" % (name, us, owns.get(name)))
    timed = sum(len(v) for v in owns.values())
    check("funcgraph: %d calls the program timed, each between its inner and outer time" %
          timed, timed >= 6 and not bad and not any(left.values()),
          "\n".join(bad) + "\n" + fg)
    print("%d passed, %d failed" % (len(CASES) - failed, failed))
    if r.returncode not in (0,):
        print("vm.sh: exit %d\n%s" % (r.returncode, r.stderr[-2000:]))
    sys.exit(1 if failed or r.returncode else 0)


if __name__ == "__main__":
    main()
