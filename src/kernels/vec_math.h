// Branch-free float math that GCC vectorises inside ETRT_VECTOR_CLONES loops (libm calls
// would stay scalar). Accuracy: exp about 2 ulp, GELU about half an ulp.
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

// tanh(x) through exp(-2|x|), keeping the sign.
inline float tanh_f32(float x) {
  float ax = x < 0.0f ? -x : x;
  float t = exp_f32(-2.0f * ax);
  float r = (1.0f - t) / (1.0f + t);
  return x < 0.0f ? -r : r;
}

// GELU with the tanh approximation, as ATen computes it.
inline float gelu_tanh_f32(float x) {
  const float beta = 0.7978845608028654f;  // sqrt(2 / pi)
  const float kappa = 0.044715f;
  float inner = beta * (x + kappa * x * x * x);
  return 0.5f * x * (1.0f + tanh_f32(inner));
}

}  // namespace kernels
}  // namespace etrt
