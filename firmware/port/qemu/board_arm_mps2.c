/* board_arm_mps2.c — board.h on QEMU's mps2-an521 (an SSE-200 with two Cortex-M33 cores): output
 * and the end of the run through Arm semihosting (BKPT 0xAB; QEMU runs with -semihosting), each
 * core's SysTick as its clock, and core 1 released from reset by core 0 (SSE-200 CPUWAIT). The
 * cores have no instruction counter QEMU models. */
#include "board.h"

#define CPU_IDENTITY 0x4001F000u      /* CPUID: this core's number */
#define SYSCTL_CPUWAIT 0x50021118u    /* bit 1 set: core 1 held at reset (its reset value) */
#define SYST_CSR 0xE000E010u          /* each core's own SysTick */
#define SYST_RVR 0xE000E014u
#define SYST_CVR 0xE000E018u
#define SYSCLK_HZ 20000000u           /* the board's SYSCLK, SysTick's processor clock */
#define SYS_WRITE0 0x04u
#define SYS_EXIT_EXTENDED 0x20u
#define ADP_STOPPED_APPLICATION_EXIT 0x20026u

const char board_name[] = "QEMU mps2-an521 (Cortex-M33 cores)";
const char board_instret_means[] = "not counted (QEMU models no instruction counter on these cores): 0";
uint32_t board_sleeps[2]; /* (none: this board polls) */

static uint32_t semihost(uint32_t op, const void *arg)
{
    register uint32_t r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

static uint32_t core(void)
{
    return *(volatile uint32_t *)(uintptr_t)CPU_IDENTITY;
}

void board_puts(const char *s)
{
    semihost(SYS_WRITE0, s);
}

/* SysTick counts 24 bits down at SYSCLK; each core folds its wraps into its own total, which is
 * right while it reads its clock at least once per wrap (0.8 s: the engine polls far more often). */
static struct {
    uint32_t last;
    uint64_t ticks;
    int started;
} clocks[BOARD_HARTS];

uint64_t board_now_ns(void)
{
    uint32_t c = core();
    if (c >= BOARD_HARTS)
        return 0;
    if (!clocks[c].started) {
        *(volatile uint32_t *)(uintptr_t)SYST_RVR = 0xFFFFFFu;
        *(volatile uint32_t *)(uintptr_t)SYST_CVR = 0;
        *(volatile uint32_t *)(uintptr_t)SYST_CSR = 5u; /* enabled, processor clock, no interrupt */
        clocks[c].last = 0xFFFFFFu;
        clocks[c].started = 1;
    }
    uint32_t now = *(volatile uint32_t *)(uintptr_t)SYST_CVR & 0xFFFFFFu;
    clocks[c].ticks += (clocks[c].last - now) & 0xFFFFFFu;
    clocks[c].last = now;
    return clocks[c].ticks * (1000000000u / SYSCLK_HZ);
}

uint64_t board_instret(void)
{
    return 0;
}

void board_start_others(void)
{
    *(volatile uint32_t *)(uintptr_t)SYSCTL_CPUWAIT = 0;
}

/* No sleep here (WFE has no timeout without a timer interrupt, and this board takes none): the
 * engine polls. */
void board_idle(uint64_t timeout_ns)
{
    (void)timeout_ns;
}

void board_kick(int core)
{
    (void)core;
}

void board_exit(uint32_t bad_rows)
{
    const uint32_t block[2] = {ADP_STOPPED_APPLICATION_EXIT, bad_rows};
    for (;;)
        semihost(SYS_EXIT_EXTENDED, block);
}

void board_fault(void);

void board_fault(void)
{
    board_puts("board: a fault (HardFault, BusFault, UsageFault, ...)\n");
    board_exit(255);
}
