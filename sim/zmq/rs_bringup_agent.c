/* rs_bringup_agent.c — the agent's side of `ringsim bringup`: HAL-level link tests and the fault shim. */
#define _POSIX_C_SOURCE 200809L
#include "rs_bringup.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ncl/ncl.h"
#include "ncl/ncl_sched.h"

/* Notify ids of the link tests. No collective runs while they do, so they only have to be
 * consumed as often as they are recorded (each wait takes one), and must not touch a counter a
 * collective leaves behind: the landing zones' credits (NCL_NOTIFY_CREDIT, the top ids) carry
 * over to the next collective. The engine records the LOCAL ids (16..23) only to its own rank, so
 * a peer's counters of those ids are free. */
enum { BU_ID_DATA = 16, BU_ID_ACK, BU_ID_PING, BU_ID_PONG, BU_ID_SKIP, BU_ID_FENCE };
#define BU_POISON 0xa5
#define BU_PING_BYTES 4096u
#define BU_MAX_PINGS 1000

const char *const rs_bu_pattern_names[RS_BU_PATTERNS] = {"walking-ones", "zeros", "ones", "seeded"};

static uint64_t bu_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- the fault shim ----------------------------------------------------------------------------- */

int rs_bu_shim_parse(rs_bu_shim *s, int rank, int nranks, const char *spec, char *err, size_t errlen)
{
    s->rank = rank;
    s->nranks = nranks;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", spec);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        rs_bu_fault f = {-1, 0, -1, 0};
        char kind[16] = "";
        double arg = 0;
        int n = 0;
        if (s->nf >= RS_BU_MAX_FAULTS) {
            snprintf(err, errlen, "--fault: more than %d faults", RS_BU_MAX_FAULTS);
            return -1;
        }
        if (sscanf(tok, "%d:%15[a-z]%n", &f.peer, kind, &n) != 2 || f.peer < 0 || f.peer >= nranks ||
            f.peer == rank) {
            snprintf(err, errlen, "--fault: '%s': the peer must be another rank 0..%d (allowed: PEER:dead, "
                     "PEER:slow:GBPS, PEER:corrupt, PEER:miswire:RANK)", tok, nranks - 1);
            return -1;
        }
        const char *rest = tok + n;
        char *end = NULL;
        if (*rest == ':')
            arg = strtod(rest + 1, &end);
        if (!strcmp(kind, "dead") && !*rest) {
            f.kind = RS_BU_DEAD;
        } else if (!strcmp(kind, "corrupt") && !*rest) {
            f.kind = RS_BU_CORRUPT;
        } else if (!strcmp(kind, "slow") && *rest == ':' && end != rest + 1 && !*end && arg > 0 && arg < 1e4) {
            f.kind = RS_BU_SLOW;
            f.gbps = arg;
        } else if (!strcmp(kind, "miswire") && *rest == ':' && end != rest + 1 && !*end && arg >= 0 && arg < nranks &&
                   arg == (double)(int)arg && (int)arg != rank && (int)arg != f.peer) {
            f.kind = RS_BU_MISWIRE;
            f.to = (int)arg;
        } else {
            snprintf(err, errlen, "--fault: '%s' (allowed: PEER:dead, PEER:slow:GBPS with GBPS > 0, PEER:corrupt, "
                     "PEER:miswire:RANK with RANK another rank than this one and PEER)", tok);
            return -1;
        }
        s->f[s->nf++] = f;
    }
    return 0;
}

static const rs_bu_fault *bu_fault_to(const rs_bu_shim *s, int peer)
{
    for (int i = 0; i < s->nf; i++)
        if (s->f[i].peer == peer)
            return &s->f[i];
    return NULL;
}

static ncl_result bu_caps(void *ctx, ncl_hal_caps *out)
{
    rs_bu_shim *s = ctx;
    return ncl_hal_caps_get(s->inner, out);
}

static ncl_result bu_begin(void *ctx, const ncl_hal_launch *l)
{
    rs_bu_shim *s = ctx;
    s->base[NCL_BUF_SEND] = (unsigned char *)(uintptr_t)l->send;
    s->size[NCL_BUF_SEND] = l->send_bytes;
    s->base[NCL_BUF_RECV] = l->recv;
    s->size[NCL_BUF_RECV] = l->recv_bytes;
    return ncl_hal_begin(s->inner, l);
}

