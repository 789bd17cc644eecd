"""torch's own OpInfo samples (common_methods_invocations.op_db) for every operator etrt claims:
each sample is exported through etrt, run by etrt's runtime (in-tree build, in process) and
compared with eager PyTorch.

Which OpInfos: those whose ATen name is an operator etrt has a kernel for, plus the functional
front ends (conv, softmax, interpolate, ...) that decompose into one (ALIASES). Dtypes: every
dtype an etrt program holds (float32, float16, bfloat16, int64, int32, int8, uint8, bool) the
OpInfo supports. Samples: the first ETRT_OPINFO_SAMPLES (default 2, about 2800 samples, a few
minutes) of each (op, dtype); 0 takes them all (the full sweep, for a local run).

Every sample ends as one of:
- pass: etrt's outputs match eager's within the output dtype's tolerance;
- refused: etrt.ExportError at export naming the operator and why ("etrt does not run X:
  ...", or a dtype etrt programs do not hold). A refusal of a dtype the operator table claims
  (`_ops.kernel_dtypes`) is a failure;
- decomposition: etrt differs from eager but matches, within tolerance, torch's own run of
  the core-ATen program torch.export produced: the difference is torch's decomposition's;
- precision: a float16/bfloat16 sample where etrt differs from eager but matches the same
  computation done in float32 and rounded once, which is what etrt promises; eager's kernel
  computes in the half type itself (grid_sampler_2d, for one);
- unexportable: torch.export itself cannot export it; skipped: eager raises or the sample
  returns something other than tensors. Neither is etrt's concern; both are counted;
- fail: anything else (wrong values, a runtime error, an export error without a reason, an
  operator without a kernel). A failure fails the test.

The report at the end (printed to the terminal) gives the counts per op and in total, the
refusals by reason, the ops etrt claims that no sample reached, and the claimed (op, dtype)
pairs no passing sample exercised.
"""

from __future__ import annotations

import collections
import functools
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import etrt
import etrt.exporter
import etrt.runtime
import numpy as np
import pytest
import torch
from etrt import _ops
from etrt.errors import ExportError
from torch.utils._pytree import tree_flatten, tree_unflatten

pytestmark = [pytest.mark.slow, pytest.mark.opinfo]

# Silences torch's warnings about the OpInfo machinery's test-only imports.
os.environ.setdefault("PYTORCH_TEST_WITH_SLOW", "0")
from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402

DTYPES = (
    torch.float32, torch.float16, torch.bfloat16,
    torch.int64, torch.int32, torch.int8, torch.uint8, torch.bool,
)  # fmt: skip
SAMPLES = int(os.environ.get("ETRT_OPINFO_SAMPLES", "2"))

# (rtol, atol) by output dtype. float32: etrt computes some ops in double, others with its own
# vectorised math. float16/bfloat16: both sides compute in float32 and round once per op, so
# results can differ by a unit in the last place, more where a decomposition rounds in between.
# Integers and Bool must be exact.
TOLERANCE = {
    torch.float32: (1e-4, 1e-5),
    torch.float16: (2e-3, 1e-3),
    torch.bfloat16: (1.6e-2, 1e-2),
}

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
    "nn.functional.avg_pool1d", "nn.functional.adaptive_avg_pool1d",
    "nn.functional.conv_transpose1d", "nn.functional.conv_transpose2d",
    "nn.functional.conv_transpose3d", "nn.functional.normalize", "linalg.vector_norm",
    "nn.functional.cosine_similarity", "var_mean", "std_mean", "linalg.cross", "median",
    "kthvalue",
}  # fmt: skip

# Results whose values are undefined (empty tensors) or random (etrt's generator is not
# torch's; tests/etrt_python/test_random.py checks the distributions): compared by shape and
# dtype only.
UNDEFINED_VALUES = {
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided",
    "bernoulli", "exponential", "normal", "uniform", "randint", "rand_like", "randn_like",
    "randint_like", "multinomial",
}  # fmt: skip

