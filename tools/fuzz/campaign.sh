#!/usr/bin/env bash
# A long local fuzzing run of one target: run.sh again and again until SECONDS have passed,
# carrying on after each crash (libFuzzer stops at the first), then a summary line:
#
#   bash tools/fuzz/campaign.sh program|data_map|xnnpack SECONDS [BUILD_DIR]
#
# Logs go to BUILD_DIR/campaign/TARGET-N.log, crashes to BUILD_DIR/artifacts/TARGET/ (keep each,
# once fixed, with keep.sh crash). Prints "TARGET: E executions in S s, coverage C, K crashes".
# Run one or two targets at a time on a shared machine.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TARGET="$1"
TOTAL="$2"
BUILD="${3:-$ROOT/build/fuzz}"
LOGS="$BUILD/campaign"
mkdir -p "$LOGS"
start=$(date +%s)
execs=0 crashes=0 cov=0 n=0
while :; do
  left=$(( TOTAL - ($(date +%s) - start) ))
  [ "$left" -gt 10 ] || break
  n=$((n + 1))
  log="$LOGS/$TARGET-$n.log"
  if bash "$ROOT/tools/fuzz/run.sh" "$TARGET" "$left" "$BUILD" >"$log" 2>&1; then :; else
    crashes=$((crashes + 1))
    echo "crash: $(grep -ao 'Test unit written to [^ ]*' "$log" | tail -1) (log $log)" >&2
  fi
  e=$(grep -ao 'stat::number_of_executed_units: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo 0)
  execs=$((execs + ${e:-0}))
  c=$(grep -ao 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo 0)
  [ "${c:-0}" -gt "$cov" ] && cov=$c
done
echo "$TARGET: $execs executions in $(( $(date +%s) - start )) s, coverage $cov, $crashes crashes"
