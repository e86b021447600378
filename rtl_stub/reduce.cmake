# reduce.cmake — the reduce lane: verilated rs_reduce (rs_reduce_rtl) and its C reference (rs_ref).

# Sources in package-first order: rs_reduce imports rs_reduce_pkg. Other blocks (the descriptor
# engine) list RINGSIM_REDUCE_SV in their own SOURCES to instantiate rs_reduce.
set(RINGSIM_REDUCE_SV
  ${CMAKE_CURRENT_SOURCE_DIR}/rs_reduce_pkg.sv
  ${CMAKE_CURRENT_SOURCE_DIR}/rs_reduce.sv
  CACHE INTERNAL "rs_reduce Verilog sources, package first")

ringsim_verilate(rs_reduce_rtl TOP rs_reduce SOURCES ${RINGSIM_REDUCE_SV})

# Plain C11, no dependencies beyond the generated register header: the engine's co-simulation and
# the mmio tests link it too. rs_ref_reduce.c is the reduce lane, rs_ref_dev.c the whole block.
add_library(rs_ref STATIC ref/rs_ref_reduce.c ref/rs_ref_dev.c)
target_include_directories(rs_ref PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/ref)
set_target_properties(rs_ref PROPERTIES POSITION_INDEPENDENT_CODE ON)
# rs_ref_dev.c (the whole block's reference) decodes registers and descriptors with the generated
# header; ringsim_regmap comes from regfile.cmake (a target name resolves at generate time).
target_link_libraries(rs_ref PRIVATE ringsim_regmap)
