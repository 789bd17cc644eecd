// Module: the entry point for C++ callers. It owns the data loader, the program and every
// loaded method, and loads each lazily on first use.
//
// Threads: a Module may be shared. load(), method_names(), method(), load_method() and the
// tracer calls may run from any threads at once: the program loads once and each method once
// (every thread gets the same Method). What a Method allows is in method.h: it runs one call
// at a time and never waits, so a concurrent execute() of the same method fails with
// InvalidState. Moving or destroying a Module while another thread uses it is a data race.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "etrt/runtime/config.h"
#include "etrt/runtime/data_loader.h"
#include "etrt/runtime/error.h"
#include "etrt/runtime/event_tracer.h"
#include "etrt/runtime/method.h"
#include "etrt/runtime/named_data_map.h"
#include "etrt/runtime/program.h"
#include "etrt/runtime/value.h"

namespace etrt {

class ETRT_EXPORT Module {
 public:
  enum class LoadMode {
    File,  // read the file into memory
    Mmap,  // map the file; constants are used in place
  };

  explicit Module(std::string path, LoadMode mode = LoadMode::Mmap);
  // A program whose External tensors live in the named data map (.ptd) at `data_path`.
  Module(std::string path, std::string data_path, LoadMode mode = LoadMode::Mmap);
  // ... or in several, merged (a key may appear in only one of them).
  Module(std::string path, std::vector<std::string> data_paths, LoadMode mode = LoadMode::Mmap);
  // Attaches `tracer` to every method this module loads (see set_event_tracer).
  Module(std::string path, LoadMode mode, EventTracer* tracer);
  explicit Module(std::unique_ptr<DataLoader> loader);
  Module(Module&&) noexcept;
  Module& operator=(Module&&) noexcept;
  ~Module();

  // Opens and verifies the program (and the data map); later calls return the first result again.
  Error load();
  bool is_loaded() const noexcept;
  Result<std::vector<std::string>> method_names();
  // The options (the memory budget) of every method loaded after this call; methods loaded
  // already keep theirs.
  void set_load_options(const LoadOptions& options);
  // Loads method `name` (once) so the first execute() does not pay for it.
  Error load_method(const std::string& name);
  // The loaded method `name`, loading it first if needed. The pointer stays valid as long as
  // the Module.
  Result<Method*> method(const std::string& name);

  // Attaches `tracer` to the methods loaded so far and to every one loaded later; nullptr
  // detaches. The tracer must outlive the module or be detached first.
  void set_event_tracer(EventTracer* tracer) noexcept;
  EventTracer* event_tracer() const noexcept;

  // Sets the inputs, runs the method and returns its outputs, holding the method for the whole
  // call (a concurrent call on the same method fails with InvalidState). Output tensors point
  // into the method's memory: they are valid until the next call on that method or until the
  // Module is destroyed; copy them to keep them longer (before another thread calls it).
  Result<std::vector<Value>> execute(const std::string& name, const std::vector<Value>& inputs);
  Result<std::vector<Value>> forward(const std::vector<Value>& inputs) { return execute("forward", inputs); }

 private:
  Error load_locked();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace etrt
