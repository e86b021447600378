/* ncl_uio.c — ncl_mmio_access on a Linux UIO device: map 0 the register window, map 1 the device
 * memory, interrupts through the device file; or an emulated device's shared-memory mailbox. */
#define _GNU_SOURCE /* ppoll, accept4-era Linux APIs, GNU strerror_r */
#include "ncl/ncl_uio.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ncl_fmt.h"

#define BUS_ERROR_READ 0xFFFFFFFFu        /* what a read the bus refused returns (a PCIe abort's) */
#define MAILBOX_TIMEOUT_NS 60000000000ull /* an emulated device that stops serving: fail, never hang */

static uint64_t wall_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* u->err = "<what> <path>: <the errno's text>"; NCL_ERR_BACKEND. */
static ncl_result fail_errno(ncl_uio *u, const char *what, const char *path, int err)
{
    char buf[96] = "";
    const char *text = strerror_r(err, buf, sizeof buf); /* GNU's: returns the text */
    ncl_fmt(u->err, sizeof u->err, "%s %s: %s", what, path, text ? text : "?");
    return NCL_ERR_BACKEND;
}

/* A map's size from <sysfs>/maps/map<n>/size (the kernel writes it as 0x-hex). 0 if unreadable. */
static uint64_t map_size(const char *sysfs, int n)
{
    char path[512], text[32] = "";
    ncl_fmt(path, sizeof path, "%s/maps/map%d/size", sysfs, n);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t got = read(fd, text, sizeof text - 1);
    close(fd);
    if (got <= 0)
        return 0;
    text[got] = '\0';
    return strtoull(text, NULL, 0);
}

/* ---- the bus ------------------------------------------------------------------------------ */

/* The mailbox's request k performed (done passed it), or the device stopped serving. */
static int mailbox_wait(ncl_uio *u, uint32_t k)
{
    uint64_t start = 0;
    for (unsigned spin = 0;; spin++) {
        uint32_t done = __atomic_load_n(&u->box->done, __ATOMIC_ACQUIRE);
        if ((int32_t)(done - k) > 0)
            return 1;
        if (!__atomic_load_n(&u->box->alive, __ATOMIC_ACQUIRE)) {
            ncl_fmt(u->err, sizeof u->err, "the emulated device stopped serving its register mailbox");
            return 0;
        }
        if (spin % 64 == 63) { /* the device process needs the core more than this spin does */
            uint64_t now = wall_ns();
            if (!start)
                start = now;
            else if (now - start > MAILBOX_TIMEOUT_NS) {
                ncl_fmt(u->err, sizeof u->err, "the emulated device left register request %u unserved for 60 s",
                        (unsigned)k);
                return 0;
            }
            sched_yield();
        }
    }
}

/* Posts one request; returns its number. Waits for a free slot first. */
static uint32_t mailbox_post(ncl_uio *u, uint32_t op, uint32_t off, uint32_t value)
{
    uint32_t k = u->box->posted; /* only this process writes it */
    if (k - __atomic_load_n(&u->box->done, __ATOMIC_ACQUIRE) >= NCL_UIO_SLOTS)
        mailbox_wait(u, k - NCL_UIO_SLOTS);
    ncl_uio_slot *s = &u->box->slot[k % NCL_UIO_SLOTS];
    s->op_off = op << 16 | off;
    s->value = value;
    s->err = 0;
    /* release: the slot, and device memory written before it (a descriptor before the doorbell) */
    __atomic_store_n(&u->box->posted, k + 1, __ATOMIC_RELEASE);
    return k;
}

static int reg_ok(const ncl_uio *u, uint32_t off)
{
    return off % 4 == 0 && (uint64_t)off + 4 <= u->regs_bytes;
}

static uint32_t reg_read32(void *ctx, uint32_t off)
{
    ncl_uio *u = ctx;
    if (u->bus == NCL_UIO_BUS_DIRECT) {
        if (!reg_ok(u, off)) {
            u->bus_errors++;
            return BUS_ERROR_READ;
        }
        __sync_synchronize(); /* device memory written before this read is visible to the device */
        return u->regs[off / 4];
    }
    uint32_t k = mailbox_post(u, NCL_UIO_OP_READ, off, 0);
    if (!mailbox_wait(u, k)) {
        u->bus_errors++;
        return BUS_ERROR_READ;
    }
    const ncl_uio_slot *s = &u->box->slot[k % NCL_UIO_SLOTS];
    if (s->err)
        u->bus_errors++;
    return s->err ? BUS_ERROR_READ : s->value;
}

