// parallel_for is always this one out-of-line function: serial until a thread pool library
// attaches itself at load time, parallel after. No macro selects an inline fallback, so two
// translation units can never disagree about it.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "etrt/runtime/config.h"
#include "etrt/runtime/error.h"

namespace etrt {

// A non-owning callable reference for [begin, end) chunks.
class RangeFn {
 public:
  template <typename F, typename = std::enable_if_t<!std::is_same<std::decay_t<F>, RangeFn>::value>>
  RangeFn(F&& f) noexcept  // NOLINT
      : obj_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, int64_t b, int64_t e) { (*static_cast<std::remove_reference_t<F>*>(o))(b, e); }) {}
  void operator()(int64_t begin, int64_t end) const { call_(obj_, begin, end); }

 private:
  void* obj_;
  void (*call_)(void*, int64_t, int64_t);
};

// Splits [begin, end) into chunks of at least `grain` and calls fn on each, possibly
// concurrently. Returns after every chunk is done.
ETRT_EXPORT void parallel_for(int64_t begin, int64_t end, int64_t grain, RangeFn fn);
// Threads parallel_for may use; 1 while no thread pool is attached.
ETRT_EXPORT int parallel_num_threads() noexcept;
// Asks the attached thread pool for n threads. Without one only n == 1 is accepted (it is what
// parallel_for already does); anything else is InvalidState, naming etrt::threadpool.
ETRT_EXPORT Error set_parallel_num_threads(int n);

// What a thread pool library installs.
struct ParallelBackend {
  void (*parallel_for)(int64_t begin, int64_t end, int64_t grain, RangeFn fn);
  int (*num_threads)();
  Error (*set_num_threads)(int n);  // may be null: the count is then fixed
};
// Passing nullptr detaches (back to serial).
ETRT_EXPORT void set_parallel_backend(const ParallelBackend* backend) noexcept;

// What a thread pool library may install beside its backend: calls that bracket a program run
// on the calling thread (either may be null), so that under a run-scoped waiting policy its
// workers spin between the run's loops and sleep once no run is left. A struct of its own, not
// more members of ParallelBackend: a pool built against the three-member struct keeps working.
struct ParallelRunHooks {
  void (*begin_run)();
  void (*end_run)();
};
// Passing nullptr detaches them.
ETRT_EXPORT void set_parallel_run_hooks(const ParallelRunHooks* hooks) noexcept;

// Marks the calling thread as running a program (Method::execute) for the scope's lifetime, so
// the pool can keep its workers ready between the run's parallel loops. Nests; no-op without a
// pool.
class ETRT_EXPORT ParallelRunScope {
 public:
  ParallelRunScope() noexcept;
  ~ParallelRunScope();
  ParallelRunScope(const ParallelRunScope&) = delete;
  ParallelRunScope& operator=(const ParallelRunScope&) = delete;

 private:
  const ParallelRunHooks* hooks_;  // the ones begin_run went to: end_run goes to them too
};

}  // namespace etrt
