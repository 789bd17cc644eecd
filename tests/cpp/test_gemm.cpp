// SGEMM (every instruction set this CPU has, every path) and aten::addmm / mm / bmm through the
// registry, against a double-precision reference, over random sizes, strides and broadcasts.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "check.h"
#include "etrt/runtime/parallel.h"
#include "etrt/runtime/tensor.h"
#include "etrt/runtime/value.h"
// The kernel library hides its internals; this test links the library's objects of the SGEMM
// (etrt_kernels_core) to call it directly, with every instruction set. The registry tests below
// use the library itself.
#include "kernels/gemm.h"
#include "kernels/isa_dispatch.h"

using etrt::ScalarType;
using etrt::Tensor;
using etrt::Value;
using etrt::kernels::GemmParams;

namespace {

std::mt19937& rng() {
  static std::mt19937 g(1234);
  return g;
}
int64_t rand_int(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng()); }
float rand_float() { return std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng()); }

// A float tensor over its own buffer, with explicit strides (the buffer covers the largest offset).
struct Buf {
  std::vector<float> data;
  Tensor t;
  Value v;
  Buf(std::vector<int64_t> sizes, std::vector<int64_t> strides = {}) {
    if (strides.empty()) {
      strides.assign(sizes.size(), 1);
      for (int i = static_cast<int>(sizes.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * sizes[i + 1];
    }
    int64_t span = 1;
    for (size_t i = 0; i < sizes.size(); ++i) span += (sizes[i] - 1) * strides[i];
    data.resize(static_cast<size_t>(span < 1 ? 1 : span));
    for (auto& x : data) x = rand_float();
    auto r = Tensor::make(data.data(), ScalarType::Float,
                          etrt::Span<const int64_t>(sizes.data(), sizes.size()),
                          etrt::Span<const int64_t>(strides.data(), strides.size()));
    if (!r.ok()) std::fprintf(stderr, "Tensor::make: %s\n", r.error().to_string().c_str());
    t = r.get();
    v = Value(t);
  }
  float at(std::initializer_list<int64_t> idx) const {
    int64_t off = 0;
    int d = 0;
    for (int64_t i : idx) off += i * t.stride(d++);
    return data[static_cast<size_t>(off)];
  }
};

// Strides of a [rows, cols] operand laid out four ways: 0 row-major, 1 column-major (a transposed
// view), 2 padded rows with a column step of 2, 3 row broadcast (stride 0 between rows).
std::vector<int64_t> layout(int64_t rows, int64_t cols, int mode) {
  switch (mode) {
    case 0: return {cols, 1};
    case 1: return {1, rows};
    case 2: return {2 * cols + 3, 2};
    default: return {0, 1};
  }
}

double ref_dot(const float* a, int64_t ars, int64_t acs, const float* b, int64_t brs, int64_t bcs,
               int64_t i, int64_t j, int64_t k) {
  double s = 0.0;
  for (int64_t q = 0; q < k; ++q) s += static_cast<double>(a[i * ars + q * acs]) * b[q * brs + j * bcs];
  return s;
}

double tolerance(int64_t k) { return 1e-5 * (8.0 + static_cast<double>(k)); }

// Under AddressSanitizer the point is every load and store of the kernel, which runs whole; the
// double-precision reference of the large products (most of the test's time there) is checked
// on every third row and column and the last ones. The release build checks every element.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ETRT_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define ETRT_TEST_ASAN 1
#endif
#if defined(ETRT_TEST_ASAN)
constexpr int64_t kLargeProductStep = 3;
#else
constexpr int64_t kLargeProductStep = 1;
#endif

bool checked(int64_t i, int64_t last, int64_t step) { return i % step == 0 || i == last; }

// One product through sgemm_serial; returns the largest error. `weight`: B is a layer's weight
// (GemmParams::b_weight), which changes the path some shapes take.
double gemm_case(int64_t m, int64_t n, int64_t k, int amode, int bmode, float alpha, float beta,
                 bool weight = false) {
  auto as = layout(m, k, amode), bs = layout(k, n, bmode);
  Buf a({m, k}, as), b({k, n}, bs);
  std::vector<float> c(static_cast<size_t>(m * n)), c0;
  for (auto& x : c) x = rand_float();
  if (beta == 0.0f) {
    for (auto& x : c) x = std::nanf("");  // never read when beta == 0
  }
  c0 = c;
  GemmParams p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.a = a.data.data();
  p.a_rs = as[0];
  p.a_cs = as[1];
  p.b = b.data.data();
  p.b_rs = bs[0];
  p.b_cs = bs[1];
  p.c = c.data();
  p.c_rs = n;
  p.alpha = alpha;
  p.beta = beta;
  p.b_weight = weight;
  std::vector<float> scratch(etrt::kernels::sgemm_scratch_floats(p) + 16);
  float* aligned = scratch.data();
  while (reinterpret_cast<uintptr_t>(aligned) % 64 != 0) ++aligned;
  etrt::kernels::sgemm_serial(p, aligned);
  double worst = 0.0;
  const int64_t step = m * n * k > (int64_t{1} << 20) ? kLargeProductStep : 1;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      if (!checked(i, m - 1, step) || !checked(j, n - 1, step)) continue;
      double ref = alpha * ref_dot(p.a, p.a_rs, p.a_cs, p.b, p.b_rs, p.b_cs, i, j, k);
      if (beta != 0.0f) ref += beta * static_cast<double>(c0[static_cast<size_t>(i * n + j)]);
      const double err = std::fabs(ref - c[static_cast<size_t>(i * n + j)]);
      worst = std::isnan(err) ? 1e30 : (err > worst ? err : worst);
    }
  }
  return worst;
}

