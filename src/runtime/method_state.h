// Private: everything a loaded Method owns, laid out for a tight execute() loop.
#pragma once

#include <cstddef>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "etrt/runtime/allocator.h"
#include "etrt/runtime/backend.h"
#include "etrt/runtime/event_tracer.h"
#include "etrt/runtime/kernel.h"
#include "etrt/runtime/method.h"
#include "etrt/runtime/value.h"
#include "etrt/runtime/named_data_map.h"
#include "program_data.h"

namespace etrt {
namespace detail {

// Scratch memory for KernelContext::allocate_temp: one buffer reused for every call, grown
// after an instruction that needed more (served from the heap just that once).
class RunContext final : public KernelContext {
 public:
  RunContext() = default;
  RunContext(const RunContext&) = delete;
  RunContext& operator=(const RunContext&) = delete;
  ~RunContext() override;

  void* allocate_temp(size_t nbytes, size_t alignment) override;
  // The most scratch memory one instruction may hold (the method's budget left after its
  // arena and delegates); requests beyond it get nullptr.
  void set_limit(size_t bytes) noexcept { limit_ = bytes; }
  void fail(Error error) override;
  const Error& error() const override { return error_; }

  void* instruction_cache(uint64_t key, size_t nbytes, bool* reused) override;
  // Instructions the method has (one cache slot each), before the first run.
  void set_instructions(size_t count) { caches_.resize(count); }
  void begin_instruction(size_t index) noexcept { current_ = index; }

  // Called after each instruction: drops temporaries and the error.
  void end_instruction() noexcept {
    if (!overflow_.empty()) grow();
    used_ = 0;
  }
  Error take_error() noexcept {
    Error e = std::move(error_);
    error_ = Error();
    return e;
  }

 private:
  void grow() noexcept;
  // Frees every kept block but the running instruction's and keeps none from then on; whether
  // anything was freed.
  bool drop_caches() noexcept;

  uint8_t* scratch_ = nullptr;
  size_t capacity_ = 0;
  size_t used_ = 0;  // may exceed capacity_ while overflow_ is in use
  size_t limit_ = 0;
  std::vector<void*> overflow_;
  Error error_;
  // instruction_cache: one block per instruction, counted with the scratch against limit_.
  struct Cache {
    uint64_t key = 0;
    size_t nbytes = 0;
    void* data = nullptr;
  };
  std::vector<Cache> caches_;
  size_t current_ = 0;
  size_t cache_bytes_ = 0;
  bool caches_off_ = false;
};

// A valid address for tensors of no bytes (planned in an empty arena, or bound empty).
void* empty_data();

struct InstructionState {
  KernelFn fn;  // null for a delegate call
  Value** args;
  uint32_t num_args;
  uint32_t index;  // operator or delegate index
  uint32_t reset_begin, reset_end;
  uint32_t fixup_begin, fixup_end;  // symbolic int-list items to fill in first
};

// One item of an int-list argument computed at run time (a symbolic size): copied from the Int
// value `src` right before an instruction that takes the list runs.
struct IntFixup {
  int64_t* dst;
  const Value* src;
  uint32_t value;  // index of `src`, for messages
};

// A State tensor's bytes in the arena and its initial value (null: zeros).
struct StateSlot {
  uint8_t* data;
  const uint8_t* initial;
  size_t nbytes;
};

// The sizes a tensor input or output may take, dimension by dimension.
struct SizeBounds {
  bool dynamic = false;
  std::vector<int64_t> min, max;
};

// An output to restore to its planned layout right before the instruction producing it.
struct Reset {
  Value* value;
  Tensor planned;
};

struct DelegateState {
  BackendInterface* backend = nullptr;
  void* handle = nullptr;
  bool initialized = false;
};

struct MethodState {
  static Result<std::unique_ptr<MethodState>> create(std::shared_ptr<const ProgramData> program,
                                                     const fb::ExecutionPlan& plan,
                                                     MemoryAllocator* allocator,
                                                     const NamedDataMap* data_map,
                                                     uint64_t budget) noexcept;
  ~MethodState();
  // Every State tensor back to its initial value.
  void reset_states() noexcept;

  std::shared_ptr<const ProgramData> program;
  const fb::ExecutionPlan* plan = nullptr;
  std::string name;
  std::unique_ptr<MallocAllocator> owned_allocator;
  uint8_t* arena = nullptr;

  std::vector<Value> values;
  std::vector<Value*> list_pool;             // TensorList items
  std::unique_ptr<bool[]> bool_pool;         // BoolList items, normalized to 0/1
  std::vector<Value*> arg_pool;              // instruction arguments
  std::vector<InstructionState> instructions;
  std::vector<Reset> resets;
  std::vector<const Value*> produced;  // resets[i].value, for the tracer
  std::unique_ptr<int64_t[]> int_pool;  // items of int lists with symbolic items
  std::vector<IntFixup> fixups;
  std::vector<StateSlot> states;
  std::vector<std::string> op_names;
  std::vector<DelegateState> delegates;

  std::vector<uint32_t> inputs;   // value indices
  std::vector<uint32_t> outputs;  // value indices
  std::vector<Value> output_planned;  // outputs as loaded: metadata readable during execute()
  std::vector<Tensor> input_planned;
  std::vector<SizeBounds> input_bounds;
  std::vector<SizeBounds> output_bounds;
  std::vector<bool> input_set;

  RunContext context;
  std::atomic<EventTracer*> tracer{nullptr};  // may be changed while another thread runs
  // The thread holding the method (Method::reserve); a default id when none does.
  std::atomic<std::thread::id> owner{};
};

TensorInfo info_of(const Tensor& planned, const SizeBounds& bounds);

}  // namespace detail
}  // namespace etrt
