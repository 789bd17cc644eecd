# Conan CMakeDeps build module: CMakeDeps has no property for a C++ standard.
if(TARGET etrt::runtime)
  set_property(TARGET etrt::runtime APPEND PROPERTY INTERFACE_COMPILE_FEATURES cxx_std_17)
endif()
