#!/usr/bin/env bash
# The whole test suite: build and run ctest under Open MPI, under MPICH,
# under Open MPI with AddressSanitizer + UBSan, and the progress-thread
# tests under ThreadSanitizer; under each MPI also the test programs across
# emulated hosts (tests/cross_host.sh) and the cluster tier (4 hosts x 2
# ranks).  Prints one summary line per configuration and a final
# "N passed, N failed" line.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/deps.sh" || exit 1
export OMPI_MCA_rmaps_base_oversubscribe=1
total_pass=0 total_fail=0 status=0
suite() {   # suite NAME MPI [cmake args]
  local name=$1 mpi=$2; shift 2
  local dir="$root/build-$name"
  echo "== $name: build"
  if ! "$root/scripts/build.sh" "$dir" "$mpi" "$@"; then
    echo "== $name: BUILD FAILED"; status=1; total_fail=$((total_fail + 1)); return
  fi
  echo "== $name: ctest ${CTEST_FILTER:+(-R $CTEST_FILTER)}${CTEST_EXCLUDE:+(-E $CTEST_EXCLUDE)}${CTEST_LABEL_EXCLUDE:+(-LE $CTEST_LABEL_EXCLUDE)}"
  (cd "$dir" && ctest --output-on-failure --timeout 600 ${CTEST_FILTER:+-R "$CTEST_FILTER"} \
     ${CTEST_EXCLUDE:+-E "$CTEST_EXCLUDE"} ${CTEST_LABEL_EXCLUDE:+-LE "$CTEST_LABEL_EXCLUDE"}) \
     >"$dir/ctest.log" 2>&1
  local rc=$?
  grep -E "Test +#|tests passed|Total Test" "$dir/ctest.log"
  grep -E "^(unit|quick|full|fuzz|source|slow|long) +=" "$dir/ctest.log" | sed 's/^/   tier /'   # ctest's label summary
  ((rc)) && { status=1; sed -n '/Output from these tests/,$p;/\*\*\*Failed/,+40p' "$dir/ctest.log" | head -80; }
  local line p f
  line=$(grep -E "tests passed, [0-9]+ tests failed out of [0-9]+" "$dir/ctest.log" | tail -1)
  f=$(sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\1/' <<<"$line")
  p=$(( $(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$line") - f ))
  [[ -n "$line" ]] || { p=0; f=1; status=1; }
  total_pass=$((total_pass + p)) total_fail=$((total_fail + f))
  echo "== $name: $p passed, $f failed"
}
# cross_host NAME MPI [KxP]: tests/cross_host.sh on build-NAME (the test
# programs across hosts emulated with network namespaces); with KxP, its
# scale tier instead (each collective test program once on K hosts of P
# ranks: the cluster tier); its "cross-host: N passed, M failed" line is
# added to the totals, exit 77 (no namespaces here) skips.
cross_host() {
  local name=$1 mpi=$2 scale=${3:-} dir="$root/build-$1" rc line p f log what=cross-host
  [[ -n $scale ]] && what="cluster tier ($scale hosts x ranks)"
  log=$dir/cross_host${scale:+_$scale}.log
  echo "== $name: $what"
  mkdir -p "$dir"
  CROSS_HOST_SCALE=$scale "$root/tests/cross_host.sh" "$dir" "$mpi" >"$log" 2>&1
  rc=$?
  if ((rc == 77)); then
    echo "== $name: $what skipped: $(grep -m1 SKIPPED "$log")"
    return
  fi
  grep -Ev '^cross-host: [0-9]+ passed' "$log"
  line=$(grep -E '^cross-host: [0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
  p=$(sed -E 's/^cross-host: ([0-9]+) passed.*/\1/' <<<"$line")
  f=$(sed -E 's/.* ([0-9]+) failed$/\1/' <<<"$line")
  [[ -n $line ]] || { p=0; f=1; }
  ((rc == 0 || f > 0)) || f=1
  ((f == 0)) || status=1
  total_pass=$((total_pass + p)) total_fail=$((total_fail + f))
  echo "== $name: $what $p passed, $f failed"
}
# The cluster tier (4 emulated hosts x 2 ranks, each MPI; 0.5 min under
# Open MPI, 5.5 under MPICH, whose 8 ranks busy-poll 2 cores):
# TOPOCOLL_CLUSTER_TIER=0 leaves it out.
cluster_tier() {
  [[ ${TOPOCOLL_CLUSTER_TIER:-1} == 0 ]] && { echo "== $1: cluster tier left out (TOPOCOLL_CLUSTER_TIER=0)"; return; }
  cross_host "$1" "$2" 4x2
}
CTEST_LABEL_EXCLUDE=long suite openmpi openmpi
cross_host openmpi openmpi
cluster_tier openmpi openmpi
# MPICH (ch4:ucx) busy-polls: oversubscribed runs cost 10-40 s each here, so
# its 6- to 8-rank Bcast, Barrier and Allgather runs are left to Open MPI
# (MPICH keeps every path at up to 5 ranks, and the cheap 6-8-rank tests);
# the suite stays near 10 minutes.  The fuzz targets (no MPI), the source checks
# (label source) and the 2 GiB collectives (label slow) run once, in the
# Open MPI build.  Two more run under Open MPI only: the tuner's measurement
# on 4 virtual nodes (76 s under MPICH, 1 s under Open MPI: its native
# calls timed by the dozen, each a turn of 4 busy-polling ranks) and the
# linear v-exchange at 5 ranks (38 s; the 6-rank one takes the same path).
CTEST_EXCLUDE='^(bcast|barrier|allgather)_np[678]|^fuzz_|^xtune_np4_vnodes4_reduce_alt$|^vexchange_np5_vnodes2_linear$' CTEST_LABEL_EXCLUDE='source|slow|long' \
  suite mpich mpich
cross_host mpich mpich
cluster_tier mpich mpich
# Open MPI is not LeakSanitizer-clean and unloads its components before the
# leak check (their frames cannot be suppressed by name), so leak detection
# is off for MPI programs; the topology test (no MPI) runs with it on, and
# test_preload checks our shared segments and mappings are released.
# The sanitizers run the configurations of up to 4 ranks (every code path,
# 1 to 3 virtual nodes): the 5- to 8-rank ones and the split matrix took 8
# of the 11 minutes under ASan and add no path; nor do the tests labelled
# slow (the 2 GiB collectives, other layouts of paths tested here), nor the
# one-node v-exchange at 4 ranks (vexchange_np3 takes its paths), the
# cyclic v-exchange and the one-node local-error test at 4 ranks (their
# 2-virtual-node and 3-rank runs take the same paths).
ASAN_OPTIONS=detect_leaks=0 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
CTEST_EXCLUDE='np[5-9]|hsplit_matrix|bench_smoke|small_slots_segments|^fuzz_|^vexchange_np4$|^vexchange_np4_vnodes2_cyclic$|^robust_nbc_local_np4$' CTEST_LABEL_EXCLUDE='source|slow|long' \
  suite asan-openmpi openmpi -DTOPOCOLL_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
# ThreadSanitizer on the tests that run progress threads.  Open MPI is not
# built with TSan: its progress engine writes receive buffers and
# publishes completion in code TSan cannot see, so races are reported only
# for accesses from instrumented code (ours), and its own lock order is
# not checked.
TSAN_OPTIONS=halt_on_error=1:ignore_noninstrumented_modules=1:detect_deadlocks=0:report_signal_unsafe=0 \
CTEST_FILTER='comm_cores|split_tree|robust_threads' \
  suite tsan-openmpi openmpi -DTOPOCOLL_TSAN=ON -DCMAKE_BUILD_TYPE=Debug
echo "topocoll tests: $total_pass passed, $total_fail failed"
exit $status
