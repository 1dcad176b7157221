#!/usr/bin/env bash
# 3 runs x {gather, scatter, alltoall} x {cold, warm}, np=2 bound, 8 B - 16 MiB per block
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
out=${1:?outdir}; mkdir -p "$out"
for run in 1 2 3; do
  for coll in gather scatter alltoall; do
    for regime in cold warm; do
      fl=(); [ $regime = warm ] && fl=(--warm)
      max=16M; [ $coll = alltoall ] && max=8M   # (two 8 MiB blocks each way per process)
      cmd=(build/topocoll_bench --coll $coll --min 8 --max $max --reps 5 "${fl[@]}" --csv "$out/run$run/${coll}_np2_$regime.csv")
      mkdir -p "$out/run$run"
      { echo "# mpiexec.openmpi --bind-to core -np 2 ${cmd[*]}"; mpiexec.openmpi --allow-run-as-root --bind-to core -np 2 "${cmd[@]}"; } > "$out/run$run/${coll}_np2_$regime.txt" 2>&1
    done
  done
done
