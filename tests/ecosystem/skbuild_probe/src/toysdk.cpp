// The toysdk probe: what the process-wide registry in libtoysdk_core holds (the plugin is
// there only if its registration-only library was retained) and which objects are loaded.
#include <link.h>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "toysdk/core.h"
#include "toysdk/extra.h"

namespace nb = nanobind;

namespace {

int collect(struct dl_phdr_info* info, size_t, void* out) {
  if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') {
    static_cast<std::vector<std::string>*>(out)->emplace_back(info->dlpi_name);
  }
  return 0;
}

std::vector<std::string> loaded() {
  std::vector<std::string> out;
  dl_iterate_phdr(collect, &out);
  return out;
}

}  // namespace

NB_MODULE(ecosystem_probe, m) {
  m.def("api_version", &toysdk::api_version);
  m.def("plugin_count", &toysdk::plugin_count);
  m.def("has_plugin", [](const std::string& name) { return toysdk::has_plugin(name); });
  m.def("compressed_size", [](const std::string& data) { return toysdk::compressed_size(data); });
  m.def("loaded", &loaded, "paths of every shared object in the process");
}
