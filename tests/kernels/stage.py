#!/usr/bin/env python3
"""The part of the runtime suite that runs inside a guest kernel (tests/kernels/vm.sh):
    vm.sh --kernel 6.1 -- python3 tests/kernels/stage.py --gotrace G --work W
    vm.sh --kernel 6.12 -- python3 tests/kernels/stage.py --stage 6.12 --gotrace G --work W
Each test script runs with the cases that are about the kernel (attach paths, goids,
durations, entry/return pairing, stacks, probe types) and fit the CI budget under
emulation; cases left out are named below with why. --work should be the host's own
work dir, where the host's run of the same scripts built the Go programs: the guest
then finds them up to date and does not build them (minutes under TCG). Exit status 1
when any check failed; the scripts' output goes to stdout as it comes."""
import argparse
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RUNTIME = os.path.join(HERE, "..", "runtime")

# Per kernel, (script, cases): no cases = all of them.
STAGES = {
    # Debian 12's own kernel: no uprobe_multi (the tracefs path without forcing it), no
    # fprobe (kprobe wildcards one perf event a function)
    "6.1": [
        # goids of five builds, durations against the program's own clock, pairing under
        # recursion, panics and 100k goroutines, unusual returns
        ("test_goruntime.py", []),
        # ustack at entry and return (the caller that 6.11, or a backport, puts in the
        # kernel's walk), depth-limited keys, caller, the unwinder's frameless leaves.
        # Left out: profile shares and inline leaves (TCG spends its time elsewhere than
        # hardware does: docs/kernels.md), kstack at sys_enter (empty for bpftrace too)
        # and the bpftrace comparison of usym (bpftrace 0.17 does not name them in the
        # guest).
        # klines: kstack -v's FILE:LINE against addr2line on the vmlinux with DWARF that
        # vm.sh --dbg hands over as GT_VMLINUX (the refusals only without it).
        # gone: a PIE command's load address from the kernel's record of its exec.
        ("test_stacks.py", ["entry", "return", "tuple keys", "caller", "unwind leaf",
                            "klines", "gone"]),
        # uprobe, uretprobe, tracepoint, profile, interval, the pid filter, --info
        ("test_probes.py", []),
        # both paths of older kernels, shown by bpftool; a killed gotrace's tracefs events
        ("test_attach.py", ["bpftool", "stale"]),
        # kprobe:, kretprobe:, kfunc:, kretfunc: and kstack against bpftrace 0.17 in the
        # same guest, wildcards one perf event a function without forcing it, -c. The
        # listings, module BTF and the errors are the 6.12 stage's: the kernel's release
        # does not change them, and CI's time is counted.
        ("test_kprobes.py", ["maps", "kstack", "ustack", "multi", "pid"]),
        # oncpu: the sched_switch raw tracepoint, the kernel's CPU-time count in
        # task_struct (BTF), uprobes on the Go scheduler, against the program's own
        # thread and process CPU clocks, -p included
        ("test_oncpu.py", []),
    ],
    # Debian 12's backported 6.12 (bookworm-security): uprobe_multi, kprobe_multi
    # (fprobe), IBT, a uprobe's stack keeping the caller (6.11)
    "6.12": [
        # the kernel probes against bpftrace 0.17 once more, and kprobe_multi by name, by
        # address and against one perf event a function
        ("test_kprobes.py", []),
        # ustack at entry and return where the kernel's walk has the caller
        ("test_stacks.py", ["entry", "return", "caller"]),
        # fentry:bpf:/fexit:bpf: on another gotrace's program and subprogram, its own
        # count the oracle (this suite's machine refuses fentry)
        ("test_bpfprog.py", []),
        # lbr(): refused where there is no PMU (none here); loaded and run with the
        # refusal lifted, each call the helper's answer
        ("test_lbr.py", []),
    ],
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gotrace", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--stage", default="6.1", choices=sorted(STAGES))
    a = ap.parse_args()
    print("kernel %s" % os.uname().release, flush=True)
    failed = passed = 0
    for script, cases in STAGES[a.stage]:
        cmd = [sys.executable, os.path.join(RUNTIME, script), "--gotrace", a.gotrace,
               "--work", a.work]
        for c in cases:
            cmd += ["-k", c]
        print("== %s %s" % (script, " ".join("-k '%s'" % c for c in cases)), flush=True)
        start = time.time()
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           env=dict(os.environ, GT_CHECK_TIMES="1"))
        sys.stdout.write(r.stdout)
        m = re.search(r"^(\d+) passed, (\d+) failed", r.stdout, re.M)
        if r.returncode != 0 or not m or m.group(2) != "0" or m.group(1) == "0":
            failed += 1
            print("== %s: FAILED (status %d)" % (script, r.returncode))
        else:
            passed += 1
        print("== %s: %.0f s" % (script, time.time() - start), flush=True)
    print("%d scripts passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
