"""What find_package(etrt) costs a consumer's configure, and how long wheelify takes.

    python benchmarks/configure.py [--wheel dist/etrt-*.whl] [--runs N]

Installs the wheel into a fresh venv (etpkg.testing.prepare), then configures two copies
of one consumer from scratch, alternating: one calls find_package(etrt REQUIRED COMPONENTS
<all>) and links every target, the other has no find_package. Prints both medians and their
ratio (target <= 1.15x). With --wheelify, also the median wall time of `python -m etpkg
wheelify` of the etrt package (it must be in the Conan cache: `conan create .` first).

Everything it writes goes to a temporary directory, and the CMake/Ninja venvs to a cache outside
the repository (--cmake-cache, default ~/.cache/etrt-bench/cmake): it runs against an installed
wheel from anywhere.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Nothing is written into the source tree, not even bytecode of modules imported from it.
sys.dont_write_bytecode = True
try:  # the installed etpkg distribution, else the one in this source tree
    from etpkg.testing import prepare
except ModuleNotFoundError:
    sys.path.insert(0, str(ROOT / "python"))
    from etpkg.testing import prepare

MODERN_CMAKE = "3.31.10"


def consumer(src: Path, find: bool, components: list[str], targets: list[str]) -> Path:
    src.mkdir(parents=True)
    (src / "main.cpp").write_text("int main() { return 0; }\n")
    lines = ["cmake_minimum_required(VERSION 3.24)", "project(bench CXX)"]
    lines.append("add_executable(app main.cpp)")
    if find:
        lines.append(f"find_package(etrt REQUIRED COMPONENTS {' '.join(components)})")
        lines.append(f"target_link_libraries(app PRIVATE {' '.join(targets)})")
    (src / "CMakeLists.txt").write_text("\n".join(lines) + "\n")
    return src


def timed(cmd: list[str | Path], **kwargs: object) -> float:
    start = time.perf_counter()
    subprocess.run([str(c) for c in cmd], check=True, capture_output=True, **kwargs)  # type: ignore[call-overload]
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", type=Path, help="default: the newest dist/etrt-*.whl")
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument(
        "--cmake-cache", type=Path, default=Path.home() / ".cache" / "etrt-bench" / "cmake",
        help="where the pinned CMake and Ninja venvs are kept between runs",
    )  # fmt: skip
    parser.add_argument(
        "--wheelify", action="store_true",
        help="also time etpkg wheelify of this source tree (needs `conan create .` first)",
    )  # fmt: skip
    args = parser.parse_args()
    if args.wheel is None:
        built = sorted((ROOT / "dist").glob("etrt-*.whl"), key=lambda p: p.stat().st_mtime)
        if not built:
            parser.error("no --wheel given and no dist/etrt-*.whl (bash ci/build.sh makes one)")
        args.wheel = built[-1]
    if not args.wheel.is_file():
        parser.error(f"no such wheel: {args.wheel}")
    wheel = args.wheel.resolve()

    with tempfile.TemporaryDirectory(prefix="etrt bench ") as tmp_name:
        tmp = Path(tmp_name)
        ws = prepare(wheel, tmp, args.cmake_cache)
        sdk = ws.sdk
        tool = ws.tool(MODERN_CMAKE)
        comps = [c.name for c in sdk.components]
        targets = [c.target for c in sdk.components]
        with_pkg = consumer(tmp / "with", True, comps, targets)
        without = consumer(tmp / "without", False, comps, targets)
        times: dict[bool, list[float]] = {True: [], False: []}
        for i in range(args.runs):
            for find, src in ((True, with_pkg), (False, without)):
                build = tmp / f"build-{find}-{i}"
                times[find].append(
                    timed(
                        [
                            tool.cmake,
                            "-S",
                            src,
                            "-B",
                            build,
                            "-G",
                            "Ninja",
                            f"-DCMAKE_PREFIX_PATH={ws.pkg_root}",
                        ],
                        env=ws.env(tool),
                    )
                )
        with_s, without_s = statistics.median(times[True]), statistics.median(times[False])
        print(f"fresh configure, CMake {MODERN_CMAKE} + Ninja, median of {args.runs}:")
        print(f"  find_package(etrt COMPONENTS {' '.join(comps)}): {with_s * 1e3:.0f} ms")
        print(f"  no find_package:                {without_s * 1e3:.0f} ms")
        print(f"  ratio {with_s / without_s:.3f} (target <= 1.15)")

        if not args.wheelify:
            return
        if not (ROOT / "conanfile.py").is_file():
            parser.error(f"--wheelify needs etrt's source tree; {ROOT} is not one")
        walls = [
            timed(
                [sys.executable, "-m", "etpkg", "wheelify", ROOT, "-o", tmp / f"dist{i}"], cwd=tmp
            )
            for i in range(3)
        ]
        print(
            f"wheelify etrt: median {statistics.median(walls):.2f} s over 3 runs "
            f"(min {min(walls):.2f}, max {max(walls):.2f})"
        )


if __name__ == "__main__":
    main()
