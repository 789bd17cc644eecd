// The registry as C++ code in the Python process sees it (through libetrt.so's C++ API).
#include <cstddef>

#include "etrt/runtime/runtime.h"

extern "C" {
__attribute__((visibility("default"))) size_t probe_num_kernels() { return etrt::num_registered_kernels(); }
__attribute__((visibility("default"))) const char* probe_kernel_name(size_t i) {
  return etrt::registered_kernel_name(i);
}
__attribute__((visibility("default"))) size_t probe_num_backends() { return etrt::num_registered_backends(); }
}
