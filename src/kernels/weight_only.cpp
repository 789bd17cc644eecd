// Weight-only quantized linear (etrt_quant::weight_only_linear): float32 activations, int8
// per-channel or int4 group-wise weights with float32 scales and optional int8 zero points, the
// programs torchao's quantize_ makes (weight_only.py folds their dequantize -> linear). Each
// weight is dequantized as torchao does, (q - zero) * scale, with the scale taken out of the
// group's sum: the result differs from torchao's only by float rounding (docs/quantization.md).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "etrt/runtime/parallel.h"
#include "heavy.h"
#include "isa_dispatch.h"
#include "util.h"

namespace etrt {
namespace kernels {
namespace {

struct WeightOnlyArgs {
  const float* x = nullptr;     // [rows][k]
  const uint8_t* weight = nullptr;  // int4: [n][k / 2] tiled (weight_only_isa.inc); int8: [n][k]
  const void* scales = nullptr;     // [n][groups], tiled as the weight, of scale_kind
  int scale_kind = 0;               // the scales' dtype: 0 float32, 1 bfloat16, 2 float16
  const int8_t* zeros = nullptr;    // as the scales, or null
  const float* bias = nullptr;      // [n] or null
  const float* xsum = nullptr;      // [rows][groups]: each group's sum of x
  float* out = nullptr;             // [rows][n]
  int64_t rows = 0, k = 0, n = 0, groups = 1, group_size = 0;
  int bits = 8;
};

// etrt_quant::dynamic_int4_linear's operands (weight_only_isa.inc, dq_rows).
struct DotArgs {
  const int8_t* x = nullptr;        // [rows][k] int8 activations
  const float* xscale = nullptr;    // [rows]
  const int8_t* xzero = nullptr;    // [rows] or null
  const uint8_t* weight = nullptr;  // [n][k / 2], tile_int4_dot's layout
  const void* scales = nullptr;     // [n][groups] in blocks of 8 channels, of scale_kind
  int scale_kind = 0;
  const int8_t* zeros = nullptr;    // as the scales, or null
  const float* wsum = nullptr;      // [n]: each channel's sum of dequantized weights
  const float* bias = nullptr;      // [n] or null
  const int32_t* xsum = nullptr;    // [rows][groups]: each group's sum of x
  float* out = nullptr;             // [rows][n]
  int64_t rows = 0, k = 0, n = 0, groups = 1, group_size = 0;
};

// Scale i as float32, exactly (torchao's bfloat16 / float16 scales widen without rounding).
inline float scale_value(const void* scales, int kind, int64_t i) {
  switch (kind) {
    case 1: return bfloat16_to_float(static_cast<const uint16_t*>(scales)[i]);
    case 2: return half_to_float(static_cast<const uint16_t*>(scales)[i]);
    default: return static_cast<const float*>(scales)[i];
  }
}

inline float scale_at(const WeightOnlyArgs& a, int64_t i) { return scale_value(a.scales, a.scale_kind, i); }

// 0 float32, 1 bfloat16, 2 float16; -1 for any other dtype.
int scale_kind_of(ScalarType t) {
  switch (t) {
    case ScalarType::Float: return 0;
    case ScalarType::BFloat16: return 1;
    case ScalarType::Half: return 2;
    default: return -1;
  }
}

}  // namespace

#define ETRT_ISA_FILE "weight_only_isa.inc"
#include "isa_clones.inc"
#undef ETRT_ISA_FILE

namespace {

void run_rows(const WeightOnlyArgs& a, int64_t n0, int64_t n1) {
#if ETRT_ISA_X86
  switch (isa_level()) {
    case 2: return isa_avx512::wo_rows(a, n0, n1);
    case 1: return isa_avx2::wo_rows(a, n0, n1);
    default: return isa_sse2::wo_rows(a, n0, n1);
  }
#else
  isa_generic::wo_rows(a, n0, n1);
#endif
}

constexpr int64_t kDotTileChannels = 8;  // dynamic_int4_linear's (kDotTile)

#if ETRT_ISA_X86 && defined(__GNUC__)
#define ETRT_DQ_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,f16c,fma")))

// dq_tile (weight_only_isa.inc) with vpdpbusd: a 64-byte load is two 8-column steps of a block,
// 8 channels x 4 columns per half in both nibbles, the nibbles unsigned against the int8
// activations; a group's sum stays int32 (|sum| <= 256 * 15 * 128), so no int16 runs. The same
// exact group sums and the same float steps after them: equal to dq_tile bit for bit.
template <int MR, int NB>
ETRT_DQ_VNNI void dq_vnni_tile(const DotArgs& a, int64_t m0, int64_t c0) {
  const int64_t steps = a.group_size / 8, block_bytes = kDotTileChannels * (a.k / 2);
  const uint8_t* wb[NB];
  int64_t sb[NB];
  for (int b = 0; b < NB; ++b) {
    const int64_t block = c0 / kDotTileChannels + b;
    wb[b] = a.weight + block * block_bytes;
    sb[b] = block * kDotTileChannels * a.groups;
  }
  const int8_t* xr[MR];
  for (int r = 0; r < MR; ++r) xr[r] = a.x + (m0 + r) * a.k;
  // Decoding streams every weight once from memory, faster than the hardware prefetchers
  // fetch it (half the rate, on a Zen 5): each load asks for the next tile's line at the same
  // column, and each group for its scales.
  const int64_t ahead = NB * block_bytes, scale_bytes = a.scale_kind == 0 ? 4 : 2;
  const __m512i low = _mm512_set1_epi8(15);
  // Lanes 0-7 take 4 activations of the first step, lanes 8-15 of the second: int32 elements
  // 0 and 2 of 16 activations for the low nibbles (columns i, 8 + i), 1 and 3 for the high ones.
  const __m512i pick_lo = _mm512_set_epi32(2, 2, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0);
  const __m512i pick_hi = _mm512_set_epi32(3, 3, 3, 3, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1);
  __m256 tot[MR][NB];
  for (int r = 0; r < MR; ++r) {
    for (int b = 0; b < NB; ++b) tot[r][b] = _mm256_setzero_ps();
  }
  for (int64_t g = 0; g < a.groups; ++g) {
    __m512i acc[MR][NB];
    for (int r = 0; r < MR; ++r) {
      for (int b = 0; b < NB; ++b) acc[r][b] = _mm512_setzero_si512();
    }
    for (int64_t t = 0; t < steps; t += 2) {
      const int64_t col = g * a.group_size + t * 8;
      const bool pair = t + 1 < steps;  // an odd last step: the upper half's weights load as zeros
      __m512i xlo[MR], xhi[MR];
      for (int r = 0; r < MR; ++r) {
        const __m128i* p = reinterpret_cast<const __m128i*>(xr[r] + col);
        const __m512i xv = _mm512_castsi128_si512(pair ? _mm_loadu_si128(p) : _mm_loadl_epi64(p));
        xlo[r] = _mm512_permutexvar_epi32(pick_lo, xv);
        xhi[r] = _mm512_permutexvar_epi32(pick_hi, xv);
      }
      for (int b = 0; b < NB; ++b) {
        const uint8_t* p = wb[b] + col * 4;
        _mm_prefetch(reinterpret_cast<const char*>(p + ahead), _MM_HINT_T0);
        const __m512i v = pair ? _mm512_loadu_si512(p) : _mm512_maskz_loadu_epi32(0x00FF, p);
        const __m512i lo = _mm512_and_si512(v, low), hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), low);
        for (int r = 0; r < MR; ++r) {
          acc[r][b] = _mm512_dpbusd_epi32(acc[r][b], lo, xlo[r]);
          acc[r][b] = _mm512_dpbusd_epi32(acc[r][b], hi, xhi[r]);
        }
      }
    }
    for (int b = 0; b < NB; ++b) {
      const int64_t i = sb[b] + g * kDotTileChannels;
      _mm_prefetch(static_cast<const char*>(a.scales) + (i + NB * kDotTileChannels * a.groups) * scale_bytes, _MM_HINT_T0);
      const __m256 s = isa_avx512::dq_scales(a, i);
      __m256 off = _mm256_set1_ps(8.0f);
      if (a.zeros != nullptr) {
        _mm_prefetch(reinterpret_cast<const char*>(a.zeros + i + NB * kDotTileChannels * a.groups), _MM_HINT_T0);
        const __m128i z = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(a.zeros + i));
        off = _mm256_add_ps(off, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(z)));
      }
      for (int r = 0; r < MR; ++r) {
        const __m256i sum = _mm256_add_epi32(_mm512_castsi512_si256(acc[r][b]), _mm512_extracti64x4_epi64(acc[r][b], 1));
        const __m256 xsum = _mm256_set1_ps(static_cast<float>(a.xsum[(m0 + r) * a.groups + g]));
        tot[r][b] = _mm256_fmadd_ps(s, _mm256_fnmadd_ps(off, xsum, _mm256_cvtepi32_ps(sum)), tot[r][b]);
      }
    }
  }
  for (int r = 0; r < MR; ++r) {
    const int64_t m = m0 + r;
    const __m256 xs = _mm256_set1_ps(a.xscale[m]);
    const __m256 zx = _mm256_set1_ps(a.xzero != nullptr ? static_cast<float>(a.xzero[m]) : 0.0f);
    for (int b = 0; b < NB; ++b) {
      const int64_t c = c0 + b * kDotTileChannels;
      const __m256 bias = a.bias != nullptr ? _mm256_loadu_ps(a.bias + c) : _mm256_setzero_ps();
      const __m256 centred = _mm256_fnmadd_ps(zx, _mm256_loadu_ps(a.wsum + c), tot[r][b]);
      _mm256_storeu_ps(a.out + m * a.n + c, _mm256_fmadd_ps(xs, centred, bias));
    }
  }
}

