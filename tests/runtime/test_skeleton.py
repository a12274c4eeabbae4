"""Walking skeleton acceptance: one-liners on real Go targets, wildcards, fetch rules,
entry probes under stack growth, -p attach/detach, -c child lifecycle."""

import os
import shutil
import re
import signal
import subprocess
import tempfile
import time

from gtlib import Suite, bpf_leftovers, collect, describe, wait_for_line

s = Suite("skeleton")

# 1. The design card's one-liner, verbatim: prints B for every call, nothing else.
if s.case("pair"):
    pair = s.go_build("pair")
    r = s.run(["-c", pair + " 7", "-e", "go:main.Add:entry < print(arg(+8(%ax)):s64) >"])
    s.check("one-liner prints B of every Add call, nothing else",
            r.returncode == 0 and r.stdout == "".join("%d\n" % i for i in range(1, 8)),
            describe(r))
    s.check("nothing left attached after -c run", not bpf_leftovers(), bpf_leftovers())
    r = s.run(["-c", pair + " 3", "-e",
               'go:main.Add:entry { printf("A=%d B=%d\\n", arg(+0(%ax)):s64, arg(+8(%ax)):s64); }'])
    s.check("braces form, two fetches",
            r.returncode == 0 and r.stdout == "A=100 B=1\nA=200 B=2\nA=300 B=3\n", describe(r))
    r = s.run(["-c", pair + " 3", "-e", 'go:main.Add:entry { $p = (int64 *)arg0; '
               'printf("A=%d B=%d\\n", *$p, *($p + 1)); }'])
    s.check("pointer casts and dereference read what the fetch rules read",
            r.returncode == 0 and r.stdout == "A=100 B=1\nA=200 B=2\nA=300 B=3\n", describe(r))

# 2. Wildcards: every call of add, add1, add2, add3 with its arguments, in call order.
if s.case("adds"):
    adds = s.go_build("adds")
    r = s.run(["-c", adds, "-e", 'go:main.add*:entry { printf("%s %d %d\\n", func, arg0, arg1); }'])
    want = []
    for i in range(3):
        a, b = i, 10 * i
        want += ["main.add3 %d %d" % (a, b), "main.add2 %d %d" % (a, b),
                 "main.add1 %d %d" % (a, b), "main.add %d %d" % (a, b)]
        # add(i, -i): arg1 is a negative int printed with %d
        want += ["main.add %d %d" % (i, -i)]
    s.check("wildcard main.add* prints every call in order with arguments",
            r.returncode == 0 and r.stdout.splitlines() == want, describe(r))
    r = s.run(["-c", adds, "-e", 'go:main.add?:entry { printf("%s\\n", probe); }'])
    got = r.stdout.splitlines()
    s.check("? wildcard and probe builtin",
            r.returncode == 0 and len(got) == 9 and set(got) ==
            {"go:main.add1:entry", "go:main.add2:entry", "go:main.add3:entry"}, describe(r))
    r = s.run(["-c", adds, "-e",
               'go:main.add:entry /arg1 < 0/ { printf("neg %d\\n", arg1); }'])
    s.check("predicate filters events",
            r.returncode == 0 and r.stdout == "neg -1\nneg -2\n", describe(r))

# 3. go-ftrace rule syntax on a quoted method name.
if s.case("student"):
    st = s.go_build("student")
    r = s.run(["-c", st, "-e",
               'go:"main.(*Student).String":entry { printf("%s %d\\n", arg(*+0(%ax)):c64, arg(+16(%ax)):s64); }'])
    s.check("(*Student).String name and age via fetch rules",
            r.returncode == 0 and r.stdout == "Alice 20\nBob 21\nCarol 22\n", describe(r))
    r = s.run(["-c", st, "-e",
               'go:"main.(*Student).String":entry { printf("%s|%d\\n", arg(+0(%ax)):str, arg(+16(%ax)):u8); }'])
    s.check("str fetch reads a Go string header",
            r.returncode == 0 and r.stdout == "Alice|20\nBob|21\nCarol|22\n", describe(r))

# 4. Stack growth re-runs the prologue: one :entry event per call all the same.
if s.case("deep"):
    deep = s.go_build("deep")
    r = s.run(["-c", deep + " 3000 3", "-e", 'go:main.Deep:entry { printf("e\\n"); }'],
              timeout=120)
    m = re.search(r"calls=(\d+)", r.stderr)
    n_events = r.stdout.count("e\n")
    s.check("entry events == calls under stack growth",
            r.returncode == 0 and m is not None and int(m.group(1)) == n_events == 9003,
            "events=%d\n%s" % (n_events, describe(r)))
    s.check("no lost events reported", "Lost" not in r.stderr, r.stderr)

