/* board_qemu.c — a bare-metal board program: one rank per core of a QEMU machine, all cores
 * sharing its RAM through the shm backend. Runs allreduce, broadcast, reduce, reduce_scatter and
 * allgather in and out of place at several sizes, checks every element bit-exactly, prints a
 * table (with the data tasks and instructions rank 0 ran per call), and ends QEMU: pass, or fail
 * with the number of bad rows. What differs per machine (output, clock, instruction count, the
 * end, starting the other cores) is board.h's, in board_riscv_virt.c and board_arm_mps2.c.
 * The board's own code may keep globals (the buffers, the arena); the engine keeps none. */
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "board.h"
#include "ncl/ncl.h"
#include "ncl/ncl_names.h"
#include "ncl/ncl_shm.h"
#include "ncl_fmt.h"

#define NRANKS BOARD_HARTS
#define MAXC 16384u                       /* elements per rank, at most */
#define SCRATCH_BYTES (256u << 10)
#define ARENA_BYTES (256u << 10)
#define ROOT 1                            /* of broadcast and reduce */

typedef struct rank_mem {
    float send[NRANKS * MAXC];            /* reduce_scatter sends nranks chunks */
    float recv[NRANKS * MAXC];            /* allgather receives nranks chunks */
    unsigned char scratch[SCRATCH_BYTES];
    unsigned char arena[ARENA_BYTES];
    uint64_t arena_used;
} rank_mem;

static rank_mem ranks[NRANKS];
static uint64_t world[(4096 + 8 * NRANKS * 32 * NRANKS) / 8]; /* >= ncl_shm_world_bytes(NRANKS) */
static volatile uint32_t arrivals, bad_rows;
static volatile uint32_t row_tasks[NRANKS]; /* each rank's data tasks in the row just run (32-bit:
                                               * the cores' atomics) */
/* set by hart 0 once .bss is cleared and the world is ready; in .data so the clearing leaves it */
static volatile uint32_t go __attribute__((section(".data")));
extern unsigned char __bss_start[], __bss_end[];

static void say(const char *fmt, ...)
{
    char line[480];
    va_list ap;
    va_start(ap, fmt);
    ncl_vfmt(line, sizeof line, fmt, ap);
    va_end(ap);
    board_puts(line);
}

static uint64_t now_ns(void *ctx)
{
    (void)ctx;
    return board_now_ns();
}

static void *arena_alloc(void *ud, size_t bytes)
{
    rank_mem *m = ud;
    uint64_t at = (m->arena_used + 15u) & ~(uint64_t)15u;
    if (at + bytes > ARENA_BYTES)
        return NULL;
    m->arena_used = at + bytes;
    return m->arena + at;
}

static void arena_free(void *ud, void *p)
{
    (void)ud, (void)p; /* the arena lives as long as the board */
}

/* Barrier number b (every rank counts its own): wait until all ranks arrived b + 1 times. The
 * waiting cores sleep (board_idle) and the last one kicks them, so a barrier costs no
 * instructions while it waits (what the instruction column counts under qemu -icount). */
static void barrier(uint32_t *b)
{
    const uint32_t target = (*b + 1) * NRANKS;
    (*b)++;
    if (__atomic_add_fetch(&arrivals, 1u, __ATOMIC_ACQ_REL) == target) {
        for (int r = 0; r < NRANKS; r++)
            board_kick(r);
        return;
    }
    while (__atomic_load_n(&arrivals, __ATOMIC_ACQUIRE) < target)
        board_idle(1000000);
}

/* Rank r's input element i: small integers, so every sum is exact in fp32 and int32 alike. */
static int32_t input(int r, uint32_t i)
{
    return (r + 1) * (int32_t)(i % 251u + 1u);
}

typedef struct row {
    ncl_coll coll;
    ncl_dtype dtype;
    uint32_t count; /* per rank: reduce_scatter's recvcount, allgather's sendcount */
    int inplace;
} row;

static void fill(float *buf, ncl_dtype dt, int r, uint32_t n, uint32_t first)
{
    for (uint32_t i = 0; i < n; i++) {
        if (dt == NCL_FLOAT32)
            buf[i] = (float)input(r, first + i);
        else
            ((int32_t *)buf)[i] = input(r, first + i);
    }
}

/* Whether element i of buf holds the value v (bit for bit). */
static int holds(const float *buf, ncl_dtype dt, uint32_t i, int32_t v)
{
    if (dt == NCL_FLOAT32) {
        float want = (float)v;
        return memcmp(&buf[i], &want, sizeof want) == 0;
    }
    return ((const int32_t *)buf)[i] == v;
}

static int32_t sum_over_ranks(uint32_t i)
{
    int32_t s = 0;
    for (int r = 0; r < NRANKS; r++)
        s += input(r, i);
    return s;
}

