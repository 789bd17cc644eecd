// Value: one argument or result of an operator call (tensor, scalar, list or none).
#pragma once

#include <cstdint>
#include <string_view>

#include "etrt/runtime/config.h"
#include "etrt/runtime/span.h"
#include "etrt/runtime/tensor.h"

namespace etrt {

class Value;

enum class Tag : uint8_t {
  None,
  Int,
  Double,
  Bool,
  String,
  IntList,
  DoubleList,
  BoolList,
  Tensor,
  TensorList,          // elements are Values holding Tensors
  OptionalTensorList,  // elements are Values holding Tensors or None
};

ETRT_EXPORT const char* to_string(Tag tag) noexcept;

// A tagged union that does not own list or string storage (it points into the program or
// into caller memory), so copying one is cheap and never allocates.
class ETRT_EXPORT Value {
 public:
  Value() noexcept : tag_(Tag::None) {}
  Value(int64_t v) noexcept : tag_(Tag::Int) { payload_.i = v; }        // NOLINT
  Value(int v) noexcept : Value(static_cast<int64_t>(v)) {}             // NOLINT
  Value(double v) noexcept : tag_(Tag::Double) { payload_.d = v; }      // NOLINT
  Value(bool v) noexcept : tag_(Tag::Bool) { payload_.b = v; }          // NOLINT
  Value(const Tensor& t) noexcept : tag_(Tag::Tensor), tensor_(t) {}    // NOLINT
  static Value string(std::string_view s) noexcept;
  static Value int_list(Span<const int64_t> items) noexcept;
  static Value double_list(Span<const double> items) noexcept;
  static Value bool_list(Span<const bool> items) noexcept;
  static Value tensor_list(Span<Value* const> items) noexcept;
  static Value optional_tensor_list(Span<Value* const> items) noexcept;

  Tag tag() const noexcept { return tag_; }
  bool is_none() const noexcept { return tag_ == Tag::None; }
  bool is_int() const noexcept { return tag_ == Tag::Int; }
  bool is_double() const noexcept { return tag_ == Tag::Double; }
  bool is_bool() const noexcept { return tag_ == Tag::Bool; }
  bool is_string() const noexcept { return tag_ == Tag::String; }
  bool is_int_list() const noexcept { return tag_ == Tag::IntList; }
  bool is_double_list() const noexcept { return tag_ == Tag::DoubleList; }
  bool is_bool_list() const noexcept { return tag_ == Tag::BoolList; }
  bool is_tensor() const noexcept { return tag_ == Tag::Tensor; }
  bool is_tensor_list() const noexcept { return tag_ == Tag::TensorList; }
  bool is_optional_tensor_list() const noexcept { return tag_ == Tag::OptionalTensorList; }
  // Int, Double or Bool: what ATen calls a Scalar.
  bool is_scalar() const noexcept { return is_int() || is_double() || is_bool(); }

  // Accessors assume the tag matches; kernels check the tag first where the schema allows
  // more than one kind.
  int64_t to_int() const noexcept { return payload_.i; }
  double to_double() const noexcept { return payload_.d; }
  bool to_bool() const noexcept { return payload_.b; }
  // Int, Double or Bool converted to double.
  double scalar_to_double() const noexcept;
  // Int or Bool converted to int64 (Double truncates; NaN and values out of range give INT64_MIN).
  int64_t scalar_to_int() const noexcept;
  std::string_view to_string() const noexcept { return {payload_.str.data, payload_.str.size}; }
  Span<const int64_t> to_int_list() const noexcept { return {payload_.ints.data, payload_.ints.size}; }
  Span<const double> to_double_list() const noexcept { return {payload_.doubles.data, payload_.doubles.size}; }
  Span<const bool> to_bool_list() const noexcept { return {payload_.bools.data, payload_.bools.size}; }
  Tensor& to_tensor() noexcept { return tensor_; }
  const Tensor& to_tensor() const noexcept { return tensor_; }
  Span<Value* const> to_tensor_list() const noexcept { return {payload_.list.data, payload_.list.size}; }

 private:
  template <typename T>
  struct ListRef {
    T* data;
    size_t size;
  };
  Tag tag_;
  union Payload {
    int64_t i;
    double d;
    bool b;
    ListRef<const char> str;
    ListRef<const int64_t> ints;
    ListRef<const double> doubles;
    ListRef<const bool> bools;
    ListRef<Value* const> list;
  } payload_{};
  Tensor tensor_;
};

}  // namespace etrt
