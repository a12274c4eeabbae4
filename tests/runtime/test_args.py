"""Go values by name: args.NAME, rets.NAME and retval typed from DWARF and placed by Go's
register ABI. The oracle is the traced program itself: tests/go/args prints its own
arguments and results, and gotrace prints the same lines from the probes ("T " before
each); both multisets must be equal, kind by kind. Builds: default, PIE, cgo."""

import os
import re
import shutil
import subprocess
from collections import Counter

from gtlib import Suite, bpf_leftovers, collect, describe, wait_for_line

s = Suite("args")

SCRIPT = r'''
go:main.Ints:entry {
  printf("T Ints %d %d %d %d %d %d %d %d %d\n", args.a, args.b, args.c, args.d, args.e,
         args.f, args.g, args.h, args.i);
}
go:main.Greet:entry { printf("T Greet %s %d\n", args.name, args.times); }
go:main.Greet:return { printf("T Greeted %s\n", retval); }
go:main.(*Student).String:entry {
  printf("T String %s %d %d %s %d\n", args.s.Name, args.s.Age, len(args.s.Tags),
         args.s.Tags[1], args.s.Home.Y);
  printf("T Student %v\n", *args.s);
}
go:main.Move:entry { printf("T Move %d %d %d\n", args.p.X, args.p.Y, args.dx); printf("T MoveP %v\n", args.p); }
go:main.Move:return { printf("T Moved %d %d %v\n", retval.X, rets.q.Y, rets.moved); }
go:main.Pack:entry {
  printf("T Pack %d %d %d %v %v\n", args.s.A, args.s.B, args.s.C, args.s.D, args.flag);
  printf("T PackS %v\n", args.s);
}
go:main.Sum:entry {
  printf("T Sum %d %d %d %d\n", len(args.xs), cap(args.xs), args.xs[0], args.xs[2]);
  printf("T Xs %v\n", args.xs);
}
go:main.Sum:return { if (rets.total > 0) { printf("T Summed %d %d\n", retval, rets.n); } }
go:main.Describe:entry { printf("T Describe %T\n", args.v); printf("T DescribeV %v\n", args.v); }
go:main.Check:return { printf("T Check %v\n", rets.r0); }
go:main.Counts:entry { printf("T Counts %d %d %d\n", len(args.m), len(args.c), cap(args.c)); }
go:main.Many:entry {
  printf("T Many %d %d %d %d %d %d %d %d %s %d\n", args.a, args.b, args.c, args.d, args.e,
         args.f, args.g, args.h, args.s, args.last);
}
'''

KINDS = {"Ints", "Greet", "Greeted", "String", "Student", "Move", "MoveP", "Moved", "Pack",
         "PackS", "Sum", "Xs", "Summed", "Describe", "DescribeV", "Check", "Many", "Counts"}


def split(out):
    """(the program's own lines, gotrace's lines without "T ") of the kinds compared."""
    own, traced = Counter(), Counter()
    for line in out.splitlines():
        if line.startswith("T "):
            traced[line[2:]] += 1
        elif line.split(" ")[0] in KINDS:
            own[line] += 1
    return own, traced


if s.case("values"):
    for label, kw in (("default", {}),
                      ("pie", dict(suffix="-pie", flags=["-buildmode=pie"])),
                      ("cgo", dict(suffix="-cgo", flags=["-ldflags=-linkmode=external"],
                                   cgo=True))):
        b = s.go_build("args", **kw)
        r = s.run(["-c", b + " 2", "-e", SCRIPT])
        own, traced = split(r.stdout)
        kinds = {k.split(" ")[0] for k in own}
        ok = r.returncode == 0 and own == traced and kinds == KINDS
        detail = "only the program: %s\nonly gotrace: %s\n%s" % (
            sorted((own - traced).elements()), sorted((traced - own).elements()), describe(r))
        s.check("every value gotrace prints equals the program's own (%s build)" % label,
                ok, detail)

# map keys and values from Go strings and integers
if s.case("maps"):
    b = s.go_build("args")
    r = s.run(["-c", b + " 3", "-e", 'go:main.Greet:entry { @[args.name, args.times] = count(); '
               '@len[args.name] = sum(len(args.name)); }'])
    s.check("a map keyed by a Go string and an int from args",
            r.returncode == 0 and "@[gopher, 3]: 3" in r.stdout and "@len[gopher]: 18" in r.stdout,
            describe(r))

