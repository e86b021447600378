# engine.cmake — the whole block: rs_dev (register file + descriptor engine + link receiver + reduce lanes + memory arbiter), verilated as rs_dev_rtl.
#
# Gives:
#   rs_dev_rtl         static library with the verilated model Vrs_dev ("Vrs_dev.h")
#   RINGSIM_ENGINE_SV  its Verilog sources in compile order (packages first), for the lint test
#   rs_dev_cosim       the same sources verilated with VCD tracing as Vrs_dev_cosim, for the
#                      co-simulation (model/rtl.cmake; plain C++, see README.md "Co-simulation")
# Needs RS_REGMAP_PKG (regfile.cmake) and RINGSIM_REDUCE_SV (reduce.cmake), both included before.
set(RINGSIM_ENGINE_SV
  ${RS_REGMAP_PKG}
  ${RINGSIM_REDUCE_SV}
  ${CMAKE_CURRENT_SOURCE_DIR}/rs_link_pkg.sv
  ${CMAKE_CURRENT_SOURCE_DIR}/rs_fifo.sv
  ${CMAKE_CURRENT_SOURCE_DIR}/rs_bytebuf.sv
  ${CMAKE_CURRENT_SOURCE_DIR}/rs_memarb.sv
  ${CMAKE_CURRENT_SOURCE_DIR}/rs_regfile.sv
  ${CMAKE_CURRENT_SOURCE_DIR}/rs_engine.sv
  ${CMAKE_CURRENT_SOURCE_DIR}/rs_rx.sv
  ${CMAKE_CURRENT_SOURCE_DIR}/rs_dev.sv
  CACHE INTERNAL "rs_dev Verilog sources, packages first")

ringsim_verilate(rs_dev_rtl TOP rs_dev SOURCES ${RINGSIM_ENGINE_SV})

# The co-simulation's copy (model/rtl.cmake links it into ringsim_model): the same sources
# verilated again with VCD tracing compiled in, as model Vrs_dev_cosim, so `ringsim run --waves`
# can dump every RTL device into one file. Plain C++ (not SYSTEMC): the model steps it from its
# own callback scheduler (~5 M cycles/s against ~3 M for Verilator's per-signal SystemC wrapper,
# TOOLCHAIN.md), and a separate class name keeps it apart from rs_dev_rtl in any binary.
# Without --waves nothing is traced: the trace hooks are compiled in but never called.
add_library(rs_dev_cosim STATIC)
set_target_properties(rs_dev_cosim PROPERTIES POSITION_INDEPENDENT_CODE ON)
verilate(rs_dev_cosim SOURCES ${RINGSIM_ENGINE_SV} TOP_MODULE rs_dev PREFIX Vrs_dev_cosim TRACE
  INCLUDE_DIRS ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}
  VERILATOR_ARGS -Wall --x-assign unique --x-initial unique -O3)
target_include_directories(rs_dev_cosim SYSTEM PUBLIC ${VERILATOR_ROOT}/include ${VERILATOR_ROOT}/include/vltstd)
target_compile_options(rs_dev_cosim PRIVATE -w)
