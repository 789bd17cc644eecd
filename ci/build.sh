#!/usr/bin/env bash
# The build: etrt's Conan package (its test_package runs a model), then the wheel in dist/.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
bash "$ETRT_ROOT/ci/setup.sh"
cd "$ETRT_ROOT"
conan create . --build=missing
python -m etpkg wheelify . --output-dir dist/
