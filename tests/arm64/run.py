#!/usr/bin/env python3
"""gotrace on Debian's arm64 kernels, checked against the traced programs' own output.

    python3 tests/arm64/run.py [--kernel 6.1|6.12] [--build build-arm64] [-k CASE]

Run on the host: the arm64 gotrace is built (scripts/build.sh --arch arm64: nothing to
do when up to date), the Go targets are built here for arm64 (GOARCH=arm64) into
BUILD/testbin, one guest (tests/kernels/vm.sh --arch arm64) runs every case's command
with BUILD's gotrace, and the checks are made here on what came back (each command's
stdout, stderr and exit status):
  demo     README command 1's gotrace command (scripts/demo.sh) on the bundled example:
           every add* call with the arguments main passes;
  values   tests/go/ctapp: args.r's fields as the program's %+v says them;
  goids    tests/go/goparents: goid at main.report = the goroutine runtime.Stack names;
  returns  tests/go/rets: retval at each of Sign's three RETs, a one-RET method, a
           promoted-method wrapper: the counts its loop makes;
  stacks   ustack at a leaf's entry and return: its caller from the link register;
  funcgraph tests/go/funcgraph: every call's duration between the program's own inner
           and outer clocks (gtlib.own_times), nested as the program calls them;
  oncpu    tests/go/oncpu: each call's on-CPU time against the program's own thread and
           process CPU clocks, judged as test_oncpu judges it (oncpulib);
  probes   profile:hz with -f pprof on tests/go/burn, against the program's own CPU
           profile of the same run (both read by go tool pprof: the most sampled stack);
           tracepoint: and kprobe: counts of a command's writes;
  matrix   (6.1 stage) tests/go/matrix built by Debian's Go 1.19 and the newest three Go
           minors, plain, stripped, with cgo (clang-16 and lld against the arm64 root)
           and with cgo stripped, judged as test_gomatrix judges it on x86_64
           (tests/runtime/matrixlib.py): goids, values by name, print() as %+v, results,
           maps, a source line, generic instances, ustack against runtime.Callers, -l
           against go tool nm, names refused without DWARF.
Left out, with why: PIE builds of the matrix (the arm64 reader's PIE handling is
checked by unit/arm64), profile shares (TCG spends its time elsewhere than hardware
does, as in the x86_64 kernels stages), and the suite's bpftrace comparisons (the
language does not change with the architecture).
Exit status 1 when any check failed."""

import argparse
import os
import re
import subprocess
import sys
import time
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests"))
sys.path.insert(0, os.path.join(REPO, "tests", "runtime"))
import gotool  # noqa: E402
import gtlib  # noqa: E402
import matrixlib  # noqa: E402
import oncpulib  # noqa: E402

TARGETS = ["ctapp", "goparents", "rets", "funcgraph", "burn", "oncpu"]
STRIP = "-ldflags=-s -w"


class Res:
    """A guest command's result, as gtlib.describe() wants it."""

    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


class Checks:
    def __init__(self, only):
        self.only, self.passed, self.failed = only, 0, 0

    def case(self, name):
        return not self.only or any(o in name for o in self.only)

    def check(self, name, ok, detail=""):
        print("%s %s" % ("PASS" if ok else "FAIL", name), flush=True)
        if ok:
            self.passed += 1
            return True
        self.failed += 1
        for line in str(detail).rstrip("\n").splitlines()[:60]:
            print("    " + line)
        return False


def go_env(gocmd, cgo_root=None):
    """The environment of an arm64 build; with CGO_ROOT (the arm64 root), cgo's C by
    clang-16 against it, linked by lld (the host has no arm64 binutils)."""
    env = dict(os.environ, GOARCH="arm64", CGO_ENABLED="0", GOTOOLCHAIN="local",
               GOFLAGS="-mod=mod", GO111MODULE="auto",
               GOCACHE=os.path.join(gotool.cache_dir(), "gocache"))
    if cgo_root:
        env.update(CGO_ENABLED="1", CC="clang-16 --target=aarch64-linux-gnu --sysroot=" +
                   cgo_root, CGO_LDFLAGS="-fuse-ld=lld")
    env["PATH"] = os.path.dirname(gocmd) + os.pathsep + env.get("PATH", "")
    return env


