// Integer kernels for the PT2E patterns between the products (quantized.py folds them):
// etrt_quant::lookup (an elementwise dq -> float ops -> q chain as a 256-entry table),
// etrt_quant::mul (dq(a) * dq(b) -> q, same shape or a [N, C, 1, 1] gate: squeeze-excite),
// etrt_quant::mean (dq -> mean over H, W -> q) and etrt_quant::max_pool2d (int8 in and out:
// max commutes with a dequantize of positive scale). Each computes the reference's own float32
// steps on the int8 values in one pass, so the folded graph's integers are unchanged (mean: the
// sum is exact, see docs/quantization.md).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "common/checked.h"
#include "heavy.h"
#include "util.h"

namespace etrt {
namespace kernels {
namespace {

// Round half to even without a libm call (quantized.cpp's round_even_fast): below 2^22 in
// magnitude, adding and subtracting 1.5 * 2^23 rounds in the default mode.
inline float round_even(float v) {
  constexpr float kMagic = 12582912.0f;
  constexpr float kLimit = 4194304.0f;
  v = std::min(std::max(v, -kLimit), kLimit);
  return (v + kMagic) - kMagic;
}

// The reference's quantize_per_tensor of one float32 value: round(v * (1 / scale)) + zero point,
// clamped.
struct Quantize {
  float inv_scale, zero_point, lo, hi;
  int8_t operator()(float v) const {
    const float q = round_even(v * inv_scale) + zero_point;
    // lo first: a NaN (inf * 0 or inf - inf of huge scales) gives lo, as the vector paths' max does
    return static_cast<int8_t>(std::min(std::max(lo, q), hi));
  }
};

bool int8_input(KernelContext& ctx, const char* op, const Tensor* t, const char* name) {
  if (t == nullptr || !check_has_data(ctx, op, *t, name)) return false;
  if (t->dtype() != ScalarType::Char) {
    fail(ctx, op, std::string("'") + name + "' must be int8, got " + to_string(t->dtype()));
    return false;
  }
  if (!t->is_contiguous() && !channels_last_dense(*t)) {
    fail(ctx, op, std::string("'") + name + "' must be contiguous or channels-last");
    return false;
  }
  return true;
}

bool same_strides(const Tensor& a, const Tensor& b) {
  if (a.dim() != b.dim()) return false;
  for (int d = 0; d < a.dim(); ++d) {
    if (a.size(d) != 1 && a.stride(d) != b.stride(d)) return false;
  }
  return true;
}

// Element offsets of `t` and `out` (one shape) in `out`'s index order, `inner` at a time.
template <typename F>
void for_each_pair(const Tensor& t, const Tensor& out, F&& fn) {
  const int dims = out.dim();
  if (dims == 0 || same_strides(t, out)) {
    fn(int64_t{0}, int64_t{0}, out.numel());
    return;
  }
  int64_t index[kMaxDims] = {};
  int64_t it = 0, io = 0;
  const int last = dims - 1;
  for (int64_t done = 0; done < out.numel(); done += out.size(last)) {
    for (int64_t x = 0; x < out.size(last); ++x) fn(it + x * t.stride(last), io + x * out.stride(last), int64_t{1});
    for (int d = last - 1; d >= 0; --d) {
      it += t.stride(d), io += out.stride(d);
      if (++index[d] < out.size(d)) break;
      it -= t.stride(d) * out.size(d), io -= out.stride(d) * out.size(d);
      index[d] = 0;
    }
  }
}

// Offsets of `a`, `b` (broadcast where its size is 1) and `out` for every element of `out`.
template <typename F>
void for_each_triple(const Tensor& a, const Tensor& b, const Tensor& out, F&& fn) {
  const int dims = out.dim();
  int64_t index[kMaxDims] = {};
  auto bstride = [&](int d) { return b.size(d) == 1 ? int64_t{0} : b.stride(d); };
  for (int64_t done = 0; done < out.numel(); ++done) {
    int64_t i = 0, j = 0, k = 0;
    for (int d = 0; d < dims; ++d) i += index[d] * a.stride(d), j += index[d] * bstride(d), k += index[d] * out.stride(d);
    fn(i, j, k);
    for (int d = dims - 1; d >= 0; --d) {
      if (++index[d] < out.size(d)) break;
      index[d] = 0;
    }
  }
}

bool output_range(KernelContext& ctx, const char* op, int64_t lo, int64_t hi) {
  if (lo < -128 || hi > 127 || lo > hi) {
    fail(ctx, op, "output range [" + std::to_string(lo) + ", " + std::to_string(hi) + "] is not within int8");
    return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// lookup: out[i] = table[x[i] + 128]

ETRT_ISA_BODY void lookup_scalar_body(const int8_t* x, const int8_t* table, int8_t* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = table[static_cast<uint8_t>(x[i] ^ 0x80)];
}
ETRT_ISA_DISPATCH(void, lookup_scalar, (const int8_t* x, const int8_t* table, int8_t* out, int64_t n),
                  (x, table, out, n))

#if defined(__x86_64__) && defined(__GNUC__)
// AVX-512 VBMI: the table in four registers; vpermi2b picks from each 128-byte half by the low
// 7 bits of x + 128, and its top bit chooses the half. 64 values in five instructions.
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) void lookup_vbmi(const int8_t* x, const int8_t* table,
                                                                       int8_t* out, int64_t n) {
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512i u = _mm512_xor_si512(_mm512_loadu_si512(x + i), flip);
    const __m512i lo = _mm512_permutex2var_epi8(t0, u, t1), hi = _mm512_permutex2var_epi8(t2, u, t3);
    _mm512_storeu_si512(out + i, _mm512_mask_blend_epi8(_mm512_movepi8_mask(u), lo, hi));
  }
  if (i < n) lookup_scalar(x + i, table, out + i, n - i);
}

bool vbmi_enabled() {
  static const bool available = [] {
    if (int8_portable_only()) return false;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vbmi");
  }();
  return available && isa_level() >= 2;
}
#endif

#if defined(__x86_64__) && defined(__GNUC__)
// AVX2: vpshufb looks up 16 entries, so 16 of them, one per high nibble of u = x + 128. With
// t = u - 16k, saturating t + 0x70 keeps bit 7 clear (and u's low nibble) exactly when
// 0 <= t < 16, and vpshufb gives 0 for a set bit 7: one row answers each byte.
__attribute__((target("avx2"))) void lookup_avx2(const int8_t* x, const int8_t* table, int8_t* out, int64_t n) {
  __m256i rows[16];
  for (int k = 0; k < 16; ++k) {
    rows[k] = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(table + 16 * k)));
  }
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80)), step = _mm256_set1_epi8(16);
  const __m256i bias = _mm256_set1_epi8(0x70);
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256i t = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i)), flip);
    __m256i r = _mm256_setzero_si256();
    for (int k = 0; k < 16; ++k) {
      r = _mm256_or_si256(r, _mm256_shuffle_epi8(rows[k], _mm256_adds_epu8(t, bias)));
      t = _mm256_sub_epi8(t, step);
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), r);
  }
  if (i < n) lookup_scalar(x + i, table, out + i, n - i);
}
#endif

