"""etpkg: turn a Conan package of a native SDK into a manylinux wheel that is also a C++ SDK.

The public API is what this module exports (see the README); everything under etpkg._internal
may change without notice. etpkg.testing helps an SDK's own consumer tests.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from etpkg._internal.errors import (
    CheckError,
    ElfError,
    EtpkgError,
    LayoutError,
    OutputError,
    PackageError,
    PolicyError,
    PublishError,
    RemoteError,
    ToolError,
    VerifyError,
    WheelError,
)
from etpkg._internal.version import VERSION as __version__

if TYPE_CHECKING:
    from etpkg._internal.conan import Selection
    from etpkg._internal.model import Component, Dependency, Sdk
    from etpkg._internal.parity.probe import ParityReport
    from etpkg._internal.publish import Published
    from etpkg._internal.verify.report import CheckResult, Report

# Loaded on first use, so `import etpkg` (and `python -m etpkg` before it can catch Ctrl-C)
# stays quick: the model pulls in Conan's modules.
_LAZY = {
    "Component": "etpkg._internal.model",
    "Dependency": "etpkg._internal.model",
    "Sdk": "etpkg._internal.model",
    "ParityReport": "etpkg._internal.parity.probe",
    "Published": "etpkg._internal.publish",
    "CheckResult": "etpkg._internal.verify.report",
    "Report": "etpkg._internal.verify.report",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'etpkg' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "CheckError",
    "CheckResult",
    "Component",
    "Dependency",
    "ElfError",
    "EtpkgError",
    "LayoutError",
    "OutputError",
    "PackageError",
    "ParityReport",
    "PolicyError",
    "PublishError",
    "Published",
    "RemoteError",
    "Report",
    "Sdk",
    "ToolError",
    "VerifyError",
    "WheelError",
    "__version__",
    "parity",
    "publish",
    "read_package",
    "verify",
    "wheelify",
]


def _selection(
    profiles: Sequence[str], settings: Sequence[str], options: Sequence[str]
) -> Selection:
    for what, value in (("profiles", profiles), ("settings", settings), ("options", options)):
        if isinstance(value, str):
            raise TypeError(f"{what} must be a sequence of strings, not one string")
    from etpkg._internal.conan import Selection

    return Selection(tuple(profiles), tuple(settings), tuple(options))


def read_package(
    spec: str | Path,
    *,
    profiles: Sequence[str] = (),
    settings: Sequence[str] = (),
    options: Sequence[str] = (),
) -> Sdk:
    """The Sdk a built Conan package describes. `spec` is a reference ("name/version") or a
    conanfile directory; the package must be in the Conan cache (CONAN_HOME). The binary is
    chosen as `conan install` does: `profiles` (default: the default profile), then
    `settings` ("build_type=Debug") and `options` ("*:shared=True"). Raises PackageError."""
    from etpkg._internal.conan import read_package as read

    return read(str(spec), _selection(profiles, settings, options)).sdk


def wheelify(
    spec: str | Path = ".",
    output_dir: str | Path = "dist",
    *,
    remote: str | None = None,
    update: bool = False,
    profiles: Sequence[str] = (),
    settings: Sequence[str] = (),
    options: Sequence[str] = (),
    strict: bool = False,
    conan_args: Sequence[str] = (),
    exclude: Sequence[str] = (),
    depend: Sequence[str] = (),
    manylinux: str | None = None,
) -> Path:
    """Builds the wheel of a Conan package into output_dir and returns its path: manylinux for
    a package with binaries, py3-none-any for a header-only one. A build-machine path in an
    ELF file's string data is logged as a note (refused with `strict`); anywhere else (configs,
    .pc files, scripts, RUNPATH) it is a CheckError. `conan_args` takes Conan's other spellings
    as conan create does (["-pr:b", "x", "-s:h", "build_type=Debug", "-c", "...",
    "--build=missing"]); a malformed one raises PackageError. `exclude`: globs of paths inside
    the package folder (e.g. "bin/pcre2-config") left out of the wheel, each logged; one that
    matches nothing raises LayoutError. `depend`: required packages reached as SDK wheels of
    their own instead of grafted ("fmt" or "fmt=<distribution>"; docs/DEPENDENCIES.md).
    matches nothing raises LayoutError. `manylinux` ("2_28") is the platform the wheel must
    get (default: the package's etpkg_manylinux, else the oldest its files meet); files that
    need newer symbol versions raise PolicyError naming them.

    The binary is chosen as `conan install` does: `profiles`, `settings`, `options` (see
    read_package). With `remote` (a Conan remote's name), the package and its dependencies
    are first installed from that remote into the Conan cache (`update`: even when the cache
    has them, take newer revisions); RemoteError says why the remote could not give them.

    All work happens in a temporary directory; output_dir gains the whole wheel or stays
    unchanged. Raises an EtpkgError subclass (PackageError, ElfError, ToolError, CheckError,
    PolicyError, OutputError)."""
    from etpkg._internal.wheelify import wheelify as run

    return run(
        str(spec),
        Path(output_dir),
        remote=remote,
        update=update,
        selection=_conan_selection(_selection(profiles, settings, options), conan_args),
        strict=strict,
        exclude=[exclude] if isinstance(exclude, str) else list(exclude),
        depend=[depend] if isinstance(depend, str) else list(depend),
        manylinux=manylinux,
    )


def _conan_selection(base: Selection, conan_args: Sequence[str]) -> Selection:
    from etpkg._internal.conan import Selection
    from etpkg._internal.conanargs import as_pairs

    if isinstance(conan_args, str):
        raise TypeError("conan_args must be a sequence of strings, not one string")
    try:
        return Selection.from_conan_args(as_pairs(conan_args), base)
    except ValueError as exc:
        raise PackageError(str(exc)) from exc


def verify(
    wheel: str | Path,
    *,
    quick: bool = False,
    cmake_versions: Sequence[str] | None = None,
    exempt_headers: Sequence[str] = (),
    strict_headers: bool = False,
    work_dir: str | Path | None = None,
    cmake_cache: str | Path | None = None,
    only: Sequence[str] = (),
) -> Report:
    """Proves that a wheel made by wheelify works for C++ consumers: installs it into a fresh
    venv under work_dir (default: a temporary directory, removed at the end) and builds
    consumer projects against it with each CMake version (default: the full matrix; quick:
    one CMake and generator), pkg-config and the entry points. The CMake versions live in
    venvs under cmake_cache (default: $ETPKG_CACHE_DIR, else $XDG_CACHE_HOME/etpkg, else
    ~/.cache/etpkg; then cmake-venvs). Returns a Report (report.ok, report.results); a failed
    check is a result, not an exception. Raises WheelError for an unreadable or corrupt
    wheel, VerifyError when a tool cannot be set up. Headers that do not compile on their own
    are a note unless strict_headers or exempt_headers is given: then each header not listed must
    compile alone and each listed one must still fail. `only` names the checks to run instead of
    all (`etpkg verify --help` lists their keys; an unknown one raises VerifyError)."""
    from etpkg._internal.verify.suite import verify_wheel

    return verify_wheel(
        Path(wheel),
        quick=quick,
        cmake_versions=cmake_versions,
        exempt_headers=exempt_headers,
        strict_headers=strict_headers,
        work_dir=None if work_dir is None else Path(work_dir),
        cmake_cache=None if cmake_cache is None else Path(cmake_cache),
        only=only,
    )


def publish(
    wheels: Sequence[str | Path],
    repository: str,
    *,
    username: str | None = None,
    password: str | None = None,
    index_url: str | None = None,
) -> list[Published]:
    """Uploads wheels etpkg made to a package index through twine, after checking that each
    is intact and etpkg's (RECORD, manifest, WHEEL generator, SBOM): one bad wheel uploads
    nothing. `repository` is an upload URL or a ~/.pypirc name; credentials as twine takes
    them when not given (TWINE_USERNAME/TWINE_PASSWORD, ~/.pypirc, keyring), never prompted.
    A file the index already serves byte for byte is skipped (Published.skipped); `index_url`
    is its simple index when not <upload URL>/simple/. Raises PublishError."""
    from etpkg._internal.publish import publish as run

    return run(
        [Path(w) for w in wheels],
        repository,
        username=username,
        password=password,
        index_url=index_url,
    )


def parity(
    wheel: str | Path,
    *,
    reference: str | None = None,
    conan_args: Sequence[str] = (),
    work_dir: str | Path | None = None,
) -> ParityReport:
    """Compares what a consumer of the wheel sees with what a consumer of Conan's CMakeDeps and
    PkgConfigDeps output sees for `reference` (default: the wheel's name/version; its binary
    must be in the Conan cache, chosen by `conan_args` as `conan install` takes them, e.g.
    ["-pr:h", "x", "-o", "*:shared=True"]): imported targets with their link closure, include
    dirs, definitions and options, the <FileName>_* variables, version answers, and each .pc
    file's cflags, libs, requires and version. report.differences holds one line per
    difference (empty: none). Raises PackageError when Conan cannot install the reference,
    WheelError for an unreadable wheel, ToolError when a tool fails."""
    from etpkg._internal.parity.probe import parity as run

    if isinstance(conan_args, str):
        raise TypeError("conan_args must be a sequence of strings, not one string")
    return run(
        Path(wheel),
        ref=reference,
        conan_args=list(conan_args),
        work=Path(work_dir) if work_dir is not None else None,
    )
