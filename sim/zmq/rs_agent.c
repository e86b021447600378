/* rs_agent.c — `ringsim agent`: joins the rank table on the zmq backend and runs a controller's commands. */
#define _POSIX_C_SOURCE 200809L
#include "rs_agent.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include <cjson/cJSON.h>

#include "ncl/ncl.h"
#include "ncl/ncl_diag.h"
#include "ncl/ncl_dtype.h"
#include "ncl/ncl_mmio.h"
#include "ncl/ncl_names.h"
#include "ncl/ncl_sched.h"
#include "ncl/ncl_wire.h"
#include "ncl/ncl_zmq.h"
#include "rs_board.h"
#include "rs_bringup.h"
#include "sweep/rs_sweep.h"
#include "sweep/rs_shape.h"
#include "rs_ranktable.h"
#include "rs_state_json.h"

#define AG_MAX_REQ (1u << 20)
#define AG_MAX_SIZES 4096
/* --backend mmio: the emulated board's device memory, and the ranks its 128 notify counters
 * serve with every notify id the engine uses (128 / 4 = 32 = NCL_NOTIFY_IDS per peer). */
#define AG_BOARD_MEM (64ull << 20)
#define AG_BOARD_MAX_RANKS 4
#define AG_BOUNCE_BYTES (64u << 10)

static volatile sig_atomic_t ag_stop;

static void ag_on_signal(int sig)
{
    ag_stop = sig; /* which one: the agent dies of it once it has told its peers */
}

typedef struct agent {
    int rank, nranks;
    rs_ranktable table;
    ncl_zmq *zmq;
    rs_board *board;         /* --backend mmio: the emulated board (else NULL) ... */
    ncl_mmio *mm;            /* ... and the mmio backend driving its block */
    void *mm_mem, *bounce;
    unsigned char *dmem;     /* the board's device memory as mapped here (address a is dmem + a) */
    const ncl_hal *hal;      /* the zmq backend's, or the bring-up fault shim around it */
    rs_bu_shim shim;
    rs_bu_node node;         /* `ringsim bringup`'s link tests (rs_bringup_agent.c) */
    ncl_config cfg;          /* the communicator's */
    ncl_comm *comm;
    void *ctx, *rep;
    uint64_t timeout_ns;
    uint32_t channels;
    uint64_t collectives;
    int broken;
    int quiet;               /* the controller prints our failures: do not repeat them */
    char last_error[1024];
    FILE *err;
} agent;

static double ag_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static void *ag_alloc(void *ud, size_t n)
{
    (void)ud;
    return malloc(n);
}

static void ag_free(void *ud, void *p)
{
    (void)ud;
    free(p);
}

/* ---- one row ----------------------------------------------------------------------------------- */

typedef struct ag_run {
    rs_coll coll;
    double skew; /* alltoallv's */
    ncl_algo algo;
    ncl_dtype dt;
    ncl_op op;
    int root, iters, warmup, check;
    uint64_t seed;
    uint64_t *sizes;
    int nsizes;
} ag_run;

/* On the mmio backend buffers are device addresses: p points into the mapped device memory. */
static void *ag_dev(const agent *a, const void *p)
{
    return (void *)(uintptr_t)((const unsigned char *)p - a->dmem);
}

static ncl_result ag_call(agent *a, const rs_shape *s, const void *sb, void *rb)
{
    if (a->board) {
        sb = ag_dev(a, sb);
        rb = ag_dev(a, rb);
        /* reduce's non-roots bind no recvbuf: the root's is where every rank's would be */
        ncl_mmio_set_peer_recv(a->mm, (uint64_t)(uintptr_t)rb);
    }
    return rs_shape_call(s, sb, rb, a->comm);
}

/* The algorithm the engine runs for this row (the forced one, or auto's choice on this backend). */
static ncl_algo ag_row_algo(const agent *a, const ag_run *r, const rs_shape *s)
{
    if (r->algo != NCL_ALGO_AUTO)
        return r->algo;
    ncl_hal_caps caps;
    ncl_plan_env env;
    ncl_plan plan;
    if (ncl_hal_caps_get(a->hal, &caps) != NCL_SUCCESS)
        return NCL_ALGO_AUTO;
    ncl_plan_env_init(&env, &a->cfg, &caps);
    ncl_result rc = ncl_plan_make(&plan, rs_coll_engine(r->coll), NCL_ALGO_AUTO, a->nranks, a->rank, s->root,
                                  rs_shape_plan_count(s), s->dt,
                                  rs_shape_reduces(r->coll) ? s->op : NCL_SUM, 0, &env);
    return rc == NCL_SUCCESS ? (ncl_algo)plan.algo : NCL_ALGO_AUTO;
}

/* A 1-element allreduce: every rank leaves it after all entered (aligns the timed loops). */
static ncl_result ag_barrier(agent *a)
{
    int32_t one = 1, sum = 0;
    if (a->board) {
        memcpy(a->dmem + RS_BOARD_BARRIER_AT, &one, sizeof one);
        return ncl_allreduce((const void *)(uintptr_t)RS_BOARD_BARRIER_AT, (void *)(uintptr_t)(RS_BOARD_BARRIER_AT + 32),
                             1, NCL_INT32, NCL_SUM, a->comm);
    }
    return ncl_allreduce(&one, &sum, 1, NCL_INT32, NCL_SUM, a->comm);
}

