// etrt_load_check: feeds program files to Program::load, load_method and execute (or, with
// --data-map, named data maps to FlatTensorDataMap::load and every lookup), one result line
// per file, and must never crash (the malformed-input tests run it under ASan/UBSan, with each
// data loader). It links the runtime alone, to check what loading does without the kernel
// library; the coverage-guided fuzzers that reach the real kernels and the XNNPACK delegate are
// tools/fuzz/.
//
//   etrt_load_check [--test-kernels] [--data-map] [--loader mmap|file|buffer] FILE...
//
// Each line: "<file>\t<Ok|ErrorCode>\t<message>". --test-kernels registers small defensive
// Float kernels for aten::add.Tensor, aten::mul.Tensor and aten::alias (a view), so runs do
// not depend on the kernel library.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "etrt/runtime/runtime.h"

// Counts C++ heap allocations process-wide, to show that a warm execute() makes none.
std::atomic<long> g_allocations{0};

void* operator new(size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace {

using etrt::KernelContext;
using etrt::Span;
using etrt::Tensor;
using etrt::Value;

bool float_tensor(const Value* v) { return v->is_tensor() && v->to_tensor().dtype() == etrt::ScalarType::Float; }

bool same_sizes(const Tensor& a, const Tensor& b) {
  if (a.dim() != b.dim()) return false;
  for (int d = 0; d < a.dim(); ++d) {
    if (a.size(d) != b.size(d)) return false;
  }
  return true;
}

// Checks a contiguous Float output of the inputs' shape with memory behind it.
bool check_binary(KernelContext& ctx, Span<Value*> args, size_t n, const char* name) {
  if (args.size() != n || !float_tensor(args[0]) || !float_tensor(args[1]) || !float_tensor(args[n - 1])) {
    ctx.fail(etrt::Error(etrt::ErrorCode::InvalidArgument, std::string(name) + ": bad arguments"));
    return false;
  }
  const Tensor& a = args[0]->to_tensor();
  const Tensor& b = args[1]->to_tensor();
  const Tensor& out = args[n - 1]->to_tensor();
  if (!same_sizes(a, b) || !same_sizes(a, out) || !a.is_contiguous() || !b.is_contiguous() || !out.is_contiguous()) {
    ctx.fail(etrt::Error(etrt::ErrorCode::InvalidArgument, std::string(name) + ": shapes differ"));
    return false;
  }
  if (a.numel() > 0 && (a.data() == nullptr || b.data() == nullptr || out.data() == nullptr)) {
    ctx.fail(etrt::Error(etrt::ErrorCode::InvalidArgument, std::string(name) + ": tensor without memory"));
    return false;
  }
  return true;
}

void add_kernel(KernelContext& ctx, Span<Value*> args) {
  if (!check_binary(ctx, args, 4, "aten::add.Tensor")) return;
  if (!args[2]->is_scalar()) return ctx.fail(etrt::Error(etrt::ErrorCode::InvalidArgument, "alpha is not a scalar"));
  float alpha = static_cast<float>(args[2]->scalar_to_double());
  const Tensor& a = args[0]->to_tensor();
  int64_t n = a.numel();
  // Through scratch memory, to exercise allocate_temp.
  auto* tmp = static_cast<float*>(ctx.allocate_temp(static_cast<size_t>(n) * sizeof(float) + 1));
  if (tmp == nullptr) return ctx.fail(etrt::Error(etrt::ErrorCode::OutOfMemory, "no scratch"));
  const float* x = a.data_as<float>();
  const float* y = args[1]->to_tensor().data_as<float>();
  for (int64_t i = 0; i < n; ++i) tmp[i] = x[i] + alpha * y[i];
  if (n > 0) std::memcpy(args[3]->to_tensor().data(), tmp, static_cast<size_t>(n) * sizeof(float));
}

void mul_kernel(KernelContext& ctx, Span<Value*> args) {
  if (!check_binary(ctx, args, 3, "aten::mul.Tensor")) return;
  int64_t n = args[0]->to_tensor().numel();
  const float* x = args[0]->to_tensor().data_as<float>();
  const float* y = args[1]->to_tensor().data_as<float>();
  float* o = args[2]->to_tensor().data_as<float>();
  for (int64_t i = 0; i < n; ++i) o[i] = x[i] * y[i];
}

void alias_kernel(KernelContext& ctx, Span<Value*> args) {
  if (args.size() != 2 || !args[0]->is_tensor() || !args[1]->is_tensor()) {
    return ctx.fail(etrt::Error(etrt::ErrorCode::InvalidArgument, "aten::alias: bad arguments"));
  }
  const Tensor& in = args[0]->to_tensor();
  Tensor& out = args[1]->to_tensor();
  if (in.dtype() != out.dtype()) return ctx.fail(etrt::Error(etrt::ErrorCode::InvalidArgument, "aten::alias: dtype"));
  etrt::Error err = out.set_sizes_and_strides(in.sizes(), in.strides());
  if (!err.ok()) return ctx.fail(err);
  out.set_data(in.data());
}

// One line of printable ASCII, whatever bytes a malformed file put into a message.
std::string one_line(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

struct Outcome {
  std::string code = "Ok";
  std::string message;
};

Outcome from_error(const etrt::Error& e) { return {etrt::to_string(e.code()), e.message()}; }

Outcome run_method(const etrt::Program& program, std::string_view name) {
  auto method = program.load_method(name);
  if (!method.ok()) return from_error(method.error());
  std::vector<etrt::OwnedTensor> inputs;
  size_t total = 0;
  for (size_t i = 0; i < method->num_inputs(); ++i) {
    if (method->input_tag(i) != etrt::Tag::Tensor) continue;
    auto info = method->input_tensor_info(i);
    if (!info.ok()) return from_error(info.error());
    total += info->nbytes;
    if (total > (size_t{1} << 28)) return {"Ok", "loaded; inputs too large to execute"};
    auto t = etrt::OwnedTensor::zeros(info->dtype, info->sizes);
    if (!t.ok()) return from_error(t.error());
    etrt::Error err = method->set_input(i, t->tensor());
    if (!err.ok()) return from_error(err);
    inputs.push_back(std::move(t).get());
  }
  // Twice: the second run must see the same planned layouts as the first, and allocate
  // nothing (the first may grow the kernels' scratch buffer).
  long steady_allocations = 0;
  for (int run = 0; run < 2; ++run) {
    long before = g_allocations.load();
    etrt::Error err = method->execute();
    if (!err.ok()) return from_error(err);
    steady_allocations = g_allocations.load() - before;
  }
  std::string shapes;
  for (size_t i = 0; i < method->num_outputs(); ++i) {
    const Value& v = method->output(i);
    shapes += (i ? "; " : "") + std::string(etrt::to_string(v.tag()));
    if (v.is_tensor()) {
      shapes += " [";
      for (int d = 0; d < v.to_tensor().dim(); ++d) shapes += (d ? "," : "") + std::to_string(v.to_tensor().size(d));
      shapes += "]";
    }
  }
  return {"Ok", "executed; outputs: " + shapes + "; allocations in a warm run: " + std::to_string(steady_allocations)};
}

// Every key's info and every byte of its data (summed, so a bad pointer is read).
Outcome run_data_map(etrt::DataLoader* loader) {
  auto map = etrt::FlatTensorDataMap::load(loader);
  if (!map.ok()) return from_error(map.error());
  uint64_t bytes = 0;
  unsigned sum = 0;
  for (size_t i = 0; i < map->num_keys(); ++i) {
    auto info = map->tensor_info(map->key(i));
    if (!info.ok()) return from_error(info.error());
    auto data = map->data(map->key(i));
    if (!data.ok()) return from_error(data.error());
    if (data->size() != info->nbytes) return {"Internal", "data and info disagree on the size"};
    for (uint8_t b : *data) sum += b;
    bytes += data->size();
  }
  return {"Ok", std::to_string(map->num_keys()) + " tensors, " + std::to_string(bytes) + " bytes (checksum " +
                    std::to_string(sum % 251) + ")"};
}

Outcome run_file(const std::string& path, const std::string& loader_kind, bool data_map) {
  std::unique_ptr<etrt::DataLoader> loader;
  std::vector<char> bytes;
  if (loader_kind == "mmap") {
    auto l = etrt::MmapDataLoader::from(path);
    if (!l.ok()) return from_error(l.error());
    loader = std::make_unique<etrt::MmapDataLoader>(std::move(l).get());
  } else if (loader_kind == "file") {
    auto l = etrt::FileDataLoader::from(path);
    if (!l.ok()) return from_error(l.error());
    loader = std::make_unique<etrt::FileDataLoader>(std::move(l).get());
  } else {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) return {"IoError", "cannot open " + path};
    char buf[1 << 16];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) bytes.insert(bytes.end(), buf, buf + n);
    std::fclose(f);
    // Offset by one byte so the runtime's realignment path runs too.
    bytes.insert(bytes.begin(), 0);
    loader = std::make_unique<etrt::BufferDataLoader>(bytes.data() + 1, bytes.size() - 1);
  }
  if (data_map) return run_data_map(loader.get());
  auto program = etrt::Program::load(loader.get());
  if (!program.ok()) return from_error(program.error());
  Outcome last;
  for (size_t i = 0; i < program->num_methods(); ++i) {
    last = run_method(*program, program->method_name(i));
    if (last.code != "Ok") return last;
  }
  return last;
}

}  // namespace

