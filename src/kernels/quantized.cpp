// Quantized kernels: PT2E's quantize/dequantize ops (quantized_decomposed::*, the arithmetic of
// torch.ao.quantization.fx._decomposed) and the integer convolution and linear the exporter
// folds dq -> op -> q patterns into (etrt_quant::*): int8 products summed in int32, then the
// requantization of the reference module (y = acc * in_scale * w_scale[c] + bias[c] in float32,
// round half to even of y * (1 / out_scale), plus the zero point, clamped).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "common/checked.h"
#include "heavy.h"
#include "parts.h"
#include "util.h"

namespace etrt {
namespace kernels {
namespace {

std::string dtype_name(ScalarType t) { return to_string(t); }

bool quant_range(KernelContext& ctx, const char* op, Span<Value*> args, size_t i, int64_t* lo,
                 int64_t* hi) {
  return int_arg(ctx, op, args, i, "quant_min", lo) && int_arg(ctx, op, args, i + 1, "quant_max", hi);
}

// The integer dtype the quantized values are stored as (the `dtype` argument).
bool quant_dtype(KernelContext& ctx, const char* op, Span<Value*> args, size_t i, ScalarType* out) {
  int64_t code = 0;
  if (!int_arg(ctx, op, args, i, "dtype", &code)) return false;
  ScalarType st = static_cast<ScalarType>(code);
  if (st != ScalarType::Char && st != ScalarType::Byte && st != ScalarType::Int) {
    fail(ctx, op, "quantized dtype must be int8, uint8 or int32, got " + dtype_name(st));
    return false;
  }
  *out = st;
  return true;
}

// quant_min <= quant_max, both representable in the storage dtype (the values are clamped to
// them, then converted).
bool quant_bounds(KernelContext& ctx, const char* op, int64_t lo, int64_t hi, ScalarType qt) {
  const int64_t min = qt == ScalarType::Char ? -128 : qt == ScalarType::Byte ? 0 : INT32_MIN;
  const int64_t max = qt == ScalarType::Char ? 127 : qt == ScalarType::Byte ? 255 : INT32_MAX;
  if (lo < min || hi > max || lo > hi) {
    const char* dtype = qt == ScalarType::Char ? "int8" : qt == ScalarType::Byte ? "uint8" : "int32";
    fail(ctx, op, "quant range [" + std::to_string(lo) + ", " + std::to_string(hi) + "] is not within " + dtype);
    return false;
  }
  return true;
}

// A clamp bound as float32 that converts back into Q: INT32_MAX rounds up to 2^31 in float32.
inline float float_bound(int64_t v, ScalarType qt) {
  const float f = static_cast<float>(v);
  return qt == ScalarType::Int ? std::min(f, 2147483520.0f) : f;
}

bool contiguous_input(KernelContext& ctx, const char* op, const Tensor& t, const char* name) {
  if (!check_has_data(ctx, op, t, name)) return false;
  if (!t.is_contiguous()) {
    fail(ctx, op, std::string("'") + name + "' must be contiguous");
    return false;
  }
  return true;
}

// A dense tensor in the two layouts the exporter plans for int8 activations: contiguous, or
// channels-last (channels_last.py).
bool dense_input(KernelContext& ctx, const char* op, const Tensor& t, const char* name) {
  if (!check_has_data(ctx, op, t, name)) return false;
  if (!t.is_contiguous() && !channels_last_dense(t)) {
    fail(ctx, op, std::string("'") + name + "' must be contiguous or channels-last");
    return false;
  }
  return true;
}

inline bool same_strides(const Tensor& a, const Tensor& b) {
  if (a.dim() != b.dim()) return false;
  for (int d = 0; d < a.dim(); ++d) {
    if (a.size(d) != 1 && a.stride(d) != b.stride(d)) return false;
  }
  return true;
}

// Elementwise over tensors of one shape: fn(i, j, k) with the flat offsets of element i of
// `a`, `b` and `out`; one flat loop when all three share a dense layout, else by index (any
// strides: a transposed view, e.g. attention heads before a quantize).
template <typename F>
void for_each_element(const Tensor& a, const Tensor& b, const Tensor& out, F&& fn) {
  const int64_t n = out.numel();
  if (same_strides(a, out) && same_strides(b, out) && (out.is_contiguous() || channels_last_dense(out))) {
    fn(int64_t{0}, int64_t{0}, int64_t{0}, n);
    return;
  }
  const int dims = out.dim();
  int64_t index[kMaxDims] = {};
  int64_t ia = 0, ib = 0, io = 0;
  const int last = dims - 1;
  const int64_t inner = dims > 0 ? out.size(last) : 1;
  for (int64_t done = 0; done < n; done += inner) {
    for (int64_t x = 0; x < inner; ++x) {
      fn(ia + x * a.stride(last), ib + x * b.stride(last), io + x * out.stride(last), int64_t{1});
    }
    for (int d = last - 1; d >= 0; --d) {
      ia += a.stride(d), ib += b.stride(d), io += out.stride(d);
      if (++index[d] < out.size(d)) break;
      ia -= a.stride(d) * out.size(d), ib -= b.stride(d) * out.size(d), io -= out.stride(d) * out.size(d);
      index[d] = 0;
    }
  }
}

// torch.round: half to even (the default floating-point rounding mode).
// Round half to even without a libm call: below 2^22 in magnitude, adding and subtracting
// 1.5 * 2^23 rounds in the default mode. Values are first clamped to +-2^22, which changes
// nothing once the result is clamped to the int8 range.
inline float round_even_fast(float v) {
  constexpr float kMagic = 12582912.0f;
  constexpr float kLimit = 4194304.0f;
  v = std::min(std::max(v, -kLimit), kLimit);
  return (v + kMagic) - kMagic;  // not folded: the build does not use -ffast-math
}


template <typename Q>
ETRT_ISA_BODY void store_quantized_body(const float* x, Q* out, int64_t n, float inv_scale, float zp, float lo,
                                        float hi) {
  for (int64_t i = 0; i < n; ++i) {
    float v = round_even_fast(x[i] * inv_scale) + zp;
    out[i] = static_cast<Q>(std::min(std::max(lo, v), hi));  // lo first: a NaN (input) gives lo
  }
}

// One ETRT_ISA_DISPATCH per storage type (the macro takes no template); store_quantized picks
// by overload.
ETRT_ISA_BODY void store_quantized_i8_body(const float* x, int8_t* out, int64_t n, float inv, float zp, float lo,
                                           float hi) {
  store_quantized_body(x, out, n, inv, zp, lo, hi);
}
ETRT_ISA_BODY void store_quantized_u8_body(const float* x, uint8_t* out, int64_t n, float inv, float zp, float lo,
                                           float hi) {
  store_quantized_body(x, out, n, inv, zp, lo, hi);
}
ETRT_ISA_BODY void store_quantized_i32_body(const float* x, int32_t* out, int64_t n, float inv, float zp, float lo,
                                            float hi) {
  store_quantized_body(x, out, n, inv, zp, lo, hi);
}
ETRT_ISA_DISPATCH(void, store_quantized_i8,
                  (const float* x, int8_t* out, int64_t n, float inv, float zp, float lo, float hi),
                  (x, out, n, inv, zp, lo, hi))
ETRT_ISA_DISPATCH(void, store_quantized_u8,
                  (const float* x, uint8_t* out, int64_t n, float inv, float zp, float lo, float hi),
                  (x, out, n, inv, zp, lo, hi))
ETRT_ISA_DISPATCH(void, store_quantized_i32,
                  (const float* x, int32_t* out, int64_t n, float inv, float zp, float lo, float hi),
                  (x, out, n, inv, zp, lo, hi))

inline void store_quantized(const float* x, int8_t* out, int64_t n, float inv, float zp, float lo, float hi) {
  store_quantized_i8(x, out, n, inv, zp, lo, hi);
}
inline void store_quantized(const float* x, uint8_t* out, int64_t n, float inv, float zp, float lo, float hi) {
  store_quantized_u8(x, out, n, inv, zp, lo, hi);
}
inline void store_quantized(const float* x, int32_t* out, int64_t n, float inv, float zp, float lo, float hi) {
  store_quantized_i32(x, out, n, inv, zp, lo, hi);
}

template <typename Q>
void load_dequantized(const Q* q, float* out, int64_t n, float zp, float scale) {
  for (int64_t i = 0; i < n; ++i) out[i] = (static_cast<float>(q[i]) - zp) * scale;
}

// Per-channel: the element's channel along `axis` of a contiguous tensor.
struct ChannelWalk {
  int64_t channels = 1;
  int64_t inner = 1;  // elements per step of the axis
};

bool channel_walk(KernelContext& ctx, const char* op, const Tensor& t, int64_t axis, const Tensor& scales,
                  ChannelWalk* walk) {
  if (axis < 0) axis += t.dim();
  if (axis < 0 || axis >= t.dim()) {
    fail(ctx, op, "axis " + std::to_string(axis) + " is out of range for a " + std::to_string(t.dim()) +
                      "-D input");
    return false;
  }
  walk->channels = t.size(static_cast<int>(axis));
  walk->inner = 1;
  for (int d = static_cast<int>(axis) + 1; d < t.dim(); ++d) walk->inner *= t.size(d);
  if (scales.numel() != walk->channels || scales.dtype() != ScalarType::Float) {
    fail(ctx, op, "scales must be float32 with one value per channel (" + std::to_string(walk->channels) + ")");
    return false;
  }
  return true;
}

bool zero_points_arg(KernelContext& ctx, const char* op, const Tensor* zps, int64_t channels) {
  if (zps == nullptr) return true;
  if (zps->numel() != channels || (zps->dtype() != ScalarType::Long && zps->dtype() != ScalarType::Int)) {
    fail(ctx, op, "zero_points must be int64 or int32 with one value per channel");
    return false;
  }
  return contiguous_input(ctx, op, *zps, "zero_points");
}

inline int64_t zero_point_at(const Tensor* zps, int64_t c) {
  if (zps == nullptr) return 0;
  return zps->dtype() == ScalarType::Long ? zps->data_as<int64_t>()[c] : zps->data_as<int32_t>()[c];
}

// The arguments quantize_per_channel and dequantize_per_channel share: input, scales,
// zero_points?, axis, quant_min, quant_max, dtype.
struct ChannelArgs {
  Tensor* x = nullptr;
  Tensor* scales = nullptr;
  Tensor* zps = nullptr;
  int64_t axis = 0, lo = 0, hi = 0;
  ScalarType qt{};
  ChannelWalk walk;
};

bool channel_args(KernelContext& ctx, const char* op, Span<Value*> args, ChannelArgs* a) {
  a->x = tensor_arg(ctx, op, args, 0, "input");
  a->scales = tensor_arg(ctx, op, args, 1, "scales");
  return a->x != nullptr && a->scales != nullptr && optional_tensor_arg(ctx, op, args, 2, "zero_points", &a->zps) &&
         int_arg(ctx, op, args, 3, "axis", &a->axis) && quant_range(ctx, op, args, 4, &a->lo, &a->hi) &&
         quant_dtype(ctx, op, args, 6, &a->qt) && quant_bounds(ctx, op, a->lo, a->hi, a->qt) &&
         contiguous_input(ctx, op, *a->x, "input") &&
         contiguous_input(ctx, op, *a->scales, "scales") && channel_walk(ctx, op, *a->x, a->axis, *a->scales, &a->walk) &&
         zero_points_arg(ctx, op, a->zps, a->walk.channels);
}

// The arguments quantize_per_tensor and dequantize_per_tensor share: input, scale,
// zero_point, quant_min, quant_max, dtype.
struct TensorQArgs {
  Tensor* x = nullptr;
  double scale = 0;
  int64_t zp = 0, lo = 0, hi = 0;
  ScalarType qt{};
};

bool tensor_qargs(KernelContext& ctx, const char* op, Span<Value*> args, TensorQArgs* a) {
  a->x = tensor_arg(ctx, op, args, 0, "input");
  return a->x != nullptr && scalar_arg(ctx, op, args, 1, "scale", &a->scale) &&
         int_arg(ctx, op, args, 2, "zero_point", &a->zp) && quant_range(ctx, op, args, 3, &a->lo, &a->hi) &&
         quant_dtype(ctx, op, args, 5, &a->qt) && quant_bounds(ctx, op, a->lo, a->hi, a->qt) &&
         quant_scale_arg(ctx, op, "scale", a->scale) && check_has_data(ctx, op, *a->x, "input");
}

template <typename F>
bool dispatch_quantized(ScalarType st, F&& f) {
  switch (st) {
    case ScalarType::Char: f(int8_t{}); return true;
    case ScalarType::Byte: f(uint8_t{}); return true;
    case ScalarType::Int: f(int32_t{}); return true;
    default: return false;
  }
}

}  // namespace

bool quant_scale_arg(KernelContext& ctx, const char* op, const char* name, double scale) {
  constexpr double kFloatMax = 3.4028234663852886e38;
  if (scale > 0 && scale <= kFloatMax && 1.0 / scale <= kFloatMax && static_cast<float>(scale) > 0) return true;
  char text[32];
  std::snprintf(text, sizeof text, "%g", scale);
  fail(ctx, op, std::string("'") + name + "' must be a positive, finite scale, got " + text);
  return false;
}

bool int8_qparams(KernelContext& ctx, const char* op, const char* scale_name, double scale, const char* zp_name,
                  int64_t zp) {
  if (!quant_scale_arg(ctx, op, scale_name, scale)) return false;
  if (zp < -128 || zp > 127) {
    fail(ctx, op, std::string("'") + zp_name + "' must be within [-128, 127], got " + std::to_string(zp));
    return false;
  }
  return true;
}

// input, scale, zero_point, quant_min, quant_max, dtype | out
void op_quantize_per_tensor(KernelContext& ctx, Span<Value*> args) {
  const char* op = "quantized_decomposed::quantize_per_tensor";
  if (!check_nargs(ctx, op, args, 7)) return;
  TensorQArgs a;
  if (!tensor_qargs(ctx, op, args, &a)) return;
  Tensor* x = a.x;
  const double scale = a.scale;
  const int64_t zp = a.zp, lo = a.lo, hi = a.hi;
  const ScalarType qt = a.qt;
  if (x->dtype() != ScalarType::Float) return fail(ctx, op, "input must be float32, got " + dtype_name(x->dtype()));
  Tensor* out = strided_output_arg(ctx, op, args, 6, qt, x->sizes());
  if (out == nullptr) return;
  const float inv = static_cast<float>(1.0 / scale);
  dispatch_quantized(qt, [&](auto tag) {
    using Q = decltype(tag);
    const float* xd = x->data_as<float>();
    Q* od = out->data_as<Q>();
    for_each_element(*x, *x, *out, [&](int64_t i, int64_t, int64_t k, int64_t count) {
      store_quantized(xd + i, od + k, count, inv, static_cast<float>(zp), static_cast<float>(lo),
                      float_bound(hi, qt));
    });
  });
}

// input, scale, zero_point, quant_min, quant_max, dtype, out_dtype? | out
void op_dequantize_per_tensor(KernelContext& ctx, Span<Value*> args) {
  const char* op = "quantized_decomposed::dequantize_per_tensor";
  if (!check_nargs(ctx, op, args, 8)) return;
  TensorQArgs a;
  if (!tensor_qargs(ctx, op, args, &a)) return;
  Tensor* x = a.x;
  const double scale = a.scale;
  const int64_t zp = a.zp;
  const ScalarType qt = a.qt;
  if (x->dtype() != qt) return fail(ctx, op, "input must be " + dtype_name(qt) + ", got " + dtype_name(x->dtype()));
  Tensor* out = strided_output_arg(ctx, op, args, 7, ScalarType::Float, x->sizes());
  if (out == nullptr) return;
  dispatch_quantized(qt, [&](auto tag) {
    using Q = decltype(tag);
    const Q* xd = x->data_as<Q>();
    float* od = out->data_as<float>();
    for_each_element(*x, *x, *out, [&](int64_t i, int64_t, int64_t k, int64_t count) {
      load_dequantized(xd + i, od + k, count, static_cast<float>(zp), static_cast<float>(scale));
    });
  });
}

// input, scales, zero_points?, axis, quant_min, quant_max, dtype | out
void op_quantize_per_channel(KernelContext& ctx, Span<Value*> args) {
  const char* op = "quantized_decomposed::quantize_per_channel";
  if (!check_nargs(ctx, op, args, 8)) return;
  ChannelArgs a;
  if (!channel_args(ctx, op, args, &a)) return;
  Tensor *x = a.x, *scales = a.scales, *zps = a.zps;
  const int64_t lo = a.lo, hi = a.hi;
  const ScalarType qt = a.qt;
  const ChannelWalk walk = a.walk;
  if (x->dtype() != ScalarType::Float) return fail(ctx, op, "input must be float32, got " + dtype_name(x->dtype()));
  Tensor* out = output_arg(ctx, op, args, 7, qt, x->sizes());
  if (out == nullptr) return;
  const int64_t outer = walk.channels * walk.inner == 0 ? 0 : x->numel() / (walk.channels * walk.inner);
  dispatch_quantized(qt, [&](auto tag) {
    using Q = decltype(tag);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t c = 0; c < walk.channels; ++c) {
        const int64_t at = (o * walk.channels + c) * walk.inner;
        // 1.0 / scales is a float32 tensor division in the reference.
        const float inv = 1.0f / scales->data_as<float>()[c];
        store_quantized(x->data_as<float>() + at, out->data_as<Q>() + at, walk.inner, inv,
                        static_cast<float>(zero_point_at(zps, c)), static_cast<float>(lo), float_bound(hi, qt));
      }
    }
  });
}

// input, scales, zero_points?, axis, quant_min, quant_max, dtype, out_dtype? | out
void op_dequantize_per_channel(KernelContext& ctx, Span<Value*> args) {
  const char* op = "quantized_decomposed::dequantize_per_channel";
  if (!check_nargs(ctx, op, args, 9)) return;
  ChannelArgs a;
  if (!channel_args(ctx, op, args, &a)) return;
  Tensor *x = a.x, *scales = a.scales, *zps = a.zps;
  const ScalarType qt = a.qt;
  const ChannelWalk walk = a.walk;
  if (x->dtype() != qt) return fail(ctx, op, "input must be " + dtype_name(qt) + ", got " + dtype_name(x->dtype()));
  Tensor* out = output_arg(ctx, op, args, 8, ScalarType::Float, x->sizes());
  if (out == nullptr) return;
  const int64_t outer = walk.channels * walk.inner == 0 ? 0 : x->numel() / (walk.channels * walk.inner);
  dispatch_quantized(qt, [&](auto tag) {
    using Q = decltype(tag);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t c = 0; c < walk.channels; ++c) {
        const int64_t at = (o * walk.channels + c) * walk.inner;
        load_dequantized(x->data_as<Q>() + at, out->data_as<float>() + at, walk.inner,
                         static_cast<float>(zero_point_at(zps, c)), scales->data_as<float>()[c]);
      }
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Integer convolution and linear

namespace {

// sum_k a[k] * b[k] over int16 values, in int32: compiled per instruction set, where the
// compiler turns it into multiply-add pairs (pmaddwd / vpmaddwd).
ETRT_ISA_BODY void dot4_i16_body(const int16_t* a, const int16_t* b0, const int16_t* b1, const int16_t* b2,
                                 const int16_t* b3, int64_t k, int32_t* out) {
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (int64_t i = 0; i < k; ++i) {
    const int32_t v = a[i];
    s0 += v * b0[i];
    s1 += v * b1[i];
    s2 += v * b2[i];
    s3 += v * b3[i];
  }
  out[0] = s0;
  out[1] = s1;
  out[2] = s2;
  out[3] = s3;
}
ETRT_ISA_DISPATCH(void, dot4_i16,
                  (const int16_t* a, const int16_t* b0, const int16_t* b1, const int16_t* b2, const int16_t* b3,
                   int64_t k, int32_t* out),
                  (a, b0, b1, b2, b3, k, out))

ETRT_ISA_BODY int32_t dot_i16_body(const int16_t* a, const int16_t* b, int64_t k) {
  int32_t s = 0;
  for (int64_t i = 0; i < k; ++i) s += static_cast<int32_t>(a[i]) * b[i];
  return s;
}
ETRT_ISA_DISPATCH(int32_t, dot_i16, (const int16_t* a, const int16_t* b, int64_t k), (a, b, k))

// Requantization parameters shared by convolution and linear.
struct Requant {
  const float* multiplier = nullptr;  // in_scale * w_scale[n], per output channel
  const float* bias = nullptr;        // float32 or null
  float inv_out_scale = 1;
  float out_zp = 0;
  float lo = -128, hi = 127;
};

inline int8_t requantize(int32_t acc, const Requant& r, int64_t n) {
  float y = static_cast<float>(acc) * r.multiplier[n];
  if (r.bias != nullptr) y += r.bias[n];
  float v = round_even_fast(y * r.inv_out_scale) + r.out_zp;
  return static_cast<int8_t>(std::min(std::max(v, r.lo), r.hi));
}

// out[m * out_stride + n * out_nstride] for m < rows, n < cols: a [rows][k] (int16) by b [cols][k].
void gemm_requant(const int16_t* a, const int16_t* b, int64_t rows, int64_t cols, int64_t k, const Requant& r,
                  int64_t n0, int8_t* out, int64_t out_mstride, int64_t out_nstride) {
  parallel_for(0, rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, cols * k / 64)), [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m) {
      const int16_t* am = a + m * k;
      int64_t n = 0;
      int32_t acc[4];
      for (; n + 4 <= cols; n += 4) {
        dot4_i16(am, b + n * k, b + (n + 1) * k, b + (n + 2) * k, b + (n + 3) * k, k, acc);
        for (int j = 0; j < 4; ++j) out[m * out_mstride + (n + j) * out_nstride] = requantize(acc[j], r, n0 + n + j);
      }
      for (; n < cols; ++n) out[m * out_mstride + n * out_nstride] = requantize(dot_i16(am, b + n * k, k), r, n0 + n);
    }
  });
}

