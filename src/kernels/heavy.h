// Compute-heavy CPU kernels: matrix products, convolution, max pooling, attention.
#pragma once

#include "etrt/runtime/kernel.h"
#include "etrt/runtime/span.h"
#include "etrt/runtime/value.h"

namespace etrt {
namespace kernels {

// aten::addmm: self, mat1, mat2, beta, alpha | out
void op_addmm(KernelContext& ctx, Span<Value*> args);
// aten::mm: self, mat2 | out
void op_mm(KernelContext& ctx, Span<Value*> args);
void op_grouped_mm_fallback(KernelContext& ctx, Span<Value*> args);
// aten::bmm: self, mat2 | out
void op_bmm(KernelContext& ctx, Span<Value*> args);
// aten::convolution: input, weight, bias?, stride[], padding[], dilation[], transposed,
// output_padding[], groups | out
void op_convolution(KernelContext& ctx, Span<Value*> args);
void op_fused_conv2d(KernelContext& ctx, Span<Value*> args);
// aten::max_pool2d_with_indices: self, kernel_size[], stride[], padding[], dilation[],
// ceil_mode | out, indices
void op_max_pool2d_with_indices(KernelContext& ctx, Span<Value*> args);
// aten::max_pool2d: the same arguments | out (the values only)
void op_max_pool2d(KernelContext& ctx, Span<Value*> args);
// aten::avg_pool2d: self, kernel_size[], stride[], padding[], ceil_mode, count_include_pad,
// divisor_override? | out
void op_avg_pool2d(KernelContext& ctx, Span<Value*> args);
// aten::_adaptive_avg_pool2d: self, output_size[] | out
void op_adaptive_avg_pool2d(KernelContext& ctx, Span<Value*> args);
// aten::scaled_dot_product_attention: query, key, value, attn_mask?, dropout_p, is_causal,
// scale?, enable_gqa | out
void op_scaled_dot_product_attention(KernelContext& ctx, Span<Value*> args);

// input, output_size?, scale_factors? | out
void op_upsample_nearest2d(KernelContext& ctx, Span<Value*> args);
// input, output_size?, align_corners, scale_factors? | out
void op_upsample_bilinear2d(KernelContext& ctx, Span<Value*> args);
void op_upsample_bilinear2d_aa(KernelContext& ctx, Span<Value*> args);
void op_upsample_bilinear2d_aa_vec(KernelContext& ctx, Span<Value*> args);

// quantized.cpp: PT2E's quantize/dequantize and the integer kernels of folded q/dq patterns
void op_quantize_per_tensor(KernelContext& ctx, Span<Value*> args);
void op_dequantize_per_tensor(KernelContext& ctx, Span<Value*> args);
void op_quantize_per_channel(KernelContext& ctx, Span<Value*> args);
void op_dequantize_per_channel(KernelContext& ctx, Span<Value*> args);
void op_quantized_conv2d(KernelContext& ctx, Span<Value*> args);
void op_quantized_linear(KernelContext& ctx, Span<Value*> args);
void op_quantized_add(KernelContext& ctx, Span<Value*> args);
// quantized_ops.cpp: the integer kernels of the patterns between the products
void op_quantized_lookup(KernelContext& ctx, Span<Value*> args);
void op_quantized_mul(KernelContext& ctx, Span<Value*> args);
void op_quantized_mean(KernelContext& ctx, Span<Value*> args);
void op_quantized_max_pool2d(KernelContext& ctx, Span<Value*> args);
void op_quantized_avg_pool2d(KernelContext& ctx, Span<Value*> args);
// quantized.cpp: a program's quantization parameters, checked before any kernel divides by or
// converts with them. A scale is positive and finite, and so is its float32 reciprocal; an int8
// zero point lies in [-128, 127]. Each fails naming the op and the argument.
bool quant_scale_arg(KernelContext& ctx, const char* op, const char* name, double scale);
bool int8_qparams(KernelContext& ctx, const char* op, const char* scale_name, double scale, const char* zp_name,
                  int64_t zp);
// quantized.cpp: whether the int8 kernels take the AVX-512 VNNI path (the CPU has it, neither
// ETRT_INT8_ISA=portable nor an instruction-set cap below avx512 is in force).
bool int8_vnni_enabled();
// Whether ETRT_INT8_ISA=portable keeps the int8 kernels off their hand-written instruction-set paths.
bool int8_portable_only();
// weight_only.cpp: float activations times int8 / int4 weights (torchao's weight-only schemes)
void op_weight_only_linear(KernelContext& ctx, Span<Value*> args);
void op_weight_only_embedding(KernelContext& ctx, Span<Value*> args);
// int8 activations (torchao 8da4w, quantized per row at run time) x group-wise int4 weights
void op_dynamic_int4_linear(KernelContext& ctx, Span<Value*> args);
void op_quantize_rows(KernelContext& ctx, Span<Value*> args);
// weight_only_int8.cpp: int8 x int8 -> int32 (torchao's dynamic int8 activations)
void op_int8_mm(KernelContext& ctx, Span<Value*> args);

}  // namespace kernels
}  // namespace etrt
