#!/bin/bash
# bench/run.sh -- gotrace next to bpftrace 0.17 (and the raw uprobe_multi
# floor) on the same Go loop, in one run.
#
#   bench/run.sh                 # 3-4 min on a 2-vCPU VM, + ~8 min for section 4
#   QUICK=1 bench/run.sh         # ~1 min, + ~8 min for section 4 (MANY=0: without)
#   RUNS=5 N=1000000 bench/run.sh
#
# What it measures (details and figures: docs/performance.md):
#   1. per-call cost of an entry probe doing one printf per call:
#        gotrace  -o OUT -e 'go:main.work:entry { printf("E %d %d\n", arg0, arg1); }' -c 'loop N'
#        bpftrace -o OUT -e 'uprobe:LOOP:main.work { printf("E %d %d\n", reg("ax"), reg("bx")); }' -c 'loop N'
#      with OUT=/dev/null, and with OUT=a file (events counted against N,
#      arg0 checked: sum over events must be N(N-1)/2; "Lost N events"
#      looked for in every output of the tool);
#   2. per-call cost of an empty entry probe (same, body { }), and of a
#      count() entry probe ({ @c = count(); }, the "@c: N" printed at exit
#      checked against N) when gotrace supports maps (probed with --dry-run);
#      cost = median(traced ns_per_call) - median(untraced ns_per_call), both
#      as printed by the loop itself; the untraced run is interleaved with the
#      traced ones (round by round: base, gotrace, bpftrace, floor, ...);
#   3. start-up of a one-liner run with -c 'loop 1': launch -> first event
#      (the event's nsecs, CLOCK_MONOTONIC, minus the launch time), and total
#      wall time of the whole command; gotrace --dry-run (compile + verifier)
#      and, for bpftrace 0.17 which has no such mode, --emit-elf (compile only).
#   2a. oncpu: the same :entry + :return with the call's on-CPU time (oncpu) instead of
#      its duration, on main.work and on main.workYield (loop -yield: runtime.Gosched in
#      every call, a goroutine switch, which oncpu's probes on the scheduler see), each
#      against its own untraced loop;
#   2b. Go values by name: two Go strings printed per call of main.workStr
#      (loop -str), 'printf("S %s %s\n", args.a, args.b)' against the same by
#      fetch rule, str(arg0, arg1), str(arg2, arg3) (bpftrace: str(reg("ax"),
#      reg("bx")) ...); every event must read "S hello world";
#   2c. stacks (issue 12): per-call cost of @[ustack] = count() at the entry probe
#      (go:main.work:entry / uprobe:LOOP:main.work; the counts printed at exit must
#      add up to N), and the CPU overhead of a 99 Hz and a 999 Hz profile of the loop:
#        gotrace  -e 'profile:hz:99 /comm == "loop"/ { @[ustack] = count(); }' -c 'loop -dur D'
#        bpftrace -e (same text) -c 'loop -dur D'
#      the loop's own ns_per_call traced against untraced (-dur D alone), as a
#      slowdown in %; the map's counts must add up to at least half of HZ * D;
#   4. 2,000 sites attach, run and detach (MANY=0 skips it): a generated Go
#      program (bench/gen_many.py) with 2,000 noinline functions, each called
#      3 times, under
#        gotrace -v -e 'go:main.fn*:entry { @c = count(); }' -c 'many 3'
#      through uprobe_multi and with GT_NO_UPROBE_MULTI=1 (what kernels before 6.6
#      get: one tracefs uprobe event over the 2,000 sites), RUNS times each; with
#      GT_NO_UPROBE_MULTI=1 GT_HIDE_FEATURES=tracefs (one perf-event uprobe a site,
#      where tracefs is missing; PERSITE=0 skips it), and
#        BPFTRACE_MAX_PROBES=2100 bpftrace -e 'uprobe:MANY:main.fn* { @c = count(); }' -c 'many 3'
#      the last two ONCE each: both detach their 2,000 perf-event uprobes one at
#      a time (~0.1 s each here), ~4 min a run; @c must be 6000.
#   5. 70,000 sites (BIG=0 skips it): --dry-run of :entry + :return on each of
#      35,000 generated functions (bench/gen_many.py), cache hit and --no-cache,
#      and of the docker CLI's github.com/docker/cli/* (69,501 sites) when
#      DOCKER=/usr/local/bin/docker exists; wall time and peak RSS.
#   5b. Caddy (CADDY=0 skips it): Caddy v2.11.9 built once into ~/.cache/gotrace-bench;
#      --dry-run of go:*:entry (~183k sites) and of --funcgraph over reverseproxy.*,
#      cache hit and --no-cache; -p on a running Caddy (its caddy/v2/* entries, and
#      go:*:entry): launch to exit, -v's attach and detach.
#   6. following (FOLLOW=0 skips it): gotrace -c 'go run .' on tests/go/calcmod: exec
#      to attached (-v's "held N ms"), cache hit and --no-cache; go run's wall time
#      untraced and traced.
#   7. call graphs next to Go's own eBPF tracers (TRACERS=0 skips it): bench/tracers.py
#      builds delve from its Go module and go-ftrace from ../shared/peers (into
#      ~/.cache/gotrace-bench; each skipped with the reason where it cannot be built)
#      and times gotrace --funcgraph, dlv trace --ebpf and ftrace on one Go 1.24 build of
#      the same loop (added ns per call, N calls) and on 1, 100 and 2,000 functions
#      (start to attached, the whole command; medians of RUNS), each run's calls
#      checked against the program's own count; peak RSS.
#   8. --otlp (OTLP=0 skips it): bench/otlp.py, --funcgraph main.work with export off
#      and on to the Collector of tests/otlp/otelcol: added ns per call, the export's
#      spans per second, gotrace's peak RSS.
#   Floor column: bench/floor.c (one uprobe_multi link on the function, a
#   four-instruction counter program, the child released after the attach as
#   gotrace's -c does), compiled with gcc -lelf.
#
# Each tool runs the loop itself through -c. Every run is checked (exit
# status, calls=N, event count, arg values, hits); a figure with any failed
# run is printed as FAILED with the reason below the table.
#
# Knobs (environment):
#   RUNS=3                rounds for the per-call figures (medians reported)
#   N=400000              calls of main.work per traced run (QUICK: 100000);
#                         a uprobe hit costs 11-16 us on this VM, so 400000
#                         calls with a printf take 5-13 s per run
#   STARTUP_RUNS=30       runs per start-up figure (QUICK: 15); the kernel's grace
#                         periods move a run by tens of ms: fewer runs, unstable medians
#   QUICK=1               N=100000 STARTUP_RUNS=15
#   GOTRACE=<repo>/build/gotrace   (copied to the scratch dir before use)
#   BPFTRACE=bpftrace     set BPFTRACE= (empty) to skip bpftrace
#   FLOOR=1               0 to skip the uprobe_multi floor column (bench/floor.c)
#   MANY=1                0 to skip section 4; MANY_SITES=2000 functions; PERSITE=1
#   BIG=1                 0 to skip section 5; BIG_FUNCS=35000; DOCKER=/usr/local/bin/docker
#   PROF_DUR=3            seconds of each profiled loop run (section 2c)
#   HYPERFINE=1           also time the -c one-liners with hyperfine if present
#   LOOP_SRC=<repo>/tests/go/loop/main.go   the Go loop
#   BENCH_ROOT=/tmp/gotrace-bench      scratch; each run in $BENCH_ROOT/<stamp>
#   MIN_HIT_NS=100        a traced run adding less than this per call counts as
#                         "probe did not fire" (FAILED)
#   KEEP_RAW=1            keep the full event files (else head/tail only)
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
QUICK=${QUICK:-0}
if [ "$QUICK" = 1 ]; then N=${N:-100000}; STARTUP_RUNS=${STARTUP_RUNS:-15}; fi
RUNS=${RUNS:-3}
N=${N:-400000}
STARTUP_RUNS=${STARTUP_RUNS:-30}
GOTRACE_SRC=${GOTRACE:-$REPO/build/gotrace}
BPFTRACE=${BPFTRACE-bpftrace}
FLOOR=${FLOOR:-1}
HYPERFINE=${HYPERFINE:-1}
LOOP_SRC=${LOOP_SRC:-$REPO/tests/go/loop/main.go}
MANY=${MANY:-1}
MANY_SITES=${MANY_SITES:-2000}
PROF_DUR=${PROF_DUR:-3}
BENCH_ROOT=${BENCH_ROOT:-/tmp/gotrace-bench}
MIN_HIT_NS=${MIN_HIT_NS:-100}
KEEP_RAW=${KEEP_RAW:-0}

