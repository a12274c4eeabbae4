#!/usr/bin/env python3
"""Builds the binary fuzzer's seed binaries and their maps (tests/fuzz/fuzz_binfo.c).

    make_binfo_seeds.py OUTDIR [--quick]

Seeds: tests/go/args (DWARF types, parameters) and tests/go/golines (inlining, generics)
built by several Go releases (Debian's 1.19, 1.22, 1.24, the machine's go, 1.27 when the
toolchain cache has them: tests/gotool.py), as plain non-PIE builds with uncompressed
DWARF, PIE builds with uncompressed DWARF, stripped builds (-s -w) and default builds
(compressed DWARF). --quick (CI): the machine's go only. Each build is then cut down
(binfo_reduce.py: main's DWARF, symbols and functions and a sample of the others), so
that the readers' work per input is small. Builds go to the toolchain cache
(gotool.cache_dir()/fuzz-binfo), never into the repository; OUTDIR/seeds.txt lists
"NAME BINARY MAP", one seed a line (an input's first byte picks one: the list's order
is the releases' then the programs' then VARIANTS'), and OUTDIR/inputs the fuzzer's
first inputs.

A map says where the structures of a binary are, so that the fuzzer's mutations hit
them: a list of slots, 16 bytes each (kind u8, enc u8, pad u16, file offset u32, width
u32, bias u32). Kinds (the numbers fuzz_binfo.c's enum uses):
  1 TYPEREF  DW_AT_type of a DIE (ref4: bias = its unit's offset; ref_addr: 0)
  2 REF      other DIE references (DW_AT_abstract_origin, DW_AT_sibling, Go's elem)
  3 DUDATA   a constant attribute (byte size, member offset, count, encoding, Go kind,
             runtime type, low/high pc ...); enc 1: ULEB128 of WIDTH bytes
  4 ABBREV   an attribute or form code (one-byte ULEB128) of .debug_abbrev
  5 STRREF   a DW_FORM_strp offset (names)
  6 LINEHDR  a field of a .debug_line unit header
  7 LINEOPS  a .debug_line unit's program (a region: WIDTH bytes)
  8 PCHDR    a field of the .gopclntab header
  9 FUNCFLD  a field of a .gopclntab _func (offsets of its pc tables, name, pcdata ...)
 10 PCTAB    a pc-value table (a region of varints)
 11 FTAB     an entry of the function table (entry offset, _func offset)
 12 INLTREE  a field of an inline-tree entry (name, parent pc, start line)
 13 ELFHDR   an ELF header field
 14 SHDR     a section header field
 15 PHDR     a program header field
 16 SYM      a .symtab entry's name, value, size or info
 17 BUILDINF .go.buildinfo's header and version (a region)
 18 SECTION  a whole section (a region, for byte flips that stay inside it)
100 TYPEDIE  a pool: the .debug_info offset (in OFF) of a type DIE, what TYPEREF is
             rewired to
"""

import hashlib
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, TESTS)
sys.path.insert(0, os.path.join(TESTS, "runtime"))
import gotool  # noqa: E402
import dwarfpatch as dp  # noqa: E402
import elfpatch as ep  # noqa: E402
import binfo_reduce  # noqa: E402

(TYPEREF, REF, DUDATA, ABBREV, STRREF, LINEHDR, LINEOPS, PCHDR, FUNCFLD, PCTAB, FTAB,
 INLTREE, ELFHDR, SHDR, PHDR, SYM, BUILDINF, SECTION) = range(1, 19)
TYPEDIE = 100
TYPE_TAGS = {0x01, 0x0f, 0x13, 0x15, 0x16, 0x24, 0x26, 0x35, 0x12, 0x17, 0x04}
REF_ATTRS = {0x31, 0x01, 0x2902, 0x47}
MAX_SLOTS = 400000


class Map:
    def __init__(self):
        self.out = bytearray()
        self.n = 0

    def add(self, kind, off, width, enc=0, bias=0):
        if self.n >= MAX_SLOTS or off < 0 or off >= 1 << 32 or width >= 1 << 32:
            return
        self.out += struct.pack("<BBHIII", kind, enc, 0, off, width, bias & 0xffffffff)
        self.n += 1


