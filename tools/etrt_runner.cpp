// etrt_runner: loads a program, runs one method and writes its outputs.
//
//   etrt_runner PROGRAM [--data file.ptd]... [--method NAME] [--shape I=AxBx...]... [--inputs in.bin]
//               [--outputs out.bin] [--repeat N] [--threads N]
//   etrt_runner --list-kernels | --list-backends
//
// in.bin is every input's raw bytes, concatenated in input order (shapes and dtypes come from
// the method; --shape gives dynamic input I its sizes for this run, e.g. --shape 0=1x7); each --data is a named data map (.ptd) holding the program's External tensors
// (several are merged; a key may appear in one only); out.bin is every output's raw bytes (tensors in contiguous order; Int and
// Double as 8 bytes, Bool as 1). --threads needs a thread pool (etrt::threadpool) linked in.
// Uses only the public SDK headers.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "etrt/runtime/runtime.h"
#if defined(ETRT_RUNNER_XNNPACK)  // the builds that link etrt::backend_xnnpack
#include "etrt/backends/xnnpack.h"
#endif

namespace {

struct Options {
  std::string program;
  std::vector<std::string> data;
  std::string method = "forward";
  std::vector<std::pair<size_t, std::vector<int64_t>>> shapes;  // --shape: input index, sizes
  std::string inputs;
  std::string outputs;
  long repeat = 1;
  int threads = 0;  // 0: leave the thread pool's default
  bool list_kernels = false;
  bool list_backends = false;
};

int fail(const etrt::Error& e) {
  std::fprintf(stderr, "error: %s\n", e.to_string().c_str());
  return 1;
}

int usage(const char* msg) {
  std::fprintf(stderr,
               "error: InvalidArgument: %s\n"
               "usage: etrt_runner PROGRAM [--data file.ptd]... [--method NAME] [--shape I=AxB...]... [--inputs in.bin] [--outputs out.bin] [--repeat N] [--threads N]\n"
               "       etrt_runner --list-kernels | --list-backends\n",
               msg);
  return 1;
}

etrt::Result<std::vector<char>> read_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return etrt::Error(etrt::ErrorCode::IoError, "cannot open '" + path + "': " + std::strerror(errno));
  std::vector<char> data;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) data.insert(data.end(), buf, buf + n);
  bool bad = std::ferror(f) != 0;
  std::fclose(f);
  if (bad) return etrt::Error(etrt::ErrorCode::IoError, "cannot read '" + path + "'");
  return data;
}

std::string shape(const etrt::Tensor& t) {
  std::string s = std::string(etrt::to_string(t.dtype())) + " [";
  for (int d = 0; d < t.dim(); ++d) s += (d ? ", " : "") + std::to_string(t.size(d));
  return s + "]";
}

// Appends a tensor's elements in contiguous order, whatever its strides.
void append_tensor(const etrt::Tensor& t, std::vector<char>* out) {
  size_t esize = t.element_size();
  int64_t numel = t.numel();
  if (numel == 0) return;
  const char* base = static_cast<const char*>(t.data());
  if (t.is_contiguous()) {
    out->insert(out->end(), base, base + static_cast<size_t>(numel) * esize);
    return;
  }
  int64_t index[etrt::Tensor::kMaxDims] = {};
  for (int64_t i = 0; i < numel; ++i) {
    int64_t offset = 0;
    for (int d = 0; d < t.dim(); ++d) offset += index[d] * t.stride(d);
    const char* p = base + offset * static_cast<int64_t>(esize);
    out->insert(out->end(), p, p + esize);
    for (int d = t.dim() - 1; d >= 0; --d) {
      if (++index[d] < t.size(d)) break;
      index[d] = 0;
    }
  }
}

int run(const Options& opt) {
  if (opt.list_kernels || opt.list_backends) {
    if (opt.list_kernels) {
      for (size_t i = 0; i < etrt::num_registered_kernels(); ++i) std::printf("%s\n", etrt::registered_kernel_name(i));
    }
    if (opt.list_backends) {
      for (size_t i = 0; i < etrt::num_registered_backends(); ++i) std::printf("%s\n", etrt::registered_backend_name(i));
    }
    if (opt.program.empty()) return 0;
  }
  if (opt.threads > 0) {
    etrt::Error err = etrt::set_parallel_num_threads(opt.threads);
    if (!err.ok()) return fail(err);
  }
  // Loading a method is where delegates do their one-time work (XNNPACK packs its weights).
#if defined(ETRT_RUNNER_XNNPACK)
  const etrt::backends::xnnpack::RuntimeStats before_load = etrt::backends::xnnpack::runtime_stats();
#endif
  auto load_start = std::chrono::steady_clock::now();
  etrt::Module module(opt.program, opt.data);
  auto method_or = module.method(opt.method);
  if (!method_or.ok()) return fail(method_or.error());
  etrt::Method& method = **method_or;
  const double load_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - load_start).count();
