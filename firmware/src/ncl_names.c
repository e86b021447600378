/* ncl_names.c — the one table of names (canonical + aliases) of every enum users and tools spell, parsing, and ncl_strerror's messages. */
#include "ncl/ncl_names.h"

#include "ncl/ncl_sched.h"

/* Each kind's entries: the canonical names in value order (so entry v names value v), then the
 * aliases. The table sizes are checked against the enums below, so a new enum value without a
 * name fails to compile. */
#define NAME(n, v) {(n), (int32_t)(v), 0}
#define ALIAS(n, v) {(n), (int32_t)(v), 1}

static const ncl_name coll_names[] = {
    NAME("allreduce", NCL_COLL_ALLREDUCE),
    NAME("broadcast", NCL_COLL_BROADCAST),
    NAME("reduce", NCL_COLL_REDUCE),
    NAME("reduce_scatter", NCL_COLL_REDUCE_SCATTER),
    NAME("allgather", NCL_COLL_ALLGATHER),
    NAME("alltoall", NCL_COLL_ALLTOALL),
    ALIAS("all_reduce", NCL_COLL_ALLREDUCE),
    ALIAS("bcast", NCL_COLL_BROADCAST),
    ALIAS("reducescatter", NCL_COLL_REDUCE_SCATTER),
    ALIAS("all_gather", NCL_COLL_ALLGATHER),
    ALIAS("all_to_all", NCL_COLL_ALLTOALL),
};

static const ncl_name algo_names[] = {
    NAME("auto", NCL_ALGO_AUTO),
    NAME("ring", NCL_ALGO_RING),
    NAME("chain", NCL_ALGO_CHAIN),
    NAME("tree", NCL_ALGO_TREE),
    NAME("hd", NCL_ALGO_HD),
    NAME("mesh", NCL_ALGO_MESH),
    NAME("sag", NCL_ALGO_SAG),
    NAME("dbtree", NCL_ALGO_DBTREE),
    NAME("det", NCL_ALGO_DET),
    NAME("hier", NCL_ALGO_HIER),
    NAME("user", NCL_ALGO_USER),
    NAME("pairwise", NCL_ALGO_PAIRWISE),
    ALIAS("halving_doubling", NCL_ALGO_HD),
    ALIAS("two_level", NCL_ALGO_HIER),
    ALIAS("hierarchical", NCL_ALGO_HIER),
    ALIAS("full_mesh", NCL_ALGO_MESH),
    ALIAS("scatter_allgather", NCL_ALGO_SAG),
};

/* Spelled as nccl-tests prints them, so reports line up with real runs. */
static const ncl_name dtype_names[] = {
    NAME("int8", NCL_INT8),
    NAME("uint8", NCL_UINT8),
    NAME("int32", NCL_INT32),
    NAME("uint32", NCL_UINT32),
    NAME("int64", NCL_INT64),
    NAME("half", NCL_FLOAT16),
    NAME("bfloat16", NCL_BFLOAT16),
    NAME("float", NCL_FLOAT32),
    NAME("double", NCL_FLOAT64),
    ALIAS("int", NCL_INT32),
    ALIAS("fp16", NCL_FLOAT16),
    ALIAS("float16", NCL_FLOAT16),
    ALIAS("bf16", NCL_BFLOAT16),
    ALIAS("fp32", NCL_FLOAT32),
    ALIAS("float32", NCL_FLOAT32),
    ALIAS("fp64", NCL_FLOAT64),
    ALIAS("float64", NCL_FLOAT64),
};

static const ncl_name op_names[] = {
    NAME("sum", NCL_SUM), NAME("prod", NCL_PROD), NAME("max", NCL_MAX), NAME("min", NCL_MIN), NAME("avg", NCL_AVG),
};

/* Each result's short name and what the user should do next, in one list: ncl_strerror's
 * message is the name, ": ", the advice, so the two never disagree (hang reports print the name:
 * "failed with timeout"). Success has a name and no advice. */
