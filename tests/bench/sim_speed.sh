#!/usr/bin/env bash
# sim_speed.sh — how fast the model simulates: one-way rings of 256 .. 4096 NPUs (ring1024.yaml's
# work: a 1 GiB ring allreduce, one chunk per step, timing only, message fidelity; the row runs it
# out of place and in place) and a 64-server cluster's hierarchical allreduce. Per row: wall time
# (the best of REPEATS runs), events, transfers, events per transfer, peak memory, and how wall
# time and memory grow with p (exponent k of p^k against the row before).
# Usage: tests/bench/sim_speed.sh [build dir] [repeats (default 3)] [largest ring (default 4096)]
set -euo pipefail
build=${1:-build}
repeats=${2:-3}
largest=${3:-4096}
bin=$build/sim/ringsim
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

ring() { # ring P: ring1024.yaml on P NPUs
    sed -e "s/ranks: 1024/ranks: $1/" -e "s/^name: ring1024/name: ring$1/" "$root/scenarios/ring1024.yaml" >"$out/ring$1.yaml"
    echo "$out/ring$1.yaml"
}

cluster64() { # 64 servers x 8 NPUs, cluster4x8.yaml's links, one 1 GiB hierarchical allreduce
    cat >"$out/cluster64x8.yaml" <<'EOF'
name: cluster64x8
description: 64 servers x 8 NPUs, hierarchical allreduce of 1 GiB, timing only (speed benchmark).
topology:
  kind: cluster
  servers: 64
  link: {bandwidth: 30 GB/s, latency: 1.5 us, packet: 4 KiB, header: 64 B, buffer: 256 KiB}
  nic: {bandwidth: 100 Gb/s, latency: 2 us, packet: 4 KiB, header: 64 B, buffer: 256 KiB}
  switch: {latency: 500 ns, buffer: 4 MiB}
workload:
  collectives: allreduce
  algorithm: hier
  dtype: float
  sizes: {begin: 1 GiB, end: 1 GiB}
payload: none
fidelity: message
EOF
    echo "$out/cluster64x8.yaml"
}

# run SCENARIO: "wall events transfers peak_mib" of the fastest of $repeats runs
run() {
    local best="" line
    for ((k = 0; k < repeats; k++)); do
        # (stderr has progress lines on large runs: shown only if the run fails)
        line=$("$bin" run "$1" --stats 2>"$out/stderr" | grep '^# stats:') ||
            { cat "$out/stderr" >&2; echo "sim_speed: $1 failed" >&2; exit 1; }
        # "# stats: E events in W s wall (...), T transfers (...), S s simulated, peak memory M MiB"
        line=$(echo "$line" | sed -E 's/^# stats: ([0-9]+) events in ([0-9.]+) s wall .*\), ([0-9]+) transfers .*peak memory ([0-9.]+) MiB$/\2 \1 \3 \4/')
        if [[ -z $best ]] || awk -v a="${line%% *}" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then
            best=$line
        fi
    done
    echo "$best"
}

[[ -x $bin ]] || { echo "sim_speed: no $bin (run ./ringsim build first)" >&2; exit 1; }
echo "# ringsim model speed, $(date -u +%Y-%m-%d), $(nproc) cores, best of $repeats runs (wall), commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')"
printf '# %-12s %7s %9s %12s %12s %8s %9s %8s %8s\n' scenario NPUs wall_s events transfers ev/xfer peak_MiB k_wall k_mem
prev_p="" prev_w="" prev_m=""
for p in 256 1024 2048 4096; do
    ((p <= largest)) || continue
    read -r w e t m < <(run "$(ring "$p")")
    kw=- km=-
    if [[ -n $prev_p ]]; then
        kw=$(awk -v a="$w" -v b="$prev_w" -v p="$p" -v q="$prev_p" 'BEGIN { printf "%.2f", log(a / b) / log(p / q) }')
        km=$(awk -v a="$m" -v b="$prev_m" -v p="$p" -v q="$prev_p" 'BEGIN { printf "%.2f", log(a / b) / log(p / q) }')
    fi
    printf '  %-12s %7d %9.3f %12d %12d %8.2f %9.1f %8s %8s\n' "ring$p" "$p" "$w" "$e" "$t" \
        "$(awk -v e="$e" -v t="$t" 'BEGIN { print e / t }')" "$m" "$kw" "$km"
    prev_p=$p prev_w=$w prev_m=$m
done
read -r w e t m < <(run "$(cluster64)")
printf '  %-12s %7d %9.3f %12d %12d %8.2f %9.1f %8s %8s\n' cluster64x8 512 "$w" "$e" "$t" \
    "$(awk -v e="$e" -v t="$t" 'BEGIN { print e / t }')" "$m" - -
