#pragma once

#include <cstddef>
#include <utility>

#include "etrt/runtime/config.h"

namespace etrt {

// A non-owning view of a contiguous sequence (std::span is C++20).
template <typename T>
class Span {
 public:
  constexpr Span() noexcept = default;
  constexpr Span(T* data, size_t size) noexcept : data_(data), size_(size) {}
  template <size_t N>
  constexpr Span(T (&array)[N]) noexcept : data_(array), size_(N) {}
  template <typename Container,
            typename = decltype(static_cast<T*>(std::declval<Container&>().data()))>
  constexpr Span(Container& c) noexcept : data_(c.data()), size_(c.size()) {}

  constexpr T* data() const noexcept { return data_; }
  constexpr size_t size() const noexcept { return size_; }
  constexpr bool empty() const noexcept { return size_ == 0; }
  constexpr T& operator[](size_t i) const noexcept { return data_[i]; }
  constexpr T* begin() const noexcept { return data_; }
  constexpr T* end() const noexcept { return data_ + size_; }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace etrt
