# mmio_agent.cmake — `ringsim agent --backend mmio` end to end (label zmq): emulated boards (a verilated block per agent process, its link over ZeroMQ) give #wrong 0, a killed agent is named, a corrupting link is named by its checksum, a terminated one ends its peers' waits at once, bring-up names a dead link and a slow one, Ctrl-C stops every agent, limits are refused.
if(TARGET ringsim)
  foreach(case run kill corrupt term bringup slow interrupt limits)
    add_test(NAME zmq_mmio_agent_${case}
      COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_mmio_agent.sh $<TARGET_FILE:ringsim> ${case})
    set_tests_properties(zmq_mmio_agent_${case} PROPERTIES LABELS zmq TIMEOUT 60)
  endforeach()
endif()
