/* test_exec.c — the executor's data tasks in flight: independent tasks overlap up to the queue's
 * depth, a task waits for the ones whose regions it touches, a record for all of them, and a
 * posted record lets the queue go on and is sent once they have landed; a notify wait times out
 * only when its records stop coming. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <ncl/ncl.h>
#include <ncl/ncl_hal.h>
#include <ncl/ncl_user.h>

static void *alloc_cb(void *ud, size_t n) { (void)ud; return malloc(n); }
static void free_cb(void *ud, void *p) { (void)ud; free(p); }

/* A one-rank backend whose data tasks complete only when the test says so. */
typedef struct slow_dma {
    uint32_t depth;        /* caps.queue_depth */
    ncl_task submitted[16];
    int submits, completed, polled, records, most_outstanding;
    int posted;           /* the schedule posts its records: later tasks may be outstanding */
    int landed_at_record; /* completed tasks when the last record was sent */
    uint64_t now;         /* ns */
    int arrived;          /* with `trickle`: the records a wait sees, as the test lets them in */
    int trickle;
} slow_dma;

static ncl_result sd_caps(void *ctx, ncl_hal_caps *out)
{
    out->scratch_bytes = 1 << 16;
    out->max_queues = 1;
    out->buf_align = 1;
    out->queue_depth = ((slow_dma *)ctx)->depth;
    for (int d = 0; d < NCL_DTYPE_COUNT; d++)
        out->inline_ops[d] = NCL_INLINE_ALL_OPS;
    return NCL_SUCCESS;
}

static ncl_result sd_begin(void *ctx, const ncl_hal_launch *l)
{
    (void)ctx, (void)l;
    return NCL_SUCCESS;
}

static ncl_result sd_end(void *ctx, ncl_result r)
{
    (void)ctx, (void)r;
    return NCL_SUCCESS;
}

static ncl_result sd_submit(void *ctx, uint32_t q, const ncl_task *t)
{
    slow_dma *s = ctx;
    (void)q;
    assert_true(s->submits < 16);
    s->submitted[s->submits++] = *t;
    int outstanding = s->submits - s->polled;
    if (outstanding > s->most_outstanding)
        s->most_outstanding = outstanding;
    return NCL_SUCCESS;
}

static ncl_result sd_poll(void *ctx, uint32_t q, int *done)
{
    slow_dma *s = ctx;
    (void)q;
    *done = s->completed - s->polled;
    s->polled = s->completed;
    return NCL_SUCCESS;
}

static ncl_result sd_record(void *ctx, uint32_t q, int peer, uint32_t id)
{
    slow_dma *s = ctx;
    (void)q, (void)peer, (void)id;
    if (!s->posted)
        assert_int_equal(s->submits, s->completed); /* everything before it has landed */
    s->landed_at_record = s->completed;
    s->records++;
    return NCL_SUCCESS;
}

static ncl_result sd_try_wait(void *ctx, int peer, uint32_t id, uint32_t count, int *done)
{
    slow_dma *s = ctx;
    (void)peer, (void)id;
    int have = s->trickle ? s->arrived : s->records;
    *done = have >= (int)count;
    if (*done)
        s->records -= (int)count, s->arrived -= s->trickle ? (int)count : 0;
    return NCL_SUCCESS;
}

static ncl_result sd_peek(void *ctx, int peer, uint32_t id, uint32_t *value)
{
    slow_dma *s = ctx;
    (void)peer, (void)id;
    *value = (uint32_t)(s->trickle ? s->arrived : s->records);
    return NCL_SUCCESS;
}

static uint64_t sd_now(void *ctx)
{
    return ((slow_dma *)ctx)->now;
}

static const ncl_hal_ops sd_ops = {.caps = sd_caps, .begin = sd_begin, .end = sd_end, .dma_submit = sd_submit,
                                   .dma_poll = sd_poll, .notify_record = sd_record,
                                   .notify_try_wait = sd_try_wait, .now_ns = sd_now};
static const ncl_hal_ops sd_ops_peek = {.caps = sd_caps, .begin = sd_begin, .end = sd_end, .dma_submit = sd_submit,
                                        .dma_poll = sd_poll, .notify_record = sd_record,
                                        .notify_try_wait = sd_try_wait, .now_ns = sd_now,
                                        .notify_peek = sd_peek};

