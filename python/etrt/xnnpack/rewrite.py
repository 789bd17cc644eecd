"""Rewrites a partition's nodes before they become a blob: what XNNPACK runs better fused, and
what Debian's XNNPACK (2022) cannot express directly.

- A channel concatenation (no such node in that XNNPACK) is never materialised: its readers are
  distributed over its inputs. A convolution of `cat(a, b)` is `conv(a, W_a) + conv(b, W_b)`
  (the filter split along its input channels; same arithmetic, one add on the smaller output),
  and pooling, clamps and copies apply per input. Any other reader, or a concatenation
  that leaves the partition, and the partition cannot be delegated.
- A clamp (relu, relu6, hardtanh, the clamps of hardswish) folds into the node producing its
  input as that node's output bounds, when nothing else reads the unclamped value.
- `x * clamp(x + 3, 0, 6) / 6` (how hardswish decomposes) becomes one Hardswish node.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from .match import Match, PlanView
from .nodes import (
    CLAMPING,
    AvgPool2d,
    Binary,
    BinaryOp,
    Clamp,
    Concat,
    Const,
    Conv2d,
    Hardswish,
    Layout,
    MaxPool2d,
    Reshape,
    XNode,
)

if TYPE_CHECKING:
    from .partition import Partition


def rewrite(view: PlanView, part: Partition) -> bool:
    """Rewrites part.matches in place; False if the partition cannot be delegated."""
    if not _expand_concats(view, part):
        return False
    _fuse_clamps(view, part)
    _fuse_hardswish(view, part)
    part.produced = {m.node.output for m in part.matches}
    return True


def _leaves(view: PlanView, part: Partition, v: int) -> bool:
    """The value is read outside the partition (or is a plan output)."""
    return v in view.plan_outputs or bool(view.users.get(v, set()) - set(part.members))


def _readers(part: Partition, v: int) -> list[int]:
    return [i for i, m in enumerate(part.matches) if v in m.node.activations]


def _sizes(view: PlanView, part: Partition, v: int) -> tuple[int, ...]:
    if v in part.synthetic:
        return part.synthetic[v]
    t = view.tensor(v)
    assert t is not None
    return t.sizes


def _expand_concats(view: PlanView, part: Partition) -> bool:
    if not any(isinstance(m.node.body, Concat) for m in part.matches):
        return True
    next_id = len(view.values) + len(part.synthetic)
    pieces: dict[int, list[int]] = {}  # a concatenation's output -> the values it joins

    def new_value(sizes: tuple[int, ...]) -> int:
        nonlocal next_id
        v = next_id
        next_id += 1
        part.synthetic[v] = sizes
        part.layout[v] = Layout.SPATIAL
        return v

    out: list[Match] = []
    for m in part.matches:
        body = m.node.body
        if isinstance(body, Concat):
            if _leaves(view, part, body.output):
                return False
            pieces[body.output] = [p for i in body.inputs for p in pieces.get(i, [i])]
            continue
        joined = [v for v in m.node.activations if v in pieces]
        if not joined:
            out.append(m)
            continue
        src = joined[0]
        if len(joined) > 1 or m.node.activations != (src,):
            return False
        parts = pieces[src]
        if isinstance(body, Conv2d) and body.groups == 1:
            sums: list[int] = []
            start = 0
            for i, p in enumerate(parts):
                c = _sizes(view, part, p)[1]
                w = body.filter.array[..., start : start + c]
                filt = Const(f"{body.filter.key}:in{start}+{c}", np.ascontiguousarray(w))
                target = new_value(_sizes(view, part, body.output))
                conv = replace(body, input=p, filter=filt, bias=body.bias if i == 0 else None,
                               output=target, group_input_channels=c)  # fmt: skip
                out.append(Match(XNode(conv), m.input_layout, m.output_layout))
                sums.append(target)
                start += c
            acc = sums[0]
            for i, s in enumerate(sums[1:], start=1):
                last = i == len(sums) - 1
                target = body.output if last else new_value(_sizes(view, part, body.output))
                node = XNode(Binary(BinaryOp.ADD, acc, s, target),
                             m.node.output_min if last else -math.inf,
                             m.node.output_max if last else math.inf)  # fmt: skip
                out.append(Match(node, None, None))
                acc = target
        elif isinstance(body, MaxPool2d | AvgPool2d | Clamp | Reshape):
            if _leaves(view, part, body.output):
                return False
            outs = []
            n, _, oh, ow = _sizes(view, part, body.output)
            for p in parts:
                target = new_value((n, _sizes(view, part, p)[1], oh, ow))
                out.append(Match(replace(m.node, body=replace(body, input=p, output=target)),
                                 m.input_layout, m.output_layout))  # fmt: skip
                outs.append(target)
            pieces[body.output] = outs
        else:
            return False
    part.matches = out
    return True


def _fuse_clamps(view: PlanView, part: Partition) -> None:
    i = 0
    while i < len(part.matches):
        m = part.matches[i]
        if not isinstance(m.node.body, Clamp):
            i += 1
            continue
        src = m.node.body.input
        producer = next((j for j in range(i) if part.matches[j].node.output == src), None)
        if producer is None or not isinstance(src, int) or _leaves(view, part, src):
            i += 1
            continue
        p = part.matches[producer]
        if not isinstance(p.node.body, CLAMPING) or _readers(part, src) != [i]:
            i += 1
            continue
        lo = max(p.node.output_min, m.node.output_min)
        hi = min(p.node.output_max, m.node.output_max)
        body = replace(p.node.body, output=m.node.output)
        part.matches[producer] = Match(XNode(body, lo, hi), p.input_layout, p.output_layout)
        del part.matches[i]


def _const_value(o: object) -> float | None:
    return float(o.array.reshape(-1)[0]) if isinstance(o, Const) and o.array.size == 1 else None


def _fuse_hardswish(view: PlanView, part: Partition) -> None:
    """add(x, 3) clamped to [0, 6], then mul by x, then div by 6: one Hardswish(x)."""
    i = 0
    while i < len(part.matches):
        ms = part.matches
        a = ms[i].node
        found = None
        if (
            isinstance(a.body, Binary)
            and a.body.op == BinaryOp.ADD
            and isinstance(a.body.input1, int)
            and _const_value(a.body.input2) == 3.0
            and (a.output_min, a.output_max) == (0.0, 6.0)
            and not _leaves(view, part, a.output)
        ):
            x, t = a.body.input1, a.output
            r = _readers(part, t)
            if len(r) == 1 and isinstance(ms[r[0]].node.body, Binary):
                mul = ms[r[0]].node
                assert isinstance(mul.body, Binary)
                if (
                    mul.body.op == BinaryOp.MULTIPLY
                    and {mul.body.input1, mul.body.input2} == {x, t}
                    and math.isinf(mul.output_min) and math.isinf(mul.output_max)
                    and not _leaves(view, part, mul.output)
                ):  # fmt: skip
                    r2 = _readers(part, mul.output)
                    if len(r2) == 1 and isinstance(ms[r2[0]].node.body, Binary):
                        div = ms[r2[0]].node
                        assert isinstance(div.body, Binary)
                        if (
                            div.body.op == BinaryOp.DIVIDE
                            and div.body.input1 == mul.output
                            and _const_value(div.body.input2) == 6.0
                        ):
                            found = (r[0], r2[0], div)
        if found is None:
            i += 1
            continue
        j, k, div = found
        node = XNode(Hardswish(x, div.output), div.output_min, div.output_max)
        if not (math.isinf(node.output_min) and math.isinf(node.output_max)):
            i += 1  # XNNPACK's hardswish has no output bounds
            continue
        ms[k] = Match(node, None, None)
        for d in sorted((i, j), reverse=True):
            del ms[d]
        i = 0
