#include "etrt/runtime/value.h"

#include "common/checked.h"

namespace etrt {

const char* to_string(Tag tag) noexcept {
  switch (tag) {
    case Tag::None: return "None";
    case Tag::Int: return "Int";
    case Tag::Double: return "Double";
    case Tag::Bool: return "Bool";
    case Tag::String: return "String";
    case Tag::IntList: return "IntList";
    case Tag::DoubleList: return "DoubleList";
    case Tag::BoolList: return "BoolList";
    case Tag::Tensor: return "Tensor";
    case Tag::TensorList: return "TensorList";
    case Tag::OptionalTensorList: return "OptionalTensorList";
  }
  return "Unknown";
}

Value Value::string(std::string_view s) noexcept {
  Value v;
  v.tag_ = Tag::String;
  v.payload_.str = {s.data(), s.size()};
  return v;
}

Value Value::int_list(Span<const int64_t> items) noexcept {
  Value v;
  v.tag_ = Tag::IntList;
  v.payload_.ints = {items.data(), items.size()};
  return v;
}

Value Value::double_list(Span<const double> items) noexcept {
  Value v;
  v.tag_ = Tag::DoubleList;
  v.payload_.doubles = {items.data(), items.size()};
  return v;
}

Value Value::bool_list(Span<const bool> items) noexcept {
  Value v;
  v.tag_ = Tag::BoolList;
  v.payload_.bools = {items.data(), items.size()};
  return v;
}

Value Value::tensor_list(Span<Value* const> items) noexcept {
  Value v;
  v.tag_ = Tag::TensorList;
  v.payload_.list = {items.data(), items.size()};
  return v;
}

Value Value::optional_tensor_list(Span<Value* const> items) noexcept {
  Value v;
  v.tag_ = Tag::OptionalTensorList;
  v.payload_.list = {items.data(), items.size()};
  return v;
}

double Value::scalar_to_double() const noexcept {
  switch (tag_) {
    case Tag::Int: return static_cast<double>(payload_.i);
    case Tag::Double: return payload_.d;
    case Tag::Bool: return payload_.b ? 1.0 : 0.0;
    default: return 0.0;
  }
}

int64_t Value::scalar_to_int() const noexcept {
  switch (tag_) {
    case Tag::Int: return payload_.i;
    case Tag::Double: return checked::to_int<int64_t>(payload_.d);
    case Tag::Bool: return payload_.b ? 1 : 0;
    default: return 0;
  }
}

}  // namespace etrt
