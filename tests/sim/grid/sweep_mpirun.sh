#!/usr/bin/env bash
# sweep_mpirun.sh — issue 20's acceptance: `mpirun -np 2 ringsim sweep` over a 50-point grid
# merges the same table as one process does: sweep.csv byte for byte, sweep.json but for each
# point's wall seconds. Each MPI process must take its own share (index % 2) and process 0 the merge.
# Usage: sweep_mpirun.sh RINGSIM GRID OUTDIR. Exit 77 (CTest: skipped) without mpirun
# (./ringsim build installs Debian's openmpi-bin).
set -euo pipefail
ringsim=${1:?usage: sweep_mpirun.sh RINGSIM GRID OUTDIR} grid=${2:?} out=${3:?}
command -v mpirun >/dev/null || { echo "sweep_mpirun: no mpirun: skipped (./ringsim build installs openmpi-bin)"; exit 77; }
rm -rf "$out"
mkdir -p "$out"
"$ringsim" sweep "$grid" --out "$out/one" --jobs 2 --force >"$out/one.log" 2>&1 || { cat "$out/one.log"; exit 1; }
# root is what CI runs as; two slots on any machine
mpirun --allow-run-as-root --oversubscribe -np 2 "$ringsim" sweep "$grid" --out "$out/mpi" --jobs 1 --force \
    >"$out/mpi.log" 2>&1 || { cat "$out/mpi.log"; exit 1; }
cat "$out/mpi.log"
for r in 0 1; do
    grep -q "^# sweep [a-z_]* (process $r of 2): 25 points, 25 run, 0 skipped, 0 failed" "$out/mpi.log" ||
        { echo "sweep_mpirun: process $r did not run its 25 points"; exit 1; }
done
grep -q "^# merged 100 rows of 50 points (50 ok, 0 failed, 0 missing)" "$out/mpi.log" || { echo "sweep_mpirun: no merge of 50 points"; exit 1; }
cmp "$out/one/sweep.csv" "$out/mpi/sweep.csv" || { echo "sweep_mpirun: the CSVs differ"; diff "$out/one/sweep.csv" "$out/mpi/sweep.csv" | head; exit 1; }
[[ $(wc -l <"$out/mpi/sweep.csv") -eq 201 ]] || { echo "sweep_mpirun: sweep.csv has not 200 rows"; exit 1; }
if ! diff <(grep -v '"seconds":' "$out/one/sweep.json") <(grep -v '"seconds":' "$out/mpi/sweep.json"); then
    echo "sweep_mpirun: the JSONs differ beyond wall seconds"
    exit 1
fi
echo "sweep_mpirun: the same 200 rows from one process and from mpirun -np 2"
