#include "etrt/runtime/allocator.h"

#include <cstdlib>

namespace etrt {

MemoryAllocator::~MemoryAllocator() = default;

MallocAllocator::~MallocAllocator() { reset(); }

void* MallocAllocator::allocate(size_t size, size_t alignment) noexcept {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) return nullptr;
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  if (size > SIZE_MAX - alignment) return nullptr;
  void* p = nullptr;
  if (posix_memalign(&p, alignment, size == 0 ? alignment : size) != 0) return nullptr;
  try {
    blocks_.push_back(p);
  } catch (...) {
    std::free(p);
    return nullptr;
  }
  return p;
}

void MallocAllocator::reset() noexcept {
  for (void* p : blocks_) std::free(p);
  blocks_.clear();
}

void* BufferAllocator::allocate(size_t size, size_t alignment) noexcept {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) return nullptr;
  uintptr_t base = reinterpret_cast<uintptr_t>(base_);
  uintptr_t start = (base + used_ + alignment - 1) & ~(uintptr_t{alignment} - 1);
  size_t offset = start - base;
  if (offset > size_ || size > size_ - offset) return nullptr;
  used_ = offset + size;
  return base_ + offset;
}

}  // namespace etrt
