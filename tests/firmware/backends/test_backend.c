/* test_backend.c — the backends' shared helpers (firmware/backends/common): bound buffers, checked regions, the CPU runner of data tasks, log levels. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ncl_backend.h"

static ncl_ref ref(uint32_t buf, uint64_t off)
{
    ncl_ref r = {buf, off};
    return r;
}

static void test_bind_and_regions(void **state)
{
    (void)state;
    unsigned char send[64], recv[128], scratch[32];
    ncl_bk_bufs b;
    memset(&b, 0, sizeof b);
    char why[160];
    uint64_t addr = 1;
    /* nothing bound: every region fails, naming it */
    assert_int_equal(ncl_bk_region(&b, ref(NCL_BUF_RECV, 0), 8, 1, &addr, why, sizeof why), 0);
    assert_string_equal(why, "RECV[0..+8): no collective is running (buffers unbound)");
    ncl_hal_launch l = {.seq = 1, .coll = NCL_COLL_ALLREDUCE, .send = send, .recv = recv, .send_bytes = sizeof send, .recv_bytes = sizeof recv};
    ncl_bk_bind(&b, &l, (uint64_t)(uintptr_t)scratch, sizeof scratch);
    assert_int_equal(ncl_bk_region(&b, ref(NCL_BUF_RECV, 120), 8, 1, &addr, why, sizeof why), 1);
    assert_ptr_equal(ncl_bk_ptr(addr), recv + 120);
    assert_int_equal(ncl_bk_region(&b, ref(NCL_BUF_SEND, 0), 64, 0, &addr, why, sizeof why), 1);
    assert_ptr_equal(ncl_bk_ptr(addr), send);
    assert_int_equal(ncl_bk_region(&b, ref(NCL_BUF_SCRATCH, 32), 0, 1, &addr, why, sizeof why), 1);
    /* SEND is never written, out of bounds, unknown buffers, offsets that overflow */
    assert_int_equal(ncl_bk_region(&b, ref(NCL_BUF_SEND, 0), 4, 1, &addr, why, sizeof why), 0);
    assert_string_equal(why, "SEND is read-only");
    assert_int_equal(ncl_bk_region(&b, ref(NCL_BUF_RECV, 121), 8, 1, &addr, why, sizeof why), 0);
    assert_string_equal(why, "RECV[121..+8) is out of bounds (bound size 128)");
    assert_int_equal(ncl_bk_region(&b, ref(NCL_BUF_SCRATCH, UINT64_MAX), 2, 0, &addr, why, sizeof why), 0);
    assert_int_equal(ncl_bk_region(&b, ref(NCL_BUF_COUNT, 0), 1, 0, &addr, why, sizeof why), 0);
    assert_string_equal(why, "unknown buffer 3");
    /* a reduce non-root's NULL recv is bound empty */
    ncl_hal_launch nonroot = {.seq = 2, .coll = NCL_COLL_REDUCE, .send = send, .send_bytes = sizeof send, .recv_bytes = 99};
    ncl_bk_bind(&b, &nonroot, 0, 16);
    assert_int_equal(b.size[NCL_BUF_RECV], 0);
    assert_int_equal(ncl_bk_region(&b, ref(NCL_BUF_RECV, 0), 1, 1, &addr, why, sizeof why), 0);
    /* a buffer without an address: refused, unless the backend moves no bytes */
    assert_int_equal(ncl_bk_region(&b, ref(NCL_BUF_SCRATCH, 0), 16, 1, &addr, why, sizeof why), 0);
    assert_string_equal(why, "SCRATCH has no address but 16 bytes are addressed");
    b.addressless = 1;
    addr = 1;
    assert_int_equal(ncl_bk_region(&b, ref(NCL_BUF_SCRATCH, 8), 8, 1, &addr, why, sizeof why), 1);
    assert_int_equal(addr, 0);
    /* an address range that would wrap */
    ncl_hal_launch high = {.seq = 3, .coll = NCL_COLL_ALLREDUCE};
    ncl_bk_bind(&b, &high, UINT64_MAX - 3, 16);
    assert_int_equal(ncl_bk_region(&b, ref(NCL_BUF_SCRATCH, 2), 8, 1, &addr, why, sizeof why), 0);
    assert_string_equal(why, "SCRATCH + 2 wraps the address space");
    ncl_bk_unbind(&b);
    assert_int_equal(b.bound, 0);
    assert_int_equal(b.addressless, 1); /* the backend's, not the launch's */
    assert_int_equal(ncl_bk_region(&b, ref(NCL_BUF_SCRATCH, 0), 1, 0, &addr, why, sizeof why), 0);
}

