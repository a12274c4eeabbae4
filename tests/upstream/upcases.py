"""bpftrace's runtime test cases, for run_upstream.py: what a case is (its file's
blocks: NAME, PROG or RUN, EXPECT..., REQUIRES...), which probe types its program uses,
whether it can run on this machine and against gotrace (Env, exclusion), its cache key,
and the category of its outcome."""

import hashlib
import os
import re
import shlex
import subprocess
import sys

# Probe types: the name (or alias) used in a program -> canonical name.
PROBE_TYPES = {
    "BEGIN": "BEGIN", "END": "END", "begin": "BEGIN", "end": "END",
    "interval": "interval", "i": "interval",
    "profile": "profile", "p": "profile",
    "tracepoint": "tracepoint", "t": "tracepoint",
    "fentry": "fentry", "kfunc": "fentry", "f": "fentry",
    "fexit": "fexit", "kretfunc": "fexit", "fr": "fexit",
    "kprobe": "kprobe", "k": "kprobe",
    "kretprobe": "kretprobe", "kr": "kretprobe",
    "uprobe": "uprobe", "u": "uprobe",
    "uretprobe": "uretprobe", "ur": "uretprobe",
    "usdt": "usdt", "U": "usdt",
    "watchpoint": "watchpoint", "w": "watchpoint",
    "asyncwatchpoint": "asyncwatchpoint", "aw": "asyncwatchpoint",
    "hardware": "hardware", "h": "hardware",
    "software": "software", "s": "software",
    "rawtracepoint": "rawtracepoint", "rt": "rawtracepoint",
    "iter": "iter", "it": "iter",
    "self": "self", "bench": "bench", "test": "test",
}
ALLOWED_PROBES = {"BEGIN", "END", "interval", "profile", "tracepoint",
                  "fentry", "fexit"}
# Aliases gotrace may lack although it has the probe type.
ALIASES = {"i": "interval", "t": "tracepoint", "p": "profile",
           "begin": "BEGIN", "end": "END", "f": "fentry", "fr": "fexit",
           "kfunc": "fentry", "kretfunc": "fexit"}

# REQUIRES_FEATURE name -> regexes on `bpftrace --info` (any match = present).
FEATURES = {
    "loop": [r"Loop support: yes"],
    "probe_read_kernel": [r"probe_read_kernel: yes"],
    "btf": [r"\bbtf: yes"],
    "kfunc": [r"\bkfunc: yes", r"\bfentry: yes"],
    "fentry": [r"\bkfunc: yes", r"\bfentry: yes"],
    "dpath": [r"\bdpath: yes"],
    "uprobe_refcount": [r"uprobe refcount.*: yes"],
    "signal": [r"send_signal: yes"],
    "iter:task": [r"iter:task: yes"],
    "iter:task_file": [r"iter:task_file: yes"],
    "iter": [r"\biter: yes", r"iter:task: yes"],
    "libpath_resolv": [r"bcc library path resolution: yes"],
    "dwarf": [r"libdw \(DWARF support\): yes"],
    "kprobe_multi": [r"kprobe_multi: yes"],
    "kprobe_session": [r"kprobe_session: yes"],
    "uprobe_multi": [r"uprobe_multi: yes"],
    "skboutput": [r"skboutput: yes"],
    "get_tai_ns": [r"get_tai_ns: yes", r"get_ktime_ns: yes"],
    "get_func_ip": [r"get_func_ip: yes"],
    "jiffies64": [r"jiffies64: yes"],
    "lookup_percpu_elem": [r"lookup_percpu_elem: yes"],
    "dwunwind": [r"dwunwind.*: yes"],
    "blazesym": [r"blazesym.*: yes"],
    "aot": [],
}


# ---------------------------------------------------------------- parsing

class Expect:
    def __init__(self, mode, text):
        self.mode = mode      # regex text text_none regex_none file json
        self.text = text

    def to_json(self):
        return {"mode": self.mode, "text": self.text}


