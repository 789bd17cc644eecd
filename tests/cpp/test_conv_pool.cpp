// aten::convolution, etrt_fused::conv2d (the same, plus a residual and a clamp) and
// aten::max_pool2d_with_indices through the registry, against direct reference loops, over random
// geometry and strided inputs.
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "check.h"
// The kernel library hides its internals: this test links the library's objects of the
// convolution (and the GEMM, whose choice of instruction set it follows), etrt_kernels_core, to
// run them with every instruction set. The other tests call the library through the registry.
#include "kernels/conv_nhwc.h"
#include "kernels/gemm.h"
#include "kernels/heavy.h"
#include "kernels/logistic.h"
#include "etrt/runtime/parallel.h"
#include "etrt/runtime/tensor.h"
#include "etrt/runtime/value.h"

using etrt::ScalarType;
using etrt::Tensor;
using etrt::Value;

namespace {

std::mt19937& rng() {
  static std::mt19937 g(4321);
  return g;
}
int64_t rand_int(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng()); }
float rand_float() { return std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng()); }

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> s(sizes.size(), 1);
  for (int i = static_cast<int>(sizes.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * sizes[i + 1];
  return s;
}

// A tensor over its own buffer with explicit strides.
template <typename T>
struct Buf {
  std::vector<T> data;
  Tensor t;
  Value v;
  Buf(std::vector<int64_t> sizes, std::vector<int64_t> strides = {}) {
    if (strides.empty()) strides = contiguous_strides(sizes);
    int64_t span = 1;
    for (size_t i = 0; i < sizes.size(); ++i) span += (sizes[i] - 1) * strides[i];
    data.resize(static_cast<size_t>(span < 1 ? 1 : span));
    for (auto& x : data) x = static_cast<T>(rand_float());
    auto r = Tensor::make(data.data(), etrt::CppTypeToScalarType<T>::value,
                          etrt::Span<const int64_t>(sizes.data(), sizes.size()),
                          etrt::Span<const int64_t>(strides.data(), strides.size()));
    if (!r.ok()) std::fprintf(stderr, "Tensor::make: %s\n", r.error().to_string().c_str());
    t = r.get();
    v = Value(t);
  }
  T& at(std::initializer_list<int64_t> idx) {
    int64_t off = 0;
    int d = 0;
    for (int64_t i : idx) off += i * t.stride(d++);
    return data[static_cast<size_t>(off)];
  }
};

// A 4-D [N, C, 1, W] tensor viewed as the 1-D [N, C, W].
Tensor without_height(const Tensor& t) {
  const int64_t sizes[3] = {t.size(0), t.size(1), t.size(3)};
  const int64_t strides[3] = {t.stride(0), t.stride(1), t.stride(3)};
  return Tensor::make(t.data(), t.dtype(), sizes, strides).get();
}

// Strides of an NCHW-shaped tensor stored channels-last (NHWC).
std::vector<int64_t> channels_last(int64_t c, int64_t h, int64_t w) { return {h * w * c, 1, w * c, c}; }

// A random window over a random input: kernel up to max_k, stride up to 3, dilation up to 2,
// padding up to half the kernel, and an input the window fits.
struct Window {
  int64_t kh, kw, sh, sw, dh, dw, ph, pw, h, w;
};
Window random_window(int64_t max_k) {
  Window g{};
  g.kh = rand_int(1, max_k);
  g.kw = rand_int(1, max_k);
  g.sh = rand_int(1, 3);
  g.sw = rand_int(1, 3);
  g.dh = rand_int(1, 2);
  g.dw = rand_int(1, 2);
  g.ph = rand_int(0, g.kh / 2);
  g.pw = rand_int(0, g.kw / 2);
  g.h = (g.kh - 1) * g.dh + rand_int(1, 10);
  g.w = (g.kw - 1) * g.dw + rand_int(1, 10);
  return g;
}

// Copies a window into a convolution or pooling case.
template <typename Case>
void set_window(Case* c, const Window& g) {
  c->kh = g.kh, c->kw = g.kw, c->sh = g.sh, c->sw = g.sw, c->dh = g.dh, c->dw = g.dw;
  c->ph = g.ph, c->pw = g.pw, c->h = g.h, c->w = g.w;
}

struct ConvCase {
  int64_t n, cin, cout, groups, h, w, kh, kw, sh, sw, ph, pw, dh, dw;
  bool bias, one_d, strided_input, strided_weight;
  bool nhwc_out = false;     // output channels-last: the NHWC kernels
  bool hwio_weight = false;  // weight stored [kh][kw][cin_g][cout], as the exporter stores it
  bool local = false;        // this test's copy of the kernel (any forced instruction set)
  // etrt_fused::conv2d: plus a residual (laid out like the output, or NCHW whatever the output)
  // and clamped to [-0.25, 0.5].
  bool fused = false;
  bool residual_nchw = false;
  // With fused: no clamp, then the `activation` "hardswish"; the output must also be, bit for
  // bit, aten::hardswish's steps over the same call without it.
  bool hardswish = false;
  // As hardswish, with the `activation` "silu": bit for bit aten::silu's loop over that output.
  bool silu = false;
  bool sigmoid = false;  // the same with "sigmoid"
  bool leaky = false;    // the same with 0.2 (leaky ReLU's slope): x > 0 ? x : x * 0.2f
  // With an activation: the residual added after it (`residual_last`, 16 arguments), bit for bit
  // the activated call without a residual, plus the residual.
  bool residual_last = false;
  double tolerance = 1e-5;  // of the largest output (at least 1)
};

// aten::hardswish's steps in float (elementwise.cpp): what the fused epilogue must reproduce.
float hardswish_steps(float x) {
  float t = x + 3.0f;
  t = t < 0.0f ? 0.0f : t;
  t = t > 6.0f ? 6.0f : t;
  return x * t / 6.0f;
}

// Strides of a [cout, cin_g, kh, kw] weight stored [kh][kw][cin_g][cout].
std::vector<int64_t> hwio(int64_t cout, int64_t cin_g, int64_t kw) { return {1, cout, kw * cin_g * cout, cin_g * cout}; }

void run_conv_case(const ConvCase& c, const std::string& label) {
  check::TestContext ctx;
  const int64_t cin_g = c.cin / c.groups, cout_g = c.cout / c.groups;
  const int64_t h = c.one_d ? 1 : c.h, kh = c.one_d ? 1 : c.kh;
  const int64_t sh = c.one_d ? 1 : c.sh, ph = c.one_d ? 0 : c.ph, dh = c.one_d ? 1 : c.dh;
  const int64_t oh = (h + 2 * ph - dh * (kh - 1) - 1) / sh + 1;
  const int64_t ow = (c.w + 2 * c.pw - c.dw * (c.kw - 1) - 1) / c.sw + 1;
  // Everything is built 4-D; the 1-D case views it without the height dimension.
  Buf<float> input({c.n, c.cin, h, c.w}, c.strided_input ? channels_last(c.cin, h, c.w) : std::vector<int64_t>{});
  Buf<float> weight({c.cout, cin_g, kh, c.kw},
                    c.hwio_weight      ? hwio(c.cout, cin_g, c.kw)
                    : c.strided_weight ? channels_last(cin_g, kh, c.kw)
                                       : std::vector<int64_t>{});
  Buf<float> bias({c.cout});
  Buf<float> out({c.n, c.cout, oh, ow}, c.nhwc_out ? channels_last(c.cout, oh, ow) : std::vector<int64_t>{});
  std::vector<int64_t> stride, padding, dilation, opad;
  Value in_v = input.v, w_v = weight.v, out_v = out.v;
  if (c.one_d) {
    in_v = Value(without_height(input.t));
    w_v = Value(without_height(weight.t));
    out_v = Value(without_height(out.t));
    stride = {c.sw};
    padding = {c.pw};
    dilation = {c.dw};
    opad = {0};
  } else {
    stride = {c.sh, c.sw};
    padding = {ph, c.pw};
    dilation = {dh, c.dw};
    opad = {0, 0};
  }
  Value none;
  Value vs = Value::int_list(stride), vp = Value::int_list(padding), vd = Value::int_list(dilation);
  Value vt(false), vo = Value::int_list(opad), vg(c.groups);
  std::vector<Value*> args = {&in_v, &w_v, c.bias ? &bias.v : &none, &vs, &vp, &vd, &vt, &vo, &vg, &out_v};
  Buf<float> residual({c.n, c.cout, oh, ow}, c.nhwc_out && !c.residual_nchw ? channels_last(c.cout, oh, ow)
                                                                              : std::vector<int64_t>{});
  Value res_v = c.one_d ? Value(without_height(residual.t)) : residual.v, lo(-0.25), hi(0.5);
  const bool post = c.silu || c.sigmoid || c.leaky;  // activations compared with a pass over `plain`
  if (c.hardswish || post) lo = hi = Value();
  if (c.fused) args.insert(args.end() - 1, {&res_v, &lo, &hi});
  const char* op = c.fused ? "etrt_fused::conv2d" : "aten::convolution";
  auto call = [&](std::vector<Value*>& a) {
    if (c.local) {
      ctx.reset();
      (c.fused ? etrt::kernels::op_fused_conv2d : etrt::kernels::op_convolution)(
          ctx, etrt::Span<Value*>(a.data(), a.size()));
      CHECK_OK(ctx.error());
    } else {
      CHECK_OK(check::call(ctx, op, a));
    }
  };
  Buf<float> plain({c.n, c.cout, oh, ow}, c.nhwc_out ? channels_last(c.cout, oh, ow) : std::vector<int64_t>{});
  Value last(true);
  Value act = c.leaky ? Value(0.2) : Value::string(c.silu ? "silu" : c.sigmoid ? "sigmoid" : "hardswish");
  Value plain_v = c.one_d ? Value(without_height(plain.t)) : plain.v;
  std::vector<float> plain_silu;
  if (c.hardswish || post) {
    std::vector<Value*> without = args;
    without.back() = &plain_v;
    if (c.residual_last) without[9] = &none;
    call(without);
    args.insert(args.end() - 1, &act);
    if (c.residual_last) args.insert(args.end() - 1, {&none, &last});
    plain_silu.resize(plain.data.size());
    if (c.leaky) {
      for (size_t i = 0; i < plain.data.size(); ++i) {
        plain_silu[i] = plain.data[i] > 0.0f ? plain.data[i] : plain.data[i] * 0.2f;  // aten::leaky_relu's step
      }
    } else if (post) {
      (c.sigmoid ? etrt::kernels::sigmoid_contiguous : etrt::kernels::silu_contiguous)(
          plain_silu.data(), plain.data.data(), static_cast<int64_t>(plain.data.size()));
    }
  }
  call(args);
  double worst = 0.0, scale = 1.0;
  int64_t mismatches = 0;
  for (int64_t n = 0; n < c.n; ++n)
    for (int64_t o = 0; o < c.cout; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          const int64_t g = o / cout_g;
          double s = c.bias ? bias.at({o}) : 0.0;
          for (int64_t ci = 0; ci < cin_g; ++ci)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < c.kw; ++j) {
                const int64_t iy = y * sh - ph + i * dh, ix = x * c.sw - c.pw + j * c.dw;
                if (iy < 0 || iy >= h || ix < 0 || ix >= c.w) continue;
                s += static_cast<double>(input.at({n, g * cin_g + ci, iy, ix})) * weight.at({o, ci, i, j});
              }
          // The convolution's rounding scales with its own sums, clamped or not.
          scale = std::fmax(scale, std::fabs(s));
          if (c.hardswish || post) {
            const float r = residual.at({n, o, y, x});
            if (!c.residual_last) s += r;
            if (c.hardswish) {
              s = s * std::fmin(std::fmax(s + 3.0, 0.0), 6.0) / 6.0;
            } else {
              s = c.leaky ? (s > 0.0 ? s : s * 0.2) : (c.silu ? s : 1.0) / (1.0 + std::exp(-s));
            }
            if (c.residual_last) s += r;
            const float* p = &plain.at({n, o, y, x});
            float want = c.hardswish ? hardswish_steps(*p) : plain_silu[static_cast<size_t>(p - plain.data.data())];
            if (c.residual_last) want = want + r;
            const float got = out.at({n, o, y, x});
            if (std::memcmp(&want, &got, sizeof want) != 0) ++mismatches;
          } else if (c.fused) {
            s = std::fmin(std::fmax(s + residual.at({n, o, y, x}), -0.25), 0.5);
          }
          worst = std::fmax(worst, std::fabs(s - out.at({n, o, y, x})));
        }
  // Relative to the largest output (at least 1): Winograd's transforms round a little more.
  check::record(worst <= c.tolerance * scale, __FILE__, __LINE__,
                label + " err " + std::to_string(worst) + " of " + std::to_string(scale));
  check::record(mismatches == 0, __FILE__, __LINE__,
                label + ": " + std::to_string(mismatches) + " outputs differ from the separate activation's");
}

