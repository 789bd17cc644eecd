"""Edits of an exported program's FX graph shared by the exporter's folding passes."""

from __future__ import annotations

from typing import Any

from torch.fx import Graph, Node


def replace_node(graph: Graph, old: Node, target: Any, args: tuple[Any, ...]) -> Node:
    """A call of `target` on `args` in `old`'s place: its value, trace and users taken over."""
    with graph.inserting_before(old):
        new = graph.call_function(target, args)
    new.meta["val"] = old.meta.get("val")
    new.meta["stack_trace"] = old.meta.get("stack_trace")
    old.replace_all_uses_with(new)
    graph.erase_node(old)
    return new