// dq_rows with VNNI tiles: pairs of blocks, four rows at a time, the narrow last block in plain loops.
void dq_vnni_rows(const DotArgs& a, int64_t n0, int64_t n1) {
  const int64_t whole = n0 + (n1 - n0) / kDotTileChannels * kDotTileChannels;
  int64_t c = n0;
  for (; c + 2 * kDotTileChannels <= whole; c += 2 * kDotTileChannels) {
    int64_t m = 0;
    for (; m + 4 <= a.rows; m += 4) dq_vnni_tile<4, 2>(a, m, c);
    for (; m < a.rows; ++m) dq_vnni_tile<1, 2>(a, m, c);
  }
  if (c < whole) {
    int64_t m = 0;
    for (; m + 4 <= a.rows; m += 4) dq_vnni_tile<4, 1>(a, m, c);
    for (; m < a.rows; ++m) dq_vnni_tile<1, 1>(a, m, c);
    c += kDotTileChannels;
  }
  if (c < n1) isa_avx512::dq_block_scalar(a, c, n1 - c, 0, a.rows);
}
#endif

void run_dot_rows(const DotArgs& a, int64_t n0, int64_t n1) {
#if ETRT_ISA_X86 && defined(__GNUC__)
  if (int8_vnni_enabled()) return dq_vnni_rows(a, n0, n1);
#endif
#if ETRT_ISA_X86
  switch (isa_level()) {
    case 2: return isa_avx512::dq_rows(a, n0, n1);
    case 1: return isa_avx2::dq_rows(a, n0, n1);
    default: return isa_sse2::dq_rows(a, n0, n1);
  }
#else
  isa_generic::dq_rows(a, n0, n1);
#endif
}