void lookup_i8(const int8_t* x, const int8_t* table, int8_t* out, int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (vbmi_enabled()) return lookup_vbmi(x, table, out, n);
  if (isa_level() >= 1 && !int8_portable_only()) return lookup_avx2(x, table, out, n);
#endif
  lookup_scalar(x, table, out, n);
}

// ---------------------------------------------------------------------------------------------
// mul: q(((a - a_zp) * a_scale) * ((b - b_zp) * b_scale))

struct MulParams {
  float a_zp, a_scale, b_zp, b_scale;
  Quantize q;
};

ETRT_ISA_BODY void mul_same_body(const int8_t* a, const int8_t* b, int8_t* out, int64_t n, const MulParams& p) {
  const float az = p.a_zp, as = p.a_scale, bz = p.b_zp, bs = p.b_scale;
  const Quantize q = p.q;
  for (int64_t i = 0; i < n; ++i) {
    const float x = (static_cast<float>(a[i]) - az) * as;
    const float y = (static_cast<float>(b[i]) - bz) * bs;
    out[i] = q(x * y);
  }
}
ETRT_ISA_DISPATCH(void, mul_same, (const int8_t* a, const int8_t* b, int8_t* out, int64_t n, const MulParams& p),
                  (a, b, out, n, p))

// `rows` channels-last pixels of `c` values, each channel times its gate value (dequantized).
ETRT_ISA_BODY void mul_rows_portable_body(const int8_t* a, const float* gate, int8_t* out, int64_t rows, int64_t c,
                                 const MulParams& p) {
  // locals: stores through int8_t* may alias anything, so fields of p would be reloaded
  const float az = p.a_zp, as = p.a_scale;
  const Quantize q = p.q;
  for (int64_t r = 0; r < rows; ++r) {
    const int8_t* ar = a + r * c;
    int8_t* o = out + r * c;
    for (int64_t i = 0; i < c; ++i) o[i] = q(((static_cast<float>(ar[i]) - az) * as) * gate[i]);
  }
}
ETRT_ISA_DISPATCH(void, mul_rows_portable,
                  (const int8_t* a, const float* gate, int8_t* out, int64_t rows, int64_t c, const MulParams& p),
                  (a, gate, out, rows, c, p))

