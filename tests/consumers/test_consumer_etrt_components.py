"""Threadpool and XNNPACK as a C++ consumer of the installed etrt wheel sees them.

One workspace per session (the `etrt_wheel` fixture installed with pip --no-deps into a fresh
venv, testing.prepare); the consumers in tests/consumer/etrt_components are built once per CMake
route and version. Proves:

- auditwheel grafted XNNPACK, pthreadpool and cpuinfo into etrt.libs/ under hashed names; no
  ELF file has DT_RPATH, every runpath entry stays inside the wheel and resolves what it needs;
- etrt::backend_xnnpack linked by path (variables route) links without -rpath-link: GNU ld finds
  the grafted libraries through the library's own DT_RUNPATH; a copy without ../../etrt.libs
  fails to link, naming them;
- the threadpool probe: parallel with etrt::threadpool linked, serial without, on both routes;
- a delegated MLP runs from the five-component app and matches eager PyTorch; the two-component
  app fails naming XnnpackBackend; one backend more, every operator once.
"""

from __future__ import annotations

import csv
import itertools
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import etrt
import numpy as np
import pytest
import torch
from etpkg import testing
from etpkg_fixtures import REPO_ROOT
from etrt.ir import DelegateCall
from etrt.xnnpack import BACKEND_ID
from models import make

pytestmark = pytest.mark.slow

CMAKE_CACHE = REPO_ROOT / "build" / "cmake-venvs"
CONSUMER = REPO_ROOT / "tests" / "consumer" / "etrt_components"
PROBE_APP = REPO_ROOT / "tests" / "apps" / "threadpool_probe"
OLD, MODERN = testing.OLD_CMAKE_VERSIONS[0], testing.MODERN[0]
GRAFTED = ("XNNPACK", "pthreadpool", "cpuinfo")
# auditwheel's graft: lib<name>-<8 hex digits of the content hash>.so[.<soversion>]
HASHED = {name: re.compile(rf"lib{name}-[0-9a-f]{{8}}\.so(\.\d+)*") for name in GRAFTED}
# What GNU ld prints when it cannot find a needed library of a shared library it links against.
LD_NOT_FOUND = "not found (try using -rpath or -rpath-link)"


@dataclass(frozen=True)
class Consumer:
    """One configured and built consumer project; link_lines: executable -> its link command."""

    route: str
    version: str
    build: Path
    link_lines: dict[str, str]

    def app(self, name: str) -> Path:
        return self.build / name