#if defined(__x86_64__) && defined(__GNUC__)
// AVX2 without VNNI: the same int16 products as gemm_requant, register-blocked. Weights packed
// [cols / 16][k / 2][16][2] int16, so one vpmaddwd multiplies a pair of taps of 8 channels by
// a broadcast pair of input values; tiles of kAvx2Mr rows x 16 channels (12 accumulators of
// the 16 registers), their sums requantized 16 channels a vector. Not vpmaddubsw on int8: exact
// only as |x| x sign(w, x) (weights in [-127, 127]), it costs vpsignb + vpmaddubsw + a vpmaddwd
// by ones per 32 products, the two multiplies of two vpmaddwd (docs/quantization.md).
constexpr int64_t kAvx2Mr = 6;

// Channels n0 .. n1 (one block), pairs of taps from q0: each channel's row written as int32
// pairs into its lane; an odd k's last tap is paired with 0.
void pack_i16_pairs_rows(const int8_t* w, int64_t n0, int64_t n1, int64_t q0, int64_t k, int16_t* packed) {
  const int64_t k2 = (k + 1) / 2, even = k / 2;
  for (int64_t n = n0; n < n1; ++n) {
    const int8_t* row = w + n * k;
    int16_t* dst = packed + (n / 16) * k2 * 32 + (n % 16) * 2;
    for (int64_t q = q0; q < even; ++q) {
      const uint32_t pair = static_cast<uint16_t>(int16_t{row[2 * q]}) |
                            static_cast<uint32_t>(static_cast<uint16_t>(int16_t{row[2 * q + 1]})) << 16;
      std::memcpy(dst + q * 32, &pair, 4);
    }
    if (k % 2 != 0) {
      dst[even * 32] = row[k - 1];
      dst[even * 32 + 1] = 0;
    }
  }
}

#define ETRT_AVX2_TARGET __attribute__((target("avx2")))

// r[i] = row i's 8 int32 -> r[j] = element j of the 8 rows.
ETRT_AVX2_TARGET static inline __attribute__((always_inline)) void transpose8_epi32(__m256i* r) {
  __m256i t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_epi32(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_epi32(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_unpacklo_epi64(t[i], t[i + 2]);
    u[i + 1] = _mm256_unpackhi_epi64(t[i], t[i + 2]);
    u[i + 2] = _mm256_unpacklo_epi64(t[i + 1], t[i + 3]);
    u[i + 3] = _mm256_unpackhi_epi64(t[i + 1], t[i + 3]);
  }
  for (int j = 0; j < 4; ++j) {
    r[j] = _mm256_permute2x128_si256(u[j], u[j + 4], 0x20);
    r[j + 4] = _mm256_permute2x128_si256(u[j], u[j + 4], 0x31);
  }
}

// Weights [cols][k] int8 -> [cols / 16][k / 2][16][2] int16. Whole blocks of 16 channels x 16
// taps: each channel's 16 taps widened to 8 int32 pairs, 8 channels transposed at once (the
// stores are whole vectors, not 16 lanes' strided pairs); the rest pair by pair. The padding
// lanes of a last partial block are 0.
ETRT_AVX2_TARGET void pack_i16_pairs(const int8_t* w, int64_t cols, int64_t k, int16_t* packed) {
  const int64_t k2 = (k + 1) / 2, blocks = (cols + 15) / 16, whole = cols / 16, kv = k / 16 * 16;
  if (cols % 16 != 0) {
    std::memset(packed + (blocks - 1) * k2 * 32, 0, static_cast<size_t>(k2 * 32) * sizeof(int16_t));
  }
  for (int64_t blk = 0; blk < whole; ++blk) {
    int16_t* dst = packed + blk * k2 * 32;
    for (int64_t kk = 0; kk < kv; kk += 16) {
      for (int64_t half = 0; half < 2; ++half) {
        __m256i r[8];
        const int8_t* src = w + (blk * 16 + half * 8) * k + kk;
        for (int i = 0; i < 8; ++i) {
          r[i] = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i * k)));
        }
        transpose8_epi32(r);
        for (int q = 0; q < 8; ++q) {
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + (kk / 2 + q) * 32 + half * 16), r[q]);
        }
      }
    }
    if (kv < k) pack_i16_pairs_rows(w, blk * 16, blk * 16 + 16, kv / 2, k, packed);
  }
  pack_i16_pairs_rows(w, whole * 16, cols, 0, k, packed);
}

// requantize() of 8 channels' sums, stored as 8 bytes: the same float32 steps (a missing bias
// is +0.0, which changes no rounded value).
struct Avx2Out {
  __m256 inv, zp, lo, hi;
};
ETRT_AVX2_TARGET static inline __attribute__((always_inline)) Avx2Out avx2_out(const Requant& r) {
  return {_mm256_set1_ps(r.inv_out_scale), _mm256_set1_ps(r.out_zp), _mm256_set1_ps(r.lo), _mm256_set1_ps(r.hi)};
}
ETRT_AVX2_TARGET static inline __attribute__((always_inline)) __m256i avx2_requant_q(__m256i acc, __m256 mult,
                                                                                    __m256 bias, const Avx2Out& o) {
  __m256 y = _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(acc), mult), bias);
  y = _mm256_round_ps(_mm256_mul_ps(y, o.inv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  y = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(y, o.zp), o.lo), o.hi);
  return _mm256_cvtps_epi32(y);  // within int8 already: the packs below do not saturate
}
ETRT_AVX2_TARGET static inline __attribute__((always_inline)) void avx2_requant8(__m256i acc, __m256 mult,
                                                                                 __m256 bias, const Avx2Out& o,
                                                                                 int8_t* out) {
  const __m256i q = avx2_requant_q(acc, mult, bias, o);
  const __m128i q16 = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(out), _mm_packs_epi16(q16, q16));
}

// One pair of taps of MR rows into the tile's sums.
template <int MR>
ETRT_AVX2_TARGET static inline __attribute__((always_inline)) void avx2_tile_step(__m256i (&acc)[MR][2],
                                                                                  const int16_t* a, int64_t lda,
                                                                                  const int16_t* b, int64_t q) {
  const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + q * 32));
  const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + q * 32 + 16));
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    int32_t pair;
    std::memcpy(&pair, a + i * lda + q * 2, 4);
    const __m256i av = _mm256_set1_epi32(pair);
    acc[i][0] = _mm256_add_epi32(_mm256_madd_epi16(av, b0), acc[i][0]);
    acc[i][1] = _mm256_add_epi32(_mm256_madd_epi16(av, b1), acc[i][1]);
  }
}

// MR rows x 16 channels summed over k2 pairs of taps into acc_out[i * 16 + j]. The pair loop
// is not unrolled and the sums leave through memory: GCC's -O3 otherwise rotated the 12 sums
// through register moves and stack spills (a third more instructions per pair).
template <int MR>
ETRT_AVX2_TARGET void avx2_tile(const int16_t* a, int64_t lda, const int16_t* b, int64_t k2, int32_t* acc_out,
                               int64_t ldo = 16) {
  __m256i acc[MR][2];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_si256();
#pragma GCC unroll 1
  for (int64_t q = 0; q < k2; ++q) avx2_tile_step<MR>(acc, a, lda, b, q);
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc_out + i * ldo), acc[i][0]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc_out + i * ldo + 8), acc[i][1]);
  }
}

// requantize() of a tile's sums (mr rows x nr <= 16 channels): 8 channels at a time, the
// rest one by one.
ETRT_AVX2_TARGET void avx2_requant_tile(const int32_t* acc, int64_t mr, int64_t nr, const Requant& r, int64_t n,
                                        int8_t* out, int64_t out_mstride) {
  const Avx2Out o = avx2_out(r);
  const float* mult = r.multiplier + n;  // locals: the int8 stores could alias the Requant
  const float* bias = r.bias != nullptr ? r.bias + n : nullptr;
  if (nr == 16) {  // the column block's multipliers and biases loaded once; one 16-byte store a row
    const __m256 m0 = _mm256_loadu_ps(mult), m1 = _mm256_loadu_ps(mult + 8);
    const __m256 c0 = bias != nullptr ? _mm256_loadu_ps(bias) : _mm256_setzero_ps();
    const __m256 c1 = bias != nullptr ? _mm256_loadu_ps(bias + 8) : _mm256_setzero_ps();
    for (int64_t i = 0; i < mr; ++i) {
      const __m256i q0 = avx2_requant_q(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + i * 16)), m0, c0, o);
      const __m256i q1 =
          avx2_requant_q(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + i * 16 + 8)), m1, c1, o);
      const __m256i p = _mm256_permute4x64_epi64(_mm256_packs_epi32(q0, q1), 0xD8);  // 16 int16 in order
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i * out_mstride),
                       _mm_packs_epi16(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1)));
    }
    return;
  }
  for (int64_t i = 0; i < mr; ++i) {
    int64_t j = 0;
    for (; j + 8 <= nr; j += 8) {
      avx2_requant8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + i * 16 + j)), _mm256_loadu_ps(mult + j),
                    bias != nullptr ? _mm256_loadu_ps(bias + j) : _mm256_setzero_ps(), o, out + i * out_mstride + j);
    }
    for (; j < nr; ++j) out[i * out_mstride + j] = requantize(acc[i * 16 + j], r, n + j);
  }
}

// out[m * out_mstride + n] for m < rows, n < cols: a [rows][lda] int16 (lda even, zero-padded
// past k) by the packed weights.
void avx2_gemm_requant(const int16_t* a, int64_t lda, const int16_t* packed, int64_t rows, int64_t cols,
                       const Requant& r, int8_t* out, int64_t out_mstride) {
  const int64_t k2 = lda / 2, tiles = (rows + kAvx2Mr - 1) / kAvx2Mr;
  parallel_for(0, tiles, 1, [&](int64_t t0, int64_t t1) {
    alignas(32) int32_t acc[kAvx2Mr * 16];
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t m = t * kAvx2Mr, mr = std::min(kAvx2Mr, rows - m);
      for (int64_t n = 0; n < cols; n += 16) {
        const int16_t* b = packed + (n / 16) * k2 * 32;
        const int64_t nr = std::min<int64_t>(16, cols - n);
        if (mr == kAvx2Mr) {
          avx2_tile<kAvx2Mr>(a + m * lda, lda, b, k2, acc);
        } else {
          for (int64_t i = 0; i < mr; ++i) avx2_tile<1>(a + (m + i) * lda, lda, b, k2, acc + i * 16);
        }
        avx2_requant_tile(acc, mr, nr, r, n, out + m * out_mstride + n, out_mstride);
      }
    }
  });
}

// Linears with fewer than 4 rows (a classifier at batch 1): each weight row read as it is
// stored, widened in register (no packing), 4 channels sharing each load of x - zero_point
// (int16, k rounded up to 16 with zeros). out[n] for n0 <= n < n1.
ETRT_AVX2_TARGET void avx2_gemv(const int16_t* x, const int8_t* w, int64_t k, int64_t n0, int64_t n1,
                                const Requant& r, int8_t* out) {
  const int64_t kv = k / 16 * 16;
  int64_t n = n0;
  for (; n + 4 <= n1; n += 4) {
    __m256i acc[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()};
    for (int64_t kk = 0; kk < kv; kk += 16) {
      const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + kk));
      for (int j = 0; j < 4; ++j) {
        const __m128i wb = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w + (n + j) * k + kk));
        acc[j] = _mm256_add_epi32(acc[j], _mm256_madd_epi16(xv, _mm256_cvtepi8_epi16(wb)));
      }
    }
    const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(acc[0], acc[1]), _mm256_hadd_epi32(acc[2], acc[3]));
    alignas(16) int32_t sums[4];
    _mm_store_si128(reinterpret_cast<__m128i*>(sums),
                    _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1)));
    for (int j = 0; j < 4; ++j) {
      for (int64_t kk = kv; kk < k; ++kk) sums[j] += static_cast<int32_t>(x[kk]) * w[(n + j) * k + kk];
      out[n + j] = requantize(sums[j], r, n + j);
    }
  }
  for (; n < n1; ++n) {
    int32_t sum = 0;
    for (int64_t kk = 0; kk < k; ++kk) sum += static_cast<int32_t>(x[kk]) * w[n * k + kk];
    out[n] = requantize(sum, r, n);
  }
}
#endif

// ---------------------------------------------------------------------------------------------
// AVX-512 VNNI: vpdpbusd sums four u8 x s8 products into each int32 lane. The input is stored
// as u8 (x + 128) and the product corrected by (zero point + 128) * sum_k w[n][k]. Weights are
// packed per call into blocks of 16 output channels x 4 taps (64 bytes), K padded to 4 with 0.

constexpr int64_t kNr = 32;  // output channels per tile: two zmm of int32
constexpr int64_t kMr = 8;   // rows (pixels) per tile

}  // namespace

// ETRT_INT8_ISA=portable caps the int8 kernels at the portable path (to test and time it):
// every hand-written instruction-set path (VNNI, the depthwise register blocks) steps aside.
bool int8_portable_only() {
  static const bool portable = [] {
    const char* cap = std::getenv("ETRT_INT8_ISA");
    return cap != nullptr && std::string(cap) == "portable";
  }();
  return portable;
}

// The VNNI path is an AVX-512 one, so ETRT_MAX_ISA / set_max_isa below avx512 caps it too.
bool int8_vnni_enabled() {
  static const bool available = [] {
    if (int8_portable_only()) return false;
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
#else
    return false;
#endif
  }();
  return available && isa_level() >= 2;
}

namespace {

inline int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// sum_k w[k] over int8 values: compiled per instruction set, where the loop vectorises.
ETRT_ISA_BODY int32_t sum_i8_body(const int8_t* w, int64_t k) {
  int32_t sum = 0;
  for (int64_t i = 0; i < k; ++i) sum += w[i];
  return sum;
}
ETRT_ISA_DISPATCH(int32_t, sum_i8, (const int8_t* w, int64_t k), (w, k))

// packed: [cols / 16 blocks][k4][16][4] int8; wsum[n] = sum_k w[n][k] (cols padded to kNr).
void vnni_pack(const int8_t* w, int64_t cols, int64_t k, int8_t* packed, int32_t* wsum) {
  const int64_t k4 = round_up(k, 4) / 4, colsp = round_up(cols, kNr), full = k / 4;
  for (int64_t n = 0; n < colsp; ++n) wsum[n] = n < cols ? sum_i8(w + n * k, k) : 0;
  for (int64_t block = 0; block < colsp / 16; ++block) {
    if (block * 16 + 16 <= cols) {  // whole block: row by row, no branches
      for (int64_t lane = 0; lane < 16; ++lane) {
        const int8_t* src = w + (block * 16 + lane) * k;
        int8_t* dst = packed + block * k4 * 64 + lane * 4;
        for (int64_t q = 0; q < full; ++q) std::memcpy(dst + q * 64, src + q * 4, 4);
      }
      if (full == k4) continue;
    }
    for (int64_t q = block * 16 + 16 <= cols ? full : 0; q < k4; ++q) {
      int8_t* dst = packed + (block * k4 + q) * 64;
      for (int64_t lane = 0; lane < 16; ++lane) {
        const int64_t n = block * 16 + lane;
        if (n < cols && q < full) {
          std::memcpy(dst + lane * 4, w + n * k + q * 4, 4);
        } else {
          for (int64_t j = 0; j < 4; ++j) {
            dst[lane * 4 + j] = (n < cols && q * 4 + j < k) ? w[n * k + q * 4 + j] : int8_t{0};
          }
        }
      }
    }
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
// acc += the four u8 x s8 products of each lane (vpdpbusd). Through asm, which ties the sum to
// its register: with the builtin, GCC rotated a tile's 16 sums through register copies and
// stack spills every step (116 moves for 16 products in the 8x32 tile's loop).
__attribute__((target("avx512f,avx512vnni"))) static inline __attribute__((always_inline)) __m512i dpbusd(
    __m512i acc, __m512i u8, __m512i s8) {
  asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(u8), "vm"(s8));
  return acc;
}

__attribute__((target("avx512f,avx512vl,avx512vnni"))) static inline __attribute__((always_inline)) __m256i dpbusd(
    __m256i acc, __m256i u8, __m256i s8) {
  asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(u8), "vm"(s8));
  return acc;
}

// Four int8 inputs at p broadcast to every lane as u8 (x + 128): one vpxord with an embedded
// broadcast load (GCC turned the builtin's into a scalar xor and a move into the vector unit).
__attribute__((target("avx512f"))) static inline __attribute__((always_inline)) __m512i flip_broadcast4(
    const int8_t* p, __m512i flip) {
  __m512i v;
  asm("vpxord %1%{1to16%}, %2, %0" : "=v"(v) : "m"(*reinterpret_cast<const int32_t*>(p)), "v"(flip));
  return v;
}
#endif

#if defined(__x86_64__) && defined(__GNUC__)
// NB column vectors of 16 channels (2: a whole tile; 1 when 16 channels or fewer are left, as a
// first convolution's 16: the second vector would multiply the packing's zeros).
template <int MR, int NB = 2>
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void vnni_tile(const int8_t* a, int64_t kp,
                                                                     const int8_t* b0, const int8_t* b1,
                                                                     int64_t k4, int32_t* acc_out) {
  static_assert(NB == 1 || NB == 2, "one or two vectors");
  __m512i acc[MR][NB];
  for (int r = 0; r < MR; ++r) {
    for (int j = 0; j < NB; ++j) acc[r][j] = _mm512_setzero_si512();
  }
  for (int64_t q = 0; q < k4; ++q) {
    __m512i w[NB];
    w[0] = _mm512_loadu_si512(b0 + q * 64);
    if (NB == 2) w[NB - 1] = _mm512_loadu_si512(b1 + q * 64);
    for (int r = 0; r < MR; ++r) {
      int32_t four;
      std::memcpy(&four, a + r * kp + q * 4, 4);
      const __m512i av = _mm512_set1_epi32(four ^ static_cast<int32_t>(0x80808080u));  // x + 128 as u8
      for (int j = 0; j < NB; ++j) acc[r][j] = dpbusd(acc[r][j], av, w[j]);
    }
  }
  for (int r = 0; r < MR; ++r) {
    for (int j = 0; j < NB; ++j) _mm512_storeu_si512(acc_out + r * kNr + 16 * j, acc[r][j]);
  }
}
#endif

#if defined(__x86_64__) && defined(__GNUC__)
// requantize() for 16 channels at once: the same float32 steps (multiply, then add the bias, no
// fused multiply-add), rounding half to even.
#define ETRT_VNNI_REQUANT_TARGET __attribute__((target("avx512f,avx512bw,avx512vl")))
ETRT_VNNI_REQUANT_TARGET static inline __attribute__((always_inline)) void vnni_requant16(
    const int32_t* acc, const int32_t* wsum, int32_t a_zero, const Requant& r, int64_t n, int64_t count, int8_t* dst) {
  const __mmask16 mask = static_cast<__mmask16>((1u << count) - 1u);
  __m512i v = _mm512_sub_epi32(_mm512_loadu_si512(acc),
                               _mm512_mullo_epi32(_mm512_set1_epi32(a_zero), _mm512_maskz_loadu_epi32(mask, wsum)));
  __m512 y = _mm512_mul_ps(_mm512_cvtepi32_ps(v), _mm512_maskz_loadu_ps(mask, r.multiplier + n));
  if (r.bias != nullptr) y = _mm512_add_ps(y, _mm512_maskz_loadu_ps(mask, r.bias + n));
  y = _mm512_mul_ps(y, _mm512_set1_ps(r.inv_out_scale));
  y = _mm512_roundscale_ps(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  y = _mm512_add_ps(y, _mm512_set1_ps(r.out_zp));
  y = _mm512_min_ps(_mm512_max_ps(y, _mm512_set1_ps(r.lo)), _mm512_set1_ps(r.hi));
  _mm_mask_storeu_epi8(dst, mask, _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(y)));
}

// A tile's mr x nr sums, requantized into out[(i) * mstride + (j) * nstride].
ETRT_VNNI_REQUANT_TARGET void vnni_requant_tile(const int32_t* acc, int64_t mr, int64_t nr, const int32_t* wsum,
                                                int32_t a_zero, const Requant& r, int64_t n, int8_t* out,
                                                int64_t mstride, int64_t nstride) {
  if (nstride == 1) {
    // vnni_requant16's steps with a column block's constants loaded once for all rows.
    const __m512 inv = _mm512_set1_ps(r.inv_out_scale), zp = _mm512_set1_ps(r.out_zp);
    const __m512 lo = _mm512_set1_ps(r.lo), hi = _mm512_set1_ps(r.hi);
    for (int64_t half = 0; half < nr; half += 16) {
      const int64_t count = std::min<int64_t>(16, nr - half);
      const __mmask16 mask = static_cast<__mmask16>((1u << count) - 1u);
      const __m512i corr =
          _mm512_mullo_epi32(_mm512_set1_epi32(a_zero), _mm512_maskz_loadu_epi32(mask, wsum + half));
      const __m512 mult = _mm512_maskz_loadu_ps(mask, r.multiplier + n + half);
      const __m512 bias = r.bias != nullptr ? _mm512_maskz_loadu_ps(mask, r.bias + n + half) : _mm512_setzero_ps();
      for (int64_t i = 0; i < mr; ++i) {
        const __m512i v = _mm512_sub_epi32(_mm512_loadu_si512(acc + i * kNr + half), corr);
        __m512 y = _mm512_mul_ps(_mm512_cvtepi32_ps(v), mult);
        if (r.bias != nullptr) y = _mm512_add_ps(y, bias);
        y = _mm512_mul_ps(y, inv);
        y = _mm512_roundscale_ps(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        y = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(y, zp), lo), hi);
        _mm_mask_storeu_epi8(out + i * mstride + half, mask, _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(y)));
      }
    }
    return;
  }
  alignas(64) int8_t q[kMr * kNr];
  for (int64_t i = 0; i < mr; ++i) {
    for (int64_t half = 0; half < nr; half += 16) {
      vnni_requant16(acc + i * kNr + half, wsum + half, a_zero, r, n + half, std::min<int64_t>(16, nr - half),
                     q + i * kNr + half);
    }
  }
  for (int64_t j = 0; j < nr; ++j) {
    for (int64_t i = 0; i < mr; ++i) out[i * mstride + j * nstride] = q[i * kNr + j];
  }
}
#endif

