/* test_zmq_shm.c — the zmq backend's shared-memory rings between forked ranks: bit-exact collectives through them (and with them off) over many ring wraps, a peer killed mid-ring, corruption in a ring. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>

#include <cmocka.h>

#include "ncl/ncl_dtype.h"
#include "zt_world.h"

/* Rings of 64 KiB (records of at most 8 KiB): a 1 MiB allreduce wraps each ring 16 times. The
 * ranks are forked after these are set, so they inherit them. */
static void shm_env(const char *on, const char *bytes)
{
    setenv("NCL_ZMQ_SHM", on, 1);
    if (bytes)
        setenv("NCL_ZMQ_SHM_BYTES", bytes, 1);
    else
        unsetenv("NCL_ZMQ_SHM_BYTES");
}

static const ncl_coll colls[] = {NCL_COLL_ALLREDUCE, NCL_COLL_BROADCAST, NCL_COLL_REDUCE_SCATTER,
                                 NCL_COLL_ALLGATHER};
static const mx_type types[] = {{NCL_INT32, NCL_SUM}, {NCL_FLOAT32, NCL_SUM}, {NCL_FLOAT16, NCL_MAX}};
#define NCOUNTS 3
/* 1 element; 40961 (160 KiB of fp32: a few wraps, odd tail); 262147 (1 MiB: 16 wraps) */
static const uint64_t counts[NCOUNTS] = {1, 40961, 262147};

static size_t world_counts(const mx_axes *a, int nranks, ncl_dtype dt, uint64_t out[MX_MAX_COUNTS])
{
    (void)nranks;
    (void)dt;
    memcpy(out, a->ctx, NCOUNTS * sizeof *out);
    return NCOUNTS;
}

/* Every case is checked element by element against the matrix's reference (integers exactly,
 * floats as the matrix requires of every backend). */
static void run_matrix(int nranks, int tcp)
{
    zt_world cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.nranks = nranks;
    cfg.tcp = tcp;
    zt_mx_world z;
    zt_mx_init(&z, &cfg);
    mx_matrix m;
    mx_init(&m);
    m.print_groups = 1;
    for (size_t c = 0; c < sizeof colls / sizeof colls[0]; c++) {
        const mx_axes a = {colls[c], NCL_ALGO_AUTO, world_counts, types, sizeof types / sizeof types[0],
                           MX_ROOTS_LAST, MX_BOTH_PLACES, NULL, counts, 0};
        mx_add_axes(&m, &a, nranks);
    }
    size_t n = m.n;
    uint64_t failed = mx_run(&m, &z.world);
    mx_free(&m);
    if (failed)
        fail_msg("%s", m.first);
    assert_int_equal(n, 4 * 3 * NCOUNTS * 2);
    assert_int_equal(m.run, n);
}

/* 0 when every link of this rank uses shared memory both ways as `want` says, else 1 (r->msg). */
static int links_are(zt_rank *r, int want)
{
    for (int p = 0; p < r->nranks; p++) {
        ncl_zmq_link st;
        if (p == r->rank || ncl_zmq_link_stats(r->zmq, p, &st) != 0)
            continue;
        if (st.shm_tx != want || st.shm_rx != want) {
            snprintf(r->msg, sizeof r->msg, "link with rank %d: shm_tx %d shm_rx %d, want %d", p, st.shm_tx,
                     st.shm_rx, want);
            return 1;
        }
    }
    return 0;
}

static int shm_on_rank(zt_rank *r)
{
    return links_are(r, 1) ? 1 : 0;
}

static int shm_off_rank(zt_rank *r)
{
    return links_are(r, 0) ? 1 : 0;
}

static void expect_links(int tcp, const char *on, int want)
{
    shm_env(on, "65536");
    zt_world w;
    memset(&w, 0, sizeof w);
    w.nranks = 3;
    w.tcp = tcp;
    zt_result res[ZT_MAX_RANKS];
    zt_run(&w, want ? shm_on_rank : shm_off_rank, NULL, res);
    for (int i = 0; i < 3; i++)
        if (!res[i].exited || res[i].status != 0)
            fail_msg("rank %d (%s, NCL_ZMQ_SHM=%s): exit %d: %s", i, tcp ? "tcp" : "ipc", on, res[i].status,
                     res[i].msg);
}

/* Same-host peers map each other's rings over ipc and over tcp; with the knob off nobody does. */
static void test_shm_links(void **state)
{
    (void)state;
    expect_links(0, "on", 1);
    expect_links(1, "on", 1);
    expect_links(0, "off", 0);
    expect_links(1, "off", 0);
}

static void test_shm_matrix_ipc_3(void **state)
{
    (void)state;
    shm_env("on", "65536");
    run_matrix(3, 0);
}

static void test_shm_matrix_tcp_2(void **state)
{
    (void)state;
    shm_env("on", "65536");
    run_matrix(2, 1);
}

