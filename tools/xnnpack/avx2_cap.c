// Not part of the build: makes the system XNNPACK (and anything else asking cpuinfo) see a CPU
// without AVX-512, for timing its AVX2 kernels on an AVX-512 machine (docs/quantization.md:
// the 2022 XNNPACK has no knob like ETRT_MAX_ISA). An LD_PRELOAD shim: cpuinfo_initialize
// runs the real one, then clears the AVX-512 flags XNNPACK reads when it picks its kernels.
// Build: cc -O2 -shared -fPIC tools/xnnpack/avx2_cap.c -o avx2_cap.so -ldl
// Use:   LD_PRELOAD=$PWD/avx2_cap.so ETRT_MAX_ISA=avx2 python benchmarks/xnnpack_int8_layers.py
#define _GNU_SOURCE
#include <cpuinfo.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>

bool cpuinfo_initialize(void) {
  bool (*real)(void) = (bool (*)(void))dlsym(RTLD_NEXT, "cpuinfo_initialize");
  if (real == NULL || !real()) return false;
  // Looked up, not linked: the shim loads into processes without libcpuinfo too.
  struct cpuinfo_x86_isa* isa = (struct cpuinfo_x86_isa*)dlsym(RTLD_NEXT, "cpuinfo_isa");
  if (isa == NULL) return true;
  isa->avx512f = isa->avx512pf = isa->avx512er = isa->avx512cd = isa->avx512dq = false;
  isa->avx512bw = isa->avx512vl = isa->avx512ifma = isa->avx512vbmi = isa->avx512vbmi2 = false;
  isa->avx512bitalg = isa->avx512vpopcntdq = isa->avx512vnni = isa->avx512bf16 = false;
  isa->avx512vp2intersect = isa->avx512_4vnniw = isa->avx512_4fmaps = false;
  return true;
}
