// Elementwise, row-wise and view kernels against references written here, over random sizes,
// strided and broadcast inputs; wrong arguments must fail through ctx.fail, never crash.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "check.h"
#include "etrt/kernels/optimized.h"
#include "etrt/runtime/cpu_isa.h"
#include "etrt/runtime/kernel.h"
#include "etrt/runtime/parallel.h"
#include "etrt/runtime/tensor.h"
#include "etrt/runtime/value.h"
#include "kernels/vec_math.h"

using etrt::ErrorCode;
using etrt::ScalarType;
using etrt::Span;
using etrt::Tensor;
using etrt::Value;
using Sizes = std::vector<int64_t>;

namespace {

std::mt19937& rng() {
  static std::mt19937 g(12345);
  return g;
}

int64_t rand_int(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng()); }
float rand_float(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng()); }

int64_t numel_of(const Sizes& s) {
  int64_t n = 1;
  for (int64_t v : s) n *= v;
  return n;
}

Sizes contiguous_strides(const Sizes& s) {
  Sizes st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= std::max<int64_t>(s[i], 1);
  }
  return st;
}

// A tensor that owns its storage, wrapped in a Value for kernel calls.
struct Buf {
  std::vector<uint64_t> storage;  // 8-byte aligned, any dtype
  Value value;
  Tensor& t() { return value.to_tensor(); }
  const Tensor& t() const { return value.to_tensor(); }
  template <typename T>
  T* data() { return t().data_as<T>(); }
};

Buf make_strided(ScalarType dt, const Sizes& sizes, const Sizes& strides) {
  Buf b;
  int64_t span = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) span = 0;
  }
  if (span != 0) {
    for (size_t i = 0; i < sizes.size(); ++i) span += (sizes[i] - 1) * strides[i];
  }
  size_t bytes = static_cast<size_t>(std::max<int64_t>(span, 1)) * etrt::element_size(dt);
  b.storage.assign(bytes / 8 + 1, 0);
  auto r = Tensor::make(b.storage.data(), dt, Span<const int64_t>(sizes.data(), sizes.size()),
                        Span<const int64_t>(strides.data(), strides.size()));
  if (!r.ok()) {
    std::fprintf(stderr, "bad test tensor: %s\n", r.error().to_string().c_str());
    std::abort();
  }
  b.value = Value(*r);
  return b;
}

Buf make(ScalarType dt, const Sizes& sizes) { return make_strided(dt, sizes, contiguous_strides(sizes)); }

// A random non-contiguous layout: dimensions stored in a shuffled order with gaps.
Sizes random_layout(const Sizes& sizes) {
  std::vector<size_t> order(sizes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng());
  Sizes st(sizes.size());
  int64_t acc = rand_int(1, 2);
  for (size_t k = order.size(); k-- > 0;) {
    size_t d = order[k];
    st[d] = acc;
    acc *= std::max<int64_t>(sizes[d], 1) + rand_int(0, 1);
  }
  return st;
}

void for_each_index(const Sizes& sizes, const std::function<void(const Sizes&)>& f) {
  if (numel_of(sizes) == 0) return;
  Sizes idx(sizes.size(), 0);
  while (true) {
    f(idx);
    int d = static_cast<int>(sizes.size()) - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

int64_t offset_of(const Tensor& t, const Sizes& idx) {
  int64_t off = 0;
  for (int i = 0; i < t.dim(); ++i) off += idx[i] * t.stride(i);
  return off;
}

// Index into a tensor broadcast to a wider shape (right-aligned).
int64_t broadcast_offset(const Tensor& t, const Sizes& idx) {
  int64_t off = 0;
  const int shift = static_cast<int>(idx.size()) - t.dim();
  for (int i = 0; i < t.dim(); ++i) {
    if (t.size(i) != 1) off += idx[i + shift] * t.stride(i);
  }
  return off;
}

double get(const Tensor& t, int64_t off) {
  const char* p = static_cast<const char*>(t.data()) + off * static_cast<int64_t>(t.element_size());
  switch (t.dtype()) {
    case ScalarType::Float: { float v; std::memcpy(&v, p, 4); return v; }
    case ScalarType::Double: { double v; std::memcpy(&v, p, 8); return v; }
    case ScalarType::Long: { int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case ScalarType::Int: { int32_t v; std::memcpy(&v, p, 4); return v; }
    default: return *reinterpret_cast<const uint8_t*>(p);
  }
}

void set(Tensor& t, int64_t off, double v) {
  char* p = static_cast<char*>(t.data()) + off * static_cast<int64_t>(t.element_size());
  switch (t.dtype()) {
    case ScalarType::Float: { float f = static_cast<float>(v); std::memcpy(p, &f, 4); break; }
    case ScalarType::Double: std::memcpy(p, &v, 8); break;
    case ScalarType::Long: { int64_t i = static_cast<int64_t>(v); std::memcpy(p, &i, 8); break; }
    case ScalarType::Int: { int32_t i = static_cast<int32_t>(v); std::memcpy(p, &i, 4); break; }
    default: *reinterpret_cast<uint8_t*>(p) = static_cast<uint8_t>(v); break;
  }
}

void fill_random(Buf& b, float lo = -3.0f, float hi = 3.0f) {
  Tensor& t = b.t();
  for_each_index(Sizes(t.sizes().begin(), t.sizes().end()), [&](const Sizes& idx) {
    double v;
    switch (t.dtype()) {
      case ScalarType::Float: case ScalarType::Double: v = rand_float(lo, hi); break;
      case ScalarType::Bool: v = static_cast<double>(rand_int(0, 1)); break;
      default: v = static_cast<double>(rand_int(-5, 5)); break;
    }
    set(t, offset_of(t, idx), v);
  });
}

Sizes sizes_of(const Tensor& t) { return Sizes(t.sizes().begin(), t.sizes().end()); }

// Random sizes, each in [1, max_size], at most max_numel elements in all (references are slow).
Sizes random_sizes(int max_dim, int64_t max_size, int64_t max_numel = 3000) {
  while (true) {
    Sizes s(static_cast<size_t>(rand_int(1, max_dim)));
    for (auto& v : s) v = rand_int(1, max_size);
    if (numel_of(s) <= max_numel) return s;
  }
}

// An input of `sizes`, randomly contiguous or strided, filled with random values.
Buf random_input(ScalarType dt, const Sizes& sizes, float lo = -3.0f, float hi = 3.0f) {
  Buf b = rand_int(0, 2) == 0 ? make(dt, sizes) : make_strided(dt, sizes, random_layout(sizes));
  fill_random(b, lo, hi);
  return b;
}

Value vint(int64_t v) { return Value(v); }
Value vdouble(double v) { return Value(v); }
Value vbool(bool v) { return Value(v); }

struct IntList {
  Sizes items;
  Value value;
  explicit IntList(Sizes v) : items(std::move(v)) {
    value = Value::int_list(Span<const int64_t>(items.data(), items.size()));
  }
};

bool close(double got, double want, double atol, double rtol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= atol + rtol * std::fabs(want);
}

// Compares a contiguous output with reference values; reports the first mismatch only.
void expect_all(const char* what, const Tensor& out, const std::function<double(const Sizes&)>& ref,
                double atol = 1e-6, double rtol = 1e-6) {
  bool ok = true;
  std::string msg;
  for_each_index(sizes_of(out), [&](const Sizes& idx) {
    if (!ok) return;
    double got = get(out, offset_of(out, idx));
    double want = ref(idx);
    if (!close(got, want, atol, rtol)) {
      ok = false;
      msg = std::string(what) + ": got " + std::to_string(got) + ", want " + std::to_string(want) +
            " at index " + std::to_string(idx.empty() ? 0 : idx.back());
    }
  });
  ::check::record(ok, __FILE__, __LINE__, msg);
}

check::TestContext ctx;

// ---------------------------------------------------------------------------------------------

void test_registration() {
  Span<const etrt::Kernel> table = etrt::kernels::optimized_kernels();
  CHECK(table.size() >= 30);
  CHECK_OK(etrt::kernels::optimized_kernels_registration());
  for (const etrt::Kernel& k : table) {
    CHECK(etrt::find_kernel(k.name) == k.fn);
  }
  const char* required[] = {
      "aten::addmm", "aten::mm", "aten::bmm", "aten::convolution", "aten::max_pool2d_with_indices",
      "aten::relu", "aten::gelu", "aten::add.Tensor", "aten::mul.Tensor", "aten::mul.Scalar",
      "aten::sub.Tensor", "aten::div.Tensor", "aten::clone", "aten::_softmax",
      "aten::native_layer_norm", "aten::eq.Scalar", "aten::logical_not", "aten::any.dim",
      "aten::full_like", "aten::where.self", "aten::view", "aten::_unsafe_view", "aten::permute",
      "aten::expand", "aten::alias", "aten::select.int", "aten::squeeze.dims", "aten::squeeze.dim",
      "aten::unsqueeze", "aten::split_with_sizes", "aten::t", "aten::transpose.int",
      "aten::slice.Tensor"};
  for (const char* name : required) {
    if (!CHECK(etrt::find_kernel(name) != nullptr)) std::fprintf(stderr, "  missing %s\n", name);
  }
  // A second registration of an operator the library provides is refused, and the first stays.
  etrt::KernelFn relu = etrt::find_kernel("aten::relu");
  etrt::Kernel dup{"aten::relu", [](etrt::KernelContext&, Span<Value*>) {}};
  CHECK_FAILS(etrt::register_kernel(dup), ErrorCode::AlreadyRegistered);
  CHECK(etrt::find_kernel("aten::relu") == relu);
  // Re-registering the whole table is all-or-nothing: nothing new appears.
  size_t before = etrt::num_registered_kernels();
  CHECK_FAILS(etrt::register_kernels(table), ErrorCode::AlreadyRegistered);
  CHECK_EQ(etrt::num_registered_kernels(), before);
}

// ---------------------------------------------------------------------------------------------

double ref_gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double ref_gelu_tanh(double x) {
  const double beta = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(beta * (x + 0.044715 * x * x * x)));
}

void test_math_accuracy() {
  double worst_gelu = 0, worst_exp = 0, worst_gelu_tanh = 0;
  for (int i = -2000000; i <= 2000000; ++i) {
    float x = static_cast<float>(i) * 5e-6f;  // [-10, 10]
    worst_gelu = std::max(worst_gelu, std::fabs(etrt::kernels::gelu_erf_f32(x) - ref_gelu(x)));
    worst_gelu_tanh = std::max(worst_gelu_tanh, std::fabs(etrt::kernels::gelu_tanh_f32(x) - ref_gelu_tanh(x)));
    float e = static_cast<float>(i) * 4.4e-5f;  // [-88, 88]
    double want = std::exp(static_cast<double>(e));
    if (want > 1.2e-38) {
      worst_exp = std::max(worst_exp, std::fabs(etrt::kernels::exp_f32(e) - want) / want);
    }
  }
  std::printf("math: gelu %.3g, gelu_tanh %.3g abs; exp %.3g rel\n", worst_gelu, worst_gelu_tanh,
              worst_exp);
  CHECK(worst_gelu < 5e-7);
  CHECK(worst_gelu_tanh < 1.5e-6);
  CHECK(worst_exp < 3e-7);
  CHECK(etrt::kernels::exp_f32(-std::numeric_limits<float>::infinity()) == 0.0f);
  CHECK(std::isnan(etrt::kernels::exp_f32(std::nanf(""))));
  CHECK(etrt::kernels::gelu_erf_f32(std::numeric_limits<float>::infinity()) == std::numeric_limits<float>::infinity());
  CHECK(std::isnan(etrt::kernels::gelu_erf_f32(std::nanf(""))));
}

// sigmoid and silu (logistic.cpp) at every instruction set the CPU has, against double precision:
// a sweep of every 4099th float bit pattern (both signs, denormals to the largest, infinities and
// NaNs among them) and the special values. Bounds in ulp of the true result (denormals and 0:
// 2^-149).
double ulps_from(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0.0 : 1e30;
  if (std::isinf(want) || std::isnan(got)) return static_cast<double>(got) == want ? 0.0 : 1e30;
  if (want == 0.0) return std::fabs(static_cast<double>(got)) / std::ldexp(1.0, -149);
  int e = 0;
  std::frexp(want, &e);
  return std::fabs(static_cast<double>(got) - want) / std::ldexp(1.0, std::max(e - 24, -149));
}

void test_logistic_accuracy() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> xs = {0.0f, -0.0f, inf, -inf, std::nanf(""), 1e-45f, -1e-45f, 1e-38f, -1e-38f,
                           87.3f, -87.3f, -88.8f, -90.45f, -100.0f, -103.9f, -104.0f, -150.0f, 1e30f, -1e30f,
                           // NaNs with payloads (an integer exponent add must not turn them into numbers),
                           // the vector form's edge (|x| = 86) and either side of it.
                           etrt::kernels::bits_to_float(0x7f800001u), etrt::kernels::bits_to_float(0xffc12345u),
                           86.0f, -86.0f, 86.00001f, -86.00001f, 85.99999f, -85.99999f, -3e38f};
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 4099) xs.push_back(etrt::kernels::bits_to_float(static_cast<uint32_t>(b)));
  const int64_t n = static_cast<int64_t>(xs.size());
  Buf x = make(ScalarType::Float, {n});
  Buf out = make(ScalarType::Float, {n});
  std::memcpy(x.data<float>(), xs.data(), xs.size() * sizeof(float));
  const etrt::CpuIsa cap = *etrt::max_isa();
  int last_level = -1;
  for (const char* isa : {"avx512", "avx2", "sse2"}) {
    CHECK(etrt::set_max_isa(isa).ok());
    const int level = static_cast<int>(etrt::kernel_isa());
    if (level == last_level) continue;  // the CPU lacks this set: the one below ran already
    last_level = level;
    for (const bool silu : {false, true}) {
      CHECK_OK(check::call(ctx, silu ? "aten::silu" : "aten::sigmoid", {&x.value, &out.value}));
      double worst = 0.0;
      float worst_x = 0.0f;
      for (int64_t i = 0; i < n; ++i) {
        const double xi = xs[static_cast<size_t>(i)];
        const double s = 1.0 / (1.0 + std::exp(-xi));
        // silu(-inf) is NaN as in ATen (-inf * 0).
        const double want = silu ? (xi == -static_cast<double>(inf) ? std::nan("") : xi * s) : s;
        const double u = ulps_from(out.data<float>()[i], want);
        if (u > worst) worst = u, worst_x = xs[static_cast<size_t>(i)];
      }
      const double bound = 4.0;
      std::printf("logistic: %s at %s within %.2f ulp (worst x = %g), bound %.0f\n", silu ? "silu" : "sigmoid",
                  etrt::to_string(etrt::kernel_isa()), worst, static_cast<double>(worst_x), bound);
      CHECK(worst <= bound);
      // The exact special values: 0, -0, inf, -inf, NaN, then denormal and tiny inputs.
      const float* o = out.data<float>();
      if (silu) {
        CHECK(o[0] == 0.0f && o[2] == inf && std::isnan(o[3]) && std::isnan(o[4]));
        CHECK(o[5] == xs[5] * 0.5f && o[7] == xs[7] * 0.5f && o[8] == xs[8] * 0.5f);
        CHECK(o[27] == 0.0f && std::signbit(o[27]));  // silu(-3e38) underflows to -0
      } else {
        CHECK(o[0] == 0.5f && o[1] == 0.5f && o[2] == 1.0f && o[3] == 0.0f && std::isnan(o[4]));
        CHECK(o[5] == 0.5f && o[6] == 0.5f && o[16] == 0.0f && o[18] == 0.0f);
      }
      CHECK(std::isnan(o[19]) && std::isnan(o[20]));
    }
  }
  CHECK(etrt::set_max_isa(etrt::to_string(cap)).ok());
}

