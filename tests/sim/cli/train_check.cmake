# train_check.cmake — a training step's timeline against separately simulated allreduces.
# cmake -DRINGSIM=<ringsim> -DDIR=<tests/sim/cli/scenarios> -P train_check.cmake
# 1. Fusion into one bucket leaves nothing to overlap: iteration = compute + the in-place
#    allreduce of all the gradients that `ringsim run` measures on its own (within 1 % of it).
# 2. The default split and a 25 MiB threshold expose less communication than one bucket; the
#    report's numbers say how much.
cmake_minimum_required(VERSION 3.22)

function(run_ok out_var)
  execute_process(COMMAND ${RINGSIM} run ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ringsim run ${ARGN}: exit ${rc}\n${out}\n${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

# iteration, compute, allreduce, exposed from the report's summary row
function(summary text prefix)
  string(REGEX MATCH "#wrong\n +([0-9.]+) +([0-9.]+) +([0-9.]+) +([0-9.]+)" m "${text}")
  if(NOT m)
    message(FATAL_ERROR "no training summary in:\n${text}")
  endif()
  set(${prefix}_iter ${CMAKE_MATCH_1} PARENT_SCOPE)
  set(${prefix}_compute ${CMAKE_MATCH_2} PARENT_SCOPE)
  set(${prefix}_comm ${CMAKE_MATCH_3} PARENT_SCOPE)
  set(${prefix}_exposed ${CMAKE_MATCH_4} PARENT_SCOPE)
endfunction()

run_ok(single ${DIR}/train_single.yaml)
summary("${single}" s)
run_ok(sweep ${DIR}/train_sweep.yaml)
# the nccl-tests row: size count type redop root | out-of-place time algbw busbw #wrong | in-place time ...
string(REGEX MATCH "\n +102228128 +25557032 +float +sum +-?[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[^ ]+ +([0-9.]+)" m "${sweep}")
if(NOT m)
  message(FATAL_ERROR "no 102228128-byte allreduce row in:\n${sweep}")
endif()
set(alone ${CMAKE_MATCH_1})
message("one bucket: iteration ${s_iter} us = compute ${s_compute} us + allreduce; the allreduce alone: ${alone} us")

# CMake has no floating point: compare in integers of 0.1 us
function(tenths var value)
  string(REGEX REPLACE "\\.([0-9]).*$" "\\1" t "${value}")
  string(REGEX REPLACE "\\..*$" "" w "${value}")
  if(NOT value MATCHES "\\.")
    set(t 0)
  endif()
  math(EXPR r "${w} * 10 + ${t}")
  set(${var} ${r} PARENT_SCOPE)
endfunction()
tenths(iter ${s_iter})
tenths(compute ${s_compute})
tenths(ar ${alone})
math(EXPR diff "${iter} - ${compute} - ${ar}")
if(diff LESS 0)
  math(EXPR diff "0 - ${diff}")
endif()
math(EXPR limit "${ar} / 100")
if(diff GREATER limit)
  message(FATAL_ERROR "one bucket: iteration - compute differs from the allreduce alone by ${diff} tenths of a us "
          "(more than 1 %: ${limit})")
endif()

foreach(fusion "default" "threshold: 25 MiB")
  run_ok(out ${DIR}/train_single.yaml --fusion "${fusion}")
  summary("${out}" d)
  tenths(e1 ${s_exposed})
  tenths(e2 ${d_exposed})
  message("fusion ${fusion}: exposed ${d_exposed} us against ${s_exposed} us with one bucket "
          "(iteration ${d_iter} us against ${s_iter} us)")
  if(NOT e2 LESS e1)
    message(FATAL_ERROR "fusion ${fusion} exposes ${d_exposed} us, not less than one bucket's ${s_exposed} us")
  endif()
endforeach()