static void reg_write32(void *ctx, uint32_t off, uint32_t value)
{
    ncl_uio *u = ctx;
    if (u->bus == NCL_UIO_BUS_DIRECT) {
        if (!reg_ok(u, off)) {
            u->bus_errors++;
            return;
        }
        __sync_synchronize(); /* a descriptor written to device memory lands before its doorbell */
        u->regs[off / 4] = value;
        return;
    }
    mailbox_post(u, NCL_UIO_OP_WRITE, off, value); /* posted: the device performs it in order */
}

/* ---- device memory, interrupts, time ---------------------------------------------------------- */

static int mem_span(const ncl_uio *u, uint64_t dev_addr, uint64_t bytes, uint64_t *at)
{
    if (dev_addr < u->mem_base || bytes > u->mem_bytes || dev_addr - u->mem_base > u->mem_bytes - bytes)
        return 0;
    *at = dev_addr - u->mem_base;
    return 1;
}

static int mem_write(void *ctx, uint64_t dev_addr, const void *src, uint64_t bytes)
{
    ncl_uio *u = ctx;
    uint64_t at;
    if (!mem_span(u, dev_addr, bytes, &at))
        return 1;
    memcpy(u->mem + at, src, bytes);
    return 0;
}

static int mem_read(void *ctx, uint64_t dev_addr, void *dst, uint64_t bytes)
{
    ncl_uio *u = ctx;
    uint64_t at;
    if (!mem_span(u, dev_addr, bytes, &at))
        return 1;
    __sync_synchronize(); /* what the device wrote before it said so (a register read) */
    memcpy(dst, u->mem + at, bytes);
    return 0;
}

/* UIO's protocol: write 1 to (re-)enable the interrupt, then a read returns the count so far once
 * one came. ppoll() bounds the wait. */
static int wait_irq(void *ctx, uint64_t timeout_ns)
{
    ncl_uio *u = ctx;
    const uint32_t enable = 1;
    if (write(u->irq_fd, &enable, sizeof enable) < 0 && errno != EINTR) {
        /* a device without irqcontrol keeps its line enabled: nothing to do */
    }
    if (timeout_ns > 1000000000ull)
        timeout_ns = 1000000000ull; /* spurious returns are fine; a second bounds each */
    struct timespec t = {(time_t)(timeout_ns / 1000000000ull), (long)(timeout_ns % 1000000000ull)};
    struct pollfd p = {u->irq_fd, POLLIN, 0};
    if (ppoll(&p, 1, &t, NULL) <= 0 || !(p.revents & POLLIN))
        return 0;
    uint32_t count = 0;
    if (read(u->irq_fd, &count, sizeof count) != (ssize_t)sizeof count)
        return 0;
    u->irq_count = count;
    return 1;
}

static int poll_once(void *ctx)
{
    (void)ctx;
    sched_yield();
    return 0;
}

static uint64_t now_ns(void *ctx)
{
    ncl_uio *u = ctx;
    return u->bus == NCL_UIO_BUS_MAILBOX ? __atomic_load_n(&u->box->now_ns, __ATOMIC_ACQUIRE) : wall_ns();
}

/* ---- open / close ------------------------------------------------------------------------------- */

/* The interrupt file: a Unix socket is connected (an emulated device's), anything else opened. */
static int open_irq(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    if (!S_ISSOCK(st.st_mode))
        return open(path, O_RDWR | O_CLOEXEC);
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof a.sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(a.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (const struct sockaddr *)&a, sizeof a) != 0) {
        int err = errno;
        close(fd);
        errno = err;
        return -1;
    }
    return fd;
}

