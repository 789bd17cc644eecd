// Elementwise, normalisation, reduction and view kernels. Arguments follow the ATen schema,
// then the outputs (see kernel.h).
#pragma once

#include "etrt/runtime/kernel.h"
#include "etrt/runtime/span.h"
#include "etrt/runtime/value.h"

namespace etrt {
namespace kernels {

// elementwise.cpp
void op_relu(KernelContext& ctx, Span<Value*> args);          // self | out
void op_gelu(KernelContext& ctx, Span<Value*> args);          // self, approximate | out
void op_add_tensor(KernelContext& ctx, Span<Value*> args);    // self, other, alpha | out
void op_sub_tensor(KernelContext& ctx, Span<Value*> args);    // self, other, alpha | out
void op_mul_tensor(KernelContext& ctx, Span<Value*> args);    // self, other | out
void op_div_tensor(KernelContext& ctx, Span<Value*> args);    // self, other | out
void op_mul_scalar(KernelContext& ctx, Span<Value*> args);    // self, other | out
void op_eq_scalar(KernelContext& ctx, Span<Value*> args);     // self, other | out (bool)
void op_logical_not(KernelContext& ctx, Span<Value*> args);   // self | out (bool)
void op_where_self(KernelContext& ctx, Span<Value*> args);    // condition, self, other | out
// self, fill_value, dtype?, layout?, device?, pin_memory?, memory_format? | out
void op_full_like(KernelContext& ctx, Span<Value*> args);
void op_clone(KernelContext& ctx, Span<Value*> args);         // self, memory_format? | out
void op_clamp(KernelContext& ctx, Span<Value*> args);         // self, min?, max? | out
void op_hardtanh(KernelContext& ctx, Span<Value*> args);      // self, min_val, max_val | out
void op_leaky_relu(KernelContext& ctx, Span<Value*> args);    // self, negative_slope | out
void op_pow_tensor_scalar(KernelContext& ctx, Span<Value*> args);  // self, exponent | out
void op_sigmoid(KernelContext& ctx, Span<Value*> args);       // self | out
void op_hardswish(KernelContext& ctx, Span<Value*> args);     // self | out
void op_hardsigmoid(KernelContext& ctx, Span<Value*> args);   // self | out
void op_silu(KernelContext& ctx, Span<Value*> args);          // self | out
void op_tanh(KernelContext& ctx, Span<Value*> args);          // self | out
void op_exp(KernelContext& ctx, Span<Value*> args);           // self | out
void op_rsqrt(KernelContext& ctx, Span<Value*> args);         // self | out
void op_abs(KernelContext& ctx, Span<Value*> args);           // self | out
void op_add_scalar(KernelContext& ctx, Span<Value*> args);    // self, other, alpha | out
void op_sub_scalar(KernelContext& ctx, Span<Value*> args);    // self, other, alpha | out
void op_div_scalar(KernelContext& ctx, Span<Value*> args);    // self, other | out

void op_neg(KernelContext& ctx, Span<Value*> args);  // self | out
void op_sqrt(KernelContext& ctx, Span<Value*> args);  // self | out
void op_log(KernelContext& ctx, Span<Value*> args);  // self | out
void op_maximum(KernelContext& ctx, Span<Value*> args);  // self, other | out
void op_minimum(KernelContext& ctx, Span<Value*> args);  // self, other | out
void op_full(KernelContext& ctx, Span<Value*> args);  // size, fill_value, dtype?, layout?, device?, pin_memory? | out
void op_scalar_tensor(KernelContext& ctx, Span<Value*> args);  // s, dtype?, layout?, device?, pin_memory? | out
void op_to_copy(KernelContext& ctx, Span<Value*> args);  // self, dtype?, layout?, device?, pin_memory?, non_blocking, memory_format? | out
void op_bitwise_not(KernelContext& ctx, Span<Value*> args);  // self | out
void op_eq_tensor(KernelContext& ctx, Span<Value*> args);  // self, other | out (bool)
void op_ne_scalar(KernelContext& ctx, Span<Value*> args);  // self, other | out (bool)
void op_ne_tensor(KernelContext& ctx, Span<Value*> args);  // self, other | out (bool)
void op_gt_scalar(KernelContext& ctx, Span<Value*> args);  // self, other | out (bool)
void op_gt_tensor(KernelContext& ctx, Span<Value*> args);  // self, other | out (bool)
void op_ge_scalar(KernelContext& ctx, Span<Value*> args);  // self, other | out (bool)
void op_ge_tensor(KernelContext& ctx, Span<Value*> args);  // self, other | out (bool)
void op_lt_scalar(KernelContext& ctx, Span<Value*> args);  // self, other | out (bool)
void op_lt_tensor(KernelContext& ctx, Span<Value*> args);  // self, other | out (bool)
void op_le_scalar(KernelContext& ctx, Span<Value*> args);  // self, other | out (bool)
void op_le_tensor(KernelContext& ctx, Span<Value*> args);  // self, other | out (bool)
void op_logical_and(KernelContext& ctx, Span<Value*> args);  // self, other | out (bool)
void op_logical_or(KernelContext& ctx, Span<Value*> args);  // self, other | out (bool)

void op_bitwise_and(KernelContext& ctx, Span<Value*> args);  // self, other | out
void op_bitwise_or(KernelContext& ctx, Span<Value*> args);  // self, other | out
void op_bitwise_xor(KernelContext& ctx, Span<Value*> args);  // self, other | out

// assemble.cpp
// weight, indices, padding_idx, scale_grad_by_freq, sparse | out
void op_embedding(KernelContext& ctx, Span<Value*> args);
void op_cat(KernelContext& ctx, Span<Value*> args);           // tensors, dim | out
// start, end, step, dtype?, layout?, device?, pin_memory? | out
void op_arange_start_step(KernelContext& ctx, Span<Value*> args);

// reduce.cpp
void op_softmax(KernelContext& ctx, Span<Value*> args);       // self, dim, half_to_float | out
// input, normalized_shape, weight?, bias?, eps | out, mean, rstd
void op_native_layer_norm(KernelContext& ctx, Span<Value*> args);
void op_any_dim(KernelContext& ctx, Span<Value*> args);       // self, dim, keepdim | out (bool)
void op_sum_dim(KernelContext& ctx, Span<Value*> args);       // self, dim?, keepdim, dtype? | out
void op_mean_dim(KernelContext& ctx, Span<Value*> args);      // self, dim?, keepdim, dtype? | out
void op_log_softmax(KernelContext& ctx, Span<Value*> args);   // self, dim, half_to_float | out
// input, weight?, bias?, running_mean, running_var, momentum, eps | out, save_mean, save_invstd
void op_batch_norm_no_training(KernelContext& ctx, Span<Value*> args);

// views.cpp: the output Value is pointed at the input's memory.
void op_view(KernelContext& ctx, Span<Value*> args);          // self, size | out
void op_unsafe_view(KernelContext& ctx, Span<Value*> args);   // self, size | out
void op_permute(KernelContext& ctx, Span<Value*> args);       // self, dims | out
void op_expand(KernelContext& ctx, Span<Value*> args);        // self, size, implicit | out
void op_alias(KernelContext& ctx, Span<Value*> args);         // self | out
void op_select_int(KernelContext& ctx, Span<Value*> args);    // self, dim, index | out
void op_squeeze_dims(KernelContext& ctx, Span<Value*> args);  // self, dims | out
void op_squeeze_dim(KernelContext& ctx, Span<Value*> args);   // self, dim | out
void op_unsqueeze(KernelContext& ctx, Span<Value*> args);     // self, dim | out
// self, split_sizes, dim | out (one TensorList value)
void op_split_with_sizes(KernelContext& ctx, Span<Value*> args);
void op_t(KernelContext& ctx, Span<Value*> args);             // self | out
void op_transpose_int(KernelContext& ctx, Span<Value*> args); // self, dim0, dim1 | out
void op_slice_tensor(KernelContext& ctx, Span<Value*> args);  // self, dim, start?, end?, step | out

// self, pad, value | out
void op_constant_pad_nd(KernelContext& ctx, Span<Value*> args);
// self, repeats | out
void op_repeat(KernelContext& ctx, Span<Value*> args);
// self, indices (Tensor?[]) | out
void op_index_tensor(KernelContext& ctx, Span<Value*> args);
// self, dtype? | out
void op_sum(KernelContext& ctx, Span<Value*> args);
// self, dtype? | out
void op_mean(KernelContext& ctx, Span<Value*> args);
// self, dim[], keepdim | out
void op_amax(KernelContext& ctx, Span<Value*> args);
// self, dim?, keepdim | out (Long)
void op_argmax(KernelContext& ctx, Span<Value*> args);
// input, weight?, bias?, N, C, HxW, group, eps | out, mean, rstd
void op_native_group_norm(KernelContext& ctx, Span<Value*> args);

// generic.cpp: every dtype, through double or int64 arithmetic (arguments as in the schema)
void op_acos(KernelContext& ctx, Span<Value*> args);
void op_acosh(KernelContext& ctx, Span<Value*> args);
void op_asin(KernelContext& ctx, Span<Value*> args);
void op_asinh(KernelContext& ctx, Span<Value*> args);
void op_atan(KernelContext& ctx, Span<Value*> args);
void op_atanh(KernelContext& ctx, Span<Value*> args);
void op_cos(KernelContext& ctx, Span<Value*> args);
void op_cosh(KernelContext& ctx, Span<Value*> args);
void op_sin(KernelContext& ctx, Span<Value*> args);
void op_sinh(KernelContext& ctx, Span<Value*> args);
void op_tan(KernelContext& ctx, Span<Value*> args);
void op_erf(KernelContext& ctx, Span<Value*> args);
void op_expm1(KernelContext& ctx, Span<Value*> args);
void op_log10(KernelContext& ctx, Span<Value*> args);
void op_log1p(KernelContext& ctx, Span<Value*> args);
void op_log2(KernelContext& ctx, Span<Value*> args);
void op_reciprocal(KernelContext& ctx, Span<Value*> args);
void op_ceil(KernelContext& ctx, Span<Value*> args);
void op_floor(KernelContext& ctx, Span<Value*> args);
void op_trunc(KernelContext& ctx, Span<Value*> args);
void op_round(KernelContext& ctx, Span<Value*> args);
void op_sign(KernelContext& ctx, Span<Value*> args);
void op_isnan(KernelContext& ctx, Span<Value*> args);
void op_isinf(KernelContext& ctx, Span<Value*> args);
void op_elu(KernelContext& ctx, Span<Value*> args);
void op_atan2(KernelContext& ctx, Span<Value*> args);
void op_fmod_tensor(KernelContext& ctx, Span<Value*> args);
void op_fmod_scalar(KernelContext& ctx, Span<Value*> args);
void op_remainder_tensor(KernelContext& ctx, Span<Value*> args);
void op_remainder_scalar(KernelContext& ctx, Span<Value*> args);
void op_pow_tensor_tensor(KernelContext& ctx, Span<Value*> args);
void op_pow_scalar(KernelContext& ctx, Span<Value*> args);
void op_bitwise_and_scalar(KernelContext& ctx, Span<Value*> args);
void op_bitwise_or_scalar(KernelContext& ctx, Span<Value*> args);
void op_bitwise_xor_scalar(KernelContext& ctx, Span<Value*> args);
void op_logical_xor(KernelContext& ctx, Span<Value*> args);
void op_div_tensor_mode(KernelContext& ctx, Span<Value*> args);
void op_div_scalar_mode(KernelContext& ctx, Span<Value*> args);
void op_clamp_tensor(KernelContext& ctx, Span<Value*> args);
void op_amin(KernelContext& ctx, Span<Value*> args);
void op_any(KernelContext& ctx, Span<Value*> args);
void op_any_dims(KernelContext& ctx, Span<Value*> args);
void op_prod(KernelContext& ctx, Span<Value*> args);
void op_prod_dim_int(KernelContext& ctx, Span<Value*> args);
void op_var_correction(KernelContext& ctx, Span<Value*> args);
void op_var_dim(KernelContext& ctx, Span<Value*> args);
void op_argmin(KernelContext& ctx, Span<Value*> args);
void op_max_dim(KernelContext& ctx, Span<Value*> args);
void op_min_dim(KernelContext& ctx, Span<Value*> args);
void op_cumsum(KernelContext& ctx, Span<Value*> args);
void op_histc(KernelContext& ctx, Span<Value*> args);
void op_sort(KernelContext& ctx, Span<Value*> args);
void op_topk(KernelContext& ctx, Span<Value*> args);
// Non-Float inputs of the float kernels amax, amin, argmax, sum and sum.dim_IntList.
void amax_any(KernelContext& ctx, Span<Value*> args);
void amin_any(KernelContext& ctx, Span<Value*> args);
void argmax_any(KernelContext& ctx, Span<Value*> args);
void sum_any(KernelContext& ctx, Span<Value*> args, const char* op, bool with_dims);
// Integer matrices for mm (kind 0), bmm (1) and addmm (2).
void matmul_any(KernelContext& ctx, Span<Value*> args, const char* op, int kind);
// Overloads outside the core opset that torch's decompositions leave in graphs.
void op_sort_stable(KernelContext& ctx, Span<Value*> args);
void op_round_decimals(KernelContext& ctx, Span<Value*> args);
void op_local_scalar_dense(KernelContext& ctx, Span<Value*> args);  // self | out (a Scalar value)
void op_scatter_reduce(KernelContext& ctx, Span<Value*> args);
void op_empty_permuted(KernelContext& ctx, Span<Value*> args);
void op_max(KernelContext& ctx, Span<Value*> args);  // self | out (the whole tensor)
void op_min(KernelContext& ctx, Span<Value*> args);  // self | out (the whole tensor)

// indexing.cpp: indexing, scatter/gather, copies, fills and less common layers
void op_gather(KernelContext& ctx, Span<Value*> args);
void op_scatter_src(KernelContext& ctx, Span<Value*> args);
void op_scatter_value(KernelContext& ctx, Span<Value*> args);
void op_scatter_add(KernelContext& ctx, Span<Value*> args);
void op_scatter_reduce_two(KernelContext& ctx, Span<Value*> args);
void op_index_select(KernelContext& ctx, Span<Value*> args);
void op_index_put(KernelContext& ctx, Span<Value*> args);
void op_select_scatter(KernelContext& ctx, Span<Value*> args);
void op_slice_scatter(KernelContext& ctx, Span<Value*> args);
void op_masked_scatter(KernelContext& ctx, Span<Value*> args);
void op_flip(KernelContext& ctx, Span<Value*> args);
void op_diagonal(KernelContext& ctx, Span<Value*> args);
void op_unfold(KernelContext& ctx, Span<Value*> args);
void op_as_strided(KernelContext& ctx, Span<Value*> args);
void op_copy(KernelContext& ctx, Span<Value*> args);
void op_fill_scalar(KernelContext& ctx, Span<Value*> args);
void op_empty_memory_format(KernelContext& ctx, Span<Value*> args);
void op_empty_strided(KernelContext& ctx, Span<Value*> args);
void op_native_dropout(KernelContext& ctx, Span<Value*> args);
void op_reflection_pad1d(KernelContext& ctx, Span<Value*> args);
void op_reflection_pad2d(KernelContext& ctx, Span<Value*> args);
void op_reflection_pad3d(KernelContext& ctx, Span<Value*> args);
void op_replication_pad2d(KernelContext& ctx, Span<Value*> args);
void op_replication_pad3d(KernelContext& ctx, Span<Value*> args);
void op_avg_pool3d(KernelContext& ctx, Span<Value*> args);
void op_max_pool3d_with_indices(KernelContext& ctx, Span<Value*> args);
void op_adaptive_avg_pool3d(KernelContext& ctx, Span<Value*> args);
void op_cdist_forward(KernelContext& ctx, Span<Value*> args);
void op_pdist_forward(KernelContext& ctx, Span<Value*> args);
void op_embedding_bag(KernelContext& ctx, Span<Value*> args);
void op_col2im(KernelContext& ctx, Span<Value*> args);
void op_grid_sampler_2d(KernelContext& ctx, Span<Value*> args);
void op_batch_norm_no_stats(KernelContext& ctx, Span<Value*> args);
void op_batch_norm_functional(KernelContext& ctx, Span<Value*> args);

// random.cpp: draws from the runtime's random stream (etrt/runtime/random.h)
void op_rand(KernelContext& ctx, Span<Value*> args);        // size, dtype?, layout?, device?, pin_memory? | out
void op_randn(KernelContext& ctx, Span<Value*> args);       // as rand
void op_rand_like(KernelContext& ctx, Span<Value*> args);   // self, dtype?, layout?, device?, pin?, format? | out
void op_randn_like(KernelContext& ctx, Span<Value*> args);  // as rand_like
void op_uniform(KernelContext& ctx, Span<Value*> args);     // self, from, to, generator? | out
void op_exponential(KernelContext& ctx, Span<Value*> args); // self, lambd, generator? | out
void op_normal_tensor_float(KernelContext& ctx, Span<Value*> args);   // mean, std, generator? | out
void op_normal_float_tensor(KernelContext& ctx, Span<Value*> args);   // mean, std, generator? | out
void op_normal_tensor_tensor(KernelContext& ctx, Span<Value*> args);  // mean, std, generator? | out
void op_randint(KernelContext& ctx, Span<Value*> args);     // high, size, dtype?, ... | out
void op_randint_low(KernelContext& ctx, Span<Value*> args); // low, high, size, dtype?, ... | out
void op_randint_like(KernelContext& ctx, Span<Value*> args);            // self, high, dtype?, ... | out
void op_randint_like_low_dtype(KernelContext& ctx, Span<Value*> args);  // self, low, high, dtype?, ... | out
void op_randperm(KernelContext& ctx, Span<Value*> args);    // n, dtype?, layout?, device?, pin_memory? | out

}  // namespace kernels
}  // namespace etrt
