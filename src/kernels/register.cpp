// The only place that knows every kernel of libetrt_kernels_optimized.so: registers them with
// the runtime from a static initializer when the library loads.
#include "etrt/kernels/optimized.h"
#include "etrt/runtime/log.h"
#include "heavy.h"
#include "light.h"

#include <utility>

namespace etrt {
namespace kernels {
namespace {

const Kernel kKernels[] = {
    // heavy.h
    {"aten::addmm", op_addmm},
    {"aten::mm", op_mm},
    {"aten::bmm", op_bmm},
    {"aten::convolution", op_convolution},
    {"aten::max_pool2d_with_indices", op_max_pool2d_with_indices},
    {"aten::avg_pool2d", op_avg_pool2d},
    {"aten::_adaptive_avg_pool2d", op_adaptive_avg_pool2d},
    {"aten::scaled_dot_product_attention", op_scaled_dot_product_attention},
    // elementwise
    {"aten::relu", op_relu},
    {"aten::gelu", op_gelu},
    {"aten::add.Tensor", op_add_tensor},
    {"aten::sub.Tensor", op_sub_tensor},
    {"aten::mul.Tensor", op_mul_tensor},
    {"aten::div.Tensor", op_div_tensor},
    {"aten::mul.Scalar", op_mul_scalar},
    {"aten::eq.Scalar", op_eq_scalar},
    {"aten::logical_not", op_logical_not},
    {"aten::where.self", op_where_self},
    {"aten::full_like", op_full_like},
    {"aten::clone", op_clone},
    {"aten::clamp", op_clamp},
    {"aten::hardtanh", op_hardtanh},
    {"aten::leaky_relu", op_leaky_relu},
    {"aten::pow.Tensor_Scalar", op_pow_tensor_scalar},
    {"aten::sigmoid", op_sigmoid},
    {"aten::tanh", op_tanh},
    {"aten::exp", op_exp},
    {"aten::rsqrt", op_rsqrt},
    {"aten::abs", op_abs},
    {"aten::add.Scalar", op_add_scalar},
    {"aten::sub.Scalar", op_sub_scalar},
    {"aten::div.Scalar", op_div_scalar},
    {"aten::neg", op_neg},
    {"aten::sqrt", op_sqrt},
    {"aten::log", op_log},
    {"aten::maximum", op_maximum},
    {"aten::minimum", op_minimum},
    {"aten::full", op_full},
    {"aten::scalar_tensor", op_scalar_tensor},
    {"aten::_to_copy", op_to_copy},
    {"aten::bitwise_not", op_bitwise_not},
    {"aten::eq.Tensor", op_eq_tensor},
    {"aten::ne.Scalar", op_ne_scalar},
    {"aten::ne.Tensor", op_ne_tensor},
    {"aten::gt.Scalar", op_gt_scalar},
    {"aten::gt.Tensor", op_gt_tensor},
    {"aten::ge.Scalar", op_ge_scalar},
    {"aten::ge.Tensor", op_ge_tensor},
    {"aten::lt.Scalar", op_lt_scalar},
    {"aten::lt.Tensor", op_lt_tensor},
    {"aten::le.Scalar", op_le_scalar},
    {"aten::le.Tensor", op_le_tensor},
    {"aten::logical_and", op_logical_and},
    {"aten::logical_or", op_logical_or},
    {"aten::bitwise_and.Tensor", op_bitwise_and},
    {"aten::bitwise_or.Tensor", op_bitwise_or},
    {"aten::bitwise_xor.Tensor", op_bitwise_xor},
    // assembled from others
    {"aten::embedding", op_embedding},
    {"aten::cat", op_cat},
    {"aten::arange.start_step", op_arange_start_step},
    // row-wise
    {"aten::_softmax", op_softmax},
    {"aten::native_layer_norm", op_native_layer_norm},
    {"aten::any.dim", op_any_dim},
    {"aten::sum.dim_IntList", op_sum_dim},
    {"aten::mean.dim", op_mean_dim},
    {"aten::_log_softmax", op_log_softmax},
    {"aten::_native_batch_norm_legit_no_training", op_batch_norm_no_training},
    {"aten::constant_pad_nd", op_constant_pad_nd},
    {"aten::repeat", op_repeat},
    {"aten::index.Tensor", op_index_tensor},
    {"aten::sum", op_sum},
    {"aten::mean", op_mean},
    {"aten::amax", op_amax},
    {"aten::argmax", op_argmax},
    {"aten::native_group_norm", op_native_group_norm},
    {"aten::upsample_nearest2d.vec", op_upsample_nearest2d},
    {"aten::upsample_bilinear2d.vec", op_upsample_bilinear2d},
    // views
    {"aten::view", op_view},
    {"aten::_unsafe_view", op_unsafe_view},
    {"aten::permute", op_permute},
    {"aten::expand", op_expand},
    {"aten::alias", op_alias},
    {"aten::select.int", op_select_int},
    {"aten::squeeze.dims", op_squeeze_dims},
    {"aten::squeeze.dim", op_squeeze_dim},
    {"aten::unsqueeze", op_unsqueeze},
    {"aten::split_with_sizes", op_split_with_sizes},
    {"aten::t", op_t},
    {"aten::transpose.int", op_transpose_int},
    {"aten::slice.Tensor", op_slice_tensor},
    // generic.cpp
    {"aten::acos", op_acos},
    {"aten::acosh", op_acosh},
    {"aten::asin", op_asin},
    {"aten::asinh", op_asinh},
    {"aten::atan", op_atan},
    {"aten::atanh", op_atanh},
    {"aten::cos", op_cos},
    {"aten::cosh", op_cosh},
    {"aten::sin", op_sin},
    {"aten::sinh", op_sinh},
    {"aten::tan", op_tan},
    {"aten::erf", op_erf},
    {"aten::expm1", op_expm1},
    {"aten::log10", op_log10},
    {"aten::log1p", op_log1p},
    {"aten::log2", op_log2},
    {"aten::reciprocal", op_reciprocal},
    {"aten::ceil", op_ceil},
    {"aten::floor", op_floor},
    {"aten::trunc", op_trunc},
    {"aten::round", op_round},
    {"aten::sign", op_sign},
    {"aten::isnan", op_isnan},
    {"aten::isinf", op_isinf},
    {"aten::elu", op_elu},
    {"aten::atan2", op_atan2},
    {"aten::fmod.Tensor", op_fmod_tensor},
    {"aten::fmod.Scalar", op_fmod_scalar},
    {"aten::remainder.Tensor", op_remainder_tensor},
    {"aten::remainder.Scalar", op_remainder_scalar},
    {"aten::pow.Tensor_Tensor", op_pow_tensor_tensor},
    {"aten::pow.Scalar", op_pow_scalar},
    {"aten::bitwise_and.Scalar", op_bitwise_and_scalar},
    {"aten::bitwise_or.Scalar", op_bitwise_or_scalar},
    {"aten::bitwise_xor.Scalar", op_bitwise_xor_scalar},
    {"aten::logical_xor", op_logical_xor},
    {"aten::div.Tensor_mode", op_div_tensor_mode},
    {"aten::div.Scalar_mode", op_div_scalar_mode},
    {"aten::clamp.Tensor", op_clamp_tensor},
    {"aten::amin", op_amin},
    {"aten::any", op_any},
    {"aten::any.dims", op_any_dims},
    {"aten::prod", op_prod},
    {"aten::prod.dim_int", op_prod_dim_int},
    {"aten::var.correction", op_var_correction},
    {"aten::var.dim", op_var_dim},
    {"aten::argmin", op_argmin},
    {"aten::max.dim", op_max_dim},
    {"aten::min.dim", op_min_dim},
    {"aten::cumsum", op_cumsum},
    {"aten::sort", op_sort},
    {"aten::topk", op_topk},
    {"aten::max", op_max},
    {"aten::sort.stable", op_sort_stable},
    {"aten::round.decimals", op_round_decimals},
    {"aten::scatter.reduce", op_scatter_reduce},
    {"aten::scatter.value_reduce", op_scatter_reduce},
    {"aten::empty_permuted", op_empty_permuted},
    {"aten::_embedding_bag_forward_only", op_embedding_bag},
    {"aten::min", op_min},
    // indexing.cpp
    {"aten::gather", op_gather},
    {"aten::scatter.src", op_scatter_src},
    {"aten::scatter.value", op_scatter_value},
    {"aten::scatter_add", op_scatter_add},
    {"aten::scatter_reduce.two", op_scatter_reduce_two},
    {"aten::index_select", op_index_select},
    {"aten::index_put", op_index_put},
    {"aten::select_scatter", op_select_scatter},
    {"aten::slice_scatter", op_slice_scatter},
    {"aten::masked_scatter", op_masked_scatter},
    {"aten::flip", op_flip},
    {"aten::diagonal", op_diagonal},
    {"aten::as_strided", op_as_strided},
    {"aten::copy", op_copy},
    {"aten::fill.Scalar", op_fill_scalar},
    {"aten::empty.memory_format", op_empty_memory_format},
    {"aten::empty_strided", op_empty_strided},
    {"aten::native_dropout", op_native_dropout},
    {"aten::reflection_pad1d", op_reflection_pad1d},
    {"aten::reflection_pad2d", op_reflection_pad2d},
    {"aten::reflection_pad3d", op_reflection_pad3d},
    {"aten::replication_pad2d", op_replication_pad2d},
    {"aten::replication_pad3d", op_replication_pad3d},
    {"aten::avg_pool3d", op_avg_pool3d},
    {"aten::max_pool3d_with_indices", op_max_pool3d_with_indices},
    {"aten::_adaptive_avg_pool3d", op_adaptive_avg_pool3d},
    {"aten::_cdist_forward", op_cdist_forward},
    {"aten::_pdist_forward", op_pdist_forward},
    {"aten::_embedding_bag", op_embedding_bag},
    {"aten::col2im", op_col2im},
    {"aten::grid_sampler_2d", op_grid_sampler_2d},
    {"aten::_native_batch_norm_legit.no_stats", op_batch_norm_no_stats},
};

Error& registration_status() {
  static Error status;
  return status;
}

const bool kRegistered = [] {
  Error err = register_kernels(Span<const Kernel>(kKernels));
  if (!err.ok()) {
    ETRT_LOG(Error, "libetrt_kernels_optimized: %s", err.to_string().c_str());
  }
  registration_status() = std::move(err);
  return registration_status().ok();
}();

}  // namespace

Span<const Kernel> optimized_kernels() noexcept { return Span<const Kernel>(kKernels); }

const Error& optimized_kernels_registration() noexcept { return registration_status(); }

}  // namespace kernels
}  // namespace etrt
