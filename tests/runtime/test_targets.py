"""Where Go programs run (issue 25): a process in its own mount and pid namespaces (a
container's), a server whose binary was replaced, `go test` and `go run`, shell and env
wrappers, the -c command's exit status and its death with gotrace.

Oracles: tests/go/ctapp writes what handle() got ("H {N:1 Word:alpha}", fmt's %+v);
tests/go/calcmod's test logs each Add call ("Add 1 10") and `go run .` prints each sum;
the go command's own lines ("--- PASS: TestAdd", "ok  example.com/calcmod/calc") must
come through. Stacks are named at END, after the traced process has exited."""

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

from gtlib import Suite, bpf_leftovers, collect, describe, wait_for_line

s = Suite("targets")
CT = s.go_build("ctapp")
CT_PIE = s.go_build("ctapp", suffix="-pie", flags=["-buildmode=pie"])
SCRIPT = ('go:main.handle:entry { printf("T %d %s %d\\n", args.r.N, args.r.Word, pid); '
          '@s[ustack(3)] = count(); }')
FRAMES = ["main.handle", "main.serve", "main.main"]
READY = 'BEGIN { printf("READY\\n"); } '


def own_h(stderr):
    """'H {N:1 Word:alpha}' -> '1 alpha'"""
    return [re.sub(r"^H \{N:(\d+) Word:(.*)\}$", r"\1 \2", l)
            for l in stderr.splitlines() if l.startswith("H ")]


def traced_t(stdout):
    """'T 1 alpha PID' -> '1 alpha'"""
    return [l[2:].rsplit(" ", 1)[0] for l in stdout.splitlines() if l.startswith("T ")]


def traced_pids(stdout):
    return {int(l.rsplit(" ", 1)[1]) for l in stdout.splitlines() if l.startswith("T ")}


def frames(stdout):
    """Function names of the @s stack printed at END."""
    m = re.search(r"@s\[\n(.*?)\n\]:", stdout, re.S)
    return [re.sub(r"\+\d+$", "", l.strip()) for l in m.group(1).splitlines()] if m else []


