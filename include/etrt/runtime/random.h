// The process's stream of random numbers, for kernels that draw them (aten::rand, randn,
// randperm, ...). Counter-based: a kernel reserves a block of counters and derives each value
// from (seed, counter), so values do not depend on how a kernel splits its work across threads.
// The same seed gives the same sequence of draws; torch's generator gives other values.
#pragma once

#include <cstdint>

#include "etrt/runtime/config.h"

namespace etrt {

// Restarts the stream from `seed` (not while a method runs). Each process starts from seed 0.
ETRT_EXPORT void set_random_seed(uint64_t seed) noexcept;
ETRT_EXPORT uint64_t random_seed() noexcept;

// Reserves `count` counters of the stream and returns the first; safe from any thread.
ETRT_EXPORT uint64_t reserve_random(uint64_t count) noexcept;

// 64 random bits for counter `counter` of the stream seeded with `seed` (SplitMix64's mixer).
inline uint64_t random_bits(uint64_t seed, uint64_t counter) noexcept {
  uint64_t z = seed + (counter + 1) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace etrt