#define RESULT_LIST(X)                                                                                  \
    X("in progress", NCL_IN_PROGRESS, "the collective is still running; call ncl_test() or ncl_wait()") \
    X("invalid argument", NCL_ERR_INVALID_ARGUMENT,                                                     \
      "check buffers, count, datatype, op and root (ncl_comm_last_error() names the one)")              \
    X("invalid usage", NCL_ERR_INVALID_USAGE,                                                           \
      "not allowed in the communicator's state: a collective is still running (call ncl_wait), or one " \
      "failed (destroy the communicator)")                                                              \
    X("unsupported", NCL_ERR_UNSUPPORTED,                                                               \
      "this algorithm or backend cannot do that; choose another algorithm or give the backend more "    \
      "scratch")                                                                                        \
    X("timeout", NCL_ERR_TIMEOUT,                                                                       \
      "a peer never answered; the message names it - check that every rank calls the same collective") \
    X("remote error", NCL_ERR_REMOTE, "a peer failed; look at that rank's error")                       \
    X("link error", NCL_ERR_LINK, "a transfer to or from a peer failed; check the link")                \
    X("out of memory", NCL_ERR_OUT_OF_MEMORY, "the allocator or the backend's scratch is exhausted")    \
    X("schedule rejected", NCL_ERR_SCHEDULE,                                                            \
      "the checker found a broken schedule (an engine or user-schedule bug)")                           \
    X("backend error", NCL_ERR_BACKEND, "the HAL backend failed an operation; see its log")             \
    X("internal error", NCL_ERR_INTERNAL, "an engine bug; please report it with ncl_comm_last_error()")
#define RESULT_NAME(n, v, advice) NAME(n, v),
#define RESULT_MESSAGE(n, v, advice) [v] = n ": " advice,

static const ncl_name result_names[] = {NAME("success", NCL_SUCCESS), RESULT_LIST(RESULT_NAME)};
static const char *const result_messages[NCL_RESULT_COUNT] = {[NCL_SUCCESS] = "success", RESULT_LIST(RESULT_MESSAGE)};

/* The aliases are the `op:` words of user-schedule files (ncl_user.h). */
static const ncl_name task_kind_names[] = {
    NAME("WRITE", NCL_TASK_WRITE),
    NAME("WRITE_REDUCE", NCL_TASK_WRITE_REDUCE),
    NAME("LOCAL_COPY", NCL_TASK_LOCAL_COPY),
    NAME("LOCAL_REDUCE", NCL_TASK_LOCAL_REDUCE),
    NAME("LOCAL_DIV", NCL_TASK_LOCAL_DIV),
    NAME("NOTIFY_RECORD", NCL_TASK_NOTIFY_RECORD),
    NAME("NOTIFY_WAIT", NCL_TASK_NOTIFY_WAIT),
    NAME("LOCAL_WIDEN", NCL_TASK_LOCAL_WIDEN),
    NAME("LOCAL_REDUCE_WIDE", NCL_TASK_LOCAL_REDUCE_WIDE),
    NAME("LOCAL_NARROW", NCL_TASK_LOCAL_NARROW),
    NAME("REDUCE_WRITE", NCL_TASK_REDUCE_WRITE),
    NAME("REDUCE_WRITE_REDUCE", NCL_TASK_REDUCE_WRITE_REDUCE),
    ALIAS("write", NCL_TASK_WRITE),
    ALIAS("write_reduce", NCL_TASK_WRITE_REDUCE),
    ALIAS("copy", NCL_TASK_LOCAL_COPY),
    ALIAS("reduce", NCL_TASK_LOCAL_REDUCE),
    ALIAS("div", NCL_TASK_LOCAL_DIV),
    ALIAS("record", NCL_TASK_NOTIFY_RECORD),
    ALIAS("wait", NCL_TASK_NOTIFY_WAIT),
};

/* The aliases are the buffer words of user-schedule files. */
static const ncl_name buf_names[] = {
    NAME("SEND", NCL_BUF_SEND),
    NAME("RECV", NCL_BUF_RECV),
    NAME("SCRATCH", NCL_BUF_SCRATCH),
    ALIAS("send", NCL_BUF_SEND),
    ALIAS("recv", NCL_BUF_RECV),
    ALIAS("scratch", NCL_BUF_SCRATCH),
};

typedef struct name_table {
    const ncl_name *v;
    uint32_t count, canonical; /* entries, and of them the canonical ones (= the enum's count) */
} name_table;

#define COUNT(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))

static const name_table tables[NCL_NAMES_KIND_COUNT] = {
    [NCL_NAMES_COLL] = {coll_names, COUNT(coll_names), NCL_COLL_COUNT},
    [NCL_NAMES_ALGO] = {algo_names, COUNT(algo_names), NCL_ALGO_COUNT},
    [NCL_NAMES_DTYPE] = {dtype_names, COUNT(dtype_names), NCL_DTYPE_COUNT},
    [NCL_NAMES_OP] = {op_names, COUNT(op_names), NCL_OP_COUNT},
    [NCL_NAMES_RESULT] = {result_names, COUNT(result_names), NCL_RESULT_COUNT},
    [NCL_NAMES_TASK_KIND] = {task_kind_names, COUNT(task_kind_names), NCL_TASK_KIND_COUNT},
    [NCL_NAMES_BUF] = {buf_names, COUNT(buf_names), NCL_BUF_COUNT},
};

