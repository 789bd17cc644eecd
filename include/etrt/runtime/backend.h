// The backend registry: delegates lowered by the exporter run through a backend looked up by id.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "etrt/runtime/config.h"
#include "etrt/runtime/error.h"
#include "etrt/runtime/span.h"
#include "etrt/runtime/value.h"

namespace etrt {

struct CompileSpec {
  std::string_view key;
  Span<const uint8_t> value;
};

// What the runtime grants a delegate while its method loads.
struct BackendInitContext {
  // Bytes the delegate may allocate for its workspace, scratch and copies of its weights
  // (what is left of the method's LoadOptions::max_memory_bytes). init() fails with
  // OutOfMemory rather than go beyond.
  uint64_t max_memory_bytes = UINT64_MAX;
  // Set by init(): the bytes it holds until destroy(), counted against the method's budget.
  uint64_t memory_bytes = 0;
};

class ETRT_EXPORT BackendInterface {
 public:
  virtual ~BackendInterface();
  virtual bool is_available() const = 0;
  // Prepares a delegate blob when a method loads; the handle is passed to execute() and destroy().
  // `processed` stays valid until destroy().
  virtual Result<void*> init(Span<const uint8_t> processed, Span<const CompileSpec> specs,
                             BackendInitContext& context) = 0;
  // args: the delegate call's inputs, then its outputs (planned like kernel outputs).
  virtual Error execute(void* handle, Span<Value*> args) = 0;
  virtual void destroy(void* handle) noexcept = 0;
};

// The registry keeps the pointer; the backend must outlive every method using it.
ETRT_EXPORT Error register_backend(const char* name, BackendInterface* backend) noexcept;
ETRT_EXPORT BackendInterface* find_backend(std::string_view name) noexcept;
ETRT_EXPORT size_t num_registered_backends() noexcept;
ETRT_EXPORT const char* registered_backend_name(size_t i) noexcept;

}  // namespace etrt
