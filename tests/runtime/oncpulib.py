"""oncpu's oracle (tests/go/oncpu): the script, the program's own measures and the checks
of each call against them. Shared by test_oncpu.py and tests/arm64/run.py (the arm64
guests: the script runs there, the judging here); test_oncpu.py's docstring says why the
measures bound what they bound."""

import re

# Sleepy sleeps 60 ms; Busy computes for 60 ms of CPU time; 2 rounds of each; then two
# goroutines per CPU each do Busy's work once, locked (Work: a P each, so that the
# kernel makes their threads take turns), then free (Spread: more than GOMAXPROCS, in
# pieces with a Gosched between, so that they take turns and change threads)


def prog_args(ncpu):
    """The program's arguments for a machine of ncpu CPUs."""
    return ["-sleep", "60", "-spin", "60", "-rounds", "2", "-g", str(2 * ncpu)]


OWN = re.compile(r"^own (\S+) (\d+) (\d+) (\d+) (\d+)$")
SCRIPT = ('go:main.Sleepy:return, go:main.Busy:return, go:main.Work:return, '
          'go:main.Spread:return { printf("%s %d %d %d\\n", func, goid, duration, oncpu); }')
CALL = re.compile(r"^main\.(\w+) (\d+) (\d+) (\d+)$")


def own_times(stderr):
    """The program's own measures: {name: {i: (cpu_ns, wall_ns, inside_ns)}}."""
    own = {}
    for line in stderr.splitlines():
        m = OWN.match(line)
        if m:
            own.setdefault(m.group(1), {})[int(m.group(2))] = tuple(map(int, m.groups()[2:]))
    return own


def check_one(name, dur, cpu, o):
    """A locked goroutine's call against its own measures O: its on-CPU time lies within
    [inside, around] (10 % either way; Sleepy measures nothing inside: a few
    microseconds may show as 0, see gt_oncpu.c) and within its duration. (Not "all of its
    duration when the thread had its CPU throughout": the duration holds the probes' own
    time, which under TCG is milliseconds a probe.) An error text, or None."""
    around, wall, inside = o
    if not 0.9 * inside <= cpu <= 1.1 * around or cpu > dur:
        return ("%s: oncpu %d ns of %d ns; the thread's own CPU time around the call %d ns "
                "(of %d ns), inside it %d ns" % (name, cpu, dur, around, wall, inside))
    return None


def check_calls(check, tag, calls, own, detail, ncpu):
    """CHECK(name, ok, detail) CALLS: {name: [(goid, duration_ns, oncpu_ns), ...]} in call
    order, against OWN, on a machine of ncpu CPUs."""
    bad = []
    n = {k: len(v) for k, v in own.items()}
    if n != {"Sleepy": 2, "Busy": 2, "Work": 2 * ncpu, "Spread": 2 * ncpu, "Phase": 1} or \
       {k: len(v) for k, v in calls.items()} != {"Sleepy": 2, "Busy": 2, "Work": 2 * ncpu,
                                                  "Spread": 2 * ncpu}:
        check("%s: every call traced" % tag, False, "%s\n%s\n%s" % (calls, own, detail))
        return
    for name in ("Sleepy", "Busy"):
        for i, (_, dur, cpu) in enumerate(calls[name]):
            bad.append(check_one(name, dur, cpu, own[name][i]))
    # the Work calls, at once in their goroutines, told by the goroutine's id
    for g, dur, cpu in calls["Work"]:
        o = own["Work"].get(g)
        bad.append(check_one("Work", dur, cpu, o) if o else
                   "Work: goroutine %d is not one of the program's %s" % (g, sorted(own["Work"])))
    bad = [x for x in bad if x]
    check("%s: locked goroutines (Sleepy, Busy, Work): each call's on-CPU time between "
          "the thread's own CPU time inside the call and around it" % tag,
          not bad, "\n".join(bad) + "\n" + detail)
    # free goroutines: all of them at least the CPU time of their pieces (10 %) and at most
    # the process's CPU time over the phase (10 %); each at most its duration. (Not each
    # at least its own pieces: where the kernel's scheduler clock and the wall clock
    # disagree, how the time of one thread between two Gosched is split among goroutines
    # follows the wall clock. Under TCG, whose TSC the guest kernel marks unstable, a
    # thread alone on a CPU saw its CPU clock run 0.83 to 1.19 times the monotonic clock
    # over 20 ms windows, and one goroutine of 8 came out 25 % under its pieces.)
    bad = []
    for g, dur, cpu in calls["Spread"]:
        o = own["Spread"].get(g)
        if not o:
            bad.append("Spread: goroutine %d is not one of the program's %s"
                       % (g, sorted(own["Spread"])))
        elif cpu > dur:
            bad.append("Spread: goroutine %d: oncpu %d ns of %d ns" % (g, cpu, dur))
    spread = sum(cpu for _, _, cpu in calls["Spread"])
    pieces = sum(o[2] for o in own["Spread"].values())
    pcpu = own["Phase"][0][0]
    print("note: %s: Spread: oncpu %.1f ms in all, pieces %.1f ms, the process %.1f ms"
          % (tag, spread / 1e6, pieces / 1e6, pcpu / 1e6))
    if not 0.9 * pieces <= spread <= 1.1 * pcpu:
        bad.append("Spread: oncpu %d ns in all, the goroutines' pieces %d ns; the process's "
                   "CPU time over the phase %d ns" % (spread, pieces, pcpu))
    check("%s: goroutines moving between threads (Spread): their on-CPU times add up to "
          "at least their pieces' CPU time and at most the process's" % tag,
          not bad, "\n".join(bad) + "\n%s\n%s" % (
              [(g, c, own["Spread"].get(g)) for g, _, c in calls["Spread"]], detail))
    # they did move (two CPUs or more: GOMAXPROCS Ms take turns running them)
    if ncpu >= 2:
        check("%s: the free goroutines ran on more than one thread" % tag,
              any(o[0] >= 2 for o in own["Spread"].values()), "%s\n%s" % (own, detail))


def parse_calls(text):
    calls = {}
    for line in text.splitlines():
        m = CALL.match(line)
        if m:
            calls.setdefault(m.group(1), []).append(tuple(map(int, m.groups()[1:])))
    return calls