void test_convolution_matches_reference() {
  // The test CNN's layer: 1 -> 16, 3x3, padding 1, on 28x28.
  run_conv_case({2, 1, 16, 1, 28, 28, 3, 3, 1, 1, 1, 1, 1, 1, true, false, false, false}, "cnn layer");
  // 1x1 convolution reads the input as the column matrix.
  run_conv_case({2, 8, 12, 1, 5, 7, 1, 1, 1, 1, 0, 0, 1, 1, true, false, false, false}, "1x1");
  run_conv_case({1, 6, 6, 6, 9, 9, 3, 3, 1, 1, 1, 1, 1, 1, false, false, false, false}, "depthwise");
  // "Same" padding at stride 1 builds the column matrix by shifted plane copies.
  run_conv_case({2, 3, 4, 1, 7, 9, 5, 5, 1, 1, 2, 2, 1, 1, true, false, false, false}, "same 5x5");
  run_conv_case({1, 2, 3, 1, 8, 6, 3, 3, 1, 1, 2, 2, 2, 2, true, false, false, false}, "same dilated");
  run_conv_case({1, 2, 3, 1, 1, 10, 1, 3, 1, 1, 0, 1, 1, 1, false, true, false, false}, "same 1-D");
  run_conv_case({1, 2, 3, 1, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, false, false, false, false}, "same tiny");
  run_conv_case({1, 2, 3, 1, 2, 2, 5, 5, 1, 1, 2, 2, 1, 1, false, false, false, false}, "same window > input");
  for (int trial = 0; trial < 40; ++trial) {
    ConvCase c{};
    c.groups = rand_int(1, 3);
    c.cin = c.groups * rand_int(1, 4);
    c.cout = c.groups * rand_int(1, 5);
    c.n = rand_int(1, 3);
    c.kh = rand_int(1, 4);
    c.kw = rand_int(1, 4);
    c.sh = rand_int(1, 3);
    c.sw = rand_int(1, 3);
    c.dh = rand_int(1, 2);
    c.dw = rand_int(1, 2);
    c.ph = rand_int(0, 2);
    c.pw = rand_int(0, 2);
    c.h = (c.kh - 1) * c.dh + rand_int(1, 12);
    c.w = (c.kw - 1) * c.dw + rand_int(1, 12);
    c.bias = trial % 2 == 0;
    c.one_d = trial % 5 == 4;
    c.strided_input = trial % 3 == 1;
    c.strided_weight = trial % 4 == 2;
    run_conv_case(c, "conv trial " + std::to_string(trial));
  }
}