@pytest.fixture(scope="session")
def wheel_ws(etrt_wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> testing.Workspace:
    return testing.prepare(etrt_wheel, tmp_path_factory.mktemp("etrt-components"), CMAKE_CACHE)


def link_env(ws: testing.Workspace, tool: testing.Cmake) -> dict[str, str]:
    """The consumer environment without the variables through which ld could find libraries."""
    env = ws.env(tool)
    for name in ("LD_RUN_PATH", "LIBRARY_PATH", "LD_LIBRARY_PATH"):
        env.pop(name, None)
    return env


def build_consumer(
    ws: testing.Workspace, src: Path, name: str, version: str, *args: str
) -> Consumer:
    tool = ws.tool(version)
    build = ws.root / "components" / name
    ws.configure(tool, "Ninja", src, build, *args)
    proc = testing.run([tool.cmake, "--build", build, "-j2", "--", "-v"], env=link_env(ws, tool))
    lines = {}
    for line in proc.stdout.splitlines():
        match = re.search(r"\s-o (\w+)\s", line)  # an executable (objects have a path)
        if match:
            lines[match.group(1)] = line
    route = next((a.split("=", 1)[1] for a in args if a.startswith("-DETRT_ROUTE=")), "targets")
    return Consumer(route, version, build, lines)


@pytest.fixture(scope="session")
def consumer(wheel_ws: testing.Workspace) -> Callable[[str, str], Consumer]:
    """consumer(route, version): tests/consumer/etrt_components built on that route (cached)."""
    cache: dict[tuple[str, str], Consumer] = {}

    def get(route: str, version: str) -> Consumer:
        if (route, version) not in cache:
            cache[(route, version)] = build_consumer(
                wheel_ws, CONSUMER, f"{route}-{version}", version, f"-DETRT_ROUTE={route}"
            )
        return cache[(route, version)]

    return get


def run_app(
    ws: testing.Workspace, app: Path, *args: str | Path, threads: int | None = None
) -> subprocess.CompletedProcess[str]:
    env = ws.env(ws.tool(MODERN))
    env.pop("ETRT_NUM_THREADS", None)
    if threads is not None:
        env["ETRT_NUM_THREADS"] = str(threads)
    return testing.run([app, *args], env=env, check=False, timeout=120)


def resolved_libraries(ws: testing.Workspace, app: Path) -> dict[str, Path]:
    """soname -> the file the dynamic loader picks for app (LD_TRACE_LOADED_OBJECTS, as ldd)."""
    env = dict(ws.env(ws.tool(MODERN)), LD_TRACE_LOADED_OBJECTS="1")
    out = testing.run([app], env=env).stdout
    return {
        m.group(1): Path(m.group(2)) for m in re.finditer(r"^\s*(\S+) => (/.*) \(0x", out, re.M)
    }


# --- 1: the graft and the runpaths --------------------------------------------------------------


def installed_files(ws: testing.Workspace) -> list[Path]:
    """Every file pip installed from the wheel (its RECORD)."""
    records = list(ws.site.glob(f"{ws.sdk.name}-*.dist-info/RECORD"))
    assert len(records) == 1, records
    with records[0].open(newline="") as f:
        return [ws.site / row[0] for row in csv.reader(f) if row]


def installed_elf_files(ws: testing.Workspace) -> list[Path]:
    return [p for p in installed_files(ws) if p.is_file() and testing.is_elf(p)]


def inside(path: Path, roots: list[Path]) -> bool:
    return any(path == r or r in path.parents for r in roots)


def test_auditwheel_grafted_xnnpack_pthreadpool_and_cpuinfo_with_hashed_names(
    wheel_ws: testing.Workspace,
) -> None:
    ws = wheel_ws
    grafted = sorted(p.name for p in ws.grafted_dir.iterdir()) if ws.grafted_dir.is_dir() else []
    needed_anywhere = {n for p in installed_elf_files(ws) for n in testing.read_elf(p).needed}
    for name, pattern in HASHED.items():
        files = [f for f in grafted if pattern.fullmatch(f)]
        assert len(files) == 1, f"lib{name} grafted as {files} in {ws.grafted_dir}: {grafted}"
        soname = testing.read_elf(ws.grafted_dir / files[0]).soname
        assert soname == files[0], "SONAME is not the file"
        assert files[0] in needed_anywhere, f"nothing in the wheel needs the grafted {files[0]}"
    # The wheel's own libraries name only the grafted copies, never Debian's sonames.
    system = {n for n in needed_anywhere if re.fullmatch(rf"lib({'|'.join(GRAFTED)})\.so.*", n)}
    assert not system, f"the wheel still needs system libraries {sorted(system)}"
    unneeded = sorted(set(grafted) - needed_anywhere)
    assert not unneeded, f"grafted but needed by nothing: {unneeded}"


def test_every_elf_file_has_runpath_only_and_stays_inside_the_wheel(
    wheel_ws: testing.Workspace,
) -> None:
    """No DT_RPATH anywhere; every ELF of the package itself and every one that needs another file
    of the wheel has DT_RUNPATH; each entry starts at $ORIGIN, stays in the installed wheel and
    exists; each needed file of the wheel is found on the runpath. (A grafted leaf such as
    cpuinfo needs only the system and may carry no runpath: there is nothing for it to find.)"""
    ws = wheel_ws
    elves = installed_elf_files(ws)
    roots = [ws.pkg_root.resolve(), ws.grafted_dir.resolve()]
    shipped = {p.name for p in elves}
    seen = []
    for path in elves:
        info = testing.read_elf(path)
        rel = path.relative_to(ws.site)
        assert info.rpath is None, f"{rel} has DT_RPATH {':'.join(info.rpath)}"
        wants = [n for n in info.needed if n in shipped]
        if inside(path.resolve(), [ws.pkg_root.resolve()]) or wants:
            assert info.runpath, f"{rel} has no DT_RUNPATH (needs {wants})"
        dirs = []
        for entry in info.runpath or ():
            assert entry.startswith("$ORIGIN"), (
                f"{rel}: runpath entry {entry!r} is not $ORIGIN-relative"
            )
            where = Path(os.path.normpath(entry.replace("$ORIGIN", str(path.parent.resolve()), 1)))
            assert inside(where, roots), f"{rel}: runpath entry {entry} leaves the wheel ({where})"
            assert where.is_dir(), f"{rel}: runpath entry {entry} -> {where} does not exist"
            dirs.append(where)
        for name in wants:
            assert any((d / name).is_file() for d in dirs), f"{rel}: {name} not on its runpath"
        seen.append(f"{rel}: {':'.join(info.runpath or ('-',))}")
    assert len(elves) >= len(ws.sdk.components) + len(GRAFTED), seen
    print("\n".join(seen))


# --- 2: etrt::backend_xnnpack by path; ld resolves the graft through the library's runpath -----


def search_dirs(link_line: str) -> list[Path]:
    """The directories a link command gives ld to search: -L<dir>, -Wl,-rpath,<dir>."""
    dirs = []
    for arg in shlex.split(link_line):
        if arg.startswith("-L"):
            dirs.append(Path(arg[2:]))
        elif arg.startswith("-Wl,"):
            parts = arg.split(",")[1:]
            pairs = itertools.pairwise(parts)
            dirs += [Path(v) for k, v in pairs if k in ("-rpath", "-rpath-link")]
    return dirs


@pytest.mark.parametrize("version", [OLD, MODERN])
def test_backend_xnnpack_by_path_links_through_its_own_runpath(
    wheel_ws: testing.Workspace, consumer: Callable[[str, str], Consumer], version: str
) -> None:
    ws = wheel_ws
    built = consumer("variables", version)
    line = built.link_lines["runner_xnnpack"]
    backend = ws.lib_dir / "libetrt_backend_xnnpack.so"
    assert f'"{backend}"' in line or f"{backend}," in line, f"not linked by path: {line}"
    assert "-rpath-link" not in line, line
    assert ws.grafted_dir.name not in line, f"the link line names {ws.grafted_dir.name}: {line}"
    # No directory the link line gives ld (-L, -rpath) holds a grafted library.
    grafted = [p.name for p in ws.grafted_dir.iterdir()]
    dirs = search_dirs(line)
    assert ws.lib_dir in dirs, f"expected CMake's build rpath {ws.lib_dir} in {dirs}"
    for d in dirs:
        assert not any((d / g).exists() for g in grafted), f"{d} holds a grafted library"
    app = built.app("runner_xnnpack")
    assert "libetrt_backend_xnnpack.so" in testing.read_elf(app).needed
    resolved = resolved_libraries(ws, app)
    for name in grafted:
        assert resolved.get(name, Path()).parent.resolve() == ws.grafted_dir.resolve(), resolved
    proc = run_app(ws, app, "--list-backends")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [BACKEND_ID]


def runner_object(built: Consumer) -> Path:
    objects = list((built.build / "CMakeFiles" / "runner_obj.dir").rglob("etrt_runner.cpp.o"))
    assert len(objects) == 1, objects
    return objects[0]


def link_runner(
    obj: Path, out: Path, libdir: Path, *extra: str
) -> subprocess.CompletedProcess[str]:
    libs = [
        libdir / f for f in ("libetrt_backend_xnnpack.so", "libetrt_threadpool.so", "libetrt.so")
    ]
    return testing.run(["g++", obj, "-o", out, *extra, "-Wl,--no-as-needed", *libs], check=False)


def test_link_against_a_copy_without_the_graft_fails_naming_xnnpack(
    wheel_ws: testing.Workspace, consumer: Callable[[str, str], Consumer]
) -> None:
    """The control: the same link, once against the wheel's libraries and once against copies
    in a directory with no ../../etrt.libs. Only the copies fail, with ld's not-found warning for
    the grafted XNNPACK; -rpath-link to etrt.libs repairs them: the graft was all that was
    missing."""
    ws = wheel_ws
    obj = runner_object(consumer("variables", MODERN))
    base = ws.root / "components" / "control"
    if base.exists():
        shutil.rmtree(base)
    copies = base / "copy" / "lib"
    copies.mkdir(parents=True)
    for name in ("libetrt_backend_xnnpack.so", "libetrt_threadpool.so", "libetrt.so"):
        shutil.copy2(ws.lib_dir / name, copies / name)
    assert not (copies / ".." / ".." / ws.grafted_dir.name).exists()
    xnnpack = next(p.name for p in ws.grafted_dir.iterdir() if HASHED["XNNPACK"].fullmatch(p.name))

    from_wheel = link_runner(obj, base / "app-wheel", ws.lib_dir)
    assert from_wheel.returncode == 0, from_wheel.stderr
    from_copy = link_runner(obj, base / "app-copy", copies)
    assert from_copy.returncode != 0, "linked against the copies without etrt.libs"
    expected = f"{xnnpack}, needed by {copies / 'libetrt_backend_xnnpack.so'}, {LD_NOT_FOUND}"
    assert expected in from_copy.stderr, from_copy.stderr[-3000:]
    assert "undefined reference to `xnn_" in from_copy.stderr
    repaired = link_runner(obj, base / "app-repaired", copies, f"-Wl,-rpath-link,{ws.grafted_dir}")
    assert repaired.returncode == 0, repaired.stderr


# --- 3: the threadpool probe, targets and variables routes --------------------------------------


def reported(stdout: str, key: str) -> int:
    match = re.search(rf"^{key}: (\d+)$", stdout, re.M)
    assert match, f"no '{key}' in: {stdout}"
    return int(match.group(1))


@pytest.fixture(scope="session")
def probes(
    wheel_ws: testing.Workspace, consumer: Callable[[str, str], Consumer]
) -> Callable[[str], tuple[Path, Path]]:
    """probes(build) -> (probe linking threadpool, probe without): the lead's probe project as is
    (targets, modern CMake) and the components consumer on each route."""
    cache: dict[str, tuple[Path, Path]] = {}

    def get(which: str) -> tuple[Path, Path]:
        if which not in cache:
            if which == f"apps/threadpool_probe {MODERN}":
                built = build_consumer(wheel_ws, PROBE_APP, f"threadpool_probe-{MODERN}", MODERN)
                cache[which] = (built.app("threadpool_probe"), built.app("threadpool_probe_serial"))
            else:
                route, version = which.split()
                built = consumer(route, version)
                cache[which] = (built.app("probe"), built.app("probe_serial"))
        return cache[which]

    return get


PROBE_BUILDS = [f"apps/threadpool_probe {MODERN}", f"targets {MODERN}", f"variables {OLD}"]


@pytest.mark.parametrize("which", PROBE_BUILDS)
def test_probe_runs_parallel_for_on_several_threads_only_with_threadpool(
    wheel_ws: testing.Workspace, probes: Callable[[str], tuple[Path, Path]], which: str
) -> None:
    parallel, serial = probes(which)
    assert "libetrt_threadpool.so" in testing.read_elf(parallel).needed
    assert "libetrt_threadpool.so" not in testing.read_elf(serial).needed

    proc = run_app(wheel_ws, parallel, threads=2)
    assert proc.returncode == 0, proc.stderr
    assert reported(proc.stdout, "parallel_num_threads") == 2
    assert reported(proc.stdout, "distinct threads") > 1

    proc = run_app(wheel_ws, serial, threads=2)
    assert proc.returncode == 0, proc.stderr
    assert reported(proc.stdout, "parallel_num_threads") == 1
    assert reported(proc.stdout, "distinct threads") == 1

    proc = run_app(wheel_ws, parallel, threads=1)  # the count follows ETRT_NUM_THREADS
    assert proc.returncode == 0, proc.stderr
    assert reported(proc.stdout, "distinct threads") == 1


# --- 4: a delegated MLP; one registry per process -----------------------------------------------

Mlp = tuple[Path, Path, "np.ndarray[Any, Any]"]


@pytest.fixture(scope="session")
def delegated_mlp(tmp_path_factory: pytest.TempPathFactory) -> Mlp:
    """The MLP exported with backend="xnnpack-all", its inputs.bin and eager PyTorch's output."""
    root = tmp_path_factory.mktemp("delegated-mlp")
    model, inputs = make("mlp", 4)
    program = etrt.export(model, inputs, backend="xnnpack-all")
    assert any(isinstance(i, DelegateCall) for i in program.info.plan.instructions)
    assert program.info.instruction_ops == [f"delegate:{BACKEND_ID}"]
    path = program.save(root / "mlp-xnnpack.etrt")
    in_path = root / "inputs.bin"
    in_path.write_bytes(b"".join(t.contiguous().numpy().tobytes() for t in inputs))
    with torch.no_grad():
        expected = model(*inputs).numpy()
    return path, in_path, expected


@pytest.mark.parametrize(("route", "version"), [("targets", MODERN), ("variables", OLD)])
def test_delegated_mlp_runs_from_the_five_component_app_and_matches_eager(
    wheel_ws: testing.Workspace,
    consumer: Callable[[str, str], Consumer],
    delegated_mlp: Mlp,
    route: str,
    version: str,
) -> None:
    program, inputs, expected = delegated_mlp
    built = consumer(route, version)
    m = wheel_ws.sdk
    for comp in m.components:  # all five on the link line
        assert all(f in built.link_lines["runner_all"] for f in comp.files), comp.name
    # Needed: the runtime and every registration-only library (retained); etdump, whose API the
    # runner does not call, may be dropped by --as-needed.
    kept = m.files(["runtime", *(c.name for c in m.components if c.registration_only)])
    assert kept <= testing.wheel_needed(built.app("runner_all"), m)
    for threads in (1, 2):
        out = built.build / f"mlp-out-{threads}.bin"
        out.unlink(missing_ok=True)
        proc = run_app(
            wheel_ws, built.app("runner_all"), program, "--inputs", inputs, "--outputs", out,
            threads=threads,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        got = np.fromfile(out, dtype=np.float32).reshape(expected.shape)
        diff = float(np.max(np.abs(got - expected)))
        print(f"{route} {version}, {threads} thread(s): max abs diff {diff:.3g}")
        assert diff <= 1e-5


@pytest.mark.parametrize(("route", "version"), [("targets", MODERN), ("variables", OLD)])
def test_delegated_mlp_fails_without_backend_xnnpack_naming_it(
    wheel_ws: testing.Workspace,
    consumer: Callable[[str, str], Consumer],
    delegated_mlp: Mlp,
    route: str,
    version: str,
) -> None:
    program, inputs, _ = delegated_mlp
    built = consumer(route, version)
    app = built.app("runner_base")
    assert "libetrt_backend_xnnpack.so" not in testing.read_elf(app).needed
    out = built.build / "mlp-out-base.bin"
    out.unlink(missing_ok=True)
    proc = run_app(wheel_ws, app, program, "--inputs", inputs, "--outputs", out)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "BackendMissing" in proc.stderr and BACKEND_ID in proc.stderr, proc.stderr
    assert not out.exists()


def listed(ws: testing.Workspace, app: Path, what: str) -> list[str]:
    proc = run_app(ws, app, what)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


@pytest.mark.parametrize(("route", "version"), [("targets", MODERN), ("variables", OLD)])
def test_five_components_add_one_backend_and_register_every_operator_once(
    wheel_ws: testing.Workspace, consumer: Callable[[str, str], Consumer], route: str, version: str
) -> None:
    built = consumer(route, version)
    base, every = built.app("runner_base"), built.app("runner_all")
    base_backends = listed(wheel_ws, base, "--list-backends")
    all_backends = listed(wheel_ws, every, "--list-backends")
    assert len(all_backends) == len(base_backends) + 1
    assert sorted(set(all_backends) - set(base_backends)) == [BACKEND_ID]
    assert len(set(all_backends)) == len(all_backends)
    base_kernels = listed(wheel_ws, base, "--list-kernels")
    all_kernels = listed(wheel_ws, every, "--list-kernels")
    assert base_kernels, "the two-component app registers no operator"
    assert len(set(all_kernels)) == len(all_kernels), "an operator is registered twice"
    assert sorted(all_kernels) == sorted(base_kernels)
    # The backend alone brings no operator: kernels come from kernels_optimized only.
    assert listed(wheel_ws, built.app("runner_xnnpack"), "--list-kernels") == []
