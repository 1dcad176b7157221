#!/bin/sh
# hsplit_matrix.sh MPIEXEC "MPIEXEC_FLAGS" TEST_EXE XML_DIR NP_MAX [NP_MIN]
#
# test_hsplit on every hwloc XML in XML_DIR under every emulated binding
# policy.  Each (XML, policy) pair runs at four process counts, rotated so
# that every XML sees every count from 1 to 16 across its policies (counts
# above NP_MAX and below NP_MIN, 1 by default, are skipped: MPICH
# busy-polls, so its oversubscribed runs stay small); every other run cuts the host into 2 virtual nodes.
# Exits 1 if any run fails.
set -u
mpiexec=$1; flags=$2; exe=$3; xmldir=$4; npmax=$5; npmin=${6:-1}
runs=0; bad=0; i=0
for xml in "$xmldir"/*.xml; do
  j=0
  for bind in core socket-rr numa-rr none random:7; do
    k=$(( (i + j) % 4 ))
    for np in $((k + 1)) $((k + 5)) $((k + 9)) $((k + 13)); do
      [ "$np" -le "$npmax" ] && [ "$np" -ge "$npmin" ] || continue
      vn=1
      [ $(( (i + j + np) % 2 )) -eq 0 ] && [ "$np" -ge 2 ] && vn=2
      # shellcheck disable=SC2086
      out=$($mpiexec $flags -n "$np" env TOPOCOLL_TOPOLOGY="$xml" TOPOCOLL_BINDING="$bind" \
            TOPOCOLL_VIRTUAL_NODES=$vn "$exe" 2>&1)
      rc=$?
      runs=$((runs + 1))
      line=$(printf '%s\n' "$out" | grep '^test_hsplit np=')
      if [ $rc -ne 0 ] || ! printf '%s\n' "$line" | grep -q ' 0 failed$'; then
        bad=$((bad + 1))
        echo "FAILED: np=$np $(basename "$xml") $bind vnodes=$vn (rc $rc)"
        printf '%s\n' "$out" | grep -v '^topocoll: ' | tail -20
      else
        echo "$line"
      fi
    done
    j=$((j + 1))
  done
  i=$((i + 1))
done
echo "hsplit matrix: $runs runs, $bad failed"
[ "$bad" -eq 0 ]
