#!/usr/bin/env bash
# The etrt wheel built for glibc 2.28, on this Debian 12 machine and without containers
# (docs/PLATFORMS.md): Zig's clang (ziglang from PyPI, into build/zig-venv) against glibc 2.28,
# GCC's shared libstdc++, through a Conan host profile of ci/manylinux_2_28/. A second command
# beside ci/build.sh, outside the CI gate, tagged ETRT_MANYLINUX (default 2_28); wheelify
# refuses the wheel, naming each file and symbol version above that, if anything needs more.
#
#   bash ci/build-manylinux_2_28.sh          x86_64: dist/manylinux_2_28/
#   bash ci/build-manylinux_2_28.sh armv8    aarch64, cross-built with the aarch64 cross g++'s
#                                            libstdc++: dist/manylinux_2_28-aarch64/
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
bash "$ETRT_ROOT/ci/setup.sh"
cd "$ETRT_ROOT"
case "${1:-x86_64}" in
  x86_64)
    host=(-pr:h ci/manylinux_2_28/profile)
    out=dist/manylinux_2_28/
    ;;
  armv8)
    host=(-pr:h ci/manylinux_2_28/profile-armv8 -pr:b default)
    out=dist/manylinux_2_28-aarch64/
    # FlatBuffers' arm64 headers come through the machine's apt (recipes/debian-debs).
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
      dpkg --add-architecture arm64
      apt-get update -qq
    fi
    ;;
  *)
    echo "usage: bash ci/build-manylinux_2_28.sh [x86_64|armv8]" >&2
    exit 2
    ;;
esac
zig_version=0.17.0
if ! build/zig-venv/bin/python -c "import ziglang" 2>/dev/null; then
  rm -rf build/zig-venv
  python3 -m venv build/zig-venv
  build/zig-venv/bin/python -m pip install -q "ziglang==$zig_version"
fi
# test_package is skipped (-tf ""): Zig's driver refuses the generated retention flags
# (-Wl,--push-state), and it would test the wrong thing anyway: consumers build with their own
# compiler. tests/consumers and the model tests run on the wheel instead (docs/PLATFORMS.md).
# XNNPACK, pthreadpool, cpuinfo and FXdiv are built from Debian's source packages
# (recipes/*/source): their orig tarballs from the archive apt uses, SHA-256 checked.
# --update: the recipes are this tree's (recipes/ is the only remote), so a changed one is
# taken over the cache's copy.
# ETRT_JOBS: parallel build jobs (Conan's default: the machine's cores).
jobs=()
if [ -n "${ETRT_JOBS:-}" ]; then
  jobs=(-c "tools.build:jobs=$ETRT_JOBS")
fi
conan create . "${host[@]}" --build=missing --update -tf "" "${jobs[@]}"
python -m etpkg wheelify . "${host[@]}" --output-dir "$out" \
  --manylinux "${ETRT_MANYLINUX:-2_28}" -v
