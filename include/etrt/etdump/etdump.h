// The etrt profiler (libetrt_etdump.so): an EventTracer that records every run, kernel call and
// delegate call of the methods it is attached to, and writes them to a .etdump file
// (schema/etdump.fbs; read it from Python with etrt.etdump.load).
//
//   auto gen = etrt::etdump::ETDumpGen::create();
//   etrt::Module module("model.etrt", etrt::Module::LoadMode::Mmap, gen->get());
//   ... module.forward(inputs) ...
//   etrt::Error err = (*gen)->write("model.etdump");
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "etrt/runtime/config.h"
#include "etrt/runtime/error.h"
#include "etrt/runtime/event_tracer.h"
#include "etrt/runtime/span.h"
#include "etrt/runtime/value.h"

namespace etrt {
namespace etdump {

enum class EventKind : uint8_t {
  Operator = 0,  // a kernel call, named by its operator
  Delegate = 1,  // a delegate call, named by its backend id
};

// How much to record. All memory is allocated by create(): recording allocates nothing except
// the first time a name (operator, backend, method) is seen. What does not fit is dropped and
// counted (dropped_events()).
struct ETDumpConfig {
  size_t max_events = 1 << 16;
  size_t max_runs = 1 << 12;
  // Record the sizes of the tensors each instruction produces.
  bool record_shapes = false;
  // Room for recorded shapes, in int64 values (one per dimension, plus one per tensor).
  size_t max_shape_values = 1 << 20;
};

// One recorded event, as seen through ETDumpGen::event().
struct EventRecord {
  std::string_view name;  // valid as long as the ETDumpGen
  EventKind kind;
  uint32_t instruction;
  uint32_t run;       // index of the run it belongs to
  uint64_t start_ns;  // monotonic clock
  uint64_t end_ns;
};

// Not thread-safe: attach one ETDumpGen to methods that run on one thread at a time.
class ETRT_EXPORT ETDumpGen final : public EventTracer {
 public:
  static Result<std::unique_ptr<ETDumpGen>> create(const ETDumpConfig& config = {}) noexcept;
  ~ETDumpGen() override;
  ETDumpGen(const ETDumpGen&) = delete;
  ETDumpGen& operator=(const ETDumpGen&) = delete;

  size_t num_runs() const noexcept;
  size_t num_events() const noexcept;
  EventRecord event(size_t i) const noexcept;  // i < num_events()
  size_t dropped_events() const noexcept;
  // Forgets every run and event; keeps the memory (and the names seen).
  void reset() noexcept;

  // The recorded runs as a .etdump FlatBuffer.
  Result<std::vector<uint8_t>> serialize() const noexcept;
  // Writes serialize() to `path` atomically: a reader sees the old file or the whole new one.
  Error write(const std::string& path) const noexcept;

  void begin_run(std::string_view method) noexcept override;
  void end_run(std::string_view method, bool ok) noexcept override;
  void begin_operator(std::string_view op, uint32_t instruction) noexcept override;
  void end_operator(std::string_view op, uint32_t instruction, Span<const Value* const> outputs) noexcept override;
  void begin_delegate(std::string_view backend, uint32_t instruction) noexcept override;
  void end_delegate(std::string_view backend, uint32_t instruction, Span<const Value* const> outputs) noexcept override;

 private:
  struct Impl;
  explicit ETDumpGen(std::unique_ptr<Impl> impl) noexcept;
  std::unique_ptr<Impl> impl_;
};

}  // namespace etdump
}  // namespace etrt
