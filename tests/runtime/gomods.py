"""Programs nobody here wrote, built from their modules at test time into the toolchain
cache (gotool.cache_dir()), never into the repository: test_realprogs' and
test_bigservers'. One module cache and one build cache serve every release."""

import os
import shutil
import subprocess
import tempfile
import time

from gtlib import built_lock, gotool

NET_ERRORS = ("dial tcp", "proxy.golang.org", "i/o timeout", "no such host",
              "connection refused", "TLS handshake", "403 Forbidden", "404 Not Found")


def build_env(s, gocmd):
    d = gotool.cache_dir()
    env = dict(s.env, GOMODCACHE=os.path.join(d, "mod"), GOPATH=os.path.join(d, "gopath"),
               GOCACHE=os.path.join(d, "gocache"), GOFLAGS="-modcacherw",
               GOTOOLCHAIN="local", CGO_ENABLED="0")
    env["PATH"] = os.path.dirname(gocmd) + os.pathsep + env.get("PATH", "")
    return env


def install(s, gocmd, name, spec, out, fetch=False, wrap=False, timeout=900):
    """OUT, GOCMD's build of NAME (module spec MODULE/PKG@VERSION): `go install` into a
    temporary GOBIN, renamed into place when whole; locked while built (a GT_PREBUILD
    run may be building it). WRAP: built from a module that requires it, for a module
    without a version list on the proxy (which `go install X@V` asks for: deprecation
    notes); the same go.mod graph, the same packages. FETCH: `-n`, which loads the
    packages (downloading their modules into the shared cache) and compiles nothing.
    The proxy unreachable: s.unavailable(); another failure: RuntimeError."""
    if fetch:
        return _install(s, gocmd, name, spec, out, fetch, wrap, timeout)
    with built_lock(out):
        return _install(s, gocmd, name, spec, out, fetch, wrap, timeout)


def _install(s, gocmd, name, spec, out, fetch, wrap, timeout):
    if os.path.exists(out):
        return out
    os.makedirs(os.path.dirname(out), exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="build-", dir=os.path.dirname(out))
    env = build_env(s, gocmd)
    pkg, version = spec.split("@")
    try:
        for extra in ({}, {"GOSUMDB": "off"}):
            e = dict(env, GOBIN=tmp, **extra)
            if wrap:
                with open(os.path.join(tmp, "go.mod"), "w") as f:
                    f.write("module gotrace.test/wrap\n\ngo 1.21\n\nrequire %s %s\n"
                            % (pkg, version))
                cmd = [gocmd, "build", "-mod=mod", "-o", os.path.join(tmp, name), pkg]
            else:
                cmd = [gocmd, "install", spec]
            if fetch:
                cmd.insert(2, "-n")
            t0 = time.time()
            try:
                r = subprocess.run(cmd, cwd=tmp, env=e, capture_output=True, text=True,
                                   timeout=timeout)
            except subprocess.TimeoutExpired:
                s.unavailable("%s: %s timed out" % (gotool.version(gocmd), " ".join(cmd)))
            if r.returncode == 0:
                break
            if "verifying" not in r.stderr and "sum.golang" not in r.stderr:
                break
        if r.returncode != 0:
            if any(w in r.stderr for w in NET_ERRORS):
                s.unavailable("module proxy unreachable (%s: %s)"
                              % (" ".join(cmd[1:]), r.stderr.strip()[-300:]))
            raise RuntimeError("%s failed:\n%s" % (" ".join(cmd), r.stderr))
        if fetch:
            print("fetched %s's modules in %.0f s" % (spec, time.time() - t0))
            return out
        print("built %s with %s in %.0f s" % (spec, gotool.version(gocmd), time.time() - t0))
        os.rename(os.path.join(tmp, name), out)
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
