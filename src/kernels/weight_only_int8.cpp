// etrt_quant::int8_mm: int8 activations times int8 weights summed in int32, the integer product
// of torchao's dynamic int8 scheme (Int8DynamicActivationInt8WeightConfig: activations quantized
// per token at run time, weights per channel). The exporter folds torchao's
// _int_mm(x + 128 as uint8, W^T) - 128 * sum(W) into it (weight_only.py); the result is exact,
// so the program's output equals torchao's up to the float ops around it.
#include <algorithm>
#include <cstdint>

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

ETRT_ISA_BODY int32_t dot_i8_body(const int8_t* a, const int8_t* b, int64_t k) {
  int32_t s = 0;
  for (int64_t i = 0; i < k; ++i) s += static_cast<int32_t>(a[i]) * static_cast<int32_t>(b[i]);
  return s;
}
ETRT_ISA_DISPATCH(int32_t, dot_i8, (const int8_t* a, const int8_t* b, int64_t k), (a, b, k))

#if defined(__x86_64__) && defined(__GNUC__)
// sum_k u[k] * w[n][k] for four channels at once: vpdpbusd over 64 bytes per step.
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void vnni_dot4(const uint8_t* u, const int8_t* w,
                                                                        int64_t k, int64_t stride, int64_t count,
                                                                        int32_t* out) {
  __m512i acc[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                    _mm512_setzero_si512()};
  int64_t j = 0;
  for (; j + 64 <= k; j += 64) {
    const __m512i a = _mm512_loadu_si512(u + j);
    for (int64_t c = 0; c < count; ++c) {
      // Decoding streams every weight once from memory: ask for the channels two blocks ahead.
      __builtin_prefetch(w + (c + 8) * stride + j);
      acc[c] = _mm512_dpbusd_epi32(acc[c], a, _mm512_loadu_si512(w + c * stride + j));
    }
  }
  if (j < k) {
    const __mmask64 m = (~0ULL) >> (64 - (k - j));
    const __m512i a = _mm512_maskz_loadu_epi8(m, u + j);
    for (int64_t c = 0; c < count; ++c) {
      acc[c] = _mm512_dpbusd_epi32(acc[c], a, _mm512_maskz_loadu_epi8(m, w + c * stride + j));
    }
  }
  for (int64_t c = 0; c < count; ++c) out[c] = _mm512_reduce_add_epi32(acc[c]);
}
#endif

}  // namespace

// Products of int8 values are at most 2^14 in magnitude: below this depth their int32 sum is exact.
constexpr int64_t kMaxDepth = (int64_t{1} << 17) - 1;

// input int8 [..., K], weight int8 [N, K], weight_sums int32 [N] (sum_k weight[n][k])
// | out int32 [..., N]
void op_int8_mm(KernelContext& ctx, Span<Value*> args) {
  const char* op = "etrt_quant::int8_mm";
  if (!check_nargs(ctx, op, args, 4)) return;
  Tensor* x = tensor_arg(ctx, op, args, 0, "input");
  Tensor* w = tensor_arg(ctx, op, args, 1, "weight");
  Tensor* ws = tensor_arg(ctx, op, args, 2, "weight_sums");
  if (x == nullptr || w == nullptr || ws == nullptr) return;
  for (const Tensor* t : {x, w, ws}) {
    if (!check_has_data(ctx, op, *t, "argument") || !t->is_contiguous()) {
      return fail(ctx, op, "arguments must be contiguous tensors with data");
    }
  }
  if (x->dtype() != ScalarType::Char || w->dtype() != ScalarType::Char || w->dim() != 2 || x->dim() < 1) {
    return fail(ctx, op, "input and weight must be int8, weight 2-D");
  }
  const int64_t n = w->size(0), k = w->size(1);
  if (x->size(-1) != k) {
    return fail(ctx, op, "input " + shape_string(x->sizes()) + " does not match weight " + shape_string(w->sizes()));
  }
  if (k > kMaxDepth) {
    return fail(ctx, op, "K " + std::to_string(k) + " is over " + std::to_string(kMaxDepth) +
                             ": the int32 sums would overflow");
  }
  if (ws->dtype() != ScalarType::Int || ws->numel() != n) {
    return fail(ctx, op, "weight_sums must be int32 with " + std::to_string(n) + " values");
  }
  int64_t out_sizes[kMaxDims];
  for (int d = 0; d < x->dim(); ++d) out_sizes[d] = x->size(d);
  out_sizes[x->dim() - 1] = n;
  Tensor* out =
      output_arg(ctx, op, args, 3, ScalarType::Int, Span<const int64_t>(out_sizes, static_cast<size_t>(x->dim())));
  if (out == nullptr) return;
  int64_t rows = 1;
  for (int d = 0; d + 1 < x->dim(); ++d) rows *= x->size(d);
  const int8_t* xd = x->data_as<int8_t>();
  const int8_t* wd = w->data_as<int8_t>();
  const int32_t* sums = ws->data_as<int32_t>();
  int32_t* od = out->data_as<int32_t>();
  if (rows == 0 || n == 0) return;
#if defined(__x86_64__) && defined(__GNUC__)
  if (int8_vnni_enabled() && k > 0) {
    // vpdpbusd multiplies unsigned by signed bytes: x + 128, less 128 * sum(w) after.
    auto* u = static_cast<uint8_t*>(ctx.allocate_temp(static_cast<size_t>(rows * k)));
    if (u == nullptr) return fail(ctx, op, "out of memory for the shifted input");
    for (int64_t i = 0; i < rows * k; ++i) u[i] = static_cast<uint8_t>(xd[i] ^ 0x80);
    parallel_chunks((n + 3) / 4, rows * k * 4, [&](int64_t b0, int64_t b1) {
      for (int64_t m = 0; m < rows; ++m) {
        for (int64_t blk = b0; blk < b1; ++blk) {
          const int64_t c0 = blk * 4, count = std::min<int64_t>(4, n - c0);
          int32_t acc[4];
          vnni_dot4(u + m * k, wd + c0 * k, k, k, count, acc);
          // modulo 2^32, as vpdpbusd sums: exact when the weight sums are right, never UB when not
          for (int64_t c = 0; c < count; ++c) {
            od[m * n + c0 + c] = static_cast<int32_t>(static_cast<uint32_t>(acc[c]) -
                                                      128u * static_cast<uint32_t>(sums[c0 + c]));
          }
        }
      }
    });
    return;
  }
#else
  (void)sums;
#endif
  parallel_chunks(n, rows * k, [&](int64_t c0, int64_t c1) {
    for (int64_t m = 0; m < rows; ++m) {
      for (int64_t c = c0; c < c1; ++c) od[m * n + c] = dot_i8(xd + m * k, wd + c * k, k);
    }
  });
}

}  // namespace kernels
}  // namespace etrt
