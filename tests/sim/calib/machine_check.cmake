# machine_check.cmake — a calibrated machine of scenarios/machines/ against its measured tables,
# the rows its calibration held out summarised apart: the errors README.md records may not grow.
#   -DRINGSIM=... -DMACHINE=calibrated.yaml -DFILES=a.csv|b.csv -DHOLD=spec -DOUT=prefix
#   -DBIG_MEDIAN= -DBIG_WORST= -DSMALL_MEDIAN= (the held-out rows' |error| bounds, >= 1 MiB and below)
cmake_minimum_required(VERSION 3.22)

set(RUN_STEP_NAME machine_check)
include(${CMAKE_CURRENT_LIST_DIR}/../run_step.cmake)

string(REPLACE "|" ";" files "${FILES}")
set(args)
foreach(f IN LISTS files)
  list(APPEND args --measured ${f})
endforeach()
file(REMOVE "${OUT}.json")
run_step(${RINGSIM} compare ${MACHINE} ${args} --hold-out ${HOLD} --json ${OUT}.json)
file(READ "${OUT}.json" doc)
string(JSON big_median GET "${doc}" held_out_from_1mib median_abs_error)
string(JSON big_worst GET "${doc}" held_out_from_1mib worst_error)
string(JSON small_median GET "${doc}" held_out_below_1mib median_abs_error)
string(REGEX REPLACE "^-" "" big_worst "${big_worst}")
message("machine_check: held out >= 1 MiB: median ${big_median}, worst ${big_worst}; below: median ${small_median}")
foreach(k big_median big_worst small_median)
  string(TOUPPER ${k} bound)
  if(NOT ${k} LESS ${${bound}})
    message(FATAL_ERROR "machine_check: ${k} ${${k}} is not below ${${bound}} (README.md's table)")
  endif()
endforeach()
