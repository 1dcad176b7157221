#!/usr/bin/env bash
# The main job: build with Open MPI, show what topocoll sees on this host,
# print the hardware-topology descent of an emulated 32-core machine and
# its NIC-aware leaders (each policy, with the link-crossing model), run
# ASP (all-pairs shortest paths) on the Rome road network with the
# native MPI_Bcast and with topocoll, then the benchmark of the five
# collectives (native vs topocoll in the same run, cold and warm buffers;
# tables, CSV files and plots in build/onehost/), and
# the nonblocking collectives' overlap (scripts/overlap.sh), and a real
# application (Quantum ESPRESSO, scripts/apps.sh) native vs topocoll.
#   scripts/main.sh [NP]        (NP defaults to 2: this host has 2 cores)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
np=${1:-2}
"$root/scripts/deps.sh"
"$root/scripts/build.sh" "$root/build" openmpi
run() { mpiexec.openmpi --allow-run-as-root --oversubscribe -np "$@"; }
echo "== topocoll_info (np=$np)"
run "$np" "$root/build/topocoll_info"
echo
xml32="$root/data/topologies/32em64t-2n8c2t-pci-normalio.xml"
echo "== hardware-topology communicators: the descent on the 32-core XML, socket round-robin, np=16 (emulated)"
run 16 env TOPOCOLL_TOPOLOGY="$xml32" TOPOCOLL_BINDING=socket-rr "$root/build/hdescent"
echo
echo "== NIC-aware leaders: the 32-core XML (InfiniBand near package 1), socket round-robin, np=8 on 2 virtual nodes (emulated)"
run 8 env TOPOCOLL_TOPOLOGY="$xml32" TOPOCOLL_BINDING=socket-rr TOPOCOLL_VIRTUAL_NODES=2 \
    "$root/build/topocoll_info" --model 4M 4M | sed -n '/^network interfaces/,$p'
echo
echo "== ASP on rome99 (np=$np)"
run "$np" "$root/build/asp" --graph "$root/data/rome99.gr"
echo
# the four collectives in both regimes: cold buffers (a rotating pool) and
# warm ones (OSU's method); tables, CSV files and plots in build/onehost/
"$root/scripts/onehost_bench.sh" "$root/build/onehost" "$np"
echo "== barrier benchmark (np=$np, one node)"
run "$np" "$root/build/topocoll_bench" --coll barrier
echo
echo "== across hosts: 2 emulated hosts x 2 ranks (network namespaces, 1 Gbit/s links, scripts/cluster.sh),"
echo "   native vs topocoll at 1 MiB and 16 MiB, with the link bound and each host's bytes on the wire"
export CLUSTER_ID=main$$
CLUSTER_ID=${CLUSTER_ID:0:6}
if "$root/scripts/cluster.sh" up 2 1gbit >/dev/null; then
  trap '"$root/scripts/cluster.sh" down >/dev/null 2>&1 || true' EXIT
  "$root/scripts/cluster.sh" calib | sed 's/^/  /'
  for coll in bcast reduce allreduce allgather alltoall barrier; do
    echo "  -- $coll (2 hosts x 2 ranks, 1 Gbit/s)"
    for size in 1M 16M; do
      [ "$coll" = barrier ] && [ "$size" = 16M ] && continue
      "$root/scripts/cluster.sh" run --quiet --hosts 2x2 -- "$root/build/topocoll_bench" --coll "$coll" --min "$size" \
          --max "$size" --reps 3 --link 1G --net 2>&1 | grep -v setpgid | { [ "$size" = 1M ] && cat || grep -v '^[# ]*[a-z]'; }
    done
  done
  "$root/scripts/cluster.sh" down >/dev/null
  trap - EXIT
else
  echo "  (skipped: no network namespaces here)"
fi
echo
echo "== nonblocking collectives: overlap with computation (np=$np; no communication core, then 1 per node"
echo "   under each progress-thread placement and split-tree S; this host has $(nproc) cores)"
BUILD="$root/build" "$root/scripts/overlap.sh" "$np" 1
echo
echo "== a real application: Quantum ESPRESSO (pw.x, 8-atom silicon SCF), native vs topocoll, on this host (np=2)"
echo "   and across 2 emulated hosts x 2 ranks (scripts/apps.sh; docs/applications.md has the measured table)"
"$root/scripts/apps.sh" --reps 1 --out "$root/build/apps" qe | sed -n '/^==/,$p'
"$root/scripts/apps.sh" --reps 1 --hosts 2x2 --out "$root/build/apps" qe | sed -n '/^==/,$p' ||
  echo "  (across hosts skipped: no network namespaces here)"
