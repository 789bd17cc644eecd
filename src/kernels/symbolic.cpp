#include "symbolic.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "util.h"

namespace etrt {
namespace kernels {
namespace {

bool integral(const Value& v) { return v.is_int() || v.is_bool(); }

// The output slot of a scalar op holds a scalar: a program cannot make one overwrite a tensor.
bool scalar_output(KernelContext& ctx, const char* op, const Value& out) {
  if (out.is_scalar()) return true;
  fail(ctx, op, std::string("the output must be an int, float or bool value, got ") + to_string(out.tag()));
  return false;
}

// The operands of a scalar op (checked to be Int, Double or Bool) and its output Value.
bool scalar_operands(KernelContext& ctx, const char* op, Span<Value*> args, size_t n) {
  if (!check_nargs(ctx, op, args, n + 1) || !scalar_output(ctx, op, *args[n])) return false;
  for (size_t i = 0; i < n; ++i) {
    if (!args[i]->is_scalar()) {
      fail(ctx, op, "operand " + std::to_string(i) + " must be an int, float or bool, got " + to_string(args[i]->tag()));
      return false;
    }
  }
  return true;
}

void overflow(KernelContext& ctx, const char* op) { fail(ctx, op, "integer overflow"); }

enum class Arith { Add, Sub, Mul, FloorDiv, Mod, Pow, Max, Min };

double floor_mod(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0.0 && ((r < 0.0) != (b < 0.0))) r += b;
  return r;
}

void arith(KernelContext& ctx, Span<Value*> args, const char* op, Arith kind) {
  if (!scalar_operands(ctx, op, args, 2)) return;
  const Value& a = *args[0];
  const Value& b = *args[1];
  if (integral(a) && integral(b) && !(kind == Arith::Pow && b.scalar_to_int() < 0)) {
    const int64_t x = a.scalar_to_int(), y = b.scalar_to_int();
    int64_t r = 0;
    bool ok = true;
    switch (kind) {
      case Arith::Add: ok = checked::add(x, y, &r); break;
      case Arith::Sub: ok = checked::sub(x, y, &r); break;
      case Arith::Mul: ok = checked::mul(x, y, &r); break;
      case Arith::FloorDiv:
      case Arith::Mod:
        if (y == 0) {
          fail(ctx, op, "integer division by zero");
          return;
        }
        if (x == std::numeric_limits<int64_t>::min() && y == -1) {
          ok = kind == Arith::Mod;
          r = 0;
          break;
        }
        if (kind == Arith::FloorDiv) {
          r = x / y;
          if (x % y != 0 && ((x < 0) != (y < 0))) --r;
        } else {
          r = x % y;
          if (r != 0 && ((r < 0) != (y < 0))) r += y;
        }
        break;
      case Arith::Pow: ok = checked::pow(x, y, &r); break;
      case Arith::Max: r = x > y ? x : y; break;
      case Arith::Min: r = x < y ? x : y; break;
    }
    if (!ok) return overflow(ctx, op);
    *args[2] = Value(r);
    return;
  }
  const double x = a.scalar_to_double(), y = b.scalar_to_double();
  double r = 0.0;
  switch (kind) {
    case Arith::Add: r = x + y; break;
    case Arith::Sub: r = x - y; break;
    case Arith::Mul: r = x * y; break;
    case Arith::FloorDiv:
    case Arith::Mod:
      if (y == 0.0) {
        fail(ctx, op, "float division by zero");
        return;
      }
      r = kind == Arith::FloorDiv ? std::floor(x / y) : floor_mod(x, y);
      break;
    case Arith::Pow: r = std::pow(x, y); break;
    case Arith::Max: r = x > y ? x : y; break;
    case Arith::Min: r = x < y ? x : y; break;
  }
  *args[2] = Value(r);
}

enum class Cmp { Eq, Ne, Lt, Le, Gt, Ge };

void compare(KernelContext& ctx, Span<Value*> args, const char* op, Cmp kind) {
  if (!scalar_operands(ctx, op, args, 2)) return;
  const Value& a = *args[0];
  const Value& b = *args[1];
  int order;  // -1, 0, 1; 2 when unordered (NaN)
  if (integral(a) && integral(b)) {
    const int64_t x = a.scalar_to_int(), y = b.scalar_to_int();
    order = x < y ? -1 : (x > y ? 1 : 0);
  } else {
    const double x = a.scalar_to_double(), y = b.scalar_to_double();
    order = x < y ? -1 : (x > y ? 1 : (x == y ? 0 : 2));
  }
  bool r = false;
  switch (kind) {
    case Cmp::Eq: r = order == 0; break;
    case Cmp::Ne: r = order != 0; break;
    case Cmp::Lt: r = order == -1; break;
    case Cmp::Le: r = order == -1 || order == 0; break;
    case Cmp::Gt: r = order == 1; break;
    case Cmp::Ge: r = order == 1 || order == 0; break;
  }
  *args[2] = Value(r);
}

// A double rounded by `round` to an int64, or a failed call when it does not fit.
template <typename F>
void to_int(KernelContext& ctx, Span<Value*> args, const char* op, F round) {
  if (!scalar_operands(ctx, op, args, 1)) return;
  if (integral(*args[0])) {
    *args[1] = Value(args[0]->scalar_to_int());
    return;
  }
  const double r = round(args[0]->to_double());
  if (!(r >= -9.2233720368547758e18 && r < 9.2233720368547758e18)) {
    fail(ctx, op, "value " + std::to_string(r) + " does not fit an int64");
    return;
  }
  *args[1] = Value(static_cast<int64_t>(r));
}

// The dimension query ops: self (a tensor), then dim when `with_dim`.
const Tensor* shape_query(KernelContext& ctx, const char* op, Span<Value*> args, bool with_dim, int64_t* dim) {
  if (!check_nargs(ctx, op, args, with_dim ? 3 : 2) || !scalar_output(ctx, op, *args[with_dim ? 2 : 1])) {
    return nullptr;
  }
  const Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  if (self == nullptr) return nullptr;
  if (with_dim) {
    int64_t d = 0;
    if (!int_arg(ctx, op, args, 1, "dim", &d) || !wrap_dim(ctx, op, d, self->dim(), dim)) return nullptr;
    if (self->dim() == 0) {
      fail(ctx, op, "a 0-d tensor has no dimension " + std::to_string(d));
      return nullptr;
    }
  }
  return self;
}

}  // namespace

void op_sym_size_int(KernelContext& ctx, Span<Value*> args) {
  int64_t dim = 0;
  const Tensor* self = shape_query(ctx, "aten::sym_size.int", args, true, &dim);
  if (self != nullptr) *args[2] = Value(self->size(static_cast<int>(dim)));
}

void op_sym_numel(KernelContext& ctx, Span<Value*> args) {
  const Tensor* self = shape_query(ctx, "aten::sym_numel", args, false, nullptr);
  if (self != nullptr) *args[1] = Value(self->numel());
}

void op_sym_stride_int(KernelContext& ctx, Span<Value*> args) {
  int64_t dim = 0;
  const Tensor* self = shape_query(ctx, "aten::sym_stride.int", args, true, &dim);
  if (self != nullptr) *args[2] = Value(self->stride(static_cast<int>(dim)));
}

void op_prim_add(KernelContext& ctx, Span<Value*> args) { arith(ctx, args, "etrt_prim::add", Arith::Add); }
void op_prim_sub(KernelContext& ctx, Span<Value*> args) { arith(ctx, args, "etrt_prim::sub", Arith::Sub); }
void op_prim_mul(KernelContext& ctx, Span<Value*> args) { arith(ctx, args, "etrt_prim::mul", Arith::Mul); }
void op_prim_floordiv(KernelContext& ctx, Span<Value*> args) { arith(ctx, args, "etrt_prim::floordiv", Arith::FloorDiv); }
void op_prim_mod(KernelContext& ctx, Span<Value*> args) { arith(ctx, args, "etrt_prim::mod", Arith::Mod); }
void op_prim_pow(KernelContext& ctx, Span<Value*> args) { arith(ctx, args, "etrt_prim::pow", Arith::Pow); }
void op_prim_max(KernelContext& ctx, Span<Value*> args) { arith(ctx, args, "etrt_prim::sym_max", Arith::Max); }
void op_prim_min(KernelContext& ctx, Span<Value*> args) { arith(ctx, args, "etrt_prim::sym_min", Arith::Min); }

void op_prim_truediv(KernelContext& ctx, Span<Value*> args) {
  const char* op = "etrt_prim::truediv";
  if (!scalar_operands(ctx, op, args, 2)) return;
  const double y = args[1]->scalar_to_double();
  if (y == 0.0) {
    fail(ctx, op, "division by zero");
    return;
  }
  *args[2] = Value(args[0]->scalar_to_double() / y);
}

void op_prim_neg(KernelContext& ctx, Span<Value*> args) {
  const char* op = "etrt_prim::neg";
  if (!scalar_operands(ctx, op, args, 1)) return;
  if (integral(*args[0])) {
    const int64_t x = args[0]->scalar_to_int();
    if (x == std::numeric_limits<int64_t>::min()) return overflow(ctx, op);
    *args[1] = Value(-x);
  } else {
    *args[1] = Value(-args[0]->to_double());
  }
}

void op_prim_sym_float(KernelContext& ctx, Span<Value*> args) {
  if (!scalar_operands(ctx, "etrt_prim::sym_float", args, 1)) return;
  *args[1] = Value(args[0]->scalar_to_double());
}

void op_prim_sym_int(KernelContext& ctx, Span<Value*> args) {
  to_int(ctx, args, "etrt_prim::sym_int", [](double x) { return std::trunc(x); });
}
void op_prim_ceil(KernelContext& ctx, Span<Value*> args) {
  to_int(ctx, args, "etrt_prim::ceil", [](double x) { return std::ceil(x); });
}
void op_prim_floor(KernelContext& ctx, Span<Value*> args) {
  to_int(ctx, args, "etrt_prim::floor", [](double x) { return std::floor(x); });
}

void op_prim_sym_not(KernelContext& ctx, Span<Value*> args) {
  if (!scalar_operands(ctx, "etrt_prim::sym_not", args, 1)) return;
  *args[1] = Value(args[0]->scalar_to_double() == 0.0);
}

void op_prim_eq(KernelContext& ctx, Span<Value*> args) { compare(ctx, args, "etrt_prim::eq", Cmp::Eq); }
void op_prim_ne(KernelContext& ctx, Span<Value*> args) { compare(ctx, args, "etrt_prim::ne", Cmp::Ne); }
void op_prim_lt(KernelContext& ctx, Span<Value*> args) { compare(ctx, args, "etrt_prim::lt", Cmp::Lt); }
void op_prim_le(KernelContext& ctx, Span<Value*> args) { compare(ctx, args, "etrt_prim::le", Cmp::Le); }
void op_prim_gt(KernelContext& ctx, Span<Value*> args) { compare(ctx, args, "etrt_prim::gt", Cmp::Gt); }
void op_prim_ge(KernelContext& ctx, Span<Value*> args) { compare(ctx, args, "etrt_prim::ge", Cmp::Ge); }

}  // namespace kernels
}  // namespace etrt
