# rtl.cmake — co-simulation (device.fidelity: rtl): the verilated rs_dev block as a device of the
# model, driven by the unchanged engine through the mmio backend (model/src/rtl_device.cpp).
# rs_dev_sc (rtl_stub/engine.cmake: the block verilated as a SystemC module, VCD tracing compiled in) and
# ncl_mmio are defined in other directories; CMake resolves the names at generate time.
target_sources(ringsim_model PRIVATE ${CMAKE_CURRENT_LIST_DIR}/src/rtl_device.cpp)
# rtl_device.cpp includes the SystemC model Vrs_dev_sc.h: Verilator's headers must be in their
# SystemC flavour there, as in the verilated sources (rtl_stub/engine.cmake), and only there.
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/src/rtl_device.cpp PROPERTIES COMPILE_DEFINITIONS VM_SC=1)
target_link_libraries(ringsim_model PUBLIC rs_dev_sc ncl_mmio ringsim_regmap)
