"""Edits of an exported program's FX graph shared by the exporter's folding passes."""

from __future__ import annotations

from typing import Any

import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind, InputSpec, TensorArgument
from torch.fx import Graph, Node


def is_call(node: Any, target: Any) -> bool:
    """Whether `node` is a call of `target`."""
    return isinstance(node, Node) and node.op == "call_function" and node.target == target


def through_views(node: Any) -> Any:
    """What `node` views, through any chain of view / _unsafe_view calls."""
    aten = torch.ops.aten
    while is_call(node, aten.view.default) or is_call(node, aten._unsafe_view.default):
        node = node.args[0]
    return node


def shape_names(node: Node) -> list[str]:
    """A node's shape, symbolic dimensions by name (comparing them adds no guard)."""
    return [str(d) for d in node.meta["val"].shape]


def replace_node(graph: Graph, old: Node, target: Any, args: tuple[Any, ...]) -> Node:
    """A call of `target` on `args` in `old`'s place: its value, trace and users taken over."""
    with graph.inserting_before(old):
        new = graph.call_function(target, args)
    new.meta["val"] = old.meta.get("val")
    new.meta["stack_trace"] = old.meta.get("stack_trace")
    old.replace_all_uses_with(new)
    graph.erase_node(old)
    return new


_CONSTANT_KINDS = (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR)


def constant_inputs(ep: ExportedProgram) -> dict[Node, torch.Tensor]:
    """The placeholders whose value is fixed: parameters, buffers the program does not write and
    lifted constants, each with its tensor."""
    signature = ep.graph_signature
    mutated = set(signature.buffers_to_mutate.values())
    specs = {s.arg.name: s for s in signature.input_specs if hasattr(s.arg, "name")}
    out: dict[Node, torch.Tensor] = {}
    for node in ep.graph.nodes:
        spec = specs.get(node.name)
        if node.op != "placeholder" or spec is None or spec.kind not in _CONSTANT_KINDS:
            continue
        if spec.target is None or spec.target in mutated:
            continue
        value = ep.state_dict.get(spec.target, ep.constants.get(spec.target))
        if isinstance(value, torch.Tensor):
            out[node] = value
    return out


def add_constant(
    ep: ExportedProgram, graph: Graph, target: str, value: torch.Tensor
) -> tuple[Node, InputSpec]:
    """A constant tensor input named `target` holding `value`, placed first in the graph and in
    the program's signature: its placeholder and its spec."""
    with graph.inserting_before(next(iter(graph.nodes))):
        node: Node = graph.placeholder(target)
    node.meta["val"] = value
    ep.constants[target] = value
    spec = InputSpec(
        kind=InputKind.CONSTANT_TENSOR,
        arg=TensorArgument(name=node.name),
        target=target,
        persistent=None,
    )
    ep.graph_signature.input_specs.insert(0, spec)
    return node, spec
