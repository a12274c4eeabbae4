"""Signals as bpftrace handles them: SIGUSR1 prints every map and the trace goes on;
SIGINT and SIGTERM end it (END runs, maps are printed, status 0)."""

import signal

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

s.finish()