#if defined(__x86_64__) && defined(__GNUC__)
// The sums' start for nr (<= 16 * NB) columns: -a_zero times each column's weight sum.
template <int MR, int NB>
__attribute__((target("avx512f,avx512bw,avx512vl"))) static inline __attribute__((always_inline)) void vnni_start(
    __m512i (&acc)[MR][NB], __mmask16 (&mask)[NB], const int32_t* wsum, int32_t a_zero, int64_t nr) {
#pragma GCC unroll 2
  for (int j = 0; j < NB; ++j) {
    const int64_t count = std::min<int64_t>(16, nr - 16 * j);
    mask[j] = static_cast<__mmask16>((1u << count) - 1u);
    const __m512i corr =
        _mm512_mullo_epi32(_mm512_set1_epi32(-a_zero), _mm512_maskz_loadu_epi32(mask[j], wsum + 16 * j));
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) acc[i][j] = corr;
  }
}

// The sums of MR rows requantized and stored as int8 (the clamp before the rounding, below).
template <int MR, int NB>
__attribute__((target("avx512f,avx512bw,avx512vl"))) static inline __attribute__((always_inline)) void
vnni_requant_store(const __m512i (&acc)[MR][NB], const __mmask16 (&mask)[NB], const Requant& r, int64_t n,
                   int8_t* out, int64_t mstride) {
  __m512 mult[NB], bias[NB];
#pragma GCC unroll 2
  for (int j = 0; j < NB; ++j) {
    mult[j] = _mm512_maskz_loadu_ps(mask[j], r.multiplier + n + 16 * j);
    bias[j] = r.bias != nullptr ? _mm512_maskz_loadu_ps(mask[j], r.bias + n + 16 * j) : _mm512_setzero_ps();
  }
  const __m512 inv = _mm512_set1_ps(r.inv_out_scale);
  const __m512 lo = _mm512_set1_ps(r.lo - r.out_zp), hi = _mm512_set1_ps(r.hi - r.out_zp);
  const __m512i zp = _mm512_set1_epi32(static_cast<int32_t>(r.out_zp));
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 2
    for (int j = 0; j < NB; ++j) {
      __m512 y = _mm512_mul_ps(_mm512_cvtepi32_ps(acc[i][j]), mult[j]);
      if (r.bias != nullptr) y = _mm512_add_ps(y, bias[j]);
      y = _mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(y, inv), lo), hi);
      const __m512i q =
          _mm512_add_epi32(_mm512_cvt_roundps_epi32(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zp);
      _mm_mask_storeu_epi8(out + i * mstride + 16 * j, mask[j], _mm512_cvtsepi32_epi8(q));
    }
  }
}

// vnni_tile and vnni_requant_tile in one, for rows stored with their channels adjacent: the sums
// stay in registers (a 1x1 convolution of 16-32 input channels spent as long storing, reloading
// and correcting them as multiplying). The zero-point correction is each sum's starting value
// (int32 arithmetic wraps the same either way), and the clamp comes before the rounding, to
// [lo - zp, hi - zp]: rounding is monotonic and keeps those integers, so
// clamp(round(v) + zp, lo, hi) == round(clamp(v, lo - zp, hi - zp)) + zp, NaN included (max
// takes the bound either way), and the conversion rounds half to even itself.
template <int MR, int NB>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) void vnni_tile_requant(
    const int8_t* a, int64_t kp, const int8_t* b0, const int8_t* b1, int64_t k4, const int32_t* wsum, int32_t a_zero,
    const Requant& r, int64_t n, int64_t nr, int8_t* out, int64_t mstride) {
  static_assert(NB == 1 || NB == 2, "one or two vectors");
  __mmask16 mask[NB];
  __m512i acc[MR][NB];
  vnni_start<MR, NB>(acc, mask, wsum, a_zero, nr);
  const __m512i flip = _mm512_set1_epi32(static_cast<int32_t>(0x80808080u));
  for (int64_t q = 0; q < k4; ++q) {
    __m512i w[NB];
    w[0] = _mm512_loadu_si512(b0 + q * 64);
    if (NB == 2) w[NB - 1] = _mm512_loadu_si512(b1 + q * 64);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const __m512i av = flip_broadcast4(a + i * kp + q * 4, flip);
      for (int j = 0; j < NB; ++j) acc[i][j] = dpbusd(acc[i][j], av, w[j]);
    }
  }
  vnni_requant_store<MR, NB>(acc, mask, r, n, out, mstride);
}
#endif

// out[m * mstride + n * nstride] for m < rows, n < cols: a [rows][kp] int8 (rows kp apart) by the
// packed weights.
void vnni_gemm_requant(const int8_t* a, int64_t rows, int64_t kp, const int8_t* packed, const int32_t* wsum,
                       int32_t a_zero, int64_t cols, const Requant& r, int64_t n0, int8_t* out, int64_t mstride,
                       int64_t nstride) {
#if defined(__x86_64__) && defined(__GNUC__)
  const int64_t k4 = kp / 4, tiles = (rows + kMr - 1) / kMr;
  if (nstride == 1) {
    parallel_for(0, tiles, 1, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t m = t * kMr, mr = std::min(kMr, rows - m);
        for (int64_t n = 0; n < cols; n += kNr) {
          const int8_t* b0 = packed + (n / 16) * k4 * 64;
          const int8_t* b1 = b0 + k4 * 64;
          const int64_t nr = std::min(kNr, cols - n);
          int8_t* o = out + m * mstride + n;
          const int32_t* ws = wsum + n;
          if (nr <= 16) {
            if (mr == kMr) {
              vnni_tile_requant<kMr, 1>(a + m * kp, kp, b0, b1, k4, ws, a_zero, r, n0 + n, nr, o, mstride);
            } else {
              for (int64_t i = 0; i < mr; ++i) {
                vnni_tile_requant<1, 1>(a + (m + i) * kp, kp, b0, b1, k4, ws, a_zero, r, n0 + n, nr,
                                        o + i * mstride, mstride);
              }
            }
          } else if (mr == kMr) {
            vnni_tile_requant<kMr, 2>(a + m * kp, kp, b0, b1, k4, ws, a_zero, r, n0 + n, nr, o, mstride);
          } else {
            for (int64_t i = 0; i < mr; ++i) {
              vnni_tile_requant<1, 2>(a + (m + i) * kp, kp, b0, b1, k4, ws, a_zero, r, n0 + n, nr, o + i * mstride,
                                      mstride);
            }
          }
        }
      }
    });
    return;
  }
  parallel_for(0, tiles, 1, [&](int64_t t0, int64_t t1) {
    alignas(64) int32_t acc[kMr * kNr];
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t m = t * kMr, mr = std::min(kMr, rows - m);
      for (int64_t n = 0; n < cols; n += kNr) {
        const int8_t* b0 = packed + (n / 16) * k4 * 64;
        const int8_t* b1 = b0 + k4 * 64;
        const int64_t nr = std::min(kNr, cols - n);
        if (nr <= 16) {
          if (mr == kMr) {
            vnni_tile<kMr, 1>(a + m * kp, kp, b0, b1, k4, acc);
          } else {
            for (int64_t i = 0; i < mr; ++i) vnni_tile<1, 1>(a + (m + i) * kp, kp, b0, b1, k4, acc + i * kNr);
          }
        } else if (mr == kMr) {
          vnni_tile<kMr>(a + m * kp, kp, b0, b1, k4, acc);
        } else {
          for (int64_t i = 0; i < mr; ++i) vnni_tile<1>(a + (m + i) * kp, kp, b0, b1, k4, acc + i * kNr);
        }
        vnni_requant_tile(acc, mr, nr, wsum + n, a_zero, r, n0 + n, out + m * mstride + n * nstride, mstride,
                          nstride);
      }
    }
  });
#else
  (void)a, (void)rows, (void)kp, (void)packed, (void)wsum, (void)a_zero, (void)cols, (void)r, (void)n0;
  (void)out, (void)mstride, (void)nstride;
#endif
}

#if defined(__x86_64__) && defined(__GNUC__)
// A few rows (a classifier at batch 1): each weight row read once as it is stored, no packing
// (which would copy every weight per call for a single product). Four channels share each
// 64-byte input load; sum(w) comes from the same loads (vpdpbusd with ones), so the result is
// sum((x + 128) * w) - (zp + 128) * sum(w), the exact int32 sum, requantized by requantize().
template <int W>
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void vnni_gemv_columns(const int8_t* x, const int8_t* w,
                                                                             int64_t k, int64_t n, int32_t a_zero,
                                                                             const Requant& r, int8_t* out) {
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80)), ones = _mm512_set1_epi8(1);
  __m512i acc[W], sum[W];
  for (int c = 0; c < W; ++c) acc[c] = sum[c] = _mm512_setzero_si512();
  for (int64_t j = 0; j < k; j += 64) {
    const __mmask64 m = k - j >= 64 ? ~__mmask64{0} : (__mmask64{1} << (k - j)) - 1;
    const __m512i xv = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, x + j), flip);  // x + 128 as u8
    for (int c = 0; c < W; ++c) {
      const __m512i wv = _mm512_maskz_loadu_epi8(m, w + (n + c) * k + j);  // 0 past k
      acc[c] = _mm512_dpbusd_epi32(acc[c], xv, wv);
      sum[c] = _mm512_dpbusd_epi32(sum[c], ones, wv);
    }
  }
  for (int c = 0; c < W; ++c) {
    const int32_t total = _mm512_reduce_add_epi32(acc[c]) - a_zero * _mm512_reduce_add_epi32(sum[c]);
    out[n + c] = requantize(total, r, n + c);
  }
}

void vnni_gemv(const int8_t* x, const int8_t* w, int64_t k, int64_t n0, int64_t n1, int32_t a_zero, const Requant& r,
               int8_t* out) {
  int64_t n = n0;
  for (; n + 4 <= n1; n += 4) vnni_gemv_columns<4>(x, w, k, n, a_zero, r, out);
  for (; n < n1; ++n) vnni_gemv_columns<1>(x, w, k, n, a_zero, r, out);
}
#endif

struct QuantArgs {
  Tensor* input = nullptr;
  Tensor* weight = nullptr;
  Tensor* w_scale = nullptr;
  Tensor* bias = nullptr;
  double in_scale = 1, out_scale = 1;
  int64_t in_zp = 0, out_zp = 0, lo = 0, hi = 0;
};

// input, weight, weight_scale, bias?, input_scale, input_zero_point, output_scale,
// output_zero_point, output_min, output_max
bool quant_args(KernelContext& ctx, const char* op, Span<Value*> args, QuantArgs* q, bool any_layout = false) {
  q->input = tensor_arg(ctx, op, args, 0, "input");
  q->weight = tensor_arg(ctx, op, args, 1, "weight");
  q->w_scale = tensor_arg(ctx, op, args, 2, "weight_scale");
  if (q->input == nullptr || q->weight == nullptr || q->w_scale == nullptr ||
      !optional_tensor_arg(ctx, op, args, 3, "bias", &q->bias) ||
      !scalar_arg(ctx, op, args, 4, "input_scale", &q->in_scale) ||
      !int_arg(ctx, op, args, 5, "input_zero_point", &q->in_zp) ||
      !scalar_arg(ctx, op, args, 6, "output_scale", &q->out_scale) ||
      !int_arg(ctx, op, args, 7, "output_zero_point", &q->out_zp) || !int_arg(ctx, op, args, 8, "output_min", &q->lo) ||
      !int_arg(ctx, op, args, 9, "output_max", &q->hi) ||
      !(any_layout ? dense_input(ctx, op, *q->input, "input") : contiguous_input(ctx, op, *q->input, "input")) ||
      !(any_layout ? dense_input(ctx, op, *q->weight, "weight") : contiguous_input(ctx, op, *q->weight, "weight")) ||
      !contiguous_input(ctx, op, *q->w_scale, "weight_scale")) {
    return false;
  }
  if (q->input->dtype() != ScalarType::Char || q->weight->dtype() != ScalarType::Char) {
    fail(ctx, op, "input and weight must be int8, got " + dtype_name(q->input->dtype()) + " and " +
                      dtype_name(q->weight->dtype()));
    return false;
  }
  const int64_t cout = q->weight->dim() > 0 ? q->weight->size(0) : 0;
  if (q->w_scale->dtype() != ScalarType::Float || q->w_scale->numel() != cout) {
    fail(ctx, op, "weight_scale must be float32 with one value per output channel");
    return false;
  }
  if (q->bias != nullptr &&
      (q->bias->dtype() != ScalarType::Float || q->bias->numel() != cout || !contiguous_input(ctx, op, *q->bias, "bias"))) {
    if (!ctx.failed()) fail(ctx, op, "bias must be float32 with one value per output channel");
    return false;
  }
  if (q->lo < -128 || q->hi > 127 || q->lo > q->hi) {
    fail(ctx, op, "output range [" + std::to_string(q->lo) + ", " + std::to_string(q->hi) + "] is not within int8");
    return false;
  }
  return int8_qparams(ctx, op, "input_scale", q->in_scale, "input_zero_point", q->in_zp) &&
         int8_qparams(ctx, op, "output_scale", q->out_scale, "output_zero_point", q->out_zp);
}

// Products per output at most this: each (x - zero point) * w is at most 255 * 128 in magnitude,
// so the int32 sums of the product loops stay exact (and never overflow).
constexpr int64_t kMaxDepth = int64_t{1} << 16;

bool depth_fits(KernelContext& ctx, const char* op, int64_t k, const Tensor& weight) {
  if (k <= kMaxDepth) return true;
  fail(ctx, op, "weight " + shape_string(weight.sizes()) + " sums " + std::to_string(k) +
                    " products per output, over 65536 (the int32 sums would overflow)");
  return false;
}

// The requantization multipliers (in_scale * w_scale[n]) and output parameters.
bool prepare_requant(KernelContext& ctx, const char* op, const QuantArgs& q, Requant* r) {
  const int64_t cout = q.weight->size(0);
  float* mult = static_cast<float*>(ctx.allocate_temp(static_cast<size_t>(std::max<int64_t>(cout, 1)) * sizeof(float)));
  if (mult == nullptr) {
    fail(ctx, op, "out of memory for the requantization multipliers");
    return false;
  }
  const float in_scale = static_cast<float>(q.in_scale);
  for (int64_t c = 0; c < cout; ++c) {
    const float s = q.w_scale->data_as<float>()[c];
    mult[c] = in_scale * s;
    if (!(s > 0) || !std::isfinite(mult[c]) || (q.bias != nullptr && !std::isfinite(q.bias->data_as<float>()[c]))) {
      fail(ctx, op, "channel " + std::to_string(c) + ": weight_scale must be positive and finite (times input_scale)"
                    ", bias finite");
      return false;
    }
  }
  r->multiplier = mult;
  r->bias = q.bias != nullptr ? q.bias->data_as<float>() : nullptr;
  r->inv_out_scale = static_cast<float>(1.0 / q.out_scale);
  r->out_zp = static_cast<float>(q.out_zp);
  r->lo = static_cast<float>(q.lo);
  r->hi = static_cast<float>(q.hi);
  return true;
}

// The portable path's weights, widened to int16.
int16_t* widen_weights(KernelContext& ctx, const char* op, const int8_t* w, int64_t n) {
  auto* wide = static_cast<int16_t*>(ctx.allocate_temp(static_cast<size_t>(std::max<int64_t>(n, 1)) * sizeof(int16_t)));
  if (wide == nullptr) {
    fail(ctx, op, "out of memory for the widened weights");
    return nullptr;
  }
  for (int64_t i = 0; i < n; ++i) wide[i] = w[i];
  return wide;
}

// The VNNI path's packed weights for `groups` products of `cols` x `k` each.
struct Packed {
  int8_t* data = nullptr;
  int32_t* wsum = nullptr;
  int64_t kp = 0, colsp = 0;
};

// What a kernel derives from a weight alone (packed, widened) lives in memory the runtime keeps
// for the instruction when the weight is a constant (read-only): packed at the first run and
// again only when the layout or the instruction set in force changes (ETRT_MAX_ISA,
// etrt.set_max_isa), so a program moved to another machine packs for the one it runs on.
// Otherwise (a weight given at run time) it is this call's scratch memory.
enum class Layout : uint64_t {
  kVnni = 1, kVnniDirect, kPairs, kPairsDirect, kDepthwise, kVnniNchw, kPairsWinograd  // < 16
};

struct Derived {
  void* data = nullptr;
  bool ready = false;  // filled by an earlier run
};

// `extra`: a byte more the contents depend on (a depthwise layer's input zero point).
Derived derived_weight(KernelContext& ctx, const Tensor& weight, Layout layout, size_t nbytes, uint8_t extra = 0) {
  Derived d;
  if (weight.is_read_only()) {
    // Exact, not a hash: 48 address bits, the layout, the instruction set in force, `extra`.
    const uint64_t key = (reinterpret_cast<uintptr_t>(weight.data()) & ((uint64_t{1} << 48) - 1)) |
                         static_cast<uint64_t>(layout) << 48 | static_cast<uint64_t>(isa_level() & 3) << 52 |
                         uint64_t{int8_vnni_enabled()} << 54 | uint64_t{int8_portable_only()} << 55 |
                         uint64_t{extra} << 56;
    d.data = ctx.instruction_cache(key, nbytes, &d.ready);
    if (d.data != nullptr) return d;
  }
  d.ready = false;
  d.data = ctx.allocate_temp(nbytes);
  return d;
}

// Packs `source()` ([groups][cols][k] int8, asked for only when the packing is not kept from an
// earlier run; nullptr: out of memory) for the VNNI tiles.
template <typename Source>
bool pack_weights(KernelContext& ctx, const char* op, const Tensor& weight, Layout layout, Source&& source,
                  int64_t groups, int64_t cols, int64_t k, Packed* p) {
  p->kp = round_up(k, 4);
  p->colsp = round_up(cols, kNr);
  const int64_t data_bytes = round_up(groups * p->colsp * p->kp, 64);
  const Derived d = derived_weight(ctx, weight, layout,
                                   static_cast<size_t>(data_bytes + groups * p->colsp * 4));
  if (d.data == nullptr) {
    fail(ctx, op, "out of memory for the packed weights");
    return false;
  }
  p->data = static_cast<int8_t*>(d.data);
  p->wsum = reinterpret_cast<int32_t*>(p->data + data_bytes);
  if (d.ready) return true;
  const int8_t* w = source();
  if (w == nullptr) {
    fail(ctx, op, "out of memory for the weights");
    return false;
  }
  for (int64_t g = 0; g < groups; ++g) {
    vnni_pack(w + g * cols * k, cols, k, p->data + g * p->colsp * p->kp, p->wsum + g * p->colsp);
  }
  return true;
}

