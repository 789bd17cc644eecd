// 2-D pooling. aten::max_pool2d_with_indices: ATen's semantics (padding never wins, NaN
// propagates, indices are flat positions h * W + w within each input plane). aten::avg_pool2d and
// aten::_adaptive_avg_pool2d: ATen's windows and divisors, summed in ATen's order. Resampling:
// upsample_nearest2d and upsample_bilinear2d with ATen's source-index arithmetic.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "heavy.h"
#include "util.h"

namespace etrt {
namespace kernels {
namespace {

constexpr const char* kOp = "aten::max_pool2d_with_indices";

struct PoolShape {
  int64_t planes, channels, h, w, oh, ow;
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  int64_t in_sn, in_sc, in_sh, in_sw;  // input strides (n, c, h, w)
};

// Work of `outputs` windows of `taps` each, saturated (each factor fits; the product may not).
int64_t window_cost(int64_t outputs, int64_t taps) { return checked::mul_sat(outputs, taps); }

// ATen's pooling_output_shape, through the shared checked window helper: -1 for parameters
// out of range or a window larger than the padded input.
int64_t pooled_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation, bool ceil) {
  int64_t out = 0;
  return checked::window(in, k, pad, pad, stride, dilation, ceil, &out) ? out : -1;
}

bool pool_list(KernelContext& ctx, Span<Value*> args, size_t i, const char* name, bool allow_empty,
               int64_t fallback[2], int64_t out[2], const char* op = kOp) {
  Span<const int64_t> v;
  if (!int_list_arg(ctx, op, args, i, name, &v)) return false;
  if (v.empty() && allow_empty) {
    out[0] = fallback[0];
    out[1] = fallback[1];
    return true;
  }
  if (v.size() != 1 && v.size() != 2) {
    fail(ctx, op, std::string("'") + name + "' must have 1 or 2 values, got " + std::to_string(v.size()));
    return false;
  }
  out[0] = v[0];
  out[1] = v[v.size() == 1 ? 0 : 1];
  return true;
}

// One output of the common 2x2 window: ATen's scan order, where a NaN or a strictly greater
// value replaces the current max. Returns the winner's offset: 0, 1, w or w + 1.
inline int64_t max4(float a, float b, float c, float d, int64_t w, float* out) {
  float m = a;
  int64_t off = 0;
  if (b > m || std::isnan(b)) { m = b; off = 1; }
  if (c > m || std::isnan(c)) { m = c; off = w; }
  if (d > m || std::isnan(d)) { m = d; off = w + 1; }
  *out = m;
  return off;
}

#if defined(__SSE2__)
// m = take ? v : m, lane-wise.
inline __m128 select_ps(__m128 take, __m128 v, __m128 m) {
  return _mm_or_ps(_mm_and_ps(take, v), _mm_andnot_ps(take, m));
}
inline __m128i select_epi32(__m128 take, __m128i v, __m128i m) {
  const __m128i t = _mm_castps_si128(take);
  return _mm_or_si128(_mm_and_si128(t, v), _mm_andnot_si128(t, m));
}
#endif

// The common 2x2 / stride 2 / no padding window over unit-stride rows. Post-ReLU data is full of
// ties and zeros, so the comparisons must not branch: four outputs at a time with SSE2 selects
// (every x86-64 has SSE2), the rest one by one.
void pool2x2_row(const float* r0, const float* r1, int64_t ow, int64_t base, int64_t w, float* out,
                 int64_t* idx) {
  int64_t x = 0;
#if defined(__SSE2__)
  const __m128i one = _mm_set1_epi32(1);
  const __m128i wide = _mm_set1_epi32(static_cast<int32_t>(w));
  const __m128i wide1 = _mm_set1_epi32(static_cast<int32_t>(w + 1));
  if (w + 1 <= INT32_MAX) {
    for (; x + 4 <= ow; x += 4) {
      const __m128 r0a = _mm_loadu_ps(r0 + 2 * x), r0b = _mm_loadu_ps(r0 + 2 * x + 4);
      const __m128 r1a = _mm_loadu_ps(r1 + 2 * x), r1b = _mm_loadu_ps(r1 + 2 * x + 4);
      const __m128 a = _mm_shuffle_ps(r0a, r0b, _MM_SHUFFLE(2, 0, 2, 0));
      const __m128 b = _mm_shuffle_ps(r0a, r0b, _MM_SHUFFLE(3, 1, 3, 1));
      const __m128 c = _mm_shuffle_ps(r1a, r1b, _MM_SHUFFLE(2, 0, 2, 0));
      const __m128 d = _mm_shuffle_ps(r1a, r1b, _MM_SHUFFLE(3, 1, 3, 1));
      __m128 m = a;
      __m128i off = _mm_setzero_si128();
      __m128 take = _mm_or_ps(_mm_cmpgt_ps(b, m), _mm_cmpunord_ps(b, b));
      m = select_ps(take, b, m);
      off = select_epi32(take, one, off);
      take = _mm_or_ps(_mm_cmpgt_ps(c, m), _mm_cmpunord_ps(c, c));
      m = select_ps(take, c, m);
      off = select_epi32(take, wide, off);
      take = _mm_or_ps(_mm_cmpgt_ps(d, m), _mm_cmpunord_ps(d, d));
      m = select_ps(take, d, m);
      off = select_epi32(take, wide1, off);
      _mm_storeu_ps(out + x, m);
      // Offsets are non-negative: widen to int64 by interleaving with zeros.
      const __m128i lo = _mm_unpacklo_epi32(off, _mm_setzero_si128());
      const __m128i hi = _mm_unpackhi_epi32(off, _mm_setzero_si128());
      const int64_t first = base + 2 * x;
      const __m128i pos_lo = _mm_set_epi64x(first + 2, first);
      const __m128i pos_hi = _mm_set_epi64x(first + 6, first + 4);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(idx + x), _mm_add_epi64(lo, pos_lo));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(idx + x + 2), _mm_add_epi64(hi, pos_hi));
    }
  }
#endif
  for (; x < ow; ++x) {
    idx[x] = base + 2 * x + max4(r0[2 * x], r0[2 * x + 1], r1[2 * x], r1[2 * x + 1], w, out + x);
  }
}