int main(int argc, char** argv) {
  std::string loader = "mmap";
  bool data_map = false;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--test-kernels") {
      static const etrt::Kernel kKernels[] = {
          {"aten::add.Tensor", add_kernel}, {"aten::mul.Tensor", mul_kernel}, {"aten::alias", alias_kernel}};
      etrt::Error err = etrt::register_kernels(kKernels);
      if (!err.ok()) {
        std::fprintf(stderr, "error: %s\n", err.to_string().c_str());
        return 1;
      }
    } else if (arg == "--data-map") {
      data_map = true;
    } else if (arg == "--loader" && i + 1 < argc) {
      loader = argv[++i];
      if (loader != "mmap" && loader != "file" && loader != "buffer") {
        std::fprintf(stderr, "error: InvalidArgument: --loader takes mmap, file or buffer\n");
        return 1;
      }
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "error: InvalidArgument: unknown option %s\n", arg.c_str());
      return 1;
    } else {
      files.push_back(arg);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: etrt_load_check [--test-kernels] [--data-map] [--loader mmap|file|buffer] FILE...\n");
    return 1;
  }
  for (const std::string& f : files) {
    Outcome o = run_file(f, loader, data_map);
    std::printf("%s\t%s\t%s\n", f.c_str(), o.code.c_str(), one_line(o.message).c_str());
    std::fflush(stdout);
  }
  return 0;
}
