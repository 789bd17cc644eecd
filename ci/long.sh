#!/usr/bin/env bash
# A long suite, outside the CI gate (docs/TESTING.md): the build, then every test of one suite,
# its long ones included. Extra arguments go to pytest.
#
#   bash ci/long.sh models|opinfo|corpus|soak|fuzz|matrix|sdkdeps|cross|manylinux|all [pytest args]
#
# cross also cross-builds the aarch64 wheel first (ci/build-aarch64.sh, dist/aarch64/).
# manylinux builds the glibc 2.28 wheels instead of the default one (ci/build-manylinux_2_28.sh,
# dist/manylinux_2_28/ and, armv8, dist/manylinux_2_28-aarch64/) and runs, on the x86_64 one
# (ETRT_WHEEL), its own checks (tag, floor, the XNNPACK delegate), the consumer suite and the
# models through Python; on the aarch64 one (ETRT_AARCH64_WHEEL), the cross suite's tests.
# fuzz runs each target for ETRT_FUZZ_SECONDS (default 600 here, 5 in the gate);
# soak runs for ETRT_SOAK_SECONDS where its tests take a duration.
set -euo pipefail
suites="models opinfo corpus soak fuzz matrix sdkdeps cross manylinux"
suite="${1:-}"
if [ -z "$suite" ] || { [ "$suite" != all ] && [[ " $suites " != *" $suite "* ]]; }; then
  echo "usage: bash ci/long.sh {${suites// /|}|all} [pytest args]" >&2
  exit 2
fi
shift
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ETRT_ROOT"
export ETRT_FUZZ_SECONDS="${ETRT_FUZZ_SECONDS:-600}"
if [ "$suite" = manylinux ] || [ "$suite" = all ]; then
  bash ci/build-manylinux_2_28.sh
fi
if [ "$suite" = manylinux ]; then
  wheels=(dist/manylinux_2_28/etrt-*.whl)
  # test_etrt_wheel_floor.py is left out: it holds the default wheel's 2_34.
  rc=0
  ETRT_WHEEL="$ETRT_ROOT/${wheels[-1]}" python -m pytest -m "manylinux or not long" -ra \
    --durations=30 tests/consumers/test_manylinux_2_28_wheel.py \
    tests/consumers/test_consumer_etrt.py tests/consumers/test_readme_walkthrough.py \
    tests/etrt_python/test_python_runtime.py "$@" || rc=$?
  # The aarch64 wheel of the same build, through the cross suite's tests under qemu-user.
  bash ci/build-manylinux_2_28.sh armv8
  wheels=(dist/manylinux_2_28-aarch64/etrt-*.whl)
  ETRT_AARCH64_WHEEL="$ETRT_ROOT/${wheels[-1]}" python -m pytest -m cross -ra --durations=30 \
    tests/consumers/test_aarch64_wheel.py "$@" || rc=$?
  exit "$rc"
fi
bash ci/build.sh
if [ "$suite" = models ] || [ "$suite" = all ]; then
  # The timm suite's pinned timm, without its dependencies (requirements.txt's torch and
  # torchvision serve it); test_timm_models.py fails, never skips, where it is missing.
  python -m pip install --quiet --no-deps -r tests/timm-requirements.txt
  python -c "import importlib.util as u, sys
missing = [m for m in ('huggingface_hub', 'safetensors', 'yaml', 'torchvision') if not u.find_spec(m)]
sys.exit(f'timm needs {missing}: install requirements.txt (ci/setup.sh)' if missing else 0)"
fi
if [ "$suite" = cross ] || [ "$suite" = all ]; then
  bash ci/build-aarch64.sh
fi
if [ "$suite" = all ]; then
  expr="${suites// / or }"
else
  expr="$suite"
fi
exec python -m pytest -m "$expr" -ra --durations=30 "$@"
