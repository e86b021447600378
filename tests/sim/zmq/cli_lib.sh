# cli_lib.sh — shared by the zmq CLI test scripts (sourced): fail, agents_left, await_agents, signal_agent, run.
# The caller sets RS (the ringsim binary), CASE, TMP (a scratch directory) and JOB (RINGSIM_JOB).

fail() { echo "FAIL ($CASE): $*"; echo "--- stdout"; cat "$TMP/out" 2>/dev/null; echo "--- stderr"; cat "$TMP/err" 2>/dev/null; exit 1; }

# Processes whose command line is a ringsim agent of this job (one grep over /proc first: cheap;
# a process may be gone by the time it is read).
agents_left() {
  local n=0 f
  for f in $(grep -las -- "$1" /proc/[0-9]*/cmdline); do
    if tr '\0' ' ' 2>/dev/null < "$f" | grep -q -- "agent .*$1"; then n=$((n + 1)); fi
  done
  echo $n
}

# await_agents N: waits up to 10 s until N agents of this job run; fails if they never do.
await_agents() {
  local i
  for i in $(seq 100); do [ "$(agents_left "$JOB")" = "$1" ] && return; sleep 0.1; done
  fail "the agents did not start"
}

# signal_agent SIGNAL RANK: sends SIGNAL to this job's agent of rank RANK.
signal_agent() {
  local f p
  for f in $(grep -las -- "$JOB" /proc/[0-9]*/cmdline); do
    if tr '\0' ' ' 2>/dev/null < "$f" | grep -q -- "agent .*--rank $2 .*$JOB"; then
      p=${f#/proc/}
      kill -"$1" "${p%/cmdline}"
    fi
  done
}

# run EXPECTED-STATUS ARGS...: runs ringsim ARGS into $TMP/out and $TMP/err, prints the command,
# its status and wall time; fails on another status or on an agent of this job left behind.
run() {
  local want=$1; shift
  local t0=$(date +%s.%N)
  "$RS" "$@" > "$TMP/out" 2> "$TMP/err"
  RC=$?
  ELAPSED=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
  echo "\$ ringsim $* -> $RC in ${ELAPSED}s"
  [ "$RC" = "$want" ] || fail "exit status $RC, expected $want"
  local left=$(agents_left "$JOB")
  [ "$left" = 0 ] || fail "$left agent process(es) of job $JOB left behind"
}
