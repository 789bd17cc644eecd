"""Which XNNPACK nodes are worth a delegate call: the shape rule measured in docs/xnnpack.md.

Debian's XNNPACK (2022) beats etrt's kernels on convolution and pooling, and on fully connected
layers only where etrt's GEMM is weak: a short reduction (K below `FC_MAX_K`) over several
rows (M from `FC_MIN_M` to `FC_MAX_M`), where its dot-product path pays horizontal sums, and
weights too big for the cache (K x N at least `FC_BIG_WEIGHTS`) over `FC_BIG_MIN_M` rows or
more, where XNNPACK's packed weights stream better (ViT's layers). Everywhere else (long K, very
tall M over small weights, softmax on its own) etrt's kernels are as fast or faster, and a
delegate call only adds its boundary. A partition is delegated when it holds at least one
worthwhile node; the other nodes it holds ride along (e.g. the CNN's linear layer at batch 32,
which reads the pooling output in NHWC order inside the partition). A one-row fully connected
layer (GEMV) never does: XNNPACK's 1x16 kernel keeps a single accumulator and is about 2x slower
than etrt's.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from .match import Match, PlanView
from .nodes import AvgPool2d, Conv2d, FullyConnected, MaxPool2d, Softmax

# Bounds of etrt's dot path (src/kernels/gemm_isa.inc: kDotMinK, kDotMaxM): inside them its
# per-tile horizontal sums dominate a short K, and XNNPACK's packed weights win.
FC_MAX_K = 128
FC_MIN_M = 8
FC_MAX_M = 96
# Weights of 2 MiB or more (beyond one core's L2) over 32 rows or more: XNNPACK 1.3-1.4x faster
# (M=32..512, K=384..3072, N=768..3072); below 32 rows etrt's kernels win, 16x512x1024 is level.
FC_BIG_WEIGHTS = 512 * 1024
FC_BIG_MIN_M = 32


def fc_rows_and_depth(view: PlanView, node: FullyConnected) -> tuple[int, int] | None:
    """(M, K) of a fully connected node's 2-D input, or None if it is not a plan tensor."""
    if not isinstance(node.input, int):
        return None
    t = view.tensor(node.input)
    if t is None or len(t.sizes) != 2:
        return None
    return t.sizes[0], t.sizes[1]


# etrt's Winograd F(4x4, 3x3) kernel (src/kernels/conv_nhwc.cpp, nhwc_winograd_fits) takes 3x3
# stride-1 convolutions with this many channels and 4x4 output tiles or more (16 tiles when
# cin x cout is at most WINOGRAD_SMALL_WEIGHT_PAIRS), in 0.35-0.8x a direct kernel's time: faster
# than Debian's XNNPACK, which has no Winograd.
WINOGRAD_MIN_TILES = 32
WINOGRAD_MIN_TILES_SMALL_WEIGHTS = 16
WINOGRAD_SMALL_WEIGHT_PAIRS = 256 * 256
WINOGRAD_MIN_CHANNELS = 16
# Below 32 tiles the gain (0.7x XNNPACK's time at 14x14, 256 channels; 0.8x at 13x13, 64->256)
# is worth leaving a partition for only on wide layers: ResNet18's 256-channel stage 3 gains,
# SqueezeNet 1.1's 13x13 expand layers (48x192, 64x256) measured slower split off.
WINOGRAD_SPLIT_MIN_PAIRS = 128 * 256


# PT2E int8 (etrt_quant::conv2d, ::add). Debian's XNNPACK has no VNNI kernels (its best x86 qs8
# GEMMs multiply-add int16 pairs), so which side is faster depends on whether etrt's int8 kernels
# have AVX-512 VNNI (benchmarks/xnnpack_int8_layers.py, MobileNetV2's 52 layers, one thread,
# docs/quantization.md). With VNNI, XNNPACK took 1.03-2.3x etrt's time on 47 of them and was
# faster only on depthwise layers of 576 channels or more at 7x7 (0.84-0.93x). Without (etrt's
# AVX2 path since its 6x16 tiles; XNNPACK's AVX2 kernels), it took 1.07-1.51x on every
# non-depthwise convolution, 0.85-0.89x on depthwise ones of 384 channels or more (0.66x at 960)
# and 0.94-1.30x on narrower ones.
QS8_VNNI_DEPTHWISE_MIN_CHANNELS = 576
QS8_VNNI_DEPTHWISE_MAX_PIXELS = 7 * 7
QS8_AVX2_DEPTHWISE_MIN_CHANNELS = 384