#if defined(__x86_64__) && defined(__GNUC__)
// The same for the AVX2 tiles: [cols / 16][lda / 2][16][2] int16 (pack_i16_pairs; lda: k rounded
// up to even).
template <typename Source>
int16_t* pack_pairs(KernelContext& ctx, const char* op, const Tensor& weight, Layout layout, Source&& source,
                    int64_t cols, int64_t k) {
  const Derived d = derived_weight(ctx, weight, layout,
                                   static_cast<size_t>(round_up(cols, 16) * round_up(k, 2)) * sizeof(int16_t));
  if (d.data == nullptr) {
    fail(ctx, op, "out of memory for the packed weights");
    return nullptr;
  }
  auto* packed = static_cast<int16_t*>(d.data);
  if (d.ready) return packed;
  const int8_t* w = source();
  if (w == nullptr) {
    fail(ctx, op, "out of memory for the weights");
    return nullptr;
  }
  pack_i16_pairs(w, cols, k, packed);
  return packed;
}
#endif

struct DepthwiseShape {
  int64_t h, wd, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow;
};

// Depthwise (one input and one output channel per group), one plane: per output row, each tap
// adds its weight times a range of input pixels into an int32 row, no branches inside; then the
// row is requantized. Compiled per instruction set, where both loops vectorise.
ETRT_ISA_BODY void depthwise_plane_body(const int8_t* plane, const int8_t* taps, const DepthwiseShape& d, int32_t zp,
                                       float mult, float bias, const Requant& r, int32_t* acc, int8_t* o) {
  for (int64_t oy = 0; oy < d.oh; ++oy) {
    for (int64_t ox = 0; ox < d.ow; ++ox) acc[ox] = 0;
    for (int64_t ky = 0; ky < d.kh; ++ky) {
      const int64_t iy = oy * d.sh - d.ph + ky * d.dh;
      if (iy < 0 || iy >= d.h) continue;
      const int8_t* row = plane + iy * d.wd;
      for (int64_t kx = 0; kx < d.kw; ++kx) {
        const int64_t shift = kx * d.dw - d.pw;
        const int64_t lo = shift >= 0 ? 0 : std::min(d.ow, (-shift + d.sw - 1) / d.sw);
        const int64_t hi = d.wd - 1 - shift < 0 ? 0 : std::min(d.ow, (d.wd - 1 - shift) / d.sw + 1);
        const int32_t t = taps[ky * d.kw + kx];
        if (d.sw == 1) {
          for (int64_t ox = lo; ox < hi; ++ox) acc[ox] += (static_cast<int32_t>(row[ox + shift]) - zp) * t;
        } else {
          for (int64_t ox = lo; ox < hi; ++ox) acc[ox] += (static_cast<int32_t>(row[ox * d.sw + shift]) - zp) * t;
        }
      }
    }
    int8_t* out = o + oy * d.ow;
    for (int64_t ox = 0; ox < d.ow; ++ox) {
      float v = round_even_fast((static_cast<float>(acc[ox]) * mult + bias) * r.inv_out_scale) + r.out_zp;
      out[ox] = static_cast<int8_t>(std::min(std::max(v, r.lo), r.hi));
    }
  }
}
ETRT_ISA_DISPATCH(void, depthwise_plane,
                  (const int8_t* plane, const int8_t* taps, const DepthwiseShape& d, int32_t zp, float mult,
                   float bias, const Requant& r, int32_t* acc, int8_t* o),
                  (plane, taps, d, zp, mult, bias, r, acc, o))

void depthwise(const int8_t* x, const int8_t* w, int64_t n, int64_t c, const DepthwiseShape& d, int32_t zp,
               const Requant& r, int32_t* acc_rows, int8_t* out) {
  parallel_for(0, n * c, 1, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t ch = i % c;
      const float bias = r.bias != nullptr ? r.bias[ch] : 0.0f;
      depthwise_plane(x + i * d.h * d.wd, w + ch * d.kh * d.kw, d, zp, r.multiplier[ch], bias, r, acc_rows + i * d.ow,
                      out + i * d.oh * d.ow);
    }
  });
}

}  // namespace

namespace {

// ---------------------------------------------------------------------------------------------
// Channels-last (NHWC) int8 convolution: a pixel's channels are one contiguous row, so a 1x1
// convolution's input is the product's row matrix as it is, a kxk one unfolds by copying whole
// channel rows per tap (no transposition), and depthwise taps are vector multiply-adds over
// channels. The exporter plans NHWC activations (channels_last.py); NCHW inputs or outputs are
// transposed here.

struct ConvGeom {
  int64_t n, c, h, w, cout, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow;
};

// A few channels (a network's image input, 3): the channel count known to the compiler, so the
// interleaving vectorises instead of a byte move per value.
template <int C>
inline void interleave_planes(const int8_t* s, int8_t* d, int64_t plane) {
  for (int64_t p = 0; p < plane; ++p) {
    for (int ch = 0; ch < C; ++ch) d[p * C + ch] = s[ch * plane + p];
  }
}

ETRT_ISA_BODY void nchw_to_nhwc_image_body(const int8_t* s, int8_t* d, int64_t c, int64_t plane) {
  switch (c) {
    case 2: return interleave_planes<2>(s, d, plane);
    case 3: return interleave_planes<3>(s, d, plane);
    case 4: return interleave_planes<4>(s, d, plane);
    default: break;
  }
  for (int64_t p = 0; p < plane; ++p) {
    for (int64_t ch = 0; ch < c; ++ch) d[p * c + ch] = s[ch * plane + p];
  }
}
ETRT_ISA_DISPATCH(void, nchw_to_nhwc_image, (const int8_t* s, int8_t* d, int64_t c, int64_t plane),
                  (s, d, c, plane))

void nchw_to_nhwc(const int8_t* src, int64_t n, int64_t c, int64_t plane, int8_t* dst) {
  for (int64_t b = 0; b < n; ++b) nchw_to_nhwc_image(src + b * c * plane, dst + b * c * plane, c, plane);
}

void nhwc_to_nchw(const int8_t* src, int64_t n, int64_t c, int64_t plane, int8_t* dst) {
  for (int64_t b = 0; b < n; ++b) {
    const int8_t* s = src + b * c * plane;
    int8_t* d = dst + b * c * plane;
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t p = 0; p < plane; ++p) d[ch * plane + p] = s[p * c + ch];
    }
  }
}

// One output pixel of a depthwise convolution: taps[t] is the input pixel's channel row (null
// for padding), wt [taps][c] the widened weights. Vectorised over channels.
ETRT_ISA_BODY void dw_nhwc_pixel_body(const int8_t* const* taps, const int16_t* wt, int64_t ntaps, int64_t c,
                                      int32_t zp, const float* mult, const float* bias, const Requant& r,
                                      int32_t* acc, int8_t* out) {
  for (int64_t ch = 0; ch < c; ++ch) acc[ch] = 0;
  for (int64_t t = 0; t < ntaps; ++t) {
    const int8_t* px = taps[t];
    if (px == nullptr) continue;
    const int16_t* wv = wt + t * c;
    for (int64_t ch = 0; ch < c; ++ch) acc[ch] += (static_cast<int32_t>(px[ch]) - zp) * wv[ch];
  }
  for (int64_t ch = 0; ch < c; ++ch) {
    const float y = static_cast<float>(acc[ch]) * mult[ch] + bias[ch];
    const float v = round_even_fast(y * r.inv_out_scale) + r.out_zp;
    out[ch] = static_cast<int8_t>(std::min(std::max(v, r.lo), r.hi));
  }
}
ETRT_ISA_DISPATCH(void, dw_nhwc_pixel,
                  (const int8_t* const* taps, const int16_t* wt, int64_t ntaps, int64_t c, int32_t zp,
                   const float* mult, const float* bias, const Requant& r, int32_t* acc, int8_t* out),
                  (taps, wt, ntaps, c, zp, mult, bias, r, acc, out))

// The same with float32 sums, kDwBlock channels at a time held in registers: (x - zero point)
// times a weight is an integer below 2^15 in magnitude, so up to kDwFloatTaps taps sum exactly
// (below 2^24) and the requantization sees the very value the int32 sum would give.
constexpr int64_t kDwBlock = 64;
constexpr int64_t kDwFloatTaps = 513;  // 513 * 255 * 128 < 2^24
ETRT_ISA_BODY void dw_nhwc_block_body(const int8_t* const* taps, const float* wt, int64_t ntaps, int64_t c,
                                      int64_t c0, int64_t width, float zp, const float* mult, const float* bias,
                                      const Requant& r, int8_t* out) {
  float acc[kDwBlock];
  for (int64_t j = 0; j < kDwBlock; ++j) acc[j] = 0.0f;
  for (int64_t t = 0; t < ntaps; ++t) {
    const int8_t* px = taps[t];
    if (px == nullptr) continue;
    px += c0;
    const float* wv = wt + t * c + c0;
    if (width == kDwBlock) {
      for (int64_t j = 0; j < kDwBlock; ++j) acc[j] += (static_cast<float>(px[j]) - zp) * wv[j];
    } else {
      for (int64_t j = 0; j < width; ++j) acc[j] += (static_cast<float>(px[j]) - zp) * wv[j];
    }
  }
  for (int64_t j = 0; j < width; ++j) {
    const float y = acc[j] * mult[c0 + j] + bias[c0 + j];
    const float v = round_even_fast(y * r.inv_out_scale) + r.out_zp;
    out[c0 + j] = static_cast<int8_t>(std::min(std::max(v, r.lo), r.hi));
  }
}
ETRT_ISA_DISPATCH(void, dw_nhwc_block,
                  (const int8_t* const* taps, const float* wt, int64_t ntaps, int64_t c, int64_t c0, int64_t width,
                   float zp, const float* mult, const float* bias, const Requant& r, int8_t* out),
                  (taps, wt, ntaps, c, c0, width, zp, mult, bias, r, out))

// The geometry of depthwise_nhwc's interior pixels.
struct DwInterior {
  int64_t pixel, tap_x, tap_y;  // byte steps: next output pixel, next kx, next ky
  int64_t kh, kw, c;
};

#if defined(__x86_64__) && defined(__GNUC__)
// dw_nhwc_block on AVX-512, its sums in registers (the compiler's version keeps them in memory).
// NV registers of 16 channels (a whole block is four).
template <int NV>
__attribute__((target("avx512f"))) void dw_block_avx512_regs(const int8_t* const* taps, const float* wt,
                                                                   int64_t ntaps, int64_t c, int64_t c0, float zp,
                                                                   const float* mult, const float* bias,
                                                                   const Requant& r, int8_t* out) {
  static_assert(NV * 16 <= kDwBlock, "at most a block");
  __m512 acc[NV];
  for (int i = 0; i < NV; ++i) acc[i] = _mm512_setzero_ps();
  const __m512 z = _mm512_set1_ps(zp);
  for (int64_t t = 0; t < ntaps; ++t) {
    const int8_t* px = taps[t];
    if (px == nullptr) continue;
    const float* wv = wt + t * c + c0;
    for (int i = 0; i < NV; ++i) {
      const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(px + c0 + 16 * i));
      const __m512 x = _mm512_sub_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(bytes)), z);
      acc[i] = _mm512_fmadd_ps(x, _mm512_loadu_ps(wv + 16 * i), acc[i]);  // integers: exact
    }
  }
  for (int i = 0; i < NV; ++i) {
    const int64_t at = c0 + 16 * i;
    __m512 y = _mm512_add_ps(_mm512_mul_ps(acc[i], _mm512_loadu_ps(mult + at)), _mm512_loadu_ps(bias + at));
    y = _mm512_mul_ps(y, _mm512_set1_ps(r.inv_out_scale));
    y = _mm512_roundscale_ps(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    y = _mm512_add_ps(y, _mm512_set1_ps(r.out_zp));
    y = _mm512_min_ps(_mm512_max_ps(y, _mm512_set1_ps(r.lo)), _mm512_set1_ps(r.hi));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + at), _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(y)));
  }
}

// A block of `width` channels, a multiple of 16; false for other widths.
bool dw_block_avx512(const int8_t* const* taps, const float* wt, int64_t ntaps, int64_t c, int64_t c0,
                          int64_t width, float zp, const float* mult, const float* bias, const Requant& r,
                          int8_t* out) {
  switch (width) {
    case 64: dw_block_avx512_regs<4>(taps, wt, ntaps, c, c0, zp, mult, bias, r, out); return true;
    case 48: dw_block_avx512_regs<3>(taps, wt, ntaps, c, c0, zp, mult, bias, r, out); return true;
    case 32: dw_block_avx512_regs<2>(taps, wt, ntaps, c, c0, zp, mult, bias, r, out); return true;
    case 16: dw_block_avx512_regs<1>(taps, wt, ntaps, c, c0, zp, mult, bias, r, out); return true;
    default: return false;
  }
}

// Interior output pixels (every tap inside the input): no tap pointers, P pixels x NV vectors
// of 16 channels summed at once (independent chains hide the multiply-add latency), x * w
// summed and zp * sum(w) (`zw`) taken off once: every term an integer below 2^24, so the value
// is the int32 sum's, as in dw_block_avx512_regs.

template <int NV, int P>
__attribute__((target("avx512f"))) void dw_interior_avx512_regs(const int8_t* x, const DwInterior& d,
                                                                 const float* wt, const float* zw, const float* mult,
                                                                 const float* bias, const Requant& r, int8_t* out,
                                                                 int64_t count) {
  int64_t p = 0;
  for (; p + P <= count; p += P) {
    __m512 acc[P][NV];
    for (int j = 0; j < P; ++j) {
      for (int i = 0; i < NV; ++i) acc[j][i] = _mm512_setzero_ps();
    }
    const int8_t* base = x + p * d.pixel;
    const float* wv = wt;
    for (int64_t ky = 0; ky < d.kh; ++ky) {
      for (int64_t kx = 0; kx < d.kw; ++kx, wv += d.c) {
        const int8_t* px = base + ky * d.tap_y + kx * d.tap_x;
        for (int i = 0; i < NV; ++i) {
          const __m512 wi = _mm512_loadu_ps(wv + 16 * i);
          for (int j = 0; j < P; ++j) {
            const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(px + j * d.pixel + 16 * i));
            acc[j][i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(bytes)), wi, acc[j][i]);
          }
        }
      }
    }
    for (int j = 0; j < P; ++j) {
      for (int i = 0; i < NV; ++i) {
        const int64_t at = 16 * i;
        const __m512 sum = _mm512_sub_ps(acc[j][i], _mm512_loadu_ps(zw + at));
        __m512 y = _mm512_add_ps(_mm512_mul_ps(sum, _mm512_loadu_ps(mult + at)), _mm512_loadu_ps(bias + at));
        y = _mm512_mul_ps(y, _mm512_set1_ps(r.inv_out_scale));
        y = _mm512_roundscale_ps(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        y = _mm512_add_ps(y, _mm512_set1_ps(r.out_zp));
        y = _mm512_min_ps(_mm512_max_ps(y, _mm512_set1_ps(r.lo)), _mm512_set1_ps(r.hi));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + (p + j) * d.c + at),
                         _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(y)));
      }
    }
  }
  if (P > 1 && p < count) {
    dw_interior_avx512_regs<NV, 1>(x + p * d.pixel, d, wt, zw, mult, bias, r, out + p * d.c, count - p);
  }
}

// The same on AVX2 (with FMA): vectors of 8 channels.
template <int NV, int P>
__attribute__((target("avx2,fma"))) void dw_interior_avx2_regs(const int8_t* x, const DwInterior& d, const float* wt,
                                                              const float* zw, const float* mult, const float* bias,
                                                              const Requant& r, int8_t* out, int64_t count) {
  int64_t p = 0;
  for (; p + P <= count; p += P) {
    __m256 acc[P][NV];
    for (int j = 0; j < P; ++j) {
      for (int i = 0; i < NV; ++i) acc[j][i] = _mm256_setzero_ps();
    }
    const int8_t* base = x + p * d.pixel;
    const float* wv = wt;
    for (int64_t ky = 0; ky < d.kh; ++ky) {
      for (int64_t kx = 0; kx < d.kw; ++kx, wv += d.c) {
        const int8_t* px = base + ky * d.tap_y + kx * d.tap_x;
        for (int i = 0; i < NV; ++i) {
          const __m256 wi = _mm256_loadu_ps(wv + 8 * i);
          for (int j = 0; j < P; ++j) {
            const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(px + j * d.pixel + 8 * i));
            acc[j][i] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes)), wi, acc[j][i]);
          }
        }
      }
    }
    for (int j = 0; j < P; ++j) {
      for (int i = 0; i < NV; ++i) {
        const int64_t at = 8 * i;
        const __m256 sum = _mm256_sub_ps(acc[j][i], _mm256_loadu_ps(zw + at));
        __m256 y = _mm256_add_ps(_mm256_mul_ps(sum, _mm256_loadu_ps(mult + at)), _mm256_loadu_ps(bias + at));
        y = _mm256_mul_ps(y, _mm256_set1_ps(r.inv_out_scale));
        y = _mm256_round_ps(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        y = _mm256_add_ps(y, _mm256_set1_ps(r.out_zp));
        y = _mm256_min_ps(_mm256_max_ps(y, _mm256_set1_ps(r.lo)), _mm256_set1_ps(r.hi));
        const __m256i q = _mm256_cvtps_epi32(y);  // within int8 already: the packs do not saturate
        const __m128i q16 = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
        _mm_storel_epi64(reinterpret_cast<__m128i*>(out + (p + j) * d.c + at), _mm_packs_epi16(q16, q16));
      }
    }
  }
  if (P > 1 && p < count) {
    dw_interior_avx2_regs<NV, 1>(x + p * d.pixel, d, wt, zw, mult, bias, r, out + p * d.c, count - p);
  }
}

// Rows of output pixels at stride S of a KW-wide window (dilation 1), one vector of channels:
// per window row, the KW weights stay in registers and each input column is widened once and
// multiplied into every one of the P outputs it covers (the interior kernels above widen it once
// per tap: KW / S times). Sums x * w, zp * sum(w) (`zw`) taken off at the end, as there: exact.
__attribute__((target("avx512f"))) static inline __attribute__((always_inline)) __m512 dw_load16(const int8_t* p) {
  return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
}
__attribute__((target("avx512f"))) static inline __attribute__((always_inline)) __m512 dw_load16(const float* p) {
  return _mm512_loadu_ps(p);
}
__attribute__((target("avx2,fma"))) static inline __attribute__((always_inline)) __m256 dw_load8(const int8_t* p) {
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}
__attribute__((target("avx2,fma"))) static inline __attribute__((always_inline)) __m256 dw_load8(const float* p) {
  return _mm256_loadu_ps(p);
}

template <int KW, int S, int P, typename T>
__attribute__((target("avx512f"))) void dw_rows_avx512(const T* x, int64_t c, int64_t tap_y, int64_t kh,
                                                       const float* wt, const float* zw, const float* mult,
                                                       const float* bias, const Requant& r, int8_t* out,
                                                       int64_t count) {
  constexpr int kCols = (P - 1) * S + KW;
  int64_t p = 0;
  for (; p + P <= count; p += P) {
    __m512 acc[P];
    for (int q = 0; q < P; ++q) acc[q] = _mm512_setzero_ps();
    const T* base = x + p * S * c;
    for (int64_t ky = 0; ky < kh; ++ky) {
      __m512 w[KW];
      for (int kx = 0; kx < KW; ++kx) w[kx] = _mm512_loadu_ps(wt + (ky * KW + kx) * c);
      const T* row = base + ky * tap_y;
#pragma GCC unroll 32  // whole: the sums must stay in registers (GCC peels at most 16 by itself)
      for (int j = 0; j < kCols; ++j) {
        const __m512 xv = dw_load16(row + j * c);
#pragma GCC unroll 16
        for (int q = 0; q < P; ++q) {
          const int kx = j - q * S;
          if (kx >= 0 && kx < KW) acc[q] = _mm512_fmadd_ps(xv, w[kx], acc[q]);
        }
      }
    }
    const __m512 z = _mm512_loadu_ps(zw), m = _mm512_loadu_ps(mult), b = _mm512_loadu_ps(bias);
    for (int q = 0; q < P; ++q) {
      __m512 y = _mm512_add_ps(_mm512_mul_ps(_mm512_sub_ps(acc[q], z), m), b);
      y = _mm512_mul_ps(y, _mm512_set1_ps(r.inv_out_scale));
      y = _mm512_roundscale_ps(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      y = _mm512_add_ps(y, _mm512_set1_ps(r.out_zp));
      y = _mm512_min_ps(_mm512_max_ps(y, _mm512_set1_ps(r.lo)), _mm512_set1_ps(r.hi));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + (p + q) * c), _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(y)));
    }
  }
}

