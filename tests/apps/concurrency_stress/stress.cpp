// concurrency_stress [--threads N] [--iterations K] PROGRAM...
//
// Drives every PROGRAM from many threads through the C++ API and the C ABI, the ways the
// threading contract (module.h, method.h, c_api.h) allows and the ways it rejects, and checks
// each result against a single-threaded run:
//   shared-cold     N threads share one Module nobody loaded yet; each reserves the method,
//                   runs forward and checks its outputs; a busy method is InvalidState.
//   own-modules     N threads each run their own Module of the program at the same time.
//   c-abi-shared    N threads get the method of one cold C module and call set_input and
//                   execute on it at once: each call succeeds or is INVALID_STATE, nothing else.
//   free-during-run etrt_module_free while another thread is inside execute(): free waits for
//                   it, and a call arriving meanwhile is INVALID_STATE.
//   thread-switch   the pool's thread count changes while N threads run every program.
// Prints one line per phase; exits 0 only if every check passed.
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "etrt/runtime/c_api.h"
#include "etrt/runtime/parallel.h"
#include "etrt/runtime/runtime.h"

namespace {

std::atomic<int> g_failures{0};
std::mutex g_print;

void failure(const std::string& what) {
  std::lock_guard<std::mutex> lock(g_print);
  if (g_failures.fetch_add(1) < 20) std::fprintf(stderr, "FAILED: %s\n", what.c_str());
}

// One program's inputs (deterministic values) and its single-threaded outputs.
struct Case {
  std::string path;
  std::vector<etrt::OwnedTensor> inputs;
  std::vector<std::vector<uint8_t>> expected;  // bytes of each tensor output
  std::vector<etrt::ScalarType> expected_dtype;
};

bool fill_inputs(etrt::Method& method, Case* c) {
  for (size_t i = 0; i < method.num_inputs(); ++i) {
    auto info = method.input_tensor_info(i);
    if (!info.ok()) return failure(c->path + ": input " + std::to_string(i) + ": " + info.error().to_string()), false;
    auto owned = etrt::OwnedTensor::zeros(info->dtype, info->sizes);
    if (!owned.ok()) return failure(owned.error().to_string()), false;
    etrt::Tensor t = owned->tensor();
    for (int64_t k = 0; k < t.numel(); ++k) {
      if (info->dtype == etrt::ScalarType::Float) {
        static_cast<float*>(t.data())[k] = static_cast<float>(std::sin(0.37 * static_cast<double>(k + 11 * i)));
      } else if (info->dtype == etrt::ScalarType::Long) {
        static_cast<int64_t*>(t.data())[k] = (k * 7 + static_cast<int64_t>(i)) % 5;
      }
    }
    c->inputs.push_back(std::move(owned).get());
  }
  return true;
}

bool set_inputs(etrt::Method& method, const Case& c) {
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    etrt::Error err = method.set_input(i, c.inputs[i].tensor());
    if (!err.ok()) return failure(c.path + ": set_input: " + err.to_string()), false;
  }
  return true;
}

std::vector<uint8_t> bytes_of(const etrt::Tensor& t) {
  const auto* p = static_cast<const uint8_t*>(t.data());
  return std::vector<uint8_t>(p, p + t.nbytes());
}

// Same as the reference: exact, or within 1e-5 (relative past 1) for floats, whose sums a
// different thread count may split differently.
bool same(etrt::ScalarType dtype, const void* data, size_t nbytes, const std::vector<uint8_t>& want) {
  if (nbytes != want.size()) return false;
  if (dtype != etrt::ScalarType::Float) return std::memcmp(data, want.data(), nbytes) == 0;
  const auto* a = static_cast<const float*>(data);
  const auto* b = reinterpret_cast<const float*>(want.data());
  for (size_t k = 0; k < nbytes / sizeof(float); ++k) {
    if (!(std::fabs(a[k] - b[k]) <= 1e-5f * std::fmax(1.0f, std::fabs(b[k])))) return false;
  }
  return true;
}

