"""The manual page and the bash completion. man/gotrace.8 is clean under
`groff -man -ww` and its OPTIONS section names every option `gotrace --help` lists and
every one the parser takes (src/cli/main.c); every builtin of src/sema/builtins.def is in
it. completions/gotrace.bash registers itself for gotrace and completes options, -f's
formats, and after go: the Go functions of the -b, -c or -p target (a Go program built
here), both as COMP_WORDS arrive pre-joined and as bash really splits them (at ':', with
COMP_LINE and readline's word as $2). No BPF: runs without root too."""

import os
import re
import shutil
import subprocess
import time

from gtlib import REPO, Suite, describe


class ManSuite(Suite):
    def require_bpf(self):
        pass  # nothing here loads BPF


s = ManSuite("completion")
MAN = os.path.join(REPO, "man", "gotrace.8")
COMPLETION = os.path.join(REPO, "completions", "gotrace.bash")


def man_text():
    """The page's source with roff's escapes for '-' and fonts taken out."""
    with open(MAN) as f:
        t = f.read()
    t = t.replace("\\-", "-").replace("\\(aq", "'").replace("\\(dq", '"').replace("\\e", "\\")
    return re.sub(r"\\f[BIRP]|\\c|\\~|\\&", "", t)


def section(text, name):
    """The lines of section NAME (.SH NAME up to the next .SH)."""
    m = re.search(r"^\.SH %s\n(.*?)(?=^\.SH |\Z)" % re.escape(name), text, re.M | re.S)
    return m.group(1) if m else ""


def has_word(text, word):
    return re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(word), text) is not None


# -- the manual page ---------------------------------------------------------------
if s.case("groff"):
    if shutil.which("groff") is None:
        s.check("groff is installed (groff-base)", False, "no groff on PATH")
    else:
        r = subprocess.run(["groff", "-man", "-ww", "-z", MAN], capture_output=True,
                           text=True)
        s.check("groff -man -ww -z man/gotrace.8 prints nothing and exits 0",
                r.returncode == 0 and r.stdout == "" and r.stderr == "", describe(r))

