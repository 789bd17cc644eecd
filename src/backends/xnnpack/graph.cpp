#include "graph.h"

#include <cmath>
#include <initializer_list>
#include <limits>
#include <string>

#include "common/checked.h"

namespace etrt {
namespace backends {
namespace xnnpack {
namespace {

constexpr uint32_t kBlobVersion = 1;
constexpr uint64_t kDataAlignment = 64;
constexpr uint64_t kMaxValues = 1u << 20;
// Group counts and channels per group beyond this are nonsense.
constexpr uint32_t kMaxParam = 1u << 16;

std::string str(uint64_t v) { return std::to_string(v); }

Error invalid(const std::string& msg) { return Error(ErrorCode::InvalidProgram, "XNNPACK blob: " + msg); }

// XNNPACK's subgraph API changed between the versions etrt builds against: Debian 12's (2022)
// has one define function per operator; later ones (2024, the manylinux_2_28 wheel's) define
// them through xnn_define_unary / xnn_define_binary / xnn_define_static_reduce and deprecate
// the others. ETRT_XNNPACK_UNARY_BINARY is CMake's compile check of the header found.
#if ETRT_XNNPACK_UNARY_BINARY
xnn_status define_binary(xnn_subgraph_t sg, fb::BinaryOp op, float lo, float hi, uint32_t a, uint32_t b,
                         uint32_t out) {
  xnn_binary_operator kind = xnn_binary_invalid;
  switch (op) {
    case fb::BinaryOp::Add: kind = xnn_binary_add; break;
    case fb::BinaryOp::Subtract: kind = xnn_binary_subtract; break;
    case fb::BinaryOp::Multiply: kind = xnn_binary_multiply; break;
    case fb::BinaryOp::Divide: kind = xnn_binary_divide; break;
  }
  const xnn_binary_params params = {lo, hi};
  return xnn_define_binary(sg, kind, &params, a, b, out, 0);
}

xnn_status define_clamp(xnn_subgraph_t sg, float lo, float hi, uint32_t in, uint32_t out) {
  xnn_unary_params params{};
  params.clamp.min = lo;
  params.clamp.max = hi;
  return xnn_define_unary(sg, xnn_unary_clamp, &params, in, out, 0);
}

xnn_status define_sigmoid(xnn_subgraph_t sg, uint32_t in, uint32_t out) {
  return xnn_define_unary(sg, xnn_unary_sigmoid, nullptr, in, out, 0);
}

xnn_status define_hardswish(xnn_subgraph_t sg, uint32_t in, uint32_t out) {
  return xnn_define_unary(sg, xnn_unary_hardswish, nullptr, in, out, 0);
}

// The mean over H and W of an NHWC tensor, keeping them as 1s (what the 2022 node's output
// has): without XNN_FLAG_KEEP_DIMS the 2024 reduction drops them. Bounds other than
// [-inf, inf] clamp an internal value of the output's shape into the output.
xnn_status define_global_average_pooling_2d(xnn_subgraph_t sg, float lo, float hi, size_t ndim, const size_t* dims,
                                            uint32_t in, uint32_t out) {
  const size_t axes[2] = {ndim - 3, ndim - 2};
  const bool clamp = lo != -std::numeric_limits<float>::infinity() || hi != std::numeric_limits<float>::infinity();
  uint32_t mean = out;
  if (clamp) {
    xnn_status s =
        xnn_define_tensor_value(sg, xnn_datatype_fp32, ndim, dims, nullptr, XNN_INVALID_VALUE_ID, 0, &mean);
    if (s != xnn_status_success) return s;
  }
  xnn_status s = xnn_define_static_reduce(sg, xnn_reduce_mean, 2, axes, in, mean, XNN_FLAG_KEEP_DIMS);
  if (s != xnn_status_success || !clamp) return s;
  return define_clamp(sg, lo, hi, mean, out);
}
#else
#ifdef XNN_DEPRECATED  // 2024's header has it, 2022's does not
#error "xnnpack.h is newer than CMake's check of it found: the check read another xnnpack.h"
#endif
xnn_status define_binary(xnn_subgraph_t sg, fb::BinaryOp op, float lo, float hi, uint32_t a, uint32_t b,
                         uint32_t out) {
  switch (op) {
    case fb::BinaryOp::Add: return xnn_define_add2(sg, lo, hi, a, b, out, 0);
    case fb::BinaryOp::Subtract: return xnn_define_subtract(sg, lo, hi, a, b, out, 0);
    case fb::BinaryOp::Multiply: return xnn_define_multiply2(sg, lo, hi, a, b, out, 0);
    case fb::BinaryOp::Divide: return xnn_define_divide(sg, lo, hi, a, b, out, 0);
  }
  return xnn_status_invalid_parameter;
}

xnn_status define_clamp(xnn_subgraph_t sg, float lo, float hi, uint32_t in, uint32_t out) {
  return xnn_define_clamp(sg, lo, hi, in, out, 0);
}

xnn_status define_sigmoid(xnn_subgraph_t sg, uint32_t in, uint32_t out) { return xnn_define_sigmoid(sg, in, out, 0); }

xnn_status define_hardswish(xnn_subgraph_t sg, uint32_t in, uint32_t out) {
  return xnn_define_hardswish(sg, in, out, 0);
}

xnn_status define_global_average_pooling_2d(xnn_subgraph_t sg, float lo, float hi, size_t /*ndim*/,
                                            const size_t* /*dims*/, uint32_t in, uint32_t out) {
  return xnn_define_global_average_pooling_2d(sg, lo, hi, in, out, 0);
}
#endif

struct ValueInfo {
  fb::ValueKind kind = fb::ValueKind::Internal;
  fb::DataType datatype = fb::DataType::Float32;
  float scale = 0;      // QInt8
  int32_t zero_point = 0;
  const flatbuffers::Vector<float>* channel_scales = nullptr;  // QCInt8 / QCInt32
  uint32_t channel_dim = 0;
  int ndim = 0;
  size_t dims[XNN_MAX_TENSOR_DIMS] = {};
  uint64_t numel = 1;
  bool available = false;  // readable by the next node
  bool written = false;    // by a node
  bool read = false;       // by a node
};

class Checker {
 public:
  Checker(const fb::Graph& g, std::vector<ValueInfo>& values) : g_(g), values_(values) {}