void test_unary() {
  for (int iter = 0; iter < 40; ++iter) {
    Sizes s = random_sizes(4, 9);
    Buf x = random_input(ScalarType::Float, s, -8.0f, 8.0f);
    Buf out = make(ScalarType::Float, s);
    const Tensor& xt = x.t();
    auto at = [&](const Sizes& idx) { return get(xt, offset_of(xt, idx)); };

    CHECK_OK(check::call(ctx, "aten::relu", {&x.value, &out.value}));
    expect_all("relu", out.t(), [&](const Sizes& i) { return std::max(at(i), 0.0); }, 0, 0);

    Value none_s = Value::string("none");
    CHECK_OK(check::call(ctx, "aten::gelu", {&x.value, &none_s, &out.value}));
    expect_all("gelu", out.t(), [&](const Sizes& i) { return ref_gelu(at(i)); }, 1e-6, 0);

    Value tanh_s = Value::string("tanh");
    CHECK_OK(check::call(ctx, "aten::gelu", {&x.value, &tanh_s, &out.value}));
    expect_all("gelu tanh", out.t(), [&](const Sizes& i) { return ref_gelu_tanh(at(i)); }, 1.5e-6, 0);

    // The decomposed activations' steps, in float: x * clamp(x + 3, 0, 6) / 6 and the gate.
    auto hard = [&](const Sizes& i) { return std::min(std::max(static_cast<float>(at(i)) + 3.0f, 0.0f), 6.0f); };
    CHECK_OK(check::call(ctx, "aten::hardswish", {&x.value, &out.value}));
    expect_all("hardswish", out.t(), [&](const Sizes& i) { return static_cast<float>(at(i)) * hard(i) / 6.0f; }, 0, 0);
    CHECK_OK(check::call(ctx, "aten::hardsigmoid", {&x.value, &out.value}));
    expect_all("hardsigmoid", out.t(), [&](const Sizes& i) { return hard(i) / 6.0f; }, 0, 0);
    CHECK_OK(check::call(ctx, "aten::silu", {&x.value, &out.value}));
    expect_all("silu", out.t(), [&](const Sizes& i) { return at(i) / (1.0 + std::exp(-at(i))); }, 1e-6, 1e-6);

    Value k = vdouble(0.125 * static_cast<double>(iter - 20));
    CHECK_OK(check::call(ctx, "aten::mul.Scalar", {&x.value, &k, &out.value}));
    expect_all("mul.Scalar", out.t(),
               [&](const Sizes& i) { return static_cast<float>(at(i)) * static_cast<float>(k.to_double()); }, 0, 0);
  }
  // Long tensors times an int scalar stay integral.
  Buf xl = make(ScalarType::Long, {5});
  for (int i = 0; i < 5; ++i) xl.data<int64_t>()[i] = (int64_t{1} << 40) + i;
  Buf ol = make(ScalarType::Long, {5});
  Value three = vint(3);
  CHECK_OK(check::call(ctx, "aten::mul.Scalar", {&xl.value, &three, &ol.value}));
  CHECK_EQ(ol.data<int64_t>()[4], ((int64_t{1} << 40) + 4) * 3);
  // hardtanh keeps an integer input's dtype, its float bounds rounded inwards (ATen).
  Value lo = Value(-1.5), hi = Value(2.5);
  CHECK_OK(check::call(ctx, "aten::hardtanh", {&xl.value, &lo, &hi, &ol.value}));
  CHECK_EQ(ol.data<int64_t>()[0], 2);
  Buf of = make(ScalarType::Float, {5});
  CHECK_FAILS(check::call(ctx, "aten::hardtanh", {&xl.value, &lo, &hi, &of.value}), ErrorCode::InvalidArgument);
  // NaN passes through relu as in ATen.
  Buf n = make(ScalarType::Float, {1});
  n.data<float>()[0] = std::nanf("");
  Buf no = make(ScalarType::Float, {1});
  CHECK_OK(check::call(ctx, "aten::relu", {&n.value, &no.value}));
  CHECK(std::isnan(no.data<float>()[0]));
  // float32 -> int64 is defined for NaN and out-of-range values: INT64_MIN, as x86 converts.
  Buf fl = make(ScalarType::Float, {3});
  fl.data<float>()[0] = std::nanf("");
  fl.data<float>()[1] = 1e30f;
  fl.data<float>()[2] = -7.9f;
  Buf il = make(ScalarType::Long, {3});
  Value unset;
  CHECK_OK(check::call(ctx, "aten::_to_copy", {&fl.value, &unset, &unset, &unset, &unset, &unset, &unset, &il.value}));
  CHECK_EQ(il.data<int64_t>()[0], std::numeric_limits<int64_t>::min());
  CHECK_EQ(il.data<int64_t>()[1], std::numeric_limits<int64_t>::min());
  CHECK_EQ(il.data<int64_t>()[2], -7);
}

// Two shapes that broadcast: start from the result and knock out dimensions.
void broadcast_pair(Sizes* a, Sizes* b, Sizes* out) {
  *out = random_sizes(4, 7);
  *a = *out;
  *b = *out;
  for (size_t i = 0; i < out->size(); ++i) {
    int r = static_cast<int>(rand_int(0, 3));
    if (r == 0) (*a)[i] = 1;
    if (r == 1) (*b)[i] = 1;
  }
  if (rand_int(0, 1) == 0) b->erase(b->begin(), b->begin() + rand_int(0, static_cast<int64_t>(b->size())));
  if (rand_int(0, 3) == 0) a->erase(a->begin(), a->begin() + rand_int(0, static_cast<int64_t>(a->size())));
  // Both may have lost a dimension: the result is their broadcast.
  const size_t nd = std::max(a->size(), b->size());
  out->assign(nd, 1);
  for (size_t i = 0; i < nd; ++i) {
    int64_t sa = i + a->size() >= nd ? (*a)[i + a->size() - nd] : 1;
    int64_t sb = i + b->size() >= nd ? (*b)[i + b->size() - nd] : 1;
    (*out)[i] = std::max(sa, sb);
  }
}

void test_binary() {
  struct Op {
    const char* name;
    bool alpha;
    std::function<float(float, float, float)> f;
  };
  const Op ops[] = {
      {"aten::add.Tensor", true, [](float a, float b, float al) { return a + al * b; }},
      {"aten::sub.Tensor", true, [](float a, float b, float al) { return a - al * b; }},
      {"aten::mul.Tensor", false, [](float a, float b, float) { return a * b; }},
      {"aten::div.Tensor", false, [](float a, float b, float) { return a / b; }},
  };
  for (int iter = 0; iter < 60; ++iter) {
    for (const Op& op : ops) {
      Sizes sa, sb, so;
      broadcast_pair(&sa, &sb, &so);
      Buf a = random_input(ScalarType::Float, sa);
      Buf b = random_input(ScalarType::Float, sb, 0.5f, 3.0f);
      // Expanded operand: stride 0 over a broadcast dimension.
      Buf out = make(ScalarType::Float, so);
      Value alpha = vdouble(op.alpha ? 0.5 * static_cast<double>(iter % 5) : 1.0);
      std::vector<Value*> args = {&a.value, &b.value};
      if (op.alpha) args.push_back(&alpha);
      args.push_back(&out.value);
      CHECK_OK(check::call(ctx, op.name, args));
      const float al = static_cast<float>(alpha.to_double());
      expect_all(op.name, out.t(), [&](const Sizes& i) {
        return op.f(static_cast<float>(get(a.t(), broadcast_offset(a.t(), i))),
                    static_cast<float>(get(b.t(), broadcast_offset(b.t(), i))), al);
      }, 1e-6, 1e-6);
    }
  }
  // An explicitly expanded input (stride 0) and a transposed one.
  Buf base = make(ScalarType::Float, {1, 5});
  fill_random(base);
  Buf expanded = make(ScalarType::Float, {4, 5});
  Sizes esz = {4, 5}, est = {0, 1};
  expanded.t() = *Tensor::make(base.t().data(), ScalarType::Float, Span<const int64_t>(esz.data(), 2),
                               Span<const int64_t>(est.data(), 2));
  Buf tr = make_strided(ScalarType::Float, {4, 5}, {1, 4});
  fill_random(tr);
  Buf out = make(ScalarType::Float, {4, 5});
  Value one = vint(1);
  CHECK_OK(check::call(ctx, "aten::add.Tensor", {&expanded.value, &tr.value, &one, &out.value}));
  expect_all("add expand+transpose", out.t(), [&](const Sizes& i) {
    return static_cast<float>(base.data<float>()[i[1]]) + static_cast<float>(get(tr.t(), offset_of(tr.t(), i)));
  }, 0, 0);

  // A 0-d Long operand is converted to the float result type (Python numbers reach graphs so).
  Buf x = make(ScalarType::Float, {3});
  fill_random(x);
  Buf two = make(ScalarType::Long, {});
  two.data<int64_t>()[0] = 2;
  Buf o3 = make(ScalarType::Float, {3});
  CHECK_OK(check::call(ctx, "aten::mul.Tensor", {&x.value, &two.value, &o3.value}));
  expect_all("mul by 0-d long", o3.t(), [&](const Sizes& i) { return 2.0f * x.data<float>()[i[0]]; }, 0, 0);

  // Integer arithmetic keeps integers.
  Buf la = make(ScalarType::Long, {2, 3});
  Buf lb = make(ScalarType::Long, {3});
  fill_random(la);
  fill_random(lb);
  Buf lo = make(ScalarType::Long, {2, 3});
  Value a2 = vint(2);
  CHECK_OK(check::call(ctx, "aten::add.Tensor", {&la.value, &lb.value, &a2, &lo.value}));
  expect_all("add long", lo.t(), [&](const Sizes& i) {
    return get(la.t(), offset_of(la.t(), i)) + 2 * get(lb.t(), i[1]);
  }, 0, 0);
}

