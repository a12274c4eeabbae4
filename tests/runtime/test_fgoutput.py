"""Call-graph mode (--funcgraph) on tests/go/funcgraph, its outputs and sessions (the trees
themselves are test_funcgraph.py's): -f json, -f chrome (the same calls as the text, as
a trace for Perfetto), a PIE, a build without DWARF (.gopclntab lines), -p, trees left
open at Ctrl-C and on a live server, colour only on a terminal."""

import decimal
import json
import os
import pty
import signal
import subprocess
import time

import fglib
from fglib import *  # noqa: F401,F403 (the shared helpers and constants)
from gtlib import Suite, bpf_leftovers, describe

s = Suite("fgoutput")
fglib.init(s)
b = s.go_build("funcgraph")

# -f json: one object per call
if s.case("json"):
    out = os.path.join(s.work, "funcgraph.json")
    r = s.run(["-f", "json", "--funcgraph", "main.add*", "--funcgraph", "main.(*Student).String",
               "--args", STUDENT_ARGS, "--rets", "main.add(r)",
               # String's result: RAX points at its 14 bytes ("Student0 is 20")
               "--rets",
               "main.(*Student).String(text=%ax:c14)", "-o", out,
               "-c", b + " -rounds 2 -unit 5 -panic 1"])
    note_own_times(r.stderr)
    objs, bad = [], []
    for line in open(out).read().splitlines():
        try:
            objs.append(json.loads(line))
        except ValueError:
            bad.append(line)
    calls = [o["data"] for o in objs if o.get("type") == "call"]
    s.check("json: every line is a JSON object of a call", r.returncode == 0 and not bad and
            len(calls) == len(objs) and len(calls) > 10, describe(r) + "\n".join(bad))
    keys = {"tree", "goid", "depth", "function", "args", "rets", "entry_ns", "duration_ns",
            "oncpu_ns", "caller",
            "call_file", "call_line", "return_file", "return_line", "panic", "unfinished",
            "inlined"}
    s.check("json: the fields", all(set(c) == keys for c in calls) and
            not any(c["inlined"] for c in calls), calls[:1])
    add1 = [c for c in calls if c["function"] == "main.add1"]
    st = [c for c in calls if c["function"] == "main.(*Student).String"]
    ok = (len(add1) == 2 and add1[0]["depth"] == 1 and add1[0]["caller"] == "main.add" and
          add1[0]["call_line"] == M["call:add1"] and add1[0]["return_line"] == M["ret:add1"] and
          took("add1", add1[0]["duration_ns"] / 1e6, 6 * 5) and not add1[0]["panic"] and
          add1[1]["panic"] and add1[1]["duration_ns"] is None and add1[1]["oncpu_ns"] is None and
          all(0 < c["oncpu_ns"] <= c["duration_ns"] for c in calls if not c["panic"]) and
          add1[0]["call_file"].endswith("tests/go/funcgraph/main.go") and
          [c["args"] for c in st] == [{"s.name": "Student0", "s.age": 20},
                                      {"s.name": "Student0", "s.age": 21}] and
          abs(add1[0]["entry_ns"] / 1e9 - time.time()) < 120)
    s.check("json: values (depth, caller, lines, duration, on-CPU time within it, panic, "
            "args, wall-clock entry)",
            ok, json.dumps(add1 + st, indent=1))
    adds = [c for c in calls if c["function"] == "main.add"]
    # a Go value by name is its %+v text, a rule's integer a number (as --args)
    s.check("json: --rets values, {} where none are asked for or nothing returned",
            [c["rets"] for c in adds] == [{"r": "0"}, {"r": "-1"}] and
            [c["rets"] for c in st] == [{"text": "Student0 is 20"}, {"text": "Student0 is 21"}]
            and all(c["rets"] == {} for c in add1), json.dumps(adds + st + add1, indent=1))
    trees = {}
    for c in calls:
        trees.setdefault(c["tree"], []).append(c)
    s.check("json: trees in preorder (depth 0 first, each depth at most one more)",
            all(t[0]["depth"] == 0 and all(b_["depth"] <= a["depth"] + 1
                                           for a, b_ in zip(t, t[1:])) for t in trees.values()),
            trees)

