/* test_host.c — unit tests of the host HAL backend: its ops driven by hand on real rank threads. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ncl/ncl_dtype.h"
#include "ncl/ncl_host.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* cmocka's asserts longjmp and must stay on the main thread: rank functions check with
 * EXPECT, which prints the failed condition and makes the rank return NCL_ERR_INTERNAL. */
#define EXPECT(cond)                                                                       \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "%s:%d: rank %d: check failed: %s\n", __FILE__, __LINE__,      \
                    rank_of(comm), #cond);                                                 \
            return NCL_ERR_INTERNAL;                                                       \
        }                                                                                  \
    } while (0)
#define EXPECT_RC(want, call) EXPECT((call) == (want))
#define EXPECT_OK(call) EXPECT_RC(NCL_SUCCESS, call)

/* Notify ids used by the hand-written protocols below. */
enum { ID_DATA = 0, ID_READY = 1, ID_GO = 2 };

static const uint64_t SEC = 1000000000ull;

static int rank_of(ncl_comm *comm)
{
    int r = -1;
    ncl_comm_rank(comm, &r);
    return r;
}

static int size_of(ncl_comm *comm)
{
    int n = 0;
    ncl_comm_size(comm, &n);
    return n;
}

static const ncl_hal *hal_of(ncl_comm *comm)
{
    return ncl_comm_hal(comm);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Binds send/recv for a hand-driven "collective". */
static ncl_result bind(const ncl_hal *h, const void *send, uint64_t send_bytes, void *recv,
                       uint64_t recv_bytes)
{
    ncl_hal_launch l;
    memset(&l, 0, sizeof l);
    l.seq = 1;
    l.coll = NCL_COLL_ALLREDUCE;
    l.send = send;
    l.send_bytes = send_bytes;
    l.recv = recv;
    l.recv_bytes = recv_bytes;
    return ncl_hal_begin(h, &l);
}

/* Waits like the executor does: try, then sleep on wait_event until the deadline. */
static ncl_result wait_notify(const ncl_hal *h, int peer, uint32_t id, uint32_t count, uint64_t timeout_ns)
{
    uint64_t deadline = ncl_hal_now_ns(h) + timeout_ns;
    for (;;) {
        int done = 0;
        ncl_result rc = ncl_hal_notify_try_wait(h, peer, id, count, &done);
        if (rc != NCL_SUCCESS)
            return rc;
        if (done)
            return NCL_SUCCESS;
        uint64_t now = ncl_hal_now_ns(h);
        if (now >= deadline)
            return NCL_ERR_TIMEOUT;
        rc = ncl_hal_wait_event(h, deadline - now);
        if (rc != NCL_SUCCESS)
            return rc;
    }
}

static ncl_task data_task(uint8_t kind, int peer, uint32_t sbuf, uint64_t soff, uint32_t dbuf,
                          uint64_t doff, uint64_t bytes)
{
    ncl_task t;
    memset(&t, 0, sizeof t);
    t.kind = kind;
    t.peer = peer;
    t.src.buf = sbuf;
    t.src.off = soff;
    t.dst.buf = dbuf;
    t.dst.off = doff;
    t.bytes = bytes;
    return t;
}

static ncl_task reduce_task(uint8_t kind, int peer, uint32_t sbuf, uint64_t soff, uint32_t dbuf,
                            uint64_t doff, uint64_t bytes, ncl_dtype dtype, ncl_op op)
{
    ncl_task t = data_task(kind, peer, sbuf, soff, dbuf, doff, bytes);
    t.dtype = (uint8_t)dtype;
    t.op = (uint8_t)op;
    return t;
}

/* Submits on queue q and polls to completion. */
static ncl_result run_task(const ncl_hal *h, uint32_t q, ncl_task t)
{
    ncl_result rc = ncl_hal_dma_submit(h, q, &t);
    if (rc != NCL_SUCCESS)
        return rc;
    for (int i = 0; i < 1000; i++) {
        int done = 0;
        rc = ncl_hal_dma_poll(h, q, &done);
        if (rc != NCL_SUCCESS || done)
            return rc;
        ncl_hal_wait_event(h, SEC / 100);
    }
    return NCL_ERR_TIMEOUT;
}

static ncl_result run_n(int nranks, ncl_host_fn fn, void *arg, uint64_t scratch, ncl_result *results)
{
    ncl_host_config cfg = NCL_HOST_CONFIG_INIT;
    cfg.nranks = nranks;
    cfg.scratch_bytes = scratch;
    return ncl_host_run_cfg(&cfg, fn, arg, results);
}

/* Runs with NCL_HOST_LOG=off: for tests whose expected failures would fill the log. */
static ncl_result run_quiet(int nranks, ncl_host_fn fn, void *arg, uint64_t scratch)
{
    setenv("NCL_HOST_LOG", "off", 1);
    ncl_result rc = run_n(nranks, fn, arg, scratch, NULL);
    unsetenv("NCL_HOST_LOG");
    return rc;
}

/* ---- caps and scratch ------------------------------------------------------------------ */

static ncl_result caps_fn(ncl_comm *comm, void *arg)
{
    (void)arg;
    const ncl_hal *h = hal_of(comm);
    EXPECT(h && h->ops == &ncl_host_hal_ops);
    ncl_hal_caps caps;
    EXPECT_OK(ncl_hal_caps_get(h, &caps));
    EXPECT(caps.scratch_bytes == 1000);
    EXPECT(caps.max_queues == NCL_MAX_QUEUES);
    EXPECT(caps.buf_align == 1);
    /* Scratch holds data across tasks: send -> scratch -> recv. */
    unsigned char send[1000], recv[1000];
    for (int i = 0; i < 1000; i++)
        send[i] = (unsigned char)(i * 7 + rank_of(comm));
    memset(recv, 0, sizeof recv);
    EXPECT_OK(bind(h, send, sizeof send, recv, sizeof recv));
    EXPECT_OK(run_task(h, 0, data_task(NCL_TASK_LOCAL_COPY, 0, NCL_BUF_SEND, 0, NCL_BUF_SCRATCH, 0, 1000)));
    EXPECT_OK(run_task(h, 1, data_task(NCL_TASK_LOCAL_COPY, 0, NCL_BUF_SCRATCH, 0, NCL_BUF_RECV, 0, 1000)));
    EXPECT(memcmp(send, recv, sizeof send) == 0);
    EXPECT_OK(ncl_hal_end(h, NCL_SUCCESS));
    uint64_t a = ncl_hal_now_ns(h), b = ncl_hal_now_ns(h);
    EXPECT(a > 0 && b >= a);
    return NCL_SUCCESS;
}

static void test_caps_and_scratch(void **state)
{
    (void)state;
    assert_int_equal(run_n(2, caps_fn, NULL, 1000, NULL), NCL_SUCCESS);
}

/* ---- WRITE after a READY/DATA handshake -------------------------------------------------- */

enum { XFER = 4096 };

static ncl_result write_fn(ncl_comm *comm, void *arg)
{
    (void)arg;
    const ncl_hal *h = hal_of(comm);
    int me = rank_of(comm);
    unsigned char send[XFER], recv[XFER];
    for (int i = 0; i < XFER; i++)
        send[i] = (unsigned char)(i * 13 + 1);
    memset(recv, 0xee, sizeof recv);
    EXPECT_OK(bind(h, send, sizeof send, recv, sizeof recv));
    if (me == 1) {
        EXPECT_OK(ncl_hal_notify_record(h, 0, 0, ID_READY));
        EXPECT_OK(wait_notify(h, 0, ID_DATA, 2, 10 * SEC));
        /* whole first half, then 1000 bytes from send+100 at recv+3000 */
        EXPECT(memcmp(recv, send, XFER / 2) == 0);
        EXPECT(recv[XFER / 2] == 0xee && recv[2999] == 0xee);
        EXPECT(memcmp(recv + 3000, send + 100, 1000) == 0);
        EXPECT(recv[4000] == 0xee);
    } else {
        EXPECT_OK(wait_notify(h, 1, ID_READY, 1, 10 * SEC));
        EXPECT_OK(run_task(h, 0, data_task(NCL_TASK_WRITE, 1, NCL_BUF_SEND, 0, NCL_BUF_RECV, 0, XFER / 2)));
        EXPECT_OK(ncl_hal_notify_record(h, 0, 1, ID_DATA));
        EXPECT_OK(run_task(h, 3, data_task(NCL_TASK_WRITE, 1, NCL_BUF_SEND, 100, NCL_BUF_RECV, 3000, 1000)));
        EXPECT_OK(ncl_hal_notify_record(h, 3, 1, ID_DATA));
    }
    EXPECT_OK(ncl_hal_end(h, NCL_SUCCESS));
    return NCL_SUCCESS;
}

static void test_write_lands_after_handshake(void **state)
{
    (void)state;
    assert_int_equal(ncl_host_run(2, write_fn, NULL), NCL_SUCCESS);
}

/* ---- WRITE_REDUCE ------------------------------------------------------------------------ */

enum { RN = 1024 };

static ncl_result write_reduce_fn(ncl_comm *comm, void *arg)
{
    (void)arg;
    const ncl_hal *h = hal_of(comm);
    int me = rank_of(comm);
    struct {
        float f[RN];
        int32_t i[RN];
    } send, recv;
    for (int k = 0; k < RN; k++) {
        send.f[k] = me == 0 ? 2.0f * (float)k : 0.0f;
        recv.f[k] = (float)k + 0.5f;
        send.i[k] = me == 0 ? (k % 2 ? 5000 : -5000) : 0;
        recv.i[k] = k;
    }
    EXPECT_OK(bind(h, &send, sizeof send, &recv, sizeof recv));
    if (me == 1) {
        EXPECT_OK(ncl_hal_notify_record(h, 0, 0, ID_READY));
        EXPECT_OK(wait_notify(h, 0, ID_DATA, 2, 10 * SEC));
        for (int k = 0; k < RN; k++) {
            EXPECT(recv.f[k] == 3.0f * (float)k + 0.5f);
            EXPECT(recv.i[k] == (k % 2 ? 5000 : k));
        }
    } else {
        EXPECT_OK(wait_notify(h, 1, ID_READY, 1, 10 * SEC));
        EXPECT_OK(run_task(h, 0, reduce_task(NCL_TASK_WRITE_REDUCE, 1, NCL_BUF_SEND, 0, NCL_BUF_RECV, 0,
                                             sizeof send.f, NCL_FLOAT32, NCL_SUM)));
        EXPECT_OK(ncl_hal_notify_record(h, 0, 1, ID_DATA));
        EXPECT_OK(run_task(h, 1, reduce_task(NCL_TASK_WRITE_REDUCE, 1, NCL_BUF_SEND, sizeof send.f,
                                             NCL_BUF_RECV, sizeof recv.f, sizeof send.i, NCL_INT32, NCL_MAX)));
        EXPECT_OK(ncl_hal_notify_record(h, 1, 1, ID_DATA));
    }
    EXPECT_OK(ncl_hal_end(h, NCL_SUCCESS));
    return NCL_SUCCESS;
}

static void test_write_reduce(void **state)
{
    (void)state;
    assert_int_equal(ncl_host_run(2, write_reduce_fn, NULL), NCL_SUCCESS);
}

/* ---- deferred copies ---------------------------------------------------------------------- */

/* A LOCAL_COPY of SEND into RECV is deferred: a peer's WRITE_REDUCE into it reduces into SEND's
 * values instead (the ring's fill, out of place), a WRITE drops it, REDUCE_WRITE_REDUCE and the
 * owner's own tasks copy it first, the rest is copied at end; pieces of it, and more copies than
 * the backend keeps. Rank 1 copies and receives, rank 0 writes. */
enum { DN = 1024, DMANY = 300 };

static ncl_result deferred_fn(ncl_comm *comm, void *arg)
{
    (void)arg;
    const ncl_hal *h = hal_of(comm);
    int me = rank_of(comm);
    static int32_t send[2][2 * DN], recv[2][2 * DN + 2 * DMANY];
    int32_t *s = send[me], *r = recv[me];
    const uint64_t E = sizeof(int32_t);
    for (int k = 0; k < 2 * DN; k++)
        s[k] = me == 1 ? k + 1 : k < DN ? 1000 : 5;
    for (int k = 0; k < 2 * DN + 2 * DMANY; k++)
        r[k] = -7;
    EXPECT_OK(bind(h, s, sizeof send[0], r, sizeof recv[0]));
    if (me == 1) {
        /* RECV [0, DN) <- SEND [0, DN) in two (one run); [DN+8, DN+72) <- SEND [0, 64) */
        EXPECT_OK(run_task(h, 0, data_task(NCL_TASK_LOCAL_COPY, 0, NCL_BUF_SEND, 0, NCL_BUF_RECV, 0, DN / 2 * E)));
        EXPECT_OK(run_task(h, 1, data_task(NCL_TASK_LOCAL_COPY, 0, NCL_BUF_SEND, DN / 2 * E, NCL_BUF_RECV,
                                           DN / 2 * E, DN / 2 * E)));
        EXPECT_OK(run_task(h, 0, data_task(NCL_TASK_LOCAL_COPY, 0, NCL_BUF_SEND, 0, NCL_BUF_RECV, (DN + 8) * E,
                                           64 * E)));
        /* element j of SEND to RECV 2 DN + 2 j: more separate copies than are kept */
        for (int j = 0; j < DMANY; j++)
            EXPECT_OK(run_task(h, 2, data_task(NCL_TASK_LOCAL_COPY, 0, NCL_BUF_SEND, (uint64_t)j * E, NCL_BUF_RECV,
                                               (uint64_t)(2 * DN + 2 * j) * E, E)));
        EXPECT_OK(ncl_hal_notify_record(h, 0, 0, ID_READY));
        EXPECT_OK(wait_notify(h, 0, ID_DATA, 1, 10 * SEC));
        /* our own reduce into a pending range: RECV [450, 500) <- send + send */
        EXPECT_OK(run_task(h, 0, reduce_task(NCL_TASK_LOCAL_REDUCE, 0, NCL_BUF_SEND, 450 * E, NCL_BUF_RECV, 450 * E,
                                             50 * E, NCL_INT32, NCL_SUM)));
    } else {
        EXPECT_OK(wait_notify(h, 1, ID_READY, 1, 10 * SEC));
        /* [0, 100) += 1000; [200, 300) <- 5; [300, 400) += 5 + 5; [DN-36, DN+28) += 1000 across
         * the end of one copy, a gap and the start of the other */
        EXPECT_OK(run_task(h, 0, reduce_task(NCL_TASK_WRITE_REDUCE, 1, NCL_BUF_SEND, 0, NCL_BUF_RECV, 0, 100 * E,
                                             NCL_INT32, NCL_SUM)));
        EXPECT_OK(run_task(h, 0, data_task(NCL_TASK_WRITE, 1, NCL_BUF_SEND, DN * E, NCL_BUF_RECV, 200 * E, 100 * E)));
        ncl_task rwr = reduce_task(NCL_TASK_REDUCE_WRITE_REDUCE, 1, NCL_BUF_SEND, DN * E, NCL_BUF_RECV, 300 * E,
                                   100 * E, NCL_INT32, NCL_SUM);
        rwr.src2 = rwr.src;
        EXPECT_OK(run_task(h, 1, rwr));
        EXPECT_OK(run_task(h, 1, reduce_task(NCL_TASK_WRITE_REDUCE, 1, NCL_BUF_SEND, 0, NCL_BUF_RECV, (DN - 36) * E,
                                             64 * E, NCL_INT32, NCL_SUM)));
        EXPECT_OK(ncl_hal_notify_record(h, 1, 1, ID_DATA));
    }
    EXPECT_OK(ncl_hal_end(h, NCL_SUCCESS));
    if (me == 1) {
        for (int k = 0; k < 2 * DN + 2 * DMANY; k++) {
            int32_t want = k < DN ? k + 1 : -7;
            if (k >= DN + 8 && k < DN + 72)
                want = k - (DN + 8) + 1;
            if (k >= 2 * DN && (k - 2 * DN) % 2 == 0)
                want = (k - 2 * DN) / 2 + 1;
            if (k < 100 || (k >= DN - 36 && k < DN + 28))
                want += 1000;
            if (k >= 200 && k < 300)
                want = 5;
            if (k >= 300 && k < 400)
                want += 10;
            if (k >= 450 && k < 500)
                want *= 2;
            if (r[k] != want)
                fprintf(stderr, "recv[%d] = %d, expected %d\n", k, r[k], want);
            EXPECT(r[k] == want);
        }
    }
    return NCL_SUCCESS;
}

static void test_deferred_copies(void **state)
{
    (void)state;
    assert_int_equal(ncl_host_run(2, deferred_fn, NULL), NCL_SUCCESS);
}

/* ---- LOCAL_COPY / LOCAL_REDUCE / LOCAL_DIV ------------------------------------------------ */

static ncl_result local_fn(ncl_comm *comm, void *arg)
{
    (void)arg;
    const ncl_hal *h = hal_of(comm);
    enum { N = 256 };
    int32_t send[N], recv[2 * N];
    for (int k = 0; k < N; k++)
        send[k] = k - 100;
    memset(recv, 0, sizeof recv);
    const uint64_t B = sizeof send;
    EXPECT_OK(bind(h, send, B, recv, sizeof recv));
    /* a copy of SEND into RECV may be deferred (test_deferred_copies): every later task sees
     * it, the program at end; the reduce below reads it */
    EXPECT_OK(run_task(h, 0, data_task(NCL_TASK_LOCAL_COPY, 0, NCL_BUF_SEND, 0, NCL_BUF_RECV, 0, B)));
    /* recv += send -> 2x; then dst == src is allowed: recv += recv -> 4x */
    EXPECT_OK(run_task(h, 0, reduce_task(NCL_TASK_LOCAL_REDUCE, 0, NCL_BUF_SEND, 0, NCL_BUF_RECV, 0, B,
                                         NCL_INT32, NCL_SUM)));
    EXPECT_OK(run_task(h, 0, reduce_task(NCL_TASK_LOCAL_REDUCE, 0, NCL_BUF_RECV, 0, NCL_BUF_RECV, 0, B,
                                         NCL_INT32, NCL_SUM)));
    for (int k = 0; k < N; k++)
        EXPECT(recv[k] == 4 * (k - 100));
    /* through scratch: scratch = recv; recv = recv * scratch (prod) */
    EXPECT_OK(run_task(h, 2, data_task(NCL_TASK_LOCAL_COPY, 0, NCL_BUF_RECV, 0, NCL_BUF_SCRATCH, 64, B)));
    EXPECT_OK(run_task(h, 2, reduce_task(NCL_TASK_LOCAL_REDUCE, 0, NCL_BUF_SCRATCH, 64, NCL_BUF_RECV, 0, B,
                                         NCL_INT32, NCL_PROD)));
    for (int k = 0; k < N; k++)
        EXPECT(recv[k] == 16 * (k - 100) * (k - 100));
    /* divide by 3: integers truncate toward zero */
    memcpy(recv, send, B);
    ncl_task div = data_task(NCL_TASK_LOCAL_DIV, 0, NCL_BUF_RECV, 0, NCL_BUF_RECV, 0, B);
    div.dtype = NCL_INT32;
    div.count = 3;
    EXPECT_OK(run_task(h, 1, div));
    for (int k = 0; k < N; k++)
        EXPECT(recv[k] == (k - 100) / 3);
    /* an overlapping copy behaves like memmove */
    for (int k = 0; k < N; k++)
        recv[k] = k;
    EXPECT_OK(run_task(h, 0, data_task(NCL_TASK_LOCAL_COPY, 0, NCL_BUF_RECV, 0, NCL_BUF_RECV, 16, 64)));
    for (int k = 0; k < 16; k++)
        EXPECT(recv[4 + k] == k);
    EXPECT_OK(ncl_hal_end(h, NCL_SUCCESS));
    return NCL_SUCCESS;
}

static void test_local_ops(void **state)
{
    (void)state;
    assert_int_equal(ncl_host_run(1, local_fn, NULL), NCL_SUCCESS);
}


/* ---- LOCAL_WIDEN / LOCAL_REDUCE_WIDE / LOCAL_NARROW ---------------------------------------- */

/* fp16 1.0 + 3 x 2^-11 accumulated in an fp32 scratch accumulator, rounded once into recv
 * (1.00146... is 1.5 ulp above 1: ties to even give 1 + 2^-9; step by step it would stay 1.0), avg-style division in
 * the narrowing, the fp32 side's bounds, and a dtype the kinds do not take. */
static ncl_result wide_fn(ncl_comm *comm, void *arg)
{
    (void)arg;
    const ncl_hal *h = hal_of(comm);
    enum { N = 64 };
    uint16_t send[N], recv[N];
    for (int k = 0; k < N; k++)
        send[k] = k == 0 ? 0x3c00u : 0x1000u; /* 1.0, then 2^-11 */
    memset(recv, 0, sizeof recv);
    EXPECT_OK(bind(h, send, sizeof send, recv, sizeof recv));
    /* scratch[0..8) fp32 <- send[0..2) */
    EXPECT_OK(run_task(h, 0, reduce_task(NCL_TASK_LOCAL_WIDEN, 0, NCL_BUF_SEND, 0, NCL_BUF_SCRATCH, 0, 4,
                                         NCL_FLOAT16, NCL_SUM)));
    /* add send[1] three times to element 0's accumulator, then round it once */
    for (int i = 0; i < 3; i++)
        EXPECT_OK(run_task(h, 0, reduce_task(NCL_TASK_LOCAL_REDUCE_WIDE, 0, NCL_BUF_SEND, 2, NCL_BUF_SCRATCH, 0, 2,
                                             NCL_FLOAT16, NCL_SUM)));
    EXPECT_OK(run_task(h, 0, reduce_task(NCL_TASK_LOCAL_NARROW, 0, NCL_BUF_SCRATCH, 0, NCL_BUF_RECV, 0, 4,
                                         NCL_FLOAT16, NCL_SUM)));
    EXPECT(recv[0] == 0x3c02u && recv[1] == 0x1000u);
    /* with the divisor (avg): (1 + 3 x 2^-11) / 4 in fp32, rounded once */
    ncl_task nar = reduce_task(NCL_TASK_LOCAL_NARROW, 0, NCL_BUF_SCRATCH, 0, NCL_BUF_RECV, 8, 2, NCL_FLOAT16, NCL_SUM);
    nar.count = 4;
    EXPECT_OK(run_task(h, 1, nar));
    EXPECT(recv[4] == 0x3402u); /* 0.25 + 3 x 2^-13 = 0.250366..., nearest fp16 0.25 + 2^-11 */
    /* the fp32 side is twice the bytes: 4 MiB of scratch holds 1 Mi fp32, not 2 Mi */
    ncl_task big = reduce_task(NCL_TASK_LOCAL_WIDEN, 0, NCL_BUF_SEND, 0, NCL_BUF_SCRATCH, (4u << 20) - 4, 4,
                               NCL_FLOAT16, NCL_SUM);
    EXPECT(ncl_hal_dma_submit(h, 2, &big) != NCL_SUCCESS);
    ncl_task bad = reduce_task(NCL_TASK_LOCAL_WIDEN, 0, NCL_BUF_SEND, 0, NCL_BUF_SCRATCH, 0, 4, NCL_FLOAT32,
                               NCL_SUM);
    EXPECT(ncl_hal_dma_submit(h, 3, &bad) != NCL_SUCCESS);
    EXPECT_OK(ncl_hal_end(h, NCL_SUCCESS));
    return NCL_SUCCESS;
}

static void test_wide_ops(void **state)
{
    (void)state;
    assert_int_equal(ncl_host_run(1, wide_fn, NULL), NCL_SUCCESS);
}

/* ---- notify counters ------------------------------------------------------------------- */

static ncl_result count_fn(ncl_comm *comm, void *arg)
{
    (void)arg;
    const ncl_hal *h = hal_of(comm);
    int done = -1;
    if (rank_of(comm) == 0) {
        EXPECT_OK(ncl_hal_notify_record(h, 0, 1, 3));
        EXPECT_OK(ncl_hal_notify_record(h, 1, 1, 3));
        /* stay until rank 1 has looked: a short wait on a rank that returned is an error */
        EXPECT_OK(wait_notify(h, 1, ID_GO, 1, 10 * SEC));
    } else {
        EXPECT_OK(wait_notify(h, 0, 3, 2, 10 * SEC));
        /* both records were consumed by the one wait */
        EXPECT_OK(ncl_hal_notify_try_wait(h, 0, 3, 1, &done));
        EXPECT(done == 0);
        EXPECT_OK(ncl_hal_notify_record(h, 0, 0, ID_GO));
    }
    /* count 0 is always satisfied */
    EXPECT_OK(ncl_hal_notify_try_wait(h, 1 - rank_of(comm), 9, 0, &done));
    EXPECT(done == 1);
    /* a record to self orders queues of one rank */
    EXPECT_OK(ncl_hal_notify_record(h, 2, rank_of(comm), 4));
    EXPECT_OK(ncl_hal_notify_try_wait(h, rank_of(comm), 4, 1, &done));
    EXPECT(done == 1);
    return NCL_SUCCESS;
}

static void test_notify_counts(void **state)
{
    (void)state;
    assert_int_equal(ncl_host_run(2, count_fn, NULL), NCL_SUCCESS);
}

static ncl_result alias_fn(ncl_comm *comm, void *arg)
{
    (void)arg;
    const ncl_hal *h = hal_of(comm);
    int done = -1;
    switch (rank_of(comm)) {
    case 0:
        EXPECT_OK(wait_notify(h, 2, 5, 1, 10 * SEC));
        EXPECT_OK(ncl_hal_notify_try_wait(h, 1, 5, 1, &done)); /* rank 1 has not recorded */
        EXPECT(done == 0);
        EXPECT_OK(ncl_hal_notify_record(h, 0, 1, ID_GO));
        EXPECT_OK(wait_notify(h, 1, 5, 1, 10 * SEC));
        EXPECT_OK(ncl_hal_notify_try_wait(h, 2, 5, 1, &done)); /* rank 2's one was consumed */
        EXPECT(done == 0);
        EXPECT_OK(ncl_hal_notify_record(h, 0, 2, ID_GO));
        break;
    case 1:
        EXPECT_OK(wait_notify(h, 0, ID_GO, 1, 10 * SEC));
        EXPECT_OK(ncl_hal_notify_record(h, 0, 0, 5));
        break;
    default:
        EXPECT_OK(ncl_hal_notify_record(h, 0, 0, 5));
        EXPECT_OK(wait_notify(h, 0, ID_GO, 1, 10 * SEC)); /* stay until rank 0 has looked */
        break;
    }
    return NCL_SUCCESS;
}

static void test_senders_do_not_alias(void **state)
{
    (void)state;
    assert_int_equal(ncl_host_run(3, alias_fn, NULL), NCL_SUCCESS);
}

static ncl_result short_fn(ncl_comm *comm, void *arg)
{
    (void)arg;
    const ncl_hal *h = hal_of(comm);
    int done = -1;
    if (rank_of(comm) == 0) {
        EXPECT_OK(ncl_hal_notify_record(h, 0, 1, 7));
        EXPECT_OK(ncl_hal_notify_record(h, 0, 1, 8)); /* arrives after the one on id 7 */
        return wait_notify(h, 1, ID_GO, 1, 10 * SEC); /* stay until rank 1 has looked */
    }
    EXPECT_OK(wait_notify(h, 0, 8, 1, 10 * SEC));
    EXPECT_OK(ncl_hal_notify_try_wait(h, 0, 7, 2, &done));
    EXPECT(done == 0);
    EXPECT_OK(ncl_hal_notify_try_wait(h, 0, 7, 2, &done));
    EXPECT(done == 0);
    EXPECT_OK(ncl_hal_notify_try_wait(h, 0, 7, 1, &done)); /* the short tries took nothing */
    EXPECT(done == 1);
    EXPECT_OK(ncl_hal_notify_try_wait(h, 0, 7, 1, &done));
    EXPECT(done == 0);
    EXPECT_OK(ncl_hal_notify_record(h, 0, 0, ID_GO));
    return NCL_SUCCESS;
}

static void test_try_wait_short_keeps_counter(void **state)
{
    (void)state;
    assert_int_equal(ncl_host_run(2, short_fn, NULL), NCL_SUCCESS);
}

/* Many ids and senders into one rank: the counter table grows without losing counts. */
static ncl_result many_fn(ncl_comm *comm, void *arg)
{
    (void)arg;
    const ncl_hal *h = hal_of(comm);
    int me = rank_of(comm), n = size_of(comm);
    if (me != 0) {
        for (uint32_t id = 0; id < NCL_NOTIFY_IDS; id++)
            for (uint32_t k = 0; k <= id % 3; k++)
                EXPECT_OK(ncl_hal_notify_record(h, 0, 0, id));
        return wait_notify(h, 0, 0, 1, 10 * SEC); /* rank 0's "done": stay until it looked */
    }
    for (int p = 1; p < n; p++)
        for (uint32_t id = 0; id < NCL_NOTIFY_IDS; id++) {
            EXPECT_OK(wait_notify(h, p, id, id % 3 + 1, 10 * SEC));
            int done = -1;
            EXPECT_OK(ncl_hal_notify_try_wait(h, p, id, 1, &done));
            EXPECT(done == 0);
        }
    for (int p = 1; p < n; p++)
        EXPECT_OK(ncl_hal_notify_record(h, 0, p, 0));
    return NCL_SUCCESS;
}

static void test_many_counters(void **state)
{
    (void)state;
    assert_int_equal(ncl_host_run(9, many_fn, NULL), NCL_SUCCESS);
}

/* ---- wait_event ------------------------------------------------------------------------ */

static ncl_result timeout_fn(ncl_comm *comm, void *arg)
{
    (void)arg;
    const ncl_hal *h = hal_of(comm);
    uint64_t t0 = ncl_hal_now_ns(h);
    EXPECT_OK(ncl_hal_wait_event(h, 0)); /* returns at once */
    EXPECT_OK(ncl_hal_wait_event(h, SEC / 10));
    uint64_t waited = ncl_hal_now_ns(h) - t0;
    EXPECT(waited >= SEC / 10 - SEC / 1000);
    EXPECT(waited < 5 * SEC);
    return NCL_SUCCESS;
}

static void test_wait_event_times_out(void **state)
{
    (void)state;
    assert_int_equal(ncl_host_run(1, timeout_fn, NULL), NCL_SUCCESS);
}

static ncl_result wake_fn(ncl_comm *comm, void *arg)
{
    (void)arg;
    const ncl_hal *h = hal_of(comm);
    if (rank_of(comm) == 0) {
        sleep_ms(50);
        EXPECT_OK(ncl_hal_notify_record(h, 0, 1, ID_GO));
        return NCL_SUCCESS;
    }
    /* A 60 s wait that must end because of the record, not the timeout. */
    uint64_t t0 = ncl_hal_now_ns(h);
    int done = 0;
    for (int i = 0; i < 100 && !done; i++) {
        EXPECT_OK(ncl_hal_notify_try_wait(h, 0, ID_GO, 1, &done));
        if (!done)
            EXPECT_OK(ncl_hal_wait_event(h, 60 * SEC));
    }
    EXPECT(done);
    EXPECT(ncl_hal_now_ns(h) - t0 < 30 * SEC);
    /* a record to self wakes too */
    EXPECT_OK(ncl_hal_notify_record(h, 0, 1, ID_GO));
    EXPECT_OK(ncl_hal_wait_event(h, 60 * SEC));
    EXPECT_OK(ncl_hal_notify_try_wait(h, 1, ID_GO, 1, &done));
    EXPECT(done);
    return NCL_SUCCESS;
}

static void test_wait_event_wakes_on_record(void **state)
{
    (void)state;
    assert_int_equal(ncl_host_run(2, wake_fn, NULL), NCL_SUCCESS);
}

/* ---- bad regions ----------------------------------------------------------------------- */

static ncl_result oob_fn(ncl_comm *comm, void *arg)
{
    (void)arg;
    const ncl_hal *h = hal_of(comm);
    unsigned char send[128], recv[128];
    memset(send, 0x11, sizeof send);
    memset(recv, 0xcc, sizeof recv);
    if (rank_of(comm) == 1) {
        EXPECT_OK(bind(h, send, sizeof send, recv, 64)); /* only 64 bytes of recv are exposed */
        EXPECT_OK(ncl_hal_notify_record(h, 0, 0, ID_READY));
        EXPECT_OK(wait_notify(h, 0, ID_DATA, 1, 10 * SEC));
        EXPECT_OK(ncl_hal_end(h, NCL_SUCCESS));
        for (int i = 0; i < 128; i++)
            EXPECT(recv[i] == (i < 64 ? 0x11 : 0xcc));
        EXPECT_OK(ncl_hal_notify_record(h, 0, 0, ID_GO)); /* "I have unbound" */
        return NCL_SUCCESS;
    }
    const ncl_result B = NCL_ERR_BACKEND;
    EXPECT_OK(bind(h, send, sizeof send, recv, sizeof recv));
    EXPECT_OK(wait_notify(h, 1, ID_READY, 1, 10 * SEC));
    /* into the peer: past the end, straddling it, offset overflow, unknown buffer, SEND */
    EXPECT_RC(B, run_task(h, 0, data_task(NCL_TASK_WRITE, 1, NCL_BUF_SEND, 0, NCL_BUF_RECV, 0, 65)));
    EXPECT_RC(B, run_task(h, 0, data_task(NCL_TASK_WRITE, 1, NCL_BUF_SEND, 0, NCL_BUF_RECV, 63, 2)));
    EXPECT_RC(B, run_task(h, 0, data_task(NCL_TASK_WRITE, 1, NCL_BUF_SEND, 0, NCL_BUF_RECV, UINT64_MAX, 2)));
    EXPECT_RC(B, run_task(h, 0, data_task(NCL_TASK_WRITE, 1, NCL_BUF_SEND, 0, 7, 0, 2)));
    EXPECT_RC(B, run_task(h, 0, data_task(NCL_TASK_WRITE, 1, NCL_BUF_SEND, 0, NCL_BUF_SEND, 0, 2)));
    EXPECT_RC(B, run_task(h, 0, reduce_task(NCL_TASK_WRITE_REDUCE, 1, NCL_BUF_SEND, 0, NCL_BUF_RECV, 0, 128,
                                            NCL_FLOAT32, NCL_SUM)));
    /* a failed submit is also reported by the next poll of its queue */
    ncl_task bad = data_task(NCL_TASK_WRITE, 1, NCL_BUF_SEND, 0, NCL_BUF_RECV, 0, 65);
    int done = 0;
    EXPECT_RC(B, ncl_hal_dma_submit(h, 5, &bad));
    EXPECT_RC(B, ncl_hal_dma_poll(h, 5, &done));
    EXPECT_OK(ncl_hal_dma_poll(h, 5, &done));
    EXPECT(done == 1);
    /* local source out of range, bad peers, bad queue, not a data task */
    EXPECT_RC(B, run_task(h, 0, data_task(NCL_TASK_WRITE, 1, NCL_BUF_SEND, 100, NCL_BUF_RECV, 0, 64)));
    EXPECT_RC(B, run_task(h, 0, data_task(NCL_TASK_WRITE, 2, NCL_BUF_SEND, 0, NCL_BUF_RECV, 0, 4)));
    EXPECT_RC(B, run_task(h, 0, data_task(NCL_TASK_WRITE, -1, NCL_BUF_SEND, 0, NCL_BUF_RECV, 0, 4)));
    EXPECT_RC(B, run_task(h, NCL_MAX_QUEUES, data_task(NCL_TASK_LOCAL_COPY, 0, NCL_BUF_SEND, 0, NCL_BUF_RECV, 0, 4)));
    EXPECT_RC(B, run_task(h, 0, data_task(NCL_TASK_NOTIFY_RECORD, 1, NCL_BUF_SEND, 0, NCL_BUF_RECV, 0, 4)));
    /* local: writing SEND, partial overlap in a reduce, ragged element count, bad dtype, /0 */
    EXPECT_RC(B, run_task(h, 0, data_task(NCL_TASK_LOCAL_COPY, 0, NCL_BUF_RECV, 0, NCL_BUF_SEND, 0, 4)));
    EXPECT_RC(B, run_task(h, 0, reduce_task(NCL_TASK_LOCAL_REDUCE, 0, NCL_BUF_RECV, 0, NCL_BUF_RECV, 4, 16,
                                            NCL_INT32, NCL_SUM)));
    EXPECT_RC(B, run_task(h, 0, reduce_task(NCL_TASK_LOCAL_REDUCE, 0, NCL_BUF_SEND, 0, NCL_BUF_RECV, 0, 6,
                                            NCL_INT32, NCL_SUM)));
    EXPECT_RC(B, run_task(h, 0, reduce_task(NCL_TASK_LOCAL_REDUCE, 0, NCL_BUF_SEND, 0, NCL_BUF_RECV, 0, 8,
                                            NCL_DTYPE_COUNT, NCL_SUM)));
    ncl_task div = reduce_task(NCL_TASK_LOCAL_DIV, 0, NCL_BUF_RECV, 0, NCL_BUF_RECV, 0, 8, NCL_INT32, NCL_SUM);
    EXPECT_RC(B, run_task(h, 0, div));
    /* bad notify arguments */
    EXPECT_RC(B, ncl_hal_notify_record(h, 0, 2, 0));
    EXPECT_RC(B, ncl_hal_notify_record(h, 0, 1, NCL_NOTIFY_IDS));
    EXPECT_RC(B, ncl_hal_notify_try_wait(h, -1, 0, 1, &done));
    /* nothing of that touched memory: the one good write lands */
    EXPECT_OK(run_task(h, 0, data_task(NCL_TASK_WRITE, 1, NCL_BUF_SEND, 0, NCL_BUF_RECV, 0, 64)));
    EXPECT_OK(ncl_hal_notify_record(h, 0, 1, ID_DATA));
    /* after the peer ended, its buffers are gone */
    EXPECT_OK(wait_notify(h, 1, ID_GO, 1, 10 * SEC));
    EXPECT_RC(B, run_task(h, 0, data_task(NCL_TASK_WRITE, 1, NCL_BUF_SEND, 0, NCL_BUF_RECV, 0, 4)));
    EXPECT_OK(ncl_hal_end(h, NCL_SUCCESS));
    /* ... and so are ours; a zero-byte task stays a no-op */
    EXPECT_RC(B, run_task(h, 0, data_task(NCL_TASK_LOCAL_COPY, 0, NCL_BUF_SEND, 0, NCL_BUF_RECV, 0, 4)));
    EXPECT_OK(run_task(h, 0, data_task(NCL_TASK_LOCAL_COPY, 0, NCL_BUF_SEND, 0, NCL_BUF_RECV, 0, 0)));
    /* a NULL buffer with a size */
    EXPECT_OK(bind(h, NULL, 64, recv, sizeof recv));
    EXPECT_RC(B, run_task(h, 0, data_task(NCL_TASK_LOCAL_COPY, 0, NCL_BUF_SEND, 0, NCL_BUF_RECV, 0, 4)));
    EXPECT_OK(ncl_hal_end(h, NCL_SUCCESS));
    return NCL_SUCCESS;
}

static void test_bad_regions_fail_cleanly(void **state)
{
    (void)state;
    assert_int_equal(run_quiet(2, oob_fn, NULL, 4096), NCL_SUCCESS);
}

/* ---- barrier, results, limits ----------------------------------------------------------- */

typedef struct barrier_arg {
    atomic_int arrived;
} barrier_arg;

static ncl_result barrier_fn(ncl_comm *comm, void *arg)
{
    barrier_arg *b = arg;
    int n = size_of(comm);
    for (int round = 1; round <= 20; round++) {
        atomic_fetch_add(&b->arrived, 1);
        EXPECT_OK(ncl_host_barrier(comm));
        EXPECT(atomic_load(&b->arrived) == round * n);
        EXPECT_OK(ncl_host_barrier(comm)); /* nobody starts the next round before all checked */
    }
    return NCL_SUCCESS;
}

static void test_barrier_8_ranks(void **state)
{
    (void)state;
    barrier_arg b;
    atomic_init(&b.arrived, 0);
    assert_int_equal(ncl_host_run(8, barrier_fn, &b), NCL_SUCCESS);
    assert_int_equal(atomic_load(&b.arrived), 8 * 20);
}

static ncl_result results_fn(ncl_comm *comm, void *arg)
{
    (void)arg;
    switch (rank_of(comm)) {
    case 3: return NCL_ERR_TIMEOUT;
    case 5: return NCL_ERR_LINK;
    default: return NCL_SUCCESS;
    }
}

static void test_run_results(void **state)
{
    (void)state;
    ncl_result res[6];
    memset(res, 0xff, sizeof res);
    assert_int_equal(run_n(6, results_fn, NULL, 0, res), NCL_ERR_TIMEOUT);
    for (int i = 0; i < 6; i++)
        assert_int_equal(res[i], i == 3 ? NCL_ERR_TIMEOUT : i == 5 ? NCL_ERR_LINK : NCL_SUCCESS);
    assert_int_equal(ncl_host_run(6, results_fn, NULL), NCL_ERR_TIMEOUT);
}

static ncl_result ok_fn(ncl_comm *comm, void *arg)
{
    (void)comm;
    (void)arg;
    return NCL_SUCCESS;
}

static ncl_result mock_caps(void *ctx, ncl_hal_caps *out)
{
    (void)ctx;
    out->scratch_bytes = 0;
    out->max_queues = 1;
    out->buf_align = 1;
    for (int d = 0; d < NCL_DTYPE_COUNT; d++)
        out->inline_ops[d] = NCL_INLINE_ALL_OPS;
    return NCL_SUCCESS;
}

static void *count_alloc(void *ud, size_t bytes)
{
    if (ud)
        atomic_fetch_add((atomic_int *)ud, 1);
    return malloc(bytes);
}

static void count_free(void *ud, void *p)
{
    (void)ud;
    free(p);
}

static void test_invalid_arguments(void **state)
{
    (void)state;
    assert_int_equal(ncl_host_run(0, ok_fn, NULL), NCL_ERR_INVALID_ARGUMENT);
    assert_int_equal(ncl_host_run(-3, ok_fn, NULL), NCL_ERR_INVALID_ARGUMENT);
    assert_int_equal(ncl_host_run(4097, ok_fn, NULL), NCL_ERR_INVALID_ARGUMENT);
    assert_int_equal(ncl_host_run(2, NULL, NULL), NCL_ERR_INVALID_ARGUMENT);
    assert_int_equal(ncl_host_run_cfg(NULL, ok_fn, NULL, NULL), NCL_ERR_INVALID_ARGUMENT);
    ncl_host_config cfg = NCL_HOST_CONFIG_INIT;
    cfg.version = 99;
    assert_int_equal(ncl_host_run_cfg(&cfg, ok_fn, NULL, NULL), NCL_ERR_INVALID_ARGUMENT);

    /* the barrier refuses communicators of other backends */
    assert_int_equal(ncl_host_barrier(NULL), NCL_ERR_INVALID_ARGUMENT);
    static const ncl_hal_ops mock_ops = {.caps = mock_caps};
    ncl_hal mock = {&mock_ops, NULL};
    ncl_config cc = NCL_CONFIG_INIT;
    cc.alloc = count_alloc;
    cc.free = count_free;
    ncl_comm *comm = NULL;
    assert_int_equal(ncl_comm_create(&comm, 1, 0, &mock, &cc), NCL_SUCCESS);
    assert_int_equal(ncl_host_barrier(comm), NCL_ERR_INVALID_ARGUMENT);
    ncl_comm_destroy(comm);
}

static void test_custom_allocator(void **state)
{
    (void)state;
    atomic_int calls;
    atomic_init(&calls, 0);
    ncl_host_config cfg = NCL_HOST_CONFIG_INIT;
    cfg.nranks = 4;
    cfg.comm.alloc = count_alloc;
    cfg.comm.free = count_free;
    cfg.comm.alloc_ud = &calls;
    assert_int_equal(ncl_host_run_cfg(&cfg, ok_fn, NULL, NULL), NCL_SUCCESS);
    assert_true(atomic_load(&calls) >= 4);
}

/* A bad communicator option fails every rank's ncl_comm_create, not the process. */
static void test_bad_comm_config(void **state)
{
    (void)state;
    ncl_host_config cfg = NCL_HOST_CONFIG_INIT;
    cfg.nranks = 3;
    cfg.comm.channels = 0;
    ncl_result res[3];
    setenv("NCL_HOST_LOG", "off", 1);
    assert_int_equal(ncl_host_run_cfg(&cfg, ok_fn, NULL, res), NCL_ERR_INVALID_ARGUMENT);
    unsetenv("NCL_HOST_LOG");
    for (int i = 0; i < 3; i++)
        assert_int_equal(res[i], NCL_ERR_INVALID_ARGUMENT);
}

/* A ring of records through all ranks, then a barrier. */
static ncl_result ring_fn(ncl_comm *comm, void *arg)
{
    atomic_int *count = arg;
    const ncl_hal *h = hal_of(comm);
    int me = rank_of(comm), n = size_of(comm);
    for (uint32_t round = 0; round < 4; round++) {
        EXPECT_OK(ncl_hal_notify_record(h, round % NCL_MAX_QUEUES, (me + 1) % n, ID_DATA));
        EXPECT_OK(wait_notify(h, (me + n - 1) % n, ID_DATA, 1, 30 * SEC));
    }
    EXPECT_OK(ncl_host_barrier(comm));
    atomic_fetch_add(count, 1);
    return NCL_SUCCESS;
}

static void test_64_ranks(void **state)
{
    (void)state;
    atomic_int count;
    atomic_init(&count, 0);
    assert_int_equal(ncl_host_run(64, ring_fn, &count), NCL_SUCCESS);
    assert_int_equal(atomic_load(&count), 64);
}

/* A rank that returns early makes its peers' waits and barriers fail instead of hang. */
static ncl_result early_exit_fn(ncl_comm *comm, void *arg)
{
    (void)arg;
    const ncl_hal *h = hal_of(comm);
    if (rank_of(comm) == 0)
        return NCL_SUCCESS;
    uint64_t t0 = ncl_hal_now_ns(h);
    EXPECT_RC(NCL_ERR_REMOTE, wait_notify(h, 0, ID_DATA, 1, 60 * SEC));
    EXPECT(ncl_hal_now_ns(h) - t0 < 30 * SEC);
    EXPECT_RC(NCL_ERR_REMOTE, ncl_host_barrier(comm));
    return NCL_SUCCESS;
}

static void test_peer_exit_breaks_waits(void **state)
{
    (void)state;
    assert_int_equal(run_quiet(3, early_exit_fn, NULL, 0), NCL_SUCCESS);
}

/* Ranks that disagree on a call: rank 1 passes another count, dtype, op, root or placement, and
 * calls first or last. No rank may succeed (with count 5 against 9 rank 1 used to), and they name
 * the mismatch with both ranks, at once rather than at the timeout. The one exception is a rank
 * that needs nothing from the others and finishes before the odd one calls: the broadcast root,
 * writing into landing zones (ncl_host.h says so). */
typedef struct odd_call {
    int what; /* 0 count, 1 dtype, 2 op, 3 root, 4 placement */
    int odd_last;
    ncl_result rc[4];
    char err[4][320];
} odd_call;

static ncl_result odd_call_fn(ncl_comm *comm, void *arg)
{
    odd_call *o = arg;
    const int me = rank_of(comm), odd = me == 1;
    int32_t send[16] = {0}, recv[16] = {0};
    if (odd == o->odd_last)
        sleep_ms(20);
    ncl_result rc;
    switch (o->what) {
    case 0: rc = ncl_allreduce(send, recv, odd ? 5 : 9, NCL_INT32, NCL_SUM, comm); break;
    case 1: rc = ncl_allreduce(send, recv, 8, odd ? NCL_FLOAT32 : NCL_INT32, NCL_SUM, comm); break;
    case 2: rc = ncl_allreduce(send, recv, 8, NCL_INT32, odd ? NCL_MAX : NCL_SUM, comm); break;
    case 3: rc = ncl_broadcast(recv, recv, 8, NCL_INT32, odd ? 2 : 0, comm); break;
    default: rc = ncl_allreduce(odd ? recv : send, recv, 8, NCL_INT32, NCL_SUM, comm); break;
    }
    o->rc[me] = rc;
    snprintf(o->err[me], sizeof o->err[me], "%s", ncl_comm_last_error(comm));
    return NCL_SUCCESS;
}

static void test_mismatched_calls(void **state)
{
    (void)state;
    static const char *const named[][2] = {{"with count 5", "with count 9"}, {"with dtype ", "float"},
                                           {"with op ", "max"}, {"with root 2", "with root 0"},
                                           {"in place", "out of place"}};
    for (int k = 0; k < 10; k++) {
        const int what = k / 2;
        odd_call o = {.what = what, .odd_last = k % 2};
        ncl_host_config cfg = NCL_HOST_CONFIG_INIT;
        cfg.nranks = 3;
        cfg.comm.timeout_ns = 20 * SEC; /* named at once: a timeout here would fail the test's budget */
        setenv("NCL_HOST_LOG", "off", 1);
        assert_int_equal(ncl_host_run_cfg(&cfg, odd_call_fn, &o, NULL), NCL_SUCCESS);
        unsetenv("NCL_HOST_LOG");
        int naming = 0;
        for (int r = 0; r < 3; r++) {
            if (o.rc[r] == NCL_SUCCESS && !(what == 3 && o.odd_last && r == 0))
                fail_msg("case %d (rank 1 %s): rank %d succeeded on a mismatched call", what,
                         o.odd_last ? "last" : "first", r);
            naming += strstr(o.err[r], "mismatch: rank ") != NULL;
        }
        assert_true(naming >= 2);
        int matched = 0; /* the words of the mismatch this case made */
        for (int r = 0; r < 3; r++)
            matched += strstr(o.err[r], named[what][0]) && strstr(o.err[r], named[what][1]);
        if (!matched)
            fail_msg("case %d: %s / %s / %s", what, o.err[0], o.err[1], o.err[2]);
    }
}

/* The same misuse gives every rank the same result and the same kind of message every time,
 * whichever rank happens to see the mismatch first. */
static void test_same_misuse_same_code(void **state)
{
    (void)state;
    for (int odd_last = 0; odd_last < 2; odd_last++) {
        ncl_result first[3];
        for (int run = 0; run < 8; run++) {
            odd_call o = {.what = 0, .odd_last = odd_last};
            ncl_host_config cfg = NCL_HOST_CONFIG_INIT;
            cfg.nranks = 3;
            cfg.comm.log_level = NCL_LOG_OFF;
            assert_int_equal(ncl_host_run_cfg(&cfg, odd_call_fn, &o, NULL), NCL_SUCCESS);
            for (int r = 0; r < 3; r++) {
                if (run == 0)
                    first[r] = o.rc[r];
                else if (o.rc[r] != first[r])
                    fail_msg("rank 1 %s, run %d: rank %d returned %s, run 0 %s", odd_last ? "last" : "first",
                             run, r, ncl_strerror(o.rc[r]), ncl_strerror(first[r]));
                assert_non_null(strstr(o.err[r], "mismatch: rank "));
            }
        }
    }
}

/* Diagnostics go where the program says: a callback gets every error line with its rank, and
 * nothing reaches stderr; NCL_LOG_OFF silences the default sink too. */
typedef struct log_sink {
    atomic_int lines, mismatches, bad_rank;
} log_sink;

static void collect_log(void *ud, int rank, int level, const char *msg)
{
    log_sink *k = ud;
    atomic_fetch_add(&k->lines, 1);
    if (level == NCL_LOG_ERROR && strstr(msg, "mismatch"))
        atomic_fetch_add(&k->mismatches, 1);
    if (rank < -1 || rank > 2)
        atomic_fetch_add(&k->bad_rank, 1);
}

/* Runs a count mismatch on 3 ranks with stderr sent to a file; returns the bytes written there. */
static long stderr_bytes_of_mismatch(ncl_log_fn log, void *ud, int level)
{
    fflush(stderr);
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    int saved = dup(2);
    assert_true(saved >= 0 && dup2(fileno(tmp), 2) >= 0);
    odd_call o = {.what = 0, .odd_last = 1};
    ncl_host_config cfg = NCL_HOST_CONFIG_INIT;
    cfg.nranks = 3;
    cfg.comm.log = log;
    cfg.comm.log_ud = ud;
    cfg.comm.log_level = level;
    ncl_result rc = ncl_host_run_cfg(&cfg, odd_call_fn, &o, NULL);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    fseek(tmp, 0, SEEK_END); /* written through fd 2: the stream's own position never moved */
    long bytes = ftell(tmp);
    fclose(tmp);
    assert_int_equal(rc, NCL_SUCCESS);
    for (int r = 0; r < 3; r++)
        assert_int_not_equal(o.rc[r], NCL_SUCCESS);
    return bytes;
}

static void test_log_sink(void **state)
{
    (void)state;
    unsetenv("NCL_HOST_LOG");
    log_sink k = {0};
    assert_int_equal(stderr_bytes_of_mismatch(collect_log, &k, NCL_LOG_WARN), 0);
    assert_true(atomic_load(&k.mismatches) >= 2);
    assert_int_equal(atomic_load(&k.bad_rank), 0);
    log_sink off = {0};
    assert_int_equal(stderr_bytes_of_mismatch(collect_log, &off, NCL_LOG_OFF), 0);
    assert_int_equal(atomic_load(&off.lines), 0);
    assert_int_equal(stderr_bytes_of_mismatch(NULL, NULL, NCL_LOG_OFF), 0);
    assert_true(stderr_bytes_of_mismatch(NULL, NULL, NCL_LOG_WARN) > 0); /* the default: stderr */
}

/* End to end: the engine's allreduce over this backend. */
static ncl_result allreduce_fn(ncl_comm *comm, void *arg)
{
    (void)arg;
    int me = rank_of(comm), n = size_of(comm);
    enum { N = 10000 };
    int32_t *send = malloc(N * sizeof *send), *recv = malloc(N * sizeof *recv);
    EXPECT(send && recv);
    for (int i = 0; i < N; i++)
        send[i] = i * (me + 1);
    ncl_result rc = ncl_allreduce(send, recv, N, NCL_INT32, NCL_SUM, comm);
    int wrong = 0;
    for (int i = 0; i < N && rc == NCL_SUCCESS; i++)
        wrong += recv[i] != i * n * (n + 1) / 2;
    free(send);
    free(recv);
    EXPECT_OK(rc);
    EXPECT(wrong == 0);
    EXPECT_OK(ncl_host_barrier(comm));
    return NCL_SUCCESS;
}

static void test_engine_allreduce(void **state)
{
    (void)state;
    assert_int_equal(ncl_host_run(3, allreduce_fn, NULL), NCL_SUCCESS);
}

/* Landing zones back to back: ring allgathers whose first units land in the peer's zone (all but
 * the last step, some, none: the zone holds 8 KiB, slices are 2 KiB), in and out of place, and
 * chain broadcasts from moving roots, between allreduces that do not use the zones, with one rank arriving late so that its zone is
 * written before it enters the collective; from the third use each zone's writer waits for its
 * credit. Every result checked; the schedules are proven before they run. */
static ncl_result zones_fn(ncl_comm *comm, void *arg)
{
    (void)arg;
    const int me = rank_of(comm), n = size_of(comm);
    const size_t counts[] = {200, 3000, 40000}; /* per rank: zoned all but the last group, a step, a few rounds */
    int32_t *buf = malloc(40000 * sizeof(int32_t) * (size_t)n), *mine = malloc(40000 * sizeof(int32_t));
    EXPECT(buf && mine);
    int wrong = 0;
    for (int it = 0; it < 12 && !wrong; it++) {
        const size_t count = counts[it % 3];
        const int inplace = it % 2;
        if (me == it % n)
            sleep_ms(5);
        for (size_t i = 0; i < count; i++)
            mine[i] = (int32_t)(i * 7 + (size_t)me * 1000003 + (size_t)it);
        if (inplace)
            memcpy(buf + (size_t)me * count, mine, count * sizeof *mine);
        EXPECT_OK(ncl_allgather(inplace ? buf + (size_t)me * count : mine, buf, count, NCL_INT32, comm));
        for (int r = 0; r < n; r++)
            for (size_t i = 0; i < count; i++)
                wrong += buf[(size_t)r * count + i] != (int32_t)(i * 7 + (size_t)r * 1000003 + (size_t)it);
        const int root = (it * 2) % n; /* a chain broadcast from a moving root uses them too */
        for (size_t i = 0; i < count; i++)
            buf[i] = me == root ? (int32_t)(i * 3 + (size_t)it) : -1;
        EXPECT_OK(ncl_broadcast(buf, buf, count, NCL_INT32, root, comm));
        for (size_t i = 0; i < count; i++)
            wrong += buf[i] != (int32_t)(i * 3 + (size_t)it);
        if (it % 3 == 2) { /* a collective that leaves the zones alone */
            EXPECT_OK(ncl_allreduce(mine, buf, 1000, NCL_INT32, NCL_MAX, comm));
        }
    }
    free(buf);
    free(mine);
    EXPECT(wrong == 0);
    return NCL_SUCCESS;
}

static void test_landing_zones(void **state)
{
    (void)state;
    ncl_host_config cfg = NCL_HOST_CONFIG_INIT;
    cfg.nranks = 5;
    cfg.comm.slice_bytes = 2048;
    cfg.comm.landing_zone_bytes = 8192;
    cfg.comm.check_schedules = 1;
    cfg.comm.in_flight = NCL_MAX_IN_FLIGHT;
    cfg.comm.algorithm[NCL_COLL_ALLGATHER] = NCL_ALGO_RING;
    cfg.comm.algorithm[NCL_COLL_BROADCAST] = NCL_ALGO_CHAIN;
    assert_int_equal(ncl_host_run_cfg(&cfg, zones_fn, NULL, NULL), NCL_SUCCESS);
    cfg.comm.in_flight = 1; /* round by round */
    assert_int_equal(ncl_host_run_cfg(&cfg, zones_fn, NULL, NULL), NCL_SUCCESS);
    /* zones that would take more than half the scratch are refused at creation */
    cfg.comm.landing_zone_bytes = cfg.scratch_bytes / 4;
    setenv("NCL_HOST_LOG", "off", 1);
    assert_int_equal(ncl_host_run_cfg(&cfg, zones_fn, NULL, NULL), NCL_ERR_INVALID_ARGUMENT);
    unsetenv("NCL_HOST_LOG");
}

/* Ring weights replaced between collectives (a link degraded mid-run): every rank sets the same
 * weights, the next ring allreduce, reduce-scatter and allgather split the buffer by them (the
 * schedules are proven again, not taken from the proof cache), and the results stay right; NULL
 * goes back to equal shares. A 0 weight is refused and leaves the weights as they were. */
static ncl_result weights_fn(ncl_comm *comm, void *arg)
{
    (void)arg;
    const int me = rank_of(comm), n = size_of(comm);
    const uint32_t slow[] = {1000, 7000}, zero[] = {5, 0};
    const size_t count = 6000;
    int32_t *in = malloc(count * (size_t)n * sizeof(int32_t)), *out = malloc(count * (size_t)n * sizeof(int32_t));
    EXPECT(in && out);
    int wrong = 0;
    for (int it = 0; it < 3; it++) {
        const uint32_t *w = it == 0 ? NULL : it == 1 ? slow : NULL;
        if (it > 0)
            EXPECT_OK(ncl_comm_set_ring_weights(comm, w));
        EXPECT(ncl_comm_set_ring_weights(comm, zero) == NCL_ERR_INVALID_ARGUMENT);
        for (size_t i = 0; i < count * (size_t)n; i++)
            in[i] = (int32_t)(i * 5 + (size_t)me * 11 + (size_t)it);
        EXPECT_OK(ncl_allreduce(in, out, count, NCL_INT32, NCL_SUM, comm));
        for (size_t i = 0; i < count; i++)
            wrong += out[i] != (int32_t)((int64_t)n * (int64_t)(i * 5 + (size_t)it) + 11 * (int64_t)n * (n - 1) / 2);
        EXPECT_OK(ncl_reduce_scatter(in, out, count, NCL_INT32, NCL_SUM, comm));
        for (size_t i = 0; i < count; i++) {
            size_t g = (size_t)me * count + i;
            wrong += out[i] != (int32_t)((int64_t)n * (int64_t)(g * 5 + (size_t)it) + 11 * (int64_t)n * (n - 1) / 2);
        }
        EXPECT_OK(ncl_allgather(in, out, count, NCL_INT32, comm));
        for (int r = 0; r < n; r++)
            for (size_t i = 0; i < count; i++)
                wrong += out[(size_t)r * count + i] != (int32_t)(i * 5 + (size_t)r * 11 + (size_t)it);
    }
    free(in);
    free(out);
    EXPECT(wrong == 0);
    return NCL_SUCCESS;
}

static void test_ring_weights_between_collectives(void **state)
{
    (void)state;
    static const int32_t rings[] = {0, 1, 2, 3, 0, 3, 2, 1};
    ncl_host_config cfg = NCL_HOST_CONFIG_INIT;
    cfg.nranks = 4;
    cfg.comm.channels = 2;
    cfg.comm.rings = rings;
    cfg.comm.ring_count = 2;
    cfg.comm.slice_bytes = 4096;
    cfg.comm.check_schedules = 1;
    for (int c = 0; c < NCL_COLL_COUNT; c++)
        if (ncl_algo_supported((ncl_coll)c, NCL_ALGO_RING))
            cfg.comm.algorithm[c] = NCL_ALGO_RING;
    setenv("NCL_HOST_LOG", "off", 1); /* the refused 0 weight logs its error */
    assert_int_equal(ncl_host_run_cfg(&cfg, weights_fn, NULL, NULL), NCL_SUCCESS);
    unsetenv("NCL_HOST_LOG");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_caps_and_scratch),
        cmocka_unit_test(test_ring_weights_between_collectives),
        cmocka_unit_test(test_write_lands_after_handshake),
        cmocka_unit_test(test_write_reduce),
        cmocka_unit_test(test_local_ops),
        cmocka_unit_test(test_deferred_copies),
        cmocka_unit_test(test_wide_ops),
        cmocka_unit_test(test_notify_counts),
        cmocka_unit_test(test_senders_do_not_alias),
        cmocka_unit_test(test_try_wait_short_keeps_counter),
        cmocka_unit_test(test_many_counters),
        cmocka_unit_test(test_wait_event_times_out),
        cmocka_unit_test(test_wait_event_wakes_on_record),
        cmocka_unit_test(test_bad_regions_fail_cleanly),
        cmocka_unit_test(test_barrier_8_ranks),
        cmocka_unit_test(test_run_results),
        cmocka_unit_test(test_invalid_arguments),
        cmocka_unit_test(test_custom_allocator),
        cmocka_unit_test(test_bad_comm_config),
        cmocka_unit_test(test_64_ranks),
        cmocka_unit_test(test_peer_exit_breaks_waits),
        cmocka_unit_test(test_engine_allreduce),
        cmocka_unit_test(test_mismatched_calls),
        cmocka_unit_test(test_same_misuse_same_code),
        cmocka_unit_test(test_log_sink),
        cmocka_unit_test(test_landing_zones),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