void test_compare_where_fill() {
  for (int iter = 0; iter < 30; ++iter) {
    Sizes s = random_sizes(4, 6);
    Buf x = random_input(ScalarType::Float, s);
    // Plant some -inf and exact values to compare against.
    int64_t n = numel_of(s);
    for (int k = 0; k < 3; ++k) {
      Sizes idx(s.size());
      for (size_t d = 0; d < s.size(); ++d) idx[d] = rand_int(0, s[d] - 1);
      set(x.t(), offset_of(x.t(), idx), k == 0 ? -std::numeric_limits<double>::infinity() : 1.5);
    }
    (void)n;
    Buf mask = make(ScalarType::Bool, s);
    Value ninf = vdouble(-std::numeric_limits<double>::infinity());
    CHECK_OK(check::call(ctx, "aten::eq.Scalar", {&x.value, &ninf, &mask.value}));
    expect_all("eq -inf", mask.t(), [&](const Sizes& i) { return std::isinf(get(x.t(), offset_of(x.t(), i))) ? 1.0 : 0.0; }, 0, 0);
    Value onep5 = vdouble(1.5);
    CHECK_OK(check::call(ctx, "aten::eq.Scalar", {&x.value, &onep5, &mask.value}));
    expect_all("eq 1.5", mask.t(), [&](const Sizes& i) { return get(x.t(), offset_of(x.t(), i)) == 1.5 ? 1.0 : 0.0; }, 0, 0);

    Buf notm = make(ScalarType::Bool, s);
    Buf bm = random_input(ScalarType::Bool, s);
    CHECK_OK(check::call(ctx, "aten::logical_not", {&bm.value, &notm.value}));
    expect_all("logical_not", notm.t(), [&](const Sizes& i) { return get(bm.t(), offset_of(bm.t(), i)) == 0 ? 1.0 : 0.0; }, 0, 0);

    // any.dim over every dimension, with and without keepdim.
    for (int64_t d = -static_cast<int64_t>(s.size()); d < static_cast<int64_t>(s.size()); ++d) {
      for (bool keep : {true, false}) {
        const size_t wd = static_cast<size_t>(d < 0 ? d + static_cast<int64_t>(s.size()) : d);
        Sizes os;
        for (size_t i = 0; i < s.size(); ++i) {
          if (i != wd) os.push_back(s[i]);
          else if (keep) os.push_back(1);
        }
        Buf anyo = make(ScalarType::Bool, os);
        Value dv = vint(d), kv = vbool(keep);
        CHECK_OK(check::call(ctx, "aten::any.dim", {&bm.value, &dv, &kv, &anyo.value}));
        expect_all("any.dim", anyo.t(), [&](const Sizes& oi) {
          Sizes idx;
          size_t k = 0;
          for (size_t i = 0; i < s.size(); ++i) {
            if (i == wd) {
              idx.push_back(0);
              if (keep) ++k;
            } else {
              idx.push_back(oi[k++]);
            }
          }
          double r = 0;
          for (int64_t j = 0; j < s[wd]; ++j) {
            idx[wd] = j;
            if (get(bm.t(), offset_of(bm.t(), idx)) != 0) r = 1;
          }
          return r;
        }, 0, 0);
      }
    }

    // where with a condition broadcast along the last dimension (the attention pattern).
    Sizes cs = s;
    cs.back() = 1;
    Buf cond = random_input(ScalarType::Bool, cs);
    Buf y = random_input(ScalarType::Float, s);
    Buf wo = make(ScalarType::Float, s);
    CHECK_OK(check::call(ctx, "aten::where.self", {&cond.value, &x.value, &y.value, &wo.value}));
    expect_all("where", wo.t(), [&](const Sizes& i) {
      return get(cond.t(), broadcast_offset(cond.t(), i)) != 0 ? get(x.t(), offset_of(x.t(), i))
                                                                : get(y.t(), offset_of(y.t(), i));
    }, 0, 0);
    // Full-shape condition, 0-d float "other".
    Buf cond2 = random_input(ScalarType::Bool, s);
    Buf zero = make(ScalarType::Float, {});
    zero.data<float>()[0] = -7.0f;
    CHECK_OK(check::call(ctx, "aten::where.self", {&cond2.value, &x.value, &zero.value, &wo.value}));
    expect_all("where 0-d", wo.t(), [&](const Sizes& i) {
      return get(cond2.t(), offset_of(cond2.t(), i)) != 0 ? get(x.t(), offset_of(x.t(), i)) : -7.0;
    }, 0, 0);

    // full_like: dtype None keeps self's dtype; dtype codes pick another one.
    Value none, fill0 = vint(0), fill25 = vdouble(2.5), pin = vbool(false);
    Buf fo = make(ScalarType::Float, s);
    fill_random(fo);
    CHECK_OK(check::call(ctx, "aten::full_like", {&x.value, &fill0, &none, &none, &none, &pin, &none, &fo.value}));
    expect_all("full_like 0", fo.t(), [](const Sizes&) { return 0.0; }, 0, 0);
    CHECK_OK(check::call(ctx, "aten::full_like", {&x.value, &fill25, &none, &none, &none, &pin, &none, &fo.value}));
    expect_all("full_like 2.5", fo.t(), [](const Sizes&) { return 2.5; }, 0, 0);
    Buf flo = make(ScalarType::Long, s);
    Value long_code = vint(1), big = vint((int64_t{1} << 53) + 1);
    CHECK_OK(check::call(ctx, "aten::full_like", {&x.value, &big, &long_code, &none, &none, &pin, &none, &flo.value}));
    CHECK_EQ(flo.data<int64_t>()[numel_of(s) - 1], (int64_t{1} << 53) + 1);
    Buf fb = make(ScalarType::Bool, s);
    Value bool_code = vint(3), tru = vbool(true);
    CHECK_OK(check::call(ctx, "aten::full_like", {&x.value, &tru, &bool_code, &none, &none, &pin, &none, &fb.value}));
    expect_all("full_like bool", fb.t(), [](const Sizes&) { return 1.0; }, 0, 0);

    // clone of a strided input is a contiguous copy.
    Buf co = make(ScalarType::Float, s);
    CHECK_OK(check::call(ctx, "aten::clone", {&x.value, &none, &co.value}));
    expect_all("clone", co.t(), [&](const Sizes& i) { return get(x.t(), offset_of(x.t(), i)); }, 0, 0);
    Buf lx = random_input(ScalarType::Long, s);
    Buf lco = make(ScalarType::Long, s);
    CHECK_OK(check::call(ctx, "aten::clone", {&lx.value, &none, &lco.value}));
    expect_all("clone long", lco.t(), [&](const Sizes& i) { return get(lx.t(), offset_of(lx.t(), i)); }, 0, 0);
  }
}

// ---------------------------------------------------------------------------------------------

void test_softmax() {
  for (int iter = 0; iter < 40; ++iter) {
    Sizes s = random_sizes(4, iter < 20 ? 7 : 40, 20000);
    Buf x = random_input(ScalarType::Float, s, -10.0f, 10.0f);
    const int64_t nd = static_cast<int64_t>(s.size());
    const int64_t dim = rand_int(-nd, nd - 1);
    const size_t wd = static_cast<size_t>(dim < 0 ? dim + nd : dim);
    Buf out = make(ScalarType::Float, s);
    Value dv = vint(dim), h2f = vbool(false);
    CHECK_OK(check::call(ctx, "aten::_softmax", {&x.value, &dv, &h2f, &out.value}));
    expect_all("softmax", out.t(), [&](const Sizes& i) {
      Sizes idx = i;
      double mx = -INFINITY;
      for (int64_t j = 0; j < s[wd]; ++j) {
        idx[wd] = j;
        mx = std::max(mx, get(x.t(), offset_of(x.t(), idx)));
      }
      double sum = 0;
      for (int64_t j = 0; j < s[wd]; ++j) {
        idx[wd] = j;
        sum += std::exp(get(x.t(), offset_of(x.t(), idx)) - mx);
      }
      return std::exp(get(x.t(), offset_of(x.t(), i)) - mx) / sum;
    }, 1e-6, 1e-5);
  }
  // Masked rows: -inf entries give 0, an all -inf row gives NaN (as ATen).
  Buf x = make(ScalarType::Float, {2, 20});
  fill_random(x);
  const float ninf = -std::numeric_limits<float>::infinity();
  for (int j = 0; j < 20; ++j) x.data<float>()[20 + j] = ninf;
  x.data<float>()[3] = ninf;
  Buf out = make(ScalarType::Float, {2, 20});
  Value dv = vint(1), h2f = vbool(false);
  CHECK_OK(check::call(ctx, "aten::_softmax", {&x.value, &dv, &h2f, &out.value}));
  CHECK_EQ(out.data<float>()[3], 0.0f);
  CHECK(std::isnan(out.data<float>()[25]));
  double sum = 0;
  for (int j = 0; j < 20; ++j) sum += out.data<float>()[j];
  CHECK_NEAR(sum, 1.0, 1e-6);
  Value yes = vbool(true);
  CHECK_FAILS(check::call(ctx, "aten::_softmax", {&x.value, &dv, &yes, &out.value}), ErrorCode::InvalidArgument);
}