void test_sgemm_matches_reference_on_every_isa() {
  const check::KeepIsaCap keep;
  const char* isas[] = {"avx512", "avx2", "sse2"};
  for (const char* isa : isas) {
    if (!etrt::kernels::sgemm_force_isa(isa)) {
      std::printf("sgemm: %s not supported by this CPU, skipped\n", isa);
      continue;
    }
    CHECK_EQ(std::string(etrt::kernels::sgemm_isa()), std::string(isa));
    // Shapes that reach every path: GEMV (narrow, and streamed over one or more column blocks),
    // dot tiles, direct tiles (B in place or copied), packed with K, M and N blocking, edges of
    // every tile size, and K == 0.
    const int64_t shapes[][3] = {{1, 256, 784}, {32, 256, 784}, {32, 10, 256}, {16, 64, 64},
                                 {16, 784, 9},  {1, 1, 1},      {7, 5, 3},     {130, 70, 300},
                                 {200, 33, 17}, {3, 2100, 5},   {9, 40, 0},    {1, 37, 129},
                                 {100, 400, 300}, {20, 2100, 50}, {37, 203, 300}, {1, 1000, 1024},
                                 {1, 2100, 33}};
    for (const auto& s : shapes) {
      for (int amode = 0; amode < 4; ++amode) {
        for (int bmode = 0; bmode < 4; ++bmode) {
          const double err = gemm_case(s[0], s[1], s[2], amode, bmode, 1.0f, 0.0f);
          check::record(err <= tolerance(s[2]), __FILE__, __LINE__,
                        std::string(isa) + " m=" + std::to_string(s[0]) + " n=" + std::to_string(s[1]) +
                            " k=" + std::to_string(s[2]) + " modes " + std::to_string(amode) +
                            std::to_string(bmode) + " err " + std::to_string(err));
        }
      }
    }
    // Weights read in place while A stays in cache: a transformer's rows against wide, tall and
    // vocabulary-sized weights, with edges of every tile.
    const int64_t weight_shapes[][3] = {{128, 2000, 256}, {128, 256, 1024}, {77, 1030, 301}, {40, 70, 3000},
                                        {1, 2071, 35}};
    for (const auto& s : weight_shapes) {
      for (float beta : {0.0f, 0.5f}) {
        const double err = gemm_case(s[0], s[1], s[2], 0, 0, 1.0f, beta, true);
        check::record(err <= tolerance(s[2]), __FILE__, __LINE__,
                      std::string(isa) + " weight m=" + std::to_string(s[0]) + " n=" + std::to_string(s[1]) +
                          " k=" + std::to_string(s[2]) + " err " + std::to_string(err));
      }
    }
    for (int trial = 0; trial < 150; ++trial) {
      const int64_t m = rand_int(1, trial % 10 == 0 ? 160 : 40);
      const int64_t n = rand_int(1, trial % 7 == 0 ? 300 : 70);
      const int64_t k = rand_int(1, trial % 5 == 0 ? 600 : 100);
      const int amode = static_cast<int>(rand_int(0, 3)), bmode = static_cast<int>(rand_int(0, 3));
      const float alpha = trial % 3 == 0 ? 1.0f : rand_float();
      const float beta = trial % 4 == 0 ? 0.0f : rand_float();
      const double err = gemm_case(m, n, k, amode, bmode, alpha, beta);
      check::record(err <= tolerance(k), __FILE__, __LINE__,
                    std::string(isa) + " random m=" + std::to_string(m) + " n=" + std::to_string(n) +
                        " k=" + std::to_string(k) + " modes " + std::to_string(amode) +
                        std::to_string(bmode) + " err " + std::to_string(err));
    }
  }
  CHECK(!etrt::kernels::sgemm_force_isa("no-such-isa"));
}

