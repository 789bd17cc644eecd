"""The installed wheel, its consumers' build dirs and the poisoned PATH they configure with.

The wheel is installed with `pip install --no-deps` into a fresh venv under a path with a space;
every configure runs with a python3 that logs and fails first on PATH (a config must not run
Python). A wheel for another arch is installed for its platform (pip --platform --target) and
its consumers are built with the host's cross compilers (a CMake toolchain file) and run
through qemu-user (runner.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from etpkg._internal import target
from etpkg._internal.errors import ToolError, VerifyError, WheelError
from etpkg._internal.model import Sdk
from etpkg._internal.plan.cmake import libs_dir_name
from etpkg._internal.verify.consumers import render
from etpkg._internal.verify.runner import CheckFailed, run
from etpkg._internal.verify.tools import Cmake, ensure_cmake
from etpkg._internal.verify.wheel import read_sdk


@dataclass
class Workspace:
    wheel: Path
    root: Path  # a path with a space in it
    sdk: Sdk  # read back from the wheel's manifest
    cmake_cache: Path
    # Where the SDK wheels it depends on are found (default: the wheel's own directory).
    find_links: tuple[Path, ...] = ()
    host: target.Host | None = None  # a foreign arch's wheel: its compilers and files
    venv: Path = field(init=False)
    site: Path = field(init=False)
    poison: Path = field(init=False)

    def __post_init__(self) -> None:
        self.venv = self.root / "consumer venv"
        self.poison = self.root / "broken python"

    @property
    def pkg_root(self) -> Path:
        """The installed package: <site-packages>/<import name>."""
        return self.site / self.sdk.import_name

    @property
    def lib_dir(self) -> Path:
        return self.pkg_root / "lib"

    @property
    def include_dir(self) -> Path:
        return self.pkg_root / "include"

    @property
    def grafted_dir(self) -> Path:
        """Where auditwheel grafted external libraries: <site-packages>/<dist>.libs."""
        return self.site / libs_dir_name(self.sdk)

    @property
    def wheel_lib_dirs(self) -> tuple[Path, ...]:
        """Where an app run against the installed wheel loads its libraries from: its lib
        dir, its grafted libraries, the lib dirs of the SDK wheels it depends on."""
        siblings = tuple(self.site / r.import_name / "lib" for r in self.sdk.wheel_requires)
        return (self.lib_dir, self.grafted_dir, *siblings)

    @property
    def pkg_config_path(self) -> str:
        """PKG_CONFIG_PATH holding its .pc files and those of the SDK wheels it depends on."""
        dirs = [self.pkg_root, *(self.site / r.import_name for r in self.sdk.wheel_requires)]
        return os.pathsep.join(str(d / "lib" / "pkgconfig") for d in dirs)

    @property
    def c_compiler(self) -> str:
        return self.host.c_compiler if self.host is not None else "gcc"

    @property
    def cxx_compiler(self) -> str:
        return self.host.cxx_compiler if self.host is not None else "g++"

    @property
    def toolchain_file(self) -> Path:
        return self.root / "toolchain.cmake"

    @property
    def python_log(self) -> Path:
        return self.poison / "invocations.log"

    def install(self) -> None:
        """pip install --no-deps into a fresh venv; a python3 that logs and fails first on PATH."""
        if self.venv.exists():
            shutil.rmtree(self.venv)
        run([sys.executable, "-m", "venv", "--without-pip", self.venv])
        py = self.venv / "bin" / "python"
        self.site = Path(
            run([py, "-c", "import sysconfig; print(sysconfig.get_path('platlib'))"]).stdout.strip()
        )
        self.reinstall()
        if self.host is not None:
            self.toolchain_file.write_text(
                render("toolchain.cmake.j2", host=self.host, emulator=self.host.emulator())
            )
        if not (self.pkg_root / "lib" / "cmake" / self.sdk.cmake_file_name).is_dir():
            raise WheelError(
                f"{self.wheel.name} installed no "
                f"{self.sdk.import_name}/lib/cmake/{self.sdk.cmake_file_name}"
            )
        self.poison.mkdir(parents=True, exist_ok=True)
        for name in ("python", "python3", f"python3.{sys.version_info.minor}"):
            script = self.poison / name
            script.write_text(render("broken_python.sh.j2", log=self.python_log, name=name))
            script.chmod(0o755)

    def reinstall(self) -> None:
        if self.sdk.wheel_requires:  # the SDK wheels it depends on, each within its range
            links = self.find_links or (self.wheel.parent,)
            run(
                [
                    sys.executable, "-m", "pip", "--python", self.venv / "bin" / "python",
                    "install", "--quiet", "--no-deps", "--no-index",
                    *(a for d in links for a in ("--find-links", d)),
                    *(r.requirement for r in self.sdk.wheel_requires),
                ]
            )  # fmt: skip
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
                # pip installs only this machine's wheels into a venv; another arch's goes
                # into its site-packages as a target, for that platform.
                *(
                    [
                        *("--only-binary=:all:", "--platform", self._platform(), "--upgrade"),
                        *("--target", str(self.site)),
                    ]
                    if self.host is not None
                    else []
                ),
                self.wheel,
            ]
        )

    def _platform(self) -> str:
        return next(iter(parse_wheel_filename(self.wheel.name)[3])).platform

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
                self.sdk.distribution,
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
                # The package's own config answers, never CMake's Find<Name> of the same name
                # (cmake_find_mode both: zlib's ZLIB); parity checks the wheel's Find module.
                "-DCMAKE_FIND_PACKAGE_PREFER_CONFIG=ON",
                # A request the config refuses falls back to module mode: the wheel's own
                # Find module then, never CMake's (which would find the wheel's files itself).
                *(
                    [f"-DCMAKE_MODULE_PATH={self.pkg_root / 'lib' / 'cmake' / 'modules'}"]
                    if (self.pkg_root / "lib" / "cmake" / "modules").is_dir()
                    else []
                ),
                "-DCMAKE_BUILD_TYPE=Release",
                *(
                    [f"-DCMAKE_TOOLCHAIN_FILE={self.toolchain_file}"]
                    if self.host is not None
                    else []
                ),
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


def prepare(
    wheel: Path, work: Path, cmake_cache: Path, find_links: tuple[Path, ...] = ()
) -> Workspace:
    """Reads the wheel's manifest; installs it (and the SDK wheels it depends on, from
    find_links) under work/'etpkg verify' (has a space)."""
    wheel = wheel.resolve()
    if not wheel.is_file():
        raise WheelError(f"no such wheel: {wheel}")
    sdk = read_sdk(wheel)
    root = work.resolve() / "etpkg verify"
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    ws = Workspace(
        wheel,
        root,
        sdk,
        cmake_cache.resolve(),
        tuple(d.resolve() for d in find_links),
        host=wheel_host(wheel),
    )
    ws.install()
    return ws


def wheel_host(wheel: Path) -> target.Host | None:
    """The host of a wheel for another arch (its compilers found or a ToolError saying which
    is missing); None for this machine's wheels and pure ones."""
    try:
        tags = parse_wheel_filename(wheel.name)[3]
    except InvalidWheelFilename as exc:
        raise WheelError(f"{wheel.name}: {exc}") from exc
    for tag in tags:
        arch = tag.platform.split("_", 3)[-1] if tag.platform.startswith("manylinux_") else ""
        arch = arch or tag.platform.removeprefix("linux_")
        if tag.platform != "any" and target.is_foreign(arch):
            try:
                return target.find_host(arch)
            except ToolError as exc:
                raise VerifyError(
                    f"cannot build the consumers of {wheel.name} on this "
                    f"{target.this_machine()} machine: {exc}"
                ) from exc
    return None