static ncl_result bu_end(void *ctx, ncl_result result)
{
    rs_bu_shim *s = ctx;
    memset(s->base, 0, sizeof s->base);
    memset(s->size, 0, sizeof s->size);
    return ncl_hal_end(s->inner, result);
}

static ncl_result bu_submit(void *ctx, uint32_t queue, const ncl_task *t)
{
    rs_bu_shim *s = ctx;
    int remote = (t->kind == NCL_TASK_WRITE || t->kind == NCL_TASK_WRITE_REDUCE) && t->peer != s->rank;
    const rs_bu_fault *f = remote ? bu_fault_to(s, t->peer) : NULL;
    if (!f)
        return ncl_hal_dma_submit(s->inner, queue, t);
    switch (f->kind) {
    case RS_BU_DEAD:
        return NCL_SUCCESS; /* completes locally, never arrives */
    case RS_BU_MISWIRE: {
        ncl_task m = *t;
        m.peer = f->to;
        return ncl_hal_dma_submit(s->inner, queue, &m);
    }
    case RS_BU_SLOW: {
        ncl_result rc = ncl_hal_dma_submit(s->inner, queue, t);
        /* in steps of at most 10 ms, so a stopping agent does not sleep out a long transfer */
        uint64_t end = bu_now_ns() + (uint64_t)((double)t->bytes / f->gbps);
        for (uint64_t now = bu_now_ns(); now < end && !(s->stop && *s->stop); now = bu_now_ns()) {
            uint64_t ns = end - now < 10000000u ? end - now : 10000000u;
            struct timespec ts = {0, (long)ns};
            nanosleep(&ts, NULL);
        }
        return rc;
    }
    default: {
        /* The backend copies the source into its frame inside dma_submit: damage, send, restore. */
        unsigned char *src = t->src.buf < NCL_BUF_SCRATCH ? s->base[t->src.buf] : NULL;
        if (!src || t->src.off > s->size[t->src.buf] || t->bytes > s->size[t->src.buf] - t->src.off)
            return ncl_hal_dma_submit(s->inner, queue, t);
        src += t->src.off;
        uint64_t first = (123u + 4096u - t->dst.off % 4096u) % 4096u;
        for (uint64_t i = first; i < t->bytes; i += 4096)
            src[i] ^= 0x10;
        ncl_result rc = ncl_hal_dma_submit(s->inner, queue, t);
        for (uint64_t i = first; i < t->bytes; i += 4096)
            src[i] ^= 0x10;
        return rc;
    }
    }
}

static ncl_result bu_poll(void *ctx, uint32_t queue, int *done)
{
    rs_bu_shim *s = ctx;
    return ncl_hal_dma_poll(s->inner, queue, done);
}

static ncl_result bu_record(void *ctx, uint32_t queue, int peer, uint32_t id)
{
    rs_bu_shim *s = ctx;
    const rs_bu_fault *f = peer != s->rank ? bu_fault_to(s, peer) : NULL;
    if (f && f->kind == RS_BU_DEAD)
        return NCL_SUCCESS;
    return ncl_hal_notify_record(s->inner, queue, peer, id);
}

static ncl_result bu_try_wait(void *ctx, int peer, uint32_t id, uint32_t count, int *done)
{
    rs_bu_shim *s = ctx;
    return ncl_hal_notify_try_wait(s->inner, peer, id, count, done);
}

static ncl_result bu_wait_event(void *ctx, uint64_t timeout_ns)
{
    rs_bu_shim *s = ctx;
    return ncl_hal_wait_event(s->inner, timeout_ns);
}

static uint64_t bu_hal_now(void *ctx)
{
    rs_bu_shim *s = ctx;
    return ncl_hal_now_ns(s->inner);
}

static void bu_log(void *ctx, int level, const char *msg)
{
    rs_bu_shim *s = ctx;
    ncl_hal_log(s->inner, level, msg);
}

static const ncl_hal_ops bu_shim_ops = {
    .caps = bu_caps,
    .begin = bu_begin,
    .end = bu_end,
    .dma_submit = bu_submit,
    .dma_poll = bu_poll,
    .notify_record = bu_record,
    .notify_try_wait = bu_try_wait,
    .wait_event = bu_wait_event,
    .now_ns = bu_hal_now,
    .log = bu_log,
};

