// Private: the verified program shared by Program and every Method loaded from it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/checked.h"
#include "etrt/fb/program_generated.h"
#include "etrt/runtime/data_loader.h"
#include "etrt/runtime/tensor.h"

namespace etrt {
namespace detail {

// Upper bound for any tensor or arena (common/checked.h): larger values in a file are treated
// as malformed rather than attempted.
constexpr uint64_t kMaxBytes = checked::kMaxBytes;
constexpr size_t kSegmentAlignment = 64;

struct ProgramData {
  Buffer bytes;  // the whole file, 64-byte aligned
  const fb::Program* root = nullptr;
  std::vector<std::string> method_names;

  const uint8_t* segment_data(uint32_t segment) const {
    const auto* seg = root->segments()->Get(segment);
    return bytes.bytes() + root->segment_base_offset() + seg->offset();
  }
  uint64_t segment_size(uint32_t segment) const { return root->segments()->Get(segment)->size(); }
};

// Names from the file as they may appear in messages: non-printable bytes become \xNN.
inline std::string printable(std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// Dimension sizes and strides of a verified fb::Tensor (contiguous in its dim_order).
struct TensorLayout {
  int dim = 0;
  int64_t sizes[Tensor::kMaxDims] = {};
  int64_t strides[Tensor::kMaxDims] = {};
  uint64_t nbytes = 0;
};
// Fails with a message (no prefix) for anything a malformed file could get wrong.
Error compute_layout(const fb::Tensor& t, TensorLayout* out);

}  // namespace detail
}  // namespace etrt
