"""Real programs nobody here wrote (issue 22), built from their modules with DWARF by two
toolchains: the machine's Go and an older release. Each is traced with values by name
and stacks, and every value is checked against an oracle outside gotrace:

- go-httpbin, a net/http server: the request fields gotrace reads at a handler
  (args.r.Method, .URL.Path, .URL.RawQuery, .Host, .RemoteAddr, .ContentLength,
  len(.Header)) against the JSON the server sent back and the client's own socket; the
  handler's goid and ustack against the program's own goroutine dump (SIGQUIT with
  GOTRACEBACK=all), frame by frame with return offsets.
- cobra-cli, a CLI on cobra: (*Command).execute's `a` slice and Use against the command
  line and the program's help text; validateCmdName's argument and result against the
  name it printed and the file it wrote; the ustack against gdb's backtrace.
- gojq, generics and iterators: range-over-func bodies (add-range1), an iterator closure
  of a generic instance (funcAdd.Values[...].func1) and a generic instance
  (binopTypeSwitch[go.shape.interface {}]) probed by name, their values against the
  program's output, the stack at the loop body against gdb's, -l against go tool nm.

The binaries are built once into the toolchain cache (gotool.cache_dir()/realprogs),
never into the repository. The module proxy unreachable: skipped, or failed in CI."""

import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
import urllib.parse

import gomods
from gtlib import (FETCH, PREBUILD, Suite, bpf_leftovers, collect, describe, free_port,
                   gotool)

s = Suite("realprogs")

OLD_RELEASE = "go1.24.13"  # the newest 1.24; the three go.mod files allow it
HTTPBIN = "github.com/mccutchen/go-httpbin/v2/cmd/go-httpbin@v2.20.0"
COBRA_CLI = "github.com/spf13/cobra-cli@v1.3.0"
GOJQ = "github.com/itchyny/gojq/cmd/gojq@v0.12.19"
PROGRAMS = [("go-httpbin", HTTPBIN), ("cobra-cli", COBRA_CLI), ("gojq", GOJQ)]

def realprogs_dir():
    return os.path.join(gotool.cache_dir(), "realprogs")


def build(release, gocmd, name, spec, fetch=False):
    """RELEASE's build of NAME (module spec MODULE/PKG@VERSION) in the cache. cobra-cli's
    module has no version list on the proxy: built from a module that requires it."""
    out = os.path.join(realprogs_dir(), release, name)
    return gomods.install(s, gocmd, name, spec, out, fetch=fetch, wrap=name == "cobra-cli")


def ustack_frames(text, start=0):
    """[(name, offset or None for an inlined frame)] of the first ustack printed in TEXT
    from line START: indented frame lines up to the blank line after them."""
    frames = []
    for line in text.splitlines()[start:]:
        if not line.startswith("    "):
            if frames:
                break
            continue
        f = line.strip()
        if f.endswith(" (inlined)"):
            frames.append((f[:-len(" (inlined)")], None))
        else:
            name, _, off = f.rpartition("+")
            frames.append((name, int(off)))
    return frames


def go_dump(stderr):
    """{goid: [(function, offset or None), ...]} of a Go traceback of all goroutines."""
    gs, cur, frames = {}, None, []
    lines = stderr.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^goroutine (\d+)\b.*:$", line)
        if m:
            cur = int(m.group(1))
            frames = gs.setdefault(cur, [])
            continue
        if cur is None or not line or line.startswith("\t") or line.startswith("created by"):
            if line.startswith("created by"):
                cur = None
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        name = line[:line.rindex("(")] if line.endswith(")") else line
        m = re.search(r" \+0x([0-9a-f]+)", nxt)
        # an inlined frame's args are printed as (...)
        frames.append((name, int(m.group(1), 16) if m and not line.endswith("(...)") else None))
    return gs


def gdb_bt(binary, addr, argv, cwd):
    """gdb's backtrace at ADDR's first hit: [(function, pc or None for inlined)]."""
    gdb = shutil.which("gdb")
    if not gdb:
        return None, "gdb is not installed (scripts/install-deps.sh installs it)"
    r = subprocess.run([gdb, "-nx", "-batch", "-iex", "set auto-load no",
                        "-ex", "break *%#x" % addr, "-ex", "run", "-ex", "bt",
                        "--args", binary, *argv], cwd=cwd,
                       capture_output=True, text=True, timeout=120)
    frames = []
    for line in r.stdout.splitlines():
        m = re.match(r"^#\d+\s+(?:0x([0-9a-f]+) in )?(\S+) \(", line)
        if m:
            frames.append((m.group(2), int(m.group(1), 16) if m.group(1) else None))
    return frames, r.stdout + r.stderr