void rs_bu_shim_init(rs_bu_shim *s, const ncl_hal *inner)
{
    s->inner = inner;
    s->hal.ops = &bu_shim_ops;
    s->hal.ctx = s;
}

/* ---- patterns ----------------------------------------------------------------------------------- */

static uint64_t bu_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Seeded word i of a region: a pseudo-random mask over (src, dst, i), so a receiver that knows
 * the seed and the word's place can tell whose data it is and whether it sits at its offset. */
static uint64_t bu_seeded_word(uint64_t seed, int src, int dst, uint64_t i)
{
    return bu_mix(seed ^ (i * 0x100000001b3ull)) ^ ((uint64_t)(uint16_t)src << 48 | (uint64_t)(uint16_t)dst << 32 |
                                                    (i & 0xffffffffu));
}

/* 1 and (src, dst) if the word at index i decodes as seeded data. */
static int bu_seeded_decode(uint64_t seed, uint64_t w, uint64_t i, int nranks, int *src, int *dst)
{
    uint64_t x = w ^ bu_mix(seed ^ (i * 0x100000001b3ull));
    if ((x & 0xffffffffu) != (i & 0xffffffffu))
        return 0;
    *src = (int)(x >> 48);
    *dst = (int)((x >> 32) & 0xffff);
    return *src < nranks && *dst < nranks;
}

static void bu_fill(unsigned char *b, uint64_t len, int pattern, uint64_t seed, int src, int dst)
{
    switch (pattern) {
    case 0:
        for (uint64_t i = 0; i + 4 <= len; i += 4) {
            uint32_t w = 1u << ((i / 4) % 32);
            memcpy(b + i, &w, 4);
        }
        break;
    case 1:
        memset(b, 0x00, len);
        break;
    case 2:
        memset(b, 0xff, len);
        break;
    default:
        for (uint64_t i = 0; i + 8 <= len; i += 8) {
            uint64_t w = bu_seeded_word(seed, src, dst, i / 8);
            memcpy(b + i, &w, 8);
        }
        break;
    }
}

/* ---- layout ------------------------------------------------------------------------------------- */

static uint64_t bu_bw_off(const rs_bu_node *n, int src)
{
    return BU_PING_BYTES + (uint64_t)src * n->bytes;
}

static uint64_t bu_pat_off(const rs_bu_node *n, int src, int dst, int pattern)
{
    return BU_PING_BYTES + (uint64_t)n->nranks * n->bytes +
           (((uint64_t)src * (uint64_t)n->nranks + (uint64_t)dst) * RS_BU_PATTERNS + (uint64_t)pattern) * n->slot;
}

void rs_bu_node_release(rs_bu_node *n)
{
    if (n->bound)
        ncl_hal_end(n->hal, NCL_SUCCESS);
    n->bound = 0;
    if (!n->dmem) {
        free(n->send);
        free(n->recv);
    }
    free(n->expect);
    n->send = n->recv = n->expect = NULL;
}

/* ---- HAL steps ---------------------------------------------------------------------------------- */

static ncl_result bu_write(rs_bu_node *n, int peer, uint64_t dst_off, uint64_t bytes)
{
    ncl_task t;
    memset(&t, 0, sizeof t);
    t.kind = NCL_TASK_WRITE;
    t.peer = peer;
    t.src.buf = NCL_BUF_SEND;
    t.dst.buf = NCL_BUF_RECV;
    t.dst.off = dst_off;
    t.bytes = bytes;
    ncl_result rc = ncl_hal_dma_submit(n->hal, 0, &t);
    for (int done = 0; rc == NCL_SUCCESS && !done;) {
        rc = ncl_hal_dma_poll(n->hal, 0, &done);
        if (rc == NCL_SUCCESS && !done)
            rc = ncl_hal_wait_event(n->hal, 1000000);
    }
    return rc;
}

/* Waits for one record (peer, id), or for one of `alt` when alt >= 0 (*which says which).
 * Returns 0, 1 on timeout, -1 on a backend error (why filled). */
