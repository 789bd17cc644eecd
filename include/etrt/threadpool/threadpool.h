// The process-wide thread pool behind etrt::parallel_for (libetrt_threadpool.so).
//
// Loading the library attaches the pool to the runtime: parallel_for runs chunks on the pool
// from then on. Nothing else is needed; link etrt::threadpool and the runtime is parallel.
// This header only matters to code that changes the thread count or, like the XNNPACK
// delegate, hands the underlying pthreadpool to another library.
#pragma once

#include <memory>

#include "etrt/runtime/config.h"
#include "etrt/runtime/error.h"

// pthreadpool_t is `struct pthreadpool*`. Declared here so that consumers of this header need
// no pthreadpool headers; code that includes <pthreadpool.h> gets the same type.
struct pthreadpool;

namespace etrt {
namespace threadpool {

namespace detail {
struct Pool;
}  // namespace detail

class ThreadPool;

// What the pool's workers do between jobs; ETRT_POOL_WAIT=run|spin|sleep, read once.
// kRun (the default): run-scoped spinning. Inside a program run (Method::execute, marked by
// etrt::ParallelRunScope) workers spin between the run's jobs, so its operators start without a
// wake-up; when the last run in the process ends, one empty job puts them to sleep, so no core is
// held after it. Loops outside any run sleep after each job, as under kSleep.
// kSleep: a worker sleeps in the kernel as soon as its job is done, so it never holds a core
// another process needs; each job pays a wake-up (tens of us).
// kSpin: pthreadpool's own policy: workers spin for a while (about a million pauses) after every
// job before sleeping, also after a run ends.
// Libraries handed the pool (the XNNPACK delegate) follow the same policy.
enum class WaitPolicy { kSpin, kSleep, kRun };
ETRT_EXPORT WaitPolicy wait_policy() noexcept;
// For code that hands the pool jobs of its own without the yield flag (the XNNPACK delegate under
// kRun): the calling thread's run then rests the workers when it ends.
ETRT_EXPORT void note_workers_spinning() noexcept;

// The process-wide pool. Its size defaults to the CPUs this process may run on (at most 16);
// the environment variable ETRT_NUM_THREADS overrides it.
ETRT_EXPORT ThreadPool& get_threadpool();

// Keeps one pthreadpool alive while held. A pool replaced by ThreadPool::set_num_threads() is
// destroyed only when the last guard on it goes away, so a borrower (e.g. an XNNPACK runtime
// created with it) never sees it vanish.
class ETRT_EXPORT PoolGuard {
 public:
  PoolGuard() noexcept = default;

  // The pool to pass to pthreadpool/XNNPACK calls; nullptr means "run on the caller only".
  ::pthreadpool* get() const noexcept;
  // Threads of that pool, the caller included; 1 for an empty guard.
  int num_threads() const noexcept;
  explicit operator bool() const noexcept { return static_cast<bool>(pool_); }

 private:
  friend class ThreadPool;
  explicit PoolGuard(std::shared_ptr<const detail::Pool> pool) noexcept : pool_(std::move(pool)) {}
  std::shared_ptr<const detail::Pool> pool_;
};

class ETRT_EXPORT ThreadPool {
 public:
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Threads parallel_for uses, the calling thread included.
  int num_threads() const noexcept;
  // Replaces the pool with one of n threads (1 <= n <= kMaxThreads). Safe at any time: calls
  // already running (parallel_for on other threads, XNNPACK runtimes holding a guard) finish
  // on the pool they started with; later calls use the new one.
  Error set_num_threads(int n);
  // The current pool, kept alive for as long as the guard lives.
  PoolGuard borrow() const;

  static constexpr int kMaxThreads = 256;

 private:
  friend ThreadPool& get_threadpool();
  friend struct ThreadPoolAccess;
  ThreadPool();
  ~ThreadPool();
  struct Impl;
  Impl* impl_;
};

}  // namespace threadpool
}  // namespace etrt