static void ag_engine_error(agent *a, const ag_run *r, const rs_shape *s, const char *phase, int inplace,
                            ncl_result rc, char *out, size_t len)
{
    const char *detail = ncl_comm_last_error(a->comm);
    /* (the mmio backend's own error is in the engine's detail already) */
    const char *link = a->board ? rs_board_last_error(a->board) : ncl_zmq_last_error(a->zmq);
    if (detail && *link && strstr(detail, link))
        link = ""; /* the backend's account reached the engine already (its last_error) */
    /* the engine's detail (collective, step, peer) or else what the code means; then the
     * backend's first failure, which names the dead or corrupting rank */
    snprintf(out, len, "rank %d: %s %s (%s, %llu B %s %s): %s%s%s", a->rank, rs_coll_name(r->coll),
             inplace ? "in-place" : "out-of-place", phase, (unsigned long long)s->size, ncl_dtype_name(r->dt),
             rs_shape_reduces(r->coll) ? ncl_op_name(r->op) : "none", detail && *detail ? detail : ncl_strerror(rc),
             link && *link ? " -- " : "", link ? link : "");
    a->broken = 1;
    snprintf(a->last_error, sizeof a->last_error, "%s", out);
}

/* Runs the sweep; fills `rows` and returns NULL, or the error text (rows so far stay). */
static const char *ag_run_sweep(agent *a, const ag_run *r, cJSON *rows, char *errbuf, size_t errlen)
{
    uint64_t amax = 0, bmax = 0, emax = 0;
    rs_shape s;
    for (int i = 0; i < r->nsizes; i++)
        if (rs_shape_make(&s, r->coll, a->nranks, r->dt, r->op, r->root, r->skew, r->sizes[i])) {
            amax = rs_shape_a_bytes(&s) > amax ? rs_shape_a_bytes(&s) : amax;
            bmax = rs_shape_b_bytes(&s) > bmax ? rs_shape_b_bytes(&s) : bmax;
            emax = s.result_elems * s.es > emax ? s.result_elems * s.es : emax;
        }
    unsigned char *A, *B, *E = malloc(emax + 64);
    if (a->board) {
        /* the board's device memory, the same addresses on every rank (the symmetric convention) */
        uint64_t sa = (amax + 4095) / 4096 * 4096 + 4096, mem = rs_board_mem_bytes(a->board);
        if (RS_BOARD_HEAP_AT + sa + bmax + 64 > mem) {
            free(E);
            snprintf(errbuf, errlen, "rank %d: %llu + %llu bytes of buffers do not fit the board's %llu MiB of device "
                     "memory (allowed: sizes whose buffers fit %llu MiB)", a->rank, (unsigned long long)amax,
                     (unsigned long long)bmax, (unsigned long long)(mem >> 20),
                     (unsigned long long)((mem - RS_BOARD_HEAP_AT) >> 20));
            return errbuf;
        }
        A = a->dmem + RS_BOARD_HEAP_AT;
        B = A + sa;
    } else {
        A = malloc(amax + 64);
        B = malloc(bmax + 64);
    }
    if (!A || !B || !E) {
        if (!a->board) {
            free(A);
            free(B);
        }
        free(E);
        snprintf(errbuf, errlen, "rank %d: cannot allocate %llu + %llu bytes of buffers", a->rank,
                 (unsigned long long)amax, (unsigned long long)bmax);
        return errbuf;
    }
    const char *fail = NULL;
    for (int i = 0; i < r->nsizes && !fail && !ag_stop; i++) {
        if (!rs_shape_make(&s, r->coll, a->nranks, r->dt, r->op, r->root, r->skew, r->sizes[i]))
            continue;
        double t_us[2] = {0, 0};
        uint64_t wrong[2] = {0, 0};
        const int places = 2 - s.sendrecv; /* sendrecv: out of place only (rs_shape.sendrecv) */
        if (s.sendrecv)
            t_us[1] = -1;
        const void *sb;
        void *rb;
        ncl_result rc = NCL_SUCCESS;
        if (r->check) {
            uint64_t lo, hi; /* only the part of the result this rank compares */
            rs_shape_checked(&s, a->rank, &lo, &hi);
            rs_shape_expected(&s, r->seed, lo, hi, E + lo * s.es);
            for (int pl = 0; pl < places && !fail && !ag_stop; pl++) {
                rs_shape_place(&s, a->rank, A, B, pl, &sb, &rb);
                rs_shape_prepare(&s, a->rank, r->seed, sb, rb);
                rc = ag_call(a, &s, sb, rb);
                a->collectives++;
                if (rc != NCL_SUCCESS) {
                    ag_engine_error(a, r, &s, "check", pl, rc, errbuf, errlen);
                    fail = errbuf;
                } else {
                    wrong[pl] = rs_shape_count_wrong(&s, a->rank, rb, E);
                }
            }
        }
        /* once a signal came, no new collective starts (a barrier begun here would meet the
         * peers' next row call under the same number): the ABORT below ends theirs */
        for (int pl = 0; pl < places && !fail && !ag_stop; pl++) {
            rs_shape_place(&s, a->rank, A, B, pl, &sb, &rb);
            for (int it = 0; it < r->warmup && rc == NCL_SUCCESS && !ag_stop; it++, a->collectives++)
                rc = ag_call(a, &s, sb, rb);
            if (ag_stop)
                break;
            if (rc == NCL_SUCCESS)
                rc = ag_barrier(a);
            if (rc != NCL_SUCCESS) {
                ag_engine_error(a, r, &s, "warm-up", pl, rc, errbuf, errlen);
                fail = errbuf;
                break;
            }
            double t0 = ag_now_us();
            for (int it = 0; it < r->iters && rc == NCL_SUCCESS && !ag_stop; it++, a->collectives++)
                rc = ag_call(a, &s, sb, rb);
            t_us[pl] = (ag_now_us() - t0) / (r->iters > 0 ? r->iters : 1);
            if (rc != NCL_SUCCESS) {
                ag_engine_error(a, r, &s, "timed loop", pl, rc, errbuf, errlen);
                fail = errbuf;
            }
        }
        if (fail || ag_stop)
            break;
        cJSON *row = cJSON_CreateObject();
        cJSON_AddNumberToObject(row, "size", (double)s.size);
        cJSON_AddNumberToObject(row, "count", (double)s.count);
        cJSON_AddStringToObject(row, "algo", ncl_algo_name(ag_row_algo(a, r, &s)));
        cJSON_AddItemToObject(row, "time_us", cJSON_CreateDoubleArray(t_us, 2));
        double w[2] = {(double)wrong[0], (double)wrong[1]};
        cJSON_AddItemToObject(row, "wrong", cJSON_CreateDoubleArray(w, 2));
        cJSON_AddItemToArray(rows, row);
    }
    if (!fail && ag_stop) {
        snprintf(errbuf, errlen, "rank %d: stopped by a signal", a->rank);
        fail = errbuf;
    }
    if (!a->board) {
        free(A);
        free(B);
    }
    free(E);
    return fail;
}

