// sigmoid and SiLU over contiguous floats at the instruction set kernel_isa() names.
#pragma once

#include <cstdint>

namespace etrt {
namespace kernels {

// The scalar reference both use past the vector form's range (|x| > 87.3): exp over the whole
// float range and a divide, so results that underflow to denormals or 0 come out as ATen's.
float logistic_exact(bool silu, float x);

void sigmoid_contiguous(float* o, const float* a, int64_t n);
void silu_contiguous(float* o, const float* a, int64_t n);

}  // namespace kernels
}  // namespace etrt
