#!/usr/bin/env bash
# scale_bench.sh OUTDIR [OPTIONS]: each collective's time against the
# number of emulated hosts (scripts/cluster.sh), topocoll against the
# native MPI and the peers a user would switch to, beside the link bound.
#
#   --mpi openmpi|mpich  the MPI library (default openmpi)
#   --hosts LIST         host counts (default 2,4,8,16)
#   --ppn P              ranks per host (default 2)
#   --rates LIST         link rates, tc syntax (default 1gbit,100mbit)
#   --colls LIST         topocoll_bench --coll names (default
#                        bcast,reduce,allreduce,allgather,alltoall)
#   --peers LIST         native, han, adapt (Open MPI's coll components
#                        given priority 100 for the whole job; default all
#                        three under Open MPI, native under MPICH)
#   --sizes LIST         message sizes (default 8,64K,1M,4M): the vector of
#                        Bcast, Reduce, Allreduce; for Allgather and
#                        Alltoall what each rank contributes in all (its
#                        block is SIZE / ranks, at least 8 B)
#   --reps R             repetitions per point, the median (default 3)
#   --settle N           N untimed topocoll calls before each size
#                        (topocoll_bench --settle: coll/xtune's measurement
#                        out of the timed calls; default 0)
#   --switches S         a two-level network: the hosts under S switches,
#                        joined by uplinks (scripts/cluster.sh up
#                        --switches), which topocoll reads from the
#                        cluster's topology.conf; files named ...-swS
#   --uplink RATE        the uplinks' rate (default the links')
#   --plot-only          no runs: the plots again from OUTDIR's summaries
#
# One topocoll_bench run per (rate, host count, collective, peer): the peer
# and topocoll interleaved, every result checked, medians, the link bound
# (--link: the busiest host's bytes / the rate) and the bytes on the wire.
# Each run's output goes to OUTDIR/MPI-RATE-KxP-COLL-PEER.txt (the
# command first) and .csv; OUTDIR/scale-MPI-RATE.csv gathers them (rate,
# hosts, ppn, coll, size, block as the bench counts it, peer, peer_us,
# topocoll_us, ratio, link_us, x_link, the busiest host's wire bytes, the
# peer's and topocoll's) and OUTDIR/scale-MPI-RATE-SIZE.png plots time
# against hosts, one panel per collective.  OUTDIR/calib-MPI-RATE.txt
# holds the ping-pong between two hosts.  topocoll_info --check reads the
# summary (docs/scaling.md).  Every emulated host shares this
# machine's cores (see docs/scaling.md for what that can and cannot show).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: scale_bench.sh OUTDIR [--mpi M] [--hosts LIST] [--rates LIST] [--colls LIST] [--peers LIST] [--sizes LIST] [--reps R] [--settle N]}
shift
mpi=openmpi hosts=2,4,8,16 ppn=2 rates=1gbit,100mbit colls=bcast,reduce,allreduce,allgather,alltoall
peers="" sizes=8,64K,1M,4M reps=3 settle=0 switches=1 uplink="" plot_only=0
while (($#)); do
  case $1 in
    --mpi) mpi=${2:?}; shift ;;
    --hosts) hosts=${2:?}; shift ;;
    --ppn) ppn=${2:?}; shift ;;
    --rates) rates=${2:?}; shift ;;
    --colls) colls=${2:?}; shift ;;
    --peers) peers=${2:?}; shift ;;
    --sizes) sizes=${2:?}; shift ;;
    --reps) reps=${2:?}; shift ;;
    --settle) settle=${2:?}; shift ;;
    --switches) switches=${2:?}; shift ;;
    --uplink) uplink=${2:?}; shift ;;
    --plot-only) plot_only=1; shift; continue ;;
    *) echo "scale_bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