def trace_pid(pid, feed, lines, cmd=None):
    """gotrace -p PID with SCRIPT (or CMD, given -p PID) while FEED (the program's stdin)
    gets LINES once BEGIN has printed READY (the probes are attached), then closed: the
    program exits, and so does gotrace."""
    tr = s.start(["-p", str(pid), "-e", READY + SCRIPT]) if cmd is None else \
        subprocess.Popen(cmd + ["-p", str(pid)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True,
                         env=dict(s.env, PATH=os.path.dirname(os.path.abspath(s.gotrace)) +
                                  os.pathsep + s.env["PATH"]))
    head = wait_for_line(tr, "READY", 60)
    for l in lines:
        feed.write(l + "\n")
        feed.flush()
    feed.close()
    out, err = collect(tr, 30)
    return tr.returncode, "".join(head) + out, err


def host_pid(ns_pid_of, timeout=10):
    """The host pid of the process whose namespace pid 1 runs /mnt path NS_PID_OF."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        for p in os.listdir("/proc"):
            if p.isdigit():
                try:
                    if os.readlink("/proc/%s/exe" % p) == ns_pid_of:
                        return int(p)
                except OSError:
                    pass
        time.sleep(0.1)
    return None


if s.case("container"):
    # a private tmpfs over an empty host directory holds the binary: the host has no
    # file at the path the process runs, and the process is pid 1 of its pid namespace
    mnt = tempfile.mkdtemp(prefix="gt-ct-")
    inner = os.path.join(mnt, "app")
    sh = "mount -t tmpfs none %s && cp %s %s && exec %s" % (mnt, CT, inner, inner)
    app = subprocess.Popen(["unshare", "--mount", "--pid", "--fork", "--propagation", "private",
                            "sh", "-c", sh], stdin=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    hp = host_pid(inner)
    nspid = open("/proc/%d/status" % hp).read().split("NSpid:")[1].split("\n")[0].split() \
        if hp else []
    s.check("container: the program runs as pid 1 of its namespaces, its binary unseen "
            "from the host", hp is not None and not os.path.exists(inner) and
            nspid[-1:] == ["1"], "host pid %s, NSpid %s, %s exists: %s" %
            (hp, nspid, inner, os.path.exists(inner)))
    if hp:
        rc, out, err = trace_pid(hp, app.stdin, ["alpha", "beta"])
        app.wait(timeout=20)
        want = own_h(app.stderr.read())
        s.check("container: -p HOSTPID reads values by name as the program prints them",
                rc == 0 and want == ["1 alpha", "2 beta"] and traced_t(out) == want,
                "status %s\n%s\n%s\nown: %s" % (rc, out, err, want))
        s.check("container: stacks are named at END, after the process exited",
                frames(out) == FRAMES, out)
        s.check("container: pid is the host's pid", traced_pids(out) == {hp}, out)
    else:
        app.kill()
    shutil.rmtree(mnt, ignore_errors=True)

if s.case("deleted"):
    # a deploy replaced the binary: /proc/PID/exe reads "... (deleted)"; a PIE, so
    # naming the stack needs the load address learned while it ran
    d = tempfile.mkdtemp(prefix="gt-del-")
    b = os.path.join(d, "app")
    shutil.copy(CT_PIE, b)
    app = subprocess.Popen([b], stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    os.unlink(b)
    link = os.readlink("/proc/%d/exe" % app.pid)
    rc, out, err = trace_pid(app.pid, app.stdin, ["gamma"])
    app.wait(timeout=20)
    app_err = app.stderr.read()
    s.check("deleted binary: -p traces it by name", link.endswith(" (deleted)") and rc == 0 and
            traced_t(out) == own_h(app_err) == ["1 gamma"],
            "%s\nstatus %s\n%s\n%s" % (link, rc, out, err))
    s.check("deleted binary (PIE): stacks named after exit", frames(out) == FRAMES, out)
    shutil.rmtree(d, ignore_errors=True)

if s.case("shebang"):
    # a #! script run as bpftrace's are: ./x.gt -p PID (options after the script)
    d = tempfile.mkdtemp(prefix="gt-sb-")
    gt = os.path.join(d, "trace.gt")
    with open(gt, "w") as f:
        f.write("#!/usr/bin/env gotrace\n" + READY + SCRIPT + "\n")
    os.chmod(gt, 0o755)
    app = subprocess.Popen([CT], stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rc, out, err = trace_pid(app.pid, app.stdin, ["delta"], cmd=[gt])  # gotrace on PATH
    app.wait(timeout=20)
    want = own_h(app.stderr.read())
    s.check("#! script: ./trace.gt -p PID traces that process",
            rc == 0 and want == ["1 delta"] and traced_t(out) == want and
            traced_pids(out) == {app.pid}, "status %s\n%s\n%s\nown: %s" % (rc, out, err, want))
    shutil.rmtree(d, ignore_errors=True)

if s.case("bad pid"):
    r = s.run(["-p", "2", "-e", SCRIPT])
    s.check("-p of a kernel thread: one clear error",
            r.returncode != 0 and r.stderr.strip() ==
            "gotrace: error: pid 2 runs no program (a kernel thread, or it is exiting)",
            describe(r))
    sl = subprocess.Popen(["sleep", "30"])
    r = s.run(["-p", str(sl.pid), "-e", SCRIPT])
    sl.kill()
    sl.wait()
    s.check("-p of a program that is not Go: one clear error naming it",
            r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1 and
            "/proc/%d/exe" % sl.pid in r.stderr and "Go" in r.stderr, describe(r))

if s.case("several"):
    # -p twice: two of three processes of one binary, and no others
    apps = [subprocess.Popen([CT], stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(3)]
    time.sleep(0.5)
    tr = s.start(["-p", str(apps[0].pid), "-p", str(apps[1].pid), "-e", SCRIPT])
    time.sleep(2.5)
    for i, a in enumerate(apps):
        a.stdin.write("w%d\n" % i)
        a.stdin.flush()
    time.sleep(0.3)
    for a in apps[:2]:
        a.stdin.close()
        a.wait(timeout=20)
    out, err = collect(tr, 30)  # ends when both traced processes have exited
    apps[2].stdin.close()
    apps[2].wait(timeout=20)
    got = sorted((l.split()[2], int(l.split()[3])) for l in out.splitlines() if l.startswith("T "))
    s.check("-p A -p B: both traced by name, the third process of the binary not",
            tr.returncode == 0 and got == [("w0", apps[0].pid), ("w1", apps[1].pid)],
            "status %s\n%s\n%s" % (tr.returncode, out, err))
    a = subprocess.Popen([CT], stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    b = subprocess.Popen(["sleep", "30"])
    time.sleep(0.3)
    r = s.run(["-p", str(a.pid), "-p", str(b.pid), "-e", SCRIPT])
    a.kill(), b.kill(), a.wait(), b.wait()
    s.check("-p of processes that run different programs: one clear error",
            r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1 and
            "must run one program" in r.stderr, describe(r))

# -- -c: go test, go run, wrappers ---------------------------------------------------------
MOD = os.path.join(s.work, "calcmod")
shutil.rmtree(MOD, ignore_errors=True)
shutil.copytree(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                             "go", "calcmod"), MOD)
ADD = 'go:example.com/calcmod/calc.Add:entry { printf("A %d %d\\n", args.a, args.b); }'

if s.case("go test"):
    r = s.run(["-c", "%s test -count=1 -v ./calc" % s.go, "-e", ADD], cwd=MOD, timeout=300)
    logged = re.findall(r"calc_test.go:\d+: Add (\d+ \d+)", r.stdout)
    got = [l[2:] for l in r.stdout.splitlines() if l.startswith("A ")]
    s.check("go test: every call of calc.Add, by name, as the test logs them",
            r.returncode == 0 and logged == ["1 10", "2 20", "3 30"] and got == logged,
            describe(r))
    s.check("go test: the go command's own output comes through",
            "--- PASS: TestAdd" in r.stdout and
            re.search(r"^ok\s+example.com/calcmod/calc", r.stdout, re.M), describe(r))
    env = dict(s.env, CALC_FAIL="1")
    r = subprocess.run([s.gotrace, "-c", "%s test -count=1 ./calc" % s.go, "-e",
                        'go:example.com/calcmod/calc.Add:entry { @calls = count(); }'],
                       cwd=MOD, env=env, capture_output=True, text=True, timeout=300)
    s.check("go test that fails: gotrace exits with go's status 1, the calls counted",
            r.returncode == 1 and "--- FAIL: TestFailOnRequest" in r.stdout and
            "@calls: 3" in r.stdout, describe(r))

if s.case("go run"):
    r = s.run(["-c", "%s run ." % s.go, "-e", ADD], cwd=MOD, timeout=300)
    sums = re.findall(r"^sum (\d+ \d+) = \d+$", r.stdout, re.M)
    got = [l[2:] for l in r.stdout.splitlines() if l.startswith("A ")]
    s.check("go run: every call of calc.Add, by name, and the program's output",
            r.returncode == 0 and sums == ["1 2", "2 4", "3 6"] and got == sums, describe(r))
    r = s.run(["-c", "%s run ." % s.go, "-e",
               'go:main.Greet:entry { printf("G %s %d\\n", args.name, args.n); }'],
              cwd=MOD, timeout=300)
    s.check("go run: the main package's arguments by name (go run compiles it without "
            "DWARF unless asked), as the program prints them",
            r.returncode == 0 and "greet calc 3\n" in r.stdout and
            [l for l in r.stdout.splitlines() if l.startswith("G ")] == ["G calc 3"],
            describe(r))

if s.case("wrappers"):
    r = s.run(["-c", "env X=1 %s" % CT, "-e", SCRIPT], input="delta\n")
    s.check("-c 'env X=1 ./app': the program env runs is traced",
            r.returncode == 0 and traced_t(r.stdout) == own_h(r.stderr) == ["1 delta"] and
            frames(r.stdout) == FRAMES, describe(r))
    r = s.run(["-b", CT, "-c", "sh -c '%s; echo after'" % CT, "-e", SCRIPT], input="eps\n")
    s.check("-b ./app -c 'sh -c ...': the shell's child running -b is traced",
            r.returncode == 0 and traced_t(r.stdout) == own_h(r.stderr) == ["1 eps"] and
            "after" in r.stdout, describe(r))
    r = s.run(["-c", "sh -c 'exit 0'", "-e", SCRIPT])
    s.check("-c of a command that runs no such program: one clear error at the end",
            r.returncode != 0 and "ran no program that has the functions the script names"
            in r.stderr, describe(r))

if s.case("status"):
    r = s.run(["-c", CT, "-e", SCRIPT], input="x\nexit 3\n")
    s.check("-c: the command's failing status is gotrace's (3)",
            r.returncode == 3 and traced_t(r.stdout) == ["1 x"], describe(r))
    r = s.run(["-c", CT, "-e", SCRIPT], input="y\n")
    s.check("-c: a command that succeeds: status 0", r.returncode == 0, describe(r))
    # the -c command dies with a SIGKILLed gotrace
    tr = subprocess.Popen([s.gotrace, "-c", CT, "-e", SCRIPT], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=s.env)
    child = None
    deadline = time.time() + 20
    while child is None and time.time() < deadline:
        for p in os.listdir("/proc"):
            try:
                if p.isdigit() and os.readlink("/proc/%s/exe" % p) == CT and \
                        open("/proc/%s/stat" % p).read().split(")")[1].split()[1] == \
                        str(tr.pid):
                    child = int(p)
            except OSError:
                pass
        time.sleep(0.1)
    tr.kill()
    tr.communicate()
    gone = False
    for _ in range(50):
        try:
            os.kill(child, 0)
            with open("/proc/%d/stat" % child) as f:
                gone = f.read().split(")")[1].split()[0] == "Z"
        except (OSError, TypeError):
            gone = True
        if gone:
            break
        time.sleep(0.1)
    s.check("-c: the command dies with a SIGKILLed gotrace", child is not None and gone,
            "child %s" % child)

s.check("nothing left attached", not bpf_leftovers(), bpf_leftovers())
s.finish()
