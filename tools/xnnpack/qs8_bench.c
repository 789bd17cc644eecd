// One thread, the system XNNPACK's qs8 convolutions with per-channel weights on MobileNetV2's
// costliest int8 layers (docs/quantization.md): the best of 50 runs in us, NHWC in and out.
// Build: cc -O2 tools/xnnpack/qs8_bench.c -o qs8_bench -lXNNPACK
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <xnnpack.h>

static double now_us(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }

static void run(const char* name, size_t h, size_t w, size_t cin, size_t cout, size_t k, size_t stride, size_t pad, int depthwise) {
  size_t oh = (h + 2 * pad - k) / stride + 1, ow = (w + 2 * pad - k) / stride + 1;
  size_t groups = depthwise ? cin : 1, gin = depthwise ? 1 : cin, gout = depthwise ? 1 : cout;
  size_t wn = cout * k * k * gin;
  int8_t* wt = malloc(wn); for (size_t i = 0; i < wn; ++i) wt[i] = (int8_t)(rand() % 255 - 127);
  int32_t* bias = calloc(cout, 4); float* scales = malloc(cout * 4);
  for (size_t i = 0; i < cout; ++i) scales[i] = 0.001f * (1 + i % 7);
  int8_t* x = malloc(h * w * cin + 64); for (size_t i = 0; i < h * w * cin; ++i) x[i] = (int8_t)(rand() % 255 - 128);
  int8_t* y = malloc(oh * ow * cout + 64);
  xnn_subgraph_t s; xnn_create_subgraph(2, 0, &s);
  uint32_t in, out, wid, bid;
  size_t xd[4] = {1, h, w, cin}, yd[4] = {1, oh, ow, cout}, bd[1] = {cout};
  xnn_define_quantized_tensor_value(s, xnn_datatype_qint8, 3, 0.05f, 4, xd, NULL, 0, XNN_VALUE_FLAG_EXTERNAL_INPUT, &in);
  xnn_define_quantized_tensor_value(s, xnn_datatype_qint8, -5, 0.07f, 4, yd, NULL, 1, XNN_VALUE_FLAG_EXTERNAL_OUTPUT, &out);
  enum xnn_status st;
  if (depthwise) {
    size_t wd[4] = {1, k, k, cout};
    xnn_define_channelwise_quantized_tensor_value(s, xnn_datatype_qcint8, scales, 4, 3, wd, wt, XNN_INVALID_VALUE_ID, 0, &wid);
    xnn_define_channelwise_quantized_tensor_value(s, xnn_datatype_qcint32, scales, 1, 0, bd, bias, XNN_INVALID_VALUE_ID, 0, &bid);
    st = xnn_define_depthwise_convolution_2d(s, pad, pad, pad, pad, k, k, stride, stride, 1, 1, 1, cin, -128.f, 127.f, in, wid, bid, out, 0);
  } else {
    size_t wd[4] = {cout, k, k, cin};
    xnn_define_channelwise_quantized_tensor_value(s, xnn_datatype_qcint8, scales, 4, 0, wd, wt, XNN_INVALID_VALUE_ID, 0, &wid);
    xnn_define_channelwise_quantized_tensor_value(s, xnn_datatype_qcint32, scales, 1, 0, bd, bias, XNN_INVALID_VALUE_ID, 0, &bid);
    st = xnn_define_convolution_2d(s, pad, pad, pad, pad, k, k, stride, stride, 1, 1, groups, gin, gout, -128.f, 127.f, in, wid, bid, out, 0);
  }
  xnn_runtime_t rt; if (st || xnn_create_runtime(s, &rt)) { printf("%s: define/create failed\n", name); return; }
  struct xnn_external_value ext[2] = {{0, x}, {1, y}};
  xnn_setup_runtime(rt, 2, ext);
  double best = 1e30;
  for (int i = 0; i < 50; ++i) { double t = now_us(); xnn_invoke_runtime(rt); t = now_us() - t; if (t < best) best = t; }
  printf("%-40s %8.1f us\n", name, best);
  xnn_delete_runtime(rt); xnn_delete_subgraph(s);
}

int main(void) {
  xnn_initialize(NULL);
  run("conv 3x3 s2 3->32, 224x224 (first)", 224, 224, 3, 32, 3, 2, 1, 0);
  run("conv 1x1 16->96, 112x112", 112, 112, 16, 96, 1, 1, 0, 0);
  run("depthwise 3x3 32ch, 112x112", 112, 112, 32, 32, 3, 1, 1, 1);
  run("depthwise 3x3 144ch, 56x56", 56, 56, 144, 144, 3, 1, 1, 1);
  run("conv 1x1 24->144, 56x56", 56, 56, 24, 144, 1, 1, 0, 0);
  run("conv 1x1 320->1280, 7x7", 7, 7, 320, 1280, 1, 1, 0, 0);
  return 0;
}
