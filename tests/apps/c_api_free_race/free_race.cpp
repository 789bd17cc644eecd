// c_api_free_race [--rounds R] [--racers N] [--during-only] PROGRAM
//
// etrt_module_free racing calls on the module and its method, through the C ABI alone. Each
// round opens the program, loads "forward", binds zero inputs, and starts N racer threads that
// call every kind of entry point (execute, set_input, outputs, metadata, method loading) on the
// handles in turn while the main thread frees the module and opens the next one (which may
// reuse the freed memory). The contract of etrt_module_free (c_api.h):
//   - a call that starts before free returns succeeds or fails with ETRT_STATUS_INVALID_STATE;
//   - a call that starts after free returned fails with ETRT_STATUS_INVALID_STATE, even once a
//     new module took the freed one's place;
//   - no call touches freed memory (the sanitizer build reports it).
// --during-only keeps to what the contract promised before handles outlived their module: no
// call starts after free returned, no second module, no second free.
// Prints "free-race: rounds R calls C ok O refused I late L" and then "ok" or "failed".
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "etrt/runtime/c_api.h"

namespace {

std::atomic<int> g_failures{0};

void failure(const std::string& what) {
  if (g_failures.fetch_add(1) < 20) std::fprintf(stderr, "FAILED: %s\n", what.c_str());
}

struct Input {
  int32_t dtype = 0;
  std::vector<int64_t> sizes;
  std::vector<double> storage;  // zeros, 8-byte aligned, large enough for any dtype
};

struct Opened {
  etrt_module* module = nullptr;
  etrt_method* method = nullptr;
  std::vector<Input> inputs;
};

bool open(const char* path, Opened* o) {
  if (etrt_module_open(path, &o->module) != ETRT_STATUS_OK ||
      etrt_module_method(o->module, "forward", &o->method) != ETRT_STATUS_OK) {
    failure(std::string("open: ") + etrt_last_error());
    return false;
  }
  size_t n = 0;
  etrt_method_num_inputs(o->method, &n);
  o->inputs.resize(n);
  for (size_t i = 0; i < n; ++i) {
    Input& in = o->inputs[i];
    size_t ndim = 0, numel = 1;
    const int64_t* sizes = nullptr;
    if (etrt_method_input_meta(o->method, i, &in.dtype, &ndim, &sizes) != ETRT_STATUS_OK) {
      failure(std::string("input meta: ") + etrt_last_error());
      return false;
    }
    in.sizes.assign(sizes, sizes + ndim);
    for (int64_t s : in.sizes) numel *= static_cast<size_t>(s);
    in.storage.assign(numel + 1, 0.0);
    etrt_method_set_input_tensor(o->method, i, in.storage.data(), in.dtype, ndim, in.sizes.data());
  }
  return true;
}

// One call of kind `k` on the handles; its status.
etrt_status call(int k, const Opened& o) {
  size_t n = 0;
  int32_t kind = 0;
  const char* name = nullptr;
  const void* data = nullptr;
  etrt_method* m = nullptr;
  switch (k % 10) {
    case 0: return etrt_method_execute(o.method);
    case 1: {
      const Input& in = o.inputs[0];
      return etrt_method_set_input_tensor(o.method, 0, const_cast<double*>(in.storage.data()), in.dtype,
                                          in.sizes.size(), in.sizes.data());
    }
    case 2: return etrt_method_output_tensor(o.method, 0, nullptr, nullptr, nullptr, nullptr, &data);
    case 3: return etrt_method_num_inputs(o.method, &n);
    case 4: return etrt_method_output_kind(o.method, 0, &kind);
    case 5: return etrt_module_num_methods(o.module, &n);
    case 6: return etrt_module_method_name(o.module, 0, &name);
    case 7: return etrt_module_method(o.module, "forward", &m);
    case 8: return etrt_method_reset_state(o.method);
    default: {
      const Input& in = o.inputs[0];
      return etrt_method_check_input_tensor(o.method, 0, in.dtype, in.sizes.size(), in.sizes.data());
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 50, racers = 2;
  bool during_only = false;
  const char* path = nullptr;
  for (int a = 1; a < argc; ++a) {
    std::string arg = argv[a];
    if (arg == "--rounds" && a + 1 < argc) rounds = std::atoi(argv[++a]);
    else if (arg == "--racers" && a + 1 < argc) racers = std::atoi(argv[++a]);
    else if (arg == "--during-only") during_only = true;
    else path = argv[a];
  }
  if (path == nullptr || rounds < 1 || racers < 1) {
    std::fprintf(stderr, "usage: c_api_free_race [--rounds R] [--racers N] PROGRAM\n");
    return 2;
  }
  std::atomic<long> calls{0}, ok{0}, refused{0}, late{0};
  for (int r = 0; r < rounds && g_failures == 0; ++r) {
    Opened o;
    if (!open(path, &o)) return 1;
    std::atomic<int> started{0};
    std::atomic<bool> freed{false}, stop{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < racers; ++t) {
      threads.emplace_back([&, t] {
        bool counted = false;
        for (int k = t * 3, after = 0; after < 40 && !stop.load(); ++k) {
          bool was_freed = freed.load();
          if (was_freed && during_only) break;
          etrt_status s = call(k, o);
          ++calls;
          if (!counted) counted = true, started.fetch_add(1);
          if (s == ETRT_STATUS_OK) {
            ++ok;
            if (was_freed) failure("call " + std::to_string(k % 10) + " on a freed module succeeded");
          } else if (s == ETRT_STATUS_INVALID_STATE) {
            ++refused;
          } else {
            failure("call " + std::to_string(k % 10) + ": " + etrt_last_error());
          }
          if (was_freed) {
            ++after;
            ++late;
          }
        }
      });
    }
    while (started.load() < racers) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::microseconds(50 * (r % 8)));
    etrt_module_free(o.module);
    freed.store(true);
    if (during_only) {
      for (auto& th : threads) th.join();
      continue;
    }
    // The next module may take the freed one's memory; the stale handles must stay dead.
    Opened next;
    if (!open(path, &next)) stop.store(true);
    for (auto& th : threads) th.join();
    etrt_module_free(next.module);
    etrt_module_free(o.module);  // freeing a freed handle again is a no-op
  }
  std::printf("free-race: rounds %d calls %ld ok %ld refused %ld late %ld\n", rounds, calls.load(), ok.load(),
              refused.load(), late.load());
  std::printf("%s\n", g_failures == 0 ? "ok" : "failed");
  return g_failures == 0 ? 0 : 1;
}
