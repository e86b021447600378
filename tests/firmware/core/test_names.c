/* test_names.c — the names table (ncl_names.h): every value round-trips, every alias parses, unknowns are refused, one canonical name per value. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <ncl/ncl_names.h>
#include <ncl/ncl_sched.h>

/* How many values each kind names. */
static int value_count(ncl_name_kind k)
{
    switch (k) {
    case NCL_NAMES_COLL: return NCL_COLL_COUNT;
    case NCL_NAMES_ALGO: return NCL_ALGO_COUNT;
    case NCL_NAMES_DTYPE: return NCL_DTYPE_COUNT;
    case NCL_NAMES_OP: return NCL_OP_COUNT;
    case NCL_NAMES_RESULT: return NCL_RESULT_COUNT;
    case NCL_NAMES_TASK_KIND: return NCL_TASK_KIND_COUNT;
    case NCL_NAMES_BUF: return NCL_BUF_COUNT;
    default: return 0;
    }
}

/* Exactly one canonical name per value, in value order before every alias; every alias names a
 * value; no name appears twice in a kind. */
static void test_one_canonical_name_per_value(void **state)
{
    (void)state;
    for (int k = 0; k < NCL_NAMES_KIND_COUNT; k++) {
        size_t n = 0;
        const ncl_name *v = ncl_names((ncl_name_kind)k, &n);
        int values = value_count((ncl_name_kind)k);
        assert_non_null(v);
        assert_true(values > 0);
        assert_true(n >= (size_t)values);
        int canonical[64] = {0};
        assert_true(values <= 64);
        for (size_t i = 0; i < n; i++) {
            assert_non_null(v[i].name);
            assert_true(v[i].name[0] != '\0');
            assert_true(v[i].value >= 0 && v[i].value < values);
            if (i < (size_t)values) {
                assert_int_equal(v[i].alias, 0); /* the canonical names come first... */
                assert_int_equal(v[i].value, (int)i); /* ...in value order */
            } else {
                assert_int_equal(v[i].alias, 1);
            }
            canonical[v[i].value] += !v[i].alias;
            for (size_t j = 0; j < i; j++)
                assert_string_not_equal(v[i].name, v[j].name);
        }
        for (int x = 0; x < values; x++)
            assert_int_equal(canonical[x], 1);
    }
    size_t n = 99;
    assert_null(ncl_names(NCL_NAMES_KIND_COUNT, &n));
    assert_int_equal(n, 0);
}

/* name -> parse gives the value back for every value of every kind, and every entry (canonical
 * or alias) parses to its value; ncl_name_of gives the canonical name. */
static void test_round_trip(void **state)
{
    (void)state;
    for (int k = 0; k < NCL_NAMES_KIND_COUNT; k++) {
        for (int x = 0; x < value_count((ncl_name_kind)k); x++) {
            int got = -1;
            assert_int_equal(ncl_name_parse((ncl_name_kind)k, ncl_name_of((ncl_name_kind)k, x), &got), 0);
            assert_int_equal(got, x);
        }
        size_t n = 0;
        const ncl_name *v = ncl_names((ncl_name_kind)k, &n);
        for (size_t i = 0; i < n; i++) {
            int got = -1;
            assert_int_equal(ncl_name_parse((ncl_name_kind)k, v[i].name, &got), 0);
            assert_int_equal(got, v[i].value);
        }
    }
    /* the typed forms: name, then parse into the enum type */
#define TYPED_ROUND_TRIP(type, count, name_fn, parse_fn)                                           \
    for (int x = 0; x < (int)(count); x++) {                                                       \
        type out = (type)(count);                                                                  \
        assert_int_equal(parse_fn(name_fn((type)x), &out), 0);                                     \
        assert_int_equal(out, x);                                                                  \
    }
    TYPED_ROUND_TRIP(ncl_coll, NCL_COLL_COUNT, ncl_coll_name, ncl_coll_parse)
    TYPED_ROUND_TRIP(ncl_algo, NCL_ALGO_COUNT, ncl_algo_name, ncl_algo_parse)
    TYPED_ROUND_TRIP(ncl_dtype, NCL_DTYPE_COUNT, ncl_dtype_name, ncl_dtype_parse)
    TYPED_ROUND_TRIP(ncl_op, NCL_OP_COUNT, ncl_op_name, ncl_op_parse)
    TYPED_ROUND_TRIP(uint32_t, NCL_TASK_KIND_COUNT, ncl_task_kind_name, ncl_task_kind_parse)
    TYPED_ROUND_TRIP(uint32_t, NCL_BUF_COUNT, ncl_buf_name, ncl_buf_parse)
#undef TYPED_ROUND_TRIP
    for (int r = 0; r < NCL_RESULT_COUNT; r++) {
        int got = -1;
        assert_int_equal(ncl_name_parse(NCL_NAMES_RESULT, ncl_result_name((ncl_result)r), &got), 0);
        assert_int_equal(got, r);
    }
}