die() { echo "run.sh: $*" >&2; exit 1; }
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer"
[[ $N =~ ^[1-9][0-9]*$ ]] || die "N must be a positive integer"
[[ $STARTUP_RUNS =~ ^[1-9][0-9]*$ ]] || die "STARTUP_RUNS must be a positive integer"
[[ $PROF_DUR =~ ^[1-9][0-9]*$ ]] || die "PROF_DUR must be a positive integer (seconds)"
[ "$(id -u)" = 0 ] || die "must run as root (BPF)"
[ -x "$GOTRACE_SRC" ] || die "no gotrace binary at $GOTRACE_SRC (build it: cmake -S . -B build && cmake --build build)"
[ -f "$LOOP_SRC" ] || die "no $LOOP_SRC (set LOOP_SRC=)"
command -v go >/dev/null || die "go not found"
command -v python3 >/dev/null || die "python3 not found"
if [ -n "$BPFTRACE" ] && ! command -v "$BPFTRACE" >/dev/null; then
  echo "run.sh: $BPFTRACE not found; bpftrace column skipped" >&2; BPFTRACE=
fi

OUT=$BENCH_ROOT/$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT" || die "cannot create $OUT"
RUNS_TSV=$OUT/runs.tsv
: >"$RUNS_TSV"
echo "# bench/run.sh: raw outputs in $OUT"

