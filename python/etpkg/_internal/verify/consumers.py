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
from etpkg._internal.plan.cmake import install_function_name
from etpkg._internal.verify.runner import CheckFailed
from etpkg._internal.verify.tools import (
    defined_functions,
    exported_functions,
    exports_nothing,
)

# What every entry app prints last, and before it one "loaded <path>" line per loaded object.
ENTRY_OK = "etpkg-entry-ok"
# A symbol symbols_for() picked that names a data object, not a function: see entry_source.
DATA_SYMBOL = "data:"
# A library exporting main() is the program's main (gtest_main): see entry_source.
PROGRAM_MAIN = "main"
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


def c_only(sdk: Sdk) -> bool:
    """Consumers of this SDK are C programs (every component is consumed from C alone)."""
    return all(c.c_only for c in sdk.components)


def source_suffix(sdk: Sdk) -> str:
    return "c" if c_only(sdk) else "cpp"


def languages(sdk: Sdk) -> str:
    """The `project(LANGUAGES ...)` of a consumer: its own language and the SDK's."""
    langs = set(sdk.cmake_languages) | {"C" if c_only(sdk) else "CXX"}
    return " ".join(sorted(langs))


def entry_source(
    symbols: Sequence[str], *, defines: Sequence[str] = (), cxx_standard: bool = False
) -> str:
    """main() in C and C++: references one exported function per listed symbol (a data object
    for one named DATA_SYMBOL + name), prints each
    define's expansion ("define NAME=value"), __cplusplus, and every loaded object. When a
    listed symbol is main itself (a library that is the program's main, as gtest_main), the
    app defines no main: the same body runs as a constructor, before the library's main."""
    return render(
        "entry.cpp.j2",
        symbols=[s for s in symbols if s != PROGRAM_MAIN and not s.startswith(DATA_SYMBOL)],
        objects=[s[len(DATA_SYMBOL) :] for s in symbols if s.startswith(DATA_SYMBOL)],
        library_main=PROGRAM_MAIN in symbols,
        defines=list(defines),
        cxx_standard=cxx_standard,
        ok=ENTRY_OK,
    )


def headers_source(headers: Sequence[str]) -> str:
    return render("headers.cpp.j2", headers=list(headers))


