// Memory for a method's planned arena and the runtime's per-method bookkeeping.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "etrt/runtime/config.h"

namespace etrt {

class ETRT_EXPORT MemoryAllocator {
 public:
  virtual ~MemoryAllocator();
  // `alignment` is a power of two. Returns nullptr when out of memory. Memory stays valid
  // until reset() or the allocator's destruction.
  virtual void* allocate(size_t size, size_t alignment = 64) noexcept = 0;
  // Releases everything allocated so far.
  virtual void reset() noexcept = 0;
};

// Heap memory; frees everything on reset() and on destruction.
class ETRT_EXPORT MallocAllocator final : public MemoryAllocator {
 public:
  MallocAllocator() noexcept = default;
  MallocAllocator(const MallocAllocator&) = delete;
  MallocAllocator& operator=(const MallocAllocator&) = delete;
  ~MallocAllocator() override;

  void* allocate(size_t size, size_t alignment = 64) noexcept override;
  void reset() noexcept override;

 private:
  std::vector<void*> blocks_;
};

// Bump allocation inside caller memory (for example a static array); nothing is freed.
class ETRT_EXPORT BufferAllocator final : public MemoryAllocator {
 public:
  BufferAllocator(void* data, size_t size) noexcept
      : base_(static_cast<uint8_t*>(data)), size_(size) {}
  void* allocate(size_t size, size_t alignment = 64) noexcept override;
  void reset() noexcept override { used_ = 0; }
  size_t used() const noexcept { return used_; }

 private:
  uint8_t* base_;
  size_t size_;
  size_t used_ = 0;
};

}  // namespace etrt