# (values, indices) ops: among equal values the order of indices is unspecified, so indices
# are checked by gathering the input with them.
TIE_ORDER_OPS = {"sort", "topk", "msort", "argsort", "max", "min", "kthvalue", "median", "mode"}

# What an export-time refusal says: the operator and why, a dtype programs cannot hold, or
# an input the program mutates (an in-place sample: inputs are read-only).
_REFUSAL = re.compile(
    r"etrt does not run (?P<op>\S+): (?P<why>.+)|dtype (?P<dtype>torch\.\w+); etrt supports"
    r"|the program mutates (state|its input)"
)
# A refusal of the input's dtype, and the dtype.
_DTYPE_REFUSAL = re.compile(r"the input is (torch\.\w+)")
# A refusal for a dtype: the input's, or one etrt programs do not hold.
_DTYPE_NAMED = re.compile(r"the input is torch\.\w+|dtype torch\.\w+; etrt supports")


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


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


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
    return TOLERANCE.get(dtype, (0.0, 0.0))


def _indices_agree(source: torch.Tensor, values: np.ndarray, indices: np.ndarray) -> bool:
    """True when `indices` pick `values` out of `source` along one of its dimensions."""
    src = source.detach().float().numpy() if source.is_floating_point() else source.numpy()
    values = values.astype(src.dtype)
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


def _numpy(t: torch.Tensor) -> np.ndarray:
    """Eager's output as etrt's binding returns it (numpy has no bfloat16: float32)."""
    t = t.detach()
    return (t.float() if t.dtype == torch.bfloat16 else t).numpy()


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
        wn = _numpy(w)
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

    def __init__(self, op: Any, sample: Any, dtype: torch.dtype, index: int) -> None:
        leaves, spec = tree_flatten(((sample.input, *sample.args), dict(sample.kwargs)))
        self.op, self.dtype, self.index = op, dtype, index
        self.module = _Call(op.op, spec, leaves).eval()
        self.tensors = tuple(x for x in leaves if isinstance(x, torch.Tensor))
        self.source = sample.input if isinstance(sample.input, torch.Tensor) else None
        self.outputs: list[torch.Tensor] = []
        self.skip_reason = self._eager()

    def _eager(self) -> str | None:
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

    @property
    def label(self) -> str:
        return f"{_dtype_name(self.dtype)} sample {self.index}"


@dataclass
class Outcome:
    kind: str  # pass, refused, precision, decomposition, unexportable, skipped, fail
    detail: str = ""
    # (etrt operator, dtype) pairs the passing program ran: the evidence for the dtype claims
    ran: set[tuple[str, str]] = field(default_factory=set)


