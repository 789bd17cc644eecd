// etrt_quant::conv2d's channels-last paths through the registry against an integer reference, at
// every instruction set: depthwise layers (the window-row kernels on int8 bands and on float32
// planes, VNNI's 3x3 kernels, the per-tap kernels, the per-pixel path), first convolutions of few input channels
// (their tiles read a padded copy of the input in place), 1x1 convolutions (VNNI tiles
// requantizing in registers) and 3x3 stride-1 ones (integer Winograd without VNNI). Scales are
// powers of two, so the reference's float32 requantization is exact and must be met exactly.
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "check.h"
#include "etrt/runtime/cpu_isa.h"
#include "etrt/runtime/tensor.h"
#include "etrt/runtime/value.h"

using etrt::Tensor;
using etrt::Value;

namespace {

std::mt19937& rng() {
  static std::mt19937 g(2027);
  return g;
}
int64_t rand_int(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng()); }

// A tensor over its own buffer; channels-last strides when asked (4-D).
template <typename T>
struct Buf {
  std::vector<T> data;
  Tensor t;
  Value v;
  Buf(std::vector<int64_t> sizes, bool nhwc) {
    std::vector<int64_t> strides(sizes.size(), 1);
    if (nhwc) {
      strides = {sizes[1] * sizes[2] * sizes[3], 1, sizes[3] * sizes[1], sizes[1]};
    } else {
      for (int i = static_cast<int>(sizes.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * sizes[i + 1];
    }
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    data.resize(static_cast<size_t>(n));
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

struct Case {
  int64_t n, c, cout, groups, h, w, k, s, p, d;
  bool nchw_in;
  int64_t lo = -128;        // the zero point (3) for a folded ReLU
  double out_scale = 4.0;   // smaller: more outputs saturate
};

void run_case(const Case& q, const std::string& label) {
  const int64_t oh = (q.h + 2 * q.p - q.d * (q.k - 1) - 1) / q.s + 1;
  const int64_t ow = (q.w + 2 * q.p - q.d * (q.k - 1) - 1) / q.s + 1;
  const int64_t cin_g = q.c / q.groups;
  Buf<int8_t> x({q.n, q.c, q.h, q.w}, !q.nchw_in);
  Buf<int8_t> wt({q.cout, cin_g, q.k, q.k}, false);
  Buf<float> w_scale({q.cout}, false), bias({q.cout}, false);
  Buf<int8_t> out({q.n, q.cout, oh, ow}, true);
  for (auto& v : x.data) v = static_cast<int8_t>(rand_int(-128, 127));
  for (auto& v : wt.data) v = static_cast<int8_t>(rand_int(-127, 127));
  for (int64_t o = 0; o < q.cout; ++o) {
    w_scale.data[o] = std::ldexp(1.0f, -static_cast<int>(6 + o % 3));
    bias.data[o] = 0.25f * static_cast<float>(o % 7 - 3);
  }
  wt.t.set_read_only(true);  // a program's constant, as the exporter stores it
  const double in_scale = 0.125, out_scale = q.out_scale;
  const int64_t in_zp = -5, out_zp = 3, lo = q.lo, hi = 127;
  Value vis(in_scale), viz(in_zp), vos(out_scale), voz(out_zp), vlo(lo), vhi(hi), vg(q.groups);
  const std::vector<int64_t> stride = {q.s, q.s}, padding = {q.p, q.p}, dilation = {q.d, q.d};
  Value vs = Value::int_list(stride), vp = Value::int_list(padding), vd = Value::int_list(dilation);
  const std::vector<Value*> args = {&x.v, &wt.v, &w_scale.v, &bias.v, &vis, &viz, &vos, &voz,
                                    &vlo, &vhi, &vs,  &vp,        &vd,      &vg,  &out.v};
  check::TestContext ctx;
  for (int run = 0; run < 2; ++run) {  // twice: nothing a call leaves behind changes the next
    CHECK_OK(check::call(ctx, "etrt_quant::conv2d", args));
  }
  int64_t wrong = 0, first = -1;
  for (int64_t b = 0; b < q.n; ++b)
    for (int64_t o = 0; o < q.cout; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xo = 0; xo < ow; ++xo) {
          const int64_t g = o / (q.cout / q.groups);
          int64_t acc = 0;
          for (int64_t ci = 0; ci < cin_g; ++ci)
            for (int64_t i = 0; i < q.k; ++i)
              for (int64_t j = 0; j < q.k; ++j) {
                const int64_t iy = y * q.s - q.p + i * q.d, ix = xo * q.s - q.p + j * q.d;
                if (iy < 0 || iy >= q.h || ix < 0 || ix >= q.w) continue;
                acc += (x.at({b, g * cin_g + ci, iy, ix}) - in_zp) * wt.at({o, ci, i, j});
              }
          const float m = static_cast<float>(in_scale * w_scale.data[o]);
          const float yv = static_cast<float>(acc) * m + bias.data[o];
          const float r = std::nearbyint(yv * static_cast<float>(1.0 / out_scale)) + static_cast<float>(out_zp);
          const auto want = static_cast<int8_t>(std::fmin(std::fmax(r, static_cast<float>(lo)), static_cast<float>(hi)));
          if (out.at({b, o, y, xo}) != want) {
            if (first < 0) first = ((b * q.cout + o) * oh + y) * ow + xo;
            ++wrong;
          }
        }
  check::record(wrong == 0, __FILE__, __LINE__,
                label + ": " + std::to_string(wrong) + " wrong outputs, first at " + std::to_string(first));
}

void test_depthwise_and_first_convolutions_match_the_integer_reference() {
  const check::KeepIsaCap keep;
  for (const char* isa : {"avx512", "avx2", "sse2"}) {
    if (!etrt::set_max_isa(isa).ok()) continue;
    const std::string at = std::string(" [") + isa + "]";
    // Depthwise: {n, c, cout, groups, h, w, k, stride, padding, dilation, nchw input}.
    const Case dw[] = {
        {1, 24, 24, 24, 7, 7, 5, 1, 2, 1, false},     // every row a border one: bands, a 7-pixel rest
        {2, 40, 40, 40, 14, 13, 5, 1, 2, 1, false},   // 8 + 5 pixels, an AVX2 tail of 8 at AVX-512
        {1, 72, 72, 72, 14, 15, 5, 2, 2, 1, false},   // 5x5 stride 2
        {1, 16, 16, 16, 15, 29, 3, 2, 1, 1, false},   // 3x3 stride 2, 15 pixels
        {1, 88, 88, 88, 11, 12, 3, 1, 1, 1, false},   // 64 + 24 channels
        {1, 40, 40, 40, 80, 81, 3, 1, 1, 1, false},   // a plane past 512 KiB: int8 bands and rows
        {1, 40, 40, 40, 61, 60, 5, 2, 2, 1, false},   // the same at 5x5 stride 2
        {1, 16, 16, 16, 10, 10, 3, 1, 0, 1, false},   // no padding: no border pixel
        {1, 40, 40, 40, 4, 4, 5, 1, 2, 1, false},     // a window wider than the row
        {1, 24, 24, 24, 4, 5, 7, 1, 3, 1, false},     // 7x7: per-tap kernels through the bands
        {1, 24, 24, 24, 9, 9, 3, 1, 2, 2, false},     // dilated: per-tap kernels
        {2, 12, 12, 12, 6, 7, 3, 1, 1, 1, true},      // 12 channels: per pixel; NCHW input
        // 3x3 on VNNI, 64-channel blocks of interleaved window rows (quantization.md, part K): two blocks, a batch,
        // ReLU and saturating outputs; 3 blocks with 5 pixels a row (tiles of 4 and a rest); a
        // block and 8 channels more for the older kernels; stride 2 with 7 and 4 pixel rows.
        {2, 128, 128, 128, 9, 11, 3, 1, 1, 1, false, 3, 0.0625},
        {1, 192, 192, 192, 6, 7, 3, 1, 0, 1, false, -128, 0.25},
        {1, 72, 72, 72, 5, 6, 3, 1, 1, 1, false, -128, 1.0},
        {1, 64, 64, 64, 14, 13, 3, 2, 1, 1, false, -128, 0.0625},
        {2, 128, 128, 128, 8, 8, 3, 2, 1, 1, false, 3, 0.25},
        // a last block of 32 channels (256 bits): 32 alone, 64 + 32 at stride 2, 32 + 16
        {1, 32, 32, 32, 9, 10, 3, 1, 1, 1, false, -128, 0.0625},
        {1, 96, 96, 96, 11, 9, 3, 2, 1, 1, false, 3, 0.25},
        {1, 48, 48, 48, 6, 6, 3, 1, 1, 1, false, -128, 1.0},
    };
    for (const Case& c : dw) {
      run_case(c, "depthwise c" + std::to_string(c.c) + " " + std::to_string(c.h) + "x" + std::to_string(c.w) +
                      " k" + std::to_string(c.k) + "/" + std::to_string(c.s) + at);
    }
    // First convolutions (fewer than 8 input channels): 16, 24 and 40 output channels.
    const Case stem[] = {
        {2, 3, 16, 1, 17, 19, 3, 2, 1, 1, true},  // MobileNet's stem, NCHW input
        {1, 3, 24, 1, 23, 21, 7, 2, 3, 1, true},  // ResNet's 7x7/2
        {1, 4, 40, 1, 9, 11, 5, 1, 2, 1, false},  // channels-last input, stride 1
        {1, 1, 16, 1, 8, 9, 3, 1, 0, 1, true},    // one channel, no padding
        {1, 7, 16, 1, 7, 6, 3, 2, 1, 1, false},   // 7 channels: 21-byte kernel rows
    };
    for (const Case& c : stem) {
      run_case(c, "stem c" + std::to_string(c.c) + " -> " + std::to_string(c.cout) + " k" + std::to_string(c.k) + "/" +
                      std::to_string(c.s) + at);
    }
    // 1x1 convolutions on channels-last rows: tiles of 8 pixels x 32 channels requantized in
    // registers (VNNI), a last block of 16 or fewer channels, rows past the last whole tile,
    // input channels not a multiple of 4 (the rows are copied and padded), and ReLU's raised lower
    // bound. The sums are large enough to saturate at both ends and tie at halves.
    const Case pointwise[] = {
        {1, 16, 96, 1, 9, 7, 1, 1, 0, 1, false, -128, 0.0625},  // MobileNetV2's expansion: 3 blocks of 32
        {1, 24, 40, 1, 5, 5, 1, 1, 0, 1, false, -128, 0.0625},  // 32 + 8 channels, 25 pixels: 3 tiles + 1
        {2, 32, 16, 1, 3, 4, 1, 1, 0, 1, false, -128, 0.25},    // one vector, 12 pixels a batch
        {1, 96, 24, 1, 6, 6, 1, 1, 0, 1, false, 3, 0.25},       // 16 + 8 channels, ReLU
        {1, 13, 7, 1, 4, 5, 1, 1, 0, 1, false},                 // 13 input channels, 7 output
        {1, 64, 64, 1, 5, 3, 1, 1, 0, 1, false, 3, 0.0625},     // 15 pixels, ReLU
    };
    // 3x3 stride-1 convolutions of 16k channels (Winograd F(2x2, 3x3) in integers without VNNI):
    // odd output sizes (a last tile row and column half outside), blocks of 48 tiles and a
    // partial one, a batch, 512 input channels (the largest sums), ReLU.
    const Case winograd[] = {
        {1, 32, 48, 1, 7, 9, 3, 1, 1, 1, false, -128, 0.0625},
        {1, 16, 32, 1, 15, 17, 3, 1, 1, 1, false, -128, 0.25},
        {2, 16, 16, 1, 6, 5, 3, 1, 1, 1, false, 3, 0.0625},
        {1, 512, 16, 1, 3, 4, 3, 1, 1, 1, false, -128, 1.0},
        {1, 64, 64, 1, 8, 8, 3, 1, 1, 1, false, 3, 0.25},
    };
    for (const Case& c : winograd) {
      run_case(c, "3x3 c" + std::to_string(c.c) + " -> " + std::to_string(c.cout) + " " + std::to_string(c.h) + "x" +
                      std::to_string(c.w) + (c.lo > -128 ? " relu" : "") + at);
    }
    for (const Case& c : pointwise) {
      run_case(c, "1x1 c" + std::to_string(c.c) + " -> " + std::to_string(c.cout) + " " + std::to_string(c.h) + "x" +
                      std::to_string(c.w) + (c.lo > -128 ? " relu" : "") + at);
    }
  }
}

}  // namespace

int main() {
  test_depthwise_and_first_convolutions_match_the_integer_reference();
  return check::finish();
}
