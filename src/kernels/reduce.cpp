// Row-wise kernels: softmax, log-softmax, layer norm, any, sum and mean; batch norm (inference).
// Each row is processed while it sits in cache.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "isa_dispatch.h"
#include "light.h"
#include "util.h"
#include "vec_math.h"

namespace etrt {
namespace kernels {
namespace {


// 16 floats as one GCC vector: AVX-512 handles it in one register, the other clones in two or
// four. Horizontal max/sum are explicit shuffle trees (loops would not vectorise without
// -ffast-math), which makes short rows (attention: 16 wide) cheap.
typedef float Vec16 __attribute__((vector_size(64)));

inline float horizontal_max(const Vec16& in) {
  Vec16 v = in;
  Vec16 s = __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
  v = s > v ? s : v;
  s = __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11);
  v = s > v ? s : v;
  s = __builtin_shufflevector(v, v, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
  v = s > v ? s : v;
  s = __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14);
  v = s > v ? s : v;
  return v[0];
}

inline float horizontal_sum(const Vec16& in) {
  Vec16 v = in;
  v += __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
  v += __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11);
  v += __builtin_shufflevector(v, v, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
  v += __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14);
  return v[0];
}

// Sum of a contiguous run in double: eight independent lanes, so the additions do not wait on
// each other, then the lanes in a fixed order. The lanes are 8 / D vectors of D doubles, the
// clone's register width (an 8-double GCC vector lives on the stack below AVX-512: mean.dim of
// Llama's RMS norms took 13x its AVX-512 time under AVX2).
template <int D>
struct DoubleLanes {
  typedef double F __attribute__((vector_size(D * 8)));
};

template <int D>
ETRT_VEC_INLINE double sum_run_lanes(const float* x, int64_t n) {
  using Vd = typename DoubleLanes<D>::F;
  constexpr int K = 8 / D;
  Vd acc[K] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < K; ++k) {
      // Lane by lane, not __builtin_convertvector, which GCC lowered through halves (AVX-512)
      // or the stack (SSE2).
      if constexpr (D == 8) {
        const Vd v = {x[i], x[i + 1], x[i + 2], x[i + 3], x[i + 4], x[i + 5], x[i + 6], x[i + 7]};
        acc[k] += v;
      } else {
        Vd v;
        for (int d = 0; d < D; ++d) v[d] = x[i + k * D + d];
        acc[k] += v;
      }
    }
  }
  auto lane = [&](int j) { return acc[j / D][j % D]; };
  double t = ((lane(0) + lane(4)) + (lane(2) + lane(6))) + ((lane(1) + lane(5)) + (lane(3) + lane(7)));
  for (; i < n; ++i) t += x[i];
  return t;
}
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f"))) static double sum_run_avx512(const float* x, int64_t n) {
  return sum_run_lanes<8>(x, n);
}
__attribute__((target("avx2"))) static double sum_run_avx2(const float* x, int64_t n) { return sum_run_lanes<4>(x, n); }
double sum_run(const float* x, int64_t n) {
  switch (isa_level()) {
    case 2: return sum_run_avx512(x, n);
    case 1: return sum_run_avx2(x, n);
    default: return sum_run_lanes<2>(x, n);
  }
}
#else
double sum_run(const float* x, int64_t n) { return sum_run_lanes<2>(x, n); }
#endif

// The sum of 16 float lanes held as 16 / W vectors: the pairs of a 16-lane shuffle tree (upper
// half onto the lower, then 4, 2, 1 apart), in the same order at every width.
template <int W>
ETRT_VEC_INLINE float sum16(const typename Lanes<W>::F* acc) {
  if constexpr (W == 16) {
    return horizontal_sum(acc[0]);
  } else if constexpr (W == 8) {
    typename Lanes<8>::F v = acc[0] + acc[1];
    v += __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3);
    v += __builtin_shufflevector(v, v, 2, 3, 0, 1, 6, 7, 4, 5);
    v += __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6);
    return v[0];
  } else {
    static_assert(W == 4, "16, 8 or 4 lanes");
    typename Lanes<4>::F v = (acc[0] + acc[2]) + (acc[1] + acc[3]);
    v += __builtin_shufflevector(v, v, 2, 3, 0, 1);
    v += __builtin_shufflevector(v, v, 1, 0, 3, 2);
    return v[0];
  }
}

// max over a contiguous run, NaN winning (ATen's amax); `start` is the running maximum.
// The largest (MAX) or smallest value of x[0, n) and start; NaN when any is NaN.
template <int W, bool MAX>
ETRT_VEC_INLINE float extreme_run_lanes(const float* x, int64_t n, float start) {
  using F = typename Lanes<W>::F;
  constexpr float kNone = MAX ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  F m = F{} + kNone;
  F nan = {};
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    F v;
    std::memcpy(&v, x + i, sizeof v);
    nan = v != v ? F{} + 1.0f : nan;
    m = (MAX ? v > m : v < m) ? v : m;
  }
  float r = kNone;
  bool any_nan = start != start;
  for (int j = 0; j < W; ++j) {
    r = (MAX ? m[j] > r : m[j] < r) ? m[j] : r;
    any_nan = any_nan || nan[j] > 0.0f;
  }
  r = (MAX ? start > r : start < r) ? start : r;
  for (; i < n; ++i) {
    any_nan = any_nan || x[i] != x[i];
    r = (MAX ? x[i] > r : x[i] < r) ? x[i] : r;
  }
  return any_nan ? std::numeric_limits<float>::quiet_NaN() : r;
}

template <int W>
ETRT_VEC_INLINE float max_run_lanes(const float* x, int64_t n, float start) {
  return extreme_run_lanes<W, true>(x, n, start);
}

// Softmax of `rows` contiguous rows of length n, W lanes at a time: each clone below passes its
// registers' width (vec_math.h, Lanes). With 16-lane vectors under AVX2, GCC turned every
// comparison into scalar code: 4.3x the AVX-512 time on rows of 4096. The row loop sits inside
// the clone so each row costs no dispatch.
template <int W>
__attribute__((always_inline)) inline void softmax_rows_lanes(float* o, const float* x, int64_t rows, int64_t n) {
  using F = typename Lanes<W>::F;
  const float ninf = -std::numeric_limits<float>::infinity();
  if constexpr (W == 16) {
    if (n == 16) {  // attention rows: one vector each, no loops or tails
      for (int64_t r = 0; r < rows; ++r, o += 16, x += 16) {
        Vec16 v;
        std::memcpy(&v, x, sizeof v);
        const Vec16 d = v - horizontal_max(v);
        Vec16 e;
        for (int j = 0; j < 16; ++j) e[j] = exp_f32(d[j]);
        e *= 1.0f / horizontal_sum(e);
        std::memcpy(o, &e, sizeof e);
      }
      return;
    }
  }
  for (int64_t r = 0; r < rows; ++r, o += n, x += n) {
    F m = F{} + ninf;
    int64_t i = 0;
    for (; i + W <= n; i += W) {
      F v;
      std::memcpy(&v, x + i, sizeof v);
      m = v > m ? v : m;
    }
    float mx = ninf;
    for (int j = 0; j < W; ++j) mx = m[j] > mx ? m[j] : mx;
    for (; i < n; ++i) mx = x[i] > mx ? x[i] : mx;
    F s = {};
    i = 0;
    for (; i + W <= n; i += W) {
      F e;
      std::memcpy(&e, x + i, sizeof e);
      e -= mx;
      exp_lanes<W>(e);
      s += e;
      std::memcpy(o + i, &e, sizeof e);
    }
    float sum = 0.0f;
    for (int j = 0; j < W; ++j) sum += s[j];
    for (; i < n; ++i) {
      float e = exp_f32(x[i] - mx);
      o[i] = e;
      sum += e;
    }
    const float inv = 1.0f / sum;
    for (i = 0; i < n; ++i) o[i] *= inv;
  }
}
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f"))) static void softmax_rows_avx512(float* o, const float* x, int64_t rows,
                                                                   int64_t n) {
  softmax_rows_lanes<16>(o, x, rows, n);
}
__attribute__((target("avx2,fma"))) static void softmax_rows_avx2(float* o, const float* x, int64_t rows,
                                                                  int64_t n) {
  softmax_rows_lanes<8>(o, x, rows, n);
}
void softmax_rows(float* o, const float* x, int64_t rows, int64_t n) {
  switch (isa_level()) {
    case 2: return softmax_rows_avx512(o, x, rows, n);
    case 1: return softmax_rows_avx2(o, x, rows, n);
    default: return softmax_rows_lanes<4>(o, x, rows, n);
  }
}
#else
void softmax_rows(float* o, const float* x, int64_t rows, int64_t n) { softmax_rows_lanes<4>(o, x, rows, n); }
#endif