#if defined(__x86_64__) && defined(__GNUC__)
// mul_rows_body's float32 steps, 16 lanes at a time: the same operations in the same order (no
// fused multiply-add), roundscale being round half to even; values are clamped to the int8
// range before the narrowing, so the saturating pack is exact.
__attribute__((target("avx512f"))) void mul_rows_avx512(const int8_t* a, const float* gate, int8_t* out,
                                                         int64_t rows, int64_t c, const MulParams& p) {
  const __m512 az = _mm512_set1_ps(p.a_zp), as = _mm512_set1_ps(p.a_scale), inv = _mm512_set1_ps(p.q.inv_scale);
  const __m512 zp = _mm512_set1_ps(p.q.zero_point), lo = _mm512_set1_ps(p.q.lo), hi = _mm512_set1_ps(p.q.hi);
  const int64_t vec = c / 16 * 16;
  for (int64_t r = 0; r < rows; ++r) {
    const int8_t* ar = a + r * c;
    int8_t* o = out + r * c;
    for (int64_t i = 0; i < vec; i += 16) {
      const __m512 x = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(ar + i))));
      __m512 v = _mm512_mul_ps(_mm512_mul_ps(_mm512_sub_ps(x, az), as), _mm512_loadu_ps(gate + i));
      v = _mm512_add_ps(_mm512_roundscale_ps(_mm512_mul_ps(v, inv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zp);
      v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o + i), _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(v)));
    }
    for (int64_t i = vec; i < c; ++i) o[i] = p.q(((static_cast<float>(ar[i]) - p.a_zp) * p.a_scale) * gate[i]);
  }
}
#endif

#if defined(__x86_64__) && defined(__GNUC__)
// The same, 8 lanes (AVX2 without FMA contraction: -ffp-contract=off, explicit mul and add).
__attribute__((target("avx2"))) void mul_rows_avx2(const int8_t* a, const float* gate, int8_t* out,
                                                   int64_t rows, int64_t c, const MulParams& p) {
  const __m256 az = _mm256_set1_ps(p.a_zp), as = _mm256_set1_ps(p.a_scale), inv = _mm256_set1_ps(p.q.inv_scale);
  const __m256 zp = _mm256_set1_ps(p.q.zero_point), lo = _mm256_set1_ps(p.q.lo), hi = _mm256_set1_ps(p.q.hi);
  const int64_t vec = c / 8 * 8;
  for (int64_t r = 0; r < rows; ++r) {
    const int8_t* ar = a + r * c;
    int8_t* o = out + r * c;
    for (int64_t i = 0; i < vec; i += 8) {
      const __m128i raw = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(ar + i));
      const __m256 x = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(raw));
      __m256 v = _mm256_mul_ps(_mm256_mul_ps(_mm256_sub_ps(x, az), as), _mm256_loadu_ps(gate + i));
      v = _mm256_add_ps(_mm256_round_ps(_mm256_mul_ps(v, inv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zp);
      const __m256i q = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(v, lo), hi));
      const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(o + i), _mm_packs_epi16(w, w));
    }
    for (int64_t i = vec; i < c; ++i) o[i] = p.q(((static_cast<float>(ar[i]) - p.a_zp) * p.a_scale) * gate[i]);
  }
}
#endif

void mul_rows(const int8_t* a, const float* gate, int8_t* out, int64_t rows, int64_t c, const MulParams& p) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (isa_level() >= 2 && !int8_portable_only()) return mul_rows_avx512(a, gate, out, rows, c, p);
  if (isa_level() >= 1 && !int8_portable_only()) return mul_rows_avx2(a, gate, out, rows, c, p);
#endif
  mul_rows_portable(a, gate, out, rows, c, p);
}

// n values of `a` times one gate value: an NCHW plane.
ETRT_ISA_BODY void mul_plane_body(const int8_t* a, float gate, int8_t* out, int64_t n, const MulParams& p) {
  const float az = p.a_zp, as = p.a_scale;
  const Quantize q = p.q;
  for (int64_t i = 0; i < n; ++i) out[i] = q(((static_cast<float>(a[i]) - az) * as) * gate);
}
ETRT_ISA_DISPATCH(void, mul_plane, (const int8_t* a, float gate, int8_t* out, int64_t n, const MulParams& p),
                  (a, gate, out, n, p))

