// Runtime dispatch of a hot loop to the instruction set etrt::kernel_isa() names (the CPU's
// best, capped by ETRT_MAX_ISA / set_max_isa). A function written as
//
//   ETRT_ISA_BODY void scale_body(float* x, int64_t n) { ...plain loop... }
//   ETRT_ISA_DISPATCH(void, scale, (float* x, int64_t n), (x, n))
//
// gets its body compiled three times (AVX-512F, AVX2, x86-64 baseline: what GCC's target_clones
// made, whose load-time resolver no setting can steer) and `scale` picks one per call from one
// relaxed load. Callees the compiler inlines follow the body's instruction set.
#pragma once

#include <atomic>
#include <cstdint>

#include "etrt/runtime/cpu_isa.h"

namespace etrt {
namespace kernels {

// kernel_isa() as an int: 2 AVX-512F, 1 AVX2 + FMA, 0 baseline.
inline int isa_level() noexcept {
  const int32_t level = detail::g_kernel_isa.load(std::memory_order_relaxed);
  return level >= 0 ? level : static_cast<int>(kernel_isa());
}

// KernelContext::instruction_cache key of what a float kernel derives from the constant at
// `constant` (packed panels, transformed weights): exact, not a hash. 48 address bits, the
// derived `layout` at bit 48, the instruction set in force at bit 54; bits 56 up are the caller's.
inline uint64_t kept_key(const void* constant, uint64_t layout) noexcept {
  return (reinterpret_cast<uintptr_t>(constant) & ((uint64_t{1} << 48) - 1)) | layout << 48 |
         static_cast<uint64_t>(isa_level() & 3) << 54;
}

}  // namespace kernels
}  // namespace etrt

#define ETRT_ISA_BODY static inline __attribute__((always_inline))

#if defined(__x86_64__) && defined(__GNUC__)
#define ETRT_ISA_DISPATCH(ret, name, params, args)                                                  \
  __attribute__((target("avx512f"))) static ret name##_avx512 params { return name##_body args; } \
  __attribute__((target("avx2"))) static ret name##_avx2 params { return name##_body args; }      \
  static ret name##_sse2 params { return name##_body args; }                                       \
  ret name params {                                                                                \
    switch (::etrt::kernels::isa_level()) {                                                        \
      case 2: return name##_avx512 args;                                                           \
      case 1: return name##_avx2 args;                                                             \
      default: return name##_sse2 args;                                                            \
    }                                                                                              \
  }
#else
#define ETRT_ISA_DISPATCH(ret, name, params, args) \
  ret name params { return name##_body args; }
#endif
