// aten::scaled_dot_product_attention in one pass over the keys (online softmax): a block of
// queries rides the lanes of a vector (16 under AVX-512, 8 under AVX2, 4 below), so the row max
// and sum of the softmax are plain vertical operations and no L x S score matrix is ever written.
// A query whose every key is masked gets zeros, as ATen's math path (_safe_softmax) gives.
// Decoding (a few queries) takes a per-query path instead (see attend_decode); many queries
// over many keys take two SGEMM products around a row softmax (see attend_gemm).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "gemm.h"
#include "heavy.h"
#include "parts.h"
#include "util.h"
#include "vec_math.h"

namespace etrt {
namespace kernels {
namespace {

constexpr int kLanes = 16;  // queries per block
constexpr int kKeys = 16;   // keys per block (scores of one block stay in registers)
constexpr int kCols = 16;   // value columns accumulated in registers at once

// Element strides of the per-item operands; the batch offset is added per item.
struct Geometry {
  int64_t L = 0, S = 0, E = 0, Ev = 0;
  int64_t q_row = 0, q_col = 0, k_row = 0, k_col = 0, v_row = 0, v_col = 0;
  int64_t m_row = 0, m_col = 0;  // mask strides over L and S (0 where broadcast)
  int64_t o_row = 0, o_col = 0;
  bool has_mask = false, mask_bool = false, causal = false;
  float scale = 1.0f;
};

struct Item {
  const float* q;
  const float* k;
  const float* v;
  const void* mask;
  float* out;
  int64_t i0;  // first query of the block
};

// acc[c] = acc[c] * alpha + sum_j p[j] * v[j][c] for `cols` columns (Cols when full, so the
// accumulators stay in registers).
template <int W, int Cols, bool Unit>
__attribute__((always_inline)) inline void accumulate(typename Lanes<W>::F* acc, const typename Lanes<W>::F& alpha,
                                                     const typename Lanes<W>::F* p, int64_t nk, const float* v,
                                                     int64_t v_row, int64_t v_col, int64_t cols) {
  using F = typename Lanes<W>::F;
  F a[Cols];
  for (int64_t c = 0; c < cols; ++c) a[c] = acc[c] * alpha;
  for (int64_t j = 0; j < nk; ++j) {
    const float* vr = v + j * v_row;
    const F pj = p[j];
    for (int64_t c = 0; c < cols; ++c) a[c] += pj * vr[Unit ? c : c * v_col];
  }
  for (int64_t c = 0; c < cols; ++c) acc[c] = a[c];
}

constexpr int kNoneVisible = 0, kAllVisible = 1, kSomeVisible = 2;

// The mask over queries it.i0.. (nq, in lanes) and keys j0.. (nk): which of them it lets through,
// and, when that is some, the additive mask per key in mv. Rows of a bool mask over contiguous
// keys are first read 8 bytes at a time: most blocks of a causal mask are all or nothing.
template <int W>
__attribute__((always_inline)) inline int mask_block(const Geometry& g, const Item& it, int64_t j0, int64_t nq,
                                                     int64_t nk, typename Lanes<W>::F* mv) {
  using F = typename Lanes<W>::F;
  const float ninf = -std::numeric_limits<float>::infinity();
  if (g.mask_bool && g.m_col == 1 && nk == kKeys) {
    const uint64_t ones = 0x0101010101010101ull;
    uint64_t any = 0, all = ones;
    for (int64_t l = 0; l < nq; ++l) {
      uint64_t w[2];
      std::memcpy(w, static_cast<const uint8_t*>(it.mask) + (it.i0 + l) * g.m_row + j0, sizeof w);
      any |= w[0] | w[1];
      all &= w[0] & w[1];
    }
    if (any == 0) return kNoneVisible;
    if (all == ones) return kAllVisible;  // bool tensors hold 0 or 1
  }
  bool visible = false;
  for (int64_t j = 0; j < nk; ++j) {
    F m = {};
    if (g.mask_bool) {
      const uint8_t* mb = static_cast<const uint8_t*>(it.mask) + (j0 + j) * g.m_col;
      for (int64_t l = 0; l < nq; ++l) {
        const bool keep = mb[(it.i0 + l) * g.m_row] != 0;
        visible |= keep;
        m[l] = keep ? 0.0f : ninf;
      }
    } else if (g.m_row == 0) {  // one mask row for every query (padding)
      const float add = static_cast<const float*>(it.mask)[(j0 + j) * g.m_col];
      visible |= add != ninf;
      m = F{} + add;
    } else {
      const float* mf = static_cast<const float*>(it.mask) + (j0 + j) * g.m_col;
      for (int64_t l = 0; l < nq; ++l) {
        const float add = mf[(it.i0 + l) * g.m_row];
        visible |= add != ninf;
        m[l] = add;
      }
    }
    mv[j] = m;
  }
  return visible ? kSomeVisible : kNoneVisible;
}

// One block of up to W queries (the clone's register width: 16 under AVX-512, 8 under AVX2, 4
// below) against every key; qt has E vectors and acc Ev. Unit: query, key, value and output rows
// are contiguous.
template <int W, bool Unit>
__attribute__((always_inline)) inline void attend(const Geometry& g, const Item& it, typename Lanes<W>::F* qt,
                                                  typename Lanes<W>::F* acc) {
  using F = typename Lanes<W>::F;
  // Value columns accumulated at once: with p and a value they fit the register file.
  constexpr int Cols = W == 16 ? kCols : 8;
  const float ninf = -std::numeric_limits<float>::infinity();
  const F vninf = F{} + ninf;
  const int64_t nq = g.L - it.i0 < W ? g.L - it.i0 : W;
  const int64_t k_col = Unit ? 1 : g.k_col;
  // Queries transposed into lanes and scaled; lanes past nq are 0 (their results are dropped).
  // Below 16 lanes the transpose goes element by element: E x nq moves against S x E x W
  // multiply-adds.
  int64_t e0 = 0;
  if constexpr (Unit && W == 16) {
    for (; e0 + kLanes <= g.E; e0 += kLanes) {
      F32x16 t[kLanes];
      for (int64_t l = 0; l < kLanes; ++l) {
        if (l < nq) {
          std::memcpy(&t[l], it.q + (it.i0 + l) * g.q_row + e0, sizeof t[l]);
          t[l] *= g.scale;
        } else {
          t[l] = F32x16{};
        }
      }
      transpose16(t);
      for (int e = 0; e < kLanes; ++e) qt[e0 + e] = t[e];
    }
  }
  for (int64_t e = e0; e < g.E; ++e) {
    F col = {};
    for (int64_t l = 0; l < nq; ++l) col[l] = it.q[(it.i0 + l) * g.q_row + e * g.q_col] * g.scale;
    qt[e] = col;
  }
  for (int64_t c = 0; c < g.Ev; ++c) acc[c] = F{};
  F lane = {};
  if (g.causal) {
    for (int l = 0; l < W; ++l) lane[l] = static_cast<float>(it.i0 + l);
  }
  F m = vninf, sum = {};
  // Under a causal mask no query of the block sees keys past its last query.
  const int64_t s_end = g.causal ? (it.i0 + nq < g.S ? it.i0 + nq : g.S) : g.S;
  for (int64_t j0 = 0; j0 < s_end; j0 += kKeys) {
    const int64_t nk = s_end - j0 < kKeys ? s_end - j0 : kKeys;
    F s[kKeys];
    int64_t j = 0;
    F mv[kKeys];
    bool add_mask = g.has_mask;
    if (g.has_mask) {
      // A block whose every score the mask hides adds nothing (exp(-inf) = 0): skipped, so a
      // causal mask given as a tensor costs about what is_causal does.
      const int seen = mask_block<W>(g, it, j0, nq, nk, mv);
      if (seen == kNoneVisible) continue;
      add_mask = seen == kSomeVisible;
    }
    for (; j + 4 <= nk; j += 4) {  // four keys share each load of a query column
      const float* k0 = it.k + (j0 + j) * g.k_row;
      const float* k1 = k0 + g.k_row;
      const float* k2 = k1 + g.k_row;
      const float* k3 = k2 + g.k_row;
      F a0 = {}, a1 = {}, a2 = {}, a3 = {};
      for (int64_t e = 0; e < g.E; ++e) {
        const F qv = qt[e];
        const int64_t o = e * k_col;
        a0 += qv * k0[o];
        a1 += qv * k1[o];
        a2 += qv * k2[o];
        a3 += qv * k3[o];
      }
      s[j] = a0;
      s[j + 1] = a1;
      s[j + 2] = a2;
      s[j + 3] = a3;
    }
    for (; j < nk; ++j) {
      const float* kr = it.k + (j0 + j) * g.k_row;
      F a = {};
      for (int64_t e = 0; e < g.E; ++e) a += qt[e] * kr[e * k_col];
      s[j] = a;
    }
    if (g.causal) {
      for (j = 0; j < nk; ++j) s[j] = (F{} + static_cast<float>(j0 + j)) > lane ? vninf : s[j];
    }
    if (add_mask) {
      for (j = 0; j < nk; ++j) s[j] += mv[j];
    }
    F bm = s[0];
    for (j = 1; j < nk; ++j) bm = s[j] > bm ? s[j] : bm;
    const F m_new = bm > m ? bm : m;
    // Where every score so far is -inf, subtract 0 instead: exp then gives 0, never NaN.
    const F m_use = m_new == vninf ? F{} : m_new;
    F alpha = m - m_use;
    exp_lanes<W>(alpha);
    F block_sum = {};
    for (j = 0; j < nk; ++j) {
      s[j] -= m_use;
      exp_lanes<W>(s[j]);
      block_sum += s[j];
    }
    sum = sum * alpha + block_sum;
    m = m_new;
    const float* vb = it.v + j0 * g.v_row;
    const int64_t v_col = Unit ? 1 : g.v_col;
    int64_t c0 = 0;
    for (; c0 + Cols <= g.Ev; c0 += Cols) {
      accumulate<W, Cols, Unit>(acc + c0, alpha, s, nk, vb + c0 * v_col, g.v_row, v_col, Cols);
    }
    if (c0 < g.Ev) accumulate<W, Cols, Unit>(acc + c0, alpha, s, nk, vb + c0 * v_col, g.v_row, v_col, g.Ev - c0);
  }
  const F inv = sum > F{} ? 1.0f / sum : F{};  // a fully masked query gets zeros
  int64_t c0 = 0;
  if constexpr (Unit && W == 16) {
    for (; c0 + kLanes <= g.Ev; c0 += kLanes) {
      F32x16 t[kLanes];
      for (int c = 0; c < kLanes; ++c) t[c] = acc[c0 + c] * inv;
      transpose16(t);
      for (int64_t l = 0; l < nq; ++l) std::memcpy(it.out + (it.i0 + l) * g.o_row + c0, &t[l], sizeof t[l]);
    }
  }
  for (int64_t c = c0; c < g.Ev; ++c) {
    const F col = acc[c] * inv;
    for (int64_t l = 0; l < nq; ++l) it.out[(it.i0 + l) * g.o_row + c * g.o_col] = col[l];
  }
}

template <int W>
ETRT_VEC_INLINE void attend_block(const Geometry& g, const Item& it, float* buf, bool unit) {
  auto* qt = reinterpret_cast<typename Lanes<W>::F*>(buf);
  if (unit) {
    attend<W, true>(g, it, qt, qt + g.E);
  } else {
    attend<W, false>(g, it, qt, qt + g.E);
  }
}

// Queries per block of the clone attend_blocks runs.
int block_queries() {
#if defined(__x86_64__) && defined(__GNUC__)
  return isa_level() == 2 ? 16 : isa_level() == 1 ? 8 : 4;
#else
  return 4;
#endif
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f"))) static void attend_avx512(const Geometry& g, const Item& it, float* buf,
                                                             bool unit) {
  attend_block<16>(g, it, buf, unit);
}
__attribute__((target("avx2,fma"))) static void attend_avx2(const Geometry& g, const Item& it, float* buf,
                                                            bool unit) {
  attend_block<8>(g, it, buf, unit);
}
static void attend_blocks(const Geometry& g, const Item& it, float* buf, bool unit) {
  switch (isa_level()) {
    case 2: return attend_avx512(g, it, buf, unit);
    case 1: return attend_avx2(g, it, buf, unit);
    default: return attend_block<4>(g, it, buf, unit);
  }
}
#else
static void attend_blocks(const Geometry& g, const Item& it, float* buf, bool unit) {
  attend_block<4>(g, it, buf, unit);
}
#endif

// Decoding: a handful of queries (one per head and step). Sixteen queries across the lanes would
// leave most lanes idle, so each query goes alone: its scores over the keys vectorised along the
// head dimension, softmax over the score row, then p.V along the value columns; vectors of the
// clone's register width (Lanes), as GCC scalarises selects on wider ones. Unit column strides.
// Up to here the per-query path wins under AVX-512 too ([1, 16, L, 64] against 64 keys, one
// thread: L = 4 22 us against 45, 8 42 against 46, 16 84 against 51).
constexpr int64_t kDecodeQueries = 8;

template <int W>
ETRT_VEC_INLINE float lane_sum(const typename Lanes<W>::F& v) {
  if constexpr (W == 1) {
    return v[0];
  } else {
    typename Lanes<W / 2>::F lo, hi;
    std::memcpy(&lo, &v, sizeof lo);
    std::memcpy(&hi, reinterpret_cast<const char*>(&v) + sizeof lo, sizeof hi);
    return lane_sum<W / 2>(lo + hi);
  }
}

// Loads through a pointer: vectors returned by value would change the ABI between the clones.
template <int W>
ETRT_VEC_INLINE void load_lanes(typename Lanes<W>::F* v, const float* p) {
  std::memcpy(v, p, sizeof *v);
}

// Query i's row of scores sc[0, s_end) (room up to a whole vector past it): the mask added,
// then exp(x - max) in place, the lanes past s_end weighing 0. Returns 1 / sum, or 0 when every
// key is masked (the row is then left as it is: the caller writes zeros, as ATen's
// _safe_softmax gives).
template <int W>
ETRT_VEC_INLINE float masked_exp_row(const Geometry& g, const Item& it, int64_t i, float* sc, int64_t s_end) {
  using F = typename Lanes<W>::F;
  const float ninf = -std::numeric_limits<float>::infinity();
  int64_t j = 0;
  if (g.has_mask) {
    if (g.mask_bool) {
      const uint8_t* mb = static_cast<const uint8_t*>(it.mask) + i * g.m_row;
      for (j = 0; j < s_end; ++j) sc[j] = mb[j * g.m_col] != 0 ? sc[j] : ninf;
    } else {
      const float* mf = static_cast<const float*>(it.mask) + i * g.m_row;
      for (j = 0; j < s_end; ++j) sc[j] += mf[j * g.m_col];
    }
  }
  // Lanes past the last key hold -inf: they weigh 0 below.
  const int64_t padded = (s_end + W - 1) / W * W;
  for (j = s_end; j < padded; ++j) sc[j] = ninf;
  F vm = F{} + ninf;
  for (j = 0; j < padded; j += W) {
    F s;
    load_lanes<W>(&s, sc + j);
    vm = s > vm ? s : vm;
  }
  float m = ninf;
  for (int l = 0; l < W; ++l) m = vm[l] > m ? vm[l] : m;
  if (!(m > ninf)) return 0.0f;
  F vs = {};
  for (j = 0; j < padded; j += W) {
    F s;
    load_lanes<W>(&s, sc + j);
    s -= m;
    exp_lanes<W>(s);
    std::memcpy(sc + j, &s, sizeof s);
    vs += s;
  }
  return 1.0f / lane_sum<W>(vs);
}

// One query row: scores (sc, S rounded up to W floats) and the output row.
template <int W>
ETRT_VEC_INLINE void decode_row(const Geometry& g, const Item& it, int64_t i, float* sc) {
  using F = typename Lanes<W>::F;
  const float* qr = it.q + i * g.q_row;
  float* orow = it.out + i * g.o_row;
  // Top-left causal alignment, as ATen: query i sees keys 0..i.
  const int64_t s_end = g.causal ? (i + 1 < g.S ? i + 1 : g.S) : g.S;
  const int64_t ev = g.E - g.E % W;
  int64_t j = 0;
  for (; j + 4 <= s_end; j += 4) {  // four keys share each load of the query
    const float* k0 = it.k + j * g.k_row;
    const float* k1 = k0 + g.k_row;
    const float* k2 = k1 + g.k_row;
    const float* k3 = k2 + g.k_row;
    F a0 = {}, a1 = {}, a2 = {}, a3 = {};
    for (int64_t e = 0; e < ev; e += W) {
      F qv, x0, x1, x2, x3;
      load_lanes<W>(&qv, qr + e);
      load_lanes<W>(&x0, k0 + e);
      load_lanes<W>(&x1, k1 + e);
      load_lanes<W>(&x2, k2 + e);
      load_lanes<W>(&x3, k3 + e);
      a0 += qv * x0;
      a1 += qv * x1;
      a2 += qv * x2;
      a3 += qv * x3;
    }
    float t0 = lane_sum<W>(a0), t1 = lane_sum<W>(a1), t2 = lane_sum<W>(a2), t3 = lane_sum<W>(a3);
    for (int64_t e = ev; e < g.E; ++e) {
      t0 += qr[e] * k0[e];
      t1 += qr[e] * k1[e];
      t2 += qr[e] * k2[e];
      t3 += qr[e] * k3[e];
    }
    sc[j] = t0 * g.scale;
    sc[j + 1] = t1 * g.scale;
    sc[j + 2] = t2 * g.scale;
    sc[j + 3] = t3 * g.scale;
  }
  for (; j < s_end; ++j) {
    const float* kr = it.k + j * g.k_row;
    F a = {};
    for (int64_t e = 0; e < ev; e += W) {
      F qv, kv;
      load_lanes<W>(&qv, qr + e);
      load_lanes<W>(&kv, kr + e);
      a += qv * kv;
    }
    float t = lane_sum<W>(a);
    for (int64_t e = ev; e < g.E; ++e) t += qr[e] * kr[e];
    sc[j] = t * g.scale;
  }
  const float inv = masked_exp_row<W>(g, it, i, sc, s_end);
  if (inv == 0.0f) {  // every key masked
    for (int64_t c = 0; c < g.Ev; ++c) orow[c] = 0.0f;
    return;
  }
  // p.V: four vectors of value columns stay in registers across every key.
  constexpr int kC = 4;
  int64_t c0 = 0;
  for (; c0 + kC * W <= g.Ev; c0 += kC * W) {
    F a[kC] = {};
    const float* vb = it.v + c0;
    for (j = 0; j < s_end; ++j) {
      const float p = sc[j];
      const float* vr = vb + j * g.v_row;
      for (int c = 0; c < kC; ++c) {
        F x;
        load_lanes<W>(&x, vr + c * W);
        a[c] += p * x;
      }
    }
    for (int c = 0; c < kC; ++c) {
      const F r = a[c] * inv;
      std::memcpy(orow + c0 + c * W, &r, sizeof r);
    }
  }
  for (; c0 + W <= g.Ev; c0 += W) {
    F a = {};
    for (j = 0; j < s_end; ++j) {
      F x;
      load_lanes<W>(&x, it.v + j * g.v_row + c0);
      a += sc[j] * x;
    }
    const F r = a * inv;
    std::memcpy(orow + c0, &r, sizeof r);
  }
  for (; c0 < g.Ev; ++c0) {
    float a = 0.0f;
    for (j = 0; j < s_end; ++j) a += sc[j] * it.v[j * g.v_row + c0];
    orow[c0] = a * inv;
  }
}

template <int W>
ETRT_VEC_INLINE void decode_body(const Geometry& g, const Item& it, float* sc) {
  // The same blocks of queries as the 16-query path: the parts to share among threads.
  const int64_t end = it.i0 + kLanes < g.L ? it.i0 + kLanes : g.L;
  for (int64_t i = it.i0; i < end; ++i) decode_row<W>(g, it, i, sc);
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f"))) static void decode_avx512(const Geometry& g, const Item& it, float* sc) {
  decode_body<16>(g, it, sc);
}
__attribute__((target("avx2,fma"))) static void decode_avx2(const Geometry& g, const Item& it, float* sc) {
  decode_body<8>(g, it, sc);
}
static void attend_decode(const Geometry& g, const Item& it, float* sc) {
  switch (isa_level()) {
    case 2: return decode_avx512(g, it, sc);
    case 1: return decode_avx2(g, it, sc);
    default: return decode_body<4>(g, it, sc);
  }
}
#else
static void attend_decode(const Geometry& g, const Item& it, float* sc) { decode_body<4>(g, it, sc); }
#endif

// Many queries over many keys (a ViT's 197 x 197, an encoder's 128 x 128): a block of queries'
// scores as one product Q K^T on the SGEMM's tiles, the mask and a softmax along each row, then
// P V as a second product straight into the output rows, scaled by each row's 1 / sum. The lanes-per-query kernel above keeps its accumulators in memory once
// a head has 64 columns: at [1, 12, 197, 64] it took 1.35x this time under AVX2 and 1.12x
// under AVX-512, at [1, 6, 128, 64] with a padding mask 1.4x and 1.1x. Where the keys a query
// sees change from row to row (is_causal, a causal or random mask given as a tensor), that
// kernel skips the hidden blocks of keys and the products would compute them: it keeps those
// (is_causal at [1, 4, 128, 64] under AVX-512: 84 us against 96 over blocks of 32 queries).
// A mask that hides the same keys from every row of a block (padding) shortens the products.
// Below 64 queries or keys the lanes kernel was as fast or faster (8 heads of 32 x 32 under
// AVX-512: 27 us against 32).
constexpr int64_t kGemmMinQueries = 64;
constexpr int64_t kGemmMinKeys = 64;
constexpr int64_t kGemmMinHead = 32;
constexpr int64_t kGemmMaxQueries = 256;
constexpr int64_t kGemmScoreFloats = 64 * 1024;

bool use_gemm(const Geometry& g, bool unit) {
  return unit && !g.causal && g.L >= kGemmMinQueries && g.S >= kGemmMinKeys && g.E >= kGemmMinHead &&
         g.Ev >= kGemmMinHead;
}

// Queries per block, a multiple of 16 (a block the lanes kernel takes over splits into its
// blocks of 16, 8 or 4): as many as kGemmScoreFloats of scores allow (16 to 256; each block
// copies K^T for its product once, so the fewer the better), but enough blocks for every thread
// to get kPartsPerThread of `heads` x blocks; then evened out over the blocks L needs (300
// queries at most 256 a block: 2 of 160, not 256 and 44). A row's bits do not depend on its
// block.
int64_t gemm_queries(const Geometry& g, int64_t heads, int64_t threads) {
  int64_t most = kGemmScoreFloats / ((g.S + 15) / 16 * 16);
  most = most < 16 ? 16 : most > kGemmMaxQueries ? kGemmMaxQueries : most / 16 * 16;
  if (threads > 1) {
    const int64_t wanted = (threads * kPartsPerThread + heads - 1) / heads;
    const int64_t split = ((g.L + wanted - 1) / wanted + 15) / 16 * 16;
    if (split < most) most = split < 16 ? 16 : split;
  }
  const int64_t blocks = (g.L + most - 1) / most;
  return ((g.L + blocks - 1) / blocks + 15) / 16 * 16;
}

int64_t score_stride(const Geometry& g) { return (g.S + 15) / 16 * 16; }

GemmParams scores_product(const Geometry& g, const Item& it, int64_t nq, int64_t keys, float* scores) {
  GemmParams p;
  p.m = nq;
  p.n = keys;
  p.k = g.E;
  p.a = it.q + it.i0 * g.q_row;
  p.a_rs = g.q_row;
  p.a_cs = 1;
  p.b = it.k;  // B(e, j) = K[j][e]
  p.b_rs = 1;
  p.b_cs = g.k_row;
  p.c = scores;
  p.c_rs = score_stride(g);
  p.alpha = g.scale;
  return p;
}

GemmParams values_product(const Geometry& g, const Item& it, int64_t nq, int64_t keys, const float* scores) {
  GemmParams p;
  p.m = nq;
  p.n = g.Ev;
  p.k = keys;
  p.a = scores;
  p.a_rs = score_stride(g);
  p.a_cs = 1;
  p.b = it.v;
  p.b_rs = g.v_row;
  p.b_cs = 1;
  p.c = it.out + it.i0 * g.o_row;
  p.c_rs = g.o_row;
  return p;
}

size_t product_scratch_floats(const Geometry& g, int64_t nq, int64_t keys) {
  const Item none{nullptr, nullptr, nullptr, nullptr, nullptr, 0};
  return std::max(sgemm_scratch_floats(scores_product(g, none, nq, keys, nullptr)),
                  sgemm_scratch_floats(values_product(g, none, nq, keys, nullptr)));
}

// Scratch floats of one attend_gemm call, for any block of the geometry over all its keys: the
// scores, one 1 / sum per query, and the larger of the two products' own scratch.
size_t gemm_scratch_floats(const Geometry& g, int64_t qb) {
  size_t products = 0;
  for (int64_t nq : {qb, g.L % qb}) {
    if (nq == 0) continue;
    products = std::max(products, product_scratch_floats(g, nq, g.S));
  }
  const size_t lanes_kernel = static_cast<size_t>(g.E + g.Ev) * 16;  // a block it takes over
  return std::max(static_cast<size_t>(qb * score_stride(g) + (qb + 15) / 16 * 16) + products, lanes_kernel);
}

// Each row of a block's scores masked and exponentiated (masked_exp_row), its 1 / sum in inv; a
// row whose every key is masked weighs nothing.
template <int W>
ETRT_VEC_INLINE void mask_and_softmax(const Geometry& g, const Item& it, float* scores, int64_t nq, int64_t keys,
                                      float* inv) {
  for (int64_t l = 0; l < nq; ++l) {
    float* row = scores + l * score_stride(g);
    inv[l] = masked_exp_row<W>(g, it, it.i0 + l, row, keys);
    if (inv[l] == 0.0f) std::memset(row, 0, static_cast<size_t>(keys) * sizeof(float));
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f"))) static void mask_and_softmax_avx512(const Geometry& g, const Item& it,
                                                                       float* scores, int64_t nq, int64_t keys,
                                                                       float* inv) {
  mask_and_softmax<16>(g, it, scores, nq, keys, inv);
}
__attribute__((target("avx2,fma"))) static void mask_and_softmax_avx2(const Geometry& g, const Item& it,
                                                                      float* scores, int64_t nq, int64_t keys,
                                                                      float* inv) {
  mask_and_softmax<8>(g, it, scores, nq, keys, inv);
}
static void mask_and_softmax_rows(const Geometry& g, const Item& it, float* scores, int64_t nq, int64_t keys,
                                  float* inv) {
  switch (isa_level()) {
    case 2: return mask_and_softmax_avx512(g, it, scores, nq, keys, inv);
    case 1: return mask_and_softmax_avx2(g, it, scores, nq, keys, inv);
    default: return mask_and_softmax<4>(g, it, scores, nq, keys, inv);
  }
}
#else
static void mask_and_softmax_rows(const Geometry& g, const Item& it, float* scores, int64_t nq, int64_t keys,
                                  float* inv) {
  mask_and_softmax<4>(g, it, scores, nq, keys, inv);
}
#endif

// One past the last key the mask lets row i see (0: none).
int64_t row_keys(const Geometry& g, const Item& it, int64_t i) {
  const float ninf = -std::numeric_limits<float>::infinity();
  for (int64_t j = g.S - 1; j >= 0; --j) {
    const bool visible =
        g.mask_bool ? static_cast<const uint8_t*>(it.mask)[i * g.m_row + j * g.m_col] != 0
                    : static_cast<const float*>(it.mask)[i * g.m_row + j * g.m_col] != ninf;
    if (visible) return j + 1;
  }
  return 0;
}

// The keys every row of the block sees up to (the rest hidden by a padding mask), or -1 when
// that differs from row to row (a causal or scattered mask: the lanes kernel's case).
int64_t block_keys(const Geometry& g, const Item& it, int64_t nq) {
  if (!g.has_mask) return g.S;
  const int64_t keys = row_keys(g, it, it.i0);
  for (int64_t l = 1; l < nq; ++l) {
    if (g.m_row == 0) break;  // one mask row for every query
    if (row_keys(g, it, it.i0 + l) != keys) return -1;
  }
  return keys;
}

// One block of queries, it.i0 .. it.i0 + qb, against the keys it sees; false (nothing done)
// when those differ from row to row.
bool attend_gemm(const Geometry& g, const Item& it, int64_t qb, float* buf) {
  const int64_t nq = g.L - it.i0 < qb ? g.L - it.i0 : qb;
  int64_t keys = block_keys(g, it, nq);
  if (keys < 0) return false;
  // Fewer keys may take a product path with more scratch than all of them (gemm_scratch_floats'
  // count): then over all keys, the hidden ones masked.
  if (keys > 0 && keys < g.S && product_scratch_floats(g, nq, keys) > product_scratch_floats(g, nq, g.S)) {
    keys = g.S;
  }
  if (keys == 0) {  // every key hidden from every query of the block: zeros, as _safe_softmax
    for (int64_t l = 0; l < nq; ++l) {
      std::memset(it.out + (it.i0 + l) * g.o_row, 0, static_cast<size_t>(g.Ev) * sizeof(float));
    }
    return true;
  }
  float* scores = buf;
  float* inv = scores + qb * score_stride(g);
  float* work = inv + (qb + 15) / 16 * 16;
  sgemm_serial(scores_product(g, it, nq, keys, scores), work);
  mask_and_softmax_rows(g, it, scores, nq, keys, inv);
  const GemmParams pv = values_product(g, it, nq, keys, scores);
  sgemm_serial(pv, work);
  for (int64_t l = 0; l < nq; ++l) {
    float* row = pv.c + l * g.o_row;
    const float f = inv[l];
    for (int64_t c = 0; c < g.Ev; ++c) row[c] *= f;
  }
  return true;
}

// Batch dimensions (all but the last two) of the output and each operand's stride over them.
struct Batches {
  int dims = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t q[kMaxDims] = {}, k[kMaxDims] = {}, v[kMaxDims] = {}, m[kMaxDims] = {}, o[kMaxDims] = {};
  int64_t kv_group[kMaxDims] = {};  // > 1 on the head dimension under enable_gqa
  int64_t count = 1;
};

bool fail_shapes(KernelContext& ctx, const char* op, const char* what, const Tensor& q,
                 const Tensor& k, const Tensor& v) {
  fail(ctx, op, std::string(what) + " (query " + shape_string(q.sizes()) + ", key " +
                    shape_string(k.sizes()) + ", value " + shape_string(v.sizes()) + ")");
  return false;
}

bool batch_layout(KernelContext& ctx, const char* op, const Tensor& q, const Tensor& k,
                  const Tensor& v, bool gqa, Batches* b) {
  const int nd = q.dim();
  b->dims = nd - 2;
  for (int d = 0; d < b->dims; ++d) {
    const int64_t qs = q.size(d), ks = k.size(d), vs = v.size(d);
    const bool head = gqa && d == nd - 3;
    int64_t size = qs;
    b->kv_group[d] = 1;
    if (head) {
      if (ks != vs || ks == 0 || qs % ks != 0) {
        return fail_shapes(ctx, op, "enable_gqa needs key and value heads that divide the query heads", q, k, v);
      }
      b->kv_group[d] = qs / ks;
    } else {
      for (int64_t s : {ks, vs}) {
        if (s != size && s != 1 && size != 1) {
          return fail_shapes(ctx, op, "batch dimensions do not broadcast", q, k, v);
        }
        if (size == 1) size = s;
      }
    }
    b->sizes[d] = size;
    b->count *= size;
    b->q[d] = qs == 1 ? 0 : q.stride(d);
    b->k[d] = ks == 1 && !head ? 0 : k.stride(d);
    b->v[d] = vs == 1 && !head ? 0 : v.stride(d);
  }
  return true;
}

}  // namespace

void op_scaled_dot_product_attention(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::scaled_dot_product_attention";
  if (!check_nargs(ctx, op, args, 9)) return;
  const Tensor* qkv[3];
  const char* names[3] = {"query", "key", "value"};
  for (int i = 0; i < 3; ++i) {
    qkv[i] = tensor_arg(ctx, op, args, static_cast<size_t>(i), names[i]);
    if (qkv[i] == nullptr || !check_dtype(ctx, op, *qkv[i], names[i], ScalarType::Float) ||
        !check_has_data(ctx, op, *qkv[i], names[i])) {
      return;
    }
  }
  const Tensor &q = *qkv[0], &k = *qkv[1], &v = *qkv[2];
  Tensor* mask = nullptr;
  double dropout_p = 0.0;
  bool causal = false, gqa = false;
  if (!optional_tensor_arg(ctx, op, args, 3, "attn_mask", &mask) ||
      !scalar_arg(ctx, op, args, 4, "dropout_p", &dropout_p) ||
      !bool_arg(ctx, op, args, 5, "is_causal", &causal) ||
      !bool_arg(ctx, op, args, 7, "enable_gqa", &gqa)) {
    return;
  }
  if (dropout_p != 0.0) {
    fail(ctx, op, "dropout_p is " + std::to_string(dropout_p) + "; etrt runs inference only (0)");
    return;
  }
  if (causal && mask != nullptr) {
    fail(ctx, op, "attn_mask and is_causal cannot both be set");
    return;
  }
  if (q.dim() < 2 || k.dim() != q.dim() || v.dim() != q.dim() || (gqa && q.dim() < 3)) {
    fail_shapes(ctx, op, gqa ? "enable_gqa needs query, key and value of the same rank, at least 3"
                             : "query, key and value need the same rank, at least 2",
                q, k, v);
    return;
  }
  const int nd = q.dim();
  Geometry g;
  g.L = q.size(nd - 2);
  g.E = q.size(nd - 1);
  g.S = k.size(nd - 2);
  g.Ev = v.size(nd - 1);
  if (k.size(nd - 1) != g.E || v.size(nd - 2) != g.S) {
    fail_shapes(ctx, op, "key must be [..., S, E] for query [..., L, E] and value [..., S, Ev]", q,
                k, v);
    return;
  }
  Batches b;
  if (!batch_layout(ctx, op, q, k, v, gqa, &b)) return;

  double scale = 0.0;
  if (args[6]->is_none()) {
    scale = 1.0 / std::sqrt(static_cast<double>(g.E > 0 ? g.E : 1));
  } else if (!scalar_arg(ctx, op, args, 6, "scale", &scale)) {
    return;
  }
  g.scale = static_cast<float>(scale);
  g.causal = causal;
  g.q_row = q.stride(nd - 2);
  g.q_col = q.stride(nd - 1);
  g.k_row = k.stride(nd - 2);
  g.k_col = k.stride(nd - 1);
  g.v_row = v.stride(nd - 2);
  g.v_col = v.stride(nd - 1);

  Shape out_shape;
  out_shape.dim = nd;
  for (int d = 0; d < b.dims; ++d) out_shape.sizes[d] = b.sizes[d];
  out_shape.sizes[nd - 2] = g.L;
  out_shape.sizes[nd - 1] = g.Ev;
  if (mask != nullptr) {
    if (mask->dtype() != ScalarType::Float && mask->dtype() != ScalarType::Bool) {
      fail(ctx, op, std::string("attn_mask must be Float or Bool, got ") + to_string(mask->dtype()));
      return;
    }
    if (!check_has_data(ctx, op, *mask, "attn_mask")) return;
    const int md = mask->dim();
    bool ok = md <= nd;
    int64_t ms[kMaxDims] = {};
    for (int d = 0; ok && d < nd; ++d) {
      const int i = d - (nd - md);
      const int64_t target = d == nd - 1 ? g.S : out_shape.sizes[d];
      if (i < 0) continue;
      const int64_t size = mask->size(i);
      ok = size == target || size == 1;
      ms[d] = size == 1 ? 0 : mask->stride(i);
    }
    if (!ok) {
      Shape want = out_shape;
      want.sizes[nd - 1] = g.S;
      fail(ctx, op, "attn_mask of shape " + shape_string(mask->sizes()) +
                        " does not broadcast to the attention scores " + shape_string(want.span()));
      return;
    }
    for (int d = 0; d < b.dims; ++d) b.m[d] = ms[d];
    g.m_row = ms[nd - 2];
    g.m_col = ms[nd - 1];
    g.has_mask = true;
    g.mask_bool = mask->dtype() == ScalarType::Bool;
  }
  Tensor* out = strided_output_arg(ctx, op, args, 8, ScalarType::Float, out_shape.span());
  if (out == nullptr) return;
  for (int d = 0; d < b.dims; ++d) b.o[d] = out->stride(d);
  g.o_row = out->stride(nd - 2);
  g.o_col = out->stride(nd - 1);
  if (b.count == 0 || g.L == 0 || g.Ev == 0) return;

  const bool unit = g.q_col == 1 && g.k_col == 1 && g.v_col == 1 && g.o_col == 1;
  const bool decode = unit && g.L <= kDecodeQueries;
  const bool gemm = !decode && use_gemm(g, unit);
  // Queries per item: a block of the clone's lanes, (decoding) the per-query path's 16, or a
  // block of the products'.
  const int64_t threads = parallel_num_threads();
  const int64_t lanes = decode ? kLanes : gemm ? gemm_queries(g, b.count, threads) : block_queries();
  const int64_t blocks = (g.L + lanes - 1) / lanes;
  const int64_t items = b.count * blocks;
  // Floats of scratch per slot: the transposed query block and its accumulators, or (decoding)
  // one row of scores padded to a whole vector.
  const size_t per_part = decode ? static_cast<size_t>((g.S + 16 + 15) / 16 * 16)
                          : gemm ? (gemm_scratch_floats(g, lanes) + 15) / 16 * 16
                                 : static_cast<size_t>(g.E + g.Ev) * 16;
  // Multiply-adds per item; below a GEMM's threshold a second thread costs more than it saves.
  const int64_t cost = (g.L < lanes ? g.L : lanes) * g.S * (g.E + g.Ev) + 1;
  int64_t parts = 1;
  if (threads > 1 && items > 1 && items * cost >= 256 * 1024) {
    parts = threads * kPartsPerThread;
    if (parts > items) parts = items;
  }
  const int64_t slots = parts < threads ? parts : threads;
  float* scratch = static_cast<float*>(
      ctx.allocate_temp(per_part * static_cast<size_t>(slots) * sizeof(float), 64));
  if (scratch == nullptr) {
    ctx.fail(Error(ErrorCode::OutOfMemory, std::string(op) + ": out of scratch memory"));
    return;
  }
  const float* qd = q.data_as<const float>();
  const float* kd = k.data_as<const float>();
  const float* vd = v.data_as<const float>();
  const char* md = mask == nullptr ? nullptr : static_cast<const char*>(mask->data());
  const int64_t m_elem = mask == nullptr ? 0 : static_cast<int64_t>(mask->element_size());
  float* od = out->data_as<float>();
  auto run = [&](int64_t first, int64_t last, float* buf) {
    for (int64_t w = first; w < last; ++w) {
      const int64_t bi = w / blocks;
      Item it{qd, kd, vd, md, od, (w % blocks) * lanes};
      int64_t rest = bi;
      const char* mp = md;
      for (int d = b.dims - 1; d >= 0; --d) {
        const int64_t idx = rest % b.sizes[d];
        rest /= b.sizes[d];
        it.q += idx * b.q[d];
        it.out += idx * b.o[d];
        it.k += idx / b.kv_group[d] * b.k[d];
        it.v += idx / b.kv_group[d] * b.v[d];
        if (mp != nullptr) mp += idx * b.m[d] * m_elem;
      }
      it.mask = mp;
      if (decode) {
        attend_decode(g, it, buf);
      } else if (gemm) {
        if (!attend_gemm(g, it, lanes, buf)) {
          const int64_t w = block_queries();
          const int64_t end = it.i0 + lanes < g.L ? it.i0 + lanes : g.L;
          for (Item sub = it; sub.i0 < end; sub.i0 += w) attend_blocks(g, sub, buf, unit);
        }
      } else {
        attend_blocks(g, it, buf, unit);
      }
    }
  };
  if (parts == 1) {
    run(0, items, scratch);
    return;
  }
  run_parts_in_slots(parts, slots, [&](int64_t t, int64_t slot) {
    run(items * t / parts, items * (t + 1) / parts, scratch + per_part * static_cast<size_t>(slot));
  });
}

}  // namespace kernels
}  // namespace etrt
