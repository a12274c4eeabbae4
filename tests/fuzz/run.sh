#!/bin/sh
# Runs the front-end fuzzer of a -DGT_FUZZ=ON build:
#     tests/fuzz/run.sh BUILD_DIR [LIBFUZZER_OPTION...]    e.g. -max_total_time=60
# Seeds: the programs of tests/parser/*.test and tests/diag/*.test, written afresh to
# BUILD_DIR/fuzz/seeds; new inputs go to BUILD_DIR/fuzz/corpus (kept between runs);
# a crash, leak or timeout is saved under BUILD_DIR/fuzz/artifacts/ and fails the run.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [LIBFUZZER_OPTION...]" >&2; exit 2; }
build=$(cd "$1" && pwd)
shift
fuzzer=$build/tests/fuzz/fuzz_frontend
out=$build/fuzz
rm -rf "$out/seeds"
mkdir -p "$out/corpus" "$out/artifacts"
GT_FUZZ_TARGET=$build/tests/fuzz/pair python3 "$src/tests/fuzz/make_corpus.py" "$out/seeds"
cd "$out"
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
exec "$fuzzer" -dict="$src/tests/fuzz/gotrace.dict" -artifact_prefix="$out/artifacts/" \
    -timeout=10 -print_final_stats=1 "$@" "$out/corpus" "$out/seeds"