// Checks a method's outputs against the reference; the caller holds the method.
bool check_outputs(const etrt::Method& method, const Case& c, const char* phase) {
  if (method.num_outputs() != c.expected.size()) return failure(std::string(phase) + ": output count"), false;
  for (size_t i = 0; i < c.expected.size(); ++i) {
    const etrt::Tensor& t = method.output(i).to_tensor();
    if (!same(t.dtype(), t.data(), t.nbytes(), c.expected[i])) {
      failure(std::string(phase) + ": " + c.path + ": output " + std::to_string(i) + " differs from the reference");
      return false;
    }
  }
  return true;
}

bool reference(Case* c) {
  etrt::Module module(c->path);
  auto method = module.method("forward");
  if (!method.ok()) return failure(c->path + ": " + method.error().to_string()), false;
  if (!fill_inputs(**method, c) || !set_inputs(**method, *c)) return false;
  etrt::Error err = (*method)->execute();
  if (!err.ok()) return failure(c->path + ": " + err.to_string()), false;
  for (size_t i = 0; i < (*method)->num_outputs(); ++i) {
    const etrt::Value& v = (*method)->output(i);
    if (!v.is_tensor()) return failure(c->path + ": output " + std::to_string(i) + " is not a tensor"), false;
    c->expected.push_back(bytes_of(v.to_tensor()));
    c->expected_dtype.push_back(v.to_tensor().dtype());
  }
  return true;
}

// Releases every thread at once, so first calls really overlap.
class StartLine {
 public:
  explicit StartLine(int n) : waiting_(n) {}
  void arrive() {
    waiting_.fetch_sub(1);
    while (waiting_.load() > 0) std::this_thread::yield();
  }

 private:
  std::atomic<int> waiting_;
};

template <typename F>
void run_threads(int n, F body) {
  StartLine start(n);
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t) threads.emplace_back([&, t] {
    start.arrive();
    body(t);
  });
  for (auto& th : threads) th.join();
}

void shared_cold(const Case& c, int threads, int iterations) {
  etrt::Module module(c.path);
  std::atomic<etrt::Method*> first{nullptr};
  std::atomic<long> runs{0}, busy{0}, mismatches{0};
  run_threads(threads, [&](int) {
    auto method = module.method("forward");
    if (!method.ok()) return failure("shared-cold: " + method.error().to_string());
    etrt::Method* expected = nullptr;
    if (!first.compare_exchange_strong(expected, *method) && expected != *method) {
      failure("shared-cold: threads got different Method objects");
    }
    std::vector<etrt::Value> inputs;
    for (const auto& in : c.inputs) inputs.emplace_back(in.tensor());
    for (int done = 0; done < iterations;) {
      auto held = (*method)->reserve();
      if (!held.ok()) {
        if (held.error().code() != etrt::ErrorCode::InvalidState) failure("shared-cold: " + held.error().to_string());
        ++busy;
        std::this_thread::yield();
        continue;
      }
      auto out = module.forward(inputs);
      if (!out.ok()) return failure("shared-cold: forward: " + out.error().to_string());
      if (!check_outputs(**method, c, "shared-cold")) ++mismatches;
      ++runs;
      ++done;
    }
  });
  // Unreserved calls while another thread holds the method must be refused, not run.
  auto method = module.method("forward");
  std::atomic<bool> held_now{false}, release{false};
  std::thread holder([&] {
    auto held = (*method)->reserve();
    held_now = true;
    while (!release) std::this_thread::yield();
  });
  while (!held_now) std::this_thread::yield();
  etrt::Error refused = (*method)->execute();
  etrt::Error refused_input = (*method)->set_input(0, c.inputs[0].tensor());
  release = true;
  holder.join();
  if (refused.code() != etrt::ErrorCode::InvalidState || refused.message().find("in use by another thread") == std::string::npos) {
    failure("shared-cold: execute on a held method gave: " + refused.to_string());
  }
  if (refused_input.code() != etrt::ErrorCode::InvalidState) failure("shared-cold: set_input on a held method");
  std::printf("shared-cold %s: threads %d runs %ld busy %ld mismatches %ld\n", c.path.c_str(), threads, runs.load(),
              busy.load(), mismatches.load());
  if (mismatches != 0) failure("shared-cold: mismatches");
}