// A gate of `full`'s shape but 1 in every dimension after the first two ([N, C, 1, 1]).
bool is_gate(const Tensor& gate, const Tensor& full) {
  if (gate.dim() != full.dim() || full.dim() < 3) return false;
  if (gate.size(0) != full.size(0) || gate.size(1) != full.size(1)) return false;
  for (int d = 2; d < full.dim(); ++d) {
    if (gate.size(d) != 1) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// mean over the last two dimensions: int32 sums of (x - zero point), exact

ETRT_ISA_BODY void sum_rows_body(const int8_t* x, int64_t rows, int64_t c, int32_t* acc) {
  for (int64_t r = 0; r < rows; ++r) {
    const int8_t* row = x + r * c;
    for (int64_t i = 0; i < c; ++i) acc[i] += row[i];
  }
}
ETRT_ISA_DISPATCH(void, sum_rows, (const int8_t* x, int64_t rows, int64_t c, int32_t* acc), (x, rows, c, acc))

ETRT_ISA_BODY int32_t sum_plane_body(const int8_t* x, int64_t n) {
  int32_t s = 0;
  for (int64_t i = 0; i < n; ++i) s += x[i];
  return s;
}
ETRT_ISA_DISPATCH(int32_t, sum_plane, (const int8_t* x, int64_t n), (x, n))

// ---------------------------------------------------------------------------------------------
// max_pool2d on int8

struct PoolGeom {
  int64_t n, c, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
};

ETRT_ISA_BODY void max_rows_body(const int8_t* x, int8_t* out, int64_t c) {
  for (int64_t i = 0; i < c; ++i) out[i] = std::max(out[i], x[i]);
}
ETRT_ISA_DISPATCH(void, max_rows, (const int8_t* x, int8_t* out, int64_t c), (x, out, c))

bool pool_pair(KernelContext& ctx, const char* op, Span<Value*> args, size_t i, const char* name,
               const int64_t* fallback, int64_t out[2]) {
  Span<const int64_t> v;
  if (!int_list_arg(ctx, op, args, i, name, &v)) return false;
  if (v.empty() && fallback != nullptr) {
    out[0] = fallback[0], out[1] = fallback[1];
    return true;
  }
  if (v.size() != 1 && v.size() != 2) {
    fail(ctx, op, std::string("'") + name + "' must have 1 or 2 values, got " + std::to_string(v.size()));
    return false;
  }
  out[0] = v[0], out[1] = v[v.size() == 1 ? 0 : 1];
  return true;
}

// ---------------------------------------------------------------------------------------------
// avg_pool2d: exact int32 window sums, ATen's windows and divisors

struct AvgWindow {
  int64_t begin, end, padded;  // the in-range taps [begin, end); the window clipped to the padding
};

// ATen's cpu_avg_pool bounds for output index o.
inline AvgWindow avg_window(int64_t o, int64_t stride, int64_t pad, int64_t k, int64_t size) {
  const int64_t b = o * stride - pad;
  const int64_t e = std::min(b + k, size + pad);
  return {std::max<int64_t>(b, 0), std::min(e, size), e - b};
}

ETRT_ISA_BODY void add_row_i32_body(const int8_t* x, int32_t* acc, int64_t c) {
  for (int64_t i = 0; i < c; ++i) acc[i] += x[i];
}
ETRT_ISA_DISPATCH(void, add_row_i32, (const int8_t* x, int32_t* acc, int64_t c), (x, acc, c))

}  // namespace

// input, table | out: table is int8[256], indexed by input + 128
void op_quantized_lookup(KernelContext& ctx, Span<Value*> args) {
  const char* op = "etrt_quant::lookup";
  if (!check_nargs(ctx, op, args, 3)) return;
  Tensor* x = tensor_arg(ctx, op, args, 0, "input");
  Tensor* table = tensor_arg(ctx, op, args, 1, "table");
  if (!int8_input(ctx, op, x, "input") || !int8_input(ctx, op, table, "table")) return;
  if (table->numel() != 256 || !table->is_contiguous()) {
    return fail(ctx, op, "table must be 256 contiguous values, got " + shape_string(table->sizes()));
  }
  Tensor* out = strided_output_arg(ctx, op, args, 2, ScalarType::Char, x->sizes());
  if (out == nullptr) return;
  const int8_t* xd = x->data_as<int8_t>();
  const int8_t* td = table->data_as<int8_t>();
  int8_t* od = out->data_as<int8_t>();
  if (same_strides(*x, *out)) {
    parallel_for(0, x->numel(), kParallelGrainElements,
                 [&](int64_t i0, int64_t i1) { lookup_i8(xd + i0, td, od + i0, i1 - i0); });
    return;
  }
  for_each_pair(*x, *out, [&](int64_t i, int64_t o, int64_t count) { lookup_i8(xd + i, td, od + o, count); });
}

// a, a_scale, a_zero_point, b, b_scale, b_zero_point, output_scale, output_zero_point,
// output_min, output_max | out: int8 tensors of one shape, or one of them [N, C, 1, 1]
void op_quantized_mul(KernelContext& ctx, Span<Value*> args) {
  const char* op = "etrt_quant::mul";
  if (!check_nargs(ctx, op, args, 11)) return;
  Tensor* a = tensor_arg(ctx, op, args, 0, "a");
  Tensor* b = tensor_arg(ctx, op, args, 3, "b");
  double as = 1, bs = 1, os = 1;
  int64_t az = 0, bz = 0, oz = 0, lo = 0, hi = 0;
  if (!int8_input(ctx, op, a, "a") || !int8_input(ctx, op, b, "b") ||
      !scalar_arg(ctx, op, args, 1, "a_scale", &as) || !int_arg(ctx, op, args, 2, "a_zero_point", &az) ||
      !scalar_arg(ctx, op, args, 4, "b_scale", &bs) || !int_arg(ctx, op, args, 5, "b_zero_point", &bz) ||
      !scalar_arg(ctx, op, args, 6, "output_scale", &os) || !int_arg(ctx, op, args, 7, "output_zero_point", &oz) ||
      !int_arg(ctx, op, args, 8, "output_min", &lo) || !int_arg(ctx, op, args, 9, "output_max", &hi) ||
      !output_range(ctx, op, lo, hi) || !int8_qparams(ctx, op, "a_scale", as, "a_zero_point", az) ||
      !int8_qparams(ctx, op, "b_scale", bs, "b_zero_point", bz) ||
      !int8_qparams(ctx, op, "output_scale", os, "output_zero_point", oz)) {
    return;
  }
  MulParams p{static_cast<float>(az), static_cast<float>(as), static_cast<float>(bz), static_cast<float>(bs),
              Quantize{static_cast<float>(1.0 / os), static_cast<float>(oz), static_cast<float>(lo),
                       static_cast<float>(hi)}};
  const bool same = same_sizes(a->sizes(), b->sizes());
  if (!same && !is_gate(*b, *a) && is_gate(*a, *b)) {
    // x * y is y * x in float32: keep the full tensor first
    std::swap(a, b);
    std::swap(p.a_zp, p.b_zp);
    std::swap(p.a_scale, p.b_scale);
  }
  if (!same && !is_gate(*b, *a)) {
    return fail(ctx, op, "a " + shape_string(a->sizes()) + " and b " + shape_string(b->sizes()) +
                             " must have one shape, or one be [N, C, 1, 1] of the other's N and C");
  }
  Tensor* out = strided_output_arg(ctx, op, args, 10, ScalarType::Char, a->sizes());
  if (out == nullptr) return;
  const int8_t* ad = a->data_as<int8_t>();
  const int8_t* bd = b->data_as<int8_t>();
  int8_t* od = out->data_as<int8_t>();
  if (same) {
    if (same_strides(*a, *out) && same_strides(*b, *out)) {
      parallel_for(0, a->numel(), kParallelGrainElements,
                   [&](int64_t i0, int64_t i1) { mul_same(ad + i0, bd + i0, od + i0, i1 - i0, p); });
      return;
    }
  }
  if (!same_strides(*a, *out) || (same && !same_strides(*b, *out))) {
    // layouts differ (a program output, NCHW, from channels-last values): element by element
    for_each_triple(*a, *b, *out, [&](int64_t i, int64_t j, int64_t k) { mul_same(ad + i, bd + j, od + k, 1, p); });
    return;
  }
  const int64_t n = a->size(0), c = a->size(1), plane = a->numel() / std::max<int64_t>(n * c, 1);
  // Channels-last rows are short (16 channels): `rep` pixels at a time make one row of at least
  // 64 values, the gate repeated `rep` times, so the loop runs whole vectors.
  const bool nhwc = !a->is_contiguous();
  const int64_t rep = nhwc ? std::max<int64_t>(1, (64 + c - 1) / std::max<int64_t>(c, 1)) : 1;
  // the gate dequantized once: [N][rep][C] floats (b is [N, C, 1, 1], contiguous either way)
  auto* gate = static_cast<float*>(ctx.allocate_temp(static_cast<size_t>(n * rep * c) * sizeof(float), 64));
  if (gate == nullptr && n * c > 0) return fail(ctx, op, "out of scratch memory");
  for (int64_t i = 0; i < n * c; ++i) {
    const float g = (static_cast<float>(bd[(i / c) * b->stride(0) + (i % c) * b->stride(1)]) - p.b_zp) * p.b_scale;
    for (int64_t k = 0; k < rep; ++k) gate[((i / c) * rep + k) * c + i % c] = g;
  }
  if (!nhwc) {
    parallel_chunks(n * c, plane, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) mul_plane(ad + i * plane, gate[i], od + i * plane, plane, p);
    });
    return;
  }
  parallel_chunks(n * plane, c, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1;) {
      const int64_t end = std::min(r1, (r / plane + 1) * plane);  // rows of one image
      const float* g = gate + (r / plane) * rep * c;
      const int64_t blocks = (end - r) / rep;
      mul_rows(ad + r * c, g, od + r * c, blocks, rep * c, p);
      const int64_t rest = r + blocks * rep;
      mul_rows(ad + rest * c, g, od + rest * c, end - rest, c, p);
      r = end;
    }
  });
}

