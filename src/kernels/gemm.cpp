#include "gemm.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>

#include "etrt/runtime/parallel.h"
#include "parts.h"
#include "util.h"
#include "vec_math.h"

namespace etrt {
namespace kernels {

#define ETRT_ISA_FILE "gemm_isa.inc"
#include "isa_clones.inc"
#undef ETRT_ISA_FILE

namespace {

struct Isa {
  const char* name;
  size_t (*scratch_floats)(const GemmParams&);
  void (*run)(const GemmParams&, float*);
  bool (*packs_b)(const GemmParams&);
  size_t (*kept_b_floats)(const GemmParams&);
  void (*pack_kept_b)(const GemmParams&, float*);
  size_t (*whole_a_floats)(const GemmParams&);
  void (*pack_whole_a)(const GemmParams&, float*, int64_t part, int64_t parts);
  int64_t (*panel_rows)();
  bool (*kept_in_place)(const GemmParams&);  // the kept panels' path reads A where it is
  bool (*direct_gemv)(const GemmParams&);    // the one-row direct kernel takes the product
};

#define ETRT_GEMM_ISA(name, ns)                                                                           \
  {                                                                                                      \
    name, ns::scratch_floats, ns::run, ns::packs_b, ns::kept_b_floats, ns::pack_kept_b, ns::whole_a_floats, \
        ns::pack_whole_a, ns::panel_rows, ns::kept_in_place, ns::direct_gemv                             \
  }

#if ETRT_ISA_X86
const Isa kAvx512 = ETRT_GEMM_ISA("avx512", isa_avx512);
const Isa kAvx2 = ETRT_GEMM_ISA("avx2", isa_avx2);
const Isa kSse2 = ETRT_GEMM_ISA("sse2", isa_sse2);

// The level etrt::kernel_isa() names (the CPU's best under ETRT_MAX_ISA / set_max_isa).
const Isa& isa() {
  switch (isa_level()) {
    case 2: return kAvx512;
    case 1: return kAvx2;
    default: return kSse2;
  }
}
#else
const Isa kGeneric = ETRT_GEMM_ISA("generic", isa_generic);

const Isa& isa() { return kGeneric; }
#endif

// Strides of size-1 dimensions are meaningless; give them the unit stride the fast paths test for.
GemmParams normalise(GemmParams p) {
  if (p.k == 1) {
    p.a_cs = 1;
    p.b_rs = 1;
  }
  if (p.n == 1) p.b_cs = 1;
  if (p.m == 1) p.a_rs = 0;
  return p;
}

// C = beta * C, for K == 0.
void scale_c(const GemmParams& p) {
  for (int64_t i = 0; i < p.m; ++i) {
    float* row = p.c + i * p.c_rs;
    if (p.beta == 0.0f) {
      std::memset(row, 0, static_cast<size_t>(p.n) * sizeof(float));
    } else {
      for (int64_t j = 0; j < p.n; ++j) row[j] *= p.beta;
    }
  }
}

constexpr size_t kScratchAlignFloats = 16;  // 64 bytes

size_t aligned_floats(size_t n) { return (n + kScratchAlignFloats - 1) / kScratchAlignFloats * kScratchAlignFloats; }

// A constant B's panels, whole, from the instruction's cache: packed at the first call (and
// again when the instruction set changes: the panel width does), read by the next ones. A
// transformer's weights were repacked on every call: ViT-B/16 spent 15% of its one-thread
// time (24 of 164 ms) copying its 86 M weights into panels. nullptr where the runtime keeps
// none (its memory budget): packed per call as before.
const float* kept_b(KernelContext& ctx, const GemmParams& p, const Isa& impl) {
  constexpr uint64_t kWholeBPanels = 0x22;
  bool ready = false;
  auto* panels = static_cast<float*>(
      ctx.instruction_cache(kept_key(p.b, kWholeBPanels), impl.kept_b_floats(p) * sizeof(float), &ready));
  if (panels != nullptr && !ready) impl.pack_kept_b(p, panels);
  return panels;
}

// Below this many multiply-adds a second thread costs more than it saves.
constexpr double kParallelMinMacs = 256.0 * 1024.0;
// Below this many floats of A one thread packs it sooner than a fork and join would.
constexpr size_t kParallelPackMinFloats = 32 * 1024;
// A GEMV split by B's row blocks from this many columns on: every ISA's GEMV kernel then (wider
// than its widest direct tile), whose sums gemv_by_row_blocks adds up as that kernel does.
constexpr int64_t kGemvMinColumns = 256;

// A GEMV's B rows per sum block: the kernels add K up in blocks of this many rows, each from
// zero, then the blocks in order, so a block computed apart gives the same bits.
#if ETRT_ISA_X86
constexpr int64_t kGemvSumRows = isa_avx2::kSumBlock;
static_assert(isa_avx512::kSumBlock == kGemvSumRows && isa_sse2::kSumBlock == kGemvSumRows,
              "every level sums a GEMV in the same blocks");
#else
constexpr int64_t kGemvSumRows = isa_generic::kSumBlock;
#endif

// One row of A against a B read in place (b_cs == 1: the direct path's GEMV) split by blocks of
// B's rows, and by columns where the blocks are fewer than the threads. Split by columns alone,
// each part walked down all of B in runs of its own columns, a new page every row or two, which
// the hardware prefetchers do not follow: a classifier's 1024 x 1000 weight from memory took
// 0.86x its one-thread time at two threads (Zen 1; 1.16x speed-up), where whole rows stream.
// Each part writes its blocks' sums; they are then added in the blocks' order, with alpha and
// beta applied as the kernels apply them: the one-thread bits. False, with nothing computed,
// where the sums find no room in the method's budget: the column split needs none.
bool gemv_by_row_blocks(KernelContext& ctx, const GemmParams& p, const Isa& impl, int threads) {
  const int64_t blocks = (p.k + kGemvSumRows - 1) / kGemvSumRows;
  int64_t col_parts = (threads + blocks - 1) / blocks;
  int64_t chunk = (p.n + col_parts - 1) / col_parts;
  chunk = std::max<int64_t>(64, (chunk + 31) / 32 * 32);
  col_parts = (p.n + chunk - 1) / chunk;
  const int64_t parts = blocks * col_parts;
  auto* sums = static_cast<float*>(ctx.allocate_temp(static_cast<size_t>(blocks * p.n) * sizeof(float), 64));
  if (sums == nullptr) return false;
  parallel_for(0, parts, 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t blk = t / col_parts, col = t % col_parts * chunk;
      GemmParams s = p;
      s.path_m = p.m;
      s.path_n = p.n;
      s.k = std::min(kGemvSumRows, p.k - blk * kGemvSumRows);
      s.n = std::min(chunk, p.n - col);
      s.a = p.a + blk * kGemvSumRows * p.a_cs;
      s.b = p.b + blk * kGemvSumRows * p.b_rs + col;
      s.c = sums + blk * p.n + col;
      s.alpha = 1.0f;
      s.beta = 0.0f;
      impl.run(s, nullptr);
    }
  });
  const int64_t add_parts = p.n >= 4096 ? std::min<int64_t>(threads, p.n / 1024) : 1;
  parallel_for(0, add_parts, 1, [&](int64_t b, int64_t e) {
    for (int64_t j = p.n * b / add_parts; j < p.n * e / add_parts; ++j) {
      float sum = sums[j];
      if (blocks > 1) {
        float total = sum;
        for (int64_t blk = 1; blk + 1 < blocks; ++blk) total += sums[blk * p.n + j];
        sum = total + sums[(blocks - 1) * p.n + j];
      }
      float r = sum * p.alpha;
      if (p.beta != 0.0f) r = std::fma(p.beta, p.c[j], r);
      p.c[j] = r;
    }
  });
  return true;
}

}  // namespace

