# arm-cortex-m4.cmake — bare-metal Arm Cortex-M4 (Thumb-2, ARMv7E-M) with Debian's gcc-arm-none-eabi:
# soft float (the engine assumes no FPU: fp32/fp16/bf16 reductions go through libgcc), no C library.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_C_FLAGS_INIT "-mcpu=cortex-m4 -mthumb -mfloat-abi=soft")
set(CMAKE_ASM_FLAGS_INIT "${CMAKE_C_FLAGS_INIT}")
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY) # no C library to link a test program against
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