void test_layer_norm() {
  // The last 8 iterations hit the path for 64-wide rows with weight and bias (transformers).
  for (int iter = 0; iter < 48; ++iter) {
    const bool wide64 = iter >= 40;
    Sizes s = wide64 ? Sizes{rand_int(1, 40), 64} : random_sizes(4, iter < 20 ? 6 : 70, 20000);
    const size_t k = wide64 ? 1 : static_cast<size_t>(rand_int(1, static_cast<int64_t>(s.size())));
    Sizes ns(s.end() - static_cast<std::ptrdiff_t>(k), s.end());
    Buf x = random_input(ScalarType::Float, s, -2.0f, 4.0f);
    Buf w = random_input(ScalarType::Float, ns);
    Buf b = random_input(ScalarType::Float, ns);
    const bool use_w = wide64 || iter % 3 != 1, use_b = wide64 || iter % 3 != 2;
    Value none;
    IntList nsv(ns);
    Value eps = vdouble(1e-5);
    Sizes stat = s;
    for (size_t i = s.size() - k; i < s.size(); ++i) stat[i] = 1;
    Buf out = make(ScalarType::Float, s), mean = make(ScalarType::Float, stat), rstd = make(ScalarType::Float, stat);
    CHECK_OK(check::call(ctx, "aten::native_layer_norm",
                         {&x.value, &nsv.value, use_w ? &w.value : &none, use_b ? &b.value : &none, &eps,
                          &out.value, &mean.value, &rstd.value}));
    // Reference statistics in double per row (the leading dims index a row).
    const int64_t m = numel_of(ns);
    const int64_t rows = numel_of(s) / m;
    std::vector<double> mus(static_cast<size_t>(rows)), rss(static_cast<size_t>(rows));
    Sizes lead(s.begin(), s.end() - static_cast<std::ptrdiff_t>(k));
    int64_t r = 0;
    for_each_index(lead, [&](const Sizes& li) {
      Sizes idx = li;
      idx.resize(s.size());
      double sum = 0, sq = 0;
      for_each_index(ns, [&](const Sizes& inner) {
        for (size_t j = 0; j < k; ++j) idx[s.size() - k + j] = inner[j];
        double v = get(x.t(), offset_of(x.t(), idx));
        sum += v;
        sq += v * v;
      });
      double mu = sum / static_cast<double>(m);
      double var = sq / static_cast<double>(m) - mu * mu;
      mus[static_cast<size_t>(r)] = mu;
      rss[static_cast<size_t>(r)] = 1.0 / std::sqrt(std::max(var, 0.0) + 1e-5);
      ++r;
    });
    auto row_of = [&](const Sizes& i) {
      int64_t row = 0;
      for (size_t d = 0; d < s.size() - k; ++d) row = row * s[d] + i[d];
      return static_cast<size_t>(row);
    };
    expect_all("layer_norm", out.t(), [&](const Sizes& i) {
      const size_t row = row_of(i);
      Sizes wi(i.end() - static_cast<std::ptrdiff_t>(k), i.end());
      double v = (get(x.t(), offset_of(x.t(), i)) - mus[row]) * rss[row];
      if (use_w) v *= get(w.t(), offset_of(w.t(), wi));
      if (use_b) v += get(b.t(), offset_of(b.t(), wi));
      return v;
    }, 2e-5, 1e-5);
    expect_all("layer_norm mean", mean.t(), [&](const Sizes& i) { return mus[row_of(i)]; }, 1e-6, 1e-6);
    expect_all("layer_norm rstd", rstd.t(), [&](const Sizes& i) { return rss[row_of(i)]; }, 1e-6, 1e-5);
  }
  // Wrong normalized_shape and wrongly planned statistics fail.
  Buf x = make(ScalarType::Float, {2, 8});
  Buf out = make(ScalarType::Float, {2, 8}), mean = make(ScalarType::Float, {2, 1}), rstd = make(ScalarType::Float, {2, 1});
  Value none, eps = vdouble(1e-5);
  IntList bad({7});
  CHECK_FAILS(check::call(ctx, "aten::native_layer_norm", {&x.value, &bad.value, &none, &none, &eps, &out.value, &mean.value, &rstd.value}),
              ErrorCode::InvalidArgument);
  IntList good({8});
  Buf badmean = make(ScalarType::Float, {2});
  CHECK_FAILS(check::call(ctx, "aten::native_layer_norm", {&x.value, &good.value, &none, &none, &eps, &out.value, &badmean.value, &rstd.value}),
              ErrorCode::InvalidArgument);
  CHECK_OK(check::call(ctx, "aten::native_layer_norm", {&x.value, &good.value, &none, &none, &eps, &out.value, &mean.value, &rstd.value}));
}

// ---------------------------------------------------------------------------------------------
// Views

// A view output as the exporter plans it: dtype and shape set, no memory.
Buf view_out(ScalarType dt, const Sizes& s) {
  Buf b;
  auto r = Tensor::make(nullptr, dt, Span<const int64_t>(s.data(), s.size()));
  b.value = Value(*r);
  return b;
}

// The view aliases `in`: its data pointer lies inside the input's memory.
bool aliases(const Tensor& view, const Buf& in) {
  const char* lo = reinterpret_cast<const char*>(in.storage.data());
  const char* hi = lo + in.storage.size() * 8;
  const char* p = static_cast<const char*>(view.data());
  return p >= lo && p < hi;
}

// Every element of `view` equals the input element `map(view index)` says.
void expect_view(const char* what, const Buf& in, const Tensor& view, const Sizes& want_sizes,
                 const std::function<Sizes(const Sizes&)>& map) {
  CHECK(aliases(view, in));
  if (!::check::record(sizes_of(view) == want_sizes, __FILE__, __LINE__, std::string(what) + ": view sizes")) return;
  bool ok = true;
  for_each_index(want_sizes, [&](const Sizes& i) {
    const char* vp = static_cast<const char*>(view.data()) + offset_of(view, i) * 4;
    const char* ip = static_cast<const char*>(in.t().data()) + offset_of(in.t(), map(i)) * 4;
    if (std::memcmp(vp, ip, 4) != 0 || vp != ip) ok = false;
  });
  ::check::record(ok, __FILE__, __LINE__, std::string(what) + ": view elements");
}

void test_views() {
  for (int iter = 0; iter < 40; ++iter) {
    Sizes s = random_sizes(4, 6);
    const int64_t nd = static_cast<int64_t>(s.size());
    Buf x = random_input(ScalarType::Float, s);

    // permute
    Sizes perm(s.size());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
    std::shuffle(perm.begin(), perm.end(), rng());
    Sizes ps(s.size());
    for (size_t i = 0; i < s.size(); ++i) ps[i] = s[perm[i]];
    IntList pv(perm);
    Buf po = view_out(ScalarType::Float, ps);
    CHECK_OK(check::call(ctx, "aten::permute", {&x.value, &pv.value, &po.value}));
    expect_view("permute", x, po.t(), ps, [&](const Sizes& i) {
      Sizes src(s.size());
      for (size_t d = 0; d < s.size(); ++d) src[perm[d]] = i[d];
      return src;
    });

    // transpose.int and t
    int64_t d0 = rand_int(-nd, nd - 1), d1 = rand_int(-nd, nd - 1);
    size_t w0 = static_cast<size_t>(d0 < 0 ? d0 + nd : d0), w1 = static_cast<size_t>(d1 < 0 ? d1 + nd : d1);
    Sizes ts = s;
    std::swap(ts[w0], ts[w1]);
    Buf to = view_out(ScalarType::Float, ts);
    Value v0 = vint(d0), v1 = vint(d1);
    CHECK_OK(check::call(ctx, "aten::transpose.int", {&x.value, &v0, &v1, &to.value}));
    expect_view("transpose", x, to.t(), ts, [&](const Sizes& i) {
      Sizes src = i;
      std::swap(src[w0], src[w1]);
      return src;
    });

    // select.int
    int64_t sd = rand_int(0, nd - 1);
    int64_t index = rand_int(-s[sd], s[sd] - 1);
    Sizes ss = s;
    ss.erase(ss.begin() + sd);
    Buf so = view_out(ScalarType::Float, ss);
    Value sdv = vint(sd), iv = vint(index);
    CHECK_OK(check::call(ctx, "aten::select.int", {&x.value, &sdv, &iv, &so.value}));
    expect_view("select", x, so.t(), ss, [&](const Sizes& i) {
      Sizes src = i;
      src.insert(src.begin() + sd, index < 0 ? index + s[sd] : index);
      return src;
    });

    // unsqueeze then squeeze.dim / squeeze.dims back
    int64_t ud = rand_int(-(nd + 1), nd);
    size_t uw = static_cast<size_t>(ud < 0 ? ud + nd + 1 : ud);
    Sizes us = s;
    us.insert(us.begin() + static_cast<std::ptrdiff_t>(uw), 1);
    Buf uo = view_out(ScalarType::Float, us);
    Value udv = vint(ud);
    CHECK_OK(check::call(ctx, "aten::unsqueeze", {&x.value, &udv, &uo.value}));
    expect_view("unsqueeze", x, uo.t(), us, [&](const Sizes& i) {
      Sizes src = i;
      src.erase(src.begin() + static_cast<std::ptrdiff_t>(uw));
      return src;
    });
    Buf sqo = view_out(ScalarType::Float, s);
    Value uwv = vint(static_cast<int64_t>(uw));
    CHECK_OK(check::call(ctx, "aten::squeeze.dim", {&uo.value, &uwv, &sqo.value}));
    expect_view("squeeze.dim", x, sqo.t(), s, [](const Sizes& i) { return i; });
    // squeeze.dims drops only the listed size-1 dims.
    Sizes all_dims;
    for (int64_t d = 0; d <= nd; ++d) all_dims.push_back(d - (nd + 1));  // negative form
    IntList adv(all_dims);
    Sizes squeezed;
    for (int64_t v : us) {
      if (v != 1) squeezed.push_back(v);
    }
    Buf sqdo = view_out(ScalarType::Float, squeezed);
    CHECK_OK(check::call(ctx, "aten::squeeze.dims", {&uo.value, &adv.value, &sqdo.value}));
    CHECK(sizes_of(sqdo.t()) == squeezed);
    CHECK(aliases(sqdo.t(), x));

    // slice.Tensor with optional bounds and a step
    int64_t cd = rand_int(0, nd - 1);
    int64_t start = rand_int(-s[cd] - 2, s[cd] + 1), end = rand_int(-s[cd] - 2, s[cd] + 2), step = rand_int(1, 3);
    bool no_start = rand_int(0, 3) == 0, no_end = rand_int(0, 3) == 0;
    int64_t a = no_start ? 0 : (start < 0 ? start + s[cd] : start);
    int64_t e = no_end ? s[cd] : (end < 0 ? end + s[cd] : end);
    a = std::min(std::max<int64_t>(a, 0), s[cd]);
    e = std::min(std::max<int64_t>(e, a), s[cd]);
    Sizes cs = s;
    cs[cd] = (e - a + step - 1) / step;
    Buf co = view_out(ScalarType::Float, cs);
    Value none, cdv = vint(cd), stv = vint(start), env = vint(end), spv = vint(step);
    CHECK_OK(check::call(ctx, "aten::slice.Tensor", {&x.value, &cdv, no_start ? &none : &stv, no_end ? &none : &env, &spv, &co.value}));
    if (numel_of(cs) > 0) {
      expect_view("slice", x, co.t(), cs, [&](const Sizes& i) {
        Sizes src = i;
        src[cd] = a + i[cd] * step;
        return src;
      });
    } else {
      CHECK(sizes_of(co.t()) == cs);
    }

    // split_with_sizes into up to three pieces
    int64_t pd = rand_int(0, nd - 1);
    Sizes pieces;
    int64_t left = s[pd];
    while (left > 0) {
      int64_t p = rand_int(1, left);
      pieces.push_back(p);
      left -= p;
    }
    std::vector<Buf> outs;
    outs.reserve(pieces.size());
    std::vector<Value*> out_ptrs;
    for (int64_t p : pieces) {
      Sizes os = s;
      os[pd] = p;
      outs.push_back(view_out(ScalarType::Float, os));
    }
    for (Buf& b : outs) out_ptrs.push_back(&b.value);
    Value list = Value::tensor_list(Span<Value* const>(out_ptrs.data(), out_ptrs.size()));
    IntList pieces_v(pieces);
    Value pdv = vint(pd);
    CHECK_OK(check::call(ctx, "aten::split_with_sizes", {&x.value, &pieces_v.value, &pdv, &list}));
    int64_t offset = 0;
    for (size_t j = 0; j < pieces.size(); ++j) {
      Sizes os = s;
      os[pd] = pieces[j];
      expect_view("split", x, outs[j].t(), os, [&](const Sizes& i) {
        Sizes src = i;
        src[pd] += offset;
        return src;
      });
      offset += pieces[j];
    }

    // expand: new leading dims and size-1 dims broadcast with stride 0
    Sizes base_s = s;
    for (auto& v : base_s) {
      if (rand_int(0, 2) == 0) v = 1;
    }
    Buf xb = random_input(ScalarType::Float, base_s);
    Sizes es = s;
    if (rand_int(0, 1) == 0 && es.size() < 6) es.insert(es.begin(), 3);
    Sizes req = es;
    for (size_t i = 0; i < base_s.size(); ++i) {
      size_t j = es.size() - base_s.size() + i;
      if (base_s[i] == es[j] && rand_int(0, 1) == 0) req[j] = -1;
    }
    IntList reqv(req);
    Value implicit = vbool(false);
    Buf eo = view_out(ScalarType::Float, es);
    CHECK_OK(check::call(ctx, "aten::expand", {&xb.value, &reqv.value, &implicit, &eo.value}));
    expect_view("expand", xb, eo.t(), es, [&](const Sizes& i) {
      Sizes src(base_s.size());
      for (size_t d = 0; d < base_s.size(); ++d) src[d] = base_s[d] == 1 ? 0 : i[es.size() - base_s.size() + d];
      return src;
    });

    // alias
    Buf ao = view_out(ScalarType::Float, s);
    CHECK_OK(check::call(ctx, "aten::alias", {&x.value, &ao.value}));
    expect_view("alias", x, ao.t(), s, [](const Sizes& i) { return i; });
  }

  // t on 2-d and 1-d
  Buf m = random_input(ScalarType::Float, {3, 5});
  Buf mt = view_out(ScalarType::Float, {5, 3});
  CHECK_OK(check::call(ctx, "aten::t", {&m.value, &mt.value}));
  expect_view("t", m, mt.t(), {5, 3}, [](const Sizes& i) { return Sizes{i[1], i[0]}; });
  Buf v1 = random_input(ScalarType::Float, {4});
  Buf v1t = view_out(ScalarType::Float, {4});
  CHECK_OK(check::call(ctx, "aten::t", {&v1.value, &v1t.value}));
  expect_view("t 1-d", v1, v1t.t(), {4}, [](const Sizes& i) { return i; });
  Buf m3 = make(ScalarType::Float, {2, 2, 2});
  CHECK_FAILS(check::call(ctx, "aten::t", {&m3.value, &mt.value}), ErrorCode::InvalidArgument);
}