# 5. -p on a running program: events flow; after SIGINT the program runs on unharmed.
if s.case("pid"):
    spin = s.go_build("spin")
    target = subprocess.Popen([spin, "4"], stdout=subprocess.PIPE, text=True)
    first = target.stdout.readline()
    tr = s.start(["-p", str(target.pid), "-e",
                  'BEGIN { printf("READY\\n"); } go:main.Tick:entry { printf("tick %d\\n", arg0); }'])
    # a Tick may fire between the attach and BEGIN's record: count the ticks after READY
    lines = wait_for_line(tr, "READY", 20)
    ready = [i for i, l in enumerate(lines) if "READY" in l]
    lines = lines[ready[-1]:] if ready else lines
    lines += [tr.stdout.readline() for _ in range(3)]
    tr.send_signal(signal.SIGINT)
    out, err = collect(tr, 20)
    ticks = [l for l in lines if l.startswith("tick ")]
    s.check("-p: events flow from the running process",
            len(ticks) == 3 and first.startswith("pid="), "".join(lines) + err)
    s.check("-p: SIGINT ends gotrace with status 0", tr.returncode == 0,
            "status %s\n%s" % (tr.returncode, err))
    s.check("-p: nothing left attached after SIGINT", not bpf_leftovers(), bpf_leftovers())
    rest, _ = target.communicate(timeout=30)
    s.check("-p: the traced program keeps running and exits normally",
            target.returncode == 0 and rest.startswith("ok="),
            "status %s, output %r" % (target.returncode, rest))

# PIE and cgo (external linking) targets: file offsets come from PT_LOAD headers.
if s.case("pie"):
    for label, kw in (("pie", dict(suffix="-pie", flags=["-buildmode=pie"])),
                      ("cgo", dict(suffix="-cgo", flags=["-ldflags=-linkmode=external"], cgo=True))):
        b = s.go_build("pair", **kw)
        r = s.run(["-c", b + " 3", "-e", "go:main.Add:entry { print(arg(+8(%ax)):s64); }"])
        s.check("%s target: events with correct values" % label,
                r.returncode == 0 and r.stdout == "1\n2\n3\n", describe(r))
    # the target named in the probe itself, no -c/-b: system-wide, so filter by comm
    b = s.go_build("pair", suffix="-pie", flags=["-buildmode=pie"])
    tr = s.start(["-e", 'BEGIN { printf("READY\\n"); } go:%s:main.Add:entry { print(arg(+8(%%ax)):s64); exit(); }' % b])
    lines = wait_for_line(tr, "READY", 20)
    subprocess.run([b, "2"], capture_output=True, timeout=30)
    out, err = tr.communicate(timeout=30)
    s.check("go:PATH:FUNC:entry without a target option",
            tr.returncode == 0 and out == "1\n", "%s%s%s" % ("".join(lines), out, err))

