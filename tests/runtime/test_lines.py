"""Source-line probes (go:FILE.go:LINE) and :entry probes on inlined functions. The
oracle is the traced program itself: tests/go/golines counts how often its marked lines
run and how often each function is called, and prints the counts; gotrace's counts of
the same lines and entries must be equal. Lines are found by their // L:NAME marks.
Builds: default and PIE."""

import os
import re

from gtlib import Suite, TESTS, bpf_leftovers, describe

s = Suite("lines")

SRC = os.path.join(TESTS, "go", "golines", "main.go")
MARKS = {}
with open(SRC) as f:
    for no, text in enumerate(f, 1):
        m = re.search(r"// L:(\w+)", text)
        if m:
            MARKS[m.group(1)] = no


def line(name):
    return "go:main.go:%d" % MARKS[name]


def own_counts(out):
    """The program's own counts: {"straight": 3, "body": 21, ...}."""
    return {m.group(1): int(m.group(2))
            for m in re.finditer(r"^(straight|body|small|tiny|both|map) (\d+)$", out, re.M)}


def traced(out, mapname):
    """{key: count} of the map @MAPNAME printed at exit."""
    return {m.group(1): int(m.group(2))
            for m in re.finditer(r"^@%s\[(.*)\]: (\d+)$" % mapname, out, re.M)}


LINES = ("straight", "body", "split", "loop", "small", "tiny", "both")
SCRIPT = "%s { @l[probe] = count(); }\n" % ", ".join(line(n) for n in LINES) + \
    "%s { @f[func] = count(); }\n" % line("small") + \
    'go:main.small:entry, go:main.tiny:entry, go:main.both:entry, go:"main.Map[...]":entry ' \
    "{ @e[probe] = count(); @ef[probe, func] = count(); }\n" + \
    "go:main.sm*:entry { @w[probe] = count(); }\n"

if s.case("counts"):
    for label, kw in (("default", {}),
                      ("pie", dict(suffix="-pie", flags=["-buildmode=pie"]))):
        b = s.go_build("golines", **kw)
        r = s.run(["-c", b + " a b", "-e", SCRIPT])
        own = own_counts(r.stdout)
        lines = traced(r.stdout, "l")
        got = {n: lines.get(line(n), 0) for n in LINES}
        # The for header holds three statements (init, condition, increment) and the
        # probe goes where the compiler's line table starts a statement. Go 1.19 marks
        # the condition, which runs once more than the body per call; Go 1.21+ marks
        # the increment and puts the condition in the same row (entered mid-row by the
        # jump from the init), so it fires once per iteration. Both are right for their
        # table; the statement lines around it have one count only.
        loops = (own.get("body", 0) + own.get("straight", 0), own.get("body"))
        want = {"straight": own.get("straight"), "body": own.get("body"),
                "split": own.get("body"),
                "loop": lines.get(line("loop")) if lines.get(line("loop")) in loops else loops,
                "small": own.get("small"), "tiny": own.get("tiny"), "both": own.get("both")}
        s.check("each line probe fires as often as its line runs (%s build)" % label,
                r.returncode == 0 and own.get("body") == 21 and got == want,
                "gotrace %s\nprogram %s\n%s" % (got, want, describe(r)))
        funcs = traced(r.stdout, "f")
        s.check("func at a line of an inlined function is the enclosing function (%s)" % label,
                funcs == {"main.work": own.get("body"), "main.main": 1},
                "%s\n%s" % (funcs, describe(r)))
        ent = traced(r.stdout, "e")
        maps = sum(v for k, v in ent.items() if k.startswith("go:main.Map[go.shape."))
        want_e = {"small": own.get("small"), "tiny": own.get("tiny"), "both": own.get("both"),
                  "map": own.get("map")}
        got_e = {"small": ent.get("go:main.small:entry"), "tiny": ent.get("go:main.tiny:entry"),
                 "both": ent.get("go:main.both:entry"), "map": maps}
        s.check("an inlined function's :entry fires once per call, at every copy; Map[...] "
                "at every instance (%s)" % label,
                r.returncode == 0 and got_e == want_e and
                sum(1 for k in ent if k.startswith("go:main.Map[")) == 2,
                "gotrace %s\nprogram %s\n%s" % (got_e, want_e, describe(r)))
        ef = traced(r.stdout, "ef")
        s.check("func at an inlined copy is the inlined function (%s)" % label,
                ef.get("go:main.small:entry, main.small") == own.get("small"),
                "%s\n%s" % (ef, describe(r)))
        w = traced(r.stdout, "w")
        s.check("a wildcard takes inlined-only functions too (%s)" % label,
                w == {"go:main.small:entry": own.get("small")}, "%s\n%s" % (w, describe(r)))

if s.case("list"):
    b = s.go_build("golines")
    r = s.run(["-b", b, "-l", "go:main.*"])
    out = r.stdout.splitlines()
    s.check("-l lists inlined-only functions, marked, after the others",
            r.returncode == 0 and out[-2:] == ["go:main.small (inlined)", "go:main.tiny (inlined)"]
            and "go:main.both(x int) int" in out, describe(r))
    r = s.run(["-b", b, "-l", "go:main.Map[...]"])
    s.check("-l go:F[...] lists every instance of a generic function",
            r.returncode == 0 and len(r.stdout.splitlines()) == 2 and
            all(l.startswith("go:main.Map[go.shape.") for l in r.stdout.splitlines()),
            describe(r))

if s.case("ambiguous"):
    b = s.go_build("golines")
    r = s.run(["-b", b, "--dry-run", "-e", "go:proc.go:100 { @ = count(); }"])
    first = r.stderr.splitlines()[0] if r.stderr else ""
    s.check("a base name of two files is an error naming both (GOROOT varies: a pattern)",
            r.returncode == 2 and re.fullmatch(
                r"stdin:1:1: error: 'proc.go' names more than one source file of %s "
                r"\(\S+/src/os/proc\.go, \S+/src/runtime/proc\.go\): give more of its path"
                % re.escape(b), first) is not None, describe(r))
    r = s.run(["-b", b, "--dry-run", "-e", "go:runtime/proc.go:100 { @ = count(); }"])
    s.check("more of the path picks one file", "names more than one" not in r.stderr,
            describe(r))

left = bpf_leftovers()
s.check("nothing left attached", not left, left)
s.finish()
