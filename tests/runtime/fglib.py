"""What test_funcgraph.py and test_fgoutput.py share: tests/go/funcgraph's markers, the
text trees' parser, a run of --funcgraph with the program's own clock kept, and the demo
chain's check. init(SUITE) first."""

import os
import re
import subprocess

from gtlib import TESTS, matches_own, own_times

s = None


def init(suite):
    global s
    s = suite

SRC = os.path.join(TESTS, "go", "funcgraph", "main.go")
# ms: add1 sleeps 1 unit, add2 2, add3 3. Durations must be within 5 % of the sleeps: a
# unit this long keeps a late wake-up on a busy machine (a few ms) inside that.
UNIT = 50
STUDENT_ARGS = "main.(*Student).String(s.name=*+0(%ax):c64, s.age=+16(%ax):s64)"
FUNCS = ["main.add", "main.add1", "main.add2", "main.add3", "main.add.func1",
         "main.(*Student).String", "main.serveWork", "main.step",
         # tests/go/golines: inlined copies
         "main.main", "main.work", "main.small", "main.tiny", "main.both", "main.apply",
         "main.main.func1", "main.main.func2", "main.Map[go.shape.int,go.shape.string]",
         "main.Map[go.shape.string,go.shape.int]"]


def markers():
    """'call:add' -> line of `// @call:add` in the Go source, 'ret:add' likewise."""
    out = {}
    with open(SRC) as f:
        for n, line in enumerate(f, 1):
            for m in re.finditer(r"@(call|ret|go):(\w+)", line):
                out["%s:%s" % m.groups()] = n
    return out


M = markers()
SHORT = {"main.add": "add", "main.add1": "add1", "main.add2": "add2", "main.add3": "add3",
         "main.(*Student).String": "String"}

LINE = re.compile(r"^(\d\d:\d\d:\d\d\.\d{6}) goid=(\d+) (.{9}) (.*)$")
# the on-CPU column after the duration ("cpu" and 9 characters, blank on an opening
# line), unless --no-oncpu
CPU_WIDTH = 14
BANNER_RE = re.compile(r"^Attaching \d+ probes?\.\.\.\n")
# } FUNC [(RESULTS)] [FILE:LINE] [(MARK)]
CLOSE = re.compile(r"^\} (\S+)(?: \((.*?)\))??(?: (\S+):(\d+))?"
                   r"(?: \((panic: no return|unfinished)\))?$")


def parse_duration(text):
    text = text.strip()
    for unit, mult in (("us", 1e-3), ("ms", 1.0), ("s", 1e3)):
        if text.endswith(unit):
            return float(text[:-len(unit)]) * mult
    return None


class Node:
    def __init__(self, **kw):
        self.__dict__.update(kw)
        self.children = []


def parse_trees(text, oncpu=None):
    """Trees printed as text -> (list of root Nodes, list of other lines, errors). A tree
    must be contiguous: its lines, one goroutine's, nested like its braces. ONCPU: whether
    the lines have the on-CPU column (None: whether the first tree's root line, of depth 0,
    has its blank)."""
    trees, other, errors = [], [], []
    stack = []
    if oncpu is None:
        first = next((m for m in map(LINE.match, text.splitlines()) if m), None)
        oncpu = bool(first) and first.group(4).startswith(" " * CPU_WIDTH)
    for line in text.splitlines():
        m = LINE.match(line)
        if not m:
            if stack:
                errors.append("a tree is interrupted by: %r" % line)
            other.append(line)
            continue
        ts, goid, dur, rest = m.groups()
        cpu = None
        if oncpu and rest.startswith("cpu "):
            cpu, rest = rest[4:CPU_WIDTH - 1], rest[CPU_WIDTH:]
        elif oncpu and rest.startswith(" " * CPU_WIDTH):
            rest = rest[CPU_WIDTH:]
        elif oncpu:
            errors.append("no on-CPU column: %r" % line)
        body = rest.lstrip(" ")
        depth, odd = divmod(len(rest) - len(body), 2)
        if odd:
            errors.append("odd indentation: %r" % line)
        if stack and stack[0].goid != goid:
            errors.append("goroutine %s inside the tree of %s: %r" % (goid, stack[0].goid, line))
        if body.startswith("} "):
            c = CLOSE.match(body)
            if not c or not stack:
                errors.append("unexpected close: %r" % line)
                continue
            node = stack.pop()
            func, rets, file, ln, mark = c.groups()
            if func != node.func or depth != node.depth:
                errors.append("close of %s at depth %d does not match %s at %d: %r"
                              % (func, depth, node.func, node.depth, line))
            node.duration = parse_duration(dur)
            node.oncpu = parse_duration(cpu) if cpu else None
            if node.duration is not None and (node.oncpu is None) == oncpu:
                errors.append("on-CPU time %s with --%soncpu: %r"
                              % ("missing" if oncpu else "shown", "" if oncpu else "no-", line))
            node.ret = (file, int(ln)) if file else None
            node.mark = mark
            node.rets = rets
            node.close_line = line
            if not stack:
                trees.append(node)
            continue
        if dur.strip():
            errors.append("duration on an opening line: %r" % line)
        # an inlined copy's start: a leaf closed on its own line, with no duration
        inlined = body.endswith(" } (inlined)")
        if inlined:
            body = body[:-len(" } (inlined)")]
        left, _, right = body.rpartition(" { ")
        func = max((f for f in FUNCS if left.startswith(f + "(")), key=len, default=None)
        if func is None or not left.endswith(")"):
            errors.append("cannot parse: %r" % line)
            continue
        parts = right.split()
        caller = parts[0] if parts else None
        site = parts[1].rsplit(":", 1) if len(parts) > 1 else None
        node = Node(func=func, args=left[len(func) + 1:-1], depth=depth, goid=goid, ts=ts,
                    caller=caller, site=(site[0], int(site[1])) if site else None,
                    duration=None, ret=None, mark=None, open_line=line)
        if depth != len(stack):
            errors.append("depth %d with %d open calls: %r" % (depth, len(stack), line))
        if stack:
            stack[-1].children.append(node)
        if inlined:
            node.mark = "inlined"
            if not stack:
                trees.append(node)
        else:
            stack.append(node)
    if stack:
        errors.append("a tree is not closed: %s" % stack[0].open_line)
    return trees, other, errors


