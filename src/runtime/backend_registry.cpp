#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>

#include "etrt/runtime/backend.h"
#include "etrt/runtime/log.h"

namespace etrt {

BackendInterface::~BackendInterface() = default;

namespace {

struct BackendRegistry {
  std::mutex mutex;
  std::deque<std::string> names;
  std::unordered_map<std::string_view, BackendInterface*> by_name;
};

// Function-local for the same reason as the kernel registry: static-initializer callers.
BackendRegistry& registry() {
  static BackendRegistry* r = new BackendRegistry();
  return *r;
}

Error log_failure(Error err) {
  ETRT_LOG(Error, "backend registration failed: %s", err.to_string().c_str());
  return err;
}

}  // namespace

Error register_backend(const char* name, BackendInterface* backend) noexcept {
  if (name == nullptr || *name == '\0') {
    return log_failure(Error(ErrorCode::InvalidArgument, "backend registered without a name"));
  }
  if (backend == nullptr) {
    return log_failure(Error(ErrorCode::InvalidArgument,
                             std::string("backend '") + name + "' registered as null"));
  }
  try {
    BackendRegistry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    if (r.by_name.count(std::string_view(name)) != 0) {
      return log_failure(Error(ErrorCode::AlreadyRegistered,
                               std::string("a backend named '") + name + "' is already registered"));
    }
    r.names.emplace_back(name);
    r.by_name.emplace(std::string_view(r.names.back()), backend);
    return Error();
  } catch (const std::bad_alloc&) {
    return log_failure(Error(ErrorCode::OutOfMemory, "out of memory registering a backend"));
  }
}

BackendInterface* find_backend(std::string_view name) noexcept {
  BackendRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.by_name.find(name);
  return it == r.by_name.end() ? nullptr : it->second;
}

size_t num_registered_backends() noexcept {
  BackendRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.names.size();
}

const char* registered_backend_name(size_t i) noexcept {
  BackendRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return i < r.names.size() ? r.names[i].c_str() : nullptr;
}

}  // namespace etrt