[[ $mpi == openmpi || $mpi == mpich ]] || { echo "scale_bench.sh: --mpi openmpi|mpich" >&2; exit 2; }
[[ -n $peers ]] || { [[ $mpi == openmpi ]] && peers=native,han,adapt || peers=native; }
net=() sw=""
((switches > 1)) || [[ -z $uplink ]] || { echo "scale_bench.sh: --uplink needs --switches 2 or more" >&2; exit 2; }
((switches == 1)) || { net=(--switches "$switches" ${uplink:+--uplink "$uplink"}); sw=-sw$switches; }
build=$root/build-$mpi
((plot_only)) || [[ -x $build/topocoll_bench ]] || "$root/scripts/build.sh" "$build" "$mpi"
mkdir -p "$out"
export CLUSTER_ID=${CLUSTER_ID:-sb$$}
export CLUSTER_ID=${CLUSTER_ID:0:6}
cluster=$root/scripts/cluster.sh
trap '"$cluster" down >/dev/null 2>&1 || true' EXIT

# a size in bytes (K/M/G suffixes, binary)
bytes_of() {
  local v=${1%[KMG]} m=1
  case $1 in *K) m=1024 ;; *M) m=1048576 ;; *G) m=1073741824 ;; esac
  echo $((v * m))
}

