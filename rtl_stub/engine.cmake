# engine.cmake — the whole block: rs_dev (register file + descriptor engine + link receiver + reduce lanes + memory arbiter), verilated as rs_dev_rtl.
#
# Gives:
#   rs_dev_rtl         static library with the verilated model Vrs_dev ("Vrs_dev.h")
#   RINGSIM_ENGINE_SV  its Verilog sources in compile order (packages first), for the lint test
#   rs_dev_sc          the same sources verilated as a SystemC module with VCD tracing,
#                      Vrs_dev_sc, for the co-simulation (model/rtl.cmake; README.md "Co-simulation")
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
# rs_ref (reduce.cmake) brings ref/rs_link_beat.hpp, the link port's beat format for drivers
target_link_libraries(rs_dev_rtl PUBLIC rs_ref)

# The co-simulation's copy (model/rtl.cmake links it into ringsim_model): the same sources
# verilated again as a SystemC module, `verilate(... SYSTEMC TRACE_VCD)` (TRACE is Verilator
# 5.006's keyword for TRACE_VCD), class Vrs_dev_sc : sc_module with sc_in/sc_out ports, so
# `ringsim run --waves` can dump every RTL device into one VCD. The model does not let the
# SystemC kernel clock it: model/src/rtl_device.cpp binds every port to a zero-delay channel and
# calls the module's eval on each clock edge from its own lock-step domain (README.md,
# "Co-simulation", with the measured speed against the plain C++ model it replaced). The 1- to
# 64-bit ports come out as bool / uint32_t / uint64_t (Verilator's defaults: no --pins-* needed).
# Without --waves nothing is traced: the trace hooks are compiled in but never called.
add_library(rs_dev_sc STATIC)
set_target_properties(rs_dev_sc PROPERTIES POSITION_INDEPENDENT_CODE ON)
verilate(rs_dev_sc SYSTEMC TRACE SOURCES ${RINGSIM_ENGINE_SV} TOP_MODULE rs_dev PREFIX Vrs_dev_sc
  INCLUDE_DIRS ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}
  VERILATOR_ARGS -Wall --x-assign unique --x-initial unique -O3)
target_include_directories(rs_dev_sc SYSTEM PUBLIC ${VERILATOR_ROOT}/include ${VERILATOR_ROOT}/include/vltstd)
# VM_SC=1 (Verilator's runtime headers in their SystemC flavour) is private to the verilated
# sources here and set on the one file that includes Vrs_dev_sc.h (model/rtl.cmake), not public:
# the same binary may hold plain C++ models (rs_dev_rtl, whose users need VM_SC=0).
target_link_libraries(rs_dev_sc PUBLIC PkgConfig::SYSTEMC rs_ref)
ringsim_verilated_flags(rs_dev_sc)
