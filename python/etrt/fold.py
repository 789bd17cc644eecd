"""Batch norm folded into the convolution before it, at export.

In eval mode `_native_batch_norm_legit_no_training(conv(x, w, b), gamma, beta, mean, var, eps)`
is `conv(x, w * s, (b - mean) * s + beta)` with `s = gamma / sqrt(var + eps)` per output
channel: one pass over the activation fewer, for etrt's kernels and the XNNPACK delegate alike.
Folded only when the convolution's output feeds the batch norm alone, the batch norm's two
statistics outputs are unused, and every parameter is a float32 constant in the program.
"""

from __future__ import annotations

import numpy as np

from .ir import BoolValue, DoubleValue, ExecutionPlan, KernelCall, NullValue
from .plan_graph import PlanGraph, add_constant, constant_array, drop_unread_constants

BATCH_NORM = "aten::_native_batch_norm_legit_no_training"
CONVOLUTION = "aten::convolution"


def fold_batch_norm(plan: ExecutionPlan, segments: list[bytes]) -> int:
    """Folds every foldable batch norm into its convolution (mutates both); returns how many."""
    graph = PlanGraph(plan)
    dropped: set[int] = set()
    folded = 0
    for step, bn in enumerate(plan.instructions):
        if not isinstance(bn, KernelCall) or plan.operators[bn.op_index] != BATCH_NORM:
            continue
        x, gamma, beta, mean, var, _momentum, eps = bn.inputs
        out, *stats = bn.outputs
        conv_step = graph.producer.get(x)
        if conv_step is None or graph.uses(x) != 1 or any(graph.uses(s) for s in stats):
            continue
        conv = plan.instructions[conv_step]
        assert isinstance(conv, KernelCall)
        if plan.operators[conv.op_index] != CONVOLUTION:
            continue
        w_index, b_index = conv.inputs[1], conv.inputs[2]
        w = constant_array(plan, segments, w_index)
        mu, sigma2 = constant_array(plan, segments, mean), constant_array(plan, segments, var)
        e = plan.values[eps]
        if w is None or mu is None or sigma2 is None or not isinstance(e, DoubleValue):
            continue
        channels = w.shape[0] if not _transposed(plan, conv) else None
        if channels is None or mu.shape != (channels,) or sigma2.shape != (channels,):
            continue
        params = []
        for index, default in ((gamma, 1.0), (beta, 0.0), (b_index, 0.0)):
            if isinstance(plan.values[index], NullValue):
                params.append(np.full(channels, default))
                continue
            array = constant_array(plan, segments, index)
            if array is None or array.shape != (channels,):
                break
            params.append(array)
        if len(params) != 3:
            continue
        g, b, bias = params
        scale = g / np.sqrt(sigma2 + e.val)
        new_w = add_constant(plan, segments, w * scale.reshape(-1, *([1] * (w.ndim - 1))))
        new_b = add_constant(plan, segments, (bias - mu) * scale + b)
        args = list(conv.args)
        args[1], args[2], args[-1] = new_w, new_b, out
        plan.instructions[conv_step] = KernelCall(
            conv.op_index, tuple(args), num_outputs=conv.num_outputs, node=conv.node
        )
        dropped.add(step)
        plan.values[x] = NullValue()  # the convolution's old output: nobody reads it now
        folded += 1
    plan.instructions = [i for s, i in enumerate(plan.instructions) if s not in dropped]
    drop_unread_constants(plan, segments)
    return folded


def _transposed(plan: ExecutionPlan, conv: KernelCall) -> bool:
    flag = plan.values[conv.inputs[6]]
    return not isinstance(flag, BoolValue) or flag.val