_syms = {}


def gdb_lines(bt):
    return ["%s %s" % (n, "%#x" % pc if pc is not None else "(inlined)") for n, pc in bt or []]


def symbols(binary):
    """name -> address from the symbol table, as go tool nm reads it."""
    if binary not in _syms:
        r = subprocess.run([s.go, "tool", "nm", binary], capture_output=True, text=True)
        m = {}
        for line in r.stdout.splitlines():
            f = line.split(None, 2)
            if len(f) == 3 and f[1] in "Tt":
                m[f[2]] = int(f[0], 16)
        _syms[binary] = m
    return _syms[binary]


def site_addr(binary, probe):
    r = s.run(["-d", "sites", "--dry-run", "-b", binary, "-e", probe + " {}"])
    m = re.search(r"addr=(0x[0-9a-f]+)", r.stdout + r.stderr)
    return int(m.group(1), 16) if m else None


def same_as_gdb(binary, traced, bt):
    """gotrace's ustack against gdb's backtrace: the same functions down to main.main
    (where gdb stops), and each machine frame's pc the same. Frames that share one pc
    (calls inlined into a function) are grouped differently: gotrace gives the offset to
    the outermost, the real function, gdb the pc to the innermost."""
    names = [n for n, _ in traced]
    if "main.main" not in names or not bt:
        return False
    traced = traced[:names.index("main.main") + 1]
    if [n for n, _ in traced] != [n for n, _ in bt]:
        return False
    syms, first = symbols(binary), 0
    for i, (name, off) in enumerate(traced):
        if off is None:
            continue
        # traced[first..i] is one machine frame: gdb's pc on its first, none on the rest
        if bt[first][1] != syms.get(name, -1) + off or \
                any(pc is not None for _, pc in bt[first + 1:i + 1]):
            return False
        first = i + 1
    return first == len(traced)


def trace_cmd(binary, argv, script, cwd):
    """gotrace -c BINARY ARGV with SCRIPT: (CompletedProcess, gotrace's output). gotrace
    writes to a file (-o) so that the program's own stdout stays apart from it (both on
    one pipe interleave within a line)."""
    out = os.path.join(cwd, "gotrace.out")
    r = s.run(["-o", out, "-c", " ".join([binary] + argv), "-e", script], cwd=cwd)
    try:
        with open(out) as f:
            traced = f.read()
    except OSError:
        traced = ""
    r.stdout += "--- gotrace -o\n" + traced
    return r, traced


def show(*parts):
    return "\n".join(str(p) for p in parts)


# -- go-httpbin ---------------------------------------------------------------------
HB = "github.com/mccutchen/go-httpbin/v2/httpbin.(*HTTPBin)."
HB_SCRIPT = (
    'go:"%sAnything":entry { printf("REQ goid=%%ld method=%%s path=%%s query=%%s host=%%s '
    'remote=%%s nhdr=%%ld clen=%%ld\\n", goid, args.r.Method, args.r.URL.Path, '
    'args.r.URL.RawQuery, args.r.Host, args.r.RemoteAddr, len(args.r.Header), '
    'args.r.ContentLength); }\n'
    'go:"%sDelay":entry { printf("DELAY goid=%%ld path=%%s\\n", goid, args.r.URL.Path); '
    'print(ustack); printf("END\\n"); }\n' % (HB, HB))

# method, path?query, extra headers, body
HB_REQUESTS = [
    ("GET", "/anything/alpha?x=1&y=two", {"X-Gt-One": "1", "X-Gt-Two": "2"}, None),
    ("POST", "/anything/beta", {"Content-Type": "text/plain"}, b"hello, gotrace"),
    ("DELETE", "/anything/gamma/δ?z", {}, None),
]


