#!/bin/bash
# check_sanitize_skip.sh — every test tests/sanitize_skip.txt names exists, so the sanitizer pass leaves out nothing by a typo's luck.
# usage: check_sanitize_skip.sh SKIP_FILE CTEST BUILD_DIR
set -eu
skip=$1 ctest=$2 build=$3
tests=$("$ctest" --test-dir "$build" -N | sed -n 's/^ *Test *#[0-9]*: \([^ ]*\).*/\1/p')
bad=0
while read -r name reason; do
  case $name in '' | '#'*) continue ;; esac
  if ! grep -qx -- "$name" <<< "$tests"; then
    echo "$skip: '$name' is not a test (ctest -N in $build)"; bad=1
  fi
  [ -n "$reason" ] || { echo "$skip: '$name' has no reason"; bad=1; }
done < "$skip"
[ $bad = 0 ] && echo "ok: $(grep -c '^[^#]' "$skip") tests left out of the sanitizer pass, each a test with a reason"
exit $bad