// The scales and zero points of n channels in `groups` groups and the bias: each fails naming itself.
bool check_channel_params(KernelContext& ctx, const char* op, const Tensor* scales, const Tensor* zeros,
                          const Tensor* bias, int64_t n, int64_t groups) {
  if (scale_kind_of(scales->dtype()) < 0 || scales->numel() != n * groups) {
    fail(ctx, op, "scales must be float32, bfloat16 or float16 with " + std::to_string(n * groups) + " values (" +
                      std::to_string(n) + " channels x " + std::to_string(groups) + " groups)");
    return false;
  }
  if (zeros != nullptr && (zeros->dtype() != ScalarType::Char || zeros->numel() != n * groups)) {
    fail(ctx, op, "zero_points must be int8 with one value per channel and group");
    return false;
  }
  if (bias != nullptr && (bias->dtype() != ScalarType::Float || bias->numel() != n)) {
    fail(ctx, op, "bias must be float32 with " + std::to_string(n) + " values");
    return false;
  }
  return true;
}

// Each group's sum of x [rows][k], in S (int32 for int8 values: exact), in the call's scratch.
template <typename S, typename T>
const S* group_sums(KernelContext& ctx, const T* x, int64_t rows, int64_t k, int64_t group_size) {
  const int64_t groups = k / group_size;
  auto* sums = static_cast<S*>(ctx.allocate_temp(static_cast<size_t>(std::max<int64_t>(rows * groups, 1)) * sizeof(S)));
  if (sums == nullptr) return nullptr;
  for (int64_t m = 0; m < rows; ++m) {
    for (int64_t g = 0; g < groups; ++g) {
      const T* xg = x + m * k + g * group_size;
      S s = 0;
      for (int64_t j = 0; j < group_size; ++j) s += xg[j];
      sums[m * groups + g] = s;
    }
  }
  return sums;
}

