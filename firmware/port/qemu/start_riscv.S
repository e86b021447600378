/* start_riscv.S — reset entry of the QEMU `virt` image: every hart gets its own stack below
 * __stack_top and calls board_main(hartid); a hart that returns parks. */
    .section .text.start, "ax"
    .global _start
_start:
    csrr a0, mhartid
    la sp, __stack_top
    li t0, BOARD_STACK_BYTES
    mul t1, a0, t0
    sub sp, sp, t1
    call board_main
1:  wfi
    j 1b
