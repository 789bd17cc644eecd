// Private: one loaded delegate: an XNNPACK runtime plus the glue between etrt tensors and it.
#pragma once

#include <xnnpack.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "etrt/backends/xnnpack.h"
#include "etrt/runtime/value.h"
#include "etrt/threadpool/threadpool.h"
#include "graph.h"

namespace etrt {
namespace backends {
namespace xnnpack {

struct RuntimeDeleter {
  void operator()(xnn_runtime* r) const noexcept { xnn_delete_runtime(r); }
};
using RuntimePtr = std::unique_ptr<xnn_runtime, RuntimeDeleter>;

struct FreeDeleter {
  void operator()(void* p) const noexcept;
};

class Delegate {
 public:
  // The blob must stay alive (and unchanged) until the delegate is destroyed. Fails with
  // OutOfMemory, before XNNPACK allocates anything, when the delegate would hold more than
  // `max_memory_bytes`; sets *memory_bytes to what it holds.
  static Result<std::unique_ptr<Delegate>> create(Span<const uint8_t> blob, uint64_t max_memory_bytes,
                                                  uint64_t* memory_bytes) noexcept;

  // args: the inputs, then the outputs, as the DelegateCall lists them.
  Error execute(Span<Value*> args) noexcept;

  // Runtimes created by every delegate of the process (etrt/backends/xnnpack.h).
  static RuntimeStats stats() noexcept;

 private:
  Delegate() = default;
  // Builds a runtime on the current shared pool. XNNPACK keeps the pool pointer, so the runtime
  // is rebuilt whenever the pool was replaced (thread count changed); pool_ keeps the pool
  // the runtime uses alive until then.
  Error ensure_runtime() noexcept;

  Span<const uint8_t> blob_;
  Graph graph_;
  RuntimePtr runtime_;
  threadpool::PoolGuard pool_;
  bool set_up_ = false;
  std::vector<xnn_external_value> externals_;  // inputs, then outputs
  std::vector<void*> scratch_;                 // per external: layout conversions and copies
  std::unique_ptr<void, FreeDeleter> scratch_memory_;
};

}  // namespace xnnpack
}  // namespace backends
}  // namespace etrt
