"""tools/*.gt on the workshop app (examples/workshop, built at test time): each tool runs
under -c and its output must show what its header promises; then every tool compiles
(--dry-run) against the docker CLI (Go 1.24, DWARF) where the machine has it, and
against stripped Go 1.26 and 1.27 programs from npm (the tools that read Go values by name
from gotrace's type data of those releases, data/gotypes)."""
import os
import re

from gtlib import TESTS, Suite, bpf_leftovers, describe

s = Suite("tools")
REPO = os.path.dirname(TESTS)
TOOLS = os.path.join(REPO, "tools")
app = s.go_build("workshop", src_dir=os.path.join(REPO, "examples", "workshop"))

ARGS = {"funclat": ["main.*Work"]}
ALL = sorted(f[:-3] for f in os.listdir(TOOLS) if f.endswith(".gt"))


def run_tool(name, secs="2s"):
    return s.run(["-q", "-c", "%s -d %s" % (app, secs), os.path.join(TOOLS, name + ".gt"),
                  *ARGS.get(name, [])], timeout=120)


def hist_of(out, key):
    """{bucket low bound: count} of the histogram printed as @KEY: (in us)."""
    i = out.find(key + ": \n")
    if i < 0:
        return {}
    body = out[i + len(key) + 3:].split("\n\n")[0]
    b = {}
    for line in body.splitlines():
        m = re.match(r"^\[(\d+)(K|M)?,.*?\|?\s+(\d+) \|", line)
        if m:
            b[int(m.group(1)) * {None: 1, "K": 1024, "M": 1 << 20}[m.group(2)]] = int(m.group(3))
    return b


def top_bucket(h):
    return max((lo for lo, n in h.items() if n), default=-1)


def stack_keys(out, map_name):
    """[(frames text, rest of the line)] of a stack-keyed map."""
    return re.findall(r"^@%s\[\n(.*?)\n(?:, [^\n\]]*)?\]: ?([^\n]*)$" % map_name, out,
                      re.M | re.S)


if s.case("run"):
    ok = {}
    for name in ALL:
        r = run_tool(name)
        out = r.stdout
        good, why = r.returncode == 0, describe(r)
        if name == "funclat":
            slow, fast = hist_of(out, "@us[main.slowWork]"), hist_of(out, "@us[main.fastWork]")
            good &= top_bucket(slow) >= 16384 and 0 <= top_bucket(fast) < top_bucket(slow)
        elif name == "httplat":
            slow, fast = hist_of(out, "@us[GET, /slow]"), hist_of(out, "@us[GET, /fast]")
            good &= top_bucket(slow) >= 16384 and 0 <= top_bucket(fast) < 16384
        elif name == "mutexwait":
            keys = stack_keys(out, "waits")
            # one of its two probes is not in any binary: skipped without a word
            good &= any("main.lockedWork" in k for k, _ in keys) and \
                "optional probe skipped" not in r.stderr
        elif name == "chanblock":
            good &= "@recv_us[main.chanWork" in out or "@send_us[main.chanWork" in out
        elif name == "allocsize":
            good &= bool(hist_of(out, "@bytes")) and any(
                "main.allocWork" in k for k, _ in stack_keys(out, "top"))
        elif name == "gcpause":
            m = re.search(r"^@pauses: (\d+)$", out, re.M)
            w = re.search(r"^@worst_us: (\d+)$", out, re.M)
            good &= m is not None and int(m.group(1)) > 0 and w is not None
        elif name == "goroutines":
            edges = re.findall(r"^created by main\.spawnWork: goroutine (\d+) -> (\d+)$", out, re.M)
            # goids come from per-P batches: a child's may be below its parent's
            good &= len(edges) > 10 and all(int(p) > 0 and p != c for p, c in edges) and \
                len({c for _, c in edges}) == len(edges) and \
                bool(hist_of(out, "@life_us")) and "@created[main.spawnWork]: " in out
            # one row per function, however many `go` statements (call addresses) it
            # has (issue 24: main.main, runtime.gcenable were printed two or three times)
            created = re.findall(r"^@created\[(.*)\]: (\d+)$", out, re.M)
            names = [k for k, _ in created]
            good &= len(names) == len(set(names)) and "main.main" in names and \
                dict(created).get("main.spawnWork") == str(len(edges))
        elif name == "panics":
            p = re.findall(r"^panic in goroutine (\d+): odd request \d+$", out, re.M)
            rc = re.findall(r"^recovered in goroutine (\d+)$", out, re.M)
            good &= len(p) > 5 and sorted(p) == sorted(rc) and "main.mayPanic" in out
        elif name == "schedlat":
            good &= sum(hist_of(out, "@runnable_us").values()) > 100
        elif name == "gopark":
            keys = " ".join(k for k, _ in stack_keys(out, "parks"))
            good &= "time.Sleep" in keys and "runtime.chanrecv" in keys
        elif name == "syscalls":
            keys = " ".join(k for k, _ in stack_keys(out, "calls"))
            good &= "syscall.read" in keys and bool(hist_of(out, "@in_syscall_us"))
        s.check("tools/%s.gt on the workshop app shows what its header says" % name, good,
                why[-6000:])
        ok[name] = good
    s.check("every tool was run", set(ok) == set(ALL) and len(ALL) >= 11, sorted(ok))

# Every tool compiles against a Go 1.24 binary with DWARF (the image's docker CLI) ...
DOCKER = os.environ.get("GT_DOCKER", "/usr/local/bin/docker")
if s.case("docker") and os.access(DOCKER, os.X_OK):
    for name in ALL:
        if name == "httplat":
            # the docker CLI serves no HTTP; no Go 1.24 server with DWARF is at hand
            r = s.run(["--dry-run", "-b", DOCKER, os.path.join(TOOLS, name + ".gt")])
            s.check("tools/httplat.gt on docker (no net/http server): one clear error",
                    r.returncode == 2 and "no function 'net/http.serverHandler.ServeHTTP'"
                    in r.stderr, describe(r))
            continue
        r = s.run(["--dry-run", "-b", DOCKER, os.path.join(TOOLS, name + ".gt")] +
                  (["github.com/docker/cli/cli.*"] if name == "funclat" else []))
        s.check("tools/%s.gt compiles for docker (Go 1.24, DWARF)" % name,
                r.returncode == 0, describe(r))

# ... and against stripped Go 1.26 and 1.27 programs: the runtime's types from the data
if s.case("stripped"):
    for what, spec, member in (("Go 1.26 esbuild", "@esbuild/linux-x64@0.28.2",
                                "package/bin/esbuild"),
                               ("Go 1.27 lefthook", "lefthook-linux-x64@2.2.2",
                                "package/bin/lefthook")):
        b = s.npm_program(spec, member)
        for name in ALL:
            if name == "httplat" and "lefthook" in what:
                # lefthook serves no HTTP: no serverHandler.ServeHTTP to probe
                r = s.run(["--dry-run", "-b", b, os.path.join(TOOLS, name + ".gt")])
                s.check("tools/httplat.gt on lefthook (no net/http server): one clear error",
                        r.returncode == 2 and "no function 'net/http.serverHandler."
                        "ServeHTTP'" in r.stderr, describe(r))
                continue
            r = s.run(["--dry-run", "-b", b, os.path.join(TOOLS, name + ".gt")] +
                      (["main.*"] if name == "funclat" else []))
            s.check("tools/%s.gt compiles for a stripped %s" % (name, what),
                    r.returncode == 0, describe(r))

left = bpf_leftovers()
s.check("nothing left attached", not left, left)
s.finish()
