"""Computations in dtypes etrt has no kernels for, folded where they read constants only.

Models compute some tables in float64 or complex numbers on purpose (RT-DETR's 2-D sine
position embedding in float64, rotary tables through `torch.polar`) and convert the result
before it meets the input. Where such a chain reads nothing but parameters, unmutated buffers,
lifted constants and static shapes, its value is the same on every run: the exporter computes it
once with torch, as eager does, and the program holds the result as a constant. Only the values
such a chain reaches are folded, at the first node of a supported dtype that a computation on
the inputs reads; every other constant computation stays a kernel call as before. What still
reads an input in those dtypes is refused by lowering, naming the tensor.
"""

from __future__ import annotations

import logging
from typing import Any

import torch
from torch.export import ExportedProgram
from torch.fx import Node

from .graph_edit import add_constant, constant_inputs
from .lower import TENSOR_DTYPES

log = logging.getLogger(__name__)


def _supported(val: Any) -> bool:
    return not isinstance(val, torch.Tensor) or val.dtype in TENSOR_DTYPES


def _static(val: Any) -> bool:
    if isinstance(val, torch.Tensor):
        return all(isinstance(d, int) for d in val.shape)
    if isinstance(val, list | tuple):
        return all(_static(v) for v in val)
    return not isinstance(val, torch.SymInt | torch.SymFloat | torch.SymBool)


def _seeded(node: Node) -> bool:
    tags = getattr(node.target, "tags", ())
    return torch.Tag.nondeterministic_seeded in tags


def fold_unsupported_constants(ep: ExportedProgram) -> int:
    """Fold the constant chains through unsupported dtypes; the number of values folded."""
    graph = ep.graph
    values = constant_inputs(ep)
    constant: set[Node] = set(values)
    tainted: set[Node] = set()  # constant and through an unsupported dtype
    for node in graph.nodes:
        val = node.meta.get("val")
        if node.op == "placeholder":
            if node not in constant:
                continue
        elif node.op == "call_function":
            if _seeded(node) or not _static(val):
                continue
            if not all(arg in constant for arg in node.all_input_nodes):
                continue
            constant.add(node)
        else:
            continue
        if not _supported(val) or any(arg in tainted for arg in node.all_input_nodes):
            tainted.add(node)
    frontier = [
        node
        for node in graph.nodes
        if node in tainted
        and node.op == "call_function"
        and isinstance(node.meta.get("val"), torch.Tensor)
        and _supported(node.meta["val"])
        and any(user not in constant for user in node.users)
    ]
    if not frontier:
        return 0
    needed: set[Node] = set()
    stack = list(frontier)
    while stack:  # the constant ancestors of the frontier, evaluated in graph order below
        node = stack.pop()
        if node not in needed:
            needed.add(node)
            stack.extend(node.all_input_nodes)
    env: dict[Node, Any] = {}
    failed: set[Node] = set()
    for node in graph.nodes:
        if node not in needed:
            continue
        if node.op == "placeholder":
            env[node] = values[node]
            continue
        if any(arg in failed for arg in node.all_input_nodes):
            failed.add(node)
            continue
        args = torch.fx.map_arg(node.args, lambda n: env[n])
        kwargs = torch.fx.map_arg(node.kwargs, lambda n: env[n])
        assert callable(node.target)
        try:
            with torch.no_grad():
                env[node] = node.target(*args, **kwargs)
        except Exception as exc:  # left as it is: lowering refuses the dtype by name
            log.info("not computed at export: %s (%s: %s)", node.name, type(exc).__name__, exc)
            failed.add(node)
    done = 0
    for node in frontier:
        if node in failed:
            continue
        name = f"_etrt_folded_{done}_{node.name}"
        folded, _ = add_constant(ep, graph, name, env[node].detach().contiguous().clone())
        node.replace_all_uses_with(folded)
        done += 1
    # What is left of the chains: checks on its metadata (_assert_tensor_metadata, impure to
    # dead-code elimination and true by construction) and the nodes only they read.
    for node in reversed(list(graph.nodes)):
        if node in tainted and node.op == "call_function" and not node.users:
            graph.erase_node(node)
    graph.eliminate_dead_code()
    ep.graph_module.recompile()
    return done
