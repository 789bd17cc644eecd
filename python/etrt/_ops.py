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

# Ops that fill their output with independent random draws (any layout will do).
RANDOM_FILL_OPS: frozenset[str] = frozenset(
    {
        "aten::exponential",
        "aten::rand",
        "aten::rand_like",
        "aten::randint",
        "aten::randint.low",
        "aten::randint_like",
        "aten::randint_like.low_dtype",
        "aten::randn",
        "aten::randn_like",
        "aten::uniform",
    }
)

# Compute ops whose kernels write their output in any dense layout (a permutation of the
# contiguous strides): the exporter plans these outputs in the layout torch's tracing gave them,
# which later views may depend on. Every other kernel writes contiguous outputs.
ANY_LAYOUT_OPS: frozenset[str] = frozenset(
    {
        "aten::_to_copy",
        "aten::abs",
        "aten::acos",
        "aten::acosh",
        "aten::add.Scalar",
        "aten::add.Tensor",
        "aten::asin",
        "aten::asinh",
        "aten::atan",
        "aten::atan2",
        "aten::atanh",
        "aten::bitwise_and.Scalar",
        "aten::bitwise_and.Tensor",
        "aten::bitwise_not",
        "aten::bitwise_or.Scalar",
        "aten::bitwise_or.Tensor",
        "aten::bitwise_xor.Scalar",
        "aten::bitwise_xor.Tensor",
        "aten::cat",
        "aten::ceil",
        "aten::clamp",
        "aten::clamp.Tensor",
        "aten::clone",
        "aten::copy",
        "aten::cos",
        "aten::cosh",
        "aten::div.Scalar",
        "aten::div.Scalar_mode",
        "aten::div.Tensor",
        "aten::div.Tensor_mode",
        "aten::elu",
        "aten::empty.memory_format",
        "aten::empty_permuted",
        "aten::empty_strided",
        "aten::eq.Scalar",
        "aten::eq.Tensor",
        "aten::erf",
        "aten::exp",
        "aten::expm1",
        "aten::fill.Scalar",
        "aten::floor",
        "aten::fmod.Scalar",
        "aten::fmod.Tensor",
        "aten::full",
        "aten::full_like",
        "aten::ge.Scalar",
        "aten::ge.Tensor",
        "aten::gelu",
        "aten::gt.Scalar",
        "aten::gt.Tensor",
        "aten::hardsigmoid",
        "aten::hardswish",
        "aten::hardtanh",
        "aten::isinf",
        "aten::isnan",
        "aten::le.Scalar",
        "aten::le.Tensor",
        "aten::leaky_relu",
        "aten::log",
        "aten::log10",
        "aten::log1p",
        "aten::log2",
        "aten::logical_and",
        "aten::logical_not",
        "aten::logical_or",
        "aten::logical_xor",
        "aten::lt.Scalar",
        "aten::lt.Tensor",
        "aten::maximum",
        "aten::minimum",
        "aten::mul.Scalar",
        "aten::mul.Tensor",
        "aten::ne.Scalar",
        "aten::ne.Tensor",
        "aten::neg",
        "aten::pow.Scalar",
        "aten::pow.Tensor_Scalar",
        "aten::pow.Tensor_Tensor",
        "aten::reciprocal",
        "aten::relu",
        "aten::remainder.Scalar",
        "aten::remainder.Tensor",
        "aten::round",
        "aten::round.decimals",
        "aten::rsqrt",
        "aten::scalar_tensor",
        "aten::scaled_dot_product_attention",
        "aten::sigmoid",
        "aten::sign",
        "aten::silu",
        "aten::sin",
        "aten::sinh",
        "aten::sqrt",
        "aten::sub.Scalar",
        "aten::sub.Tensor",
        "aten::tan",
        "aten::tanh",
        "aten::trunc",
        "aten::where.self",
    }
) | RANDOM_FILL_OPS

