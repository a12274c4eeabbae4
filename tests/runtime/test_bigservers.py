"""Servers at full size (issue 42), built from their modules with the machine's Go into the
toolchain cache (gotool.cache_dir()/bigservers), never into the repository:

- Caddy v2.11.9 (~183k functions, 80 MB with DWARF), serving files and reverse-proxying
  to a backend of Python's and to a dead port. Checked against go tool nm (-l's names,
  each probeable, generic closures included; --funcgraph over a package with one), and,
  on the running server (-p), against its own JSON logs and the client: the request's
  URI, remote address and User-Agent read by name (a map indexed by key), print() of
  the whole *http.Request, the dial error's text, the files' bytes while gotrace
  attaches and detaches, and --funcgraph's calls against the requests made.
- The NATS server v2.15.3, spoken to over its text protocol by this script: the
  CONNECT, SUB and PUB arguments and the message bodies its parser hands on, read by
  name, against what was sent and what the subscriber received; every function's entry
  (`go:*:entry`) loaded.

The module proxy unreachable: skipped, or failed in CI (GT_REQUIRE_BPF=1)."""

import functools
import hashlib
import http.client
import http.server
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time

import gomods
from gtlib import (FETCH, PREBUILD, Suite, bpf_leftovers, collect, describe, free_port,
                   gotool, stop_server)

s = Suite("bigservers")

CADDY = "github.com/caddyserver/caddy/v2/cmd/caddy@v2.11.9"
NATS = "github.com/nats-io/nats-server/v2@v2.15.3"
SERVERS = [("caddy", CADDY), ("nats-server", NATS)]

CH = "github.com/caddyserver/caddy/v2/modules/caddyhttp"
RP = CH + "/reverseproxy"
NS = "github.com/nats-io/nats-server/v2/server"


def build(name, spec, fetch=False):
    out = os.path.join(gotool.cache_dir(), "bigservers", gotool.version(s.go), name)
    # Caddy compiles ~1,000 packages: ~4 CPU-minutes, longer at nice 10 beside the suite
    return gomods.install(s, s.go, name, spec, out, fetch=fetch, timeout=2400)


def workdir(name):
    d = os.path.join(s.work, "bigservers", name)
    subprocess.run(["rm", "-rf", d])
    os.makedirs(d)
    return d


def wait_port(port, proc, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.1)
    return False


def nm_funcs(binary):
    """The function symbols go tool nm lists: {name: address}."""
    r = subprocess.run([s.go, "tool", "nm", binary], capture_output=True, text=True)
    return {f[2]: int(f[0], 16) for f in (l.split(None, 2) for l in r.stdout.splitlines())
            if len(f) == 3 and f[1] in "Tt"}


def listed_names(text, syms):
    """The function names of -l's lines (`go:NAME(PARAMS) RESULTS`, `go:NAME (inlined)`):
    where a line has a signature, NAME is the symbol it starts with (a name may hold
    parentheses and brackets itself: `(*T).M`, `F[go.shape.func(int)]`)."""
    names = []
    for line in text.splitlines():
        line = line[len("go:"):] if line.startswith("go:") else line
        if line.endswith(" (inlined)"):
            names.append(line[:-len(" (inlined)")])
            continue
        cut = [i for i, c in enumerate(line) if c == "(" and line[:i] in syms]
        names.append(line[:cut[-1]] if cut else line)
    return names


def attach_lines(p, until="Attaching", timeout=120):
    """gotrace's stdout lines up to the first that starts with UNTIL (or its end)."""
    lines, box = [], []

    def reader():
        for line in p.stdout:
            box.append(line)
            if line.startswith(until):
                return
    t = threading.Thread(target=reader, daemon=True)
    t.start()
    t.join(timeout)
    lines.extend(box)
    return lines


# -v's figures: "N site(s), M program(s), ..."
STATS = re.compile(r"^gotrace: (\d+) site\(s\), (\d+) program\(s\)", re.M)


def stop(p, timeout=30):
    p.send_signal(signal.SIGINT)
    return collect(p, timeout)


