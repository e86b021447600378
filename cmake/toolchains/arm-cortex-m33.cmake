# arm-cortex-m33.cmake — bare-metal Arm Cortex-M33 (Thumb-2, ARMv8-M mainline) without its DSP and
# FPU extensions, as core 0 of the SSE-200 subsystem QEMU's mps2-an521 board models: soft float, no
# C library. The engine's Arm board under QEMU (firmware/port/qemu/board_arm_mps2.c) builds with it.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_C_FLAGS_INIT "-mcpu=cortex-m33+nodsp -mthumb -mfloat-abi=soft")
set(CMAKE_ASM_FLAGS_INIT "${CMAKE_C_FLAGS_INIT}")
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY) # no C library to link a test program against
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(NCL_QEMU_BOARD arm_mps2) # firmware/port/qemu/board_arm_mps2.c: QEMU's mps2-an521, two cores
