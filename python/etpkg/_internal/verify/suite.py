"""The consumer suite: runs every contract against one installed wheel, one result each.

What is proven holds for every SDK; package-specific behaviour (a model runs, a plugin
registers) is the package's own tests' job, which reuse the Workspace, this suite
(etpkg.testing.verify_installed) and a few helpers through etpkg.testing.
"""

from __future__ import annotations

import contextlib
import logging
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from etpkg._internal.cache import cmake_cache_dir
from etpkg._internal.errors import VerifyError
from etpkg._internal.model import Sdk
from etpkg._internal.verify.consumers import DATA_SYMBOL, PROGRAM_MAIN, render, write
from etpkg._internal.verify.contracts import (
    citizen,
    components,
    depends,
    entry_points,
    files,
    headers,
    pkgconfig,
    relocation,
    sbom,
    targets,
    variables,
    versions,
)
from etpkg._internal.verify.report import CheckResult, Report
from etpkg._internal.verify.runner import CheckFailed
from etpkg._internal.verify.tools import (
    CMAKE_VERSIONS,
    GENERATORS,
    MODERN,
    OLD_CMAKE_VERSIONS,
    Cmake,
    exported_functions,
    exported_objects,
    exported_weak_functions,
    exports_nothing,
)
from etpkg._internal.verify.workspace import Workspace, prepare

log = logging.getLogger(__name__)

SBOM_CHECK = "SBOM (every file with its SHA-256)"

# The checks' keys, in the order they run: `etpkg verify --only KEY` runs those it names (a
# key that recurs, targets or variables, selects each of its CMake versions and generators).
CHECK_KEYS = (
    "sbom",
    "install-prefix",
    "entry-points",
    "versions",
    "depends",
    "unknown-component",
    "targets",
    "shadow-control",
    "each-component",
    "package-target",
    "files",
    "headers",
    "variables",
    "good-citizen",
    "pkg-config",
    "relocation",
    "no-python",
)


def check_selection(only: Sequence[str]) -> frozenset[str]:
    """The keys of `only` (each may hold several, comma-separated), every one checked; none:
    every check."""
    keys = [k.strip() for item in only for k in item.split(",") if k.strip()]
    unknown = [k for k in keys if k not in CHECK_KEYS]
    if unknown:
        raise VerifyError(
            f"unknown check {', '.join(map(repr, unknown))}: the checks are {', '.join(CHECK_KEYS)}"
        )
    return frozenset(keys or CHECK_KEYS)


