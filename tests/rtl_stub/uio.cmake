# uio.cmake — the mmio backend on the Linux UIO provider (firmware/backends/uio), against emulated UIO
# devices another process serves with verilated rs_dev blocks (rs_uio_device): the correctness
# matrix's ring allreduce and chain broadcast bit-exact through mapped maps, the mailbox bus and
# the UIO interrupt protocol, in interrupt and polled mode; open errors named.
if(TARGET ncl_uio)
  add_executable(rs_uio_device ${CMAKE_CURRENT_SOURCE_DIR}/uio_device.cpp)
  target_link_libraries(rs_uio_device PRIVATE rs_dev_rtl ringsim_mmio_world ncl_uio)
  add_executable(test_mmio_uio ${CMAKE_CURRENT_SOURCE_DIR}/test_mmio_uio.cpp)
  target_link_libraries(test_mmio_uio PRIVATE ringsim_mmio_world ncl_uio ringsim_regmap)
  target_compile_definitions(test_mmio_uio PRIVATE RS_UIO_DEVICE="$<TARGET_FILE:rs_uio_device>")
  add_dependencies(test_mmio_uio rs_uio_device)
  add_test(NAME rtl_mmio_uio COMMAND test_mmio_uio)
  set_tests_properties(rtl_mmio_uio PROPERTIES LABELS rtl TIMEOUT 300 ENVIRONMENT "CMOCKA_MESSAGE_OUTPUT=STDOUT")
endif()
