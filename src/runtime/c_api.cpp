// The C ABI over Module and Method: every entry point catches everything, so no exception
// and no C++ type leaves the library.
#include "etrt/runtime/c_api.h"

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "etrt/runtime/runtime.h"

static_assert(static_cast<int>(etrt::ErrorCode::KernelFailed) == ETRT_STATUS_KERNEL_FAILED,
              "C status codes follow etrt::ErrorCode");
static_assert(static_cast<int>(etrt::ErrorCode::InvalidProgram) == ETRT_STATUS_INVALID_PROGRAM,
              "C status codes follow etrt::ErrorCode");
static_assert(static_cast<int>(etrt::ScalarType::Double) == ETRT_DTYPE_FLOAT64,
              "C dtype codes follow etrt::ScalarType");
static_assert(static_cast<int>(etrt::ScalarType::Bool) == ETRT_DTYPE_BOOL, "C dtype codes follow etrt::ScalarType");
static_assert(static_cast<int>(etrt::ScalarType::Half) == ETRT_DTYPE_FLOAT16, "C dtype codes follow etrt::ScalarType");
static_assert(static_cast<int>(etrt::ScalarType::BFloat16) == ETRT_DTYPE_BFLOAT16,
              "C dtype codes follow etrt::ScalarType");

struct etrt_method {
  etrt::Method* method;  // owned by the Module
  etrt_module* module;
};

struct etrt_module {
  etrt_module(std::string path, std::string data_path)
      : module(std::move(path), std::move(data_path), etrt::Module::LoadMode::Mmap) {}
  etrt::Module module;
  std::vector<std::string> method_names;  // fixed once opened

  std::mutex methods_mu;  // guards `methods`
  std::map<std::string, std::unique_ptr<etrt_method>, std::less<>> methods;

  // Calls running on the module or its methods; etrt_module_free waits until none is.
  std::mutex use_mu;
  std::condition_variable idle;
  size_t active = 0;
  bool closing = false;
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

etrt_status fail(etrt::ErrorCode code, const char* message) noexcept {
  try {
    return fail(etrt::Error(code, message));
  } catch (...) {
    return static_cast<etrt_status>(code);
  }
}

etrt_status null_argument(const char* what) noexcept {
  try {
    return fail(etrt::Error(etrt::ErrorCode::InvalidArgument, std::string(what) + " is NULL"));
  } catch (...) {
    return ETRT_STATUS_INVALID_ARGUMENT;
  }
}

// Runs `body` (returning etrt_status); turns any escaping exception into a status.
template <typename F>
etrt_status guarded(F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(etrt::ErrorCode::OutOfMemory, "out of memory");
  } catch (...) {
    return fail(etrt::ErrorCode::Internal, "unexpected exception inside etrt");
  }
}

int32_t kind_of(etrt::Tag tag) noexcept {
  switch (tag) {
    case etrt::Tag::None: return ETRT_KIND_NONE;
    case etrt::Tag::Tensor: return ETRT_KIND_TENSOR;
    case etrt::Tag::Int: return ETRT_KIND_INT;
    case etrt::Tag::Double: return ETRT_KIND_DOUBLE;
    case etrt::Tag::Bool: return ETRT_KIND_BOOL;
    default: return ETRT_KIND_OTHER;
  }
}

int32_t kind_of(const etrt::Value& v) noexcept { return kind_of(v.tag()); }

// Marks one call as running on `module` for as long as it lives; fails once the module is
// being freed, so a call racing etrt_module_free gets an error instead of freed memory.
class Use {
 public:
  explicit Use(etrt_module* module) noexcept : module_(module) {
    std::lock_guard<std::mutex> lock(module_->use_mu);
    if (module_->closing) return;
    ++module_->active;
    ok_ = true;
  }
  Use(const Use&) = delete;
  Use& operator=(const Use&) = delete;
  ~Use() {
    if (!ok_) return;
    std::lock_guard<std::mutex> lock(module_->use_mu);
    if (--module_->active == 0 && module_->closing) module_->idle.notify_all();
  }
  bool ok() const noexcept { return ok_; }

