/* test_agent.c — `ringsim agent` as a controller sees it: every command, bad requests answered with ERROR, clean exit. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "ncl/ncl_wire.h"

#ifndef RINGSIM_BIN
#define RINGSIM_BIN "ringsim"
#endif

static pid_t pids[2];
static void *ctx, *req[2];
static uint64_t seq;

typedef struct reply {
    uint8_t command;
    uint32_t code;
    char text[8192];
} reply;

/* Sends raw bytes on rank r's REQ and decodes the answer (5 s at most). */
static void exchange_raw(int r, const void *bytes, size_t len, reply *out)
{
    assert_int_equal(zmq_send(req[r], bytes, len, 0), (int)len);
    zmq_pollitem_t it = {req[r], 0, ZMQ_POLLIN, 0};
    if (zmq_poll(&it, 1, 20000) != 1)
        fail_msg("agent rank %d did not answer", r);
    zmq_msg_t f;
    zmq_msg_init(&f);
    assert_true(zmq_msg_recv(&f, req[r], 0) >= 0);
    ncl_wire_msg m;
    ncl_wire_limits lim = {64u << 20, 2, NCL_WIRE_RANK_NONE, 1, 1};
    char why[256];
    if (ncl_wire_decode(zmq_msg_data(&f), zmq_msg_size(&f), &lim, &m, why, sizeof why) != NCL_WIRE_OK)
        fail_msg("reply does not decode: %s", why);
    assert_true(m.flags & NCL_WIRE_FLAG_REPLY);
    assert_int_equal(m.src, (uint32_t)r);
    out->command = m.command;
    out->code = m.error_code;
    snprintf(out->text, sizeof out->text, "%.*s", (int)m.payload_len, (const char *)m.payload);
    zmq_msg_close(&f);
}

static void exchange(int r, uint8_t cmd, const char *json, reply *out)
{
    ncl_wire_msg m;
    memset(&m, 0, sizeof m);
    m.command = cmd;
    m.seq = ++seq;
    m.src = cmd == NCL_WIRE_NOTIFY ? 1 : NCL_WIRE_RANK_NONE;
    m.dst = (uint32_t)r;
    if (cmd == NCL_WIRE_HELLO) {
        m.hello.min_version = m.hello.max_version = 1;
        m.hello.max_payload = 1u << 20;
        m.hello.caps = NCL_WIRE_CAP_CONTROL;
    } else if (json) {
        m.payload = (const uint8_t *)json;
        m.payload_len = (uint32_t)strlen(json);
    }
    static uint8_t buf[1 << 16];
    size_t len = 0;
    assert_int_equal(ncl_wire_encode(&m, buf, sizeof buf, &len), NCL_WIRE_OK);
    exchange_raw(r, buf, len, out);
}

static void expect_error(int r, uint8_t cmd, const char *json, const char *needle)
{
    reply rp;
    exchange(r, cmd, json, &rp);
    if (rp.command != NCL_WIRE_ERROR || !strstr(rp.text, needle))
        fail_msg("%s %s: got %s '%s', expected ERROR with '%s'", ncl_wire_cmd_name(cmd), json ? json : "",
                 ncl_wire_cmd_name(rp.command), rp.text, needle);
    print_message("ERROR as expected: %s\n", rp.text);
}

