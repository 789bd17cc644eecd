#!/usr/bin/env bash
# Builds the libFuzzer targets (etrt_fuzz_program, etrt_fuzz_data_map, etrt_fuzz_xnnpack) with
# clang 14, libFuzzer, ASan and UBSan (signed overflow included, nothing recoverable), and their
# seed corpora and dictionary from real exports:
#
#   bash tools/fuzz/build.sh [BUILD_DIR]             # default: build/fuzz
#   bash tools/fuzz/build.sh BUILD_DIR TARGET...     # other targets of the same build, no seeds
#
# BUILD_DIR/tools/fuzz/etrt_fuzz_*, BUILD_DIR/seeds/{program,data_map,xnnpack}/, BUILD_DIR/seeds/etrt.dict.
# The same build defines the tools and the C++ test programs: it is the tests' one ASan+UBSan
# build (tests/runtime_build.asan_build), so the libraries are compiled once for both.
# Installs clang 14 and libFuzzer from Debian when they are missing. Run a target with
# tools/fuzz/run.sh.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${1:-$ROOT/build/fuzz}"
shift || true
source "$ROOT/ci/env.sh"

FUZZER_LIB=/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a
if ! command -v clang++-14 >/dev/null || [ ! -e "$FUZZER_LIB" ]; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y -o DPkg::Lock::Timeout=600 \
    clang-14 libclang-rt-14-dev libfuzzer-14-dev
fi

# One build at a time in BUILD (a test fixture and a background pre-build may both ask).
mkdir -p "$BUILD"
exec 9>"$BUILD/.lock"
flock 9
# Coverage for libFuzzer in every library; the fuzz targets add the libFuzzer main, and the
# other programs run without it (the sanitizer runtime answers the coverage hooks).
if [ ! -f "$BUILD/build.ninja" ] || ! grep -q '^ETRT_BUILD_TESTS:BOOL=ON' "$BUILD/CMakeCache.txt"; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link -fno-sanitize-recover=all -gline-tables-only" \
    -DETRT_SANITIZE="address,undefined,signed-integer-overflow" \
    -DETRT_BUILD_FUZZERS=ON -DETRT_BUILD_TOOLS=ON -DETRT_BUILD_TESTS=ON >/dev/null
fi
if [ $# -gt 0 ]; then
  ninja -C "$BUILD" -j2 "$@"
  exit 0
fi
ninja -C "$BUILD" -j2 etrt_fuzz_program etrt_fuzz_data_map etrt_fuzz_xnnpack

# The seeds need none of the build: let go of it (the sanitizer tests use it meanwhile) and
# take a lock of their own.
exec 9>&-
exec 8>"$BUILD/.seeds-lock"
flock 8
SEEDS="$BUILD/seeds"
stale=0
for source in "$ROOT/tools/fuzz/make_seeds.py" "$ROOT/tests/models.py" "$ROOT"/schema/*.fbs "$ROOT/src/kernels/register.cpp"; do
  [ "$source" -nt "$SEEDS/etrt.dict" ] && stale=1
done
# The seeds are the exporter's output too.
if [ -e "$SEEDS/etrt.dict" ] && [ -n "$(find "$ROOT/python/etrt" -name '*.py' -newer "$SEEDS/etrt.dict" -print -quit)" ]; then
  stale=1
fi
if [ ! -e "$SEEDS/etrt.dict" ] || [ "$stale" = 1 ]; then
  rm -rf "$SEEDS.tmp"
  python -W ignore "$ROOT/tools/fuzz/make_seeds.py" "$SEEDS.tmp"
  rm -rf "$SEEDS"
  mv "$SEEDS.tmp" "$SEEDS"
fi
echo "fuzzers in $BUILD/tools/fuzz, seeds in $SEEDS"
