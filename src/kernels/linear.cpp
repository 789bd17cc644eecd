// aten::addmm, aten::mm, aten::bmm on top of the strided SGEMM in gemm.h.
#include <algorithm>
#include <cstring>
#include <string>

#include "gemm.h"
#include "heavy.h"
#include "light.h"
#include "parts.h"
#include "util.h"

namespace etrt {
namespace kernels {
namespace {

// Checks a float matrix operand of `dims` dimensions with memory behind it.
bool matrix_arg(KernelContext& ctx, const char* op, Span<Value*> args, size_t i, const char* name,
                int dims, const Tensor** out) {
  const Tensor* t = tensor_arg(ctx, op, args, i, name);
  if (t == nullptr || !check_dtype(ctx, op, *t, name, ScalarType::Float) ||
      !check_has_data(ctx, op, *t, name)) {
    return false;
  }
  if (t->dim() != dims) {
    fail(ctx, op, std::string("'") + name + "' must be " + std::to_string(dims) + "-D, got shape " +
                      shape_string(t->sizes()));
    return false;
  }
  *out = t;
  return true;
}

GemmParams params_for(const Tensor& a, const Tensor& b, float* c, int64_t batch_dims) {
  GemmParams p;
  const int ia = static_cast<int>(batch_dims);
  p.m = a.size(ia);
  p.k = a.size(ia + 1);
  p.n = b.size(ia + 1);
  p.a = a.data_as<const float>();
  p.a_rs = a.stride(ia);
  p.a_cs = a.stride(ia + 1);
  p.b = b.data_as<const float>();
  p.b_rs = b.stride(ia);
  p.b_cs = b.stride(ia + 1);
  p.b_weight = b.is_read_only();  // a constant: the program's weights
  p.c = c;
  p.c_rs = p.n;
  return p;
}

bool check_inner(KernelContext& ctx, const char* op, const Tensor& a, const Tensor& b, int ia) {
  if (a.size(ia + 1) != b.size(ia)) {
    fail(ctx, op, "cannot multiply shapes " + shape_string(a.sizes()) + " and " +
                      shape_string(b.sizes()));
    return false;
  }
  return true;
}

void fail_oom(KernelContext& ctx, const char* op) {
  ctx.fail(Error(ErrorCode::OutOfMemory, std::string(op) + ": out of scratch memory"));
}

}  // namespace

void op_addmm(KernelContext& ctx, Span<Value*> args) {
  constexpr const char* op = "aten::addmm";
  if (!check_nargs(ctx, op, args, 6)) return;
  if (args[1]->is_tensor() && args[1]->to_tensor().dtype() != ScalarType::Float) return matmul_any(ctx, args, op, 2);
  const Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  const Tensor* a = nullptr;
  const Tensor* b = nullptr;
  double beta = 0.0, alpha = 0.0;
  if (self == nullptr || !matrix_arg(ctx, op, args, 1, "mat1", 2, &a) ||
      !matrix_arg(ctx, op, args, 2, "mat2", 2, &b) || !check_inner(ctx, op, *a, *b, 0) ||
      !scalar_arg(ctx, op, args, 3, "beta", &beta) || !scalar_arg(ctx, op, args, 4, "alpha", &alpha) ||
      !check_dtype(ctx, op, *self, "self", ScalarType::Float) || !check_has_data(ctx, op, *self, "self")) {
    return;
  }
  const int64_t m = a->size(0), n = b->size(1);
  const int64_t out_sizes[2] = {m, n};
  // self broadcasts to [m, n]: [n], [1, n], [m, 1], [m, n] or a scalar.
  if (self->dim() > 2 || (self->dim() >= 1 && self->size(-1) != n && self->size(-1) != 1) ||
      (self->dim() == 2 && self->size(0) != m && self->size(0) != 1)) {
    fail(ctx, op, "'self' of shape " + shape_string(self->sizes()) + " does not broadcast to " +
                      shape_string(Span<const int64_t>(out_sizes, 2)));
    return;
  }
  Tensor* out = output_arg(ctx, op, args, 5, ScalarType::Float, Span<const int64_t>(out_sizes, 2));
  if (out == nullptr) return;
  float* c = out->data_as<float>();
  GemmParams p = params_for(*a, *b, c, 0);
  p.keep_b = p.b_weight;  // one B per instruction (bmm's batches would take turns in the cache)
  p.alpha = static_cast<float>(alpha);
  p.beta = static_cast<float>(beta);
  if (beta != 0.0 && m > 0 && n > 0) {
    // C starts as the broadcast bias; the product then accumulates onto beta * C.
    const float* s = self->data_as<const float>();
    const int64_t s_cs = self->dim() >= 1 && self->size(-1) != 1 ? self->stride(-1) : 0;
    const int64_t s_rs = self->dim() == 2 && self->size(0) != 1 ? self->stride(0) : 0;
    for (int64_t i = 0; i < m; ++i) {
      float* row = c + i * n;
      const float* src = s + i * s_rs;
      if (i > 0 && s_rs == 0) {
        std::memcpy(row, c, static_cast<size_t>(n) * sizeof(float));
      } else if (s_cs == 1) {
        std::memcpy(row, src, static_cast<size_t>(n) * sizeof(float));
      } else {
        for (int64_t j = 0; j < n; ++j) row[j] = src[j * s_cs];
      }
    }
  }
  if (!sgemm(ctx, p)) fail_oom(ctx, op);
}

void op_mm(KernelContext& ctx, Span<Value*> args) {
  constexpr const char* op = "aten::mm";
  if (!check_nargs(ctx, op, args, 3)) return;
  if (args[0]->is_tensor() && args[0]->to_tensor().dtype() != ScalarType::Float) return matmul_any(ctx, args, op, 0);
  const Tensor* a = nullptr;
  const Tensor* b = nullptr;
  if (!matrix_arg(ctx, op, args, 0, "self", 2, &a) || !matrix_arg(ctx, op, args, 1, "mat2", 2, &b) ||
      !check_inner(ctx, op, *a, *b, 0)) {
    return;
  }
  const int64_t out_sizes[2] = {a->size(0), b->size(1)};
  Tensor* out = output_arg(ctx, op, args, 2, ScalarType::Float, Span<const int64_t>(out_sizes, 2));
  if (out == nullptr) return;
  GemmParams p = params_for(*a, *b, out->data_as<float>(), 0);
  p.keep_b = p.b_weight;
  if (!sgemm(ctx, p)) fail_oom(ctx, op);
}

void op_bmm(KernelContext& ctx, Span<Value*> args) {
  constexpr const char* op = "aten::bmm";
  if (!check_nargs(ctx, op, args, 3)) return;
  if (args[0]->is_tensor() && args[0]->to_tensor().dtype() != ScalarType::Float) return matmul_any(ctx, args, op, 1);
  const Tensor* a = nullptr;
  const Tensor* b = nullptr;
  if (!matrix_arg(ctx, op, args, 0, "self", 3, &a) || !matrix_arg(ctx, op, args, 1, "mat2", 3, &b) ||
      !check_inner(ctx, op, *a, *b, 1)) {
    return;
  }
  if (a->size(0) != b->size(0)) {
    fail(ctx, op, "batch sizes differ: " + shape_string(a->sizes()) + " and " +
                      shape_string(b->sizes()));
    return;
  }
  const int64_t batch = a->size(0);
  const int64_t out_sizes[3] = {batch, a->size(1), b->size(2)};
  Tensor* out = output_arg(ctx, op, args, 2, ScalarType::Float, Span<const int64_t>(out_sizes, 3));
  if (out == nullptr || batch == 0) return;
  GemmParams base = params_for(*a, *b, out->data_as<float>(), 1);
  if (b->stride(0) == 0 && batch > 1 && base.b_cs != 1 && base.k > 0 && base.n > 0) {
    // One matrix shared by every batch (an expanded weight, e.g. an attention in-projection over
    // a batch-first input): make it row-major once instead of once per product.
    float* copy = static_cast<float*>(ctx.allocate_temp(static_cast<size_t>(base.k * base.n) * sizeof(float), 64));
    if (copy == nullptr) return fail_oom(ctx, op);
    copy_to_row_major(base.b, base.k, base.n, base.b_rs, base.b_cs, copy);
    base.b = copy;
    base.b_rs = base.n;
    base.b_cs = 1;
  }
  const int64_t c_stride = base.m * base.n;
  const int64_t b_batch_stride = base.b == b->data_as<const float>() ? b->stride(0) : 0;
  auto at = [&](int64_t i) {
    GemmParams p = base;
    p.a += i * a->stride(0);
    p.b += i * b_batch_stride;
    p.c += i * c_stride;
    return p;
  };
  const int threads = parallel_num_threads();
  const double macs = static_cast<double>(base.m) * static_cast<double>(base.n) *
                      static_cast<double>(base.k);
  if (threads > 1 && batch < threads && macs >= 256.0 * 1024.0) {
    // Few big products: parallelise inside each.
    for (int64_t i = 0; i < batch; ++i) {
      if (!sgemm(ctx, at(i))) {
        fail_oom(ctx, op);
        return;
      }
    }
    return;
  }
  // Many products: parts run side by side, one scratch area per running part.
  const size_t per_part = (sgemm_scratch_floats(base) + 15) / 16 * 16;
  const int64_t parts = (threads > 1 && batch > 1 && macs * static_cast<double>(batch) >= 64.0 * 1024.0)
                            ? (batch < threads * kPartsPerThread ? batch : threads * kPartsPerThread)
                            : 1;
  const int64_t slots = parts < threads ? parts : threads;
  float* scratch = nullptr;
  if (per_part > 0) {
    scratch = static_cast<float*>(ctx.allocate_temp(per_part * static_cast<size_t>(slots) * sizeof(float), 64));
    if (scratch == nullptr) {
      fail_oom(ctx, op);
      return;
    }
  }
  run_parts_in_slots(parts, slots, [&](int64_t t, int64_t slot) {
    const int64_t begin = batch * t / parts, end = batch * (t + 1) / parts;
    float* s = scratch == nullptr ? nullptr : scratch + per_part * static_cast<size_t>(slot);
    for (int64_t i = begin; i < end; ++i) sgemm_serial(at(i), s);
  });
}

// transformers' mixture-of-experts fallback for torch._grouped_mm on CPU: rows of `input`,
// sorted by expert, in groups ending at the cumulative counts `offs`; group i times weight[i].
// Rows past the last offset stay zero. The bounds follow the Python slices of transformers'
// loop (input[start:end], clamped to the rows; an empty group skipped).
void op_grouped_mm_fallback(KernelContext& ctx, Span<Value*> args) {
  constexpr const char* op = "transformers::grouped_mm_fallback";
  if (!check_nargs(ctx, op, args, 4)) return;
  const Tensor* in = nullptr;
  const Tensor* w = nullptr;
  if (!matrix_arg(ctx, op, args, 0, "input", 2, &in) || !matrix_arg(ctx, op, args, 1, "weight", 3, &w)) return;
  const Tensor* offs = tensor_arg(ctx, op, args, 2, "offs");
  if (offs == nullptr || !check_has_data(ctx, op, *offs, "offs")) return;
  if ((offs->dtype() != ScalarType::Int && offs->dtype() != ScalarType::Long) || offs->dim() != 1 ||
      offs->size(0) != w->size(0)) {
    fail(ctx, op, "'offs' must be a 1-D int32 or int64 tensor of one count per expert (" +
                      std::to_string(w->size(0)) + "), got " + to_string(offs->dtype()) + " " +
                      shape_string(offs->sizes()));
    return;
  }
  if (in->size(1) != w->size(1)) {
    fail(ctx, op, "cannot multiply rows of shape " + shape_string(in->sizes()) + " by experts of shape " +
                      shape_string(w->sizes()));
    return;
  }
  const int64_t rows = in->size(0), n = w->size(2);
  const int64_t out_sizes[2] = {rows, n};
  Tensor* out = output_arg(ctx, op, args, 3, ScalarType::Float, Span<const int64_t>(out_sizes, 2));
  if (out == nullptr) return;
  float* c = out->data_as<float>();
  std::memset(c, 0, static_cast<size_t>(rows * n) * sizeof(float));
  const char* o = static_cast<const char*>(offs->data());
  int64_t start = 0;
  for (int64_t e = 0; e < w->size(0); ++e) {
    const char* at = o + e * offs->stride(0) * static_cast<int64_t>(offs->element_size());
    const int64_t end = load_int64(at, offs->dtype());
    if (end < 0) {
      fail(ctx, op, "offset " + std::to_string(end) + " of expert " + std::to_string(e) + " is negative");
      return;
    }
    if (end == start) continue;
    const int64_t lo = std::min(start, rows), hi = std::min(end, rows);
    start = end;
    if (hi <= lo || n == 0) continue;
    GemmParams p;
    p.m = hi - lo;
    p.k = in->size(1);
    p.n = n;
    p.a = in->data_as<const float>() + lo * in->stride(0);
    p.a_rs = in->stride(0);
    p.a_cs = in->stride(1);
    p.b = w->data_as<const float>() + e * w->stride(0);
    p.b_rs = w->stride(1);
    p.b_cs = w->stride(2);
    p.b_weight = w->is_read_only();
    p.c = c + lo * n;
    p.c_rs = n;
    if (!sgemm(ctx, p)) return fail_oom(ctx, op);
  }
}

}  // namespace kernels
}  // namespace etrt
