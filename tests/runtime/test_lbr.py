#!/usr/bin/env python3
"""lbr(): the CPU's last branch records at a kfunc:/kretfunc: (bpf_get_branch_snapshot).
The oracle of whether this machine records branches is the kernel's own description of
its PMU: /sys/bus/event_source/devices/cpu (a hardware PMU) and its caps/branches (the
LBR's depth, Intel). Where there is none (this suite's machine and the qemu guests have
no PMU), lbr() is refused before anything loads, with what is missing. Where fentry
works (the kernels stage), the program is also loaded and run with the refusal lifted
(GT_LBR_WITHOUT_PMU=1): each call prints the helper's answer, one per traced call."""
import json
import os
import re
import subprocess

from gtlib import Suite, bpf_leftovers, describe

s = Suite("lbr")
PMU = "/sys/bus/event_source/devices/cpu"


def lbr_depth():
    try:
        with open(os.path.join(PMU, "caps", "branches")) as f:
            return int(f.read().strip() or 0)
    except (OSError, ValueError):
        return 0


DEPTH = lbr_depth()
INFO = s.run(["--info"])
FENTRY = re.search(r"^  kfunc: yes$", INFO.stdout, re.M)  # the guests: yes; here: refused
SCRIPT = 'kretfunc:vfs_read /comm == "cat"/ { lbr(); @calls = count(); }'


def run_cat(n=3):
    for _ in range(n):
        subprocess.run(["cat", "/etc/hostname"], stdout=subprocess.DEVNULL)


def traced(args, env=None):
    """gotrace ARGS while cat runs three times, stopped by SIGINT once attached."""
    p = subprocess.Popen([s.gotrace, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env or s.env)
    first = p.stdout.readline()
    if "Attaching" in first or '"attached_probes"' in first:
        run_cat()
        p.send_signal(2)
    out, err = p.communicate(timeout=120)
    return p.returncode, first + out, err


if s.case("info"):
    r = INFO
    line = [l for l in r.stdout.splitlines() if "lbr()" in l]
    want = "yes" if DEPTH else ("no, no hardware PMU" if not os.path.isdir(PMU) else "no")
    s.check("--info: lbr() says %r (the PMU's caps/branches: %d)" % (want, DEPTH),
            r.returncode == 0 and len(line) == 1 and
            line[0].split(": ", 1)[1].startswith(want), describe(r))

if not DEPTH and s.case("refused"):
    code, out, err = traced(["-e", SCRIPT])
    want = ("this machine has no hardware PMU" if not os.path.isdir(PMU)
            else "this machine has no")
    s.check("no LBR here: one error naming what is missing, status 1, nothing printed",
            code == 1 and err.count("error:") == 1 and
            "lbr() needs the CPU's last branch records" in err and want in err and
            out == "", "status %s\n%s%s" % (code, out, err))
    s.check("refused: nothing left attached", not bpf_leftovers(), bpf_leftovers())

if FENTRY and s.case("run"):
    env = None if DEPTH else dict(s.env, GT_LBR_WITHOUT_PMU="1")
    code, out, err = traced(["-e", SCRIPT], env)
    calls = re.search(r"^@calls: (\d+)$", out, re.M)
    heads = re.findall(r"^lbr: .*$", out, re.M)
    if DEPTH:
        # each listing: its count of "[#i] from -> to" lines, every address named
        blocks = re.findall(r"^lbr: (\d+) branches, oldest first\n((?:    \[#\d+\] .*\n)*)",
                            out, re.M)
        ok = blocks and all(int(n) == len(b.splitlines()) and int(n) > 0 and
                            all(re.match(r"    \[#\d+\] \S+\+0x[0-9a-f]+ -> \S+\+0x[0-9a-f]+",
                                         l) for l in b.splitlines()) for n, b in blocks)
        s.check("lbr() at kretfunc:vfs_read lists named branches, one listing a call",
                code == 0 and calls and ok and len(blocks) == int(calls.group(1)),
                "status %s\n%s%s" % (code, out, err))
    else:
        s.check("no LBR, refusal lifted: loads, and each call says the CPU recorded nothing "
                "(ENOENT), as many as @calls",
                code == 0 and calls and int(calls.group(1)) >= 3 and
                len(heads) == int(calls.group(1)) and
                all(h == "lbr: no branch records: No such file or directory (-2)"
                    for h in heads), "status %s\n%s%s" % (code, out, err))
        code, out, err = traced(["-f", "json", "-e", SCRIPT], env)
        objs = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
        got = [o for o in objs if o.get("type") == "lbr"]
        s.check("-f json: one lbr object a call with the error and its code",
                code == 0 and len(got) >= 3 and
                all(o == {"type": "lbr", "error": "No such file or directory", "retcode": -2}
                    for o in got), "status %s\n%s%s" % (code, out, err))
    s.check("run: nothing left attached", not bpf_leftovers(), bpf_leftovers())

s.finish()
