#!/bin/sh
# The whole suite: a -Werror build and ctest, then the same under ASan+UBSan while, beside
# it, the kernels stages (ctest label `kernels`: the runtime cases on Debian's 6.1 and
# 6.12 under qemu, tests/kernels/, then gotrace for arm64 on Debian's arm64 6.1 and 6.12,
# tests/arm64/) run one guest at a time, and then 60 s of fuzzing the
# front end and, at the same time, the binary readers (tests/fuzz, libFuzzer with
# ASan+UBSan).
# Runtime tests trace real Go programs with real BPF: run as root.
#
# Where a cold run's time goes (docs/reliability.md): the plain pass's tests wait on
# traced programs and leave CPU idle, so what later steps need is made beside it at nice
# 10: the kernels' downloads and vmlinux, the ASan build, and the Go builds of the
# suites that build most (GT_PREBUILD: toolchains, the release matrix, the type data's
# probes, the real programs, the big servers, the OTLP receivers), which ctest runs last
# and which wait for a build in progress rather than make it twice. The fuzzers' build waits for the ASan pass, which
# leaves more CPU idle than the plain pass.
set -eu
cd "$(dirname "$0")/.."
export GT_REQUIRE_BPF=${GT_REQUIRE_BPF:-1}
# one Go build cache for all the suite's builds, every release's: the toolchain cache's
# (tests/gotool.py), which CI keeps
gocache=${GT_GO_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/gotrace-tests/go}
export GOCACHE=${GOCACHE:-$gocache/gocache}
# the Go targets, built once for both passes and the kernels stages
export GT_TESTBIN="$PWD/build/testwork/bin"
# bpftrace's conformance outputs: the plain pass's, served again to the ASan pass (the
# oracle does not change with gotrace's build; 45 s of the ASan pass's conformance)
export GT_BPFTRACE_CACHE="$PWD/build/bpftrace-outputs"
rm -rf "$GT_BPFTRACE_CACHE"
t0=$(date +%s)
stamp() { echo "== $1: $(($(date +%s) - t0)) s"; }
# failed WHAT LOG RC: the failed checks of a ctest run, again at the very end of the output
# (a failing test's PASS lines before them push them out of sight of a log's head and
# tail), then exit RC
failed() {
    echo "== the failed checks of $1 ($2):"
    grep -h -A14 -E '^FAIL|^    Test #.*Failed|Exception|Traceback' "$2" | cut -c1-300 | head -n 300
    exit "$3"
}
mkdir -p build
# lift: this run's background work at nice 10 back to this shell's priority, once the
# run waits for it (beside other load at nice 0, nice 10 gets a twentieth of a CPU:
# cold16); tests/runtime/gtlib.py's lift() walks the process tree
lift() {
    python3 -c 'import sys; sys.path.insert(0, "tests/runtime"); import gtlib; gtlib.lift(int(sys.argv[1]))' $$
}
# the kernels' packages and vmlinux (network, then ~20 s of xz: vm.sh stops at the vmlinux)
(nice -n 10 sh tests/kernels/vm.sh --kernel 6.1 --dbg --fetch-only &&
 nice -n 10 sh tests/kernels/vm.sh --kernel 6.12 --fetch-only) >build/kfetch.log 2>&1 &
kfetch=$!
# the arm64 stages' making (tests/arm64/run.py --prepare): the arm64 root (debootstrap,
# then apt under qemu-user: network and one CPU, once per cache), gotrace cross-built
# against it, the Go targets and the release matrix built for arm64, the arm64 kernels
rm -f build/arm64-prep.rc
(set +e
 nice -n 10 python3 tests/arm64/run.py --prepare --kernel 6.1 &&
     nice -n 10 python3 tests/arm64/run.py --prepare --kernel 6.12
 echo $? >build/arm64-prep.rc) >build/arm64-prep.log 2>&1 &
# the toolchains and the real programs' modules, at nice 0 beside the plain build (they
# wait on the network; at nice 10 beside the plain pass the toolchains took 213 s, cold14)
rm -f build/gofetch.rc
(for t in test_gomatrix test_realprogs test_bigservers test_otlp; do
     GT_PREBUILD=fetch python3 tests/runtime/$t.py --gotrace build/gotrace \
         --work build/testwork >build/gofetch-$t.log 2>&1 &
 done
 wait
 echo "== fetched: $(($(date +%s) - t0)) s" >>build/gofetch-test_gomatrix.log
 echo 0 >build/gofetch.rc) &
BUILD_DIR=build BUILD_TYPE=RelWithDebInfo scripts/build.sh -DGT_WERROR=ON -DGT_SANITIZE=OFF
stamp "plain build"
# beside the plain pass: the ASan build, and the Go builds of the late suites (the
# fuzzers' build and seeds wait for the ASan pass, which leaves CPU idle: the plain
# pass's CPUs are full, and its late suites wait for their prebuilds)
(set +e
 BUILD_DIR=build-asan BUILD_TYPE=Debug nice -n 10 scripts/build.sh -DGT_WERROR=ON \
     -DGT_SANITIZE=ON >build/asan-build.log 2>&1
 echo $? >build/asan-build.rc) &
cbuild=$!
# one stream, in the order ctest runs them: with the real programs' beside the matrix's
# (cold4), the matrix's ended at 941 s and the plain pass at 1049 s instead of 944 s,
# its test_gomatrix waiting 175 s for it
(while [ ! -e build/gofetch.rc ]; do sleep 1; done
 cat build/gofetch-*.log
 for t in test_gomatrix test_gotypes test_realprogs test_bigservers test_otlp; do
     echo "== prebuild $t: $(($(date +%s) - t0)) s"
     GT_PREBUILD=1 nice -n 10 python3 tests/runtime/$t.py --gotrace build/gotrace \
         --work build/testwork
 done
 echo "== prebuilt: $(($(date +%s) - t0)) s") >build/prebuild.log 2>&1 &
