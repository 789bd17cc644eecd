// etrt_soak [--seed S] [--threads N] [--modules M] [--ops K] [--seconds T] PROGRAM...
//
// The concurrency soak: N threads share M module slots and, chosen by a seeded random stream,
// load a PROGRAM into a slot (through the C ABI or the C++ API), run it and check its outputs
// against a single-threaded reference, reset its state, change the pool's thread count, free a
// module while other threads are calling it, and make racing calls on modules others are
// running or freeing. Each thread stops after K operations or T seconds, whichever is first.
//
// What is checked, against c_api.h, module.h and method.h:
//   - every output of a completed run equals the reference for its inputs (dynamic shapes: one
//     reference per input size; state: one per run since the last reset);
//   - a C ABI call returns OK or INVALID_STATE: "in use by another thread" (the method is busy)
//     or "freed" (only once a free of that module has begun; always once it has returned);
//   - a C++ set_input/execute/reset_state on a method another thread holds is InvalidState;
//   - nothing else: a sanitizer build reports any race or use of freed memory.
// The C ABI holds a method for one call only, so threads serialise their own checked
// set_input .. execute .. output sequences per module, as the header asks, and no module is
// freed while a thread reads its output data (memory of the module); every call races freely
// (metadata, output calls, method loading, free, and calls on handles already freed).
// Prints the figures, then "ok" (exit 0) or "failed".
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "etrt/runtime/c_api.h"
#include "etrt/runtime/parallel.h"
#include "etrt/runtime/runtime.h"