static int bu_wait(rs_bu_node *n, int peer, uint32_t id, int alt, uint64_t timeout_ns, int *which, char *why,
                   size_t len)
{
    uint64_t t0 = bu_now_ns();
    for (;;) {
        int done = 0;
        ncl_result rc = ncl_hal_notify_try_wait(n->hal, peer, id, 1, &done);
        if (rc == NCL_SUCCESS && !done && alt >= 0) {
            rc = ncl_hal_notify_try_wait(n->hal, peer, (uint32_t)alt, 1, &done);
            if (done && which)
                *which = alt;
        } else if (done && which) {
            *which = (int)id;
        }
        if (rc != NCL_SUCCESS) {
            snprintf(why, len, "%s", ncl_strerror(rc));
            return -1;
        }
        if (done)
            return 0;
        uint64_t el = bu_now_ns() - t0;
        if (el >= timeout_ns || (n->stop && *n->stop))
            return 1;
        uint64_t left = timeout_ns - el;
        ncl_hal_wait_event(n->hal, left < 10000000u ? left : 10000000u);
    }
}

/* Drops records left over from an earlier test that gave up (a late ACK on a slow link). */
static void bu_flush(rs_bu_node *n, int peer)
{
    ncl_hal_wait_event(n->hal, 0);
    for (uint32_t id = BU_ID_DATA; id <= BU_ID_SKIP; id++)
        for (int done = 1; done;)
            if (ncl_hal_notify_try_wait(n->hal, peer, id, 1, &done) != NCL_SUCCESS)
                break;
}

/* Bytes of got that differ from want; first bad offset in *first (-1 when none). */
static uint64_t bu_diff(const unsigned char *got, const unsigned char *want, uint64_t len, int64_t *first)
{
    uint64_t wrong = 0;
    *first = -1;
    for (uint64_t i = 0; i < len; i++)
        if (got[i] != want[i]) {
            if (*first < 0)
                *first = (int64_t)i;
            wrong++;
        }
    return wrong;
}

/* What a region holds instead of the expected data: "poison" (nothing arrived), or the (src, dst)
 * decoded from the most seeded words, or "unknown". */
static void bu_whose(const rs_bu_node *n, const unsigned char *b, uint64_t len, cJSON *o)
{
    uint64_t poison = 0, decoded = 0;
    int best_s = -1, best_d = -1;
    for (uint64_t i = 0; i < len; i++)
        poison += b[i] == BU_POISON;
    for (uint64_t i = 0; i + 8 <= len; i += 8) {
        uint64_t w;
        int s, d;
        memcpy(&w, b + i, 8);
        if (bu_seeded_decode(n->seed, w, i / 8, n->nranks, &s, &d)) {
            decoded++;
            best_s = s;
            best_d = d;
        }
    }
    cJSON_AddNumberToObject(o, "poison_bytes", (double)poison);
    if (decoded) {
        cJSON_AddNumberToObject(o, "from_src", best_s);
        cJSON_AddNumberToObject(o, "from_dst", best_d);
    }
}

/* ---- requests ----------------------------------------------------------------------------------- */

static int bu_int(const cJSON *o, const char *k, double lo, double hi, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(v) || v->valuedouble < lo || v->valuedouble > hi || v->valuedouble != (double)(int64_t)v->valuedouble)
        return -1;
    *out = v->valuedouble;
    return 0;
}

