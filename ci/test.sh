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
bash ci/build.sh
ETRT_BUILD_SECONDS=$(( $(date +%s) - build_start ))
export ETRT_BUILD_SECONDS
# The C++ test builds compile while lint, types and the first suites run (one build per
# directory at a time: the tests wait on the same lock rather than race it).
nice -n 10 python tests/runtime_build.py >build/prebuild.log 2>&1 &
prebuild=$!
trap 'kill "$prebuild" 2>/dev/null || true' EXIT
ruff check python tests benchmarks
mypy python
python -m pytest --gate-budget ci/budget.toml "$@"
wait "$prebuild" || { echo "the background test build failed: build/prebuild.log" >&2; exit 1; }
after="$(checkout_state)"
if [ "$before" != "$after" ]; then
    echo "the test run changed the checkout:" >&2
    diff <(echo "$before") <(echo "$after") >&2 || true
    exit 1
fi