// The NHWC kernels: channels-last outputs, weights stored as the exporter stores them (or not),
// inputs NCHW or channels-last, for every instruction set; tails of pixels and channels, padding,
// the unfolded first-layer path and output-channel blocking of large weights.
void test_channels_last_convolution_matches_reference() {
  const check::KeepIsaCap keep;
  const char* isas[] = {"avx512", "avx2", "sse2"};
  for (const char* name : isas) {
    if (!etrt::kernels::sgemm_force_isa(name)) continue;
    const std::string isa = std::string(" [") + name + "]";
    auto nhwc = [](ConvCase c) {
      c.nhwc_out = true;
      c.local = true;
      return c;
    };
    // A first layer (3 channels, unfolded per tile): ResNet's 7x7/2 and MobileNet's 3x3/2.
    run_conv_case(nhwc({1, 3, 16, 1, 23, 21, 7, 7, 2, 2, 3, 3, 1, 1, true, false, false, false, true, true}),
                  "stem 7x7" + isa);
    run_conv_case(nhwc({2, 3, 16, 1, 17, 17, 3, 3, 2, 2, 1, 1, 1, 1, true, false, false, false, true, true}),
                  "stem 3x3" + isa);
    // Rows wide enough for the in-place tiles over the NCHW input, beside edge pixels: 32, 16
    // and 20 output channels (two vectors, one, a tail), stride 1 and 2, 2 to 3 channels.
    run_conv_case(nhwc({2, 3, 32, 1, 9, 40, 3, 3, 2, 2, 1, 1, 1, 1, true, false, false, false, true, true}),
                  "stem 3x3/2 wide" + isa);
    run_conv_case(nhwc({1, 3, 16, 1, 7, 45, 7, 7, 2, 2, 3, 3, 1, 1, false, false, false, false, true, true}),
                  "stem 7x7/2 wide" + isa);
    run_conv_case(nhwc({1, 2, 20, 1, 6, 29, 3, 3, 1, 1, 1, 1, 1, 1, true, false, false, false, true, true}),
                  "stem 3x3/1 wide" + isa);
    // 3x3 over channels-last input, a strided 1x1 (ResNet's downsample), pointwise with tails.
    run_conv_case(nhwc({2, 40, 48, 1, 9, 11, 3, 3, 1, 1, 1, 1, 1, 1, true, false, true, false, true, true}),
                  "3x3" + isa);
    run_conv_case(nhwc({1, 24, 40, 1, 9, 9, 1, 1, 2, 2, 0, 0, 1, 1, false, false, true, false, true, true}),
                  "1x1 stride 2" + isa);
    run_conv_case(nhwc({3, 17, 70, 1, 5, 3, 1, 1, 1, 1, 0, 0, 1, 1, true, false, true, false, true, true}),
                  "pointwise tails" + isa);
    // Few input channels: below AVX-512 a tile's whole chunks go in one call (a span), then the
    // tail; 96 channels are whole chunks at every cap.
    run_conv_case(nhwc({1, 16, 96, 1, 5, 7, 1, 1, 1, 1, 0, 0, 1, 1, true, false, false, false, true, true}),
                  "pointwise spans" + isa);
    run_conv_case(nhwc({1, 5, 56, 1, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1, false, false, true, false, true, true}),
                  "3x3 spans" + isa);
    // Weights over 512 KiB: blocks of output channels.
    run_conv_case(nhwc({1, 128, 160, 1, 4, 5, 3, 3, 1, 1, 1, 1, 1, 1, true, false, true, false, true, true}),
                  "blocked weights" + isa);
    // Deep windows (3x3 over 1024 channels: 9216 products an output) sum in blocks: one chain
    // rounded 7-10x more than blocks do (its error grows with the square root of its length).
    ConvCase deep = nhwc({1, 1024, 56, 1, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, true, false, true, false, true, true});
    deep.tolerance = 1e-6;
    run_conv_case(deep, "deep window" + isa);
    deep.kh = deep.kw = 1;
    deep.ph = deep.pw = 0;
    deep.cin = 4096;
    run_conv_case(deep, "deep pointwise" + isa);
    // Winograd F(4x4, 3x3): partial tiles at the bottom and right, padding 0, 1 and 2, channel
    // counts that are not whole vectors.
    run_conv_case(nhwc({2, 32, 48, 1, 17, 15, 3, 3, 1, 1, 1, 1, 1, 1, true, false, true, false, true, true}),
                  "winograd pad 1" + isa);
    run_conv_case(nhwc({4, 16, 16, 1, 12, 14, 3, 3, 1, 1, 0, 0, 1, 1, false, false, true, false, true, true}),
                  "winograd pad 0" + isa);
    run_conv_case(nhwc({2, 24, 40, 1, 14, 14, 3, 3, 1, 1, 2, 2, 1, 1, true, false, false, false, true, true}),
                  "winograd pad 2 nchw input" + isa);
    run_conv_case(nhwc({4, 20, 17, 1, 9, 10, 3, 3, 1, 1, 1, 1, 1, 1, true, false, true, false, true, false}),
                  "winograd tails repacked weights" + isa);
    // Depthwise 3x3 and 5x5/2 with a channel tail (72 = 4.5 vectors of 16).
    run_conv_case(nhwc({2, 72, 72, 72, 10, 9, 3, 3, 1, 1, 1, 1, 1, 1, true, false, true, false, true, true}),
                  "depthwise 3x3" + isa);
    run_conv_case(nhwc({1, 72, 72, 72, 13, 11, 5, 5, 2, 2, 2, 2, 1, 1, true, false, true, false, true, true}),
                  "depthwise 5x5/2" + isa);
    // The register-blocked tiles: rows whose last tile is 6, 7 or 4 pixels wide, 3x3/2 and 5x5/1,
    // channels of 2.5 and 1.5 vectors, padding on both sides; 8 channels (fewer than a vector at
    // AVX-512: dw_tile); a 5x5 at dilation 2 (dw_tile).
    run_conv_case(nhwc({2, 32, 32, 32, 15, 27, 3, 3, 2, 2, 1, 1, 1, 1, true, false, true, false, true, true}),
                  "depthwise 3x3/2 tail 6" + isa);
    run_conv_case(nhwc({1, 40, 40, 40, 9, 15, 5, 5, 1, 1, 2, 2, 1, 1, true, false, true, false, true, true}),
                  "depthwise 5x5 tail 7" + isa);
    run_conv_case(nhwc({1, 24, 24, 24, 6, 12, 3, 3, 1, 1, 1, 1, 1, 1, false, false, false, false, true, true}),
                  "depthwise 3x3 tail 4" + isa);
    run_conv_case(nhwc({1, 8, 8, 8, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, true, false, true, false, true, true}),
                  "depthwise 8 channels" + isa);
    // Rows with runs of whole tiles inside the input (one call per run and channel chunk).
    run_conv_case(nhwc({1, 48, 48, 48, 5, 40, 3, 3, 1, 1, 1, 1, 1, 1, true, false, true, false, true, true}),
                  "depthwise 3x3 runs" + isa);
    run_conv_case(nhwc({2, 24, 24, 24, 7, 60, 5, 5, 2, 2, 2, 2, 1, 1, true, false, true, false, true, true}),
                  "depthwise 5x5/2 runs" + isa);
    // 3x3 runs below AVX-512 go tile by tile over every channel chunk: stride 2 with a channel
    // tail (44 = 5.5 vectors of 8), and with the epilogue (residual and clamp).
    run_conv_case(nhwc({1, 44, 44, 44, 7, 70, 3, 3, 2, 2, 1, 1, 1, 1, true, false, true, false, true, true}),
                  "depthwise 3x3/2 runs" + isa);
    run_conv_case(nhwc({1, 24, 24, 24, 11, 12, 5, 5, 1, 1, 4, 4, 2, 2, true, false, true, false, true, true}),
                  "depthwise 5x5 dilated" + isa);
    // Grouped: ResNeXt's 32 groups of 4 channels (joined 2 or 4 to a vector of output channels:
    // block-diagonal panels), at stride 1 and 2; groups of 8, 16 and 24 (RegNet's widths: one
    // vector and more, a tail of half a vector at AVX-512); groups whose count no join divides
    // evenly into a vector (3 of 2: all joined); a grouped 1x1 (ShuffleNet's); a dilated 3x3 over
    // an NCHW input; repacked weights; a channel multiplier (depthwise with 2 outputs a channel).
    run_conv_case(nhwc({1, 128, 128, 32, 10, 10, 3, 3, 1, 1, 1, 1, 1, 1, true, false, true, false, true, true}),
                  "grouped 32x4" + isa);
    run_conv_case(nhwc({2, 128, 128, 32, 11, 9, 3, 3, 2, 2, 1, 1, 1, 1, false, false, true, false, true, true}),
                  "grouped 32x4/2" + isa);
    run_conv_case(nhwc({1, 64, 64, 8, 9, 12, 3, 3, 1, 1, 1, 1, 1, 1, true, false, true, false, true, true}),
                  "grouped 8x8" + isa);
    run_conv_case(nhwc({1, 96, 96, 6, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, true, false, true, false, true, true}),
                  "grouped 6x16" + isa);
    run_conv_case(nhwc({2, 72, 72, 3, 8, 6, 3, 3, 2, 2, 1, 1, 1, 1, true, false, true, false, true, true}),
                  "grouped 3x24/2" + isa);
    run_conv_case(nhwc({1, 6, 6, 3, 9, 9, 3, 3, 1, 1, 1, 1, 1, 1, true, false, true, false, true, true}),
                  "grouped 3x2 all joined" + isa);
    run_conv_case(nhwc({2, 60, 120, 3, 6, 7, 1, 1, 1, 1, 0, 0, 1, 1, true, false, true, false, true, true}),
                  "grouped 1x1" + isa);
    run_conv_case(nhwc({1, 48, 40, 4, 12, 11, 3, 3, 1, 1, 2, 2, 2, 2, false, false, false, false, true, true}),
                  "grouped dilated nchw input" + isa);
    run_conv_case(nhwc({1, 40, 80, 5, 9, 9, 3, 3, 1, 1, 1, 1, 1, 1, true, false, true, true, true, false}),
                  "grouped repacked weights" + isa);
    run_conv_case(nhwc({1, 16, 32, 16, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, true, false, true, false, true, true}),
                  "channel multiplier 2" + isa);
    // The epilogue in the tiles: igemm, Winograd, depthwise, grouped; then a residual in another
    // layout than the output (the pass over the output).
    auto fused = [&](ConvCase c) {
      c = nhwc(c);
      c.fused = true;
      return c;
    };
    run_conv_case(fused({2, 40, 48, 1, 9, 11, 3, 3, 1, 1, 1, 1, 1, 1, true, false, true, false, true, true}),
                  "fused 3x3" + isa);
    run_conv_case(fused({1, 24, 100, 1, 4, 9, 1, 1, 1, 1, 0, 0, 1, 1, true, false, true, false, true, true}),
                  "fused pointwise spans" + isa);
    run_conv_case(fused({2, 32, 48, 1, 17, 15, 3, 3, 1, 1, 1, 1, 1, 1, true, false, true, false, true, true}),
                  "fused winograd" + isa);
    // 1x1 over few tiles with rows 129-768 deep run chunk by chunk under AVX2: 7x7 with the
    // epilogue and a channel tail (44 = 5.5 vectors of 8), 5x6 without bias.
    run_conv_case(fused({1, 200, 44, 1, 7, 7, 1, 1, 1, 1, 0, 0, 1, 1, true, false, true, false, true, true}),
                  "fused pointwise 7x7, chunk by chunk" + isa);
    run_conv_case(nhwc({1, 700, 72, 1, 5, 6, 1, 1, 1, 1, 0, 0, 1, 1, false, false, true, false, true, true}),
                  "pointwise 5x6, chunk by chunk, no bias" + isa);
    run_conv_case(fused({2, 72, 72, 72, 10, 9, 3, 3, 1, 1, 1, 1, 1, 1, true, false, true, false, true, true}),
                  "fused depthwise" + isa);
    run_conv_case(fused({1, 3, 32, 1, 9, 40, 3, 3, 2, 2, 1, 1, 1, 1, true, false, false, false, true, true}),
                  "fused stem" + isa);
    run_conv_case(fused({1, 40, 40, 40, 9, 14, 5, 5, 2, 2, 2, 2, 1, 1, true, false, true, false, true, true}),
                  "fused depthwise 5x5/2" + isa);
    run_conv_case(fused({2, 20, 20, 20, 5, 40, 3, 3, 1, 1, 1, 1, 1, 1, true, false, true, false, true, true}),
                  "fused depthwise 3x3 runs" + isa);
    run_conv_case(fused({1, 128, 128, 32, 10, 10, 3, 3, 1, 1, 1, 1, 1, 1, true, false, true, false, true, true}),
                  "fused grouped 32x4" + isa);
    run_conv_case(fused({1, 96, 96, 6, 7, 7, 3, 3, 2, 2, 1, 1, 1, 1, true, false, true, false, true, true}),
                  "fused grouped 6x16/2" + isa);
    // An activation in the tiles of each kernel, and after the pass (an NCHW residual): hardswish
    // (MobileNetV3's conv -> hardswish) in registers; SiLU and sigmoid (EfficientNet-B0's conv ->
    // silu and squeeze-excitation gate) and leaky ReLU (CSPDarknet's) by their ops' steps over
    // each stored step.
    const std::vector<std::pair<ConvCase, std::string>> activated = {
        {{2, 40, 48, 1, 9, 11, 3, 3, 1, 1, 1, 1, 1, 1, true, false, true, false, true, true}, "3x3"},
        {{1, 24, 100, 1, 4, 9, 1, 1, 1, 1, 0, 0, 1, 1, true, false, true, false, true, true}, "pointwise spans"},
        {{2, 32, 48, 1, 17, 15, 3, 3, 1, 1, 1, 1, 1, 1, true, false, true, false, true, true}, "winograd"},
        {{2, 72, 72, 72, 10, 9, 3, 3, 1, 1, 1, 1, 1, 1, true, false, true, false, true, true}, "depthwise"},
        {{1, 3, 32, 1, 9, 40, 3, 3, 2, 2, 1, 1, 1, 1, true, false, false, false, true, true}, "stem"},
        {{1, 40, 40, 40, 9, 14, 5, 5, 2, 2, 2, 2, 1, 1, true, false, true, false, true, true}, "depthwise 5x5/2"},
        {{2, 20, 20, 20, 5, 40, 3, 3, 1, 1, 1, 1, 1, 1, true, false, true, false, true, true}, "depthwise 3x3 runs"},
        {{1, 40, 150, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, true, false, true, false, true, true}, "one pixel"},
        {{1, 64, 64, 16, 9, 10, 3, 3, 1, 1, 1, 1, 1, 1, true, false, true, false, true, true}, "grouped 16x4"},
    };
    for (const std::string act : {"hardswish", "silu", "sigmoid", "leaky_relu"}) {
      auto with = [&](ConvCase c) {
        c = fused(c);
        c.hardswish = act == "hardswish";
        c.silu = act == "silu";
        c.sigmoid = act == "sigmoid";
        c.leaky = act == "leaky_relu";
        return c;
      };
      for (const auto& [c, name] : activated) {
        run_conv_case(with(c), act + " " + name + isa);
        ConvCase last = with(c);
        last.residual_last = true;
        run_conv_case(last, act + " " + name + ", residual last" + isa);
      }
      ConvCase other = with({1, 24, 40, 1, 9, 9, 1, 1, 2, 2, 0, 0, 1, 1, false, false, true, false, true, true});
      other.residual_nchw = true;
      run_conv_case(other, act + ", NCHW residual" + isa);
      other.residual_last = true;
      run_conv_case(other, act + ", NCHW residual last" + isa);
    }
    ConvCase other = fused({1, 24, 40, 1, 9, 9, 1, 1, 2, 2, 0, 0, 1, 1, false, false, true, false, true, true});
    other.residual_nchw = true;
    run_conv_case(other, "fused, NCHW residual" + isa);
    // One output pixel: the output is both layouts; weights stored for the NHWC path pick it.
    run_conv_case({2, 20, 36, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, true, false, false, false, false, true, true},
                  "1x1 pixel" + isa);
    // A single pixel takes up to 8 vectors of channels a call: 150 channels (chunks of 8 vectors
    // and an overlapping tail), fewer than a vector, a 3x3 window over padding, the epilogue.
    for (const int64_t cout : {150, 120, 104, 72}) {  // chunks of 1 to 8 vectors over the caps
      run_conv_case({1, 40, cout, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, true, false, false, false, false, true, true},
                    "one pixel, " + std::to_string(cout) + " channels" + isa);
    }
    run_conv_case(nhwc({1, 24, 5, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, true, false, true, false, true, true}),
                  "one pixel, 5 channels" + isa);
    run_conv_case(nhwc({1, 12, 70, 1, 1, 1, 3, 3, 1, 1, 1, 1, 1, 1, false, false, false, false, true, true}),
                  "one pixel, 3x3 over padding" + isa);
    run_conv_case(fused({1, 40, 150, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, true, false, true, false, true, true}),
                  "fused one pixel" + isa);
    for (int trial = 0; trial < 36; ++trial) {
      ConvCase c{};
      const bool dw = trial % 3 == 0, grouped = trial % 3 == 2;
      c.cin = rand_int(1, 40);
      c.groups = dw ? c.cin : 1;
      c.cout = dw ? c.cin : rand_int(1, 70);
      if (grouped) {  // 2 to 12 groups of 1 to 12 input and output channels
        c.groups = rand_int(2, 12);
        c.cin = c.groups * rand_int(1, 12);
        c.cout = c.groups * rand_int(1, 12);
      }
      c.n = rand_int(1, 3);
      set_window(&c, random_window(5));
      c.bias = trial % 2 == 0;
      c.strided_input = trial % 4 != 1;
      c.hwio_weight = trial % 5 != 2;
      c.strided_weight = !c.hwio_weight && trial % 2 == 1;
      c.nhwc_out = true;
      c.local = true;
      run_conv_case(c, "channels-last trial " + std::to_string(trial) + isa);
    }
  }
  // And the library's own copy, through the registry.
  run_conv_case({2, 40, 48, 1, 9, 11, 3, 3, 1, 1, 1, 1, 1, 1, true, false, true, false, true, true}, "3x3 registry");
  run_conv_case({2, 72, 72, 72, 10, 9, 3, 3, 1, 1, 1, 1, 1, 1, true, false, true, false, true, true},
                "depthwise registry");
  ConvCase fused{2, 40, 48, 1, 9, 11, 3, 3, 1, 1, 1, 1, 1, 1, true, false, true, false, true, true};
  fused.fused = true;
  run_conv_case(fused, "fused registry");
  // An NCHW output (im2col + SGEMM, then the pass), and a 1-D one.
  run_conv_case({2, 8, 12, 1, 5, 7, 3, 3, 1, 1, 1, 1, 1, 1, true, false, false, false, false, false, false, true},
                "fused nchw");
  run_conv_case({2, 8, 12, 1, 5, 7, 3, 3, 1, 1, 1, 1, 1, 1, true, true, false, false, false, false, false, true},
                "fused 1-D");
  ConvCase hs_nchw{2, 8, 12, 1, 5, 7, 3, 3, 1, 1, 1, 1, 1, 1, true, false, false, false, false, false, false, true};
  hs_nchw.hardswish = true;
  run_conv_case(hs_nchw, "hardswish nchw");
}

