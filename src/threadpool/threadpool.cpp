// etrt's thread pool: pthreadpool behind etrt::parallel_for, attached when this library loads.
#include "etrt/threadpool/threadpool.h"

#include <pthreadpool.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "etrt/runtime/log.h"
#include "etrt/runtime/parallel.h"

namespace etrt {
namespace threadpool {

namespace detail {

// One pthreadpool; destroyed (its workers joined) when the last shared_ptr/guard lets go.
struct Pool {
  explicit Pool(int n) : handle(pthreadpool_create(static_cast<size_t>(n))), threads(handle ? n : 1) {}
  ~Pool() {
    if (handle != nullptr) pthreadpool_destroy(handle);
  }
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  pthreadpool_t handle;
  int threads;
};

}  // namespace detail

namespace {

constexpr int kDefaultCap = 16;  // more threads rarely pay off for inference-sized work
// Chunks a loop is cut into per thread (each still at least `grain` long): pthreadpool lets a
// thread that runs out take chunks another has not started, so a worker that starts late
// (woken slowly, or preempted on a loaded machine) holds up one small chunk, not half the loop.
constexpr int64_t kChunksPerThread = 4;

WaitPolicy read_wait_policy() {
  const char* env = std::getenv("ETRT_POOL_WAIT");
  if (env == nullptr || *env == '\0') return WaitPolicy::kRun;
  const std::string v(env);
  if (v == "run") return WaitPolicy::kRun;
  if (v == "spin") return WaitPolicy::kSpin;
  if (v == "sleep") return WaitPolicy::kSleep;
  ETRT_LOG(Warning, "ignoring ETRT_POOL_WAIT='%s': expected 'run', 'spin' or 'sleep'", env);
  return WaitPolicy::kRun;
}

// A chunk body that calls parallel_for again runs that inner loop inline: the pool is busy
// with the outer loop, and pthreadpool calls on a pool from its own tasks would deadlock.
thread_local bool t_in_task = false;

// Program runs (ParallelRunScope) open on this thread, and in the whole process.
thread_local int t_run_depth = 0;
std::atomic<int> g_open_runs{0};
// Set when a job left the workers spinning inside a run; the last run to end clears it.
std::atomic<bool> g_spinning{false};

uint32_t job_flags() {
  switch (wait_policy()) {
    case WaitPolicy::kSpin:
      return 0;
    case WaitPolicy::kSleep:
      return PTHREADPOOL_FLAG_YIELD_WORKERS;
    case WaitPolicy::kRun:
      break;
  }
  // Only a thread inside a run leaves the workers spinning: that run's end puts them to sleep.
  if (t_run_depth == 0) return PTHREADPOOL_FLAG_YIELD_WORKERS;
  if (!g_spinning.load(std::memory_order_relaxed)) g_spinning.store(true, std::memory_order_relaxed);
  return 0;
}

int available_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

int default_num_threads() {
  const char* env = std::getenv("ETRT_NUM_THREADS");
  if (env != nullptr && *env != '\0') {
    char* end = nullptr;
    errno = 0;
    long n = std::strtol(env, &end, 10);
    if (errno == 0 && *end == '\0' && n >= 1 && n <= ThreadPool::kMaxThreads) return static_cast<int>(n);
    ETRT_LOG(Warning, "ignoring ETRT_NUM_THREADS='%s': expected an integer in [1, %d]", env,
             ThreadPool::kMaxThreads);
  }
  return std::min(available_cpus(), kDefaultCap);
}

std::shared_ptr<const detail::Pool> make_pool(int n) {
  auto pool = std::make_shared<const detail::Pool>(n);
  if (pool->handle == nullptr) {
    ETRT_LOG(Warning, "could not create a pool of %d threads; running serially", n);
  }
  return pool;
}

void no_op(void*, size_t) {}

// An empty job with the yield flag: workers spinning after the last job take it at once and then
// sleep in the kernel. Its range covers every thread, so none is skipped.
void rest_workers(const std::shared_ptr<const detail::Pool>& pool) {
  if (t_in_task) return;  // a task cannot hand its own pool a job
  if (!pool || pool->handle == nullptr || pool->threads <= 1) return;
  pthreadpool_parallelize_1d(pool->handle, no_op, nullptr, static_cast<size_t>(pool->threads),
                             PTHREADPOOL_FLAG_YIELD_WORKERS);
}

}  // namespace

struct ThreadPool::Impl {
  mutable std::mutex mu;
  // Created on first use, so loading the library starts no threads.
  mutable std::shared_ptr<const detail::Pool> current;
  int threads = 1;
  bool shut_down = false;
};

// Lets the unload hook below reach the private Impl.
struct ThreadPoolAccess {
  // The current pool, or an empty guard: never starts one.
  static std::shared_ptr<const detail::Pool> existing(const ThreadPool& tp) {
    std::lock_guard<std::mutex> lock(tp.impl_->mu);
    return tp.impl_->current;
  }
  static void shut_down(ThreadPool& tp) {
    std::shared_ptr<const detail::Pool> old;
    {
      std::lock_guard<std::mutex> lock(tp.impl_->mu);
      tp.impl_->shut_down = true;
      tp.impl_->threads = 1;
      old = std::move(tp.impl_->current);
    }
    // `old` is released here, outside the lock: joining workers can take a moment.
  }
};

::pthreadpool* PoolGuard::get() const noexcept { return pool_ ? pool_->handle : nullptr; }

int PoolGuard::num_threads() const noexcept { return pool_ ? pool_->threads : 1; }

ThreadPool::ThreadPool() : impl_(new Impl) { impl_->threads = default_num_threads(); }

ThreadPool::~ThreadPool() { delete impl_; }

int ThreadPool::num_threads() const noexcept {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->threads;
}

Error ThreadPool::set_num_threads(int n) {
  if (n < 1 || n > kMaxThreads) {
    return Error(ErrorCode::InvalidArgument,
                 "thread count " + std::to_string(n) + " is outside [1, " + std::to_string(kMaxThreads) + "]");
  }
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (impl_->shut_down) return Error(ErrorCode::InvalidState, "the thread pool library is being unloaded");
    if (impl_->threads == n && (!impl_->current || impl_->current->threads == n)) return Error();
  }
  // Start the new workers outside the lock; running calls keep using the pool they hold.
  std::shared_ptr<const detail::Pool> fresh = make_pool(n);
  if (fresh->handle == nullptr) {
    return Error(ErrorCode::OutOfMemory, "could not start a pool of " + std::to_string(n) + " threads");
  }
  std::shared_ptr<const detail::Pool> old;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (impl_->shut_down) return Error(ErrorCode::InvalidState, "the thread pool library is being unloaded");
    old = std::move(impl_->current);
    impl_->current = std::move(fresh);
    impl_->threads = n;
  }
  // A run in flight may have left the old pool's workers spinning; a borrower can keep it alive.
  if (old && g_spinning.load(std::memory_order_acquire)) rest_workers(old);
  return Error();  // `old` goes when its last guard does
}