// input, input_scale, input_zero_point, output_scale, output_zero_point, output_min,
// output_max, keepdim | out: the mean over the last two dimensions of a 4-D int8 input
void op_quantized_mean(KernelContext& ctx, Span<Value*> args) {
  const char* op = "etrt_quant::mean";
  if (!check_nargs(ctx, op, args, 9)) return;
  Tensor* x = tensor_arg(ctx, op, args, 0, "input");
  double is = 1, os = 1;
  int64_t iz = 0, oz = 0, lo = 0, hi = 0;
  bool keepdim = false;
  if (!int8_input(ctx, op, x, "input") || !scalar_arg(ctx, op, args, 1, "input_scale", &is) ||
      !int_arg(ctx, op, args, 2, "input_zero_point", &iz) || !scalar_arg(ctx, op, args, 3, "output_scale", &os) ||
      !int_arg(ctx, op, args, 4, "output_zero_point", &oz) || !int_arg(ctx, op, args, 5, "output_min", &lo) ||
      !int_arg(ctx, op, args, 6, "output_max", &hi) || !bool_arg(ctx, op, args, 7, "keepdim", &keepdim) ||
      !output_range(ctx, op, lo, hi) || !int8_qparams(ctx, op, "input_scale", is, "input_zero_point", iz) ||
      !int8_qparams(ctx, op, "output_scale", os, "output_zero_point", oz)) {
    return;
  }
  if (x->dim() != 4) return fail(ctx, op, "input must be 4-D, got " + shape_string(x->sizes()));
  const int64_t n = x->size(0), c = x->size(1), plane = x->size(2) * x->size(3);
  if (plane == 0 || plane > (int64_t{1} << 23)) {
    return fail(ctx, op, "H x W must be between 1 and 2^23 (an exact int32 sum), got " + shape_string(x->sizes()));
  }
  const int64_t keep[4] = {n, c, 1, 1};
  const Span<const int64_t> sizes(keep, keepdim ? 4 : 2);
  Tensor* out = strided_output_arg(ctx, op, args, 8, ScalarType::Char, sizes);
  if (out == nullptr) return;
  auto* acc = static_cast<int32_t*>(ctx.allocate_temp(static_cast<size_t>(n * c) * sizeof(int32_t), 64));
  if (acc == nullptr && n * c > 0) return fail(ctx, op, "out of scratch memory");
  const int8_t* xd = x->data_as<int8_t>();
  if (x->is_contiguous()) {
    parallel_chunks(n * c, plane, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) acc[i] = sum_plane(xd + i * plane, plane);
    });
  } else {
    std::fill(acc, acc + n * c, 0);
    for (int64_t b = 0; b < n; ++b) sum_rows(xd + b * plane * c, plane, c, acc + b * c);
  }
  // The reference's float32 steps on the exact sum: dequantized sum, / (H x W), quantize.
  const float scale = static_cast<float>(is), count = static_cast<float>(plane);
  const Quantize q{static_cast<float>(1.0 / os), static_cast<float>(oz), static_cast<float>(lo),
                   static_cast<float>(hi)};
  int8_t* od = out->data_as<int8_t>();
  for (int64_t i = 0; i < n * c; ++i) {
    const int64_t s = static_cast<int64_t>(acc[i]) - iz * plane;
    od[(i / c) * out->stride(0) + (i % c) * out->stride(1)] = q((static_cast<float>(s) * scale) / count);
  }
}