void own_modules(const Case& c, int threads, int iterations, const char* phase) {
  std::atomic<long> runs{0}, mismatches{0};
  run_threads(threads, [&](int) {
    etrt::Module module(c.path);
    auto method = module.method("forward");
    if (!method.ok()) return failure(std::string(phase) + ": " + method.error().to_string());
    if (!set_inputs(**method, c)) return;
    for (int k = 0; k < iterations; ++k) {
      etrt::Error err = (*method)->execute();
      if (!err.ok()) return failure(std::string(phase) + ": " + err.to_string());
      if (!check_outputs(**method, c, phase)) ++mismatches;
      ++runs;
    }
  });
  std::printf("%s %s: threads %d runs %ld mismatches %ld\n", phase, c.path.c_str(), threads, runs.load(),
              mismatches.load());
}

etrt_status c_set_input(etrt_method* m, size_t i, const etrt::Tensor& t) {
  std::vector<int64_t> sizes(t.sizes().begin(), t.sizes().end());
  return etrt_method_set_input_tensor(m, i, t.data(), static_cast<int32_t>(t.dtype()), sizes.size(), sizes.data());
}

void c_abi_shared(const Case& c, int threads, int iterations) {
  etrt_module* module = nullptr;
  if (etrt_module_open(c.path.c_str(), &module) != ETRT_STATUS_OK) return failure(std::string("open: ") + etrt_last_error());
  std::atomic<etrt_method*> first{nullptr};
  std::atomic<long> ok{0}, busy{0};
  run_threads(threads, [&](int) {
    etrt_method* m = nullptr;
    if (etrt_module_method(module, "forward", &m) != ETRT_STATUS_OK) return failure(std::string("c-abi: ") + etrt_last_error());
    etrt_method* expected = nullptr;
    if (!first.compare_exchange_strong(expected, m) && expected != m) failure("c-abi: threads got different handles");
    for (int k = 0; k < iterations; ++k) {
      for (size_t i = 0; i < c.inputs.size(); ++i) {
        etrt_status s = c_set_input(m, i, c.inputs[i].tensor());
        if (s == ETRT_STATUS_INVALID_STATE) ++busy; else if (s == ETRT_STATUS_OK) ++ok;
        else failure(std::string("c-abi: set_input: ") + etrt_last_error());
      }
      etrt_status s = etrt_method_execute(m);
      if (s == ETRT_STATUS_INVALID_STATE) {
        ++busy;
        if (std::strstr(etrt_last_error(), "in use by another thread") == nullptr) failure(std::string("c-abi: ") + etrt_last_error());
      } else if (s == ETRT_STATUS_OK) {
        ++ok;
      } else {
        failure(std::string("c-abi: execute: ") + etrt_last_error());
      }
    }
  });
  // Read once every thread is done: the last run's outputs.
  etrt_method* m = first.load();
  for (size_t i = 0; m != nullptr && i < c.expected.size(); ++i) {
    int32_t dtype = 0;
    const void* data = nullptr;
    size_t ndim = 0;
    const int64_t* sizes = nullptr;
    if (etrt_method_output_tensor(m, i, &dtype, &ndim, &sizes, nullptr, &data) != ETRT_STATUS_OK) {
      failure(std::string("c-abi: output: ") + etrt_last_error());
      continue;
    }
    size_t n = etrt::element_size(static_cast<etrt::ScalarType>(dtype));
    for (size_t d = 0; d < ndim; ++d) n *= static_cast<size_t>(sizes[d]);
    if (!same(static_cast<etrt::ScalarType>(dtype), data, n, c.expected[i])) failure("c-abi: output differs from the reference");
  }
  etrt_module_free(module);
  std::printf("c-abi-shared %s: threads %d calls ok %ld busy %ld\n", c.path.c_str(), threads, ok.load(), busy.load());
}