static int setup(void **state)
{
    (void)state;
    char job[32], nb[8];
    snprintf(job, sizeof job, "ta%d", (int)getpid());
    for (int r = 0; r < 2; r++) {
        snprintf(nb, sizeof nb, "%d", r);
        pids[r] = fork();
        if (pids[r] == 0) {
            execl(RINGSIM_BIN, "ringsim", "agent", "--ranks", "2", "--rank", nb, "--job", job, "--timeout", "5",
                  "--connect-timeout", "10", (char *)NULL);
            _exit(127);
        }
    }
    ctx = zmq_ctx_new();
    for (int r = 0; r < 2; r++) {
        char ep[96];
        int zero = 0;
        snprintf(ep, sizeof ep, "ipc://@ringsim-%s-%d-ctl", job, r);
        req[r] = zmq_socket(ctx, ZMQ_REQ);
        zmq_setsockopt(req[r], ZMQ_LINGER, &zero, sizeof zero);
        zmq_connect(req[r], ep);
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (int r = 0; r < 2; r++) {
        zmq_close(req[r]);
        if (pids[r] > 0 && kill(pids[r], 0) == 0) {
            kill(pids[r], SIGKILL);
            waitpid(pids[r], NULL, 0);
        }
    }
    zmq_ctx_term(ctx);
    return 0;
}

static void test_hello(void **state)
{
    (void)state;
    for (int r = 0; r < 2; r++) {
        reply rp;
        exchange(r, NCL_WIRE_HELLO, NULL, &rp);
        assert_int_equal(rp.command, NCL_WIRE_HELLO_ACK);
    }
}

static void test_bad_requests(void **state)
{
    (void)state;
    reply rp;
    exchange_raw(0, "hello world, not a wire frame", 29, &rp);
    assert_int_equal(rp.command, NCL_WIRE_ERROR);
    assert_non_null(strstr(rp.text, "request rejected: bad_magic"));
    /* a frame corrupted in transit */
    ncl_wire_msg m;
    memset(&m, 0, sizeof m);
    m.command = NCL_WIRE_STATE;
    m.src = NCL_WIRE_RANK_NONE;
    m.dst = 0;
    uint8_t b[256];
    size_t len = 0;
    assert_int_equal(ncl_wire_encode(&m, b, sizeof b, &len), NCL_WIRE_OK);
    b[20] ^= 4;
    exchange_raw(0, b, len, &rp);
    assert_int_equal(rp.command, NCL_WIRE_ERROR);
    assert_non_null(strstr(rp.text, "checksum"));
    expect_error(0, NCL_WIRE_RUN, "{not json", "the payload is not valid JSON");
    expect_error(0, NCL_WIRE_RUN, "[1,2]", "not a JSON object");
    expect_error(0, NCL_WIRE_RUN, "{\"coll\":\"scatter\",\"sizes\":[8]}", "coll 'scatter'");
    expect_error(0, NCL_WIRE_RUN, "{\"coll\":\"allreduce\",\"sizes\":[8],\"bogus\":1}", "unknown field 'bogus'");
    expect_error(0, NCL_WIRE_RUN, "{\"coll\":\"allreduce\",\"sizes\":[-1]}", "sizes[0] is not a byte size");
    expect_error(0, NCL_WIRE_RUN, "{\"coll\":\"allreduce\",\"sizes\":[8],\"root\":2}", "root must be an integer 0..1");
    expect_error(0, NCL_WIRE_RUN, "{\"coll\":\"broadcast\",\"algo\":\"hd\",\"sizes\":[8]}", "does not implement broadcast");
    expect_error(0, NCL_WIRE_RUN, "{\"coll\":\"alltoallv\",\"skew\":1.5,\"sizes\":[8]}", "skew must be a number from 0 to 1");
    expect_error(0, NCL_WIRE_NOTIFY, NULL, "NOTIFY is not a controller command");
    /* still up and idle */
    exchange(0, NCL_WIRE_STATE, NULL, &rp);
    assert_int_equal(rp.command, NCL_WIRE_STATE);
    cJSON *j = cJSON_Parse(rp.text);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "state")->valuestring, "idle");
    assert_int_equal(cJSON_GetObjectItem(j, "nranks")->valueint, 2);
    assert_int_equal(cJSON_GetObjectItem(j, "dead_rank")->valueint, -1);
    cJSON_Delete(j);
}