// The float32 output [..., n] of a linear of input x [..., k].
Tensor* linear_output(KernelContext& ctx, const char* op, Span<Value*> args, size_t index, const Tensor& x, int64_t n) {
  int64_t sizes[kMaxDims];
  for (int d = 0; d < x.dim(); ++d) sizes[d] = x.size(d);
  sizes[x.dim() - 1] = n;
  return output_arg(ctx, op, args, index, ScalarType::Float, Span<const int64_t>(sizes, static_cast<size_t>(x.dim())));
}

constexpr int64_t kTileChannels = 16;  // the layout's block of output channels (kTile)

}  // namespace

// input [..., K] float32, weight (int4: uint8 [N, K / 2]; int8: int8 [N, K]; tiled), scales
// [N, G] (float32, bfloat16 or float16; tiled), zero_points int8 [N, G]? (as the scales), bias float32 [N]?, bits,
// group_size, tile (the layout's block of channels, which programs record so that a layout change is refused, not
// misread) | out [..., N] float32
void op_weight_only_linear(KernelContext& ctx, Span<Value*> args) {
  const char* op = "etrt_quant::weight_only_linear";
  if (args.size() == 8) {  // the untiled rows of etrt before the tiled layout
    return fail(ctx, op, "the program stores its weights in rows, an earlier etrt's layout: export it again");
  }
  if (!check_nargs(ctx, op, args, 9)) return;
  int64_t tile = 0;
  if (!int_arg(ctx, op, args, 7, "tile", &tile)) return;
  if (tile != kTileChannels) {
    return fail(ctx, op, "weights tiled by " + std::to_string(tile) + " channels; this etrt reads tiles of " +
                             std::to_string(kTileChannels) + ": export the program again");
  }
  Tensor* x = tensor_arg(ctx, op, args, 0, "input");
  Tensor* w = tensor_arg(ctx, op, args, 1, "weight");
  Tensor* scales = tensor_arg(ctx, op, args, 2, "scales");
  Tensor* zeros = nullptr;
  Tensor* bias = nullptr;
  int64_t bits = 0, group_size = 0;
  if (x == nullptr || w == nullptr || scales == nullptr ||
      !optional_tensor_arg(ctx, op, args, 3, "zero_points", &zeros) ||
      !optional_tensor_arg(ctx, op, args, 4, "bias", &bias) || !int_arg(ctx, op, args, 5, "bits", &bits) ||
      !int_arg(ctx, op, args, 6, "group_size", &group_size)) {
    return;
  }
  for (const Tensor* t : {x, w, scales, zeros, bias}) {
    if (t != nullptr && (!check_has_data(ctx, op, *t, "argument") || !t->is_contiguous())) {
      return fail(ctx, op, "arguments must be contiguous tensors with data");
    }
  }
  if (bits != 4 && bits != 8) return fail(ctx, op, "bits must be 4 or 8, got " + std::to_string(bits));
  if (x->dtype() != ScalarType::Float) return fail(ctx, op, std::string("input must be float32, got ") + to_string(x->dtype()));
  const ScalarType wt = bits == 4 ? ScalarType::Byte : ScalarType::Char;
  if (w->dim() != 2 || w->dtype() != wt) {
    return fail(ctx, op, std::string("weight must be a 2-D ") + (bits == 4 ? "uint8 (two int4 per byte)" : "int8") +
                             " tensor, got " + to_string(w->dtype()) + " " + shape_string(w->sizes()));
  }
  const int64_t n = w->size(0), k = bits == 4 ? w->size(1) * 2 : w->size(1);
  if (x->dim() < 1 || x->size(-1) != k) {
    return fail(ctx, op, "input " + shape_string(x->sizes()) + " does not match " + std::to_string(k) +
                             " weight columns");
  }
  if (group_size <= 0 || k % group_size != 0 || (bits == 4 && group_size % 2 != 0)) {
    return fail(ctx, op, "group_size " + std::to_string(group_size) + " does not divide " + std::to_string(k) +
                             " columns into groups" + (bits == 4 ? " of an even size" : ""));
  }
  const int64_t groups = k / group_size;
  if (!check_channel_params(ctx, op, scales, zeros, bias, n, groups)) return;
  Tensor* out = linear_output(ctx, op, args, 8, *x, n);
  if (out == nullptr) return;
  WeightOnlyArgs a;
  a.rows = 1;
  for (int d = 0; d + 1 < x->dim(); ++d) a.rows *= x->size(d);
  a.k = k;
  a.n = n;
  a.groups = groups;
  a.group_size = group_size;
  a.bits = static_cast<int>(bits);
  a.x = x->data_as<float>();
  a.weight = static_cast<const uint8_t*>(w->data());
  a.scales = scales->data();
  a.scale_kind = scale_kind_of(scales->dtype());
  a.zeros = zeros != nullptr ? zeros->data_as<int8_t>() : nullptr;
  a.bias = bias != nullptr ? bias->data_as<float>() : nullptr;
  a.out = out->data_as<float>();
  a.xsum = group_sums<float>(ctx, a.x, a.rows, k, group_size);
  if (a.xsum == nullptr) return fail(ctx, op, "out of memory for the input's group sums");
  if (a.rows == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t m = 0; m < a.rows; ++m) {
      for (int64_t c = 0; c < n; ++c) a.out[m * n + c] = a.bias != nullptr ? a.bias[c] : 0.0f;
    }
    return;
  }
  // Threads take whole blocks of the tiled layout. Every row count runs the same tiles: they
  // unpack each weight once per 8 rows (AVX-512) and keep up with the float GEMM from 64 rows
  // on, faster below (docs/quantization.md).
  const int64_t blocks = (n + kTileChannels - 1) / kTileChannels;
  parallel_chunks(blocks, a.rows * k * kTileChannels, [&](int64_t b0, int64_t b1) {
    run_rows(a, b0 * kTileChannels, std::min(n, b1 * kTileChannels));
  });
}