class Case:
    def __init__(self, file, lineno, raw):
        self.file = file
        self.lineno = lineno
        self.raw = raw
        self.name = ""
        self.run = ""
        self.prog = ""
        self.expects = []
        self.timeout = None
        self.before = []
        self.after = ""
        self.setup = ""
        self.cleanup = ""
        self.kernel_min = ""
        self.kernel_max = ""
        self.requires = []
        self.env = {}
        self.arch = []
        self.features = set()
        self.neg_features = set()
        self.will_fail = False
        self.new_pidns = False
        self.skip_if_env = None
        self.return_code = 0
        self.localize_ts = -1
        self.key = ""
        self.ident = ""

    @property
    def exact(self):
        return any(e.mode in ("file", "json") for e in self.expects)


class ParseError(Exception):
    pass


def detect_dialect(tests_dir):
    path = os.path.join(tests_dir, "runtime", "engine", "parser.py")
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return "modern"
    return "modern" if "EXPECT_REGEX" in text else "legacy"


def split_blocks(path):
    """Yields (first line number, [lines]) per case block."""
    with open(path, errors="replace") as f:
        lines = f.readlines()
    block, start = [], 0
    for n, line in enumerate(lines, 1):
        if line.startswith("#"):
            continue
        if line.strip("\r\n") == "":
            if block:
                yield start, block
            block = []
            continue
        if not block:
            start = n
        block.append(line if line.endswith("\n") else line + "\n")
    if block:
        yield start, block


def parse_block(file, lineno, lines, dialect):
    case = Case(file, lineno, "".join(lines))
    prev = ""
    for raw in lines:
        body = raw.rstrip("\n")
        if dialect == "modern" and prev and body[:len(prev) + 1].isspace():
            cont = body[len(prev) + 1:]
            if prev == "PROG":
                case.prog += "\n" + cont
                continue
            if prev in ("EXPECT", "EXPECT_REGEX") and case.expects:
                case.expects[-1].text += "\n" + cont
                continue
        if dialect == "legacy":
            parts = body.split()
            if not parts:
                continue
            d, val = parts[0], " ".join(parts[1:])
        else:
            parts = body.strip().split(None, 1)
            if not parts:
                continue
            d = parts[0]
            val = parts[1] if len(parts) > 1 else ""
        prev = d
        if d == "NAME":
            case.name = val
        elif d == "RUN":
            case.run = val
        elif d == "PROG":
            case.prog = val
        elif d == "EXPECT":
            case.expects.append(Expect("regex" if dialect == "legacy" else "text", val))
        elif d == "EXPECT_NONE":
            case.expects.append(Expect("regex_none" if dialect == "legacy" else "text_none", val))
        elif d == "EXPECT_REGEX":
            case.expects.append(Expect("regex", val))
        elif d == "EXPECT_REGEX_NONE":
            case.expects.append(Expect("regex_none", val))
        elif d == "EXPECT_FILE":
            case.expects.append(Expect("file", val))
        elif d == "EXPECT_JSON":
            case.expects.append(Expect("json", val))
        elif d == "TIMEOUT":
            case.timeout = int(val.strip())
        elif d == "BEFORE":
            case.before.append(val)
        elif d == "AFTER":
            case.after = val
        elif d == "SETUP":
            case.setup = val
        elif d == "CLEANUP":
            case.cleanup = val
        elif d == "MIN_KERNEL":
            case.kernel_min = val
        elif d == "MAX_KERNEL":
            case.kernel_max = val
        elif d == "REQUIRES":
            case.requires.append(val)
        elif d == "ENV":
            for item in val.split():
                k, _, v = item.partition("=")
                case.env[k] = v
        elif d == "ARCH":
            case.arch = [a.strip() for a in val.split("|") if a.strip()]
        elif d == "REQUIRES_FEATURE":
            for f in val.split():
                if f.startswith("!"):
                    case.neg_features.add(f[1:])
                else:
                    case.features.add(f)
        elif d == "WILL_FAIL":
            case.will_fail = True
        elif d == "NEW_PIDNS":
            case.new_pidns = True
        elif d == "SKIP_IF_ENV_HAS":
            k, _, v = val.partition("=")
            case.skip_if_env = (k, v)
        elif d == "RETURN_CODE":
            case.return_code = int(val.strip())
        elif d == "LOCALIZE_TIMESTAMPS":
            case.localize_ts = int(val.strip())
        else:
            raise ParseError("%s:%d: unknown directive %s" % (file, lineno, d))
    if not case.name:
        raise ParseError("%s:%d: case without NAME" % (file, lineno))
    if not case.run and not case.prog:
        raise ParseError("%s:%d: case without RUN or PROG" % (file, lineno))
    if case.timeout is None:
        if dialect == "legacy":
            raise ParseError("%s:%d: case without TIMEOUT" % (file, lineno))
        case.timeout = 5
    return case


