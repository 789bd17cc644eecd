// Dynamic shapes in the kernels: the scalar kernels on symbolic sizes follow Python's semantics
// (floor division and modulo toward negative infinity, int overflow an error), and a dynamic
// output takes the sizes its kernel computes, within its planned capacity and in its planned
// dimension order.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "check.h"
#include "etrt/runtime/kernel.h"
#include "etrt/runtime/tensor.h"
#include "etrt/runtime/value.h"

using etrt::ErrorCode;
using etrt::ScalarType;
using etrt::Tensor;
using etrt::Value;

namespace {

// Runs a two-operand scalar kernel; `out` (a scalar slot, as the exporter plans it) receives
// the result.
etrt::Error binary(check::TestContext& ctx, const char* op, Value a, Value b, Value* out) {
  *out = Value(int64_t{0});
  return check::call(ctx, op, {&a, &b, out});
}

int64_t int_result(check::TestContext& ctx, const char* op, int64_t a, int64_t b) {
  Value out;
  etrt::Error e = binary(ctx, op, Value(a), Value(b), &out);
  CHECK(e.ok());
  CHECK(out.is_int());
  return out.to_int();
}

void test_python_semantics() {
  check::TestContext ctx;
  CHECK_EQ(int_result(ctx, "etrt_prim::floordiv", 7, 2), 3);
  CHECK_EQ(int_result(ctx, "etrt_prim::floordiv", -7, 2), -4);
  CHECK_EQ(int_result(ctx, "etrt_prim::floordiv", 7, -2), -4);
  CHECK_EQ(int_result(ctx, "etrt_prim::mod", -7, 3), 2);
  CHECK_EQ(int_result(ctx, "etrt_prim::mod", 7, -3), -2);
  CHECK_EQ(int_result(ctx, "etrt_prim::mul", 6, 7), 42);
  CHECK_EQ(int_result(ctx, "etrt_prim::sub", 3, 10), -7);
  CHECK_EQ(int_result(ctx, "etrt_prim::sym_max", 3, 10), 10);
  CHECK_EQ(int_result(ctx, "etrt_prim::sym_min", 3, 10), 3);
  CHECK_EQ(int_result(ctx, "etrt_prim::pow", 3, 4), 81);

  Value out;
  CHECK_OK(binary(ctx, "etrt_prim::truediv", Value(int64_t{7}), Value(int64_t{2}), &out));
  CHECK(out.is_double() && out.to_double() == 3.5);
  CHECK_OK(binary(ctx, "etrt_prim::floordiv", Value(-7.5), Value(2.0), &out));
  CHECK(out.is_double() && out.to_double() == -4.0);
  CHECK_OK(binary(ctx, "etrt_prim::lt", Value(int64_t{2}), Value(2.5), &out));
  CHECK(out.is_bool() && out.to_bool());
  CHECK_OK(binary(ctx, "etrt_prim::eq", Value(int64_t{4}), Value(int64_t{4}), &out));
  CHECK(out.is_bool() && out.to_bool());

  Value x(2.5), r(int64_t{0});
  CHECK_OK(check::call(ctx, "etrt_prim::ceil", {&x, &r}));
  CHECK(r.is_int() && r.to_int() == 3);
  CHECK_OK(check::call(ctx, "etrt_prim::sym_int", {&x, &r}));
  CHECK(r.is_int() && r.to_int() == 2);
}

void test_errors_are_reported() {
  check::TestContext ctx;
  Value out;
  const int64_t big = std::numeric_limits<int64_t>::max();
  CHECK_FAILS(binary(ctx, "etrt_prim::mul", Value(big), Value(int64_t{2}), &out), ErrorCode::InvalidArgument);
  CHECK_FAILS(binary(ctx, "etrt_prim::add", Value(big), Value(int64_t{1}), &out), ErrorCode::InvalidArgument);
  CHECK_FAILS(binary(ctx, "etrt_prim::floordiv", Value(int64_t{1}), Value(int64_t{0}), &out),
              ErrorCode::InvalidArgument);
  CHECK_FAILS(binary(ctx, "etrt_prim::mod", Value(int64_t{1}), Value(int64_t{0}), &out), ErrorCode::InvalidArgument);
  CHECK_FAILS(binary(ctx, "etrt_prim::pow", Value(int64_t{10}), Value(int64_t{40}), &out), ErrorCode::InvalidArgument);
  Tensor none;
  Value t(none);
  CHECK_FAILS(binary(ctx, "etrt_prim::add", t, Value(int64_t{1}), &out), ErrorCode::InvalidArgument);
  // A program pointing a scalar kernel's output at a tensor: refused, the tensor untouched.
  Value a(int64_t{1}), b(int64_t{2}), tensor_slot(none);
  CHECK_FAILS(check::call(ctx, "etrt_prim::add", {&a, &b, &tensor_slot}), ErrorCode::InvalidArgument);
  CHECK(tensor_slot.is_tensor());
}

void test_shape_queries_read_actual_sizes() {
  check::TestContext ctx;
  std::vector<float> data(24);
  Tensor t(data.data(), ScalarType::Float, {2, 3, 4});
  Value self(t), dim(int64_t{-1}), out(int64_t{0});
  CHECK_OK(check::call(ctx, "aten::sym_size.int", {&self, &dim, &out}));
  CHECK(out.is_int() && out.to_int() == 4);
  CHECK_OK(check::call(ctx, "aten::sym_stride.int", {&self, &dim, &out}));
  CHECK(out.is_int() && out.to_int() == 1);
  Value n(int64_t{0});
  CHECK_OK(check::call(ctx, "aten::sym_numel", {&self, &n}));
  CHECK(n.is_int() && n.to_int() == 24);
  Value bad(int64_t{3});
  CHECK_FAILS(check::call(ctx, "aten::sym_size.int", {&self, &bad, &out}), ErrorCode::InvalidArgument);
}

// A dynamic output planned for [4, 6] in transposed layout takes [3, 5], still transposed.
void test_dynamic_output_takes_computed_sizes() {
  check::TestContext ctx;
  std::vector<float> a(15, 1.0f), b(15, 2.0f), memory(24, 0.0f);
  Tensor x(a.data(), ScalarType::Float, {3, 5});
  Tensor y(b.data(), ScalarType::Float, {3, 5});
  const int64_t planned_sizes[] = {4, 6}, planned_strides[] = {1, 4};
  auto planned = Tensor::make(memory.data(), ScalarType::Float, planned_sizes, planned_strides);
  CHECK(planned.ok());
  planned->set_dynamic(true);
  Value vx(x), vy(y), alpha(int64_t{1}), out(*planned);
  CHECK_OK(check::call(ctx, "aten::add.Tensor", {&vx, &vy, &alpha, &out}));
  const Tensor& r = out.to_tensor();
  CHECK(r.dim() == 2 && r.size(0) == 3 && r.size(1) == 5);
  CHECK(r.stride(0) == 1 && r.stride(1) == 3);  // the planned order, for the actual sizes
  CHECK(memory[0] == 3.0f && memory[14] == 3.0f && memory[15] == 0.0f);

  // Beyond the capacity in any dimension: an error, nothing written.
  std::vector<float> c(28, 1.0f);
  Tensor big(c.data(), ScalarType::Float, {7, 4});
  Value vbig(big), out2(*planned);
  std::fill(memory.begin(), memory.end(), 0.0f);
  CHECK_FAILS(check::call(ctx, "aten::add.Tensor", {&vbig, &vbig, &alpha, &out2}), ErrorCode::InvalidArgument);
  CHECK(memory[0] == 0.0f);
  // A static output keeps requiring its planned sizes exactly.
  Value out3(*planned);
  out3.to_tensor().set_dynamic(false);
  CHECK_FAILS(check::call(ctx, "aten::add.Tensor", {&vx, &vy, &alpha, &out3}), ErrorCode::InvalidArgument);
}

// A dynamic view takes the view's sizes when they fit its planned ones.
void test_dynamic_view() {
  check::TestContext ctx;
  std::vector<float> a(12);
  Tensor x(a.data(), ScalarType::Float, {3, 4});
  std::vector<int64_t> shape = {6, 2};
  Value vx(x), size = Value::int_list(etrt::Span<const int64_t>(shape.data(), shape.size()));
  Tensor planned(nullptr, ScalarType::Float, {8, 2});
  planned.set_dynamic(true);
  Value out(planned);
  CHECK_OK(check::call(ctx, "aten::view", {&vx, &size, &out}));
  CHECK(out.to_tensor().size(0) == 6 && out.to_tensor().data() == a.data());
  shape = {1, 12};
  Value size2 = Value::int_list(etrt::Span<const int64_t>(shape.data(), shape.size()));
  Value out2(planned);
  CHECK_FAILS(check::call(ctx, "aten::view", {&vx, &size2, &out2}), ErrorCode::InvalidArgument);
}

}  // namespace

int main() {
  test_python_semantics();
  test_errors_are_reported();
  test_shape_queries_read_actual_sizes();
  test_dynamic_output_takes_computed_sizes();
  test_dynamic_view();
  return check::finish();
}
