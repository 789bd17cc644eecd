"""State across calls: buffers a program mutates (torch.export's BUFFER_MUTATION outputs) live in
the method, persist from one execute() to the next and go back to their initial value on
reset; a KV cache update is written in place; no other tensor shares a state's bytes; XNNPACK
never holds state; a program that mutates its input is refused."""

from __future__ import annotations

import subprocess
from pathlib import Path

import decoders
import etrt
import numpy as np
import pytest
import runtime_build
import torch
from etrt.ir import KernelCall, StorageKind, TensorValue
from etrt.program import ProgramInfo
from torch import nn


@pytest.fixture(scope="module")
def tools() -> runtime_build.Tools:
    return runtime_build.python_runtime()


class Accumulator(nn.Module):
    """A call counter (zeros at first), a running sum, and a window written through a slice."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("count", torch.zeros(1, dtype=torch.int64))
        self.register_buffer("total", torch.zeros(4))
        self.register_buffer("window", torch.arange(6, dtype=torch.float32))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        self.count.add_(1)
        self.total.add_(x)
        self.window[1:5] = x * self.count
        return self.total * 2, self.window.clone()


def _states(info: ProgramInfo) -> list[TensorValue]:
    return [
        v for v in info.plan.values if isinstance(v, TensorValue) and v.storage == StorageKind.STATE
    ]


def test_state_persists_between_calls_and_reset_restores_it(
    tools: runtime_build.Tools, tmp_path: Path
) -> None:
    model = Accumulator()
    program = etrt.export(Accumulator(), (torch.zeros(4),))
    states = _states(program.info)
    assert [(s.sizes, s.zero_initial) for s in states] == [
        ((1,), True),
        ((4,), True),
        ((6,), False),
    ]
    method = etrt.load(program.save(tmp_path / "acc.etrt")).method()
    assert method.num_states == 3
    xs = [torch.randn(4) for _ in range(5)]
    for x in xs:
        got = method(x)
        want = model(x)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w.numpy(), rtol=1e-6)  # type: ignore[arg-type]
    method.reset()
    fresh = Accumulator()
    for x in xs[:2]:
        got = method(x)
        for g, w in zip(got, fresh(x), strict=True):
            np.testing.assert_allclose(g, w.numpy(), rtol=1e-6)  # type: ignore[arg-type]


def test_each_loaded_method_owns_its_state(tools: runtime_build.Tools, tmp_path: Path) -> None:
    path = etrt.export(Accumulator(), (torch.zeros(4),)).save(tmp_path / "acc.etrt")
    a, b = etrt.load(path).method(), etrt.load(path).method()
    ones = torch.ones(4)
    for _ in range(3):
        a(ones)
    (total_b, _), (total_a, _) = b(ones), a(ones)
    np.testing.assert_array_equal(total_b, np.full(4, 2.0))  # one call: 1 * 2
    np.testing.assert_array_equal(total_a, np.full(4, 8.0))  # four calls: 4 * 2


def test_state_persists_across_cpp_executes(tools: runtime_build.Tools, tmp_path: Path) -> None:
    """etrt_runner runs the method 1 + N times (a warm-up, then N): the counter shows them all."""
    path = etrt.export(Accumulator(), (torch.zeros(4),)).save(tmp_path / "acc.etrt")
    (tmp_path / "in.bin").write_bytes(np.ones(4, np.float32).tobytes())
    for repeat, calls in [(1, 1), (5, 6)]:
        proc = subprocess.run(
            [str(tools.runner), str(path), "--inputs", str(tmp_path / "in.bin"),
             "--outputs", str(tmp_path / "out.bin"), "--repeat", str(repeat)],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        total = np.frombuffer((tmp_path / "out.bin").read_bytes()[:16], np.float32)
        np.testing.assert_array_equal(total, np.full(4, 2.0 * calls))


def test_an_update_reading_its_own_state_is_not_written_over_it(
    tools: runtime_build.Tools, tmp_path: Path
) -> None:
    """copy_ of a buffer's own transpose: written in place it would read what it overwrites."""

    class Transposes(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("grid", torch.arange(16, dtype=torch.float32).view(4, 4))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            self.grid.copy_(self.grid.t())
            return self.grid + x

    program = etrt.export(Transposes(), (torch.zeros(1),))
    method = etrt.load(program.save(tmp_path / "t.etrt")).method()
    grid = np.arange(16, dtype=np.float32).reshape(4, 4)
    for step in range(3):
        grid = grid.T.copy()
        (got,) = method(np.full(1, step, np.float32))
        np.testing.assert_array_equal(got, grid + step)


def test_kv_cache_update_is_written_in_place() -> None:
    """index_put into the cache writes the cache itself: a decode step copies no cache."""
    model, _ = decoders.make("handwritten")
    info = decoders.export(model, "handwritten").info
    plan = info.plan
    caches = {
        i for i, v in enumerate(plan.values)
        if isinstance(v, TensorValue) and v.storage == StorageKind.STATE
    }  # fmt: skip
    assert len(caches) == 4  # keys and values of two layers
    writers: dict[int, list[str]] = {}
    for instr in plan.instructions:
        if isinstance(instr, KernelCall) and instr.args[-1] in caches:
            writers.setdefault(instr.args[-1], []).append(plan.operators[instr.op_index])
            assert instr.args[0] == instr.args[-1]  # reads and writes the same state
    assert writers == {c: ["aten::index_put"] for c in caches}


def test_no_tensor_shares_a_state_slot() -> None:
    """The planner gives state the whole method's lifetime: no planned tensor overlaps it."""
    model, _ = decoders.make("handwritten")
    values = decoders.export(model, "handwritten").info.plan.values
    tensors = [v for v in values if isinstance(v, TensorValue) and v.nbytes > 0]
    states = [t for t in tensors if t.storage == StorageKind.STATE]
    planned = [t for t in tensors if t.storage == StorageKind.PLANNED]
    assert states and planned
    for s in states:
        for t in [*planned, *(o for o in states if o is not s)]:
            apart = (
                t.mem_offset + t.nbytes <= s.mem_offset or s.mem_offset + s.nbytes <= t.mem_offset
            )
            assert apart, (s, t)


def test_xnnpack_never_holds_state(tools: runtime_build.Tools, tmp_path: Path) -> None:
    torch.manual_seed(0)

    class Decay(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(16, 16)
            self.register_buffer("memory", torch.zeros(2, 16))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            self.memory.mul_(0.5).add_(self.fc(x).relu())
            return self.memory + 0.0

    model = Decay().eval()
    program = etrt.export(model, (torch.zeros(2, 16),), backend="xnnpack-all")
    info = program.info
    assert "delegate:XnnpackBackend" in info.instruction_ops  # the linear layer is delegated
    states = {i for i, v in enumerate(info.plan.values)
              if isinstance(v, TensorValue) and v.storage == StorageKind.STATE}  # fmt: skip
    for instr in info.plan.instructions:
        if not isinstance(instr, KernelCall):
            assert not states & set(instr.args)
    method = etrt.load(program.save(tmp_path / "d.etrt")).method()
    reference = Decay().eval()
    reference.load_state_dict(model.state_dict())
    for _ in range(3):
        x = torch.randn(2, 16)
        (got,) = method(x)
        with torch.no_grad():
            want = reference(x).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)  # type: ignore[arg-type]


def test_a_program_mutating_its_input_is_refused() -> None:
    class Mutates(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x.add_(1)
            return x * 2

    with pytest.raises(
        etrt.ExportError, match="mutates its input x; etrt supports read-only inputs only"
    ):
        etrt.export(Mutates(), (torch.zeros(3),))
