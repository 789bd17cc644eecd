// Shared helpers for the CPU kernels: argument checks that report through ctx.fail, shape
// arithmetic, and a strided/broadcasting element loop. Private to libetrt_kernels_optimized.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "common/checked.h"
#include "common/layout.h"
#include "etrt/runtime/error.h"
#include "etrt/runtime/half.h"
#include "etrt/runtime/kernel.h"
#include "etrt/runtime/parallel.h"
#include "etrt/runtime/span.h"
#include "etrt/runtime/tensor.h"
#include "etrt/runtime/value.h"
#include "isa_dispatch.h"


namespace etrt {
namespace kernels {

constexpr int kMaxDims = Tensor::kMaxDims;

// ---------------------------------------------------------------------------------------------
// Errors

inline void fail(KernelContext& ctx, const char* op, const std::string& message) {
  ctx.fail(Error(ErrorCode::InvalidArgument, std::string(op) + ": " + message));
}

inline std::string shape_string(Span<const int64_t> sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i != 0) s += ", ";
    s += std::to_string(sizes[i]);
  }
  return s + "]";
}

// True when args has exactly `n` entries, none null; fails the call otherwise.
inline bool check_nargs(KernelContext& ctx, const char* op, Span<Value*> args, size_t n) {
  if (args.size() != n) {
    fail(ctx, op, "expected " + std::to_string(n) + " arguments (inputs then outputs), got " +
                      std::to_string(args.size()));
    return false;
  }
  for (size_t i = 0; i < n; ++i) {
    if (args[i] == nullptr) {
      fail(ctx, op, "argument " + std::to_string(i) + " is missing");
      return false;
    }
  }
  return true;
}

// The tensor of args[i], or nullptr after failing the call.
inline Tensor* tensor_arg(KernelContext& ctx, const char* op, Span<Value*> args, size_t i,
                          const char* name) {
  if (!args[i]->is_tensor()) {
    fail(ctx, op, std::string("'") + name + "' must be a tensor, got " + to_string(args[i]->tag()));
    return nullptr;
  }
  return &args[i]->to_tensor();
}

// Optional tensor: sets *out to nullptr for None. False after failing the call.
inline bool optional_tensor_arg(KernelContext& ctx, const char* op, Span<Value*> args, size_t i,
                                const char* name, Tensor** out) {
  if (args[i]->is_none()) {
    *out = nullptr;
    return true;
  }
  *out = tensor_arg(ctx, op, args, i, name);
  return *out != nullptr;
}

inline bool int_arg(KernelContext& ctx, const char* op, Span<Value*> args, size_t i, const char* name,
                    int64_t* out) {
  if (!args[i]->is_int()) {
    fail(ctx, op, std::string("'") + name + "' must be an int, got " + to_string(args[i]->tag()));
    return false;
  }
  *out = args[i]->to_int();
  return true;
}

// Optional int: `fallback` for None.
inline bool optional_int_arg(KernelContext& ctx, const char* op, Span<Value*> args, size_t i,
                             const char* name, int64_t fallback, int64_t* out) {
  if (args[i]->is_none()) {
    *out = fallback;
    return true;
  }
  return int_arg(ctx, op, args, i, name, out);
}

inline bool bool_arg(KernelContext& ctx, const char* op, Span<Value*> args, size_t i, const char* name,
                     bool* out) {
  if (args[i]->is_bool()) {
    *out = args[i]->to_bool();
    return true;
  }
  if (args[i]->is_int()) {  // some exporters store bools as ints
    *out = args[i]->to_int() != 0;
    return true;
  }
  fail(ctx, op, std::string("'") + name + "' must be a bool, got " + to_string(args[i]->tag()));
  return false;
}

inline bool scalar_arg(KernelContext& ctx, const char* op, Span<Value*> args, size_t i,
                       const char* name, double* out) {
  if (!args[i]->is_scalar()) {
    fail(ctx, op, std::string("'") + name + "' must be a scalar, got " + to_string(args[i]->tag()));
    return false;
  }
  *out = args[i]->scalar_to_double();
  return true;
}