static cJSON *bu_begin_test(rs_bu_node *n, const cJSON *req, char *why, size_t len)
{
    double bytes, slot, seed;
    if (bu_int(req, "bytes", 8, (double)(256u << 20), &bytes) || (uint64_t)bytes % 8 ||
        bu_int(req, "slot", 8, (double)(16u << 20), &slot) || (uint64_t)slot % 8 ||
        bu_int(req, "seed", 0, 9007199254740991.0, &seed)) {
        snprintf(why, len, "SELFTEST begin: bytes (8..256 MiB), slot (8..16 MiB), both multiples of 8, and seed "
                 "are required integers");
        return NULL;
    }
    rs_bu_node_release(n);
    n->bytes = (uint64_t)bytes;
    n->slot = (uint64_t)slot;
    n->seed = (uint64_t)seed;
    n->send_bytes = n->bytes > n->slot ? n->bytes : n->slot;
    n->recv_bytes = bu_pat_off(n, n->nranks, 0, 0);
    uint64_t recv_at = n->dmem_base + (n->send_bytes + 63) / 64 * 64;
    if (n->dmem && (recv_at > n->dmem_bytes || n->recv_bytes > n->dmem_bytes - recv_at)) {
        snprintf(why, len, "SELFTEST begin: %llu + %llu bytes do not fit the board's device memory (%llu bytes from "
                 "0x%llx; allowed: smaller bytes / slot)", (unsigned long long)n->send_bytes,
                 (unsigned long long)n->recv_bytes, (unsigned long long)(n->dmem_bytes - n->dmem_base),
                 (unsigned long long)n->dmem_base);
        return NULL;
    }
    n->send = n->dmem ? n->dmem + n->dmem_base : malloc(n->send_bytes);
    n->expect = malloc(n->send_bytes);
    n->recv = n->dmem ? n->dmem + recv_at : malloc(n->recv_bytes);
    if (!n->send || !n->recv || !n->expect) {
        rs_bu_node_release(n);
        snprintf(why, len, "SELFTEST begin: cannot allocate %llu bytes", (unsigned long long)n->recv_bytes);
        return NULL;
    }
    memset(n->recv, BU_POISON, n->recv_bytes);
    memset(n->send, 0, n->send_bytes);
    ncl_hal_launch l;
    memset(&l, 0, sizeof l);
    l.send = n->send;
    l.recv = n->recv;
    if (n->dmem) { /* the backend takes device addresses */
        l.send = (const void *)(uintptr_t)(n->send - n->dmem);
        l.recv = (void *)(uintptr_t)(n->recv - n->dmem);
    }
    l.send_bytes = n->send_bytes;
    l.recv_bytes = n->recv_bytes;
    ncl_result rc = ncl_hal_begin(n->hal, &l);
    if (rc != NCL_SUCCESS) {
        rs_bu_node_release(n);
        snprintf(why, len, "SELFTEST begin: the backend refused the buffers: %s", ncl_strerror(rc));
        return NULL;
    }
    n->bound = 1;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "rank", n->rank);
    cJSON_AddBoolToObject(j, "ok", 1);
    cJSON_AddNumberToObject(j, "recv_bytes", (double)n->recv_bytes);
    return j;
}

/* The source's side of one directed link test. */
static void bu_link_src(rs_bu_node *n, int dst, int reps, int pings, uint64_t tmo, cJSON *j)
{
    char why[256] = "";
    int acks = 0, no_ack = 0;
    const char *err = NULL;
    /* Every timed transfer is reported, not the best one: the controller judges a link by its
     * samples' median and spread against the run's noise (sim/zmq/ZMQ.md, "The noise model"). */
    double *gbps = calloc((size_t)reps, sizeof *gbps);
    if (!gbps)
        err = "cannot allocate the bandwidth samples";
    bu_fill(n->send, n->bytes, 3, n->seed, n->rank, dst);
    /* Transfer 0 is an untimed warm-up: it ends once the destination is in its side of the test
     * (the controller starts both sides at once) and the path's buffers are touched; timed, it
     * would be 10-100x slower than the rest. */
    for (int r = 0; r <= reps && !err; r++) {
        uint64_t t0 = bu_now_ns();
        if (bu_write(n, dst, bu_bw_off(n, n->rank), n->bytes) != NCL_SUCCESS ||
            ncl_hal_notify_record(n->hal, 0, dst, BU_ID_DATA) != NCL_SUCCESS) {
            err = "the backend refused the write";
            break;
        }
        if (no_ack)
            continue;
        int w = bu_wait(n, dst, BU_ID_ACK, -1, tmo, NULL, why, sizeof why);
        if (w < 0)
            err = why;
        else if (w > 0)
            no_ack = 1; /* the reverse direction is the suspect: keep sending, stop timing */
        else if (r > 0)
            gbps[acks++] = (double)n->bytes / (double)(bu_now_ns() - t0);
    }
    for (int p = 0; p < RS_BU_PATTERNS && !err; p++) {
        bu_fill(n->send, n->slot, p, n->seed, n->rank, dst);
        if (bu_write(n, dst, bu_pat_off(n, n->rank, dst, p), n->slot) != NCL_SUCCESS ||
            ncl_hal_notify_record(n->hal, 0, dst, BU_ID_DATA) != NCL_SUCCESS)
            err = "the backend refused the write";
    }
    double *rtt = calloc((size_t)(pings > 0 ? pings : 1), sizeof *rtt);
    int got = 0;
    if (!err && !no_ack && rtt) {
        memset(n->send, 0x3c, 8);
        for (int p = 0; p < pings + 2 && !err; p++) { /* two warm-up rounds */
            uint64_t t0 = bu_now_ns();
            if (bu_write(n, dst, 0, 8) != NCL_SUCCESS || ncl_hal_notify_record(n->hal, 0, dst, BU_ID_PING) != NCL_SUCCESS) {
                err = "the backend refused the ping";
                break;
            }
            int w = bu_wait(n, dst, BU_ID_PONG, -1, tmo, NULL, why, sizeof why);
            if (w < 0)
                err = why;
            if (w)
                break;
            if (p >= 2)
                rtt[got++] = (double)(bu_now_ns() - t0) / 1e3;
        }
    } else if (!err) {
        ncl_hal_notify_record(n->hal, 0, dst, BU_ID_SKIP);
    }
    cJSON_AddNumberToObject(j, "acks", acks);
    cJSON_AddBoolToObject(j, "no_ack", no_ack);
    cJSON_AddItemToObject(j, "samples_gbps", cJSON_CreateDoubleArray(gbps ? gbps : (double[]){0}, acks));
    cJSON_AddItemToObject(j, "rtt_us", cJSON_CreateDoubleArray(rtt ? rtt : (double[]){0}, got));
    cJSON_AddStringToObject(j, "error", err ? err : "");
    free(rtt);
    free(gbps);
}

