"""The ATen overloads etrt's kernel library (libetrt_kernels_optimized.so) implements.

Names are `OpOverload.name()` values: "aten::addmm" for a default overload,
"aten::add.Tensor" otherwise.
"""

from __future__ import annotations

# Ops whose output aliases their first argument: the exporter gives these outputs no memory.
VIEW_OPS: frozenset[str] = frozenset(
    {
        "aten::view",
        "aten::_unsafe_view",
        "aten::permute",
        "aten::expand",
        "aten::alias",
        "aten::select.int",
        "aten::squeeze.dims",
        "aten::squeeze.dim",
        "aten::unsqueeze",
        "aten::split_with_sizes",
        "aten::t",
        "aten::transpose.int",
        "aten::slice.Tensor",
    }
)

# Compute ops whose kernels write their output in any dense layout (a permutation of the
# contiguous strides): the exporter plans these outputs in the layout torch's tracing gave them,
# which later views may depend on. Every other kernel writes contiguous outputs.
ANY_LAYOUT_OPS: frozenset[str] = frozenset(
    {
        "aten::_to_copy",
        "aten::abs",
        "aten::add.Scalar",
        "aten::add.Tensor",
        "aten::bitwise_and.Tensor",
        "aten::bitwise_not",
        "aten::bitwise_or.Tensor",
        "aten::bitwise_xor.Tensor",
        "aten::clamp",
        "aten::clone",
        "aten::div.Scalar",
        "aten::div.Tensor",
        "aten::eq.Scalar",
        "aten::eq.Tensor",
        "aten::exp",
        "aten::full",
        "aten::full_like",
        "aten::ge.Scalar",
        "aten::ge.Tensor",
        "aten::gelu",
        "aten::gt.Scalar",
        "aten::gt.Tensor",
        "aten::hardtanh",
        "aten::le.Scalar",
        "aten::le.Tensor",
        "aten::leaky_relu",
        "aten::log",
        "aten::logical_and",
        "aten::logical_not",
        "aten::logical_or",
        "aten::lt.Scalar",
        "aten::lt.Tensor",
        "aten::maximum",
        "aten::minimum",
        "aten::mul.Scalar",
        "aten::mul.Tensor",
        "aten::ne.Scalar",
        "aten::ne.Tensor",
        "aten::neg",
        "aten::pow.Tensor_Scalar",
        "aten::relu",
        "aten::rsqrt",
        "aten::scalar_tensor",
        "aten::scaled_dot_product_attention",
        "aten::sigmoid",
        "aten::sqrt",
        "aten::sub.Scalar",
        "aten::sub.Tensor",
        "aten::tanh",
        "aten::where.self",
    }
)

# Every other compute op: its kernel writes a contiguous output.
COMPUTE_OPS: frozenset[str] = ANY_LAYOUT_OPS | frozenset(
    {
        "aten::_adaptive_avg_pool2d",
        "aten::_log_softmax",
        "aten::_native_batch_norm_legit_no_training",
        "aten::_softmax",
        "aten::addmm",
        "aten::amax",
        "aten::any.dim",
        "aten::arange.start_step",
        "aten::argmax",
        "aten::avg_pool2d",
        "aten::bmm",
        "aten::cat",
        "aten::constant_pad_nd",
        "aten::convolution",
        "aten::embedding",
        "aten::index.Tensor",
        "aten::max_pool2d_with_indices",
        "aten::mean",
        "aten::mean.dim",
        "aten::mm",
        "aten::native_group_norm",
        "aten::native_layer_norm",
        "aten::repeat",
        "aten::sum",
        "aten::sum.dim_IntList",
        "aten::upsample_bilinear2d.vec",
        "aten::upsample_nearest2d.vec",
    }
)

SUPPORTED_OPS: frozenset[str] = VIEW_OPS | COMPUTE_OPS


def is_view_op(name: str) -> bool:
    return name in VIEW_OPS


def is_supported(name: str) -> bool:
    return name in SUPPORTED_OPS


def writes_any_layout(name: str) -> bool:
    return name in ANY_LAYOUT_OPS
