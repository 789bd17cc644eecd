// aten::convolution (1-D and 2-D, groups, stride, padding, dilation, bias).
// A contiguous (NCHW) output: im2col + SGEMM, per image and group
// out[Cout_g, OH*OW] = weight_g[Cout_g, Cin_g*KH*KW] @ col[Cin_g*KH*KW, OH*OW].
// A channels-last output (2-D, any groups): the NHWC kernels of conv_nhwc.h.
// etrt_fused::conv2d: the same convolution, then plus a residual, clamped and (optionally)
// hardswish: what the exporter folds a following aten::add.Tensor / relu / hardtanh / clamp /
// hardswish into (python/etrt/fuse_conv.py).
// The NHWC kernels apply it to each output tile before storing it; elsewhere it is a pass over
// the output.
#include <algorithm>
#include <cstring>
#include <string>

#include "conv_nhwc.h"
#include "gemm.h"
#include "heavy.h"
#include "isa_dispatch.h"
#include "logistic.h"
#include "util.h"

namespace etrt {
namespace kernels {
namespace {

constexpr const char* kOp = "aten::convolution";

// What etrt_fused::conv2d does after the convolution: out = act(clamp(out + residual, lo, hi)).
struct Epilogue {
  const Tensor* residual = nullptr;  // the output's sizes; nullptr: none
  float lo = -__builtin_inff(), hi = __builtin_inff();
  NhwcActivation activation = NhwcActivation::None;
  float slope = 0.0f;  // LeakyRelu's negative slope
  bool residual_last = false;  // the residual is added after the activation
  bool fused = false;  // applied by the NHWC kernels while storing each tile
  // Where the output is a channel slice of a wider channels-last tensor (out_channel): that
  // tensor's pixel stride. 0: the output is a tensor of its own.
  int64_t out_ps = 0;
};

// Geometry of one call, 1-D convolutions mapped onto 2-D with a height of 1.
struct ConvShape {
  int64_t batch, cin, h, w;        // input
  int64_t cout, kh, kw, groups;    // weight
  int64_t sh, sw, ph, pw, dh, dw;  // stride, padding, dilation
  int64_t oh, ow;
  int64_t in_sn, in_sc, in_sh, in_sw;  // input strides
  int64_t cin_g() const { return cin / groups; }
  int64_t cout_g() const { return cout / groups; }
  int64_t kdim() const { return cin_g() * kh * kw; }
  int64_t pixels() const { return oh * ow; }
  // The input of one (image, group) already is the column matrix: 1x1, unit stride, no padding.
  bool col_is_input() const {
    return kh == 1 && kw == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0 && in_sw == 1 &&
           (h == 1 || in_sh == w);
  }
};

// A conv parameter list: one value for every spatial dimension, or a single value for all.
bool spatial_list(KernelContext& ctx, Span<Value*> args, size_t i, const char* name, int spatial,
                  int64_t min_value, int64_t out[3]) {
  Span<const int64_t> v;
  if (!int_list_arg(ctx, kOp, args, i, name, &v)) return false;
  if (v.size() != 1 && v.size() != static_cast<size_t>(spatial)) {
    fail(ctx, kOp, std::string("'") + name + "' must have 1 or " + std::to_string(spatial) +
                       " values, got " + std::to_string(v.size()));
    return false;
  }
  for (int d = 0; d < spatial; ++d) {
    out[d] = v[v.size() == 1 ? 0 : d];
    if (out[d] < min_value) {
      fail(ctx, kOp, std::string("'") + name + "' values must be at least " + std::to_string(min_value));
      return false;
    }
  }
  return true;
}

// Stride 1 with OW == W ("same" padding) over contiguous planes: each column-matrix row is the
// input plane shifted by a constant, so it is one long copy plus zeroed borders.
ETRT_ISA_BODY bool im2col_same_body(const ConvShape& s, const float* in, float* col) {
  if (s.sh != 1 || s.sw != 1 || s.ow != s.w || s.in_sw != 1 || (s.h > 1 && s.in_sh != s.w)) return false;
  const int64_t npix = s.pixels(), plane = s.h * s.w;
  for (int64_t c = 0; c < s.cin_g(); ++c) {
    const float* src = in + c * s.in_sc;
    for (int64_t ki = 0; ki < s.kh; ++ki) {
      const int64_t dy = ki * s.dh - s.ph;
      // Output rows whose input row exists: [y0, y1).
      const int64_t y0 = std::min(std::max<int64_t>(-dy, 0), s.oh);
      const int64_t y1 = std::max(std::min(s.h - dy, s.oh), y0);
      for (int64_t kj = 0; kj < s.kw; ++kj) {
        const int64_t dx = kj * s.dw - s.pw;
        const int64_t shift = dy * s.w + dx;
        float* d = col + ((c * s.kh + ki) * s.kw + kj) * npix;
        // Copy the valid rows whole (clamped to the plane), then zero what lies outside.
        const int64_t x0 = std::max(y0 * s.w, -shift), x1 = std::min(y1 * s.w, plane - shift);
        for (int64_t x = 0; x < x0; ++x) d[x] = 0.0f;
        for (int64_t x = x0; x < x1; ++x) d[x] = src[x + shift];
        for (int64_t x = std::max(x1, x0); x < npix; ++x) d[x] = 0.0f;
        // Columns whose input column is outside: [0, -dx) or [W - dx, W).
        const int64_t left = std::min(std::max<int64_t>(-dx, 0), s.w);
        const int64_t right = std::max(std::min(s.w - dx, s.w), left);
        if (left > 0 || right < s.w) {
          for (int64_t y = y0; y < y1; ++y) {
            float* row = d + y * s.w;
            for (int64_t x = 0; x < left; ++x) row[x] = 0.0f;
            for (int64_t x = right; x < s.w; ++x) row[x] = 0.0f;
          }
        }
      }
    }
  }
  return true;
}
ETRT_ISA_DISPATCH(bool, im2col_same, (const ConvShape& s, const float* in, float* col), (s, in, col))

// col[(c*KH + i)*KW + j, oh*OW + ow] = input(c, oh*SH - PH + i*DH, ow*SW - PW + j*DW), 0 outside.
ETRT_ISA_BODY void im2col_body(const ConvShape& s, const float* in, float* col) {
  if (im2col_same(s, in, col)) return;
  const int64_t npix = s.pixels();
  for (int64_t c = 0; c < s.cin_g(); ++c) {
    const float* plane = in + c * s.in_sc;
    for (int64_t ki = 0; ki < s.kh; ++ki) {
      for (int64_t kj = 0; kj < s.kw; ++kj) {
        float* dst = col + ((c * s.kh + ki) * s.kw + kj) * npix;
        // Output columns whose input column lies inside the image: [lo, hi).
        const int64_t off = kj * s.dw - s.pw;
        int64_t lo = off >= 0 ? 0 : (-off + s.sw - 1) / s.sw;
        int64_t hi = s.w - off <= 0 ? 0 : (s.w - off + s.sw - 1) / s.sw;
        if (hi > s.ow) hi = s.ow;
        if (lo > hi) lo = hi;
        for (int64_t oh = 0; oh < s.oh; ++oh) {
          float* d = dst + oh * s.ow;
          const int64_t ih = oh * s.sh - s.ph + ki * s.dh;
          if (ih < 0 || ih >= s.h) {
            for (int64_t ow = 0; ow < s.ow; ++ow) d[ow] = 0.0f;
            continue;
          }
          const float* src = plane + ih * s.in_sh;
          for (int64_t ow = 0; ow < lo; ++ow) d[ow] = 0.0f;
          if (s.sw == 1 && s.in_sw == 1) {
            // Rows are short (a few dozen floats): an inline loop beats a memcpy call.
            const float* p = src + off;
            for (int64_t ow = lo; ow < hi; ++ow) d[ow] = p[ow];
          } else {
            const int64_t step = s.sw * s.in_sw;
            const float* p = src + (lo * s.sw + off) * s.in_sw;
            for (int64_t ow = lo; ow < hi; ++ow, p += step) d[ow] = *p;
          }
          for (int64_t ow = hi; ow < s.ow; ++ow) d[ow] = 0.0f;
        }
      }
    }
  }
}
ETRT_ISA_DISPATCH(void, im2col, (const ConvShape& s, const float* in, float* col), (s, in, col))

// What every (image, group) product shares. With a column matrix the bias rides along as one
// more column of A against a row of ones at the end of col, so no pass over the output adds it.
struct ConvPlan {
  const float* weight;  // [Cout, lda]: the weights, then the bias when folded
  int64_t lda;
  int64_t col_rows;     // kdim, plus the row of ones when the bias is folded
  const float* bias;    // added to the output before the product (not folded), or nullptr
};

// One image and group: im2col (unless the input already is the column matrix), GEMM.
void conv_one(const ConvShape& s, const ConvPlan& plan, const float* input, float* out,
              int64_t image, int64_t group, float* col, float* gemm_scratch,
              KernelContext* parallel_ctx, bool* ok) {
  const int64_t npix = s.pixels();
  const float* in = input + image * s.in_sn + group * s.cin_g() * s.in_sc;
  float* c = out + (image * s.cout + group * s.cout_g()) * npix;
  GemmParams p;
  p.m = s.cout_g();
  p.n = npix;
  p.k = plan.col_rows;
  p.a = plan.weight + group * s.cout_g() * plan.lda;
  p.a_rs = plan.lda;
  p.a_cs = 1;
  if (s.col_is_input()) {
    p.b = in;
    p.b_rs = s.in_sc;
  } else {
    im2col(s, in, col);
    p.b = col;
    p.b_rs = npix;
  }
  p.b_cs = 1;
  p.c = c;
  p.c_rs = npix;
  if (plan.bias != nullptr) {
    for (int64_t o = 0; o < p.m; ++o) {
      const float v = plan.bias[group * s.cout_g() + o];
      float* row = c + o * npix;
      for (int64_t q = 0; q < npix; ++q) row[q] = v;
    }
    p.beta = 1.0f;
  }
  if (parallel_ctx != nullptr) {
    *ok = sgemm(*parallel_ctx, p);
  } else {
    sgemm_serial(p, gemm_scratch);
  }
}

// The row of ones that multiplies a folded bias.
void fill_ones_row(const ConvShape& s, const ConvPlan& plan, float* col) {
  if (plan.col_rows == s.kdim()) return;
  float* row = col + s.kdim() * s.pixels();
  for (int64_t q = 0; q < s.pixels(); ++q) row[q] = 1.0f;
}

// A 3-D or 4-D weight as rows of `lda` floats (the first Cin_g*KH*KW of each filled).
void copy_weight(const Tensor& w, int64_t lda, float* dst) {
  const float* src = w.data_as<const float>();
  const int64_t s0 = w.stride(0), s1 = w.stride(1), s2 = w.stride(2);
  const int64_t k2 = w.size(2);
  const int64_t k3 = w.dim() == 4 ? w.size(3) : 1;
  const int64_t s3 = w.dim() == 4 ? w.stride(3) : 0;
  for (int64_t a = 0; a < w.size(0); ++a) {
    float* row = dst + a * lda;
    for (int64_t b = 0; b < w.size(1); ++b)
      for (int64_t i = 0; i < k2; ++i)
        for (int64_t j = 0; j < k3; ++j) *row++ = src[a * s0 + b * s1 + i * s2 + j * s3];
  }
}

void fail_oom(KernelContext& ctx) {
  ctx.fail(Error(ErrorCode::OutOfMemory, std::string(kOp) + ": out of scratch memory"));
}

// A weight [O, I, KH, KW] stored as [KH][KW][I][O]: what the NHWC kernels read in place.
bool weight_hwio(const Tensor& w) {
  const int64_t o = w.size(0), i = w.size(1), kw = w.size(3);
  const int64_t want[4] = {1, o, kw * i * o, i * o};
  for (int d = 0; d < 4; ++d) {
    if (w.size(d) != 1 && w.stride(d) != want[d]) return false;
  }
  return true;
}

// The NHWC path: input gathered channels-last unless it already is, weights read in place when
// stored [KH][KW][I][O] (else repacked), bias and a row of zeros in scratch.
// The NHWC kernels' geometry of a 2-D convolution (no pointers yet).
NhwcConv nhwc_geometry(const ConvShape& s) {
  NhwcConv c;
  c.batch = s.batch;
  c.h = s.h;
  c.w = s.w;
  c.cin = s.cin;
  c.oh = s.oh;
  c.ow = s.ow;
  c.cout = s.cout;
  c.kh = s.kh;
  c.kw = s.kw;
  c.sh = s.sh;
  c.sw = s.sw;
  c.ph = s.ph;
  c.pw = s.pw;
  c.dh = s.dh;
  c.dw = s.dw;
  c.depthwise = s.groups > 1 && s.groups == s.cin && s.cout == s.cin;
  c.groups = c.depthwise ? 1 : s.groups;
  return c;
}

void conv_nhwc(KernelContext& ctx, const ConvShape& s, const Tensor& input, const Tensor& weight,
               const Tensor* bias, Tensor& out, Epilogue* ep) {
  NhwcConv c = nhwc_geometry(s);
  const float* in = input.data_as<const float>();
  c.w_ld = s.cout;
  const bool nchw_dense = s.in_sw == 1 && s.in_sh == s.w;
  if (s.in_sc != 1 && s.cin > 1 && nchw_dense && nhwc_stem_fits(c)) {
    c.in_nchw = in;
    c.nchw_sn = s.in_sn;
    c.nchw_sc = s.in_sc;
  } else if (s.in_sc == 1 || s.cin == 1) {
    c.in = in;
    c.in_sn = s.in_sn;
    c.in_sh = s.in_sh;
    c.in_sw = s.in_sw;
  } else {
    const int64_t plane = s.h * s.w;
    float* g = static_cast<float*>(ctx.allocate_temp(static_cast<size_t>(s.batch * plane * s.cin) * sizeof(float), 64));
    if (g == nullptr) return fail_oom(ctx);
    if (nchw_dense) {
      // Pixels contiguous (NCHW): a transpose per image in 16 x 16 tiles. Pixel by pixel, each
      // channel's float sits a plane away from the last: 0.7 ms for 64 channels at 64 x 64.
      for (int64_t n = 0; n < s.batch; ++n) copy_to_row_major(in + n * s.in_sn, plane, s.cin, 1, s.in_sc, g + n * plane * s.cin);
    } else {
      for (int64_t n = 0; n < s.batch; ++n)
        for (int64_t y = 0; y < s.h; ++y)
          for (int64_t x = 0; x < s.w; ++x) {
            const float* src = in + n * s.in_sn + y * s.in_sh + x * s.in_sw;
            float* dst = g + ((n * s.h + y) * s.w + x) * s.cin;
            for (int64_t ch = 0; ch < s.cin; ++ch) dst[ch] = src[ch * s.in_sc];
          }
    }
    c.in = g;
    c.in_sn = plane * s.cin;
    c.in_sh = s.w * s.cin;
    c.in_sw = s.cin;
  }
  const int64_t cin_g = c.cin_g(), rows = s.kh * s.kw * cin_g;
  if (weight_hwio(weight)) {
    c.weight = weight.data_as<const float>();
    if (weight.is_read_only()) c.weight_constant = c.weight;
  } else {
    float* wp = static_cast<float*>(ctx.allocate_temp(static_cast<size_t>(rows * s.cout) * sizeof(float), 64));
    if (wp == nullptr) return fail_oom(ctx);
    const float* src = weight.data_as<const float>();
    for (int64_t i = 0; i < s.kh; ++i)
      for (int64_t j = 0; j < s.kw; ++j)
        for (int64_t ch = 0; ch < cin_g; ++ch)
          for (int64_t o = 0; o < s.cout; ++o) {
            wp[((i * s.kw + j) * cin_g + ch) * s.cout + o] =
                src[o * weight.stride(0) + ch * weight.stride(1) + i * weight.stride(2) + j * weight.stride(3)];
          }
    c.weight = wp;
  }
  if (bias != nullptr) {
    if (bias->stride(0) == 1 || s.cout == 1) {
      c.bias = bias->data_as<const float>();
    } else {
      float* b = static_cast<float*>(ctx.allocate_temp(static_cast<size_t>(s.cout) * sizeof(float), 64));
      if (b == nullptr) return fail_oom(ctx);
      for (int64_t o = 0; o < s.cout; ++o) b[o] = bias->data_as<const float>()[o * bias->stride(0)];
      c.bias = b;
    }
  }
  float* zeros = static_cast<float*>(ctx.allocate_temp(static_cast<size_t>(s.cin + 16) * sizeof(float), 64));
  if (zeros == nullptr) return fail_oom(ctx);
  std::memset(zeros, 0, static_cast<size_t>(s.cin + 16) * sizeof(float));
  c.zeros = zeros;
  c.out = out.data_as<float>();
  c.out_ps = ep != nullptr && ep->out_ps > 0 ? ep->out_ps : s.cout;
  if (ep != nullptr) {
    // A residual laid out like the output is read tile by tile; any other waits for the pass.
    const Tensor* r = ep->residual;
    bool same = r == nullptr;
    if (r != nullptr && r->dtype() == ScalarType::Float && r->dim() == out.dim()) {
      same = true;
      for (int d = 0; d < out.dim(); ++d) {
        same = same && r->size(d) == out.size(d) && (out.size(d) == 1 || r->stride(d) == out.stride(d));
      }
    }
    if (same) {
      (ep->residual_last ? c.residual_last : c.residual) = r == nullptr ? nullptr : r->data_as<const float>();
      c.lo = ep->lo;
      c.hi = ep->hi;
      c.activation = ep->activation;
      c.slope = ep->slope;
      ep->fused = true;
    }
  }
  if (!nhwc_convolution(ctx, c)) fail_oom(ctx);
}

// What the unfolded convolutions (transposed, 3-D) read and write: contiguous copies of input
// and weight (when they are not already), a scratch column matrix of `col_elements` floats, and
// the output's planes [batch * cout][plane] filled with the bias. False (reported) on failure.
struct Unfolded {
  const float* x = nullptr;
  const float* w = nullptr;
  float* col = nullptr;
};
bool prepare_unfolded(KernelContext& ctx, const Tensor& input, const Tensor& weight, const Tensor* bias,
                      int64_t col_elements, Tensor& out, int64_t cout, Unfolded* u) {
  u->x = contiguous_f32(ctx, kOp, input);
  u->w = u->x == nullptr ? nullptr : contiguous_f32(ctx, kOp, weight);
  if (u->w == nullptr) return false;
  // At least one float: with no input channels the product adds nothing to the bias.
  const size_t floats = static_cast<size_t>(col_elements > 0 ? col_elements : 1);
  u->col = static_cast<float*>(ctx.allocate_temp(floats * sizeof(float), 64));
  if (u->col == nullptr) {
    fail_oom(ctx);
    return false;
  }
  float* y = out.data_as<float>();
  const int64_t planes = out.size(0) * cout, plane = out.numel() / planes;
  for (int64_t c = 0; c < planes; ++c) {
    const float b = bias == nullptr ? 0.0f : bias->data_as<const float>()[(c % cout) * bias->stride(0)];
    std::fill(y + c * plane, y + (c + 1) * plane, b);
  }
  return true;
}

// Output size of a transposed convolution along one dimension:
// (in - 1) * stride - 2 * pad + dilation * (kernel - 1) + output_padding + 1, checked.
bool transposed_extent(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation, int64_t out_pad,
                       int64_t* out) {
  int64_t span = 0, reach = 0, size = 0;
  if (in < 1 || kernel < 1 || !checked::mul(in - 1, stride, &span) || !checked::mul(dilation, kernel - 1, &reach) ||
      !checked::add(span, reach, &size) || !checked::add(size, out_pad + 1, &size) ||
      !checked::sub(size, pad, &size) || !checked::sub(size, pad, &size)) {
    return false;
  }
  *out = size;
  return size >= 1 && size <= checked::kMaxElements;
}

// Transposed convolution (the gradient of a convolution with respect to its input). Per image
// and group, the product cols = W_g^T @ X_g ([Cout_g * KH * KW, H * W]) gives every input
// pixel's contribution to each tap; col2im adds each into the output pixel it lands on
// (iy * stride - pad + ky * dilation), over the bias.
void conv_transposed(KernelContext& ctx, Span<Value*> args, const Tensor& input, const Tensor& weight,
                     const Tensor* bias, int spatial, const int64_t* stride, const int64_t* padding,
                     const int64_t* dilation, const int64_t* output_padding, int64_t groups) {
  const int64_t batch = input.size(0), cin = input.size(1);
  const int64_t h = spatial == 2 ? input.size(2) : 1, w = input.size(-1);
  const int64_t kh = spatial == 2 ? weight.size(2) : 1, kw = weight.size(-1);
  const int64_t sh = spatial == 2 ? stride[0] : 1, sw = stride[spatial - 1];
  const int64_t ph = spatial == 2 ? padding[0] : 0, pw = padding[spatial - 1];
  const int64_t dh = spatial == 2 ? dilation[0] : 1, dw = dilation[spatial - 1];
  const int64_t oph = spatial == 2 ? output_padding[0] : 0, opw = output_padding[spatial - 1];
  int64_t cout = 0;
  if (groups < 1 || cin % groups != 0 || weight.size(0) != cin || !checked::mul(weight.size(1), groups, &cout)) {
    fail(ctx, kOp, "transposed: input " + shape_string(input.sizes()) + ", weight " + shape_string(weight.sizes()) +
                       " and groups=" + std::to_string(groups) + " do not agree");
    return;
  }
  // As ATen: output padding must be smaller than the stride or the dilation of its dimension.
  if (oph >= std::max(sh, dh) || opw >= std::max(sw, dw)) {
    fail(ctx, kOp, "transposed: output_padding must be smaller than the stride or the dilation");
    return;
  }
  int64_t oh = 0, ow = 0;
  if (!transposed_extent(h, kh, sh, ph, dh, oph, &oh) || !transposed_extent(w, kw, sw, pw, dw, opw, &ow)) {
    fail(ctx, kOp, "transposed: kernel " + shape_string(weight.sizes()) + " over input " +
                       shape_string(input.sizes()) + " gives no valid output size");
    return;
  }
  if (bias != nullptr && (bias->dim() != 1 || bias->size(0) != cout)) {
    fail(ctx, kOp, "bias must have shape [" + std::to_string(cout) + "], got " + shape_string(bias->sizes()));
    return;
  }
  int64_t out_sizes[4] = {batch, cout, oh, ow};
  if (spatial == 1) out_sizes[2] = ow;
  Tensor* out = strided_output_arg(ctx, kOp, args, 9, ScalarType::Float,
                                   Span<const int64_t>(out_sizes, static_cast<size_t>(input.dim())));
  if (out == nullptr || out->numel() == 0) return;
  if (!out->is_contiguous()) {
    fail(ctx, kOp, "transposed: output must be contiguous");
    return;
  }
  const int64_t cin_g = cin / groups, cout_g = cout / groups, rows = cout_g * kh * kw, hw = h * w;
  int64_t col_elements = 0;
  if (!checked::mul(rows, hw, &col_elements) || col_elements > checked::kMaxElements) {
    fail(ctx, kOp, "transposed: the columns of weight " + shape_string(weight.sizes()) + " over input " +
                       shape_string(input.sizes()) + " exceed " + std::to_string(checked::kMaxElements) + " elements");
    return;
  }
  Unfolded u;
  if (!prepare_unfolded(ctx, input, weight, bias, col_elements, *out, cout, &u)) return;
  const float *x = u.x, *wt = u.w;
  float* cols = u.col;
  float* o = out->data_as<float>();
  const int64_t plane = oh * ow;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t g = 0; g < groups; ++g) {
      GemmParams p;
      p.m = rows;
      p.n = hw;
      p.k = cin_g;
      p.a = wt + g * cin_g * rows;  // W_g^T: element (r, ci) at [ci * rows + r]
      p.a_rs = 1;
      p.a_cs = rows;
      p.b = x + (n * cin + g * cin_g) * hw;
      p.b_rs = hw;
      p.b_cs = 1;
      p.c = cols;
      p.c_rs = hw;
      p.b_weight = false;
      if (!sgemm(ctx, p)) return fail_oom(ctx);
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t co = r / (kh * kw), ky = r / kw % kh, kx = r % kw;
        float* dst = o + (n * cout + g * cout_g + co) * plane;
        const float* col = cols + r * hw;
        // Input columns whose output column lands inside: 0 <= ix * sw - pw + kx * dw < ow.
        const int64_t shift = kx * dw - pw;
        const int64_t ix0 = shift >= 0 ? 0 : (-shift + sw - 1) / sw;
        const int64_t last = ow - 1 - shift;
        const int64_t ix1 = last < 0 ? 0 : std::min(w, last / sw + 1);
        for (int64_t iy = 0; iy < h; ++iy) {
          const int64_t oy = iy * sh - ph + ky * dh;
          if (oy < 0 || oy >= oh || ix1 <= ix0) continue;
          float* drow = dst + oy * ow;
          const float* crow = col + iy * w;
          for (int64_t ix = ix0; ix < ix1; ++ix) drow[ix * sw + shift] += crow[ix];
        }
      }
    }
  }
}

