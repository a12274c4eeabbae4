#!/bin/sh
# The whole suite: a -Werror build and ctest, then the same under ASan+UBSan while the
# kernels stages (ctest label `kernels`: the runtime cases on Debian's 6.1 and 6.12 under
# qemu, tests/kernels/) run beside it, one guest at a time, then 60 s of fuzzing the
# front end and, at the same time, the binary readers (tests/fuzz, libFuzzer with
# ASan+UBSan).
# Runtime tests trace real Go programs with real BPF: run as root.
set -eu
cd "$(dirname "$0")/.."
export GT_REQUIRE_BPF=${GT_REQUIRE_BPF:-1}
export GOCACHE=${GOCACHE:-/tmp/gotrace-gocache}
BUILD_DIR=build BUILD_TYPE=RelWithDebInfo scripts/build.sh -DGT_WERROR=ON -DGT_SANITIZE=OFF
(cd build && ctest --output-on-failure -j1 -LE kernels)
# The kernels stages (6.1, then 6.12: one qemu thread each, TCG) beside the ASan pass,
# which leaves the other core to them: the plain pass's timing wants both cores, ASan's
# tests are slowed by ASan already. They reuse the Go programs the plain pass built into
# build/testwork. (A failure above stops the script; the guest still running then ends
# at its own timeout.)
(set +e; cd build && ctest --output-on-failure -j1 -L kernels >kernels.log 2>&1; echo $? >kernels.rc) &
kernels=$!
BUILD_DIR=build-asan BUILD_TYPE=Debug scripts/build.sh -DGT_WERROR=ON -DGT_SANITIZE=ON
# leak checks on; LLVM's static state is freed at exit, so no suppressions are needed
# the release matrix at its ends only (Debian's 1.19, the newest, the machine's): the
# plain pass above ran every release, and each costs ~35 s under ASan
(cd build-asan && GT_MATRIX_ENDS=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j1)
# a crash, leak or hang of a fuzzer fails; its input is kept in build-fuzz/fuzz/artifacts
# (the front end's) or build-fuzz/fuzz-binfo/artifacts (the binary readers',
# tests/fuzz/fuzz_binfo.c: the kept crash inputs of tests/fuzz/binfo-regress first, then
# mutated seed Go binaries). Both run at once.
CC=clang-16 BUILD_DIR=build-fuzz BUILD_TYPE=RelWithDebInfo scripts/build.sh -DGT_WERROR=ON \
    -DGT_FUZZ=ON
(set +e; tests/fuzz/run.sh build-fuzz -max_total_time=60 >build-fuzz/fuzz.log 2>&1
 echo $? >build-fuzz/fuzz.rc) &
front=$!
(set +e; tests/fuzz/run.sh binfo build-fuzz -max_total_time=60 >build-fuzz/fuzz-binfo.log 2>&1
 echo $? >build-fuzz/fuzz-binfo.rc) &
binfo=$!
wait $front $binfo
if [ "$(cat build-fuzz/fuzz.rc)" != 0 ]; then
    tail -n 80 build-fuzz/fuzz.log
    echo "fuzz: FAILED; reproduce with build-fuzz/tests/fuzz/fuzz_frontend FILE" \
        "on the file under build-fuzz/fuzz/artifacts/"
    exit 1
fi
grep -E '^#[0-9]+[[:space:]]+DONE|^Done|^stat::' build-fuzz/fuzz.log
if [ "$(cat build-fuzz/fuzz-binfo.rc)" != 0 ]; then
    tail -n 80 build-fuzz/fuzz-binfo.log
    echo "fuzz (binfo): FAILED; reproduce with GT_FUZZ_BINFO_SEEDS=build-fuzz/fuzz-binfo/seeds/seeds.txt" \
        "GT_FUZZ_BINFO_SHOW=1 build-fuzz/tests/fuzz/fuzz_binfo FILE on the file under" \
        "build-fuzz/fuzz-binfo/artifacts/"
    exit 1
fi
grep -E '^#[0-9]+[[:space:]]+DONE|^Done|^stat::' build-fuzz/fuzz-binfo.log
wait $kernels
cat build/kernels.log
[ "$(cat build/kernels.rc)" = 0 ] || { echo "kernels stages: FAILED (build/kernels.log)"; exit 1; }
