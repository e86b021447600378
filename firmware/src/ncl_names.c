/* ncl_names.c — the one table of names (canonical + aliases) of every enum users and tools spell, parsing, and ncl_strerror's messages. */
#include "ncl/ncl_names.h"

#include "ncl/ncl_sched.h"

/* Each kind's canonical names in value order (entry v names value v), then its aliases, as
 * X-macro lists: the full entries (ncl_names, parsing) and the canonical names alone (the *_name
 * functions) come from one list, so an image that never parses - a board - links the canonical
 * strings only, not the entries and aliases (about 1 KiB on a Cortex-M4). The canonical counts
 * are checked against the enums below, so a new enum value without a name fails to compile. */
#define COLL_NAMES(N, A)                                                                          \
    N("allreduce", NCL_COLL_ALLREDUCE) N("broadcast", NCL_COLL_BROADCAST) N("reduce", NCL_COLL_REDUCE) \
    N("reduce_scatter", NCL_COLL_REDUCE_SCATTER) N("allgather", NCL_COLL_ALLGATHER)                 \
    N("alltoall", NCL_COLL_ALLTOALL)                                                              \
    A("all_reduce", NCL_COLL_ALLREDUCE) A("bcast", NCL_COLL_BROADCAST)                              \
    A("reducescatter", NCL_COLL_REDUCE_SCATTER) A("all_gather", NCL_COLL_ALLGATHER)                 \
    A("all_to_all", NCL_COLL_ALLTOALL)

#define ALGO_NAMES(N, A)                                                                          \
    N("auto", NCL_ALGO_AUTO) N("ring", NCL_ALGO_RING) N("chain", NCL_ALGO_CHAIN) N("tree", NCL_ALGO_TREE) \
    N("hd", NCL_ALGO_HD) N("mesh", NCL_ALGO_MESH) N("sag", NCL_ALGO_SAG) N("dbtree", NCL_ALGO_DBTREE) \
    N("det", NCL_ALGO_DET) N("hier", NCL_ALGO_HIER) N("user", NCL_ALGO_USER)                        \
    N("pairwise", NCL_ALGO_PAIRWISE)                                                              \
    A("halving_doubling", NCL_ALGO_HD) A("two_level", NCL_ALGO_HIER) A("hierarchical", NCL_ALGO_HIER) \
    A("full_mesh", NCL_ALGO_MESH) A("scatter_allgather", NCL_ALGO_SAG)

/* Spelled as nccl-tests prints them, so reports line up with real runs. */
#define DTYPE_NAMES(N, A)                                                                         \
    N("int8", NCL_INT8) N("uint8", NCL_UINT8) N("int32", NCL_INT32) N("uint32", NCL_UINT32)         \
    N("int64", NCL_INT64) N("half", NCL_FLOAT16) N("bfloat16", NCL_BFLOAT16) N("float", NCL_FLOAT32) \
    N("double", NCL_FLOAT64)                                                                      \
    A("int", NCL_INT32) A("fp16", NCL_FLOAT16) A("float16", NCL_FLOAT16) A("bf16", NCL_BFLOAT16)    \
    A("fp32", NCL_FLOAT32) A("float32", NCL_FLOAT32) A("fp64", NCL_FLOAT64) A("float64", NCL_FLOAT64)

#define OP_NAMES(N, A) N("sum", NCL_SUM) N("prod", NCL_PROD) N("max", NCL_MAX) N("min", NCL_MIN) N("avg", NCL_AVG)

/* Each result's short name and what the user should do next, in one list: ncl_strerror's
 * message is the name, ": ", the advice, so the two never disagree (hang reports print the name:
 * "failed with timeout"). Success has a name and no advice. */
#define RESULT_LIST(X, N)                                                                                \
    X(N, "in progress", NCL_IN_PROGRESS, "the collective is still running; call ncl_test() or ncl_wait()") \
    X(N, "invalid argument", NCL_ERR_INVALID_ARGUMENT,                                                     \
      "check buffers, count, datatype, op and root (ncl_comm_last_error() names the one)")              \
    X(N, "invalid usage", NCL_ERR_INVALID_USAGE,                                                           \
      "not allowed in the communicator's state: a collective is still running (call ncl_wait), or one " \
      "failed (destroy the communicator)")                                                              \
    X(N, "unsupported", NCL_ERR_UNSUPPORTED,                                                               \
      "this algorithm or backend cannot do that; choose another algorithm or give the backend more "    \
      "scratch")                                                                                        \
    X(N, "timeout", NCL_ERR_TIMEOUT,                                                                       \
      "a peer never answered; the message names it - check that every rank calls the same collective") \
    X(N, "remote error", NCL_ERR_REMOTE, "a peer failed; look at that rank's error")                       \
    X(N, "link error", NCL_ERR_LINK, "a transfer to or from a peer failed; check the link")                \
    X(N, "out of memory", NCL_ERR_OUT_OF_MEMORY, "the allocator or the backend's scratch is exhausted")    \
    X(N, "schedule rejected", NCL_ERR_SCHEDULE,                                                            \
      "the checker found a broken schedule (an engine or user-schedule bug)")                           \
    X(N, "backend error", NCL_ERR_BACKEND, "the HAL backend failed an operation; see its log")             \
    X(N, "internal error", NCL_ERR_INTERNAL, "an engine bug; please report it with ncl_comm_last_error()")
#define RESULT_NAME(N, n, v, advice) N(n, v)
#define RESULT_NAMES(N, A) N("success", NCL_SUCCESS) RESULT_LIST(RESULT_NAME, N)
#define RESULT_MESSAGE(N, n, v, advice) [v] = n ": " advice,

