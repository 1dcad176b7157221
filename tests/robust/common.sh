# tests/robust/common.sh, sourced by the check_*.sh scripts: robust_init
# NAME NARGS USAGE "$@" checks the argument count, makes $tmp (removed at
# exit), clears the environment's TOPOCOLL_* variables, and defines
# bad() (one FAILED line, marks the run failed) and robust_end (the
# verdict line and exit status).
set -uo pipefail
robust_init() {
  robust_name=$1
  local want=$2 usage=$3
  shift 3
  [ $# -ge "$want" ] || { echo "usage: $robust_name.sh $usage" >&2; exit 2; }
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/$robust_name.XXXXXX") || exit 2
  trap 'rm -rf "$tmp"' EXIT
  unset $(env | sed -n 's/^\(TOPOCOLL_[A-Za-z0-9_]*\)=.*/\1/p')
  fail=0
}
bad() { echo "$robust_name: FAILED: $*"; fail=1; }
robust_end() {
  [ "$fail" = 0 ] && echo "$robust_name: all passed"
  exit "$fail"
}
