"""How go: probes attach: the uprobe_multi path and what kernels before 6.6 get
(GT_NO_UPROBE_MULTI=1): one tracefs uprobe event per program, or one perf-event uprobe a
site where tracefs is not there (GT_HIDE_FEATURES=tracefs); the kernel minimum, sites
the kernel refuses inside a wildcard (skipped with one warning) or named alone (fatal),
and 2,000 sites attached, hit and detached on each path."""

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

from gtlib import REPO, Suite, bpf_leftovers, collect, describe, wait_for_line

s = Suite("attach")
TRACEFS = {"GT_NO_UPROBE_MULTI": "1"}
PERF = {"GT_NO_UPROBE_MULTI": "1", "GT_HIDE_FEATURES": "tracefs"}
MULTI = {"GT_NO_UPROBE_MULTI": "0"}
PATHS = (("uprobe_multi", MULTI), ("tracefs", TRACEFS), ("perf-event", PERF))


def run(args, env, timeout=120, **kw):
    """s.run with these environment variables set (the suite's own env otherwise)."""
    saved = s.env
    s.env = dict(saved, **env)
    try:
        return s.run(args, timeout=timeout, **kw)
    finally:
        s.env = saved


def other_gotraces(but):
    """The pids of the gotrace processes running now, BUT's aside."""
    pids = set()
    for p in os.listdir("/proc"):
        try:
            if p.isdigit() and int(p) != but and open("/proc/%s/comm" % p).read().strip() == "gotrace":
                pids.add(int(p))
        except OSError:
            pass
    return pids


