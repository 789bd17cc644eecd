// The C ABI over ETDumpGen: no exception and no C++ type leaves the library.
#include "etrt/etdump/etdump_c.h"

#include <memory>
#include <new>
#include <string>

#include "etrt/etdump/etdump.h"

struct etrt_etdump {
  std::unique_ptr<etrt::etdump::ETDumpGen> gen;
};

namespace {

thread_local std::string t_last_error;

etrt_status fail(const etrt::Error& e) noexcept {
  try {
    t_last_error = e.to_string();
  } catch (...) {
    t_last_error.clear();
  }
  return static_cast<etrt_status>(e.code());
}

etrt_status null_argument(const char* what) noexcept {
  try {
    return fail(etrt::Error(etrt::ErrorCode::InvalidArgument, std::string(what) + " is NULL"));
  } catch (...) {
    return ETRT_STATUS_INVALID_ARGUMENT;
  }
}

}  // namespace

extern "C" {

etrt_status etrt_etdump_new(size_t max_events, size_t max_runs, int32_t record_shapes, etrt_etdump** out) {
  if (out == nullptr) return null_argument("out");
  *out = nullptr;
  etrt::etdump::ETDumpConfig config;
  if (max_events != 0) config.max_events = max_events;
  if (max_runs != 0) config.max_runs = max_runs;
  config.record_shapes = record_shapes != 0;
  auto gen = etrt::etdump::ETDumpGen::create(config);
  if (!gen.ok()) return fail(gen.error());
  auto* dump = new (std::nothrow) etrt_etdump;
  if (dump == nullptr) return ETRT_STATUS_OUT_OF_MEMORY;
  dump->gen = std::move(gen).get();
  *out = dump;
  return ETRT_STATUS_OK;
}

void etrt_etdump_free(etrt_etdump* dump) { delete dump; }

void* etrt_etdump_tracer(etrt_etdump* dump) {
  return dump == nullptr ? nullptr : static_cast<etrt::EventTracer*>(dump->gen.get());
}

size_t etrt_etdump_num_runs(const etrt_etdump* dump) { return dump == nullptr ? 0 : dump->gen->num_runs(); }
size_t etrt_etdump_num_events(const etrt_etdump* dump) { return dump == nullptr ? 0 : dump->gen->num_events(); }
size_t etrt_etdump_dropped_events(const etrt_etdump* dump) {
  return dump == nullptr ? 0 : dump->gen->dropped_events();
}

void etrt_etdump_reset(etrt_etdump* dump) {
  if (dump != nullptr) dump->gen->reset();
}

etrt_status etrt_etdump_write(const etrt_etdump* dump, const char* path) {
  if (dump == nullptr) return null_argument("dump");
  if (path == nullptr) return null_argument("path");
  try {
    etrt::Error err = dump->gen->write(path);
    return err.ok() ? ETRT_STATUS_OK : fail(err);
  } catch (...) {  // std::string(path) may throw
    return fail(etrt::Error(etrt::ErrorCode::OutOfMemory, "out of memory"));
  }
}

const char* etrt_etdump_last_error(void) { return t_last_error.c_str(); }

}  // extern "C"
