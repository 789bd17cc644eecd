// Indexing, scatter/gather, copies and fills, and the less common layers (reflection and
// replication padding, 3-d pooling, distances, embedding bags, col2im, grid sampling), for every
// dtype unless the op is floating by nature. Elements move as bytes; arithmetic goes through
// double (or int64 for integer results).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>

#include "light.h"
#include "util.h"

namespace etrt {
namespace kernels {
namespace {

inline int64_t offset_of(const Tensor& t, const int64_t* c) {
  int64_t o = 0;
  for (int d = 0; d < t.dim(); ++d) o += c[d] * t.stride(d);
  return o;
}

// Steps a row-major coordinate through `sizes`.
inline void advance(int64_t* c, Span<const int64_t> sizes) {
  for (int d = static_cast<int>(sizes.size()) - 1; d >= 0; --d) {
    if (++c[d] < sizes[d]) return;
    c[d] = 0;
  }
}

inline char* elem(const Tensor& t, const int64_t* c) {
  return static_cast<char*>(t.data()) + offset_of(t, c) * static_cast<int64_t>(t.element_size());
}

bool oom(KernelContext& ctx, const char* op) {
  ctx.fail(Error(ErrorCode::OutOfMemory, std::string(op) + ": out of scratch memory"));
  return false;
}

// An index value in [0, size) (negative wraps once); fails the call otherwise.
bool checked_index(KernelContext& ctx, const char* op, int64_t i, int64_t size, int64_t* out) {
  if (i < -size || i >= size) {
    fail(ctx, op, "index " + std::to_string(i) + " is out of bounds for a dimension of size " + std::to_string(size));
    return false;
  }
  *out = i < 0 ? i + size : i;
  return true;
}

bool index_tensor(KernelContext& ctx, const char* op, Span<Value*> args, size_t i, const char* name, Tensor** out) {
  Tensor* t = tensor_arg(ctx, op, args, i, name);
  if (t == nullptr || !check_has_data(ctx, op, *t, name)) return false;
  // An empty index reads nothing: ATen takes one of any dtype (gather's OpInfo samples pass uint8).
  if (t->numel() != 0 && t->dtype() != ScalarType::Long && t->dtype() != ScalarType::Int) {
    fail(ctx, op, std::string("'") + name + "' must be Long or Int, got " + to_string(t->dtype()));
    return false;
  }
  *out = t;
  return true;
}

// `out` (contiguous, self's shape and dtype) starts as a copy of self.
Tensor* copy_of_self(KernelContext& ctx, const char* op, Span<Value*> args, size_t out_i, Tensor** self_out) {
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  if (self == nullptr || !check_has_data(ctx, op, *self, "self")) return nullptr;
  Tensor* out = output_arg(ctx, op, args, out_i, self->dtype(), self->sizes());
  if (out == nullptr) return nullptr;
  // In place (the exporter writes a state update into the state itself): nothing to copy.
  if (out->data() != self->data() || !same_sizes(out->strides(), self->strides())) copy_to_contiguous(*self, out->data());
  *self_out = self;
  return out;
}

// Copies (converting) every element of `src` broadcast onto `dst`'s shape.
void broadcast_copy(const Tensor& dst, const Tensor& src) {
  const Tensor* ops[2] = {&dst, &src};
  const ScalarType to = dst.dtype(), from = src.dtype();
  const size_t es = element_size(to);
  run_loop(make_loop(dst.sizes(), ops), [&](char* const* p, const int64_t* st, int64_t n) {
    for (int64_t k = 0; k < n; ++k) {
      if (to == from) {
        std::memcpy(p[0] + k * st[0], p[1] + k * st[1], es);
      } else {
        convert(p[0] + k * st[0], to, p[1] + k * st[1], from);
      }
    }
  });
}

// A strided view over `data`; false after failing the call.
bool strided_view(KernelContext& ctx, const char* op, void* data, ScalarType dtype, Span<const int64_t> sizes,
                  Span<const int64_t> strides, Tensor* out) {
  Result<Tensor> t = Tensor::make(data, dtype, sizes, strides);
  if (!t.ok()) {
    fail(ctx, op, t.error().to_string());
    return false;
  }
  *out = *t;
  return true;
}

enum class Reduce { None, Sum, Prod, Mean, Max, Min };

bool reduce_mode(KernelContext& ctx, const char* op, const Value& v, Reduce* r) {
  if (!v.is_string()) {
    fail(ctx, op, std::string("'reduce' must be a string, got ") + to_string(v.tag()));
    return false;
  }
  const std::string_view s = v.to_string();
  if (s == "sum" || s == "add") *r = Reduce::Sum;
  else if (s == "prod" || s == "multiply") *r = Reduce::Prod;
  else if (s == "mean") *r = Reduce::Mean;
  else if (s == "amax") *r = Reduce::Max;
  else if (s == "amin") *r = Reduce::Min;
  else {
    fail(ctx, op, "unknown reduction '" + std::string(s) + "'");
    return false;
  }
  return true;
}

// Combines `v` into the element at `o` (dtype t); `first` replaces.
void combine(char* o, ScalarType t, const char* v, ScalarType vt, Reduce r, bool first) {
  if (r == Reduce::None || first) {
    convert(o, t, v, vt);
    return;
  }
  if (integral_type(t)) {
    const int64_t a = load_int64(o, t), b = load_int64(v, vt);
    int64_t x = a;
    switch (r) {
      case Reduce::Sum: case Reduce::Mean: x = checked::wrap_add(a, b); break;
      case Reduce::Prod: x = checked::wrap_mul(a, b); break;
      case Reduce::Max: x = std::max(a, b); break;
      case Reduce::Min: x = std::min(a, b); break;
      default: break;
    }
    store_scalar(o, t, static_cast<double>(x), x, true);
    return;
  }
  const double a = load_as_double(o, t), b = load_as_double(v, vt);
  double x = a;
  switch (r) {
    case Reduce::Sum: case Reduce::Mean: x = a + b; break;
    case Reduce::Prod: x = a * b; break;
    case Reduce::Max: x = (std::isnan(a) || std::isnan(b)) ? a + b : std::max(a, b); break;
    case Reduce::Min: x = (std::isnan(a) || std::isnan(b)) ? a + b : std::min(a, b); break;
    default: break;
  }
  store_scalar(o, t, x, 0, false);
}

// scatter family: out = self; out[..index[c]..] <reduce>= src[c] over index's shape, along dim.
// `src` null: the Scalar `value` (args[value_i]) everywhere.
void scatter_impl(KernelContext& ctx, Span<Value*> args, const char* op, size_t nargs, size_t src_i, Reduce r,
                  bool include_self) {
  if (!check_nargs(ctx, op, args, nargs + 1)) return;
  Tensor* self = nullptr;
  int64_t dim = 0;
  Tensor* index = nullptr;
  if (!int_arg(ctx, op, args, 1, "dim", &dim) || !index_tensor(ctx, op, args, 2, "index", &index)) return;
  Tensor* out = copy_of_self(ctx, op, args, nargs, &self);
  if (out == nullptr || !wrap_dim(ctx, op, dim, self->dim(), &dim)) return;
  alignas(8) unsigned char sbuf[8];
  Tensor scalar;
  const Tensor* src = nullptr;
  if (args[src_i]->is_scalar()) {
    store_scalar(sbuf, self->dtype(), args[src_i]->scalar_to_double(), args[src_i]->scalar_to_int(), !args[src_i]->is_double());
    scalar = Tensor(sbuf, self->dtype(), Span<const int64_t>());
  } else {
    src = tensor_arg(ctx, op, args, src_i, "src");
    if (src == nullptr || !check_has_data(ctx, op, *src, "src")) return;
  }
  if (index->numel() == 0) return;
  if (index->dim() != self->dim() && !(index->dim() <= 1 && self->dim() <= 1)) {
    fail(ctx, op, "'index' must have as many dimensions as 'self'");
    return;
  }
  const int nd = index->dim();
  for (int d = 0; d < nd && self->dim() > 0; ++d) {
    if ((d != dim && index->size(d) > self->size(d)) || (src && src->dim() == nd && index->size(d) > src->size(d))) {
      fail(ctx, op, "'index' is larger than 'self' or 'src' outside dimension " + std::to_string(dim));
      return;
    }
  }
  const int64_t n_out = out->numel();
  int64_t* count = nullptr;
  if (r != Reduce::None) {
    count = static_cast<int64_t*>(ctx.allocate_temp(static_cast<size_t>(n_out) * sizeof(int64_t)));
    if (count == nullptr) {
      oom(ctx, op);
      return;
    }
    std::fill(count, count + n_out, include_self ? 1 : 0);
  }
  const int64_t dim_size = self->dim() == 0 ? 1 : self->size(static_cast<int>(dim));
  const size_t es = out->element_size();
  int64_t c[kMaxDims] = {}, t[kMaxDims] = {};
  for (int64_t e = 0; e < index->numel(); ++e, advance(c, index->sizes())) {
    int64_t j = 0;
    if (!checked_index(ctx, op, load_int64(elem(*index, c), index->dtype()), dim_size, &j)) return;
    for (int d = 0; d < nd; ++d) t[d] = c[d];
    if (nd > 0) t[dim] = j;
    int64_t lin = 0;
    for (int d = 0; d < nd; ++d) lin = lin * self->size(d) + t[d];
    char* o = static_cast<char*>(out->data()) + lin * static_cast<int64_t>(es);
    const char* v = src ? elem(*src, c) : reinterpret_cast<const char*>(sbuf);
    const ScalarType vt = src ? src->dtype() : self->dtype();
    combine(o, out->dtype(), v, vt, r, count != nullptr && count[lin] == 0);
    if (count != nullptr) ++count[lin];
  }
  if (r == Reduce::Mean) {
    char* o = static_cast<char*>(out->data());
    for (int64_t i = 0; i < n_out; ++i) {
      if (count[i] <= 1) continue;
      char* p = o + i * static_cast<int64_t>(es);
      if (integral_type(out->dtype())) {
        const int64_t v = load_int64(p, out->dtype());
        const int64_t q = v / count[i] - ((v % count[i] != 0 && v < 0) ? 1 : 0);  // floor, as ATen
        store_scalar(p, out->dtype(), static_cast<double>(q), q, true);
      } else {
        store_scalar(p, out->dtype(), load_as_double(p, out->dtype()) / static_cast<double>(count[i]), 0, false);
      }
    }
  }
}

// Where each padded output coordinate reads from (reflect or replicate), one dimension.
inline int64_t pad_source(int64_t o, int64_t before, int64_t size, bool reflect) {
  int64_t i = o - before;
  if (reflect) {
    if (size == 1) return 0;
    const int64_t period = 2 * (size - 1);
    i = std::abs(i) % period;
    return i >= size ? period - i : i;
  }
  return std::min(std::max(i, int64_t{0}), size - 1);
}

// reflection_pad{1,2,3}d and replication_pad{2,3}d: self, padding | out
void pad_impl(KernelContext& ctx, Span<Value*> args, const char* op, int k, bool reflect) {
  if (!check_nargs(ctx, op, args, 3)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  Span<const int64_t> pad;
  if (self == nullptr || !check_has_data(ctx, op, *self, "self") || !int_list_arg(ctx, op, args, 1, "padding", &pad)) return;
  if (static_cast<int>(pad.size()) != 2 * k || self->dim() < k) {
    fail(ctx, op, "expects " + std::to_string(2 * k) + " padding values and at least " + std::to_string(k) + " dimensions");
    return;
  }
  const int nd = self->dim();
  Shape shape = shape_of(*self);
  int64_t before[kMaxDims] = {};
  for (int j = 0; j < k; ++j) {  // padding lists the last dimension first
    const int d = nd - 1 - j;
    before[d] = pad[2 * j];
    if (!checked::add(shape.sizes[d], pad[2 * j], &shape.sizes[d]) ||
        !checked::add(shape.sizes[d], pad[2 * j + 1], &shape.sizes[d]) || shape.sizes[d] > checked::kMaxElements ||
        pad[2 * j] < -checked::kMaxElements || pad[2 * j + 1] < -checked::kMaxElements) {
      fail(ctx, op, "padding " + shape_string(pad) + " is larger than any tensor may be");
      return;
    }
    if (reflect && (pad[2 * j] >= self->size(d) || pad[2 * j + 1] >= self->size(d))) {
      fail(ctx, op, "padding must be smaller than the padded dimension");
      return;
    }
    if (shape.sizes[d] < 0 || (self->size(d) == 0 && shape.sizes[d] > 0)) {
      fail(ctx, op, "padding gives a negative size or pads an empty dimension");
      return;
    }
  }
  Tensor* out = output_arg(ctx, op, args, 2, self->dtype(), shape.span());
  if (out == nullptr) return;
  const size_t es = out->element_size();
  char* o = static_cast<char*>(out->data());
  int64_t c[kMaxDims] = {}, s[kMaxDims] = {};
  for (int64_t e = 0; e < out->numel(); ++e, advance(c, shape.span())) {
    for (int d = 0; d < nd; ++d) s[d] = d >= nd - k ? pad_source(c[d], before[d], self->size(d), reflect) : c[d];
    std::memcpy(o + e * static_cast<int64_t>(es), elem(*self, s), es);
  }
}

bool floating_input(KernelContext& ctx, const char* op, const Tensor& t, const char* name) {
  if (t.dtype() != ScalarType::Float && t.dtype() != ScalarType::Double) {
    fail(ctx, op, std::string("'") + name + "' must be floating, got " + to_string(t.dtype()));
    return false;
  }
  return check_has_data(ctx, op, t, name);
}

bool triple(KernelContext& ctx, const char* op, Span<Value*> args, size_t i, const char* name, int64_t fallback,
            int64_t (&v)[3]) {
  Span<const int64_t> l;
  if (args[i]->is_none() || (args[i]->is_int_list() && args[i]->to_int_list().empty())) {
    v[0] = v[1] = v[2] = fallback;
    return true;
  }
  if (!int_list_arg(ctx, op, args, i, name, &l)) return false;
  if (l.size() != 1 && l.size() != 3) {
    fail(ctx, op, std::string("'") + name + "' must have 1 or 3 values");
    return false;
  }
  for (int j = 0; j < 3; ++j) v[j] = l[l.size() == 1 ? 0 : j];
  return true;
}

// Input [.., C, D, H, W] as (planes, D, H, W) of contiguous double values.
struct Volume {
  const Tensor* t;
  int64_t planes, d, h, w;
};

bool volume(KernelContext& ctx, const char* op, const Tensor& t, Volume* v) {
  if (t.dim() != 4 && t.dim() != 5) {
    fail(ctx, op, "expects a 4-d or 5-d input");
    return false;
  }
  const int n = t.dim();
  *v = {&t, 1, t.size(n - 3), t.size(n - 2), t.size(n - 1)};
  for (int i = 0; i < n - 3; ++i) v->planes *= t.size(i);
  return true;
}

// The output of a 3-d window op: `self`'s leading dimensions, then (od, oh, ow). The kernels
// index it as planes x od x oh x ow, so the planned shape must be exactly that.
Tensor* volume_output(KernelContext& ctx, const char* op, Span<Value*> args, size_t i, const Tensor& self,
                      const int64_t (&spatial)[3], ScalarType dtype, const char* name = "out") {
  Shape shape = shape_of(self);
  for (int j = 0; j < 3; ++j) shape.sizes[shape.dim - 3 + j] = spatial[j];
  return output_arg(ctx, op, args, i, dtype, shape.span(), name);
}

// Output extents of a 3-d window (ATen's pooling_output_shape per dimension, through the
// shared checked helper), with ATen's rule that padding is at most half the kernel. False after
// failing the call.
bool window3(KernelContext& ctx, const char* op, const Volume& v, const int64_t (&k)[3], const int64_t (&s)[3],
             const int64_t (&p)[3], const int64_t (&dl)[3], bool ceil, int64_t (&out)[3]) {
  const int64_t in[3] = {v.d, v.h, v.w};
  for (int j = 0; j < 3; ++j) {
    if (!checked::window(in[j], k[j], p[j], p[j], s[j], dl[j], ceil, &out[j]) || p[j] > k[j] / 2 || out[j] < 1) {
      fail(ctx, op, "kernel_size, stride, padding and dilation do not fit the input (kernel " +
                        shape_string(Span<const int64_t>(k, 3)) + ", stride " + shape_string(Span<const int64_t>(s, 3)) +
                        ", padding " + shape_string(Span<const int64_t>(p, 3)) + ")");
      return false;
    }
  }
  return true;
}

inline double vol_at(const Volume& v, const float* x, int64_t p, int64_t z, int64_t y, int64_t xx) {
  return x[((p * v.d + z) * v.h + y) * v.w + xx];
}

int64_t grid_nearest(double x) { return checked::to_int<int64_t>(std::nearbyint(x)); }

// A sampling coordinate (from the grid's data) as an index a few taps may step from: NaN and
// values far outside any image land outside it, where the taps read padding.
inline int64_t tap_index(double v) {
  if (!(v > -8.0)) return -8;
  return v < 1e15 ? static_cast<int64_t>(v) : int64_t{1} << 50;
}

double reflect_coord(double x, double lo, double hi) {
  if (lo == hi) return 0.0;
  const double span = hi - lo;
  x = std::fabs(x - lo);
  const double extra = std::fmod(x, span);
  const bool even = std::fmod(std::floor(x / span), 2.0) == 0.0;  // no cast: x / span may be huge
  return even ? extra + lo : span - extra + lo;
}

// grid_sample's unnormalisation and padding of one coordinate.
double grid_coord(double g, int64_t size, int padding, bool align) {
  double x = align ? (g + 1) / 2 * static_cast<double>(size - 1) : ((g + 1) * static_cast<double>(size) - 1) / 2;
  if (padding == 1) {
    x = std::min(static_cast<double>(size - 1), std::max(x, 0.0));
  } else if (padding == 2) {
    x = align ? reflect_coord(x, 0, 2.0 * static_cast<double>(size - 1)) / 1.0
              : reflect_coord(x, -0.5, static_cast<double>(size) - 0.5);
    if (align) x = reflect_coord(x, 0, static_cast<double>(size - 1));
    x = std::min(static_cast<double>(size - 1), std::max(x, 0.0));
  }
  return x;
}

double cubic1(double x, double a) { return ((a + 2) * x - (a + 3)) * x * x + 1; }
double cubic2(double x, double a) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; }

}  // namespace

void op_gather(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::gather";
  if (!check_nargs(ctx, op, args, 5)) return;  // self, dim, index, sparse_grad | out
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  int64_t dim = 0;
  Tensor* index = nullptr;
  if (self == nullptr || !check_has_data(ctx, op, *self, "self") || !int_arg(ctx, op, args, 1, "dim", &dim) ||
      !wrap_dim(ctx, op, dim, self->dim(), &dim) || !index_tensor(ctx, op, args, 2, "index", &index)) {
    return;
  }
  Tensor* out = output_arg(ctx, op, args, 4, self->dtype(), index->sizes());
  if (out == nullptr) return;
  const int nd = index->dim();
  if (index->numel() > 0 && nd != self->dim() && !(nd <= 1 && self->dim() <= 1)) {
    fail(ctx, op, "'index' must have as many dimensions as 'self'");
    return;
  }
  for (int d = 0; d < nd && self->dim() > 0; ++d) {
    if (d != dim && index->size(d) > self->size(d)) {
      fail(ctx, op, "'index' is larger than 'self' outside dimension " + std::to_string(dim));
      return;
    }
  }
  const int64_t dim_size = self->dim() == 0 ? 1 : self->size(static_cast<int>(dim));
  const size_t es = out->element_size();
  char* o = static_cast<char*>(out->data());
  int64_t c[kMaxDims] = {}, s[kMaxDims] = {};
  for (int64_t e = 0; e < index->numel(); ++e, advance(c, index->sizes())) {
    int64_t j = 0;
    if (!checked_index(ctx, op, load_int64(elem(*index, c), index->dtype()), dim_size, &j)) return;
    for (int d = 0; d < nd; ++d) s[d] = c[d];
    if (self->dim() > 0) s[dim] = j;
    std::memcpy(o + e * static_cast<int64_t>(es), elem(*self, s), es);
  }
}

void op_scatter_src(KernelContext& ctx, Span<Value*> args) { scatter_impl(ctx, args, "aten::scatter.src", 4, 3, Reduce::None, true); }
void op_scatter_value(KernelContext& ctx, Span<Value*> args) { scatter_impl(ctx, args, "aten::scatter.value", 4, 3, Reduce::None, true); }
void op_scatter_add(KernelContext& ctx, Span<Value*> args) { scatter_impl(ctx, args, "aten::scatter_add", 4, 3, Reduce::Sum, true); }

// scatter.reduce / scatter.value_reduce: self, dim, index, src|value, reduce ("add" or
// "multiply") | out
void op_scatter_reduce(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::scatter.reduce";
  if (!check_nargs(ctx, op, args, 6)) return;
  Reduce r;
  if (!reduce_mode(ctx, op, *args[4], &r)) return;
  scatter_impl(ctx, args, op, 5, 3, r, true);
}

void op_scatter_reduce_two(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::scatter_reduce.two";
  if (!check_nargs(ctx, op, args, 7)) return;  // self, dim, index, src, reduce, include_self | out
  Reduce r;
  bool include_self = true;
  if (!reduce_mode(ctx, op, *args[4], &r) || !bool_arg(ctx, op, args, 5, "include_self", &include_self)) return;
  scatter_impl(ctx, args, op, 6, 3, r, include_self);
}

void op_index_select(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::index_select";
  if (!check_nargs(ctx, op, args, 4)) return;  // self, dim, index | out
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  int64_t dim = 0;
  Tensor* index = nullptr;
  if (self == nullptr || !check_has_data(ctx, op, *self, "self") || !int_arg(ctx, op, args, 1, "dim", &dim) ||
      !wrap_dim(ctx, op, dim, self->dim(), &dim) || !index_tensor(ctx, op, args, 2, "index", &index)) {
    return;
  }
  if (index->dim() > 1) {
    fail(ctx, op, "'index' must be 0-d or 1-d");
    return;
  }
  Shape shape = shape_of(*self);
  if (shape.dim > 0) shape.sizes[dim] = index->numel();
  Tensor* out = output_arg(ctx, op, args, 3, self->dtype(), shape.span());
  if (out == nullptr) return;
  const int64_t dim_size = self->dim() == 0 ? 1 : self->size(static_cast<int>(dim));
  const size_t es = out->element_size();
  const int64_t istride = index->dim() == 1 ? index->stride(0) : 0;
  const char* ip = static_cast<const char*>(index->data());
  const int64_t count = index->numel();
  auto* picked = static_cast<int64_t*>(ctx.allocate_temp(static_cast<size_t>(std::max<int64_t>(1, count)) * 8));
  if (picked == nullptr) {
    fail(ctx, op, "out of memory for the indices");
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    const int64_t at = i * istride * static_cast<int64_t>(index->element_size());
    if (!checked_index(ctx, op, load_int64(ip + at, index->dtype()), dim_size, &picked[i])) return;
  }
  char* o = static_cast<char*>(out->data());
  const char* x = static_cast<const char*>(self->data());
  // The dims after `dim` as one run: where self holds it row-major (the output is contiguous),
  // each (outer position, index) pair is one memcpy (torch.roll's index_select over a row of an
  // image, Swin's window shifts: element by element they took a quarter of Swin-T's time).
  int64_t inner = 1;
  bool dense = shape.dim > 0;
  for (int d = shape.dim - 1; d > dim && dense; --d) {
    dense = shape.sizes[d] == 1 || self->stride(d) == inner;
    inner *= shape.sizes[d];
  }
  if (dense) {
    int64_t outer = 1;
    for (int d = 0; d < dim; ++d) outer *= shape.sizes[d];
    const int64_t s_dim = self->stride(static_cast<int>(dim)), o_dim = out->stride(static_cast<int>(dim));
    const auto bytes = static_cast<int64_t>(es);
    parallel_chunks(outer * count, inner, [&](int64_t b, int64_t e) {
      for (int64_t it = b; it < e; ++it) {
        int64_t rest = it / count, s_off = 0, o_off = 0;
        for (int d = static_cast<int>(dim) - 1; d >= 0; --d) {
          const int64_t c = rest % shape.sizes[d];
          rest /= shape.sizes[d];
          s_off += c * self->stride(d);
          o_off += c * out->stride(d);
        }
        const int64_t i = it % count;
        std::memcpy(o + (o_off + i * o_dim) * bytes, x + (s_off + picked[i] * s_dim) * bytes,
                    static_cast<size_t>(inner * bytes));
      }
    });
    return;
  }
  int64_t c[kMaxDims] = {}, s[kMaxDims] = {};
  for (int64_t e = 0; e < out->numel(); ++e, advance(c, shape.span())) {
    for (int d = 0; d < shape.dim; ++d) s[d] = c[d];
    if (shape.dim > 0) s[dim] = picked[c[dim]];
    std::memcpy(o + e * static_cast<int64_t>(es), elem(*self, s), es);
  }
}

// index_put: self, indices (Tensor?[]), values, accumulate | out. Integer index tensors
// broadcast together; a Bool mask selects its true positions (values must then broadcast).
void op_index_put(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::index_put";
  if (!check_nargs(ctx, op, args, 5)) return;
  Tensor* self = nullptr;
  Tensor* out = copy_of_self(ctx, op, args, 4, &self);
  if (out == nullptr) return;
  Tensor* values = tensor_arg(ctx, op, args, 2, "values");
  bool accumulate = false;
  if (values == nullptr || !check_has_data(ctx, op, *values, "values") ||
      !bool_arg(ctx, op, args, 3, "accumulate", &accumulate)) {
    return;
  }
  if (!args[1]->is_optional_tensor_list() && !args[1]->is_tensor_list()) {
    fail(ctx, op, std::string("'indices' must be a list of optional tensors, got ") + to_string(args[1]->tag()));
    return;
  }
  Span<Value* const> list = args[1]->to_tensor_list();
  const int nd = self->dim();
  // A Bool mask over dims [m, m + mask.dim) becomes, per true position, one index per dim.
  const Tensor* idx[kMaxDims] = {};
  const Tensor* mask = nullptr;
  int mask_at = -1, pos = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const Value* v = list[i];
    if (v == nullptr || v->is_none()) {
      ++pos;
      continue;
    }
    if (!v->is_tensor()) {
      fail(ctx, op, "index " + std::to_string(i) + " is neither a tensor nor None");
      return;
    }
    const Tensor& t = v->to_tensor();
    if (t.dtype() == ScalarType::Bool || t.dtype() == ScalarType::Byte) {
      if (mask != nullptr || list.size() != 1) {
        fail(ctx, op, "a Bool mask index must be the only index");
        return;
      }
      mask = &t;
      mask_at = pos;
      pos += t.dim();
      continue;
    }
    if (t.dtype() != ScalarType::Long && t.dtype() != ScalarType::Int) {
      fail(ctx, op, std::string("index tensors must be Long, Int or Bool, got ") + to_string(t.dtype()));
      return;
    }
    if (pos >= nd) break;
    idx[pos++] = &t;
  }
  if (pos > nd) {
    fail(ctx, op, "too many indices for a tensor of " + std::to_string(nd) + " dimensions");
    return;
  }
  const ScalarType dt = out->dtype();
  auto put = [&](char* o, const char* v) { combine(o, dt, v, values->dtype(), accumulate ? Reduce::Sum : Reduce::None, false); };
  if (mask != nullptr) {
    // Positions in row-major order over the mask, then the dims after it; values broadcast.
    for (int d = 0; d < mask->dim(); ++d) {
      if (mask->size(d) != self->size(mask_at + d)) {
        fail(ctx, op, "the mask's shape does not match the indexed dimensions");
        return;
      }
    }
    int64_t count = 0;
    int64_t mc[kMaxDims] = {};
    for (int64_t e = 0; e < mask->numel(); ++e, advance(mc, mask->sizes())) count += *elem(*mask, mc) != 0;
    // Selected shape: dims before the mask, count, dims after.
    Shape sel;
    for (int d = 0; d < mask_at; ++d) sel.sizes[sel.dim++] = self->size(d);
    sel.sizes[sel.dim++] = count;
    for (int d = mask_at + mask->dim(); d < nd; ++d) sel.sizes[sel.dim++] = self->size(d);
    Shape check = sel;
    if (!broadcast_into(ctx, op, &check, values->sizes()) || !same_sizes(check.span(), sel.span())) {
      fail(ctx, op, "values of shape " + shape_string(values->sizes()) + " cannot be put into " + shape_string(sel.span()));
      return;
    }
    // Positions of the true mask elements, in order.
    int64_t* where = static_cast<int64_t*>(ctx.allocate_temp(static_cast<size_t>(count > 0 ? count : 1) * sizeof(int64_t)));
    if (where == nullptr) {
      oom(ctx, op);
      return;
    }
    int64_t k = 0;
    std::fill(mc, mc + kMaxDims, 0);
    for (int64_t e = 0; e < mask->numel(); ++e, advance(mc, mask->sizes())) {
      if (*elem(*mask, mc) != 0) where[k++] = e;
    }
    int64_t c[kMaxDims] = {}, t[kMaxDims] = {}, vc[kMaxDims] = {};
    for (int64_t e = 0; e < sel.numel(); ++e, advance(c, sel.span())) {
      int64_t m = where[c[mask_at]];
      for (int d = mask->dim() - 1; d >= 0; --d) {
        t[mask_at + d] = m % mask->size(d);
        m /= mask->size(d);
      }
      for (int d = 0; d < mask_at; ++d) t[d] = c[d];
      for (int d = mask_at + mask->dim(); d < nd; ++d) t[d] = c[d - mask->dim() + 1];
      for (int d = 0; d < values->dim(); ++d) {
        const int sd = sel.dim - values->dim() + d;
        vc[d] = values->size(d) == 1 ? 0 : c[sd];
      }
      put(elem(*out, t), elem(*values, vc));
    }
    return;
  }
  // Integer indices: as index.Tensor's result shape, with values broadcast onto it.
  Shape bshape;
  int first = -1, last = -1, count = 0;
  for (int d = 0; d < nd; ++d) {
    if (idx[d] == nullptr) continue;
    if (!check_has_data(ctx, op, *idx[d], "indices") || !broadcast_into(ctx, op, &bshape, idx[d]->sizes())) return;
    if (first < 0) first = d;
    last = d;
    ++count;
  }
  if (count == 0) {  // every index None: values fill self, broadcast onto its whole shape
    Shape check = shape_of(*out);
    if (!broadcast_into(ctx, op, &check, values->sizes()) || !same_sizes(check.span(), out->sizes())) {
      fail(ctx, op, "values of shape " + shape_string(values->sizes()) + " cannot be put into " +
                        shape_string(out->sizes()));
      return;
    }
    broadcast_copy(*out, *values);
    return;
  }
  const int insert_at = last - first + 1 == count ? first : 0;
  Shape shape;
  int kind[kMaxDims];
  auto push = [&](int64_t size, int k) {
    kind[shape.dim] = k;
    shape.sizes[shape.dim++] = size;
  };
  for (int d = 0; d < insert_at; ++d) push(self->size(d), d);
  for (int k = 0; k < bshape.dim; ++k) push(bshape.sizes[k], -1 - k);
  for (int d = insert_at; d < nd; ++d) {
    if (idx[d] == nullptr) push(self->size(d), d);
  }
  Shape check = shape;
  if (!broadcast_into(ctx, op, &check, values->sizes()) || !same_sizes(check.span(), shape.span())) {
    fail(ctx, op, "values of shape " + shape_string(values->sizes()) + " cannot be put into " + shape_string(shape.span()));
    return;
  }
  int64_t c[kMaxDims] = {}, t[kMaxDims] = {}, ic[kMaxDims] = {}, vc[kMaxDims] = {};
  for (int64_t e = 0; e < shape.numel(); ++e, advance(c, shape.span())) {
    for (int od = 0; od < shape.dim; ++od) {
      if (kind[od] >= 0) t[kind[od]] = c[od];
    }
    for (int d = 0; d < nd; ++d) {
      if (idx[d] == nullptr) continue;
      const Tensor& it = *idx[d];
      for (int k = 0; k < it.dim(); ++k) {
        const int bk = bshape.dim - it.dim() + k;
        int od = 0;
        while (kind[od] != -1 - bk) ++od;
        ic[k] = it.size(k) == 1 ? 0 : c[od];
      }
      if (!checked_index(ctx, op, load_int64(elem(it, ic), it.dtype()), self->size(d), &t[d])) return;
    }
    for (int d = 0; d < values->dim(); ++d) {
      const int sd = shape.dim - values->dim() + d;
      vc[d] = values->size(d) == 1 ? 0 : c[sd];
    }
    put(elem(*out, t), elem(*values, vc));
  }
}

void op_select_scatter(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::select_scatter";
  if (!check_nargs(ctx, op, args, 5)) return;  // self, src, dim, index | out
  Tensor* self = nullptr;
  Tensor* out = copy_of_self(ctx, op, args, 4, &self);
  Tensor* src = out ? tensor_arg(ctx, op, args, 1, "src") : nullptr;
  int64_t dim = 0, index = 0;
  if (src == nullptr || !check_has_data(ctx, op, *src, "src") || !int_arg(ctx, op, args, 2, "dim", &dim) ||
      !wrap_dim(ctx, op, dim, self->dim(), &dim) || !int_arg(ctx, op, args, 3, "index", &index) ||
      !checked_index(ctx, op, index, self->size(static_cast<int>(dim)), &index)) {
    return;
  }
  // The selected slice of out, as a strided view, receives src.
  int64_t sizes[kMaxDims], strides[kMaxDims];
  int k = 0;
  for (int d = 0; d < out->dim(); ++d) {
    if (d == dim) continue;
    sizes[k] = out->size(d);
    strides[k++] = out->stride(d);
  }
  if (!same_sizes(Span<const int64_t>(sizes, static_cast<size_t>(k)), src->sizes())) {
    fail(ctx, op, "'src' has shape " + shape_string(src->sizes()) + ", expected " + shape_string(Span<const int64_t>(sizes, static_cast<size_t>(k))));
    return;
  }
  char* base = static_cast<char*>(out->data()) + index * out->stride(static_cast<int>(dim)) * static_cast<int64_t>(out->element_size());
  Tensor view;
  if (!strided_view(ctx, op, base, out->dtype(), Span<const int64_t>(sizes, static_cast<size_t>(k)),
                    Span<const int64_t>(strides, static_cast<size_t>(k)), &view)) {
    return;
  }
  broadcast_copy(view, *src);
}

void op_slice_scatter(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::slice_scatter";
  if (!check_nargs(ctx, op, args, 7)) return;  // self, src, dim, start?, end?, step | out
  Tensor* self = nullptr;
  Tensor* out = copy_of_self(ctx, op, args, 6, &self);
  Tensor* src = out ? tensor_arg(ctx, op, args, 1, "src") : nullptr;
  int64_t dim = 0, start = 0, end = 0, step = 1;
  if (src == nullptr || !check_has_data(ctx, op, *src, "src") || !int_arg(ctx, op, args, 2, "dim", &dim) ||
      !wrap_dim(ctx, op, dim, self->dim(), &dim) || !int_arg(ctx, op, args, 5, "step", &step)) {
    return;
  }
  const int64_t size = self->size(static_cast<int>(dim));
  if (!optional_int_arg(ctx, op, args, 3, "start", 0, &start) ||
      !optional_int_arg(ctx, op, args, 4, "end", size, &end)) {
    return;
  }
  if (step <= 0) {
    fail(ctx, op, "step must be positive");
    return;
  }
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::min(std::max(start, int64_t{0}), size);
  end = std::min(std::max(end, start), size);
  int64_t sizes[kMaxDims], strides[kMaxDims];
  for (int d = 0; d < out->dim(); ++d) {
    sizes[d] = out->size(d);
    strides[d] = out->stride(d);
  }
  sizes[dim] = end == start ? 0 : (end - start - 1) / step + 1;
  // One element or none: the stride does not matter (and step may be huge).
  if (sizes[dim] > 1 && !checked::mul(strides[dim], step, &strides[dim])) {
    fail(ctx, op, "step " + std::to_string(step) + " overflows the stride");
    return;
  }
  const Span<const int64_t> vs(sizes, static_cast<size_t>(out->dim()));
  if (!same_sizes(vs, src->sizes())) {
    fail(ctx, op, "'src' has shape " + shape_string(src->sizes()) + ", expected " + shape_string(vs));
    return;
  }
  if (src->numel() == 0) return;  // nothing to write (and `start` may lie past an empty output)
  char* base = static_cast<char*>(out->data()) + start * out->stride(static_cast<int>(dim)) * static_cast<int64_t>(out->element_size());
  Tensor view;
  if (!strided_view(ctx, op, base, out->dtype(), vs, Span<const int64_t>(strides, static_cast<size_t>(out->dim())), &view)) return;
  broadcast_copy(view, *src);
}

void op_masked_scatter(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::masked_scatter";
  if (!check_nargs(ctx, op, args, 4)) return;  // self, mask, source | out
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  Tensor* mask = self ? tensor_arg(ctx, op, args, 1, "mask") : nullptr;
  Tensor* source = mask ? tensor_arg(ctx, op, args, 2, "source") : nullptr;
  if (source == nullptr || !check_has_data(ctx, op, *self, "self") || !check_has_data(ctx, op, *mask, "mask") ||
      !check_has_data(ctx, op, *source, "source") || !check_dtype(ctx, op, *mask, "mask", ScalarType::Bool)) {
    return;
  }
  Shape shape = shape_of(*self);
  if (!broadcast_into(ctx, op, &shape, mask->sizes())) return;
  Tensor* out = output_arg(ctx, op, args, 3, self->dtype(), shape.span());
  if (out == nullptr) return;
  broadcast_copy(*out, *self);
  const size_t es = out->element_size();
  int64_t c[kMaxDims] = {}, mc[kMaxDims] = {}, sc[kMaxDims] = {};
  int64_t k = 0;
  for (int64_t e = 0; e < out->numel(); ++e, advance(c, shape.span())) {
    for (int d = 0; d < mask->dim(); ++d) mc[d] = mask->size(d) == 1 ? 0 : c[shape.dim - mask->dim() + d];
    if (*elem(*mask, mc) == 0) continue;
    if (k >= source->numel()) {
      fail(ctx, op, "'source' has fewer elements than 'mask' has true values");
      return;
    }
    int64_t rem = k++;
    for (int d = source->dim() - 1; d >= 0; --d) {
      sc[d] = rem % source->size(d);
      rem /= source->size(d);
    }
    convert(static_cast<char*>(out->data()) + e * static_cast<int64_t>(es), out->dtype(), elem(*source, sc), source->dtype());
  }
}

void op_flip(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::flip";
  if (!check_nargs(ctx, op, args, 3)) return;  // self, dims | out
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  Span<const int64_t> dims;
  if (self == nullptr || !check_has_data(ctx, op, *self, "self") || !int_list_arg(ctx, op, args, 1, "dims", &dims)) return;
  bool flip[kMaxDims] = {};
  for (int64_t d : dims) {
    int64_t w = 0;
    if (!wrap_dim(ctx, op, d, self->dim(), &w)) return;
    if (self->dim() > 0) flip[w] = true;
  }
  Tensor* out = output_arg(ctx, op, args, 2, self->dtype(), self->sizes());
  if (out == nullptr) return;
  const size_t es = out->element_size();
  char* o = static_cast<char*>(out->data());
  int64_t c[kMaxDims] = {}, s[kMaxDims] = {};
  for (int64_t e = 0; e < out->numel(); ++e, advance(c, self->sizes())) {
    for (int d = 0; d < self->dim(); ++d) s[d] = flip[d] ? self->size(d) - 1 - c[d] : c[d];
    std::memcpy(o + e * static_cast<int64_t>(es), elem(*self, s), es);
  }
}

// diagonal (a copy, not a view): self, offset, dim1, dim2 | out
void op_diagonal(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::diagonal";
  if (!check_nargs(ctx, op, args, 5)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  int64_t offset = 0, d1 = 0, d2 = 1;
  if (self == nullptr || !check_has_data(ctx, op, *self, "self") || !int_arg(ctx, op, args, 1, "offset", &offset) ||
      !int_arg(ctx, op, args, 2, "dim1", &d1) || !int_arg(ctx, op, args, 3, "dim2", &d2) ||
      !wrap_dim(ctx, op, d1, self->dim(), &d1) || !wrap_dim(ctx, op, d2, self->dim(), &d2)) {
    return;
  }
  if (d1 == d2) {
    fail(ctx, op, "dim1 and dim2 must differ");
    return;
  }
  const int64_t n1 = self->size(static_cast<int>(d1)), n2 = self->size(static_cast<int>(d2));
  // Offsets beyond either size select nothing; clamped first, so nothing below overflows.
  offset = std::min(std::max(offset, -n1), n2);
  const int64_t len = std::max<int64_t>(0, offset >= 0 ? std::min(n1, n2 - offset) : std::min(n1 + offset, n2));
  int64_t sizes[kMaxDims], strides[kMaxDims];
  int k = 0;
  for (int d = 0; d < self->dim(); ++d) {
    if (d == d1 || d == d2) continue;
    sizes[k] = self->size(d);
    strides[k++] = self->stride(d);
  }
  sizes[k] = len;
  strides[k++] = self->stride(static_cast<int>(d1)) + self->stride(static_cast<int>(d2));
  const Span<const int64_t> shape(sizes, static_cast<size_t>(k));
  Tensor* out = output_arg(ctx, op, args, 4, self->dtype(), shape);
  if (out == nullptr) return;
  const int64_t start = offset >= 0 ? offset * self->stride(static_cast<int>(d2)) : -offset * self->stride(static_cast<int>(d1));
  char* base = static_cast<char*>(self->data()) + (len > 0 ? start : 0) * static_cast<int64_t>(self->element_size());
  Tensor view;
  if (!strided_view(ctx, op, base, self->dtype(), shape, Span<const int64_t>(strides, static_cast<size_t>(k)), &view)) return;
  broadcast_copy(*out, view);
}

// unfold (a copy, not a view): self, dimension, size, step | out. Windows of `size` along
// `dimension`, `step` apart, as a new last dimension (timm's HaloNet and Tensor.unfold users).
void op_unfold(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::unfold";
  if (!check_nargs(ctx, op, args, 5)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  int64_t dim = 0, size = 0, step = 0;
  if (self == nullptr || !check_has_data(ctx, op, *self, "self") || !int_arg(ctx, op, args, 1, "dimension", &dim) ||
      !int_arg(ctx, op, args, 2, "size", &size) || !int_arg(ctx, op, args, 3, "step", &step)) {
    return;
  }
  // A 0-d tensor unfolds as a 1-element one (ATen's rule).
  const int rank = self->dim();
  if (rank >= kMaxDims) {
    fail(ctx, op, "the result would have more than " + std::to_string(kMaxDims) + " dimensions");
    return;
  }
  if (!wrap_dim(ctx, op, dim, std::max(rank, 1), &dim)) return;
  const int64_t extent = rank == 0 ? 1 : self->size(static_cast<int>(dim));
  if (size < 0 || size > extent) {
    fail(ctx, op, "size " + std::to_string(size) + " exceeds the size " + std::to_string(extent) + " of dimension " +
                      std::to_string(dim));
    return;
  }
  if (step <= 0) {
    fail(ctx, op, "step must be positive, not " + std::to_string(step));
    return;
  }
  int64_t sizes[kMaxDims], strides[kMaxDims];
  for (int d = 0; d < rank; ++d) {
    sizes[d] = self->size(d);
    strides[d] = self->stride(d);
  }
  const int64_t dim_stride = rank == 0 ? 1 : self->stride(static_cast<int>(dim));
  if (rank > 0) {
    sizes[dim] = (extent - size) / step + 1;
    // More than one window means step < extent, so the product stays inside the input's span.
    strides[dim] = sizes[dim] == 1 ? dim_stride : dim_stride * step;
  }
  sizes[rank] = size;
  strides[rank] = dim_stride;
  const Span<const int64_t> shape(sizes, static_cast<size_t>(rank + 1));
  Tensor* out = output_arg(ctx, op, args, 4, self->dtype(), shape);
  if (out == nullptr) return;
  if (out->numel() == 0) return;
  Tensor view;
  if (!strided_view(ctx, op, self->data(), self->dtype(), shape, Span<const int64_t>(strides, static_cast<size_t>(rank + 1)),
                    &view)) {
    return;
  }
  broadcast_copy(*out, view);
}

// as_strided (a copy): self, size, stride, storage_offset? | out. Reads self's memory as its
// storage, which is what torch.export's graphs mean for the contiguous tensors it applies to.
void op_as_strided(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::as_strided";
  if (!check_nargs(ctx, op, args, 5)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  Span<const int64_t> size, stride;
  int64_t offset = 0;
  if (self == nullptr || !check_has_data(ctx, op, *self, "self") || !int_list_arg(ctx, op, args, 1, "size", &size) ||
      !int_list_arg(ctx, op, args, 2, "stride", &stride) || !optional_int_arg(ctx, op, args, 3, "storage_offset", 0, &offset)) {
    return;
  }
  if (size.size() != stride.size() || size.size() > static_cast<size_t>(kMaxDims)) {
    fail(ctx, op, "size and stride must have the same length");
    return;
  }
  if (!self->is_contiguous()) {
    fail(ctx, op, "needs a contiguous input");
    return;
  }
  // One past the last element the view reads (checked: sizes and strides come from the file).
  int64_t extent = 0, end = 0;
  if (offset < 0 || !checked::extent(size.data(), stride.data(), static_cast<int>(size.size()), &extent) ||
      (extent > 0 && (!checked::add(offset, extent, &end) || end > self->numel()))) {
    fail(ctx, op, "the strided view (size " + shape_string(size) + ", stride " + shape_string(stride) + ", offset " +
                      std::to_string(offset) + ") reaches outside the input's " + std::to_string(self->numel()) +
                      " elements");
    return;
  }
  Tensor* out = output_arg(ctx, op, args, 4, self->dtype(), size);
  if (out == nullptr) return;
  Tensor view;
  if (!strided_view(ctx, op, static_cast<char*>(self->data()) + offset * static_cast<int64_t>(self->element_size()),
                    self->dtype(), size, stride, &view)) {
    return;
  }
  broadcast_copy(*out, view);
}

void op_copy(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::copy";
  if (!check_nargs(ctx, op, args, 4)) return;  // self, src, non_blocking | out
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  Tensor* src = self ? tensor_arg(ctx, op, args, 1, "src") : nullptr;
  if (src == nullptr || !check_has_data(ctx, op, *src, "src")) return;
  Shape check = shape_of(*self);
  if (!broadcast_into(ctx, op, &check, src->sizes()) || !same_sizes(check.span(), self->sizes())) {
    fail(ctx, op, "'src' of shape " + shape_string(src->sizes()) + " does not broadcast to " + shape_string(self->sizes()));
    return;
  }
  Tensor* out = strided_output_arg(ctx, op, args, 3, self->dtype(), self->sizes());
  if (out != nullptr) broadcast_copy(*out, *src);
}

void op_fill_scalar(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::fill.Scalar";
  if (!check_nargs(ctx, op, args, 3)) return;  // self, value | out
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  if (self == nullptr || !args[1]->is_scalar()) {
    if (self != nullptr) fail(ctx, op, "'value' must be a scalar");
    return;
  }
  Tensor* out = strided_output_arg(ctx, op, args, 2, self->dtype(), self->sizes());
  if (out == nullptr) return;
  alignas(8) unsigned char b[8];
  store_scalar(b, out->dtype(), args[1]->scalar_to_double(), args[1]->scalar_to_int(), !args[1]->is_double());
  Tensor one(b, out->dtype(), Span<const int64_t>());
  broadcast_copy(*out, one);
}

// empty.memory_format and empty_strided: the values are undefined; etrt gives zeros.
void zero_fill(KernelContext& ctx, Span<Value*> args, const char* op, size_t out_i) {
  if (!check_nargs(ctx, op, args, out_i + 1)) return;
  Span<const int64_t> size;
  ScalarType dt;
  if (!int_list_arg(ctx, op, args, 0, "size", &size) || !planned_dtype(ctx, op, args, out_i, &dt)) return;
  Tensor* out = strided_output_arg(ctx, op, args, out_i, dt, size);
  if (out == nullptr) return;
  alignas(8) unsigned char b[8] = {};
  Tensor zero(b, dt, Span<const int64_t>());
  broadcast_copy(*out, zero);
}
void op_empty_memory_format(KernelContext& ctx, Span<Value*> args) { zero_fill(ctx, args, "aten::empty.memory_format", 6); }
void op_empty_strided(KernelContext& ctx, Span<Value*> args) { zero_fill(ctx, args, "aten::empty_strided", 6); }
void op_empty_permuted(KernelContext& ctx, Span<Value*> args) { zero_fill(ctx, args, "aten::empty_permuted", 6); }

// native_dropout at inference (train false; the exporter refuses training): the input, and a
// mask that keeps everything.
void op_native_dropout(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::native_dropout";
  if (!check_nargs(ctx, op, args, 5)) return;  // input, p, train? | out, mask
  Tensor* self = tensor_arg(ctx, op, args, 0, "input");
  if (self == nullptr || !check_has_data(ctx, op, *self, "input")) return;
  if (!args[2]->is_none()) {
    bool train = false;
    if (!bool_arg(ctx, op, args, 2, "train", &train)) return;
    double p = 0.0;
    if (train && scalar_arg(ctx, op, args, 1, "p", &p) && p != 0.0) {
      fail(ctx, op, "dropout in training mode is not supported");
      return;
    }
  }
  Tensor* out = output_arg(ctx, op, args, 3, self->dtype(), self->sizes());
  Tensor* mask = out ? output_arg(ctx, op, args, 4, ScalarType::Bool, self->sizes(), "mask") : nullptr;
  if (mask == nullptr) return;
  copy_to_contiguous(*self, out->data());
  if (mask->numel() > 0) std::memset(mask->data(), 1, static_cast<size_t>(mask->numel()));
}

void op_reflection_pad1d(KernelContext& ctx, Span<Value*> args) { pad_impl(ctx, args, "aten::reflection_pad1d", 1, true); }
void op_reflection_pad2d(KernelContext& ctx, Span<Value*> args) { pad_impl(ctx, args, "aten::reflection_pad2d", 2, true); }
void op_reflection_pad3d(KernelContext& ctx, Span<Value*> args) { pad_impl(ctx, args, "aten::reflection_pad3d", 3, true); }
void op_replication_pad2d(KernelContext& ctx, Span<Value*> args) { pad_impl(ctx, args, "aten::replication_pad2d", 2, false); }
void op_replication_pad3d(KernelContext& ctx, Span<Value*> args) { pad_impl(ctx, args, "aten::replication_pad3d", 3, false); }

// avg_pool3d: self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override? | out
void op_avg_pool3d(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::avg_pool3d";
  if (!check_nargs(ctx, op, args, 8)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  int64_t k[3], s[3], p[3], spatial[3];
  const int64_t dl[3] = {1, 1, 1};
  bool include_pad = true, ceil_mode = false;
  int64_t divisor = 0;
  Volume v;
  if (self == nullptr || !floating_input(ctx, op, *self, "self") || !check_dtype(ctx, op, *self, "self", ScalarType::Float) ||
      !triple(ctx, op, args, 1, "kernel_size", 1, k) || !triple(ctx, op, args, 2, "stride", 0, s) ||
      !triple(ctx, op, args, 3, "padding", 0, p) || !bool_arg(ctx, op, args, 4, "ceil_mode", &ceil_mode) ||
      !bool_arg(ctx, op, args, 5, "count_include_pad", &include_pad) ||
      !optional_int_arg(ctx, op, args, 6, "divisor_override", 0, &divisor) || !volume(ctx, op, *self, &v)) {
    return;
  }
  if (s[0] == 0) std::copy(k, k + 3, s);
  if (!args[6]->is_none() && divisor == 0) {
    fail(ctx, op, "divisor_override must be non-zero");
    return;
  }
  if (!window3(ctx, op, v, k, s, p, dl, ceil_mode, spatial)) return;
  Tensor* out = volume_output(ctx, op, args, 7, *self, spatial, ScalarType::Float);
  if (out == nullptr) return;
  const float* x = contiguous_f32(ctx, op, *self);
  if (x == nullptr) return;
  const int n = out->dim();
  const int64_t od = out->size(n - 3), oh = out->size(n - 2), ow = out->size(n - 1);
  float* o = out->data_as<float>();
  for (int64_t pl = 0; pl < v.planes; ++pl) {
    for (int64_t z = 0; z < od; ++z) {
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t xx = 0; xx < ow; ++xx) {
          int64_t z0 = z * s[0] - p[0], y0 = y * s[1] - p[1], x0 = xx * s[2] - p[2];
          int64_t z1 = std::min(z0 + k[0], v.d + p[0]), y1 = std::min(y0 + k[1], v.h + p[1]), x1 = std::min(x0 + k[2], v.w + p[2]);
          const int64_t pool = (z1 - z0) * (y1 - y0) * (x1 - x0);
          z0 = std::max<int64_t>(z0, 0); y0 = std::max<int64_t>(y0, 0); x0 = std::max<int64_t>(x0, 0);
          z1 = std::min(z1, v.d); y1 = std::min(y1, v.h); x1 = std::min(x1, v.w);
          double sum = 0.0;
          for (int64_t a = z0; a < z1; ++a)
            for (int64_t b = y0; b < y1; ++b)
              for (int64_t c = x0; c < x1; ++c) sum += vol_at(v, x, pl, a, b, c);
          const int64_t div = divisor != 0 ? divisor : include_pad ? pool : (z1 - z0) * (y1 - y0) * (x1 - x0);
          o[((pl * od + z) * oh + y) * ow + xx] = static_cast<float>(sum / static_cast<double>(div));
        }
      }
    }
  }
}

// max_pool3d_with_indices: self, kernel_size, stride, padding, dilation, ceil_mode | out, indices
void op_max_pool3d_with_indices(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::max_pool3d_with_indices";
  if (!check_nargs(ctx, op, args, 8)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  int64_t k[3], s[3], p[3], dl[3], spatial[3];
  bool ceil_mode = false;
  Volume v;
  if (self == nullptr || !check_dtype(ctx, op, *self, "self", ScalarType::Float) || !check_has_data(ctx, op, *self, "self") ||
      !triple(ctx, op, args, 1, "kernel_size", 1, k) || !triple(ctx, op, args, 2, "stride", 0, s) ||
      !triple(ctx, op, args, 3, "padding", 0, p) || !triple(ctx, op, args, 4, "dilation", 1, dl) ||
      !bool_arg(ctx, op, args, 5, "ceil_mode", &ceil_mode) || !volume(ctx, op, *self, &v)) {
    return;
  }
  if (s[0] == 0) std::copy(k, k + 3, s);
  if (!window3(ctx, op, v, k, s, p, dl, ceil_mode, spatial)) return;
  Tensor* out = volume_output(ctx, op, args, 6, *self, spatial, ScalarType::Float);
  Tensor* ind = out ? volume_output(ctx, op, args, 7, *self, spatial, ScalarType::Long, "indices") : nullptr;
  if (ind == nullptr) return;
  const float* x = contiguous_f32(ctx, op, *self);
  if (x == nullptr) return;
  const int n = out->dim();
  const int64_t od = out->size(n - 3), oh = out->size(n - 2), ow = out->size(n - 1);
  float* o = out->data_as<float>();
  int64_t* oi = ind->data_as<int64_t>();
  for (int64_t pl = 0; pl < v.planes; ++pl) {
    for (int64_t z = 0; z < od; ++z) {
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t xx = 0; xx < ow; ++xx) {
          double best = -std::numeric_limits<double>::infinity();
          int64_t bi = -1;
          for (int64_t a = 0; a < k[0]; ++a) {
            const int64_t zz = z * s[0] - p[0] + a * dl[0];
            if (zz < 0 || zz >= v.d) continue;
            for (int64_t b = 0; b < k[1]; ++b) {
              const int64_t yy = y * s[1] - p[1] + b * dl[1];
              if (yy < 0 || yy >= v.h) continue;
              for (int64_t c = 0; c < k[2]; ++c) {
                const int64_t xc = xx * s[2] - p[2] + c * dl[2];
                if (xc < 0 || xc >= v.w) continue;
                const double val = vol_at(v, x, pl, zz, yy, xc);
                if (bi < 0 || val > best || std::isnan(val)) {
                  if (bi >= 0 && std::isnan(best)) continue;
                  best = val;
                  bi = (zz * v.h + yy) * v.w + xc;
                }
              }
            }
          }
          const int64_t e = ((pl * od + z) * oh + y) * ow + xx;
          o[e] = static_cast<float>(best);
          oi[e] = bi;
        }
      }
    }
  }
}

// _adaptive_avg_pool3d: self, output_size | out
void op_adaptive_avg_pool3d(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::_adaptive_avg_pool3d";
  if (!check_nargs(ctx, op, args, 3)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  Volume v;
  int64_t spatial[3];
  if (self == nullptr || !check_dtype(ctx, op, *self, "self", ScalarType::Float) || !check_has_data(ctx, op, *self, "self") ||
      !volume(ctx, op, *self, &v) || !triple(ctx, op, args, 1, "output_size", 1, spatial)) {
    return;
  }
  // ATen's rule. An empty window would divide by zero, and an empty extent still walks the
  // others (a [8, 8, 1e8, 0] input: 1e8 steps per output).
  if (v.d == 0 || v.h == 0 || v.w == 0) {
    fail(ctx, op, "expects non-zero spatial sizes, got 'self' of shape " + shape_string(self->sizes()));
    return;
  }
  const int64_t extent[3] = {v.d, v.h, v.w};
  for (int j = 0; j < 3; ++j) {
    int64_t span = 0;  // the window bounds multiply an output index by the input extent
    if (spatial[j] < 1 || spatial[j] > checked::kMaxElements || !checked::mul(spatial[j] + 1, extent[j], &span)) {
      fail(ctx, op, "invalid output_size " + shape_string(Span<const int64_t>(spatial, 3)));
      return;
    }
  }
  Tensor* out = volume_output(ctx, op, args, 2, *self, spatial, ScalarType::Float);
  if (out == nullptr) return;
  const float* x = contiguous_f32(ctx, op, *self);
  if (x == nullptr) return;
  const int n = out->dim();
  const int64_t od = out->size(n - 3), oh = out->size(n - 2), ow = out->size(n - 1);
  auto lo = [](int64_t i, int64_t o, int64_t in) { return (i * in) / o; };
  auto hi = [](int64_t i, int64_t o, int64_t in) { return ((i + 1) * in + o - 1) / o; };
  float* o = out->data_as<float>();
  for (int64_t pl = 0; pl < v.planes; ++pl)
    for (int64_t z = 0; z < od; ++z)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xx = 0; xx < ow; ++xx) {
          double sum = 0.0;
          const int64_t z0 = lo(z, od, v.d), z1 = hi(z, od, v.d), y0 = lo(y, oh, v.h), y1 = hi(y, oh, v.h);
          const int64_t x0 = lo(xx, ow, v.w), x1 = hi(xx, ow, v.w);
          for (int64_t a = z0; a < z1; ++a)
            for (int64_t b = y0; b < y1; ++b)
              for (int64_t c = x0; c < x1; ++c) sum += vol_at(v, x, pl, a, b, c);
          o[((pl * od + z) * oh + y) * ow + xx] = static_cast<float>(sum / static_cast<double>((z1 - z0) * (y1 - y0) * (x1 - x0)));
        }
}

double p_norm_term(double d, double p) {
  d = std::fabs(d);
  if (p == 0) return d != 0 ? 1 : 0;
  if (p == 1) return d;
  if (p == 2) return d * d;
  return std::pow(d, p);
}
double p_norm_finish(double acc, double p) {
  if (p == 0 || p == 1 || std::isinf(p)) return acc;
  if (p == 2) return std::sqrt(acc);
  return std::pow(acc, 1.0 / p);
}
double p_dist(const float* a, const float* b, int64_t m, double p) {
  double acc = 0.0;
  for (int64_t i = 0; i < m; ++i) {
    if (std::isinf(p)) acc = std::max(acc, static_cast<double>(std::fabs(a[i] - b[i])));
    else acc += p_norm_term(static_cast<double>(a[i]) - b[i], p);
  }
  return p_norm_finish(acc, p);
}

// _cdist_forward: x1 [.., P, M], x2 [.., R, M], p, compute_mode? | out [.., P, R]
void op_cdist_forward(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::_cdist_forward";
  if (!check_nargs(ctx, op, args, 5)) return;
  Tensor* x1 = tensor_arg(ctx, op, args, 0, "x1");
  Tensor* x2 = x1 ? tensor_arg(ctx, op, args, 1, "x2") : nullptr;
  double p = 2;
  if (x2 == nullptr || !check_dtype(ctx, op, *x1, "x1", ScalarType::Float) || !check_dtype(ctx, op, *x2, "x2", ScalarType::Float) ||
      !check_has_data(ctx, op, *x1, "x1") || !check_has_data(ctx, op, *x2, "x2") || !scalar_arg(ctx, op, args, 2, "p", &p)) {
    return;
  }
  if (x1->dim() < 2 || x2->dim() < 2 || x1->size(x1->dim() - 1) != x2->size(x2->dim() - 1)) {
    fail(ctx, op, "x1 and x2 must be at least 2-d with the same last dimension");
    return;
  }
  Shape batch;
  batch.dim = x1->dim() - 2;
  for (int i = 0; i < batch.dim; ++i) batch.sizes[i] = x1->size(i);
  if (!broadcast_into(ctx, op, &batch, Span<const int64_t>(x2->sizes().data(), x2->sizes().size() - 2))) return;
  const int64_t P = x1->size(x1->dim() - 2), R = x2->size(x2->dim() - 2), M = x1->size(x1->dim() - 1);
  Shape oshape = batch;
  oshape.sizes[oshape.dim++] = P;
  oshape.sizes[oshape.dim++] = R;
  Tensor* out = output_arg(ctx, op, args, 4, ScalarType::Float, oshape.span());
  if (out == nullptr) return;
  const float* a = contiguous_f32(ctx, op, *x1);
  const float* b = a ? contiguous_f32(ctx, op, *x2) : nullptr;
  if (b == nullptr) return;
  float* o = out->data_as<float>();
  int64_t c[kMaxDims] = {};
  for (int64_t bi = 0; bi < batch.numel(); ++bi, advance(c, batch.span())) {
    int64_t ia = 0, ib = 0;
    for (int d = 0; d < batch.dim; ++d) {
      const int da = x1->dim() - 2 - batch.dim + d, db = x2->dim() - 2 - batch.dim + d;
      if (da >= 0) ia = ia * x1->size(da) + (x1->size(da) == 1 ? 0 : c[d]);
      if (db >= 0) ib = ib * x2->size(db) + (x2->size(db) == 1 ? 0 : c[d]);
    }
    for (int64_t i = 0; i < P; ++i)
      for (int64_t j = 0; j < R; ++j)
        o[(bi * P + i) * R + j] = static_cast<float>(p_dist(a + (ia * P + i) * M, b + (ib * R + j) * M, M, p));
  }
}

// _pdist_forward: self [N, M], p | out [N (N - 1) / 2]
void op_pdist_forward(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::_pdist_forward";
  if (!check_nargs(ctx, op, args, 3)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  double p = 2;
  if (self == nullptr || !check_dtype(ctx, op, *self, "self", ScalarType::Float) || !check_has_data(ctx, op, *self, "self") ||
      !scalar_arg(ctx, op, args, 1, "p", &p)) {
    return;
  }
  if (self->dim() != 2) {
    fail(ctx, op, "expects a 2-d input");
    return;
  }
  const int64_t n = self->size(0), m = self->size(1);
  const int64_t size = n * (n - 1) / 2;
  Tensor* out = output_arg(ctx, op, args, 2, ScalarType::Float, Span<const int64_t>(&size, 1));
  if (out == nullptr) return;
  const float* x = contiguous_f32(ctx, op, *self);
  if (x == nullptr) return;
  float* o = out->data_as<float>();
  int64_t k = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) o[k++] = static_cast<float>(p_dist(x + i * m, x + j * m, m, p));
}

// _embedding_bag: weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights?,
// include_last_offset, padding_idx | output, offset2bag, bag_size, max_indices
void op_embedding_bag(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::_embedding_bag";
  if (!check_nargs(ctx, op, args, 13)) return;
  Tensor* weight = tensor_arg(ctx, op, args, 0, "weight");
  Tensor *indices = nullptr, *offsets = nullptr, *psw = nullptr;
  int64_t mode = 0, padding_idx = -1;
  bool include_last = false;
  if (weight == nullptr || !check_dtype(ctx, op, *weight, "weight", ScalarType::Float) || !check_has_data(ctx, op, *weight, "weight") ||
      !index_tensor(ctx, op, args, 1, "indices", &indices) || !index_tensor(ctx, op, args, 2, "offsets", &offsets) ||
      !int_arg(ctx, op, args, 4, "mode", &mode) || !optional_tensor_arg(ctx, op, args, 6, "per_sample_weights", &psw) ||
      !bool_arg(ctx, op, args, 7, "include_last_offset", &include_last) ||
      !optional_int_arg(ctx, op, args, 8, "padding_idx", -1, &padding_idx)) {
    return;
  }
  if (weight->dim() != 2 || indices->dim() != 1 || offsets->dim() != 1 || mode < 0 || mode > 2) {
    fail(ctx, op, "expects a 2-d weight, 1-d indices and offsets, and mode sum, mean or max");
    return;
  }
  const int64_t rows = weight->size(0), dim = weight->size(1), ni = indices->numel();
  if (psw != nullptr) {
    if (!check_dtype(ctx, op, *psw, "per_sample_weights", ScalarType::Float) ||
        !check_has_data(ctx, op, *psw, "per_sample_weights")) {
      return;
    }
    if (psw->dim() != 1 || psw->size(0) != ni) {
      fail(ctx, op, "per_sample_weights " + shape_string(psw->sizes()) + " must hold one weight per index (" +
                        std::to_string(ni) + ")");
      return;
    }
  }
  const int64_t bags = include_last ? std::max<int64_t>(offsets->numel() - 1, 0) : offsets->numel();
  const int64_t oshape[2] = {bags, dim};
  Tensor* out = output_arg(ctx, op, args, 9, ScalarType::Float, Span<const int64_t>(oshape, 2));
  if (out == nullptr) return;
  Tensor* outs[3];
  for (int i = 0; i < 3; ++i) {
    outs[i] = writable_output(ctx, op, args, 10 + static_cast<size_t>(i), "aux");
    if (outs[i] == nullptr || outs[i]->dtype() != indices->dtype() || !outs[i]->is_contiguous()) {
      if (outs[i] != nullptr) fail(ctx, op, "auxiliary outputs must be contiguous and typed as 'indices'");
      return;
    }
    for (int64_t e = 0; e < outs[i]->numel(); ++e) {
      store_scalar(static_cast<char*>(outs[i]->data()) + e * static_cast<int64_t>(outs[i]->element_size()), outs[i]->dtype(), 0, 0, true);
    }
  }
  const float* w = contiguous_f32(ctx, op, *weight);
  if (w == nullptr) return;
  float* o = out->data_as<float>();
  auto idx_at = [&](const Tensor& t, int64_t i) {
    return load_int64(static_cast<const char*>(t.data()) + i * t.stride(0) * static_cast<int64_t>(t.element_size()), t.dtype());
  };
  auto aux = [&](int which, int64_t i, int64_t v) {
    if (i < outs[which]->numel()) {
      store_scalar(static_cast<char*>(outs[which]->data()) + i * static_cast<int64_t>(outs[which]->element_size()),
                   outs[which]->dtype(), static_cast<double>(v), v, true);
    }
  };
  for (int64_t b = 0; b < bags; ++b) {
    const int64_t begin = idx_at(*offsets, b);
    const int64_t end = b + 1 < offsets->numel() ? idx_at(*offsets, b + 1) : ni;
    if (begin < 0 || end > ni || begin > end) {
      fail(ctx, op, "offsets must be increasing and within the indices");
      return;
    }
    float* row = o + b * dim;
    int64_t count = 0;
    for (int64_t j = 0; j < dim; ++j) row[j] = mode == 2 ? -std::numeric_limits<float>::infinity() : 0.0f;
    for (int64_t i = begin; i < end; ++i) {
      const int64_t r = idx_at(*indices, i);
      if (r < 0 || r >= rows) {
        fail(ctx, op, "index " + std::to_string(r) + " is out of range for " + std::to_string(rows) + " rows");
        return;
      }
      aux(0, i, b);
      if (r == padding_idx) continue;
      const float scale = psw ? static_cast<float>(load_as_double(static_cast<const char*>(psw->data()) + i * psw->stride(0) * 4, ScalarType::Float)) : 1.0f;
      for (int64_t j = 0; j < dim; ++j) {
        const float x = w[r * dim + j] * scale;
        if (mode == 2) {
          if (x > row[j] || count == 0) {
            row[j] = x;
            aux(2, b * dim + j, r);
          }
        } else {
          row[j] += x;
        }
      }
      ++count;
    }
    if (count == 0) {
      for (int64_t j = 0; j < dim; ++j) row[j] = 0.0f;
    } else if (mode == 1) {
      for (int64_t j = 0; j < dim; ++j) row[j] /= static_cast<float>(count);
    }
    aux(1, b, count);
  }
}

// col2im: self [N?, C*kh*kw, L], output_size, kernel_size, dilation, padding, stride | out
void op_col2im(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::col2im";
  if (!check_nargs(ctx, op, args, 7)) return;
  Tensor* self = tensor_arg(ctx, op, args, 0, "self");
  Span<const int64_t> osz, ks, dl, pd, sd;
  if (self == nullptr || !check_dtype(ctx, op, *self, "self", ScalarType::Float) || !check_has_data(ctx, op, *self, "self") ||
      !int_list_arg(ctx, op, args, 1, "output_size", &osz) || !int_list_arg(ctx, op, args, 2, "kernel_size", &ks) ||
      !int_list_arg(ctx, op, args, 3, "dilation", &dl) || !int_list_arg(ctx, op, args, 4, "padding", &pd) ||
      !int_list_arg(ctx, op, args, 5, "stride", &sd)) {
    return;
  }
  if ((self->dim() != 2 && self->dim() != 3) || osz.size() != 2 || ks.size() != 2 || dl.size() != 2 || pd.size() != 2 || sd.size() != 2) {
    fail(ctx, op, "expects a 2-d or 3-d input and pairs of sizes");
    return;
  }
  const bool batched = self->dim() == 3;
  const int64_t n = batched ? self->size(0) : 1, ck = self->size(batched ? 1 : 0), L = self->size(batched ? 2 : 1);
  const int64_t H = osz[0], W = osz[1];
  // The sliding blocks over the (padded) output: ATen's formula, through the checked helper.
  int64_t bh = 0, bw = 0, blocks = 0;
  if (!checked::window(H, ks[0], pd[0], pd[0], sd[0], dl[0], false, &bh) ||
      !checked::window(W, ks[1], pd[1], pd[1], sd[1], dl[1], false, &bw) || !checked::mul(bh, bw, &blocks)) {
    fail(ctx, op, "kernel_size, dilation, padding and stride do not fit output_size " + shape_string(osz));
    return;
  }
  const int64_t kk = ks[0] * ks[1];  // each at most checked::kMaxWindow
  if (ck % kk != 0) {
    fail(ctx, op, "the input's second dimension is not a multiple of the kernel size");
    return;
  }
  const int64_t c = ck / kk;
  if (blocks != L) {
    fail(ctx, op, "the input has " + std::to_string(L) + " blocks, expected " + std::to_string(blocks));
    return;
  }
  int64_t shape[4] = {n, c, H, W};
  Tensor* out = output_arg(ctx, op, args, 6, ScalarType::Float, batched ? Span<const int64_t>(shape, 4) : Span<const int64_t>(shape + 1, 3));
  if (out == nullptr) return;
  const float* x = contiguous_f32(ctx, op, *self);
  if (x == nullptr) return;
  float* o = out->data_as<float>();
  std::fill(o, o + out->numel(), 0.0f);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < ck; ++ch) {
      const int64_t cc = ch / kk, ki = (ch / ks[1]) % ks[0], kj = ch % ks[1];
      for (int64_t l = 0; l < L; ++l) {
        const int64_t y = (l / bw) * sd[0] - pd[0] + ki * dl[0], xx = (l % bw) * sd[1] - pd[1] + kj * dl[1];
        if (y < 0 || y >= H || xx < 0 || xx >= W) continue;
        o[((b * c + cc) * H + y) * W + xx] += x[(b * ck + ch) * L + l];
      }
    }
}

// grid_sampler_2d: input [N, C, H, W], grid [N, Ho, Wo, 2], interpolation_mode (0 bilinear,
// 1 nearest, 2 bicubic), padding_mode (0 zeros, 1 border, 2 reflection), align_corners | out
void op_grid_sampler_2d(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::grid_sampler_2d";
  if (!check_nargs(ctx, op, args, 6)) return;
  Tensor* input = tensor_arg(ctx, op, args, 0, "input");
  Tensor* grid = input ? tensor_arg(ctx, op, args, 1, "grid") : nullptr;
  int64_t interp = 0, padding = 0;
  bool align = false;
  if (grid == nullptr || !check_dtype(ctx, op, *input, "input", ScalarType::Float) || !check_dtype(ctx, op, *grid, "grid", ScalarType::Float) ||
      !check_has_data(ctx, op, *input, "input") || !check_has_data(ctx, op, *grid, "grid") ||
      !int_arg(ctx, op, args, 2, "interpolation_mode", &interp) || !int_arg(ctx, op, args, 3, "padding_mode", &padding) ||
      !bool_arg(ctx, op, args, 4, "align_corners", &align)) {
    return;
  }
  if (input->dim() != 4 || grid->dim() != 4 || grid->size(3) != 2 || grid->size(0) != input->size(0) || interp < 0 ||
      interp > 2 || padding < 0 || padding > 2) {
    fail(ctx, op, "expects input [N, C, H, W], grid [N, H', W', 2] and known modes");
    return;
  }
  const int64_t N = input->size(0), C = input->size(1), H = input->size(2), W = input->size(3);
  const int64_t Ho = grid->size(1), Wo = grid->size(2);
  const int64_t shape[4] = {N, C, Ho, Wo};
  Tensor* out = output_arg(ctx, op, args, 5, ScalarType::Float, Span<const int64_t>(shape, 4));
  if (out == nullptr) return;
  const float* x = contiguous_f32(ctx, op, *input);
  const float* g = x ? contiguous_f32(ctx, op, *grid) : nullptr;
  if (g == nullptr) return;
  float* o = out->data_as<float>();
  const int pm = static_cast<int>(padding);
  auto at = [&](int64_t n, int64_t c, int64_t y, int64_t xx) -> double {
    if (y < 0 || y >= H || xx < 0 || xx >= W) return 0.0;
    return x[((n * C + c) * H + y) * W + xx];
  };
  // bicubic reads taps outside the image through the padding rule
  auto tap = [&](int64_t n, int64_t c, int64_t y, int64_t xx) -> double {
    if (pm != 0) {
      double fy = static_cast<double>(y), fx = static_cast<double>(xx);
      if (pm == 2) {
        fy = align ? reflect_coord(fy, 0, 2.0 * static_cast<double>(H - 1)) : reflect_coord(fy, -1, 2.0 * static_cast<double>(H) - 1);
        fx = align ? reflect_coord(fx, 0, 2.0 * static_cast<double>(W - 1)) : reflect_coord(fx, -1, 2.0 * static_cast<double>(W) - 1);
      }
      y = std::min<int64_t>(std::max<int64_t>(static_cast<int64_t>(fy), 0), H - 1);
      xx = std::min<int64_t>(std::max<int64_t>(static_cast<int64_t>(fx), 0), W - 1);
    }
    return at(n, c, y, xx);
  };
  for (int64_t n = 0; n < N; ++n)
    for (int64_t i = 0; i < Ho; ++i)
      for (int64_t j = 0; j < Wo; ++j) {
        const float* gp = g + ((n * Ho + i) * Wo + j) * 2;
        for (int64_t c = 0; c < C; ++c) {
          double r = 0.0;
          if (interp == 2) {
            const double gx = align ? (gp[0] + 1) / 2 * static_cast<double>(W - 1) : ((gp[0] + 1) * static_cast<double>(W) - 1) / 2;
            const double gy = align ? (gp[1] + 1) / 2 * static_cast<double>(H - 1) : ((gp[1] + 1) * static_cast<double>(H) - 1) / 2;
            const double fx = std::floor(gx), fy = std::floor(gy), tx = gx - fx, ty = gy - fy;
            const double a = -0.75;
            const double wx[4] = {cubic2(tx + 1, a), cubic1(tx, a), cubic1(1 - tx, a), cubic2(2 - tx, a)};
            const double wy[4] = {cubic2(ty + 1, a), cubic1(ty, a), cubic1(1 - ty, a), cubic2(2 - ty, a)};
            for (int p = 0; p < 4; ++p)
              for (int q = 0; q < 4; ++q)
                r += wy[p] * wx[q] * tap(n, c, tap_index(fy) - 1 + p, tap_index(fx) - 1 + q);
          } else {
            const double gx = grid_coord(gp[0], W, pm, align), gy = grid_coord(gp[1], H, pm, align);
            if (interp == 1) {
              r = at(n, c, grid_nearest(gy), grid_nearest(gx));
            } else {
              const double fx = std::floor(gx), fy = std::floor(gy), tx = gx - fx, ty = gy - fy;
              const int64_t x0 = tap_index(fx), y0 = tap_index(fy);
              r = at(n, c, y0, x0) * (1 - tx) * (1 - ty) + at(n, c, y0, x0 + 1) * tx * (1 - ty) +
                  at(n, c, y0 + 1, x0) * (1 - tx) * ty + at(n, c, y0 + 1, x0 + 1) * tx * ty;
            }
          }
          o[((n * C + c) * Ho + i) * Wo + j] = static_cast<float>(r);
        }
      }
}

namespace {

// Batch norm of a float input [N, C, ...] with weight and bias (each optional). With batch
// statistics (`training`), writes them to save_mean / save_invstd ([C]) and, when running
// statistics are given, their momentum updates (the unbiased variance, as ATen) to
// new_mean / new_var. Without, normalises with the running statistics.
struct BatchNormArgs {
  const Tensor* input;
  Tensor *weight, *bias;
  Tensor *running_mean, *running_var;
  bool training;
  double momentum, eps;
  Tensor *out, *save_mean, *save_invstd, *new_mean, *new_var;
};

void batch_norm(KernelContext& ctx, const char* op, const BatchNormArgs& a) {
  const Tensor& input = *a.input;
  const int64_t N = input.size(0), C = input.size(1), S = input.numel() / std::max<int64_t>(N * C, 1);
  const float* x = contiguous_f32(ctx, op, input);
  const float* w = a.weight && x ? contiguous_f32(ctx, op, *a.weight) : nullptr;
  const float* b = a.bias && x ? contiguous_f32(ctx, op, *a.bias) : nullptr;
  const float* rm = a.running_mean && x ? contiguous_f32(ctx, op, *a.running_mean) : nullptr;
  const float* rv = a.running_var && x ? contiguous_f32(ctx, op, *a.running_var) : nullptr;
  if (x == nullptr || (a.weight && !w) || (a.bias && !b) || (a.running_mean && !rm) || (a.running_var && !rv)) return;
  float* o = a.out->data_as<float>();
  for (int64_t c = 0; c < C; ++c) {
    double m, var;
    const double cnt = static_cast<double>(N * S);
    if (a.training) {
      double s = 0.0, sq = 0.0;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < S; ++i) s += x[(n * C + c) * S + i];
      m = s / cnt;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < S; ++i) {
          const double d = x[(n * C + c) * S + i] - m;
          sq += d * d;
        }
      var = sq / cnt;
    } else {
      m = rm[c];
      var = rv[c];
    }
    const double r = 1.0 / std::sqrt(var + a.eps);
    if (a.training) {
      a.save_mean->data_as<float>()[c] = static_cast<float>(m);
      a.save_invstd->data_as<float>()[c] = static_cast<float>(r);
    }
    if (a.new_mean != nullptr) {
      const double unbiased = cnt > 1 ? var * cnt / (cnt - 1) : var;
      a.new_mean->data_as<float>()[c] =
          static_cast<float>(a.training ? (1 - a.momentum) * rm[c] + a.momentum * m : rm[c]);
      a.new_var->data_as<float>()[c] =
          static_cast<float>(a.training ? (1 - a.momentum) * rv[c] + a.momentum * unbiased : rv[c]);
    }
    const double sc = w ? w[c] : 1.0, sh = b ? b[c] : 0.0;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t i = 0; i < S; ++i) {
        const int64_t e = (n * C + c) * S + i;
        o[e] = static_cast<float>((x[e] - m) * r * sc + sh);
      }
  }
}