// Which 3x3 convolutions take Winograd: stride 1, groups 1, 16 channels or more, 32 output tiles
// of 4x4 or more, or 16 with at most 256 x 256 channels (ResNet18's first three stages at
// batch 1, not its 512-channel 7x7 one).
void test_winograd_takes_the_shapes_it_pays_on() {
  auto conv = [](int64_t batch, int64_t c, int64_t hw, int64_t stride, int64_t groups) {
    etrt::kernels::NhwcConv n;
    n.batch = batch;
    n.h = n.w = hw;
    n.cin = n.cout = c;
    n.kh = n.kw = 3;
    n.sh = n.sw = stride;
    n.ph = n.pw = 1;
    n.oh = n.ow = (hw + 2 - 3) / stride + 1;
    n.depthwise = groups > 1;
    n.w_ld = c;
    return n;
  };
  CHECK(etrt::kernels::nhwc_winograd_fits(conv(1, 64, 56, 1, 1)));
  CHECK(etrt::kernels::nhwc_winograd_fits(conv(1, 128, 28, 1, 1)));   // 49 tiles
  CHECK(etrt::kernels::nhwc_winograd_fits(conv(1, 256, 14, 1, 1)));   // 16 tiles
  CHECK(!etrt::kernels::nhwc_winograd_fits(conv(1, 384, 14, 1, 1)));  // 16 tiles, 21 MiB transformed
  CHECK(etrt::kernels::nhwc_winograd_fits(conv(4, 384, 14, 1, 1)));   // 64 tiles
  CHECK(!etrt::kernels::nhwc_winograd_fits(conv(1, 256, 7, 1, 1)));   // 4 tiles
  CHECK(!etrt::kernels::nhwc_winograd_fits(conv(1, 64, 12, 1, 1)));   // 9 tiles
  CHECK(etrt::kernels::nhwc_winograd_fits(conv(4, 256, 14, 1, 1)));
  CHECK(!etrt::kernels::nhwc_winograd_fits(conv(4, 512, 7, 1, 1)));
  CHECK(!etrt::kernels::nhwc_winograd_fits(conv(1, 64, 56, 2, 1)));
  CHECK(!etrt::kernels::nhwc_winograd_fits(conv(1, 64, 56, 1, 64)));
  CHECK(!etrt::kernels::nhwc_winograd_fits(conv(1, 8, 56, 1, 1)));
}

// A channels-last convolution with a constant (read-only) HWIO weight, square input, called
// through op_convolution: what the kept-layout and split tests run through one context or
// another. out() is a channels-last output of the right shape.
struct ConstantWeightConv {
  ConstantWeightConv(int64_t cin, int64_t cout, int64_t hw, int64_t k, int64_t stride, int64_t pad)
      : cout(cout),
        o((hw + 2 * pad - k) / stride + 1),
        input({1, cin, hw, hw}, channels_last(cin, hw, hw)),
        weight({cout, cin, k, k}, hwio(cout, cin, k)),
        bias({cout}),
        stride_pad{stride, stride, pad, pad} {
    weight.t.set_read_only(true);
    weight.v = Value(weight.t);
  }
  Buf<float> out() const { return Buf<float>({1, cout, o, o}, channels_last(cout, o, o)); }
  void run(check::TestContext& ctx, Buf<float>& output) {
    Value vs = Value::int_list(etrt::Span<const int64_t>(stride_pad.data(), 2));
    Value vp = Value::int_list(etrt::Span<const int64_t>(stride_pad.data() + 2, 2));
    Value vd = Value::int_list(etrt::Span<const int64_t>(kOnes.data(), 2));
    Value vo = Value::int_list(etrt::Span<const int64_t>(kZeros.data(), 2));
    Value vt(false), vg(int64_t{1});
    std::vector<Value*> args = {&input.v, &weight.v, &bias.v, &vs, &vp, &vd, &vt, &vo, &vg, &output.v};
    ctx.reset();
    etrt::kernels::op_convolution(ctx, etrt::Span<Value*>(args.data(), args.size()));
    CHECK_OK(ctx.error());
  }
  static constexpr std::array<int64_t, 2> kOnes = {1, 1}, kZeros = {0, 0};
  const int64_t cout, o;
  Buf<float> input, weight, bias;
  const std::array<int64_t, 4> stride_pad;
};

// A constant (read-only) weight split into blocks of output channels is packed into panels in
// the instruction's cache at the first call, read from there by the next, and packed again
// when the instruction set changes (its block width differs): every call equals the same
// convolution packed per call (a context that keeps nothing), bit for bit.
void test_kept_weight_panels_equal_per_call_packing() {
  const check::KeepIsaCap keep;
  struct Shape {
    int64_t cin, cout, hw, k, stride;
  };
  // 1x1 512 -> 400 at 14x14 (a narrower last block), 3x3/2 128 -> 160 at 23x23: over 512 KiB
  // of weights and 16+ pixel tiles at every instruction set. 1x1 64 -> 1024 at 14x14: 256 KiB,
  // but rows 4 KiB apart, which take blocks of 256 channels (or the tile width's multiple below).
  for (const Shape& sh : {Shape{512, 400, 14, 1, 1}, Shape{128, 160, 23, 3, 2}, Shape{64, 1024, 14, 1, 1}}) {
    ConstantWeightConv conv(sh.cin, sh.cout, sh.hw, sh.k, sh.stride, sh.k / 2);
    Buf<float> want = conv.out(), got = conv.out();
    auto run = [&](check::TestContext& ctx, Buf<float>& out) { conv.run(ctx, out); };
    check::kept_equals_per_call(std::to_string(sh.k) + "x" + std::to_string(sh.k), etrt::kernels::sgemm_force_isa,
                                want, got, run);
  }
}

// A constant weight's Winograd transform is computed into the instruction's cache at the first
// call, read from there by the next, and computed again when the instruction set or the slicing
// (the thread count, for weights winograd_slices splits) changes: every call equals the same
// convolution transformed per call (a context that keeps nothing), bit for bit, at one and two
// threads.
void test_kept_winograd_weights_equal_per_call() {
  const check::KeepIsaCap keep;
  struct Shape {
    int64_t cin, cout, hw;
    bool sliced;  // split by output channels at two threads
  };
  // 16 x 13x13 pixels (16 tiles of 4x4): 16 -> 24 (36 KiB transformed: one slice at any thread
  // count, a channel tail), 64 -> 120 (1.05 MiB: slices of 48 and 72 channels at two threads),
  // 32 -> 128 (576 KiB, two slices of 64 channels: sliced) and 64 -> 64 (576 KiB, slices of 32
  // would be narrow: by tiles).
  for (const Shape& sh : {Shape{16, 24, 13, false}, Shape{64, 120, 13, true}, Shape{32, 128, 13, true},
                          Shape{64, 64, 13, false}}) {
    ConstantWeightConv conv(sh.cin, sh.cout, sh.hw, 3, 1, 1);
    Buf<float> want = conv.out(), got = conv.out();
    auto run = [&](check::TestContext& ctx, Buf<float>& out) { conv.run(ctx, out); };
    const etrt::ParallelBackend* one = check::pool<1>();
    const etrt::ParallelBackend* two = check::pool<2>();
    check::CachingContext kept;  // one instruction across every level and thread count
    int levels = 0;
    std::string previous;  // the level and slicing of the last call
    // Every level at one thread, then the highest at two threads and at one again (a smaller
    // test under the sanitizers' build).
    int phase = 0;
    for (const etrt::ParallelBackend* backend : {one, two, one}) {
      etrt::set_parallel_backend(backend);
      const std::string threads = backend == one ? "1" : "2";
      const std::string slicing = sh.sliced && backend == two ? " sliced" : "";
      const bool all_levels = phase++ == 0;
      for (const char* name : {"avx512", "avx2", "sse2", "avx512"}) {
        if (!etrt::kernels::sgemm_force_isa(name)) continue;
        const std::string label = std::to_string(sh.cin) + "->" + std::to_string(sh.cout) + " [" + name + ", " +
                                  threads + " threads]";
        check::TestContext per_call;
        run(per_call, want);
        for (int call = 0; call < 2; ++call) {
          const int reuses = kept.reuses;
          std::fill(got.data.begin(), got.data.end(), 0.0f);
          run(kept, got);
          check::record(got.data == want.data, __FILE__, __LINE__, label + " call " + std::to_string(call));
          // Computed at the first call at a level or slicing (a change of thread count keeps the
          // level: reused where the slicing stays), then reused.
          const bool reused = call == 1 || previous == name + slicing;
          check::record(kept.reuses == reuses + (reused ? 1 : 0), __FILE__, __LINE__,
                        label + " call " + std::to_string(call) + " reuses " + std::to_string(kept.reuses));
        }
        previous = name + slicing;
        ++levels;
        if (!all_levels) break;
      }
    }
    etrt::set_parallel_backend(nullptr);
    CHECK(kept.asked == 2 * levels && levels > 0);
  }
}

