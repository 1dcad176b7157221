#!/usr/bin/env bash
# build.sh DIR MPI [cmake args...]: configure and build topocoll into DIR
# against MPI (openmpi|mpich).
set -euo pipefail
dir=$1 mpi=$2; shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
cmake -S "$root" -B "$dir" -DTOPOCOLL_MPI="$mpi" "$@" >"$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
cmake --build "$dir" -j "$(nproc)" 2>&1 | grep -E 'error|warning|Error' || true
test -x "$dir/topocoll_bench"
