"""Signals as bpftrace handles them: SIGUSR1 prints every map and the trace goes on;
SIGINT and SIGTERM end it (END runs, maps are printed, status 0)."""

import os
import signal
import subprocess
import time

from gtlib import Suite, bpf_leftovers, collect, wait_for_line

s = Suite("signals")

if s.case("usr1"):
    tr = s.start(["-e", 'BEGIN { @a = 1; @b[2] = 3; printf("ready\\n"); } '
                  'interval:ms:100 { $x = 1; } END { printf("end\\n"); }'])
    lines = wait_for_line(tr, "ready", 20)
    dumps = []
    for _ in range(2):
        tr.send_signal(signal.SIGUSR1)
        # the dump of every map, in the order and format of the one at exit
        dumps.append([tr.stdout.readline() for _ in range(2)])
    alive = tr.poll() is None
    tr.send_signal(signal.SIGTERM)
    out, err = collect(tr, 20)
    first = [l.rstrip("\n") for l in dumps[0]]
    s.check("SIGUSR1 prints every map", first == ["@a: 1", "@b[2]: 3"], "%r\n%s" % (dumps, err))
    s.check("SIGUSR1 again: the trace went on", alive and
            [l.rstrip("\n") for l in dumps[1]] == ["@a: 1", "@b[2]: 3"], "%r" % dumps)
    s.check("SIGTERM after SIGUSR1: END, maps, status 0",
            tr.returncode == 0 and out == "end\n@a: 1\n@b[2]: 3\n",
            "status %s\n%s\n%s" % (tr.returncode, out, err))
    s.check("nothing left attached", not bpf_leftovers(), bpf_leftovers())

# A stop at any moment of the start-up (parse, sema, LLVM, the verifier, attaching)
# ends the run within a second, nothing left attached, the traced program unharmed.
# --no-cache: LLVM runs, so the early signals land in the compile. A shell's background
# job starts with SIGINT ignored (`gotrace ... & kill -INT $!`): gotrace of 799246c lost
# a signal that came before its run loop and traced on. Times count from the exec. A
# signal in the first few ms comes before main: an inherited-ignored one is then lost by
# any program, a default one ends gotrace by the signal itself (status -2 or -15:
# nothing was started). Whether it came before main is read from the kernel, the
# process's SigCgt just before the signal is sent (catches()), not guessed from a time.
SCRIPT = 'go:main.Tick:entry { @n = count(); } END { printf("end\\n"); }'


def process_alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def _cmdline(pid):
    try:
        with open("/proc/%s/cmdline" % pid, "rb") as f:
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def catches(pid, sig):
    """Whether process PID has a handler for SIG now (/proc/PID/status SigCgt): gotrace
    installs its own first thing in main, so without one the signal lands before main,
    while the loader maps and relocates LLVM, which no program can catch."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for l in f:
                if l.startswith("SigCgt:"):
                    return bool(int(l.split()[1], 16) >> (sig - 1) & 1)
    except OSError:
        pass
    return True


def ignore_sigint():
    signal.signal(signal.SIGINT, signal.SIG_IGN)


if s.case("early"):
    spin = s.go_build("spin")
    for mode in ("-c", "-p"):
        runs = [(signal.SIGINT, ms, inh) for ms in (0, 10, 50, 100, 200)
                for inh in ("default", "ignored") if ms >= 50 or inh == "default"]
        runs += [(signal.SIGTERM, 10, "default"), (signal.SIGTERM, 100, "default")]
        for sig, ms, inherited in runs:
            name = "%s at %d ms, %s, SIGINT %s" % (signal.Signals(sig).name, ms, mode,
                                                   inherited)
            target = None
            if mode == "-p":
                target = subprocess.Popen([spin, "30"], stdout=subprocess.PIPE, text=True)
                target.stdout.readline()  # pid=N: it runs
                where = ["-p", str(target.pid)]
            else:
                where = ["-c", "%s 29" % spin]
            tr = s.start(["--no-cache", *where, "-e", SCRIPT],
                         preexec_fn=ignore_sigint if inherited == "ignored" else None)
            t0 = time.time()
            time.sleep(max(0.0, ms / 1000.0 - (time.time() - t0)))
            early = not catches(tr.pid, sig)
            tr.send_signal(sig)
            t_sig = time.time()
            if early and inherited == "ignored":
                # lost before main, as by any program: a second stop must then work
                time.sleep(0.5)
                tr.send_signal(signal.SIGTERM)
                t_sig = time.time()
            out, err = collect(tr, 10)
            took = time.time() - t_sig
            # the -c child: gone with the run (never started, or ended by it)
            child = [p for p in os.listdir("/proc") if p.isdigit() and
                     process_alive(int(p)) and spin in _cmdline(p)
                     and (target is None or int(p) != target.pid)]
            unharmed = target is None or process_alive(target.pid)
            if target is not None:
                target.terminate()
                target.wait()
            # stopped before tracing: nothing printed; after: the banner, then END's line
            # and the map (BEGIN and END always together)
            whole = out == "" or (out.startswith("Attaching 2 probes...\n") and
                                  "\nend\n@n: " in out)
            # before main (no handler yet: on a loaded machine the loader alone can take
            # 100 ms under ASan) a default signal ends gotrace by itself
            # ended by the signal: long before its 29 s program would have ended it and
            # before collect's 10 s kill (a fixed 1 s bound is a timing, not an oracle)
            s.check(name + ": ends on the signal, status 0, whole output" +
                    (" (it came before main)" if early else ""),
                    (tr.returncode == 0 or (early and tr.returncode == -sig
                                            and out == "")) and
                    took < 10 and whole and not err,
                    "status %s after %.2f s\n%s\n%s" % (tr.returncode, took, out, err))
            s.check(name + ": nothing attached, no child left, -p target alive",
                    not bpf_leftovers() and not child and unharmed,
                    "%s %s alive=%s" % (bpf_leftovers(), child, unharmed))

s.finish()
