"""The compiled-program cache: a second identical run takes the BPF object from
$XDG_CACHE_HOME/gotrace without running LLVM and prints exactly what the first printed;
a change of the script, an argument, the target binary or gotrace itself misses; a
truncated or damaged entry is rebuilt without an error; --no-cache bypasses it.

Trust (issue 23): an entry is loaded into the kernel as is, so the cache is used only
when the directory and the entry are the effective user's own, writable by no one else,
and not symbolic links. Each case plants a forged entry, the object of another program
under this program's key (the key text is predictable, the checksum no secret), where
another user could: the run must print this program's output, not the planted one's,
say why with -v, and leave the planted tree as it was."""

import difflib
import os
import pwd
import shutil
import stat
import struct

from gtlib import Suite, bpf_leftovers, describe

s = Suite("cache")
cache = os.path.join(s.work, "xdg-cache")
shutil.rmtree(cache, ignore_errors=True)
s.env["XDG_CACHE_HOME"] = cache
ENTRIES = os.path.join(cache, "gotrace")

PROG = 'go:main.add*:entry { @[func] = count(); @s = sum(arg0); } END { printf("end %d\\n", $1); }'


def state(r):
    """'hit' or 'miss' as -v says, or None."""
    for line in r.stderr.splitlines():
        if "cache: hit" in line:
            return "hit"
        if "cache: miss" in line:
            return "miss"
    return None


def entries():
    return sorted(f for f in os.listdir(ENTRIES) if f.endswith(".gto")) if os.path.isdir(ENTRIES) else []


if s.case("hit"):
    b = s.go_build("adds")
    r1 = s.run(["-v", "-c", b, "-e", PROG, "7"])
    r2 = s.run(["-v", "-c", b, "-e", PROG, "7"])
    s.check("a first run misses and stores, the same run again hits",
            state(r1) == "miss" and state(r2) == "hit" and len(entries()) == 1,
            describe(r1) + describe(r2))
    s.check("a hit prints exactly what the miss printed",
            r1.returncode == 0 and r2.returncode == 0 and r1.stdout == r2.stdout and
            "end 7" in r1.stdout, describe(r1) + describe(r2))
    r = s.run(["-v", "--no-cache", "-c", b, "-e", PROG, "7"])
    s.check("--no-cache compiles", state(r) is None and "cache: not used" in r.stderr and
            r.stdout == r1.stdout, describe(r))

    # everything that changes the object misses
    r = s.run(["-v", "-c", b, "-e", PROG.replace("count()", "count() "), "7"])
    s.check("another script text misses", state(r) == "miss", describe(r))
    r = s.run(["-v", "-c", b, "-e", PROG, "8"])
    s.check("another argument misses", state(r) == "miss" and "end 8" in r.stdout, describe(r))
    b2 = os.path.join(s.work, "bin", "adds-copy")
    shutil.copy(b, b2)
    r = s.run(["-v", "-c", b2, "-e", PROG, "7"])
    s.check("another target binary misses", state(r) == "miss", describe(r))
    os.utime(b2, (1, 1))  # the same path, rebuilt: another mtime
    r = s.run(["-v", "-c", b2, "-e", PROG, "7"])
    s.check("a target binary changed in place misses", state(r) == "miss", describe(r))
    gt2 = os.path.join(s.work, "gotrace-copy")
    shutil.copy(s.gotrace, gt2)  # with its code generator module beside it
    shutil.copy(os.path.join(os.path.dirname(s.gotrace), "gotrace-cg.so"), s.work)
    save, s.gotrace = s.gotrace, gt2
    r = s.run(["-v", "-c", b, "-e", PROG, "7"])
    s.gotrace = save
    s.check("another gotrace binary misses", state(r) == "miss", describe(r))
    # the code generator module alone rebuilt (the executable the same): GT_CODEGEN
    cg2 = os.path.join(s.work, "gotrace-cg.so")
    os.utime(cg2, (2, 2))
    s.env["GT_CODEGEN"] = cg2
    r = s.run(["-v", "-c", b, "-e", PROG, "7"])
    r2 = s.run(["-v", "-c", b, "-e", PROG, "7"])
    del s.env["GT_CODEGEN"]
    s.check("another code generator module misses, then hits", state(r) == "miss" and
            state(r2) == "hit", describe(r) + describe(r2))

    # damaged entries: rebuilt, never trusted
    r = s.run(["-v", "-c", b, "-e", PROG, "7"])
    s.check("the original run still hits", state(r) == "hit", describe(r))
    before = set(entries())
    for name in before:
        p = os.path.join(ENTRIES, name)
        with open(p, "r+b") as f:
            f.truncate(os.path.getsize(p) // 2)
    r = s.run(["-v", "-c", b, "-e", PROG, "7"])
    s.check("a truncated entry is a miss, with no error, and the output is right",
            state(r) == "miss" and r.returncode == 0 and r.stdout == r1.stdout and
            "error" not in r.stderr, describe(r))
    r = s.run(["-v", "-c", b, "-e", PROG, "7"])
    s.check("... and it was rebuilt: the next run hits", state(r) == "hit", describe(r))
    for name in entries():
        p = os.path.join(ENTRIES, name)
        data = bytearray(open(p, "rb").read())
        data[-20] ^= 0xff  # a flipped byte inside the object
        open(p, "wb").write(bytes(data))
    r = s.run(["-v", "-c", b, "-e", PROG, "7"])
    s.check("a damaged entry (checksum) is a miss, the output right",
            state(r) == "miss" and r.returncode == 0 and r.stdout == r1.stdout, describe(r))
    s.check("no temporary files are left", not [f for f in os.listdir(ENTRIES)
                                                if f.endswith(".tmp")], os.listdir(ENTRIES))

if s.case("import"):
    # the key holds what a script imports: the same script text over a changed import
    # compiles again
    top = os.path.join(s.work, "cache-import")
    shutil.rmtree(top, ignore_errors=True)
    os.makedirs(top, mode=0o755)
    os.chmod(top, 0o755)
    main, lib = os.path.join(top, "main.bt"), os.path.join(top, "lib.bt")

    def write(path, text):
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o644)
    write(main, 'import "lib.bt";\nBEGIN { says(); exit(); }\n')
    write(lib, 'macro says() { printf("first\\n") }\n')
    r1 = s.run(["-v", main])
    r2 = s.run(["-v", main])
    s.check("a script with an import misses, then hits", state(r1) == "miss" and
            state(r2) == "hit" and r1.stdout == r2.stdout == "first\n",
            describe(r1) + describe(r2))
    write(lib, 'macro says() { printf("second\\n") }\n')
    r = s.run(["-v", main])
    s.check("a changed import misses and prints what it now says",
            state(r) == "miss" and r.stdout == "second\n", describe(r))