# Every other compute op: its kernel writes a contiguous output (aten::convolution and
# aten::max_pool2d[_with_indices] also write channels-last ones, which channels_last.py plans).
COMPUTE_OPS: frozenset[str] = ANY_LAYOUT_OPS | frozenset(
    {
        "aten::_adaptive_avg_pool2d",
        "aten::_adaptive_avg_pool3d",
        "aten::_cdist_forward",
        "aten::_embedding_bag",
        "aten::_embedding_bag_forward_only",
        "aten::_local_scalar_dense",
        "aten::_log_softmax",
        "aten::_native_batch_norm_legit_functional",
        "aten::_native_batch_norm_legit.no_stats",
        "aten::_native_batch_norm_legit_no_training",
        "aten::_pdist_forward",
        "aten::_softmax",
        "aten::addmm",
        "aten::amax",
        "aten::amin",
        "aten::any",
        "aten::any.dim",
        "aten::any.dims",
        "aten::arange.start_step",
        "aten::argmax",
        "aten::argmin",
        "aten::as_strided",
        "aten::avg_pool2d",
        "aten::avg_pool3d",
        "aten::bmm",
        "aten::col2im",
        "aten::constant_pad_nd",
        "aten::convolution",
        "aten::cumsum",
        "aten::histc",
        "aten::diagonal",
        "aten::unfold",
        "aten::embedding",
        "aten::flip",
        "aten::gather",
        "aten::grid_sampler_2d",
        "aten::index.Tensor",
        "aten::index_put",
        "aten::index_select",
        "aten::masked_scatter",
        "aten::max",
        "aten::max.dim",
        "aten::max_pool2d",
        "aten::max_pool2d_with_indices",
        "aten::max_pool3d_with_indices",
        "aten::mean",
        "aten::mean.dim",
        "aten::min",
        "aten::min.dim",
        "aten::mm",
        # transformers' mixture-of-experts experts on CPU (its grouped_mm fallback)
        "transformers::grouped_mm_fallback",
        "aten::native_dropout",
        "aten::native_group_norm",
        "aten::native_layer_norm",
        "aten::prod",
        "aten::prod.dim_int",
        "aten::normal.Tensor_float",
        "aten::normal.float_Tensor",
        "aten::normal.Tensor_Tensor",
        "aten::randperm",
        "aten::reflection_pad1d",
        "aten::reflection_pad2d",
        "aten::reflection_pad3d",
        "aten::repeat",
        "aten::replication_pad2d",
        "aten::replication_pad3d",
        "aten::scatter.reduce",
        "aten::scatter.src",
        "aten::scatter.value_reduce",
        "aten::scatter.value",
        "aten::scatter_add",
        "aten::scatter_reduce.two",
        "aten::select_scatter",
        "aten::slice_scatter",
        "aten::sort",
        "aten::sort.stable",
        "aten::sum",
        "aten::sum.dim_IntList",
        "aten::topk",
        "aten::_upsample_bilinear2d_aa",
        "aten::_upsample_bilinear2d_aa.vec",
        "aten::upsample_bilinear2d.vec",
        "aten::upsample_nearest2d.vec",
        "aten::var.correction",
        "aten::var.dim",
    }
)

# Kernels on symbolic sizes (dynamic shapes): ATen's shape queries and, under etrt_prim::, the
# Python operators torch.export leaves on sizes (symbolic.py maps them).
SYMBOLIC_OPS: frozenset[str] = frozenset(
    {
        "aten::sym_size.int",
        "aten::sym_numel",
        "aten::sym_stride.int",
        "etrt_prim::add",
        "etrt_prim::sub",
        "etrt_prim::mul",
        "etrt_prim::floordiv",
        "etrt_prim::mod",
        "etrt_prim::truediv",
        "etrt_prim::pow",
        "etrt_prim::sym_max",
        "etrt_prim::sym_min",
        "etrt_prim::neg",
        "etrt_prim::sym_float",
        "etrt_prim::sym_int",
        "etrt_prim::ceil",
        "etrt_prim::floor",
        "etrt_prim::sym_not",
        "etrt_prim::eq",
        "etrt_prim::ne",
        "etrt_prim::lt",
        "etrt_prim::le",
        "etrt_prim::gt",
        "etrt_prim::ge",
    }
)

# PT2E's quantize/dequantize ops and the integer kernels quantized.py folds q/dq patterns into.
QUANTIZED_OPS: frozenset[str] = frozenset(
    {
        "quantized_decomposed::quantize_per_tensor",
        "quantized_decomposed::dequantize_per_tensor",
        "quantized_decomposed::quantize_per_channel",
        "quantized_decomposed::dequantize_per_channel",
        "etrt_quant::conv2d",
        "etrt_quant::linear",
        "etrt_quant::add",
        "etrt_quant::lookup",
        "etrt_quant::mul",
        "etrt_quant::mean",
        "etrt_quant::max_pool2d",
        "etrt_quant::avg_pool2d",
        "etrt_quant::weight_only_linear",
        "etrt_quant::weight_only_embedding",
        "etrt_quant::int8_mm",
        "etrt_quant::dynamic_int4_linear",
        "etrt_quant::quantize_rows",
    }
)

# Kernels the exporter folds chains of ATen calls into (fuse_conv.py).
FUSED_OPS: frozenset[str] = frozenset({"etrt_fused::conv2d"})

SUPPORTED_OPS: frozenset[str] = (
    VIEW_OPS | COMPUTE_OPS | SYMBOLIC_OPS | QUANTIZED_OPS | FUSED_OPS
)

