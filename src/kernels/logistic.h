// sigmoid and SiLU over contiguous floats at the instruction set kernel_isa() names; leaky ReLU's
// step.
#pragma once

#include <cstdint>

namespace etrt {
namespace kernels {

// The scalar reference both use past the vector form's range (|x| > 87.3): exp over the whole
// float range and a divide, so results that underflow to denormals or 0 come out as ATen's.
float logistic_exact(bool silu, float x);

void sigmoid_contiguous(float* o, const float* a, int64_t n);
void silu_contiguous(float* o, const float* a, int64_t n);

// aten::leaky_relu's step (NaN takes the product, as there): the op and the convolution's
// epilogue both apply it, so their outputs are the same bits.
inline float leaky_relu_step(float x, float slope) { return x > 0.0f ? x : x * slope; }

}  // namespace kernels
}  // namespace etrt