// max + log(sum of exponentials): a row of -inf gives NaN (-inf - -inf) and a row holding +inf
// NaN everywhere, as ATen.
inline float log_softmax_shift(float mx, double sum) {
  const float inf = std::numeric_limits<float>::infinity();
  if (mx == -inf) return mx;
  if (mx == inf) return std::numeric_limits<float>::quiet_NaN();
  return mx + static_cast<float>(std::log(sum));
}

// log_softmax of one contiguous row: x - max - log(sum(exp(x - max))), the exponentials 16 at a
// time in float (as ATen's vectorised kernel), as 16 / W vectors of the clone's width.
template <int W>
ETRT_VEC_INLINE void log_softmax_row_lanes(float* o, const float* x, int64_t n) {
  using F = typename Lanes<W>::F;
  constexpr int K = 16 / W;
  const float mx = max_run_lanes<W>(x, n, -std::numeric_limits<float>::infinity());
  F s[K] = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (int k = 0; k < K; ++k) {
      F v;
      std::memcpy(&v, x + i + k * W, sizeof v);
      v -= mx;
      exp_lanes<W>(v);
      s[k] += v;
    }
  }
  float sum = sum16<W>(s);
  for (; i < n; ++i) sum += exp_f32(x[i] - mx);
  const float shift = log_softmax_shift(mx, sum);
  for (i = 0; i < n; ++i) o[i] = x[i] - shift;
}

// The clones of max_run and log_softmax_row, each in its registers' width.
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f"))) static float max_run_avx512(const float* x, int64_t n, float start) {
  return max_run_lanes<16>(x, n, start);
}
__attribute__((target("avx2"))) static float max_run_avx2(const float* x, int64_t n, float start) {
  return max_run_lanes<8>(x, n, start);
}
float max_run(const float* x, int64_t n, float start) {
  switch (isa_level()) {
    case 2: return max_run_avx512(x, n, start);
    case 1: return max_run_avx2(x, n, start);
    default: return max_run_lanes<4>(x, n, start);
  }
}
__attribute__((target("avx512f"))) static float min_run_avx512(const float* x, int64_t n, float start) {
  return extreme_run_lanes<16, false>(x, n, start);
}
__attribute__((target("avx2"))) static float min_run_avx2(const float* x, int64_t n, float start) {
  return extreme_run_lanes<8, false>(x, n, start);
}
float min_run(const float* x, int64_t n, float start) {
  switch (isa_level()) {
    case 2: return min_run_avx512(x, n, start);
    case 1: return min_run_avx2(x, n, start);
    default: return extreme_run_lanes<4, false>(x, n, start);
  }
}
__attribute__((target("avx512f"))) static void log_softmax_row_avx512(float* o, const float* x, int64_t n) {
  log_softmax_row_lanes<16>(o, x, n);
}
__attribute__((target("avx2,fma"))) static void log_softmax_row_avx2(float* o, const float* x, int64_t n) {
  log_softmax_row_lanes<8>(o, x, n);
}
void log_softmax_row(float* o, const float* x, int64_t n) {
  switch (isa_level()) {
    case 2: return log_softmax_row_avx512(o, x, n);
    case 1: return log_softmax_row_avx2(o, x, n);
    default: return log_softmax_row_lanes<4>(o, x, n);
  }
}
#else
float max_run(const float* x, int64_t n, float start) { return max_run_lanes<4>(x, n, start); }
float min_run(const float* x, int64_t n, float start) { return extreme_run_lanes<4, false>(x, n, start); }
void log_softmax_row(float* o, const float* x, int64_t n) { log_softmax_row_lanes<4>(o, x, n); }
#endif

// Softmax over the middle axis of [len, inner] blocks: vectorised across `inner`.
ETRT_ISA_BODY void softmax_columns_body(float* o, const float* x, int64_t len, int64_t inner, float* mx, float* sum) {
  const float ninf = -std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < inner; ++j) {
    mx[j] = ninf;
    sum[j] = 0.0f;
  }
  for (int64_t k = 0; k < len; ++k) {
    const float* xr = x + k * inner;
    for (int64_t j = 0; j < inner; ++j) mx[j] = xr[j] > mx[j] ? xr[j] : mx[j];
  }
  for (int64_t k = 0; k < len; ++k) {
    const float* xr = x + k * inner;
    float* orow = o + k * inner;
    for (int64_t j = 0; j < inner; ++j) {
      float e = exp_f32(xr[j] - mx[j]);
      orow[j] = e;
      sum[j] += e;
    }
  }
  for (int64_t j = 0; j < inner; ++j) sum[j] = 1.0f / sum[j];
  for (int64_t k = 0; k < len; ++k) {
    float* orow = o + k * inner;
    for (int64_t j = 0; j < inner; ++j) orow[j] *= sum[j];
  }
}
ETRT_ISA_DISPATCH(void, softmax_columns,
                  (float* o, const float* x, int64_t len, int64_t inner, float* mx, float* sum),
                  (o, x, len, inner, mx, sum))

// Sum of x[i] or of (x[i] - shift)^2: 16 float lanes over blocks of 256 elements, summed by a
// shuffle tree (a serial sum of 16 lanes would cost more than a 64-wide row), each block's total
// added in double, so long rows keep double accuracy. The 16 lanes are 16 / W vectors of the
// clone's register width W (vec_math.h, Lanes): one 16-lane GCC vector lives on the stack where
// registers are narrower (layer norm under AVX2 took 7x its AVX-512 time). Every width adds the
// same pairs in the same order.
constexpr int64_t kMomentBlock = 256;

template <int W>
ETRT_VEC_INLINE double row_sum(const float* x, int64_t n, bool squares, float shift) {
  using F = typename Lanes<W>::F;
  constexpr int K = 16 / W;
  double total = 0.0;
  for (int64_t b = 0; b < n; b += kMomentBlock) {
    const int64_t e = b + kMomentBlock < n ? b + kMomentBlock : n;
    F acc[K] = {};
    int64_t i = b;
    for (; i + 16 <= e; i += 16) {
      for (int k = 0; k < K; ++k) {
        F v;
        std::memcpy(&v, x + i + k * W, sizeof v);
        if (squares) {
          v -= shift;
          acc[k] += v * v;
        } else {
          acc[k] += v;
        }
      }
    }
    float part = sum16<W>(acc);
    for (; i < e; ++i) {
      const float d = squares ? (x[i] - shift) * (x[i] - shift) : x[i];
      part += d;
    }
    total += part;
  }
  return total;
}