/* The spellings reports print today (nccl-tests' dtype names, the engine's algorithm names). */
static void test_canonical_spellings(void **state)
{
    (void)state;
    assert_string_equal(ncl_coll_name(NCL_COLL_REDUCE_SCATTER), "reduce_scatter");
    assert_string_equal(ncl_algo_name(NCL_ALGO_HD), "hd");
    assert_string_equal(ncl_algo_name(NCL_ALGO_USER), "user");
    assert_string_equal(ncl_dtype_name(NCL_FLOAT16), "half");
    assert_string_equal(ncl_dtype_name(NCL_BFLOAT16), "bfloat16");
    assert_string_equal(ncl_dtype_name(NCL_FLOAT32), "float");
    assert_string_equal(ncl_dtype_name(NCL_FLOAT64), "double");
    assert_string_equal(ncl_op_name(NCL_AVG), "avg");
    assert_string_equal(ncl_result_name(NCL_ERR_TIMEOUT), "timeout");
    assert_string_equal(ncl_task_kind_name(NCL_TASK_LOCAL_REDUCE_WIDE), "LOCAL_REDUCE_WIDE");
    assert_string_equal(ncl_buf_name(NCL_BUF_SCRATCH), "SCRATCH");
    /* ncl_strerror's message is the result's name, then what to do next */
    for (int r = 0; r < NCL_RESULT_COUNT; r++) {
        const char *name = ncl_result_name((ncl_result)r), *msg = ncl_strerror((ncl_result)r);
        size_t len = strlen(name);
        assert_memory_equal(msg, name, len);
        assert_true(msg[len] == ':' || (r == NCL_SUCCESS && msg[len] == '\0'));
    }
}

/* Every alias the tools accepted before the table existed. */
static void test_aliases(void **state)
{
    (void)state;
    static const struct {
        ncl_name_kind kind;
        const char *text;
        int value;
    } cases[] = {
        {NCL_NAMES_COLL, "all_reduce", NCL_COLL_ALLREDUCE},
        {NCL_NAMES_COLL, "bcast", NCL_COLL_BROADCAST},
        {NCL_NAMES_COLL, "reducescatter", NCL_COLL_REDUCE_SCATTER},
        {NCL_NAMES_COLL, "all_gather", NCL_COLL_ALLGATHER},
        {NCL_NAMES_ALGO, "halving_doubling", NCL_ALGO_HD},
        {NCL_NAMES_ALGO, "two_level", NCL_ALGO_HIER},
        {NCL_NAMES_ALGO, "hierarchical", NCL_ALGO_HIER},
        {NCL_NAMES_ALGO, "full_mesh", NCL_ALGO_MESH},
        {NCL_NAMES_ALGO, "scatter_allgather", NCL_ALGO_SAG},
        {NCL_NAMES_DTYPE, "int", NCL_INT32},
        {NCL_NAMES_DTYPE, "fp16", NCL_FLOAT16},
        {NCL_NAMES_DTYPE, "float16", NCL_FLOAT16},
        {NCL_NAMES_DTYPE, "bf16", NCL_BFLOAT16},
        {NCL_NAMES_DTYPE, "fp32", NCL_FLOAT32},
        {NCL_NAMES_DTYPE, "float32", NCL_FLOAT32},
        {NCL_NAMES_DTYPE, "fp64", NCL_FLOAT64},
        {NCL_NAMES_DTYPE, "float64", NCL_FLOAT64},
        {NCL_NAMES_TASK_KIND, "write", NCL_TASK_WRITE},
        {NCL_NAMES_TASK_KIND, "write_reduce", NCL_TASK_WRITE_REDUCE},
        {NCL_NAMES_TASK_KIND, "copy", NCL_TASK_LOCAL_COPY},
        {NCL_NAMES_TASK_KIND, "reduce", NCL_TASK_LOCAL_REDUCE},
        {NCL_NAMES_TASK_KIND, "div", NCL_TASK_LOCAL_DIV},
        {NCL_NAMES_TASK_KIND, "record", NCL_TASK_NOTIFY_RECORD},
        {NCL_NAMES_TASK_KIND, "wait", NCL_TASK_NOTIFY_WAIT},
        {NCL_NAMES_BUF, "send", NCL_BUF_SEND},
        {NCL_NAMES_BUF, "recv", NCL_BUF_RECV},
        {NCL_NAMES_BUF, "scratch", NCL_BUF_SCRATCH},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int got = -1;
        assert_int_equal(ncl_name_parse(cases[i].kind, cases[i].text, &got), 0);
        assert_int_equal(got, cases[i].value);
        /* an alias is never what gets printed */
        assert_string_not_equal(ncl_name_of(cases[i].kind, got), cases[i].text);
    }
    ncl_algo a = NCL_ALGO_AUTO;
    assert_int_equal(ncl_algo_parse("halving_doubling", &a), 0);
    assert_int_equal(a, NCL_ALGO_HD);
    ncl_dtype d = NCL_INT8;
    assert_int_equal(ncl_dtype_parse("bf16", &d), 0);
    assert_int_equal(d, NCL_BFLOAT16);
}

