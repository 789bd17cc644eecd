// Kernels written once for every dtype: elements are read as double (floating results) or int64
// (integer and Bool results), computed, and stored in the planned output's dtype. These ops are
// rarely hot in inference programs; clarity and dtype coverage come first.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include "light.h"
#include "util.h"

namespace etrt {
namespace kernels {
namespace {

inline bool is_floating(ScalarType t) { return t == ScalarType::Float || t == ScalarType::Double; }

// The tensor at args[i], or a Scalar there as a 0-d tensor backed by `buf` (Long for an integer
// or bool scalar, Double otherwise). nullptr after failing the call.
const Tensor* tensor_or_scalar(KernelContext& ctx, const char* op, Span<Value*> args, size_t i,
                               const char* name, unsigned char (&buf)[8], Tensor* holder) {
  if (args[i]->is_scalar()) {
    const bool integral = !args[i]->is_double();
    const ScalarType t = integral ? ScalarType::Long : ScalarType::Double;
    store_scalar(buf, t, args[i]->scalar_to_double(), args[i]->scalar_to_int(), integral);
    *holder = Tensor(buf, t, Span<const int64_t>());
    return holder;
  }
  Tensor* t = tensor_arg(ctx, op, args, i, name);
  if (t == nullptr || !check_has_data(ctx, op, *t, name)) return nullptr;
  return t;
}

inline void store_d(char* p, ScalarType t, double v) { store_scalar(p, t, v, 0, false); }
inline void store_i(char* p, ScalarType t, int64_t v) { store_scalar(p, t, static_cast<double>(v), v, true); }

// ---------------------------------------------------------------------------------------------
// Unary

// Float32 in and out: the float form of an op (libm's float functions are within an ulp of the
// double route and about 3x faster; rounding and reciprocal vectorise in the clones).
enum class FloatFn : uint8_t {
  None, Acos, Acosh, Asin, Asinh, Atan, Atanh, Cos, Cosh, Sin, Sinh, Tan, Erf, Expm1, Log10, Log1p, Log2,
  Reciprocal, Ceil, Floor, Trunc, Round,
};

__attribute__((always_inline)) inline float float_fn(FloatFn f, float x) {
  switch (f) {
    case FloatFn::None: break;
    case FloatFn::Acos: return std::acos(x);
    case FloatFn::Acosh: return std::acosh(x);
    case FloatFn::Asin: return std::asin(x);
    case FloatFn::Asinh: return std::asinh(x);
    case FloatFn::Atan: return std::atan(x);
    case FloatFn::Atanh: return std::atanh(x);
    case FloatFn::Cos: return std::cos(x);
    case FloatFn::Cosh: return std::cosh(x);
    case FloatFn::Sin: return std::sin(x);
    case FloatFn::Sinh: return std::sinh(x);
    case FloatFn::Tan: return std::tan(x);
    case FloatFn::Erf: return std::erf(x);
    case FloatFn::Expm1: return std::expm1(x);
    case FloatFn::Log10: return std::log10(x);
    case FloatFn::Log1p: return std::log1p(x);
    case FloatFn::Log2: return std::log2(x);
    case FloatFn::Reciprocal: return 1.0f / x;
    case FloatFn::Ceil: return __builtin_ceilf(x);
    case FloatFn::Floor: return __builtin_floorf(x);
    case FloatFn::Trunc: return __builtin_truncf(x);
    case FloatFn::Round: return __builtin_nearbyintf(x);  // halves to even, as ATen
  }
  return x;
}

template <FloatFn F>
__attribute__((always_inline)) inline void float_loop(float* o, int64_t so, const float* a, int64_t sa, int64_t n) {
  if (so == 1 && sa == 1) {
    for (int64_t i = 0; i < n; ++i) o[i] = float_fn(F, a[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) o[i * so] = float_fn(F, a[i * sa]);
  }
}

// One loop per function (the switch stays outside), element strides.
ETRT_ISA_BODY void float_run_body(FloatFn f, float* o, int64_t so, const float* a, int64_t sa, int64_t n) {
  switch (f) {
#define ETRT_FLOAT_CASE(name) \
  case FloatFn::name: float_loop<FloatFn::name>(o, so, a, sa, n); break;
    ETRT_FLOAT_CASE(Acos) ETRT_FLOAT_CASE(Acosh) ETRT_FLOAT_CASE(Asin) ETRT_FLOAT_CASE(Asinh)
    ETRT_FLOAT_CASE(Atan) ETRT_FLOAT_CASE(Atanh) ETRT_FLOAT_CASE(Cos) ETRT_FLOAT_CASE(Cosh)
    ETRT_FLOAT_CASE(Sin) ETRT_FLOAT_CASE(Sinh) ETRT_FLOAT_CASE(Tan) ETRT_FLOAT_CASE(Erf)
    ETRT_FLOAT_CASE(Expm1) ETRT_FLOAT_CASE(Log10) ETRT_FLOAT_CASE(Log1p) ETRT_FLOAT_CASE(Log2)
    ETRT_FLOAT_CASE(Reciprocal) ETRT_FLOAT_CASE(Ceil) ETRT_FLOAT_CASE(Floor) ETRT_FLOAT_CASE(Trunc)
    ETRT_FLOAT_CASE(Round)
#undef ETRT_FLOAT_CASE
    case FloatFn::None: break;
  }
}
ETRT_ISA_DISPATCH(void, float_run,
                  (FloatFn f, float* o, int64_t so, const float* a, int64_t sa, int64_t n),
                  (f, o, so, a, sa, n))

struct UnaryFns {
  double (*d)(double);
  int64_t (*i)(int64_t);  // for integer results from integer inputs; nullptr: always through d
  FloatFn f = FloatFn::None;
};

void unary_any(KernelContext& ctx, Span<Value*> args, const char* op, UnaryFns f) {
  if (!check_nargs(ctx, op, args, 2)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  ScalarType dt;
  if (self == nullptr || !check_has_data(ctx, op, *self, "self") || !planned_dtype(ctx, op, args, 1, &dt)) return;
  Tensor* out = strided_output_arg(ctx, op, args, 1, dt, self->sizes());
  if (out == nullptr) return;
  const ScalarType in = self->dtype();
  const bool ints = f.i != nullptr && integral_type(in) && integral_type(dt);
  const Tensor* ops[2] = {out, self};
  const bool floats = f.f != FloatFn::None && in == ScalarType::Float && dt == ScalarType::Float;
  run_loop(make_loop(self->sizes(), ops), [&](char* const* p, const int64_t* st, int64_t n) {
    if (floats) {
      return float_run(f.f, reinterpret_cast<float*>(p[0]), st[0] / 4, reinterpret_cast<const float*>(p[1]),
                       st[1] / 4, n);
    }
    for (int64_t k = 0; k < n; ++k) {
      char* o = p[0] + k * st[0];
      const char* a = p[1] + k * st[1];
      if (ints) {
        store_i(o, dt, f.i(load_int64(a, in)));
      } else {
        store_d(o, dt, f.d(load_as_double(a, in)));
      }
    }
  });
}

int64_t identity_i(int64_t x) { return x; }
double sign_d(double x) { return static_cast<double>((x > 0) - (x < 0)); }
int64_t sign_i(int64_t x) { return (x > 0) - (x < 0); }
double isnan_d(double x) { return std::isnan(x) ? 1.0 : 0.0; }
double isinf_d(double x) { return std::isinf(x) ? 1.0 : 0.0; }
int64_t zero_i(int64_t) { return 0; }
double reciprocal_d(double x) { return 1.0 / x; }
double round_d(double x) { return std::nearbyint(x); }  // halves to even, as ATen

// ---------------------------------------------------------------------------------------------
// Binary and ternary, with broadcasting

struct BinaryFns {
  double (*d)(double, double);
  int64_t (*i)(int64_t, int64_t);  // nullptr: always through d
};

// Integer division by zero has no value; ATen raises, etrt gives 0 rather than crash.
int64_t floor_div_i(int64_t a, int64_t b) {
  if (b == 0) return 0;
  const int64_t q = checked::wrap_div(a, b);
  return (checked::wrap_rem(a, b) != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t trunc_div_i(int64_t a, int64_t b) { return b == 0 ? 0 : checked::wrap_div(a, b); }
// ATen's floor division of floating values (c10::div_floor_floating).
double floor_div_d(double a, double b) {
  if (b == 0.0) return a / b;
  const double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0.0 && ((b < 0) != (mod < 0))) div -= 1.0;
  if (div == 0.0) return std::copysign(0.0, a / b);
  double floordiv = std::floor(div);
  if (div - floordiv > 0.5) floordiv += 1.0;
  return floordiv;
}
double trunc_div_d(double a, double b) { return std::trunc(a / b); }
double true_div_d(double a, double b) { return a / b; }
double fmod_d(double a, double b) { return std::fmod(a, b); }
int64_t fmod_i(int64_t a, int64_t b) { return b == 0 ? 0 : checked::wrap_rem(a, b); }
double remainder_d(double a, double b) {
  double m = std::fmod(a, b);
  if (m != 0.0 && ((b < 0) != (m < 0))) m += b;
  return m;
}
int64_t remainder_i(int64_t a, int64_t b) {
  if (b == 0) return 0;
  int64_t m = checked::wrap_rem(a, b);
  if (m != 0 && ((b < 0) != (m < 0))) m += b;
  return m;
}
double atan2_d(double a, double b) { return std::atan2(a, b); }
double pow_d(double a, double b) { return std::pow(a, b); }
int64_t pow_i(int64_t a, int64_t b) {
  if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);
  return checked::wrap_pow(a, static_cast<uint64_t>(b));  // wraps as ATen's integer pow does
}
int64_t and_i(int64_t a, int64_t b) { return a & b; }
int64_t or_i(int64_t a, int64_t b) { return a | b; }
int64_t xor_i(int64_t a, int64_t b) { return a ^ b; }
double lxor_d(double a, double b) { return ((a != 0.0) != (b != 0.0)) ? 1.0 : 0.0; }
double unsupported_d(double, double) { return 0.0; }

// self <op> other | out (either side may be a Scalar); `nargs` counts the schema's arguments.
void binary_any(KernelContext& ctx, Span<Value*> args, const char* op, size_t nargs, BinaryFns f) {
  if (!check_nargs(ctx, op, args, nargs + 1)) return;
  alignas(8) unsigned char ba[8], bb[8];
  Tensor ha, hb;
  const Tensor* a = tensor_or_scalar(ctx, op, args, 0, "self", ba, &ha);
  const Tensor* b = a ? tensor_or_scalar(ctx, op, args, 1, "other", bb, &hb) : nullptr;
  ScalarType dt;
  if (b == nullptr || !planned_dtype(ctx, op, args, nargs, &dt)) return;
  Shape shape = shape_of(*a);
  if (!broadcast_into(ctx, op, &shape, b->sizes())) return;
  Tensor* out = strided_output_arg(ctx, op, args, nargs, dt, shape.span());
  if (out == nullptr) return;
  const ScalarType ta = a->dtype(), tb = b->dtype();
  const bool ints = f.i != nullptr && integral_type(dt) && integral_type(ta) && integral_type(tb);
  if (!ints && f.d == unsupported_d) {
    fail(ctx, op, std::string("needs Bool or integer operands, got ") + to_string(ta) + " and " + to_string(tb));
    return;
  }
  const Tensor* ops[3] = {out, a, b};
  run_loop(make_loop(shape.span(), ops), [&](char* const* p, const int64_t* st, int64_t n) {
    for (int64_t k = 0; k < n; ++k) {
      char* o = p[0] + k * st[0];
      const char* x = p[1] + k * st[1];
      const char* y = p[2] + k * st[2];
      if (ints) {
        store_i(o, dt, f.i(load_int64(x, ta), load_int64(y, tb)));
      } else if (dt == ScalarType::Float && f.d == true_div_d) {
        store_d(o, dt, static_cast<float>(load_as_double(x, ta)) / static_cast<float>(load_as_double(y, tb)));
      } else {
        store_d(o, dt, f.d(load_as_double(x, ta), load_as_double(y, tb)));
      }
    }
  });
}

void div_mode(KernelContext& ctx, Span<Value*> args, const char* op) {
  if (!check_nargs(ctx, op, args, 4)) return;
  if (args[2]->is_none()) return binary_any(ctx, args, op, 3, {true_div_d, nullptr});
  if (!args[2]->is_string()) {
    fail(ctx, op, std::string("'rounding_mode' must be a string, got ") + to_string(args[2]->tag()));
    return;
  }
  const std::string_view mode = args[2]->to_string();
  if (mode == "trunc") return binary_any(ctx, args, op, 3, {trunc_div_d, trunc_div_i});
  if (mode == "floor") return binary_any(ctx, args, op, 3, {floor_div_d, floor_div_i});
  fail(ctx, op, "rounding_mode must be 'trunc', 'floor' or None, got '" + std::string(mode) + "'");
}

// ---------------------------------------------------------------------------------------------
// Reductions

template <typename T>
T* temp_array(KernelContext& ctx, const char* op, int64_t n) {
  T* p = static_cast<T*>(ctx.allocate_temp(static_cast<size_t>(n > 0 ? n : 1) * sizeof(T)));
  if (p == nullptr) ctx.fail(Error(ErrorCode::OutOfMemory, std::string(op) + ": out of scratch memory"));
  return p;
}

// The dimensions a `dim` argument names: an int, an int list, or None (every dimension).
bool dims_arg(KernelContext& ctx, const char* op, Span<Value*> args, size_t i, int64_t* storage,
              Span<const int64_t>* dims) {
  if (args[i]->is_none()) {
    *dims = {};
    return true;
  }
  if (args[i]->is_int()) {
    storage[0] = args[i]->to_int();
    *dims = Span<const int64_t>(storage, 1);
    return true;
  }
  return int_list_arg(ctx, op, args, i, "dim", dims);
}

enum class Red { Sum, Prod, Min, Max, Any, All };

// Folds `self` over the reduced dims of `keep` into `acc` (double or int64 per result element).
template <typename A>
void fold(const Tensor& self, const Shape& keep, A* acc, Red r) {
  Tensor accs(acc, sizeof(A) == 8 && std::is_same<A, double>::value ? ScalarType::Double : ScalarType::Long,
              keep.span());
  const Tensor* ops[2] = {&accs, &self};
  const ScalarType in = self.dtype();
  run_loop(make_loop(self.sizes(), ops), [&](char* const* p, const int64_t* st, int64_t n) {
    for (int64_t k = 0; k < n; ++k) {
      A* a = reinterpret_cast<A*>(p[0] + k * st[0]);
      const char* x = p[1] + k * st[1];
      A v;
      if constexpr (std::is_same<A, double>::value) {
        v = load_as_double(x, in);
      } else {
        v = load_int64(x, in);
      }
      switch (r) {
        case Red::Sum:
          if constexpr (std::is_same<A, double>::value) *a += v; else *a = checked::wrap_add(*a, v);
          break;
        case Red::Prod:
          if constexpr (std::is_same<A, double>::value) *a *= v; else *a = checked::wrap_mul(*a, v);
          break;
        case Red::Min: if (v < *a || v != v) *a = (*a != *a) ? *a : v; break;
        case Red::Max: if (v > *a || v != v) *a = (*a != *a) ? *a : v; break;
        case Red::Any: *a = (*a != 0 || v != 0) ? 1 : 0; break;
        case Red::All: *a = (*a != 0 && v != 0) ? 1 : 0; break;
      }
    }
  }, /*parallel=*/false);
}

// sum, prod, amin, amax, any over `dims` of args[0] into the planned output args[out_i].
void reduce_any(KernelContext& ctx, Span<Value*> args, const char* op, Red r, Span<const int64_t> dims,
                bool keepdim, size_t out_i) {
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  ScalarType dt;
  if (self == nullptr || !check_has_data(ctx, op, *self, "self") || !planned_dtype(ctx, op, args, out_i, &dt)) return;
  Shape keep, oshape;
  int64_t count = 1;
  if (!reduction_shapes(ctx, op, *self, dims, keepdim, &keep, &oshape, &count)) return;
  if ((r == Red::Min || r == Red::Max) && count == 0 && oshape.numel() > 0) {
    fail(ctx, op, "cannot reduce over an empty dimension (no identity)");
    return;
  }
  Tensor* out = output_arg(ctx, op, args, out_i, dt, oshape.span());
  if (out == nullptr) return;
  const int64_t on = out->numel();
  const bool ints = integral_type(dt) && (integral_type(self->dtype()) || r == Red::Any || r == Red::All);
  char* o = static_cast<char*>(out->data());
  const size_t es = element_size(dt);
  if (ints) {
    int64_t* acc = temp_array<int64_t>(ctx, op, on);
    if (acc == nullptr) return;
    const int64_t init = r == Red::Prod || r == Red::All ? 1
                         : r == Red::Min                ? std::numeric_limits<int64_t>::max()
                         : r == Red::Max                ? std::numeric_limits<int64_t>::min()
                                                        : 0;
    std::fill(acc, acc + on, init);
    if (r == Red::Any || r == Red::All) {
      double* dacc = temp_array<double>(ctx, op, on);
      if (dacc == nullptr) return;
      std::fill(dacc, dacc + on, static_cast<double>(init));
      fold(*self, keep, dacc, r);  // any dtype, NaN counts as true
      for (int64_t i = 0; i < on; ++i) acc[i] = dacc[i] != 0.0 ? 1 : 0;
    } else {
      fold(*self, keep, acc, r);
    }
    for (int64_t i = 0; i < on; ++i) store_i(o + i * es, dt, acc[i]);
    return;
  }
  double* acc = temp_array<double>(ctx, op, on);
  if (acc == nullptr) return;
  const double init = r == Red::Prod ? 1.0
                      : r == Red::Min ? std::numeric_limits<double>::infinity()
                      : r == Red::Max ? -std::numeric_limits<double>::infinity()
                                      : 0.0;
  std::fill(acc, acc + on, init);
  fold(*self, keep, acc, r);
  for (int64_t i = 0; i < on; ++i) store_d(o + i * es, dt, acc[i]);
}

// Variance with `correction` (0: population; 1: Bessel's), accumulated in double.
void variance(KernelContext& ctx, Span<Value*> args, const char* op, Span<const int64_t> dims, double correction,
              bool keepdim, size_t out_i) {
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  if (self == nullptr || !check_has_data(ctx, op, *self, "self")) return;
  ScalarType dt;
  if (!planned_dtype(ctx, op, args, out_i, &dt)) return;
  Shape keep, oshape;
  int64_t count = 1;
  if (!reduction_shapes(ctx, op, *self, dims, keepdim, &keep, &oshape, &count)) return;
  Tensor* out = output_arg(ctx, op, args, out_i, dt, oshape.span());
  if (out == nullptr) return;
  const int64_t on = out->numel();
  double* mean = temp_array<double>(ctx, op, on);
  double* m2 = mean ? temp_array<double>(ctx, op, on) : nullptr;
  if (m2 == nullptr) return;
  std::fill(mean, mean + on, 0.0);
  std::fill(m2, m2 + on, 0.0);
  fold(*self, keep, mean, Red::Sum);
  for (int64_t i = 0; i < on; ++i) mean[i] /= static_cast<double>(count);
  Tensor means(mean, ScalarType::Double, keep.span()), sq(m2, ScalarType::Double, keep.span());
  const Tensor* ops[3] = {&sq, &means, self};
  const ScalarType in = self->dtype();
  run_loop(make_loop(self->sizes(), ops), [&](char* const* p, const int64_t* st, int64_t n) {
    for (int64_t k = 0; k < n; ++k) {
      const double d = load_as_double(p[2] + k * st[2], in) - *reinterpret_cast<const double*>(p[1] + k * st[1]);
      *reinterpret_cast<double*>(p[0] + k * st[0]) += d * d;
    }
  }, /*parallel=*/false);
  const double denom = static_cast<double>(count) - correction;
  char* o = static_cast<char*>(out->data());
  for (int64_t i = 0; i < on; ++i) {
    store_d(o + i * element_size(dt), dt, denom <= 0.0 ? (count == 0 ? NAN : m2[i] / std::max(denom, 0.0)) : m2[i] / denom);
  }
}

// [outer, len, inner] view of a contiguous copy of `self` along `dim` (all of it when dim < 0).
struct Rows {
  const char* data = nullptr;
  int64_t outer = 1, len = 1, inner = 1;
};

bool rows_along(KernelContext& ctx, const char* op, const Tensor& self, int64_t dim, Rows* r) {
  if (self.is_contiguous()) {
    r->data = static_cast<const char*>(self.data());
  } else {
    char* buf = temp_array<char>(ctx, op, static_cast<int64_t>(self.nbytes()));
    if (buf == nullptr) return false;
    copy_to_contiguous(self, buf);
    r->data = buf;
  }
  if (dim < 0) {
    r->len = self.numel();
    return true;
  }
  for (int i = 0; i < self.dim(); ++i) {
    if (i < dim) r->outer *= self.size(i);
    if (i == dim) r->len = self.size(i);
    if (i > dim) r->inner *= self.size(i);
  }
  return true;
}

// Arg-reductions along one dim: for each row, the index of the first min (or max); NaN wins.
// Writes values (when `values` is not null, in its dtype) and Long indices.
void arg_reduce(const Rows& r, ScalarType in, bool want_max, char* values, ScalarType vt, int64_t* idx) {
  const size_t es = element_size(in), ves = element_size(vt);
  const bool ints = integral_type(in);
  for (int64_t o = 0; o < r.outer; ++o) {
    for (int64_t i = 0; i < r.inner; ++i) {
      int64_t best = 0;
      double bd = 0.0;
      int64_t bi = 0;
      for (int64_t l = 0; l < r.len; ++l) {
        const char* x = r.data + ((o * r.len + l) * r.inner + i) * static_cast<int64_t>(es);
        if (ints) {
          const int64_t v = load_int64(x, in);
          if (l == 0 || (want_max ? v > bi : v < bi)) { bi = v; best = l; }
        } else {
          const double v = load_as_double(x, in);
          if (std::isnan(bd) && l > 0) continue;
          if (l == 0 || std::isnan(v) || (want_max ? v > bd : v < bd)) { bd = v; best = l; }
        }
      }
      const int64_t oi = o * r.inner + i;
      idx[oi] = best;
      if (values != nullptr) {
        if (ints) store_i(values + oi * static_cast<int64_t>(ves), vt, bi);
        else store_d(values + oi * static_cast<int64_t>(ves), vt, bd);
      }
    }
  }
}

// argmin/argmax: self, dim?, keepdim | out (Long)
void arg_op(KernelContext& ctx, Span<Value*> args, const char* op, bool want_max) {
  if (!check_nargs(ctx, op, args, 4)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  bool keepdim = false;
  if (self == nullptr || !check_has_data(ctx, op, *self, "self") || !bool_arg(ctx, op, args, 2, "keepdim", &keepdim)) return;
  int64_t dim = -1;
  Shape oshape;
  if (!args[1]->is_none()) {
    if (!int_arg(ctx, op, args, 1, "dim", &dim) || !wrap_dim(ctx, op, dim, self->dim(), &dim)) return;
    for (int i = 0; i < self->dim(); ++i) {
      if (i != dim || keepdim) oshape.sizes[oshape.dim++] = i == dim ? 1 : self->size(i);
    }
    if (self->dim() == 0) dim = -1;
  } else if (keepdim) {
    oshape.dim = self->dim();
    for (int i = 0; i < oshape.dim; ++i) oshape.sizes[i] = 1;
  }
  Tensor* out = output_arg(ctx, op, args, 3, ScalarType::Long, oshape.span());
  if (out == nullptr) return;
  Rows r;
  if (!rows_along(ctx, op, *self, dim, &r)) return;
  if (r.len == 0 && out->numel() > 0) {
    fail(ctx, op, "cannot reduce over an empty dimension");
    return;
  }
  arg_reduce(r, self->dtype(), want_max, nullptr, ScalarType::Long, out->data_as<int64_t>());
}

// max.dim/min.dim: self, dim, keepdim | values, indices
void minmax_dim(KernelContext& ctx, Span<Value*> args, const char* op, bool want_max) {
  if (!check_nargs(ctx, op, args, 5)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  bool keepdim = false;
  int64_t dim = 0;
  if (self == nullptr || !check_has_data(ctx, op, *self, "self") || !int_arg(ctx, op, args, 1, "dim", &dim) ||
      !wrap_dim(ctx, op, dim, self->dim(), &dim) || !bool_arg(ctx, op, args, 2, "keepdim", &keepdim)) {
    return;
  }
  Shape oshape;
  for (int i = 0; i < self->dim(); ++i) {
    if (i != dim || keepdim) oshape.sizes[oshape.dim++] = i == dim ? 1 : self->size(i);
  }
  Tensor* values = output_arg(ctx, op, args, 3, self->dtype(), oshape.span(), "values");
  Tensor* indices = values ? output_arg(ctx, op, args, 4, ScalarType::Long, oshape.span(), "indices") : nullptr;
  if (indices == nullptr) return;
  Rows r;
  if (!rows_along(ctx, op, *self, self->dim() == 0 ? -1 : dim, &r)) return;
  if (r.len == 0 && values->numel() > 0) {
    fail(ctx, op, "cannot reduce over an empty dimension");
    return;
  }
  arg_reduce(r, self->dtype(), want_max, static_cast<char*>(values->data()), self->dtype(), indices->data_as<int64_t>());
}

// ---------------------------------------------------------------------------------------------
// Scans and sorting

// Sort keys: NaN above everything (ATen's order), then index for stability.
struct Key {
  double d;
  int64_t i;
  int64_t pos;
};

inline bool key_less(const Key& a, const Key& b, bool ints) {
  if (ints) return a.i < b.i;
  const bool an = std::isnan(a.d), bn = std::isnan(b.d);
  if (an || bn) return !an && bn;
  return a.d < b.d;
}

// Sorts (or takes the top k of) each row along `dim`; writes values and Long indices.
void sort_rows(KernelContext& ctx, const char* op, const Tensor& self, int64_t dim, bool descending, int64_t k,
               Tensor* values, Tensor* indices) {
  Rows r;
  if (!rows_along(ctx, op, self, self.dim() == 0 ? -1 : dim, &r)) return;
  Key* keys = temp_array<Key>(ctx, op, r.len);
  if (keys == nullptr) return;
  const ScalarType in = self.dtype();
  const bool ints = integral_type(in);
  const size_t es = element_size(in);
  char* vo = static_cast<char*>(values->data());
  int64_t* io = indices->data_as<int64_t>();
  for (int64_t o = 0; o < r.outer; ++o) {
    for (int64_t i = 0; i < r.inner; ++i) {
      for (int64_t l = 0; l < r.len; ++l) {
        const char* x = r.data + ((o * r.len + l) * r.inner + i) * static_cast<int64_t>(es);
        keys[l] = {ints ? 0.0 : load_as_double(x, in), ints ? load_int64(x, in) : 0, l};
      }
      if (descending) {
        std::stable_sort(keys, keys + r.len, [&](const Key& a, const Key& b) { return key_less(b, a, ints); });
      } else {
        std::stable_sort(keys, keys + r.len, [&](const Key& a, const Key& b) { return key_less(a, b, ints); });
      }
      for (int64_t l = 0; l < k; ++l) {
        const int64_t oi = (o * k + l) * r.inner + i;
        char* v = vo + oi * static_cast<int64_t>(es);
        if (ints) store_i(v, in, keys[l].i);
        else store_d(v, in, keys[l].d);
        io[oi] = keys[l].pos;
      }
    }
  }
}

}  // namespace

// --- unary ---------------------------------------------------------------------------------------
#define ETRT_UNARY_F(fn, name, dfn, ifn, ff) \
  void fn(KernelContext& ctx, Span<Value*> args) { unary_any(ctx, args, name, {dfn, ifn, FloatFn::ff}); }
#define ETRT_UNARY(fn, name, dfn, ifn) \
  void fn(KernelContext& ctx, Span<Value*> args) { unary_any(ctx, args, name, {dfn, ifn}); }
ETRT_UNARY_F(op_acos, "aten::acos", [](double x) { return std::acos(x); }, nullptr, Acos)
ETRT_UNARY_F(op_acosh, "aten::acosh", [](double x) { return std::acosh(x); }, nullptr, Acosh)
ETRT_UNARY_F(op_asin, "aten::asin", [](double x) { return std::asin(x); }, nullptr, Asin)
ETRT_UNARY_F(op_asinh, "aten::asinh", [](double x) { return std::asinh(x); }, nullptr, Asinh)
ETRT_UNARY_F(op_atan, "aten::atan", [](double x) { return std::atan(x); }, nullptr, Atan)
ETRT_UNARY_F(op_atanh, "aten::atanh", [](double x) { return std::atanh(x); }, nullptr, Atanh)
ETRT_UNARY_F(op_cos, "aten::cos", [](double x) { return std::cos(x); }, nullptr, Cos)
ETRT_UNARY_F(op_cosh, "aten::cosh", [](double x) { return std::cosh(x); }, nullptr, Cosh)
ETRT_UNARY_F(op_sin, "aten::sin", [](double x) { return std::sin(x); }, nullptr, Sin)
ETRT_UNARY_F(op_sinh, "aten::sinh", [](double x) { return std::sinh(x); }, nullptr, Sinh)
ETRT_UNARY_F(op_tan, "aten::tan", [](double x) { return std::tan(x); }, nullptr, Tan)
ETRT_UNARY_F(op_erf, "aten::erf", [](double x) { return std::erf(x); }, nullptr, Erf)
ETRT_UNARY_F(op_expm1, "aten::expm1", [](double x) { return std::expm1(x); }, nullptr, Expm1)
ETRT_UNARY_F(op_log10, "aten::log10", [](double x) { return std::log10(x); }, nullptr, Log10)
ETRT_UNARY_F(op_log1p, "aten::log1p", [](double x) { return std::log1p(x); }, nullptr, Log1p)
ETRT_UNARY_F(op_log2, "aten::log2", [](double x) { return std::log2(x); }, nullptr, Log2)
ETRT_UNARY_F(op_reciprocal, "aten::reciprocal", reciprocal_d, nullptr, Reciprocal)
ETRT_UNARY_F(op_ceil, "aten::ceil", [](double x) { return std::ceil(x); }, identity_i, Ceil)
ETRT_UNARY_F(op_floor, "aten::floor", [](double x) { return std::floor(x); }, identity_i, Floor)
ETRT_UNARY_F(op_trunc, "aten::trunc", [](double x) { return std::trunc(x); }, identity_i, Trunc)
ETRT_UNARY_F(op_round, "aten::round", round_d, identity_i, Round)
ETRT_UNARY(op_sign, "aten::sign", sign_d, sign_i)
ETRT_UNARY(op_isnan, "aten::isnan", isnan_d, zero_i)
ETRT_UNARY(op_isinf, "aten::isinf", isinf_d, zero_i)
#undef ETRT_UNARY
#undef ETRT_UNARY_F

void op_elu(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::elu";
  if (!check_nargs(ctx, op, args, 5)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  double alpha = 1, scale = 1, input_scale = 1;
  ScalarType dt;
  if (self == nullptr || !check_has_data(ctx, op, *self, "self") || !scalar_arg(ctx, op, args, 1, "alpha", &alpha) ||
      !scalar_arg(ctx, op, args, 2, "scale", &scale) || !scalar_arg(ctx, op, args, 3, "input_scale", &input_scale) ||
      !planned_dtype(ctx, op, args, 4, &dt)) {
    return;
  }
  Tensor* out = strided_output_arg(ctx, op, args, 4, dt, self->sizes());
  if (out == nullptr) return;
  const ScalarType in = self->dtype();
  const Tensor* ops[2] = {out, self};
  run_loop(make_loop(self->sizes(), ops), [&](char* const* p, const int64_t* st, int64_t n) {
    for (int64_t k = 0; k < n; ++k) {
      const double x = load_as_double(p[1] + k * st[1], in);
      store_d(p[0] + k * st[0], dt, x > 0 ? scale * x : scale * alpha * std::expm1(x * input_scale));
    }
  });
}

// --- binary --------------------------------------------------------------------------------------
void op_atan2(KernelContext& ctx, Span<Value*> args) { binary_any(ctx, args, "aten::atan2", 2, {atan2_d, nullptr}); }
void op_fmod_tensor(KernelContext& ctx, Span<Value*> args) { binary_any(ctx, args, "aten::fmod.Tensor", 2, {fmod_d, fmod_i}); }
void op_fmod_scalar(KernelContext& ctx, Span<Value*> args) { binary_any(ctx, args, "aten::fmod.Scalar", 2, {fmod_d, fmod_i}); }
void op_remainder_tensor(KernelContext& ctx, Span<Value*> args) {
  binary_any(ctx, args, "aten::remainder.Tensor", 2, {remainder_d, remainder_i});
}
void op_remainder_scalar(KernelContext& ctx, Span<Value*> args) {
  binary_any(ctx, args, "aten::remainder.Scalar", 2, {remainder_d, remainder_i});
}
void op_pow_tensor_tensor(KernelContext& ctx, Span<Value*> args) {
  binary_any(ctx, args, "aten::pow.Tensor_Tensor", 2, {pow_d, pow_i});
}
void op_pow_scalar(KernelContext& ctx, Span<Value*> args) { binary_any(ctx, args, "aten::pow.Scalar", 2, {pow_d, pow_i}); }
void op_bitwise_and_scalar(KernelContext& ctx, Span<Value*> args) {
  binary_any(ctx, args, "aten::bitwise_and.Scalar", 2, {unsupported_d, and_i});
}
void op_bitwise_or_scalar(KernelContext& ctx, Span<Value*> args) {
  binary_any(ctx, args, "aten::bitwise_or.Scalar", 2, {unsupported_d, or_i});
}
void op_bitwise_xor_scalar(KernelContext& ctx, Span<Value*> args) {
  binary_any(ctx, args, "aten::bitwise_xor.Scalar", 2, {unsupported_d, xor_i});
}
void op_logical_xor(KernelContext& ctx, Span<Value*> args) { binary_any(ctx, args, "aten::logical_xor", 2, {lxor_d, nullptr}); }
void op_div_tensor_mode(KernelContext& ctx, Span<Value*> args) { div_mode(ctx, args, "aten::div.Tensor_mode"); }
void op_div_scalar_mode(KernelContext& ctx, Span<Value*> args) { div_mode(ctx, args, "aten::div.Scalar_mode"); }

void op_clamp_tensor(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::clamp.Tensor";
  if (!check_nargs(ctx, op, args, 4)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  Tensor *lo = nullptr, *hi = nullptr;
  ScalarType dt;
  if (self == nullptr || !check_has_data(ctx, op, *self, "self") || !optional_tensor_arg(ctx, op, args, 1, "min", &lo) ||
      !optional_tensor_arg(ctx, op, args, 2, "max", &hi) || !planned_dtype(ctx, op, args, 3, &dt)) {
    return;
  }
  Shape shape = shape_of(*self);
  if ((lo && !broadcast_into(ctx, op, &shape, lo->sizes())) || (hi && !broadcast_into(ctx, op, &shape, hi->sizes()))) return;
  Tensor* out = strided_output_arg(ctx, op, args, 3, dt, shape.span());
  if (out == nullptr) return;
  const Tensor* ops[4] = {out, self, lo ? lo : self, hi ? hi : self};
  const ScalarType ts = self->dtype(), tl = lo ? lo->dtype() : ts, th = hi ? hi->dtype() : ts;
  const bool ints = integral_type(dt);
  run_loop(make_loop(shape.span(), ops), [&](char* const* p, const int64_t* st, int64_t n) {
    for (int64_t k = 0; k < n; ++k) {
      if (ints) {
        int64_t x = load_int64(p[1] + k * st[1], ts);
        if (lo) x = std::max(x, load_int64(p[2] + k * st[2], tl));
        if (hi) x = std::min(x, load_int64(p[3] + k * st[3], th));
        store_i(p[0] + k * st[0], dt, x);
      } else {
        double x = load_as_double(p[1] + k * st[1], ts);
        if (lo) {
          const double l = load_as_double(p[2] + k * st[2], tl);
          x = std::isnan(x) || std::isnan(l) ? x + l : std::max(x, l);
        }
        if (hi) {
          const double h = load_as_double(p[3] + k * st[3], th);
          x = std::isnan(x) || std::isnan(h) ? x + h : std::min(x, h);
        }
        store_d(p[0] + k * st[0], dt, x);
      }
    }
  });
}

// --- reductions ----------------------------------------------------------------------------------
void reduce_with_dims(KernelContext& ctx, Span<Value*> args, const char* op, Red r, int dim_i, int keepdim_i,
                      size_t out_i) {
  if (!check_nargs(ctx, op, args, out_i + 1)) return;
  int64_t storage[1];
  Span<const int64_t> dims;
  bool keepdim = false;
  if (dim_i >= 0 && !dims_arg(ctx, op, args, static_cast<size_t>(dim_i), storage, &dims)) return;
  if (keepdim_i >= 0 && !bool_arg(ctx, op, args, static_cast<size_t>(keepdim_i), "keepdim", &keepdim)) return;
  reduce_any(ctx, args, op, r, dims, keepdim, out_i);
}

void amin_any(KernelContext& ctx, Span<Value*> args) { reduce_with_dims(ctx, args, "aten::amin", Red::Min, 1, 2, 3); }
void amax_any(KernelContext& ctx, Span<Value*> args) { reduce_with_dims(ctx, args, "aten::amax", Red::Max, 1, 2, 3); }
void op_any(KernelContext& ctx, Span<Value*> args) { reduce_with_dims(ctx, args, "aten::any", Red::Any, -1, -1, 1); }
void op_any_dims(KernelContext& ctx, Span<Value*> args) { reduce_with_dims(ctx, args, "aten::any.dims", Red::Any, 1, 2, 3); }
void op_prod(KernelContext& ctx, Span<Value*> args) { reduce_with_dims(ctx, args, "aten::prod", Red::Prod, -1, -1, 2); }
void op_prod_dim_int(KernelContext& ctx, Span<Value*> args) {
  reduce_with_dims(ctx, args, "aten::prod.dim_int", Red::Prod, 1, 2, 4);
}
void sum_any(KernelContext& ctx, Span<Value*> args, const char* op, bool with_dims) {
  if (with_dims) return reduce_with_dims(ctx, args, op, Red::Sum, 1, 2, 4);
  reduce_with_dims(ctx, args, op, Red::Sum, -1, -1, 2);
}

void op_var_correction(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::var.correction";
  if (!check_nargs(ctx, op, args, 5)) return;  // self, dim?, correction?, keepdim | out
  int64_t storage[1];
  Span<const int64_t> dims;
  double correction = 1.0;
  bool keepdim = false;
  if (!dims_arg(ctx, op, args, 1, storage, &dims) || !bool_arg(ctx, op, args, 3, "keepdim", &keepdim)) return;
  if (!args[2]->is_none() && !scalar_arg(ctx, op, args, 2, "correction", &correction)) return;
  variance(ctx, args, op, dims, correction, keepdim, 4);
}

void op_var_dim(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::var.dim";
  if (!check_nargs(ctx, op, args, 5)) return;  // self, dim?, unbiased, keepdim | out
  int64_t storage[1];
  Span<const int64_t> dims;
  bool unbiased = true, keepdim = false;
  if (!dims_arg(ctx, op, args, 1, storage, &dims) || !bool_arg(ctx, op, args, 2, "unbiased", &unbiased) ||
      !bool_arg(ctx, op, args, 3, "keepdim", &keepdim)) {
    return;
  }
  variance(ctx, args, op, dims, unbiased ? 1.0 : 0.0, keepdim, 4);
}

void op_argmin(KernelContext& ctx, Span<Value*> args) { arg_op(ctx, args, "aten::argmin", false); }
void argmax_any(KernelContext& ctx, Span<Value*> args) { arg_op(ctx, args, "aten::argmax", true); }
void op_max_dim(KernelContext& ctx, Span<Value*> args) { minmax_dim(ctx, args, "aten::max.dim", true); }
void op_min_dim(KernelContext& ctx, Span<Value*> args) { minmax_dim(ctx, args, "aten::min.dim", false); }

// cumsum: self, dim, dtype? | out
void op_cumsum(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::cumsum";
  if (!check_nargs(ctx, op, args, 4)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  int64_t dim = 0;
  ScalarType dt;
  if (self == nullptr || !check_has_data(ctx, op, *self, "self") || !int_arg(ctx, op, args, 1, "dim", &dim) ||
      !wrap_dim(ctx, op, dim, self->dim(), &dim) || !planned_dtype(ctx, op, args, 3, &dt)) {
    return;
  }
  Tensor* out = output_arg(ctx, op, args, 3, dt, self->sizes());
  if (out == nullptr) return;
  Rows r;
  if (!rows_along(ctx, op, *self, self->dim() == 0 ? -1 : dim, &r)) return;
  const ScalarType in = self->dtype();
  const size_t es = element_size(in), oes = element_size(dt);
  const bool ints = integral_type(dt);
  char* o = static_cast<char*>(out->data());
  for (int64_t a = 0; a < r.outer; ++a) {
    for (int64_t i = 0; i < r.inner; ++i) {
      double sd = 0.0;
      int64_t si = 0;
      for (int64_t l = 0; l < r.len; ++l) {
        const int64_t e = (a * r.len + l) * r.inner + i;
        const char* x = r.data + e * static_cast<int64_t>(es);
        if (ints) {
          // ATen casts the input to the integer dtype first: a float element as that cast.
          int64_t v = 0;
          if (integral_type(in)) {
            v = load_int64(x, in);
          } else {
            alignas(8) char cast[8];
            convert(cast, dt, x, in);
            v = load_int64(cast, dt);
          }
          si = checked::wrap_add(si, v);
          store_i(o + e * static_cast<int64_t>(oes), dt, si);
        } else {
          // float results accumulate in float, as ATen does, so long sums round alike
          sd = dt == ScalarType::Float ? static_cast<float>(sd + load_as_double(x, in)) : sd + load_as_double(x, in);
          store_d(o + e * static_cast<int64_t>(oes), dt, sd);
        }
      }
    }
  }
}

// sort: self, dim, descending | values, indices
void op_sort(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::sort";
  if (!check_nargs(ctx, op, args, 5)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  int64_t dim = 0;
  bool descending = false;
  if (self == nullptr || !check_has_data(ctx, op, *self, "self") || !int_arg(ctx, op, args, 1, "dim", &dim) ||
      !wrap_dim(ctx, op, dim, self->dim(), &dim) || !bool_arg(ctx, op, args, 2, "descending", &descending)) {
    return;
  }
  Tensor* values = output_arg(ctx, op, args, 3, self->dtype(), self->sizes(), "values");
  Tensor* indices = values ? output_arg(ctx, op, args, 4, ScalarType::Long, self->sizes(), "indices") : nullptr;
  if (indices == nullptr) return;
  const int64_t len = self->dim() == 0 ? 1 : self->size(static_cast<int>(dim));
  sort_rows(ctx, op, *self, dim, descending, len, values, indices);
}

// sort.stable: self, stable?, dim, descending | values, indices (etrt's sort is always stable)
void op_sort_stable(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::sort.stable";
  if (!check_nargs(ctx, op, args, 6)) return;
  Value* reordered[5] = {args[0], args[2], args[3], args[4], args[5]};
  Span<Value*> rest(reordered, 5);
  Tensor* self = tensor_arg(ctx, op, rest, 0, "self");
  int64_t dim = 0;
  bool descending = false;
  if (self == nullptr || !check_has_data(ctx, op, *self, "self") || !int_arg(ctx, op, rest, 1, "dim", &dim) ||
      !wrap_dim(ctx, op, dim, self->dim(), &dim) || !bool_arg(ctx, op, rest, 2, "descending", &descending)) {
    return;
  }
  Tensor* values = output_arg(ctx, op, rest, 3, self->dtype(), self->sizes(), "values");
  Tensor* indices = values ? output_arg(ctx, op, rest, 4, ScalarType::Long, self->sizes(), "indices") : nullptr;
  if (indices == nullptr) return;
  const int64_t len = self->dim() == 0 ? 1 : self->size(static_cast<int>(dim));
  sort_rows(ctx, op, *self, dim, descending, len, values, indices);
}

// round.decimals: self, decimals | out (ATen's formula: scale, round half to even, unscale)
void op_round_decimals(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::round.decimals";
  if (!check_nargs(ctx, op, args, 3)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  int64_t decimals = 0;
  ScalarType dt;
  if (self == nullptr || !check_has_data(ctx, op, *self, "self") || !int_arg(ctx, op, args, 1, "decimals", &decimals) ||
      !planned_dtype(ctx, op, args, 2, &dt)) {
    return;
  }
  Tensor* out = strided_output_arg(ctx, op, args, 2, dt, self->sizes());
  if (out == nullptr) return;
  const bool neg = decimals < 0;
  const float ten_pow = static_cast<float>(std::pow(10.0, static_cast<double>(neg ? -decimals : decimals)));
  const ScalarType in = self->dtype();
  const Tensor* ops[2] = {out, self};
  run_loop(make_loop(self->sizes(), ops), [&](char* const* p, const int64_t* st, int64_t n) {
    for (int64_t k = 0; k < n; ++k) {
      const float x = static_cast<float>(load_as_double(p[1] + k * st[1], in));
      const float r = neg ? std::nearbyint(x / ten_pow) * ten_pow : std::nearbyint(x * ten_pow) / ten_pow;
      store_d(p[0] + k * st[0], dt, r);
    }
  });
}

// topk: self, k, dim, largest, sorted | values, indices (always sorted)
void op_topk(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::topk";
  if (!check_nargs(ctx, op, args, 7)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  int64_t k = 0, dim = 0;
  bool largest = true;
  if (self == nullptr || !check_has_data(ctx, op, *self, "self") || !int_arg(ctx, op, args, 1, "k", &k) ||
      !int_arg(ctx, op, args, 2, "dim", &dim) || !wrap_dim(ctx, op, dim, self->dim(), &dim) ||
      !bool_arg(ctx, op, args, 3, "largest", &largest)) {
    return;
  }
  const int64_t len = self->dim() == 0 ? 1 : self->size(static_cast<int>(dim));
  if (k < 0 || k > len) {
    fail(ctx, op, "k=" + std::to_string(k) + " is out of range for a dimension of size " + std::to_string(len));
    return;
  }
  Shape shape = shape_of(*self);
  if (shape.dim > 0) shape.sizes[dim] = k;
  Tensor* values = output_arg(ctx, op, args, 5, self->dtype(), shape.span(), "values");
  Tensor* indices = values ? output_arg(ctx, op, args, 6, ScalarType::Long, shape.span(), "indices") : nullptr;
  if (indices == nullptr) return;
  sort_rows(ctx, op, *self, dim, largest, k, values, indices);
}

// mm (self, mat2 | out), bmm (self, mat2 | out) and addmm (self, mat1, mat2, beta, alpha | out)
// of integer matrices, exact in int64 (ATen's integer matmul wraps the same way).
void matmul_any(KernelContext& ctx, Span<Value*> args, const char* op, int kind) {
  const size_t nargs = kind == 2 ? 6 : 3;
  if (!check_nargs(ctx, op, args, nargs)) return;
  const size_t ai = kind == 2 ? 1 : 0;
  Tensor* a = tensor_arg(ctx, op, args, ai, "mat1");
  Tensor* b = a ? tensor_arg(ctx, op, args, ai + 1, "mat2") : nullptr;
  Tensor* bias = nullptr;
  if (b == nullptr || !check_has_data(ctx, op, *a, "mat1") || !check_has_data(ctx, op, *b, "mat2")) return;
  if (kind == 2 && ((bias = tensor_arg(ctx, op, args, 0, "self")) == nullptr || !check_has_data(ctx, op, *bias, "self"))) return;
  // The bias is read with the matrices' element type: another dtype would be read past its end.
  if (bias != nullptr && bias->dtype() != a->dtype()) {
    fail(ctx, op, std::string("'self' is ") + to_string(bias->dtype()) + ", the matrices " + to_string(a->dtype()));
    return;
  }
  const int nd = kind == 1 ? 3 : 2;
  if (a->dim() != nd || b->dim() != nd || a->size(nd - 1) != b->size(nd - 2) || (nd == 3 && a->size(0) != b->size(0))) {
    fail(ctx, op, "shapes " + shape_string(a->sizes()) + " and " + shape_string(b->sizes()) + " cannot be multiplied");
    return;
  }
  if (a->dtype() != b->dtype() || !integral_type(a->dtype())) {
    fail(ctx, op, std::string("needs Float or matching integer matrices, got ") + to_string(a->dtype()) + " and " +
                      to_string(b->dtype()));
    return;
  }
  const int64_t batch = nd == 3 ? a->size(0) : 1, m = a->size(nd - 2), k = a->size(nd - 1), n = b->size(nd - 1);
  int64_t shape[3] = {batch, m, n};
  const Span<const int64_t> oshape = nd == 3 ? Span<const int64_t>(shape, 3) : Span<const int64_t>(shape + 1, 2);
  Tensor* out = output_arg(ctx, op, args, nargs - 1, a->dtype(), oshape);
  if (out == nullptr) return;
  int64_t beta = 1, alpha = 1;
  if (kind == 2) {
    Shape check = shape_of(*out);
    if (!broadcast_into(ctx, op, &check, bias->sizes()) || !same_sizes(check.span(), out->sizes())) {
      fail(ctx, op, "'self' does not broadcast to the product's shape");
      return;
    }
    beta = args[3]->scalar_to_int();
    alpha = args[4]->scalar_to_int();
  }
  const ScalarType t = a->dtype();
  const int64_t ae = static_cast<int64_t>(a->element_size());
  const int o = nd == 3 ? 1 : 0;
  auto at = [&](const Tensor& x, int64_t bi, int64_t r, int64_t c) {
    const int64_t off = (nd == 3 ? bi * x.stride(0) : 0) + r * x.stride(o) + c * x.stride(o + 1);
    return load_int64(static_cast<const char*>(x.data()) + off * ae, t);
  };
  char* po = static_cast<char*>(out->data());
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c) {
        uint64_t acc = 0;  // wraps on overflow instead of undefined behaviour
        for (int64_t q = 0; q < k; ++q) acc += static_cast<uint64_t>(at(*a, bi, r, q)) * static_cast<uint64_t>(at(*b, bi, q, c));
        int64_t v = checked::wrap_mul(static_cast<int64_t>(acc), alpha);
        if (bias != nullptr) {
          int64_t bc[2] = {bias->dim() == 2 ? (bias->size(0) == 1 ? 0 : r) : 0, 0};
          const int64_t col = bias->dim() == 0 ? 0 : (bias->size(bias->dim() - 1) == 1 ? 0 : c);
          const int64_t off = (bias->dim() == 2 ? bc[0] * bias->stride(0) : 0) + (bias->dim() >= 1 ? col * bias->stride(bias->dim() - 1) : 0);
          v = checked::wrap_add(v, checked::wrap_mul(beta, load_int64(static_cast<const char*>(bias->data()) + off * ae, t)));
        }
        store_i(po + ((bi * m + r) * n + c) * ae, t, v);
      }
}

void op_max(KernelContext& ctx, Span<Value*> args) { reduce_with_dims(ctx, args, "aten::max", Red::Max, -1, -1, 1); }
void op_min(KernelContext& ctx, Span<Value*> args) { reduce_with_dims(ctx, args, "aten::min", Red::Min, -1, -1, 1); }

// self | out: the value of a one-element tensor as a Scalar (Tensor.item()): Bool, Int for
// integer tensors, Double for floating ones. The output is a value later calls read, not a
// tensor.
void op_local_scalar_dense(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::_local_scalar_dense";
  if (!check_nargs(ctx, op, args, 2)) return;
  // The output slot holds None or a scalar: a program cannot make this overwrite a tensor.
  if (!args[1]->is_none() && !args[1]->is_scalar()) {
    fail(ctx, op, std::string("the output must be a scalar value, got ") + to_string(args[1]->tag()));
    return;
  }
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  if (self == nullptr || !check_has_data(ctx, op, *self, "self")) return;
  if (self->numel() != 1) {
    fail(ctx, op, "a tensor of " + std::to_string(self->numel()) + " elements has no single value");
    return;
  }
  const ScalarType dt = self->dtype();
  const char* p = static_cast<const char*>(self->data());
  if (dt == ScalarType::Bool) {
    *args[1] = Value(*p != 0);
  } else if (integral_type(dt)) {
    *args[1] = Value(load_int64(p, dt));
  } else {
    *args[1] = Value(load_as_double(p, dt));
  }
}

}  // namespace kernels
}  // namespace etrt
