"""Two or more exports of one model run side by side under every instruction-set cap at one
thread and at two, through the ctypes binding in a fresh process each (the cap and the thread
count are read once per process): what a rewrite that must not change a bit is checked with."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

CAPS = ("avx512", "avx2", "sse2")
THREADS = (1, 2)

_RUN = """
import sys
import numpy as np
import etrt.runtime
folder, tag, names = sys.argv[1], sys.argv[2], sys.argv[3:]
x = np.load(folder + "/x.npy")
for name in names:
    with etrt.runtime.load(folder + "/" + name + ".etrt") as m:
        got = m.forward(x)
    np.savez(folder + "/" + name + "." + tag + ".npz", *got)
"""


def outputs_everywhere(
    folder: Path, names: list[str], x: np.ndarray
) -> Iterator[tuple[str, dict[str, list[np.ndarray]]]]:
    """For each cap and thread count ("avx2-2"), the outputs of folder/NAME.etrt for each name on
    input `x`."""
    np.save(folder / "x.npy", x)
    for cap in CAPS:
        for threads in THREADS:
            tag = f"{cap}-{threads}"
            env = dict(os.environ, ETRT_MAX_ISA=cap, ETRT_NUM_THREADS=str(threads))
            proc = subprocess.run(
                [sys.executable, "-c", _RUN, str(folder), tag, *names],
                env=env, capture_output=True, text=True, timeout=300, check=False,
            )  # fmt: skip
            assert proc.returncode == 0, proc.stderr[-3000:]
            outs = {}
            for name in names:
                with np.load(folder / f"{name}.{tag}.npz") as saved:
                    outs[name] = [saved[f"arr_{i}"] for i in range(len(saved.files))]
            yield tag, outs


def assert_same_bits(
    folder: Path, names: tuple[str, str], x: np.ndarray, want: list[np.ndarray], tol: float
) -> None:
    """folder/A.etrt and folder/B.etrt give the same output bits under every cap and thread count,
    and each output is within `tol` of `want` (eager's)."""
    a, b = names
    for tag, outs in outputs_everywhere(folder, [a, b], x):
        assert len(outs[a]) == len(outs[b]) == len(want), tag
        for i, w in enumerate(want):
            assert outs[a][i].tobytes() == outs[b][i].tobytes(), (tag, i)
            np.testing.assert_allclose(
                outs[a][i], w, rtol=tol, atol=tol, err_msg=f"{tag}, output {i}"
            )