// input, kernel_size[], stride[], padding[], dilation[], ceil_mode | out: int8, aten::max_pool2d's
// windows (padding never wins)
void op_quantized_max_pool2d(KernelContext& ctx, Span<Value*> args) {
  const char* op = "etrt_quant::max_pool2d";
  if (!check_nargs(ctx, op, args, 7)) return;
  Tensor* x = tensor_arg(ctx, op, args, 0, "input");
  if (!int8_input(ctx, op, x, "input")) return;
  if (x->dim() != 4) return fail(ctx, op, "input must be 4-D, got " + shape_string(x->sizes()));
  int64_t kernel[2], stride[2], padding[2], dilation[2];
  bool ceil_mode = false;
  if (!pool_pair(ctx, op, args, 1, "kernel_size", nullptr, kernel) ||
      !pool_pair(ctx, op, args, 2, "stride", kernel, stride) ||
      !pool_pair(ctx, op, args, 3, "padding", nullptr, padding) ||
      !pool_pair(ctx, op, args, 4, "dilation", nullptr, dilation) ||
      !bool_arg(ctx, op, args, 5, "ceil_mode", &ceil_mode)) {
    return;
  }
  for (int d = 0; d < 2; ++d) {
    if (kernel[d] < 1 || stride[d] < 1 || dilation[d] < 1 || padding[d] < 0 || padding[d] > kernel[d] / 2) {
      return fail(ctx, op, "kernel_size, stride and dilation must be positive, padding at most half the kernel");
    }
  }
  PoolGeom g{x->size(0), x->size(1), x->size(2), x->size(3), 0, 0, kernel[0], kernel[1], stride[0], stride[1],
             padding[0], padding[1], dilation[0], dilation[1]};
  if (!checked::window(g.h, g.kh, g.ph, g.ph, g.sh, g.dh, ceil_mode, &g.oh) ||
      !checked::window(g.w, g.kw, g.pw, g.pw, g.sw, g.dw, ceil_mode, &g.ow) || g.oh < 1 || g.ow < 1) {
    return fail(ctx, op, "output size is empty for input " + shape_string(x->sizes()));
  }
  const int64_t sizes[4] = {g.n, g.c, g.oh, g.ow};
  Tensor* out = strided_output_arg(ctx, op, args, 6, ScalarType::Char, Span<const int64_t>(sizes, 4));
  if (out == nullptr) return;
  const bool nhwc = !x->is_contiguous() && channels_last_dense(*out) && !out->is_contiguous();
  const int8_t* xd = x->data_as<int8_t>();
  int8_t* od = out->data_as<int8_t>();
  // in-range taps of one window (the kernel may be 2^20 wide: the product would overflow)
  const int64_t taps = std::min(g.kh, g.h) * std::min(g.kw, g.w);
  // A window's first in-range row / column and its end (windows never lie wholly in padding).
  auto span = [](int64_t o, int64_t s, int64_t p, int64_t d, int64_t k, int64_t size, int64_t* b, int64_t* e) {
    const int64_t start = o * s - p;
    *b = 0, *e = k;
    while (*b < k && start + *b * d < 0) ++*b;
    while (*e > *b && start + (*e - 1) * d >= size) --*e;
    return start;
  };
  if (nhwc) {
    parallel_chunks(g.n * g.oh, checked::mul_sat(g.ow * g.c, taps), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t b = r / g.oh, y = r % g.oh;
        int64_t ky0, ky1;
        const int64_t iy = span(y, g.sh, g.ph, g.dh, g.kh, g.h, &ky0, &ky1);
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          int64_t kx0, kx1;
          const int64_t ix = span(ox, g.sw, g.pw, g.dw, g.kw, g.w, &kx0, &kx1);
          int8_t* o = od + ((b * g.oh + y) * g.ow + ox) * g.c;
          std::fill(o, o + g.c, static_cast<int8_t>(-128));
          for (int64_t ky = ky0; ky < ky1; ++ky) {
            for (int64_t kx = kx0; kx < kx1; ++kx) {
              max_rows(xd + ((b * g.h + iy + ky * g.dh) * g.w + ix + kx * g.dw) * g.c, o, g.c);
            }
          }
        }
      }
    });
    return;
  }
  // planes, through any strides (NCHW, or one side channels-last)
  parallel_chunks(g.n * g.c, checked::mul_sat(g.oh * g.ow, taps), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t b = p / g.c, ch = p % g.c;
      const int8_t* in = xd + b * x->stride(0) + ch * x->stride(1);
      int8_t* o = od + b * out->stride(0) + ch * out->stride(1);
      const int64_t sy = x->stride(2), sx = x->stride(3);
      for (int64_t y = 0; y < g.oh; ++y) {
        int64_t ky0, ky1;
        const int64_t iy = span(y, g.sh, g.ph, g.dh, g.kh, g.h, &ky0, &ky1);
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          int64_t kx0, kx1;
          const int64_t ix = span(ox, g.sw, g.pw, g.dw, g.kw, g.w, &kx0, &kx1);
          int8_t m = -128;
          for (int64_t ky = ky0; ky < ky1; ++ky) {
            for (int64_t kx = kx0; kx < kx1; ++kx) m = std::max(m, in[(iy + ky * g.dh) * sy + (ix + kx * g.dw) * sx]);
          }
          o[y * out->stride(2) + ox * out->stride(3)] = m;
        }
      }
    }
  });
}