# -f chrome: the same calls as the text, as a trace for Perfetto and chrome://tracing.
# GOMAXPROCS=1: a goroutine's id then does not depend on which P made it (each P takes
# ids in batches), so two runs of the program give its goroutines the same ids. The
# durations of two runs differ, though: GT_FUNCGRAPH_TEXT=FILE has the chrome run write
# its text trees too, to compare the two formats on the very same calls.
def chrome_run(prog, extra, fmt, text_copy=None):
    out = os.path.join(s.work, "funcgraph." + ("json" if fmt else "out"))
    for f in (out, text_copy):
        if f and os.path.exists(f):
            os.unlink(f)
    env = dict(s.env)
    s.env["GOMAXPROCS"] = "1"
    if text_copy:
        s.env["GT_FUNCGRAPH_TEXT"] = text_copy
    try:
        r = s.run(["--funcgraph", "main.add*", *extra, *(["-f", fmt] if fmt else []),
                   "-o", out, "-c", " ".join([b] + prog)], timeout=90)
    finally:
        s.env = env
    return r, open(out).read() if os.path.exists(out) else ""


def ns(x):
    """A JSON number of microseconds (parsed as Decimal) -> integer nanoseconds."""
    return int(x * 1000)


def text_tolerance_ns(dur):
    """Half the last digit the text printed a duration with: 15.368ms -> 500 ns."""
    dur = dur.strip()
    unit = next(u for u in ("us", "ms", "s") if dur.endswith(u))
    decimals = len(dur[:-len(unit)].partition(".")[2])
    return 0.5 * 10 ** -decimals * {"us": 1e3, "ms": 1e6, "s": 1e9}[unit]


