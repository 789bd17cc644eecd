#include "etrt/runtime/error.h"

namespace etrt {

const char* to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::Ok: return "Ok";
    case ErrorCode::Internal: return "Internal";
    case ErrorCode::InvalidArgument: return "InvalidArgument";
    case ErrorCode::InvalidProgram: return "InvalidProgram";
    case ErrorCode::UnsupportedVersion: return "UnsupportedVersion";
    case ErrorCode::OperatorMissing: return "OperatorMissing";
    case ErrorCode::BackendMissing: return "BackendMissing";
    case ErrorCode::AlreadyRegistered: return "AlreadyRegistered";
    case ErrorCode::NotFound: return "NotFound";
    case ErrorCode::OutOfMemory: return "OutOfMemory";
    case ErrorCode::IoError: return "IoError";
    case ErrorCode::InvalidState: return "InvalidState";
    case ErrorCode::KernelFailed: return "KernelFailed";
  }
  return "Unknown";
}

std::string Error::to_string() const {
  std::string out = ::etrt::to_string(code_);
  if (!message_.empty()) {
    out += ": ";
    out += message_;
  }
  return out;
}

}  // namespace etrt