void test_view_reshape() {
  // Contiguous input: any compatible shape, with one inferred dimension.
  for (int iter = 0; iter < 30; ++iter) {
    Sizes s = random_sizes(4, 6);
    Buf x = random_input(ScalarType::Float, s);
    Buf xc = make(ScalarType::Float, s);
    fill_random(xc);
    int64_t n = numel_of(s);
    Sizes target;
    int64_t left = n;
    while (left > 1 && target.size() < 4) {
      int64_t f = 1;
      for (int64_t c = 2; c <= left; ++c) {
        if (left % c == 0 && rand_int(0, 2) == 0) {
          f = c;
          break;
        }
      }
      if (f == 1) f = left;
      target.push_back(f);
      left /= f;
    }
    if (target.empty()) target.push_back(1);
    Sizes req = target;
    req[static_cast<size_t>(rand_int(0, static_cast<int64_t>(req.size()) - 1))] = -1;
    IntList rv(req);
    Buf o = view_out(ScalarType::Float, target);
    const char* name = iter % 2 ? "aten::view" : "aten::_unsafe_view";
    CHECK_OK(check::call(ctx, name, {&xc.value, &rv.value, &o.value}));
    Sizes tstr = contiguous_strides(target);
    expect_view("view", xc, o.t(), target, [&](const Sizes& i) {
      int64_t flat = 0;
      for (size_t d = 0; d < i.size(); ++d) flat += i[d] * tstr[d];
      Sizes src(s.size());
      for (size_t d = s.size(); d-- > 0;) {
        src[d] = flat % s[d];
        flat /= s[d];
      }
      return src;
    });
  }
  // The transformer's view of a permuted tensor: (16,1,64) strides (64,1024,1) -> [16, 64].
  Buf p = make_strided(ScalarType::Float, {16, 1, 64}, {64, 1024, 1});
  fill_random(p);
  IntList shape({16, 64});
  Buf o = view_out(ScalarType::Float, {16, 64});
  CHECK_OK(check::call(ctx, "aten::view", {&p.value, &shape.value, &o.value}));
  expect_view("view of permuted", p, o.t(), {16, 64}, [](const Sizes& i) { return Sizes{i[0], 0, i[1]}; });
  // Merging transposed dimensions is not a view: the kernel fails instead of copying.
  Buf tr = make_strided(ScalarType::Float, {4, 6}, {1, 4});
  IntList flat({24});
  Buf fo = view_out(ScalarType::Float, {24});
  CHECK_FAILS(check::call(ctx, "aten::view", {&tr.value, &flat.value, &fo.value}), ErrorCode::InvalidArgument);
  // Splitting a transposed dimension is fine.
  IntList split({2, 2, 6});
  Buf so = view_out(ScalarType::Float, {2, 2, 6});
  CHECK_OK(check::call(ctx, "aten::view", {&tr.value, &split.value, &so.value}));
  CHECK(so.t().stride(0) == 2 && so.t().stride(1) == 1 && so.t().stride(2) == 4);
  IntList wrong({5, 5});
  CHECK_FAILS(check::call(ctx, "aten::view", {&tr.value, &wrong.value, &fo.value}), ErrorCode::InvalidArgument);
  IntList two_infer({-1, -1});
  CHECK_FAILS(check::call(ctx, "aten::view", {&tr.value, &two_infer.value, &fo.value}), ErrorCode::InvalidArgument);
}

// ---------------------------------------------------------------------------------------------

void test_bad_arguments() {
  Buf x = make(ScalarType::Float, {2, 3});
  Buf out = make(ScalarType::Float, {2, 3});
  Buf wrong_shape = make(ScalarType::Float, {3, 2});
  Buf wrong_dtype = make(ScalarType::Long, {2, 3});
  Buf other = make(ScalarType::Float, {4});
  Value one = vint(1), none, dim9 = vint(9), dim0 = vint(0), no = vbool(false);
  Value str = Value::string("fast");
  const ErrorCode bad = ErrorCode::InvalidArgument;

  CHECK_FAILS(check::call(ctx, "aten::relu", {&x.value}), bad);
  CHECK_FAILS(check::call(ctx, "aten::relu", {&x.value, &out.value, &out.value}), bad);
  CHECK_FAILS(check::call(ctx, "aten::relu", {&one, &out.value}), bad);
  CHECK_FAILS(check::call(ctx, "aten::relu", {&x.value, &wrong_shape.value}), bad);
  CHECK_FAILS(check::call(ctx, "aten::relu", {&x.value, &wrong_dtype.value}), bad);
  CHECK_FAILS(check::call(ctx, "aten::relu", {&wrong_dtype.value, &out.value}), bad);
  CHECK_FAILS(check::call(ctx, "aten::relu", {&x.value, nullptr}), bad);
  CHECK_FAILS(check::call(ctx, "aten::gelu", {&x.value, &str, &out.value}), bad);
  CHECK_FAILS(check::call(ctx, "aten::add.Tensor", {&x.value, &other.value, &one, &out.value}), bad);
  CHECK_FAILS(check::call(ctx, "aten::add.Tensor", {&x.value, &x.value, &none, &out.value}), bad);
  CHECK_FAILS(check::call(ctx, "aten::mul.Tensor", {&x.value, &x.value, &wrong_shape.value}), bad);
  CHECK_FAILS(check::call(ctx, "aten::mul.Scalar", {&x.value, &x.value, &out.value}), bad);
  CHECK_FAILS(check::call(ctx, "aten::_softmax", {&x.value, &dim9, &no, &out.value}), bad);
  CHECK_FAILS(check::call(ctx, "aten::any.dim", {&x.value, &dim0, &no, &out.value}), bad);  // out not bool
  CHECK_FAILS(check::call(ctx, "aten::where.self", {&x.value, &x.value, &x.value, &out.value}), bad);  // cond not bool
  Value bad_code = vint(42), pin = vbool(false);
  CHECK_FAILS(check::call(ctx, "aten::full_like", {&x.value, &one, &bad_code, &none, &none, &pin, &none, &out.value}), bad);
  CHECK_FAILS(check::call(ctx, "aten::clone", {&x.value, &none, &wrong_shape.value}), bad);

  // Views
  Buf vo = view_out(ScalarType::Float, {3, 2});
  IntList dup({0, 0});
  CHECK_FAILS(check::call(ctx, "aten::permute", {&x.value, &dup.value, &vo.value}), bad);
  IntList short_perm({0});
  CHECK_FAILS(check::call(ctx, "aten::permute", {&x.value, &short_perm.value, &vo.value}), bad);
  IntList bad_expand({4, 3});
  Value impl = vbool(false);
  CHECK_FAILS(check::call(ctx, "aten::expand", {&x.value, &bad_expand.value, &impl, &vo.value}), bad);
  IntList fewer({3});
  CHECK_FAILS(check::call(ctx, "aten::expand", {&x.value, &fewer.value, &impl, &vo.value}), bad);
  Value idx5 = vint(5);
  CHECK_FAILS(check::call(ctx, "aten::select.int", {&x.value, &dim0, &idx5, &vo.value}), bad);
  CHECK_FAILS(check::call(ctx, "aten::select.int", {&x.value, &dim9, &dim0, &vo.value}), bad);
  CHECK_FAILS(check::call(ctx, "aten::unsqueeze", {&x.value, &dim9, &vo.value}), bad);
  Value zero_step = vint(0);
  CHECK_FAILS(check::call(ctx, "aten::slice.Tensor", {&x.value, &dim0, &none, &none, &zero_step, &vo.value}), bad);
  CHECK_FAILS(check::call(ctx, "aten::transpose.int", {&x.value, &dim0, &dim9, &vo.value}), bad);
  Buf lo = view_out(ScalarType::Long, {2, 3});
  CHECK_FAILS(check::call(ctx, "aten::alias", {&x.value, &lo.value}), bad);
  IntList bad_split({1, 1});
  Buf s0 = view_out(ScalarType::Float, {1, 3}), s1 = view_out(ScalarType::Float, {1, 3});
  Value* pieces[] = {&s0.value, &s1.value};
  Value list = Value::tensor_list(Span<Value* const>(pieces, 2));
  IntList ok_split({1, 1});
  CHECK_OK(check::call(ctx, "aten::split_with_sizes", {&x.value, &ok_split.value, &dim0, &list}));
  IntList sum_wrong({1, 2});
  CHECK_FAILS(check::call(ctx, "aten::split_with_sizes", {&x.value, &sum_wrong.value, &dim0, &list}), bad);
  IntList three({1, 1, 0});
  CHECK_FAILS(check::call(ctx, "aten::split_with_sizes", {&x.value, &three.value, &dim0, &list}), bad);
  CHECK_FAILS(check::call(ctx, "aten::split_with_sizes", {&x.value, &ok_split.value, &dim0, &vo.value}), bad);

  // Out of scratch memory is reported, not a crash (softmax of a strided input needs a copy).
  Buf strided = make_strided(ScalarType::Float, {2, 3}, {1, 2});
  Value last = vint(-1);
  ctx.set_fail_alloc(true);
  CHECK_FAILS(check::call(ctx, "aten::_softmax", {&strided.value, &last, &no, &out.value}), ErrorCode::OutOfMemory);
  ctx.set_fail_alloc(false);
}

