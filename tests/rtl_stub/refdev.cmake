# refdev.cmake — tests of rs_ref_dev, the C reference of the whole block (registers, descriptors, memory, link).

# Plain C against the reference and the generated header only (no Verilator): the engine's RTL
# and the mmio backend are checked against this model next.
add_executable(test_rtl_refdev ${CMAKE_CURRENT_SOURCE_DIR}/test_rtl_refdev.c)
target_link_libraries(test_rtl_refdev PRIVATE rs_ref ringsim_regmap PkgConfig::CMOCKA)
add_test(NAME rtl_refdev COMMAND test_rtl_refdev)
set_tests_properties(rtl_refdev PROPERTIES LABELS rtl TIMEOUT 120 ENVIRONMENT "CMOCKA_MESSAGE_OUTPUT=STDOUT")
