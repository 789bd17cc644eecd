// The C ABI over Module and Method: every entry point catches everything, so no exception
// and no C++ type leaves the library.
#include "etrt/runtime/c_api.h"

#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "c_handles.h"
#include "etrt/runtime/cpu_isa.h"
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

namespace handles = etrt::c_handles;

// What an etrt_module handle names.
struct ModuleObject {
  ModuleObject(std::string path, std::string data_path)
      : module(std::move(path), std::move(data_path), etrt::Module::LoadMode::Mmap) {}
  etrt::Module module;
  std::vector<std::string> method_names;  // fixed once opened

  std::mutex methods_mu;                                 // guards `methods`
  std::map<std::string, uintptr_t, std::less<>> methods;  // name -> method handle
};

uintptr_t bits(const void* handle) noexcept { return reinterpret_cast<uintptr_t>(handle); }

// Why a handle cannot be used, as a status and a message naming it (`what`: "module", "method").
etrt_status refuse(const char* what, etrt::ErrorCode code, const char* why) noexcept {
  try {
    return fail(etrt::Error(code, std::string("the ") + what + " " + why));
  } catch (...) {
    return static_cast<etrt_status>(code);
  }
}

// One call on a module: while it lives the module stays open and etrt_module_free waits for
// it. A handle that is freed, being freed, or not a module handle is refused with a status.
class ModuleUse {
 public:
  explicit ModuleUse(uintptr_t handle) noexcept {
    handles::Slot* slot = handles::find(handle);
    if (slot == nullptr) {
      status_ = refuse("module", etrt::ErrorCode::InvalidArgument, "handle is not one etrt returned");
      return;
    }
    std::lock_guard<std::mutex> lock(slot->mu);
    if (slot->state == handles::State::Free || slot->generation != handles::decode(handle).generation) {
      status_ = refuse("module", etrt::ErrorCode::InvalidState, "was freed");
    } else if (slot->kind != handles::Kind::Module) {
      status_ = refuse("module", etrt::ErrorCode::InvalidArgument, "handle is a method handle");
    } else if (slot->state == handles::State::Closing) {
      status_ = refuse("module", etrt::ErrorCode::InvalidState, "is being freed");
    } else {
      ++slot->active;
      slot_ = slot;
      object_ = static_cast<ModuleObject*>(slot->object);
    }
  }
  ModuleUse(const ModuleUse&) = delete;
  ModuleUse& operator=(const ModuleUse&) = delete;
  ~ModuleUse() {
    if (slot_ == nullptr) return;
    std::lock_guard<std::mutex> lock(slot_->mu);
    if (--slot_->active == 0 && slot_->state == handles::State::Closing) slot_->idle.notify_all();
  }
  ModuleObject* object() const noexcept { return object_; }  // null when refused
  etrt_status status() const noexcept { return status_; }

 private:
  handles::Slot* slot_ = nullptr;
  ModuleObject* object_ = nullptr;
  etrt_status status_ = ETRT_STATUS_OK;
};

// One call on a method: holds its module open (ModuleUse) for as long as it lives.
class MethodUse {
 public:
  explicit MethodUse(uintptr_t handle) noexcept {
    handles::Slot* slot = handles::find(handle);
    if (slot == nullptr) {
      status_ = refuse("method", etrt::ErrorCode::InvalidArgument, "handle is not one etrt returned");
      return;
    }
    uintptr_t owner = 0;
    etrt::Method* method = nullptr;
    {
      std::lock_guard<std::mutex> lock(slot->mu);
      if (slot->state != handles::State::Open || slot->generation != handles::decode(handle).generation) {
        status_ = refuse("method", etrt::ErrorCode::InvalidState, "was freed with its module");
        return;
      }
      if (slot->kind != handles::Kind::Method) {
        status_ = refuse("method", etrt::ErrorCode::InvalidArgument, "handle is a module handle");
        return;
      }
      owner = slot->owner;
      method = static_cast<etrt::Method*>(slot->object);
    }
    // If the module is still open here, it was open all along: its free (which ends the
    // method handles before the module) has not begun, so `method` is alive until we let go.
    module_.emplace(owner);
    status_ = module_->status();
    if (status_ == ETRT_STATUS_OK) method_ = method;
  }
  etrt::Method* method() const noexcept { return method_; }  // null when refused
  etrt_status status() const noexcept { return status_; }

