// etrt_profile: runs one method with the etdump tracer attached and writes a .etdump file, or
// measures what tracing costs.
//
//   etrt_profile PROGRAM [--method NAME] [--inputs in.bin] [--runs N] [--shapes] [--threads N] --etdump out.etdump
//   etrt_profile PROGRAM [--method NAME] [--inputs in.bin] [--runs N] --overhead
//
// in.bin is every tensor input's raw bytes, concatenated in input order (zeros when absent).
// --overhead prints the median execute() time with no tracer, with a tracer that does nothing
// and with ETDumpGen, measured interleaved so drift hits all three alike.
// Uses only the public SDK headers.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "etrt/etdump/etdump.h"
#include "etrt/runtime/runtime.h"

namespace {

struct Options {
  std::string program;
  std::string method = "forward";
  std::string inputs;
  std::string etdump;
  long runs = 1;
  int threads = 0;
  bool shapes = false;
  bool overhead = false;
};

int fail(const etrt::Error& e) {
  std::fprintf(stderr, "error: %s\n", e.to_string().c_str());
  return 1;
}

constexpr const char* kUsage =
    "usage: etrt_profile PROGRAM [--method NAME] [--inputs in.bin] [--runs N] [--shapes] [--threads N] --etdump OUT\n"
    "       etrt_profile PROGRAM [--method NAME] [--inputs in.bin] [--runs N] --overhead\n";

int usage(const char* msg) {
  std::fprintf(stderr, "error: InvalidArgument: %s\n%s", msg, kUsage);
  return 1;
}

// The cost of the hook itself: virtual calls that record nothing.
class NullTracer final : public etrt::EventTracer {
 public:
  void begin_run(std::string_view) noexcept override {}
  void end_run(std::string_view, bool) noexcept override {}
  void begin_operator(std::string_view, uint32_t) noexcept override {}
  void end_operator(std::string_view, uint32_t, etrt::Span<const etrt::Value* const>) noexcept override {}
  void begin_delegate(std::string_view, uint32_t) noexcept override {}
  void end_delegate(std::string_view, uint32_t, etrt::Span<const etrt::Value* const>) noexcept override {}
};

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

// Binds every tensor input from `path` (or zeros); the returned tensors must outlive execute().
etrt::Result<std::vector<etrt::OwnedTensor>> bind_inputs(etrt::Method& method, const std::string& path) {
  std::vector<char> bytes;
  if (!path.empty()) {
    auto data = read_file(path);
    if (!data.ok()) return data.error();
    bytes = std::move(data).get();
  }
  std::vector<etrt::OwnedTensor> inputs;
  size_t used = 0;
  for (size_t i = 0; i < method.num_inputs(); ++i) {
    if (method.input_tag(i) != etrt::Tag::Tensor) continue;
    auto info = method.input_tensor_info(i);
    if (!info.ok()) return info.error();
    auto owned = etrt::OwnedTensor::zeros(info->dtype, info->sizes);
    if (!owned.ok()) return owned.error();
    if (!path.empty() && used + info->nbytes <= bytes.size()) {
      std::memcpy(owned->tensor().data(), bytes.data() + used, info->nbytes);
    }
    used += info->nbytes;
    etrt::Error err = method.set_input(i, owned->tensor());
    if (!err.ok()) return err;
    inputs.push_back(std::move(owned).get());
  }
  if (!path.empty() && used != bytes.size()) {
    return etrt::Error(etrt::ErrorCode::InvalidArgument, "'" + path + "' has " + std::to_string(bytes.size()) +
                                                             " bytes, but the inputs take " + std::to_string(used));
  }
  return inputs;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

int measure_overhead(etrt::Method& method, long runs) {
  NullTracer null_tracer;
  constexpr long kBlock = 20;
  etrt::etdump::ETDumpConfig config;
  config.max_events = 1 << 20;
  auto gen = etrt::etdump::ETDumpGen::create(config);
  if (!gen.ok()) return fail(gen.error());
  etrt::EventTracer* tracers[3] = {nullptr, &null_tracer, gen->get()};
  std::vector<double> samples[3];
  for (int t = 0; t < 3; ++t) {  // warm up caches and the kernels' scratch memory
    method.set_event_tracer(tracers[t]);
    for (long r = 0; r < kBlock; ++r) {
      etrt::Error err = method.execute();
      if (!err.ok()) return fail(err);
    }
  }
  for (long done = 0; done < runs; done += kBlock) {
    for (int t = 0; t < 3; ++t) {
      method.set_event_tracer(tracers[t]);
      (*gen)->reset();
      for (long r = 0; r < kBlock && done + r < runs; ++r) {
        auto start = std::chrono::steady_clock::now();
        etrt::Error err = method.execute();
        auto end = std::chrono::steady_clock::now();
        if (!err.ok()) return fail(err);
        samples[t].push_back(std::chrono::duration<double, std::micro>(end - start).count());
      }
    }
  }
  method.set_event_tracer(nullptr);
  double none = median(samples[0]), null_us = median(samples[1]), etdump_us = median(samples[2]);
  std::printf("median execute() over %ld runs: no_tracer_us=%.3f null_tracer_us=%.3f etdump_us=%.3f "
              "(null/none %.3f, etdump/none %.3f)\n",
              runs, none, null_us, etdump_us, null_us / none, etdump_us / none);
  return 0;
}

int run(const Options& opt) {
  if (opt.threads > 0) {
    etrt::Error err = etrt::set_parallel_num_threads(opt.threads);
    if (!err.ok()) return fail(err);
  }
  etrt::Module module(opt.program);
  auto method_or = module.method(opt.method);
  if (!method_or.ok()) return fail(method_or.error());
  etrt::Method& method = **method_or;
  auto inputs = bind_inputs(method, opt.inputs);
  if (!inputs.ok()) return fail(inputs.error());

  if (opt.overhead) return measure_overhead(method, opt.runs);

  etrt::etdump::ETDumpConfig config;
  config.record_shapes = opt.shapes;
  config.max_runs = static_cast<size_t>(opt.runs);
  config.max_events = std::min<size_t>(std::max<size_t>(static_cast<size_t>(opt.runs) * 512, 1 << 16), 1 << 22);
  auto gen = etrt::etdump::ETDumpGen::create(config);
  if (!gen.ok()) return fail(gen.error());
  module.set_event_tracer(gen->get());
  for (long r = 0; r < opt.runs; ++r) {
    etrt::Error err = method.execute();
    if (!err.ok()) return fail(err);
  }
  module.set_event_tracer(nullptr);
  etrt::Error err = (*gen)->write(opt.etdump);
  if (!err.ok()) return fail(err);
  std::printf("wrote %s: %zu runs, %zu events, %zu dropped\n", opt.etdump.c_str(), (*gen)->num_runs(),
              (*gen)->num_events(), (*gen)->dropped_events());
  return 0;
}

bool parse_count(const char* text, long max, long* out) {
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || v < 1 || v > max) return false;
  *out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    const char* next = i + 1 < argc ? argv[i + 1] : nullptr;
    if (arg == "--method" || arg == "--inputs" || arg == "--etdump" || arg == "--runs" || arg == "--threads") {
      if (next == nullptr) return usage((arg + " needs a value").c_str());
      ++i;
      if (arg == "--method") opt.method = next;
      if (arg == "--inputs") opt.inputs = next;
      if (arg == "--etdump") opt.etdump = next;
      if (arg == "--runs" && !parse_count(next, 1 << 24, &opt.runs)) return usage("--runs needs a positive count");
      if (arg == "--threads") {
        long t = 0;
        if (!parse_count(next, 1024, &t)) return usage("--threads needs a positive count");
        opt.threads = static_cast<int>(t);
      }
    } else if (arg == "--shapes") {
      opt.shapes = true;
    } else if (arg == "--overhead") {
      opt.overhead = true;
    } else if (arg == "-h" || arg == "--help") {
      std::printf("%s", kUsage);
      return 0;
    } else if (!arg.empty() && arg[0] == '-') {
      return usage(("unknown option " + arg).c_str());
    } else if (opt.program.empty()) {
      opt.program = arg;
    } else {
      return usage("more than one program given");
    }
  }
  if (opt.program.empty()) return usage("no program given");
  if (opt.etdump.empty() && !opt.overhead) return usage("give --etdump OUT or --overhead");
  return run(opt);
}
