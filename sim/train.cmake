# train.cmake — `ringsim train`: the data-parallel example (dp/) compiled into the program.
# Included by sim/CMakeLists.txt; dp/ is added after sim/, so the `dp` target is referenced by
# name here (CMake resolves it at generate time) and only when the dp module exists.
if(EXISTS ${PROJECT_SOURCE_DIR}/dp/CMakeLists.txt)
  target_sources(ringsim PRIVATE ${PROJECT_SOURCE_DIR}/dp/train/rs_train.c)
  target_include_directories(ringsim PRIVATE ${PROJECT_SOURCE_DIR}/dp/train)
  target_link_libraries(ringsim PRIVATE dp m)
endif()