# a generic function's shape instance takes a hidden dictionary in RAX, which DWARF does
# not list: its parameters start at RBX (tests/go/golines: Map([]int{1, 2, 3}, ...) and
# Map([]string{"1", "2", "3"}, ...))
if s.case("generic"):
    b = s.go_build("golines")
    # the instances' names as the binary spells them (Go 1.19: go.shape.int_0, later
    # releases: go.shape.int), from -l
    inst = [l.split("(")[0] for l in
            s.run(["-b", b, "-l", 'go:"main.Map[...]"']).stdout.splitlines()]
    ints = [f[3:] for f in inst if f.startswith("go:main.Map[go.shape.int")]
    strs = [f[3:] for f in inst if f.startswith("go:main.Map[go.shape.string")]
    r = s.run(["-c", b + " a b", "-e",
               'go:"%s":entry '
               '{ printf("T %%d %%d %%d %%d\\n", len(args.xs), args.xs[0], args.xs[1], args.xs[2]); } '
               'go:"%s":entry '
               '{ printf("T %%d %%s %%s %%s\\n", cap(args.xs), args.xs[0], args.xs[1], args.xs[2]); }'
               % ((ints[:1] or ["?"])[0], (strs[:1] or ["?"])[0])])
    got = sorted(l for l in r.stdout.splitlines() if l.startswith("T "))
    s.check("args of generic instances (after the dictionary)",
            r.returncode == 0 and got == ["T 3 1 2 3", "T 3 1 2 3"], describe(r))

# instances whose names nest brackets (keysOf[go.shape.map[string][]string,...]) and their
# closures (keysOf[...].func1): every name -l prints is a probe, as written there, and a
# wildcard over them is no error (tests/go/generic prints its own calls: "C 10")
if s.case("generic closures"):
    b = s.go_build("generic")
    names = [l[3:l.index("(")] for l in s.run(["-b", b, "-l", "go:main.*"]).stdout.splitlines()
             if l.startswith("go:main.") and "[" in l]
    bad = []
    for n in names:
        r = s.run(["--dry-run", "-b", b, "-e", 'go:"%s":entry { @ = count(); }' % n])
        if r.returncode != 0:
            bad.append((n, r.stderr[-300:]))
    s.check("each generic instance -l lists (%d, with nested brackets) is a probe by that name"
            % len(names), len(names) == 6 and not bad, "%r" % bad)
    r = s.run(["--dry-run", "--funcgraph", "main.*", "-b", b])
    s.check("--funcgraph 'main.*' over them is no error", r.returncode == 0, describe(r))
    closures = [n for n in names if n.endswith(".func1")]
    r = s.run(["-c", b, "-e", "".join('go:"%s":entry { @c = count(); } ' % n
                                      for n in closures)])
    own = re.findall(r"^C (\d+)$", r.stderr, re.M)
    s.check("the closures by their names: as many calls as the program counts (%s)" % own,
            r.returncode == 0 and len(closures) == 2 and own and
            "@c: %s\n" % own[0] in r.stdout, describe(r))

# print(): Go's %+v shape, a slice past what is captured, nil values
if s.case("print"):
    b = s.go_build("args")
    r = s.run(["-c", b, "-e", 'go:main.Sum:entry { print(args.xs); } '
               'go:main.Check:return { print(retval); } '
               'go:main.Move:entry { print(args.p); print(args.dx); } '
               'go:main.Counts:entry { print(args.m); }'])
    lines = r.stdout.splitlines()
    traced = Counter(l for l in lines if not l[:1].isupper())
    s.check("print() of a slice, an error (its text, and nil), a struct, an int and a map",
            r.returncode == 0 and traced == Counter(["[0 0 0]", "[1 2 3]", "negative", "<nil>",
                                                     "{X:10 Y:20}", "5", "map[a:1 b:2 c:3]"]),
            describe(r))

