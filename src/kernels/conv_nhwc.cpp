#include "conv_nhwc.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "etrt/runtime/log.h"
#include "etrt/runtime/parallel.h"
#include "gemm.h"
#include "isa_dispatch.h"
#include "logistic.h"
#include "parts.h"

namespace etrt {
namespace kernels {

#define ETRT_ISA_FILE "conv_isa.inc"
#include "isa_clones.inc"
#undef ETRT_ISA_FILE

namespace {

struct ConvIsa {
  const char* name;
  int64_t (*tile_count)(const NhwcConv&);
  size_t (*scratch_floats)(const NhwcConv&);
  void (*tiles)(const NhwcConv&, int64_t, int64_t, int64_t, int64_t, float*);
  void (*depthwise)(const NhwcConv&, int64_t, int64_t);
  void (*wino_weights)(const NhwcConv&, float*, int64_t, int64_t);
  void (*wino_block)(const NhwcConv&, const float*, int64_t, int64_t, float*, float*, const float**);
  int64_t (*wino_rows)();
  int64_t (*tile_channels)();
  void (*stem_rows)(const NhwcConv&, int64_t, int64_t, float*);
  size_t (*stem_scratch_floats)(const NhwcConv&);
  void (*grouped)(const NhwcConv&, int64_t, int64_t, int64_t, int64_t, float*);
  int64_t (*vector_floats)();
};

const ConvIsa kIsas[] = {
#if ETRT_ISA_X86
    {"avx512", nhwc::isa_avx512::tile_count, nhwc::isa_avx512::scratch_floats, nhwc::isa_avx512::conv_tiles,
     nhwc::isa_avx512::dw_rows, nhwc::isa_avx512::wino_weights, nhwc::isa_avx512::wino_block, nhwc::isa_avx512::wino_tile_rows,
     nhwc::isa_avx512::tile_channels,
     nhwc::isa_avx512::stem_rows, nhwc::isa_avx512::stem_scratch_floats, nhwc::isa_avx512::grouped_tiles,
     nhwc::isa_avx512::vector_floats},
    {"avx2", nhwc::isa_avx2::tile_count, nhwc::isa_avx2::scratch_floats, nhwc::isa_avx2::conv_tiles,
     nhwc::isa_avx2::dw_rows, nhwc::isa_avx2::wino_weights, nhwc::isa_avx2::wino_block, nhwc::isa_avx2::wino_tile_rows,
     nhwc::isa_avx2::tile_channels,
     nhwc::isa_avx2::stem_rows, nhwc::isa_avx2::stem_scratch_floats, nhwc::isa_avx2::grouped_tiles,
     nhwc::isa_avx2::vector_floats},
    {"sse2", nhwc::isa_sse2::tile_count, nhwc::isa_sse2::scratch_floats, nhwc::isa_sse2::conv_tiles,
     nhwc::isa_sse2::dw_rows, nhwc::isa_sse2::wino_weights, nhwc::isa_sse2::wino_block, nhwc::isa_sse2::wino_tile_rows,
     nhwc::isa_sse2::tile_channels,
     nhwc::isa_sse2::stem_rows, nhwc::isa_sse2::stem_scratch_floats, nhwc::isa_sse2::grouped_tiles,
     nhwc::isa_sse2::vector_floats},
#else
    {"generic", nhwc::isa_generic::tile_count, nhwc::isa_generic::scratch_floats, nhwc::isa_generic::conv_tiles,
     nhwc::isa_generic::dw_rows, nhwc::isa_generic::wino_weights, nhwc::isa_generic::wino_block,
     nhwc::isa_generic::wino_tile_rows,
     nhwc::isa_generic::tile_channels,
     nhwc::isa_generic::stem_rows, nhwc::isa_generic::stem_scratch_floats, nhwc::isa_generic::grouped_tiles,
     nhwc::isa_generic::vector_floats},
#endif
};

// The level every kernel uses (etrt::kernel_isa(); on x86 kIsas runs from the highest, elsewhere
// it holds the portable build alone).
#if ETRT_ISA_X86
const ConvIsa& conv_isa() { return kIsas[2 - isa_level()]; }
#else
const ConvIsa& conv_isa() { return kIsas[0]; }
#endif

// Below this many multiply-adds a second thread costs more than it saves.
constexpr double kConvParallelMinMacs = 128.0 * 1024.0;
// ... unless it reads this much weight: a squeeze-and-excitation product at one pixel (576 ->
// 144, 83 K multiply-adds, 324 KiB) is bound by reading its weight, which threads share out by
// output channels (MobileNetV3-small's: 30-34 us on one thread, 22-24 us on two; before, one
// thread at any count: EfficientNet-B0's 48 -> 1152 ones now 4.8x at 16 in scaling_sim.py).
constexpr double kConvParallelMinWeightBytes = 128.0 * 1024.0;
// Weights up to this size stay in L2 while every pixel tile passes over all output channels;
// larger ones are split into blocks of output channels of about kBlockBytes each.
constexpr int64_t kWholeWeightBytes = 512 * 1024;
constexpr int64_t kBlockBytes = 256 * 1024;
constexpr int64_t kBlockChannels = 32;  // or the instruction set's tile width where wider
// The smallest L2 these blocks are sized for (512 KiB a core on the AVX2 EPYCs measured).
constexpr int64_t kL2Bytes = 512 * 1024;
// Blocks are copied into a contiguous panel (below) when this many pixel tiles or more read them.
constexpr int64_t kPackMinTiles = 16;
// A layer over fewer tiles than that, whose weight is this big or bigger, splits its output
// channels one block a thread where the tiles alone would feed the threads (below).
constexpr int64_t kSplitWeightBytes = 128 * 1024;
constexpr int64_t kPackMinWeightBytes = 4 << 20;  // ... or the weights span this much or more
// Weight rows a multiple of 4 KiB apart (1024, 2048 output channels) fall into a few cache sets,
// and a whole weight read in place by every pixel tile keeps evicting itself: a 1x1 layer of
// 64 -> 1024 channels at 14x14 took 1.2x, 128 -> 1024 1.25x the time of blocks of 256 channels
// kept packed (AVX2; 1.07x at AVX-512), as the SGEMM's constant weights (kAliasingRowBytes).
constexpr int64_t kAliasingBlockChannels = 256;
// A depthwise layer split by channels takes slices of a multiple of this many (whole vectors at
// every instruction set, so each slice runs the kernels the whole layer runs).
constexpr int64_t kDepthwiseSliceChannels = 64;
// Winograd pays once the weights, transformed each call, serve enough 4x4 output tiles: 32 or
// more, or 16 when the transformed weights ([36][cin][cout], 4x the 3x3 ones) stay within about
// 9 MiB. Written just before the products read them, they are still in cache; bigger ones make
// a round trip to memory that eats the saving. Measured one thread, batch 1, four 3x3 layers in
// a row with ReLUs, Winograd / direct: 16 tiles (14x14) 0.63-0.71 at 64-256 channels and
// 0.75-0.81 at 13x13 (48->192, 64->256), 1.0 at 384 channels; 4 tiles (7x7) 1.3-1.4.
constexpr int64_t kWinogradMinTiles = 32;
constexpr int64_t kWinogradMinTilesSmallWeights = 16;
constexpr int64_t kWinogradSmallWeightPairs = 256 * 256;  // cin x cout
constexpr int64_t kWinogradMinChannels = 16;
// A block's transformed inputs and products ([36][tiles][cin] and [36][tiles][cout]) stay in L2.
constexpr int64_t kWinogradBlockBytes = 512 * 1024;
constexpr int64_t kWinogradMaxBlock = 64;
// Transformed weights above this size do not stay in L2 between blocks: every block streams them
// from L3 again, so there a block may take as much memory as they do, and fewer blocks stream
// them fewer times (four 3x3 layers of 256 channels at 28x28: 7.8 -> 6.0 ms at one thread, 4.3 ->
// 3.1 at two, AVX2 15.7 -> 11.9; 128 channels level within noise). Smaller ones are read from L2
// while the block's data fits beside them: four 64-channel layers at 56x56 took 1.2x the time
// with blocks of 32 tiles instead of 24.
constexpr int64_t kWinogradStreamedWeightBytes = int64_t{2} << 20;

// Output channels per unit of a Winograd slice: one cache line of each output pixel.
constexpr int64_t kWinogradSliceChannels = 16;
// Transformed weights from this size on are split by output channels between threads (see
// winograd_slices); smaller ones (ResNet18's 64-channel layers: 576 KiB) are cheap to share, and
// there the narrower products and the repeated input transform cost more (2 threads: 1.35 ms
// sliced against 1.17 ms by tiles for two 64-channel 56x56 layers), unless their tiles make
// fewer blocks than threads.
constexpr int64_t kWinogradSliceMinBytes = 1 << 20;
// Half that where every slice keeps 64 channels or more: there the products stay wide and the
// inputs' transform, repeated per slice, is small beside them (SqueezeNet's 32 -> 128 fire layers
// at 27x27, 576 KiB, more than the slower class's 512 KiB L2: 1.06-1.21x at two threads by
// tiles, 1.31-1.48x sliced).
constexpr int64_t kWinogradWideSliceMinBytes = 512 << 10;
constexpr int64_t kWinogradWideSliceChannels = 64;

int64_t winograd_tiles(const NhwcConv& c) { return c.batch * ((c.oh + 3) / 4) * ((c.ow + 3) / 4); }

// Output channels [begin, begin + width) of `c`: their weights, bias, residuals and output (a
// depthwise layer's input channels too, which are its output channels).
NhwcConv channel_slice(const NhwcConv& c, int64_t begin, int64_t width) {
  NhwcConv s = c;
  s.cout = width;
  s.weight = c.weight + begin;
  if (s.bias != nullptr) s.bias += begin;
  if (s.residual != nullptr) s.residual += begin;
  if (s.residual_last != nullptr) s.residual_last += begin;
  s.out = c.out + begin;
  if (c.depthwise) {
    s.cin = width;
    s.in = c.in + begin;
  }
  return s;
}

}  // namespace

// ETRT_WINOGRAD=off leaves 3x3 convolutions to the direct kernels, for eager's rounding: the
// transforms scale values up and down, so a Winograd layer rounds about 7x more than a direct
// sum (3e-6 of its largest output against 4e-7).
bool winograd_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("ETRT_WINOGRAD");
    if (v == nullptr || *v == '\0' || std::strcmp(v, "on") == 0) return true;
    if (std::strcmp(v, "off") == 0) return false;
    ETRT_LOG(Warning, "ignoring ETRT_WINOGRAD='%s': expected 'on' or 'off'", v);
    return true;
  }();
  return on;
}

