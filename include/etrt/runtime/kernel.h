// The operator registry: libetrt.so holds the only one in a process; kernel libraries
// add to it from static initializers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "etrt/runtime/config.h"
#include "etrt/runtime/error.h"
#include "etrt/runtime/span.h"
#include "etrt/runtime/value.h"

namespace etrt {

// What a kernel may ask of the runtime while it runs.
class ETRT_EXPORT KernelContext {
 public:
  virtual ~KernelContext();
  // Scratch memory valid until the kernel returns. The runtime reuses one buffer across
  // calls, so steady-state execution allocates nothing. Returns nullptr when out of memory.
  virtual void* allocate_temp(size_t nbytes, size_t alignment = 64) = 0;
  // Marks the call failed; the method stops and returns this error.
  virtual void fail(Error error) = 0;
  virtual const Error& error() const = 0;
  bool failed() const { return !error().ok(); }
  // Memory this instruction keeps across runs of its method, for what the kernel derives from
  // read-only (constant) arguments alone, such as weights packed into its own layout. `key`
  // names the contents (layout, instruction set, the constant's address, sizes): when it and
  // nbytes are the previous call's, *reused is true and the memory holds what that call wrote;
  // otherwise *reused is false and the kernel fills it. nullptr when the runtime keeps none
  // (this default, or the method's memory budget spent): compute into allocate_temp instead.
  virtual void* instruction_cache(uint64_t key, size_t nbytes, bool* reused);
};

// A kernel receives the operator's arguments in schema order (defaults filled in), then its
// outputs. Output tensors arrive with their shape set and memory planned, except outputs the
// exporter marked as views: those have no memory and the kernel points them at its input.
using KernelFn = void (*)(KernelContext& ctx, Span<Value*> args);

struct Kernel {
  const char* name;  // ATen overload name, e.g. "aten::add.Tensor"
  KernelFn fn;
};

// Fails with AlreadyRegistered, naming the operator, if a kernel is registered for it already.
ETRT_EXPORT Error register_kernel(const Kernel& kernel) noexcept;
// All or nothing: on any conflict nothing is registered.
ETRT_EXPORT Error register_kernels(Span<const Kernel> kernels) noexcept;
ETRT_EXPORT KernelFn find_kernel(std::string_view name) noexcept;
ETRT_EXPORT size_t num_registered_kernels() noexcept;
// Name of the i-th registered kernel, in registration order; nullptr past the end.
ETRT_EXPORT const char* registered_kernel_name(size_t i) noexcept;

}  // namespace etrt
