"""wheelify: Conan package -> repaired, checked, reproducible wheel in the output directory.

The pipeline, in order: read (conan) -> probe (build.probe) -> plan (plan.*, pure) -> stage
(build.stage: files + patchelf) -> zip (build.wheelfile) -> repair (build.repair: auditwheel)
-> render again with what was grafted (plan.view, plan.generate) -> SBOM (build.sbom, merging
auditwheel's) -> check (build.checks) -> publish (build.publish: atomic).

A header-only package has nothing to repair: its wheel is py3-none-any. A wheel whose only
binaries are archives gets the build machine's glibc as its platform (tags.py) and no repair.
A cross-built package (Conan's host arch is not the build's) takes its glibc and the libraries
auditwheel may graft from the host's files instead (target.py), and auditwheel repairs it as if
it ran on the host.
"""

from __future__ import annotations

import dataclasses
import logging
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from etpkg._internal import policy, tags, target
from etpkg._internal.build import checks, repair
from etpkg._internal.build.exclude import exclude_files
from etpkg._internal.build.floor import demangler_for, measure, record, report
from etpkg._internal.build.licenses import grafted_licenses
from etpkg._internal.build.probe import dependency_sonames, probe_package
from etpkg._internal.build.publish import publish
from etpkg._internal.build.sbom import write_sbom
from etpkg._internal.build.stage import stage, write_files
from etpkg._internal.build.wheelfile import unpack_wheel, write_wheel
from etpkg._internal.conan import (
    DEFAULT_SELECTION,
    ConanPackage,
    Selection,
    component_aliases,
    read_package,
)
from etpkg._internal.depend import plan_depends
from etpkg._internal.facts import SourceFile
from etpkg._internal.plan import metadata
from etpkg._internal.plan.cmake import libs_dir_name
from etpkg._internal.plan.generate import generated_files
from etpkg._internal.plan.layout import LICENSES, plan_wheel, shipped_python
from etpkg._internal.plan.view import static_archives, wheel_sdk
from etpkg._internal.remote import fetch_package
from etpkg._internal.version import VERSION

log = logging.getLogger(__name__)