void pool_plane(const PoolShape& s, const float* in, float* out, int64_t* idx) {
  if (s.kh == 2 && s.kw == 2 && s.sh == 2 && s.sw == 2 && s.ph == 0 && s.pw == 0 && s.dh == 1 &&
      s.dw == 1 && s.in_sw == 1 && 2 * s.oh <= s.h && 2 * s.ow <= s.w) {
    for (int64_t y = 0; y < s.oh; ++y) {
      const float* r0 = in + 2 * y * s.in_sh;
      pool2x2_row(r0, r0 + s.in_sh, s.ow, 2 * y * s.w, s.w, out + y * s.ow, idx + y * s.ow);
    }
    return;
  }
  for (int64_t y = 0; y < s.oh; ++y) {
    int64_t h0 = y * s.sh - s.ph;
    const int64_t h1 = std::min(h0 + (s.kh - 1) * s.dh + 1, s.h);
    while (h0 < 0) h0 += s.dh;
    for (int64_t x = 0; x < s.ow; ++x) {
      int64_t w0 = x * s.sw - s.pw;
      const int64_t w1 = std::min(w0 + (s.kw - 1) * s.dw + 1, s.w);
      while (w0 < 0) w0 += s.dw;
      float m = -std::numeric_limits<float>::infinity();
      int64_t mi = h0 * s.w + w0;
      for (int64_t ih = h0; ih < h1; ih += s.dh) {
        const float* row = in + ih * s.in_sh;
        for (int64_t iw = w0; iw < w1; iw += s.dw) {
          const float v = row[iw * s.in_sw];
          if (v > m || std::isnan(v)) {
            m = v;
            mi = ih * s.w + iw;
          }
        }
      }
      out[y * s.ow + x] = m;
      idx[y * s.ow + x] = mi;
    }
  }
}

// Channels-last output: one output pixel, every channel at once (vectorised along the channels of
// a channels-last input), ATen's scan order and NaN rule. Indices (when wanted) go through their
// own channel stride.
ETRT_ISA_BODY void pool_nhwc_pixel_body(const PoolShape& s, const float* img, int64_t y, int64_t x, float* out, int64_t* idx,
                     int64_t idx_sc) {
  int64_t h0 = y * s.sh - s.ph;
  const int64_t h1 = std::min(h0 + (s.kh - 1) * s.dh + 1, s.h);
  while (h0 < 0) h0 += s.dh;
  int64_t w0 = x * s.sw - s.pw;
  const int64_t w1 = std::min(w0 + (s.kw - 1) * s.dw + 1, s.w);
  while (w0 < 0) w0 += s.dw;
  const int64_t c_end = s.channels;
  for (int64_t c = 0; c < c_end; ++c) out[c] = -std::numeric_limits<float>::infinity();
  if (idx != nullptr) {
    for (int64_t c = 0; c < c_end; ++c) idx[c * idx_sc] = h0 * s.w + w0;
  }
  for (int64_t ih = h0; ih < h1; ih += s.dh) {
    for (int64_t iw = w0; iw < w1; iw += s.dw) {
      const float* r = img + ih * s.in_sh + iw * s.in_sw;
      if (idx == nullptr && s.in_sc == 1) {
        for (int64_t c = 0; c < c_end; ++c) {
          const float v = r[c];
          out[c] = (v > out[c] || v != v) ? v : out[c];
        }
        continue;
      }
      const int64_t pos = ih * s.w + iw;
      for (int64_t c = 0; c < c_end; ++c) {
        const float v = r[c * s.in_sc];
        if (idx == nullptr) {
          out[c] = (v > out[c] || v != v) ? v : out[c];
          continue;
        }
        const bool take = v > out[c] || v != v;
        out[c] = take ? v : out[c];
        idx[c * idx_sc] = take ? pos : idx[c * idx_sc];
      }
    }
  }
}
ETRT_ISA_DISPATCH(void, pool_nhwc_pixel,
                  (const PoolShape& s, const float* img, int64_t y, int64_t x, float* out, int64_t* idx, int64_t idx_sc),
                  (s, img, y, x, out, idx, idx_sc))

