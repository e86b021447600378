# rtl.cmake — co-simulation (device.fidelity: rtl): the verilated rs_dev block as a device of the
# model, driven by the unchanged engine through the mmio backend (model/src/rtl_device.cpp).
# rs_dev_cosim (rtl_stub/engine.cmake: the block verilated with VCD tracing compiled in) and
# ncl_mmio are defined in other directories; CMake resolves the names at generate time.
target_sources(ringsim_model PRIVATE ${CMAKE_CURRENT_LIST_DIR}/src/rtl_device.cpp)
target_link_libraries(ringsim_model PUBLIC rs_dev_cosim ncl_mmio ringsim_regmap)
