// How a program's work would spread over n threads, measured on one core: each parallel_for
// is cut as etrt's pool cuts it at n threads (the kernels see n threads and split for them),
// every chunk runs on the calling thread and is timed, and the chunks are then dealt to n
// virtual workers in order, each to the first one free (the pool's threads take chunks as they
// finish theirs). A loop's simulated time is its makespan plus a fixed hand-over cost; the time
// outside loops (and a loop the kernel left whole) stays serial. Per operator, and the run.
//
//   scaling_sim PROGRAM [--inputs in.bin] [--threads 2,4,8,16] [--runs N] [--sync-us U] [--top K] [--by-shape]
//
// It shows the work split, not the machine: memory bandwidth shared by the cores, caches that
// other cores fill, and a pool's real wake-ups are not in it. benchmarks/scaling_sim.py builds
// it and runs benchmarks/threads.py's programs; docs/SCALING.md says how it compares with runs
// at two threads.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "etrt/runtime/event_tracer.h"
#include "etrt/runtime/module.h"
#include "etrt/runtime/parallel.h"
#include "etrt/runtime/tensor_ptr.h"

namespace {

constexpr int64_t kChunksPerThread = 4;  // as src/threadpool/threadpool.cpp cuts a loop

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Sim {
  int threads = 1;
  double sync_ns = 1000.0;
  bool in_task = false;
  // The current operator's loops: their chunks' measured time and their simulated time.
  int64_t loop_ns = 0;
  double loop_sim_ns = 0.0;
  int64_t loops = 0;
  int64_t thin_loops = 0;  // cut into fewer chunks than threads
};
Sim g_sim;

void sim_parallel_for(int64_t begin, int64_t end, int64_t grain, etrt::RangeFn fn) {
  const int64_t range = end - begin;
  const int64_t chunks = g_sim.threads * kChunksPerThread;
  const int64_t tile = std::max(grain, (range + chunks - 1) / chunks);
  if (g_sim.in_task || range <= grain || g_sim.threads <= 1 || tile >= range) {
    fn(begin, end);  // whole, on the calling thread: serial time of its operator
    return;
  }
  g_sim.in_task = true;
  std::vector<double> free_at(static_cast<size_t>(g_sim.threads), 0.0);
  int64_t total = 0, n = 0;
  for (int64_t b = begin; b < end; b += tile, ++n) {
    const int64_t t0 = now_ns();
    fn(b, std::min(end, b + tile));
    const int64_t t = now_ns() - t0;
    total += t;
    *std::min_element(free_at.begin(), free_at.end()) += static_cast<double>(t);
  }
  g_sim.in_task = false;
  g_sim.loop_ns += total;
  g_sim.loop_sim_ns += *std::max_element(free_at.begin(), free_at.end()) + g_sim.sync_ns;
  ++g_sim.loops;
  if (n < g_sim.threads) ++g_sim.thin_loops;
}

int sim_num_threads() { return g_sim.threads; }

const etrt::ParallelBackend kSimBackend{sim_parallel_for, sim_num_threads, nullptr};

struct OpTimes {
  double serial_ns = 0.0;  // measured, on one core
  double sim_ns = 0.0;     // simulated at n threads
  int64_t calls = 0;
  int64_t loops = 0;
  int64_t thin_loops = 0;
};

class SimTracer : public etrt::EventTracer {
 public:
  std::map<std::string, OpTimes> ops;
  int64_t run_ns = 0;
  double run_sim_ns = 0.0;

  void begin_run(std::string_view) noexcept override {
    run_start_ = now_ns();
    in_ops_ns_ = 0;
    in_ops_sim_ns_ = 0.0;
  }
  void end_run(std::string_view, bool) noexcept override {
    run_ns = now_ns() - run_start_;
    run_sim_ns = static_cast<double>(run_ns - in_ops_ns_) + in_ops_sim_ns_;  // between operators: serial
  }
  void begin_operator(std::string_view op, uint32_t) noexcept override { begin(op); }
  void end_operator(std::string_view, uint32_t, etrt::Span<const etrt::Value* const> outputs) noexcept override {
    end(outputs);
  }
  void begin_delegate(std::string_view backend, uint32_t) noexcept override { begin(backend); }
  void end_delegate(std::string_view, uint32_t, etrt::Span<const etrt::Value* const> outputs) noexcept override {
    end(outputs);
  }
  bool by_shape = false;  // one row per operator and output shape