if s.case("options"):
    text = man_text()
    opts_sec = section(text, "OPTIONS")
    r = s.run(["--help"])
    listed = []
    in_opts = False
    for line in r.stdout.splitlines():
        if line.startswith("OPTIONS"):
            in_opts = True
        elif in_opts and re.match(r"\s+-", line):
            # "  -b, --binary PATH   ...", "  -k, -kk   ...": the option words first
            for word in re.findall(r"(?:^|,)\s*(--?[\w-]+)", line.split("  ", 2)[1]):
                listed.append(word)
    s.check("--help lists options", r.returncode == 0 and len(listed) >= 25, describe(r))
    missing = [o for o in listed if not has_word(opts_sec, o)]
    s.check("every option --help lists is in the man page's OPTIONS", not missing,
            "missing: %s" % missing)
    s.check("--help ends by pointing at gotrace(8)",
            r.stdout.rstrip("\n").splitlines()[-1].endswith("see gotrace(8).") if r.stdout
            else False, describe(r))

    # the parser's own list: long options and getopt's letters (hidden ones too)
    with open(os.path.join(REPO, "src", "cli", "main.c")) as f:
        main_c = f.read()
    longs = ["--" + n for n in re.findall(r'\{"([\w-]+)", (?:no|required|optional)_argument',
                                            main_c)]
    shorts = ["-" + c for c in re.search(r'getopt_long\(argc, argv, "\+?([^"]*)"',
                                         main_c).group(1) if c != ":"]
    missing = [o for o in longs + shorts if not has_word(opts_sec, o)]
    s.check("every option the parser takes (%d) is in the man page's OPTIONS" %
            len(longs + shorts), len(longs) >= 15 and not missing, "missing: %s" % missing)

    with open(os.path.join(REPO, "src", "sema", "builtins.def")) as f:
        defs = f.read()
    names = [m.group(2) for m in re.finditer(r'^(IDENT|CALL|BOTH)\(\w+, "(\w+)"(.*?)\)$', defs,
                                             re.M | re.S)
             if "BF_FUNCGRAPH" not in m.group(3) and "BF_LATER" not in m.group(3)]
    # arg0 ... arg8 is written as a range
    covered = has_word(text, "arg0") and has_word(text, "arg8")
    missing = [n for n in names if not has_word(text, n) and
               not (covered and re.fullmatch(r"arg[0-8]", n))]
    s.check("every builtin of builtins.def (%d) is in the man page" % len(names),
            len(names) >= 60 and not missing, "missing: %s" % missing)
    formats = re.findall(r"'(\w+)'", re.search(r'"Valid formats: ([^"]*)"', main_c).group(1))
    missing = [f for f in formats if not has_word(section(text, "OUTPUT FORMATS"), "-f " + f)]
    s.check("every output format main.c takes (%s) has its entry" % ", ".join(formats),
            {"text", "json", "folded", "pprof"} <= set(formats) and not missing,
            "missing: %s" % missing)
    for sec in ("ENVIRONMENT", "FILES", "EXIT STATUS", "EXAMPLES", "SEE ALSO"):
        s.check("the page has %s" % sec, section(text, sec).strip() != "")
    s.check("SEE ALSO names bpftrace(8)",
            re.search(r"bpftrace\s*\(8\)", section(text, "SEE ALSO")) is not None)
    env = set()
    for root, _, files in os.walk(os.path.join(REPO, "src")):
        for name in files:
            if name.endswith(".c"):
                with open(os.path.join(root, name)) as f:
                    src = f.read()
                env.update(re.findall(r'getenv\("((?:GT_|XDG_)\w+)"\)', src))
                env.update("GT_" + n for n in re.findall(r'gt_getenv\("(\w+)"\)', src))
    missing = sorted(e for e in env if not has_word(section(text, "ENVIRONMENT"), e))
    s.check("every GT_*/XDG_* variable the source reads (%d) is in ENVIRONMENT" % len(env),
            len(env) >= 7 and not missing, "missing: %s" % missing)


# -- the bash completion -----------------------------------------------------------
DRIVE = r'''
source "$1" || exit 9
text_given=$2 text=$3 line=$4 cword=$5
shift 5
COMP_WORDS=("$@")
COMP_CWORD=${cword:-$((${#COMP_WORDS[@]} - 1))}
if [[ -n $line ]]; then
    COMP_LINE=$line COMP_POINT=${#line}
fi
COMPREPLY=()
if ((text_given)); then
    _gotrace "${COMP_WORDS[0]}" "$text" "${COMP_WORDS[COMP_CWORD - 1]}"
else
    _gotrace
fi
printf '%s\n' "${COMPREPLY[@]}"
'''


def complete(words, text=None, line="", cword=None):
    """COMPREPLY for COMP_WORDS=WORDS, the cursor on word CWORD (default the last); TEXT:
    what readline hands the function as $2; LINE: COMP_LINE. Returns (replies,
    CompletedProcess)."""
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", DRIVE, "drive", COMPLETION,
                        "1" if text is not None else "0", text or "", line,
                        "" if cword is None else str(cword), *words],
                       capture_output=True, text=True, timeout=30, env=s.env)
    return [w for w in r.stdout.split("\n") if w], r


if s.case("complete-registered"):
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c",
                        'source "$1" && complete -p gotrace', "x", COMPLETION],
                       capture_output=True, text=True)
    s.check("sourcing the completion registers it: complete -p gotrace",
            r.returncode == 0 and "-F _gotrace" in r.stdout and r.stdout.rstrip().endswith(
                " gotrace") and r.stderr == "", describe(r))

if s.case("complete-options"):
    got, r = complete([s.gotrace, "--no-c"])
    s.check("gotrace --no-c completes --no-cache (and nothing that does not start so)",
            "--no-cache" in got and all(w.startswith("--no-c") for w in got) and
            r.returncode == 0, "%s\n%s" % (got, describe(r)))
    got, r = complete([s.gotrace, "-"])
    s.check("gotrace - offers short and long options",
            {"-e", "-c", "-p", "-b", "-l", "-f", "--funcgraph", "--dry-run"} <= set(got),
            "%s\n%s" % (got, describe(r)))

