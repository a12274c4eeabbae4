#!/usr/bin/env python3
"""fentry:bpf:/fexit:bpf: (bpftrace's spelling since 0.24; 0.17 has none, so no bpftrace
oracle): fentry/fexit on a loaded BPF program. A first gotrace counts a Go program's
calls with a go: probe; a second attaches to the first's program and counts its runs:
the first's own count is the oracle, exactly. Needs a kernel that allows fentry on BPF
programs: this suite's machine refuses it (EPERM), so here the errors and the listing
are checked; the kernels stage (tests/kernels/stage.py, Debian's 6.1 under qemu) runs
the rest."""
import ctypes
import os
import struct
import subprocess
import time

from gtlib import Suite, bpf_leftovers, collect, describe, wait_for_line

s = Suite("bpfprog")
ADDS = s.go_build("adds")
CALLS = 6  # main.add calls of one run of tests/go/adds


def fentry_allowed():
    r = s.run(["--info"])
    return "kfunc: yes" in r.stdout


def start(args):
    """A gotrace that has attached (its "Attaching" line read), or None and why."""
    p = s.start(args)
    head = wait_for_line(p, "Attaching", 180)
    if not head or "Attaching" not in head[-1]:
        p.kill()
        out, err = collect(p, 30)
        return None, "".join(head) + out + err
    time.sleep(0.5)
    return p, ""


def stop(p):
    """SIGINT: (status, stdout, stderr)."""
    p.send_signal(2)
    out, err = collect(p, 120)
    return p.returncode, out, err


def prog_ids(pid):
    """The BPF programs process PID holds (program and link fds alike)."""
    ids = set()
    d = "/proc/%d/fdinfo" % pid
    for fd in os.listdir(d):
        try:
            with open(os.path.join(d, fd)) as f:
                for line in f:
                    if line.startswith("prog_id:"):
                        ids.add(int(line.split()[1]))
        except OSError:
            pass
    return ids


RUNS = [0]  # runs of tests/go/adds so far: the first gotrace sees them all


def run_adds(n):
    RUNS[0] += n
    for _ in range(n):
        subprocess.run([ADDS], stderr=subprocess.DEVNULL, check=True)


def load_without_btf(name):
    """A loaded socket filter (r0 = 0; exit) without BTF, as bpf(2) makes it: its fd."""
    libc = ctypes.CDLL(None, use_errno=True)
    insns = ctypes.create_string_buffer(bytes([0xb7, 0, 0, 0, 0, 0, 0, 0,
                                               0x95, 0, 0, 0, 0, 0, 0, 0]), 16)
    lic = ctypes.create_string_buffer(b"GPL")
    attr = ctypes.create_string_buffer(128)
    struct.pack_into("<IIQQ", attr, 0, 1, 2, ctypes.addressof(insns), ctypes.addressof(lic))
    struct.pack_into("16s", attr, 48, name.encode())
    fd = libc.syscall(321, 5, attr, 128)  # SYS_bpf, BPF_PROG_LOAD
    if fd < 0:
        raise OSError(ctypes.get_errno(), "BPF_PROG_LOAD")
    return fd


def one_error(script, want, status=2):
    r = s.run(["-e", script])
    s.check("%s: one error" % script, r.returncode == status and want in r.stderr and
            r.stderr.count("error:") == 1 and r.stdout == "", describe(r))


# The first gotrace: one go: program, the target of the second; its loop's body is a
# subprogram (bpf_loop's callback gt_loop_cb) that returns 0 to go on, 1 at the break:
# indexes 0, 1, 2 and returns 0, 0, 1 a call.
first, why = start(["-b", ADDS, "-e", "go:main.add:entry { for ($i : 0..4) { if ($i == 2) "
                    "{ break; } @n = count(); } @a = count(); }"])
if not first:
    s.check("the first gotrace attaches", False, why)
    s.finish()
ids = prog_ids(first.pid)
listed = {}
for i in sorted(ids):
    r = s.run(["-l", "fentry:bpf:%d:*" % i])
    listed[i] = r.stdout.split()
# its one program, named by its main function (BTF) and its subprograms, as -l lists them:
# the loop's callback, the two count() maps' updates and their failure count (global
# functions, codegen's cg_maps.c)
target = [(i, l.split(":", 3)[3]) for i, ls in listed.items() for l in ls
          if l.split(":", 3)[3].startswith("gt_c0_")]
ok = s.check("-l fentry:bpf:ID:* lists the first gotrace's program as fentry:bpf:ID:NAME, "
             "its main function and its subprograms",
             len(target) == 1 and listed[target[0][0]] == sorted(
                 ["fentry:bpf:%d:%s" % (target[0][0], target[0][1])] +
                 ["fentry:bpf:%d:%s" % (target[0][0], f) for f in
                  ("gt_loop_cb", "gt_agg_0", "gt_agg_1", "gt_map_failed")]), listed)
if not ok:
    stop(first)
    s.finish()
PID, NAME = target[0]
r = s.run(["-l", "fexit:bpf:*"])
s.check("-l fexit:bpf:* lists it too, as fexit:bpf:ID:NAME",
        "fexit:bpf:%d:%s" % (PID, NAME) in r.stdout.split(), describe(r))