/* ---- commands ----------------------------------------------------------------------------------- */

static const char *ag_json_str(const cJSON *o, const char *k, const char *def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : (v ? NULL : def);
}

/* Integer field: *out = value (or def when absent). -1 when present but not an integer in [lo, hi]. */
static int ag_json_int(const cJSON *o, const char *k, double lo, double hi, double def, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!v) {
        *out = def;
        return 0;
    }
    if (!cJSON_IsNumber(v) || v->valuedouble != (double)(int64_t)v->valuedouble || v->valuedouble < lo ||
        v->valuedouble > hi)
        return -1;
    *out = v->valuedouble;
    return 0;
}

/* Parses a RUN request; NULL or the problem. */
static const char *ag_parse_run(const agent *a, const cJSON *req, ag_run *r, char *why, size_t len)
{
    memset(r, 0, sizeof *r);
    const char *s;
    double v;
    if (!cJSON_IsObject(req))
        return "RUN: the payload is not a JSON object";
    static const char *const known[] = {"coll", "algo", "dtype", "op", "root", "sizes", "iters", "warmup", "check", "seed",
                                        "skew"};
    for (const cJSON *it = req->child; it; it = it->next) {
        int ok = 0;
        for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
            ok |= !strcmp(it->string, known[k]);
        if (!ok) {
            snprintf(why, len, "RUN: unknown field '%s' (allowed: coll, algo, dtype, op, root, sizes, iters, warmup, "
                     "check, seed, skew)", it->string);
            return why;
        }
    }
    if (!(s = ag_json_str(req, "coll", NULL)) || rs_coll_parse(s, &r->coll) != 0) {
        snprintf(why, len, "RUN: coll '%s' (allowed: allreduce, broadcast, reduce, reduce_scatter, allgather, alltoall, "
                 "alltoallv)", s ? s : "(missing or not a string)");
        return why;
    }
    if (!(s = ag_json_str(req, "algo", "auto")) || ncl_algo_parse(s, &r->algo) != 0 ||
        !ncl_algo_supported(rs_coll_engine(r->coll), r->algo)) {
        snprintf(why, len, "RUN: algo '%s' does not implement %s", s ? s : "?", rs_coll_name(r->coll));
        return why;
    }
    const cJSON *skew = cJSON_GetObjectItemCaseSensitive(req, "skew");
    if (skew && (!cJSON_IsNumber(skew) || !(skew->valuedouble >= 0 && skew->valuedouble <= 1)))
        return "RUN: skew must be a number from 0 to 1";
    r->skew = skew ? skew->valuedouble : RS_A2AV_SKEW_DEFAULT;
    if (!(s = ag_json_str(req, "dtype", "float")) || ncl_dtype_parse(s, &r->dt) != 0) {
        snprintf(why, len, "RUN: dtype '%s' (allowed: int8, uint8, int32, uint32, int64, half, bfloat16, float, double)",
                 s ? s : "?");
        return why;
    }
    if (!(s = ag_json_str(req, "op", "sum")) || ncl_op_parse(s, &r->op) != 0) {
        snprintf(why, len, "RUN: op '%s' (allowed: sum, prod, max, min, avg)", s ? s : "?");
        return why;
    }
    if (ag_json_int(req, "root", 0, a->nranks - 1, 0, &v)) {
        snprintf(why, len, "RUN: root must be an integer 0..%d", a->nranks - 1);
        return why;
    }
    r->root = (int)v;
    if (ag_json_int(req, "iters", 0, 1e9, 20, &v))
        return "RUN: iters must be an integer >= 0";
    r->iters = (int)v;
    if (ag_json_int(req, "warmup", 0, 1e9, 5, &v))
        return "RUN: warmup must be an integer >= 0";
    r->warmup = (int)v;
    if (ag_json_int(req, "check", 0, 1, 1, &v))
        return "RUN: check must be 0 or 1";
    r->check = (int)v;
    if (ag_json_int(req, "seed", 0, 9007199254740991.0, 1, &v))
        return "RUN: seed must be an integer >= 0";
    r->seed = (uint64_t)v;
    const cJSON *sz = cJSON_GetObjectItemCaseSensitive(req, "sizes");
    int n = cJSON_IsArray(sz) ? cJSON_GetArraySize(sz) : -1;
    if (n < 1 || n > AG_MAX_SIZES) {
        snprintf(why, len, "RUN: sizes must be a list of 1..%d byte sizes", AG_MAX_SIZES);
        return why;
    }
    r->sizes = calloc((size_t)n, sizeof *r->sizes);
    if (!r->sizes)
        return "RUN: out of memory";
    int i = 0;
    for (const cJSON *it = sz->child; it; it = it->next, i++) {
        if (!cJSON_IsNumber(it) || it->valuedouble < 0 || it->valuedouble > (double)(1ull << 40) ||
            it->valuedouble != (double)(uint64_t)it->valuedouble) {
            free(r->sizes);
            r->sizes = NULL;
            snprintf(why, len, "RUN: sizes[%d] is not a byte size (0..1T)", i);
            return why;
        }
        r->sizes[i] = (uint64_t)it->valuedouble;
    }
    r->nsizes = n;
    return NULL;
}