// input int8 [..., K], input_scales float32 (one per row), input_zero_points int8 (one per row)?,
// weight uint8 [N, K / 2] (tile_int4_dot), scales [N, G] (float32, bfloat16 or float16) and
// zero_points int8 [N, G]? in blocks of 8 channels, weight_sums float32 [N], bias float32 [N]?,
// group_size (a multiple of 8), tile | out [..., N] float32: the linear of torchao's 8da4w,
// ((x - xz) * xs) times the dequantized weight, with integer sums inside each group.
void op_dynamic_int4_linear(KernelContext& ctx, Span<Value*> args) {
  const char* op = "etrt_quant::dynamic_int4_linear";
  if (!check_nargs(ctx, op, args, 11)) return;
  int64_t group_size = 0, tile = 0;
  if (!int_arg(ctx, op, args, 8, "group_size", &group_size) || !int_arg(ctx, op, args, 9, "tile", &tile)) return;
  if (tile != kDotTileChannels) {
    return fail(ctx, op, "weights tiled by " + std::to_string(tile) + " channels; this etrt reads tiles of " +
                             std::to_string(kDotTileChannels) + ": export the program again");
  }
  Tensor* x = tensor_arg(ctx, op, args, 0, "input");
  Tensor* xs = tensor_arg(ctx, op, args, 1, "input_scales");
  Tensor *xz = nullptr, *zeros = nullptr, *bias = nullptr;
  Tensor* w = tensor_arg(ctx, op, args, 3, "weight");
  Tensor* scales = tensor_arg(ctx, op, args, 4, "scales");
  Tensor* wsum = tensor_arg(ctx, op, args, 6, "weight_sums");
  if (x == nullptr || xs == nullptr || w == nullptr || scales == nullptr || wsum == nullptr ||
      !optional_tensor_arg(ctx, op, args, 2, "input_zero_points", &xz) ||
      !optional_tensor_arg(ctx, op, args, 5, "zero_points", &zeros) ||
      !optional_tensor_arg(ctx, op, args, 7, "bias", &bias)) {
    return;
  }
  for (const Tensor* t : {x, xs, xz, w, scales, zeros, wsum, bias}) {
    if (t != nullptr && (!check_has_data(ctx, op, *t, "argument") || !t->is_contiguous())) {
      return fail(ctx, op, "arguments must be contiguous tensors with data");
    }
  }
  if (x->dtype() != ScalarType::Char || x->dim() < 1) {
    return fail(ctx, op, std::string("input must be int8 with at least one dimension, got ") + to_string(x->dtype()) +
                             " " + shape_string(x->sizes()));
  }
  if (w->dim() != 2 || w->dtype() != ScalarType::Byte) {
    return fail(ctx, op, std::string("weight must be a 2-D uint8 tensor (two int4 per byte), got ") +
                             to_string(w->dtype()) + " " + shape_string(w->sizes()));
  }
  const int64_t n = w->size(0), k = w->size(1) * 2;
  if (x->size(-1) != k) {
    return fail(ctx, op, "input " + shape_string(x->sizes()) + " does not match " + std::to_string(k) +
                             " weight columns");
  }
  if (group_size <= 0 || group_size % 8 != 0 || k % group_size != 0) {
    return fail(ctx, op, "group_size " + std::to_string(group_size) + " does not divide " + std::to_string(k) +
                             " columns into groups of a multiple of 8");
  }
  // Each group's integer sum must stay exact as a float32 (below 2^24, 256 * 136 * 128 at most per column).
  if (group_size > 256) return fail(ctx, op, "group_size " + std::to_string(group_size) + " is above 256");
  const int64_t groups = k / group_size, rows = x->numel() / std::max<int64_t>(k, 1);
  if (xs->dtype() != ScalarType::Float || xs->numel() != rows) {
    return fail(ctx, op, "input_scales must be float32 with one value per input row (" + std::to_string(rows) + ")");
  }
  if (xz != nullptr && (xz->dtype() != ScalarType::Char || xz->numel() != rows)) {
    return fail(ctx, op, "input_zero_points must be int8 with one value per input row (" + std::to_string(rows) + ")");
  }
  if (!check_channel_params(ctx, op, scales, zeros, bias, n, groups)) return;
  if (wsum->dtype() != ScalarType::Float || wsum->numel() != n) {
    return fail(ctx, op, "weight_sums must be float32 with " + std::to_string(n) + " values");
  }
  Tensor* out = linear_output(ctx, op, args, 10, *x, n);
  if (out == nullptr) return;
  DotArgs a;
  a.rows = rows;
  a.k = k;
  a.n = n;
  a.groups = groups;
  a.group_size = group_size;
  a.x = x->data_as<int8_t>();
  a.xscale = xs->data_as<float>();
  a.xzero = xz != nullptr ? xz->data_as<int8_t>() : nullptr;
  a.weight = static_cast<const uint8_t*>(w->data());
  a.scales = scales->data();
  a.scale_kind = scale_kind_of(scales->dtype());
  a.zeros = zeros != nullptr ? zeros->data_as<int8_t>() : nullptr;
  a.wsum = wsum->data_as<float>();
  a.bias = bias != nullptr ? bias->data_as<float>() : nullptr;
  a.out = out->data_as<float>();
  if (rows == 0 || n == 0) return;
  a.xsum = group_sums<int32_t>(ctx, a.x, rows, k, group_size);
  if (a.xsum == nullptr) return fail(ctx, op, "out of memory for the input's group sums");
  if (k == 0) {
    for (int64_t m = 0; m < rows; ++m) {
      for (int64_t c = 0; c < n; ++c) a.out[m * n + c] = a.bias != nullptr ? a.bias[c] : 0.0f;
    }
    return;
  }
  const int64_t blocks = (n + kDotTileChannels - 1) / kDotTileChannels;
  parallel_chunks(blocks, rows * k * kDotTileChannels, [&](int64_t b0, int64_t b1) {
    run_dot_rows(a, b0 * kDotTileChannels, std::min(n, b1 * kDotTileChannels));
  });
}