inline bool int_list_arg(KernelContext& ctx, const char* op, Span<Value*> args, size_t i,
                         const char* name, Span<const int64_t>* out) {
  if (args[i]->is_int_list()) {
    *out = args[i]->to_int_list();
    return true;
  }
  fail(ctx, op, std::string("'") + name + "' must be an int list, got " + to_string(args[i]->tag()));
  return false;
}

inline bool check_dtype(KernelContext& ctx, const char* op, const Tensor& t, const char* name,
                        ScalarType expected) {
  if (t.dtype() != expected) {
    fail(ctx, op, std::string("'") + name + "' must be " + to_string(expected) + ", got " +
                      to_string(t.dtype()));
    return false;
  }
  return true;
}

// Wraps a possibly negative dimension index into [0, ndim); fails the call when out of range.
// ATen treats a 0-d tensor as having one wrappable dimension.
inline bool wrap_dim(KernelContext& ctx, const char* op, int64_t dim, int64_t ndim, int64_t* out) {
  int64_t n = ndim <= 0 ? 1 : ndim;
  if (dim < -n || dim >= n) {
    fail(ctx, op, "dimension " + std::to_string(dim) + " is out of range for a tensor of " +
                      std::to_string(ndim) + " dimensions");
    return false;
  }
  *out = dim < 0 ? dim + n : dim;
  return true;
}