static cJSON *ag_state_json(agent *a)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "rank", a->rank);
    cJSON_AddNumberToObject(j, "nranks", a->nranks);
    cJSON_AddStringToObject(j, "job", a->table.job);
    cJSON_AddNumberToObject(j, "pid", (double)getpid());
    cJSON_AddStringToObject(j, "endpoint", a->table.e[a->rank].endpoint);
    /* broken by its own failure, or by a peer's ABORT that reached the backend between commands */
    int broken = a->broken || (!a->board && ncl_zmq_status(a->zmq) != NCL_SUCCESS);
    cJSON_AddStringToObject(j, "state", broken ? "broken" : "idle");
    cJSON_AddNumberToObject(j, "collectives", (double)a->collectives);
    cJSON_AddStringToObject(j, "backend", a->board ? "mmio" : "zmq");
    cJSON_AddNumberToObject(j, "dead_rank", a->board ? rs_board_dead_rank(a->board) : ncl_zmq_dead_rank(a->zmq));
    if (a->board)
        cJSON_AddNumberToObject(j, "cycles", (double)rs_board_cycles(a->board));
    cJSON_AddStringToObject(j, "last_error", a->last_error);
    /* The engine's own view (ncl_diag.h): the controller joins every rank's into the wait-for report. */
    ncl_rank_state st;
    if (ncl_comm_state(a->comm, &st) == NCL_SUCCESS)
        rs_state_to_json(j, &st);
    return j;
}

static cJSON *ag_counters_json(agent *a)
{
    cJSON *j = cJSON_CreateObject(), *links = cJSON_CreateArray(), *ctr = cJSON_CreateArray();
    cJSON_AddNumberToObject(j, "rank", a->rank);
    if (a->board) {
        /* the emulated board: link transfers per peer (notify counters live in the block) */
        for (int p = 0; p < a->nranks; p++) {
            rs_board_link st;
            if (rs_board_link_stats(a->board, p, &st))
                continue;
            cJSON *l = cJSON_CreateObject();
            cJSON_AddNumberToObject(l, "peer", p);
            cJSON_AddStringToObject(l, "state", st.up ? "up" : "down");
            cJSON_AddNumberToObject(l, "frames_tx", (double)st.tx);
            cJSON_AddNumberToObject(l, "bytes_tx", (double)st.tx_bytes);
            cJSON_AddNumberToObject(l, "frames_rx", (double)st.rx);
            cJSON_AddNumberToObject(l, "bytes_rx", (double)st.rx_bytes);
            cJSON_AddItemToArray(links, l);
        }
        ncl_mmio_stats ms;
        ncl_mmio_get_stats(a->mm, &ms);
        cJSON *b = cJSON_AddObjectToObject(j, "mmio");
        cJSON_AddNumberToObject(b, "cycles", (double)rs_board_cycles(a->board));
        cJSON_AddNumberToObject(b, "descriptors", (double)ms.descriptors);
        cJSON_AddNumberToObject(b, "controller_ops", (double)ms.controller_ops);
        cJSON_AddNumberToObject(b, "irq_waits", (double)ms.irq_waits);
        cJSON_AddNumberToObject(b, "errors", (double)ms.errors);
        cJSON_AddItemToObject(j, "links", links);
        cJSON_AddItemToObject(j, "notify", ctr);
        return j;
    }
    for (int p = 0; p < a->nranks; p++) {
        ncl_zmq_link st;
        if (p == a->rank || ncl_zmq_link_stats(a->zmq, p, &st))
            continue;
        cJSON *l = cJSON_CreateObject();
        cJSON_AddNumberToObject(l, "peer", p);
        cJSON_AddStringToObject(l, "state", ncl_zmq_link_state_name(st.state));
        cJSON_AddNumberToObject(l, "frames_tx", (double)st.frames_tx);
        cJSON_AddNumberToObject(l, "bytes_tx", (double)st.bytes_tx);
        cJSON_AddNumberToObject(l, "frames_rx", (double)st.frames_rx);
        cJSON_AddNumberToObject(l, "bytes_rx", (double)st.bytes_rx);
        cJSON_AddItemToArray(links, l);
        for (uint32_t id = 0; id < NCL_NOTIFY_IDS; id++) {
            uint32_t c = ncl_zmq_counter(a->zmq, p, id);
            if (!c)
                continue;
            cJSON *e = cJSON_CreateObject();
            cJSON_AddNumberToObject(e, "sender", p);
            cJSON_AddNumberToObject(e, "id", id);
            cJSON_AddNumberToObject(e, "count", c);
            cJSON_AddItemToArray(ctr, e);
        }
    }
    cJSON_AddItemToObject(j, "links", links);
    cJSON_AddItemToObject(j, "notify", ctr);
    return j;
}

/* Self-test: an int32 allreduce and an fp32 broadcast from rank 0, both checked. */
static cJSON *ag_selftest(agent *a)
{
    static uint64_t sizes[] = {4 * 4099};
    ag_run r;
    memset(&r, 0, sizeof r);
    r.sizes = sizes;
    r.nsizes = 1;
    r.check = 1;
    r.seed = 3;
    cJSON *j = cJSON_CreateObject(), *rows = cJSON_CreateArray();
    char errbuf[1024];
    const char *fail = NULL;
    r.coll = (rs_coll)NCL_COLL_ALLREDUCE;
    r.dt = NCL_INT32;
    r.op = NCL_SUM;
    fail = ag_run_sweep(a, &r, rows, errbuf, sizeof errbuf);
    if (!fail) {
        r.coll = (rs_coll)NCL_COLL_BROADCAST;
        r.dt = NCL_FLOAT32;
        fail = ag_run_sweep(a, &r, rows, errbuf, sizeof errbuf);
    }
    double wrong = 0;
    for (const cJSON *row = rows->child; row; row = row->next) {
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(row, "wrong");
        for (const cJSON *x = w ? w->child : NULL; x; x = x->next)
            wrong += x->valuedouble;
    }
    cJSON_AddNumberToObject(j, "rank", a->rank);
    cJSON_AddBoolToObject(j, "ok", !fail && wrong == 0);
    cJSON_AddNumberToObject(j, "wrong", wrong);
    cJSON_AddStringToObject(j, "error", fail ? fail : "");
    cJSON_Delete(rows);
    return j;
}

