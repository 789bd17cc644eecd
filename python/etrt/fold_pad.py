"""Zero padding folded into the convolution after it, at export.

TensorFlow's "same" padding, as timm's ports (tf_efficientnet_*, tf_mobilenetv3_*, mixnet) and
other converted models compute it, pads the input with `constant_pad_nd(x, [l, r, t, b], 0)`
and then convolves without padding. Where the padding is the same on both sides of each axis
(every stride-1 layer of an odd kernel) that is the convolution's own zero padding, which the
kernels apply without writing a padded copy: `conv(x, padding=(p_h + t, p_w + l))` sums the same
products in the same order. Folded only where the padded tensor is read by that convolution
alone, as its input. Uneven padding (stride 2 over an even size) keeps its copy.
"""

from __future__ import annotations

import math

from .ir import BoolValue, ExecutionPlan, IntListValue, KernelCall
from .plan_graph import PlanGraph, replace_chains

PAD = "aten::constant_pad_nd"
CONVOLUTION = "aten::convolution"


def fold_zero_padding(plan: ExecutionPlan) -> int:
    """Folds every such padding into its convolution; returns how many."""
    graph = PlanGraph(plan)
    rewrites = []
    for step, instr in enumerate(plan.instructions):
        if not isinstance(instr, KernelCall) or graph.op(step) != PAD:
            continue
        x, pad_arg, value_arg = instr.inputs
        pads = plan.values[pad_arg]
        value = graph.scalar(value_arg)
        if graph.float_tensor(x, 4) is None or value != 0.0 or math.copysign(1.0, value) < 0:
            continue
        if not isinstance(pads, IntListValue) or pads.item_values or len(pads.items) != 4:
            continue
        left, right, top, bottom = pads.items
        if left != right or top != bottom or left < 0 or top < 0:
            continue
        found = graph.only_call_reading(instr.outputs[0], (CONVOLUTION,))
        if found is None:
            continue
        conv_step, conv = found
        padding, transposed = plan.values[conv.inputs[4]], plan.values[conv.inputs[6]]
        if conv.inputs[0] != instr.outputs[0] or instr.outputs[0] in conv.inputs[1:]:
            continue
        if not isinstance(transposed, BoolValue) or transposed.val:
            continue
        if not isinstance(padding, IntListValue) or padding.item_values or len(padding.items) != 2:
            continue
        plan.values.append(IntListValue((padding.items[0] + top, padding.items[1] + left)))
        args = list(conv.args)
        args[0], args[4] = x, len(plan.values) - 1
        call = KernelCall(conv.op_index, tuple(args), conv.num_outputs, node=conv.node)
        rewrites.append((frozenset({step, conv_step}), conv_step, call))
    if rewrites:
        replace_chains(plan, rewrites)
    return len(rewrites)