// aten::unfold (a copy): windows of `size`, `step` apart along one dimension, from any strides;
// a window longer than the dimension, a step below 1 and a dimension out of range are refused.
void test_unfold() {
  struct Case {
    int64_t dim, size, step;
  };
  for (const Case c : {Case{0, 2, 1}, Case{1, 3, 2}, Case{2, 7, 3}, Case{-1, 1, 5}, Case{1, 5, 1}, Case{2, 2, 9}}) {
    const Sizes in_sizes{3, 5, 7};
    Buf x = random_input(ScalarType::Float, in_sizes);
    const int64_t d = c.dim < 0 ? c.dim + 3 : c.dim;
    Sizes out_sizes = in_sizes;
    out_sizes[d] = (in_sizes[d] - c.size) / c.step + 1;
    out_sizes.push_back(c.size);
    Buf out = make(ScalarType::Float, out_sizes);
    Value dim = vint(c.dim), size = vint(c.size), step = vint(c.step);
    CHECK_OK(check::call(ctx, "aten::unfold", {&x.value, &dim, &size, &step, &out.value}));
    expect_all("unfold", out.t(), [&](const Sizes& idx) {
      Sizes at(idx.begin(), idx.begin() + 3);
      at[d] = idx[d] * c.step + idx[3];
      return get(x.t(), offset_of(x.t(), at));
    });
  }
  Buf x = make(ScalarType::Float, {3, 5, 7});
  Buf out = make(ScalarType::Float, {3, 5, 3, 3});
  Value two = vint(2), three = vint(3), eight = vint(8), zero = vint(0), one = vint(1), bad_dim = vint(3);
  CHECK_OK(check::call(ctx, "aten::unfold", {&x.value, &two, &three, &two, &out.value}));
  CHECK_FAILS(check::call(ctx, "aten::unfold", {&x.value, &two, &eight, &one, &out.value}), ErrorCode::InvalidArgument);
  CHECK_FAILS(check::call(ctx, "aten::unfold", {&x.value, &two, &three, &zero, &out.value}), ErrorCode::InvalidArgument);
  CHECK_FAILS(check::call(ctx, "aten::unfold", {&x.value, &bad_dim, &three, &two, &out.value}), ErrorCode::InvalidArgument);
  CHECK_FAILS(check::call(ctx, "aten::unfold", {&x.value, &two, &three, &one, &out.value}), ErrorCode::InvalidArgument);
}

// Batch norm reads weight, bias and the running statistics for every channel: any of them
// shorter than the channels is refused, never read past its end.
void test_batch_norm_refuses_short_channel_vectors() {
  Buf x = random_input(ScalarType::Float, {2, 3, 4});
  Buf c3 = random_input(ScalarType::Float, {3}), c2 = random_input(ScalarType::Float, {2});
  Buf var = random_input(ScalarType::Float, {3}, 0.5f, 2.0f);
  Buf out = make(ScalarType::Float, {2, 3, 4}), m = make(ScalarType::Float, {3}), r = make(ScalarType::Float, {3});
  Buf nm = make(ScalarType::Float, {3}), nv = make(ScalarType::Float, {3});
  Value yes = vbool(true), momentum = vdouble(0.1), eps = vdouble(1e-5), none;
  auto no_stats = [&](Value* w, Value* b) {
    return check::call(ctx, "aten::_native_batch_norm_legit.no_stats",
                       {&x.value, w, b, &yes, &momentum, &eps, &out.value, &m.value, &r.value});
  };
  auto functional = [&](Value* w, Value* mean) {
    return check::call(ctx, "aten::_native_batch_norm_legit_functional",
                       {&x.value, w, &c3.value, mean, &var.value, &yes, &momentum, &eps, &out.value, &m.value,
                        &r.value, &nm.value, &nv.value});
  };
  CHECK_OK(no_stats(&c3.value, &c3.value));
  CHECK_OK(no_stats(&none, &none));
  CHECK_FAILS(no_stats(&c2.value, &none), ErrorCode::InvalidArgument);
  CHECK_FAILS(no_stats(&none, &c2.value), ErrorCode::InvalidArgument);
  CHECK_OK(functional(&c3.value, &c3.value));
  CHECK_FAILS(functional(&c2.value, &c3.value), ErrorCode::InvalidArgument);
  CHECK_FAILS(functional(&c3.value, &c2.value), ErrorCode::InvalidArgument);
}

// Tensor.item() writes its Scalar into a None or scalar slot, never over a tensor.
void test_item_writes_a_scalar_never_over_a_tensor() {
  Buf x = make(ScalarType::Float, {1, 1});
  x.data<float>()[0] = 2.5f;
  Buf n = make(ScalarType::Long, {1});
  n.data<int64_t>()[0] = -7;
  Value out, iout;
  CHECK_OK(check::call(ctx, "aten::_local_scalar_dense", {&x.value, &out}));
  CHECK(out.is_double() && out.to_double() == 2.5);
  CHECK_OK(check::call(ctx, "aten::_local_scalar_dense", {&n.value, &iout}));
  CHECK(iout.is_int() && iout.to_int() == -7);
  Buf target = make(ScalarType::Float, {1});
  CHECK_FAILS(check::call(ctx, "aten::_local_scalar_dense", {&x.value, &target.value}), ErrorCode::InvalidArgument);
  CHECK(target.value.is_tensor());
  Buf two = make(ScalarType::Float, {2});
  CHECK_FAILS(check::call(ctx, "aten::_local_scalar_dense", {&two.value, &out}), ErrorCode::InvalidArgument);
}

// The exact attention-masking sequence the exporter produces for nn.MultiheadAttention.
void test_attention_mask_pattern() {
  Sizes s = {1, 4, 16, 16};
  Buf scores = make(ScalarType::Float, s);
  fill_random(scores);
  for (int j = 0; j < 16; ++j) scores.data<float>()[j] = -INFINITY;  // first row fully masked
  Buf sm = make(ScalarType::Float, s), eq = make(ScalarType::Bool, s), neq = make(ScalarType::Bool, s);
  Buf any = make(ScalarType::Bool, {1, 4, 16, 1}), nany = make(ScalarType::Bool, {1, 4, 16, 1});
  Buf zeros = make(ScalarType::Float, s), res = make(ScalarType::Float, s);
  Value last = vint(-1), no = vbool(false), yes = vbool(true), ninf = vdouble(-INFINITY), zero = vint(0), none;
  CHECK_OK(check::call(ctx, "aten::_softmax", {&scores.value, &last, &no, &sm.value}));
  CHECK_OK(check::call(ctx, "aten::eq.Scalar", {&scores.value, &ninf, &eq.value}));
  CHECK_OK(check::call(ctx, "aten::logical_not", {&eq.value, &neq.value}));
  CHECK_OK(check::call(ctx, "aten::any.dim", {&neq.value, &last, &yes, &any.value}));
  CHECK_OK(check::call(ctx, "aten::logical_not", {&any.value, &nany.value}));
  CHECK_OK(check::call(ctx, "aten::full_like", {&sm.value, &zero, &none, &none, &none, &no, &none, &zeros.value}));
  CHECK_OK(check::call(ctx, "aten::where.self", {&nany.value, &zeros.value, &sm.value, &res.value}));
  CHECK_EQ(nany.data<uint8_t>()[0], 1);
  CHECK_EQ(nany.data<uint8_t>()[1], 0);
  for (int j = 0; j < 16; ++j) CHECK_EQ(res.data<float>()[j], 0.0f);
  double sum = 0;
  for (int j = 16; j < 32; ++j) sum += res.data<float>()[j];
  CHECK_NEAR(sum, 1.0, 1e-6);
}

}  // namespace

// Channels-last (NHWC) operands, as the exporter lays out a CNN's activations: elementwise ops
// with a broadcast [N, C, 1, 1] gate, a channel concatenation and the spatial mean write and read
// them as one contiguous run (loops follow memory order), with the same results as NCHW.
// cat where the output and the inputs are rows of runs along the joined dimension (channels-last
// tensors joined along channels, row-major ones along their last dimension) takes one loop over
// the rows: three channels-last inputs of 5, 19 and 8 channels; a big one split across a
// stand-in pool of 3 threads running its chunks last first; a channels-last output with one
// NCHW input (not rows of runs: the general copy); row-major matrices along dim 1 with ATen's
// skipped 1-D empty tensor among them. Every element where its input says.
void test_cat_rows_of_runs() {
  auto nhwc = [](int64_t h, int64_t w, int64_t cc) { return Sizes{h * w * cc, 1, w * cc, cc}; };
  auto at = [](const Buf& b, const Sizes& i) { return get(b.t(), broadcast_offset(b.t(), i)); };
  Value one = vint(1);
  auto check_cat = [&](const std::string& label, std::vector<Buf*> ins, int64_t n, int64_t h, int64_t w,
                       bool nhwc_out) {
    int64_t total = 0;
    for (Buf* b : ins) total += b->t().size(1);
    Buf out = nhwc_out ? make_strided(ScalarType::Float, {n, total, h, w}, nhwc(h, w, total))
                       : make(ScalarType::Float, {n, total, h, w});
    std::vector<Value*> items;
    for (Buf* b : ins) items.push_back(&b->value);
    Value list = Value::tensor_list(Span<Value* const>(items.data(), items.size()));
    CHECK_OK(check::call(ctx, "aten::cat", {&list, &one, &out.value}));
    expect_all(label.c_str(), out.t(), [&](const Sizes& i) {
      Sizes j = i;
      for (Buf* b : ins) {
        if (j[1] < b->t().size(1)) return at(*b, j);
        j[1] -= b->t().size(1);
      }
      return 0.0;
    }, 0, 0);
  };
  {
    const int64_t n = 2, h = 3, w = 4;
    Buf a = make_strided(ScalarType::Float, {n, 5, h, w}, nhwc(h, w, 5));
    Buf b = make_strided(ScalarType::Float, {n, 19, h, w}, nhwc(h, w, 19));
    Buf c = make_strided(ScalarType::Float, {n, 8, h, w}, nhwc(h, w, 8));
    for (Buf* x : {&a, &b, &c}) fill_random(*x);
    check_cat("nhwc cat of three", {&a, &b, &c}, n, h, w, true);
    Buf d = make(ScalarType::Float, {n, 19, h, w});  // NCHW among channels-last ones
    fill_random(d);
    check_cat("nhwc cat with an nchw input", {&a, &d, &c}, n, h, w, true);
  }
  {
    const int64_t h = 30, w = 30;
    Buf a = make_strided(ScalarType::Float, {1, 64, h, w}, nhwc(h, w, 64));
    Buf b = make_strided(ScalarType::Float, {1, 64, h, w}, nhwc(h, w, 64));
    fill_random(a);
    fill_random(b);
    const int64_t chunks = check::chunks_run(), loops = check::loops_run();
    etrt::set_parallel_backend(check::pool<3>());
    check_cat("nhwc cat split by rows", {&a, &b}, 1, h, w, true);
    etrt::set_parallel_backend(nullptr);
    CHECK(check::chunks_run() - chunks >= 2);  // split
    CHECK_EQ(check::loops_run() - loops, 1);   // one loop over the rows, not one per input
  }
  {
    Buf a = make(ScalarType::Float, {6, 3}), b = make(ScalarType::Float, {6, 5}), empty = make(ScalarType::Float, {0});
    fill_random(a);
    fill_random(b);
    Buf out = make(ScalarType::Float, {6, 8});
    Value* items[3] = {&a.value, &empty.value, &b.value};
    Value list = Value::tensor_list(Span<Value* const>(items, 3));
    CHECK_OK(check::call(ctx, "aten::cat", {&list, &one, &out.value}));
    expect_all("row-major cat along the last dimension", out.t(), [&](const Sizes& i) {
      return i[1] < 3 ? at(a, i) : at(b, {i[0], i[1] - 3});
    }, 0, 0);
  }
}

