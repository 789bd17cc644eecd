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

const char* policy_name(etrt::threadpool::WaitPolicy p) {
  switch (p) {
    case etrt::threadpool::WaitPolicy::kSpin:
      return "spin";
    case etrt::threadpool::WaitPolicy::kSleep:
      return "sleep";
    case etrt::threadpool::WaitPolicy::kRun:
      return "run";
  }
  return "?";
}

// CPU the process burns while its caller sleeps `ms` right after a job: the workers' waiting.
double cpu_while_idle(int ms) {
  (void)chunks_of(1024, 1);
  const double before = cpu_ms();
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  return cpu_ms() - before;
}

}  // namespace

int main() {
  std::printf("wait policy: %s\n", policy_name(etrt::threadpool::wait_policy()));
  std::printf("threads: %d\n", etrt::parallel_num_threads());
  std::printf("chunks 1024 grain 1: %lld\n", static_cast<long long>(chunks_of(1024, 1)));
  std::printf("chunks 1024 grain 300: %lld\n", static_cast<long long>(chunks_of(1024, 300)));
  // Idle CPU after a job outside any program run.
  double idle = 0;
  for (int i = 0; i < 5; ++i) idle += cpu_while_idle(100);
  std::printf("idle cpu ms per 100 ms: %.2f\n", idle / 5);
  // Inside a program run (what Method::execute marks) the pause between two jobs, then the
  // idle time after the run has ended.
  double inside = 0, after = 0;
  for (int i = 0; i < 5; ++i) {
    {
      etrt::ParallelRunScope run;
      inside += cpu_while_idle(20);
      (void)chunks_of(1024, 1);
    }
    const double before = cpu_ms();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    after += cpu_ms() - before;
  }
  std::printf("in-run cpu ms per 20 ms: %.2f\n", inside / 5);
  std::printf("after-run cpu ms per 100 ms: %.2f\n", after / 5);
  // Runs on two threads at once, overlapping and ending in either order: once both have
  // ended nothing spins.
  double concurrent = 0;
  for (int i = 0; i < 5; ++i) {
    std::thread other([] {
      etrt::ParallelRunScope run;
      for (int j = 0; j < 50; ++j) (void)chunks_of(1024, 1);
    });
    {
      etrt::ParallelRunScope run;
      for (int j = 0; j < 50; ++j) (void)chunks_of(1024, 1);
    }
    other.join();
    const double before = cpu_ms();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    concurrent += cpu_ms() - before;
  }
  std::printf("after concurrent runs cpu ms per 100 ms: %.2f\n", concurrent / 5);
  return 0;
}