static const char *const result_messages[NCL_RESULT_COUNT] = {[NCL_SUCCESS] = "success", RESULT_LIST(RESULT_MESSAGE, _)};

/* The aliases are the `op:` words of user-schedule files (ncl_user.h). */
#define TASK_KIND_NAMES(N, A)                                                                     \
    N("WRITE", NCL_TASK_WRITE) N("WRITE_REDUCE", NCL_TASK_WRITE_REDUCE) N("LOCAL_COPY", NCL_TASK_LOCAL_COPY) \
    N("LOCAL_REDUCE", NCL_TASK_LOCAL_REDUCE) N("LOCAL_DIV", NCL_TASK_LOCAL_DIV)                     \
    N("NOTIFY_RECORD", NCL_TASK_NOTIFY_RECORD) N("NOTIFY_WAIT", NCL_TASK_NOTIFY_WAIT)               \
    N("LOCAL_WIDEN", NCL_TASK_LOCAL_WIDEN) N("LOCAL_REDUCE_WIDE", NCL_TASK_LOCAL_REDUCE_WIDE)       \
    N("LOCAL_NARROW", NCL_TASK_LOCAL_NARROW) N("REDUCE_WRITE", NCL_TASK_REDUCE_WRITE)               \
    N("REDUCE_WRITE_REDUCE", NCL_TASK_REDUCE_WRITE_REDUCE)                                        \
    A("write", NCL_TASK_WRITE) A("write_reduce", NCL_TASK_WRITE_REDUCE) A("copy", NCL_TASK_LOCAL_COPY) \
    A("reduce", NCL_TASK_LOCAL_REDUCE) A("div", NCL_TASK_LOCAL_DIV) A("record", NCL_TASK_NOTIFY_RECORD) \
    A("wait", NCL_TASK_NOTIFY_WAIT)

/* The aliases are the buffer words of user-schedule files. */
#define BUF_NAMES(N, A)                                                                           \
    N("SEND", NCL_BUF_SEND) N("RECV", NCL_BUF_RECV) N("SCRATCH", NCL_BUF_SCRATCH)                   \
    A("send", NCL_BUF_SEND) A("recv", NCL_BUF_RECV) A("scratch", NCL_BUF_SCRATCH)

/* Every kind: its ncl_name_kind, its list, its name in the tables below, its enum's count. */
#define KINDS(X)                                                                                  \
    X(NCL_NAMES_COLL, COLL_NAMES, coll, NCL_COLL_COUNT)                                            \
    X(NCL_NAMES_ALGO, ALGO_NAMES, algo, NCL_ALGO_COUNT)                                            \
    X(NCL_NAMES_DTYPE, DTYPE_NAMES, dtype, NCL_DTYPE_COUNT)                                        \
    X(NCL_NAMES_OP, OP_NAMES, op, NCL_OP_COUNT)                                                    \
    X(NCL_NAMES_RESULT, RESULT_NAMES, result, NCL_RESULT_COUNT)                                    \
    X(NCL_NAMES_TASK_KIND, TASK_KIND_NAMES, task_kind, NCL_TASK_KIND_COUNT)                        \
    X(NCL_NAMES_BUF, BUF_NAMES, buf, NCL_BUF_COUNT)

#define COUNT(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))
#define ENTRY(n, v) {(n), (int32_t)(v), 0},
#define ALIAS(n, v) {(n), (int32_t)(v), 1},
#define CANONICAL(n, v) [v] = (n),
#define SKIP(n, v)
/* A kind's entries (canonical names and aliases) and its canonical names alone, one per value and
 * no more (designated entries past the enum would grow the array; a missing one leaves a hole
 * ncl_name_of reports as "?", which the tests catch). */
#define KIND_ARRAYS(kind, list, name, values)                                                     \
    static const ncl_name name##_names[] = {list(ENTRY, ALIAS)};                                  \
    static const char *const name##_canonical[] = {list(CANONICAL, SKIP)};                        \
    _Static_assert(COUNT(name##_canonical) == (values), "one canonical name per " #name);
KINDS(KIND_ARRAYS)

/* Entries, for ncl_names and parsing; canonical names, for the *_name functions (all an image that
 * never parses links). Separate tables, so that the one does not pull the other in. */
typedef struct name_table {
    const ncl_name *v;
    uint32_t count; /* entries, canonical and aliases */
} name_table;

typedef struct canonical_table {
    const char *const *v;
    uint32_t count; /* = the enum's count */
} canonical_table;

#define ENTRIES_OF(kind, list, name, values) [kind] = {name##_names, COUNT(name##_names)},
#define CANONICAL_OF(kind, list, name, values) [kind] = {name##_canonical, COUNT(name##_canonical)},
static const name_table tables[NCL_NAMES_KIND_COUNT] = {KINDS(ENTRIES_OF)};
static const canonical_table canonicals[NCL_NAMES_KIND_COUNT] = {KINDS(CANONICAL_OF)};

const ncl_name *ncl_names(ncl_name_kind kind, size_t *count)
{
    const name_table *t = (unsigned)kind < NCL_NAMES_KIND_COUNT ? &tables[kind] : NULL;
    if (count)
        *count = t ? t->count : 0;
    return t ? t->v : NULL;
}

const char *ncl_name_of(ncl_name_kind kind, int value)
{
    if ((unsigned)kind >= NCL_NAMES_KIND_COUNT || value < 0 || (uint32_t)value >= canonicals[kind].count ||
        !canonicals[kind].v[value])
        return "?";
    return canonicals[kind].v[value];
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