// max_pool2d_with_indices (self, kernel_size, stride, padding, dilation, ceil_mode | out,
// indices) and max_pool2d (the same arguments | out): the values only, for graphs that never
// read the indices (the exporter rewrites them so). Contiguous or channels-last outputs.
void max_pool(KernelContext& ctx, Span<Value*> args, const char* op, bool with_indices) {
  if (!check_nargs(ctx, op, args, with_indices ? 8 : 7)) return;
  const Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  if (self == nullptr || !check_dtype(ctx, op, *self, "self", ScalarType::Float) ||
      !check_has_data(ctx, op, *self, "self")) {
    return;
  }
  if (self->dim() != 3 && self->dim() != 4) {
    fail(ctx, op, "input must be 3-D or 4-D, got " + shape_string(self->sizes()));
    return;
  }
  int64_t none[2] = {0, 0};
  int64_t kernel[2], stride[2], padding[2], dilation[2];
  bool ceil_mode = false;
  if (!pool_list(ctx, args, 1, "kernel_size", false, none, kernel, op) ||
      !pool_list(ctx, args, 2, "stride", true, kernel, stride, op) ||
      !pool_list(ctx, args, 3, "padding", false, none, padding, op) ||
      !pool_list(ctx, args, 4, "dilation", false, none, dilation, op) ||
      !bool_arg(ctx, op, args, 5, "ceil_mode", &ceil_mode)) {
    return;
  }
  for (int d = 0; d < 2; ++d) {
    if (kernel[d] < 1 || stride[d] < 1 || dilation[d] < 1 || padding[d] < 0) {
      fail(ctx, op, "kernel_size, stride and dilation must be positive and padding non-negative");
      return;
    }
    if (padding[d] > kernel[d] / 2) {
      fail(ctx, op, "padding should be at most half of the kernel size");
      return;
    }
  }
  const bool batched = self->dim() == 4;
  PoolShape s{};
  s.planes = batched ? self->size(0) : 1;
  s.channels = self->size(-3);
  s.h = self->size(-2);
  s.w = self->size(-1);
  s.kh = kernel[0];
  s.kw = kernel[1];
  s.sh = stride[0];
  s.sw = stride[1];
  s.ph = padding[0];
  s.pw = padding[1];
  s.dh = dilation[0];
  s.dw = dilation[1];
  s.in_sn = batched ? self->stride(0) : 0;
  s.in_sc = self->stride(-3);
  s.in_sh = self->stride(-2);
  s.in_sw = self->stride(-1);
  s.oh = pooled_size(s.h, s.kh, s.ph, s.sh, s.dh, ceil_mode);
  s.ow = pooled_size(s.w, s.kw, s.pw, s.sw, s.dw, ceil_mode);
  if (s.oh < 1 || s.ow < 1) {
    fail(ctx, op, "output size is empty for input " + shape_string(self->sizes()));
    return;
  }
  int64_t sizes[4];
  int nd = 0;
  if (batched) sizes[nd++] = s.planes;
  sizes[nd++] = s.channels;
  sizes[nd++] = s.oh;
  sizes[nd++] = s.ow;
  const Span<const int64_t> out_sizes(sizes, static_cast<size_t>(nd));
  Tensor* out = strided_output_arg(ctx, op, args, 6, ScalarType::Float, out_sizes);
  if (out == nullptr) return;
  Tensor* indices = nullptr;
  if (with_indices) {
    indices = strided_output_arg(ctx, op, args, 7, ScalarType::Long, out_sizes);
    if (indices == nullptr) return;
  }
  const bool nhwc = channels_last_dense(*out) && !out->is_contiguous();
  if (!nhwc && (!out->is_contiguous() || (indices != nullptr && !indices->is_contiguous()))) {
    fail(ctx, op, "outputs must be contiguous or channels-last");
    return;
  }
  const float* in = self->data_as<const float>();
  float* o = out->data_as<float>();
  int64_t* ix = indices != nullptr ? indices->data_as<int64_t>() : nullptr;
  if (nhwc) {
    const int64_t c = s.channels, rows = s.planes * s.oh;
    const int64_t isn = ix != nullptr ? indices->stride(0) : 0, isc = ix != nullptr ? indices->stride(1) : 0;
    const int64_t ish = ix != nullptr ? indices->stride(2) : 0, isw = ix != nullptr ? indices->stride(3) : 0;
    parallel_chunks(rows, window_cost(s.ow * c, s.kh * s.kw), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t n = r / s.oh, y = r % s.oh;
        for (int64_t x = 0; x < s.ow; ++x) {
          pool_nhwc_pixel(s, in + n * s.in_sn, y, x, o + (r * s.ow + x) * c,
                          ix != nullptr ? ix + n * isn + y * ish + x * isw : nullptr, isc);
        }
      }
    });
    return;
  }
  int64_t* scratch = nullptr;
  const int64_t plane_out = s.oh * s.ow;
  if (ix == nullptr) {  // the plane kernels track indices; they land in scratch
    scratch = static_cast<int64_t*>(ctx.allocate_temp(static_cast<size_t>(out->numel()) * sizeof(int64_t), 64));
    if (scratch == nullptr) {
      ctx.fail(Error(ErrorCode::OutOfMemory, std::string(op) + ": out of scratch memory"));
      return;
    }
  }
  int64_t* idx_base = ix != nullptr ? ix : scratch;
  parallel_chunks(s.planes * s.channels, window_cost(plane_out, s.kh * s.kw), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const int64_t n = p / s.channels, c = p % s.channels;
      pool_plane(s, in + n * s.in_sn + c * s.in_sc, o + p * plane_out, idx_base + p * plane_out);
    }
  });
}

}  // namespace

void op_max_pool2d_with_indices(KernelContext& ctx, Span<Value*> args) { max_pool(ctx, args, kOp, true); }

void op_max_pool2d(KernelContext& ctx, Span<Value*> args) { max_pool(ctx, args, "aten::max_pool2d", false); }

