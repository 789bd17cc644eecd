// The pool's waiting policy and work split, observed from outside: how many chunks a loop is cut
// into, and how much CPU the process burns while the pool sits idle after a job.
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "etrt/runtime/parallel.h"
#include "etrt/threadpool/threadpool.h"

namespace {

double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

int64_t chunks_of(int64_t range, int64_t grain) {
  std::atomic<int64_t> calls{0}, covered{0};
  etrt::parallel_for(0, range, grain, [&](int64_t b, int64_t e) {
    calls.fetch_add(1);
    covered.fetch_add(e - b);
  });
  return covered.load() == range ? calls.load() : -1;
}

}  // namespace

int main() {
  const bool sleeps = etrt::threadpool::wait_policy() == etrt::threadpool::WaitPolicy::kSleep;
  std::printf("wait policy: %s\n", sleeps ? "sleep" : "spin");
  std::printf("threads: %d\n", etrt::parallel_num_threads());
  std::printf("chunks 1024 grain 1: %lld\n", static_cast<long long>(chunks_of(1024, 1)));
  std::printf("chunks 1024 grain 300: %lld\n", static_cast<long long>(chunks_of(1024, 300)));
  // Idle CPU: a short job wakes the workers, then the caller sleeps; what the process burns
  // meanwhile is the workers' waiting.
  double idle = 0;
  for (int i = 0; i < 5; ++i) {
    (void)chunks_of(1024, 1);
    const double before = cpu_ms();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    idle += cpu_ms() - before;
  }
  std::printf("idle cpu ms per 100 ms: %.2f\n", idle / 5);
  return 0;
}
