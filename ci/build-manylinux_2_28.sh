#!/usr/bin/env bash
# The etrt wheel built for glibc 2.28, on this Debian 12 machine and without containers
# (docs/PLATFORMS.md): Zig's clang (ziglang from PyPI, into build/zig-venv) against glibc 2.28,
# GCC's shared libstdc++, through the Conan host profile ci/manylinux_2_28/profile. A second
# command beside ci/build.sh, outside the CI gate. The wheel goes to dist/manylinux_2_28/, tagged
# ETRT_MANYLINUX (default 2_28); wheelify refuses it, naming each file and symbol version above
# that, while the third-party libraries are Debian 12's (see docs/PLATFORMS.md for where that
# stands).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ETRT_ROOT"
zig_version=0.17.0
if ! build/zig-venv/bin/python -c "import ziglang" 2>/dev/null; then
  rm -rf build/zig-venv
  python3 -m venv build/zig-venv
  build/zig-venv/bin/python -m pip install -q "ziglang==$zig_version"
fi
profile=ci/manylinux_2_28/profile
conan create . -pr:h "$profile" --build=missing
python -m etpkg wheelify . -pr:h "$profile" --output-dir dist/manylinux_2_28/ \
  --manylinux "${ETRT_MANYLINUX:-2_28}" -v