namespace {

// A [N, C, H, W] or [C, H, W] float input as planes of H x W; false after failing the call.
struct Planes {
  int64_t n = 1, c = 1, h = 0, w = 0;
  int64_t sn = 0, sc = 0, sh = 0, sw = 0;  // element strides
  int dims = 0;
};

bool planes_of(KernelContext& ctx, const char* op, const Tensor& x, Planes* p) {
  if (!check_dtype(ctx, op, x, "self", ScalarType::Float) || !check_has_data(ctx, op, x, "self")) return false;
  if (x.dim() != 3 && x.dim() != 4) {
    fail(ctx, op, "'self' must be 3-D or 4-D, got shape " + shape_string(x.sizes()));
    return false;
  }
  const int o = x.dim() - 3;
  p->dims = x.dim();
  p->n = o == 1 ? x.size(0) : 1;
  p->sn = o == 1 ? x.stride(0) : 0;
  p->c = x.size(o);
  p->sc = x.stride(o);
  p->h = x.size(o + 1);
  p->sh = x.stride(o + 1);
  p->w = x.size(o + 2);
  p->sw = x.stride(o + 2);
  return true;
}

Shape pooled_shape(const Planes& p, int64_t oh, int64_t ow) {
  Shape s;
  if (p.dims == 4) s.sizes[s.dim++] = p.n;
  s.sizes[s.dim++] = p.c;
  s.sizes[s.dim++] = oh;
  s.sizes[s.dim++] = ow;
  return s;
}

// Calls fn(in_plane, out_plane) for every (n, c) plane, split across threads when big.
template <typename F>
void for_planes(const Planes& p, const float* x, float* o, int64_t oh, int64_t ow, int64_t cost, F&& fn) {
  parallel_chunks(p.n * p.c, cost, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const int64_t ni = i / p.c, ci = i % p.c;
      fn(x + ni * p.sn + ci * p.sc, o + i * oh * ow);
    }
  });
}

// Channels-last average pooling: the window [h0, h1) x [w0, w1) of one output pixel summed for
// every channel at once (rows of `c` floats `sw` apart, `sh` a row), in the plane kernel's order
// (row by row, left to right) and divided the same way, so each channel gets its bits.
ETRT_ISA_BODY void avg_nhwc_pixel_body(const float* img, int64_t sh, int64_t sw, int64_t c, int64_t h0, int64_t h1,
                                       int64_t w0, int64_t w1, float div, float* out) {
  for (int64_t ch = 0; ch < c; ++ch) out[ch] = 0.0f;
  if (h1 <= h0 || w1 <= w0) return;
  for (int64_t i = h0; i < h1; ++i)
    for (int64_t j = w0; j < w1; ++j) {
      const float* r = img + i * sh + j * sw;
      for (int64_t ch = 0; ch < c; ++ch) out[ch] += r[ch];
    }
  for (int64_t ch = 0; ch < c; ++ch) out[ch] /= div;
}
ETRT_ISA_DISPATCH(void, avg_nhwc_pixel,
                  (const float* img, int64_t sh, int64_t sw, int64_t c, int64_t h0, int64_t h1, int64_t w0,
                   int64_t w1, float div, float* out),
                  (img, sh, sw, c, h0, h1, w0, w1, div, out))

}  // namespace

void op_avg_pool2d(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::avg_pool2d";
  if (!check_nargs(ctx, op, args, 8)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  Planes p;
  if (self == nullptr || !planes_of(ctx, op, *self, &p)) return;
  int64_t k[2], st[2], pad[2], none[2] = {0, 0};
  bool ceil_mode = false, include_pad = true;
  if (!pool_list(ctx, args, 1, "kernel_size", false, none, k, op) ||
      !pool_list(ctx, args, 2, "stride", true, k, st, op) ||
      !pool_list(ctx, args, 3, "padding", false, none, pad, op) ||
      !bool_arg(ctx, op, args, 4, "ceil_mode", &ceil_mode) ||
      !bool_arg(ctx, op, args, 5, "count_include_pad", &include_pad)) {
    return;
  }
  int64_t divisor_override = 0;
  if (!optional_int_arg(ctx, op, args, 6, "divisor_override", 0, &divisor_override)) return;
  if (k[0] <= 0 || k[1] <= 0 || st[0] <= 0 || st[1] <= 0 || pad[0] < 0 || pad[1] < 0 ||
      pad[0] > k[0] / 2 || pad[1] > k[1] / 2 || (!args[6]->is_none() && divisor_override == 0)) {
    fail(ctx, op, "invalid window: kernel " + shape_string(Span<const int64_t>(k, 2)) + ", stride " +
                      shape_string(Span<const int64_t>(st, 2)) + ", padding " +
                      shape_string(Span<const int64_t>(pad, 2)));
    return;
  }
  const int64_t oh = pooled_size(p.h, k[0], pad[0], st[0], 1, ceil_mode);
  const int64_t ow = pooled_size(p.w, k[1], pad[1], st[1], 1, ceil_mode);
  if (oh <= 0 || ow <= 0) {
    fail(ctx, op, "input " + shape_string(self->sizes()) + " is smaller than the window");
    return;
  }
  const Shape shape = pooled_shape(p, oh, ow);
  Tensor* out = strided_output_arg(ctx, op, args, 7, ScalarType::Float, shape.span());
  if (out == nullptr || out->numel() == 0) return;
  // ATen's window: clipped to the padded input for the divisor, to the input for the sum.
  struct Window {
    int64_t h0, h1, w0, w1, div;
  };
  auto window = [&](int64_t y, int64_t xo) {
    int64_t h0 = y * st[0] - pad[0], w0 = xo * st[1] - pad[1];
    int64_t h1 = std::min(h0 + k[0], p.h + pad[0]), w1 = std::min(w0 + k[1], p.w + pad[1]);
    const int64_t pool_size = (h1 - h0) * (w1 - w0);
    h0 = std::max<int64_t>(h0, 0);
    w0 = std::max<int64_t>(w0, 0);
    h1 = std::min(h1, p.h);
    w1 = std::min(w1, p.w);
    const int64_t div = divisor_override != 0 ? divisor_override : include_pad ? pool_size : (h1 - h0) * (w1 - w0);
    return Window{h0, h1, w0, w1, div};
  };
  const float* in = self->data_as<const float>();
  float* o = out->data_as<float>();
  // A channels-last input and output (Inception's 3x3 branches between NHWC convolutions): every
  // channel of a pixel at once. Strided per channel, the plane kernel read a cache line a tap.
  if (p.dims == 4 && p.sc == 1 && channels_last_dense(*out) && !out->is_contiguous()) {
    const int64_t rows = p.n * oh;
    parallel_chunks(rows, window_cost(ow * p.c, k[0] * k[1]), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t n = r / oh, y = r % oh;
        for (int64_t xo = 0; xo < ow; ++xo) {
          const Window w = window(y, xo);
          avg_nhwc_pixel(in + n * p.sn, p.sh, p.sw, p.c, w.h0, w.h1, w.w0, w.w1, static_cast<float>(w.div),
                         o + (r * ow + xo) * p.c);
        }
      }
    });
    return;
  }
  if (!out->is_contiguous()) {
    fail(ctx, op, "the output must be contiguous, or channels-last over a channels-last input");
    return;
  }
  for_planes(p, in, o, oh, ow, window_cost(oh * ow, k[0] * k[1]), [&](const float* x, float* po) {
    for (int64_t y = 0; y < oh; ++y) {
      for (int64_t xo = 0; xo < ow; ++xo) {
        const Window w = window(y, xo);
        float sum = 0.0f;
        for (int64_t i = w.h0; i < w.h1; ++i)
          for (int64_t j = w.w0; j < w.w1; ++j) sum += x[i * p.sh + j * p.sw];
        po[y * ow + xo] = w.h1 > w.h0 && w.w1 > w.w0 ? sum / static_cast<float>(w.div) : 0.0f;
      }
    }
  });
}

