/* etrt's C ABI: a small, stable surface of libetrt.so for callers that cannot use C++ (the
 * Python binding calls it through ctypes, so one wheel serves every Python version).
 *
 * Rules: no C++ type crosses it; every fallible call returns an etrt_status (0 is success,
 * otherwise an ETRT_STATUS_* code) and leaves a message for etrt_last_error() on the calling
 * thread. Handles are opaque. Plain C89-compatible header: it needs no compile definition.
 *
 * Threads: a module handle may be used from any threads at once. etrt_module_method loads
 * each method once; every thread gets the same handle. A method runs one call at a time and
 * never waits: set_input, execute and output calls on a method that another thread is inside
 * fail with ETRT_STATUS_INVALID_STATE and change nothing. Threads sharing a method serialise
 * their set_input .. execute .. output sequences themselves (or use one module per thread);
 * output data read after the call returns is the caller's to protect from the next execute.
 * Metadata calls (counts, kinds, meta) never conflict with a running execute.
 *
 * Handles and freeing: a handle (etrt_module*, etrt_method*) is an opaque value, not an
 * address, and it is never reused: etrt keeps what it needs to recognise a freed handle for
 * the life of the process, so every entry point can tell a live handle from a dead one.
 * For etrt_module_free(m) called on one thread while other threads call on m or its methods:
 *   - a call that starts before free returns either runs normally (it got in before the free
 *     began, and free waits for it to return) or fails with ETRT_STATUS_INVALID_STATE ("the
 *     module is being freed", "... was freed") having done nothing;
 *   - a call that starts after free returned fails with ETRT_STATUS_INVALID_STATE, however
 *     many modules were opened since; etrt_module_free on it again does nothing;
 *   - neither ever reads or writes memory that was freed.
 * The caller's bug, with no defined outcome:
 *   - using memory the library handed out (method names, sizes, output data) after the module
 *     is freed, or output data after the method's next execute;
 *   - calling etrt_module_free(m) from inside a call on m (an event tracer's callback): free
 *     waits for that call, which waits for free;
 *   - passing as a handle a value no etrt call returned (one that names no handle at all fails
 *     with ETRT_STATUS_INVALID_ARGUMENT; one that happens to equal a live handle acts on it). */
#ifndef ETRT_RUNTIME_C_API_H_
#define ETRT_RUNTIME_C_API_H_

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define ETRT_C_EXPORT __attribute__((visibility("default")))
#else
#define ETRT_C_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when a function changes meaning; functions are only ever added otherwise. */
#define ETRT_C_API_VERSION 1

typedef int32_t etrt_status;
/* Same numbering as etrt::ErrorCode. */
#define ETRT_STATUS_OK 0
#define ETRT_STATUS_INTERNAL 1
#define ETRT_STATUS_INVALID_ARGUMENT 2
#define ETRT_STATUS_INVALID_PROGRAM 3
#define ETRT_STATUS_UNSUPPORTED_VERSION 4
#define ETRT_STATUS_OPERATOR_MISSING 5
#define ETRT_STATUS_BACKEND_MISSING 6
#define ETRT_STATUS_ALREADY_REGISTERED 7
#define ETRT_STATUS_NOT_FOUND 8
#define ETRT_STATUS_OUT_OF_MEMORY 9
#define ETRT_STATUS_IO_ERROR 10
#define ETRT_STATUS_INVALID_STATE 11
#define ETRT_STATUS_KERNEL_FAILED 12

/* Element types (same numbering as etrt::ScalarType). */
#define ETRT_DTYPE_FLOAT32 0
#define ETRT_DTYPE_INT64 1
#define ETRT_DTYPE_INT32 2
#define ETRT_DTYPE_BOOL 3 /* one byte, 0 or 1 */
#define ETRT_DTYPE_UINT8 4
#define ETRT_DTYPE_INT8 5
#define ETRT_DTYPE_FLOAT64 6
#define ETRT_DTYPE_FLOAT16 7  /* IEEE binary16, 2 bytes */
#define ETRT_DTYPE_BFLOAT16 8 /* the upper 2 bytes of a float32 */

/* What a method input or output holds. */
#define ETRT_KIND_NONE 0
#define ETRT_KIND_TENSOR 1
#define ETRT_KIND_INT 2
#define ETRT_KIND_DOUBLE 3
#define ETRT_KIND_BOOL 4
#define ETRT_KIND_OTHER 5 /* lists and strings: not settable or readable through this ABI */

