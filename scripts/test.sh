#!/bin/sh
# The whole suite: a -Werror build and ctest, then the same under ASan+UBSan.
# Runtime tests trace real Go programs with real BPF: run as root.
set -eu
cd "$(dirname "$0")/.."
export GT_REQUIRE_BPF=${GT_REQUIRE_BPF:-1}
export GOCACHE=${GOCACHE:-/tmp/gotrace-gocache}
BUILD_DIR=build BUILD_TYPE=RelWithDebInfo scripts/build.sh -DGT_WERROR=ON -DGT_SANITIZE=OFF
(cd build && ctest --output-on-failure -j1)
BUILD_DIR=build-asan BUILD_TYPE=Debug scripts/build.sh -DGT_WERROR=ON -DGT_SANITIZE=ON
# leak checks on; LLVM's static state is freed at exit, so no suppressions are needed
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j1)
