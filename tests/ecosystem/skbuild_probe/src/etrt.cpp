// The etrt probe: a Python extension that runs a program through the SDK's public C++ API.
// numpy float32 arrays in (bound without a copy), numpy arrays out; an etrt::Error becomes a
// RuntimeError carrying its message.
#include <link.h>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "etrt/runtime/runtime.h"

namespace nb = nanobind;

namespace {

using Input = nb::ndarray<const float, nb::c_contig, nb::device::cpu>;
using Output = nb::ndarray<nb::numpy, float>;

[[noreturn]] void raise(const etrt::Error& e) { throw std::runtime_error(e.to_string()); }

std::vector<Output> run(const std::string& program, const std::vector<Input>& inputs) {
  etrt::Module module(program);
  auto method_or = module.method("forward");
  if (!method_or.ok()) raise(method_or.error());
  etrt::Method& method = **method_or;
  if (inputs.size() != method.num_inputs()) {
    throw std::invalid_argument("the program takes " + std::to_string(method.num_inputs()) + " inputs, got " +
                                std::to_string(inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto info = method.input_tensor_info(i);
    if (!info.ok()) raise(info.error());
    if (info->dtype != etrt::ScalarType::Float || inputs[i].size() * sizeof(float) != info->nbytes) {
      throw std::invalid_argument("input " + std::to_string(i) + " does not match the program's float32 input");
    }
    // The method's own sizes: the caller's array only has to hold the same elements.
    auto tensor = etrt::from_blob(const_cast<float*>(inputs[i].data()), info->dtype, info->sizes);
    if (!tensor.ok()) raise(tensor.error());
    etrt::Error err = method.set_input(i, *tensor);
    if (!err.ok()) raise(err);
  }
  etrt::Error err = method.execute();
  if (!err.ok()) raise(err);

  std::vector<Output> outputs;
  for (size_t i = 0; i < method.num_outputs(); ++i) {
    const etrt::Value& v = method.output(i);
    if (!v.is_tensor() || v.to_tensor().dtype() != etrt::ScalarType::Float || !v.to_tensor().is_contiguous()) {
      throw std::runtime_error("output " + std::to_string(i) + " is not a contiguous float32 tensor");
    }
    const etrt::Tensor& t = v.to_tensor();
    // Outputs live in the method's memory, which dies with the Module: copy them out.
    std::vector<size_t> shape;
    for (int d = 0; d < t.dim(); ++d) shape.push_back(static_cast<size_t>(t.size(d)));
    auto* data = new float[static_cast<size_t>(t.numel())];
    std::memcpy(data, t.data(), static_cast<size_t>(t.numel()) * sizeof(float));
    nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<float*>(p); });
    outputs.emplace_back(data, shape.size(), shape.data(), owner);
  }
  return outputs;
}

std::vector<std::string> kernels() {
  std::vector<std::string> out;
  for (size_t i = 0; i < etrt::num_registered_kernels(); ++i) out.emplace_back(etrt::registered_kernel_name(i));
  return out;
}

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
  m.def("run", &run, nb::arg("program"), nb::arg("inputs"), "runs the program's forward method");
  m.def("kernels", &kernels, "operators in the process-wide registry");
  m.def("loaded", &loaded, "paths of every shared object in the process");
}