/* One row on rank r: its buffers filled, then the call alone timed (instructions retired and
 * data tasks run), then its result checked. */
typedef struct call {
    const void *send;
    void *recv;
} call;

static call prepare(int r, const row *w)
{
    rank_mem *m = &ranks[r];
    const uint32_t n = w->count;
    call c = {m->send, m->recv};
    memset(m->recv, 0, sizeof m->recv);
    switch (w->coll) {
    case NCL_COLL_REDUCE_SCATTER: /* in place: recvbuf = sendbuf + rank * recvcount */
        fill(w->inplace ? m->recv : m->send, w->dtype, r, NRANKS * n, 0);
        if (w->inplace)
            c.send = m->recv, c.recv = m->recv + (uint64_t)r * n;
        return c;
    case NCL_COLL_ALLGATHER: /* in place: sendbuf = recvbuf + rank * sendcount */
        if (w->inplace)
            c.send = m->recv + (uint64_t)r * n;
        fill((float *)(uintptr_t)c.send, w->dtype, r, n, 0);
        return c;
    default:
        fill(w->inplace ? m->recv : m->send, w->dtype, r, n, 0);
        if (w->inplace)
            c.send = m->recv;
        return c;
    }
}

static ncl_result run(ncl_comm *comm, const row *w, call c)
{
    switch (w->coll) {
    case NCL_COLL_ALLREDUCE: return ncl_allreduce(c.send, c.recv, w->count, w->dtype, NCL_SUM, comm);
    case NCL_COLL_BROADCAST: return ncl_broadcast(c.send, c.recv, w->count, w->dtype, ROOT, comm);
    case NCL_COLL_REDUCE: return ncl_reduce(c.send, c.recv, w->count, w->dtype, NCL_SUM, ROOT, comm);
    case NCL_COLL_REDUCE_SCATTER: return ncl_reduce_scatter(c.send, c.recv, w->count, w->dtype, NCL_SUM, comm);
    default: return ncl_allgather(c.send, c.recv, w->count, w->dtype, comm);
    }
}

/* The elements of rank r's result that differ from the expected one. */
static uint32_t check(int r, const row *w, call c)
{
    const float *out = c.recv;
    uint32_t wrong = 0, n = w->count;
    switch (w->coll) {
    case NCL_COLL_ALLREDUCE:
    case NCL_COLL_REDUCE:
        if (w->coll == NCL_COLL_REDUCE && r != ROOT)
            return 0; /* only the root's result is defined */
        for (uint32_t i = 0; i < n; i++)
            wrong += !holds(out, w->dtype, i, sum_over_ranks(i));
        return wrong;
    case NCL_COLL_BROADCAST:
        for (uint32_t i = 0; i < n; i++)
            wrong += !holds(out, w->dtype, i, input(ROOT, i));
        return wrong;
    case NCL_COLL_REDUCE_SCATTER:
        for (uint32_t i = 0; i < n; i++)
            wrong += !holds(out, w->dtype, i, sum_over_ranks((uint32_t)r * n + i));
        return wrong;
    default:
        for (int from = 0; from < NRANKS; from++)
            for (uint32_t i = 0; i < n; i++)
                wrong += !holds(out, w->dtype, (uint32_t)from * n + i, input(from, i));
        return wrong;
    }
}

static const ncl_coll colls[] = {NCL_COLL_ALLREDUCE, NCL_COLL_BROADCAST, NCL_COLL_REDUCE, NCL_COLL_REDUCE_SCATTER,
                                 NCL_COLL_ALLGATHER};
static const uint32_t counts[] = {1, 1000, MAXC};

static void idle(void *ctx, uint64_t timeout_ns)
{
    (void)ctx;
    board_idle(timeout_ns);
}

static void kick(void *ctx, int peer)
{
    (void)ctx;
    board_kick(peer);
}

/* Rank r's whole run; *b counts the barriers it passed (every rank passes the same ones, also
 * one that could not start, so that none waits for it). */
