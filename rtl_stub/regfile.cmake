# regfile.cmake — the register map (regmap.txt -> C header, SV package, REGISTERS.md tables) and the verilated rs_regfile.
#
# Gives:
#   ringsim_regmap   INTERFACE library: #include <ncl/ncl_mmio_regs.h> (C11, macros only, no stdio)
#   rs_regfile_rtl   static library with the verilated model Vrs_regfile ("Vrs_regfile.h")
#   rs_registers_md  target that pastes the generated tables into rtl_stub/REGISTERS.md
#   RS_REGMAP_PKG    the generated rs_regs_pkg.sv, for other blocks that decode registers
#
# Generation runs at configure time, not as a build rule, because verilate() runs Verilator at
# configure time and needs the package by then. It still follows edits: regmap.txt and the
# generator are configure dependencies, so `cmake --build` re-runs CMake (and so the generator)
# whenever either changes; the generator rewrites a file only when its text changed, and
# Verilator's own dependency list then rebuilds the model.
set(RS_REGMAP ${CMAKE_CURRENT_SOURCE_DIR}/regmap.txt)
set(RS_REGMAP_GEN ${CMAKE_CURRENT_SOURCE_DIR}/gen_regmap.cmake)
set(RS_REGMAP_OUT ${CMAKE_CURRENT_BINARY_DIR}/regmap)
set(RS_REGMAP_PKG ${RS_REGMAP_OUT}/rs_regs_pkg.sv)
execute_process(
  COMMAND ${CMAKE_COMMAND} -DREGMAP=${RS_REGMAP} -DOUT_DIR=${RS_REGMAP_OUT} -P ${RS_REGMAP_GEN}
  RESULT_VARIABLE _rs_regmap_rc)
if(NOT _rs_regmap_rc EQUAL 0)
  message(FATAL_ERROR "rtl_stub/regmap.txt: the register map did not generate (see above)")
endif()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${RS_REGMAP} ${RS_REGMAP_GEN})

add_library(ringsim_regmap INTERFACE)
target_include_directories(ringsim_regmap INTERFACE ${RS_REGMAP_OUT}/include)

ringsim_verilate(rs_regfile_rtl TOP rs_regfile SOURCES ${RS_REGMAP_PKG} ${CMAKE_CURRENT_SOURCE_DIR}/rs_regfile.sv)

add_custom_target(rs_registers_md
  COMMAND ${CMAKE_COMMAND} -DREGMAP=${RS_REGMAP} -DUPDATE_DOC=${CMAKE_CURRENT_SOURCE_DIR}/REGISTERS.md
          -P ${RS_REGMAP_GEN}
  COMMENT "rtl_stub/REGISTERS.md: pasting the register tables generated from regmap.txt"
  VERBATIM)
