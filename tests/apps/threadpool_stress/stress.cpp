// Changes the thread count while other threads run parallel_for and while a borrowed
// pthreadpool is in use, the way an XNNPACK runtime holds one. Every loop must still cover its
// range exactly once and a borrowed pool must stay usable after it was replaced.
#include <pthreadpool.h>

#include <atomic>
#include <cstdio>
#include <optional>
#include <thread>
#include <vector>

#include "etrt/runtime/parallel.h"
#include "etrt/threadpool/threadpool.h"

namespace {

std::atomic<int> g_failures{0};

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "FAILED: %s\n", what);
    ++g_failures;
  }
}

// A task driven through pthreadpool's own API. The hand-over to its workers is made explicit
// (as etrt's parallel_for does), so a race detector sees the counters' creation happen first.
struct Counters {
  explicit Counters(size_t n) : hits(n) {}
  std::vector<std::atomic<int>> hits;
  std::atomic<bool> published{false};
};

void add_one(void* context, size_t i) {
  auto& c = *static_cast<Counters*>(context);
  (void)c.published.load(std::memory_order_acquire);
  c.hits[i].fetch_add(1);
}

}  // namespace

int main() {
  auto& tp = etrt::threadpool::get_threadpool();
  check(tp.set_num_threads(0).code() == etrt::ErrorCode::InvalidArgument, "0 threads is rejected");
  check(tp.set_num_threads(2).ok(), "set 2 threads");
  check(etrt::parallel_num_threads() == 2, "parallel_num_threads follows set_num_threads");

  // A guard borrowed now keeps its pool alive across replacements.
  etrt::threadpool::PoolGuard held = tp.borrow();
  check(held.get() != nullptr && held.num_threads() == 2, "borrowed pool has 2 threads");

  std::atomic<bool> stop{false};
  std::thread changer([&] {
    for (int i = 0; i < 200; ++i) {
      check(tp.set_num_threads(1 + i % 4).ok(), "set_num_threads while running");
    }
    stop = true;
  });
  std::vector<std::thread> users;
  // User 0 runs loops outside any program run, 1 inside runs, 2 inside nested runs: under the
  // default policy (run) runs begin, end and rest the workers while the pool is replaced.
  for (int u = 0; u < 3; ++u) {
    users.emplace_back([&, u] {
      while (!stop) {
        std::optional<etrt::ParallelRunScope> run, inner;
        if (u >= 1) run.emplace();
        if (u == 2) inner.emplace();
        std::vector<std::atomic<int>> hits(1000);
        etrt::parallel_for(0, 1000, 7, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
          // Nested loops run inline instead of deadlocking on the busy pool.
          etrt::parallel_for(0, 4, 1, [](int64_t, int64_t) {});
        });
        for (auto& h : hits) check(h.load() == 1, "each index runs exactly once");
      }
    });
  }
  changer.join();
  for (auto& t : users) t.join();

  check(tp.set_num_threads(3).ok(), "set 3 threads");
  Counters counters(512);
  counters.published.store(true, std::memory_order_release);
  pthreadpool_parallelize_1d(held.get(), add_one, &counters, counters.hits.size(), 0);
  for (auto& h : counters.hits) check(h.load() == 1, "a replaced pool still runs while borrowed");
  check(pthreadpool_get_threads_count(held.get()) == 2, "the borrowed pool kept its size");
  check(tp.borrow().num_threads() == 3, "new borrowers get the new pool");

  std::printf("%s\n", g_failures == 0 ? "ok" : "failed");
  return g_failures == 0 ? 0 : 1;
}
