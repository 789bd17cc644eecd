// libFuzzer target: a program file (.etrt), loaded and, when it loads, every method executed
// with the real kernels and the XNNPACK delegate.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  etrt_fuzz::AlignedCopy copy(data, size);
  etrt::BufferDataLoader loader(copy.bytes(), copy.size());
  auto program = etrt::Program::load(&loader);
  etrt_fuzz::report("load", program.ok() ? etrt::Error() : program.error());
  if (program.ok()) etrt_fuzz::run_program(*program, copy.bytes(), nullptr);
  return 0;
}