// ETRT_MAX_ISA (the level this program was started under; the gate runs it under each) caps
// the kernels; set_max_isa replaces it, and a cap above the CPU's level leaves the CPU's.
void test_isa_cap_follows_environment_and_api() {
  const check::KeepIsaCap keep;
  const int cpu = static_cast<int>(etrt::cpu_isa());
  const char* env = std::getenv("ETRT_MAX_ISA");
  int cap = 2;
  if (env != nullptr && *env != '\0') cap = std::string(env) == "sse2" ? 0 : std::string(env) == "avx2" ? 1 : 2;
  const int expected = cap < cpu ? cap : cpu;
  std::printf("cpu %s, ETRT_MAX_ISA=%s, kernels dispatch to %s\n", etrt::to_string(etrt::cpu_isa()),
              env == nullptr ? "(unset)" : env, etrt::to_string(etrt::kernel_isa()));
  CHECK_EQ(static_cast<int>(etrt::kernel_isa()), expected);
  CHECK_EQ(etrt::kernels::isa_level(), expected);
  CHECK_EQ(std::string(etrt::kernels::sgemm_isa()), std::string(etrt::to_string(etrt::kernel_isa())));

  CHECK(etrt::set_max_isa("sse2").ok());
  CHECK(etrt::kernel_isa() == etrt::CpuIsa::Sse2);
  CHECK_EQ(std::string(etrt::kernels::sgemm_isa()), std::string("sse2"));
  CHECK(etrt::set_max_isa("avx512").ok());
  CHECK(etrt::kernel_isa() == etrt::cpu_isa());
  CHECK(etrt::max_isa().ok() && etrt::max_isa().get() == etrt::CpuIsa::Avx512);

  const etrt::Error bad = etrt::set_max_isa("avx3");
  CHECK(bad.code() == etrt::ErrorCode::InvalidArgument);
  CHECK_EQ(bad.message(), std::string("'avx3' is not an instruction set: expected sse2, avx2 or avx512"));
  CHECK(etrt::kernel_isa() == etrt::cpu_isa());  // a rejected name leaves the cap as it was
}

// out = beta * broadcast(self) + alpha * a @ b
void test_addmm_broadcasts_bias_and_handles_strided_operands() {
  check::TestContext ctx;
  for (int trial = 0; trial < 60; ++trial) {
    const int64_t m = rand_int(1, 40), n = rand_int(1, 50), k = rand_int(1, 300);
    const int bias_kind = trial % 5;  // [n], [1, n], [m, n], [m, 1], scalar
    std::vector<int64_t> bias_sizes;
    switch (bias_kind) {
      case 0: bias_sizes = {n}; break;
      case 1: bias_sizes = {1, n}; break;
      case 2: bias_sizes = {m, n}; break;
      case 3: bias_sizes = {m, 1}; break;
      default: bias_sizes = {}; break;
    }
    Buf self(bias_sizes);
    Buf a({m, k}, layout(m, k, trial % 3));
    Buf b({k, n}, layout(k, n, (trial / 3) % 3));  // mode 1: a linear layer's permuted weight
    Buf out({m, n});
    const double beta = trial % 7 == 0 ? 0.0 : (trial % 2 == 0 ? 1.0 : 0.5);
    const double alpha = trial % 2 == 0 ? 1.0 : -2.0;
    if (beta == 0.0) {
      for (auto& x : self.data) x = std::nanf("");  // ATen ignores self when beta == 0
    }
    Value vb(beta), va(alpha);
    CHECK_OK(check::call(ctx, "aten::addmm", {&self.v, &a.v, &b.v, &vb, &va, &out.v}));
    double worst = 0.0;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double s = 0.0;
        for (int64_t q = 0; q < k; ++q) s += static_cast<double>(a.at({i, q})) * b.at({q, j});
        double bias = 0.0;
        switch (bias_kind) {
          case 0: bias = self.at({j}); break;
          case 1: bias = self.at({0, j}); break;
          case 2: bias = self.at({i, j}); break;
          case 3: bias = self.at({i, 0}); break;
          default: bias = self.data[0]; break;
        }
        const double ref = alpha * s + (beta == 0.0 ? 0.0 : beta * bias);
        const double err = std::fabs(ref - out.data[static_cast<size_t>(i * n + j)]);
        worst = std::isnan(err) ? 1e30 : (err > worst ? err : worst);
      }
    }
    check::record(worst <= tolerance(k), __FILE__, __LINE__,
                  "addmm trial " + std::to_string(trial) + " err " + std::to_string(worst));
  }
}