#if defined(ETRT_RUNNER_XNNPACK)
  const etrt::backends::xnnpack::RuntimeStats after_load = etrt::backends::xnnpack::runtime_stats();
#endif

  std::vector<char> input_bytes;
  if (!opt.inputs.empty()) {
    auto data = read_file(opt.inputs);
    if (!data.ok()) return fail(data.error());
    input_bytes = std::move(data).get();
  }
  std::vector<etrt::OwnedTensor> inputs;
  size_t needed = 0;
  for (size_t i = 0; i < method.num_inputs(); ++i) {
    if (method.input_tag(i) != etrt::Tag::Tensor) continue;  // scalars keep the program's value
    auto info = method.input_tensor_info(i);
    if (!info.ok()) return fail(info.error());
    std::vector<int64_t> sizes(info->sizes.begin(), info->sizes.end());
    for (const auto& shape : opt.shapes) {
      if (shape.first == i) sizes = shape.second;
    }
    auto owned = etrt::OwnedTensor::zeros(info->dtype, etrt::Span<const int64_t>(sizes.data(), sizes.size()));
    if (!owned.ok()) return fail(owned.error());
    const size_t nbytes = owned->tensor().nbytes();
    if (!opt.inputs.empty() && needed + nbytes <= input_bytes.size()) {
      std::memcpy(owned->tensor().data(), input_bytes.data() + needed, nbytes);
    }
    needed += nbytes;
    etrt::Error err = method.set_input(i, owned->tensor());
    if (!err.ok()) return fail(err);
    inputs.push_back(std::move(owned).get());
  }
  if (!opt.inputs.empty() && needed != input_bytes.size()) {
    return fail(etrt::Error(etrt::ErrorCode::InvalidArgument,
                            "'" + opt.inputs + "' has " + std::to_string(input_bytes.size()) + " bytes, but the inputs of '" +
                                opt.method + "' take " + std::to_string(needed)));
  }

  // With --repeat, a few untimed warm-up runs, then each run timed on its own for the median.
  std::vector<double> run_us;
  const long warmup = opt.repeat > 1 ? std::min(10L, opt.repeat / 10 + 1) : 0;
  for (long r = 0; r < warmup + opt.repeat; ++r) {
    auto start = std::chrono::steady_clock::now();
    etrt::Error err = method.execute();
    if (!err.ok()) return fail(err);
    if (r >= warmup) {
      run_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    }
  }

  std::vector<char> out;
  for (size_t i = 0; i < method.num_outputs(); ++i) {
    const etrt::Value& v = method.output(i);
    if (v.is_tensor()) {
      std::printf("output %zu: %s\n", i, shape(v.to_tensor()).c_str());
      append_tensor(v.to_tensor(), &out);
    } else if (v.is_int()) {
      int64_t x = v.to_int();
      std::printf("output %zu: Int %lld\n", i, static_cast<long long>(x));
      out.insert(out.end(), reinterpret_cast<char*>(&x), reinterpret_cast<char*>(&x) + sizeof(x));
    } else if (v.is_double()) {
      double x = v.to_double();
      std::printf("output %zu: Double %g\n", i, x);
      out.insert(out.end(), reinterpret_cast<char*>(&x), reinterpret_cast<char*>(&x) + sizeof(x));
    } else if (v.is_bool()) {
      char x = v.to_bool() ? 1 : 0;
      std::printf("output %zu: Bool %d\n", i, x);
      out.push_back(x);
    } else {
      std::printf("output %zu: %s\n", i, etrt::to_string(v.tag()));
    }
  }
  if (opt.repeat > 1) {
    std::sort(run_us.begin(), run_us.end());
    std::printf("%s: %ld runs, median_us=%.2f min_us=%.2f max_us=%.2f load_us=%.2f\n", opt.method.c_str(),
                opt.repeat, run_us[run_us.size() / 2], run_us.front(), run_us.back(), load_us);
  }