bool nhwc_winograd_fits(const NhwcConv& c) {
  if (!winograd_enabled() || c.depthwise || c.groups != 1 || c.kh != 3 || c.kw != 3 || c.sh != 1 || c.sw != 1 ||
      c.dh != 1 || c.dw != 1 || c.ph > 2 || c.pw > 2 || c.cin < kWinogradMinChannels ||
      c.cout < kWinogradMinChannels || c.w_first != 0 || c.w_ld != c.cout) {
    return false;
  }
  const int64_t tiles = winograd_tiles(c);
  return tiles >= kWinogradMinTiles ||
         (tiles >= kWinogradMinTilesSmallWeights && c.cin * c.cout <= kWinogradSmallWeightPairs);
}

namespace {

// Tiles a Winograd block holds: its transformed inputs and products within kWinogradBlockBytes,
// or within the size of the transformed weights (cin x cout) where those stream from L3.
int64_t winograd_block(int64_t tiles, int64_t rows, int64_t cin, int64_t cout) {
  const int64_t weight_bytes = 36 * cin * cout * static_cast<int64_t>(sizeof(float));
  const int64_t bytes = weight_bytes > kWinogradStreamedWeightBytes ? weight_bytes : kWinogradBlockBytes;
  int64_t block = bytes / (36 * static_cast<int64_t>(sizeof(float)) * (cin + cout)) / rows * rows;
  if (block < 2 * rows) block = 2 * rows;
  if (block > kWinogradMaxBlock) block = kWinogradMaxBlock;
  return block > tiles ? tiles : block;
}

// A constant weight's Winograd transform, 36 x cin x cout floats, kept in the instruction's cache:
// computed at the first run (and again when the instruction set or the slicing changes), then
// read in place. `slices` is 1 for the one-slice layout ([36][cin][cout]) or the thread count
// for winograd_slices' one ([36][cin][width] per slice, back to back). nullptr where the runtime
// keeps none (a weight given at run time, the method's budget spent): transformed per call.
// *ready: the contents are an earlier run's.
float* kept_winograd(KernelContext& ctx, const NhwcConv& c, int64_t slices, bool* ready) {
  *ready = false;
  if (c.weight_constant == nullptr || c.weight != c.weight_constant || slices < 1 || slices > 255) return nullptr;
  // The layout (Winograd) and the slice count.
  constexpr uint64_t kWinograd = 0x21;
  const uint64_t key = kept_key(c.weight_constant, kWinograd) | static_cast<uint64_t>(slices) << 56;
  return static_cast<float*>(
      ctx.instruction_cache(key, static_cast<size_t>(36 * c.cin * c.cout) * sizeof(float), ready));
}

// Winograd on several threads by output channels: slice s (one per thread, whole cache lines of
// channels) transforms its own weights and runs every tile over them. Split by tiles instead,
// every thread reads all the transformed weights, half of them just written by the other core:
// on the 2-core development machine ResNet18's 28x28 and 14x14 layers then ran at 0.5-0.7x
// their one-thread speed. The inputs' transform is done once per slice (a few % of the products).
// Where the channels make fewer slices than threads (128 channels: 8 slices of 16 at 16 threads),
// each slice's tiles are split into `groups` runs of whole micro-tiles as well, a part each.
bool winograd_slices(KernelContext& ctx, const NhwcConv& c, int64_t slices, int64_t groups) {
  const ConvIsa& impl = conv_isa();
  const int64_t tiles = winograd_tiles(c), rows = impl.wino_rows();
  const int64_t units = (c.cout + kWinogradSliceChannels - 1) / kWinogradSliceChannels;
  auto first_channel = [&](int64_t s) { return std::min(c.cout, units * s / slices * kWinogradSliceChannels); };
  int64_t widest = 0;
  for (int64_t s = 0; s < slices; ++s) widest = std::max(widest, first_channel(s + 1) - first_channel(s));
  const int64_t tile_units = (tiles + rows - 1) / rows;
  auto first_tile = [&](int64_t g) { return std::min(tiles, tile_units * g / groups * rows); };
  const int64_t block = winograd_block(first_tile(1), rows, c.cin, widest);
  auto slice = [&](int64_t s) { return channel_slice(c, first_channel(s), first_channel(s + 1) - first_channel(s)); };
  // Slice s's transformed weights ([36][cin][width], 64-byte aligned) at 36 * cin * its first
  // channel, kept or in the scratch. Kept ones are filled before the scratch is asked for, so a
  // failed call leaves none marked ready half written.
  bool ready = false;
  float* kept = kept_winograd(ctx, c, slices, &ready);
  if (kept != nullptr && !ready) {
    run_parts_in_slots(slices, slices, [&](int64_t s, int64_t) {
      const NhwcConv cb = slice(s);
      if (cb.cout > 0) impl.wino_weights(cb, kept + 36 * c.cin * first_channel(s), 0, c.cin);
    });
  }
  const size_t u_floats = kept != nullptr ? 0 : static_cast<size_t>(36 * c.cin * c.cout + 15) / 16 * 16;
  const size_t per_slot = static_cast<size_t>(36 * block * (c.cin + widest) + 2 * rows + 15) / 16 * 16;
  const int64_t parts = slices * groups;
  const int64_t slots = std::min<int64_t>(parts, parallel_num_threads());
  float* scratch = static_cast<float*>(
      ctx.allocate_temp((u_floats + per_slot * static_cast<size_t>(slots)) * sizeof(float), 64));
  if (scratch == nullptr) return false;
  if (kept == nullptr) {  // transformed per call: every slice's weights before any group reads them
    run_parts_in_slots(slices, slices, [&](int64_t s, int64_t) {
      const NhwcConv cb = slice(s);
      if (cb.cout > 0) impl.wino_weights(cb, scratch + 36 * c.cin * first_channel(s), 0, c.cin);
    });
  }
  run_parts_in_slots(parts, slots, [&](int64_t t, int64_t slot) {
    const int64_t s = t / groups, g = t % groups;  // a thread's run of parts shares a slice
    const NhwcConv cb = slice(s);
    const int64_t width = cb.cout;
    if (width <= 0) return;
    const float* u = (kept != nullptr ? kept : scratch) + 36 * c.cin * first_channel(s);
    float* v = scratch + u_floats + per_slot * static_cast<size_t>(slot);
    float* m = v + 36 * block * c.cin;
    const float** table = reinterpret_cast<const float**>(m + 36 * block * width);
    const int64_t end = first_tile(g + 1);
    for (int64_t first = first_tile(g); first < end; first += block) {
      impl.wino_block(cb, u, first, first + block <= end ? block : end - first, v, m, table);
    }
  });
  return true;
}

// Output channels [oc_begin, oc_begin + width) of every weight row, copied contiguous.
void pack_panel(const NhwcConv& c, int64_t rows, int64_t oc_begin, int64_t width, float* panel) {
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(panel + r * width, c.weight + r * c.w_ld + (oc_begin - c.w_first),
                static_cast<size_t>(width) * sizeof(float));
  }
}

