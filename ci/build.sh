#!/usr/bin/env bash
# The build: etrt's Conan package (its test_package runs a model), then the wheel in dist/.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
bash "$ETRT_ROOT/ci/setup.sh"
cd "$ETRT_ROOT"
# Through the compiler cache: the tests' in-tree release build then compiles only what the
# package does not hold (tools, test programs).
CMAKE_CXX_COMPILER_LAUNCHER=ccache conan create . --build=missing
python -m etpkg wheelify . --output-dir dist/