void test_mm_and_bmm_match_reference_with_views() {
  check::TestContext ctx;
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t m = rand_int(1, 50), n = rand_int(1, 50), k = rand_int(1, 200);
    Buf a({m, k}, layout(m, k, trial % 4)), b({k, n}, layout(k, n, (trial / 4) % 4)), out({m, n});
    CHECK_OK(check::call(ctx, "aten::mm", {&a.v, &b.v, &out.v}));
    double worst = 0.0;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0.0;
        for (int64_t q = 0; q < k; ++q) s += static_cast<double>(a.at({i, q})) * b.at({q, j});
        worst = std::fmax(worst, std::fabs(s - out.data[static_cast<size_t>(i * n + j)]));
      }
    check::record(worst <= tolerance(k), __FILE__, __LINE__, "mm err " + std::to_string(worst));
  }
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t batch = rand_int(1, 8), m = rand_int(1, 20), n = rand_int(1, 20), k = rand_int(1, 70);
    // self: a permuted view ([batch, k, m] memory read as [batch, m, k]); mat2: contiguous,
    // transposed, or expanded along the batch (stride 0) either way.
    Buf a({batch, m, k}, {m * k, 1, m});
    std::vector<int64_t> bstr;
    switch (trial % 4) {
      case 0: bstr = {0, n, 1}; break;
      case 1: bstr = {k * n, n, 1}; break;
      case 2: bstr = {k * n, 1, k}; break;
      default: bstr = {0, 1, k}; break;
    }
    Buf b({batch, k, n}, bstr), out({batch, m, n});
    CHECK_OK(check::call(ctx, "aten::bmm", {&a.v, &b.v, &out.v}));
    double worst = 0.0;
    for (int64_t z = 0; z < batch; ++z)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double s = 0.0;
          for (int64_t q = 0; q < k; ++q) s += static_cast<double>(a.at({z, i, q})) * b.at({z, q, j});
          worst = std::fmax(worst, std::fabs(s - out.data[static_cast<size_t>((z * m + i) * n + j)]));
        }
    check::record(worst <= tolerance(k), __FILE__, __LINE__, "bmm err " + std::to_string(worst));
  }
}

void test_matmul_rejects_bad_arguments() {
  check::TestContext ctx;
  Buf a({4, 5}), b({6, 3}), b_ok({5, 3}), out({4, 3}), bad_out({4, 4}), bias({3}), bad_bias({2});
  Value one(1.0);
  CHECK_FAILS(check::call(ctx, "aten::mm", {&a.v, &b.v, &out.v}), etrt::ErrorCode::InvalidArgument);
  CHECK(ctx.error().message().find("aten::mm") != std::string::npos);
  CHECK_FAILS(check::call(ctx, "aten::mm", {&a.v, &b_ok.v, &bad_out.v}), etrt::ErrorCode::InvalidArgument);
  CHECK_FAILS(check::call(ctx, "aten::mm", {&a.v, &b_ok.v}), etrt::ErrorCode::InvalidArgument);
  CHECK_FAILS(check::call(ctx, "aten::addmm", {&bad_bias.v, &a.v, &b_ok.v, &one, &one, &out.v}),
              etrt::ErrorCode::InvalidArgument);
  CHECK_FAILS(check::call(ctx, "aten::addmm", {&bias.v, &a.v, &b_ok.v, &one, &bias.v, &out.v}),
              etrt::ErrorCode::InvalidArgument);
  Buf a3({2, 4, 5}), b3({3, 5, 3}), out3({2, 4, 3});
  CHECK_FAILS(check::call(ctx, "aten::bmm", {&a3.v, &b3.v, &out3.v}), etrt::ErrorCode::InvalidArgument);
  CHECK_FAILS(check::call(ctx, "aten::bmm", {&a.v, &b_ok.v, &out.v}), etrt::ErrorCode::InvalidArgument);
  // A shape that packs (row-major B, big M) needs scratch; without it the call fails cleanly.
  Buf big_a({200, 300}), big_b({300, 400}, {1, 300}), big_out({200, 400});
  ctx.set_fail_alloc(true);
  CHECK_FAILS(check::call(ctx, "aten::mm", {&big_a.v, &big_b.v, &big_out.v}), etrt::ErrorCode::OutOfMemory);
  ctx.set_fail_alloc(false);
  CHECK_OK(check::call(ctx, "aten::mm", {&big_a.v, &big_b.v, &big_out.v}));
}

