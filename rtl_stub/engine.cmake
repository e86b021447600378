# engine.cmake — the whole block: rs_dev (register file + descriptor engine + link receiver + reduce lanes + memory arbiter), verilated as rs_dev_rtl.
#
# Gives:
#   rs_dev_rtl         static library with the verilated model Vrs_dev ("Vrs_dev.h")
#   RINGSIM_ENGINE_SV  its Verilog sources in compile order (packages first), for the lint test
#                      and for the SystemC co-simulation build (verilate(... SYSTEMC) of the same list)
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
