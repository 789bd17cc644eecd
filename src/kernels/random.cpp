// Kernels that draw random numbers: from the runtime's counter-based stream
// (etrt/runtime/random.h), so a seed gives the same values whatever the thread count. The
// distributions are torch's; the values are not (torch's generator is another).
#include <cmath>
#include <cstring>
#include <string>

#include "etrt/runtime/random.h"
#include "light.h"
#include "util.h"

namespace etrt {
namespace kernels {
namespace {

// [0, 1) with `digits` random bits (the significand of the output type: 24 for float32, 11 for
// float16, 8 for bfloat16), so every value is exact in that type and 1 is never reached.
inline float uniform01(uint64_t bits, int digits) {
  return std::ldexp(static_cast<float>(bits >> (64 - digits)), -digits);
}
// (0, 1] with 53 random bits, for logarithms.
inline double open_uniform(uint64_t bits) { return static_cast<double>((bits >> 11) + 1) * 0x1.0p-53; }

// Box-Muller from two draws.
inline float normal_f32(uint64_t seed, uint64_t counter) {
  const double r = std::sqrt(-2.0 * std::log(open_uniform(random_bits(seed, counter))));
  const double theta = 6.283185307179586 * open_uniform(random_bits(seed, counter + 1));
  return static_cast<float>(r * std::cos(theta));
}

enum class Dist { Uniform, Normal, Exponential };

// Element i of a floating output drawn from `dist`, scaled: uniform on [a, b), normal with
// mean a and deviation b, exponential with rate a.
struct Draw {
  Dist dist;
  double a, b;
  uint64_t seed, base;
  int digits;
  float operator()(int64_t i) const {
    const uint64_t c = base + 2 * static_cast<uint64_t>(i);  // two counters per element
    switch (dist) {
      case Dist::Uniform: {
        const float u = uniform01(random_bits(seed, c), digits);
        return a == 0.0 && b == 1.0 ? u : static_cast<float>(a + (b - a) * u);
      }
      case Dist::Normal: return static_cast<float>(a + b * normal_f32(seed, c));
      case Dist::Exponential: return static_cast<float>(-std::log(open_uniform(random_bits(seed, c))) / a);
    }
    return 0.0f;
  }
};

// Fills every element of a dense float32, float16 or bfloat16 output (any layout: the values
// are independent). Half types are drawn in their own precision, not rounded from float32, so
// rand stays below 1.
void fill_float(KernelContext& ctx, const char* op, Tensor* out, Dist dist, double a, double b) {
  if (out == nullptr) return;
  const ScalarType dt = out->dtype();
  if (dt != ScalarType::Float && dt != ScalarType::Half && dt != ScalarType::BFloat16) {
    fail(ctx, op, std::string("draws floating-point values, the output is ") + to_string(dt));
    return;
  }
  const int64_t n = out->numel();
  const int digits = dt == ScalarType::Float ? 24 : dt == ScalarType::Half ? 11 : 8;
  const Draw draw{dist, a, b, random_seed(), reserve_random(2 * static_cast<uint64_t>(n)), digits};
  parallel_chunks(n, 64, [&](int64_t begin, int64_t end) {
    if (dt == ScalarType::Float) {
      float* o = out->data_as<float>();
      for (int64_t i = begin; i < end; ++i) o[i] = draw(i);
      return;
    }
    uint16_t* o = out->data_as<uint16_t>();
    for (int64_t i = begin; i < end; ++i) o[i] = dt == ScalarType::Half ? float_to_half(draw(i)) : float_to_bfloat16(draw(i));
  });
}

Tensor* planned_out(KernelContext& ctx, const char* op, Span<Value*> args, size_t i, Span<const int64_t> sizes) {
  ScalarType dtype;
  if (!planned_dtype(ctx, op, args, i, &dtype)) return nullptr;
  return strided_output_arg(ctx, op, args, i, dtype, sizes);
}

bool no_generator(KernelContext& ctx, const char* op, Span<Value*> args, size_t i) {
  if (args[i]->is_none()) return true;
  fail(ctx, op, "a Generator argument is not supported; etrt draws from its own stream");
  return false;
}

// Integers uniform on [low, high) into any dtype.
void fill_randint(KernelContext& ctx, const char* op, Tensor* out, int64_t low, int64_t high) {
  if (out == nullptr) return;
  if (high <= low) {
    fail(ctx, op, "high (" + std::to_string(high) + ") must be greater than low (" + std::to_string(low) + ")");
    return;
  }
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  const int64_t n = out->numel();
  const uint64_t seed = random_seed(), base = reserve_random(static_cast<uint64_t>(n));
  const ScalarType dt = out->dtype();
  const size_t es = out->element_size();
  char* o = static_cast<char*>(out->data());
  parallel_chunks(n, 16, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t v = static_cast<int64_t>(static_cast<uint64_t>(low) +
                                             random_bits(seed, base + static_cast<uint64_t>(i)) % range);
      store_scalar(o + static_cast<size_t>(i) * es, dt, static_cast<double>(v), v, true);
    }
  });
}

}  // namespace

