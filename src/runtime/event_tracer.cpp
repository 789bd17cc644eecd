#include "etrt/runtime/event_tracer.h"

namespace etrt {

// Out of line: the vtable and type info live in libetrt.so only.
EventTracer::~EventTracer() = default;

}  // namespace etrt
