/* test_diag.c — hang forensics: the wait-for report's root cause on hand-made states and on real hangs of the host backend. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ncl/ncl_diag.h"
#include "ncl/ncl_host.h"

static char g_text[8192];

static void set_call(ncl_rank_state *s, int rank, uint64_t seq, ncl_coll coll, ncl_rank_phase phase, ncl_result rc)
{
    memset(s, 0, sizeof *s);
    s->rank = rank;
    s->seq = seq;
    s->coll = (uint8_t)coll;
    s->algo = NCL_ALGO_RING;
    s->phase = (uint8_t)phase;
    s->result = rc;
}

static void add_wait(ncl_rank_state *s, int peer, uint32_t step, uint32_t notify)
{
    ncl_wait_info *w = &s->waits[s->nwaits++];
    w->kind = NCL_TASK_NOTIFY_WAIT;
    w->peer = peer;
    w->step = step;
    w->notify = notify;
    w->count = 1;
    w->waited_ns = 2000000000ull;
}

static const char *report(const ncl_rank_state *st, int n)
{
    size_t len = ncl_diag_report(st, n, g_text, sizeof g_text);
    assert_int_equal(len, strlen(g_text));
    print_message("%s", g_text);
    return g_text;
}

static void expect(const char *text, const char *needle)
{
    if (!strstr(text, needle))
        fail_msg("report lacks \"%s\":\n%s", needle, text);
}

/* A chain 0 -> 1 -> 2 ending at a rank still at the previous collective. */
static void test_never_started(void **unused)
{
    (void)unused;
    ncl_rank_state st[4];
    for (int r = 0; r < 4; r++)
        set_call(&st[r], r, 42, NCL_COLL_ALLREDUCE, NCL_PHASE_FAILED, NCL_ERR_TIMEOUT);
    add_wait(&st[0], 1, 3, 0);
    add_wait(&st[1], 1, 4, 5); /* a wait on itself is skipped */
    add_wait(&st[1], 2, 9, 3);
    set_call(&st[2], 2, 41, NCL_COLL_ALLREDUCE, NCL_PHASE_DONE, NCL_SUCCESS);
    add_wait(&st[3], 2, 1, 1);
    const char *t = report(st, 4);
    expect(t, "hang: rank 1 waits for rank 2 (allreduce #42, queue 0 step 9 task 0, notify 3 x1, 2000 ms); "
              "rank 2 never started allreduce #42 (its last collective is allreduce #41)\n");
    expect(t, "wait chain: rank 0 -> 1 -> 2\n");
    expect(t, "  rank 2: allreduce #41 (ring) done\n");
    expect(t, "  rank 1: allreduce #42 (ring) failed (timeout): queue 0 step 4 waits for notify 5 x1 from rank 1; "
              "queue 0 step 9 waits for notify 3 x1 from rank 2\n");
    set_call(&st[2], 2, 0, NCL_COLL_ALLREDUCE, NCL_PHASE_IDLE, NCL_SUCCESS);
    expect(report(st, 4), "rank 2 never started allreduce #42 (it has not launched any collective)");
}

static void test_causes(void **unused)
{
    (void)unused;
    ncl_rank_state st[2];
    set_call(&st[0], 0, 7, NCL_COLL_ALLREDUCE, NCL_PHASE_RUNNING, NCL_SUCCESS);
    add_wait(&st[0], 1, 2, 4);
    set_call(&st[1], 1, 7, NCL_COLL_BROADCAST, NCL_PHASE_RUNNING, NCL_SUCCESS);
    add_wait(&st[1], 0, 0, 1);
    expect(report(st, 2), "mismatch: rank 1 runs broadcast #7 while rank 0 runs allreduce #7 - the ranks called "
                          "different collectives");

    set_call(&st[1], 1, 7, NCL_COLL_ALLREDUCE, NCL_PHASE_DONE, NCL_SUCCESS);
    expect(report(st, 2), "rank 1 finished allreduce #7, but its notify 4 never reached rank 0 (lost on the link "
                          "from rank 1");
    set_call(&st[1], 1, 8, NCL_COLL_ALLREDUCE, NCL_PHASE_RUNNING, NCL_SUCCESS);
    expect(report(st, 2), "rank 1 has moved on to allreduce #8: it finished #7");
    set_call(&st[1], 1, 7, NCL_COLL_ALLREDUCE, NCL_PHASE_FAILED, NCL_ERR_LINK);
    expect(report(st, 2), "rank 1 failed allreduce #7 first (link error) and stopped answering");
    set_call(&st[1], 1, 7, NCL_COLL_ALLREDUCE, NCL_PHASE_RUNNING, NCL_SUCCESS);
    expect(report(st, 2), "rank 1 is in allreduce #7 but blocked on nobody");
    set_call(&st[0], 0, 7, NCL_COLL_ALLREDUCE, NCL_PHASE_DONE, NCL_SUCCESS);
    expect(report(st, 2), "hang: no rank waits for another rank\n");
}