# -- Caddy: the binary alone ---------------------------------------------------------
def caddy_static(binary):
    syms = nm_funcs(binary)
    # a package whose method has a generic closure: -l against go tool nm, then the
    # call graph over it (finding 1: "no function matches '...Keys[go.shape...].func1'")
    pat = CH + ".(*ServerLogConfig).*"
    r = s.run(["-l", pat, "-b", binary])
    listed = listed_names(r.stdout, syms)
    want = sorted(n for n in syms if n.startswith(CH + ".(*ServerLogConfig)."))
    generic = [n for n in want if "[go.shape." in n]
    s.check("caddy: -l %s lists go tool nm's functions, a generic closure among them" % pat,
            r.returncode == 0 and generic and set(want) <= set(listed), describe(r))
    r = s.run(["-v", "--dry-run", "--funcgraph", pat, "-b", binary], timeout=300)
    s.check("caddy: --funcgraph over it loads, the generic closure traced",
            r.returncode == 0 and generic and all('"%s":entry' % g in r.stderr for g in generic),
            describe(r))

    # every name -l prints is probeable: one probe each, over a whole package
    r = s.run(["-l", RP + ".*", "-b", binary])
    names = listed_names(r.stdout, syms)
    script = "".join('go:"%s":entry { @[probe] = count(); }\n' % n for n in names)
    path = os.path.join(workdir("caddy-static"), "every.gt")
    with open(path, "w") as f:
        f.write(script)
    v = s.run(["-v", "--dry-run", "-b", binary, path], timeout=600)
    m = STATS.search(v.stderr)
    s.check("caddy: each of the %d functions -l lists under %s.* is probeable by its name, "
            "go tool nm's among them" % (len(names), RP),
            r.returncode == 0 and v.returncode == 0 and len(names) > 300 and m and
            int(m.group(2)) == len(names) and
            {n for n in syms if n.startswith(RP + ".")} <= set(names),
            describe(v)[-3000:])

    # every function's entry (finding 4): each function go tool nm lists has its site,
    # but for C's (cgo) and the text markers; none skipped unsaid
    r = s.run(["-v", "-d", "sites", "--dry-run", "-b", binary, "-e",
               "go:*:entry { @[probe] = count(); }"], timeout=600)
    sites = re.findall(r"^  site \d+ go:(.*):entry \S+ addr=(\S+) off=\S+$", r.stdout, re.M)
    sited = {n for n, _ in sites}
    addrs = {int(a, 16) for _, a in sites}
    # an alias (another name at a sited address) is probed under the first name
    unsaid = sorted(n for n in set(syms) - sited if "." in n and "(.text)" not in n and
                    n not in ("runtime.text", "runtime.etext") and syms[n] not in addrs and
                    not n.startswith("go:") and n not in r.stderr)
    s.check("caddy: go:*:entry loads with a site for each of go tool nm's %d functions "
            "(%d sites with inlined copies), any skipped said" % (len(syms), r.stdout.count("  site ")),
            r.returncode == 0 and not unsaid and len(sited) > len(syms) // 2,
            "%s\nnot sited, not said: %s" % (r.stderr[-3000:], unsaid[:20]))


# -- Caddy: the running server -------------------------------------------------------
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass


def caddy_live(binary):
    work = workdir("caddy-live")
    www = os.path.join(work, "www")
    os.makedirs(www)
    blob = os.urandom(1 << 20)
    with open(os.path.join(www, "blob.bin"), "wb") as f:
        f.write(blob)
    with open(os.path.join(www, "index.html"), "w") as f:
        f.write("hello from caddy\n")
    backend = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                              functools.partial(Quiet, directory=www))
    threading.Thread(target=backend.serve_forever, daemon=True).start()
    port = free_port()
    dead = free_port()  # nothing listens there
    with open(os.path.join(work, "Caddyfile"), "w") as f:
        f.write("""{
\tadmin off
\tauto_https off
\tpersist_config off
}
:%d {
\tlog {
\t\toutput stderr
\t\tformat json
\t}
\thandle_path /files/* {
\t\troot * %s
\t\tfile_server
\t}
\thandle_path /dead/* {
\t\treverse_proxy 127.0.0.1:%d
\t}
\thandle_path /proxy/* {
\t\treverse_proxy 127.0.0.1:%d
\t}
}
""" % (port, www, dead, backend.server_address[1]))
    errf = open(os.path.join(work, "caddy.log"), "w+")
    env = dict(os.environ, HOME=work, XDG_DATA_HOME=work, XDG_CONFIG_HOME=work)
    caddy = subprocess.Popen([binary, "run", "--config", "Caddyfile", "--adapter", "caddyfile"],
                             cwd=work, stdout=subprocess.DEVNULL, stderr=errf, env=env)
    try:
        if not s.check("caddy: serves", wait_port(port, caddy), "caddy exited"):
            return
        for extra, tag in (["--no-cache"], " (--no-cache)"), ([], ""), ([], " (again)"):
            caddy_values(caddy, port, errf, extra, tag)
        caddy_attach_detach(caddy, port, blob)
        caddy_funcgraph(caddy, port)
    finally:
        stop_server(caddy)
        backend.shutdown()


