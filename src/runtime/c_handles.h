// Handles of the C ABI (c_api.h): a handle names a slot of a table whose memory is never freed,
// together with the slot's generation. Freeing bumps the generation, so the freed handle (and
// every copy of it a caller still holds) never names anything again: a late call reads a slot
// that still exists, sees a generation that is not its own and fails, whatever has happened to
// the object since. Internal to libetrt.so.
#ifndef ETRT_SRC_RUNTIME_C_HANDLES_H_
#define ETRT_SRC_RUNTIME_C_HANDLES_H_

#include <pthread.h>

#include <cstddef>
#include <cstdint>
#include <mutex>

namespace etrt {
namespace c_handles {

enum class Kind : uint8_t { Module, Method };

enum class State : uint8_t {
  Free,     // no handle names the slot
  Open,     // the handle with `generation` names `object`
  Closing,  // that handle is being freed: calls are refused, running ones drain
};

// A condition variable on glibc's own: std::condition_variable::wait binds GLIBCXX_3.4.30 (GCC
// 12's libstdc++), which alone would raise the wheel's manylinux floor to 2_35.
class Condition {
 public:
  Condition() = default;
  Condition(const Condition&) = delete;
  Condition& operator=(const Condition&) = delete;
  ~Condition() { pthread_cond_destroy(&cond_); }

  void notify_all() noexcept { pthread_cond_broadcast(&cond_); }

  // Waits until `done()` holds; `lock` holds the mutex `done` reads under.
  template <typename Done>
  void wait(std::unique_lock<std::mutex>& lock, Done done) {
    while (!done()) pthread_cond_wait(&cond_, lock.mutex()->native_handle());
  }

 private:
  pthread_cond_t cond_ = PTHREAD_COND_INITIALIZER;
};

struct Slot {
  std::mutex mu;                 // guards everything below
  Condition idle;                // signalled when `active` drops to 0 while Closing
  uint32_t generation = 1;       // of the handle naming the slot now, or of the next one
  State state = State::Free;
  Kind kind = Kind::Module;
  size_t active = 0;         // module slots: calls running on the module or its methods
  void* object = nullptr;    // the module, or the etrt::Method
  uintptr_t owner = 0;       // method slots: the handle of their module
};

// A handle as the C ABI passes it: (index + 1) in the upper half, the generation (never 0) in
// the lower, so no handle is NULL.
struct Decoded {
  uint32_t index;
  uint32_t generation;
};
Decoded decode(uintptr_t handle) noexcept;

// The slot `handle` decodes to, or null when no slot has that index (the value was never a
// handle). The slot lives as long as the process.
Slot* find(uintptr_t handle) noexcept;

// A slot for a new handle of `kind` naming `object` (Open), and that handle; 0 if the table is
// full. Takes a process-wide lock: for opening and method loading only.
uintptr_t add(Kind kind, void* object, uintptr_t owner);

// Ends the handle naming `slot` (its lock not held): bumps its generation, marks it Free and
// puts it back for reuse, unless the generation is exhausted (the slot then retires, so a stale
// handle can never match again).
void release(Slot* slot, uint32_t index) noexcept;

}  // namespace c_handles
}  // namespace etrt

#endif  // ETRT_SRC_RUNTIME_C_HANDLES_H_
