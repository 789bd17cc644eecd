"""`etpkg parity WHEEL`: runs Conan's CMakeDeps and PkgConfigDeps for the wheel's package,
installs the wheel into a throwaway directory, and lists every difference a consumer would see
(targets and their usage requirements, variables, version answers, .pc files).

Packages of the graph that ship nothing (wrappers of the OS's libraries) are left out: their
names come from the OS, not from the wheel."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from etpkg._internal.errors import OutputError, ToolError
from etpkg._internal.model import Sdk
from etpkg._internal.parity import compare, observe, reference
from etpkg._internal.verify.wheel import read_sdk

FIND_MODULE_DIR = "lib/cmake/modules"  # <pkg>/..., where the wheel keeps Find<Name>.cmake


@dataclass(frozen=True)
class ParityReport:
    reference: str
    checked: tuple[str, ...]  # what was compared: "cmake fmt (CONFIG)", "pkg-config fmt"
    skipped: tuple[str, ...]  # packages left out, with why
    differences: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.differences


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def _install_wheel(wheel: Path, target: Path, env: dict[str, str]) -> None:
    argv = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
            "--disable-pip-version-check", "--target", str(target), str(wheel)]  # fmt: skip
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise ToolError(f"pip install {wheel.name} failed: {proc.stderr.strip()[-300:]}")


def _shipped(sdk: Sdk, package: reference.ReferencePackage) -> str | None:
    """Why a package of the graph is left out, or None when the wheel must answer for it."""
    if package.name == sdk.name:
        return None
    dep = next((d for d in sdk.dependencies if d.name == package.name), None)
    if dep is None:
        return "not among what reaches the wheel's consumers"
    if dep.system:
        return "a wrapper of the OS's package: the OS answers for it"
    return None


def parity(
    wheel: Path,
    *,
    ref: str | None = None,
    conan_args: list[str] | None = None,
    work: Path | None = None,
) -> ParityReport:
    """Compares the wheel with CMakeDeps/PkgConfigDeps output for ref (default: the wheel's
    own name/version), the binary chosen by conan_args (-pr, -s, -o ... as conan install)."""
    sdk = read_sdk(wheel)
    ref = ref or f"{sdk.name}/{sdk.version}"
    env = _env()
    if work is not None:
        try:
            work.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"cannot create the work directory {work}: {exc.strerror}") from exc
    with tempfile.TemporaryDirectory(prefix="etpkg-parity-", dir=work) as tmp_name:
        tmp = Path(tmp_name)
        ref_side = reference.install(ref, tmp / "conan", list(conan_args or []), env)
        _install_wheel(wheel, tmp / "wheel", env)
        pkg_root = tmp / "wheel" / sdk.import_name
        conan_roots = observe.Roots(
            tuple(p.package_folder for p in ref_side.packages if p.package_folder)
        )
        wheel_roots = observe.Roots((pkg_root, tmp / "wheel"))
        checked: list[str] = []
        skipped: list[str] = []
        diffs: list[str] = []
        wanted = []
        for package in ref_side.packages:
            why = _shipped(sdk, package)
            if why is None:
                wanted.append(package)
            else:
                skipped.append(f"{package.name}: {why}")
        foreign = _foreign_targets(ref_side, wanted, tmp / "probe", conan_roots, env)
        # What of the left-out packages CMakeDeps and PkgConfigDeps still name (PkgConfigDeps
        # requires a shared library's private dependency): the OS's to answer, not the wheel's.
        left_out = [p for p in ref_side.packages if p not in wanted]
        foreign_links = {
            form
            for p in left_out
            for lib in p.libs
            for form in (f"-l{lib}", f"lib{lib}.so", f"lib{lib}.a")
        }
        # A carried package whose libraries CMakeDeps links for no target (Conan's libs trait:
        # a shared library's requirement reaches consumers by its headers only) still gets
        # -l<lib> from PkgConfigDeps, which ignores the trait; the wheel follows the trait.
        linked_by_cmake: set[str] = set()
        # Likewise its headers (the headers trait): CMakeDeps gives no include dir.
        without_headers: set[str] = set()
        for package in wanted:
            for file_name, mode in package.cmake_probes:
                label = f"cmake {file_name} ({mode})"
                checked.append(label)
                work_dir = tmp / "probe" / f"{file_name}-{mode}"
                conan_view = observe.run_cmake_probe(
                    work_dir / "conan", file_name, mode, package.version,
                    conan_roots,
                    [f"-DCMAKE_PREFIX_PATH={ref_side.folder}",
                     f"-DCMAKE_MODULE_PATH={ref_side.folder}"],
                    env,
                    extra_variables=package.extra_variables,
                )  # fmt: skip
                try:
                    wheel_view = observe.run_cmake_probe(
                        work_dir / "wheel", file_name, mode, package.version,
                        wheel_roots,
                        [f"-DCMAKE_PREFIX_PATH={pkg_root}",
                         f"-DCMAKE_MODULE_PATH={pkg_root / FIND_MODULE_DIR}"],
                        env,
                        extra_variables=package.extra_variables,
                    )  # fmt: skip
                except ToolError as exc:
                    diffs.append(f"{label}: the wheel's consumer fails: {exc}")
                    continue
                for target in foreign:
                    conan_view.targets.pop(target, None)
                linked_by_cmake.update(
                    lib for t in conan_view.targets.values() for lib in t.libraries
                )
                if package.name != sdk.name and not any(
                    t.include_dirs for t in conan_view.targets.values()
                ):
                    without_headers.add(package.name)
                for view in (conan_view, wheel_view):
                    for name, target_view in view.targets.items():
                        view.targets[name] = dataclasses.replace(
                            target_view, libraries=target_view.libraries - foreign_links
                        )
                diffs += compare.compare_cmake(
                    label,
                    conan_view,
                    wheel_view,
                    conan_roots,
                    wheel_roots,
                    file_name,
                    module=mode == reference.MODULE,
                    version=package.version,
                    foreign=frozenset(foreign_links),
                    extra_variables=package.extra_variables,
                )
        trait_excluded = {
            f"-l{lib}"
            for p in wanted
            if p.name != sdk.name
            and p.cmake_probes
            and not any(f"lib{lib}{ext}" in linked_by_cmake for lib in p.libs
                        for ext in (".so", ".a"))
            for lib in p.libs
        }  # fmt: skip
        conan_pcs = [
            n for n in observe.pkg_config_names(ref_side.folder)
            if any(p.owns_pc(n) for p in wanted) or not any(
                p.owns_pc(n) for p in ref_side.packages)
        ]  # fmt: skip
        wheel_pc_dir = pkg_root / "lib" / "pkgconfig"
        wheel_pcs = set(observe.pkg_config_names(wheel_pc_dir)) if wheel_pc_dir.is_dir() else set()
        for name in conan_pcs:
            checked.append(f"pkg-config {name}")
            if name not in wheel_pcs:
                diffs.append(f"pkg-config {name}: the wheel has no {name}.pc")
                continue
            # PkgConfigDeps requires a left-out package's .pc (a shared library's private
            # dependency), so its include dirs reach `--cflags`; CMakeDeps gives none (the
            # headers trait), nor does the wheel.
            theirs = observe.run_pkg_config(
                ref_side.folder,
                name,
                conan_roots,
                env,
                drop_under=tuple(p.package_folder for p in left_out if p.package_folder),
            )
            theirs = dataclasses.replace(
                theirs,
                libs=theirs.libs - foreign_links - trait_excluded,
                cflags=frozenset(
                    f
                    for f in theirs.cflags
                    if not f.startswith("-I")
                    or not any(p.owns_pc(name) and p.name in without_headers for p in wanted)
                ),
                requires=frozenset(
                    r for r in theirs.requires if not any(p.owns_pc(r) for p in left_out)
                ),
            )
            try:
                ours = observe.run_pkg_config(wheel_pc_dir, name, wheel_roots, env)
            except ToolError as exc:
                diffs.append(f"pkg-config {name}: the wheel's answer fails: {exc}")
                continue
            ours = dataclasses.replace(ours, libs=ours.libs - foreign_links)
            diffs += compare.compare_pc(name, theirs, ours)
        for name in sorted(wheel_pcs - set(observe.pkg_config_names(ref_side.folder))):
            diffs.append(f"pkg-config {name}: the wheel's only ({name}.pc)")
    return ParityReport(ref, tuple(checked), tuple(skipped), tuple(diffs))


def _foreign_targets(
    ref_side: reference.Reference,
    wanted: list[reference.ReferencePackage],
    work: Path,
    roots: observe.Roots,
    env: dict[str, str],
) -> set[str]:
    """The targets CMakeDeps gives for packages left out: a consumer of the wheel gets them
    from wherever those packages come from (the OS), not from the wheel."""
    found: set[str] = set()
    for package in ref_side.packages:
        if package in wanted:
            continue
        for file_name, mode in package.cmake_probes:
            try:
                view = observe.run_cmake_probe(
                    work / f"left-out-{file_name}-{mode}", file_name, mode, package.version,
                    roots,
                    [f"-DCMAKE_PREFIX_PATH={ref_side.folder}",
                     f"-DCMAKE_MODULE_PATH={ref_side.folder}"],
                    env,
                )  # fmt: skip
            except ToolError:
                continue  # its own config does not load here: it defines no target then
            found.update(view.targets)
    return found
