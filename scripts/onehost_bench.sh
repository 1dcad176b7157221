#!/usr/bin/env bash
# onehost_bench.sh: the collectives on one host (Bcast, Reduce, Allreduce,
# Allgather, Gather, Scatter, Alltoall), native vs topocoll
# interleaved, in both regimes: the rotating cold pool (topocoll_bench's
# default: every call starts with cold caches) and OSU's warm method (one
# buffer reused, --warm), 8 B to 16 MiB; one table (.txt) and CSV per
# collective and regime, and one plot per regime.
#   scripts/onehost_bench.sh OUTDIR [NP] [extra topocoll_bench options]
# BUILD (default: build/) holds topocoll_bench; Open MPI's mpiexec.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: scripts/onehost_bench.sh OUTDIR [NP] [options]}
np=${2:-2}
shift $(($# >= 2 ? 2 : 1))
build=${BUILD:-$root/build}
mkdir -p "$out"
bind=core; [ "$np" -le "$(nproc)" ] || bind=none   # one core each where there are enough
run() { mpiexec.openmpi --allow-run-as-root --oversubscribe --bind-to "$bind" -np "$@"; }
for regime in cold warm; do
  flag=(); [ "$regime" = warm ] && flag=(--warm)
  colls=(bcast reduce allreduce allgather gather scatter alltoall)
  for coll in "${colls[@]}"; do
    echo "== $coll, $regime buffers (np=$np, one host, $(nproc) cores)"
    mech=(); [ "$coll" = allgather ] && mech=(--mech)   # the copy-mechanism floors beside it
    cmd=("$build/topocoll_bench" --coll "$coll" --min 8 --max 16M "${flag[@]}" "${mech[@]}" "$@"
         --csv "$out/${coll}_np${np}_$regime.csv")
    { echo "# mpiexec.openmpi --bind-to $bind -np $np ${cmd[*]}"; run "$np" "${cmd[@]}"; } |
        tee "$out/${coll}_np${np}_$regime.txt"
    echo
  done
  if command -v gnuplot >/dev/null; then
    files=(); for coll in "${colls[@]}"; do files+=("$out/${coll}_np${np}_$regime.csv"); done
    "$root/scripts/plot.sh" "$out/onehost_np${np}_$regime.png" "${files[@]}" \
        --title "topocoll vs native MPI, $regime buffers" && echo "== plot: $out/onehost_np${np}_$regime.png"
  fi
done
