// mylib::scaled_relu(Tensor x, float alpha) -> Tensor: alpha * max(x, 0), float32.
// Linking etrt_customop::etrt_customop registers the kernel (a static initializer of
// libetrt_customop.so) into libetrt.so's one operator registry.
#pragma once

namespace etrt_customop {

inline constexpr const char* kScaledRelu = "mylib::scaled_relu";

}  // namespace etrt_customop
