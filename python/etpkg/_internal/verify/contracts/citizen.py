"""Good citizenship: find_package sets no variable outside <pkg>_* / <NAME>_* (or _<pkg>_* /
_<NAME>_*), runs no Python (a broken python3 is first on PATH for every configure), and works
twice, from two directories.

The package's own cmake_build_modules are included in the caller's scope (as CMakeDeps does):
what they set is the package author's, not etpkg's. The configure is traced in those files
only (cmake --trace-source), and a variable named by a command run there is theirs; etpkg's
generated files are never traced, so a variable they leak is still found."""

from __future__ import annotations

import json
import posixpath
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from etpkg._internal.verify.consumers import (
    entry_source,
    expect_loaded,
    languages,
    linked_shared,
    render,
    source_suffix,
    write,
)
from etpkg._internal.verify.runner import CheckFailed, run

if TYPE_CHECKING:
    from etpkg._internal.verify.suite import Suite

# The dump function's own locals differ between its two calls.
_DUMP_LOCALS = {"ARGC", "ARGV", "ARGV0", "ARGN", "file", "names", "cache", "text", "n", "v"}


def _parse(path: Path) -> tuple[dict[str, str], set[str]]:
    values, cache = {}, set()
    for line in path.read_text().splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "var":
            key, _, value = rest.partition("=")
            values[key] = value
        elif kind == "cache":
            cache.add(rest)
    return values, cache


def _build_module_names(trace: Path, pkg_root: Path, modules: tuple[str, ...]) -> set[str]:
    """Every argument of a command the shipped build modules ran (a cmake --trace-expand
    --trace-format=json-v1 file): the names of the variables they set are among them."""
    paths = {(pkg_root / rel).resolve() for rel in modules}
    names: set[str] = set()
    if not trace.is_file():
        return names
    for line in trace.read_text().splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict) or "file" not in event or "args" not in event:
            continue  # the version line
        if Path(event["file"]).resolve() in paths:
            names.update(a for a in event["args"] if isinstance(a, str))
    return names


def build_module_names(suite: Suite, name: str, template: str, **context: Any) -> set[str]:
    """What the package's build modules name (see _build_module_names) when a probe project
    rendered from `template` is configured: empty for a package with none."""
    m = suite.sdk
    if not m.build_modules:
        return set()
    tool, gen = suite.modern()
    src = suite.ws.root / "probe" / name
    write(src / "CMakeLists.txt", render(template, sdk=m, **context))
    trace = src / "build-module-trace.json"
    trace.unlink(missing_ok=True)
    suite.ws.configure(
        tool,
        gen,
        src,
        src / "build",
        "--trace-expand",
        "--trace-format=json-v1",
        f"--trace-redirect={trace}",
        *(f"--trace-source={posixpath.basename(rel)}" for rel in m.build_modules),
    )
    return _build_module_names(trace, suite.ws.pkg_root, m.build_modules)