 private:
  std::optional<ModuleUse> module_;
  etrt::Method* method_ = nullptr;
  etrt_status status_ = ETRT_STATUS_OK;
};

// Runs `body(ModuleObject&)` as a call on `module` (see ModuleUse), turning exceptions into a
// status.
template <typename F>
etrt_status on_module(etrt_module* module, F&& body) noexcept {
  if (module == nullptr) return null_argument("module");
  ModuleUse use(bits(module));
  if (use.object() == nullptr) return use.status();
  return guarded([&]() -> etrt_status { return body(*use.object()); });
}

// Runs `body(etrt::Method&)` as a metadata call on `method`: never conflicts with a run.
template <typename F>
etrt_status on_method_info(etrt_method* method, F&& body) noexcept {
  if (method == nullptr) return null_argument("method");
  MethodUse use(bits(method));
  if (use.method() == nullptr) return use.status();
  return guarded([&]() -> etrt_status { return body(*use.method()); });
}

// Runs `body(etrt::Method&)` as a call on `method` holding it for the calling thread: while it
// runs, another thread's call on the method fails with InvalidState.
template <typename F>
etrt_status on_method(etrt_method* method, F&& body) noexcept {
  return on_method_info(method, [&](etrt::Method& m) -> etrt_status {
    auto held = m.reserve();
    if (!held.ok()) return fail(held.error());
    return body(m);
  });
}

etrt_status check_index(const char* what, size_t i, size_t count) {
  if (i < count) return ETRT_STATUS_OK;
  return fail(etrt::Error(etrt::ErrorCode::InvalidArgument, std::string(what) + " " + std::to_string(i) +
                                                                " out of range: the method has " +
                                                                std::to_string(count)));
}