inline bool same_sizes(Span<const int64_t> a, Span<const int64_t> b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

// The one gate of every output a kernel writes (the helpers below and any kernel fetching an
// output itself come through it): a tensor, not read-only memory (a constant, or a view of
// one), with memory behind it unless empty. nullptr after failing the call.
inline Tensor* writable_output(KernelContext& ctx, const char* op, Span<Value*> args, size_t i, const char* name) {
  if (!args[i]->is_tensor()) {
    fail(ctx, op, std::string("output '") + name + "' must be a tensor, got " + to_string(args[i]->tag()));
    return nullptr;
  }
  Tensor* out = &args[i]->to_tensor();
  if (out->is_read_only()) {
    fail(ctx, op, std::string("output '") + name + "' is read-only memory (a constant)");
    return nullptr;
  }
  if (out->data() == nullptr && out->numel() > 0) {
    fail(ctx, op, std::string("output '") + name + "' has no memory");
    return nullptr;
  }
  return out;
}

// A dynamic output's planned sizes are its capacity (the runtime restores them before the
// kernel runs): it takes `sizes`, each at most the planned one, laid out in the planned
// dimension order. False after failing the call.
inline bool resize_dynamic(KernelContext& ctx, const char* op, Tensor* out, Span<const int64_t> sizes, const char* name) {
  const int nd = out->dim();
  bool fits = static_cast<int>(sizes.size()) == nd;
  for (int d = 0; fits && d < nd; ++d) fits = sizes[d] >= 0 && sizes[d] <= out->size(d);
  if (!fits) {
    fail(ctx, op, std::string("output '") + name + "' has shape " + shape_string(sizes) +
                      ", beyond the shape planned for it: " + shape_string(out->sizes()));
    return false;
  }
  int order[kMaxDims];  // outermost first, as the planned strides have it
  for (int d = 0; d < nd; ++d) {
    int k = d;
    for (; k > 0 && out->stride(order[k - 1]) < out->stride(d); --k) order[k] = order[k - 1];
    order[k] = d;
  }
  int64_t strides[kMaxDims];
  int64_t stride = 1;
  for (int k = nd - 1; k >= 0; --k) {
    strides[order[k]] = stride;
    stride *= sizes[order[k]] > 1 ? sizes[order[k]] : 1;
  }
  Error err = out->set_sizes_and_strides(sizes, Span<const int64_t>(strides, static_cast<size_t>(nd)));
  if (!err.ok()) {
    fail(ctx, op, err.message());
    return false;
  }
  return true;
}

// Checks a planned (non-view) output: tensor, dtype, sizes as computed (within the planned ones
// for a dynamic output, which takes them), memory, and a contiguous layout unless `any_layout`
// (the exporter plans the outputs of ANY_LAYOUT_OPS in whatever dense layout torch gave them).
inline Tensor* planned_output(KernelContext& ctx, const char* op, Span<Value*> args, size_t i,
                              ScalarType dtype, Span<const int64_t> sizes, bool any_layout,
                              const char* name) {
  Tensor* out = tensor_arg(ctx, op, args, i, name);
  if (out == nullptr) return nullptr;
  if (out->dtype() != dtype) {
    fail(ctx, op, std::string("output '") + name + "' must be " + to_string(dtype) + ", planned as " +
                      to_string(out->dtype()));
    return nullptr;
  }
  if (out->is_dynamic()) {
    if (!resize_dynamic(ctx, op, out, sizes, name)) return nullptr;
  } else if (!same_sizes(out->sizes(), sizes)) {
    fail(ctx, op, std::string("output '") + name + "' has shape " + shape_string(sizes) +
                      " but was planned as " + shape_string(out->sizes()));
    return nullptr;
  }
  if (!any_layout && !out->is_contiguous()) {
    fail(ctx, op, std::string("output '") + name + "' must be contiguous");
    return nullptr;
  }
  return writable_output(ctx, op, args, i, name);
}

using layout::channels_last_dense;

inline Tensor* output_arg(KernelContext& ctx, const char* op, Span<Value*> args, size_t i,
                          ScalarType dtype, Span<const int64_t> sizes, const char* name = "out") {
  return planned_output(ctx, op, args, i, dtype, sizes, false, name);
}

// The dtype the exporter planned for output args[i]: ops whose result type follows ATen's type
// promotion (or a dtype= argument) read it rather than work it out again. False after failing.
inline bool planned_dtype(KernelContext& ctx, const char* op, Span<Value*> args, size_t i, ScalarType* out) {
  if (!args[i]->is_tensor()) {
    fail(ctx, op, std::string("'out' must be a tensor, got ") + to_string(args[i]->tag()));
    return false;
  }
  *out = args[i]->to_tensor().dtype();
  return true;
}

// For kernels that write through strides: any layout of the output's memory will do.
inline Tensor* strided_output_arg(KernelContext& ctx, const char* op, Span<Value*> args, size_t i,
                                  ScalarType dtype, Span<const int64_t> sizes) {
  return planned_output(ctx, op, args, i, dtype, sizes, true, "out");
}

// Input tensors must have memory (a view op's input always does once it has run).
inline bool check_has_data(KernelContext& ctx, const char* op, const Tensor& t, const char* name) {
  if (t.data() == nullptr && t.numel() > 0) {
    fail(ctx, op, std::string("'") + name + "' has no memory");
    return false;
  }
  return true;
}

// A Float tensor with memory behind it, or nullptr after failing the call.
inline Tensor* float_tensor_arg(KernelContext& ctx, const char* op, Span<Value*> args, size_t i,
                                const char* name) {
  Tensor* t = tensor_arg(ctx, op, args, i, name);
  if (t == nullptr || !check_dtype(ctx, op, *t, name, ScalarType::Float) || !check_has_data(ctx, op, *t, name)) {
    return nullptr;
  }
  return t;
}

// ---------------------------------------------------------------------------------------------
// Shapes

struct Shape {
  int dim = 0;
  int64_t sizes[kMaxDims] = {};
  Span<const int64_t> span() const { return {sizes, static_cast<size_t>(dim)}; }
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < dim; ++i) n *= sizes[i];
    return n;
  }
};

inline Shape shape_of(const Tensor& t) {
  Shape s;
  s.dim = t.dim();
  for (int i = 0; i < s.dim; ++i) s.sizes[i] = t.size(i);
  return s;
}