def check(suite: Suite) -> str:
    ws, m = suite.ws, suite.sdk
    tool, gen = suite.modern()
    base = ws.root / "citizen"
    components = [c.name for c in m.components]
    targets = [c.target for c in m.components]
    symbols = [s for c in m.components for s in suite.symbols_for(c.name)]
    source = f"main.{source_suffix(m)}"
    subdirs = ("a", "b")
    for sub in subdirs:
        write(base / "src" / sub / source, entry_source(symbols))
        write(
            base / "src" / sub / "CMakeLists.txt",
            render(
                "citizen_subdir.cmake.j2",
                sdk=m,
                components=components,
                targets=targets,
                sub=sub,
                source=source,
            ),
        )
    write(
        base / "src" / "CMakeLists.txt",
        render(
            "citizen.cmake.j2",
            sdk=m,
            components=components,
            subdirs=subdirs,
            languages=languages(m),
        ),
    )
    trace = base / "build-module-trace.json"
    trace.unlink(missing_ok=True)
    traced = [
        "--trace-expand",
        "--trace-format=json-v1",
        f"--trace-redirect={trace}",
        *(f"--trace-source={posixpath.basename(rel)}" for rel in m.build_modules),
    ]
    ws.configure(tool, gen, base / "src", base / "build", *(traced if m.build_modules else []))
    ws.build(tool, base / "build")
    theirs = _build_module_names(trace, ws.pkg_root, m.build_modules)

    before, cache_before = _parse(base / "build" / "before.txt")
    after, cache_after = _parse(base / "build" / "after.txt")
    # The package's prefixes, and those of the required packages it carries configs for
    # (found as CMakeDeps' find_dependency would: their variables reach the caller too).
    carried = [d.cmake_file_name for d in m.dependencies if d.cmake_file_name]
    carried += [r.cmake_file_name for r in m.wheel_requires]  # SDK wheels depended on
    # CMakeDeps' own prefixes too: the file name upper-cased as it is (YAML-CPP, MICROSOFT.GSL).
    prefixes = [m.cmake_file_name, m.cmake_file_name.upper(), m.variable_prefix]
    prefixes += m.cmake_variable_prefixes
    prefixes += [
        p for c in carried for p in (c, c.upper(), re.sub(r"[^A-Za-z0-9_]", "_", c).upper())
    ]
    # find_dependency (an SDK wheel depended on) leaves CMake's own _CMAKE_<dep>_* behind.
    own = re.compile(rf"^(_CMAKE)?_?({'|'.join(re.escape(p) for p in prefixes)})_")
    # For build modules the config sets CMakeDeps' data variables, named after the Conan
    # package whatever the file name (openssl_OpenSSL_Crypto_LIBS_RELEASE), as CMakeDeps does.
    data = re.compile(rf"^{re.escape(m.name)}_.+_RELEASE$" if m.build_modules else r"(?!)")
    # cmake_extra_variables: names the package chose to set, as CMakeDeps sets them.
    declared = {v.name for v in m.cmake_extra_variables}
    changed = sorted(
        k
        for k in after
        if before.get(k) != after[k]
        and not own.match(k)
        and k not in declared
        and not data.match(k)
        and k not in theirs
        and k not in _DUMP_LOCALS
        and not k.startswith("CMAKE_CURRENT_FUNCTION")
        # builddirs go on CMAKE_MODULE_PATH, as Conan's CMakeToolchain puts them.
        and not (k == "CMAKE_MODULE_PATH" and m.build_dirs)
    )
    removed = sorted(k for k in before if k not in after)
    dirs = {f"{n}_DIR" for n in [m.cmake_file_name, *carried]}
    new_cache = sorted(k for k in cache_after - cache_before if k not in dirs | declared)
    if changed or removed or new_cache:
        raise CheckFailed(
            f"find_package changed the caller's scope: set {changed}, unset {removed}, "
            f"cache {new_cache}"
        )
    for sub in subdirs:
        expect_loaded(
            run([base / "build" / sub / f"app_{sub}"], env=ws.env(tool)).stdout,
            linked_shared(m, components),
            ws.wheel_lib_dirs,
        )
    mine = sorted(k for k in after if k not in before)
    shown = ", ".join(mine[:8])
    modules = (
        f"; {len(m.build_modules)} build module(s) included, what they set is theirs"
        if m.build_modules
        else ""
    )
    return (
        f"only own names set ({len(mine)}: {shown}...){modules}; found twice, "
        "from two subdirectories"
    )


def check_no_python(suite: Suite) -> str:
    ws = suite.ws
    if ws.python_log.exists() and ws.python_log.read_text().strip():
        raise CheckFailed(
            f"python was run while configuring or building:\n{ws.python_log.read_text()[:2000]}"
        )
    proc = run([ws.poison / "python3", "-c", "1"], check=False)
    if proc.returncode != 97:
        raise CheckFailed("the broken python3 is not broken")
    ws.python_log.unlink()
    return "every configure ran with a failing python3/python first on PATH; none was invoked"
