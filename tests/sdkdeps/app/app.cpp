// Runs a program calling mylib::scaled_relu with the plugin linked beside etrt: prints the
// outputs, whether the registry holds the kernel, and each libetrt.so mapped.
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "etrt/runtime/kernel.h"
#include "etrt/runtime/runtime.h"
#include "etrt/runtime/tensor_ptr.h"
#include "etrt_customop/scaled_relu.h"

int main(int argc, char** argv) {
  std::printf("registered %d\n", etrt::find_kernel(etrt_customop::kScaledRelu) != nullptr);
  etrt::Module module(argv[1]);
  std::vector<float> x(3 * 8);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) - 3.0f;
  auto input = etrt::from_blob(x.data(), etrt::ScalarType::Float, {3, 8});
  auto outputs = module.forward({etrt::Value(*input)});
  if (!outputs.ok()) {
    std::fprintf(stderr, "%s\n", outputs.error().to_string().c_str());
    return 1;
  }
  const etrt::Tensor& y = (*outputs)[0].to_tensor();
  std::printf("out");
  for (int64_t i = 0; i < y.numel(); ++i) std::printf(" %.6f", y.data_as<float>()[i]);
  std::printf("\n");
  std::set<std::string> maps;
  std::ifstream in("/proc/self/maps");
  for (std::string line; std::getline(in, line);) {
    if (line.size() > 11 && line.compare(line.size() - 11, 11, "/libetrt.so") == 0)
      maps.insert(line.substr(line.find('/')));
  }
  for (const auto& path : maps) std::printf("libetrt %s\n", path.c_str());
  return 0;
}
