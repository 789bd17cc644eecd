// Single-precision matrix multiply for the CPU kernels (private to libetrt_kernels_optimized).
//
// C = alpha * A @ B + beta * C over strided A and B (any strides, including 0 for expanded
// operands) and a row-major C. beta == 0 never reads C, so C may hold garbage (ATen semantics).
// The instruction set (AVX-512, AVX2+FMA or baseline SSE2) is chosen once per process.
#pragma once

#include <cstddef>
#include <cstdint>

#include "etrt/runtime/kernel.h"

namespace etrt {
namespace kernels {

// Rows of a weight this many bytes apart (or a multiple) fall into a few cache sets and evict
// each other when read in place down a column block: the SGEMM and the channels-last
// convolution read such weights from packed, contiguous blocks instead.
constexpr int64_t kAliasingRowBytes = 4096;

struct GemmParams {
  int64_t m = 0, n = 0, k = 0;
  const float* a = nullptr;  // element (i, p) at a[i * a_rs + p * a_cs]
  int64_t a_rs = 0, a_cs = 0;
  const float* b = nullptr;  // element (p, j) at b[p * b_rs + j * b_cs]
  int64_t b_rs = 0, b_cs = 0;
  float* c = nullptr;  // element (i, j) at c[i * c_rs + j]
  int64_t c_rs = 0;
  float alpha = 1.0f;
  float beta = 0.0f;
  // B is a constant (a layer's weight): read it in place once, with A kept in cache, rather than
  // copying it into panels on every call.
  bool b_weight = false;
  // B is a constant that stays this instruction's B from call to call (aten::addmm, aten::mm):
  // sgemm packs its panels once into the instruction's cache instead of on every call.
  bool keep_b = false;
  // Set by sgemm: B's panels packed whole (NR columns each, K rows), and this part's first
  // column of B in them; nullptr: packed per call.
  const float* kept_b = nullptr;
  int64_t kept_col = 0;
  // Set by sgemm for the column parts of a packed product: A packed whole once, shared by the
  // parts (each packed all of A before); nullptr: each part packs its own.
  const float* packed_a = nullptr;
  // A part of rows as well (columns and rows split at once): A's rows in packed_a are those of
  // the whole product (packed_a_m of them, 0: this one's own) and this part's start at row
  // packed_a_row of them (a multiple of the panel height).
  int64_t packed_a_m = 0, packed_a_row = 0;
  // The shape the kernel path is chosen for, when this is one part of a bigger product (0: this
  // one's own): every part then sums in the same order as the whole would, so results do not
  // depend on the thread count.
  int64_t path_m = 0, path_n = 0;
};

// Floats of scratch one serial call needs (0 when it packs nothing).
size_t sgemm_scratch_floats(const GemmParams& p);
// One thread; `scratch` holds sgemm_scratch_floats(p) floats, 64-byte aligned.
void sgemm_serial(const GemmParams& p, float* scratch);
// Splits the product across threads when it is big enough; scratch comes from ctx.
// False (nothing computed) when scratch memory runs out.
bool sgemm(KernelContext& ctx, const GemmParams& p);

// dst[i * cols + j] = src[i * rs + j * cs]; blocked so that a transposed source copies fast.
void copy_to_row_major(const float* src, int64_t rows, int64_t cols, int64_t rs, int64_t cs, float* dst);

// Name of the instruction set in use ("avx512", "avx2", "sse2"; "generic" off x86); for
// benchmarks and tests.
const char* sgemm_isa();
// Forces an instruction set for tests: "avx512", "avx2", "sse2" ("generic" off x86), as
// etrt::set_max_isa (every kernel follows); false, changing nothing, if the CPU lacks it.
bool sgemm_force_isa(const char* name);

}  // namespace kernels
}  // namespace etrt