def get(port, target, ua="gotrace-test/1", timeout=30):
    """(status, body, the client's port)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.connect()
        own = c.sock.getsockname()[1]
        c.request("GET", target, headers={"User-Agent": ua})
        r = c.getresponse()
        return r.status, r.read(), own
    finally:
        c.close()


def caddy_log(errf, since=0):
    """Caddy's JSON log records written from offset SINCE on."""
    errf.flush()
    errf.seek(since)
    out = []
    for line in errf.read().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return out


CADDY_SCRIPT = (
    'BEGIN { printf("READY\\n"); }\n'
    'go:"%s.(*Server).ServeHTTP":entry {\n'
    '  printf("REQ uri=%%s remote=%%s ua=%%s\\n", args.r.RequestURI, args.r.RemoteAddr,\n'
    '         args.r.Header["User-Agent"][0]);\n'
    '  print(args.r);\n'
    '}\n'
    'go:"net.(*Dialer).DialContext":return /rets.r1/ { printf("DIAL %%v\\n", rets.r1); }\n'
    'go:"%s.(*Handler).reverseProxy":return /retval/ {\n'
    '  printf("RP %%v | %%T\\n", retval, retval); }\n'
    % (CH, RP))


def caddy_values(caddy, port, errf, extra, tag):
    """EXTRA: --no-cache (the type table made from DWARF), or not (made and stored, then
    read back: binfo_store)."""
    since = os.path.getsize(errf.name)
    p = s.start(["-B", "line", "-p", str(caddy.pid), "-e", CADDY_SCRIPT] + extra)
    head = attach_lines(p, "READY")
    ready = [l for l in head if l.startswith("READY")]
    reqs = [("/files/index.html", "gt-agent/1 (files)"), ("/dead/x?q=1&r=%22s%22", "gt-agent/2"),
            ("/proxy/index.html", "gt-agent/3 proxy")]
    got = []
    if ready:
        for target, ua in reqs:
            got.append(get(port, target, ua))
    out, err = stop(p)
    out = "".join(head) + out
    logs = [e for e in caddy_log(errf, since)
            if e.get("logger", "").startswith("http.log.access")]
    errs = [e for e in caddy_log(errf, since)
            if e.get("logger", "").startswith("http.log.error")]
    detail = "%s\n--- stderr\n%s\n--- caddy's\n%s" % (out[-4000:], err[-2000:],
                                                     json.dumps(logs + errs)[:3000])
    if not s.check("caddy%s: -p attaches to the running server" % tag,
                   ready and len(got) == 3, detail):
        return
    traced = re.findall(r"^REQ uri=(.*) remote=(.*) ua=(.*)$", out, re.M)
    own = [(e["request"]["uri"], "%s:%s" % (e["request"]["remote_ip"],
                                           e["request"]["remote_port"]),
            e["request"]["headers"]["User-Agent"][0]) for e in logs]
    s.check("caddy%s: each request's URI, remote address and Header[\"User-Agent\"][0] as "
            "Caddy logged them" % tag,
            traced == own and len(own) == 3 and
            [int(t[1].rsplit(":", 1)[1]) for t in traced] == [g[2] for g in got], detail)
    prints = re.findall(r"^&\{Method:GET .*$", out, re.M)
    s.check("caddy%s: print(args.r) shows every field, with RemoteAddr, RequestURI and the "
            "headers as logged" % tag,
            len(prints) == 3 and all(
                "RemoteAddr:%s RequestURI:%s " % (o[1], o[0]) in pr and
                "User-Agent:[%s]" % o[2] in pr and ":?" not in pr and pr.endswith("}")
                for o, pr in zip(own, prints)), detail)
    dials = re.findall(r"^DIAL (.*)$", out, re.M)
    rps = re.findall(r"^RP (.*) \| (.*)$", out, re.M)
    s.check("caddy%s: the dead backend's dial error (*net.OpError) reads as Caddy logged it, "
            "and so does reverseProxy's result, a struct embedding it (DialError)" % tag,
            [g[0] for g in got] == [200, 502, 200] and len(errs) == 1 and
            dials == [errs[0]["msg"]] and "connection refused" in dials[0] and
            rps == [(errs[0]["msg"], RP + ".DialError")], detail)
    s.check("caddy%s: nothing left attached after SIGINT" % tag, not bpf_leftovers())


