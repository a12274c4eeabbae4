"""The Go release matrix (issue 22): tests/go/matrix built by Debian's Go 1.19, the newest
patch release of every Go minor from 1.21 on (tests/gotool.py: downloaded once into a cache
CI keeps) and the machine's own go, each plain, PIE and, where gcc is, with cgo (external
linking), and each of these stripped too (-ldflags=-s -w). On each, one gotrace run traces
the program and its output is compared with what the program printed of itself: goids (the main goroutine and
workers, from runtime.Stack's header), values by name (a struct split over registers, a
string, a slice passed on the stack, an int, a pointer receiver, map lengths, two
instances of a generic function), map contents (print's %v against fmt's %+v: keys sorted,
8 entries at most and " ..." past them), results at :return (named, unnamed, retval), a source
line's hits (DWARF's line table), ustack at an entry (runtime.Callers with inlined calls,
range-over-func bodies on 1.23+); and `-l` is compared with `go tool nm`. Stripped builds
have no DWARF: names are refused with the clear error, what needs no names (goid, retval
as RAX, ustack, -l) still checked. print() / %v (tests/go/matrix/values.go, issue 24): an
http.Request-shaped struct on the stack, a cobra.Command-sized one through a pointer,
Durations, Times and IPs as their String(), an array past 8 elements, %T and %d / %x of
64-bit fields, each equal to the program's own %+v (pointers and map fields set aside). The module proxy unreachable: skipped, or failed in CI
(GT_REQUIRE_BPF=1). docs/go-versions.md has the matrix and what differs between releases."""

import collections
import os
import re
import shutil
import subprocess
import time

from gtlib import FETCH, PREBUILD, Suite, bpf_leftovers, describe, gotool

s = Suite("gomatrix")
T0 = time.time()

# -- the releases: Debian's 1.19, the proxy's newest of each minor, the machine's go ------
releases = []
deb = gotool.debian_go()
s.check("Debian's Go 1.19 is installed (scripts/install-deps.sh)", deb is not None)
if deb:
    releases.append((gotool.version(deb), deb))
names = gotool.releases()
if not names:
    s.unavailable("the Go module proxy cannot be asked for releases: " + gotool.last_error)
# GT_MATRIX_ENDS=1 (scripts/test.sh's ASan pass; the plain pass runs every release):
# the oldest and newest releases and the machine's go only
if os.environ.get("GT_MATRIX_ENDS", "0") not in ("", "0"):
    names = names[-1:]
if FETCH:  # the downloads only, four at a time (each is network, then ~3 s of unzip)
    import concurrent.futures
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        got = list(ex.map(gotool.toolchain, names))
    for rel, g in zip(names, got):
        s.check("toolchain %s fetched" % rel, g is not None, gotool.last_error)
    print("toolchains: %d in %.0f s" % (len(names), time.time() - T0), flush=True)
    s.finish()
for rel in names:
    picks = [o for o in s.only if o.startswith("go1.")]
    if picks and not any(o in rel or rel in o for o in picks):
        continue
    g = gotool.toolchain(rel)
    if g is None:
        s.unavailable("Go toolchain %s cannot be had: %s" % (rel, gotool.last_error))
    releases.append((rel, g))
mine = gotool.go()
if gotool.version(mine) not in [r for r, _ in releases] + names:
    releases.append((gotool.version(mine), mine))
print("toolchains: %d in %.0f s" % (len(releases), time.time() - T0), flush=True)

# name, go build flags, cgo; a stripped build follows the unstripped one it is a copy of
# (NAME less "-stripped"), whose symbols it is compared with
STRIP = "-ldflags=-s -w"
BUILDS = [("plain", [], False), ("pie", ["-buildmode=pie"], False),
          ("stripped", [STRIP], False), ("pie-stripped", ["-buildmode=pie", STRIP], False)]
if shutil.which("gcc"):
    BUILDS += [("cgo", [], True), ("cgo-stripped", [STRIP], True)]
else:
    print("note: no gcc: the cgo builds are left out")

CHECKS = ["print() as %+v", "goid and values by name", "results at :return", "pointer receiver",
          "map len", "map contents", "map index by key", "source line", "generic instances", "ustack",
          "-l against go tool nm",
          "names refused without DWARF"]