void op_rand(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::rand";
  Span<const int64_t> size;
  if (!check_nargs(ctx, op, args, 6) || !int_list_arg(ctx, op, args, 0, "size", &size)) return;
  fill_float(ctx, op, planned_out(ctx, op, args, 5, size), Dist::Uniform, 0.0, 1.0);
}

void op_randn(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::randn";
  Span<const int64_t> size;
  if (!check_nargs(ctx, op, args, 6) || !int_list_arg(ctx, op, args, 0, "size", &size)) return;
  fill_float(ctx, op, planned_out(ctx, op, args, 5, size), Dist::Normal, 0.0, 1.0);
}

void op_rand_like(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::rand_like";
  if (!check_nargs(ctx, op, args, 7)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  if (self != nullptr) fill_float(ctx, op, planned_out(ctx, op, args, 6, self->sizes()), Dist::Uniform, 0.0, 1.0);
}

void op_randn_like(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::randn_like";
  if (!check_nargs(ctx, op, args, 7)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  if (self != nullptr) fill_float(ctx, op, planned_out(ctx, op, args, 6, self->sizes()), Dist::Normal, 0.0, 1.0);
}

void op_uniform(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::uniform";
  double from, to;
  if (!check_nargs(ctx, op, args, 5) || !scalar_arg(ctx, op, args, 1, "from", &from) ||
      !scalar_arg(ctx, op, args, 2, "to", &to) || !no_generator(ctx, op, args, 3)) {
    return;
  }
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  if (self != nullptr) fill_float(ctx, op, planned_out(ctx, op, args, 4, self->sizes()), Dist::Uniform, from, to);
}

void op_exponential(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::exponential";
  double lambd;
  if (!check_nargs(ctx, op, args, 4) || !scalar_arg(ctx, op, args, 1, "lambd", &lambd) ||
      !no_generator(ctx, op, args, 2)) {
    return;
  }
  if (!(lambd > 0.0)) {
    fail(ctx, op, "lambd must be positive, got " + std::to_string(lambd));
    return;
  }
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  if (self != nullptr) fill_float(ctx, op, planned_out(ctx, op, args, 3, self->sizes()), Dist::Exponential, lambd, 0.0);
}

// normal.Tensor_float, normal.float_Tensor, normal.Tensor_Tensor: mean and std broadcast
// (each a tensor or a number), one standard normal draw per output element.
void normal_op(KernelContext& ctx, Span<Value*> args, const char* op) {
  if (!check_nargs(ctx, op, args, 4) || !no_generator(ctx, op, args, 2)) return;
  float scalars[2] = {0.0f, 1.0f};
  Tensor holders[2];
  const Tensor* operand[2];
  for (size_t k = 0; k < 2; ++k) {
    if (args[k]->is_scalar()) {
      scalars[k] = static_cast<float>(args[k]->scalar_to_double());
      holders[k] = Tensor(&scalars[k], ScalarType::Float, Span<const int64_t>());
      operand[k] = &holders[k];
    } else {
      operand[k] = float_tensor_arg(ctx, op, args, k, k == 0 ? "mean" : "std");
      if (operand[k] == nullptr) return;
    }
  }
  Shape shape = shape_of(*operand[0]);
  if (!broadcast_into(ctx, op, &shape, operand[1]->sizes())) return;
  Tensor* out = output_arg(ctx, op, args, 3, ScalarType::Float, shape.span());
  if (out == nullptr) return;
  const uint64_t seed = random_seed(), base = reserve_random(2 * static_cast<uint64_t>(out->numel()));
  const Tensor* ops[3] = {out, operand[0], operand[1]};
  int64_t index = 0;  // the output is contiguous and the loop serial: elements in order
  run_loop(make_loop(shape.span(), ops), [&](char* const* p, const int64_t* st, int64_t n) {
    for (int64_t i = 0; i < n; ++i, ++index) {
      float mean, std;
      std::memcpy(&mean, p[1] + i * st[1], 4);
      std::memcpy(&std, p[2] + i * st[2], 4);
      const float r = mean + std * normal_f32(seed, base + 2 * static_cast<uint64_t>(index));
      std::memcpy(p[0] + i * st[0], &r, 4);
    }
  }, /*parallel=*/false);
}

void op_normal_tensor_float(KernelContext& ctx, Span<Value*> args) { normal_op(ctx, args, "aten::normal.Tensor_float"); }
void op_normal_float_tensor(KernelContext& ctx, Span<Value*> args) { normal_op(ctx, args, "aten::normal.float_Tensor"); }
void op_normal_tensor_tensor(KernelContext& ctx, Span<Value*> args) { normal_op(ctx, args, "aten::normal.Tensor_Tensor"); }

void op_randint(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::randint";
  int64_t high;
  Span<const int64_t> size;
  if (!check_nargs(ctx, op, args, 7) || !int_arg(ctx, op, args, 0, "high", &high) ||
      !int_list_arg(ctx, op, args, 1, "size", &size)) {
    return;
  }
  fill_randint(ctx, op, planned_out(ctx, op, args, 6, size), 0, high);
}

void op_randint_low(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::randint.low";
  int64_t low, high;
  Span<const int64_t> size;
  if (!check_nargs(ctx, op, args, 8) || !int_arg(ctx, op, args, 0, "low", &low) ||
      !int_arg(ctx, op, args, 1, "high", &high) || !int_list_arg(ctx, op, args, 2, "size", &size)) {
    return;
  }
  fill_randint(ctx, op, planned_out(ctx, op, args, 7, size), low, high);
}

void op_randint_like(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::randint_like";
  int64_t high;
  if (!check_nargs(ctx, op, args, 8) || !int_arg(ctx, op, args, 1, "high", &high)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  if (self != nullptr) fill_randint(ctx, op, planned_out(ctx, op, args, 7, self->sizes()), 0, high);
}

void op_randint_like_low_dtype(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::randint_like.low_dtype";
  int64_t low, high;
  if (!check_nargs(ctx, op, args, 9) || !int_arg(ctx, op, args, 1, "low", &low) ||
      !int_arg(ctx, op, args, 2, "high", &high)) {
    return;
  }
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  if (self != nullptr) fill_randint(ctx, op, planned_out(ctx, op, args, 8, self->sizes()), low, high);
}

// A random permutation of 0..n-1 (Fisher-Yates), in any dtype.
void op_randperm(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::randperm";
  int64_t n;
  if (!check_nargs(ctx, op, args, 6) || !int_arg(ctx, op, args, 0, "n", &n)) return;
  const int64_t sizes[1] = {n};
  Tensor* out = planned_out(ctx, op, args, 5, Span<const int64_t>(sizes, 1));
  if (out == nullptr) return;
  int64_t* perm = static_cast<int64_t*>(ctx.allocate_temp(static_cast<size_t>(n > 0 ? n : 1) * sizeof(int64_t)));
  if (perm == nullptr) {
    ctx.fail(Error(ErrorCode::OutOfMemory, std::string(op) + ": out of scratch memory"));
    return;
  }
  for (int64_t i = 0; i < n; ++i) perm[i] = i;
  const uint64_t seed = random_seed(), base = reserve_random(static_cast<uint64_t>(n));
  for (int64_t i = n - 1; i > 0; --i) {
    const int64_t j = static_cast<int64_t>(random_bits(seed, base + static_cast<uint64_t>(i)) %
                                           static_cast<uint64_t>(i + 1));
    const int64_t t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  const ScalarType dt = out->dtype();
  char* o = static_cast<char*>(out->data());
  for (int64_t i = 0; i < n; ++i) {
    store_scalar(o + i * out->stride(0) * static_cast<int64_t>(out->element_size()), dt, static_cast<double>(perm[i]),
                 perm[i], true);
  }
}

}  // namespace kernels
}  // namespace etrt