// 3-D convolution (video models): per image, the input laid out channels innermost, then per
// frame tap kz one 2-D channels-last convolution over every output frame it reaches (the
// frames its batch), summed into the output through the residual; back to NCDHW at the end.
// Unfolded into one column matrix the 3x3x3 layers of r3d_18 ran at a third of the speed.
void conv3d(KernelContext& ctx, Span<Value*> args, const Tensor& input, const Tensor& weight, const Tensor* bias,
            const int64_t* stride, const int64_t* padding, const int64_t* dilation, int64_t groups) {
  const int64_t batch = input.size(0), cin = input.size(1), cout = weight.size(0);
  const int64_t in[3] = {input.size(2), input.size(3), input.size(4)};
  const int64_t k[3] = {weight.size(2), weight.size(3), weight.size(4)};
  int64_t grouped_cin = 0;
  if (groups < 1 || cin % groups != 0 || cout % groups != 0 || !checked::mul(weight.size(1), groups, &grouped_cin) ||
      grouped_cin != cin) {
    fail(ctx, kOp, "input " + shape_string(input.sizes()) + ", weight " + shape_string(weight.sizes()) +
                       " and groups=" + std::to_string(groups) + " do not agree");
    return;
  }
  int64_t o[3] = {0, 0, 0};
  for (int d = 0; d < 3; ++d) {
    if (!checked::window(in[d], k[d], padding[d], padding[d], stride[d], dilation[d], false, &o[d])) {
      fail(ctx, kOp, "kernel " + shape_string(weight.sizes()) + " does not fit the input " +
                         shape_string(input.sizes()) + " with its stride, padding and dilation");
      return;
    }
  }
  if (bias != nullptr && (bias->dim() != 1 || bias->size(0) != cout)) {
    fail(ctx, kOp, "bias must have shape [" + std::to_string(cout) + "], got " + shape_string(bias->sizes()));
    return;
  }
  const int64_t out_sizes[5] = {batch, cout, o[0], o[1], o[2]};
  Tensor* out = strided_output_arg(ctx, kOp, args, 9, ScalarType::Float, Span<const int64_t>(out_sizes, 5));
  if (out == nullptr || out->numel() == 0) return;
  if (!out->is_contiguous()) {
    fail(ctx, kOp, "3-D: output must be contiguous");
    return;
  }
  const int64_t cin_g = cin / groups, taps = k[0] * k[1] * k[2];
  const int64_t pixels = o[0] * o[1] * o[2], volume = in[0] * in[1] * in[2];
  int64_t in_elements = 0, out_elements = 0, w_elements = 0;
  if (!checked::mul(volume, cin, &in_elements) || !checked::mul(pixels, cout, &out_elements) ||
      !checked::mul(taps * cin_g, cout, &w_elements) || in_elements > checked::kMaxElements ||
      out_elements > checked::kMaxElements || w_elements > checked::kMaxElements) {
    fail(ctx, kOp, "input " + shape_string(input.sizes()) + " and weight " + shape_string(weight.sizes()) +
                       " exceed " + std::to_string(checked::kMaxElements) + " elements a frame set");
    return;
  }
  // Channels innermost already (what a channels-last layer writes): read in place.
  const bool in_place = input.stride(1) == 1 && input.stride(4) == cin && input.stride(3) == in[2] * cin &&
                        input.stride(2) == in[1] * in[2] * cin;
  auto* xs =
      in_place ? nullptr : static_cast<float*>(ctx.allocate_temp(static_cast<size_t>(in_elements + 1) * 4, 64));
  // The sums ping-pong between two buffers: a tile's channel tail may overlap the chunk before
  // (channel_chunks), so a residual read where it is written would be added twice.
  auto* ys = static_cast<float*>(ctx.allocate_temp(static_cast<size_t>(2 * out_elements + 1) * 4, 64));
  // Weights per frame tap kz as the NHWC kernels read them, [kz][ky][kx][cin_g][cout]: a constant's
  // kept in the instruction's cache. An instruction keeps one block, so the 2-D calls below get
  // no weight_constant (their panels and Winograd transforms are made per call).
  const bool constant = weight.is_read_only();
  bool ready = false;
  constexpr uint64_t kFrameTapWeights = 0x25;
  auto* ws = constant ? static_cast<float*>(ctx.instruction_cache(kept_key(weight.data(), kFrameTapWeights),
                                                                  static_cast<size_t>(w_elements + 1) * 4, &ready))
                      : nullptr;
  const bool kept = ws != nullptr;
  if (!kept) ws = static_cast<float*>(ctx.allocate_temp(static_cast<size_t>(w_elements + 1) * 4, 64));
  auto* zeros = static_cast<float*>(ctx.allocate_temp(static_cast<size_t>(cin + 16) * 4, 64));
  if ((!in_place && xs == nullptr) || ys == nullptr || ws == nullptr || zeros == nullptr) return fail_oom(ctx);
  std::memset(zeros, 0, static_cast<size_t>(cin + 16) * 4);
  const float* w = weight.data_as<const float>();
  for (int64_t r = 0; !ready && r < taps * cin_g; ++r) {  // row r = t * cin_g + ci, written in order
    const int64_t t = r / cin_g, ci = r % cin_g;
    const float* src = w + ci * weight.stride(1) + t / (k[1] * k[2]) * weight.stride(2) +
                       t / k[2] % k[1] * weight.stride(3) + t % k[2] * weight.stride(4);
    for (int64_t o_ = 0; o_ < cout; ++o_) ws[r * cout + o_] = src[o_ * weight.stride(0)];
  }
  const float* b = bias == nullptr ? nullptr : bias->data_as<const float>();
  float* y = out->data_as<float>();
  const int64_t frame_in = in[1] * in[2] * cin, frame_out = o[1] * o[2] * cout;
  // A frame's 2-D geometry (the batch, the frames a tap reaches, is set per tap).
  ConvShape frame{};
  frame.cin = cin;
  frame.h = in[1];
  frame.w = in[2];
  frame.cout = cout;
  frame.kh = k[1];
  frame.kw = k[2];
  frame.groups = groups;
  frame.sh = stride[1];
  frame.sw = stride[2];
  frame.ph = padding[1];
  frame.pw = padding[2];
  frame.dh = dilation[1];
  frame.dw = dilation[2];
  frame.oh = o[1];
  frame.ow = o[2];
  for (int64_t n = 0; n < batch; ++n) {
    const float* x = input.data_as<const float>() + n * input.stride(0);
    if (!in_place) {
      const bool dense = input.stride(4) == 1 && input.stride(3) == in[2] && input.stride(2) == in[1] * in[2];
      if (dense) {
        copy_to_row_major(x, volume, cin, 1, input.stride(1), xs);
      } else {
        for (int64_t v = 0; v < volume; ++v) {
          const int64_t z = v / (in[1] * in[2]), yy = v / in[2] % in[1], xx = v % in[2];
          const float* src = x + z * input.stride(2) + yy * input.stride(3) + xx * input.stride(4);
          for (int64_t c = 0; c < cin; ++c) xs[v * cin + c] = src[c * input.stride(1)];
        }
      }
      x = xs;
    }
    float* cur = ys;
    float* next = ys + out_elements;
    for (int64_t p = 0; p < pixels; ++p) {
      for (int64_t c = 0; c < cout; ++c) cur[p * cout + c] = b == nullptr ? 0.0f : b[c * bias->stride(0)];
    }
    // Each frame tap kz adds a 2-D convolution of the input frames it reads to the output
    // frames, those frames the batch: channels-last tiles (Winograd for 3x3 frames), the sums so
    // far read as the residual.
    for (int64_t kz = 0; kz < k[0] && cin_g > 0; ++kz) {
      const int64_t shift = kz * dilation[0] - padding[0];  // iz = od * stride + shift
      const int64_t od_lo = std::max<int64_t>(0, (-shift + stride[0] - 1) / stride[0]);
      const int64_t od_hi = std::min(o[0], (in[0] - 1 - shift) / stride[0] + 1);
      if (shift >= in[0] || od_hi <= od_lo) continue;
      frame.batch = od_hi - od_lo;
      NhwcConv c = nhwc_geometry(frame);
      c.in = x + (od_lo * stride[0] + shift) * frame_in;
      c.in_sn = stride[0] * frame_in;
      c.in_sh = in[2] * cin;
      c.in_sw = cin;
      c.weight = ws + kz * k[1] * k[2] * cin_g * cout;
      c.w_ld = cout;
      c.out = next + od_lo * frame_out;
      c.out_ps = cout;
      c.residual = cur + od_lo * frame_out;
      c.zeros = zeros;
      if (!nhwc_convolution(ctx, c)) return fail_oom(ctx);
      std::memcpy(next, cur, static_cast<size_t>(od_lo * frame_out) * 4);  // frames this tap misses
      std::memcpy(next + od_hi * frame_out, cur + od_hi * frame_out,
                  static_cast<size_t>((o[0] - od_hi) * frame_out) * 4);
      std::swap(cur, next);
    }
    copy_to_row_major(cur, cout, pixels, 1, cout, y + n * cout * pixels);
  }
}