gobuild=$!
# -j2: the tests that attach (RUN_SERIAL) run alone; the data files and unit tests in pairs
(cd build && ctest --output-on-failure -j2 -LE kernels) ||
    failed "the plain pass" build/Testing/Temporary/LastTest.log $?
stamp "plain pass"
lift
wait $cbuild $gobuild || true  # a prebuild that failed: its suite fails with the reason
# (a fetch that failed: vm.sh tries again, and says why)
wait $kfetch || tail -n 20 build/kfetch.log
if [ "$(cat build/asan-build.rc)" != 0 ]; then
    tail -n 80 build/asan-build.log
    echo "the ASan+UBSan build FAILED (build/asan-build.log)"
    exit 1
fi
# Beside the ASan pass, which runs its attaching tests one at a time and is slowed by
# ASan already (the plain pass's timing wants both cores): the kernels stages (6.1, then
# 6.12, one qemu thread each, TCG; they reuse the Go programs the plain pass built; at
# nice 10 beside the fuzzers' build they became the longer: cold7's 6.1 stage took 577 s
# and the run ended after the ASan pass), then the fuzzers' 60 s: a crash, leak or hang
# of a fuzzer fails; its input is kept in
# build-fuzz/fuzz/artifacts (the front end's) or build-fuzz/fuzz-binfo/artifacts (the
# binary readers', tests/fuzz/fuzz_binfo.c: the kept crash inputs of
# tests/fuzz/binfo-regress first, then mutated seed Go binaries). Both fuzzers run at
# once, at nice 10: under them at nice 0 the ASan pass took 1050 s instead of 966 s, and
# test_signals' early signals came before main.
# (A failure of the ASan pass stops the script; the job then ends at its own timeouts.)
(set +e
 (CC=clang-16 BUILD_DIR=build-fuzz BUILD_TYPE=RelWithDebInfo nice -n 10 scripts/build.sh \
      -DGT_WERROR=ON -DGT_FUZZ=ON >build/fuzz-build.log 2>&1
  echo $? >build/fuzz-build.rc
  mkdir -p build-fuzz/fuzz-binfo/seeds
  nice -n 10 python3 tests/fuzz/make_binfo_seeds.py build-fuzz/fuzz-binfo/seeds \
      >build/fuzz-seeds.log 2>&1) &
 fbuild=$!
 (cd build && ctest --output-on-failure -j1 -L kernels -E arm64 >kernels.log 2>&1
  rc=$?
  # then arm64's, once their making is done (it says why it failed, if it did)
  while [ ! -e arm64-prep.rc ]; do sleep 1; done
  echo "== arm64 stages prepared ($(cat arm64-prep.rc)):" >>kernels.log
  tail -n 30 arm64-prep.log >>kernels.log
  ctest --output-on-failure -j1 -L kernels -R arm64 >>kernels.log 2>&1 || rc=1
  echo $rc >kernels.rc)
 echo "== kernels stages: $(($(date +%s) - t0)) s" >>build/kernels.log
 wait $fbuild
 if [ "$(cat build/fuzz-build.rc)" = 0 ]; then
     nice -n 10 tests/fuzz/run.sh build-fuzz -max_total_time=60 >build/fuzz.log 2>&1 &
     front=$!
     nice -n 10 tests/fuzz/run.sh binfo build-fuzz -max_total_time=60 >build/fuzz-binfo.log 2>&1
     echo $? >build/fuzz-binfo.rc
     wait $front
     echo $? >build/fuzz.rc
 fi) &
beside=$!
# leak checks on; LLVM's static state is freed at exit, so no suppressions are needed
# the release matrix at its ends only (Debian's 1.19, the newest, the machine's): the
# plain pass above ran every release, and each costs ~35 s under ASan
(cd build-asan && GT_MATRIX_ENDS=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j2) ||
    failed "the ASan+UBSan pass" build-asan/Testing/Temporary/LastTest.log $?
stamp "ASan+UBSan pass"
lift
wait $beside
cat build/kernels.log
[ "$(cat build/kernels.rc)" = 0 ] || { echo "kernels stages: FAILED (build/kernels.log)"
                                        failed "the kernels stages" build/kernels.log 1; }
if [ "$(cat build/fuzz-build.rc)" != 0 ]; then
    tail -n 80 build/fuzz-build.log
    echo "fuzz: the build FAILED (build/fuzz-build.log)"
    exit 1
fi
if [ "$(cat build/fuzz.rc)" != 0 ]; then
    tail -n 80 build/fuzz.log
    echo "fuzz: FAILED; reproduce with build-fuzz/tests/fuzz/fuzz_frontend FILE" \
        "on the file under build-fuzz/fuzz/artifacts/"
    exit 1
fi
grep -E '^#[0-9]+[[:space:]]+DONE|^Done|^stat::' build/fuzz.log
if [ "$(cat build/fuzz-binfo.rc)" != 0 ]; then
    tail -n 80 build/fuzz-binfo.log
    echo "fuzz (binfo): FAILED; reproduce with GT_FUZZ_BINFO_SEEDS=build-fuzz/fuzz-binfo/seeds/seeds.txt" \
        "GT_FUZZ_BINFO_SHOW=1 build-fuzz/tests/fuzz/fuzz_binfo FILE on the file under" \
        "build-fuzz/fuzz-binfo/artifacts/"
    exit 1
fi
grep -E '^#[0-9]+[[:space:]]+DONE|^Done|^stat::' build/fuzz-binfo.log
stamp "all"