static ncl_task task(uint8_t kind, uint8_t dtype, uint8_t op, uint64_t bytes, uint32_t count)
{
    ncl_task t;
    memset(&t, 0, sizeof t);
    t.kind = kind;
    t.dtype = dtype;
    t.op = op;
    t.bytes = bytes;
    t.count = count;
    return t;
}

static void test_task_ok(void **state)
{
    (void)state;
    char why[160];
    ncl_task t = task(NCL_TASK_LOCAL_COPY, 0, 0, 3, 0);
    assert_int_equal(ncl_bk_task_ok(&t, why, sizeof why), 1);
    t = task(NCL_TASK_WRITE_REDUCE, NCL_FLOAT32, NCL_MAX, 8, 0);
    assert_int_equal(ncl_bk_task_ok(&t, why, sizeof why), 1);
    t = task(NCL_TASK_LOCAL_REDUCE, NCL_FLOAT32, NCL_OP_COUNT, 8, 0);
    assert_int_equal(ncl_bk_task_ok(&t, why, sizeof why), 0);
    assert_string_equal(why, "bad dtype 7 or op 5");
    t = task(NCL_TASK_LOCAL_REDUCE, NCL_INT64, NCL_SUM, 12, 0);
    assert_int_equal(ncl_bk_task_ok(&t, why, sizeof why), 0);
    assert_string_equal(why, "12 bytes is not a whole number of int64 elements");
    t = task(NCL_TASK_LOCAL_DIV, NCL_INT32, 0, 8, 0);
    assert_int_equal(ncl_bk_task_ok(&t, why, sizeof why), 0);
    assert_string_equal(why, "division by zero");
    t = task(NCL_TASK_LOCAL_NARROW, NCL_FLOAT32, NCL_SUM, 8, 0);
    assert_int_equal(ncl_bk_task_ok(&t, why, sizeof why), 0);
    t = task(NCL_TASK_LOCAL_WIDEN, NCL_BFLOAT16, NCL_SUM, 8, 0);
    assert_int_equal(ncl_bk_task_ok(&t, why, sizeof why), 1);
    t = task(NCL_TASK_NOTIFY_WAIT, 0, 0, 0, 1);
    assert_int_equal(ncl_bk_task_ok(&t, why, sizeof why), 0);
    assert_string_equal(why, "kind 6 is not a data task");
}

static void test_run(void **state)
{
    (void)state;
    char why[160];
    int32_t a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, b[8] = {10, 20, 30, 40, 50, 60, 70, 80};
    ncl_task t = task(NCL_TASK_LOCAL_REDUCE, NCL_INT32, NCL_SUM, sizeof a, 0);
    assert_int_equal(ncl_bk_run(&t, a, b, why, sizeof why), 1);
    assert_int_equal(a[0], 11);
    assert_int_equal(a[7], 88);
    t = task(NCL_TASK_LOCAL_DIV, NCL_INT32, 0, sizeof a, 11);
    assert_int_equal(ncl_bk_run(&t, a, NULL, why, sizeof why), 1);
    assert_int_equal(a[0], 1);
    assert_int_equal(a[7], 8);
    /* copies overlap like memmove; reduces must not partially overlap */
    t = task(NCL_TASK_LOCAL_COPY, 0, 0, 6 * sizeof(int32_t), 0);
    assert_int_equal(ncl_bk_run(&t, b + 2, b, why, sizeof why), 1);
    assert_int_equal(b[2], 10);
    assert_int_equal(b[7], 60);
    t = task(NCL_TASK_WRITE_REDUCE, NCL_INT32, NCL_SUM, 4 * sizeof(int32_t), 0);
    assert_int_equal(ncl_bk_run(&t, b + 1, b, why, sizeof why), 0);
    assert_string_equal(why, "source and destination partially overlap");
    assert_int_equal(ncl_bk_run(&t, b, b, why, sizeof why), 1); /* in place: dst = dst op dst */
    assert_int_equal(b[0], 20);
    /* wide: fp16 1.5 -> fp32 accumulator, + 2.25, -> fp16 3.75 */
    uint16_t h[1] = {0x3e00}, h2[1] = {0x4080}, out[1] = {0};
    float acc[1] = {0};
    t = task(NCL_TASK_LOCAL_WIDEN, NCL_FLOAT16, NCL_SUM, 2, 0);
    assert_int_equal(ncl_bk_run(&t, acc, h, why, sizeof why), 1);
    t.kind = NCL_TASK_LOCAL_REDUCE_WIDE;
    assert_int_equal(ncl_bk_run(&t, acc, h2, why, sizeof why), 1);
    t.kind = NCL_TASK_LOCAL_NARROW;
    assert_int_equal(ncl_bk_run(&t, out, acc, why, sizeof why), 1);
    assert_int_equal(out[0], 0x4380);
}

