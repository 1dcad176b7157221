#!/usr/bin/env bash
# check_env_garbage.sh TOPOCOLL_INFO PROGRAM MPIEXEC [FLAGS...]: every
# TOPOCOLL_* parameter that topocoll_info --config lists, all at once, set to
# garbage ("x9!"), empty, negative ("-1") and huge ("99999999999999999999"):
# PROGRAM (2 ranks: a test that checks its results, run with "--no-kill")
# passes; each parameter whose value its type rejects is named by exactly
# one warning line per process, no other parameter by more than one, and
# no warning is about anything else.  String parameters (paths, lists) are
# left to their own checks (check_topology_files.sh, the config tests).
# Prints "check_env_garbage: all passed" and exits 0 only if every check passed.
. "$(dirname "$0")/common.sh"
robust_init check_env_garbage 3 "TOPOCOLL_INFO PROGRAM MPIEXEC [FLAGS...]" "$@"
info=$1 prog=$2; shift 2
np=2
# NAME TYPE LO HI of the typed parameters
"$info" --config | sed -n 's/^\(TOPOCOLL_[A-Z0-9_]*\) (.*type: \(int\|size\|enum\)\(, allowed: \([-0-9]*\)\.\.\([0-9A-Z]*\)\)\{0,1\}.*/\1 \2 \4 \5/p' \
  >"$tmp/params"
nparams=$(wc -l <"$tmp/params")
((nparams >= 30)) || bad "only $nparams typed parameters listed by --config"
for value in 'x9!' '' '-1' '99999999999999999999'; do
  envs=()
  while read -r name type lo hi; do envs+=("$name=$value"); done <"$tmp/params"
  "$@" -np $np env "${envs[@]}" "$prog" --no-kill >"$tmp/out" 2>"$tmp/err"
  rc=$?
  ((rc == 0)) || { bad "value '$value': the program failed (rc $rc)"; tail -5 "$tmp/out" "$tmp/err"; }
  grep -q ' 0 failed' "$tmp/out" || bad "value '$value': the program's checks"
  while read -r name type lo hi; do
    n=$(grep -c "warning: $name\( \|=\)" "$tmp/err")
    want=$np   # garbage, empty and huge are rejected by every type
    if [[ $value == -1 ]] && { [[ $type == int && ${lo:-0} == -1 ]]; }; then want=0; fi
    [[ $n == "$want" ]] || bad "value '$value': $n warning lines name $name, want $want"
  done <"$tmp/params"
  other=$(grep 'warning' "$tmp/err" | grep -vc 'warning: TOPOCOLL_[A-Z0-9_]*\( \|=\)')
  [[ $other == 0 ]] || { bad "value '$value': $other other warnings"; grep warning "$tmp/err" | grep -v 'warning: TOPOCOLL_' | head -3; }
  echo "check_env_garbage: value '$value': $(grep -c warning "$tmp/err") warning lines, rc $rc"
done
robust_end