# -- the scripts ----------------------------------------------------------------------------
FULL = r'''
go:main.work:entry { printf("W %d p=%v s=%s xs=%v n=%d\n", goid, args.p, args.s, args.xs, args.n); }
go:main.work:return { printf("R %d sum=%d label=%s\n", goid, rets.sum, rets.label);
                      printf("V %d %d\n", goid, retval); }
go:"main.(*Pair).Describe":entry { printf("D %d p=%v k=%d\n", goid, args.p, args.k); }
go:"main.(*Pair).Describe":return { printf("DR %s\n", retval); }
go:main.count:entry { printf("M %d\n", len(args.m)); printf("MP %v\n", args.m);
                      printf("MK %d %d %d\n", args.m["b"], args.m["k42"], args.m["nope"]); }
go:main.kinds:entry { printf("K %v %v %v\n", args.is, args.fs, args.bs);
                      printf("KK [%s] [%s] [%s]\n", args.is[7], args.is[-3], args.is[99]); }
go:main.serve:entry { printf("HK %v %d %d\n", args.r.Header["X-Ids"], len(args.r.Header["Accept"]),
                             len(args.r.Header["Nope"])); }
'''
# print() and printf of tests/go/matrix/values.go: a struct shaped like http.Request on the
# stack, a cobra.Command-sized one through a pointer, Durations, an array past 8
# elements, %d / %x of 64-bit Go integers, %T, a float field in memory
FULL += r'''
go:main.serve:entry { printf("P req %v\n", args.r);
  printf("P n %d %d %x %x\n", args.r.Deadline, args.r.ContentLength, args.r.Timeout, args.r.Deadline);
  printf("P t %T %T %T %T %T %v\n", args.r.Items, args.r.Method, args.n, args.r.URL,
         args.r.Timeout, args.r.Items[0].Price); }
go:main.execute:entry { printf("P cmd "); print(args.c); }
go:main.bits:entry { printf("P bits %v\n", args.b); }
go:main.parse:entry { printf("P parse %s %d %s %d\n", args.c.pa.subject, args.c.pa.size, args.msg,
                             args.c.state); }
go:main.wait:entry { printf("P dur %v %v %v\n", args.d, args.t, args.at); }
'''
# a source line (DWARF's line table: version 5 from Go 1.25 on), hit once per element
LINE = next(i + 1 for i, l in enumerate(open(os.path.join(gotool.TESTS, "go", "matrix",
                                                          "main.go")))
            if "the line test_gomatrix probes" in l)
FULL += 'go:main.go:%d { @lines = count(); }\n' % LINE
GEN = 'go:"%s":entry { printf("G x=%%v n=%%d\\n", args.x, args.n); }\n'
# without DWARF: what needs no names (retval is RAX, work's first result)
BARE = r'''
go:main.work:entry { printf("W %d\n", goid); }
go:main.work:return { printf("V %d %d\n", goid, retval); }
'''
STACKS = ''.join('go:main.leaf%s:entry { @%s[ustack] = count(); }\n' % (t.upper(), t)
                 for t in "ag")
STACK_R = 'go:main.leafR:entry { @r[ustack] = count(); }\n'

MAPDUMP = re.compile(r"^@(\w+)\[\n(.*?)\n\]: (\d+)$", re.S | re.M)


def frame_names(frames):
    """'main.leafA+6' -> 'main.leafA', 'main.chainB (inlined)' -> 'main.chainB'; type
    arguments as the Go runtime prints them ('main.Gen[go.shape.int]' -> 'main.Gen[...]')."""
    out = []
    for f in frames:
        f = re.sub(r"( \(inlined\)|\+\d+)$", "", f.strip())
        out.append(re.sub(r"\[.*\]", "[...]", f))
    return out


def own(stderr, tag):
    return [l for l in stderr.splitlines() if l.startswith(tag + " ")]


def traced(stdout, tag):
    return [l for l in stdout.splitlines() if l.startswith(tag + " ")]


def printed(lines):
    """P lines with pointer values set aside (0x... -> PTR); map fields are compared whole
    (fmt sorts their keys, as print() does)."""
    return [re.sub(r"0x[0-9a-f]+", "PTR", l) for l in lines]


def same(a, b):
    return collections.Counter(a) == collections.Counter(b)


def map_entries(line):
    """'MP map[a:1 b:2 ...]' -> (['a:1', 'b:2'], True): the entries (keys and values
    without spaces) and whether ' ...' ends them."""
    body = line[line.index("map[") + 4:line.rindex("]")]
    more = body.endswith("...")
    body = body[:-3].rstrip() if more else body
    return (body.split() if body else []), more