/* Bring-up: one checked int32 allreduce with the ring algorithm over the order the controller
 * gives (a temporary communicator whose one ring is that order), so a set of orders covers every
 * link the controller wants exercised by the engine itself. */
static cJSON *ag_ring(agent *a, const cJSON *req, char *why, size_t len)
{
    const cJSON *ord = cJSON_GetObjectItemCaseSensitive(req, "order");
    double bytes = 0;
    if (ag_json_int(req, "bytes", 4, 256.0 * 1048576, 65536, &bytes) || !cJSON_IsArray(ord) ||
        cJSON_GetArraySize(ord) != a->nranks) {
        snprintf(why, len, "SELFTEST ring: order must list all %d ranks once, bytes 4..256 MiB", a->nranks);
        return NULL;
    }
    int32_t *order = calloc((size_t)a->nranks, sizeof *order);
    char *seen = calloc((size_t)a->nranks, 1);
    int i = 0, bad = !order || !seen;
    for (const cJSON *x = ord->child; x && !bad; x = x->next, i++) {
        bad = !cJSON_IsNumber(x) || x->valuedouble < 0 || x->valuedouble >= a->nranks ||
              x->valuedouble != (double)(int)x->valuedouble || seen[(int)x->valuedouble];
        if (!bad) {
            order[i] = (int32_t)x->valuedouble;
            seen[order[i]] = 1;
        }
    }
    free(seen);
    if (bad) {
        free(order);
        snprintf(why, len, "SELFTEST ring: order must list all %d ranks once", a->nranks);
        return NULL;
    }
    rs_bu_node_release(&a->node);
    ncl_config cfg = NCL_CONFIG_INIT;
    cfg.alloc = ag_alloc;
    cfg.free = ag_free;
    cfg.timeout_ns = a->timeout_ns;
    cfg.channels = 1;
    cfg.rings = order;
    cfg.ring_count = 1;
    cfg.algorithm[NCL_COLL_ALLREDUCE] = NCL_ALGO_RING;
    ncl_comm *ring = NULL, *main_comm = a->comm;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "rank", a->rank);
    ncl_result rc = ncl_comm_create(&ring, a->nranks, a->rank, a->hal, &cfg);
    free(order);
    if (rc != NCL_SUCCESS) {
        char e[300];
        snprintf(e, sizeof e, "rank %d: ring communicator: %s", a->rank, ncl_strerror(rc));
        cJSON_AddBoolToObject(j, "ok", 0);
        cJSON_AddNumberToObject(j, "wrong", 0);
        cJSON_AddStringToObject(j, "error", e);
        return j;
    }
    uint64_t sizes[1] = {(uint64_t)bytes};
    ag_run r;
    memset(&r, 0, sizeof r);
    r.coll = (rs_coll)NCL_COLL_ALLREDUCE;
    r.algo = NCL_ALGO_RING;
    r.dt = NCL_INT32;
    r.op = NCL_SUM;
    r.iters = 1;
    r.check = 1;
    r.seed = 5;
    r.sizes = sizes;
    r.nsizes = 1;
    cJSON *rows = cJSON_CreateArray();
    char errbuf[1500];
    a->comm = ring;
    const char *fail = ag_run_sweep(a, &r, rows, errbuf, sizeof errbuf);
    a->comm = main_comm;
    ncl_comm_destroy(ring);
    double wrong = 0, t = 0;
    for (const cJSON *row = rows->child; row; row = row->next) {
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(row, "wrong");
        for (const cJSON *x = w ? w->child : NULL; x; x = x->next)
            wrong += x->valuedouble;
        const cJSON *tu = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(row, "time_us"), 0);
        t = cJSON_IsNumber(tu) ? tu->valuedouble : 0;
    }
    cJSON_Delete(rows);
    cJSON_AddBoolToObject(j, "ok", !fail && wrong == 0);
    cJSON_AddNumberToObject(j, "wrong", wrong);
    cJSON_AddNumberToObject(j, "time_us", t);
    cJSON_AddStringToObject(j, "error", fail ? fail : "");
    return j;
}

/* ---- the control socket ------------------------------------------------------------------------- */

static void ag_reply(agent *a, const ncl_wire_msg *req, uint8_t command, const char *text, uint32_t code)
{
    ncl_wire_msg m;
    memset(&m, 0, sizeof m);
    m.command = command;
    m.flags = NCL_WIRE_FLAG_REPLY;
    m.seq = req ? req->seq : 0;
    m.src = (uint32_t)a->rank;
    m.dst = NCL_WIRE_RANK_NONE;
    m.time_ns = (uint64_t)(ag_now_us() * 1e3);
    size_t n = text ? strlen(text) : 0;
    if (command == NCL_WIRE_ERROR) {
        m.error_code = code;
        if (n > NCL_WIRE_ERROR_TEXT_MAX)
            n = NCL_WIRE_ERROR_TEXT_MAX;
    } else if (command == NCL_WIRE_HELLO_ACK) {
        m.hello.min_version = m.hello.max_version = NCL_WIRE_VERSION;
        m.hello.max_payload = AG_MAX_REQ;
        m.hello.nranks = (uint32_t)a->nranks;
        m.hello.caps = NCL_WIRE_CAP_CONTROL;
        n = 0;
    }
    m.payload = (const uint8_t *)text;
    m.payload_len = (uint32_t)n;
    size_t need = 0;
    ncl_wire_encode(&m, NULL, 0, &need);
    zmq_msg_t f;
    zmq_msg_init_size(&f, need ? need : 1);
    size_t len = 0;
    if (ncl_wire_encode(&m, zmq_msg_data(&f), need, &len) != NCL_WIRE_OK) {
        zmq_msg_close(&f);
        return;
    }
    if (zmq_msg_send(&f, a->rep, 0) < 0)
        zmq_msg_close(&f);
}