@dataclass
class Suite:
    ws: Workspace
    versions: tuple[str, ...] = CMAKE_VERSIONS
    generators: tuple[str, ...] = GENERATORS
    exempt_headers: tuple[str, ...] = ()
    # Strict: every header not exempt must compile alone. Lenient: failures are a note.
    strict_headers: bool = False
    # The headers a lenient headers check found not to compile alone (kept out of later TUs).
    lone_failures: frozenset[str] = frozenset()
    results: list[CheckResult] = field(default_factory=list)
    # Told (check name, checks done, checks in all) as each check starts: the CLI's progress.
    progress: Callable[[str, int, int], None] | None = None

    @property
    def sdk(self) -> Sdk:
        return self.ws.sdk

    def modern(self) -> tuple[Cmake, str]:
        version = MODERN[0] if MODERN[0] in self.versions else self.versions[-1]
        return self.ws.tool(version), MODERN[1]

    def matrix_dir(self, version: str, generator: str) -> Path:
        return self.ws.root / "matrix" / f"{version}-{generator.replace(' ', '_')}"

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
        """One exported function per library of comp (none for registration-only ones, nor
        for a header-only component), and per shared library of another package it links."""
        info = self.sdk.component(comp)
        paths = [] if info.registration_only else [self.ws.lib_dir / f for f in info.files]
        paths += [self.ws.site / f for f in info.dependency_files if not f.endswith(".a")]
        picked = []
        for path in paths:
            # Global functions; else weak ones (template instantiations alone).
            funcs = exported_functions(path) or exported_weak_functions(path)
            if not funcs:
                # A library of data alone (constant tables): its app references an object.
                objects = exported_objects(path)
                if objects:
                    picked.append(DATA_SYMBOL + objects[0])
                elif exports_nothing(path):
                    # Nothing to reference at all (abseil's bad_any_cast_impl in C++17, where
                    # std::bad_any_cast stands in): the app links it and references nothing.
                    log.info("%s exports no symbol: nothing to reference", path.name)
                else:
                    raise CheckFailed(f"{path.name} exports no function or data to reference")
                continue
            if PROGRAM_MAIN in funcs:
                # gtest_main's, Catch2WithMain's: the library is the program's main(); the
                # app defines none (entry_source), so crt1's reference to main links it.
                picked.append(PROGRAM_MAIN)
                continue
            # One no other library of the wheel exports, where there is one: the reference
            # then binds to this library whatever the link order (--as-needed keeps it).
            others = self._exports_besides(path)
            picked.append(next((f for f in funcs if f not in others), funcs[0]))
        return picked

    def _exports_besides(self, path: Path) -> set[str]:
        """The functions the wheel's other shared libraries (its own and grafted) export."""
        m = self.sdk
        libs = {self.ws.lib_dir / f for f in m.shared_files([c.name for c in m.components])}
        libs |= {
            self.ws.site / f
            for c in m.components
            for f in c.dependency_files
            if not f.endswith(".a")
        }
        out: set[str] = set()
        for lib in sorted(libs - {path}):
            if lib.is_file():
                out |= set(exported_functions(lib))
        return out

    def configure_only(
        self, name: str, template: str, *, check: bool = True, **context: Any
    ) -> subprocess.CompletedProcess[str]:
        """Configures a project rendered from `template` (which extends probe.cmake.j2)."""
        tool, gen = self.modern()
        src = self.ws.root / "probe" / name
        write(src / "CMakeLists.txt", render(template, sdk=self.sdk, **context))
        return self.ws.configure(tool, gen, src, src / "build", check=check)

    # One method per contract, so a test can run a single one (see contracts/).
    def check_sbom(self) -> str:
        return sbom.check(self)

    def check_versions(self) -> str:
        return versions.check(self)

    def check_unknown_component(self) -> str:
        return components.check_unknown(self)

    def check_each_component_alone(self) -> str:
        return components.check_each_alone(self)

    def check_package_target(self) -> str:
        return components.check_package_target(self)

    def check_files(self) -> str:
        return files.check(self)

    def check_targets(self, version: str, generator: str) -> str:
        return targets.check(self, version, generator)

    def check_shadow_control(self) -> str:
        return targets.check_shadow_control(self)

    def check_headers(self) -> str:
        return headers.check(self)

    def check_variables(self, version: str) -> str:
        return variables.check(self, version)

    def check_good_citizen(self) -> str:
        return citizen.check(self)

    def check_no_python(self) -> str:
        return citizen.check_no_python(self)

    def check_pkg_config(self) -> str:
        return pkgconfig.check(self)

    def check_relocation(self) -> str:
        return relocation.check(self)

    def check_depends(self) -> str:
        return depends.check(self)

    def check_entry_points(self) -> str:
        return entry_points.check(self.ws)

    def check_prefix_cli(self) -> str:
        return entry_points.check_prefix_cli(self.ws)

    def run_all(
        self, *, quick: bool = False, only: frozenset[str] = frozenset(CHECK_KEYS)
    ) -> list[CheckResult]:
        """Every check, or those whose keys (CHECK_KEYS) are in `only`."""
        matrix = (
            [(MODERN[0] if MODERN[0] in self.versions else self.versions[-1], MODERN[1])]
            if quick
            else [(v, g) for v in self.versions for g in self.generators]
        )
        if quick:
            self.versions, self.generators = (matrix[0][0],), (matrix[0][1],)
        plan: list[tuple[str, str, Callable[[], str]]] = [
            ("sbom", SBOM_CHECK, self.check_sbom),
            (
                "install-prefix",
                "install: python -m <pkg> --cmake-prefix-path",
                self.check_prefix_cli,
            ),
            (
                "entry-points",
                "discovery entry points (cmake.root, cmake.prefix, pkg_config)",
                self.check_entry_points,
            ),
            ("versions", "versions", self.check_versions),
        ]
        if self.ws.sdk.wheel_requires:
            plan.append(("depends", "SDK wheels depended on", self.check_depends))
        plan.append(("unknown-component", "unknown component", self.check_unknown_component))
        for version, gen in matrix:
            plan.append(
                ("targets", f"targets {version} {gen}", partial(self.check_targets, version, gen))
            )
        plan += [
            ("shadow-control", "shadow control (DT_RPATH)", self.check_shadow_control),
            ("each-component", "each component alone", self.check_each_component_alone),
            ("package-target", "package-wide target", self.check_package_target),
            ("files", "executables and data", self.check_files),
            ("headers", "headers", self.check_headers),
        ]
        for version in [v for v in OLD_CMAKE_VERSIONS if v in self.versions] or (
            [] if quick else [self.versions[0]]
        ):
            plan.append(
                ("variables", f"variables {version}", partial(self.check_variables, version))
            )
        plan += [
            ("good-citizen", "good citizen", self.check_good_citizen),
            ("pkg-config", "pkg-config", self.check_pkg_config),
            ("relocation", "relocation (wheel uninstalled)", self.check_relocation),
            ("no-python", "no python while configuring", self.check_no_python),
        ]
        assert {key for key, _, _ in plan} <= set(CHECK_KEYS)
        selected = [(name, fn) for key, name, fn in plan if key in only]
        if not selected:
            raise VerifyError(
                f"--only {','.join(sorted(only))}: no such check applies to "
                f"{self.sdk.name} {self.sdk.wheel_version} with these CMake versions "
                "(depends needs a wheel that requires other SDK wheels; variables, with --quick, "
                "a CMake version older than 3.27)"
            )
        for done, (name, fn) in enumerate(selected):
            if self.progress is not None:
                self.progress(name, done, len(selected))
            self.record(name, fn)
        return self.results