__attribute__((always_inline)) inline void normalize_row(float* o, const float* x, int64_t n,
                                                        float mean, float rstd, const float* w,
                                                        const float* b) {
  const float shift = -mean * rstd;
  if (w != nullptr && b != nullptr) {
    for (int64_t i = 0; i < n; ++i) o[i] = (x[i] * rstd + shift) * w[i] + b[i];
  } else if (w != nullptr) {
    for (int64_t i = 0; i < n; ++i) o[i] = (x[i] * rstd + shift) * w[i];
  } else if (b != nullptr) {
    for (int64_t i = 0; i < n; ++i) o[i] = (x[i] * rstd + shift) + b[i];
  } else {
    for (int64_t i = 0; i < n; ++i) o[i] = x[i] * rstd + shift;
  }
}

// 1 if any of the n bytes is non-zero; 16 bytes at a time.
inline uint8_t any_bytes(const uint8_t* x, int64_t n) {
  int64_t i = 0;
  uint64_t acc = 0;
  for (; i + 16 <= n; i += 16) {
    uint64_t a, b;
    std::memcpy(&a, x + i, 8);
    std::memcpy(&b, x + i + 8, 8);
    acc |= a | b;
  }
  for (; i < n; ++i) acc |= x[i];
  return acc != 0 ? 1 : 0;
}

// Rows [begin, end) of a layer norm over rows of m floats, W lanes at a time. The row loop sits
// inside the clone (the helpers are inlined into each), so a short row costs no dispatch.
template <int W>
ETRT_VEC_INLINE void layer_norm_rows_lanes(float* o, const float* x, int64_t begin, int64_t end, int64_t m,
                                           double eps, const float* w, const float* b, float* mo, float* ro) {
  using F = typename Lanes<W>::F;
  constexpr int K = 16 / W;  // vectors per 16 lanes
  const double inv_m = 1.0 / static_cast<double>(m);
  if (m == 64 && w != nullptr && b != nullptr) {  // d_model 64: four times 16 lanes, no loops or tails
    F wv[4 * K], bv[4 * K];
    std::memcpy(wv, w, sizeof wv);
    std::memcpy(bv, b, sizeof bv);
    for (int64_t r = begin; r < end; ++r) {
      F v[4 * K];
      std::memcpy(v, x + r * 64, sizeof v);
      // Same arithmetic as row_sum: one block, 16 float lanes, block total in double.
      F acc[K], sq[K];
      for (int k = 0; k < K; ++k) acc[k] = ((v[k] + v[K + k]) + v[2 * K + k]) + v[3 * K + k];
      const double mu = static_cast<double>(sum16<W>(acc)) * inv_m;
      const float muf = static_cast<float>(mu);
      for (int k = 0; k < K; ++k) {
        sq[k] = F{};
        for (int j = 0; j < 4; ++j) {
          const F d = v[j * K + k] - muf;
          sq[k] += d * d;
        }
      }
      const double var = static_cast<double>(sum16<W>(sq)) * inv_m;
      const float rs = static_cast<float>(1.0 / std::sqrt(var + eps));
      mo[r] = muf;
      ro[r] = rs;
      const float shift = -muf * rs;
      F out[4 * K];
      for (int j = 0; j < 4 * K; ++j) out[j] = (v[j] * rs + shift) * wv[j] + bv[j];
      std::memcpy(o + r * 64, out, sizeof out);
    }
    return;
  }
  for (int64_t r = begin; r < end; ++r) {
    const float* xr = x + r * m;
    // Two passes (mean, then squared deviations): no cancellation whatever the mean.
    const double mu = row_sum<W>(xr, m, false, 0.0f) * inv_m;
    const double var = row_sum<W>(xr, m, true, static_cast<float>(mu)) * inv_m;
    const float rs = static_cast<float>(1.0 / std::sqrt(var + eps));
    mo[r] = static_cast<float>(mu);
    ro[r] = rs;
    normalize_row(o + r * m, xr, m, static_cast<float>(mu), rs, w, b);
  }
}
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f"))) static void layer_norm_rows_avx512(float* o, const float* x, int64_t begin,
                                                                      int64_t end, int64_t m, double eps,
                                                                      const float* w, const float* b, float* mo,
                                                                      float* ro) {
  layer_norm_rows_lanes<16>(o, x, begin, end, m, eps, w, b, mo, ro);
}
__attribute__((target("avx2"))) static void layer_norm_rows_avx2(float* o, const float* x, int64_t begin,
                                                                 int64_t end, int64_t m, double eps,
                                                                 const float* w, const float* b, float* mo,
                                                                 float* ro) {
  layer_norm_rows_lanes<8>(o, x, begin, end, m, eps, w, b, mo, ro);
}
void layer_norm_rows(float* o, const float* x, int64_t begin, int64_t end, int64_t m, double eps, const float* w,
                     const float* b, float* mo, float* ro) {
  switch (isa_level()) {
    case 2: return layer_norm_rows_avx512(o, x, begin, end, m, eps, w, b, mo, ro);
    case 1: return layer_norm_rows_avx2(o, x, begin, end, m, eps, w, b, mo, ro);
    default: return layer_norm_rows_lanes<4>(o, x, begin, end, m, eps, w, b, mo, ro);
  }
}
#else
void layer_norm_rows(float* o, const float* x, int64_t begin, int64_t end, int64_t m, double eps, const float* w,
                     const float* b, float* mo, float* ro) {
  layer_norm_rows_lanes<4>(o, x, begin, end, m, eps, w, b, mo, ro);
}
#endif

// The arguments of _softmax and _log_softmax (self, dim, half_to_float | out), checked, and the
// input as [outer, len, inner] contiguous floats.
struct SoftmaxCall {
  const float* x = nullptr;
  float* o = nullptr;
  int64_t outer = 1, len = 1, inner = 1;
};

bool softmax_call(KernelContext& ctx, Span<Value*> args, const char* op, SoftmaxCall* c) {
  if (!check_nargs(ctx, op, args, 4)) return false;
  Tensor* self = float_tensor_arg(ctx, op, args, 0, "self");
  int64_t dim = 0;
  bool half_to_float = false;
  if (self == nullptr || !int_arg(ctx, op, args, 1, "dim", &dim) ||
      !bool_arg(ctx, op, args, 2, "half_to_float", &half_to_float)) {
    return false;
  }
  if (half_to_float) {
    fail(ctx, op, "half_to_float needs a half-precision input; only float32 is supported");
    return false;
  }
  if (!wrap_dim(ctx, op, dim, self->dim(), &dim)) return false;
  Tensor* out = output_arg(ctx, op, args, 3, ScalarType::Float, self->sizes());
  if (out == nullptr || self->numel() == 0) return false;
  c->x = contiguous_f32(ctx, op, *self);
  if (c->x == nullptr) return false;
  c->o = out->data_as<float>();
  for (int i = 0; i < self->dim(); ++i) {
    if (i < dim) c->outer *= self->size(i);
    if (i == dim) c->len = self->size(i);
    if (i > dim) c->inner *= self->size(i);
  }
  return true;
}

}  // namespace

