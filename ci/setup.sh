#!/usr/bin/env bash
# Makes a fresh Debian 12 machine ready to build and test: compilers from apt, a venv with
# the pinned Python tools, and a project-local Conan home that never contacts a remote
# server (recipes/ is a local-recipes-index). Safe to run again; quick when nothing changed.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ETRT_ROOT"

# Debian packages by the command that shows each is there; the aarch64 cross compilers and
# qemu-user serve the cross-built wheels (docs/CROSS.md); ccache lets the in-tree test build
# reuse what `conan create` compiled (ci/ccache.conf).
need_apt=()
for pair in g++:g++ make:make git:git aarch64-linux-gnu-g++:g++-aarch64-linux-gnu \
    qemu-aarch64:qemu-user ccache:ccache; do
  command -v "${pair%%:*}" >/dev/null || need_apt+=("${pair#*:}")
done
# The libraries the runtime builds against (what the Conan recipes' system packages install
# anyway): here first, so that the gate's in-tree ASan+UBSan build can start beside the
# package's build (it installs clang 14 and libFuzzer itself, tools/fuzz/build.sh).
for pkg in libxnnpack-dev libpthreadpool-dev libcpuinfo-dev libflatbuffers-dev \
    flatbuffers-compiler; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' ||
    need_apt+=("$pkg")
done
if [ ${#need_apt[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_apt[@]}"
fi

stamp=.venv/.requirements.sha256
want=$(sha256sum requirements.txt | cut -d' ' -f1)
if [ ! -x .venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  python3.11 -m venv .venv 2>/dev/null || python3 -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q --prefer-binary -r requirements.txt
  echo "$want" > "$stamp"
fi

# The release-path tests' servers, apart: conan-server bundles its own copy of Conan.
stamp=.venv-servers/.requirements.sha256
want=$(sha256sum tests/servers-requirements.txt | cut -d' ' -f1)
if [ ! -x .venv-servers/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  python3.11 -m venv .venv-servers 2>/dev/null || python3 -m venv .venv-servers
  .venv-servers/bin/python -m pip install -q --prefer-binary -r tests/servers-requirements.txt
  echo "$want" > "$stamp"
fi

# etrt's Python dependencies as wheels in a local dir: the release-path test installs etrt
# from its own package index and these with --find-links, no other index.
wheelhouse=build/wheelhouse
pins=$(grep -E '^(numpy|flatbuffers)==' requirements.txt | sort)
if [ "$(cat "$wheelhouse/.pins" 2>/dev/null)" != "$pins" ]; then
  rm -rf "$wheelhouse"
  # shellcheck disable=SC2086  # one argument per pin
  .venv/bin/python -m pip download -q --only-binary=:all: --no-deps -d "$wheelhouse" $pins
  echo "$pins" > "$wheelhouse/.pins"
fi

if [ ! -f "$CONAN_HOME/profiles/default" ]; then
  conan profile detect --name default >/dev/null 2>&1
  # Pin the standard the way the package is built, so test_package and consumers agree.
  sed -i 's/^compiler.cppstd=.*/compiler.cppstd=17/' "$CONAN_HOME/profiles/default"
fi
if conan remote list 2>/dev/null | grep -q '^conancenter'; then
  conan remote remove conancenter >/dev/null
fi
conan remote add etrt-recipes "$ETRT_ROOT" --type=local-recipes-index --force >/dev/null
cat > "$CONAN_HOME/global.conf" <<CONF
tools.system.package_manager:mode=install
tools.system.package_manager:sudo=False
core.net.http:timeout=10
CONF
