/* ncl_zmq.c — the zmq HAL backend: one process per rank; WRITE/WRITE_REDUCE/NOTIFY travel as wire frames. */
#define _GNU_SOURCE /* memfd_create */

#include "ncl/ncl_zmq.h"

#include "ncl/ncl_dtype.h"
#include "ncl/ncl_wire.h"
#include "ncl_backend.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
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
    int comm_ok;             /* both announced NCL_WIRE_CAP_COMM: sub-communicators may span this link */
    struct zq_comm **rx_comm; /* [the peer's number for a communicator] -> ours (COMM; [0]: the world) */
    uint32_t rx_ncomm;
    uint64_t seq;
    ncl_zmq_link st;
    /* Shared memory (same host): our ring to the peer (tx, used once the peer accepted it) and
     * the peer's ring to us (rx, drained by zq_shm_drain). See "shared memory" below. */
    int shm_cap;             /* the peer's HELLO announced NCL_WIRE_CAP_SHM */
    int split_ok;            /* ...and NCL_WIRE_CAP_SPLIT: our WRITEs to it may be two frames */
    int offer;               /* our offer: 0 none, 1 sent and unanswered, 2 answered */
    int tx_on;               /* the peer mapped our ring: data commands go through it */
    struct zq_ring *tx, *rx;
    uint64_t tx_bytes, rx_bytes; /* their ring bytes, our own copies (never read back from the mapping) */
    uint64_t cookie;         /* our ring's random id, echoed by the answer */
    int tx_fd;               /* the memfd of tx until the peer answered (it opens it by /proc path) */
} zq_peer;

/* One writer -> reader ring in a shared mapping: a header page, then `bytes` of records. Head
 * and tail count bytes ever written / consumed (never wrap), each on its own cache line. The
 * sleep flags let a side that is about to block in zmq_poll ask the other for a doorbell. */
#define ZQ_RING_MAGIC 0x31474E49524D5143ull /* "CQMRING1" */
#define ZQ_RING_HDR 4096u
#define ZQ_REC_HDR 64u                     /* a record: u64 length word, padding, then a wire frame */
#define ZQ_REC_SKIP UINT64_MAX             /* length word: the rest of the ring is unused, wrap */
typedef struct zq_ring {
    uint64_t magic, cookie, bytes;
    uint32_t writer, reader;
    char pad0[64 - 32];
    _Atomic uint64_t head; /* written by the writer */
    char pad1[56];
    _Atomic uint64_t tail; /* written by the reader */
    char pad2[56];
    _Atomic uint32_t rd_sleep; /* the reader sleeps in zmq_poll: ring its doorbell after writing */
    char pad3[60];
    _Atomic uint32_t wr_sleep; /* the writer waits for space: ring its doorbell after consuming */
} zq_ring;

/* A remote data task not yet all in the peer's ring (its ring was full): dma_poll goes on. */
typedef struct zq_pend {
    int active;
    ncl_task t;
    const unsigned char *src, *src2;
    uint64_t sent;           /* bytes of the task already written */
} zq_pend;

/* What a zero-copy payload frame's release (zq_zc_free, in ZeroMQ's I/O thread) updates. */
typedef struct zq_zc_hint {
    _Atomic uint32_t *out;   /* the queue's count of frames ZeroMQ still holds */
    int fd;                  /* the eventfd that wakes the rank's poll */
} zq_zc_hint;

/* The latest collective tag a peer sent in one communicator: its call number, kind (call 0: none
 * seen) and descriptor, if it came with one. */
typedef struct zq_tag {
    uint64_t call;
    uint8_t coll;
    int has_desc;
    ncl_wire_desc desc;
} zq_tag;

/* One communicator on this rank's links: the world (the backend's own) or one made by split
 * (ncl_comm_split, ncl_comm_create_group, the pairs of ncl_send/ncl_recv). Its notify counters,
 * bound buffers, scratch, call numbers and queues are its own; the links, rings and failure state
 * are the backend's. Its frames carry `num` (NCL_WIRE_CAP_COMM), announced to each member by a COMM
 * before the first. */
typedef struct zq_comm {
    ncl_hal hal;             /* ctx: this */
    struct ncl_zmq *z;
    uint32_t id;             /* split's id (0: the world) */
    uint16_t num;            /* our number for it on the wire (0: the world) */
    int n, rank;             /* members and this rank's place; n 0: a peer announced it, split not called yet */
    int *world;              /* [member] -> world rank (NULL: the world itself) */
    uint8_t *told;           /* [world rank]: our COMM for it went to that peer */
    int released;            /* destroyed here: what still arrives for it is dropped */
    uint32_t *ctr;           /* [world sender * NCL_NOTIFY_IDS + id] */
    unsigned char *scratch;
    ncl_bk_bufs bufs;        /* the running collective's buffers */
    uint64_t seq;            /* collective being run (its call number in this communicator, 1 for the first) */
    uint64_t calls;          /* collectives begun in it */
    uint8_t coll;            /* and its kind (ncl_coll): the tag our NOTIFYs carry */
    ncl_wire_desc desc;      /* and its descriptor (count, dtype, op, ...), compared with the peers' */
    uint64_t done;           /* the last call that ended well here (an ABORT's done_call) */
    zq_tag *tags;            /* [world rank]: the latest tag that peer sent in this communicator */
    uint8_t *left;           /* [world rank]: that member destroyed its part (BYE in this communicator) */
    /* The first failure (mismatch, failed collective, ABORT) sticks: every later op returns it until
     * the communicator is destroyed. The world's is the backend's: a broken link or a failure in
     * the world breaks every communicator; a sub-communicator's breaks only itself. */
    ncl_result sticky;
    char err[ZQ_ERRLEN];
    char engine_err[ZQ_ERRLEN]; /* the engine's last error-level log line: an ABORT's reason when the
                                   failure is the engine's own (a timeout) */
    int abort_origin;        /* where the failure that broke it started, if another rank; else -1 */
    char relay[ZQ_ERRLEN];   /* that rank's own reason, which our ABORT passes on */
    int pending_origin;      /* an ABORT received while running a call its sender finished (-1:  */
    char pending[ZQ_ERRLEN]; /* none): it breaks us when the call ends, so the call can complete */
    char pending_relay[ZQ_ERRLEN];
    int abort_sent;          /* ABORT went to the members (once) */
    zq_pend pend[NCL_MAX_QUEUES];
    /* Zero-copy payload frames ZeroMQ still holds, per queue: its I/O thread releases them (zq_zc_free)
     * once written to the socket, and only then is the task complete and its source reusable. */
    _Atomic uint32_t zc_out[NCL_MAX_QUEUES];
    zq_zc_hint zc_hint[NCL_MAX_QUEUES]; /* what zq_zc_free gets: the counter and the eventfd */
    struct zq_comm *next;
} zq_comm;

struct ncl_zmq {
    zq_comm world;           /* the communicator the backend was made for; the others follow it */
    uint16_t nums;           /* numbers given to sub-communicators so far */
    int nranks, rank;
    /* Two contexts so a close can flush the outgoing BYEs (terminating ctx_tx waits for them)
     * before the ROUTER goes away: peers then see our BYE before our connection drops. */
    void *ctx_tx, *ctx_rx;
    void *router;
    zq_peer *peers;
    zmq_pollitem_t *items;   /* [0] router, [1..] monitors */
    int *item_peer;          /* the peer of items[k] */
    int nitems;
    uint64_t scratch_bytes;  /* every communicator's */
    unsigned char *bounce;   /* max_payload bytes, 64-aligned: a reduce payload ZeroMQ left misaligned */
    unsigned char *stage;    /* max_payload bytes, 64-aligned: a REDUCE_WRITE's src op src2 on its way out */
    int event;               /* something happened that wait_event has not reported */
    char err[ZQ_ERRLEN];     /* the first failure's message, whichever communicator's */
    char last[ZQ_ERRLEN];    /* the latest failure's, since the running call began (last_error) */
    ncl_wire_limits lim;
    ncl_wire_hello mine;
    uint64_t data_tx;        /* data frames sent, for the fault hooks */
    int shm;                 /* shared memory with same-host peers allowed (NCL_ZMQ_SHM != off) */
    uint64_t shm_bytes;      /* ring bytes per (writer, reader) pair */
    uint64_t shm_chunk;      /* largest payload of one ring record */
    uint64_t spin_ns;        /* wait_event polls the rings this long before it sleeps */
    uint64_t relax_ns;       /* ...the first relax_ns without yielding the core (0: ranks outnumber cores) */
    int nrx;                 /* peers whose ring we read */
    uint64_t zpoll_ns;       /* when zq_pump last polled the sockets */
    uint32_t zc_min;         /* payloads from this size go out without a copy (NCL_ZMQ_ZEROCOPY=off: none) */
    int zc_fd;               /* eventfd the release writes, polled with the sockets (-1: none) */
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
    snprintf(z->last, sizeof z->last, "%s", msg);
    zq_log(z, NCL_LOG_ERROR, msg);
    return rc;
}

/* Communicator c is broken from now on (the world: every one): the failure sticks (every later op
 * returns it). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void zq_stick(zq_comm *c, ncl_result rc, const char *fmt, ...)
{
    char msg[ZQ_ERRLEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->sticky == NCL_SUCCESS) {
        c->sticky = rc;
        snprintf(c->err, sizeof c->err, "%s", msg);
    }
    zq_fail(c->z, rc, "%s", msg);
    c->z->event = 1;
}

/* What breaks c: its own failure, else the world's (a broken link breaks every communicator). */
static ncl_result zq_sticky(const zq_comm *c)
{
    return c->sticky != NCL_SUCCESS ? c->sticky : c->z->world.sticky;
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
    zq_stick(&z->world, rc, "%s", msg);
}

/* The HAL's log op: the engine's error lines are kept, an ABORT carries the last one when the
 * failure is the engine's own (a timeout, a local error) and the backend saw nothing itself. */
