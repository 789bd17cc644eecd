"""torch's own OpInfo samples (common_methods_invocations.op_db) for every operator etrt claims:
each sample is exported through etrt, run by etrt's runtime (in-tree build, in process) and
compared with eager PyTorch.

Which OpInfos: those whose ATen name is an operator etrt has a kernel for, plus the functional
front ends (conv, softmax, interpolate, ...) that decompose into one (ALIASES). Dtypes: float32,
int64, int32 and bool where the OpInfo supports them (etrt has no float16/bfloat16). Samples:
the first SAMPLES of each (op, dtype), to keep the suite near three minutes.

Every sample ends as one of: pass; refused (etrt.ExportError at export, with its reason);
not exportable (torch.export itself cannot export it, or it returns no tensor: not etrt's
concern, counted apart); or fail. A failure fails the test unless KNOWN lists it with a reason.
"""

from __future__ import annotations

import collections
import functools
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import etrt
import etrt.runtime
import numpy as np
import pytest
import torch
from etrt import _ops
from etrt.errors import ExportError
from torch.utils._pytree import tree_flatten, tree_unflatten

pytestmark = pytest.mark.slow

# Silences torch's warnings about the OpInfo machinery's test-only imports.
os.environ.setdefault("PYTORCH_TEST_WITH_SLOW", "0")
from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402

DTYPES = (torch.float32, torch.int64, torch.int32, torch.bool)
SAMPLES = 3

# Functional front ends named otherwise than the core op they decompose into.
ALIASES = {
    "nn.functional.conv1d", "nn.functional.conv2d", "nn.functional.conv3d",
    "nn.functional.linear", "softmax", "log_softmax", "nn.functional.layer_norm",
    "nn.functional.group_norm", "nn.functional.batch_norm", "nn.functional.interpolate",
    "nn.functional.max_pool2d", "nn.functional.max_pool3d", "nn.functional.adaptive_avg_pool2d",
    "nn.functional.adaptive_avg_pool3d", "nn.functional.embedding_bag",
    "nn.functional.grid_sample", "cdist", "nn.functional.pdist", "nn.functional.fold",
    "nn.functional.dropout", "nn.functional.pad", "nn.functional.silu",
    "nn.functional.hardswish", "nn.functional.hardsigmoid", "matmul", "masked_fill",
    "clamp_min", "clamp_max", "floor_divide", "reshape", "flatten", "stack", "chunk", "split",
    "nn.functional.softplus", "nn.functional.mish", "std", "logsumexp", "square", "rsub",
    "zeros_like", "ones_like", "new_zeros", "new_ones", "new_full", "empty_like", "new_empty",
    "tril", "triu", "roll", "take_along_dim", "index_add", "index_copy", "index_fill",
}  # fmt: skip

# Results whose values are undefined (empty tensors): compared by shape and dtype only.
UNDEFINED_VALUES = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"}

# (values, indices) ops: among equal values the order of indices is unspecified, so indices
# are checked by gathering the input with them.
TIE_ORDER_OPS = {"sort", "topk", "msort", "argsort", "max", "min", "kthvalue", "median", "mode"}

# Samples that fail for a reason outside etrt's reach: (op name, dtype) -> reason.
KNOWN: dict[tuple[str, torch.dtype], str] = {}


def _claimed_names() -> set[str]:
    return {n.split("::")[1].split(".")[0] for n in _ops.SUPPORTED_OPS}


def selected_ops() -> list[Any]:
    claimed = _claimed_names()
    chosen = []
    for op in op_db:
        if op.name.startswith("sparse."):  # sparse layouts: etrt's tensors are dense
            continue
        aten = (op.aten_name or op.name).split(".")[-1]
        if aten in claimed or op.name in ALIASES or op.name.split(".")[-1] in claimed:
            chosen.append(op)
    return chosen


def _op_id(op: Any) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


OPS = selected_ops()