/* The destination's side: waits for every transfer, acknowledges the timed ones, checks all. */
static void bu_link_dst(rs_bu_node *n, int src, int reps, int pings, uint64_t tmo, cJSON *j)
{
    char why[256] = "";
    const char *err = NULL;
    int timeout = 0, got_data = 0;
    uint64_t off = bu_bw_off(n, src);
    cJSON *pats = cJSON_CreateArray();
    /* bandwidth transfers (a warm-up, then reps timed): acknowledged at once (that is the sender's
     * clock), checked after */
    int64_t first_bad = -1;
    uint64_t wrong = 0;
    bu_fill(n->expect, n->bytes, 3, n->seed, src, n->rank);
    /* After the first transfer the source may sit out a whole timeout waiting for an ACK that a
     * dead reverse link never delivers: give it that long, and as long again. */
    for (int r = 0; r <= reps && !err && !timeout; r++) {
        int w = bu_wait(n, src, BU_ID_DATA, -1, r ? 2 * tmo : tmo, NULL, why, sizeof why);
        if (w < 0)
            err = why;
        else if (w > 0)
            timeout = 1;
        else {
            got_data++;
            ncl_hal_notify_record(n->hal, 0, src, BU_ID_ACK);
            int64_t f;
            uint64_t wr = bu_diff(n->recv + off, n->expect, n->bytes, &f);
            if (wr > wrong) {
                wrong = wr;
                first_bad = f;
            }
        }
    }
    if (got_data) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", "bandwidth");
        cJSON_AddNumberToObject(o, "bytes", (double)n->bytes);
        cJSON_AddNumberToObject(o, "wrong", (double)wrong);
        cJSON_AddNumberToObject(o, "first_bad", (double)first_bad);
        if (wrong)
            bu_whose(n, n->recv + off, n->bytes, o);
        cJSON_AddItemToArray(pats, o);
    }
    for (int p = 0; p < RS_BU_PATTERNS && !err && !timeout; p++) {
        int w = bu_wait(n, src, BU_ID_DATA, -1, 2 * tmo, NULL, why, sizeof why);
        if (w < 0)
            err = why;
        else if (w > 0)
            timeout = 1;
        if (w)
            break;
        got_data++;
        unsigned char *at = n->recv + bu_pat_off(n, src, n->rank, p);
        bu_fill(n->expect, n->slot, p, n->seed, src, n->rank);
        int64_t f;
        uint64_t wr = bu_diff(at, n->expect, n->slot, &f);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", rs_bu_pattern_names[p]);
        cJSON_AddNumberToObject(o, "bytes", (double)n->slot);
        cJSON_AddNumberToObject(o, "wrong", (double)wr);
        cJSON_AddNumberToObject(o, "first_bad", (double)f);
        if (wr)
            bu_whose(n, at, n->slot, o);
        cJSON_AddItemToArray(pats, o);
    }
    int pinged = 0;
    if (!err && !timeout) {
        /* the source pings only if our ACKs reached it; otherwise it says SKIP */
        for (int p = 0; p < pings + 2; p++) {
            int which = -1;
            int w = bu_wait(n, src, BU_ID_PING, p == 0 ? BU_ID_SKIP : -1, 2 * tmo, &which, why, sizeof why);
            if (w < 0)
                err = why;
            if (w || which == BU_ID_SKIP)
                break;
            memset(n->send, 0xc3, 8);
            if (bu_write(n, src, 8, 8) != NCL_SUCCESS || ncl_hal_notify_record(n->hal, 0, src, BU_ID_PONG) != NCL_SUCCESS) {
                err = "the backend refused the pong";
                break;
            }
            pinged++;
        }
    }
    cJSON_AddNumberToObject(j, "transfers", got_data);
    cJSON_AddNumberToObject(j, "expected_transfers", 1 + reps + RS_BU_PATTERNS);
    cJSON_AddBoolToObject(j, "timeout", timeout);
    cJSON_AddNumberToObject(j, "pongs", pinged);
    cJSON_AddItemToObject(j, "patterns", pats);
    cJSON_AddStringToObject(j, "error", err ? err : "");
}

