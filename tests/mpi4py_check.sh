#!/usr/bin/env bash
# mpi4py_check.sh MPIEXEC "FLAGS" NPFLAG NP PRELOAD_LIB TEST_PY [VAR=VALUE...]
#
# Runs TEST_PY (tests/test_mpi4py.py) with Debian's /usr/bin/python3 at NP
# processes under LD_PRELOAD=PRELOAD_LIB (libtopocoll_pmpi.so), with
# TOPOCOLL_VERBOSE=1 and the VAR=VALUE settings, and passes if:
#  - the program exits 0: every result matched its numpy reference and
#    topocoll's counters (--expect-topocoll) show the calls went through it;
#  - topocoll printed its set-up line for a communicator of NP processes;
#  - the summary line says 0 failed.
# Exit 77 (ctest's SKIP_RETURN_CODE) when that python cannot import mpi4py
# and numpy (apt-get install python3-mpi4py python3-numpy; Debian's mpi4py
# is built against Open MPI).  $TOPOCOLL_PYTHON overrides the interpreter.
#   e.g. tests/mpi4py_check.sh mpiexec.openmpi "--allow-run-as-root --oversubscribe" -n 3 \
#            build/libtopocoll_pmpi.so tests/test_mpi4py.py
set -uo pipefail
(($# >= 6)) || { echo "usage: $0 MPIEXEC \"FLAGS\" NPFLAG NP PRELOAD_LIB TEST_PY [VAR=VALUE...]" >&2; exit 2; }
mpiexec=$1 flags=$2 npflag=$3 np=$4 lib=$5 test=$6
shift 6
py=${TOPOCOLL_PYTHON:-/usr/bin/python3}
if ! [ -x "$py" ] || ! "$py" -c 'import numpy, mpi4py' 2>/dev/null; then
  echo "mpi4py_check: SKIP: $py cannot import mpi4py and numpy (apt-get install python3-mpi4py python3-numpy)"
  exit 77
fi
[ -r "$lib" ] || { echo "mpi4py_check: $lib: not found" >&2; exit 1; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# TOPOCOLL_COMM_LAZY_MIN: the program's calls of 1 MiB build each
# communicator's context at once (off by default), so that --expect-topocoll
# can ask them all to have gone through topocoll
# shellcheck disable=SC2086  # FLAGS: several words
"$mpiexec" $flags "$npflag" "$np" env LD_PRELOAD="$lib" TOPOCOLL_VERBOSE=1 \
  TOPOCOLL_COMM_LAZY_MIN=256K "$@" \
  "$py" "$test" --expect-topocoll >"$log" 2>&1
rc=$?
grep -v '^topocoll: tune:' "$log"   # (the tuner's per-size lines: long, not checked)
fail=0
((rc == 0)) || { echo "mpi4py_check: FAIL: exit status $rc"; fail=1; }
grep -q "^topocoll: communicator of $np processes: " "$log" ||
  { echo "mpi4py_check: FAIL: no 'topocoll: communicator of $np processes' line: topocoll did not set up"; fail=1; }
grep -Eq "^test_mpi4py np=$np: [0-9]+ checks, 0 failed" "$log" ||
  { echo "mpi4py_check: FAIL: no passing summary line"; fail=1; }
((fail)) && exit 1
echo "mpi4py_check: passed (np=$np${*:+, $*})"
