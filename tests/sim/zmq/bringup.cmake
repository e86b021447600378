# bringup.cmake — `ringsim bringup` end to end (label zmq): a good ring, each injected link fault named, a missing rank, bad arguments, Ctrl-C, JUnit XML; no agent left behind.
if(TARGET ringsim)
  add_executable(bu_json bu_json.c)
  target_link_libraries(bu_json PRIVATE ringsim::cjson)
  foreach(case good dead slow corrupt miswire missing ranktable badargs interrupt junit junit_unwritable)
    add_test(NAME zmq_bringup_${case}
      COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/bringup.sh $<TARGET_FILE:ringsim> $<TARGET_FILE:bu_json> ${case})
    set_tests_properties(zmq_bringup_${case} PROPERTIES LABELS zmq TIMEOUT 60)
  endforeach()
endif()
