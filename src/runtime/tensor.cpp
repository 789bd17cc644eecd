#include "etrt/runtime/tensor.h"

#include <string>

namespace etrt {

size_t element_size(ScalarType type) noexcept {
  switch (type) {
    case ScalarType::Float: return 4;
    case ScalarType::Long: return 8;
    case ScalarType::Int: return 4;
    case ScalarType::Bool: return 1;
    case ScalarType::Byte: return 1;
    case ScalarType::Char: return 1;
    case ScalarType::Double: return 8;
    case ScalarType::Half: return 2;
    case ScalarType::BFloat16: return 2;
  }
  return 0;
}

const char* to_string(ScalarType type) noexcept {
  switch (type) {
    case ScalarType::Float: return "Float";
    case ScalarType::Long: return "Long";
    case ScalarType::Int: return "Int";
    case ScalarType::Bool: return "Bool";
    case ScalarType::Byte: return "Byte";
    case ScalarType::Char: return "Char";
    case ScalarType::Double: return "Double";
    case ScalarType::Half: return "Half";
    case ScalarType::BFloat16: return "BFloat16";
  }
  return "Unknown";
}

bool is_valid(ScalarType type) noexcept {
  auto v = static_cast<int>(type);
  return v >= 0 && v <= static_cast<int>(ScalarType::BFloat16);
}

Tensor::Tensor(void* data, ScalarType dtype, Span<const int64_t> sizes) noexcept : dtype_(dtype) {
  if (sizes.size() > static_cast<size_t>(kMaxDims)) return;
  for (int64_t s : sizes) {
    if (s < 0) return;
  }
  data_ = data;
  set_sizes_contiguous(sizes);
}

Result<Tensor> Tensor::make(void* data, ScalarType dtype, Span<const int64_t> sizes) noexcept {
  Tensor t;
  t.data_ = data;
  t.dtype_ = dtype;
  if (!is_valid(dtype)) return Error(ErrorCode::InvalidArgument, "invalid scalar type");
  Error err = t.set_sizes_contiguous(sizes);
  if (!err.ok()) return err;
  return t;
}

Result<Tensor> Tensor::make(void* data, ScalarType dtype, Span<const int64_t> sizes,
                            Span<const int64_t> strides) noexcept {
  Tensor t;
  t.data_ = data;
  t.dtype_ = dtype;
  if (!is_valid(dtype)) return Error(ErrorCode::InvalidArgument, "invalid scalar type");
  Error err = t.set_sizes_and_strides(sizes, strides);
  if (!err.ok()) return err;
  return t;
}

int64_t Tensor::numel() const noexcept {
  int64_t n = 1;
  for (int i = 0; i < dim_; ++i) n *= sizes_[i];
  return n;
}

bool Tensor::is_contiguous() const noexcept {
  if (numel() == 0) return true;  // no element to lay out (ATen agrees)
  int64_t expected = 1;
  for (int i = dim_ - 1; i >= 0; --i) {
    // Strides of size-1 dimensions do not affect the layout.
    if (sizes_[i] != 1 && strides_[i] != expected) return false;
    expected *= sizes_[i];
  }
  return true;
}

Error Tensor::set_sizes_and_strides(Span<const int64_t> sizes, Span<const int64_t> strides) noexcept {
  if (sizes.size() > static_cast<size_t>(kMaxDims)) {
    return Error(ErrorCode::InvalidArgument,
                 "tensor has " + std::to_string(sizes.size()) + " dimensions, at most " +
                     std::to_string(kMaxDims) + " are supported");
  }
  if (strides.size() != sizes.size()) {
    return Error(ErrorCode::InvalidArgument, "sizes and strides differ in length");
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0) return Error(ErrorCode::InvalidArgument, "negative tensor size");
    if (strides[i] < 0) return Error(ErrorCode::InvalidArgument, "negative tensor stride");
  }
  dim_ = static_cast<int>(sizes.size());
  for (int i = 0; i < dim_; ++i) {
    sizes_[i] = sizes[i];
    strides_[i] = strides[i];
  }
  return Error();
}

Error Tensor::set_sizes_contiguous(Span<const int64_t> sizes) noexcept {
  if (sizes.size() > static_cast<size_t>(kMaxDims)) {
    return Error(ErrorCode::InvalidArgument,
                 "tensor has " + std::to_string(sizes.size()) + " dimensions, at most " +
                     std::to_string(kMaxDims) + " are supported");
  }
  for (int64_t s : sizes) {
    if (s < 0) return Error(ErrorCode::InvalidArgument, "negative tensor size");
  }
  dim_ = static_cast<int>(sizes.size());
  int64_t stride = 1;
  for (int i = dim_ - 1; i >= 0; --i) {
    sizes_[i] = sizes[i];
    strides_[i] = stride;
    stride *= sizes[i] > 1 ? sizes[i] : 1;
  }
  return Error();
}

}  // namespace etrt
