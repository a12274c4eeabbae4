"""Which Go the tests build with, and other Go releases for the release matrix.

- go(): the go command of scripts/find-go.sh ($GT_GO, else the newest go found), the
  one every test target is built with unless a test asks for a release.
- releases(): the newest patch release of every Go minor from 1.21 on that the module
  proxy offers (`go list -m -versions golang.org/toolchain`).
- toolchain("go1.23.12"): that release's go command, downloaded once (a module of the
  proxy) into the toolchain cache, $GT_GO_CACHE or ~/.cache/gotrace-tests/go, which CI
  keeps between builds; nothing is written into the repository.
- debian_go(): Debian's golang-go (1.19), installed by scripts/install-deps.sh.
All of them return None (with the reason in last_error) when the release cannot be had."""

import os
import re
import subprocess

TESTS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(TESTS)
last_error = ""
_go = None


def go():
    global _go
    if _go is None:
        r = subprocess.run([os.path.join(REPO, "scripts", "find-go.sh")], capture_output=True,
                           text=True)
        if r.returncode != 0:
            raise RuntimeError(r.stderr.strip())
        _go = r.stdout.strip()
    return _go


def version(gocmd):
    """'go1.26.8' of a go command, or None."""
    r = subprocess.run([gocmd, "env", "GOVERSION"], capture_output=True, text=True,
                       env=dict(os.environ, GOTOOLCHAIN="local"))
    return r.stdout.strip() if r.returncode == 0 else None


def key(v):
    """'go1.21.13' -> (1, 21, 13); release candidates and betas sort low and are not
    releases (None)."""
    m = re.fullmatch(r"go(\d+)\.(\d+)(?:\.(\d+))?", v)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)) if m else None


def cache_dir():
    d = os.environ.get("GT_GO_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "gotrace-tests", "go")
    os.makedirs(d, exist_ok=True)
    return d


def _env():
    d = cache_dir()
    # GO111MODULE=on: `go list -m` refuses to run under a caller's GO111MODULE=auto
    # outside a module (bench/run.sh exports it)
    return dict(os.environ, GOMODCACHE=os.path.join(d, "mod"), GOFLAGS="-modcacherw",
                GOPATH=os.path.join(d, "gopath"), GOTOOLCHAIN="local", GO111MODULE="on")


def releases(first_minor=21):
    """['go1.21.13', 'go1.22.12', ...]: the newest patch of each minor >= 1.FIRST_MINOR
    the proxy lists for linux/amd64, oldest first; [] when the proxy cannot be asked.
    The list is kept in the cache for a day, so that runs on one day see one matrix."""
    global last_error
    path = os.path.join(cache_dir(), "toolchain-versions.txt")
    import time
    text = None
    if os.path.exists(path) and time.time() - os.path.getmtime(path) < 86400:
        text = open(path).read()
    if not text:
        try:
            r = subprocess.run([go(), "list", "-m", "-versions", "golang.org/toolchain"],
                               capture_output=True, text=True, env=_env(), timeout=120)
        except subprocess.TimeoutExpired:
            last_error = "go list -m -versions golang.org/toolchain: timed out"
            return []
        if r.returncode != 0:
            last_error = "go list -m -versions golang.org/toolchain: " + r.stderr.strip()
            return []
        text = r.stdout
        with open(path + ".tmp", "w") as f:
            f.write(text)
        os.rename(path + ".tmp", path)
    newest = {}
    for m in re.finditer(r"v0\.0\.1-(go[0-9.a-z]+)\.linux-amd64", text):
        k = key(m.group(1))
        if k and k[:2] >= (1, first_minor) and (k[:2] not in newest or
                                                k > key(newest[k[:2]])):
            newest[k[:2]] = m.group(1)
    return [newest[k] for k in sorted(newest)]


def toolchain(release):
    """The go command of RELEASE ('go1.23.12'), downloaded once into the cache; None
    (reason in last_error) when it cannot be had."""
    global last_error
    env = _env()
    # the download is checked against sum.golang.org; where only the proxy is reachable
    # (the checksum database is not), GOSUMDB=off is the fallback, and is said so
    for extra in ({}, {"GOSUMDB": "off"}):
        try:
            r = subprocess.run([go(), "env", "GOROOT"], capture_output=True, text=True,
                               env=dict(env, GOTOOLCHAIN=release, **extra), timeout=600)
        except subprocess.TimeoutExpired:
            last_error = "%s: download timed out" % release
            return None
        root = r.stdout.strip()
        gocmd = os.path.join(root, "bin", "go")
        if r.returncode == 0 and os.access(gocmd, os.X_OK) and version(gocmd) == release:
            if extra:
                print("note: %s downloaded with GOSUMDB=off (checksum database unreachable)"
                      % release)
            return gocmd
        last_error = "GOTOOLCHAIN=%s go env GOROOT: %s" % (release, r.stderr.strip()[-400:])
    return None


def debian_go():
    for g in ("/usr/lib/go-1.19/bin/go", "/usr/lib/go/bin/go"):
        if os.access(g, os.X_OK) and (version(g) or "").startswith("go1.19"):
            return g
    return None
