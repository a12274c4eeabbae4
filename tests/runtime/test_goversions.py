"""Go releases gotrace did not build: real, stripped programs of Go 1.16 to 1.27 that
ship as binaries inside npm packages (`npm pack` fetches a tarball without installing
anything). Functions come from .gopclntab (three layouts: 1.16, 1.18, 1.20+; Go 1.26
left the header's text start out), the version from build info or, when that is
stripped too, from runtime.buildVersion found in the data, and the goroutine offsets
from the version table. The registry unreachable: skipped, or failed in CI."""

import os
import subprocess

from gtlib import Suite, describe

s = Suite("goversions")

# label, npm package, file in its tarball, arguments, Go release inside (from `strings`)
PROGRAMS = [
    ("go1.16", "esbuild-linux-64@0.12.0", "package/bin/esbuild", "--version", "go1.16.3"),
    ("go1.17", "esbuild-linux-64@0.13.0", "package/bin/esbuild", "--version", "go1.17.1"),
    ("go1.18", "esbuild-linux-64@0.14.30", "package/bin/esbuild", "--version", "go1.18"),
    ("go1.20", "@esbuild/linux-x64@0.18.0", "package/bin/esbuild", "--version", "go1.20.5"),
    ("go1.22", "@esbuild/linux-x64@0.23.0", "package/bin/esbuild", "--version", "go1.22.4"),
    ("go1.23", "@esbuild/linux-x64@0.25.5", "package/bin/esbuild", "--version", "go1.23.8"),
    ("go1.25", "@esbuild/linux-x64@0.27.0", "package/bin/esbuild", "--version", "go1.25.4"),
    # no .go.buildinfo at all: the version comes from runtime.buildVersion in .data
    ("go1.26", "@esbuild/linux-x64@0.28.2", "package/bin/esbuild", "--version", "go1.26.5"),
    ("go1.27", "lefthook-linux-x64@2.2.2", "package/bin/lefthook", "version", "go1.27.0"),
]


def fetch(spec, member):
    return s.npm_program(spec, member)


bins = {}
for label, spec, member, args, gover in PROGRAMS:
    if s.case(label) or s.case("goexit") or s.case("stack-abi"):
        b = fetch(spec, member)
        with open(b, "rb") as f:
            data = f.read()
        # what is tested is what the label says: the release string is in the binary
        if not s.check("%s: %s holds %s" % (label, spec, gover),
                       gover.encode() in data and b"\x7fELF" == data[:4]):
            continue
        bins[label] = (b, args)

# 1. goid at main.main is 1 (main goroutine), on every release from the table.
for label, (b, args) in bins.items():
    if label == "go1.16" or not s.case(label):
        continue
    r = s.run(["-c", "%s %s" % (b, args), "-e", 'go:main.main:entry { printf("goid=%d\\n", goid); }'])
    s.check("%s: goid at main.main is 1" % label,
            r.returncode == 0 and r.stdout.count("goid=1\n") == 1, describe(r))
    # .gopclntab names runtime.goexit1 and its ABI0 wrapper alike: one is .abi0
    r = s.run(["-l", "go:runtime.goexit1*", "-b", b])
    s.check("%s: functions from .gopclntab (-l)" % label,
            r.returncode == 0 and sorted(r.stdout.split()) ==
            # the signature where gotrace has type data of the release (data/gotypes)
            ["go:runtime.goexit1" + ("()" if label in ("go1.26", "go1.27") else ""),
             "go:runtime.goexit1.abi0"], describe(r))

# 2. Goroutines ending in runtime.goexit1 have distinct, plausible goids (esbuild
# bundles with a goroutine per file and per stage).
js = os.path.join(s.work, "js")
os.makedirs(js, exist_ok=True)
for i in range(6):
    with open(os.path.join(js, "m%d.js" % i), "w") as f:
        f.write(('import {v%d} from "./m%d.js"\nexport const v%d = v%d + 1\n' % (i + 1, i + 1, i, i + 1))
                if i < 5 else "export const v5 = 1\n")
for label in ("go1.17", "go1.25", "go1.26"):
    if label not in bins or not s.case("goexit"):
        continue
    b = bins[label][0]
    r = s.run(["-c", "%s --bundle %s/m0.js --outfile=%s/out-%s.js" % (b, js, js, label), "-e",
               "go:runtime.goexit1:entry { @[goid] = count(); }"])
    keys = [l for l in r.stdout.splitlines() if l.startswith("@[")]
    ids = [int(l[2:l.index("]")]) for l in keys]
    s.check("%s goexit: goroutines report distinct goids > 1, each ending once" % label,
            r.returncode == 0 and len(ids) >= 5 and len(set(ids)) == len(ids) and
            min(ids) > 1 and all(l.endswith("]: 1") for l in keys), describe(r))

# 3. Go 1.16 passes arguments on the stack and is not in the table: clear messages,
# while what needs neither works.
if "go1.16" in bins and s.case("stack-abi"):
    b, args = bins["go1.16"]
    r = s.run(["-c", "%s %s" % (b, args), "-e", 'go:main.main:entry { printf("%d\\n", arg0); }'])
    s.check("stack-abi: arg0 on Go 1.16 is a clear error at its location",
            r.returncode != 0 and "1:37: error: arg0: this program is built with go1.16.3, "
            "which passes arguments on the stack" in r.stderr and "arg(+8(%sp)):s64" in r.stderr,
            describe(r))
    r = s.run(["-c", "%s %s" % (b, args), "-e", 'go:main.main:entry { printf("%d\\n", goid); }'])
    s.check("stack-abi: goid on Go 1.16 is refused with the reason",
            r.returncode != 0 and "built with go1.16.3: goid, durations and call depth need "
            "Go 1.17 or later" in r.stderr, describe(r))
    r = s.run(["-c", "%s %s" % (b, args), "-e",
               'go:main.main:entry { printf("%s %d\\n", func, arg(+8(%sp)):s64 >= 0); }'])
    s.check("stack-abi: func and stack fetch rules work on Go 1.16",
            r.returncode == 0 and "main.main 1\n" in r.stdout, describe(r))

s.finish()
