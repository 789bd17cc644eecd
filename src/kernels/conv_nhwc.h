// Channels-last (NHWC) 2-D convolution for the CPU kernels (private to libetrt_kernels_optimized).
//
// aten::convolution takes this path when its output is laid out channels-last (the exporter plans
// convolution outputs that way, python/etrt/channels_last.py). Three kernels:
//   igemm      groups == 1: register tiles of MR output pixels x 2 vectors of output channels,
//              summing over the taps through per-pixel row pointers into the input (an
//              indirection table: padding points at a row of zeros), so nothing is unfolded.
//              Inputs with very few channels (a network's first layer) sum over window rows,
//              each kw x cin inputs read in place (unfolded only where a row meets the padding).
//   winograd   3x3, stride 1, groups 1, with enough 4x4 output tiles: F(4x4, 3x3), 36
//              multiply-adds per tile and channel pair instead of 144; the weights are
//              transformed per call, the products run on the igemm micro-kernels.
//   depthwise  groups == channels: tiles of pixels x channel vectors, one weight vector per tap;
//              3x3 and 5x5 at stride 1 or 2 keep a window row's weights in registers and load
//              each input column once for every output it covers.
//   stem       few input channels over the model's NCHW input (in_nchw): tiles of one output
//              row broadcast their inputs from the NCHW rows in place, no transpose.
//   grouped    other groups (ResNeXt's, RegNet's): igemm tiles per group over the group's
//              channels of each pixel; groups narrower than a vector of output channels are
//              joined into block-diagonal ones (zeros between), so no tile is masked.
// Weights are [kh][kw][cin_g][cout] (output channels innermost): the layout the exporter stores
// them in, so the product reads them in place (a grouped one is repacked per group, once for a
// constant).
#pragma once

#include <cstddef>
#include <cstdint>

#include "etrt/runtime/kernel.h"

namespace etrt {
namespace kernels {

// The activation an epilogue applies after its clamp (etrt_fused::conv2d's `activation`).
enum class NhwcActivation { None, Hardswish, Silu, Sigmoid, LeakyRelu };

struct NhwcConv {
  int64_t batch = 0, h = 0, w = 0, cin = 0;  // input, channels innermost
  int64_t oh = 0, ow = 0, cout = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  bool depthwise = false;  // groups == cin == cout
  int64_t groups = 1;      // other groups: cin and cout are the totals, cin / groups a group's
  // Pixel (n, y, x) of the input: cin floats at in + n * in_sn + y * in_sh + x * in_sw.
  const float* in = nullptr;
  int64_t in_sn = 0, in_sh = 0, in_sw = 0;
  // Row r = (i * kw + j) * cin_g + c of the weights: output channels [w_first, ...) at
  // weight + r * w_ld (w_ld = cout and w_first = 0 for the whole weight, else a packed block).
  const float* weight = nullptr;
  int64_t w_ld = 0, w_first = 0;
  // The weight is the program's constant, read in place (a key for the panels it is packed
  // into, kept across runs in the instruction's cache); nullptr: it may change between calls.
  const void* weight_constant = nullptr;
  const float* bias = nullptr;  // cout floats, or nullptr
  // Output pixel p (over n, y, x in order): cout floats at out + p * out_ps.
  float* out = nullptr;
  int64_t out_ps = 0;
  // The epilogue, applied to each output tile before it is stored: plus the residual (nullptr:
  // none; laid out like the output, pixel p at residual + p * out_ps, never the output itself: a
  // tile's channel tail may overlap the chunk before and be stored twice), clamped to [lo, hi],
  // then the activation.
  const float* residual = nullptr;
  float lo = -__builtin_inff(), hi = __builtin_inff();
  NhwcActivation activation = NhwcActivation::None;
  float slope = 0.0f;  // LeakyRelu's negative slope
  // A residual laid out as `residual` is, added after the activation instead (nullptr: none).
  const float* residual_last = nullptr;
  const float* zeros = nullptr;  // a row of at least cin zeros: padding taps point here
  // A first layer over the model's NCHW input (set by the caller where nhwc_stem_fits): plane
  // (n, ch) at in_nchw + n * nchw_sn + ch * nchw_sc, rows w floats apart, in unused. The tiles
  // read it in place (no transpose to channels-last).
  const float* in_nchw = nullptr;
  int64_t nchw_sn = 0, nchw_sc = 0;

  int64_t taps() const { return kh * kw; }
  int64_t pixels() const { return batch * oh * ow; }
  int64_t cin_g() const { return depthwise ? 1 : cin / groups; }
};

// igemm tiles over all the pixels (of up to a few pixels each; the instruction set decides).
int64_t nhwc_conv_tiles_count(const NhwcConv& c);
// Scratch floats (pointer table and unfolded tile, 64-byte aligned) one igemm worker needs.
size_t nhwc_conv_scratch_floats(const NhwcConv& c);
// igemm over tiles [tile_begin, tile_end) and output channels [oc_begin, oc_end).
void nhwc_conv_tiles(const NhwcConv& c, int64_t tile_begin, int64_t tile_end, int64_t oc_begin, int64_t oc_end,
                     float* scratch);
// Depthwise over output rows [row_begin, row_end) (rows run over n, then y).
void nhwc_depthwise_rows(const NhwcConv& c, int64_t row_begin, int64_t row_end);

// Winograd F(4x4, 3x3) (3x3 stride 1, groups 1): whether it applies and pays, and the whole
// convolution that way. nhwc_convolution takes it by itself when it fits.
bool nhwc_winograd_fits(const NhwcConv& c);
bool nhwc_winograd(KernelContext& ctx, const NhwcConv& c);

// Whether a convolution over an NCHW input (pixels dense, channels a plane apart) can read it in
// place through in_nchw: fewer than 8 input channels, groups 1, a square 3x3 or 7x7 window at
// stride 1 or 2, dilation 1, the whole weight at w_ld == cout.
bool nhwc_stem_fits(const NhwcConv& c);

// The whole convolution, split across threads when it is big enough. False (nothing written)
// when scratch memory runs out.
bool nhwc_convolution(KernelContext& ctx, const NhwcConv& c);

}  // namespace kernels
}  // namespace etrt