static void test_shm_off_matrix_ipc_3(void **state)
{
    (void)state;
    shm_env("off", NULL);
    run_matrix(3, 0);
}

/* Allreduces of 1 MiB (ring wraps in each) until something fails; 0 only if all passed. */
static int loop_rank(zt_rank *r)
{
    const char *on = getenv("NCL_ZMQ_SHM"); /* the path under test is the one taken */
    if (links_are(r, !(on && !strcmp(on, "off"))))
        return 1;
    for (int i = 0; i < 100; i++) {
        const mx_case c = {NCL_COLL_ALLREDUCE, NCL_ALGO_AUTO, 262147, NCL_FLOAT32, NCL_SUM, 0, 0, 0};
        ncl_result rc;
        uint64_t wrong;
        char what[MX_DETAIL];
        if (zt_case(r, &c, &rc, &wrong, what, sizeof what)) {
            snprintf(r->msg, sizeof r->msg, "allreduce #%d: %s%s%s", i + 1, rc != NCL_SUCCESS ? ncl_strerror(rc) : "",
                     rc != NCL_SUCCESS ? " | " : "", what);
            return rc != NCL_SUCCESS ? 3 : 1;
        }
    }
    snprintf(r->msg, sizeof r->msg, "100 allreduces");
    return 0;
}

/* A rank killed while its peers read its ring and write theirs to it: every survivor fails
 * naming it, well before the engine's timeout would (no hang on a ring nobody drains). NCL_ZMQ_SHM
 * is `on` (rings) or `off` (ZeroMQ frames). */
static void dead_case(const char *on)
{
    shm_env(on, "65536");
    zt_world w;
    memset(&w, 0, sizeof w);
    w.nranks = 3;
    w.timeout_ns = 20000000000ull;
    w.die_nth[1] = 300; /* in the second or third allreduce: ~130 records per rank and allreduce */
    zt_result res[ZT_MAX_RANKS];
    double s = zt_run(&w, loop_rank, NULL, res);
    print_message("rank 1 killed; the others returned in %.2f s\n", s);
    assert_false(res[1].exited);
    assert_int_equal(res[1].signal, SIGKILL);
    for (int i = 0; i < 3; i++) {
        if (i == 1)
            continue;
        print_message("rank %d: exit %d: %s\n", i, res[i].status, res[i].msg);
        if (res[i].status != 3 || !strstr(res[i].msg, "rank 1") || !strstr(res[i].msg, "remote error"))
            fail_msg("rank %d: exit %d: %s", i, res[i].status, res[i].msg);
    }
    assert_true(s < 15.0); /* the engine timeout is 20 s: the death was seen, not waited out */
}

static void test_shm_dead_peer(void **state)
{
    (void)state;
    dead_case("on");
}

/* The same over ZeroMQ, where payload frames of 32 KiB and more leave without a copy: the
 * survivors still fail naming the dead rank, with frames for it left in ZeroMQ. */
static void test_shm_off_dead_peer(void **state)
{
    (void)state;
    dead_case("off");
}

/* A bit flipped in a ring record: the reader rejects it by its checksum and names the writer. */
static void corrupt_case(const char *on)
{
    shm_env(on, "65536");
    zt_world w;
    memset(&w, 0, sizeof w);
    w.nranks = 3;
    w.timeout_ns = 5000000000ull;
    w.corrupt_nth[0] = 50;
    zt_result res[ZT_MAX_RANKS];
    zt_run(&w, loop_rank, NULL, res);
    int named = 0;
    for (int i = 1; i < 3; i++) {
        print_message("NCL_ZMQ_SHM=%s rank %d: exit %d: %s\n", on, i, res[i].status, res[i].msg);
        if (res[i].status == 3 && strstr(res[i].msg, "link error") && strstr(res[i].msg, "link from rank 0") &&
            strstr(res[i].msg, "checksum"))
            named++;
    }
    assert_int_equal(named, 1);
    for (int i = 0; i < 3; i++)
        assert_int_not_equal(res[i].status, 0);
}

static void test_shm_corrupt(void **state)
{
    (void)state;
    corrupt_case("on");
}

/* The same over ZeroMQ frames, so the socket path keeps its own check. */
static void test_shm_off_corrupt(void **state)
{
    (void)state;
    corrupt_case("off");
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shm_links),         cmocka_unit_test(test_shm_matrix_ipc_3),
        cmocka_unit_test(test_shm_matrix_tcp_2),  cmocka_unit_test(test_shm_off_matrix_ipc_3),
        cmocka_unit_test(test_shm_dead_peer),     cmocka_unit_test(test_shm_corrupt),
        cmocka_unit_test(test_shm_off_corrupt),   cmocka_unit_test(test_shm_off_dead_peer),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