 private:
  etrt_module* module_;
  bool ok_ = false;
};

etrt_status module_closing() noexcept { return fail(etrt::ErrorCode::InvalidState, "the module is being freed"); }

// Runs `body` as a call on `module` (see Use), turning exceptions into a status.
template <typename F>
etrt_status on_module(etrt_module* module, F&& body) noexcept {
  Use use(module);
  if (!use.ok()) return module_closing();
  return guarded(std::forward<F>(body));
}

// Runs `body` as a call on `method` holding it for the calling thread: while it runs, another
// thread's call on the method fails with InvalidState.
template <typename F>
etrt_status on_method(etrt_method* method, F&& body) noexcept {
  if (method == nullptr) return null_argument("method");
  return on_module(method->module, [&]() -> etrt_status {
    auto held = method->method->reserve();
    if (!held.ok()) return fail(held.error());
    return body();
  });
}

etrt_status check_index(const char* what, size_t i, size_t count) {
  if (i < count) return ETRT_STATUS_OK;
  return fail(etrt::Error(etrt::ErrorCode::InvalidArgument, std::string(what) + " " + std::to_string(i) +
                                                                " out of range: the method has " +
                                                                std::to_string(count)));
}

// Output i after execute(), checked to be of `kind`.
etrt_status output_of_kind(etrt_method* method, size_t i, int32_t kind, const etrt::Value** out) {
  if (method == nullptr) return null_argument("method");
  etrt_status s = check_index("output", i, method->method->num_outputs());
  if (s != ETRT_STATUS_OK) return s;
  const etrt::Value& v = method->method->output(i);
  if (kind_of(v) != kind) {
    return fail(etrt::Error(etrt::ErrorCode::InvalidArgument,
                            "output " + std::to_string(i) + " is " + etrt::to_string(v.tag())));
  }
  *out = &v;
  return ETRT_STATUS_OK;
}

etrt_status write_meta(const etrt::Result<etrt::TensorInfo>& info, int32_t* dtype, size_t* ndim,
                       const int64_t** sizes) {
  if (!info.ok()) return fail(info.error());
  if (dtype != nullptr) *dtype = static_cast<int32_t>(info->dtype);
  if (ndim != nullptr) *ndim = info->sizes.size();
  if (sizes != nullptr) *sizes = info->sizes.data();
  return ETRT_STATUS_OK;
}

template <typename T>
etrt_status set_scalar(etrt_method* method, size_t i, T value) noexcept {
  return on_method(method, [&]() -> etrt_status {
    etrt::Error err = method->method->set_input(i, etrt::Value(value));
    return err.ok() ? ETRT_STATUS_OK : fail(err);
  });
}

}  // namespace

