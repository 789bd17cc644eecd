"""Identical calls computed once: two calls of the same pure ATen op on the same arguments give
the same value, so the second is dropped and its readers take the first's.

torchao's dynamic-activation schemes quantize a linear's input inside each linear: a
transformer's q, k and v projections (and the MLP's gate and up) quantize one activation
three (two) times, some twenty kernels each. Random ops (their values differ per call) and ops
that write their arguments are never merged. The exporter runs it on programs with such
dynamic quantization only: a merged intermediate gains readers, and the plan's activation
fusions (fuse.py) fire only where no other call reads one.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.export import ExportedProgram
from torch.fx import Node


def _key(value: Any) -> Any:
    """A hashable form of a call's arguments: lists as tuples, nodes by identity."""
    if isinstance(value, (list, tuple)):
        return tuple(_key(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _key(v)) for k, v in value.items()))
    if isinstance(value, float):  # -0.0 and 0.0 compare equal but do not compute alike
        return (float, value.hex())
    hash(value)
    return (type(value), value)


def _mergeable(node: Node) -> bool:
    target = node.target
    if node.op != "call_function" or not isinstance(target, torch._ops.OpOverload):
        return False
    if target._schema.is_mutable or torch.Tag.nondeterministic_seeded in target.tags:
        return False
    return bool(target._schema.returns)


def merge_identical_calls(ep: ExportedProgram) -> int:
    """Rewrites `ep`'s graph in place; the number of calls dropped."""
    graph = ep.graph_module.graph
    seen: dict[Any, Node] = {}
    merged = 0
    for node in list(graph.nodes):
        if not _mergeable(node):
            continue
        try:
            key = (node.target, _key(node.args), _key(node.kwargs))
        except TypeError:
            continue
        first = seen.setdefault(key, node)
        if first is node:
            continue
        node.replace_all_uses_with(first)
        graph.erase_node(node)
        merged += 1
    if merged:
        ep.graph_module.recompile()
    return merged


__all__ = ["merge_identical_calls"]