IFS=, read -ra rate_l <<<"$rates"
IFS=, read -ra host_l <<<"$hosts"
IFS=, read -ra coll_l <<<"$colls"
IFS=, read -ra peer_l <<<"$peers"
IFS=, read -ra size_l <<<"$sizes"
for rate in "${rate_l[@]}"; do
  link=${rate%bit}
  sum=$out/scale-$mpi-$rate$sw.csv
  ((plot_only)) && host_runs=() || host_runs=("${host_l[@]}")
  if ((plot_only)) && [[ ! -f $sum ]]; then echo "scale_bench.sh: no $sum to plot" >&2; continue; fi
  if ((!plot_only)); then
    echo "rate,hosts,ppn,coll,size,block,peer,peer_us,topocoll_us,ratio,link_us,x_link,net_peer_B,net_topocoll_B" >"$sum"
    "$cluster" down >/dev/null 2>&1 || true
    "$cluster" up 2 "$rate" >/dev/null
    { echo "# scripts/cluster.sh up 2 $rate; scripts/cluster.sh calib --mpi $mpi"
      "$cluster" calib --mpi "$mpi"; } >"$out/calib-$mpi-$rate.txt" 2>&1
    grep '^pingpong' "$out/calib-$mpi-$rate.txt" | sed "s/^/  $rate: /"
  fi
  for k in "${host_runs[@]}"; do
    ((k >= switches)) || continue   # (fewer hosts than switches)
    np=$((k * ppn))
    "$cluster" down >/dev/null 2>&1 || true
    "$cluster" up "$k" "$rate" "${net[@]}" >/dev/null
    for c in "${coll_l[@]}"; do
      # the sizes as topocoll_bench counts them (a block per rank for
      # allgather and alltoall), and what each stands for
      blist=() tot=()
      for s in "${size_l[@]}"; do
        b=$(bytes_of "$s")
        tot+=("$b")
        if [[ $c == allgather || $c == alltoall ]]; then b=$((b / np)); ((b >= 8)) || b=8; fi
        # (two sizes that fall on one block: the first stands for both)
        ((${#blist[@]} == 0 || b > blist[${#blist[@]} - 1])) || { tot=("${tot[@]:0:${#tot[@]}-1}"); continue; }
        blist+=("$b")
      done
      for peer in "${peer_l[@]}"; do
        env=()
        case $peer in
          native) ;;
          han) env=(--env OMPI_MCA_coll_han_priority=100) ;;
          adapt) env=(--env OMPI_MCA_coll_adapt_priority=100) ;;
          *) echo "scale_bench.sh: unknown peer $peer" >&2; exit 2 ;;
        esac
        # under switches topocoll reads them (the cluster's topology.conf)
        ((switches == 1)) ||
          env+=(--env "TOPOCOLL_NETWORK_TOPOLOGY=${CLUSTER_STATE:-/tmp/topocoll-cluster-$CLUSTER_ID}/topology.conf")
        name=$mpi-$rate$sw-${k}x$ppn-$c-$peer
        cmd=("$cluster" run --mpi "$mpi" --hosts "${k}x$ppn" --quiet "${env[@]}" -- "$build/topocoll_bench"
             --coll "$c" --sizes "$(IFS=,; echo "${blist[*]}")" --reps "$reps" --settle "$settle"
             --link "$link" --net --csv "$out/$name.csv")
        t0=$SECONDS
        {
          echo "# scripts/cluster.sh up $k $rate ${net[*]}; $(printf '%q ' "${cmd[@]}" | sed "s|$root/||g")"
          echo "# $(date -u +%FT%TZ), $(uname -r), $(nproc) cores shared by every emulated host"
          timeout 1200 "${cmd[@]}" 2>&1 | sed '/setpgid/d' || echo "# exit status $?"
        } >"$out/$name.txt"
        # rows of the CSV in size order: bytes,native_us,topocoll_us,...
        # each CSV row to the size it stands for, by the bench's size
        awk -F, -v rate="$rate" -v k="$k" -v ppn="$ppn" -v c="$c" -v peer="$peer" -v tots="${tot[*]}" \
            -v blocks="${blist[*]}" '
          BEGIN { n = split(tots, T, " "); split(blocks, B, " "); for (i = 1; i <= n; i++) of[B[i]] = T[i] }
          NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
          ($col["bytes"] in of) { printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%.4f,%s,%.3f,%s,%s\n", rate, k, ppn, c, of[$col["bytes"]], $col["bytes"],
              peer, $col["native_us"], $col["topocoll_us"], $col["native_us"] / $col["topocoll_us"],
              $col["link_us"], ($col["link_us"] > 0 ? $col["topocoll_us"] / $col["link_us"] : 0),
              $col["net_native_B"], $col["net_topocoll_B"] }' "$out/$name.csv" >>"$sum" 2>/dev/null || true
        echo "  $name ($((SECONDS - t0)) s): $(grep -E '^ +[0-9]+ ' "$out/$name.txt" | awk '{printf "%s:%s/%s=%s ", $1, $2, $3, $4}')"
      done
    done
  done
  # time against hosts, one PNG per size, one panel per collective
  if command -v gnuplot >/dev/null; then
    cols=$((${#coll_l[@]} < 3 ? ${#coll_l[@]} : 3))
    rows=$(((${#coll_l[@]} + cols - 1) / cols))
    for s in "${size_l[@]}"; do
      b=$(bytes_of "$s")
      panels=""
      for c in "${coll_l[@]}"; do
        d=$out/.plot-$rate-$s-$c
        for peer in "${peer_l[@]}"; do
          awk -F, -v c="$c" -v b="$b" -v p="$peer" '$4 == c && $5 == b && $7 == p { print $2, $8, $9, $11 }' "$sum" >"$d-$peer.dat"
        done
        line="set title '$c'; plot"
        for peer in "${peer_l[@]}"; do
          line+=" '$d-$peer.dat' u 1:2 w lp t '$peer',"
        done
        line+=" '$d-${peer_l[0]}.dat' u 1:3 w lp lw 2 t 'topocoll', '$d-${peer_l[0]}.dat' u 1:4 w l dt 2 lc rgb 'black' t 'link bound'"
        panels+="$line"$'\n'
      done
      gnuplot <<EOF || true
set terminal pngcairo size $((cols < 2 ? 900 : 500 * cols)),$((450 * rows)) font ',10'
set output '$out/scale-$mpi-$rate$sw-$s.png'
set multiplot layout $rows,$cols title "$mpi, $s, ${ppn} ranks per host, links at $rate${sw:+, $switches switches, uplinks at ${uplink:-$rate}}: time per call (us) against hosts; $(nproc) cores shared by all hosts"
set logscale xy; set xtics (2,4,8,16,32); set xlabel 'hosts'; set ylabel 'us'; set key top left; set grid
$panels
unset multiplot
EOF
      rm -f "$out"/.plot-"$rate"-"$s"-*.dat
    done
  fi
done
echo "scale_bench.sh: results in $out"