// Transposed convolution against the scatter definition: input pixel (iy, ix) adds
// x * w[ci, co, ky, kx] at output (iy * sh - ph + ky * dh, ix * sw - pw + kx * dw). Random
// geometry (output padding below the stride or dilation), groups, bias, channels-last inputs
// (what an NHWC layer before it writes) and 1-D.
void test_transposed_convolution_matches_reference() {
  for (int trial = 0; trial < 60; ++trial) {
    check::TestContext ctx;
    const int64_t groups = rand_int(1, 3), cin_g = rand_int(1, 4), cout_g = rand_int(1, 4), n = rand_int(1, 2);
    const int64_t cin = groups * cin_g, cout = groups * cout_g;
    const bool one_d = trial % 5 == 4, bias_on = trial % 2 == 0;
    const int64_t h = one_d ? 1 : rand_int(1, 6), w = rand_int(1, 7);
    const int64_t kh = one_d ? 1 : rand_int(1, 4), kw = rand_int(1, 4);
    const int64_t sh = one_d ? 1 : rand_int(1, 3), sw = rand_int(1, 3), dh = one_d ? 1 : rand_int(1, 2),
                  dw = rand_int(1, 2);
    const int64_t ph = one_d ? 0 : rand_int(0, (kh - 1) * dh / 2), pw = rand_int(0, (kw - 1) * dw / 2);
    const int64_t oph = one_d ? 0 : rand_int(0, std::max(sh, dh) - 1), opw = rand_int(0, std::max(sw, dw) - 1);
    const int64_t oh = (h - 1) * sh - 2 * ph + dh * (kh - 1) + oph + 1;
    const int64_t ow = (w - 1) * sw - 2 * pw + dw * (kw - 1) + opw + 1;
    Buf<float> input({n, cin, h, w}, trial % 3 == 1 ? channels_last(cin, h, w) : std::vector<int64_t>{});
    Buf<float> weight({cin, cout_g, kh, kw}), bias({cout}), out({n, cout, oh, ow});
    Value in_v = input.v, w_v = weight.v, out_v = out.v;
    std::vector<int64_t> stride = {sh, sw}, padding = {ph, pw}, dilation = {dh, dw}, opad = {oph, opw};
    if (one_d) {
      in_v = Value(without_height(input.t));
      w_v = Value(without_height(weight.t));
      out_v = Value(without_height(out.t));
      stride = {sw}, padding = {pw}, dilation = {dw}, opad = {opw};
    }
    Value none, vt(true), vg(groups);
    Value vs = Value::int_list(stride), vp = Value::int_list(padding), vd = Value::int_list(dilation),
          vo = Value::int_list(opad);
    const std::string label = "transposed trial " + std::to_string(trial);
    if (!check::record(check::call(ctx, "aten::convolution",
                                   {&in_v, &w_v, bias_on ? &bias.v : &none, &vs, &vp, &vd, &vt, &vo, &vg, &out_v})
                           .ok(),
                       __FILE__, __LINE__, label + ": " + ctx.error().message())) {
      continue;
    }
    std::vector<double> want(static_cast<size_t>(n * cout * oh * ow), 0.0);
    for (int64_t b = 0; b < n; ++b)
      for (int64_t ci = 0; ci < cin; ++ci)
        for (int64_t co = 0; co < cout_g; ++co)
          for (int64_t ky = 0; ky < kh; ++ky)
            for (int64_t kx = 0; kx < kw; ++kx)
              for (int64_t iy = 0; iy < h; ++iy)
                for (int64_t ix = 0; ix < w; ++ix) {
                  const int64_t oy = iy * sh - ph + ky * dh, ox = ix * sw - pw + kx * dw;
                  if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
                  const int64_t o = ci / cin_g * cout_g + co;
                  want[static_cast<size_t>(((b * cout + o) * oh + oy) * ow + ox)] +=
                      static_cast<double>(input.at({b, ci, iy, ix})) * weight.at({ci, co, ky, kx});
                }
    double worst = 0.0;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t o = 0; o < cout; ++o)
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t x = 0; x < ow; ++x) {
            const double e = want[static_cast<size_t>(((b * cout + o) * oh + y) * ow + x)] + (bias_on ? bias.at({o}) : 0.0);
            worst = std::fmax(worst, std::fabs(e - out.at({b, o, y, x})));
          }
    check::record(worst <= 1e-5, __FILE__, __LINE__, label + " err " + std::to_string(worst));
  }
}

// 3-D convolution against its definition: random geometry, groups, bias, strided inputs.
void test_conv3d_matches_reference() {
  for (int trial = 0; trial < 36; ++trial) {
    check::TestContext ctx;
    // Then video layers: 3x3x3 over 16 channels a group at 17x17 frames and more (Winograd's
    // tiles for each frame tap), a depthwise one, a strided one.
    const bool big = trial >= 30;
    const int64_t groups = big ? (trial == 33 ? 16 : rand_int(1, 2)) : rand_int(1, 3);
    const int64_t cin = groups * (big ? (trial == 33 ? 1 : 16) : rand_int(1, 3));
    const int64_t cout = groups * (big ? (trial == 33 ? 1 : 16) : rand_int(1, 3));
    const int64_t cin_g = cin / groups, cout_g = cout / groups, n = rand_int(1, 2);
    int64_t k[3], st[3], pd[3], dl[3], in[3], o[3];
    for (int d = 0; d < 3; ++d) {
      k[d] = big ? 3 : rand_int(1, 3), st[d] = big ? (trial == 34 ? 2 : 1) : rand_int(1, 2);
      dl[d] = big ? 1 : rand_int(1, 2), pd[d] = big ? 1 : rand_int(0, k[d] / 2);
      in[d] = (k[d] - 1) * dl[d] + (big ? (d == 0 ? 3 : 15) + rand_int(0, 3) : rand_int(1, 5));
      o[d] = (in[d] + 2 * pd[d] - dl[d] * (k[d] - 1) - 1) / st[d] + 1;
    }
    const bool bias_on = trial % 2 == 0;
    std::vector<int64_t> in_strides;
    if (trial % 3 == 1) {  // channels innermost
      in_strides = {in[0] * in[1] * in[2] * cin, 1, in[1] * in[2] * cin, in[2] * cin, cin};
    }
    Buf<float> input({n, cin, in[0], in[1], in[2]}, in_strides);
    Buf<float> weight({cout, cin_g, k[0], k[1], k[2]}), bias({cout}), out({n, cout, o[0], o[1], o[2]});
    std::vector<int64_t> vs_ = {st[0], st[1], st[2]}, vp_ = {pd[0], pd[1], pd[2]}, vd_ = {dl[0], dl[1], dl[2]},
                         vo_ = {0, 0, 0};
    Value none, vt(false), vg(groups);
    Value vs = Value::int_list(vs_), vp = Value::int_list(vp_), vd = Value::int_list(vd_), vo = Value::int_list(vo_);
    const std::string label = "conv3d trial " + std::to_string(trial);
    if (!check::record(check::call(ctx, "aten::convolution",
                                   {&input.v, &weight.v, bias_on ? &bias.v : &none, &vs, &vp, &vd, &vt, &vo, &vg, &out.v})
                           .ok(),
                       __FILE__, __LINE__, label + ": " + ctx.error().message())) {
      continue;
    }
    double worst = 0.0, scale = 1.0;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t co = 0; co < cout; ++co)
        for (int64_t z = 0; z < o[0]; ++z)
          for (int64_t y = 0; y < o[1]; ++y)
            for (int64_t x = 0; x < o[2]; ++x) {
              double acc = bias_on ? bias.at({co}) : 0.0;
              const int64_t g = co / cout_g;
              for (int64_t ci = 0; ci < cin_g; ++ci)
                for (int64_t a = 0; a < k[0]; ++a)
                  for (int64_t bb = 0; bb < k[1]; ++bb)
                    for (int64_t c = 0; c < k[2]; ++c) {
                      const int64_t iz = z * st[0] - pd[0] + a * dl[0], iy = y * st[1] - pd[1] + bb * dl[1],
                                    ix = x * st[2] - pd[2] + c * dl[2];
                      if (iz < 0 || iz >= in[0] || iy < 0 || iy >= in[1] || ix < 0 || ix >= in[2]) continue;
                      acc += static_cast<double>(input.at({b, g * cin_g + ci, iz, iy, ix})) * weight.at({co, ci, a, bb, c});
                    }
              worst = std::fmax(worst, std::fabs(acc - out.at({b, co, z, y, x})));
              scale = std::fmax(scale, std::fabs(acc));
            }
    // Relative to the largest output (at least 1): Winograd's transforms round a little more.
    check::record(worst <= 1e-5 * scale, __FILE__, __LINE__,
                  label + " err " + std::to_string(worst) + " of " + std::to_string(scale));
  }
  // Transposed 3-D is refused by name.
  check::TestContext ctx;
  Buf<float> input({1, 2, 3, 3, 3}), weight({2, 2, 2, 2, 2}), out({1, 2, 4, 4, 4});
  std::vector<int64_t> ones = {1, 1, 1}, zeros = {0, 0, 0};
  Value none, vt(true), vf(false), vg(int64_t{1});
  Value vs = Value::int_list(ones), vp = Value::int_list(zeros), vd = Value::int_list(ones), vo = Value::int_list(zeros);
  CHECK_FAILS(check::call(ctx, "aten::convolution", {&input.v, &weight.v, &none, &vs, &vp, &vd, &vt, &vo, &vg, &out.v}),
              etrt::ErrorCode::InvalidArgument);
  CHECK(ctx.error().message().find("3-D transposed") != std::string::npos);
  // No input channels: the output is the bias (an empty product, no column scratch).
  Buf<float> empty_in({1, 0, 3, 3, 3}), empty_w({2, 0, 1, 1, 1}), bias({2}), full({1, 2, 3, 3, 3});
  CHECK_OK(check::call(ctx, "aten::convolution", {&empty_in.v, &empty_w.v, &bias.v, &vs, &vp, &vd, &vf, &vo, &vg, &full.v}));
  CHECK(full.at({0, 1, 2, 2, 2}) == bias.at({1}) && full.at({0, 0, 0, 0, 0}) == bias.at({0}));
}

