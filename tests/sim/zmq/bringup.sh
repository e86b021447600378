#!/bin/bash
# bringup.sh — `ringsim bringup` end to end: verdicts, JSON, exit statuses, messages, and no agent left behind.
# usage: bringup.sh RINGSIM BU_JSON CASE   (CASE: good, dead, slow, corrupt, miswire, missing, ranktable, badargs, interrupt,
#                                           junit, junit_unwritable)
# a good link's verdict, also one the re-test cleared ("good: re-tested: ... (load, not the link)")
GOOD=' good\(: re-tested: .*\)\?$'
set -u
RS=$1
BJ=$2
CASE=$3
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d)
JOB="bu$$$CASE"
export RINGSIM_JOB=$JOB
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$TMP"' EXIT
. "$(dirname "$0")/cli_lib.sh"

# run EXPECTED-STATUS ARGS...: `ringsim bringup ARGS` (cli_lib.sh's run, for this one subcommand).
run() {
  local want=$1; shift
  "$RS" bringup "$@" > "$TMP/out" 2> "$TMP/err"
  RC=$?
  echo "\$ ringsim bringup $* -> $RC"
  [ "$RC" = "$want" ] || fail "exit status $RC, expected $want"
  local left=$(agents_left "$JOB")
  [ "$left" = 0 ] || fail "$left agent process(es) of job $JOB left behind"
}

# The JSON report parses; `verdicts` holds "SRC->DST VERDICT" per link.
report() {
  "$BJ" "$TMP/r.json" > "$TMP/verdicts" || fail "the JSON report does not parse"
}
verdict_is() { grep -qx "$1 $2" "$TMP/verdicts" || fail "link $1 is not '$2': $(grep "^$1 " "$TMP/verdicts")"; }
others_good() { # every link but $1 is good
  local bad=$(grep -- '->' "$TMP/verdicts" | grep -v "^$1 " | grep -vc "$GOOD")
  [ "$bad" = 0 ] || fail "$bad other link(s) not good: $(grep -- '->' "$TMP/verdicts" | grep -v "$GOOD")"
}

# Small transfers keep every case near a second. The injected slow link is 5 MB/s; healthy ones
# are ~0.3-3 GB/s in Release and ~0.02-0.08 GB/s under ASan, where links also differ 3x from each
# other: the slow bound is 20 % of the median (less when the run's own noise is larger; the
# bandwidth line says), and the noise model keeps a busy machine from calling healthy links slow.
SF="--slow-factor 0.2 --reps 4"
Q="--ranks 4 --expect ring:4 --timeout 2 --bytes 1M --slot 16K --pings 10 $SF --json $TMP/r.json"

case $CASE in
good)
  # the expected topology from a scenario file's topology section (small.yaml: a ring of 4)
  run 0 ${Q/--expect ring:4/--expect $HERE/small.yaml}
  grep -q "expected topology $HERE/small.yaml: 4 ranks, 4 links (8 directed)" "$TMP/out" || fail "no header"
  report
  grep -qx 'links 8' "$TMP/verdicts" || fail "expected 8 directed links"
  [ "$(grep -c "$GOOD" "$TMP/verdicts")" = 8 ] || fail "expected 8 good links"
  grep -qx 'rings 2 ok 2' "$TMP/verdicts" || fail "expected 2 ring allreduces, both correct"
  grep -qx 'ok true' "$TMP/verdicts" || fail "the report is not ok"
  grep -q '^# ring 0 1 2 3: allreduce 65536 B int32 sum, #wrong 0' "$TMP/out" || fail "no ring 0 1 2 3"
  grep -q '^# ring 1 0 3 2: allreduce 65536 B int32 sum, #wrong 0' "$TMP/out" || fail "no ring 1 0 3 2"
  grep -q '8 of 8 links good, 0 bad; 2 ring allreduce(s): 2 correct, 0 failed; all good' "$TMP/out" || fail "no summary"
  ;;
dead)
  run 1 $Q --inject 1-2:dead
  report
  verdict_is 1-\>2 dead
  others_good 1-\>2
  grep -q '1->2 .*dead: nothing arrives: rank 2 got no DATA from rank 1 within 2.0 s' "$TMP/out" || fail "not named"
  # the reverse link still carries data, only its timing needs the dead direction
  grep -q '2->1 .*good: data arrives intact; not timed: no answer on 1->2' "$TMP/out" || fail "2->1 not explained"
  grep -q '^# rings: link 1->2 (dead) and 2->1 are left out of the ring allreduces' "$TMP/out" \
    || fail "the dead link is not left out of the rings"
  grep -qx 'rings 0 ok 0' "$TMP/verdicts" || fail "a ring:4 without 1-2 has no ring left"
  ;;
slow)
  run 1 $Q --inject 2-3:slow:0.005
  report
  verdict_is 2-\>3 slow
  others_good 2-\>3
  grep -q '2->3 .* 0.005  ok (9 transfers) *slow: 0.005 GB/s is below 0.20 x the median .* every one of 12 samples, first pass and re-test' \
    "$TMP/out" || fail "not named"
  # the suspect was re-tested (4 + 8 samples) before the verdict, and stayed slow
  grep -q '^# bandwidth: .*; 1 suspect(s) re-tested, 0 cleared$' "$TMP/out" || fail "the slow link was not re-tested"
  grep -qx 'rings 2 ok 2' "$TMP/verdicts" || fail "a slow link still carries correct rings"
  ;;
corrupt)
  run 1 $Q --inject 0-3:corrupt
  report
  verdict_is 0-\>3 corrupting
  others_good 0-\>3
  # one flipped byte per 4 KiB: 256 in the 1 MiB transfer, 4 in each of the 4 patterns of 16 KiB
  grep -q '0->3 .*corrupting: 272 B wrong in 5 of 9 transfers, first at offset 123 (bandwidth)' "$TMP/out" \
    || fail "not named with bytes and first offset"
  ;;
