#!/usr/bin/env bash
# check_topology_files.sh XML_DIR PROGRAM MPIEXEC [FLAGS...]: TOPOCOLL_TOPOLOGY
# naming a missing file, an empty one, a truncated hwloc XML (the first
# half of a real one) and a file that is not XML: PROGRAM (2 ranks, run
# with "--no-kill": a test that checks its results) passes on the native
# collectives, and each process prints at most two warning lines (the
# topology's, then the set-up's), each once, whatever the number of
# communicators and calls.  Then TOPOCOLL_NETWORK_TOPOLOGY (2 virtual
# nodes) naming Slurm topology.conf files that are not understood: an
# unterminated range, an overflowing one, a backwards one, a SwitchName
# given twice, an unknown key, several bad lines, a directory, an empty
# file: the program passes, and each process prints exactly one warning,
# which names FILE:LINE (the first bad line, then the others' numbers) and
# what is wrong; a good file prints none.
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

# TOPOCOLL_NETWORK_TOPOLOGY: NAME, the file's text, what the warning must hold
net_case() {
  local name=$1 text=$2 want=$3 f=$tmp/$1.conf
  if [[ $name == directory ]]; then f=$tmp/adir; mkdir -p "$f"; else printf '%b' "$text" >"$f"; fi
  "${mpiexec[@]}" -np $np env TOPOCOLL_VIRTUAL_NODES=2 TOPOCOLL_NETWORK_TOPOLOGY="$f" \
    "$prog" --no-kill >"$tmp/out" 2>"$tmp/err"
  rc=$?
  ((rc == 0)) || { bad "network $name: the program failed (rc $rc)"; tail -5 "$tmp/err"; }
  grep -q ' 0 failed' "$tmp/out" || bad "network $name: the program's checks"
  n=$(grep -c 'warning' "$tmp/err")
  if [[ -z $want ]]; then
    ((n == 0)) || bad "network $name: $n warning lines for a good file, want 0"
  else
    ((n == np)) || bad "network $name: $n warning lines for $np processes, want $np (one each)"
    m=$(grep -c "warning: TOPOCOLL_NETWORK_TOPOLOGY ignored, .*$want" "$tmp/err")
    ((m == np)) || bad "network $name: $m warning lines hold '$want', want $np"
  fi
  echo "check_topology_files: network $name: rc $rc, $n warning lines: $(grep -m1 warning "$tmp/err")"
}
mpiexec=("$@")
good='SwitchName=s0 Nodes=vn0 LinkSpeed=1\nSwitchName=s1 Nodes=vn1\nSwitchName=top Switches=s[0-1]\n'
net_case good "$good" ''
net_case unterminated 'SwitchName=s0 Nodes=vn0\nSwitchName=s1 Nodes=vn[1-\n' \
  'unterminated.conf:2: `vn\[1-`: unterminated range'
net_case overflow 'SwitchName=s0 Nodes=vn[0-99999999999999999999]\n' \
  'overflow.conf:1: .*over 9 digits'
net_case backwards '# c\nSwitchName=s0 Nodes=vn[1-0]\n' 'backwards.conf:2: .*backwards range 1-0'
net_case duplicate 'SwitchName=s0 Nodes=vn0\nSwitchName=s0 Nodes=vn1\n' \
  'duplicate.conf:2: switch s0 named again (first on line 1)'
net_case unknown_key 'SwitchName=s0 Nodez=vn[0-1]\n' 'unknown_key.conf:1: unknown key `Nodez`'
net_case several "$good"'Nodes=vn0\n\nSwitchName=s2 Nodes=vn[0-\nSwitchName=s3 Nodes=vn]\n' \
  'several.conf:4: no SwitchName.*; also lines 6, 7$'
net_case directory '' 'adir: cannot read (Is a directory)'
net_case empty '# nothing\n' 'empty.conf: no SwitchName line'
robust_end
