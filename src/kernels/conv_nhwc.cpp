#include "conv_nhwc.h"

#include <immintrin.h>

#include <cstring>

#include "etrt/runtime/parallel.h"
#include "gemm.h"

namespace etrt {
namespace kernels {

#define ETRT_ISA_FILE "conv_isa.inc"
#include "isa_clones.inc"
#undef ETRT_ISA_FILE

namespace {

struct ConvIsa {
  const char* name;
  int64_t tile;
  size_t (*scratch_floats)(const NhwcConv&);
  void (*tiles)(const NhwcConv&, int64_t, int64_t, int64_t, int64_t, float*);
  void (*depthwise)(const NhwcConv&, int64_t, int64_t);
};

const ConvIsa kIsas[] = {
    {"avx512", nhwc::isa_avx512::CMR, nhwc::isa_avx512::scratch_floats, nhwc::isa_avx512::conv_tiles, nhwc::isa_avx512::dw_rows},
    {"avx2", nhwc::isa_avx2::CMR, nhwc::isa_avx2::scratch_floats, nhwc::isa_avx2::conv_tiles, nhwc::isa_avx2::dw_rows},
    {"sse2", nhwc::isa_sse2::CMR, nhwc::isa_sse2::scratch_floats, nhwc::isa_sse2::conv_tiles, nhwc::isa_sse2::dw_rows},
};

// The instruction set the GEMM uses (detected once, or forced by a test): one choice for all.
const ConvIsa& conv_isa() {
  const char* name = sgemm_isa();
  for (const ConvIsa& i : kIsas) {
    if (std::strcmp(i.name, name) == 0) return i;
  }
  return kIsas[2];
}

// Below this many multiply-adds a second thread costs more than it saves.
constexpr double kConvParallelMinMacs = 128.0 * 1024.0;
// Weights up to this size stay in L2 while every pixel tile passes over all output channels;
// larger ones are split into blocks of output channels of about kBlockBytes each.
constexpr int64_t kWholeWeightBytes = 512 * 1024;
constexpr int64_t kBlockBytes = 256 * 1024;
constexpr int64_t kBlockChannels = 32;  // a multiple of every instruction set's tile width

}  // namespace

int64_t nhwc_conv_tile() { return conv_isa().tile; }

size_t nhwc_conv_scratch_floats(const NhwcConv& c) { return conv_isa().scratch_floats(c); }

void nhwc_conv_tiles(const NhwcConv& c, int64_t tile_begin, int64_t tile_end, int64_t oc_begin, int64_t oc_end,
                     float* scratch) {
  conv_isa().tiles(c, tile_begin, tile_end, oc_begin, oc_end, scratch);
}

void nhwc_depthwise_rows(const NhwcConv& c, int64_t row_begin, int64_t row_end) {
  conv_isa().depthwise(c, row_begin, row_end);
}

bool nhwc_convolution(KernelContext& ctx, const NhwcConv& c) {
  const ConvIsa& impl = conv_isa();
  const int threads = parallel_num_threads();
  const double macs = static_cast<double>(c.pixels()) * static_cast<double>(c.cout) *
                      static_cast<double>(c.taps() * c.cin_g());
  const bool parallel = threads > 1 && macs >= kConvParallelMinMacs;
  if (c.depthwise) {
    const int64_t rows = c.batch * c.oh;
    if (!parallel) {
      impl.depthwise(c, 0, rows);
      return true;
    }
    parallel_for(0, rows, 1, [&](int64_t b, int64_t e) { impl.depthwise(c, b, e); });
    return true;
  }
  const int64_t tiles = (c.pixels() + impl.tile - 1) / impl.tile;
  const int64_t row_bytes = c.taps() * c.cin * static_cast<int64_t>(sizeof(float));
  int64_t block = c.cout;
  if (row_bytes * c.cout > kWholeWeightBytes) {
    block = kBlockBytes / row_bytes / kBlockChannels * kBlockChannels;
    if (block < kBlockChannels) block = kBlockChannels;
    if (block > c.cout) block = c.cout;
  }
  const int64_t blocks = (c.cout + block - 1) / block;
  const int64_t items = blocks * tiles;  // block-major: a worker's range stays in few blocks
  const int64_t parts = parallel ? (items < threads ? items : threads) : 1;
  const size_t per_part = (impl.scratch_floats(c) + 15) / 16 * 16;
  float* scratch = static_cast<float*>(ctx.allocate_temp(per_part * static_cast<size_t>(parts) * sizeof(float), 64));
  if (scratch == nullptr) return false;
  auto run_part = [&](int64_t t) {
    float* mine = scratch + per_part * static_cast<size_t>(t);
    const int64_t end = items * (t + 1) / parts;
    for (int64_t it = items * t / parts; it < end;) {
      const int64_t b = it / tiles, tile = it % tiles;
      const int64_t run = (end - it < tiles - tile) ? end - it : tiles - tile;
      const int64_t oc_end = (b + 1) * block < c.cout ? (b + 1) * block : c.cout;
      impl.tiles(c, tile, tile + run, b * block, oc_end, mine);
      it += run;
    }
  };
  if (parts == 1) {
    run_part(0);
    return true;
  }
  parallel_for(0, parts, 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) run_part(t);
  });
  return true;
}

}  // namespace kernels
}  // namespace etrt
