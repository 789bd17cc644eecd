#include "etrt/runtime/module.h"

#include <map>
#include <optional>

namespace etrt {

struct Module::Impl {
  std::string path;
  std::string data_path;  // empty: no named data map
  LoadMode mode = LoadMode::Mmap;
  std::unique_ptr<DataLoader> loader;
  std::unique_ptr<DataLoader> data_loader;
  std::optional<FlatTensorDataMap> data_map;
  std::optional<Program> program;
  Error load_error;
  bool load_attempted = false;
  EventTracer* tracer = nullptr;
  // Declared after `program` and `loader`: methods are destroyed first.
  std::map<std::string, std::unique_ptr<Method>, std::less<>> methods;
};

Module::Module(std::string path, LoadMode mode) : impl_(std::make_unique<Impl>()) {
  impl_->path = std::move(path);
  impl_->mode = mode;
}

Module::Module(std::string path, std::string data_path, LoadMode mode) : Module(std::move(path), mode) {
  impl_->data_path = std::move(data_path);
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
  if (!m.data_path.empty()) {
    auto data_loader = open_loader(m.data_path, m.mode);
    if (!data_loader.ok()) return m.load_error = data_loader.error();
    m.data_loader = std::move(data_loader).get();
    auto map = FlatTensorDataMap::load(m.data_loader.get());
    if (!map.ok()) return m.load_error = with_path(m.data_path, map.error());
    m.data_map.emplace(std::move(map).get());
  }
  m.program.emplace(std::move(program).get());
  return Error();
}

bool Module::is_loaded() const noexcept { return impl_->program.has_value(); }

Result<std::vector<std::string>> Module::method_names() {
  ETRT_RETURN_IF_ERROR(load());
  return impl_->program->method_names();
}

Result<Method*> Module::method(const std::string& name) {
  ETRT_RETURN_IF_ERROR(load());
  auto it = impl_->methods.find(name);
  if (it != impl_->methods.end()) return it->second.get();
  const NamedDataMap* map = impl_->data_map ? &*impl_->data_map : nullptr;
  ETRT_ASSIGN_OR_RETURN(Method method, impl_->program->load_method(name, nullptr, map));
  auto owned = std::make_unique<Method>(std::move(method));
  owned->set_event_tracer(impl_->tracer);
  Method* raw = owned.get();
  impl_->methods.emplace(name, std::move(owned));
  return raw;
}

Error Module::load_method(const std::string& name) {
  auto m = method(name);
  return m.ok() ? Error() : m.error();
}

void Module::set_event_tracer(EventTracer* tracer) noexcept {
  impl_->tracer = tracer;
  for (auto& entry : impl_->methods) entry.second->set_event_tracer(tracer);
}

EventTracer* Module::event_tracer() const noexcept { return impl_->tracer; }

Result<std::vector<Value>> Module::execute(const std::string& name, const std::vector<Value>& inputs) {
  ETRT_ASSIGN_OR_RETURN(Method * method, this->method(name));
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