void op_softmax(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::_softmax";
  SoftmaxCall c;
  if (!softmax_call(ctx, args, op, &c)) return;
  const float* x = c.x;
  float* o = c.o;
  const int64_t outer = c.outer, len = c.len, inner = c.inner;
  if (inner == 1) {
    parallel_chunks(outer, len * 8, [&](int64_t b, int64_t e) {
      softmax_rows(o + b * len, x + b * len, e - b, len);
    });
    return;
  }
  float* scratch = static_cast<float*>(ctx.allocate_temp(static_cast<size_t>(outer * inner * 2) * sizeof(float)));
  if (scratch == nullptr) {
    ctx.fail(Error(ErrorCode::OutOfMemory, std::string(op) + ": out of scratch memory"));
    return;
  }
  parallel_chunks(outer, len * inner * 8, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      softmax_columns(o + r * len * inner, x + r * len * inner, len, inner, scratch + r * 2 * inner,
                      scratch + r * 2 * inner + inner);
    }
  });
}

void op_native_layer_norm(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::native_layer_norm";
  if (!check_nargs(ctx, op, args, 8)) return;
  Tensor* input = tensor_arg(ctx, op, args, 0, "input");
  if (input == nullptr) return;
  Span<const int64_t> nshape;
  if (!int_list_arg(ctx, op, args, 1, "normalized_shape", &nshape)) return;
  Tensor* weight = nullptr;
  Tensor* bias = nullptr;
  if (!optional_tensor_arg(ctx, op, args, 2, "weight", &weight) ||
      !optional_tensor_arg(ctx, op, args, 3, "bias", &bias)) {
    return;
  }
  double eps = 0.0;
  if (!scalar_arg(ctx, op, args, 4, "eps", &eps)) return;
  if (!check_dtype(ctx, op, *input, "input", ScalarType::Float)) return;
  const int nd = input->dim();
  const int k = static_cast<int>(nshape.size());
  if (k == 0 || k > nd) {
    fail(ctx, op, "normalized_shape " + shape_string(nshape) + " does not fit input of shape " +
                      shape_string(input->sizes()));
    return;
  }
  int64_t m = 1;
  for (int i = 0; i < k; ++i) {
    if (input->size(nd - k + i) != nshape[i]) {
      fail(ctx, op, "normalized_shape " + shape_string(nshape) + " does not match the trailing dimensions of input " +
                        shape_string(input->sizes()));
      return;
    }
    m *= nshape[i];
  }
  for (Tensor* p : {weight, bias}) {
    if (p == nullptr) continue;
    const char* name = p == weight ? "weight" : "bias";
    if (!check_dtype(ctx, op, *p, name, ScalarType::Float) || !check_has_data(ctx, op, *p, name)) return;
    if (!same_sizes(p->sizes(), nshape)) {
      fail(ctx, op, std::string("'") + name + "' has shape " + shape_string(p->sizes()) +
                        ", expected normalized_shape " + shape_string(nshape));
      return;
    }
  }
  if (!check_has_data(ctx, op, *input, "input")) return;
  Shape stat = shape_of(*input);
  for (int i = nd - k; i < nd; ++i) stat.sizes[i] = 1;
  Tensor* out = output_arg(ctx, op, args, 5, ScalarType::Float, input->sizes(), "out");
  Tensor* mean = out ? output_arg(ctx, op, args, 6, ScalarType::Float, stat.span(), "mean") : nullptr;
  Tensor* rstd = mean ? output_arg(ctx, op, args, 7, ScalarType::Float, stat.span(), "rstd") : nullptr;
  if (rstd == nullptr) return;
  const int64_t rows = m == 0 ? 0 : input->numel() / m;
  if (rows == 0) return;
  const float* x = contiguous_f32(ctx, op, *input);
  const float* w = weight ? contiguous_f32(ctx, op, *weight) : nullptr;
  const float* b = bias ? contiguous_f32(ctx, op, *bias) : nullptr;
  if (x == nullptr || (weight && !w) || (bias && !b)) return;
  float* o = out->data_as<float>();
  float* mo = mean->data_as<float>();
  float* ro = rstd->data_as<float>();
  if (m == 0) return;
  parallel_chunks(rows, m * 4, [&](int64_t begin, int64_t end) {
    layer_norm_rows(o, x, begin, end, m, eps, w, b, mo, ro);
  });
}

