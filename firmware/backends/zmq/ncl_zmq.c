/* ncl_zmq.c — the zmq HAL backend: one process per rank; WRITE/WRITE_REDUCE/NOTIFY travel as wire frames. */
#define _POSIX_C_SOURCE 200809L

#include "ncl/ncl_zmq.h"

#include "ncl/ncl_dtype.h"
#include "ncl/ncl_wire.h"
#include "ncl_backend.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

/* A dropped connection becomes a death only if no BYE follows within this time: the BYE travels
 * on the peer's connection to us, the drop is seen on ours to it, so they race. */
#define ZQ_GRACE_NS 500000000ull
#define ZQ_LINGER_MS 2000
#define ZQ_ERRLEN 512

enum { ZL_UP = 0, ZL_LEFT, ZL_DEAD, ZL_BROKEN };

typedef struct zq_peer {
    void *dealer;            /* our connection to the peer's ROUTER (NULL for self) */
    void *mon;               /* PAIR reading the dealer's monitor events */
    char *endpoint;
    int hello_rx, ack_rx;    /* their HELLO arrived (and was answered) / their HELLO_ACK arrived */
    int state;               /* ZL_* */
    uint64_t drop_ns;        /* when the connection dropped (0: it did not) */
    uint32_t tx_payload;     /* agreed max payload towards the peer */
    int coll_ok;             /* NCL_WIRE_CAP_COLL agreed: our NOTIFYs carry tags, ABORT may go */
    int desc_ok;             /* NCL_WIRE_CAP_DESC agreed too: our tagged NOTIFYs carry the call's descriptor */
    uint64_t call;           /* the latest collective tag the peer sent: its call number... */
    uint8_t coll;            /* ...and kind (call 0: none seen) */
    int has_desc;            /* ...and that call's descriptor, if it came with one */
    ncl_wire_desc desc;
    uint64_t seq;
    ncl_zmq_link st;
} zq_peer;

struct ncl_zmq {
    ncl_hal hal;
    int nranks, rank;
    /* Two contexts so a close can flush the outgoing BYEs (terminating ctx_tx waits for them)
     * before the ROUTER goes away: peers then see our BYE before our connection drops. */
    void *ctx_tx, *ctx_rx;
    void *router;
    zq_peer *peers;
    zmq_pollitem_t *items;   /* [0] router, [1..] monitors */
    int *item_peer;          /* the peer of items[k] */
    int nitems;
    uint32_t *ctr;           /* [sender * NCL_NOTIFY_IDS + id] */
    unsigned char *scratch;
    uint64_t scratch_bytes;
    unsigned char *bounce;   /* max_payload bytes, 64-aligned: a reduce payload ZeroMQ left misaligned */
    unsigned char *stage;    /* max_payload bytes, 64-aligned: a REDUCE_WRITE's src op src2 on its way out */
    ncl_bk_bufs bufs;        /* the running collective's buffers */
    uint64_t seq;            /* collective being run (its call number on this backend, 1 for the first) */
    uint64_t calls;          /* collectives begun on this backend */
    uint8_t coll;            /* and its kind (ncl_coll): the tag our NOTIFYs carry */
    ncl_wire_desc desc;      /* and its descriptor (count, dtype, op, ...), compared with the peers' */
    uint64_t done;           /* the last call that ended well here (an ABORT's done_call) */
    int event;               /* something happened that wait_event has not reported */
    ncl_result sticky;       /* first failure (link, mismatch, failed collective, ABORT): every later op
                                returns it, the communicator is broken until destroyed */
    char err[ZQ_ERRLEN];
    char engine_err[ZQ_ERRLEN]; /* the engine's last error-level log line: an ABORT's reason when the
                                   failure is the engine's own (a timeout) */
    int abort_origin;        /* where the failure that broke us started, if another rank; else -1 */
    char relay[ZQ_ERRLEN];   /* that rank's own reason, which our ABORT passes on */
    int pending_origin;      /* an ABORT received while running a call its sender finished (-1:  */
    char pending[ZQ_ERRLEN]; /* none): it breaks us when the call ends, so the call can complete */
    char pending_relay[ZQ_ERRLEN];
    int abort_sent;          /* ABORT went to the peers (once per backend) */
    ncl_wire_limits lim;
    ncl_wire_hello mine;
    uint64_t data_tx;        /* data frames sent, for the fault hooks */
    uint64_t corrupt_nth, die_nth;
    int log_level;
    ncl_log_fn log; /* the program's sink, or NULL: stderr */
    void *log_ud;
};

/* ---- time, log, errors ------------------------------------------------------------------- */

