# uio.cmake — the mmio backend's access on Linux: a UIO device's register window and device memory
# mapped, its interrupt through the device file (include/ncl/ncl_uio.h). A host library (OS calls:
# open, mmap, ppoll), not firmware: a board links its own access functions instead.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  add_library(ncl_uio STATIC ${CMAKE_CURRENT_LIST_DIR}/ncl_uio.c)
  target_link_libraries(ncl_uio PUBLIC ncl_core ringsim_regmap)
  target_include_directories(ncl_uio PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src) # ncl_fmt.h
  set_target_properties(ncl_uio PROPERTIES POSITION_INDEPENDENT_CODE ON)
endif()
