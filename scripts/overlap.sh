#!/usr/bin/env bash
# The nonblocking collectives' overlap (progress-threads paper, section 7;
# topocoll_bench --overlap), swept over the progress configurations:
# no communication core; then TOPOCOLL_COMM_CORES=C with each placement
# (bind, numa, odd-even) and each split-tree S = 0..H plus the model's.
# Prints every run's table, then a summary: per placement, the overlapped
# time of Ibcast and Ireduce for each S, the measured best S and the
# model's S, and Iscan's per placement.
#   scripts/overlap.sh [NP] [C]    (defaults: 2 ranks, 1 communication core;
#                                   BUILD=dir (build), REPS=n (9))
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
np=${1:-2} cc=${2:-1}
build=${BUILD:-$root/build}
reps=${REPS:-9}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() { mpiexec.openmpi --allow-run-as-root --oversubscribe -np "$np" "$@"; }
h=0; while (( (1 << h) < np )); do h=$((h + 1)); done
echo "== overlap: np=$np, $(nproc) cores on this host, up to $cc communication core(s); H=$h"
run env TOPOCOLL_COMM_CORES=0 "$build/topocoll_bench" --overlap --reps "$reps" --csv "$out/none.csv"
for pl in bind numa odd-even; do
  for s in $(seq 0 "$h") model; do
    echo
    sv=(); [[ $s != model ]] && sv=(TOPOCOLL_SPLIT_TREE_S="$s")
    run env TOPOCOLL_COMM_CORES="$cc" TOPOCOLL_PROGRESS_PLACEMENT="$pl" "${sv[@]}" \
        "$build/topocoll_bench" --overlap --reps "$reps" --csv "$out/$pl-$s.csv"
  done
done
echo
echo "== summary (topocoll rows; t_ovrl = start + computation sized t_pure + wait, us; overlap %)"
printf "%-9s %-6s %-11s %10s %10s %9s\n" placement S collective t_pure_us t_ovrl_us overlap%
for f in "$out"/none.csv; do
  awk -F, 'NR > 1 && $2 == "topocoll" { printf "%-9s %-6s %-11s %10.1f %10.1f %9.1f\n", "(none)", "-", $1, $9, $11, $12 }' "$f"
done
for pl in bind numa odd-even; do
  for s in $(seq 0 "$h") model; do
    awk -F, -v pl="$pl" -v s="$s" 'NR > 1 && $2 == "topocoll" && ($1 == "ibcast" || $1 == "ireduce" || $1 == "iscan") {
      lab = s == "model" ? "model=" $8 : s; printf "%-9s %-6s %-11s %10.1f %10.1f %9.1f\n", pl, lab, $1, $9, $11, $12 }' \
      "$out/$pl-$s.csv"
  done
done
echo
echo "== measured best S (lowest overlapped time) vs the model's S"
for pl in bind numa odd-even; do
  for coll in ibcast ireduce; do
    best=$(for s in $(seq 0 "$h"); do awk -F, -v c="$coll" -v s="$s" 'NR > 1 && $2 == "topocoll" && $1 == c { print $11, s }' \
           "$out/$pl-$s.csv"; done | sort -g | head -1)
    model=$(awk -F, -v c="$coll" 'NR > 1 && $2 == "topocoll" && $1 == c { print $8 }' "$out/$pl-model.csv")
    printf "%-9s %-8s measured best S=%s (t_ovrl %s us), model S=%s\n" "$pl" "$coll" "${best#* }" "${best%% *}" "$model"
  done
done
