// etrt::kernels_optimized: the CPU operator kernels. Loading libetrt_kernels_optimized.so
// registers every kernel below with the runtime's operator registry; nothing else is needed.
#pragma once

#include "etrt/runtime/config.h"
#include "etrt/runtime/kernel.h"
#include "etrt/runtime/span.h"

namespace etrt {
namespace kernels {

// Every kernel the library provides, by ATen overload name. Referencing this function also
// keeps the library linked when a linker drops unreferenced shared libraries.
ETRT_EXPORT Span<const Kernel> optimized_kernels() noexcept;

// The outcome of the library's own registration at load time (Ok, or why it failed, e.g.
// AlreadyRegistered when another library registered one of the same operators first).
ETRT_EXPORT const Error& optimized_kernels_registration() noexcept;

}  // namespace kernels
}  // namespace etrt