// The same on AVX2 (with FMA), 8 channels: P outputs, KW weights and the column in 16 registers.
template <int KW, int S, int P, typename T>
__attribute__((target("avx2,fma"))) void dw_rows_avx2(const T* x, int64_t c, int64_t tap_y, int64_t kh,
                                                     const float* wt, const float* zw, const float* mult,
                                                     const float* bias, const Requant& r, int8_t* out,
                                                     int64_t count) {
  constexpr int kCols = (P - 1) * S + KW;
  int64_t p = 0;
  for (; p + P <= count; p += P) {
    __m256 acc[P];
    for (int q = 0; q < P; ++q) acc[q] = _mm256_setzero_ps();
    const T* base = x + p * S * c;
    for (int64_t ky = 0; ky < kh; ++ky) {
      __m256 w[KW];
      for (int kx = 0; kx < KW; ++kx) w[kx] = _mm256_loadu_ps(wt + (ky * KW + kx) * c);
      const T* row = base + ky * tap_y;
#pragma GCC unroll 32
      for (int j = 0; j < kCols; ++j) {
        const __m256 xv = dw_load8(row + j * c);
#pragma GCC unroll 16
        for (int q = 0; q < P; ++q) {
          const int kx = j - q * S;
          if (kx >= 0 && kx < KW) acc[q] = _mm256_fmadd_ps(xv, w[kx], acc[q]);
        }
      }
    }
    const __m256 z = _mm256_loadu_ps(zw), m = _mm256_loadu_ps(mult), b = _mm256_loadu_ps(bias);
    for (int q = 0; q < P; ++q) {
      __m256 y = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(acc[q], z), m), b);
      y = _mm256_mul_ps(y, _mm256_set1_ps(r.inv_out_scale));
      y = _mm256_round_ps(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      y = _mm256_add_ps(y, _mm256_set1_ps(r.out_zp));
      y = _mm256_min_ps(_mm256_max_ps(y, _mm256_set1_ps(r.lo)), _mm256_set1_ps(r.hi));
      const __m256i qv = _mm256_cvtps_epi32(y);  // within int8 already: the packs do not saturate
      const __m128i q16 = _mm_packs_epi32(_mm256_castsi256_si128(qv), _mm256_extracti128_si256(qv, 1));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + (p + q) * c), _mm_packs_epi16(q16, q16));
    }
  }
}

template <typename T>
using DwRowsFn = void (*)(const T*, int64_t, int64_t, int64_t, const float*, const float*, const float*,
                          const float*, const Requant&, int8_t*, int64_t);

// The R < P pixels a row leaves take one call of R at once: a 7-pixel row as 4 + 2 + 1 would
// leave single chains of kh * KW dependent multiply-adds (latency-bound at 7x7).
template <int KW, int S, int R, typename T>
void dw_rows_rest(bool avx512, const T* x, const DwInterior& d, const float* wt, const float* zw, const float* mult,
                  const float* bias, const Requant& r, int8_t* out, int64_t rest) {
  if constexpr (R > 0) {
    if (rest == R) {
      if (avx512) return dw_rows_avx512<KW, S, R, T>(x, d.c, d.tap_y, d.kh, wt, zw, mult, bias, r, out, R);
      return dw_rows_avx2<KW, S, R, T>(x, d.c, d.tap_y, d.kh, wt, zw, mult, bias, r, out, R);
    }
    dw_rows_rest<KW, S, R - 1, T>(avx512, x, d, wt, zw, mult, bias, r, out, rest);
  }
}

template <int KW, int S, int P, typename T>
bool dw_rows_all(DwRowsFn<T> fn, const T* x, const DwInterior& d, const float* wt, const float* zw,
                 const float* mult, const float* bias, const Requant& r, int8_t* out, int64_t count) {
  const int64_t whole = count / P * P;
  if (whole > 0) fn(x, d.c, d.tap_y, d.kh, wt, zw, mult, bias, r, out, whole);
  const bool avx512 = fn == static_cast<DwRowsFn<T>>(dw_rows_avx512<KW, S, P, T>);
  dw_rows_rest<KW, S, P - 1, T>(avx512, x + whole * S * d.c, d, wt, zw, mult, bias, r, out + whole * d.c,
                                count - whole);
  return true;
}

// The windows dw_rows_* are built for: 3 and 5 wide, stride 1 or 2, no dilation.
bool dw_rows_fit(const DwInterior& d) {
  return (d.kw == 3 || d.kw == 5) && d.tap_x == d.c && (d.pixel == d.c || d.pixel == 2 * d.c);
}

// dw_rows_* for a window dw_rows_fit accepts (false for others). vec: 16 (AVX-512) or 8 (AVX2)
// channels at x, wt, ... out.
template <typename T>
bool dw_rows(int vec, const T* x, const DwInterior& d, const float* wt, const float* zw, const float* mult,
             const float* bias, const Requant& r, int8_t* out, int64_t count) {
  if (!dw_rows_fit(d)) return false;
  const int key = static_cast<int>(d.kw) * 10 + static_cast<int>(d.pixel / d.c) + (vec == 16 ? 100 : 0);
  switch (key) {
#define ETRT_DW_ROWS(K, ISA, KW, S, P) \
  case K: return dw_rows_all<KW, S, P, T>(ISA<KW, S, P, T>, x, d, wt, zw, mult, bias, r, out, count);
    ETRT_DW_ROWS(131, dw_rows_avx512, 3, 1, 8)
    ETRT_DW_ROWS(132, dw_rows_avx512, 3, 2, 8)
    ETRT_DW_ROWS(151, dw_rows_avx512, 5, 1, 8)
    ETRT_DW_ROWS(152, dw_rows_avx512, 5, 2, 8)
    ETRT_DW_ROWS(31, dw_rows_avx2, 3, 1, 8)
    ETRT_DW_ROWS(32, dw_rows_avx2, 3, 2, 8)
    ETRT_DW_ROWS(51, dw_rows_avx2, 5, 1, 6)
    ETRT_DW_ROWS(52, dw_rows_avx2, 5, 2, 6)
#undef ETRT_DW_ROWS
    default: return false;
  }
}

// Narrow blocks take several pixels at once: 8 independent sums hide the FMA latency
// (MobileNetV2's 32-channel 112x112 depthwise 261 -> 245 us).
bool dw_interior_avx2(const int8_t* x, const DwInterior& d, int64_t width, const float* wt, const float* zw,
                      const float* mult, const float* bias, const Requant& r, int8_t* out, int64_t count) {
  switch (width) {
    case 64: dw_interior_avx2_regs<8, 1>(x, d, wt, zw, mult, bias, r, out, count); return true;
    case 56: dw_interior_avx2_regs<7, 1>(x, d, wt, zw, mult, bias, r, out, count); return true;
    case 48: dw_interior_avx2_regs<6, 1>(x, d, wt, zw, mult, bias, r, out, count); return true;
    case 40: dw_interior_avx2_regs<5, 1>(x, d, wt, zw, mult, bias, r, out, count); return true;
    case 32: dw_interior_avx2_regs<4, 2>(x, d, wt, zw, mult, bias, r, out, count); return true;
    case 24: dw_interior_avx2_regs<3, 2>(x, d, wt, zw, mult, bias, r, out, count); return true;
    case 16: dw_interior_avx2_regs<2, 4>(x, d, wt, zw, mult, bias, r, out, count); return true;
    case 8: dw_interior_avx2_regs<1, 4>(x, d, wt, zw, mult, bias, r, out, count); return true;
    default: return false;
  }
}

// `count` interior pixels of one output row, for channels c0 .. c0 + width (a multiple of 16);
// false for other widths. x, wt, zw, mult, bias and out are at channel c0.
bool dw_interior_avx512(const int8_t* x, const DwInterior& d, int64_t width, const float* wt, const float* zw,
                        const float* mult, const float* bias, const Requant& r, int8_t* out, int64_t count) {
  switch (width) {
    case 64: dw_interior_avx512_regs<4, 1>(x, d, wt, zw, mult, bias, r, out, count); return true;
    case 48: dw_interior_avx512_regs<3, 1>(x, d, wt, zw, mult, bias, r, out, count); return true;
    case 32: dw_interior_avx512_regs<2, 2>(x, d, wt, zw, mult, bias, r, out, count); return true;
    case 16: dw_interior_avx512_regs<1, 4>(x, d, wt, zw, mult, bias, r, out, count); return true;
    default: return false;
  }
}
#endif

// 3x3 depthwise (stride 1 or 2) on VNNI, 64 channels at a time: each input column's three window rows
// are interleaved into four-byte groups (one per channel: rows 0, 1, 2 and a byte whose weight
// is 0), so one vpdpbusd sums a window column's three taps for 16 channels, 3 per output pixel
// where the float32 kernels take 9 multiply-adds and a conversion per input. In-lane byte and
// word unpacks build the groups (vector k holds channels 16 l + 4 k .. + 3 in lane l) and
// in-lane packs undo that order on the way out. Inputs flipped to u8 (x + 128); the sums start
// at -(zero_point + 128) * sum(w) (int32 sums wrap, so they end at the exact sum of
// (x - zero_point) * w).
struct DwVnni {
  const int8_t* wp;     // [c / 64][kx][4][16 lanes][4 rows] int8, the groups' order
  const int32_t* corr;  // [c / 64][4][16], the sums' start
  const float* mult;    // multiplier and bias, per channel in the groups' order
  const float* bias;
};
constexpr int64_t kDwVnniBlock = 64;

// The groups' channel for vector k, lane element e of a 64-channel block.
inline int64_t dw_vnni_channel(int k, int e) { return (e / 4) * 16 + k * 4 + e % 4; }

#if defined(__x86_64__) && defined(__GNUC__)
template <int S, int P>
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void dw3_vnni_regs(const int8_t* x, int64_t c, int64_t tap_y,
                                                                           const int8_t* wp, const int32_t* corr,
                                                                           const float* mult, const float* bias,
                                                                           const Requant& r, int8_t* out,
                                                                           int64_t count) {
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  const __m512 inv = _mm512_set1_ps(r.inv_out_scale), lo = _mm512_set1_ps(r.lo - r.out_zp),
               hi = _mm512_set1_ps(r.hi - r.out_zp);
  const __m512i zp16 = _mm512_set1_epi16(static_cast<int16_t>(r.out_zp));
  for (int64_t p = 0; p + P <= count; p += P) {
    __m512i acc[P][4];
    for (int k = 0; k < 4; ++k) {
      const __m512i start = _mm512_loadu_si512(corr + 16 * k);
      for (int q = 0; q < P; ++q) acc[q][k] = start;
    }
    const int8_t* col = x + p * S * c;
#pragma GCC unroll 16
    for (int j = 0; j < (P - 1) * S + 3; ++j, col += c) {
      const __m512i a = _mm512_xor_si512(_mm512_loadu_si512(col), flip);
      const __m512i b = _mm512_xor_si512(_mm512_loadu_si512(col + tap_y), flip);
      const __m512i e = _mm512_xor_si512(_mm512_loadu_si512(col + 2 * tap_y), flip);
      const __m512i ab_lo = _mm512_unpacklo_epi8(a, b), ab_hi = _mm512_unpackhi_epi8(a, b);
      const __m512i ee_lo = _mm512_unpacklo_epi8(e, e), ee_hi = _mm512_unpackhi_epi8(e, e);
      const __m512i g[4] = {_mm512_unpacklo_epi16(ab_lo, ee_lo), _mm512_unpackhi_epi16(ab_lo, ee_lo),
                            _mm512_unpacklo_epi16(ab_hi, ee_hi), _mm512_unpackhi_epi16(ab_hi, ee_hi)};
#pragma GCC unroll 16
      for (int q = 0; q < P; ++q) {
        const int kx = j - q * S;
        if (kx < 0 || kx > 2) continue;
        for (int k = 0; k < 4; ++k) {
          acc[q][k] = dpbusd(acc[q][k], g[k], _mm512_loadu_si512(wp + (kx * 4 + k) * 64));
        }
      }
    }
    for (int q = 0; q < P; ++q) {
      __m512i v[4];
      for (int k = 0; k < 4; ++k) {
        const __m512 sum = _mm512_cvtepi32_ps(acc[q][k]);  // exact: below 2^24
        __m512 y = _mm512_add_ps(_mm512_mul_ps(sum, _mm512_loadu_ps(mult + 16 * k)), _mm512_loadu_ps(bias + 16 * k));
        y = _mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(y, inv), lo), hi);
        v[k] = _mm512_cvt_roundps_epi32(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      }
      // Within [lo - zp, hi - zp] (int16), then [lo, hi] (int8): the packs do not saturate.
      const __m512i w01 = _mm512_add_epi16(_mm512_packs_epi32(v[0], v[1]), zp16);
      const __m512i w23 = _mm512_add_epi16(_mm512_packs_epi32(v[2], v[3]), zp16);
      _mm512_storeu_si512(out + (p + q) * c, _mm512_packs_epi16(w01, w23));
    }
  }
}

// The same for a last block of 32 channels (MobileNetV2's 32- and 96-channel layers), 256 bits.
template <int S, int P>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) void dw3_vnni32_regs(
    const int8_t* x, int64_t c, int64_t tap_y, const int8_t* wp, const int32_t* corr, const float* mult,
    const float* bias, const Requant& r, int8_t* out, int64_t count) {
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
  const __m256 inv = _mm256_set1_ps(r.inv_out_scale), lo = _mm256_set1_ps(r.lo - r.out_zp),
               hi = _mm256_set1_ps(r.hi - r.out_zp);
  const __m256i zp16 = _mm256_set1_epi16(static_cast<int16_t>(r.out_zp));
  for (int64_t p = 0; p + P <= count; p += P) {
    __m256i acc[P][4];
    for (int k = 0; k < 4; ++k) {
      const __m256i start = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(corr + 8 * k));
      for (int q = 0; q < P; ++q) acc[q][k] = start;
    }
    const int8_t* col = x + p * S * c;
#pragma GCC unroll 16
    for (int j = 0; j < (P - 1) * S + 3; ++j, col += c) {
      const __m256i a = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(col)), flip);
      const __m256i b = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(col + tap_y)), flip);
      const __m256i e = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(col + 2 * tap_y)), flip);
      const __m256i ab_lo = _mm256_unpacklo_epi8(a, b), ab_hi = _mm256_unpackhi_epi8(a, b);
      const __m256i ee_lo = _mm256_unpacklo_epi8(e, e), ee_hi = _mm256_unpackhi_epi8(e, e);
      const __m256i g[4] = {_mm256_unpacklo_epi16(ab_lo, ee_lo), _mm256_unpackhi_epi16(ab_lo, ee_lo),
                            _mm256_unpacklo_epi16(ab_hi, ee_hi), _mm256_unpackhi_epi16(ab_hi, ee_hi)};
#pragma GCC unroll 16
      for (int q = 0; q < P; ++q) {
        const int kx = j - q * S;
        if (kx < 0 || kx > 2) continue;
        for (int k = 0; k < 4; ++k) {
          const auto* wk = reinterpret_cast<const __m256i*>(wp + (kx * 4 + k) * 32);
          acc[q][k] = dpbusd(acc[q][k], g[k], _mm256_loadu_si256(wk));
        }
      }
    }
    for (int q = 0; q < P; ++q) {
      __m256i v[4];
      for (int k = 0; k < 4; ++k) {
        const __m256 sum = _mm256_cvtepi32_ps(acc[q][k]);
        __m256 y = _mm256_add_ps(_mm256_mul_ps(sum, _mm256_loadu_ps(mult + 8 * k)), _mm256_loadu_ps(bias + 8 * k));
        y = _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(y, inv), lo), hi);
        v[k] = _mm256_cvtps_epi32(_mm256_round_ps(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      }
      const __m256i w01 = _mm256_add_epi16(_mm256_packs_epi32(v[0], v[1]), zp16);
      const __m256i w23 = _mm256_add_epi16(_mm256_packs_epi32(v[2], v[3]), zp16);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + (p + q) * c), _mm256_packs_epi16(w01, w23));
    }
  }
}

// Runs of P output pixels, then of fewer for the rest: 64 channels (Wide) or a last 32.
template <int S, int P, bool Wide>
void dw3_vnni_all(const int8_t* x, int64_t c, int64_t tap_y, const int8_t* wp, const int32_t* corr, const float* mult,
                  const float* bias, const Requant& r, int8_t* out, int64_t count) {
  if constexpr (P > 0) {
    const int64_t whole = count / P * P;
    const auto regs = Wide ? dw3_vnni_regs<S, P> : dw3_vnni32_regs<S, P>;
    if (whole > 0) regs(x, c, tap_y, wp, corr, mult, bias, r, out, whole);
    if (count > whole) {
      dw3_vnni_all<S, P - 1, Wide>(x + whole * S * c, c, tap_y, wp, corr, mult, bias, r, out + whole * c,
                                   count - whole);
    }
  }
}
#endif

#if defined(__x86_64__) && defined(__GNUC__)
// `count` pixels of every channel through the register kernels: AVX-512 for blocks whose width
// is a multiple of 16, AVX2 vectors of 8 for the rest (72 channels: 64 + 8; 120: 64 + 56).
void dw_interior_span(bool avx512, const int8_t* x, const DwInterior& d, const float* wf, const float* zw,
                      const float* mult, const float* bias, const Requant& r, int8_t* out, int64_t count,
                      const DwVnni* vnni) {
  if (dw_rows_fit(d)) {
    int64_t c0 = 0;
    for (; vnni != nullptr && c0 + kDwVnniBlock <= d.c; c0 += kDwVnniBlock) {
      (d.pixel == d.c ? dw3_vnni_all<1, 4, true> : dw3_vnni_all<2, 4, true>)(x + c0, d.c, d.tap_y, vnni->wp + c0 * 12,
                                                                 vnni->corr + c0, vnni->mult + c0, vnni->bias + c0, r,
                                                                 out + c0, count);
    }
    if (vnni != nullptr && c0 + kDwVnniBlock / 2 <= d.c) {
      (d.pixel == d.c ? dw3_vnni_all<1, 4, false> : dw3_vnni_all<2, 4, false>)(x + c0, d.c, d.tap_y, vnni->wp + c0 * 12,
                                                                     vnni->corr + c0, vnni->mult + c0,
                                                                     vnni->bias + c0, r, out + c0, count);
      c0 += kDwVnniBlock / 2;
    }
    for (; avx512 && c0 + 16 <= d.c; c0 += 16) {
      dw_rows(16, x + c0, d, wf + c0, zw + c0, mult + c0, bias + c0, r, out + c0, count);
    }
    for (; c0 + 8 <= d.c; c0 += 8) dw_rows(8, x + c0, d, wf + c0, zw + c0, mult + c0, bias + c0, r, out + c0, count);
    return;
  }
  for (int64_t c0 = 0; c0 < d.c; c0 += kDwBlock) {
    const int64_t width = std::min(kDwBlock, d.c - c0);
    if (avx512 && width % 16 == 0) {
      dw_interior_avx512(x + c0, d, width, wf + c0, zw + c0, mult + c0, bias + c0, r, out + c0, count);
    } else {
      dw_interior_avx2(x + c0, d, width, wf + c0, zw + c0, mult + c0, bias + c0, r, out + c0, count);
    }
  }
}
#endif

// Border pixels: output columns [oa, ob) of output row `oy` of image `b` read their window from a
// band of kh rows (dilation applied) of `width` pixels, (ob - oa - 1) * sw + (kw - 1) * dw + 1,
// where what lies outside the input is the zero point. A padded tap then adds zp * w, which the
// interior kernels' zp * sum(w) takes off again: the sums are the int32 ones.
void dw_fill_band(const ConvGeom& g, const int8_t* x, int64_t b, int64_t oy, int64_t oa, int64_t width, int8_t zp,
                  int8_t* band) {
  const int64_t ix0 = oa * g.sw - g.pw;
  const int64_t lo = std::min(width, std::max<int64_t>(0, -ix0));
  const int64_t hi = std::max(lo, std::min(width, g.w - ix0));
  for (int64_t ky = 0; ky < g.kh; ++ky) {
    int8_t* row = band + ky * width * g.c;
    const int64_t iy = oy * g.sh - g.ph + ky * g.dh;
    if (iy < 0 || iy >= g.h) {
      std::memset(row, zp, static_cast<size_t>(width * g.c));
      continue;
    }
    std::memset(row, zp, static_cast<size_t>(lo * g.c));
    std::memcpy(row + lo * g.c, x + ((b * g.h + iy) * g.w + ix0 + lo) * g.c, static_cast<size_t>((hi - lo) * g.c));
    std::memset(row + hi * g.c, zp, static_cast<size_t>((width - hi) * g.c));
  }
}

// float(x - zp) for n values, compiled per instruction set.
ETRT_ISA_BODY void widen_float_body(const int8_t* s, float* d, int64_t n, int32_t zp) {
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<float>(s[i] - zp);
}
ETRT_ISA_DISPATCH(void, widen_float, (const int8_t* s, float* d, int64_t n, int32_t zp), (s, d, n, zp))

