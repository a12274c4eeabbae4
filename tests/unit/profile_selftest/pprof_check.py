#!/usr/bin/env python3
"""Compares what `go tool pprof -raw` read from a profile with what the writer was given
(expected.spec from profile_selftest), as sets: samples summed by (labels, stack), each
frame by address, mapping file, function, file, line and whether it is inlined into the
next; mappings; period, time and duration; the total from `-top`.

  pprof_check.py EXPECTED.spec PPROF.raw PPROF.top

The text of -raw differs between pprof releases (Go 1.19's merges samples of the same
stack and labels and prints file:line; Go 1.26's keeps them apart, prints file:line:col
and lists a sample without a stack, which 1.19's leaves out of -raw but counts in the
total): what is compared here is what they agree on. Exit 0 when it matches."""

import collections
import re
import sys
import time
import urllib.parse


def spec_str(s):
    return urllib.parse.unquote(s)


def read_spec(path):
    meta, maps, samples = None, [], collections.Counter()
    for line in open(path, encoding="utf-8"):
        f = line.rstrip("\n").split(" ")
        if f[0] == "meta":
            meta = {"sample_type": f[1], "period_type": f[2].replace("/", " "),
                    "period": int(f[3]), "time_ns": int(f[4]), "duration_ns": int(f[5])}
        elif f[0] == "mapping":
            maps.append((int(f[1], 16), int(f[2], 16), int(f[3], 16), spec_str(f[4]),
                         spec_str(f[5])))
        elif f[0] == "sample":
            labels = []
            for kv in filter(None, f[2].split("|")):
                k, v = kv.split("=", 1)
                labels.append((spec_str(k), spec_str(v)))
            frames = []
            for fr in filter(None, f[3].split("|")):
                p = fr.split(",")
                m = None if p[1] == "-" else spec_str(p[1])
                if len(p) == 2:
                    frames.append((int(p[0], 16), m, None, None, None, False))
                else:
                    frames.append((int(p[0], 16), m, spec_str(p[2]), spec_str(p[3]),
                                   int(p[4]), p[5] == "1"))
            samples[(tuple(sorted(labels)), tuple(frames))] += int(f[1])
    return meta, maps, samples


LOC = re.compile(r"^\s*(\d+): 0x([0-9a-f]+)(?: M=(\d+))? ?(.*)$")
# FUNC FILE:LINE[:COLUMN] s=START; FUNC may hold spaces and newlines, FILE has no ':N'
ENTRY = re.compile(r"^(.*) (\S*?):(-?\d+)(?::-?\d+)? s=-?\d+$", re.S)


def read_raw(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    hdr, samples, locs, maps = {}, [], {}, {}
    sec, i = "head", 0
    while i < len(lines):
        ln = lines[i]
        i += 1
        if ln in ("Samples:", "Locations", "Mappings"):
            sec = ln
            if sec == "Samples:":
                hdr["sample_type"] = lines[i].strip()
                i += 1
            continue
        if sec == "head" and ": " in ln:
            k, v = ln.split(": ", 1)
            hdr[k] = v
        elif sec == "Samples:":
            m = re.match(r"^\s+(-?\d+):((?: \d+)*) ?$", ln)
            if m:
                samples.append([int(m.group(1)), [int(x) for x in m.group(2).split()], []])
                continue
            m = re.match(r"^\s+(\S+):\[(.*)\]$", ln)
            if m and samples:
                samples[-1][2].append((m.group(1), m.group(2)))
            elif ln.strip():
                raise ValueError("sample line %r" % ln)
        elif sec == "Locations":
            m = LOC.match(ln)
            if not m:
                raise ValueError("location line %r" % ln)
            entries, buf = [], m.group(4)
            # entries of this location until the next one (or Mappings) starts
            while True:
                if buf:
                    e = ENTRY.match(buf)
                    if e:
                        entries.append((e.group(1), e.group(2), int(e.group(3))))
                        buf = ""
                nxt = lines[i] if i < len(lines) else "Mappings"
                if nxt == "Mappings" or (not buf and LOC.match(nxt)):
                    break
                i += 1
                buf = buf + "\n" + nxt if buf else nxt.strip()
            if buf:
                raise ValueError("location %s: %r" % (m.group(1), buf))
            locs[int(m.group(1))] = (int(m.group(2), 16), m.group(3) and int(m.group(3)),
                                     entries)
        elif sec == "Mappings" and ln.strip():
            p = ln.split(" ")
            start, limit, off = (int(x, 16) for x in p[1].split("/"))
            maps[int(p[0].rstrip(":"))] = (start, limit, off, p[2], p[3])
    return hdr, samples, locs, maps


def main():
    spec, raw, top = sys.argv[1:4]
    meta, want_maps, want = read_spec(spec)
    hdr, samples, locs, maps = read_raw(raw)
    bad = []
    # a location: its lines leaf first, all but the last inlined into the next
    got, empty = collections.Counter(), 0
    for value, ids, labels in samples:
        frames = []
        for lid in ids:
            addr, mid, entries = locs[lid]
            mfile = maps[mid][3] if mid else None
            if not entries:
                frames.append((addr, mfile, None, None, None, False))
            for k, (fn, file, line) in enumerate(entries):
                frames.append((addr, mfile, fn, file, line, k < len(entries) - 1))
        if not frames:
            empty += value
            continue
        got[(tuple(sorted(labels)), tuple(frames))] += value
    want_empty = sum(v for (lb, fr), v in want.items() if not fr)
    want_stacks = collections.Counter({k: v for k, v in want.items() if k[1]})
    for k in sorted(set(want_stacks) | set(got), key=repr):
        if want_stacks[k] != got[k]:
            bad.append("sample %r: pprof %d, written %d" % (k, got[k], want_stacks[k]))
    if empty not in (0, want_empty):  # 1.19's -raw leaves a stackless sample out
        bad.append("samples without a stack: pprof %d, written %d" % (empty, want_empty))
    total = re.search(r"Total samples = (\d+)", open(top, encoding="utf-8").read())
    if not total or int(total.group(1)) != sum(want.values()):
        bad.append("-top total %s, written %d" % (total and total.group(1), sum(want.values())))
    if sorted(maps.values()) != sorted(want_maps):
        bad.append("mappings %r, written %r" % (sorted(maps.values()), want_maps))
    when = time.strftime("%Y-%m-%d %H:%M:%S +0000 UTC", time.gmtime(meta["time_ns"] // 10**9))
    for key, w in (("PeriodType", meta["period_type"]), ("Period", str(meta["period"])),
                   ("Time", when), ("Duration", "%gs" % (meta["duration_ns"] / 1e9)),
                   ("sample_type", meta["sample_type"])):
        if hdr.get(key) != w:
            bad.append("%s: pprof %r, written %r" % (key, hdr.get(key), w))
    for b in bad:
        print("pprof_check: " + b)
    print("pprof_check: %d stacks (%d samples), %d without a stack: %s" %
          (len(got), sum(got.values()), want_empty, "differ" if bad else "as written"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