namespace {

// One row of torchao's per-row asymmetric activation quantization, its float32 steps as the
// exported graph computes them: min and max widened to 0, scale = (max - min) / (qmax - qmin)
// clamped to eps, zero = qmin - round(min / scale) clamped, values round(x * (1 / scale)) + zero
// clamped; NaN converts to 0 (as _to_copy does).
ETRT_ISA_BODY void quantize_row_body(const float* x, int64_t k, float eps, float qmin, float qmax, int8_t* q,
                                     float* scale, int8_t* zero) {
  // Min and max in 16 lanes (GCC's vectors: one register with AVX-512, four with SSE2), NaN
  // tracked apart: amin / amax give NaN for a row holding one.
  typedef float F16 __attribute__((vector_size(64)));
  typedef int32_t I16 __attribute__((vector_size(64)));
  float lo = x[0], hi = x[0];
  bool nan = false;
  int64_t i = 0;
  if (k >= 16) {
    F16 vlo, vhi;
    std::memcpy(&vlo, x, sizeof vlo);
    vhi = vlo;
    I16 vnan = vlo != vlo;
    for (i = 16; i + 16 <= k; i += 16) {
      F16 v;
      std::memcpy(&v, x + i, sizeof v);
      vlo = v < vlo ? v : vlo;
      vhi = v > vhi ? v : vhi;
      vnan |= v != v;
    }
    for (int l = 0; l < 16; ++l) {
      lo = vlo[l] < lo ? vlo[l] : lo;
      hi = vhi[l] > hi ? vhi[l] : hi;
      nan |= vnan[l] != 0;
    }
  }
  for (; i < k; ++i) {
    const float v = x[i];
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
    nan |= v != v;
  }
  if (nan) lo = hi = std::numeric_limits<float>::quiet_NaN();
  lo = lo > 0.0f ? 0.0f : lo;  // minimum(amin, 0) and maximum(amax, 0): NaN stays
  hi = hi < 0.0f ? 0.0f : hi;
  float s = (hi - lo) / (qmax - qmin);
  s = s < eps ? eps : s;
  auto to_int8 = [qmin, qmax](float v) -> int8_t {
    v = v < qmin ? qmin : v;
    v = v > qmax ? qmax : v;
    return v == v ? static_cast<int8_t>(static_cast<int32_t>(v)) : 0;
  };
  const int8_t z = to_int8(qmin - std::nearbyint(lo / s));
  const float inv = 1.0f / s, zf = static_cast<float>(z);
  for (int64_t i = 0; i < k; ++i) q[i] = to_int8(std::nearbyint(x[i] * inv) + zf);
  *scale = s;
  *zero = z;
}
ETRT_ISA_DISPATCH(void, quantize_row,
                  (const float* x, int64_t k, float eps, float qmin, float qmax, int8_t* q, float* scale,
                   int8_t* zero),
                  (x, k, eps, qmin, qmax, q, scale, zero))

}  // namespace

