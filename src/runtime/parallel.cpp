#include "etrt/runtime/parallel.h"

#include <atomic>
#include <string>

namespace etrt {
namespace {

// Constant-initialized (no dynamic init), so attaching from a static initializer is safe.
std::atomic<const ParallelBackend*> g_backend{nullptr};
std::atomic<const ParallelRunHooks*> g_run_hooks{nullptr};

}  // namespace

void parallel_for(int64_t begin, int64_t end, int64_t grain, RangeFn fn) {
  if (begin >= end) return;
  const ParallelBackend* backend = g_backend.load(std::memory_order_acquire);
  if (backend == nullptr || backend->parallel_for == nullptr) {
    fn(begin, end);
    return;
  }
  backend->parallel_for(begin, end, grain < 1 ? 1 : grain, fn);
}

int parallel_num_threads() noexcept {
  const ParallelBackend* backend = g_backend.load(std::memory_order_acquire);
  if (backend == nullptr || backend->num_threads == nullptr) return 1;
  int n = backend->num_threads();
  return n < 1 ? 1 : n;
}

Error set_parallel_num_threads(int n) {
  if (n < 1) return Error(ErrorCode::InvalidArgument, "thread count must be at least 1, got " + std::to_string(n));
  const ParallelBackend* backend = g_backend.load(std::memory_order_acquire);
  if (backend == nullptr) {
    if (n == 1) return Error();
    return Error(ErrorCode::InvalidState,
                 "parallel_for is serial: no thread pool is attached (link etrt::threadpool)");
  }
  if (backend->set_num_threads == nullptr) {
    return Error(ErrorCode::InvalidState, "the attached thread pool has a fixed thread count");
  }
  return backend->set_num_threads(n);
}

ParallelRunScope::ParallelRunScope() noexcept : hooks_(g_run_hooks.load(std::memory_order_acquire)) {
  if (hooks_ != nullptr && hooks_->begin_run != nullptr) hooks_->begin_run();
}

ParallelRunScope::~ParallelRunScope() {
  if (hooks_ != nullptr && hooks_->end_run != nullptr) hooks_->end_run();
}

void set_parallel_backend(const ParallelBackend* backend) noexcept {
  g_backend.store(backend, std::memory_order_release);
}

void set_parallel_run_hooks(const ParallelRunHooks* hooks) noexcept {
  g_run_hooks.store(hooks, std::memory_order_release);
}

}  // namespace etrt
