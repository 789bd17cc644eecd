/* The C ABI from plain C (no C++ type in c_api.h): open a program, describe and run a method
 * with zero-filled inputs, print each output's shape; report errors as "error: <last error>". */
#include <stdio.h>
#include <stdlib.h>

#include "etrt/runtime/c_api.h"

static int fail(void) {
  printf("error: %s\n", etrt_last_error());
  return 1;
}

int main(int argc, char** argv) {
  etrt_module* module = NULL;
  etrt_method* method = NULL;
  size_t n_methods = 0, n_in = 0, n_out = 0, i, d;
  void* buffers[16] = {0};
  static const size_t kElementSize[] = {4, 8, 4, 1, 1, 1, 8};
  if (argc != 2) return 2;
  printf("c api %d, etrt %s\n", (int)etrt_c_api_version(), etrt_version_string());
  if (etrt_module_open(argv[1], &module) != ETRT_STATUS_OK) return fail();
  if (etrt_module_num_methods(module, &n_methods) != ETRT_STATUS_OK) return fail();
  for (i = 0; i < n_methods; ++i) {
    const char* name = NULL;
    if (etrt_module_method_name(module, i, &name) != ETRT_STATUS_OK) return fail();
    printf("method %s\n", name);
  }
  if (etrt_module_method(module, "forward", &method) != ETRT_STATUS_OK) return fail();
  etrt_method_num_inputs(method, &n_in);
  etrt_method_num_outputs(method, &n_out);
  for (i = 0; i < n_in && i < 16; ++i) {
    int32_t dtype = 0;
    size_t ndim = 0, numel = 1;
    const int64_t* sizes = NULL;
    if (etrt_method_input_meta(method, i, &dtype, &ndim, &sizes) != ETRT_STATUS_OK) return fail();
    for (d = 0; d < ndim; ++d) numel *= (size_t)sizes[d];
    buffers[i] = calloc(numel + 1, kElementSize[dtype]);
    if (etrt_method_set_input_tensor(method, i, buffers[i], dtype, ndim, sizes) != ETRT_STATUS_OK) return fail();
  }
  if (etrt_method_execute(method) != ETRT_STATUS_OK) return fail();
  for (i = 0; i < n_out; ++i) {
    int32_t dtype = 0;
    size_t ndim = 0;
    const int64_t *sizes = NULL, *strides = NULL;
    const void* data = NULL;
    if (etrt_method_output_tensor(method, i, &dtype, &ndim, &sizes, &strides, &data) != ETRT_STATUS_OK) return fail();
    printf("output %zu: dtype %d [", i, (int)dtype);
    for (d = 0; d < ndim; ++d) printf("%s%lld", d ? ", " : "", (long long)sizes[d]);
    printf("]\n");
  }
  /* A bad index is an error value with a message, never a crash. */
  if (etrt_method_set_input_tensor(method, 99, NULL, 0, 0, NULL) == ETRT_STATUS_OK) return 3;
  printf("bad index: %s %s\n", etrt_status_name(ETRT_STATUS_INVALID_ARGUMENT), etrt_last_error());
  etrt_module_free(module);
  for (i = 0; i < 16; ++i) free(buffers[i]);
  return 0;
}