void test_convolution_rejects_bad_arguments() {
  check::TestContext ctx;
  Buf<float> input({1, 2, 5, 5}), weight({3, 2, 3, 3}), out({1, 3, 3, 3}), bad_out({1, 3, 4, 4});
  Value none, vg(int64_t{1}), vf(false), vtrue(true);
  std::vector<int64_t> ones = {1, 1}, zeros = {0, 0};
  Value vs = Value::int_list(ones), vp = Value::int_list(zeros), vd = Value::int_list(ones),
        vo = Value::int_list(zeros);
  CHECK_OK(check::call(ctx, "aten::convolution", {&input.v, &weight.v, &none, &vs, &vp, &vd, &vf, &vo, &vg, &out.v}));
  // Transposed: the weight is [Cin, Cout/groups, kh, kw], so this one ([3, 2, ...]) does not
  // fit 2 input channels; output padding must stay below the stride or dilation; the output
  // must have the size the geometry gives.
  CHECK_FAILS(check::call(ctx, "aten::convolution",
                          {&input.v, &weight.v, &none, &vs, &vp, &vd, &vtrue, &vo, &vg, &out.v}),
              etrt::ErrorCode::InvalidArgument);
  CHECK(ctx.error().message().find("transposed") != std::string::npos);
  Buf<float> tweight({2, 3, 3, 3}), tout({1, 3, 7, 7});
  CHECK_OK(check::call(ctx, "aten::convolution", {&input.v, &tweight.v, &none, &vs, &vp, &vd, &vtrue, &vo, &vg, &tout.v}));
  std::vector<int64_t> one_pad = {1, 1}, huge = {int64_t{1} << 62, 1};
  Value vo1 = Value::int_list(one_pad), vhuge = Value::int_list(huge);
  CHECK_FAILS(check::call(ctx, "aten::convolution",
                          {&input.v, &tweight.v, &none, &vs, &vp, &vd, &vtrue, &vo1, &vg, &tout.v}),
              etrt::ErrorCode::InvalidArgument);
  CHECK(ctx.error().message().find("output_padding") != std::string::npos);
  CHECK_FAILS(check::call(ctx, "aten::convolution",
                          {&input.v, &tweight.v, &none, &vhuge, &vp, &vd, &vtrue, &vo, &vg, &tout.v}),
              etrt::ErrorCode::InvalidArgument);
  CHECK_FAILS(check::call(ctx, "aten::convolution",
                          {&input.v, &tweight.v, &none, &vs, &vp, &vd, &vtrue, &vo, &vg, &out.v}),
              etrt::ErrorCode::InvalidArgument);
  CHECK_FAILS(check::call(ctx, "aten::convolution",
                          {&input.v, &weight.v, &none, &vs, &vp, &vd, &vf, &vo, &vg, &bad_out.v}),
              etrt::ErrorCode::InvalidArgument);
  Value vg2(int64_t{2});
  CHECK_FAILS(check::call(ctx, "aten::convolution",
                          {&input.v, &weight.v, &none, &vs, &vp, &vd, &vf, &vo, &vg2, &out.v}),
              etrt::ErrorCode::InvalidArgument);
  CHECK_FAILS(check::call(ctx, "aten::convolution", {&input.v, &weight.v, &none, &vs, &vp, &vd, &vf, &vo, &vg}),
              etrt::ErrorCode::InvalidArgument);
  // etrt_fused::conv2d's activation: None, "hardswish", "silu", "sigmoid" or a leaky ReLU's slope,
  // nothing else.
  Value gelu = Value::string("gelu"), hswish = Value::string("hardswish"), slope(0.1);
  CHECK_OK(check::call(ctx, "etrt_fused::conv2d",
                       {&input.v, &weight.v, &none, &vs, &vp, &vd, &vf, &vo, &vg, &none, &none, &none, &hswish, &out.v}));
  CHECK_OK(check::call(ctx, "etrt_fused::conv2d",
                       {&input.v, &weight.v, &none, &vs, &vp, &vd, &vf, &vo, &vg, &none, &none, &none, &slope, &out.v}));
  CHECK_OK(check::call(ctx, "etrt_fused::conv2d",
                       {&input.v, &weight.v, &none, &vs, &vp, &vd, &vf, &vo, &vg, &none, &none, &none, &none, &out.v}));
  CHECK_FAILS(check::call(ctx, "etrt_fused::conv2d",
                          {&input.v, &weight.v, &none, &vs, &vp, &vd, &vf, &vo, &vg, &none, &none, &none, &gelu, &out.v}),
              etrt::ErrorCode::InvalidArgument);
  CHECK(ctx.error().message().find(
            "'activation' must be None, \"hardswish\", \"silu\", \"sigmoid\" or a leaky ReLU's slope") !=
        std::string::npos);
  // residual_last (16 arguments): a bool, true only with a residual.
  Value yes(true), one(1);
  CHECK_FAILS(check::call(ctx, "etrt_fused::conv2d", {&input.v, &weight.v, &none, &vs, &vp, &vd, &vf, &vo, &vg, &none,
                                                      &none, &none, &slope, &none, &yes, &out.v}),
              etrt::ErrorCode::InvalidArgument);
  CHECK(ctx.error().message().find("'residual_last' is true without a residual") != std::string::npos);
  CHECK_FAILS(check::call(ctx, "etrt_fused::conv2d", {&input.v, &weight.v, &none, &vs, &vp, &vd, &vf, &vo, &vg, &none,
                                                      &none, &none, &slope, &none, &one, &out.v}),
              etrt::ErrorCode::InvalidArgument);
  CHECK(ctx.error().message().find("'residual_last' must be a bool") != std::string::npos);
}

struct PoolCase {
  int64_t n, c, h, w, kh, kw, sh, sw, ph, pw, dh, dw;
  bool ceil, batched, strided, nans, empty_stride;
  bool relu = false;         // negatives set to 0: many ties, as after a ReLU
  bool nhwc_out = false;     // values (and indices) channels-last
  bool values_only = false;  // aten::max_pool2d: no indices
};

int64_t pooled(int64_t in, int64_t k, int64_t p, int64_t s, int64_t d, bool ceil) {
  const int64_t num = in + 2 * p - d * (k - 1) - 1 + (ceil ? s - 1 : 0);
  int64_t out = static_cast<int64_t>(std::floor(static_cast<double>(num) / static_cast<double>(s))) + 1;
  if (ceil && (out - 1) * s >= in + p) --out;
  return out;
}

void run_pool_case(const PoolCase& c, const std::string& label) {
  check::TestContext ctx;
  const int64_t oh = pooled(c.h, c.kh, c.ph, c.sh, c.dh, c.ceil);
  const int64_t ow = pooled(c.w, c.kw, c.pw, c.sw, c.dw, c.ceil);
  Buf<float> input({c.n, c.c, c.h, c.w}, c.strided ? channels_last(c.c, c.h, c.w) : std::vector<int64_t>{});
  if (c.relu) {
    for (auto& v : input.data) v = v < 0.0f ? 0.0f : v;
  }
  if (c.nans) {
    for (size_t i = 0; i < input.data.size(); i += 7) input.data[i] = std::nanf("");
    for (size_t i = 3; i < input.data.size(); i += 11) input.data[i] = -std::numeric_limits<float>::infinity();
  }
  const std::vector<int64_t> out_strides = c.nhwc_out ? channels_last(c.c, oh, ow) : std::vector<int64_t>{};
  Buf<float> out({c.n, c.c, oh, ow}, out_strides);
  Buf<int64_t> idx({c.n, c.c, oh, ow}, out_strides);
  Value in_v = input.v, out_v = out.v, idx_v = idx.v;
  if (!c.batched) {  // [C, H, W]: drop the batch dimension (n == 1)
    auto drop_n = [](const Tensor& t) {
      const int64_t sizes[3] = {t.size(1), t.size(2), t.size(3)};
      const int64_t strides[3] = {t.stride(1), t.stride(2), t.stride(3)};
      return Tensor::make(t.data(), t.dtype(), sizes, strides).get();
    };
    in_v = Value(drop_n(input.t));
    out_v = Value(drop_n(out.t));
    idx_v = Value(drop_n(idx.t));
  }
  std::vector<int64_t> k = {c.kh, c.kw}, s = {c.sh, c.sw}, p = {c.ph, c.pw}, d = {c.dh, c.dw};
  if (c.empty_stride) s.clear();
  Value vk = Value::int_list(k), vs = Value::int_list(s), vp = Value::int_list(p), vd = Value::int_list(d);
  Value vc(c.ceil);
  if (c.values_only) {
    CHECK_OK(check::call(ctx, "aten::max_pool2d", {&in_v, &vk, &vs, &vp, &vd, &vc, &out_v}));
  } else {
    CHECK_OK(check::call(ctx, "aten::max_pool2d_with_indices", {&in_v, &vk, &vs, &vp, &vd, &vc, &out_v, &idx_v}));
  }
  int bad = 0;
  for (int64_t n = 0; n < c.n; ++n)
    for (int64_t ch = 0; ch < c.c; ++ch)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          float m = -std::numeric_limits<float>::infinity();
          int64_t mi = -1;
          for (int64_t i = 0; i < c.kh; ++i)
            for (int64_t j = 0; j < c.kw; ++j) {
              const int64_t iy = y * c.sh - c.ph + i * c.dh, ix = x * c.sw - c.pw + j * c.dw;
              if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w) continue;
              const float v = input.at({n, ch, iy, ix});
              // ATen: the first window element starts the scan; NaN or a greater value wins.
              if (mi < 0 || v > m || std::isnan(v)) {
                m = v;
                mi = iy * c.w + ix;
              }
            }
          const float got = out.at({n, ch, y, x});
          const bool same = (std::isnan(m) && std::isnan(got)) || got == m;
          if (!same || (!c.values_only && idx.at({n, ch, y, x}) != mi)) ++bad;
        }
  check::record(bad == 0, __FILE__, __LINE__, label + ": " + std::to_string(bad) + " wrong outputs");
}

void test_max_pool_matches_reference() {
  // The test CNN's pool: 2x2, stride 2 (given as the empty list, as torch.export writes it).
  run_pool_case({2, 16, 28, 28, 2, 2, 2, 2, 0, 0, 1, 1, false, true, false, false, true}, "cnn pool");
  run_pool_case({1, 3, 9, 9, 2, 2, 2, 2, 0, 0, 1, 1, true, true, false, true, false}, "2x2 ceil odd nan");
  run_pool_case({1, 3, 8, 6, 2, 2, 2, 2, 0, 0, 1, 1, false, false, true, false, false}, "2x2 unbatched strided");
  // The vectorised 2x2 rows: ties (ATen keeps the first), NaNs (the last NaN wins), odd widths.
  run_pool_case({2, 4, 12, 22, 2, 2, 2, 2, 0, 0, 1, 1, false, true, false, false, false, true}, "2x2 ties");
  run_pool_case({2, 4, 12, 22, 2, 2, 2, 2, 0, 0, 1, 1, false, true, false, true, false, true}, "2x2 ties nan");
  run_pool_case({1, 2, 10, 19, 2, 2, 2, 2, 0, 0, 1, 1, false, true, false, true, false, false}, "2x2 odd width nan");
  for (int trial = 0; trial < 60; ++trial) {
    PoolCase c{};
    c.n = rand_int(1, 2);
    c.c = rand_int(1, 3);
    set_window(&c, random_window(4));
    c.ceil = trial % 2 == 1;
    c.batched = trial % 5 != 0;
    if (!c.batched) c.n = 1;
    c.strided = trial % 3 == 2;
    c.nans = trial % 4 == 3;
    c.empty_stride = false;
    run_pool_case(c, "pool trial " + std::to_string(trial));
  }
}

// Channels-last outputs (vectorised along the channels) and the values-only overload, over
// channels-last and NCHW inputs: ResNet's 3x3/2 padded, SqueezeNet's ceil-mode 3x3/2, NaNs, ties.
void test_channels_last_max_pool_matches_reference() {
  auto nhwc = [](PoolCase c, bool values_only) {
    c.nhwc_out = true;
    c.values_only = values_only;
    return c;
  };
  for (bool values_only : {false, true}) {
    const std::string tag = values_only ? " values" : " indices";
    run_pool_case(nhwc({2, 40, 13, 11, 3, 3, 2, 2, 1, 1, 1, 1, false, true, true, false, false}, values_only),
                  "3x3/2 padded" + tag);
    run_pool_case(nhwc({1, 24, 13, 13, 3, 3, 2, 2, 0, 0, 1, 1, true, true, true, true, false}, values_only),
                  "3x3/2 ceil nan" + tag);
    run_pool_case(nhwc({1, 17, 9, 8, 2, 2, 2, 2, 0, 0, 1, 1, false, true, true, false, false, true}, values_only),
                  "2x2 ties" + tag);
    run_pool_case(nhwc({2, 5, 9, 7, 3, 2, 1, 2, 1, 1, 2, 1, true, true, false, true, false}, values_only),
                  "nchw input dilated" + tag);
  }
  // NCHW outputs without indices.
  run_pool_case({1, 6, 12, 10, 3, 3, 2, 2, 1, 1, 1, 1, false, true, false, true, false, false, false, true},
                "values only nchw");
}

