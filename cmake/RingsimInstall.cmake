# RingsimInstall.cmake — `cmake --install`: the engine libraries, headers, CMake package and pkg-config file.
#
# A consumer then uses either
#   find_package(ringsim REQUIRED)  +  target_link_libraries(app PRIVATE ringsim::ncl)
# or
#   cc app.c $(pkg-config --cflags --libs ringsim)
# ringsim::ncl is the host backend (links ringsim::ncl_core, the backends' shared helpers
# ringsim::ncl_backend and Threads); ringsim::ncl_core is
# the portable engine alone, for consumers that bring their own HAL backend; ringsim::ncl_wire is
# the wire protocol's codec (ncl/ncl_wire.h), for consumers that speak it (not in pkg-config's
# Libs: the host backend does not need it; link -lncl_wire -lncl_core yourself). ringsim::ringsim
# is the program, and ringsim_add_scenario_test() (ringsimScenarioTest.cmake) runs a scenario
# with it as a test of the consumer's own CTest.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(RINGSIM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ringsim
    CACHE STRING "Where ringsimConfig.cmake is installed (relative to the prefix)")

set(_ringsim_exported ncl_core ncl_backend ncl ncl_wire)
if(TARGET ringsim)
  list(APPEND _ringsim_exported ringsim) # ringsim::ringsim, for ringsim_add_scenario_test()
endif()
install(TARGETS ${_ringsim_exported}
  EXPORT ringsimTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

install(DIRECTORY ${PROJECT_SOURCE_DIR}/firmware/include/ncl/
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ncl
  FILES_MATCHING PATTERN "*.h")

install(EXPORT ringsimTargets
  NAMESPACE ringsim::
  FILE ringsimTargets.cmake
  DESTINATION ${RINGSIM_CMAKE_DIR})

configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/ringsimConfig.cmake.in
  ${PROJECT_BINARY_DIR}/ringsimConfig.cmake
  INSTALL_DESTINATION ${RINGSIM_CMAKE_DIR})
# 0.x: a minor release may break the API, so only the same major.minor is compatible.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/ringsimConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/ringsimConfig.cmake
  ${PROJECT_BINARY_DIR}/ringsimConfigVersion.cmake
  ${CMAKE_CURRENT_LIST_DIR}/ringsimScenarioTest.cmake
  DESTINATION ${RINGSIM_CMAKE_DIR})

# pkg-config: paths are written relative to the .pc file's own directory (${pcfiledir}) so the
# file stays right when the prefix is chosen at install time (`cmake --install --prefix DIR`).
function(_ringsim_pc_path out dir)
  if(IS_ABSOLUTE "${dir}")
    set(${out} "${dir}" PARENT_SCOPE)
  else()
    file(RELATIVE_PATH rel "/_p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/_p/${dir}")
    string(REGEX REPLACE "/+$" "" rel "${rel}")
    if(rel STREQUAL "")
      set(${out} "\${pcfiledir}" PARENT_SCOPE)
    else()
      set(${out} "\${pcfiledir}/${rel}" PARENT_SCOPE)
    endif()
  endif()
endfunction()
_ringsim_pc_path(RINGSIM_PC_PREFIX ".")
_ringsim_pc_path(RINGSIM_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
_ringsim_pc_path(RINGSIM_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/ringsim.pc.in ${PROJECT_BINARY_DIR}/ringsim.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/ringsim.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

if(EXISTS ${PROJECT_SOURCE_DIR}/LICENSE)
  install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
endif()
