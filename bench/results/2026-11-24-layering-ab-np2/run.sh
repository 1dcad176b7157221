#!/usr/bin/env bash
# A/B, interleaved: before (00b9671) and after, 4 collectives x 2 regimes, np=2 bound.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# before: a build of 00b9671 in /tmp/ab/before-build; after: of 2989540 in /tmp/ab/after-build
for round in 1 2 3 4 5; do
  for b in before after; do
    for coll in bcast reduce allreduce allgather; do
      for regime in warm cold; do
        flag=; [[ $regime == warm ]] && flag=--warm
        mpirun --bind-to core -np 2 /tmp/ab/$b-build/topocoll_bench --coll $coll --min 8 --max 16M --reps 5 $flag \
          --csv csv/$b-$coll-$regime-$round.csv > csv/$b-$coll-$regime-$round.txt 2>&1
      done
    done
  done
done
echo done
