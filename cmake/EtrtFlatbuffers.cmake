# Generates C++ headers from a FlatBuffers schema with flatc, as an INTERFACE target.
find_program(ETRT_FLATC flatc REQUIRED)
find_path(ETRT_FLATBUFFERS_INCLUDE_DIR flatbuffers/flatbuffers.h REQUIRED)

function(etrt_flatc_generate target schema)
  get_filename_component(stem "${schema}" NAME_WE)
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/generated/etrt/fb")
  set(header "${out_dir}/${stem}_generated.h")
  add_custom_command(
    OUTPUT "${header}"
    COMMAND "${ETRT_FLATC}" --cpp --scoped-enums -o "${out_dir}" "${schema}"
    DEPENDS "${schema}"
    COMMENT "flatc ${stem}.fbs"
    VERBATIM)
  add_custom_target(${target}_gen DEPENDS "${header}")
  add_library(${target} INTERFACE)
  add_dependencies(${target} ${target}_gen)
  target_include_directories(${target} INTERFACE
    "${CMAKE_CURRENT_BINARY_DIR}/generated" "${ETRT_FLATBUFFERS_INCLUDE_DIR}")
endfunction()
