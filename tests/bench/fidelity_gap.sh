#!/usr/bin/env bash
# fidelity_gap.sh — message against packet fidelity on scenario files: each scenario runs twice
# through `ringsim compare`, once as written with `fidelity: message` and once with `fidelity:
# packet` (timing only), and every row's ratio packet / message is printed; rows off by more
# than 2 % are marked. Issue 17's agreement check over the shipped and the test scenarios.
# Usage: tests/bench/fidelity_gap.sh [build dir] [SCENARIO...]
#        (default: scenarios/*.yaml and tests/sim/cli/scenarios/*.yaml; run ./ringsim build first)
# Skipped: RTL devices (their own fidelity), training what-ifs (not a sweep), files `validate`
# refuses (the fixtures of error tests). It asserts nothing: it is the instrument (the test is
# fidelity_agree).
set -euo pipefail
build=${1:-build}
shift || true
ringsim=$build/sim/ringsim
[[ -x $ringsim ]] || { echo "fidelity_gap.sh: no $ringsim (run ./ringsim build)" >&2; exit 2; }
here=$(cd "$(dirname "$0")/../.." && pwd)
files=("$@")
[[ ${#files[@]} -gt 0 ]] || files=("$here"/scenarios/*.yaml "$here"/tests/sim/cli/scenarios/*.yaml)
made=()
trap 'rm -f "${made[@]}"' EXIT

for f in "${files[@]}"; do
    name=${f#"$here"/}
    if grep -qE '^ *fidelity: *rtl|^ *training:' "$f" || ! "$ringsim" validate "$f" > /dev/null 2>&1; then
        echo "# $name: skipped (RTL, training or invalid)"
        continue
    fi
    # the same file at each fidelity (a top-level key: replace it or add it), timing only, beside
    # the original so that paths inside it (schedules, models) resolve the same
    for fid in message packet; do
        v=$(dirname "$f")/.fidelity_gap_$fid.yaml
        made+=("$v")
        { sed -E -e '/^fidelity:/d' -e '/^payload:/d' "$f"; echo "payload: none"; echo "fidelity: $fid"; } > "$v"
    done
    if ! out=$("$ringsim" compare "$(dirname "$f")/.fidelity_gap_message.yaml" \
                  "$(dirname "$f")/.fidelity_gap_packet.yaml" 2>&1); then
        echo "# $name: compare failed: $(echo "$out" | tail -1)"
        continue
    fi
    echo "$out" | awk -v name="$name" '
        /^ +[a-z_]+ +[0-9]+ / && NF >= 7 {
            r = $NF; off = (r < 0.98 || r > 1.02) ? "  <<" : ""
            d = (r > 1 ? r - 1 : 1 - r) * 100
            if (d > worst) { worst = d; where = $1 " " $2 }
            printf "%-44s %-15s %11s %12s %12s %7.3f%s\n", name, $1, $2, $3, $4, r, off
        }
        END { printf "# %s: worst %.2f %% (%s)\n", name, worst, where }'
done
