#!/bin/bash
# bringup_under_load.sh — manual benchmark (not a ctest): healthy bring-ups with every core busy must call every link good.
# usage: bringup_under_load.sh RINGSIM [RUNS [BURNERS]]   (default 20 runs, one burner per core)
# Each run is `ringsim bringup --ranks 4 --expect ring:4` with no fault injected, so every link is
# healthy: a run counts as bad when any link is not "good". Prints each run's wall time and links,
# then "bad R of N runs"; exit 0 only when no run was bad.
set -u
RS=${1:?usage: bringup_under_load.sh RINGSIM [RUNS [BURNERS]]}
RUNS=${2:-20}
BURNERS=${3:-$(nproc)}
TMP=$(mktemp -d)
PIDS=""
# the burners are ours: stop exactly those, whatever ends the script
trap '[ -n "$PIDS" ] && kill $PIDS 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT
for i in $(seq "$BURNERS"); do
  sh -c 'while :; do :; done' &
  PIDS="$PIDS $!"
done
echo "# $BURNERS CPU burner(s) on $(nproc) core(s); $RUNS runs of: ringsim bringup --ranks 4 --expect ring:4"
bad=0 total=0
for r in $(seq "$RUNS"); do
  t0=$(date +%s.%N)
  "$RS" bringup --ranks 4 --expect ring:4 > "$TMP/out" 2> "$TMP/err"
  rc=$?
  t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
  total=$(awk -v a="$total" -v b="$t" 'BEGIN { printf "%.2f", a + b }')
  # table rows are "   SRC->DST ... VERDICT[: detail]"; any verdict but good is a miss on a healthy ring
  notgood=$(grep -E '^   [0-9]+->[0-9]+ ' "$TMP/out" | grep -vcE ' good(:|$)')
  summary=$(grep -E '^# [0-9]+ of [0-9]+ links good' "$TMP/out")
  if [ "$rc" != 0 ] || [ "$notgood" != 0 ]; then
    bad=$((bad + 1))
    echo "run $r: ${t}s exit $rc, $notgood link(s) not good: $summary"
    grep -E '^   [0-9]+->[0-9]+ ' "$TMP/out" | grep -vE ' good(:|$)' | sed 's/^/    /'
    sed 's/^/    stderr: /' "$TMP/err"
  else
    # the bound and the re-tests, when the bring-up prints its noise line
    echo "run $r: ${t}s ok$(grep '^# bandwidth: ' "$TMP/out" | sed 's/.*; slow below/; slow below/')"
  fi
done
echo "bad $bad of $RUNS runs; mean wall time $(awk -v a="$total" -v n="$RUNS" 'BEGIN { printf "%.2f", a / n }') s per run"
[ "$bad" = 0 ]
