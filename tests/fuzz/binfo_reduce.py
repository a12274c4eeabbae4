"""Cuts a Go binary down to what the binary fuzzer's readers should look at per input,
so that an input costs a fraction of a millisecond, not the tens of milliseconds a
whole binary's DWARF and symbol tables take (tests/fuzz/fuzz_binfo.c).

In place, each table keeps its offset and layout, only shorter (what is dropped is
zeroed): .symtab keeps main's symbols, those the readers look up by name and every
40th other, .strtab their names; .gopclntab's function table keeps main's functions, runtime.main and every
40th other (a kept function's pcs run to the next kept entry); .debug_info keeps main's
compile unit and, of every other unit, only the top-level DIEs (types, abstract
origins) that main's DIEs reach, references renumbered; .debug_line keeps the line
programs of the units kept; location and range lists keep 256 bytes. Compressed DWARF (SHF_COMPRESSED) is inflated, cut and
deflated again."""

import struct
import zlib

import dwarfpatch as dp

KEEP_SYMS = {b"runtime.main", b"runtime.buildVersion", b"runtime.buildVersion.str",
             b"go:func.*", b"go.func.*", b"runtime.types", b"runtime.etypes", b"runtime.text",
             b"runtime.etext", b"runtime.tlsg", b"runtime.firstmoduledata",
             b"runtime.morestack", b"runtime.morestack_noctxt", b"runtime.goexit",
             b"runtime.rt0_go", b"main.main"}
EVERY = 40


def shdrs(data):
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shnum, shstrndx = struct.unpack_from("<HH", data, 0x3c)
    out = []
    stro = struct.unpack_from("<Q", data, shoff + 64 * shstrndx + 24)[0]
    for i in range(shnum):
        h = shoff + 64 * i
        name, typ, flags, addr, off, size, link, info = struct.unpack_from(
            "<IIQQQQII", data, h)
        n = data[stro + name:data.index(b"\0", stro + name)].decode()
        out.append(dict(name=n, hdr=h, type=typ, flags=flags, off=off, size=size, link=link,
                        info=info))
    return out


def sec(hs, name):
    return next((h for h in hs if h["name"] == name), None)


def read_sec(data, h):
    raw = bytes(data[h["off"]:h["off"] + h["size"]])
    if h["flags"] & 0x800:  # SHF_COMPRESSED: Elf64_Chdr, then zlib
        return zlib.decompress(raw[24:])
    return raw


def write_sec(data, h, new):
    if h["flags"] & 0x800:
        ch = bytearray(data[h["off"]:h["off"] + 24])
        struct.pack_into("<Q", ch, 8, len(new))
        new = bytes(ch) + zlib.compress(new, 9)
    if len(new) > h["size"]:
        raise ValueError("%s grew" % h["name"])
    data[h["off"]:h["off"] + h["size"]] = new + bytes(h["size"] - len(new))
    struct.pack_into("<Q", data, h["hdr"] + 32, len(new))
    h["size"] = len(new)