// aten::hardswish's steps (elementwise.cpp): x * clamp(x + 3, 0, 6) / 6, NaN passing through.
float hardswish(float x) {
  float t = x + 3.0f;
  t = t < 0.0f ? 0.0f : t;
  t = t > 6.0f ? 6.0f : t;
  return x * t / 6.0f;
}

// o = f(o, r) over every element of `out` and of `residual` (nullptr: r is 0), any strides.
template <class F>
void each_element(Tensor& out, const Tensor* residual, F f) {
  const int nd = out.dim();
  int64_t index[kMaxDims] = {};
  float* o = out.data_as<float>();
  const float* r = residual == nullptr ? nullptr : residual->data_as<const float>();
  for (int64_t n = 0; n < out.numel(); ++n) {
    int64_t at = 0, rat = 0;
    for (int d = 0; d < nd; ++d) {
      at += index[d] * out.stride(d);
      if (r != nullptr) rat += index[d] * residual->stride(d);
    }
    o[at] = f(o[at], r != nullptr ? r[rat] : 0.0f);
    for (int d = nd - 1; d >= 0 && ++index[d] == out.size(d); --d) index[d] = 0;
  }
}

// The epilogue as a pass over the output, where the kernels did not apply it (any layout of the
// residual; NaN passes the clamp, as in ATen).
void apply_epilogue(const Epilogue& ep, Tensor& out) {
  const Tensor* first = ep.residual_last ? nullptr : ep.residual;
  each_element(out, first, [&](float v, float r) {
    if (first != nullptr) v = v + r;
    if (v < ep.lo) v = ep.lo;
    if (v > ep.hi) v = ep.hi;
    if (ep.activation == NhwcActivation::Hardswish) v = hardswish(v);
    if (ep.activation == NhwcActivation::LeakyRelu) v = leaky_relu_step(v, ep.slope);
    return v;
  });
  // aten::silu's / aten::sigmoid's own loop over the dense output: the separate op's bits.
  float* o = out.data_as<float>();
  if (ep.activation == NhwcActivation::Silu) silu_contiguous(o, o, out.numel());
  if (ep.activation == NhwcActivation::Sigmoid) sigmoid_contiguous(o, o, out.numel());
  if (ep.residual_last && ep.residual != nullptr) each_element(out, ep.residual, [](float v, float r) { return v + r; });
}

