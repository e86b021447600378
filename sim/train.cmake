# train.cmake — `ringsim train`: the data-parallel example (dp/) compiled into the program, with
# --scenario running its ranks on the simulated machine (rs_simworld). dp/ is added after sim/,
# so its targets are referenced by name here (CMake resolves them at generate time).
if(EXISTS ${PROJECT_SOURCE_DIR}/dp/CMakeLists.txt)
  target_sources(ringsim PRIVATE rs_simworld.cpp)
  target_link_libraries(ringsim PRIVATE dp_train_cli)
endif()
