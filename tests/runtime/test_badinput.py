"""Bad input that needs more than a data file: an unreadable binary (root reads
everything, so gotrace runs as nobody for that case), a process that does not exist,
a command that cannot start. One clear line each, the right exit status, nothing
attached."""

import os
import shutil
import subprocess

from gtlib import Suite, bpf_leftovers, describe

s = Suite("badinput")
pair = s.go_build("pair")

if s.case("unreadable") and shutil.which("setpriv"):
    locked = os.path.join(s.work, "bin", "pair-locked")
    shutil.copy(pair, locked)
    os.chmod(locked, 0o000)
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                        s.gotrace, "--dry-run", "-b", locked, "-e",
                        'go:main.Add:entry { printf("x\\n"); }'],
                       capture_output=True, text=True, timeout=60)
    s.check("unreadable binary: one line, status 2",
            r.returncode == 2 and r.stdout == "" and
            r.stderr == "gotrace: error: %s: Permission denied\n" % locked, describe(r))

if s.case("nopid"):
    # a pid that was just freed: its process has exited and been reaped
    gone = subprocess.Popen(["true"])
    gone.wait()
    r = s.run(["-p", str(gone.pid), "-e", 'go:main.Add:entry { printf("x\\n"); }'])
    s.check("-p of a missing process: status 1",
            r.returncode == 1 and r.stderr == "gotrace: error: no process with pid %d\n" % gone.pid,
            describe(r))
    for bad, why in (("a1111", "pid 'a1111' is not a valid decimal number"),
                     ("999999999", "pid '999999999' out of valid pid range [1,")):
        r = s.run(["-p", bad, "-e", 'BEGIN { exit(); }'])
        s.check("-p %s: bpftrace's message, status 2" % bad,
                r.returncode == 2 and r.stderr.startswith("gotrace: error: " + why), describe(r))

if s.case("badcmd"):
    r = s.run(["-c", "/nonexistent/cmd", "-e", 'go:main.Add:entry { printf("x\\n"); }'])
    s.check("-c of a missing command: status 2",
            r.returncode == 2 and
            r.stderr == "gotrace: error: /nonexistent/cmd: No such file or directory\n",
            describe(r))

if s.case("semantic-c"):
    r = s.run(["-c", pair, "-e", 'go:main.Ad:entry { printf("x\\n"); }'])
    s.check("a compile error with -c starts nothing",
            r.returncode == 2 and "sum" not in r.stderr and "did you mean main.Add" in r.stderr,
            describe(r))

# Hostile DWARF (issue 23): a struct that holds itself, twice over, and an array of itself
# (made in place from an uncompressed build of tests/go/args). Listing, placing and
# printing a parameter of that type ends, with no crash, in the time of a plain run.
if s.case("cyclic types"):
    import dwarfpatch as dp
    base = s.go_build("args", suffix="-nozdwarf", flags=["-ldflags=-compressdwarf=false"])
    data = open(base, "rb").read()
    ds = dp.dies(data)
    point = dp.named(ds, 0x13, "main.Point")
    arr = dp.named(ds, 0x01, "[1]uintptr")
    members = dp.members_of(ds, point) if point else []
    variants = {}
    if point and arr and len(members) >= 2:
        d = bytearray(data)
        for m in members[:2]:
            dp.set_type(d, m[2], point[0])
        variants["self"] = d
        d = bytearray(data)
        dp.set_type(d, arr[2], arr[0])
        dp.set_type(d, members[0][2], arr[0])
        variants["array"] = d
    s.check("cyclic types: main.Point and [1]uintptr found in the DWARF", len(variants) == 2)
    for name, d in variants.items():
        f = os.path.join(s.work, "bin", "args-cyclic-" + name)
        with open(f, "wb") as o:
            o.write(d)
        os.chmod(f, 0o755)
        for args in (["-lv", "go:main.Move", "-b", f],
                     ["--dry-run", "-b", f, "-e",
                      'go:main.Move:entry { print(args.p); printf("%d\\n", args.dx); }']):
            try:
                r = s.run(args, timeout=30)
                ok, d_ = r.returncode in (0, 1, 2), describe(r)
            except subprocess.TimeoutExpired:
                ok, d_ = False, "timed out after 30 s"
            s.check("cyclic types (%s): gotrace %s ends without a crash" % (name, args[0]), ok, d_)

# A hostile .gopclntab (issue 23): an inline-tree index table whose index reaches 2^31-1,
# so that the tree's size (index + 1) wraps; gotrace of 8cb3495 asked for an impossible
# allocation and aborted ("out of memory").
if s.case("inline index"):
    import elfpatch as ep
    d = bytearray(open(s.go_build("golines"), "rb").read())
    try:
        ep.wrap_inline_index(d, "main.work")
    except ValueError as e:  # Go 1.19's .gopclntab (GT_GO): another layout
        print("note: inline index case left out: %s" % e)
        d = None
    if d:
        f = os.path.join(s.work, "bin", "golines-inline-index")
        with open(f, "wb") as o:
            o.write(d)
        os.chmod(f, 0o755)
        for args in (["-l", "go:main.*", "-b", f],
                     ["--dry-run", "-b", f, "-e", "go:main.small:entry { @ = count(); }"]):
            try:
                r = s.run(args, timeout=30)
                ok, d_ = r.returncode in (0, 1, 2), describe(r)
            except subprocess.TimeoutExpired:
                ok, d_ = False, "timed out after 30 s"
            s.check("an inline index of 2^31-1: gotrace %s ends without a crash" % args[0],
                    ok, d_)