/* A command both agents must get (a collective): sent to both, then both answers read. */
static void both(uint8_t cmd, const char *json, cJSON *out[2])
{
    ncl_wire_msg m;
    uint8_t b[4096];
    for (int r = 0; r < 2; r++) {
        memset(&m, 0, sizeof m);
        m.command = cmd;
        m.seq = ++seq;
        m.src = NCL_WIRE_RANK_NONE;
        m.dst = (uint32_t)r;
        m.payload = (const uint8_t *)json;
        m.payload_len = (uint32_t)strlen(json);
        size_t len = 0;
        assert_int_equal(ncl_wire_encode(&m, b, sizeof b, &len), NCL_WIRE_OK);
        assert_int_equal(zmq_send(req[r], b, len, 0), (int)len);
    }
    for (int r = 0; r < 2; r++) {
        zmq_msg_t f;
        zmq_msg_init(&f);
        zmq_pollitem_t it = {req[r], 0, ZMQ_POLLIN, 0};
        assert_int_equal(zmq_poll(&it, 1, 20000), 1);
        assert_true(zmq_msg_recv(&f, req[r], 0) >= 0);
        ncl_wire_limits lim = {64u << 20, 2, NCL_WIRE_RANK_NONE, 1, 1};
        char why[200];
        assert_int_equal(ncl_wire_decode(zmq_msg_data(&f), zmq_msg_size(&f), &lim, &m, why, sizeof why), NCL_WIRE_OK);
        assert_int_equal(m.command, cmd);
        out[r] = cJSON_ParseWithLength((const char *)m.payload, m.payload_len);
        assert_non_null(out[r]);
        zmq_msg_close(&f);
    }
}

static void test_run_selftest_counters(void **state)
{
    (void)state;
    cJSON *j[2];
    both(NCL_WIRE_RUN, "{\"coll\":\"allreduce\",\"dtype\":\"int32\",\"sizes\":[64,4100],\"iters\":2,\"warmup\":1}", j);
    for (int r = 0; r < 2; r++) {
        assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j[r], "ok")));
        cJSON *rows = cJSON_GetObjectItem(j[r], "rows");
        assert_int_equal(cJSON_GetArraySize(rows), 2);
        for (int i = 0; i < 2; i++) {
            cJSON *w = cJSON_GetObjectItem(cJSON_GetArrayItem(rows, i), "wrong");
            assert_int_equal(cJSON_GetArrayItem(w, 0)->valueint, 0);
            assert_int_equal(cJSON_GetArrayItem(w, 1)->valueint, 0);
        }
        assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(rows, 1), "size")->valueint, 4100);
        cJSON_Delete(j[r]);
    }
    /* alltoallv over a skewed matrix (each agent builds it from the row): both ranks bit-exact */
    both(NCL_WIRE_RUN, "{\"coll\":\"alltoallv\",\"skew\":0.5,\"dtype\":\"int32\",\"sizes\":[4096],\"iters\":1,\"warmup\":0}",
         j);
    for (int r = 0; r < 2; r++) {
        assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j[r], "ok")));
        cJSON *w = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j[r], "rows"), 0), "wrong");
        assert_int_equal(cJSON_GetArrayItem(w, 0)->valueint, 0);
        assert_int_equal(cJSON_GetArrayItem(w, 1)->valueint, 0);
        cJSON_Delete(j[r]);
    }
    both(NCL_WIRE_SELFTEST, "{}", j);
    for (int r = 0; r < 2; r++) {
        assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j[r], "ok")));
        cJSON_Delete(j[r]);
    }
    reply rp;
    exchange(1, NCL_WIRE_COUNTERS, NULL, &rp);
    cJSON *c = cJSON_Parse(rp.text);
    cJSON *l = cJSON_GetArrayItem(cJSON_GetObjectItem(c, "links"), 0);
    assert_int_equal(cJSON_GetObjectItem(l, "peer")->valueint, 0);
    assert_string_equal(cJSON_GetObjectItem(l, "state")->valuestring, "up");
    assert_true(cJSON_GetObjectItem(l, "frames_rx")->valuedouble > 10);
    cJSON_Delete(c);
    /* the engine's own state rides along for the wait-for report: last collective done, no waits */
    exchange(0, NCL_WIRE_STATE, NULL, &rp);
    c = cJSON_Parse(rp.text);
    cJSON *comm = cJSON_GetObjectItem(c, "comm");
    assert_non_null(comm);
    assert_int_equal(cJSON_GetObjectItem(comm, "phase")->valueint, 2); /* NCL_PHASE_DONE */
    assert_true(cJSON_GetObjectItem(comm, "seq")->valuedouble > 5);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(comm, "waits")), 0);
    cJSON_Delete(c);
}

/* `ringsim bringup`'s steps (SELFTEST {"test": ...}): bad ones get ERROR, a link test over the
 * two agents measures and checks, a ring allreduce over an order is exact, and RUN still works. */
