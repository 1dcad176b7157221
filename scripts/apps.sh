#!/usr/bin/env bash
# apps.sh -- real applications from Debian packages under the preload,
# against the native MPI: time to solution (median of REPS runs, native and
# topocoll alternating), the result each printed (identical, to all its
# digits, or not), and topocoll's report (TOPOCOLL_REPORT) of the last run.
#   scripts/apps.sh [--reps N] [--hosts 1|KxP] [--out DIR] [APP...]
#     APP       qe (pw.x, 8-atom silicon SCF), cp2k (cp2k.psmp, 2-water PBE
#               energy), lammps (lmp, Lennard-Jones melt; C++); default: all
#               three.  Inputs: apps/real/.
#     --hosts   1 (this host, np=2, default) or KxP: K emulated hosts of P
#               ranks over 1 Gbit/s links (scripts/cluster.sh)
#     --reps    runs per mode (default 3)
#     --out     where the runs' outputs, the reports, table-HOSTS.md and
#               summary.dat go (default build/apps)
#     --plot PNG  then draw every case of DIR's summary.dat (the application's
#               own timer: medians, min-max bars; gnuplot)
# Installs the packages it needs (apt) and builds build/ with Open MPI (the
# packages are built against Open MPI).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
reps=3 hosts=1 out="$root/build/apps" apps=() plot=
while (($#)); do
  case $1 in
    --reps) reps=$2; shift 2 ;;
    --hosts) hosts=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --plot) plot=$2; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    qe|cp2k|lammps) apps+=("$1"); shift ;;
    *) echo "apps.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
((${#apps[@]})) || apps=(qe cp2k lammps)
[[ $reps =~ ^[1-9][0-9]*$ ]] || { echo "apps.sh: --reps needs a positive count" >&2; exit 2; }

pkgs=()
command -v pw.x >/dev/null || pkgs+=(quantum-espresso)
[ -d /usr/share/espresso/pseudo ] || pkgs+=(quantum-espresso-data)
command -v cp2k.psmp >/dev/null || pkgs+=(cp2k)
command -v lmp >/dev/null || pkgs+=(lammps)
if ((${#pkgs[@]})); then
  echo "== apt-get install ${pkgs[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${pkgs[@]}" >/dev/null
fi
"$root/scripts/deps.sh" >/dev/null
"$root/scripts/build.sh" "$root/build" openmpi >/dev/null
lib="$root/build/libtopocoll_pmpi.so"
mkdir -p "$out"
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# The command of APP, and the pattern of the line holding its result.
app_cmd() {
  case $1 in
    qe) echo "pw.x -in $root/apps/real/qe/si8.in" ;;
    cp2k) echo "cp2k.psmp -i $root/apps/real/cp2k/h2o2.inp" ;;
    lammps) echo "lmp -in $root/apps/real/lammps/melt.in -log none" ;;
  esac
}
app_result() {
  case $1 in
    qe) grep -E '^!' "$2" | tail -1 | awk '{ print $(NF-1), $NF }' ;;
    cp2k) grep -E 'ENERGY\| Total FORCE_EVAL' "$2" | tail -1 | awk '{ print $NF, "a.u." }' ;;
    lammps) awk '$1 == 1000 && NF == 6 { print "E=" $5, "P=" $6 }' "$2" | tail -1 ;;
  esac
}

cluster_up=0
if [ "$hosts" != 1 ]; then
  [[ $hosts =~ ^([0-9]+)x([0-9]+)$ ]] || { echo "apps.sh: --hosts 1 or KxP" >&2; exit 2; }
  export CLUSTER_ID=apps$$
  CLUSTER_ID=${CLUSTER_ID:0:6}
  "$root/scripts/cluster.sh" up "${BASH_REMATCH[1]}" 1gbit >/dev/null || exit $?
  cluster_up=1
  trap '"$root/scripts/cluster.sh" down >/dev/null 2>&1 || true' EXIT
fi

# run APP MODE DIR: one run in DIR; prints its wall seconds.
run() {
  local app=$1 mode=$2 dir=$3 t0 t1 env=()
  mkdir -p "$dir" && rm -rf "$dir/tmp"
  [ "$mode" = topocoll ] && env=(LD_PRELOAD="$lib" TOPOCOLL_REPORT=1 TOPOCOLL_REPORT_FILE="$dir/report")
  t0=$(date +%s.%N)
  if ((cluster_up)); then
    local e=() v
    for v in "${env[@]}"; do e+=(--env "$v"); done
    (cd "$dir" && "$root/scripts/cluster.sh" run --quiet --hosts "$hosts" "${e[@]}" -- \
        $(app_cmd "$app")) >"$dir/out" 2>"$dir/err"
  else
    local x=() v
    for v in "${env[@]}"; do x+=(-x "$v"); done
    (cd "$dir" && mpiexec.openmpi --oversubscribe -np 2 --mca mpi_yield_when_idle 1 \
        "${x[@]}" $(app_cmd "$app")) >"$dir/out" 2>"$dir/err"
  fi
  t1=$(date +%s.%N)
  echo "$t0 $t1" | awk '{ printf "%.2f\n", $2 - $1 }'
}

