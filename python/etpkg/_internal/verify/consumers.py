"""The consumer projects verify builds, rendered from the template files in templates/, and
what is read back from the apps they make (which libraries they need and load)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from etpkg._internal.build.elf import read_elf
from etpkg._internal.model import Sdk
from etpkg._internal.naming import library_file
from etpkg._internal.verify.runner import CheckFailed

# What every entry app prints last, and before it one "loaded <path>" line per loaded object.
ENTRY_OK = "etpkg-entry-ok"
SHADOW_MARKER = "ETPKG-SHADOW-LOADED"


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FunctionLoader(_load),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )


def _load(name: str) -> str:
    return (resources.files("etpkg._internal.verify") / "templates" / name).read_text(
        encoding="utf-8"
    )


def render(template: str, **context: Any) -> str:
    return _environment().get_template(template).render(**context)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def entry_source(symbols: Sequence[str]) -> str:
    """main(): references one exported function per listed symbol, prints every loaded object."""
    return render("entry.cpp.j2", symbols=list(symbols), ok=ENTRY_OK)


def headers_source(headers: Sequence[str]) -> str:
    return render("headers.cpp.j2", headers=list(headers))


def targets_project(
    src: Path,
    sdk: Sdk,
    components: Sequence[str],
    symbols: Sequence[str],
    *,
    version: str | None = None,
) -> Path:
    """An app linking the targets of components; installs itself and the libraries it uses."""
    write(src / "main.cpp", entry_source(symbols))
    write(
        src / "CMakeLists.txt",
        render(
            "targets.cmake.j2",
            sdk=sdk,
            version=version or sdk.cmake_version,
            components=list(components),
            targets=[sdk.component(c).target for c in components],
            closure_targets=[sdk.component(c).target for c in sdk.closure(components)],
        ),
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
    if ENTRY_OK not in output:
        raise CheckFailed(f"the app did not finish:\n{output[-2000:]}")
    loaded = loaded_libraries(output)
    missing = sorted(files - loaded.keys())
    if missing:
        raise CheckFailed(f"not loaded at run time: {missing}; loaded: {sorted(loaded)}")
    for name in files:
        if loaded[name].resolve().parent != where.resolve():
            raise CheckFailed(f"{name} was loaded from {loaded[name]}, expected from {where}")


def wheel_needed(app: Path, sdk: Sdk) -> set[str]:
    """The SDK's library files among the app's DT_NEEDED."""
    all_files = sdk.files([c.name for c in sdk.components])
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
            name = flag[3:] if flag.startswith("-l:") else library_file(flag[2:])
            found = next((d / name for d in dirs if (d / name).is_file()), None)
            out.append(str(found) if found else flag)
        else:
            out.append(flag)
    return out