// Output i after execute(), checked to be of `kind`.
etrt_status output_of_kind(const etrt::Method& method, size_t i, int32_t kind, const etrt::Value** out) {
  etrt_status s = check_index("output", i, method.num_outputs());
  if (s != ETRT_STATUS_OK) return s;
  const etrt::Value& v = method.output(i);
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
  return on_method(method, [&](etrt::Method& m) -> etrt_status {
    etrt::Error err = m.set_input(i, etrt::Value(value));
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

const char* etrt_cpu_isa(void) { return etrt::to_string(etrt::cpu_isa()); }
const char* etrt_kernel_isa(void) { return etrt::to_string(etrt::kernel_isa()); }

etrt_status etrt_max_isa(const char** out) {
  if (out == nullptr) return null_argument("out");
  *out = nullptr;
  return guarded([&]() -> etrt_status {
    etrt::Result<etrt::CpuIsa> cap = etrt::max_isa();
    if (!cap.ok()) return fail(cap.error());
    *out = etrt::to_string(cap.get());
    return ETRT_STATUS_OK;
  });
}

etrt_status etrt_set_max_isa(const char* name) {
  if (name == nullptr) return null_argument("name");
  return guarded([&]() -> etrt_status {
    etrt::Error err = etrt::set_max_isa(name);
    return err.ok() ? ETRT_STATUS_OK : fail(err);
  });
}

etrt_status etrt_module_open(const char* path, etrt_module** out) { return etrt_module_open_with_data(path, nullptr, out); }

etrt_status etrt_module_open_with_data(const char* path, const char* data_path, etrt_module** out) {
  if (out == nullptr) return null_argument("out");
  *out = nullptr;
  if (path == nullptr) return null_argument("path");
  return guarded([&]() -> etrt_status {
    auto module = std::make_unique<ModuleObject>(path, data_path == nullptr ? "" : data_path);
    etrt::Error err = module->module.load();
    if (!err.ok()) return fail(err);
    auto names = module->module.method_names();
    if (!names.ok()) return fail(names.error());
    module->method_names = std::move(names).get();
    uintptr_t handle = handles::add(handles::Kind::Module, module.get(), 0);
    if (handle == 0) return fail(etrt::ErrorCode::OutOfMemory, "too many modules open at once");
    module.release();
    *out = reinterpret_cast<etrt_module*>(handle);
    return ETRT_STATUS_OK;
  });
}

etrt_status etrt_module_set_max_memory_bytes(etrt_module* module, uint64_t bytes) {
  return on_module(module, [&](ModuleObject& mo) -> etrt_status {
    etrt::LoadOptions options;
    options.max_memory_bytes = bytes;
    mo.module.set_load_options(options);
    return ETRT_STATUS_OK;
  });
}

void etrt_module_free(etrt_module* module) {
  uintptr_t handle = bits(module);
  handles::Slot* slot = handles::find(handle);
  if (slot == nullptr) return;
  ModuleObject* object = nullptr;
  {
    std::unique_lock<std::mutex> lock(slot->mu);
    if (slot->state != handles::State::Open || slot->kind != handles::Kind::Module ||
        slot->generation != handles::decode(handle).generation) {
      return;  // freed already, or being freed by another thread
    }
    slot->state = handles::State::Closing;  // from here every new call is refused
    slot->idle.wait(lock, [&] { return slot->active == 0; });
    object = static_cast<ModuleObject*>(slot->object);
  }
  // No call is inside and none can enter: end the method handles, then the module's, then free.
  for (const auto& entry : object->methods) handles::release(handles::find(entry.second), handles::decode(entry.second).index);
  handles::release(slot, handles::decode(handle).index);
  delete object;
}

etrt_status etrt_module_num_methods(etrt_module* module, size_t* out) {
  if (out == nullptr) return null_argument("out");
  return on_module(module, [&](ModuleObject& mo) -> etrt_status {
    *out = mo.method_names.size();
    return ETRT_STATUS_OK;
  });
}

etrt_status etrt_module_method_name(etrt_module* module, size_t i, const char** out) {
  if (out == nullptr) return null_argument("out");
  return on_module(module, [&](ModuleObject& mo) -> etrt_status {
    if (i >= mo.method_names.size()) {
      return fail(etrt::Error(etrt::ErrorCode::InvalidArgument,
                              "method index " + std::to_string(i) + " out of range: the program has " +
                                  std::to_string(mo.method_names.size())));
    }
    *out = mo.method_names[i].c_str();
    return ETRT_STATUS_OK;
  });
}

etrt_status etrt_module_method(etrt_module* module, const char* name, etrt_method** out) {
  if (out == nullptr) return null_argument("out");
  *out = nullptr;
  if (module == nullptr) return null_argument("module");
  if (name == nullptr) return null_argument("name");
  return on_module(module, [&](ModuleObject& mo) -> etrt_status {
    std::lock_guard<std::mutex> lock(mo.methods_mu);
    auto it = mo.methods.find(std::string_view(name));
    if (it == mo.methods.end()) {
      auto method = mo.module.method(name);
      if (!method.ok()) return fail(method.error());
      uintptr_t handle = handles::add(handles::Kind::Method, *method, bits(module));
      if (handle == 0) return fail(etrt::ErrorCode::OutOfMemory, "too many method handles open at once");
      try {
        it = mo.methods.emplace(name, handle).first;
      } catch (...) {
        handles::release(handles::find(handle), handles::decode(handle).index);
        throw;
      }
    }
    *out = reinterpret_cast<etrt_method*>(it->second);
    return ETRT_STATUS_OK;
  });
}

etrt_status etrt_method_num_inputs(etrt_method* method, size_t* out) {
  if (method == nullptr) return null_argument("method");
  if (out == nullptr) return null_argument("out");
  return on_method_info(method, [&](etrt::Method& m) -> etrt_status {
    *out = m.num_inputs();
    return ETRT_STATUS_OK;
  });
}

etrt_status etrt_method_num_outputs(etrt_method* method, size_t* out) {
  if (method == nullptr) return null_argument("method");
  if (out == nullptr) return null_argument("out");
  return on_method_info(method, [&](etrt::Method& m) -> etrt_status {
    *out = m.num_outputs();
    return ETRT_STATUS_OK;
  });
}

etrt_status etrt_method_input_kind(etrt_method* method, size_t i, int32_t* kind) {
  if (method == nullptr) return null_argument("method");
  if (kind == nullptr) return null_argument("kind");
  return on_method_info(method, [&](etrt::Method& m) -> etrt_status {
    etrt_status s = check_index("input", i, m.num_inputs());
    if (s != ETRT_STATUS_OK) return s;
    *kind = kind_of(m.input_tag(i));
    return ETRT_STATUS_OK;
  });
}

etrt_status etrt_method_output_kind(etrt_method* method, size_t i, int32_t* kind) {
  if (method == nullptr) return null_argument("method");
  if (kind == nullptr) return null_argument("kind");
  return on_method_info(method, [&](etrt::Method& m) -> etrt_status {
    etrt_status s = check_index("output", i, m.num_outputs());
    if (s != ETRT_STATUS_OK) return s;
    *kind = kind_of(m.output_tag(i));
    return ETRT_STATUS_OK;
  });
}

etrt_status etrt_method_input_meta(etrt_method* method, size_t i, int32_t* dtype, size_t* ndim,
                                   const int64_t** sizes) {
  if (method == nullptr) return null_argument("method");
  return on_method_info(method, [&](etrt::Method& m) { return write_meta(m.input_tensor_info(i), dtype, ndim, sizes); });
}

etrt_status etrt_method_output_meta(etrt_method* method, size_t i, int32_t* dtype, size_t* ndim,
                                    const int64_t** sizes) {
  if (method == nullptr) return null_argument("method");
  return on_method_info(method, [&](etrt::Method& m) { return write_meta(m.output_tensor_info(i), dtype, ndim, sizes); });
}

etrt_status etrt_method_input_bounds(etrt_method* method, size_t i, int32_t* dynamic, size_t* ndim,
                                     const int64_t** min_sizes, const int64_t** max_sizes) {
  if (method == nullptr) return null_argument("method");
  return on_method_info(method, [&](etrt::Method& m) -> etrt_status {
    auto info = m.input_tensor_info(i);
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
  return on_method_info(method, [&](etrt::Method& m) -> etrt_status {
    auto info = m.output_tensor_info(i);
    if (!info.ok()) return fail(info.error());
    *dynamic = info->dynamic ? 1 : 0;
    return ETRT_STATUS_OK;
  });
}

etrt_status etrt_method_set_input_tensor(etrt_method* method, size_t i, void* data, int32_t dtype, size_t ndim,
                                         const int64_t* sizes) {
  if (method == nullptr) return null_argument("method");
  if (ndim > 0 && sizes == nullptr) return null_argument("sizes");
  return on_method(method, [&](etrt::Method& m) -> etrt_status {
    auto type = static_cast<etrt::ScalarType>(dtype);
    if (dtype < INT8_MIN || dtype > INT8_MAX || !etrt::is_valid(type)) {
      return fail(etrt::Error(etrt::ErrorCode::InvalidArgument,
                              "input " + std::to_string(i) + ": unknown dtype code " + std::to_string(dtype)));
    }
    auto tensor = etrt::Tensor::make(data, type, etrt::Span<const int64_t>(sizes, ndim));
    if (!tensor.ok()) {
      return fail(etrt::Error(tensor.error().code(), "input " + std::to_string(i) + ": " + tensor.error().message()));
    }
    etrt::Error err = m.set_input(i, *tensor);
    return err.ok() ? ETRT_STATUS_OK : fail(err);
  });
}

etrt_status etrt_method_check_input_tensor(etrt_method* method, size_t i, int32_t dtype, size_t ndim,
                                           const int64_t* sizes) {
  if (method == nullptr) return null_argument("method");
  if (ndim > 0 && sizes == nullptr) return null_argument("sizes");
  return on_method_info(method, [&](etrt::Method& m) -> etrt_status {
    auto type = static_cast<etrt::ScalarType>(dtype);
    if (dtype < INT8_MIN || dtype > INT8_MAX || !etrt::is_valid(type)) {
      return fail(etrt::Error(etrt::ErrorCode::InvalidArgument,
                              "input " + std::to_string(i) + ": unknown dtype code " + std::to_string(dtype)));
    }
    etrt::Error err = m.check_input(i, type, etrt::Span<const int64_t>(sizes, ndim));
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
  return on_method(method, [&](etrt::Method& m) -> etrt_status {
    etrt::Error err = m.execute();
    return err.ok() ? ETRT_STATUS_OK : fail(err);
  });
}

etrt_status etrt_method_num_states(etrt_method* method, size_t* out) {
  if (method == nullptr) return null_argument("method");
  if (out == nullptr) return null_argument("out");
  return on_method_info(method, [&](etrt::Method& m) -> etrt_status {
    *out = m.num_states();
    return ETRT_STATUS_OK;
  });
}

etrt_status etrt_method_reset_state(etrt_method* method) {
  return on_method(method, [&](etrt::Method& m) -> etrt_status {
    etrt::Error err = m.reset_state();
    return err.ok() ? ETRT_STATUS_OK : fail(err);
  });
}

etrt_status etrt_method_set_event_tracer(etrt_method* method, void* tracer) {
  if (method == nullptr) return null_argument("method");
  return on_method_info(method, [&](etrt::Method& m) -> etrt_status {
    m.set_event_tracer(static_cast<etrt::EventTracer*>(tracer));
    return ETRT_STATUS_OK;
  });
}

etrt_status etrt_method_output_tensor(etrt_method* method, size_t i, int32_t* dtype, size_t* ndim,
                                      const int64_t** sizes, const int64_t** strides, const void** data) {
  return on_method(method, [&](etrt::Method& m) -> etrt_status {
    const etrt::Value* v = nullptr;
    etrt_status s = output_of_kind(m, i, ETRT_KIND_TENSOR, &v);
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
  return on_method(method, [&](etrt::Method& m) -> etrt_status {
    const etrt::Value* v = nullptr;
    etrt_status s = output_of_kind(m, i, ETRT_KIND_INT, &v);
    if (s == ETRT_STATUS_OK) *out = v->to_int();
    return s;
  });
}

etrt_status etrt_method_output_double(etrt_method* method, size_t i, double* out) {
  if (out == nullptr) return null_argument("out");
  return on_method(method, [&](etrt::Method& m) -> etrt_status {
    const etrt::Value* v = nullptr;
    etrt_status s = output_of_kind(m, i, ETRT_KIND_DOUBLE, &v);
    if (s == ETRT_STATUS_OK) *out = v->to_double();
    return s;
  });
}

etrt_status etrt_method_output_bool(etrt_method* method, size_t i, int32_t* out) {
  if (out == nullptr) return null_argument("out");
  return on_method(method, [&](etrt::Method& m) -> etrt_status {
    const etrt::Value* v = nullptr;
    etrt_status s = output_of_kind(m, i, ETRT_KIND_BOOL, &v);
    if (s == ETRT_STATUS_OK) *out = v->to_bool() ? 1 : 0;
    return s;
  });
}

}  // extern "C"
