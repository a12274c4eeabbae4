"""The Go release matrix (issue 22): tests/go/matrix built by Debian's Go 1.19, the newest
patch release of every Go minor from 1.21 on (tests/gotool.py: downloaded once into a cache
CI keeps) and the machine's own go, each plain, PIE and, where gcc is, with cgo (external
linking), and each of these stripped too (-ldflags=-s -w). On each, one gotrace run traces
the program and its output is compared with what the program printed of itself: goids (the main goroutine and
workers, from runtime.Stack's header), values by name (a struct split over registers, a
string, a slice passed on the stack, an int, a pointer receiver, map lengths, two
instances of a generic function), map contents (print's %v against fmt's %+v: keys sorted,
8 entries at most and " ..." past them), results at :return (named, unnamed, retval), a source
line's hits (DWARF's line table), ustack at an entry (runtime.Callers with inlined calls,
range-over-func bodies on 1.23+); and `-l` is compared with `go tool nm`. Stripped builds
have no DWARF: names are refused with the clear error, what needs no names (goid, retval
as RAX, ustack, -l) still checked. print() / %v (tests/go/matrix/values.go, issue 24): an
http.Request-shaped struct on the stack, a cobra.Command-sized one through a pointer,
Durations, Times and IPs as their String(), an array past 8 elements, %T and %d / %x of
64-bit fields, each equal to the program's own %+v (pointers and map fields set aside). The module proxy unreachable: skipped, or failed in CI
(GT_REQUIRE_BPF=1). docs/go-versions.md has the matrix and what differs between releases."""

import os
import shutil
import time

import matrixlib
from gtlib import FETCH, PREBUILD, Suite, bpf_leftovers, gotool

s = Suite("gomatrix")
T0 = time.time()

# -- the releases: Debian's 1.19, the proxy's newest of each minor, the machine's go ------
releases = []
deb = gotool.debian_go()
s.check("Debian's Go 1.19 is installed (scripts/install-deps.sh)", deb is not None)
if deb:
    releases.append((gotool.version(deb), deb))
names = gotool.releases()
if not names:
    s.unavailable("the Go module proxy cannot be asked for releases: " + gotool.last_error)
# GT_MATRIX_ENDS=1 (scripts/test.sh's ASan pass; the plain pass runs every release):
# the oldest and newest releases and the machine's go only
if os.environ.get("GT_MATRIX_ENDS", "0") not in ("", "0"):
    names = names[-1:]
if FETCH:  # the downloads only, four at a time (each is network, then ~3 s of unzip)
    import concurrent.futures
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        got = list(ex.map(gotool.toolchain, names))
    for rel, g in zip(names, got):
        s.check("toolchain %s fetched" % rel, g is not None, gotool.last_error)
    print("toolchains: %d in %.0f s" % (len(names), time.time() - T0), flush=True)
    s.finish()
for rel in names:
    picks = [o for o in s.only if o.startswith("go1.")]
    if picks and not any(o in rel or rel in o for o in picks):
        continue
    g = gotool.toolchain(rel)
    if g is None:
        s.unavailable("Go toolchain %s cannot be had: %s" % (rel, gotool.last_error))
    releases.append((rel, g))
mine = gotool.go()
if gotool.version(mine) not in [r for r, _ in releases] + names:
    releases.append((gotool.version(mine), mine))
print("toolchains: %d in %.0f s" % (len(releases), time.time() - T0), flush=True)

# name, go build flags, cgo; a stripped build follows the unstripped one it is a copy of
# (NAME less "-stripped"), whose symbols it is compared with
STRIP = "-ldflags=-s -w"
BUILDS = [("plain", [], False), ("pie", ["-buildmode=pie"], False),
          ("stripped", [STRIP], False), ("pie-stripped", ["-buildmode=pie", STRIP], False)]
if shutil.which("gcc"):
    BUILDS += [("cgo", [], True), ("cgo-stripped", [STRIP], True)]
else:
    print("note: no gcc: the cgo builds are left out")

CHECKS = ["print() as %+v", "goid and values by name", "results at :return", "pointer receiver",
          "map len", "map contents", "map index by key", "source line", "generic instances", "ustack",
          "-l against go tool nm",
          "names refused without DWARF"]


def check_matrix(rel, gocmd, build, flags, cgo):
    pre = "%s/%s" % (rel, build)
    if not any(s.case("%s: %s" % (pre, c)) for c in CHECKS):
        return None
    k = gotool.key(rel)
    files = ["main.go", "values.go"] + (["range.go"] if k >= (1, 23, 0) else []) + (["cgo.go"] if cgo else [])
    t = time.time()
    try:
        b = s.go_build_with(gocmd, "matrix", "%s-%s" % (rel, build), files, flags, cgo)
    except RuntimeError as e:
        s.check("%s: builds" % pre, False, str(e))
        return None
    tb = time.time() - t
    stripped = build.endswith("stripped")
    nm = matrixlib.nm_funcs(gocmd, b)
    if stripped:  # no symbols: those of the unstripped build of the same release
        base = build[:-len("stripped")].rstrip("-") or "plain"
        nm = matrixlib.nm_funcs(gocmd, s.go_build_with(gocmd, "matrix", "%s-%s" % (rel, base),
                                                       files, [f for f in flags if f != STRIP],
                                                       cgo))
    if PREBUILD:  # scripts/test.sh's early builds: the binaries and nm only
        return tb
    gens = matrixlib.generics(nm)
    r = s.run(["-c", b, "-e", matrixlib.script(k, stripped, gens)])
    matrixlib.judge_run(s.check, pre, k, stripped, r, gens)
    # -l against the symbol table (a stripped binary's: that of its unstripped build)
    matrixlib.judge_list(s.check, pre, k, stripped, s.run(["-l", "go:main.*", "-b", b]), nm)
    if stripped:
        matrixlib.judge_refused(s.check, pre, s.run(["-c", b, "-e", matrixlib.REFUSED]), b)
    return tb


times = []
for rel, gocmd in releases:
    for build, flags, cgo in BUILDS:
        t = time.time()
        tb = check_matrix(rel, gocmd, build, flags, cgo)
        if tb is not None:
            times.append("%s/%s build %.1fs, all %.1fs" % (rel, build, tb, time.time() - t))

if PREBUILD:
    print("prebuilt: " + "; ".join(times))
    s.finish()
left = bpf_leftovers()
s.check("nothing left attached", not left, "\n".join(left))
print("times: " + "; ".join(times))
print("matrix: %d releases x %d builds in %.0f s" % (len(releases), len(BUILDS), time.time() - T0))
s.finish()
