// Runs linear_relu.etrt (relu(W x + b), W and b given by the formulas in make_program.py)
// through the packaged runtime and kernels, and checks the numbers.
#include <cmath>
#include <cstdio>
#include <vector>

#include "etrt/runtime/runtime.h"
#include "etrt/runtime/tensor_ptr.h"

int main(int argc, char** argv) {
  constexpr int kIn = 4, kOut = 3;
  const char* path = argc > 1 ? argv[1] : ETRT_TEST_PROGRAM;
  etrt::Module module(path);

  std::vector<float> x(kIn);
  for (int j = 0; j < kIn; ++j) x[j] = static_cast<float>(j) - 1.5f;
  auto input = etrt::from_blob(x.data(), etrt::ScalarType::Float, {1, kIn});
  if (!input.ok()) return std::fprintf(stderr, "%s\n", input.error().to_string().c_str()), 1;

  auto outputs = module.forward({etrt::Value(*input)});
  if (!outputs.ok()) {
    std::fprintf(stderr, "forward failed: %s\n", outputs.error().to_string().c_str());
    return 1;
  }
  const etrt::Tensor& y = (*outputs)[0].to_tensor();
  if (y.numel() != kOut) return std::fprintf(stderr, "expected %d outputs\n", kOut), 1;

  for (int i = 0; i < kOut; ++i) {
    double expected = 0.01 * i - 0.02;
    for (int j = 0; j < kIn; ++j) expected += (0.1 * (i + 1) - 0.05 * j) * x[j];
    expected = expected > 0 ? expected : 0;
    const float got = y.data_as<float>()[i];
    if (std::fabs(got - expected) > 1e-6) {
      std::fprintf(stderr, "output %d: got %.7g, expected %.7g\n", i, got, expected);
      return 1;
    }
  }
  std::printf("etrt %s: linear_relu.etrt matches (%d outputs)\n", etrt::version(), kOut);
  return 0;
}
