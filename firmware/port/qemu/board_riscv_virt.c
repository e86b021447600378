/* board_riscv_virt.c — board.h on QEMU's RISC-V `virt` machine: a 16550 UART, the CLINT's
 * 10 MHz timer, minstret, sleeping on `wfi` woken by the CLINT's software interrupt (MSIP) or its
 * timer, and the sifive_test device that ends QEMU. Every hart starts at reset. */
#include "board.h"

#define UART0 0x10000000u          /* 16550 */
#define TEST_DEV 0x00100000u       /* sifive_test: 0x5555 pass, code << 16 | 0x3333 fail */
#define CLINT_MSIP 0x02000000u     /* one word per hart: 1 raises its software interrupt */
#define CLINT_MTIMECMP 0x02004000u /* 8 bytes per hart: its timer interrupt once mtime reaches it */
#define CLINT_MTIME 0x0200BFF8u    /* 10 MHz */
#define MIE_MSIE (1u << 3)
#define MIE_MTIE (1u << 7)
#define IDLE_MAX_NS 100000u        /* the longest sleep: what a missed kick can cost */

const char board_name[] = "QEMU virt (RV32IMAC harts)";
const char board_instret_means[] =
    "minstret read by rank 0 between the barriers around every rank's call; under qemu\n"
    "# -icount it is QEMU's virtual clock: every hart's instructions (1 ns each), waits asleep (wfi),\n"
    "# plus any stretch in which all harts slept (a wait no kick ended: 100 us at most each), so\n"
    "# instructions / tasks bounds what a data task costs with its share of the engine's work;\n"
    "# without -icount host ticks";
uint32_t board_sleeps[2];

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

static uint32_t hart(void)
{
    uint32_t h;
    __asm__ volatile("csrr %0, mhartid" : "=r"(h));
    return h;
}

/* wfi returns once an interrupt is pending and enabled in mie, taken or not (mstatus.MIE stays
 * 0: there is no trap handler), so a kick (MSIP) that came before the wfi ends it at once; the
 * timer (mtimecmp) bounds it. Both are cleared before returning: the caller looks again. */
void board_idle(uint64_t timeout_ns)
{
    const uint32_t h = hart();
    volatile uint32_t *cmp = (volatile uint32_t *)(uintptr_t)(CLINT_MTIMECMP + 8u * h);
    volatile uint32_t *msip = (volatile uint32_t *)(uintptr_t)(CLINT_MSIP + 4u * h);
    uint64_t ns = timeout_ns < IDLE_MAX_NS ? timeout_ns : IDLE_MAX_NS;
    uint64_t at = board_now_ns() / 100u + ns / 100u + 1u;
    cmp[1] = 0xFFFFFFFFu; /* no early match while the halves change */
    cmp[0] = (uint32_t)at;
    cmp[1] = (uint32_t)(at >> 32);
    __asm__ volatile("csrs mie, %0" ::"r"(MIE_MSIE | MIE_MTIE));
    __asm__ volatile("wfi");
    __atomic_fetch_add(&board_sleeps[0], 1u, __ATOMIC_RELAXED);
    if (!*msip) /* the timeout ended it (or nothing did: spurious) */
        __atomic_fetch_add(&board_sleeps[1], 1u, __ATOMIC_RELAXED);
    *msip = 0;
    cmp[1] = 0xFFFFFFFFu;
    cmp[0] = 0xFFFFFFFFu;
}

void board_kick(int core)
{
    *(volatile uint32_t *)(uintptr_t)(CLINT_MSIP + 4u * (uint32_t)core) = 1;
}

void board_exit(uint32_t bad_rows)
{
    *(volatile uint32_t *)(uintptr_t)TEST_DEV = bad_rows ? (bad_rows << 16 | 0x3333u) : 0x5555u;
    for (;;) {
    }
}
