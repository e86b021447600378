#!/bin/bash
# cli_zmq.sh — `ringsim run --backend zmq` end to end: tables, exit statuses, messages, and no agent left behind.
# usage: cli_zmq.sh RINGSIM CASE   (CASE: scenario, kill, term, corrupt, missing, ranktable, launcher, interrupt, toomany, badtable, det)
set -u
RS=$1
CASE=$2
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d)
JOB="zt$$$CASE"
export RINGSIM_JOB=$JOB
# Agents this script starts itself (ranktable, launcher) must not outlive it, even on failure:
# they would also hold its stdout open.
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$TMP"' EXIT
. "$(dirname "$0")/cli_lib.sh"

case $CASE in
scenario)
  run 0 run --backend zmq --ranks 4 "$HERE/small.yaml"
  [ "$(grep -c 'backend zmq' "$TMP/out")" = 5 ] || fail "expected 5 tables"
  [ "$(grep -c 'Out of bounds values : 0 OK' "$TMP/out")" = 5 ] || fail "expected 5 tables with #wrong 0"
  grep -q 'topology, device and fault keys are ignored' "$TMP/out" || fail "no note about the topology"
  # every data row: #wrong (columns 9 and 13) are 0
  awk '$1 ~ /^[0-9]+$/ { rows++; if ($9 != 0 || $13 != 0) bad++ } END { exit !(rows == 13 && !bad) }' "$TMP/out" \
    || fail "expected 13 rows with #wrong 0"
  ;;
kill)
  RINGSIM_ZMQ_FAULT=die:1:60 run 3 run --backend zmq --ranks 4 --timeout 2 -C allreduce -b 1K -e 64K -n 20 -w 2
  grep -q 'agent rank 1 (pid [0-9]*) was killed by signal 9' "$TMP/err" || fail "the dead agent is not named"
  for r in 0 2 3; do
    grep -q "^ringsim: rank $r: .*rank 1 (ipc://@ringsim-$JOB-1) disconnected without closing" "$TMP/err" \
      || fail "rank $r does not name the dead rank 1"
  done
  awk -v e="$ELAPSED" 'BEGIN { exit !(e < 15) }' || fail "took ${ELAPSED}s with a 2 s timeout"
  grep -q 'no wait-for report: agent rank 1 is gone' "$TMP/err" || fail "no word on the missing report"
  ;;
corrupt)
  # an engine timeout (120 s) above CTest's limit (60 s): passing proves no rank waited for it
  RINGSIM_ZMQ_FAULT=corrupt:0:9 run 3 run --backend zmq --ranks 3 --timeout 120 -C allreduce -b 4K -e 4K -n 5 -w 1
  grep -q 'link from rank 0 (ipc://@ringsim-[^)]*): frame of [0-9]* bytes rejected: checksum' "$TMP/err" \
    || fail "the corrupt link is not named"
  # the third rank was told by the detector's ABORT (or rank 0's relay of it), naming it and the cause
  grep -Eq '^ringsim: rank [12]: .*(: | -- )rank [12] aborted .*checksum' "$TMP/err" \
    || fail "the bystander was not told why (ABORT)"
  # every agent's engine state joined into the wait-for report: the root cause is the broken link
  grep -q '^hang: rank [0-9] waits for rank [0-9] .*failed allreduce #1 first (link error)' "$TMP/err" \
    || fail "no wait-for report naming the link failure as the root cause"
  ;;
missing)
  printf 'ranks:\n  - {rank: 0, endpoint: "ipc://@%s-0"}\n  - {rank: 1, endpoint: "ipc://@%s-1"}\n' "$JOB" "$JOB" > "$TMP/t.yaml"
  run 3 run --backend zmq --ranktable "$TMP/t.yaml" --connect-timeout 0.5 -C allreduce -b 8 -e 8
  grep -q "agent rank 0 (ipc://@$JOB-0-ctl): no answer to HELLO within" "$TMP/err" || fail "missing agent 0 not named"
  grep -q "agent rank 1 (ipc://@$JOB-1-ctl): no answer to HELLO within" "$TMP/err" || fail "missing agent 1 not named"
  ;;
ranktable)
  printf 'job: %s\nranks:\n  - {rank: 0, endpoint: "ipc://@%s-0"}\n  - {rank: 1, endpoint: "tcp://127.0.0.1:%d"}\n' \
    "$JOB" "$JOB" $((20000 + $$ % 20000)) > "$TMP/t.yaml"
  for r in 0 1; do "$RS" agent --ranktable "$TMP/t.yaml" --rank $r --timeout 5 > /dev/null 2> "$TMP/agent$r.err" & done
  run 0 run --backend zmq --ranktable "$TMP/t.yaml" --shutdown-agents -C allreduce,allgather -d int32 -b 8 -e 4K -f 16 -n 2 -w 1
  [ "$(grep -c 'Out of bounds values : 0 OK' "$TMP/out")" = 2 ] || fail "expected 2 tables with #wrong 0"
  wait || fail "an agent exited non-zero: $(cat "$TMP"/agent*.err)"
  ;;
