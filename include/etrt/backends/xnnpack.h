// The XNNPACK delegate: libetrt_backend_xnnpack.so, CMake target etrt::backend_xnnpack.
//
// Linking the library is all a program needs: a static initializer registers the backend
// "XnnpackBackend" in the runtime's registry, and methods exported with backend="xnnpack" run
// their delegate calls through XNNPACK on the shared thread pool (etrt::threadpool). The
// functions below only answer questions about it.
#pragma once

#include <cstdint>

#include "etrt/runtime/config.h"

namespace etrt {
namespace backends {
namespace xnnpack {

// The backend id delegated programs name: "XnnpackBackend".
ETRT_EXPORT const char* backend_name() noexcept;

// True once the backend is in the registry (it registers when the library loads).
ETRT_EXPORT bool is_registered() noexcept;

// True if XNNPACK initialized on this CPU; delegated methods fail to load otherwise.
ETRT_EXPORT bool is_available() noexcept;

// XNNPACK packs a delegate's weights (and plans its memory) when it creates the delegate's
// runtime: once when the method loads, and again only when the shared thread pool is replaced
// (set_num_threads), never in a run that keeps the pool. Totals for the process so far:
struct RuntimeStats {
  uint64_t runtimes_created = 0;  // runtimes created, each packing its subgraph's weights
  uint64_t create_nanoseconds = 0;  // time spent defining and creating them
};
ETRT_EXPORT RuntimeStats runtime_stats() noexcept;

}  // namespace xnnpack
}  // namespace backends
}  // namespace etrt
