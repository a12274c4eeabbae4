#!/bin/bash
# bench/compare.sh -- two builds of gotrace against each other where load cannot blur it:
#
#   bench/compare.sh OLD/gotrace NEW/gotrace
#
# 1. the BPF each generates for bench/run.sh's scripts (-d bpf --dry-run on the bench's
#    loop and on 2,000 generated functions), instruction for instruction: where they are
#    the same, so is every per-call figure of the bench, since the kernel runs the same
#    program (source-line comments, which move with edits, are left out);
# 2. the instructions user space executes to get ready (valgrind --tool=callgrind, which
#    counts instructions, not seconds: the same on a busy machine), with and without the
#    compiled-program cache.
# For a change that should change nothing (a refactor): docs/performance.md has a run.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 OLD/gotrace NEW/gotrace" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$HERE")
OLD=$(realpath "$1") NEW=$(realpath "$2")
OUT=$(mktemp -d /tmp/gotrace-compare.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
command -v valgrind >/dev/null || { echo "compare.sh: valgrind is missing" >&2; exit 2; }
GO=$("$REPO/scripts/find-go.sh")
export CGO_ENABLED=0 GO111MODULE=off GOTOOLCHAIN=local GOFLAGS=
"$GO" build -o "$OUT/loop" "$REPO/tests/go/loop/main.go"
python3 "$HERE/gen_many.py" "$OUT/many.go" 2000 >/dev/null
"$GO" build -o "$OUT/many" "$OUT/many.go"

# bench/run.sh's scripts (sections 1 to 3, 2a to 2c, and 4's)
LOOP_SCRIPTS=(
  'go:main.work:entry { printf("E %d %d\n", arg0, arg1); }'
  'go:main.work:entry { }'
  'go:main.work:entry { @c = count(); }'
  'go:main.work:entry { @h = hist(arg0); }'
  'go:main.work:entry { } go:main.work:return { $d = duration; }'
  'go:main.work:entry { } go:main.work:return { $d = oncpu; }'
  'go:main.workYield:entry { } go:main.workYield:return { $d = duration; }'
  'go:main.workYield:entry { } go:main.workYield:return { $d = oncpu; }'
  'go:main.workStr:entry { printf("S %s %s\n", args.a, args.b); }'
  'go:main.workStr:entry { printf("S %s %s\n", str(arg0, arg1), str(arg2, arg3)); }'
  'go:main.work:entry { @[ustack] = count(); }'
  'profile:hz:99 /comm == "loop"/ { @[ustack] = count(); }'
  'go:main.work:entry { printf("E %llu\n", nsecs); }'
)
bpf() { # BUILD BINARY SCRIPT -> the BPF instructions, without source-line comments
  XDG_CACHE_HOME=$OUT/cache "$1" --dry-run --no-cache -d bpf -b "$2" -e "$3" 2>&1 | grep -v '^;'
}
same=0 differ=0
echo "1. BPF generated for the bench's scripts"
check() {
  bpf "$OLD" "$1" "$2" >"$OUT/old.txt"; bpf "$NEW" "$1" "$2" >"$OUT/new.txt"
  if cmp -s "$OUT/old.txt" "$OUT/new.txt"; then
    same=$((same + 1)); echo "   same ($(grep -c . "$OUT/new.txt") lines): $2"
  else
    differ=$((differ + 1)); echo "   DIFFER: $2"; diff "$OUT/old.txt" "$OUT/new.txt" | head -n 6
  fi
}
for p in "${LOOP_SCRIPTS[@]}"; do check "$OUT/loop" "$p"; done
check "$OUT/many" 'go:main.fn*:entry { @c = count(); }'
echo "   $same the same, $differ differ"

echo "2. instructions to get ready (callgrind), old -> new"
count() { # BUILD CACHEDIR ARGS... -> instructions executed
  XDG_CACHE_HOME=$2 valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" "${@:3}" 2>&1 |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
for t in "loop|go:main.work:entry { printf(\"E %d %d\\n\", arg0, arg1); }" \
         "many|go:main.fn*:entry { @c = count(); }"; do
  b=$OUT/${t%%|*} p=${t#*|}
  for mode in --no-cache cache-hit; do
    flag=(); [ "$mode" = --no-cache ] && flag=(--no-cache)
    for v in OLD NEW; do
      g=${!v}
      [ "$mode" = cache-hit ] && XDG_CACHE_HOME=$OUT/c-$v "$g" --dry-run -b "$b" -e "$p" >/dev/null 2>&1
      eval "n_$v=\$(count \"\$g\" \"\$OUT/c-\$v\" --dry-run \"\${flag[@]}\" -b \"\$b\" -e \"\$p\")"
    done
    awk -v o="$n_OLD" -v n="$n_NEW" -v w="${t%%|*} $mode" \
      'BEGIN { printf "   %-22s %13d -> %13d  (%+.3f %%)\n", w, o, n, (n - o) * 100 / o }'
  done
done
[ "$differ" -eq 0 ]
