// Kernels that assemble a tensor from others or from scalars: embedding (a row gather), cat and
// arange.
#include <cmath>
#include <cstring>
#include <string>

#include "light.h"
#include "util.h"

namespace etrt {
namespace kernels {
namespace {

// Copies `src` (any strides) into the region of `dst_base` described by `sizes` and the
// destination's strides (elements), element size `es`.
void copy_into(const Tensor& src, char* dst_base, Span<const int64_t> dst_strides, size_t es) {
  Tensor dst = src;  // same sizes and dtype, destination memory and strides
  dst.set_data(dst_base);
  dst.set_sizes_and_strides(src.sizes(), dst_strides);
  const Tensor* ops[2] = {&dst, &src};
  run_loop(make_loop(src.sizes(), ops), [&](char* const* p, const int64_t* st, int64_t n) {
    if (st[0] == static_cast<int64_t>(es) && st[1] == static_cast<int64_t>(es)) {
      std::memcpy(p[0], p[1], static_cast<size_t>(n) * es);
      return;
    }
    for (int64_t i = 0; i < n; ++i) std::memcpy(p[0] + i * st[0], p[1] + i * st[1], es);
  });
}

}  // namespace

void op_embedding(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::embedding";
  if (!check_nargs(ctx, op, args, 6)) return;
  Tensor* weight = tensor_arg(ctx, op, args, 0, "weight");
  Tensor* indices = weight ? tensor_arg(ctx, op, args, 1, "indices") : nullptr;
  if (indices == nullptr || !check_has_data(ctx, op, *weight, "weight") ||
      !check_has_data(ctx, op, *indices, "indices")) {
    return;
  }
  if (weight->dim() != 2) {
    fail(ctx, op, "'weight' must be 2-D, got shape " + shape_string(weight->sizes()));
    return;
  }
  if (indices->dtype() != ScalarType::Long && indices->dtype() != ScalarType::Int) {
    fail(ctx, op, std::string("'indices' must be Long or Int, got ") + to_string(indices->dtype()));
    return;
  }
  if (indices->dim() + 1 > kMaxDims) {
    fail(ctx, op, "too many dimensions");
    return;
  }
  Shape shape = shape_of(*indices);
  shape.sizes[shape.dim++] = weight->size(1);
  Tensor* out = output_arg(ctx, op, args, 5, weight->dtype(), shape.span());
  if (out == nullptr) return;
  const int64_t rows = weight->size(0), width = weight->size(1);
  const size_t es = weight->element_size();
  const size_t row_bytes = static_cast<size_t>(width) * es;
  const char* w = static_cast<const char*>(weight->data());
  const int64_t w_rs = weight->stride(0) * static_cast<int64_t>(es);
  const int64_t w_cs = weight->stride(1) * static_cast<int64_t>(es);
  char* o = static_cast<char*>(out->data());
  const bool is_long = indices->dtype() == ScalarType::Long;
  int64_t n = 0;  // indices read so far, in the output's (contiguous) order
  const Tensor* ops[1] = {indices};
  bool bad = false;
  int64_t bad_index = 0;
  run_loop(make_loop(indices->sizes(), ops), [&](char* const* p, const int64_t* st, int64_t count) {
    for (int64_t i = 0; i < count && !bad; ++i, ++n) {
      int64_t idx;
      if (is_long) {
        std::memcpy(&idx, p[0] + i * st[0], 8);
      } else {
        int32_t v;
        std::memcpy(&v, p[0] + i * st[0], 4);
        idx = v;
      }
      if (idx < 0 || idx >= rows) {
        bad = true;
        bad_index = idx;
        return;
      }
      const char* src = w + idx * w_rs;
      char* dst = o + static_cast<size_t>(n) * row_bytes;
      if (w_cs == static_cast<int64_t>(es)) {
        std::memcpy(dst, src, row_bytes);
      } else {
        for (int64_t j = 0; j < width; ++j) std::memcpy(dst + j * es, src + j * w_cs, es);
      }
    }
  }, /*parallel=*/false);
  if (bad) {
    fail(ctx, op, "index " + std::to_string(bad_index) + " is out of range for an embedding of " +
                      std::to_string(rows) + " rows");
  }
}

void op_cat(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::cat";
  if (!check_nargs(ctx, op, args, 3)) return;
  if (!args[0]->is_tensor_list()) {
    fail(ctx, op, std::string("'tensors' must be a tensor list, got ") + to_string(args[0]->tag()));
    return;
  }
  Span<Value* const> list = args[0]->to_tensor_list();
  int64_t dim = 0;
  if (!int_arg(ctx, op, args, 1, "dim", &dim)) return;
  // ATen skips 1-D empty tensors (a legacy rule); every other input shapes the result.
  const Tensor* first = nullptr;
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i] == nullptr || !list[i]->is_tensor()) {
      fail(ctx, op, "element " + std::to_string(i) + " of 'tensors' is not a tensor");
      return;
    }
    const Tensor& t = list[i]->to_tensor();
    if (!(t.dim() == 1 && t.numel() == 0) && first == nullptr) first = &t;
  }
  if (first == nullptr) {
    fail(ctx, op, "needs at least one non-empty tensor");
    return;
  }
  if (!wrap_dim(ctx, op, dim, first->dim(), &dim)) return;
  const int d = static_cast<int>(dim);
  Shape shape = shape_of(*first);
  shape.sizes[d] = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const Tensor& t = list[i]->to_tensor();
    if (t.dim() == 1 && t.numel() == 0) continue;
    bool ok = t.dim() == first->dim() && t.dtype() == first->dtype();
    for (int k = 0; ok && k < t.dim(); ++k) ok = k == d || t.size(k) == first->size(k);
    if (!ok) {
      fail(ctx, op, "tensor " + std::to_string(i) + " (" + to_string(t.dtype()) + " " +
                        shape_string(t.sizes()) + ") does not match tensor 0 (" +
                        to_string(first->dtype()) + " " + shape_string(first->sizes()) +
                        ") outside dimension " + std::to_string(d));
      return;
    }
    if (!check_has_data(ctx, op, t, "tensors")) return;
    shape.sizes[d] += t.size(d);
  }
  Tensor* out = output_arg(ctx, op, args, 2, first->dtype(), shape.span());
  if (out == nullptr) return;
  const size_t es = out->element_size();
  char* base = static_cast<char*>(out->data());
  int64_t offset = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const Tensor& t = list[i]->to_tensor();
    if ((t.dim() == 1 && t.numel() == 0) || t.numel() == 0) continue;
    copy_into(t, base + static_cast<size_t>(offset * out->stride(d)) * es, out->strides(), es);
    offset += t.size(d);
  }
}