def go_build(gocmd, src, files, out, flags=(), cgo_root=None):
    """FILES of SRC built for arm64 by GOCMD into OUT, when a source or GOCMD is newer."""
    newest = max(os.path.getmtime(p) for p in
                 [os.path.join(src, f) for f in files] + [os.path.realpath(gocmd)])
    if os.path.exists(out) and os.path.getmtime(out) >= newest:
        return out
    r = subprocess.run([gocmd, "build", *flags, "-o", out + ".tmp", *files], cwd=src,
                       env=go_env(gocmd, cgo_root), capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s build %s: %s" % (gocmd, " ".join(flags), r.stderr.strip()))
    os.rename(out + ".tmp", out)
    return out


def demo_command():
    """scripts/demo.sh's gotrace line (README command 1), with build/ for $B and $G."""
    line = [l for l in open(os.path.join(REPO, "scripts", "demo.sh"))
            if l.startswith("build/gotrace ")][0].strip()
    line = line.replace("build/gotrace", "$G", 1)
    return re.sub(r"'build/demo([^']*)'", r'"$B/demo\1"', line, count=1)


# -- the cases: (name, shell command in the guest, judge(check, Res)) ---------------------
def judge_demo(check, r):
    # main calls doSomething(i) for i = 1..3 (demo 3): add(i, 2i) -> add1 -> add2 -> add3
    want = ["main.%-5s a=%d b=%d" % (f, i, 2 * i) for i in range(1, 4)
            for f in ("add", "add1", "add2", "add3")]
    own = "demo: done" in r.stderr
    got = [re.sub(r" +tid=\d+$", "", l) for l in r.stdout.splitlines() if l.startswith("main.")]
    tids = set(re.findall(r"tid=(\d+)$", r.stdout, re.M))
    check("demo: README command 1 prints every add* call with main's arguments",
          r.returncode == 0 and own and got == want and tids and "0" not in tids,
          gtlib.describe(r))


def judge_values(check, r):
    # "H {N:1 Word:alpha}" from the program, "T 1 alpha" from the probe
    out = r.stdout + r.stderr
    own = [re.sub(r"^H \{N:(\d+) Word:(.*)\}$", r"\1 \2", l) for l in out.splitlines()
           if l.startswith("H ")]
    traced = [l[2:] for l in out.splitlines() if l.startswith("T ")]
    check("values: args.r.N and args.r.Word as the program's %+v",
          len(own) == 3 and sorted(traced) == sorted(own), gtlib.describe(r))


def judge_goids(check, r):
    # "goroutine N: created by ..." from runtime.Stack, "G N" from the probe
    out = r.stdout + r.stderr
    own = sorted(int(m) for m in re.findall(r"^goroutine (\d+): created by", out, re.M))
    traced = sorted(int(m) for m in re.findall(r"^G (\d+)$", out, re.M))
    check("goids: goid at main.report is the goroutine runtime.Stack names (%d)" % len(own),
          len(own) == 4 + 3 + 4 + 5 + 6 and traced == own, gtlib.describe(r))


def judge_returns(check, r):
    # rets 12 calls Sign(-1), Sign(0), Sign(1) and Nop 12 times, Name 12 times (half of
    # them through (*Outer).Name's wrapper)
    want = ["@name: 12", "@nop: 12", "@s[-1]: 12", "@s[0]: 12", "@s[1]: 12"]
    check("returns: retval at each of Sign's RETs, a one-RET method, through a wrapper",
          r.returncode == 0 and all(w in r.stdout.splitlines() for w in want),
          gtlib.describe(r))


def judge_stacks(check, r):
    # Sign's caller main.main at entry and return (from LR), then runtime.main; one key a
    # call site: main.main calls Sign from three places
    stacks = re.findall(r"^@\[(go:main\.Sign:\w+), \n(.*?)\n\]: (\d+)$", r.stdout, re.S | re.M)
    per = Counter()
    ok = len(stacks) == 6
    for probe, frames, n in stacks:
        names = [re.sub(r"\+\d+$", "", f.strip()) for f in frames.splitlines() if f.strip()]
        ok = ok and names == ["main.Sign", "main.main", "runtime.main"]
        per[probe] += int(n)
    check("stacks: ustack at Sign's entry and return: Sign, main.main, runtime.main (6 each)",
          ok and per == {"go:main.Sign:entry": 6, "go:main.Sign:return": 6},
          gtlib.describe(r))


def judge_funcgraph(check, r):
    fg = r.stdout + r.stderr
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
          timed, r.returncode == 0 and timed >= 6 and not bad and not any(left.values()),
          "\n".join(bad) + "\n" + gtlib.describe(r))


def judge_oncpu(check, r):
    # test_oncpu's script case: each call's oncpu against the program's own CPU clocks
    m = re.search(r"^ncpu (\d+)$", r.stderr, re.M)
    detail = gtlib.describe(r)
    check("oncpu: runs, the program's output unchanged",
          r.returncode == 0 and "done sink=" in r.stdout and m, detail)
    oncpulib.check_calls(check, "oncpu", oncpulib.parse_calls(r.stdout),
                         oncpulib.own_times(r.stderr), detail, int(m.group(1)) if m else 1)


