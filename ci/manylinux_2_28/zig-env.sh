# Shared by zig-cc and zig-c++: where Zig and GCC's libstdc++ are, and what a link step gets.
# Both pass -g0 first (Zig's driver adds debug info unless told, and with it the build
# machine's header paths); a -g of the build's own still wins.
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ZIG_TARGET="${ETRT_ZIG_TARGET:-x86_64-linux-gnu.2.28}"
ZIG="${ETRT_ZIG:-$(ls "$HERE"/../../build/zig-venv/lib/python3*/site-packages/ziglang/zig 2>/dev/null | head -1)}"
if [ ! -x "$ZIG" ]; then
  echo "zig not found: run ci/build-manylinux_2_28.sh (it installs ziglang into build/zig-venv)" >&2
  exit 1
fi
# GCC's libstdc++ and libgcc of the target: the machine's own for x86_64, Debian's cross
# packages (g++-aarch64-linux-gnu) for aarch64.
case "$ZIG_TARGET" in
  x86_64-*)
    GCC=gcc
    GXX_VERSION="$(g++ -dumpversion)"
    GXX_INCLUDE_ARCH="/usr/include/x86_64-linux-gnu/c++/$GXX_VERSION"
    ARCH_LIBDIR="/usr/lib/x86_64-linux-gnu"
    ;;
  aarch64-*)
    GCC=aarch64-linux-gnu-gcc
    GXX_VERSION="$(aarch64-linux-gnu-g++ -dumpversion)"
    GXX_INCLUDE_ARCH="/usr/aarch64-linux-gnu/include/c++/$GXX_VERSION/aarch64-linux-gnu"
    ARCH_LIBDIR="/usr/aarch64-linux-gnu/lib"
    ;;
  *)
    echo "zig-env.sh: no GCC runtime known for target $ZIG_TARGET" >&2
    exit 1
    ;;
esac
GXX_INCLUDE="/usr/include/c++/$GXX_VERSION"
LIBGCC_A="$($GCC -print-libgcc-file-name)"

# Arguments appended to a link step (none when compiling or preprocessing): Debian's library
# dir last (libc itself always comes from Zig's stubs), and for C++ the shared libstdc++ and
# libgcc_s by path (Zig reads -lstdc++ as its own libc++).
link_tail() {
  local arg cxx="$1" strip=-Wl,--strip-debug
  shift
  for arg in "$@"; do
    case "$arg" in
      -c | -E | -S | -M | -MM) return 0 ;;
      -g0) ;;
      -g*) strip= ;;
    esac
  done
  # The glibc pieces Zig links statically (libc_nonshared: fstat and the like) carry debug
  # info naming Zig's install folder; a build that asked for none gets none.
  echo "$strip"
  # An executable (CMake's compiler check, test_package) runs here, on this machine's glibc,
  # whose libstdc++ needs more than the 2.28 stubs define.
  echo "-L$ARCH_LIBDIR -Wl,--allow-shlib-undefined"
  # GCC's static libgcc, as gcc links it: __cpu_model and __cpu_indicator_init, which clang's
  # __builtin_cpu_supports expects beside the library (hidden), are not in Zig's compiler-rt.
  echo "$LIBGCC_A"
  if [ "$cxx" = c++ ]; then
    echo "$ARCH_LIBDIR/libstdc++.so.6 $ARCH_LIBDIR/libgcc_s.so.1"
  fi
}

# The arguments without -lstdc++ (given by path instead, see link_tail) and -stdlib= (Conan's
# for clang with libstdc++; zig c++ takes none, -nostdinc++ and the -I dirs say it).
without_lstdcxx() {
  local arg
  for arg in "$@"; do
    case "$arg" in
      -lstdc++ | -stdlib=*) ;;
      *) printf '%s\n' "$arg" ;;
    esac
  done
}

# GCC's -march=armv8.2-a+fp16+... (XNNPACK's aarch64 microkernels) in Zig's spelling: its
# driver reads -march as a CPU name and refuses it; -mcpu=generic+v8_2a+fullfp16 says the same.
zig_march() {
  local arg
  for arg in "$@"; do
    case "$arg" in
      -march=armv8*)
        local spec="${arg#-march=armv}" out feature
        IFS=+ read -r -a parts <<<"$spec"
        out="-mcpu=generic+v${parts[0]%-a}a"
        out="${out//./_}"
        for feature in "${parts[@]:1}"; do
          case "$feature" in
            fp16) out+="+fullfp16" ;;
            *) out+="+$feature" ;;
          esac
        done
        printf '%s\n' "$out"
        ;;
      *) printf '%s\n' "$arg" ;;
    esac
  done
}

# Questions about the target's installed files (-print-file-name=libc.so.6, -print-search-dirs:
# what etpkg asks a cross compiler) go to the target's GCC: Zig's driver cannot answer them, and
# the C and C++ runtimes the wheel runs on at those paths are GCC's (Debian's cross packages).
answer_queries() {
  local arg
  [ $# -gt 0 ] || return 0
  for arg in "$@"; do
    case "$arg" in
      -print-file-name=* | -print-search-dirs) ;;
      *) return 0 ;;
    esac
  done
  exec "$GCC" "$@"
}
