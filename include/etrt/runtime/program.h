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

// What a method may make the runtime commit while it loads and runs: a bound an untrusted
// program cannot talk its way past.
struct LoadOptions {
  // Bytes the method may hold: its planned arena, each delegate's workspace, and the scratch
  // memory of the kernel running, together. Every planned, view and input tensor it declares
  // must also fit in it (constants are bounded by their file), which bounds the work of one
  // kernel by declared sizes. Loading fails
  // with OutOfMemory, naming the value or delegate, rather than go beyond. 0: the process
  // default, default_max_memory_bytes().
  uint64_t max_memory_bytes = 0;
};

// kDefaultMaxMemoryBytes, or ETRT_MAX_MEMORY_BYTES from the environment (a byte count with an
// optional K, M, G or T suffix, powers of 1024), read once. An unreadable value gives an Error.
constexpr uint64_t kDefaultMaxMemoryBytes = uint64_t{16} << 30;
ETRT_EXPORT Result<uint64_t> default_max_memory_bytes() noexcept;

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
  // NotFound listing every External tensor `data_map` lacks (or all of them without a map),
  // and OutOfMemory for a method beyond `options.max_memory_bytes`.
  // The Method keeps the program's data alive on its own; `data_map` must outlive it.
  Result<Method> load_method(std::string_view name, MemoryAllocator* allocator = nullptr,
                             const NamedDataMap* data_map = nullptr,
                             const LoadOptions& options = LoadOptions()) const noexcept;

 private:
  explicit Program(std::shared_ptr<const detail::ProgramData> data) noexcept;
  std::shared_ptr<const detail::ProgramData> data_;
};

}  // namespace etrt
