"""Hostile DWARF made from a real Go binary, for tests of gotrace's readers: the DIEs of
an uncompressed .debug_info (go build -ldflags=-compressdwarf=false; DWARF 4 or 5) are
walked with the forms Go's linker writes, and a type reference is pointed elsewhere in
place, e.g. at a struct itself (a struct that holds itself)."""

import struct

from elfpatch import sections

# DW_FORM -> size in bytes, or a reader name
FIXED = {0x01: 8, 0x0b: 1, 0x05: 2, 0x06: 4, 0x07: 8, 0x0c: 1, 0x10: 4, 0x11: 1, 0x12: 2,
         0x13: 4, 0x14: 8, 0x17: 4, 0x0e: 4, 0x1f: 4, 0x1e: 16, 0x19: 0, 0x21: 0, 0x25: 1,
         0x26: 2, 0x27: 3, 0x28: 4, 0x29: 1, 0x2a: 2, 0x2b: 3, 0x2c: 4, 0x20: 8}
ULEB = {0x0f, 0x15, 0x1b, 0x1a, 0x22, 0x23}
DW_AT_name, DW_AT_type = 0x03, 0x49


def uleb(b, i):
    v = shift = 0
    while True:
        x = b[i]
        i += 1
        v |= (x & 0x7f) << shift
        shift += 7
        if not x & 0x80:
            return v, i


def abbrevs(b, off):
    tab = {}
    i = off
    while True:
        code, i = uleb(b, i)
        if not code:
            return tab
        tag, i = uleb(b, i)
        i += 1  # children
        attrs = []
        while True:
            at, i = uleb(b, i)
            form, i = uleb(b, i)
            if form == 0x21:  # implicit_const
                _, i = uleb(b, i)
            if not at and not form:
                break
            attrs.append((at, form))
        tab[code] = (tag, attrs)


def dies(data):
    """[(offset in .debug_info, tag, {attr: (file offset of the value, form, value)})]."""
    secs = sections(data)
    info_off, info_size, flags = secs[".debug_info"]
    if flags & 0x800:
        raise ValueError("compressed DWARF: build with -ldflags=-compressdwarf=false")
    ab_off = secs[".debug_abbrev"][0]
    out = []
    cu = 0
    while cu < info_size:
        base = info_off + cu
        length, version = struct.unpack_from("<IH", data, base)
        if version >= 5:
            ab, hdr = struct.unpack_from("<I", data, base + 8)[0], 12
        else:
            ab, hdr = struct.unpack_from("<I", data, base + 6)[0], 11
        tab = abbrevs(data, ab_off + ab)
        i, end = base + hdr, base + 4 + length
        while i < end:
            at_die = i - info_off
            code, i = uleb(data, i)
            if not code:
                continue
            tag, attrs = tab[code]
            vals = {}
            for at, form in attrs:
                start = i
                if form == 0x08:  # string
                    j = data.index(b"\0", i)
                    val, i = data[i:j].decode(errors="replace"), j + 1
                elif form in FIXED:
                    n = FIXED[form]
                    val, i = int.from_bytes(data[i:i + n], "little"), i + n
                elif form in ULEB:
                    val, i = uleb(data, i)
                elif form == 0x0d:  # sdata
                    _, i = uleb(data, i)
                    val = None
                elif form in (0x0a, 0x18, 0x09, 0x03, 0x04):  # blocks, exprloc
                    if form == 0x0a:
                        n, i = data[i], i + 1
                    elif form == 0x03:
                        n, i = struct.unpack_from("<H", data, i)[0], i + 2
                    elif form == 0x04:
                        n, i = struct.unpack_from("<I", data, i)[0], i + 4
                    else:
                        n, i = uleb(data, i)
                    val, i = None, i + n
                else:
                    raise ValueError("DW_FORM 0x%x not handled" % form)
                vals[at] = (start, form, val, base - info_off)
            out.append((at_die, tag, vals))
        cu = end - info_off
    return out


def set_type(data, vals, target):
    """Points the DW_AT_type of VALS at .debug_info offset TARGET, in place."""
    pos, form, _, cu = vals[DW_AT_type]
    if form == 0x10:  # ref_addr
        struct.pack_into("<I", data, pos, target)
    elif form == 0x13:  # ref4, from the unit
        struct.pack_into("<I", data, pos, target - cu)
    else:
        raise ValueError("type reference form 0x%x" % form)


def named(ds, tag, name):
    return next((d for d in ds if d[1] == tag and d[2].get(DW_AT_name, (0, 0, None))[2] == name),
                None)


def members_of(ds, struct_die):
    """The member DIEs right after STRUCT_DIE (its children, in order)."""
    i = ds.index(struct_die) + 1
    out = []
    while i < len(ds) and ds[i][1] == 0x0d:
        out.append(ds[i])
        i += 1
    return out