// A constant weight's panels of `block` channels (the last one narrower), block b at
// rows * b * block floats: from the instruction's cache, packed there at the first call and
// again when the instruction set in force or the split over few tiles (`split`: the block width
// follows the thread count there) changes; nullptr where the runtime keeps none.
const float* kept_panels(KernelContext& ctx, const NhwcConv& c, int64_t rows, int64_t block, int64_t split,
                         bool per_thread = false) {
  if (c.weight_constant == nullptr || c.weight != c.weight_constant || c.w_first != 0 || c.w_ld != c.cout) {
    return nullptr;
  }
  // The constant at that address has one shape, so the block width (from the shape and the
  // level, or from the split of a layer over few tiles) follows from the key.
  constexpr uint64_t kFloatPanels = 0x20;
  constexpr uint64_t kFloatPanelsPerThread = 0x23;  // one block per thread (few tiles, a big weight)
  const uint64_t layout = per_thread ? kFloatPanelsPerThread : kFloatPanels;
  const uint64_t key = kept_key(c.weight_constant, layout) | static_cast<uint64_t>(split) << 56;
  bool ready = false;
  auto* panels = static_cast<float*>(
      ctx.instruction_cache(key, static_cast<size_t>(rows * c.cout) * sizeof(float), &ready));
  if (panels == nullptr || ready) return panels;
  for (int64_t b = 0; b * block < c.cout; ++b) {
    const int64_t oc_begin = b * block, width = std::min(block, c.cout - oc_begin);
    pack_panel(c, rows, oc_begin, width, panels + rows * oc_begin);
  }
  return panels;
}

}  // namespace