void op_adaptive_avg_pool2d(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::_adaptive_avg_pool2d";
  if (!check_nargs(ctx, op, args, 3)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  Planes p;
  if (self == nullptr || !planes_of(ctx, op, *self, &p)) return;
  // ATen's rule. An empty window would divide by zero, and an empty row still walks the other
  // extent (a [1, 1, 1e8, 0] input: 1e8 steps per output row).
  if (p.h == 0 || p.w == 0) {
    fail(ctx, op, "expects non-zero spatial sizes, got 'self' of shape " + shape_string(self->sizes()));
    return;
  }
  int64_t size[2], none[2] = {0, 0};
  if (!pool_list(ctx, args, 1, "output_size", false, none, size, op)) return;
  if (size[0] < 0 || size[1] < 0) {  // 0 is an empty output, as in ATen
    fail(ctx, op, "invalid output_size " + shape_string(Span<const int64_t>(size, 2)));
    return;
  }
  const int64_t oh = size[0], ow = size[1];
  int64_t span = 0;  // the window bounds multiply an output index by the input extent
  if (!checked::mul(oh + 1, p.h, &span) || !checked::mul(ow + 1, p.w, &span)) {
    fail(ctx, op, "output_size " + shape_string(Span<const int64_t>(size, 2)) + " is too large for the input");
    return;
  }
  const Shape shape = pooled_shape(p, oh, ow);
  Tensor* out = output_arg(ctx, op, args, 2, ScalarType::Float, shape.span());
  if (out == nullptr || out->numel() == 0) return;
  for_planes(p, self->data_as<const float>(), out->data_as<float>(), oh, ow, p.h * p.w + oh * ow,
             [&](const float* x, float* o) {
    for (int64_t y = 0; y < oh; ++y) {
      const int64_t h0 = y * p.h / oh, h1 = ((y + 1) * p.h + oh - 1) / oh;
      for (int64_t xo = 0; xo < ow; ++xo) {
        const int64_t w0 = xo * p.w / ow, w1 = ((xo + 1) * p.w + ow - 1) / ow;
        float sum = 0.0f;
        for (int64_t i = h0; i < h1; ++i)
          for (int64_t j = w0; j < w1; ++j) sum += x[i * p.sh + j * p.sw];
        o[y * ow + xo] = sum / static_cast<float>(h1 - h0) / static_cast<float>(w1 - w0);
      }
    }
  });
}

namespace {

// The output size the planned output already has (for a dynamic output: output_size, args[1],
// or the input's size times scale_factors, as ATen computes it), and ATen's scale for mapping
// output to input coordinates: 1 / scale_factor when one was given, else in / out.
bool resample_setup(KernelContext& ctx, const char* op, Span<Value*> args, const Planes& p, size_t scales_i,
                    size_t out_i, int64_t* oh, int64_t* ow, double scale[2]) {
  if (!args[out_i]->is_tensor() || args[out_i]->to_tensor().dim() != p.dims) {
    fail(ctx, op, "'out' must be a tensor of the input's rank");
    return false;
  }
  const Tensor& planned = args[out_i]->to_tensor();
  *oh = planned.size(-2);
  *ow = planned.size(-1);
  if (planned.is_dynamic()) {
    if (args[1]->is_int_list() && args[1]->to_int_list().size() == 2) {
      *oh = args[1]->to_int_list()[0];
      *ow = args[1]->to_int_list()[1];
    } else if (args[scales_i]->is_double_list() && args[scales_i]->to_double_list().size() == 2) {
      const double h = static_cast<double>(p.h) * args[scales_i]->to_double_list()[0];
      const double w = static_cast<double>(p.w) * args[scales_i]->to_double_list()[1];
      const double limit = static_cast<double>(checked::kMaxElements);
      if (!(h >= 0.0 && h <= limit && w >= 0.0 && w <= limit)) {
        fail(ctx, op, "'scale_factors' give an output beyond " + std::to_string(checked::kMaxElements) + " elements");
        return false;
      }
      *oh = static_cast<int64_t>(h);
      *ow = static_cast<int64_t>(w);
    } else {
      fail(ctx, op, "a dynamic output needs 'output_size' or 'scale_factors'");
      return false;
    }
  }
  const bool empty_out = p.n == 0 || p.c == 0 || *oh <= 0 || *ow <= 0;
  if ((p.h == 0 || p.w == 0) && !empty_out) {  // nothing to sample from (ATen refuses it too)
    fail(ctx, op, "cannot resample an empty input to a non-empty output");
    return false;
  }
  scale[0] = static_cast<double>(p.h) / static_cast<double>(*oh > 0 ? *oh : 1);
  scale[1] = static_cast<double>(p.w) / static_cast<double>(*ow > 0 ? *ow : 1);
  if (!args[scales_i]->is_none()) {
    if (!args[scales_i]->is_double_list()) {
      fail(ctx, op, std::string("'scale_factors' must be a float list, got ") + to_string(args[scales_i]->tag()));
      return false;
    }
    Span<const double> f = args[scales_i]->to_double_list();
    if (f.size() != 2 || !(f[0] > 0.0) || !(f[1] > 0.0)) {
      fail(ctx, op, "'scale_factors' must be two positive numbers");
      return false;
    }
    scale[0] = 1.0 / f[0];
    scale[1] = 1.0 / f[1];
  }
  return true;
}

// The planned output of a resampling: contiguous, or channels-last over a channels-last 4-D input
// (the exporter keeps such an input's layout); nullptr after failing the call.
Tensor* resample_output(KernelContext& ctx, const char* op, Span<Value*> args, size_t i, const Planes& p, int64_t oh,
                        int64_t ow) {
  Tensor* out = strided_output_arg(ctx, op, args, i, ScalarType::Float, pooled_shape(p, oh, ow).span());
  if (out == nullptr || out->is_contiguous()) return out;
  if (p.dims != 4 || p.sc != 1 || !channels_last_dense(*out)) {
    fail(ctx, op, "the output must be contiguous, or channels-last over a channels-last input");
    return nullptr;
  }
  return out;
}

// The .vec bilinear resamplings' arguments: input, output_size?, align_corners, scale_factors? | out.
bool bilinear_vec_args(KernelContext& ctx, const char* op, Span<Value*> args, Tensor** self, Planes* p, int64_t* oh,
                       int64_t* ow, double scale[2], bool* align) {
  if (!check_nargs(ctx, op, args, 5)) return false;
  *self = tensor_arg(ctx, op, args, 0, "input");
  return *self != nullptr && planes_of(ctx, op, **self, p) && bool_arg(ctx, op, args, 2, "align_corners", align) &&
         resample_setup(ctx, op, args, *p, 3, 4, oh, ow, scale);
}

}  // namespace

void op_upsample_nearest2d(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::upsample_nearest2d.vec";
  if (!check_nargs(ctx, op, args, 4)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "input");
  Planes p;
  int64_t oh = 0, ow = 0;
  double scale[2];
  if (self == nullptr || !planes_of(ctx, op, *self, &p) ||
      !resample_setup(ctx, op, args, p, 2, 3, &oh, &ow, scale)) {
    return;
  }
  Tensor* out = resample_output(ctx, op, args, 3, p, oh, ow);
  if (out == nullptr || out->numel() == 0) return;
  // ATen: src = min(floor(dst * scale), in - 1), with the scale as a float.
  auto src = [](int64_t dst, double s, int64_t in) {
    const int64_t i = checked::to_int<int64_t>(std::floor(static_cast<float>(dst) * static_cast<float>(s)));
    return i < 0 ? 0 : i < in - 1 ? i : in - 1;  // a scale from the file may be anything
  };
  if (!out->is_contiguous()) {  // channels-last: a pixel's channels copied whole
    const float* in = self->data_as<const float>();
    float* o = out->data_as<float>();
    parallel_chunks(p.n * oh, ow * p.c, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t n = r / oh, y = r % oh;
        const float* row = in + n * p.sn + src(y, scale[0], p.h) * p.sh;
        for (int64_t xo = 0; xo < ow; ++xo) {
          std::memcpy(o + (r * ow + xo) * p.c, row + src(xo, scale[1], p.w) * p.sw,
                      static_cast<size_t>(p.c) * sizeof(float));
        }
      }
    });
    return;
  }
  for_planes(p, self->data_as<const float>(), out->data_as<float>(), oh, ow, oh * ow, [&](const float* x, float* o) {
    for (int64_t y = 0; y < oh; ++y) {
      const float* row = x + src(y, scale[0], p.h) * p.sh;
      for (int64_t xo = 0; xo < ow; ++xo) o[y * ow + xo] = row[src(xo, scale[1], p.w) * p.sw];
    }
  });
}

