#!/usr/bin/env bash
# Installs what topocoll needs from Debian, if missing (root, Debian 12).
set -euo pipefail
pkgs=(build-essential cmake pkg-config libhwloc-dev hwloc libopenmpi-dev openmpi-bin libmpich-dev mpich
      gnuplot-nox python3-mpi4py python3-numpy   # scripts/plot.sh; tests/test_mpi4py.py
      iproute2                                   # scripts/cluster.sh: ip netns, tc
      clang-format                               # tests/lint/style.sh
      clang libclang-rt-14-dev                   # tests/fuzz: libFuzzer targets
      gfortran)                                  # tests/fortran, tools/fortran
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
