"""The release matrix's scripts and judges (tests/go/matrix): what gotrace is asked at
each build of the program and how its output is held against the program's own. Shared
by test_gomatrix.py (every release, on this machine) and tests/arm64/run.py (the
arm64 guests: the scripts run there, the judging here)."""

import collections
import os
import re
import subprocess

from gtlib import describe, gotool

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


def script(k, stripped, gens):
    """The script for a build of release K ((1, 26, 8)): names and values where there is
    DWARF, what needs none where stripped; GENS: the build's main.Gen[...] instances."""
    return (BARE if stripped else FULL + "".join(GEN % g for g in gens)) + STACKS + \
        (STACK_R if k >= (1, 23, 0) else "")


def generics(nm):
    """The instances of main.Gen among NM's functions (go tool nm's names)."""
    return [f for f in nm or [] if f.startswith("main.Gen[")]


def judge_run(check, pre, k, stripped, r, gens):
    """CHECK(name, ok, detail) the run R (returncode, stdout without the banner, stderr:
    the program's own lines) of script(K, STRIPPED, GENS)."""
    ok = r.returncode == 0
    d = describe(r)

    # the oracle's own sanity: main's calls on goroutine 1, each worker on another
    ws = [int(l.split()[1]) for l in own(r.stderr, "W")]
    if not stripped:
        want = printed(own(r.stderr, "P"))
        check("%s: print() as %%+v" % pre,
              ok and len(want) == 26 and same(printed(traced(r.stdout, "P")), want),
              "traced:\n%s\nown:\n%s\n%s" % ("\n".join(printed(traced(r.stdout, "P"))),
                                              "\n".join(want), d))
    check("%s: goid and values by name" % pre,
          ok and len(ws) == 5 and ws[:2] == [1, 1] and len(set(ws[2:])) == 3 and
          1 not in ws[2:] and
          same(traced(r.stdout, "W"), [" ".join(l.split()[:2]) if stripped else l
                                       for l in own(r.stderr, "W")]), d)
    check("%s: results at :return" % pre,
          same(traced(r.stdout, "V"), own(r.stderr, "V")) and
          (stripped or same(traced(r.stdout, "R"), own(r.stderr, "R"))), d)
    if not stripped:
        check("%s: pointer receiver" % pre,
              same(traced(r.stdout, "D") + traced(r.stdout, "DR"),
                   own(r.stderr, "D") + own(r.stderr, "DR")), d)
        check("%s: map len" % pre, same(traced(r.stdout, "M"), own(r.stderr, "M")), d)
        check("%s: map contents" % pre,
              len(own(r.stderr, "MP")) == 3 and
              same_maps(traced(r.stdout, "MP"), own(r.stderr, "MP")) and
              traced(r.stdout, "K") == own(r.stderr, "K"), d)
        check("%s: map index by key" % pre,
              len(own(r.stderr, "MK")) == 3 and len(own(r.stderr, "HK")) == 7 and
              same(traced(r.stdout, "MK"), own(r.stderr, "MK")) and
              traced(r.stdout, "KK") == own(r.stderr, "KK") and
              same(traced(r.stdout, "HK"), own(r.stderr, "HK")), d)
        check("%s: source line" % pre, own(r.stderr, "L") and
              re.search(r"^@lines: %s$" % own(r.stderr, "L")[0].split()[1], r.stdout, re.M),
              d)
        check("%s: generic instances" % pre,
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
    check("%s: ustack" % pre, len(want) == (3 if k >= (1, 23, 0) else 2) and not bad,
          "\n".join(bad) + "\n" + d)


def judge_list(check, pre, k, stripped, r, nm):
    """CHECK `-l go:main.*`'s run R against NM, go tool nm's main.* (a stripped build's:
    those of its unstripped twin)."""
    fs = listed(r.stdout)
    if stripped and nm:
        # .gopclntab does not mark ABI0 functions: gotrace names one NAME.abi0 only when
        # an ABI wrapper shares its name (docs/language.md), as cgo's main._Cfunc_cadd
        nm = sorted(f[:-5] if f.endswith(".abi0") and f[:-5] not in nm else f for f in nm)
    if stripped and k < (1, 21, 0):
        # Go 1.19's linker wrote generic instances into .gopclntab as the runtime
        # prints them, main.Gen[...] (its symbol table has main.Gen[go.shape.int_0])
        nm = sorted(re.sub(r"\[.*\]", "[...]", f) for f in nm or [])
    check("%s: -l against go tool nm" % pre,
          r.returncode == 0 and nm and fs == nm, "nm: %s\n%s" % (nm, describe(r)))


REFUSED = 'go:main.work:entry { printf("%d\\n", args.n); }'


def judge_refused(check, pre, r, binary):
    """CHECK that REFUSED on a stripped BINARY failed, saying why."""
    check("%s: names refused without DWARF" % pre,
        r.returncode != 0 and "args.n needs DWARF, and %s has none" % binary in r.stderr,
        describe(r))
