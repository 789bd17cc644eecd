// The instruction set etrt's own kernels dispatch to: the best one the CPU has, capped by
// set_max_isa or, until that is called, by the environment variable ETRT_MAX_ISA (read once,
// at first use; as oneDNN's ONEDNN_MAX_CPU_ISA). A cap above what the CPU has leaves the CPU's
// level. Delegates (XNNPACK) pick their own code paths and ignore the cap.
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

#include "etrt/runtime/config.h"
#include "etrt/runtime/error.h"

namespace etrt {

// Ordered: each level includes the ones below it. Avx2 means AVX2 + FMA; Avx512 means AVX-512F.
enum class CpuIsa : int32_t { Sse2 = 0, Avx2 = 1, Avx512 = 2 };

// "sse2", "avx2" or "avx512": the names ETRT_MAX_ISA and set_max_isa take.
ETRT_EXPORT const char* to_string(CpuIsa isa) noexcept;

// The best level this CPU runs.
ETRT_EXPORT CpuIsa cpu_isa() noexcept;

// The cap: set_max_isa's, else ETRT_MAX_ISA's, else Avx512 (no cap). InvalidArgument, naming
// the allowed values, when ETRT_MAX_ISA holds anything else (Program::load_method then fails
// with that error, and the kernels use the CPU's level).
ETRT_EXPORT Result<CpuIsa> max_isa() noexcept;

// The level the kernels use now: the lower of cpu_isa() and the cap.
ETRT_EXPORT CpuIsa kernel_isa() noexcept;

// Caps the kernels at `name` ("sse2", "avx2" or "avx512"); replaces ETRT_MAX_ISA's value.
// InvalidArgument for any other name. Not while a method runs: a kernel may size its scratch
// memory for one level and run another.
ETRT_EXPORT Error set_max_isa(std::string_view name) noexcept;

namespace detail {
// kernel_isa() as an int, or -1 before the first call: what the kernels read on every call.
ETRT_EXPORT extern std::atomic<int32_t> g_kernel_isa;
}  // namespace detail

}  // namespace etrt