# Snapshot the binaries: src/ is edited (and rebuilt) concurrently.
GOTRACE_BIN=$OUT/gotrace
cp "$GOTRACE_SRC" "$GOTRACE_BIN" || die "cannot copy $GOTRACE_SRC"
# its code generator module (loaded on a cache miss) beside it, and a cache of its own
cp "$(dirname "$GOTRACE_SRC")/gotrace-cg.so" "$OUT/" || die "no gotrace-cg.so beside $GOTRACE_SRC"
export XDG_CACHE_HOME=$OUT/cache
STALE=
if [[ $GOTRACE_SRC == "$REPO"/* ]]; then
  STALE=$(find "$REPO/src" "$REPO/runtime-bpf" "$REPO/CMakeLists.txt" -newer "$GOTRACE_SRC" -type f 2>/dev/null | head -3 | tr '\n' ' ')
fi

# ---------------------------------------------------------------- build
export GOCACHE=${GOCACHE:-$BENCH_ROOT/gocache} GOPATH=${GOPATH:-$BENCH_ROOT/gopath}
export CGO_ENABLED=0 GOFLAGS='' GO111MODULE=auto GOTOOLCHAIN=local
GO=$("$REPO/scripts/find-go.sh") || die "no go command"
LOOP=$OUT/loop
"$GO" build -o "$LOOP" "$LOOP_SRC" >"$OUT/build.log" 2>&1 || { cat "$OUT/build.log"; die "go build of loop.go failed"; }
UMULTI=
if [ "$FLOOR" = 1 ]; then
  if command -v gcc >/dev/null && gcc -O2 -o "$OUT/floor" "$HERE/floor.c" -lelf >>"$OUT/build.log" 2>&1; then
    UMULTI=$OUT/floor
  else
    echo "run.sh: cannot build the uprobe_multi floor (see $OUT/build.log); column skipped" >&2
  fi
fi
grep -q ' /sys/kernel/tracing tracefs ' /proc/mounts || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null

TOOLS=(gotrace); [ -n "$BPFTRACE" ] && TOOLS+=(bpftrace)

# ---------------------------------------------------------------- env
{
  echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "kernel=$(uname -r)"
  echo "cpus=$(nproc)"
  echo "cpu_model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
  src_dir=$(cd "$(dirname "$GOTRACE_SRC")/.." && pwd)   # <tree>/build/gotrace -> <tree>
  rev=$(git -C "$src_dir" rev-parse --short HEAD 2>/dev/null)
  [ -n "$rev" ] && [ -n "$(git -C "$src_dir" status --porcelain -- src runtime-bpf 2>/dev/null)" ] && rev+=", src/ modified"
  echo "gotrace=$("$GOTRACE_BIN" -V 2>&1 | head -1) ($GOTRACE_SRC${rev:+, git $rev})"
  [ -n "$STALE" ] && echo "gotrace_stale=binary older than: $STALE"
  [ -n "$BPFTRACE" ] && echo "bpftrace=$("$BPFTRACE" --version 2>&1 | head -1)"
  echo "go=$(go version | awk '{print $3}')"
  echo "N=$N RUNS=$RUNS STARTUP_RUNS=$STARTUP_RUNS QUICK=$QUICK"
} >"$OUT/env.txt"
sed 's/^/# /' "$OUT/env.txt"

# ---------------------------------------------------------------- helpers
PROG_GT_PRINTF='go:main.work:entry { printf("E %d %d\n", arg0, arg1); }'
PROG_BT_PRINTF="uprobe:$LOOP:main.work { printf(\"E %d %d\\n\", reg(\"ax\"), reg(\"bx\")); }"
PROG_GT_EMPTY='go:main.work:entry { }'
PROG_BT_EMPTY="uprobe:$LOOP:main.work { }"
PROG_GT_COUNT='go:main.work:entry { @c = count(); }'
PROG_BT_COUNT="uprobe:$LOOP:main.work { @c = count(); }"
PROG_GT_HIST='go:main.work:entry { @h = hist(arg0); }'
PROG_BT_HIST="uprobe:$LOOP:main.work { @h = hist(reg(\"ax\")); }"
# :entry + :return with the call's duration kept in a variable. bpftrace has no safe
# equivalent: its uretprobe crashes Go programs (anchor section d), so gotrace only.
PROG_GT_RETDUR='go:main.work:entry { } go:main.work:return { $d = duration; }'
# the same with the call's on-CPU time: the added cost per call, and, on workYield (the
# loop's -yield: one goroutine switch a call), what oncpu's scheduler probes add per switch
PROG_GT_RETCPU='go:main.work:entry { } go:main.work:return { $d = oncpu; }'
PROG_GT_YDUR='go:main.workYield:entry { } go:main.workYield:return { $d = duration; }'
PROG_GT_YCPU='go:main.workYield:entry { } go:main.workYield:return { $d = oncpu; }'
# Go values by name against the same fetched by hand: two Go strings printed per call
# of main.workStr("hello", "world") (the loop's -str mode)
PROG_GT_ARGSTR='go:main.workStr:entry { printf("S %s %s\n", args.a, args.b); }'
PROG_GT_RULESTR='go:main.workStr:entry { printf("S %s %s\n", str(arg0, arg1), str(arg2, arg3)); }'
PROG_BT_RULESTR="uprobe:$LOOP:main.workStr { printf(\"S %s %s\\n\", str(reg(\"ax\"), reg(\"bx\")), str(reg(\"cx\"), reg(\"di\"))); }"
# stacks (issue 12): a map keyed by the user stack at every call, and a profile of the
# loop at 99 and 999 Hz (the same text for both tools; comm filters the loop's samples)
PROG_GT_USTACK='go:main.work:entry { @[ustack] = count(); }'
PROG_BT_USTACK="uprobe:$LOOP:main.work { @[ustack] = count(); }"
prog_profile() { printf 'profile:hz:%s /comm == "loop"/ { @[ustack] = count(); }' "$1"; }
LIMIT=$(( 120 + N / 2500 ))   # seconds per traced run (400 us per call + 2 min)

kv() { grep -m1 "^$1=" "$2" 2>/dev/null | cut -d= -f2; }
# lost_of FILE...: sum of "Lost N events" lines (bpftrace prints them on its
# output, gotrace on stderr)
lost_of() { cat "$@" 2>/dev/null | awk '/Lost [0-9]+ events/{for(i=1;i<NF;i++) if($i=="Lost") s+=$(i+1)} END{print s+0}'; }
first_err() { grep -v -E 'RLIMIT_MEMLOCK|^libbpf: elf: skipping' "$1" 2>/dev/null | grep -m1 . | cut -c1-150; }
# record METRIC TOOL ROUND STATUS VALUE INFO WHY   (INFO: key=value words)
record() { printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$6" "${7:-}" >>"$RUNS_TSV"; }

# report_run METRIC TOOL ROUND TAG NS INFO WHY: records a run's ns_per_call, or that it
# FAILED and why, and says so on stdout.
report_run() {
  local metric=$1 tool=$2 r=$3 tag=$4 ns=$5 info=$6 why=$7
  if [ -n "$why" ]; then
    record "$metric" "$tool" "$r" FAILED "${ns:-}" "$info" "$why"
    printf '# %-28s FAILED: %s\n' "$tag" "$why"
  else
    record "$metric" "$tool" "$r" ok "$ns" "$info" ""
    printf '# %-28s ns_per_call=%s %s\n' "$tag" "$ns" "$info"
  fi
}

# one_run METRIC TOOL ROUND : runs the loop (N calls) under TOOL, checks it,
# records ns_per_call. METRIC: base | printf_null | printf_file | empty | count
# (| floor: the uprobe_multi counter).
one_run() {
  local metric=$1 tool=$2 r=$3
  local tag=$metric.$tool.r$r
  local so=$OUT/$tag.stdout se=$OUT/$tag.stderr ev=/dev/null cmd rc
  case $metric in printf_file|count|hist|argstr|rulestr|ustack) ev=$OUT/$tag.events ;; esac
  case $tool:$metric in
    base:base_str)       cmd=("$LOOP" -str "$N") ;;
    base:base_yield)     cmd=("$LOOP" -yield "$N") ;;
    base:*)              cmd=("$LOOP" "$N") ;;
    gotrace:argstr)      cmd=("$GOTRACE_BIN" -o "$ev" -e "$PROG_GT_ARGSTR" -c "$LOOP -str $N") ;;
    gotrace:rulestr)     cmd=("$GOTRACE_BIN" -o "$ev" -e "$PROG_GT_RULESTR" -c "$LOOP -str $N") ;;
    bpftrace:rulestr)    cmd=("$BPFTRACE" -o "$ev" -e "$PROG_BT_RULESTR" -c "$LOOP -str $N") ;;
    floor:*)             cmd=("$UMULTI" "$LOOP" main.work "$LOOP" "$N") ;;
    gotrace:printf_*)    cmd=("$GOTRACE_BIN" -o "$ev" -e "$PROG_GT_PRINTF" -c "$LOOP $N") ;;
    gotrace:empty)       cmd=("$GOTRACE_BIN" -o "$ev" -e "$PROG_GT_EMPTY" -c "$LOOP $N") ;;
    bpftrace:printf_*)   cmd=("$BPFTRACE" -o "$ev" -e "$PROG_BT_PRINTF" -c "$LOOP $N") ;;
    bpftrace:empty)      cmd=("$BPFTRACE" -o "$ev" -e "$PROG_BT_EMPTY" -c "$LOOP $N") ;;
    gotrace:count)       cmd=("$GOTRACE_BIN" -o "$ev" -e "$PROG_GT_COUNT" -c "$LOOP $N") ;;
    bpftrace:count)      cmd=("$BPFTRACE" -o "$ev" -e "$PROG_BT_COUNT" -c "$LOOP $N") ;;
    gotrace:hist)        cmd=("$GOTRACE_BIN" -o "$ev" -e "$PROG_GT_HIST" -c "$LOOP $N") ;;
    bpftrace:hist)       cmd=("$BPFTRACE" -o "$ev" -e "$PROG_BT_HIST" -c "$LOOP $N") ;;
    gotrace:retdur)      cmd=("$GOTRACE_BIN" -o "$ev" -e "$PROG_GT_RETDUR" -c "$LOOP $N") ;;
    gotrace:retcpu)      cmd=("$GOTRACE_BIN" -o "$ev" -e "$PROG_GT_RETCPU" -c "$LOOP $N") ;;
    gotrace:ydur)        cmd=("$GOTRACE_BIN" -o "$ev" -e "$PROG_GT_YDUR" -c "$LOOP -yield $N") ;;
    gotrace:ycpu)        cmd=("$GOTRACE_BIN" -o "$ev" -e "$PROG_GT_YCPU" -c "$LOOP -yield $N") ;;
    gotrace:ustack)      cmd=("$GOTRACE_BIN" -o "$ev" -e "$PROG_GT_USTACK" -c "$LOOP $N") ;;
    bpftrace:ustack)     cmd=("$BPFTRACE" -o "$ev" -e "$PROG_BT_USTACK" -c "$LOOP $N") ;;
  esac
  printf '%s\n' "${cmd[*]}" >"$OUT/$tag.cmd"
  timeout -k 10 "$LIMIT" "${cmd[@]}" >"$so" 2>"$se"; rc=$?
  local ns calls why="" info="" got lost
  ns=$(kv ns_per_call "$so"); calls=$(kv calls "$so")
  if [ $rc = 124 ] || [ $rc = 137 ]; then why="timed out after ${LIMIT}s"
  elif [ $rc != 0 ]; then why="exit status $rc: $(first_err "$se")"
  elif [ "$calls" != "$N" ] || [ -z "$ns" ]; then why="loop output missing/wrong (calls=${calls:-none})"
  fi
  lost=$(lost_of "$so" "$se" "$ev")
  [ "$lost" != 0 ] && info+="lost=$lost "
  if [ "$metric" = printf_file ]; then
    # events, and the arg0 check: the loop passes a = 0..N-1
    read -r got sum < <(awk '/^E -?[0-9]+ -?[0-9]+$/{n++; s+=$2} END{printf "%d %.0f\n", n, s}' "$ev")
    info+="events=$got "
    if [ -z "$why" ] && [ "$got" != "$N" ]; then
      why="received $got of $N events$( [ "$lost" != 0 ] && echo ", Lost $lost reported")"
    elif [ -z "$why" ] && [ "$sum" != "$(python3 -c "print($N*($N-1)//2)")" ]; then
      why="arg0 values wrong (sum $sum)"
    fi
    if [ "$KEEP_RAW" != 1 ] && [ -f "$ev" ]; then
      { head -3 "$ev"; grep -v '^E ' "$ev"; tail -2 "$ev"; } >"$ev.kept"; mv "$ev.kept" "$ev"
    fi
  elif [ "$metric" = argstr ] || [ "$metric" = rulestr ]; then
    got=$(grep -c '^S hello world$' "$ev")
    info+="events=$got "
    [ -z "$why" ] && [ "$got" != "$N" ] && why="$got of $N events read 'S hello world'"
    [ "$KEEP_RAW" != 1 ] && [ -f "$ev" ] && { head -3 "$ev" >"$ev.kept"; mv "$ev.kept" "$ev"; }
  elif [ "$metric" = count ]; then
    got=$(awk '$1 == "@c:" {v = $2} END {print v}' "$ev")
    info+="count=${got:-none} "
    [ -z "$why" ] && [ "$got" != "$N" ] && why="@c: ${got:-none}, expected $N"
  elif [ "$metric" = ustack ]; then
    # one entry per distinct stack ("]: COUNT" closes each): the counts add up to N
    got=$(awk '/^\]: [0-9]+$/ {s += $2} END {print s + 0}' "$ev")
    info+="ustack_total=$got "
    [ -z "$why" ] && [ "$got" != "$N" ] && why="@[ustack] counts add up to $got, expected $N"
  elif [ "$metric" = hist ]; then
    # every call lands in one bucket: the bucket counts add up to N
    got=$(awk '/^[[(].* [0-9]+ \|/ {sub(/^.*[])] +/, ""); s += $1} END {print s + 0}' "$ev")
    info+="hist_total=$got "
    [ -z "$why" ] && [ "$got" != "$N" ] && why="hist buckets add up to $got, expected $N"
  fi
  if [ "$metric" != printf_file ] && [ "$lost" != 0 ] && [ -z "$why" ]; then
    why="Lost $lost events reported"
  fi
  if [ "$tool" = floor ] && [ -z "$why" ]; then
    local hits; hits=$(kv hits "$so"); info+="hits=$hits "
    [ "$hits" != "$N" ] && why="hits=${hits:-none}, expected $N"
  fi
  report_run "$metric" "$tool" "$r" "$tag" "$ns" "$info" "$why"
}

# prof_run METRIC TOOL ROUND HZ : the loop for PROF_DUR seconds (-dur), profiled by TOOL
# at HZ (METRIC prof_base, TOOL base: alone); records its ns_per_call. The profile's
# counts must add up to at least half of HZ * PROF_DUR (samples of the loop's thread).
prof_run() {
  local metric=$1 tool=$2 r=$3 hz=$4
  local tag=$metric.$tool.r$r so=$OUT/$metric.$tool.r$r.stdout se=$OUT/$metric.$tool.r$r.stderr
  local ev=$OUT/$tag.events cmd rc why="" info="" ns got
  case $tool in
    base)     cmd=("$LOOP" -dur "${PROF_DUR}s") ;;
    gotrace)  cmd=("$GOTRACE_BIN" -o "$ev" -e "$(prog_profile "$hz")" -c "$LOOP -dur ${PROF_DUR}s") ;;
    bpftrace) cmd=("$BPFTRACE" -o "$ev" -e "$(prog_profile "$hz")" -c "$LOOP -dur ${PROF_DUR}s") ;;
  esac
  printf '%s\n' "${cmd[*]}" >"$OUT/$tag.cmd"
  timeout -k 10 $((PROF_DUR + 120)) "${cmd[@]}" >"$so" 2>"$se"; rc=$?
  ns=$(kv ns_per_call "$so")
  if [ $rc = 124 ] || [ $rc = 137 ]; then why="timed out"
  elif [ $rc != 0 ]; then why="exit status $rc: $(first_err "$se")"
  elif [ -z "$ns" ]; then why="loop output missing"
  fi
  if [ "$tool" != base ]; then
    got=$(awk '/^\]: [0-9]+$/ {s += $2} END {print s + 0}' "$ev")
    info+="samples=$got "
    [ -z "$why" ] && [ "$got" -lt $((hz * PROF_DUR / 2)) ] && why="$got samples, expected ~$((hz * PROF_DUR))"
    [ "$KEEP_RAW" != 1 ] && [ -f "$ev" ] && { head -40 "$ev" >"$ev.kept"; mv "$ev.kept" "$ev"; }
  fi
  report_run "$metric" "$tool" "$r" "$tag" "$ns" "$info" "$why"
}

# count() needs maps: run that row for gotrace only when its compiler accepts it.
COUNT_TOOLS=()
if "$GOTRACE_BIN" --dry-run -b "$LOOP" -e "$PROG_GT_COUNT" >"$OUT/count_probe.out" 2>&1; then
  COUNT_TOOLS+=(gotrace)
else
  record count_unsupported gotrace 0 n/a "" "" "$(first_err "$OUT/count_probe.out")"
  echo "# gotrace: count() not supported by this build: $(first_err "$OUT/count_probe.out")"
fi
[ -n "$BPFTRACE" ] && COUNT_TOOLS+=(bpftrace)

trap 'echo "run.sh: interrupted; partial outputs in $OUT" >&2; exit 130' INT TERM

# ---------------------------------------------------------------- 1 + 2
echo "# per-call cost: N=$N calls, $RUNS rounds (interleaved)"
for ((r = 1; r <= RUNS; r++)); do
  one_run base base "$r"
  for t in "${TOOLS[@]}"; do one_run printf_null "$t" "$r"; done
  for t in "${TOOLS[@]}"; do one_run printf_file "$t" "$r"; done
  one_run base base "$((r + RUNS))"
  for t in "${TOOLS[@]}"; do one_run empty "$t" "$r"; done
  for t in "${COUNT_TOOLS[@]}"; do one_run count "$t" "$r"; done
  for t in "${COUNT_TOOLS[@]}"; do one_run hist "$t" "$r"; done
  for t in "${COUNT_TOOLS[@]}"; do [ "$t" = gotrace ] && one_run retdur "$t" "$r"; done
  for t in "${COUNT_TOOLS[@]}"; do [ "$t" = gotrace ] && one_run retcpu "$t" "$r"; done
  one_run base_yield base "$r"
  for t in "${COUNT_TOOLS[@]}"; do [ "$t" = gotrace ] && one_run ydur "$t" "$r"; done
  for t in "${COUNT_TOOLS[@]}"; do [ "$t" = gotrace ] && one_run ycpu "$t" "$r"; done
  one_run base_str base "$r"
  one_run argstr gotrace "$r"
  for t in "${TOOLS[@]}"; do one_run rulestr "$t" "$r"; done
  for t in "${COUNT_TOOLS[@]}"; do one_run ustack "$t" "$r"; done
  [ -n "$UMULTI" ] && one_run floor floor "$r"
done

# ---------------------------------------------------------------- 2c
echo "# profile overhead: the loop for ${PROF_DUR}s, alone and profiled at 99 and 999 Hz, $RUNS rounds"
for ((r = 1; r <= RUNS; r++)); do
  prof_run prof_base base "$r" 0
  for hz in 99 999; do
    for t in "${COUNT_TOOLS[@]}"; do prof_run "prof$hz" "$t" "$r" "$hz"; done
  done
done

# ---------------------------------------------------------------- 3
echo "# start-up: $STARTUP_RUNS runs each"
python3 - "$OUT" "$STARTUP_RUNS" "$LOOP" "$GOTRACE_BIN" "${BPFTRACE:-}" "${UMULTI:-}" <<'PY' || echo "# start-up driver failed" >&2
import os, subprocess, sys, threading, time
out, runs, loop, gt, bt, um = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
tsv = open(os.path.join(out, "runs.tsv"), "a")
def rec(metric, tool, r, status, value, why):
    tsv.write("\t".join(map(str, (metric, tool, r, status, value, "", why))) + "\n"); tsv.flush()
def first_err(path):
    for l in open(path, errors="replace"):
        if l.strip() and "RLIMIT_MEMLOCK" not in l and "skipping" not in l:
            return l.strip()[:150]
    return ""
def run(cmd, tag):
    so, se = os.path.join(out, tag + ".stdout"), os.path.join(out, tag + ".stderr")
    with open(os.path.join(out, tag + ".cmd"), "w") as f: f.write(repr(cmd) + "\n")
    # No timeout= in run()/wait(): with one, CPython polls waitpid with sleeps
    # growing to 50 ms, which quantizes the wall times. A timer kills instead.
    timed_out = []
    def kill(p):
        timed_out.append(1); p.kill()
    with open(so, "wb") as o, open(se, "wb") as e:
        t0 = time.monotonic_ns()
        p = subprocess.Popen(cmd, stdout=o, stderr=e, stdin=subprocess.DEVNULL)
        timer = threading.Timer(120, kill, (p,)); timer.start()
        _, status, _ = os.wait4(p.pid, 0)
        t1 = time.monotonic_ns()
        p.returncode = rc = os.waitstatus_to_exitcode(status)
        timer.cancel()
    if timed_out: rc = "timeout (120 s)"
    why = "" if rc == 0 else "exit status %s: %s" % (rc, first_err(se))
    return t0, t1, so, se, why
TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None
def peak_rss(cmd, tag):
    """CMD's peak RSS in MB, by GNU time in a run of its own (None without it). A child
    of this process inherits its high-water mark (the kernel keeps the larger across
    exec), so a timed run's ru_maxrss said at least this Python's: 13.9 MB for a
    gotrace cache hit whose own peak is 8.2 MB."""
    if not TIME:
        return None
    f = os.path.join(out, tag + ".rss")
    subprocess.run([TIME, "-q", "-f", "%M", "-o", f] + cmd, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        return int(open(f).read().split()[-1]) / 1024
    except (OSError, ValueError, IndexError):
        return None
progs = {
    "gotrace": [gt, "-e", 'go:main.work:entry { printf("E %llu\\n", nsecs); }', "-c", loop + " 1"],
    "bpftrace": [bt, "-e", 'uprobe:%s:main.work { printf("E %%llu\\n", nsecs); }' % loop, "-c", loop + " 1"],
}
# gotrace warm (the compiled-program cache has the one-liner: primed once below) and
# cold (--no-cache: LLVM runs, as on a first run)
progs["gotrace-cold"] = [gt, "--no-cache"] + progs["gotrace"][1:]
tools = ["gotrace", "gotrace-cold"] + (["bpftrace"] if bt else [])
run(progs["gotrace"][:1] + ["-o", os.devnull] + progs["gotrace"][1:], "startup.prime")
for r in range(1, runs + 1):
    for t in tools:
        ev = os.path.join(out, "startup.%s.r%d.events" % (t, r))
        cmd = progs[t][:1] + ["-o", ev] + progs[t][1:]
        t0, t1, so, se, why = run(cmd, "startup.%s.r%d" % (t, r))
        evs = [l.split() for l in open(ev, errors="replace") if l.startswith("E ")] if os.path.exists(ev) else []
        if not why and len(evs) != 1:
            why = "%d events, expected 1" % len(evs)
        if not why and "calls=1" not in open(so).read():
            why = "loop output missing"
        tool, cold = ("gotrace", "_cold") if t == "gotrace-cold" else (t, "")
        if why:
            rec("startup_first_event" + cold, tool, r, "FAILED", "", why)
            rec("startup_total" + cold, tool, r, "FAILED", "", why)
            print("# startup.%s.r%d FAILED: %s" % (t, r, why)); continue
        first = (int(evs[0][1]) - t0) / 1e6
        total = (t1 - t0) / 1e6
        rec("startup_first_event" + cold, tool, r, "ok", "%.1f" % first, "")
        rec("startup_total" + cold, tool, r, "ok", "%.1f" % total, "")
        mb = peak_rss(cmd, "startup.%s.r%d" % (t, r))
        if mb is not None:
            rec("startup_rss" + cold, tool, r, "ok", "%.1f" % mb, "")
    if um:   # floor: attach one uprobe_multi link, run loop 1, detach
        t0, t1, so, se, why = run([um, loop, "main.work", loop, "1"], "startup.floor.r%d" % r)
        txt = open(so).read()
        if not why and "hits=1\n" not in txt:
            why = "hits != 1"
        rec("startup_total", "floor", r, "FAILED" if why else "ok", "" if why else "%.1f" % ((t1 - t0) / 1e6), why)
        am = [l.split("=")[1] for l in txt.splitlines() if l.startswith("attach_ms=")]
        if am and not why:
            rec("attach_ms", "floor", r, "ok", am[0], "")
    # compile (+ verifier) only
    t0, t1, so, se, why = run([gt, "--dry-run", "-b", loop, "-e", 'go:main.work:entry { printf("E %d %d\\n", arg0, arg1); }'],
                              "dryrun.gotrace.r%d" % r)
    rec("dryrun", "gotrace", r, "FAILED" if why else "ok", "" if why else "%.1f" % ((t1 - t0) / 1e6), why)
    if bt:
        elf = os.path.join(out, "dryrun.bpftrace.elf")
        t0, t1, so, se, why = run([bt, "--emit-elf", elf, "-e",
                                   'uprobe:%s:main.work { printf("E %%d %%d\\n", reg("ax"), reg("bx")); }' % loop],
                                  "dryrun.bpftrace.r%d" % r)
        if not why and not (os.path.exists(elf) and os.path.getsize(elf) > 0):
            why = "no ELF written"
        rec("dryrun", "bpftrace", r, "FAILED" if why else "ok", "" if why else "%.1f" % ((t1 - t0) / 1e6), why)
PY

if [ "$HYPERFINE" = 1 ] && command -v hyperfine >/dev/null; then
  hf_cmds=("$GOTRACE_BIN -o /dev/null -e 'go:main.work:entry { printf(\"E %d %d\\n\", arg0, arg1); }' -c '$LOOP 1'")
  [ -n "$BPFTRACE" ] && hf_cmds+=("$BPFTRACE -o /dev/null -e 'uprobe:$LOOP:main.work { printf(\"E %d %d\\n\", reg(\"ax\"), reg(\"bx\")); }' -c '$LOOP 1'")
  if hyperfine -N --warmup 1 --runs "$STARTUP_RUNS" --export-json "$OUT/hyperfine.json" "${hf_cmds[@]}" >"$OUT/hyperfine.txt" 2>&1; then
    python3 - "$OUT/hyperfine.json" "$RUNS_TSV" "${TOOLS[@]}" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
with open(sys.argv[2], "a") as f:
    for tool, r in zip(sys.argv[3:], res):
        f.write("startup_hyperfine\t%s\t1\tok\t%.1f\t\tmean %.1f sd %.1f ms, %d runs\n"
                % (tool, r["median"] * 1e3, r["mean"] * 1e3, r["stddev"] * 1e3, len(r["times"])))
PY
  else
    for t in "${TOOLS[@]}"; do record startup_hyperfine "$t" 1 FAILED "" "" "hyperfine: $(grep -m1 -i error "$OUT/hyperfine.txt")"; done
  fi
fi

# ---------------------------------------------------------------- 4
# 2,000 sites: attach, run ('many 3' calls each function 3 times), detach. Wall time of
# the whole command; gotrace's own attach/detach figures from -v.
many_run() {   # many_run TAG METRIC TOOL ROUND CMD... (env assignments first, via env)
  local tag=$1 metric=$2 tool=$3 r=$4; shift 4
  local so=$OUT/$tag.stdout se=$OUT/$tag.stderr t0 t1 rc why="" want=$((3 * MANY_SITES))
  printf '%s\n' "$*" >"$OUT/$tag.cmd"
  t0=$(date +%s%N)
  timeout -k 10 1800 "$@" >"$so" 2>"$se"; rc=$?
  t1=$(date +%s%N)
  if [ $rc != 0 ]; then why="exit status $rc: $(first_err "$se")"
  elif ! grep -q "^calls=$want " "$so"; then why="loop output missing/wrong"
  elif ! grep -q "^@c: $want\$" "$so"; then why="@c: $(awk '$1 == "@c:" {print $2}' "$so"), expected $want"
  fi
  local secs; secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
  if [ -n "$why" ]; then
    record "$metric" "$tool" "$r" FAILED "" "" "$why"; printf '# %-28s FAILED: %s\n' "$tag" "$why"; return
  fi
  record "$metric" "$tool" "$r" ok "$secs" "" ""
  local am dm
  am=$(sed -n 's/^gotrace: attached .* in \([0-9.]*\) ms$/\1/p' "$se")
  dm=$(sed -n 's/^gotrace: detached .* in \([0-9.]*\) ms$/\1/p' "$se")
  [ -n "$am" ] && record "${metric}_attach" "$tool" "$r" ok "$am" "" ""
  [ -n "$dm" ] && record "${metric}_detach" "$tool" "$r" ok "$dm" "" ""
  printf '# %-28s total=%ss attach_ms=%s detach_ms=%s\n' "$tag" "$secs" "${am:--}" "${dm:--}"
}
if [ "$MANY" = 1 ]; then
  echo "# $MANY_SITES sites: attach, run, detach (perf-event uprobes and bpftrace: once each)"
  python3 "$HERE/gen_many.py" "$OUT/many.go" "$MANY_SITES" &&
    "$GO" build -o "$OUT/many" "$OUT/many.go" >>"$OUT/build.log" 2>&1 || die "go build of many.go failed"
  PROG_GT_MANY='go:main.fn*:entry { @c = count(); }'
  for ((r = 1; r <= RUNS; r++)); do
    many_run "many.gotrace.r$r" many gotrace "$r" env GT_NO_UPROBE_MULTI=0 \
      "$GOTRACE_BIN" -v -e "$PROG_GT_MANY" -c "$OUT/many 3"
  done
  for ((r = 1; r <= RUNS; r++)); do
    many_run "many.gotrace-tracefs.r$r" many_tracefs gotrace "$r" env GT_NO_UPROBE_MULTI=1 \
      "$GOTRACE_BIN" -v -e "$PROG_GT_MANY" -c "$OUT/many 3"
  done
  [ "${PERSITE:-1}" = 1 ] && many_run many.gotrace-perf.r1 many_perf gotrace 1 \
    env GT_NO_UPROBE_MULTI=1 GT_HIDE_FEATURES=tracefs \
    "$GOTRACE_BIN" -v -e "$PROG_GT_MANY" -c "$OUT/many 3"
  [ -n "$BPFTRACE" ] && many_run many.bpftrace.r1 many bpftrace 1 \
    env BPFTRACE_MAX_PROBES=$((MANY_SITES + 100)) "$BPFTRACE" \
    -e "uprobe:$OUT/many:main.fn* { @c = count(); }" -c "$OUT/many 3"
fi

# ---------------------------------------------------------------- 5
# 70,000 sites: --dry-run (parse; sema with the prologue and RET scans; codegen, or the
# cache; the verifier) of :entry + :return on each of BIG_FUNCS generated functions,
# and on the docker CLI's github.com/docker/cli/* (69,501 sites) when DOCKER names a
# docker binary (default /usr/local/bin/docker, if there). Cache hit and --no-cache.
# bpftrace 0.17 makes one program per probe (BPFTRACE_MAX_PROBES, default 512): no row.
big_run() {   # big_run TAG METRIC ROUND MIN_SITES CMD...
  local tag=$1 metric=$2 r=$3 want=$4; shift 4
  local so=$OUT/$tag.stdout se=$OUT/$tag.stderr res why="" sites
  printf '%s\n' "$*" >"$OUT/$tag.cmd"
  # wall ms and peak RSS from wait4, as in section 3
  res=$(python3 -c '
import os, sys, time, resource
t0 = time.monotonic_ns()
p = os.fork()
if p == 0:
    fo = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    fe = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fo, 1); os.dup2(fe, 2)
    try: os.execvp(sys.argv[3], sys.argv[3:])
    finally: os._exit(127)
_, st, ru = os.wait4(p, 0)
print("%.1f %.1f %d" % ((time.monotonic_ns() - t0) / 1e6, ru.ru_maxrss / 1024,
                         os.waitstatus_to_exitcode(st)))' "$so" "$se" "$@")
  set -- $res
  sites=$(sed -n 's/^gotrace: \([0-9]*\) site(s).*/\1/p' "$se")
  if [ "$3" != 0 ]; then why="exit status $3: $(first_err "$se")"
  elif [ -z "$sites" ] || [ "$sites" -lt "$want" ]; then why="${sites:-no} sites, expected >= $want"
  fi
  if [ -n "$why" ]; then
    record "$metric" gotrace "$r" FAILED "" "" "$why"; printf '# %-28s FAILED: %s\n' "$tag" "$why"; return
  fi
  record "$metric" gotrace "$r" ok "$1" "sites=$sites" ""
  record "${metric}_rss" gotrace "$r" ok "$2" "" ""
  printf '# %-28s sites=%s wall_ms=%s rss_mb=%s\n' "$tag" "$sites" "$1" "$2"
}
BIG=${BIG:-1}
BIG_FUNCS=${BIG_FUNCS:-35000}
DOCKER=${DOCKER-/usr/local/bin/docker}
if [ "$BIG" = 1 ]; then
  echo "# $((2 * BIG_FUNCS)) sites: --dry-run of :entry + :return (and the docker CLI's cli/*)"
  python3 "$HERE/gen_many.py" "$OUT/big.go" "$BIG_FUNCS" &&
    "$GO" build -o "$OUT/big" "$OUT/big.go" >>"$OUT/build.log" 2>&1 || die "go build of big.go failed"
  PROG_GT_BIG='go:main.fn*:entry { @e[probe] = count(); } go:main.fn*:return { @r[probe] = count(); }'
  PROG_GT_DOCKER='go:"github.com/docker/cli/*":entry { @e[probe] = count(); } go:"github.com/docker/cli/*":return { @r[probe] = count(); }'
  "$GOTRACE_BIN" --dry-run -b "$OUT/big" -e "$PROG_GT_BIG" >/dev/null 2>&1  # primes the cache
  [ -x "$DOCKER" ] && "$GOTRACE_BIN" --dry-run -b "$DOCKER" -e "$PROG_GT_DOCKER" >/dev/null 2>&1
  for ((r = 1; r <= RUNS; r++)); do
    big_run "big.gotrace.r$r" big_dryrun "$r" $((2 * BIG_FUNCS)) \
      "$GOTRACE_BIN" -v --dry-run -b "$OUT/big" -e "$PROG_GT_BIG"
    big_run "big-cold.gotrace.r$r" big_dryrun_cold "$r" $((2 * BIG_FUNCS)) \
      "$GOTRACE_BIN" -v --no-cache --dry-run -b "$OUT/big" -e "$PROG_GT_BIG"
    if [ -x "$DOCKER" ]; then
      big_run "docker.gotrace.r$r" docker_dryrun "$r" 60000 \
        "$GOTRACE_BIN" -v --dry-run -b "$DOCKER" -e "$PROG_GT_DOCKER"
      big_run "docker-cold.gotrace.r$r" docker_dryrun_cold "$r" 60000 \
        "$GOTRACE_BIN" -v --no-cache --dry-run -b "$DOCKER" -e "$PROG_GT_DOCKER"
    fi
  done
fi

# ---------------------------------------------------------------- 5b
# A real web server at full size (issue 42): Caddy v2.11.9 built from its module with the
# machine's Go into ~/.cache/gotrace-bench/caddy (CADDY=0 skips it; ~5 min the first
# time). --dry-run of go:*:entry (every function, ~183k sites) and of --funcgraph over
# reverseproxy.* (~1,300 sites), cache hit and --no-cache; then -p on a running Caddy
# serving files: a script over every github.com/caddyserver/caddy/v2 function's entry,
# launch to exit with BEGIN's exit() (cache hit), and -v's attach and detach times.
CADDY=${CADDY:-1}
export CADDY_VERSION=${CADDY_VERSION:-v2.11.9}
caddy_run() {   # caddy_run TAG METRIC ROUND CMD...: wall ms, -v's attach / detach ms
  local tag=$1 metric=$2 r=$3; shift 3
  local so=$OUT/$tag.stdout se=$OUT/$tag.stderr t0 t1 rc why="" am dm sites
  printf '%s\n' "$*" >"$OUT/$tag.cmd"
  t0=$(date +%s%N)
  timeout -k 10 300 "$@" >"$so" 2>"$se"; rc=$?
  t1=$(date +%s%N)
  sites=$(sed -n 's/^gotrace: \([0-9]*\) site(s).*/\1/p' "$se")
  am=$(sed -n 's/^gotrace: attached .* in \([0-9.]*\) ms$/\1/p' "$se")
  dm=$(sed -n 's/^gotrace: detached .* in \([0-9.]*\) ms$/\1/p' "$se")
  if [ $rc != 0 ]; then why="exit status $rc: $(first_err "$se")"
  elif ! grep -q '^ready$' "$so"; then why="no 'ready' line from BEGIN"
  elif [ -z "$am" ] || [ -z "$dm" ]; then why="no attach/detach times in -v's output"
  fi
  if [ -n "$why" ]; then
    record "$metric" gotrace "$r" FAILED "" "" "$why"; printf '# %-28s FAILED: %s\n' "$tag" "$why"; return
  fi
  local ms; ms=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e6 }')
  record "$metric" gotrace "$r" ok "$ms" "sites=$sites" ""
  record "${metric}_attach" gotrace "$r" ok "$am" "" ""
  record "${metric}_detach" gotrace "$r" ok "$dm" "" ""
  printf '# %-28s sites=%s wall_ms=%s attach_ms=%s detach_ms=%s\n' "$tag" "$sites" "$ms" "$am" "$dm"
}
if [ "$CADDY" = 1 ]; then
  cdir=$HOME/.cache/gotrace-bench/caddy-$CADDY_VERSION
  mkdir -p "$cdir"
  if [ ! -x "$cdir/caddy" ]; then
    echo "# building Caddy $CADDY_VERSION into $cdir (once)"
    (cd "$cdir" && GOTOOLCHAIN=local GOFLAGS=-mod=mod GOPATH="$cdir/gopath" GOBIN="$cdir" \
       "$GO" install "github.com/caddyserver/caddy/v2/cmd/caddy@$CADDY_VERSION") \
      >>"$OUT/build.log" 2>&1 || echo "# Caddy could not be built: $(tail -n 1 "$OUT/build.log")"
  fi
