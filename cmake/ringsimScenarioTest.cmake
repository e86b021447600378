# ringsimScenarioTest.cmake — ringsim_add_scenario_test(): run a ringsim scenario as one of your own CTest tests.
#
#   ringsim_add_scenario_test(NAME <test> SCENARIO <file.yaml>
#                             [BACKEND model|host|zmq] [ARGS <ringsim run args>...]
#                             [TIMEOUT <seconds>] [LABELS <label>...])
#
# The test runs `ringsim run [--backend B] <file> --junit <build dir>/<test>.junit.xml [ARGS]`: it
# passes when every result is bit-exact and the run ends normally (exit 0). A wrong value (exit 1),
# a bad scenario (2) or an engine error such as a timeout or dead link (3) fail it, with ringsim's
# message in the test's output; the JUnit file has one testcase per row for CI dashboards. A
# relative SCENARIO is taken from the calling CMakeLists.txt's directory.
# The program is ringsim::ringsim (installed with the package) unless RINGSIM_EXECUTABLE is set.
function(ringsim_add_scenario_test)
  cmake_parse_arguments(RS "" "NAME;SCENARIO;BACKEND;TIMEOUT" "ARGS;LABELS" ${ARGN})
  if(RS_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "ringsim_add_scenario_test: unknown arguments '${RS_UNPARSED_ARGUMENTS}' "
                        "(allowed: NAME, SCENARIO, BACKEND, ARGS, TIMEOUT, LABELS)")
  endif()
  if(NOT RS_NAME OR NOT RS_SCENARIO)
    message(FATAL_ERROR "ringsim_add_scenario_test: NAME and SCENARIO are required")
  endif()
  if(RS_BACKEND AND NOT RS_BACKEND MATCHES "^(model|host|zmq)$")
    message(FATAL_ERROR "ringsim_add_scenario_test(${RS_NAME}): BACKEND '${RS_BACKEND}' "
                        "(allowed: model, host, zmq)")
  endif()
  get_filename_component(scenario "${RS_SCENARIO}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${scenario}")
    message(FATAL_ERROR "ringsim_add_scenario_test(${RS_NAME}): no scenario file ${scenario}")
  endif()
  if(RINGSIM_EXECUTABLE)
    set(program "${RINGSIM_EXECUTABLE}")
  elseif(TARGET ringsim::ringsim)
    set(program "$<TARGET_FILE:ringsim::ringsim>")
  else()
    message(FATAL_ERROR "ringsim_add_scenario_test: no ringsim program (the package was installed "
                        "without it; set RINGSIM_EXECUTABLE)")
  endif()
  set(backend "")
  if(RS_BACKEND AND NOT RS_BACKEND STREQUAL "model")
    set(backend --backend ${RS_BACKEND})
  endif()
  add_test(NAME ${RS_NAME}
    COMMAND ${program} run ${backend} "${scenario}"
            --junit "${CMAKE_CURRENT_BINARY_DIR}/${RS_NAME}.junit.xml" ${RS_ARGS})
  if(NOT RS_TIMEOUT)
    set(RS_TIMEOUT 600)
  endif()
  set_tests_properties(${RS_NAME} PROPERTIES TIMEOUT ${RS_TIMEOUT})
  if(RS_LABELS)
    set_tests_properties(${RS_NAME} PROPERTIES LABELS "${RS_LABELS}")
  endif()
endfunction()