// aten::convolution's arguments (output last, args[9]); `ep` (or nullptr) as above.
void convolution(KernelContext& ctx, Span<Value*> args, Epilogue* ep) {
  const Tensor* input = tensor_arg(ctx, kOp, args, 0, "input");
  const Tensor* weight = tensor_arg(ctx, kOp, args, 1, "weight");
  Tensor* bias = nullptr;
  if (input == nullptr || weight == nullptr ||
      !optional_tensor_arg(ctx, kOp, args, 2, "bias", &bias) ||
      !check_dtype(ctx, kOp, *input, "input", ScalarType::Float) ||
      !check_dtype(ctx, kOp, *weight, "weight", ScalarType::Float) ||
      !check_has_data(ctx, kOp, *input, "input") || !check_has_data(ctx, kOp, *weight, "weight")) {
    return;
  }
  if (input->dim() < 3 || input->dim() > 5) {
    fail(ctx, kOp, "only 1-D, 2-D and 3-D convolutions are supported (input of 3 to 5 dimensions), got " +
                       shape_string(input->sizes()));
    return;
  }
  if (weight->dim() != input->dim()) {
    fail(ctx, kOp, "weight " + shape_string(weight->sizes()) + " does not match input " +
                       shape_string(input->sizes()));
    return;
  }
  const int spatial = input->dim() - 2;
  int64_t stride[3], padding[3], dilation[3], output_padding[3];
  bool transposed = false;
  int64_t groups = 0;
  if (!spatial_list(ctx, args, 3, "stride", spatial, 1, stride) ||
      !spatial_list(ctx, args, 4, "padding", spatial, 0, padding) ||
      !spatial_list(ctx, args, 5, "dilation", spatial, 1, dilation) ||
      !bool_arg(ctx, kOp, args, 6, "transposed", &transposed) ||
      !spatial_list(ctx, args, 7, "output_padding", spatial, 0, output_padding) ||
      !int_arg(ctx, kOp, args, 8, "groups", &groups)) {
    return;
  }
  if (bias != nullptr && (!check_dtype(ctx, kOp, *bias, "bias", ScalarType::Float) ||
                          !check_has_data(ctx, kOp, *bias, "bias"))) {
    return;
  }
  if (spatial == 3) {
    if (transposed) {
      fail(ctx, kOp, "3-D transposed convolution is not supported");
      return;
    }
    conv3d(ctx, args, *input, *weight, bias, stride, padding, dilation, groups);
    return;
  }
  if (transposed) {
    conv_transposed(ctx, args, *input, *weight, bias, spatial, stride, padding, dilation, output_padding, groups);
    return;
  }
  ConvShape s{};
  s.batch = input->size(0);
  s.cin = input->size(1);
  s.h = spatial == 2 ? input->size(2) : 1;
  s.w = input->size(-1);
  s.in_sn = input->stride(0);
  s.in_sc = input->stride(1);
  s.in_sh = spatial == 2 ? input->stride(2) : 0;
  s.in_sw = input->stride(-1);
  s.cout = weight->size(0);
  s.kh = spatial == 2 ? weight->size(2) : 1;
  s.kw = weight->size(-1);
  s.groups = groups;
  s.sh = spatial == 2 ? stride[0] : 1;
  s.sw = stride[spatial - 1];
  s.ph = spatial == 2 ? padding[0] : 0;
  s.pw = padding[spatial - 1];
  s.dh = spatial == 2 ? dilation[0] : 1;
  s.dw = dilation[spatial - 1];
  int64_t grouped_cin = 0;
  if (groups < 1 || s.cin % groups != 0 || s.cout % groups != 0 || !checked::mul(weight->size(1), groups, &grouped_cin) ||
      grouped_cin != s.cin) {
    fail(ctx, kOp, "input " + shape_string(input->sizes()) + ", weight " +
                       shape_string(weight->sizes()) + " and groups=" + std::to_string(groups) +
                       " do not agree");
    return;
  }
  if (bias != nullptr) {
    if (bias->dim() != 1 || bias->size(0) != s.cout) {
      fail(ctx, kOp, "bias must have shape [" + std::to_string(s.cout) + "], got " +
                         shape_string(bias->sizes()));
      return;
    }
  }
  if (!checked::window(s.h, s.kh, s.ph, s.ph, s.sh, s.dh, false, &s.oh) ||
      !checked::window(s.w, s.kw, s.pw, s.pw, s.sw, s.dw, false, &s.ow)) {
    fail(ctx, kOp, "kernel " + shape_string(weight->sizes()) + " with stride " +
                       shape_string(Span<const int64_t>(stride, static_cast<size_t>(spatial))) + ", padding " +
                       shape_string(Span<const int64_t>(padding, static_cast<size_t>(spatial))) + " and dilation " +
                       shape_string(Span<const int64_t>(dilation, static_cast<size_t>(spatial))) +
                       " does not fit the input " + shape_string(input->sizes()));
    return;
  }
  int64_t out_sizes[4] = {s.batch, s.cout, s.oh, s.ow};
  if (spatial == 1) out_sizes[2] = s.ow;
  Tensor* out = strided_output_arg(ctx, kOp, args, 9, ScalarType::Float,
                                   Span<const int64_t>(out_sizes, static_cast<size_t>(input->dim())));
  if (out == nullptr || out->numel() == 0) return;
  // Channels-last output (or one that is both layouts, with weights stored for the NHWC path).
  const bool slice = ep != nullptr && ep->out_ps > 0;
  if (spatial == 2 && (slice || channels_last_dense(*out)) &&
      (slice || !out->is_contiguous() || weight_hwio(*weight))) {
    conv_nhwc(ctx, s, *input, *weight, bias, *out, ep);
    return;
  }
  if (slice || !out->is_contiguous()) {
    fail(ctx, kOp, slice ? "an output channel slice needs a 2-D convolution"
                         : "output must be contiguous, or channels-last for a 2-D convolution");
    return;
  }
  // The column matrix (plus a row for a folded bias) is a tensor of its own: bounded like one.
  int64_t col_elements = 0;
  if (!checked::mul(s.kdim() + 1, s.pixels(), &col_elements) || col_elements > checked::kMaxElements) {
    fail(ctx, kOp, "the unfolded input of weight " + shape_string(weight->sizes()) + " over output " +
                       shape_string(out->sizes()) + " exceeds " + std::to_string(checked::kMaxElements) + " elements");
    return;
  }

  // A: the weights as a contiguous [Cout, Cin_g*KH*KW] matrix, the bias appended when folded.
  ConvPlan plan{weight->data_as<const float>(), s.kdim(), s.kdim(), nullptr};
  const bool fold_bias = bias != nullptr && !s.col_is_input();
  if (fold_bias || !weight->is_contiguous()) {
    plan.lda = s.kdim() + (fold_bias ? 1 : 0);
    float* wb = static_cast<float*>(ctx.allocate_temp(static_cast<size_t>(s.cout * plan.lda) * sizeof(float), 64));
    if (wb == nullptr) return fail_oom(ctx);
    copy_weight(*weight, plan.lda, wb);
    if (fold_bias) {
      const float* b = bias->data_as<const float>();
      for (int64_t o = 0; o < s.cout; ++o) wb[o * plan.lda + s.kdim()] = b[o * bias->stride(0)];
      plan.col_rows = plan.lda;
    }
    plan.weight = wb;
  }
  if (bias != nullptr && !fold_bias) {
    plan.bias = bias->data_as<const float>();
    if (bias->stride(0) != 1 && s.cout > 1) {
      float* copy = static_cast<float*>(ctx.allocate_temp(static_cast<size_t>(s.cout) * sizeof(float), 64));
      if (copy == nullptr) return fail_oom(ctx);
      for (int64_t i = 0; i < s.cout; ++i) copy[i] = plan.bias[i * bias->stride(0)];
      plan.bias = copy;
    }
  }

  const float* in = input->data_as<const float>();
  float* o = out->data_as<float>();
  const int64_t items = s.batch * s.groups;
  const size_t col_floats =
      s.col_is_input() ? 0 : (static_cast<size_t>(plan.col_rows * s.pixels()) + 15) / 16 * 16;
  GemmParams probe;
  probe.m = s.cout_g();
  probe.n = s.pixels();
  probe.k = plan.col_rows;
  probe.a_rs = plan.lda;
  probe.a_cs = 1;
  probe.b_rs = s.col_is_input() ? s.in_sc : s.pixels();
  probe.b_cs = 1;
  const size_t gemm_floats = (sgemm_scratch_floats(probe) + 15) / 16 * 16;
  const int threads = parallel_num_threads();
  const double macs = static_cast<double>(probe.m) * static_cast<double>(probe.n) *
                      static_cast<double>(probe.k);

  if (threads > 1 && items < threads) {
    // Few big images: parallelise inside the GEMM.
    float* col = nullptr;
    if (col_floats > 0) {
      col = static_cast<float*>(ctx.allocate_temp(col_floats * sizeof(float), 64));
      if (col == nullptr) return fail_oom(ctx);
      fill_ones_row(s, plan, col);
    }
    for (int64_t it = 0; it < items; ++it) {
      bool ok = true;
      conv_one(s, plan, in, o, it / s.groups, it % s.groups, col, nullptr, &ctx, &ok);
      if (!ok) return fail_oom(ctx);
    }
    return;
  }
  const int64_t parts =
      (threads > 1 && macs * static_cast<double>(items) >= 128.0 * 1024.0) ? threads : 1;
  const size_t per_part = col_floats + gemm_floats;
  float* scratch = nullptr;
  if (per_part > 0) {
    scratch = static_cast<float*>(ctx.allocate_temp(per_part * static_cast<size_t>(parts) * sizeof(float), 64));
    if (scratch == nullptr) return fail_oom(ctx);
  }
  auto run_part = [&](int64_t t) {
    float* col = scratch == nullptr ? nullptr : scratch + per_part * static_cast<size_t>(t);
    float* gs = col == nullptr ? nullptr : col + col_floats;
    if (col_floats > 0) fill_ones_row(s, plan, col);
    for (int64_t it = items * t / parts; it < items * (t + 1) / parts; ++it) {
      conv_one(s, plan, in, o, it / s.groups, it % s.groups, col, gs, nullptr, nullptr);
    }
  };
  if (parts == 1) {
    run_part(0);
    return;
  }
  parallel_for(0, parts, 1, [&](int64_t b0, int64_t e0) {
    for (int64_t t = b0; t < e0; ++t) run_part(t);
  });
}

}  // namespace