# Go strings of 10 to 3,000 bytes (tests/go/longstr) in printf, as map keys and in tuples
# kept in a map, with max_strlen 1024 (the buffers then live in the scratch map, not on
# the 512-byte stack) and the default 64: each is the program's own text, cut at
# max_strlen - 1 bytes as bpftrace cuts it
if s.case("long strings"):
    b = s.go_build("longstr")
    for strlen in (1024, 64):
        env = dict(s.env, BPFTRACE_MAX_STRLEN=str(strlen))
        r = subprocess.run([s.gotrace, "-c", b, "-e",
                            'go:main.Echo:entry { printf("T %d %s\\n", args.n, args.s); '
                            '@m[args.s] = count(); @last[args.n] = (args.s, args.n); }'],
                           capture_output=True, text=True, env=env, timeout=120)
        own = [l.split(" ", 2) for l in r.stdout.splitlines() if l.startswith("own ")]
        cut = {int(n): t[:strlen - 1] for _, n, t in own}
        want_t = sorted("T %d %s" % (n, t) for n, t in cut.items())
        got_t = sorted(l for l in r.stdout.splitlines() if l.startswith("T "))
        want_m = sorted("@m[%s]: %d" % kv for kv in Counter(cut.values()).items())
        got_m = sorted(l for l in r.stdout.splitlines() if l.startswith("@m["))
        want_l = sorted("@last[%d]: (%s, %d)" % (n, t, n) for n, t in cut.items())
        got_l = sorted(l for l in r.stdout.splitlines() if l.startswith("@last["))
        s.check("strings of 10 to 3,000 bytes under max_strlen %d: printf, map keys and "
                "tuples hold the program's own text, cut at %d bytes" % (strlen, strlen - 1),
                r.returncode == 0 and len(own) == 6 and got_t == want_t and got_m == want_m
                and got_l == want_l, describe(r))

# String constants on pages the program has not touched yet (issue 41: a flake of the
# matrix's print() on a PIE). BPF cannot fault a page in, so a literal in .rodata read by a
# probe before the program's own code reads it came out empty; gotrace now makes the
# binary's data present before the program runs (-c: held at its exec; -p and a followed
# program: at attach). The program is generated: 300 literals of 4 KiB, of which it passes
# three far apart (never near what it touched) to Show before printing them itself.
COLD_IDX = ["37", "151", "263"]


def coldstr():
    d = os.path.join(s.work, "coldstr")
    os.makedirs(d, exist_ok=True)
    lits = ",\n".join('"%s"' % ("S%05d-" % i * 700)[:4096] for i in range(300))
    src = """// generated by tests/runtime/test_args.py
package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
)

type Item struct {
	Name string
	N    int
}

var table = [...]string{
%s,
}

//go:noinline
func Show(it Item) int { return len(it.Name) }

func main() {
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		i, _ := strconv.Atoi(sc.Text())
		Show(Item{Name: table[i], N: i})
		fmt.Printf("own %%d %%s\\n", i, table[i][:40])
	}
}
""" % lits
    path = os.path.join(d, "main.go")
    if not os.path.exists(path) or open(path).read() != src:
        with open(path, "w") as f:
            f.write(src)
    return s.go_build("coldstr", src_dir=d)


COLD_SCRIPT = ('go:main.Show:entry { printf("T %d %s\\n", args.it.N, str(args.it.Name)); '
               'printf("P "); print(args.it); }')


def cold_ok(out):
    """Each own line's text is the traced str()'s first 40 bytes and print()'s Name."""
    own = {l.split()[1]: l.split()[2] for l in out.splitlines() if l.startswith("own ")}
    t = {l.split()[1]: l.split()[2][:40] for l in out.splitlines()
         if l.startswith("T ") and len(l.split()) == 3}
    p = [l for l in out.splitlines() if l.startswith("P ")]
    return (sorted(own) == sorted(COLD_IDX) and t == own and len(p) == 3 and
            all(any(l.startswith("P {Name:" + own[i]) for l in p) for i in own))