static void test_bringup_steps(void **state)
{
    (void)state;
    expect_error(0, NCL_WIRE_SELFTEST, "{\"test\":\"nope\"}", "(allowed: begin, arm, link, end, ring");
    expect_error(0, NCL_WIRE_SELFTEST, "{\"test\":\"link\",\"src\":0,\"dst\":1}", "no 'begin' before it");
    expect_error(1, NCL_WIRE_SELFTEST, "{\"test\":\"ring\",\"order\":[1,1]}", "order must list all 2 ranks once");
    expect_error(0, NCL_WIRE_SELFTEST, "{\"test\":\"begin\",\"bytes\":7}", "bytes (8..256 MiB)");
    cJSON *j[2];
    both(NCL_WIRE_SELFTEST, "{\"test\":\"begin\",\"bytes\":65536,\"slot\":4096,\"seed\":9}", j);
    for (int r = 0; r < 2; r++)
        cJSON_Delete(j[r]);
    expect_error(1, NCL_WIRE_SELFTEST, "{\"test\":\"arm\",\"src\":1}", "src must be another rank");
    reply rp;
    exchange(1, NCL_WIRE_SELFTEST, "{\"test\":\"arm\",\"src\":0}", &rp);
    assert_int_equal(rp.command, NCL_WIRE_SELFTEST);
    both(NCL_WIRE_SELFTEST, "{\"test\":\"link\",\"src\":0,\"dst\":1,\"reps\":2,\"pings\":3,\"timeout_ms\":5000}", j);
    assert_string_equal(cJSON_GetObjectItem(j[0], "role")->valuestring, "src");
    cJSON *bw = cJSON_GetObjectItem(j[0], "samples_gbps"); /* one per timed transfer */
    assert_int_equal(cJSON_GetArraySize(bw), 2);
    for (cJSON *s = bw->child; s; s = s->next)
        assert_true(s->valuedouble > 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j[0], "rtt_us")), 3);
    assert_int_equal(cJSON_GetObjectItem(j[1], "transfers")->valueint, 7); /* a warm-up + 2 timed + 4 patterns */
    cJSON *pats = cJSON_GetObjectItem(j[1], "patterns");
    assert_int_equal(cJSON_GetArraySize(pats), 5);
    for (cJSON *p = pats->child; p; p = p->next)
        assert_int_equal(cJSON_GetObjectItem(p, "wrong")->valueint, 0);
    for (int r = 0; r < 2; r++)
        cJSON_Delete(j[r]);
    both(NCL_WIRE_SELFTEST, "{\"test\":\"end\",\"timeout_ms\":2000}", j);
    for (int r = 0; r < 2; r++) {
        assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j[r], "fence_missing")), 0);
        assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j[r], "foreign")), 0);
        cJSON_Delete(j[r]);
    }
    both(NCL_WIRE_SELFTEST, "{\"test\":\"ring\",\"order\":[1,0],\"bytes\":4100}", j);
    for (int r = 0; r < 2; r++) {
        assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j[r], "ok")));
        assert_int_equal(cJSON_GetObjectItem(j[r], "wrong")->valueint, 0);
        cJSON_Delete(j[r]);
    }
    both(NCL_WIRE_RUN, "{\"coll\":\"allgather\",\"dtype\":\"int32\",\"sizes\":[256],\"iters\":1,\"warmup\":0}", j);
    for (int r = 0; r < 2; r++) {
        assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j[r], "ok")));
        cJSON_Delete(j[r]);
    }
}

static void test_shutdown(void **state)
{
    (void)state;
    for (int r = 0; r < 2; r++) {
        reply rp;
        exchange(r, NCL_WIRE_SHUTDOWN, "{}", &rp);
        assert_int_equal(rp.command, NCL_WIRE_SHUTDOWN);
    }
    for (int r = 0; r < 2; r++) {
        int st = -1;
        for (int k = 0; k < 500 && waitpid(pids[r], &st, WNOHANG) == 0; k++)
            nanosleep(&(struct timespec){0, 10000000}, NULL);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
        pids[r] = 0;
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hello), cmocka_unit_test(test_bad_requests), cmocka_unit_test(test_run_selftest_counters),
        cmocka_unit_test(test_bringup_steps), cmocka_unit_test(test_shutdown),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