// Planes whose padded float32 copy takes at most this many bytes are widened once per image.
constexpr int64_t kDwPlaneBytes = int64_t{1} << 19;

bool depthwise_nhwc(KernelContext& ctx, const ConvGeom& g, const int8_t* x, const Tensor& weight, int32_t zp,
                    const Requant& r, int8_t* out) {
  const int8_t* w = weight.data_as<int8_t>();
  const int64_t ntaps = g.kh * g.kw, rows = g.n * g.oh;
  // [tap][channel] float32 weights and zp * sum(w) per channel, kept across runs (derived_weight).
  // 3x3 windows at stride 1 or 2 take dw3_vnni for their whole 64-channel blocks (packed weights
  // and sums' starts kept with the float32 ones).
  const bool vnni3 = int8_vnni_enabled() && g.kh == 3 && g.kw == 3 && (g.sw == 1 || g.sw == 2) && g.dw == 1 &&
                     g.c >= 32;
  // Whole 64-channel blocks, then a 32-channel one when 32 or more channels are left.
  const int64_t vchannels = vnni3 ? g.c / kDwVnniBlock * kDwVnniBlock + (g.c % kDwVnniBlock >= 32 ? 32 : 0) : 0;
  const size_t float_bytes = static_cast<size_t>((ntaps + 1) * g.c) * sizeof(float);
  const Derived d = derived_weight(ctx, weight, Layout::kDepthwise,
                                   float_bytes + static_cast<size_t>(vchannels * (12 + 4)),
                                   static_cast<uint8_t>(zp));
  auto* zeros = static_cast<float*>(ctx.allocate_temp(static_cast<size_t>(g.c) * sizeof(float)));
  if (d.data == nullptr || zeros == nullptr) return false;
  auto* wf = static_cast<float*>(d.data);
  float* zw = wf + ntaps * g.c;
  for (int64_t ch = 0; ch < g.c; ++ch) zeros[ch] = 0.0f;
  for (int64_t ch = 0; !d.ready && ch < g.c; ++ch) {
    int32_t wsum = 0;
    for (int64_t t = 0; t < ntaps; ++t) {
      wf[t * g.c + ch] = w[ch * ntaps + t];
      wsum += w[ch * ntaps + t];
    }
    zw[ch] = static_cast<float>(zp * wsum);
  }
  auto* vnni_wp = static_cast<int8_t*>(d.data) + float_bytes;
  auto* vnni_corr = reinterpret_cast<int32_t*>(vnni_wp + vchannels * 12);
  for (int64_t b0 = 0; !d.ready && b0 < vchannels; b0 += kDwVnniBlock) {
    const int bw = static_cast<int>(std::min(kDwVnniBlock, vchannels - b0)), lanes = bw / 4;
    for (int k = 0; k < 4; ++k) {
      for (int e = 0; e < lanes; ++e) {
        const int64_t ch = b0 + dw_vnni_channel(k, e);
        const int8_t* wc = w + ch * 9;
        int32_t wsum = 0;
        for (int t = 0; t < 9; ++t) wsum += wc[t];
        // int32 arithmetic that wraps as the sums do (unsigned, then back).
        vnni_corr[b0 + k * lanes + e] =
            static_cast<int32_t>(0u - static_cast<uint32_t>(zp + 128) * static_cast<uint32_t>(wsum));
        for (int kx = 0; kx < 3; ++kx) {
          int8_t* group = vnni_wp + b0 * 12 + (kx * 4 + k) * bw + e * 4;
          for (int ky = 0; ky < 3; ++ky) group[ky] = wc[ky * 3 + kx];
          group[3] = 0;
        }
      }
    }
  }
  const bool exact_float = ntaps <= kDwFloatTaps;
  const bool portable = int8_portable_only();
  const bool avx512 = !portable && isa_level() >= 2;
  const float* bias = r.bias != nullptr ? r.bias : zeros;
  // The register kernels take whole vectors of 8 channels (16 at AVX-512, 8 for a block's tail).
  const bool registers = exact_float && !portable && isa_level() >= 1 && g.c % 8 == 0;
  (void)registers, (void)avx512;
#if defined(__x86_64__) && defined(__GNUC__)
  if (registers) {
    // Output columns [ox_lo, ox_hi) read inside the input at every kx (none when the kernel's
    // span is wider than the padded-on-one-side input).
    const bool any_inside = g.w - 1 - (g.kw - 1) * g.dw + g.pw >= 0;
    const int64_t ox_lo = std::min(g.ow, (g.pw + g.sw - 1) / g.sw);
    const int64_t ox_hi =
        any_inside ? std::max(ox_lo, std::min(g.ow, (g.w - 1 - (g.kw - 1) * g.dw + g.pw) / g.sw + 1)) : ox_lo;
    const DwInterior di{g.sw * g.c, g.dw * g.c, g.dh * g.w * g.c, g.kh, g.kw, g.c};
    const int64_t band_w = (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1;
    const int64_t band_bytes = g.kh * band_w * g.c;
    const int64_t threads = parallel_num_threads();
    const int64_t parts = std::max<int64_t>(1, std::min(rows, threads * kPartsPerThread));
    const int64_t slots = std::max<int64_t>(1, std::min(parts, threads));
    auto* bands = static_cast<int8_t*>(ctx.allocate_temp(static_cast<size_t>(slots * band_bytes)));
    if (bands == nullptr) return false;
    const auto zp8 = static_cast<int8_t>(zp);
    DwVnni vnni_data{vnni_wp, vnni_corr, nullptr, nullptr};
    const DwVnni* vnni = nullptr;
    if (vchannels > 0) {
      auto* mb = static_cast<float*>(ctx.allocate_temp(static_cast<size_t>(2 * vchannels) * sizeof(float)));
      if (mb == nullptr) return false;
      for (int64_t b0 = 0; b0 < vchannels; b0 += kDwVnniBlock) {
        const int lanes = static_cast<int>(std::min(kDwVnniBlock, vchannels - b0)) / 4;
        for (int k = 0; k < 4; ++k) {
          for (int e = 0; e < lanes; ++e) {
            const int64_t at = b0 + k * lanes + e, ch = b0 + dw_vnni_channel(k, e);
            mb[at] = r.multiplier[ch];
            mb[vchannels + at] = bias[ch];
          }
        }
      }
      vnni_data.mult = mb;
      vnni_data.bias = mb + vchannels;
      vnni = &vnni_data;
    }
    // A small plane (MobileNetV3's 5x5 layers at 14x14 and 7x7): the image's padded window
    // area widened once to float32 x - zp (padding 0), so each input value is widened once,
    // not once per window row it falls in; the rows kernels then only load and multiply.
    const int64_t plane_h = (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1;
    const bool float_plane = !vnni3 && (g.kw == 3 || g.kw == 5) && g.dw == 1 && (g.sw == 1 || g.sw == 2) &&
                             plane_h * band_w * g.c * static_cast<int64_t>(sizeof(float)) <= kDwPlaneBytes;
    if (float_plane) {
      auto* plane = static_cast<float*>(ctx.allocate_temp(static_cast<size_t>(plane_h * band_w * g.c) * sizeof(float)));
      if (plane == nullptr) return false;
      const int64_t lo = std::min(band_w, g.pw), hi = std::max(lo, std::min(band_w, g.w + g.pw));
      const DwInterior pd{g.sw * g.c, g.c, g.dh * band_w * g.c, g.kh, g.kw, g.c};
      for (int64_t b = 0; b < g.n; ++b) {
        parallel_for(0, plane_h, 1, [&](int64_t i0, int64_t i1) {
          for (int64_t i = i0; i < i1; ++i) {
            float* row = plane + i * band_w * g.c;
            const int64_t iy = i - g.ph;
            if (iy < 0 || iy >= g.h) {
              std::fill(row, row + band_w * g.c, 0.0f);
              continue;
            }
            std::fill(row, row + lo * g.c, 0.0f);
            widen_float(x + ((b * g.h + iy) * g.w + lo - g.pw) * g.c, row + lo * g.c, (hi - lo) * g.c, zp);
            std::fill(row + hi * g.c, row + band_w * g.c, 0.0f);
          }
        });
        parallel_for(0, g.oh, 1, [&](int64_t y0, int64_t y1) {
          for (int64_t oy = y0; oy < y1; ++oy) {
            const float* x0 = plane + oy * g.sh * band_w * g.c;
            int8_t* o0 = out + (b * g.oh + oy) * g.ow * g.c;
            int64_t c0 = 0;
            for (; avx512 && c0 + 16 <= g.c; c0 += 16) {
              dw_rows(16, x0 + c0, pd, wf + c0, zeros + c0, r.multiplier + c0, bias + c0, r, o0 + c0, g.ow);
            }
            for (; c0 < g.c; c0 += 8) {
              dw_rows(8, x0 + c0, pd, wf + c0, zeros + c0, r.multiplier + c0, bias + c0, r, o0 + c0, g.ow);
            }
          }
        });
      }
      return true;
    }
    run_parts_in_slots(parts, slots, [&](int64_t part, int64_t slot) {
      int8_t* band = bands + slot * band_bytes;
      auto banded = [&](int64_t b, int64_t oy, int64_t oa, int64_t ob) {
        const int64_t width = (ob - oa - 1) * g.sw + (g.kw - 1) * g.dw + 1;
        dw_fill_band(g, x, b, oy, oa, width, zp8, band);
        const DwInterior bd{g.sw * g.c, g.dw * g.c, width * g.c, g.kh, g.kw, g.c};
        dw_interior_span(avx512, band, bd, wf, zw, r.multiplier, bias, r, out + ((b * g.oh + oy) * g.ow + oa) * g.c,
                         ob - oa, vnni);
      };
      for (int64_t row = rows * part / parts; row < rows * (part + 1) / parts; ++row) {
        const int64_t b = row / g.oh, oy = row % g.oh;
        const int64_t iy0 = oy * g.sh - g.ph;
        const bool rows_inside = iy0 >= 0 && iy0 + (g.kh - 1) * g.dh < g.h;
        if (!rows_inside || ox_hi <= ox_lo) {
          banded(b, oy, 0, g.ow);
          continue;
        }
        if (ox_lo > 0) banded(b, oy, 0, ox_lo);
        dw_interior_span(avx512, x + ((b * g.h + iy0) * g.w + ox_lo * g.sw - g.pw) * g.c, di, wf, zw, r.multiplier,
                         bias, r, out + ((b * g.oh + oy) * g.ow + ox_lo) * g.c, ox_hi - ox_lo, vnni);
        if (ox_hi < g.ow) banded(b, oy, ox_hi, g.ow);
      }
    });
    return true;
  }
#endif
  // Per pixel: tap pointers (null for padding), float32 blocks where the sums stay exact.
  auto* wt = static_cast<int16_t*>(ctx.allocate_temp(static_cast<size_t>(ntaps * g.c) * sizeof(int16_t)));
  auto* acc = static_cast<int32_t*>(ctx.allocate_temp(static_cast<size_t>(rows * g.c) * sizeof(int32_t)));
  auto* taps = static_cast<const int8_t**>(ctx.allocate_temp(static_cast<size_t>(rows * ntaps) * sizeof(int8_t*)));
  if (wt == nullptr || acc == nullptr || taps == nullptr) return false;
  for (int64_t ch = 0; ch < g.c; ++ch) {
    for (int64_t t = 0; t < ntaps; ++t) wt[t * g.c + ch] = w[ch * ntaps + t];
  }
  parallel_for(0, rows, 1, [&](int64_t r0, int64_t r1) {
    for (int64_t row = r0; row < r1; ++row) {
      const int64_t b = row / g.oh, oy = row % g.oh;
      const int8_t** tp = taps + row * ntaps;
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        for (int64_t ky = 0; ky < g.kh; ++ky) {
          const int64_t iy = oy * g.sh - g.ph + ky * g.dh;
          for (int64_t kx = 0; kx < g.kw; ++kx) {
            const int64_t ix = ox * g.sw - g.pw + kx * g.dw;
            const bool inside = iy >= 0 && iy < g.h && ix >= 0 && ix < g.w;
            tp[ky * g.kw + kx] = inside ? x + ((b * g.h + iy) * g.w + ix) * g.c : nullptr;
          }
        }
        int8_t* o = out + ((b * g.oh + oy) * g.ow + ox) * g.c;
        if (!exact_float) {
          dw_nhwc_pixel(tp, wt, ntaps, g.c, zp, r.multiplier, bias, r, acc + row * g.c, o);
          continue;
        }
        for (int64_t c0 = 0; c0 < g.c; c0 += kDwBlock) {
#if defined(__x86_64__) && defined(__GNUC__)
          if (avx512 && dw_block_avx512(tp, wf, ntaps, g.c, c0, std::min(kDwBlock, g.c - c0),
                                        static_cast<float>(zp), r.multiplier, bias, r, o)) {
            continue;
          }
#endif
          dw_nhwc_block(tp, wf, ntaps, g.c, c0, std::min(kDwBlock, g.c - c0), static_cast<float>(zp), r.multiplier,
                        bias, r, o);
        }
      }
    }
  });
  return true;
}

// memcpy, with fixed-size moves below 32 bytes: a few channels per tap (a network's first
// convolution, 3 channels) would otherwise pay a library call per tap.
inline void copy_bytes(int8_t* d, const int8_t* s, int64_t n) {
  if (n >= 32) {
    std::memcpy(d, s, static_cast<size_t>(n));
  } else if (n >= 16) {
    std::memcpy(d, s, 16);
    std::memcpy(d + n - 16, s + n - 16, 16);
  } else if (n >= 8) {
    std::memcpy(d, s, 8);
    std::memcpy(d + n - 8, s + n - 8, 8);
  } else if (n >= 4) {
    std::memcpy(d, s, 4);
    std::memcpy(d + n - 4, s + n - 4, 4);
  } else if (n > 0) {
    d[0] = s[0];
    d[n / 2] = s[n / 2];
    d[n - 1] = s[n - 1];
  }
}

// x - zero_point widened to int16, compiled per instruction set (vpmovsxbw where there is one).
ETRT_ISA_BODY void widen_minus_body(const int8_t* s, int16_t* d, int64_t n, int32_t zp) {
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<int16_t>(s[i] - zp);
}
ETRT_ISA_DISPATCH(void, widen_minus, (const int8_t* s, int16_t* d, int64_t n, int32_t zp), (s, d, n, zp))

// A run of n input values as a row holds them: int8 as they are, int16 as x - zero_point.
inline void copy_taps(int8_t* d, const int8_t* s, int64_t n, int32_t) { copy_bytes(d, s, n); }
inline void copy_taps(int16_t* d, const int8_t* s, int64_t n, int32_t zp) {
  if (n >= 16) return widen_minus(s, d, n, zp);
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<int16_t>(s[i] - zp);  // a few channels: no call
}

// Row p of `rows` (row_len apart): output pixel p's taps in (ky, kx, channel) order (int8 as
// stored, or int16 x - zp), padding taps `pad`, then zeros to row_len.
template <typename T>
void unfold_nhwc(const ConvGeom& g, const int8_t* x, T* rows, int64_t row_len, int32_t zp, T pad) {
  const int64_t k = g.kh * g.kw * g.c;
  parallel_for(0, g.n * g.oh, 1, [&](int64_t r0, int64_t r1) {
    for (int64_t row = r0; row < r1; ++row) {
      const int64_t b = row / g.oh, oy = row % g.oh;
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        T* dst = rows + (row * g.ow + ox) * row_len;
        const int64_t ix0 = ox * g.sw - g.pw;
        for (int64_t ky = 0; ky < g.kh; ++ky) {
          const int64_t iy = oy * g.sh - g.ph + ky * g.dh;
          // A kernel row's taps inside the input are adjacent pixels: one copy.
          if (g.dw == 1 && iy >= 0 && iy < g.h && ix0 >= 0 && ix0 + g.kw <= g.w) {
            copy_taps(dst, x + ((b * g.h + iy) * g.w + ix0) * g.c, g.kw * g.c, zp);
            dst += g.kw * g.c;
            continue;
          }
          for (int64_t kx = 0; kx < g.kw; ++kx, dst += g.c) {
            const int64_t ix = ox * g.sw - g.pw + kx * g.dw;
            if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) {
              std::fill(dst, dst + g.c, pad);
              continue;
            }
            copy_taps(dst, x + ((b * g.h + iy) * g.w + ix) * g.c, g.c, zp);
          }
        }
        std::fill(dst, dst + (row_len - k), T{0});
      }
    }
  });
}

#if defined(__x86_64__) && defined(__GNUC__)
// MR adjacent output pixels of one output row read straight from a zero-point-padded
// channels-last copy of the input stored as u8 (x + 128): pixel i's kernel row ky is kw * c
// adjacent bytes at x + i * step + ky * row_step, taken as kq dwords (the last reaching up to 3
// bytes past it, which meet the packing's zero weights). NB column blocks of 16 output channels
// (b0, b1: their packed weights), requantized in registers as vnni_tile_requant does.
template <int MR, int NB>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) void vnni_tile_direct(
    const uint8_t* x, int64_t step, int64_t row_step, int64_t kh, int64_t kq, const int8_t* b0, const int8_t* b1,
    const int32_t* wsum, int32_t a_zero, const Requant& r, int64_t n, int64_t nr, int8_t* out, int64_t mstride) {
  __mmask16 mask[NB];
  __m512i acc[MR][NB];
  vnni_start<MR, NB>(acc, mask, wsum, a_zero, nr);
  for (int64_t ky = 0; ky < kh; ++ky, b0 += kq * 64, b1 += kq * 64) {
    const uint8_t* xr = x + ky * row_step;
    for (int64_t q = 0; q < kq; ++q) {
      __m512i w[NB];
      w[0] = _mm512_loadu_si512(b0 + q * 64);
      if (NB == 2) w[NB - 1] = _mm512_loadu_si512(b1 + q * 64);
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) {
        int32_t four;
        std::memcpy(&four, xr + i * step + q * 4, 4);
        const __m512i av = _mm512_set1_epi32(four);
#pragma GCC unroll 2
        for (int j = 0; j < NB; ++j) acc[i][j] = dpbusd(acc[i][j], av, w[j]);
      }
    }
  }
  vnni_requant_store<MR, NB>(acc, mask, r, n, out, mstride);
}

// A convolution of few input channels (a network's first, 3 -> 16 at 3x3 stride 2) on VNNI:
// its unfold copied 9-byte pieces per pixel and kernel row (as long as the product itself), so
// the tiles read the input in place from a padded copy, each kernel row's taps zero-padded to
// whole dwords in the packed weights.
template <typename Source>
bool vnni_direct_nhwc(KernelContext& ctx, const char* op, const ConvGeom& g, const int8_t* x, const Tensor& weight,
                      Source&& weight_rows, int32_t zp, const Requant& r, int8_t* out) {
  const int64_t row_bytes = g.kw * g.c, kq = (row_bytes + 3) / 4, kp = g.kh * kq * 4;
  const int64_t hp = (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1, wp = (g.ow - 1) * g.sw + g.kw;
  const int64_t plane = hp * wp * g.c;
  Packed pk;
  const bool packed = pack_weights(ctx, op, weight, Layout::kVnniDirect, [&]() -> const int8_t* {
    const int8_t* wk = weight_rows();
    auto* wd = static_cast<int8_t*>(ctx.allocate_temp(static_cast<size_t>(g.cout * kp)));
    if (wk == nullptr || wd == nullptr) return nullptr;
    std::memset(wd, 0, static_cast<size_t>(g.cout * kp));
    for (int64_t row = 0; row < g.cout * g.kh; ++row) {
      std::memcpy(wd + row * kq * 4, wk + row * row_bytes, static_cast<size_t>(row_bytes));
    }
    return wd;
  }, 1, g.cout, kp, &pk);
  if (!packed) return true;  // failed with its message
  // The copy holds x + 128 as u8 (vpdpbusd's unsigned operand): no flip per broadcast.
  auto* pad = static_cast<uint8_t*>(ctx.allocate_temp(static_cast<size_t>(g.n * plane + 64)));
  if (pad == nullptr) return false;
  std::memset(pad, static_cast<uint8_t>(zp + 128), static_cast<size_t>(g.n * plane + 64));
  const int64_t cols = std::max<int64_t>(0, std::min(g.w, wp - g.pw));
  for (int64_t b = 0; b < g.n; ++b) {
    for (int64_t iy = 0; iy < g.h && iy + g.ph < hp; ++iy) {
      uint8_t* d = pad + b * plane + ((iy + g.ph) * wp + g.pw) * g.c;
      const int8_t* s = x + (b * g.h + iy) * g.w * g.c;
      for (int64_t i = 0; i < cols * g.c; ++i) d[i] = static_cast<uint8_t>(s[i] ^ static_cast<int8_t>(0x80));
    }
  }
  const int64_t step = g.sw * g.c, row_step = g.dh * wp * g.c;
  parallel_for(0, g.n * g.oh, 1, [&](int64_t r0, int64_t r1) {
    for (int64_t row = r0; row < r1; ++row) {
      const int64_t b = row / g.oh, oy = row % g.oh;
      const uint8_t* base = pad + b * plane + oy * g.sh * wp * g.c;
      for (int64_t ox = 0; ox < g.ow; ox += kMr) {
        const int64_t mr = std::min(kMr, g.ow - ox);
        const uint8_t* a = base + ox * step;
        for (int64_t n = 0; n < g.cout; n += kNr) {
          const int8_t* b0 = pk.data + (n / 16) * (kp / 4) * 64;
          const int8_t* b1 = b0 + (kp / 4) * 64;
          const int64_t nr = std::min(kNr, g.cout - n);
          int8_t* o = out + (row * g.ow + ox) * g.cout + n;
          const int32_t* ws = pk.wsum + n;
          if (nr <= 16) {  // one vector: the second would multiply the packing's zeros
            if (mr == kMr) {
              vnni_tile_direct<kMr, 1>(a, step, row_step, g.kh, kq, b0, b1, ws, zp + 128, r, n, nr, o, g.cout);
            } else {
              for (int64_t i = 0; i < mr; ++i) {
                vnni_tile_direct<1, 1>(a + i * step, step, row_step, g.kh, kq, b0, b1, ws, zp + 128, r, n, nr,
                                       o + i * g.cout, g.cout);
              }
            }
          } else if (mr == kMr) {
            vnni_tile_direct<kMr, 2>(a, step, row_step, g.kh, kq, b0, b1, ws, zp + 128, r, n, nr, o, g.cout);
          } else {
            for (int64_t i = 0; i < mr; ++i) {
              vnni_tile_direct<1, 2>(a + i * step, step, row_step, g.kh, kq, b0, b1, ws, zp + 128, r, n, nr,
                                     o + i * g.cout, g.cout);
            }
          }
        }
      }
    }
  });
  return true;
}
#endif

#if defined(__x86_64__) && defined(__GNUC__)
// The same without VNNI: MR adjacent output pixels from a padded int16 copy of x - zero_point
// (padding 0), each kernel row taken as kq2 pairs (the last reaching one value past it, which
// meets a zero weight) by avx2_tile_step.
template <int MR>
ETRT_AVX2_TARGET void avx2_tile_direct(const int16_t* x, int64_t step, int64_t row_step, int64_t kh, int64_t kq2,
                                       const int16_t* b, int32_t* acc_out) {
  __m256i acc[MR][2];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_si256();
  for (int64_t ky = 0; ky < kh; ++ky, b += kq2 * 32) {
#pragma GCC unroll 1
    for (int64_t j = 0; j < kq2; ++j) avx2_tile_step<MR>(acc, x + ky * row_step, step, b, j);
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc_out + i * 16), acc[i][0]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc_out + i * 16 + 8), acc[i][1]);
  }
}