def wheelify(
    spec: str,
    out_dir: Path,
    *,
    remote: str | None = None,
    update: bool = False,
    selection: Selection = DEFAULT_SELECTION,
    strict: bool = False,
    exclude: Sequence[str] = (),
    depend: Sequence[str] = (),
    manylinux: str | None = None,
    aliases: Sequence[str] = (),
    stage_note: Callable[[str], None] | None = None,
) -> Path:
    """Builds the wheel of the Conan package `spec` (reference or conanfile dir) into out_dir,
    for the binary `selection` picks; with `remote`, first installs it from that Conan remote
    into the cache (remote.py). A build-machine path inside an ELF file's data is logged as a
    note, or refused with `strict`; in any other file it is always refused (`exclude`: globs of
    package-folder paths left out of the wheel, e.g. such a script; see build/exclude.py).
    `depend`: required packages reached as SDK wheels of their own instead of grafted
    ("fmt" or "fmt=<distribution>", beside the recipe's etpkg_depend; see depend.py).
    `manylinux` ("2_28"; default: the package's etpkg_manylinux) is the platform the wheel must
    get: a file needing newer symbol versions is refused, naming them (policy.py).
    `aliases` ("Enc=vorbisenc"): more names find_package may ask for, beside the recipe's
    etpkg_component_aliases.

    All work happens in a temp dir; out_dir changes only by the final atomic rename.
    `stage_note(name)` is called as each step starts (the CLI's progress).
    """
    note = stage_note or (lambda name: None)
    start = time.monotonic()
    if remote is not None:
        note(f"installing {spec} from {remote}")
        spec = fetch_package(spec, remote, update=update, selection=selection)
    note("reading the Conan package")
    package = read_package(spec, selection)
    sdk = package.sdk
    if aliases:
        given = [f"{a}={c}" for a, c in sdk.component_aliases]
        merged = component_aliases([*given, *aliases], sdk.components, "--component-alias")
        sdk = dataclasses.replace(sdk, component_aliases=merged)
    arch = tags.arch_for_conan(package.arch) if package.arch is not None else None
    files, excluded = exclude_files(
        probe_package(sdk, arch), sdk.package_folder, sdk.bin_dirs, exclude
    )
    for rel in excluded:
        log.warning("note: %s left out of the wheel (--exclude)", rel)
    sonames = {d.name: dependency_sonames(d, arch) for d in sdk.dependencies}
    sdk, files = plan_depends(sdk, files, depend, sonames)
    never_graft = tuple(n for r in sdk.wheel_requires for pair in r.sonames for n in pair)
    view = wheel_sdk(sdk, files)
    binary = not view.header_only
    name = metadata.wheel_name(view, tags.unrepaired_platform(arch if binary else None))
    python_files = shipped_python(files)
    plan = plan_wheel(
        view,
        files,
        name,
        generated_files(view, name, VERSION, shipped_python=python_files),
    )
    forbidden = [*sdk.forbidden_paths, package.conan_home]
    archives = list(static_archives(files))
    host = _host(package, arch) if binary else None
    ld_paths = (*package.ld_paths, *(host.library_dirs if host is not None else ()))
    wanted = manylinux or sdk.manylinux or None
    aim = policy.policy_named(wanted, arch) if wanted and arch is not None and binary else None
    floor_props: tuple[tuple[str, str], ...] = ()

    with tempfile.TemporaryDirectory(prefix="etpkg-") as tmp_name:
        tmp = Path(tmp_name)
        tree = tmp / "tree"
        note("staging the wheel")
        stage(plan, tree)
        final_tree, platform = tree, tags.ANY
        external: dict[str, Path] = {}
        if binary and arch is not None:
            glibc = host.glibc if host is not None else None
            archive_tag = tags.glibc_platform(arch, glibc) if archives else None
            platform = archive_tag or tags.ANY
            if plan.patches:  # ELF files: auditwheel's analysis and repair
                note("repairing with auditwheel")
                unrepaired = tmp / "unrepaired" / name.filename
                unrepaired.parent.mkdir()
                write_wheel(tree, unrepaired, name.dist_info)
                analysis = repair.analyze(unrepaired, ld_paths, arch.wheel)
                # What is depended on, not grafted, does not set this wheel's floor.
                external = {k: v for k, v in analysis.external.items() if k not in never_graft}
                floor = measure(tree, external, arch)
                choice = policy.choose(
                    floor, analysis.platform, aim, demangler_for(floor.needs), archive_tag
                )
                for line in report(choice):  # -v: which files and symbols set the tag
                    log.info("%s", line)
                platform, floor_props = choice.platform, record(choice)
                (tmp / "repaired").mkdir()
                repaired = repair.repair(
                    unrepaired, platform, tmp / "repaired", ld_paths, never_graft, arch.wheel
                )
                final_tree = tmp / "final"
                unpack_wheel(repaired, final_tree)
                repair.restore_runpaths(final_tree)
                repair.keep_runpaths(final_tree, {p.path: p.runpath for p in plan.patches})
            elif aim is not None:  # archives only: their glibc is the build (or host) machine's
                empty = policy.floor_of({}, arch)
                choice = policy.choose(empty, empty.tag, aim, str, archive_tag)
                platform, floor_props = choice.platform, record(choice)
        final_name = metadata.wheel_name(view, platform)

        # Now what was grafted is known: what consumers link, and the licences it brings.
        note("writing the SDK files, the SBOM and checking")
        grafted = repair.grafts(final_tree, libs_dir_name(view), external)
        final_view = wheel_sdk(sdk, files, grafted)
        graft_licenses = grafted_licenses(grafted, external, package.required)
        licence_files = {f"{name.dist_info}/{LICENSES}/{rel}": src for rel, src in graft_licenses}
        write_files(final_tree, licence_files)
        final_generated = generated_files(
            final_view,
            final_name,
            VERSION,
            shipped_python=python_files,
            # A dependency both shipped (its headers) and grafted (its library) brings the
            # same licence file twice: one License-File each.
            license_files=list(dict.fromkeys([*plan.licenses, *(r for r, _ in graft_licenses)])),
        )
        write_files(final_tree, final_generated)
        write_sbom(
            final_tree,
            final_name,
            package,
            {**plan.files, **final_generated},
            grafted,
            external,
            repaired=final_tree != tree,
            etpkg_version=VERSION,
            excluded=excluded,
            properties=floor_props,
        )

        elf_files = [patch.path for patch in plan.patches if patch.soname is not None]
        siblings = tuple(f"{r.import_name}/lib" for r in sdk.wheel_requires)
        checks.raise_problems(checks.runpath_problems(final_tree, elf_files, siblings))
        checks.raise_problems(
            _with_exclude_hint(
                checks.forbidden_path_problems(final_tree, forbidden, strict=strict),
                plan.files,
                sdk.package_folder,
            )
        )
        for embedded in checks.embedded_paths(final_tree, forbidden):
            log.warning("note: %s (allowed; --strict refuses it)", embedded)

        final = tmp / "out" / final_name.filename
        final.parent.mkdir()
        write_wheel(final_tree, final, final_name.dist_info)
        dest = publish(final, out_dir)
    log.info("wrote %s in %.2f s", dest, time.monotonic() - start)
    return dest


def _host(package: ConanPackage, arch: tags.Arch | None) -> target.Host | None:
    """The host's files on a cross build (or for a foreign arch); None on a native one."""
    if arch is None or not (package.cross or target.is_foreign(arch.wheel)):
        return None
    compilers = dict(package.host_compilers)
    host = target.find_host(arch.wheel, compilers.get("c"), compilers.get("cpp"))
    log.info("host %s: glibc %s from %s", arch.wheel, host.glibc, host.libc)
    return host


def _with_exclude_hint(
    problems: list[checks.Problem], files: Mapping[str, SourceFile | bytes], folder: Path
) -> list[checks.Problem]:
    """A problem in a file copied from the package folder names the way out: --exclude."""
    out: list[checks.Problem] = []
    for problem in problems:
        source = files.get(problem.path)
        rel = _package_relative(source.path, folder) if isinstance(source, SourceFile) else None
        if rel is not None:
            problem = checks.Problem(
                problem.path,
                f"{problem.message} (leave it out of the wheel with --exclude {rel})",
            )
        out.append(problem)
    return out


def _package_relative(path: Path, folder: Path) -> str | None:
    for base in (folder, folder.resolve()):
        if path.is_relative_to(base):
            return path.relative_to(base).as_posix()
    return None