def targets_project(
    src: Path,
    sdk: Sdk,
    components: Sequence[str],
    symbols: Sequence[str],
    *,
    version: str | None = None,
    targets: Sequence[str] | None = None,
) -> Path:
    """An app linking the targets of components (or the given targets, e.g. the package-wide
    one); installs itself and the shared libraries it uses."""
    source = f"main.{source_suffix(sdk)}"
    write(src / source, entry_source(symbols))
    write(
        src / "CMakeLists.txt",
        render(
            "targets.cmake.j2",
            sdk=sdk,
            source=source,
            languages=languages(sdk),
            version=version or sdk.cmake_version,
            components=list(components),
            targets=list(targets)
            if targets is not None
            else [sdk.component(c).target for c in components],
            install_fn=install_function_name(sdk.cmake_file_name),
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


def expect_loaded(output: str, files: set[str], where: Path | Sequence[Path]) -> None:
    """The entry app finished and loaded each of these files from one of the dirs `where`."""
    if ENTRY_OK not in output:
        raise CheckFailed(f"the app did not finish:\n{output[-2000:]}")
    dirs = [where] if isinstance(where, Path) else list(where)
    loaded = loaded_libraries(output)
    present = files & loaded.keys()
    missing = sorted(f for f in files - loaded.keys() if not _covered(f, present, dirs))
    if missing:
        raise CheckFailed(f"not loaded at run time: {missing}; loaded: {sorted(loaded)}")
    allowed = {d.resolve() for d in dirs}
    for name in present:
        if loaded[name].resolve().parent not in allowed:
            shown = " or ".join(str(d) for d in dirs)
            raise CheckFailed(f"{name} was loaded from {loaded[name]}, expected from {shown}")


def _covered(name: str, loaded: set[str], dirs: Sequence[Path]) -> bool:
    """Every function library `name` exports is exported by a loaded one of the set (libwebp's
    decoder-only library beside libwebp): with --as-needed nothing makes an app load it."""
    found = [d / name for d in dirs if (d / name).is_file()]
    if not found:
        return False
    if exports_nothing(found[0]):
        return True  # nothing an app could reference: --as-needed rightly drops it
    own = set(exported_functions(found[0]))
    others: set[str] = set()
    for other in loaded:
        path = next((d / other for d in dirs if (d / other).is_file()), None)
        if path is not None:
            others |= set(exported_functions(path))
    return bool(own) and own <= others


def printed_defines(output: str) -> dict[str, str]:
    """NAME -> expansion of each "define NAME=value" line the entry app printed."""
    found = {}
    for line in output.splitlines():
        if line.startswith("define "):
            name, _, value = line[len("define ") :].partition("=")
            found[name] = value
    return found


def wheel_needed(app: Path, sdk: Sdk) -> set[str]:
    """The wheel's shared libraries among the app's DT_NEEDED (the SDK's own and the grafted
    ones consumers link)."""
    return set(read_elf(app).needed) & linked_shared(sdk, [c.name for c in sdk.components])


def dropped_archives(app: Path, sdk: Sdk, names: Sequence[str], lib_dir: Path) -> list[str]:
    """The registration-only archives of these components (and what they require) none of
    whose functions the app holds: their retention (--whole-archive) did not hold."""
    held = defined_functions(app)
    missing = []
    for name in sdk.closure(names):
        comp = sdk.component(name)
        if comp.registration_only and comp.static:
            for f in comp.files:
                if not defined_functions(lib_dir / f) & held:
                    missing.append(f)
    return missing


def retained_shared(sdk: Sdk, names: Sequence[str]) -> set[str]:
    """The shared libraries of these components marked for retention (registration-only):
    linked with --no-as-needed, so the app must need each directly."""
    return {
        f
        for n in names
        if sdk.component(n).registration_only and not sdk.component(n).static
        for f in sdk.component(n).files
    }


def expect_needed(app: Path, sdk: Sdk, names: Sequence[str], what: str) -> set[str]:
    """The app's DT_NEEDED among the wheel's libraries: each retained library of these
    components, and nothing outside their closure. Any other library of theirs may be loaded
    through another's NEEDED instead: with --as-needed an app whose symbols an earlier library
    already gives (libwebpdecoder exports libwebp's decoder) never needs it directly; that it
    is loaded is expect_loaded's to check. Returns the wheel's libraries it needs."""
    needed = wheel_needed(app, sdk)
    retained = retained_shared(sdk, names)
    allowed = linked_shared(sdk, sdk.closure(names))
    if not retained <= needed or not needed <= allowed:
        raise CheckFailed(
            f"{what}: app needs {sorted(needed)}, expected {sorted(retained)} (retention: "
            f"linked with --no-as-needed) "
            f"and nothing outside {sorted(allowed)}"
        )
    return needed


def expect_linked(app: Path, sdk: Sdk, names: Sequence[str], lib_dir: Path, what: str) -> set[str]:
    """The app linked what these components give: it needs every retained shared library
    they link and nothing outside their closure (expect_needed), and holds something of each
    registration-only archive. Returns the wheel's libraries it needs."""
    needed = expect_needed(app, sdk, names, what)
    dropped = dropped_archives(app, sdk, names, lib_dir)
    if dropped:
        raise CheckFailed(f"{what}: the app holds nothing of {dropped} (retention)")
    return needed


def linked_shared(sdk: Sdk, names: Sequence[str]) -> set[str]:
    """The shared library files an app linking these components (not their closure) needs."""
    out = sdk.shared_files(names)
    for name in names:
        out |= {Path(f).name for f in sdk.component(name).dependency_files if not f.endswith(".a")}
    return out


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