static void rank_main(int r, uint32_t *b)
{
    ncl_shm shm;
    ncl_hal hal;
    ncl_comm *comm = NULL;
    const ncl_shm_board board = {now_ns, NULL, idle, kick};
    ncl_result rc = ncl_shm_init(&shm, world, r, ranks[r].scratch, SCRATCH_BYTES, &board, &hal);
    barrier(b); /* every rank's scratch is bound before any peer writes a zone */
    ncl_config cfg = NCL_CONFIG_INIT;
    cfg.alloc = arena_alloc;
    cfg.free = arena_free;
    cfg.alloc_ud = &ranks[r];
    cfg.timeout_ns = 10000000000ull; /* a hang ends the run in 10 s of QEMU's time */
    if (rc == NCL_SUCCESS)
        rc = ncl_comm_create(&comm, NRANKS, r, &hal, &cfg);
    if (rc != NCL_SUCCESS) {
        say("rank %d: cannot start: %s\n", r, ncl_strerror(rc));
        __atomic_fetch_add(&bad_rows, 1u, __ATOMIC_ACQ_REL);
        comm = NULL;
    }
    if (r == 0) { /* (one line per say: its buffer holds 480 characters) */
        say("# ringsim engine on %d cores of %s, shm backend, root %d\n", NRANKS, board_name, ROOT);
        say("# instructions: %s\n", board_instret_means);
        say("# collective dtype count placement tasks instructions #wrong (tasks: every rank's data tasks)\n");
    }
    /* the algorithms this build has (NCL_PORT_ALGOS), and the others refused when forced */
    if (r == 0)
        say("# algorithms:");
    for (unsigned c = 0; c < sizeof colls / sizeof colls[0]; c++) {
        if (r == 0)
            say(" %s", ncl_coll_name(colls[c]));
        for (int a = NCL_ALGO_AUTO + 1; a < NCL_ALGO_COUNT; a++)
            if (ncl_algo_supported(colls[c], (ncl_algo)a)) {
                if (r == 0)
                    say(" %s", ncl_algo_name((ncl_algo)a));
            } else if (comm && ncl_comm_set_algorithm(comm, colls[c], (ncl_algo)a) == NCL_SUCCESS) {
                say("rank %d: %s %s is not built in, yet forcing it succeeded\n", r, ncl_coll_name(colls[c]),
                    ncl_algo_name((ncl_algo)a));
                __atomic_fetch_add(&bad_rows, 1u, __ATOMIC_ACQ_REL);
            }
        if (r == 0)
            say(c + 1 < sizeof colls / sizeof colls[0] ? ";" : "\n");
    }
    for (unsigned c = 0; c < sizeof colls / sizeof colls[0]; c++)
        for (unsigned k = 0; k < sizeof counts / sizeof counts[0]; k++)
            for (int inplace = 0; inplace < 2; inplace++) {
                row w = {colls[c], (c + k) % 2 ? NCL_INT32 : NCL_FLOAT32, counts[k], inplace};
                call bufs = prepare(r, &w);
                /* the window: from every rank ready to every rank done, waits asleep */
                barrier(b);
                uint64_t i0 = board_instret(), t0 = ncl_shm_tasks(&shm);
                ncl_result rc_call = comm ? run(comm, &w, bufs) : NCL_ERR_INVALID_USAGE;
                __atomic_store_n(&row_tasks[r], (uint32_t)(ncl_shm_tasks(&shm) - t0), __ATOMIC_RELEASE);
                barrier(b);
                uint64_t instr = board_instret() - i0, tasks = 0;
                for (int q = 0; q < NRANKS; q++)
                    tasks += __atomic_load_n(&row_tasks[q], __ATOMIC_ACQUIRE);
                uint32_t wrong = comm ? check(r, &w, bufs) : 0;
                if (rc_call != NCL_SUCCESS || wrong)
                    __atomic_fetch_add(&bad_rows, 1u, __ATOMIC_ACQ_REL);
                if (rc_call != NCL_SUCCESS && comm)
                    say("rank %d: %s: %s | %s\n", r, ncl_strerror(rc_call), ncl_comm_last_error(comm), shm.err);
                if (r == 0)
                    say("row %s %s %u %s %llu %llu %u\n", ncl_coll_name(w.coll), ncl_dtype_name(w.dtype),
                        (unsigned)w.count, inplace ? "in" : "out", (unsigned long long)tasks,
                        (unsigned long long)instr, (unsigned)wrong);
            }
    if (comm)
        ncl_comm_destroy(comm);
}

void board_main(uint32_t hart);

void board_main(uint32_t hart)
{
    if (hart >= NRANKS)
        return;
    if (hart == 0) {
        memset(__bss_start, 0, (size_t)(__bss_end - __bss_start));
        if (ncl_shm_world_bytes(NRANKS) > sizeof world || ncl_shm_world_init(world, sizeof world, NRANKS) != NCL_SUCCESS) {
            board_puts("board: the shm world does not fit\n");
            board_exit(1);
        }
        __atomic_store_n(&go, 1u, __ATOMIC_RELEASE);
        board_start_others();
    }
    while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
        ;
    uint32_t b = 0;
    rank_main((int)hart, &b);
    barrier(&b);
    if (hart == 0) {
        uint32_t bad = __atomic_load_n(&bad_rows, __ATOMIC_ACQUIRE);
        say("# sleeps %u, ended by their timeout %u\n", (unsigned)__atomic_load_n(&board_sleeps[0], __ATOMIC_RELAXED),
            (unsigned)__atomic_load_n(&board_sleeps[1], __ATOMIC_RELAXED));
        say("# %s: %u bad rows\n", bad ? "FAILED" : "OK", (unsigned)bad);
        board_exit(bad);
    }
}
