"""Probe types beyond go:: plain uprobe/uretprobe on C code (C ABI arguments), the
uretprobe refusal on Go functions, interval, profile and tracepoint probes."""

import os
import re
import subprocess
import tempfile

from gtlib import TESTS, Suite, bpf_leftovers, collect, describe, wait_for_line

s = Suite("probes")

if s.case("uprobe"):
    exe = os.path.join(s.work, "bin", "cadd")
    subprocess.run(["cc", "-O1", "-o", exe, os.path.join(TESTS, "c", "cadd.c")], check=True)
    r = s.run(["-c", exe, "-e", 'uprobe:%s:cadd { printf("in %%d %%d\\n", arg0, arg1); } '
               'uretprobe:%s:cadd { printf("ret %%d\\n", retval); }' % (exe, exe)])
    # the program's own "33" may land anywhere among the trace lines
    lines = [l for l in r.stdout.splitlines() if l != "33"]
    s.check("uprobe/uretprobe on C code with C ABI arguments",
            r.returncode == 0 and "33" in r.stdout.splitlines() and
            lines == ["in 0 10", "ret 10", "in 1 10", "ret 11", "in 2 10", "ret 12"], describe(r))

# bit-fields read through pointers into the process (bpftrace's "bitfield access" runtime
# tests: their values; the signed declarations read the bits zero-extended, as bpftrace
# does), a packed 64-bit one over nine bytes, print() of the structs
if s.case("bitfield"):
    exe = os.path.join(s.work, "bin", "bitfield")
    subprocess.run(["cc", "-O1", "-o", exe, os.path.join(TESTS, "c", "bitfield.c")], check=True)
    prog = ("struct Foo { unsigned int a:4, b:8, c:3, d:1, e:16; } "
            "struct Bar { short a:4, b:8, c:3, d:1; int e:9, f:15, g:1, h:2, i:5 } "
            "struct pk { char x:3; long long y:64; int z:5; } __attribute__((packed)) "
            "uprobe:%s:use { $foo = (struct Foo *)arg0; "
            'printf("%%d %%d %%d %%d %%d\\n", $foo.a, $foo.b, $foo.c, $foo.d, $foo.e); '
            "$bar = (struct Bar *)arg1; "
            'printf("%%d %%d %%d %%d %%d", $bar.a, $bar.b, $bar.c, $bar.d, $bar.e); '
            'printf(" %%d %%d %%d %%d\\n", $bar.f, $bar.g, $bar.h, $bar.i); '
            '$p = (struct pk *)arg2; printf("%%d %%lld %%d %%d\\n", $p.x, $p.y, $p.z, '
            "sizeof(struct pk)); print(*$p); print(*$foo); $b = *$bar; print($b.i); }" % exe)
    # the trace to a file of its own: on the shared stdout the program's "212" can land
    # between the two printf()s of one line (seen in a fresh clone's 6.1 stage)
    out = os.path.join(s.work, "bitfield.trace")
    r = s.run(["-o", out, "-c", exe, "-e", prog])
    text = open(out).read() if os.path.exists(out) else ""
    lines = [l for l in text.splitlines() if l != "Attaching 1 probe..."]
    s.check("bit-fields through user pointers: reads, sign, packed, print()",
            r.returncode == 0 and "212" in r.stdout.splitlines() and lines == [
                "1 2 5 0 65535", "1 217 5 1 500 31117 1 2 27", "5 -1234567890123 25 9",
                "{ .x = 5, .y = -1234567890123, .z = 25 }",
                "{ .a = 1, .b = 2, .c = 5, .d = 0, .e = 65535 }", "27"],
            describe(r) + "\n--- trace\n" + text)

if s.case("uretprobe-go"):
    adds = s.go_build("adds")
    r = s.run(["--dry-run", "-b", adds, "-e", 'uretprobe:main.add { printf("x\\n"); }'])
    s.check("uretprobe on a Go function is refused with the reason",
            r.returncode == 2 and "Go copies goroutine stacks" in r.stderr and
            "go:main.add:return" in r.stderr, describe(r))
    r = s.run(["--dry-run", "--unsafe", "-b", adds, "-e", 'uretprobe:main.add { printf("x\\n"); }'])
    s.check("... unless --unsafe", r.returncode == 0, describe(r))