// input float32 [..., K], eps, quant_min, quant_max | values int8 [..., K], scales float32 [...],
// zero_points int8 [...]: torchao's per-row asymmetric quantization of activations (8da4w), which
// the exporter folds from its ATen calls (row_quant.py).
void op_quantize_rows(KernelContext& ctx, Span<Value*> args) {
  const char* op = "etrt_quant::quantize_rows";
  if (!check_nargs(ctx, op, args, 7)) return;
  Tensor* x = tensor_arg(ctx, op, args, 0, "input");
  double eps = 0.0;
  int64_t qmin = 0, qmax = 0;
  if (x == nullptr || !scalar_arg(ctx, op, args, 1, "eps", &eps) || !int_arg(ctx, op, args, 2, "quant_min", &qmin) ||
      !int_arg(ctx, op, args, 3, "quant_max", &qmax)) {
    return;
  }
  if (!check_dtype(ctx, op, *x, "input", ScalarType::Float)) return;
  if (x->dim() < 1 || x->size(-1) == 0) {
    return fail(ctx, op, "input must have rows of at least one value, got " + shape_string(x->sizes()));
  }
  if (qmin < -128 || qmax > 127 || qmin >= qmax) {
    return fail(ctx, op, "quant_min " + std::to_string(qmin) + " and quant_max " + std::to_string(qmax) +
                             " must be an int8 range, quant_min below quant_max");
  }
  if (!(eps >= 0.0)) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", eps);
    return fail(ctx, op, std::string("eps must be a number at or above 0, got ") + text);
  }
  if (!check_has_data(ctx, op, *x, "input")) return;
  Shape rows_shape = shape_of(*x);
  rows_shape.dim -= 1;
  Tensor* q = output_arg(ctx, op, args, 4, ScalarType::Char, x->sizes(), "values");
  Tensor* scales = q ? output_arg(ctx, op, args, 5, ScalarType::Float, rows_shape.span(), "scales") : nullptr;
  Tensor* zeros = scales ? output_arg(ctx, op, args, 6, ScalarType::Char, rows_shape.span(), "zero_points") : nullptr;
  if (zeros == nullptr) return;
  const float* xd = contiguous_f32(ctx, op, *x);
  if (xd == nullptr) return;
  const int64_t k = x->size(-1), rows = x->numel() / k;
  int8_t* qd = q->data_as<int8_t>();
  float* sd = scales->data_as<float>();
  int8_t* zd = zeros->data_as<int8_t>();
  const float fe = static_cast<float>(eps), lo = static_cast<float>(qmin), hi = static_cast<float>(qmax);
  parallel_chunks(rows, k, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) quantize_row(xd + r * k, k, fe, lo, hi, qd + r * k, sd + r, zd + r);
  });
}

