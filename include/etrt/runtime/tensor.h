// Tensor: a non-owning, fixed-capacity view of strided memory. Building one never allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "etrt/runtime/config.h"
#include "etrt/runtime/error.h"
#include "etrt/runtime/span.h"

namespace etrt {

enum class ScalarType : int8_t {
  Float = 0,   // float32
  Long = 1,    // int64
  Int = 2,     // int32
  Bool = 3,    // one byte, 0 or 1
  Byte = 4,    // uint8
  Char = 5,    // int8
  Double = 6,  // float64
  Half = 7,    // float16 (IEEE binary16), stored as its 16 bits
  BFloat16 = 8,  // bfloat16 (the upper 16 bits of a float32)
};

ETRT_EXPORT size_t element_size(ScalarType type) noexcept;
ETRT_EXPORT const char* to_string(ScalarType type) noexcept;
// False for values outside the enum (for example read from an untrusted file).
ETRT_EXPORT bool is_valid(ScalarType type) noexcept;

template <typename T>
struct CppTypeToScalarType;
template <> struct CppTypeToScalarType<float> { static constexpr ScalarType value = ScalarType::Float; };
template <> struct CppTypeToScalarType<double> { static constexpr ScalarType value = ScalarType::Double; };
template <> struct CppTypeToScalarType<int64_t> { static constexpr ScalarType value = ScalarType::Long; };
template <> struct CppTypeToScalarType<int32_t> { static constexpr ScalarType value = ScalarType::Int; };
template <> struct CppTypeToScalarType<bool> { static constexpr ScalarType value = ScalarType::Bool; };
template <> struct CppTypeToScalarType<uint8_t> { static constexpr ScalarType value = ScalarType::Byte; };
template <> struct CppTypeToScalarType<int8_t> { static constexpr ScalarType value = ScalarType::Char; };

class ETRT_EXPORT Tensor {
 public:
  static constexpr int kMaxDims = 8;

  Tensor() noexcept = default;
  // A contiguous tensor over `data`. More than kMaxDims dimensions yields an empty tensor;
  // use make() to get an Error instead.
  Tensor(void* data, ScalarType dtype, Span<const int64_t> sizes) noexcept;
  Tensor(void* data, ScalarType dtype, std::initializer_list<int64_t> sizes) noexcept
      : Tensor(data, dtype, Span<const int64_t>(sizes.begin(), sizes.size())) {}

  // Checked construction: rejects negative sizes, too many dimensions, bad strides.
  static Result<Tensor> make(void* data, ScalarType dtype, Span<const int64_t> sizes) noexcept;
  static Result<Tensor> make(void* data, ScalarType dtype, Span<const int64_t> sizes,
                             Span<const int64_t> strides) noexcept;

  void* data() const noexcept { return data_; }
  template <typename T>
  T* data_as() const noexcept { return static_cast<T*>(data_); }
  ScalarType dtype() const noexcept { return dtype_; }
  int dim() const noexcept { return dim_; }
  int64_t size(int d) const noexcept { return sizes_[d < 0 ? d + dim_ : d]; }
  int64_t stride(int d) const noexcept { return strides_[d < 0 ? d + dim_ : d]; }
  Span<const int64_t> sizes() const noexcept { return {sizes_, static_cast<size_t>(dim_)}; }
  Span<const int64_t> strides() const noexcept { return {strides_, static_cast<size_t>(dim_)}; }
  int64_t numel() const noexcept;
  size_t element_size() const noexcept { return ::etrt::element_size(dtype_); }
  // Bytes spanned by the elements (numel * element size), ignoring gaps from strides.
  size_t nbytes() const noexcept { return static_cast<size_t>(numel()) * element_size(); }
  bool is_contiguous() const noexcept;

  void set_data(void* data) noexcept { data_ = data; }
  // Memory the program must not write (constants, external data): kernels refuse it as an
  // output. Views of such a tensor inherit the mark.
  bool is_read_only() const noexcept { return read_only_; }
  void set_read_only(bool read_only) noexcept { read_only_ = read_only; }
  // A dynamic tensor's sizes are set at run time, each at most the size the program planned
  // (its memory's capacity): the kernel producing it gives it the sizes it computes.
  bool is_dynamic() const noexcept { return dynamic_; }
  void set_dynamic(bool dynamic) noexcept { dynamic_ = dynamic; }
  // For kernels producing views: new shape and strides over the same or another buffer.
  Error set_sizes_and_strides(Span<const int64_t> sizes, Span<const int64_t> strides) noexcept;
  // Contiguous strides for `sizes`.
  Error set_sizes_contiguous(Span<const int64_t> sizes) noexcept;

 private:
  void* data_ = nullptr;
  ScalarType dtype_ = ScalarType::Float;
  bool read_only_ = false;  // in the padding after dtype_: the layout is unchanged
  bool dynamic_ = false;    // likewise
  int dim_ = 0;
  int64_t sizes_[kMaxDims] = {};
  int64_t strides_[kMaxDims] = {};
};

}  // namespace etrt