/* 0 -> 1 -> 2 -> 1: the walk enters a cycle that does not contain its start. */
static void test_cycle(void **unused)
{
    (void)unused;
    ncl_rank_state st[3];
    for (int r = 0; r < 3; r++)
        set_call(&st[r], r, 3, NCL_COLL_REDUCE_SCATTER, NCL_PHASE_FAILED, NCL_ERR_TIMEOUT);
    add_wait(&st[0], 1, 0, 0);
    add_wait(&st[1], 2, 0, 0);
    add_wait(&st[2], 1, 0, 0);
    const char *t = report(st, 3);
    expect(t, "hang: the waits form a cycle");
    assert_true(strstr(t, "rank 1 -> 2 -> 1\n") || strstr(t, "rank 2 -> 1 -> 2\n"));
}

/* A transfer that never completes ends the walk: the link between the two ranks is the suspect. */
static void test_stuck_transfer(void **unused)
{
    (void)unused;
    ncl_rank_state st[3];
    for (int r = 0; r < 3; r++)
        set_call(&st[r], r, 5, NCL_COLL_ALLREDUCE, NCL_PHASE_FAILED, NCL_ERR_TIMEOUT);
    add_wait(&st[0], 1, 2, 0);
    add_wait(&st[1], 1, 0, 9);
    ncl_wait_info *w = &st[1].waits[st[1].nwaits++];
    w->kind = NCL_TASK_WRITE;
    w->peer = 2;
    w->step = 3;
    add_wait(&st[2], 1, 3, 1);
    const char *t = report(st, 3);
    expect(t, "hang: rank 1's WRITE towards rank 2 does not complete (allreduce #5, queue 0 step 3 task 0, 0 ms); "
              "the transfer is stuck on the way from rank 1 to rank 2");
    expect(t, "wait chain: rank 0 -> 1 -> 2\n");
    expect(t, "queue 0 step 3 WRITE to rank 2 in flight");
}

/* A short buffer keeps the root cause, NUL-terminated. */
static void test_truncation(void **unused)
{
    (void)unused;
    ncl_rank_state st[2];
    set_call(&st[0], 0, 1, NCL_COLL_ALLGATHER, NCL_PHASE_RUNNING, NCL_SUCCESS);
    add_wait(&st[0], 1, 0, 0);
    set_call(&st[1], 1, 0, NCL_COLL_ALLREDUCE, NCL_PHASE_IDLE, NCL_SUCCESS);
    char small[40];
    memset(small, 'x', sizeof small);
    size_t len = ncl_diag_report(st, 2, small, sizeof small);
    assert_true(len < sizeof small);
    assert_int_equal(small[len], '\0');
    assert_memory_equal(small, "hang: rank 0 waits for rank 1", 29);
    assert_int_equal(ncl_diag_report(st, 2, NULL, 0), 0);
}

/* Real hangs on the host backend: the runner joins every rank's state into the report. */
typedef struct hang_case {
    int skipper;    /* this rank skips the second collective */
    int mismatcher; /* this rank calls broadcast instead */
} hang_case;

static ncl_result hang_fn(ncl_comm *comm, void *arg)
{
    const hang_case *h = arg;
    int rank;
    ncl_comm_rank(comm, &rank);
    int32_t buf[64];
    for (int i = 0; i < 64; i++)
        buf[i] = rank + i;
    ncl_result rc = ncl_allreduce(buf, buf, 64, NCL_INT32, NCL_SUM, comm);
    if (rc != NCL_SUCCESS || rank == h->skipper)
        return rc;
    if (rank == h->mismatcher)
        return ncl_broadcast(buf, buf, 64, NCL_INT32, 1, comm);
    return ncl_allreduce(buf, buf, 64, NCL_INT32, NCL_SUM, comm);
}

static ncl_result run_hang(int nranks, hang_case h, char *text, size_t cap)
{
    ncl_host_config cfg = NCL_HOST_CONFIG_INIT;
    cfg.nranks = nranks;
    cfg.comm.timeout_ns = 300000000ull;
    cfg.comm.algorithm[NCL_COLL_ALLREDUCE] = NCL_ALGO_RING;
    cfg.comm.algorithm[NCL_COLL_BROADCAST] = NCL_ALGO_CHAIN;
    cfg.hang_report = text;
    cfg.hang_report_size = cap;
    text[0] = '\0';
    ncl_result rc = ncl_host_run_cfg(&cfg, hang_fn, &h, NULL);
    print_message("%s", text);
    return rc;
}

static void test_host_skipped_rank(void **unused)
{
    (void)unused;
    ncl_result rc = run_hang(4, (hang_case){2, -1}, g_text, sizeof g_text);
    assert_int_not_equal(rc, NCL_SUCCESS);
    expect(g_text, "; rank 2 never started allreduce #2 (its last collective is allreduce #1)\n");
    expect(g_text, "  rank 2: allreduce #1 (ring) done\n");
}

static void test_host_mismatch(void **unused)
{
    (void)unused;
    ncl_result rc = run_hang(2, (hang_case){-1, 1}, g_text, sizeof g_text);
    assert_int_not_equal(rc, NCL_SUCCESS);
    expect(g_text, "mismatch: rank 1 runs broadcast #2 while rank 0 runs allreduce #2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_never_started), cmocka_unit_test(test_causes),
        cmocka_unit_test(test_cycle),         cmocka_unit_test(test_stuck_transfer),
        cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_host_skipped_rank), cmocka_unit_test(test_host_mismatch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
