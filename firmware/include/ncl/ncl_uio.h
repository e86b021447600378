/* ncl_uio.h — the mmio backend's access to a real device under Linux: its register window and
 * device memory mapped from a UIO device, its interrupt waited for through the UIO file. */
#ifndef NCL_UIO_H
#define NCL_UIO_H

#include <stddef.h>
#include <stdint.h>

#include "ncl/ncl.h"
#include "ncl/ncl_mmio.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A UIO device (a kernel driver's /dev/uioN; uio_pdrv_genirq or uio_pci_generic give one for a
 * device tree node or a PCI function) offers its memory regions as maps: map N is mmap()ed at
 * offset N x page size of the device file, its size in /sys/class/uio/uioN/maps/mapN/size. Here
 * map 0 is the block's 4 KiB register window (rtl_stub/REGISTERS.md) and map 1 the device memory
 * the block's DMA reads and writes (descriptor ring, buffers, scratch), device address mem_base
 * at its first byte. An interrupt is a read() of the device file returning the count of
 * interrupts so far (4 bytes); writing 1 re-enables the line (irqcontrol), as UIO specifies.
 *
 * The bus. NCL_UIO_BUS_DIRECT (a real device): a register access is a volatile 32-bit load or
 * store on map 0. NCL_UIO_BUS_MAILBOX (an emulated device, tests/rtl_stub/uio_device.cpp): map 0
 * is a shared-memory file served by the process that runs the verilated block, which cannot see
 * plain stores, so each access is a request in map 0's mailbox that the device process performs
 * on the block's bus (ncl_uio_mailbox below): a write is posted, a read waits for its data, in
 * order, as a PCIe read flushes the writes before it. Device memory is plain shared memory in
 * both, and the device's time (cycles, 1 per ns) is what now_ns reads on the emulated device.
 */
typedef enum ncl_uio_bus { NCL_UIO_BUS_DIRECT = 0, NCL_UIO_BUS_MAILBOX = 1 } ncl_uio_bus;

#define NCL_UIO_CONFIG_VERSION 1u

typedef struct ncl_uio_config {
    uint32_t size;       /**< sizeof(ncl_uio_config) */
    uint32_t version;    /**< NCL_UIO_CONFIG_VERSION */
    const char *device;  /**< the UIO device file, e.g. "/dev/uio0" (maps and interrupts) */
    const char *irq;     /**< NULL: interrupts through `device`; else another file or a Unix
                              socket (an emulated device's) to read and write them on */
    const char *sysfs;   /**< NULL: /sys/class/uio/<device's name>; the maps' sizes are read from
                              <sysfs>/maps/map{0,1}/size */
    uint64_t mem_base;   /**< device address of map 1's first byte */
    ncl_uio_bus bus;     /**< NCL_UIO_BUS_DIRECT for a real device */
} ncl_uio_config;

#define NCL_UIO_CONFIG_INIT {sizeof(ncl_uio_config), NCL_UIO_CONFIG_VERSION, NULL, NULL, NULL, 0, NCL_UIO_BUS_DIRECT}

/* The mailbox an emulated device's map 0 holds (NCL_UIO_BUS_MAILBOX): requests in a ring the
 * provider fills and the device process drains in order. Request k is in slot k % NCL_UIO_SLOTS;
 * `posted` counts requests written, `done` requests performed (both only grow). A read's data is
 * in its slot's value once done passed it. */
#define NCL_UIO_MAILBOX_MAGIC 0x42454f55u /* 'UOEB': an emulated bus */
#define NCL_UIO_SLOTS 64u
#define NCL_UIO_OP_READ 1u
#define NCL_UIO_OP_WRITE 2u
typedef struct ncl_uio_slot {
    uint32_t op_off; /**< op << 16 | register offset */
    uint32_t value;  /**< a write's value; a read's data once done */
    uint32_t err;    /**< nonzero: the bus refused the access */
    uint32_t pad;
} ncl_uio_slot;
typedef struct ncl_uio_mailbox {
    uint32_t magic;
    uint32_t posted;   /**< written by the provider */
    uint32_t done;     /**< written by the device process */
    uint32_t alive;    /**< nonzero while the device process serves */
    uint64_t now_ns;   /**< the device's time (its cycles), written by the device process */
    uint64_t pad;
    ncl_uio_slot slot[NCL_UIO_SLOTS];
} ncl_uio_mailbox;

/** One opened device. Opaque but sized so a caller can hold it without an allocator. */
typedef struct ncl_uio {
    int fd, irq_fd;
    ncl_uio_bus bus;
    volatile uint32_t *regs;
    ncl_uio_mailbox *box;
    uint8_t *mem;
    uint64_t regs_bytes, mem_bytes, mem_base;
    uint32_t irq_count;
    uint32_t bus_errors;
    char err[200];
} ncl_uio;

/** Opens and maps the device and fills *access with functions on it (ctx = u): reg_read32 /
 *  reg_write32, mem_read / mem_write (bounds-checked against map 1), wait_irq, poll (a yield),
 *  now_ns (CLOCK_MONOTONIC, or the emulated device's time). NCL_ERR_BACKEND with u->err saying
 *  which file and why when it cannot. */
ncl_result ncl_uio_open(ncl_uio *u, const ncl_uio_config *cfg, ncl_mmio_access *access);
void ncl_uio_close(ncl_uio *u);
/** Device memory as this process maps it (for a host that stages buffers), and its size. */
uint8_t *ncl_uio_mem(ncl_uio *u, uint64_t *bytes);

#ifdef __cplusplus
}
#endif

#endif
