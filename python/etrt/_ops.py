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

COMPUTE_OPS: frozenset[str] = frozenset(
    {
        "aten::addmm",
        "aten::mm",
        "aten::bmm",
        "aten::convolution",
        "aten::max_pool2d_with_indices",
        "aten::scaled_dot_product_attention",
        "aten::relu",
        "aten::gelu",
        "aten::add.Tensor",
        "aten::sub.Tensor",
        "aten::div.Tensor",
        "aten::mul.Tensor",
        "aten::mul.Scalar",
        "aten::clone",
        "aten::_softmax",
        "aten::native_layer_norm",
        "aten::eq.Scalar",
        "aten::logical_not",
        "aten::any.dim",
        "aten::full_like",
        "aten::where.self",
        "aten::clamp",
        "aten::hardtanh",
        "aten::leaky_relu",
        "aten::pow.Tensor_Scalar",
        "aten::sigmoid",
        "aten::tanh",
        "aten::exp",
        "aten::rsqrt",
        "aten::abs",
        "aten::add.Scalar",
        "aten::sub.Scalar",
        "aten::div.Scalar",
        "aten::embedding",
        "aten::cat",
        "aten::arange.start_step",
        "aten::sum.dim_IntList",
        "aten::mean.dim",
        "aten::_log_softmax",
        "aten::_native_batch_norm_legit_no_training",
        "aten::avg_pool2d",
        "aten::_adaptive_avg_pool2d",
        "aten::neg",
        "aten::sqrt",
        "aten::log",
        "aten::maximum",
        "aten::minimum",
        "aten::full",
        "aten::scalar_tensor",
        "aten::_to_copy",
        "aten::bitwise_not",
        "aten::eq.Tensor",
        "aten::ne.Scalar",
        "aten::ne.Tensor",
        "aten::gt.Scalar",
        "aten::gt.Tensor",
        "aten::ge.Scalar",
        "aten::ge.Tensor",
        "aten::lt.Scalar",
        "aten::lt.Tensor",
        "aten::le.Scalar",
        "aten::le.Tensor",
        "aten::logical_and",
        "aten::logical_or",
        "aten::constant_pad_nd",
        "aten::repeat",
        "aten::index.Tensor",
        "aten::sum",
        "aten::mean",
        "aten::amax",
        "aten::argmax",
        "aten::native_group_norm",
        "aten::upsample_nearest2d.vec",
        "aten::upsample_bilinear2d.vec",
        "aten::bitwise_and.Tensor",
        "aten::bitwise_or.Tensor",
        "aten::bitwise_xor.Tensor",
    }
)

SUPPORTED_OPS: frozenset[str] = VIEW_OPS | COMPUTE_OPS

# Compute ops whose kernels write their output in any dense layout (a permutation of the
# contiguous strides): the exporter plans these outputs in the layout torch's tracing gave them,
# which later views may depend on. Every other kernel writes contiguous outputs.
ANY_LAYOUT_OPS: frozenset[str] = frozenset(
    {
        "aten::relu",
        "aten::gelu",
        "aten::add.Tensor",
        "aten::sub.Tensor",
        "aten::div.Tensor",
        "aten::mul.Tensor",
        "aten::mul.Scalar",
        "aten::clone",
        "aten::eq.Scalar",
        "aten::logical_not",
        "aten::full_like",
        "aten::where.self",
        "aten::scaled_dot_product_attention",
        "aten::clamp",
        "aten::hardtanh",
        "aten::leaky_relu",
        "aten::pow.Tensor_Scalar",
        "aten::sigmoid",
        "aten::tanh",
        "aten::exp",
        "aten::rsqrt",
        "aten::abs",
        "aten::add.Scalar",
        "aten::sub.Scalar",
        "aten::div.Scalar",
        "aten::neg",
        "aten::sqrt",
        "aten::log",
        "aten::maximum",
        "aten::minimum",
        "aten::full",
        "aten::scalar_tensor",
        "aten::_to_copy",
        "aten::bitwise_not",
        "aten::eq.Tensor",
        "aten::ne.Scalar",
        "aten::ne.Tensor",
        "aten::gt.Scalar",
        "aten::gt.Tensor",
        "aten::ge.Scalar",
        "aten::ge.Tensor",
        "aten::lt.Scalar",
        "aten::lt.Tensor",
        "aten::le.Scalar",
        "aten::le.Tensor",
        "aten::logical_and",
        "aten::logical_or",
        "aten::bitwise_and.Tensor",
        "aten::bitwise_or.Tensor",
        "aten::bitwise_xor.Tensor",
    }
)


def is_view_op(name: str) -> bool:
    return name in VIEW_OPS


def is_supported(name: str) -> bool:
    return name in SUPPORTED_OPS


def writes_any_layout(name: str) -> bool:
    return name in ANY_LAYOUT_OPS