if s.case("interval"):
    r = s.run(["-e", 'interval:ms:50 { @n++; printf("tick %d\\n", @n); if (@n == 5) { exit(); } }'])
    s.check("interval:ms fires and exit() ends the run",
            r.returncode == 0 and r.stdout.startswith("tick 1\ntick 2\ntick 3\ntick 4\ntick 5\n"),
            describe(r))

# bpftrace's test frameworks wait for this line (its runtime tests' `tail -n +2`)
if s.case("notify"):
    env = dict(s.env, __BPFTRACE_NOTIFY_PROBES_ATTACHED="1")
    r = subprocess.run([s.gotrace, "-q", "-e", 'BEGIN { printf("begin\\n"); exit(); }'],
                       capture_output=True, text=True, timeout=60, env=env)
    plain = s.run(["-q", "-e", 'BEGIN { printf("begin\\n"); exit(); }'])
    # on stderr, as bpftrace 0.17 writes it: stdout (piped, -f json) is the trace's alone
    j = subprocess.run([s.gotrace, "-f", "json", "-e", 'BEGIN { printf("begin\\n"); exit(); }'],
                       capture_output=True, text=True, timeout=60, env=env)
    s.check("__BPFTRACE_NOTIFY_PROBES_ATTACHED: its line once attached, on stderr as "
            "bpftrace 0.17 writes it; stdout is the trace's",
            r.returncode == 0 and r.stdout == "begin\n" and
            r.stderr == "__BPFTRACE_NOTIFY_PROBES_ATTACHED\n" and plain.stdout == "begin\n" and
            j.returncode == 0 and "NOTIFY" not in j.stdout and
            j.stderr == "__BPFTRACE_NOTIFY_PROBES_ATTACHED\n" and
            all(l.startswith("{") for l in j.stdout.splitlines() if l),
            describe(r) + describe(plain) + describe(j))

# config = { max_cat_bytes = N } and the environment's names for it: bpftrace 0.17's
# BPFTRACE_CAT_BYTES_MAX and current bpftrace's BPFTRACE_MAX_CAT_BYTES (the environment wins)
if s.case("config-env"):
    prog = 'i:ms:1 { cat("/proc/self/cmdline"); exit(); }'
    outs = []
    for env, cfg in (({}, "config = { max_cat_bytes = 3 } "),
                     ({"BPFTRACE_MAX_CAT_BYTES": "2"}, ""),
                     ({"BPFTRACE_CAT_BYTES_MAX": "4"}, ""),
                     ({"BPFTRACE_MAX_CAT_BYTES": "5"}, "config = { max_cat_bytes = 3 } ")):
        r = subprocess.run([s.gotrace, "-q", "-e", cfg + prog], capture_output=True,
                           env=dict(s.env, **env), timeout=60)
        outs.append(r.stdout)
    s.check("max_cat_bytes from the config block, BPFTRACE_MAX_CAT_BYTES, BPFTRACE_CAT_BYTES_MAX",
            [len(o) for o in outs] == [3, 2, 4, 5] and all(o == outs[3][:len(o)] for o in outs),
            repr(outs))

if s.case("profile"):
    r = s.run(["-e", 'profile:hz:99 { @[probe] = count(); } interval:ms:500 { exit(); }'])
    s.check("profile:hz samples on the CPUs",
            r.returncode == 0 and "@[profile:hz:99]: " in r.stdout, describe(r))

if s.case("tracepoint"):
    sh = "/bin/sh"
    tr = s.start(["-e", 'BEGIN { printf("READY\\n"); } '
                  'tracepoint:sched:sched_process_exec /args.filename == "/bin/true"/ '
                  '{ printf("exec %s\\n", args.filename); exit(); }'])
    line = (wait_for_line(tr, "READY", 20) or [""])[-1]
    subprocess.run(["/bin/true"])
    out, err = tr.communicate(timeout=30)
    s.check("tracepoint with args.FIELD (a __data_loc string)",
            line == "READY\n" and tr.returncode == 0 and out == "exec /bin/true\n",
            line + out + err)

if s.case("mapfull"):
    env = dict(s.env, GT_MAX_MAP_KEYS="10")
    r = subprocess.run([s.gotrace, "-e", 'BEGIN { $i = 0; while ($i < 20) { @m[$i] = $i; $i++; } exit(); }'],
                       capture_output=True, text=True, env=env, timeout=60)
    s.check("a full map is counted and reported (GT_MAX_MAP_KEYS)",
            r.returncode == 0 and r.stdout.count("@m[") == 10 and
            "gotrace: warning: Map full; can't update element: map @m is full (10 keys): 10 updates were dropped" in r.stderr,
            describe(r))