bool nhwc_winograd(KernelContext& ctx, const NhwcConv& c) {
  const ConvIsa& impl = conv_isa();
  const int threads = parallel_num_threads();
  const int64_t u_bytes = 36 * c.cin * c.cout * static_cast<int64_t>(sizeof(float));
  const int64_t tiles = winograd_tiles(c), rows = impl.wino_rows();
  int64_t block = winograd_block(tiles, rows, c.cin, c.cout);
  if (threads > 1) {
    // Two blocks a thread where the tiles allow (down to one micro-tile of rows): ResNet18's
    // 14x14 layers (16 tiles, one 16-tile block) otherwise ran their products on one thread.
    const int64_t want = 2 * static_cast<int64_t>(threads);
    const int64_t fair = std::max(rows, (tiles + want - 1) / want + rows - 1) / rows * rows;
    if (block > fair) block = fair;
  }
  const int64_t blocks = (tiles + block - 1) / block;
  const int64_t channel_slices = c.cout / kWinogradSliceChannels;
  if (threads > 1 && channel_slices >= 2) {
    const bool wide = u_bytes >= kWinogradWideSliceMinBytes && c.cout >= threads * kWinogradWideSliceChannels;
    if ((u_bytes >= kWinogradSliceMinBytes || wide) && channel_slices >= threads) {
      return winograd_slices(ctx, c, threads, 1);
    }
    // Too few blocks of tiles to go round (ResNet18's 128-channel 28x28 layers at 16 threads:
    // 7 blocks), whatever the weights' size: slices times runs of tiles, each slice's inputs
    // transformed once per run.
    const int64_t slices = std::min<int64_t>(channel_slices, threads);
    const int64_t groups = std::min((threads + slices - 1) / slices, (tiles + rows - 1) / rows);
    if (blocks < threads && slices * groups > blocks) return winograd_slices(ctx, c, slices, groups);
  }
  const int64_t parts = threads > 1 ? std::min(blocks, threads * kPartsPerThread) : 1;
  const int64_t slots = std::min<int64_t>(parts, threads);
  // The transformed weights: kept across runs (filled before the scratch is asked for) or
  // computed into the scratch each call.
  bool ready = false;
  float* const kept = kept_winograd(ctx, c, 1, &ready);
  const size_t u_floats = kept != nullptr ? 0 : static_cast<size_t>(36 * c.cin * c.cout + 15) / 16 * 16;
  const size_t per_slot = static_cast<size_t>(36 * block * (c.cin + c.cout) + 2 * rows + 15) / 16 * 16;
  auto transform = [&](float* u) {
    if (threads > 1) {
      parallel_for(0, c.cin, 8, [&](int64_t b, int64_t e) { impl.wino_weights(c, u, b, e); });
    } else {
      impl.wino_weights(c, u, 0, c.cin);
    }
  };
  if (kept != nullptr && !ready) transform(kept);
  float* scratch = static_cast<float*>(
      ctx.allocate_temp((u_floats + per_slot * static_cast<size_t>(slots)) * sizeof(float), 64));
  if (scratch == nullptr) return false;
  float* u = kept != nullptr ? kept : scratch;
  if (kept == nullptr) transform(u);
  auto run_part = [&](int64_t t, int64_t slot) {
    float* v = scratch + u_floats + per_slot * static_cast<size_t>(slot);
    float* m = v + 36 * block * c.cin;
    const float** table = reinterpret_cast<const float**>(m + 36 * block * c.cout);
    for (int64_t b = blocks * t / parts; b < blocks * (t + 1) / parts; ++b) {
      const int64_t first = b * block;
      impl.wino_block(c, u, first, first + block <= tiles ? block : tiles - first, v, m, table);
    }
  };
  run_parts_in_slots(parts, slots, run_part);
  return true;
}