def pprof_traces(data, tag):
    """[(frames leaf first, amount)] of the pprof profile DATA (bytes), by the host's go
    tool pprof -traces (gtlib's parser); frames cut below main.main; None when pprof
    cannot read it. AMOUNT is ms for a time, samples for a count: only compared within
    one profile."""
    import tempfile
    with tempfile.NamedTemporaryFile(suffix="-" + tag) as f:
        f.write(data)
        f.flush()
        got = gtlib.pprof_traces(gotool.go(), f.name)
    if got is None:
        return None
    out = []
    for frames, amount, unit in got:
        if "main.main" in frames:
            frames = frames[:frames.index("main.main") + 1]
        out.append((frames, amount * {"ms": 1, "s": 1000, "us": 0.001, None: 1}[unit]))
    return out


def judge_profile(check, r):
    # burn's own CPU profile (runtime/pprof) and gotrace's -f pprof of the same run, both
    # read by go tool pprof: the stack each sampled most is among the other's stacks, and
    # runs from main.hot or main.cold (main.mix inlined into them, or not) to main.main.
    # (Which of the two is sampled most under TCG is not the question: TCG spends its
    # time elsewhere than hardware does.)
    import base64
    parts = dict(re.findall(r"^--- (\w+)\n(\S*)$", r.stdout, re.M))
    try:
        own = pprof_traces(base64.b64decode(parts.get("own", "")), "own.pprof")
        got = pprof_traces(base64.b64decode(parts.get("gt", "")), "gt.pb.gz")
    except ValueError:
        own = got = None
    ok = bool(own and got)
    tops = []
    for mine, other in ((own, got), (got, own)):
        if not ok:
            break
        top = max(mine, key=lambda x: x[1])[0]
        tops.append(top)
        names = [f for f in top if f != "main.mix (inline)"]
        ok = top in [f for f, _ in other] and names in (["main.hot", "main.main"],
                                                        ["main.cold", "main.main"])
    check("probes: profile:hz -f pprof read by go tool pprof: the most sampled stacks of "
          "gotrace and of the program's own profile are in both (%s)" %
          "; ".join(" < ".join(t) for t in tops),
          r.returncode == 0 and ok,
          "own: %s\ngotrace: %s\n%s" % (own, got, gtlib.describe(r)[:3000]))


def judge_kernel_probes(check, r):
    # dd writes 7 blocks: sys_enter_write and ksys_write each seen 7 times for its pid
    # (the shell's own writes are other pids)
    n = [re.search(r"^@%s: (\d+)$" % k, r.stdout, re.M) for k in "wk"]
    check("probes: tracepoint:syscalls:sys_enter_write and kprobe:ksys_write count a "
          "command's 7 writes", r.returncode == 0 and all(m and int(m.group(1)) == 7
                                                           for m in n), gtlib.describe(r))


def judge_kfunc(check, r):
    # vfs_write 7 times for dd; where the kernel has no BPF trampolines (arm64 before
    # 6.4: Debian's 6.1), the refusal that says so
    m = re.search(r"^@f: (\d+)$", r.stdout, re.M)
    refused = ("cannot attach kfunc:vmlinux:vfs_write: this kernel has no BPF trampolines"
               in r.stderr)
    check("probes: kfunc:vfs_write counts a command's 7 writes, or is refused saying why "
          "(%s)" % ("refused" if refused else "counted"),
          (r.returncode == 0 and m and int(m.group(1)) == 7) or
          (refused and r.returncode != 0), gtlib.describe(r))