def lockdown():
    """The kernel's lockdown mode ("none" without the LSM), from securityfs (mounted here
    when it is not: root's tests)."""
    path = "/sys/kernel/security/lockdown"
    if not os.path.exists(path):
        subprocess.run(["mount", "-t", "securityfs", "securityfs", "/sys/kernel/security"],
                       capture_output=True)
    try:
        with open(path) as f:
            return re.search(r"\[(\w+)\]", f.read()).group(1)
    except (OSError, AttributeError):
        return "none"


# write_user() with --unsafe: the -c child opens what the probe wrote into its path (its
# own output, the oracle, is the other file's text); where the kernel's lockdown takes
# bpf_probe_write_user away, gotrace says so and the child is not run
if s.case("write_user"):
    d = tempfile.mkdtemp(dir=s.work)
    for c in "ab":
        with open(os.path.join(d, c), "w") as f:
            f.write("content of %s\n" % c)
    path = os.path.join(d, "a")
    r = s.run(["--unsafe", "-c", "cat " + path, "-e",
               'tracepoint:syscalls:sys_enter_openat /cpid == pid && str(args.filename) == "%s"/ '
               '{ printf("written %%d\\n", write_user(args.filename + %d, "b", 1)); }'
               % (path, len(path) - 1)])
    mode = lockdown()
    if mode == "none":
        s.check("write_user() changes the path the child opens (lockdown %s)" % mode,
                r.returncode == 0 and "written 1\n" in r.stdout and
                "content of b\n" in r.stdout and "content of a" not in r.stdout, describe(r))
    else:
        s.check("write_user() under lockdown (%s): gotrace says why it cannot load" % mode,
                r.returncode != 0 and "lockdown" in r.stderr and "content of" not in r.stdout,
                describe(r))

# printf's %gr: the GFP flags of the kernel's own allocations named as the kernel's
# ftrace names them (%pGg): the most frequent values of kmem:kmalloc's gfp_flags in half a
# shell loop, each then looked for in an ftrace instance filtered on that value while the
# loop runs again
if s.case("gfp"):
    import time
    work = "sh -c 'for i in 1 2 3; do ls -R /usr/share/doc; done > /dev/null'"
    r = s.run(["-c", work, "-e", "tracepoint:kmem:kmalloc { @[args.gfp_flags] = count(); }"])
    seen = sorted(((int(n), int(v)) for v, n in re.findall(r"^@\[(\d+)\]: (\d+)$", r.stdout,
                                                           re.M)), reverse=True)[:4]
    tracefs = "/sys/kernel/tracing" if os.path.isdir("/sys/kernel/tracing/events") \
        else "/sys/kernel/debug/tracing"
    inst = os.path.join(tracefs, "instances", "gt-test-gfp-%d" % os.getpid())
    compared = []
    os.mkdir(inst)
    try:
        ev = os.path.join(inst, "events", "kmem", "kmalloc")
        for _, v in seen:
            with open(os.path.join(inst, "trace"), "w"):
                pass  # empties the instance's buffer: the last value's events go
            with open(os.path.join(ev, "filter"), "w") as f:
                f.write("gfp_flags == %d" % v)
            with open(os.path.join(ev, "enable"), "w") as f:
                f.write("1")
            p = subprocess.Popen(["cat", os.path.join(inst, "trace_pipe")],
                                 stdout=subprocess.PIPE, text=True)
            subprocess.run(["sh", "-c", work])  # the same allocations
            import select
            line = p.stdout.readline() if select.select([p.stdout], [], [], 3)[0] else ""
            p.kill()
            p.wait()
            with open(os.path.join(ev, "enable"), "w") as f:
                f.write("0")
            m = re.search(r"gfp_flags=(\S+)", line)
            if m:
                ours = s.run(["-q", "-e", 'BEGIN { printf("%%gr\\n", %d); exit(); }' % v])
                compared.append((v, m.group(1), ours.stdout.strip()))
    finally:
        time.sleep(0.1)
        os.rmdir(inst)
    s.check("%%gr names kmalloc's GFP flags as the kernel's ftrace does (%d values)" % len(compared),
            r.returncode == 0 and len(compared) >= 2 and all(k == o for _, k, o in compared),
            "%s %s\n%s" % (seen, compared, describe(r)))