NOBODY = pwd.getpwnam("nobody").pw_uid
ME = os.geteuid()


def fnv64(data):
    h = 0xcbf29ce484222325
    for c in data:
        h = ((h ^ c) * 0x100000001b3) & 0xffffffffffffffff
    return h


def entry_parts(data):
    """(key text, object) of an entry: "GTC1" u32 klen, key, u64 osz, object, u64 fnv."""
    kl = struct.unpack_from("<I", data, 4)[0]
    osz = struct.unpack_from("<Q", data, 8 + kl)[0]
    return data[8:8 + kl], data[16 + kl:16 + kl + osz]


def forge(key_entry, obj_entry):
    """An entry with the key of KEY_ENTRY holding the object of OBJ_ENTRY."""
    key, _ = entry_parts(key_entry)
    _, obj = entry_parts(obj_entry)
    body = b"GTC1" + struct.pack("<I", len(key)) + key + struct.pack("<Q", len(obj)) + obj
    return body + struct.pack("<Q", fnv64(body))


def snapshot(top):
    """Every name under TOP, not following links: type, mode, owner, size, mtime, links,
    link target, content (what a read-hit's touch or a store would change)."""
    snap = {}
    for d, dirs, files in os.walk(top):
        for n in dirs + files:
            p = os.path.join(d, n)
            st = os.lstat(p)
            extra = os.readlink(p) if stat.S_ISLNK(st.st_mode) else \
                open(p, "rb").read() if stat.S_ISREG(st.st_mode) else None
            snap[os.path.relpath(p, top)] = (st.st_mode, st.st_uid, st.st_size,
                                             st.st_mtime_ns, st.st_nlink, extra)
    return snap


def only_gto(d):
    return sorted(f for f in os.listdir(d) if f.endswith(".gto")) if os.path.isdir(d) else []


