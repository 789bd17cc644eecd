"""etrt.Module shared between Python threads, and inputs refused before any copy.

Each check runs a script in a child interpreter on an in-tree build of the libraries
(ETRT_LIBRARY_DIR): the release build, and the ThreadSanitizer build (build/tsan) with
libtsan preloaded into Python, where any report fails the run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import etrt
import pytest
from models import make
from runtime_build import LIBRARIES, REPO_ROOT, TSAN_OPTIONS, build_tools, libtsan, tsan_build

# argv: program, threads, iterations. Prints one "key value" line per figure, then "ok".
STRESS = textwrap.dedent(
    """
    import sys, threading, time
    import numpy as np
    import etrt
    from etrt.errors import EtrtError

    path, threads, iterations = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    with etrt.load(path) as ref:
        spec = ref.method().inputs
        rng = np.random.default_rng(0)
        inputs = [rng.standard_normal(s.shape).astype(s.dtype) for s in spec]
        expected = ref.forward(*inputs)

    def same(got):
        return all(np.array_equal(g, e) for g, e in zip(got, expected))

    # A cold module shared by every thread, all making their first call at once.
    module = etrt.load(path)
    start = threading.Barrier(threads)
    methods, mismatches, errors, runs = set(), [], [], [0]
    lock = threading.Lock()

    def shared():
        start.wait()
        try:
            for _ in range(iterations):
                got = module.forward(*inputs)
                with lock:
                    methods.add(id(module.method()))
                    runs[0] += 1
                    if not same(got):
                        mismatches.append(1)
        except Exception as exc:
            errors.append(repr(exc))

    pool = [threading.Thread(target=shared) for _ in range(threads)]
    for t in pool: t.start()
    for t in pool: t.join()
    assert not errors, errors
    print("shared runs", runs[0])
    print("shared mismatches", len(mismatches))
    print("shared method objects", len(methods))

    # close() while other threads are inside forward(): it waits for them; later calls raise.
    before, after, other = [0], [0], []

    def until_closed():
        while True:
            try:
                got = module.forward(*inputs)
            except EtrtError as exc:
                if "is closed" in str(exc):
                    with lock: after[0] += 1
                    return
                other.append(repr(exc)); return
            except Exception as exc:
                other.append(repr(exc)); return
            with lock:
                before[0] += 1
                if not same(got): mismatches.append(1)

    pool = [threading.Thread(target=until_closed) for _ in range(threads)]
    for t in pool: t.start()
    deadline = time.monotonic() + 60
    while before[0] < threads and time.monotonic() < deadline:
        time.sleep(0.001)
    module.close()
    for t in pool: t.join()
    assert not other, other
    print("close runs before", before[0])
    print("close refused after", after[0])
    print("close mismatches", len(mismatches))
    print("ok")
    """
)

# argv: program (mlp, one float32 input of shape [2, 784]).
API = textwrap.dedent(
    """
    import sys
    import numpy as np
    import torch
    import etrt
    from etrt.errors import EtrtError

    path = sys.argv[1]

    def refused(fn, *words):
        try:
            fn()
        except EtrtError as exc:
            assert all(w in str(exc) for w in words), str(exc)
            # Refused inputs are the runtime's own InvalidArgument, whichever layer saw them.
            assert "input 0" not in str(exc) or getattr(exc, "code", "") == "InvalidArgument", exc
            return
        raise AssertionError(f"accepted; expected an error with {words}")

    refused(lambda: etrt.load(path + "\\x00junk"), "NUL", "program path")
    refused(lambda: etrt.load(path, path + "\\x00.ptd"), "NUL", "data map path")
    m = etrt.load(path)
    refused(lambda: m.method("forward\\x00x"), "NUL", "method name")
    # Tens of GB if copied: the shape (or dtype) must be refused from the metadata alone.
    huge = np.broadcast_to(np.float32(1), (100_000, 100_000))
    refused(lambda: m.forward(huge), "input 0: expected sizes [2, 784], got [100000, 100000]")
    refused(lambda: m.forward(np.broadcast_to(np.complex64(1), (100_000, 100_000))),
            "input 0: expected float32, got complex64 (inputs convert by the same-kind rule:",
            "never complex to floating)")
    refused(lambda: m.forward(torch.ones(1).expand(100_000, 100_000)),
            "input 0: expected sizes [2, 784], got [100000, 100000]")
    refused(lambda: m.forward(np.ones((2, 785), np.float32)[:, 1:].T), "[784, 2]")
    # An array used in place as it is (no pre-check): the runtime's own shape check refuses it.
    wrong = np.ones((2, 785), np.float32)
    refused(lambda: m.forward(wrong), "input 0: expected sizes [2, 784], got [2, 785]")
    refused(lambda: m.forward(wrong[0]), "input 0: expected sizes [2, 784], got [785]")
    # The right shape in another layout or a castable dtype still runs (copied once).
    x = np.random.default_rng(0).standard_normal((2, 784)).astype(np.float32)
    want = m.forward(x)[0]
    strided = np.asfortranarray(x)
    assert not strided.flags.c_contiguous
    assert np.array_equal(m.forward(strided)[0], want)
    assert np.allclose(m.forward(x.astype(np.float64))[0], want, atol=1e-6)
    assert np.array_equal(m.forward(torch.from_numpy(x))[0], want)
    m.close()
    refused(lambda: m.forward(x), "is closed")
    print("ok")
    """
)


@pytest.fixture(scope="module")
def programs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("programs")
    paths = {}
    for name, backend in (("mlp", None), ("cnn", "xnnpack")):
        model, inputs = make(name, 2)
        path = out / f"{name}_{backend or 'portable'}.etrt"
        etrt.export(model, inputs, backend=backend).save(path)
        paths[name] = path
    return paths


def run_script(script: str, lib_dir: Path, *args: object,
               extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, ETRT_LIBRARY_DIR=str(lib_dir), **(extra_env or {}))
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT / "python"), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-c", script, *map(str, args)],
        capture_output=True, text=True, timeout=600, check=False, env=env,
    )  # fmt: skip


def figures(stdout: str) -> dict[str, int]:
    rows = [line.rsplit(" ", 1) for line in stdout.splitlines() if line != "ok"]
    return {key: int(value) for key, value in rows}


def check_stress(proc: subprocess.CompletedProcess[str], threads: int, iterations: int) -> None:
    assert "ThreadSanitizer" not in proc.stderr, proc.stderr[-8000:]
    assert proc.returncode == 0, proc.stdout + proc.stderr[-8000:]
    assert proc.stdout.splitlines()[-1] == "ok"
    got = figures(proc.stdout)
    assert got["shared runs"] == threads * iterations
    assert got["shared method objects"] == 1
    assert got["shared mismatches"] == 0 and got["close mismatches"] == 0
    assert got["close runs before"] > 0
    assert got["close refused after"] == threads  # every thread saw the clear error


@pytest.mark.parametrize("name", ["mlp", "cnn"])
def test_shared_module_and_close_during_forward(programs: dict[str, Path], name: str) -> None:
    lib_dir = build_tools("runtime", ["etrt_runner"]).build_dir
    proc = run_script(STRESS, lib_dir, programs[name], 8, 25)
    check_stress(proc, 8, 25)


@pytest.mark.parametrize("name", ["mlp", "cnn"])
def test_shared_module_and_close_under_thread_sanitizer(
    programs: dict[str, Path], name: str
) -> None:
    lib_dir = tsan_build(LIBRARIES)
    proc = run_script(
        STRESS, lib_dir, programs[name], 4, 4,
        extra_env={"LD_PRELOAD": str(libtsan()), "TSAN_OPTIONS": TSAN_OPTIONS},
    )  # fmt: skip
    check_stress(proc, 4, 4)


def test_bad_paths_and_inputs_are_refused_before_any_copy(programs: dict[str, Path]) -> None:
    lib_dir = build_tools("runtime", ["etrt_runner"]).build_dir
    proc = run_script(API, lib_dir, programs["mlp"])
    assert proc.returncode == 0, proc.stdout + proc.stderr[-6000:]
    assert proc.stdout.strip() == "ok"
