#!/bin/sh
# Configures and builds gotrace into ${BUILD_DIR:-build}. Extra arguments go to cmake.
#   scripts/build.sh --arch arm64 [CMAKE ARGS]   on an x86_64 host: gotrace for linux/arm64
#       into ${BUILD_DIR:-build-arm64}, cross-built by clang-16 and lld against the arm64
#       Debian root of tests/arm64/root.sh (made once, cached; docs/arm64.md)
set -eu
cd "$(dirname "$0")/.."
if [ "${1:-}" = --arch ]; then
    case ${2:-} in
    arm64 | aarch64) ;;
    *) echo "build.sh: --arch takes arm64, not '${2:-}'" >&2; exit 2 ;;
    esac
    shift 2
    if [ "$(uname -m)" = aarch64 ]; then
        BUILD_DIR=${BUILD_DIR:-build} exec "$0" "$@"  # native: the plain build is arm64's
    fi
    GT_ARM64_ROOT=$(sh tests/arm64/root.sh)
    export GT_ARM64_ROOT
    dir=${BUILD_DIR:-build-arm64}
    cmake -S . -B "$dir" -DCMAKE_TOOLCHAIN_FILE="$PWD/tests/arm64/toolchain.cmake" \
        -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} "$@" >/dev/null
    # what runs in the guests: gotrace, its codegen module and its Go type data
    cmake --build "$dir" -j "$(nproc)" --target gotrace gotrace-cg gotypes
    exit 0
fi
dir=${BUILD_DIR:-build}
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} "$@" >/dev/null
cmake --build "$dir" -j "$(nproc)"