if s.case("chrome"):
    prog = ["-rounds", "2", "-unit", "5", "-g", "3", "-panic", "1"]
    extra = ["--funcgraph", "main.(*Student).String", "--args", STUDENT_ARGS,
             "--args", "main.add(a, b)", "--rets", "main.add(r)"]
    rt, text = chrome_run(prog, extra, None)
    trees, other, errors = parse_trees(text)
    copy = os.path.join(s.work, "funcgraph.copy")
    rc, doc = chrome_run(prog, extra, "chrome", copy)
    same, _, copy_errors = parse_trees(open(copy).read() if os.path.exists(copy) else "")
    errors += ["GT_FUNCGRAPH_TEXT: " + e for e in copy_errors]
    try:
        trace = json.loads(doc, parse_float=decimal.Decimal)
        events = trace["traceEvents"]
    except (ValueError, KeyError, TypeError) as e:
        trace, events = None, []
        errors.append("not a trace: %s" % e)
    s.check("chrome: the text run and the chrome run work; the file is one JSON document",
            rt.returncode == 0 and rc.returncode == 0 and not errors and trace is not None
            and trace.get("displayTimeUnit") == "ns" and len(trees) == 12 and len(same) == 12,
            "\n".join(errors) + describe(rt) + describe(rc) + doc[:3000])
    # the calls; lineage's slices and flows are cat "lineage" (checked below)
    lin = [e for e in events if e.get("cat") == "lineage"]
    xs = [e for e in events if e.get("ph") == "X" and e.get("cat") != "lineage"]
    calls = [n for t in trees for n in preorder(t)]
    count = lambda names: {f: names.count(f) for f in set(names)}
    s.check("chrome: one complete event per call of the text, per function",
            len(xs) == len(calls) and count([e["name"] for e in xs]) ==
            count([n.func for n in calls]),
            "%s\n%s" % (count([e["name"] for e in xs]), count([n.func for n in calls])))
    s.check("chrome: every event in cat go, of one process, with a ts and a dur",
            all(e.get("cat") == "go" and e.get("pid") == xs[0]["pid"] and
                isinstance(e.get("ts"), decimal.Decimal) and isinstance(e.get("dur"),
                                                                        decimal.Decimal)
                and e["dur"] >= 0 for e in xs) and xs, xs[:3])
    meta = [e for e in events if e.get("ph") == "M"]
    tids = sorted({e["tid"] for e in xs})
    names = {e["tid"]: e["args"]["name"] for e in meta if e["name"] == "thread_name"}
    procs = [e for e in meta if e["name"] == "process_name"]
    go_at = "main.go:%d" % M["go:worker"]
    s.check("chrome: each goroutine's track and the process named, a worker's with the "
            "goroutine and the go statement that made it",
            names == {1: "goroutine 1", **{t: "goroutine %d (go from goroutine 1 at %s)"
                                           % (t, go_at) for t in tids}} and len(procs) == 1 and
            procs[0]["pid"] == xs[0]["pid"] and procs[0]["args"]["name"] == "funcgraph",
            "%s %s" % (names, procs))
    # lineage: for each of the 3 workers a short "go" slice in main's track (goroutine 1)
    # and a flow from it ("s", inside that slice) to the worker's first call ("f", bp e,
    # at its start), one id a flow, as Perfetto's JSON importer binds them
    gos = {e["args"]["goroutine"]: e for e in lin if e["ph"] == "X"}
    starts = {e["id"]: e for e in lin if e["ph"] == "s"}
    ends = {e["id"]: e for e in lin if e["ph"] == "f"}
    first = {t: min(e["ts"] for e in xs if e["tid"] == t) for t in tids}
    s.check("chrome: 3 flows from main's goroutine into the workers' tracks, from the go "
            "statement's slice to each worker's first call",
            sorted(gos) == sorted(starts) == sorted(ends) == tids and
            all(e["tid"] == 1 and e["args"]["go_statement"] == go_at for e in gos.values()) and
            all(starts[i]["tid"] == 1 and gos[i]["ts"] <= starts[i]["ts"] <=
                gos[i]["ts"] + gos[i]["dur"] and starts[i]["name"] == ends[i]["name"] and
                ends[i]["tid"] == i and ends[i].get("bp") == "e" and
                ends[i]["ts"] == first[i] and starts[i]["ts"] < ends[i]["ts"] for i in tids),
            json.dumps(lin, default=str, indent=1))
    goids = sorted({int(n.goid) for n in calls})
    s.check("chrome: the tids are the goids the text shows", tids == goids and len(tids) == 3,
            "chrome tids %s, text goids %s" % (tids, goids))
    bad = []
    by_tid = {}
    for e in xs:
        by_tid.setdefault(e["tid"], []).append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e))
    for tid, iv in by_tid.items():
        for i, (a0, a1, ea) in enumerate(iv):
            for b0, b1, eb in iv[i + 1:]:
                if not (a1 <= b0 or b1 <= a0 or (a0 <= b0 and b1 <= a1) or
                        (b0 <= a0 and a1 <= b1)):
                    bad.append("tid %s: %s [%d, %d] and %s [%d, %d] overlap"
                               % (tid, ea["name"], a0, a1, eb["name"], b0, b1))
    s.check("chrome: the events of a goroutine nest (disjoint or one inside the other)",
            not bad and len(by_tid) == 3, "\n".join(bad[:20]))
    # call by call, per goroutine: the text's preorder is the events' order by (ts, -dur)
    def compare(text_calls, durations):
        bad = []
        for tid, iv in by_tid.items():
            evs = [e for _, _, e in sorted(iv, key=lambda x: (x[0], -(x[1] - x[0])))]
            txt = [n for n in text_calls if int(n.goid) == tid]
            if len(evs) != len(txt):
                bad.append("goid %s: %d events, %d calls" % (tid, len(evs), len(txt)))
                continue
            for e, n in zip(evs, txt):
                a = e.get("args", {})
                want = {"caller": n.caller,
                        "call_site": "%s:%d" % n.site if n.site else None,
                        "returned_at": "%s:%d" % n.ret if n.ret else None,
                        "args": n.args or None, "rets": n.rets, "end": n.mark}
                got = {k: a.get(k) for k in want}
                if e["name"] != n.func or got != want:
                    bad.append("goid %s: %s %s, text %s %s"
                               % (tid, e["name"], got, n.func, want))
                elif durations and n.mark is None:
                    dur = n.close_line[LINE.match(n.close_line).start(3):][:9]
                    diff = abs(ns(e["dur"]) - parse_duration(dur) * 1e6)
                    if diff > text_tolerance_ns(dur) + 1:
                        bad.append("goid %s: %s dur %s us, the text %s (%d ns apart)"
                                   % (tid, n.func, e["dur"], dur.strip(), diff))
                    cpu = n.close_line.partition(" cpu ")[2][:9]
                    got = a.get("oncpu_ns")
                    if not isinstance(got, int) or \
                       abs(got - parse_duration(cpu) * 1e6) > text_tolerance_ns(cpu) + 1:
                        bad.append("goid %s: %s oncpu_ns %s, the text %s"
                                   % (tid, n.func, got, cpu.strip()))
                elif n.mark is not None and "oncpu_ns" in a:
                    bad.append("goid %s: %s did not return, yet oncpu_ns %s"
                               % (tid, n.func, a["oncpu_ns"]))
        return bad
    marked = sum(1 for n in calls if n.mark)
    bad = compare(calls, False)
    s.check("chrome: call by call, the text run's function, arguments, call site, return "
            "line and marks (%d marked)" % marked, not bad and marked == 9, "\n".join(bad[:30]))
    same_calls = [n for t in same for n in preorder(t)]
    bad = compare(same_calls, True)
    s.check("chrome: call by call, the durations and on-CPU times of its own run's text, "
            "within the text's rounding (%d calls)" % len(same_calls), not bad and len(same_calls) == len(xs),
            "\n".join(bad[:30]))
    # no call at all: still a trace
    out = os.path.join(s.work, "empty.json")
    r = s.run(["--funcgraph", "main.add3", "-f", "chrome", "-o", out, "-c", b + " -rounds 0"])
    try:
        empty = json.load(open(out))
    except (OSError, ValueError) as e:
        empty = str(e)
    s.check("chrome: a run without calls writes an empty trace",
            r.returncode == 0 and isinstance(empty, dict) and empty.get("traceEvents") == [],
            "%r\n%s" % (empty, describe(r)))
    # Ctrl-C with calls in progress: the trace is still whole, the open calls marked
    out = os.path.join(s.work, "unfinished.json")
    p = s.start(["-v", "--funcgraph", "main.add*", "-f", "chrome", "-o", out, "-c",
                 b + " -rounds 1 -unit 1000"])
    wait_tracing(p)
    time.sleep(2.5)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    try:
        xs = [e for e in json.load(open(out), parse_float=decimal.Decimal)["traceEvents"]
              if e["ph"] == "X" and e.get("cat") != "lineage"]
    except (OSError, ValueError, KeyError) as e:
        xs = [str(e)]
    ok = (p.returncode == 0 and [e.get("name") for e in xs] == ["main.add", "main.add1",
                                                                 "main.add2"] and
          all(e["args"].get("end") == "unfinished" for e in xs) and
          xs[0]["ts"] <= xs[1]["ts"] <= xs[2]["ts"] and
          xs[0]["ts"] + xs[0]["dur"] == xs[1]["ts"] + xs[1]["dur"] > xs[2]["ts"] + 1000)
    s.check("chrome: Ctrl-C: the trace is whole, the open calls marked unfinished", ok,
            "%s\n%s" % (xs, err))


