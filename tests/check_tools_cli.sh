#!/usr/bin/env bash
# check_tools_cli.sh VERSION TOOL... : every tool (topocoll_info,
# topocoll_bench, asp), run without mpiexec:
#   --help, -h       exit 0, usage on stdout, nothing on stderr;
#   --version, -V    exit 0, "NAME (topocoll) VERSION" on stdout;
#   a bad option     exit 2, nothing on stdout, a message naming it on stderr;
#   a bad value      exit 2, nothing on stdout, a message naming it on stderr.
# Prints "check_tools_cli: all passed" and exits 0 only if every check passed.
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: check_tools_cli.sh VERSION TOOL..." >&2; exit 2; }
version=$1; shift
tmp=$(mktemp -d "${TMPDIR:-/tmp}/check_tools_cli.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "check_tools_cli: FAILED: $*"; sed 's/^/  stdout: /' "$tmp/out"; sed 's/^/  stderr: /' "$tmp/err"; fail=1; }
run() { timeout 60 "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; }

for tool in "$@"; do
  name=$(basename "$tool")
  case $name in   # a value each tool rejects
    topocoll_info) badval=(--model 12Q) ;;
    topocoll_bench) badval=(--min 12Q) ;;
    asp) badval=(--sources 12Q) ;;
    *) badval=(--help) ;;
  esac
  for h in --help -h; do
    run "$tool" $h
    if [ $rc -ne 0 ] || ! head -1 "$tmp/out" | grep -q '^usage: ' || [ -s "$tmp/err" ]; then
      bad "$name $h: rc $rc, want 0, 'usage: ...' on stdout, empty stderr"
    fi
  done
  for v in --version -V; do
    run "$tool" $v
    if [ $rc -ne 0 ] || [ "$(cat "$tmp/out")" != "$name (topocoll) $version" ] || [ -s "$tmp/err" ]; then
      bad "$name $v: rc $rc, want 0 and '$name (topocoll) $version'"
    fi
  done
  run "$tool" --no-such-option
  if [ $rc -ne 2 ] || [ -s "$tmp/out" ] || ! grep -q -- '--no-such-option' "$tmp/err"; then
    bad "$name --no-such-option: rc $rc, want 2, empty stdout, the option named on stderr"
  fi
  run "$tool" "${badval[@]}"
  if [ $rc -ne 2 ] || [ -s "$tmp/out" ] || ! grep -q -- "${badval[0]} 12Q" "$tmp/err"; then
    bad "$name ${badval[*]}: rc $rc, want 2, empty stdout, the value named on stderr"
  fi
  case $name in
    topocoll_info)   # the cost model (no MPI): a table, and its bad values
      run "$tool" --model 4x2 --link 100M 1M
      if [ $rc -ne 0 ] || ! grep -q '^cost model' "$tmp/out" || ! grep -q '^allreduce  *1048576 ' "$tmp/out"; then
        bad "$name --model 4x2 --link 100M 1M: rc $rc, want 0 and the model's table"
      fi
      run "$tool" --model 8x2 --link 100M --switches 2:50M 1M
      if [ $rc -ne 0 ] || ! grep -q '^two levels: 2 leaf switches of 4 ' "$tmp/out" ||
         ! grep -q '^allreduce  *1048576 .*by switch' "$tmp/out"; then
        bad "$name --model 8x2 --switches 2:50M 1M: rc $rc, want 0 and Allreduce by switch"
      fi
      for v in "--model 4x0" "--link 5Q" "--emulate 2:x" "--check /nonexistent.csv" \
               "--switches 0" "--switches 2:5Q" "--switches 3"; do
        # shellcheck disable=SC2086
        run "$tool" --model 2x2 $v
        if [ $rc -ne 2 ] || [ -s "$tmp/out" ] || ! grep -q -- "${v#* }" "$tmp/err"; then
          bad "$name --model 2x2 $v: rc $rc, want 2, empty stdout, the value named on stderr"
        fi
      done ;;
    topocoll_bench)
      run "$tool" --sizes 8,4
      if [ $rc -ne 2 ] || [ -s "$tmp/out" ] || ! grep -q -- "--sizes 8,4" "$tmp/err"; then
        bad "$name --sizes 8,4: rc $rc, want 2 (not ascending), the value named on stderr"
      fi ;;
  esac
  [ $fail = 0 ] && echo "check_tools_cli: $name: --help, -h, --version, -V, a bad option, a bad value: ok"
done
[ $fail = 0 ] && echo "check_tools_cli: all passed"
exit $fail
