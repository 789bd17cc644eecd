"""The licence files of what auditwheel grafted (PEP 639: shipped in .dist-info/licenses/).

A grafted library from a Conan package brings that package's licenses/ folder; one from the
OS brings the copyright file of the Debian package that installed it. A grafted library with
neither is refused: the wheel would redistribute it with no licence.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from etpkg._internal.build import system
from etpkg._internal.build.probe import LICENSES_DIR, source_file, tree
from etpkg._internal.conan import RuntimePackage
from etpkg._internal.errors import CheckError
from etpkg._internal.facts import SourceFile


def grafted_licenses(
    grafted: Iterable[str],
    origins: Mapping[str, Path],
    required: Iterable[RuntimePackage],
) -> list[tuple[str, SourceFile]]:
    """(path under licenses/, file) for each grafted SONAME; `origins` maps a SONAME to the
    file auditwheel copied."""
    packages = list(required)
    out: dict[str, SourceFile] = {}
    for soname in sorted(grafted):
        origin = origins.get(soname)
        if origin is None:
            raise CheckError(f"auditwheel grafted {soname}, but did not say from where")
        owner = next(
            (p for p in packages if origin.resolve().is_relative_to(p.package_folder.resolve())),
            None,
        )
        if owner is not None:
            folder = owner.package_folder / LICENSES_DIR
            files = tree(folder).files if folder.is_dir() else ()
            if not files:
                raise CheckError(
                    f"the wheel grafts {soname} from Conan package {owner.name}, which has no "
                    f"{LICENSES_DIR}/ folder: it would be redistributed with no licence"
                )
            for rel, src in files:
                out[f"{owner.name}/{rel}"] = src
            continue
        deb = system.owner(origin)
        copyright_path = system.copyright_file(deb) if deb else None
        if deb is None or copyright_path is None:
            raise CheckError(
                f"the wheel grafts {soname} ({origin}), whose licence etpkg cannot find (no "
                "Conan package and no Debian package with a copyright file holds it)"
            )
        out[f"{deb}/copyright"] = source_file(copyright_path)
    return sorted(out.items())
