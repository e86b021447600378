/* rs_ref_dev.h — cycle-free C reference of the whole DMA/notify block: registers, descriptor engine, memory, link. */
#ifndef RS_REF_DEV_H
#define RS_REF_DEV_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * What the RTL engine (and the mmio backend driving it) must agree with, descriptor by
 * descriptor: the memory image, the registers and what goes out on the link. No cycles: one
 * rs_ref_dev_step() executes one whole descriptor. Register semantics are rtl_stub/REGISTERS.md's
 * (the same as rs_regfile.sv), the descriptor format is regmap.txt's (ncl/ncl_mmio_regs.h,
 * NCL_MMIO_DESC_*), the lane arithmetic is rs_ref_reduce(). Plain C11: no globals, no stdio; the
 * only allocation is the device itself and its memory image, in rs_ref_dev_new().
 */

typedef struct rs_ref_dev rs_ref_dev;

/** What travels on the link (a write, a write-with-reduce or a notify record). */
enum {
    RS_REF_LINK_WRITE = 1,        /**< peer memory [addr, addr + bytes) <- data */
    RS_REF_LINK_WRITE_REDUCE = 2, /**< peer memory lane i <- rs_ref_reduce(dtype, op, lane i, data lane i) */
    RS_REF_LINK_NOTIFY = 3        /**< peer NOTIFY_CNT[notify] += 1 */
};

/** One link transfer. `data` points into the sender's memory and is valid only during the call. */
typedef struct rs_ref_link_msg {
    int kind;            /**< RS_REF_LINK_* */
    uint16_t peer;       /**< the descriptor's PEER (the destination node) */
    uint64_t addr;       /**< WRITE*: the destination address in the peer's memory */
    const uint8_t *data; /**< WRITE*: the payload */
    uint32_t bytes;      /**< WRITE*: payload length (may be 0) */
    uint8_t dtype, op;   /**< WRITE_REDUCE: the descriptor's DTYPE and OP */
    uint8_t notify;      /**< NOTIFY: the counter index at the peer */
} rs_ref_link_msg;

/**
 * The link port: delivers msg to msg->peer (typically by calling rs_ref_dev_link_rx() on it).
 * Returns 0 when the transfer completed, nonzero when the link failed it (no such peer, the peer
 * refused it): the sending descriptor then fails with ERR_STATUS.LINK.
 */
typedef int (*rs_ref_link_fn)(void *ctx, const rs_ref_link_msg *msg);

/** rs_ref_dev_link_rx() results (nonzero: the link reports an error to the sender). */
enum {
    RS_REF_RX_OK = 0,
    RS_REF_RX_RANGE = 1, /**< [addr, addr + bytes) is not inside this device's memory */
    RS_REF_RX_BAD = 2    /**< unknown kind, unsupported reduce, misaligned reduce, notify index out of range */
};

/** rs_ref_dev_step() results. */
enum {
    RS_REF_STEP_IDLE = 0,    /**< nothing to do: disabled, stopped on an error, or HEAD at the doorbell's tail */
    RS_REF_STEP_DONE = 1,    /**< one descriptor completed and RING_HEAD moved past it */
    RS_REF_STEP_BLOCKED = 2, /**< a NOTIFY_WAIT whose counter is still below COUNT (HEAD stays) */
    RS_REF_STEP_ERROR = 3    /**< the descriptor at HEAD failed: ERR_STATUS set, HEAD stays, engine stopped */
};

/**
 * A device in its reset state with mem_bytes of zeroed memory (any size, 0 included; device
 * addresses are byte offsets into it). link may be NULL: every link transfer then fails (LINK).
 * Returns NULL when out of memory.
 */
rs_ref_dev *rs_ref_dev_new(uint64_t mem_bytes, rs_ref_link_fn link, void *link_ctx);
void rs_ref_dev_free(rs_ref_dev *dev);

/** The memory image (what the engine reads and writes; tests fill and compare it directly). */
uint8_t *rs_ref_dev_mem(rs_ref_dev *dev);
uint64_t rs_ref_dev_mem_bytes(const rs_ref_dev *dev);

/** The rst_n reset: every register, counter and the engine to reset; memory is left alone. */
void rs_ref_dev_reset(rs_ref_dev *dev);

/**
 * A register read at byte offset addr of the register window, as the bus answers it. *err (if not
 * NULL) gets rsp_err: 1 for an unmapped or unaligned address (the read returns 0 and sets
 * ERR_STATUS.REG_ACCESS). Offsets past the 4 KiB window are unmapped (the RTL bus cannot carry them).
 */
uint32_t rs_ref_dev_read(rs_ref_dev *dev, uint32_t addr, int *err);

/**
 * A register write; returns rsp_err (unmapped/unaligned address, notify index out of range).
 * DOORBELL validates the ring (BAD_RING) and arms the engine up to the current RING_TAIL; it runs
 * nothing by itself: the caller steps the engine (rs_ref_dev_step/run), as the RTL runs on clocks.
 */
int rs_ref_dev_write(rs_ref_dev *dev, uint32_t addr, uint32_t value);

/** The irq line: CTRL.IRQ_EN and any(IRQ_STATUS and IRQ_MASK). */
int rs_ref_dev_irq(const rs_ref_dev *dev);

/** Executes the descriptor at RING_HEAD if the engine may run; returns RS_REF_STEP_*. */
int rs_ref_dev_step(rs_ref_dev *dev);

/** Steps until a step does not complete a descriptor or max_steps completed; returns how many did. */
uint64_t rs_ref_dev_run(rs_ref_dev *dev, uint64_t max_steps);

/**
 * The link's receive side: a peer's write, write-with-reduce or notify record arriving here.
 * Applies it to memory or to NOTIFY_CNT (+1, sets IRQ_STATUS.NOTIFY, saturates with NOTIFY_SAT),
 * whatever CTRL says (the link port is independent of the engine). Returns RS_REF_RX_*; a
 * refused transfer changes nothing here and sets no error bit here (the sender reports LINK).
 */
int rs_ref_dev_link_rx(rs_ref_dev *dev, const rs_ref_link_msg *msg);

#ifdef __cplusplus
}
#endif

#endif
