"""Every examples/*.gt compiles and passes the kernel verifier (--dry-run) against the
bundled demo program; the calls example also runs for real."""

import glob
import os

from gtlib import REPO, Suite, describe

s = Suite("examples")
demo = s.go_build("demo", src_dir=os.path.join(REPO, "examples", "demo"))
for path in sorted(glob.glob(os.path.join(REPO, "examples", "*.gt"))):
    name = os.path.basename(path)
    if not s.case(name):
        continue
    r = s.run(["--dry-run", "-b", demo, path, "1"])
    s.check("dry-run " + name, r.returncode == 0 and r.stdout == "", describe(r))

if s.case("run"):
    r = s.run(["-c", demo + " 2", os.path.join(REPO, "examples", "calls.gt")])
    lines = r.stdout.splitlines()
    s.check("calls.gt traces the demo",
            r.returncode == 0 and len(lines) == 8 and lines[0].startswith("main.add   a=1   b=2"),
            describe(r))
s.finish()