fi
if [ "$CADDY" = 1 ] && [ -x "$cdir/caddy" ]; then
  CADDY_BIN=$cdir/caddy
  echo "# Caddy $CADDY_VERSION: go:*:entry and --funcgraph reverseproxy.* (--dry-run), -p on a running server"
  PROG_GT_CADDY='go:*:entry { @[probe] = count(); }'
  FG_CADDY='github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy.*'
  "$GOTRACE_BIN" --dry-run -b "$CADDY_BIN" -e "$PROG_GT_CADDY" >/dev/null 2>&1  # primes the cache
  "$GOTRACE_BIN" --dry-run -b "$CADDY_BIN" --funcgraph "$FG_CADDY" >/dev/null 2>&1
  for ((r = 1; r <= RUNS; r++)); do
    big_run "caddy.gotrace.r$r" caddy_dryrun "$r" 150000 \
      "$GOTRACE_BIN" -v --dry-run -b "$CADDY_BIN" -e "$PROG_GT_CADDY"
    big_run "caddy-cold.gotrace.r$r" caddy_dryrun_cold "$r" 150000 \
      "$GOTRACE_BIN" -v --no-cache --dry-run -b "$CADDY_BIN" -e "$PROG_GT_CADDY"
    big_run "caddy-fg.gotrace.r$r" caddy_fg "$r" 500 \
      "$GOTRACE_BIN" -v --dry-run --funcgraph "$FG_CADDY" "$CADDY_BIN"
    big_run "caddy-fg-cold.gotrace.r$r" caddy_fg_cold "$r" 500 \
      "$GOTRACE_BIN" -v --no-cache --dry-run --funcgraph "$FG_CADDY" "$CADDY_BIN"
  done
  mkdir -p "$OUT/www" && echo hello >"$OUT/www/index.html"
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$CADDY_BIN" file-server --listen "127.0.0.1:$port" --root "$OUT/www" >"$OUT/caddy.log" 2>&1 &
  cpid=$!
  for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/" >/dev/null 2>&1 && break; sleep 0.2; done
  PROG_GT_CADDY_P='go:"github.com/caddyserver/caddy/v2/*":entry { @[probe] = count(); } BEGIN { printf("ready\n"); exit(); }'
  "$GOTRACE_BIN" -q -p "$cpid" -e "$PROG_GT_CADDY_P" >/dev/null 2>&1  # primes the cache
  for ((r = 1; r <= RUNS; r++)); do
    caddy_run "caddy-p.gotrace.r$r" caddy_p "$r" "$GOTRACE_BIN" -v -p "$cpid" -e "$PROG_GT_CADDY_P"
    caddy_run "caddy-p-all.gotrace.r$r" caddy_p_all "$r" "$GOTRACE_BIN" -v -p "$cpid" \
      -e 'go:*:entry { @[probe] = count(); } BEGIN { printf("ready\n"); exit(); }'
  done
  curl -sf "http://127.0.0.1:$port/" | grep -q hello || echo "# Caddy did not answer after the runs"
  kill "$cpid"; wait "$cpid" 2>/dev/null