// The input, weight? and bias? of a batch-norm call (args 0-2), checked.
bool batch_norm_inputs(KernelContext& ctx, const char* op, Span<Value*> args, BatchNormArgs* a) {
  Tensor* input = tensor_arg(ctx, op, args, 0, "input");
  if (input == nullptr || !check_dtype(ctx, op, *input, "input", ScalarType::Float) ||
      !check_has_data(ctx, op, *input, "input") || !optional_tensor_arg(ctx, op, args, 1, "weight", &a->weight) ||
      !optional_tensor_arg(ctx, op, args, 2, "bias", &a->bias)) {
    return false;
  }
  if (input->dim() < 2) {
    fail(ctx, op, "expects at least 2 dimensions");
    return false;
  }
  const int64_t C = input->size(1);
  for (const Tensor* t : {a->weight, a->bias}) {  // read for every channel
    if (t != nullptr && (t->dtype() != ScalarType::Float || t->dim() != 1 || t->size(0) != C)) {
      fail(ctx, op, "weight and bias must be Float [" + std::to_string(C) + "]");
      return false;
    }
  }
  a->input = input;
  return true;
}

}  // namespace

// _native_batch_norm_legit.no_stats: input, weight?, bias?, training, momentum, eps |
// out, save_mean, save_invstd. Normalises with the batch's own statistics.
void op_batch_norm_no_stats(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::_native_batch_norm_legit.no_stats";
  if (!check_nargs(ctx, op, args, 9)) return;
  BatchNormArgs a{};
  a.training = true;
  if (!batch_norm_inputs(ctx, op, args, &a) || !scalar_arg(ctx, op, args, 5, "eps", &a.eps)) return;
  const int64_t C = a.input->size(1);
  a.out = output_arg(ctx, op, args, 6, ScalarType::Float, a.input->sizes());
  a.save_mean = a.out ? output_arg(ctx, op, args, 7, ScalarType::Float, Span<const int64_t>(&C, 1), "save_mean") : nullptr;
  a.save_invstd = a.save_mean ? output_arg(ctx, op, args, 8, ScalarType::Float, Span<const int64_t>(&C, 1), "save_invstd") : nullptr;
  if (a.save_invstd != nullptr) batch_norm(ctx, op, a);
}

