# mmio_rtl.cmake — the mmio HAL backend driving verilated rs_dev blocks (RsDevSystem): register-level bring-up, collectives end to end, error paths, and the RTL speed figure.

# The unchanged ncl_mmio on every rank, its access functions clocking 2-4 verilated blocks linked
# by the harness's router (the mmio world of tests/firmware/backends/mmio.cmake with the RTL as its
# device): bring-up in interrupt and polled mode, ring allreduce (int32/fp32 sum, fp16 on the
# controller) and chain broadcast from every root bit-exact against rs_data (the correctness
# matrix's cases), a descriptor/buffer outside memory named and recovered, a silent peer timing out
# in simulated time; prints the cycles and wall time of a 4-device 1 MiB allreduce. Single-threaded.
add_executable(test_mmio_rtl ${CMAKE_CURRENT_SOURCE_DIR}/test_mmio_rtl.cpp)
target_link_libraries(test_mmio_rtl PRIVATE ringsim_mmio_world rs_dev_rtl)
add_test(NAME rtl_mmio_rtl COMMAND test_mmio_rtl)
set_tests_properties(rtl_mmio_rtl PROPERTIES LABELS rtl TIMEOUT 120 ENVIRONMENT "CMOCKA_MESSAGE_OUTPUT=STDOUT")
