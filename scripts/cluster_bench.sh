#!/usr/bin/env bash
# cluster_bench.sh OUTDIR [openmpi|mpich] [--quick|--sweep] [--colls C1,C2,...] [--env VAR=VALUE]...
#
# topocoll against the native MPI across emulated hosts (scripts/cluster.sh:
# network namespaces on a bridge, 1 Gbit/s links shaped with tbf in both
# directions, the MPI library's own launcher), with topocoll_bench: native
# and topocoll interleaved in one run, medians, the link bound beside each
# figure (--link) and the busiest host's bytes on the wire per call, native
# and topocoll, next to the model's count (--net).
#   1. the link, calibrated: an MPI ping-pong between two hosts;
#   2. every collective over message sizes, 4 hosts x 2 ranks at 1 Gbit/s,
#      by slot (ranks 0,1 on host 1) and by node (round-robin);
#   3. 1 MiB and 16 MiB on 2 and 4 hosts, 1 and 2 ranks per host, links
#      unlimited and at 1 Gbit/s;
#   4. ASP on rome99 across 4 hosts x 2 ranks.
# Each result file starts with the command that produced it; CSVs and PNG
# plots (scripts/plot.sh) go next to them.  This machine has 2 cores for
# every emulated host together: the emulated hosts share them, so the MPI
# libraries' waiters are told to give the core away (Open MPI:
# mpi_yield_when_idle=1, and topocoll's waiters yield; under MPICH
# scripts/cluster.sh sets TOPOCOLL_NAP=50 for its jobs).  --quick: section
# 2 only at 4 hosts x 2 by slot; --sweep: sections 1 and 2.  --colls:
# section 2's collectives (topocoll_bench --coll names; default
# bcast,reduce,allreduce,allgather and the barrier).
# --env: a variable for the ranks of every run (repeatable).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: cluster_bench.sh OUTDIR [openmpi|mpich] [--quick|--sweep] [--colls LIST]}
mpi=${2:-openmpi}
quick=0 sweep=0
colls=(bcast reduce allreduce allgather) barrier=1 envs=()
shift $(($# < 2 ? $# : 2))
while (($#)); do
  case $1 in
    --quick) quick=1 ;;
    --sweep) sweep=1 ;;
    --colls) IFS=, read -ra colls <<<"${2:?--colls LIST}"; barrier=0; shift ;;
    --env) envs+=(--env "${2:?--env VAR=VALUE}"); shift ;;
    *) echo "cluster_bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
build=$root/build
[[ $mpi == mpich ]] && build=$root/build-mpich
[[ -x $build/topocoll_bench ]] || "$root/scripts/build.sh" "$build" "$mpi"
mkdir -p "$out"
export CLUSTER_ID=${CLUSTER_ID:-cb$$}
export CLUSTER_ID=${CLUSTER_ID:0:6}
cluster=$root/scripts/cluster.sh
trap '"$cluster" down >/dev/null 2>&1 || true' EXIT

rate_now=""
up() {   # up K RATE: (re)make the cluster when K or the rate changes
  local want="$1 $2"
  [[ $rate_now == "$want" ]] && return
  "$cluster" down >/dev/null 2>&1 || true
  if [[ $2 == unlimited ]]; then "$cluster" up "$1" >/dev/null; else "$cluster" up "$1" "$2" >/dev/null; fi
  rate_now=$want
}

bench() {   # bench FILE HOSTS MAP RATE ARGS...: one topocoll_bench run, saved with its command
  local file=$1 hosts=$2 map=$3 rate=$4; shift 4
  local link=()
  [[ $rate != unlimited ]] && link=(--link "${rate%bit}")
  local cmd=("$cluster" run --mpi "$mpi" --hosts "$hosts" --map "$map" "${envs[@]}" -- "$build/topocoll_bench" "$@" "${link[@]}" --net)
  {
    echo "# scripts/cluster.sh up ${hosts%%x*} ${rate/unlimited/}; $(printf '%q ' "${cmd[@]}" | sed "s|$root/||g")"
    echo "# $(date -u +%FT%TZ), $(uname -r), $(nproc) cores shared by every emulated host"
    "${cmd[@]}" 2>&1 | grep -v 'setpgid'
  } >"$out/$file.txt"
  grep -v '^#' "$out/$file.txt" | sed "s/^/  /" | head -40
}

echo "== the link: MPI ping-pong between two hosts ($mpi)"
for rate in unlimited 1gbit; do
  up 2 "$rate"
  { echo "# scripts/cluster.sh up 2 ${rate/unlimited/}; scripts/cluster.sh calib --mpi $mpi"
    "$cluster" calib --mpi "$mpi"; } >"$out/calib-$mpi-$rate.txt" 2>&1
  sed "s/^/  $rate: /" "$out/calib-$mpi-$rate.txt" | grep -v '^  [a-z0-9]*: #'
done

maps=(slot node)
((quick)) && maps=(slot)
up 4 1gbit
for map in "${maps[@]}"; do
  for c in "${colls[@]}"; do
    max=16M
    [[ $c == allgather ]] && max=2M   # blocks: each host receives 6 blocks per call
    [[ $c == *v || $c == alltoallw ]] && max=512K # units: rank r's block is r + 1 of them (8 at most)
    echo "== $c, 4 hosts x 2 ranks by $map, 1 Gbit/s ($mpi)"
    bench "$mpi-4x2-$map-1gbit-$c" 4x2 "$map" 1gbit --coll "$c" --min 8 --max "$max" --reps 5 \
      --csv "$out/$mpi-4x2-$map-1gbit-$c.csv"
  done
  if ((barrier)); then
    echo "== barrier, 4 hosts x 2 ranks by $map ($mpi)"
    bench "$mpi-4x2-$map-1gbit-barrier" 4x2 "$map" 1gbit --coll barrier --reps 5
  fi
  csvs=()
  for c in "${colls[@]}"; do csvs+=("$out/$mpi-4x2-$map-1gbit-$c.csv"); done
  if [[ -x $root/scripts/plot.sh ]] && command -v gnuplot >/dev/null; then
    "$root/scripts/plot.sh" "$out/$mpi-4x2-$map-1gbit.png" "${csvs[@]}" \
      --title "topocoll vs $mpi: 4 emulated hosts x 2 ranks (by $map), 1 Gbit/s links" || true
  fi
done
((quick || sweep)) && exit 0

for rate in 1gbit unlimited; do
  for layout in 2x1 2x2 4x1 4x2; do
    up "${layout%%x*}" "$rate"
    for c in "${colls[@]}"; do
      for size in 1M 16M; do
        [[ $c == allgather && $size == 16M ]] && size=2M
        echo "== $c $size, $layout by slot, $rate ($mpi)"
        bench "$mpi-$layout-slot-$rate-$c-$size" "$layout" slot "$rate" --coll "$c" --min "$size" --max "$size" --reps 3
      done
    done
  done
done

up 4 1gbit
echo "== ASP on rome99, 4 hosts x 2 ranks by slot, 1 Gbit/s ($mpi)"
{ echo "# scripts/cluster.sh up 4 1gbit; scripts/cluster.sh run --mpi $mpi --hosts 4x2 -- ${build#"$root"/}/asp"
  "$cluster" run --mpi "$mpi" --hosts 4x2 -- "$build/asp" 2>&1 | grep -v setpgid; } >"$out/$mpi-4x2-slot-1gbit-asp.txt"
sed 's/^/  /' "$out/$mpi-4x2-slot-1gbit-asp.txt"
