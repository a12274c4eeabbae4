#!/bin/sh
# Builds and runs the maps self-test (root needed: BPF; bpftrace 0.17 for the diff).
#   tests/unit/maps_selftest/run.sh [BUILD_DIR] [--asan] [--no-bpftrace]
# BUILD_DIR defaults to /tmp/maps_selftest-build. Exit status 0 = pass, 77 = skipped
# (not root). It diffs maps_selftest's text and JSON output against bpftrace's for
# oracle.bt, then runs the gotrace-only checks.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../../src" && pwd)
out=${1:-/tmp/maps_selftest-build}
[ $# -gt 0 ] && shift
san=
oracle=yes
for a in "$@"; do
	case $a in
	--asan) san="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" ;;
	--no-bpftrace) oracle=no ;;
	*) echo "unknown option $a" >&2; exit 2 ;;
	esac
done
if [ "$(id -u)" != 0 ]; then
	echo "maps_selftest: needs root (BPF), skipped" >&2
	exit 77
fi
mkdir -p "$out"
clang-16 -target bpf -O2 -g -Wall -c "$here/maps.bpf.c" -I/usr/include/x86_64-linux-gnu \
	-I"$here" -o "$out/maps.bpf.o"
# shellcheck disable=SC2086
cc -std=gnu11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Werror $san -I"$src" -I"$here" -o "$out/maps_selftest" \
	"$here/maps_selftest.c" "$src/runtime/output/maps.c" "$src/runtime/output/maps_print.c" \
	"$src/runtime/output/histk.c" "$src/runtime/output/maps_sym.c" \
	"$src/runtime/output/tseries.c" "$src/runtime/output/value.c" \
	"$src/runtime/output/value_go.c" "$src/runtime/output/stacks.c" \
	"$src/runtime/output/cgroup.c" "$src/common/util.c" "$src/common/diag.c" \
	-lbpf -lelf -lz

status=0
if [ $oracle = yes ]; then
	if ! command -v bpftrace >/dev/null 2>&1; then
		echo "maps_selftest: bpftrace not found (use --no-bpftrace)" >&2
		exit 1
	fi
	case $(bpftrace --version 2>/dev/null) in
	*v0.17.*) ;;
	*)
		echo "maps_selftest: the oracle is bpftrace 0.17, found: $(bpftrace --version 2>&1)" \
			"(use --no-bpftrace)" >&2
		exit 1
		;;
	esac
	for fmt in text json; do
		"$out/maps_selftest" "$out/maps.bpf.o" $fmt >"$out/gotrace.$fmt"
		# bpftrace: drop its first line ("Attaching 1 probe..." / attached_probes)
		bpftrace -f $fmt "$here/oracle.bt" 2>"$out/bpftrace.$fmt.err" | tail -n +2 \
			>"$out/bpftrace.$fmt"
		if diff -u "$out/bpftrace.$fmt" "$out/gotrace.$fmt" >"$out/diff.$fmt"; then
			echo "maps_selftest: $fmt output identical to bpftrace's"
		else
			echo "maps_selftest: $fmt output differs from bpftrace's:" >&2
			cat "$out/diff.$fmt" >&2
			status=1
		fi
	done
fi
"$out/maps_selftest" "$out/maps.bpf.o" check || status=1
exit $status
