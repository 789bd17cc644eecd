// Registers "XnnpackBackend" when the library loads; nothing else in the process refers to it.
#include <xnnpack.h>

#include <atomic>
#include <memory>
#include <string>

#include "delegate.h"
#include "etrt/backends/xnnpack.h"
#include "etrt/runtime/backend.h"
#include "etrt/runtime/log.h"

namespace etrt {
namespace backends {
namespace xnnpack {
namespace {

constexpr const char* kBackendName = "XnnpackBackend";

std::atomic<bool> g_registered{false};

xnn_status initialize() noexcept {
  // xnn_initialize is reference-counted and thread-safe; once per process is enough.
  static const xnn_status status = xnn_initialize(nullptr);
  return status;
}

class XnnpackBackend final : public BackendInterface {
 public:
  bool is_available() const override { return initialize() == xnn_status_success; }

  Result<void*> init(Span<const uint8_t> processed, Span<const CompileSpec> specs,
                     BackendInitContext& context) override {
    (void)specs;  // no options yet
    xnn_status s = initialize();
    if (s != xnn_status_success) {
      return Error(ErrorCode::BackendMissing, std::string("XNNPACK failed to initialize: ") + status_name(s));
    }
    Result<std::unique_ptr<Delegate>> d = Delegate::create(processed, context.max_memory_bytes, &context.memory_bytes);
    if (!d.ok()) return d.error();
    return static_cast<void*>(std::move(d).get().release());
  }

  Error execute(void* handle, Span<Value*> args) override {
    if (handle == nullptr) return Error(ErrorCode::InvalidState, "XNNPACK delegate was not initialized");
    return static_cast<Delegate*>(handle)->execute(args);
  }

  void destroy(void* handle) noexcept override { delete static_cast<Delegate*>(handle); }
};

struct Registration {
  Registration() {
    // Never destroyed: methods may still hold delegates while other libraries shut down.
    static XnnpackBackend* backend = new XnnpackBackend();
    Error e = register_backend(kBackendName, backend);
    if (e.ok()) {
      g_registered.store(true, std::memory_order_release);
    } else {
      ETRT_LOG(Error, "%s was not registered: %s", kBackendName, e.to_string().c_str());
    }
  }
};

const Registration g_registration;

}  // namespace

const char* backend_name() noexcept { return kBackendName; }

bool is_registered() noexcept { return g_registered.load(std::memory_order_acquire); }

bool is_available() noexcept { return initialize() == xnn_status_success; }

RuntimeStats runtime_stats() noexcept { return Delegate::stats(); }

}  // namespace xnnpack
}  // namespace backends
}  // namespace etrt
