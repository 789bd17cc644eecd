#include <algorithm>
#include <cstdio>

#include "etrt/runtime/kernel.h"
#include "etrt/runtime/tensor.h"
#include "etrt_customop/scaled_relu.h"

namespace {

// args: x, alpha, then the output (planned by the exporter, same shape as x).
void scaled_relu(etrt::KernelContext& ctx, etrt::Span<etrt::Value*> args) {
  const etrt::Tensor& x = args[0]->to_tensor();
  const double alpha = args[1]->scalar_to_double();
  etrt::Tensor& out = args[2]->to_tensor();
  if (x.dtype() != etrt::ScalarType::Float || out.numel() != x.numel()) {
    ctx.fail(etrt::Error(etrt::ErrorCode::InvalidArgument, "mylib::scaled_relu takes float32"));
    return;
  }
  const float* in = x.data_as<float>();
  float* o = out.data_as<float>();
  const float a = static_cast<float>(alpha);
  for (int64_t i = 0; i < x.numel(); ++i) o[i] = a * std::max(in[i], 0.0f);
}

const bool registered = [] {
  etrt::Error err = etrt::register_kernel({etrt_customop::kScaledRelu, &scaled_relu});
  if (!err.ok()) std::fprintf(stderr, "etrt_customop: %s\n", err.to_string().c_str());
  return err.ok();
}();

}  // namespace