if s.case("len"):
    adds = s.go_build("adds")
    r = s.run(["-c", adds, "-e", 'go:main.add*:entry { @f[func] = count(); } '
               'go:main.add3:entry { printf("len %d\\n", len(@f)); }'])
    got = [l for l in r.stdout.splitlines() if l.startswith("len ")]
    s.check("len(@m) counts a map's keys in a probe",
            # the two programs at add3's entry run in an unspecified order
            r.returncode == 0 and got[0] in ("len 0", "len 1") and got[1:] == ["len 4", "len 4"],
            describe(r))

if s.case("for-percpu"):
    # getppid() from a child pinned to each CPU: the counts are per CPU. After the
    # probes are detached, END's loop must see the totals the map dump shows.
    import re
    import signal
    tr = s.start(["-e", 'BEGIN { printf("READY\\n"); } '
                  'tracepoint:syscalls:sys_enter_getppid /comm == "gt-percpu"/ { '
                  '@c[1] = count(); @s[1] = sum(3); @mx[1] = max(cpu); @cpus[cpu] = 1; } '
                  'END { for ($kv : @c) { printf("loop count %d\\n", $kv.1); } '
                  'for ($kv : @s) { printf("loop sum %d\\n", $kv.1); } '
                  'for ($kv : @mx) { printf("loop max %d\\n", $kv.1); } }'])
    ready = wait_for_line(tr, "READY", 20)
    cpus = sorted(os.sched_getaffinity(0))
    for cpu in cpus[:4]:
        subprocess.run(["taskset", "-c", str(cpu), "python3", "-c",
                        "import ctypes, os\n"
                        "ctypes.CDLL(None).prctl(15, b'gt-percpu', 0, 0, 0)\n"
                        "for _ in range(50): os.getppid()"], check=True)
    tr.send_signal(signal.SIGINT)
    out, err = collect(tr, 30)

    def one(pat):
        m = re.search(pat, out, re.M)
        return m.group(1) if m else None
    ncpus = len(re.findall(r"^@cpus\[\d+\]: 1$", out, re.M))
    s.check("a for loop over a per-CPU aggregation adds every CPU's value up",
            ready and tr.returncode == 0 and ncpus == len(cpus[:4]) and
            one(r"^loop count (\d+)$") == one(r"^@c\[1\]: (\d+)$") == str(50 * ncpus) and
            one(r"^loop sum (\d+)$") == one(r"^@s\[1\]: (\d+)$") == str(150 * ncpus) and
            one(r"^loop max (\d+)$") == one(r"^@mx\[1\]: (\d+)$") == str(cpus[:4][-1]),
            out + err)

if s.case("pid-filter"):
    # under -c, profile and tracepoint probes count the traced process only
    import re
    loop = s.go_build("loop")
    r = s.run(["-c", loop + " 20000000", "-e", 'profile:hz:499 { @p[pid] = count(); } '
               'tracepoint:raw_syscalls:sys_enter { @s[pid] = count(); }'])
    child = re.search(r"^pid=(\d+) ", r.stdout, re.M)
    pkeys = re.findall(r"^@p\[(\d+)\]: \d+$", r.stdout, re.M)
    skeys = re.findall(r"^@s\[(\d+)\]: \d+$", r.stdout, re.M)
    s.check("under -c, profile: and tracepoint: probes see only the traced process",
            r.returncode == 0 and child is not None and pkeys == [child.group(1)] and
            skeys == [child.group(1)], describe(r))

if s.case("cpid"):
    # cpid is the -c command's pid, as the command itself says it (its own $$), from
    # BEGIN on, and a filter on it sees the command's writes only
    import re
    r = s.run(["-c", "sh -c 'echo $$; echo two'", "-e",
               'BEGIN { printf("cpid %d\\n", cpid); } '
               'tracepoint:syscalls:sys_enter_write /pid == cpid/ { @w[pid == cpid] = count(); }'])
    own = re.findall(r"^(\d+)$", r.stdout, re.M)
    s.check("cpid is the -c command's pid from BEGIN on, the one it echoes",
            r.returncode == 0 and own and re.search(r"^cpid %s$" % own[0], r.stdout, re.M)
            and re.search(r"^@w\[1\]: 2$", r.stdout, re.M), describe(r))

