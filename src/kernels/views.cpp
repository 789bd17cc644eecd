// View kernels: the output aliases the input's memory with new sizes and strides, as ATen's
// view functions compute them. Nothing is copied.
#include <string>
#include <utility>

#include "light.h"
#include "util.h"

namespace etrt {
namespace kernels {
namespace {

struct Geometry {
  int dim = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};
  int64_t offset = 0;  // in elements, from the input's data pointer

  Span<const int64_t> size_span() const { return {sizes, static_cast<size_t>(dim)}; }
  Span<const int64_t> stride_span() const { return {strides, static_cast<size_t>(dim)}; }
};

Geometry geometry_of(const Tensor& t) {
  Geometry g;
  g.dim = t.dim();
  for (int i = 0; i < g.dim; ++i) {
    g.sizes[i] = t.size(i);
    g.strides[i] = t.stride(i);
  }
  return g;
}

// Reads `self` (args[0]); nullptr after failing the call.
Tensor* view_input(KernelContext& ctx, const char* op, Span<Value*> args, size_t nargs) {
  if (!check_nargs(ctx, op, args, nargs)) return nullptr;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  if (self == nullptr || !check_has_data(ctx, op, *self, "self")) return nullptr;
  return self;
}

// Points `out` at `self`'s memory with geometry `g`. The result must have the shape the program
// planned for `out` (at most that shape, dimension by dimension, for a dynamic view; so a file
// cannot make a view larger than its tensors are allowed to be) and stay inside the memory
// `self` spans.
void set_view(KernelContext& ctx, const char* op, Value* out_value, const Tensor& self, const Geometry& g) {
  if (!out_value->is_tensor()) {
    fail(ctx, op, std::string("'out' must be a tensor, got ") + to_string(out_value->tag()));
    return;
  }
  Tensor& out = out_value->to_tensor();
  if (out.dtype() != self.dtype()) {
    fail(ctx, op, std::string("output planned as ") + to_string(out.dtype()) + " but the input is " +
                      to_string(self.dtype()));
    return;
  }
  bool fits = same_sizes(out.sizes(), g.size_span());
  if (out.is_dynamic()) {
    fits = out.dim() == g.dim;
    for (int d = 0; fits && d < g.dim; ++d) fits = g.sizes[d] <= out.size(d);
  }
  if (!fits) {
    fail(ctx, op, "the view has shape " + shape_string(g.size_span()) + " but was planned as " +
                      shape_string(out.sizes()));
    return;
  }
  int64_t self_extent = 0, view_extent = 0, end = 0;
  if (!checked::extent(self.sizes().data(), self.strides().data(), self.dim(), &self_extent) ||
      !checked::extent(g.sizes, g.strides, g.dim, &view_extent) || g.offset < 0 ||
      (view_extent > 0 && (!checked::add(g.offset, view_extent, &end) || end > self_extent))) {
    fail(ctx, op, "the view (shape " + shape_string(g.size_span()) + ", strides " + shape_string(g.stride_span()) +
                      ", offset " + std::to_string(g.offset) + ") reaches outside its input's " +
                      std::to_string(self_extent) + " elements");
    return;
  }
  Error err = out.set_sizes_and_strides(g.size_span(), g.stride_span());
  out.set_read_only(self.is_read_only());
  if (!err.ok()) {
    fail(ctx, op, err.message());
    return;
  }
  char* base = static_cast<char*>(self.data());
  const int64_t offset = view_extent > 0 ? g.offset : 0;  // an empty view may start anywhere
  out.set_data(base == nullptr ? nullptr : base + offset * static_cast<int64_t>(self.element_size()));
}

// ATen's infer_size: resolves one -1 and checks the element count.
bool infer_size(KernelContext& ctx, const char* op, Span<const int64_t> shape, int64_t numel, Geometry* g) {
  if (shape.size() > static_cast<size_t>(kMaxDims)) {
    fail(ctx, op, "too many dimensions in " + shape_string(shape));
    return false;
  }
  int64_t product = 1, nonzero = 1;
  int infer = -1;
  g->dim = static_cast<int>(shape.size());
  for (int i = 0; i < g->dim; ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) {
        fail(ctx, op, "only one dimension can be inferred in " + shape_string(shape));
        return false;
      }
      infer = i;
    } else if (shape[i] < 0) {
      fail(ctx, op, "invalid shape " + shape_string(shape));
      return false;
    } else if (shape[i] > checked::kMaxElements ||
               (shape[i] != 0 && (!checked::mul(nonzero, shape[i], &nonzero) || nonzero > checked::kMaxElements))) {
      fail(ctx, op, "shape " + shape_string(shape) + " has more than " + std::to_string(checked::kMaxElements) +
                        " elements");
      return false;
    } else {
      product *= shape[i];  // bounded by `nonzero`
    }
    g->sizes[i] = shape[i];
  }
  if (infer >= 0) {
    if (product == 0 || numel % product != 0) {
      fail(ctx, op, "shape " + shape_string(shape) + " is invalid for input of size " + std::to_string(numel));
      return false;
    }
    g->sizes[infer] = numel / product;
  } else if (product != numel) {
    fail(ctx, op, "shape " + shape_string(shape) + " is invalid for input of size " + std::to_string(numel));
    return false;
  }
  return true;
}