int64_t nhwc_conv_tiles_count(const NhwcConv& c) { return conv_isa().tile_count(c); }

size_t nhwc_conv_scratch_floats(const NhwcConv& c) { return conv_isa().scratch_floats(c); }

void nhwc_conv_tiles(const NhwcConv& c, int64_t tile_begin, int64_t tile_end, int64_t oc_begin, int64_t oc_end,
                     float* scratch) {
  conv_isa().tiles(c, tile_begin, tile_end, oc_begin, oc_end, scratch);
}

void nhwc_depthwise_rows(const NhwcConv& c, int64_t row_begin, int64_t row_end) {
  conv_isa().depthwise(c, row_begin, row_end);
}

bool nhwc_stem_fits(const NhwcConv& c) {
  return !c.depthwise && c.groups == 1 && c.cin < 8 && c.kh == c.kw && (c.kw == 3 || c.kw == 7) && c.sh == c.sw &&
         (c.sw == 1 || c.sw == 2) && c.dh == 1 && c.dw == 1 && c.w_first == 0 && c.w_ld == c.cout;
}

namespace {

// The block width, whole tile widths of tc channels, that cuts `cout` channels into exactly
// `count` blocks with the last at least 3/4 of the others; 0 where no width does.
int64_t even_block_width(int64_t cout, int64_t count, int64_t tc) {
  const int64_t width = ((cout + count - 1) / count + tc - 1) / tc * tc;
  const int64_t last = cout - (cout - 1) / width * width;
  return (cout + width - 1) / width == count && 4 * last >= 3 * width ? width : 0;
}

// Groups joined into one block-diagonal group: the fewest that make a vector of output channels
// (a divisor of the groups; all of them where none does), 1 where a group fills one already.
int64_t joined_groups(const NhwcConv& c, int64_t vector) {
  const int64_t cout_g = c.cout / c.groups;
  if (cout_g >= vector) return 1;
  for (int64_t join = 2; join < c.groups; ++join) {
    if (c.groups % join == 0 && join * cout_g >= vector) return join;
  }
  return c.groups;
}

// The panels grouped_tiles reads for groups joined `join` at a time: group j of joined group G
// at rows [j * cin_g, (j + 1) * cin_g) and columns [j * cout_g, (j + 1) * cout_g) of G's
// [taps][join * cin_g][join * cout_g] panel, zeros elsewhere.
void pack_grouped(const NhwcConv& c, int64_t join, float* panels) {
  const int64_t cin_g = c.cin / c.groups, cout_g = c.cout / c.groups, taps = c.taps();
  const int64_t gi = join * cin_g, go = join * cout_g, panel = taps * gi * go;
  std::memset(panels, 0, static_cast<size_t>(panel * (c.groups / join)) * sizeof(float));
  for (int64_t g = 0; g < c.groups; ++g) {
    float* dst = panels + g / join * panel + g % join * (cin_g * go + cout_g);
    for (int64_t r = 0; r < taps * cin_g; ++r) {
      const int64_t t = r / cin_g, k = r % cin_g;
      std::memcpy(dst + (t * gi + k) * go, c.weight + r * c.w_ld + g * cout_g - c.w_first,
                  static_cast<size_t>(cout_g) * sizeof(float));
    }
  }
}

// A grouped convolution: the weights packed into per-group panels (a constant's kept in the
// instruction's cache, packed at the first call), then pixel tiles times blocks of groups whose
// panels take about kBlockBytes, block-major, split across threads.
bool nhwc_grouped(KernelContext& ctx, const NhwcConv& c, bool parallel) {
  const ConvIsa& impl = conv_isa();
  const int64_t join = joined_groups(c, impl.vector_floats());
  NhwcConv g = c;
  g.groups = c.groups / join;
  g.w_ld = c.cout / g.groups;
  g.w_first = 0;
  const int64_t panel = c.taps() * (c.cin / g.groups) * g.w_ld;
  const size_t bytes = static_cast<size_t>(panel * g.groups) * sizeof(float);
  float* panels = nullptr;
  if (c.weight_constant != nullptr && c.weight == c.weight_constant) {
    constexpr uint64_t kGroupedPanels = 0x24;
    bool ready = false;
    panels = static_cast<float*>(ctx.instruction_cache(kept_key(c.weight_constant, kGroupedPanels), bytes, &ready));
    if (panels != nullptr && !ready) pack_grouped(c, join, panels);
  }
  const bool kept = panels != nullptr;
  const int threads = parallel_num_threads();
  const int64_t tiles = impl.tile_count(g);
  const int64_t per_block = std::max<int64_t>(1, kBlockBytes / (panel * static_cast<int64_t>(sizeof(float))));
  const int64_t block = static_cast<int64_t>(bytes) > kWholeWeightBytes ? per_block : g.groups;
  const int64_t blocks = (g.groups + block - 1) / block;
  const int64_t items = blocks * tiles;
  const int64_t parts = parallel ? std::min<int64_t>(items, threads * kPartsPerThread) : 1;
  const int64_t slots = std::min<int64_t>(parts, threads);
  const size_t per_slot = (impl.scratch_floats(g) + 15) / 16 * 16;
  const size_t own = kept ? 0 : (bytes / sizeof(float) + 15) / 16 * 16;
  float* scratch =
      static_cast<float*>(ctx.allocate_temp((own + per_slot * static_cast<size_t>(slots)) * sizeof(float), 64));
  if (scratch == nullptr) return false;
  if (!kept) {
    panels = scratch;
    pack_grouped(c, join, panels);
  }
  g.weight = panels;
  run_parts_in_slots(parts, slots, [&](int64_t t, int64_t slot) {
    float* mine = scratch + own + per_slot * static_cast<size_t>(slot);
    const int64_t end = items * (t + 1) / parts;
    for (int64_t it = items * t / parts; it < end;) {
      const int64_t b = it / tiles, tile = it % tiles;
      const int64_t run = std::min(end - it, tiles - tile);
      impl.grouped(g, tile, tile + run, b * block, std::min(g.groups, (b + 1) * block), mine);
      it += run;
    }
  });
  return true;
}

}  // namespace

