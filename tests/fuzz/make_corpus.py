#!/usr/bin/env python3
"""Writes the fuzzer's seed corpus: one file per case of the data-file tests.

    make_corpus.py OUTDIR [FILE.test...]

Each case's `--- program` section (tests/parser/*.test and tests/diag/*.test by
default) becomes OUTDIR/<file>-<case number>, with @GO:NAME@ and @WORK@ replaced by
the fuzzer's target path ($GT_FUZZ_TARGET, or "./prog" when unset) and "/tmp".
Identical programs are written once. The corpus is generated, never committed.
"""

import glob
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, TESTS)
from run_data_tests import parse_file  # noqa: E402


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out = sys.argv[1]
    files = sys.argv[2:] or sorted(glob.glob(os.path.join(TESTS, "parser", "*.test")) +
                                   glob.glob(os.path.join(TESTS, "diag", "*.test")))
    target = os.environ.get("GT_FUZZ_TARGET") or "./prog"
    os.makedirs(out, exist_ok=True)
    seen = set()
    for path in files:
        stem = os.path.splitext(os.path.basename(path))[0]
        for i, case in enumerate(parse_file(path), 1):
            # a case of files (imports) runs its main.bt, if it has one
            text = case.sections.get("program", case.files().get("main.bt"))
            if text is None:
                continue
            prog = re.sub(r"@GO:[A-Za-z0-9_]+@", target, text)
            prog = prog.replace("@WORK@", "/tmp")
            if prog in seen:
                continue
            seen.add(prog)
            with open(os.path.join(out, f"{stem}-{i:03d}"), "w", encoding="utf-8") as f:
                f.write(prog)
    print(f"make_corpus: {len(seen)} programs from {len(files)} files in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