fi

# ---------------------------------------------------------------- 6
# following (issue 25): gotrace -c 'go run .' finds the program the go command builds
# and runs, holds it stopped at its exec while the script is compiled against it and
# attached, then lets it run. "exec to attached" is gotrace -v's "held N ms" (cache hit,
# and --no-cache); the whole `go run .` is timed untraced and traced (build cache warm).
# bpftrace 0.17 cannot follow an exec into another program: no column.
FOLLOW=${FOLLOW:-1}
if [ "$FOLLOW" = 1 ]; then
  echo "# following: gotrace -c 'go run .' (tests/go/calcmod)"
  rm -rf "$OUT/calcmod" && cp -r "$REPO/tests/go/calcmod" "$OUT/calcmod"
  GOTRACE_FOLLOW_GO=$("$REPO/scripts/find-go.sh")
  PROG_FOLLOW='go:example.com/calcmod/calc.Add:entry { printf("A %d %d\n", args.a, args.b); }'
  (cd "$OUT/calcmod" && GOTOOLCHAIN=local GOFLAGS="-ldflags=-w=false -gcflags=-dwarf=true" "$GOTRACE_FOLLOW_GO" run . >/dev/null 2>&1)
  follow_run() {  # follow_run TAG METRIC_HELD ROUND GOTRACE_ARGS...
    local tag=$1 metric=$2 r=$3; shift 3
    local so=$OUT/$tag.stdout se=$OUT/$tag.stderr t0 t1 held why=""
    t0=$(date +%s%N)
    (cd "$OUT/calcmod" && GOTOOLCHAIN=local "$GOTRACE_BIN" -v "$@" -c "$GOTRACE_FOLLOW_GO run ." \
       -e "$PROG_FOLLOW" >"$so" 2>"$se")
    local st=$?
    t1=$(date +%s%N)
    held=$(sed -n 's/^gotrace: -c: pid [0-9]* held \([0-9.]*\) ms.*/\1/p' "$se")
    if [ $st != 0 ]; then why="exit status $st: $(first_err "$se")"
    elif [ "$(grep -c '^A ' "$so")" != 3 ]; then why="$(grep -c '^A ' "$so") calls traced, expected 3"
    elif [ -z "$held" ]; then why="no 'held' line"
    fi
    if [ -n "$why" ]; then
      record "$metric" gotrace "$r" FAILED "" "" "$why"; printf '# %-28s FAILED: %s\n' "$tag" "$why"; return
    fi
    record "$metric" gotrace "$r" ok "$held" "" ""
    record "${metric}_wall" gotrace "$r" ok "$(( (t1 - t0) / 1000000 ))" "" ""
    printf '# %-28s held_ms=%s wall_ms=%s\n' "$tag" "$held" "$(( (t1 - t0) / 1000000 ))"
  }
  for r in $(seq 1 "$RUNS"); do
    t0=$(date +%s%N)
    (cd "$OUT/calcmod" && GOTOOLCHAIN=local GOFLAGS="-ldflags=-w=false -gcflags=-dwarf=true" "$GOTRACE_FOLLOW_GO" run . >/dev/null 2>&1)
    record follow_base gotrace "$r" ok "$(( ($(date +%s%N) - t0) / 1000000 ))" "" ""
    follow_run "follow.gotrace.r$r" follow_held "$r"
    follow_run "follow-cold.gotrace.r$r" follow_held_cold "$r" --no-cache
  done
