#!/bin/bash
# check_fault_matrix.sh — every test README.md's fault matrix names exists, so the table cannot claim an assertion the suite lost.
# usage: check_fault_matrix.sh README CTEST BUILD_DIR
set -eu
readme=$1 ctest=$2 build=$3
tests=$("$ctest" --test-dir "$build" -N | sed -n 's/^ *Test *#[0-9]*: \([^ ]*\).*/\1/p')
# the table's rows: from the header "| fault |" to the first line that is not a row; the header
# row itself names backends and commands, not tests
rows=$(awk '/^\| fault \|/ { on = 1; next } on && !/^\|/ { exit } on' "$readme")
[ -n "$rows" ] || { echo "$readme: no fault matrix (a table whose header starts with '| fault |')"; exit 1; }
bad=0 n=0
for name in $(grep -o '`[^`]*`' <<< "$rows" | tr -d '`' | grep -E '^[a-z0-9_]+$' | grep -vE '^(dead|slow|corrupting)$' | sort -u); do
  n=$((n + 1))
  grep -qx -- "$name" <<< "$tests" || { echo "$readme: fault matrix names '$name', which is not a test"; bad=1; }
done
[ $bad = 0 ] && echo "ok: the fault matrix names $n tests, all in the suite"
exit $bad
