#!/usr/bin/env bash
# exec_cost.sh — instructions per task of the executor (+ generator), counted by callgrind.
# Usage: tests/bench/exec_cost.sh [build dir]   (run ./ringsim build first)
set -euo pipefail
build=${1:-build}
bin=$build/tests/bench/bench_exec
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Two runs with different iteration counts: the difference cancels start-up and teardown.
run() {
    valgrind --tool=callgrind --callgrind-out-file="$out/cg.$1" "$bin" "$1" >"$out/stdout.$1" 2>"$out/stderr.$1"
    local instr tasks
    instr=$(grep -m1 '^summary:' "$out/cg.$1" | awk '{print $2}')
    tasks=$(awk '{print $2}' "$out/stdout.$1")
    echo "$instr $tasks"
}
read -r i1 t1 < <(run 50)
read -r i2 t2 < <(run 250)
echo "executor + generator: $(( (i2 - i1) / (t2 - t1) )) instructions per task" \
     "($((t2 - t1)) tasks, ring allreduce, rank 3 of 8, 1 KiB slices, instant HAL)"