/* Enough canonical names for every value (the entries after them are aliases by construction). */
_Static_assert(COUNT(op_names) == NCL_OP_COUNT, "one name per ncl_op");
_Static_assert(COUNT(result_names) == NCL_RESULT_COUNT, "one name per ncl_result");
_Static_assert(COUNT(coll_names) >= NCL_COLL_COUNT && COUNT(algo_names) >= NCL_ALGO_COUNT &&
                   COUNT(dtype_names) >= NCL_DTYPE_COUNT && COUNT(task_kind_names) >= NCL_TASK_KIND_COUNT &&
                   COUNT(buf_names) >= NCL_BUF_COUNT,
               "a canonical name per value");

const ncl_name *ncl_names(ncl_name_kind kind, size_t *count)
{
    const name_table *t = (unsigned)kind < NCL_NAMES_KIND_COUNT ? &tables[kind] : NULL;
    if (count)
        *count = t ? t->count : 0;
    return t ? t->v : NULL;
}

const char *ncl_name_of(ncl_name_kind kind, int value)
{
    if ((unsigned)kind >= NCL_NAMES_KIND_COUNT || value < 0 || (uint32_t)value >= tables[kind].canonical)
        return "?";
    return tables[kind].v[value].name;
}

/* Exact match; no libc (the engine builds freestanding). */
static int same(const char *a, const char *b)
{
    while (*a && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

int ncl_name_parse(ncl_name_kind kind, const char *text, int *value)
{
    if ((unsigned)kind >= NCL_NAMES_KIND_COUNT || !text || !value)
        return -1;
    const name_table *t = &tables[kind];
    for (uint32_t i = 0; i < t->count; i++) {
        if (same(t->v[i].name, text)) {
            *value = t->v[i].value;
            return 0;
        }
    }
    return -1;
}

const char *ncl_coll_name(ncl_coll coll) { return ncl_name_of(NCL_NAMES_COLL, (int)coll); }
const char *ncl_algo_name(ncl_algo algo) { return ncl_name_of(NCL_NAMES_ALGO, (int)algo); }
const char *ncl_dtype_name(ncl_dtype dtype) { return ncl_name_of(NCL_NAMES_DTYPE, (int)dtype); }
const char *ncl_op_name(ncl_op op) { return ncl_name_of(NCL_NAMES_OP, (int)op); }
const char *ncl_result_name(ncl_result result) { return ncl_name_of(NCL_NAMES_RESULT, (int)result); }

const char *ncl_strerror(ncl_result result)
{
    return (unsigned)result < NCL_RESULT_COUNT ? result_messages[result] : "unknown result code";
}

const char *ncl_task_kind_name(uint32_t kind)
{
    return kind < NCL_TASK_KIND_COUNT ? ncl_name_of(NCL_NAMES_TASK_KIND, (int)kind) : "?";
}

const char *ncl_buf_name(uint32_t buf)
{
    return buf < NCL_BUF_COUNT ? ncl_name_of(NCL_NAMES_BUF, (int)buf) : "?";
}

/* The typed parsers: through an int, since an enum's size is the compiler's choice. */
#define TYPED_PARSE(fn, kind, type)                                                                \
    int fn(const char *text, type *out)                                                            \
    {                                                                                              \
        int v;                                                                                     \
        if (!out || ncl_name_parse(kind, text, &v) != 0)                                           \
            return -1;                                                                             \
        *out = (type)v;                                                                            \
        return 0;                                                                                  \
    }

TYPED_PARSE(ncl_coll_parse, NCL_NAMES_COLL, ncl_coll)
TYPED_PARSE(ncl_algo_parse, NCL_NAMES_ALGO, ncl_algo)
TYPED_PARSE(ncl_dtype_parse, NCL_NAMES_DTYPE, ncl_dtype)
TYPED_PARSE(ncl_op_parse, NCL_NAMES_OP, ncl_op)
TYPED_PARSE(ncl_task_kind_parse, NCL_NAMES_TASK_KIND, uint32_t)
TYPED_PARSE(ncl_buf_parse, NCL_NAMES_BUF, uint32_t)
