// Elementwise kernels: arithmetic with broadcasting, activations, comparisons, where, fills.
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>

#include "light.h"
#include "logistic.h"
#include "util.h"
#include "vec_math.h"

namespace etrt {
namespace kernels {
namespace {

// ---------------------------------------------------------------------------------------------
// Scalars of any dtype

// An operand of another dtype than the result, converted to `want` (ATen's type promotion: the
// exporter leaves it to the kernel, e.g. float + long, long * bool). Same-dtype operands pass
// through; others are copied, converted and contiguous, into scratch memory. nullptr after
// failing the call.
struct Coerced {
  Tensor holder;
};

const Tensor* coerce(KernelContext& ctx, const char* op, const Tensor& t, ScalarType want,
                     const char* name, Coerced* c) {
  if (t.dtype() == want) return &t;
  if (!check_has_data(ctx, op, t, name)) return nullptr;
  const size_t es = element_size(want);
  char* buf = static_cast<char*>(ctx.allocate_temp(static_cast<size_t>(t.numel() > 0 ? t.numel() : 1) * es));
  if (buf == nullptr) {
    ctx.fail(Error(ErrorCode::OutOfMemory, std::string(op) + ": out of scratch memory"));
    return nullptr;
  }
  c->holder = Tensor(buf, want, t.sizes());
  const Tensor* ops[2] = {&c->holder, &t};
  const ScalarType from = t.dtype();
  run_loop(make_loop(t.sizes(), ops), [&](char* const* p, const int64_t* st, int64_t n) {
    for (int64_t i = 0; i < n; ++i) convert(p[0] + i * st[0], want, p[1] + i * st[1], from);
  }, /*parallel=*/false);
  return &c->holder;
}

// ---------------------------------------------------------------------------------------------
// Float arithmetic

enum class BinOp { Add, Sub, Mul, Div, Max, Min };

// maximum/minimum: a NaN on either side wins, as in ATen.
template <typename T>
inline T max_nan(T a, T b) { return (a != a || a > b) ? a : b; }
template <typename T>
inline T min_nan(T a, T b) { return (a != a || a < b) ? a : b; }

template <typename T>
inline T apply(BinOp op, T a, T b, T alpha) {
  if constexpr (std::is_integral_v<T>) {  // wraps, as ATen's integer kernels do
    using U = std::make_unsigned_t<T>;
    switch (op) {
      case BinOp::Add: return static_cast<T>(static_cast<U>(a) + static_cast<U>(alpha) * static_cast<U>(b));
      case BinOp::Sub: return static_cast<T>(static_cast<U>(a) - static_cast<U>(alpha) * static_cast<U>(b));
      case BinOp::Mul: return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
      default: break;  // Div never reaches integers (true division is floating)
    }
  }
  switch (op) {
    case BinOp::Add: return a + alpha * b;
    case BinOp::Sub: return a - alpha * b;
    case BinOp::Mul: return a * b;
    case BinOp::Div: return a / b;
    case BinOp::Max: return max_nan(a, b);
    case BinOp::Min: return min_nan(a, b);
  }
  return a;
}

ETRT_ISA_BODY void binary_vv_body(BinOp op, float* o, const float* a, const float* b, float alpha, int64_t n) {
  switch (op) {
    case BinOp::Add: for (int64_t i = 0; i < n; ++i) o[i] = a[i] + alpha * b[i]; break;
    case BinOp::Sub: for (int64_t i = 0; i < n; ++i) o[i] = a[i] - alpha * b[i]; break;
    case BinOp::Mul: for (int64_t i = 0; i < n; ++i) o[i] = a[i] * b[i]; break;
    case BinOp::Div: for (int64_t i = 0; i < n; ++i) o[i] = a[i] / b[i]; break;
    case BinOp::Max: for (int64_t i = 0; i < n; ++i) o[i] = max_nan(a[i], b[i]); break;
    case BinOp::Min: for (int64_t i = 0; i < n; ++i) o[i] = min_nan(a[i], b[i]); break;
  }
}
ETRT_ISA_DISPATCH(void, binary_vv,
                  (BinOp op, float* o, const float* a, const float* b, float alpha, int64_t n),
                  (op, o, a, b, alpha, n))

ETRT_ISA_BODY void binary_vs_body(BinOp op, float* o, const float* a, float b, float alpha, int64_t n) {
  const float ab = alpha * b;
  switch (op) {
    case BinOp::Add: for (int64_t i = 0; i < n; ++i) o[i] = a[i] + ab; break;
    case BinOp::Sub: for (int64_t i = 0; i < n; ++i) o[i] = a[i] - ab; break;
    case BinOp::Mul: for (int64_t i = 0; i < n; ++i) o[i] = a[i] * b; break;
    case BinOp::Div: for (int64_t i = 0; i < n; ++i) o[i] = a[i] / b; break;
    case BinOp::Max: for (int64_t i = 0; i < n; ++i) o[i] = max_nan(a[i], b); break;
    case BinOp::Min: for (int64_t i = 0; i < n; ++i) o[i] = min_nan(a[i], b); break;
  }
}
ETRT_ISA_DISPATCH(void, binary_vs,
                  (BinOp op, float* o, const float* a, float b, float alpha, int64_t n),
                  (op, o, a, b, alpha, n))

ETRT_ISA_BODY void binary_sv_body(BinOp op, float* o, float a, const float* b, float alpha, int64_t n) {
  switch (op) {
    case BinOp::Add: for (int64_t i = 0; i < n; ++i) o[i] = a + alpha * b[i]; break;
    case BinOp::Sub: for (int64_t i = 0; i < n; ++i) o[i] = a - alpha * b[i]; break;
    case BinOp::Mul: for (int64_t i = 0; i < n; ++i) o[i] = a * b[i]; break;
    case BinOp::Div: for (int64_t i = 0; i < n; ++i) o[i] = a / b[i]; break;
    case BinOp::Max: for (int64_t i = 0; i < n; ++i) o[i] = max_nan(a, b[i]); break;
    case BinOp::Min: for (int64_t i = 0; i < n; ++i) o[i] = min_nan(a, b[i]); break;
  }
}
ETRT_ISA_DISPATCH(void, binary_sv,
                  (BinOp op, float* o, float a, const float* b, float alpha, int64_t n),
                  (op, o, a, b, alpha, n))

template <typename T>
void binary_loop(const Loop<3>& loop, BinOp op, T alpha) {
  run_loop(loop, [&](char* const* p, const int64_t* s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      T a, b;
      std::memcpy(&a, p[1] + i * s[1], sizeof(T));
      std::memcpy(&b, p[2] + i * s[2], sizeof(T));
      T r = apply<T>(op, a, b, alpha);
      std::memcpy(p[0] + i * s[0], &r, sizeof(T));
    }
  });
}

// One loop per op (no switch inside), so each is a tight strided loop.
void binary_strided(BinOp op, float* o, int64_t so, const float* a, int64_t sa, const float* b,
                    int64_t sb, float alpha, int64_t n) {
  switch (op) {
    case BinOp::Add: for (int64_t i = 0; i < n; ++i) o[i * so] = a[i * sa] + alpha * b[i * sb]; break;
    case BinOp::Sub: for (int64_t i = 0; i < n; ++i) o[i * so] = a[i * sa] - alpha * b[i * sb]; break;
    case BinOp::Mul: for (int64_t i = 0; i < n; ++i) o[i * so] = a[i * sa] * b[i * sb]; break;
    case BinOp::Div: for (int64_t i = 0; i < n; ++i) o[i * so] = a[i * sa] / b[i * sb]; break;
    case BinOp::Max: for (int64_t i = 0; i < n; ++i) o[i * so] = max_nan(a[i * sa], b[i * sb]); break;
    case BinOp::Min: for (int64_t i = 0; i < n; ++i) o[i * so] = min_nan(a[i * sa], b[i * sb]); break;
  }
}

void binary_f32(const Loop<3>& loop, BinOp op, float alpha, int64_t image_row) {
  run_loop(loop, [&](char* const* p, const int64_t* s, int64_t n) {
    float* o = reinterpret_cast<float*>(p[0]);
    const float* a = reinterpret_cast<const float*>(p[1]);
    const float* b = reinterpret_cast<const float*>(p[2]);
    if (s[0] == 4) {
      if (s[1] == 4 && s[2] == 4) return binary_vv(op, o, a, b, alpha, n);
      if (s[1] == 4 && s[2] == 0) return binary_vs(op, o, a, *b, alpha, n);
      if (s[1] == 0 && s[2] == 4) return binary_sv(op, o, *a, b, alpha, n);
    }
    binary_strided(op, o, s[0] / 4, a, s[1] / 4, b, s[2] / 4, alpha, n);
  }, true, image_row);
}

// Elements per image row (W * C) of a channels-last 4-D output, for run_loop's split by image
// rows when the loop walks it in memory order; 0 otherwise.
int64_t image_row_of(const Tensor& out, int64_t loop_elements) {
  if (out.dim() != 4 || out.size(2) < 2 || out.is_contiguous() || !channels_last_dense(out)) return 0;
  return loop_elements == out.numel() ? out.size(3) * out.size(1) : 0;
}

void binary_op(KernelContext& ctx, Span<Value*> args, const char* op, BinOp bop, bool has_alpha) {
  const size_t nargs = has_alpha ? 4 : 3;
  if (!check_nargs(ctx, op, args, nargs)) return;
  ScalarType dtype;
  if (!planned_dtype(ctx, op, args, nargs - 1, &dtype)) return;
  // A Python number in a tensor slot (`x * 2.0` exports as mul.Tensor, `1 - x` as sub.Tensor
  // with the number first) is, as in ATen, a 0-dim tensor of the result's dtype.
  double wrapped_storage[2] = {0.0, 0.0};
  Tensor wrapped[2];
  Tensor* operand[2] = {nullptr, nullptr};
  for (int k = 0; k < 2; ++k) {
    if (args[k]->is_scalar()) {
      store_scalar(&wrapped_storage[k], dtype, args[k]->scalar_to_double(), args[k]->scalar_to_int(), !args[k]->is_double());
      wrapped[k] = Tensor(&wrapped_storage[k], dtype, Span<const int64_t>());
      operand[k] = &wrapped[k];
    } else {
      operand[k] = tensor_arg(ctx, op, args, static_cast<size_t>(k), k == 0 ? "self" : "other");
      if (operand[k] == nullptr) return;
    }
  }
  Tensor* self = operand[0];
  Tensor* other = operand[1];
  double alpha = 1.0;
  if (has_alpha && !scalar_arg(ctx, op, args, 2, "alpha", &alpha)) return;
  Shape shape = shape_of(*self);
  if (!broadcast_into(ctx, op, &shape, other->sizes())) return;
  Tensor* out = strided_output_arg(ctx, op, args, nargs - 1, dtype, shape.span());
  if (out == nullptr) return;
  Coerced ca, cb;
  const Tensor* a = coerce(ctx, op, *self, dtype, "self", &ca);
  const Tensor* b = a ? coerce(ctx, op, *other, dtype, "other", &cb) : nullptr;
  if (b == nullptr) return;
  if (!check_has_data(ctx, op, *a, "self") || !check_has_data(ctx, op, *b, "other")) return;
  const Tensor* ops[3] = {out, a, b};
  Loop<3> loop = make_loop(shape.span(), ops);
  switch (dtype) {
    case ScalarType::Float: binary_f32(loop, bop, static_cast<float>(alpha), image_row_of(*out, loop.rows() * loop.inner_size())); return;
    case ScalarType::Double: binary_loop<double>(loop, bop, alpha); return;
    case ScalarType::Long:
      if (bop == BinOp::Div) break;  // true division of integers gives a float result
      binary_loop<int64_t>(loop, bop, has_alpha ? args[2]->scalar_to_int() : 1);
      return;
    case ScalarType::Int:
      if (bop == BinOp::Div) break;
      binary_loop<int32_t>(loop, bop, static_cast<int32_t>(has_alpha ? args[2]->scalar_to_int() : 1));
      return;
    default:
      if (integral_type(dtype) && bop != BinOp::Div) {  // Bool, Byte, Char: through int64
        const int64_t k = has_alpha ? args[2]->scalar_to_int() : 1;
        run_loop(loop, [&](char* const* p, const int64_t* s, int64_t n) {
          for (int64_t i = 0; i < n; ++i) {
            const int64_t x = load_int64(p[1] + i * s[1], dtype), y = load_int64(p[2] + i * s[2], dtype);
            int64_t r = apply<int64_t>(bop, x, y, k);
            if (dtype == ScalarType::Bool) r = r != 0;
            store_scalar(p[0] + i * s[0], dtype, static_cast<double>(r), r, true);
          }
        });
        return;
      }
      break;
  }
  fail(ctx, op, std::string("unsupported dtype ") + to_string(dtype));
}

// ---------------------------------------------------------------------------------------------
// Float unary

enum class UnOp {
  Relu, GeluErf, GeluTanh, Scale, Clamp, Sigmoid, Tanh, Exp, Rsqrt, Abs, LeakyRelu, Pow, Neg, Sqrt, Log,
  Hardswish, Hardsigmoid, Silu,
};

// The highest category among an op's Scalar arguments, for ATen's result type.
enum class ScalarKind : uint8_t { None, Bool, Int, Double };

inline ScalarKind scalar_kind(const Value& v) {
  return v.is_double() ? ScalarKind::Double : v.is_int() ? ScalarKind::Int : v.is_bool() ? ScalarKind::Bool : ScalarKind::None;
}

// An op's scalars: Scale and LeakyRelu use s; Clamp clamps to [s, t]; Pow raises to s.
struct UnArgs {
  float s = 0.0f;
  float t = 0.0f;
  ScalarKind kind = ScalarKind::None;
  double exact = 0.0;  // Pow's exponent and Scale's factor as given (s is rounded to float)
};

// One element. Shared by the contiguous (vectorised in the clones), strided and transposed loops.
__attribute__((always_inline)) inline float apply_unary(UnOp op, float x, UnArgs u) {
  switch (op) {
    case UnOp::Relu: return x < 0.0f ? 0.0f : x;  // NaN passes through, as in ATen
    case UnOp::GeluErf: return gelu_erf_f32(x);
    case UnOp::GeluTanh: return gelu_tanh_f32(x);
    case UnOp::Scale: return x * u.s;
    case UnOp::Clamp: {  // NaN passes through both comparisons
      const float r = x < u.s ? u.s : x;
      return r > u.t ? u.t : r;
    }
    case UnOp::Sigmoid: return 1.0f / (1.0f + exp_full_f32(-x));
    case UnOp::Tanh: return tanh_accurate_f32(x);
    case UnOp::Exp: return exp_full_f32(x);
    case UnOp::Rsqrt: return 1.0f / __builtin_sqrtf(x);
    case UnOp::Abs: return __builtin_fabsf(x);
    case UnOp::LeakyRelu: return leaky_relu_step(x, u.s);
    case UnOp::Pow: return pow_f32(x, u.s);
    case UnOp::Neg: return -x;
    case UnOp::Sqrt: return __builtin_sqrtf(x);
    case UnOp::Log: return __builtin_logf(x);
    // The steps (and so the roundings) of their decompositions: x * clamp(x + 3, 0, 6) / 6,
    // clamp(x + 3, 0, 6) / 6 and x * sigmoid(x).
    case UnOp::Hardswish: return x * apply_unary(UnOp::Clamp, x + 3.0f, {0.0f, 6.0f}) / 6.0f;
    case UnOp::Hardsigmoid: return apply_unary(UnOp::Clamp, x + 3.0f, {0.0f, 6.0f}) / 6.0f;
    case UnOp::Silu: return x * (1.0f / (1.0f + exp_full_f32(-x)));
  }
  return x;
}

// GELU W lanes at a time (the clone's register width, see Lanes): the cheap rational form when
// every lane is small (nearly always, for activations), the erfc form otherwise. The test is
// max_abs's shuffle tree at 16 lanes; narrower clones compare at their own width (16-lane
// comparisons under AVX2 ran lane by lane in scalar code).
template <int W>
__attribute__((always_inline)) inline void gelu_erf_lanes(float* o, const float* a, int64_t n) {
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    typename Lanes<W>::F v;
    std::memcpy(&v, a + i, sizeof v);
    bool small = true;
    if constexpr (W == 16) {
      small = max_abs(v) < kGeluSmall;
    } else {
      const typename Lanes<W>::I inside = (v < kGeluSmall) & (v > -kGeluSmall);
      int32_t lanes[W];
      std::memcpy(lanes, &inside, sizeof inside);
      int32_t all = -1;
      for (int j = 0; j < W; ++j) all &= lanes[j];
      small = all != 0;
    }
    if (small) {
      gelu_erf_small_lanes<W>(v, o + i);
    } else {
      for (int j = 0; j < W; ++j) o[i + j] = gelu_erf_f32(a[i + j]);
    }
  }
  for (; i < n; ++i) o[i] = gelu_erf_f32(a[i]);
}

// One loop per op (the switch stays outside), so each vectorises on its own.
template <UnOp Op>
__attribute__((always_inline)) inline void unary_run(float* o, const float* a, UnArgs u, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = apply_unary(Op, a[i], u);
}

// gelu_tanh_f32 lane by lane: x / (1 + exp(-2u)) (GPT-2's 128 x 1024 at AVX2: 90 -> 70 us a call,
// under AVX-512 51 -> 35; it was tanh_lanes and 0.5 x (1 + t)).
template <int W>
ETRT_VEC_INLINE void gelu_tanh_lanes(const typename Lanes<W>::F& x, typename Lanes<W>::F* out) {
  using F = typename Lanes<W>::F;
  const F inner = 0.7978845608028654f * (x + 0.044715f * x * x * x);
  F e = -2.0f * inner;
  exp_lanes<W>(e);
  const F r = x / (1.0f + e);
  *out = x == -__builtin_inff() ? F{} + __builtin_nanf("") : r;
}

// Ops whose scalar form GCC does not vectorise: W lanes at a time (the clone's register width,
// see Lanes), the tail through apply_unary (the same values: the vector forms compute the scalar
// ones lane by lane).
template <UnOp Op, int W>
__attribute__((always_inline)) inline void unary_run_lanes(float* o, const float* a, UnArgs u, int64_t n) {
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    typename Lanes<W>::F v, r;
    std::memcpy(&v, a + i, sizeof v);
    if constexpr (Op == UnOp::Tanh) tanh_accurate_lanes<W>(v, &r);
    if constexpr (Op == UnOp::Exp) exp_full_lanes<W>(v, &r);
    if constexpr (Op == UnOp::GeluTanh) gelu_tanh_lanes<W>(v, &r);
    std::memcpy(o + i, &r, sizeof r);
  }
  for (; i < n; ++i) o[i] = apply_unary(Op, a[i], u);
}

