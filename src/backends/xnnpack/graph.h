// Private: a verified delegate blob, and the XNNPACK subgraph it defines.
#pragma once

#include <xnnpack.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "etrt/fb/xnnpack_delegate_generated.h"
#include "etrt/runtime/error.h"
#include "etrt/runtime/span.h"

namespace etrt {
namespace backends {
namespace xnnpack {

// One of the delegate call's tensors as XNNPACK sees it.
struct Slot {
  uint32_t value_id = 0;
  bool nchw = false;     // etrt tensor NCHW, XNNPACK value NHWC
  size_t element_size = sizeof(float);  // 1 for QInt8 (etrt int8), else float32
  int ndim = 0;
  int64_t sizes[XNN_MAX_TENSOR_DIMS] = {};  // the etrt tensor's sizes
  size_t numel = 0;
};

// A blob that passed every check: its FlatBuffer, its data area and its external slots.
struct Graph {
  const fb::Graph* root = nullptr;
  const uint8_t* data = nullptr;  // the constant data area
  std::vector<Slot> inputs;       // by io_index
  std::vector<Slot> outputs;
  // What XNNPACK will allocate for it, estimated from above: every non-constant value, a
  // packed copy of the constants, and the windowed operators' indirection buffers.
  uint64_t memory_bytes = 0;
};

// Verifies structure, bounds and every node's shapes; the blob must outlive the result.
Result<Graph> parse_graph(Span<const uint8_t> blob) noexcept;

struct SubgraphDeleter {
  void operator()(xnn_subgraph* s) const noexcept { xnn_delete_subgraph(s); }
};
using SubgraphPtr = std::unique_ptr<xnn_subgraph, SubgraphDeleter>;

// Defines a parsed graph in a new XNNPACK subgraph. Value ids are the blob's value indices.
Result<SubgraphPtr> define_subgraph(const Graph& graph) noexcept;

const char* status_name(xnn_status status) noexcept;

}  // namespace xnnpack
}  // namespace backends
}  // namespace etrt
