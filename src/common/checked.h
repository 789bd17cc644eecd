// Checked arithmetic for every size a program, data map or delegate blob controls: one place
// that bounds them before anything multiplies, allocates or loops with them. Private to the
// etrt libraries (header-only, so each shared library carries its own copy).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace etrt {
namespace checked {

// Any tensor, arena or delegate workspace beyond these is treated as malformed, not attempted.
constexpr uint64_t kMaxBytes = uint64_t{1} << 40;
constexpr int64_t kMaxElements = int64_t{1} << 36;
// Kernel sizes, strides, paddings and dilations of a window (convolution, pooling).
constexpr int64_t kMaxWindow = int64_t{1} << 20;

inline bool add(int64_t a, int64_t b, int64_t* out) { return !__builtin_add_overflow(a, b, out); }
inline bool sub(int64_t a, int64_t b, int64_t* out) { return !__builtin_sub_overflow(a, b, out); }
inline bool mul(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }
inline bool add(uint64_t a, uint64_t b, uint64_t* out) { return !__builtin_add_overflow(a, b, out); }
inline bool mul(uint64_t a, uint64_t b, uint64_t* out) { return !__builtin_mul_overflow(a, b, out); }

// base ** exp for exp >= 0 by squaring; false when the result does not fit.
inline bool pow(int64_t base, int64_t exp, int64_t* out) {
  int64_t result = 1;
  while (exp > 0) {
    if ((exp & 1) != 0 && !mul(result, base, &result)) return false;
    exp >>= 1;
    if (exp > 0 && !mul(base, base, &base)) return false;
  }
  *out = result;
  return true;
}

// a * b, or UINT64_MAX when that overflows: for cost estimates compared against a limit.
inline uint64_t mul_sat(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}
// a * b for non-negative a and b, or INT64_MAX when that overflows.
inline int64_t mul_sat(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}
inline uint64_t add_sat(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

// Integer tensor arithmetic wraps in two's complement, as ATen's kernels do in practice (C++
// leaves signed overflow undefined, so the values from a file must not reach a plain + or *).
inline int64_t wrap_add(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
inline int64_t wrap_mul(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }
inline int64_t wrap_neg(int64_t a) { return static_cast<int64_t>(0 - static_cast<uint64_t>(a)); }
// a ** e for e >= 0 by squaring, wrapping (a loop of e multiplications could run for years).
inline int64_t wrap_pow(int64_t a, uint64_t e) {
  int64_t r = 1;
  while (e != 0) {
    if (e & 1) r = wrap_mul(r, a);
    a = wrap_mul(a, a);
    e >>= 1;
  }
  return r;
}
// a / b and a % b with C's truncation; the one overflowing case (INT64_MIN / -1) wraps. b != 0.
inline int64_t wrap_div(int64_t a, int64_t b) { return b == -1 ? wrap_neg(a) : a / b; }
inline int64_t wrap_rem(int64_t a, int64_t b) { return b == -1 ? 0 : a % b; }

// A floating value converted to an integer type as x86's truncating conversion does: NaN and
// values outside the range give the type's minimum (a plain cast of those is undefined).
// Narrower types go through int32 and keep its low bits, like a C cast compiled for x86.
template <typename I>
I to_int(double v) {
  static_assert(std::is_integral_v<I>, "integer targets only");
  if constexpr (sizeof(I) == 8) {
    // 2^63 is exact as a double; anything at or above it (or NaN) is out of range.
    if (!(v > -9223372036854775808.0 && v < 9223372036854775808.0)) return std::numeric_limits<int64_t>::min();
    return static_cast<I>(static_cast<int64_t>(v));
  } else {
    if (!(v > -2147483649.0 && v < 2147483648.0)) return static_cast<I>(std::numeric_limits<int32_t>::min());
    return static_cast<I>(static_cast<int32_t>(v));
  }
}

// Element count of `n` sizes: each in [0, kMaxElements] and, ignoring zeros, their product too
// (so a zero-size dimension cannot hide huge ones). False for anything else.
template <typename T>
bool numel(const T* sizes, size_t n, int64_t* out) {
  int64_t total = 1, nonzero = 1;
  for (size_t i = 0; i < n; ++i) {
    const T s = sizes[i];
    if constexpr (std::is_signed_v<T>) {
      if (s < 0) return false;
    }
    if (static_cast<uint64_t>(s) > static_cast<uint64_t>(kMaxElements)) return false;
    if (s == 0) {
      total = 0;
      continue;
    }
    if (!mul(nonzero, static_cast<int64_t>(s), &nonzero) || nonzero > kMaxElements) return false;
    total *= static_cast<int64_t>(s);
  }
  *out = total;
  return true;
}

// numel * element_size, within kMaxBytes.
inline bool nbytes(int64_t numel, size_t element_size, uint64_t* out) {
  uint64_t n = 0;
  if (numel < 0 || !mul(static_cast<uint64_t>(numel), static_cast<uint64_t>(element_size), &n) || n > kMaxBytes) {
    return false;
  }
  *out = n;
  return true;
}

// One past the largest element offset a strided layout reaches (0 when it is empty):
// 1 + sum((size - 1) * stride). False on overflow or a negative stride.
inline bool extent(const int64_t* sizes, const int64_t* strides, int dim, int64_t* out) {
  int64_t last = 0;
  for (int d = 0; d < dim; ++d) {
    if (sizes[d] == 0) {
      *out = 0;
      return true;
    }
  }
  for (int d = 0; d < dim; ++d) {
    int64_t step = 0;
    if (sizes[d] < 0 || strides[d] < 0 || !mul(sizes[d] - 1, strides[d], &step) || !add(last, step, &last)) {
      return false;
    }
  }
  return add(last, int64_t{1}, out);
}

// Output extent of a sliding window: (in + pad_a + pad_b - dilation * (kernel - 1) - 1 (+ stride - 1
// when ceil)) / stride + 1, ATen's rule (ceil mode drops a last window starting in the padding).
// False for parameters outside [0, kMaxWindow] (kernel, stride, dilation at least 1), an input
// beyond kMaxElements, or a window larger than the padded input.
inline bool window(int64_t in, int64_t kernel, int64_t pad_a, int64_t pad_b, int64_t stride, int64_t dilation,
                   bool ceil, int64_t* out) {
  if (in < 0 || in > kMaxElements || kernel < 1 || stride < 1 || dilation < 1 || pad_a < 0 || pad_b < 0 ||
      kernel > kMaxWindow || stride > kMaxWindow || dilation > kMaxWindow || pad_a > kMaxWindow ||
      pad_b > kMaxWindow) {
    return false;
  }
  // Bounded above: every term is at most 2^40, so nothing below overflows.
  const int64_t effective = dilation * (kernel - 1) + 1;
  const int64_t padded = in + pad_a + pad_b;
  if (padded < effective) return false;
  int64_t num = padded - effective + (ceil ? stride - 1 : 0);
  int64_t n = num / stride + 1;
  if (ceil && (n - 1) * stride >= in + pad_a) --n;
  *out = n;
  return true;
}

}  // namespace checked
}  // namespace etrt