#if defined(ETRT_RUNNER_XNNPACK)
  // XNNPACK runtimes created (weights packed) while loading, and how many the runs added (none
  // unless the thread pool changed).
  const etrt::backends::xnnpack::RuntimeStats after_runs = etrt::backends::xnnpack::runtime_stats();
  std::printf("xnnpack: pack_runtimes=%llu pack_us=%.2f runs_repacked=%llu\n",
              static_cast<unsigned long long>(after_load.runtimes_created - before_load.runtimes_created),
              static_cast<double>(after_load.create_nanoseconds - before_load.create_nanoseconds) / 1e3,
              static_cast<unsigned long long>(after_runs.runtimes_created - after_load.runtimes_created));
#endif
  if (!opt.outputs.empty()) {
    std::FILE* f = std::fopen(opt.outputs.c_str(), "wb");
    if (f == nullptr) {
      return fail(etrt::Error(etrt::ErrorCode::IoError, "cannot open '" + opt.outputs + "': " + std::strerror(errno)));
    }
    bool ok = out.empty() || std::fwrite(out.data(), 1, out.size(), f) == out.size();
    ok = std::fclose(f) == 0 && ok;
    if (!ok) return fail(etrt::Error(etrt::ErrorCode::IoError, "cannot write '" + opt.outputs + "'"));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](std::string* dst) {
      if (i + 1 >= argc) return false;
      *dst = argv[++i];
      return true;
    };
    if (arg == "--method") {
      if (!value(&opt.method)) return usage("--method needs a name");
    } else if (arg == "--data") {
      std::string path;
      if (!value(&path)) return usage("--data needs a .ptd file");
      opt.data.push_back(path);
    } else if (arg == "--shape") {
      std::string spec;
      if (!value(&spec)) return usage("--shape needs INPUT=AxBx...");
      const size_t eq = spec.find('=');
      char* end = nullptr;
      const long index = std::strtol(spec.c_str(), &end, 10);
      if (eq == std::string::npos || end != spec.c_str() + eq || index < 0) return usage("--shape needs INPUT=AxBx...");
      std::vector<int64_t> sizes;
      const char* p = spec.c_str() + eq + 1;
      while (*p != '\0') {
        const long long n = std::strtoll(p, &end, 10);
        if (end == p || n < 0 || (*end != 'x' && *end != '\0')) return usage("--shape sizes must be like 2x3x4");
        sizes.push_back(n);
        p = *end == 'x' ? end + 1 : end;
      }
      opt.shapes.emplace_back(static_cast<size_t>(index), sizes);
    } else if (arg == "--inputs") {
      if (!value(&opt.inputs)) return usage("--inputs needs a file");
    } else if (arg == "--outputs") {
      if (!value(&opt.outputs)) return usage("--outputs needs a file");
    } else if (arg == "--repeat") {
      std::string n;
      if (!value(&n)) return usage("--repeat needs a count");
      char* end = nullptr;
      opt.repeat = std::strtol(n.c_str(), &end, 10);
      if (*end != '\0' || opt.repeat < 1) return usage("--repeat needs a positive count");
    } else if (arg == "--threads") {
      std::string n;
      if (!value(&n)) return usage("--threads needs a count");
      char* end = nullptr;
      long t = std::strtol(n.c_str(), &end, 10);
      if (*end != '\0' || t < 1 || t > 1024) return usage("--threads needs a positive count");
      opt.threads = static_cast<int>(t);
    } else if (arg == "--list-kernels") {
      opt.list_kernels = true;
    } else if (arg == "--list-backends") {
      opt.list_backends = true;
    } else if (arg == "-h" || arg == "--help") {
      std::printf("usage: etrt_runner PROGRAM [--data file.ptd]... [--method NAME] [--shape I=AxB...]... [--inputs in.bin] [--outputs out.bin] [--repeat N] [--threads N]\n"
                  "       etrt_runner --list-kernels | --list-backends\n");
      return 0;
    } else if (!arg.empty() && arg[0] == '-') {
      return usage(("unknown option " + arg).c_str());
    } else if (opt.program.empty()) {
      opt.program = arg;
    } else {
      return usage("more than one program given");
    }
  }
  if (opt.program.empty() && !opt.list_kernels && !opt.list_backends) return usage("no program given");
  return run(opt);
}
