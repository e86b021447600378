#!/usr/bin/env bash
# ring_error.sh — the raw error of `ringsim run` against REFERENCE.md's ring formulas, on scenarios
# written from scenarios/README.md's defaults (issue 17's acceptance grid), without subtracting
# any engine term.
# Usage: tests/bench/ring_error.sh [build dir] [begin end]   (bytes; default 1 MiB .. 1 GiB, x4;
#        run ./ringsim build first)
#
# For every collective (allreduce, allgather, reduce_scatter ring; broadcast chain), rank count
# p in {3, 5, 8, 12, 32}, one-way and bidirectional rings, 1 and 2 channels, out of place and in
# place, it prints the simulated time, the formula's and the error in %. The formula uses the
# defaults a scenario gets: alpha = link latency + task overhead = 1.5 us + 1 us, beta = 1 / (30 GB/s
# x 4096 / (4096 + 64)) (the payload share of each packet), gamma hidden (inline reduce at 200 GB/s
# runs as the data arrives). A bidirectional ring with 2 channels runs one channel each way, so
# the bandwidth term halves; with 1 channel it uses one direction, as a one-way ring does.
#   allreduce       2(p-1) alpha + 2 (p-1)/p n beta
#   reduce_scatter, allgather   (p-1) alpha + (p-1)/p n beta
#   chain broadcast (pipelined in k segments)   (p-2+k)(alpha + n beta / k), at the best k:
#                   (sqrt((p-2) alpha) + sqrt(n beta))^2
# It asserts nothing: it is the instrument, the numbers go to README.md and model/README.md.
set -euo pipefail
build=${1:-build}
shift || true
begin=${1:-1048576}
end=${2:-1073741824}
ringsim=$build/sim/ringsim
[[ -x $ringsim ]] || { echo "ring_error.sh: no $ringsim (run ./ringsim build)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

alpha=2.5e-6
beta=$(awk 'BEGIN { printf "%.17g", 1 / (30e9 * 4096 / 4160) }')

printf '%-15s %-7s %3s %2s %-12s %11s %12s %12s %8s\n' collective ring p ch placement size "sim (us)" "formula (us)" "error %"
for coll in allreduce allgather reduce_scatter broadcast; do
    algo=ring
    [[ $coll == broadcast ]] && algo=chain
    for kind in ring biring; do
        for p in 3 5 8 12 32; do
            for ch in 1 2; do
                f=$tmp/$coll-$kind-$p-$ch.yaml
                {
                    echo "name: $coll-$kind$p-c$ch"
                    echo "topology: {kind: $kind, ranks: $p}"
                    echo "workload:"
                    echo "  collectives: $coll"
                    echo "  algorithm: $algo"
                    echo "  channels: $ch"
                    echo "  sizes: {begin: $begin B, end: $end B, factor: 4}"
                    echo "payload: none"
                } > "$f"
                "$ringsim" run "$f" --csv "$tmp/out.csv" > /dev/null
                # the bandwidth term's share: a bidirectional ring with 2 channels splits the data
                share=1
                [[ $kind == biring && $ch == 2 ]] && share=0.5
                awk -F, -v coll="$coll" -v kind="$kind" -v p="$p" -v ch="$ch" -v a="$alpha" -v b="$beta" \
                    -v share="$share" '
                    NR > 1 {
                        size = $5; t = $11 * 1e-6
                        if (coll == "allreduce") f = 2 * (p - 1) * a + 2 * (p - 1) / p * size * b * share
                        else if (coll == "broadcast") {
                            # the best k: (sqrt((p-2) alpha) + sqrt(n beta))^2
                            f = (sqrt((p - 2) * a) + sqrt(size * share * b)) ^ 2
                        } else f = (p - 1) * a + (p - 1) / p * size * b * share
                        printf "%-15s %-7s %3d %2d %-12s %11d %12.2f %12.2f %+8.2f\n", coll, kind, p, ch, $10,
                               size, t * 1e6, f * 1e6, (t / f - 1) * 100
                    }' "$tmp/out.csv"
            done
        done
    done
done