static cJSON *bu_link_test(rs_bu_node *n, const cJSON *req, char *why, size_t len)
{
    double src, dst, reps, pings, tmo_ms;
    if (!n->bound) {
        snprintf(why, len, "SELFTEST link: no 'begin' before it (the bring-up buffers are not bound)");
        return NULL;
    }
    if (bu_int(req, "src", 0, n->nranks - 1, &src) || bu_int(req, "dst", 0, n->nranks - 1, &dst) || src == dst ||
        bu_int(req, "reps", 1, 100, &reps) || bu_int(req, "pings", 0, BU_MAX_PINGS, &pings) ||
        bu_int(req, "timeout_ms", 1, 3600000, &tmo_ms)) {
        snprintf(why, len, "SELFTEST link: src, dst (two ranks 0..%d), reps (1..100), pings (0..%d) and timeout_ms "
                 "are required integers", n->nranks - 1, BU_MAX_PINGS);
        return NULL;
    }
    if ((int)src != n->rank && (int)dst != n->rank) {
        snprintf(why, len, "SELFTEST link %d->%d: rank %d is not on this link", (int)src, (int)dst, n->rank);
        return NULL;
    }
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "rank", n->rank);
    cJSON_AddBoolToObject(j, "ok", 1);
    cJSON_AddStringToObject(j, "role", (int)src == n->rank ? "src" : "dst");
    int peer = (int)src == n->rank ? (int)dst : (int)src;
    /* The destination flushed at "arm", before the source started; the source flushes now,
     * before it sends anything the destination could answer. */
    if ((int)src == n->rank)
        bu_flush(n, peer);
    uint64_t tmo = (uint64_t)(tmo_ms * 1e6);
    if ((int)src == n->rank)
        bu_link_src(n, peer, (int)reps, (int)pings, tmo, j);
    else
        bu_link_dst(n, peer, (int)reps, (int)pings, tmo, j);
    return j;
}

/* Everyone fences with everyone (a link's frames before its FENCE are applied when the FENCE is),
 * then reports data found in slots this rank never receives (a miswired sender's), and unbinds. */
