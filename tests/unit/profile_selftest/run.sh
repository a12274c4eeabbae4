#!/bin/sh
# Builds and runs the profile writer's self-test (src/runtime/profile/profile.c, src/common/pb.c): the folded
# text and error returns are checked by the C program, the pprof file by the real client,
# `go tool pprof` (-raw, -traces, -tags, -top): they must read it without a complaint, and
# what -raw and -top show must be what the test wrote (pprof_check.py against the
# test's own expected.spec; the text differs between pprof releases).
#   tests/unit/profile_selftest/run.sh [BUILD_DIR] [--asan]
# BUILD_DIR defaults to /tmp/profile_selftest-build. Exit status 0 = pass. Needs go.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../../src" && pwd)
out=${1:-/tmp/profile_selftest-build}
[ $# -gt 0 ] && shift
san=
for a in "$@"; do
	case $a in
	--asan) san="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" ;;
	*) echo "unknown option $a" >&2; exit 2 ;;
	esac
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
# shellcheck disable=SC2086
cc -std=gnu11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Werror $san -I"$src" -I"$here/.." -o "$out/profile_selftest" \
	"$here/profile_selftest.c" "$src/runtime/profile/profile.c" "$src/common/pb.c" -lz

status=0
rm -f "$out/test.pb.gz" "$out/test.folded"
"$out/profile_selftest" "$out" || status=1
[ -s "$out/test.pb.gz" ] || { echo "profile_selftest: no profile written" >&2; exit 1; }
gzip -t "$out/test.pb.gz" || status=1

# the go the suite builds with ($GT_GO, else the newest found)
if ! go=$("$here/../../../scripts/find-go.sh"); then
	echo "profile_selftest: go not found (go tool pprof is the oracle)" >&2
	exit 1
fi
# pprof in CI: no writable $HOME, no module, no toolchain download, times in UTC
mkdir -p "$out/home" "$out/pprof-tmp"
[ -w "${HOME:-/nonexistent}" ] || HOME=$out/home
GOCACHE=${GOCACHE:-$out/gocache}
PPROF_TMPDIR=$out/pprof-tmp
GOTOOLCHAIN=local
GOFLAGS=
TZ=UTC
export HOME GOCACHE PPROF_TMPDIR GOTOOLCHAIN GOFLAGS TZ
cd "$out"
for v in raw traces tags top; do
	# stderr must stay empty: pprof warns there about profiles it has to repair or
	# cannot symbolize
	if ! "$go" tool pprof -$v test.pb.gz >"$out/pprof.$v" 2>"$out/pprof.$v.err"; then
		echo "profile_selftest: go tool pprof -$v failed:" >&2
		cat "$out/pprof.$v.err" >&2
		status=1
		continue
	fi
	if [ -s "$out/pprof.$v.err" ]; then
		echo "profile_selftest: go tool pprof -$v complained:" >&2
		cat "$out/pprof.$v.err" >&2
		status=1
	fi
done
echo "profile_selftest: $("$go" version)"
python3 "$here/pprof_check.py" "$out/expected.spec" "$out/pprof.raw" "$out/pprof.top" || status=1
# the big profile: 1000 samples of 1, 300 + 7 + 1 distinct locations and functions
"$go" tool pprof -raw big.pb.gz >"$out/big.raw" 2>&1 || status=1
big=$(awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0; l = 1; next }
	/^Mappings/ { l = 0 } s && /^ +[0-9]+:/ { n += $1 } l && /^ +[0-9]+: 0x/ { locs++ }
	END { printf "%d samples, %d locations", n, locs }' "$out/big.raw")
if [ "$big" = "1000 samples, 308 locations" ]; then
	echo "profile_selftest: go tool pprof -raw big.pb.gz: $big"
else
	echo "profile_selftest: big.pb.gz: $big, wanted 1000 samples, 308 locations" >&2
	status=1
fi
[ $status = 0 ] && echo "profile_selftest: pass"
exit $status
