"""docs/tutorial.md cannot rot: every lesson's command runs against the workshop app
(examples/workshop, built at test time) and its output must match the lesson's
`<!-- expect: REGEX -->` lines (each REGEX found in some line), as the output printed
in the page did.

    test_tutorial.py --gotrace build/gotrace [--capture]

--capture rewrites each lesson's output block with what the command prints now (long
outputs cut to their first lines), after checking the expectations: how the page's
outputs are made, never by hand."""
import os
import re
import shutil
import subprocess
import sys

from gtlib import TESTS, Suite, bpf_leftovers

CAPTURE = "--capture" in sys.argv
if CAPTURE:
    sys.argv.remove("--capture")
s = Suite("tutorial")
REPO = os.path.dirname(TESTS)
DOC = os.path.join(REPO, "docs", "tutorial.md")
MAX_LINES = 30

LESSON = re.compile(r"^## Lesson (\d+): (.*)$", re.M)
BLOCK = re.compile(r"```sh\n(.*?)\n```\n(.*?)```\n(.*?)```\n", re.S)
EXPECT = re.compile(r"<!-- expect: (.*?) -->")


def lessons(text):
    """[(number, title, command, expects, (start, end) of the output block's body)]."""
    heads = list(LESSON.finditer(text))
    out = []
    for i, h in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        m = BLOCK.search(text, h.end(), end)
        if not m:
            out.append((int(h.group(1)), h.group(2), None, [], None))
            continue
        out.append((int(h.group(1)), h.group(2), m.group(1), EXPECT.findall(m.group(2)),
                    (m.start(3), m.end(3))))
    return out


# The reader's setup: ./workshop and tools/ in the working directory, gotrace on PATH.
work = os.path.join(s.work, "tutorial")
shutil.rmtree(work, ignore_errors=True)
os.makedirs(os.path.join(work, "bin"))
app = s.go_build("workshop", src_dir=os.path.join(REPO, "examples", "workshop"))
shutil.copy(app, os.path.join(work, "workshop"))
os.symlink(os.path.join(REPO, "tools"), os.path.join(work, "tools"))
os.symlink(os.path.abspath(s.gotrace), os.path.join(work, "bin", "gotrace"))
env = dict(s.env)
env["PATH"] = os.path.join(work, "bin") + os.pathsep + env.get("PATH", "")

text = open(DOC).read()
found = lessons(text)
s.check("at least 12 lessons, numbered in order, each with a command and an expectation",
        len(found) >= 12 and [n for n, *_ in found] == list(range(1, len(found) + 1)) and
        all(cmd and exp for _, _, cmd, exp, _ in found),
        [(n, t, bool(c), len(e)) for n, t, c, e, _ in found])

outputs = {}
for n, title, cmd, expects, span in found:
    if not cmd or not s.case("lesson %d" % n):
        continue
    r = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=work, env=env,
                       capture_output=True, text=True, timeout=180)
    # `| head` closes the pipe early: the tracer then stops on its own, not a failure
    rc_ok = r.returncode == 0 or ("| head" in cmd and r.returncode in (141, 1))
    lines = r.stdout.splitlines()
    missing = [e for e in expects if not any(re.search(e, l) for l in lines)]
    s.check("lesson %d (%s): the command runs and shows what the lesson says" % (n, title),
            rc_ok and not missing,
            "status %s, missing %s\n--- stdout\n%s--- stderr\n%s" %
            (r.returncode, missing, r.stdout[-4000:], r.stderr[-2000:]))
    if len(lines) > MAX_LINES:
        lines = lines[:MAX_LINES] + ["..."]
    outputs[n] = "".join(l + "\n" for l in lines)

if CAPTURE and not s.failed:
    # from the last block back, so earlier spans stay valid
    for n, _, cmd, _, span in reversed(found):
        if n in outputs and span:
            text = text[:span[0]] + outputs[n] + text[span[1]:]
    with open(DOC, "w") as f:
        f.write(text)
    print("captured %d outputs into %s" % (len(outputs), DOC))
elif not CAPTURE:
    for n, _, _, _, span in found:
        s.check("lesson %d shows a captured output" % n,
                span is not None and text[span[0]:span[1]].strip() != "", n)

left = bpf_leftovers()
s.check("nothing left attached", not left, left)
s.finish()