void test_split_work_matches_reference() {
  const etrt::ParallelBackend* backend = check::pool<3>();
  etrt::set_parallel_backend(backend);
  CHECK_EQ(etrt::parallel_num_threads(), 3);
  check::TestContext ctx;
  // Split by columns (packed and dot paths), by rows, and bmm split by batch or inside each product.
  const int64_t shapes[][3] = {{64, 400, 300}, {100, 50, 300}, {40, 700, 200}};
  for (const auto& sh : shapes) {
    for (int bmode = 0; bmode < 2; ++bmode) {
      const int64_t m = sh[0], n = sh[1], k = sh[2];
      Buf a({m, k}), b({k, n}, layout(k, n, bmode)), out({m, n});
      CHECK_OK(check::call(ctx, "aten::mm", {&a.v, &b.v, &out.v}));
      double worst = 0.0;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double s = 0.0;
          for (int64_t q = 0; q < k; ++q) s += static_cast<double>(a.at({i, q})) * b.at({q, j});
          worst = std::fmax(worst, std::fabs(s - out.data[static_cast<size_t>(i * n + j)]));
        }
      check::record(worst <= tolerance(k), __FILE__, __LINE__,
                    "split mm m=" + std::to_string(m) + " n=" + std::to_string(n) + " err " + std::to_string(worst));
    }
  }
  for (int64_t batch : {int64_t{2}, int64_t{7}}) {
    const int64_t m = 70, n = 90, k = 80;
    Buf a({batch, m, k}), b({batch, k, n}, {k * n, 1, k}), out({batch, m, n});
    CHECK_OK(check::call(ctx, "aten::bmm", {&a.v, &b.v, &out.v}));
    double worst = 0.0;
    for (int64_t z = 0; z < batch; ++z)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double s = 0.0;
          for (int64_t q = 0; q < k; ++q) s += static_cast<double>(a.at({z, i, q})) * b.at({z, q, j});
          worst = std::fmax(worst, std::fabs(s - out.data[static_cast<size_t>((z * m + i) * n + j)]));
        }
    check::record(worst <= tolerance(k), __FILE__, __LINE__,
                  "split bmm batch=" + std::to_string(batch) + " err " + std::to_string(worst));
  }
  CHECK(check::chunks_run() >= 6);  // the work really was split
  etrt::set_parallel_backend(nullptr);
  CHECK_EQ(etrt::parallel_num_threads(), 1);
}

// A product split into column parts narrow enough that each part alone would take another kernel
// path (the whole is packed, a 64-column part is not): the parts still take the whole's path, so
// the result is bit for bit the one-thread result.
void test_split_work_sums_like_one_thread() {
  const int64_t m = 128, n = 768, k = 512;
  Buf a({m, k}), b({k, n}), one({m, n}), split({m, n});
  check::TestContext ctx;
  CHECK_OK(check::call(ctx, "aten::mm", {&a.v, &b.v, &one.v}));
  const etrt::ParallelBackend* backend = check::pool<3>();
  etrt::set_parallel_backend(backend);
  const int64_t before = check::chunks_run();
  CHECK_OK(check::call(ctx, "aten::mm", {&a.v, &b.v, &split.v}));
  CHECK(check::chunks_run() - before >= 12);  // 3 threads, 4 parts each
  etrt::set_parallel_backend(nullptr);
  check::record(one.data == split.data, __FILE__, __LINE__, "split mm differs from the one-thread mm");
}