// _native_batch_norm_legit_functional: input, weight?, bias?, running_mean, running_var,
// training, momentum, eps | out, save_mean, save_invstd, running_mean_out, running_var_out.
// What torch.export makes of batch norm in training mode: the running statistics' updates are
// outputs. In eval mode save_mean and save_invstd are empty and the statistics pass through.
void op_batch_norm_functional(KernelContext& ctx, Span<Value*> args) {
  const char* op = "aten::_native_batch_norm_legit_functional";
  if (!check_nargs(ctx, op, args, 13)) return;
  BatchNormArgs a{};
  a.running_mean = tensor_arg(ctx, op, args, 3, "running_mean");
  a.running_var = a.running_mean ? tensor_arg(ctx, op, args, 4, "running_var") : nullptr;
  if (a.running_var == nullptr || !batch_norm_inputs(ctx, op, args, &a) ||
      !bool_arg(ctx, op, args, 5, "training", &a.training) || !scalar_arg(ctx, op, args, 6, "momentum", &a.momentum) ||
      !scalar_arg(ctx, op, args, 7, "eps", &a.eps)) {
    return;
  }
  const int64_t C = a.input->size(1), saved = a.training ? C : 0;
  for (const Tensor* t : {a.running_mean, a.running_var}) {
    if (t->dtype() != ScalarType::Float || t->dim() != 1 || t->size(0) != C) {
      fail(ctx, op, "running statistics must be Float [" + std::to_string(C) + "]");
      return;
    }
  }
  a.out = output_arg(ctx, op, args, 8, ScalarType::Float, a.input->sizes());
  a.save_mean = a.out ? output_arg(ctx, op, args, 9, ScalarType::Float, Span<const int64_t>(&saved, 1), "save_mean") : nullptr;
  a.save_invstd = a.save_mean ? output_arg(ctx, op, args, 10, ScalarType::Float, Span<const int64_t>(&saved, 1), "save_invstd") : nullptr;
  a.new_mean = a.save_invstd ? output_arg(ctx, op, args, 11, ScalarType::Float, Span<const int64_t>(&C, 1), "running_mean_out") : nullptr;
  a.new_var = a.new_mean ? output_arg(ctx, op, args, 12, ScalarType::Float, Span<const int64_t>(&C, 1), "running_var_out") : nullptr;
  if (a.new_var != nullptr) batch_norm(ctx, op, a);
}

}  // namespace kernels
}  // namespace etrt