def caddy_attach_detach(caddy, port, blob):
    """Downloads go on while gotrace attaches over every caddyhttp function's entry and
    detaches, three times: every download whole (sha1 of the file's)."""
    want = hashlib.sha1(blob).hexdigest()
    sums, stop_flag = [], threading.Event()

    def client():
        while not stop_flag.is_set():
            try:
                st, body, _ = get(port, "/files/blob.bin")
                sums.append((st, hashlib.sha1(body).hexdigest()))
            except OSError as e:
                sums.append((0, str(e)))
    t = threading.Thread(target=client, daemon=True)
    t.start()
    counts = []
    for _ in range(3):
        p = s.start(["-p", str(caddy.pid), "-e",
                     'go:"%s*":entry { @n = count(); }' % CH.rsplit("/", 1)[0]])
        head = attach_lines(p)
        time.sleep(1.0)
        out, err = stop(p)
        counts.append(("".join(head) + out, err))
    stop_flag.set()
    t.join(60)
    n = [int(m.group(1)) if m else 0 for m in
         (re.search(r"^@n: (\d+)$", o, re.M) for o, _ in counts)]
    s.check("caddy: attached three times during downloads, calls counted each time",
            all(x > 0 for x in n), "\n".join(o[-1500:] + e[-1500:] for o, e in counts))
    s.check("caddy: every download during attach and detach is whole (%d)" % len(sums),
            len(sums) > 3 and all(st == 200 and h == want for st, h in sums),
            [x for x in sums if x != (200, want)][:5])


def caddy_funcgraph(caddy, port):
    """--funcgraph -p says when it is tracing, then traces each request's file server
    call (finding 2: nothing said when it was ready)."""
    pat = CH + "/fileserver.*"
    p = s.start(["--funcgraph", pat, "-p", str(caddy.pid)])
    # its "Attaching N functions..." is on stderr (stdout is the graph)
    head, box = [], []

    def reader():
        for line in p.stderr:
            box.append(line)
            if line.startswith("Attaching"):
                return
    t = threading.Thread(target=reader, daemon=True)
    t.start()
    t.join(120)
    head = list(box)
    ready = [l for l in head if re.match(r"^Attaching \d+ functions", l)]
    n = 4
    if ready:
        for _ in range(n):
            get(port, "/files/index.html")
    out, err = stop(p)
    err = "".join(head) + err
    calls = re.findall(r"\(\*FileServer\)\.ServeHTTP\(", out)
    s.check("caddy: --funcgraph -p %s says it is attaching, then shows the %d requests' "
            "(*FileServer).ServeHTTP" % (pat, n),
            ready and len(calls) == n and "funcgraph:" not in err,
            out[-3000:] + "\n--- stderr\n" + err[-2000:])


# -- NATS ----------------------------------------------------------------------------
NATS_SCRIPT = (
    'BEGIN { printf("READY\\n"); }\n'
    'go:"%s.(*client).processConnect":entry { printf("CONNECT %%s\\n", args.arg); }\n'
    'go:"%s.(*client).processPub":entry { printf("PUB %%s\\n", args.arg); }\n'
    'go:"%s.(*client).processInboundClientMsg":entry {\n'
    '  printf("MSG %%s %%s\\n", args.c.pa.subject, args.msg); }\n'
    % (NS, NS, NS))