static void ag_reply_json(agent *a, const ncl_wire_msg *req, cJSON *j)
{
    char *s = cJSON_PrintUnformatted(j);
    ag_reply(a, req, req->command, s ? s : "{}", 0);
    free(s);
    cJSON_Delete(j);
}

/* Handles one request; returns 1 when the agent should exit. */
static int ag_handle(agent *a, const void *buf, size_t len)
{
    ncl_wire_msg m;
    char why[512];
    ncl_wire_limits lim = {AG_MAX_REQ, (uint32_t)a->nranks, (uint32_t)a->rank, NCL_WIRE_VERSION, NCL_WIRE_VERSION};
    ncl_wire_result wr = ncl_wire_decode(buf, len, &lim, &m, why, sizeof why);
    if (wr != NCL_WIRE_OK) {
        char text[600];
        snprintf(text, sizeof text, "agent rank %d: request rejected: %s: %s", a->rank, ncl_wire_result_name(wr), why);
        fprintf(a->err, "ringsim agent: %s\n", text);
        ag_reply(a, NULL, NCL_WIRE_ERROR, text, (uint32_t)wr);
        return 0;
    }
    switch (m.command) {
    case NCL_WIRE_HELLO:
        ag_reply(a, &m, NCL_WIRE_HELLO_ACK, NULL, 0);
        return 0;
    case NCL_WIRE_STATE:
        ag_reply_json(a, &m, ag_state_json(a));
        return 0;
    case NCL_WIRE_COUNTERS:
        ag_reply_json(a, &m, ag_counters_json(a));
        return 0;
    case NCL_WIRE_SHUTDOWN: {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddBoolToObject(j, "ok", 1);
        ag_reply_json(a, &m, j);
        return 1;
    }
    case NCL_WIRE_SELFTEST: {
        /* With a JSON payload naming a "test": a step of `ringsim bringup` ("begin", "arm", "link",
         * "end", "ring"); anything else is the self-test, whose payload was always ignored. */
        cJSON *req = m.payload_len ? cJSON_ParseWithLength((const char *)m.payload, m.payload_len) : NULL;
        const cJSON *t = req ? cJSON_GetObjectItemCaseSensitive(req, "test") : NULL;
        if (!t) {
            cJSON_Delete(req);
            rs_bu_node_release(&a->node);
            ag_reply_json(a, &m, ag_selftest(a));
            return 0;
        }
        cJSON *j = NULL;
        if (cJSON_IsString(t) && !strcmp(t->valuestring, "ring"))
            j = ag_ring(a, req, why, sizeof why);
        else
            j = rs_bu_node_handle(&a->node, req, why, sizeof why);
        cJSON_Delete(req);
        if (!j) {
            char text[600];
            snprintf(text, sizeof text, "agent rank %d: %s", a->rank, why);
            ag_reply(a, &m, NCL_WIRE_ERROR, text, NCL_ERR_INVALID_ARGUMENT);
            return 0;
        }
        ag_reply_json(a, &m, j);
        return 0;
    }
    case NCL_WIRE_RUN: {
        cJSON *req = cJSON_ParseWithLength((const char *)m.payload, m.payload_len);
        ag_run r;
        const char *bad = req ? ag_parse_run(a, req, &r, why, sizeof why) : "RUN: the payload is not valid JSON";
        cJSON_Delete(req);
        if (bad) {
            char text[600];
            snprintf(text, sizeof text, "agent rank %d: %s", a->rank, bad);
            ag_reply(a, &m, NCL_WIRE_ERROR, text, NCL_ERR_INVALID_ARGUMENT);
            return 0;
        }
        cJSON *j = cJSON_CreateObject(), *rows = cJSON_CreateArray();
        char errbuf[1500];
        rs_bu_node_release(&a->node); /* the engine binds its own buffers */
        const char *fail = ag_run_sweep(a, &r, rows, errbuf, sizeof errbuf);
        free(r.sizes);
        cJSON_AddNumberToObject(j, "rank", a->rank);
        cJSON_AddBoolToObject(j, "ok", fail == NULL);
        cJSON_AddStringToObject(j, "error", fail ? fail : "");
        cJSON_AddItemToObject(j, "rows", rows);
        if (fail && !a->quiet)
            fprintf(a->err, "ringsim agent: %s\n", fail);
        if (fail && a->board) { /* the zmq backend sends its ABORT itself; a board's engine cannot */
            /* the link's own account (a lost peer) is the short reason, when there is one */
            char why[300];
            const char *link = rs_board_last_error(a->board);
            if (*link)
                snprintf(why, sizeof why, "rank %d: %s", a->rank, link);
            rs_board_abort(a->board, NCL_ERR_REMOTE, *link ? why : fail);
        }
        ag_reply_json(a, &m, j);
        return 0;
    }
    default: {
        char text[200];
        snprintf(text, sizeof text, "agent rank %d: %s is not a controller command (allowed: HELLO, RUN, SELFTEST, "
                 "COUNTERS, STATE, SHUTDOWN)", a->rank, ncl_wire_cmd_name(m.command));
        ag_reply(a, &m, NCL_WIRE_ERROR, text, NCL_ERR_INVALID_USAGE);
        return 0;
    }
    }
}

/* ---- the agent ----------------------------------------------------------------------------------- */