def verify_wheel(
    wheel: Path,
    *,
    quick: bool = False,
    cmake_versions: Sequence[str] | None = None,
    exempt_headers: Sequence[str] = (),
    strict_headers: bool = False,
    work_dir: Path | None = None,
    cmake_cache: Path | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    find_links: Sequence[Path] = (),
    only: Sequence[str] = (),
) -> Report:
    """work_dir None: a temporary directory, removed at the end (the caller's directory is never
    written); cmake_cache None: the user cache (cache.cmake_cache_dir()). The headers check is
    strict when strict_headers or an exempt list is given. `only`: check keys (CHECK_KEYS) to
    run instead of all; an unknown one is refused before anything is installed."""
    selection = check_selection(only)
    with contextlib.ExitStack() as stack:
        if work_dir is None:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="etpkg-verify-"))
            work_dir = Path(tmp)
        ws = prepare(wheel, work_dir, cmake_cache or cmake_cache_dir(), tuple(find_links))
        suite = Suite(
            ws,
            versions=tuple(cmake_versions or CMAKE_VERSIONS),
            exempt_headers=tuple(exempt_headers),
            strict_headers=strict_headers or bool(exempt_headers),
            progress=progress,
        )
        return Report(ws.sdk, tuple(suite.run_all(quick=quick, only=selection)))


def read_exempt(path: Path | None) -> tuple[str, ...]:
    """An exempt-headers file: one header (relative to include/) per line, # comments."""
    if path is None:
        return ()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise VerifyError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from exc
    lines = [ln.split("#", 1)[0].strip() for ln in text.splitlines()]
    return tuple(ln for ln in lines if ln)