void op_any_dim(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::any.dim";
  if (!check_nargs(ctx, op, args, 4)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  if (self == nullptr) return;
  int64_t dim = 0;
  bool keepdim = false;
  if (!int_arg(ctx, op, args, 1, "dim", &dim) || !bool_arg(ctx, op, args, 2, "keepdim", &keepdim)) return;
  if (!wrap_dim(ctx, op, dim, self->dim(), &dim) || !check_has_data(ctx, op, *self, "self")) return;
  const int nd = self->dim();
  Shape oshape;
  for (int i = 0; i < nd; ++i) {
    if (i == dim) {
      if (keepdim) oshape.sizes[oshape.dim++] = 1;
    } else {
      oshape.sizes[oshape.dim++] = self->size(i);
    }
  }
  // ATen gives uint8 for a uint8 input, Bool otherwise; either holds 0 or 1.
  const ScalarType odt = self->dtype() == ScalarType::Byte ? ScalarType::Byte : ScalarType::Bool;
  Tensor* out = output_arg(ctx, op, args, 3, odt, oshape.span());
  if (out == nullptr) return;
  const int64_t on = out->numel();
  if (on > 0) std::memset(out->data(), 0, static_cast<size_t>(on));
  if (nd == 0) {
    if (self->numel() == 1) *out->data_as<uint8_t>() = load_as_double(self->data(), self->dtype()) != 0.0;
    return;
  }
  const ScalarType dt = self->dtype();
  const bool bytes = dt == ScalarType::Bool || dt == ScalarType::Byte || dt == ScalarType::Char;
  if (bytes && self->is_contiguous()) {
    // [outer, len, inner] bytes: OR whole runs (attention's mask check reduces rows of 16).
    int64_t outer = 1, len = self->size(static_cast<int>(dim)), inner = 1;
    for (int i = 0; i < nd; ++i) {
      if (i < dim) outer *= self->size(i);
      if (i > dim) inner *= self->size(i);
    }
    const uint8_t* x = self->data_as<const uint8_t>();
    uint8_t* o = out->data_as<uint8_t>();
    if (inner == 1) {
      for (int64_t r = 0; r < outer; ++r) o[r] = any_bytes(x + r * len, len);
      return;
    }
    for (int64_t r = 0; r < outer; ++r) {
      uint8_t* orow = o + r * inner;
      for (int64_t k = 0; k < len; ++k) {
        const uint8_t* xr = x + (r * len + k) * inner;
        for (int64_t j = 0; j < inner; ++j) orow[j] |= xr[j];
      }
      for (int64_t j = 0; j < inner; ++j) orow[j] = orow[j] != 0 ? 1 : 0;
    }
    return;
  }
  // The output seen with the input's shape, stride 0 along `dim`: a reduction as a plain loop.
  int64_t ostrides[kMaxDims];
  int64_t stride = 1;
  for (int i = nd - 1; i >= 0; --i) {
    if (i == dim) {
      ostrides[i] = 0;
      continue;
    }
    ostrides[i] = stride;
    stride *= self->size(i);
  }
  Tensor oview = *out;
  oview.set_sizes_and_strides(self->sizes(), Span<const int64_t>(ostrides, static_cast<size_t>(nd)));
  const Tensor* ops[2] = {&oview, self};
  run_loop(
      make_loop(self->sizes(), ops),
      [&](char* const* p, const int64_t* st, int64_t n) {
        if (bytes && st[0] == 0) {
          uint8_t acc = 0;
          for (int64_t i = 0; i < n; ++i) acc |= static_cast<uint8_t>(p[1][i * st[1]]);
          if (acc != 0) *reinterpret_cast<uint8_t*>(p[0]) = 1;
          return;
        }
        for (int64_t i = 0; i < n; ++i) {
          const bool nz = bytes ? p[1][i * st[1]] != 0 : load_as_double(p[1] + i * st[1], dt) != 0.0;
          if (nz) *reinterpret_cast<uint8_t*>(p[0] + i * st[0]) = 1;
        }
      },
      /*parallel=*/false);
}

namespace {

// a[i] += x[i]: a row of sums over a row of inputs (a channels-last tensor's global average pool
// adds each pixel's channels to the channel sums). Written out per instruction set: with the
// strides of the generic loop GCC keeps it scalar (3x slower than ONNX Runtime's ReduceMean on
// EfficientNet-B0's squeeze-excitation means).
ETRT_ISA_BODY void add_row_body(double* __restrict a, const float* __restrict x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) a[i] += static_cast<double>(x[i]);
}
ETRT_ISA_DISPATCH(void, add_row, (double* __restrict a, const float* __restrict x, int64_t n), (a, x, n))

// Sums (or means) of a float tensor over some dimensions. Argument positions follow the overload
// (sum.dim_IntList and mean.dim: self, dim?, keepdim, dtype? | out; sum and mean: self, dtype? |
// out); -1 marks one it lacks. Accumulates in double, so long reductions stay accurate.
// Pixels per segment of a channels-last spatial sum.
constexpr int64_t kSumSegmentPixels = 64;

// Sums over H and W of a channels-last [N, C, H, W] float tensor (a CNN's global average pool)
// into acc [N, C]. Split by runs of pixels, as the elementwise op before it is, so each thread
// mostly reads what its own core wrote (split by channels, each read half its input from the
// other core, and the pool got slower at two threads); each run of kSumSegmentPixels pixels is
// summed on its own and the runs are added in order, so every thread count gives the same bits.
// False when the reduction is another one.
bool channels_last_spatial_sum(KernelContext& ctx, const Tensor& x, Span<const int64_t> keep, double* acc) {
  if (x.dim() != 4 || keep.size() != 4 || x.numel() == 0) return false;
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  if (keep[0] != n || keep[1] != c || keep[2] != 1 || keep[3] != 1) return false;
  if (x.stride(1) != 1 || x.stride(3) != c || x.stride(2) != w * c || (n > 1 && x.stride(0) != h * w * c)) return false;
  const int64_t hw = h * w, segs = (hw + kSumSegmentPixels - 1) / kSumSegmentPixels;
  double* part = static_cast<double*>(ctx.allocate_temp(static_cast<size_t>(n * segs * c) * sizeof(double), 64));
  if (part == nullptr) return false;  // the serial loop needs no scratch
  const float* data = x.data_as<const float>();
  parallel_chunks(n * segs, kSumSegmentPixels * c, [&](int64_t s0, int64_t s1) {
    for (int64_t s = s0; s < s1; ++s) {
      const int64_t i = s / segs, p0 = (s % segs) * kSumSegmentPixels, p1 = std::min(hw, p0 + kSumSegmentPixels);
      double* sum = part + s * c;
      for (int64_t k = 0; k < c; ++k) sum[k] = 0.0;
      for (int64_t p = p0; p < p1; ++p) add_row(sum, data + (i * hw + p) * c, c);
    }
  });
  for (int64_t i = 0; i < n; ++i) {
    double* a = acc + i * c;
    for (int64_t s = 0; s < segs; ++s) {
      const double* sum = part + (i * segs + s) * c;
      for (int64_t k = 0; k < c; ++k) a[k] += sum[k];
    }
  }
  return true;
}

void sum_or_mean(KernelContext& ctx, Span<Value*> args, const char* op, bool mean, int dim_i, int keepdim_i,
                 int dtype_i, int out_i) {
  if (!check_nargs(ctx, op, args, static_cast<size_t>(out_i + 1))) return;
  if (!mean && args[0]->is_tensor() && args[out_i]->is_tensor() &&
      (args[0]->to_tensor().dtype() != ScalarType::Float || args[out_i]->to_tensor().dtype() != ScalarType::Float)) {
    return sum_any(ctx, args, op, dim_i >= 0);
  }
  Tensor* self = float_tensor_arg(ctx, op, args, 0, "self");
  if (self == nullptr) return;
  bool keepdim = false;
  if (keepdim_i >= 0 && !bool_arg(ctx, op, args, static_cast<size_t>(keepdim_i), "keepdim", &keepdim)) return;
  if (!args[dtype_i]->is_none()) {
    int64_t code = 0;
    if (!int_arg(ctx, op, args, static_cast<size_t>(dtype_i), "dtype", &code)) return;
    if (code != static_cast<int64_t>(ScalarType::Float)) {
      fail(ctx, op, "only a Float result is supported");
      return;
    }
  }
  Span<const int64_t> dims;
  if (dim_i >= 0 && !args[dim_i]->is_none() && !int_list_arg(ctx, op, args, static_cast<size_t>(dim_i), "dim", &dims)) {
    return;
  }
  Shape keep, oshape;
  int64_t count = 1;
  if (!reduction_shapes(ctx, op, *self, dims, keepdim, &keep, &oshape, &count)) return;
  Tensor* out = output_arg(ctx, op, args, static_cast<size_t>(out_i), ScalarType::Float, oshape.span());
  if (out == nullptr) return;
  const int64_t on = out->numel();
  double* acc = static_cast<double*>(ctx.allocate_temp(static_cast<size_t>(on > 0 ? on : 1) * sizeof(double)));
  if (acc == nullptr) {
    ctx.fail(Error(ErrorCode::OutOfMemory, std::string(op) + ": out of scratch memory"));
    return;
  }
  for (int64_t i = 0; i < on; ++i) acc[i] = 0.0;
  if (!channels_last_spatial_sum(ctx, *self, keep.span(), acc)) {
    Tensor sums(acc, ScalarType::Double, keep.span());
    const Tensor* ops[2] = {&sums, self};
    run_loop(make_loop(self->sizes(), ops), [&](char* const* p, const int64_t* st, int64_t n) {
      double* a = reinterpret_cast<double*>(p[0]);
      const float* x = reinterpret_cast<const float*>(p[1]);
      const int64_t sx = st[1] / 4;
      if (st[0] == 0 && sx == 1) {
        *a += sum_run(x, n);
      } else if (st[0] == 0) {
        double t = 0.0;
        for (int64_t i = 0; i < n; ++i) t += x[i * sx];
        *a += t;
      } else if (st[0] == 8 && sx == 1) {
        add_row(a, x, n);
      } else {
        const int64_t sa = st[0] / 8;
        for (int64_t i = 0; i < n; ++i) a[i * sa] += x[i * sx];
      }
    }, /*parallel=*/false);
  }
  float* o = out->data_as<float>();
  const double scale = mean ? 1.0 / static_cast<double>(count) : 1.0;  // mean of nothing: NaN
  for (int64_t i = 0; i < on; ++i) o[i] = static_cast<float>(mean && count == 0 ? NAN : acc[i] * scale);
}

}  // namespace

