#!/usr/bin/env bash
# golden.sh — runs one case of cases.list and diffs its normalised output against expected/NAME.txt.
#
#   golden.sh RINGSIM ROOT NAME          compare (exit 1 with a unified diff on a difference)
#   RINGSIM_GOLDEN_UPDATE=1 golden.sh …  write expected/NAME.txt from this run instead
#
# A case runs `ringsim ARGS` from the repository root (so paths read as a user types them) and
# records its exit status, stdout, stderr and every file it wrote into @OUT@. The repository and
# output paths become $ROOT and $OUT, --stats' wall time and peak memory #.#; with the flag
# `mask`, wall-clock figures (every decimal number) become #.# so that host and zmq runs compare.
set -euo pipefail
ringsim=$1 root=$2 name=$3
here=$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")
line=$(grep -E "^$name[[:space:]]" "$here/cases.list") || { echo "golden: no case '$name' in cases.list" >&2; exit 2; }
read -r _ flags rest <<<"$line"
[[ $flags == -- ]] && flags='' || rest=${rest#-- }
out=$(mktemp -d "${TMPDIR:-/tmp}/golden-$name.XXXXXX")
trap 'rm -rf -- "$out"' EXIT
eval "args=(${rest//@OUT@/$out})"

cd "$root"
set +e
SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 "$ringsim" "${args[@]}" >"$out/.stdout" 2>"$out/.stderr" </dev/null
status=$?
set -e
{
    echo "\$ ringsim $rest"
    echo "# exit $status"
    echo "# stdout"; cat "$out/.stdout"
    echo "# stderr"; cat "$out/.stderr"
    for f in "$out"/*; do
        [[ -f $f ]] || continue
        echo "# file @OUT@/${f##*/}"; cat "$f"; echo
    done
} | sed -E -e "s#$out#\$OUT#g" -e "s#$root#\$ROOT#g" \
    -e 's/ in [0-9.]+ s wall \([0-9.e+]+ events\/s\)/ in #.# s wall (#.# events\/s)/' \
    -e 's/peak memory [0-9.]+ MiB/peak memory #.# MiB/' >"$out/.actual"
if [[ " $flags " == *" mask "* ]]; then
    sed -i -E -e '3,$ s/("[a-z_]*(time|bw|gbps)[a-z_]*":[[:space:]]*)[-+0-9.e]+/\1#.#/g' \
        -e '3,$ s/ *[0-9]+\.[0-9]+(e[-+]?[0-9]+)?/ #.#/g' "$out/.actual"
fi

expected=$here/expected/$name.txt
if [[ ${RINGSIM_GOLDEN_UPDATE:-0} == 1 ]]; then
    cp "$out/.actual" "$expected"
    echo "golden: wrote $expected"
    exit 0
fi
if [[ ! -f $expected ]]; then
    echo "golden: $expected is missing (RINGSIM_GOLDEN_UPDATE=1 ctest -L golden writes it)" >&2
    exit 1
fi
if ! diff -u --label "expected/$name.txt" --label "this run" "$expected" "$out/.actual"; then
    echo "golden: '$name' differs from its reference (above). If the change is intended," \
         "RINGSIM_GOLDEN_UPDATE=1 ctest --test-dir build -R golden_$name rewrites it." >&2
    exit 1
fi