typedef struct etrt_module etrt_module;
typedef struct etrt_method etrt_method;

/* ETRT_C_API_VERSION of the library, and its release version ("0.1.0"). */
ETRT_C_EXPORT int32_t etrt_c_api_version(void);
ETRT_C_EXPORT const char* etrt_version_string(void);

/* "<Code>: <message>" of the last failed call on this thread; "" if none failed yet. Valid
 * until the next failing call on this thread. */
ETRT_C_EXPORT const char* etrt_last_error(void);
/* Name of a status code ("InvalidProgram"); "Unknown" for codes outside the list. */
ETRT_C_EXPORT const char* etrt_status_name(etrt_status status);

/* Registries: one per process, inside libetrt.so. Names are valid for the process lifetime;
 * NULL past the end. */
ETRT_C_EXPORT size_t etrt_num_registered_kernels(void);
ETRT_C_EXPORT const char* etrt_registered_kernel_name(size_t i);
ETRT_C_EXPORT size_t etrt_num_registered_backends(void);
ETRT_C_EXPORT const char* etrt_registered_backend_name(size_t i);

/* Restarts the random stream kernels such as aten::rand draw from (etrt/runtime/random.h). */
ETRT_C_EXPORT void etrt_set_random_seed(uint64_t seed);

/* The instruction set etrt's own kernels dispatch to (etrt/runtime/cpu_isa.h); names are "sse2",
 * "avx2" or "avx512". etrt_max_isa fails (INVALID_ARGUMENT) while ETRT_MAX_ISA holds another
 * value; etrt_set_max_isa replaces ETRT_MAX_ISA's cap (not while a method runs). */
ETRT_C_EXPORT const char* etrt_cpu_isa(void);
ETRT_C_EXPORT const char* etrt_kernel_isa(void);
ETRT_C_EXPORT etrt_status etrt_max_isa(const char** out);
ETRT_C_EXPORT etrt_status etrt_set_max_isa(const char* name);

/* Maps and verifies the program at `path`. On failure *out is NULL. */
ETRT_C_EXPORT etrt_status etrt_module_open(const char* path, etrt_module** out);
/* Same, with the named data map (.ptd) at `data_path` holding the program's external tensors
   (NULL: none). */
ETRT_C_EXPORT etrt_status etrt_module_open_with_data(const char* path, const char* data_path, etrt_module** out);
/* The memory budget (bytes; 0: the default, ETRT_MAX_MEMORY_BYTES or 16 GiB) of every method
 * loaded from the module after this call: a method needing more fails to load with
 * ETRT_STATUS_OUT_OF_MEMORY, before anything is allocated. */
ETRT_C_EXPORT etrt_status etrt_module_set_max_memory_bytes(etrt_module* module, uint64_t bytes);
/* Frees the module and every method handle obtained from it. NULL, or a handle already freed
 * (or being freed by another thread), does nothing. Waits for calls already running on the
 * module or its methods (on other threads) to return; calls arriving meanwhile, and every call
 * on these handles after it returned, fail with ETRT_STATUS_INVALID_STATE (see "Handles and
 * freeing" above). */
ETRT_C_EXPORT void etrt_module_free(etrt_module* module);
ETRT_C_EXPORT etrt_status etrt_module_num_methods(etrt_module* module, size_t* out);
/* *out stays valid as long as the module. */
ETRT_C_EXPORT etrt_status etrt_module_method_name(etrt_module* module, size_t i, const char** out);
/* Loads method `name` (once; later calls return the same handle). The handle is owned by the
 * module. Fails with OperatorMissing / BackendMissing naming what is not registered. */
ETRT_C_EXPORT etrt_status etrt_module_method(etrt_module* module, const char* name, etrt_method** out);

ETRT_C_EXPORT etrt_status etrt_method_num_inputs(etrt_method* method, size_t* out);
ETRT_C_EXPORT etrt_status etrt_method_num_outputs(etrt_method* method, size_t* out);
/* ETRT_KIND_* of input i / output i (an output's kind is known before execute()). */
ETRT_C_EXPORT etrt_status etrt_method_input_kind(etrt_method* method, size_t i, int32_t* kind);
ETRT_C_EXPORT etrt_status etrt_method_output_kind(etrt_method* method, size_t i, int32_t* kind);
/* Expected dtype and sizes of tensor input i; *sizes has *ndim entries, valid as long as the
 * method. */
