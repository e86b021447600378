/* start_arm.S — reset entry of the mps2-an521 image: both Cortex-M33 cores start here from the
 * vector table at 0x10000000 (core 1 once core 0 releases it), each takes its own stack below
 * __stack_top by its number in the SSE-200's CPU_IDENTITY register and calls board_main(core).
 * Any fault ends QEMU with board_fault(). */
    .syntax unified
    .thumb
    .section .vectors, "a"
    .global board_vectors
board_vectors:
    .word __stack_top
    .word board_reset
    .rept 14                    @ NMI, HardFault, MemManage, BusFault, UsageFault, SecureFault, ..., SysTick
    .word fault
    .endr

    .section .text.start, "ax"
    .global board_reset
    .thumb_func
board_reset:
    ldr r0, =0x4001F000         @ CPU_IDENTITY.CPUID: this core's number
    ldr r0, [r0]
    ldr r1, =__stack_top
    ldr r2, =BOARD_STACK_BYTES
    mul r2, r0, r2
    sub r1, r1, r2
    mov sp, r1
    bl board_main
1:  wfi
    b 1b

    .thumb_func
fault:
    bl board_fault
2:  b 2b
