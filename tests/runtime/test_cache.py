"""The compiled-program cache: a second identical run takes the BPF object from
$XDG_CACHE_HOME/gotrace without running LLVM and prints exactly what the first printed;
a change of the script, an argument, the target binary or gotrace itself misses; a
truncated or damaged entry is rebuilt without an error; --no-cache bypasses it."""

import os
import shutil

from gtlib import Suite, bpf_leftovers, describe

s = Suite("cache")
cache = os.path.join(s.work, "xdg-cache")
shutil.rmtree(cache, ignore_errors=True)
s.env["XDG_CACHE_HOME"] = cache
ENTRIES = os.path.join(cache, "gotrace")

PROG = 'go:main.add*:entry { @[func] = count(); @s = sum(arg0); } END { printf("end %d\\n", $1); }'


def state(r):
    """'hit' or 'miss' as -v says, or None."""
    for line in r.stderr.splitlines():
        if "cache: hit" in line:
            return "hit"
        if "cache: miss" in line:
            return "miss"
    return None


def entries():
    return sorted(f for f in os.listdir(ENTRIES) if f.endswith(".gto")) if os.path.isdir(ENTRIES) else []


if s.case("hit"):
    b = s.go_build("adds")
    r1 = s.run(["-v", "-c", b, "-e", PROG, "7"])
    r2 = s.run(["-v", "-c", b, "-e", PROG, "7"])
    s.check("a first run misses and stores, the same run again hits",
            state(r1) == "miss" and state(r2) == "hit" and len(entries()) == 1,
            describe(r1) + describe(r2))
    s.check("a hit prints exactly what the miss printed",
            r1.returncode == 0 and r2.returncode == 0 and r1.stdout == r2.stdout and
            "end 7" in r1.stdout, describe(r1) + describe(r2))
    r = s.run(["-v", "--no-cache", "-c", b, "-e", PROG, "7"])
    s.check("--no-cache compiles", state(r) is None and "cache: not used" in r.stderr and
            r.stdout == r1.stdout, describe(r))

    # everything that changes the object misses
    r = s.run(["-v", "-c", b, "-e", PROG.replace("count()", "count() "), "7"])
    s.check("another script text misses", state(r) == "miss", describe(r))
    r = s.run(["-v", "-c", b, "-e", PROG, "8"])
    s.check("another argument misses", state(r) == "miss" and "end 8" in r.stdout, describe(r))
    b2 = os.path.join(s.work, "bin", "adds-copy")
    shutil.copy(b, b2)
    r = s.run(["-v", "-c", b2, "-e", PROG, "7"])
    s.check("another target binary misses", state(r) == "miss", describe(r))
    os.utime(b2, (1, 1))  # the same path, rebuilt: another mtime
    r = s.run(["-v", "-c", b2, "-e", PROG, "7"])
    s.check("a target binary changed in place misses", state(r) == "miss", describe(r))
    gt2 = os.path.join(s.work, "gotrace-copy")
    shutil.copy(s.gotrace, gt2)  # with its code generator module beside it
    shutil.copy(os.path.join(os.path.dirname(s.gotrace), "gotrace-cg.so"), s.work)
    save, s.gotrace = s.gotrace, gt2
    r = s.run(["-v", "-c", b, "-e", PROG, "7"])
    s.gotrace = save
    s.check("another gotrace binary misses", state(r) == "miss", describe(r))
    # the code generator module alone rebuilt (the executable the same): GT_CODEGEN
    cg2 = os.path.join(s.work, "gotrace-cg.so")
    os.utime(cg2, (2, 2))
    s.env["GT_CODEGEN"] = cg2
    r = s.run(["-v", "-c", b, "-e", PROG, "7"])
    r2 = s.run(["-v", "-c", b, "-e", PROG, "7"])
    del s.env["GT_CODEGEN"]
    s.check("another code generator module misses, then hits", state(r) == "miss" and
            state(r2) == "hit", describe(r) + describe(r2))

    # damaged entries: rebuilt, never trusted
    r = s.run(["-v", "-c", b, "-e", PROG, "7"])
    s.check("the original run still hits", state(r) == "hit", describe(r))
    before = set(entries())
    for name in before:
        p = os.path.join(ENTRIES, name)
        with open(p, "r+b") as f:
            f.truncate(os.path.getsize(p) // 2)
    r = s.run(["-v", "-c", b, "-e", PROG, "7"])
    s.check("a truncated entry is a miss, with no error, and the output is right",
            state(r) == "miss" and r.returncode == 0 and r.stdout == r1.stdout and
            "error" not in r.stderr, describe(r))
    r = s.run(["-v", "-c", b, "-e", PROG, "7"])
    s.check("... and it was rebuilt: the next run hits", state(r) == "hit", describe(r))
    for name in entries():
        p = os.path.join(ENTRIES, name)
        data = bytearray(open(p, "rb").read())
        data[-20] ^= 0xff  # a flipped byte inside the object
        open(p, "wb").write(bytes(data))
    r = s.run(["-v", "-c", b, "-e", PROG, "7"])
    s.check("a damaged entry (checksum) is a miss, the output right",
            state(r) == "miss" and r.returncode == 0 and r.stdout == r1.stdout, describe(r))
    s.check("no temporary files are left", not [f for f in os.listdir(ENTRIES)
                                                if f.endswith(".tmp")], os.listdir(ENTRIES))

left = bpf_leftovers()
s.check("nothing left attached", not left, left)
s.finish()