// At 16 threads a classifier's product (one row, 1000 columns: fewer than 64 columns a thread
// and fewer than 8 rows) is not left whole: its 3 blocks of B's rows times 6 column parts; the
// same bits as one thread.
void test_few_columns_a_thread_still_split() {
  const int64_t m = 1, n = 1000, k = 576;
  Buf a({m, k}), b({k, n}), one({m, n}), split({m, n});
  check::TestContext ctx;
  CHECK_OK(check::call(ctx, "aten::mm", {&a.v, &b.v, &one.v}));
  const etrt::ParallelBackend* backend = check::pool<16>();
  etrt::set_parallel_backend(backend);
  const int64_t before = check::chunks_run();
  CHECK_OK(check::call(ctx, "aten::mm", {&a.v, &b.v, &split.v}));
  CHECK(check::chunks_run() - before >= 16);  // 3 row blocks x 6 parts of 192 columns
  etrt::set_parallel_backend(nullptr);
  check::record(one.data == split.data, __FILE__, __LINE__, "a 16-thread split of 1 x 1000 differs from one thread");
}

// A GEMV (one row of A, B read in place) at several threads is split by blocks of B's rows,
// each block's sums added up afterwards in the blocks' order with alpha and beta as the kernels
// apply them: at every cap the bits of one thread, through addmm with a bias (beta 0.5, alpha
// -2) and without, a last block shorter than the others, and columns enough to add in parts.
void test_gemv_split_by_row_blocks_sums_like_one_thread() {
  const check::KeepIsaCap keep;
  struct Shape {
    int64_t n, k, threads, parts;
  };
  for (const Shape& sh : {Shape{1000, 1024, 2, 4}, Shape{1024, 576, 2, 3}, Shape{4100, 300, 3, 4},
                          Shape{768, 768, 16, 18}}) {
    Buf a({1, sh.k}), b({sh.k, sh.n}), bias({sh.n}), one({1, sh.n}), split({1, sh.n});
    b.t.set_read_only(true);
    b.v = Value(b.t);
    const etrt::ParallelBackend* backend = sh.threads == 2 ? check::pool<2>() : sh.threads == 3 ? check::pool<3>()
                                                                                                  : check::pool<16>();
    for (const char* isa : {"avx512", "avx2", "sse2"}) {
      if (!etrt::kernels::sgemm_force_isa(isa)) continue;
      for (const bool with_bias : {false, true}) {
        const std::string label = std::to_string(sh.k) + " x " + std::to_string(sh.n) + " at " +
                                  std::to_string(sh.threads) + " threads, " + isa + (with_bias ? ", addmm" : ", mm");
        Value beta(0.5), alpha(-2.0);
        auto product = [&](Buf& out) {
          check::TestContext ctx;
          return with_bias ? check::call(ctx, "aten::addmm", {&bias.v, &a.v, &b.v, &beta, &alpha, &out.v})
                           : check::call(ctx, "aten::mm", {&a.v, &b.v, &out.v});
        };
        CHECK_OK(product(one));
        etrt::set_parallel_backend(backend);
        const int64_t before = check::chunks_run();
        std::fill(split.data.begin(), split.data.end(), 0.0f);
        CHECK_OK(product(split));
        const int64_t chunks = check::chunks_run() - before;
        etrt::set_parallel_backend(nullptr);
        check::record(one.data == split.data, __FILE__, __LINE__, "split GEMV differs from one thread, " + label);
        check::record(chunks >= sh.parts, __FILE__, __LINE__, label + ": " + std::to_string(chunks) + " chunks");
      }
    }
  }
  // No room for the blocks' sums (a method's budget spent): split by columns as before, which
  // needs no scratch, rather than failing; the same bits.
  Buf a({1, 1024}), b({1024, 1000}), one({1, 1000}), split({1, 1000});
  check::TestContext ctx;
  CHECK_OK(check::call(ctx, "aten::mm", {&a.v, &b.v, &one.v}));
  etrt::set_parallel_backend(check::pool<2>());
  ctx.set_fail_alloc(true);
  CHECK_OK(check::call(ctx, "aten::mm", {&a.v, &b.v, &split.v}));
  ctx.set_fail_alloc(false);
  etrt::set_parallel_backend(nullptr);
  check::record(one.data == split.data, __FILE__, __LINE__, "the GEMV without scratch differs from one thread");
}