miswire)
  run 1 $Q --inject 3-0:miswire:2
  report
  verdict_is 3-\>0 miswired
  others_good 3-\>0
  grep -q "3->0 .*miswired: rank 3's data for rank 0 arrives at rank 2" "$TMP/out" || fail "not named"
  ;;
missing)
  run 1 --ranks 3 --expect ring:4 --timeout 2 --bytes 256K --slot 4K --pings 4 $SF --json "$TMP/r.json"
  report
  grep -qx 'links 8' "$TMP/verdicts" || fail "expected the 8 directed links of ring:4"
  for l in '2->3' '3->2' '0->3' '3->0'; do verdict_is "$l" missing; done
  grep -q '3->0 .*missing: rank 3 has no agent (3 agents: 0..2)' "$TMP/out" || fail "the absent rank is not named"
  [ "$(grep -c "$GOOD" "$TMP/verdicts")" = 4 ] || fail "the 4 links among present ranks should be good"
  ;;
ranktable)
  # agents someone else started (one of them with a fault hook), reached through a rank table
  printf 'job: %s\nranks:\n' "$JOB" > "$TMP/t.yaml"
  for r in 0 1 2; do printf '  - {rank: %d, endpoint: "ipc://@%s-%d"}\n' $r "$JOB" $r >> "$TMP/t.yaml"; done
  for r in 0 1 2; do
    F=""; [ $r = 1 ] && F="--fault 2:corrupt"
    "$RS" agent --ranktable "$TMP/t.yaml" --rank $r --timeout 2 $F > /dev/null 2> "$TMP/agent$r.err" &
  done
  run 1 --ranktable "$TMP/t.yaml" --shutdown-agents --expect biring:3 --timeout 2 --bytes 256K --slot 4K $SF --json "$TMP/r.json"
  report
  grep -qx 'links 6' "$TMP/verdicts" || fail "expected 6 directed links"
  verdict_is 1-\>2 corrupting
  others_good 1-\>2
  wait || fail "an agent exited non-zero: $(cat "$TMP"/agent*.err)"
  ;;
badargs)
  run 2 --ranks 4 --expect ring:x
  grep -q "^ringsim bringup: --expect: 'ring:x' (allowed: ring:N, biring:N, mesh:N, torus:RxC" "$TMP/err" || fail "no message"
  run 2 --ranks 4 --inject 1-2:melted
  grep -q "^ringsim bringup: --inject '1-2:melted': --fault: '2:melted' (allowed: PEER:dead" "$TMP/err" || fail "no message"
  run 2 --ranks 4 --slow-factor 1.5
  run 2 --ranks 4 --bogus
  printf 'topology:\n  kind: ring\n  rank: 4\n' > "$TMP/bad.yaml"
  run 2 --ranks 4 --expect "$TMP/bad.yaml"
  grep -q "bad.yaml:3: topology.rank" "$TMP/err" || fail "no file:line: key message: $(cat "$TMP/err")"
  run 2 --ranktable "$TMP/none.yaml"
  ;;
interrupt)
  # Ctrl-C while a very slow link is being measured: status 130, every agent gone
  "$RS" bringup --ranks 3 --expect ring:3 --inject 0-1:slow:0.0002 --timeout 30 < /dev/null > "$TMP/out" 2> "$TMP/err" &
  CPID=$!
  await_agents 3
  sleep 0.5
  kill -INT $CPID
  wait $CPID
  RC=$?
  [ "$RC" = 130 ] || fail "exit status $RC after SIGINT, expected 130"
  grep -q 'interrupted: stopping the agents' "$TMP/err" || fail "no message"
  [ "$(agents_left "$JOB")" = 0 ] || fail "agents left behind after SIGINT"
  ;;
junit)
  # a testcase per link and ring allreduce, all passed
  run 0 $Q --junit "$TMP/r.xml"
  grep -q '<testsuite name="ringsim bringup" tests="10" failures="0"' "$TMP/r.xml" \
    || fail "not 10 passed testcases: $(cat "$TMP/r.xml")"
  [ "$(grep -c '<testcase classname="ringsim.bringup.link" name="link [0-3]-&gt;[0-3]"' "$TMP/r.xml")" = 8 ] \
    || fail "not 8 links"
  grep -q '<testcase classname="ringsim.bringup.ring" name="ring 0 1 2 3"' "$TMP/r.xml" || fail "no ring 0 1 2 3"
  # a dead link fails with its verdict and reason; ring:4 without 1-2 has no ring left to run
  run 1 $Q --inject 1-2:dead --junit "$TMP/r.xml"
  grep -q '<testsuite name="ringsim bringup" tests="8" failures="1"' "$TMP/r.xml" \
    || fail "not 8 testcases, 1 failed: $(cat "$TMP/r.xml")"
  grep -A1 'name="link 1-&gt;2"' "$TMP/r.xml" \
    | grep -q '<failure message="dead: nothing arrives: rank 2 got no DATA from rank 1 within 2.0 s' \
    || fail "link 1->2 does not fail as dead: $(cat "$TMP/r.xml")"
  ;;
junit_unwritable)
  # tried before any agent starts: fails at once, nothing run
  run 2 $Q --junit "$TMP/no/such/dir/r.xml"
  grep -q "^ringsim bringup: --junit: cannot write '$TMP/no/such/dir/r.xml': No such file or directory" "$TMP/err" \
    || fail "no message"
  grep -q 'agents' "$TMP/out" && fail "the bring-up started"
  ;;
*)
  echo "unknown case $CASE"; exit 2 ;;
esac
echo "PASS ($CASE)"
