# mmio.cmake — tests of the mmio HAL backend against rs_ref_dev, the C reference of the DMA/notify block, and the mmio world they share with the RTL's (tests/rtl_stub/mmio_rtl.cmake).

# The correctness matrix's mmio world: backends, communicators and a case's run on N blocks behind
# a device ops table (rs_ref_dev here, verilated rs_dev in test_mmio_rtl), and the error paths both
# take the same way. cmocka test bodies: linked by cmocka tests only.
add_library(ringsim_mmio_world STATIC ${CMAKE_CURRENT_SOURCE_DIR}/mmio_world.c)
target_include_directories(ringsim_mmio_world PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(ringsim_mmio_world PUBLIC ringsim_testmatrix ncl_mmio ringsim_regmap PkgConfig::CMOCKA)

# N reference devices linked by their link callbacks, each rank's communicator on its own mmio
# backend whose access functions call the device: bring-up (interrupt and polled), collectives
# bit-exact against rs_data (the correctness matrix's cases), error paths (bad address, corrupt
# descriptor, silent peer, refused bring-up). Single-threaded: the wait hooks step the devices. A few seconds in Release.
add_executable(test_mmio_ref ${CMAKE_CURRENT_SOURCE_DIR}/test_mmio_ref.c)
target_link_libraries(test_mmio_ref PRIVATE ringsim_mmio_world rs_ref)
add_test(NAME rtl_mmio_ref COMMAND test_mmio_ref)
set_tests_properties(rtl_mmio_ref PROPERTIES LABELS "rtl;firmware" TIMEOUT 120 ENVIRONMENT "CMOCKA_MESSAGE_OUTPUT=STDOUT")

# The backend keeps the firmware rules (no OS/libc services, no mutable globals): it must build
# for a board as it is.
set(_ringsim_mmio_nm ${CMAKE_NM})
if(NOT _ringsim_mmio_nm)
  set(_ringsim_mmio_nm nm)
endif()
set(_ringsim_mmio_purity_args "")
if(RINGSIM_SANITIZE)
  set(_ringsim_mmio_purity_args --sanitize)
endif()
add_test(NAME rtl_mmio_purity
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/system/purity/check_purity.sh ${_ringsim_mmio_purity_args}
          ${_ringsim_mmio_nm} $<TARGET_FILE:ncl_mmio>)
set_tests_properties(rtl_mmio_purity PROPERTIES LABELS rtl TIMEOUT 60)
