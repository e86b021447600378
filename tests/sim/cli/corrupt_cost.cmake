# corrupt_cost.cmake — what a link-layer replay costs: runs SCENARIO (a chain broadcast whose every
# message over one link is damaged and replayed, crc: true) and the same file without its faults, at
# each fidelity, and fails unless every row took exactly the replays' price more: the row's bytes on
# that link serialised once more (two channels: two halves, each with its packets' headers) plus the
# link's latency once more, within ROUND_PS picoseconds of rounding.
# cmake -DRINGSIM=path -DSCENARIO=file -DOUT=dir -DBANDWIDTH=bytes/s -DLATENCY_PS=ps -DPACKET=bytes
#       -DHEADER=bytes -DROUND_PS=ps -P corrupt_cost.cmake
cmake_minimum_required(VERSION 3.22)

# "10.018172999999999" (us, as cJSON prints it) -> 10018173 (ps, rounded).
function(us_to_ps us out)
  if(NOT us MATCHES "^([0-9]+)(\\.([0-9]*))?$")
    message(FATAL_ERROR "time '${us}' is not a plain decimal number of microseconds")
  endif()
  set(whole "${CMAKE_MATCH_1}")
  set(frac "${CMAKE_MATCH_3}0000000")
  string(SUBSTRING "${frac}" 0 7 frac) # tenths of a ps
  string(REGEX REPLACE "^0+([0-9])" "\\1" frac "${frac}") # not octal
  math(EXPR ps "${whole} * 1000000 + (${frac} + 5) / 10")
  set(${out} ${ps} PARENT_SCOPE)
endfunction()

# Runs a scenario with --json and returns the JSON text; the run must succeed with every value right.
function(run_json yaml json out)
  execute_process(COMMAND ${RINGSIM} run ${yaml} --json ${json} RESULT_VARIABLE rc OUTPUT_VARIABLE text
    ERROR_VARIABLE err)
  message("$ ringsim run ${yaml}\n${text}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${yaml}: exit status ${rc}, expected 0")
  endif()
  file(READ ${json} doc)
  string(JSON result GET "${doc}" result)
  if(NOT result STREQUAL "OK")
    message(FATAL_ERROR "${json}: result ${result}, expected OK (#wrong 0 everywhere)")
  endif()
  set(${out} "${doc}" PARENT_SCOPE)
endfunction()

file(READ ${SCENARIO} text)
string(REGEX REPLACE "\nfaults:.*$" "\n" clean "${text}")
set(failed "")
foreach(fidelity message packet)
  file(WRITE ${OUT}/corrupt_cost_${fidelity}.yaml "${text}fidelity: ${fidelity}\n")
  file(WRITE ${OUT}/corrupt_cost_${fidelity}_clean.yaml "${clean}fidelity: ${fidelity}\n")
  run_json(${OUT}/corrupt_cost_${fidelity}.yaml ${OUT}/corrupt_cost_${fidelity}.json faulty)
  run_json(${OUT}/corrupt_cost_${fidelity}_clean.yaml ${OUT}/corrupt_cost_${fidelity}_clean.json clean_doc)
  string(JSON nrows LENGTH "${faulty}" rows)
  math(EXPR last "${nrows} - 1")
  foreach(i RANGE ${last})
    string(JSON size GET "${faulty}" rows ${i} size)
    # each channel's half, with a header per packet; bytes x 1e12 / bandwidth in ps, done in
    # integers as bytes x (1e12 / BANDWIDTH) with the quotient kept exact by scaling by 3
    math(EXPR half "${size} / 2")
    math(EXPR wire "2 * (${half} + (${half} + ${PACKET} - 1) / ${PACKET} * ${HEADER})")
    math(EXPR want3 "${wire} * 3000000000000 / ${BANDWIDTH} + 3 * ${LATENCY_PS}")
    foreach(place out_of_place in_place)
      string(JSON tf GET "${faulty}" rows ${i} ${place} time_us)
      string(JSON tc GET "${clean_doc}" rows ${i} ${place} time_us)
      us_to_ps(${tf} psf)
      us_to_ps(${tc} psc)
      math(EXPR off "3 * (${psf} - ${psc}) - ${want3}")
      if(off LESS 0)
        math(EXPR off "-(${off})")
      endif()
      math(EXPR delta "${psf} - ${psc}")
      math(EXPR want "${want3} / 3")
      message("${fidelity} ${size} B ${place}: ${tc} -> ${tf} us, +${delta} ps (replays: ${want} ps)")
      math(EXPR limit "3 * ${ROUND_PS}")
      if(off GREATER limit)
        list(APPEND failed "${fidelity} ${size} B ${place}: +${delta} ps, expected ${want} ps")
      endif()
    endforeach()
  endforeach()
endforeach()
if(failed)
  string(REPLACE ";" "\n  " failed "${failed}")
  message(FATAL_ERROR "a replay did not cost its serialisation + latency:\n  ${failed}")
endif()
message("every row took exactly its replays' serialisation + latency more")
