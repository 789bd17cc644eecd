"""etrt.export: torch.export -> core ATen -> lowered plan -> memory plan -> program bytes."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import torch
from torch._decomp import get_decompositions
from torch.export import ExportedProgram

from .channels_last import plan_channels_last
from .complex_pairs import lower_complex_to_pairs
from .concat_in_place import write_concatenations_in_place
from .data_map import to_bytes
from .dedupe import merge_identical_calls
from .errors import ExportError
from .fold import fold_batch_norm
from .fold_constants import fold_unsupported_constants
from .fold_pad import fold_zero_padding
from .fuse import fuse_kernel_calls
from .fuse_conv import fuse_conv_epilogues
from .fuse_gelu import fuse_tanh_gelu
from .ir import ProgramData, required_version
from .lower import lower
from .memory_plan import plan_memory
from .program import Program
from .quantized import fold_quantized
from .row_quant import fuse_row_quantization
from .serialize import serialize
from .upcast import upcast_half_precision
from .weight_only import fold_weight_only
from .weights import store_permuted_weights
from .xnnpack import delegate_to_xnnpack

log = logging.getLogger(__name__)


# Composite ops kept whole instead of decomposed: etrt has a fused kernel for each, faster than
# the core ATen ops they decompose into (attention: bmm, softmax and the masking around it).
PRESERVED_OPS = (torch.ops.aten.scaled_dot_product_attention.default,)


# Ops torch.export keeps (they are outside the core ATen set) that torch's own decompositions
# rewrite into ops etrt has kernels for: F.normalize, torch.norm and cosine similarity reach
# linalg_vector_norm, for one (Swin V2's attention among them). Others' decompositions reach
# prims or float64 and stay refused by name.
EXTRA_DECOMPOSITIONS = (
    torch.ops.aten.linalg_vector_norm.default,
    torch.ops.aten.bucketize.Tensor,
    torch.ops.aten.linalg_cross.default,
    torch.ops.aten.adaptive_max_pool2d.default,  # output sizes that divide the input's
)


def _var_mean(
    x: torch.Tensor, dim: Any = None, *, correction: Any = None, keepdim: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    aten = torch.ops.aten
    var = aten.var.correction(x, dim, correction=correction, keepdim=keepdim)
    return var, aten.mean.dim(x, dim, keepdim)


def _std_mean(
    x: torch.Tensor, dim: Any = None, *, correction: Any = None, keepdim: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    var, mean = _var_mean(x, dim, correction=correction, keepdim=keepdim)
    return torch.ops.aten.sqrt.default(var), mean


def _kthvalue(
    x: torch.Tensor, k: Any, dim: int = -1, keepdim: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    # The k-th of a stable sort: NaN after every number, as ATen orders them.
    aten = torch.ops.aten
    scalar = x.dim() == 0
    if scalar:
        x = aten.unsqueeze.default(x, 0)
    d = dim % x.dim()
    values, indices = aten.sort.stable(x, stable=True, dim=d)
    v, i = aten.select.int(values, d, k - 1), aten.select.int(indices, d, k - 1)
    if keepdim and not scalar:
        v, i = aten.unsqueeze.default(v, d), aten.unsqueeze.default(i, d)
    return v, i


def _median_dim(
    x: torch.Tensor, dim: int = 0, keepdim: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    # The lower median; a slice holding NaN gives NaN at its first NaN, as ATen does.
    aten = torch.ops.aten
    n = x.shape[dim] if x.dim() > 0 else 1
    v, i = _kthvalue(x, (n - 1) // 2 + 1, dim, keepdim)
    if not x.is_floating_point():
        return v, i
    nan = aten.isnan.default(x)
    if x.dim() == 0:
        return aten.where.self(nan, x, v), i
    has = aten.any.dim(nan, dim, keepdim)
    first = aten.argmax.default(aten._to_copy.default(nan, dtype=torch.float32), dim, keepdim)
    return aten.where.self(has, aten.full_like.default(v, float("nan")), v), aten.where.self(
        has, first, i
    )


def _median(x: torch.Tensor) -> torch.Tensor:
    return _median_dim(torch.ops.aten.reshape.default(x, [-1]), 0)[0]


def _copy_strided(a: torch.Tensor, stride: Any) -> torch.Tensor:
    # torch's references copy a non-dense input this way (index_fill of a strided view): the
    # values are a clone's; etrt's tensors carry their own layout.
    copy: torch.Tensor = torch.ops.aten.clone.default(a)
    return copy


def _decomposition_table() -> dict[Any, Any]:
    table = torch.export.default_decompositions()
    for op in PRESERVED_OPS:
        del table[op]
    for kept, fn in get_decompositions(list(EXTRA_DECOMPOSITIONS)).items():
        table[kept] = fn
    table[torch.ops.aten.var_mean.correction] = _var_mean
    table[torch.ops.aten.std_mean.correction] = _std_mean
    table[torch.ops.aten.kthvalue.default] = _kthvalue
    table[torch.ops.aten.median.dim] = _median_dim
    table[torch.ops.aten.median.default] = _median
    table[torch.ops.prims.copy_strided.default] = _copy_strided
    return table


# Backends the exporter can lower subgraphs to (`backend=`), by name. "xnnpack" delegates what
# XNNPACK runs faster than etrt's kernels (docs/xnnpack.md); "xnnpack-all" all it supports.
BACKENDS = ("xnnpack", "xnnpack-all")


def export(
    model: torch.nn.Module,
    example_inputs: tuple[Any, ...],
    *,
    dynamic_shapes: Any = None,
    strict: bool = False,
    allow_missing_ops: bool = False,
    backend: str | None = None,
    external_constants: bool = False,
    stage: Callable[[str], None] | None = None,
) -> Program:
    """Export `model` called with `example_inputs` to an etrt program.

    `dynamic_shapes` (and `strict`) go to torch.export.export: dimensions given a
    `torch.export.Dim(name, min=..., max=...)` accept any size in that range when the program
    runs (each needs a max: memory is planned for it). Buffers the model updates (a KV cache,
    a counter) become state that the loaded method keeps from one call to the next.

    With backend="xnnpack", the subgraphs XNNPACK supports and runs faster than etrt's kernels
    run as delegate calls; with backend="xnnpack-all", every subgraph it supports. With
    external_constants=True the weights go to a named data map (`Program.save_data`, a .ptd)
    under their parameter names instead of into the program. `stage(name)` is called as each
    step starts (the CLI's progress).
    """
    if stage is not None:
        stage("tracing with torch.export")
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    try:
        ep = torch.export.export(
            model, tuple(example_inputs), dynamic_shapes=dynamic_shapes, strict=strict
        )
    except Exception as exc:  # torch reports many exception types for untraceable models
        raise ExportError(f"torch.export failed: {_summary(exc)}{_hint(exc)}") from exc
    return export_program(
        ep,
        allow_missing_ops=allow_missing_ops,
        backend=backend,
        external_constants=external_constants,
        stage=stage,
    )


def _summary(exc: Exception) -> str:
    """The first line of torch's message, and for a violated dynamic-shape constraint the first
    reason it gives (on a later line)."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    reason = next((line[2:] for line in lines[1:] if line.startswith("- ")), None)
    return f"{lines[0]} {reason}" if reason else lines[0]


def _hint(exc: Exception) -> str:
    """What to do about a failure with a known cause."""
    if "transformers.cache_utils" in str(exc):
        # A Hugging Face model with use_cache=True returns its KV cache as an object torch
        # cannot flatten into program outputs.
        return (
            ". The model returns a transformers KV cache: export it with use_cache=False"
            " (model.config.use_cache = False), or keep the cache in module buffers, which"
            " become the program's state"
        )
    return ""


def export_program(
    ep: ExportedProgram,
    *,
    allow_missing_ops: bool = False,
    backend: str | None = None,
    external_constants: bool = False,
    stage: Callable[[str], None] | None = None,
) -> Program:
    """Convert an ExportedProgram (e.g. from torch.export.load) to an etrt program."""
    step = stage or (lambda name: None)
    if backend is not None and backend not in BACKENDS:
        raise ExportError(f"unknown backend {backend!r}; expected one of: {', '.join(BACKENDS)}")
    step("decomposing to core ATen")
    try:
        core = ep.run_decompositions(_decomposition_table())
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ExportError(f"decomposition to core ATen failed: {first}") from exc
    folded = fold_quantized(core)
    if folded.total():
        log.info(
            "int8 kernels: %d convolutions, %d linears, %d additions, %d products, %d tables, "
            "%d means, %d max / %d average poolings, %d cats; %d clamps on int8 values",
            folded.conv2d, folded.linear, folded.add, folded.mul, folded.lookup, folded.mean,
            folded.max_pool, folded.avg_pool, folded.cat, folded.clamp,
        )  # fmt: skip
    weight_only = fold_weight_only(core)
    if weight_only.int4 or weight_only.int8 or weight_only.embeddings or weight_only.int8_mm:
        log.info(
            "weight-only kernels: %d int4 linears (%d of them on int8 activations), %d int8 "
            "linears, %d embeddings; %d int8 products of dynamic activations",
            weight_only.int4, weight_only.dynamic_int4, weight_only.int8, weight_only.embeddings,
            weight_only.int8_mm,
        )  # fmt: skip
    # Only where activations are quantized at run time (torchao's dynamic schemes repeat a shared
    # input's quantization per linear): elsewhere a shared intermediate would stop the plan's
    # activation fusions (fuse.py), which need intermediates no other call reads.
    merged = merge_identical_calls(core) if weight_only.dynamic_int4 or weight_only.int8_mm else 0
    if merged:
        log.info("identical calls computed once: %d dropped", merged)
    rows = fuse_row_quantization(core)
    if rows:
        log.info("activations quantized per row: %d chains of ATen calls made one call each", rows)
    constants = fold_unsupported_constants(core)
    if constants:
        log.info("constant values computed through float64 or complex dtypes: %d", constants)
    pairs = lower_complex_to_pairs(core)
    if pairs:
        log.info("complex ops run on float32 pairs: %d", pairs)
    step("lowering to etrt")
    lowered = lower(
        core, allow_missing_ops=allow_missing_ops, external_constants=external_constants
    )
    upcast_half_precision(lowered.plan)
    fold_batch_norm(lowered.plan, lowered.segments)
    fold_zero_padding(lowered.plan)
    if lowered.missing_ops:
        log.warning("exporting without etrt kernels for: %s", ", ".join(lowered.missing_ops))
    if backend in ("xnnpack", "xnnpack-all"):
        step("delegating to XNNPACK")
        delegate_to_xnnpack(lowered.plan, lowered.segments, cost_rule=backend == "xnnpack")
    # What stays with etrt's kernels: fused activations (the written-out tanh GELU among them),
    # convolutions channels-last with their residual additions and clamps, linear weights stored
    # transposed.
    step("planning kernels and memory")
    fuse_tanh_gelu(lowered.plan)
    fuse_kernel_calls(lowered.plan)
    plan_channels_last(lowered.plan, lowered.segments)
    fuse_conv_epilogues(lowered.plan)
    write_concatenations_in_place(lowered.plan)
    store_permuted_weights(lowered.plan, lowered.segments)
    plan_memory(lowered.plan)
    plans = [lowered.plan]
    data = serialize(ProgramData(plans, lowered.segments, required_version(plans)))
    log.info(
        "exported %d instructions, %d constants, arena %d bytes",
        len(lowered.plan.instructions),
        len(lowered.segments),
        lowered.plan.arena_size,
    )
    data_map = to_bytes(lowered.external) if external_constants else None
    return Program(data, missing_ops=tuple(lowered.missing_ops), data_map=data_map)
