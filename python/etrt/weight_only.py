"""Weight-only int8 / int4 linears: fold torchao's dequantize -> linear into one integer kernel.

A model quantized with torchao's `quantize_` (Int8WeightOnlyConfig, IntxWeightOnlyConfig with
int1..int8 weights per group or per channel) exports with its tensor subclasses unwrapped: the
weight is an int8 constant, float32 scales and integer zero points, dequantized by plain ATen ops
(`(float(q) - float(zero)) * scale`) before a float `mm` / `addmm`, or, for torchao's Int8Tensor,
`mm(x, float(q)) * scale`. The exporter replaces each such linear with one
`etrt_quant::weight_only_linear` call whose weight is stored packed (int4 two per byte when every
value fits, int8 otherwise), so the float weight is never materialised. A pattern is folded only
when the weight it rebuilds from the packed form is bit-identical to what the graph computes;
anything else keeps its ATen ops and runs as generic kernels.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind
from torch.fx import Node

from .graph_edit import add_constant, is_call, replace_node, shape_names, through_views

_LIB: Any = torch.library.Library("etrt_quant", "FRAGMENT")  # type: ignore[no-untyped-call]
_LIB.define(
    "weight_only_linear(Tensor input, Tensor weight, Tensor scales, Tensor? zero_points, "
    "Tensor? bias, int bits, int group_size, int tile) -> Tensor"
)
_LIB.define("int8_mm(Tensor input, Tensor weight, Tensor weight_sums) -> Tensor")
_LIB.define(
    "dynamic_int4_linear(Tensor input, Tensor input_scales, Tensor? input_zero_points, "
    "Tensor weight, Tensor scales, Tensor? zero_points, Tensor weight_sums, Tensor? bias, "
    "int group_size, int tile) -> Tensor"
)
_LIB.define(
    "weight_only_embedding(Tensor weight, Tensor scales, Tensor? zero_points, Tensor indices, "
    "int bits, int group_size) -> Tensor"
)


def pack_int4(q: torch.Tensor, group_size: int) -> torch.Tensor:
    """int8 [N, K] holding -8..7 -> uint8 [N, K / 2]: per group, byte j holds value j + 8 in its
    low nibble and value j + group_size / 2 (+ 8) in its high one, so a kernel unpacks a run of
    bytes into two contiguous runs of values."""
    n, k = q.shape
    u = (q.to(torch.int16) + 8).to(torch.uint8).view(n, k // group_size, 2, group_size // 2)
    return (u[:, :, 0, :] | (u[:, :, 1, :] << 4)).reshape(n, k // 2).contiguous()


def unpack_int4(packed: torch.Tensor, group_size: int) -> torch.Tensor:
    """pack_int4's inverse: int8 [N, K]."""
    n, half_k = packed.shape
    k = half_k * 2
    p = packed.view(n, k // group_size, group_size // 2)
    u = torch.stack([p & 15, p >> 4], dim=2).reshape(n, k)
    return (u.to(torch.int16) - 8).to(torch.int8)


TILE = 16  # output channels per block of the int4 linear layout (the kernel's kTile)


# Output channels per block of the dynamic int4 layout: one int32 lane each in an AVX2 vector.
DOT_TILE = 8


def tile_channels(t: torch.Tensor, tile: int = TILE) -> torch.Tensor:
    """[N, C] -> [N, C] in blocks of `tile` channels, each block stored column-major ([C][w],
    w = tile or what the last block holds)."""
    n, c = t.shape
    blocks = [t[b : b + tile].t().reshape(-1) for b in range(0, n, tile)]
    return torch.cat(blocks).view(n, c) if blocks else t.contiguous()


def untile_channels(t: torch.Tensor, tile: int = TILE) -> torch.Tensor:
    """tile_channels' inverse."""
    n, c = t.shape
    flat = t.reshape(-1)
    rows = [
        flat[b * c : (b + w) * c].view(c, w).t()
        for b, w in ((b, min(tile, n - b)) for b in range(0, n, tile))
    ]
    return torch.cat(rows).contiguous() if rows else t.contiguous()


def tile_int4(q: torch.Tensor) -> torch.Tensor:
    """int8 [N, K] holding -8..7 -> uint8 [N, K / 2], the int4 linear kernel's layout: byte
    (j, c) of a block holds channel c's values at columns 2j (+ 8, low nibble) and 2j + 1
    (+ 8, high nibble), the block's channels side by side so that one vector load widens into
    one output channel per lane."""
    n, k = q.shape
    u = (q.to(torch.int16) + 8).to(torch.uint8).view(n, k // 2, 2)
    return tile_channels(u[:, :, 0] | (u[:, :, 1] << 4))


def untile_int4(tiled: torch.Tensor) -> torch.Tensor:
    """tile_int4's inverse: int8 [N, K]."""
    b = untile_channels(tiled)
    n, half_k = b.shape
    u = torch.stack([b & 15, b >> 4], dim=2).reshape(n, 2 * half_k)
    return (u.to(torch.int16) - 8).to(torch.int8)


def tile_int4_dot(q: torch.Tensor) -> torch.Tensor:
    """int8 [N, K] holding -8..7, K a multiple of 8 -> uint8 [N, K / 2], the dynamic int4
    kernel's layout: blocks of DOT_TILE channels; inside a block, per 8 columns, 4 bytes per
    channel, byte i holding columns i (+ 8, low nibble) and 4 + i (+ 8, high nibble). A masked
    vector of low (high) nibbles is then four columns of each channel in its own int32 lane,
    as `vpmaddubsw` + `vpmaddwd` (or `vpdpbusd`) sum them against a broadcast of four int8
    activations."""
    n, k = q.shape
    u = (q.to(torch.int16) + 8).to(torch.uint8).view(n, k // 8, 2, 4)
    b = u[:, :, 0, :] | (u[:, :, 1, :] << 4)  # [N, K / 8, 4]
    blocks = [b[c : c + DOT_TILE].transpose(0, 1).reshape(-1) for c in range(0, n, DOT_TILE)]
    return torch.cat(blocks).view(n, k // 2) if blocks else b.view(n, k // 2)


def untile_int4_dot(tiled: torch.Tensor) -> torch.Tensor:
    """tile_int4_dot's inverse: int8 [N, K]."""
    n, half_k = tiled.shape
    steps, flat = half_k // 4, tiled.reshape(-1)
    rows = []
    for c in range(0, n, DOT_TILE):
        w = min(DOT_TILE, n - c)
        rows.append(flat[c * half_k : (c + w) * half_k].view(steps, w, 4).transpose(0, 1))
    b = torch.cat(rows) if rows else tiled.view(n, steps, 4)
    u = torch.stack([b & 15, b >> 4], dim=2).reshape(n, 2 * half_k)
    return (u.to(torch.int16) - 8).to(torch.int8)


def dequantize_weight(
    weight: torch.Tensor,
    scales: torch.Tensor,
    zero_points: torch.Tensor | None,
    bits: int,
    group_size: int,
) -> torch.Tensor:
    """The float32 [N, K] weight, computed as torchao does: (float(q) - float(zero)) * scale
    (a 16-bit scale promoted to float32)."""
    q = unpack_int4(weight, group_size) if bits == 4 else weight
    n, k = q.shape
    qf = q.view(n, k // group_size, group_size).to(torch.float32)
    if zero_points is not None:
        qf = qf - zero_points.view(n, -1, 1).to(torch.float32)
    return (qf * scales.view(n, -1, 1)).view(n, k)


def _weight_only_linear_reference(
    input: torch.Tensor,
    weight: torch.Tensor,
    scales: torch.Tensor,
    zero_points: torch.Tensor | None,
    bias: torch.Tensor | None,
    bits: int,
    group_size: int,
    tile: int,
) -> torch.Tensor:
    # the tiled layout back to rows, as the embedding's
    assert tile == TILE, f"weights tiled by {tile} channels, this etrt's layout is {TILE}"
    n = weight.shape[0]
    if bits == 4:
        weight = pack_int4(untile_int4(weight), group_size)
    else:
        weight = untile_channels(weight)
    scales = untile_channels(scales.view(n, -1))
    if zero_points is not None:
        zero_points = untile_channels(zero_points.view(n, -1))
    w = dequantize_weight(weight, scales, zero_points, bits, group_size)
    return torch.nn.functional.linear(input, w, bias)


def _dynamic_int4_linear_reference(
    input: torch.Tensor,
    input_scales: torch.Tensor,
    input_zero_points: torch.Tensor | None,
    weight: torch.Tensor,
    scales: torch.Tensor,
    zero_points: torch.Tensor | None,
    weight_sums: torch.Tensor,
    bias: torch.Tensor | None,
    group_size: int,
    tile: int,
) -> torch.Tensor:
    assert tile == DOT_TILE, f"weights tiled by {tile} channels, this etrt's layout is {DOT_TILE}"
    n = weight.shape[0]
    q = untile_int4_dot(weight)
    scales = untile_channels(scales.view(n, -1), DOT_TILE)
    if zero_points is not None:
        zero_points = untile_channels(zero_points.view(n, -1), DOT_TILE)
    w = dequantize_weight(pack_int4(q, group_size), scales, zero_points, 4, group_size)
    rows = input.shape[:-1]
    x = input.to(torch.float32)
    if input_zero_points is not None:
        x = x - input_zero_points.reshape(*rows, 1).to(torch.float32)
    x = x * input_scales.reshape(*rows, 1)
    return torch.nn.functional.linear(x, w, bias)


def _weight_only_embedding_reference(
    weight: torch.Tensor,
    scales: torch.Tensor,
    zero_points: torch.Tensor | None,
    indices: torch.Tensor,
    bits: int,
    group_size: int,
) -> torch.Tensor:
    w = dequantize_weight(weight, scales, zero_points, bits, group_size)
    return torch.nn.functional.embedding(indices, w)


def _int8_mm_reference(
    input: torch.Tensor, weight: torch.Tensor, weight_sums: torch.Tensor
) -> torch.Tensor:
    # float64 sums of int8 products are exact (the kernel's int32 accumulation).
    acc = input.to(torch.float64) @ weight.to(torch.float64).t()
    return acc.to(torch.int32)


_LIB.impl("int8_mm", _int8_mm_reference, "CompositeExplicitAutograd")
_LIB.impl("weight_only_linear", _weight_only_linear_reference, "CompositeExplicitAutograd")
_LIB.impl("dynamic_int4_linear", _dynamic_int4_linear_reference, "CompositeExplicitAutograd")
_LIB.impl("weight_only_embedding", _weight_only_embedding_reference, "CompositeExplicitAutograd")

WEIGHT_ONLY_LINEAR = torch.ops.etrt_quant.weight_only_linear.default
WEIGHT_ONLY_EMBEDDING = torch.ops.etrt_quant.weight_only_embedding.default
INT8_MM = torch.ops.etrt_quant.int8_mm.default
DYNAMIC_INT4_LINEAR = torch.ops.etrt_quant.dynamic_int4_linear.default
_ATEN = torch.ops.aten
_CONSTANT_KINDS = (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR)
# Scales are stored in torchao's own dtype: a 16-bit scale widens to float32 exactly, so the
# weights the kernels rebuild are the same bits, in a smaller program.
SCALE_DTYPES = (torch.float32, torch.bfloat16, torch.float16)


@dataclass(frozen=True)
class PackedWeight:
    """A linear's weight as the kernel takes it."""

    weight: torch.Tensor  # uint8 [N, K / 2] (bits 4) or int8 [N, K]
    scales: torch.Tensor  # [N, G], float32 or torchao's bfloat16 / float16
    zero_points: torch.Tensor | None  # int8 [N, G]; None when all zero
    bits: int
    group_size: int

    def tiled(self) -> PackedWeight:
        """The linear kernel's layout: weights, scales and zero points in blocks of TILE output
        channels (int4: tile_int4; int8: each block column by column)."""
        zeros = None if self.zero_points is None else tile_channels(self.zero_points)
        if self.bits == 4:
            weight = tile_int4(unpack_int4(self.weight, self.group_size))
        else:
            weight = tile_channels(self.weight)
        return PackedWeight(weight, tile_channels(self.scales), zeros, self.bits, self.group_size)

    @property
    def nbytes(self) -> int:
        zeros = 0 if self.zero_points is None else self.zero_points.numel()
        scales = self.scales.numel() * self.scales.element_size()
        return self.weight.numel() * self.weight.element_size() + scales + zeros


def pack(
    q: torch.Tensor, scales: torch.Tensor, zero_points: torch.Tensor | None
) -> PackedWeight | None:
    """q int8 [N, K], scales [N, G] (or N * G values), zero points alike: the packed weight, int4
    when every value fits in 4 bits; None when the layout is not one the kernel runs."""
    if q.dim() != 2 or q.dtype != torch.int8 or scales.dtype not in SCALE_DTYPES:
        return None
    n, k = q.shape
    if n == 0 or k == 0 or scales.numel() % n != 0:
        return None
    groups = scales.numel() // n
    if groups == 0 or k % groups != 0:
        return None
    group_size = k // groups
    zeros: torch.Tensor | None = None
    if zero_points is not None:
        if zero_points.numel() != n * groups or zero_points.is_floating_point():
            return None
        if bool(zero_points.any()):
            if int(zero_points.min()) < -128 or int(zero_points.max()) > 127:
                return None
            zeros = zero_points.reshape(n, groups).to(torch.int8).contiguous()
    fits4 = group_size % 2 == 0 and int(q.min()) >= -8 and int(q.max()) <= 7
    weight = pack_int4(q, group_size) if fits4 else q.contiguous()
    return PackedWeight(
        weight, scales.reshape(n, groups).contiguous(), zeros, 4 if fits4 else 8, group_size
    )


@dataclass(frozen=True)
class WeightOnlyReport:
    """How many linears became weight-only kernels, by bits, how many embeddings, and how many
    integer products of dynamically quantized activations."""

    int4: int
    int8: int
    embeddings: int = 0
    int8_mm: int = 0
    dynamic_int4: int = 0  # of the int4 linears, those on int8 activations



def _argument(node: Any, target: Any, **kwargs: Any) -> Node | None:
    """The first argument of `node` when it calls `target` with exactly these kwargs' values."""
    if not is_call(node, target) or any(node.kwargs.get(k) != v for k, v in kwargs.items()):
        return None
    first = node.args[0]
    return first if isinstance(first, Node) else None


class _Folder:
    def __init__(self, ep: ExportedProgram) -> None:
        self.ep = ep
        self.graph = ep.graph_module.graph
        self.specs = {s.arg.name: s for s in ep.graph_signature.input_specs}
        self.added = 0
        self.counts = {4: 0, 8: 0}
        self.embeddings = 0
        self.int8_mms = 0
        self.dynamic_int4 = 0

    def constant(self, node: Node) -> torch.Tensor | None:
        if node.op != "placeholder":
            return None
        spec = self.specs.get(node.name)
        if spec is None or spec.kind not in _CONSTANT_KINDS or spec.target is None:
            return None
        value = self.ep.state_dict.get(spec.target, self.ep.constants.get(spec.target))
        return value if isinstance(value, torch.Tensor) else None

    def constant_subgraph(self, root: Node) -> tuple[list[Node], list[Node]] | None:
        """(nodes in topological order, constant leaves) of what `root` computes from constants
        only; None when it reads anything else."""
        seen: set[Node] = set()
        order: list[Node] = []
        leaves: list[Node] = []

        def visit(node: Node) -> bool:
            if node in seen:
                return True
            seen.add(node)
            if node.op == "placeholder":
                if self.constant(node) is None:
                    return False
                leaves.append(node)
            elif node.op != "call_function":
                return False
            else:
                for arg in node.all_input_nodes:
                    if not visit(arg):
                        return False
            order.append(node)
            return True

        return (order, leaves) if visit(root) else None

    def evaluate(self, order: list[Node]) -> Any:
        env: dict[Node, Any] = {}
        for node in order:
            if node.op == "placeholder":
                env[node] = self.constant(node)
            else:
                args = torch.fx.map_arg(node.args, lambda n: env[n])
                kwargs = torch.fx.map_arg(node.kwargs, lambda n: env[n])
                assert callable(node.target)
                env[node] = node.target(*args, **kwargs)
        return env[order[-1]]

    def add_constant(self, name: str, value: torch.Tensor) -> Node:
        target = f"_etrt_weight_only_{self.added}_{name}"
        node, spec = add_constant(self.ep, self.graph, target, value)
        self.specs[node.name] = spec
        return node

    def replace(self, old: Node, x: Any, packed: PackedWeight, bias: Any) -> None:
        dynamic = self.dynamic_input(x) if packed.bits == 4 and packed.group_size % 8 == 0 else None
        if dynamic is not None:
            self.replace_dynamic(old, x, dynamic, packed, bias)
            return
        w, s, z = self.add_packed(packed.tiled())
        self.swap(old, WEIGHT_ONLY_LINEAR, (x, w, s, z, bias, packed.bits, packed.group_size, TILE))
        self.counts[packed.bits] += 1

    def dynamic_input(self, x: Any) -> tuple[Node, Node, Node | None] | None:
        """(int8 values, scales, zero points or None) when `x` is an activation quantized per
        row and dequantized again, (float(A) - float(Z)) * S (torchao's 8da4w). The values may
        have other leading dimensions than `x` (a view between): replace_dynamic views them."""
        node = through_views(x)
        if not is_call(node, _ATEN.mul.Tensor) or node.kwargs:
            return None
        centred, scales = node.args[:2]
        zeros: Node | None = None
        if is_call(centred, _ATEN.sub.Tensor) and not centred.kwargs:  # no alpha
            zeros = _argument(centred.args[1], _ATEN._to_copy.default, dtype=torch.float32)
            if zeros is None:
                return None
            centred = centred.args[0]
        values = _argument(centred, _ATEN._to_copy.default, dtype=torch.float32)
        if values is None or not isinstance(scales, Node):
            return None

        def shape(n: Any, dtype: torch.dtype) -> list[str] | None:
            val = n.meta.get("val") if isinstance(n, Node) else None
            if not isinstance(val, torch.Tensor) or val.dtype != dtype:
                return None
            return [str(d) for d in val.shape]

        a, xs = shape(values, torch.int8), shape(x, torch.float32)
        if a is None or xs is None or len(a) < 2 or a[-1] != xs[-1]:
            return None
        per_row = [*a[:-1], "1"]
        if shape(scales, torch.float32) != per_row:
            return None
        if zeros is not None and shape(zeros, torch.int8) != per_row:
            return None
        if a != xs and not is_call(x, _ATEN.view.default):
            return None  # only a view of the same rows under other dimensions
        return values, scales, zeros

    def replace_dynamic(
        self,
        old: Node,
        x: Node,
        found: tuple[Node, Node, Node | None],
        packed: PackedWeight,
        bias: Any,
    ) -> None:
        """A linear of int8 activations times int4 weights: integer group sums, scaled after."""
        q = unpack_int4(packed.weight, packed.group_size)
        # torchao's float weight from the values unpacked once (bits 8: taken as they are)
        dense = dequantize_weight(q, packed.scales, packed.zero_points, 8, packed.group_size)
        w = self.add_constant("weight", tile_int4_dot(q))
        s = self.add_constant("scales", tile_channels(packed.scales, DOT_TILE))
        z = None
        if packed.zero_points is not None:
            z = self.add_constant("zeros", tile_channels(packed.zero_points, DOT_TILE))
        # The activations' zero point times each channel's weight sum: float64 sums of the
        # float32 weights torchao computes, rounded once.
        sums = self.add_constant("weight_sums", dense.to(torch.float64).sum(1).to(torch.float32))
        self.added += 1
        values, scales, zeros = found
        # x views A's rows under other dimensions: view A alike
        if shape_names(values) != shape_names(x):
            with self.graph.inserting_after(x):
                viewed = self.graph.call_function(_ATEN.view.default, (values, x.args[1]))
            viewed.meta["val"] = x.meta["val"].to(torch.int8)
            values = viewed
        args = (values, scales, zeros, w, s, z, sums, bias, packed.group_size, DOT_TILE)
        self.swap(old, DYNAMIC_INT4_LINEAR, args)
        self.counts[4] += 1
        self.dynamic_int4 += 1

    def add_packed(self, packed: PackedWeight) -> tuple[Node, Node, Node | None]:
        w = self.add_constant("weight", packed.weight)
        s = self.add_constant("scales", packed.scales)
        z = None if packed.zero_points is None else self.add_constant("zeros", packed.zero_points)
        self.added += 1
        return w, s, z

    def swap(self, old: Node, target: Any, args: tuple[Any, ...]) -> None:
        replace_node(self.graph, old, target, args)

    def fold_embedding(self, node: Node) -> None:
        """embedding(W, indices) with W dequantized (no padding_idx / scaling arguments)."""
        if len(node.args) != 2 or node.kwargs:
            return
        table, indices = node.args
        val = node.meta.get("val")
        t_val = table.meta.get("val") if isinstance(table, Node) else None
        if not isinstance(val, torch.Tensor) or val.dtype != torch.float32:
            return
        if not isinstance(t_val, torch.Tensor) or t_val.dim() != 2:
            return
        rows, dim = (int(d) for d in t_val.shape)
        packed = self.dequantized_weight(table, rows, dim)
        if packed is None:
            return
        w, s, z = self.add_packed(packed)
        self.swap(node, WEIGHT_ONLY_EMBEDDING, (w, s, z, indices, packed.bits, packed.group_size))
        self.embeddings += 1

    def dequantized_weight(self, node: Any, n: int, k: int) -> PackedWeight | None:
        """The packed form of float32 [N, K] `node` when it is a dequantize of constants."""
        if not isinstance(node, Node):
            return None
        found = self.constant_subgraph(node)
        if found is None:
            return None
        order, leaves = found
        values = {leaf: self.constant(leaf) for leaf in leaves}
        qs = [
            v
            for v in values.values()
            if v is not None and v.dtype == torch.int8 and v.numel() == n * k
        ]
        scales = [
            v for v in values.values()
            if v is not None and v.dtype in SCALE_DTYPES and v.numel() % n == 0
            and v.numel() < n * k
        ]  # fmt: skip
        zeros = [
            v for v in values.values()
            if v is not None and not v.is_floating_point() and v.numel() < n * k
        ]  # fmt: skip
        if len(qs) != 1 or len(scales) != 1 or len(zeros) > 1:
            return None
        packed = pack(qs[0].reshape(n, k), scales[0], zeros[0] if zeros else None)
        if packed is None:
            return None
        want = self.evaluate(order)
        if not isinstance(want, torch.Tensor) or want.dtype != torch.float32:
            return None
        got = dequantize_weight(
            packed.weight, packed.scales, packed.zero_points, packed.bits, packed.group_size
        )
        if want.shape != got.shape or not torch.equal(want, got):
            return None
        return packed

    def fold_linear(self, mm: Node) -> None:
        """mm(x, permute(W, [1, 0])) / addmm(bias, x, permute(W, [1, 0])), W dequantized."""
        if is_call(mm, _ATEN.addmm.default):
            if mm.kwargs or len(mm.args) != 3:  # beta / alpha
                return
            bias, x, wt = mm.args
        else:
            bias, (x, wt) = None, mm.args[:2]
        if not is_call(wt, _ATEN.permute.default) or list(wt.args[1]) != [1, 0]:  # type: ignore[union-attr, arg-type]
            return
        val = mm.meta.get("val")
        if not isinstance(val, torch.Tensor) or val.dtype != torch.float32:
            return
        assert isinstance(wt, Node)
        w_val = wt.args[0].meta.get("val") if isinstance(wt.args[0], Node) else None
        if not isinstance(w_val, torch.Tensor) or w_val.dim() != 2:
            return
        n, k = (int(d) for d in w_val.shape)
        if bias is not None:
            b_val = bias.meta.get("val") if isinstance(bias, Node) else None
            if not isinstance(b_val, torch.Tensor) or tuple(b_val.shape) != (n,):
                return
        packed = self.dequantized_weight(wt.args[0], n, k)
        if packed is not None:
            self.replace(mm, x, packed, bias)

    def fold_scaled_mm(self, mul: Node) -> None:
        """torchao's Int8Tensor: mul(mm(x, float(permute(q, [1, 0]))), scale)."""
        mm, scale = mul.args[:2]
        if not is_call(mm, _ATEN.mm.default) or not isinstance(scale, Node):
            return
        assert isinstance(mm, Node)
        if len(mm.users) != 1:
            return
        x, wt = mm.args[:2]
        val = mul.meta.get("val")
        if not isinstance(val, torch.Tensor) or val.dtype != torch.float32:
            return
        if not isinstance(wt, Node) or not isinstance(wt.meta.get("val"), torch.Tensor):
            return
        k, n = (int(d) for d in wt.meta["val"].shape)
        if tuple(val.shape) != tuple(mm.meta["val"].shape):
            return
        q_found = self.constant_subgraph(wt)
        s_found = self.constant_subgraph(scale)
        if q_found is None or s_found is None:
            return
        q_leaves = [self.constant(leaf) for leaf in q_found[1]]
        if len(q_leaves) != 1 or q_leaves[0] is None or q_leaves[0].dtype != torch.int8:
            return
        q = q_leaves[0].reshape(n, k)
        want_w = self.evaluate(q_found[0])
        if not isinstance(want_w, torch.Tensor) or not torch.equal(want_w, q.t().to(torch.float32)):
            return
        s = self.evaluate(s_found[0])
        if not isinstance(s, torch.Tensor) or s.dtype != torch.float32 or s.numel() != n:
            return
        if tuple(s.shape) not in ((n,), (1, n)):
            return
        packed = pack(q, s.reshape(n, 1), None)
        if packed is not None:
            self.replace(mul, x, packed, None)

    def int8_weight(self, node: Any) -> torch.Tensor | None:
        """int8 [N, K] when `node` computes its transpose [K, N] from constants only."""
        if not isinstance(node, Node):
            return None
        found = self.constant_subgraph(node)
        if found is None:
            return None
        order, leaves = found
        value = self.evaluate(order)
        if len(leaves) != 1 or not isinstance(value, torch.Tensor) or value.dtype != torch.int8:
            return None
        return value.t().contiguous() if value.dim() == 2 else None

    def fold_int_mm(self, mm: Node) -> None:
        """torchao's Int8Tensor with dynamic activations: _int_mm(uint8(int32(xq) + 128), W^T)
        less mul(sum(W^T, [0], dtype=int32), 128); or _int_mm(xq int8, W^T) itself."""
        a, b = mm.args[:2]
        w = self.int8_weight(b)
        if w is None or not isinstance(a, Node):
            return
        a_val = a.meta.get("val")
        if isinstance(a_val, torch.Tensor) and a_val.dtype == torch.int8:
            self.fold_int8_mm(mm, a, w)
            return
        # uint8(int32(xq) + 128)
        shifted = _argument(a, _ATEN._to_copy.default, dtype=torch.uint8)
        if shifted is None or not is_call(shifted, _ATEN.add.Tensor) or shifted.args[1] != 128:
            return
        widened: Any = shifted.args[0]
        xq = _argument(widened, _ATEN._to_copy.default, dtype=torch.int32)
        xq_val = xq.meta.get("val") if xq is not None else None
        if xq is None or not isinstance(xq_val, torch.Tensor) or xq_val.dtype != torch.int8:
            return
        users = list(mm.users)
        if len(users) != 1 or not is_call(users[0], _ATEN.sub.Tensor) or users[0].args[0] is not mm:
            return
        sub = users[0]
        corr: Any = sub.args[1]
        if not is_call(corr, _ATEN.mul.Tensor) or corr.args[1] != 128:
            return
        total = self.constant_subgraph(corr.args[0]) if isinstance(corr.args[0], Node) else None
        if total is None:
            return
        sums = self.evaluate(total[0])
        want = w.to(torch.int32).sum(1)
        if not isinstance(sums, torch.Tensor) or not torch.equal(sums.reshape(-1), want):
            return
        self.fold_int8_mm(sub, xq, w)

    def fold_int8_mm(self, old: Node, xq: Node, w: torch.Tensor) -> None:
        wn = self.add_constant("weight", w)
        sn = self.add_constant("weight_sums", w.to(torch.int32).sum(1).to(torch.int32))
        self.added += 1
        self.swap(old, INT8_MM, (xq, wn, sn))
        self.int8_mms += 1

    def fold(self) -> WeightOnlyReport:
        steps: list[tuple[Any, Callable[[Node], None]]] = [
            (_ATEN.mul.Tensor, self.fold_scaled_mm),
            (_ATEN.mm.default, self.fold_linear),
            (_ATEN.addmm.default, self.fold_linear),
            (_ATEN.embedding.default, self.fold_embedding),
            (_ATEN._int_mm.default, self.fold_int_mm),
        ]
        for target, step in steps:
            for node in list(self.graph.nodes):
                if is_call(node, target):
                    step(node)
        if self.added:
            self.graph.eliminate_dead_code()
            self.ep.graph_module.recompile()
        return WeightOnlyReport(
            self.counts[4], self.counts[8], self.embeddings, self.int8_mms, self.dynamic_int4
        )


def fold_weight_only(ep: ExportedProgram) -> WeightOnlyReport:
    """Rewrites `ep`'s graph in place; a program without integer weight constants is left as
    it was."""
    folder = _Folder(ep)
    has_int8 = any(
        (v := folder.constant(n)) is not None and v.dtype == torch.int8
        for n in ep.graph.nodes
        if n.op == "placeholder"
    )
    if not has_int8:
        return WeightOnlyReport(0, 0)
    return folder.fold()


__all__ = [
    "PackedWeight",
    "WeightOnlyReport",
    "dequantize_weight",
    "fold_weight_only",
    "pack",
    "pack_int4",
    "tile_channels",
    "tile_int4",
    "tile_int4_dot",
    "unpack_int4",
    "untile_channels",
    "untile_int4",
    "untile_int4_dot",
]