void test_channels_last_operands() {
  const int64_t n = 2, c = 19, h = 5, w = 7;
  auto nhwc = [](int64_t cc) { return Sizes{h * w * cc, 1, w * cc, cc}; };
  Buf x = make_strided(ScalarType::Float, {n, c, h, w}, nhwc(c));
  Buf y = make_strided(ScalarType::Float, {n, c, h, w}, nhwc(c));
  Buf gate = make(ScalarType::Float, {n, c, 1, 1});
  fill_random(x);
  fill_random(y);
  fill_random(gate);
  auto at = [](const Buf& b, const Sizes& i) { return get(b.t(), broadcast_offset(b.t(), i)); };
  Buf sum = make_strided(ScalarType::Float, {n, c, h, w}, nhwc(c));
  Value one = vint(1);
  CHECK_OK(check::call(ctx, "aten::add.Tensor", {&x.value, &y.value, &one, &sum.value}));
  expect_all("nhwc add", sum.t(), [&](const Sizes& i) {
    return static_cast<float>(at(x, i)) + static_cast<float>(at(y, i));
  }, 0, 0);
  Buf gated = make_strided(ScalarType::Float, {n, c, h, w}, nhwc(c));
  CHECK_OK(check::call(ctx, "aten::mul.Tensor", {&x.value, &gate.value, &gated.value}));
  expect_all("nhwc mul by gate", gated.t(), [&](const Sizes& i) {
    return static_cast<float>(at(x, i)) * static_cast<float>(at(gate, i));
  }, 0, 0);
  Buf act = make_strided(ScalarType::Float, {n, c, h, w}, nhwc(c));
  CHECK_OK(check::call(ctx, "aten::hardswish", {&x.value, &act.value}));
  expect_all("nhwc hardswish", act.t(), [&](const Sizes& i) {
    const float v = static_cast<float>(at(x, i));
    return v * std::min(std::max(v + 3.0f, 0.0f), 6.0f) / 6.0f;
  }, 0, 0);
  // cat(x, y) along channels into an NHWC result of 2c channels.
  Buf both = make_strided(ScalarType::Float, {n, 2 * c, h, w}, nhwc(2 * c));
  Value* items[2] = {&x.value, &y.value};
  Value list = Value::tensor_list(Span<Value* const>(items, 2));
  CHECK_OK(check::call(ctx, "aten::cat", {&list, &one, &both.value}));
  expect_all("nhwc cat", both.t(), [&](const Sizes& i) {
    Sizes j = i;
    if (j[1] < c) return at(x, j);
    j[1] -= c;
    return at(y, j);
  }, 0, 0);
  // Mean over H and W (keepdim) of an NHWC input.
  Buf mean = make(ScalarType::Float, {n, c, 1, 1});
  IntList hw({2, 3});
  Value keep = vbool(true), none;
  CHECK_OK(check::call(ctx, "aten::mean.dim", {&x.value, &hw.value, &keep, &none, &mean.value}));
  expect_all("nhwc mean", mean.t(), [&](const Sizes& i) {
    double s = 0.0;
    for (int64_t a = 0; a < h; ++a)
      for (int64_t b = 0; b < w; ++b) s += at(x, {i[0], i[1], a, b});
    return s / static_cast<double>(h * w);
  }, 1e-6, 1e-6);
  // A global average pool big enough to split by runs of pixels: on a stand-in pool of 3 threads
  // running its chunks last first, the same bits as in one piece.
  const int64_t bc = 40, bh = 30;
  Buf big = make_strided(ScalarType::Float, {1, bc, bh, bh}, Sizes{bh * bh * bc, 1, bh * bc, bc});
  fill_random(big);
  Buf serial = make(ScalarType::Float, {1, bc, 1, 1}), split = make(ScalarType::Float, {1, bc, 1, 1});
  CHECK_OK(check::call(ctx, "aten::mean.dim", {&big.value, &hw.value, &keep, &none, &serial.value}));
  const int64_t chunks = check::chunks_run();
  etrt::set_parallel_backend(check::pool<3>());
  CHECK_OK(check::call(ctx, "aten::mean.dim", {&big.value, &hw.value, &keep, &none, &split.value}));
  etrt::set_parallel_backend(nullptr);
  CHECK(check::chunks_run() - chunks >= 2);  // it really was split
  CHECK(std::memcmp(serial.t().data(), split.t().data(), static_cast<size_t>(bc) * sizeof(float)) == 0);
  expect_all("nhwc mean split", split.t(), [&](const Sizes& i) {
    double s = 0.0;
    for (int64_t a = 0; a < bh; ++a)
      for (int64_t b = 0; b < bh; ++b) s += at(big, {i[0], i[1], a, b});
    return s / static_cast<double>(bh * bh);
  }, 1e-6, 1e-6);
  // A channels-last map copied to NCHW (clone): blocks of 16 channels split between threads (40
  // channels: a last block of 8), on the stand-in pool running its chunks last first, every value
  // in place.
  Buf dense = make(ScalarType::Float, {1, bc, bh, bh});
  const int64_t copy_chunks = check::chunks_run();
  etrt::set_parallel_backend(check::pool<3>());
  CHECK_OK(check::call(ctx, "aten::clone", {&big.value, &none, &dense.value}));
  etrt::set_parallel_backend(nullptr);
  CHECK(check::chunks_run() - copy_chunks >= 2);
  expect_all("nhwc clone split", dense.t(), [&](const Sizes& i) { return at(big, i); }, 0, 0);
  // The squeeze-excitation gate's mul over NHWC pixels splits by image rows, as the depthwise
  // convolution that wrote its input does: the loop the pool gets is the 30 rows, grain 1.
  Buf scaled = make_strided(ScalarType::Float, {1, bc, bh, bh}, Sizes{bh * bh * bc, 1, bh * bc, bc});
  static std::vector<std::pair<int64_t, int64_t>> loops;  // (end - begin, grain)
  const etrt::ParallelBackend recording = {
      [](int64_t begin, int64_t end, int64_t grain, etrt::RangeFn fn) {
        loops.emplace_back(end - begin, grain);
        for (int64_t b = end - grain; b + grain > begin; b -= grain) fn(std::max(begin, b), b + grain);
      },
      [] { return 2; }, nullptr};
  etrt::set_parallel_backend(&recording);
  CHECK_OK(check::call(ctx, "aten::mul.Tensor", {&big.value, &serial.value, &scaled.value}));
  etrt::set_parallel_backend(nullptr);
  CHECK(loops.size() == 1 && loops[0] == std::make_pair(bh, int64_t{1}));
  expect_all("nhwc gate mul split by rows", scaled.t(), [&](const Sizes& i) {
    return static_cast<float>(at(big, i)) * static_cast<float>(at(serial, {i[0], i[1], 0, 0}));
  }, 0, 0);
  // And an activation over the same pixels (EfficientNet-B0's silu after its depthwise layers):
  // the same rows, the same bits as in one piece.
  Buf act_serial = make_strided(ScalarType::Float, {1, bc, bh, bh}, Sizes{bh * bh * bc, 1, bh * bc, bc});
  Buf act_split = make_strided(ScalarType::Float, {1, bc, bh, bh}, Sizes{bh * bh * bc, 1, bh * bc, bc});
  CHECK_OK(check::call(ctx, "aten::silu", {&big.value, &act_serial.value}));
  loops.clear();
  etrt::set_parallel_backend(&recording);
  CHECK_OK(check::call(ctx, "aten::silu", {&big.value, &act_split.value}));
  etrt::set_parallel_backend(nullptr);
  CHECK(loops.size() == 1 && loops[0] == std::make_pair(bh, int64_t{1}));
  CHECK(std::memcmp(act_serial.t().data(), act_split.t().data(),
                    static_cast<size_t>(bc * bh * bh) * sizeof(float)) == 0);
}

// Every output a kernel writes goes through one gate: marked read-only (a constant, or a view
// of one), any output of any multi-output kernel (the loader only checks the last argument)
// makes the call fail and leaves that output's bytes as they were.
void test_no_kernel_writes_into_read_only_memory() {
  struct Case {
    const char* op;
    std::vector<Value*> args;
    std::vector<Buf*> outputs;
  };
  Value none, no = vbool(false), yes = vbool(true), eps = vdouble(1e-5), one = vint(1), two = vint(2);
  Value half = vdouble(0.5), mode_sum = vint(0), minus1 = vint(-1);
  IntList k2({2, 2}), k3({2, 2, 2}), p2({0, 0}), p3({0, 0, 0}), d2({1, 1}), d3({1, 1, 1}), ns({4});
  Buf x4 = make(ScalarType::Float, {1, 1, 4, 4}), x5 = make(ScalarType::Float, {1, 1, 2, 4, 4});
  Buf x2 = make(ScalarType::Float, {2, 4}), xg = make(ScalarType::Float, {2, 4, 3});
  for (Buf* b : {&x4, &x5, &x2, &xg}) {
    for (int64_t i = 0; i < b->t().numel(); ++i) b->data<float>()[i] = static_cast<float>((i * 7) % 11) - 5.0f;
  }
  Buf rm = make(ScalarType::Float, {4}), rv = make(ScalarType::Float, {4});
  for (int i = 0; i < 4; ++i) rv.data<float>()[i] = 1.0f;
  Buf ids = make(ScalarType::Long, {3}), offs = make(ScalarType::Long, {2}), w = make(ScalarType::Float, {5, 4});
  ids.data<int64_t>()[0] = 1;
  ids.data<int64_t>()[1] = 4;
  ids.data<int64_t>()[2] = 2;
  offs.data<int64_t>()[1] = 2;
  Value n2 = vint(2), c4 = vint(4), hw3 = vint(3), g2 = vint(2);
  Buf p_out = make(ScalarType::Float, {1, 1, 2, 2}), p_idx = make(ScalarType::Long, {1, 1, 2, 2});
  Buf q_out = make(ScalarType::Float, {1, 1, 1, 2, 2}), q_idx = make(ScalarType::Long, {1, 1, 1, 2, 2});
  Buf ln_out = make(ScalarType::Float, {2, 4}), ln_mean = make(ScalarType::Float, {2, 1}), ln_rstd = make(ScalarType::Float, {2, 1});
  Buf gn_out = make(ScalarType::Float, {2, 4, 3}), gn_mean = make(ScalarType::Float, {2, 2}), gn_rstd = make(ScalarType::Float, {2, 2});
  Buf bn_out = make(ScalarType::Float, {2, 4, 3}), bn_m = make(ScalarType::Float, {0}), bn_v = make(ScalarType::Float, {0});
  Buf mx_v = make(ScalarType::Float, {2}), mx_i = make(ScalarType::Long, {2});
  Buf mn_v = make(ScalarType::Float, {2}), mn_i = make(ScalarType::Long, {2});
  Buf s_v = make(ScalarType::Float, {2, 4}), s_i = make(ScalarType::Long, {2, 4});
  Buf t_v = make(ScalarType::Float, {2, 2}), t_i = make(ScalarType::Long, {2, 2});
  Buf dr_out = make(ScalarType::Float, {2, 4}), dr_mask = make(ScalarType::Bool, {2, 4});
  Buf eb_out = make(ScalarType::Float, {2, 4}), eb_a = make(ScalarType::Long, {3}), eb_b = make(ScalarType::Long, {2}),
      eb_c = make(ScalarType::Long, {2});
  std::vector<Case> cases = {
      {"aten::max_pool2d_with_indices", {&x4.value, &k2.value, &k2.value, &p2.value, &d2.value, &no, &p_out.value, &p_idx.value},
       {&p_out, &p_idx}},
      {"aten::max_pool3d_with_indices", {&x5.value, &k3.value, &k3.value, &p3.value, &d3.value, &no, &q_out.value, &q_idx.value},
       {&q_out, &q_idx}},
      {"aten::native_layer_norm", {&x2.value, &ns.value, &none, &none, &eps, &ln_out.value, &ln_mean.value, &ln_rstd.value},
       {&ln_out, &ln_mean, &ln_rstd}},
      {"aten::native_group_norm",
       {&xg.value, &none, &none, &n2, &c4, &hw3, &g2, &eps, &gn_out.value, &gn_mean.value, &gn_rstd.value},
       {&gn_out, &gn_mean, &gn_rstd}},
      {"aten::_native_batch_norm_legit_no_training",
       {&xg.value, &none, &none, &rm.value, &rv.value, &half, &eps, &bn_out.value, &bn_m.value, &bn_v.value},
       {&bn_out, &bn_m, &bn_v}},
      {"aten::max.dim", {&x2.value, &one, &no, &mx_v.value, &mx_i.value}, {&mx_v, &mx_i}},
      {"aten::min.dim", {&x2.value, &one, &no, &mn_v.value, &mn_i.value}, {&mn_v, &mn_i}},
      {"aten::sort", {&x2.value, &minus1, &no, &s_v.value, &s_i.value}, {&s_v, &s_i}},
      {"aten::topk", {&x2.value, &two, &minus1, &yes, &yes, &t_v.value, &t_i.value}, {&t_v, &t_i}},
      {"aten::native_dropout", {&x2.value, &half, &no, &dr_out.value, &dr_mask.value}, {&dr_out, &dr_mask}},
      {"aten::_embedding_bag",
       {&w.value, &ids.value, &offs.value, &no, &mode_sum, &no, &none, &no, &minus1, &eb_out.value, &eb_a.value,
        &eb_b.value, &eb_c.value},
       {&eb_out, &eb_a, &eb_b, &eb_c}},
  };
  for (Case& c : cases) {
    CHECK_OK(check::call(ctx, c.op, c.args));
    for (size_t k = 0; k < c.outputs.size(); ++k) {
      Buf& out = *c.outputs[k];
      for (uint64_t& word : out.storage) word = ~word;  // not what the kernel would write
      const std::vector<uint64_t> before = out.storage;
      out.t().set_read_only(true);
      etrt::Error e = check::call(ctx, c.op, c.args);
      out.t().set_read_only(false);
      CHECK(e.code() == ErrorCode::InvalidArgument && e.message().find("read-only") != std::string::npos);
      if (e.ok() || e.message().find("read-only") == std::string::npos) {
        std::fprintf(stderr, "  %s, output %zu read-only: %s\n", c.op, k, e.to_string().c_str());
      }
      CHECK(out.storage == before);
    }
  }
}

