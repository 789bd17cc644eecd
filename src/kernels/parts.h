// Work split into more parts than threads, each part with scratch memory of its own while it runs.
#pragma once

#include <atomic>
#include <cstdint>

#include "etrt/runtime/parallel.h"

namespace etrt {
namespace kernels {

// Parts per thread a kernel cuts its work into when each part needs scratch memory: more parts
// than threads let a thread that finishes early take a late one's share, and scratch is kept per
// running part (a slot), not per part.
constexpr int64_t kPartsPerThread = 4;

// Runs fn(part, slot) for every part < parts, on the thread pool when there are several; `slot`
// (< slots) is one no other part uses at the same time. `slots` must be at least the threads
// that may run parts at once (min(parts, parallel_num_threads())); a chunk waits for a free slot
// otherwise, never shares one.
template <typename F>
void run_parts_in_slots(int64_t parts, int64_t slots, F&& fn) {
  if (parts <= 1 || slots <= 1) {
    for (int64_t t = 0; t < parts; ++t) fn(t, int64_t{0});
    return;
  }
  constexpr int64_t kMaxSlots = 256;
  if (slots > kMaxSlots) slots = kMaxSlots;
  std::atomic<bool> busy[kMaxSlots];
  for (int64_t i = 0; i < slots; ++i) busy[i].store(false, std::memory_order_relaxed);
  parallel_for(0, parts, 1, [&](int64_t b, int64_t e) {
    int64_t slot = 0;
    for (;; slot = (slot + 1) % slots) {
      bool expected = false;
      if (busy[slot].compare_exchange_weak(expected, true, std::memory_order_acquire)) break;
    }
    for (int64_t t = b; t < e; ++t) fn(t, slot);
    busy[slot].store(false, std::memory_order_release);
  });
}

}  // namespace kernels
}  // namespace etrt
