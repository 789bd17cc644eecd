// A verified program: every index, offset and size in the file is checked before use, so a
// malformed file yields an Error, never undefined behaviour.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "etrt/runtime/allocator.h"
#include "etrt/runtime/config.h"
#include "etrt/runtime/data_loader.h"
#include "etrt/runtime/error.h"
#include "etrt/runtime/method.h"
#include "etrt/runtime/named_data_map.h"

namespace etrt {

namespace detail {
struct ProgramData;
}

class ETRT_EXPORT Program {
 public:
  // The format versions this runtime reads: 2 adds dynamic shapes, state and symbolic sizes.
  static constexpr uint32_t kMinVersion = 1;
  static constexpr uint32_t kVersion = 2;

  // Loads and verifies the whole program. The loader must outlive the Program and every
  // Method loaded from it (an mmap loader's memory backs the constants).
  static Result<Program> load(DataLoader* loader) noexcept;

  Program(Program&&) noexcept;
  Program& operator=(Program&&) noexcept;
  ~Program();

  uint32_t version() const noexcept;
  size_t num_methods() const noexcept;
  // Name of the i-th method; empty past the end.
  std::string_view method_name(size_t i) const noexcept;
  std::vector<std::string> method_names() const;

  // Builds a runnable method: the arena is taken from `allocator` (the Method owns a heap
  // allocator when it is null), and every operator, delegate and external tensor is resolved
  // now. Fails with OperatorMissing listing every operator without a registered kernel, and
  // NotFound listing every External tensor `data_map` lacks (or all of them without a map).
  // The Method keeps the program's data alive on its own; `data_map` must outlive it.
  Result<Method> load_method(std::string_view name, MemoryAllocator* allocator = nullptr,
                             const NamedDataMap* data_map = nullptr) const noexcept;

 private:
  explicit Program(std::shared_ptr<const detail::ProgramData> data) noexcept;
  std::shared_ptr<const detail::ProgramData> data_;
};

}  // namespace etrt