void op_sum_dim(KernelContext& ctx, Span<Value*> args) { sum_or_mean(ctx, args, "aten::sum.dim_IntList", false, 1, 2, 3, 4); }
void op_mean_dim(KernelContext& ctx, Span<Value*> args) { sum_or_mean(ctx, args, "aten::mean.dim", true, 1, 2, 3, 4); }
void op_sum(KernelContext& ctx, Span<Value*> args) { sum_or_mean(ctx, args, "aten::sum", false, -1, -1, 1, 2); }
void op_mean(KernelContext& ctx, Span<Value*> args) { sum_or_mean(ctx, args, "aten::mean", true, -1, -1, 1, 2); }

// aten::amax / aten::amin of float32: contiguous runs take the vector clones.
static void amax_amin(KernelContext& ctx, Span<Value*> args, bool max) {
  const char* op = max ? "aten::amax" : "aten::amin";
  if (!check_nargs(ctx, op, args, 4)) return;
  if (args[0]->is_tensor() && args[0]->to_tensor().dtype() != ScalarType::Float) {
    return max ? amax_any(ctx, args) : amin_any(ctx, args);
  }
  Tensor* self = float_tensor_arg(ctx, op, args, 0, "self");
  Span<const int64_t> dims;
  bool keepdim = false;
  if (self == nullptr || !int_list_arg(ctx, op, args, 1, "dim", &dims) || !bool_arg(ctx, op, args, 2, "keepdim", &keepdim)) {
    return;
  }
  Shape keep, oshape;
  int64_t count = 1;
  if (!reduction_shapes(ctx, op, *self, dims, keepdim, &keep, &oshape, &count)) return;
  if (count == 0 && self->numel() == 0 && oshape.numel() > 0) {
    fail(ctx, op, max ? "cannot take the maximum over an empty dimension" : "cannot take the minimum over an empty dimension");
    return;
  }
  Tensor* out = output_arg(ctx, op, args, 3, ScalarType::Float, oshape.span());
  if (out == nullptr) return;
  float* o = out->data_as<float>();
  const float none = max ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < out->numel(); ++i) o[i] = none;
  Tensor acc(o, ScalarType::Float, keep.span());
  const Tensor* ops[2] = {&acc, self};
  run_loop(make_loop(self->sizes(), ops), [&](char* const* p, const int64_t* st, int64_t n) {
    if (st[0] == 0 && st[1] == 4) {
      float* a = reinterpret_cast<float*>(p[0]);
      const auto* x = reinterpret_cast<const float*>(p[1]);
      *a = max ? max_run(x, n, *a) : min_run(x, n, *a);
      return;
    }
    for (int64_t i = 0; i < n; ++i) {
      float* a = reinterpret_cast<float*>(p[0] + i * st[0]);
      const float x = *reinterpret_cast<const float*>(p[1] + i * st[1]);
      if ((max ? x > *a : x < *a) || std::isnan(x)) *a = std::isnan(*a) ? *a : x;  // a NaN stays
    }
  }, /*parallel=*/false);
}

void op_amax(KernelContext& ctx, Span<Value*> args) { amax_amin(ctx, args, true); }
void op_amin(KernelContext& ctx, Span<Value*> args) { amax_amin(ctx, args, false); }

void op_argmax(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::argmax";
  if (!check_nargs(ctx, op, args, 4)) return;
  if (args[0]->is_tensor() && args[0]->to_tensor().dtype() != ScalarType::Float) return argmax_any(ctx, args);
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  bool keepdim = false;
  if (self == nullptr || !check_dtype(ctx, op, *self, "self", ScalarType::Float) ||
      !check_has_data(ctx, op, *self, "self") || !bool_arg(ctx, op, args, 2, "keepdim", &keepdim)) {
    return;
  }
  if (self->numel() == 0) {
    fail(ctx, op, "cannot take the argmax of an empty tensor");
    return;
  }
  const float* x = contiguous_f32(ctx, op, *self);
  if (x == nullptr) return;
  // [outer, len, inner] over the contiguous copy; no dim: the whole tensor is one row.
  int64_t outer = 1, len = self->numel(), inner = 1;
  Shape oshape;
  if (!args[1]->is_none()) {
    int64_t dim = 0;
    if (!int_arg(ctx, op, args, 1, "dim", &dim) || !wrap_dim(ctx, op, dim, self->dim(), &dim)) return;
    len = self->dim() == 0 ? 1 : self->size(static_cast<int>(dim));
    for (int i = 0; i < self->dim(); ++i) {
      if (i < dim) outer *= self->size(i);
      if (i > dim) inner *= self->size(i);
      if (i != dim || keepdim) oshape.sizes[oshape.dim++] = i == dim ? 1 : self->size(i);
    }
  } else if (keepdim) {
    oshape.dim = self->dim();
    for (int i = 0; i < oshape.dim; ++i) oshape.sizes[i] = 1;
  }
  Tensor* out = output_arg(ctx, op, args, 3, ScalarType::Long, oshape.span());
  if (out == nullptr) return;
  int64_t* o = out->data_as<int64_t>();
  for (int64_t r = 0; r < outer; ++r) {
    for (int64_t c = 0; c < inner; ++c) {
      const float* line = x + r * len * inner + c;
      int64_t best = 0;
      float bv = line[0];
      for (int64_t k = 1; k < len && !std::isnan(bv); ++k) {  // the first NaN wins, as in ATen
        const float v = line[k * inner];
        if (v > bv || std::isnan(v)) {
          bv = v;
          best = k;
        }
      }
      o[r * inner + c] = best;
    }
  }
}

void op_log_softmax(KernelContext& ctx, Span<Value*> args) {
  SoftmaxCall c;
  if (!softmax_call(ctx, args, "aten::_log_softmax", &c)) return;
  const float* x = c.x;
  float* o = c.o;
  const int64_t len = c.len, inner = c.inner, outer = c.outer;
  // x - max - log(sum(exp(x - max))), one (row, column) line at a time.
  parallel_chunks(outer * inner, len * 16, [&](int64_t b, int64_t e) {
    for (int64_t line = b; line < e; ++line) {
      if (inner == 1) {
        log_softmax_row(o + line * len, x + line * len, len);
        continue;
      }
      const int64_t r = line / inner, c = line % inner;
      const float* xl = x + r * len * inner + c;
      float* ol = o + r * len * inner + c;
      float mx = -std::numeric_limits<float>::infinity();
      for (int64_t k = 0; k < len; ++k) mx = xl[k * inner] > mx || std::isnan(xl[k * inner]) ? xl[k * inner] : mx;
      double sum = 0.0;
      for (int64_t k = 0; k < len; ++k) sum += std::exp(static_cast<double>(xl[k * inner] - mx));
      const float shift = log_softmax_shift(mx, sum);
      for (int64_t k = 0; k < len; ++k) ol[k * inner] = xl[k * inner] - shift;
    }
  });
}