# -d bpf: BPF instructions under the script lines they come from.
if s.case("dump"):
    pair = s.go_build("pair")
    r = s.run(["--dry-run", "-d", "bpf", "-b", pair, "-e",
               'go:main.Add:entry\n/arg0 > 0/\n{\n  printf("%d\\n", arg(+8(%ax)):s64);\n}'])
    out = r.stdout
    s.check("-d bpf annotates instructions with script lines",
            r.returncode == 0 and out.startswith("gt_c0_entry0:\n; 1: go:main.Add:entry\n") and
            "; 2: /arg0 > 0/" in out and '; 4:   printf("%d\\n", arg(+8(%ax)):s64);' in out and
            "call 131" in out, describe(r))

    r = s.run(["--dry-run", "-d", "jit", "-b", pair, "-e", 'go:main.Add:entry { printf("x\\n"); }'])
    s.check("-d jit disassembles the kernel's JIT code",
            r.returncode == 0 and r.stdout.startswith("gt_c0_entry0: ") and "bytes of x86-64" in r.stdout
            and " push " in r.stdout, describe(r))

    # -d jit: each source line the kernel holds (BTF line info) above the JIT code it
    # produced. The oracle is -d bpf, made from LLVM's assembly before loading: the
    # same lines in the same order (the verifier may drop dead code, never reorder).
    script = ('go:main.Add:entry\n/arg0 > 0/\n{\n  @n[arg0] = count();\n  $x = arg0 * 2;\n'
              '  printf("%d\\n", $x);\n}\nEND { printf("end\\n"); }\n')
    texts = script.split("\n")

    def src_lines(out, jit):
        """Per program of a -d bpf/-d jit dump: its source lines in order, as ("script",
        N) or (runtime-bpf file, N), a line repeated in a row once; and the dump's lines
        that do not read as a program, an instruction or a source line."""
        progs, bad, cur = {}, [], None
        for l in out.split("\n"):
            m = re.match(r"(\w+):( \d+ bytes of x86-64)?$", l)
            if m and not l.startswith("LBB"):
                cur = progs.setdefault(m.group(1), [])
                continue
            if not l.startswith("; "):
                if l and not (l.startswith("\t") or re.match(r" +[0-9a-f]+: \S", l) or
                              l.startswith("LBB")):
                    bad.append(l)
                continue
            m = (re.match(r"; stdin:(\d+):\d+: (.*)$", l) if jit else
                 re.match(r"; (\d+): (.*)$", l))
            if m:
                k = ("script", int(m.group(1)))
                if m.group(2) != texts[k[1] - 1]:
                    bad.append(l)
            else:
                m = re.match(r"; (runtime-bpf/gt_\w+\.[ch]):(\d+)$", l)
                if not m:
                    bad.append(l)
                    continue
                k = (m.group(1), int(m.group(2)))
            if cur is None:
                bad.append(l)
            elif not cur or cur[-1] != k:
                cur.append(k)
        return progs, bad

    def subsequence(a, b):
        it = iter(b)
        return all(x in it for x in a)

    rb = s.run(["--dry-run", "-d", "bpf", "-b", pair, "-e", script])
    rj = s.run(["--dry-run", "-d", "jit", "-b", pair, "-e", script])
    bpf, bad_b = src_lines(rb.stdout, False)
    jit, bad_j = src_lines(rj.stdout, True)
    # the programs, and under each the subprograms in its image: count()'s gt_agg_0 and
    # the failure count it calls (-d bpf has them as functions of LLVM's assembly)
    names = sorted(jit)
    progs = [n for n in names if n.startswith("gt_c")]
    script_lines = {n: sorted({k[1] for k in jit[n] if k[0] == "script"}) for n in progs}
    s.check("-d jit: each script line with code, FILE:LINE:COL and its text",
            rb.returncode == 0 and rj.returncode == 0 and not bad_j and not bad_b and
            "warning" not in rj.stderr and len(progs) == 2 and
            sorted(set(names) - set(progs)) == ["gt_agg_0", "gt_map_failed"] and
            script_lines.get("gt_c0_entry0") == [1, 2, 4, 5, 6] and
            [v for k, v in script_lines.items() if k != "gt_c0_entry0"] == [[8]],
            "%r %r\n%s" % (script_lines, bad_j + bad_b, describe(rj)))
    # the JIT's prologue (the kernel's, not in LLVM's assembly) may carry the function's
    # own line, its probe's, first
    def body(n):
        j = jit[n]
        return j[1:] if j[:1] == [("script", 1)] and bpf.get(n, [])[:1] != j[:1] else j
    s.check("-d jit: the lines in the order of the program's code (-d bpf's)",
            all(n in bpf and subsequence(body(n), bpf[n]) and
                [k for k in body(n) if k[0] == "script"] ==
                [k for k in bpf[n] if k[0] == "script"] for n in names),
            "jit %r\nbpf %r" % (jit, {n: bpf.get(n) for n in names}))
    # count() is runtime-bpf's gt_agg_add (in gt_agg_0): its lines hold code, not blanks
    # or comments
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

    def code_line(k):
        with open(os.path.join(root, k[0])) as f:
            t = f.read().split("\n")
        return 0 < k[1] <= len(t) and t[k[1] - 1].strip() not in ("", "{", "}") and \
            not re.match(r"/\*|//|\*( |$)", t[k[1] - 1].strip())
    rt_j = [k for n in names for k in jit[n] if k[0] != "script"]
    rt_b = [k for n in names for k in bpf.get(n, []) if k[0] != "script"]
    s.check("-d jit and -d bpf: runtime-bpf's code named FILE:LINE",
            rt_j and {k[0] for k in rt_j} == {"runtime-bpf/gt_maps.c"} and
            all(code_line(k) for k in rt_j) and subsequence(rt_j, rt_b), "%r\n%r" % (rt_j, rt_b))
    # the same text from a file: its lines under the file's name (the compiled-program
    # cache, which the -e run filled, keys on the name as well)
    path = os.path.join(s.work, "jitlines.gt")
    with open(path, "w") as f:
        f.write(script)
    rf = s.run(["--dry-run", "-d", "jit", "-b", pair, path])
    s.check("-d jit: a script file's lines under its path",
            rf.returncode == 0 and
            ("; %s:4:3:   @n[arg0] = count();\n" % path) in rf.stdout and "; stdin:" not in rf.stdout,
            describe(rf))
    # a FIFO named stdin in the current directory: LLVM read ./stdin for an -e script's
    # line text, and blocked there; now nothing is read for a script of no file
    fifodir = tempfile.mkdtemp(dir=s.work)
    os.mkfifo(os.path.join(fifodir, "stdin"))
    try:
        rq = s.run(["--no-cache", "--dry-run", "-d", "jit", "-b", pair, "-e", script],
                   cwd=fifodir, timeout=120)
        ok = rq.returncode == 0 and "; stdin:4:3:   @n[arg0] = count();" in rq.stdout
        why = describe(rq)
    except subprocess.TimeoutExpired:
        ok, why = False, "hung: ./stdin read as the script's text"
    finally:
        shutil.rmtree(fifodir)
    s.check("-e: a FIFO named stdin in the current directory is not read", ok, why)
    # every source line is followed by its instructions: the next line is another
    # source line or an instruction, and the last of a program is not a source line
    lj = rj.stdout.split("\n")
    s.check("-d jit: instructions follow each source line",
            all(re.match(r"; | +[0-9a-f]+: \S", lj[i + 1])
                for i in range(len(lj) - 1) if lj[i].startswith("; ")),
            describe(rj))

