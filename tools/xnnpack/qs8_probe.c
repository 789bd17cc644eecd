// Not part of the build: facts about the system XNNPACK (Debian 12's 2022 snapshot) for the
// int8 delegate's design, tools/xnnpack/qs8_bench.c beside it.
// Which int8 (qs8) nodes the system XNNPACK accepts (docs/quantization.md): defines each node on
// int8 values, then creates a runtime, and prints both statuses (0: success, 2: invalid
// parameter; -1: not tried). Build: cc tools/xnnpack/qs8_probe.c -o qs8_probe -lXNNPACK
#include <stdio.h>
#include <stdint.h>
#include <xnnpack.h>

static int8_t wdata[64 * 3 * 3 * 64];
static int32_t bdata[64];
static float scales[64];

static uint32_t qval(xnn_subgraph_t s, size_t n, const size_t* dims, uint32_t ext, uint32_t flags) {
  uint32_t id = 0;
  enum xnn_status st = xnn_define_quantized_tensor_value(s, xnn_datatype_qint8, 3, 0.05f, n, dims, NULL, ext, flags, &id);
  if (st != xnn_status_success) printf("  qint8 value: status %d\n", st);
  return id;
}

static void finish(const char* name, xnn_subgraph_t s, enum xnn_status def) {
  xnn_runtime_t rt = NULL;
  enum xnn_status cr = def == xnn_status_success ? xnn_create_runtime(s, &rt) : -1;
  printf("%-44s define %d  create runtime %d\n", name, def, cr);
  if (rt) xnn_delete_runtime(rt);
  xnn_delete_subgraph(s);
}

