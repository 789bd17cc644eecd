// Shared by the libFuzzer targets: run every method of a loaded program on deterministic inputs,
// within a budget that keeps one execution to milliseconds under ASan.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/checked.h"
#include "etrt/fb/program_generated.h"
#include "etrt/fb/xnnpack_delegate_generated.h"
#include "etrt/runtime/runtime.h"
#include "etrt/runtime/tensor_ptr.h"

namespace etrt_fuzz {

// The memory budget every method and delegate is loaded under: the runtime must refuse
// anything beyond it (no allocation is attempted), which keeps a run far below libFuzzer's
// RSS limit. The runtime's own caps are tested by regression inputs.
constexpr uint64_t kMemoryBudget = uint64_t{64} << 20;
// Work (inner-loop steps, estimated from the planned shapes) beyond which a method is loaded
// but not executed: a legal convolution with a 2^20-tap window would take minutes under ASan
// and read as a hang. Elements over all tensors are bounded the same way.
constexpr uint64_t kExecuteWork = uint64_t{1} << 24;
constexpr uint64_t kExecuteElements = uint64_t{1} << 21;

inline etrt::LoadOptions load_options() {
  etrt::LoadOptions options;
  options.max_memory_bytes = kMemoryBudget;
  return options;
}

// The input with its first byte on a 64-byte boundary, as a program file read by mmap would be.
class AlignedCopy {
 public:
  AlignedCopy(const uint8_t* data, size_t size) : storage_((size + 127) / 64 + 1) {
    if (size > 0) std::memcpy(bytes(), data, size);
    size_ = size;
  }
  uint8_t* bytes() { return reinterpret_cast<uint8_t*>(storage_.data()); }
  size_t size() const { return size_; }