ETRT_C_EXPORT etrt_status etrt_method_input_meta(etrt_method* method, size_t i, int32_t* dtype, size_t* ndim,
                                                 const int64_t** sizes);
/* Planned dtype and sizes of tensor output i (the upper bound of a dynamic one). */
ETRT_C_EXPORT etrt_status etrt_method_output_meta(etrt_method* method, size_t i, int32_t* dtype, size_t* ndim,
                                                  const int64_t** sizes);
/* The sizes tensor input i accepts, dimension by dimension: *min_sizes and *max_sizes have
 * *ndim entries each (valid as long as the method) and equal the planned sizes unless the
 * input is dynamic (*dynamic = 1). */
ETRT_C_EXPORT etrt_status etrt_method_input_bounds(etrt_method* method, size_t i, int32_t* dynamic, size_t* ndim,
                                                   const int64_t** min_sizes, const int64_t** max_sizes);
/* *dynamic = 1 when tensor output i has a dynamic shape: its sizes after execute() (from
 * etrt_method_output_tensor) are at most the planned ones. */
ETRT_C_EXPORT etrt_status etrt_method_output_dynamic(etrt_method* method, size_t i, int32_t* dynamic);

/* Binds tensor input i to caller memory, without copying: `data` must be contiguous, aligned
 * to the element size, match the expected dtype and sizes (a dynamic input: any sizes within its
 * bounds), and stay valid until execute() returns (or the input is set again). `sizes` is read
 * during the call only. */
ETRT_C_EXPORT etrt_status etrt_method_set_input_tensor(etrt_method* method, size_t i, void* data, int32_t dtype,
                                                       size_t ndim, const int64_t* sizes);
/* Whether a tensor of `dtype` and `sizes` fits input i, judged as etrt_method_set_input_tensor
 * judges it (same status and message), without binding anything: for callers that convert or
 * copy their data first. A metadata call: it never conflicts with a running execute. */
ETRT_C_EXPORT etrt_status etrt_method_check_input_tensor(etrt_method* method, size_t i, int32_t dtype, size_t ndim,
                                                         const int64_t* sizes);
ETRT_C_EXPORT etrt_status etrt_method_set_input_int(etrt_method* method, size_t i, int64_t value);
ETRT_C_EXPORT etrt_status etrt_method_set_input_double(etrt_method* method, size_t i, double value);
ETRT_C_EXPORT etrt_status etrt_method_set_input_bool(etrt_method* method, size_t i, int32_t value);

ETRT_C_EXPORT etrt_status etrt_method_execute(etrt_method* method);

/* State the program mutates (a KV cache, a counter) lives in the method and persists from one
 * execute() to the next. *out is the number of State tensors. */
ETRT_C_EXPORT etrt_status etrt_method_num_states(etrt_method* method, size_t* out);
/* Puts every State tensor back to its initial value, as when the method was loaded. Holds the
 * method like execute(): fails with ETRT_STATUS_INVALID_STATE while another thread is in it. */
ETRT_C_EXPORT etrt_status etrt_method_reset_state(etrt_method* method);

/* Reports every later execute() to `tracer`, an etrt::EventTracer* (for example
 * etrt_etdump_tracer() of libetrt_etdump.so); NULL detaches. The tracer must outlive the
 * method or be detached first. */
ETRT_C_EXPORT etrt_status etrt_method_set_event_tracer(etrt_method* method, void* tracer);

/* Tensor output i after execute(): dtype, sizes and strides (in elements, *ndim entries each)
 * and its data. Everything stays valid until the next execute() on this method or until the
 * module is freed; copy the data to keep it. Strides may describe a non-contiguous view. An
 * output with elements but no memory yet (a view before the method ran) fails with
 * ETRT_STATUS_INVALID_STATE: *data is never NULL for a non-empty tensor. */
ETRT_C_EXPORT etrt_status etrt_method_output_tensor(etrt_method* method, size_t i, int32_t* dtype, size_t* ndim,
                                                    const int64_t** sizes, const int64_t** strides,
                                                    const void** data);
/* Scalar output i after execute(); fails if output i is not of that kind. */
ETRT_C_EXPORT etrt_status etrt_method_output_int(etrt_method* method, size_t i, int64_t* out);
ETRT_C_EXPORT etrt_status etrt_method_output_double(etrt_method* method, size_t i, double* out);
ETRT_C_EXPORT etrt_status etrt_method_output_bool(etrt_method* method, size_t i, int32_t* out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ETRT_RUNTIME_C_API_H_ */