// The ops above, W lanes at a time: each clone below passes its own width.
template <int W>
__attribute__((always_inline)) inline void unary_lanes_body(UnOp op, float* o, const float* a, UnArgs u,
                                                            int64_t n) {
  switch (op) {
    case UnOp::GeluTanh: unary_run_lanes<UnOp::GeluTanh, W>(o, a, u, n); break;
    case UnOp::GeluErf: gelu_erf_lanes<W>(o, a, n); break;
    case UnOp::Tanh: unary_run_lanes<UnOp::Tanh, W>(o, a, u, n); break;
    default: unary_run_lanes<UnOp::Exp, W>(o, a, u, n); break;
  }
}
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f"))) static void unary_lanes_avx512(UnOp op, float* o, const float* a, UnArgs u,
                                                                  int64_t n) {
  unary_lanes_body<16>(op, o, a, u, n);
}
__attribute__((target("avx2,fma"))) static void unary_lanes_avx2(UnOp op, float* o, const float* a, UnArgs u,
                                                             int64_t n) {
  unary_lanes_body<8>(op, o, a, u, n);
}
static void unary_lanes(UnOp op, float* o, const float* a, UnArgs u, int64_t n) {
  switch (isa_level()) {
    case 2: return unary_lanes_avx512(op, o, a, u, n);
    case 1: return unary_lanes_avx2(op, o, a, u, n);
    default: return unary_lanes_body<4>(op, o, a, u, n);
  }
}
#else
static void unary_lanes(UnOp op, float* o, const float* a, UnArgs u, int64_t n) {
  unary_lanes_body<4>(op, o, a, u, n);
}
#endif

