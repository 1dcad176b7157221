#!/usr/bin/env bash
# The main job: build with Open MPI, show what topocoll sees on this host,
# print the hardware-topology descent of an emulated 32-core machine and
# its NIC-aware leaders (each policy, with the link-crossing model), run
# ASP (all-pairs shortest paths) on the Rome road network with the
# native MPI_Bcast and with topocoll, then the benchmark of the five
# collectives (native vs topocoll in the same run; CSV files in build/), and
# the nonblocking collectives' overlap (scripts/overlap.sh).
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
for coll in bcast reduce allreduce allgather barrier; do
  echo "== $coll benchmark (np=$np, one node)"
  mech=(); [ "$coll" = allgather ] && mech=(--mech)   # the copy-mechanism floors next to it
  run "$np" "$root/build/topocoll_bench" --coll "$coll" --min 4K --max 16M "${mech[@]}" \
      --csv "$root/build/bench_${coll}_np$np.csv"
  echo
done
echo "== nonblocking collectives: overlap with computation (np=$np; no communication core, then 1 per node"
echo "   under each progress-thread placement and split-tree S; this host has $(nproc) cores)"
BUILD="$root/build" "$root/scripts/overlap.sh" "$np" 1