  // Bytes of the indirection buffers (one pointer per output pixel and window tap) XNNPACK
  // builds for the windowed nodes checked so far.
  uint64_t indirection_bytes() const { return indirection_; }

  Error check_nodes() {
    if (g_.nodes() == nullptr || g_.nodes()->size() == 0) return invalid("the graph has no nodes");
    for (flatbuffers::uoffset_t i = 0; i < g_.nodes()->size(); ++i) {
      const fb::Node* node = g_.nodes()->Get(i);
      where_ = "node " + str(i);
      if (node == nullptr) return invalid(where_ + " is missing");
      // A union whose type is set but whose table is absent (the verifier allows it).
      if (node->node_type() != fb::NodeUnion::NONE && node->node() == nullptr) {
        return invalid(where_ + " has type " + str(static_cast<uint8_t>(node->node_type())) + " but no table");
      }
      if (std::isnan(node->output_min()) || std::isnan(node->output_max())) {
        return invalid(where_ + ": NaN output bound");
      }
      ETRT_RETURN_IF_ERROR(check_node(*node));
      ETRT_RETURN_IF_ERROR(check_types(*node));
    }
    return Error();
  }

 private:
  Error check_node(const fb::Node& node) {
    switch (node.node_type()) {
      case fb::NodeUnion::FullyConnected: return fully_connected(*node.node_as_FullyConnected());
      case fb::NodeUnion::Conv2d: return conv2d(*node.node_as_Conv2d());
      case fb::NodeUnion::MaxPool2d: return max_pool2d(*node.node_as_MaxPool2d());
      case fb::NodeUnion::Clamp: return same_shape(node.node_as_Clamp()->input(), node.node_as_Clamp()->output());
      case fb::NodeUnion::Binary: return binary(*node.node_as_Binary());
      case fb::NodeUnion::Softmax:
        return same_shape(node.node_as_Softmax()->input(), node.node_as_Softmax()->output());
      case fb::NodeUnion::Reshape: return reshape(*node.node_as_Reshape());
      case fb::NodeUnion::Sigmoid:
        return same_shape(node.node_as_Sigmoid()->input(), node.node_as_Sigmoid()->output());
      case fb::NodeUnion::Hardswish:
        return same_shape(node.node_as_Hardswish()->input(), node.node_as_Hardswish()->output());
      case fb::NodeUnion::GlobalAvgPool2d: return global_avg_pool2d(*node.node_as_GlobalAvgPool2d());
      case fb::NodeUnion::AvgPool2d: return avg_pool2d(*node.node_as_AvgPool2d());
      default: return invalid(where_ + " has an unknown type");
    }
  }

  bool is(uint32_t id, fb::DataType t) const { return values_[id].datatype == t; }

  // Every value of the node float32: what all nodes but the int8 ones below read and write.
  Error float_only(std::initializer_list<int64_t> ids) {
    for (int64_t id : ids) {
      if (id >= 0 && !is(static_cast<uint32_t>(id), fb::DataType::Float32)) {
        return invalid(where_ + ": value " + str(static_cast<uint64_t>(id)) + " must be float32 for this node");
      }
    }
    return Error();
  }

