#!/usr/bin/env bash
# Builds the libFuzzer targets (etrt_fuzz_program, etrt_fuzz_data_map, etrt_fuzz_xnnpack) with
# clang 14, libFuzzer, ASan and UBSan (signed overflow included, nothing recoverable), and their
# seed corpora and dictionary from real exports:
#
#   bash tools/fuzz/build.sh [BUILD_DIR]      # default: build/fuzz
#
# BUILD_DIR/tools/fuzz/etrt_fuzz_*, BUILD_DIR/seeds/{program,data_map,xnnpack}/, BUILD_DIR/seeds/etrt.dict.
# Installs clang 14 and libFuzzer from Debian when they are missing. Run a target with
# tools/fuzz/run.sh.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${1:-$ROOT/build/fuzz}"
source "$ROOT/ci/env.sh"

FUZZER_LIB=/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a
if ! command -v clang++-14 >/dev/null || [ ! -e "$FUZZER_LIB" ]; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y -o DPkg::Lock::Timeout=600 \
    clang-14 libclang-rt-14-dev libfuzzer-14-dev
fi

# Coverage for libFuzzer in every library; the fuzz targets add the libFuzzer main.
cmake -S "$ROOT" -B "$BUILD" -G Ninja \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link -fno-sanitize-recover=all -gline-tables-only" \
  -DETRT_SANITIZE="address,undefined,signed-integer-overflow" \
  -DETRT_BUILD_FUZZERS=ON >/dev/null
ninja -C "$BUILD" -j2 etrt_fuzz_program etrt_fuzz_data_map etrt_fuzz_xnnpack

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
