/* board.h — what a QEMU machine gives board_qemu.c: output, a clock, an instruction count, the
 * end of the run and its other cores started (board_riscv_virt.c, board_arm_mps2.c). */
#ifndef BOARD_H
#define BOARD_H

#include <stdint.h>

extern const char board_name[];          /* the machine and its cores, for the table's header */
extern const char board_instret_means[]; /* what board_instret() counts here */
extern uint32_t board_sleeps[2];           /* board_idle's sleeps, and those their timeout ended */

void board_puts(const char *s);
uint64_t board_now_ns(void); /* on the calling core */
uint64_t board_instret(void);
void board_start_others(void); /* core 0, once memory is ready: the cores held at reset start */
/* Sleep until a kick from another core, timeout_ns, or earlier; a kick sent before the sleep must
 * end it at once. A board without a way returns at once (the engine then polls). */
void board_idle(uint64_t timeout_ns);
void board_kick(int core);
void board_exit(uint32_t bad_rows) __attribute__((noreturn));

#endif