int main(void) {
  if (xnn_initialize(NULL) != xnn_status_success) return 1;
  for (int i = 0; i < 64; ++i) scales[i] = 0.01f * (i + 1);
  const size_t x4[4] = {1, 8, 8, 16}, y4[4] = {1, 8, 8, 32}, dw4[4] = {1, 8, 8, 16}, p4[4] = {1, 4, 4, 16};
  const size_t g4[4] = {1, 1, 1, 16}, x2[2] = {2, 16}, y2[2] = {2, 32};
  xnn_subgraph_t s;
  uint32_t in, out, w, b;
  enum xnn_status st;

  // convolution, per-channel int8 weights (qcint8, channel dim 0) and qcint32 bias
  xnn_create_subgraph(2, 0, &s);
  in = qval(s, 4, x4, 0, XNN_VALUE_FLAG_EXTERNAL_INPUT);
  out = qval(s, 4, y4, 1, XNN_VALUE_FLAG_EXTERNAL_OUTPUT);
  const size_t wd[4] = {32, 3, 3, 16}, bd[1] = {32};
  xnn_define_channelwise_quantized_tensor_value(s, xnn_datatype_qcint8, scales, 4, 0, wd, wdata, XNN_INVALID_VALUE_ID, 0, &w);
  xnn_define_channelwise_quantized_tensor_value(s, xnn_datatype_qcint32, scales, 1, 0, bd, bdata, XNN_INVALID_VALUE_ID, 0, &b);
  st = xnn_define_convolution_2d(s, 1, 1, 1, 1, 3, 3, 1, 1, 1, 1, 1, 16, 32, -128.f, 127.f, in, w, b, out, 0);
  finish("convolution_2d qs8 x qcint8 (per-channel)", s, st);

  // depthwise, per-channel (channel dim 3)
  xnn_create_subgraph(2, 0, &s);
  in = qval(s, 4, x4, 0, XNN_VALUE_FLAG_EXTERNAL_INPUT);
  out = qval(s, 4, dw4, 1, XNN_VALUE_FLAG_EXTERNAL_OUTPUT);
  const size_t dwd[4] = {1, 3, 3, 16}, dbd[1] = {16};
  xnn_define_channelwise_quantized_tensor_value(s, xnn_datatype_qcint8, scales, 4, 3, dwd, wdata, XNN_INVALID_VALUE_ID, 0, &w);
  xnn_define_channelwise_quantized_tensor_value(s, xnn_datatype_qcint32, scales, 1, 0, dbd, bdata, XNN_INVALID_VALUE_ID, 0, &b);
  st = xnn_define_depthwise_convolution_2d(s, 1, 1, 1, 1, 3, 3, 1, 1, 1, 1, 1, 16, -128.f, 127.f, in, w, b, out, 0);
  finish("depthwise_convolution_2d qs8 x qcint8", s, st);

  // fully connected, per-channel weights
  xnn_create_subgraph(2, 0, &s);
  in = qval(s, 2, x2, 0, XNN_VALUE_FLAG_EXTERNAL_INPUT);
  out = qval(s, 2, y2, 1, XNN_VALUE_FLAG_EXTERNAL_OUTPUT);
  const size_t fwd[2] = {32, 16};
  xnn_define_channelwise_quantized_tensor_value(s, xnn_datatype_qcint8, scales, 2, 0, fwd, wdata, XNN_INVALID_VALUE_ID, 0, &w);
  xnn_define_channelwise_quantized_tensor_value(s, xnn_datatype_qcint32, scales, 1, 0, bd, bdata, XNN_INVALID_VALUE_ID, 0, &b);
  st = xnn_define_fully_connected(s, -128.f, 127.f, in, w, b, out, 0);
  finish("fully_connected qs8 x qcint8 (per-channel)", s, st);

  // fully connected, per-tensor weights
  xnn_create_subgraph(2, 0, &s);
  in = qval(s, 2, x2, 0, XNN_VALUE_FLAG_EXTERNAL_INPUT);
  out = qval(s, 2, y2, 1, XNN_VALUE_FLAG_EXTERNAL_OUTPUT);
  xnn_define_quantized_tensor_value(s, xnn_datatype_qint8, 0, 0.02f, 2, fwd, wdata, XNN_INVALID_VALUE_ID, 0, &w);
  xnn_define_quantized_tensor_value(s, xnn_datatype_qint32, 0, 0.05f * 0.02f, 1, bd, bdata, XNN_INVALID_VALUE_ID, 0, &b);
  st = xnn_define_fully_connected(s, -128.f, 127.f, in, w, b, out, 0);
  finish("fully_connected qs8 x qint8 (per-tensor)", s, st);

  // add2
  xnn_create_subgraph(3, 0, &s);
  in = qval(s, 4, x4, 0, XNN_VALUE_FLAG_EXTERNAL_INPUT);
  uint32_t in2 = qval(s, 4, x4, 1, XNN_VALUE_FLAG_EXTERNAL_INPUT);
  out = qval(s, 4, x4, 2, XNN_VALUE_FLAG_EXTERNAL_OUTPUT);
  st = xnn_define_add2(s, -128.f, 127.f, in, in2, out, 0);
  finish("add2 qs8", s, st);

  // max pooling 2x2
  xnn_create_subgraph(2, 0, &s);
  in = qval(s, 4, x4, 0, XNN_VALUE_FLAG_EXTERNAL_INPUT);
  out = qval(s, 4, p4, 1, XNN_VALUE_FLAG_EXTERNAL_OUTPUT);
  st = xnn_define_max_pooling_2d(s, 0, 0, 0, 0, 2, 2, 2, 2, 1, 1, -128.f, 127.f, in, out, 0);
  finish("max_pooling_2d qs8", s, st);

  // average pooling 2x2
  xnn_create_subgraph(2, 0, &s);
  in = qval(s, 4, x4, 0, XNN_VALUE_FLAG_EXTERNAL_INPUT);
  out = qval(s, 4, p4, 1, XNN_VALUE_FLAG_EXTERNAL_OUTPUT);
  st = xnn_define_average_pooling_2d(s, 0, 0, 0, 0, 2, 2, 2, 2, -128.f, 127.f, in, out, 0);
  finish("average_pooling_2d qs8", s, st);

  // global average pooling
  xnn_create_subgraph(2, 0, &s);
  in = qval(s, 4, x4, 0, XNN_VALUE_FLAG_EXTERNAL_INPUT);
  out = qval(s, 4, g4, 1, XNN_VALUE_FLAG_EXTERNAL_OUTPUT);
  st = xnn_define_global_average_pooling_2d(s, -128.f, 127.f, in, out, 0);
  finish("global_average_pooling_2d qs8", s, st);

  // hardswish
  xnn_create_subgraph(2, 0, &s);
  in = qval(s, 4, x4, 0, XNN_VALUE_FLAG_EXTERNAL_INPUT);
  out = qval(s, 4, x4, 1, XNN_VALUE_FLAG_EXTERNAL_OUTPUT);
  st = xnn_define_hardswish(s, in, out, 0);
  finish("hardswish qs8", s, st);

  // convert fp32 -> qs8 (the boundary with float parts)
  xnn_create_subgraph(2, 0, &s);
  uint32_t f = 0;
  xnn_define_tensor_value(s, xnn_datatype_fp32, 4, x4, NULL, 0, XNN_VALUE_FLAG_EXTERNAL_INPUT, &f);
  out = qval(s, 4, x4, 1, XNN_VALUE_FLAG_EXTERNAL_OUTPUT);
  st = xnn_define_convert(s, f, out, 0);
  finish("convert fp32 -> qs8", s, st);
  return 0;
}