launcher)
  # agents placed by a launcher (here: by hand, with Open MPI's variables), endpoints from RINGSIM_ZMQ_BASE
  for r in 0 1 2; do
    OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_SIZE=3 RINGSIM_ZMQ_BASE="ipc://@$JOB" "$RS" agent --timeout 5 \
      > /dev/null 2> "$TMP/agent$r.err" &
  done
  printf 'ranks:\n' > "$TMP/t.yaml"
  for r in 0 1 2; do printf '  - {rank: %d, endpoint: "ipc://@%s-%d"}\n' $r "$JOB" $r >> "$TMP/t.yaml"; done
  run 0 run --backend zmq --ranktable "$TMP/t.yaml" --shutdown-agents --json "$TMP/r.json" -C reduce -o max -d half -r 2 -b 2 -e 2K -f 32 -n 1 -w 0
  grep -Eq '"backend":[[:space:]]*"zmq"' "$TMP/r.json" || fail "the JSON does not say backend zmq"
  wait || fail "an agent exited non-zero: $(cat "$TMP"/agent*.err)"
  ;;
interrupt)
  # Ctrl-C in the middle of a long sweep: status 130, every agent gone
  "$RS" run --backend zmq --ranks 3 -C allreduce -b 1K -e 1M -n 100000 -w 0 > "$TMP/out" 2> "$TMP/err" < /dev/null &
  CPID=$!
  await_agents 3
  sleep 1
  kill -INT $CPID
  wait $CPID
  RC=$?
  [ "$RC" = 130 ] || fail "exit status $RC after SIGINT, expected 130"
  grep -q 'interrupted: stopping the agents' "$TMP/err" || fail "no message"
  [ "$(agents_left "$JOB")" = 0 ] || fail "agents left behind after SIGINT"
  ;;
term)
  # issue 19: SIGTERM to one agent mid-sweep: its peers are told at once (ABORT), not after the
  # 30 s timeout (6 of 6 runs paid it), and the agent dies of the signal (it exited 0)
  T0=$(date +%s.%N)
  "$RS" run --backend zmq --ranks 3 --timeout 30 -C allreduce -b 1K -e 1M -n 100000 -w 0 > "$TMP/out" 2> "$TMP/err" < /dev/null &
  CPID=$!
  await_agents 3
  sleep 1
  signal_agent TERM 1
  wait $CPID
  RC=$?
  ELAPSED=$(awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  echo "run with rank 1 terminated -> $RC in ${ELAPSED}s"
  [ "$RC" = 3 ] || fail "exit status $RC, expected 3"
  awk -v e="$ELAPSED" 'BEGIN { exit !(e < 20) }' || fail "took ${ELAPSED}s: the peers waited for their timeout"
  grep -q 'agent rank 1 (pid [0-9]*) was killed by signal 15' "$TMP/err" || fail "the terminated agent is not named"
  grep -q 'rank 1 aborted.*rank 1: stopped by a signal' "$TMP/err" || fail "the peers were not told why"
  [ "$(agents_left "$JOB")" = 0 ] || fail "agents left behind"
  ;;
toomany)
  run 2 run --backend zmq "$HERE/../../../scenarios/ring1024.yaml"
  grep -q "1024 local agents are too many for one host (allowed: 1..128, the scenario's rank count" "$TMP/err" \
    || fail "no limit message"
  ;;
badtable)
  printf 'ranks:\n  - {rank: 0, endpoint: "ipc://@a"}\n  - {rank: 0, endpoint: "ipc://@b"}\n' > "$TMP/t.yaml"
  run 2 run --backend zmq --ranktable "$TMP/t.yaml"
  grep -q "t.yaml:3: ranks\[1\]: rank 0 is listed twice (first on line 2)" "$TMP/err" || fail "no file:line: field message"
  ;;
det)
  run 0 run --backend zmq "$HERE/det.yaml"
  grep -q "allreduce on 3 ranks, backend zmq, algorithm det" "$TMP/out" || fail "not the det algorithm"
  grep -q "Out of bounds values : 0 OK" "$TMP/out" || fail "wrong values"
  sed 's/deterministic: true/deterministic: true\n  wide_accumulation: true/' "$HERE/det.yaml" > "$TMP/wide.yaml"
  run 2 run --backend zmq "$TMP/wide.yaml"
  grep -q "workload.wide_accumulation: not with --backend zmq" "$TMP/err" || fail "no refusal of wide accumulation"
  ;;
*)
  echo "unknown case $CASE"; exit 2 ;;
esac
echo "PASS ($CASE)"
