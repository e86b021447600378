# reduce.cmake — tests of the reduce lane: RTL vs C reference vs the engine's kernel, and Verilog lint.

add_executable(test_rtl_reduce test_rtl_reduce.cpp)
target_link_libraries(test_rtl_reduce PRIVATE rs_reduce_rtl rs_ref ncl_core)
add_test(NAME rtl_reduce COMMAND test_rtl_reduce)
set_tests_properties(rtl_reduce PROPERTIES LABELS rtl TIMEOUT 120)

# verilate() lints at configure time already; this keeps `verilator --lint-only -Wall` on the
# sources a visible test (and catches a configure that ran with different flags).
# The `verilator` wrapper, else the verilator_bin that verilate() itself runs (same options).
find_program(RINGSIM_VERILATOR_EXE NAMES verilator HINTS ${VERILATOR_ROOT}/bin)
if(NOT RINGSIM_VERILATOR_EXE)
  set(RINGSIM_VERILATOR_EXE ${VERILATOR_BIN})
endif()
add_test(NAME rtl_lint_reduce COMMAND ${RINGSIM_VERILATOR_EXE} --lint-only -Wall --top-module rs_reduce
  ${RINGSIM_REDUCE_SV})
set_tests_properties(rtl_lint_reduce PROPERTIES LABELS rtl TIMEOUT 120)