BASE = [
    ("values", "printf 'alpha\\nbeta\\ngamma\\n' | $G -c $B/ctapp -e "
               "'go:main.handle:entry { printf(\"T %d %s\\n\", args.r.N, args.r.Word); }'",
     judge_values),
    ("goids", "$G -c $B/goparents -e 'go:main.report:entry { printf(\"G %d\\n\", goid); }'",
     judge_goids),
    ("returns", "$G -c \"$B/rets 12\" -e 'go:main.Sign:return { @s[retval] = count(); } "
                "go:\"main.T.Nop\":return { @nop = count(); } "
                "go:\"main.(*Inner).Name\":return { @name = count(); }'", judge_returns),
    ("stacks", "$G -c \"$B/rets 2\" -e 'go:main.Sign:entry, go:main.Sign:return "
               "{ @[probe, ustack(3)] = count(); }'", judge_stacks),
    ("funcgraph", "$G --funcgraph 'main.add*' -c $B/funcgraph", judge_funcgraph),
    # test_oncpu's: no asynchronous preemption, two goroutines a CPU (the guest's)
    ("oncpu", "echo \"ncpu $(nproc)\" >&2; GODEBUG=asyncpreemptoff=1 $G -c \"$B/oncpu %s"
              "$(($(nproc) * 2))\" -e '%s'" % (" ".join(oncpulib.prog_args(1)[:-1]) + " ",
                                               oncpulib.SCRIPT), judge_oncpu),
    ("profile", "$G -f pprof -o $T/gt.pb.gz -c \"$B/burn -d 3s -o $T/own.pprof\" -e "
                "'profile:hz:199 /pid == cpid/ { @[ustack] = count(); }' && "
                "for f in own gt; do echo \"--- $f\"; base64 -w0 $T/$f.p*; echo; done",
     judge_profile),
    ("kprobes", "$G -c 'dd if=/dev/zero of=/dev/null bs=1 count=7 status=none' -e "
                "'tracepoint:syscalls:sys_enter_write /pid == cpid/ { @w = count(); } "
                "kprobe:ksys_write /pid == cpid/ { @k = count(); }'", judge_kernel_probes),
    ("kfunc", "$G -c 'dd if=/dev/zero of=/dev/null bs=1 count=7 status=none' -e "
              "'kfunc:vfs_write /pid == cpid/ { @f = count(); }'", judge_kfunc),
]
STAGES = {"6.1": ["demo", "base", "matrix"], "6.12": ["demo", "base"]}


def matrix_cases(testbin, checks):
    """The matrix's builds and (name, command, judge) cases; the builds' failures checked."""
    root = subprocess.run(["sh", os.path.join(HERE, "root.sh")], capture_output=True,
                          text=True).stdout.strip()
    rels = []
    deb = gotool.debian_go()
    checks.check("matrix: Debian's Go 1.19 is installed (scripts/install-deps.sh)", deb)
    if deb:
        rels.append((gotool.version(deb), deb))
    names = gotool.releases()
    checks.check("matrix: the module proxy lists Go releases", names, gotool.last_error)
    for rel in names[-3:]:
        g = gotool.toolchain(rel)
        if checks.check("matrix: toolchain %s" % rel, g, gotool.last_error):
            rels.append((rel, g))
    cases = []
    for rel, gocmd in rels:
        k = gotool.key(rel)
        files = ["main.go", "values.go"] + (["range.go"] if k >= (1, 23, 0) else [])
        src = os.path.join(gotool.TESTS, "go", "matrix")
        # test_gomatrix's builds but PIE (the arm64 PIE reader: unit/arm64)
        builds = [("plain", [], None), ("stripped", [STRIP], None),
                  ("cgo", [], root), ("cgo-stripped", [STRIP], root)]
        bins = {}
        try:
            for build, flags, cgo_root in builds:
                bins[build] = go_build(gocmd, src, files + (["cgo.go"] if cgo_root else []),
                                       os.path.join(testbin, "matrix-%s-%s" % (rel, build)),
                                       flags, cgo_root)
        except RuntimeError as e:
            checks.check("%s: builds for arm64" % rel, False, str(e))
            continue
        for build, _, _ in builds:
            b = bins[build]
            stripped = build.endswith("stripped")
            # a stripped build's names: its unstripped twin's
            nm = matrixlib.nm_funcs(gocmd, bins[build[:-len("-stripped")] if "-" in build
                                                 else "plain" if stripped else build])
            gens = matrixlib.generics(nm)
            pre = "arm64 %s/%s" % (rel, build)
            tag = "m-%s-%s" % (rel, build)
            gt = os.path.join(testbin, tag + ".gt")
            with open(gt, "w") as f:
                f.write(matrixlib.script(k, stripped, gens))

            def run(c, r, pre=pre, k=k, stripped=stripped, gens=gens):
                matrixlib.judge_run(c, pre, k, stripped, r, gens)

            def lst(c, r, pre=pre, k=k, stripped=stripped, nm=nm):
                matrixlib.judge_list(c, pre, k, stripped, r, nm)
            cases.append((tag, "$G -c %s %s" % (b, gt), run))
            cases.append((tag + "-l", "$G -l 'go:main.*' -b %s" % b, lst))
            if stripped:
                def refused(c, r, pre=pre, b=b):
                    matrixlib.judge_refused(c, pre, r, b)
                cases.append((tag + "-r", "$G -c %s -e '%s'" % (b, matrixlib.REFUSED), refused))
    return cases


