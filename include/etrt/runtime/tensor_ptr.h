// Helpers to hand data to a Method: from_blob() wraps caller memory without copying;
// OwnedTensor owns zero-initialized or vector-provided storage.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "etrt/runtime/error.h"
#include "etrt/runtime/span.h"
#include "etrt/runtime/tensor.h"
#include "etrt/runtime/value.h"

namespace etrt {

// A contiguous tensor over caller memory; checks the dimension count and sizes.
inline Result<Tensor> from_blob(void* data, ScalarType dtype, Span<const int64_t> sizes) noexcept {
  return Tensor::make(data, dtype, sizes);
}
inline Result<Tensor> from_blob(void* data, ScalarType dtype, std::initializer_list<int64_t> sizes) noexcept {
  return Tensor::make(data, dtype, Span<const int64_t>(sizes.begin(), sizes.size()));
}

// A tensor with its own contiguous storage. Moving it keeps the data pointer valid.
class OwnedTensor {
 public:
  // Zero-filled storage for `sizes`.
  static Result<OwnedTensor> zeros(ScalarType dtype, Span<const int64_t> sizes) {
    int64_t numel = 1;
    for (int64_t s : sizes) {
      if (s < 0) return Error(ErrorCode::InvalidArgument, "negative tensor size");
      if (s != 0 && numel > INT64_MAX / s) return Error(ErrorCode::InvalidArgument, "tensor too large");
      numel *= s;
    }
    size_t nbytes = static_cast<size_t>(numel) * element_size(dtype);
    OwnedTensor owned;
    owned.storage_.reset(new (std::nothrow) uint64_t[(nbytes + 7) / 8 + 1]());
    if (!owned.storage_) return Error(ErrorCode::OutOfMemory, "cannot allocate tensor storage");
    auto t = Tensor::make(owned.storage_.get(), dtype, sizes);
    if (!t.ok()) return t.error();
    owned.tensor_ = *t;
    return owned;
  }
  static Result<OwnedTensor> zeros(ScalarType dtype, std::initializer_list<int64_t> sizes) {
    return zeros(dtype, Span<const int64_t>(sizes.begin(), sizes.size()));
  }
  // Copies `values` (numel must match `sizes`).
  template <typename T>
  static Result<OwnedTensor> from_vector(const std::vector<T>& values, Span<const int64_t> sizes) {
    auto owned = zeros(CppTypeToScalarType<T>::value, sizes);
    if (!owned.ok()) return owned.error();
    if (static_cast<size_t>(owned->tensor_.numel()) != values.size()) {
      return Error(ErrorCode::InvalidArgument, "value count does not match the tensor sizes");
    }
    if (!values.empty()) std::memcpy(owned->tensor_.data(), values.data(), values.size() * sizeof(T));
    return std::move(owned).get();
  }
  template <typename T>
  static Result<OwnedTensor> from_vector(const std::vector<T>& values, std::initializer_list<int64_t> sizes) {
    return from_vector(values, Span<const int64_t>(sizes.begin(), sizes.size()));
  }

  Tensor& tensor() noexcept { return tensor_; }
  const Tensor& tensor() const noexcept { return tensor_; }
  Value value() const noexcept { return Value(tensor_); }

 private:
  OwnedTensor() = default;
  std::unique_ptr<uint64_t[]> storage_;  // 8-byte aligned for every ScalarType
  Tensor tensor_;
};

}  // namespace etrt
