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
