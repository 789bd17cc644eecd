// libFuzzer target: an "XnnpackBackend" delegate blob, initialized through the registered
// backend and, when that succeeds, executed on deterministic inputs of the shapes it declares.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "etrt/fb/xnnpack_delegate_generated.h"
#include "etrt/runtime/backend.h"
#include "fuzz_common.h"

namespace xfb = etrt::backends::xnnpack::fb;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static etrt::BackendInterface* backend = etrt::find_backend("XnnpackBackend");
  if (backend == nullptr || !backend->is_available()) __builtin_trap();  // linked without the delegate
  etrt_fuzz::AlignedCopy blob(data, size);
  etrt::BackendInitContext context;
  context.max_memory_bytes = etrt_fuzz::kMemoryBudget;
  auto handle = backend->init(etrt::Span<const uint8_t>(blob.bytes(), blob.size()), {}, context);
  etrt_fuzz::report("init", handle.ok() ? etrt::Error() : handle.error());
  if (!handle.ok()) return 0;
  if (context.memory_bytes == 0 || context.memory_bytes > etrt_fuzz::kMemoryBudget) __builtin_trap();

  // init() accepted the blob, so it is verified: its Input and Output values give the call.
  const xfb::Graph* g = xfb::GetGraph(blob.bytes());
  std::vector<std::optional<etrt::OwnedTensor>> tensors(g->num_inputs() + g->num_outputs());
  bool ready = etrt_fuzz::graph_work(*g) <= etrt_fuzz::kExecuteWork;
  for (const xfb::XValue* v : *g->values()) {
    if (!ready) break;
    if (v->kind() != xfb::ValueKind::Input && v->kind() != xfb::ValueKind::Output) continue;
    std::vector<int64_t> sizes(v->dims()->begin(), v->dims()->end());
    if (v->nchw()) sizes = {sizes[0], sizes[3], sizes[1], sizes[2]};  // NHWC inside, NCHW outside
    size_t slot = v->io_index() + (v->kind() == xfb::ValueKind::Output ? g->num_inputs() : 0);
    const bool int8 = v->datatype() == xfb::DataType::QInt8;  // an int8 partition's values
    auto t = etrt::OwnedTensor::zeros(int8 ? etrt::ScalarType::Char : etrt::ScalarType::Float, sizes);
    if (!t.ok()) {
      ready = false;
      break;
    }
    etrt_fuzz::fill(t->tensor(), static_cast<uint32_t>(slot));
    tensors[slot] = std::move(t).get();
  }
  if (ready) {
    std::vector<etrt::Value> values;
    for (auto& t : tensors) values.emplace_back(t->tensor());
    std::vector<etrt::Value*> args;
    for (auto& v : values) args.push_back(&v);
    for (int run = 0; run < 2; ++run) {
      etrt::Error e = backend->execute(*handle, etrt::Span<etrt::Value*>(args.data(), args.size()));
      etrt_fuzz::report("execute", e);
      if (!e.ok()) break;
    }
  }
  backend->destroy(*handle);
  return 0;
}
