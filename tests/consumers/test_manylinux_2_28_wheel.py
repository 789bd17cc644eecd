"""The etrt wheel built for glibc 2.28 (ci/build-manylinux_2_28.sh: dist/manylinux_2_28/, or
$ETRT_WHEEL): its tag as auditwheel reads it, no file in it (the grafted XNNPACK, pthreadpool and
cpuinfo included) needing more than manylinux_2_28, and the XNNPACK delegate, built against the
2024 XNNPACK those recipes build, running every node type it writes from the installed wheel,
against eager PyTorch.

A long suite (`bash ci/long.sh manylinux`, which builds the wheel and also runs the consumer
suite and the models through Python on it). Without the wheel it fails.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest
from etpkg._internal import policy
from etpkg._internal.build.floor import demangler_for, measure
from etpkg._internal.tags import arch_for_conan
from etpkg_fixtures import REPO_ROOT
from wheel_venv import install_wheel, make_venv

pytestmark = [pytest.mark.long, pytest.mark.manylinux]

X86_64 = arch_for_conan("x86_64")
TARGET = policy.policy_named("2_28", X86_64)
GRAFTED = ("libXNNPACK", "libpthreadpool", "libcpuinfo")


@pytest.fixture(scope="module")
def wheel() -> Path:
    given = os.environ.get("ETRT_WHEEL")
    dist = REPO_ROOT / "dist" / "manylinux_2_28"
    found = [Path(given)] if given else sorted(dist.glob("etrt-*.whl"))
    assert found, "no glibc 2.28 wheel: bash ci/build-manylinux_2_28.sh makes dist/manylinux_2_28/"
    return found[-1]


def test_the_wheel_is_tagged_manylinux_2_28_and_auditwheel_agrees(wheel: Path) -> None:
    assert wheel.name.endswith(f"-{TARGET.tag(X86_64)}.whl"), wheel.name
    show = subprocess.run(
        [sys.executable, "-m", "auditwheel", "show", str(wheel)],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    text = " ".join(show.split())
    # auditwheel names the newest tag the files allow; the wheel's must be it or newer, and
    # never above what the files allow (auditwheel would say "is not consistent").
    m = re.search(r'consistent with the following platform tag: "manylinux_(\d+)_(\d+)_x86_64"',
                  text)  # fmt: skip
    assert m, show
    assert (2, 17) <= (int(m[1]), int(m[2])) <= (2, 28), show
    assert f'constrains the platform tag to "{m[0].split(chr(34))[1]}"' in text, show


def test_no_file_in_the_wheel_needs_more_than_manylinux_2_28(wheel: Path, tmp_path: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(tmp_path)
    floor = measure(tmp_path, {}, X86_64)
    above = floor.above(TARGET)
    demangle = demangler_for(above)
    assert not above, "\n".join(policy.describe(n, X86_64, demangle) for n in above)
    # The grafted libraries were read: they are this build's, not Debian 12's (2_34, 2_31).
    files = {n.file for n in floor.needs}
    for lib in GRAFTED:
        assert sum(f.startswith(f"etrt.libs/{lib}") for f in files) == 1, (lib, sorted(files))
    ours = {f"etrt/lib/libetrt{s}.so" for s in ("", "_kernels_optimized", "_backend_xnnpack")}
    assert ours <= files


_DELEGATE_SCRIPT = """
import json, re
import numpy as np, torch
import etrt
from etrt.ir import DelegateCall
from models import Fn, make

cases = {name: make(name, 2) for name in ("mlp", "cnn", "transformer", "mobile")}
# A global average pool with both output bounds (the clamp fuses into it): the 2024 API's
# reduction then writes an internal value that a clamp node reads.
torch.manual_seed(3)
pool = Fn(lambda x: torch.clamp(x.mean((2, 3), keepdim=True), -0.05, 0.05))
x = torch.randn(2, 3, 7, 7)
cases["pooled-clamp"] = (torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), pool).eval(), (x,))
# The squeeze-excite product undamped: the pool's [N, 1, 1, C] broadcast over [N, H, W, C].
gate = Fn(lambda y: y * torch.sigmoid(y.mean((2, 3), keepdim=True)))
cases["gate"] = (torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), gate).eval(), (x,))
diffs, delegated = {}, {}
for name, (model, inputs) in cases.items():
    with torch.no_grad():
        expected = model(*inputs).numpy()
    program = etrt.export(model, inputs, backend="xnnpack-all")
    delegated[name] = sum(isinstance(i, DelegateCall) for i in program.info.plan.instructions)
    (out,) = etrt.load(program.save(f"{name}.etrt")).forward(*inputs)
    diffs[name] = float(np.max(np.abs(out - expected)))
maps = [l.split(None, 5) for l in open("/proc/self/maps").read().splitlines()]
xnnpack = sorted({m[5] for m in maps if len(m) == 6 and re.search(r"/libXNNPACK", m[5])})
print(json.dumps({"diffs": diffs, "delegated": delegated, "xnnpack": xnnpack}))
"""


def test_the_xnnpack_delegate_runs_every_node_type_from_the_wheel(
    wheel: Path, tmp_path: Path
) -> None:
    """mobile holds every node type the exporter writes (hardswish, sigmoid, global average
    pool, clamp, the binary ops: the ones whose XNNPACK API changed after 2022); pooled-clamp a
    global average pool with output bounds; gate the pool's output broadcast, as mobile's
    squeeze-excite has it, before anything damps an error."""
    venv = make_venv(tmp_path / "venv")
    install_wheel(venv, wheel)
    work = tmp_path / "work"
    work.mkdir()
    (work / "models.py").write_text((REPO_ROOT / "tests" / "models.py").read_text())
    (work / "run.py").write_text(textwrap.dedent(_DELEGATE_SCRIPT))
    proc = subprocess.run(
        [str(venv.python), "run.py"], cwd=work, env=venv.env(),
        capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert all(n > 0 for n in got["delegated"].values()), got["delegated"]
    # The process ran the grafted XNNPACK of the wheel, not Debian 12's in /usr/lib.
    assert len(got["xnnpack"]) == 1 and "/etrt.libs/libXNNPACK" in got["xnnpack"][0], got
    for name, diff in got["diffs"].items():
        print(f"{name}: max abs diff {diff:.3g}")
        assert diff <= 1e-5, (name, diff)