ETRT_ISA_BODY void unary_contiguous_body(UnOp op, float* o, const float* a, UnArgs u, int64_t n) {
  switch (op) {
    case UnOp::Relu: unary_run<UnOp::Relu>(o, a, u, n); break;
    case UnOp::GeluErf: unary_lanes(op, o, a, u, n); break;
    case UnOp::GeluTanh: unary_lanes(op, o, a, u, n); break;
    case UnOp::Scale: unary_run<UnOp::Scale>(o, a, u, n); break;
    case UnOp::Clamp: unary_run<UnOp::Clamp>(o, a, u, n); break;
    case UnOp::Sigmoid: sigmoid_contiguous(o, a, n); break;  // logistic.cpp
    case UnOp::Tanh: unary_lanes(op, o, a, u, n); break;
    case UnOp::Exp: unary_lanes(op, o, a, u, n); break;
    case UnOp::Rsqrt: unary_run<UnOp::Rsqrt>(o, a, u, n); break;
    case UnOp::Abs: unary_run<UnOp::Abs>(o, a, u, n); break;
    case UnOp::LeakyRelu: unary_run<UnOp::LeakyRelu>(o, a, u, n); break;
    case UnOp::Pow: unary_run<UnOp::Pow>(o, a, u, n); break;
    case UnOp::Neg: unary_run<UnOp::Neg>(o, a, u, n); break;
    case UnOp::Sqrt: unary_run<UnOp::Sqrt>(o, a, u, n); break;
    case UnOp::Log: unary_run<UnOp::Log>(o, a, u, n); break;
    case UnOp::Hardswish: unary_run<UnOp::Hardswish>(o, a, u, n); break;
    case UnOp::Hardsigmoid: unary_run<UnOp::Hardsigmoid>(o, a, u, n); break;
    case UnOp::Silu: silu_contiguous(o, a, n); break;
  }
}
ETRT_ISA_DISPATCH(void, unary_contiguous,
                  (UnOp op, float* o, const float* a, UnArgs u, int64_t n),
                  (op, o, a, u, n))

void unary_strided(UnOp op, float* o, int64_t so, const float* a, int64_t sa, UnArgs u, int64_t n) {
  if (op == UnOp::Scale) {  // a tight gather loop (e.g. attention's scaled transposed keys)
    for (int64_t i = 0; i < n; ++i) o[i * so] = a[i * sa] * u.s;
    return;
  }
  for (int64_t i = 0; i < n; ++i) o[i * so] = apply_unary(op, a[i * sa], u);
}

// A transposed source (contiguous along the output's second-innermost dimension, e.g.
// attention's scaled K^T): 16x16 tiles, each source column read as one contiguous run through
// the contiguous op into a tile in L1, then written out row by row.
ETRT_ISA_BODY void unary_transposed_body(UnOp op, float* o, const float* a, int64_t cs, UnArgs u, int64_t rows, int64_t cols) {
  for (int64_t r0 = 0; r0 < rows; r0 += 16) {
    const int64_t rn = rows - r0 < 16 ? rows - r0 : 16;
    for (int64_t c0 = 0; c0 < cols; c0 += 16) {
      const int64_t cn = cols - c0 < 16 ? cols - c0 : 16;
      alignas(64) float t[16][16];
      if (op == UnOp::Scale) {  // inline: a call per 16 elements would cost as much as the work
        for (int64_t c = 0; c < cn; ++c) {
          const float* src = a + (c0 + c) * cs + r0;
          for (int64_t r = 0; r < rn; ++r) t[c][r] = src[r] * u.s;
        }
      } else {
        for (int64_t c = 0; c < cn; ++c) unary_contiguous(op, t[c], a + (c0 + c) * cs + r0, u, rn);
      }
      for (int64_t r = 0; r < rn; ++r) {
        float* orow = o + (r0 + r) * cols + c0;
        for (int64_t c = 0; c < cn; ++c) orow[c] = t[c][r];
      }
    }
  }
}
ETRT_ISA_DISPATCH(void, unary_transposed,
                  (UnOp op, float* o, const float* a, int64_t cs, UnArgs u, int64_t rows, int64_t cols),
                  (op, o, a, cs, u, rows, cols))