template <typename Source>
bool avx2_direct_nhwc(KernelContext& ctx, const char* op, const ConvGeom& g, const int8_t* x, const Tensor& weight,
                      Source&& weight_rows, int32_t zp, const Requant& r, int8_t* out) {
  const int64_t row_vals = g.kw * g.c, kq2 = (row_vals + 1) / 2, kp = g.kh * kq2 * 2;
  const int64_t hp = (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1, wp = (g.ow - 1) * g.sw + g.kw;
  const int64_t plane = hp * wp * g.c;
  const int16_t* packed = pack_pairs(ctx, op, weight, Layout::kPairsDirect, [&]() -> const int8_t* {
    const int8_t* wk = weight_rows();
    auto* wd = static_cast<int8_t*>(ctx.allocate_temp(static_cast<size_t>(g.cout * kp)));
    if (wk == nullptr || wd == nullptr) return nullptr;
    std::memset(wd, 0, static_cast<size_t>(g.cout * kp));
    for (int64_t row = 0; row < g.cout * g.kh; ++row) {
      std::memcpy(wd + row * kq2 * 2, wk + row * row_vals, static_cast<size_t>(row_vals));
    }
    return wd;
  }, g.cout, kp);
  if (packed == nullptr) return true;  // failed with its message
  auto* pad = static_cast<int16_t*>(ctx.allocate_temp(static_cast<size_t>(g.n * plane + 16) * sizeof(int16_t)));
  if (pad == nullptr) return false;
  std::memset(pad, 0, static_cast<size_t>(g.n * plane + 16) * sizeof(int16_t));
  const int64_t cols = std::max<int64_t>(0, std::min(g.w, wp - g.pw));
  for (int64_t b = 0; b < g.n; ++b) {
    for (int64_t iy = 0; iy < g.h && iy + g.ph < hp; ++iy) {
      widen_minus(x + (b * g.h + iy) * g.w * g.c, pad + b * plane + ((iy + g.ph) * wp + g.pw) * g.c, cols * g.c, zp);
    }
  }
  const int64_t step = g.sw * g.c, row_step = g.dh * wp * g.c;
  parallel_for(0, g.n * g.oh, 1, [&](int64_t r0, int64_t r1) {
    alignas(32) int32_t acc[kAvx2Mr * 16];
    for (int64_t row = r0; row < r1; ++row) {
      const int64_t b = row / g.oh, oy = row % g.oh;
      const int16_t* base = pad + b * plane + oy * g.sh * wp * g.c;
      for (int64_t ox = 0; ox < g.ow; ox += kAvx2Mr) {
        const int64_t mr = std::min(kAvx2Mr, g.ow - ox);
        const int16_t* a = base + ox * step;
        for (int64_t n = 0; n < g.cout; n += 16) {
          const int16_t* bn = packed + (n / 16) * (kp / 2) * 32;
          if (mr == kAvx2Mr) {
            avx2_tile_direct<kAvx2Mr>(a, step, row_step, g.kh, kq2, bn, acc);
          } else {
            for (int64_t i = 0; i < mr; ++i) {
              avx2_tile_direct<1>(a + i * step, step, row_step, g.kh, kq2, bn, acc + i * 16);
            }
          }
          avx2_requant_tile(acc, mr, std::min<int64_t>(16, g.cout - n), r, n, out + (row * g.ow + ox) * g.cout + n,
                            g.cout);
        }
      }
    }
  });
  return true;
}
#endif

#if defined(__x86_64__) && defined(__GNUC__)
// Without VNNI, 3x3 stride-1 convolutions (ResNet's) as Winograd F(2x2, 3x3) in integers:
// 16 products per 2x2 outputs instead of 36, so 2.25x fewer vpmaddwd, whose throughput bounds
// the AVX2 tile (a tile with 14% fewer instructions ran no faster). Exact: with G' = 2G the
// transforms are integer matrices, U = G' g G'^T (|U| <= 9 * 128, int16) and V = B^T d B of
// d = x - zero_point (|V| <= 4 * 255, int16), so a vpmaddwd pair is below 2^22; the output
// transform gives 4x the int32 sum exactly (int32 sums wrap, and 4 * 9 * 255 * 128 * c stays
// below 2^31 for c <= 2048), shifted right by 2 and requantized as every other product.
constexpr int64_t kWinoTiles = 48;  // 2x2 output tiles per block (a multiple of kAvx2Mr)

bool winograd_fits(const ConvGeom& g) {
  return g.kh == 3 && g.kw == 3 && g.sh == 1 && g.sw == 1 && g.dh == 1 && g.dw == 1 && g.ph == 1 && g.pw == 1 &&
         g.c % 16 == 0 && g.cout % 16 == 0 && g.c <= 2048 && g.oh >= 2 && g.ow >= 2;
}

// weights [cout][3][3][c] int8 -> U (16 matrices of [cout][c]), each packed as pack_i16_pairs
// packs: [16][cout / 16][c / 2][16][2] int16.
void winograd_pack(const int8_t* w, int64_t cout, int64_t c, int16_t* packed) {
  static const int G[4][3] = {{2, 0, 0}, {1, 1, 1}, {1, -1, 1}, {0, 0, 2}};
  const int64_t per = cout * c;  // one position's matrix
  for (int64_t co = 0; co < cout; ++co) {
    for (int64_t ci = 0; ci < c; ++ci) {
      int32_t gk[3][3], t[4][3];
      for (int ky = 0; ky < 3; ++ky) {
        for (int kx = 0; kx < 3; ++kx) gk[ky][kx] = w[((co * 3 + ky) * 3 + kx) * c + ci];
      }
      for (int i = 0; i < 4; ++i) {
        for (int kx = 0; kx < 3; ++kx) t[i][kx] = G[i][0] * gk[0][kx] + G[i][1] * gk[1][kx] + G[i][2] * gk[2][kx];
      }
      for (int i = 0; i < 4; ++i) {
        for (int j = 0; j < 4; ++j) {
          const int32_t u = t[i][0] * G[j][0] + t[i][1] * G[j][1] + t[i][2] * G[j][2];
          // [p][co / 16][ci / 2][co % 16][ci % 2]
          packed[(i * 4 + j) * per + (co / 16) * c * 16 + (ci / 2) * 32 + (co % 16) * 2 + ci % 2] =
              static_cast<int16_t>(u);
        }
      }
    }
  }
}

// V for tiles t0 .. t1 of a block: v[p][t - t0][c] (positions tb rows apart), from the padded
// int16 copy xp ([n][hp][wp][c], x - zero_point, 0 outside the input).
ETRT_AVX2_TARGET void winograd_input(const int16_t* xp, int64_t hp, int64_t wp, int64_t c, int64_t ty, int64_t tx,
                                     int64_t t0, int64_t t1, int64_t tb, int16_t* v) {
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t b = t / (ty * tx), yy = t / tx % ty, xx = t % tx;
    const int16_t* base = xp + ((b * hp + 2 * yy) * wp + 2 * xx) * c;
    for (int64_t ch = 0; ch < c; ch += 16) {
      __m256i d[4][4], s[4][4];
      for (int i = 0; i < 4; ++i) {
        for (int j = 0; j < 4; ++j) {
          d[i][j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(base + (i * wp + j) * c + ch));
        }
      }
      for (int j = 0; j < 4; ++j) {  // B^T d
        s[0][j] = _mm256_sub_epi16(d[0][j], d[2][j]);
        s[1][j] = _mm256_add_epi16(d[1][j], d[2][j]);
        s[2][j] = _mm256_sub_epi16(d[2][j], d[1][j]);
        s[3][j] = _mm256_sub_epi16(d[1][j], d[3][j]);
      }
      for (int i = 0; i < 4; ++i) {  // (B^T d) B
        const __m256i r[4] = {_mm256_sub_epi16(s[i][0], s[i][2]), _mm256_add_epi16(s[i][1], s[i][2]),
                              _mm256_sub_epi16(s[i][2], s[i][1]), _mm256_sub_epi16(s[i][1], s[i][3])};
        for (int j = 0; j < 4; ++j) {
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(v + ((i * 4 + j) * tb + (t - t0)) * c + ch), r[j]);
        }
      }
    }
  }  for (int p = 0; p < 16; ++p) {
    std::memset(v + (p * tb + (t1 - t0)) * c, 0, static_cast<size_t>((tb - (t1 - t0)) * c) * sizeof(int16_t));
  }
}

// Y = A^T M A of tiles t0 .. t1 (m[p][t - t0][cout] int32 = 4x the sums, positions tb rows
// apart), requantized into out.
ETRT_AVX2_TARGET void winograd_output(const int32_t* m, const ConvGeom& g, int64_t ty, int64_t tx, int64_t t0,
                                      int64_t t1, int64_t tb, const Requant& r, int8_t* out) {
  const int64_t cout = g.cout;
  const Avx2Out o = avx2_out(r);
  const float* mult = r.multiplier;
  const float* bias = r.bias;
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t b = t / (ty * tx), yy = t / tx % ty, xx = t % tx;
    const int64_t oy = 2 * yy, ox = 2 * xx;
    const bool down = oy + 1 < g.oh, right = ox + 1 < g.ow;
    int8_t* o00 = out + ((b * g.oh + oy) * g.ow + ox) * cout;
    for (int64_t co = 0; co < cout; co += 16) {  // 16 channels: one 16-byte store per output pixel
      __m256i y[4][2];                            // outputs 00, 01, 10, 11; channel halves
      for (int h = 0; h < 2; ++h) {
        __m256i mm[4][4], s[2][4];
        for (int p = 0; p < 16; ++p) {
          mm[p / 4][p % 4] =
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(m + (p * tb + (t - t0)) * cout + co + 8 * h));
        }
        for (int j = 0; j < 4; ++j) {  // A^T M
          s[0][j] = _mm256_add_epi32(_mm256_add_epi32(mm[0][j], mm[1][j]), mm[2][j]);
          s[1][j] = _mm256_sub_epi32(_mm256_sub_epi32(mm[1][j], mm[2][j]), mm[3][j]);
        }
        for (int i = 0; i < 2; ++i) {  // (A^T M) A, / 4
          y[2 * i][h] = _mm256_srai_epi32(_mm256_add_epi32(_mm256_add_epi32(s[i][0], s[i][1]), s[i][2]), 2);
          y[2 * i + 1][h] = _mm256_srai_epi32(_mm256_sub_epi32(_mm256_sub_epi32(s[i][1], s[i][2]), s[i][3]), 2);
        }
      }
      const __m256 m0 = _mm256_loadu_ps(mult + co), m1 = _mm256_loadu_ps(mult + co + 8);
      const __m256 c0 = bias != nullptr ? _mm256_loadu_ps(bias + co) : _mm256_setzero_ps();
      const __m256 c1 = bias != nullptr ? _mm256_loadu_ps(bias + co + 8) : _mm256_setzero_ps();
      for (int k = 0; k < 4; ++k) {
        if ((k >= 2 && !down) || (k % 2 == 1 && !right)) continue;
        const __m256i q0 = avx2_requant_q(y[k][0], m0, c0, o), q1 = avx2_requant_q(y[k][1], m1, c1, o);
        const __m256i pk = _mm256_permute4x64_epi64(_mm256_packs_epi32(q0, q1), 0xD8);  // 16 int16 in order
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o00 + ((k / 2) * g.ow + k % 2) * cout + co),
                         _mm_packs_epi16(_mm256_castsi256_si128(pk), _mm256_extracti128_si256(pk, 1)));
      }
    }
  }
}

template <typename Source>
bool avx2_winograd_nhwc(KernelContext& ctx, const char* op, const ConvGeom& g, const int8_t* x, const Tensor& weight,
                        Source&& weight_rows, int32_t zp, const Requant& r, int8_t* out) {
  const int64_t per = g.cout * g.c;
  const Derived d =
      derived_weight(ctx, weight, Layout::kPairsWinograd, static_cast<size_t>(16 * per) * sizeof(int16_t));
  if (d.data == nullptr) {
    fail(ctx, op, "out of memory for the packed weights");
    return true;
  }
  auto* packed = static_cast<int16_t*>(d.data);
  if (!d.ready) {
    const int8_t* wk = weight_rows();
    if (wk == nullptr) {
      fail(ctx, op, "out of memory for the weights");
      return true;
    }
    winograd_pack(wk, g.cout, g.c, packed);
  }
  const int64_t ty = (g.oh + 1) / 2, tx = (g.ow + 1) / 2, tiles = g.n * ty * tx;
  const int64_t hp = 2 * ty + 2, wp = 2 * tx + 2;
  const int64_t blocks = (tiles + kWinoTiles - 1) / kWinoTiles;
  auto* xp = static_cast<int16_t*>(ctx.allocate_temp(static_cast<size_t>(g.n * hp * wp * g.c) * sizeof(int16_t)));
  auto* v = static_cast<int16_t*>(
      ctx.allocate_temp(static_cast<size_t>(blocks * 16 * kWinoTiles * g.c) * sizeof(int16_t)));
  auto* m = static_cast<int32_t*>(
      ctx.allocate_temp(static_cast<size_t>(blocks * 16 * kWinoTiles * g.cout) * sizeof(int32_t)));
  if (xp == nullptr || v == nullptr || m == nullptr) return false;
  std::memset(xp, 0, static_cast<size_t>(g.n * hp * wp * g.c) * sizeof(int16_t));
  parallel_for(0, g.n * g.h, 8, [&](int64_t r0, int64_t r1) {
    for (int64_t row = r0; row < r1; ++row) {
      const int64_t b = row / g.h, iy = row % g.h;
      widen_minus(x + row * g.w * g.c, xp + ((b * hp + iy + 1) * wp + 1) * g.c, g.w * g.c, zp);
    }
  });
  const int64_t k2 = g.c / 2;
  parallel_for(0, blocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t blk = b0; blk < b1; ++blk) {
      // A last block's rows rounded up to whole 6-row tiles (zeros, their sums unread): the
      // 1-row tile ran a quarter of a 7x7 layer's 16 tiles at a third of the speed.
      const int64_t t0 = blk * kWinoTiles, t1 = std::min(tiles, t0 + kWinoTiles);
      const int64_t tb = round_up(t1 - t0, kAvx2Mr);
      int16_t* vb = v + blk * 16 * kWinoTiles * g.c;
      int32_t* mb = m + blk * 16 * kWinoTiles * g.cout;
      winograd_input(xp, hp, wp, g.c, ty, tx, t0, t1, tb, vb);
      for (int64_t p = 0; p < 16; ++p) {
        const int16_t* a = vb + p * tb * g.c;
        int32_t* mp = mb + p * tb * g.cout;
        for (int64_t i0 = 0; i0 < tb; i0 += kAvx2Mr) {
          for (int64_t n = 0; n < g.cout; n += 16) {
            avx2_tile<kAvx2Mr>(a + i0 * g.c, g.c, packed + p * per + (n / 16) * k2 * 32, k2, mp + i0 * g.cout + n,
                               g.cout);
          }
        }
      }
      winograd_output(mb, g, ty, tx, t0, t1, tb, r, out);
    }
  });
  return true;
}
#endif

// groups 1: out [pixels][cout] = rows [pixels][(ky, kx, channel)] x weights, requantized.
bool gemm_nhwc(KernelContext& ctx, const char* op, const ConvGeom& g, const int8_t* x, const Tensor& weight,
               int32_t zp, const Requant& r, int8_t* out) {
  const int64_t taps = g.kh * g.kw, k = taps * g.c, m = g.n * g.oh * g.ow;
  // [cout][ky][kx][channel]: as the exporter stores it (channels_last.py), or permuted to it;
  // asked for only when no packing is kept from an earlier run (nullptr: out of memory).
  auto weight_rows = [&]() -> const int8_t* {
    const int8_t* w = weight.data_as<int8_t>();
    if (taps == 1 || !weight.is_contiguous()) return w;
    auto* perm = static_cast<int8_t*>(ctx.allocate_temp(static_cast<size_t>(g.cout * k)));
    if (perm == nullptr) return nullptr;
    for (int64_t co = 0; co < g.cout; ++co) {
      for (int64_t ci = 0; ci < g.c; ++ci) {
        for (int64_t t = 0; t < taps; ++t) perm[(co * taps + t) * g.c + ci] = w[(co * g.c + ci) * taps + t];
      }
    }
    return perm;
  };
  const bool direct = taps == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0;
#if defined(__x86_64__) && defined(__GNUC__)
  // A few input channels (a first convolution): no unfold, the tiles read a padded copy.
  if (taps > 1 && g.c < 8 && g.dw == 1) {
    if (int8_vnni_enabled()) return vnni_direct_nhwc(ctx, op, g, x, weight, weight_rows, zp, r, out);
    if (!int8_portable_only() && isa_level() >= 1) {
      return avx2_direct_nhwc(ctx, op, g, x, weight, weight_rows, zp, r, out);
    }
  }
#endif
  if (int8_vnni_enabled()) {
    Packed pk;
    if (!pack_weights(ctx, op, weight, Layout::kVnni, weight_rows, 1, g.cout, k, &pk)) return true;  // failed
    const int8_t* a = x;
    if (!direct || pk.kp != k) {
      auto* rows = static_cast<int8_t*>(ctx.allocate_temp(static_cast<size_t>(m * pk.kp)));
      if (rows == nullptr) return false;
      unfold_nhwc(g, x, rows, pk.kp, zp, static_cast<int8_t>(zp));  // copies rows
      a = rows;
    }
    vnni_gemm_requant(a, m, pk.kp, pk.data, pk.wsum, zp + 128, g.cout, r, 0, out, g.cout, 1);
    return true;
  }
#if defined(__x86_64__) && defined(__GNUC__)
  if (!int8_portable_only() && isa_level() >= 1) {
    if (winograd_fits(g)) return avx2_winograd_nhwc(ctx, op, g, x, weight, weight_rows, zp, r, out);
    const int64_t lda = round_up(k, 2);
    const int16_t* packed = pack_pairs(ctx, op, weight, Layout::kPairs, weight_rows, g.cout, k);
    if (packed == nullptr) return true;  // failed with its message
    auto* rows = static_cast<int16_t*>(ctx.allocate_temp(static_cast<size_t>(m * lda) * sizeof(int16_t)));
    if (rows == nullptr) return false;
    if (direct && lda == k) {  // a 1x1 convolution's rows are the input's pixels: one widening pass
      parallel_for(0, m, 256, [&](int64_t p0, int64_t p1) { widen_minus(x + p0 * k, rows + p0 * k, (p1 - p0) * k, zp); });
    } else {
      unfold_nhwc(g, x, rows, lda, zp, int16_t{0});
    }
    avx2_gemm_requant(rows, lda, packed, m, g.cout, r, out, g.cout);
    return true;
  }
#endif
  const int8_t* wk = weight_rows();
  auto* wide = static_cast<int16_t*>(ctx.allocate_temp(static_cast<size_t>(g.cout * k) * sizeof(int16_t)));
  auto* rows = static_cast<int16_t*>(ctx.allocate_temp(static_cast<size_t>(m * k) * sizeof(int16_t)));
  if (wk == nullptr || wide == nullptr || rows == nullptr) return false;
  for (int64_t i = 0; i < g.cout * k; ++i) wide[i] = wk[i];
  unfold_nhwc(g, x, rows, k, zp, int16_t{0});
  gemm_requant(rows, wide, m, g.cout, k, r, 0, out, g.cout, 1);
  return true;
}

}  // namespace

