#!/usr/bin/env bash
# run.sh MPIEXEC NP PRELOAD_LIB PROGRAM [EXPECT_REPORT [VAR=VALUE...]]
#
# Runs a Fortran collective test (colls_mpifh, colls_usempi, colls_f08:
# tests/fortran/) at NP processes under
#   env LD_PRELOAD=PRELOAD_LIB TOPOCOLL_REPORT=1 TOPOCOLL_REPORT_FILE=<tmp> VAR=VALUE...
# and passes if:
#  - the program exits 0 and prints "PASS <its name>" (rank 0; every
#    result is checked in the program itself, a mismatch aborts with 1);
#  - with EXPECT_REPORT=1 only: topocoll wrote its report at MPI_Finalize
#    to <tmp> (or to files named <tmp>.*, e.g. one per process), every
#    report line there has the form
#      topocoll: report MPI_<Name> calls=N accelerated=N bytes=N time_s=S native=N (...)
#    and MPI_Bcast, MPI_Allreduce, MPI_Reduce, MPI_Allgatherv, MPI_Alltoallv, MPI_Alltoallw,
#    MPI_Reduce_scatter and MPI_Reduce_scatter_block each have accelerated > 0
#    (summed over the lines).  With EXPECT_REPORT absent or 0 the report is
#    not checked ("report check skipped").
# PRELOAD_LIB may be a ':'-separated list (the ASan runtime first).  With
# an MPIEXEC whose name contains "openmpi", --allow-run-as-root
# --oversubscribe are added.  Exit 77 (ctest's SKIP_RETURN_CODE) when
# PROGRAM does not exist.
#   e.g. tests/fortran/run.sh mpiexec.mpich 3 build/libtopocoll_pmpi.so build/tests/colls_usempi 1
set -uo pipefail
(($# >= 4)) || {
  echo "usage: $0 MPIEXEC NP PRELOAD_LIB PROGRAM [EXPECT_REPORT [VAR=VALUE...]]" >&2
  exit 2
}
mpiexec=$1 np=$2 lib=$3 prog=$4
expect=${5:-0}
shift $(($# >= 5 ? 5 : 4))
me="fortran/run.sh"
name=$(basename "$prog")
[ -x "$prog" ] || { echo "$me: SKIP: $prog: no such program (no Fortran compiler?)"; exit 77; }
IFS=: read -r -a libs <<<"$lib"
for i in "${!libs[@]}"; do   # (absolute: LD_PRELOAD searches the library path for a bare name)
  [ -r "${libs[i]}" ] || { echo "$me: FAIL: preload library ${libs[i]}: not found"; exit 1; }
  libs[i]=$(realpath "${libs[i]}")
done
lib=$(IFS=:; echo "${libs[*]}")
case $expect in 0 | 1) ;; *) echo "$me: EXPECT_REPORT must be 0 or 1, not '$expect'" >&2; exit 2 ;; esac
flags=()
[[ $mpiexec == *openmpi* ]] && flags=(--allow-run-as-root --oversubscribe)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
report=$tmp/report
start=$EPOCHREALTIME
# (the reduce-scatters' small blocks run in topocoll when asked:
# TOPOCOLL_<COLL>_ALG=node)
"$mpiexec" "${flags[@]}" -n "$np" env LD_PRELOAD="$lib" TOPOCOLL_REPORT=1 TOPOCOLL_REPORT_FILE="$report" \
  TOPOCOLL_REDUCE_SCATTER_ALG=node TOPOCOLL_REDUCE_SCATTER_BLOCK_ALG=node \
  "$@" "$prog" >"$tmp/log" 2>&1
rc=$?
secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
cat "$tmp/log"
fail=0
((rc == 0)) || { echo "$me: FAIL: $name at np=$np: exit status $rc"; fail=1; }
grep -q "^PASS $name\$" "$tmp/log" || { echo "$me: FAIL: $name at np=$np: no 'PASS $name' line"; fail=1; }

# ---- topocoll's report (TOPOCOLL_REPORT_FILE) ----
shopt -s nullglob
files=("$report" "$report".*)
existing=()
for f in "${files[@]}"; do [ -f "$f" ] && existing+=("$f"); done
if ((expect == 0)); then
  echo "$me: report check skipped (EXPECT_REPORT=0; report files: ${#existing[@]})"
elif ((${#existing[@]} == 0)); then
  echo "$me: FAIL: no report file $report (TOPOCOLL_REPORT=1, TOPOCOLL_REPORT_FILE)"
  fail=1
else
  form='^topocoll: report MPI_[A-Za-z_]+ calls=[0-9]+ accelerated=[0-9]+ bytes=[0-9]+ time_s=[0-9.eE+-]+ native=[0-9]+( \(.*\))?$'
  cat "${existing[@]}" >"$tmp/report.all"
  bad=$(grep '^topocoll: report MPI_' "$tmp/report.all" | grep -Ev "$form")
  [ -z "$bad" ] || { echo "$me: FAIL: malformed report lines:"; echo "$bad"; fail=1; }
  for coll in MPI_Bcast MPI_Allreduce MPI_Reduce MPI_Allgatherv MPI_Alltoallv MPI_Alltoallw MPI_Reduce_scatter \
    MPI_Reduce_scatter_block; do
    acc=$(grep -E "$form" "$tmp/report.all" | awk -v c="$coll" '
      $3 == c { for (i = 4; i <= NF; i++) if ($i ~ /^accelerated=/) { n++; s += substr($i, 13) } }
      END { print n ? s : "none" }')
    if [ "$acc" = none ]; then
      echo "$me: FAIL: no report line for $coll"
      fail=1
    elif ((acc == 0)); then
      echo "$me: FAIL: $coll accelerated=0: topocoll ran none of $name's calls"
      fail=1
    else
      echo "$me: report: $coll accelerated=$acc"
    fi
  done
fi
((fail)) && exit 1
echo "$me: $name passed (np=$np, $secs s)"
