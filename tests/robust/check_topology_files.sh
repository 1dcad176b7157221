#!/usr/bin/env bash
# check_topology_files.sh XML_DIR PROGRAM MPIEXEC [FLAGS...]: TOPOCOLL_TOPOLOGY
# naming a missing file, an empty one, a truncated hwloc XML (the first
# half of a real one) and a file that is not XML: PROGRAM (2 ranks, run
# with "--no-kill": a test that checks its results) passes on the native
# collectives, and each process prints at most two warning lines (the
# topology's, then the set-up's), each once, whatever the number of
# communicators and calls.
# Prints "check_topology_files: all passed" and exits 0 only if every check passed.
. "$(dirname "$0")/common.sh"
robust_init check_topology_files 3 "XML_DIR PROGRAM MPIEXEC [FLAGS...]" "$@"
xml_dir=$1 prog=$2; shift 2
np=2
real=$(ls "$xml_dir"/*.xml | head -1)
: >"$tmp/empty.xml"
head -c $(($(stat -c %s "$real") / 2)) "$real" >"$tmp/truncated.xml"
head -c 4096 /dev/urandom >"$tmp/random.xml"
for f in "$tmp/missing.xml" "$tmp/empty.xml" "$tmp/truncated.xml" "$tmp/random.xml"; do
  "$@" -np $np env TOPOCOLL_TOPOLOGY="$f" "$prog" --no-kill >"$tmp/out" 2>"$tmp/err"
  rc=$?
  name=$(basename "$f")
  ((rc == 0)) || { bad "$name: the program failed (rc $rc)"; tail -5 "$tmp/err"; }
  grep -q ' 0 failed' "$tmp/out" || bad "$name: the program's checks"
  n=$(grep -c 'warning' "$tmp/err")
  ((n >= np && n <= 2 * np)) || bad "$name: $n warning lines for $np processes, want $np to $((2 * np))"
  dup=$(grep 'warning' "$tmp/err" | sort | uniq -c | awk -v np=$np '$1 > np' | wc -l)
  ((dup == 0)) || bad "$name: a warning repeats within a process"
  ! grep -q 'of 0 processes' "$tmp/err" || bad "$name: a warning counts 0 processes"
  echo "check_topology_files: $name: rc $rc, $n warning lines: $(grep -m1 warning "$tmp/err")"
done
robust_end