static uint64_t zq_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void zq_log(void *ctx, int level, const char *msg)
{
    const ncl_zmq *z = ctx;
    if (level > z->log_level)
        return;
    if (z->log)
        z->log(z->log_ud, z->rank, level, msg ? msg : "");
    else
        fprintf(stderr, "[ncl zmq rank %d] %s: %s\n", z->rank, ncl_bk_log_level_name(level), msg ? msg : "");
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void zq_logf(ncl_zmq *z, int level, const char *fmt, ...)
{
    if (level > z->log_level)
        return;
    char msg[ZQ_ERRLEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    zq_log(z, level, msg);
}

/* Records the first failure (it names the peer) and logs every one. Returns rc. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static ncl_result zq_fail(ncl_zmq *z, ncl_result rc, const char *fmt, ...)
{
    char msg[ZQ_ERRLEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!z->err[0])
        snprintf(z->err, sizeof z->err, "%s", msg);
    zq_log(z, NCL_LOG_ERROR, msg);
    return rc;
}

/* The communicator is broken from now on: the failure sticks (every later op returns it). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void zq_stick(ncl_zmq *z, ncl_result rc, const char *fmt, ...)
{
    char msg[ZQ_ERRLEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (z->sticky == NCL_SUCCESS)
        z->sticky = rc;
    zq_fail(z, rc, "%s", msg);
    z->event = 1;
}

/* A link is unusable from now on, and so the communicator (the collective cannot be trusted). */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static void zq_break(ncl_zmq *z, int peer, ncl_result rc, const char *fmt, ...)
{
    char msg[ZQ_ERRLEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (peer >= 0 && peer < z->nranks)
        z->peers[peer].state = ZL_BROKEN;
    zq_stick(z, rc, "%s", msg);
}

/* The HAL's log op: the engine's error lines are kept, an ABORT carries the last one when the
 * failure is the engine's own (a timeout, a local error) and the backend saw nothing itself. */
static void zq_hal_log(void *ctx, int level, const char *msg)
{
    ncl_zmq *z = ctx;
    if (z && level == NCL_LOG_ERROR && msg)
        snprintf(z->engine_err, sizeof z->engine_err, "%s", msg);
    if (!z->log) /* with a sink, the program's ncl_config.log has them from the engine */
        zq_log(ctx, level, msg);
}

/* NCL_ZMQ_LOG when set (to debug a program without rebuilding it), else the configured level. */
static int zq_log_level(const ncl_zmq_config *cfg)
{
    const char *v = getenv("NCL_ZMQ_LOG");
    int level = cfg->log_level; /* also for a word it does not know */
    if (v && *v)
        ncl_bk_log_level_parse(v, &level);
    return level;
}

/* ---- sending ------------------------------------------------------------------------------- */

static int zq_is_data(uint8_t cmd)
{
    return cmd == NCL_WIRE_WRITE || cmd == NCL_WIRE_WRITE_REDUCE || cmd == NCL_WIRE_NOTIFY;
}

/* Encodes m into one frame and queues it on the peer's connection (never blocks: the high-water
 * mark is off, the engine's READY/DATA protocol bounds what is in flight). */
static ncl_result zq_send(ncl_zmq *z, int peer, ncl_wire_msg *m)
{
    zq_peer *p = &z->peers[peer];
    m->src = (uint32_t)z->rank;
    m->dst = (uint32_t)peer;
    m->time_ns = zq_now();
    if (!(m->flags & NCL_WIRE_FLAG_REPLY))
        m->seq = ++p->seq;
    size_t need = 0;
    ncl_wire_result wr = ncl_wire_encode(m, NULL, 0, &need);
    if (wr != NCL_WIRE_ERR_NO_SPACE && wr != NCL_WIRE_OK)
        return zq_fail(z, NCL_ERR_INTERNAL, "encoding %s to rank %d: %s", ncl_wire_cmd_name(m->command), peer,
                       ncl_wire_result_name(wr));
    zmq_msg_t f;
    if (zmq_msg_init_size(&f, need) != 0)
        return zq_fail(z, NCL_ERR_OUT_OF_MEMORY, "frame of %zu bytes to rank %d: out of memory", need, peer);
    size_t len = 0;
    wr = ncl_wire_encode(m, zmq_msg_data(&f), need, &len);
    if (wr != NCL_WIRE_OK) {
        zmq_msg_close(&f);
        return zq_fail(z, NCL_ERR_INTERNAL, "encoding %s to rank %d: %s", ncl_wire_cmd_name(m->command), peer,
                       ncl_wire_result_name(wr));
    }
    int data = zq_is_data(m->command);
    if (data && ++z->data_tx == z->corrupt_nth) {
        unsigned char *b = zmq_msg_data(&f);
        b[len > NCL_WIRE_HDR_LEN ? len - 1 : 20] ^= 0x10; /* the test hook: a flipped bit in transit */
        zq_logf(z, NCL_LOG_WARN, "fault hook: corrupted data frame #%llu (%s to rank %d)",
                (unsigned long long)z->data_tx, ncl_wire_cmd_name(m->command), peer);
    }
    if (zmq_msg_send(&f, p->dealer, ZMQ_DONTWAIT) < 0) {
        int e = errno;
        zmq_msg_close(&f);
        return zq_fail(z, NCL_ERR_LINK, "link to rank %d (%s): send of %s failed: %s", peer, p->endpoint,
                       ncl_wire_cmd_name(m->command), zmq_strerror(e));
    }
    p->st.frames_tx++;
    p->st.bytes_tx += len;
    if (data && z->data_tx == z->die_nth) {
        zq_logf(z, NCL_LOG_WARN, "fault hook: dying after data frame #%llu", (unsigned long long)z->data_tx);
        raise(SIGKILL);
    }
    return NCL_SUCCESS;
}

static void zq_send_error(ncl_zmq *z, int peer, uint32_t code, const char *text)
{
    ncl_wire_msg m;
    memset(&m, 0, sizeof m);
    m.command = NCL_WIRE_ERROR;
    m.error_code = code;
    m.payload = (const uint8_t *)text;
    size_t n = strlen(text);
    m.payload_len = (uint32_t)(n > NCL_WIRE_ERROR_TEXT_MAX ? NCL_WIRE_ERROR_TEXT_MAX : n);
    zq_send(z, peer, &m);
}

static void zq_send_hello(ncl_zmq *z, int peer, int ack, const ncl_wire_hello *h, uint64_t seq)
{
    ncl_wire_msg m;
    memset(&m, 0, sizeof m);
    m.command = ack ? NCL_WIRE_HELLO_ACK : NCL_WIRE_HELLO;
    m.flags = ack ? NCL_WIRE_FLAG_REPLY : 0;
    m.seq = seq;
    m.hello = *h;
    zq_send(z, peer, &m);
}

/* Tells every peer that agreed NCL_WIRE_CAP_COLL that this rank is broken and why, so they fail at
 * once instead of at their timeouts. Once per backend (at most N-1 small frames per rank and
 * failure). A failure that came from another rank is relayed with that origin and its reason:
 * every rank says ABORT before it can say BYE, so a peer that sees this rank leave has already
 * been told why (the link is FIFO). */
static void zq_abort_peers(ncl_zmq *z, uint64_t call, ncl_result code)
{
    if (z->abort_sent)
        return;
    z->abort_sent = 1;
    int origin = z->abort_origin >= 0 ? z->abort_origin : z->rank;
    const char *reason = z->abort_origin >= 0 ? z->relay : z->err;
    for (int i = 0; i < z->nranks; i++) {
        zq_peer *p = &z->peers[i];
        if (i == z->rank || i == origin || !p->coll_ok || (p->state != ZL_UP && p->state != ZL_BROKEN))
            continue;
        ncl_wire_msg m;
        memset(&m, 0, sizeof m);
        m.command = NCL_WIRE_ABORT;
        m.error_code = (uint32_t)code;
        m.call = call;
        m.coll = call ? z->coll : 0;
        m.done_call = z->done;
        m.origin = (uint32_t)origin;
        m.payload = (const uint8_t *)reason;
        size_t n = strlen(reason);
        m.payload_len = (uint32_t)(n > NCL_WIRE_ERROR_TEXT_MAX ? NCL_WIRE_ERROR_TEXT_MAX : n);
        zq_send(z, i, &m);
    }
    zq_logf(z, NCL_LOG_INFO, "#%llu: sent ABORT (origin rank %d) to the peers: %s", (unsigned long long)call, origin,
            reason);
}

/* 1 (the communicator now broken, the reason recorded) when `peer`'s latest tag names this rank's
 * running call number with another collective: the ranks' calls do not match, and waiting would
 * only end in a timeout. */
static int zq_mismatch(ncl_zmq *z, int peer, uint64_t seq, uint8_t coll)
{
    const zq_peer *p = &z->peers[peer];
    if (!p->call || p->call != seq)
        return 0;
    if (p->coll != coll) {
        zq_stick(z, NCL_ERR_REMOTE, "mismatch: rank %d called %s #%llu while this rank (%d) called %s #%llu: every "
                 "rank must call the same collectives in the same order", peer, ncl_coll_name((ncl_coll)p->coll),
                 (unsigned long long)seq, z->rank, ncl_coll_name((ncl_coll)coll), (unsigned long long)seq);
        return 1;
    }
    if (!p->has_desc) /* a peer without NCL_WIRE_CAP_DESC: the kind is all we know */
        return 0;
    ncl_hal_launch mine = {.seq = seq, .coll = coll, .count = z->desc.count, .dtype = z->desc.dtype,
                           .op = z->desc.op, .algo = z->desc.algo, .inplace = z->desc.inplace, .root = z->desc.root};
    ncl_hal_launch theirs = {.seq = seq, .coll = coll, .count = p->desc.count, .dtype = p->desc.dtype,
                             .op = p->desc.op, .algo = p->desc.algo, .inplace = p->desc.inplace, .root = p->desc.root};
    char why[256];
    if (!ncl_launch_mismatch(&mine, z->rank, &theirs, peer, why, sizeof why))
        return 0;
    zq_stick(z, NCL_ERR_REMOTE, "mismatch: %s", why);
    return 1;
}

/* A received ABORT breaks this rank now (unless something broke it first: the first failure
 * stands), its origin and reason kept for our own ABORT to pass on. */
static void zq_apply_pending(ncl_zmq *z)
{
    if (z->pending_origin < 0)
        return;
    if (z->sticky == NCL_SUCCESS) {
        z->abort_origin = z->pending_origin;
        snprintf(z->relay, sizeof z->relay, "%s", z->pending_relay);
        zq_stick(z, NCL_ERR_REMOTE, "%s", z->pending);
    }
    z->pending_origin = -1;
}

/* ---- buffers ------------------------------------------------------------------------------- */

static unsigned char *zq_region(ncl_zmq *z, ncl_ref ref, uint64_t bytes, int write, char *why, size_t why_len)
{
    uint64_t addr = 0;
    char inner[200];
    if (!ncl_bk_region(&z->bufs, ref, bytes, write, &addr, inner, sizeof inner)) {
        snprintf(why, why_len, "on rank %d: %s", z->rank, inner);
        return NULL;
    }
    return ncl_bk_ptr(addr);
}

/* ---- receiving ------------------------------------------------------------------------------- */

static int zq_peer_of_id(const ncl_zmq *z, const void *id, size_t len)
{
    char s[16];
    if (len < 2 || len >= sizeof s)
        return -1;
    memcpy(s, id, len);
    s[len] = '\0';
    if (s[0] != 'r')
        return -1;
    char *end = NULL;
    long r = strtol(s + 1, &end, 10);
    if (*end || end == s + 1 || r < 0 || r >= z->nranks || r == z->rank)
        return -1;
    return (int)r;
}

/* Applies one frame that arrived on the link from `peer`. */
static void zq_apply(ncl_zmq *z, int peer, const unsigned char *b, size_t len)
{
    zq_peer *p = &z->peers[peer];
    ncl_wire_msg m;
    char why[256];
    p->st.frames_rx++;
    p->st.bytes_rx += len;
    z->event = 1;
    if (p->state == ZL_BROKEN)
        return; /* nothing from a broken link is trusted */
    ncl_wire_result wr = ncl_wire_decode(b, len, &z->lim, &m, why, sizeof why);
    if (wr != NCL_WIRE_OK) {
        zq_break(z, peer, NCL_ERR_LINK, "link from rank %d (%s): frame of %zu bytes rejected: %s: %s", peer,
                 p->endpoint, len, ncl_wire_result_name(wr), why);
        char text[300];
        snprintf(text, sizeof text, "rank %d rejected your frame: %s: %s", z->rank, ncl_wire_result_name(wr), why);
        zq_send_error(z, peer, (uint32_t)wr, text);
        return;
    }
    if (m.src != (uint32_t)peer && m.src != NCL_WIRE_RANK_NONE) {
        zq_break(z, peer, NCL_ERR_LINK, "link from rank %d (%s): frame claims to come from rank %u (miswired?)",
                 peer, p->endpoint, (unsigned)m.src);
        return;
    }
    if (m.command == NCL_WIRE_ERROR) {
        if (z->sticky == NCL_SUCCESS) { /* the failure started on that rank: our ABORT says so */
            z->abort_origin = peer;
            snprintf(z->relay, sizeof z->relay, "%.*s", (int)m.payload_len, (const char *)m.payload);
        }
        zq_break(z, peer, NCL_ERR_LINK, "link with rank %d (%s): the peer reported error %u: %.*s", peer, p->endpoint,
                 (unsigned)m.error_code, (int)m.payload_len, (const char *)m.payload);
        return;
    }
    if (m.command == NCL_WIRE_HELLO) {
        ncl_wire_hello agreed;
        wr = ncl_wire_hello_agree(&z->mine, &m.hello, &agreed, why, sizeof why);
        if (wr != NCL_WIRE_OK) {
            zq_break(z, peer, NCL_ERR_LINK, "link with rank %d (%s): HELLO: %s", peer, p->endpoint, why);
            zq_send_error(z, peer, (uint32_t)wr, why);
            return;
        }
        if (!(agreed.caps & NCL_WIRE_CAP_WRITE_REDUCE)) {
            zq_break(z, peer, NCL_ERR_LINK, "link with rank %d (%s): the peer cannot apply WRITE_REDUCE", peer,
                     p->endpoint);
            return;
        }
        p->hello_rx = 1;
        p->tx_payload = agreed.max_payload;
        p->coll_ok = (agreed.caps & NCL_WIRE_CAP_COLL) != 0;
        p->desc_ok = p->coll_ok && (agreed.caps & NCL_WIRE_CAP_DESC) != 0;
        zq_send_hello(z, peer, 1, &agreed, m.seq);
        return;
    }
    if (m.command == NCL_WIRE_HELLO_ACK) {
        p->ack_rx = 1;
        if (m.hello.max_payload < p->tx_payload || !p->tx_payload)
            p->tx_payload = m.hello.max_payload;
        p->st.hello_done = p->hello_rx;
        return;
    }
    if (!p->hello_rx) {
        zq_break(z, peer, NCL_ERR_LINK, "link from rank %d (%s): %s before HELLO", peer, p->endpoint,
                 ncl_wire_cmd_name(m.command));
        return;
    }
    p->st.hello_done = p->ack_rx;
    switch (m.command) {
    case NCL_WIRE_BYE:
        p->state = ZL_LEFT;
        zq_logf(z, NCL_LOG_DEBUG, "rank %d closed its end (BYE)", peer);
        return;
    case NCL_WIRE_NOTIFY:
        if (m.call) {
            if (!p->coll_ok) {
                zq_break(z, peer, NCL_ERR_LINK, "link from rank %d (%s): NOTIFY carries a collective tag, which "
                         "HELLO did not agree", peer, p->endpoint);
                return;
            }
            if (m.has_desc && !p->desc_ok) {
                zq_break(z, peer, NCL_ERR_LINK, "link from rank %d (%s): NOTIFY carries a call descriptor, which "
                         "HELLO did not agree", peer, p->endpoint);
                return;
            }
            p->call = m.call;
            p->coll = m.coll;
            p->has_desc = m.has_desc;
            p->desc = m.desc;
            if (z->bufs.bound && zq_mismatch(z, peer, z->seq, z->coll))
                return;
        }
        z->ctr[(size_t)peer * NCL_NOTIFY_IDS + m.notify]++;
        return;
    case NCL_WIRE_ABORT: {
        char what[64];
        if (m.call)
            snprintf(what, sizeof what, "%s #%llu", ncl_coll_name((ncl_coll)m.coll), (unsigned long long)m.call);
        else
            snprintf(what, sizeof what, "its communicator");
        if (z->sticky != NCL_SUCCESS || z->pending_origin >= 0)
            return; /* the first failure stands */
        z->pending_origin = (int)m.origin;
        if (m.origin == (uint32_t)peer)
            snprintf(z->pending, sizeof z->pending, "rank %d aborted %s: %.*s", peer, what, (int)m.payload_len,
                     (const char *)m.payload);
        else
            snprintf(z->pending, sizeof z->pending, "rank %u aborted (relayed by rank %d, in %s): %.*s",
                     (unsigned)m.origin, peer, what, (int)m.payload_len, (const char *)m.payload);
        snprintf(z->pending_relay, sizeof z->pending_relay, "%.*s", (int)m.payload_len, (const char *)m.payload);
        /* The sender finished our running call before it broke: the call can still complete
         * (every frame of it the sender sent came before this one); we break when it ends. */
        if (!(z->bufs.bound && z->seq <= m.done_call))
            zq_apply_pending(z);
        z->event = 1;
        return;
    }
    case NCL_WIRE_WRITE:
    case NCL_WIRE_WRITE_REDUCE: {
        ncl_ref at = {m.buf, m.off};
        unsigned char *dst = zq_region(z, at, m.bytes, 1, why, sizeof why);
        if (!dst) {
            zq_break(z, peer, NCL_ERR_REMOTE, "rank %d sent %s of %llu bytes that cannot land: %s", peer,
                     ncl_wire_cmd_name(m.command), (unsigned long long)m.bytes, why);
            return;
        }
        const unsigned char *src = m.payload;
        if (m.command == NCL_WIRE_WRITE_REDUCE && ((uintptr_t)src % ncl_dtype_size((ncl_dtype)m.dtype)) != 0) {
            /* the frame sits wherever ZeroMQ put it; the kernels load whole elements */
            memcpy(z->bounce, src, m.bytes);
            src = z->bounce;
        }
        /* what the sender's task does, run here (the codec checked dtype, op and whole elements) */
        ncl_task t;
        memset(&t, 0, sizeof t);
        t.kind = m.command == NCL_WIRE_WRITE_REDUCE ? NCL_TASK_WRITE_REDUCE : NCL_TASK_WRITE;
        t.dtype = m.dtype;
        t.op = m.op;
        t.bytes = m.bytes;
        if (!ncl_bk_run(&t, dst, src, why, sizeof why))
            zq_break(z, peer, NCL_ERR_REMOTE, "rank %d sent %s of %llu bytes that cannot land: %s", peer,
                     ncl_wire_cmd_name(m.command), (unsigned long long)m.bytes, why);
        return;
    }
    default:
        zq_break(z, peer, NCL_ERR_LINK, "link from rank %d (%s): unexpected %s on a rank link", peer, p->endpoint,
                 ncl_wire_cmd_name(m.command));
        return;
    }
}

/* Reads one monitor event of peer i's connection. */
static void zq_monitor(ncl_zmq *z, int i)
{
    zq_peer *p = &z->peers[i];
    for (;;) {
        zmq_msg_t a, b;
        zmq_msg_init(&a);
        if (zmq_msg_recv(&a, p->mon, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&a);
            return;
        }
        uint16_t ev = 0;
        if (zmq_msg_size(&a) >= 2)
            memcpy(&ev, zmq_msg_data(&a), 2);
        int more = zmq_msg_more(&a);
        zmq_msg_close(&a);
        if (more) {
            zmq_msg_init(&b);
            zmq_msg_recv(&b, p->mon, 0);
            zmq_msg_close(&b);
        }
        if ((ev & ZMQ_EVENT_DISCONNECTED) && p->state == ZL_UP && !p->drop_ns) {
            p->drop_ns = zq_now();
            z->event = 1;
            zq_logf(z, NCL_LOG_DEBUG, "connection to rank %d dropped", i);
        }
    }
}

/* Polls for up to timeout_ms (0: just look) and applies everything that arrived. */
static void zq_pump(ncl_zmq *z, long timeout_ms)
{
    int n = zmq_poll(z->items, z->nitems, timeout_ms);
    if (n <= 0)
        return;
    if (z->items[0].revents & ZMQ_POLLIN) {
        for (;;) {
            zmq_msg_t id, f;
            zmq_msg_init(&id);
            if (zmq_msg_recv(&id, z->router, ZMQ_DONTWAIT) < 0) {
                zmq_msg_close(&id);
                break;
            }
            int peer = zq_peer_of_id(z, zmq_msg_data(&id), zmq_msg_size(&id));
            zmq_msg_close(&id);
            zmq_msg_init(&f);
            /* the rest of a message is there once its first frame is; a signal may still interrupt
             * the call (EINTR): retried, or the frame left behind would be read as the next identity */
            int got;
            while ((got = zmq_msg_recv(&f, z->router, 0)) < 0 && zmq_errno() == EINTR)
                ;
            if (got < 0) {
                zmq_msg_close(&f);
                break;
            }
            while (zmq_msg_more(&f)) { /* one frame per message: extra frames are dropped */
                zmq_msg_close(&f);
                zmq_msg_init(&f);
                while (zmq_msg_recv(&f, z->router, 0) < 0 && zmq_errno() == EINTR)
                    ;
                if (peer >= 0)
                    zq_break(z, peer, NCL_ERR_LINK, "link from rank %d: a multi-frame message", peer);
            }
            if (peer < 0)
                zq_logf(z, NCL_LOG_WARN, "dropped a frame from an unknown connection (not a rank of this job)");
            else
                zq_apply(z, peer, zmq_msg_data(&f), zmq_msg_size(&f));
            zmq_msg_close(&f);
        }
    }
    for (int k = 1; k < z->nitems; k++)
        if (z->items[k].revents & ZMQ_POLLIN)
            zq_monitor(z, z->item_peer[k]);
}

/* Promotes dropped connections without BYE to deaths once the grace passed. Returns the
 * lowest dead rank or -1; *pending = 1 when a drop is still inside its grace. */
static int zq_deaths(ncl_zmq *z, int *pending)
{
    int dead = -1;
    uint64_t now = 0;
    if (pending)
        *pending = 0;
    for (int i = 0; i < z->nranks; i++) {
        zq_peer *p = &z->peers[i];
        if (p->state == ZL_UP && p->drop_ns) {
            if (!now)
                now = zq_now();
            if (now - p->drop_ns >= ZQ_GRACE_NS) {
                p->state = ZL_DEAD;
                zq_fail(z, NCL_ERR_REMOTE, "rank %d (%s) disconnected without closing: its process died or its "
                        "host is unreachable", i, p->endpoint);
            } else if (pending) {
                *pending = 1;
            }
        }
        if (p->state == ZL_DEAD && dead < 0)
            dead = i;
    }
    return dead;
}

/* ---- ops ----------------------------------------------------------------------------------- */

static ncl_result zq_caps(void *ctx, ncl_hal_caps *out)
{
    ncl_zmq *z = ctx;
    if (!out)
        return NCL_ERR_BACKEND;
    memset(out, 0, sizeof *out);
    out->scratch_bytes = z->scratch_bytes;
    out->max_queues = NCL_MAX_QUEUES;
    out->buf_align = 1;
    for (int d = 0; d < NCL_DTYPE_COUNT; d++)
        out->inline_ops[d] = NCL_INLINE_ALL_OPS; /* the receiver reduces with ncl_reduce_kernel */
    out->inline_align = 0;
    /* wide and two-source kinds on the CPU; scratch kept */
    out->features = NCL_HAL_FEAT_WIDE | NCL_HAL_FEAT_ZONES | NCL_HAL_FEAT_REDUCE_WRITE;
    return NCL_SUCCESS;
}

static ncl_result zq_begin(void *ctx, const ncl_hal_launch *l)
{
    ncl_zmq *z = ctx;
    if (!l)
        return NCL_ERR_BACKEND;
    /* The backend's own call count, not l->seq: several communicators may run one after another
     * on one backend (the agent's bring-up rings), each counting from 1, and the ranks agree on
     * the order of their calls across all of them. With one communicator the two are equal. */
    z->seq = ++z->calls;
    z->coll = l->coll;
    z->desc = (ncl_wire_desc){.count = l->count, .dtype = l->dtype, .op = l->op, .algo = l->algo,
                              .inplace = l->inplace, .root = l->root};
    if (z->sticky != NCL_SUCCESS) { /* broken: the first failure's message stays in err */
        zq_abort_peers(z, z->seq, z->sticky);
        return z->sticky;
    }
    /* a peer's tag that arrived before this rank began the same call */
    for (int i = 0; i < z->nranks; i++)
        if (i != z->rank && zq_mismatch(z, i, z->seq, l->coll)) {
            zq_abort_peers(z, z->seq, z->sticky); /* no end() follows a refused begin */
            return z->sticky;
        }
    ncl_bk_bind(&z->bufs, l, (uint64_t)(uintptr_t)z->scratch, z->scratch_bytes);
    return NCL_SUCCESS;
}

static ncl_result zq_end(void *ctx, ncl_result result)
{
    ncl_zmq *z = ctx;
    int mismatched = 0;
    if (result != NCL_SUCCESS) {
        /* HCCL/NCCL semantics: a failed collective leaves the peers' state unknown (half-applied
         * writes, unconsumed notifies), so the communicator stays broken until destroyed. A peer's
         * ABORT held back for this call is likely why it failed: it goes first. */
        zq_apply_pending(z);
        if (z->sticky == NCL_SUCCESS) { /* the engine logged why already: keep it, do not log it twice */
            z->sticky = result;
            if (!z->err[0])
                snprintf(z->err, sizeof z->err, "%s", z->engine_err[0] ? z->engine_err : ncl_strerror(result));
        }
        zq_abort_peers(z, z->seq, result);
    } else {
        /* a mismatch this rank can see now fails the call here too: no rank succeeds on one */
        for (int i = 0; i < z->nranks && z->sticky == NCL_SUCCESS; i++)
            if (i != z->rank && zq_mismatch(z, i, z->seq, z->coll)) {
                zq_abort_peers(z, z->seq, z->sticky);
                mismatched = 1;
            }
        if (z->sticky == NCL_SUCCESS)
            z->done = z->seq;
        zq_apply_pending(z); /* a peer aborted after this call: the next begin fails */
    }
    ncl_bk_unbind(&z->bufs);
    return mismatched ? NCL_ERR_REMOTE : NCL_SUCCESS;
}

/* A peer we must talk to: up, or the reason it is not. */
static ncl_result zq_peer_usable(ncl_zmq *z, int peer, const char *what)
{
    zq_deaths(z, NULL);
    zq_peer *p = &z->peers[peer];
    if (p->state == ZL_DEAD)
        return zq_fail(z, NCL_ERR_REMOTE, "#%llu %s rank %d: it is dead (disconnected without closing)",
                       (unsigned long long)z->seq, what, peer);
    if (p->state == ZL_LEFT)
        return zq_fail(z, NCL_ERR_REMOTE, "#%llu %s rank %d: it closed its communicator (BYE)",
                       (unsigned long long)z->seq, what, peer);
    return NCL_SUCCESS;
}

static ncl_result zq_dma_submit(void *ctx, uint32_t queue, const ncl_task *t)
{
    ncl_zmq *z = ctx;
    char why[256];
    if (!t || queue >= NCL_MAX_QUEUES ||
        (t->kind > NCL_TASK_LOCAL_DIV && !ncl_task_is_wide(t->kind) && !ncl_task_two_source(t->kind)))
        return zq_fail(z, NCL_ERR_BACKEND, "dma_submit: bad task or queue %u", queue);
    if (z->sticky != NCL_SUCCESS)
        return z->sticky;
    if (t->bytes == 0)
        goto done;
    if (!ncl_bk_task_ok(t, why, sizeof why))
        return zq_fail(z, NCL_ERR_BACKEND, "#%llu %s: %s", (unsigned long long)z->seq, ncl_task_kind_name(t->kind),
                       why);
    /* what reaches the destination: a reduce onto it, or the data (a REDUCE_WRITE's src op src2) */
    const int pair = ncl_task_two_source(t->kind);
    int reduce = t->kind == NCL_TASK_WRITE_REDUCE || t->kind == NCL_TASK_LOCAL_REDUCE ||
                 t->kind == NCL_TASK_REDUCE_WRITE_REDUCE;
    const unsigned char *src = NULL, *src2 = NULL;
    if (t->kind != NCL_TASK_LOCAL_DIV) {
        src = zq_region(z, t->src, ncl_task_src_bytes(t), 0, why, sizeof why);
        if (!src)
            return zq_fail(z, NCL_ERR_BACKEND, "#%llu queue %u step %u %s source: %s", (unsigned long long)z->seq,
                           queue, t->step, ncl_task_kind_name(t->kind), why);
    }
    if (pair && !(src2 = zq_region(z, t->src2, t->bytes, 0, why, sizeof why)))
        return zq_fail(z, NCL_ERR_BACKEND, "#%llu queue %u step %u %s second source: %s", (unsigned long long)z->seq,
                       queue, t->step, ncl_task_kind_name(t->kind), why);
    int remote = ncl_task_is_remote(t->kind) && t->peer != z->rank;
    if (remote) {
        if (t->peer < 0 || t->peer >= z->nranks)
            return zq_fail(z, NCL_ERR_BACKEND, "#%llu %s to rank %d: out of range", (unsigned long long)z->seq,
                           ncl_task_kind_name(t->kind), t->peer);
        ncl_result rc = zq_peer_usable(z, t->peer, reduce ? "WRITE_REDUCE to" : "WRITE to");
        if (rc != NCL_SUCCESS)
            return rc;
        /* Cut at the agreed payload limit (whole elements for reduces). */
        uint64_t chunk = z->peers[t->peer].tx_payload;
        if (reduce || pair)
            chunk -= chunk % ncl_dtype_size((ncl_dtype)t->dtype);
        for (uint64_t done_b = 0; done_b < t->bytes; done_b += chunk) {
            uint64_t n = t->bytes - done_b < chunk ? t->bytes - done_b : chunk;
            ncl_wire_msg m;
            memset(&m, 0, sizeof m);
            m.command = reduce ? NCL_WIRE_WRITE_REDUCE : NCL_WIRE_WRITE;
            m.buf = (uint8_t)t->dst.buf;
            m.off = t->dst.off + done_b;
            m.bytes = n;
            m.dtype = reduce ? t->dtype : 0;
            m.op = reduce ? t->op : 0;
            m.payload = src + done_b;
            if (pair) { /* src op src2 into the staging buffer (at most tx_payload <= max_payload) */
                ncl_task piece = *t;
                piece.kind = NCL_TASK_REDUCE_WRITE;
                piece.bytes = n;
                if (!ncl_bk_run_pair(&piece, z->stage, src + done_b, src2 + done_b, why, sizeof why))
                    return zq_fail(z, NCL_ERR_BACKEND, "#%llu queue %u step %u %s: %s", (unsigned long long)z->seq,
                                   queue, t->step, ncl_task_kind_name(t->kind), why);
                m.payload = z->stage;
            }
            m.payload_len = (uint32_t)n;
            rc = zq_send(z, t->peer, &m);
            if (rc != NCL_SUCCESS)
                return rc;
        }
        goto done;
    }
    unsigned char *dst = zq_region(z, t->dst, ncl_task_dst_bytes(t), 1, why, sizeof why);
    if (!dst)
        return zq_fail(z, NCL_ERR_BACKEND, "#%llu queue %u step %u %s destination: %s", (unsigned long long)z->seq,
                       queue, t->step, ncl_task_kind_name(t->kind), why);
    if (!(pair ? ncl_bk_run_pair(t, dst, src, src2, why, sizeof why) : ncl_bk_run(t, dst, src, why, sizeof why)))
        return zq_fail(z, NCL_ERR_BACKEND, "#%llu queue %u step %u %s: %s", (unsigned long long)z->seq, queue, t->step,
                       ncl_task_kind_name(t->kind), why);
done:
    z->event = 1;
    return NCL_SUCCESS;
}

/* Tasks complete inside dma_submit: a remote write is complete once queued, because the
 * NOTIFY that publishes it follows it on the same FIFO connection. */
static ncl_result zq_dma_poll(void *ctx, uint32_t queue, int *done)
{
    ncl_zmq *z = ctx;
    if (queue >= NCL_MAX_QUEUES || !done)
        return NCL_ERR_BACKEND;
    *done = 1;
    return z->sticky;
}

static ncl_result zq_notify_record(void *ctx, uint32_t queue, int peer, uint32_t id)
{
    ncl_zmq *z = ctx;
    (void)queue;
    if (peer < 0 || peer >= z->nranks || id >= NCL_NOTIFY_IDS)
        return zq_fail(z, NCL_ERR_BACKEND, "#%llu notify_record to rank %d id %u: out of range",
                       (unsigned long long)z->seq, peer, id);
    if (z->sticky != NCL_SUCCESS)
        return z->sticky;
    if (peer == z->rank) {
        z->ctr[(size_t)peer * NCL_NOTIFY_IDS + id]++;
        z->event = 1;
        return NCL_SUCCESS;
    }
    ncl_result rc = zq_peer_usable(z, peer, "NOTIFY to");
    if (rc != NCL_SUCCESS)
        return rc;
    ncl_wire_msg m;
    memset(&m, 0, sizeof m);
    m.command = NCL_WIRE_NOTIFY;
    m.notify = (uint8_t)id;
    if (z->peers[peer].coll_ok && z->bufs.bound) { /* the receiver checks it against its own call */
        m.call = z->seq;
        m.coll = z->coll;
        m.has_desc = (uint8_t)z->peers[peer].desc_ok;
        if (m.has_desc)
            m.desc = z->desc;
    }
    return zq_send(z, peer, &m);
}

static ncl_result zq_notify_try_wait(void *ctx, int peer, uint32_t id, uint32_t count, int *done)
{
    ncl_zmq *z = ctx;
    if (!done || peer < 0 || peer >= z->nranks || id >= NCL_NOTIFY_IDS)
        return zq_fail(z, NCL_ERR_BACKEND, "#%llu notify_try_wait rank %d id %u: out of range",
                       (unsigned long long)z->seq, peer, id);
    *done = 0;
    uint32_t *c = &z->ctr[(size_t)peer * NCL_NOTIFY_IDS + id];
    if (*c < count && z->sticky == NCL_SUCCESS)
        zq_pump(z, 0);
    if (z->sticky != NCL_SUCCESS)
        return z->sticky;
    if (*c >= count) {
        *c -= count;
        *done = 1;
        return NCL_SUCCESS;
    }
    if (peer == z->rank)
        return NCL_SUCCESS;
    /* Short, and everything that arrived is applied: a dead job never fills it. */
    int dead = zq_deaths(z, NULL);
    if (dead >= 0)
        return zq_fail(z, NCL_ERR_REMOTE, "#%llu waits for notify %u (x%u, have %u) from rank %d, but rank %d is "
                       "dead (disconnected without closing)", (unsigned long long)z->seq, id, count, *c, peer, dead);
    if (z->peers[peer].state == ZL_LEFT)
        return zq_fail(z, NCL_ERR_REMOTE, "#%llu waits for notify %u (x%u, have %u) from rank %d, which closed its "
                       "communicator (BYE)", (unsigned long long)z->seq, id, count, *c, peer);
    return NCL_SUCCESS;
}

static ncl_result zq_wait_event(void *ctx, uint64_t timeout_ns)
{
    ncl_zmq *z = ctx;
    if (z->event || timeout_ns == 0) {
        z->event = 0;
        zq_pump(z, 0);
        return NCL_SUCCESS;
    }
    int pending = 0;
    zq_deaths(z, &pending);
    uint64_t ms = (timeout_ns + 999999u) / 1000000u;
    if (pending && ms > 50)
        ms = 50; /* wake up to promote a drop to a death */
    if (ms > 3600000u)
        ms = 3600000u;
    zq_pump(z, (long)ms);
    z->event = 0;
    return NCL_SUCCESS;
}

static uint64_t zq_now_ns(void *ctx)
{
    (void)ctx;
    return zq_now();
}

static ncl_result zq_notify_peek(void *ctx, int peer, uint32_t id, uint32_t *value)
{
    ncl_zmq *z = ctx;
    if (!value || peer < 0 || peer >= z->nranks || id >= NCL_NOTIFY_IDS)
        return NCL_ERR_BACKEND;
    *value = z->ctr[(size_t)peer * NCL_NOTIFY_IDS + id];
    return NCL_SUCCESS;
}

const ncl_hal_ops ncl_zmq_hal_ops = {
    .caps = zq_caps,
    .begin = zq_begin,
    .end = zq_end,
    .dma_submit = zq_dma_submit,
    .dma_poll = zq_dma_poll,
    .notify_record = zq_notify_record,
    .notify_try_wait = zq_notify_try_wait,
    .wait_event = zq_wait_event,
    .now_ns = zq_now_ns,
    .log = zq_hal_log,
    .notify_peek = zq_notify_peek,
};

/* ---- life cycle -------------------------------------------------------------------------- */

/* Keeps frame-sized blocks in the heap. Every frame is a malloc: ours in zmq_msg_init_size, and
 * ZeroMQ's for each one it receives (its I/O thread reads a large message straight into a block
 * of the message's size). Above glibc's mmap threshold each such block is a fresh mmap and every
 * page of it faults on first touch, then is unmapped on free: measured, those faults were about
 * half the time of a 64 MiB allreduce over ipc (2 ranks: 0.9 GB/s busbw with them, 1.1-1.5 without,
 * before the faster CRC). A fixed threshold above the largest frame and a high trim threshold
 * make the blocks reused, warm memory. Process-wide, but only in a process that opened this
 * backend (allocations up to 32 MiB then come from the heap, which keeps up to 512 MiB of
 * freed memory instead of returning it); glibc only. */
static void zq_tune_malloc(uint32_t max_payload)
{
#ifdef __GLIBC__
    const uint64_t cap = 32ull << 20; /* glibc's largest mmap threshold on 64-bit */
    uint64_t frame = (uint64_t)max_payload + NCL_WIRE_HDR_LEN + 4096;
    if (frame <= cap) {
        mallopt(M_MMAP_THRESHOLD, (int)cap);
        mallopt(M_TRIM_THRESHOLD, (int)(512ull << 20));
    }
#else
    (void)max_payload;
#endif
}

static void zq_close_all(ncl_zmq *z, int linger_ms)
{
    if (z->peers) {
        for (int i = 0; i < z->nranks; i++) {
            zq_peer *p = &z->peers[i];
            if (p->dealer) {
                zmq_socket_monitor(p->dealer, NULL, 0);
                int l = p->state == ZL_UP ? linger_ms : 0;
                zmq_setsockopt(p->dealer, ZMQ_LINGER, &l, sizeof l);
                zmq_close(p->dealer);
            }
            if (p->mon)
                zmq_close(p->mon);
            free(p->endpoint);
        }
    }
    if (z->ctx_tx)
        zmq_ctx_term(z->ctx_tx); /* returns once the lingering frames (BYE) are out */
    if (z->router) {
        int l = 0;
        zmq_setsockopt(z->router, ZMQ_LINGER, &l, sizeof l);
        zmq_close(z->router);
    }
    if (z->ctx_rx)
        zmq_ctx_term(z->ctx_rx);
    free(z->peers);
    free(z->items);
    free(z->item_peer);
    free(z->ctr);
    free(z->scratch);
    free(z->bounce);
    free(z->stage);
    free(z);
}

static int zq_bind(ncl_zmq *z, const char *ep, char *err, size_t errlen)
{
    if (zmq_bind(z->router, ep) == 0)
        return 0;
    int e = errno;
    /* tcp://host:port names how peers reach us; if host is not an address of ours, listen on all. */
    if (!strncmp(ep, "tcp://", 6)) {
        const char *colon = strrchr(ep, ':');
        char any[300];
        if (colon && colon > ep + 6) {
            snprintf(any, sizeof any, "tcp://*%s", colon);
            if (zmq_bind(z->router, any) == 0)
                return 0;
        }
    }
    snprintf(err, errlen, "rank %d: cannot bind %s: %s%s", z->rank, ep, zmq_strerror(e),
             e == EADDRINUSE ? " (another process uses it: a stale agent, or two ranks with one endpoint)" : "");
    return -1;
}

ncl_result ncl_zmq_create(ncl_zmq **out, const ncl_zmq_config *cfg, char *err, size_t errlen)
{
    char dummy[8];
    if (!err || !errlen) {
        err = dummy;
        errlen = sizeof dummy;
    }
    err[0] = '\0';
    if (!out || !cfg || cfg->size != sizeof *cfg || cfg->version != NCL_ZMQ_CONFIG_VERSION || cfg->nranks < 1 ||
        cfg->nranks > NCL_ZMQ_MAX_RANKS || cfg->rank < 0 || cfg->rank >= cfg->nranks || !cfg->endpoints ||
        cfg->max_payload < NCL_WIRE_HELLO_LEN || cfg->log_level < NCL_LOG_OFF || cfg->log_level > NCL_LOG_DEBUG) {
        snprintf(err, errlen, "ncl_zmq_create: invalid configuration (version, rank %d of %d, endpoints, payload, "
                 "log level)",
                 cfg ? cfg->rank : -1, cfg ? cfg->nranks : 0);
        return NCL_ERR_INVALID_ARGUMENT;
    }
    *out = NULL;
    zq_tune_malloc(cfg->max_payload);
    ncl_zmq *z = calloc(1, sizeof *z);
    if (!z)
        return NCL_ERR_OUT_OF_MEMORY;
    z->hal.ops = &ncl_zmq_hal_ops;
    z->hal.ctx = z;
    z->nranks = cfg->nranks;
    z->rank = cfg->rank;
    z->scratch_bytes = cfg->scratch_bytes;
    z->corrupt_nth = cfg->fault_corrupt_nth;
    z->die_nth = cfg->fault_die_nth;
    z->log_level = zq_log_level(cfg);
    z->log = cfg->log;
    z->log_ud = cfg->log_ud;
    z->abort_origin = -1;
    z->pending_origin = -1;
    z->peers = calloc((size_t)z->nranks, sizeof *z->peers);
    z->items = calloc((size_t)z->nranks, sizeof *z->items);
    z->item_peer = calloc((size_t)z->nranks, sizeof *z->item_peer);
    z->ctr = calloc((size_t)z->nranks * NCL_NOTIFY_IDS, sizeof *z->ctr);
    z->scratch = z->scratch_bytes ? aligned_alloc(64, (size_t)((z->scratch_bytes + 63) / 64 * 64)) : NULL;
    z->bounce = aligned_alloc(64, ((size_t)cfg->max_payload + 63) / 64 * 64);
    z->stage = aligned_alloc(64, ((size_t)cfg->max_payload + 63) / 64 * 64);
    z->ctx_tx = zmq_ctx_new();
    z->ctx_rx = zmq_ctx_new();
    if (!z->peers || !z->items || !z->item_peer || !z->ctr || (z->scratch_bytes && !z->scratch) || !z->bounce ||
        !z->stage ||
        !z->ctx_tx || !z->ctx_rx) {
        snprintf(err, errlen, "rank %d: out of memory (scratch %llu bytes)", z->rank,
                 (unsigned long long)z->scratch_bytes);
        zq_close_all(z, 0);
        return NCL_ERR_OUT_OF_MEMORY;
    }
    ncl_bk_keep_scratch(&z->bufs, (uint64_t)(uintptr_t)z->scratch, z->scratch_bytes); /* landing zones */
    for (int i = 0; i < z->nranks; i++) {
        const char *ep = cfg->endpoints[i];
        if (!ep || !*ep) {
            snprintf(err, errlen, "rank %d: no endpoint for rank %d", z->rank, i);
            zq_close_all(z, 0);
            return NCL_ERR_INVALID_ARGUMENT;
        }
        z->peers[i].endpoint = strdup(ep);
        z->peers[i].st.hello_done = i == z->rank;
    }
    z->mine.min_version = z->mine.max_version = NCL_WIRE_VERSION;
    z->mine.max_payload = cfg->max_payload;
    z->mine.nranks = (uint32_t)z->nranks;
    z->mine.caps = NCL_WIRE_CAP_WRITE_REDUCE | NCL_WIRE_CAP_COLL | NCL_WIRE_CAP_DESC;
    for (int d = 0; d < NCL_DTYPE_COUNT; d++)
        z->mine.reduce_ops[d] = (uint8_t)NCL_INLINE_ALL_OPS;
    z->lim.max_payload = cfg->max_payload + 0u;
    z->lim.nranks = (uint32_t)z->nranks;
    z->lim.rank = (uint32_t)z->rank;
    z->lim.min_version = z->lim.max_version = NCL_WIRE_VERSION;

    int zero = 0;
    z->router = zmq_socket(z->ctx_rx, ZMQ_ROUTER);
    zmq_setsockopt(z->router, ZMQ_RCVHWM, &zero, sizeof zero);
    zmq_setsockopt(z->router, ZMQ_LINGER, &zero, sizeof zero);
    int64_t maxmsg = (int64_t)cfg->max_payload + NCL_WIRE_HDR_LEN;
    zmq_setsockopt(z->router, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg);
    if (zq_bind(z, cfg->endpoints[z->rank], err, errlen) != 0) {
        zq_close_all(z, 0);
        return NCL_ERR_LINK;
    }
    z->items[0].socket = z->router;
    z->items[0].events = ZMQ_POLLIN;
    z->nitems = 1;
    for (int i = 0; i < z->nranks; i++) {
        if (i == z->rank)
            continue;
        zq_peer *p = &z->peers[i];
        char id[16], mon[96];
        snprintf(id, sizeof id, "r%d", z->rank);
        snprintf(mon, sizeof mon, "inproc://ncl-zmq-mon-%d", i);
        p->dealer = zmq_socket(z->ctx_tx, ZMQ_DEALER);
        zmq_setsockopt(p->dealer, ZMQ_ROUTING_ID, id, strlen(id));
        zmq_setsockopt(p->dealer, ZMQ_SNDHWM, &zero, sizeof zero);
        zmq_setsockopt(p->dealer, ZMQ_IMMEDIATE, &zero, sizeof zero);
        int ivl = 100;
        zmq_setsockopt(p->dealer, ZMQ_RECONNECT_IVL, &ivl, sizeof ivl);
        if (zmq_socket_monitor(p->dealer, mon, ZMQ_EVENT_DISCONNECTED) != 0 ||
            !(p->mon = zmq_socket(z->ctx_tx, ZMQ_PAIR)) || zmq_connect(p->mon, mon) != 0) {
            snprintf(err, errlen, "rank %d: cannot monitor the connection to rank %d: %s", z->rank, i,
                     zmq_strerror(errno));
            zq_close_all(z, 0);
            return NCL_ERR_LINK;
        }
        if (zmq_connect(p->dealer, p->endpoint) != 0) {
            snprintf(err, errlen, "rank %d: cannot connect to rank %d at %s: %s", z->rank, i, p->endpoint,
                     zmq_strerror(errno));
            zq_close_all(z, 0);
            return NCL_ERR_LINK;
        }
        p->tx_payload = cfg->max_payload;
        z->items[z->nitems].socket = p->mon;
        z->items[z->nitems].events = ZMQ_POLLIN;
        z->item_peer[z->nitems] = i;
        z->nitems++;
        zq_send_hello(z, i, 0, &z->mine, 0);
    }

    /* Every link says HELLO both ways before anyone runs a collective. */
    uint64_t t0 = zq_now();
    for (;;) {
        int missing = 0;
        for (int i = 0; i < z->nranks; i++)
            missing += i != z->rank && !(z->peers[i].hello_rx && z->peers[i].ack_rx);
        if (z->sticky != NCL_SUCCESS) {
            snprintf(err, errlen, "rank %d: handshake failed: %s", z->rank, z->err);
            ncl_result rc = z->sticky;
            zq_close_all(z, 0);
            return rc;
        }
        if (!missing)
            break;
        uint64_t now = zq_now();
        if (now - t0 > cfg->connect_timeout_ns) {
            size_t n = (size_t)snprintf(err, errlen, "rank %d: no HELLO within %.1f s from", z->rank,
                                        (double)cfg->connect_timeout_ns / 1e9);
            int shown = 0;
            for (int i = 0; i < z->nranks && n < errlen; i++)
                if (i != z->rank && !(z->peers[i].hello_rx && z->peers[i].ack_rx) && shown++ < 8)
                    n += (size_t)snprintf(err + n, errlen - n, " rank %d (%s)", i, z->peers[i].endpoint);
            if (shown > 8 && n < errlen)
                snprintf(err + n, errlen - n, " and %d more", shown - 8);
            zq_close_all(z, 0);
            return NCL_ERR_TIMEOUT;
        }
        zq_pump(z, 20);
    }
    for (int i = 0; i < z->nranks; i++)
        z->peers[i].st.hello_done = 1;
    z->event = 0;
    zq_logf(z, NCL_LOG_INFO, "connected to %d peers in %.1f ms", z->nranks - 1, (double)(zq_now() - t0) / 1e6);
    *out = z;
    return NCL_SUCCESS;
}

void ncl_zmq_destroy(ncl_zmq *z)
{
    if (!z)
        return;
    zq_deaths(z, NULL);
    zq_apply_pending(z);
    if (z->sticky != NCL_SUCCESS) /* not said yet (broken between collectives): ABORT before BYE */
        zq_abort_peers(z, 0, z->sticky);
    for (int i = 0; i < z->nranks; i++) {
        if (i == z->rank || z->peers[i].state != ZL_UP)
            continue;
        ncl_wire_msg m;
        memset(&m, 0, sizeof m);
        m.command = NCL_WIRE_BYE;
        zq_send(z, i, &m);
    }
    zq_close_all(z, ZQ_LINGER_MS);
}

const ncl_hal *ncl_zmq_hal(ncl_zmq *z)
{
    return z ? &z->hal : NULL;
}

const char *ncl_zmq_last_error(const ncl_zmq *z)
{
    return z ? z->err : "";
}

ncl_result ncl_zmq_status(const ncl_zmq *z)
{
    return z ? z->sticky : NCL_ERR_INVALID_ARGUMENT;
}

int ncl_zmq_abort_origin(const ncl_zmq *z)
{
    return z ? z->abort_origin : -1;
}

void ncl_zmq_abort(ncl_zmq *z, const char *reason)
{
    if (!z)
        return;
    const char *why = reason && *reason ? reason : "no reason given";
    zq_stick(z, NCL_ERR_INVALID_USAGE, "aborted on this rank: %s", why);
    zq_abort_peers(z, z->bufs.bound ? z->seq : 0, NCL_ERR_INVALID_USAGE);
}

int ncl_zmq_dead_rank(ncl_zmq *z)
{
    if (!z)
        return -1;
    zq_pump(z, 0);
    return zq_deaths(z, NULL);
}

int ncl_zmq_link_stats(const ncl_zmq *z, int peer, ncl_zmq_link *out)
{
    if (!z || !out || peer < 0 || peer >= z->nranks)
        return -1;
    *out = z->peers[peer].st;
    out->state = z->peers[peer].state;
    return 0;
}

uint32_t ncl_zmq_counter(const ncl_zmq *z, int sender, uint32_t id)
{
    if (!z || sender < 0 || sender >= z->nranks || id >= NCL_NOTIFY_IDS)
        return 0;
    return z->ctr[(size_t)sender * NCL_NOTIFY_IDS + id];
}

const char *ncl_zmq_link_state_name(int state)
{
    switch (state) {
    case ZL_UP: return "up";
    case ZL_LEFT: return "left";
    case ZL_DEAD: return "dead";
    case ZL_BROKEN: return "broken";
    }
    return "?";
}