size_t sgemm_scratch_floats(const GemmParams& p) { return isa().scratch_floats(normalise(p)); }

void sgemm_serial(const GemmParams& params, float* scratch) {
  if (params.m <= 0 || params.n <= 0) return;
  const GemmParams p = normalise(params);
  if (p.k <= 0) {
    scale_c(p);
    return;
  }
  isa().run(p, scratch);
}

bool sgemm(KernelContext& ctx, const GemmParams& params) {
  if (params.m <= 0 || params.n <= 0) return true;
  GemmParams p = normalise(params);
  if (p.k <= 0) {
    scale_c(p);
    return true;
  }
  const Isa& impl = isa();
  const bool packed = impl.packs_b(p);
  if (p.keep_b && packed) p.kept_b = kept_b(ctx, p, impl);
  const int threads = parallel_num_threads();
  const double macs = static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k);
  if (threads > 1 && macs >= kParallelMinMacs && p.k > kGemvSumRows && p.n >= kGemvMinColumns &&
      impl.direct_gemv(p) && gemv_by_row_blocks(ctx, p, impl, threads)) {
    return true;
  }
  int parts = 1;
  bool split_n = true;
  int64_t chunk = 0;
  if (threads > 1 && macs >= kParallelMinMacs) {
    // Split columns when there are enough (keeps every part's A shared and B disjoint), else rows;
    // up to kPartsPerThread parts a thread, none so thin that repacking the shared operand costs.
    const int64_t want = static_cast<int64_t>(threads) * kPartsPerThread;
    // Columns also where they keep three threads in four busy (ViT-B/16's 768 columns at 16
    // threads: 12 parts): each row part reads all of B again (a 9.4 MB weight 13 times), a
    // column part only its own columns. And where rows are too few to split (a classifier's
    // one row and 1000 columns at 16 threads): columns still, in fewer parts than threads,
    // rather than the whole product on one.
    // Also where a row part would hold fewer than 32 rows (BERT's 128 x 384 products at 16
    // threads: 16 parts of 8 rows, each reading all of B): columns, and rows below.
    if (p.n >= 64 * threads || 4 * (p.n / 64) >= 3 * threads ||
        (p.n >= 128 && (p.m < 8 * threads || (p.m + threads - 1) / threads < 32))) {
      chunk = (p.n + want - 1) / want;
      chunk = std::max<int64_t>(64, (chunk + 31) / 32 * 32);
      parts = static_cast<int>((p.n + chunk - 1) / chunk);
    } else if (p.m >= 8 * threads) {
      split_n = false;
      chunk = ((p.m + want - 1) / want + 7) / 8 * 8;
      if (chunk < 32) chunk = std::min<int64_t>(32, ((p.m + threads - 1) / threads + 7) / 8 * 8);
      parts = static_cast<int>((p.m + chunk - 1) / chunk);
    }
  }
  // Column parts fewer than threads (ViT-B/16's 768 columns: 12 parts at 16 threads): rows
  // too, so that the parts are a multiple of the threads, each a whole number of A's packed
  // panels (of the A packed once for all, on the packed path) and at least four of them.
  int64_t row_parts = 1, row_chunk = p.m;
  if (split_n && parts > 1 && parts < threads) {
    const int64_t mr = impl.panel_rows();
    const int64_t most = p.m / (4 * mr);
    row_parts = std::min<int64_t>(threads / std::gcd<int64_t>(parts, threads), most);
    if (row_parts >= 2) {
      row_chunk = ((p.m + row_parts - 1) / row_parts + mr - 1) / mr * mr;
      row_parts = (p.m + row_chunk - 1) / row_chunk;
    } else {
      row_parts = 1;
    }
  }
  const int64_t col_parts = parts;
  parts = static_cast<int>(col_parts * row_parts);
  auto part = [&](int64_t t) {
    GemmParams s = p;
    s.path_m = p.m;
    s.path_n = p.n;
    if (split_n) {
      const int64_t begin = t / row_parts * chunk, row = t % row_parts * row_chunk;
      s.n = (begin + chunk < p.n ? chunk : p.n - begin);
      s.b = p.b + begin * p.b_cs;
      s.kept_col = begin;  // a multiple of 32, so of every level's panel width
      s.c = p.c + begin;
      if (row_parts > 1) {  // rows [row, row + m) of them; consecutive parts share columns
        s.m = (row + row_chunk < p.m ? row_chunk : p.m - row);
        s.a = p.a + row * p.a_rs;
        s.c += row * p.c_rs;
        s.packed_a_m = p.m;
        s.packed_a_row = row;
      }
    } else {
      const int64_t begin = t * chunk;
      s.m = (begin + chunk < p.m ? chunk : p.m - begin);
      s.a = p.a + begin * p.a_rs;
      s.c = p.c + begin * p.c_rs;
    }
    return s;
  };
  if (parts <= 1) {
    const size_t n = impl.scratch_floats(p);
    float* scratch = nullptr;
    if (n > 0) {
      scratch = static_cast<float*>(ctx.allocate_temp(n * sizeof(float), 64));
      if (scratch == nullptr) return false;
    }
    impl.run(p, scratch);
    return true;
  }
  const int64_t slots = std::min<int64_t>(parts, threads);
  const size_t per_slot = aligned_floats(impl.scratch_floats(part(0)));
  float* scratch = nullptr;
  if (per_slot > 0) {
    scratch = static_cast<float*>(ctx.allocate_temp(per_slot * static_cast<size_t>(slots) * sizeof(float), 64));
    if (scratch == nullptr) return false;
  }
  if (split_n && packed && !impl.kept_in_place(p)) {
    // Every column part reads all of A: pack it once for all of them (ViT-B/16's fc2 at two
    // threads packed its 197 x 3072 A eight times a call; 2% of its run). Without room for
    // it, each part packs its own as before: the same bits.
    const size_t a_floats = impl.whole_a_floats(p);
    auto* a = static_cast<float*>(ctx.allocate_temp(a_floats * sizeof(float), 64));
    if (a != nullptr) {
      // On the calling thread alone it was serial time before every part (fc2's A, 2.4 MB).
      const int64_t a_parts = a_floats >= kParallelPackMinFloats ? threads * kPartsPerThread : 1;
      parallel_for(0, a_parts, 1, [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) impl.pack_whole_a(p, a, t, a_parts);
      });
      p.packed_a = a;
    }
  }
  run_parts_in_slots(parts, slots, [&](int64_t t, int64_t slot) {
    impl.run(part(t), scratch == nullptr ? nullptr : scratch + per_slot * static_cast<size_t>(slot));
  });
  return true;
}