def read_cases(tests_dir, dialect):
    rt = os.path.join(tests_dir, "runtime")
    cases = []
    for fname in sorted(os.listdir(rt)):
        path = os.path.join(rt, fname)
        if fname.startswith(".") or not os.path.isfile(path):
            continue
        seen = {}
        for lineno, block in split_blocks(path):
            case = parse_block(fname, lineno, block, dialect)
            n = seen.get(case.name, 0) + 1
            seen[case.name] = n
            case.ident = "%s.%s" % (fname, case.name) + ("#%d" % n if n > 1 else "")
            cases.append(case)
    return cases


# ------------------------------------------------------- probe extraction

def strip_comments_strings(text):
    """Drops comments, replaces string and char literals by "" / ''."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            out.append(" ")
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def top_level(text):
    """The program text outside braces (probe lists, predicates)."""
    text = strip_comments_strings(text)
    text = re.sub(r"(?m)^\s*#.*$", " ", text)
    out, depth = [], 0
    for c in text:
        if c == "{":
            depth += 1
            out.append(" ")
        elif c == "}":
            depth = max(0, depth - 1)
            out.append(" ")
        elif depth == 0:
            out.append(c)
    return "".join(out)


ATTACH_RE = re.compile(r"(?:^|(?<=[\s,;)]))([A-Za-z_][A-Za-z0-9_]*)(?=:)")
SPECIAL_RE = re.compile(r"(?<![\w$@.:])(BEGIN|END|begin|end)(?![\w:])")


def program_probe_names(text):
    top = top_level(text)
    names = set(m.group(1) for m in ATTACH_RE.finditer(top) if m.group(1) in PROBE_TYPES)
    names |= set(SPECIAL_RE.findall(top))
    return names


def run_parts(case, tests_dir):
    """Splits a RUN line into (programs, script files, other tokens, -l patterns)."""
    progs, files, others, patterns = [], [], [], []
    try:
        toks = shlex.split(case.run.replace("{{BPFTRACE}}", " __TOOL__ "))
    except ValueError:
        toks = case.run.replace("{{BPFTRACE}}", " __TOOL__ ").split()
    i = 0
    while i < len(toks):
        t = toks[i]
        if t in ("-e", "--expr") and i + 1 < len(toks):
            progs.append(toks[i + 1])
            i += 2
            continue
        if t in ("-l", "--list", "-lv") and i + 1 < len(toks) and not toks[i + 1].startswith("-") \
                and toks[i + 1] not in ("|", "&&", "||", ";"):
            patterns.append(toks[i + 1])
            i += 2
            continue
        p = os.path.join(tests_dir, t)
        if t.endswith(".bt") and os.path.isfile(p):
            files.append(t)
        else:
            others.append(t)
        i += 1
    return progs, files, others, patterns


def case_probes(case, tests_dir):
    """The probe type names (as written) that the case uses."""
    names = set()
    if case.prog:
        names |= program_probe_names(case.prog)
    if case.run:
        progs, files, others, patterns = run_parts(case, tests_dir)
        for p in progs:
            names |= program_probe_names(p)
        for f in files:
            with open(os.path.join(tests_dir, f), errors="replace") as fh:
                names |= program_probe_names(fh.read())
        for tok in others + patterns:
            m = re.match(r"^([A-Za-z_]+):", tok)
            if m and m.group(1) in PROBE_TYPES:
                names.add(m.group(1))
    return names


def referenced_files(case, tests_dir):
    files = []
    if case.run:
        files += run_parts(case, tests_dir)[1]
    files += [e.text for e in case.expects if e.mode in ("file", "json")]
    return files


# -------------------------------------------------------------- selection

class Env:
    """Facts about this machine and the reference bpftrace."""

    def __init__(self, bpftrace, tests_dir, extra_probes):
        self.bpftrace = bpftrace
        self.tests_dir = tests_dir
        self.allowed = set(ALLOWED_PROBES) | set(PROBE_TYPES.get(p, p) for p in extra_probes)
        self.kernel = kernel_tuple(os.uname().release)
        self.machine = os.uname().machine.lower()
        self.endian = "le" if sys.byteorder == "little" else "be"
        self._info = None
        self._req = {}

    def info(self):
        if self._info is None:
            try:
                r = subprocess.run([self.bpftrace, "--info"], stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, timeout=60,
                                   universal_newlines=True, errors="replace")
                self._info = r.stdout
            except (OSError, subprocess.TimeoutExpired):
                self._info = ""
        return self._info

    def feature(self, name):
        return any(re.search(rx, self.info()) for rx in FEATURES.get(name, []))

    def requirement(self, cmd):
        if cmd not in self._req:
            try:
                r = subprocess.run(cmd, shell=True, cwd=self.tests_dir,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   stdin=subprocess.DEVNULL, timeout=10,
                                   start_new_session=True)
                self._req[cmd] = r.returncode == 0
            except subprocess.TimeoutExpired:
                self._req[cmd] = False
        return self._req[cmd]


def kernel_tuple(s):
    return tuple(int(x) for x in re.findall(r"\d+", s.split("-")[0])[:3])


def arch_ok(case, env):
    if not case.arch:
        return True
    host = {env.machine, env.endian}
    pos = {a for a in case.arch if not a.startswith("!")}
    neg = {a[1:] for a in case.arch if a.startswith("!")}
    if pos and not (host & pos):
        return False
    return not (host & neg)


def exclusion(case, env):
    """None if the case is standalone, otherwise (rule, detail)."""
    everything = case.raw
    if not arch_ok(case, env):
        return ("arch", "|".join(case.arch))
    if "{{BPFTRACE_AOTRT}}" in case.run or re.search(r"(^|\s)--aot\b", case.run):
        return ("aot", "")
    if case.before or case.after or case.setup or case.cleanup or case.new_pidns \
            or "{{BEFORE_PID}}" in everything:
        return ("helpers", "BEFORE/AFTER/SETUP/CLEANUP")
    m = re.search(r"\btest(progs|libs)/\S*", everything)
    if m:
        return ("testprogs", m.group(0))
    names = case_probes(case, env.tests_dir)
    bad = sorted(n for n in names if PROBE_TYPES[n] not in env.allowed)
    if bad:
        return ("probes", ",".join(PROBE_TYPES[n] for n in bad))
    if case.kernel_min and kernel_tuple(case.kernel_min) > env.kernel:
        return ("kernel", "min " + case.kernel_min)
    if case.kernel_max and kernel_tuple(case.kernel_max) < env.kernel:
        return ("kernel", "max " + case.kernel_max)
    for f in sorted(case.features):
        if not env.feature(f):
            return ("features", f)
    for f in sorted(case.neg_features):
        if env.feature(f):
            return ("features", "!" + f)
    for r in case.requires:
        if not env.requirement(r):
            return ("requires", r)
    if case.skip_if_env and os.environ.get(case.skip_if_env[0], "") == case.skip_if_env[1]:
        return ("env", "=".join(case.skip_if_env))
    return None


def case_key(case, dialect, tests_dir):
    h = hashlib.sha256()
    h.update(dialect.encode())
    h.update(case.raw.encode())
    for f in referenced_files(case, tests_dir):
        try:
            with open(os.path.join(tests_dir, f), "rb") as fh:
                h.update(fh.read())
        except OSError:
            h.update(b"missing:" + f.encode())
    return "%s::%s::%s" % (case.file, case.name, h.hexdigest()[:16])


# ------------------------------------------------------------ categories

def categorize(case, res, tests_dir):
    """(category, detail) for a gotrace failure."""
    err = res.get("first_error", "")
    for e in res.get("failed_expects", []):
        # bpftrace says "ERROR: text", gotrace "gotrace: error: text" / "file:l:c: error: text"
        m = re.match(r"^\^?ERROR: (.+)$", e["text"])
        if m and e["mode"] in ("regex", "text"):
            rest = m.group(1) if e["mode"] == "regex" else re.escape(m.group(1))
            try:
                if re.search(rest, res["output"], re.M):
                    return "diagnostic format (ERROR: prefix)", normalize_error(m.group(1))
            except re.error:
                pass
    m = re.search(r"unknown probe type '([^']+)'", err)
    if m:
        t = m.group(1)
        if t in ALIASES:
            return "probe alias", "%s: (%s)" % (t, ALIASES[t])
        return "probe type not supported", PROBE_TYPES.get(t, t)
    m = (re.search(r"invalid option -- '(.)'", err) or
         re.search(r"unrecognized option '([^'=]+)", err) or
         re.search(r"option requires an argument -- '(.)'", err))
    if m:
        o = m.group(1)
        return "command-line option", (o if o.startswith("--") else "-" + o)
    m = re.search(r"error: (.*?) (?:is|are) not supported yet", err) or \
        re.search(r"error: (.*)not supported yet", err)
    if m:
        return "not supported yet", m.group(1).replace("'", "").strip()
    m = re.search(r"unknown function '([^']+)'", err)
    if m:
        return "unknown function", m.group(1)
    m = re.search(r"unknown (\w+(?: \w+)?) '([^']+)'", err)
    if m:
        return "unknown " + m.group(1), m.group(2)
    if "syntax error" in err:
        m = re.search(r"syntax error, (unexpected [^,]+)", err)
        return "syntax error", m.group(1) if m else "syntax error"
    if "positional parameter" in err or (err and re.search(r"\$(\d+|#)", case.prog or case.run)
                                          and "$" in err):
        return "positional parameter", err[-60:]
    m = re.search(r"invalid character (\S+)", err)
    if m:
        if m.group(1) == "'#'":
            return "preprocessor (#include/#define)", "invalid character '#'"
        return "invalid character", m.group(1)
    if err and re.search(r"(^|\s)(-l|--list|-lv)(\s|$)", case.run):
        return "listing (-l)", normalize_error(err)
    if err and re.match(r"^\S*gotrace: ", err):
        return "command-line behaviour", normalize_error(err)
    if err:
        return "other error", normalize_error(err)
    failed = res.get("failed_expects") or []
    rc_ok = res.get("timed_out") or case.will_fail or res["rc"] == case.return_code
    if failed and rc_ok:
        e = failed[0]
        content = e["text"]
        if e["mode"] in ("file", "json"):
            try:
                with open(os.path.join(tests_dir, e["text"]), errors="replace") as f:
                    content = f.read()
            except OSError:
                pass
        at_limit = "stopped at time limit: " if res.get("timed_out") else ""
        if re.search(r"Attaching \d* ?probe", content):
            return "'Attaching N probes...' line", at_limit + e["text"][:40]
        if re.search(r"(?i)bpftrace", content):
            return "bpftrace's name in expected output", at_limit + e["text"][:40]
        if res.get("timed_out") and not re.sub(r"(?m)^Attaching \d+ probes?\.\.\.$", "",
                                               res["output"]).strip():
            return "timeout", "no output, no exit within %ss" % case.timeout
        if case.env:
            return "wrong output", at_limit + "with ENV %s" % " ".join(sorted(case.env))
        return "wrong output", at_limit + "%s %s" % (e["mode"], e["text"][:40])
    if res.get("timed_out"):
        return "timeout", "no exit within %ss" % case.timeout
    return "exit status", "rc %d" % res["rc"]


def normalize_error(err):
    text = re.sub(r"^\S*?:\d+:\d+: ", "", err)
    text = re.sub(r"^\S*gotrace: ", "", text)
    text = re.sub(r"^error: ", "", text)
    text = re.sub(r"'[^']*'", "'…'", text)
    text = re.sub(r"\d+", "N", text)
    return text[:80]
