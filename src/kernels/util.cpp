#include "util.h"

#include <cstring>

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

void copy_to_contiguous(const Tensor& src, void* dst) {
  const size_t es = src.element_size();
  if (src.is_contiguous()) {
    if (src.numel() > 0) std::memcpy(dst, src.data(), src.nbytes());
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
