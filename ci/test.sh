#!/usr/bin/env bash
# Every test: lint and types, the Conan package and wheel build, then pytest (unit, model,
# sanitizer and consumer tests). Extra arguments go to pytest.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ETRT_ROOT"
bash ci/build.sh
ruff check python tests benchmarks
mypy python
python -m pytest "$@"