void op_arange_start_step(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::arange.start_step";
  if (!check_nargs(ctx, op, args, 8)) return;
  double start = 0.0, end = 0.0, step = 0.0;
  if (!scalar_arg(ctx, op, args, 0, "start", &start) || !scalar_arg(ctx, op, args, 1, "end", &end) ||
      !scalar_arg(ctx, op, args, 2, "step", &step)) {
    return;
  }
  if (step == 0.0 || !std::isfinite(start) || !std::isfinite(end) || (end - start) / step < 0.0) {
    fail(ctx, op, "invalid range: start " + std::to_string(start) + ", end " + std::to_string(end) +
                      ", step " + std::to_string(step));
    return;
  }
  if (!args[7]->is_tensor()) {
    fail(ctx, op, "'out' must be a tensor");
    return;
  }
  const ScalarType dtype = args[7]->to_tensor().dtype();
  const int64_t n = static_cast<int64_t>(std::ceil((end - start) / step));
  const int64_t sizes[1] = {n};
  Tensor* out = output_arg(ctx, op, args, 7, dtype, Span<const int64_t>(sizes, 1));
  if (out == nullptr) return;
  const bool integral = args[0]->is_int() && args[1]->is_int() && args[2]->is_int();
  switch (dtype) {
    case ScalarType::Long: {
      int64_t* o = out->data_as<int64_t>();
      const int64_t s0 = integral ? args[0]->to_int() : static_cast<int64_t>(start);
      const int64_t st = integral ? args[2]->to_int() : static_cast<int64_t>(step);
      for (int64_t i = 0; i < n; ++i) o[i] = s0 + st * i;
      return;
    }
    case ScalarType::Int: {
      int32_t* o = out->data_as<int32_t>();
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<int32_t>(start + step * static_cast<double>(i));
      return;
    }
    case ScalarType::Float: {  // ATen accumulates in double, then rounds each element
      float* o = out->data_as<float>();
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<float>(start + step * static_cast<double>(i));
      return;
    }
    default: break;
  }
  fail(ctx, op, std::string("unsupported dtype ") + to_string(dtype));
}

}  // namespace kernels
}  // namespace etrt
