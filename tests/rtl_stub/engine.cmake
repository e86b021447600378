# engine.cmake — tests of the whole block rs_dev: RTL against rs_ref_dev (two linked devices each), register-level bring-up, and Verilog lint.

# Two verilated rs_dev linked through a C++ router, memory images in C++, against two linked
# rs_ref_dev: >= 1 M random descriptors plus edge cases and every error path, memory images,
# registers and link traffic compared after every batch. RS_SEED=<n> reproduces a run; an
# optional argument sets the number of descriptors.
add_executable(test_rtl_engine ${CMAKE_CURRENT_SOURCE_DIR}/test_rtl_engine.cpp)
target_link_libraries(test_rtl_engine PRIVATE rs_dev_rtl rs_ref ringsim_regmap)
add_test(NAME rtl_engine COMMAND test_rtl_engine)
set_tests_properties(rtl_engine PROPERTIES LABELS rtl TIMEOUT 300)

# verilate() lints at configure time already; this keeps `verilator --lint-only -Wall` on the
# whole block a visible test.
find_program(RINGSIM_VERILATOR_EXE NAMES verilator HINTS ${VERILATOR_ROOT}/bin)
if(NOT RINGSIM_VERILATOR_EXE)
  set(RINGSIM_VERILATOR_EXE ${VERILATOR_BIN})
endif()
add_test(NAME rtl_lint_engine COMMAND ${RINGSIM_VERILATOR_EXE} --lint-only -Wall --top-module rs_dev
  ${RINGSIM_ENGINE_SV})
set_tests_properties(rtl_lint_engine PROPERTIES LABELS rtl TIMEOUT 120)
