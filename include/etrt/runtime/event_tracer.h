// The hook a profiler implements: Method::execute reports each run, kernel call and delegate
// call to the tracer attached to the method. With none attached, execute() pays one branch per
// run, nothing per instruction.
#pragma once

#include <cstdint>
#include <string_view>

#include "etrt/runtime/config.h"
#include "etrt/runtime/span.h"
#include "etrt/runtime/value.h"

namespace etrt {

// Every call comes from the thread running execute(), in instruction order, and must not
// throw. Names (method, operator, backend id) stay valid as long as the Method; copy them to
// keep them longer. The tracer must outlive every method it is attached to (or be detached).
class ETRT_EXPORT EventTracer {
 public:
  virtual ~EventTracer();

  // Around one execute() of `method`; `ok` is false when an instruction failed (the events
  // reported until then stand).
  virtual void begin_run(std::string_view method) noexcept = 0;
  virtual void end_run(std::string_view method, bool ok) noexcept = 0;

  // Around a kernel call: `op` is its ATen overload name ("aten::addmm"), `instruction` its
  // index in the method. `outputs` are the tensors the instruction produced, with the sizes
  // the kernel gave them.
  virtual void begin_operator(std::string_view op, uint32_t instruction) noexcept = 0;
  virtual void end_operator(std::string_view op, uint32_t instruction, Span<const Value* const> outputs) noexcept = 0;

  // Around a delegate call: `backend` is the delegate's backend id ("XnnpackBackend").
  virtual void begin_delegate(std::string_view backend, uint32_t instruction) noexcept = 0;
  virtual void end_delegate(std::string_view backend, uint32_t instruction, Span<const Value* const> outputs) noexcept = 0;
};

}  // namespace etrt
