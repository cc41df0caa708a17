# Helpers for Cleave's own targets.

# add_cleave_library(name sources...): a library that is part of the exported
# package (find_package(Cleave) gives Cleave::<name>).
function(add_cleave_library name)
  add_library(${name} ${ARGN})
  add_library(Cleave::${name} ALIAS ${name})
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${CLEAVE_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${CLEAVE_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:include>)
  # Headers of Cleave include LLVM/MLIR headers: embedders need their paths.
  target_include_directories(${name} SYSTEM PUBLIC ${LLVM_INCLUDE_DIRS}
                             ${MLIR_INCLUDE_DIRS})
  if(CLEAVE_ENABLE_SANITIZERS OR CLEAVE_ENABLE_FUZZERS)
    # Embedders of a sanitized build must link the sanitizer runtimes too.
    target_link_options(${name} INTERFACE -fsanitize=address,undefined)
  endif()
  set_property(GLOBAL APPEND PROPERTY CLEAVE_EXPORTED_TARGETS ${name})
  install(TARGETS ${name} EXPORT CleaveTargets
          ARCHIVE DESTINATION lib LIBRARY DESTINATION lib)
endfunction()

# add_cleave_tool(name sources...): a command-line tool in bin/.
function(add_cleave_tool name)
  add_executable(${name} ${ARGN})
  install(TARGETS ${name} RUNTIME DESTINATION bin)
endfunction()

# cleave_write_link_graph(file): writes each exported library's direct
# links to Cleave libraries, one "library: dependency..." line each, for
# the layering test (test/Layering). Call once every target is defined.
function(cleave_write_link_graph file)
  get_property(libraries GLOBAL PROPERTY CLEAVE_EXPORTED_TARGETS)
  set(lines "")
  foreach(library IN LISTS libraries)
    get_target_property(links ${library} LINK_LIBRARIES)
    set(deps "")
    foreach(link IN LISTS links)
      if(link MATCHES "^Cleave")
        list(APPEND deps ${link})
      endif()
    endforeach()
    list(JOIN deps " " deps)
    string(APPEND lines "${library}: ${deps}\n")
  endforeach()
  file(WRITE ${file} "${lines}")
endfunction()
