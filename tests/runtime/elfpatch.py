"""Hostile ELF and .gopclntab made from a real Go binary, for tests of gotrace's readers:
sections found by name, their headers changed in place (a size, two names swapped), and
Go's function table rewritten (every name blanked, an inline-tree index that wraps).
DWARF's DIEs are dwarfpatch.py's."""

import struct


def sections(data):
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    raw = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    stro = raw[shstrndx][4]
    out = {}
    for name, typ, flags, addr, off, size in raw:
        n = data[stro + name:data.index(b"\0", stro + name)].decode()
        out[n] = (off, size, flags)
    return out


# ---- .gopclntab (Go 1.20+ layout, magic 0xfffffff1) ----

def _uvarint(n):
    out = bytearray()
    while True:
        b = n & 0x7f
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def gopclntab_funcs(data):
    """{name: (file offset of its _func, npcdata)} of a Go 1.20+ binary's .gopclntab."""
    off = sections(data)[".gopclntab"][0]
    if struct.unpack_from("<I", data, off)[0] != 0xfffffff1:
        raise ValueError("not a Go 1.20+ .gopclntab")
    nfunc = struct.unpack_from("<Q", data, off + 8)[0]
    names, pcln = struct.unpack_from("<Q", data, off + 32)[0], struct.unpack_from("<Q", data, off + 64)[0]
    out = {}
    for i in range(nfunc):
        _, foff = struct.unpack_from("<II", data, off + pcln + 8 * i)
        f = off + pcln + foff
        nameoff = struct.unpack_from("<i", data, f + 4)[0]
        s = off + names + nameoff
        name = data[s:data.index(b"\0", s)].decode(errors="replace")
        npcdata = struct.unpack_from("<I", data, f + 28)[0]
        out[name] = (f, npcdata)
    return out


def wrap_inline_index(data, func):
    """Gives FUNC an inline-tree index table (pcdata 2) whose second value is 2^31-1, so
    that a reader sizing the tree by the largest index + 1 wraps to INT32_MIN; the table is
    written over FUNC's pc-sp table (FUNC's frame sizes are garbage after this)."""
    f, npcdata = gopclntab_funcs(bytes(data))[func]
    if npcdata < 3:
        raise ValueError("%s has no inline tree" % func)
    pcsp = struct.unpack_from("<I", data, f + 16)[0]
    pctab = sections(bytes(data))[".gopclntab"][0] + struct.unpack_from(
        "<Q", data, sections(bytes(data))[".gopclntab"][0] + 56)[0]
    # zig-zag deltas: -1 + (2^31 - 3) = 2^31 - 4 for one pc, + 3: 2^31 - 1, then the end
    table = _uvarint(0xfffffffa) + _uvarint(1) + _uvarint(6) + _uvarint(1) + b"\0"
    data[pctab + pcsp:pctab + pcsp + len(table)] = table
    struct.pack_into("<I", data, f + 44 + 4 * 2, pcsp)  # pcdata[2]: the inline tree's


# ---- section headers ----

def set_section_size(data, name, size):
    """Sets the sh_size of section NAME to SIZE in place (its bytes stay where they are)."""
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    stro = struct.unpack_from("<Q", data, shoff + shstrndx * shentsize + 24)[0]
    for i in range(shnum):
        h = shoff + i * shentsize
        n = struct.unpack_from("<I", data, h)[0]
        if bytes(data[stro + n:data.index(b"\0", stro + n)]) == name.encode():
            struct.pack_into("<Q", data, h + 32, size)
            return
    raise ValueError("no section %s" % name)


def swap_section_names(data, a, b):
    """Swaps the sh_name of sections A and B in place (each takes the other's name)."""
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    stro = struct.unpack_from("<Q", data, shoff + shstrndx * shentsize + 24)[0]
    at = {}
    for i in range(shnum):
        h = shoff + i * shentsize
        n = struct.unpack_from("<I", data, h)[0]
        at[bytes(data[stro + n:data.index(b"\0", stro + n)]).decode()] = (h, n)
    if a not in at or b not in at:
        raise ValueError("no section %s" % (a if a not in at else b))
    struct.pack_into("<I", data, at[a][0], at[b][1])
    struct.pack_into("<I", data, at[b][0], at[a][1])


def blank_func_names(data):
    """Points every _func's name of a Go 1.18+ .gopclntab at an empty string (the NUL
    ending the first name), in place: a table that lists only nameless functions."""
    off = sections(bytes(data))[".gopclntab"][0]
    if struct.unpack_from("<I", data, off)[0] not in (0xfffffff0, 0xfffffff1):
        raise ValueError("not a Go 1.18+ .gopclntab")
    nfunc = struct.unpack_from("<Q", data, off + 8)[0]
    names, pcln = struct.unpack_from("<Q", data, off + 32)[0], struct.unpack_from("<Q", data, off + 64)[0]
    first = names + struct.unpack_from("<i", data, off + pcln + struct.unpack_from(
        "<I", data, off + pcln + 4)[0] + 4)[0]
    empty = data.index(b"\0", off + first) - off - names
    for i in range(nfunc):
        foff = struct.unpack_from("<I", data, off + pcln + 8 * i + 4)[0]
        struct.pack_into("<i", data, off + pcln + foff + 4, empty)
