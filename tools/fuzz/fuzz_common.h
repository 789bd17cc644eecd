// Shared by the libFuzzer targets: run every method of a loaded program on deterministic inputs,
// within a budget that keeps one execution to milliseconds under ASan.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "etrt/fb/program_generated.h"
#include "etrt/runtime/runtime.h"
#include "etrt/runtime/tensor_ptr.h"

namespace etrt_fuzz {

// Elements over all tensors of a method the harness still executes. Larger programs are loaded
// (every load-time check runs) but not executed: a legal 2^36-element tensor would take minutes
// and read as a hang. The runtime's own caps (common/checked.h) are tested by regression tests.
constexpr uint64_t kExecuteElements = uint64_t{1} << 21;
constexpr uint64_t kExecuteArenaBytes = uint64_t{1} << 26;

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

// Whether a (loaded, so verified) method is small enough to execute.
inline bool within_budget(const etrt::fb::ExecutionPlan& plan) {
  if (plan.arena_size() > kExecuteArenaBytes) return false;
  uint64_t total = 0;
  if (plan.values() == nullptr) return true;
  for (const etrt::fb::Value* v : *plan.values()) {
    const etrt::fb::Tensor* t = v->val_as_Tensor();
    if (t == nullptr || t->sizes() == nullptr) continue;
    uint64_t numel = 1;
    for (int64_t s : *t->sizes()) {
      numel *= static_cast<uint64_t>(s);  // each tensor is bounded by the loader already
      if (numel > kExecuteElements) return false;
    }
    total += numel;
    if (total > kExecuteElements) return false;
  }
  return true;
}

// Loads each method (with `data_map` for external constants), and executes the ones within
// budget on deterministic inputs. Errors are fine; crashes, UB and leaks are what the fuzzer
// looks for.
inline void run_program(const etrt::Program& program, const uint8_t* file, const etrt::NamedDataMap* data_map) {
  const etrt::fb::Program* root = etrt::fb::GetProgram(file);
  for (size_t m = 0; m < program.num_methods(); ++m) {
    auto method = program.load_method(program.method_name(m), nullptr, data_map);
    report("load_method", method.ok() ? etrt::Error() : method.error());
    if (!method.ok()) continue;
    const etrt::fb::ExecutionPlan* plan = root->execution_plans()->Get(static_cast<flatbuffers::uoffset_t>(m));
    if (!within_budget(*plan)) continue;
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
    // Twice: the second run starts from the first run's views and scratch memory.
    for (int run = 0; run < 2; ++run) {
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
