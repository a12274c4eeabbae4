#!/bin/sh
# Runs a fuzzer of a -DGT_FUZZ=ON build:
#     tests/fuzz/run.sh [binfo] BUILD_DIR [LIBFUZZER_OPTION...]    e.g. -max_total_time=60
# The front end's (fuzz_frontend): seeds are the programs of tests/parser/*.test and
# tests/diag/*.test, written afresh to BUILD_DIR/fuzz/seeds; new inputs go to
# BUILD_DIR/fuzz/corpus (kept between runs).
# binfo, the binary readers' (fuzz_binfo): seed binaries are built into the toolchain
# cache by make_binfo_seeds.py (listed in BUILD_DIR/fuzz-binfo/seeds/seeds.txt); the
# inputs of tests/fuzz/binfo-regress (crashes found before, now fixed) are replayed
# first, then fuzzing starts from one input per seed and BUILD_DIR/fuzz-binfo/corpus.
# A crash, leak or timeout is saved under .../artifacts/ and fails the run.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
which=frontend
if [ "${1:-}" = binfo ]; then which=binfo; shift; fi
[ $# -ge 1 ] || { echo "usage: $0 [binfo] BUILD_DIR [LIBFUZZER_OPTION...]" >&2; exit 2; }
build=$(cd "$1" && pwd)
shift
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
if [ $which = binfo ]; then
    out=$build/fuzz-binfo
    mkdir -p "$out/corpus" "$out/artifacts" "$out/seeds"
    python3 "$src/tests/fuzz/make_binfo_seeds.py" "$out/seeds" >"$out/seeds.log"
    export GT_FUZZ_BINFO_SEEDS="$out/seeds/seeds.txt"
    # Each input maps and frees a few MB (a whole Go binary's sections); ASan's default
    # 256 MB quarantine of freed memory turns that into munmap/madvise TLB shootdowns
    # that took most of the time. 16 MB still holds an input's recent frees for
    # use-after-free checks, and runs 1.6x the inputs per second (600 corpus inputs:
    # 2.9 s against 4.0 s).
    export ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=16}
    cd "$out"
    "$build/tests/fuzz/fuzz_binfo" -artifact_prefix="$out/artifacts/" -runs=0 \
        "$src/tests/fuzz/binfo-regress"
    exec "$build/tests/fuzz/fuzz_binfo" -max_len=68 -len_control=0 -use_cmp=0 -use_memmem=0 \
        -artifact_prefix="$out/artifacts/" \
        -timeout=10 -print_final_stats=1 "$@" "$out/corpus" "$out/seeds/inputs"
fi
fuzzer=$build/tests/fuzz/fuzz_frontend
out=$build/fuzz
rm -rf "$out/seeds"
mkdir -p "$out/corpus" "$out/artifacts"
GT_FUZZ_TARGET=$build/tests/fuzz/pair python3 "$src/tests/fuzz/make_corpus.py" "$out/seeds"
cd "$out"
exec "$fuzzer" -dict="$src/tests/fuzz/gotrace.dict" -artifact_prefix="$out/artifacts/" \
    -timeout=10 -print_final_stats=1 "$@" "$out/corpus" "$out/seeds"
