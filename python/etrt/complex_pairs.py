"""Complex values as pairs of float32: the rotary embeddings of Meta's reference Llama, DeepSeek-V2
and others (`view_as_complex` of the queries, a product with `torch.polar` factors,
`view_as_real` back).

etrt's tensors are real. Each complex64 value of the graph becomes a float32 tensor of its shape
plus a trailing dimension of 2 (real, imaginary), which is what `view_as_real` gives and
`view_as_complex` reads, so those two become the pairs themselves; a complex parameter, buffer
or lifted constant is stored as its pairs. The products, sums and shape operations between them
are rewritten on the pairs with ATen ops etrt has; a complex product is computed as ATen's CPU
kernel does, `(ac - bd) + (ad + bc)i` in float32. Any other op on a complex value is refused by
name.

FFTs (`_fft_r2c`, `_fft_c2c`, `_fft_c2r`: torch.fft, torch.stft's spectrograms, FNet's token
mixing) become discrete Fourier transforms as products with cosine and sine tables of each
transformed dimension's size (float64 angles, stored as float32 constants): O(n^2) per
transform where pocketfft is O(n log n), exact to float32 rounding. The transformed dimensions
must have static sizes.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch.export import ExportedProgram
from torch.fx import Graph, Node

from .errors import ExportError
from .graph_edit import add_constant, constant_inputs
from .lower import op_name

_ATEN = torch.ops.aten
_COMPLEX = (torch.complex64,)

# Ops that only move a complex tensor's elements: the same op on the pairs, with the dimension
# arguments counted from the front (the pairs' own dimension is last).
_SHAPE_OPS = {
    _ATEN.unsqueeze.default: "unsqueeze",
    _ATEN.view.default: "view",
    _ATEN._unsafe_view.default: "view",
    _ATEN.reshape.default: "view",
    _ATEN.expand.default: "expand",
    _ATEN.permute.default: "permute",
    _ATEN.slice.Tensor: "dim",
    _ATEN.select.int: "dim",
    _ATEN.squeeze.dim: "dim",
    _ATEN.transpose.int: "dims",
    _ATEN.clone.default: "same",
    _ATEN.alias.default: "same",
    _ATEN._to_copy.default: "same",
    _ATEN.cat.default: "cat",
}


def _name(node: Node) -> str:
    target = node.target
    return op_name(target) if isinstance(target, torch._ops.OpOverload) else str(target)


def _complex(val: Any) -> bool:
    return isinstance(val, torch.Tensor) and val.dtype in _COMPLEX


class _Pairs:
    def __init__(self, ep: ExportedProgram) -> None:
        self.ep = ep
        self.graph: Graph = ep.graph
        self.pairs: dict[Node, Node] = {}
        self.fake: Any = None
        self.tables: dict[tuple[int, int, str], Node] = {}

    def emit(self, target: Any, args: tuple[Any, ...], before: Node, **kwargs: Any) -> Node:
        with self.graph.inserting_before(before):
            node = self.graph.call_function(target, args, kwargs)
        fake_args = torch.fx.map_arg(args, lambda n: n.meta["val"])
        with self.fake:
            node.meta["val"] = target(*fake_args, **kwargs)
        node.meta["stack_trace"] = before.meta.get("stack_trace")
        return node

    def part(self, pair: Node, which: int, at: Node) -> Node:
        return self.emit(_ATEN.select.int, (pair, -1, which), at)

    def join(self, real: Node, imag: Node, at: Node) -> Node:
        parts = [self.emit(_ATEN.unsqueeze.default, (p, -1), at) for p in (real, imag)]
        return self.emit(_ATEN.cat.default, (parts, -1), at)

    def rank(self, node: Node) -> int:
        return int(node.meta["val"].dim())

    def dim(self, d: int, rank: int) -> int:
        return d + rank if d < 0 else d

    def operand(self, arg: Any, node: Node) -> tuple[str, Any]:
        """("pair", node) for a complex value, ("real", arg) for a real tensor or a number."""
        if isinstance(arg, Node) and _complex(arg.meta.get("val")):
            if arg not in self.pairs:
                raise ExportError(
                    f"{arg.name} is a complex64 input or constant; etrt takes complex values "
                    "only as pairs of float32 (torch.view_as_real) at a program's edge"
                )
            return "pair", self.pairs[arg]
        if isinstance(arg, Node) and not _complex(arg.meta.get("val")):
            return "real", arg
        if isinstance(arg, int | float) and not isinstance(arg, bool):
            return "real", arg
        raise ExportError(
            f"node {node.name} ({_name(node)}): complex operand {arg!r} not supported"
        )

    def product(self, node: Node) -> Node:
        (ka, a), (kb, b) = (self.operand(x, node) for x in node.args[:2])
        if ka == "real":
            (ka, a), (kb, b) = (kb, b), (ka, a)
        if kb == "real":  # a real factor scales both parts
            if isinstance(b, Node):
                b = self.emit(_ATEN.unsqueeze.default, (b, -1), node)
            return self.emit(_ATEN.mul.Tensor, (a, b), node)
        ar, ai, br, bi = (self.part(p, i, node) for p in (a, b) for i in (0, 1))
        mul, add, sub = _ATEN.mul.Tensor, _ATEN.add.Tensor, _ATEN.sub.Tensor
        real = self.emit(
            sub, (self.emit(mul, (ar, br), node), self.emit(mul, (ai, bi), node)), node
        )
        imag = self.emit(
            add, (self.emit(mul, (ar, bi), node), self.emit(mul, (ai, br), node)), node
        )
        return self.join(real, imag, node)

    def sum(self, node: Node) -> Node:
        (ka, a), (kb, b) = (self.operand(x, node) for x in node.args[:2])
        if ka != "pair" or kb != "pair" or len(node.args) > 2 or node.kwargs:
            raise ExportError(
                f"node {node.name} ({_name(node)}): only complex + complex is supported"
            )
        return self.emit(node.target, (a, b), node)

    def reshaped(self, node: Node, kind: str) -> Node:
        args: list[Any] = list(node.args)
        if kind == "cat":
            tensors = [self.operand(t, node)[1] for t in args[0]]
            d = int(args[1] if len(args) > 1 else node.kwargs.get("dim", 0))  # type: ignore[arg-type]
            rank = self.rank(args[0][0])
            return self.emit(_ATEN.cat.default, (tensors, self.dim(d, rank)), node)
        source = args[0]
        pair: Node = self.operand(source, node)[1]
        rank = self.rank(source)
        if kind == "same":
            return pair
        if kind == "unsqueeze":
            return self.emit(node.target, (pair, self.dim(args[1], rank + 1)), node)
        if kind in ("view", "expand"):
            return self.emit(_ATEN.view.default if kind == "view" else node.target,
                             (pair, [*args[1], 2]), node)  # fmt: skip
        if kind == "permute":
            return self.emit(node.target, (pair, [self.dim(d, rank) for d in args[1]] + [rank]),
                             node)  # fmt: skip
        if kind == "dims":
            return self.emit(
                node.target, (pair, self.dim(args[1], rank), self.dim(args[2], rank)), node
            )
        rest = {k: v for k, v in node.kwargs.items() if k != "dim"}
        axis: Any = args[1] if len(args) > 1 else node.kwargs.get("dim", 0)  # slice's default
        return self.emit(node.target, (pair, self.dim(int(axis), rank), *args[2:]), node, **rest)

    def table(self, n: int, m: int, kind: str) -> Node:
        """An (n, m) table, input index j by row, output index k by column: "cos" / "sin" of
        2 pi j k / n; "hermitian_cos" / "hermitian_sin" of 2 pi j k / m for a half spectrum's
        bins j, weighed as irfft sums them (1 for bin 0 and m / 2, 2 between, 0 past m / 2)."""
        key = (n, m, kind)
        if key not in self.tables:
            j = torch.arange(n, dtype=torch.float64)[:, None]
            k = torch.arange(m, dtype=torch.float64)[None, :]
            period = m if kind.startswith("hermitian") else n
            angle = 2 * math.pi * ((j * k) % period) / period
            table = angle.cos() if kind.endswith("cos") else angle.sin()
            if kind.startswith("hermitian"):
                twice = 2 * torch.arange(n)
                weight = torch.where(twice < m, 2.0, torch.where(twice == m, 1.0, 0.0))
                weight[0] = 1.0
                table = table * weight.to(torch.float64)[:, None]
            name = f"_etrt_dft_{kind}_{n}x{m}"
            node, _ = add_constant(self.ep, self.graph, name, table.to(torch.float32).contiguous())
            self.tables[key] = node
        return self.tables[key]

    def along_last(self, x: Node, d: int, table: Node, at: Node) -> Node:
        """x (real) times `table` along dimension d: x moved last, a matrix product, moved back."""
        rank = self.rank(x)
        last = d == rank - 1
        moved = x if last else self.emit(_ATEN.transpose.int, (x, d, rank - 1), at)
        dense = self.emit(_ATEN.clone.default, (moved,), at, memory_format=torch.contiguous_format)
        shape = list(dense.meta["val"].shape)
        lead = [
            s if isinstance(s, int) else self.emit(_ATEN.sym_size.int, (dense, i), at)
            for i, s in enumerate(shape[:-1])
        ]
        rows = self.emit(_ATEN.view.default, (dense, [-1, shape[-1]]), at)
        product = self.emit(_ATEN.mm.default, (rows, table), at)
        m = int(table.meta["val"].shape[1])
        out = self.emit(_ATEN.view.default, (product, [*lead, m]), at)
        return out if last else self.emit(_ATEN.transpose.int, (out, d, rank - 1), at)

    def size(self, node: Node, d: int) -> int:
        size = node.meta["val"].shape[d]
        if not isinstance(size, int):
            raise ExportError(
                f"node {node.name} ({_name(node)}): an FFT over dimension {d}, whose size is "
                "dynamic; etrt computes FFTs as products with tables of static sizes"
            )
        return size

    def dft(self, pair: Node, d: int, inverse: bool, at: Node) -> Node:
        """The discrete Fourier transform of complex pairs along dimension d (of the complex
        value): forward e^{-i theta}, inverse e^{+i theta}, unnormalized."""
        re, im = self.part(pair, 0, at), self.part(pair, 1, at)
        n = self.size(re, d)
        cos, sin = self.table(n, n, "cos"), self.table(n, n, "sin")
        rc, rs = self.along_last(re, d, cos, at), self.along_last(re, d, sin, at)
        ic, is_ = self.along_last(im, d, cos, at), self.along_last(im, d, sin, at)
        add, sub = _ATEN.add.Tensor, _ATEN.sub.Tensor
        if inverse:
            return self.join(self.emit(sub, (rc, is_), at), self.emit(add, (ic, rs), at), at)
        return self.join(self.emit(add, (rc, is_), at), self.emit(sub, (ic, rs), at), at)

    def normalized(self, x: Node, mode: int, count: int, at: Node) -> Node:
        # ATen's fft_norm_mode: 0 none, 1 by 1/sqrt(n), 2 by 1/n
        if mode == 0:
            return x
        scale = 1.0 / math.sqrt(count) if mode == 1 else 1.0 / count
        return self.emit(_ATEN.mul.Tensor, (x, scale), at)

    def fft(self, node: Node) -> Node:
        target, args = node.target, list[Any](node.args)
        source: Any = args[0]
        dims = [self.dim(int(d), self.rank(source)) for d in args[1]]
        mode = int(args[2])
        if target == _ATEN._fft_c2r.default:
            pair = self.operand(source, node)[1]
            for d in dims[:-1]:
                pair = self.dft(pair, d, True, node)
            last, size = dims[-1], int(args[3])
            re, im = self.part(pair, 0, node), self.part(pair, 1, node)
            bins = self.size(re, last)
            rc = self.along_last(re, last, self.table(bins, size, "hermitian_cos"), node)
            rs = self.along_last(im, last, self.table(bins, size, "hermitian_sin"), node)
            out = self.emit(_ATEN.sub.Tensor, (rc, rs), node)
            count = math.prod(self.size(out, d) for d in dims)
            return self.normalized(out, mode, count, node)
        if target == _ATEN._fft_r2c.default:
            zeros = self.emit(_ATEN.full_like.default, (source, 0.0), node)
            pair = self.join(source, zeros, node)
            inverse, onesided = False, bool(args[3])
        else:
            pair = self.operand(source, node)[1]
            inverse, onesided = not bool(args[3]), False
        count = math.prod(self.size(pair, d) for d in dims)
        for d in dims:
            pair = self.dft(pair, d, inverse, node)
        if onesided:
            half = self.size(pair, dims[-1]) // 2 + 1
            pair = self.emit(_ATEN.slice.Tensor, (pair, dims[-1], 0, half), node)
        return self.normalized(pair, mode, count, node)

    def rewrite(self, node: Node) -> Node | None:
        """The pairs (or, for view_as_real, the real result) standing for `node`; None when
        `node` touches no complex value."""
        target = node.target
        if target == _ATEN.view_as_complex.default:
            return node.args[0]  # type: ignore[return-value]
        if target == _ATEN.view_as_real.default:
            return self.operand(node.args[0], node)[1]  # type: ignore[no-any-return]
        if target in (_ATEN._fft_r2c.default, _ATEN._fft_c2c.default, _ATEN._fft_c2r.default):
            return self.fft(node)
        if target == _ATEN._to_copy.default and _complex(node.meta.get("val")):
            source = node.args[0]
            if isinstance(source, Node) and not _complex(source.meta.get("val")):
                real = source
                if source.meta["val"].dtype != torch.float32:
                    real = self.emit(_ATEN._to_copy.default, (source,), node, dtype=torch.float32)
                zeros = self.emit(_ATEN.full_like.default, (real, 0.0), node)
                return self.join(real, zeros, node)
        if target == _ATEN.polar.default:
            magnitude, angle = node.args[:2]
            cos = self.emit(_ATEN.cos.default, (angle,), node)
            sin = self.emit(_ATEN.sin.default, (angle,), node)
            return self.join(
                self.emit(_ATEN.mul.Tensor, (magnitude, cos), node),
                self.emit(_ATEN.mul.Tensor, (magnitude, sin), node),
                node,
            )
        touches = _complex(node.meta.get("val")) or any(
            _complex(a.meta.get("val")) for a in node.all_input_nodes
        )
        if not touches:
            return None
        if target == _ATEN.mul.Tensor:
            return self.product(node)
        if target == _ATEN.abs.default:  # a magnitude: sqrt(re^2 + im^2)
            pair = self.operand(node.args[0], node)[1]
            square = self.emit(_ATEN.mul.Tensor, (pair, pair), node)
            summed = self.emit(_ATEN.sum.dim_IntList, (square, [-1]), node)
            return self.emit(_ATEN.sqrt.default, (summed,), node)
        if target in (_ATEN.add.Tensor, _ATEN.sub.Tensor):
            return self.sum(node)
        if target in _SHAPE_OPS and _complex(node.meta.get("val")):
            return self.reshaped(node, _SHAPE_OPS[target])
        raise ExportError(
            f"node {node.name}: etrt does not run {_name(node)} on complex values; they run as "
            "pairs of float32 through view_as_complex / view_as_real, torch.polar, FFTs, "
            "products, sums, abs and shape operations"
        )


def lower_complex_to_pairs(ep: ExportedProgram) -> int:
    """Rewrite the graph's complex64 values as float32 pairs; the number of ops rewritten."""
    graph = ep.graph
    if not any(_complex(n.meta.get("val")) for n in graph.nodes if n.op == "call_function"):
        return 0
    rewriter = _Pairs(ep)
    vals = [n.meta["val"] for n in graph.nodes if isinstance(n.meta.get("val"), torch.Tensor)]
    rewriter.fake = torch._guards.detect_fake_mode(vals)
    if rewriter.fake is None:
        raise ExportError("complex values: the exported program carries no fake tensors")
    count = 0
    touched: set[Node] = set()
    # Complex parameters, buffers the program does not write and lifted constants (Meta's
    # reference Llama keeps its rotary factors as a complex tensor): stored as their pairs.
    for node, value in constant_inputs(ep).items():
        if _complex(node.meta.get("val")):
            pairs = torch.view_as_real(value.detach().resolve_conj()).contiguous().clone()
            name = f"_etrt_pairs_{node.name}"
            rewriter.pairs[node], _ = add_constant(ep, graph, name, pairs)
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target == _ATEN._assert_tensor_metadata.default:
            continue
        new = rewriter.rewrite(node)
        if new is None:
            continue
        count += 1
        touched.add(node)
        if _complex(node.meta.get("val")):
            rewriter.pairs[node] = new
        else:
            node.replace_all_uses_with(new)
    # What is left: the complex nodes and checks on their metadata, read by nothing else.
    for node in reversed(list(graph.nodes)):
        if (
            node.op == "call_function"
            and not node.users
            and (node in touched or any(a in touched for a in node.all_input_nodes))
        ):
            graph.erase_node(node)
    graph.eliminate_dead_code()
    ep.graph_module.recompile()
    return count
