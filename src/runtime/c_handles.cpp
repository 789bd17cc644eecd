#include "c_handles.h"

#include <atomic>
#include <limits>
#include <vector>

namespace etrt {
namespace c_handles {

static_assert(sizeof(uintptr_t) == 8, "C ABI handles carry a 32-bit index and a 32-bit generation");

namespace {

constexpr uint32_t kChunkBits = 10;
constexpr uint32_t kChunkSize = 1u << kChunkBits;  // slots per chunk
constexpr uint32_t kMaxChunks = 1u << 14;          // 16M handles open at once at most

// Chunks are allocated on demand and never freed; lookups read the directory without a lock.
struct Table {
  std::atomic<Slot*> chunks[kMaxChunks] = {};
  std::mutex mu;  // guards the two below
  std::vector<uint32_t> free_indices;
  uint32_t next_index = 0;
};

Table& table() {
  static Table* t = new Table;  // never destroyed: a late call at exit still finds its slot
  return *t;
}

Slot* slot_at(Table& t, uint32_t index) noexcept {
  if ((index >> kChunkBits) >= kMaxChunks) return nullptr;
  Slot* chunk = t.chunks[index >> kChunkBits].load(std::memory_order_acquire);
  return chunk == nullptr ? nullptr : &chunk[index & (kChunkSize - 1)];
}

uintptr_t encode(uint32_t index, uint32_t generation) noexcept {
  return (static_cast<uintptr_t>(index) + 1) << 32 | generation;
}

}  // namespace

Decoded decode(uintptr_t handle) noexcept {
  auto high = static_cast<uint32_t>(handle >> 32);
  return Decoded{high - 1, static_cast<uint32_t>(handle)};
}

Slot* find(uintptr_t handle) noexcept {
  if ((handle >> 32) == 0) return nullptr;
  return slot_at(table(), decode(handle).index);
}

uintptr_t add(Kind kind, void* object, uintptr_t owner) {
  Table& t = table();
  uint32_t index = 0;
  {
    std::lock_guard<std::mutex> lock(t.mu);
    if (!t.free_indices.empty()) {
      index = t.free_indices.back();
      t.free_indices.pop_back();
    } else {
      if ((t.next_index >> kChunkBits) >= kMaxChunks) return 0;
      if ((t.next_index & (kChunkSize - 1)) == 0) {
        t.chunks[t.next_index >> kChunkBits].store(new Slot[kChunkSize], std::memory_order_release);
      }
      index = t.next_index++;
    }
  }
  Slot* slot = slot_at(t, index);
  std::lock_guard<std::mutex> lock(slot->mu);
  slot->state = State::Open;
  slot->kind = kind;
  slot->active = 0;
  slot->object = object;
  slot->owner = owner;
  return encode(index, slot->generation);
}

void release(Slot* slot, uint32_t index) noexcept {
  bool reusable = false;
  {
    std::lock_guard<std::mutex> lock(slot->mu);
    slot->state = State::Free;
    slot->object = nullptr;
    slot->owner = 0;
    if (slot->generation < std::numeric_limits<uint32_t>::max()) {
      ++slot->generation;
      reusable = true;
    }
  }
  if (!reusable) return;
  Table& t = table();
  try {
    std::lock_guard<std::mutex> lock(t.mu);
    t.free_indices.push_back(index);
  } catch (...) {  // out of memory: the slot retires instead
  }
}

}  // namespace c_handles
}  // namespace etrt
