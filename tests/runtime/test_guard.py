"""--max-overhead PERCENT: past the budget the probes are detached, what they collected is
printed (END runs), the message names the costliest probe, the status is 3, and the
traced program goes on untraced: a -c command to its end (gotrace waits for it), a -p
process left running. Without the budget being reached nothing changes.

The oracles are measured in the same run: tests/go/hotloop's own run time untraced, and
what one hit of its probed function costs it without the guard (a 1/20 run traced
unguarded), which prices the unguarded full run; the guarded run must have saved nearly
all of that."""

import re
import subprocess
import tempfile
import time

from gtlib import Suite, bpf_leftovers, describe

s = Suite("guard")
hot = s.go_build("hotloop")
N = 2000000  # calls of main.step: "millions of times"
PROBE = 'go:main.step:entry { @calls = count(); } END { printf("end\\n"); }'
MESSAGE = re.compile(r"^gotrace: overhead ([\d.]+)% of the traced process's CPU time over "
                     r"the last \d+ ms exceeds --max-overhead ([\d.]+)%: probes detached; "
                     r"(.*)$", re.M)
OWN = re.compile(r"^hotloop: calls=(\d+) phases=(\d+) elapsed_us=(\d+) ", re.M)


def own(stderr):
    """(calls, elapsed_us) hotloop printed, or None."""
    m = OWN.search(stderr)
    return (int(m.group(1)), int(m.group(3))) if m else None


def untraced(n):
    r = subprocess.run([hot, "-n", str(n)], capture_output=True, text=True, timeout=120)
    return own(r.stderr)[1]


def costs(tail):
    """[(probe, percent, hits)] of the message's "NAME cost P% (H hits)" list."""
    return [(m.group(1), float(m.group(2)), int(m.group(3).replace(",", "")))
            for m in re.finditer(r"(\S+(?: and \d+ other functions?)?(?: \([^)]*\))?) "
                                 r"cost ([\d.]+)% \(([\d,]+) hits?\)", tail)]


if s.case("hot"):
    u = untraced(N)
    small = N // 20
    u_small = untraced(small)
    r = s.run(["-q", "-c", "%s -n %d" % (hot, small), "-e", PROBE], timeout=300)
    t_small = own(r.stderr)
    s.check("unguarded: the probe sees every call, the run is slower", r.returncode == 0 and
            t_small and "@calls: %d\n" % small in r.stdout and t_small[1] > u_small,
            describe(r))
    per_hit_us = (t_small[1] - u_small) / small if t_small else 0
    unguarded_us = u + N * per_hit_us  # what the full run would take unguarded

    # gotrace's own exit, not the end of its pipes: the child's last line must be in
    # the file by then (gotrace waited for it)
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.time()
        p = subprocess.Popen([s.gotrace, "-q", "--max-overhead", "5", "-c",
                              "%s -n %d" % (hot, N), "-e", PROBE], stdout=out, stderr=err,
                             env=s.env, text=True)
        try:
            p.wait(timeout=300)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        wall = time.time() - t0
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    g = own(stderr)
    detail = "status %s, own %s, untraced %d us, unguarded ~%d us (%.1f us a hit)\n" \
             "--- stdout\n%s--- stderr\n%s" % (p.returncode, g, u, unguarded_us, per_hit_us,
                                                stdout, stderr)
    print("    untraced %d us; guarded %s us (gotrace %.2f s); unguarded ~%d us "
          "(%.1f us a hit)" % (u, g and g[1], wall, unguarded_us, per_hit_us))
    s.check("--max-overhead 5: status 3", p.returncode == 3, detail)
    m = MESSAGE.search(stderr)
    named = costs(m.group(3)) if m else []
    s.check("one message: the overhead past 5%, the probe named with its cost and hits",
            m and len(MESSAGE.findall(stderr)) == 1 and float(m.group(1)) > 5 and
            m.group(2) == "5" and named and named[0][0] == "go:main.step:entry" and
            named[0][1] > 5 and named[0][2] > 0, detail)
    mc = re.fullmatch(r"end\n@calls: (\d+)\n", stdout)
    s.check("what was collected is printed: END ran, then @calls, fewer than the calls made",
            mc and named and named[0][2] <= int(mc.group(1)) < N, detail)
    s.check("the command ran to its end, untraced, and gotrace waited for it",
            g and g[0] == N, detail)
    s.check("the guarded run ends near the program's own run time: it saved >= 95% of "
            "what the probe costs unguarded",
            g and per_hit_us > 0 and g[1] - u < (unguarded_us - u) / 20, detail)
    s.check("nothing left attached", not bpf_leftovers(), bpf_leftovers())