def sections(text):
    """'=== NAME.out|err|rc' lines split the guest's output by case."""
    out, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"^=== ([\w.-]+)\.(out|err|rc)$", line)
        if m:
            cur = out.setdefault(m.group(1), {}).setdefault(m.group(2), [])
        elif cur is not None:
            cur.append(line)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel", default="6.1", choices=sorted(STAGES))
    ap.add_argument("--build", default="build-arm64")
    ap.add_argument("-k", action="append", default=[])
    ap.add_argument("--prepare", action="store_true",
                    help="build gotrace and the targets, fetch the kernel, boot nothing")
    a = ap.parse_args()
    os.chdir(REPO)
    t0 = time.time()
    checks = Checks(a.k)
    r = subprocess.run(["sh", "scripts/build.sh", "--arch", "arm64"],
                       env=dict(os.environ, BUILD_DIR=a.build), capture_output=True, text=True)
    if r.returncode != 0:
        checks.check("the arm64 build (scripts/build.sh --arch arm64)", False,
                     r.stdout[-3000:] + r.stderr[-3000:])
        sys.exit(1)
    gotrace = os.path.abspath(os.path.join(a.build, "gotrace"))
    testbin = os.path.abspath(os.path.join(a.build, "testbin"))
    os.makedirs(testbin, exist_ok=True)
    go = gotool.go()
    for t in TARGETS:
        src = os.path.join(REPO, "tests", "go", t)
        go_build(go, src, sorted(f for f in os.listdir(src) if f.endswith(".go")),
                 os.path.join(testbin, t))
    demo_src = os.path.join(REPO, "examples", "demo")
    go_build(go, demo_src, ["main.go"], os.path.join(testbin, "demo"))
    cases = []
    stage = STAGES[a.kernel]
    if "demo" in stage:
        cases.append(("demo", demo_command(), judge_demo))
    if "base" in stage:
        cases += BASE
    if "matrix" in stage:
        cases += matrix_cases(testbin, checks)
    cases = [c for c in cases if checks.case(c[0])]
    if a.prepare:  # scripts/test.sh, beside the plain pass: the kernel's download too
        r = subprocess.run(["sh", "tests/kernels/vm.sh", "--arch", "arm64", "--kernel",
                            a.kernel, "--fetch-only"], capture_output=True, text=True)
        checks.check("arm64 %s: kernel fetched" % a.kernel, r.returncode == 0,
                     r.stdout[-2000:] + r.stderr[-2000:])
        print("arm64 %s: prepared in %.0f s" % (a.kernel, time.time() - t0))
        sys.exit(1 if checks.failed else 0)
    print("arm64 %s: %d cases, built in %.0f s" % (a.kernel, len(cases), time.time() - t0),
          flush=True)
    batch = os.path.join(testbin, "cases-%s.sh" % a.kernel)
    with open(batch, "w") as f:
        f.write("G=%s\nB=%s\nT=$(mktemp -d)\n" % (gotrace, testbin))
        for name, cmd, _ in cases:
            # each part ends with a newline, for the next === line to start one
            f.write("(%s) >$T/out 2>$T/err; echo $? >$T/rc\n" % cmd)
            f.write("for s in out err rc; do echo \"=== %s.$s\"; sed -e '$a\\' $T/$s; done\n"
                    % name)
    r = subprocess.run(["sh", "tests/kernels/vm.sh", "--arch", "arm64", "--kernel", a.kernel,
                        "--timeout", "2400", "--", "sh", batch],
                       capture_output=True, text=True, timeout=2700)
    got = sections(r.stdout)
    for name, cmd, judge in cases:
        g = got.get(name)
        if g is None:
            checks.check("%s: ran in the guest" % name, False,
                         "vm.sh exit %d\n%s" % (r.returncode, (r.stdout + r.stderr)[-3000:]))
            continue
        rc = g.get("rc", ["-1"])
        res = Res(int(rc[0]) if rc and rc[0].lstrip("-").isdigit() else -1,
                  gtlib.BANNER.sub("", "\n".join(g.get("out", [])) + "\n", count=1),
                  "\n".join(g.get("err", [])) + "\n")
        judge(checks.check, res)
    print("arm64 %s: %.0f s" % (a.kernel, time.time() - t0))
    if r.returncode != 0:
        checks.check("vm.sh ended cleanly", False, "exit %d\n%s" % (r.returncode,
                                                                  r.stderr[-2000:]))
    print("%d passed, %d failed" % (checks.passed, checks.failed))
    sys.exit(1 if checks.failed else 0)


if __name__ == "__main__":
    main()
