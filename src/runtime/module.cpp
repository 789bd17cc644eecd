#include "etrt/runtime/module.h"

#include <map>
#include <mutex>
#include <optional>

namespace etrt {

struct Module::Impl {
  // Guards loading, `methods` and `tracer`: a Module is shared between threads. Held while a
  // method loads, so each name is loaded once and no caller sees a Method another one drops.
  std::mutex mu;
  std::string path;
  std::vector<std::string> data_paths;  // .ptd files; none: no named data map
  LoadMode mode = LoadMode::Mmap;
  std::unique_ptr<DataLoader> loader;
  std::vector<std::unique_ptr<DataLoader>> data_loaders;
  std::vector<std::unique_ptr<FlatTensorDataMap>> data_maps;
  std::optional<MergedDataMap> merged;       // with more than one data map
  const NamedDataMap* data_map = nullptr;    // what methods load with
  std::optional<Program> program;
  Error load_error;
  bool load_attempted = false;
  EventTracer* tracer = nullptr;
  LoadOptions options;
  // Declared after `program` and `loader`: methods are destroyed first.
  std::map<std::string, std::unique_ptr<Method>, std::less<>> methods;
};

Module::Module(std::string path, LoadMode mode) : impl_(std::make_unique<Impl>()) {
  impl_->path = std::move(path);
  impl_->mode = mode;
}

Module::Module(std::string path, std::string data_path, LoadMode mode)
    : Module(std::move(path), std::vector<std::string>{std::move(data_path)}, mode) {}

Module::Module(std::string path, std::vector<std::string> data_paths, LoadMode mode)
    : Module(std::move(path), mode) {
  for (std::string& p : data_paths) {
    if (!p.empty()) impl_->data_paths.push_back(std::move(p));
  }
}

Module::Module(std::string path, LoadMode mode, EventTracer* tracer) : Module(std::move(path), mode) {
  impl_->tracer = tracer;
}

Module::Module(std::unique_ptr<DataLoader> loader) : impl_(std::make_unique<Impl>()) {
  impl_->loader = std::move(loader);
}

Module::Module(Module&&) noexcept = default;
Module& Module::operator=(Module&&) noexcept = default;
Module::~Module() = default;

namespace {

Result<std::unique_ptr<DataLoader>> open_loader(const std::string& path, Module::LoadMode mode) {
  if (mode == Module::LoadMode::Mmap) {
    ETRT_ASSIGN_OR_RETURN(MmapDataLoader loader, MmapDataLoader::from(path));
    return std::unique_ptr<DataLoader>(std::make_unique<MmapDataLoader>(std::move(loader)));
  }
  ETRT_ASSIGN_OR_RETURN(FileDataLoader loader, FileDataLoader::from(path));
  return std::unique_ptr<DataLoader>(std::make_unique<FileDataLoader>(std::move(loader)));
}

Error with_path(const std::string& path, const Error& e) {
  return path.empty() ? e : Error(e.code(), path + ": " + e.message());
}

}  // namespace

Error Module::load() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return load_locked();
}

Error Module::load_locked() {
  Impl& m = *impl_;
  if (m.load_attempted) return m.load_error;
  m.load_attempted = true;
  if (!m.loader) {
    auto loader = open_loader(m.path, m.mode);
    if (!loader.ok()) return m.load_error = loader.error();
    m.loader = std::move(loader).get();
  }
  auto program = Program::load(m.loader.get());
  if (!program.ok()) return m.load_error = with_path(m.path, program.error());
  std::vector<const NamedDataMap*> maps;
  for (const std::string& path : m.data_paths) {
    auto data_loader = open_loader(path, m.mode);
    if (!data_loader.ok()) return m.load_error = data_loader.error();
    m.data_loaders.push_back(std::move(data_loader).get());
    auto map = FlatTensorDataMap::load(m.data_loaders.back().get());
    if (!map.ok()) return m.load_error = with_path(path, map.error());
    m.data_maps.push_back(std::make_unique<FlatTensorDataMap>(std::move(map).get()));
    maps.push_back(m.data_maps.back().get());
  }
  if (maps.size() > 1) {
    auto merged = MergedDataMap::of(maps);
    if (!merged.ok()) return m.load_error = merged.error();
    m.merged.emplace(std::move(merged).get());
    m.data_map = &*m.merged;
  } else if (maps.size() == 1) {
    m.data_map = maps[0];
  }
  m.program.emplace(std::move(program).get());
  return Error();
}

bool Module::is_loaded() const noexcept {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->program.has_value();
}

Result<std::vector<std::string>> Module::method_names() {
  ETRT_RETURN_IF_ERROR(load());
  return impl_->program->method_names();  // the program never changes once loaded
}

Result<Method*> Module::method(const std::string& name) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  ETRT_RETURN_IF_ERROR(load_locked());
  auto it = impl_->methods.find(name);
  if (it != impl_->methods.end()) return it->second.get();
  ETRT_ASSIGN_OR_RETURN(Method method, impl_->program->load_method(name, nullptr, impl_->data_map, impl_->options));
  auto owned = std::make_unique<Method>(std::move(method));
  owned->set_event_tracer(impl_->tracer);
  Method* raw = owned.get();
  impl_->methods.emplace(name, std::move(owned));
  return raw;
}

void Module::set_load_options(const LoadOptions& options) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->options = options;
}

Error Module::load_method(const std::string& name) {
  auto m = method(name);
  return m.ok() ? Error() : m.error();
}

void Module::set_event_tracer(EventTracer* tracer) noexcept {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->tracer = tracer;
  for (auto& entry : impl_->methods) entry.second->set_event_tracer(tracer);
}

EventTracer* Module::event_tracer() const noexcept {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->tracer;
}

Result<std::vector<Value>> Module::execute(const std::string& name, const std::vector<Value>& inputs) {
  ETRT_ASSIGN_OR_RETURN(Method * method, this->method(name));
  // One unit: another thread's call on this method cannot slip between these steps.
  ETRT_ASSIGN_OR_RETURN(Method::Reservation held, method->reserve());
  if (inputs.size() != method->num_inputs()) {
    return Error(ErrorCode::InvalidArgument, "method '" + name + "' takes " + std::to_string(method->num_inputs()) +
                                                 " inputs, got " + std::to_string(inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) ETRT_RETURN_IF_ERROR(method->set_input(i, inputs[i]));
  ETRT_RETURN_IF_ERROR(method->execute());
  std::vector<Value> outputs;
  outputs.reserve(method->num_outputs());
  for (size_t i = 0; i < method->num_outputs(); ++i) outputs.push_back(method->output(i));
  return outputs;
}

}  // namespace etrt