// input, input_scale, input_zero_point, output_scale, output_zero_point, output_min, output_max,
// kernel_size[], stride[], padding[], ceil_mode, count_include_pad, divisor_override? | out:
// aten::avg_pool2d of the dequantized values, quantized: sum(x - zero point) over the window in
// int32, then float(sum) * scale / divisor and the quantize, in float32
void op_quantized_avg_pool2d(KernelContext& ctx, Span<Value*> args) {
  const char* op = "etrt_quant::avg_pool2d";
  if (!check_nargs(ctx, op, args, 14)) return;
  Tensor* x = tensor_arg(ctx, op, args, 0, "input");
  double is = 1, os = 1;
  int64_t iz = 0, oz = 0, lo = 0, hi = 0, divisor = 0;
  int64_t kernel[2], stride[2], padding[2];
  bool ceil_mode = false, include_pad = true;
  if (!int8_input(ctx, op, x, "input") || !scalar_arg(ctx, op, args, 1, "input_scale", &is) ||
      !int_arg(ctx, op, args, 2, "input_zero_point", &iz) || !scalar_arg(ctx, op, args, 3, "output_scale", &os) ||
      !int_arg(ctx, op, args, 4, "output_zero_point", &oz) || !int_arg(ctx, op, args, 5, "output_min", &lo) ||
      !int_arg(ctx, op, args, 6, "output_max", &hi) || !output_range(ctx, op, lo, hi) ||
      !int8_qparams(ctx, op, "input_scale", is, "input_zero_point", iz) ||
      !int8_qparams(ctx, op, "output_scale", os, "output_zero_point", oz) ||
      !pool_pair(ctx, op, args, 7, "kernel_size", nullptr, kernel) ||
      !pool_pair(ctx, op, args, 8, "stride", kernel, stride) ||
      !pool_pair(ctx, op, args, 9, "padding", nullptr, padding) ||
      !bool_arg(ctx, op, args, 10, "ceil_mode", &ceil_mode) ||
      !bool_arg(ctx, op, args, 11, "count_include_pad", &include_pad) ||
      !optional_int_arg(ctx, op, args, 12, "divisor_override", 0, &divisor)) {
    return;
  }
  if (x->dim() != 4) return fail(ctx, op, "input must be 4-D, got " + shape_string(x->sizes()));
  for (int d = 0; d < 2; ++d) {
    if (kernel[d] < 1 || stride[d] < 1 || padding[d] < 0 || padding[d] > kernel[d] / 2) {
      return fail(ctx, op, "kernel_size and stride must be positive, padding at most half the kernel");
    }
  }
  if (divisor < 0) return fail(ctx, op, "divisor_override must be positive, got " + std::to_string(divisor));
  // each extent first: their product must not overflow
  if (kernel[0] > (int64_t{1} << 23) || kernel[1] > (int64_t{1} << 23) || kernel[0] * kernel[1] > (int64_t{1} << 23)) {
    return fail(ctx, op, "kernel_size " + shape_string(Span<const int64_t>(kernel, 2)) +
                             " is over 2^23 taps (an exact int32 sum)");
  }
  const int64_t n = x->size(0), c = x->size(1), h = x->size(2), w = x->size(3);
  int64_t oh = 0, ow = 0;
  if (!checked::window(h, kernel[0], padding[0], padding[0], stride[0], 1, ceil_mode, &oh) ||
      !checked::window(w, kernel[1], padding[1], padding[1], stride[1], 1, ceil_mode, &ow) || oh < 1 || ow < 1) {
    return fail(ctx, op, "output size is empty for input " + shape_string(x->sizes()));
  }
  const int64_t sizes[4] = {n, c, oh, ow};
  Tensor* out = strided_output_arg(ctx, op, args, 13, ScalarType::Char, Span<const int64_t>(sizes, 4));
  if (out == nullptr) return;
  const float scale = static_cast<float>(is);
  const Quantize q{static_cast<float>(1.0 / os), static_cast<float>(oz), static_cast<float>(lo),
                   static_cast<float>(hi)};
  const int8_t* xd = x->data_as<int8_t>();
  int8_t* od = out->data_as<int8_t>();
  auto value = [&](int64_t sum, int64_t taps, const AvgWindow& wy, const AvgWindow& wx) {
    const int64_t count = divisor > 0 ? divisor
                          : include_pad ? wy.padded * wx.padded
                                        : (wy.end - wy.begin) * (wx.end - wx.begin);
    return q((static_cast<float>(sum - iz * taps) * scale) / static_cast<float>(count));
  };
  const bool nhwc = !x->is_contiguous() && channels_last_dense(*out) && !out->is_contiguous();
  if (nhwc) {
    constexpr int64_t kBlock = 256;  // channels summed at a time, on the stack of each thread
    parallel_chunks(n * oh, ow * c * kernel[0] * kernel[1], [&](int64_t r0, int64_t r1) {
      int32_t acc[kBlock];
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t b = r / oh, y = r % oh;
        const AvgWindow wy = avg_window(y, stride[0], padding[0], kernel[0], h);
        for (int64_t ox = 0; ox < ow; ++ox) {
          const AvgWindow wx = avg_window(ox, stride[1], padding[1], kernel[1], w);
          const int64_t taps = (wy.end - wy.begin) * (wx.end - wx.begin);
          int8_t* o = od + ((b * oh + y) * ow + ox) * c;
          for (int64_t c0 = 0; c0 < c; c0 += kBlock) {
            const int64_t len = std::min(kBlock, c - c0);
            std::fill(acc, acc + len, 0);
            for (int64_t iy = wy.begin; iy < wy.end; ++iy) {
              for (int64_t ix = wx.begin; ix < wx.end; ++ix) {
                add_row_i32(xd + ((b * h + iy) * w + ix) * c + c0, acc, len);
              }
            }
            for (int64_t ch = 0; ch < len; ++ch) o[c0 + ch] = value(acc[ch], taps, wy, wx);
          }
        }
      }
    });
    return;
  }
  parallel_chunks(n * c, oh * ow * kernel[0] * kernel[1], [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t b = p / c, ch = p % c;
      const int8_t* in = xd + b * x->stride(0) + ch * x->stride(1);
      int8_t* o = od + b * out->stride(0) + ch * out->stride(1);
      for (int64_t y = 0; y < oh; ++y) {
        const AvgWindow wy = avg_window(y, stride[0], padding[0], kernel[0], h);
        for (int64_t ox = 0; ox < ow; ++ox) {
          const AvgWindow wx = avg_window(ox, stride[1], padding[1], kernel[1], w);
          int64_t sum = 0;
          for (int64_t iy = wy.begin; iy < wy.end; ++iy) {
            for (int64_t ix = wx.begin; ix < wx.end; ++ix) sum += in[iy * x->stride(2) + ix * x->stride(3)];
          }
          o[y * out->stride(2) + ox * out->stride(3)] = value(sum, (wy.end - wy.begin) * (wx.end - wx.begin), wy, wx);
        }
      }
    }
  });
}

}  // namespace kernels
}  // namespace etrt