// At 16 threads ViT-B/16's 197 x 768 products make 12 column parts: rows are split too, into 4
// runs of whole panels of A (48 parts; A packed once for all of them where the path packs it).
// BERT's 128 x 384 ones (the direct path, B read in place) made 16 row parts of 8 rows, each
// reading all of B: now 6 column parts times 4 runs of rows. At every cap the same bits as one
// thread, with the weight kept and per call.
void test_columns_and_rows_at_once() {
  const check::KeepIsaCap keep;
  struct Shape {
    int64_t m, n, k, parts;  // at least (packing A adds its own; rows follow the panel height)
  };
  for (const Shape& sh : {Shape{197, 768, 700, 12 * 4}, Shape{128, 384, 384, 6 * 4}}) {
    Buf a({sh.m, sh.k}), b({sh.k, sh.n}), one({sh.m, sh.n}), split({sh.m, sh.n});
    b.t.set_read_only(true);  // a weight: kept panels on the packed path
    b.v = Value(b.t);
    const etrt::ParallelBackend* backend = check::pool<16>();
    for (const char* isa : {"avx512", "avx2", "sse2"}) {
      if (!etrt::kernels::sgemm_force_isa(isa)) continue;
      const std::string label = std::to_string(sh.m) + " x " + std::to_string(sh.n) + ", " + isa;
      check::TestContext ctx;
      CHECK_OK(check::call(ctx, "aten::mm", {&a.v, &b.v, &one.v}));
      etrt::set_parallel_backend(backend);
      check::CachingContext kept;
      for (int call = 0; call < 2; ++call) {
        const int64_t before = check::chunks_run();
        std::fill(split.data.begin(), split.data.end(), 0.0f);
        CHECK_OK(check::call(kept, "aten::mm", {&a.v, &b.v, &split.v}));
        check::record(one.data == split.data, __FILE__, __LINE__, "16 threads differ from one thread, " + label);
        check::record(check::chunks_run() - before >= sh.parts, __FILE__, __LINE__,
                      label + ": " + std::to_string(check::chunks_run() - before) + " chunks");
      }
      etrt::set_parallel_backend(nullptr);
    }
  }
}

// A constant B on the packed path (a transformer's weight: 200 x 700 @ 700 x 300, past the
// direct path's bounds) is packed whole into the instruction's cache at the first call, read
// from there by the next, and packed again when the instruction set changes (its panel width
// does): every call equals the product packed per call (a context that keeps nothing), bit for
// bit, in one piece and split into column parts (three threads), with A's rows contiguous and
// with A transposed (AVX2 and AVX-512 read A in place beside kept panels).
void test_kept_weight_panels_equal_per_call_packing() {
  const check::KeepIsaCap keep;
  const int64_t m = 200, k = 700, n = 300;
  Buf a({m, k}), b({k, n}), want({m, n}), got({m, n});
  bool a_transposed = false;
  auto run = [&](check::TestContext& ctx, Buf& out) {
    GemmParams p;  // what aten::addmm and aten::mm pass for a constant weight
    p.m = m;
    p.n = n;
    p.k = k;
    p.a = a.data.data();
    p.a_rs = a_transposed ? 1 : k;
    p.a_cs = a_transposed ? m : 1;
    p.b = b.data.data();
    p.b_rs = n;
    p.b_cs = 1;
    p.c = out.data.data();
    p.c_rs = n;
    p.b_weight = p.keep_b = true;
    ctx.reset();
    CHECK(etrt::kernels::sgemm(ctx, p));
  };
  const etrt::ParallelBackend* split = check::pool<3>();
  for (const bool transposed : {false, true}) {
    a_transposed = transposed;
    for (const etrt::ParallelBackend* backend : {static_cast<const etrt::ParallelBackend*>(nullptr), split}) {
      etrt::set_parallel_backend(backend);
      const std::string label = std::string(backend != nullptr ? "split" : "whole") + (transposed ? ", A^T" : "");
      check::kept_equals_per_call(label, etrt::kernels::sgemm_force_isa, want, got, run);
    }
  }
  etrt::set_parallel_backend(nullptr);
}

