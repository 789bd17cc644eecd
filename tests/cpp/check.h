// A tiny test harness for the standalone C++ unit tests: CHECK macros that record failures
// and keep going, a KernelContext for calling kernels directly, and a registry call helper.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "etrt/runtime/cpu_isa.h"
#include "etrt/runtime/error.h"
#include "etrt/runtime/kernel.h"
#include "etrt/runtime/parallel.h"
#include "etrt/runtime/span.h"
#include "etrt/runtime/value.h"

namespace check {

inline int& failures() {
  static int n = 0;
  return n;
}

inline int& checks() {
  static int n = 0;
  return n;
}

inline bool record(bool ok, const char* file, int line, const std::string& what) {
  ++checks();
  if (!ok) {
    ++failures();
    std::fprintf(stderr, "%s:%d: FAILED: %s\n", file, line, what.c_str());
  }
  return ok;
}

// Prints a summary; use as `return check::finish();` from main. A program that checked
// nothing fails too: its tests did not run.
inline int finish() {
  // The level the kernels ended on: a run under ETRT_MAX_ISA shows it really was capped.
  std::printf("%d checks, %d failures (kernels: %s)\n", checks(), failures(), etrt::to_string(etrt::kernel_isa()));
  return failures() == 0 && checks() > 0 ? 0 : 1;
}

// KernelContext with heap scratch memory (freed at reset) and a recorded failure.
class TestContext : public etrt::KernelContext {
 public:
  void* allocate_temp(size_t nbytes, size_t alignment = 64) override {
    if (fail_alloc_) return nullptr;
    size_t a = alignment < sizeof(void*) ? sizeof(void*) : alignment;
    void* p = nullptr;
    if (posix_memalign(&p, a, nbytes == 0 ? 1 : nbytes) != 0) return nullptr;
    blocks_.emplace_back(p, &std::free);
    return p;
  }
  void fail(etrt::Error error) override {
    if (error_.ok()) error_ = std::move(error);
  }
  const etrt::Error& error() const override { return error_; }
  void reset() {
    error_ = etrt::Error();
    blocks_.clear();
  }
  // Makes allocate_temp return nullptr, to test out-of-memory paths.
  void set_fail_alloc(bool on) { fail_alloc_ = on; }

 private:
  etrt::Error error_;
  std::vector<std::unique_ptr<void, void (*)(void*)>> blocks_;
  bool fail_alloc_ = false;
};

// The runtime's instruction cache for one instruction: one block, kept while key and size
// match (src/runtime/method.cpp), counting what the kernel asked.
class CachingContext : public TestContext {
 public:
  void* instruction_cache(uint64_t key, size_t nbytes, bool* reused) override {
    ++asked;
    *reused = !block_.empty() && key == key_ && nbytes == nbytes_;
    if (!*reused) {
      block_.assign((nbytes + 63) / 64 + 1, {});
      key_ = key;
      nbytes_ = nbytes;
    }
    reuses += *reused ? 1 : 0;
    return block_.data();
  }
  int asked = 0, reuses = 0;

