#!/usr/bin/env bash
# plot.sh: topocoll_bench --csv output as PNG plots (gnuplot).
#
#   scripts/plot.sh OUT.png CSV [CSV...] [--title T] [--ratio] [--host TEXT]
#
# One panel per CSV (scripts/main.sh writes one per collective:
# build/bench_<coll>_np<N>.csv): latency per call (us) against the message
# size (bytes, log-log), native MPI and topocoll, with the reference line:
# the link bound (link_us, --link) when the CSV has one, otherwise the
# memory-traffic reference (ref_all_us: the bytes each process must move at
# the memcpy bandwidth of the whole host copying at once); Allgather's copy
# floors (mapped_us, cma_us, --mech) when present.  A Barrier CSV (one row,
# 0 bytes) gets a bar panel.
#   --ratio   OUT.png shows native/topocoll against the size instead, one
#             line per CSV (above 1: topocoll is faster)
#   --title T the plot's title (np, nodes and the host are added)
#   --host T  the host's description (default: "<nproc>-core host", this
#             machine's core count)
# Columns are found by name in the header, so the CSVs of older
# topocoll_bench versions (ending at cma_us) plot as well.
set -euo pipefail

usage() { echo "usage: scripts/plot.sh OUT.png CSV [CSV...] [--title T] [--ratio] [--host TEXT]" >&2; exit 2; }
command -v gnuplot >/dev/null 2>&1 || { echo "plot.sh: gnuplot not found (apt-get install gnuplot-nox)" >&2; exit 1; }

out="" title="topocoll vs native MPI" ratio=0 host="$(nproc)-core host"
csvs=()
while (($#)); do
  case $1 in
    --title) (($# >= 2)) || usage; title=$2; shift 2 ;;
    --host) (($# >= 2)) || usage; host=$2; shift 2 ;;
    --ratio) ratio=1; shift ;;
    -h|--help) usage ;;
    -*) echo "plot.sh: unknown option $1" >&2; usage ;;
    *) if [ -z "$out" ]; then out=$1; else csvs+=("$1"); fi; shift ;;
  esac