# Ops whose kernel may write its output over its first argument (`self`): a state update the
# exporter writes into the state itself when nothing reads the old value afterwards.
IN_PLACE_OPS: frozenset[str] = frozenset(
    {"aten::index_put", "aten::slice_scatter", "aten::select_scatter", "aten::copy"}
)

# Kernels that take their output's size from the plan instead of computing it: their outputs
# must be static.
STATIC_SHAPE_OPS: frozenset[str] = frozenset(
    {
        "aten::avg_pool3d",
        "aten::max_pool3d_with_indices",
        "aten::_adaptive_avg_pool3d",
    }
)

# Ops whose result is a Scalar (Tensor.item()), a value later calls take as an argument.
SCALAR_RESULT_OPS: frozenset[str] = frozenset({"aten::_local_scalar_dense"})

# Kernels that read and write float16 and bfloat16 elements themselves. Every other kernel gets
# such tensors converted to float32 and its float32 results rounded back (upcast.py), which is
# how ATen computes half precision on CPU.
HALF_NATIVE_OPS: frozenset[str] = (
    VIEW_OPS
    | frozenset({"aten::_to_copy", "aten::randperm"})
    | RANDOM_FILL_OPS  # drawn in the output's own precision (rand stays below 1)
    # their scales may be torchao's bfloat16 / float16, widened exactly inside the kernel
    | frozenset(
        {
            "etrt_quant::weight_only_linear",
            "etrt_quant::weight_only_embedding",
            "etrt_quant::dynamic_int4_linear",
        }
    )
)

# Core ATen ops etrt refuses at export, with the reason the error gives.
_TRAINING = "a training (backward) op; etrt runs inference programs"
REFUSED_OPS: dict[str, str] = {
    "aten::_adaptive_avg_pool2d_backward": _TRAINING,
    "aten::avg_pool2d_backward": _TRAINING,
    "aten::convolution_backward": _TRAINING,
    "aten::embedding_dense_backward": _TRAINING,
    "aten::max_pool2d_with_indices_backward": _TRAINING,
    "aten::native_group_norm_backward": _TRAINING,
    "aten::native_layer_norm_backward": _TRAINING,
    "aten::nonzero": "its result's shape depends on the input's values (a data-dependent size, "
    "neither static nor a bounded dimension); etrt plans every tensor's memory at export",
    "aten::sym_storage_offset": "etrt's tensors carry no storage offset (a view points at its "
    "first element)",
    "aten::sym_is_contiguous": "a contiguity query of a symbolic shape; torch.export answers it "
    "while tracing and leaves none in a graph",
    "aten::_int_mm": "etrt runs int8 matrix products only as torchao's dynamic int8 linear "
    "(Int8DynamicActivationInt8WeightConfig: int8 activations times a constant int8 weight, "
    "folded into etrt_quant::int8_mm); this one has no constant int8 weight",
}

# Core ATen ops torch.export never leaves in a graph etrt lowers: run_decompositions() rewrites
# them into ops etrt has kernels for. tests/etrt_python/test_opset.py exports a use of each and
# checks what it becomes.
DECOMPOSED_OPS: dict[str, str] = {
    "aten::_fft_r2c": "rewritten by the exporter on float32 pairs of real and imaginary parts: "
    "products with cosine and sine tables (aten::mm)",
    "aten::_fft_c2r": "rewritten by the exporter on float32 pairs of real and imaginary parts: "
    "products with cosine and sine tables (aten::mm)",
    "aten::atan2.out": "functionalized into aten::atan2",
    "aten::avg_pool1d": "decomposed into aten::avg_pool2d over an unsqueezed view",
    "aten::adaptive_avg_pool1d": "decomposed into aten::_adaptive_avg_pool2d over an unsqueezed "
    "view",
    "aten::resize_": "functionalized into aten::as_strided of a copy",
    "aten::_native_batch_norm_legit": "functionalized into "
    "aten::_native_batch_norm_legit_functional, whose running statistics are outputs",
}


def is_view_op(name: str) -> bool:
    return name in VIEW_OPS


def is_supported(name: str) -> bool:
    return name in SUPPORTED_OPS


def writes_any_layout(name: str) -> bool:
    return name in ANY_LAYOUT_OPS