 private:
  struct alignas(64) Line {
    unsigned char bytes[64];
  };
  std::vector<Line> block_;
  uint64_t key_ = 0;
  size_t nbytes_ = 0;
};

// What a kernel keeps in the instruction's cache gives the bits of packing per call: `run(ctx,
// out)` into `got` twice through one CachingContext at each instruction set `force` (e.g.
// sgemm_force_isa) accepts, AVX-512 again last, equals `want` from a context that keeps nothing;
// the first call at a level packs (the previous level's panels do not fit it), the second reuses.
template <typename Out, typename Run>
void kept_equals_per_call(const std::string& label, bool (*force)(const char*), Out& want, Out& got, Run run) {
  CachingContext kept;
  int levels = 0;
  for (const char* name : {"avx512", "avx2", "sse2", "avx512"}) {
    if (!force(name)) continue;
    const std::string what = label + " [" + name + "]";
    TestContext per_call;
    run(per_call, want);
    for (int call = 0; call < 2; ++call) {
      const int reuses = kept.reuses;
      std::fill(got.data.begin(), got.data.end(), 0.0f);
      run(kept, got);
      record(got.data == want.data, __FILE__, __LINE__, what + " call " + std::to_string(call));
      record(kept.reuses == reuses + call, __FILE__, __LINE__, what + " reuses " + std::to_string(kept.reuses));
    }
    ++levels;
  }
  record(kept.asked == 2 * levels && levels > 0, __FILE__, __LINE__, label + ": asked the cache twice a level");
}

// Calls the registered kernel `name` with `args`; returns the error it reported (Ok if none),
// or NotFound when no kernel is registered under that name.
inline etrt::Error call(TestContext& ctx, const char* name, std::vector<etrt::Value*> args) {
  etrt::KernelFn fn = etrt::find_kernel(name);
  if (fn == nullptr) return etrt::Error(etrt::ErrorCode::NotFound, std::string("no kernel ") + name);
  ctx.reset();
  fn(ctx, etrt::Span<etrt::Value*>(args.data(), args.size()));
  return ctx.error();
}

// Tests that force each instruction set in turn put back the cap they started under (the
// ETRT_MAX_ISA the program was run with) for the tests after them.
class KeepIsaCap {
 public:
  KeepIsaCap() {
    etrt::Result<etrt::CpuIsa> cap = etrt::max_isa();
    saved_ = cap.ok() ? cap.get() : etrt::CpuIsa::Avx512;
  }
  ~KeepIsaCap() { (void)etrt::set_max_isa(etrt::to_string(saved_)); }
  KeepIsaCap(const KeepIsaCap&) = delete;
  KeepIsaCap& operator=(const KeepIsaCap&) = delete;

 private:
  etrt::CpuIsa saved_;
};

// A stand-in thread pool: parallel_num_threads() says N, and each loop's chunks (grain-sized)
// run one by one on the calling thread, last first, so the kernels' splits and per-part scratch
// are exercised without threads. chunks_run() and loops_run() count what it was handed.
inline int64_t& chunks_run() {
  static int64_t n = 0;
  return n;
}
inline int64_t& loops_run() {
  static int64_t n = 0;
  return n;
}
inline void reverse_chunks(int64_t begin, int64_t end, int64_t grain, etrt::RangeFn fn) {
  if (grain < 1) grain = 1;
  std::vector<std::pair<int64_t, int64_t>> chunks;
  for (int64_t b = begin; b < end; b += grain) chunks.emplace_back(b, std::min(end, b + grain));
  chunks_run() += static_cast<int64_t>(chunks.size());
  ++loops_run();
  for (auto it = chunks.rbegin(); it != chunks.rend(); ++it) fn(it->first, it->second);
}
template <int N>
int threads() {
  return N;
}
template <int N>
const etrt::ParallelBackend* pool() {
  static const etrt::ParallelBackend backend{reverse_chunks, threads<N>, nullptr};
  return &backend;
}

}  // namespace check

#define CHECK(cond) ::check::record(static_cast<bool>(cond), __FILE__, __LINE__, #cond)

#define CHECK_EQ(a, b) \
  ::check::record((a) == (b), __FILE__, __LINE__, std::string(#a " == " #b))

#define CHECK_NEAR(a, b, tol)                                                                  \
  do {                                                                                         \
    double check_a_ = static_cast<double>(a), check_b_ = static_cast<double>(b);               \
    bool check_ok_ = std::fabs(check_a_ - check_b_) <= (tol) ||                                \
                     (std::isnan(check_a_) && std::isnan(check_b_)) || check_a_ == check_b_;   \
    ::check::record(check_ok_, __FILE__, __LINE__,                                             \
                    std::string(#a " ~= " #b ": ") + std::to_string(check_a_) + " vs " +      \
                        std::to_string(check_b_));                                             \
  } while (0)

// The call succeeded (prints the error otherwise).
#define CHECK_OK(expr)                                                                         \
  do {                                                                                         \
    ::etrt::Error check_e_ = (expr);                                                           \
    ::check::record(check_e_.ok(), __FILE__, __LINE__,                                         \
                    std::string(#expr " -> ") + check_e_.to_string());                        \
  } while (0)

// The call failed with `code`.
#define CHECK_FAILS(expr, expected_code)                                                       \
  do {                                                                                         \
    ::etrt::Error check_e_ = (expr);                                                           \
    ::check::record(check_e_.code() == (expected_code), __FILE__, __LINE__,                    \
                    std::string(#expr " should fail with " #expected_code ", got ") +         \
                        (check_e_.ok() ? std::string("Ok") : check_e_.to_string()));          \
  } while (0)
