#!/usr/bin/env bash
# Runs one fuzz target built by tools/fuzz/build.sh for a bounded time:
#
#   bash tools/fuzz/run.sh program|data_map|xnnpack SECONDS [BUILD_DIR] [libFuzzer flags...]
#
# The working corpus (BUILD_DIR/corpus/TARGET) starts from the seeds and the committed regression
# inputs and grows across runs; crashes land in BUILD_DIR/artifacts/TARGET/. Exits non-zero on
# any crash, timeout, sanitizer report or leak.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TARGET="$1"
SECONDS_TO_RUN="$2"
BUILD="${3:-$ROOT/build/fuzz}"
shift 3 2>/dev/null || shift $#
CORPUS="$BUILD/corpus/$TARGET"
ARTIFACTS="$BUILD/artifacts/$TARGET"
REGRESSIONS="$ROOT/tools/fuzz/regressions/$TARGET"
for dir in "$BUILD/seeds/$TARGET" "$REGRESSIONS"; do
  if [ -z "$(ls -A "$dir" 2>/dev/null)" ]; then
    echo "run.sh: $dir is missing or empty (seeds: tools/fuzz/build.sh; regressions: tools/fuzz/regressions.py)" >&2
    exit 2
  fi
done
mkdir -p "$CORPUS" "$ARTIFACTS"
cp -n "$BUILD/seeds/$TARGET"/* "$REGRESSIONS"/* "$CORPUS"/
# Allocations beyond 1 GiB fail as on a small machine (the runtime must report them, not crash),
# which also keeps memory below libFuzzer's RSS limit.
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:max_allocation_size_mb=1024:abort_on_error=1:handle_abort=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
exec "$BUILD/tools/fuzz/etrt_fuzz_$TARGET" "$CORPUS" \
  -dict="$BUILD/seeds/etrt.dict" -artifact_prefix="$ARTIFACTS/" \
  -max_total_time="$SECONDS_TO_RUN" -timeout=10 -rss_limit_mb=2560 -max_len=16384 \
  -print_final_stats=1 "$@"