def elf_tables(data, m):
    """ELF, section and program headers; the symbol table; regions of sections."""
    for off, w in ((0x10, 2), (0x18, 8), (0x20, 8), (0x28, 8), (0x34, 2), (0x36, 2),
                   (0x38, 2), (0x3a, 2), (0x3c, 2), (0x3e, 2)):
        m.add(ELFHDR, off, w)
    phoff, shoff = struct.unpack_from("<QQ", data, 0x20)
    phnum = struct.unpack_from("<H", data, 0x38)[0]
    shnum = struct.unpack_from("<H", data, 0x3c)[0]
    for i in range(phnum):
        b = phoff + 56 * i
        for off, w in ((0, 4), (4, 4), (8, 8), (16, 8), (32, 8), (40, 8), (48, 8)):
            m.add(PHDR, b + off, w)
    secs = []
    for i in range(shnum):
        b = shoff + 64 * i
        for off, w in ((0, 4), (4, 4), (8, 8), (16, 8), (24, 8), (32, 8), (40, 4), (48, 8),
                       (56, 8)):
            m.add(SHDR, b + off, w)
        typ, _, _, off, size, link = struct.unpack_from("<IQQQQI", data, b + 4)
        secs.append((typ, off, size, link))
        if typ != 8 and size:  # not NOBITS
            m.add(SECTION, off, size)
    for typ, off, size, link in secs:
        if typ == 2:  # SYMTAB: a sample of its entries (every 4th), all four fields
            for k in range(0, size // 24, 4):
                b = off + 24 * k
                for o, w in ((0, 4), (4, 1), (6, 2), (8, 8), (16, 8)):
                    m.add(SYM, b + o, w)


def symbols(data):
    secs = ep.sections(data)
    if ".symtab" not in secs:
        return {}
    off, size, _ = secs[".symtab"]
    stro = secs[".strtab"][0]
    out = {}
    for k in range(size // 24):
        name, _, _, _, value, _ = struct.unpack_from("<IBBHQQ", data, off + 24 * k)
        if name:
            e = data.index(b"\0", stro + name)
            out[data[stro + name:e]] = value
    return out


def abbrev_slots(data, m, off, size):
    i, end = off, off + size
    while i < end:
        code, i = dp.uleb(data, i)
        if not code:
            continue
        _, i = dp.uleb(data, i)
        i += 1
        while i < end:
            a = i
            at, i = dp.uleb(data, i)
            f = i
            form, i = dp.uleb(data, i)
            if form == 0x21:
                _, i = dp.uleb(data, i)
            if not at and not form:
                break
            if f - a == 1:
                m.add(ABBREV, a, 1, enc=1)
            if i - f == 1:
                m.add(ABBREV, f, 1, enc=1)


def dwarf_slots(data, m):
    secs = ep.sections(data)
    if ".debug_info" not in secs or secs[".debug_info"][2] & 0x800:
        return  # none, or compressed: mutations of the ELF and .gopclntab only
    for at_die, tag, vals in dp.dies(data):
        if tag in TYPE_TAGS:
            m.add(TYPEDIE, at_die, 0)
        for at, (pos, form, val, cu) in vals.items():
            if form in (0x13, 0x10):
                m.add(TYPEREF if at == 0x49 else REF, pos, 4, bias=cu if form == 0x13 else 0)
            elif form == 0x0e:
                m.add(STRREF, pos, 4)
            elif form in (0x0b, 0x05, 0x06, 0x07, 0x01):
                m.add(DUDATA, pos, dp.FIXED[form])
            elif form in (0x0f, 0x0d):
                _, e = dp.uleb(data, pos)
                m.add(DUDATA, pos, e - pos, enc=1)
    abbrev_slots(data, m, *secs[".debug_abbrev"][:2])
    if ".debug_line" in secs:
        off, size, _ = secs[".debug_line"]
        u = off
        while u + 10 < off + size:
            length, version = struct.unpack_from("<IH", data, u)
            hl_at = u + 6 + (2 if version >= 5 else 0)
            hlen = struct.unpack_from("<I", data, hl_at)[0]
            for o, w in ((u, 4), (u + 4, 2), (hl_at, 4), (hl_at + 4, 1), (hl_at + 6, 1),
                         (hl_at + 7, 1), (hl_at + 8, 1), (hl_at + 9, 1)):
                m.add(LINEHDR, o, w)
            prog = hl_at + 4 + hlen
            m.add(LINEOPS, hl_at + 4, hlen)  # the header's tables
            if prog < u + 4 + length:
                m.add(LINEOPS, prog, u + 4 + length - prog)
            u += 4 + length


def pctab_len(data, at, limit):
    """Length of the pc-value table at AT: (value delta, pc delta) pairs up to a 0 value."""
    i, first = at, True
    while i < limit:
        v, i = dp.uleb(data, i)
        if v == 0 and not first:
            return i - at
        first = False
        _, i = dp.uleb(data, i)
    return 0


def pclntab_slots(data, m):
    secs = ep.sections(data)
    name = next((n for n in secs if n.endswith(".gopclntab")), None)
    if not name:
        return
    off, size, _ = secs[name]
    magic = struct.unpack_from("<I", data, off)[0]
    if magic not in (0xfffffff0, 0xfffffff1):
        return
    go120 = magic == 0xfffffff1
    m.add(PCHDR, off, 4)
    m.add(PCHDR, off + 6, 1)
    m.add(PCHDR, off + 7, 1)
    for k in range(8):
        m.add(PCHDR, off + 8 + 8 * k, 8)
    nfunc = struct.unpack_from("<Q", data, off + 8)[0]
    pctab, pcln = (struct.unpack_from("<Q", data, off + 8 + 8 * k)[0] for k in (6, 7))
    syms = symbols(data)
    gofunc = syms.get(b"go:func.*") or syms.get(b"go.func.*")
    pcdata_at = 44 if go120 else 40
    for i in range(nfunc + 1):
        m.add(FTAB, off + pcln + 8 * i, 4)
        m.add(FTAB, off + pcln + 8 * i + 4, 4)
    for i in range(nfunc):
        foff = struct.unpack_from("<I", data, off + pcln + 8 * i + 4)[0]
        f = off + pcln + foff
        if f + pcdata_at > off + size:
            break
        for o in range(0, pcdata_at - 4, 4):
            m.add(FUNCFLD, f + o, 4)
        for o in range(pcdata_at - 4, pcdata_at):
            m.add(FUNCFLD, f + o, 1)
        pcsp, pcfile, pcln_ = struct.unpack_from("<III", data, f + 16)
        npcdata = struct.unpack_from("<I", data, f + 28)[0]
        nfuncdata = data[f + pcdata_at - 1]
        tabs = [pcsp, pcfile, pcln_]
        for k in range(min(npcdata, 8)):
            m.add(FUNCFLD, f + pcdata_at + 4 * k, 4)
            tabs.append(struct.unpack_from("<I", data, f + pcdata_at + 4 * k)[0])
        for t in tabs:
            if t:
                n = pctab_len(data, off + pctab + t, off + size)
                if n:
                    m.add(PCTAB, off + pctab + t, n)
        fd = f + pcdata_at + 4 * npcdata
        for k in range(min(nfuncdata, 8)):
            m.add(FUNCFLD, fd + 4 * k, 4)
        # the inline tree: funcdata[3] from go:func.*, 16-byte entries (Go 1.20+)
        if go120 and gofunc and nfuncdata > 3 and npcdata > 2:
            inl = struct.unpack_from("<I", data, fd + 12)[0]
            if inl != 0xffffffff:
                at = file_of(data, gofunc + inl)
                for e in range(4 if at else 0):
                    for o in (4, 8, 12):
                        m.add(INLTREE, at + 16 * e + o, 4)


def file_of(data, vaddr):
    """File offset of VADDR through the PT_LOAD headers, 0 when none maps it."""
    phoff = struct.unpack_from("<Q", data, 0x20)[0]
    for i in range(struct.unpack_from("<H", data, 0x38)[0]):
        typ, _, off, va, _, filesz = struct.unpack_from("<IIQQQQ", data, phoff + 56 * i)
        if typ == 1 and va <= vaddr < va + filesz:
            return vaddr - va + off
    return 0


def buildinfo_slots(data, m):
    secs = ep.sections(data)
    if ".go.buildinfo" in secs:
        off, size, _ = secs[".go.buildinfo"]
        m.add(BUILDINF, off, min(size, 64))


def write_map(binary, path):
    data = open(binary, "rb").read()
    m = Map()
    elf_tables(data, m)
    buildinfo_slots(data, m)
    pclntab_slots(data, m)
    dwarf_slots(data, m)
    with open(path + ".tmp", "wb") as f:
        f.write(m.out)
    os.rename(path + ".tmp", path)
    return m.n


VARIANTS = (("plain", ["-ldflags=-compressdwarf=false"]),
            ("pie", ["-buildmode=pie", "-ldflags=-compressdwarf=false"]),
            ("stripped", ["-ldflags=-s -w"]),
            ("zdwarf", []))


def up_to_date(outdir, quick):
    """Whether OUTDIR's list is of this run's kind and its seeds exist, built from
    today's sources (their hash is in their names): asking each toolchain its version
    takes ~20 s on a loaded machine, CI's fuzzing stage 60."""
    path = os.path.join(outdir, "seeds.txt")
    if not os.path.exists(path) or os.path.exists(path + ".quick") != quick:
        return False
    hashes = {prog: hashlib.sha256(open(os.path.join(TESTS, "go", prog, "main.go"),
                                        "rb").read()).hexdigest()[:12]
              for prog in ("args", "golines")}
    lines = open(path).read().split("\n")[:-1]
    return bool(lines) and all(
        len(l.split()) == 3 and os.path.exists(l.split()[1]) and os.path.exists(l.split()[2])
        and l.split()[1].endswith("-%s.cut" % hashes[l.split()[0].split("-")[1]])
        for l in lines)


def main():
    outdir = sys.argv[1]
    quick = "--quick" in sys.argv[2:]
    os.makedirs(outdir, exist_ok=True)
    if up_to_date(outdir, quick):
        print("seeds of %s up to date" % os.path.join(outdir, "seeds.txt"))
        return
    cache = os.path.join(gotool.cache_dir(), "fuzz-binfo")
    os.makedirs(cache, exist_ok=True)
    gos = [gotool.go()]
    if not quick:
        deb = gotool.debian_go()
        gos = ([deb] if deb else []) + gos
        for rel in ("go1.22.12", "go1.24.13", "go1.27.4"):
            g = gotool.toolchain(rel)
            if g:
                gos.append(g)
            else:
                print("note: %s left out: %s" % (rel, gotool.last_error))
    lines = []
    for g in gos:
        ver = gotool.version(g)
        for prog in ("args", "golines"):
            src = os.path.join(TESTS, "go", prog)
            h = hashlib.sha256(open(os.path.join(src, "main.go"), "rb").read()).hexdigest()[:12]
            for tag, flags in VARIANTS:
                name = "%s-%s-%s" % (ver, prog, tag)
                out = os.path.join(cache, "%s-%s" % (name, h))
                if not os.path.exists(out):
                    env = dict(os.environ, GOCACHE=os.path.join(gotool.cache_dir(), "gocache"),
                               CGO_ENABLED="0", GOTOOLCHAIN="local",
                               PATH=os.path.dirname(g) + os.pathsep + os.environ["PATH"])
                    r = subprocess.run([g, "build", *flags, "-o", out + ".tmp", "main.go"],
                                       cwd=src, env=env, capture_output=True, text=True)
                    if r.returncode != 0:
                        print("note: %s left out: %s" % (name, r.stderr.strip()[-300:]))
                        continue
                    os.rename(out + ".tmp", out)
                red = out + ".cut"
                if not os.path.exists(red + ".map"):
                    d = bytearray(open(out, "rb").read())
                    binfo_reduce.reduce(d)
                    with open(red, "wb") as f:
                        f.write(d)
                    n = write_map(red, red + ".map")
                    print("%s: %d slots" % (name, n))
                lines.append("%s %s %s.map\n" % (name, red, red))
    with open(os.path.join(outdir, "seeds.txt"), "w") as f:
        f.writelines(lines)
    if quick:
        open(os.path.join(outdir, "seeds.txt.quick"), "w").close()
    elif os.path.exists(os.path.join(outdir, "seeds.txt.quick")):
        os.unlink(os.path.join(outdir, "seeds.txt.quick"))
    # the fuzzer's first inputs: each seed unmutated, with the cheap readers and with all
    inputs = os.path.join(outdir, "inputs")
    os.makedirs(inputs, exist_ok=True)
    for i in range(len(lines)):
        for flags in (0, 15):
            with open(os.path.join(inputs, "seed%02d-%d" % (i, flags)), "wb") as f:
                f.write(bytes([i, 0, 0, flags]))
    print("%d seeds in %s" % (len(lines), os.path.join(outdir, "seeds.txt")))


if __name__ == "__main__":
    main()
