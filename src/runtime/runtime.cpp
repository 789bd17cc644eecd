#include "etrt/runtime/runtime.h"

#ifndef ETRT_VERSION
#error "ETRT_VERSION must be defined by the build"
#endif

namespace etrt {

const char* version() noexcept { return ETRT_VERSION; }

}  // namespace etrt