void op_upsample_bilinear2d(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::upsample_bilinear2d.vec";
  Tensor* self = nullptr;
  Planes p;
  int64_t oh = 0, ow = 0;
  double scale[2];
  bool align = false;
  if (!bilinear_vec_args(ctx, op, args, &self, &p, &oh, &ow, scale, &align)) return;
  Tensor* out = resample_output(ctx, op, args, 4, p, oh, ow);
  if (out == nullptr || out->numel() == 0) return;
  // ATen's area_pixel_compute_scale / source_index, in float.
  float rh, rw;
  if (align) {
    rh = oh > 1 ? static_cast<float>(p.h - 1) / static_cast<float>(oh - 1) : 0.0f;
    rw = ow > 1 ? static_cast<float>(p.w - 1) / static_cast<float>(ow - 1) : 0.0f;
  } else {
    rh = static_cast<float>(scale[0]);
    rw = static_cast<float>(scale[1]);
  }
  auto source = [&](int64_t dst, float r, int64_t in, int64_t* i0, int64_t* step, float* l1) {
    float s = align ? r * static_cast<float>(dst) : r * (static_cast<float>(dst) + 0.5f) - 0.5f;
    if (!(s >= 0.0f)) s = 0.0f;  // negative, or NaN from a scale in the file
    *i0 = checked::to_int<int64_t>(s);
    if (*i0 > in - 1 || *i0 < 0) *i0 = in - 1;
    *step = *i0 < in - 1 ? 1 : 0;
    *l1 = s - static_cast<float>(*i0);
    if (*l1 < 0.0f) *l1 = 0.0f;
  };
  // Each output column's two input columns (element offsets) and weights, computed once a call.
  struct Column {
    int64_t at0, at1;
    float l0, l1;
  };
  auto* columns = static_cast<Column*>(ctx.allocate_temp(static_cast<size_t>(ow) * sizeof(Column), 64));
  if (columns == nullptr) {
    ctx.fail(Error(ErrorCode::OutOfMemory, std::string(op) + ": out of scratch memory"));
    return;
  }
  for (int64_t xo = 0; xo < ow; ++xo) {
    int64_t w0, ws;
    float wl1;
    source(xo, rw, p.w, &w0, &ws, &wl1);
    columns[xo] = Column{w0 * p.sw, (w0 + ws) * p.sw, 1.0f - wl1, wl1};
  }
  const float* in = self->data_as<const float>();
  float* o = out->data_as<float>();
  if (!out->is_contiguous()) {  // channels-last: every channel of an output pixel at once, the same steps
    parallel_chunks(p.n * oh, ow * p.c * 4, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t n = r / oh, y = r % oh;
        int64_t h0, hs;
        float hl1;
        source(y, rh, p.h, &h0, &hs, &hl1);
        const float hl0 = 1.0f - hl1;
        const float* top = in + n * p.sn + h0 * p.sh;
        const float* bottom = top + hs * p.sh;
        for (int64_t xo = 0; xo < ow; ++xo) {
          const Column& t = columns[xo];
          const float *a = top + t.at0, *a1 = top + t.at1, *b0 = bottom + t.at0, *b1 = bottom + t.at1;
          float* op = o + (r * ow + xo) * p.c;
          for (int64_t c = 0; c < p.c; ++c) op[c] = hl0 * (t.l0 * a[c] + t.l1 * a1[c]) + hl1 * (t.l0 * b0[c] + t.l1 * b1[c]);
        }
      }
    });
    return;
  }
  for_planes(p, in, o, oh, ow, oh * ow * 4, [&](const float* x, float* po) {
    for (int64_t y = 0; y < oh; ++y) {
      int64_t h0, hs;
      float hl1;
      source(y, rh, p.h, &h0, &hs, &hl1);
      const float hl0 = 1.0f - hl1;
      const float* a = x + h0 * p.sh;
      const float* b = a + hs * p.sh;
      for (int64_t xo = 0; xo < ow; ++xo) {
        const Column& t = columns[xo];
        po[y * ow + xo] = hl0 * (t.l0 * a[t.at0] + t.l1 * a[t.at1]) + hl1 * (t.l0 * b[t.at0] + t.l1 * b[t.at1]);
      }
    }
  });
}