// True (and done) when the loop's two inner dimensions are a transpose of a contiguous output.
bool unary_try_transposed(const Loop<2>& loop, UnOp uop, UnArgs u) {
  const int d = loop.dim;
  if (d < 2 || loop.empty) return false;
  const int64_t rows = loop.sizes[d - 2], cols = loop.sizes[d - 1];
  if (loop.strides[0][d - 1] != 4 || loop.strides[0][d - 2] != cols * 4 || loop.strides[1][d - 2] != 4 ||
      loop.strides[1][d - 1] % 4 != 0 || loop.strides[1][d - 1] <= 4 || rows < 4 || cols < 4) {
    return false;
  }
  int64_t outer = 1;
  for (int i = 0; i < d - 2; ++i) outer *= loop.sizes[i];
  const int64_t cs = loop.strides[1][d - 1] / 4;
  parallel_chunks(outer, rows * cols * 4, [&](int64_t b, int64_t e) {
    for (int64_t m = b; m < e; ++m) {
      int64_t rem = m;
      char* po = loop.base[0];
      char* pa = loop.base[1];
      for (int i = d - 3; i >= 0; --i) {
        const int64_t idx = rem % loop.sizes[i];
        rem /= loop.sizes[i];
        po += idx * loop.strides[0][i];
        pa += idx * loop.strides[1][i];
      }
      unary_transposed(uop, reinterpret_cast<float*>(po), reinterpret_cast<const float*>(pa), cs, u, rows, cols);
    }
  });
  return true;
}

// ATen's result dtype of `uop` on a non-Float input: relu, abs and neg keep it (and refuse
// Bool); clamp, pow and scaling keep it unless a Double scalar makes it Float (or an Int
// scalar makes Bool Long); the transcendental ops give Float for integers; GELU and leaky ReLU
// take floating inputs only. False when ATen refuses the dtype.
bool unary_result(UnOp uop, ScalarType in, ScalarKind kind, ScalarType* out) {
  if (!integral_type(in)) {
    *out = in;
    return true;
  }
  switch (uop) {
    case UnOp::GeluErf: case UnOp::GeluTanh: case UnOp::LeakyRelu: return false;
    case UnOp::Relu: case UnOp::Abs: case UnOp::Neg:
      *out = in;
      return in != ScalarType::Bool;
    case UnOp::Sigmoid: case UnOp::Tanh: case UnOp::Exp: case UnOp::Rsqrt: case UnOp::Sqrt: case UnOp::Log:
      *out = ScalarType::Float;
      return true;
    case UnOp::Clamp: case UnOp::Pow: case UnOp::Scale:
      *out = kind == ScalarKind::Double                           ? ScalarType::Float
             : kind == ScalarKind::Int && in == ScalarType::Bool ? ScalarType::Long
                                                                   : in;
      return true;
  }
  return false;
}

// Integer and Bool inputs: integer results (relu, abs, neg, clamp, pow, scaling) stay exact in
// int64 and wrap like ATen's; floating results (sigmoid of an int, ...) are computed on the
// float value.
void unary_other_dtype(KernelContext& ctx, const char* op, Span<Value*> args, const Tensor& self,
                       size_t out_index, UnOp uop, UnArgs u) {
  ScalarType dt;
  if (!check_has_data(ctx, op, self, "self")) return;
  if (!unary_result(uop, self.dtype(), u.kind, &dt)) {
    fail(ctx, op, std::string("not defined for ") + to_string(self.dtype()) + " input");
    return;
  }
  Tensor* out = strided_output_arg(ctx, op, args, out_index, dt, self.sizes());
  if (out == nullptr) return;
  const ScalarType in = self.dtype();
  const bool ints = integral_type(dt);
  if (ints && uop == UnOp::Pow && u.exact < 0.0) {
    fail(ctx, op, "integers to negative integer powers are not allowed");
    return;
  }
  const uint64_t exponent = static_cast<uint64_t>(checked::to_int<int64_t>(u.exact));
  // Clamp bounds for integers: ceil(min), floor(max), as ATen converts them.
  const int64_t lo = checked::to_int<int64_t>(std::ceil(static_cast<double>(u.s)));
  const int64_t hi = checked::to_int<int64_t>(std::floor(static_cast<double>(u.t)));
  const Tensor* ops[2] = {out, &self};
  run_loop(make_loop(self.sizes(), ops), [&](char* const* p, const int64_t* st, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      char* o = p[0] + i * st[0];
      const char* a = p[1] + i * st[1];
      if (!ints) {
        const float r = apply_unary(uop, static_cast<float>(load_as_double(a, in)), u);
        store_scalar(o, dt, r, 0, false);
        continue;
      }
      int64_t x = load_int64(a, in);
      switch (uop) {
        case UnOp::Relu: x = x < 0 ? 0 : x; break;
        case UnOp::Abs: x = x < 0 ? checked::wrap_neg(x) : x; break;
        case UnOp::Neg: x = checked::wrap_neg(x); break;
        case UnOp::Clamp: {
          if (static_cast<double>(x) < u.s) x = lo;
          if (static_cast<double>(x) > u.t) x = hi;
          break;
        }
        case UnOp::Scale: x = checked::wrap_mul(x, checked::to_int<int64_t>(u.exact)); break;
        case UnOp::Pow: x = checked::wrap_pow(x, exponent); break;
        default: x = checked::to_int<int64_t>(apply_unary(uop, static_cast<float>(x), u)); break;
      }
      store_scalar(o, dt, static_cast<double>(x), x, true);
    }
  });
}

void unary_f32(KernelContext& ctx, const char* op, Span<Value*> args, const Tensor& self, size_t out_index,
               UnOp uop, UnArgs u = {}) {
  if (self.dtype() != ScalarType::Float) return unary_other_dtype(ctx, op, args, self, out_index, uop, u);
  if (!check_has_data(ctx, op, self, "self")) return;
  Tensor* out = strided_output_arg(ctx, op, args, out_index, ScalarType::Float, self.sizes());
  if (out == nullptr) return;
  const Tensor* ops[2] = {out, &self};
  Loop<2> loop = make_loop(self.sizes(), ops);
  if (unary_try_transposed(loop, uop, u)) return;
  run_loop(loop, [&](char* const* p, const int64_t* st, int64_t n) {
    float* o = reinterpret_cast<float*>(p[0]);
    const float* a = reinterpret_cast<const float*>(p[1]);
    if (st[0] == 4 && st[1] == 4) {
      if (uop == UnOp::Scale && n <= 32) {  // short rows (attention heads): no clone dispatch
        for (int64_t i = 0; i < n; ++i) o[i] = a[i] * u.s;
        return;
      }
      return unary_contiguous(uop, o, a, u, n);
    }
    unary_strided(uop, o, st[0] / 4, a, st[1] / 4, u, n);
  }, true, image_row_of(*out, loop.rows() * loop.inner_size()));
}

