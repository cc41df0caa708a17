# find_package(Cleave) support, from the build tree and from an install prefix.
include(CMakePackageConfigHelpers)
get_property(_targets GLOBAL PROPERTY CLEAVE_EXPORTED_TARGETS)

configure_package_config_file(
  ${CLEAVE_SOURCE_DIR}/cmake/CleaveConfig.cmake.in
  ${CLEAVE_BINARY_DIR}/lib/cmake/cleave/CleaveConfig.cmake
  INSTALL_DESTINATION lib/cmake/cleave)
write_basic_package_version_file(
  ${CLEAVE_BINARY_DIR}/lib/cmake/cleave/CleaveConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)

# Build tree: Cleave_DIR=<build>/lib/cmake/cleave.
export(TARGETS ${_targets} NAMESPACE Cleave::
       FILE ${CLEAVE_BINARY_DIR}/lib/cmake/cleave/CleaveTargets.cmake)
# Install tree.
install(EXPORT CleaveTargets NAMESPACE Cleave:: DESTINATION lib/cmake/cleave)
install(FILES ${CLEAVE_BINARY_DIR}/lib/cmake/cleave/CleaveConfig.cmake
              ${CLEAVE_BINARY_DIR}/lib/cmake/cleave/CleaveConfigVersion.cmake
        DESTINATION lib/cmake/cleave)
install(DIRECTORY ${CLEAVE_SOURCE_DIR}/include/cleave DESTINATION include
        FILES_MATCHING PATTERN "*.h")
install(DIRECTORY ${CLEAVE_BINARY_DIR}/include/cleave DESTINATION include
        FILES_MATCHING PATTERN "*.inc" PATTERN "*.h")
