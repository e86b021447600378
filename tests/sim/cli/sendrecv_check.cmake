# sendrecv_check.cmake — a sendrecv table against its links: runs SCENARIO (collectives [sendrecv],
# payload real) with --json and fails unless every row is bit-exact, has no in-place result (out of
# place only), is never faster than one link (BW, decimal GB/s) carries its size, and from FROM
# bytes on reaches a bus bandwidth between LOW and HIGH GB/s; with MID, rows from MID bytes to FROM
# take at most SLACK x one link's time (LAT us + size / BW).
# cmake -DRINGSIM=path -DSCENARIO=file -DJSON=file -DBW=30 -DFROM=16777216 -DLOW=28.5 -DHIGH=30
#   [-DMID=262144 -DLAT=1.5 -DSLACK=1.4] -P sendrecv_check.cmake
cmake_minimum_required(VERSION 3.22)

execute_process(COMMAND ${RINGSIM} run ${SCENARIO} --json ${JSON} RESULT_VARIABLE rc OUTPUT_VARIABLE out
  ERROR_VARIABLE err)
message("$ ringsim run ${SCENARIO}\n${out}${err}--- exit status ${rc} ---")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ringsim run failed")
endif()
file(READ ${JSON} doc)
string(JSON nrows LENGTH "${doc}" rows)
set(checked 0)
math(EXPR last "${nrows} - 1")
foreach(i RANGE ${last})
  string(JSON coll GET "${doc}" rows ${i} collective)
  string(JSON size GET "${doc}" rows ${i} size)
  string(JSON wrong GET "${doc}" rows ${i} out_of_place wrong)
  string(JSON t GET "${doc}" rows ${i} out_of_place time_us)
  string(JSON busbw GET "${doc}" rows ${i} out_of_place busbw_gbps)
  string(JSON inplace TYPE "${doc}" rows ${i} in_place)
  if(NOT coll STREQUAL "sendrecv" OR NOT wrong EQUAL 0 OR NOT inplace STREQUAL "NULL")
    message(FATAL_ERROR "row ${i}: ${coll} ${size} B: ${wrong} wrong values, in place ${inplace} (want sendrecv, 0, null)")
  endif()
  if(busbw GREATER BW)
    message(FATAL_ERROR "${size} B took ${t} us (${busbw} GB/s): faster than a ${BW} GB/s link carries it")
  endif()
  if(DEFINED MID AND size GREATER_EQUAL MID AND size LESS FROM) # cmake's math is integer: awk compares
    execute_process(COMMAND awk "BEGIN { exit !(${t} <= ${SLACK} * (${LAT} + ${size} / (${BW} * 1000.0))) }"
      RESULT_VARIABLE over)
    if(NOT over EQUAL 0)
      message(FATAL_ERROR "${size} B took ${t} us: more than ${SLACK} x one link's ${LAT} us + ${size} B at ${BW} GB/s")
    endif()
  endif()
  if(size GREATER_EQUAL FROM)
    if(busbw LESS LOW OR busbw GREATER HIGH)
      message(FATAL_ERROR "${size} B: bus bandwidth ${busbw} GB/s, expected ${LOW} .. ${HIGH}")
    endif()
    math(EXPR checked "${checked} + 1")
  endif()
endforeach()
if(checked EQUAL 0)
  message(FATAL_ERROR "no row from ${FROM} B")
endif()