 private:
  struct alignas(64) Line {
    uint8_t b[64];
  };
  std::vector<Line> storage_;
  size_t size_ = 0;
};

// With ETRT_FUZZ_VERBOSE set, each stage's outcome goes to stderr (the seed check reads it).
inline void report(const char* stage, const etrt::Error& e) {
  static const bool verbose = std::getenv("ETRT_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "etrt_fuzz: %s: %s\n", stage, e.ok() ? "ok" : e.to_string().c_str());
}

// Small, varied, deterministic values: finite floats in [-2, 2], small integers (valid indices
// into most dimensions), alternating bools.
inline void fill(const etrt::Tensor& t, uint32_t seed) {
  uint32_t state = seed * 2654435761u + 12345u;
  auto next = [&state]() {
    state = state * 1664525u + 1013904223u;
    return state >> 8;
  };
  const int64_t n = t.numel();
  uint8_t* p = static_cast<uint8_t*>(t.data());
  for (int64_t i = 0; i < n; ++i) {
    switch (t.dtype()) {
      case etrt::ScalarType::Float: {
        float v = static_cast<float>(next() % 4001) / 1000.0f - 2.0f;
        std::memcpy(p + i * 4, &v, 4);
        break;
      }
      case etrt::ScalarType::Double: {
        double v = static_cast<double>(next() % 4001) / 1000.0 - 2.0;
        std::memcpy(p + i * 8, &v, 8);
        break;
      }
      case etrt::ScalarType::Long: {
        int64_t v = next() % 3;
        std::memcpy(p + i * 8, &v, 8);
        break;
      }
      case etrt::ScalarType::Int: {
        int32_t v = static_cast<int32_t>(next() % 3);
        std::memcpy(p + i * 4, &v, 4);
        break;
      }
      case etrt::ScalarType::Bool: p[i] = static_cast<uint8_t>(i & 1); break;
      case etrt::ScalarType::Byte:
      case etrt::ScalarType::Char: p[i] = static_cast<uint8_t>(next() % 3); break;
      case etrt::ScalarType::Half:
      case etrt::ScalarType::BFloat16: {
        float v = static_cast<float>(next() % 41) / 10.0f - 2.0f;
        uint16_t h = t.dtype() == etrt::ScalarType::Half ? etrt::float_to_half(v) : etrt::float_to_bfloat16(v);
        std::memcpy(p + i * 2, &h, 2);
        break;
      }
    }
  }
}

namespace xfb = etrt::backends::xnnpack::fb;

using etrt::checked::add_sat;
using etrt::checked::mul_sat;

// Work of an (initialized, so verified) XNNPACK graph: a windowed node costs its output times
// its window, a fully connected one its output times the input channels, the rest their sizes.
inline uint64_t graph_work(const xfb::Graph& g) {
  auto numel = [&](uint32_t id) {
    uint64_t n = 1;
    for (uint64_t d : *g.values()->Get(id)->dims()) n = mul_sat(n, d);
    return n;
  };
  uint64_t work = 0;
  for (const xfb::XValue* v : *g.values()) {
    uint64_t n = 1;
    for (uint64_t d : *v->dims()) n = mul_sat(n, d);
    work = add_sat(work, n);
  }
  for (const xfb::Node* node : *g.nodes()) {
    if (const auto* c = node->node_as_Conv2d()) {
      work = add_sat(work, mul_sat(numel(c->output()), mul_sat(mul_sat(uint64_t{c->kernel_h()}, uint64_t{c->kernel_w()}), uint64_t{c->group_input_channels()})));
    } else if (const auto* m = node->node_as_MaxPool2d()) {
      work = add_sat(work, mul_sat(numel(m->output()), mul_sat(uint64_t{m->pool_h()}, uint64_t{m->pool_w()})));
    } else if (const auto* f = node->node_as_FullyConnected()) {
      const auto* dims = g.values()->Get(f->input())->dims();
      work = add_sat(work, mul_sat(numel(f->output()), dims->Get(dims->size() - 1)));
    }
  }
  return work;
}

// Elements of a verified tensor value as planned; 0 for anything else.
inline uint64_t value_numel(const etrt::fb::ExecutionPlan& plan, int32_t index) {
  const etrt::fb::Tensor* t = plan.values()->Get(static_cast<flatbuffers::uoffset_t>(index))->val_as_Tensor();
  if (t == nullptr || t->sizes() == nullptr) return 0;
  uint64_t n = 1;
  for (int64_t s : *t->sizes()) n = mul_sat(n, static_cast<uint64_t>(s));
  return n;
}

inline int64_t last_size(const etrt::fb::ExecutionPlan& plan, int32_t index) {
  const etrt::fb::Tensor* t = plan.values()->Get(static_cast<flatbuffers::uoffset_t>(index))->val_as_Tensor();
  return t && t->sizes() && t->sizes()->size() > 0 ? t->sizes()->Get(t->sizes()->size() - 1) : 1;
}

// Product of an IntList argument's items (a window), 1 for anything else.
inline uint64_t list_product(const etrt::fb::ExecutionPlan& plan, int32_t index) {
  const etrt::fb::IntList* l = plan.values()->Get(static_cast<flatbuffers::uoffset_t>(index))->val_as_IntList();
  uint64_t n = 1;
  if (l != nullptr && l->items() != nullptr) {
    for (int64_t v : *l->items()) n = mul_sat(n, v > 0 ? static_cast<uint64_t>(v) : 1);
  }
  return n;
}

// Estimated work of one kernel call: the elements of its arguments, plus the inner loops of
// the ops whose cost is not in their sizes (windows, matrix products, attention, sorting).
inline uint64_t call_work(const etrt::fb::ExecutionPlan& plan, const std::string& op,
                          const flatbuffers::Vector<int32_t>& args) {
  uint64_t work = 0;
  for (int32_t a : args) work = add_sat(work, value_numel(plan, a));
  if (args.size() == 0) return work;
  const uint64_t out = value_numel(plan, args.Get(args.size() - 1));
  auto arg = [&](size_t i) { return i < args.size() ? args.Get(static_cast<flatbuffers::uoffset_t>(i)) : args.Get(0); };
  if (op == "aten::convolution" || op == "aten::col2im") {
    // Each output reads weight / out_channels values (col2im: its kernel taps).
    const uint64_t w = op == "aten::col2im" ? list_product(plan, arg(2)) * 4 : value_numel(plan, arg(1));
    return add_sat(work, mul_sat(out, w));
  }
  if (op.find("pool") != std::string::npos) {
    return add_sat(work, mul_sat(out > 0 ? out : value_numel(plan, arg(0)), mul_sat(list_product(plan, arg(1)), 4)));
  }
  if (op == "aten::mm" || op == "aten::bmm" || op == "aten::addmm" || op == "aten::_cdist_forward" ||
      op == "aten::_pdist_forward" || op == "aten::grid_sampler_2d") {
    const uint64_t k = static_cast<uint64_t>(std::max<int64_t>(1, last_size(plan, arg(op == "aten::addmm" ? 1 : 0))));
    return add_sat(work, mul_sat(mul_sat(out > 0 ? out : 1, k), 4));
  }
  if (op == "aten::scaled_dot_product_attention") {
    const uint64_t keys = value_numel(plan, arg(1)) / static_cast<uint64_t>(std::max<int64_t>(1, last_size(plan, arg(1))));
    return add_sat(work, mul_sat(value_numel(plan, arg(0)), mul_sat(std::max<uint64_t>(1, keys), uint64_t{4})));
  }
  if (op.find("sort") != std::string::npos || op == "aten::topk" || op.find("embedding") != std::string::npos) {
    return add_sat(work, mul_sat(work, 64));
  }
  return work;
}

// Whether a (loaded, so verified) method of the program in `file` is small enough to execute.
inline bool within_budget(const uint8_t* file, const etrt::fb::ExecutionPlan& plan) {
  if (plan.values() == nullptr) return true;
  uint64_t total = 0;
  for (flatbuffers::uoffset_t i = 0; i < plan.values()->size(); ++i) {
    total = add_sat(total, value_numel(plan, static_cast<int32_t>(i)));
  }
  if (total > kExecuteElements) return false;
  if (plan.instructions() == nullptr) return true;
  const etrt::fb::Program* root = etrt::fb::GetProgram(file);
  uint64_t work = 0;
  for (const etrt::fb::Instruction* instr : *plan.instructions()) {
    if (const auto* k = instr->call_as_KernelCall()) {
      if (k->args() != nullptr) work = add_sat(work, call_work(plan, plan.operators()->Get(k->op_index())->name()->str(), *k->args()));
    } else if (const auto* d = instr->call_as_DelegateCall()) {
      // The method loaded, so its delegate accepted the blob: a verified graph.
      const auto* seg = root->segments()->Get(plan.delegates()->Get(d->delegate_index())->segment());
      work = add_sat(work, graph_work(*xfb::GetGraph(file + root->segment_base_offset() + seg->offset())));
    }
  }
  return work <= kExecuteWork;
}

// Loads each method (with `data_map` for external constants), and executes the ones within
// budget on deterministic inputs. Errors are fine; crashes, UB and leaks are what the fuzzer
// looks for.
inline void run_program(const etrt::Program& program, const uint8_t* file, const etrt::NamedDataMap* data_map) {
  const etrt::fb::Program* root = etrt::fb::GetProgram(file);
  for (size_t m = 0; m < program.num_methods(); ++m) {
    auto method = program.load_method(program.method_name(m), nullptr, data_map, load_options());
    report("load_method", method.ok() ? etrt::Error() : method.error());
    if (!method.ok()) continue;
    const etrt::fb::ExecutionPlan* plan = root->execution_plans()->Get(static_cast<flatbuffers::uoffset_t>(m));
    if (!within_budget(file, *plan)) continue;
    std::vector<etrt::OwnedTensor> inputs;
    bool ready = true;
    for (size_t i = 0; i < method->num_inputs() && ready; ++i) {
      if (method->input_tag(i) != etrt::Tag::Tensor) continue;  // scalars keep the program's value
      auto info = method->input_tensor_info(i);
      if (!info.ok()) {
        ready = false;
        break;
      }
      auto t = etrt::OwnedTensor::zeros(info->dtype, info->sizes);
      if (!t.ok()) {
        ready = false;
        break;
      }
      fill(t->tensor(), static_cast<uint32_t>(i));
      ready = method->set_input(i, t->tensor()).ok();
      inputs.push_back(std::move(t).get());
    }
    if (!ready) continue;
    // Twice: the second run starts from the first run's views and scratch memory. A method
    // with dynamic inputs runs a third time from a reset state, each input at its smallest.
    bool dynamic = false;
    for (size_t i = 0; i < method->num_inputs(); ++i) {
      if (method->input_tag(i) != etrt::Tag::Tensor) continue;
      auto info = method->input_tensor_info(i);
      dynamic = dynamic || (info.ok() && info->dynamic);
    }
    for (int run = 0; run < (dynamic ? 3 : 2); ++run) {
      if (run == 2) {
        report("reset_state", method->reset_state());
        size_t k = 0;
        for (size_t i = 0; i < method->num_inputs() && ready; ++i) {
          if (method->input_tag(i) != etrt::Tag::Tensor) continue;
          auto info = method->input_tensor_info(i);
          etrt::Tensor& t = inputs[k++].tensor();
          if (!info.ok() || !info->dynamic) continue;
          auto small = etrt::Tensor::make(t.data(), t.dtype(), info->min_sizes);
          ready = small.ok() && method->set_input(i, *small).ok();
        }
        if (!ready) break;
      }
      etrt::Error e = method->execute();
      report("execute", e);
      if (!e.ok()) break;
      // Read every output, so one pointing at bad memory is caught here.
      uint8_t sum = 0;
      for (size_t o = 0; o < method->num_outputs(); ++o) {
        const etrt::Value& v = method->output(o);
        if (!v.is_tensor() || v.to_tensor().data() == nullptr) continue;
        const etrt::Tensor& t = v.to_tensor();
        const auto* p = static_cast<const uint8_t*>(t.data());
        int64_t extent = 1;
        for (int d = 0; d < t.dim(); ++d) extent += (t.size(d) - 1) * t.stride(d);
        if (t.numel() == 0) extent = 0;
        for (int64_t b = 0; b < extent * static_cast<int64_t>(t.element_size()); ++b) sum ^= p[b];
      }
      asm volatile("" : : "r"(sum));
    }
  }
}

}  // namespace etrt_fuzz