static cJSON *bu_end_test(rs_bu_node *n, const cJSON *req, char *why, size_t len)
{
    double tmo_ms;
    if (!n->bound) {
        snprintf(why, len, "SELFTEST end: no 'begin' before it");
        return NULL;
    }
    if (bu_int(req, "timeout_ms", 1, 3600000, &tmo_ms)) {
        snprintf(why, len, "SELFTEST end: timeout_ms is a required integer");
        return NULL;
    }
    for (int p = 0; p < n->nranks; p++)
        if (p != n->rank)
            ncl_hal_notify_record(n->hal, 0, p, BU_ID_FENCE);
    cJSON *j = cJSON_CreateObject(), *missing = cJSON_CreateArray(), *foreign = cJSON_CreateArray();
    uint64_t t0 = bu_now_ns(), tmo = (uint64_t)(tmo_ms * 1e6);
    const cJSON *skip = cJSON_GetObjectItemCaseSensitive(req, "skip");
    for (int p = 0; p < n->nranks; p++) {
        int skipped = 0;
        for (const cJSON *x = cJSON_IsArray(skip) ? skip->child : NULL; x; x = x->next)
            skipped |= cJSON_IsNumber(x) && x->valueint == p;
        if (p == n->rank || skipped)
            continue;
        uint64_t el = bu_now_ns() - t0;
        if (bu_wait(n, p, BU_ID_FENCE, -1, el < tmo ? tmo - el : 1, NULL, why, len) != 0)
            cJSON_AddItemToArray(missing, cJSON_CreateNumber(p));
    }
    for (int s = 0; s < n->nranks; s++)
        for (int d = 0; d < n->nranks; d++) {
            if (d == n->rank || s == d)
                continue;
            uint64_t bytes = 0;
            for (int p = 0; p < RS_BU_PATTERNS; p++) {
                const unsigned char *b = n->recv + bu_pat_off(n, s, d, p);
                for (uint64_t i = 0; i < n->slot; i++)
                    bytes += b[i] != BU_POISON;
            }
            if (!bytes)
                continue;
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "slot_src", s);
            cJSON_AddNumberToObject(o, "slot_dst", d);
            cJSON_AddNumberToObject(o, "bytes", (double)bytes);
            bu_whose(n, n->recv + bu_pat_off(n, s, d, RS_BU_PATTERNS - 1), n->slot, o);
            cJSON_AddItemToArray(foreign, o);
        }
    ncl_hal_end(n->hal, NCL_SUCCESS);
    n->bound = 0;
    cJSON_AddNumberToObject(j, "rank", n->rank);
    cJSON_AddBoolToObject(j, "ok", 1);
    cJSON_AddItemToObject(j, "fence_missing", missing);
    cJSON_AddItemToObject(j, "foreign", foreign);
    rs_bu_node_release(n);
    return j;
}

/* Prepares this rank to receive from `src`: drops stale records from it, poisons its slots.
 * The controller arms the destination before it starts the source: a flush that ran while the
 * source already sends would eat the test's own records. */
static cJSON *bu_arm(rs_bu_node *n, const cJSON *req, char *why, size_t len)
{
    double src;
    if (!n->bound) {
        snprintf(why, len, "SELFTEST arm: no 'begin' before it (the bring-up buffers are not bound)");
        return NULL;
    }
    if (bu_int(req, "src", 0, n->nranks - 1, &src) || (int)src == n->rank) {
        snprintf(why, len, "SELFTEST arm: src must be another rank 0..%d", n->nranks - 1);
        return NULL;
    }
    bu_flush(n, (int)src);
    memset(n->recv + bu_bw_off(n, (int)src), BU_POISON, n->bytes);
    for (int p = 0; p < RS_BU_PATTERNS; p++)
        memset(n->recv + bu_pat_off(n, (int)src, n->rank, p), BU_POISON, n->slot);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "rank", n->rank);
    cJSON_AddBoolToObject(j, "ok", 1);
    return j;
}

cJSON *rs_bu_node_handle(rs_bu_node *n, const cJSON *req, char *why, size_t len)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(req, "test");
    const char *s = cJSON_IsString(t) ? t->valuestring : "";
    if (!strcmp(s, "begin"))
        return bu_begin_test(n, req, why, len);
    if (!strcmp(s, "arm"))
        return bu_arm(n, req, why, len);
    if (!strcmp(s, "link"))
        return bu_link_test(n, req, why, len);
    if (!strcmp(s, "end"))
        return bu_end_test(n, req, why, len);
    snprintf(why, len, "SELFTEST: test '%s' (allowed: begin, arm, link, end, ring; or no payload for the self-test)", s);
    return NULL;
}