// A constant weight whose rows lie 4 KiB apart (1024 or 2048 outputs) is read from its kept
// panels from 8 rows of A on at every cap (2 below AVX-512): read in place, its rows share a
// few cache sets (up to 2.2x the time). A weight of 1040 outputs keeps the direct path at AVX2.
// Either way the bits of the same product with B not a weight (read in place, or packed per
// call past the direct path's bounds).
void test_weights_with_4kib_rows_take_kept_panels() {
  const check::KeepIsaCap keep;
  const int64_t k = 256;
  for (int64_t n : {int64_t{1024}, int64_t{2048}, int64_t{1040}}) {
    for (int64_t m : {int64_t{2}, int64_t{8}, int64_t{32}, int64_t{128}}) {
      Buf a({m, k}), b({k, n}), plain({m, n}), weight({m, n});
      for (const char* isa : {"avx512", "avx2", "sse2"}) {
        if (!etrt::kernels::sgemm_force_isa(isa)) continue;
        const std::string label = std::to_string(m) + " x " + std::to_string(k) + " x " + std::to_string(n) + ", " + isa;
        b.t.set_read_only(false);
        b.v = Value(b.t);
        check::TestContext ctx;
        CHECK_OK(check::call(ctx, "aten::mm", {&a.v, &b.v, &plain.v}));
        b.t.set_read_only(true);
        b.v = Value(b.t);
        check::CachingContext kept;
        CHECK_OK(check::call(kept, "aten::mm", {&a.v, &b.v, &weight.v}));
        check::record(plain.data == weight.data, __FILE__, __LINE__, label + ": the weight's product differs");
        const bool avx512 = std::string(isa) == "avx512";
        const bool aliased = n % 1024 == 0;
        const bool want_kept = m * k > 128 * 1024 || (aliased && m >= (avx512 ? 8 : 2)) || (avx512 && m >= 8 && m <= 32);
        check::record((kept.asked > 0) == want_kept, __FILE__, __LINE__,
                      label + (want_kept ? ": panels not kept" : ": panels kept"));
      }
    }
  }
}

// Deep products (a classifier over 16384 features, a decoder's 11008-wide down projection) sum
// their K products in blocks: one chain of 20000 rounded about 13x more than blocks do (the
// error grows with the square root of the chain). Both the GEMV rows and the direct tiles, at
// every cap; a row is the same bits either way.
void test_deep_products_round_like_short_ones() {
  const check::KeepIsaCap keep;
  const int64_t k = 20000, n = 200;
  Buf a({4, k}), b({k, n});
  for (const char* isa : {"avx512", "avx2", "sse2"}) {
    if (!etrt::kernels::sgemm_force_isa(isa)) continue;
    std::vector<float> rows(static_cast<size_t>(4 * n)), row(static_cast<size_t>(n));
    for (int64_t m : {int64_t{4}, int64_t{1}}) {
      GemmParams p;
      p.m = m;
      p.n = n;
      p.k = k;
      p.a = a.data.data();
      p.a_rs = k;
      p.a_cs = 1;
      p.b = b.data.data();
      p.b_rs = n;
      p.b_cs = 1;
      p.c = m == 1 ? row.data() : rows.data();
      p.c_rs = n;
      p.b_weight = true;
      std::vector<float> scratch(etrt::kernels::sgemm_scratch_floats(p) + 16);
      float* aligned = scratch.data();
      while (reinterpret_cast<uintptr_t>(aligned) % 64 != 0) ++aligned;
      etrt::kernels::sgemm_serial(p, aligned);
      double worst = 0.0, scale = 0.0;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          const double ref = ref_dot(p.a, k, 1, p.b, n, 1, i, j, k);
          worst = std::fmax(worst, std::fabs(ref - p.c[i * n + j]));
          scale = std::fmax(scale, std::fabs(ref));
        }
      check::record(worst <= 1.5e-6 * scale, __FILE__, __LINE__,
                    std::string(isa) + " m=" + std::to_string(m) + " k=20000: error " + std::to_string(worst) +
                        " of " + std::to_string(scale));
    }
    check::record(std::equal(row.begin(), row.end(), rows.begin()), __FILE__, __LINE__,
                  std::string(isa) + ": the GEMV row differs from the direct tile's first row");
  }
}

}  // namespace

int main() {
  test_isa_cap_follows_environment_and_api();
  test_sgemm_matches_reference_on_every_isa();
  test_addmm_broadcasts_bias_and_handles_strided_operands();
  test_mm_and_bmm_match_reference_with_views();
  test_matmul_rejects_bad_arguments();
  test_split_work_matches_reference();
  test_split_work_sums_like_one_thread();
  test_deep_products_round_like_short_ones();
  test_kept_weight_panels_equal_per_call_packing();
  test_weights_with_4kib_rows_take_kept_panels();
  test_few_columns_a_thread_still_split();
  test_gemv_split_by_row_blocks_sums_like_one_thread();
  test_columns_and_rows_at_once();
  return check::finish();
}