void test_max_pool_rejects_bad_arguments() {
  check::TestContext ctx;
  Buf<float> input({1, 1, 6, 6}), out({1, 1, 3, 3}), bad_out({1, 1, 2, 2});
  Buf<int64_t> idx({1, 1, 3, 3});
  Buf<float> idx_float({1, 1, 3, 3});
  std::vector<int64_t> k2 = {2, 2}, zero = {0, 0}, one = {1, 1}, pad2 = {2, 2}, empty;
  Value vk = Value::int_list(k2), vs = Value::int_list(empty), vp = Value::int_list(zero),
        vd = Value::int_list(one), vbig = Value::int_list(pad2), vc(false);
  CHECK_OK(check::call(ctx, "aten::max_pool2d_with_indices", {&input.v, &vk, &vs, &vp, &vd, &vc, &out.v, &idx.v}));
  CHECK_FAILS(check::call(ctx, "aten::max_pool2d_with_indices",
                          {&input.v, &vk, &vs, &vbig, &vd, &vc, &out.v, &idx.v}),
              etrt::ErrorCode::InvalidArgument);
  CHECK_FAILS(check::call(ctx, "aten::max_pool2d_with_indices",
                          {&input.v, &vk, &vs, &vp, &vd, &vc, &bad_out.v, &idx.v}),
              etrt::ErrorCode::InvalidArgument);
  CHECK_FAILS(check::call(ctx, "aten::max_pool2d_with_indices",
                          {&input.v, &vk, &vs, &vp, &vd, &vc, &out.v, &idx_float.v}),
              etrt::ErrorCode::InvalidArgument);
  CHECK_FAILS(check::call(ctx, "aten::max_pool2d_with_indices", {&input.v, &vk, &vs, &vp, &vd, &vc, &out.v}),
              etrt::ErrorCode::InvalidArgument);
}

// A layer over few pixel tiles splits its output channels by the thread count, so its kept
// panels' block width changes with it: 96 -> 200 at 11x11 (16-31 tiles) at 16, 8 and 16 threads
// again, then one, through one instruction's cache; every call equals the one-thread result
// computed per call, bit for bit, at every cap (a stale layout from another split would not).
void test_kept_panels_follow_the_split() {
  const check::KeepIsaCap keep;
  ConstantWeightConv conv(96, 200, 11, 1, 1, 0);
  Buf<float> one = conv.out(), got = conv.out();
  auto run = [&](check::TestContext& ctx, Buf<float>& out) { conv.run(ctx, out); };
  const etrt::ParallelBackend* sixteen = check::pool<16>();
  const etrt::ParallelBackend* eight = check::pool<8>();
  for (const char* name : {"avx512", "avx2", "sse2"}) {
    if (!etrt::kernels::sgemm_force_isa(name)) continue;
    check::TestContext serial;
    run(serial, one);
    check::CachingContext kept;
    int step = 0;
    const etrt::ParallelBackend* none = nullptr;
    for (const etrt::ParallelBackend* backend : {sixteen, eight, sixteen, none}) {
      etrt::set_parallel_backend(backend);
      std::fill(got.data.begin(), got.data.end(), 0.0f);
      run(kept, got);
      check::record(got.data == one.data, __FILE__, __LINE__,
                    std::string("kept panels, ") + name + " step " + std::to_string(step++));
    }
    etrt::set_parallel_backend(nullptr);
    CHECK_EQ(kept.asked, 3);  // the split runs kept their panels (one thread has one block)
  }
}

// A big weight over few tiles at two threads (MobileNetV3-small's 576 -> 96 projection at 7x7:
// 9 tiles, 221 KiB) is split into one block of output channels a thread, each reading half the
// weight for every tile, where four threads split it as above with a wider block; 40 channels
// (160 KiB), which whole tile widths cannot share out evenly, stay split by tiles (8 parts). A
// blocked weight (128 -> 1152: 576 KiB, three blocks of its own) takes four even blocks, one
// whole block a part. A squeeze-and-excitation product at one pixel (576 -> 144: 83 K
// multiply-adds, below the multiply-add bound, but 324 KiB of weight to read) is split into
// three blocks of channels, where it ran on one thread. Through one instruction's cache at 2, 4,
// 2 threads and one, every call equals one thread's result computed per call, bit for bit, at
// every cap (the layouts' panels do not share a key).
void test_few_tiles_over_a_big_weight_split_by_channels_at_two_threads() {
  const check::KeepIsaCap keep;
  struct Layer {
    int64_t cin, cout, hw, parts_at_two, parts_at_two_avx512;
  };
  // Split by tiles, the parts are the tiles up to 8: AVX-512's tiles of 8 pixels make 7 of 49.
  for (const Layer& layer : {Layer{576, 96, 7, 2, 2}, Layer{1024, 40, 7, 8, 7}, Layer{128, 1152, 7, 4, 4},
                             Layer{576, 144, 1, 3, 3}}) {
    ConstantWeightConv conv(layer.cin, layer.cout, layer.hw, 1, 1, 0);
    Buf<float> one = conv.out(), got = conv.out();
    const etrt::ParallelBackend* two = check::pool<2>();
    const etrt::ParallelBackend* four = check::pool<4>();
    for (const char* name : {"avx512", "avx2", "sse2"}) {
      if (!etrt::kernels::sgemm_force_isa(name)) continue;
      const std::string label = std::to_string(layer.cin) + " -> " + std::to_string(layer.cout) + ", " + name;
      check::TestContext serial;
      conv.run(serial, one);
      check::CachingContext kept;
      int step = 0;
      const etrt::ParallelBackend* none = nullptr;
      for (const etrt::ParallelBackend* backend : {two, four, two, none}) {
        etrt::set_parallel_backend(backend);
        const int64_t before = check::chunks_run();
        std::fill(got.data.begin(), got.data.end(), 0.0f);
        conv.run(kept, got);
        const int64_t chunks = check::chunks_run() - before;
        check::record(got.data == one.data, __FILE__, __LINE__, label + " step " + std::to_string(step));
        if (backend == two) {
          const int64_t parts = std::string(name) == "avx512" ? layer.parts_at_two_avx512 : layer.parts_at_two;
          check::record(chunks == parts, __FILE__, __LINE__,
                        label + ": " + std::to_string(chunks) + " parts at two threads");
        }
        ++step;
      }
      etrt::set_parallel_backend(nullptr);
    }
  }
}

// Winograd over more threads than 16-channel slices of the output (64 channels: 4 slices) and
// too few blocks of tiles to go round (16 tiles): slices times runs of tiles, at 16 threads,
// for weights that are sliced at two threads too (128 -> 64: 1.2 MiB transformed) and for
// smaller ones (32 -> 64: 288 KiB). Kept and per call, each equal to one thread's result bit
// for bit (a channel's and a tile's sums do not depend on the split), at every cap.
void test_winograd_slices_times_tile_runs() {
  const check::KeepIsaCap keep;
  for (const int64_t cin : {int64_t{128}, int64_t{32}}) {
    ConstantWeightConv conv(cin, 64, 13, 3, 1, 1);
    Buf<float> one = conv.out(), got = conv.out();
    auto run = [&](check::TestContext& ctx, Buf<float>& out) { conv.run(ctx, out); };
    const etrt::ParallelBackend* sixteen = check::pool<16>();
    for (const char* name : {"avx512", "avx2", "sse2"}) {
      if (!etrt::kernels::sgemm_force_isa(name)) continue;
      check::TestContext serial;
      run(serial, one);
      etrt::set_parallel_backend(sixteen);
      check::TestContext per_call;
      check::CachingContext kept;
      std::fill(got.data.begin(), got.data.end(), 0.0f);
      run(per_call, got);
      check::record(got.data == one.data, __FILE__, __LINE__,
                    std::to_string(cin) + " -> 64 per call, 16 threads, " + name);
      for (int call = 0; call < 2; ++call) {
        const int64_t before = check::chunks_run();
        std::fill(got.data.begin(), got.data.end(), 0.0f);
        run(kept, got);
        check::record(got.data == one.data, __FILE__, __LINE__,
                      std::to_string(cin) + " -> 64 kept, 16 threads, " + name + " call " + std::to_string(call));
        // The products alone (the weights kept): 4 slices x 2 or more runs of tiles, not 2 blocks.
        if (call == 1) CHECK(check::chunks_run() - before >= 8);
      }
      CHECK_EQ(kept.reuses, 1);
      etrt::set_parallel_backend(nullptr);
    }
  }
}


void test_split_work_matches_reference() {
  const etrt::ParallelBackend* backend = check::pool<3>();
  etrt::set_parallel_backend(backend);
  // Images split across parts, and a single image whose GEMM splits inside.
  run_conv_case({5, 4, 8, 1, 12, 12, 3, 3, 1, 1, 1, 1, 1, 1, true, false, false, false}, "split images");
  run_conv_case({1, 16, 64, 1, 20, 20, 3, 3, 1, 1, 1, 1, 1, 1, true, false, false, false}, "split gemm");
  run_pool_case({3, 16, 28, 28, 2, 2, 2, 2, 0, 0, 1, 1, false, true, false, false, true}, "split pool");
  // Channels-last: Winograd over 16 tiles in blocks of one micro-tile of rows, and blocked weights
  // (1.3 MiB, 6 or 9 blocks) split into parts of whole blocks.
  auto nhwc = [](ConvCase c) {
    c.nhwc_out = true;
    c.local = true;
    return c;
  };
  run_conv_case(nhwc({1, 32, 32, 1, 14, 14, 3, 3, 1, 1, 1, 1, 1, 1, true, false, true, false, true, true}),
                "split winograd 16 tiles");
  run_conv_case(nhwc({1, 128, 288, 1, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, true, false, true, false, true, true}),
                "split whole weight blocks");
  // Winograd by slices of output channels (16, 16 and 24 of 56), with bias, residual and clamp.
  ConvCase sliced{2, 24, 56, 1, 13, 15, 3, 3, 1, 1, 1, 1, 1, 1, true, false, true, false, true, true};
  sliced = nhwc(sliced);
  sliced.fused = true;
  run_conv_case(sliced, "split winograd output-channel slices");
  sliced.leaky = sliced.residual_last = true;  // each slice adds its own channels of the residual
  run_conv_case(sliced, "split winograd output-channel slices, leaky ReLU then residual");
  run_conv_case(nhwc({1, 48, 64, 1, 28, 28, 3, 3, 1, 1, 1, 1, 1, 1, false, false, true, false, true, true}),
                "split winograd slices, no bias");
  // Depthwise over fewer output rows than parts: rows times slices of channels (200 = 128 + 72,
  // a tail in the last slice), with the epilogue (residual, clamp) and with SiLU, 5x5 and 5x5/2.
  ConvCase dw_slices{1, 200, 200, 200, 7, 7, 5, 5, 1, 1, 2, 2, 1, 1, true, false, true, false, true, true};
  dw_slices = nhwc(dw_slices);
  dw_slices.fused = true;
  const int64_t before = check::chunks_run();
  run_conv_case(dw_slices, "split depthwise channel slices");
  CHECK(check::chunks_run() - before >= 14);  // 7 rows x 2 slices, not 7 rows
  dw_slices.leaky = dw_slices.residual_last = true;
  run_conv_case(dw_slices, "split depthwise channel slices, leaky ReLU then residual");
  ConvCase dw_silu{2, 200, 200, 200, 9, 9, 5, 5, 2, 2, 2, 2, 1, 1, true, false, true, false, true, true};
  dw_silu = nhwc(dw_silu);
  dw_silu.fused = true;
  dw_silu.silu = true;
  run_conv_case(dw_silu, "split depthwise channel slices, silu");
  // A 1x1 layer over few pixel tiles (7x7: 7 tiles of 8 at AVX-512, fewer than 12 parts):
  // output channels split too (200 = 4 blocks of 64 and a tail, in blocks the tiles read in place).
  ConvCase few_tiles{1, 96, 200, 1, 7, 7, 1, 1, 1, 1, 0, 0, 1, 1, true, false, true, false, true, true};
  few_tiles = nhwc(few_tiles);
  few_tiles.fused = true;
  const int64_t before_tiles = check::chunks_run();
  run_conv_case(few_tiles, "split pointwise 7x7 by output channels");
  if (etrt::kernels::sgemm_isa() == std::string("avx512")) CHECK(check::chunks_run() - before_tiles >= 12);
  CHECK(check::chunks_run() >= 6);  // the work really was split
  etrt::set_parallel_backend(nullptr);
}

}  // namespace