namespace {

constexpr int kStatefulRuns = 3;  // runs checked after each reset of a stateful method
constexpr int kVariants = 3;      // input sizes per program (one for a static program)

std::atomic<int> g_failures{0};
std::mutex g_print;

void failure(const std::string& what) {
  std::lock_guard<std::mutex> lock(g_print);
  if (g_failures.fetch_add(1) < 20) std::fprintf(stderr, "FAILED: %s\n", what.c_str());
}

struct Output {
  etrt::ScalarType dtype = etrt::ScalarType::Float;
  std::vector<int64_t> sizes;
  std::vector<uint8_t> bytes;
};

struct Variant {
  std::vector<etrt::OwnedTensor> inputs;  // live for the whole soak: bound memory stays valid
  std::vector<std::vector<Output>> runs;  // outputs of run k after a reset
};

struct Program {
  std::string path;
  bool stateful = false;
  bool dynamic = false;
  std::vector<Variant> variants;
};

// Same as the reference: exact, or within 1e-5 (relative past 1) for floats, whose sums a
// different thread count may split differently.
bool same(const Output& want, etrt::ScalarType dtype, const int64_t* sizes, size_t ndim, const void* data) {
  if (dtype != want.dtype || ndim != want.sizes.size()) return false;
  size_t numel = 1;
  for (size_t d = 0; d < ndim; ++d) {
    if (sizes[d] != want.sizes[d]) return false;
    numel *= static_cast<size_t>(sizes[d]);
  }
  size_t nbytes = numel * etrt::element_size(dtype);
  if (nbytes != want.bytes.size()) return false;
  if (dtype != etrt::ScalarType::Float) return std::memcmp(data, want.bytes.data(), nbytes) == 0;
  const auto* a = static_cast<const float*>(data);
  const auto* b = reinterpret_cast<const float*>(want.bytes.data());
  for (size_t k = 0; k < numel; ++k) {
    if (!(std::fabs(a[k] - b[k]) <= 1e-5f * std::fmax(1.0f, std::fabs(b[k])))) return false;
  }
  return true;
}

Output output_of(const etrt::Tensor& t) {
  Output o;
  o.dtype = t.dtype();
  o.sizes.assign(t.sizes().begin(), t.sizes().end());
  const auto* p = static_cast<const uint8_t*>(t.data());
  o.bytes.assign(p, p + t.nbytes());
  return o;
}

// Variant v's inputs: each dynamic dimension at a size between its bounds (the same for every
// dimension with the same bounds, as one symbol's are), deterministic values.
bool make_inputs(etrt::Method& method, int v, Variant* out, const std::string& path) {
  for (size_t i = 0; i < method.num_inputs(); ++i) {
    auto info = method.input_tensor_info(i);
    if (!info.ok()) return failure(path + ": input " + std::to_string(i) + ": " + info.error().to_string()), false;
    std::vector<int64_t> sizes(info->sizes.begin(), info->sizes.end());
    for (size_t d = 0; d < sizes.size() && info->dynamic; ++d) {
      int64_t lo = info->min_sizes[d], hi = info->max_sizes[d];
      sizes[d] = lo + (3 * v) % (hi - lo + 1);
    }
    auto owned = etrt::OwnedTensor::zeros(info->dtype, etrt::Span<const int64_t>(sizes.data(), sizes.size()));
    if (!owned.ok()) return failure(owned.error().to_string()), false;
    etrt::Tensor t = owned->tensor();
    for (int64_t k = 0; k < t.numel(); ++k) {
      if (info->dtype == etrt::ScalarType::Float) {
        static_cast<float*>(t.data())[k] = static_cast<float>(std::sin(0.37 * static_cast<double>(k + 11 * i) + v));
      } else if (info->dtype == etrt::ScalarType::Long) {
        // Distinct below 8 for up to 8 elements: valid, unrepeated positions into a cache of 8.
        static_cast<int64_t*>(t.data())[k] = (k * 3 + static_cast<int64_t>(i) + v) % 8;
      }
    }
    out->inputs.push_back(std::move(owned).get());
  }
  return true;
}

// The single-threaded reference of every variant, from a fresh module.
bool reference(Program* p) {
  etrt::Module module(p->path);
  auto method = module.method("forward");
  if (!method.ok()) return failure(p->path + ": " + method.error().to_string()), false;
  etrt::Method& m = **method;
  p->stateful = m.num_states() > 0;
  for (size_t i = 0; i < m.num_inputs(); ++i) {
    auto info = m.input_tensor_info(i);
    p->dynamic = p->dynamic || (info.ok() && info->dynamic);
  }
  for (int v = 0; v < (p->dynamic ? kVariants : 1); ++v) {
    Variant var;
    if (!make_inputs(m, v, &var, p->path)) return false;
    if (!m.reset_state().ok()) return failure(p->path + ": reset_state"), false;
    for (int k = 0; k < (p->stateful ? kStatefulRuns : 1); ++k) {
      for (size_t i = 0; i < var.inputs.size(); ++i) {
        etrt::Error err = m.set_input(i, var.inputs[i].tensor());
        if (!err.ok()) return failure(p->path + ": set_input: " + err.to_string()), false;
      }
      etrt::Error err = m.execute();
      if (!err.ok()) return failure(p->path + ": " + err.to_string()), false;
      std::vector<Output> outs;
      for (size_t i = 0; i < m.num_outputs(); ++i) {
        if (!m.output(i).is_tensor()) return failure(p->path + ": a non-tensor output"), false;
        outs.push_back(output_of(m.output(i).to_tensor()));
      }
      var.runs.push_back(std::move(outs));
    }
    p->variants.push_back(std::move(var));
  }
  return true;
}

enum class Api { C, Cpp };

// One module in a slot. The Entry outlives the module it names: threads that copied it keep
// calling a C handle after it is freed, which must then be refused.
struct Entry {
  const Program* program = nullptr;
  Api api = Api::C;
  etrt_module* handle = nullptr;
  std::atomic<etrt_method*> method{nullptr};  // once loaded: kept, and called, after the free
  std::shared_ptr<etrt::Module> module;        // C++: lives while a thread uses it
  std::mutex seq;                              // C ABI: one checked sequence at a time
  // C ABI: held while a thread reads output data, and by the free. Output data lives in the
  // module, so reading it across a free is the caller's bug (c_api.h); every call still races.
  std::mutex reading;
  std::atomic<bool> inputs_bound{false};       // C++: a checked run bound a whole variant
  std::atomic<bool> freeing{false}, freed{false};
};

struct Slot {
  std::mutex mu;
  std::shared_ptr<Entry> entry;
};

struct Counts {
  std::atomic<long> ops{0}, c_runs{0}, cpp_runs{0}, mismatches{0}, busy{0}, refused_freeing{0},
      refused_late{0}, loads{0}, frees{0}, resets{0}, thread_changes{0}, racing_calls{0};
};

Counts g;

// The last few modules freed: racing calls keep calling their handles after the free returned.
class Graveyard {
 public:
  void add(std::shared_ptr<Entry> e) {
    std::lock_guard<std::mutex> lock(mu_);
    if (entries_.size() < kSize) entries_.push_back(std::move(e));
    else entries_[next_++ % kSize] = std::move(e);
  }
  std::shared_ptr<Entry> pick(uint64_t r) {
    std::lock_guard<std::mutex> lock(mu_);
    return entries_.empty() ? nullptr : entries_[r % entries_.size()];
  }