if s.case("trust"):
    b = s.go_build("adds")
    T = os.path.join(s.work, "trust")
    shutil.rmtree(T, ignore_errors=True)
    os.makedirs(T)
    # this program, and one that differs only in what it prints: its object, planted
    # under this program's key, is what an attacker's would be
    TP = PROG.replace("end %d", "trust %d")
    PLANTED = TP.replace("$1)", "$1 + 1000)")

    def trun(env, prog=TP, verbose=True):
        save = s.env
        s.env = dict(save)
        for k, v in env.items():
            if v is None:
                s.env.pop(k, None)
            else:
                s.env[k] = v
        try:
            return s.run(["-v"] * verbose + ["-c", b, "-e", prog, "7"])
        finally:
            s.env = save

    good = os.path.join(T, "good")
    ref = trun({"XDG_CACHE_HOME": good})
    r2 = trun({"XDG_CACHE_HOME": good})
    names = only_gto(os.path.join(good, "gotrace"))
    other = os.path.join(T, "other")
    rp = trun({"XDG_CACHE_HOME": other}, PLANTED)
    s.check("a good own directory (0700, created): a miss, then a hit",
            state(ref) == "miss" and state(r2) == "hit" and "trust 7" in ref.stdout and
            state(rp) == "miss" and "trust 1007" in rp.stdout and
            r2.stdout == ref.stdout and len(names) == 1 and
            stat.S_IMODE(os.stat(os.path.join(good, "gotrace")).st_mode) == 0o700,
            describe(ref) + describe(r2) + describe(rp))
    E = names[0] if names else "none.gto"
    key_entry = open(os.path.join(good, "gotrace", E), "rb").read()
    obj_entry = open(os.path.join(other, "gotrace", only_gto(os.path.join(other, "gotrace"))[0]),
                     "rb").read()
    FORGED = forge(key_entry, obj_entry)

    def plant(xdg, uid=ME, mode=0o600, gt_uid=None, gt_mode=0o700):
        """XDG/gotrace/E holding the forged entry; returns its path."""
        d = os.path.join(xdg, "gotrace")
        os.makedirs(d, exist_ok=True)
        os.chmod(d, gt_mode)
        os.chown(d, ME if gt_uid is None else gt_uid, -1)
        p = os.path.join(d, E)
        with open(p, "wb") as f:
            f.write(FORGED)
        os.chmod(p, mode)
        os.chown(p, uid, -1)
        return p

    # the oracle can fail: in a directory of one's own the forged entry is loaded
    ctl = os.path.join(T, "control")
    plant(ctl)
    r = trun({"XDG_CACHE_HOME": ctl})
    s.check("control: a forged entry in one's own directory is loaded (so the cases "
            "below would see it)", state(r) == "hit" and "trust 1007" in r.stdout and
            "trust 7" not in r.stdout, describe(r))

    def refused(name, env, why, watch):
        before = {w: snapshot(w) for w in watch}
        r = trun(env)
        s.check(name + ": compiled, the planted object not loaded, -v says why",
                r.returncode == 0 and state(r) is None and r.stdout == ref.stdout and
                ("cache: not used: " + why) in r.stderr, describe(r))
        s.check(name + ": nothing there read (touched) or written",
                all(snapshot(w) == before[w] for w in watch),
                "\n".join("%s: %s" % (w, sorted(set(snapshot(w).items()) ^
                                                 set(before[w].items()))) for w in watch))
        return r

    d = os.path.join(T, "nobody-0777")
    plant(d, uid=NOBODY, gt_uid=NOBODY)
    os.chown(d, NOBODY, -1)
    os.chmod(d, 0o777)
    refused("XDG_CACHE_HOME owned by nobody, mode 0777", {"XDG_CACHE_HOME": d},
            "%s is owned by uid %d, not %d" % (d, NOBODY, ME), [d])
    r = trun({"XDG_CACHE_HOME": d})
    s.check("... -v says it once", r.stderr.count("cache:") == 1, describe(r))
    link = os.path.join(T, "xdg-link")
    os.symlink(d, link)
    refused("XDG_CACHE_HOME a symbolic link to it: the directory it leads to is checked",
            {"XDG_CACHE_HOME": link}, "%s is owned by uid %d, not %d" % (d, NOBODY, ME), [d])
    r = trun({"XDG_CACHE_HOME": d}, verbose=False)
    s.check("... and without -v, nothing is said", r.returncode == 0 and
            "cache" not in r.stderr and r.stdout == ref.stdout, describe(r))
    for mode in (0o777, 0o770, 0o707):
        d = os.path.join(T, "own-%o" % mode)
        plant(d)
        os.chmod(d, mode)
        refused("own XDG_CACHE_HOME, mode %o" % mode, {"XDG_CACHE_HOME": d},
                "%s is writable by group or others" % d, [d])
    d = os.path.join(T, "own-gotrace-0777")
    plant(d, gt_mode=0o777)
    refused("the gotrace directory mode 0777", {"XDG_CACHE_HOME": d},
            "%s/gotrace is writable by group or others" % d, [d])
    d = os.path.join(T, "gotrace-link")
    target = os.path.join(T, "link-target")
    plant(target)  # a good root-owned 0700 directory holding the forged entry
    os.makedirs(d)
    os.symlink(os.path.join(target, "gotrace"), os.path.join(d, "gotrace"))
    refused("the gotrace directory a symbolic link to a good one", {"XDG_CACHE_HOME": d},
            "%s/gotrace is a symbolic link" % d, [d, target])
    d = os.path.join(T, "entry-link")
    p = plant(d)
    os.rename(p, os.path.join(T, "entry-link-target.gto"))
    os.symlink(os.path.join(T, "entry-link-target.gto"), p)
    refused("an entry that is a symbolic link", {"XDG_CACHE_HOME": d},
            "%s is a symbolic link" % p, [d])
    d = os.path.join(T, "entry-nobody")
    p = plant(d, uid=NOBODY)
    refused("an entry owned by nobody", {"XDG_CACHE_HOME": d},
            "%s is owned by uid %d, not %d" % (p, NOBODY, ME), [d])
    d = os.path.join(T, "entry-0666")
    p = plant(d, mode=0o666)
    refused("an entry of mode 0666", {"XDG_CACHE_HOME": d},
            "%s is writable by group or others" % p, [d])
    d = os.path.join(T, "entry-hardlink")
    p = plant(d)
    os.link(p, os.path.join(T, "entry-hardlink-second"))
    refused("an entry with a second hard link", {"XDG_CACHE_HOME": d},
            "%s has 2 hard links" % p, [d])
    # above the named directory: root's or one's own, writable by others only if sticky
    up = os.path.join(T, "parent-nobody")
    d = os.path.join(up, "cache")
    plant(d)
    os.chown(up, NOBODY, -1)
    os.chmod(up, 0o755)
    refused("a parent directory owned by nobody", {"XDG_CACHE_HOME": d},
            "%s is owned by uid %d, not %d" % (up, NOBODY, ME), [up])
    up = os.path.join(T, "parent-sticky")
    d = os.path.join(up, "cache")
    os.makedirs(up)
    os.chmod(up, 0o1777)
    r = trun({"XDG_CACHE_HOME": d})
    r2 = trun({"XDG_CACHE_HOME": d})
    s.check("under a root-owned sticky 1777 parent (as /tmp): created 0700, a miss then a hit",
            state(r) == "miss" and state(r2) == "hit" and r2.stdout == ref.stdout and
            stat.S_IMODE(os.stat(d).st_mode) == 0o700, describe(r) + describe(r2))

    # sudo -E: HOME is the invoking user's; the cache is the passwd home's of euid
    d = os.path.join(T, "home-nobody")
    plant(os.path.join(d, ".cache"), uid=NOBODY, gt_uid=NOBODY)
    for x in (d, os.path.join(d, ".cache")):
        os.chown(x, NOBODY, -1)
        os.chmod(x, 0o755)
    refused("HOME owned by nobody (no sudo)", {"XDG_CACHE_HOME": None, "HOME": d,
                                                "SUDO_USER": None, "SUDO_UID": None},
            "%s is owned by uid %d, not %d" % (d, NOBODY, ME), [d])
    root_cache = os.path.join(pwd.getpwuid(ME).pw_dir, ".cache", "gotrace")
    mine = os.path.join(root_cache, E)
    # E's key holds this suite's work path: an entry of that name is this test's own
    if os.path.exists(mine) and s.work.encode() in entry_parts(open(mine, "rb").read())[0]:
        os.unlink(mine)
    before = snapshot(d)
    sudo = {"XDG_CACHE_HOME": None, "HOME": d, "SUDO_USER": "nobody", "SUDO_UID": str(NOBODY)}
    r = trun(sudo)
    r2 = trun(sudo)
    stored = os.path.exists(mine) and entry_parts(open(mine, "rb").read())[0] == \
        entry_parts(key_entry)[0]
    s.check("sudo -E (HOME owned by nobody, SUDO_USER=nobody): the cache of euid's passwd "
            "home %s, a miss then a hit, the planted object not loaded" % root_cache,
            state(r) == "miss" and state(r2) == "hit" and stored and
            r.stdout == ref.stdout and r2.stdout == ref.stdout and snapshot(d) == before,
            describe(r) + describe(r2))
    if stored:
        os.unlink(mine)  # only the entry this test made
    r = trun({"XDG_CACHE_HOME": good, "SUDO_USER": "nobody", "SUDO_UID": str(NOBODY)})
    s.check("under sudo, an XDG_CACHE_HOME of euid's own is used as is",
            state(r) == "hit" and r.stdout == ref.stdout, describe(r))