/* The two-source kinds, through a piece buffer: across several pieces, src op src2 in that order,
 * into or onto the destination, which may be a source but not partly overlap one. */
static void test_run_pair(void **state)
{
    (void)state;
    char why[160];
    enum { N = 1000 }; /* 4000 bytes: four pieces */
    static float a[N], b[N], d[N];
    for (int e = 0; e < N; e++)
        a[e] = (float)e, b[e] = 0.5f * (float)e, d[e] = 1.0f;
    ncl_task t = task(NCL_TASK_REDUCE_WRITE, NCL_FLOAT32, NCL_SUM, sizeof a, 0);
    assert_int_equal(ncl_bk_run(&t, d, a, why, sizeof why), 0); /* not a one-source kind */
    assert_int_equal(ncl_bk_run_pair(&t, d, a, b, why, sizeof why), 1);
    assert_true(d[0] == 0.0f && d[999] == 1498.5f);
    t.kind = NCL_TASK_REDUCE_WRITE_REDUCE;
    assert_int_equal(ncl_bk_run_pair(&t, d, a, b, why, sizeof why), 1);
    assert_true(d[10] == 30.0f && d[999] == 2997.0f);
    t.op = NCL_MAX; /* dst <- dst max (a max b) */
    assert_int_equal(ncl_bk_run_pair(&t, d, a, b, why, sizeof why), 1);
    assert_true(d[999] == 2997.0f);
    t = task(NCL_TASK_REDUCE_WRITE, NCL_FLOAT32, NCL_SUM, sizeof a, 0);
    assert_int_equal(ncl_bk_run_pair(&t, a, a, b, why, sizeof why), 1); /* dst = src: a <- a + b */
    assert_true(a[2] == 3.0f && a[999] == 1498.5f);
    t.bytes = 8;
    assert_int_equal(ncl_bk_run_pair(&t, a + 1, a, b, why, sizeof why), 0);
    assert_string_equal(why, "a source and the destination partially overlap");
    t.kind = NCL_TASK_WRITE_REDUCE;
    assert_int_equal(ncl_bk_run_pair(&t, d, a, b, why, sizeof why), 0);
    t = task(NCL_TASK_REDUCE_WRITE_REDUCE, NCL_FLOAT32, NCL_SUM, 6, 0);
    assert_int_equal(ncl_bk_task_ok(&t, why, sizeof why), 0); /* not whole elements */
}

static void test_log_levels(void **state)
{
    (void)state;
    static const struct {
        const char *word;
        int level;
    } ok[] = {{"debug", NCL_LOG_DEBUG}, {"ALL", NCL_LOG_DEBUG}, {"Info", NCL_LOG_INFO}, {"warn", NCL_LOG_WARN},
              {"warning", NCL_LOG_WARN}, {"error", NCL_LOG_ERROR}, {"off", -1}, {"NONE", -1}, {"0", -1}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        int level = 99;
        assert_int_equal(ncl_bk_log_level_parse(ok[i].word, &level), 0);
        assert_int_equal(level, ok[i].level);
    }
    int level = 99;
    assert_int_equal(ncl_bk_log_level_parse("verbose", &level), -1);
    assert_int_equal(ncl_bk_log_level_parse("", &level), -1);
    assert_int_equal(ncl_bk_log_level_parse(NULL, &level), -1);
    assert_int_equal(level, 99);
    assert_string_equal(ncl_bk_log_level_name(NCL_LOG_ERROR), "error");
    assert_string_equal(ncl_bk_log_level_name(NCL_LOG_WARN), "warn");
    assert_string_equal(ncl_bk_log_level_name(NCL_LOG_INFO), "info");
    assert_string_equal(ncl_bk_log_level_name(NCL_LOG_DEBUG), "debug");
    assert_string_equal(ncl_bk_log_level_name(-1), "?");
    assert_string_equal(ncl_bk_log_level_name(4), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bind_and_regions),
        cmocka_unit_test(test_task_ok),
        cmocka_unit_test(test_run),
        cmocka_unit_test(test_run_pair),
        cmocka_unit_test(test_log_levels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
