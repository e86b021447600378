#!/usr/bin/env bash
# chakra_groups_check.sh — Chakra traces with process groups and point-to-point nodes (traces/,
# make_traces.py) on the 8-NPU server: two groups on the server's two meshes allreduce at once as
# fast as one alone, the world's allreduce after them takes what the native workload's does (the
# groups given by a comm group file or declared in the trace), each stage of a send/recv pipeline
# waits for its predecessor's 1 MiB to cross one link, and host ops run beside the NPU's.
# Usage: chakra_groups_check.sh RINGSIM SCENARIO TRACEDIR GROUPS
set -euo pipefail
ringsim=${1:?usage: chakra_groups_check.sh RINGSIM SCENARIO TRACEDIR GROUPS} scenario=${2:?} traces=${3:?} groups=${4:?}
run() { "$ringsim" run "$scenario" --chakra "$traces/$1" --chakra-groups "$groups" --links none; }
total() { awk '/total\(us\)/ { getline; print $1 }'; }
native=$("$ringsim" run "$scenario" --links none | awk '$1 == 1048576 { print $10; exit }')
alone=$(run group_alone | total)
both=$(run groups | total)
declared=$("$ringsim" run "$scenario" --chakra "$traces/groups_declared" --links none | total)
pipe=$(run pipeline)
fails=0
# groups: 5 us of compute, both groups' allreduce at once, then the world's
want=$(awk -v a="$alone" -v n="$native" 'BEGIN { printf "%.2f", 5 + a + n }')
printf 'group alone %s us, world native %s us: groups trace %s us (want 5 + both = %s)\n' "$alone" "$native" "$both" "$want"
awk -v x="$both" -v y="$want" 'BEGIN { exit !(x - y < 0.015 && y - x < 0.015) }' || fails=1
# the same groups declared in the trace (PyTorch's process_group:init node), no file
printf 'groups declared in the trace: %s us (want %s)\n' "$declared" "$both"
[[ $declared == "$both" ]] || fails=1
# the pipeline: a stage's send ends 5 us of compute and a hop (>= 1 MiB at the link's 30 GB/s,
# < 1.25 x that) after its predecessor's; the last stage ends 5 us after its receive
echo "$pipe" | awk '$1 ~ /^[0-7]$/ && NF == 5 { end[$1] = $2 } END {
    for (r = 1; r < 7; r++) {
        hop = end[r] - end[r - 1] - 5
        printf "stage %d ends %.2f us: its hop %.2f us\n", r, end[r], hop
        if (hop < 1048576 / 30000 || hop > 1.25 * 1048576 / 30000) bad = 1
    }
    printf "stage 7 ends %.2f us\n", end[7]
    if (end[7] - end[6] < 4.995 || end[7] - end[6] > 5.005) bad = 1
    exit bad }' || fails=1
# host ops (is_cpu_op) on their own lane: a 20 us one beside a 5 us kernel and the 1 MiB send after it
run lanes | awk '$1 == 0 && NF == 5 { printf "lanes: rank 0 ends %.2f us, cpu %.2f us\n", $2, $4
    exit !($4 == 20 && $2 >= 5 + 1048576 / 30000 && $2 < 5 + 20 + 1048576 / 30000) }' || fails=1
exit $fails
