#!/usr/bin/env bash
# auto_sweep.sh — how far `auto` is behind the best forced algorithm on topologies written from
# scenarios/README.md as a user would (not the plan_auto_* tests' own scenarios): every kind at
# several sizes (a device pair too), every collective, 8 B .. 1 GiB in steps of x2, in and out of place, through
# `ringsim plan X.yaml --simulate` with the defaults.
# Usage: tests/bench/auto_sweep.sh [build dir] [topology name | SCENARIO.yaml ...]   (run ./ringsim build first)
# A scenario file (the calibrated machines of scenarios/machines/, say) runs with its workload's
# `collectives:` and `sizes:` lines replaced by the sweep's and `algorithm:` by auto (each on a
# line of its own there).
#
# Prints one row per topology, collective and placement: auto's worst distance from the best
# simulated algorithm and the size where it is, then how many rows are beyond issue 17's 5 %.
# It asserts nothing: the plan_auto_* tests hold what is met; this finds what is not.
set -euo pipefail
build=${1:-build}
shift || true
ringsim=$build/sim/ringsim
[[ -x $ringsim ]] || { echo "auto_sweep.sh: no $ringsim (run ./ringsim build)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

declare -A topo=(
    [pair]="{kind: ring, ranks: 2}" [ring3]="{kind: ring, ranks: 3}" [ring5]="{kind: ring, ranks: 5}" [ring6]="{kind: ring, ranks: 6}"
    [ring16]="{kind: ring, ranks: 16}" [ring32]="{kind: ring, ranks: 32}"
    [biring3]="{kind: biring, ranks: 3}" [biring4]="{kind: biring, ranks: 4}" [biring6]="{kind: biring, ranks: 6}"
    [biring12]="{kind: biring, ranks: 12}" [biring16]="{kind: biring, ranks: 16}"
    [switch4]="{kind: switch, ranks: 4}" [switch8]="{kind: switch, ranks: 8}" [switch12]="{kind: switch, ranks: 12}"
    [switch32]="{kind: switch, ranks: 32}" [mesh4]="{kind: full_mesh, ranks: 4}" [mesh6]="{kind: full_mesh, ranks: 6}"
    [torus2x4]="{kind: torus2d, dims: [2, 4]}" [torus4x8]="{kind: torus2d, dims: [4, 8]}"
    [fattree8]="{kind: fat_tree, ranks: 8, per_leaf: 4}" [fattree32]="{kind: fat_tree, ranks: 32, per_leaf: 8}"
    [server8]="{kind: server8}"
)
names=("$@")
[[ ${#names[@]} -gt 0 ]] || names=(pair ring3 ring5 ring6 ring16 ring32 biring3 biring4 biring6 biring12 biring16
                                   switch4 switch8 switch12 switch32 mesh4 mesh6 torus2x4 torus4x8 fattree8
                                   fattree32 server8)
printf '%-10s %-15s %-12s %8s %12s\n' topology collective placement "worst %" "at (B)"
beyond=0 rows=0
# One row per collective and placement of `plan --simulate`'s output for $1:
# "# allreduce, in place: auto is within 8.0 % of the best ... (worst at 8192 B)"
report() {
    local name=$1 line coll placement pct at
    while read -r line; do
        coll=${line#\# }; coll=${coll%%,*}
        placement=$([[ $line == *"out of place"* ]] && echo out_of_place || echo in_place)
        pct=$(sed -E 's/.*within ([0-9.]+) %.*/\1/' <<< "$line")
        at=$(sed -nE 's/.*worst at ([0-9]+) B.*/\1/p' <<< "$line")
        printf '%-10s %-15s %-12s %8s %12s\n' "$name" "$coll" "$placement" "$pct" "${at:--}"
        rows=$((rows + 1))
        awk -v p="$pct" 'BEGIN { exit !(p > 5.0) }' && beyond=$((beyond + 1))
    done < <(grep "auto is within" "$tmp/$name.out")
    return 0
}
for name in "${names[@]}"; do
    if [[ $name == *.yaml ]]; then
        [[ -r $name ]] || { echo "auto_sweep.sh: cannot read $name" >&2; exit 2; }
        file=$name name=$(basename "$name" .yaml)
        f=$tmp/$name.yaml
        sed -E -e 's/^( *)collectives: .*/\1collectives: [allreduce, broadcast, reduce_scatter, allgather, reduce, alltoall]/' \
            -e 's/^( *)sizes: .*/\1sizes: {begin: 8 B, end: 1 GiB, factor: 2}/' \
            -e 's/^( *)algorithm: .*/\1algorithm: auto/' "$file" > "$f"
        grep -q "factor: 2}" "$f" || { echo "auto_sweep.sh: $file has no sizes: line of its own" >&2; exit 2; }
        "$ringsim" plan "$f" --simulate > "$tmp/$name.out"
        report "$name"
        continue
    fi
    [[ -n ${topo[$name]:-} ]] || { echo "auto_sweep.sh: unknown topology $name (known: ${!topo[*]})" >&2; exit 2; }
    f=$tmp/$name.yaml
    cat > "$f" <<EOF
name: $name
topology: ${topo[$name]}
workload:
  collectives: [allreduce, broadcast, reduce_scatter, allgather, reduce, alltoall]
  sizes: {begin: 8 B, end: 1 GiB, factor: 2}
payload: none
EOF
    "$ringsim" plan "$f" --simulate > "$tmp/$name.out"
    report "$name"
done
echo "# $beyond of $rows rows beyond 5 % (issue 17: auto within 5 % of the best simulated algorithm)"