if s.case("light"):
    # a probe well inside the budget: the same output and status as without the option
    light = 'go:main.phase:entry { @phases = count(); }'
    cmd = "%s -n %d" % (hot, N // 2)
    plain = s.run(["-q", "-c", cmd, "-e", light], timeout=120)
    guarded = s.run(["-q", "--max-overhead", "1%", "-c", cmd, "-e", light], timeout=120)
    s.check("a light probe under --max-overhead 1%: status 0, no message, the output "
            "of the run without it", plain.returncode == 0 and guarded.returncode == 0 and
            guarded.stdout == plain.stdout == "@phases: 10\n" and
            "gotrace:" not in guarded.stderr and (own(guarded.stderr) or (0,))[0] == N // 2,
            describe(plain) + "\n" + describe(guarded))
    s.check("nothing left attached", not bpf_leftovers(), bpf_leftovers())

if s.case("pid"):
    # -p: the probes go, the process stays, untraced
    tgt = subprocess.Popen([hot, "-n", "400000000"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.3)
        r = s.run(["-q", "--max-overhead", "2.5", "-p", str(tgt.pid), "-e",
                   'go:main.step:entry { @calls = count(); }'], timeout=60)
        alive = tgt.poll() is None

        def times():
            with open("/proc/%d/stat" % tgt.pid) as f:
                f = f.read().rsplit(")", 1)[1].split()
                return int(f[11]), int(f[12])  # fields 14 and 15: utime, stime (ticks)
        ut0, st0 = times()
        time.sleep(0.5)
        ut1, st1 = times() if tgt.poll() is None else (None, None)
    finally:
        tgt.kill()
        tgt.wait()
    m = MESSAGE.search(r.stderr)
    named = costs(m.group(3)) if m else []
    s.check("-p: status 3, the probe named, @calls printed", r.returncode == 3 and m and
            named and named[0][0] == "go:main.step:entry" and
            re.fullmatch(r"@calls: [1-9]\d*\n", r.stdout), describe(r))
    # traced, a hit costs the process ~20 us of system time and step ~0.5 us of user
    # time: under the probe it would spend ~97% in the kernel; untraced, next to none.
    # Its own user time of the same window is the yardstick (a loaded machine gives it
    # fewer ticks of both, and a few ticks of the kernel's own work)
    s.check("-p: the process runs on, untraced (its system time well under its user time)",
            alive and st1 is not None and st1 - st0 < (ut1 - ut0) / 2,
            "alive %s, utime %s -> %s, stime %s -> %s ticks" % (alive, ut0, ut1, st0, st1))
    s.check("nothing left attached", not bpf_leftovers(), bpf_leftovers())

if s.case("bad"):
    for v in ["0", "-1", "abc", "101", "", "nan", "5x"]:
        r = s.run(["--max-overhead", v, "-c", "%s -n 10" % hot, "-e", PROBE])
        lines = r.stderr.splitlines()
        s.check("--max-overhead %r: one error, status 2, the command never ran" % v,
                r.returncode == 2 and len(lines) == 1 and "--max-overhead" in lines[0] and
                "'%s'" % v in lines[0] and r.stdout == "", describe(r))
    r = s.run(["--max-overhead", "5", "-b", hot, "-e", PROBE])
    s.check("--max-overhead without -c or -p: one error, status 2",
            r.returncode == 2 and len(r.stderr.splitlines()) == 1 and
            "-c CMD or -p PID" in r.stderr and r.stdout == "", describe(r))
    s.check("nothing left attached", not bpf_leftovers(), bpf_leftovers())

s.finish()
