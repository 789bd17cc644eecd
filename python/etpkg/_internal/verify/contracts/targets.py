"""Targets, on every CMake version and generator: the app gets DT_RUNPATH ($ORIGIN,
$ORIGIN/../lib, the wheel's lib dir in the build tree), the installed app exactly
$ORIGIN:$ORIGIN/../lib, and LD_LIBRARY_PATH shadows the first shared library with an
instrumented copy (a control shows that check can fail). An SDK of archives and headers only
links nothing at run time: its app carries no runpath at all."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from etpkg._internal.build.elf import read_elf
from etpkg._internal.plan.cmake import install_function_name
from etpkg._internal.verify.consumers import (
    SHADOW_MARKER,
    dropped_archives,
    expect_loaded,
    expect_needed,
    linked_shared,
    loaded_libraries,
    render,
    targets_project,
    write,
)
from etpkg._internal.verify.runner import CheckFailed, run
from etpkg._internal.verify.tools import Cmake, find_patchelf

if TYPE_CHECKING:
    from etpkg._internal.verify.suite import Suite

RUNPATH_INSTALLED = ("$ORIGIN", "$ORIGIN/../lib")


def check(suite: Suite, version: str, generator: str) -> str:
    """Build, runpaths, in-place run, LD_LIBRARY_PATH shadowing, cmake --install."""
    m, ws = suite.sdk, suite.ws
    tool = ws.tool(version)
    comps = [c.name for c in m.components]
    base = suite.matrix_dir(version, generator)
    src = targets_project(base / "src", m, comps, [s for c in comps for s in suite.symbols_for(c)])
    build, inst = base / "build", base / "inst"
    ws.configure(tool, generator, src, build)
    ws.build(tool, build)
    app = build / "app"
    info = read_elf(app)
    if info.rpath is not None:
        raise CheckFailed(f"build-tree app has DT_RPATH {info.rpath}")
    all_files = linked_shared(m, comps)
    runpath = info.runpath or ()
    # CMake itself pads the build-tree runpath of an installable target with a trailing ':'
    # (seen without any package too); install rewrites it, and that result is checked exactly.
    extra = {str(d) for d in ws.wheel_lib_dirs} | {""}
    if all_files and (
        runpath[:2] != RUNPATH_INSTALLED or not set(runpath[2:]) <= extra or "" in runpath[2:-1]
    ):
        raise CheckFailed(
            f"build-tree app DT_RUNPATH {':'.join(runpath)}; expected "
            f"$ORIGIN:$ORIGIN/../lib then only {', '.join(map(str, ws.wheel_lib_dirs))}"
        )
    if not all_files and info.runpath is not None:
        raise CheckFailed(f"the app links no shared library, yet has DT_RUNPATH {runpath}")
    expect_needed(app, m, comps, "app")
    dropped = dropped_archives(app, m, comps, ws.lib_dir)
    if dropped:
        raise CheckFailed(f"the app holds nothing of {dropped} (retention)")
    expect_loaded(run([app], env=ws.env(tool)).stdout, all_files, ws.wheel_lib_dirs)
    shadowed = shadow(suite, tool, app)
    if inst.exists():
        shutil.rmtree(inst)
    run([tool.cmake, "--install", build, "--prefix", inst], env=ws.env(tool))
    inst_info = read_elf(inst / "bin" / "app")
    want = RUNPATH_INSTALLED if all_files else None
    if inst_info.rpath is not None or inst_info.runpath != want:
        raise CheckFailed(
            f"installed app: DT_RPATH={inst_info.rpath} DT_RUNPATH={inst_info.runpath}; "
            f"expected DT_RUNPATH {'exactly $ORIGIN:$ORIGIN/../lib' if want else 'none'}"
        )
    missing = sorted(f for f in all_files if not (inst / "lib" / f).is_file())
    if missing:
        install_fn = install_function_name(m.cmake_file_name)
        raise CheckFailed(f"{install_fn}(DESTINATION lib) did not install {missing}")
    expect_loaded(run([inst / "bin" / "app"], env=ws.env(tool)).stdout, all_files, inst / "lib")
    installed = ":".join(inst_info.runpath or ()) or "none"
    return (
        f"DT_RUNPATH {':'.join(runpath) or 'none'}; installed {installed}; installed app runs; "
        f"{shadowed}"
    )


def first_shared(suite: Suite) -> str | None:
    """The SDK's first shared library file, the one the shadow check instruments."""
    return next((f for c in suite.sdk.components if not c.static for f in c.files), None)


def shadow(suite: Suite, tool: Cmake, app: Path) -> str:
    """LD_LIBRARY_PATH must win over the app's runpath: an instrumented first library loads."""
    ws, first = suite.ws, first_shared(suite)
    if first is None:
        return "no shared library to shadow"
    shadow_dir = ws.root / "shadow"
    if not (shadow_dir / first).is_file():
        shadow_dir.mkdir(parents=True, exist_ok=True)
        marker = write(shadow_dir / "marker.c", render("shadow_marker.c.j2", marker=SHADOW_MARKER))
        run(
            [
                ws.c_compiler,
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
        # The copy's $ORIGIN-relative runpath leads nowhere from here: point it at the wheel.
        where = ":".join(["$ORIGIN", *(str(d) for d in ws.wheel_lib_dirs)])
        run([find_patchelf(), "--set-rpath", where, shadow_dir / first])
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


def check_shadow_control(suite: Suite) -> str:
    """The shadow check can fail: the same app with DT_RPATH ignores LD_LIBRARY_PATH."""
    if first_shared(suite) is None:
        return "n/a: the SDK has no shared library (nothing is found at run time)"
    tool, gen = suite.modern()
    app = suite.matrix_dir(tool.version, gen) / "build" / "app"
    if not app.is_file():
        raise CheckFailed(f"no app at {app}: run the targets check for {tool.version} {gen} first")
    control = suite.ws.root / "shadow-control" / "app"
    control.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(app, control)
    runpath = ":".join(read_elf(app).runpath or ())
    run([find_patchelf(), "--force-rpath", "--set-rpath", runpath, control])
    if read_elf(control).rpath is None:
        raise CheckFailed("patchelf --force-rpath did not write DT_RPATH")
    try:
        shadow(suite, tool, control)
    except CheckFailed:
        return "with DT_RPATH the instrumented library is not taken (as expected)"
    raise CheckFailed("LD_LIBRARY_PATH shadowed a DT_RPATH app: the shadow check proves nothing")
