# Third-party libraries that etrt's components link.
# Under Conan, CMakeDeps provides <dep>-config.cmake with the <dep>::<dep> target. A plain
# `cmake -S . -B build/x` (sanitizer and unit-test builds) has no such config for most Debian
# packages, so fall back to the system header and library and build the same target here.

# etrt_find_dependency(<name> HEADER <header> LIBRARY <libname>)
# Defines the imported target <name>::<name> or fails while configuring, naming what is missing.
function(etrt_find_dependency name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "HEADER;LIBRARY" "")
  set(target "${name}::${name}")
  if(TARGET ${target})
    return()
  endif()
  find_package(${name} CONFIG QUIET)
  if(TARGET ${target})
    message(STATUS "etrt: ${target} from ${${name}_DIR}")
    return()
  endif()
  find_path(ETRT_${name}_INCLUDE_DIR ${arg_HEADER})
  find_library(ETRT_${name}_LIBRARY ${arg_LIBRARY})
  if(NOT ETRT_${name}_INCLUDE_DIR OR NOT ETRT_${name}_LIBRARY)
    message(FATAL_ERROR "etrt: ${name} not found (need ${arg_HEADER} and lib${arg_LIBRARY}); "
                        "install the Debian package or build through Conan")
  endif()
  add_library(${target} UNKNOWN IMPORTED GLOBAL)
  set_target_properties(${target} PROPERTIES
    IMPORTED_LOCATION "${ETRT_${name}_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${ETRT_${name}_INCLUDE_DIR}")
  message(STATUS "etrt: ${target} from ${ETRT_${name}_LIBRARY}")
endfunction()

etrt_find_dependency(pthreadpool HEADER pthreadpool.h LIBRARY pthreadpool)
# xnnpack.h includes pthreadpool.h: the pthreadpool lookup above provides that header too.
etrt_find_dependency(xnnpack HEADER xnnpack.h LIBRARY XNNPACK)
