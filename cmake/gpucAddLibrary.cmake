# gpuc_add_library: build a .gdsl program into a linkable library at build
# time (docs/build_integration.md). Included by gpucConfig.cmake.
#
#   gpuc_add_library(<target> <file.gdsl>
#                    [NAME <c-prefix>]        # default: the file's name (vec.gdsl -> vec)
#                    [ARCH sm_80 sm_90 ...]   # cubins to embed (plus PTX of the newest)
#                    [DEFINES NAME=VALUE ...] # template parameters: gpuc -D NAME=VALUE
#                    [OPTIONS ...]            # other gpuc options
#                    [SHARED])                # link lib<name>.so instead of lib<name>.a
#
# runs `gpuc --emit=lib` into ${CMAKE_CURRENT_BINARY_DIR}/gpuc/<target>/
# whenever the .gdsl file, a file it imports (through gpuc's depfile) or
# gpuc itself changes, and makes <target> an imported library carrying
# <name>.h's directory and the gpuc runtime. <target>_MANIFEST (in the
# caller's scope) is the path of the JSON manifest.
function(gpuc_add_library target source)
  cmake_parse_arguments(PARSE_ARGV 2 GAL "SHARED" "NAME" "ARCH;DEFINES;OPTIONS")
  if(GAL_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "gpuc_add_library(${target}): unknown arguments ${GAL_UNPARSED_ARGUMENTS}")
  endif()
  get_filename_component(src "${source}" ABSOLUTE)
  if(NOT GAL_NAME)
    get_filename_component(GAL_NAME "${src}" NAME_WE)
  endif()
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/gpuc/${target}")
  file(MAKE_DIRECTORY "${dir}")
  set(args --emit=lib "${src}" -o "${dir}/lib${GAL_NAME}")
  if(GAL_ARCH)
    list(JOIN GAL_ARCH "," archs)
    list(APPEND args "--arch=${archs}")
  endif()
  foreach(d IN LISTS GAL_DEFINES)
    list(APPEND args -D "${d}")
  endforeach()
  set(outs "${dir}/lib${GAL_NAME}.a" "${dir}/lib${GAL_NAME}.so" "${dir}/${GAL_NAME}.h" "${dir}/${GAL_NAME}.json")
  add_custom_command(OUTPUT ${outs}
    COMMAND "${GPUC_EXECUTABLE}" ${args} ${GAL_OPTIONS}
    DEPENDS "${src}" "${GPUC_EXECUTABLE}"
    DEPFILE "${dir}/${GAL_NAME}.d"
    COMMENT "gpuc: building the library ${GAL_NAME} from ${source}"
    VERBATIM)
  add_custom_target(${target}_gpuc DEPENDS ${outs})
  if(GAL_SHARED)
    add_library(${target} SHARED IMPORTED GLOBAL)
    set_target_properties(${target} PROPERTIES IMPORTED_LOCATION "${dir}/lib${GAL_NAME}.so"
      IMPORTED_SONAME "lib${GAL_NAME}.so")
    set(runtime gpuc::runtime_shared)
  else()
    add_library(${target} STATIC IMPORTED GLOBAL)
    set_target_properties(${target} PROPERTIES IMPORTED_LOCATION "${dir}/lib${GAL_NAME}.a")
    set(runtime gpuc::runtime)
  endif()
  set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${dir}")
  target_link_libraries(${target} INTERFACE ${runtime} ${CMAKE_DL_LIBS} Threads::Threads m)
  add_dependencies(${target} ${target}_gpuc)
  set(${target}_MANIFEST "${dir}/${GAL_NAME}.json" PARENT_SCOPE)
endfunction()