namespace {

// A per-channel parameter of a normalisation (weight, bias, running statistics): None, or a
// float vector of `channels` entries. False after failing the call.
bool channel_param(KernelContext& ctx, const char* op, const Tensor* t, const char* name, int64_t channels) {
  if (t == nullptr) return true;
  if (!check_dtype(ctx, op, *t, name, ScalarType::Float) || !check_has_data(ctx, op, *t, name)) return false;
  if (t->dim() != 1 || t->size(0) != channels) {
    fail(ctx, op, std::string("'") + name + "' must have shape [" + std::to_string(channels) + "], got " +
                      shape_string(t->sizes()));
    return false;
  }
  return true;
}

// y = x * alpha + beta over `n` values, alpha and beta one per value (a pixel's channels) or one
// for all (`Uniform`). ATen's AVX2 and AVX-512 batch-norm kernels compute it as one fused
// multiply-add (GCC contracts their vector x * alpha + beta), its baseline kernel as a multiply,
// then an add: each instruction set here rounds as ATen's does on the same CPU.
struct Uniform {
  float v;
  float operator[](int64_t) const { return v; }
};

template <bool kFused, class Coef>
inline __attribute__((always_inline)) void scale_shift_body(float* o, const float* x, int64_t n, Coef alpha,
                                                            Coef beta) {
  for (int64_t i = 0; i < n; ++i) o[i] = kFused ? std::fma(x[i], alpha[i], beta[i]) : x[i] * alpha[i] + beta[i];
}

#if defined(__x86_64__) && defined(__GNUC__)
template <class Coef>
__attribute__((target("avx512f,fma"))) void scale_shift_avx512(float* o, const float* x, int64_t n, Coef alpha,
                                                              Coef beta) {
  scale_shift_body<true>(o, x, n, alpha, beta);
}
template <class Coef>
__attribute__((target("avx2,fma"))) void scale_shift_avx2(float* o, const float* x, int64_t n, Coef alpha,
                                                          Coef beta) {
  scale_shift_body<true>(o, x, n, alpha, beta);
}
#endif

bool fused_multiply_add() {
#if defined(__x86_64__) && defined(__GNUC__)
  return isa_level() >= 1;
#else
  return false;
#endif
}

template <class Coef>
void scale_shift(bool fused, float* o, const float* x, int64_t n, Coef alpha, Coef beta) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (fused) {
    return isa_level() == 2 ? scale_shift_avx512(o, x, n, alpha, beta) : scale_shift_avx2(o, x, n, alpha, beta);
  }
#endif
  (void)fused;
  scale_shift_body<false>(o, x, n, alpha, beta);
}

}  // namespace

void op_batch_norm_no_training(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::_native_batch_norm_legit_no_training";
  if (!check_nargs(ctx, op, args, 10)) return;
  Tensor* input = float_tensor_arg(ctx, op, args, 0, "input");
  if (input == nullptr) return;
  Tensor* weight = nullptr;
  Tensor* bias = nullptr;
  if (!optional_tensor_arg(ctx, op, args, 1, "weight", &weight) ||
      !optional_tensor_arg(ctx, op, args, 2, "bias", &bias)) {
    return;
  }
  Tensor* mean = tensor_arg(ctx, op, args, 3, "running_mean");
  Tensor* var = mean ? tensor_arg(ctx, op, args, 4, "running_var") : nullptr;
  double momentum = 0.0, eps = 0.0;
  if (var == nullptr || !scalar_arg(ctx, op, args, 5, "momentum", &momentum) ||
      !scalar_arg(ctx, op, args, 6, "eps", &eps)) {
    return;
  }
  if (input->dim() < 2) {
    fail(ctx, op, "'input' must have a channel dimension, got shape " + shape_string(input->sizes()));
    return;
  }
  const int64_t channels = input->size(1);
  if (!channel_param(ctx, op, weight, "weight", channels) || !channel_param(ctx, op, bias, "bias", channels) ||
      !channel_param(ctx, op, mean, "running_mean", channels) || !channel_param(ctx, op, var, "running_var", channels)) {
    return;
  }
  const int64_t empty[1] = {0};
  // Contiguous, or channels-last over a channels-last input (DenseNet's norms after each
  // concatenation, between channels-last convolutions).
  Tensor* out = planned_output(ctx, op, args, 7, ScalarType::Float, input->sizes(), true, "out");
  const bool nhwc = out != nullptr && channels_last_dense(*out) && !out->is_contiguous() &&
                    channels_last_dense(*input);
  if (out != nullptr && !nhwc && !out->is_contiguous()) {
    fail(ctx, op, "the output must be contiguous, or channels-last over a channels-last input");
    return;
  }
  // Inference saves no statistics: both are empty.
  if (out == nullptr || output_arg(ctx, op, args, 8, ScalarType::Float, Span<const int64_t>(empty, 1), "save_mean") == nullptr ||
      output_arg(ctx, op, args, 9, ScalarType::Float, Span<const int64_t>(empty, 1), "save_invstd") == nullptr) {
    return;
  }
  // y = x * alpha + beta per channel, alpha = w / sqrt(var + eps), beta = b - mean * alpha: ATen's
  // inference transform, with its roundings: invstd in float (1 / sqrt(var + float(eps))), and
  // beta and y fused multiply-adds where ATen's vector kernels contract them (scale_shift). A
  // quantize after it rounds eager's bits the same way only then: through double invstd and
  // separate products 29% of the outputs differed by an ulp, and int8 DenseNet121's integers
  // left the folded graph's.
  float* coef = static_cast<float*>(ctx.allocate_temp(static_cast<size_t>(channels > 0 ? 2 * channels : 1) * sizeof(float)));
  if (coef == nullptr) {
    ctx.fail(Error(ErrorCode::OutOfMemory, std::string(op) + ": out of scratch memory"));
    return;
  }
  auto at = [](const Tensor* t, int64_t c) { return t->data_as<const float>()[c * t->stride(0)]; };
  const bool fused = fused_multiply_add();
  for (int64_t c = 0; c < channels; ++c) {
    const float invstd = 1.0f / std::sqrt(at(var, c) + static_cast<float>(eps));
    const float alpha = weight ? invstd * at(weight, c) : invstd;
    coef[c] = alpha;
    const float b = bias ? at(bias, c) : 0.0f;
    coef[channels + c] = fused ? std::fma(-at(mean, c), alpha, b) : b - at(mean, c) * alpha;
  }
  if (nhwc) {  // rows of `channels` values a pixel, the same per-element steps
    const int64_t pixels = input->numel() / (channels > 0 ? channels : 1);
    const float* x = input->data_as<const float>();
    float* o = out->data_as<float>();
    parallel_chunks(pixels, channels, [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) {
        scale_shift(fused, o + p * channels, x + p * channels, channels, coef, coef + channels);
      }
    });
    return;
  }
  // [N, C, inner] over the input's strides; the output is contiguous.
  int64_t inner = 1;
  for (int i = 2; i < input->dim(); ++i) inner *= input->size(i);
  const float* x = contiguous_f32(ctx, op, *input);
  if (x == nullptr) return;
  float* o = out->data_as<float>();
  const int64_t planes = input->size(0) * channels;
  parallel_chunks(planes, inner, [&](int64_t b, int64_t e) {
    for (int64_t pl = b; pl < e; ++pl) {
      scale_shift(fused, o + pl * inner, x + pl * inner, inner, Uniform{coef[pl % channels]},
                  Uniform{coef[channels + pl % channels]});
    }
  });
}