extern "C" {

int32_t etrt_c_api_version(void) { return ETRT_C_API_VERSION; }

const char* etrt_version_string(void) { return etrt::version(); }

const char* etrt_last_error(void) { return t_last_error.c_str(); }

const char* etrt_status_name(etrt_status status) {
  if (status < 0 || status > ETRT_STATUS_KERNEL_FAILED) return "Unknown";
  return etrt::to_string(static_cast<etrt::ErrorCode>(status));
}

size_t etrt_num_registered_kernels(void) { return etrt::num_registered_kernels(); }
const char* etrt_registered_kernel_name(size_t i) { return etrt::registered_kernel_name(i); }
size_t etrt_num_registered_backends(void) { return etrt::num_registered_backends(); }
const char* etrt_registered_backend_name(size_t i) { return etrt::registered_backend_name(i); }

void etrt_set_random_seed(uint64_t seed) { etrt::set_random_seed(seed); }

etrt_status etrt_module_open(const char* path, etrt_module** out) { return etrt_module_open_with_data(path, nullptr, out); }

etrt_status etrt_module_open_with_data(const char* path, const char* data_path, etrt_module** out) {
  if (out == nullptr) return null_argument("out");
  *out = nullptr;
  if (path == nullptr) return null_argument("path");
  return guarded([&]() -> etrt_status {
    auto module = std::make_unique<etrt_module>(path, data_path == nullptr ? "" : data_path);
    etrt::Error err = module->module.load();
    if (!err.ok()) return fail(err);
    auto names = module->module.method_names();
    if (!names.ok()) return fail(names.error());
    module->method_names = std::move(names).get();
    *out = module.release();
    return ETRT_STATUS_OK;
  });
}

etrt_status etrt_module_set_max_memory_bytes(etrt_module* module, uint64_t bytes) {
  if (module == nullptr) return null_argument("module");
  return on_module(module, [&]() -> etrt_status {
    etrt::LoadOptions options;
    options.max_memory_bytes = bytes;
    module->module.set_load_options(options);
    return ETRT_STATUS_OK;
  });
}

void etrt_module_free(etrt_module* module) {
  if (module == nullptr) return;
  {
    std::unique_lock<std::mutex> lock(module->use_mu);
    module->closing = true;
    module->idle.wait(lock, [&] { return module->active == 0; });
  }
  delete module;
}

etrt_status etrt_module_num_methods(etrt_module* module, size_t* out) {
  if (module == nullptr) return null_argument("module");
  if (out == nullptr) return null_argument("out");
  return on_module(module, [&]() -> etrt_status {
    *out = module->method_names.size();
    return ETRT_STATUS_OK;
  });
}

etrt_status etrt_module_method_name(etrt_module* module, size_t i, const char** out) {
  if (module == nullptr) return null_argument("module");
  if (out == nullptr) return null_argument("out");
  return on_module(module, [&]() -> etrt_status {
    if (i >= module->method_names.size()) {
      return fail(etrt::Error(etrt::ErrorCode::InvalidArgument,
                              "method index " + std::to_string(i) + " out of range: the program has " +
                                  std::to_string(module->method_names.size())));
    }
    *out = module->method_names[i].c_str();
    return ETRT_STATUS_OK;
  });
}

etrt_status etrt_module_method(etrt_module* module, const char* name, etrt_method** out) {
  if (out == nullptr) return null_argument("out");
  *out = nullptr;
  if (module == nullptr) return null_argument("module");
  if (name == nullptr) return null_argument("name");
  return on_module(module, [&]() -> etrt_status {
    std::lock_guard<std::mutex> lock(module->methods_mu);
    auto it = module->methods.find(std::string_view(name));
    if (it == module->methods.end()) {
      auto method = module->module.method(name);
      if (!method.ok()) return fail(method.error());
      it = module->methods.emplace(name, std::make_unique<etrt_method>(etrt_method{*method, module})).first;
    }
    *out = it->second.get();
    return ETRT_STATUS_OK;
  });
}

etrt_status etrt_method_num_inputs(etrt_method* method, size_t* out) {
  if (method == nullptr) return null_argument("method");
  if (out == nullptr) return null_argument("out");
  return on_module(method->module, [&]() -> etrt_status {
    *out = method->method->num_inputs();
    return ETRT_STATUS_OK;
  });
}

etrt_status etrt_method_num_outputs(etrt_method* method, size_t* out) {
  if (method == nullptr) return null_argument("method");
  if (out == nullptr) return null_argument("out");
  return on_module(method->module, [&]() -> etrt_status {
    *out = method->method->num_outputs();
    return ETRT_STATUS_OK;
  });
}

etrt_status etrt_method_input_kind(etrt_method* method, size_t i, int32_t* kind) {
  if (method == nullptr) return null_argument("method");
  if (kind == nullptr) return null_argument("kind");
  return on_module(method->module, [&]() -> etrt_status {
    etrt_status s = check_index("input", i, method->method->num_inputs());
    if (s != ETRT_STATUS_OK) return s;
    *kind = kind_of(method->method->input_tag(i));
    return ETRT_STATUS_OK;
  });
}

etrt_status etrt_method_output_kind(etrt_method* method, size_t i, int32_t* kind) {
  if (method == nullptr) return null_argument("method");
  if (kind == nullptr) return null_argument("kind");
  return on_module(method->module, [&]() -> etrt_status {
    etrt_status s = check_index("output", i, method->method->num_outputs());
    if (s != ETRT_STATUS_OK) return s;
    *kind = kind_of(method->method->output_tag(i));
    return ETRT_STATUS_OK;
  });
}

etrt_status etrt_method_input_meta(etrt_method* method, size_t i, int32_t* dtype, size_t* ndim,
                                   const int64_t** sizes) {
  if (method == nullptr) return null_argument("method");
  return on_module(method->module, [&]() { return write_meta(method->method->input_tensor_info(i), dtype, ndim, sizes); });
}

etrt_status etrt_method_output_meta(etrt_method* method, size_t i, int32_t* dtype, size_t* ndim,
                                    const int64_t** sizes) {
  if (method == nullptr) return null_argument("method");
  return on_module(method->module, [&]() { return write_meta(method->method->output_tensor_info(i), dtype, ndim, sizes); });
}

etrt_status etrt_method_input_bounds(etrt_method* method, size_t i, int32_t* dynamic, size_t* ndim,
                                     const int64_t** min_sizes, const int64_t** max_sizes) {
  if (method == nullptr) return null_argument("method");
  return on_module(method->module, [&]() -> etrt_status {
    auto info = method->method->input_tensor_info(i);
    if (!info.ok()) return fail(info.error());
    if (dynamic != nullptr) *dynamic = info->dynamic ? 1 : 0;
    if (ndim != nullptr) *ndim = info->min_sizes.size();
    if (min_sizes != nullptr) *min_sizes = info->min_sizes.data();
    if (max_sizes != nullptr) *max_sizes = info->max_sizes.data();
    return ETRT_STATUS_OK;
  });
}

etrt_status etrt_method_output_dynamic(etrt_method* method, size_t i, int32_t* dynamic) {
  if (method == nullptr) return null_argument("method");
  if (dynamic == nullptr) return null_argument("dynamic");
  return on_module(method->module, [&]() -> etrt_status {
    auto info = method->method->output_tensor_info(i);
    if (!info.ok()) return fail(info.error());
    *dynamic = info->dynamic ? 1 : 0;
    return ETRT_STATUS_OK;
  });
}

etrt_status etrt_method_set_input_tensor(etrt_method* method, size_t i, void* data, int32_t dtype, size_t ndim,
                                         const int64_t* sizes) {
  if (method == nullptr) return null_argument("method");
  if (ndim > 0 && sizes == nullptr) return null_argument("sizes");
  return on_method(method, [&]() -> etrt_status {
    auto type = static_cast<etrt::ScalarType>(dtype);
    if (dtype < INT8_MIN || dtype > INT8_MAX || !etrt::is_valid(type)) {
      return fail(etrt::Error(etrt::ErrorCode::InvalidArgument,
                              "input " + std::to_string(i) + ": unknown dtype code " + std::to_string(dtype)));
    }
    auto tensor = etrt::Tensor::make(data, type, etrt::Span<const int64_t>(sizes, ndim));
    if (!tensor.ok()) {
      return fail(etrt::Error(tensor.error().code(), "input " + std::to_string(i) + ": " + tensor.error().message()));
    }
    etrt::Error err = method->method->set_input(i, *tensor);
    return err.ok() ? ETRT_STATUS_OK : fail(err);
  });
}

etrt_status etrt_method_check_input_tensor(etrt_method* method, size_t i, int32_t dtype, size_t ndim,
                                           const int64_t* sizes) {
  if (method == nullptr) return null_argument("method");
  if (ndim > 0 && sizes == nullptr) return null_argument("sizes");
  return on_module(method->module, [&]() -> etrt_status {
    auto type = static_cast<etrt::ScalarType>(dtype);
    if (dtype < INT8_MIN || dtype > INT8_MAX || !etrt::is_valid(type)) {
      return fail(etrt::Error(etrt::ErrorCode::InvalidArgument,
                              "input " + std::to_string(i) + ": unknown dtype code " + std::to_string(dtype)));
    }
    etrt::Error err = method->method->check_input(i, type, etrt::Span<const int64_t>(sizes, ndim));
    return err.ok() ? ETRT_STATUS_OK : fail(err);
  });
}

etrt_status etrt_method_set_input_int(etrt_method* method, size_t i, int64_t value) {
  return set_scalar(method, i, value);
}
etrt_status etrt_method_set_input_double(etrt_method* method, size_t i, double value) {
  return set_scalar(method, i, value);
}
etrt_status etrt_method_set_input_bool(etrt_method* method, size_t i, int32_t value) {
  return set_scalar(method, i, value != 0);
}

etrt_status etrt_method_execute(etrt_method* method) {
  return on_method(method, [&]() -> etrt_status {
    etrt::Error err = method->method->execute();
    return err.ok() ? ETRT_STATUS_OK : fail(err);
  });
}

etrt_status etrt_method_num_states(etrt_method* method, size_t* out) {
  if (method == nullptr) return null_argument("method");
  if (out == nullptr) return null_argument("out");
  return on_module(method->module, [&]() -> etrt_status {
    *out = method->method->num_states();
    return ETRT_STATUS_OK;
  });
}

etrt_status etrt_method_reset_state(etrt_method* method) {
  return on_method(method, [&]() -> etrt_status {
    etrt::Error err = method->method->reset_state();
    return err.ok() ? ETRT_STATUS_OK : fail(err);
  });
}

etrt_status etrt_method_set_event_tracer(etrt_method* method, void* tracer) {
  if (method == nullptr) return null_argument("method");
  return on_module(method->module, [&]() -> etrt_status {
    method->method->set_event_tracer(static_cast<etrt::EventTracer*>(tracer));
    return ETRT_STATUS_OK;
  });
}

etrt_status etrt_method_output_tensor(etrt_method* method, size_t i, int32_t* dtype, size_t* ndim,
                                      const int64_t** sizes, const int64_t** strides, const void** data) {
  return on_method(method, [&]() -> etrt_status {
    const etrt::Value* v = nullptr;
    etrt_status s = output_of_kind(method, i, ETRT_KIND_TENSOR, &v);
    if (s != ETRT_STATUS_OK) return s;
    const etrt::Tensor& t = v->to_tensor();
    if (t.data() == nullptr && t.numel() > 0) {  // a view output before execute() has run
      return fail(etrt::Error(etrt::ErrorCode::InvalidState,
                              "output " + std::to_string(i) + " has no data yet: execute the method first"));
    }
    if (dtype != nullptr) *dtype = static_cast<int32_t>(t.dtype());
    if (ndim != nullptr) *ndim = static_cast<size_t>(t.dim());
    if (sizes != nullptr) *sizes = t.sizes().data();
    if (strides != nullptr) *strides = t.strides().data();
    if (data != nullptr) *data = t.data();
    return ETRT_STATUS_OK;
  });
}

etrt_status etrt_method_output_int(etrt_method* method, size_t i, int64_t* out) {
  if (out == nullptr) return null_argument("out");
  return on_method(method, [&]() -> etrt_status {
    const etrt::Value* v = nullptr;
    etrt_status s = output_of_kind(method, i, ETRT_KIND_INT, &v);
    if (s == ETRT_STATUS_OK) *out = v->to_int();
    return s;
  });
}

etrt_status etrt_method_output_double(etrt_method* method, size_t i, double* out) {
  if (out == nullptr) return null_argument("out");
  return on_method(method, [&]() -> etrt_status {
    const etrt::Value* v = nullptr;
    etrt_status s = output_of_kind(method, i, ETRT_KIND_DOUBLE, &v);
    if (s == ETRT_STATUS_OK) *out = v->to_double();
    return s;
  });
}

etrt_status etrt_method_output_bool(etrt_method* method, size_t i, int32_t* out) {
  if (out == nullptr) return null_argument("out");
  return on_method(method, [&]() -> etrt_status {
    const etrt::Value* v = nullptr;
    etrt_status s = output_of_kind(method, i, ETRT_KIND_BOOL, &v);
    if (s == ETRT_STATUS_OK) *out = v->to_bool() ? 1 : 0;
    return s;
  });
}

}  // extern "C"