def int8_vnni() -> bool:
    """Whether etrt's int8 kernels take their AVX-512 VNNI path on this machine, as the runtime
    decides it (src/kernels/quantized.cpp): the CPU has AVX-512 BW, VL and VNNI and
    ETRT_MAX_ISA, if set, does not cap it below avx512. The cost rule tunes a program for the
    machine that exports it: export under ETRT_MAX_ISA=avx2 for CPUs without VNNI."""
    return _int8_vnni(os.environ.get("ETRT_MAX_ISA"))


@functools.cache
def _int8_vnni(cap: str | None) -> bool:
    if cap is not None and cap.strip().lower() != "avx512":
        return False
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines()
                  if line.startswith("flags")), [])  # fmt: skip
    return {"avx512bw", "avx512vl", "avx512_vnni"} <= set(flags)


def qs8_faster(view: PlanView, m: Match, vnni: bool) -> bool:
    """Whether XNNPACK runs this int8 node faster than etrt's kernels (the measurement above).
    Additions ride along in partitions of such convolutions."""
    body = m.node.body
    if not isinstance(body, Conv2d):
        return True
    out = view.tensor(body.output)
    depthwise = body.groups > 1 and body.group_input_channels == 1
    if vnni:
        if not depthwise or out is None:
            return False
        pixels = out.sizes[2] * out.sizes[3]
        return body.groups >= QS8_VNNI_DEPTHWISE_MIN_CHANNELS and pixels <= (
            QS8_VNNI_DEPTHWISE_MAX_PIXELS
        )
    return depthwise and body.groups >= QS8_AVX2_DEPTHWISE_MIN_CHANNELS


def etrt_winograd(view: PlanView, node: Conv2d) -> bool:
    """Whether etrt's kernels run this convolution as Winograd and enough faster than XNNPACK
    to keep it out of a partition."""
    out = view.tensor(node.output)
    if out is None or node.groups != 1 or node.kernel != (3, 3) or node.stride != (1, 1):
        return False
    if node.dilation != (1, 1) or max(node.padding) > 2:
        return False
    cin, cout = node.group_input_channels, node.group_output_channels
    if min(cin, cout) < WINOGRAD_MIN_CHANNELS:
        return False
    n, _c, oh, ow = out.sizes
    tiles = n * ((oh + 3) // 4) * ((ow + 3) // 4)
    if tiles >= WINOGRAD_MIN_TILES:
        return True
    # The kernel's small-weights case, when wide enough to be worth a split.
    pairs = cin * cout
    return (
        tiles >= WINOGRAD_MIN_TILES_SMALL_WEIGHTS
        and WINOGRAD_SPLIT_MIN_PAIRS <= pairs <= WINOGRAD_SMALL_WEIGHT_PAIRS
    )


def may_delegate(view: PlanView, m: Match) -> bool:
    """False for nodes XNNPACK runs so much slower that they must stay out of any partition."""
    if m.quant:
        return qs8_faster(view, m, int8_vnni())
    if isinstance(m.node.body, FullyConnected):
        shape = fc_rows_and_depth(view, m.node.body)
        return shape is not None and shape[0] > 1
    if isinstance(m.node.body, Conv2d):
        return not etrt_winograd(view, m.node.body)
    return True


def worth_delegating(view: PlanView, m: Match) -> bool:
    """True if XNNPACK runs this node faster than etrt's kernels on this machine class."""
    body = m.node.body
    if m.quant:
        return isinstance(body, Conv2d) and qs8_faster(view, m, int8_vnni())
    if isinstance(body, Conv2d | MaxPool2d | AvgPool2d):
        return True
    if isinstance(body, FullyConnected):
        shape = fc_rows_and_depth(view, body)
        if shape is None:
            return False
        rows, depth = shape
        if rows >= FC_BIG_MIN_M and depth * body.filter.dims[0] >= FC_BIG_WEIGHTS:
            return True
        return depth < FC_MAX_K and FC_MIN_M <= rows <= FC_MAX_M
    return False


def is_heavy(view: PlanView, m: Match) -> bool:
    """Not elementwise: what a partition needs when every supported subgraph is delegated."""
    return isinstance(m.node.body, Conv2d | MaxPool2d | AvgPool2d | FullyConnected | Softmax)
