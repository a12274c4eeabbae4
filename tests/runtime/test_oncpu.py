"""oncpu: a goroutine's time on a CPU between a call's entry and its return, against the
traced program's own measures (tests/go/oncpu): CLOCK_THREAD_CPUTIME_ID of goroutines
locked to their threads (whose thread's CPU time is then their own), read around each
call (which holds the traced interval, probes included: an upper bound) and by the call
of itself between its first and last line (held by it: a lower bound); and, for
goroutines free to move between threads, the CPU time of each piece of their work on the
thread that ran it (a lower bound) and CLOCK_PROCESS_CPUTIME_ID around their phase (an
upper bound of them all).

The program runs with asynchronous preemption off (GODEBUG=asyncpreemptoff=1) and
measures only stretches with no preemption point: a preemption runs the Go scheduler on
the goroutine's thread, whose time is no goroutine's (gotrace rightly leaves it out) but
is on the thread's clock. On Debian's 6.1 under TCG that was 12 to 24 % of the process's
CPU time in the free goroutines' phase, and the runtime's own thread, sysmon, 9 to 27 %
(bpftrace profile:hz:2999 samples, mostly runtime.procyieldAsm: spinning for a lock held
on the other virtual CPU, which single-threaded TCG is not running): the old oracle, the
process's CPU time, then stood 26 % above the goroutines' own (docs/funcgraph.md).

Tolerances are the oracle's own: 10 % of what the program measured in the same run."""

import json
import os
import re
import signal
import subprocess
import time

import oncpulib
from gtlib import Suite, bpf_leftovers
from oncpulib import SCRIPT, check_one, own_times, parse_calls

s = Suite("oncpu")
b = s.go_build("oncpu")
# no asynchronous preemption: see the docstring (the -c programs get gotrace's env)
s.env["GODEBUG"] = "asyncpreemptoff=1"
NCPU = os.cpu_count() or 1
PROG = [b] + oncpulib.prog_args(NCPU)


def check_calls(tag, calls, own, detail):
    oncpulib.check_calls(s.check, tag, calls, own, detail, NCPU)


# 1. the builtin, in a script
if s.case("script"):
    # -v: on a failure, its counters (the switches the tracepoint did not show) are in it
    r = s.run(["-v", "-c", " ".join(PROG), "-e", SCRIPT], timeout=180)
    detail = "status %s\n%s\n%s" % (r.returncode, r.stdout, r.stderr)
    s.check("script: runs, the program's output unchanged",
            r.returncode == 0 and "done sink=" in r.stdout, detail)
    check_calls("script", parse_calls(r.stdout), own_times(r.stderr), detail)

# 2. --funcgraph: the closing line's on-CPU time, and JSON's oncpu_ns
if s.case("funcgraph"):
    out = os.path.join(s.work, "oncpu.json")
    r = s.run(["--funcgraph", "main.Sleepy", "--funcgraph", "main.Busy", "--funcgraph",
               "main.Work", "--funcgraph", "main.Spread", "-f", "json", "-o", out,
               "-v", "-c", " ".join(PROG)], timeout=180)
    calls = {}
    objs = []
    if os.path.exists(out):
        objs = [json.loads(l) for l in open(out) if l.strip()]
    for o in objs:
        d = o.get("data", {})
        if o.get("type") == "call" and d.get("duration_ns") is not None:
            calls.setdefault(d["function"][5:], []).append(
                (d["goid"], d["duration_ns"], d["oncpu_ns"]))
    check_calls("funcgraph json", calls, own_times(r.stderr),
                "status %s\n%s\n%s" % (r.returncode, r.stderr, objs[:8]))
    # the text: "  60.125ms cpu  59.998ms } main.Busy FILE:LINE"
    r = s.run(["--funcgraph", "main.Busy", "-c", b + " -spin 60 -sleep 1 -rounds 1 -g 1"],
              timeout=120)
    m = re.search(r" goid=\d+ +([\d.]+)(ms|us) cpu +([\d.]+)(ms|us) +\} main\.Busy ", r.stdout)
    own = own_times(r.stderr).get("Busy", {})
    unit = {"ms": 1e6, "us": 1e3}
    ok = m and len(own) == 1 and not check_one(
        "Busy", float(m.group(1)) * unit[m.group(2)] + 5e3,
        float(m.group(3)) * unit[m.group(4)], own[0])
    s.check("funcgraph text: the closing line shows the duration and the on-CPU time",
            ok, "%s\n%s" % (r.stdout, r.stderr))

# 3. -p: the process ran before the trace (its threads' goroutines were placed unseen);
# the calls seen are told by their index i, read at the entry
if s.case("pid"):
    p = subprocess.Popen([b, "-sleep", "20", "-spin", "30", "-rounds", "100000", "-g", "1"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=s.env)
    time.sleep(0.3)
    tr = s.start(["-v", "-p", str(p.pid), "-e",
                  'go:main.Sleepy:entry { @i[goid] = args.i; } '
                  'go:main.Busy:entry { @i[goid] = args.i; } '
                  'go:main.Sleepy:return, go:main.Busy:return '
                  '{ printf("%s %d %d %d\\n", func, @i[goid], duration, oncpu); }'])
    for line in tr.stderr:
        if "tracing (started" in line:
            break
    time.sleep(3)
    tr.send_signal(signal.SIGINT)
    tout, terr = tr.communicate(timeout=60)
    p.kill()
    pout, perr = p.communicate(timeout=60)
    own = own_times(perr)
    bad, n = [], {}
    for line in tout.splitlines():
        m = re.match(r"^main\.(\w+) (\d+) (\d+) (\d+)$", line)
        if not m:
            continue
        name, i, dur, cpu = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))
        n[name] = n.get(name, 0) + 1
        o = own.get(name, {}).get(i)
        if o is None:  # the last call, cut by the kill before it printed
            continue
        bad.append(check_one(name, dur, cpu, o))
    bad = [x for x in bad if x]
    s.check("-p: attached to a running process, each call's on-CPU time against the "
            "program's own", not bad and n.get("Sleepy", 0) >= 3 and n.get("Busy", 0) >= 3
            and tr.returncode == 0,
            "\n".join(bad) + "\ncalls %s\nstatus %s\n%s\n%s" % (n, tr.returncode, tout, terr))

# 4. where oncpu can be
if s.case("errors"):
    r = s.run(["-c", b + " -rounds 1", "-e", 'go:main.Busy:entry { printf("%d\\n", oncpu); }'])
    s.check("oncpu at an :entry probe: refused",
            r.returncode != 0 and "oncpu is only available in go:FUNC:return probes" in
            r.stderr, r.stderr)

s.check("nothing left attached", not bpf_leftovers(), bpf_leftovers())
s.finish()
