// Errors are values: no exception crosses etrt's public API.
#pragma once

#include <cstdint>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

#include "etrt/runtime/config.h"

namespace etrt {

enum class ErrorCode : uint32_t {
  Ok = 0,
  Internal,
  InvalidArgument,   // the caller passed something wrong
  InvalidProgram,    // the program file is malformed or inconsistent
  UnsupportedVersion,
  OperatorMissing,   // no kernel registered for an operator the program calls
  BackendMissing,    // no backend registered for a delegate the program uses
  AlreadyRegistered,
  NotFound,
  OutOfMemory,
  IoError,
  InvalidState,
  KernelFailed,
};

ETRT_EXPORT const char* to_string(ErrorCode code) noexcept;

// A status: Ok, or a code with a message saying what went wrong. Success carries no string.
class ETRT_EXPORT Error {
 public:
  Error() noexcept = default;
  Error(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const noexcept { return code_ == ErrorCode::Ok; }
  ErrorCode code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }
  // "<Code>: <message>"
  std::string to_string() const;

 private:
  ErrorCode code_ = ErrorCode::Ok;
  std::string message_;
};

// A value of type T, or the Error that prevented it.
template <typename T>
class Result {
 public:
  Result(T value) : has_value_(true) { new (&storage_) T(std::move(value)); }  // NOLINT
  Result(Error error) : error_(std::move(error)) {                               // NOLINT
    if (error_.ok()) error_ = Error(ErrorCode::Internal, "Result built from an Ok error");
  }
  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;
  Result(Result&& other) noexcept(std::is_nothrow_move_constructible<T>::value)
      : has_value_(other.has_value_), error_(std::move(other.error_)) {
    if (has_value_) new (&storage_) T(std::move(*other.ptr()));
  }
  Result& operator=(Result&& other) noexcept(std::is_nothrow_move_constructible<T>::value) {
    if (this != &other) {
      reset();
      has_value_ = other.has_value_;
      error_ = std::move(other.error_);
      if (has_value_) new (&storage_) T(std::move(*other.ptr()));
    }
    return *this;
  }
  ~Result() { reset(); }

  bool ok() const noexcept { return has_value_; }
  const Error& error() const noexcept { return error_; }
  T& get() & { return *ptr(); }
  const T& get() const& { return *ptr(); }
  T&& get() && { return std::move(*ptr()); }
  T& operator*() & { return *ptr(); }
  const T& operator*() const& { return *ptr(); }
  T* operator->() { return ptr(); }
  const T* operator->() const { return ptr(); }

 private:
  T* ptr() { return reinterpret_cast<T*>(&storage_); }
  const T* ptr() const { return reinterpret_cast<const T*>(&storage_); }
  void reset() {
    if (has_value_) ptr()->~T();
    has_value_ = false;
  }

  bool has_value_ = false;
  Error error_;
  typename std::aligned_storage<sizeof(T), alignof(T)>::type storage_;
};

}  // namespace etrt

// Returns the Error of `expr` from the enclosing function if it is not Ok.
#define ETRT_RETURN_IF_ERROR(expr)             \
  do {                                         \
    ::etrt::Error etrt_error_ = (expr);        \
    if (!etrt_error_.ok()) return etrt_error_; \
  } while (0)

#define ETRT_CONCAT_INNER_(a, b) a##b
#define ETRT_CONCAT_(a, b) ETRT_CONCAT_INNER_(a, b)

// `ETRT_ASSIGN_OR_RETURN(auto x, make())` declares x from a Result or returns its Error.
#define ETRT_ASSIGN_OR_RETURN(lhs, expr) \
  ETRT_ASSIGN_OR_RETURN_IMPL_(ETRT_CONCAT_(etrt_result_, __LINE__), lhs, expr)
#define ETRT_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.error();                \
  lhs = std::move(tmp).get()