def cut_symtab(data, hs):
    st = sec(hs, ".symtab")
    if not st:
        return
    strtab = hs[st["link"]]
    syms = [bytes(data[st["off"] + 24 * k:st["off"] + 24 * k + 24])
            for k in range(st["size"] // 24)]
    kept, nlocal = [], 0
    for k, s in enumerate(syms):
        name = struct.unpack_from("<I", s)[0]
        n = bytes(data[strtab["off"] + name:data.index(b"\0", strtab["off"] + name)])
        if k == 0 or n.startswith(b"main.") or n in KEEP_SYMS or k % EVERY == 0:
            kept.append(s)
            nlocal += k < st["info"]
    # the string table: the kept names only (libdwarf reads it whole at every open)
    names = bytearray(b"\0")
    for k, s in enumerate(kept):
        name = struct.unpack_from("<I", s)[0]
        if name:
            n = bytes(data[strtab["off"] + name:data.index(b"\0", strtab["off"] + name)])
            kept[k] = struct.pack("<I", len(names)) + s[4:]
            names += n + b"\0"
    write_sec(data, st, b"".join(kept))
    write_sec(data, strtab, bytes(names))
    struct.pack_into("<I", data, st["hdr"] + 44, nlocal)


def cut_pclntab(data, hs):
    h = next((h for h in hs if h["name"].endswith(".gopclntab")), None)
    if not h:
        return
    off = h["off"]
    if struct.unpack_from("<I", data, off)[0] not in (0xfffffff0, 0xfffffff1):
        return
    nfunc = struct.unpack_from("<Q", data, off + 8)[0]
    names, pcln = (struct.unpack_from("<Q", data, off + 8 + 8 * k)[0] for k in (3, 7))
    ents = [struct.unpack_from("<II", data, off + pcln + 8 * i) for i in range(nfunc + 1)]
    kept = []
    for i in range(nfunc):
        f = off + pcln + ents[i][1]
        nameoff = struct.unpack_from("<i", data, f + 4)[0]
        s = off + names + nameoff
        n = bytes(data[s:data.index(b"\0", s)])
        if n.startswith(b"main.") or n in KEEP_SYMS or i % EVERY == 0:
            kept.append(ents[i])
    kept.append(ents[nfunc])
    for i, e in enumerate(kept):
        struct.pack_into("<II", data, off + pcln + 8 * i, *e)
    struct.pack_into("<Q", data, off + 8, len(kept) - 1)


def abbrevs(ab, at):
    tab, i = {}, at
    while True:
        code, i = dp.uleb(ab, i)
        if not code:
            return tab
        tag, i = dp.uleb(ab, i)
        children = ab[i]
        i += 1
        attrs = []
        while True:
            a, i = dp.uleb(ab, i)
            form, i = dp.uleb(ab, i)
            if form == 0x21:
                _, i = dp.uleb(ab, i)
            if not a and not form:
                break
            attrs.append((a, form))
        tab[code] = (tag, children, attrs)


def skip_form(b, i, form):
    if form == 0x08:
        return b.index(b"\0", i) + 1
    if form in dp.FIXED:
        return i + dp.FIXED[form]
    if form in dp.ULEB or form == 0x0d:
        return dp.uleb(b, i)[1]
    if form == 0x0a:
        return i + 1 + b[i]
    if form == 0x03:
        return i + 2 + struct.unpack_from("<H", b, i)[0]
    if form == 0x04:
        return i + 4 + struct.unpack_from("<I", b, i)[0]
    if form in (0x18, 0x09):
        n, i = dp.uleb(b, i)
        return i + n
    raise ValueError("DW_FORM 0x%x" % form)


def units(info, ab):
    """[(cu offset, header bytes, cu DIE (start, end), [top-level subtree (start, end)],
    end, {die offset: [(pos, form)] of its references}, stmt_list pos)]."""
    out, u = [], 0
    while u < len(info):
        length, version = struct.unpack_from("<IH", info, u)
        if version >= 5:
            abo, hdr = struct.unpack_from("<I", info, u + 8)[0], 12
        else:
            abo, hdr = struct.unpack_from("<I", info, u + 6)[0], 11
        tab = abbrevs(ab, abo)
        end = u + 4 + length
        i, depth, tops, refs, stmt, cu_die = u + hdr, 0, [], [], None, None
        while i < end:
            start = i
            code, i = dp.uleb(info, i)
            if not code:
                depth -= 1
                if depth == 1 and tops:
                    tops[-1][1] = i
                continue
            tag, children, attrs = tab[code]
            if depth == 1:
                tops.append([start, None])
            for a, form in attrs:
                if form in (0x10, 0x13):
                    refs.append((start, i, form))
                if a == 0x10 and depth == 0:
                    stmt = (i, form)
                i = skip_form(info, i, form)
            if depth == 0:
                cu_die = (u + hdr, i)
            if depth == 1 and not children:
                tops[-1][1] = i
            if children:
                depth += 1
        for t in tops:
            if t[1] is None:
                t[1] = end - 1
        out.append(dict(off=u, hdr=hdr, cu_die=cu_die, tops=tops, end=end, refs=refs,
                        stmt=stmt, version=version))
        u = end
    return out


def cut_dwarf(data, hs):
    hi, ha, hl = sec(hs, ".debug_info"), sec(hs, ".debug_abbrev"), sec(hs, ".debug_line")
    if not hi or not ha:
        return
    info, ab = read_sec(data, hi), read_sec(data, ha)
    us = units(info, ab)
    # which top-level subtree holds each offset
    owner = {}
    for ui, u in enumerate(us):
        for ti, (s, e) in enumerate(u["tops"]):
            owner[s] = (ui, ti)
    starts = sorted(owner)
    import bisect

    def top_of(off):
        k = bisect.bisect_right(starts, off) - 1
        return owner[starts[k]] if k >= 0 else None

    def targets(ui, lo, hi_):
        u = us[ui]
        for die, pos, form in u["refs"]:
            if lo <= die < hi_:
                v = struct.unpack_from("<I", info, pos)[0]
                yield v + u["off"] if form == 0x13 else v

    mains = [ui for ui, u in enumerate(us)
             if b"\0main\0" in b"\0" + info[u["cu_die"][0]:u["cu_die"][1]] + b"\0"
             or info.find(b"main\0", u["cu_die"][0], u["cu_die"][1]) >= 0]
    keep_units = set(mains)
    keep = set()
    todo = []
    for ui in mains:
        for ti in range(len(us[ui]["tops"])):
            keep.add((ui, ti))
            todo.append((ui, ti))
        for t in targets(ui, us[ui]["cu_die"][0], us[ui]["cu_die"][1]):
            pass
    while todo:
        ui, ti = todo.pop()
        s, e = us[ui]["tops"][ti]
        for t in targets(ui, s, e):
            o = top_of(t)
            if o and o not in keep and us[o[0]]["tops"][o[1]][0] <= t < us[o[0]]["tops"][o[1]][1]:
                keep.add(o)
                keep_units.add(o[0])
                todo.append(o)
    # the new .debug_info; old offset -> new offset for every kept byte range
    new = bytearray()
    moves = []  # (old start, old end, new start)
    newcu = {}
    for ui, u in enumerate(us):
        if ui not in keep_units:
            continue
        base = len(new)
        newcu[ui] = base
        new += info[u["off"]:u["off"] + u["hdr"]]
        s, e = u["cu_die"]
        moves.append((s, e, len(new)))
        new += info[s:e]
        for ti, (s, e) in enumerate(u["tops"]):
            if (ui, ti) in keep:
                moves.append((s, e, len(new)))
                new += info[s:e]
        new += b"\0"
        struct.pack_into("<I", new, base, len(new) - base - 4)
    mstarts = [m[0] for m in moves]

    def moved(off):
        k = bisect.bisect_right(mstarts, off) - 1
        if k >= 0 and moves[k][0] <= off < moves[k][1]:
            return moves[k][2] + off - moves[k][0]
        return None

    # line programs of the kept units, and the references renumbered
    lines = read_sec(data, hl) if hl else b""
    newline = bytearray()
    for ui, u in enumerate(us):
        if ui not in keep_units:
            continue
        for die, pos, form in u["refs"]:
            np_ = moved(pos)
            if np_ is None:
                continue
            v = struct.unpack_from("<I", info, pos)[0]
            t = moved(v + u["off"] if form == 0x13 else v)
            if t is None:
                t = 0  # a reference to a dropped DIE (never, when the walk is complete)
            struct.pack_into("<I", new, np_, t - newcu[ui] if form == 0x13 else t)
        if u["stmt"] and lines:
            pos, form = u["stmt"]
            if form in (0x06, 0x17):
                lo = struct.unpack_from("<I", info, pos)[0]
                if lo + 4 <= len(lines):
                    ln = struct.unpack_from("<I", lines, lo)[0]
                    struct.pack_into("<I", new, moved(pos), len(newline))
                    newline += lines[lo:lo + 4 + ln]
    write_sec(data, hi, bytes(new))
    if hl:
        write_sec(data, hl, bytes(newline))
    # location and range lists: libdwarf reads them whole at every open, binfo never
    # asks for them; their headers stay
    for name in (".debug_loc", ".debug_ranges", ".debug_loclists", ".debug_rnglists"):
        h = sec(hs, name)
        if h and h["size"] > 256:
            cut = bytearray(read_sec(data, h)[:256])
            if name.endswith("lists"):  # DWARF 5: the unit's length says 256 too
                struct.pack_into("<I", cut, 0, 252)
            write_sec(data, h, bytes(cut))


def reduce(data):
    """DATA (a bytearray) cut down in place."""
    hs = shdrs(data)
    cut_symtab(data, hs)
    cut_pclntab(data, hs)
    cut_dwarf(data, hs)