def go_build_dir(name, src):
    """go build of a whole directory (tests/go/locked has an assembly file, which a list of
    .go files would leave out)."""
    out = os.path.join(s.work, "bin", name)
    newest = max(os.path.getmtime(os.path.join(src, f)) for f in os.listdir(src))
    if not os.path.exists(out) or os.path.getmtime(out) < newest:
        env = dict(s.env, CGO_ENABLED="0", GO111MODULE="off")
        r = subprocess.run([s.go, "build", "-o", out, "."], cwd=src, env=env,
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("go build failed for %s: %s" % (name, r.stderr))
    return out


def warnings(stderr):
    return [l for l in stderr.splitlines() if l.startswith("gotrace: warning:")]


# --info names the path and why; GT_NO_UPROBE_MULTI=1 changes it.
if s.case("info"):
    r = run(["--info"], MULTI)
    s.check("--info: uprobe_multi where the kernel has it",
            r.returncode == 0 and "Attach path of go: probes\n  uprobe_multi: one link per "
            "program" in r.stdout and "perf_uprobe_cookie: yes" in r.stdout, describe(r))
    r = run(["--info"], TRACEFS)
    s.check("--info: GT_NO_UPROBE_MULTI=1 chooses tracefs uprobe events and says so",
            r.returncode == 0 and "Attach path of go: probes\n  tracefs uprobe events: one per "
            "program, all its sites (GT_NO_UPROBE_MULTI=1)\n" in r.stdout
            and "tracefs uprobe_events: yes" in r.stdout, describe(r))
    r = run(["--info"], PERF)
    s.check("--info: without tracefs, perf-event uprobes, and says so",
            r.returncode == 0 and "Attach path of go: probes\n  perf-event uprobes: one per "
            "site (GT_NO_UPROBE_MULTI=1, no tracefs)\n" in r.stdout
            and "tracefs uprobe_events: no" in r.stdout, describe(r))
    r = run(["--info"], {"GT_HIDE_FEATURES": "uprobe_multi"})
    s.check("--info: without uprobe_multi, tracefs uprobe events (kernel before 6.6)",
            r.returncode == 0 and "uprobe_multi: no" in r.stdout and
            "tracefs uprobe events: one per program, all its sites (no uprobe_multi: kernel "
            "before 6.6)" in r.stdout, describe(r))
    r = run(["--info"], {"GT_HIDE_FEATURES": "uprobe_multi,tracefs"})
    s.check("--info: without uprobe_multi and tracefs, perf-event uprobes",
            r.returncode == 0 and "perf-event uprobes: one per site (no uprobe_multi: kernel "
            "before 6.6; no tracefs)" in r.stdout, describe(r))

# Below the minimum: one error naming what is missing and the kernel, nothing attached.
if s.case("minimum"):
    pair = s.go_build("pair")
    prog = 'go:main.Add:entry { printf("hit\\n"); }'
    for hide, want in (("uprobe_multi,perf_uprobe_cookie",
                        "has no BPF cookies on perf-event uprobes: gotrace needs Linux 5.15 "
                        "or later"),
                       ("ringbuf", "has no BPF ring buffers: gotrace needs Linux 5.8 or later"),
                       ("ringbuf,uprobe_multi,perf_uprobe_cookie",
                        "has no BPF ring buffers and BPF cookies on perf-event uprobes: "
                        "gotrace needs Linux 5.15 or later")):
        r = run(["-c", pair + " 2", "-e", prog], {"GT_HIDE_FEATURES": hide})
        lines = r.stderr.splitlines()
        s.check("without %s: one error, nothing runs" % hide,
                r.returncode == 1 and len(lines) == 1 and lines[0].startswith(
                    "gotrace: error: this kernel (") and lines[0].endswith(want) and
                r.stdout == "", describe(r))
    r = run(["-c", pair + " 2", "-e", 'BEGIN { printf("ok\\n"); exit(); }'],
            {"GT_HIDE_FEATURES": "uprobe_multi,perf_uprobe_cookie"})
    s.check("without any uprobe path, a script without uprobes still runs",
            r.returncode == 0 and r.stdout == "ok\n", describe(r))

# Both paths of older kernels are visible to `bpftool perf show` while the trace runs: a
# perf-event uprobe a site, or one tracefs event a program (bpftool shows its first site).
if s.case("bpftool"):
    spin = s.go_build("spin")
    for name, env, n in (("perf-event", PERF, 2), ("tracefs", TRACEFS, 1)):
        saved = s.env
        s.env = dict(saved, **env)
        tr = s.start(["-c", spin + " 30", "-e", 'BEGIN { printf("READY\\n"); } '
                      'go:main.Tick:entry, go:main.main:entry { @c = count(); }'])
        s.env = saved
        lines = wait_for_line(tr, "READY", 20)
        shown = subprocess.run(["bpftool", "-j", "perf", "show"], capture_output=True,
                               text=True)
        tr.send_signal(2)
        out, err = collect(tr, 60)
        try:
            mine = [e for e in json.loads(shown.stdout or "[]") if e.get("pid") == tr.pid]
        except ValueError:
            mine = []
        s.check("%s: bpftool perf show lists %d uprobe%s on the target" % (name, n, "s" * (n > 1)),
                len(mine) == n and all(e.get("fd_type") == "uprobe" and
                                       e.get("filename") == spin for e in mine) and
                len({e.get("offset") for e in mine}) == n,
                "bpftool: %s\n%s%s%s" % (shown.stdout, "".join(lines), out, err))
        s.check("%s: the trace stops cleanly on SIGINT, nothing left" % name,
                tr.returncode == 0 and not bpf_leftovers(),
                "status %s\n%s%s" % (tr.returncode, err, bpf_leftovers()))

# A gotrace killed with SIGKILL cannot remove its tracefs events; the next gotrace on
# that path removes them (their pid is gone), and leaves other live gotraces' alone.
if s.case("stale"):
    spin = s.go_build("spin")
    # built before the kill: the killed gotrace's events stay until the next gotrace,
    # and another suite on the machine counts them as left over (its bpf_leftovers
    # waits 5 s) while a cold go build ran in between (a flake hunt beside cold31)
    pair = s.go_build("pair")
    saved = s.env
    s.env = dict(saved, **TRACEFS)
    tr = s.start(["-c", spin + " 30", "-e", 'BEGIN { printf("READY\\n"); } '
                  'go:main.Tick:entry { @c = count(); }'])
    s.env = saved
    wait_for_line(tr, "READY", 20)
    # any gotrace that runs meanwhile removes them (a second suite on the machine, cold13):
    # looked for every 5 ms until they are read
    others, watching = set(), [True]

    def watch():
        while watching[0]:
            others.update(other_gotraces(tr.pid))
            time.sleep(0.005)
    w = threading.Thread(target=watch)
    w.start()
    tr.kill()
    collect(tr, 20)
    subprocess.run(["pkill", "-f", spin + " 30"])
    mine = "gotrace_%d/" % tr.pid
    events = next(p for p in ("/sys/kernel/tracing/uprobe_events",
                              "/sys/kernel/debug/tracing/uprobe_events") if os.path.exists(p))
    before = [l for l in open(events).read().splitlines() if mine in l]
    watching[0] = False
    w.join()
    r = run(["-c", pair + " 2", "-e", 'go:main.Add:entry { @c = count(); }'], TRACEFS)
    after = [l for l in open(events).read().splitlines() if mine in l]
    s.check("the events of a killed gotrace stay (%d) until the next one removes them"
            % len(before), (len(before) == 1 or (not before and others)) and after == [] and
            r.returncode == 0 and "@c: 2" in r.stdout,
            "before %s\nafter %s\nother gotraces %s\n%s" % (before, after, others, describe(r)))

# A function whose first instruction uprobes refuse (LOCK prefix): a wildcard leaves it
# out with one warning; named alone, it is an error.
if s.case("refused"):
    locked = go_build_dir("locked", os.path.join(REPO, "tests", "go", "locked"))
    prog = 'go:main.lk*:entry { @c[func] = count(); }'
    warn = ("gotrace: warning: skipped 1 of 3 sites (the kernel cannot probe their "
            "instruction): go:main.lkLocked.abi0:entry (-v lists all)")
    # sema knows LOCK is refused and leaves the site out; GT_ASK_KERNEL=1 tries it anyway:
    # the kernel's refusal, found by halving the sites (the same messages)
    for name, env in [(n + how, dict(e, **extra)) for n, e in PATHS
                      for how, extra in (("", {}), (", kernel asked", {"GT_ASK_KERNEL": "1"}))]:
        r = run(["-c", locked + " 3", "-e", prog], env)
        s.check("%s: a wildcard skips the refused site, traces the rest" % name,
                r.returncode == 0 and "calls=3 counter=3" in r.stdout and
                "@c[main.lkPlainA]: 3\n@c[main.lkPlainB]: 3\n" in r.stdout and
                "lkLocked" not in r.stdout.split("calls=")[1], describe(r))
        s.check("%s: one warning line names it" % name,
                r.stderr.splitlines() == [warn], describe(r))
        r = run(["-v", "-c", locked + " 3", "-e", prog], env)
        s.check("%s: -v lists every skipped site" % name,
                r.returncode == 0 and re.search(
                    r"^gotrace: skipped go:main\.lkLocked\.abi0:entry \(address 0x[0-9a-f]+ in "
                    r"%s\): the instruction cannot be probed \(ENOTSUPP\)$" % re.escape(locked),
                    r.stderr, re.M) is not None, describe(r))
        r = run(["--no-warnings", "-c", locked + " 3", "-e", prog], env)
        s.check("%s: --no-warnings drops the warning" % name,
                r.returncode == 0 and r.stderr == "", describe(r))
        r = run(["-c", locked + " 3", "-e", 'go:main.lkLocked:entry { @c = count(); }'], env)
        lines = r.stderr.splitlines()
        s.check("%s: the function named alone is a clear error, nothing runs" % name,
                r.returncode == 1 and len(lines) == 1 and re.match(
                    r"gotrace: error: cannot attach to %s: the instruction cannot be probed "
                    r"\(ENOTSUPP\) at go:main\.lkLocked\.abi0:entry \(address 0x[0-9a-f]+\)$"
                    % re.escape(locked), lines[0]) is not None and "calls=" not in r.stdout,
                describe(r))
        r = run(["-c", locked + " 3", "-e", 'go:main.lkLocked*:entry { @c = count(); }'], env)
        s.check("%s: a wildcard whose every site is refused is an error" % name,
                r.returncode == 1 and "gotrace: error: cannot attach to" in r.stderr and
                "calls=" not in r.stdout, describe(r))
    s.check("refused: nothing left attached", not bpf_leftovers(), bpf_leftovers())

# 2,000 sites: every one attached with its own cookie (func names the right function),
# hit exactly, and detached.
if s.case("many"):
    src = os.path.join(s.work, "many2000")
    os.makedirs(src, exist_ok=True)
    gen = os.path.join(src, "many.go")
    if not os.path.exists(gen):
        subprocess.run([sys.executable, os.path.join(REPO, "bench", "gen_many.py"), gen, "2000"],
                       check=True)
    many = s.go_build("many", src_dir=src)
    # On the perf-event path 100 of them (the kernel detaches each in ~0.1 s: 2,000 would
    # take 3.5 min); 2,000 on the others
    for name, env in PATHS:
        n = 100 if env is PERF else 2000
        want = "".join("@f[main.fn%04d]: 3\n" % i for i in range(n))
        r = run(["-v", "-c", many + " 3", "-e",
                 'go:main.fn%s*:entry { @c = count(); @f[func] = count(); }'
                 % ("00" if n == 100 else "")], env, timeout=900)
        f = "".join(sorted(l + "\n" for l in r.stdout.splitlines() if l.startswith("@f[")))
        unit = {"perf-event": "perf-event uprobes", "tracefs": "tracefs uprobe events",
                "uprobe_multi": "uprobe_multi links"}[name]
        s.check("%s: %d sites attach" % (name, n),
                re.search(r"attached %d sites with %s %s" % (n, n if env is PERF else 1, unit),
                          r.stderr) is not None, describe(r)[-3000:])
        s.check("%s: every call counted, each under its own function" % name,
                r.returncode == 0 and "calls=6000" in r.stdout and "@c: %d\n" % (3 * n) in r.stdout
                and f == want, describe(r)[-3000:])
        s.check("%s: %d sites detached" % (name, n), not bpf_leftovers(), bpf_leftovers())

# Docker's CLI (Go 1.24, ~35,000 functions), where the kernel refuses a few atomics.
if s.case("docker"):
    docker = shutil.which("docker")
    if not docker:
        print("SKIP docker: no docker binary on PATH (the wildcard cases need a real one)")
    else:
        # (runtime.abort starts with an int3: sema leaves it out of go:*:entry, and it is
        # said in the same warning)
        skip = re.compile(r"^gotrace: warning: skipped \d+ of \d+ sites \(the kernel cannot probe "
                          r"their instruction\): (go:runtime\.abort\.abi0:entry, )?"
                          r"go:internal/runtime/atomic\.\(\*Uint8\)\.And:"
                          r"entry, .* \(-v lists all\)$")
        for probe, var in (("go:*:entry", "@c"), ("go:*:return", "@r")):
            r = run(["-c", docker + " --version", "-e", "%s { %s = count(); }" % (probe, var)],
                    MULTI, timeout=300)
            m = re.search(r"^%s: (\d+)$" % var, r.stdout, re.M)
            s.check("docker %s: runs, counts, one skip warning" % probe,
                    r.returncode == 0 and "Docker version" in r.stdout and m is not None and
                    int(m.group(1)) > 1000 and len(r.stderr.splitlines()) == 1 and
                    skip.match(r.stderr.strip()) is not None, describe(r)[-3000:])
        # every function of docker as perf-event uprobes would take about an hour to
        # detach (the kernel removes them one at a time): the atomics package only
        for name, env in (("perf-event", PERF), ("tracefs", TRACEFS)):
            r = run(["-c", docker + " --version", "-e",
                     "go:internal/runtime/atomic.*:entry { @c = count(); }"], env, timeout=300)
            s.check("docker on the %s path: the refused atomics are skipped" % name,
                    r.returncode == 0 and "Docker version" in r.stdout and "@c: " in r.stdout
                    and r.stderr.startswith("gotrace: warning: skipped 4 of 48 sites (the "
                                            "kernel cannot probe their instruction): go:"
                                            "internal/runtime/atomic.(*Uint8).And:entry, "),
                    describe(r)[-3000:])
        s.check("docker: nothing left attached", not bpf_leftovers(), bpf_leftovers())

s.finish()
