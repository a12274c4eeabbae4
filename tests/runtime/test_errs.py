"""Go errors and interfaces in predicates, comparisons and map keys (issue 24): nil
compares with an error (an interface) and a slice, `/rets.err/` is true when not nil,
and @[rets.err] keys on the text %v shows. The oracle is tests/go/errs itself: it
prints each result ("RESULT i TEXT"), its counts per key text ("COUNT TEXT k", "TAG
TEXT") and its nil counts ("NILS a NONNIL b NILITEMS c"); gotrace's counts must equal
them. Errors are made by errors.New (a sentinel and per call), fmt.Errorf with %w (per
call: equal texts at different addresses are one key) and a custom type (*ParseError,
whose Error() BPF cannot run: keyed by its type). Builds: default and PIE."""

import re
from collections import Counter

from gtlib import Suite, bpf_leftovers, describe

s = Suite("errs")
N = 60

NIL_SCRIPT = r'''
go:main.Risky:return /rets.err != nil/ { @ne = count(); }
go:main.Risky:return /rets.err == nil/ { @eq = count(); }
go:main.Risky:return /nil != rets.err/ { @ne2 = count(); }
go:main.Risky:return /rets.err/ { @truth = count(); }
go:main.Risky:return /!rets.err/ { @falsity = count(); }
go:main.Risky:return { if (rets.err) { @if = count(); } @tern = sum(rets.err ? 1 : 0); }
go:main.Risky:return /rets.err && rets.v == 0/ { @and = count(); }
go:main.Items:return /retval == nil/ { @nilitems = count(); }
'''


def own(out):
    """The program's own counts: ({key: count} of errors, TAG counts, nil figures)."""
    counts, tags, figs = Counter(), Counter(), {}
    for line in out.splitlines():
        if line.startswith("COUNT "):
            text, k = line[6:].rsplit(" ", 1)
            counts[text] = int(k)
        elif line.startswith("TAG "):
            tags[line[4:]] += 1
        elif line.startswith("NILS "):
            w = line.split()
            figs = {"nils": int(w[1]), "nonnil": int(w[3]), "nilitems": int(w[5])}
    return counts, tags, figs


def traced(out, name):
    """@NAME[KEY]: V lines of gotrace's output as {KEY: V}."""
    pat = re.compile(r"^@%s\[(.*)\]: (\d+)$" % re.escape(name))
    return {m.group(1): int(m.group(2)) for m in map(pat.match, out.splitlines()) if m}


def scalars(out):
    return {m.group(1): int(m.group(2))
            for m in map(re.compile(r"^@(\w+): (\d+)$").match, out.splitlines()) if m}


for label, kw in (("default", {}), ("pie", dict(suffix="-pie", flags=["-buildmode=pie"]))):
    b = s.go_build("errs", **kw)
    if s.case("nil"):
        r = s.run(["-c", "%s %d" % (b, N), "-e", NIL_SCRIPT])
        _, _, figs = own(r.stdout)
        got = scalars(r.stdout)
        want = {"ne": figs.get("nonnil"), "eq": figs.get("nils"), "ne2": figs.get("nonnil"),
                "truth": figs.get("nonnil"), "falsity": figs.get("nils"),
                "if": figs.get("nonnil"), "tern": figs.get("nonnil"),
                "and": figs.get("nonnil"), "nilitems": figs.get("nilitems")}
        s.check("err != nil, == nil, /err/, !err, if, ?:, && count as the program does "
                "(%s build)" % label,
                r.returncode == 0 and figs and figs["nils"] and figs["nonnil"] and got == want,
                "want %s\ngot %s\n%s" % (want, got, describe(r)))
    if s.case("keys"):
        r = s.run(["-c", "%s %d" % (b, N), "-e",
                   "go:main.Risky:return { @[rets.err] = count(); } "
                   "go:main.Tag:entry { @tag[args.v] = count(); }"])
        counts, tags, figs = own(r.stdout)
        want = dict(counts)
        want["<nil>"] = figs.get("nils")
        got = traced(r.stdout, "")
        # every make of error is there: a sentinel, errors.New per call, a wrapped
        # fmt.Errorf per call, the custom type
        kinds = {"not found", "(*main.ParseError)", "bad input 0", "lookup 1: not found"}
        s.check("@[rets.err] counts per error text equal the program's (%s build)" % label,
                r.returncode == 0 and got == want and kinds <= set(got),
                "want %s\ngot %s\n%s" % (want, got, describe(r)))
        gt = traced(r.stdout, "tag")
        s.check("@tag[args.v] of an interface{}: ints, strings, bools, a struct by its type, "
                "nil (%s build)" % label, r.returncode == 0 and gt == dict(tags) and len(gt) == 6,
                "want %s\ngot %s" % (dict(tags), gt))

if s.case("json"):
    b = s.go_build("errs")
    r = s.run(["-c", "%s 10" % b, "-f", "json", "-e", "go:main.Risky:return { @[rets.err] = count(); }"])
    s.check("a JSON map keyed by errors",
            r.returncode == 0 and '"lookup 0: not found": 1' in r.stdout and
            '"(*main.ParseError)": 2' in r.stdout and '"<nil>": 2' in r.stdout, describe(r))