static void zq_hal_log(void *ctx, int level, const char *msg)
{
    zq_comm *c = ctx;
    ncl_zmq *z = c->z;
    if (level == NCL_LOG_ERROR && msg)
        snprintf(c->engine_err, sizeof c->engine_err, "%s", msg);
    if (!z->log) /* with a sink, the program's ncl_config.log has them from the engine */
        zq_log(z, level, msg);
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

#define ZQ_SHM_OFFER 1   /* SHM payload kinds (byte 0): the writer offers its ring */
#define ZQ_SHM_ACCEPT 2  /* the reader mapped it: data commands go through it from now on */
#define ZQ_SHM_REFUSE 3  /* the reader cannot map it (another host, shared memory off): ZeroMQ stays */
#define ZQ_SHM_BELL 4    /* wake up: your ring has a record, or ours has space again */
#define ZQ_NOTIFY_KEEP (16u << 10) /* ring bytes data records leave free for NOTIFYs */
#define ZQ_ZPOLL_NS 1000000u /* zq_pump_quick looks at the sockets this often when rings carry all data */
#define ZQ_RELAX_NS 20000u   /* wait_event spins this long on the CPU before it yields between looks */
#define ZQ_STALL_NS 30000000000ull /* a NOTIFY gives up on a ring that stays full this long */
#define ZQ_ZC_MIN (32u << 10) /* payloads from this size go out without a copy (zq_send_parts) */

static ncl_result zq_send(ncl_zmq *z, int peer, ncl_wire_msg *m);
static void zq_pump(ncl_zmq *z, long timeout_ms);
static int zq_deaths(ncl_zmq *z, int *pending);

static int zq_is_data(uint8_t cmd)
{
    return cmd == NCL_WIRE_WRITE || cmd == NCL_WIRE_WRITE_REDUCE || cmd == NCL_WIRE_NOTIFY;
}

/* Fills in the fields every frame carries: ranks, clock, and (requests) the link's next seq. */
static void zq_stamp(ncl_zmq *z, int peer, ncl_wire_msg *m)
{
    zq_peer *p = &z->peers[peer];
    m->src = (uint32_t)z->rank;
    m->dst = (uint32_t)peer;
    m->time_ns = zq_now();
    if (!(m->flags & NCL_WIRE_FLAG_REPLY))
        m->seq = ++p->seq;
}

/* The test hook: a flipped bit in transit (the last payload byte, or a header byte). */
static void zq_corrupt(ncl_zmq *z, unsigned char *b, size_t len, const ncl_wire_msg *m, int peer)
{
    b[len > NCL_WIRE_HDR_LEN ? len - 1 : 20] ^= 0x10;
    zq_logf(z, NCL_LOG_WARN, "fault hook: corrupted data frame #%llu (%s to rank %d)", (unsigned long long)z->data_tx,
            ncl_wire_cmd_name(m->command), peer);
}

/* Counts a frame of len bytes sent to the peer; the test hook that dies after the die_nth data frame. */
static ncl_result zq_sent(ncl_zmq *z, zq_peer *p, size_t len, int data)
{
    p->st.frames_tx++;
    p->st.bytes_tx += len;
    if (data && z->data_tx == z->die_nth) {
        zq_logf(z, NCL_LOG_WARN, "fault hook: dying after data frame #%llu", (unsigned long long)z->data_tx);
        raise(SIGKILL);
    }
    return NCL_SUCCESS;
}

/* Encodes m into one frame and queues it on the peer's connection (never blocks: the high-water
 * mark is off, the engine's READY/DATA protocol bounds what is in flight). */
static ncl_result zq_send(ncl_zmq *z, int peer, ncl_wire_msg *m)
{
    zq_peer *p = &z->peers[peer];
    zq_stamp(z, peer, m);
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
    if (data && ++z->data_tx == z->corrupt_nth)
        zq_corrupt(z, zmq_msg_data(&f), len, m, peer);
    if (zmq_msg_send(&f, p->dealer, ZMQ_DONTWAIT) < 0) {
        int e = errno;
        zmq_msg_close(&f);
        return zq_fail(z, NCL_ERR_LINK, "link to rank %d (%s): send of %s failed: %s", peer, p->endpoint,
                       ncl_wire_cmd_name(m->command), zmq_strerror(e));
    }
    return zq_sent(z, p, len, data);
}

/* ZeroMQ's I/O thread is done with a zero-copy payload frame (written to the socket, or dropped
 * with its connection): one fewer for the queue, and a wake-up for a rank asleep in zmq_poll. */
static void zq_zc_free(void *data, void *hint)
{
    (void)data;
    const zq_zc_hint *h = hint;
    atomic_fetch_sub_explicit(h->out, 1, memory_order_release);
    if (h->fd >= 0) {
        uint64_t one = 1;
        ssize_t w = write(h->fd, &one, sizeof one);
        (void)w; /* a full counter still wakes the poll */
    }
}

/* WRITE / WRITE_REDUCE over ZeroMQ as two frames of one message: the header, then the payload.
 * A payload of ZQ_ZC_MIN bytes or more is sent from where it lies (zmq_msg_init_data, no copy);
 * the task that owns it is complete only when ZeroMQ released it (zc_out[queue], zq_zc_free),
 * because the engine may overwrite a completed task's source at once (a ring reuses its chunks).
 * Smaller payloads are copied into the frame: a copy of a few KiB costs less than the release's
 * eventfd wake-up. `stable` 0 (a payload in the staging buffer, reused by the next chunk) copies too. */
static ncl_result zq_send_parts(zq_comm *c, int peer, ncl_wire_msg *m, uint32_t queue, int stable)
{
    ncl_zmq *z = c->z;
    zq_peer *p = &z->peers[peer];
    zq_stamp(z, peer, m);
    zmq_msg_t h, d;
    if (zmq_msg_init_size(&h, NCL_WIRE_HDR_LEN) != 0)
        return zq_fail(z, NCL_ERR_OUT_OF_MEMORY, "header frame to rank %d: out of memory", peer);
    size_t len = 0;
    ncl_wire_result wr = ncl_wire_encode_head(m, zmq_msg_data(&h), NCL_WIRE_HDR_LEN, &len);
    if (wr != NCL_WIRE_OK) {
        zmq_msg_close(&h);
        return zq_fail(z, NCL_ERR_INTERNAL, "encoding %s to rank %d: %s", ncl_wire_cmd_name(m->command), peer,
                       ncl_wire_result_name(wr));
    }
    if (++z->data_tx == z->corrupt_nth) /* in the header frame: the payload is the sender's own buffer */
        zq_corrupt(z, zmq_msg_data(&h), NCL_WIRE_HDR_LEN, m, peer);
    int zc = stable && m->payload_len >= z->zc_min;
    if (zc) {
        if (zmq_msg_init_data(&d, (void *)(uintptr_t)m->payload, m->payload_len, zq_zc_free, &c->zc_hint[queue]) != 0) {
            zmq_msg_close(&h);
            return zq_fail(z, NCL_ERR_OUT_OF_MEMORY, "payload frame to rank %d: out of memory", peer);
        }
        atomic_fetch_add_explicit(&c->zc_out[queue], 1, memory_order_relaxed);
    } else {
        if (zmq_msg_init_size(&d, m->payload_len) != 0) {
            zmq_msg_close(&h);
            return zq_fail(z, NCL_ERR_OUT_OF_MEMORY, "payload frame of %u bytes to rank %d: out of memory",
                           (unsigned)m->payload_len, peer);
        }
        memcpy(zmq_msg_data(&d), m->payload, m->payload_len);
    }
    /* The header frame is queued with SNDMORE and the message goes out whole or not at all */
    if (zmq_msg_send(&h, p->dealer, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 || zmq_msg_send(&d, p->dealer, ZMQ_DONTWAIT) < 0) {
        int e = errno;
        zmq_msg_close(&h);
        zmq_msg_close(&d); /* releases a zero-copy payload (zq_zc_free) */
        return zq_fail(z, NCL_ERR_LINK, "link to rank %d (%s): send of %s failed: %s", peer, p->endpoint,
                       ncl_wire_cmd_name(m->command), zmq_strerror(e));
    }
    return zq_sent(z, p, NCL_WIRE_HDR_LEN + m->payload_len, 1);
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

/* ---- shared memory: the writer's side ------------------------------------------------------
 *
 * Two ranks on one host move their data commands (WRITE, WRITE_REDUCE, NOTIFY: the same wire
 * frames, checksum included) through a ring in shared memory that the writer owns and the reader
 * maps; ZeroMQ keeps the control messages (HELLO, ERROR, ABORT, BYE, the ring's offer and the
 * doorbells) and the connection whose drop tells a death. A record is 64-aligned: a length word,
 * padding to 64 bytes, then the frame, so a WRITE_REDUCE payload is aligned for the kernels and the
 * reader reduces straight from the mapping into its buffer (one copy on each side instead of the
 * socket's two and ZeroMQ's buffers). The writer publishes a record by advancing head (release)
 * after writing it, the reader frees it by advancing tail: nothing is overwritten before it was
 * applied, and a writer that dies mid-record leaves nothing half-visible. */

static uint64_t zq_round64(uint64_t n)
{
    return (n + 63u) & ~(uint64_t)63u;
}

static unsigned char *zq_ring_data(zq_ring *r)
{
    return (unsigned char *)r + ZQ_RING_HDR;
}

/* A wake-up for a peer that sleeps in zmq_poll (its ring has news: a record, or free space). */
static void zq_doorbell(ncl_zmq *z, int peer)
{
    unsigned char body[8] = {ZQ_SHM_BELL};
    ncl_wire_msg m;
    memset(&m, 0, sizeof m);
    m.command = NCL_WIRE_SHM;
    m.payload = body;
    m.payload_len = sizeof body;
    zq_send(z, peer, &m);
}

/* The ring bytes a record of a `len`-byte frame takes at the ring's head (with the skip to the
 * start when it does not fit before the end), and whether that much is free beyond `keep`. */
static int zq_ring_fits(const zq_peer *p, size_t len, uint64_t keep)
{
    zq_ring *r = p->tx;
    uint64_t rec = ZQ_REC_HDR + zq_round64(len);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    uint64_t room = p->tx_bytes - head % p->tx_bytes;
    uint64_t take = room < rec ? room + rec : rec;
    return p->tx_bytes - (head - tail) >= take + keep;
}

/* Writes m as one record into our ring to `peer`: NCL_SUCCESS, or NCL_IN_PROGRESS when the ring
 * lacks the space (leaving `keep` bytes free, so the NOTIFYs that publish data always fit). */
static ncl_result zq_ring_put(ncl_zmq *z, int peer, ncl_wire_msg *m, uint64_t keep)
{
    zq_peer *p = &z->peers[peer];
    zq_ring *r = p->tx;
    size_t need = 0;
    ncl_wire_result wr = ncl_wire_encode(m, NULL, 0, &need);
    if (wr != NCL_WIRE_ERR_NO_SPACE && wr != NCL_WIRE_OK)
        return zq_fail(z, NCL_ERR_INTERNAL, "encoding %s to rank %d: %s", ncl_wire_cmd_name(m->command), peer,
                       ncl_wire_result_name(wr));
    if (!zq_ring_fits(p, need, keep))
        return NCL_IN_PROGRESS;
    uint64_t rec = ZQ_REC_HDR + zq_round64(need);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t pos = head % p->tx_bytes, room = p->tx_bytes - pos;
    unsigned char *d = zq_ring_data(r);
    if (room < rec) {
        uint64_t skip = ZQ_REC_SKIP;
        memcpy(d + pos, &skip, sizeof skip);
        head += room;
        pos = 0;
    }
    zq_stamp(z, peer, m);
    size_t len = 0;
    wr = ncl_wire_encode(m, d + pos + ZQ_REC_HDR, need, &len);
    if (wr != NCL_WIRE_OK)
        return zq_fail(z, NCL_ERR_INTERNAL, "encoding %s to rank %d: %s", ncl_wire_cmd_name(m->command), peer,
                       ncl_wire_result_name(wr));
    int data = zq_is_data(m->command);
    if (data && ++z->data_tx == z->corrupt_nth)
        zq_corrupt(z, d + pos + ZQ_REC_HDR, len, m, peer);
    uint64_t lw = len;
    memcpy(d + pos, &lw, sizeof lw);
    /* seq_cst, with the load of rd_sleep after it: the reader sets rd_sleep and then reads head
     * (both seq_cst), so either it sees this record or we see it asleep and ring */
    atomic_store_explicit(&r->head, head + rec, memory_order_seq_cst);
    if (atomic_load_explicit(&r->rd_sleep, memory_order_seq_cst) && atomic_exchange(&r->rd_sleep, 0))
        zq_doorbell(z, peer);
    return zq_sent(z, p, len, data);
}

static int zq_world_rank(const zq_comm *c, int r);
static ncl_result zq_announce(zq_comm *c, int peer);

/* Tells every member of c that agreed NCL_WIRE_CAP_COLL (the world: every peer) that c is broken
 * on this rank and why, so they fail at once instead of at their timeouts. Once per communicator
 * (at most N-1 small frames per rank and failure). A failure that came from another rank is
 * relayed with that origin and its reason: every rank says ABORT before it can say BYE, so a peer
 * that sees this rank leave has already been told why (the link is FIFO). A sub-communicator's
 * ABORT carries its number (announced first if need be): it breaks that communicator only. */
static void zq_abort_peers(zq_comm *c, uint64_t call, ncl_result code)
{
    ncl_zmq *z = c->z;
    if (c->abort_sent)
        return;
    c->abort_sent = 1;
    int origin = c->abort_origin >= 0 ? c->abort_origin : z->rank;
    /* the world's: the backend's first failure (a death it saw, say), not what the engine made of it */
    const char *reason = c->abort_origin >= 0 ? c->relay : c != &z->world && c->err[0] ? c->err : z->err;
    for (int k = 0; k < c->n; k++) {
        int i = zq_world_rank(c, k);
        zq_peer *p = &z->peers[i];
        if (i == z->rank || i == origin || !p->coll_ok || (p->state != ZL_UP && p->state != ZL_BROKEN))
            continue;
        if (zq_announce(c, i) != NCL_SUCCESS)
            continue;
        ncl_wire_msg m;
        memset(&m, 0, sizeof m);
        m.command = NCL_WIRE_ABORT;
        m.comm = c->num;
        m.error_code = (uint32_t)code;
        m.call = call;
        m.coll = call ? c->coll : 0;
        m.done_call = c->done;
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
static int zq_mismatch(zq_comm *c, int peer, uint64_t seq, uint8_t coll)
{
    ncl_zmq *z = c->z;
    const zq_tag *p = &c->tags[peer];
    if (!p->call || p->call != seq)
        return 0;
    if (p->coll != coll) {
        zq_stick(c, NCL_ERR_REMOTE, "mismatch: rank %d called %s #%llu while this rank (%d) called %s #%llu: every "
                 "rank must call the same collectives in the same order", peer, ncl_coll_name((ncl_coll)p->coll),
                 (unsigned long long)seq, z->rank, ncl_coll_name((ncl_coll)coll), (unsigned long long)seq);
        return 1;
    }
    if (!p->has_desc) /* a peer without NCL_WIRE_CAP_DESC: the kind is all we know */
        return 0;
    ncl_hal_launch mine = {.seq = seq, .coll = coll, .count = c->desc.count, .dtype = c->desc.dtype,
                           .op = c->desc.op, .algo = c->desc.algo, .inplace = c->desc.inplace, .root = c->desc.root};
    ncl_hal_launch theirs = {.seq = seq, .coll = coll, .count = p->desc.count, .dtype = p->desc.dtype,
                             .op = p->desc.op, .algo = p->desc.algo, .inplace = p->desc.inplace, .root = p->desc.root};
    char why[256];
    if (!ncl_launch_mismatch(&mine, z->rank, &theirs, peer, why, sizeof why))
        return 0;
    zq_stick(c, NCL_ERR_REMOTE, "mismatch: %s", why);
    return 1;
}

/* A received ABORT breaks this rank now (unless something broke it first: the first failure
 * stands), its origin and reason kept for our own ABORT to pass on. */
static void zq_apply_pending(zq_comm *c)
{
    if (c->pending_origin < 0)
        return;
    if (c->sticky == NCL_SUCCESS) {
        c->abort_origin = c->pending_origin;
        snprintf(c->relay, sizeof c->relay, "%s", c->pending_relay);
        zq_stick(c, NCL_ERR_REMOTE, "%s", c->pending);
    }
    c->pending_origin = -1;
}

/* ---- buffers ------------------------------------------------------------------------------- */

static unsigned char *zq_region(zq_comm *c, ncl_ref ref, uint64_t bytes, int write, char *why, size_t why_len)
{
    uint64_t addr = 0;
    char inner[200];
    if (!ncl_bk_region(&c->bufs, ref, bytes, write, &addr, inner, sizeof inner)) {
        snprintf(why, why_len, "on rank %d: %s", c->z->rank, inner);
        return NULL;
    }
    return ncl_bk_ptr(addr);
}

/* ---- communicators ------------------------------------------------------------------------- */

/* Sets up c (zeroed) as communicator `id`'s state on this rank: counters, tags, scratch. 0 when
 * out of memory. */
static int zq_comm_init(ncl_zmq *z, zq_comm *c, uint32_t id)
{
    c->hal.ops = &ncl_zmq_hal_ops;
    c->hal.ctx = c;
    c->z = z;
    c->id = id;
    c->n = z->nranks;
    c->rank = z->rank;
    c->abort_origin = -1;
    c->pending_origin = -1;
    c->left = calloc((size_t)z->nranks, 1);
    c->ctr = calloc((size_t)z->nranks * NCL_NOTIFY_IDS, sizeof *c->ctr);
    c->tags = calloc((size_t)z->nranks, sizeof *c->tags);
    c->told = calloc((size_t)z->nranks, 1);
    c->scratch = z->scratch_bytes ? aligned_alloc(64, (size_t)((z->scratch_bytes + 63) / 64 * 64)) : NULL;
    for (uint32_t q = 0; q < NCL_MAX_QUEUES; q++)
        c->zc_hint[q] = (zq_zc_hint){.out = &c->zc_out[q], .fd = z->zc_fd};
    if (!c->ctr || !c->tags || !c->told || !c->left || (z->scratch_bytes && !c->scratch))
        return 0;
    ncl_bk_keep_scratch(&c->bufs, (uint64_t)(uintptr_t)c->scratch, z->scratch_bytes); /* landing zones */
    return 1;
}

static void zq_comm_free_parts(zq_comm *c)
{
    free(c->ctr);
    free(c->tags);
    free(c->told);
    free(c->left);
    free(c->scratch);
    free(c->world);
    c->ctr = NULL;
    c->scratch = NULL;
}

static zq_comm *zq_comm_find(ncl_zmq *z, uint32_t id)
{
    for (zq_comm *c = z->world.next; c; c = c->next)
        if (c->id == id)
            return c;
    return NULL;
}

/* A new sub-communicator `id`, its members not known yet (n 0): split or a peer's COMM makes it. */
static zq_comm *zq_comm_new(ncl_zmq *z, uint32_t id)
{
    zq_comm *c = calloc(1, sizeof *c);
    if (!c || !zq_comm_init(z, c, id)) {
        if (c)
            zq_comm_free_parts(c);
        free(c);
        return NULL;
    }
    c->n = 0;
    c->rank = -1;
    zq_comm **at = &z->world.next;
    while (*at)
        at = &(*at)->next;
    *at = c;
    return c;
}

/* The world rank of c's member r (-1: none). */
static int zq_world_rank(const zq_comm *c, int r)
{
    if (r < 0 || r >= c->n)
        return -1;
    return c->world ? c->world[r] : r;
}

/* A peer's COMM: its number m->comm names communicator m->comm_id in what it sends us from now
 * on. The communicator may not exist here yet (this rank has not called split): its counters and
 * scratch are made now, and split takes them over. */
static void zq_comm_announced(ncl_zmq *z, int peer, const ncl_wire_msg *m)
{
    zq_peer *p = &z->peers[peer];
    if (!p->comm_ok) {
        zq_break(z, peer, NCL_ERR_LINK, "link from rank %d (%s): COMM, which HELLO did not agree", peer, p->endpoint);
        return;
    }
    if (m->comm < p->rx_ncomm && p->rx_comm[m->comm]) {
        zq_break(z, peer, NCL_ERR_LINK, "link from rank %d (%s): communicator %u announced twice", peer, p->endpoint,
                 (unsigned)m->comm);
        return;
    }
    zq_comm *c = zq_comm_find(z, m->comm_id);
    if (!c && !(c = zq_comm_new(z, m->comm_id))) {
        zq_stick(&z->world, NCL_ERR_OUT_OF_MEMORY, "communicator %08x announced by rank %d: out of memory (scratch %llu bytes)",
                 (unsigned)m->comm_id, peer, (unsigned long long)z->scratch_bytes);
        return;
    }
    if (m->comm >= p->rx_ncomm) {
        uint32_t n = p->rx_ncomm ? p->rx_ncomm : 8u;
        while (n <= m->comm)
            n *= 2;
        zq_comm **t = realloc(p->rx_comm, n * sizeof *t);
        if (!t) {
            zq_stick(&z->world, NCL_ERR_OUT_OF_MEMORY, "communicator table of rank %d: out of memory", peer);
            return;
        }
        memset(t + p->rx_ncomm, 0, (n - p->rx_ncomm) * sizeof *t);
        p->rx_comm = t;
        p->rx_ncomm = n;
    }
    p->rx_comm[m->comm] = c;
}

static ncl_result zq_ring_put_wait(zq_comm *c, int peer, ncl_wire_msg *m);

/* Before c's first frame to `peer` (a world rank): the COMM that tells it which communicator our
 * number names, on the path the data takes (ring or connection), so it arrives first. */
static ncl_result zq_announce(zq_comm *c, int peer)
{
    if (!c->num || c->told[peer])
        return NCL_SUCCESS;
    ncl_zmq *z = c->z;
    ncl_wire_msg m;
    memset(&m, 0, sizeof m);
    m.command = NCL_WIRE_COMM;
    m.comm = c->num;
    m.comm_id = c->id;
    ncl_result rc = z->peers[peer].tx_on ? zq_ring_put_wait(c, peer, &m) : zq_send(z, peer, &m);
    if (rc == NCL_SUCCESS)
        c->told[peer] = 1;
    return rc;
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

/* ---- shared memory: setting a ring up -------------------------------------------------------- */

/* This machine's boot id (/proc/sys/kernel/random/boot_id): ranks with the same one share a
 * kernel, so a ring offered by /proc/<pid>/fd/<fd> may be reachable. "" when unknown. */
static void zq_boot_id(char out[40])
{
    out[0] = '\0';
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!f)
        return;
    if (!fgets(out, 40, f))
        out[0] = '\0';
    fclose(f);
    out[strcspn(out, "\n")] = '\0';
}

static void zq_put64(unsigned char *b, uint64_t v)
{
    memcpy(b, &v, 8);
}

static uint64_t zq_get64(const unsigned char *b)
{
    uint64_t v;
    memcpy(&v, b, 8);
    return v;
}

/* Offers the peer a ring for our data commands towards it: a memfd the peer opens through
 * /proc/<our pid>/fd/<fd> (a memfd has no name to leak when a rank is killed, and is not bounded by
 * /dev/shm's size), checked by a random cookie. Offer payload: kind, 7 bytes 0, u64 cookie, u64
 * ring bytes, u32 pid, u32 fd, then the boot id (NUL-terminated). A failure only keeps ZeroMQ. */
static void zq_shm_offer(ncl_zmq *z, int peer)
{
    zq_peer *p = &z->peers[peer];
    if (!z->shm || !p->shm_cap || p->offer)
        return;
    size_t map = ZQ_RING_HDR + (size_t)z->shm_bytes;
    int fd = memfd_create("ncl-zmq-ring", MFD_CLOEXEC);
    void *a = MAP_FAILED;
    if (fd < 0 || ftruncate(fd, (off_t)map) != 0 ||
        (a = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
        zq_logf(z, NCL_LOG_INFO, "no shared-memory ring to rank %d (%s): ZeroMQ carries its data", peer,
                strerror(errno));
        if (fd >= 0)
            close(fd);
        return;
    }
    zq_ring *r = a;
    /* the cookie only has to differ between rings and runs: time, pid and addresses mixed */
    uint64_t c = zq_now() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)a ^ ((uint64_t)peer << 48);
    c ^= c >> 29;
    c *= 0xBF58476D1CE4E5B9ull;
    c ^= c >> 32;
    r->magic = ZQ_RING_MAGIC;
    r->cookie = c;
    r->bytes = z->shm_bytes;
    r->writer = (uint32_t)z->rank;
    r->reader = (uint32_t)peer;
    p->tx = r;
    p->tx_bytes = z->shm_bytes;
    p->tx_fd = fd;
    p->cookie = c;
    unsigned char body[NCL_WIRE_SHM_MAX];
    memset(body, 0, sizeof body);
    body[0] = ZQ_SHM_OFFER;
    zq_put64(body + 8, c);
    zq_put64(body + 16, z->shm_bytes);
    uint32_t pid = (uint32_t)getpid(), ufd = (uint32_t)fd;
    memcpy(body + 24, &pid, 4);
    memcpy(body + 28, &ufd, 4);
    char boot[40];
    zq_boot_id(boot);
    size_t bl = strlen(boot);
    memcpy(body + 32, boot, bl + 1);
    ncl_wire_msg m;
    memset(&m, 0, sizeof m);
    m.command = NCL_WIRE_SHM;
    m.payload = body;
    m.payload_len = (uint32_t)(32 + bl + 1);
    p->offer = 1;
    zq_send(z, peer, &m);
}

/* Our ring to `peer` will not be used (refused, or the link broke): unmapped, fd closed. */
static void zq_shm_drop_tx(zq_peer *p)
{
    if (p->tx)
        munmap(p->tx, ZQ_RING_HDR + (size_t)p->tx_bytes);
    if (p->tx_fd >= 0)
        close(p->tx_fd);
    p->tx = NULL;
    p->tx_fd = -1;
    p->tx_on = 0;
}

/* Maps the ring `peer` offers; NULL and why when it cannot (another host, another pid namespace,
 * shared memory off here, a ring that is not the one offered). */
static zq_ring *zq_shm_map(ncl_zmq *z, int peer, const unsigned char *b, size_t len, char *why, size_t why_len)
{
    if (!z->shm) {
        snprintf(why, why_len, "shared memory is off on rank %d (NCL_ZMQ_SHM=off)", z->rank);
        return NULL;
    }
    uint64_t cookie = zq_get64(b + 8), bytes = zq_get64(b + 16);
    uint32_t pid, fd;
    memcpy(&pid, b + 24, 4);
    memcpy(&fd, b + 28, 4);
    char boot[40], theirs[40];
    zq_boot_id(boot);
    size_t bl = strnlen((const char *)b + 32, len - 32);
    if (bl >= sizeof theirs || 32 + bl >= len) {
        snprintf(why, why_len, "malformed offer");
        return NULL;
    }
    memcpy(theirs, b + 32, bl + 1);
    if (!boot[0] || strcmp(boot, theirs) != 0) {
        snprintf(why, why_len, "another host (boot id %s, here %s)", theirs, boot[0] ? boot : "unknown");
        return NULL;
    }
    if (bytes < 4096 || bytes % 64 || bytes > (1ull << 40)) {
        snprintf(why, why_len, "ring of %llu bytes", (unsigned long long)bytes);
        return NULL;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/%u/fd/%u", (unsigned)pid, (unsigned)fd);
    int f = open(path, O_RDWR | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (f < 0) {
        snprintf(why, why_len, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    size_t map = ZQ_RING_HDR + (size_t)bytes;
    void *a = MAP_FAILED;
    if (fstat(f, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != map ||
        (a = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0)) == MAP_FAILED) {
        snprintf(why, why_len, "%s is not the offered ring", path);
        close(f);
        return NULL;
    }
    close(f); /* the mapping keeps the memory */
    zq_ring *r = a;
    if (r->magic != ZQ_RING_MAGIC || r->cookie != cookie || r->bytes != bytes || r->writer != (uint32_t)peer ||
        r->reader != (uint32_t)z->rank) {
        munmap(a, map);
        snprintf(why, why_len, "%s is not the offered ring (cookie)", path);
        return NULL;
    }
    return r;
}

/* An SHM message from `peer` (offer, answer, doorbell). A doorbell needs nothing: its arrival woke
 * the poll, and the peer's ring was drained before it was applied. */
static void zq_shm_message(ncl_zmq *z, int peer, const ncl_wire_msg *m)
{
    zq_peer *p = &z->peers[peer];
    const unsigned char *b = m->payload;
    char why[200];
    unsigned kind = m->payload_len ? b[0] : 0;
    if (!(z->mine.caps & NCL_WIRE_CAP_SHM) || !p->shm_cap) {
        zq_break(z, peer, NCL_ERR_LINK, "link from rank %d (%s): SHM message without the SHM capability", peer,
                 p->endpoint);
        return;
    }
    switch (kind) {
    case ZQ_SHM_OFFER: {
        if (m->payload_len < 33 || p->rx) {
            zq_break(z, peer, NCL_ERR_LINK, "link from rank %d (%s): %s shared-memory offer", peer, p->endpoint,
                     p->rx ? "a second" : "a malformed");
            return;
        }
        zq_ring *r = zq_shm_map(z, peer, b, m->payload_len, why, sizeof why);
        unsigned char body[NCL_WIRE_SHM_MAX];
        memset(body, 0, sizeof body);
        body[0] = r ? ZQ_SHM_ACCEPT : ZQ_SHM_REFUSE;
        memcpy(body + 8, b + 8, 8);
        size_t n = 16;
        if (r) {
            p->rx = r;
            p->rx_bytes = zq_get64(b + 16);
            z->nrx++;
            zq_logf(z, NCL_LOG_DEBUG, "rank %d's data comes through shared memory (%llu-byte ring)", peer,
                    (unsigned long long)p->rx_bytes);
        } else {
            zq_logf(z, NCL_LOG_INFO, "rank %d's shared-memory ring not used, ZeroMQ carries its data: %s", peer, why);
            size_t wl = strlen(why);
            if (wl > NCL_WIRE_SHM_MAX - n)
                wl = NCL_WIRE_SHM_MAX - n;
            memcpy(body + n, why, wl);
            n += wl;
        }
        ncl_wire_msg a;
        memset(&a, 0, sizeof a);
        a.command = NCL_WIRE_SHM;
        a.payload = body;
        a.payload_len = (uint32_t)n;
        zq_send(z, peer, &a);
        return;
    }
    case ZQ_SHM_ACCEPT:
    case ZQ_SHM_REFUSE:
        if (p->offer != 1 || m->payload_len < 16 || zq_get64(b + 8) != p->cookie) {
            zq_break(z, peer, NCL_ERR_LINK, "link from rank %d (%s): an answer to no shared-memory offer of ours",
                     peer, p->endpoint);
            return;
        }
        p->offer = 2;
        if (kind == ZQ_SHM_ACCEPT) {
            p->tx_on = 1;
            close(p->tx_fd); /* the peer has it mapped: nothing else will open it */
            p->tx_fd = -1;
        } else {
            zq_logf(z, NCL_LOG_INFO, "rank %d did not map our shared-memory ring, ZeroMQ carries our data: %.*s",
                    peer, (int)(m->payload_len - 16), (const char *)b + 16);
            zq_shm_drop_tx(p);
        }
        return;
    case ZQ_SHM_BELL:
        return;
    default:
        zq_break(z, peer, NCL_ERR_LINK, "link from rank %d (%s): SHM message of unknown kind %u", peer, p->endpoint,
                 kind);
        return;
    }
}

static void zq_apply_parts(ncl_zmq *z, int peer, const unsigned char *b, size_t len, const unsigned char *pay,
                           size_t pay_len, int split);

static void zq_apply(ncl_zmq *z, int peer, const unsigned char *b, size_t len)
{
    zq_apply_parts(z, peer, b, len, NULL, 0, 0);
}

/* Applies one message that arrived on the link from `peer`: one frame b[0..len), or (split) a
 * header frame and a payload frame (ncl_wire_decode_parts). */
static void zq_apply_parts(ncl_zmq *z, int peer, const unsigned char *b, size_t len, const unsigned char *pay,
                           size_t pay_len, int split)
{
    zq_peer *p = &z->peers[peer];
    ncl_wire_msg m;
    char why[256];
    p->st.frames_rx++;
    p->st.bytes_rx += len + pay_len;
    z->event = 1;
    if (p->state == ZL_BROKEN)
        return; /* nothing from a broken link is trusted */
    ncl_wire_result wr = split ? ncl_wire_decode_parts(b, len, pay, pay_len, &z->lim, &m, why, sizeof why)
                               : ncl_wire_decode(b, len, &z->lim, &m, why, sizeof why);
    len += pay_len;
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
        if (z->world.sticky == NCL_SUCCESS) { /* the failure started on that rank: our ABORT says so */
            z->world.abort_origin = peer;
            snprintf(z->world.relay, sizeof z->world.relay, "%.*s", (int)m.payload_len, (const char *)m.payload);
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
        /* outside NCL_WIRE_CAP_KNOWN (agreement drops it): both sides announce it, as LINK */
        p->shm_cap = (z->mine.caps & NCL_WIRE_CAP_SHM) && (m.hello.caps & NCL_WIRE_CAP_SHM);
        p->split_ok = (m.hello.caps & NCL_WIRE_CAP_SPLIT) != 0;
        p->comm_ok = (z->mine.caps & NCL_WIRE_CAP_COMM) && (m.hello.caps & NCL_WIRE_CAP_COMM);
        zq_send_hello(z, peer, 1, &agreed, m.seq);
        zq_shm_offer(z, peer);
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
    zq_comm *c = &z->world; /* the communicator the message belongs to */
    if (m.command == NCL_WIRE_COMM) {
        zq_comm_announced(z, peer, &m);
        return;
    }
    if (m.comm) {
        c = m.comm < p->rx_ncomm ? p->rx_comm[m.comm] : NULL;
        if (!c) {
            zq_break(z, peer, NCL_ERR_LINK, "link from rank %d (%s): %s in communicator %u, which it never announced "
                     "(COMM)", peer, p->endpoint, ncl_wire_cmd_name(m.command), (unsigned)m.comm);
            return;
        }
        if (c->released && m.command != NCL_WIRE_ABORT)
            return; /* destroyed here: its peers' last records no longer matter */
    }
    switch (m.command) {
    case NCL_WIRE_SHM:
        zq_shm_message(z, peer, &m);
        return;
    case NCL_WIRE_BYE:
        if (m.comm) { /* the peer destroyed its part of c: a wait on it would never end */
            c->left[peer] = 1;
            return;
        }
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
            c->tags[peer] = (zq_tag){.call = m.call, .coll = m.coll, .has_desc = m.has_desc, .desc = m.desc};
            if (c->bufs.bound && zq_mismatch(c, peer, c->seq, c->coll))
                return;
        }
        c->ctr[(size_t)peer * NCL_NOTIFY_IDS + m.notify]++;
        return;
    case NCL_WIRE_ABORT: {
        char what[64];
        if (m.call)
            snprintf(what, sizeof what, "%s #%llu", ncl_coll_name((ncl_coll)m.coll), (unsigned long long)m.call);
        else
            snprintf(what, sizeof what, "its communicator");
        if (zq_sticky(c) != NCL_SUCCESS || c->pending_origin >= 0)
            return; /* the first failure stands */
        c->pending_origin = (int)m.origin;
        if (m.origin == (uint32_t)peer)
            snprintf(c->pending, sizeof c->pending, "rank %d aborted %s: %.*s", peer, what, (int)m.payload_len,
                     (const char *)m.payload);
        else
            snprintf(c->pending, sizeof c->pending, "rank %u aborted (relayed by rank %d, in %s): %.*s",
                     (unsigned)m.origin, peer, what, (int)m.payload_len, (const char *)m.payload);
        snprintf(c->pending_relay, sizeof c->pending_relay, "%.*s", (int)m.payload_len, (const char *)m.payload);
        /* The sender finished our running call before it broke: the call can still complete
         * (every frame of it the sender sent came before this one); we break when it ends. */
        if (!(c->bufs.bound && c->seq <= m.done_call))
            zq_apply_pending(c);
        z->event = 1;
        return;
    }
    case NCL_WIRE_WRITE:
    case NCL_WIRE_WRITE_REDUCE: {
        ncl_ref at = {m.buf, m.off};
        unsigned char *dst = zq_region(c, at, m.bytes, 1, why, sizeof why);
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

/* Applies every record in `peer`'s ring to us, oldest first, freeing each as soon as it was
 * applied so the writer can refill while we reduce. */
static void zq_shm_drain(ncl_zmq *z, int peer)
{
    zq_peer *p = &z->peers[peer];
    zq_ring *r = p->rx;
    if (!r)
        return;
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    unsigned char *d = zq_ring_data(r);
    const uint64_t size = p->rx_bytes;
    while (tail != head) {
        uint64_t pos = tail % size, lw;
        memcpy(&lw, d + pos, sizeof lw);
        if (lw == ZQ_REC_SKIP) {
            tail += size - pos;
        } else {
            uint64_t rec = ZQ_REC_HDR + zq_round64(lw);
            if (head - tail > size || lw < NCL_WIRE_HDR_LEN || rec > size - pos || rec > head - tail) {
                /* the writer's bookkeeping is broken: nothing more from it is trusted */
                zq_break(z, peer, NCL_ERR_LINK, "shared-memory ring from rank %d: record of %llu bytes at %llu "
                         "(head %llu, tail %llu, ring %llu) is not a record", peer, (unsigned long long)lw,
                         (unsigned long long)pos, (unsigned long long)head, (unsigned long long)tail,
                         (unsigned long long)size);
                z->nrx--;
                p->rx = NULL; /* unmapped at close (the peer may still write it) */
                munmap(r, ZQ_RING_HDR + (size_t)size);
                return;
            }
            zq_apply(z, peer, d + pos + ZQ_REC_HDR, (size_t)lw);
            tail += rec;
        }
        atomic_store_explicit(&r->tail, tail, memory_order_seq_cst);
        if (atomic_load_explicit(&r->wr_sleep, memory_order_seq_cst) && atomic_exchange(&r->wr_sleep, 0))
            zq_doorbell(z, peer);
        if (tail == head)
            head = atomic_load_explicit(&r->head, memory_order_acquire);
    }
}

static void zq_shm_drain_all(ncl_zmq *z)
{
    if (!z->nrx)
        return;
    for (int i = 0; i < z->nranks; i++)
        if (z->peers[i].rx)
            zq_shm_drain(z, i);
}

/* Something to do without sleeping: a record in a ring to us, or room again in a ring a pending
 * task of ours waits on. */
static int zq_shm_ready(ncl_zmq *z)
{
    for (int i = 0; i < z->nranks && z->nrx; i++) {
        zq_ring *r = z->peers[i].rx;
        if (r && atomic_load_explicit(&r->head, memory_order_acquire) !=
                     atomic_load_explicit(&r->tail, memory_order_relaxed))
            return 1;
    }
    for (zq_comm *c = &z->world; c; c = c->next)
        for (uint32_t q = 0; q < NCL_MAX_QUEUES; q++) {
            const zq_pend *w = &c->pend[q];
            if (w->active && w->sent == w->t.bytes && !atomic_load_explicit(&c->zc_out[q], memory_order_acquire))
                return 1;
            if (w->active && z->peers[w->t.peer].tx_on && zq_ring_fits(&z->peers[w->t.peer], NCL_WIRE_HDR_LEN +
                                                                        (size_t)z->shm_chunk, ZQ_NOTIFY_KEEP))
                return 1;
        }
    return 0;
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
    zq_shm_drain_all(z);
    z->zpoll_ns = zq_now();
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
            /* one frame, or a header frame and a payload frame (zq_send_parts); more is dropped */
            zmq_msg_t g;
            zmq_msg_init(&g);
            int split = 0;
            if (zmq_msg_more(&f)) {
                while ((got = zmq_msg_recv(&g, z->router, 0)) < 0 && zmq_errno() == EINTR)
                    ;
                split = got >= 0;
            }
            while (split && zmq_msg_more(&g)) {
                zmq_msg_t x;
                zmq_msg_init(&x);
                while (zmq_msg_recv(&x, z->router, 0) < 0 && zmq_errno() == EINTR)
                    ;
                int more = zmq_msg_more(&x);
                zmq_msg_close(&x);
                if (peer >= 0)
                    zq_break(z, peer, NCL_ERR_LINK, "link from rank %d: a message of more than two frames", peer);
                if (!more)
                    break;
            }
            if (peer < 0) {
                zq_logf(z, NCL_LOG_WARN, "dropped a frame from an unknown connection (not a rank of this job)");
            } else {
                /* what the peer put in its ring before it sent this frame comes first (an ABORT
                 * or BYE after its data, as on one FIFO link) */
                zq_shm_drain(z, peer);
                zq_apply_parts(z, peer, zmq_msg_data(&f), zmq_msg_size(&f), split ? zmq_msg_data(&g) : NULL,
                               split ? zmq_msg_size(&g) : 0, split);
            }
            zmq_msg_close(&g);
            zmq_msg_close(&f);
        }
    }
    for (int k = 1; k < z->nitems; k++) {
        if (!(z->items[k].revents & ZMQ_POLLIN))
            continue;
        if (z->items[k].socket) {
            zq_monitor(z, z->item_peer[k]);
        } else { /* the zero-copy releases' eventfd */
            uint64_t v;
            ssize_t r = read(z->zc_fd, &v, sizeof v);
            (void)r;
            z->event = 1;
        }
    }
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
                z->event = 1; /* news for a wait that was about to sleep */
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

/* zq_pump(z, 0) for the hot waits. When every peer's data comes through a ring, the sockets carry
 * only control (ABORT, BYE, doorbells, a dropped connection) and a zmq_poll costs more than a
 * whole small collective (a poll(2) over every socket, and libzmq's getpid on each): they are
 * looked at every ZQ_ZPOLL_NS then, and whenever a wait goes to sleep. */
static void zq_pump_quick(ncl_zmq *z)
{
    zq_shm_drain_all(z);
    if (z->nrx < z->nranks - 1 || zq_now() - z->zpoll_ns >= ZQ_ZPOLL_NS)
        zq_pump(z, 0);
}

/* ---- ops ----------------------------------------------------------------------------------- */

static ncl_result zq_caps(void *ctx, ncl_hal_caps *out)
{
    ncl_zmq *z = ((zq_comm *)ctx)->z;
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
    zq_comm *c = ctx;
    ncl_zmq *z = c->z;
    if (!l)
        return NCL_ERR_BACKEND;
    /* The communicator's own call count, not l->seq: several engine communicators may run one
     * after another on the world (the agent's bring-up rings), each counting from 1, and the ranks
     * agree on the order of their calls across all of them. With one communicator the two are equal. */
    c->seq = ++c->calls;
    c->coll = l->coll;
    z->last[0] = '\0';
    c->desc = (ncl_wire_desc){.count = l->count, .dtype = l->dtype, .op = l->op, .algo = l->algo,
                              .inplace = l->inplace, .root = l->root};
    if (zq_sticky(c) != NCL_SUCCESS) { /* broken: the first failure's message stays in err */
        snprintf(z->last, sizeof z->last, "%s", c->sticky != NCL_SUCCESS ? c->err : z->err);
        zq_abort_peers(c, c->seq, zq_sticky(c));
        return zq_sticky(c);
    }
    /* a peer's tag that arrived before this rank began the same call */
    for (int i = 0; i < c->n; i++) {
        int w = zq_world_rank(c, i);
        if (w != z->rank && zq_mismatch(c, w, c->seq, l->coll)) {
            zq_abort_peers(c, c->seq, c->sticky); /* no end() follows a refused begin */
            return c->sticky;
        }
    }
    ncl_bk_bind(&c->bufs, l, (uint64_t)(uintptr_t)c->scratch, z->scratch_bytes);
    return NCL_SUCCESS;
}

/* A call that failed may leave zero-copy frames in ZeroMQ (sent, not yet written): they point into
 * the caller's buffers, which the caller may free once the call returned. Waits (at most the
 * linger time) until ZeroMQ released them; a peer that is alive reads them within that. Frames to a
 * dead peer stay queued until the backend is destroyed (ZeroMQ never writes them: nothing
 * reconnects), which the warning says. A call that succeeded has none left (its tasks completed). */
static void zq_zc_settle(zq_comm *c)
{
    ncl_zmq *z = c->z;
    uint64_t t0 = zq_now();
    for (;;) {
        uint32_t out = 0, lost = 0;
        for (uint32_t q = 0; q < NCL_MAX_QUEUES; q++) {
            uint32_t n = atomic_load_explicit(&c->zc_out[q], memory_order_acquire);
            /* a queue's frames all go to its pending task's peer: one that dropped will not read them */
            const zq_peer *p = n && c->pend[q].active ? &z->peers[c->pend[q].t.peer] : NULL;
            if (p && (p->state == ZL_DEAD || p->drop_ns))
                lost += n;
            else
                out += n;
        }
        if (lost && !out)
            zq_logf(z, NCL_LOG_WARN, "#%llu: ZeroMQ holds %u zero-copy payload frames of this failed call for a "
                    "dead peer: keep its buffers until the backend is destroyed", (unsigned long long)c->seq, lost);
        if (!out)
            return;
        if (zq_now() - t0 > (uint64_t)ZQ_LINGER_MS * 1000000u) {
            zq_logf(z, NCL_LOG_WARN, "#%llu: ZeroMQ still holds %u zero-copy payload frames of this failed call "
                    "(an unreachable peer): keep its buffers until the backend is destroyed",
                    (unsigned long long)c->seq, out);
            return;
        }
        zq_pump(z, 10);
    }
}

static ncl_result zq_end(void *ctx, ncl_result result)
{
    zq_comm *c = ctx;
    ncl_zmq *z = c->z;
    int mismatched = 0;
    if (result != NCL_SUCCESS) {
        /* HCCL/NCCL semantics: a failed collective leaves the peers' state unknown (half-applied
         * writes, unconsumed notifies), so the communicator stays broken until destroyed. A peer's
         * ABORT held back for this call is likely why it failed: it goes first. */
        zq_apply_pending(c);
        if (c->sticky == NCL_SUCCESS) { /* the engine logged why already: keep it, do not log it twice */
            c->sticky = result;
            const char *why = c->engine_err[0] ? c->engine_err : ncl_strerror(result);
            if (!c->err[0])
                snprintf(c->err, sizeof c->err, "%s", why);
            if (!z->err[0])
                snprintf(z->err, sizeof z->err, "%s", why);
        }
        zq_abort_peers(c, c->seq, result);
    } else {
        /* a mismatch this rank can see now fails the call here too: no rank succeeds on one */
        for (int i = 0; i < c->n && c->sticky == NCL_SUCCESS; i++) {
            int w = zq_world_rank(c, i);
            if (w != z->rank && zq_mismatch(c, w, c->seq, c->coll)) {
                zq_abort_peers(c, c->seq, c->sticky);
                mismatched = 1;
            }
        }
        if (zq_sticky(c) == NCL_SUCCESS)
            c->done = c->seq;
        zq_apply_pending(c); /* a peer aborted after this call: the next begin fails */
    }
    zq_zc_settle(c);
    for (uint32_t q = 0; q < NCL_MAX_QUEUES; q++)
        c->pend[q].active = 0; /* a failed call's unsent rest: its buffers go away now */
    ncl_bk_unbind(&c->bufs);
    return mismatched ? NCL_ERR_REMOTE : NCL_SUCCESS;
}

/* A peer we must talk to: not dead, or the reason. */
static ncl_result zq_peer_usable(zq_comm *c, int peer, const char *what)
{
    ncl_zmq *z = c->z;
    zq_deaths(z, NULL);
    zq_peer *p = &z->peers[peer];
    if (p->state == ZL_DEAD)
        return zq_fail(z, NCL_ERR_REMOTE, "#%llu %s rank %d: it is dead (disconnected without closing)",
                       (unsigned long long)c->seq, what, peer);
    return NCL_SUCCESS;
}

/* A peer that said BYE finished every collective it will run: what we still send it (the last
 * notifies of a call it no longer waits for, which a task held back by a full ring can leave this
 * late) is dropped; only a wait on it fails (notify_try_wait). */
static int zq_peer_left(zq_comm *c, int peer, const char *what)
{
    ncl_zmq *z = c->z;
    if (z->peers[peer].state != ZL_LEFT)
        return 0;
    zq_logf(z, NCL_LOG_DEBUG, "#%llu %s rank %d dropped: it closed its communicator (BYE)", (unsigned long long)c->seq,
            what, peer);
    return 1;
}

/* Sends what it can of queue's remote task: everything over ZeroMQ (never blocks), as much as
 * the peer's ring takes over shared memory (the rest when dma_poll comes back). The task is
 * complete, and its source free to reuse, once all of it is in the ring (a copy of its own) or
 * ZeroMQ released its zero-copy frames (zq_send_parts); the NOTIFY that publishes it follows on
 * the same ordered path. */
static ncl_result zq_push(zq_comm *c, uint32_t queue)
{
    ncl_zmq *z = c->z;
    zq_pend *w = &c->pend[queue];
    const ncl_task *t = &w->t;
    char why[256];
    const int pair = ncl_task_two_source(t->kind);
    const int reduce = t->kind == NCL_TASK_WRITE_REDUCE || t->kind == NCL_TASK_REDUCE_WRITE_REDUCE;
    zq_peer *p = &z->peers[t->peer];
    /* Cut at the agreed payload limit, and in a ring at a fraction of it so the reader applies
     * one record while the writer fills the next (whole elements for reduces). */
    uint64_t chunk = p->tx_payload;
    if (p->tx_on && z->shm_chunk < chunk)
        chunk = z->shm_chunk;
    if (reduce || pair)
        chunk -= chunk % ncl_dtype_size((ncl_dtype)t->dtype);
    if (zq_peer_left(c, t->peer, reduce ? "WRITE_REDUCE to" : "WRITE to"))
        w->sent = t->bytes;
    else if (w->sent < t->bytes) {
        ncl_result rc = zq_announce(c, t->peer);
        if (rc != NCL_SUCCESS) {
            w->active = 0;
            return rc;
        }
    }
    while (w->sent < t->bytes) {
        uint64_t done_b = w->sent;
        uint64_t n = t->bytes - done_b < chunk ? t->bytes - done_b : chunk;
        if (p->tx_on && !zq_ring_fits(p, NCL_WIRE_HDR_LEN + (size_t)n, ZQ_NOTIFY_KEEP))
            return zq_peer_usable(c, t->peer, reduce ? "WRITE_REDUCE to" : "WRITE to"); /* dma_poll goes on */
        ncl_wire_msg m;
        memset(&m, 0, sizeof m);
        m.command = reduce ? NCL_WIRE_WRITE_REDUCE : NCL_WIRE_WRITE;
        m.comm = c->num;
        m.buf = (uint8_t)t->dst.buf;
        m.off = t->dst.off + done_b;
        m.bytes = n;
        m.dtype = reduce ? t->dtype : 0;
        m.op = reduce ? t->op : 0;
        m.payload = w->src + done_b;
        if (pair) { /* src op src2 into the staging buffer (at most tx_payload <= max_payload) */
            ncl_task piece = *t;
            piece.kind = NCL_TASK_REDUCE_WRITE;
            piece.bytes = n;
            if (!ncl_bk_run_pair(&piece, z->stage, w->src + done_b, w->src2 + done_b, why, sizeof why)) {
                w->active = 0;
                return zq_fail(z, NCL_ERR_BACKEND, "#%llu queue %u step %u %s: %s", (unsigned long long)c->seq,
                               queue, t->step, ncl_task_kind_name(t->kind), why);
            }
            m.payload = z->stage;
        }
        m.payload_len = (uint32_t)n;
        ncl_result rc = p->tx_on      ? zq_ring_put(z, t->peer, &m, ZQ_NOTIFY_KEEP)
                        : p->split_ok ? zq_send_parts(c, t->peer, &m, queue, !pair)
                                      : zq_send(z, t->peer, &m);
        if (rc == NCL_IN_PROGRESS)
            return NCL_SUCCESS;
        if (rc != NCL_SUCCESS) {
            w->active = 0;
            return rc;
        }
        w->sent += n;
    }
    if (atomic_load_explicit(&c->zc_out[queue], memory_order_acquire))
        return NCL_SUCCESS; /* all sent, not all released: dma_poll looks again */
    w->active = 0;
    z->event = 1;
    return NCL_SUCCESS;
}

static ncl_result zq_dma_submit(void *ctx, uint32_t queue, const ncl_task *t)
{
    zq_comm *c = ctx;
    ncl_zmq *z = c->z;
    char why[256];
    if (!t || queue >= NCL_MAX_QUEUES ||
        (t->kind > NCL_TASK_LOCAL_DIV && !ncl_task_is_wide(t->kind) && !ncl_task_two_source(t->kind)))
        return zq_fail(z, NCL_ERR_BACKEND, "dma_submit: bad task or queue %u", queue);
    if (zq_sticky(c) != NCL_SUCCESS)
        return zq_sticky(c);
    if (t->bytes == 0)
        goto done;
    if (!ncl_bk_task_ok(t, why, sizeof why))
        return zq_fail(z, NCL_ERR_BACKEND, "#%llu %s: %s", (unsigned long long)c->seq, ncl_task_kind_name(t->kind),
                       why);
    /* what reaches the destination: a reduce onto it, or the data (a REDUCE_WRITE's src op src2) */
    const int pair = ncl_task_two_source(t->kind);
    int reduce = t->kind == NCL_TASK_WRITE_REDUCE || t->kind == NCL_TASK_LOCAL_REDUCE ||
                 t->kind == NCL_TASK_REDUCE_WRITE_REDUCE;
    const unsigned char *src = NULL, *src2 = NULL;
    if (t->kind != NCL_TASK_LOCAL_DIV) {
        src = zq_region(c, t->src, ncl_task_src_bytes(t), 0, why, sizeof why);
        if (!src)
            return zq_fail(z, NCL_ERR_BACKEND, "#%llu queue %u step %u %s source: %s", (unsigned long long)c->seq,
                           queue, t->step, ncl_task_kind_name(t->kind), why);
    }
    if (pair && !(src2 = zq_region(c, t->src2, t->bytes, 0, why, sizeof why)))
        return zq_fail(z, NCL_ERR_BACKEND, "#%llu queue %u step %u %s second source: %s", (unsigned long long)c->seq,
                       queue, t->step, ncl_task_kind_name(t->kind), why);
    int remote = ncl_task_is_remote(t->kind) && t->peer != c->rank;
    if (remote) {
        int peer = zq_world_rank(c, t->peer);
        if (peer < 0)
            return zq_fail(z, NCL_ERR_BACKEND, "#%llu %s to rank %d: out of range", (unsigned long long)c->seq,
                           ncl_task_kind_name(t->kind), t->peer);
        ncl_result rc = zq_peer_usable(c, peer, reduce ? "WRITE_REDUCE to" : "WRITE to");
        if (rc != NCL_SUCCESS)
            return rc;
        zq_pend *w = &c->pend[queue];
        *w = (zq_pend){.active = 1, .t = *t, .src = src, .src2 = src2, .sent = 0};
        w->t.peer = peer; /* from here on the task names the world rank its frames go to */
        return zq_push(c, queue);
    }
    unsigned char *dst = zq_region(c, t->dst, ncl_task_dst_bytes(t), 1, why, sizeof why);
    if (!dst)
        return zq_fail(z, NCL_ERR_BACKEND, "#%llu queue %u step %u %s destination: %s", (unsigned long long)c->seq,
                       queue, t->step, ncl_task_kind_name(t->kind), why);
    if (!(pair ? ncl_bk_run_pair(t, dst, src, src2, why, sizeof why) : ncl_bk_run(t, dst, src, why, sizeof why)))
        return zq_fail(z, NCL_ERR_BACKEND, "#%llu queue %u step %u %s: %s", (unsigned long long)c->seq, queue, t->step,
                       ncl_task_kind_name(t->kind), why);
done:
    z->event = 1;
    return NCL_SUCCESS;
}

/* Tasks complete inside dma_submit, but for a remote one whose peer's ring was full (zq_push): a
 * remote write is complete once queued, because the NOTIFY that publishes it follows it on the
 * same FIFO path (the ring, or the connection). */
static ncl_result zq_dma_poll(void *ctx, uint32_t queue, int *done)
{
    zq_comm *c = ctx;
    ncl_zmq *z = c->z;
    if (queue >= NCL_MAX_QUEUES || !done)
        return NCL_ERR_BACKEND;
    *done = 0;
    if (zq_sticky(c) != NCL_SUCCESS)
        return zq_sticky(c);
    if (c->pend[queue].active) {
        zq_shm_drain_all(z); /* our reader may be waiting for room in its own ring to us */
        ncl_result rc = zq_push(c, queue);
        if (rc != NCL_SUCCESS)
            return rc;
    }
    *done = !c->pend[queue].active;
    return zq_sticky(c);
}

/* A NOTIFY into the peer's ring: data records leave ZQ_NOTIFY_KEEP bytes free for these, so this
 * waits only when the peer stopped reading for hundreds of them; it drains our own rings meanwhile
 * (two ranks filling each other's rings both progress) and gives up on a dead, departed or broken
 * peer, or after ZQ_STALL_NS without room. */
static ncl_result zq_ring_put_wait(zq_comm *c, int peer, ncl_wire_msg *m)
{
    ncl_zmq *z = c->z;
    uint64_t t0 = 0;
    for (;;) {
        ncl_result rc = zq_ring_put(z, peer, m, 0);
        if (rc != NCL_IN_PROGRESS)
            return rc;
        zq_pump(z, 0);
        if (zq_sticky(c) != NCL_SUCCESS)
            return zq_sticky(c);
        if ((rc = zq_peer_usable(c, peer, "NOTIFY to")) != NCL_SUCCESS)
            return rc;
        if (zq_peer_left(c, peer, "NOTIFY to"))
            return NCL_SUCCESS;
        if (z->peers[peer].state == ZL_BROKEN)
            return zq_fail(z, NCL_ERR_LINK, "#%llu NOTIFY to rank %d: the link is broken", (unsigned long long)c->seq,
                           peer);
        uint64_t now = zq_now();
        if (!t0)
            t0 = now;
        else if (now - t0 > ZQ_STALL_NS)
            return zq_fail(z, NCL_ERR_TIMEOUT, "#%llu NOTIFY to rank %d: its shared-memory ring stayed full for "
                           "%.0f s (the rank does not progress)", (unsigned long long)c->seq, peer,
                           (double)ZQ_STALL_NS / 1e9);
        sched_yield();
    }
}

static ncl_result zq_notify_record(void *ctx, uint32_t queue, int rank, uint32_t id)
{
    zq_comm *c = ctx;
    ncl_zmq *z = c->z;
    (void)queue;
    int peer = zq_world_rank(c, rank);
    if (peer < 0 || id >= NCL_NOTIFY_IDS)
        return zq_fail(z, NCL_ERR_BACKEND, "#%llu notify_record to rank %d id %u: out of range",
                       (unsigned long long)c->seq, rank, id);
    if (zq_sticky(c) != NCL_SUCCESS)
        return zq_sticky(c);
    if (peer == z->rank) {
        c->ctr[(size_t)peer * NCL_NOTIFY_IDS + id]++;
        z->event = 1;
        return NCL_SUCCESS;
    }
    ncl_result rc = zq_peer_usable(c, peer, "NOTIFY to");
    if (rc != NCL_SUCCESS)
        return rc;
    if (zq_peer_left(c, peer, "NOTIFY to"))
        return NCL_SUCCESS;
    if ((rc = zq_announce(c, peer)) != NCL_SUCCESS)
        return rc;
    ncl_wire_msg m;
    memset(&m, 0, sizeof m);
    m.command = NCL_WIRE_NOTIFY;
    m.comm = c->num;
    m.notify = (uint8_t)id;
    if (z->peers[peer].coll_ok && c->bufs.bound) { /* the receiver checks it against its own call */
        m.call = c->seq;
        m.coll = c->coll;
        m.has_desc = (uint8_t)z->peers[peer].desc_ok;
        if (m.has_desc)
            m.desc = c->desc;
    }
    return z->peers[peer].tx_on ? zq_ring_put_wait(c, peer, &m) : zq_send(z, peer, &m);
}

static ncl_result zq_notify_try_wait(void *ctx, int rank, uint32_t id, uint32_t count, int *done)
{
    zq_comm *cm = ctx;
    ncl_zmq *z = cm->z;
    int peer = zq_world_rank(cm, rank);
    if (!done || peer < 0 || id >= NCL_NOTIFY_IDS)
        return zq_fail(z, NCL_ERR_BACKEND, "#%llu notify_try_wait rank %d id %u: out of range",
                       (unsigned long long)cm->seq, rank, id);
    *done = 0;
    uint32_t *c = &cm->ctr[(size_t)peer * NCL_NOTIFY_IDS + id];
    if (*c < count && zq_sticky(cm) == NCL_SUCCESS)
        zq_pump_quick(z);
    if (zq_sticky(cm) != NCL_SUCCESS)
        return zq_sticky(cm);
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
                       "dead (disconnected without closing)", (unsigned long long)cm->seq, id, count, *c, peer, dead);
    if (z->peers[peer].state == ZL_LEFT) {
        /* an ABORT held for the end of this call (zq_apply_pending) names why the peer left: a
         * relay of it can overtake the peer's own ABORT, which is then ignored, and its BYE */
        zq_comm *held = cm->pending_origin >= 0 ? cm : z->world.pending_origin >= 0 ? &z->world : NULL;
        if (held) {
            zq_apply_pending(held);
            return zq_sticky(cm);
        }
        return zq_fail(z, NCL_ERR_REMOTE, "#%llu waits for notify %u (x%u, have %u) from rank %d, which closed its "
                       "communicator (BYE)", (unsigned long long)cm->seq, id, count, *c, peer);
    }
    if (cm->left[peer])
        return zq_fail(z, NCL_ERR_REMOTE, "#%llu waits for notify %u (x%u, have %u) from rank %d, which has left "
                       "this communicator (destroyed its part)", (unsigned long long)cm->seq, id, count, *c, peer);
    return NCL_SUCCESS;
}

/* Sets (1) or clears (0) the flags that ask the writers of our rings, and the readers of rings our
 * pending tasks wait on, for a doorbell. */
static void zq_shm_sleep(ncl_zmq *z, uint32_t on)
{
    for (int i = 0; i < z->nranks && z->nrx; i++)
        if (z->peers[i].rx)
            atomic_store_explicit(&z->peers[i].rx->rd_sleep, on, memory_order_seq_cst);
    for (zq_comm *c = &z->world; c; c = c->next)
        for (uint32_t q = 0; q < NCL_MAX_QUEUES; q++)
            if (c->pend[q].active && z->peers[c->pend[q].t.peer].tx_on)
                atomic_store_explicit(&z->peers[c->pend[q].t.peer].tx->wr_sleep, on, memory_order_seq_cst);
}

/* A short pause between looks at the rings (the CPU's spin-wait hint where there is one). */
static void zq_relax(void)
{
    for (int i = 0; i < 16; i++) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        __asm__ __volatile__("yield");
#endif
    }
}

static int zq_shm_pending(const ncl_zmq *z)
{
    for (const zq_comm *c = &z->world; c; c = c->next)
        for (uint32_t q = 0; q < NCL_MAX_QUEUES; q++)
            if (c->pend[q].active)
                return 1;
    return 0;
}

static ncl_result zq_wait_event(void *ctx, uint64_t timeout_ns)
{
    ncl_zmq *z = ((zq_comm *)ctx)->z;
    if (z->event || timeout_ns == 0) {
        z->event = 0;
        zq_pump_quick(z);
        return NCL_SUCCESS;
    }
    int shm = z->nrx || zq_shm_pending(z);
    if (shm) {
        /* A co-located peer's record or room is usually microseconds away: watch the rings (and
         * now and then the sockets) for spin_ns before paying a sleep and a doorbell. */
        uint64_t t0 = zq_now(), lim = z->spin_ns < timeout_ns ? z->spin_ns : timeout_ns;
        for (unsigned k = 1;; k++) {
            if (zq_shm_ready(z)) {
                zq_pump_quick(z);
                z->event = 0;
                return NCL_SUCCESS;
            }
            if (k % 16 == 0) { /* the sockets, at most every ZQ_ZPOLL_NS */
                zq_pump_quick(z);
                if (z->event) {
                    z->event = 0;
                    return NCL_SUCCESS;
                }
            }
            uint64_t spent = zq_now() - t0;
            if (spent >= lim)
                break;
            if (spent < z->relax_ns) /* the peer is likely running: a syscall would cost more than the wait */
                zq_relax();
            else
                sched_yield(); /* ranks may share cores: let the peer run */
        }
        zq_shm_sleep(z, 1);
        if (zq_shm_ready(z)) { /* written before our flags were seen: no doorbell comes */
            zq_shm_sleep(z, 0);
            zq_pump_quick(z);
            z->event = 0;
            return NCL_SUCCESS;
        }
    }
    int pending = 0;
    zq_deaths(z, &pending);
    if (z->event) { /* a death promoted just now: the engine must see it, not sleep past it */
        if (shm)
            zq_shm_sleep(z, 0);
        z->event = 0;
        return NCL_SUCCESS;
    }
    uint64_t ms = (timeout_ns + 999999u) / 1000000u;
    if (pending && ms > 50)
        ms = 50; /* wake up to promote a drop to a death */
    if (ms > 3600000u)
        ms = 3600000u;
    zq_pump(z, (long)ms);
    if (shm)
        zq_shm_sleep(z, 0);
    z->event = 0;
    return NCL_SUCCESS;
}

static uint64_t zq_now_ns(void *ctx)
{
    (void)ctx;
    return zq_now();
}

static ncl_result zq_notify_peek(void *ctx, int rank, uint32_t id, uint32_t *value)
{
    zq_comm *c = ctx;
    int peer = zq_world_rank(c, rank);
    if (!value || peer < 0 || id >= NCL_NOTIFY_IDS)
        return NCL_ERR_BACKEND;
    *value = c->ctr[(size_t)peer * NCL_NOTIFY_IDS + id];
    return NCL_SUCCESS;
}

/* What the backend saw fail last: the engine adds it to the call's error. */
static const char *zq_last_error(void *ctx)
{
    return ((zq_comm *)ctx)->z->last;
}

/* The HAL of a sub-communicator: `members` are ranks of c (this rank is members[rank]); every
 * member's peer must have agreed NCL_WIRE_CAP_COMM. Its state may exist already, made by a
 * member's COMM that came first. */
static ncl_result zq_split(void *ctx, uint32_t id, const int32_t *members, int n, int rank, ncl_hal *child)
{
    zq_comm *c = ctx;
    ncl_zmq *z = c->z;
    if (!members || !child || id == 0 || n < 1 || rank < 0 || rank >= n)
        return zq_fail(z, NCL_ERR_BACKEND, "split: bad arguments (id %08x, %d members, this rank at %d)",
                       (unsigned)id, n, rank);
    int *world = malloc((size_t)n * sizeof *world);
    if (!world)
        return zq_fail(z, NCL_ERR_OUT_OF_MEMORY, "split: no memory for %d members", n);
    for (int i = 0; i < n; i++) {
        world[i] = zq_world_rank(c, members[i]);
        const zq_peer *p = world[i] >= 0 ? &z->peers[world[i]] : NULL;
        if (!p || (i == rank) != (world[i] == z->rank)) {
            free(world);
            return zq_fail(z, NCL_ERR_BACKEND, "split: member %d is rank %d, not one of %d", i, (int)members[i], c->n);
        }
        if (i != rank && !p->comm_ok) {
            free(world);
            return zq_fail(z, NCL_ERR_UNSUPPORTED, "split: rank %d's backend does not carry sub-communicators "
                           "(its HELLO lacks COMM: an older ringsim?)", world[i]);
        }
    }
    zq_comm *s = zq_comm_find(z, id);
    if (s && s->n) {
        free(world);
        return zq_fail(z, NCL_ERR_REMOTE, "split: communicator %08x exists on this rank already", (unsigned)id);
    }
    if (z->nums == UINT16_MAX) {
        free(world);
        return zq_fail(z, NCL_ERR_UNSUPPORTED, "split: this rank made %u communicators, the wire numbers no more",
                       (unsigned)UINT16_MAX);
    }
    if (!s && !(s = zq_comm_new(z, id))) {
        free(world);
        return zq_fail(z, NCL_ERR_OUT_OF_MEMORY, "split: communicator %08x: out of memory (scratch %llu bytes)",
                       (unsigned)id, (unsigned long long)z->scratch_bytes);
    }
    s->world = world;
    s->n = n;
    s->rank = rank;
    s->num = ++z->nums;
    *child = s->hal;
    zq_logf(z, NCL_LOG_DEBUG, "split: communicator %08x (number %u), rank %d of %d", (unsigned)id, (unsigned)s->num,
            rank, n);
    return NCL_SUCCESS;
}

/* A sub-communicator destroyed here: its scratch goes, what still arrives for it is dropped. */
static void zq_release(void *ctx)
{
    zq_comm *c = ctx;
    if (c == &c->z->world)
        return;
    c->released = 1;
    ncl_zmq *z = c->z;
    for (int k = 0; k < c->n; k++) { /* a member still waiting on us fails now, not at its timeout */
        int i = zq_world_rank(c, k);
        if (i == z->rank || z->peers[i].state != ZL_UP || !z->peers[i].comm_ok || zq_announce(c, i) != NCL_SUCCESS)
            continue;
        ncl_wire_msg m;
        memset(&m, 0, sizeof m);
        m.command = NCL_WIRE_BYE;
        m.comm = c->num;
        zq_send(z, i, &m);
    }
    free(c->scratch);
    c->scratch = NULL;
    ncl_bk_keep_scratch(&c->bufs, 0, 0);
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
    .last_error = zq_last_error,
    .split = zq_split,
    .release = zq_release,
};

/* ---- life cycle -------------------------------------------------------------------------- */

/* Environment knobs of the shared-memory path (sim/zmq/ZMQ.md, "Shared memory"): NCL_ZMQ_SHM=off
 * keeps every peer on ZeroMQ; NCL_ZMQ_SHM_BYTES sets the ring per (writer, reader) pair (default
 * 8 MiB, at least 64 KiB; records are at most an eighth of it); NCL_ZMQ_SPIN_US how long a wait
 * watches the rings before it sleeps (default 200 us; 0: sleep at once). */
static void zq_shm_knobs(ncl_zmq *z, const ncl_zmq_config *cfg)
{
    const char *v = getenv("NCL_ZMQ_SHM");
    z->shm = !(v && (!strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "no")));
    uint64_t bytes = 8ull << 20;
    if ((v = getenv("NCL_ZMQ_SHM_BYTES")) && *v) {
        char *end = NULL;
        unsigned long long b = strtoull(v, &end, 0);
        if (end && (*end == 'k' || *end == 'K'))
            b <<= 10;
        else if (end && (*end == 'm' || *end == 'M'))
            b <<= 20;
        if (b >= (64u << 10) && b <= (1ull << 34))
            bytes = b;
    }
    z->shm_bytes = (bytes + 4095u) & ~(uint64_t)4095u;
    z->shm_chunk = z->shm_bytes / 8 - 2 * ZQ_REC_HDR;
    if (z->shm_chunk > cfg->max_payload)
        z->shm_chunk = cfg->max_payload;
    z->zc_min = ZQ_ZC_MIN;
    if ((v = getenv("NCL_ZMQ_ZEROCOPY")) && (!strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "no")))
        z->zc_min = UINT32_MAX;
    z->spin_ns = 200000;
    if ((v = getenv("NCL_ZMQ_SPIN_US")) && *v)
        z->spin_ns = strtoull(v, NULL, 10) * 1000u;
}

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
            free(p->rx_comm);
            zq_shm_drop_tx(p);
            if (p->rx)
                munmap(p->rx, ZQ_RING_HDR + (size_t)p->rx_bytes);
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
    if (z->zc_fd >= 0) /* after the terms: every zero-copy frame was released by then */
        close(z->zc_fd);
    free(z->peers);
    free(z->items);
    free(z->item_peer);
    for (zq_comm *c = z->world.next, *next; c; c = next) {
        next = c->next;
        zq_comm_free_parts(c);
        free(c);
    }
    zq_comm_free_parts(&z->world);
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
    z->nranks = cfg->nranks;
    z->rank = cfg->rank;
    z->scratch_bytes = cfg->scratch_bytes;
    z->corrupt_nth = cfg->fault_corrupt_nth;
    z->die_nth = cfg->fault_die_nth;
    z->log_level = zq_log_level(cfg);
    z->log = cfg->log;
    z->log_ud = cfg->log_ud;
    zq_shm_knobs(z, cfg);
    z->peers = calloc((size_t)z->nranks, sizeof *z->peers);
    z->items = calloc((size_t)z->nranks + 1, sizeof *z->items);
    z->item_peer = calloc((size_t)z->nranks + 1, sizeof *z->item_peer);
    z->zc_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    int world_ok = zq_comm_init(z, &z->world, 0);
    z->bounce = aligned_alloc(64, ((size_t)cfg->max_payload + 63) / 64 * 64);
    z->stage = aligned_alloc(64, ((size_t)cfg->max_payload + 63) / 64 * 64);
    z->ctx_tx = zmq_ctx_new();
    z->ctx_rx = zmq_ctx_new();
    if (!z->peers || !z->items || !z->item_peer || !world_ok || !z->bounce ||
        !z->stage ||
        !z->ctx_tx || !z->ctx_rx) {
        snprintf(err, errlen, "rank %d: out of memory (scratch %llu bytes)", z->rank,
                 (unsigned long long)z->scratch_bytes);
        zq_close_all(z, 0);
        return NCL_ERR_OUT_OF_MEMORY;
    }
    for (int i = 0; i < z->nranks; i++) {
        const char *ep = cfg->endpoints[i];
        if (!ep || !*ep) {
            snprintf(err, errlen, "rank %d: no endpoint for rank %d", z->rank, i);
            zq_close_all(z, 0);
            return NCL_ERR_INVALID_ARGUMENT;
        }
        z->peers[i].endpoint = strdup(ep);
        z->peers[i].tx_fd = -1;
        z->peers[i].st.hello_done = i == z->rank;
    }
    z->mine.min_version = z->mine.max_version = NCL_WIRE_VERSION;
    z->mine.max_payload = cfg->max_payload;
    z->mine.nranks = (uint32_t)z->nranks;
    z->mine.caps = NCL_WIRE_CAP_WRITE_REDUCE | NCL_WIRE_CAP_COLL | NCL_WIRE_CAP_DESC | NCL_WIRE_CAP_SPLIT |
                   NCL_WIRE_CAP_COMM | (z->shm ? NCL_WIRE_CAP_SHM : 0u);
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

    if (z->zc_fd >= 0) { /* wakes zmq_poll when ZeroMQ releases a zero-copy payload */
        z->items[z->nitems].socket = NULL;
        z->items[z->nitems].fd = z->zc_fd;
        z->items[z->nitems].events = ZMQ_POLLIN;
        z->item_peer[z->nitems] = -1;
        z->nitems++;
    }
    /* Every link says HELLO both ways before anyone runs a collective. */
    uint64_t t0 = zq_now();
    for (;;) {
        int missing = 0;
        for (int i = 0; i < z->nranks; i++)
            missing += i != z->rank && (!(z->peers[i].hello_rx && z->peers[i].ack_rx) || z->peers[i].offer == 1);
        if (z->world.sticky != NCL_SUCCESS) {
            snprintf(err, errlen, "rank %d: handshake failed: %s", z->rank, z->err);
            ncl_result rc = z->world.sticky;
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
                if (i != z->rank && (!(z->peers[i].hello_rx && z->peers[i].ack_rx) || z->peers[i].offer == 1) &&
                    shown++ < 8)
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
    /* Ranks on this host (those whose rings we read, and us) outnumbering its cores share them: a
     * wait then yields at once, the peer it waits for may need this very core. */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    z->relax_ns = cores > 0 && z->nrx + 1 > cores ? 0 : ZQ_RELAX_NS;
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
    zq_apply_pending(&z->world);
    if (z->world.sticky != NCL_SUCCESS) /* not said yet (broken between collectives): ABORT before BYE */
        zq_abort_peers(&z->world, 0, z->world.sticky);
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
    return z ? &z->world.hal : NULL;
}

const char *ncl_zmq_last_error(const ncl_zmq *z)
{
    return z ? z->err : "";
}

ncl_result ncl_zmq_status(const ncl_zmq *z)
{
    return z ? z->world.sticky : NCL_ERR_INVALID_ARGUMENT;
}

int ncl_zmq_abort_origin(const ncl_zmq *z)
{
    return z ? z->world.abort_origin : -1;
}

void ncl_zmq_abort(ncl_zmq *z, const char *reason)
{
    if (!z)
        return;
    const char *why = reason && *reason ? reason : "no reason given";
    zq_stick(&z->world, NCL_ERR_INVALID_USAGE, "aborted on this rank: %s", why);
    zq_abort_peers(&z->world, z->world.bufs.bound ? z->world.seq : 0, NCL_ERR_INVALID_USAGE);
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
    out->shm_tx = z->peers[peer].tx_on;
    out->shm_rx = z->peers[peer].rx != NULL;
    return 0;
}

uint32_t ncl_zmq_counter(const ncl_zmq *z, int sender, uint32_t id)
{
    if (!z || sender < 0 || sender >= z->nranks || id >= NCL_NOTIFY_IDS)
        return 0;
    return z->world.ctr[(size_t)sender * NCL_NOTIFY_IDS + id];
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