def nats(binary):
    work = workdir("nats")
    port = free_port()
    errf = open(os.path.join(work, "nats.log"), "w+")
    srv = subprocess.Popen([binary, "-a", "127.0.0.1", "-p", str(port), "-m", "0"],
                           cwd=work, stdout=errf, stderr=subprocess.STDOUT)
    try:
        if not s.check("nats: serves", wait_port(port, srv), "nats-server exited"):
            return
        # the CONNECT JSON is longer than GT_STRLEN's default of 64
        p = subprocess.Popen([s.gotrace, "-B", "line", "-p", str(srv.pid), "-e", NATS_SCRIPT],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=dict(s.env, GT_STRLEN="512"))
        head = attach_lines(p, "READY")
        connect = '{"verbose":false,"pedantic":false,"name":"gotrace-test","lang":"python"}'
        bodies = ["hello", "gotrace \u00e9t\u00e9", "x" * 300]
        received = b""
        if any(l.startswith("READY") for l in head):
            with socket.create_connection(("127.0.0.1", port), timeout=20) as c:
                c.recv(4096)  # INFO
                msg = "CONNECT %s\r\nSUB gt.subject 7\r\n" % connect
                for b in bodies:
                    bb = b.encode()
                    msg += "PUB gt.subject %d\r\n%s\r\n" % (len(bb), b)
                c.sendall(msg.encode() + b"PING\r\n")
                deadline = time.time() + 20
                while b"PONG\r\n" not in received and time.time() < deadline:
                    received += c.recv(65536)
        out, err = stop(p)
        out = "".join(head) + out
        detail = "%s\n--- stderr\n%s\n--- received\n%r" % (out[-4000:], err[-2000:],
                                                         received[:2000])
        got = re.findall(rb"MSG gt\.subject 7 (\d+)\r\n", received)
        s.check("nats: the subscriber received the three messages",
                [int(x) for x in got] == [len(b.encode()) for b in bodies], detail)
        s.check("nats: processConnect's args.arg is the CONNECT JSON sent",
                re.findall(r"^CONNECT (.*)$", out, re.M) == [connect], detail)
        s.check("nats: processPub's args.arg are the PUB lines' arguments",
                re.findall(r"^PUB (.*)$", out, re.M) ==
                ["gt.subject %d" % len(b.encode()) for b in bodies], detail)
        # (the server's own advisories go through it too, on $SYS subjects, longer than
        # GT_STRLEN: cut, without their CRLF, hence the format's own newline, cold19;
        # the bodies' CRLF reads as a newline here: universal newlines)
        s.check("nats: processInboundClientMsg's args.c.pa.subject (a field promoted from "
                "an embedded struct) and args.msg (a []byte by %s) are the subject and the "
                "bodies", re.findall(r"^MSG gt\.subject (.*)$", out, re.M) == bodies, detail)
        syms = nm_funcs(binary)
        r = s.run(["-v", "--dry-run", "-b", binary, "-e", "go:*:entry { @[probe] = count(); }"],
                  timeout=600)
        m = STATS.search(r.stderr)
        s.check("nats: go:*:entry loads (%s sites; go tool nm: %d functions)"
                % (m.group(1) if m else "?", len(syms)),
                r.returncode == 0 and m and int(m.group(1)) >= len(syms) - 20,
                describe(r)[-3000:])
    finally:
        stop_server(srv)


# -- the suite -----------------------------------------------------------------------
if FETCH:
    for name, spec in SERVERS:
        try:
            build(name, spec, fetch=True)
        except RuntimeError as e:
            s.check("%s: modules fetched" % spec, False, e)
    s.finish()
bins = {}
for name, spec in SERVERS:
    if not s.case(name.split("-")[0]):
        continue
    try:
        bins[name] = build(name, spec)
    except RuntimeError as e:
        s.check("%s builds" % spec, False, e)
if PREBUILD:
    s.finish()
if "caddy" in bins:
    caddy_static(bins["caddy"])
    caddy_live(bins["caddy"])
if "nats-server" in bins:
    nats(bins["nats-server"])
left = bpf_leftovers()
s.check("nothing left attached", not left, left)
s.finish()
