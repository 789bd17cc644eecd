// Checked arithmetic for every size a program, data map or delegate blob controls: one place
// that bounds them before anything multiplies, allocates or loops with them. Private to the
// etrt libraries (header-only, so each shared library carries its own copy).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace etrt {
namespace checked {

// Any tensor, arena or delegate workspace beyond these is treated as malformed, not attempted.
constexpr uint64_t kMaxBytes = uint64_t{1} << 40;
constexpr int64_t kMaxElements = int64_t{1} << 36;
// Kernel sizes, strides, paddings and dilations of a window (convolution, pooling).
constexpr int64_t kMaxWindow = int64_t{1} << 20;

inline bool add(int64_t a, int64_t b, int64_t* out) { return !__builtin_add_overflow(a, b, out); }
inline bool mul(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }
inline bool add(uint64_t a, uint64_t b, uint64_t* out) { return !__builtin_add_overflow(a, b, out); }
inline bool mul(uint64_t a, uint64_t b, uint64_t* out) { return !__builtin_mul_overflow(a, b, out); }

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
