#!/usr/bin/env bash
# Every test: lint and types, the Conan package and wheel build, then pytest (unit, model,
# sanitizer and consumer tests). Extra arguments go to pytest.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ETRT_ROOT"
# Tests write only under build/ and temporary directories; a file they leave in the checkout
# (e.g. Conan's env scripts from an install without -of) fails the run.
# Outside a git checkout (an unpacked archive) there is nothing to compare.
checkout_state() { if [ -e .git ]; then git status --porcelain --untracked-files=all; fi; }
before="$(checkout_state)"
bash ci/build.sh
ruff check python tests benchmarks
mypy python
python -m pytest "$@"
after="$(checkout_state)"
if [ "$before" != "$after" ]; then
    echo "the test run changed the checkout:" >&2
    diff <(echo "$before") <(echo "$after") >&2 || true
    exit 1
fi