/* One rank's allreduce as data: copy chunks 0 and 1 into place, copy chunk 0 on from there (it
 * reads what the first copy writes), record and wait on itself, then copy chunks 2 and 3. */
static const ncl_user_step k_steps[] = {
    {0, 0, NCL_TASK_LOCAL_COPY, NCL_BUF_SEND, NCL_BUF_RECV, 0, 0, 0, 1, 0, 0, 0},
    {0, 0, NCL_TASK_LOCAL_COPY, NCL_BUF_SEND, NCL_BUF_RECV, 0, 1, 1, 1, 0, 0, 0},
    {0, 0, NCL_TASK_LOCAL_COPY, NCL_BUF_RECV, NCL_BUF_SCRATCH, 0, 0, 0, 1, 0, 0, 0},
    {0, 0, NCL_TASK_NOTIFY_RECORD, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {0, 0, NCL_TASK_NOTIFY_WAIT, 0, 0, 0, 0, 0, 0, 0, 1, 0},
    {0, 0, NCL_TASK_LOCAL_COPY, NCL_BUF_SEND, NCL_BUF_RECV, 0, 2, 2, 1, 0, 0, 0},
    {0, 0, NCL_TASK_LOCAL_COPY, NCL_BUF_SEND, NCL_BUF_RECV, 0, 3, 3, 1, 0, 0, 0},
};
static const ncl_user_schedule k_schedule = {"in-flight", NCL_COLL_ALLREDUCE, 1, 4, 1, k_steps,
                                             sizeof k_steps / sizeof k_steps[0]};

/* The same with a posted record between two independent copies: copy chunk 0, post, copy chunk 1,
 * then wait for the record. */
static const ncl_user_step k_posted_steps[] = {
    {0, 0, NCL_TASK_LOCAL_COPY, NCL_BUF_SEND, NCL_BUF_RECV, 0, 0, 0, 1, 0, 0, 0},
    {0, 0, NCL_TASK_NOTIFY_RECORD, 0, 0, 0, 0, 0, 0, 0, 0, NCL_TASK_POSTED},
    {0, 0, NCL_TASK_LOCAL_COPY, NCL_BUF_SEND, NCL_BUF_RECV, 0, 1, 1, 1, 0, 0, 0},
    {0, 0, NCL_TASK_NOTIFY_WAIT, 0, 0, 0, 0, 0, 0, 0, 1, 0},
    {0, 0, NCL_TASK_LOCAL_COPY, NCL_BUF_SEND, NCL_BUF_RECV, 0, 2, 2, 2, 0, 0, 0},
};
static const ncl_user_schedule k_posted = {"posted", NCL_COLL_ALLREDUCE, 1, 4, 1, k_posted_steps,
                                           sizeof k_posted_steps / sizeof k_posted_steps[0]};

/* A stream of three records that one wait consumes at once (x3): copy, record three times, wait. */
static const ncl_user_step k_stream_steps[] = {
    {0, 0, NCL_TASK_LOCAL_COPY, NCL_BUF_SEND, NCL_BUF_RECV, 0, 0, 0, 4, 0, 0, 0},
    {0, 0, NCL_TASK_NOTIFY_RECORD, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {0, 0, NCL_TASK_NOTIFY_RECORD, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {0, 0, NCL_TASK_NOTIFY_RECORD, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {0, 0, NCL_TASK_NOTIFY_WAIT, 0, 0, 0, 0, 0, 0, 0, 3, 0},
};
static const ncl_user_schedule k_stream = {"stream", NCL_COLL_ALLREDUCE, 1, 4, 1, k_stream_steps,
                                           sizeof k_stream_steps / sizeof k_stream_steps[0]};

static ncl_comm *make_on(slow_dma *s, uint32_t in_flight, const ncl_user_schedule *schedule,
                         const ncl_hal_ops *ops, uint64_t timeout_ns)
{
    static ncl_hal hal;
    hal.ops = ops;
    hal.ctx = s;
    ncl_config cfg = NCL_CONFIG_INIT;
    cfg.alloc = alloc_cb;
    cfg.free = free_cb;
    cfg.schedule = schedule;
    cfg.algorithm[NCL_COLL_ALLREDUCE] = NCL_ALGO_USER;
    cfg.check_schedules = 1;
    cfg.in_flight = in_flight;
    if (timeout_ns)
        cfg.timeout_ns = timeout_ns;
    ncl_comm *comm = NULL;
    assert_int_equal(ncl_comm_create(&comm, 1, 0, &hal, &cfg), NCL_SUCCESS);
    return comm;
}

static ncl_comm *make_with(slow_dma *s, uint32_t in_flight, const ncl_user_schedule *schedule)
{
    return make_on(s, in_flight, schedule, &sd_ops, 0);
}

static ncl_comm *make(slow_dma *s, uint32_t in_flight)
{
    return make_with(s, in_flight, &k_schedule);
}

static int progress(ncl_comm *comm)
{
    int done = 0;
    assert_int_equal(ncl_test(comm, &done), NCL_SUCCESS);
    return done;
}

/* The protocol switch is per collective: an allreduce of at most its latency_path_bytes marks every
 * data task NCL_TASK_LATENCY_PATH, a larger one none, and another collective's threshold is not its. */
static void test_latency_path_per_collective(void **state)
{
    (void)state;
    static const struct {
        ncl_coll coll;   /* whose threshold is set, to 256 B */
        uint64_t count;  /* floats allreduced */
        int marked;
    } cases[] = {{NCL_COLL_ALLREDUCE, 64, 1}, {NCL_COLL_ALLREDUCE, 128, 0}, {NCL_COLL_BROADCAST, 64, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        slow_dma s = {.depth = 4};
        static ncl_hal hal;
        hal.ops = &sd_ops, hal.ctx = &s;
        ncl_config cfg = NCL_CONFIG_INIT;
        cfg.alloc = alloc_cb, cfg.free = free_cb;
        cfg.schedule = &k_schedule;
        cfg.algorithm[NCL_COLL_ALLREDUCE] = NCL_ALGO_USER;
        cfg.latency_path_bytes[cases[i].coll] = 256;
        ncl_comm *comm = NULL;
        assert_int_equal(ncl_comm_create(&comm, 1, 0, &hal, &cfg), NCL_SUCCESS);
        float in[128], out[128];
        assert_int_equal(ncl_allreduce_start(in, out, cases[i].count, NCL_FLOAT32, NCL_SUM, comm), NCL_SUCCESS);
        while (!progress(comm))
            s.completed = s.submits;
        assert_int_equal(s.submits, 5);
        for (int t = 0; t < s.submits; t++)
            assert_int_equal(!!(s.submitted[t].flags & NCL_TASK_LATENCY_PATH), cases[i].marked);
        ncl_comm_destroy(comm);
    }
}

static void test_overlap_and_order(void **state)
{
    (void)state;
    slow_dma s = {.depth = 4};
    ncl_comm *comm = make(&s, 0);
    float in[64], out[64];
    assert_int_equal(ncl_allreduce_start(in, out, 64, NCL_FLOAT32, NCL_SUM, comm), NCL_SUCCESS);
    assert_false(progress(comm));
    assert_int_equal(s.submits, 2); /* the third reads what the first writes */
    assert_int_equal(s.submitted[1].src.off, 16 * sizeof(float));
    s.completed = 1;
    assert_false(progress(comm));
    assert_int_equal(s.submits, 3);
    assert_int_equal(s.submitted[2].src.buf, NCL_BUF_RECV);
    s.completed = 2;
    assert_false(progress(comm));
    assert_int_equal(s.submits, 3); /* the record waits for the last one in flight */
    s.completed = 3;
    assert_false(progress(comm));
    assert_int_equal(s.submits, 5); /* recorded, waited, and both last copies at once */
    s.completed = 5;
    assert_true(progress(comm));
    assert_int_equal(s.most_outstanding, 2);
    ncl_comm_destroy(comm);
}

/* in_flight 1 (or a backend of depth 1): one data task at a time, as before queues had depth. */
static void test_one_at_a_time(void **state)
{
    (void)state;
    for (int way = 0; way < 2; way++) {
        slow_dma s = {.depth = way == 0 ? 4u : 0u};
        ncl_comm *comm = make(&s, way == 0 ? 1u : 0u);
        float in[64], out[64];
        assert_int_equal(ncl_allreduce_start(in, out, 64, NCL_FLOAT32, NCL_SUM, comm), NCL_SUCCESS);
        while (!progress(comm))
            s.completed = s.submits;
        assert_int_equal(s.submits, 5);
        assert_int_equal(s.most_outstanding, 1);
        ncl_comm_destroy(comm);
    }
}

/* A posted record: the next copy goes while the one before the record still moves; the record is
 * sent once that one has landed (not the later one), and the wait behind it holds the last copy. */
static void test_posted_record(void **state)
{
    (void)state;
    slow_dma s = {.depth = 4, .posted = 1};
    ncl_comm *comm = make_with(&s, 0, &k_posted);
    float in[64], out[64];
    assert_int_equal(ncl_allreduce_start(in, out, 64, NCL_FLOAT32, NCL_SUM, comm), NCL_SUCCESS);
    assert_false(progress(comm));
    assert_int_equal(s.submits, 2); /* both copies, the record behind the first */
    assert_int_equal(s.records, 0);
    s.completed = 1;
    assert_false(progress(comm));
    assert_int_equal(s.landed_at_record, 1); /* sent when the first landed, the second still moving */
    assert_int_equal(s.submits, 3);          /* the wait saw it: the last copy went */
    s.completed = 3;
    assert_true(progress(comm));
    assert_int_equal(s.most_outstanding, 2);
    ncl_comm_destroy(comm);
}

/* The user schedule's flags: posted only on a record. */
static void test_posted_only_on_records(void **state)
{
    (void)state;
    ncl_user_step steps[sizeof k_posted_steps / sizeof k_posted_steps[0]];
    memcpy(steps, k_posted_steps, sizeof steps);
    steps[0].flags = NCL_TASK_POSTED;
    ncl_user_schedule bad = k_posted;
    bad.steps = steps;
    ncl_user_where where;
    char msg[256];
    assert_int_equal(ncl_user_validate(&bad, &where, msg, sizeof msg), NCL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(msg, "allowed: NCL_TASK_POSTED on a record"));
}

/* One wait for three records that arrive 150 ns apart, with a 100 ns timeout: healthy, because
 * each deadline finds the counter moved (a 40 GiB stream of 5120 segments under one wait timed
 * out at 30 s while every record came). When they stop, the error counts what did come; a
 * backend that cannot peek keeps the timeout from the wait's start. */
static void test_wait_times_out_without_progress(void **state)
{
    (void)state;
    for (int stall = 0; stall < 3; stall++) {
        slow_dma s = {.depth = 4, .trickle = 1};
        ncl_comm *comm = make_on(&s, 0, &k_stream, stall == 2 ? &sd_ops : &sd_ops_peek, 100);
        float in[64], out[64];
        assert_int_equal(ncl_allreduce_start(in, out, 64, NCL_FLOAT32, NCL_SUM, comm), NCL_SUCCESS);
        int done = 0;
        assert_int_equal(ncl_test(comm, &done), NCL_SUCCESS); /* the copy */
        s.completed = 1;
        assert_int_equal(ncl_test(comm, &done), NCL_SUCCESS); /* records, then the wait starts */
        assert_false(done);
        assert_int_equal(s.records, 3);
        ncl_result rc = NCL_SUCCESS;
        for (int k = 1; k <= 3 && rc == NCL_SUCCESS && !done; k++) {
            s.now += 150;
            s.arrived = stall == 1 && k > 1 ? 1 : k;
            rc = ncl_test(comm, &done);
        }
        if (stall == 0) {
            assert_int_equal(rc, NCL_SUCCESS);
            assert_true(done);
        } else {
            assert_int_equal(rc, NCL_ERR_TIMEOUT);
            const char *why = stall == 1 ? "waited 0 ms for notify 0 (x3) from rank 0, which recorded 1 of them, then none"
                                         : "from rank 0, which did not record them all";
            if (!strstr(ncl_comm_last_error(comm), why))
                fail_msg("%s", ncl_comm_last_error(comm));
        }
        ncl_comm_destroy(comm);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overlap_and_order),
        cmocka_unit_test(test_latency_path_per_collective),
        cmocka_unit_test(test_one_at_a_time),
        cmocka_unit_test(test_posted_record),
        cmocka_unit_test(test_posted_only_on_records),
        cmocka_unit_test(test_wait_times_out_without_progress),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