  // The datatypes a node combines (its shapes are checked already, so every id exists): all
  // float32, or one of the int8 forms Debian's XNNPACK runs.
  Error check_types(const fb::Node& node) {
    switch (node.node_type()) {
      case fb::NodeUnion::Conv2d: {
        const fb::Conv2d& n = *node.node_as_Conv2d();
        if (is(n.input(), fb::DataType::Float32)) return float_only({n.filter(), n.bias(), n.output()});
        return quantized_conv2d(n);
      }
      case fb::NodeUnion::Binary: {
        const fb::Binary& n = *node.node_as_Binary();
        if (is(n.input1(), fb::DataType::Float32)) return float_only({n.input2(), n.output()});
        if (n.op() != fb::BinaryOp::Add) return invalid(where_ + ": only Add takes QInt8 values");
        return qint8_only({n.input1(), n.input2(), n.output()});
      }
      case fb::NodeUnion::MaxPool2d: {
        const fb::MaxPool2d& n = *node.node_as_MaxPool2d();
        if (is(n.input(), fb::DataType::Float32)) return float_only({n.output()});
        ETRT_RETURN_IF_ERROR(qint8_only({n.input(), n.output()}));
        const ValueInfo &x = values_[n.input()], &y = values_[n.output()];
        if (x.scale != y.scale || x.zero_point != y.zero_point) {
          return invalid(where_ + ": int8 max pooling keeps its input's scale and zero point");
        }
        return Error();
      }
      case fb::NodeUnion::GlobalAvgPool2d: {
        const fb::GlobalAvgPool2d& n = *node.node_as_GlobalAvgPool2d();
        if (is(n.input(), fb::DataType::Float32)) return float_only({n.output()});
        // The 2024 API clamps a mean through a float32 value of its own: none for int8.
        if (node.output_min() != -std::numeric_limits<float>::infinity() ||
            node.output_max() != std::numeric_limits<float>::infinity()) {
          return invalid(where_ + ": int8 global average pooling takes no output bounds");
        }
        return qint8_only({n.input(), n.output()});
      }
      case fb::NodeUnion::FullyConnected: {
        const fb::FullyConnected& n = *node.node_as_FullyConnected();
        return float_only({n.input(), n.filter(), n.bias(), n.output()});
      }
      case fb::NodeUnion::Clamp: return float_only({node.node_as_Clamp()->input(), node.node_as_Clamp()->output()});
      case fb::NodeUnion::Softmax:
        return float_only({node.node_as_Softmax()->input(), node.node_as_Softmax()->output()});
      case fb::NodeUnion::Reshape:
        return float_only({node.node_as_Reshape()->input(), node.node_as_Reshape()->output()});
      case fb::NodeUnion::Sigmoid:
        return float_only({node.node_as_Sigmoid()->input(), node.node_as_Sigmoid()->output()});
      case fb::NodeUnion::Hardswish:
        return float_only({node.node_as_Hardswish()->input(), node.node_as_Hardswish()->output()});
      case fb::NodeUnion::AvgPool2d:
        return float_only({node.node_as_AvgPool2d()->input(), node.node_as_AvgPool2d()->output()});
      default: return invalid(where_ + " has an unknown type");
    }
  }

  Error qint8_only(std::initializer_list<uint32_t> ids) {
    for (uint32_t id : ids) {
      if (!is(id, fb::DataType::QInt8)) return invalid(where_ + ": value " + str(id) + " must be QInt8 like its input");
    }
    return Error();
  }

  // QInt8 in and out, a QCInt8 filter with one scale per output channel and a QCInt32 bias
  // whose scales are input_scale * filter_scale[c] (XNNPACK adds it to the int32 sums as is).
  Error quantized_conv2d(const fb::Conv2d& n) {
    ETRT_RETURN_IF_ERROR(qint8_only({n.input(), n.output()}));
    const ValueInfo& f = values_[n.filter()];
    if (f.datatype != fb::DataType::QCInt8 || f.channel_dim != 0) {
      return invalid(where_ + ": an int8 convolution's filter must be QCInt8 with scales along dimension 0");
    }
    if (n.bias() == -1) return Error();
    const ValueInfo& b = values_[static_cast<size_t>(n.bias())];
    if (b.datatype != fb::DataType::QCInt32 || b.channel_dim != 0) {
      return invalid(where_ + ": an int8 convolution's bias must be QCInt32 with scales along dimension 0");
    }
    const float input_scale = values_[n.input()].scale;
    for (flatbuffers::uoffset_t c = 0; c < b.channel_scales->size(); ++c) {
      if (b.channel_scales->Get(c) != input_scale * f.channel_scales->Get(c)) {
        return invalid(where_ + ": bias scale of channel " + str(c) + " is not input scale x filter scale");
      }
    }
    return Error();
  }

  // A value the node reads: it must exist and hold data by now.
  Result<const ValueInfo*> read(uint32_t id, const char* role) {
    if (id >= values_.size()) return invalid(where_ + ": " + role + " value " + str(id) + " does not exist");
    if (!values_[id].available) return invalid(where_ + ": " + role + " value " + str(id) + " is read before it is written");
    values_[id].read = true;
    return &values_[id];
  }

  Result<const ValueInfo*> constant(int64_t id, const char* role) {
    if (id < 0 || static_cast<uint64_t>(id) >= values_.size() || values_[static_cast<size_t>(id)].kind != fb::ValueKind::Constant) {
      return invalid(where_ + ": " + role + " must be a constant value");
    }
    return &values_[static_cast<size_t>(id)];
  }

  // The value the node writes: Internal or Output, written once.
  Result<ValueInfo*> write(uint32_t id) {
    if (id >= values_.size()) return invalid(where_ + ": output value " + str(id) + " does not exist");
    ValueInfo& v = values_[id];
    if ((v.kind != fb::ValueKind::Internal && v.kind != fb::ValueKind::Output) || v.available) {
      return invalid(where_ + ": output value " + str(id) + " is not a fresh internal or output value");
    }
    v.available = true;
    v.written = true;
    return &v;
  }

  Error expect_dims(const ValueInfo& v, const size_t* dims, int ndim, const char* role) {
    bool same = v.ndim == ndim;
    for (int d = 0; same && d < ndim; ++d) same = v.dims[d] == dims[d];
    if (!same) return invalid(where_ + ": " + role + " has the wrong shape");
    return Error();
  }