namespace {

// ATen's antialiased bilinear taps along one dimension (its float path): output i centred at
// scale * (i + 0.5) in the input, a triangle filter stretched by the scale when shrinking,
// weights normalised to sum 1. The double/float mix follows ATen's expressions.
struct AaTaps {
  int64_t first = 0, count = 0;
};

inline float aa_triangle(float x) {
  x = std::fabs(x);
  return x < 1.0f ? 1.0f - x : 0.0f;
}

int64_t aa_max_taps(float scale) {
  const float support = scale >= 1.0f ? scale : 1.0f;
  return static_cast<int64_t>(std::ceil(support) * 2 + 1);
}

void aa_taps(int64_t in, int64_t out, float scale, int64_t max_taps, AaTaps* taps, float* weights) {
  const float support = scale >= 1.0f ? scale : 1.0f;
  const float invscale = scale >= 1.0f ? static_cast<float>(1.0 / scale) : 1.0f;
  for (int64_t i = 0; i < out; ++i) {
    const float center = static_cast<float>(scale * (static_cast<double>(i) + 0.5));
    int64_t first = checked::to_int<int64_t>(center - support + 0.5);
    if (first < 0) first = 0;
    int64_t last = checked::to_int<int64_t>(center + support + 0.5);
    if (last > in) last = in;
    const int64_t count = last > first ? std::min(last - first, max_taps) : 0;
    float* w = weights + i * max_taps;
    float total = 0.0f;
    for (int64_t j = 0; j < count; ++j) {
      w[j] = aa_triangle(static_cast<float>((static_cast<float>(j + first) - center + 0.5) * invscale));
      total += w[j];
    }
    if (total != 0.0f) {
      for (int64_t j = 0; j < count; ++j) w[j] /= total;
    }
    taps[i] = AaTaps{first, count};
  }
}

// out[i] = sum_j w[j] * x[(first + j) * stride], summed from the first tap, in float.
inline float aa_sum(const float* x, int64_t stride, const AaTaps& t, const float* w) {
  if (t.count == 0) return 0.0f;
  const float* p = x + t.first * stride;
  float acc = p[0] * w[0];
  for (int64_t j = 1; j < t.count; ++j) acc += p[j * stride] * w[j];
  return acc;
}

// Resamples width first, then height (ATen's order), each pass only when that size changes.
void upsample_bilinear_aa(KernelContext& ctx, const char* op, const Tensor& self, const Planes& p, Tensor* out,
                          int64_t oh, int64_t ow, float scale_h, float scale_w) {
  const int64_t th = aa_max_taps(scale_h), tw = aa_max_taps(scale_w);
  const bool wide = ow != p.w, tall = oh != p.h;
  const size_t floats = static_cast<size_t>((wide ? p.n * p.c * p.h * ow : 0) + oh * th + ow * tw);
  auto* scratch = static_cast<float*>(ctx.allocate_temp(floats * sizeof(float), 64));
  auto* taps = static_cast<AaTaps*>(ctx.allocate_temp(static_cast<size_t>(oh + ow) * sizeof(AaTaps), 64));
  if (scratch == nullptr || taps == nullptr) {
    ctx.fail(Error(ErrorCode::OutOfMemory, std::string(op) + ": out of scratch memory"));
    return;
  }
  float* wh = scratch;
  float* ww = wh + oh * th;
  float* mid = ww + ow * tw;
  AaTaps* taps_h = taps;
  AaTaps* taps_w = taps + oh;
  aa_taps(p.h, oh, scale_h, th, taps_h, wh);
  aa_taps(p.w, ow, scale_w, tw, taps_w, ww);
  const float* in = self.data_as<const float>();
  float* o = out->data_as<float>();
  parallel_chunks(p.n * p.c, oh * ow * (th + tw) + p.h * ow * tw, [&](int64_t b, int64_t e) {
    for (int64_t plane = b; plane < e; ++plane) {
      const float* x = in + (plane / p.c) * p.sn + (plane % p.c) * p.sc;
      // The plane after the width pass: rows `rs` apart, columns `cs` apart.
      const float* src = x;
      int64_t rs = p.sh, cs = p.sw;
      if (wide) {
        float* m = mid + plane * p.h * ow;
        for (int64_t y = 0; y < p.h; ++y) {
          for (int64_t xo = 0; xo < ow; ++xo) m[y * ow + xo] = aa_sum(x + y * p.sh, p.sw, taps_w[xo], ww + xo * tw);
        }
        src = m;
        rs = ow;
        cs = 1;
      }
      float* po = o + plane * oh * ow;
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t xo = 0; xo < ow; ++xo) {
          po[y * ow + xo] = tall ? aa_sum(src + xo * cs, rs, taps_h[y], wh + y * th) : src[y * rs + xo * cs];
        }
      }
    }
  });
}