void op_native_group_norm(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::native_group_norm";
  if (!check_nargs(ctx, op, args, 11)) return;
  Tensor* input = float_tensor_arg(ctx, op, args, 0, "input");
  if (input == nullptr) return;
  Tensor* weight = nullptr;
  Tensor* bias = nullptr;
  int64_t n = 0, c = 0, hw = 0, groups = 0;
  double eps = 0.0;
  if (!optional_tensor_arg(ctx, op, args, 1, "weight", &weight) ||
      !optional_tensor_arg(ctx, op, args, 2, "bias", &bias) || !int_arg(ctx, op, args, 3, "N", &n) ||
      !int_arg(ctx, op, args, 4, "C", &c) || !int_arg(ctx, op, args, 5, "HxW", &hw) ||
      !int_arg(ctx, op, args, 6, "group", &groups) || !scalar_arg(ctx, op, args, 7, "eps", &eps)) {
    return;
  }
  int64_t nc = 0, total = 0;
  if (groups <= 0 || input->dim() < 2 || input->size(0) != n || input->size(1) != c || c % groups != 0 ||
      !checked::mul(n, c, &nc) || !checked::mul(nc, hw, &total) || total != input->numel()) {
    fail(ctx, op, "input " + shape_string(input->sizes()) + " does not match N=" + std::to_string(n) + ", C=" +
                      std::to_string(c) + ", HxW=" + std::to_string(hw) + " in " + std::to_string(groups) +
                      " groups");
    return;
  }
  if (!channel_param(ctx, op, weight, "weight", c) || !channel_param(ctx, op, bias, "bias", c)) return;
  const int64_t stat_sizes[2] = {n, groups};
  Tensor* out = output_arg(ctx, op, args, 8, ScalarType::Float, input->sizes(), "out");
  Tensor* mean = out ? output_arg(ctx, op, args, 9, ScalarType::Float, Span<const int64_t>(stat_sizes, 2), "mean") : nullptr;
  Tensor* rstd = mean ? output_arg(ctx, op, args, 10, ScalarType::Float, Span<const int64_t>(stat_sizes, 2), "rstd") : nullptr;
  if (rstd == nullptr || input->numel() == 0) return;
  const float* x = contiguous_f32(ctx, op, *input);
  if (x == nullptr) return;
  float* o = out->data_as<float>();
  const int64_t per_group = c / groups;
  const int64_t m = per_group * hw;  // elements of one (sample, group)
  auto param = [](const Tensor* t, int64_t i, float fallback) {
    return t == nullptr ? fallback : t->data_as<const float>()[i * t->stride(0)];
  };
  parallel_chunks(n * groups, m * 4, [&](int64_t b, int64_t e) {
    for (int64_t ng = b; ng < e; ++ng) {
      const float* xg = x + ng * m;
      // Two passes in double: no cancellation whatever the mean.
      double sum = 0.0;
      for (int64_t i = 0; i < m; ++i) sum += xg[i];
      const double mu = m > 0 ? sum / static_cast<double>(m) : 0.0;
      double sq = 0.0;
      for (int64_t i = 0; i < m; ++i) sq += (xg[i] - mu) * (xg[i] - mu);
      const double var = m > 0 ? sq / static_cast<double>(m) : 0.0;
      const float rs = static_cast<float>(1.0 / std::sqrt(var + eps));
      mean->data_as<float>()[ng] = static_cast<float>(mu);
      rstd->data_as<float>()[ng] = rs;
      const int64_t g = ng % groups;
      for (int64_t k = 0; k < per_group; ++k) {
        const int64_t ch = g * per_group + k;
        // ATen's form: y = x * scale + shift, scale = rstd * gamma, shift = beta - mean * scale.
        const float scale = rs * param(weight, ch, 1.0f);
        const float shift = param(bias, ch, 0.0f) - static_cast<float>(mu) * scale;
        const float* xc = xg + k * hw;
        float* oc = o + ng * m + k * hw;
        for (int64_t i = 0; i < hw; ++i) oc[i] = xc[i] * scale + shift;
      }
    }
  });
}

// aten::histc of a float tensor, as ATen's CPU kernel bins: edges linspace(min, max, bins + 1)
// in float, each element placed by interpolation then checked against the edges beside it, the
// last bin closed on the right, elements outside [min, max] (and NaN) left out. min == max
// takes the data's range, widened by one each way when that is one value.
void op_histc(KernelContext& ctx, Span<Value*> args) {
  constexpr const char* op = "aten::histc";
  if (!check_nargs(ctx, op, args, 5)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  int64_t bins = 0;
  double lo_arg = 0.0, hi_arg = 0.0;
  if (self == nullptr || !check_dtype(ctx, op, *self, "self", ScalarType::Float) ||
      !check_has_data(ctx, op, *self, "self") || !int_arg(ctx, op, args, 1, "bins", &bins) ||
      !scalar_arg(ctx, op, args, 2, "min", &lo_arg) || !scalar_arg(ctx, op, args, 3, "max", &hi_arg)) {
    return;
  }
  if (bins <= 0 || bins > checked::kMaxElements) {
    fail(ctx, op, "bins must be positive, got " + std::to_string(bins));
    return;
  }
  const int64_t sizes[1] = {bins};
  Tensor* out = output_arg(ctx, op, args, 4, ScalarType::Float, Span<const int64_t>(sizes, 1));
  if (out == nullptr) return;
  const int64_t numel = self->numel();
  const int64_t steps = bins + 1;
  float* scratch = static_cast<float*>(ctx.allocate_temp(static_cast<size_t>(numel + steps) * sizeof(float), 64));
  if (scratch == nullptr) {
    ctx.fail(Error(ErrorCode::OutOfMemory, std::string(op) + ": out of scratch memory"));
    return;
  }
  const Span<float> values(scratch, static_cast<size_t>(numel));
  float* edges = scratch + numel;
  if (numel > 0) copy_to_contiguous(*self, scratch);
  float lo = static_cast<float>(lo_arg), hi = static_cast<float>(hi_arg);
  if (lo == hi && numel > 0) {
    lo = hi = values[0];
    for (float v : values) {
      if (std::isnan(v) || std::isnan(lo)) {
        lo = hi = v;
        break;
      }
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  if (lo == hi) {
    lo -= 1.0f;
    hi += 1.0f;
  }
  if (!std::isfinite(lo) || !std::isfinite(hi)) {
    fail(ctx, op, "range of [" + std::to_string(lo) + ", " + std::to_string(hi) + "] is not finite");
    return;
  }
  if (!(lo < hi)) {
    fail(ctx, op, "max must be larger than min");
    return;
  }
  // linspace(lo, hi, bins + 1) in float: the first half from lo, the second back from hi.
  const float step = (hi - lo) / static_cast<float>(steps - 1);
  for (int64_t i = 0; i < steps; ++i) {
    edges[i] = i < steps / 2 ? lo + step * static_cast<float>(i)
                                                  : hi - step * static_cast<float>(steps - i - 1);
  }
  const float left = edges[0], right = edges[steps - 1];
  float* hist = out->data_as<float>();
  std::fill(hist, hist + bins, 0.0f);
  for (float v : values) {
    if (!(v >= left && v <= right)) continue;
    // Float rounding can put the estimate past the last edge once bins exceed float's integers.
    int64_t pos = std::min(static_cast<int64_t>((v - left) * static_cast<float>(bins) / (right - left)), bins);
    const int64_t pos_min = std::max<int64_t>(0, pos - 1), pos_max = std::min<int64_t>(pos + 2, steps);
    pos = std::upper_bound(edges + pos_min, edges + pos_max, v) - edges - 1;
    if (pos == steps - 1) pos -= 1;
    hist[pos] += 1.0f;
  }
}

}  // namespace kernels
}  // namespace etrt
