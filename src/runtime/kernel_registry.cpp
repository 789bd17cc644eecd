#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>

#include "etrt/runtime/kernel.h"
#include "etrt/runtime/log.h"

namespace etrt {

KernelContext::~KernelContext() = default;

void* KernelContext::instruction_cache(uint64_t, size_t, bool* reused) {
  *reused = false;
  return nullptr;
}

namespace {

struct KernelRegistry {
  std::mutex mutex;
  std::deque<std::string> names;  // registration order; deque keeps c_str() stable
  std::unordered_map<std::string_view, KernelFn> by_name;
};

// Function-local: kernel libraries register from their static initializers, possibly
// before this library's own namespace-scope objects would have been constructed.
KernelRegistry& registry() {
  static KernelRegistry* r = new KernelRegistry();  // never destroyed: safe at exit
  return *r;
}

Error check_kernel(const Kernel& k) {
  if (k.name == nullptr || *k.name == '\0') {
    return Error(ErrorCode::InvalidArgument, "kernel registered without a name");
  }
  if (k.fn == nullptr) {
    return Error(ErrorCode::InvalidArgument,
                 std::string("kernel for operator '") + k.name + "' has no function");
  }
  return Error();
}

Error log_failure(Error err) {
  // Registration usually runs in a static initializer where nobody can see the Error.
  ETRT_LOG(Error, "kernel registration failed: %s", err.to_string().c_str());
  return err;
}

}  // namespace

Error register_kernels(Span<const Kernel> kernels) noexcept {
  try {
    KernelRegistry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    std::unordered_map<std::string_view, bool> batch;
    for (const Kernel& k : kernels) {
      Error err = check_kernel(k);
      if (!err.ok()) return log_failure(std::move(err));
      std::string_view name(k.name);
      if (r.by_name.count(name) != 0 || !batch.emplace(name, true).second) {
        return log_failure(Error(ErrorCode::AlreadyRegistered,
                                 "a kernel for operator '" + std::string(name) +
                                     "' is already registered"));
      }
    }
    for (const Kernel& k : kernels) {
      r.names.emplace_back(k.name);
      r.by_name.emplace(std::string_view(r.names.back()), k.fn);
    }
    return Error();
  } catch (const std::bad_alloc&) {
    return log_failure(Error(ErrorCode::OutOfMemory, "out of memory registering kernels"));
  }
}

Error register_kernel(const Kernel& kernel) noexcept {
  return register_kernels(Span<const Kernel>(&kernel, 1));
}

KernelFn find_kernel(std::string_view name) noexcept {
  KernelRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.by_name.find(name);
  return it == r.by_name.end() ? nullptr : it->second;
}

size_t num_registered_kernels() noexcept {
  KernelRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.names.size();
}

const char* registered_kernel_name(size_t i) noexcept {
  KernelRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return i < r.names.size() ? r.names[i].c_str() : nullptr;
}

}  // namespace etrt