 private:
  void begin(std::string_view name) {
    name_.assign(name.data(), name.size());
    g_sim.loop_ns = 0;
    g_sim.loop_sim_ns = 0.0;
    g_sim.loops = g_sim.thin_loops = 0;
    op_start_ = now_ns();
  }
  void end(etrt::Span<const etrt::Value* const> outputs) {
    const int64_t t = now_ns() - op_start_;
    if (by_shape && outputs.size() > 0 && outputs[0] != nullptr && outputs[0]->is_tensor()) {
      name_ += " [";
      const auto sizes = outputs[0]->to_tensor().sizes();
      for (size_t d = 0; d < sizes.size(); ++d) name_ += (d ? "," : "") + std::to_string(sizes[d]);
      name_ += "]";
    }
    const double sim = static_cast<double>(t - g_sim.loop_ns) + g_sim.loop_sim_ns;
    OpTimes& o = ops[name_];
    o.serial_ns += static_cast<double>(t);
    o.sim_ns += sim;
    ++o.calls;
    o.loops += g_sim.loops;
    o.thin_loops += g_sim.thin_loops;
    in_ops_ns_ += t;
    in_ops_sim_ns_ += sim;
  }
  std::string name_;
  int64_t run_start_ = 0, op_start_ = 0, in_ops_ns_ = 0;
  double in_ops_sim_ns_ = 0.0;
};

int fail(const etrt::Error& e) {
  std::fprintf(stderr, "scaling_sim: %s\n", e.message().c_str());
  return 1;
}

std::vector<int> parse_threads(const std::string& s) {
  std::vector<int> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(std::atoi(item.c_str()));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string program, inputs_path;
  std::vector<int> thread_counts = {2, 4, 8, 16};
  int runs = 5, top = 12;
  bool by_shape = false;
  double sync_us = 1.0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "scaling_sim: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--inputs") inputs_path = next();
    else if (a == "--threads") thread_counts = parse_threads(next());
    else if (a == "--runs") runs = std::atoi(next().c_str());
    else if (a == "--sync-us") sync_us = std::atof(next().c_str());
    else if (a == "--top") top = std::atoi(next().c_str());
    else if (a == "--by-shape") by_shape = true;
    else if (!a.empty() && a[0] != '-' && program.empty()) program = a;
    else {
      std::fprintf(stderr, "usage: scaling_sim PROGRAM [--inputs in.bin] [--threads 2,4,8,16] [--runs N] [--sync-us U] [--top K] [--by-shape]\n");
      return 2;
    }
  }
  if (program.empty() || runs < 1) {
    std::fprintf(stderr, "usage: scaling_sim PROGRAM [--inputs in.bin] [--threads 2,4,8,16] [--runs N] [--sync-us U] [--top K] [--by-shape]\n");
    return 2;
  }
  etrt::set_parallel_backend(&kSimBackend);
  g_sim.sync_ns = sync_us * 1e3;
  etrt::Module module(program);
  auto method_or = module.method("forward");
  if (!method_or.ok()) return fail(method_or.error());
  etrt::Method& method = **method_or;
  std::vector<char> bytes;
  if (!inputs_path.empty()) {
    std::ifstream f(inputs_path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  std::vector<etrt::OwnedTensor> inputs;
  size_t used = 0;
  for (size_t i = 0; i < method.num_inputs(); ++i) {
    if (method.input_tag(i) != etrt::Tag::Tensor) continue;
    auto info = method.input_tensor_info(i);
    if (!info.ok()) return fail(info.error());
    auto owned = etrt::OwnedTensor::zeros(info->dtype, info->sizes);
    if (!owned.ok()) return fail(owned.error());
    const size_t nbytes = owned->tensor().nbytes();
    if (used + nbytes <= bytes.size()) std::memcpy(owned->tensor().data(), bytes.data() + used, nbytes);
    used += nbytes;
    etrt::Error err = method.set_input(i, owned->tensor());
    if (!err.ok()) return fail(err);
    inputs.push_back(std::move(owned).get());
  }
  if (!bytes.empty() && used != bytes.size()) {
    std::fprintf(stderr, "scaling_sim: %s has %zu bytes, the inputs take %zu\n", inputs_path.c_str(), bytes.size(), used);
    return 1;
  }
  SimTracer tracer;
  tracer.by_shape = by_shape;
  method.set_event_tracer(&tracer);
  thread_counts.insert(thread_counts.begin(), 1);
  double one = 0.0;
  for (int n : thread_counts) {
    g_sim.threads = n;
    std::vector<double> totals;
    std::map<std::string, std::vector<OpTimes>> per_run;
    for (int r = -1; r < runs; ++r) {  // one warm-up run first: caches and kept layouts
      tracer.ops.clear();
      etrt::Error err = method.execute();
      if (!err.ok()) return fail(err);
      if (r < 0) continue;
      totals.push_back(tracer.run_sim_ns);
      for (const auto& [name, o] : tracer.ops) per_run[name].push_back(o);
    }
    // Medians over the runs, so that a run another process stalled does not count.
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    std::map<std::string, OpTimes> sums;
    for (const auto& [name, all] : per_run) {
      std::vector<double> serial, sim;
      for (const OpTimes& o : all) {
        serial.push_back(o.serial_ns);
        sim.push_back(o.sim_ns);
      }
      OpTimes& s = sums[name];
      s = all.front();
      s.serial_ns = median(serial);
      s.sim_ns = median(sim);
    }
    const double total = median(totals) / 1e3;
    if (n == 1) one = total;
    std::printf("threads %d: run %.1f us simulated, speed-up %.2f over one thread\n", n, total, one / total);
    if (n == 1) continue;
    std::vector<std::pair<std::string, OpTimes>> rows(sums.begin(), sums.end());
    // The operators that keep the most time from n threads: sim - serial / n.
    auto lost = [n](const OpTimes& o) { return o.sim_ns - o.serial_ns / n; };
    std::sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) { return lost(a.second) > lost(b.second); });
    std::printf("  %-44s %6s %6s %7s %11s %11s %8s %9s\n", "operator", "calls", "loops", "thin", "1 core us",
                "simulated", "speed-up", "lost us");
    for (int k = 0; k < top && k < static_cast<int>(rows.size()); ++k) {
      const OpTimes& o = rows[static_cast<size_t>(k)].second;
      std::printf("  %-44s %6lld %6lld %7lld %11.1f %11.1f %8.2f %9.1f\n", rows[static_cast<size_t>(k)].first.c_str(),
                  static_cast<long long>(o.calls), static_cast<long long>(o.loops),
                  static_cast<long long>(o.thin_loops), o.serial_ns / 1e3, o.sim_ns / 1e3,
                  o.sim_ns > 0 ? o.serial_ns / o.sim_ns : 0.0, lost(o) / 1e3);
    }
  }
  method.set_event_tracer(nullptr);
  return 0;
}