// Inside execute(): tells the freeing thread to go, then holds the run until a call on the
// module is refused (the free has begun) and a little longer.
class HoldingTracer final : public etrt::EventTracer {
 public:
  explicit HoldingTracer(etrt_module* module) : module_(module) {}
  void begin_run(std::string_view) noexcept override {
    inside.store(true);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    size_t n = 0;
    while (etrt_module_num_methods(module_, &n) == ETRT_STATUS_OK) {
      if (std::chrono::steady_clock::now() > deadline) return;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    refused.store(std::strstr(etrt_last_error(), "being freed") != nullptr);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  void end_run(std::string_view, bool ok) noexcept override {
    run_ok.store(ok);
    finished.store(true);
  }
  void begin_operator(std::string_view, uint32_t) noexcept override {}
  void end_operator(std::string_view, uint32_t, etrt::Span<const etrt::Value* const>) noexcept override {}
  void begin_delegate(std::string_view, uint32_t) noexcept override {}
  void end_delegate(std::string_view, uint32_t, etrt::Span<const etrt::Value* const>) noexcept override {}

  std::atomic<bool> inside{false}, refused{false}, finished{false}, run_ok{false};

 private:
  etrt_module* module_;
};

void free_during_run(const Case& c, int rounds) {
  int waited = 0;
  for (int r = 0; r < rounds; ++r) {
    etrt_module* module = nullptr;
    etrt_method* m = nullptr;
    if (etrt_module_open(c.path.c_str(), &module) != ETRT_STATUS_OK || etrt_module_method(module, "forward", &m) != ETRT_STATUS_OK) {
      return failure(std::string("free-during-run: ") + etrt_last_error());
    }
    for (size_t i = 0; i < c.inputs.size(); ++i) c_set_input(m, i, c.inputs[i].tensor());
    HoldingTracer tracer(module);
    etrt_method_set_event_tracer(m, &tracer);
    etrt_status status = ETRT_STATUS_INTERNAL;
    std::thread runner([&] { status = etrt_method_execute(m); });
    while (!tracer.inside.load()) std::this_thread::yield();
    etrt_module_free(module);  // must wait for the run
    bool finished_first = tracer.finished.load();
    runner.join();
    if (!finished_first) failure("free-during-run: free returned before the running execute did");
    if (!tracer.refused.load()) failure("free-during-run: a call during free was not refused as 'being freed'");
    if (status != ETRT_STATUS_OK || !tracer.run_ok.load()) failure("free-during-run: the running execute failed");
    waited += finished_first ? 1 : 0;
  }
  std::printf("free-during-run %s: rounds %d free waited %d\n", c.path.c_str(), rounds, waited);
}

void thread_switch(const std::vector<Case>& cases, int threads, int iterations) {
  std::atomic<bool> stop{false};
  std::atomic<int> changes{0};
  std::thread changer([&] {
    for (int i = 0; !stop.load(); ++i) {
      etrt::Error err = etrt::set_parallel_num_threads(1 + i % 4);
      if (!err.ok()) return failure("thread-switch: " + err.to_string());
      ++changes;
      std::this_thread::sleep_for(std::chrono::microseconds(300));
    }
  });
  for (const Case& c : cases) own_modules(c, threads, iterations, "thread-switch");
  stop = true;
  changer.join();
  std::printf("thread-switch: thread count changes %d\n", changes.load());
  if (changes.load() == 0) failure("thread-switch: the thread count never changed");
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 8, iterations = 20;
  std::vector<Case> cases;
  for (int a = 1; a < argc; ++a) {
    std::string arg = argv[a];
    if (arg == "--threads" && a + 1 < argc) threads = std::atoi(argv[++a]);
    else if (arg == "--iterations" && a + 1 < argc) iterations = std::atoi(argv[++a]);
    else cases.push_back(Case{arg, {}, {}, {}});
  }
  if (cases.empty() || threads < 2 || iterations < 1) {
    std::fprintf(stderr, "usage: concurrency_stress [--threads N>=2] [--iterations K] PROGRAM...\n");
    return 2;
  }
  if (etrt::parallel_num_threads() < 2) {
    // The thread-switch phase needs the pool; so does a realistic load.
    if (!etrt::set_parallel_num_threads(2).ok()) return failure("no thread pool attached"), 1;
  }
  for (Case& c : cases) {
    if (!reference(&c)) return 1;
  }
  for (const Case& c : cases) {
    shared_cold(c, threads, iterations);
    own_modules(c, threads, iterations, "own-modules");
    c_abi_shared(c, threads, iterations);
    free_during_run(c, 5);
  }
  thread_switch(cases, threads, iterations);
  std::printf("%s\n", g_failures == 0 ? "ok" : "failed");
  return g_failures == 0 ? 0 : 1;
}