def same_maps(traced_lines, own_lines):
    """print()'s maps against fmt's %+v: equal where the map has up to 8 entries (gotrace's
    bound); past it, 8 of fmt's entries in fmt's order, then ' ...'."""
    if len(traced_lines) != len(own_lines):
        return False
    for t, o in zip(traced_lines, own_lines):
        want, _ = map_entries(o)
        if len(want) <= 8:
            if t != o:
                return False
            continue
        got, more = map_entries(t)
        if not more or len(got) != 8 or any(e not in want for e in got) or \
                sorted(got, key=want.index) != got:
            return False
    return True


def nm_funcs(gocmd, binary):
    """main.* text symbols of BINARY by the release's own go tool nm; None when it has none."""
    # the toolchain cache's build cache: releases from 1.25 on build nm at its first use
    r = subprocess.run([gocmd, "tool", "nm", binary], capture_output=True, text=True,
                       env=dict(os.environ, GOTOOLCHAIN="local",
                                GOCACHE=os.path.join(gotool.cache_dir(), "gocache")))
    if r.returncode != 0:
        return None
    fs = []
    for line in r.stdout.splitlines():
        f = line.split(None, 2)
        if len(f) == 3 and f[1] in ("T", "t") and f[2].startswith("main."):
            fs.append(f[2])
    return sorted(fs)


def listed(out):
    """Function names of `-l` lines: 'go:main.work(p main.Pair, ...) (sum int, ...)' ->
    'main.work'; inlined-only functions ('go:main.chainB (inlined)') are left out: nm
    has no symbol for them."""
    fs = []
    for line in out.splitlines():
        if not line.startswith("go:") or line.endswith(" (inlined)"):
            continue
        n = line[3:]
        # the signature's '(' is the first one after a method's receiver '(*T)'
        start = n.index(")") + 1 if n.startswith("main.(") else 0
        i = n.find("(", start)
        fs.append(n if i < 0 else n[:i])
    return sorted(fs)


