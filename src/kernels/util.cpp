#include "util.h"

#include <algorithm>
#include <cstring>

#include "common/layout.h"
#include "gemm.h"

namespace etrt {
namespace kernels {
namespace {

template <typename T>
void strided_copy(char* dst, int64_t ds, const char* src, int64_t ss, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, src + i * ss, sizeof(T));
    std::memcpy(dst + i * ds, &v, sizeof(T));
  }
}

}  // namespace

// Which dimensions a reduction removes: `dims` (wrapped, each once), or all when empty.
bool reduced_dims(KernelContext& ctx, const char* op, Span<const int64_t> dims, int nd, bool* reduced) {
  for (int64_t d : dims) {
    int64_t w = 0;
    if (!wrap_dim(ctx, op, d, nd, &w)) return false;
    if (nd > 0 && reduced[w]) {
      fail(ctx, op, "dimension " + std::to_string(d) + " appears twice in 'dim'");
      return false;
    }
    if (nd > 0) reduced[w] = true;
  }
  if (dims.empty()) {
    for (int i = 0; i < nd; ++i) reduced[i] = true;
  }
  return true;
}

// A reduction's shapes: `keep` has 1 at each reduced dimension, `out` drops them unless keepdim;
// `count` is how many elements each result reduces. False after failing the call.
bool reduction_shapes(KernelContext& ctx, const char* op, const Tensor& self, Span<const int64_t> dims,
                      bool keepdim, Shape* keep, Shape* out, int64_t* count) {
  bool reduced[kMaxDims] = {};
  if (!reduced_dims(ctx, op, dims, self.dim(), reduced)) return false;
  keep->dim = self.dim();
  *count = 1;
  for (int i = 0; i < self.dim(); ++i) {
    keep->sizes[i] = reduced[i] ? 1 : self.size(i);
    if (reduced[i]) *count *= self.size(i);
    if (!reduced[i] || keepdim) out->sizes[out->dim++] = keep->sizes[i];
  }
  return true;
}

void copy_to_contiguous(const Tensor& src, void* dst) {
  const size_t es = src.element_size();
  if (src.is_contiguous()) {
    if (src.numel() > 0) std::memcpy(dst, src.data(), src.nbytes());
    return;
  }
  if (es == 4 && layout::channels_last_dense(src)) {
    // NHWC -> NCHW: each image is a [pixels, channels] matrix transposed in 16 x 16 tiles; the
    // element loop below reads one float per cache line (8x slower at 64 x 64 x 21). Threads
    // take blocks of 16 channels (a network's last map before its classifier, 512 x 13 x 13,
    // was a serial copy between parallel layers).
    const int64_t c = src.size(1), hw = src.size(2) * src.size(3), blocks = (c + 15) / 16;
    const float* s = src.data_as<const float>();
    float* d = static_cast<float*>(dst);
    for (int64_t n = 0; n < src.size(0); ++n) {
      const float* sn = s + n * src.stride(0);
      float* dn = d + n * c * hw;
      parallel_chunks(blocks, 16 * hw, [&](int64_t b0, int64_t b1) {
        const int64_t c0 = b0 * 16, c1 = std::min(c, b1 * 16);
        copy_to_row_major(sn + c0, c1 - c0, hw, 1, c, dn + c0 * hw);
      });
    }
    return;
  }
  Tensor out(dst, src.dtype(), src.sizes());
  const Tensor* ops[2] = {&out, &src};
  Loop<2> loop = make_loop(src.sizes(), ops);
  const int64_t e = static_cast<int64_t>(es);
  run_loop(loop, [&](char* const* p, const int64_t* s, int64_t n) {
    if (s[0] == e && s[1] == e) {
      std::memcpy(p[0], p[1], static_cast<size_t>(n) * es);
      return;
    }
    switch (es) {
      case 1: strided_copy<uint8_t>(p[0], s[0], p[1], s[1], n); break;
      case 2: strided_copy<uint16_t>(p[0], s[0], p[1], s[1], n); break;
      case 4: strided_copy<uint32_t>(p[0], s[0], p[1], s[1], n); break;
      default: strided_copy<uint64_t>(p[0], s[0], p[1], s[1], n); break;
    }
  });
}

const float* contiguous_f32(KernelContext& ctx, const char* op, const Tensor& t) {
  if (t.is_contiguous()) return t.data_as<const float>();
  void* buf = ctx.allocate_temp(t.nbytes() > 0 ? t.nbytes() : 1);
  if (buf == nullptr) {
    ctx.fail(Error(ErrorCode::OutOfMemory, std::string(op) + ": out of scratch memory"));
    return nullptr;
  }
  copy_to_contiguous(t, buf);
  return static_cast<const float*>(buf);
}

}  // namespace kernels
}  // namespace etrt
