// Runs etrt::parallel_for over a range and prints how many distinct OS threads ran chunks.
// Uses only the runtime's API: whether it runs in parallel depends on nothing but whether
// libetrt_threadpool.so is linked (and so loaded).
#include <chrono>
#include <cstdio>
#include <mutex>
#include <set>
#include <thread>

#include "etrt/runtime/parallel.h"

int main() {
  std::mutex mu;
  std::set<std::thread::id> ids;
  int64_t covered = 0;
  etrt::parallel_for(0, 64, 1, [&](int64_t begin, int64_t end) {
    {
      std::lock_guard<std::mutex> lock(mu);
      ids.insert(std::this_thread::get_id());
      covered += end - begin;
    }
    // Long enough that every worker wakes and takes its own chunk before the caller could
    // steal it.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  });
  std::printf("parallel_num_threads: %d\n", etrt::parallel_num_threads());
  std::printf("covered: %lld\n", static_cast<long long>(covered));
  std::printf("distinct threads: %zu\n", ids.size());
  return covered == 64 ? 0 : 1;
}
