// Branch-free float math that GCC vectorises inside ETRT_ISA_DISPATCH loops (libm calls
// would stay scalar). Accuracy: exp about 2 ulp, GELU within 4.5e-7 (absolute).
#pragma once

#include <cstdint>
#include <cstring>

namespace etrt {
namespace kernels {

inline float bits_to_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline uint32_t float_to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// exp(x) for float. Below ln(FLT_MIN) it returns 0 (no denormals), above ~88.7 a huge value
// (exp(+inf) is not needed by the kernels: softmax and tanh only pass arguments <= 0).
inline float exp_f32(float x) {
  const float lo = -87.33654f;  // ln(FLT_MIN)
  const float hi = 88.3762626647949f;
  float xc = x < lo ? lo : x;
  xc = xc > hi ? hi : xc;
  // n = round(x / ln2) with the 1.5 * 2^23 trick (no floor instruction needed on SSE2).
  const float magic = 12582912.0f;
  float k = xc * 1.44269504088896341f + magic;
  int32_t ni = static_cast<int32_t>(float_to_bits(k) - float_to_bits(magic));
  float n = k - magic;
  float r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float y = p * r * r + r + 1.0f;
  // 2^n; n is in [-126, 128) after the clamp, so the biased exponent stays positive.
  float scale = bits_to_float(static_cast<uint32_t>(ni + 127) << 23);
  float result = y * scale;
  return x < lo ? 0.0f : result;
}

// Exact (erf) GELU, x * Phi(x), through erfc so that large |x| keeps full accuracy:
// erfc(z) = t * exp(P(t) - z^2), t = 1 / (1 + z/2) (Numerical Recipes' erfcc, relative error
// below 1.2e-7), then gelu = x - x*erfc/2 for x >= 0 and x*erfc/2 below. Within 2.5e-7 of the
// true value over the float range, i.e. about half an ulp of the result.
inline float gelu_erf_f32(float x) {
  float ax = x < 0.0f ? -x : x;
  float z = ax * 0.70710678118654752f;
  z = z > 10.0f ? 10.0f : z;  // erfc(10) is 0 in float
  float t = 1.0f / (1.0f + 0.5f * z);
  float p = 0.17087277f;
  p = p * t - 0.82215223f;
  p = p * t + 1.48851587f;
  p = p * t - 1.13520398f;
  p = p * t + 0.27886807f;
  p = p * t - 0.18628806f;
  p = p * t + 0.09678418f;
  p = p * t + 0.37409196f;
  p = p * t + 1.00002368f;
  p = p * t - 1.26551223f;
  float y = t * exp_f32(p - z * z);
  float c = y == 0.0f ? 0.0f : 0.5f * x * y;  // y == 0 keeps gelu(+-inf) free of inf * 0
  return x >= 0.0f ? x - c : c;
}

// 16 floats as one GCC vector (one AVX-512 register; two or four in the other clones).
typedef float F32x16 __attribute__((vector_size(64)));

// Largest |v[i]|. A NaN lane may be dropped: callers only compare the result with a bound.
inline float max_abs(const F32x16& v) {
  F32x16 m = v < 0.0f ? -v : v;
  F32x16 t = __builtin_shufflevector(m, m, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
  m = t > m ? t : m;
  t = __builtin_shufflevector(m, m, 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11);
  m = t > m ? t : m;
  t = __builtin_shufflevector(m, m, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
  m = t > m ? t : m;
  t = __builtin_shufflevector(m, m, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14);
  m = t > m ? t : m;
  return m[0];
}

// Exact GELU for |x| < kGeluSmall, 4x cheaper than gelu_erf_f32: erf(z) = z P(z^2) / Q(z^2)
// (Eigen's and XLA's float erf), no exp and no erfc. Its error grows with |x| (cancellation in
// 1 + erf for x < 0, the approximation near its clamp); below kGeluSmall it stays within 4.5e-7.
constexpr float kGeluSmall = 3.0f;

// The scalar functions above, 16 lanes at a time and lane for lane the same (GCC leaves loops
// over them scalar when it cannot if-convert their selects). Vectors go by reference, results
// in place or through a pointer: by value they would change the ABI between the clones.
typedef int32_t I32x16 __attribute__((vector_size(64)));
#define ETRT_VEC_INLINE __attribute__((always_inline)) inline

// W floats as one GCC vector. A clone that computes lane by lane uses its registers' width (16
// for AVX-512, 8 for AVX2, 4 for SSE2): GCC lowers a comparison or select on a vector wider than
// the target's registers lane by lane, in scalar code (exp16 ran 40-90x slower under AVX2 than
// under AVX-512), and only plain arithmetic in halves.
template <int W>
struct Lanes {
  typedef float F __attribute__((vector_size(W * 4)));
  typedef int32_t I __attribute__((vector_size(W * 4)));
};

// gelu_erf for |x| < kGeluSmall (see above), W lanes. Vectors pass by reference: by value they
// would change the ABI between the clones.
template <int W>
ETRT_VEC_INLINE void gelu_erf_small_lanes(const typename Lanes<W>::F& x, float* out) {
  using F = typename Lanes<W>::F;
  const F z = x * 0.70710678118654752f;
  const F z2 = z * z;
  F p = z2 * -2.72614225801306e-10f + 2.77068142495902e-08f;
  p = p * z2 + -2.10102402082508e-06f;
  p = p * z2 + -5.69250639462346e-05f;
  p = p * z2 + -7.34990630326855e-04f;
  p = p * z2 + -2.95459980854025e-03f;
  p = p * z2 + -1.60960333262415e-02f;
  F q = z2 * -1.45660718464996e-05f + -2.13374055278905e-04f;
  q = q * z2 + -1.68282697438203e-03f;
  q = q * z2 + -7.37332916720468e-03f;
  q = q * z2 + -1.42647390514189e-02f;
  const F h = 0.5f * x;
  const F r = h + h * (z * p / q);
  std::memcpy(out, &r, sizeof r);
}
inline void gelu_erf_small(const F32x16& x, float* out) { gelu_erf_small_lanes<16>(x, out); }

// x = exp(x): exp_f32's arithmetic on whole vectors (a loop over lanes would stay scalar).
template <int W>
ETRT_VEC_INLINE void exp_lanes(typename Lanes<W>::F& x) {
  using F = typename Lanes<W>::F;
  using I = typename Lanes<W>::I;
  const F lo = F{} + -87.33654f;  // ln(FLT_MIN): below it the result is 0
  const F hi = F{} + 88.3762626647949f;
  const F magic = F{} + 12582912.0f;
  F xc = x < lo ? lo : x;
  xc = xc > hi ? hi : xc;
  const F k = xc * 1.44269504088896341f + magic;
  I ni, kb, mb;
  std::memcpy(&kb, &k, sizeof k);
  std::memcpy(&mb, &magic, sizeof magic);
  ni = kb - mb;
  const F n = k - magic;
  F r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  F p = r * 1.9875691500e-4f + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const F y = p * r * r + r + 1.0f;
  const I bits = (ni + 127) << 23;
  F scale;
  std::memcpy(&scale, &bits, sizeof bits);
  const F result = y * scale;
  x = x < lo ? F{} : result;
}
ETRT_VEC_INLINE void exp16(F32x16& x) { exp_lanes<16>(x); }

template <int W>
ETRT_VEC_INLINE void tanh_lanes(const typename Lanes<W>::F& x, typename Lanes<W>::F* out) {
  using F = typename Lanes<W>::F;
  const F ax = x < 0.0f ? -x : x;
  F t = -2.0f * ax;
  exp_lanes<W>(t);
  const F r = (1.0f - t) / (1.0f + t);
  *out = x < 0.0f ? -r : r;
}
ETRT_VEC_INLINE void tanh16(const F32x16& x, F32x16* out) { tanh_lanes<16>(x, out); }

template <int W>
ETRT_VEC_INLINE void tanh_accurate_lanes(const typename Lanes<W>::F& x, typename Lanes<W>::F* out) {
  using F = typename Lanes<W>::F;
  const F x2 = x * x;
  F p = F{} + 1382.0f / 155925.0f;
  p = p * x2 - 62.0f / 2835.0f;
  p = p * x2 + 17.0f / 315.0f;
  p = p * x2 - 2.0f / 15.0f;
  p = p * x2 + 1.0f / 3.0f;
  const F small = x - x * x2 * p;
  F big;
  tanh_lanes<W>(x, &big);
  const F ax = x < 0.0f ? -x : x;
  *out = ax < 0.3f ? small : big;
}
ETRT_VEC_INLINE void tanh_accurate16(const F32x16& x, F32x16* out) { tanh_accurate_lanes<16>(x, out); }

// Swaps the off-diagonal B x B blocks of every 2B x 2B block of a 16 x 16 tile (rows t[0..16)).
template <int B>
__attribute__((always_inline)) inline void swap_blocks(F32x16* t) {
#define ETRT_LO(j) (((j) & B) ? 16 + (j) - B : (j))
#define ETRT_HI(j) (((j) & B) ? 16 + (j) : (j) + B)
  for (int i = 0; i < 16; ++i) {
    if (i & B) continue;
    const F32x16 a = t[i], c = t[i + B];
    t[i] = __builtin_shufflevector(a, c, ETRT_LO(0), ETRT_LO(1), ETRT_LO(2), ETRT_LO(3), ETRT_LO(4),
                                   ETRT_LO(5), ETRT_LO(6), ETRT_LO(7), ETRT_LO(8), ETRT_LO(9),
                                   ETRT_LO(10), ETRT_LO(11), ETRT_LO(12), ETRT_LO(13), ETRT_LO(14),
                                   ETRT_LO(15));
    t[i + B] = __builtin_shufflevector(a, c, ETRT_HI(0), ETRT_HI(1), ETRT_HI(2), ETRT_HI(3),
                                       ETRT_HI(4), ETRT_HI(5), ETRT_HI(6), ETRT_HI(7), ETRT_HI(8),
                                       ETRT_HI(9), ETRT_HI(10), ETRT_HI(11), ETRT_HI(12),
                                       ETRT_HI(13), ETRT_HI(14), ETRT_HI(15));
  }
#undef ETRT_LO
#undef ETRT_HI
}

// Transposes a 16 x 16 tile in registers: four rounds of block swaps.
__attribute__((always_inline)) inline void transpose16(F32x16* t) {
  swap_blocks<8>(t);
  swap_blocks<4>(t);
  swap_blocks<2>(t);
  swap_blocks<1>(t);
}

// tanh(x) through exp(-2|x|), keeping the sign.
inline float tanh_f32(float x) {
  float ax = x < 0.0f ? -x : x;
  float t = exp_f32(-2.0f * ax);
  float r = (1.0f - t) / (1.0f + t);
  return x < 0.0f ? -r : r;
}

// tanh within a few ulp: an odd Taylor polynomial for |x| < 0.3 (where 1 - exp(-2|x|) would
// cancel), the exp form above it.
inline float tanh_accurate_f32(float x) {
  const float x2 = x * x;
  float p = 1382.0f / 155925.0f;
  p = p * x2 - 62.0f / 2835.0f;
  p = p * x2 + 17.0f / 315.0f;
  p = p * x2 - 2.0f / 15.0f;
  p = p * x2 + 1.0f / 3.0f;
  const float small = x - x * x2 * p;
  const float big = tanh_f32(x);
  return (x < 0.0f ? -x : x) < 0.3f ? small : big;
}

constexpr float kInfinity = __builtin_inff();
constexpr float kExpOverflow = 88.7228391f;  // ln(FLT_MAX)

// exp(x) over the whole float range: exp_f32 clamps its argument a little below ln(FLT_MAX),
// so the top of the range goes through exp(x - ln 2) * 2.
inline float exp_full_f32(float x) {
  const float top = exp_f32(x - 0.693147180559945f) * 2.0f;
  const float r = x > 88.3762626647949f ? top : exp_f32(x);
  return x > kExpOverflow ? kInfinity : r;
}

// x^p as ATen computes pow(Tensor, Scalar): exact products and square roots for the common
// exponents, libm otherwise.
inline float pow_f32(float x, float p) {
  if (p == 2.0f) return x * x;
  if (p == 1.0f) return x;
  if (p == 0.5f) return __builtin_sqrtf(x);
  if (p == 3.0f) return x * x * x;
  if (p == -1.0f) return 1.0f / x;
  if (p == -0.5f) return 1.0f / __builtin_sqrtf(x);
  if (p == -2.0f) return 1.0f / (x * x);
  return __builtin_powf(x, p);
}

// GELU with the tanh approximation, as ATen computes it.
// 0.5 x (1 + tanh(u)) as x / (1 + exp(-2u)): one exp and one division, and no cancellation
// where tanh(u) nears -1. gelu(-inf) is NaN, as torch's 0.5 * -inf * 0.
inline float gelu_tanh_f32(float x) {
  const float beta = 0.7978845608028654f;  // sqrt(2 / pi)
  const float kappa = 0.044715f;
  float inner = beta * (x + kappa * x * x * x);
  const float r = x / (1.0f + exp_f32(-2.0f * inner));
  return x == -__builtin_inff() ? __builtin_nanf("") : r;
}

template <int W>
ETRT_VEC_INLINE void exp_full_lanes(const typename Lanes<W>::F& x, typename Lanes<W>::F* out) {
  *out = x;
  exp_lanes<W>(*out);
  // The top of the range is rare: lane by lane, behind one test of the whole vector where that
  // is faster (AVX-512 makes the lane loop one mask test by itself: 24 us per 64K floats of
  // silu, 32 with the test; AVX2 42 with it, 54 without).
  if constexpr (W < 16) {
    const typename Lanes<W>::I big = x > 88.3762626647949f;
    int32_t any[W];
    std::memcpy(any, &big, sizeof big);
    int32_t seen = 0;
    for (int j = 0; j < W; ++j) seen |= any[j];
    if (seen == 0) return;
  }
  for (int j = 0; j < W; ++j) {
    if (x[j] > 88.3762626647949f) (*out)[j] = exp_full_f32(x[j]);
  }
}

}  // namespace kernels
}  // namespace etrt
