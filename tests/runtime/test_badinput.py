"""Bad input that needs more than a data file: an unreadable binary (root reads
everything, so gotrace runs as nobody for that case), a process that does not exist,
a command that cannot start. One clear line each, the right exit status, nothing
attached."""

import os
import shutil
import subprocess

from gtlib import Suite, bpf_leftovers, describe

s = Suite("badinput")
pair = s.go_build("pair")

if s.case("unreadable") and shutil.which("setpriv"):
    locked = os.path.join(s.work, "bin", "pair-locked")
    shutil.copy(pair, locked)
    os.chmod(locked, 0o000)
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                        s.gotrace, "--dry-run", "-b", locked, "-e",
                        'go:main.Add:entry { printf("x\\n"); }'],
                       capture_output=True, text=True, timeout=60)
    s.check("unreadable binary: one line, status 2",
            r.returncode == 2 and r.stdout == "" and
            r.stderr == "gotrace: error: %s: Permission denied\n" % locked, describe(r))

if s.case("nopid"):
    # a pid that was just freed: its process has exited and been reaped
    gone = subprocess.Popen(["true"])
    gone.wait()
    r = s.run(["-p", str(gone.pid), "-e", 'go:main.Add:entry { printf("x\\n"); }'])
    s.check("-p of a missing process: status 1",
            r.returncode == 1 and r.stderr == "gotrace: error: no process with pid %d\n" % gone.pid,
            describe(r))
    for bad, why in (("a1111", "pid 'a1111' is not a valid decimal number"),
                     ("999999999", "pid '999999999' out of valid pid range [1,")):
        r = s.run(["-p", bad, "-e", 'BEGIN { exit(); }'])
        s.check("-p %s: bpftrace's message, status 2" % bad,
                r.returncode == 2 and r.stderr.startswith("gotrace: error: " + why), describe(r))

if s.case("badcmd"):
    r = s.run(["-c", "/nonexistent/cmd", "-e", 'go:main.Add:entry { printf("x\\n"); }'])
    s.check("-c of a missing command: status 2",
            r.returncode == 2 and
            r.stderr == "gotrace: error: /nonexistent/cmd: No such file or directory\n",
            describe(r))

if s.case("semantic-c"):
    r = s.run(["-c", pair, "-e", 'go:main.Ad:entry { printf("x\\n"); }'])
    s.check("a compile error with -c starts nothing",
            r.returncode == 2 and "sum" not in r.stderr and "did you mean main.Add" in r.stderr,
            describe(r))

s.check("nothing left attached", not bpf_leftovers(), bpf_leftovers())
s.finish()
