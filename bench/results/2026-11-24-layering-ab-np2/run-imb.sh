#!/usr/bin/env bash
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# before: a build of 00b9671 in /tmp/ab/before-build; after: of 2989540 in /tmp/ab/after-build
for round in $(seq 1 8); do
  for b in before after; do
    for coll in bcast reduce allreduce allgather; do
      mpirun --bind-to core -np 2 /tmp/ab/$b-build/topocoll_bench --coll $coll --min 8 --max 4K --reps 5 --imb \
        --csv csv-imb/$b-$coll-imb-$round.csv > /dev/null 2>&1
    done
  done
done
