#!/usr/bin/env bash
# install_check.sh BUILD_DIR MPI: topocoll as a user adopts it.  Installs
# BUILD_DIR into a temporary prefix, moves the prefix elsewhere (it must be
# relocatable), then:
#   - the installed libtopocoll_pmpi resolves libtopocoll in the prefix
#     (RPATH $ORIGIN), the tools (which look inside the library, so carry
#     its objects: libtopocoll.so exports only the API) resolve every
#     library they need, and topocoll_info runs;
#   - the examples (examples/hcompute.c, hdescent.c) build with pkg-config
#     (topocoll-pmpi.pc, which requires topocoll.pc and the MPI's .pc) and
#     with CMake (tests/install/, find_package(topocoll CONFIG)), and run at
#     2 ranks under MPI (openmpi|mpich, the one BUILD_DIR was built with).
# Prints "install_check: all passed" and exits 0 only if every step passed.
set -uo pipefail
build=$(cd "$1" && pwd) mpi=$2
src=$(cd "$(dirname "$0")/.." && pwd)
case $mpi in
  openmpi) mpiexec=(mpiexec.openmpi --allow-run-as-root --oversubscribe) ;;
  mpich)   mpiexec=(mpiexec.mpich) ;;
  *) echo "install_check: MPI must be openmpi or mpich"; exit 2 ;;
esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/topocoll-install.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
unset LD_LIBRARY_PATH PKG_CONFIG_PATH CMAKE_PREFIX_PATH
fail=0
step() { echo "== install_check: $*"; }
bad() { echo "install_check: FAILED: $*"; fail=1; }

step "install into $tmp/stage, moved to $tmp/prefix"
cmake --install "$build" --prefix "$tmp/stage" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; bad "cmake --install"; exit 1; }
mv "$tmp/stage" "$tmp/prefix"
prefix=$tmp/prefix
lib=$(dirname "$(find "$prefix" -name 'libtopocoll.so' | head -1)")
if [ ! -f "$lib/libtopocoll.so" ]; then bad "no libtopocoll.so installed"; exit 1; fi
for f in include/topocoll.h bin/topocoll_info bin/topocoll_bench; do
  [ -e "$prefix/$f" ] || bad "$f not installed"
done
for f in pkgconfig/topocoll.pc pkgconfig/topocoll-pmpi.pc cmake/topocoll/topocollConfig.cmake \
         cmake/topocoll/topocollConfigVersion.cmake cmake/topocoll/topocollTargets.cmake; do
  [ -e "$lib/$f" ] || bad "${lib#"$prefix"/}/$f not installed"
done
if grep -rq -e "$build" -e "$src" "$lib/cmake" "$lib/pkgconfig"; then
  bad "installed package files name the build or source tree"; grep -rn -e "$build" -e "$src" "$lib/cmake" "$lib/pkgconfig"
fi

step "installed binaries find libtopocoll in the prefix"
r=$(ldd "$lib/libtopocoll_pmpi.so" | awk '$1 ~ /^libtopocoll\.so/ {print $3}')
if [ -z "$r" ] || [ "$(readlink -f "$r")" != "$(readlink -f "$lib/libtopocoll.so")" ]; then
  bad "libtopocoll_pmpi.so resolves libtopocoll to '${r:-nothing}'"; ldd "$lib/libtopocoll_pmpi.so"
fi
for f in "$prefix/bin/topocoll_info" "$prefix/bin/topocoll_bench" "$lib/libtopocoll_pmpi.so"; do
  if ldd "$f" | grep -q 'not found'; then bad "$(basename "$f"): unresolved libraries"; ldd "$f"; fi
done
out=$("${mpiexec[@]}" -np 1 "$prefix/bin/topocoll_info" 2>&1); rc=$?
if [ $rc -ne 0 ] || ! grep -q 'nodes: 1, processes: 1' <<<"$out"; then
  bad "installed topocoll_info (rc $rc)"; printf '%s\n' "$out" | tail -20
fi

run_examples() {   # run_examples LABEL DIR
  local out rc
  out=$("${mpiexec[@]}" -np 2 env TOPOCOLL_TOPOLOGY="$src/data/topologies/32em64t-2n8c2t-pci-normalio.xml" \
        TOPOCOLL_BINDING=socket-rr "$2/hdescent" 2>&1); rc=$?
  if [ $rc -ne 0 ] || ! grep -q 'bottom reached' <<<"$out" || grep -q 'NOT A STRICT SUBSET' <<<"$out"; then
    bad "$1 hdescent (rc $rc)"; printf '%s\n' "$out" | tail -20
  fi
  out=$("${mpiexec[@]}" -np 2 env TOPOCOLL_VIRTUAL_NODES=2 "$2/hcompute" 10001 2>&1); rc=$?
  if [ $rc -ne 0 ]; then bad "$1 hcompute (rc $rc)"; printf '%s\n' "$out" | tail -20; fi
  echo "$1: examples ran"
}

step "examples with pkg-config"
export PKG_CONFIG_PATH=$lib/pkgconfig
pc_mpi=$(pkg-config --variable=mpi topocoll)
[ "$pc_mpi" = "$mpi" ] || bad "topocoll.pc says mpi=$pc_mpi, built with $mpi"
want=$([ "$mpi" = openmpi ] && echo ompi-c || echo mpich)
pkg-config --print-requires topocoll | grep -qx "$want" || bad "topocoll.pc does not require $want"
mkdir -p "$tmp/pc"
for e in hdescent hcompute; do
  # shellcheck disable=SC2046
  cc -std=gnu11 -O2 -Wall -o "$tmp/pc/$e" "$src/examples/$e.c" $(pkg-config --cflags topocoll-pmpi) \
     $(pkg-config --libs topocoll-pmpi) -lm -Wl,-rpath,"$(pkg-config --variable=libdir topocoll)" ||
    bad "pkg-config build of $e"
done
[ $fail -eq 0 ] && run_examples pkg-config "$tmp/pc"
unset PKG_CONFIG_PATH

step "examples with find_package(topocoll CONFIG)"
if cmake -S "$src/tests/install" -B "$tmp/cm" -DCMAKE_PREFIX_PATH="$prefix" -DEXAMPLES_DIR="$src/examples" \
     >"$tmp/cm.log" 2>&1 && cmake --build "$tmp/cm" >>"$tmp/cm.log" 2>&1; then
  grep 'topocoll 0' "$tmp/cm.log"
  grep -q "MPI=$mpi " "$tmp/cm.log" || bad "the CMake package did not report MPI=$mpi"
  run_examples cmake "$tmp/cm"
else
  cat "$tmp/cm.log"; bad "CMake consumer (tests/install)"
fi

[ $fail -eq 0 ] && echo "install_check: all passed"
exit $fail