# The application's own wall time of the run in $2 (seconds): what it
# spent between MPI_Init and MPI_Finalize, without the launcher's start-up.
app_time() {
  case $1 in
    qe) awk '/PWSCF +:/ { for (i = 1; i <= NF; i++) if ($i == "WALL") { v = $(i-1); sub(/s$/, "", v); print v } }' "$2" | tail -1 ;;
    cp2k) awk '$1 == "CP2K" && NF >= 7 { print $NF }' "$2" | tail -1 ;;
    lammps) awk '/^Loop time of/ { print $4 }' "$2" | tail -1 ;;
  esac
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

table="$out/table-$hosts.md"
{
  echo "| application | hosts | native s (median of $reps) | topocoll s | native/topocoll | its timer: native s | topocoll s | native/topocoll | result native | result topocoll | identical |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
} >"$table"
for app in "${apps[@]}"; do
  : >"$out/$app-$hosts.native.times"; : >"$out/$app-$hosts.topocoll.times"
  : >"$out/$app-$hosts.native.apptimes"; : >"$out/$app-$hosts.topocoll.apptimes"
  for ((i = 1; i <= reps; i++)); do
    for mode in native topocoll; do
      d="$out/$app-$hosts/$mode.$i"
      s=$(run "$app" "$mode" "$d") || { echo "apps.sh: $app ($mode) failed, see $d/err" >&2; exit 1; }
      a=$(app_time "$app" "$d/out")
      echo "$s" >>"$out/$app-$hosts.$mode.times"
      echo "$a" >>"$out/$app-$hosts.$mode.apptimes"
      echo "  $app $mode run $i: $s s (its own timer: $a s), $(app_result "$app" "$d/out")"
    done
  done
  tn=$(median <"$out/$app-$hosts.native.times") tt=$(median <"$out/$app-$hosts.topocoll.times")
  an=$(median <"$out/$app-$hosts.native.apptimes") at=$(median <"$out/$app-$hosts.topocoll.apptimes")
  rn=$(app_result "$app" "$out/$app-$hosts/native.1/out")
  same=yes
  for d in "$out/$app-$hosts"/*.*/; do [ "$(app_result "$app" "$d/out")" = "$rn" ] || same=no; done
  rt=$(app_result "$app" "$out/$app-$hosts/topocoll.1/out")
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
  echo "| $app | $hosts | $tn | $tt | $(ratio "$tn" "$tt") | $an | $at | $(ratio "$an" "$at") | $rn | $rt | $same |" >>"$table"
  # summary.dat: one line per case (replaced when run again): the
  # application's own timer, median min max, native then topocoll
  mm() { sort -g "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)], v[1], v[NR] }'; }
  touch "$out/summary.dat"
  grep -v "^$app($hosts) " "$out/summary.dat" >"$out/summary.tmp" || true
  echo "$app($hosts) $(mm "$out/$app-$hosts.native.apptimes") $(mm "$out/$app-$hosts.topocoll.apptimes")" \
      >>"$out/summary.tmp"
  mv "$out/summary.tmp" "$out/summary.dat"
  echo "== $app ($hosts): topocoll's report of the last run"
  cat "$out/$app-$hosts/topocoll.$reps/report"
  cp "$out/$app-$hosts/topocoll.$reps/report" "$out/$app-$hosts.report"
done
echo
cat "$table"
echo "(this host: $(nproc --all) cores; the first times include MPI start-up, the application's own timer does not)"
if [ -n "$plot" ]; then
  command -v gnuplot >/dev/null || { echo "apps.sh: gnuplot not found" >&2; exit 1; }
  gnuplot <<EOF
set terminal pngcairo size 800,420 font ",11"
set output "$plot"
set title "Real applications, native MPI vs topocoll (Open MPI, $(nproc --all)-core host)"
set ylabel "application's own wall time, s (median, min-max)"
set style data histogram
set style histogram errorbars gap 1 lw 1
set style fill solid 0.6 border -1
set key top left
set yrange [0:*]
set grid ytics
plot "$out/summary.dat" using 2:3:4:xtic(1) title "native", '' using 5:6:7 title "topocoll"
EOF
  echo "apps.sh: $plot"
fi