bool nhwc_convolution(KernelContext& ctx, const NhwcConv& c) {
  if (nhwc_winograd_fits(c)) return nhwc_winograd(ctx, c);
  const ConvIsa& impl = conv_isa();
  const int threads = parallel_num_threads();
  const double macs = static_cast<double>(c.pixels()) * static_cast<double>(c.cout) *
                      static_cast<double>(c.taps() * c.cin_g());
  const double weight_bytes = static_cast<double>(c.taps() * c.cin_g() * c.cout) * sizeof(float);
  const bool parallel = threads > 1 && (macs >= kConvParallelMinMacs || weight_bytes >= kConvParallelMinWeightBytes);
  if (c.groups > 1) return nhwc_grouped(ctx, c, parallel);
  if (c.in_nchw != nullptr) {
    const int64_t rows = c.batch * c.oh;
    const int64_t parts = parallel ? std::min<int64_t>(rows, threads * kPartsPerThread) : 1;
    const int64_t slots = std::min<int64_t>(parts, threads);
    const size_t per_slot = (impl.stem_scratch_floats(c) + 15) / 16 * 16;
    float* scratch =
        static_cast<float*>(ctx.allocate_temp(per_slot * static_cast<size_t>(slots) * sizeof(float), 64));
    if (scratch == nullptr) return false;
    run_parts_in_slots(parts, slots, [&](int64_t t, int64_t slot) {
      impl.stem_rows(c, rows * t / parts, rows * (t + 1) / parts, scratch + per_slot * static_cast<size_t>(slot));
    });
    return true;
  }
  if (c.depthwise) {
    const int64_t rows = c.batch * c.oh;
    if (!parallel) {
      impl.depthwise(c, 0, rows);
      return true;
    }
    // Output rows, and where they are fewer than the parts the pool wants (7x7 and 14x14 maps
    // at many threads: 7 rows left 9 of 16 threads idle), rows times slices of channels. A
    // channel's sums are the same whichever slice holds it.
    const int64_t want = threads * kPartsPerThread;
    int64_t slice = c.cout;
    if (rows < want && c.cout >= 2 * kDepthwiseSliceChannels) {
      const int64_t slices = std::min((want + rows - 1) / rows, c.cout / kDepthwiseSliceChannels);
      slice = ((c.cout + slices - 1) / slices + kDepthwiseSliceChannels - 1) / kDepthwiseSliceChannels *
              kDepthwiseSliceChannels;
    }
    const int64_t slices = (c.cout + slice - 1) / slice;
    if (slices == 1) {
      parallel_for(0, rows, 1, [&](int64_t b, int64_t e) { impl.depthwise(c, b, e); });
      return true;
    }
    parallel_for(0, rows * slices, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const int64_t r = i / slices, c0 = i % slices * slice;
        impl.depthwise(channel_slice(c, c0, std::min(slice, c.cout - c0)), r, r + 1);
      }
    });
    return true;
  }
  const int64_t tiles = impl.tile_count(c);
  const int64_t row_bytes = c.taps() * c.cin * static_cast<int64_t>(sizeof(float));
  int64_t block = c.cout;
  if (row_bytes * c.cout > kWholeWeightBytes) {
    int64_t unit = std::max<int64_t>(kBlockChannels, impl.tile_channels());
    // Rows so long that a block of that many channels outgrows an L2 (a 3x3 layer of 512 input
    // channels: 590 KB at 32 channels) would leave L2 between pixel tiles and be read from L3 once
    // a tile: one tile's width of channels instead.
    if (row_bytes * unit > kL2Bytes) unit = impl.tile_channels();
    block = kBlockBytes / row_bytes / unit * unit;
    if (block < unit) block = unit;
    if (block > c.cout) block = c.cout;
  } else if (c.w_ld * static_cast<int64_t>(sizeof(float)) % kAliasingRowBytes == 0 &&
             c.cout > kAliasingBlockChannels && tiles >= kPackMinTiles && c.weight_constant != nullptr &&
             c.weight == c.weight_constant) {
    const int64_t unit = std::max<int64_t>(kBlockChannels, impl.tile_channels());
    block = kAliasingBlockChannels / unit * unit;
  }
  // Few pixel tiles (a 1x1 layer at 7x7: 5-9 tiles) leave threads idle at many threads: split
  // the output channels too. The block width then follows the thread count, so kept panels
  // are keyed by the split as well (`split`; 0 where the width follows from the shape alone).
  const int64_t want = threads * kPartsPerThread;
  const int64_t unit_channels = std::max<int64_t>(kBlockChannels, impl.tile_channels());
  int64_t split = 0;
  bool by_weight = false;
  if (parallel && block == c.cout && tiles < want && c.cout >= 2 * unit_channels) {
    split = std::min({(want + tiles - 1) / tiles, c.cout / unit_channels, int64_t{255}});
    block = ((c.cout + split - 1) / split + unit_channels - 1) / unit_channels * unit_channels;
  } else if (parallel && block == c.cout && tiles < kPackMinTiles && row_bytes * c.cout >= kSplitWeightBytes &&
             c.cout >= threads * impl.tile_channels()) {
    // Tiles enough for the threads but few (a 1x1 layer at 7x7 at two threads), over a weight
    // of L2's order: split by tiles, every thread read all of it for its few tiles. One block of
    // channels a thread reads it once (MobileNetV3-small's 576 -> 96: 1.24x -> 1.37-1.5x at two).
    // Only where whole tile widths share the channels out about evenly (40 channels in 16-wide
    // tiles would give one thread four fifths).
    if (const int64_t width = even_block_width(c.cout, threads, impl.tile_channels())) {
      split = threads;
      block = width;
      by_weight = true;
    }
  }
  bool even = false;
  if (parallel && block < c.cout && tiles < kPackMinTiles) {
    // Blocked weights over few tiles take whole blocks a part (below), so blocks that do not
    // share out evenly leave threads idle (EfficientNet-B0's 192 -> 1152 at 7x7 at two threads:
    // blocks of 320, 320, 320 and 192 channels, 640 against 512 a thread): as many blocks again,
    // a multiple of the threads, of whole tile widths, where that evens them out.
    const int64_t count = ((c.cout + block - 1) / block + threads - 1) / threads * threads;
    const int64_t width = count <= 255 ? even_block_width(c.cout, count, impl.tile_channels()) : 0;
    if (width > 0) {
      split = count;
      block = width;
      even = true;
    }
  }
  const int64_t blocks = (c.cout + block - 1) / block;
  const int64_t items = blocks * tiles;  // block-major: a worker's range stays in few blocks
  // With blocks enough to share out, parts are whole blocks: a part that began or ended inside a
  // block packed that block's panel again (ResNet18's 3x3 layers from 28x28 on: 6-11 blocks of
  // 48 channels in 8 parts, so 12-16 panel copies at two threads against 6-11 at one).
  const bool whole_blocks = parallel && (by_weight || even || blocks >= 2 * static_cast<int64_t>(threads));
  const int64_t parts = !parallel ? 1 : std::min(whole_blocks ? blocks : items, threads * kPartsPerThread);
  const int64_t slots = std::min<int64_t>(parts, threads);
  const int64_t unit = whole_blocks ? tiles : 1;  // items per unit of the split
  const int64_t units = items / unit;
  // A blocked worker copies its block's weight columns into a contiguous panel first: read in
  // place, each row of a block is a short run a whole weight row apart, and every tile would
  // walk all those rows (one page or two per few rows) again. Over few tiles (7x7 pixels) the
  // copy costs more than it saves: it reads and writes every weight once more, and EfficientNet-
  // B0's 1x1 layers at 7x7 (0.5-1.6 MiB of weights each) spent 7% of the model in it.
  const int64_t rows = c.taps() * c.cin;
  // Under AVX2 a tile's chunk of channels is half a cache line of each row, and the unpacked
  // rows cost more than the copy (ResNet18's last 3x3 layer 3.1 -> 5.0 ms): it keeps packing,
  // as do weights spread over more pages than the TLB holds well (ResNet18's 9 MiB 3x3).
  const bool pack = blocks > 1 && (tiles >= kPackMinTiles || impl.tile_channels() < 32 ||
                                   row_bytes * c.w_ld > kPackMinWeightBytes);
  // A constant weight's panels, all blocks back to back, are kept across runs in the
  // instruction's cache: packed once per program and instruction set (the key holds the level,
  // since the block width follows it), then read in place. nullptr: packed per call as below.
  const float* kept = pack ? kept_panels(ctx, c, rows, block, split, by_weight) : nullptr;
  const size_t panel = pack && kept == nullptr ? static_cast<size_t>(rows * block + 15) / 16 * 16 : 0;
  const size_t per_slot = (impl.scratch_floats(c) + 15) / 16 * 16 + panel;
  float* scratch = static_cast<float*>(ctx.allocate_temp(per_slot * static_cast<size_t>(slots) * sizeof(float), 64));
  if (scratch == nullptr) return false;
  auto run_part = [&](int64_t t, int64_t slot) {
    float* mine = scratch + per_slot * static_cast<size_t>(slot);
    float* packed = mine + (per_slot - panel);
    int64_t packed_block = -1;
    NhwcConv cb = c;
    const int64_t end = units * (t + 1) / parts * unit;
    for (int64_t it = units * t / parts * unit; it < end;) {
      const int64_t b = it / tiles, tile = it % tiles;
      const int64_t run = (end - it < tiles - tile) ? end - it : tiles - tile;
      const int64_t oc_begin = b * block, oc_end = (b + 1) * block < c.cout ? (b + 1) * block : c.cout;
      if (pack && packed_block != b) {
        const int64_t width = oc_end - oc_begin;
        if (kept != nullptr) {
          cb.weight = kept + rows * oc_begin;
        } else {
          pack_panel(c, rows, oc_begin, width, packed);
          cb.weight = packed;
        }
        cb.w_ld = width;
        cb.w_first = oc_begin;
        packed_block = b;
      }
      impl.tiles(cb, tile, tile + run, oc_begin, oc_end, mine);
      it += run;
    }
  };
  run_parts_in_slots(parts, slots, run_part);
  return true;
}

}  // namespace kernels
}  // namespace etrt