class _Call(torch.nn.Module):
    """The OpInfo's function with the sample's tensors as inputs, everything else fixed."""

    def __init__(self, fn: Any, spec: Any, leaves: list[Any]) -> None:
        super().__init__()
        self.fn, self.spec, self.leaves = fn, spec, leaves

    def forward(self, *tensors: torch.Tensor) -> Any:
        it = iter(tensors)
        leaves = [next(it) if isinstance(x, torch.Tensor) else x for x in self.leaves]
        args, kwargs = tree_unflatten(leaves, self.spec)
        return self.fn(*args, **kwargs)


def _tolerance(dtype: torch.dtype) -> tuple[float, float]:
    """(rtol, atol): float32 results may differ in the last bits (etrt computes some ops in
    double, others with its own vectorised math); integer and Bool results must be exact."""
    return (1e-4, 1e-5) if dtype.is_floating_point else (0.0, 0.0)


def _indices_agree(source: torch.Tensor, values: np.ndarray, indices: np.ndarray) -> bool:
    """True when `indices` pick `values` out of `source` along one of its dimensions."""
    src = source.detach().numpy()
    if src.ndim == 0:
        return bool(np.all(indices == 0))
    for axis in range(src.ndim):
        # without keepdim the reduced dimension is gone from values and indices
        idx = indices if indices.ndim == src.ndim else np.expand_dims(indices, axis)
        try:
            picked = np.take_along_axis(src, idx, axis=axis).reshape(values.shape)
        except (ValueError, IndexError):
            continue
        if np.array_equal(picked, values, equal_nan=picked.dtype.kind == "f"):
            return True
    return False


def _compare(
    name: str, got: list[np.ndarray], want: list[torch.Tensor], source: torch.Tensor | None = None
) -> str | None:
    """None when etrt's outputs match eager's; otherwise what differs."""
    if len(got) != len(want):
        return f"{len(got)} outputs, eager has {len(want)}"
    if name in TIE_ORDER_OPS and len(got) == 2 and source is not None and got[1].dtype == np.int64:
        problem = _compare(name, got[:1], want[:1])
        if problem is None and got[1].shape != tuple(want[1].shape):
            problem = f"indices: {list(got[1].shape)}, eager {list(want[1].shape)}"
        if problem is None and not _indices_agree(source, got[0], got[1]):
            problem = "indices do not pick the values out of the input"
        return problem
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        wn = w.detach().numpy()
        if g.shape != wn.shape or g.dtype != wn.dtype:
            return f"output {i}: {g.dtype}{list(g.shape)}, eager {wn.dtype}{list(wn.shape)}"
        if name in UNDEFINED_VALUES:
            continue
        rtol, atol = _tolerance(w.dtype)
        if not np.allclose(g, wn, rtol=rtol, atol=atol, equal_nan=True):
            with np.errstate(invalid="ignore"):
                diff = np.abs(g.astype(np.float64) - wn.astype(np.float64))
            worst = float(np.nanmax(np.where(np.isnan(diff), 0, diff))) if diff.size else 0.0
            return f"output {i}: values differ (max |diff| {worst:.3g})"
    return None


def _samples(op: Any, dtype: torch.dtype) -> Iterator[Any]:
    try:
        yield from op.sample_inputs("cpu", dtype, requires_grad=False)
    except Exception:  # an OpInfo without samples for this dtype
        return


class _Case:
    """One sample: its function with fixed non-tensor arguments, its tensors, eager's outputs."""

    def __init__(self, op: Any, sample: Any) -> None:
        leaves, spec = tree_flatten(((sample.input, *sample.args), dict(sample.kwargs)))
        self.module = _Call(op.op, spec, leaves).eval()
        self.tensors = tuple(x for x in leaves if isinstance(x, torch.Tensor))
        self.source = sample.input if isinstance(sample.input, torch.Tensor) else None
        self.outputs: list[torch.Tensor] = []

    def eager(self) -> str | None:
        """Runs eager; None when the sample is a tensor program etrt could run, else why not."""
        with torch.no_grad():
            try:
                result = self.module(*(t.clone() for t in self.tensors))
            except Exception as exc:
                return f"eager raises {type(exc).__name__}"
        outputs, _ = tree_flatten(result)
        if not outputs or not all(isinstance(o, torch.Tensor) for o in outputs):
            return "returns something other than tensors"
        if not self.tensors:
            return "takes no tensor"
        self.outputs = [o.detach().clone() for o in outputs]
        return None