// constant_pad_nd into a channels-last output (the exporter keeps a channels-last input's
// layout): the value around, the input's elements where they land, as into a contiguous one;
// an output that is neither layout is refused.
void test_constant_pad_channels_last() {
  auto nhwc = [](int64_t h, int64_t w, int64_t cc) { return Sizes{h * w * cc, 1, w * cc, cc}; };
  auto at = [](const Buf& b, const Sizes& i) { return get(b.t(), broadcast_offset(b.t(), i)); };
  const int64_t n = 2, c = 5, h = 6, w = 7;
  Buf x = make_strided(ScalarType::Float, {n, c, h, w}, nhwc(h, w, c));
  fill_random(x);
  IntList pads({0, 1, 2, -1});  // W: 0 before, 1 after; H: 2 before, 1 cropped after
  Value value = vdouble(-1.5);
  const int64_t oh = h + 1, ow = w + 1;
  auto want = [&](const Sizes& i) {
    const int64_t y = i[2] - 2, xx = i[3];
    return y >= 0 && y < h - 1 && xx < w ? at(x, {i[0], i[1], y, xx}) : -1.5;
  };
  Buf nhwc_out = make_strided(ScalarType::Float, {n, c, oh, ow}, nhwc(oh, ow, c));
  CHECK_OK(check::call(ctx, "aten::constant_pad_nd", {&x.value, &pads.value, &value, &nhwc_out.value}));
  expect_all("constant_pad_nd into channels-last", nhwc_out.t(), want, 0, 0);
  Buf plain = make(ScalarType::Float, {n, c, oh, ow});
  CHECK_OK(check::call(ctx, "aten::constant_pad_nd", {&x.value, &pads.value, &value, &plain.value}));
  expect_all("constant_pad_nd into contiguous", plain.t(), want, 0, 0);
  Buf odd = make_strided(ScalarType::Float, {n, c, oh, ow}, {c * oh * ow * 2, oh * ow * 2, ow * 2, 2});
  CHECK_FAILS(check::call(ctx, "aten::constant_pad_nd", {&x.value, &pads.value, &value, &odd.value}),
              etrt::ErrorCode::InvalidArgument);
  CHECK(ctx.error().message().find("contiguous or channels-last") != std::string::npos);
}

// index_put with every index None puts `values` over the whole of self, broadcast: values that
// do not broadcast to self's shape are refused (they were read past their end: a fuzzer find,
// tools/fuzz/regressions/program/found-index_put_values_not_broadcast).
void test_index_put_without_indices_checks_the_values_shape() {
  Buf self = make(ScalarType::Float, {5, 5}), out = make(ScalarType::Float, {5, 5});
  Buf row = make(ScalarType::Float, {5}), bad = make(ScalarType::Float, {2});
  fill_random(row);
  Value none, accumulate = vbool(false);
  Value* items[2] = {&none, &none};
  Value indices = Value::optional_tensor_list(Span<Value* const>(items, 2));
  CHECK_OK(check::call(ctx, "aten::index_put", {&self.value, &indices, &row.value, &accumulate, &out.value}));
  expect_all("index_put of a broadcast row", out.t(), [&](const Sizes& i) { return get(row.t(), i[1]); }, 0, 0);
  CHECK_FAILS(check::call(ctx, "aten::index_put", {&self.value, &indices, &bad.value, &accumulate, &out.value}),
              etrt::ErrorCode::InvalidArgument);
  CHECK(ctx.error().message().find("cannot be broadcast") != std::string::npos);
}

// index_select over every dimension of random shapes: inputs contiguous or in a random strided
// layout (the copies of whole runs then fall back to elements), negative and repeated indices, an empty index, at one thread and two (a big image: torch.roll's
// rows, copied a run at a time); an index out of bounds is refused by value.
void test_index_select_matches_reference() {
  const etrt::ParallelBackend* two = check::pool<2>();
  for (const etrt::ParallelBackend* backend : {static_cast<const etrt::ParallelBackend*>(nullptr), two}) {
    etrt::set_parallel_backend(backend);
    for (int trial = 0; trial < 60; ++trial) {
      const bool big = trial % 10 == 9;
      Sizes sizes = big ? Sizes{2, 60, 56, 24} : random_sizes(4, 7);
      Buf x = random_input(ScalarType::Float, sizes);
      const int64_t dim = rand_int(0, static_cast<int64_t>(sizes.size()) - 1), n = sizes[static_cast<size_t>(dim)];
      const int64_t count = trial % 15 == 7 ? 0 : rand_int(1, 2 * n);
      Buf index = make(trial % 2 == 0 ? ScalarType::Long : ScalarType::Int, {count});
      Sizes picked;
      for (int64_t i = 0; i < count; ++i) {
        const int64_t j = rand_int(-n, n - 1);
        set(index.t(), i, static_cast<double>(j));
        picked.push_back(j < 0 ? j + n : j);
      }
      Sizes out_sizes = sizes;
      out_sizes[static_cast<size_t>(dim)] = count;
      Buf out = make(ScalarType::Float, out_sizes);
      Value dv = vint(dim);
      CHECK_OK(check::call(ctx, "aten::index_select", {&x.value, &dv, &index.value, &out.value}));
      expect_all(("index_select trial " + std::to_string(trial)).c_str(), out.t(), [&](const Sizes& i) {
        Sizes at = i;
        at[static_cast<size_t>(dim)] = picked[static_cast<size_t>(i[static_cast<size_t>(dim)])];
        return get(x.t(), offset_of(x.t(), at));
      }, 0, 0);
    }
  }
  etrt::set_parallel_backend(nullptr);
  Buf x = make(ScalarType::Float, {3, 4}), out = make(ScalarType::Float, {3, 2}), index = make(ScalarType::Long, {2});
  set(index.t(), 0, 1);
  set(index.t(), 1, 4);
  Value dv = vint(1);
  CHECK_FAILS(check::call(ctx, "aten::index_select", {&x.value, &dv, &index.value, &out.value}),
              etrt::ErrorCode::InvalidArgument);
  CHECK(ctx.error().message().find("index 4 is out of bounds") != std::string::npos);
}

// index.Tensor with one index tensor (1-D or 2-D) on a random dimension, or two 1-D ones on
// adjacent dimensions, over random shapes contiguous or strided: the dims after the indexed ones
// are copied a run at a time where self holds them row-major, element by element otherwise.
void test_index_tensor_matches_reference() {
  for (int trial = 0; trial < 80; ++trial) {
    Sizes sizes = random_sizes(4, 6);
    Buf x = random_input(ScalarType::Float, sizes);
    const int nd = static_cast<int>(sizes.size());
    const bool pair = nd >= 2 && trial % 3 == 2;
    const int d = static_cast<int>(rand_int(0, nd - (pair ? 2 : 1)));
    const Sizes index_sizes = !pair && trial % 4 == 1 ? Sizes{rand_int(1, 3), rand_int(1, 4)} : Sizes{rand_int(1, 7)};
    const int64_t k = numel_of(index_sizes);
    Buf i0 = make(trial % 2 == 0 ? ScalarType::Long : ScalarType::Int, index_sizes);
    Buf i1 = make(ScalarType::Long, index_sizes);
    Sizes p0, p1;
    for (int64_t e = 0; e < k; ++e) {
      const int64_t a = rand_int(-sizes[d], sizes[d] - 1);
      set(i0.t(), e, static_cast<double>(a));
      p0.push_back(a < 0 ? a + sizes[d] : a);
      if (pair) {
        const int64_t b = rand_int(0, sizes[d + 1] - 1);
        set(i1.t(), e, static_cast<double>(b));
        p1.push_back(b);
      }
    }
    Sizes out_sizes(sizes.begin(), sizes.begin() + d);
    out_sizes.insert(out_sizes.end(), index_sizes.begin(), index_sizes.end());
    out_sizes.insert(out_sizes.end(), sizes.begin() + d + (pair ? 2 : 1), sizes.end());
    Buf out = make(ScalarType::Float, out_sizes);
    Value none;
    std::vector<Value*> items;
    for (int j = 0; j < d; ++j) items.push_back(&none);
    items.push_back(&i0.value);
    if (pair) items.push_back(&i1.value);
    Value indices = Value::optional_tensor_list(Span<Value* const>(items.data(), items.size()));
    CHECK_OK(check::call(ctx, "aten::index.Tensor", {&x.value, &indices, &out.value}));
    const size_t ni = index_sizes.size();
    expect_all(("index.Tensor trial " + std::to_string(trial)).c_str(), out.t(), [&](const Sizes& i) {
      int64_t flat = 0;
      for (size_t j = 0; j < ni; ++j) flat = flat * index_sizes[j] + i[static_cast<size_t>(d) + j];
      Sizes at(i.begin(), i.begin() + d);
      at.push_back(p0[static_cast<size_t>(flat)]);
      if (pair) at.push_back(p1[static_cast<size_t>(flat)]);
      at.insert(at.end(), i.begin() + d + static_cast<int64_t>(ni), i.end());
      return get(x.t(), offset_of(x.t(), at));
    }, 0, 0);
  }
}

int main() {
  test_registration();
  test_math_accuracy();
  test_logistic_accuracy();
  test_unary();
  test_binary();
  test_compare_where_fill();
  test_softmax();
  test_layer_norm();
  test_views();
  test_view_reshape();
  test_bad_arguments();
  test_unfold();
  test_batch_norm_refuses_short_channel_vectors();
  test_item_writes_a_scalar_never_over_a_tensor();
  test_attention_mask_pattern();
  test_channels_last_operands();
  test_cat_rows_of_runs();
  test_constant_pad_channels_last();
  test_index_put_without_indices_checks_the_values_shape();
  test_index_select_matches_reference();
  test_index_tensor_matches_reference();
  test_no_kernel_writes_into_read_only_memory();
  return check::finish();
}