// Broadcasts `b` into `a` (numpy rules). Fails the call when the shapes are incompatible.
inline bool broadcast_into(KernelContext& ctx, const char* op, Shape* a, Span<const int64_t> b) {
  int nd = a->dim > static_cast<int>(b.size()) ? a->dim : static_cast<int>(b.size());
  if (nd > kMaxDims) {
    fail(ctx, op, "too many dimensions");
    return false;
  }
  Shape r;
  r.dim = nd;
  for (int i = 0; i < nd; ++i) {
    int ia = a->dim - nd + i;
    int ib = static_cast<int>(b.size()) - nd + i;
    int64_t sa = ia >= 0 ? a->sizes[ia] : 1;
    int64_t sb = ib >= 0 ? b[ib] : 1;
    if (sa != sb && sa != 1 && sb != 1) {
      fail(ctx, op, "shapes " + shape_string(a->span()) + " and " + shape_string(b) +
                        " cannot be broadcast together");
      return false;
    }
    r.sizes[i] = sa == 1 ? sb : sa;
  }
  *a = r;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Strided loops
//
// A Loop walks N operands over one iteration shape. Operand strides are in bytes and may be 0
// (broadcast or a reduction target). Dimensions that are contiguous for every operand are merged,
// so a contiguous op becomes one inner loop over all elements.

template <int N>
struct Loop {
  int dim = 0;                    // after coalescing; at least 1 unless empty
  int64_t sizes[kMaxDims] = {};   // outermost first
  int64_t strides[N][kMaxDims] = {};
  char* base[N] = {};
  bool empty = false;

  int64_t inner_size() const { return dim == 0 ? 1 : sizes[dim - 1]; }
  int64_t rows() const {
    int64_t r = 1;
    for (int i = 0; i + 1 < dim; ++i) r *= sizes[i];
    return r;
  }
  const int64_t* inner_strides(int64_t* out) const {
    for (int k = 0; k < N; ++k) out[k] = dim == 0 ? 0 : strides[k][dim - 1];
    return out;
  }
};

// Operands broadcast to `shape` (right-aligned; size-1 or missing dimensions get stride 0).
// An operand whose size disagrees with the shape (and is not 1) is a caller bug: callers
// check broadcasting first.
template <int N>
Loop<N> make_loop(Span<const int64_t> shape, const Tensor* const (&ops)[N]) {
  Loop<N> loop;
  int nd = static_cast<int>(shape.size());
  int64_t st[N][kMaxDims];
  for (int k = 0; k < N; ++k) {
    const Tensor& t = *ops[k];
    loop.base[k] = static_cast<char*>(t.data());
    int64_t es = static_cast<int64_t>(t.element_size());
    for (int i = 0; i < nd; ++i) {
      int ti = t.dim() - nd + i;
      st[k][i] = (ti >= 0 && t.size(ti) != 1) ? t.stride(ti) * es : 0;
    }
  }
  // Walk memory in order: dimensions sorted by the output's strides, largest first (a stable
  // insertion sort; ties keep their logical order). A reduction's output has zero strides, so it
  // follows its input's instead. Every element is still visited once, and a reduction sums each
  // output's inputs in the same order when its input is contiguous; channels-last operands then
  // become one contiguous run instead of a channel-stride gather.
  int key = 0;
  if (N > 1) {
    for (int i = 0; i < nd; ++i) {
      if (shape[i] != 1 && st[0][i] == 0) key = 1;
    }
  }
  int perm[kMaxDims];
  for (int i = 0; i < nd; ++i) {
    int j = i;
    const int64_t s = st[key][i] < 0 ? -st[key][i] : st[key][i];
    while (j > 0) {
      const int64_t t = st[key][perm[j - 1]];
      if ((t < 0 ? -t : t) >= s) break;
      perm[j] = perm[j - 1];
      --j;
    }
    perm[j] = i;
  }
  // Drop size-1 dimensions, then merge neighbours that are contiguous for every operand.
  int d = 0;
  for (int ii = 0; ii < nd; ++ii) {
    const int i = perm[ii];
    if (shape[i] == 0) loop.empty = true;
    if (shape[i] == 1) continue;
    if (d > 0) {
      bool merge = true;
      for (int k = 0; k < N && merge; ++k) merge = st[k][i] * shape[i] == loop.strides[k][d - 1];
      if (merge) {
        loop.sizes[d - 1] *= shape[i];
        for (int k = 0; k < N; ++k) loop.strides[k][d - 1] = st[k][i];
        continue;
      }
    }
    loop.sizes[d] = shape[i];
    for (int k = 0; k < N; ++k) loop.strides[k][d] = st[k][i];
    ++d;
  }
  if (d == 0) {  // a scalar: one inner loop of one element
    loop.sizes[0] = 1;
    for (int k = 0; k < N; ++k) loop.strides[k][0] = 0;
    d = 1;
  }
  loop.dim = d;
  return loop;
}

// Calls inner(ptrs, inner_strides_bytes, n) for rows [row_begin, row_end) of the loop.
template <int N, typename F>
void run_rows(const Loop<N>& loop, int64_t row_begin, int64_t row_end, F& inner) {
  const int outer = loop.dim - 1;
  int64_t idx[kMaxDims] = {};
  char* ptr[N];
  for (int k = 0; k < N; ++k) ptr[k] = loop.base[k];
  int64_t r = row_begin;
  for (int i = outer - 1; i >= 0; --i) {
    idx[i] = r % loop.sizes[i];
    r /= loop.sizes[i];
    for (int k = 0; k < N; ++k) ptr[k] += idx[i] * loop.strides[k][i];
  }
  int64_t istr[N];
  loop.inner_strides(istr);
  const int64_t n = loop.inner_size();
  for (int64_t row = row_begin; row < row_end; ++row) {
    inner(ptr, istr, n);
    for (int i = outer - 1; i >= 0; --i) {
      for (int k = 0; k < N; ++k) ptr[k] += loop.strides[k][i];
      if (++idx[i] < loop.sizes[i]) break;
      for (int k = 0; k < N; ++k) ptr[k] -= loop.strides[k][i] * loop.sizes[i];
      idx[i] = 0;
    }
  }
}

// Elements below which splitting across threads costs more than it saves. Inside a program run
// the pool's workers wait spinning (ETRT_POOL_WAIT=run), so a hand-over costs a few
// microseconds, not a wake-up; and an elementwise op split like the parallel op before it reads
// mostly what its own core wrote, where one thread alone reads half its input from the other
// core (MobileNetV3-small's hardswish after a depthwise convolution, 47040 floats: 5.2 us at one
// thread, 14.4 us on the caller at two when it stayed whole).
constexpr int64_t kParallelGrainElements = 8192;

// Runs the loop, split across threads by rows when it is big and `parallel` (the operands'
// writes must not overlap between rows, so reductions pass false). image_row > 0: the loop runs
// over a channels-last image in memory order, image_row elements an image row (W * C); it is
// then split by image rows as the NHWC depthwise convolution splits its output
// (parallel_for(0, rows, 1)), so the pool hands each thread the rows its core wrote there
// (MobileNetV3's and EfficientNet-B0's activations and squeeze-excitation muls read what the
// depthwise convolution before them wrote).
template <int N, typename F>
void run_loop(const Loop<N>& loop, F&& inner, bool parallel = true, int64_t image_row = 0) {
  if (loop.empty) return;
  const int64_t rows = loop.rows();
  const int64_t n = loop.inner_size();
  // rows * n is the loop's element count, bounded by its tensors; saturated all the same.
  if (!parallel || checked::mul_sat(rows, n) < 2 * kParallelGrainElements || parallel_num_threads() <= 1) {
    run_rows(loop, 0, rows, inner);
    return;
  }
  if (image_row > 0 && rows == 1 && n % image_row == 0 && n / image_row > 1) {
    int64_t istr[N];
    loop.inner_strides(istr);
    parallel_for(0, n / image_row, 1, [&](int64_t b, int64_t e) {
      char* ptr[N];
      for (int k = 0; k < N; ++k) ptr[k] = loop.base[k] + b * image_row * istr[k];
      inner(ptr, istr, (e - b) * image_row);
    });
    return;
  }
  const int64_t per = image_row > 0 && n > 0 && image_row % n == 0 ? image_row / n : 0;
  if (per > 0 && rows > 1 && rows % per == 0 && rows / per > 1) {
    parallel_for(0, rows / per, 1, [&](int64_t b, int64_t e) { run_rows(loop, b * per, e * per, inner); });
    return;
  }
  if (rows == 1) {  // one long run (a contiguous op): split the run itself
    int64_t istr[N];
    loop.inner_strides(istr);
    parallel_for(0, n, kParallelGrainElements, [&](int64_t b, int64_t e) {
      char* ptr[N];
      for (int k = 0; k < N; ++k) ptr[k] = loop.base[k] + b * istr[k];
      inner(ptr, istr, e - b);
    });
    return;
  }
  int64_t grain = kParallelGrainElements / (n > 0 ? n : 1);
  if (grain < 1) grain = 1;
  parallel_for(0, rows, grain, [&](int64_t b, int64_t e) { run_rows(loop, b, e, inner); });
}

// Calls fn(index, row) for each element of an int64 or int32 index tensor of any strides (an
// expanded or transposed view included), `row` the start of its row in `out`, a contiguous
// [*indices, width] tensor; serially, in memory order, stopping at the first fn that returns false.
// Returns whether every call returned true.
template <typename F>
bool for_each_index_row(const Tensor& indices, const Tensor& out, int64_t width, F&& fn) {
  int64_t rstrides[kMaxDims];
  int64_t stride = width;
  for (int i = indices.dim() - 1; i >= 0; --i) {
    rstrides[i] = stride;
    stride *= indices.size(i);
  }
  Tensor rows = out;  // the output with the indices' shape, a row an element
  rows.set_sizes_and_strides(indices.sizes(), Span<const int64_t>(rstrides, static_cast<size_t>(indices.dim())));
  const Tensor* ops[2] = {&rows, &indices};
  const bool is_long = indices.dtype() == ScalarType::Long;
  bool ok = true;
  run_loop(make_loop(indices.sizes(), ops), [&](char* const* p, const int64_t* st, int64_t n) {
    for (int64_t i = 0; i < n && ok; ++i) {
      int64_t idx;
      if (is_long) {
        std::memcpy(&idx, p[1] + i * st[1], 8);
      } else {
        int32_t v;
        std::memcpy(&v, p[1] + i * st[1], 4);
        idx = v;
      }
      ok = fn(idx, p[0] + i * st[0]);
    }
  }, /*parallel=*/false);
  return ok;
}

// Splits [0, n) across threads when n * cost_per_item is worth it.
template <typename F>
void parallel_chunks(int64_t n, int64_t cost_per_item, F&& fn) {
  if (n <= 0) return;
  if (cost_per_item < 1) cost_per_item = 1;
  if (checked::mul_sat(n, cost_per_item) < 2 * kParallelGrainElements || parallel_num_threads() <= 1) {
    fn(int64_t{0}, n);
    return;
  }
  int64_t grain = kParallelGrainElements / cost_per_item;
  if (grain < 1) grain = 1;
  parallel_for(0, n, grain, [&](int64_t b, int64_t e) { fn(b, e); });
}

// ---------------------------------------------------------------------------------------------
// Data access

// One element of any dtype read as double.
inline double load_as_double(const void* p, ScalarType t) {
  switch (t) {
    case ScalarType::Float: { float v; std::memcpy(&v, p, 4); return v; }
    case ScalarType::Double: { double v; std::memcpy(&v, p, 8); return v; }
    case ScalarType::Long: { int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case ScalarType::Int: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case ScalarType::Bool: return *static_cast<const uint8_t*>(p) != 0 ? 1.0 : 0.0;
    case ScalarType::Byte: return *static_cast<const uint8_t*>(p);
    case ScalarType::Char: return *static_cast<const int8_t*>(p);
    case ScalarType::Half: { uint16_t v; std::memcpy(&v, p, 2); return half_to_float(v); }
    case ScalarType::BFloat16: { uint16_t v; std::memcpy(&v, p, 2); return bfloat16_to_float(v); }
  }
  return 0.0;
}

// `iv` is used for integer types so int64 values keep every bit. Floating values convert to
// integers as checked::to_int does (defined for NaN and values out of range).
inline void store_scalar(void* p, ScalarType t, double dv, int64_t iv, bool is_integral) {
  auto narrow = [&]() -> int32_t {  // int64 keeps its low bits, as a C cast does on x86
    return is_integral ? static_cast<int32_t>(static_cast<uint32_t>(iv)) : checked::to_int<int32_t>(dv);
  };
  switch (t) {
    case ScalarType::Float: { float v = static_cast<float>(is_integral ? static_cast<double>(iv) : dv); std::memcpy(p, &v, 4); break; }
    case ScalarType::Double: { double v = is_integral ? static_cast<double>(iv) : dv; std::memcpy(p, &v, 8); break; }
    case ScalarType::Long: { int64_t v = is_integral ? iv : checked::to_int<int64_t>(dv); std::memcpy(p, &v, 8); break; }
    case ScalarType::Int: { int32_t v = narrow(); std::memcpy(p, &v, 4); break; }
    case ScalarType::Bool: *static_cast<uint8_t*>(p) = (is_integral ? iv != 0 : dv != 0.0) ? 1 : 0; break;
    case ScalarType::Byte: *static_cast<uint8_t*>(p) = static_cast<uint8_t>(narrow()); break;
    case ScalarType::Char: *static_cast<int8_t*>(p) = static_cast<int8_t>(narrow()); break;
    // Through float, as ATen rounds: a double is first rounded to float32.
    case ScalarType::Half: { uint16_t v = float_to_half(static_cast<float>(is_integral ? static_cast<double>(iv) : dv)); std::memcpy(p, &v, 2); break; }
    case ScalarType::BFloat16: { uint16_t v = float_to_bfloat16(static_cast<float>(is_integral ? static_cast<double>(iv) : dv)); std::memcpy(p, &v, 2); break; }
  }
}

inline bool integral_type(ScalarType t) {
  return t == ScalarType::Long || t == ScalarType::Int || t == ScalarType::Bool ||
         t == ScalarType::Byte || t == ScalarType::Char;
}

inline int64_t load_int64(const char* p, ScalarType t) {
  switch (t) {
    case ScalarType::Long: { int64_t v; std::memcpy(&v, p, 8); return v; }
    case ScalarType::Int: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case ScalarType::Char: return *reinterpret_cast<const int8_t*>(p);
    default: return *reinterpret_cast<const uint8_t*>(p);  // Bool, Byte
  }
}

// One element of type `from` at src stored as `to` at dst, as a C cast converts.
inline void convert(char* dst, ScalarType to, const char* src, ScalarType from) {
  const bool integral = integral_type(from);
  store_scalar(dst, to, load_as_double(src, from), integral ? load_int64(src, from) : 0, integral);
}

// Which dimensions a reduction removes: `dims` (wrapped, each once), or all when empty.
bool reduced_dims(KernelContext& ctx, const char* op, Span<const int64_t> dims, int nd, bool* reduced);

// A reduction's shapes: `keep` has 1 at each reduced dimension, `out` drops them unless keepdim;
// `count` is how many elements each result reduces. False after failing the call.
bool reduction_shapes(KernelContext& ctx, const char* op, const Tensor& self, Span<const int64_t> dims,
                      bool keepdim, Shape* keep, Shape* out, int64_t* count);

// Contiguous float data of `t`: its own memory when contiguous, else a packed copy in temp
// memory. nullptr after failing the call (out of scratch memory).
const float* contiguous_f32(KernelContext& ctx, const char* op, const Tensor& t);

// Copies any strided tensor into contiguous memory `dst` (same dtype, same element count).
void copy_to_contiguous(const Tensor& src, void* dst);

}  // namespace kernels
}  // namespace etrt
