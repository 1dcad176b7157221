#!/usr/bin/env bash
# check_env_garbage.sh TOPOCOLL_INFO PROGRAM MPIEXEC [FLAGS...]: every
# TOPOCOLL_* parameter that topocoll_info --config lists, all at once, set to
# garbage ("x9!"), empty, negative ("-1"), huge ("99999999999999999999")
# and degenerate ("1": a one-byte segment or slot): PROGRAM (2 ranks: a
# test that checks its results, run with "--no-kill") passes; each
# parameter whose value its type rejects, or raises to its floor (a size
# whose --config range reads "LO..HI, A..B -> FLOOR"), is named by exactly
# one warning line per process, no other parameter by any, and no warning
# is about anything else.  String parameters (paths, lists) are
# left to their own checks (check_topology_files.sh, the config tests).
# Prints "check_env_garbage: all passed" and exits 0 only if every check passed.
. "$(dirname "$0")/common.sh"
robust_init check_env_garbage 3 "TOPOCOLL_INFO PROGRAM MPIEXEC [FLAGS...]" "$@"
info=$1 prog=$2; shift 2
np=2
# NAME TYPE ALLOWED (tab-separated) of the typed parameters
"$info" --config | sed -n 's/^\(TOPOCOLL_[A-Z0-9_]*\) (.*type: \(int\|size\|enum\)\(, allowed: \(.*\)\)\{0,1\})$/\1\t\2\t\4/p' \
  >"$tmp/params"
# How many warning lines per process name a parameter set to $value: 1 if
# its type rejects the value or raises it to the floor, else 0.
warns() {
  local value=$1 type=$2 allowed=$3 lo=${3%%..*}
  case $value in
    x9! | '' | 99999999999999999999) echo 1 ;;
    -1) [[ $type == int && $lo == -1 ]] && echo 0 || echo 1 ;;
    1) case $type in
         enum) [[ "|$allowed|" == *"|1|"* ]] && echo 0 || echo 1 ;;
         size) [[ $allowed == *" 1.."*" -> "* || $lo != [01] ]] && echo 1 || echo 0 ;;
         int) hi=${allowed#*..}; ((lo <= 1 && 1 <= hi)) && echo 0 || echo 1 ;;
       esac ;;
  esac
}
nparams=$(wc -l <"$tmp/params")
((nparams >= 30)) || bad "only $nparams typed parameters listed by --config"
nfloor=$(grep -c ' -> ' "$tmp/params")
((nfloor >= 3)) || bad "only $nfloor sizes with a floor listed by --config"
for value in 'x9!' '' '-1' '99999999999999999999' '1'; do
  envs=()
  while IFS=$'\t' read -r name type allowed; do envs+=("$name=$value"); done <"$tmp/params"
  # each rank's stderr to its own file, not through the launcher's
  # forwarding (Open MPI's lost 21 bytes of one line among 100, under ASan)
  rm -f "$tmp"/err.*
  "$@" -np $np env "${envs[@]}" sh -c \
    'exec "$0" --no-kill 2>"$1/err.rank${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-x}}"' "$prog" "$tmp" \
    >"$tmp/out" 2>"$tmp/err.launcher"
  rc=$?
  cat "$tmp"/err.* >"$tmp/err"
  ((rc == 0)) || { bad "value '$value': the program failed (rc $rc)"; tail -5 "$tmp/out" "$tmp/err"; }
  grep -q ' 0 failed' "$tmp/out" || bad "value '$value': the program's checks"
  while IFS=$'\t' read -r name type allowed; do
    n=$(grep -c "warning: $name\( \|=\)" "$tmp/err")
    want=$((np * $(warns "$value" "$type" "$allowed")))
    [[ $n == "$want" ]] || bad "value '$value': $n warning lines name $name, want $want"
  done <"$tmp/params"
  other=$(grep 'warning' "$tmp/err" | grep -vc 'warning: TOPOCOLL_[A-Z0-9_]*\( \|=\)')
  [[ $other == 0 ]] || { bad "value '$value': $other other warnings"; grep warning "$tmp/err" | grep -v 'warning: TOPOCOLL_' | head -3; }
  echo "check_env_garbage: value '$value': $(grep -c warning "$tmp/err") warning lines, rc $rc"
done
robust_end
