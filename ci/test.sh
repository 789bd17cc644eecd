#!/usr/bin/env bash
# The CI gate: lint and types, the Conan package and wheel build, then every pytest test not
# marked long (unit, model, sanitizer, fuzz-smoke and consumer tests), checked against the
# gate's time budget (ci/budget.toml). Extra arguments go to pytest. The long suites have
# their own command, ci/long.sh (docs/TESTING.md).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ETRT_ROOT"
# Tests write only under build/ and temporary directories; a file they leave in the checkout
# (e.g. Conan's env scripts from an install without -of) fails the run.
# Outside a git checkout (an unpacked archive) there is nothing to compare.
checkout_state() { if [ -e .git ]; then git status --porcelain --untracked-files=all; fi; }
before="$(checkout_state)"
build_start=$(date +%s)
bash ci/setup.sh
# The C++ test builds compile in the background, niced (one build per directory at a time: the
# tests wait on the same lock rather than race it): the ASan+UBSan build from now on, using
# the core the package's build leaves idle while it configures, runs its test_package and
# repairs the wheel; the release build once the package's objects are in the compiler cache.
mkdir -p build
rm -rf build/prebuild-groups  # a test waiting for a pre-build raises these groups' priority
nice -n 10 python tests/runtime_build.py asan >build/prebuild-asan.log 2>&1 &
prebuild_asan=$!
# Each pre-build leads its own process group (tests/runtime_build.py): stop its compilers too.
stop() { for p in "$@"; do kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null || true; done; }
trap 'stop "$prebuild_asan"' EXIT
bash ci/build.sh
ETRT_BUILD_SECONDS=$(( $(date +%s) - build_start ))
export ETRT_BUILD_SECONDS
# Then the ThreadSanitizer build, which the runtime process's concurrency tests would otherwise
# compile on the gate's critical path (the longer of the two processes).
nice -n 10 python tests/runtime_build.py release tsan >build/prebuild.log 2>&1 &
prebuild=$!
trap 'stop "$prebuild" "$prebuild_asan"' EXIT
ruff check python tests benchmarks
mypy python
# Two pytest processes side by side: most of the gate is one single-threaded process at a time
# (a compiler, CMake, Conan, Python), so the second core does the other half. They share no
# writable state: the runtime suites get their own copy of the Conan cache (Conan's cache is
# not safe for concurrent writers), each its own temporary root; the in-tree builds and the
# CMake venvs are taken under file locks. Arguments naming test paths run one process instead.
serial=0
for arg in "$@"; do
  if [ -e "${arg%%::*}" ]; then serial=1; fi
done
if [ "${ETRT_GATE_SERIAL:-0}" = 1 ] || [ "$serial" = 1 ]; then
  python -m pytest --gate-budget ci/budget.toml "$@"
else
  rm -rf build/conan-home-runtime build/gate-times-*.json
  cp -a "$CONAN_HOME" build/conan-home-runtime
  tmp="${TMPDIR:-/tmp}/etrt-gate-$$"
  mkdir -p "$tmp"
  shard() {  # shard NAME PATHS... -- pytest args: one process, its lines prefixed with its name
    local name=$1; shift
    python -m pytest --gate-budget ci/budget.toml --gate-shard "$name" \
      --basetemp "$tmp/$name" "$@" 2>&1 | sed -u "s/^/[$name] /"
    return "${PIPESTATUS[0]}"
  }
  # About equal halves (docs/TESTING.md): the runtime process waits for the background ASan
  # build early on, so the corpus, which needs no in-tree build, goes with the sdk suites, and
  # so do the Python runtime's tests of the installed wheel (consumers of the wheel, like the
  # sdk suites' ones).
  wheel_tests=(tests/etrt_python/test_python_runtime.py tests/etrt_python/test_cli_wheel.py)
  sdk_paths=(tests/consumers tests/etpkg tests/corpus "${wheel_tests[@]}")
  # Every other suite folder, a new one included, goes to the runtime process.
  runtime_paths=(tests/etrt_python tests/etrt_cpp)
  for path in "${wheel_tests[@]}"; do
    runtime_paths+=("--ignore=$path")
  done
  for dir in tests/*/; do
    dir=${dir%/}
    if [[ " ${sdk_paths[*]} ${runtime_paths[*]} " != *" $dir "* ]] &&
      [ -n "$(find "$dir" -name 'test_*.py' -print -quit)" ]; then
      runtime_paths+=("$dir")
    fi
  done
  shard sdk "${sdk_paths[@]}" "$@" &
  sdk=$!
  CONAN_HOME="$ETRT_ROOT/build/conan-home-runtime" shard runtime "${runtime_paths[@]}" "$@" &
  runtime=$!
  status=0
  wait "$sdk" || status=1
  wait "$runtime" || status=1
  rm -rf "$tmp"
  python tests/gate_budget.py combine ci/budget.toml build/gate-times-sdk.json \
    build/gate-times-runtime.json --build-seconds "$ETRT_BUILD_SECONDS" \
    --total-seconds $(( $(date +%s) - build_start )) || status=1
  [ "$status" = 0 ] || { echo "the gate failed: see the [sdk] and [runtime] lines above" >&2; exit 1; }
fi
wait "$prebuild" || { echo "the background test build failed: build/prebuild.log" >&2; exit 1; }
wait "$prebuild_asan" || { echo "the background ASan build failed: build/prebuild-asan.log" >&2; exit 1; }
after="$(checkout_state)"
if [ "$before" != "$after" ]; then
    echo "the test run changed the checkout:" >&2
    diff <(echo "$before") <(echo "$after") >&2 || true
    exit 1
fi