  Error fully_connected(const fb::FullyConnected& n) {
    auto in = read(n.input(), "input");
    if (!in.ok()) return in.error();
    auto filter = constant(n.filter(), "filter");
    if (!filter.ok()) return filter.error();
    const ValueInfo& f = **filter;
    if (f.ndim != 2) return invalid(where_ + ": filter must be 2-D");
    size_t k = n.transpose_weights() ? f.dims[0] : f.dims[1];
    size_t o = n.transpose_weights() ? f.dims[1] : f.dims[0];
    const ValueInfo& x = **in;
    if (x.dims[x.ndim - 1] != k) return invalid(where_ + ": input channels do not match the filter");
    if (n.bias() != -1) {
      auto bias = constant(n.bias(), "bias");
      if (!bias.ok()) return bias.error();
      if ((*bias)->ndim != 1 || (*bias)->dims[0] != o) return invalid(where_ + ": bias has the wrong shape");
    }
    auto out = write(n.output());
    if (!out.ok()) return out.error();
    size_t dims[XNN_MAX_TENSOR_DIMS];
    for (int d = 0; d < x.ndim; ++d) dims[d] = x.dims[d];
    dims[x.ndim - 1] = o;
    return expect_dims(**out, dims, x.ndim, "output");
  }

  // Output extent of a window: (in + pads - effective kernel) / stride + 1, or an error.
  Result<size_t> window(size_t in, uint32_t pad_a, uint32_t pad_b, uint32_t kernel, uint32_t stride,
                        uint32_t dilation) {
    int64_t out = 0;
    if (!checked::window(static_cast<int64_t>(in), kernel, pad_a, pad_b, stride, dilation, false, &out)) {
      return invalid(where_ + ": window (kernel " + str(kernel) + ", stride " + str(stride) + ", dilation " +
                     str(dilation) + ", padding " + str(pad_a) + "+" + str(pad_b) + ") does not fit an input of " +
                     str(in));
    }
    return static_cast<size_t>(out);
  }

  Error conv2d(const fb::Conv2d& n) {
    auto in = read(n.input(), "input");
    if (!in.ok()) return in.error();
    auto filter = constant(n.filter(), "filter");
    if (!filter.ok()) return filter.error();
    const ValueInfo& x = **in;
    const ValueInfo& f = **filter;
    uint64_t groups = n.groups(), gin = n.group_input_channels(), gout = n.group_output_channels();
    if (groups == 0 || gin == 0 || gout == 0 || groups > kMaxParam || gin > kMaxParam || gout > kMaxParam) {
      return invalid(where_ + ": bad group configuration");
    }
    if (x.ndim != 4 || x.dims[3] != groups * gin) return invalid(where_ + ": input must be NHWC with groups * group_input_channels channels");
    size_t fdims[4] = {static_cast<size_t>(groups * gout), n.kernel_h(), n.kernel_w(), static_cast<size_t>(gin)};
    ETRT_RETURN_IF_ERROR(expect_dims(f, fdims, 4, "filter"));
    if (n.bias() != -1) {
      auto bias = constant(n.bias(), "bias");
      if (!bias.ok()) return bias.error();
      if ((*bias)->ndim != 1 || (*bias)->dims[0] != groups * gout) return invalid(where_ + ": bias has the wrong shape");
    }
    auto oh = window(x.dims[1], n.pad_top(), n.pad_bottom(), n.kernel_h(), n.stride_h(), n.dilation_h());
    if (!oh.ok()) return oh.error();
    auto ow = window(x.dims[2], n.pad_left(), n.pad_right(), n.kernel_w(), n.stride_w(), n.dilation_w());
    if (!ow.ok()) return ow.error();
    auto out = write(n.output());
    if (!out.ok()) return out.error();
    size_t dims[4] = {x.dims[0], *oh, *ow, static_cast<size_t>(groups * gout)};
    add_indirection(x.dims[0], *oh, *ow, n.kernel_h(), n.kernel_w());
    return expect_dims(**out, dims, 4, "output");
  }

  void add_indirection(uint64_t batch, uint64_t oh, uint64_t ow, uint64_t kh, uint64_t kw) {
    uint64_t taps = checked::mul_sat(checked::mul_sat(checked::mul_sat(batch, oh), ow), checked::mul_sat(kh, kw));
    indirection_ = checked::add_sat(indirection_, checked::mul_sat(taps, sizeof(void*)));
  }

  Error max_pool2d(const fb::MaxPool2d& n) {
    auto in = read(n.input(), "input");
    if (!in.ok()) return in.error();
    const ValueInfo& x = **in;
    if (x.ndim != 4) return invalid(where_ + ": input must be 4-D NHWC");
    auto oh = window(x.dims[1], n.pad_top(), n.pad_bottom(), n.pool_h(), n.stride_h(), n.dilation_h());
    if (!oh.ok()) return oh.error();
    auto ow = window(x.dims[2], n.pad_left(), n.pad_right(), n.pool_w(), n.stride_w(), n.dilation_w());
    if (!ow.ok()) return ow.error();
    auto out = write(n.output());
    if (!out.ok()) return out.error();
    size_t dims[4] = {x.dims[0], *oh, *ow, x.dims[3]};
    add_indirection(x.dims[0], *oh, *ow, n.pool_h(), n.pool_w());
    return expect_dims(**out, dims, 4, "output");
  }

