#!/usr/bin/env bash
# layers.sh ROOT [OBJDIR]: the layering rule "each layer calls only the ones
# below it", as the README's layer diagram draws it (top layer first), holds
# in ROOT/src:
#  - no file of a layer includes a header of a layer above it;
#  - only the bindings (api/, pmpi/) include the public header topocoll.h
#    (the layers below return topocoll's internal status, base/status.h);
#  - with OBJDIR (the library's object files, src/LAYER/FILE.c.o below it):
#    no object of a layer references a symbol defined by a layer above it
#    (a call without an include, through a local extern declaration).
# Prints one line per violation and "layers: ok" when there is none.
set -uo pipefail
root=${1:?usage: layers.sh ROOT [OBJDIR]}
objdir=${2:-}
# The diagram: the fenced block whose lines start with " name/ ".
mapfile -t order < <(awk '/^```/ { inblk = !inblk; next }
                          inblk && /^ [a-z]+\/ / { sub(/^ /, ""); sub(/\/.*/, ""); print }' \
                         "$root/README.md")
if (( ${#order[@]} < 3 )); then echo "layers: no layer diagram in $root/README.md"; exit 1; fi
declare -A rank
n=${#order[@]}
for i in "${!order[@]}"; do rank[${order[$i]}]=$((n - i)); done   # bottom layer: 1
bad=0
for d in "$root"/src/*/; do
  l=$(basename "$d")
  [[ -n ${rank[$l]:-} ]] || { echo "layers: src/$l/ is not in the README's diagram"; bad=1; }
done
for f in "$root"/src/*/*.[ch]; do
  l=$(basename "$(dirname "$f")")
  r=${rank[$l]:-0}
  while IFS=: read -r line inc; do
    up=${inc#*\"../}; up=${up%%/*}
    if [[ $inc == *'"topocoll.h"'* ]]; then
      [[ $l == api || $l == pmpi ]] && continue
      echo "layers: ${f#"$root"/}:$line: $l/ includes the public topocoll.h (bindings only)"; bad=1
    elif [[ $inc == *'"../'* ]]; then
      if [[ -z ${rank[$up]:-} ]]; then
        echo "layers: ${f#"$root"/}:$line: includes from src/$up/, not a layer"; bad=1
      elif (( rank[$up] > r )); then
        h=${inc#*\"../}; h=${h%%\"*}
        echo "layers: ${f#"$root"/}:$line: $l/ includes $h, from $up/, a layer above"; bad=1
      fi
    fi
  done < <(grep -n '^[[:space:]]*#[[:space:]]*include' "$f")
done
if [[ -n $objdir ]]; then
  declare -A def
  mapfile -t objs < <(find "$objdir" -path '*/src/*/*.c.o' | sort)
  (( ${#objs[@]} )) || { echo "layers: no objects under $objdir"; exit 1; }
  for o in "${objs[@]}"; do
    l=$(basename "$(dirname "$o")")
    while read -r _ sym; do def[$sym]=$l; done < <(nm --defined-only "$o" | awk '$2 ~ /^[TDBR]$/ { print $2, $3 }')
  done
  for o in "${objs[@]}"; do
    l=$(basename "$(dirname "$o")")
    for sym in $(nm -u "$o" | awk '{ print $2 }'); do
      dl=${def[$sym]:-}
      [[ -n $dl && $dl != "$l" ]] || continue
      if (( ${rank[$dl]:-0} > ${rank[$l]:-0} )); then
        echo "layers: $l/$(basename "$o" .o) calls $sym, defined in $dl/, a layer above"; bad=1
      fi
    done
  done
fi
(( bad )) && exit 1
echo "layers: ok (${order[*]})"