// SiLU and sigmoid in place, as the convolution's epilogue applies them to its own output: the
// same bits as into another array, at every cap, whole and with ragged ends. Lanes with
// |x| > 86 are computed again from the input, which the vector store has just overwritten in
// place (EfficientNetV2's pre-activations of -100 and 88 came out NaN).
void test_logistic_in_place_equals_out_of_place() {
  const check::KeepIsaCap keep;
  std::vector<float> xs = {0.0f, -0.0f, 1e-40f, -1e-38f, 86.0f, -86.0f, 86.5f, -86.5f, 88.54f, -89.3f,
                           -101.9f, 150.0f, -150.0f, 1e30f, -1e30f, -3e38f};
  for (float v = -120.0f; v <= 120.0f; v += 0.37f) xs.push_back(v);
  const int64_t n = static_cast<int64_t>(xs.size());
  for (const char* name : {"avx512", "avx2", "sse2"}) {
    if (!etrt::kernels::sgemm_force_isa(name)) continue;
    for (const bool silu : {false, true}) {
      const auto fn = silu ? etrt::kernels::silu_contiguous : etrt::kernels::sigmoid_contiguous;
      std::vector<float> want(xs.size());
      fn(want.data(), xs.data(), n);
      for (const int64_t len : {n, int64_t{37}, int64_t{29}, int64_t{13}, int64_t{3}}) {
        std::vector<float> v(xs.begin(), xs.begin() + len);
        fn(v.data(), v.data(), len);
        int64_t differ = 0;
        for (int64_t i = 0; i < len; ++i) {
          const size_t k = static_cast<size_t>(i);
          differ += std::isnan(want[k]) ? !std::isnan(v[k]) : std::memcmp(&v[k], &want[k], sizeof(float)) != 0;
        }
        check::record(differ == 0, __FILE__, __LINE__,
                      std::string(silu ? "silu" : "sigmoid") + " in place, " + std::to_string(len) + " values [" +
                          name + "]");
      }
    }
  }
}

// etrt_fused::conv2d with out_channel writes channels [first, first + Cout) of a wider
// channels-last tensor (a concatenation written in place) and nothing else: the same bits as
// the call into a tensor of its own, the other channels untouched, for each kind of NHWC kernel
// (a first layer over NCHW, pointwise, Winograd, depthwise, a strided 5x5 over a strided
// input, grouped: groups of a vector or more and groups joined), with a clamp or hardswish, at
// every cap, at one thread and at two. Slices it cannot write are refused by name.
void test_convolution_into_a_channel_slice() {
  const check::KeepIsaCap keep;
  struct Layer {
    int64_t n, cin, cout, groups, hw, k, stride, pad;
    bool nchw_input, hardswish;
    const char* name;
  };
  const Layer layers[] = {
      {1, 3, 16, 1, 19, 3, 2, 1, true, true, "first layer"},
      {2, 24, 40, 1, 9, 1, 1, 0, false, false, "pointwise"},
      {1, 32, 48, 1, 16, 3, 1, 1, false, false, "winograd"},
      {1, 24, 24, 24, 11, 3, 1, 1, false, true, "depthwise"},
      {2, 20, 12, 1, 13, 5, 2, 2, false, false, "5x5 stride 2"},
      {1, 32, 32, 8, 10, 3, 1, 1, false, false, "grouped"},
      {1, 24, 36, 6, 9, 3, 2, 1, false, true, "grouped, joined"},
  };
  const int64_t pre = 5, post = 3;
  const float sentinel = 1234.5f;
  for (const Layer& l : layers) {
    const int64_t o = (l.hw + 2 * l.pad - l.k) / l.stride + 1, total = pre + l.cout + post;
    Buf<float> input({l.n, l.cin, l.hw, l.hw}, l.nchw_input ? std::vector<int64_t>{} : channels_last(l.cin, l.hw, l.hw));
    Buf<float> weight({l.cout, l.cin / l.groups, l.k, l.k}, hwio(l.cout, l.cin / l.groups, l.k)), bias({l.cout});
    Buf<float> plain({l.n, l.cout, o, o}, channels_last(l.cout, o, o));
    Buf<float> whole({l.n, total, o, o}, channels_last(total, o, o));
    std::vector<int64_t> st = {l.stride, l.stride}, pd = {l.pad, l.pad}, ones = {1, 1}, zeros = {0, 0};
    Value vs = Value::int_list(st), vp = Value::int_list(pd), vd = Value::int_list(ones), vo = Value::int_list(zeros);
    Value vt(false), vg(l.groups), none, first(pre);
    Value lo = l.hardswish ? Value() : Value(-0.25), hi = l.hardswish ? Value() : Value(0.5);
    Value act = l.hardswish ? Value::string("hardswish") : Value();
    std::vector<Value*> args = {&input.v, &weight.v, &bias.v, &vs, &vp, &vd, &vt, &vo, &vg, &none, &lo, &hi, &act};
    std::vector<Value*> own = args, sliced = args;
    own.push_back(&plain.v);
    sliced.push_back(&first);
    sliced.push_back(&whole.v);
    const etrt::ParallelBackend* two = check::pool<2>();
    for (const char* isa : {"avx512", "avx2", "sse2"}) {
      if (!etrt::kernels::sgemm_force_isa(isa)) continue;
      for (const etrt::ParallelBackend* backend : {static_cast<const etrt::ParallelBackend*>(nullptr), two}) {
        const std::string label = std::string(l.name) + " [" + isa + (backend ? ", 2 threads]" : "]");
        etrt::set_parallel_backend(backend);
        check::TestContext ctx;
        std::fill(whole.data.begin(), whole.data.end(), sentinel);
        ctx.reset();
        etrt::kernels::op_fused_conv2d(ctx, etrt::Span<Value*>(own.data(), own.size()));
        CHECK_OK(ctx.error());
        ctx.reset();
        etrt::kernels::op_fused_conv2d(ctx, etrt::Span<Value*>(sliced.data(), sliced.size()));
        CHECK_OK(ctx.error());
        int64_t wrong = 0, touched = 0;
        for (int64_t n = 0; n < l.n; ++n)
          for (int64_t c = 0; c < total; ++c)
            for (int64_t y = 0; y < o; ++y)
              for (int64_t x = 0; x < o; ++x) {
                const float got = whole.at({n, c, y, x});
                if (c < pre || c >= pre + l.cout) {
                  touched += std::memcmp(&got, &sentinel, sizeof got) != 0;
                } else {
                  const float want = plain.at({n, c - pre, y, x});
                  wrong += std::memcmp(&got, &want, sizeof got) != 0;
                }
              }
        check::record(wrong == 0, __FILE__, __LINE__, label + ": " + std::to_string(wrong) + " outputs differ");
        check::record(touched == 0, __FILE__, __LINE__, label + ": " + std::to_string(touched) + " outside written");
      }
      etrt::set_parallel_backend(nullptr);
    }
  }
  // Refusals: a slice past the tensor's channels, a negative start, with a residual, into a
  // tensor that is not channels-last.
  check::TestContext ctx;
  Buf<float> input({1, 8, 6, 6}, channels_last(8, 6, 6)), weight({4, 8, 3, 3}, hwio(4, 8, 3));
  Buf<float> whole({1, 10, 6, 6}, channels_last(10, 6, 6)), nchw({1, 10, 6, 6}), residual({1, 4, 6, 6});
  std::vector<int64_t> st = {1, 1}, pd = {1, 1}, ones = {1, 1}, zeros = {0, 0};
  Value vs = Value::int_list(st), vp = Value::int_list(pd), vd = Value::int_list(ones), vo = Value::int_list(zeros);
  Value vt(false), vg(int64_t{1}), none;
  auto call = [&](Value* residual_v, int64_t at, Value* out, Value* groups, Value* w) {
    Value first(at);
    std::vector<Value*> a = {&input.v, w, &none, &vs, &vp, &vd, &vt, &vo, groups, residual_v, &none, &none, &none, &first, out};
    ctx.reset();
    etrt::kernels::op_fused_conv2d(ctx, etrt::Span<Value*>(a.data(), a.size()));
    return ctx.failed() ? std::string(ctx.error().message()) : std::string();
  };
  CHECK(call(&none, 6, &whole.v, &vg, &weight.v).empty());
  CHECK(call(&none, 7, &whole.v, &vg, &weight.v).find("are not inside 'out'") != std::string::npos);
  CHECK(call(&none, -1, &whole.v, &vg, &weight.v).find("are not inside 'out'") != std::string::npos);
  CHECK(call(&residual.v, 0, &whole.v, &vg, &weight.v).find("does not go with a residual") != std::string::npos);
  CHECK(call(&none, 0, &nchw.v, &vg, &weight.v).find("channels-last") != std::string::npos);
}

int main() {
  test_logistic_in_place_equals_out_of_place();
  test_convolution_matches_reference();
  test_channels_last_convolution_matches_reference();
  test_winograd_takes_the_shapes_it_pays_on();
  test_kept_weight_panels_equal_per_call_packing();
  test_kept_winograd_weights_equal_per_call();
  test_convolution_rejects_bad_arguments();
  test_transposed_convolution_matches_reference();
  test_conv3d_matches_reference();
  test_max_pool_matches_reference();
  test_channels_last_max_pool_matches_reference();
  test_max_pool_rejects_bad_arguments();
  test_split_work_matches_reference();
  test_winograd_slices_times_tile_runs();
  test_kept_panels_follow_the_split();
  test_few_tiles_over_a_big_weight_split_by_channels_at_two_threads();
  test_convolution_into_a_channel_slice();
  return check::finish();
}
