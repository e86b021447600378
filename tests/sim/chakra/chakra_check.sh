#!/usr/bin/env bash
# chakra_check.sh — issue 20's acceptance: traces made by ASTRA-sim's own microbenchmark
# generator (traces/, see README there) run on ringsim, and each collective takes the time the
# native workload of the same collective and size takes (`ringsim run`'s in-place column, the
# placement a trace's collective runs in), every result checked (#wrong 0).
# Usage: chakra_check.sh RINGSIM SCENARIO TRACEDIR
set -euo pipefail
ringsim=${1:?usage: chakra_check.sh RINGSIM SCENARIO TRACEDIR} scenario=${2:?} traces=${3:?}
native=$("$ringsim" run "$scenario" --links none)
# the in-place time of the 1 MiB row of each collective's table
native_time() {
    echo "$native" | awk -v c="$1" '$0 ~ "^# ringsim run: " c " on" { on = 1; next }
        on && $1 == 1048576 { print $10; exit }'
}
fails=0
for pair in ALL_REDUCE:allreduce ALL_GATHER:allgather REDUCE_SCATTER:reduce_scatter ALL_TO_ALL:alltoall BROADCAST:broadcast; do
    trace=${pair%%:*} coll=${pair#*:}
    out=$("$ringsim" run "$scenario" --chakra "$traces/$trace" --links none)
    got=$(echo "$out" | awk '$1 == 0 && $4 == "'"$trace"'" { print $7 }')
    want=$(native_time "$coll")
    wrong=$(echo "$out" | awk '/total\(us\)/ { getline; print $4 }')
    printf '%-15s chakra %10s us  native %10s us  #wrong %s\n' "$trace" "$got" "$want" "$wrong"
    [[ -n $got && $got == "$want" && $wrong == 0 ]] || fails=1
done
# compute nodes: one op at a time on the NPU's lane, dependent or not (5 us each)
for pair in one_comp_node:5.00 two_comp_nodes_independent:10.00 two_comp_nodes_dependent:10.00 BARRIER:; do
    trace=${pair%%:*} want=${pair#*:}
    total=$("$ringsim" run "$scenario" --chakra "$traces/$trace" --links none | awk '/total\(us\)/ { getline; print $1 }')
    [[ -n $want ]] || want=$total # a barrier: a one-element allreduce, some microseconds
    printf '%-27s total %s us (want %s)\n' "$trace" "$total" "$want"
    [[ $total == "$want" && $total != 0.00 ]] || fails=1
done
exit $fails
