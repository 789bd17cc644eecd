"""The corpus: which recipe of tests/corpus/recipes each case builds, and how.

A case's recipe is conan-center-index's, adapted only in source()/conandata.yml (README.md
here says where each came from). Options are Conan's spellings; `replace_requires` lines go
into a profile's [replace_requires] where the recipe pins a version Debian does not ship.
`pkgconfig` names the modules the pkg-config build of test_package asks for, `run_args`
what the recipe's own test_package/conanfile.py passes to the program (relative to
test_package/), `cmake_defs` what that conanfile's generate() sets for the CMake project.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    name: str
    recipe: str
    pkgconfig: tuple[str, ...]
    shapes: tuple[str, ...]
    options: tuple[str, ...] = ()
    replace_requires: tuple[str, ...] = ()
    run_args: tuple[str, ...] = ()
    cmake_defs: tuple[str, ...] = ()
    ctest: bool = False  # test_package's conanfile runs ctest instead of the program
    pc_sources: tuple[str, ...] = ()  # the pkg-config build's sources, when not all of them
    wheelify_args: tuple[str, ...] = ()  # what a user passes to etpkg wheelify (--exclude ...)
    # Conan conf (-c:h) for create, wheelify and parity: what this offline machine needs
    # (libxml2: tools.gnu:pkg_config names the system's pkg-config instead of pkgconf's recipe)
    conf: tuple[str, ...] = ()
    gate: bool = False


def _shared(name: str) -> tuple[str, ...]:
    return (f"{name}/*:shared=True",)


# Tried and left out (docs/CORPUS.md, "Not in the corpus"), each for its recipe or Debian's
# tarball, not etpkg: libsodium 1.0.18 (Debian's .orig is the git tag's archive, without the
# `configure` the recipe runs), re2 20220601 (Debian's +dfsg tarball drops the generated
# re2/perl_groups.cc its CMakeLists compiles), sqlite3 3.40.1 (Debian's .orig is the source
# tree, not the amalgamation the recipe builds), lcms 2.14 (tool-requires meson, not here),
# libcurl 7.88.1 (tool-requires libtool/2.4.7, not here; its source() downloads curl.se's
# cacert.pem), gmp 6.2.1 (tool-requires m4/1.4.19, not here); xz_utils (Debian 12's 5.4.1 is
# in no conan-center-index config.yml) and zlib-ng (not in Debian 12) have no recipe to try.
CASES: tuple[Case, ...] = (
    Case("zlib", "zlib", ("zlib",), ("C", "find-mode-both"), _shared("zlib")),
    Case("zlib-static", "zlib", ("zlib",), ("C", "static", "find-mode-both")),
    Case(
        "fmt",
        "fmt",
        ("fmt",),
        ("C++", "version-compat", "target-aliases"),
        _shared("fmt"),
        cmake_defs=("FMT_HEADER_ONLY=False",),
    ),
    Case(
        "fmt-header-only",
        "fmt",
        ("fmt",),
        ("header-only", "version-compat"),
        ("fmt/*:header_only=True",),
        cmake_defs=("FMT_HEADER_ONLY=True",),
    ),
    Case(
        "spdlog",
        "spdlog",
        ("spdlog",),
        ("C++", "requires", "replace-requires"),
        ("*:shared=True",),
        replace_requires=("fmt/8.1.1: fmt/9.1.0",),
        cmake_defs=("SPDLOG_HEADER_ONLY=False", "SPDLOG_USE_STD_FORMAT=False"),
    ),
    Case("nlohmann_json", "nlohmann_json", ("nlohmann_json",), ("header-only",)),
    Case("zstd", "zstd", ("libzstd",), ("C", "executables", "components"), _shared("zstd")),
    Case(
        "libpng",
        "libpng",
        ("libpng", "libpng16"),
        ("C", "find-mode-both", "pkg-config-aliases", "requires"),
        ("*:shared=True",),
        gate=True,
    ),
    Case(
        "libpng-static-zlib",
        "libpng",
        ("libpng", "libpng16"),
        ("C", "requires", "static-requirement"),
        # A shared library on a static requirement: zlib's archive is inside libpng.so, so
        # consumers link no zlib (Conan's libs trait) and the wheel carries no libz.so.
        ("libpng/*:shared=True", "zlib/*:shared=False"),
    ),
    Case(
        "freetype",
        "freetype",
        ("freetype2",),
        ("C", "three-level-chain", "build-modules", "find-mode-both", "target-aliases"),
        ("*:shared=True", "freetype/*:with_brotli=False", "freetype/*:with_bzip2=False"),
        run_args=("OpenSans-Bold.ttf",),
    ),
    Case(
        "bzip2",
        "bzip2",
        ("bzip2",),
        ("C", "executables", "build-modules", "find-mode-both"),
        _shared("bzip2"),
        gate=True,
    ),
    Case("expat", "expat", ("expat",), ("C", "find-mode-both"), _shared("expat")),
    Case(
        "lz4",
        "lz4",
        ("liblz4",),
        ("C", "target-aliases"),
        _shared("lz4"),
        cmake_defs=("TEST_SHARED_LIB=True",),
    ),
    Case("libyaml", "libyaml", ("libyaml",), ("C", "static"), gate=True),
    Case("cjson", "cjson", ("libcjson",), ("C", "components"), _shared("cjson")),
    Case("jsoncpp", "jsoncpp", ("jsoncpp",), ("C++", "target-aliases"), _shared("jsoncpp")),
    Case("tinyxml2", "tinyxml2", ("tinyxml2",), ("C++",), _shared("tinyxml2")),
    Case("yaml-cpp", "yaml-cpp", ("yaml-cpp",), ("C++", "target-aliases"), _shared("yaml-cpp")),
    Case(
        "pcre2",
        "pcre2",
        ("libpcre2-8", "libpcre2-posix"),
        ("C", "components", "executables", "requires"),
        _shared("pcre2"),
        # bin/pcre2-config is a script holding the package folder (prefix=): left out.
        wheelify_args=("--exclude", "bin/pcre2-config"),
    ),
    Case("libwebp", "libwebp", ("libwebp",), ("C", "components"), _shared("libwebp")),
    Case("gflags", "gflags", ("gflags",), ("C++", "target-aliases"), _shared("gflags")),
    Case(
        "glog",
        "glog",
        ("libglog",),
        ("C++", "requires"),
        ("*:shared=True", "glog/*:with_unwind=False"),
    ),
    Case("ms-gsl", "ms-gsl", ("ms-gsl",), ("header-only", "components"), gate=True),
    Case("doctest", "doctest", ("doctest",), ("header-only", "build-modules")),
    Case(
        "catch2",
        "catch2",
        ("catch2",),
        ("header-only", "build-modules", "components"),
        cmake_defs=("WITH_MAIN=False", "WITH_BENCHMARK=False", "WITH_PREFIX=False"),
        ctest=True,
        pc_sources=("000-CatchMain.cpp", "100-standalone.cpp"),  # its `standalone` target
    ),
    Case(
        "double-conversion",
        "double-conversion",
        ("double-conversion",),
        ("C++",),
        _shared("double-conversion"),
    ),
    Case("snappy", "snappy", ("snappy",), ("C++", "components"), _shared("snappy"), gate=True),
    Case("libdeflate", "libdeflate", ("libdeflate",), ("C",), _shared("libdeflate")),
    Case("xxhash", "xxhash", ("libxxhash",), ("C", "executables"), _shared("xxhash")),
    Case(
        "cli11",
        "cli11",
        ("CLI11",),
        ("C++", "static"),
        ("cli11/*:header_only=False",),
    ),
    Case("pugixml", "pugixml", ("pugixml",), ("C++", "target-aliases"), _shared("pugixml")),
    Case(
        "giflib",
        "giflib",
        ("giflib",),
        ("C", "find-mode-both"),
        _shared("giflib"),
        run_args=("testimg.gif",),
    ),
    Case(
        "libjpeg-turbo",
        "libjpeg-turbo",
        ("libjpeg", "libturbojpeg"),
        ("C", "components", "find-mode-both"),
        ("*:shared=True", "libjpeg-turbo/*:SIMD=False"),
    ),
    Case("c-ares", "c-ares", ("libcares",), ("C", "components", "executables"), _shared("c-ares")),
    Case("libuv", "libuv", ("libuv",), ("C",), _shared("libuv")),
    Case("json-c", "json-c", ("json-c",), ("C",), _shared("json-c")),
    Case(
        "gtest",
        "gtest",
        ("gtest", "gmock"),
        ("C++", "components", "find-mode-both", "target-aliases", "component-defines"),
        ("gtest/*:shared=True",),  # GTEST_LINKED_AS_SHARED_LIBRARY=1 on one component
        cmake_defs=("WITH_GMOCK=True", "WITH_MAIN=True"),
    ),
    Case(
        "soxr",
        "soxr",
        ("soxr", "soxr-lsr"),
        ("C", "static", "components", "link-flags"),
        ("soxr/*:with_openmp=True",),  # sharedlinkflags/exelinkflags -fopenmp
        ctest=True,
    ),
    Case(
        "soundtouch",
        "soundtouch",
        ("soundtouch",),
        ("C++", "components", "executables", "root-and-components"),
        (
            "soundtouch/*:shared=True",
            "soundtouch/*:with_dll=True",  # a second component, SoundTouch::SoundTouchDLL
            "soundtouch/*:with_util=True",  # the soundstretch program
        ),
    ),
    Case(
        "brotli",
        "brotli",
        ("libbrotlienc", "libbrotlidec"),
        ("C", "components", "root-target"),
        _shared("brotli"),  # brotli::brotli (all components) over brotlicommon/dec/enc
    ),
    Case(
        "ogg",
        "ogg",
        ("ogg",),
        ("C", "components", "root-and-components"),
        _shared("ogg"),  # root and its one component both named Ogg::ogg / ogg
    ),
    Case(
        "vorbis",
        "vorbis",
        ("vorbisenc", "vorbisfile"),
        ("C", "components", "requires", "interface-components"),
        ("*:shared=True",),  # Vorbis::vorbis requires ogg::ogg; *-alias components hold no libs
        # test_package asks find_package(Vorbis REQUIRED Enc): upstream VorbisConfig's names
        # for vorbisenc and vorbisfile, which the recipe cannot declare (its TODO says so).
        wheelify_args=(
            "--component-alias",
            "Enc=vorbisenc",
            "--component-alias",
            "File=vorbisfile",
        ),
    ),
    Case(
        "benchmark",
        "benchmark",
        ("benchmark",),
        ("C++", "static", "components", "root-target"),
        # benchmark::benchmark and benchmark::benchmark_main, the root's target naming the latter
    ),
    Case(
        "openjpeg",
        "openjpeg",
        ("libopenjp2",),
        ("C", "build-modules"),
        _shared("openjpeg"),  # target `openjp2` (no namespace), OPENJPEG_* from a build module
    ),
    Case("jansson", "jansson", ("jansson",), ("C",), _shared("jansson")),
    Case("opus", "opus", ("opus",), ("C", "components"), _shared("opus")),
    Case(
        "flac",
        "flac",
        ("flac++",),
        ("C++", "components", "requires", "executables"),
        ("*:shared=True",),  # FLAC::FLAC requires ogg::ogg; FLAC::FLAC++ on FLAC::FLAC
    ),
    Case(
        "libxml2",
        "libxml2",
        ("libxml-2.0",),
        ("C", "find-mode-both", "build-modules", "requires", "executables", "autotools"),
        ("*:shared=True", "libxml2/*:iconv=False"),  # no libiconv recipe here
        run_args=("books.xml",),
        conf=("tools.gnu:pkg_config=pkg-config",),  # else it tool-requires pkgconf/2.1.0
        # bin/xml2-config is a script holding the package folder (prefix=): left out.
        wheelify_args=("--exclude", "bin/xml2-config"),
    ),
    Case(
        "libtiff",
        "libtiff",
        ("libtiff-4",),
        ("C++", "find-mode-both", "requires", "replace-requires"),
        (
            "*:shared=True",
            "libtiff/*:jpeg=libjpeg-turbo",
            "libjpeg-turbo/*:SIMD=False",
            "libtiff/*:lzma=False",  # no xz_utils recipe here
            "libtiff/*:jbig=False",  # no jbig recipe here
            "libtiff/*:libdeflate=False",  # its range >=1.19 excludes Debian's 1.14
        ),
        # requirements on zlib, zstd, libjpeg-turbo and libwebp: Debian's versions of the last two
        replace_requires=(
            "libjpeg-turbo/3.0.2: libjpeg-turbo/2.1.5",
            "libwebp/1.3.2: libwebp/1.2.4",
        ),
    ),
    Case(
        "utf8proc",
        "utf8proc",
        ("libutf8proc",),
        ("C", "static", "defines"),  # UTF8PROC_STATIC on the root cpp_info
    ),
    Case(
        "openssl",
        "openssl",
        ("openssl",),
        (
            "C",
            "components",
            "find-mode-both",
            "build-modules",
            "requires",
            "executables",
            "plugins",
            "run-env",
        ),
        ("*:shared=True",),  # OpenSSL::SSL / OpenSSL::Crypto (libssl, libcrypto) on zlib
        # its test_package's generate(): the legacy provider with MD4 and RIPEMD160 (defaults)
        cmake_defs=(
            "OPENSSL_WITH_LEGACY=True",
            "OPENSSL_WITH_MD4=True",
            "OPENSSL_WITH_RIPEMD160=True",
        ),
    ),
    Case(
        "libevent",
        "libevent",
        ("libevent",),
        ("C", "components", "requires", "sdk-on-sdks"),
        ("*:shared=True",),
        # libevent::core/extra/pthreads/openssl, one .pc each (libevent_core, ...); its openssl
        # component requires openssl::openssl, a package with components of its own
    ),
    Case(
        "libunwind",
        "libunwind",
        ("libunwind",),
        ("C", "components", "requires", "autotools", "copied-library"),
        ("*:shared=True", "libunwind/*:minidebuginfo=False"),  # no xz_utils >=5.4.5 here
        # components unwind/generic/ptrace/setjmp/coredump, no target names of their own;
        # test_package links the root's libunwind::libunwind. libunwind-generic.so is a copy
        # of libunwind-x86_64.so (the recipe's package() replaces the symlink)
    ),
    Case(
        "lzo",
        "lzo",
        ("lzo2",),
        ("C", "include-dirs"),
        _shared("lzo"),  # includedirs include and include/lzo: test_package includes "lzo1f.h"
    ),
    Case(
        "libarchive",
        "libarchive",
        ("libarchive",),
        ("C", "find-mode-both", "requires", "replace-requires"),
        (
            "*:shared=True",
            "libarchive/*:with_acl=False",  # no libacl headers on this machine
            "libarchive/*:with_iconv=False",  # no libiconv recipe here
            "libarchive/*:with_bzip2=True",
            "libarchive/*:with_lz4=True",
            "libarchive/*:with_lzo=True",
            "libarchive/*:with_zstd=True",
        ),
        # LibArchive::LibArchive (config and Find module) on zlib, bzip2, lz4, lzo and zstd:
        # an SDK on five corpus SDKs; the recipe pins zstd/1.5.5, Debian ships 1.5.4
        replace_requires=("zstd/1.5.5: zstd/1.5.4",),
    ),
    Case(
        "abseil",
        "abseil",
        ("absl_strings", "absl_flat_hash_map", "absl_flat_hash_set", "absl_int128", "absl_time"),
        ("C++", "components", "build-modules"),
        _shared("abseil"),
        # dozens of components (absl::strings, absl::time, ...) read from a JSON file the
        # recipe writes, with requires between them; test_package also links absl::absl
        run_args=("-s",),
        cmake_defs=("CXX20_SUPPORTED=True",),
    ),
)


def by_name(name: str) -> Case:
    for case in CASES:
        if case.name == name:
            return case
    raise KeyError(f"no corpus case {name!r}; the cases are {', '.join(c.name for c in CASES)}")
