/* The profiler's C ABI (libetrt_etdump.so), for callers that cannot use C++: the Python binding
 * creates an ETDumpGen here and attaches it with etrt_method_set_event_tracer() of libetrt.so.
 * Same rules as etrt/runtime/c_api.h: status codes, a thread-local message, opaque handles. */
#ifndef ETRT_ETDUMP_ETDUMP_C_H_
#define ETRT_ETDUMP_ETDUMP_C_H_

#include <stddef.h>
#include <stdint.h>

#include "etrt/runtime/c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct etrt_etdump etrt_etdump;

/* A tracer with room for `max_events` events and `max_runs` runs (0: the defaults); with
 * `record_shapes` non-zero it also records the sizes of every tensor an instruction produces. */
ETRT_C_EXPORT etrt_status etrt_etdump_new(size_t max_events, size_t max_runs, int32_t record_shapes,
                                          etrt_etdump** out);
/* NULL is allowed. Detach it from every method first. Unlike module handles (c_api.h,
 * "Handles and freeing"), a tracer is the caller's to own: free it once, when no thread uses it
 * any more; a call on it during or after the free is the caller's bug. */
ETRT_C_EXPORT void etrt_etdump_free(etrt_etdump* dump);
/* The etrt::EventTracer* to pass to etrt_method_set_event_tracer(); owned by `dump`. */
ETRT_C_EXPORT void* etrt_etdump_tracer(etrt_etdump* dump);
ETRT_C_EXPORT size_t etrt_etdump_num_runs(const etrt_etdump* dump);
ETRT_C_EXPORT size_t etrt_etdump_num_events(const etrt_etdump* dump);
ETRT_C_EXPORT size_t etrt_etdump_dropped_events(const etrt_etdump* dump);
/* Forgets what was recorded; keeps the memory. */
ETRT_C_EXPORT void etrt_etdump_reset(etrt_etdump* dump);
/* Writes the .etdump file atomically. */
ETRT_C_EXPORT etrt_status etrt_etdump_write(const etrt_etdump* dump, const char* path);
/* "<Code>: <message>" of the last failed etrt_etdump_* call on this thread; "" if none. */
ETRT_C_EXPORT const char* etrt_etdump_last_error(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ETRT_ETDUMP_ETDUMP_C_H_ */