# Ops whose kernels compute float32 only (convolutions, pooling, normalisation, attention,
# resampling): an input of another dtype is refused at export.
FLOAT_ONLY_OPS: frozenset[str] = frozenset(
    {
        "aten::_adaptive_avg_pool2d",
        "aten::_adaptive_avg_pool3d",
        "aten::_cdist_forward",
        "aten::_embedding_bag",
        "aten::_embedding_bag_forward_only",
        "aten::_log_softmax",
        "aten::_native_batch_norm_legit_functional",
        "aten::_native_batch_norm_legit.no_stats",
        "aten::_native_batch_norm_legit_no_training",
        "aten::_pdist_forward",
        "aten::_softmax",
        "aten::avg_pool2d",
        "aten::avg_pool3d",
        "aten::col2im",
        "aten::convolution",
        "aten::grid_sampler_2d",
        "aten::histc",
        "aten::max_pool2d",
        "aten::max_pool2d_with_indices",
        "aten::max_pool3d_with_indices",
        "aten::native_group_norm",
        "aten::native_layer_norm",
        "aten::scaled_dot_product_attention",
        "aten::_upsample_bilinear2d_aa",
        "aten::_upsample_bilinear2d_aa.vec",
        "aten::upsample_bilinear2d.vec",
        "aten::upsample_nearest2d.vec",
        "etrt_fused::conv2d",
        "transformers::grouped_mm_fallback",
    }
)


def decomposition(name: str) -> str | None:
    """What torch.export rewrites op `name` into, or None when it keeps it."""
    return DECOMPOSED_OPS.get(name)


# The tensor dtypes etrt programs hold, by torch's names.
FLOAT_DTYPES = ("float32", "float16", "bfloat16")
INTEGER_DTYPES = ("int64", "int32", "int8", "uint8", "bool")
ALL_DTYPES = FLOAT_DTYPES + INTEGER_DTYPES

# Ops torch defines for floating-point tensors only (torch itself raises for an integer input),
# and the random ops that draw floats.
_FLOAT_DOMAIN_OPS = frozenset(
    {
        "aten::elu",
        "aten::exponential",
        "aten::gelu",
        "aten::leaky_relu",
        "aten::normal.Tensor_Tensor",
        "aten::normal.Tensor_float",
        "aten::normal.float_Tensor",
        "aten::rand",
        "aten::rand_like",
        "aten::randn",
        "aten::randn_like",
        "aten::round.decimals",
        "aten::uniform",
        "aten::var.correction",
        "aten::var.dim",
    }
)
# Bitwise ops: integer and Bool tensors, as in torch.
_INTEGER_DOMAIN_OPS = frozenset(
    {
        "aten::bitwise_and.Scalar",
        "aten::bitwise_and.Tensor",
        "aten::bitwise_not",
        "aten::bitwise_or.Scalar",
        "aten::bitwise_or.Tensor",
        "aten::bitwise_xor.Scalar",
        "aten::bitwise_xor.Tensor",
    }
)


# The quantized ops' input dtypes: float32 in, int8/uint8/int32 out, and back.
_QUANTIZED_DTYPES: dict[str, tuple[str, ...]] = {
    "quantized_decomposed::quantize_per_tensor": ("float32",),
    "quantized_decomposed::quantize_per_channel": ("float32",),
    "quantized_decomposed::dequantize_per_tensor": ("int32", "int8", "uint8"),
    "quantized_decomposed::dequantize_per_channel": ("int32", "int8", "uint8"),
    "etrt_quant::conv2d": ("int8",),
    "etrt_quant::linear": ("int8",),
    "etrt_quant::add": ("int8",),
    "etrt_quant::lookup": ("int8",),
    "etrt_quant::mul": ("int8",),
    "etrt_quant::mean": ("int8",),
    "etrt_quant::max_pool2d": ("int8",),
    "etrt_quant::avg_pool2d": ("int8",),
    "etrt_quant::weight_only_linear": ("float32",),
    "etrt_quant::weight_only_embedding": ("int8", "uint8"),
    "etrt_quant::int8_mm": ("int8",),
    "etrt_quant::dynamic_int4_linear": ("int8",),
    "etrt_quant::quantize_rows": ("float32",),
}


def kernel_dtypes(name: str) -> tuple[str, ...]:
    """The dtypes op `name` runs for (float16 and bfloat16 through float32, upcast.py unless
    HALF_NATIVE_OPS); the exporter refuses float-only kernels' other dtypes.
    tests/etrt_python/test_opinfo.py checks each claim against torch's samples."""
    if name in _QUANTIZED_DTYPES:
        return _QUANTIZED_DTYPES[name]
    if name in FLOAT_ONLY_OPS or name in _FLOAT_DOMAIN_OPS:
        return FLOAT_DTYPES
    if name in _INTEGER_DOMAIN_OPS:
        return INTEGER_DTYPES
    return ALL_DTYPES


def refusal(name: str) -> str | None:
    """Why etrt refuses op `name` at export, or None when it does not."""
    if name.startswith("quantized_decomposed::") and name not in QUANTIZED_OPS:
        return (
            "a quantization scheme etrt does not run (dynamic, per-token or group-wise "
            "quantization); etrt runs PT2E static int8: per-tensor quantize/dequantize with "
            "constant scales, per-channel weights"
        )
    return REFUSED_OPS.get(name)