fi

# ---------------------------------------------------------------- table
python3 - "$RUNS_TSV" "$N" "$RUNS" "$MIN_HIT_NS" "$OUT/env.txt" "${TOOLS[@]}" <<'PY' | tee "$OUT/summary.txt"
import os, sys, statistics
tsv, N, RUNS, MIN_HIT, envf, tools = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5], sys.argv[6:]
rows = [(l.rstrip("\n").split("\t") + [""] * 7)[:7] for l in open(tsv) if l.strip()]
def info(r):
    return dict(w.split("=", 1) for w in r[5].split() if "=" in w)
def get(metric, tool):
    return [r for r in rows if r[0] == metric and r[1] == tool]
notes = []
def fmt(v):
    return "%.0f" % v if abs(v) >= 100 else "%.1f" % v
def stat(metric, tool):
    """median of ok runs, or None + note when a run failed / nothing ran"""
    rs = get(metric, tool)
    if not rs: return None, None
    bad = [r for r in rs if r[3] != "ok"]
    if bad:
        notes.append("%s/%s: %d of %d runs FAILED: %s" % (tool, metric, len(bad), len(rs), bad[0][6]))
        return "FAILED", None
    vals = [float(r[4]) for r in rs]
    return statistics.median(vals), vals
base, bvals = stat("base", "base")
def cost(metric, tool):
    m, vals = stat(metric, tool)
    if m is None: return "-"
    if m == "FAILED" or base in (None, "FAILED"): return "FAILED"
    c = m - base
    if c < MIN_HIT:
        notes.append("%s/%s: adds only %.1f ns/call (< MIN_HIT_NS=%g): probe did not fire?" % (tool, metric, c, MIN_HIT))
        return "FAILED"
    return "%s [%s..%s]" % (fmt(c), fmt(min(vals) - base), fmt(max(vals) - base))
