// Kernels that assemble a tensor from others or from scalars: embedding (a row gather), cat,
// arange, constant padding, repeat and advanced indexing (index.Tensor).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "light.h"
#include "util.h"

namespace etrt {
namespace kernels {
namespace {

// `n` elements of `es` bytes at `dst`, each a copy of `value`.
void fill_elements(char* dst, const char* value, size_t es, int64_t n) {
  auto fill = [&](auto word) {
    std::memcpy(&word, value, sizeof word);
    auto* d = reinterpret_cast<decltype(word)*>(dst);
    for (int64_t i = 0; i < n; ++i) d[i] = word;
  };
  switch (es) {
    case 1: std::memset(dst, value[0], static_cast<size_t>(n)); return;
    case 2: fill(uint16_t{}); return;
    case 4: fill(uint32_t{}); return;
    case 8: fill(uint64_t{}); return;
    default:
      for (int64_t i = 0; i < n; ++i) std::memcpy(dst + static_cast<size_t>(i) * es, value, es);
  }
}

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

// Whether `t` is rows of runs along `d`: d innermost (stride 1) and the other dimensions dense
// in `order` (outermost first), in units of t's own size along d. Then row r (the other
// dimensions' index in that order) is t.size(d) elements at r * t.size(d). Dimensions of size 1
// may have any stride.
bool rows_of_runs(const Tensor& t, int d, const int* order, int n) {
  if (t.size(d) != 1 && t.stride(d) != 1) return false;
  int64_t expect = t.size(d);
  for (int k = n - 1; k >= 0; --k) {
    const int dim = order[k];
    if (t.size(dim) != 1 && t.stride(dim) != expect) return false;
    expect *= t.size(dim);
  }
  return true;
}

// cat along `d` where the output and every input are rows of runs along d in the same order
// (channels-last tensors joined along channels: SqueezeNet's fire modules, DenseNet's blocks):
// one loop over the rows copies each input's run into place, split across threads by rows,
// where copying input after input walks the output once per input, a parallel loop each.
bool cat_rows(const Tensor& out, Span<Value* const> list, int d) {
  const int nd = out.dim();
  int order[kMaxDims];
  int n = 0;
  for (int k = 0; k < nd; ++k) {
    if (k != d) order[n++] = k;
  }
  // The output's order of the other dimensions, outermost (largest stride) first.
  for (int i = 1; i < n; ++i) {
    for (int j = i; j > 0 && out.stride(order[j]) > out.stride(order[j - 1]); --j) std::swap(order[j], order[j - 1]);
  }
  if (!rows_of_runs(out, d, order, n)) return false;
  for (size_t i = 0; i < list.size(); ++i) {
    const Tensor& t = list[i]->to_tensor();
    if (t.numel() != 0 && !rows_of_runs(t, d, order, n)) return false;
  }
  const size_t es = out.element_size();
  const int64_t width = out.size(d);
  const int64_t rows = width == 0 ? 0 : out.numel() / width;
  char* base = static_cast<char*>(out.data());
  parallel_chunks(rows, width, [&](int64_t r0, int64_t r1) {
    int64_t offset = 0;
    for (size_t i = 0; i < list.size(); ++i) {
      const Tensor& t = list[i]->to_tensor();
      if (t.numel() == 0) continue;
      const int64_t run = t.size(d);
      const auto* src = static_cast<const char*>(t.data());
      for (int64_t r = r0; r < r1; ++r) {
        std::memcpy(base + static_cast<size_t>(r * width + offset) * es, src + static_cast<size_t>(r * run) * es,
                    static_cast<size_t>(run) * es);
      }
      offset += run;
    }
  });
  return true;
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
  int64_t bad_index = 0;
  const bool ok = for_each_index_row(*indices, *out, width, [&](int64_t idx, char* dst) {
    if (idx < 0 || idx >= rows) {
      bad_index = idx;
      return false;
    }
    const char* src = w + idx * w_rs;
    if (w_cs == static_cast<int64_t>(es)) {
      std::memcpy(dst, src, row_bytes);
    } else {
      for (int64_t j = 0; j < width; ++j) std::memcpy(dst + j * es, src + j * w_cs, es);
    }
    return true;
  });
  if (!ok) {
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
  if (first == nullptr) {  // nothing but skipped inputs: ATen returns one of them, 1-D and empty
    if (list.empty()) {
      fail(ctx, op, "needs at least one tensor");
      return;
    }
    const int64_t none[1] = {0};
    output_arg(ctx, op, args, 2, list[0]->to_tensor().dtype(), Span<const int64_t>(none, 1));
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
    if (!checked::add(shape.sizes[d], t.size(d), &shape.sizes[d]) || shape.sizes[d] > checked::kMaxElements) {
      fail(ctx, op, "the inputs have more than " + std::to_string(checked::kMaxElements) + " rows along dimension " +
                        std::to_string(d));
      return;
    }
  }
  Tensor* out = strided_output_arg(ctx, op, args, 2, first->dtype(), shape.span());
  if (out == nullptr) return;
  if (cat_rows(*out, list, d)) return;
  const size_t es = out->element_size();
  char* base = static_cast<char*>(out->data());
  int64_t offset = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const Tensor& t = list[i]->to_tensor();
    if (t.numel() == 0) continue;  // nothing to copy (and ATen's skipped 1-D empties)
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
  const double count = std::ceil((end - start) / step);
  if (step == 0.0 || !std::isfinite(start) || !std::isfinite(end) || !(count >= 0.0) ||
      count > static_cast<double>(checked::kMaxElements)) {
    fail(ctx, op, "invalid range: start " + std::to_string(start) + ", end " + std::to_string(end) +
                      ", step " + std::to_string(step));
    return;
  }
  ScalarType dtype;
  if (!planned_dtype(ctx, op, args, 7, &dtype)) return;
  const int64_t n = static_cast<int64_t>(count);  // in [0, kMaxElements]
  const int64_t sizes[1] = {n};
  Tensor* out = output_arg(ctx, op, args, 7, dtype, Span<const int64_t>(sizes, 1));
  if (out == nullptr) return;
  const bool integral = args[0]->is_int() && args[1]->is_int() && args[2]->is_int();
  // ATen's accumulate types: int64 for every integer dtype (start and step truncated first,
  // each value then cast, wrapping as a C cast), double for float and double, float for the
  // 16-bit floats.
  if (integral_type(dtype) && dtype != ScalarType::Bool) {
    const int64_t s0 = integral ? args[0]->to_int() : checked::to_int<int64_t>(start);
    const int64_t st = integral ? args[2]->to_int() : checked::to_int<int64_t>(step);
    if (st == 0) {
      fail(ctx, op, "step must be nonzero (" + std::to_string(step) + " truncated to an integer)");
      return;
    }
    char* o = static_cast<char*>(out->data());
    const size_t es = out->element_size();
    for (int64_t i = 0; i < n; ++i) {
      store_scalar(o + static_cast<size_t>(i) * es, dtype, 0.0, checked::wrap_add(s0, checked::wrap_mul(st, i)), true);
    }
    return;
  }
  switch (dtype) {
    case ScalarType::Float: {
      float* o = out->data_as<float>();
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<float>(start + step * static_cast<double>(i));
      return;
    }
    case ScalarType::Double: {
      double* o = out->data_as<double>();
      for (int64_t i = 0; i < n; ++i) o[i] = start + step * static_cast<double>(i);
      return;
    }
    case ScalarType::Half:
    case ScalarType::BFloat16: {
      const float s0 = static_cast<float>(start), st = static_cast<float>(step);
      char* o = static_cast<char*>(out->data());
      for (int64_t i = 0; i < n; ++i) {
        store_scalar(o + static_cast<size_t>(i) * 2, dtype, s0 + st * static_cast<float>(i), 0, false);
      }
      return;
    }
    default: break;
  }
  fail(ctx, op, std::string("unsupported dtype ") + to_string(dtype));
}

void op_constant_pad_nd(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::constant_pad_nd";
  if (!check_nargs(ctx, op, args, 4)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  Span<const int64_t> pad;
  double value = 0.0;
  if (self == nullptr || !check_has_data(ctx, op, *self, "self") || !int_list_arg(ctx, op, args, 1, "pad", &pad) ||
      !scalar_arg(ctx, op, args, 2, "value", &value)) {
    return;
  }
  const int nd = self->dim();
  if (pad.size() % 2 != 0 || static_cast<int>(pad.size() / 2) > nd) {
    fail(ctx, op, "'pad' " + shape_string(pad) + " must hold a (before, after) pair per trailing dimension");
    return;
  }
  // pad lists pairs from the last dimension backwards; negative amounts crop.
  int64_t before[kMaxDims] = {}, after[kMaxDims] = {};
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    before[nd - 1 - i] = pad[2 * i];
    after[nd - 1 - i] = pad[2 * i + 1];
    // Bounded like any size, so the sums below stay far inside int64.
    if (std::abs(static_cast<double>(pad[2 * i])) > static_cast<double>(checked::kMaxElements) ||
        std::abs(static_cast<double>(pad[2 * i + 1])) > static_cast<double>(checked::kMaxElements)) {
      fail(ctx, op, "padding " + shape_string(pad) + " is larger than any tensor may be");
      return;
    }
  }
  Shape shape = shape_of(*self);
  Tensor src = *self;
  int64_t src_off = 0;
  int64_t src_sizes[kMaxDims];
  for (int d = 0; d < nd; ++d) {
    shape.sizes[d] = self->size(d) + before[d] + after[d];
    if (shape.sizes[d] < 0 || shape.sizes[d] > checked::kMaxElements) {
      fail(ctx, op, "padding " + shape_string(pad) + " leaves a negative or too large size for input " +
                        shape_string(self->sizes()));
      return;
    }
    const int64_t crop_lo = before[d] < 0 ? -before[d] : 0, crop_hi = after[d] < 0 ? -after[d] : 0;
    src_sizes[d] = self->size(d) - crop_lo - crop_hi;
    if (src_sizes[d] < 0) src_sizes[d] = 0;
    src_off += crop_lo * self->stride(d);
  }
  // Contiguous, or channels-last where the exporter keeps a channels-last input's layout (the
  // copy then moves whole pixels; into a contiguous output it went element by element).
  Tensor* out = strided_output_arg(ctx, op, args, 3, self->dtype(), shape.span());
  if (out == nullptr) return;
  if (!out->is_contiguous() && !channels_last_dense(*out)) {
    fail(ctx, op, "the output must be contiguous or channels-last");
    return;
  }
  const size_t es = out->element_size();
  // Fill with the value (every element: the output is dense), then copy what survives.
  const int64_t n = out->numel();
  char* o = static_cast<char*>(out->data());
  char fill[8];
  store_scalar(fill, self->dtype(), value, args[2]->scalar_to_int(), !args[2]->is_double());
  fill_elements(o, fill, es, n);
  int64_t dst_off = 0;
  bool empty = false;
  for (int d = 0; d < nd; ++d) {
    dst_off += (before[d] > 0 ? before[d] : 0) * out->stride(d);
    empty = empty || src_sizes[d] == 0;
  }
  if (empty) return;
  src.set_data(static_cast<char*>(self->data()) + src_off * static_cast<int64_t>(es));
  src.set_sizes_and_strides(Span<const int64_t>(src_sizes, static_cast<size_t>(nd)), self->strides());
  copy_into(src, o + dst_off * static_cast<int64_t>(es), out->strides(), es);
}

void op_repeat(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::repeat";
  if (!check_nargs(ctx, op, args, 3)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  Span<const int64_t> repeats;
  if (self == nullptr || !check_has_data(ctx, op, *self, "self") ||
      !int_list_arg(ctx, op, args, 1, "repeats", &repeats)) {
    return;
  }
  const int nd = static_cast<int>(repeats.size());
  if (nd < self->dim() || nd > kMaxDims) {
    fail(ctx, op, "'repeats' " + shape_string(repeats) + " needs at least as many entries as self has dimensions (" +
                      std::to_string(self->dim()) + ")");
    return;
  }
  // self viewed with leading 1s to nd dimensions; the output tiles it repeats[d] times per d.
  int64_t in_sizes[kMaxDims], in_strides[kMaxDims];
  Shape shape;
  shape.dim = nd;
  int64_t tiles = 1;
  for (int d = 0; d < nd; ++d) {
    const int sd = d - (nd - self->dim());
    in_sizes[d] = sd >= 0 ? self->size(sd) : 1;
    in_strides[d] = sd >= 0 ? self->stride(sd) : 0;
    if (repeats[d] < 0) {
      fail(ctx, op, "negative entry in 'repeats' " + shape_string(repeats));
      return;
    }
    if (!checked::mul(in_sizes[d], repeats[d], &shape.sizes[d]) || shape.sizes[d] > checked::kMaxElements ||
        !checked::mul(tiles, repeats[d], &tiles) || tiles > checked::kMaxElements) {
      fail(ctx, op, "'repeats' " + shape_string(repeats) + " makes a tensor larger than any may be");
      return;
    }
  }
  Tensor* out = output_arg(ctx, op, args, 2, self->dtype(), shape.span());
  if (out == nullptr || out->numel() == 0) return;
  Tensor src = *self;
  src.set_sizes_and_strides(Span<const int64_t>(in_sizes, static_cast<size_t>(nd)),
                            Span<const int64_t>(in_strides, static_cast<size_t>(nd)));
  const size_t es = out->element_size();
  char* o = static_cast<char*>(out->data());
  for (int64_t t = 0; t < tiles; ++t) {
    int64_t rest = t, off = 0;
    for (int d = nd - 1; d >= 0; --d) {
      off += (rest % repeats[d]) * in_sizes[d] * out->stride(d);
      rest /= repeats[d];
    }
    copy_into(src, o + off * static_cast<int64_t>(es), out->strides(), es);
  }
}

// x[i0, i1, ...] with Long/Int index tensors (None keeps a dimension): ATen's advanced indexing.
// The index tensors broadcast together; their result dimensions replace the indexed ones where
// those are adjacent, and lead the result otherwise.
void op_index_tensor(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::index.Tensor";
  if (!check_nargs(ctx, op, args, 3)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  if (self == nullptr || !check_has_data(ctx, op, *self, "self")) return;
  if (!args[1]->is_optional_tensor_list() && !args[1]->is_tensor_list()) {
    fail(ctx, op, std::string("'indices' must be a list of optional tensors, got ") + to_string(args[1]->tag()));
    return;
  }
  Span<Value* const> list = args[1]->to_tensor_list();
  const int nd = self->dim();
  if (static_cast<int>(list.size()) > nd) {
    fail(ctx, op, std::to_string(list.size()) + " indices for a tensor of " + std::to_string(nd) + " dimensions");
    return;
  }
  const Tensor* idx[kMaxDims] = {};
  Shape bshape;  // the index tensors' broadcast shape
  int first = -1, last = -1, count = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i] == nullptr || list[i]->is_none()) continue;
    if (!list[i]->is_tensor()) {
      fail(ctx, op, "index " + std::to_string(i) + " is neither a tensor nor None");
      return;
    }
    const Tensor& t = list[i]->to_tensor();
    if (t.dtype() == ScalarType::Bool || t.dtype() == ScalarType::Byte) {
      fail(ctx, op, "boolean mask indices are not supported (the result's shape depends on the data)");
      return;
    }
    if (t.dtype() != ScalarType::Long && t.dtype() != ScalarType::Int) {
      fail(ctx, op, std::string("index tensors must be Long or Int, got ") + to_string(t.dtype()));
      return;
    }
    if (!check_has_data(ctx, op, t, "indices") || !broadcast_into(ctx, op, &bshape, t.sizes())) return;
    idx[i] = &t;
    if (first < 0) first = static_cast<int>(i);
    last = static_cast<int>(i);
    ++count;
  }
  if (count == 0) {
    fail(ctx, op, "needs at least one index tensor");
    return;
  }
  const bool adjacent = last - first + 1 == count;
  // Output dims: each is either a broadcast index dim (kind -1 - k) or a kept self dim (kind d).
  Shape shape;
  int kind[kMaxDims];
  auto push = [&](int64_t size, int k) {
    if (shape.dim >= kMaxDims) return false;
    kind[shape.dim] = k;
    shape.sizes[shape.dim++] = size;
    return true;
  };
  bool ok = true;
  const int insert_at = adjacent ? first : 0;
  for (int d = 0; d < insert_at && ok; ++d) ok = push(self->size(d), d);
  for (int k = 0; k < bshape.dim && ok; ++k) ok = push(bshape.sizes[k], -1 - k);
  for (int d = insert_at; d < nd && ok; ++d) {
    if (idx[d] == nullptr) ok = push(self->size(d), d);
  }
  if (!ok) {
    fail(ctx, op, "too many dimensions");
    return;
  }
  Tensor* out = output_arg(ctx, op, args, 2, self->dtype(), shape.span());
  if (out == nullptr || out->numel() == 0) return;
  // Element strides of each index tensor over the broadcast shape (0 where broadcast).
  int64_t istride[kMaxDims][kMaxDims] = {};
  for (int d = 0; d < nd; ++d) {
    if (idx[d] == nullptr) continue;
    for (int k = 0; k < bshape.dim; ++k) {
      const int td = idx[d]->dim() - bshape.dim + k;
      istride[d][k] = td >= 0 && idx[d]->size(td) != 1 ? idx[d]->stride(td) : 0;
    }
  }
  const size_t es = out->element_size();
  const char* x = static_cast<const char*>(self->data());
  char* o = static_cast<char*>(out->data());
  // Trailing dims no index reaches, row-major in self (the output is): one run copied per
  // position of the others (Swin's relative-position table, rows of a lookup). Element by
  // element they cost tens of ns each.
  int dims = shape.dim;
  int64_t run = 1;
  while (dims > 0 && kind[dims - 1] > last && (shape.sizes[dims - 1] == 1 || self->stride(kind[dims - 1]) == run)) {
    run *= shape.sizes[--dims];
  }
  const int64_t n = out->numel() / run;
  const size_t run_bytes = static_cast<size_t>(run) * es;
  int64_t coord[kMaxDims] = {};
  for (int64_t e = 0; e < n; ++e) {
    int64_t off = 0;
    for (int od = 0; od < dims; ++od) {
      if (kind[od] >= 0) off += coord[od] * self->stride(kind[od]);
    }
    for (int d = 0; d < nd; ++d) {
      if (idx[d] == nullptr) continue;
      int64_t ioff = 0;
      for (int od = 0; od < dims; ++od) {
        if (kind[od] < 0) ioff += coord[od] * istride[d][-1 - kind[od]];
      }
      const char* ip = static_cast<const char*>(idx[d]->data()) + ioff * static_cast<int64_t>(idx[d]->element_size());
      int64_t v;
      if (idx[d]->dtype() == ScalarType::Long) {
        std::memcpy(&v, ip, 8);
      } else {
        int32_t w;
        std::memcpy(&w, ip, 4);
        v = w;
      }
      const int64_t size = self->size(d);
      if (v < -size || v >= size) {
        fail(ctx, op, "index " + std::to_string(v) + " is out of bounds for dimension " + std::to_string(d) +
                          " with size " + std::to_string(size));
        return;
      }
      off += (v < 0 ? v + size : v) * self->stride(d);
    }
    std::memcpy(o + e * static_cast<int64_t>(run_bytes), x + off * static_cast<int64_t>(es), run_bytes);
    for (int od = dims - 1; od >= 0; --od) {  // next coordinate, row-major
      if (++coord[od] < shape.sizes[od]) break;
      coord[od] = 0;
    }
  }
}

}  // namespace kernels
}  // namespace etrt
