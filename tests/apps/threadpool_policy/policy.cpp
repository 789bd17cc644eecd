// The pool's waiting policy and work split, observed from outside: how many chunks a loop is cut
// into, and how much CPU the process burns while the pool sits idle after a job.
#include <sched.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
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

// Runs of many short jobs with the workers sharing one CPU with the caller: a spinning worker is
// then always late (it runs when the caller's time slice ends). Wall ms of all runs.
double crowded_runs_ms() {
  cpu_set_t one;
  CPU_ZERO(&one);
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return -1;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) {
      CPU_SET(c, &one);
      break;
    }
  }
  // The pool's threads start on first use, after this: they inherit the one CPU.
  if (sched_setaffinity(0, sizeof(one), &one) != 0) return -1;
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < 20; ++r) {
    etrt::ParallelRunScope run;
    for (int j = 0; j < 20; ++j) (void)chunks_of(1024, 1);
  }
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--crowded") {
    std::printf("crowded runs ms: %.1f\n", crowded_runs_ms());
    return 0;
  }
  std::printf("wait policy: %s\n", policy_name(etrt::threadpool::wait_policy()));
  std::printf("threads: %d\n", etrt::parallel_num_threads());
  std::printf("chunks 1024 grain 1: %lld\n", static_cast<long long>(chunks_of(1024, 1)));
  std::printf("chunks 1024 grain 300: %lld\n", static_cast<long long>(chunks_of(1024, 300)));
  // Idle CPU after a job outside any program run.
  double idle = 0;
  for (int i = 0; i < 3; ++i) idle += cpu_while_idle(50);
  std::printf("idle cpu ms per 50 ms: %.2f\n", idle / 3);
  // Inside a program run (what Method::execute marks) the pause between two jobs, then the
  // idle time after the run has ended.
  double inside = 0, after = 0;
  for (int i = 0; i < 3; ++i) {
    {
      etrt::ParallelRunScope run;
      inside += cpu_while_idle(20);
      (void)chunks_of(1024, 1);
    }
    const double before = cpu_ms();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    after += cpu_ms() - before;
  }
  std::printf("in-run cpu ms per 20 ms: %.2f\n", inside / 3);
  std::printf("after-run cpu ms per 50 ms: %.2f\n", after / 3);
  // Runs on two threads at once, overlapping and ending in either order: once both have
  // ended nothing spins.
  double concurrent = 0;
  for (int i = 0; i < 3; ++i) {
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
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    concurrent += cpu_ms() - before;
  }
  std::printf("after concurrent runs cpu ms per 50 ms: %.2f\n", concurrent / 3);
  return 0;
}
