/* board_riscv_virt.c — board.h on QEMU's RISC-V `virt` machine: a 16550 UART, the CLINT's
 * 10 MHz timer, minstret, and the sifive_test device that ends QEMU. Every hart starts at reset. */
#include "board.h"

#define UART0 0x10000000u        /* 16550 */
#define TEST_DEV 0x00100000u     /* sifive_test: 0x5555 pass, code << 16 | 0x3333 fail */
#define CLINT_MTIME 0x0200BFF8u  /* 10 MHz */

const char board_name[] = "QEMU virt (RV32IMAC harts)";
const char board_instret_means[] = "minstret read by rank 0 around its call: under qemu -icount the whole\n"
                                   "# machine's instructions (all harts, their polling included), without it host ticks";

void board_puts(const char *s)
{
    volatile uint8_t *u = (volatile uint8_t *)(uintptr_t)UART0;
    for (; *s; s++) {
        while (!(u[5] & 0x20u)) /* LSR: transmit holding register empty */
            ;
        u[0] = (uint8_t)*s;
    }
}

uint64_t board_now_ns(void) /* mtime's two 32-bit halves: read high, low, high until the high one holds */
{
    volatile uint32_t *t = (volatile uint32_t *)(uintptr_t)CLINT_MTIME;
    uint32_t hi, lo;
    do {
        hi = t[1];
        lo = t[0];
    } while (t[1] != hi);
    return ((uint64_t)hi << 32 | lo) * 100u;
}

uint64_t board_instret(void)
{
    uint32_t lo, hi, again;
    do {
        __asm__ volatile("csrr %0, minstreth" : "=r"(hi));
        __asm__ volatile("csrr %0, minstret" : "=r"(lo));
        __asm__ volatile("csrr %0, minstreth" : "=r"(again));
    } while (hi != again);
    return (uint64_t)hi << 32 | lo;
}

void board_start_others(void)
{
}

void board_exit(uint32_t bad_rows)
{
    *(volatile uint32_t *)(uintptr_t)TEST_DEV = bad_rows ? (bad_rows << 16 | 0x3333u) : 0x5555u;
    for (;;) {
    }
}
