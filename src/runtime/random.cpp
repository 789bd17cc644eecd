#include "etrt/runtime/random.h"

#include <atomic>

namespace etrt {
namespace {

// seed and next counter change together under set_random_seed; draws only advance the counter.
std::atomic<uint64_t> g_seed{0};
std::atomic<uint64_t> g_counter{0};

}  // namespace

void set_random_seed(uint64_t seed) noexcept {
  g_seed.store(seed, std::memory_order_relaxed);
  g_counter.store(0, std::memory_order_release);
}

uint64_t random_seed() noexcept { return g_seed.load(std::memory_order_relaxed); }

uint64_t reserve_random(uint64_t count) noexcept { return g_counter.fetch_add(count, std::memory_order_acq_rel); }

}  // namespace etrt