done
if [ -z "$out" ] || ((${#csvs[@]} == 0)); then usage; fi
case $out in *.png) ;; *) echo "plot.sh: $out: the output must be a .png" >&2; exit 2 ;; esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Each CSV -> $tmp/dI (bytes native topocoll ratio ref link mapped cma;
# "?" where missing) and one line of $tmp/meta:
#   I coll np nodes rows haslink hasmapped hascma minbytes maxbytes
i=0
for f in "${csvs[@]}"; do
  [ -r "$f" ] || { echo "plot.sh: cannot read $f" >&2; exit 1; }
  awk -F, -v idx="$i" -v file="$f" -v data="$tmp/d$i" '
    function col(name) { return (name in h) ? $(h[name]) : "" }
    function num(v) { return v == "" ? "?" : v }
    NR == 1 {
      sub(/\r$/, "")
      for (k = 1; k <= NF; k++) h[$k] = k
      if ("impl" in h) { print "plot.sh: " file ": an --overlap CSV (not a latency table)" > "/dev/stderr"; bad = 1; exit }
      split("coll np nodes bytes native_us topocoll_us", need, " ")
      for (k in need) if (!(need[k] in h)) {
        print "plot.sh: " file ": no column " need[k] " in the header" > "/dev/stderr"; bad = 1; exit
      }
      next
    }
    {
      sub(/\r$/, "")
      if ($0 == "") next
      b = col("bytes") + 0; n = col("native_us"); t = col("topocoll_us")
      r = col("ratio"); if (r == "" && t + 0 > 0) r = n / t
      l = col("link_us"); if (l + 0 > 0) haslink = 1; else l = ""   # 0: one host, no link to bound
      m = col("mapped_us"); if (m != "") hasm = 1
      c = col("cma_us"); if (c != "") hasc = 1
      print b, num(n), num(t), num(r), num(col("ref_all_us")), num(l), num(m), num(c) > data
      if (!rows++) { coll = col("coll"); np = col("np"); nodes = col("nodes"); lo = hi = b }
      if (b < lo) lo = b
      if (b > hi) hi = b
    }
    END {
      if (bad) exit 1
      if (!rows) { print "plot.sh: " file ": no data rows" > "/dev/stderr"; exit 1 }
      print idx, coll, np, nodes, rows, haslink + 0, hasm + 0, hasc + 0, lo, hi
    }' "$f" >>"$tmp/meta"
  i=$((i + 1))
done
n=$i

# x tics for sizes LO..HI: the powers of two, labelled 4K, 1M... (at most
# ~8 labels, the other tics unlabelled)
tics() {
  awk -v lo="$1" -v hi="$2" '
    function lab(v) { return v >= 1048576 ? v / 1048576 "M" : v >= 1024 ? v / 1024 "K" : v }
    BEGIN {
      if (lo < 1) lo = 1
      p = 1; while (p * 2 <= lo) p *= 2
      cnt = 0; for (q = p; q <= hi * 1.0001; q *= 2) cnt++
      step = cnt > 14 ? 4 : cnt > 8 ? 2 : 1
      s = ""; k = 0
      for (q = p; q <= hi * 1.0001; q *= 2) {
        s = s (s == "" ? "" : ", ") (k % step ? "\"\" " q " 1" : "\"" lab(q) "\" " q)
        k++
      }
      print (s == "" ? "\"1\" 1" : s)
    }'
}
read -r glo ghi < <(awk '$10 > 0 { if (lo == "" || $9 < lo) lo = $9; if ($10 > hi) hi = $10 }
                         END { print (lo == "" ? 1 : lo), (hi == "" ? 1 : hi) }' "$tmp/meta")

# the title: np and nodes when every CSV has the same, and the host
read -r np0 nodes0 < <(awk 'NR == 1 { np = $3; nd = $4 } $3 != np { np = "" } $4 != nd { nd = "" }
                            END { print (np == "" ? "-" : np), (nd == "" ? "-" : nd) }' "$tmp/meta")
plural() { [ "$1" = 1 ] && echo "$1 $2" || echo "$1 $2s"; }
if [ "$np0" != - ] && [ "$nodes0" != - ]; then
  full_title="$title: np=$np0 on $(plural "$nodes0" node), $host"
else
  full_title="$title ($host)"
fi
esc() { printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g'; }

gp=$tmp/plot.gp
{
  echo 'set datafile missing "?"'
  echo 'set encoding utf8'
  echo 'set grid xtics ytics mytics lc rgb "#dddddd"'
  echo 'set key bottom right Left reverse box opaque font ",9" spacing 1.1'
  echo 'set style line 1 lc rgb "#1f77b4" lw 2 pt 7 ps 0.8'    # native
  echo 'set style line 2 lc rgb "#d62728" lw 2 pt 5 ps 0.8'    # topocoll
  echo 'set style line 3 lc rgb "#555555" lw 1.5 dt 2'         # reference
  echo 'set style line 4 lc rgb "#2ca02c" lw 1.5 dt 4 pt 2 ps 0.7'   # mapped
  echo 'set style line 5 lc rgb "#9467bd" lw 1.5 dt 4 pt 3 ps 0.7'   # cma
  echo 'set logscale x 2'
  echo 'set xlabel "message size (bytes)"'
} >"$gp"

if ((ratio)); then
  {
    echo "set terminal pngcairo size 1000,620 enhanced font \"DejaVu Sans,11\""
    echo "set output \"$(esc "$out")\""
    echo "set title \"$(esc "$full_title")\\nnative / topocoll latency (above 1: topocoll faster)\" font \",12\" noenhanced"
    echo 'set ylabel "speed-up of topocoll (native\\_us / topocoll\\_us)"'
    echo 'set logscale y 2'
    # the line at 1 always inside, the extremes off the frame
    yr=$(cat "$tmp"/d* | awk '$1 > 0 && $4 != "?" && $4 > 0 { if (lo == "" || $4 < lo) lo = $4; if ($4 > hi) hi = $4 }
                             END { lo = lo == "" ? 1 : lo / 1.2; hi = hi == "" ? 1 : hi * 1.2
                                   printf "%g:%g", (lo < 0.7 ? lo : 0.7), (hi < 1.5 ? 1.5 : hi) }')
    echo "set yrange [$yr]"
    echo "set xrange [$glo/1.25:$ghi*1.25]"
    echo "set xtics ($(tics "$glo" "$ghi"))"
    echo 'set key top right'
    printf 'plot 1 with lines lc rgb "black" lw 1 dt 2 title "1: same latency"'
    colors=("#1f77b4" "#d62728" "#2ca02c" "#9467bd" "#ff7f0e" "#8c564b" "#e377c2" "#17becf")
    k=0
    while read -r idx coll np nodes _; do
      [ "$(awk '$1 > 0 { print 1; exit }' "$tmp/d$idx")" = 1 ] || continue   # barrier: no sizes
      lbl="$coll"
      [ "$np0" = - ] || [ "$nodes0" = - ] && lbl="$coll (np=$np, $(plural "$nodes" node))"
      printf ', \\\n  "%s" using 1:4 with linespoints lw 2 pt %d ps 0.8 lc rgb "%s" title "%s"' \
        "$tmp/d$idx" $((k % 6 + 4)) "${colors[k % 8]}" "$(esc "$lbl")"
      k=$((k + 1))
    done <"$tmp/meta"
    echo
  } >>"$gp"
  ((k)) || { echo "plot.sh: --ratio: no CSV with message sizes (only barrier)" >&2; exit 1; }
else
  cols=$((n < 2 ? n : 2)) rows=$(((n + 1) / 2))
  h=$((rows * 470 + 50))
  {
    echo "set terminal pngcairo size $((cols * 720)),$h enhanced font \"DejaVu Sans,11\""
    echo "set output \"$(esc "$out")\""
    echo "set multiplot layout $rows,$cols title \"$(esc "$full_title")\" font \",13\" noenhanced"
    while read -r idx coll np nodes _ haslink hasm hasc lo hi; do
      sub="np=$np, $(plural "$nodes" node)"
      if [ "$hi" = 0 ]; then   # barrier: one latency, no sizes
        echo 'unset logscale'
        echo 'set xtics ("native MPI" 0, "topocoll" 1)'
        echo 'unset xlabel'
        echo 'set ylabel "latency per call (µs)"'
        echo 'set xrange [-0.6:1.6]'
        echo 'set yrange [0:*]'
        echo 'set style fill solid 0.7 border -1'
        echo 'set boxwidth 0.5'
        echo 'set key off'
        echo "set title \"$coll ($sub)\""
        echo "plot \"$tmp/d$idx\" using (0):2 with boxes ls 1 notitle, '' using (1):3 with boxes ls 2 notitle, \\"
        echo "     '' using (0):2:(sprintf(\"%.1f µs\", \$2)) with labels offset 0,1 notitle, \\"
        echo "     '' using (1):3:(sprintf(\"%.1f µs\", \$3)) with labels offset 0,1 notitle"
        echo 'set xrange [*:*]; set yrange [*:*]; set style fill empty; set key on'
        echo 'set logscale x 2'
        echo 'set xlabel "message size (bytes)"'
        continue
      fi
      xl="message size (bytes)"
      [ "$coll" = allgather ] && xl="message size (bytes per rank's block)"
      [ "$coll" = reduce ] || [ "$coll" = allreduce ] && xl="message size (bytes of MPI\\\\_DOUBLE, MPI\\\\_SUM)"
      echo "set xlabel \"$xl\""
      echo 'set logscale xy'
      echo 'set logscale x 2'
      echo 'set ylabel "latency per call (µs)"'
      echo "set xrange [$lo/1.25:$hi*1.25]"
      echo "set xtics ($(tics "$lo" "$hi"))"
      echo "set title \"$coll ($sub)\""
      printf 'plot "%s" using 1:2 with linespoints ls 1 title "native MPI", \\\n' "$tmp/d$idx"
      printf '     "" using 1:3 with linespoints ls 2 title "topocoll"' 
      if [ "$haslink" = 1 ]; then
        printf ', \\\n     "" using 1:6 with lines ls 3 title "link bound (link\\\\_us)"'
      else
        printf ', \\\n     "" using 1:5 with lines ls 3 title "memory-traffic reference (ref\\\\_all\\\\_us)"'
      fi
      [ "$hasm" = 1 ] && printf ', \\\n     "" using 1:7 with linespoints ls 4 title "floor: peers mapped (mapped\\\\_us)"'
      [ "$hasc" = 1 ] && printf ', \\\n     "" using 1:8 with linespoints ls 5 title "floor: CMA reads (cma\\\\_us)"'
      echo
      echo 'unset logscale y'
    done <"$tmp/meta"
    echo 'unset multiplot'
  } >>"$gp"
fi

gnuplot "$gp" 2> "$tmp/gnuplot.err" || { cat "$tmp/gnuplot.err" >&2; echo "plot.sh: gnuplot failed" >&2; exit 1; }
# gnuplot warns (not fails) on e.g. an empty range: show it
grep -v '^$' "$tmp/gnuplot.err" >&2 || true
echo "plot.sh: wrote $out"
