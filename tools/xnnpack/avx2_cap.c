// Not part of the build: makes the system XNNPACK (and anything else asking cpuinfo) see a CPU
// without AVX-512, for timing its AVX2 kernels on an AVX-512 machine (docs/quantization.md:
// the 2022 XNNPACK has no knob like ETRT_MAX_ISA). An LD_PRELOAD shim: cpuinfo_initialize
// runs the real one, then clears the AVX-512 flags XNNPACK reads when it picks its kernels.
// Build: cc -O2 -shared -fPIC tools/xnnpack/avx2_cap.c -o avx2_cap.so -ldl
// Use:   LD_PRELOAD=$PWD/avx2_cap.so ETRT_MAX_ISA=avx2 python benchmarks/xnnpack_int8_layers.py
#define _GNU_SOURCE
#include <cpuinfo.h>
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

// Newer cpuinfo (ExecuTorch's, 85 bytes) inserted flags before and among the AVX-512 ones:
// there avx512f is at byte 29 and it, the rest of AVX-512, AVX10 and AMX are 24 flags in a row.
enum { kNewIsaBytes = 85, kNewAvx512First = 29, kNewAvx512Count = 24 };

// Clears one copy's AVX-512 flags, in the layout its size says; an unknown layout is left alone.
static void cap(void* symbol) {
  Dl_info info;
  const ElfW(Sym)* sym = NULL;
  if (!dladdr1(symbol, &info, (void**)&sym, RTLD_DL_SYMENT) || sym == NULL) return;
  if (sym->st_size == sizeof(struct cpuinfo_x86_isa)) {
    struct cpuinfo_x86_isa* isa = (struct cpuinfo_x86_isa*)symbol;
    isa->avx512f = isa->avx512pf = isa->avx512er = isa->avx512cd = isa->avx512dq = false;
    isa->avx512bw = isa->avx512vl = isa->avx512ifma = isa->avx512vbmi = isa->avx512vbmi2 = false;
    isa->avx512bitalg = isa->avx512vpopcntdq = isa->avx512vnni = isa->avx512bf16 = false;
    isa->avx512vp2intersect = isa->avx512_4vnniw = isa->avx512_4fmaps = false;
  } else if (sym->st_size == kNewIsaBytes) {
    memset((char*)symbol + kNewAvx512First, 0, kNewAvx512Count);
  }
}

// Runs one copy's real cpuinfo_initialize and caps that copy's flags. Looked up, not linked:
// the shim loads into processes without libcpuinfo too.
static bool initialize(void* handle) {
  bool (*real)(void) = (bool (*)(void))dlsym(handle, "cpuinfo_initialize");
  if (real == NULL || real == cpuinfo_initialize || !real()) return false;
  void* isa = dlsym(handle, "cpuinfo_isa");
  if (isa != NULL) cap(isa);
  return true;
}

static int initialize_in(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  if (info->dlpi_name == NULL || info->dlpi_name[0] == '\0') return 0;
  void* handle = dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD);
  if (handle == NULL) return 0;
  if (initialize(handle)) *(bool*)data = true;
  dlclose(handle);
  return 0;
}

// A process can hold several copies of cpuinfo: torch links one in, and a library that a Python
// extension brings in (ExecuTorch's libexecutorch_threadpool.so) is loaded RTLD_LOCAL, out of
// RTLD_NEXT's reach, with its own. Every loaded copy is initialized and capped, whichever one
// the caller's other cpuinfo calls bind to.
static int count_loads(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  *(unsigned long long*)data = info->dlpi_adds;
  return 1;
}

// Callers ask on every use (ExecuTorch's XNNPACK on each call): the walk over the loaded
// objects runs again only when objects were loaded since the last one (a copy that came later).
bool cpuinfo_initialize(void) {
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  static unsigned long long walked = 0;
  static bool initialized = false;
  unsigned long long loads = 0;
  dl_iterate_phdr(count_loads, &loads);
  pthread_mutex_lock(&lock);
  if (loads != walked || !initialized) {
    initialized = initialize(RTLD_NEXT);
    dl_iterate_phdr(initialize_in, &initialized);
    walked = loads;
  }
  const bool result = initialized;
  pthread_mutex_unlock(&lock);
  return result;
}
