"""Shared helpers for gotrace's runtime tests: build Go targets with `go build` at test
time, run gotrace against them for real (real kernel, real BPF), check that nothing is
left attached, and report `N passed, M failed` like every other suite here."""

import argparse
import contextlib
import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import tarfile
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
REPO = os.path.dirname(TESTS)
sys.path.insert(0, TESTS)
import gotool  # noqa: E402  (tests/gotool.py: which go builds the targets)

# GT_PREBUILD=1: a suite that builds much (test_gomatrix, test_realprogs, test_gotypes)
# only builds, and ends; scripts/test.sh runs them so beside the first tests of the
# plain pass, which leave a CPU mostly idle. The outputs are the suites' own, locked
# while built, so that the suite itself, started meanwhile, waits and reuses them.
PREBUILD = os.environ.get("GT_PREBUILD") == "1"
# GT_PREBUILD=fetch: only what comes from the network (toolchains, modules), which
# scripts/test.sh fetches at nice 0 beside the plain build: at nice 10 beside the plain
# pass the downloads got a tenth of a CPU and took 213 s instead of ~20 s (cold14)
FETCH = os.environ.get("GT_PREBUILD") == "fetch"


def lift(pid):
    """PID and its descendants to this process's priority, where theirs is lower: a
    nice-10 prebuild that a test waits for is the run's critical path, and beside busy
    loops at nice 0 it got a twentieth of a CPU (cold16, test_gomatrix waiting on it).
    Their later children inherit it."""
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
            kids.setdefault(int(st[st.rindex(")") + 2:].split()[1]), []).append(int(d))
        except (OSError, ValueError, IndexError):
            pass
    todo, seen = [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            if os.getpriority(os.PRIO_PROCESS, p) > mine:
                os.setpriority(os.PRIO_PROCESS, p, mine)
        except OSError:
            pass
        todo += kids.get(p, [])


@contextlib.contextmanager
def built_lock(path):
    """An exclusive lock on PATH + '.lock', held by whoever builds PATH (closing the file
    releases it); the holder's pid is in the file, and a waiter lifts the holder's
    priority to its own while it waits."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".lock", "a+") as f:
        while True:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                f.seek(0)
                holder = f.read().strip()
                if holder.isdigit():
                    lift(int(holder))
                time.sleep(2)
        f.seek(0)
        f.truncate()
        f.write("%d\n" % os.getpid())
        f.flush()
        yield


class Suite:
    def __init__(self, name):
        self._last = time.time()
        ap = argparse.ArgumentParser()
        ap.add_argument("--gotrace", required=True)
        ap.add_argument("--work", required=True)
        ap.add_argument("-k", action="append", default=[],
                        help="run only cases containing this text (repeatable: any of them)")
        a = ap.parse_args()
        self.name = name
        self.gotrace = os.path.abspath(a.gotrace)
        self.work = os.path.abspath(a.work)
        self.only = a.k
        self.passed = 0
        self.failed = 0
        # the Go targets: GT_TESTBIN (scripts/test.sh: one for both passes and the
        # kernels stages), else WORK/bin
        self.bin = os.environ.get("GT_TESTBIN") or os.path.join(self.work, "bin")
        os.makedirs(self.bin, exist_ok=True)
        os.makedirs(os.path.join(self.work, "bin"), exist_ok=True)  # the suites' own files
        self.env = dict(os.environ)
        self.env.setdefault("GOCACHE", os.path.join(self.work, "gocache"))
        self.env.setdefault("GOPATH", os.path.join(self.work, "gopath"))
        self.env["GOFLAGS"] = "-mod=mod"
        self.env["GO111MODULE"] = "auto"
        # targets build with one chosen go ($GT_GO, else the newest found), never a
        # toolchain the go command would switch to on its own
        self.go = gotool.go()
        self.env["GOTOOLCHAIN"] = "local"
        self.env["PATH"] = os.path.dirname(self.go) + os.pathsep + self.env.get("PATH", "")
        self.require_bpf()

    def require_bpf(self):
        """Runtime tests need root and uprobes; in CI (GT_REQUIRE_BPF=1) lacking them fails."""
        if os.geteuid() != 0:
            self.unavailable("runtime tests need root (BPF + uprobes)")

    @staticmethod
    def unavailable(msg):
        """Ends a suite that cannot run here: a skip, or a failure in CI (GT_REQUIRE_BPF=1)."""
        if os.environ.get("GT_REQUIRE_BPF") == "1":
            print("FAIL " + msg)
            print("0 passed, 1 failed")
            sys.exit(1)
        print("SKIP " + msg)
        print("0 passed, 0 failed, 1 skipped")
        sys.exit(0)

    # -- Go targets -------------------------------------------------------------
    def go_build(self, name, suffix="", flags=(), cgo=False, src_dir=None):
        """Builds the .go files of tests/go/NAME into BIN/NAME+SUFFIX (cached by mtime;
        build constraints such as //go:build cgo apply)."""
        src = src_dir or os.path.join(TESTS, "go", name)
        out = os.path.join(self.bin, name + suffix)
        files = sorted(f for f in os.listdir(src) if f.endswith(".go"))
        newest = max(os.path.getmtime(os.path.join(src, f)) for f in files)
        if os.path.exists(out) and os.path.getmtime(out) >= newest:
            return out
        env = dict(self.env)
        env["CGO_ENABLED"] = "1" if cgo else "0"
        cmd = [self.go, "build", *flags, "-o", out, *files]
        r = subprocess.run(cmd, cwd=src, env=env, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("go build failed for %s: %s" % (name, r.stderr))
        return out

    def go_build_with(self, gocmd, name, tag, files, flags=(), cgo=False):
        """Builds FILES of tests/go/NAME with the go command GOCMD (a release from
        tests/gotool.py) into BIN/NAME-TAG. The files are chosen by the caller (Go
        1.19 compiles a `//go:build go1.23` file named on its command line). The build
        cache is the toolchain cache's (gotool.cache_dir()/gocache), which CI keeps, so
        that a rebuild only links. Rebuilt when a source or GOCMD is newer than the
        binary. Returns the path; raises RuntimeError with go's message."""
        src = os.path.join(TESTS, "go", name)
        out = os.path.join(self.bin, "%s-%s" % (name, tag))
        newest = max(os.path.getmtime(p) for p in
                     [os.path.join(src, f) for f in files] + [os.path.realpath(gocmd)])
        with built_lock(out):  # a GT_PREBUILD run may be building it
            if os.path.exists(out) and os.path.getmtime(out) >= newest:
                return out
            env = dict(self.env, GOCACHE=os.path.join(gotool.cache_dir(), "gocache"),
                       CGO_ENABLED="1" if cgo else "0", GOTOOLCHAIN="local")
            env["PATH"] = os.path.dirname(gocmd) + os.pathsep + env.get("PATH", "")
            r = subprocess.run([gocmd, "build", *flags, "-o", out + ".tmp", *files], cwd=src,
                               env=env, capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError("%s build %s: %s" % (gocmd, " ".join(flags),
                                                        r.stderr.strip()))
            os.rename(out + ".tmp", out)
            return out

    def npm_program(self, spec, member):
        """The program MEMBER of npm package SPEC (`npm pack`: a tarball, nothing
        installed), downloaded once into GT_NPM_CACHE or the work dir; unavailable()
        when the registry cannot be reached."""
        cache = os.environ.get("GT_NPM_CACHE") or os.path.join(self.work, "npm")
        name = spec.replace("/", "_").replace("@", "_")
        out = os.path.join(cache, name, os.path.basename(member))
        if os.path.exists(out):
            return out
        d = os.path.join(cache, name)
        os.makedirs(d, exist_ok=True)
        try:
            r = subprocess.run(["npm", "pack", spec, "--pack-destination", d], cwd=d,
                               capture_output=True, text=True, timeout=180)
        except (OSError, subprocess.TimeoutExpired) as e:
            self.unavailable("npm registry unreachable (npm pack %s: %s)" % (spec, e))
        tgz = [f for f in os.listdir(d) if f.endswith(".tgz")]
        if r.returncode != 0 or not tgz:
            self.unavailable("npm registry unreachable (npm pack %s: %s)" %
                             (spec, (r.stderr or r.stdout).strip().splitlines()[-1:]))
        with tarfile.open(os.path.join(d, tgz[0])) as t:
            f = t.extractfile(member)
            with open(out + ".tmp", "wb") as o:
                o.write(f.read())
        os.chmod(out + ".tmp", 0o755)
        os.rename(out + ".tmp", out)
        return out

    # -- running ----------------------------------------------------------------
    def run(self, args, timeout=60, banner=False, **kw):
        """Runs gotrace ARGS; returns CompletedProcess with text stdout/stderr. The
        "Attaching N probes..." line (or its JSON object) that starts stdout is taken off
        unless BANNER: tests of other things compare the rest (test_skeleton checks it)."""
        r = subprocess.run([self.gotrace, *args], capture_output=True, text=True,
                           timeout=timeout, env=self.env, **kw)
        if not banner:
            r.stdout = BANNER.sub("", r.stdout, count=1)
        return r

    def start(self, args, **kw):
        return subprocess.Popen([self.gotrace, *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=self.env, **kw)

    # -- checks -----------------------------------------------------------------
    def case(self, name):
        """Decorator-free filter: returns False when -k excludes the case."""
        return not self.only or any(o in name for o in self.only)

    def check(self, name, ok, detail=""):
        if os.environ.get("GT_CHECK_TIMES"):  # where a stage's time goes (tests/kernels)
            now = time.time()
            name += " [%.1f s]" % (now - self._last)
            self._last = now
        if ok:
            self.passed += 1
            print("PASS %s" % name)
        else:
            self.failed += 1
            print("FAIL %s" % name)
            if detail:
                for line in str(detail).rstrip("\n").split("\n")[:60]:
                    print("    " + line)
        sys.stdout.flush()
        return ok

    def finish(self):
        print("%d passed, %d failed" % (self.passed, self.failed))
        sys.exit(1 if self.failed else 0)


def bpf_leftovers(settle=5.0):
    """gotrace programs (named gt_*) that outlive their gotrace: held by no process, or by
    a process that is not a running gotrace (e.g. a traced child that inherited an fd).
    Programs of other gotrace runs on the machine are not ours to judge. A closed
    program is released asynchronously (after RCU), hence the SETTLE seconds."""
    deadline = time.time() + settle
    while True:
        left = _orphan_progs()
        if not left or time.time() > deadline:
            return left
        time.sleep(0.1)


def _prog_holders():
    """prog id -> set of (pid, comm) holding an fd of it (prog fds and link fds)."""
    holders = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/comm" % pid) as f:
                comm = f.read().strip()
            fds = os.listdir("/proc/%s/fdinfo" % pid)
        except OSError:
            continue
        for fd in fds:
            try:
                with open("/proc/%s/fdinfo/%s" % (pid, fd)) as f:
                    info = f.read()
            except OSError:
                continue
            for line in info.splitlines():
                if line.startswith("prog_id:"):
                    holders.setdefault(int(line.split()[1]), set()).add((int(pid), comm))
    return holders


def _orphan_progs():
    if shutil.which("bpftool") is None:
        return ["bpftool is not installed"]
    r = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True)
    try:
        progs = json.loads(r.stdout or "[]")
    except ValueError:
        return ["cannot parse bpftool output: " + r.stdout[:200]]
    holders = _prog_holders()
    left = []
    for p in progs:
        if not str(p.get("name", "")).startswith("gt_"):
            continue
        by = holders.get(p.get("id"), set())
        if by and all(comm == "gotrace" for _, comm in by):
            continue  # a live gotrace (another run) owns it
        left.append("prog %s %s held by %s" % (p.get("id"), p.get("name"), sorted(by) or "nobody"))
    return left + _orphan_uprobe_events()


def _orphan_uprobe_events():
    """tracefs uprobe events gotrace made (gotrace_PID/...) whose gotrace is gone."""
    left = set()
    for d in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
        try:
            with open(os.path.join(d, "uprobe_events")) as f:
                lines = f.read().splitlines()
        except OSError:
            continue
        for line in lines:
            m = re.match(r"^\w:(gotrace_(\d+)/\S+) ", line)
            if not m:
                continue
            try:
                with open("/proc/%s/comm" % m.group(2)) as f:
                    if f.read().strip() == "gotrace":
                        continue  # a live gotrace (another run) owns it
            except OSError:
                pass
            left.add("uprobe event %s" % m.group(1))
        break
    return sorted(left)


BANNER = re.compile(r'^(Attaching \d+ probes?\.\.\.|\{"type": "attached_probes", '
                    r'"data": \{"probes": \d+\}\})\n')


def wait_for_line(proc, needle, timeout=20):
    """Reads proc.stdout until a line containing NEEDLE; returns lines read."""
    lines = []
    deadline = time.time() + timeout
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if needle in line:
            return lines
    return lines


# Durations are checked against the traced program's own clock: tests/go/slow,
# tests/go/funcgraph and tests/go/recover time each call twice, inside (time.Now at its
# first line to time.Since at its last) and around (by its caller, just before the call
# and just after it returns), and print "took NAME INNER_US OUTER_US" on stderr at exit.
# The traced window (entry probe to RET) holds the inner one and is held by the outer
# one, whatever the load: a thread descheduled between the entry probe and time.Now (9
# ms at a load average of 16 on 2 vCPUs, 20 ms at 12 beside two fresh clones' suites, 14
# and 18 ms under emulation) is inside the outer window. OWN_EARLY_US: the inner side's
# rounding (the program's microseconds, gotrace's printed figures).
OWN_EARLY_US = 200


def own_times(stderr):
    """{NAME: [(inner_us, outer_us), ...]} from the "took NAME INNER OUTER" lines a
    traced Go program printed."""
    own = {}
    for line in stderr.splitlines():
        f = line.split()
        if len(f) == 4 and f[0] == "took" and f[2].isdigit() and f[3].isdigit():
            own.setdefault(f[1], []).append((int(f[2]), int(f[3])))
    return own


def matches_own(traced_us, own):
    """A traced duration (us) against a call's own (inner, outer) times: between them."""
    inner, outer = own
    return inner - OWN_EARLY_US <= traced_us <= outer


def hist_fits(counts, owns):
    """Whether a hist()'s COUNTS ({power-of-two bucket's low bound in ns: calls}) are the
    calls OWNS ([(inner_us, outer_us), ...]) with each call in a bucket from its inner
    time's to its outer time's. Buckets in increasing order, each takes the calls that
    can go no later first."""
    import heapq

    def bucket(ns):
        return 1 << (max(int(ns), 1).bit_length() - 1)

    if sum(counts.values()) != len(owns):
        return False
    calls = sorted((bucket(max(i - OWN_EARLY_US, 0) * 1000), bucket(o * 1000)) for i, o in owns)
    ready, k = [], 0
    for b in sorted(counts):
        while k < len(calls) and calls[k][0] <= b:
            heapq.heappush(ready, calls[k][1])
            k += 1
        for _ in range(counts[b]):
            if not ready or ready[0] < b:
                return False
            heapq.heappop(ready)
    return k == len(calls) and not ready


def pprof_traces(go, path, env=None):
    """[(frames leaf first, amount, unit)] of the profile at PATH, by GO's `go tool pprof
    -traces`: UNIT is ms, s or us for a time (Go's own CPU profiles), None for a count
    of samples (gotrace's -f pprof); None when pprof cannot read it."""
    r = subprocess.run([go, "tool", "pprof", "-traces", path], capture_output=True,
                       text=True, env=env)
    if r.returncode != 0:
        return None
    out = []
    for block in re.split(r"^-+\+-+$", r.stdout, flags=re.M)[1:]:
        lines = [l for l in block.split("\n") if l.strip()]
        m = re.match(r"^\s*([\d.]+)(ms|s|us)?\s+(.*)$", lines[0]) if lines else None
        if m:
            out.append(([m.group(3).strip()] + [l.strip() for l in lines[1:]],
                        float(m.group(1)), m.group(2)))
    return out


def free_port():
    """A TCP port of 127.0.0.1 that nothing listens on (now)."""
    import socket
    with socket.socket() as so:
        so.bind(("127.0.0.1", 0))
        return so.getsockname()[1]


def stop_server(p, timeout=20):
    """SIGTERM to a server under test, SIGKILL if it has not ended within TIMEOUT s."""
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout)
    except subprocess.TimeoutExpired:
        p.kill()


def describe(r):
    return "status %s\n--- stdout\n%s--- stderr\n%s" % (r.returncode, r.stdout, r.stderr)


def kill_tree(p):
    try:
        p.send_signal(signal.SIGKILL)
    except ProcessLookupError:
        pass


def collect(p, timeout):
    """(stdout, stderr) of a process asked to stop; killed if it has not within TIMEOUT s."""
    try:
        return p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_tree(p)
        return p.communicate()
