#!/usr/bin/env bash
# check_layers.sh — the arrows between the top-level folders and between sim/'s wings point only downward.
#
#   check_layers.sh ROOT
#
# Reads every #include "dir/..." in the C and C++ sources and fails, naming file, line and the
# include, when a folder reaches one it may not: firmware/ nothing of ours above it; model/ and
# dp/ not sim/; inside sim/ each wing only the wings below it (sim/README.md draws them).
set -euo pipefail
root=$1
cd "$root"

declare -A allowed=(
    [sweep]=""
    [scenario]="sweep"
    [report]="sweep"
    [grid]="sweep scenario report"
    [measured]=""
    [host]="sweep report"
    [chakra]=""
    [harness]="sweep scenario report chakra"
    [zmq]="sweep scenario report"
    [calib]="sweep scenario report harness measured"
    [cli]="sweep scenario report host harness zmq measured calib grid chakra"
)
wings="${!allowed[*]}"
bad=0
complain() { echo "check_layers: $1: $2" >&2; bad=1; }

sources() { find "$@" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cpp' -o -name '*.hpp' \) | sort; }

# sim/: "wing/file.h" includes, each against the including wing's allowed set.
while IFS= read -r f; do
    wing=${f#sim/}
    wing=${wing%%/*}
    [[ -n ${allowed[$wing]+x} ]] || { complain "$f" "not inside a wing of sim/ ($wings)"; continue; }
    while IFS=: read -r line target; do
        to=${target%%/*}
        [[ " $wings " == *" $to "* ]] || continue
        if [[ $to != "$wing" && " ${allowed[$wing]} " != *" $to "* ]]; then
            complain "$f:$line" "the $wing wing includes \"$target\": $wing may use only: ${allowed[$wing]:-nothing in sim/}"
        fi
    done < <(grep -n -o '#include "[a-z_]*/[^"]*"' "$f" | sed 's/#include "//; s/"$//')
done < <(sources sim)

# The folders below sim/ never reach up into it (nor firmware into the model or dp).
check_folder() {
    local folder=$1 forbidden=$2
    while IFS= read -r f; do
        while IFS=: read -r line target; do
            to=${target%%/*}
            if [[ " $forbidden " == *" $to "* || " $wings " == *" $to "* ]]; then
                complain "$f:$line" "includes \"$target\": $folder/ may not depend on ${to}"
            fi
        done < <(grep -n -o '#include "[a-z_]*/[^"]*"' "$f" | sed 's/#include "//; s/"$//')
    done < <(sources "$folder")
}
check_folder firmware "model dp sim"
check_folder model "dp sim"
check_folder dp "model sim"

if [[ $bad == 0 ]]; then
    echo "check_layers: every include points downward"
fi
exit $bad