PoolGuard ThreadPool::borrow() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (!impl_->current && !impl_->shut_down) impl_->current = make_pool(impl_->threads);
  return PoolGuard(impl_->current);
}

void note_workers_spinning() noexcept {
  if (wait_policy() == WaitPolicy::kRun && t_run_depth > 0) g_spinning.store(true, std::memory_order_relaxed);
}

WaitPolicy wait_policy() noexcept {
  static const WaitPolicy policy = read_wait_policy();
  return policy;
}

ThreadPool& get_threadpool() {
  // Never deleted: callers may reach it from other libraries' static destructors. Its
  // workers are released by the unload hook below.
  static ThreadPool* pool = new ThreadPool();
  return *pool;
}

namespace {

// The caller's writes before the loop must happen before every chunk, and every chunk's writes
// before the caller goes on. pthreadpool orders them, but through its own atomics and futexes;
// these two make the hand-over explicit in etrt's code, where a race detector sees it too.
struct Job {
  Job(int64_t b, int64_t e, RangeFn f) : begin(b), end(e), fn(f) {}
  const int64_t begin;
  const int64_t end;
  const RangeFn fn;
  std::atomic<bool> published{false};
  std::atomic<size_t> finished{0};
};

void run_tile(void* context, size_t start, size_t count) {
  Job& job = *static_cast<Job*>(context);
  (void)job.published.load(std::memory_order_acquire);
  const bool outer = t_in_task;
  t_in_task = true;
  const int64_t b = job.begin + static_cast<int64_t>(start);
  job.fn(b, std::min(job.end, b + static_cast<int64_t>(count)));
  t_in_task = outer;
  job.finished.fetch_add(1, std::memory_order_release);
}

void pool_parallel_for(int64_t begin, int64_t end, int64_t grain, RangeFn fn) {
  const int64_t range = end - begin;
  if (t_in_task || range <= grain) {
    fn(begin, end);
    return;
  }
  PoolGuard guard = get_threadpool().borrow();
  const int64_t threads = guard.num_threads();
  const int64_t chunks = threads * kChunksPerThread;
  const int64_t tile = std::max(grain, (range + chunks - 1) / chunks);
  if (guard.get() == nullptr || threads <= 1 || tile >= range) {
    fn(begin, end);
    return;
  }
  Job job(begin, end, fn);
  job.published.store(true, std::memory_order_release);
  pthreadpool_parallelize_1d_tile_1d(guard.get(), run_tile, &job, static_cast<size_t>(range),
                                     static_cast<size_t>(tile), job_flags());
  (void)job.finished.load(std::memory_order_acquire);
}

void pool_begin_run() {
  if (t_run_depth++ == 0) g_open_runs.fetch_add(1, std::memory_order_acq_rel);
}

void pool_end_run() {
  if (--t_run_depth > 0) return;
  // Every spinning job of a run was handed over before its end; the run that closes last (in the
  // counter's order) sends the yield job after all of them.
  if (g_open_runs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (!g_spinning.exchange(false, std::memory_order_acq_rel)) return;
  rest_workers(ThreadPoolAccess::existing(get_threadpool()));
}

int pool_num_threads() { return get_threadpool().num_threads(); }

Error pool_set_num_threads(int n) { return get_threadpool().set_num_threads(n); }

const ParallelBackend kBackend{pool_parallel_for, pool_num_threads, pool_set_num_threads, pool_begin_run,
                               pool_end_run};

// Attaches at load, detaches (and joins the workers) at unload or exit.
struct Attach {
  Attach() { set_parallel_backend(&kBackend); }
  ~Attach() {
    set_parallel_backend(nullptr);
    ThreadPoolAccess::shut_down(get_threadpool());
  }
};
const Attach g_attach;

}  // namespace

}  // namespace threadpool
}  // namespace etrt
