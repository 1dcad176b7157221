#!/usr/bin/env bash
# check_config_doc.sh [--update] TOPOCOLL_INFO DOC: the parameters' table in
# DOC (docs/tuning.md), between the lines
#   <!-- BEGIN topocoll_info --config -->  and  <!-- END topocoll_info --config -->
# must be exactly what `TOPOCOLL_INFO --config --markdown` prints (blank
# lines inside the block are ignored).  The program runs with no TOPOCOLL_*
# variable set, so the table does not depend on the caller's environment.
# --update rewrites the block in DOC from the program's output instead.
# Exit status 0 when they match (or DOC was updated), 1 when they differ,
# 2 on a usage error or a missing file.
set -uo pipefail
update=0
if [ "${1:-}" = --update ]; then update=1; shift; fi
[ $# -eq 2 ] || { echo "usage: check_config_doc.sh [--update] TOPOCOLL_INFO DOC" >&2; exit 2; }
info=$1 doc=$2
begin='<!-- BEGIN topocoll_info --config -->'
end='<!-- END topocoll_info --config -->'
[ -x "$info" ] || { echo "check_config_doc: $info: not an executable" >&2; exit 2; }
[ -f "$doc" ] || { echo "check_config_doc: $doc: no such file" >&2; exit 2; }
nb=$(grep -cxF -- "$begin" "$doc") ne=$(grep -cxF -- "$end" "$doc")
if [ "$nb" != 1 ] || [ "$ne" != 1 ]; then
  echo "check_config_doc: $doc must hold one line '$begin' and one '$end' (has $nb and $ne)" >&2
  exit 2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/check_config_doc.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
# The program, without the caller's TOPOCOLL_* variables
unset $(env | sed -n 's/^\(TOPOCOLL_[A-Za-z0-9_]*\)=.*/\1/p')
"$info" --config --markdown >"$tmp/tool" 2>"$tmp/err" || {
  echo "check_config_doc: $info --config --markdown failed:" >&2; cat "$tmp/err" >&2; exit 2; }
[ -s "$tmp/tool" ] || { echo "check_config_doc: $info --config --markdown printed nothing" >&2; exit 2; }

if [ $update = 1 ]; then
  awk -v b="$begin" -v e="$end" -v t="$tmp/tool" '
    $0 == b { print; while ((getline l < t) > 0) print l; skip = 1; next }
    $0 == e { skip = 0 }
    !skip' "$doc" >"$tmp/new" && cat "$tmp/new" >"$doc"
  echo "check_config_doc: $doc updated from $info --config --markdown"
  exit 0
fi

awk -v b="$begin" -v e="$end" '$0 == e { inb = 0 } inb && NF { print } $0 == b { inb = 1 }' "$doc" \
  | sed 's/[[:space:]]*$//' >"$tmp/doc"
sed 's/[[:space:]]*$//' "$tmp/tool" | grep -v '^$' >"$tmp/toolc"
if diff -u --label "$doc (between the markers)" --label "$info --config --markdown" "$tmp/doc" "$tmp/toolc"; then
  echo "check_config_doc: $doc matches $info --config --markdown ($(($(wc -l <"$tmp/toolc") - 2)) parameters)"
  exit 0
fi
echo "check_config_doc: $doc differs from the parameter table (src/base/config.c); fix the table's text there," >&2
echo "  or regenerate the block: tests/check_config_doc.sh --update $info $doc" >&2
exit 1