# -l lists matching functions with the go: prefix.
if s.case("list"):
    adds = s.go_build("adds")
    r = s.run(["-l", "main.add*", "-b", adds])
    # with DWARF, each name is followed by its Go signature
    s.check("-l lists matching functions",
            r.returncode == 0 and sorted(l.split("(")[0] for l in r.stdout.split("\n") if l) ==
            ["go:main.add", "go:main.add1", "go:main.add2", "go:main.add3"], describe(r))

# BEGIN/END, exit(), builtins and arithmetic in a probe without a target.
if s.case("begin"):
    r = s.run(["-e", 'BEGIN { $x = 6; $y = $x * 7; if ($y == 42) { printf("%d %s %x\\n", $y, "ok", 255); } exit(); } END { printf("end\\n"); }'])
    s.check("BEGIN, variables, if, exit, END",
            r.returncode == 0 and r.stdout == "42 ok ff\nend\n", describe(r))
    r = s.run(["-e", 'BEGIN { printf("%s %d\\n", probe, pid > 0); exit(); }'], banner=True)
    s.check("bpftrace's banner first, probes counted as bpftrace does",
            r.stdout.startswith("Attaching 1 probe...\n"), describe(r))
    r.stdout = r.stdout[len("Attaching 1 probe...\n"):]
    s.check("probe and pid in BEGIN", r.returncode == 0 and r.stdout == "BEGIN 1\n", describe(r))
    r = s.run(["-e", 'BEGIN { printf("%d %s\\n", $1 + 1, $2); exit(); }', "41", "word"])
    s.check("positional parameters", r.returncode == 0 and r.stdout == "42 word\n", describe(r))
    r = s.run(["-", "41", "word"],
              input='BEGIN { printf("%d %s\\n", $1 + 1, $2); exit(); } $3')
    s.check("- reads the script from stdin (diagnostics name it stdin)",
            r.returncode == 2 and "stdin:1:" in r.stderr and "$3" in r.stderr, describe(r))
    r = s.run(["-q", "-f", "json", "-e", 'BEGIN { exit(); } END { }'], banner=True)
    s.check("-q drops the banner", r.returncode == 0 and "attached" not in r.stdout, describe(r))
    r = s.run(["-f", "json", "-e", 'BEGIN { exit(); } END { }'], banner=True)
    s.check("the banner in JSON", r.stdout.startswith(
        '{"type": "attached_probes", "data": {"probes": 2}}\n'), describe(r))
    r = s.run(["-", "41", "word"],
              input='BEGIN { printf("%d %s\\n", $1 + 1, $2); exit(); }')
    s.check("- runs the script from stdin", r.returncode == 0 and r.stdout == "42 word\n",
            describe(r))

s.finish()
