#!/usr/bin/env bash
# Keeps what a fuzzing run found, small:
#
#   bash tools/fuzz/keep.sh crash TARGET CRASH_FILE NAME [BUILD_DIR]
#       minimizes an input TARGET crashes on (libFuzzer's -minimize_crash: the smallest input
#       that still fails the same way) and keeps it as tools/fuzz/regressions/TARGET/found-NAME,
#       which every later run and tests/etrt_cpp/test_fuzz.py replay. Commit it with the fix.
#   bash tools/fuzz/keep.sh corpus TARGET [BUILD_DIR]
#       shrinks the working corpus BUILD_DIR/corpus/TARGET to the inputs that add coverage
#       (libFuzzer's -merge=1), so long runs restart from a small set.
#
# BUILD_DIR defaults to build/fuzz (tools/fuzz/build.sh).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:max_allocation_size_mb=1024:abort_on_error=1:handle_abort=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
mode="${1:-}"
case "$mode" in
  crash)
    [ $# -ge 4 ] || { echo "usage: keep.sh crash TARGET CRASH_FILE NAME [BUILD_DIR]" >&2; exit 2; }
    target="$2" crash="$3" name="$4" build="${5:-$ROOT/build/fuzz}"
    exe="$build/tools/fuzz/etrt_fuzz_$target"
    out="$ROOT/tools/fuzz/regressions/$target/found-$name"
    [[ "$name" =~ ^[a-z0-9_]+$ ]] || { echo "keep.sh: NAME is lower_case_words, got '$name'" >&2; exit 2; }
    [ -e "$out" ] && { echo "keep.sh: $out exists" >&2; exit 1; }
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    if ("$exe" -runs=1 "$crash") >"$tmp/check.log" 2>&1; then
      echo "keep.sh: $target does not fail on $crash (fixed already?); keeping it as it is" >&2
      cp "$crash" "$tmp/min"
    else
      ("$exe" -minimize_crash=1 -runs=20000 -max_total_time=300 -timeout=10 \
        -exact_artifact_path="$tmp/min" "$crash") >"$tmp/min.log" 2>&1 || true
      [ -s "$tmp/min" ] || cp "$crash" "$tmp/min"
    fi
    mkdir -p "$(dirname "$out")"
    cp "$tmp/min" "$out"
    echo "kept $(stat -c %s "$out") bytes (from $(stat -c %s "$crash")) as ${out#"$ROOT"/}"
    ;;
  corpus)
    [ $# -ge 2 ] || { echo "usage: keep.sh corpus TARGET [BUILD_DIR]" >&2; exit 2; }
    target="$2" build="${3:-$ROOT/build/fuzz}"
    corpus="$build/corpus/$target"
    merged="$corpus.merged"
    rm -rf "$merged"
    mkdir -p "$merged"
    "$build/tools/fuzz/etrt_fuzz_$target" -merge=1 -timeout=10 -rss_limit_mb=2560 "$merged" "$corpus" 2>"$build/merge-$target.log"
    echo "corpus $target: $(ls "$corpus" | wc -l) -> $(ls "$merged" | wc -l) inputs"
    rm -rf "$corpus"
    mv "$merged" "$corpus"
    ;;
  *)
    echo "usage: keep.sh crash TARGET CRASH_FILE NAME [BUILD_DIR] | keep.sh corpus TARGET [BUILD_DIR]" >&2
    exit 2
    ;;
esac