# binfo's index of inlined copies (a walk of every function's inline tree: ~90 ms on a
# web server's 183k functions) is kept beside the objects for a binary of 4,096
# functions or more, under the binary's identity: read back, it gives the same sites.
if s.case("binfo index"):
    b = s.go_build("fgserve")  # net/http: ~6,000 functions
    prog = 'go:"net/http.*":entry { @[func] = count(); }'

    def binfo_entries():
        out = []
        for name in entries():
            key, _ = entry_parts(open(os.path.join(ENTRIES, name), "rb").read())
            if key.startswith(b"binfo=inlined copies"):
                out.append(name)
        return out

    for name in binfo_entries():
        os.unlink(os.path.join(ENTRIES, name))
    r0 = s.run(["--no-cache", "--dry-run", "-d", "sites", "-b", b, "-e", prog])
    s.check("--no-cache keeps no index", not binfo_entries() and r0.returncode == 0,
            describe(r0))
    r1 = s.run(["--dry-run", "-d", "sites", "-b", b, "-e", prog])
    stored = binfo_entries()
    r2 = s.run(["--dry-run", "-d", "sites", "-b", b, "-e", prog])
    inlined = sum(l.endswith(" (an inlined copy)") for l in r0.stdout.splitlines())
    s.check("a first run stores the index, a second reads it: the same %d sites "
            "(%d of them inlined copies) as without it" % (len(r0.stdout.splitlines()), inlined),
            len(stored) == 1 and r1.returncode == 0 and r2.returncode == 0 and inlined > 0 and
            r0.stdout == r1.stdout == r2.stdout, describe(r1) + describe(r2))
    p_ = os.path.join(ENTRIES, stored[0]) if stored else None
    if p_:
        data = bytearray(open(p_, "rb").read())
        data[-100] ^= 0xff  # a flipped byte inside the index
        open(p_, "wb").write(bytes(data))
    r3 = s.run(["--dry-run", "-d", "sites", "-b", b, "-e", prog])
    s.check("a damaged index is made again, the sites the same",
            r3.returncode == 0 and r3.stdout == r0.stdout and len(binfo_entries()) == 1,
            describe(r3))

    # the layout of runtime.g and m (a DWARF walk: ~960 M instructions on Caddy) too: the
    # program's IR, which holds the offsets, the same computed, stored and read back
    gprog = 'go:"net/http.(*conn).serve":entry { @[goid] = count(); }'
    ir = [s.run(args + ["--dry-run", "-d", "ir", "-b", b, "-e", gprog])
          for args in (["--no-cache"], [], [])]
    layout = [n for n in entries() if entry_parts(open(os.path.join(ENTRIES, n), "rb").read())[0]
              .startswith(b"binfo=goruntime layout")]
    s.check("the goroutine layout stored and read back: the same IR as without the store",
            len(layout) == 1 and all(r.returncode == 0 for r in ir) and
            "gt_target" in ir[0].stdout and ir[0].stdout == ir[1].stdout == ir[2].stdout,
            describe(ir[0]) + describe(ir[2]))

    # a function's parameters (their places, the graph of their types: a DWARF index of
    # every function, ~1 s on Caddy), and the runtime types %v names (its DWARF walk)
    aprog = ('go:net/http.Error:entry { @[args.error, args.code] = count(); '
             'printf("%v %v\\n", args.w, args.error); }')
    air = [s.run(args + ["--dry-run", "-d", "ir", "-b", b, "-e", aprog])
           for args in (["--no-cache"], [], [])]
    kinds = [entry_parts(open(os.path.join(ENTRIES, n), "rb").read())[0].split(b"\n")[0]
             for n in entries()]
    s.check("a function's parameters and the runtime types stored and read back: the same "
            "IR as without the store",
            b"binfo=goparams, format 1" in kinds and b"binfo=gortypes, format 1" in kinds and
            all(r.returncode == 0 for r in air) and "define" in air[0].stdout and
            air[0].stdout == air[1].stdout == air[2].stdout,
            "%s\n%s" % (kinds, "\n".join(list(difflib.unified_diff(
                air[0].stdout.splitlines(), air[2].stdout.splitlines(), lineterm="",
                n=0))[:30]) + describe(air[2])[-1500:]))

left = bpf_leftovers()
s.check("nothing left attached", not left, left)
s.finish()
