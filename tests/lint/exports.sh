#!/usr/bin/env bash
# exports.sh LIBTOPOCOLL LIBTOPOCOLL_PMPI: the libraries export their
# interfaces and nothing else (a library preloaded into any program must
# not collide with the program's own functions):
#  - libtopocoll.so: only topocoll_* (the functions of topocoll.h);
#  - libtopocoll_pmpi.so: only MPI_* functions (the calls it interposes;
#    MPIX_*: Open MPI's persistent collectives) and, built on Open MPI, the
#    Fortran names of the same calls (mpi_*, mpix_*, MPI_* upper case,
#    ompi_*_f, ompix_*_f, the test calls' pmpi_*_; MPICH's mpi_*_f08_:
#    pmpi/fortran.c).
# One line per stray symbol; "exports: ok" and the counts when none.
set -uo pipefail
core=${1:?usage: exports.sh LIBTOPOCOLL LIBTOPOCOLL_PMPI} pmpi=${2:?}
bad=0
defs() { nm -D --defined-only "$1" | awk '{ print $NF }' | grep -v -E '^(_init|_fini|_edata|_end|__bss_start)$'; }
ncore=0 npmpi=0
while read -r sym; do
  if [[ $sym == topocoll_* ]]; then ((ncore++)); else echo "exports: $(basename "$core") exports $sym"; bad=1; fi
done < <(defs "$core")
while read -r sym; do
  if [[ $sym == MPI_* || $sym == MPIX_* || $sym =~ ^p?mpix?_[a-z0-9_]+$ || $sym =~ ^ompix?_[a-z_]+_f$ ]]; then ((npmpi++)); else echo "exports: $(basename "$pmpi") exports $sym"; bad=1; fi
done < <(defs "$pmpi")
(( ncore > 0 && npmpi > 0 )) || { echo "exports: nothing exported ($ncore, $npmpi)"; bad=1; }
(( bad )) && exit 1
echo "exports: ok ($ncore topocoll_* functions, $npmpi MPI functions and Fortran names)"