  // Windows inside the input (no padding), at least two elements (XNNPACK refuses 1x1 pooling).
  Error avg_pool2d(const fb::AvgPool2d& n) {
    auto in = read(n.input(), "input");
    if (!in.ok()) return in.error();
    const ValueInfo& x = **in;
    if (x.ndim != 4) return invalid(where_ + ": input must be 4-D NHWC");
    if (n.pool_h() > kMaxParam || n.pool_w() > kMaxParam || static_cast<uint64_t>(n.pool_h()) * n.pool_w() < 2) {
      return invalid(where_ + ": bad pooling window");
    }
    auto oh = window(x.dims[1], 0, 0, n.pool_h(), n.stride_h(), 1);
    if (!oh.ok()) return oh.error();
    auto ow = window(x.dims[2], 0, 0, n.pool_w(), n.stride_w(), 1);
    if (!ow.ok()) return ow.error();
    auto out = write(n.output());
    if (!out.ok()) return out.error();
    size_t dims[4] = {x.dims[0], *oh, *ow, x.dims[3]};
    add_indirection(x.dims[0], *oh, *ow, n.pool_h(), n.pool_w());
    return expect_dims(**out, dims, 4, "output");
  }

  Error global_avg_pool2d(const fb::GlobalAvgPool2d& n) {
    auto in = read(n.input(), "input");
    if (!in.ok()) return in.error();
    const ValueInfo& x = **in;
    if (x.ndim != 4) return invalid(where_ + ": input must be 4-D NHWC");
    auto out = write(n.output());
    if (!out.ok()) return out.error();
    size_t dims[4] = {x.dims[0], 1, 1, x.dims[3]};
    return expect_dims(**out, dims, 4, "output");
  }

  Error same_shape(uint32_t input, uint32_t output) {
    auto in = read(input, "input");
    if (!in.ok()) return in.error();
    const ValueInfo& x = **in;
    auto out = write(output);
    if (!out.ok()) return out.error();
    return expect_dims(**out, x.dims, x.ndim, "output");
  }

  Error binary(const fb::Binary& n) {
    if (n.op() < fb::BinaryOp::MIN || n.op() > fb::BinaryOp::MAX) return invalid(where_ + ": unknown binary op");
    auto a = read(n.input1(), "first input");
    if (!a.ok()) return a.error();
    auto b = read(n.input2(), "second input");
    if (!b.ok()) return b.error();
    const ValueInfo& x = **a;
    const ValueInfo& y = **b;
    // NumPy broadcasting, aligned at the last dimension.
    int ndim = std::max(x.ndim, y.ndim);
    size_t dims[XNN_MAX_TENSOR_DIMS];
    for (int d = 0; d < ndim; ++d) {
      int dx = d - (ndim - x.ndim), dy = d - (ndim - y.ndim);
      size_t sx = dx >= 0 ? x.dims[dx] : 1, sy = dy >= 0 ? y.dims[dy] : 1;
      if (sx != sy && sx != 1 && sy != 1) return invalid(where_ + ": inputs do not broadcast");
      dims[d] = std::max(sx, sy);
    }
    auto out = write(n.output());
    if (!out.ok()) return out.error();
    return expect_dims(**out, dims, ndim, "output");
  }

  Error reshape(const fb::Reshape& n) {
    auto in = read(n.input(), "input");
    if (!in.ok()) return in.error();
    uint64_t numel = (*in)->numel;
    auto out = write(n.output());
    if (!out.ok()) return out.error();
    if ((*out)->numel != numel) return invalid(where_ + ": reshape changes the element count");
    return Error();
  }

