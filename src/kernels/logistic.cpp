// sigmoid and x * sigmoid(x) (SiLU), the vector loops of logistic_isa.inc.
//
// Accuracy against double precision, over every 4099th float bit pattern (both signs, denormals,
// infinities, NaNs): within 3.1 ulp for sigmoid and SiLU at AVX-512, AVX2 and SSE2, 3.4 over
// every 61st at AVX2 and AVX-512 (the exp polynomial is 1e-7 of it; the divide rounds once). Lanes with |x| > 86 (results near or below
// the smallest normal, or exp(-x) past the exponent add's range) and NaN lanes go through
// logistic_exact. NaN stays NaN, sigmoid(+-inf) is 1 and 0, sigmoid(0) is 0.5, silu(+inf) is inf
// and silu(-inf) NaN (-inf * 0, as in ATen), silu(-3e38) is -0.
// tests/cpp/test_kernels_light.cpp (test_logistic_accuracy) holds every instruction set to 4
// ulp over every 4099th pattern and checks the special values.
#include "logistic.h"

#include <cmath>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "isa_dispatch.h"

namespace etrt {
namespace kernels {

float logistic_exact(bool silu, float x) {
  // In double: the result rounds once, also into the denormals where exp(-x) overflows float.
  const double s = 1.0 / (1.0 + std::exp(-static_cast<double>(x)));
  return static_cast<float>(silu ? x * s : s);
}

#define ETRT_ISA_FILE "logistic_isa.inc"
#include "isa_clones.inc"
#undef ETRT_ISA_FILE

void sigmoid_contiguous(float* o, const float* a, int64_t n) {
#if ETRT_ISA_X86
  switch (isa_level()) {
    case 2: return logistic::isa_avx512::sigmoid_rows(o, a, n);
    case 1: return logistic::isa_avx2::sigmoid_rows(o, a, n);
    default: return logistic::isa_sse2::sigmoid_rows(o, a, n);
  }
#else
  logistic::isa_generic::sigmoid_rows(o, a, n);
#endif
}

void silu_contiguous(float* o, const float* a, int64_t n) {
#if ETRT_ISA_X86
  switch (isa_level()) {
    case 2: return logistic::isa_avx512::silu_rows(o, a, n);
    case 1: return logistic::isa_avx2::silu_rows(o, a, n);
    default: return logistic::isa_sse2::silu_rows(o, a, n);
  }
#else
  logistic::isa_generic::silu_rows(o, a, n);
#endif
}

}  // namespace kernels
}  // namespace etrt