if s.case("cold string constants"):
    b = coldstr()
    feed = "".join(i + "\n" for i in COLD_IDX)
    r = s.run(["-c", b, "-e", COLD_SCRIPT], input=feed)
    s.check("-c: literals on untouched pages read whole (str() and print())",
            r.returncode == 0 and cold_ok(r.stdout), describe(r))
    r = s.run(["-c", "sh -c '%s'" % b, "-e", COLD_SCRIPT], input=feed)
    s.check("-c through sh (followed): literals on untouched pages read whole",
            r.returncode == 0 and cold_ok(r.stdout), describe(r))
    app = subprocess.Popen([b], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    tr = s.start(["-p", str(app.pid), "-e", 'BEGIN { printf("READY\\n"); } ' + COLD_SCRIPT])
    head = wait_for_line(tr, "READY", 60)
    own, _ = app.communicate(feed, timeout=60)
    out, err = collect(tr, 30)
    s.check("-p: literals on untouched pages read whole",
            tr.returncode == 0 and cold_ok(own + "".join(head) + out),
            "own:\n%s\ntraced:\n%s%s\n%s" % (own, "".join(head), out, err))
    # the same pages left cold (GT_NO_PREFAULT, a test-only switch): the three texts are
    # unread (by str() and print(): six), printed empty (not as NUL bytes that end the
    # line) and said at the end;
    # this also shows that the cases above start from pages nobody touched
    r = subprocess.run([s.gotrace, "-c", b, "-e", COLD_SCRIPT], input=feed, text=True,
                       capture_output=True, timeout=60, env=dict(s.env, GT_NO_PREFAULT="1"))
    p = sorted(l for l in r.stdout.splitlines() if l.startswith("P "))
    s.check("pages left cold: texts printed empty, the rest of the value kept, and said",
            r.returncode == 0 and "\0" not in r.stdout and
            p == sorted("P {Name: N:%s}" % i for i in COLD_IDX) and
            "6 strings could not be read" in r.stderr, describe(r))

# a struct over a variable's own bytes in a uprobe, (struct foo *)&$v: its fields, the
# struct copied and printed, all read from the program's stack, not the process's memory
# (the values: v's bits as gcc lays the struct out, a:4 b:4 in the first byte, c at 4)
if s.case("own stack struct"):
    b = s.go_build("longstr")
    v = 0x70000005A
    r = s.run(["-c", b, "-e", "struct foo { unsigned long long a:4; unsigned long long b:4; "
               "int c; } go:main.Echo:entry /args.n == 10/ { $v = (uint64)%d; "
               "$f = (struct foo *)&$v; printf(\"F %%d %%d %%d\\n\", $f->a, $f->b, $f->c); "
               "$g = *$f; print($g); print(*$f); printf(\"C %%d\\n\", $g.c); }" % v])
    a, bb, c = v & 0xF, (v >> 4) & 0xF, (v >> 32) & 0xFFFFFFFF
    want = ["F %d %d %d" % (a, bb, c)] + ["{ .a = %d, .b = %d, .c = %d }" % (a, bb, c)] * 2 + \
        ["C %d" % c]
    got = [l for l in r.stdout.splitlines() if l[:2] in ("F ", "C ", "{ ")]
    s.check("(struct foo *)&$v in a uprobe: fields, copy and print() read the stack",
            r.returncode == 0 and got == want, "%s\n%s" % (want, describe(r)))

# issue 24: print() of docker's cobra.Command (several KiB captured) compiled to a memset
# call BPF cannot make; now it prints whole: its first field, its version, its last field
# and no part left out (?)
if s.case("docker"):
    docker = shutil.which("docker")
    if not docker:
        print("SKIP docker: no docker binary on PATH")
    else:
        ver = subprocess.run([docker, "--version"], capture_output=True, text=True).stdout
        ver = ver.strip().replace("Docker version ", "")
        # -o: docker writes its own line in pieces to the same stdout, which may cut ours
        out = os.path.join(s.work, "docker-print.txt")
        r = s.run(["-o", out, "-c", docker + " --version", "-e",
                   'go:"github.com/docker/cli/vendor/github.com/spf13/cobra.(*Command).execute"'
                   ':entry { print(args.c); }'])
        with open(out) as f:
            r.stdout = f.read()
        first = ([l for l in r.stdout.splitlines() if l.startswith("&{")] or [""])[0]
        s.check("print() of docker's *cobra.Command",
                r.returncode == 0 and first.startswith("&{Use:docker [OPTIONS] COMMAND") and
                (" Version:%s " % ver) in first and
                re.search(r" SuggestionsMinimumDistance:\d+}$", first) and
                not re.search(r":\?[ }\]]", first), describe(r))

left = bpf_leftovers()
s.check("nothing left attached", not left, left)
s.finish()
