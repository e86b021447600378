# compare_self.cmake — a scenario's own `ringsim run --json` compared against the scenario: every row predicted
# exactly (|error| < 1e-9): the readers, the matching of rows and the replayed protocol (root, dtype,
# iterations, placements) lose nothing.
#   -DRINGSIM=... -DSCENARIO=... -DOUT=prefix -DROWS=n
cmake_minimum_required(VERSION 3.22)

set(RUN_STEP_NAME compare_self)
include(${CMAKE_CURRENT_LIST_DIR}/../run_step.cmake)

file(REMOVE "${OUT}.run.json" "${OUT}.compare.json")
run_step(${RINGSIM} run ${SCENARIO} --json ${OUT}.run.json)
run_step(${RINGSIM} compare ${SCENARIO} --measured ${OUT}.run.json --json ${OUT}.compare.json)
file(READ "${OUT}.compare.json" doc)
string(JSON n LENGTH "${doc}" rows)
if(NOT n EQUAL ROWS)
  message(FATAL_ERROR "compare_self: ${n} rows, expected ${ROWS}")
endif()
math(EXPR last "${n} - 1")
foreach(i RANGE ${last})
  string(JSON e GET "${doc}" rows ${i} error)
  string(JSON size GET "${doc}" rows ${i} size)
  string(JSON coll GET "${doc}" rows ${i} collective)
  string(JSON place GET "${doc}" rows ${i} placement)
  # CMake has no floating point: an exact prediction prints as 0 or with an exponent of -10 or less
  if(NOT e MATCHES "^-?0(\\.0*)?$" AND NOT e MATCHES "e-(1[0-9]|[2-9][0-9]|[1-9][0-9][0-9])$")
    message(FATAL_ERROR "compare_self: ${coll} ${size} B ${place}: error ${e}, expected 0")
  endif()
endforeach()
string(JSON s GET "${doc}" summary rows)
if(NOT s EQUAL ROWS)
  message(FATAL_ERROR "compare_self: the summary counts ${s} rows, expected ${ROWS}")
endif()
message("compare_self: ${n} rows, every one predicted exactly")