if s.case("printed"):
    # the key text is %v's: the same run prints rets.err with printf %v
    b = s.go_build("errs")
    r = s.run(["-c", "%s 10" % b, "-e",
               'go:main.Risky:return /rets.err != nil/ { printf("E %v\\n", rets.err); '
               '@[rets.err] = count(); }'])
    printed = Counter(l[2:] for l in r.stdout.splitlines() if l.startswith("E "))
    keys = traced(r.stdout, "")
    # %v shows a custom error's address; its key shows the type alone
    norm = Counter(re.sub(r"^\((\*main\.ParseError)\)\(0x[0-9a-f]+\)$", r"(\1)", k)
                   for k in printed.elements())
    s.check("the key texts are what printf %v prints of the same errors",
            r.returncode == 0 and dict(norm) == keys and len(keys) >= 5,
            "printed %s\nkeys %s\n%s" % (dict(norm), keys, describe(r)))
    # %v and %T of one error in one printf: LLVM shared the address ctx+128 (the RIP
    # read twice) between two loads and spilled it, and the verifier refused the
    # program ("dereference of modified ctx ptr"), found on Caddy
    r2 = s.run(["-c", "%s 10" % b, "-e",
                'go:main.Risky:return /rets.err != nil/ { printf("E %v | %T\n", rets.err, '
                'rets.err); }'])
    both = [l[2:].split(" | ") for l in r2.stdout.splitlines() if l.startswith("E ")]
    s.check("printf of an error's %v and %T at once: the same texts, and each type",
            r2.returncode == 0 and Counter(
                re.sub(r"^\((\*main\.ParseError)\)\(0x[0-9a-f]+\)$", r"(\1)", v)
                for v, _ in both) == norm and
            all(t == "*main.ParseError" if v.startswith("(*main.ParseError)") else t
                for v, t in both), describe(r2))

# Value receivers (issue 24): Note.String is inlined into main.main and into the
# (*Note).String wrapper; a clause reading args used to fail on those copies. Now they
# are left out with a warning, and the out-of-line calls (through a func value, which
# the program prints as "VALUE %+v") are read.
if s.case("receiver"):
    b = s.go_build("errs")
    r = s.run(["-c", "%s 3" % b, "-e", 'go:main.Note.String:entry { printf("T %v\\n", args.n); }'])
    values = Counter(l[6:] for l in r.stdout.splitlines() if l.startswith("VALUE "))
    seen = Counter(l[2:] for l in r.stdout.splitlines() if l.startswith("T "))
    s.check("args of a value-receiver method equal the program's own %+v; its inlined "
            "copies are a warning",
            r.returncode == 0 and values and seen == values and
            "also inlined into" in r.stderr and "main.(*Note).String" in r.stderr,
            "values %s\nseen %s\n%s" % (values, seen, describe(r)))
    r = s.run(["--funcgraph", "main.*", "--args", "auto", "-c", "%s 3" % b], timeout=120)
    graph = Counter(re.sub(r"^.*main\.Note\.String\(n=(.*)\) \{.*$", r"\1", l)
                    for l in r.stdout.splitlines() if "main.Note.String(n=" in l)
    s.check("--funcgraph 'main.*' --args auto runs over it and shows the receiver",
            r.returncode == 0 and graph == values, "graph %s\nvalues %s\n%s" % (graph, values, describe(r)))
    # its warnings are about the user's functions and options, not the program gotrace
    # wrote: no funcgraph:LINE:COL, no quoted line, no "clause"
    warn = [l for l in r.stderr.splitlines() if "also inlined into" in l]
    s.check("--funcgraph: the inlined copies' warning names --args, no place in a "
            "generated program",
            warn[:1] == ["gotrace: warning: main.Note.String is also inlined into main.main "
                         "and main.(*Note).String: --args reads arguments, which an inlined "
                         "copy has none of, so only calls of its out-of-line code are traced"]
            and all(l.startswith("gotrace: warning: ") for l in warn)
            and "funcgraph:" not in r.stderr and "^~" not in r.stderr and
            "clause" not in r.stderr, describe(r))

# A generic function's instances hold args.xs with different element types ([]int,
# []int32): len() and cap() read the same slice header in each (issue 24).
if s.case("generic"):
    b = s.go_build("errs")
    r = s.run(["-c", "%s 3" % b, "-e",
               'go:main.SumOf[...]:entry { printf("T SUMLEN %d %d\\n", len(args.xs), cap(args.xs)); }'])
    own_lens = Counter(l for l in r.stdout.splitlines() if l.startswith("SUMLEN "))
    seen = Counter(l[2:] for l in r.stdout.splitlines() if l.startswith("T SUMLEN "))
    s.check("len()/cap() of args.xs over main.SumOf[...] equal the program's own",
            r.returncode == 0 and len(own_lens) == 2 and seen == own_lens,
            "own %s\nseen %s\n%s" % (own_lens, seen, describe(r)))

if s.case("leftovers"):
    s.check("nothing left attached", not bpf_leftovers(), str(bpf_leftovers()))

s.finish()