// ATen's computeStride: strides that let `newshape` view memory laid out as (oldshape,
// oldstride), or false when no such view exists.
bool compute_stride(Span<const int64_t> oldshape, Span<const int64_t> oldstride, Geometry* g) {
  const int64_t nnew = g->dim;
  if (oldshape.empty()) {
    for (int i = 0; i < nnew; ++i) g->strides[i] = 1;
    return true;
  }
  int64_t numel = 1;
  for (int64_t s : oldshape) numel *= s;
  if (numel == 0) {
    if (same_sizes(oldshape, g->size_span())) {
      for (int i = 0; i < nnew; ++i) g->strides[i] = oldstride[i];
      return true;
    }
    for (int64_t d = nnew - 1; d >= 0; --d) {
      g->strides[d] = d == nnew - 1 ? 1 : (g->sizes[d + 1] > 1 ? g->sizes[d + 1] : 1) * g->strides[d + 1];
    }
    return true;
  }
  int64_t view_d = nnew - 1;
  int64_t chunk_base_stride = oldstride[oldstride.size() - 1];
  int64_t tensor_numel = 1;
  int64_t view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(oldshape.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= oldshape[tensor_d];
    int64_t contiguous_stride = 0;
    if (!checked::mul(tensor_numel, chunk_base_stride, &contiguous_stride)) return false;
    if (tensor_d == 0 || (oldshape[tensor_d - 1] != 1 && oldstride[tensor_d - 1] != contiguous_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || g->sizes[view_d] == 1)) {
        if (!checked::mul(view_numel, chunk_base_stride, &g->strides[view_d]) ||
            !checked::mul(view_numel, g->sizes[view_d], &view_numel)) {
          return false;
        }
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (tensor_d > 0) {
        chunk_base_stride = oldstride[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

void view_impl(KernelContext& ctx, Span<Value*> args, const char* op) {
  Tensor* self = view_input(ctx, op, args, 3);
  if (self == nullptr) return;
  Span<const int64_t> shape;
  if (!int_list_arg(ctx, op, args, 1, "size", &shape)) return;
  Geometry g;
  if (!infer_size(ctx, op, shape, self->numel(), &g)) return;
  if (!compute_stride(self->sizes(), self->strides(), &g)) {
    fail(ctx, op, "view size " + shape_string(g.size_span()) + " is not compatible with input of size " +
                      shape_string(self->sizes()) + " and stride " + shape_string(self->strides()) +
                      " (at least one dimension spans two non-contiguous subspaces)");
    return;
  }
  set_view(ctx, op, args[2], *self, g);
}

// Removes dimension d (which must have size 1 for squeeze, any size for select).
void erase_dim(Geometry* g, int d) {
  for (int i = d; i + 1 < g->dim; ++i) {
    g->sizes[i] = g->sizes[i + 1];
    g->strides[i] = g->strides[i + 1];
  }
  --g->dim;
}

void transpose_impl(KernelContext& ctx, const char* op, Span<Value*> args, Tensor* self, int64_t d0,
                    int64_t d1, size_t out_index) {
  if (!wrap_dim(ctx, op, d0, self->dim(), &d0) || !wrap_dim(ctx, op, d1, self->dim(), &d1)) return;
  Geometry g = geometry_of(*self);
  if (g.dim > 0) {
    std::swap(g.sizes[d0], g.sizes[d1]);
    std::swap(g.strides[d0], g.strides[d1]);
  }
  set_view(ctx, op, args[out_index], *self, g);
}

}  // namespace

void op_view(KernelContext& ctx, Span<Value*> args) { view_impl(ctx, args, "aten::view"); }

void op_unsafe_view(KernelContext& ctx, Span<Value*> args) { view_impl(ctx, args, "aten::_unsafe_view"); }

void op_permute(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::permute";
  Tensor* self = view_input(ctx, op, args, 3);
  if (self == nullptr) return;
  Span<const int64_t> dims;
  if (!int_list_arg(ctx, op, args, 1, "dims", &dims)) return;
  const int nd = self->dim();
  if (static_cast<int>(dims.size()) != nd) {
    fail(ctx, op, "dims " + shape_string(dims) + " do not match a tensor of " + std::to_string(nd) + " dimensions");
    return;
  }
  Geometry g;
  g.dim = nd;
  bool seen[kMaxDims] = {};
  for (int i = 0; i < nd; ++i) {
    int64_t d = 0;
    if (!wrap_dim(ctx, op, dims[i], nd, &d)) return;
    if (seen[d]) {
      fail(ctx, op, "dims " + shape_string(dims) + " repeat a dimension");
      return;
    }
    seen[d] = true;
    g.sizes[i] = self->size(static_cast<int>(d));
    g.strides[i] = self->stride(static_cast<int>(d));
  }
  set_view(ctx, op, args[2], *self, g);
}

void op_expand(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::expand";
  Tensor* self = view_input(ctx, op, args, 4);
  if (self == nullptr) return;
  Span<const int64_t> size;
  if (!int_list_arg(ctx, op, args, 1, "size", &size)) return;
  const int nd = static_cast<int>(size.size());
  const int td = self->dim();
  if (nd < td || nd > kMaxDims) {
    fail(ctx, op, "cannot expand a tensor of shape " + shape_string(self->sizes()) + " to " + shape_string(size));
    return;
  }
  Geometry g;
  g.dim = nd;
  for (int i = nd - 1; i >= 0; --i) {
    const int d = td - (nd - i);
    int64_t sz = d >= 0 ? self->size(d) : 1;
    int64_t st = 1;
    if (d >= 0) {
      st = self->stride(d);
    } else if (i + 1 < nd && !checked::mul(g.sizes[i + 1], g.strides[i + 1], &st)) {
      fail(ctx, op, "size " + shape_string(size) + " is too large");
      return;
    }
    int64_t target = size[i];
    if (target == -1) {
      if (d < 0) {
        fail(ctx, op, "-1 is not allowed for a new leading dimension in " + shape_string(size));
        return;
      }
      target = sz;
    }
    if (target < 0) {
      fail(ctx, op, "invalid size " + shape_string(size));
      return;
    }
    if (sz != target) {
      if (sz != 1) {
        fail(ctx, op, "the expanded size " + std::to_string(target) + " must match the existing size " +
                          std::to_string(sz) + " at non-singleton dimension " + std::to_string(i) +
                          " (shape " + shape_string(self->sizes()) + " to " + shape_string(size) + ")");
        return;
      }
      sz = target;
      st = 0;
    }
    g.sizes[i] = sz;
    g.strides[i] = st;
  }
  set_view(ctx, op, args[3], *self, g);
}

void op_alias(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::alias";
  Tensor* self = view_input(ctx, op, args, 2);
  if (self == nullptr) return;
  set_view(ctx, op, args[1], *self, geometry_of(*self));
}

void op_select_int(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::select.int";
  Tensor* self = view_input(ctx, op, args, 4);
  if (self == nullptr) return;
  int64_t dim = 0, index = 0;
  if (!int_arg(ctx, op, args, 1, "dim", &dim) || !int_arg(ctx, op, args, 2, "index", &index)) return;
  if (self->dim() == 0) {
    fail(ctx, op, "cannot select from a 0-d tensor");
    return;
  }
  if (!wrap_dim(ctx, op, dim, self->dim(), &dim)) return;
  const int64_t size = self->size(static_cast<int>(dim));
  if (index < -size || index >= size) {
    fail(ctx, op, "index " + std::to_string(index) + " is out of range for dimension " + std::to_string(dim) +
                      " of size " + std::to_string(size));
    return;
  }
  if (index < 0) index += size;
  Geometry g = geometry_of(*self);
  g.offset = index * g.strides[dim];
  erase_dim(&g, static_cast<int>(dim));
  set_view(ctx, op, args[3], *self, g);
}

void op_squeeze_dims(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::squeeze.dims";
  Tensor* self = view_input(ctx, op, args, 3);
  if (self == nullptr) return;
  Span<const int64_t> dims;
  if (!int_list_arg(ctx, op, args, 1, "dims", &dims)) return;
  const int nd = self->dim();
  bool drop[kMaxDims] = {};
  for (int64_t d : dims) {
    int64_t w = 0;
    if (!wrap_dim(ctx, op, d, nd, &w)) return;
    if (nd > 0 && self->size(static_cast<int>(w)) == 1) drop[w] = true;
  }
  Geometry g = geometry_of(*self);
  for (int i = nd - 1; i >= 0; --i) {
    if (drop[i]) erase_dim(&g, i);
  }
  set_view(ctx, op, args[2], *self, g);
}

void op_squeeze_dim(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::squeeze.dim";
  Tensor* self = view_input(ctx, op, args, 3);
  if (self == nullptr) return;
  int64_t dim = 0;
  if (!int_arg(ctx, op, args, 1, "dim", &dim) || !wrap_dim(ctx, op, dim, self->dim(), &dim)) return;
  Geometry g = geometry_of(*self);
  if (g.dim > 0 && g.sizes[dim] == 1) erase_dim(&g, static_cast<int>(dim));
  set_view(ctx, op, args[2], *self, g);
}

void op_unsqueeze(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::unsqueeze";
  Tensor* self = view_input(ctx, op, args, 3);
  if (self == nullptr) return;
  int64_t dim = 0;
  if (!int_arg(ctx, op, args, 1, "dim", &dim) || !wrap_dim(ctx, op, dim, self->dim() + 1, &dim)) return;
  if (self->dim() + 1 > kMaxDims) {
    fail(ctx, op, "too many dimensions");
    return;
  }
  Geometry g = geometry_of(*self);
  const int d = static_cast<int>(dim);
  for (int i = g.dim; i > d; --i) {
    g.sizes[i] = g.sizes[i - 1];
    g.strides[i] = g.strides[i - 1];
  }
  g.sizes[d] = 1;
  if (d >= self->dim()) {
    g.strides[d] = 1;
  } else if (!checked::mul(self->size(d), self->stride(d), &g.strides[d])) {
    fail(ctx, op, "stride overflow");
    return;
  }
  ++g.dim;
  set_view(ctx, op, args[2], *self, g);
}

void op_split_with_sizes(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::split_with_sizes";
  Tensor* self = view_input(ctx, op, args, 4);
  if (self == nullptr) return;
  Span<const int64_t> split_sizes;
  int64_t dim = 0;
  if (!int_list_arg(ctx, op, args, 1, "split_sizes", &split_sizes) || !int_arg(ctx, op, args, 2, "dim", &dim)) {
    return;
  }
  if (self->dim() == 0) {
    fail(ctx, op, "cannot split a 0-d tensor");
    return;
  }
  if (!wrap_dim(ctx, op, dim, self->dim(), &dim)) return;
  if (!args[3]->is_tensor_list()) {
    fail(ctx, op, std::string("'out' must be a tensor list, got ") + to_string(args[3]->tag()));
    return;
  }
  Span<Value* const> outs = args[3]->to_tensor_list();
  if (outs.size() != split_sizes.size()) {
    fail(ctx, op, std::to_string(split_sizes.size()) + " split sizes but " + std::to_string(outs.size()) +
                      " outputs");
    return;
  }
  int64_t total = 0;
  for (int64_t s : split_sizes) {
    if (s < 0) {
      fail(ctx, op, "negative split size in " + shape_string(split_sizes));
      return;
    }
    if (!checked::add(total, s, &total)) {
      fail(ctx, op, "split sizes " + shape_string(split_sizes) + " overflow");
      return;
    }
  }
  const int64_t dim_size = self->size(static_cast<int>(dim));
  if (total != dim_size) {
    fail(ctx, op, "split sizes " + shape_string(split_sizes) + " do not sum to the size " +
                      std::to_string(dim_size) + " of dimension " + std::to_string(dim));
    return;
  }
  int64_t start = 0;
  for (size_t i = 0; i < outs.size(); ++i) {
    if (outs[i] == nullptr) {
      fail(ctx, op, "output " + std::to_string(i) + " is missing");
      return;
    }
    Geometry g = geometry_of(*self);
    g.sizes[dim] = split_sizes[i];
    g.offset = start * g.strides[dim];
    start += split_sizes[i];
    set_view(ctx, op, outs[i], *self, g);
    if (ctx.failed()) return;
  }
}

void op_t(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::t";
  Tensor* self = view_input(ctx, op, args, 2);
  if (self == nullptr) return;
  if (self->dim() > 2) {
    fail(ctx, op, "expects a tensor with at most 2 dimensions, got " + std::to_string(self->dim()));
    return;
  }
  if (self->dim() < 2) {
    set_view(ctx, op, args[1], *self, geometry_of(*self));
    return;
  }
  transpose_impl(ctx, op, args, self, 0, 1, 1);
}

void op_transpose_int(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::transpose.int";
  Tensor* self = view_input(ctx, op, args, 4);
  if (self == nullptr) return;
  int64_t d0 = 0, d1 = 0;
  if (!int_arg(ctx, op, args, 1, "dim0", &d0) || !int_arg(ctx, op, args, 2, "dim1", &d1)) return;
  transpose_impl(ctx, op, args, self, d0, d1, 3);
}

void op_slice_tensor(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::slice.Tensor";
  Tensor* self = view_input(ctx, op, args, 6);
  if (self == nullptr) return;
  int64_t dim = 0, step = 1;
  if (!int_arg(ctx, op, args, 1, "dim", &dim) || !int_arg(ctx, op, args, 4, "step", &step)) return;
  if (self->dim() == 0) {
    fail(ctx, op, "cannot slice a 0-d tensor");
    return;
  }
  if (!wrap_dim(ctx, op, dim, self->dim(), &dim)) return;
  if (step <= 0) {
    fail(ctx, op, "slice step must be positive, got " + std::to_string(step));
    return;
  }
  const int64_t size = self->size(static_cast<int>(dim));
  int64_t start = 0, end = 0;
  if (!optional_int_arg(ctx, op, args, 2, "start", 0, &start) ||
      !optional_int_arg(ctx, op, args, 3, "end", INT64_MAX, &end)) {
    return;
  }
  if (start < 0) start += size;
  if (end < 0) end += size;
  if (start < 0) start = 0;
  if (start > size) start = size;
  if (end < start) end = start;
  if (end > size) end = size;
  const int64_t len = end == start ? 0 : (end - start - 1) / step + 1;
  Geometry g = geometry_of(*self);
  g.offset = start * g.strides[dim];
  g.sizes[dim] = len;
  // With one element or none the stride does not matter (and step may be huge).
  if (len > 1 && !checked::mul(g.strides[dim], step, &g.strides[dim])) {
    fail(ctx, op, "step " + std::to_string(step) + " overflows the stride");
    return;
  }
  set_view(ctx, op, args[5], *self, g);
}

}  // namespace kernels
}  // namespace etrt