def ends_cleanly(f, argvs, what):
    """gotrace ARGV (each of ARGVS) on binary F: any status of a message (0, 1, 2), no
    signal (an abort of glibc or ASan is -6, a leak under ASan status 23), in 30 s."""
    for args in argvs:
        try:
            r = s.run([a.replace("@BIN@", f) for a in args], timeout=30)
            ok, d_ = r.returncode in (0, 1, 2) and "Sanitizer" not in r.stderr, describe(r)
        except subprocess.TimeoutExpired:
            ok, d_ = False, "timed out after 30 s"
        s.check("%s: gotrace %s ends without a crash" % (what, args[0]), ok, d_)


def write_bin(name, d):
    f = os.path.join(s.work, "bin", name)
    with open(f, "wb") as o:
        o.write(d)
    os.chmod(f, 0o755)
    return f


# Found by tests/fuzz/fuzz_binfo (docs/reliability.md): a .debug_rnglists whose unit runs
# past the section; libdwarf 20210528 frees the list header twice at the first CU
# (dwarf_load_rnglists): gotrace of 799246c aborted ("free(): double free detected").
# DWARF 5 (Go 1.25+, uncompressed build of tests/go/args): the section cut to 256 bytes.
# Now its DWARF is refused with one warning.
def rnglists_refused(tag, d, what, why):
    """gotrace on the patched binary D: it ends cleanly, and -lv gives one warning that
    its DWARF is not read (WHY) and still lists main.Move."""
    f = write_bin(tag, d)
    ends_cleanly(f, [["-lv", "go:main.Move", "-b", "@BIN@"],
                     ["--dry-run", "-b", "@BIN@", "-e",
                      'go:main.Move:entry { print(args.p); }']], what)
    r = s.run(["-lv", "go:main.Move", "-b", f])
    s.check("%s: one warning naming the file, main.Move listed by name" % what,
            r.returncode == 0 and r.stdout.startswith("go:main.Move") and
            r.stderr == "gotrace: warning: %s: malformed .debug_rnglists (%s): its DWARF is "
            "not read\n" % (f, why), describe(r))


if s.case("rnglists"):
    import elfpatch as ep
    base = s.go_build("args", suffix="-nozdwarf", flags=["-ldflags=-compressdwarf=false"])
    d = bytearray(open(base, "rb").read())
    if ".debug_rnglists" not in ep.sections(bytes(d)):
        print("note: rnglists case left out: no .debug_rnglists (DWARF 4, GT_GO before 1.25)")
    else:
        ep.set_section_size(d, ".debug_rnglists", 256)
        rnglists_refused("args-rnglists", d, "a cut .debug_rnglists",
                         "a unit runs past the section or its header is wrong")

# Found by fuzz_binfo (issue 23, tests/fuzz/binfo-regress/rnglists-shdr): .bss named
# .debug_rnglists (and the real, compressed one named .bss). libdwarf reads a section by
# its name whatever its type, so it read the SHT_NOBITS section's range of the file as
# range lists and freed a list header twice; binfo's check had looked only at sections
# with bytes. Default (compressed DWARF) build of tests/go/args.
if s.case("rnglists-nobits"):
    import elfpatch as ep
    d = bytearray(open(s.go_build("args"), "rb").read())
    if ".debug_rnglists" not in ep.sections(bytes(d)):
        print("note: rnglists-nobits case left out: no .debug_rnglists (GT_GO before 1.25)")
    else:
        ep.swap_section_names(d, ".bss", ".debug_rnglists")
        rnglists_refused("args-rnglists-nobits", d, "a .bss named .debug_rnglists",
                         "SHT_NOBITS: no bytes in the file")

# Found by fuzz_binfo: a stripped binary whose .gopclntab names no function (every name
# empty) leaked the list binfo__pcln_funcs made (ASan's leak check, status 23); gotrace
# says it has no functions.
if s.case("nameless"):
    import elfpatch as ep
    d = bytearray(open(s.go_build("args", suffix="-stripped", flags=["-ldflags=-s -w"]),
                       "rb").read())
    try:
        ep.blank_func_names(d)
    except ValueError as e:
        print("note: nameless case left out: %s" % e)
        d = None
    if d:
        f = write_bin("args-nameless", d)
        ends_cleanly(f, [["-l", "go:main.*", "-b", "@BIN@"]], "nameless functions")
        r = s.run(["-l", "go:main.*", "-b", f])
        s.check("nameless functions: one clear line",
                r.returncode != 0 and r.stderr.count("\n") == 1 and f in r.stderr and
                "no readable .gopclntab" in r.stderr, describe(r))

s.check("nothing left attached", not bpf_leftovers(), bpf_leftovers())
s.finish()