sbase, _ = stat("base_str", "base")
def cost_str(metric, tool):
    """added ns/call of the -str loop, against its own untraced runs"""
    m, vals = stat(metric, tool)
    if m is None: return "-"
    if m == "FAILED" or sbase in (None, "FAILED"): return "FAILED"
    return "%s [%s..%s]" % (fmt(m - sbase), fmt(min(vals) - sbase), fmt(max(vals) - sbase))
ybase, _ = stat("base_yield", "base")
def cost_yield(metric, tool):
    """added ns/call of the -yield loop (a goroutine switch per call), against its own
    untraced runs"""
    m, vals = stat(metric, tool)
    if m is None: return "-"
    if m == "FAILED" or ybase in (None, "FAILED"): return "FAILED"
    return "%s [%s..%s]" % (fmt(m - ybase), fmt(min(vals) - ybase), fmt(max(vals) - ybase))
def count_cell(tool):
    if tool == "floor": return cost("floor", "floor")
    if get("count_unsupported", tool): return "n/a (no maps)"
    return cost("count", tool)
def plain(metric, tool):
    m, vals = stat(metric, tool)
    if m is None: return "-"
    if m == "FAILED": return "FAILED"
    return "%s [%s..%s]" % (fmt(m), fmt(min(vals)), fmt(max(vals))) if len(vals) > 1 else fmt(m)
def pair(m1, m2, tool):
    """medians of two metrics, "A / B" (ranges would not fit the column)"""
    def med(metric):
        m, _ = stat(metric, tool)
        return "-" if m is None else m if m == "FAILED" else fmt(m)
    a, b = med(m1), med(m2)
    return "-" if a == "-" and b == "-" else "%s / %s" % (a, b)
pbase, _ = stat("prof_base", "base")
def slowdown(metric, tool):
    """the loop's ns_per_call profiled against alone (-dur runs), in %"""
    m, vals = stat(metric, tool)
    if m is None: return "-"
    if m == "FAILED" or pbase in (None, "FAILED"): return "FAILED"
    pct = lambda v: "%+.1f" % ((v - pbase) / pbase * 100)
    return "%s%% [%s..%s]" % (pct(m), pct(min(vals)), pct(max(vals)))
def events(tool):
    rs = get("printf_file", tool)
    if not rs: return "-"
    ev = [info(r).get("events", "?") for r in rs]
    return "%s/%d" % (",".join(sorted(set(ev))), N)
def lost(tool):
    if tool == "floor": return "-"
    rs = sum((get(m, tool) for m in ("printf_file", "printf_null", "empty", "count", "hist", "retdur", "retcpu", "ydur", "ycpu", "ustack")), [])
    if not rs: return "-"
    tot = sum(int(info(r).get("lost", 0)) for r in rs)
    return "none" if tot == 0 else "yes (%d)" % tot