def workdir(rel, name):
    """WORK/realprogs/REL-NAME, emptied."""
    d = os.path.join(s.work, "realprogs", "%s-%s" % (rel, name))
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def request(port, method, target, headers, body, timeout=20):
    """(response JSON, the client's port) over a connection of its own."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.connect()
        own = c.sock.getsockname()[1]
        c.request(method, urllib.parse.quote(target, safe="/?&="), body=body,
                  headers=headers)
        return json.loads(c.getresponse().read()), own
    finally:
        c.close()


def read_until(proc, pred, timeout):
    """Lines of proc.stdout up to the first for which PRED holds (or EOF / TIMEOUT)."""
    out, deadline = [], time.time() + timeout
    box = []

    def reader():
        while True:
            line = proc.stdout.readline()
            box.append(line)
            if not line or pred(line):
                return
    t = threading.Thread(target=reader, daemon=True)
    t.start()
    t.join(max(0.0, deadline - time.time()))
    out.extend(l for l in box if l)
    return out


def httpbin(rel, binary):
    tag = "%s go-httpbin" % rel
    port = free_port()
    work = workdir(rel, "httpbin")
    errf = open(os.path.join(work, "stderr"), "w+")
    prog = subprocess.Popen([binary, "-host", "127.0.0.1", "-port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=errf,
                            env=dict(os.environ, GOTRACEBACK="all"))
    gt = None
    try:
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                request(port, "GET", "/get", {}, None, timeout=2)
                break
            except OSError:
                time.sleep(0.1)
        gt = s.start(["-B", "line", "-p", str(prog.pid), "-e", HB_SCRIPT])
        head = read_until(gt, lambda l: l.startswith("Attaching"), 20)
        if not s.check("%s: attached to the running server" % tag,
                       head and head[-1].startswith("Attaching"), "".join(head)):
            return
        goids = []
        for method, target, headers, body in HB_REQUESTS:
            try:
                resp, own = request(port, method, target, headers, body)
            except (OSError, ValueError, http.client.HTTPException) as e:
                s.check("%s: %s %s answered" % (tag, method, target), False, e)
                return
            lines = read_until(gt, lambda l: l.startswith("REQ "), 10)
            got = {}
            if lines and lines[-1].startswith("REQ "):
                got = dict(kv.split("=", 1) for kv in lines[-1].split()[1:] if "=" in kv)
            u = urllib.parse.urlsplit(resp["url"])
            # r.Header holds no Host; the server's echo lists it among the headers
            want = {"method": resp["method"], "path": urllib.parse.unquote(u.path),
                    "query": u.query, "host": u.netloc,
                    "remote": "127.0.0.1:%d" % own, "nhdr": str(len(resp["headers"]) - 1),
                    "clen": str(len((resp.get("data") or "").encode()))}
            s.check("%s: %s %s: args.r fields are what the server echoed and the client's "
                    "socket" % (tag, method, target.split("?")[0]),
                    got and all(got.get(k) == v for k, v in want.items()),
                    show("traced: %s" % got, "oracle: %s" % want, "".join(lines)))
            goids.append(got.get("goid"))
        s.check("%s: one goroutine per connection: %d distinct goids" % (tag, len(goids)),
                None not in goids and len(set(goids)) == len(goids), goids)

        # A request held in the handler; then the program's own dump of every goroutine
        t = threading.Thread(target=lambda: _ignore(request, port, "GET", "/delay/5", {},
                                                    None), daemon=True)
        t.start()
        lines = read_until(gt, lambda l: l.startswith("END"), 15)
        text = "".join(lines)
        m = re.search(r"DELAY goid=(\d+) path=(\S+)", text)
        traced = ustack_frames(text)
        time.sleep(0.3)  # the handler reaches its select
        prog.send_signal(signal.SIGQUIT)
        prog.wait(timeout=20)
        out, err = collect(gt, 20)
        errf.seek(0)
        dump = go_dump(errf.read())
        mine = [g for g, fr in dump.items() if any(n == HB + "Delay" for n, _ in fr)]
        s.check("%s: the handler's goid is the goroutine the dump shows in Delay" % tag,
                m and len(mine) == 1 and int(m.group(1)) == mine[0] and
                m.group(2) == "/delay/5", show(text, "dump goroutines in Delay: %s" % mine))
        if mine:
            theirs = dump[mine[0]]
            names = [n for n, _ in theirs]
            theirs = theirs[names.index(HB + "Delay"):]
            # the top frame differs (the probe vs. the select it waits in); the callers'
            # return offsets are the same instructions
            ok = (len(traced) == len(theirs) and traced[0][0] == theirs[0][0] and
                  all(a == b for a, b in zip(traced[1:], theirs[1:])) and
                  "net/http.(*conn).serve" in [n for n, _ in traced])
            s.check("%s: ustack at Delay is the dump's stack, net/http's serving chain "
                    "with offsets (%d frames)" % (tag, len(traced)), ok,
                    show("traced:", *traced, "dump:", *theirs))
        s.check("%s: gotrace -p ends with the server" % tag, gt.returncode == 0,
                show(gt.returncode, out, err))
    finally:
        for p in (prog, gt):
            if p and p.poll() is None:
                p.kill()
                p.wait()
        errf.close()


def _ignore(f, *a):
    try:
        f(*a)
    except (OSError, ValueError, http.client.HTTPException):
        pass


# -- cobra-cli -----------------------------------------------------------------------
CC = "github.com/spf13/cobra-cli/cmd.validateCmdName"
CC_SCRIPT = (
    'go:"github.com/spf13/cobra.(*Command).execute":entry { printf("EXEC use=%%s n=%%ld '
    'a0=%%s a1=%%s a2=%%s\\n", args.c.Use, len(args.a), args.a[0], args.a[1], args.a[2]); }\n'
    'go:"%s":entry { printf("SRC %%s\\n", args.source); print(ustack); printf("END\\n"); }\n'
    'go:"%s":return { printf("RET %%s\\n", retval); }\n' % (CC, CC))


def cobra_cli(rel, binary):
    tag = "%s cobra-cli" % rel
    work = workdir(rel, "cobra")
    os.mkdir(os.path.join(work, "cmd"))
    argv = ["add", "my-fancy_cmd", "--parent", "rootCmd"]
    r, tr = trace_cmd(binary, argv, CC_SCRIPT, work)
    helptext = subprocess.run([binary, "add", "--help"], capture_output=True,
                              text=True).stdout
    usage = re.search(r"Usage:\n\s+\S+ (.*) \[flags\]", helptext)
    m = re.search(r"EXEC use=(.*) n=(\d+) a0=(\S*) a1=(\S*) a2=(\S*)\n", tr)
    s.check("%s: (*Command).execute's args.a is the command line after 'add', args.c.Use "
            "the usage line of --help" % tag,
            r.returncode == 0 and m and usage and m.group(1) == usage.group(1) and
            [m.group(2), m.group(3), m.group(4), m.group(5)] == ["3"] + argv[1:],
            show(describe(r), helptext))
    made = re.search(r"^(\S+) created at (.*)$", r.stdout, re.M)
    src = re.search(r"^SRC (.*)$", tr, re.M)
    ret = re.search(r"^RET (.*)$", tr, re.M)
    s.check("%s: validateCmdName's args.source is argv[2], retval the name it printed "
            "and wrote cmd/NAME.go for" % tag,
            made and src and ret and src.group(1) == argv[1] and
            ret.group(1) == made.group(1) and made.group(2) == work and
            os.path.exists(os.path.join(work, "cmd", made.group(1) + ".go")),
            describe(r))
    traced = ustack_frames(tr, tr[:src.end()].count("\n") if src else 0)
    shutil.rmtree(os.path.join(work, "cmd"))
    os.mkdir(os.path.join(work, "cmd"))
    addr = site_addr(binary, 'go:"%s":entry' % CC)
    bt, log = gdb_bt(binary, addr, argv, work) if addr else (None, "no site address")
    s.check("%s: ustack at validateCmdName is gdb's backtrace (cobra's execute chain, "
            "inlined Execute frames, return addresses)" % tag,
            same_as_gdb(binary, traced, bt),
            show("traced:", *traced, "gdb:", *gdb_lines(bt), log[-3000:]))


# -- gojq ----------------------------------------------------------------------------
GQ = "github.com/itchyny/gojq."
GQ_VALUES = GQ + "funcAdd.Values[go.shape.[]interface {},go.shape.interface {}].func1"
GQ_BINOP = GQ + "binopTypeSwitch[go.shape.interface {}]"


def gojq(rel, binary):
    tag = "%s gojq" % rel
    work = workdir(rel, "gojq")

    def put(name, text):
        with open(os.path.join(work, name), "w") as f:
            f.write(text)
    put("join.jq", 'split(",") | join("+")')
    put("join.json", '"alpha,beta,gamma"\n')
    put("add.jq", "[.[0] + .[1], add]")
    put("add.json", "[40, 2, 7]\n")

    # generic instances and range-over-func bodies are listed under Go's own names
    r = s.run(["-l", "go:%s*" % GQ, "-b", binary])
    syms = symbols(binary)
    want = [GQ + "add-range1", GQ_VALUES, GQ_BINOP, GQ + "binopTypeSwitch[go.shape.int]"]
    s.check("%s: -l lists the range body, generic instances and their closures as go tool "
            "nm names them" % tag,
            all(w in syms for w in want) and all(
                any(l == w or l.startswith(w + "(") for l in r.stdout.replace("go:", "")
                    .splitlines()) for w in want), show(want, r.stdout[:3000]))

    # join: its iterator closure yields separator and element by turns into add's loop
    argv = ["-r", "-f", "join.jq", "join.json"]
    r, tr = trace_cmd(binary, argv,
                      'go:"%sadd-range1":entry { printf("X %%v\\n", args.x); '
                      '@n++; if (@n == 1) { print(ustack); printf("END\\n"); } }\n'
                      'go:"%sfuncJoin.func1":entry { printf("ITER\\n"); }' % (GQ, GQ), work)
    xs = re.findall(r"^X (.*)$", tr, re.M)
    out = r.stdout.split("\n", 1)[0]
    s.check("%s: add-range1's args.x, joined, is the program's output" % tag,
            r.returncode == 0 and out.startswith("alpha") and "".join(xs) == out and
            len(xs) == 6 and tr.count("ITER\n") == 1, describe(r))
    traced = ustack_frames(tr)
    addr = site_addr(binary, 'go:"%sadd-range1":entry' % GQ)
    bt, log = gdb_bt(binary, addr, argv, work) if addr else (None, "no site address")
    s.check("%s: ustack at the range-over-func body is gdb's backtrace (body, iterator "
            "closure, add, funcJoin ...)" % tag,
            same_as_gdb(binary, traced, bt) and traced[1][0] == GQ + "funcJoin.func1",
            show("traced:", *traced, "gdb:", *gdb_lines(bt), log[-3000:]))

    # add over slices.Values (a generic iterator) and + on interfaces (a generic instance)
    argv = ["-c", "-f", "add.jq", "add.json"]
    r, tr = trace_cmd(binary, argv,
                      'go:"%s":entry { printf("BIN %%v %%v\\n", args.l, args.r); }\n'
                      'go:"%s":return { printf("SUM %%v\\n", retval); }\n'
                      'go:"%s":entry { printf("VALUES\\n"); }\n'
                      'go:"%sadd-range1":entry { printf("X %%v\\n", args.x); }'
                      % (GQ_BINOP, GQ_BINOP, GQ_VALUES, GQ), work)
    res = [json.loads(l) for l in r.stdout.split("--- gotrace -o")[0].splitlines()
           if l.startswith("[")]
    bins = re.findall(r"^BIN (\S+) (\S+)$", tr, re.M)
    sums = re.findall(r"^SUM (\S+)$", tr, re.M)
    xs = re.findall(r"^X (\S+)$", tr, re.M)
    inp = [40, 2, 7]
    s.check("%s: %s's args.l, args.r and retval add up to what the program printed"
            % (tag, GQ_BINOP.split(".", 2)[-1]),
            r.returncode == 0 and len(res) == 1 and bins and len(bins) == len(sums) and
            [int(x) for x in bins[0]] == inp[:2] and int(sums[0]) == res[0][0] and
            int(sums[-1]) == res[0][1], describe(r))
    s.check("%s: slices.Values's closure runs once for add, and the loop body sees the "
            "input's elements" % tag,
            tr.count("VALUES\n") == 1 and [int(x) for x in xs] == inp, describe(r))


# -- the suite -----------------------------------------------------------------------
os.makedirs(realprogs_dir(), exist_ok=True)
if FETCH:  # the modules, once for every release (one module cache)
    for name, spec in PROGRAMS:
        try:
            build(gotool.version(s.go), s.go, name, spec, fetch=True)
        except RuntimeError as e:
            s.check("%s: modules fetched" % spec, False, e)
    s.finish()
releases = [(gotool.version(s.go), s.go)]
old = gotool.toolchain(OLD_RELEASE)
if old is None:
    if any(w in gotool.last_error for w in gomods.NET_ERRORS):
        s.unavailable("module proxy unreachable: " + gotool.last_error)
    s.check("%s toolchain" % OLD_RELEASE, False, gotool.last_error)
else:
    releases.append((OLD_RELEASE, old))

for rel, gocmd in releases:
    for name, spec in PROGRAMS:
        if not (s.case(name) or s.case(rel)):
            continue
        try:
            b = build(rel, gocmd, name, spec)
        except RuntimeError as e:
            s.check("%s %s: builds" % (rel, spec), False, e)
            continue
        if not PREBUILD:
            {"go-httpbin": httpbin, "cobra-cli": cobra_cli, "gojq": gojq}[name](rel, b)
if PREBUILD:
    s.finish()

left = bpf_leftovers()
s.check("nothing left attached", not left, left)
s.finish()