try:
    if s.case("errors"):
        one_error("fentry:bpf:%d:nosuch { @ = count(); }" % PID,
                  "error: BPF program %d has no function 'nosuch'" % PID)
        one_error("fentry:bpf:4294967295:%s { @ = count(); }" % NAME,
                  "error: no BPF program 4294967295 is loaded")
        one_error("fentry:bpf:*:nothing_here_* { @ = count(); }",
                  "error: no function of a loaded BPF program matches 'nothing_here_*'")
        one_error("fentry:bpf:x:%s { @ = count(); }" % NAME,
                  "error: the BPF program id must be a number or '*': x")
        one_error("fentry:bpf { @ = count(); }",
                  "error: fentry:bpf probes are fentry:bpf:PROGRAM or fentry:bpf:ID:PROGRAM")
        one_error("fentry:bpf:%d:%s { @ = args->nosuch; }" % (PID, NAME),
                  "error: the function has no argument 'nosuch'")
        one_error("fentry:bpf:%d:%s { @ = retval; }" % (PID, NAME),
                  "error: retval is only available in kretfunc probes")
        fd = load_without_btf("nobtf_target")
        try:
            bid = [i for i in prog_ids(os.getpid())][0]
            one_error("fentry:bpf:%d:nobtf_target { @ = count(); }" % bid,
                      "error: BPF program %d (nobtf_target) has no BTF" % bid)
        finally:
            os.close(fd)
        if not fentry_allowed():
            one_error("fentry:bpf:%d:%s { @ = count(); }" % (PID, NAME),
                      "error: this kernel refuses fentry programs on BPF programs", status=1)

    if fentry_allowed() and s.case("subprogram"):
        # the loop's callback: its index argument and its return value, against what the
        # first counts itself (@n: the iterations that went on, returning 0)
        second, why = start([
            "-e", "fentry:bpf:%d:gt_loop_cb { @i[args->index] = count(); } "
            "fexit:bpf:*:gt_loop_cb { @r[probe, retval] = count(); }" % PID])
        s.check("the second gotrace attaches to the first's subprogram", second, why)
        if second:
            run_adds(1)
            g2 = stop(second)
            got = sorted(l for l in g2[1].splitlines() if l.startswith("@"))
            want = sorted(["@i[%d]: %d" % (i, CALLS) for i in range(3)] +
                          ["@r[fexit:bpf:%d:gt_loop_cb, 0]: %d" % (PID, 2 * CALLS),
                           "@r[fexit:bpf:%d:gt_loop_cb, 1]: %d" % (PID, CALLS)])
            s.check("fentry:bpf/fexit:bpf on a subprogram: args->index 0, 1, 2 and retval "
                    "0, 0, 1 a call (%d calls)" % CALLS, g2[0] == 0 and got == want,
                    "want %s\nstatus %s\n%s%s" % ((want,) + g2))

    if fentry_allowed() and s.case("count"):
        # fentry and fexit on the first's program, args->ctx from its BTF (int f(void
        # *ctx)), retval its return (0), a wildcard over its functions (the main one
        # and the loop's callback)
        second, why = start([
            "-e", "fentry:bpf:%d:%s { @e[probe] = count(); @c[args->ctx != 0] = count(); } "
            "fexit:bpf:%d:%s { @x[probe, retval] = count(); } "
            "fexit:bpf:%d:gt_* { @w[probe] = count(); }" % (PID, NAME, PID, NAME, PID)])
        s.check("the second gotrace attaches to the first's program", second, why)
        if second:
            # the second's programs are fentry/fexit ones: a wildcard leaves them out
            one_error("fentry:bpf:*:gt_c0_fentry_* { @ = count(); }",
                      "error: fentry:bpf:*:gt_c0_fentry_* matches only fentry/fexit or "
                      "extension programs")
            run_adds(2)
            g2 = stop(second)
            run_adds(1)  # the first one goes on unharmed
            g1 = stop(first)
            first = None
            want = ["@a: %d" % (RUNS[0] * CALLS), "@n: %d" % (2 * RUNS[0] * CALLS)]
            s.check("the first counts its own calls", g1[0] == 0 and
                    [l for l in g1[1].splitlines() if l.startswith("@")] == want,
                    "status %s\n%s%s" % g1)
            got = sorted(l for l in g2[1].splitlines() if l.startswith("@"))
            n = 2 * CALLS
            want = sorted(["@c[1]: %d" % n, "@e[fentry:bpf:%d:%s]: %d" % (PID, NAME, n),
                           "@x[fexit:bpf:%d:%s, 0]: %d" % (PID, NAME, n),
                           "@w[fexit:bpf:%d:%s]: %d" % (PID, NAME, n),
                           "@w[fexit:bpf:%d:gt_loop_cb]: %d" % (PID, 3 * n),
                           # the count() updates, global functions: @n twice a run, @a once
                           "@w[fexit:bpf:%d:gt_agg_0]: %d" % (PID, 2 * n),
                           "@w[fexit:bpf:%d:gt_agg_1]: %d" % (PID, n)])
            s.check("fentry:bpf/fexit:bpf count the first's program's runs (%d), args->ctx, "
                    "retval, probe" % n, g2[0] == 0 and got == want,
                    "want %s\nstatus %s\n%s%s" % ((want,) + g2))
finally:
    if first:
        stop(first)

s.check("nothing left attached", not bpf_leftovers(), bpf_leftovers())
s.finish()