class _Group(torch.nn.Module):
    """Several samples in one program: torch's decomposition pass costs ~0.5 s per export,
    so each op's samples share one."""

    def __init__(self, cases: list[_Case]) -> None:
        super().__init__()
        self.cases = cases
        self.calls = torch.nn.ModuleList(c.module for c in cases)

    def forward(self, *tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
        outs: list[torch.Tensor] = []
        at = 0
        for case, call in zip(self.cases, self.calls, strict=True):
            n = len(case.tensors)
            outs += tree_flatten(call(*tensors[at : at + n]))[0]
            at += n
        return tuple(outs)


def _export_and_run(
    name: str, module: torch.nn.Module, tensors: tuple[torch.Tensor, ...], workdir: Path
) -> tuple[str, Any]:
    """("ok", etrt's outputs) or (outcome, detail) when it does not get that far."""
    try:
        ep = torch.export.export(module, tensors)
    except Exception as exc:
        return "unexportable", f"torch.export: {type(exc).__name__}"
    try:
        program = etrt.export_program(ep)
    except ExportError as exc:
        reason = str(exc)
        if "etrt does not run" in reason or "; etrt supports " in reason:
            return "refused", reason
        return "fail", f"export: {reason}"
    path = workdir / f"{name}.etrt"
    program.save(path)
    try:
        with etrt.runtime.load(path) as loaded:
            return "ok", [np.asarray(g) for g in loaded.forward(*tensors)]
    except Exception as exc:
        return "fail", f"run: {exc}"


def _compare_groups(pairs: list[tuple[Any, _Case]], got: list[np.ndarray]) -> list[tuple[str, str]]:
    results, at = [], 0
    for op, case in pairs:
        n = len(case.outputs)
        problem = _compare(op.name, got[at : at + n], case.outputs, case.source)
        at += n
        results.append(("fail", problem) if problem else ("pass", ""))
    return results


def run_cases(op: Any, cases: list[_Case], workdir: Path) -> list[tuple[str, str]]:
    """(outcome, detail) per case: pass, refused, unexportable or fail. All runnable cases go
    into one program; on any trouble each case is retried alone, to tell which."""
    results: list[tuple[str, str] | None] = [None] * len(cases)
    runnable = []
    for i, case in enumerate(cases):
        why = case.eager()
        if why is None:
            runnable.append(i)
        else:
            results[i] = ("unexportable", why)
    if len(runnable) > 1:
        group = _Group([cases[i] for i in runnable])
        tensors = tuple(t for i in runnable for t in cases[i].tensors)
        outcome, got = _export_and_run("group", group, tensors, workdir)
        if outcome == "ok":
            compared = _compare_groups([(op, cases[i]) for i in runnable], got)
            if all(r[0] == "pass" for r in compared):
                for i, r in zip(runnable, compared, strict=True):
                    results[i] = r
                runnable = []
    for i in runnable:
        outcome, got = _export_and_run("one", cases[i].module, cases[i].tensors, workdir)
        if outcome == "ok":
            results[i] = _compare_groups([(op, cases[i])], got)[0]
        else:
            results[i] = (outcome, got)
    return [r if r is not None else ("fail", "no result") for r in results]


def cases_of(op: Any) -> tuple[list[_Case], list[tuple[torch.dtype, int]]]:
    cases, labels = [], []
    for dtype in DTYPES:
        if dtype not in op.supported_dtypes("cpu"):
            continue
        for k, sample in enumerate(_samples(op, dtype)):
            if k >= SAMPLES:
                break
            cases.append(_Case(op, sample))
            labels.append((dtype, k))
    return cases, labels


OpResults = tuple[list[tuple[torch.dtype, int]], list[tuple[str, str]]]


def run_chunk(ops: list[Any], workdir: Path) -> dict[str, OpResults]:
    """Every sample of several ops in one program (torch's decomposition pass costs about a
    second per export on a busy machine); ops with any non-passing sample are redone alone."""
    per_op = {_op_id(op): cases_of(op) for op in ops}
    pairs = []
    for op in ops:
        for case in per_op[_op_id(op)][0]:
            if case.eager() is None:
                pairs.append((op, case))
    done: dict[str, OpResults] = {}
    if pairs:
        group = _Group([c for _, c in pairs])
        tensors = tuple(t for _, c in pairs for t in c.tensors)
        outcome, got = _export_and_run("chunk", group, tensors, workdir)
        if outcome == "ok":
            compared = _compare_groups(pairs, got)
            for op in ops:
                cases, labels = per_op[_op_id(op)]
                mine = [r for (o, _), r in zip(pairs, compared, strict=True) if o is op]
                if len(mine) == len(cases) and all(r[0] == "pass" for r in mine):
                    done[_op_id(op)] = (labels, mine)
    for op in ops:
        if _op_id(op) not in done:
            cases, labels = per_op[_op_id(op)]
            done[_op_id(op)] = (labels, run_cases(op, cases, workdir))
    return done


def _cache_cia_op_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    """run_decompositions lists every composite op in torch's registry on each call (~0.4 s,
    half of a sample's time). The registry does not change during this suite: list it once."""
    import torch._export.utils as export_utils
    import torch.export.decomp_utils as decomp_utils
    import torch.export.exported_program as exported_program

    collect = functools.cache(export_utils._collect_all_valid_cia_ops)
    for module in (export_utils, decomp_utils, exported_program):
        monkeypatch.setattr(module, "_collect_all_valid_cia_ops", lambda: set(collect()))


@pytest.fixture(scope="module")
def runtime_lib(inprocess_runtime: Path) -> Iterator[None]:
    """etrt's runtime from the in-tree release build, loaded into this process."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        _cache_cia_op_lookup(monkeypatch)
        yield


TOTALS: collections.Counter[str] = collections.Counter()
CHUNK = 6  # ops per program


@pytest.fixture(scope="module")
def sweep(runtime_lib: None) -> Iterator[dict[str, OpResults]]:
    """Results by op id, filled a chunk of OPS at a time as the tests ask for them."""
    results: dict[str, OpResults] = {}
    yield results
    print(f"\nOpInfo samples in total: {dict(TOTALS)}")


@pytest.mark.parametrize("op", OPS, ids=_op_id)
def test_opinfo_samples_match_eager(op: Any, sweep: dict[str, OpResults]) -> None:
    if _op_id(op) not in sweep:
        at = OPS.index(op)
        chunk = OPS[at - at % CHUNK : at - at % CHUNK + CHUNK]
        with tempfile.TemporaryDirectory() as tmp:
            sweep.update(run_chunk(chunk, Path(tmp)))
    labels, results = sweep[_op_id(op)]
    counts: collections.Counter[str] = collections.Counter()
    failures = []
    for (dtype, k), (outcome, detail) in zip(labels, results, strict=True):
        if outcome == "fail" and (op.name, dtype) in KNOWN:
            outcome, detail = "refused", KNOWN[(op.name, dtype)]
        counts[outcome] += 1
        if outcome == "fail":
            failures.append(f"{str(dtype).removeprefix('torch.')} sample {k}: {detail}")
    TOTALS.update(counts)
    summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    print(f"{_op_id(op)}: {summary}")
    assert not failures, "\n".join(failures)
