# zmq.cmake — multi-process runs: `ringsim agent` and `ringsim run --backend zmq` (included OPTIONALly by sim/CMakeLists.txt).
if(TARGET ncl_zmq)
  target_sources(ringsim PRIVATE ${CMAKE_CURRENT_LIST_DIR}/rs_agent.c ${CMAKE_CURRENT_LIST_DIR}/rs_zmqrun.c
    ${CMAKE_CURRENT_LIST_DIR}/rs_ranktable.c
    ${CMAKE_CURRENT_LIST_DIR}/rs_bringup.c ${CMAKE_CURRENT_LIST_DIR}/rs_bringup_agent.c
    ${CMAKE_CURRENT_LIST_DIR}/rs_board.cpp ${CMAKE_CURRENT_LIST_DIR}/rs_agents.c)
  # `ringsim agent --backend mmio`: the emulated board is the verilated block (rs_dev_rtl, defined
  # later in rtl_stub/: CMake resolves the name at generate time) driven through ncl_mmio.
  target_link_libraries(ringsim PRIVATE ncl_zmq PkgConfig::ZMQ PkgConfig::YAML rs_dev_rtl ncl_mmio ringsim_regmap)
  target_compile_definitions(ringsim PRIVATE RINGSIM_HAVE_ZMQ=1)
  # The rank table parser on its own, for tests/zmq.
  add_library(ringsim_ranktable STATIC ${CMAKE_CURRENT_LIST_DIR}/rs_ranktable.c)
  target_link_libraries(ringsim_ranktable PUBLIC PkgConfig::YAML)
  target_include_directories(ringsim_ranktable PUBLIC ${CMAKE_CURRENT_LIST_DIR})
endif()