# -l without a target lists tracepoints as bpftrace 0.17 does (the oracle, when installed)
if s.case("list"):
    import shutil
    for pat, verbose in (("tracepoint:raw_syscalls:*", False), ("t:sched:sched_process_e*", False),
                         ("tracepoint:syscalls:sys_enter_read*", True)):
        args = ["-lv" if verbose else "-l", pat]
        r = s.run(args)
        s.check("%s lists tracepoints" % " ".join(args),
                r.returncode == 0 and r.stdout.startswith("tracepoint:"), describe(r))
        if shutil.which("bpftrace"):
            b = subprocess.run(["bpftrace", *args], capture_output=True, text=True)
            s.check("%s prints what bpftrace prints" % " ".join(args),
                    b.stdout == r.stdout, "bpftrace:\n%s\ngotrace:\n%s" % (b.stdout, r.stdout))
    # the kernel's types from its BTF: names, and definitions with -v
    for args in (["-l", "struct task_s*"], ["-lv", "struct fd"], ["-lv", "enum bpf_map_type"],
                 ["-l", "union bpf_*"]):
        r = s.run(args)
        b = subprocess.run(["bpftrace", *args], capture_output=True, text=True)
        s.check("%s prints what bpftrace prints" % " ".join(args),
                r.returncode == 0 and b.stdout == r.stdout and r.stdout.strip() != "",
                "bpftrace:\n%s\ngotrace:\n%s" % (b.stdout[:2000], describe(r)))
    # current bpftrace's list of patterns: each as alone, in order
    r = s.run(["-lv", "struct fd, enum bpf_map_type"])
    one = s.run(["-lv", "struct fd"]).stdout + s.run(["-lv", "enum bpf_map_type"]).stdout
    s.check("-lv 'struct fd, enum bpf_map_type' lists both, as each alone",
            r.returncode == 0 and r.stdout == one and "struct fd {" in one, describe(r))
    r = s.run(["-l", "usdt:*"])
    s.check("-l of a probe type gotrace does not attach says so",
            r.returncode == 2 and "usdt probes cannot be listed (gotrace does not support "
            "them yet)" in r.stderr, describe(r))

# software: perf events sample on every CPU; -l lists them with the tracepoints
if s.case("software"):
    r = s.run(["-e", 'software:cpu-clock:100000 { @c = count(); } interval:ms:200 { exit(); }'])
    s.check("software:cpu-clock fires", r.returncode == 0 and "@c: " in r.stdout and
            int(r.stdout.split("@c: ")[1].split()[0]) > 0, describe(r))
    r = s.run(["-l", "*ware:*"])
    s.check("-l lists software: and hardware: events",
            r.returncode == 0 and "software:cpu-clock:" in r.stdout.splitlines() and
            "hardware:cycles:" not in r.stdout and "hardware:cpu-cycles:" in r.stdout, describe(r))

# --info: what this kernel allows, found by trying; this machine kind has uprobe_multi
if s.case("info"):
    r = s.run(["--info"])
    rel = tuple(int(x) for x in re.match(r"(\d+)\.(\d+)", os.uname().release).groups())
    if os.environ.get("GT_NO_UPROBE_MULTI") == "1":
        path = "perf-event uprobes: one per site (GT_NO_UPROBE_MULTI=1)"
    elif rel >= (6, 6):
        path = "uprobe_multi: one link per program"
    else:  # tests/kernels: Debian's 6.1 under qemu
        path = "tracefs uprobe events: one per program, all its sites (no uprobe_multi: kernel before 6.6)"
    # 6.11 made a uprobe's stack at `push %rbp` hold the caller; older kernels may have it
    # backported (tried for real by --info, runtime/features.c)
    caller = re.search(r"^  uprobe at push %rbp keeps the caller: (yes|no)$", r.stdout, re.M)
    s.check("--info reports features and the attach path",
            r.returncode == 0 and "perf_event_array: yes" in r.stdout and
            "ringbuf: yes" in r.stdout and
            ("uprobe_multi: yes" if rel >= (6, 6) else "uprobe_multi: no") in r.stdout and
            path in r.stdout and caller is not None and
            (rel < (6, 11) or caller.group(1) == "yes"), describe(r))
    s.check("--info leaves nothing loaded", not bpf_leftovers(), bpf_leftovers())

s.check("nothing left attached", not bpf_leftovers(), bpf_leftovers())
s.finish()