  const fb::Graph& g_;
  std::vector<ValueInfo>& values_;
  std::string where_;
  uint64_t indirection_ = 0;
};

size_t element_size(fb::DataType t) {
  return t == fb::DataType::QInt8 || t == fb::DataType::QCInt8 ? 1 : 4;
}

bool good_scale(float s) { return std::isnormal(s) && s > 0; }

// A value's datatype and quantization: QInt8 values are activations with one good scale and an
// int8 zero point; QCInt8 / QCInt32 are constants with one good scale per channel.
Error check_quantization(const fb::XValue& v, const std::string& what, ValueInfo* info) {
  info->datatype = v.datatype();
  switch (v.datatype()) {
    case fb::DataType::Float32:
      return Error();
    case fb::DataType::QInt8:
      if (v.kind() == fb::ValueKind::Constant) return invalid(what + ": QInt8 values cannot be constants");
      if (!good_scale(v.scale())) return invalid(what + ": QInt8 scale must be finite, normal and positive");
      if (v.zero_point() < -128 || v.zero_point() > 127) return invalid(what + ": QInt8 zero point outside [-128, 127]");
      info->scale = v.scale();
      info->zero_point = v.zero_point();
      return Error();
    case fb::DataType::QCInt8:
    case fb::DataType::QCInt32: {
      if (v.kind() != fb::ValueKind::Constant) return invalid(what + ": per-channel values must be constants");
      const uint32_t dim = v.channel_dim();
      if (dim >= static_cast<uint32_t>(info->ndim)) return invalid(what + ": channel_dim out of range");
      const auto* scales = v.channel_scales();
      if (scales == nullptr || scales->size() != info->dims[dim]) {
        return invalid(what + ": needs one channel scale per channel of dimension " + str(dim));
      }
      for (flatbuffers::uoffset_t c = 0; c < scales->size(); ++c) {
        if (!good_scale(scales->Get(c))) return invalid(what + ": channel scale " + str(c) + " must be finite, normal and positive");
      }
      info->channel_scales = scales;
      info->channel_dim = dim;
      return Error();
    }
  }
  return invalid(what + " has an unknown datatype");
}

Error check_value(const fb::XValue& v, size_t index, const fb::Graph& g, uint64_t data_size, ValueInfo* info,
                  std::vector<Slot>* inputs, std::vector<Slot>* outputs) {
  std::string what = "value " + str(index);
  if (v.dims() == nullptr || v.dims()->size() == 0 || v.dims()->size() > XNN_MAX_TENSOR_DIMS) {
    return invalid(what + " must have 1 to " + str(XNN_MAX_TENSOR_DIMS) + " dimensions");
  }
  // The verifier checks 4-byte alignment of a vector; its 8-byte elements are read in place.
  if (reinterpret_cast<uintptr_t>(v.dims()->Data()) % alignof(uint64_t) != 0) return invalid(what + ": misaligned dims");
  info->kind = v.kind();
  info->ndim = static_cast<int>(v.dims()->size());
  for (int d = 0; d < info->ndim; ++d) {
    uint64_t size = v.dims()->Get(static_cast<flatbuffers::uoffset_t>(d));
    if (size == 0 || size > static_cast<uint64_t>(checked::kMaxElements)) {
      return invalid(what + " has a bad or too large shape");
    }
    info->dims[d] = static_cast<size_t>(size);
  }
  int64_t numel = 0;
  if (!checked::numel(info->dims, static_cast<size_t>(info->ndim), &numel)) {
    return invalid(what + " has more than " + str(checked::kMaxElements) + " elements");
  }
  info->numel = static_cast<uint64_t>(numel);
  ETRT_RETURN_IF_ERROR(check_quantization(v, what, info));
  const uint64_t item = element_size(info->datatype);
  switch (v.kind()) {
    case fb::ValueKind::Internal:
      return Error();
    case fb::ValueKind::Constant: {
      uint64_t offset = v.data_offset();
      if (offset % item != 0 || offset > data_size || info->numel * item > data_size - offset) {
        return invalid(what + ": constant data lies outside the data area");
      }
      info->available = true;
      return Error();
    }
    case fb::ValueKind::Input:
    case fb::ValueKind::Output: {
      bool is_input = v.kind() == fb::ValueKind::Input;
      std::vector<Slot>& slots = is_input ? *inputs : *outputs;
      if (v.io_index() >= slots.size()) return invalid(what + ": io_index " + str(v.io_index()) + " out of range");
      Slot& slot = slots[v.io_index()];
      if (slot.ndim != 0) return invalid(what + ": io_index " + str(v.io_index()) + " is used twice");
      if (v.nchw() && info->ndim != 4) return invalid(what + ": only 4-D values can be NCHW outside");
      slot.value_id = static_cast<uint32_t>(index);
      slot.nchw = v.nchw();
      slot.element_size = static_cast<size_t>(item);
      slot.ndim = info->ndim;
      slot.numel = static_cast<size_t>(info->numel);
      for (int d = 0; d < info->ndim; ++d) slot.sizes[d] = static_cast<int64_t>(info->dims[d]);
      if (slot.nchw) {  // NHWC inside -> NCHW outside
        slot.sizes[1] = static_cast<int64_t>(info->dims[3]);
        slot.sizes[2] = static_cast<int64_t>(info->dims[1]);
        slot.sizes[3] = static_cast<int64_t>(info->dims[2]);
      }
      info->available = is_input;
      (void)g;
      return Error();
    }
    default:
      return invalid(what + " has an unknown kind");
  }
}

}  // namespace

const char* status_name(xnn_status status) noexcept {
  switch (status) {
    case xnn_status_success: return "success";
    case xnn_status_uninitialized: return "uninitialized";
    case xnn_status_invalid_parameter: return "invalid parameter";
    case xnn_status_invalid_state: return "invalid state";
    case xnn_status_unsupported_parameter: return "unsupported parameter";
    case xnn_status_unsupported_hardware: return "unsupported hardware";
    case xnn_status_out_of_memory: return "out of memory";
#if ETRT_XNNPACK_UNARY_BINARY
    case xnn_status_reallocation_required: return "reallocation required";
    case xnn_status_deprecated: return "deprecated";
#endif
  }
  return "unknown status";
}

Result<Graph> parse_graph(Span<const uint8_t> blob) noexcept try {
  if (blob.data() == nullptr || blob.size() < 8 || !fb::GraphBufferHasIdentifier(blob.data())) {
    return invalid("not an XNNPACK delegate blob (bad identifier)");
  }
  flatbuffers::Verifier verifier(blob.data(), blob.size());
  if (!fb::VerifyGraphBuffer(verifier)) return invalid("malformed FlatBuffer");
  const fb::Graph* root = fb::GetGraph(blob.data());
  if (root->version() != kBlobVersion) {
    return Error(ErrorCode::UnsupportedVersion,
                 "XNNPACK blob version " + str(root->version()) + " (this backend reads version 1)");
  }
  uint64_t data_offset = root->data_offset(), data_size = root->data_size();
  if (data_offset % kDataAlignment != 0 || data_offset > blob.size() || data_size > blob.size() - data_offset) {
    return invalid("data area [" + str(data_offset) + ", +" + str(data_size) + ") lies outside the " +
                   str(blob.size()) + "-byte blob");
  }
  if (root->values() == nullptr || root->values()->size() > kMaxValues) return invalid("missing or too many values");
  size_t num_values = root->values()->size();
  if (root->num_inputs() > num_values || root->num_outputs() > num_values) return invalid("too many inputs or outputs");

  Graph graph;
  graph.root = root;
  graph.data = blob.data() + data_offset;
  graph.inputs.resize(root->num_inputs());
  graph.outputs.resize(root->num_outputs());
  std::vector<ValueInfo> values(num_values);
  for (size_t i = 0; i < num_values; ++i) {
    const fb::XValue* v = root->values()->Get(static_cast<flatbuffers::uoffset_t>(i));
    ETRT_RETURN_IF_ERROR(check_value(*v, i, *root, data_size, &values[i], &graph.inputs, &graph.outputs));
  }
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    if (graph.inputs[i].ndim == 0) return invalid("input " + str(i) + " has no value");
  }
  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    if (graph.outputs[i].ndim == 0) return invalid("output " + str(i) + " has no value");
  }
  // XNNPACK allocates every non-constant value: bound their sum like any tensor.
  uint64_t workspace = 0;
  for (const ValueInfo& v : values) {
    uint64_t bytes = 0;
    if (v.kind != fb::ValueKind::Constant &&
        (!checked::mul(v.numel, uint64_t{element_size(v.datatype)}, &bytes) || !checked::add(workspace, bytes, &workspace) ||
         workspace > checked::kMaxBytes)) {
      return invalid("the values need more than " + str(checked::kMaxBytes) + " bytes");
    }
  }
  Checker checker(*root, values);
  ETRT_RETURN_IF_ERROR(checker.check_nodes());
  graph.memory_bytes = checked::add_sat(checked::add_sat(workspace, data_size), checker.indirection_bytes());
  // XNNPACK never allocates an internal value nothing reads, and its operators assert on it.
  for (size_t i = 0; i < num_values; ++i) {
    if (values[i].kind == fb::ValueKind::Internal && !values[i].read) {
      return invalid("internal value " + str(i) + (values[i].written ? " is written but never read" : " is never used"));
    }
  }
  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    if (!values[graph.outputs[i].value_id].available) return invalid("output " + str(i) + " is never written");
  }
  return graph;
} catch (const std::bad_alloc&) {
  return Error(ErrorCode::OutOfMemory, "out of memory reading an XNNPACK blob");
}