def check_matrix(rel, gocmd, build, flags, cgo):
    pre = "%s/%s" % (rel, build)
    if not any(s.case("%s: %s" % (pre, c)) for c in CHECKS):
        return None
    k = gotool.key(rel)
    files = ["main.go", "values.go"] + (["range.go"] if k >= (1, 23, 0) else []) + (["cgo.go"] if cgo else [])
    t = time.time()
    try:
        b = s.go_build_with(gocmd, "matrix", "%s-%s" % (rel, build), files, flags, cgo)
    except RuntimeError as e:
        s.check("%s: builds" % pre, False, str(e))
        return None
    tb = time.time() - t
    stripped = build.endswith("stripped")
    nm = nm_funcs(gocmd, b)
    if stripped:  # no symbols: those of the unstripped build of the same release
        base = build[:-len("stripped")].rstrip("-") or "plain"
        nm = nm_funcs(gocmd, s.go_build_with(gocmd, "matrix", "%s-%s" % (rel, base), files,
                                             [f for f in flags if f != STRIP], cgo))
    if PREBUILD:  # scripts/test.sh's early builds: the binaries and nm only
        return tb
    gens = [f for f in nm or [] if f.startswith("main.Gen[")]
    script = (BARE if stripped else FULL + "".join(GEN % g for g in gens)) + STACKS + \
        (STACK_R if k >= (1, 23, 0) else "")
    r = s.run(["-c", b, "-e", script])
    ok = r.returncode == 0
    d = describe(r)

    # the oracle's own sanity: main's calls on goroutine 1, each worker on another
    ws = [int(l.split()[1]) for l in own(r.stderr, "W")]
    if not stripped:
        want = printed(own(r.stderr, "P"))
        s.check("%s: print() as %%+v" % pre,
                ok and len(want) == 26 and same(printed(traced(r.stdout, "P")), want),
                "traced:\n%s\nown:\n%s\n%s" % ("\n".join(printed(traced(r.stdout, "P"))),
                                                "\n".join(want), d))
    s.check("%s: goid and values by name" % pre,
            ok and len(ws) == 5 and ws[:2] == [1, 1] and len(set(ws[2:])) == 3 and
            1 not in ws[2:] and
            same(traced(r.stdout, "W"), [" ".join(l.split()[:2]) if stripped else l
                                         for l in own(r.stderr, "W")]), d)
    s.check("%s: results at :return" % pre,
            same(traced(r.stdout, "V"), own(r.stderr, "V")) and
            (stripped or same(traced(r.stdout, "R"), own(r.stderr, "R"))), d)
    if not stripped:
        s.check("%s: pointer receiver" % pre,
                same(traced(r.stdout, "D") + traced(r.stdout, "DR"),
                     own(r.stderr, "D") + own(r.stderr, "DR")), d)
        s.check("%s: map len" % pre, same(traced(r.stdout, "M"), own(r.stderr, "M")), d)
        s.check("%s: map contents" % pre,
                len(own(r.stderr, "MP")) == 3 and
                same_maps(traced(r.stdout, "MP"), own(r.stderr, "MP")) and
                traced(r.stdout, "K") == own(r.stderr, "K"), d)
        s.check("%s: map index by key" % pre,
                len(own(r.stderr, "MK")) == 3 and len(own(r.stderr, "HK")) == 7 and
                same(traced(r.stdout, "MK"), own(r.stderr, "MK")) and
                traced(r.stdout, "KK") == own(r.stderr, "KK") and
                same(traced(r.stdout, "HK"), own(r.stderr, "HK")), d)
        s.check("%s: source line" % pre, own(r.stderr, "L") and
                re.search(r"^@lines: %s$" % own(r.stderr, "L")[0].split()[1], r.stdout, re.M),
                d)
        s.check("%s: generic instances" % pre,
                len(gens) == 2 and same(traced(r.stdout, "G"), own(r.stderr, "G")),
                "instances %s\n%s" % (gens, d))
    # ustack at an entry, down to main.main, against runtime.Callers at the leaf
    got = {m.group(1): frame_names(m.group(2).split("\n")) for m in MAPDUMP.finditer(r.stdout)}
    want = {l.split()[1]: frame_names(l.split()[2].split(";")) for l in own(r.stderr, "S")}
    bad = []
    for tag, fs in sorted(want.items()):
        g = got.get(tag, [])
        g = g[:g.index("main.main") + 1] if "main.main" in g else g
        if g != fs:
            bad.append("%s: traced %s, own %s" % (tag, g, fs))
    s.check("%s: ustack" % pre, len(want) == (3 if k >= (1, 23, 0) else 2) and not bad,
            "\n".join(bad) + "\n" + d)

    # -l against the symbol table (a stripped binary's: that of its unstripped build)
    r = s.run(["-l", "go:main.*", "-b", b])
    fs = listed(r.stdout)
    if stripped and nm:
        # .gopclntab does not mark ABI0 functions: gotrace names one NAME.abi0 only when
        # an ABI wrapper shares its name (docs/language.md), as cgo's main._Cfunc_cadd
        nm = sorted(f[:-5] if f.endswith(".abi0") and f[:-5] not in nm else f for f in nm)
    if stripped and k < (1, 21, 0):
        # Go 1.19's linker wrote generic instances into .gopclntab as the runtime
        # prints them, main.Gen[...] (its symbol table has main.Gen[go.shape.int_0])
        nm = sorted(re.sub(r"\[.*\]", "[...]", f) for f in nm or [])
    s.check("%s: -l against go tool nm" % pre,
            r.returncode == 0 and nm and fs == nm, "nm: %s\n%s" % (nm, describe(r)))
    if stripped:
        r = s.run(["-c", b, "-e", 'go:main.work:entry { printf("%d\\n", args.n); }'])
        s.check("%s: names refused without DWARF" % pre,
                r.returncode != 0 and "args.n needs DWARF, and %s has none" % b in r.stderr,
                describe(r))
    return tb


times = []
for rel, gocmd in releases:
    for build, flags, cgo in BUILDS:
        t = time.time()
        tb = check_matrix(rel, gocmd, build, flags, cgo)
        if tb is not None:
            times.append("%s/%s build %.1fs, all %.1fs" % (rel, build, tb, time.time() - t))

if PREBUILD:
    print("prebuilt: " + "; ".join(times))
    s.finish()
left = bpf_leftovers()
s.check("nothing left attached", not left, "\n".join(left))
print("times: " + "; ".join(times))
print("matrix: %d releases x %d builds in %.0f s" % (len(releases), len(BUILDS), time.time() - T0))
s.finish()