// A unary float op whose arguments after `self` are exactly the schema's (checked by count).
void unary_op(KernelContext& ctx, Span<Value*> args, const char* op, size_t nargs, UnOp uop,
              UnArgs u = {}) {
  if (!check_nargs(ctx, op, args, nargs)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  if (self == nullptr) return;
  unary_f32(ctx, op, args, *self, nargs - 1, uop, u);
}

// An optional Scalar bound: `fallback` for None.
bool optional_bound(KernelContext& ctx, const char* op, Span<Value*> args, size_t i, const char* name,
                    float fallback, float* out) {
  if (args[i]->is_none()) {
    *out = fallback;
    return true;
  }
  double v = 0.0;
  if (!scalar_arg(ctx, op, args, i, name, &v)) return false;
  *out = static_cast<float>(v);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Comparisons and logical ops (Bool results)

enum class Cmp { Eq, Ne, Gt, Ge, Lt, Le, And, Or };

template <typename T>
inline bool compare(Cmp c, T a, T b) {
  switch (c) {
    case Cmp::Eq: return a == b;
    case Cmp::Ne: return a != b;
    case Cmp::Gt: return a > b;
    case Cmp::Ge: return a >= b;
    case Cmp::Lt: return a < b;
    case Cmp::Le: return a <= b;
    case Cmp::And: return a != T(0) && b != T(0);
    case Cmp::Or: return a != T(0) || b != T(0);
  }
  return false;
}

// o[i] = a[i] <cmp> b over a contiguous run: one loop per comparison, so each vectorises.
ETRT_ISA_BODY void compare_run_body(Cmp cmp, uint8_t* o, const float* a, float b, int64_t n) {
  switch (cmp) {
    case Cmp::Eq: for (int64_t i = 0; i < n; ++i) o[i] = a[i] == b; break;
    case Cmp::Ne: for (int64_t i = 0; i < n; ++i) o[i] = a[i] != b; break;
    case Cmp::Gt: for (int64_t i = 0; i < n; ++i) o[i] = a[i] > b; break;
    case Cmp::Ge: for (int64_t i = 0; i < n; ++i) o[i] = a[i] >= b; break;
    case Cmp::Lt: for (int64_t i = 0; i < n; ++i) o[i] = a[i] < b; break;
    case Cmp::Le: for (int64_t i = 0; i < n; ++i) o[i] = a[i] <= b; break;
    case Cmp::And: for (int64_t i = 0; i < n; ++i) o[i] = a[i] != 0.0f && b != 0.0f; break;
    case Cmp::Or: for (int64_t i = 0; i < n; ++i) o[i] = a[i] != 0.0f || b != 0.0f; break;
  }
}
ETRT_ISA_DISPATCH(void, compare_run,
                  (Cmp cmp, uint8_t* o, const float* a, float b, int64_t n),
                  (cmp, o, a, b, n))

// o[i] = a[i] <cmp> b[i] over contiguous runs.
ETRT_ISA_BODY void compare_vv_body(Cmp cmp, uint8_t* o, const float* a, const float* b, int64_t n) {
  switch (cmp) {
    case Cmp::Eq: for (int64_t i = 0; i < n; ++i) o[i] = a[i] == b[i]; break;
    case Cmp::Ne: for (int64_t i = 0; i < n; ++i) o[i] = a[i] != b[i]; break;
    case Cmp::Gt: for (int64_t i = 0; i < n; ++i) o[i] = a[i] > b[i]; break;
    case Cmp::Ge: for (int64_t i = 0; i < n; ++i) o[i] = a[i] >= b[i]; break;
    case Cmp::Lt: for (int64_t i = 0; i < n; ++i) o[i] = a[i] < b[i]; break;
    case Cmp::Le: for (int64_t i = 0; i < n; ++i) o[i] = a[i] <= b[i]; break;
    case Cmp::And: for (int64_t i = 0; i < n; ++i) o[i] = a[i] != 0.0f && b[i] != 0.0f; break;
    case Cmp::Or: for (int64_t i = 0; i < n; ++i) o[i] = a[i] != 0.0f || b[i] != 0.0f; break;
  }
}
ETRT_ISA_DISPATCH(void, compare_vv,
                  (Cmp cmp, uint8_t* o, const float* a, const float* b, int64_t n),
                  (cmp, o, a, b, n))

// o[i] = a[i * sa] <cmp> b[i * sb] for int64 operands (strides in elements: 1 or 0, a run
// against one value): one loop per comparison (compare's with a constant Cmp), so each
// vectorises. Attention masks compare position ids of [.., 1, n] against [.., n, 1].
template <Cmp C>
ETRT_VEC_INLINE void compare_i64_loop(uint8_t* o, const int64_t* a, int64_t sa, const int64_t* b, int64_t sb,
                                      int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = compare(C, a[i * sa], b[i * sb]);
}
ETRT_ISA_BODY void compare_i64_body(Cmp cmp, uint8_t* o, const int64_t* a, int64_t sa, const int64_t* b,
                                    int64_t sb, int64_t n) {
  switch (cmp) {
    case Cmp::Eq: return compare_i64_loop<Cmp::Eq>(o, a, sa, b, sb, n);
    case Cmp::Ne: return compare_i64_loop<Cmp::Ne>(o, a, sa, b, sb, n);
    case Cmp::Gt: return compare_i64_loop<Cmp::Gt>(o, a, sa, b, sb, n);
    case Cmp::Ge: return compare_i64_loop<Cmp::Ge>(o, a, sa, b, sb, n);
    case Cmp::Lt: return compare_i64_loop<Cmp::Lt>(o, a, sa, b, sb, n);
    case Cmp::Le: return compare_i64_loop<Cmp::Le>(o, a, sa, b, sb, n);
    case Cmp::And: return compare_i64_loop<Cmp::And>(o, a, sa, b, sb, n);
    case Cmp::Or: return compare_i64_loop<Cmp::Or>(o, a, sa, b, sb, n);
  }
}
ETRT_ISA_DISPATCH(void, compare_i64,
                  (Cmp cmp, uint8_t* o, const int64_t* a, int64_t sa, const int64_t* b, int64_t sb, int64_t n),
                  (cmp, o, a, sa, b, sb, n))

// self <op> other with broadcasting; a Scalar `other` (the .Scalar overloads) becomes a 0-d
// tensor of self's kind. Floats compare as float, integers as int64, mixes as double.
void compare_op(KernelContext& ctx, Span<Value*> args, const char* op, Cmp cmp) {
  if (!check_nargs(ctx, op, args, 3)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  if (self == nullptr || !check_has_data(ctx, op, *self, "self")) return;
  alignas(8) unsigned char buf[8];
  Tensor wrapped;
  const Tensor* other = nullptr;
  if (args[1]->is_scalar()) {
    ScalarType t = ScalarType::Double;
    if (self->dtype() == ScalarType::Float) {
      t = ScalarType::Float;
    } else if (integral_type(self->dtype()) && !args[1]->is_double()) {
      t = ScalarType::Long;
    }
    store_scalar(buf, t, args[1]->scalar_to_double(), args[1]->scalar_to_int(), !args[1]->is_double());
    wrapped = Tensor(buf, t, Span<const int64_t>());
    other = &wrapped;
  } else {
    other = tensor_arg(ctx, op, args, 1, "other");
    if (other == nullptr || !check_has_data(ctx, op, *other, "other")) return;
  }
  Shape shape = shape_of(*self);
  if (!broadcast_into(ctx, op, &shape, other->sizes())) return;
  Tensor* out = strided_output_arg(ctx, op, args, 2, ScalarType::Bool, shape.span());
  if (out == nullptr) return;
  const Tensor* ops[3] = {out, self, other};
  const Loop<3> loop = make_loop(shape.span(), ops);
  const ScalarType ta = self->dtype(), tb = other->dtype();
  if (ta == ScalarType::Float && tb == ScalarType::Float) {
    run_loop(loop, [&](char* const* p, const int64_t* st, int64_t n) {
      if (st[0] == 1 && st[1] == 4 && st[2] == 0) {  // a contiguous run against one value
        float b;
        std::memcpy(&b, p[2], 4);
        return compare_run(cmp, reinterpret_cast<uint8_t*>(p[0]), reinterpret_cast<const float*>(p[1]), b, n);
      }
      if (st[0] == 1 && st[1] == 4 && st[2] == 4) {
        return compare_vv(cmp, reinterpret_cast<uint8_t*>(p[0]), reinterpret_cast<const float*>(p[1]),
                          reinterpret_cast<const float*>(p[2]), n);
      }
      for (int64_t i = 0; i < n; ++i) {
        float a, b;
        std::memcpy(&a, p[1] + i * st[1], 4);
        std::memcpy(&b, p[2] + i * st[2], 4);
        p[0][i * st[0]] = compare(cmp, a, b) ? 1 : 0;
      }
    });
    return;
  }
  const bool ints = integral_type(ta) && integral_type(tb);
  const bool longs = ta == ScalarType::Long && tb == ScalarType::Long;
  run_loop(loop, [&](char* const* p, const int64_t* st, int64_t n) {
    if (longs && st[0] == 1 && (st[1] == 0 || st[1] == 8) && (st[2] == 0 || st[2] == 8)) {
      return compare_i64(cmp, reinterpret_cast<uint8_t*>(p[0]), reinterpret_cast<const int64_t*>(p[1]), st[1] / 8,
                         reinterpret_cast<const int64_t*>(p[2]), st[2] / 8, n);
    }
    for (int64_t i = 0; i < n; ++i) {
      const char* a = p[1] + i * st[1];
      const char* b = p[2] + i * st[2];
      const bool r = ints ? compare(cmp, load_int64(a, ta), load_int64(b, tb))
                          : compare(cmp, load_as_double(a, ta), load_as_double(b, tb));
      p[0][i * st[0]] = r ? 1 : 0;
    }
  });
}

enum class Bitwise { And, Or, Xor };

// One-byte operands (Bool, Byte, Char) over runs of any stride; Bool results stay 0 or 1.
ETRT_ISA_BODY void bitwise_bytes_body(Bitwise kind, bool logical, uint8_t* o, int64_t so, const uint8_t* a, int64_t sa,
                   const uint8_t* b, int64_t sb, int64_t n) {
  auto one = [&](uint8_t x, uint8_t y) -> uint8_t {
    uint8_t r = kind == Bitwise::And ? (x & y) : kind == Bitwise::Or ? (x | y) : (x ^ y);
    return logical ? (r != 0 ? 1 : 0) : r;
  };
  if (so == 1 && sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) o[i] = one(a[i], b[i]);
    return;
  }
  for (int64_t i = 0; i < n; ++i) o[i * so] = one(a[i * sa], b[i * sb]);
}
ETRT_ISA_DISPATCH(void, bitwise_bytes,
                  (Bitwise kind, bool logical, uint8_t* o, int64_t so, const uint8_t* a, int64_t sa, const uint8_t* b, int64_t sb, int64_t n),
                  (kind, logical, o, so, a, sa, b, sb, n))

// bitwise_and/or/xor.Tensor on Bool (logical) or integer tensors, with broadcasting.
void bitwise_op(KernelContext& ctx, Span<Value*> args, const char* op, Bitwise kind) {
  if (!check_nargs(ctx, op, args, 3)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  Tensor* other = self ? tensor_arg(ctx, op, args, 1, "other") : nullptr;
  ScalarType dtype;
  if (other == nullptr || !planned_dtype(ctx, op, args, 2, &dtype)) return;
  if (!integral_type(dtype)) {
    fail(ctx, op, std::string("needs Bool or integer tensors, got ") + to_string(dtype));
    return;
  }
  Shape shape = shape_of(*self);
  if (!broadcast_into(ctx, op, &shape, other->sizes())) return;
  Tensor* out = strided_output_arg(ctx, op, args, 2, dtype, shape.span());
  if (out == nullptr) return;
  Coerced ca, cb;
  const Tensor* a = coerce(ctx, op, *self, dtype, "self", &ca);
  const Tensor* b = a ? coerce(ctx, op, *other, dtype, "other", &cb) : nullptr;
  if (b == nullptr || !check_has_data(ctx, op, *a, "self") || !check_has_data(ctx, op, *b, "other")) return;
  const Tensor* ops[3] = {out, a, b};
  const size_t es = element_size(dtype);
  run_loop(make_loop(shape.span(), ops), [&](char* const* p, const int64_t* st, int64_t n) {
    if (es == 1) {
      return bitwise_bytes(kind, dtype == ScalarType::Bool, reinterpret_cast<uint8_t*>(p[0]), st[0],
                           reinterpret_cast<const uint8_t*>(p[1]), st[1], reinterpret_cast<const uint8_t*>(p[2]),
                           st[2], n);
    }
    for (int64_t i = 0; i < n; ++i) {
      const int64_t x = load_int64(p[1] + i * st[1], dtype), y = load_int64(p[2] + i * st[2], dtype);
      int64_t r = kind == Bitwise::And ? (x & y) : kind == Bitwise::Or ? (x | y) : (x ^ y);
      if (dtype == ScalarType::Bool) r = r != 0 ? 1 : 0;
      std::memcpy(p[0] + i * st[0], &r, es);  // little-endian: the low bytes are the narrower type
    }
  });
}

// Fills every element of `out` (any dense layout) with the Scalar args[i].
void fill_scalar(Tensor* out, const Value& v) {
  const ScalarType dtype = out->dtype();
  alignas(8) unsigned char b[8];
  store_scalar(b, dtype, v.scalar_to_double(), v.scalar_to_int(), !v.is_double());
  const int64_t n = out->numel();
  const size_t es = element_size(dtype);
  char* o = static_cast<char*>(out->data());
  if (es == 4) {
    uint32_t w;
    std::memcpy(&w, b, 4);
    uint32_t* d = reinterpret_cast<uint32_t*>(o);
    for (int64_t i = 0; i < n; ++i) d[i] = w;
  } else if (es == 1) {
    if (n > 0) std::memset(o, b[0], static_cast<size_t>(n));
  } else {
    for (int64_t i = 0; i < n; ++i) std::memcpy(o + static_cast<size_t>(i) * es, b, es);
  }
}

// A planned output whose dtype the exporter already chose (dtype= arguments are not re-read).
Tensor* planned_any_dtype(KernelContext& ctx, const char* op, Span<Value*> args, size_t i,
                          Span<const int64_t> sizes) {
  ScalarType dtype;
  return planned_dtype(ctx, op, args, i, &dtype) ? strided_output_arg(ctx, op, args, i, dtype, sizes) : nullptr;
}


}  // namespace

void op_relu(KernelContext& ctx, Span<Value*> args) { unary_op(ctx, args, "aten::relu", 2, UnOp::Relu); }

void op_gelu(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::gelu";
  if (!check_nargs(ctx, op, args, 3)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  if (self == nullptr) return;
  UnOp uop = UnOp::GeluErf;
  if (args[1]->is_string()) {
    std::string_view approx = args[1]->to_string();
    if (approx == "tanh") {
      uop = UnOp::GeluTanh;
    } else if (approx != "none") {
      fail(ctx, op, "approximate must be 'none' or 'tanh', got '" + std::string(approx) + "'");
      return;
    }
  } else if (!args[1]->is_none()) {
    fail(ctx, op, std::string("'approximate' must be a string, got ") + to_string(args[1]->tag()));
    return;
  }
  unary_f32(ctx, op, args, *self, 2, uop);
}

void op_clamp(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::clamp";
  if (!check_nargs(ctx, op, args, 4)) return;
  UnArgs u;
  if (!optional_bound(ctx, op, args, 1, "min", -kInfinity, &u.s) ||
      !optional_bound(ctx, op, args, 2, "max", kInfinity, &u.t)) {
    return;
  }
  u.kind = std::max(scalar_kind(*args[1]), scalar_kind(*args[2]));
  unary_op(ctx, args, op, 4, UnOp::Clamp, u);
}

void op_hardtanh(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::hardtanh";
  if (!check_nargs(ctx, op, args, 4)) return;
  UnArgs u;
  if (!optional_bound(ctx, op, args, 1, "min_val", -1.0f, &u.s) ||
      !optional_bound(ctx, op, args, 2, "max_val", 1.0f, &u.t)) {
    return;
  }
  // Unlike clamp, hardtanh keeps its input's dtype whatever the bounds' type (ATen: int64 in,
  // int64 out, even with the default float bounds).
  u.kind = ScalarKind::Int;
  if (args[0]->is_tensor() && (args[0]->to_tensor().dtype() == ScalarType::Bool ||
                               args[0]->to_tensor().dtype() == ScalarType::Byte)) {
    fail(ctx, op, std::string("not defined for ") + to_string(args[0]->to_tensor().dtype()) + " input");
    return;
  }
  unary_op(ctx, args, op, 4, UnOp::Clamp, u);
}

void op_leaky_relu(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::leaky_relu";
  if (!check_nargs(ctx, op, args, 3)) return;
  UnArgs u;
  if (!optional_bound(ctx, op, args, 1, "negative_slope", 0.01f, &u.s)) return;
  unary_op(ctx, args, op, 3, UnOp::LeakyRelu, u);
}

void op_pow_tensor_scalar(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::pow.Tensor_Scalar";
  if (!check_nargs(ctx, op, args, 3)) return;
  double e = 0.0;
  if (!scalar_arg(ctx, op, args, 1, "exponent", &e)) return;
  unary_op(ctx, args, op, 3, UnOp::Pow, {static_cast<float>(e), 0.0f, scalar_kind(*args[1]), e});
}

void op_sigmoid(KernelContext& ctx, Span<Value*> args) { unary_op(ctx, args, "aten::sigmoid", 2, UnOp::Sigmoid); }
void op_hardswish(KernelContext& ctx, Span<Value*> args) { unary_op(ctx, args, "aten::hardswish", 2, UnOp::Hardswish); }
void op_hardsigmoid(KernelContext& ctx, Span<Value*> args) {
  unary_op(ctx, args, "aten::hardsigmoid", 2, UnOp::Hardsigmoid);
}
void op_silu(KernelContext& ctx, Span<Value*> args) { unary_op(ctx, args, "aten::silu", 2, UnOp::Silu); }
void op_tanh(KernelContext& ctx, Span<Value*> args) { unary_op(ctx, args, "aten::tanh", 2, UnOp::Tanh); }
void op_exp(KernelContext& ctx, Span<Value*> args) { unary_op(ctx, args, "aten::exp", 2, UnOp::Exp); }
void op_rsqrt(KernelContext& ctx, Span<Value*> args) { unary_op(ctx, args, "aten::rsqrt", 2, UnOp::Rsqrt); }
void op_abs(KernelContext& ctx, Span<Value*> args) { unary_op(ctx, args, "aten::abs", 2, UnOp::Abs); }

void op_add_scalar(KernelContext& ctx, Span<Value*> args) {
  binary_op(ctx, args, "aten::add.Scalar", BinOp::Add, true);
}
void op_sub_scalar(KernelContext& ctx, Span<Value*> args) {
  binary_op(ctx, args, "aten::sub.Scalar", BinOp::Sub, true);
}
void op_div_scalar(KernelContext& ctx, Span<Value*> args) {
  binary_op(ctx, args, "aten::div.Scalar", BinOp::Div, false);
}

void op_neg(KernelContext& ctx, Span<Value*> args) { unary_op(ctx, args, "aten::neg", 2, UnOp::Neg); }
void op_sqrt(KernelContext& ctx, Span<Value*> args) { unary_op(ctx, args, "aten::sqrt", 2, UnOp::Sqrt); }
void op_log(KernelContext& ctx, Span<Value*> args) { unary_op(ctx, args, "aten::log", 2, UnOp::Log); }

void op_maximum(KernelContext& ctx, Span<Value*> args) {
  binary_op(ctx, args, "aten::maximum", BinOp::Max, false);
}
void op_minimum(KernelContext& ctx, Span<Value*> args) {
  binary_op(ctx, args, "aten::minimum", BinOp::Min, false);
}

void op_add_tensor(KernelContext& ctx, Span<Value*> args) {
  binary_op(ctx, args, "aten::add.Tensor", BinOp::Add, true);
}
void op_sub_tensor(KernelContext& ctx, Span<Value*> args) {
  binary_op(ctx, args, "aten::sub.Tensor", BinOp::Sub, true);
}
void op_mul_tensor(KernelContext& ctx, Span<Value*> args) {
  binary_op(ctx, args, "aten::mul.Tensor", BinOp::Mul, false);
}
void op_div_tensor(KernelContext& ctx, Span<Value*> args) {
  binary_op(ctx, args, "aten::div.Tensor", BinOp::Div, false);
}

void op_mul_scalar(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::mul.Scalar";
  if (!check_nargs(ctx, op, args, 3)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  if (self == nullptr) return;
  double s = 0.0;
  if (!scalar_arg(ctx, op, args, 1, "other", &s)) return;
  const UnArgs u{static_cast<float>(s), 0.0f, scalar_kind(*args[1]), s};
  if (self->dtype() == ScalarType::Float || integral_type(self->dtype())) {
    unary_f32(ctx, op, args, *self, 2, UnOp::Scale, u);
    return;
  }
  fail(ctx, op, std::string("unsupported dtype ") + to_string(self->dtype()));
}

void op_eq_scalar(KernelContext& ctx, Span<Value*> args) { compare_op(ctx, args, "aten::eq.Scalar", Cmp::Eq); }

void op_logical_not(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::logical_not";
  if (!check_nargs(ctx, op, args, 2)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  if (self == nullptr || !check_has_data(ctx, op, *self, "self")) return;
  Tensor* out = strided_output_arg(ctx, op, args, 1, ScalarType::Bool, self->sizes());
  if (out == nullptr) return;
  const Tensor* ops[2] = {out, self};
  const ScalarType dt = self->dtype();
  run_loop(make_loop(self->sizes(), ops), [&](char* const* p, const int64_t* st, int64_t n) {
    uint8_t* o = reinterpret_cast<uint8_t*>(p[0]);
    if (dt == ScalarType::Bool || dt == ScalarType::Byte || dt == ScalarType::Char) {
      const uint8_t* a = reinterpret_cast<const uint8_t*>(p[1]);
      if (st[0] == 1 && st[1] == 1) {
        for (int64_t i = 0; i < n; ++i) o[i] = a[i] == 0 ? 1 : 0;
      } else {
        for (int64_t i = 0; i < n; ++i) o[i * st[0]] = a[i * st[1]] == 0 ? 1 : 0;
      }
      return;
    }
    for (int64_t i = 0; i < n; ++i) o[i * st[0]] = load_as_double(p[1] + i * st[1], dt) == 0.0 ? 1 : 0;
  });
}

void op_where_self(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::where.self";
  if (!check_nargs(ctx, op, args, 4)) return;
  Tensor* cond = tensor_arg(ctx, op, args, 0, "condition");
  Tensor* self = cond ? tensor_arg(ctx, op, args, 1, "self") : nullptr;
  Tensor* other = self ? tensor_arg(ctx, op, args, 2, "other") : nullptr;
  if (other == nullptr) return;
  if (cond->dtype() != ScalarType::Bool && cond->dtype() != ScalarType::Byte) {
    fail(ctx, op, std::string("'condition' must be Bool, got ") + to_string(cond->dtype()));
    return;
  }
  Shape shape = shape_of(*cond);
  if (!broadcast_into(ctx, op, &shape, self->sizes()) || !broadcast_into(ctx, op, &shape, other->sizes())) {
    return;
  }
  ScalarType dtype;
  if (!planned_dtype(ctx, op, args, 3, &dtype)) return;
  Tensor* out = strided_output_arg(ctx, op, args, 3, dtype, shape.span());
  if (out == nullptr) return;
  Coerced ca, cb;
  const Tensor* a = coerce(ctx, op, *self, dtype, "self", &ca);
  const Tensor* b = a ? coerce(ctx, op, *other, dtype, "other", &cb) : nullptr;
  if (b == nullptr) return;
  if (!check_has_data(ctx, op, *cond, "condition") || !check_has_data(ctx, op, *a, "self") ||
      !check_has_data(ctx, op, *b, "other")) {
    return;
  }
  const Tensor* ops[4] = {out, cond, a, b};
  Loop<4> loop = make_loop(shape.span(), ops);
  const size_t es = element_size(dtype);
  run_loop(loop, [&](char* const* p, const int64_t* st, int64_t n) {
    if (es == 4 && st[0] == 4) {
      uint32_t* o = reinterpret_cast<uint32_t*>(p[0]);
      const uint8_t* c = reinterpret_cast<const uint8_t*>(p[1]);
      const uint32_t* x = reinterpret_cast<const uint32_t*>(p[2]);
      const uint32_t* y = reinterpret_cast<const uint32_t*>(p[3]);
      if (st[1] == 0) {  // condition broadcast along the row: one copy of a whole row
        const uint32_t* src = *c ? x : y;
        const int64_t ss = (*c ? st[2] : st[3]) / 4;
        if (ss == 1) {
          std::memcpy(o, src, static_cast<size_t>(n) * 4);
        } else {
          for (int64_t i = 0; i < n; ++i) o[i] = src[i * ss];
        }
        return;
      }
      if (st[1] == 1 && st[2] == 4 && st[3] == 4) {
        for (int64_t i = 0; i < n; ++i) o[i] = c[i] ? x[i] : y[i];
        return;
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      const bool c = *reinterpret_cast<const uint8_t*>(p[1] + i * st[1]) != 0;
      std::memcpy(p[0] + i * st[0], c ? p[2] + i * st[2] : p[3] + i * st[3], es);
    }
  });
}

void op_full_like(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::full_like";
  if (!check_nargs(ctx, op, args, 8)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  if (self == nullptr) return;
  double fill = 0.0;
  if (!scalar_arg(ctx, op, args, 1, "fill_value", &fill)) return;
  ScalarType dtype = self->dtype();
  if (!args[2]->is_none()) {
    int64_t code = 0;
    if (!int_arg(ctx, op, args, 2, "dtype", &code)) return;
    if (code < 0 || code > 127 || !is_valid(static_cast<ScalarType>(code))) {
      fail(ctx, op, "unknown dtype code " + std::to_string(code));
      return;
    }
    dtype = static_cast<ScalarType>(code);
  }
  Tensor* out = strided_output_arg(ctx, op, args, 7, dtype, self->sizes());
  if (out == nullptr) return;
  fill_scalar(out, *args[1]);
}

void op_full(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::full";
  if (!check_nargs(ctx, op, args, 7)) return;
  Span<const int64_t> size;
  if (!int_list_arg(ctx, op, args, 0, "size", &size)) return;
  if (!args[1]->is_scalar()) {
    fail(ctx, op, std::string("'fill_value' must be a scalar, got ") + to_string(args[1]->tag()));
    return;
  }
  Tensor* out = planned_any_dtype(ctx, op, args, 6, size);
  if (out != nullptr) fill_scalar(out, *args[1]);
}

void op_scalar_tensor(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::scalar_tensor";
  if (!check_nargs(ctx, op, args, 6)) return;
  if (!args[0]->is_scalar()) {
    fail(ctx, op, std::string("'s' must be a scalar, got ") + to_string(args[0]->tag()));
    return;
  }
  Tensor* out = planned_any_dtype(ctx, op, args, 5, Span<const int64_t>());
  if (out != nullptr) fill_scalar(out, *args[0]);
}

// float32 <-> float16/bfloat16, the conversions around every upcast kernel call. False for
// other pairs of types.
ETRT_ISA_BODY bool half_float_copy_body(char* const* p, const int64_t* st, int64_t n, ScalarType from, ScalarType to) {
  const bool to_half = from == ScalarType::Float && (to == ScalarType::Half || to == ScalarType::BFloat16);
  const bool from_half = to == ScalarType::Float && (from == ScalarType::Half || from == ScalarType::BFloat16);
  if (!to_half && !from_half) return false;
  const bool bf16 = to == ScalarType::BFloat16 || from == ScalarType::BFloat16;
  for (int64_t i = 0; i < n; ++i) {
    char* o = p[0] + i * st[0];
    const char* a = p[1] + i * st[1];
    if (to_half) {
      float v;
      std::memcpy(&v, a, 4);
      const uint16_t h = bf16 ? float_to_bfloat16(v) : float_to_half(v);
      std::memcpy(o, &h, 2);
    } else {
      uint16_t h;
      std::memcpy(&h, a, 2);
      const float v = bf16 ? bfloat16_to_float(h) : half_to_float(h);
      std::memcpy(o, &v, 4);
    }
  }
  return true;
}
ETRT_ISA_DISPATCH(bool, half_float_copy,
                  (char* const* p, const int64_t* st, int64_t n, ScalarType from, ScalarType to),
                  (p, st, n, from, to))

// Converts between dtypes as a C cast does (floats to integers truncate, to Bool: != 0).
void op_to_copy(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::_to_copy";
  if (!check_nargs(ctx, op, args, 8)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  if (self == nullptr || !check_has_data(ctx, op, *self, "self")) return;
  Tensor* out = planned_any_dtype(ctx, op, args, 7, self->sizes());
  if (out == nullptr) return;
  const ScalarType from = self->dtype(), to = out->dtype();
  const size_t es_in = element_size(from);
  const Tensor* ops[2] = {out, self};
  run_loop(make_loop(self->sizes(), ops), [&](char* const* p, const int64_t* st, int64_t n) {
    if (from == to) {
      for (int64_t i = 0; i < n; ++i) std::memcpy(p[0] + i * st[0], p[1] + i * st[1], es_in);
      return;
    }
    if (from == ScalarType::Float && to == ScalarType::Long) {
      for (int64_t i = 0; i < n; ++i) {
        float v;
        std::memcpy(&v, p[1] + i * st[1], 4);
        const int64_t r = checked::to_int<int64_t>(v);  // NaN and out-of-range values too
        std::memcpy(p[0] + i * st[0], &r, 8);
      }
      return;
    }
    if (half_float_copy(p, st, n, from, to)) return;
    for (int64_t i = 0; i < n; ++i) convert(p[0] + i * st[0], to, p[1] + i * st[1], from);
  });
}

void op_bitwise_not(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::bitwise_not";
  if (!check_nargs(ctx, op, args, 2)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  if (self == nullptr || !check_has_data(ctx, op, *self, "self")) return;
  const ScalarType t = self->dtype();
  if (!integral_type(t)) {
    fail(ctx, op, std::string("needs a Bool or integer tensor, got ") + to_string(t));
    return;
  }
  Tensor* out = strided_output_arg(ctx, op, args, 1, t, self->sizes());
  if (out == nullptr) return;
  const size_t es = element_size(t);
  const Tensor* ops[2] = {out, self};
  run_loop(make_loop(self->sizes(), ops), [&](char* const* p, const int64_t* st, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      char* o = p[0] + i * st[0];
      const char* a = p[1] + i * st[1];
      if (t == ScalarType::Bool) {
        *o = *a == 0 ? 1 : 0;
      } else {
        const int64_t v = ~load_int64(a, t);
        std::memcpy(o, &v, es);  // little-endian: the low bytes are the narrower integer
      }
    }
  });
}

void op_eq_tensor(KernelContext& ctx, Span<Value*> args) { compare_op(ctx, args, "aten::eq.Tensor", Cmp::Eq); }
void op_ne_scalar(KernelContext& ctx, Span<Value*> args) { compare_op(ctx, args, "aten::ne.Scalar", Cmp::Ne); }
void op_ne_tensor(KernelContext& ctx, Span<Value*> args) { compare_op(ctx, args, "aten::ne.Tensor", Cmp::Ne); }
void op_gt_scalar(KernelContext& ctx, Span<Value*> args) { compare_op(ctx, args, "aten::gt.Scalar", Cmp::Gt); }
void op_gt_tensor(KernelContext& ctx, Span<Value*> args) { compare_op(ctx, args, "aten::gt.Tensor", Cmp::Gt); }
void op_ge_scalar(KernelContext& ctx, Span<Value*> args) { compare_op(ctx, args, "aten::ge.Scalar", Cmp::Ge); }
void op_ge_tensor(KernelContext& ctx, Span<Value*> args) { compare_op(ctx, args, "aten::ge.Tensor", Cmp::Ge); }
void op_lt_scalar(KernelContext& ctx, Span<Value*> args) { compare_op(ctx, args, "aten::lt.Scalar", Cmp::Lt); }
void op_lt_tensor(KernelContext& ctx, Span<Value*> args) { compare_op(ctx, args, "aten::lt.Tensor", Cmp::Lt); }
void op_le_scalar(KernelContext& ctx, Span<Value*> args) { compare_op(ctx, args, "aten::le.Scalar", Cmp::Le); }
void op_le_tensor(KernelContext& ctx, Span<Value*> args) { compare_op(ctx, args, "aten::le.Tensor", Cmp::Le); }
void op_bitwise_and(KernelContext& ctx, Span<Value*> args) { bitwise_op(ctx, args, "aten::bitwise_and.Tensor", Bitwise::And); }
void op_bitwise_or(KernelContext& ctx, Span<Value*> args) { bitwise_op(ctx, args, "aten::bitwise_or.Tensor", Bitwise::Or); }
void op_bitwise_xor(KernelContext& ctx, Span<Value*> args) { bitwise_op(ctx, args, "aten::bitwise_xor.Tensor", Bitwise::Xor); }
void op_logical_and(KernelContext& ctx, Span<Value*> args) { compare_op(ctx, args, "aten::logical_and", Cmp::And); }
void op_logical_or(KernelContext& ctx, Span<Value*> args) { compare_op(ctx, args, "aten::logical_or", Cmp::Or); }

void op_clone(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::clone";
  if (!check_nargs(ctx, op, args, 3)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  if (self == nullptr || !check_has_data(ctx, op, *self, "self")) return;
  // memory_format (args[1]) is already in the output's planned layout.
  Tensor* out = strided_output_arg(ctx, op, args, 2, self->dtype(), self->sizes());
  if (out == nullptr) return;
  if (out->is_contiguous()) {
    copy_to_contiguous(*self, out->data());
    return;
  }
  const Tensor* ops[2] = {out, self};
  const size_t es = element_size(self->dtype());
  Loop<2> loop = make_loop(self->sizes(), ops);
  // A permutation of each pixel's channels (ShuffleNet's channel shuffle into an NHWC copy: [N,
  // C/g, g, H, W] with g innermost) walks g elements an inner loop in the output's order; the
  // next dimension out is the longer run. Any order copies the same elements.
  const int d = loop.dim;
  if (d >= 2 && loop.sizes[d - 1] < 8 && loop.sizes[d - 2] > loop.sizes[d - 1]) {
    std::swap(loop.sizes[d - 1], loop.sizes[d - 2]);
    for (int k = 0; k < 2; ++k) std::swap(loop.strides[k][d - 1], loop.strides[k][d - 2]);
  }
  run_loop(loop, [&](char* const* p, const int64_t* st, int64_t n) {
    if (es == 4) {
      for (int64_t i = 0; i < n; ++i) std::memcpy(p[0] + i * st[0], p[1] + i * st[1], 4);
      return;
    }
    for (int64_t i = 0; i < n; ++i) std::memcpy(p[0] + i * st[0], p[1] + i * st[1], es);
  });
}

}  // namespace kernels
}  // namespace etrt
