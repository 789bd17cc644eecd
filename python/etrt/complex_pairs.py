"""Complex values as pairs of float32: the rotary embeddings of Meta's reference Llama, DeepSeek-V2
and others (`view_as_complex` of the queries, a product with `torch.polar` factors,
`view_as_real` back).

etrt's tensors are real. Each complex64 value of the graph becomes a float32 tensor of its shape
plus a trailing dimension of 2 (real, imaginary), which is what `view_as_real` gives and
`view_as_complex` reads, so those two become the pairs themselves. The products, sums and shape
operations between them are rewritten on the pairs with ATen ops etrt has; a complex product is
computed as ATen's CPU kernel does, `(ac - bd) + (ad + bc)i` in float32. Any other op on a
complex value is refused by name.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.export import ExportedProgram
from torch.fx import Graph, Node

from .errors import ExportError

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


def _complex(val: Any) -> bool:
    return isinstance(val, torch.Tensor) and val.dtype in _COMPLEX


class _Pairs:
    def __init__(self, ep: ExportedProgram) -> None:
        self.graph: Graph = ep.graph
        self.pairs: dict[Node, Node] = {}
        self.fake: Any = None

    def emit(self, target: Any, args: tuple[Any, ...], before: Node) -> Node:
        with self.graph.inserting_before(before):
            node = self.graph.call_function(target, args)
        fake_args = torch.fx.map_arg(args, lambda n: n.meta["val"])
        with self.fake:
            node.meta["val"] = target(*fake_args)
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
        raise ExportError(f"{node.name} ({node.target}): complex operand {arg!r} not supported")

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
            raise ExportError(f"{node.name} ({node.target}): only complex + complex is supported")
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
        return self.emit(node.target, (pair, self.dim(args[1], rank), *args[2:]), node)

    def rewrite(self, node: Node) -> Node | None:
        """The pairs (or, for view_as_real, the real result) standing for `node`; None when
        `node` touches no complex value."""
        target = node.target
        if target == _ATEN.view_as_complex.default:
            return node.args[0]  # type: ignore[return-value]
        if target == _ATEN.view_as_real.default:
            return self.operand(node.args[0], node)[1]  # type: ignore[no-any-return]
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
        if target in (_ATEN.add.Tensor, _ATEN.sub.Tensor):
            return self.sum(node)
        if target in _SHAPE_OPS and _complex(node.meta.get("val")):
            return self.reshaped(node, _SHAPE_OPS[target])
        raise ExportError(
            f"etrt does not run {target} on complex values ({node.name}); complex values run as "
            "pairs of float32 through view_as_complex / view_as_real, torch.polar, products, "
            "sums and shape operations"
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