int rs_agent_serve(const rs_agent_opts *o, FILE *err)
{
    agent a;
    memset(&a, 0, sizeof a);
    a.err = err;
    a.rank = o->rank;
    a.timeout_ns = o->timeout_ns;
    a.channels = o->channels;
    a.quiet = o->quiet;
    uint64_t connect_ns = o->connect_ns;
    const char *table = o->table_path, *job = o->job, *fault_spec = o->fault_spec, *backend = o->backend;
    long nranks = o->nranks;
    char e[RS_RT_ERRLEN];
    int env_rank = -1;
    if (table) {
        if (rs_ranktable_load(table, &a.table, e, sizeof e)) {
            fprintf(err, "%s\n", e);
            return RS_EXIT_USAGE;
        }
        if (a.rank < 0) {
            rs_ranktable t2;
            if (rs_ranktable_from_env(NULL, NULL, &t2, &env_rank, e, sizeof e) != 0) {
                fprintf(err, "ringsim agent: --ranktable needs --rank R (or a launcher's rank variable): %s\n", e);
                rs_ranktable_free(&a.table);
                return RS_EXIT_USAGE;
            }
            rs_ranktable_free(&t2);
            a.rank = env_rank;
        }
    } else if (nranks > 0) {
        if (a.rank < 0 || !job) {
            fprintf(err, "ringsim agent: --ranks needs --rank R and --job NAME\n");
            return RS_EXIT_USAGE;
        }
        if (rs_ranktable_local((int)nranks, job, &a.table, e, sizeof e)) {
            fprintf(err, "ringsim agent: %s\n", e);
            return RS_EXIT_USAGE;
        }
    } else {
        int rc = rs_ranktable_from_env(NULL, job, &a.table, &env_rank, e, sizeof e);
        if (rc != 0) {
            fprintf(err, "ringsim agent: %s (allowed: --ranktable FILE, --ranks N --rank R --job NAME, or mpirun/srun)\n", e);
            return RS_EXIT_USAGE;
        }
        if (a.rank < 0)
            a.rank = env_rank;
    }
    a.nranks = a.table.nranks;
    if (a.rank < 0 || a.rank >= a.nranks) {
        fprintf(err, "ringsim agent: --rank %d is out of range (allowed: 0..%d for the %d ranks of the table)\n", a.rank,
                a.nranks - 1, a.nranks);
        rs_ranktable_free(&a.table);
        return RS_EXIT_USAGE;
    }

    int mmio = !strcmp(backend, "mmio");
    if (mmio && a.nranks > AG_BOARD_MAX_RANKS) {
        fprintf(err, "ringsim agent: --backend mmio: %d ranks (allowed: 1..%d: the block's 128 notify counters give "
                "each peer %d ids, the engine needs %d)\n", a.nranks, AG_BOARD_MAX_RANKS, 128 / a.nranks, NCL_NOTIFY_IDS);
        rs_ranktable_free(&a.table);
        return RS_EXIT_USAGE;
    }
    if (mmio && fault_spec && strstr(fault_spec, "corrupt")) {
        fprintf(err, "ringsim agent: --fault %s: corrupt needs --backend zmq (allowed with mmio: dead, slow, miswire; "
                "the block reads the source after the task is submitted, so it cannot be damaged and restored)\n",
                fault_spec);
        rs_ranktable_free(&a.table);
        return RS_EXIT_USAGE;
    }
    if (fault_spec && rs_bu_shim_parse(&a.shim, a.rank, a.nranks, fault_spec, e, sizeof e)) {
        fprintf(err, "ringsim agent: %s\n", e);
        rs_ranktable_free(&a.table);
        return RS_EXIT_USAGE;
    }
    a.node.rank = a.rank;
    a.node.nranks = a.nranks;
    a.node.stop = &ag_stop;
    a.shim.stop = &ag_stop;

    ncl_zmq_config zc = NCL_ZMQ_CONFIG_INIT;
    zc.nranks = a.nranks;
    zc.rank = a.rank;
    zc.connect_timeout_ns = connect_ns;
    zc.scratch_bytes = 4ull << 20;
    const char **eps = calloc((size_t)a.nranks, sizeof *eps);
    for (int r = 0; eps && r < a.nranks; r++)
        eps[r] = a.table.e[r].endpoint;
    zc.endpoints = eps;
    const char *fault = getenv("RINGSIM_ZMQ_FAULT");
    if (fault && *fault) {
        char kind[16];
        int fr = -1;
        unsigned long long nth = 0;
        if (sscanf(fault, "%15[a-z]:%d:%llu", kind, &fr, &nth) != 3 || nth == 0 ||
            (strcmp(kind, "die") && strcmp(kind, "corrupt"))) {
            fprintf(err, "ringsim agent: RINGSIM_ZMQ_FAULT='%s' (allowed: die:RANK:N or corrupt:RANK:N, N >= 1)\n", fault);
            free(eps);
            rs_ranktable_free(&a.table);
            return RS_EXIT_USAGE;
        }
        if (fr == a.rank && !strcmp(kind, "die"))
            zc.fault_die_nth = nth;
        else if (fr == a.rank)
            zc.fault_corrupt_nth = nth;
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = ag_on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    /* The control socket first: a controller can connect while the peers are still coming up. */
    int status = RS_EXIT_OK;
    a.ctx = zmq_ctx_new();
    a.rep = a.ctx ? zmq_socket(a.ctx, ZMQ_REP) : NULL;
    int linger = 1000;
    int64_t maxmsg = AG_MAX_REQ + NCL_WIRE_HDR_LEN;
    const char *ctl = a.table.e[a.rank].control;
    if (a.rep) {
        zmq_setsockopt(a.rep, ZMQ_LINGER, &linger, sizeof linger);
        zmq_setsockopt(a.rep, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg);
    }
    if (!a.rep || zmq_bind(a.rep, ctl) != 0) {
        int bound = 0;
        const char *colon = strrchr(ctl, ':');
        if (a.rep && !strncmp(ctl, "tcp://", 6) && colon) {
            char any[300];
            snprintf(any, sizeof any, "tcp://*%s", colon);
            bound = zmq_bind(a.rep, any) == 0;
        }
        if (!bound) {
            fprintf(err, "ringsim agent: rank %d: cannot bind the control endpoint %s: %s\n", a.rank, ctl,
                    zmq_strerror(errno));
            status = RS_AGENT_EXIT_CONNECT;
            goto out;
        }
    }
    char cerr[1024];
    ncl_result rc = NCL_SUCCESS;
    if (mmio) {
        rs_board_config bc;
        memset(&bc, 0, sizeof bc);
        bc.rank = a.rank;
        bc.nranks = a.nranks;
        bc.endpoints = eps;
        bc.mem_bytes = AG_BOARD_MEM;
        bc.connect_timeout_ns = connect_ns;
        bc.fault_die_nth = zc.fault_die_nth;
        bc.fault_corrupt_nth = zc.fault_corrupt_nth;
        bc.stop = &ag_stop;
        if (rs_board_create(&a.board, &bc, cerr, sizeof cerr)) {
            fprintf(err, "ringsim agent: %s\n", cerr);
            status = RS_AGENT_EXIT_CONNECT;
            goto out;
        }
        a.dmem = rs_board_mem(a.board);
        ncl_mmio_config mc = NCL_MMIO_CONFIG_INIT;
        mc.rank = a.rank;
        mc.nranks = a.nranks;
        mc.ring_base = RS_BOARD_RING_AT;
        mc.scratch_base = RS_BOARD_SCRATCH_AT;
        mc.scratch_bytes = RS_BOARD_SCRATCH_BYTES;
        mc.launch_base = RS_BOARD_LAUNCH_AT; /* peers' calls compared: a mismatch is named */
        mc.contexts = RS_BOARD_CONTEXTS;
        mc.map_base = RS_BOARD_MAP_AT;
        mc.irq = 1;
        mc.max_queues = 4;
        a.bounce = aligned_alloc(16, AG_BOUNCE_BYTES);
        mc.bounce = a.bounce;
        mc.bounce_bytes = AG_BOUNCE_BYTES;
        size_t mb = (ncl_mmio_mem_bytes(&mc) + 15u) / 16u * 16u;
        a.mm_mem = aligned_alloc(16, mb);
        ncl_mmio_access acc;
        rs_board_access(a.board, &acc);
        rc = a.mm_mem && a.bounce ? ncl_mmio_init(&a.mm, a.mm_mem, mb, &mc, &acc) : NCL_ERR_OUT_OF_MEMORY;
        if (rc != NCL_SUCCESS) {
            fprintf(err, "ringsim agent: rank %d: the board did not come up: %s%s%s\n", a.rank, ncl_strerror(rc),
                    a.mm ? ": " : "", a.mm ? ncl_mmio_last_error(a.mm) : "");
            a.mm = NULL; /* only its last error may be read after a failed init */
            status = RS_AGENT_EXIT_CONNECT;
            goto out;
        }
        a.node.dmem = a.dmem;
        a.node.dmem_base = RS_BOARD_HEAP_AT;
        a.node.dmem_bytes = rs_board_mem_bytes(a.board);
    } else {
        rc = ncl_zmq_create(&a.zmq, &zc, cerr, sizeof cerr);
        if (rc != NCL_SUCCESS) {
            fprintf(err, "ringsim agent: %s\n", cerr);
            status = RS_AGENT_EXIT_CONNECT;
            goto out;
        }
    }
    ncl_config cfg = NCL_CONFIG_INIT;
    cfg.alloc = ag_alloc;
    cfg.free = ag_free;
    cfg.timeout_ns = a.timeout_ns;
    cfg.channels = a.channels;
    a.cfg = cfg;
    a.hal = a.board ? ncl_mmio_hal(a.mm) : ncl_zmq_hal(a.zmq);
    if (a.shim.nf) {
        rs_bu_shim_init(&a.shim, a.hal);
        a.hal = &a.shim.hal;
    }
    a.node.hal = a.hal;
    rc = ncl_comm_create(&a.comm, a.nranks, a.rank, a.hal, &cfg);
    if (rc != NCL_SUCCESS) {
        fprintf(err, "ringsim agent: rank %d: ncl_comm_create: %s\n", a.rank, ncl_strerror(rc));
        status = RS_AGENT_EXIT_CONNECT;
        goto out;
    }

    while (!ag_stop) {
        /* On the board, peers' link transfers (notifies, acks) are served between commands too:
         * a peer may begin a collective before this rank does. */
        if (a.board)
            rs_board_service(a.board); /* first: the ring may still hold the last collective's records */
        zmq_pollitem_t it[2] = {{a.rep, 0, ZMQ_POLLIN, 0}, {a.board ? rs_board_socket(a.board) : NULL, 0, ZMQ_POLLIN, 0}};
        int n = zmq_poll(it, a.board ? 2 : 1, a.board ? 100 : 500);
        if (n < 0 && errno != EINTR)
            break;
        if (n <= 0 || !(it[0].revents & ZMQ_POLLIN))
            continue;
        zmq_msg_t f;
        zmq_msg_init(&f);
        if (zmq_msg_recv(&f, a.rep, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&f);
            continue;
        }
        int quit = ag_handle(&a, zmq_msg_data(&f), zmq_msg_size(&f));
        zmq_msg_close(&f);
        if (quit)
            break;
    }
    if (ag_stop) {
        fprintf(err, "ringsim agent: rank %d: stopped by a signal\n", a.rank);
        /* the peers may be in a collective this rank will not finish: ABORT, not their timeout */
        char why[64];
        snprintf(why, sizeof why, "rank %d: stopped by a signal", a.rank);
        ncl_zmq_abort(a.zmq, why);
        if (a.board)
            rs_board_abort(a.board, NCL_ERR_REMOTE, why);
    }
out:
    if (a.node.hal)
        rs_bu_node_release(&a.node);
    ncl_comm_destroy(a.comm);
    ncl_zmq_destroy(a.zmq);
    ncl_mmio_fini(a.mm);
    rs_board_destroy(a.board);
    free(a.mm_mem);
    free(a.bounce);
    if (a.rep)
        zmq_close(a.rep);
    if (a.ctx)
        zmq_ctx_term(a.ctx);
    free(eps);
    rs_ranktable_free(&a.table);
    if (ag_stop) { /* die of the signal, as a process that was not caught would */
        signal(ag_stop, SIG_DFL);
        raise(ag_stop);
    }
    return status;
}