# file:line through .gopclntab (no DWARF) and in a PIE
if s.case("builds"):
    for label, kw in (("no DWARF (-ldflags=-w)", dict(suffix="-nodwarf", flags=["-ldflags=-w"])),
                      ("PIE", dict(suffix="-pie", flags=["-buildmode=pie"]))):
        bb = s.go_build("funcgraph", **kw)
        r, text, own = run_fg(bb, ["-rounds", "1", "-unit", str(UNIT)])
        trees, other, errors = parse_trees(text)
        bad = check_chain(trees[0], label) if len(trees) == 1 else ["%d trees" % len(trees)]
        s.check("%s: call sites and return lines" % label,
                r.returncode == 0 and not errors and not bad,
                "\n".join(errors + bad) + describe(r) + text)

# -p: attach to a running process; its trees go on while it runs
if s.case("pid"):
    # 8 rounds of ~0.5 s: an ASan gotrace on a loaded machine took ~1.5 s to attach, and
    # 4 rounds then left it one whole tree
    p = subprocess.Popen([b, "-rounds", "8", "-unit", "100"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    time.sleep(0.3)
    r = s.run(["--funcgraph", "main.add2", "--funcgraph", "main.add3", "-p", str(p.pid)])
    note_own_times(p.communicate()[1])
    trees, other, errors = parse_trees(r.stdout)
    # Attached while an add2 ran, gotrace saw that call's add3 start but not add2: the
    # first tree is then that add3 alone, timed as add3 (3 units).
    if trees and trees[0].func == "main.add3" and trees[0].mark is None:
        first, trees = trees[0], trees[1:]
        if not took("add3", first.duration, 300) or first.children:
            errors.append("first tree, add3 in progress at attach: %s ms, %d children"
                          % (first.duration, len(first.children)))
    s.check("-p: trees of the running process until it exits",
            r.returncode == 0 and not errors and len(trees) >= 2 and
            all(t.func == "main.add2" and t.children[0].func == "main.add3" and
                took("add2", t.duration, 500) for t in trees if t.mark is None),
            "\n".join(errors) + "\nadd2 by its own clock: %s us\n" % OWN.get("add2") +
            describe(r))

# Ctrl-C with calls in progress: the open tree is printed, its calls marked unfinished
if s.case("unfinished"):
    p = s.start(["-v", "--funcgraph", "main.add*", "-c", b + " -rounds 1 -unit 1000"])
    wait_tracing(p)
    time.sleep(2.5)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    trees, other, errors = parse_trees(out)
    ok = (p.returncode == 0 and not errors and len(trees) == 1 and trees[0].mark == "unfinished"
          and trees[0].children and trees[0].children[0].mark == "unfinished")
    s.check("Ctrl-C: the open tree printed, its calls marked (unfinished)", ok,
            "\n".join(errors) + out + err)

# Ctrl-C on a live server while a request runs (-p, the request begun after the attach):
# the request's tree whole, its root and the step in progress marked (unfinished), every
# finished step under it; the server answers the request. Eight cuts, each once the
# request has printed "step=I" for its third to tenth step, at a load-proof point. The
# line comes just before step I is called, so a cut right after it may fall before that
# call: the steps before I are then all the tree must hold.
if s.case("midrequest"):
    import threading
    import urllib.request
    srv = subprocess.Popen([s.go_build("fgserve")], stdout=subprocess.PIPE, text=True)
    port = int(srv.stdout.readline().split("=")[1])
    bad = []
    for rnd in range(8):
        tr = s.start(["-v", "--funcgraph", "main.serveWork", "--funcgraph", "main.step",
                      "-p", str(srv.pid)])
        started = False
        for line in tr.stderr:
            if "tracing (started" in line:
                started = True
                break
        answer = []
        req = threading.Thread(target=lambda: answer.append(urllib.request.urlopen(
            "http://127.0.0.1:%d/work?steps=30&id=%d" % (port, rnd), timeout=30)
            .read().decode()))
        req.start()
        cut_at = "id=%d step=%d" % (rnd, 2 + rnd)
        for line in srv.stdout:
            if line.strip() == cut_at:
                break
        time.sleep(0.0025 * rnd)  # at different points of a step's 20 ms
        tr.send_signal(signal.SIGINT)
        out, err = tr.communicate(timeout=30)
        req.join(30)
        trees, other, errors = parse_trees(out)
        t = trees[0] if len(trees) == 1 else None
        kids = t.children if t else []
        whole = (started and t is not None and t.func == "main.serveWork" and
                 t.mark == "unfinished" and len(kids) >= 2 + rnd and
                 all(k.func == "main.step" and k.mark is None and not k.children
                     for k in kids[:-1]) and kids[-1].mark in (None, "unfinished"))
        if not whole or errors or tr.returncode != 0 or answer != ["done 30\n"]:
            bad.append("cut %d: %d trees, status %s, answer %r\n%s%s%s" % (
                rnd, len(trees), tr.returncode, answer, "\n".join(errors), out, err))
    srv.kill()
    srv.wait()
    s.check("Ctrl-C mid-request on a live server (-p): the tree whole, marked unfinished, "
            "eight times", not bad and not bpf_leftovers(), "\n".join(bad) + str(bpf_leftovers()))

# colour on a terminal only, and never with --no-color
if s.case("color"):
    def on_pty(extra):
        master, slave = pty.openpty()
        p = subprocess.Popen([s.gotrace, "--funcgraph", "main.add3", *extra, "-c",
                              b + " -rounds 1 -unit 1"], stdout=slave, stderr=subprocess.PIPE,
                             env=s.env)
        os.close(slave)
        data = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            data += chunk
        p.wait(timeout=60)
        os.close(master)
        return data.decode(errors="replace")
    tty = on_pty([])
    s.check("colour on a terminal", "\033[31mmain.add3\033[0m" in tty, repr(tty))
    s.check("--no-color: none on a terminal", "\033[" not in on_pty(["--no-color"]), "")

if s.case("leftovers"):
    left = bpf_leftovers()
    s.check("nothing left attached", not left, "\n".join(left))

s.finish()
