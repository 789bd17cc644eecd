// etrt_thread_switch PROGRAM INPUTS OUTPUTS COUNT...
//
// Loads PROGRAM once, runs it on INPUTS (raw bytes of every input, in order), then for each
// COUNT sets the shared pool to that many threads and runs again, checking every result equals
// the first. Finally runs while another thread keeps changing the count. Writes the last outputs
// to OUTPUTS. Exit status 0 only if every run succeeded and agreed, and XNNPACK packed weights
// (created runtimes) only when the method loaded and when a new count replaced the pool: the
// same number each time (one runtime per delegate), never in a run that kept the pool.
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "etrt/backends/xnnpack.h"
#include "etrt/runtime/runtime.h"
#include "etrt/threadpool/threadpool.h"

namespace {

int fail(const std::string& msg) {
  std::fprintf(stderr, "error: %s\n", msg.c_str());
  return 1;
}

std::vector<char> read_all(const char* path) {
  std::vector<char> data;
  std::FILE* f = std::fopen(path, "rb");
  if (f == nullptr) return data;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) data.insert(data.end(), buf, buf + n);
  std::fclose(f);
  return data;
}

std::vector<float> outputs(const etrt::Method& method) {
  std::vector<float> out;
  for (size_t i = 0; i < method.num_outputs(); ++i) {
    const etrt::Tensor& t = method.output(i).to_tensor();
    const float* p = static_cast<const float*>(t.data());
    out.insert(out.end(), p, p + t.numel());
  }
  return out;
}

double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::fmax(d, std::fabs(static_cast<double>(a[i]) - b[i]));
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return fail("usage: etrt_thread_switch PROGRAM INPUTS OUTPUTS COUNT...");
  if (!etrt::backends::xnnpack::is_registered()) return fail("XnnpackBackend is not registered");
  etrt::threadpool::ThreadPool& pool = etrt::threadpool::get_threadpool();

  using etrt::backends::xnnpack::runtime_stats;
  const uint64_t before_load = runtime_stats().runtimes_created;
  etrt::Module module(argv[1]);
  auto method_or = module.method("forward");
  if (!method_or.ok()) return fail(method_or.error().to_string());
  etrt::Method& method = **method_or;
  uint64_t created = runtime_stats().runtimes_created;
  const uint64_t per_pool = created - before_load;  // one per delegate
  std::printf("runtimes created at load: %llu\n", static_cast<unsigned long long>(per_pool));
  if (per_pool == 0) return fail("loading a delegated method created no XNNPACK runtime");

  std::vector<char> bytes = read_all(argv[2]);
  std::vector<etrt::OwnedTensor> inputs;
  size_t used = 0;
  for (size_t i = 0; i < method.num_inputs(); ++i) {
    auto info = method.input_tensor_info(i);
    if (!info.ok()) return fail(info.error().to_string());
    auto owned = etrt::OwnedTensor::zeros(info->dtype, info->sizes);
    if (!owned.ok()) return fail(owned.error().to_string());
    if (used + info->nbytes > bytes.size()) return fail("not enough input bytes");
    std::memcpy(owned->tensor().data(), bytes.data() + used, info->nbytes);
    used += info->nbytes;
    etrt::Error err = method.set_input(i, owned->tensor());
    if (!err.ok()) return fail(err.to_string());
    inputs.push_back(std::move(owned).get());
  }

  etrt::Error err = method.execute();
  if (!err.ok()) return fail("first run: " + err.to_string());
  const std::vector<float> reference = outputs(method);
  std::printf("threads %d: ok\n", pool.num_threads());
  for (int r = 0; r < 5 && err.ok(); ++r) err = method.execute();
  if (!err.ok()) return fail("repeated run: " + err.to_string());
  if (runtime_stats().runtimes_created != created) return fail("a run on the same pool created a runtime");
  std::printf("runs on the same pool repacked nothing\n");

  for (int a = 4; a < argc; ++a) {
    int n = std::atoi(argv[a]);
    const int previous = pool.num_threads();
    err = pool.set_num_threads(n);
    if (!err.ok()) return fail("set_num_threads(" + std::to_string(n) + "): " + err.to_string());
    err = method.execute();
    if (!err.ok()) return fail("run with " + std::to_string(n) + " threads: " + err.to_string());
    double d = max_diff(outputs(method), reference);
    const uint64_t now = runtime_stats().runtimes_created;
    std::printf("threads %d: max diff %g, runtimes created %llu\n", pool.num_threads(), d,
                static_cast<unsigned long long>(now - created));
    if (d > 1e-6) return fail("results changed with the thread count");
    // A new count replaces the pool: every delegate rebuilds once; the same count keeps it.
    if (n != previous && now - created != per_pool) return fail("a new pool did not rebuild each runtime once");
    if (n == previous && now != created) return fail("keeping the count rebuilt a runtime");
    created = now;
  }

  // The count changes while runs are in flight.
  std::atomic<bool> stop{false};
  std::thread flipper([&] {
    for (int i = 0; !stop.load(); ++i) {
      (void)pool.set_num_threads(1 + i % 3);
      std::this_thread::yield();
    }
  });
  double worst = 0;
  for (int r = 0; r < 200 && err.ok(); ++r) {
    err = method.execute();
    if (err.ok()) worst = std::fmax(worst, max_diff(outputs(method), reference));
  }
  stop.store(true);
  flipper.join();
  if (!err.ok()) return fail("run while the count changes: " + err.to_string());
  std::printf("concurrent changes: max diff %g\n", worst);
  if (worst > 1e-6) return fail("results changed while the count changed");

  std::FILE* f = std::fopen(argv[3], "wb");
  if (f == nullptr) return fail(std::string("cannot open ") + argv[3]);
  std::vector<float> out = outputs(method);
  std::fwrite(out.data(), sizeof(float), out.size(), f);
  std::fclose(f);
  return 0;
}
