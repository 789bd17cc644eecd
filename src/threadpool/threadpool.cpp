// etrt's thread pool: pthreadpool behind etrt::parallel_for, attached when this library loads.
#include "etrt/threadpool/threadpool.h"

#include <pthreadpool.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
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

// Contention. A spinning worker uses up its time slices, so on a machine with more runnable
// threads than cores the scheduler has often put it aside when the next job comes: the caller
// then waits a time slice (milliseconds) for it, where a sleeping worker woken by a futex runs
// promptly. Under kRun a run whose caller waited that long for a worker sends the rest of its
// jobs with the yield flag, and so do the next runs, a number that doubles while it keeps
// happening and resets after a run without it.
constexpr int64_t kLateNs = 200 * 1000;
constexpr uint64_t kMinBackoffRuns = 4;
constexpr uint64_t kMaxBackoffRuns = 1024;
std::atomic<uint64_t> g_runs_ended{0};
std::atomic<uint64_t> g_sleep_until{0};  // in runs ended: spinning is tried again from there
std::atomic<uint64_t> g_backoff_runs{kMinBackoffRuns};
thread_local bool t_workers_spin = false;  // this thread's last job left the workers spinning
thread_local bool t_run_watched = false;   // this run timed a job handed to spinning workers
thread_local bool t_run_late = false;      // ... and a worker was late for it
thread_local int64_t t_busy_ns = 0;        // time this thread spent in chunks of timed jobs

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
  if (t_run_depth == 0 || t_run_late) return PTHREADPOOL_FLAG_YIELD_WORKERS;
  if (g_runs_ended.load(std::memory_order_relaxed) < g_sleep_until.load(std::memory_order_relaxed)) {
    return PTHREADPOOL_FLAG_YIELD_WORKERS;
  }
  if (!g_spinning.load(std::memory_order_relaxed)) g_spinning.store(true, std::memory_order_relaxed);
  return 0;
}

void note_late_worker() {
  t_run_late = true;
  const uint64_t backoff = g_backoff_runs.load(std::memory_order_relaxed);
  g_sleep_until.store(g_runs_ended.load(std::memory_order_relaxed) + backoff, std::memory_order_relaxed);
  g_backoff_runs.store(std::min(backoff * 2, kMaxBackoffRuns), std::memory_order_relaxed);
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
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
  Job(int64_t b, int64_t e, RangeFn f, bool t) : begin(b), end(e), fn(f), timed(t) {}
  const int64_t begin;
  const int64_t end;
  const RangeFn fn;
  const bool timed;  // chunks add their time to their thread's t_busy_ns
  std::atomic<bool> published{false};
  std::atomic<size_t> finished{0};
};

void run_tile(void* context, size_t start, size_t count) {
  Job& job = *static_cast<Job*>(context);
  (void)job.published.load(std::memory_order_acquire);
  const bool outer = t_in_task;
  t_in_task = true;
  const int64_t b = job.begin + static_cast<int64_t>(start);
  const int64_t t0 = job.timed ? now_ns() : 0;
  job.fn(b, std::min(job.end, b + static_cast<int64_t>(count)));
  if (job.timed) t_busy_ns += now_ns() - t0;
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
  const uint32_t flags = job_flags();
  // Under kRun, a job handed to workers that were spinning is timed: how long the caller waited
  // beyond its own chunks tells whether a worker was late (see note_late_worker). With runs on
  // several threads the wait also holds the other runs' jobs (pthreadpool runs one at a time),
  // which can send them all to sleeping after each job: the old default, never the spin's
  // collapse on a loaded machine.
  const bool timed = wait_policy() == WaitPolicy::kRun && t_workers_spin;
  Job job(begin, end, fn, timed);
  const int64_t busy0 = t_busy_ns;
  const int64_t t0 = timed ? now_ns() : 0;
  job.published.store(true, std::memory_order_release);
  pthreadpool_parallelize_1d_tile_1d(guard.get(), run_tile, &job, static_cast<size_t>(range),
                                     static_cast<size_t>(tile), flags);
  (void)job.finished.load(std::memory_order_acquire);
  if (timed) {
    t_run_watched = true;
    const int64_t busy = t_busy_ns - busy0;
    const int64_t waited = now_ns() - t0 - busy;
    if (waited > kLateNs && waited > busy) note_late_worker();
  }
  t_workers_spin = flags == 0;
}

void pool_begin_run() {
  if (t_run_depth++ > 0) return;
  g_open_runs.fetch_add(1, std::memory_order_acq_rel);
  t_workers_spin = t_run_watched = t_run_late = false;
}

void pool_end_run() {
  if (--t_run_depth > 0) return;
  if (t_run_watched && !t_run_late) g_backoff_runs.store(kMinBackoffRuns, std::memory_order_relaxed);
  g_runs_ended.fetch_add(1, std::memory_order_relaxed);
  t_workers_spin = false;
  // Every spinning job of a run was handed over before its end; the run that closes last (in the
  // counter's order) sends the yield job after all of them.
  if (g_open_runs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (!g_spinning.exchange(false, std::memory_order_acq_rel)) return;
  rest_workers(ThreadPoolAccess::existing(get_threadpool()));
}

int pool_num_threads() { return get_threadpool().num_threads(); }

Error pool_set_num_threads(int n) { return get_threadpool().set_num_threads(n); }

const ParallelBackend kBackend{pool_parallel_for, pool_num_threads, pool_set_num_threads};
const ParallelRunHooks kRunHooks{pool_begin_run, pool_end_run};

// Attaches at load, detaches (and joins the workers) at unload or exit.
struct Attach {
  Attach() {
    set_parallel_run_hooks(&kRunHooks);
    set_parallel_backend(&kBackend);
  }
  ~Attach() {
    set_parallel_backend(nullptr);
    set_parallel_run_hooks(nullptr);
    ThreadPoolAccess::shut_down(get_threadpool());
  }
};
const Attach g_attach;

}  // namespace

}  // namespace threadpool
}  // namespace etrt
