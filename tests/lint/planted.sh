#!/usr/bin/env bash
# planted.sh ROOT: the checkers of tests/lint catch what they are for.  On a
# copy of ROOT's sources with one violation planted each, they must fail
# and name it:
#  - layers.sh: xfer/region.c including api/api_int.h (an upward include);
#  - style.sh: a 101-column line in src/, a 71-line function in src/ and
#    one in tools/bench/ (the bench's sources).
set -uo pipefail
root=${1:?usage: planted.sh ROOT}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
copy() { rm -rf "$tmp/t"; mkdir -p "$tmp/t"; cp -r "$root/README.md" "$root/src" "$root/include" "$root/tools" "$tmp/t/"; }
bad=0
copy
sed -i '0,/#include/s|#include|#include "../api/api_int.h"\n#include|' "$tmp/t/src/xfer/region.c"
out=$(bash "$root/tests/lint/layers.sh" "$tmp/t")
if [[ $? -ne 0 && $out == *"xfer/ includes api/api_int.h"* ]]; then echo "planted: layers.sh caught: $(grep api_int <<<"$out")"
else echo "planted: layers.sh missed an upward include: $out"; bad=1; fi
copy
printf '/* %095d */\n' 0 >> "$tmp/t/src/base/sync.h"
plant_fn() { # NAME FILE: a 71-line function NAME at the end of FILE
  { echo "int $1(void);"; echo "int $1(void)"; echo '{'; echo '    int x = 0;'
    for _ in $(seq 69); do echo '    x++;'; done; echo '    return x;'; echo '}'; } >> "$2"; }
plant_fn tc_planted "$tmp/t/src/base/config.c"
plant_fn bench_planted "$tmp/t/tools/bench/main.c"
out=$(STYLE_FORMAT=0 bash "$root/tests/lint/style.sh" "$tmp/t")
if [[ $out == *"sync.h"*"101 columns"* && $out == *"tc_planted"*"71 lines"* && $out == *"bench_planted"*"71 lines"* ]]
then echo "planted: style.sh caught:"; grep -E "sync.h|tc_planted|bench_planted" <<<"$out"
else echo "planted: style.sh missed a long line or function: $out"; bad=1; fi
(( bad )) && exit 1
echo "planted: all caught"
