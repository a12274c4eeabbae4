#!/bin/sh
# Builds and runs the runtime self-test (root needed: BPF).
#   tests/unit/rt_selftest/run.sh [BUILD_DIR] [--bench] [--asan]
# BUILD_DIR defaults to /tmp/rt_selftest-build. Exit status 0 = pass.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../../src" && pwd)
out=${1:-/tmp/rt_selftest-build}
[ $# -gt 0 ] && shift
bench=
san=
for a in "$@"; do
	case $a in
	--bench) bench=--bench ;;
	--asan) san="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" ;;
	*) echo "unknown option $a" >&2; exit 2 ;;
	esac
done
mkdir -p "$out"
arch=$(uname -m) # the processor's room of src/arch, as CMake's GT_ARCH
triplet=$(cc -print-multiarch)
for p in probes bad; do
	clang-16 -target bpf -O2 -g -c "$here/$p.bpf.c" -I"/usr/include/$triplet" -o "$out/$p.bpf.o"
done
(cd "$here" && GOFLAGS=-mod=mod GO111MODULE=off GOTOOLCHAIN=local "$("$src/../scripts/find-go.sh")" build -o "$out/target" target.go)
# shellcheck disable=SC2086
cc -std=gnu11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	$san -I"$src" -DGT_VERSION='"selftest"' -o "$out/rt_selftest" "$here/rt_selftest.c" \
	"$src"/runtime/*/*.c "$src"/arch/"$arch"*.c "$src/common/fmt.c" "$src/common/util.c" "$src/common/diag.c" "$src/common/kbtf.c" "$src/common/stopsig.c" "$src/common/spawn.c" \
	"$src/common/pb.c" -lbpf -lelf -lz -lcapstone -lcurl -lpthread
exec "$out/rt_selftest" $bench "$out"
