// Everything a caller of the etrt runtime needs.
#pragma once

#include "etrt/runtime/allocator.h"
#include "etrt/runtime/backend.h"
#include "etrt/runtime/config.h"
#include "etrt/runtime/cpu_isa.h"
#include "etrt/runtime/data_loader.h"
#include "etrt/runtime/error.h"
#include "etrt/runtime/event_tracer.h"
#include "etrt/runtime/half.h"
#include "etrt/runtime/kernel.h"
#include "etrt/runtime/log.h"
#include "etrt/runtime/method.h"
#include "etrt/runtime/module.h"
#include "etrt/runtime/named_data_map.h"
#include "etrt/runtime/parallel.h"
#include "etrt/runtime/program.h"
#include "etrt/runtime/random.h"
#include "etrt/runtime/span.h"
#include "etrt/runtime/tensor.h"
#include "etrt/runtime/tensor_ptr.h"
#include "etrt/runtime/value.h"

namespace etrt {

// The runtime library's version, e.g. "0.1.0".
ETRT_EXPORT const char* version() noexcept;

}  // namespace etrt
