# cosim.cmake — end to end co-simulation (device.fidelity: rtl): `ringsim run` on
# scenarios/rtl_ring4.yaml (ring allreduce) and rtl_chain4.yaml (chain broadcast), 4 devices, 1 MiB:
# every device RTL, then rank 0 alone RTL (mixed with SystemC NPUs), each against the all-SystemC
# run of the same scenario: #wrong = 0 and simulated times within 10 %; bad scenarios exit 2 with
# file:line: key: problem (allowed: ...); --waves writes one VCD with a scope per RTL rank; --trace
# draws each RTL rank (process rtlN: tasks, link tx/rx, irq, engine busy).
# About 6 s in Release (the blocks, verilated as SystemC modules, run ~0.85 M cycles/s of the
# 4-device system).
add_test(NAME rtl_cosim
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/test_cosim.sh $<TARGET_FILE:ringsim> ${PROJECT_SOURCE_DIR}/scenarios
          ${CMAKE_CURRENT_BINARY_DIR}/cosim)
set_tests_properties(rtl_cosim PROPERTIES LABELS rtl TIMEOUT 120)