void op_convolution(KernelContext& ctx, Span<Value*> args) {
  if (!check_nargs(ctx, kOp, args, 10)) return;
  convolution(ctx, args, nullptr);
}

// etrt_fused::conv2d(input, weight, bias?, stride, padding, dilation, transposed, output_padding,
// groups, residual?, min?, max?, [activation?, [out_channel,]] out): aten::convolution's
// arguments, then the epilogue's. activation (None, "hardswish", "silu", "sigmoid", or a number:
// leaky ReLU with that negative slope) came later: programs written before it have 13 arguments
// and still run. With out_channel (15 arguments),
// `out` is a wider channels-last tensor and the call writes channels [out_channel, out_channel +
// Cout) of it: what a channel concatenation of convolutions becomes (python/etrt/concat_in_place.py).
// With residual_last (16 arguments, out_channel None or a number), true: the residual is added
// after the activation instead of before the clamp (x + act(conv(...)), CSPDarknet's blocks).
void op_fused_conv2d(KernelContext& ctx, Span<Value*> args) {
  const char* op = "etrt_fused::conv2d";
  if (!check_nargs(ctx, op, args, args.size() >= 14 ? std::min<size_t>(args.size(), 16) : 13)) return;
  Epilogue ep;
  if (args.size() == 16) {
    if (!args[14]->is_bool()) {
      fail(ctx, op, "'residual_last' must be a bool");
      return;
    }
    ep.residual_last = args[14]->to_bool();
    if (ep.residual_last && args[9]->is_none()) {
      fail(ctx, op, "'residual_last' is true without a residual");
      return;
    }
  }
  if (args.size() >= 14 && (args[12]->is_double() || args[12]->is_int())) {
    double slope = 0.0;
    if (!scalar_arg(ctx, op, args, 12, "activation", &slope)) return;
    ep.activation = NhwcActivation::LeakyRelu;
    ep.slope = static_cast<float>(slope);
  } else if (args.size() >= 14 && !args[12]->is_none()) {
    const std::string name = args[12]->is_string() ? std::string(args[12]->to_string()) : std::string();
    if (name == "hardswish") {
      ep.activation = NhwcActivation::Hardswish;
    } else if (name == "silu") {
      ep.activation = NhwcActivation::Silu;
    } else if (name == "sigmoid") {
      ep.activation = NhwcActivation::Sigmoid;
    } else {
      fail(ctx, op, "'activation' must be None, \"hardswish\", \"silu\", \"sigmoid\" or a leaky ReLU's slope");
      return;
    }
  }
  Value* out_arg = args[args.size() - 1];
  Tensor* residual = nullptr;
  double bound = 0.0;
  if (!optional_tensor_arg(ctx, op, args, 9, "residual", &residual)) return;
  if (!args[10]->is_none()) {
    if (!scalar_arg(ctx, op, args, 10, "min", &bound)) return;
    ep.lo = static_cast<float>(bound);
  }
  if (!args[11]->is_none()) {
    if (!scalar_arg(ctx, op, args, 11, "max", &bound)) return;
    ep.hi = static_cast<float>(bound);
  }
  if (residual != nullptr && (!check_dtype(ctx, op, *residual, "residual", ScalarType::Float) ||
                              !check_has_data(ctx, op, *residual, "residual"))) {
    return;
  }
  ep.residual = residual;
  Value slice_value;
  if (args.size() >= 15 && !args[13]->is_none()) {
    int64_t first = 0;
    if (!int_arg(ctx, op, args, 13, "out_channel", &first)) return;
    const Tensor* weight = tensor_arg(ctx, op, args, 1, "weight");
    Tensor* whole = writable_output(ctx, op, args, args.size() - 1, "out");
    if (weight == nullptr || whole == nullptr) return;
    if (whole->dtype() != ScalarType::Float || whole->is_dynamic() || !channels_last_dense(*whole)) {
      fail(ctx, op, "with 'out_channel', 'out' must be a float channels-last 4-D tensor of fixed shape, got " +
                        shape_string(whole->sizes()));
      return;
    }
    const int64_t cout = weight->dim() > 0 ? weight->size(0) : 0;
    if (residual != nullptr || first < 0 || cout < 1 || first > whole->size(1) - cout) {
      fail(ctx, op, residual != nullptr ? std::string("'out_channel' does not go with a residual")
                                        : "channels [" + std::to_string(first) + ", " + std::to_string(first) + " + " +
                                              std::to_string(cout) + ") are not inside 'out' " +
                                              shape_string(whole->sizes()));
      return;
    }
    const int64_t sizes[4] = {whole->size(0), cout, whole->size(2), whole->size(3)};
    const int64_t ps = whole->size(1);
    const int64_t strides[4] = {whole->size(2) * whole->size(3) * ps, 1, whole->size(3) * ps, ps};
    Result<Tensor> view = Tensor::make(whole->data_as<float>() + first, ScalarType::Float,
                                       Span<const int64_t>(sizes, 4), Span<const int64_t>(strides, 4));
    if (!view.ok()) {
      fail(ctx, op, "the channel slice of 'out' " + shape_string(whole->sizes()) + " is not a tensor");
      return;
    }
    slice_value = Value(view.get());
    out_arg = &slice_value;
    ep.out_ps = ps;
  }
  Value* conv_args[10] = {args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7], args[8], out_arg};
  convolution(ctx, Span<Value*>(conv_args, 10), &ep);
  if (ctx.failed() || ep.fused) return;
  Tensor& out = out_arg->to_tensor();
  if (residual != nullptr && !same_sizes(residual->sizes(), out.sizes())) {
    fail(ctx, op, "residual " + shape_string(residual->sizes()) + " does not match the output " +
                      shape_string(out.sizes()));
    return;
  }
  apply_epilogue(ep, out);
}

}  // namespace kernels
}  // namespace etrt
