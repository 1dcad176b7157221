#!/usr/bin/env bash
# style.sh ROOT: the C style the repository's .clang-format describes holds:
#  - no line of src/, include/, tools/ or tools/bench/ is over 100 columns;
#  - no function of src/, tools/ or tools/bench/ is over 70 lines (body,
#    from its opening brace in column 0 to its closing one);
#  - with clang-format on the machine: every C file of src/, include/,
#    tools/ (tools/bench/ too), tests/, apps/ and examples/ is as
#    clang-format leaves it.
# One line per violation; "style: ok" when there is none.
set -uo pipefail
root=${1:?usage: style.sh ROOT}
cd "$root" || exit 1
bad=0
long=$(awk 'length > 100 { printf "style: %s:%d: %d columns (limit 100)\n", FILENAME, FNR, length }' \
           src/*/*.[ch] include/*.h tools/*.c tools/bench/*.[ch])
[[ -z $long ]] || { echo "$long"; bad=1; }
funcs=$(awk '/^\{/ { start = FNR; name = prev }
             /^\}/ && start { n = FNR - start - 1
                              if (n > 70) printf "style: %s:%d: %s: %d lines (limit 70)\n", FILENAME, start, name, n
                              start = 0 }
             !/^\{/ { prev = $0 }' src/*/*.c tools/*.c tools/bench/*.c)
[[ -z $funcs ]] || { echo "$funcs"; bad=1; }
cf=$(command -v clang-format || true)
[[ ${STYLE_FORMAT:-1} == 0 ]] && cf=skip
if [[ $cf == skip ]]; then
  :   # STYLE_FORMAT=0: formatting not checked
elif [[ -n $cf ]]; then
  for f in src/*/*.[ch] include/*.h tools/*.c tools/bench/*.[ch] tests/*.c tests/robust/*.c apps/*/*.c examples/*.c; do
    [[ -f $f ]] || continue
    "$cf" --dry-run -Werror "$f" >/dev/null 2>&1 || { echo "style: $f: not as clang-format leaves it"; bad=1; }
  done
else
  echo "style: clang-format not found: formatting not checked"
fi
(( bad )) && exit 1
echo "style: ok"
