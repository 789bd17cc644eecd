// A loaded, runnable execution plan. Loading resolves everything; execute() is a tight loop
// over pre-resolved kernels that allocates nothing on the heap in steady state.
//
// Threads: a Method runs one call at a time. Its metadata (name, counts, input_tag,
// input_tensor_info, output_tag, output_tensor_info) may be read from any thread at any time.
// set_input() and execute() never wait: while another thread is inside one of them, or holds a
// Reservation, they fail with InvalidState and change nothing. A caller that shares a Method
// between threads serialises set_input .. execute .. output itself (its own mutex, or
// reserve()); reading output(i) while another thread runs the method is a data race.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "etrt/runtime/config.h"
#include "etrt/runtime/error.h"
#include "etrt/runtime/event_tracer.h"
#include "etrt/runtime/span.h"
#include "etrt/runtime/tensor.h"
#include "etrt/runtime/value.h"

namespace etrt {

namespace detail {
struct MethodState;
}

// Shape and type a method expects for (or produces in) a tensor slot. A dynamic tensor's sizes
// are an upper bound: an input accepts any sizes in [min_sizes, max_sizes], dimension by
// dimension, and an output reports its actual sizes after execute(). For a static tensor,
// min_sizes and max_sizes equal sizes.
struct TensorInfo {
  ScalarType dtype;
  Span<const int64_t> sizes;  // valid as long as the Method
  size_t nbytes;              // of `sizes`: what the method planned for
  bool dynamic = false;
  Span<const int64_t> min_sizes;
  Span<const int64_t> max_sizes;
};

class ETRT_EXPORT Method {
 public:
  Method(Method&&) noexcept;
  Method& operator=(Method&&) noexcept;
  ~Method();

  std::string_view name() const noexcept;
  size_t num_inputs() const noexcept;
  size_t num_outputs() const noexcept;
  // What input i is: Tag::Tensor for tensors, or the scalar kind the program expects.
  Tag input_tag(size_t i) const noexcept;
  // Expected dtype and sizes of tensor input i.
  Result<TensorInfo> input_tensor_info(size_t i) const noexcept;
  // Planned dtype and sizes of tensor output i.
  Result<TensorInfo> output_tensor_info(size_t i) const noexcept;
  // What output i is (known before execute()): Tag::Tensor, a scalar kind, Tag::None...
  Tag output_tag(size_t i) const noexcept;

  // Holds the method for the thread that reserved it; released when destroyed. That thread's
  // calls meanwhile form one unit; other threads' set_input/execute fail with InvalidState.
  class ETRT_EXPORT Reservation {
   public:
    Reservation() noexcept = default;
    Reservation(Reservation&& other) noexcept;
    Reservation& operator=(Reservation&& other) noexcept;
    Reservation(const Reservation&) = delete;
    Reservation& operator=(const Reservation&) = delete;
    ~Reservation();

   private:
    friend class Method;
    explicit Reservation(detail::MethodState* state) noexcept : state_(state) {}
    detail::MethodState* state_ = nullptr;  // null when empty or nested in an outer one
  };
  // Reserves the method for the calling thread (again: a nested, no-op reservation). Fails
  // with InvalidState, without waiting, while another thread uses the method.
  Result<Reservation> reserve() noexcept;

  // Whether a tensor of `dtype` and `sizes` fits input i, judged (same code and message) as
  // set_input judges it, from the metadata alone: for callers that convert or copy first.
  Error check_input(size_t i, ScalarType dtype, Span<const int64_t> sizes) const noexcept;

  // Binds input i. A tensor must match the expected dtype and sizes (any sizes within the
  // bounds for a dynamic input: an error names the input and the dimension otherwise), be
  // contiguous and aligned to its element size; its memory is used as is (no copy) and must
  // stay valid through execute().
  Error set_input(size_t i, const Tensor& tensor) noexcept;
  // Binds a scalar input (Int, Double or Bool, as the program expects) or a tensor.
  Error set_input(size_t i, const Value& value) noexcept;

  // Runs every instruction in order, stopping at the first failure; the Error names the
  // operator and the instruction index. State the program mutates (State tensors: a KV cache,
  // a counter) persists from one execute() to the next.
  Error execute() noexcept;

  // Number of State tensors: buffers the program mutates, owned by this Method.
  size_t num_states() const noexcept;
  // Puts every State tensor back to its initial value, as when the method was loaded. Fails
  // with InvalidState, without waiting, while another thread uses the method.
  Error reset_state() noexcept;

  // Reports every later execute() to `tracer` (nullptr detaches). The tracer must outlive the
  // method or be detached first.
  void set_event_tracer(EventTracer* tracer) noexcept;
  EventTracer* event_tracer() const noexcept;

  // Output i after execute(). Output tensors point into the method's memory (or an input's)
  // and stay valid until the next execute() or until the Method is destroyed.
  const Value& output(size_t i) const noexcept;

 private:
  friend class Program;
  explicit Method(std::unique_ptr<detail::MethodState> state) noexcept;
  std::unique_ptr<detail::MethodState> state_;
};

}  // namespace etrt