namespace {

xnn_status define_value(xnn_subgraph_t sg, const fb::XValue& v, const size_t* dims, const void* data, uint32_t i,
                        uint32_t flags, uint32_t* id) {
  const size_t ndim = v.dims()->size();
  switch (v.datatype()) {
    case fb::DataType::QInt8:
      return xnn_define_quantized_tensor_value(sg, xnn_datatype_qint8, v.zero_point(), v.scale(), ndim, dims, data, i,
                                               flags, id);
    case fb::DataType::QCInt8:
    case fb::DataType::QCInt32: {
      // XNNPACK keeps the pointer: the scales live in the blob, which outlives the delegate.
      const xnn_datatype t = v.datatype() == fb::DataType::QCInt8 ? xnn_datatype_qcint8 : xnn_datatype_qcint32;
      return xnn_define_channelwise_quantized_tensor_value(sg, t, v.channel_scales()->data(), ndim, v.channel_dim(),
                                                           dims, data, i, flags, id);
    }
    default:
      return xnn_define_tensor_value(sg, xnn_datatype_fp32, ndim, dims, data, i, flags, id);
  }
}

}  // namespace

Result<SubgraphPtr> define_subgraph(const Graph& graph) noexcept try {
  const fb::Graph& g = *graph.root;
  const uint32_t num_values = g.values()->size();
  xnn_subgraph_t raw = nullptr;
  xnn_status s = xnn_create_subgraph(num_values, 0, &raw);
  if (s != xnn_status_success) return Error(ErrorCode::Internal, std::string("xnn_create_subgraph: ") + status_name(s));
  SubgraphPtr subgraph(raw);

  for (uint32_t i = 0; i < num_values; ++i) {
    const fb::XValue* v = g.values()->Get(i);
    size_t dims[XNN_MAX_TENSOR_DIMS];
    for (flatbuffers::uoffset_t d = 0; d < v->dims()->size(); ++d) dims[d] = static_cast<size_t>(v->dims()->Get(d));
    const void* data = v->kind() == fb::ValueKind::Constant ? graph.data + v->data_offset() : nullptr;
    uint32_t flags = v->kind() == fb::ValueKind::Input    ? XNN_VALUE_FLAG_EXTERNAL_INPUT
                     : v->kind() == fb::ValueKind::Output ? XNN_VALUE_FLAG_EXTERNAL_OUTPUT
                                                          : 0;
    uint32_t id = 0;
    s = define_value(subgraph.get(), *v, dims, data, i, flags, &id);
    if (s != xnn_status_success) {
      return Error(ErrorCode::InvalidProgram, "XNNPACK rejected value " + str(i) + ": " + status_name(s));
    }
  }
  auto opt = [](int32_t id) { return id < 0 ? XNN_INVALID_VALUE_ID : static_cast<uint32_t>(id); };
  for (flatbuffers::uoffset_t i = 0; i < g.nodes()->size(); ++i) {
    const fb::Node* node = g.nodes()->Get(i);
    const float lo = node->output_min(), hi = node->output_max();
    xnn_subgraph_t sg = subgraph.get();
    switch (node->node_type()) {
      case fb::NodeUnion::FullyConnected: {
        const auto* n = node->node_as_FullyConnected();
        s = xnn_define_fully_connected(sg, lo, hi, n->input(), n->filter(), opt(n->bias()), n->output(),
                                       n->transpose_weights() ? XNN_FLAG_TRANSPOSE_WEIGHTS : 0);
        break;
      }
      case fb::NodeUnion::Conv2d: {
        const auto* n = node->node_as_Conv2d();
        s = xnn_define_convolution_2d(sg, n->pad_top(), n->pad_right(), n->pad_bottom(), n->pad_left(), n->kernel_h(),
                                      n->kernel_w(), n->stride_h(), n->stride_w(), n->dilation_h(), n->dilation_w(),
                                      n->groups(), n->group_input_channels(), n->group_output_channels(), lo, hi,
                                      n->input(), n->filter(), opt(n->bias()), n->output(), 0);
        break;
      }
      case fb::NodeUnion::MaxPool2d: {
        const auto* n = node->node_as_MaxPool2d();
        s = xnn_define_max_pooling_2d(sg, n->pad_top(), n->pad_right(), n->pad_bottom(), n->pad_left(), n->pool_h(),
                                      n->pool_w(), n->stride_h(), n->stride_w(), n->dilation_h(), n->dilation_w(), lo,
                                      hi, n->input(), n->output(), 0);
        break;
      }
      case fb::NodeUnion::Clamp: {
        const auto* n = node->node_as_Clamp();
        s = define_clamp(sg, lo, hi, n->input(), n->output());
        break;
      }
      case fb::NodeUnion::Binary: {
        const auto* n = node->node_as_Binary();
        s = define_binary(sg, n->op(), lo, hi, n->input1(), n->input2(), n->output());
        break;
      }
      case fb::NodeUnion::Softmax: {
        const auto* n = node->node_as_Softmax();
        s = xnn_define_softmax(sg, n->input(), n->output(), 0);
        break;
      }
      case fb::NodeUnion::Reshape: {
        const auto* n = node->node_as_Reshape();
        const fb::XValue* out = g.values()->Get(n->output());
        size_t dims[XNN_MAX_TENSOR_DIMS];
        for (flatbuffers::uoffset_t d = 0; d < out->dims()->size(); ++d) dims[d] = static_cast<size_t>(out->dims()->Get(d));
        s = xnn_define_static_reshape(sg, out->dims()->size(), dims, n->input(), n->output(), 0);
        break;
      }
      case fb::NodeUnion::Sigmoid: {
        const auto* n = node->node_as_Sigmoid();
        s = define_sigmoid(sg, n->input(), n->output());
        break;
      }
      case fb::NodeUnion::Hardswish: {
        const auto* n = node->node_as_Hardswish();
        s = define_hardswish(sg, n->input(), n->output());
        break;
      }
      case fb::NodeUnion::GlobalAvgPool2d: {
        const auto* n = node->node_as_GlobalAvgPool2d();
        const fb::XValue* out = g.values()->Get(n->output());
        size_t dims[XNN_MAX_TENSOR_DIMS];
        for (flatbuffers::uoffset_t d = 0; d < out->dims()->size(); ++d) dims[d] = static_cast<size_t>(out->dims()->Get(d));
        s = define_global_average_pooling_2d(sg, lo, hi, out->dims()->size(), dims, n->input(), n->output());
        break;
      }
      case fb::NodeUnion::AvgPool2d: {
        const auto* n = node->node_as_AvgPool2d();
        s = xnn_define_average_pooling_2d(sg, 0, 0, 0, 0, n->pool_h(), n->pool_w(), n->stride_h(), n->stride_w(), lo,
                                          hi, n->input(), n->output(), 0);
        break;
      }
      default:
        s = xnn_status_invalid_parameter;  // parse_graph rejects these already
        break;
    }
    if (s != xnn_status_success) {
      return Error(ErrorCode::InvalidProgram, "XNNPACK rejected node " + str(i) + " (" +
                                                  fb::EnumNameNodeUnion(node->node_type()) + "): " + status_name(s));
    }
  }
  return subgraph;
} catch (const std::bad_alloc&) {
  return Error(ErrorCode::OutOfMemory, "out of memory defining an XNNPACK subgraph");
}

}  // namespace xnnpack
}  // namespace backends
}  // namespace etrt
