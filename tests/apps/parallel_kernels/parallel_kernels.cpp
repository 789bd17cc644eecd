// Runs a program's "forward" under a recording parallel backend that claims 4 threads and
// prints how many parallel_for calls split their range, i.e. which kernels would have used
// the thread pool. Chunks run one after another on this thread, so results stay exact.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "etrt/runtime/runtime.h"

namespace {

constexpr int kThreads = 4;
int g_calls = 0;
int g_split = 0;

void recording_parallel_for(int64_t begin, int64_t end, int64_t grain, etrt::RangeFn fn) {
  ++g_calls;
  const int64_t range = end - begin;
  const int64_t tile = std::max(grain, (range + kThreads - 1) / kThreads);
  if (tile < range) ++g_split;
  for (int64_t b = begin; b < end; b += tile) fn(b, std::min(end, b + tile));
}

int recording_num_threads() { return kThreads; }

int fail(const etrt::Error& e) {
  std::fprintf(stderr, "error: %s\n", e.to_string().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: parallel_kernels PROGRAM\n");
    return 2;
  }
  static const etrt::ParallelBackend backend{recording_parallel_for, recording_num_threads, nullptr};
  etrt::set_parallel_backend(&backend);

  etrt::Module module(argv[1]);
  auto method_or = module.method("forward");
  if (!method_or.ok()) return fail(method_or.error());
  etrt::Method& method = **method_or;
  std::vector<etrt::OwnedTensor> inputs;
  for (size_t i = 0; i < method.num_inputs(); ++i) {
    if (method.input_tag(i) != etrt::Tag::Tensor) continue;
    auto info = method.input_tensor_info(i);
    if (!info.ok()) return fail(info.error());
    auto owned = etrt::OwnedTensor::zeros(info->dtype, info->sizes);
    if (!owned.ok()) return fail(owned.error());
    etrt::Error err = method.set_input(i, owned->tensor());
    if (!err.ok()) return fail(err);
    inputs.push_back(std::move(owned).get());
  }
  etrt::Error err = method.execute();
  if (!err.ok()) return fail(err);
  std::printf("parallel_for calls: %d\nsplit calls: %d\n", g_calls, g_split);
  return 0;
}