float aa_scale(int64_t in, int64_t out, bool align, const Value& factor) {
  if (align) return out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f;
  if (factor.is_double() && factor.to_double() > 0.0) return static_cast<float>(1.0 / factor.to_double());
  return static_cast<float>(in) / static_cast<float>(out);
}

}  // namespace

// _upsample_bilinear2d_aa.vec: input, output_size?, align_corners, scale_factors? | out
void op_upsample_bilinear2d_aa_vec(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::_upsample_bilinear2d_aa.vec";
  Tensor* self = nullptr;
  Planes p;
  int64_t oh = 0, ow = 0;
  double scale[2];
  bool align = false;
  if (!bilinear_vec_args(ctx, op, args, &self, &p, &oh, &ow, scale, &align)) return;
  Tensor* out = output_arg(ctx, op, args, 4, ScalarType::Float, pooled_shape(p, oh, ow).span());
  if (out == nullptr || out->numel() == 0) return;
  Value none;
  Value fh = args[3]->is_none() ? none : Value(args[3]->to_double_list()[0]);
  Value fw = args[3]->is_none() ? none : Value(args[3]->to_double_list()[1]);
  upsample_bilinear_aa(ctx, op, *self, p, out, oh, ow, aa_scale(p.h, oh, align, fh), aa_scale(p.w, ow, align, fw));
}

// _upsample_bilinear2d_aa: self, output_size, align_corners, scales_h?, scales_w? | out
void op_upsample_bilinear2d_aa(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::_upsample_bilinear2d_aa";
  if (!check_nargs(ctx, op, args, 6)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  Planes p;
  Span<const int64_t> size;
  bool align = false;
  if (self == nullptr || !planes_of(ctx, op, *self, &p) || !int_list_arg(ctx, op, args, 1, "output_size", &size) ||
      !bool_arg(ctx, op, args, 2, "align_corners", &align)) {
    return;
  }
  for (size_t i : {size_t{3}, size_t{4}}) {
    if (!args[i]->is_none() && !args[i]->is_double()) {
      fail(ctx, op, std::string("'scales' must be a float or None, got ") + to_string(args[i]->tag()));
      return;
    }
  }
  if (size.size() != 2 || size[0] <= 0 || size[1] <= 0 || (p.h == 0 || p.w == 0)) {
    fail(ctx, op, "'output_size' " + shape_string(size) + " must be two positive sizes of a non-empty input");
    return;
  }
  Tensor* out = output_arg(ctx, op, args, 5, ScalarType::Float, pooled_shape(p, size[0], size[1]).span());
  if (out == nullptr || out->numel() == 0) return;
  upsample_bilinear_aa(ctx, op, *self, p, out, size[0], size[1], aa_scale(p.h, size[0], align, *args[3]),
                       aa_scale(p.w, size[1], align, *args[4]));
}

}  // namespace kernels
}  // namespace etrt