// weight (as weight_only_linear's), scales [V, G], zero_points [V, G]?, indices (int64/int32),
// bits, group_size | out [*indices, D] float32: each row dequantized as torchao does,
// (q - zero) * scale, so the values equal the float embedding torchao's model looks up.
void op_weight_only_embedding(KernelContext& ctx, Span<Value*> args) {
  const char* op = "etrt_quant::weight_only_embedding";
  if (!check_nargs(ctx, op, args, 7)) return;
  Tensor* w = tensor_arg(ctx, op, args, 0, "weight");
  Tensor* scales = tensor_arg(ctx, op, args, 1, "scales");
  Tensor* zeros = nullptr;
  Tensor* idx = nullptr;
  int64_t bits = 0, group_size = 0;
  if (w == nullptr || scales == nullptr || !optional_tensor_arg(ctx, op, args, 2, "zero_points", &zeros) ||
      (idx = tensor_arg(ctx, op, args, 3, "indices")) == nullptr || !int_arg(ctx, op, args, 4, "bits", &bits) ||
      !int_arg(ctx, op, args, 5, "group_size", &group_size)) {
    return;
  }
  for (const Tensor* t : {w, scales, zeros}) {
    if (t != nullptr && (!check_has_data(ctx, op, *t, "argument") || !t->is_contiguous())) {
      return fail(ctx, op, "weight, scales and zero_points must be contiguous tensors with data");
    }
  }
  if (!check_has_data(ctx, op, *idx, "indices")) return;
  if (bits != 4 && bits != 8) return fail(ctx, op, "bits must be 4 or 8, got " + std::to_string(bits));
  const ScalarType wt = bits == 4 ? ScalarType::Byte : ScalarType::Char;
  if (w->dim() != 2 || w->dtype() != wt) return fail(ctx, op, std::string("weight must be 2-D ") + to_string(wt));
  const int64_t rows = w->size(0), d = bits == 4 ? w->size(1) * 2 : w->size(1);
  if (group_size <= 0 || d % group_size != 0 || (bits == 4 && group_size % 2 != 0)) {
    return fail(ctx, op, "group_size " + std::to_string(group_size) + " does not divide " + std::to_string(d) +
                             " columns into groups");
  }
  const int64_t groups = d / group_size;
  if (scale_kind_of(scales->dtype()) < 0 || scales->numel() != rows * groups) {
    return fail(ctx, op, "scales must be float32, bfloat16 or float16 with one value per row and group");
  }
  if (zeros != nullptr && (zeros->dtype() != ScalarType::Char || zeros->numel() != rows * groups)) {
    return fail(ctx, op, "zero_points must be int8 with one value per row and group");
  }
  if (idx->dtype() != ScalarType::Long && idx->dtype() != ScalarType::Int) {
    return fail(ctx, op, std::string("indices must be int64 or int32, got ") + to_string(idx->dtype()));
  }
  if (idx->dim() + 1 > kMaxDims) return fail(ctx, op, "indices have too many dimensions");
  int64_t out_sizes[kMaxDims];
  for (int i = 0; i < idx->dim(); ++i) out_sizes[i] = idx->size(i);
  out_sizes[idx->dim()] = d;
  Tensor* out = output_arg(ctx, op, args, 6, ScalarType::Float,
                           Span<const int64_t>(out_sizes, static_cast<size_t>(idx->dim() + 1)));
  if (out == nullptr) return;
  const auto* wd = static_cast<const uint8_t*>(w->data());
  WeightOnlyArgs sa;  // only its scales, read through scale_at
  sa.scales = scales->data();
  sa.scale_kind = scale_kind_of(scales->dtype());
  const int8_t* zd = zeros != nullptr ? zeros->data_as<int8_t>() : nullptr;
  const int64_t row_bytes = bits == 4 ? d / 2 : d, half = group_size / 2;
  int64_t bad_index = 0;
  const bool ok = for_each_index_row(*idx, *out, d, [&](int64_t r, char* row) {
    if (r < 0 || r >= rows) {
      bad_index = r;
      return false;
    }
    const uint8_t* wr = wd + r * row_bytes;
    auto* o = reinterpret_cast<float*>(row);
    for (int64_t g = 0; g < groups; ++g) {
      const float s = scale_at(sa, r * groups + g);
      const float z = zd != nullptr ? static_cast<float>(zd[r * groups + g]) : 0.0f;
      float* og = o + g * group_size;
      if (bits == 4) {
        const uint8_t* p = wr + g * half;
        for (int64_t j = 0; j < half; ++j) {
          og[j] = (static_cast<float>(static_cast<int>(p[j] & 15) - 8) - z) * s;
          og[half + j] = (static_cast<float>(static_cast<int>(p[j] >> 4) - 8) - z) * s;
        }
      } else {
        const auto* q = reinterpret_cast<const int8_t*>(wr) + g * group_size;
        for (int64_t j = 0; j < group_size; ++j) og[j] = (static_cast<float>(q[j]) - z) * s;
      }
    }
    return true;
  });
  if (!ok) {
    fail(ctx, op, "index " + std::to_string(bad_index) + " is out of range for " + std::to_string(rows) + " rows");
  }
}

}  // namespace kernels
}  // namespace etrt