class _Group(torch.nn.Module):
    """Several samples in one program: torch's decomposition pass costs ~0.5 s per export,
    so samples share one. With `views`, the program takes one of each input it is fed (the view
    sweep below); `dense` makes those views contiguous (eager's reference there)."""

    def __init__(self, cases: list[_Case], views: list[Any] | None = None) -> None:
        super().__init__()
        self.cases, self.views = cases, views
        self.calls = torch.nn.ModuleList(c.module for c in cases)
        self.dense = False

    def forward(self, *tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
        if self.views is not None:
            tensors = tuple(v(t) for v, t in zip(self.views, tensors, strict=True))
            if self.dense:
                tensors = tuple(t.contiguous() for t in tensors)
        outs: list[torch.Tensor] = []
        at = 0
        for case, call in zip(self.cases, self.calls, strict=True):
            n = len(case.tensors)
            outs += tree_flatten(call(*tensors[at : at + n]))[0]
            at += n
        return tuple(outs)


def _computed_dtype(node: torch.fx.Node) -> torch.dtype | None:
    """The dtype an ATen call computes in, as the operator table means it: its `self` (or
    `input`) argument's, else its first tensor argument's, else its first result's."""
    schema = node.target._schema  # type: ignore[union-attr]
    by_name = {a.name: i for i, a in enumerate(schema.arguments)}
    for name in ("self", "input"):
        if name in by_name:
            i = by_name[name]
            arg = node.args[i] if i < len(node.args) else node.kwargs.get(name)
            if isinstance(arg, torch.fx.Node) and isinstance(arg.meta.get("val"), torch.Tensor):
                return arg.meta["val"].dtype
    args = tree_flatten((node.args, node.kwargs))[0]
    vals = [a.meta.get("val") for a in args if isinstance(a, torch.fx.Node)]
    vals += tree_flatten(node.meta.get("val"))[0]
    return next((v.dtype for v in vals if isinstance(v, torch.Tensor)), None)


def _ops_run(core: torch.export.ExportedProgram) -> set[tuple[str, str]]:
    """(operator, dtype it computes in) of every ATen call of the core-ATen program."""
    ran = set()
    for node in core.graph.nodes:
        if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
            continue
        dtype = _computed_dtype(node)
        if dtype is not None:
            ran.add((node.target.name(), _dtype_name(dtype)))
    return ran


@dataclass
class _Export:
    kind: str  # "ok", or an outcome kind
    detail: str = ""
    got: list[np.ndarray] = field(default_factory=list)
    core: torch.export.ExportedProgram | None = None


def _refusal_outcome(message: str) -> tuple[str, str]:
    """An ExportError's outcome: refused when it names the operator and a reason (and does not
    refuse a dtype the operator claims), else a failure."""
    m = _REFUSAL.search(message)
    if m is None:
        return "fail", f"export: {message}"
    dtype = _DTYPE_REFUSAL.search(message)
    if m["op"] and dtype is not None:
        claimed = _ops.kernel_dtypes(m["op"])
        if dtype[1].removeprefix("torch.") in claimed:
            return "fail", f"refuses {dtype[1]}, which the operator table claims: {message}"
    return "refused", message[m.start() :]


def _export_and_run(
    module: torch.nn.Module, tensors: tuple[torch.Tensor, ...], workdir: Path
) -> _Export:
    try:
        ep = torch.export.export(module, tensors)
    except Exception as exc:
        return _Export("unexportable", f"torch.export: {type(exc).__name__}")
    captured: list[torch.export.ExportedProgram] = []
    lower = etrt.exporter.lower

    def capture(core: torch.export.ExportedProgram, **kw: Any) -> Any:
        captured.append(core)
        return lower(core, **kw)

    etrt.exporter.lower = capture  # type: ignore[assignment]
    try:
        program = etrt.export_program(ep)
    except ExportError as exc:
        return _Export(*_refusal_outcome(str(exc)))
    finally:
        etrt.exporter.lower = lower
    path = workdir / "p.etrt"
    program.save(path)
    try:
        with etrt.runtime.load(path) as loaded:
            got = [np.asarray(g) for g in loaded.forward(*tensors)]
    except Exception as exc:
        return _Export("fail", f"run: {exc}")
    return _Export("ok", got=got, core=captured[0])


def _float32_reference(case: _Case) -> list[torch.Tensor] | None:
    """A half-precision sample computed in float32, each output rounded once to eager's dtype."""
    if case.dtype not in (torch.float16, torch.bfloat16):
        return None
    wide = tuple(t.float() if t.dtype == case.dtype else t for t in case.tensors)
    try:
        with torch.no_grad():
            outs = tree_flatten(case.module(*wide))[0]
    except Exception:
        return None
    if len(outs) != len(case.outputs) or not all(isinstance(o, torch.Tensor) for o in outs):
        return None
    return [o.to(w.dtype) for o, w in zip(outs, case.outputs, strict=True)]


def _judge(
    case: _Case, got: list[np.ndarray], core: torch.export.ExportedProgram | None
) -> Outcome:
    """The outcome of etrt's outputs for a case; without `core` (in a group, to be judged again
    alone) anything but a match is a failure."""
    problem = _compare(case.op.name, got, case.outputs, case.source)
    if problem is None:
        return Outcome("pass")
    if core is None:
        return Outcome("fail", problem)
    reference = _float32_reference(case)
    if reference is not None and _compare(case.op.name, got, reference, case.source) is None:
        why = f"etrt matches the float32 computation rounded to {_dtype_name(case.dtype)}"
        return Outcome("precision", f"{problem}; {why}")
    try:  # does etrt run torch's own core-ATen program faithfully?
        with torch.no_grad():
            decomposed = tree_flatten(core.module()(*case.tensors))[0]
    except Exception:
        decomposed = None
    if decomposed is not None and _compare(case.op.name, got, decomposed, case.source) is None:
        return Outcome("decomposition", f"{problem}; etrt matches torch's decomposed program")
    return Outcome("fail", problem)


def _alone(case: _Case, workdir: Path) -> Outcome:
    export = _export_and_run(case.module, case.tensors, workdir)
    if export.kind != "ok" or export.core is None:
        return Outcome(export.kind, export.detail)
    outcome = _judge(case, export.got, export.core)
    if outcome.kind == "pass":
        outcome.ran = _ops_run(export.core)
    return outcome


def _by(key: Any) -> Any:
    def split(cases: list[_Case]) -> list[list[_Case]]:
        groups: dict[Any, list[_Case]] = {}
        for c in cases:
            groups.setdefault(key(c), []).append(c)
        return list(groups.values())

    return split


BY_OP, BY_DTYPE = _by(lambda c: _op_id(c.op)), _by(lambda c: c.dtype)


def resolve(cases: list[_Case], workdir: Path, splits: tuple[Any, ...]) -> dict[int, Outcome]:
    """An outcome per case (by id). The runnable cases go into one program (torch's export and
    decomposition cost about a second per program on a busy machine, more for big ones); a case
    that does not pass there is redone alone. When the program cannot be exported, the group is
    split by `splits` in turn (op, then dtype), then into single cases; except that a refusal
    of a dtype by one op's samples of one dtype holds for each of them."""
    out = {id(c): Outcome("skipped", c.skip_reason) for c in cases if c.skip_reason is not None}
    runnable = [c for c in cases if c.skip_reason is None]
    if len(runnable) <= 1:
        return out | {id(c): _alone(c, workdir) for c in runnable}
    tensors = tuple(t for c in runnable for t in c.tensors)
    export = _export_and_run(_Group(runnable), tensors, workdir)
    if export.kind == "ok" and export.core is not None:
        ran, at = _ops_run(export.core), 0
        for c in runnable:
            n = len(c.outputs)
            outcome = _judge(c, export.got[at : at + n], None)
            at += n
            if outcome.kind == "pass":
                outcome.ran = ran
            out[id(c)] = outcome if outcome.kind == "pass" else _alone(c, workdir)
        return out
    one_group = len({(_op_id(c.op), c.dtype) for c in runnable}) == 1
    if one_group and export.kind == "refused" and _DTYPE_NAMED.search(export.detail):
        return out | {id(c): Outcome("refused", export.detail) for c in runnable}
    parts = splits[0](runnable) if splits else [[c] for c in runnable]
    if len(parts) == 1 and splits:
        return out | resolve(runnable, workdir, splits[1:])
    for part in parts:
        out |= resolve(part, workdir, splits[1:] if splits else ())
    return out


def cases_of(
    op: Any, samples: int = SAMPLES, dtypes: tuple[torch.dtype, ...] = DTYPES
) -> list[_Case]:
    cases = []
    for dtype in dtypes:
        if dtype not in op.supported_dtypes("cpu"):
            continue
        for k, sample in enumerate(_samples(op, dtype)):
            if samples and k >= samples:
                break
            cases.append(_Case(op, sample, dtype, k))
    return cases


def run_chunk(ops: list[Any], workdir: Path) -> dict[str, list[tuple[_Case, Outcome]]]:
    """Every sample of several ops, resolved together (see resolve)."""
    per_op = {_op_id(op): cases_of(op) for op in ops}
    outcomes = resolve([c for cs in per_op.values() for c in cs], workdir, (BY_OP, BY_DTYPE))
    return {name: [(c, outcomes[id(c)]) for c in cs] for name, cs in per_op.items()}


def _cache_cia_op_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    """run_decompositions lists every composite op in torch's registry on each call (~0.4 s,
    half of a sample's time). The registry does not change during this suite: list it once."""
    import torch._export.utils as export_utils
    import torch.export.decomp_utils as decomp_utils
    import torch.export.exported_program as exported_program

    collect = functools.cache(export_utils._collect_all_valid_cia_ops)
    for module in (export_utils, decomp_utils, exported_program):
        monkeypatch.setattr(module, "_collect_all_valid_cia_ops", lambda: set(collect()))


CHUNK = 8  # ops per program

# The CI gate's sample of the sweep (two programs): arithmetic, products, convolution, pooling,
# normalisation, activations, shape and indexing ops, reductions, selection, resizing.
GATE_OPS = {
    "add", "mul", "addmm", "bmm", "softmax", "nn.functional.conv2d", "nn.functional.max_pool2d",
    "native_layer_norm", "nn.functional.gelu", "cat", "index_select", "gather", "sum", "mean",
    "where", "nn.functional.interpolate.bilinear",
}  # fmt: skip
assert GATE_OPS <= {_op_id(op) for op in OPS}, GATE_OPS - {_op_id(op) for op in OPS}


@dataclass
class Sweep:
    """Outcomes by op id, filled a chunk of OPS at a time as the tests ask for them."""

    results: dict[str, list[tuple[_Case, Outcome]]] = field(default_factory=dict)

    def of(self, op: Any) -> list[tuple[_Case, Outcome]]:
        if _op_id(op) not in self.results:
            # The gate's ops are chunked among themselves, so the gate runs only them.
            pool = [o for o in OPS if (_op_id(o) in GATE_OPS) == (_op_id(op) in GATE_OPS)]
            at = pool.index(op)
            chunk = pool[at - at % CHUNK : at - at % CHUNK + CHUNK]
            with tempfile.TemporaryDirectory() as tmp:
                self.results.update(run_chunk(chunk, Path(tmp)))
        return self.results[_op_id(op)]


@pytest.fixture(scope="module")
def sweep(inprocess_runtime: Path) -> Iterator[Sweep]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        _cache_cia_op_lookup(monkeypatch)
        yield Sweep()


def _summary(outcomes: list[Outcome]) -> str:
    counts = collections.Counter(o.kind for o in outcomes)
    passed = counts.pop("pass", 0)
    rest = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    return f"pass {passed}/{len(outcomes)}" + (f", {rest}" if rest else "")


@pytest.mark.parametrize(
    "op",
    [pytest.param(op, marks=() if _op_id(op) in GATE_OPS else pytest.mark.long) for op in OPS],
    ids=_op_id,
)
def test_opinfo_samples_match_eager(op: Any, sweep: Sweep) -> None:
    results = sweep.of(op)
    failures = [f"{c.label}: {o.detail}" for c, o in results if o.kind == "fail"]
    print(f"{_op_id(op)}: {_summary([o for _, o in results])}")
    assert not failures, "\n".join(failures)


def _report(sweep: Sweep) -> list[str]:
    everything = [(op_id, c, o) for op_id, rs in sweep.results.items() for c, o in rs]
    lines = [f"OpInfo samples, {SAMPLES or 'all'} per (op, dtype): {len(sweep.results)} OpInfos"]
    lines += [f"  {op_id}: {_summary([o for _, o in rs])}" for op_id, rs in sweep.results.items()]
    lines.append(f"in total: {_summary([o for _, _, o in everything])}")
    for kind in ("refused", "precision", "decomposition", "unexportable", "skipped"):
        reasons = collections.Counter(
            re.sub(r"node \w+: ", "", o.detail)[:160] for _, _, o in everything if o.kind == kind
        )
        if reasons:
            lines.append(f"{kind}, by reason:")
            lines += [f"  {n:5d}  {why}" for why, n in reasons.most_common()]
    ran = set().union(*(o.ran for _, _, o in everything if o.kind == "pass"))
    reached = {name for name, _ in ran}
    unreached = sorted(_ops.SUPPORTED_OPS - reached)
    lines.append(f"ops etrt claims that no passing sample ran ({len(unreached)}): {unreached}")
    untested = sorted(
        f"{name}[{dt}]"
        for name in _ops.SUPPORTED_OPS & reached
        for dt in _ops.kernel_dtypes(name)
        if (name, dt) not in ran
    )
    lines.append(f"claimed (op, dtype) pairs no passing sample ran ({len(untested)}): {untested}")
    return lines


@pytest.mark.long
def test_opinfo_report(sweep: Sweep, request: pytest.FixtureRequest) -> None:
    """Runs last: the whole sweep's figures, on the terminal even when output is captured."""
    for op in OPS:
        sweep.of(op)
    terminal = request.config.pluginmanager.get_plugin("terminalreporter")
    lines = _report(sweep)
    for line in lines:
        if terminal is not None:
            terminal.write_line(line)
        else:
            print(line)
    ran = set().union(*(o.ran for rs in sweep.results.values() for _, o in rs))
    assert {name for name, _ in ran} & _ops.SUPPORTED_OPS, "no sample reached an etrt kernel"
    # The operator table claims at least what the samples ran (float64 only ever appears as a
    # refused dtype, so it is not among them).
    unclaimed = sorted(
        f"{name}[{dt}]"
        for name, dt in ran
        if name in _ops.SUPPORTED_OPS and dt not in _ops.kernel_dtypes(name)
    )
    assert not unclaimed, f"ops ran, and passed, with dtypes the operator table omits: {unclaimed}"


# The same samples with each tensor reaching the op as a view the program makes: the input fed
# transposed and transposed back, every other element of a tensor twice as long, or its first
# column expanded (stride 0) to the sample's shape. Kernels meet such views where models slice
# and expand buffers (position ids) or transpose between layers. as_strided reads its input's
# storage, so a view changes what it computes: left out.
VIEWS = ("transposed", "strided", "expanded")
VIEW_GATE_OPS = {"add", "index_select", "gather", "nn.functional.embedding", "cat", "sum"}
VIEW_DTYPES = (torch.float32, torch.int64)
VIEW_SAMPLES = 12  # per (op, dtype): OpInfo's first samples are mostly scalars and vectors
_VIEW_EXCLUDED = {"as_strided", "as_strided.partial_views", "as_strided_scatter"}
assert VIEW_GATE_OPS <= {_op_id(op) for op in OPS}, VIEW_GATE_OPS - {_op_id(op) for op in OPS}


def _viewed(x: torch.Tensor, view: str) -> tuple[torch.Tensor, Any]:
    """(what the program is fed, the view it takes of it inside)."""
    if view == "transposed" and x.ndim >= 2:
        return x.transpose(-1, -2).contiguous(), lambda f: f.transpose(-1, -2)
    if view == "strided" and x.ndim >= 1:
        return torch.stack([x, torch.zeros_like(x)], -1).flatten(-2), lambda f: f[..., ::2]
    if view == "expanded" and x.ndim >= 1 and x.shape[-1] > 1:
        return x[..., :1].contiguous(), lambda f, shape=tuple(x.shape): f.expand(shape)
    return x, lambda f: f


def _through_views(cases: list[_Case], view: str, workdir: Path) -> tuple[list[str], int]:
    """(failures, samples compared) of the cases run together through `view`; a group that does
    not export or run is split into single cases. A sample eager refuses as a view (a kernel
    that wants contiguous input) or etrt's exporter refuses is not compared."""
    fed, views = [], []
    for case in cases:
        for t in case.tensors:
            f, v = _viewed(t, view)
            fed.append(f)
            views.append(v)
    module = _Group(cases, views).eval()
    export = None
    try:  # eager's own kernels can misread a view (median over a stride-0 dimension does)
        module.dense = True
        with torch.no_grad():
            want = list(module(*(f.clone() for f in fed)))
        module.dense = False
        with torch.no_grad():
            module(*(f.clone() for f in fed))  # a view eager refuses is no case for etrt
        export = _export_and_run(module, tuple(fed), workdir)
    except Exception:
        pass
    if export is None or export.kind != "ok":
        if len(cases) > 1:
            alone = [_through_views([c], view, workdir) for c in cases]
            return [p for failures, _ in alone for p in failures], sum(n for _, n in alone)
        failed = export is not None and export.kind == "fail"
        return ([f"{cases[0].label}: {export.detail}"] if failed else []), int(failed)
    failures, at, first = [], 0, 0
    for case in cases:
        n, k = len(case.outputs), len(case.tensors)
        ins = [v(f) for v, f in zip(views[first : first + k], fed[first : first + k], strict=True)]
        got, eager = export.got[at : at + n], want[at : at + n]
        problem = _compare(case.op.name, got, eager, ins[0] if case.source is not None else None)
        if problem is not None and not _as_close_as_eager(case, ins, got, eager):
            failures.append(f"{case.label}: {problem}")
        at += n
        first += k
    return failures, len(cases)


def _as_close_as_eager(
    case: _Case, ins: list[torch.Tensor], got: list[np.ndarray], want: list[torch.Tensor]
) -> bool:
    """Whether etrt's float32 outputs are as close to the float64 computation as eager's are: a
    view can make a sample ill-conditioned (a normalization over equal values divides rounding
    noise by sqrt(eps))."""
    if case.dtype != torch.float32:
        return False
    wide = [t.double().contiguous() if t.is_floating_point() else t.contiguous() for t in ins]
    try:  # _Call holds no parameters: the inputs carry the dtype
        with torch.no_grad():
            ref = tree_flatten(case.module(*wide))[0]
    except Exception:
        return False
    for g, w, r in zip(got, want, ref, strict=True):
        if not isinstance(r, torch.Tensor) or not r.is_floating_point():
            return False
        r64 = r.numpy()
        eager_error = float(np.abs(w.double().numpy() - r64).max(initial=0.0))
        etrt_error = float(np.abs(g.astype(np.float64) - r64).max(initial=0.0))
        if etrt_error > 2 * eager_error + 1e-6 * float(np.abs(r64).max(initial=0.0)):
            return False
    return True


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize(
    "op",
    [
        pytest.param(op, marks=() if _op_id(op) in VIEW_GATE_OPS else pytest.mark.long)
        for op in OPS
        if _op_id(op) not in _VIEW_EXCLUDED and _op_id(op) not in UNDEFINED_VALUES
    ],
    ids=_op_id,
)
def test_opinfo_samples_through_views(
    op: Any, view: str, inprocess_runtime: Path, tmp_path: Path
) -> None:
    cases = [c for c in cases_of(op, VIEW_SAMPLES, VIEW_DTYPES) if c.skip_reason is None]
    if not any(t.ndim >= 1 for c in cases for t in c.tensors):
        pytest.skip("no float32 or int64 sample has a tensor of one dimension or more to view")
    failures, compared = _through_views(cases, view, tmp_path)
    assert not failures, "\n".join(failures)
    if compared == 0:
        pytest.skip("eager or etrt's exporter refuses every sample as this view")