/* Unknown, near-miss, wrong-case and empty texts are refused and leave the output alone; values
 * out of range have the name "?". */
static void test_unknowns(void **state)
{
    (void)state;
    static const char *const bad[] = {"", "?", "Allreduce", "allreduc", "allreducee", "RING", "fp8", "sum ",
                                      " sum", "all", "none"};
    for (int k = 0; k < NCL_NAMES_KIND_COUNT; k++) {
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            int got = 12345;
            assert_int_equal(ncl_name_parse((ncl_name_kind)k, bad[i], &got), -1);
            assert_int_equal(got, 12345);
        }
        int got = 12345;
        assert_int_equal(ncl_name_parse((ncl_name_kind)k, NULL, &got), -1);
        assert_int_equal(got, 12345);
        assert_string_equal(ncl_name_of((ncl_name_kind)k, -1), "?");
        assert_string_equal(ncl_name_of((ncl_name_kind)k, value_count((ncl_name_kind)k)), "?");
    }
    int got = 12345;
    assert_int_equal(ncl_name_parse(NCL_NAMES_KIND_COUNT, "sum", &got), -1);
    assert_int_equal(got, 12345);
    assert_string_equal(ncl_name_of(NCL_NAMES_KIND_COUNT, 0), "?");
    /* names of one kind are not names of another */
    ncl_coll c = NCL_COLL_ALLREDUCE;
    assert_int_equal(ncl_coll_parse("ring", &c), -1);
    assert_int_equal(ncl_coll_parse("copy", &c), -1);
    assert_int_equal(c, NCL_COLL_ALLREDUCE);
    ncl_op op = NCL_SUM;
    assert_int_equal(ncl_op_parse("float", &op), -1);
    assert_int_equal(ncl_op_parse(NULL, &op), -1);
    assert_int_equal(op, NCL_SUM);
    assert_int_equal(ncl_algo_parse("ring", NULL), -1);
    assert_string_equal(ncl_coll_name(NCL_COLL_COUNT), "?");
    assert_string_equal(ncl_algo_name((ncl_algo)-1), "?");
    assert_string_equal(ncl_dtype_name(NCL_DTYPE_COUNT), "?");
    assert_string_equal(ncl_op_name(NCL_OP_COUNT), "?");
    assert_string_equal(ncl_result_name(NCL_RESULT_COUNT), "?");
    assert_string_equal(ncl_task_kind_name(NCL_TASK_KIND_COUNT), "?");
    assert_string_equal(ncl_task_kind_name(UINT32_MAX), "?");
    assert_string_equal(ncl_buf_name(NCL_BUF_COUNT), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_canonical_name_per_value),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_canonical_spellings),
        cmocka_unit_test(test_aliases),
        cmocka_unit_test(test_unknowns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