if s.case("complete-formats"):
    r = s.run(["-f", "?"])
    formats = re.findall(r"'(\w+)'", r.stderr.partition("Valid formats:")[2])
    got, r = complete([s.gotrace, "-f", ""])
    s.check("gotrace -f <TAB> offers the output formats gotrace lists, json among them",
            "json" in got and {"text", "folded", "pprof"} <= set(got) and
            sorted(got) == sorted(formats), "%s\n%s" % (got, describe(r)))
    got, r = complete([s.gotrace, "-f", "fo"])
    s.check("gotrace -f fo completes folded", got == ["folded"], "%s\n%s" % (got, describe(r)))

if s.case("complete-go"):
    b = s.go_build("adds")
    funcs = ["go:main.add", "go:main.add1", "go:main.add2", "go:main.add3", "go:main.main"]
    got, r = complete([s.gotrace, "-b", b, "-e", "go:main."])
    s.check("gotrace -b BIN -e go:main. completes the functions of BIN",
            "go:main.add" in got and set(got) == set(funcs) and r.stderr == "",
            "%s\n%s" % (got, describe(r)))

    # as bash splits it: "go:main." is go, :, main. in COMP_WORDS; readline replaces main.
    line = "%s -b %s -e go:main." % (s.gotrace, b)
    got, r = complete([s.gotrace, "-b", b, "-e", "go", ":", "main."], text="main.", line=line)
    s.check("split at ':' as bash does, the candidates replace readline's word (main.add)",
            set(got) == {f[3:] for f in funcs}, "%s\n%s" % (got, describe(r)))
    got, r = complete([s.gotrace, "-b", b, "-e", "go", ":"], text="", line=line[:-5])
    s.check("after go: alone, every function (main.add among them)",
            "main.add" in got and len(got) > 100, "%d: %s\n%s" % (len(got), got[:5], describe(r)))

    got, r = complete([s.gotrace, "-b", b, "-e", "'go:main.add2"], text="go:main.add2",
                      line="%s -b %s -e 'go:main.add2" % (s.gotrace, b))
    s.check("in a quoted program, one function left completes to its :entry and :return",
            got == ["go:main.add2:entry", "go:main.add2:return"], "%s\n%s" % (got, describe(r)))
    got, r = complete([s.gotrace, "-e", "go:main.add:r", "--binary=" + b], cword=2)
    s.check("go:FUNC:r completes :return (the target given after, as --binary=)",
            got == ["go:main.add:return"], "%s\n%s" % (got, describe(r)))

    got, r = complete([s.gotrace, "-c", "'%s 1 2'" % b, "-e", "go:main.add3"])
    s.check("the target of -c 'CMD ARGS' is CMD",
            got == ["go:main.add3:entry", "go:main.add3:return"], "%s\n%s" % (got, describe(r)))

    spin = s.go_build("spin")
    p = subprocess.Popen([spin, "30"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.2)
        got, r = complete([s.gotrace, "-p", str(p.pid), "-e", "go:main."])
    finally:
        p.kill()
        p.wait()
    s.check("the target of -p PID is /proc/PID/exe", set(got) == {"go:main.Tick", "go:main.main"},
            "%s\n%s" % (got, describe(r)))

    got, r = complete([s.gotrace, "-b", b, "--funcgraph", "main.add"])
    s.check("--funcgraph completes bare function names",
            set(got) == {f[3:] for f in funcs[:4]}, "%s\n%s" % (got, describe(r)))

    got, r = complete([s.gotrace, "-b", "/nonexistent/prog", "-e", "go:main."])
    s.check("a missing target completes nothing, quietly",
            got == [] and r.stderr == "" and r.returncode == 0, describe(r))
    got, r = complete([s.gotrace, "-b", COMPLETION, "-e", "go:main."])
    s.check("a target that is not a Go binary completes nothing, quietly",
            got == [] and r.stderr == "" and r.returncode == 0, describe(r))

s.finish()
