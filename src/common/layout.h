// Memory layouts of etrt tensors that the kernels and the XNNPACK delegate both recognise.
#pragma once

#include <cstdint>

#include "etrt/runtime/tensor.h"

namespace etrt {
namespace layout {

// A dense [N, C, H, W] tensor stored channels-last (NHWC, dim_order 0, 2, 3, 1); size-1
// dimensions may have any stride.
inline bool channels_last_dense(const Tensor& t) {
  if (t.dim() != 4) return false;
  const int64_t c = t.size(1), h = t.size(2), w = t.size(3);
  const int64_t want[4] = {h * w * c, 1, w * c, c};
  for (int d = 0; d < 4; ++d) {
    if (t.size(d) != 1 && t.stride(d) != want[d]) return false;
  }
  return true;
}

}  // namespace layout
}  // namespace etrt
