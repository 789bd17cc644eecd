#include "etrt/runtime/cpu_isa.h"

#include <cstdlib>
#include <mutex>
#include <string>

#include "program_data.h"

namespace etrt {

namespace detail {
std::atomic<int32_t> g_kernel_isa{-1};
}  // namespace detail

namespace {

constexpr const char* kAllowed = "sse2, avx2 or avx512";

bool parse(std::string_view name, CpuIsa* out) {
  for (CpuIsa isa : {CpuIsa::Sse2, CpuIsa::Avx2, CpuIsa::Avx512}) {
    if (name == to_string(isa)) {
      *out = isa;
      return true;
    }
  }
  return false;
}

CpuIsa detect() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return CpuIsa::Avx512;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return CpuIsa::Avx2;
#endif
  return CpuIsa::Sse2;
}

// The cap and ETRT_MAX_ISA's error, under one lock; g_kernel_isa follows every change.
struct CapState {
  std::mutex mu;
  bool initialised = false;
  CpuIsa cap = CpuIsa::Avx512;
  std::string env_error;  // non-empty while ETRT_MAX_ISA is invalid and no set_max_isa overrode it
};

CapState& state() {
  static CapState s;
  return s;
}

CpuIsa lower(CpuIsa a, CpuIsa b) { return static_cast<int32_t>(a) < static_cast<int32_t>(b) ? a : b; }

// Reads ETRT_MAX_ISA on first use; call with the lock held.
void init_locked(CapState& s) {
  if (s.initialised) return;
  s.initialised = true;
  const char* env = std::getenv("ETRT_MAX_ISA");
  if (env != nullptr && *env != '\0' && !parse(env, &s.cap)) {
    s.env_error = "ETRT_MAX_ISA='" + detail::printable(env) + "' is not an instruction set: expected " + kAllowed;
  }
  detail::g_kernel_isa.store(static_cast<int32_t>(lower(cpu_isa(), s.cap)), std::memory_order_relaxed);
}

}  // namespace

const char* to_string(CpuIsa isa) noexcept {
  switch (isa) {
    case CpuIsa::Sse2: return "sse2";
    case CpuIsa::Avx2: return "avx2";
    case CpuIsa::Avx512: return "avx512";
  }
  return "unknown";
}

CpuIsa cpu_isa() noexcept {
  static const CpuIsa detected = detect();
  return detected;
}

Result<CpuIsa> max_isa() noexcept {
  CapState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  init_locked(s);
  if (!s.env_error.empty()) return Error(ErrorCode::InvalidArgument, s.env_error);
  return s.cap;
}

CpuIsa kernel_isa() noexcept {
  const int32_t level = detail::g_kernel_isa.load(std::memory_order_relaxed);
  if (level >= 0) return static_cast<CpuIsa>(level);
  CapState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  init_locked(s);
  return static_cast<CpuIsa>(detail::g_kernel_isa.load(std::memory_order_relaxed));
}

Error set_max_isa(std::string_view name) noexcept {
  CpuIsa cap;
  if (!parse(name, &cap)) {
    return Error(ErrorCode::InvalidArgument,
                 "'" + detail::printable(name) + "' is not an instruction set: expected " + kAllowed);
  }
  CapState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.initialised = true;  // an explicit cap replaces the environment's, valid or not
  s.cap = cap;
  s.env_error.clear();
  detail::g_kernel_isa.store(static_cast<int32_t>(lower(cpu_isa(), cap)), std::memory_order_relaxed);
  return Error();
}

}  // namespace etrt