// input [N, C, H, W] int8, weight [Cout, C/groups, kh, kw] int8, weight_scale [Cout], bias?,
// input_scale, input_zero_point, output_scale, output_zero_point, output_min, output_max,
// stride, padding, dilation, groups | out [N, Cout, OH, OW] int8
void op_quantized_conv2d(KernelContext& ctx, Span<Value*> args) {
  const char* op = "etrt_quant::conv2d";
  if (!check_nargs(ctx, op, args, 15)) return;
  QuantArgs q;
  Span<const int64_t> stride, padding, dilation;
  int64_t groups = 1;
  if (!quant_args(ctx, op, args, &q, true) || !int_list_arg(ctx, op, args, 10, "stride", &stride) ||
      !int_list_arg(ctx, op, args, 11, "padding", &padding) || !int_list_arg(ctx, op, args, 12, "dilation", &dilation) ||
      !int_arg(ctx, op, args, 13, "groups", &groups)) {
    return;
  }
  const Tensor& x = *q.input;
  const Tensor& w = *q.weight;
  if (x.dim() != 4 || w.dim() != 4 || stride.size() != 2 || padding.size() != 2 || dilation.size() != 2 ||
      groups < 1 || x.size(1) % groups != 0 || w.size(0) % groups != 0 || w.size(1) * groups != x.size(1)) {
    return fail(ctx, op, "expected a 4-D input and weight with matching channels and groups, got input " +
                             shape_string(x.sizes()) + " and weight " + shape_string(w.sizes()));
  }
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), wd = x.size(3);
  const int64_t cout = w.size(0), cg = w.size(1), kh = w.size(2), kw = w.size(3);
  const int64_t sh = stride[0], sw = stride[1], ph = padding[0], pw = padding[1], dh = dilation[0], dw = dilation[1];
  if (sh < 1 || sw < 1 || dh < 1 || dw < 1 || ph < 0 || pw < 0) return fail(ctx, op, "invalid stride, padding or dilation");
  if (!depth_fits(ctx, op, cg * kh * kw, w)) return;
  int64_t oh = 0, ow = 0;
  if (!checked::window(h, kh, ph, ph, sh, dh, false, &oh) || !checked::window(wd, kw, pw, pw, sw, dw, false, &ow) ||
      oh < 1 || ow < 1) {
    return fail(ctx, op, "stride " + shape_string(stride) + ", padding " + shape_string(padding) + " and dilation " +
                             shape_string(dilation) + " do not fit the input " + shape_string(x.sizes()) +
                             " and weight " + shape_string(w.sizes()));
  }
  const int64_t out_sizes[4] = {n, cout, oh, ow};
  Tensor* out = strided_output_arg(ctx, op, args, 14, ScalarType::Char, Span<const int64_t>(out_sizes, 4));
  if (out == nullptr) return;
  if (!out->is_contiguous() && !channels_last_dense(*out)) {
    return fail(ctx, op, "the output must be contiguous or channels-last");
  }
  Requant r;
  if (!prepare_requant(ctx, op, q, &r)) return;
  const int64_t k = cg * kh * kw, pixels = oh * ow, coutg = cout / groups;
  const int8_t* xd = x.data_as<int8_t>();
  int8_t* od = out->data_as<int8_t>();
  const int32_t zp = static_cast<int32_t>(q.in_zp);
  const bool in_nhwc = !x.is_contiguous(), out_nhwc = !out->is_contiguous();
  // A grouped convolution (not one channel per group) runs NCHW: a channels-last input or
  // output (a neighbour's layout: RegNet's grouped 3x3 between 1x1 layers) is converted around
  // it, and the result written back at the end (`finish`).
  int8_t* out_channels_last = nullptr;
  const bool grouped = groups != 1 && !(cg == 1 && coutg == 1);
  if (grouped && in_nhwc) {
    auto* t = static_cast<int8_t*>(ctx.allocate_temp(static_cast<size_t>(x.numel())));
    if (t == nullptr) return fail(ctx, op, "out of memory for the NCHW input");
    nhwc_to_nchw(xd, n, c, h * wd, t);
    xd = t;
  }
  if (grouped && out_nhwc) {
    out_channels_last = od;
    od = static_cast<int8_t*>(ctx.allocate_temp(static_cast<size_t>(out->numel())));
    if (od == nullptr) return fail(ctx, op, "out of memory for the NCHW output");
  }
  auto finish = [&] {
    if (out_channels_last != nullptr && !ctx.failed()) nchw_to_nhwc(od, n, cout, pixels, out_channels_last);
  };
  if (!grouped && (in_nhwc || out_nhwc)) {
    const bool depthwise = cg == 1 && coutg == 1;
    const ConvGeom g{n, c, h, wd, cout, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow};
    const int8_t* xn = xd;
    if (!in_nhwc) {
      auto* t = static_cast<int8_t*>(ctx.allocate_temp(static_cast<size_t>(x.numel())));
      if (t == nullptr) return fail(ctx, op, "out of memory for the channels-last input");
      nchw_to_nhwc(xd, n, c, h * wd, t);
      xn = t;
    }
    int8_t* on = od;
    if (!out_nhwc) {
      on = static_cast<int8_t*>(ctx.allocate_temp(static_cast<size_t>(out->numel())));
      if (on == nullptr) return fail(ctx, op, "out of memory for the channels-last output");
    }
    const bool ok = depthwise ? depthwise_nhwc(ctx, g, xn, w, zp, r, on)
                              : gemm_nhwc(ctx, op, g, xn, w, zp, r, on);
    if (!ok) return fail(ctx, op, "out of memory for the channels-last convolution");
    if (ctx.failed()) return;
    if (!out_nhwc) nhwc_to_nchw(on, n, cout, oh * ow, od);
    return;
  }
  const int8_t* wts = w.data_as<int8_t>();
  if (!w.is_contiguous()) {  // stored [cout][kh][kw][cin] for the NHWC path
    auto* oihw = static_cast<int8_t*>(ctx.allocate_temp(static_cast<size_t>(w.numel())));
    if (oihw == nullptr) return fail(ctx, op, "out of memory for the weights");
    for (int64_t co = 0; co < cout; ++co) {
      for (int64_t ci = 0; ci < cg; ++ci) {
        for (int64_t t = 0; t < kh * kw; ++t) oihw[(co * cg + ci) * kh * kw + t] = wts[(co * kh * kw + t) * cg + ci];
      }
    }
    wts = oihw;
  }
  if (cg == 1 && coutg == 1) {
    auto* acc = static_cast<int32_t*>(ctx.allocate_temp(static_cast<size_t>(n * c * ow) * sizeof(int32_t)));
    if (acc == nullptr) return fail(ctx, op, "out of memory for the depthwise sums");
    const DepthwiseShape d{h, wd, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow};
    depthwise(xd, wts, n, c, d, zp, r, acc, od);
    return;
  }
  // Unfold: row p holds the taps of output pixel p (padding taps hold the zero point). Per
  // output row and tap, the output columns that read inside the input are one range.
  auto unfold = [&](auto* rows, int64_t row_len, int64_t b, int64_t g, auto value, auto pad) {
    parallel_for(0, oh, 1, [&](int64_t y0, int64_t y1) {
      for (int64_t oy = y0; oy < y1; ++oy) {
        auto* base = rows + oy * ow * row_len;
        for (int64_t ci = 0; ci < cg; ++ci) {
          const int8_t* plane = xd + ((b * c) + g * cg + ci) * h * wd;
          for (int64_t ky = 0; ky < kh; ++ky) {
            const int64_t iy = oy * sh - ph + ky * dh;
            for (int64_t kx = 0; kx < kw; ++kx) {
              auto* dst = base + (ci * kh + ky) * kw + kx;
              const int64_t shift = kx * dw - pw;  // ix = ox * sw + shift
              int64_t lo = 0, hi = 0;
              if (iy >= 0 && iy < h) {
                lo = shift >= 0 ? 0 : (-shift + sw - 1) / sw;
                hi = wd - 1 - shift < 0 ? 0 : std::min(ow, (wd - 1 - shift) / sw + 1);
                lo = std::min(lo, hi);
              }
              for (int64_t ox = 0; ox < lo; ++ox) dst[ox * row_len] = pad;
              for (int64_t ox = lo; ox < hi; ++ox) dst[ox * row_len] = value(plane[iy * wd + ox * sw + shift]);
              for (int64_t ox = hi; ox < ow; ++ox) dst[ox * row_len] = pad;
            }
          }
        }
        if (row_len > k) {
          for (int64_t ox = 0; ox < ow; ++ox) {
            for (int64_t j = k; j < row_len; ++j) base[ox * row_len + j] = 0;
          }
        }
      }
    });
  };
  if (int8_vnni_enabled()) {
    Packed pk;
    if (!pack_weights(ctx, op, w, Layout::kVnniNchw, [&] { return wts; }, groups, coutg, k, &pk)) return;
    auto* cols = static_cast<int8_t*>(ctx.allocate_temp(static_cast<size_t>(pixels * pk.kp)));
    if (cols == nullptr) return fail(ctx, op, "out of memory for the unfolded input");
    const auto pad = static_cast<int8_t>(zp);
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t g = 0; g < groups; ++g) {
        unfold(cols, pk.kp, b, g, [](int8_t v) { return v; }, pad);
        vnni_gemm_requant(cols, pixels, pk.kp, pk.data + g * pk.colsp * pk.kp, pk.wsum + g * pk.colsp, zp + 128,
                          coutg, r, g * coutg, od + (b * cout + g * coutg) * pixels, 1, pixels);
      }
    }
    finish();
    return;
  }
  int16_t* wide = widen_weights(ctx, op, wts, w.numel());
  if (wide == nullptr) return;
  auto* cols = static_cast<int16_t*>(ctx.allocate_temp(static_cast<size_t>(pixels * k) * sizeof(int16_t)));
  if (cols == nullptr) return fail(ctx, op, "out of memory for the unfolded input");
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t g = 0; g < groups; ++g) {
      unfold(cols, k, b, g, [zp](int8_t v) { return static_cast<int16_t>(v - zp); }, int16_t{0});
      gemm_requant(cols, wide + g * coutg * k, pixels, coutg, k, r, g * coutg, od + (b * cout + g * coutg) * pixels, 1,
                   pixels);
    }
  }
  finish();
}

// input [..., K] int8, weight [N, K] int8, weight_scale [N], bias?, input_scale,
// input_zero_point, output_scale, output_zero_point, output_min, output_max | out [..., N] int8
void op_quantized_linear(KernelContext& ctx, Span<Value*> args) {
  const char* op = "etrt_quant::linear";
  if (!check_nargs(ctx, op, args, 11)) return;
  QuantArgs q;
  if (!quant_args(ctx, op, args, &q)) return;
  const Tensor& x = *q.input;
  const Tensor& w = *q.weight;
  if (x.dim() < 1 || w.dim() != 2 || x.size(-1) != w.size(1)) {
    return fail(ctx, op, "input " + shape_string(x.sizes()) + " does not match weight " + shape_string(w.sizes()));
  }
  if (!depth_fits(ctx, op, w.size(1), w)) return;
  const int64_t k = w.size(1), cols = w.size(0), rows = k == 0 ? 0 : x.numel() / k;
  int64_t out_sizes[kMaxDims];
  for (int d = 0; d < x.dim(); ++d) out_sizes[d] = x.size(d);
  out_sizes[x.dim() - 1] = cols;
  Tensor* out = output_arg(ctx, op, args, 10, ScalarType::Char, Span<const int64_t>(out_sizes, static_cast<size_t>(x.dim())));
  if (out == nullptr) return;
  Requant r;
  if (!prepare_requant(ctx, op, q, &r)) return;
  const int8_t* xd = x.data_as<int8_t>();
  const int32_t zp = static_cast<int32_t>(q.in_zp);
#if defined(__x86_64__) && defined(__GNUC__)
  if (int8_vnni_enabled() && rows < kMr / 2) {
    const int8_t* wd = w.data_as<int8_t>();
    int8_t* od = out->data_as<int8_t>();
    parallel_for(0, (cols + 15) / 16, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t i = 0; i < rows; ++i) {
        vnni_gemv(xd + i * k, wd, k, b0 * 16, std::min(cols, b1 * 16), zp + 128, r, od + i * cols);
      }
    });
    return;
  }
#endif
  if (int8_vnni_enabled()) {
    Packed pk;
    if (!pack_weights(ctx, op, w, Layout::kVnni, [&] { return w.data_as<int8_t>(); }, 1, cols, k, &pk)) return;
    const int8_t* a = xd;
    if (pk.kp != k) {  // rows padded to whole groups of 4
      auto* padded = static_cast<int8_t*>(ctx.allocate_temp(static_cast<size_t>(std::max<int64_t>(rows * pk.kp, 1))));
      if (padded == nullptr) return fail(ctx, op, "out of memory for the input rows");
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < pk.kp; ++j) padded[i * pk.kp + j] = j < k ? xd[i * k + j] : int8_t{0};
      }
      a = padded;
    }
    vnni_gemm_requant(a, rows, pk.kp, pk.data, pk.wsum, zp + 128, cols, r, 0, out->data_as<int8_t>(), cols, 1);
    return;
  }
#if defined(__x86_64__) && defined(__GNUC__)
  if (!int8_portable_only() && isa_level() >= 1) {
    // x - zero_point as int16 rows of lda (even; a multiple of 16 for the gemv), zero-padded.
    const int64_t lda = rows < kAvx2Mr ? round_up(k, 16) : round_up(k, 2);
    auto* a = static_cast<int16_t*>(ctx.allocate_temp(static_cast<size_t>(std::max<int64_t>(rows * lda, 1)) * sizeof(int16_t)));
    if (a == nullptr) return fail(ctx, op, "out of memory for the widened input");
    for (int64_t i = 0; i < rows; ++i) {
      widen_minus(xd + i * k, a + i * lda, k, zp);
      std::fill(a + i * lda + k, a + (i + 1) * lda, int16_t{0});
    }
    int8_t* od = out->data_as<int8_t>();
    if (rows < kAvx2Mr) {
      const int8_t* wd = w.data_as<int8_t>();
      parallel_for(0, (cols + 15) / 16, 1, [&](int64_t b0, int64_t b1) {
        for (int64_t i = 0; i < rows; ++i) avx2_gemv(a + i * lda, wd, k, b0 * 16, std::min(cols, b1 * 16), r, od + i * cols);
      });
      return;
    }
    const int16_t* packed = pack_pairs(ctx, op, w, Layout::kPairs, [&] { return w.data_as<int8_t>(); }, cols, k);
    if (packed == nullptr) return;  // failed with its message
    avx2_gemm_requant(a, lda, packed, rows, cols, r, od, cols);
    return;
  }
#endif
  int16_t* wide = widen_weights(ctx, op, w.data_as<int8_t>(), w.numel());
  if (wide == nullptr) return;
  auto* a = static_cast<int16_t*>(ctx.allocate_temp(static_cast<size_t>(std::max<int64_t>(rows * k, 1)) * sizeof(int16_t)));
  if (a == nullptr) return fail(ctx, op, "out of memory for the widened input");
  for (int64_t i = 0; i < rows * k; ++i) a[i] = static_cast<int16_t>(xd[i] - zp);
  gemm_requant(a, wide, rows, cols, k, r, 0, out->data_as<int8_t>(), cols, 1);
}

// ---------------------------------------------------------------------------------------------
// Integer addition: dq(a) + dq(b) -> q in one pass over the int8 values, with the reference's
// float32 steps ((q - zero_point) * scale per input, the sum, then the quantize), so the
// integers are those of the unfolded graph.

namespace {

struct AddParams {
  float a_zp, a_scale, b_zp, b_scale, inv_out_scale, out_zp, lo, hi;
};

ETRT_ISA_BODY void add_int8_body(const int8_t* a, const int8_t* b, int8_t* out, int64_t n, const AddParams& p) {
  for (int64_t i = 0; i < n; ++i) {
    const float x = (static_cast<float>(a[i]) - p.a_zp) * p.a_scale;
    const float y = (static_cast<float>(b[i]) - p.b_zp) * p.b_scale;
    const float v = round_even_fast((x + y) * p.inv_out_scale) + p.out_zp;
    out[i] = static_cast<int8_t>(std::min(std::max(p.lo, v), p.hi));  // lo first: inf - inf (huge scales) gives lo
  }
}
ETRT_ISA_DISPATCH(void, add_int8, (const int8_t* a, const int8_t* b, int8_t* out, int64_t n, const AddParams& p),
                  (a, b, out, n, p))

}  // namespace

// a, a_scale, a_zero_point, b, b_scale, b_zero_point, output_scale, output_zero_point,
// output_min, output_max | out: int8 tensors of one shape
void op_quantized_add(KernelContext& ctx, Span<Value*> args) {
  const char* op = "etrt_quant::add";
  if (!check_nargs(ctx, op, args, 11)) return;
  Tensor* a = tensor_arg(ctx, op, args, 0, "a");
  Tensor* b = tensor_arg(ctx, op, args, 3, "b");
  double as = 1, bs = 1, os = 1;
  int64_t az = 0, bz = 0, oz = 0, lo = 0, hi = 0;
  if (a == nullptr || b == nullptr || !scalar_arg(ctx, op, args, 1, "a_scale", &as) ||
      !int_arg(ctx, op, args, 2, "a_zero_point", &az) || !scalar_arg(ctx, op, args, 4, "b_scale", &bs) ||
      !int_arg(ctx, op, args, 5, "b_zero_point", &bz) || !scalar_arg(ctx, op, args, 6, "output_scale", &os) ||
      !int_arg(ctx, op, args, 7, "output_zero_point", &oz) || !int_arg(ctx, op, args, 8, "output_min", &lo) ||
      !int_arg(ctx, op, args, 9, "output_max", &hi) || !dense_input(ctx, op, *a, "a") ||
      !dense_input(ctx, op, *b, "b") || !int8_qparams(ctx, op, "a_scale", as, "a_zero_point", az) ||
      !int8_qparams(ctx, op, "b_scale", bs, "b_zero_point", bz) ||
      !int8_qparams(ctx, op, "output_scale", os, "output_zero_point", oz)) {
    return;
  }
  if (a->dtype() != ScalarType::Char || b->dtype() != ScalarType::Char) {
    return fail(ctx, op, "a and b must be int8, got " + dtype_name(a->dtype()) + " and " + dtype_name(b->dtype()));
  }
  if (!same_sizes(a->sizes(), b->sizes())) {
    return fail(ctx, op, "a " + shape_string(a->sizes()) + " and b " + shape_string(b->sizes()) +
                             " must have one shape");
  }
  if (lo < -128 || hi > 127 || lo > hi) {
    return fail(ctx, op, "output range [" + std::to_string(lo) + ", " + std::to_string(hi) + "] is not within int8");
  }
  Tensor* out = strided_output_arg(ctx, op, args, 10, ScalarType::Char, a->sizes());
  if (out == nullptr) return;
  const AddParams p{static_cast<float>(az), static_cast<float>(as), static_cast<float>(bz),
                    static_cast<float>(bs), static_cast<float>(1.0 / os), static_cast<float>(oz),
                    static_cast<float>(lo), static_cast<float>(hi)};
  const int8_t* ad = a->data_as<int8_t>();
  const int8_t* bd = b->data_as<int8_t>();
  int8_t* od = out->data_as<int8_t>();
  if (same_strides(*a, *out) && same_strides(*b, *out)) {
    parallel_for(0, a->numel(), kParallelGrainElements,
                 [&](int64_t i0, int64_t i1) { add_int8(ad + i0, bd + i0, od + i0, i1 - i0, p); });
    return;
  }
  for_each_element(*a, *b, *out, [&](int64_t i, int64_t j, int64_t k, int64_t count) {
    add_int8(ad + i, bd + j, od + k, count, p);
  });
}

}  // namespace kernels
}  // namespace etrt
