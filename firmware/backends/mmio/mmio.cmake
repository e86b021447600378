# mmio.cmake — the register-level HAL backend (ncl_mmio): tasks as descriptors in the DMA/notify
# block's ring, through access functions the caller supplies (rtl_stub/REGISTERS.md).
#
# Included from firmware/CMakeLists.txt. ringsim_regmap (the generated ncl/ncl_mmio_regs.h) is
# defined later, in rtl_stub/: linking it by name works because CMake resolves target names at
# generate time. Plain C11 with the firmware rules (no OS calls, no stdio, no globals, no
# allocation), so the same library builds for a board; tests/firmware/backends/mmio.cmake checks that with the
# purity script.
add_library(ncl_mmio STATIC ${CMAKE_CURRENT_LIST_DIR}/ncl_mmio.c)
target_link_libraries(ncl_mmio PUBLIC ncl_core ringsim_regmap PRIVATE ncl_backend)
# ncl_fmt.h (the engine's stdio-free formatter) lives with the engine's private headers.
target_include_directories(ncl_mmio PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
set_target_properties(ncl_mmio PROPERTIES POSITION_INDEPENDENT_CODE ON)
add_library(ringsim::ncl_mmio ALIAS ncl_mmio)