ncl_result ncl_uio_open(ncl_uio *u, const ncl_uio_config *cfg, ncl_mmio_access *access)
{
    if (!u || !access)
        return NCL_ERR_INVALID_ARGUMENT;
    memset(u, 0, sizeof *u);
    u->fd = u->irq_fd = -1;
    if (!cfg || cfg->size != sizeof *cfg || cfg->version != NCL_UIO_CONFIG_VERSION || !cfg->device ||
        (cfg->bus != NCL_UIO_BUS_DIRECT && cfg->bus != NCL_UIO_BUS_MAILBOX)) {
        ncl_fmt(u->err, sizeof u->err, "ncl_uio_config: size, version, device and bus are required");
        return NCL_ERR_INVALID_ARGUMENT;
    }
    u->bus = cfg->bus;
    u->mem_base = cfg->mem_base;
    char sysfs[512];
    if (cfg->sysfs)
        ncl_fmt(sysfs, sizeof sysfs, "%s", cfg->sysfs);
    else {
        const char *name = strrchr(cfg->device, '/');
        ncl_fmt(sysfs, sizeof sysfs, "/sys/class/uio/%s", name ? name + 1 : cfg->device);
    }
    u->regs_bytes = map_size(sysfs, 0);
    u->mem_bytes = map_size(sysfs, 1);
    const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    if (u->regs_bytes < 4096 || u->mem_bytes == 0) {
        ncl_fmt(u->err, sizeof u->err, "%s/maps: map0 (the register window, >= 4096 B) and map1 (device memory) "
                "are needed; read %llu and %llu B", sysfs, (unsigned long long)u->regs_bytes,
                (unsigned long long)u->mem_bytes);
        return NCL_ERR_BACKEND;
    }
    ncl_result rc;
    u->fd = open(cfg->device, O_RDWR | O_CLOEXEC);
    if (u->fd < 0)
        return fail_errno(u, "cannot open", cfg->device, errno);
    /* UIO's convention: map N at offset N pages of the device file */
    void *regs = mmap(NULL, u->regs_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, u->fd, 0);
    if (regs == MAP_FAILED) {
        rc = fail_errno(u, "cannot map the register window (map0) of", cfg->device, errno);
        goto out;
    }
    u->regs = regs;
    void *mem = mmap(NULL, u->mem_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, u->fd, (off_t)page);
    if (mem == MAP_FAILED) {
        rc = fail_errno(u, "cannot map the device memory (map1) of", cfg->device, errno);
        goto out;
    }
    u->mem = mem;
    if (u->bus == NCL_UIO_BUS_MAILBOX) {
        u->box = regs;
        if (__atomic_load_n(&u->box->magic, __ATOMIC_ACQUIRE) != NCL_UIO_MAILBOX_MAGIC) {
            ncl_fmt(u->err, sizeof u->err, "%s: map0 holds no emulated device's mailbox (magic 0x%x, want 0x%x)",
                    cfg->device, (unsigned)u->box->magic, (unsigned)NCL_UIO_MAILBOX_MAGIC);
            rc = NCL_ERR_BACKEND;
            goto out;
        }
    }
    if (cfg->irq) {
        u->irq_fd = open_irq(cfg->irq);
        if (u->irq_fd < 0) {
            rc = fail_errno(u, "cannot open the interrupt file", cfg->irq, errno);
            goto out;
        }
    } else {
        u->irq_fd = u->fd;
    }
    memset(access, 0, sizeof *access);
    access->reg_read32 = reg_read32;
    access->reg_write32 = reg_write32;
    access->mem_write = mem_write;
    access->mem_read = mem_read;
    access->wait_irq = wait_irq;
    access->poll = poll_once;
    access->now_ns = now_ns;
    access->ctx = u;
    return NCL_SUCCESS;
out:
    ncl_uio_close(u);
    return rc;
}

void ncl_uio_close(ncl_uio *u)
{
    if (!u)
        return;
    if (u->mem)
        munmap(u->mem, u->mem_bytes);
    if (u->regs)
        munmap((void *)(uintptr_t)u->regs, u->regs_bytes);
    if (u->irq_fd >= 0 && u->irq_fd != u->fd)
        close(u->irq_fd);
    if (u->fd >= 0)
        close(u->fd);
    u->mem = NULL;
    u->regs = NULL;
    u->box = NULL;
    u->fd = u->irq_fd = -1;
}

uint8_t *ncl_uio_mem(ncl_uio *u, uint64_t *bytes)
{
    if (bytes)
        *bytes = u ? u->mem_bytes : 0;
    return u ? u->mem : NULL;
}
