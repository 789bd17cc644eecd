#!/usr/bin/env bash
# The aarch64 wheel, cross-built on this x86_64 machine: etrt's Conan package for armv8
# (Debian's cross compilers; XNNPACK, pthreadpool and cpuinfo from the Debian archive's arm64
# packages; test_package runs under qemu-user), then dist/aarch64/etrt-*-manylinux_*_aarch64.whl.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
bash "$ETRT_ROOT/ci/setup.sh"
cd "$ETRT_ROOT"
# The arm64 .deb files come through the machine's apt (recipes/debian-debs).
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  dpkg --add-architecture arm64
  apt-get update -qq
fi
host=(-pr:h ci/profiles/armv8 -pr:b default)
# --update: the recipes in recipes/ as they are now, not a copy cached earlier.
conan create . "${host[@]}" --build=missing --update
python -m etpkg wheelify . "${host[@]}" --output-dir dist/aarch64/