ETRT_ISA_BODY void copy_to_row_major_body(const float* src, int64_t rows, int64_t cols, int64_t rs, int64_t cs, float* dst) {
  if (cs == 1) {
    for (int64_t i = 0; i < rows; ++i) std::memcpy(dst + i * cols, src + i * rs, static_cast<size_t>(cols) * sizeof(float));
    return;
  }
  int64_t i0 = 0;
  if (rs == 1) {  // a transposed matrix (a weight behind a permute): 16 x 16 tiles in registers
    for (; i0 + 16 <= rows; i0 += 16) {
      int64_t j0 = 0;
      for (; j0 + 16 <= cols; j0 += 16) {
        F32x16 t[16];
        for (int j = 0; j < 16; ++j) std::memcpy(&t[j], src + (j0 + j) * cs + i0, sizeof t[j]);
        transpose16(t);
        for (int i = 0; i < 16; ++i) std::memcpy(dst + (i0 + i) * cols + j0, &t[i], sizeof t[i]);
      }
      for (int64_t i = i0; i < i0 + 16; ++i)
        for (int64_t j = j0; j < cols; ++j) dst[i * cols + j] = src[i + j * cs];
    }
  }
  // 16 output columns at a time: each written cache line fills at once while 16 source runs stream.
  for (int64_t j0 = 0; j0 < cols; j0 += 16) {
    const int64_t jn = cols - j0 < 16 ? cols - j0 : 16;
    const float* s = src + j0 * cs;
    for (int64_t i = i0; i < rows; ++i) {
      float* d = dst + i * cols + j0;
      for (int64_t j = 0; j < jn; ++j) d[j] = s[i * rs + j * cs];
    }
  }
}
ETRT_ISA_DISPATCH(void, copy_to_row_major,
                  (const float* src, int64_t rows, int64_t cols, int64_t rs, int64_t cs, float* dst),
                  (src, rows, cols, rs, cs, dst))

const char* sgemm_isa() { return isa().name; }

bool sgemm_force_isa(const char* name) {
#if ETRT_ISA_X86
  const Isa* candidates[] = {&kSse2, &kAvx2, &kAvx512};  // indexed by level
  for (int level = 0; level < 3; ++level) {
    if (std::strcmp(candidates[level]->name, name) != 0) continue;
    // A level the CPU lacks leaves the cap alone.
    return level <= static_cast<int>(cpu_isa()) && set_max_isa(name).ok();
  }
  return false;
#else
  return std::strcmp(name, "generic") == 0;
#endif
}

}  // namespace kernels
}  // namespace etrt