cols = tools + (["floor(uprobe_multi)"] if any(r[1] == "floor" for r in rows) else [])
key = {t: t for t in tools}; key["floor(uprobe_multi)"] = "floor"
table = [
    ("printf entry probe, ns/call (/dev/null)", lambda t: cost("printf_null", t)),
    ("printf entry probe, ns/call (file)",      lambda t: cost("printf_file", t)),
    ("  events received (file) / N",            events),
    ("  'Lost N events' printed",               lost),
    ("empty entry probe, ns/call",              lambda t: cost("floor" if t == "floor" else "empty", t)),
    ("count() entry probe, ns/call",            lambda t: count_cell(t)),
    ("hist() entry probe, ns/call",             lambda t: "-" if t == "floor" else cost("hist", t)),
    (":entry + :return, duration, ns/call",     lambda t: cost("retdur", t) if t == "gotrace"
                                                else "n/a (uretprobe crashes Go)" if t == "bpftrace" else "-"),
    ("  the same with oncpu, ns/call",          lambda t: cost("retcpu", t) if t == "gotrace" else "-"),
    ("  duration, a goroutine switch a call",   lambda t: cost_yield("ydur", t) if t == "gotrace" else "-"),
    ("  oncpu, a goroutine switch a call",      lambda t: cost_yield("ycpu", t) if t == "gotrace" else "-"),
    ("@[ustack] = count() entry probe, ns/call", lambda t: "-" if t == "floor" else cost("ustack", t)),
    ("profile:hz:99, loop slowdown",            lambda t: "-" if t == "floor" else slowdown("prof99", t)),
    ("profile:hz:999, loop slowdown",           lambda t: "-" if t == "floor" else slowdown("prof999", t)),
    ("2 Go strings by name, args.a, ns/call",   lambda t: cost_str("argstr", t) if t == "gotrace" else "-"),
    ("  same by hand, str(arg0, arg1), ns/call", lambda t: "-" if t == "floor" else cost_str("rulestr", t)),
    ("start-up: launch -> first event, ms",     lambda t: plain("startup_first_event", t)),
    ("start-up: one-liner -c 'loop 1', ms",     lambda t: plain("startup_total", t)),
    ("  gotrace --no-cache (cold), ms",         lambda t: plain("startup_total_cold", t)),
    ("  peak RSS, MB (gotrace: cache hit)",     lambda t: plain("startup_rss", t)),
    ("  gotrace --no-cache peak RSS, MB",       lambda t: plain("startup_rss_cold", t)),
    ("start-up: same, hyperfine median, ms",    lambda t: plain("startup_hyperfine", t)),
    ("compile only: --dry-run, ms (*)",         lambda t: plain("dryrun", t)),
    ("floor: uprobe_multi attach, ms",          lambda t: plain("attach_ms", t)),
    ("2,000 sites: attach+run+detach, s (**)",   lambda t: plain("many", t)),
    ("  gotrace: attach / detach, ms",          lambda t: pair("many_attach", "many_detach", t)),
    ("  GT_NO_UPROBE_MULTI=1 (tracefs), s",    lambda t: plain("many_tracefs", t)),
    ("  same: attach / detach, ms",             lambda t: pair("many_tracefs_attach", "many_tracefs_detach", t)),
    ("  perf-event uprobe a site, s (once)",    lambda t: plain("many_perf", t)),
    ("  same: attach / detach, ms",             lambda t: pair("many_perf_attach", "many_perf_detach", t)),
    ("70,000 sites --dry-run, ms (***)",        lambda t: plain("big_dryrun", t)),
    ("  --no-cache, ms",                        lambda t: plain("big_dryrun_cold", t)),
    ("  peak RSS, MB / --no-cache",             lambda t: pair("big_dryrun_rss", "big_dryrun_cold_rss", t)),
    ("docker cli/* 69,501 sites --dry-run, ms", lambda t: plain("docker_dryrun", t)),
    ("Caddy go:*:entry --dry-run, ms (****)",  lambda t: plain("caddy_dryrun", t)),
    ("  --no-cache, ms",                        lambda t: plain("caddy_dryrun_cold", t)),
    ("  peak RSS, MB / --no-cache",             lambda t: pair("caddy_dryrun_rss", "caddy_dryrun_cold_rss", t)),
    ("Caddy --funcgraph reverseproxy.*, ms",   lambda t: plain("caddy_fg", t)),
    ("  --no-cache, ms",                        lambda t: plain("caddy_fg_cold", t)),
    ("Caddy -p, caddy/v2/* entries: run, ms",  lambda t: plain("caddy_p", t)),
    ("  attach / detach, ms",                   lambda t: pair("caddy_p_attach", "caddy_p_detach", t)),
    ("Caddy -p, go:*:entry: run, ms",          lambda t: plain("caddy_p_all", t)),
    ("  attach / detach, ms",                   lambda t: pair("caddy_p_all_attach", "caddy_p_all_detach", t)),
    ("-c 'go run .': exec to attached, ms",    lambda t: plain("follow_held", t)),
    ("  --no-cache, ms",                        lambda t: plain("follow_held_cold", t)),
    ("  go run . wall, untraced / traced, ms",  lambda t: pair("follow_base", "follow_held_wall", t)),
    ("  --no-cache, ms",                        lambda t: plain("docker_dryrun_cold", t)),
    ("  peak RSS, MB / --no-cache",             lambda t: pair("docker_dryrun_rss", "docker_dryrun_cold_rss", t)),
]
w0, w = 42, 22
print()
for l in open(envf): print("# " + l.rstrip())
print("# untraced loop: %s ns/call [%s] (N=%d, %d runs)" % (
    fmt(base) if isinstance(base, float) else base, ", ".join(fmt(v) for v in bvals or []), N, 2 * RUNS))
if isinstance(pbase, float):
    print("# profiled loop (-dur): alone %s ns/call; slowdown = median(profiled) / median(alone) - 1 [min..max over %d runs]" % (fmt(pbase), RUNS))
print("# per-call figures: added ns per call = median(traced) - median(untraced) [min..max over %d runs]" % RUNS)
print("%-*s" % (w0, "metric") + "".join("%-*s" % (w, c) for c in cols))
for name, f in table:
    cells = [f(key[c]) for c in cols]
    if all(c == "-" for c in cells): continue
    print("%-*s" % (w0, name) + "".join("%-*s" % (w, c) for c in cells))
if any(r[0] == "dryrun" for r in rows):
    print("(*) gotrace --dry-run: compile + load through the verifier, nothing attached" +
          ("; bpftrace 0.17 has no such mode: --emit-elf (compile only, no verifier)" if "bpftrace" in tools else ""))
if any(r[0] == "many" for r in rows):
    print("(**) gotrace: one uprobe_multi link; GT_NO_UPROBE_MULTI=1: one tracefs uprobe event of"
          " 2,000 sites; GT_HIDE_FEATURES=tracefs too: one perf-event uprobe a site, as bpftrace"
          " (both run once: the kernel detaches them one at a time)")
if any(r[0] == "big_dryrun" for r in rows):
    print("(***) %s sites: :entry + :return on every generated function (bench/gen_many.py);"
          " bpftrace 0.17 makes one program per probe (BPFTRACE_MAX_PROBES)" %
          {info(r).get("sites") for r in rows if r[0] == "big_dryrun"}.pop())
if any(r[0] == "caddy_dryrun" for r in rows):
    print("(****) Caddy %s (%s sites for go:*:entry): --dry-run is parse, sema, codegen or the"
          " cache, and the verifier; -p runs are launch to exit with BEGIN's exit(), cache hit" %
          (os.environ.get("CADDY_VERSION", "v2.11.9"),
           {info(r).get("sites") for r in rows if r[0] == "caddy_dryrun"}.pop()))
if notes:
    print("\nFAILED details:")
    for n in dict.fromkeys(notes): print("  " + n)
PY
echo "# raw outputs: $OUT"

# ---------------------------------------------------------------- 7
if [ "${TRACERS:-1}" = 1 ]; then
  echo
  python3 "$HERE/tracers.py" --gotrace "$GOTRACE_BIN" --out "$OUT/tracers" --n "$N" \
    --runs "$RUNS" --sites "$MANY_SITES" --tools "${TRACER_TOOLS:-$HOME/.cache/gotrace-bench/tools}" ||
    echo "# section 7 (bench/tracers.py) failed"
fi

# ---------------------------------------------------------------- 8
if [ "${OTLP:-1}" = 1 ]; then
  echo
  python3 "$HERE/otlp.py" --gotrace "$GOTRACE_BIN" --out "$OUT/otlp" --n "$N" --runs "$RUNS" ||
    echo "# section 8 (bench/otlp.py) failed"
fi
