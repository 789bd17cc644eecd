#!/usr/bin/env bash
# A long suite, outside the CI gate (docs/TESTING.md): the build, then every test of one suite,
# its long ones included. Extra arguments go to pytest.
#
#   bash ci/long.sh models|opinfo|corpus|soak|fuzz|matrix|sdkdeps|cross|all [pytest args]
#
# cross also cross-builds the aarch64 wheel first (ci/build-aarch64.sh, dist/aarch64/).
# fuzz runs each target for ETRT_FUZZ_SECONDS (default 600 here, 10 in the gate);
# soak runs for ETRT_SOAK_SECONDS where its tests take a duration.
set -euo pipefail
suites="models opinfo corpus soak fuzz matrix sdkdeps cross"
suite="${1:-}"
if [ -z "$suite" ] || { [ "$suite" != all ] && [[ " $suites " != *" $suite "* ]]; }; then
  echo "usage: bash ci/long.sh {${suites// /|}|all} [pytest args]" >&2
  exit 2
fi
shift
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ETRT_ROOT"
bash ci/build.sh
if [ "$suite" = cross ] || [ "$suite" = all ]; then
  bash ci/build-aarch64.sh
fi
if [ "$suite" = all ]; then
  expr="${suites// / or }"
else
  expr="$suite"
fi
export ETRT_FUZZ_SECONDS="${ETRT_FUZZ_SECONDS:-600}"
exec python -m pytest -m "$expr" -ra --durations=30 "$@"