 private:
  static constexpr size_t kSize = 8;
  std::mutex mu_;
  std::vector<std::shared_ptr<Entry>> entries_;
  size_t next_ = 0;
};

Graveyard g_freed;

std::shared_ptr<Entry> open_entry(const Program* p, Api api) {
  auto e = std::make_shared<Entry>();
  e->program = p;
  e->api = api;
  if (api == Api::C) {
    if (etrt_module_open(p->path.c_str(), &e->handle) != ETRT_STATUS_OK) {
      failure(std::string("open: ") + etrt_last_error());
      return nullptr;
    }
  } else {
    e->module = std::make_shared<etrt::Module>(p->path);
    if (!e->module->load().ok()) return failure("load " + p->path), nullptr;
  }
  ++g.loads;
  return e;
}

// Frees the module while other threads may be calling it.
void retire(const std::shared_ptr<Entry>& e) {
  e->freeing.store(true);
  if (e->api == Api::C) {
    std::lock_guard<std::mutex> lock(e->reading);
    etrt_module_free(e->handle);
  }
  std::atomic_store(&e->module, std::shared_ptr<etrt::Module>());  // C++: its last user frees it
  e->freed.store(true);
  ++g.frees;
  g_freed.add(e);
}

enum class Verdict { Ok, Busy, Freed, Failed };

// Judges one C ABI status by the contract; `freed_before`: the free had returned when the call
// started.
Verdict judge(etrt_status s, const Entry& e, bool freed_before, const char* call) {
  if (s == ETRT_STATUS_OK) {
    if (!freed_before) return Verdict::Ok;
    failure(std::string(call) + " succeeded on a freed module");
    return Verdict::Failed;
  }
  const char* why = etrt_last_error();
  if (s == ETRT_STATUS_INVALID_STATE && std::strstr(why, "freed") != nullptr) {
    if (!e.freeing.load()) {
      failure(std::string(call) + " refused as freed before any free began: " + why);
      return Verdict::Failed;
    }
    ++(freed_before ? g.refused_late : g.refused_freeing);
    return Verdict::Freed;
  }
  if (s == ETRT_STATUS_INVALID_STATE && std::strstr(why, "in use by another thread") != nullptr && !freed_before) {
    ++g.busy;
    return Verdict::Busy;
  }
  failure(std::string(call) + ": " + why);
  return Verdict::Failed;
}

etrt_method* c_method(Entry& e, bool* ok) {
  bool freed_before = e.freed.load();
  etrt_method* m = nullptr;
  *ok = judge(etrt_module_method(e.handle, "forward", &m), e, freed_before, "module_method") == Verdict::Ok;
  if (*ok) {
    etrt_method* expected = nullptr;
    if (!e.method.compare_exchange_strong(expected, m) && expected != m) failure("two handles for one method");
  }
  return m;
}

// A checked sequence through the C ABI: (reset,) set inputs, execute, compare outputs.
void run_c(Entry& e, std::mt19937_64& rng) {
  std::unique_lock<std::mutex> seq(e.seq, std::try_to_lock);
  if (!seq.owns_lock()) return;
  bool ok = false;
  etrt_method* m = c_method(e, &ok);
  if (!ok) return;
  const Program& p = *e.program;
  const Variant& var = p.variants[rng() % p.variants.size()];
  // Judged by whether the free had returned when the call started.
  auto step = [&](auto&& call, const char* name) {
    bool freed_before = e.freed.load();
    return judge(call(), e, freed_before, name) == Verdict::Ok;
  };
  if (p.stateful && !step([&] { return etrt_method_reset_state(m); }, "reset_state")) return;
  for (size_t k = 0; k < var.runs.size(); ++k) {
    for (size_t i = 0; i < var.inputs.size(); ++i) {
      const etrt::Tensor t = var.inputs[i].tensor();
      std::vector<int64_t> sizes(t.sizes().begin(), t.sizes().end());
      auto set = [&] {
        return etrt_method_set_input_tensor(m, i, t.data(), static_cast<int32_t>(t.dtype()), sizes.size(), sizes.data());
      };
      if (!step(set, "set_input")) return;
    }
    if (!step([&] { return etrt_method_execute(m); }, "execute")) return;
    std::lock_guard<std::mutex> reading(e.reading);
    for (size_t i = 0; i < var.runs[k].size(); ++i) {
      int32_t dtype = 0;
      size_t ndim = 0;
      const int64_t* sizes = nullptr;
      const void* data = nullptr;
      auto read = [&] { return etrt_method_output_tensor(m, i, &dtype, &ndim, &sizes, nullptr, &data); };
      if (!step(read, "output_tensor")) return;
      if (!same(var.runs[k][i], static_cast<etrt::ScalarType>(dtype), sizes, ndim, data)) {
        ++g.mismatches;
        failure("c-abi: " + p.path + ": output " + std::to_string(i) + " differs from the reference");
      }
    }
    ++g.c_runs;
  }
}

// A checked sequence through the C++ API, holding the method (reserve()) throughout.
void run_cpp(Entry& e, std::mt19937_64& rng) {
  std::shared_ptr<etrt::Module> module = std::atomic_load(&e.module);
  if (module == nullptr) return;
  auto method = module->method("forward");
  if (!method.ok()) return failure("c++: " + method.error().to_string());
  etrt::Method& m = **method;
  auto held = m.reserve();
  if (!held.ok()) {
    if (held.error().code() != etrt::ErrorCode::InvalidState) failure("c++: " + held.error().to_string());
    ++g.busy;
    return;
  }
  const Program& p = *e.program;
  const Variant& var = p.variants[rng() % p.variants.size()];
  if (p.stateful && !m.reset_state().ok()) return failure("c++: reset_state while held");
  for (size_t k = 0; k < var.runs.size(); ++k) {
    for (size_t i = 0; i < var.inputs.size(); ++i) {
      etrt::Error err = m.set_input(i, var.inputs[i].tensor());
      if (!err.ok()) return failure("c++: set_input: " + err.to_string());
    }
    etrt::Error err = m.execute();
    if (!err.ok()) return failure("c++: execute: " + err.to_string());
    for (size_t i = 0; i < var.runs[k].size(); ++i) {
      const etrt::Tensor& t = m.output(i).to_tensor();
      if (!same(var.runs[k][i], t.dtype(), t.sizes().data(), t.sizes().size(), t.data())) {
        ++g.mismatches;
        failure("c++: " + p.path + ": output " + std::to_string(i) + " differs from the reference");
      }
    }
    ++g.cpp_runs;
  }
  e.inputs_bound.store(true);
}

// Calls that race whatever else happens to the module: metadata, output reads and method
// loading through the C ABI (also on a freed handle); unheld runs and resets through C++.
void race(Entry& e, std::mt19937_64& rng) {
  ++g.racing_calls;
  if (e.api == Api::Cpp) {
    std::shared_ptr<etrt::Module> module = std::atomic_load(&e.module);
    if (module == nullptr) return;
    auto method = module->method("forward");
    if (!method.ok()) return failure("c++: " + method.error().to_string());
    // Unheld: refused while another thread holds the method, run (on the whole variant a
    // checked run bound last) otherwise.
    bool reset = rng() % 3 == 0;
    if (!reset && !e.inputs_bound.load()) return;
    etrt::Error err = reset ? (*method)->reset_state() : (*method)->execute();
    if (err.ok() && reset) ++g.resets;
    if (!err.ok() && err.code() != etrt::ErrorCode::InvalidState) failure("c++ unheld call: " + err.to_string());
    if (!err.ok()) ++g.busy;
    return;
  }
  bool freed_before = e.freed.load();
  etrt_method* m = e.method.load();
  size_t n = 0;
  int32_t kind = 0, dtype = 0, dynamic = 0;
  const int64_t *sizes = nullptr, *lo = nullptr, *hi = nullptr;
  const void* data = nullptr;
  const char* name = nullptr;
  int which = static_cast<int>(rng() % 8);
  if (m == nullptr && which >= 3) which = 2;
  switch (which) {
    case 0: judge(etrt_module_num_methods(e.handle, &n), e, freed_before, "num_methods"); break;
    case 1: judge(etrt_module_method_name(e.handle, 0, &name), e, freed_before, "method_name"); break;
    case 2: {
      bool ok = false;
      c_method(e, &ok);
      break;
    }
    case 3: judge(etrt_method_num_inputs(m, &n), e, freed_before, "num_inputs"); break;
    case 4: judge(etrt_method_output_kind(m, 0, &kind), e, freed_before, "output_kind"); break;
    case 5: judge(etrt_method_input_bounds(m, 0, &dynamic, &n, &lo, &hi), e, freed_before, "input_bounds"); break;
    case 6: judge(etrt_method_input_meta(m, 0, &dtype, &n, &sizes), e, freed_before, "input_meta"); break;
    default: {
      etrt_status s = etrt_method_output_tensor(m, 0, &dtype, &n, &sizes, nullptr, &data);
      // Before any run the output may have no memory yet: that is its own InvalidState.
      if (s == ETRT_STATUS_INVALID_STATE && std::strstr(etrt_last_error(), "no data yet") != nullptr) break;
      judge(s, e, freed_before, "output_tensor");
    }
  }
}

std::shared_ptr<Entry> take(Slot& slot) {
  std::lock_guard<std::mutex> lock(slot.mu);
  return slot.entry;
}

void worker(int t, uint64_t seed, long ops, std::chrono::steady_clock::time_point deadline,
            std::vector<Slot>& slots, const std::vector<Program>& programs) {
  std::mt19937_64 rng(seed * 1000003u + static_cast<uint64_t>(t));
  for (long done = 0; done < ops && g_failures == 0 && std::chrono::steady_clock::now() < deadline; ++done) {
    ++g.ops;
    Slot& slot = slots[rng() % slots.size()];
    int op = static_cast<int>(rng() % 100);
    if (op < 6) {  // load into the slot, freeing what was there
      auto fresh = open_entry(&programs[rng() % programs.size()], rng() % 2 == 0 ? Api::C : Api::Cpp);
      if (fresh == nullptr) return;
      std::shared_ptr<Entry> old;
      {
        std::lock_guard<std::mutex> lock(slot.mu);
        old = std::move(slot.entry);
        slot.entry = fresh;
      }
      if (old != nullptr) retire(old);
    } else if (op < 10) {  // free
      std::shared_ptr<Entry> old;
      {
        std::lock_guard<std::mutex> lock(slot.mu);
        old = std::move(slot.entry);
      }
      if (old != nullptr) retire(old);
    } else if (op < 13) {  // change the pool's thread count under everyone's runs
      etrt::Error err = etrt::set_parallel_num_threads(1 + static_cast<int>(rng() % 4));
      if (!err.ok()) return failure("set_parallel_num_threads: " + err.to_string());
      ++g.thread_changes;
    } else if (op < 60) {  // a checked run
      auto e = take(slot);
      if (e == nullptr) continue;
      if (e->api == Api::C) run_c(*e, rng);
      else run_cpp(*e, rng);
    } else {  // racing calls, on the slot's module or on one freed a moment ago
      auto e = rng() % 4 == 0 ? g_freed.pick(rng()) : take(slot);
      if (e != nullptr) race(*e, rng);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t seed = 1;
  int threads = 4, modules = 4;
  long ops = 200;
  double seconds = 60;
  std::vector<Program> programs;
  for (int a = 1; a < argc; ++a) {
    std::string arg = argv[a];
    if (arg == "--seed" && a + 1 < argc) seed = std::strtoull(argv[++a], nullptr, 10);
    else if (arg == "--threads" && a + 1 < argc) threads = std::atoi(argv[++a]);
    else if (arg == "--modules" && a + 1 < argc) modules = std::atoi(argv[++a]);
    else if (arg == "--ops" && a + 1 < argc) ops = std::atol(argv[++a]);
    else if (arg == "--seconds" && a + 1 < argc) seconds = std::atof(argv[++a]);
    else programs.push_back(Program{arg, false, false, {}});
  }
  if (programs.empty() || threads < 2 || modules < 1 || ops < 1 || seconds <= 0) {
    std::fprintf(stderr,
                 "usage: etrt_soak [--seed S] [--threads N>=2] [--modules M] [--ops K] [--seconds T] PROGRAM...\n");
    return 2;
  }
  if (etrt::parallel_num_threads() < 2 && !etrt::set_parallel_num_threads(2).ok()) {
    return failure("no thread pool attached"), 1;
  }
  for (Program& p : programs) {
    if (!reference(&p)) return 1;
  }
  // Every program through both APIs to begin with; the random stream takes over from there.
  std::vector<Slot> slots(static_cast<size_t>(modules));
  for (size_t s = 0; s < slots.size(); ++s) {
    slots[s].entry = open_entry(&programs[s % programs.size()], (s / programs.size()) % 2 == 0 ? Api::C : Api::Cpp);
    if (slots[s].entry == nullptr) return 1;
  }
  auto start = std::chrono::steady_clock::now();
  auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(seconds));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] { worker(t, seed, ops, deadline, slots, programs); });
  }
  for (auto& th : pool) th.join();
  for (Slot& slot : slots) {
    if (slot.entry != nullptr) retire(slot.entry);
  }
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int stateful = 0, dynamic = 0;
  for (const Program& p : programs) stateful += p.stateful ? 1 : 0, dynamic += p.dynamic ? 1 : 0;
  std::printf("soak: seed %llu threads %d modules %d programs %zu stateful %d dynamic %d ops %ld seconds %.1f\n",
              static_cast<unsigned long long>(seed), threads, modules, programs.size(), stateful, dynamic, g.ops.load(),
              took);
  std::printf(
      "soak-counts: c-abi-runs %ld cpp-runs %ld mismatches %ld busy %ld refused-while-freeing %ld "
      "refused-after-free %ld loads %ld frees %ld resets %ld thread-changes %ld racing-calls %ld\n",
      g.c_runs.load(), g.cpp_runs.load(), g.mismatches.load(), g.busy.load(), g.refused_freeing.load(),
      g.refused_late.load(), g.loads.load(), g.frees.load(), g.resets.load(), g.thread_changes.load(),
      g.racing_calls.load());
  std::printf("%s\n", g_failures == 0 ? "ok" : "failed");
  return g_failures == 0 ? 0 : 1;
}