def preorder(n):
    yield n
    for c in n.children:
        yield from preorder(c)


def wait_tracing(p):
    """Until gotrace -v says the probes are attached and the -c command runs (which may
    take seconds under emulation): the program's own clock starts there."""
    for line in p.stderr:
        if "tracing (started" in line:
            return


def program_output(binary, args):
    r = subprocess.run([binary] + args, capture_output=True, text=True, timeout=60)
    return r.stdout.splitlines()


def run_fg(binary, prog_args, extra=(), timeout=90):
    """gotrace --funcgraph main.add* ... -c 'BINARY ARGS' -o FILE: (result, trace text,
    the program's own stdout lines)."""
    out = os.path.join(s.work, "funcgraph.out")
    if os.path.exists(out):
        os.unlink(out)
    args = ["--funcgraph", "main.add*", *extra, "-o", out, "-c", " ".join([binary] + prog_args)]
    r = s.run(args, timeout=timeout)
    note_own_times(r.stderr)
    text = open(out).read() if os.path.exists(out) else ""
    return r, text, r.stdout.splitlines()


OWN = {}    # "add1" -> [us, ...]: the last run's calls by the program's own clock


def note_own_times(stderr):
    OWN.clear()
    OWN.update(own_times(stderr))


def took(name, ms, nominal):
    """A traced duration (ms) of main.NAME is right when it is at least the nominal
    sleep and matches some call of NAME the program timed itself (gtlib)."""
    return (ms is not None and ms >= nominal and
            any(matches_own(ms * 1000, us) for us in OWN.get(name, ())))


def load():
    with open("/proc/loadavg") as f:
        return "load average: " + f.read().strip()


def check_chain(root, label, panic=False):
    """add -> add1 -> add2 -> add3 with call sites and durations (panic: add1..add3 are
    marked, add returns). Returns a list of problems."""
    bad = []

    def want(cond, what):
        if not cond:
            bad.append("%s: %s" % (label, what))

    want(root.func == "main.add" and root.depth == 0, "root is %s" % root.func)
    want(root.caller == "main.doSomething" and root.site == ("main.go", M["call:add"]),
         "add called from %s %s" % (root.caller, root.site))
    want(root.ret == ("main.go", M["ret:add"]) and root.mark is None,
         "add returns at %s %s" % (root.ret, root.mark))
    chain = [n for n in root.children if n.func == "main.add1"]
    want(len(chain) == 1, "add1 calls under add: %d" % len(chain))
    node, caller = (chain[0] if chain else None), "add"
    expected = {"main.add1": 6 * UNIT, "main.add2": 5 * UNIT, "main.add3": 3 * UNIT}
    for name in ("main.add1", "main.add2", "main.add3"):
        if node is None:
            break
        short = SHORT[name]
        want(node.func == name, "expected %s, got %s" % (name, node.func))
        want(node.caller == "main." + caller and node.site == ("main.go", M["call:" + short]),
             "%s called from %s %s" % (name, node.caller, node.site))
        if panic:
            want(node.mark == "panic: no return" and node.duration is None and node.ret is None,
                 "%s closed with %r, duration %s" % (name, node.mark, node.duration))
        else:
            want(node.mark is None and node.ret == ("main.go", M["ret:" + short]),
                 "%s returns at %s" % (name, node.ret))
            want(took(short, node.duration, expected[name]),
                 "%s took %s ms, slept %d ms, its own clock said %s us" % (
                     name, node.duration, expected[name], sorted(OWN.get(short, ()))))
        nxt = [n for n in node.children if n.func.startswith("main.add")
               and n.func != "main.add.func1"]
        caller, node = short, (nxt[0] if nxt else None)
        if name != "main.add3":
            want(len(nxt) == 1, "%s has %d add* children" % (name, len(nxt)))
    if not panic:
        # add holds add1 (and, in a PIE, a first call's page faults before it)
        sub = chain[0].duration if chain and chain[0].duration else 6 * UNIT
        want(root.duration is not None and sub <= root.duration <= sub * 1.2,
             "add took %s ms, its add1 %s ms" % (root.duration, sub))
    return bad


def adds_and_students(trees):
    adds = [t for t in trees if t.func == "main.add"]
    students = [t for t in trees if t.func == "main.(*Student).String"]
    return adds, students
