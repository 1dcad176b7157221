#!/usr/bin/env bash
# check_config_warns.sh TOPOCOLL_INFO MPIEXEC [MPIEXEC_FLAGS...]: garbage in
# the environment warns and is not fatal.  With TOPOCOLL_VIRTUAL_NODES=abc
# (a value the table rejects) and TOPOCOLL_VIRTUAL_NODE=2 (a typo: no such
# parameter), a 1-rank run of topocoll_info succeeds, stderr holds exactly
# one warning line naming each, and no other warning; --config (no mpiexec)
# reports the first as rejected and its default as the value.  Sizes below
# their floor (TOPOCOLL_REDUCE_SEGSIZE=3, TOPOCOLL_BCAST_SEGSIZE=1,
# TOPOCOLL_CICO_SLOT=5): one warning line each, naming the value given and
# the value used (4K), which --config reports as the current value; 0 (the
# segments' "automatic") and 4K itself are taken as they are.
# Prints "check_config_warns: all passed" and exits 0 only if every check passed.
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: check_config_warns.sh TOPOCOLL_INFO MPIEXEC [FLAGS...]" >&2; exit 2; }
info=$1; shift
tmp=$(mktemp -d "${TMPDIR:-/tmp}/check_config_warns.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
unset $(env | sed -n 's/^\(TOPOCOLL_[A-Za-z0-9_]*\)=.*/\1/p')
fail=0
bad() { echo "check_config_warns: FAILED: $*"; sed 's/^/  stderr: /' "$tmp/err"; fail=1; }

"$@" -np 1 env TOPOCOLL_VIRTUAL_NODES=abc TOPOCOLL_VIRTUAL_NODE=2 "$info" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || bad "the run failed (rc $rc)"
grep -q '^nodes: 1, processes: 1' "$tmp/out" || bad "no 'nodes: 1, processes: 1' in the output"
n=$(grep -c 'TOPOCOLL_VIRTUAL_NODES=abc' "$tmp/err")
[ "$n" = 1 ] || bad "$n warning lines name TOPOCOLL_VIRTUAL_NODES=abc, want 1"
n=$(grep -c 'TOPOCOLL_VIRTUAL_NODE[^S]' "$tmp/err")
[ "$n" = 1 ] || bad "$n warning lines name TOPOCOLL_VIRTUAL_NODE, want 1"
n=$(grep -c 'warning' "$tmp/err")
[ "$n" = 2 ] || bad "$n warning lines, want 2"

env TOPOCOLL_VIRTUAL_NODES=abc "$info" --config >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || bad "--config failed (rc $rc)"
grep -q '^TOPOCOLL_VIRTUAL_NODES (current value: "1", data source: environment (rejected: abc), default: "1"' \
  "$tmp/out" || bad "--config does not report TOPOCOLL_VIRTUAL_NODES=abc as rejected"
n=$(grep -c 'TOPOCOLL_VIRTUAL_NODES=abc' "$tmp/err")
[ "$n" = 1 ] || bad "--config: $n warning lines name TOPOCOLL_VIRTUAL_NODES=abc, want 1"

env TOPOCOLL_REDUCE_SEGSIZE=3 TOPOCOLL_BCAST_SEGSIZE=1 TOPOCOLL_CICO_SLOT=5 TOPOCOLL_CHAIN_MIN=0 \
  "$info" --config >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || bad "--config with sizes below their floor failed (rc $rc)"
for nv in TOPOCOLL_REDUCE_SEGSIZE=3 TOPOCOLL_BCAST_SEGSIZE=1 TOPOCOLL_CICO_SLOT=5; do
  n=$(grep -c "warning: $nv .*; using 4K\$" "$tmp/err")
  [ "$n" = 1 ] || bad "$n warning lines name $nv and the value used (4K), want 1"
  grep -q "^${nv%%=*} (current value: \"4K\", data source: environment (raised to the floor: ${nv#*=})" \
    "$tmp/out" || bad "--config does not report ${nv%%=*} raised to 4K"
done
n=$(grep -c 'warning' "$tmp/err")
[ "$n" = 3 ] || bad "$n warning lines for three sizes below their floor, want 3"
env TOPOCOLL_REDUCE_SEGSIZE=0 TOPOCOLL_BCAST_SEGSIZE=4K "$info" --config >"$tmp/out" 2>"$tmp/err"
n=$(grep -c 'warning' "$tmp/err")
[ "$n" = 0 ] || bad "$n warning lines for segment sizes 0 and 4K, want 0"
grep -q '^TOPOCOLL_BCAST_SEGSIZE (current value: "4K", data source: environment,' "$tmp/out" ||
  bad "--config does not report TOPOCOLL_BCAST_SEGSIZE=4K as given"
"$@" -np 2 env TOPOCOLL_REDUCE_SEGSIZE=5 "$info" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || bad "the run with TOPOCOLL_REDUCE_SEGSIZE=5 failed (rc $rc)"
n=$(grep -c 'warning: TOPOCOLL_REDUCE_SEGSIZE=5 is below its floor 4K; using 4K' "$tmp/err")
[ "$n" = 2 ] || bad "2 processes: $n warning lines name TOPOCOLL_REDUCE_SEGSIZE=5, want 2 (one each)"

[ $fail = 0 ] && echo "check_config_warns: all passed"
exit $fail
