/* test_wire.c — the wire codec: round trips, every rejection named, bit flips, truncation, and the corpus. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <ncl/ncl_hal.h>
#include <ncl/ncl_sched.h>
#include <ncl/ncl_wire.h>

#ifndef RINGSIM_WIRE_CORPUS
#define RINGSIM_WIRE_CORPUS "tests/firmware/core/wire_corpus"
#endif

#define BUF_MAX 4096u

static const uint8_t all_cmds[] = {
    NCL_WIRE_HELLO, NCL_WIRE_HELLO_ACK, NCL_WIRE_ERROR,    NCL_WIRE_WRITE, NCL_WIRE_WRITE_REDUCE, NCL_WIRE_NOTIFY,
    NCL_WIRE_RUN,   NCL_WIRE_COUNTERS,  NCL_WIRE_SELFTEST, NCL_WIRE_STATE, NCL_WIRE_SHUTDOWN, NCL_WIRE_ABORT,
};
#define NCMDS (sizeof all_cmds / sizeof all_cmds[0])

/* ---- helpers --------------------------------------------------------------------------------- */

/* Deterministic xorshift64*: the same messages on every run. */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545f4914f6cdd1dull;
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Recomputes the CRC of a message whose header says how long it is: used to build messages that
 * are well-formed bytes but break a rule checked after the checksum. */
static void reseal(uint8_t *b, size_t len)
{
    uint32_t c = ncl_wire_crc32c(0, b, 60);
    c = ncl_wire_crc32c(c, b + 64, len - 64);
    put_le(b + 60, c, 4);
}

static ncl_wire_hello make_hello(uint8_t lo, uint8_t hi, uint32_t max_payload, uint32_t nranks, uint32_t caps)
{
    ncl_wire_hello h;
    memset(&h, 0, sizeof h);
    h.min_version = lo;
    h.max_version = hi;
    h.max_payload = max_payload;
    h.nranks = nranks;
    h.caps = caps;
    for (unsigned d = 0; d < NCL_DTYPE_COUNT; d++)
        h.reduce_ops[d] = (uint8_t)NCL_INLINE_ALL_OPS;
    return h;
}

static ncl_wire_msg base_msg(uint8_t cmd, uint32_t src, uint32_t dst)
{
    ncl_wire_msg m;
    memset(&m, 0, sizeof m);
    m.command = cmd;
    m.src = src;
    m.dst = dst;
    m.seq = 7;
    m.time_ns = 1000;
    if (cmd == NCL_WIRE_HELLO_ACK)
        m.flags = NCL_WIRE_FLAG_REPLY;
    if (cmd == NCL_WIRE_HELLO)
        m.hello = make_hello(1, 1, 1024, 8, NCL_WIRE_CAP_KNOWN);
    if (cmd == NCL_WIRE_HELLO_ACK)
        m.hello = make_hello(1, 1, 1024, 8, NCL_WIRE_CAP_KNOWN);
    return m;
}

static size_t enc(const ncl_wire_msg *m, uint8_t *b)
{
    size_t n = 0;
    ncl_wire_result r = ncl_wire_encode(m, b, BUF_MAX, &n);
    if (r != NCL_WIRE_OK)
        fail_msg("encode %s: %s", ncl_wire_cmd_name(m->command), ncl_wire_result_name(r));
    return n;
}

/* A valid message of `cmd` with random fields (ranks < nranks) and payload bytes in `store`. */
static ncl_wire_msg random_msg(uint64_t *rng, uint8_t cmd, uint32_t nranks, uint8_t *store, uint32_t max_body)
{
    ncl_wire_msg m;
    memset(&m, 0, sizeof m);
    m.command = cmd;
    m.seq = rng_next(rng);
    m.time_ns = rng_next(rng);
    m.src = (uint32_t)(rng_next(rng) % nranks);
    m.dst = (uint32_t)(rng_next(rng) % nranks);
    uint32_t body = (uint32_t)(rng_next(rng) % (max_body + 1));
    if (rng_next(rng) % 8 == 0)
        body = 0;
    for (uint32_t i = 0; i < body; i++)
        store[i] = (uint8_t)rng_next(rng);
    switch (cmd) {
    case NCL_WIRE_HELLO:
    case NCL_WIRE_HELLO_ACK: {
        uint8_t lo = (uint8_t)(1 + rng_next(rng) % 5);
        uint8_t hi = cmd == NCL_WIRE_HELLO_ACK ? lo : (uint8_t)(lo + rng_next(rng) % 5);
        m.hello = make_hello(lo, hi, (uint32_t)(32 + rng_next(rng) % 100000), (uint32_t)(rng_next(rng) % 1000),
                             (uint32_t)rng_next(rng));
        for (unsigned d = 0; d < NCL_WIRE_OPS_ROWS; d++)
            m.hello.reduce_ops[d] = (uint8_t)rng_next(rng);
        m.flags = cmd == NCL_WIRE_HELLO_ACK ? NCL_WIRE_FLAG_REPLY : 0;
        if (rng_next(rng) % 2)
            m.src = NCL_WIRE_RANK_NONE;
        break;
    }
    case NCL_WIRE_ERROR:
        m.error_code = (uint32_t)rng_next(rng);
        m.payload = store;
        m.payload_len = body > NCL_WIRE_ERROR_TEXT_MAX ? NCL_WIRE_ERROR_TEXT_MAX : body;
        m.flags = (uint16_t)(rng_next(rng) % 2 ? NCL_WIRE_FLAG_REPLY : 0);
        break;
    case NCL_WIRE_WRITE:
    case NCL_WIRE_WRITE_REDUCE:
        m.buf = (uint8_t)(rng_next(rng) % 2 ? NCL_BUF_RECV : NCL_BUF_SCRATCH);
        m.off = rng_next(rng) >> 1; /* < 2^63: off + bytes never overflows */
        if (cmd == NCL_WIRE_WRITE_REDUCE) {
            m.dtype = (uint8_t)(rng_next(rng) % NCL_DTYPE_COUNT);
            m.op = (uint8_t)(rng_next(rng) % NCL_AVG);
            body -= body % (uint32_t)ncl_dtype_size((ncl_dtype)m.dtype);
        }
        m.payload = store;
        m.payload_len = body;
        m.bytes = body;
        break;
    case NCL_WIRE_NOTIFY:
        m.notify = (uint8_t)(rng_next(rng) % NCL_NOTIFY_IDS);
        if (rng_next(rng) % 2) { /* tagged (NCL_WIRE_CAP_COLL) */
            m.call = rng_next(rng) | 1u;
            m.coll = (uint8_t)(rng_next(rng) % NCL_COLL_COUNT);
            if (rng_next(rng) % 2) { /* with the call's descriptor (NCL_WIRE_CAP_DESC) */
                m.has_desc = 1;
                m.desc.count = rng_next(rng);
                m.desc.dtype = (uint8_t)(rng_next(rng) % NCL_DTYPE_COUNT);
                m.desc.op = (uint8_t)(rng_next(rng) % NCL_OP_COUNT);
                m.desc.algo = (uint8_t)(rng_next(rng) % NCL_ALGO_COUNT);
                m.desc.inplace = (uint8_t)(rng_next(rng) % 2);
                m.desc.root = (int32_t)(rng_next(rng) % nranks);
            }
        }
        break;
    case NCL_WIRE_ABORT:
        m.error_code = (uint32_t)rng_next(rng);
        m.payload = store;
        m.payload_len = body > NCL_WIRE_ERROR_TEXT_MAX ? NCL_WIRE_ERROR_TEXT_MAX : body;
        m.done_call = rng_next(rng);
        m.origin = (uint32_t)(rng_next(rng) % nranks);
        if (rng_next(rng) % 4) {
            m.call = rng_next(rng) | 1u;
            m.coll = (uint8_t)(rng_next(rng) % NCL_COLL_COUNT);
        }
        break;
    default: /* controller commands: opaque payload, from the controller or a rank */
        m.payload = store;
        m.payload_len = body;
        m.flags = (uint16_t)(rng_next(rng) % 2 ? NCL_WIRE_FLAG_REPLY : 0);
        if (rng_next(rng) % 2)
            m.src = NCL_WIRE_RANK_NONE;
        break;
    }
    return m;
}

static void assert_msg_equal(const ncl_wire_msg *a, const ncl_wire_msg *b)
{
    assert_int_equal(b->version, NCL_WIRE_VERSION);
    assert_int_equal(a->command, b->command);
    assert_int_equal(a->flags, b->flags);
    assert_true(a->seq == b->seq);
    assert_int_equal(a->src, b->src);
    assert_int_equal(a->dst, b->dst);
    assert_true(a->time_ns == b->time_ns);
    assert_int_equal(a->buf, b->buf);
    assert_true(a->off == b->off);
    assert_true(a->bytes == b->bytes);
    assert_int_equal(a->dtype, b->dtype);
    assert_int_equal(a->op, b->op);
    assert_int_equal(a->notify, b->notify);
    assert_true(a->call == b->call);
    assert_int_equal(a->coll, b->coll);
    assert_int_equal(a->has_desc, b->has_desc);
    assert_true(a->desc.count == b->desc.count);
    assert_memory_equal(&a->desc.dtype, &b->desc.dtype, 4);
    assert_int_equal(a->desc.root, b->desc.root);
    assert_true(a->done_call == b->done_call);
    assert_int_equal(a->origin, b->origin);
    assert_int_equal(a->comm, b->comm);
    assert_int_equal(a->comm_id, b->comm_id);
    assert_int_equal(a->error_code, b->error_code);
    assert_memory_equal(&a->hello.min_version, &b->hello.min_version, 2);
    assert_int_equal(a->hello.max_payload, b->hello.max_payload);
    assert_int_equal(a->hello.nranks, b->hello.nranks);
    assert_int_equal(a->hello.caps, b->hello.caps);
    assert_memory_equal(a->hello.reduce_ops, b->hello.reduce_ops, NCL_WIRE_OPS_ROWS);
    assert_int_equal(a->payload_len, b->payload_len);
    if (a->payload_len)
        assert_memory_equal(a->payload, b->payload, a->payload_len);
}

/* ---- basics ---------------------------------------------------------------------------------- */

static void test_crc32c(void **state)
{
    (void)state;
    const char *v = "123456789";
    assert_int_equal(ncl_wire_crc32c(0, v, 9), 0xE3069283u);
    assert_int_equal(ncl_wire_crc32c(ncl_wire_crc32c(0, v, 4), v + 4, 5), 0xE3069283u);
    assert_int_equal(ncl_wire_crc32c(0, NULL, 0), 0u);
    uint8_t zeros[32] = {0};
    assert_int_equal(ncl_wire_crc32c(0, zeros, 32), 0x8A9136AAu); /* RFC 3720 B.4 test vector */
}

static void test_names(void **state)
{
    (void)state;
    for (int i = 0; i < NCL_WIRE_RESULT_COUNT; i++) {
        const char *n = ncl_wire_result_name((ncl_wire_result)i);
        assert_string_not_equal(n, "?");
        assert_true(strlen(ncl_wire_strerror((ncl_wire_result)i)) > 10);
        for (int j = 0; j < i; j++)
            assert_string_not_equal(n, ncl_wire_result_name((ncl_wire_result)j));
    }
    assert_string_equal(ncl_wire_result_name(NCL_WIRE_RESULT_COUNT), "?");
    for (size_t i = 0; i < NCMDS; i++)
        assert_non_null(ncl_wire_cmd_name(all_cmds[i]));
    assert_null(ncl_wire_cmd_name(0));
    assert_null(ncl_wire_cmd_name(6));
    assert_string_equal(ncl_wire_cmd_name(NCL_WIRE_ABORT), "ABORT");
    assert_string_equal(ncl_wire_cmd_name(NCL_WIRE_BYE), "BYE");
    assert_string_equal(ncl_wire_cmd_name(NCL_WIRE_WRITE_REDUCE), "WRITE_REDUCE");
}

/* ---- round trips ------------------------------------------------------------------------------- */

static void test_round_trip(void **state)
{
    (void)state;
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    static uint8_t store[BUF_MAX], wire[BUF_MAX + 16], again[BUF_MAX];
    unsigned count = 0;
    for (size_t c = 0; c < NCMDS; c++) {
        for (int it = 0; it < 300; it++) {
            uint32_t nranks = (uint32_t)(1 + rng_next(&rng) % 64);
            ncl_wire_msg m = random_msg(&rng, all_cmds[c], nranks, store, 1500);
            size_t n = 0;
            /* Too small a buffer: refused with the size needed, nothing written past cap. */
            size_t need = 64u + (m.command == NCL_WIRE_HELLO || m.command == NCL_WIRE_HELLO_ACK ? 32u
                                 : m.command == NCL_WIRE_ERROR                                ? 4u + m.payload_len
                                 : m.command == NCL_WIRE_ABORT                                ? 16u + m.payload_len
                                 : m.command == NCL_WIRE_NOTIFY                               ? 16u * m.has_desc
                                                                                              : m.payload_len);
            memset(wire, 0xA5, sizeof wire);
            assert_int_equal(ncl_wire_encode(&m, wire, need - 1, &n), NCL_WIRE_ERR_NO_SPACE);
            assert_int_equal(n, need);
            for (size_t i = need - 1; i < sizeof wire; i++)
                assert_int_equal(wire[i], 0xA5);
            assert_int_equal(ncl_wire_encode(&m, wire, need, &n), NCL_WIRE_OK);
            assert_int_equal(n, need);
            assert_int_equal(wire[need], 0xA5);

            ncl_wire_limits lim = { (uint32_t)(n - 64), nranks, m.dst, 1, 1 };
            ncl_wire_msg d;
            char why[160];
            ncl_wire_result r = ncl_wire_decode(wire, n, &lim, &d, why, sizeof why);
            if (r != NCL_WIRE_OK)
                fail_msg("%s: %s (%s)", ncl_wire_cmd_name(m.command), ncl_wire_result_name(r), why);
            assert_string_equal(why, "");
            assert_msg_equal(&m, &d);
            /* The encoding is canonical: decoding then encoding gives the same bytes. */
            size_t n2 = 0;
            assert_int_equal(ncl_wire_encode(&d, again, sizeof again, &n2), NCL_WIRE_OK);
            assert_int_equal(n2, n);
            assert_memory_equal(again, wire, n);
            count++;
        }
    }
    print_message("round trips: %u messages of %u commands\n", count, (unsigned)NCMDS);
}

/* ---- every rejection, named ----------------------------------------------------------------- */

static int seen[NCL_WIRE_RESULT_COUNT];

static void expect(ncl_wire_result want, const uint8_t *b, size_t len, const ncl_wire_limits *lim, const char *word)
{
    ncl_wire_msg d;
    char why[200];
    ncl_wire_result r = ncl_wire_decode(b, len, lim, &d, why, sizeof why);
    if (r != want)
        fail_msg("want %s, got %s (%s)", ncl_wire_result_name(want), ncl_wire_result_name(r), why);
    assert_true(strlen(why) > 0);
    if (word && !strstr(why, word))
        fail_msg("reason '%s' does not mention '%s'", why, word);
    seen[want] = 1;
}

/* Encodes m, applies `n` bytes of v at byte `at` (if n > 0), reseals when asked, then expects. */
static void mutate_expect(ncl_wire_result want, ncl_wire_msg m, int at, uint64_t v, int n, int seal,
                          const ncl_wire_limits *lim, const char *word)
{
    uint8_t b[BUF_MAX];
    size_t len = enc(&m, b);
    if (n)
        put_le(b + at, v, n);
    if (seal)
        reseal(b, len);
    expect(want, b, len, lim, word);
}

static void test_rejections(void **state)
{
    (void)state;
    memset(seen, 0, sizeof seen);
    ncl_wire_limits lim = { 1024, 8, 3, 1, 1 };
    uint8_t data[64];
    for (int i = 0; i < 64; i++)
        data[i] = (uint8_t)i;
    uint8_t b[BUF_MAX];
    ncl_wire_msg w = base_msg(NCL_WIRE_WRITE, 1, 3);
    w.buf = NCL_BUF_RECV;
    w.payload = data;
    w.payload_len = 16;
    w.bytes = 16;
    ncl_wire_msg wr = w;
    wr.command = NCL_WIRE_WRITE_REDUCE;
    wr.dtype = NCL_FLOAT32;
    wr.op = NCL_SUM;
    ncl_wire_msg nt = base_msg(NCL_WIRE_NOTIFY, 1, 3);
    ncl_wire_msg he = base_msg(NCL_WIRE_HELLO, 1, 3);
    ncl_wire_msg er = base_msg(NCL_WIRE_ERROR, 1, 3);
    er.payload = (const uint8_t *)"boom";
    er.payload_len = 4;
    size_t len = enc(&w, b);

    /* framing */
    expect(NCL_WIRE_ERR_TRUNCATED_HEADER, b, 0, &lim, "header needs 64");
    expect(NCL_WIRE_ERR_TRUNCATED_HEADER, b, 3, &lim, NULL);
    expect(NCL_WIRE_ERR_TRUNCATED_HEADER, b, 63, &lim, NULL);
    expect(NCL_WIRE_ERR_TRUNCATED_PAYLOAD, b, len - 1, &lim, "15 payload bytes of 16");
    uint8_t longer[BUF_MAX];
    memcpy(longer, b, len);
    longer[len] = 0;
    expect(NCL_WIRE_ERR_TRAILING_BYTES, longer, len + 1, &lim, NULL);
    ncl_wire_limits small = lim;
    small.max_payload = 15;
    expect(NCL_WIRE_ERR_OVERSIZED, b, len, &small, "limit 15");
    small.max_payload = 16; /* the limit itself is allowed */
    ncl_wire_msg okm;
    assert_int_equal(ncl_wire_decode(b, len, &small, &okm, NULL, 0), NCL_WIRE_OK);
    mutate_expect(NCL_WIRE_ERR_OVERSIZED, w, 12, 0xFFFFFFFFu, 4, 0, &lim, NULL);
    mutate_expect(NCL_WIRE_ERR_BAD_MAGIC, w, 0, 0x20544547u /* "GET " */, 4, 0, &lim, "magic");
    mutate_expect(NCL_WIRE_ERR_VERSION, w, 4, 2, 1, 0, &lim, "version 2");
    mutate_expect(NCL_WIRE_ERR_VERSION, w, 4, 0, 1, 1, &lim, "version 0");
    mutate_expect(NCL_WIRE_ERR_HEADER_LENGTH, w, 8, 72, 2, 1, &lim, "header_len 72");
    mutate_expect(NCL_WIRE_ERR_CHECKSUM, w, 70, 0xFF, 1, 0, &lim, "crc32c");
    mutate_expect(NCL_WIRE_ERR_CHECKSUM, w, 60, 0, 4, 0, &lim, NULL);
    /* bytes fine, meaning not */
    mutate_expect(NCL_WIRE_ERR_RESERVED, base_msg(NCL_WIRE_HELLO_ACK, w.src, w.dst), 10, 1, 2, 1, &lim, NULL);
    mutate_expect(NCL_WIRE_ERR_UNKNOWN_COMMAND, w, 5, 0, 1, 1, &lim, "command 0");
    mutate_expect(NCL_WIRE_ERR_UNKNOWN_COMMAND, w, 5, 99, 1, 1, &lim, "command 99");
    mutate_expect(NCL_WIRE_ERR_FLAGS, w, 6, NCL_WIRE_FLAG_REPLY, 2, 1, &lim, "not allowed");
    mutate_expect(NCL_WIRE_ERR_FLAGS, er, 6, 0x8000, 2, 1, &lim, "not allowed");
    ncl_wire_msg ack = base_msg(NCL_WIRE_HELLO_ACK, 1, 3);
    mutate_expect(NCL_WIRE_ERR_FLAGS, ack, 6, 0, 2, 1, &lim, "required");
    mutate_expect(NCL_WIRE_ERR_RANK, w, 28, 9, 4, 1, &lim, "out of range");          /* dst >= nranks */
    mutate_expect(NCL_WIRE_ERR_RANK, w, 24, 8, 4, 1, &lim, "src rank 8");            /* src >= nranks */
    mutate_expect(NCL_WIRE_ERR_RANK, w, 28, 2, 4, 1, &lim, "this is rank 3");        /* not for us */
    mutate_expect(NCL_WIRE_ERR_RANK, w, 24, NCL_WIRE_RANK_NONE, 4, 1, &lim, "NONE"); /* data needs ranks */
    mutate_expect(NCL_WIRE_ERR_DTYPE, wr, 57, NCL_DTYPE_COUNT, 1, 1, &lim, "dtype 9");
    mutate_expect(NCL_WIRE_ERR_OP, wr, 58, NCL_AVG, 1, 1, &lim, "op 4");
    mutate_expect(NCL_WIRE_ERR_OP, wr, 58, 200, 1, 1, &lim, NULL);
    mutate_expect(NCL_WIRE_ERR_NOTIFY_ID, nt, 59, NCL_NOTIFY_IDS, 1, 1, &lim, "notify id 32");
    mutate_expect(NCL_WIRE_ERR_BUFFER, w, 56, NCL_BUF_SEND, 1, 1, &lim, "buffer id 0");
    mutate_expect(NCL_WIRE_ERR_BUFFER, w, 56, NCL_BUF_COUNT, 1, 1, &lim, NULL);
    mutate_expect(NCL_WIRE_ERR_BUFFER, w, 40, UINT64_MAX - 8, 8, 1, &lim, "overflows");
    ncl_wire_msg odd = wr;
    odd.payload_len = odd.bytes = 6; /* not whole floats: the encoder refuses too */
    size_t n = 0;
    assert_int_equal(ncl_wire_encode(&odd, b, sizeof b, &n), NCL_WIRE_ERR_BUFFER);
    ncl_wire_msg wr12 = wr;
    wr12.payload_len = wr12.bytes = 12;
    mutate_expect(NCL_WIRE_ERR_BUFFER, wr12, 57, NCL_FLOAT64, 1, 1, &lim, "whole 8-byte");
    mutate_expect(NCL_WIRE_ERR_LENGTH, w, 48, 17, 8, 1, &lim, "bytes 17");
    mutate_expect(NCL_WIRE_ERR_RESERVED, w, 57, 1, 1, 1, &lim, "dtype");
    mutate_expect(NCL_WIRE_ERR_RESERVED, nt, 48, 1, 8, 1, &lim, "buffer fields");
    /* the collective tag: NOTIFY and ABORT only, a kind only with a call number, kinds in range */
    ncl_wire_msg ab = base_msg(NCL_WIRE_ABORT, 1, 3);
    ab.call = 7;
    ab.coll = NCL_COLL_BROADCAST;
    ab.done_call = 6;
    ab.origin = 2;
    ab.error_code = NCL_ERR_REMOTE;
    ab.payload = (const uint8_t *)"why";
    ab.payload_len = 3;
    ncl_wire_msg ntt = nt;
    ntt.call = 7;
    ntt.coll = NCL_COLL_REDUCE;
    char past[32];
    snprintf(past, sizeof past, "coll %d", NCL_COLL_COUNT); /* the first value past the last collective */
    mutate_expect(NCL_WIRE_ERR_COLL, ntt, 56, NCL_COLL_COUNT, 1, 1, &lim, past);
    mutate_expect(NCL_WIRE_ERR_COLL, ab, 56, 0xFF, 1, 1, &lim, "not a collective");
    mutate_expect(NCL_WIRE_ERR_RESERVED, ntt, 40, 0, 8, 1, &lim, "without a call number");
    size_t n0 = 0;
    ncl_wire_msg tagged_write = w;
    tagged_write.call = 3;
    assert_int_equal(ncl_wire_encode(&tagged_write, b, sizeof b, &n0), NCL_WIRE_ERR_RESERVED);
    ncl_wire_msg ab_none = ab;
    ab_none.src = NCL_WIRE_RANK_NONE;
    assert_int_equal(ncl_wire_encode(&ab_none, b, sizeof b, &n0), NCL_WIRE_ERR_RANK);
    mutate_expect(NCL_WIRE_ERR_FLAGS, ab, 6, NCL_WIRE_FLAG_REPLY, 2, 1, &lim, "ABORT");
    ncl_wire_msg nt_done = nt;
    nt_done.done_call = 1; /* an ABORT field */
    assert_int_equal(ncl_wire_encode(&nt_done, b, sizeof b, &n0), NCL_WIRE_ERR_RESERVED);
    nt_done.done_call = 0;
    nt_done.origin = 1;
    assert_int_equal(ncl_wire_encode(&nt_done, b, sizeof b, &n0), NCL_WIRE_ERR_RESERVED);
    uint8_t ag[BUF_MAX];
    size_t alen = enc(&ab, ag);
    put_le(ag + 12, 15, 4); /* code, origin and done_call need 16 */
    reseal(ag, 64 + 15);
    expect(NCL_WIRE_ERR_LENGTH, ag, 64 + 15, &lim, "need 16");
    mutate_expect(NCL_WIRE_ERR_RANK, ab, 64 + 4, 8, 4, 1, &lim, "origin rank 8"); /* origin >= nranks */
    mutate_expect(NCL_WIRE_ERR_RANK, ab, 64 + 4, NCL_WIRE_RANK_NONE, 4, 1, &lim, "origin must name a rank");
    (void)alen;
    mutate_expect(NCL_WIRE_ERR_RESERVED, w, 59, 1, 1, 1, &lim, "notify");
    mutate_expect(NCL_WIRE_ERR_RESERVED, he, 64 + 2, 1, 2, 1, &lim, "reserved payload");
    mutate_expect(NCL_WIRE_ERR_HELLO, he, 64 + 0, 2, 1, 1, &lim, "2..1");
    mutate_expect(NCL_WIRE_ERR_HELLO, he, 64 + 0, 0, 1, 1, &lim, "starts at 0");
    mutate_expect(NCL_WIRE_ERR_HELLO, he, 64 + 4, 16, 4, 1, &lim, "max_payload 16");
    mutate_expect(NCL_WIRE_ERR_HELLO, ack, 64 + 1, 3, 1, 1, &lim, "one agreed version");

    /* payload length per command: body grown or shrunk with the header following suit */
    uint8_t g[BUF_MAX];
    len = enc(&nt, g);
    put_le(g + 12, 4, 4);
    memset(g + len, 0, 4);
    reseal(g, len + 4);
    expect(NCL_WIRE_ERR_LENGTH, g, len + 4, &lim, "NOTIFY");
    len = enc(&he, g);
    put_le(g + 12, 31, 4);
    reseal(g, len - 1);
    expect(NCL_WIRE_ERR_LENGTH, g, len - 1, &lim, "must be 32");
    len = enc(&er, g);
    put_le(g + 12, 2, 4);
    reseal(g, 66);
    expect(NCL_WIRE_ERR_LENGTH, g, 66, &lim, "code needs 4");
    ncl_wire_msg longtext = er;
    static uint8_t text[300];
    memset(text, 'x', sizeof text);
    longtext.payload = text;
    longtext.payload_len = 300;
    assert_int_equal(ncl_wire_encode(&longtext, g, sizeof g, &n), NCL_WIRE_ERR_LENGTH);
    longtext.payload_len = 256;
    len = enc(&longtext, g);
    put_le(g + 12, 4 + 257, 4);
    g[len] = 'x';
    reseal(g, len + 1);
    expect(NCL_WIRE_ERR_LENGTH, g, len + 1, &lim, "at most 256");

    /* encoder-only and negotiation verdicts */
    assert_int_equal(ncl_wire_encode(&w, b, 10, &n), NCL_WIRE_ERR_NO_SPACE);
    seen[NCL_WIRE_ERR_NO_SPACE] = 1;
    assert_int_equal(ncl_wire_encode(NULL, b, sizeof b, &n), NCL_WIRE_ERR_ARGUMENT);
    assert_int_equal(ncl_wire_encode(&w, NULL, 100, &n), NCL_WIRE_ERR_ARGUMENT);
    ncl_wire_msg nopay = w;
    nopay.payload = NULL;
    assert_int_equal(ncl_wire_encode(&nopay, b, sizeof b, &n), NCL_WIRE_ERR_ARGUMENT);
    ncl_wire_msg v2 = w;
    v2.version = 2;
    assert_int_equal(ncl_wire_encode(&v2, b, sizeof b, &n), NCL_WIRE_ERR_VERSION);
    ncl_wire_msg d;
    char why[64];
    assert_int_equal(ncl_wire_decode(NULL, 5, &lim, &d, why, sizeof why), NCL_WIRE_ERR_ARGUMENT);
    assert_int_equal(ncl_wire_decode(b, 5, NULL, &d, why, sizeof why), NCL_WIRE_ERR_ARGUMENT);
    assert_int_equal(ncl_wire_decode(b, 5, &lim, NULL, NULL, 0), NCL_WIRE_ERR_ARGUMENT);
    seen[NCL_WIRE_ERR_ARGUMENT] = 1;
    ncl_wire_hello a = make_hello(1, 1, 100, 4, 0), c = make_hello(2, 3, 100, 4, 0), agreed;
    assert_int_equal(ncl_wire_hello_agree(&a, &c, &agreed, why, sizeof why), NCL_WIRE_ERR_NEGOTIATION);
    assert_non_null(strstr(why, "no common version"));
    seen[NCL_WIRE_ERR_NEGOTIATION] = 1;
    seen[NCL_WIRE_OK] = 1;

    /* why_len 0 and a tiny why are honoured */
    assert_int_equal(ncl_wire_decode(b, 3, &lim, &d, NULL, 0), NCL_WIRE_ERR_TRUNCATED_HEADER);
    char tiny[4] = "zzz";
    assert_int_equal(ncl_wire_decode(b, 3, &lim, &d, tiny, 2), NCL_WIRE_ERR_TRUNCATED_HEADER);
    assert_int_equal(tiny[1], '\0');
    assert_int_equal(tiny[2], 'z');

    for (int i = 0; i < NCL_WIRE_RESULT_COUNT; i++)
        if (!seen[i])
            fail_msg("verdict %s never triggered", ncl_wire_result_name((ncl_wire_result)i));
}

/* Ranks: NONE where allowed, bounds only once known, the receiving rank only when set. */
static void test_rank_rules(void **state)
{
    (void)state;
    uint8_t b[BUF_MAX];
    ncl_wire_msg d;
    ncl_wire_limits early = NCL_WIRE_LIMITS_INIT;
    ncl_wire_msg he = base_msg(NCL_WIRE_HELLO, NCL_WIRE_RANK_NONE, NCL_WIRE_RANK_NONE);
    size_t len = enc(&he, b);
    assert_int_equal(ncl_wire_decode(b, len, &early, &d, NULL, 0), NCL_WIRE_OK);
    ncl_wire_msg run = base_msg(NCL_WIRE_RUN, NCL_WIRE_RANK_NONE, 5);
    len = enc(&run, b);
    ncl_wire_limits lim = { 1024, 8, 5, 1, 1 };
    assert_int_equal(ncl_wire_decode(b, len, &lim, &d, NULL, 0), NCL_WIRE_OK);
    lim.rank = 4;
    assert_int_equal(ncl_wire_decode(b, len, &lim, &d, NULL, 0), NCL_WIRE_ERR_RANK);
    ncl_wire_msg nt = base_msg(NCL_WIRE_NOTIFY, 1000, 2000);
    nt.notify = 31;
    len = enc(&nt, b); /* the encoder knows no rank count */
    assert_int_equal(ncl_wire_decode(b, len, &early, &d, NULL, 0), NCL_WIRE_OK);
    lim.rank = NCL_WIRE_RANK_NONE;
    assert_int_equal(ncl_wire_decode(b, len, &lim, &d, NULL, 0), NCL_WIRE_ERR_RANK);
    nt.dst = NCL_WIRE_RANK_NONE;
    size_t n;
    assert_int_equal(ncl_wire_encode(&nt, b, sizeof b, &n), NCL_WIRE_ERR_RANK);
}

static void test_hello_agree(void **state)
{
    (void)state;
    char why[128];
    ncl_wire_hello a = make_hello(1, 3, 65536, 8, NCL_WIRE_CAP_KNOWN | 0x80000000u);
    ncl_wire_hello b = make_hello(2, 5, 4096, 0, NCL_WIRE_CAP_WRITE_REDUCE | 0x80000000u);
    a.reduce_ops[NCL_FLOAT16] = 1u << NCL_SUM | 1u << NCL_MAX;
    b.reduce_ops[NCL_FLOAT16] = 1u << NCL_MAX | 1u << NCL_MIN;
    a.reduce_ops[NCL_INT8] = 0xFF;
    b.reduce_ops[NCL_INT8] = 0xFF;
    a.reduce_ops[NCL_WIRE_OPS_ROWS - 1] = 0xFF;
    b.reduce_ops[NCL_WIRE_OPS_ROWS - 1] = 0xFF;
    ncl_wire_hello g;
    assert_int_equal(ncl_wire_hello_agree(&a, &b, &g, why, sizeof why), NCL_WIRE_OK);
    assert_string_equal(why, "");
    assert_int_equal(g.min_version, 3);
    assert_int_equal(g.max_version, 3);
    assert_int_equal(g.max_payload, 4096);
    assert_int_equal(g.nranks, 8);
    assert_int_equal(g.caps, NCL_WIRE_CAP_WRITE_REDUCE); /* unknown bit 31 dropped */
    assert_int_equal(g.reduce_ops[NCL_FLOAT16], 1u << NCL_MAX);
    assert_int_equal(g.reduce_ops[NCL_INT8], NCL_INLINE_ALL_OPS); /* AVG and above never travel */
    assert_int_equal(g.reduce_ops[NCL_WIRE_OPS_ROWS - 1], 0);    /* rows of unknown dtypes */
    /* symmetric */
    ncl_wire_hello g2;
    assert_int_equal(ncl_wire_hello_agree(&b, &a, &g2, why, sizeof why), NCL_WIRE_OK);
    assert_memory_equal(&g, &g2, sizeof g);
    /* the result travels in a HELLO_ACK */
    ncl_wire_msg ack = base_msg(NCL_WIRE_HELLO_ACK, 0, 1);
    ack.hello = g;
    uint8_t buf[BUF_MAX];
    size_t len = enc(&ack, buf);
    ncl_wire_msg d;
    ncl_wire_limits lim = { g.max_payload, g.nranks, 1, 1, 1 };
    assert_int_equal(ncl_wire_decode(buf, len, &lim, &d, NULL, 0), NCL_WIRE_OK);
    assert_memory_equal(&d.hello, &g, sizeof g);
    /* no reduce capability on one side: no ops agreed */
    b.caps = NCL_WIRE_CAP_CONTROL;
    assert_int_equal(ncl_wire_hello_agree(&a, &b, &g, why, sizeof why), NCL_WIRE_OK);
    assert_int_equal(g.caps, NCL_WIRE_CAP_CONTROL);
    for (unsigned i = 0; i < NCL_WIRE_OPS_ROWS; i++)
        assert_int_equal(g.reduce_ops[i], 0);
    /* collective tags and ABORT only when both announce them */
    b.caps = NCL_WIRE_CAP_CONTROL | NCL_WIRE_CAP_COLL;
    assert_int_equal(ncl_wire_hello_agree(&a, &b, &g, why, sizeof why), NCL_WIRE_OK);
    assert_int_equal(g.caps, NCL_WIRE_CAP_CONTROL | NCL_WIRE_CAP_COLL);
    a.caps &= ~NCL_WIRE_CAP_COLL;
    assert_int_equal(ncl_wire_hello_agree(&a, &b, &g, why, sizeof why), NCL_WIRE_OK);
    assert_int_equal(g.caps, NCL_WIRE_CAP_CONTROL);
    a.caps |= NCL_WIRE_CAP_COLL;
    /* rank counts disagree */
    b.nranks = 4;
    assert_int_equal(ncl_wire_hello_agree(&a, &b, &g, why, sizeof why), NCL_WIRE_ERR_NEGOTIATION);
    assert_non_null(strstr(why, "rank counts differ"));
    /* invalid input */
    b.nranks = 8;
    b.max_payload = 8;
    assert_int_equal(ncl_wire_hello_agree(&a, &b, &g, why, sizeof why), NCL_WIRE_ERR_HELLO);
    b.max_payload = 64;
    b.min_version = 0;
    assert_int_equal(ncl_wire_hello_agree(&a, &b, &g, why, sizeof why), NCL_WIRE_ERR_HELLO);
    assert_int_equal(ncl_wire_hello_agree(NULL, &b, &g, why, sizeof why), NCL_WIRE_ERR_ARGUMENT);
}

/* ---- corruption ------------------------------------------------------------------------------ */

/* One valid message per command, with a body where the command has one. */
static size_t sample(size_t c, uint8_t *b)
{
    static const uint8_t body[40] = "0123456789abcdefghijklmnopqrstuvwxyzABCD";
    ncl_wire_msg m = base_msg(all_cmds[c], 1, 3);
    switch (m.command) {
    case NCL_WIRE_WRITE:
    case NCL_WIRE_WRITE_REDUCE:
        m.buf = NCL_BUF_SCRATCH;
        m.off = 4096;
        m.bytes = m.payload_len = 40;
        m.payload = body;
        if (m.command == NCL_WIRE_WRITE_REDUCE) {
            m.dtype = NCL_INT32;
            m.op = NCL_MAX;
        }
        break;
    case NCL_WIRE_NOTIFY:
        m.notify = 5;
        m.call = 42;
        m.coll = NCL_COLL_BROADCAST;
        break;
    case NCL_WIRE_ABORT:
        m.call = 9;
        m.coll = NCL_COLL_ALLGATHER;
        m.done_call = 8;
        m.origin = 2;
        m.error_code = NCL_ERR_TIMEOUT;
        m.payload = body;
        m.payload_len = 13;
        break;
    case NCL_WIRE_HELLO:
    case NCL_WIRE_HELLO_ACK:
        break;
    default:
        m.payload = body;
        m.payload_len = 13;
        break;
    }
    return enc(&m, b);
}

static void test_bit_flips(void **state)
{
    (void)state;
    ncl_wire_limits lim = { 1024, 8, 3, 1, 1 };
    unsigned flips = 0;
    for (size_t c = 0; c < NCMDS; c++) {
        uint8_t b[BUF_MAX];
        size_t len = sample(c, b);
        ncl_wire_msg d;
        assert_int_equal(ncl_wire_decode(b, len, &lim, &d, NULL, 0), NCL_WIRE_OK);
        for (size_t i = 0; i < len; i++) {
            for (int bit = 0; bit < 8; bit++) {
                b[i] ^= (uint8_t)(1u << bit);
                char why[160];
                ncl_wire_result r = ncl_wire_decode(b, len, &lim, &d, why, sizeof why);
                assert_int_not_equal(r, NCL_WIRE_OK);
                /* Only the fields checked before the CRC (they frame the message) may give another
                 * reason; every other bit, header or payload, is a checksum mismatch. */
                int framing = i < 5 || i == 8 || i == 9 || (i >= 12 && i < 16);
                if (!framing && r != NCL_WIRE_ERR_CHECKSUM)
                    fail_msg("%s: flip byte %zu bit %d: %s (%s)", ncl_wire_cmd_name(all_cmds[c]), i, bit,
                             ncl_wire_result_name(r), why);
                b[i] ^= (uint8_t)(1u << bit);
                flips++;
            }
        }
        assert_int_equal(ncl_wire_decode(b, len, &lim, &d, NULL, 0), NCL_WIRE_OK);
    }
    print_message("bit flips: %u single-bit corruptions, all rejected\n", flips);
}

static void test_truncation(void **state)
{
    (void)state;
    ncl_wire_limits lim = { 1024, 8, 3, 1, 1 };
    for (size_t c = 0; c < NCMDS; c++) {
        uint8_t b[BUF_MAX];
        size_t len = sample(c, b);
        ncl_wire_msg d;
        for (size_t cut = 0; cut < len; cut++) {
            ncl_wire_result r = ncl_wire_decode(b, cut, &lim, &d, NULL, 0);
            assert_int_equal(r, cut < 64 ? NCL_WIRE_ERR_TRUNCATED_HEADER : NCL_WIRE_ERR_TRUNCATED_PAYLOAD);
        }
        for (size_t extra = 1; extra < 70; extra++) {
            memset(b + len, 0, extra);
            assert_int_equal(ncl_wire_decode(b, len + extra, &lim, &d, NULL, 0), NCL_WIRE_ERR_TRAILING_BYTES);
        }
    }
}

/* Random and mutated bytes: never a crash (the sanitizer build checks reads), every verdict in
 * range with a reason, and anything accepted re-encodes to the very same bytes. */
static void test_garbage(void **state)
{
    (void)state;
    uint64_t rng = 12345;
    static uint8_t b[BUF_MAX], again[BUF_MAX];
    unsigned ok = 0, total = 0;
    for (int it = 0; it < 200000; it++) {
        size_t len;
        if (it % 4 == 0) { /* pure noise */
            len = rng_next(&rng) % 200;
            for (size_t i = 0; i < len; i++)
                b[i] = (uint8_t)rng_next(&rng);
        } else { /* a valid message with a few bytes changed and the CRC made good again */
            len = sample(rng_next(&rng) % NCMDS, b);
            int edits = 1 + (int)(rng_next(&rng) % 3);
            for (int e = 0; e < edits; e++)
                b[rng_next(&rng) % len] = (uint8_t)rng_next(&rng);
            if (len >= 64 && len - 64 == (size_t)(b[12] | b[13] << 8 | b[14] << 16 | (uint32_t)b[15] << 24))
                reseal(b, len);
        }
        ncl_wire_limits lim = { 1024, (uint32_t)(rng_next(&rng) % 10), NCL_WIRE_RANK_NONE, 1, 1 };
        ncl_wire_msg d;
        char why[160];
        ncl_wire_result r = ncl_wire_decode(b, len, &lim, &d, why, sizeof why);
        assert_true((unsigned)r < NCL_WIRE_RESULT_COUNT);
        total++;
        if (r != NCL_WIRE_OK) {
            assert_true(strlen(why) > 0);
            continue;
        }
        ok++;
        size_t n = 0;
        assert_int_equal(ncl_wire_encode(&d, again, sizeof again, &n), NCL_WIRE_OK);
        assert_int_equal(n, len);
        assert_memory_equal(again, b, len);
    }
    print_message("garbage: %u inputs, %u accepted (each re-encoded identically)\n", total, ok);
}

/* ---- corpus ---------------------------------------------------------------------------------- */

/* The corpus is generated by this file (`test_wire --write-corpus DIR`) and checked in; its file
 * names carry the verdict: "<verdict>--<what>.bin", decoded with corpus_limits. */
static const ncl_wire_limits corpus_limits = { 1024, 8, 3, 1, 1 };

typedef struct centry {
    char name[96];
    uint8_t bytes[1200];
    size_t len;
} centry;

#define CORPUS_MAX 96
static centry corpus[CORPUS_MAX];
static size_t corpus_n;

static void add(const char *verdict, const char *what, const uint8_t *b, size_t len)
{
    assert_true(corpus_n < CORPUS_MAX && len <= sizeof corpus[0].bytes);
    centry *e = &corpus[corpus_n++];
    snprintf(e->name, sizeof e->name, "%s--%s.bin", verdict, what);
    memcpy(e->bytes, b, len);
    e->len = len;
}

static void add_msg(const char *verdict, const char *what, const ncl_wire_msg *m)
{
    uint8_t b[BUF_MAX];
    size_t len = enc(m, b);
    add(verdict, what, b, len);
}

/* Encodes m, overwrites n bytes at `at` with v, reseals if asked. */
static void add_mut(const char *verdict, const char *what, const ncl_wire_msg *m, int at, uint64_t v, int n,
                    int seal)
{
    uint8_t b[BUF_MAX];
    size_t len = enc(m, b);
    put_le(b + at, v, n);
    if (seal)
        reseal(b, len);
    add(verdict, what, b, len);
}

static void build_corpus(void)
{
    corpus_n = 0;
    static const uint8_t f32[16] = { 0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 128, 64 }; /* 1 2 3 4 */
    static uint8_t big[1100];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)(i * 7);
    ncl_wire_msg he = base_msg(NCL_WIRE_HELLO, 1, 3);
    ncl_wire_msg ack = base_msg(NCL_WIRE_HELLO_ACK, 1, 3);
    ncl_wire_msg er = base_msg(NCL_WIRE_ERROR, 1, 3);
    er.error_code = NCL_ERR_TIMEOUT;
    er.payload = (const uint8_t *)"notify wait expired: rank 1 never recorded";
    er.payload_len = (uint32_t)strlen((const char *)er.payload);
    ncl_wire_msg w = base_msg(NCL_WIRE_WRITE, 1, 3);
    w.buf = NCL_BUF_RECV;
    w.off = 256;
    w.payload = f32;
    w.payload_len = 16;
    w.bytes = 16;
    ncl_wire_msg wr = w;
    wr.command = NCL_WIRE_WRITE_REDUCE;
    wr.dtype = NCL_FLOAT32;
    wr.op = NCL_SUM;
    ncl_wire_msg nt = base_msg(NCL_WIRE_NOTIFY, 1, 3);
    nt.notify = 2;

    /* accepted */
    add_msg("ok", "hello", &he);
    ncl_wire_msg hc = base_msg(NCL_WIRE_HELLO, NCL_WIRE_RANK_NONE, NCL_WIRE_RANK_NONE);
    hc.hello = make_hello(1, 4, 1u << 20, 0, NCL_WIRE_CAP_CONTROL | 0x100u);
    add_msg("ok", "hello_controller_future_versions", &hc);
    add_msg("ok", "hello_ack", &ack);
    add_msg("ok", "error", &er);
    ncl_wire_msg er0 = er;
    er0.payload_len = 0;
    er0.flags = NCL_WIRE_FLAG_REPLY;
    add_msg("ok", "error_no_text_reply", &er0);
    add_msg("ok", "write", &w);
    ncl_wire_msg w0 = w;
    w0.payload_len = 0;
    w0.bytes = 0;
    w0.buf = NCL_BUF_SCRATCH;
    add_msg("ok", "write_empty_scratch", &w0);
    ncl_wire_msg wmax = w;
    wmax.payload = big;
    wmax.payload_len = wmax.bytes = 1024;
    add_msg("ok", "write_at_limit", &wmax);
    add_msg("ok", "write_reduce_f32_sum", &wr);
    ncl_wire_msg wh = wr;
    wh.dtype = NCL_FLOAT16;
    wh.op = NCL_MAX;
    wh.payload_len = wh.bytes = 6;
    add_msg("ok", "write_reduce_f16_max", &wh);
    add_msg("ok", "notify", &nt);
    ncl_wire_msg nt31 = nt;
    nt31.notify = NCL_NOTIFY_IDS - 1;
    add_msg("ok", "notify_last_id", &nt31);
    for (size_t c = 0; c < NCMDS; c++) {
        if (all_cmds[c] < NCL_WIRE_RUN)
            continue;
        ncl_wire_msg m = base_msg(all_cmds[c], NCL_WIRE_RANK_NONE, 3);
        m.payload = (const uint8_t *)"{\"opaque\":1}";
        m.payload_len = 12;
        char what[32];
        snprintf(what, sizeof what, "control_%s", ncl_wire_cmd_name(all_cmds[c]));
        for (char *p = what; *p; p++)
            if (*p >= 'A' && *p <= 'Z')
                *p = (char)(*p - 'A' + 'a');
        add_msg("ok", what, &m);
    }

    /* framing */
    uint8_t b[BUF_MAX];
    size_t len = enc(&w, b);
    add("truncated_header", "empty", b, 0);
    add("truncated_header", "3_bytes", b, 3);
    add("truncated_header", "63_bytes", b, 63);
    add("truncated_payload", "write_cut", b, len - 5);
    memcpy(b + len, "\0\0\0", 3);
    add("trailing_bytes", "write_plus_3", b, len + 3);
    ncl_wire_msg wbig = w;
    wbig.payload = big;
    wbig.payload_len = wbig.bytes = 1100;
    add_msg("oversized", "write_1100_bytes", &wbig);
    add_mut("oversized", "length_4g", &nt, 12, 0xFFFFFFFFu, 4, 0);
    add("bad_magic", "http", (const uint8_t *)"GET / HTTP/1.1\r\nHost: x\r\n\r\n", 27);
    add_mut("bad_magic", "byte_swapped", &he, 0, 0x4E434C57u, 4, 0);
    add_mut("version", "v2", &he, 4, 2, 1, 1);
    add_mut("version", "v0", &w, 4, 0, 1, 1);
    add_mut("header_length", "72", &w, 8, 72, 2, 1);
    add_mut("header_length", "0", &nt, 8, 0, 2, 1);
    add_mut("checksum", "payload_flip", &w, 70, 0x01, 1, 0);
    add_mut("checksum", "seq_flip", &w, 16, 0x1234, 2, 0);
    add_mut("checksum", "crc_zero", &he, 60, 0, 4, 0);
    /* meaning */
    add_mut("reserved", "header_bytes_10", &he, 10, 0x100, 2, 1); /* a communicator on HELLO */
    add_mut("unknown_command", "0", &nt, 5, 0, 1, 1);
    add_mut("unknown_command", "99", &nt, 5, 99, 1, 1);
    add_mut("flags", "reply_on_write", &w, 6, NCL_WIRE_FLAG_REPLY, 2, 1);
    add_mut("flags", "ack_without_reply", &ack, 6, 0, 2, 1);
    add_mut("flags", "bit15_on_error", &er, 6, 0x8000, 2, 1);
    add_mut("rank", "dst_9_of_8", &w, 28, 9, 4, 1);
    add_mut("rank", "dst_other_rank", &nt, 28, 2, 4, 1);
    add_mut("rank", "write_from_none", &w, 24, NCL_WIRE_RANK_NONE, 4, 1);
    add_mut("dtype", "9", &wr, 57, NCL_DTYPE_COUNT, 1, 1);
    add_mut("op", "avg", &wr, 58, NCL_AVG, 1, 1);
    add_mut("notify_id", "32", &nt, 59, NCL_NOTIFY_IDS, 1, 1);
    add_mut("buffer", "write_into_send", &w, 56, NCL_BUF_SEND, 1, 1);
    add_mut("buffer", "buf_id_7", &w, 56, 7, 1, 1);
    add_mut("buffer", "offset_wraps", &w, 40, UINT64_MAX - 3, 8, 1);
    add_mut("buffer", "reduce_partial_f32", &wh, 57, NCL_FLOAT32, 1, 1);
    add_mut("length", "bytes_not_payload", &w, 48, 15, 8, 1);
    len = enc(&nt, b);
    put_le(b + 12, 4, 4);
    memset(b + len, 0, 4);
    reseal(b, len + 4);
    add("length", "notify_with_payload", b, len + 4);
    len = enc(&he, b);
    put_le(b + 12, 31, 4);
    reseal(b, len - 1);
    add("length", "hello_31", b, len - 1);
    add_mut("reserved", "dtype_on_write", &w, 57, NCL_INT8 + 1, 1, 1);
    add_mut("reserved", "hello_payload_2", &he, 66, 1, 2, 1);
    add_mut("hello", "empty_range", &he, 64, 2, 1, 1);
    add_mut("hello", "max_payload_16", &he, 68, 16, 4, 1);
    add_mut("hello", "ack_with_range", &ack, 65, 2, 1, 1);

    /* collective tags and ABORT (NCL_WIRE_CAP_COLL) */
    ncl_wire_msg ntt = nt;
    ntt.call = 7;
    ntt.coll = NCL_COLL_BROADCAST;
    add_msg("ok", "notify_tagged_broadcast_7", &ntt);
    ncl_wire_msg ntd = ntt; /* with the call's descriptor: count 1000 bf16 max, tree, in place, root 2 */
    ntd.has_desc = 1;
    ntd.desc = (ncl_wire_desc){.count = 1000, .dtype = NCL_BFLOAT16, .op = NCL_MAX, .algo = NCL_ALGO_TREE,
                               .inplace = 1, .root = 2};
    add_msg("ok", "notify_descriptor", &ntd);
    add_mut("dtype", "notify_descriptor_dtype_99", &ntd, 64 + 8, 99, 1, 1);
    add_mut("op", "notify_descriptor_op_9", &ntd, 64 + 9, 9, 1, 1);
    add_mut("rank", "notify_descriptor_root_8", &ntd, 64 + 12, 8, 4, 1); /* the corpus has 8 ranks */
    len = enc(&ntd, b); /* the descriptor on an untagged NOTIFY (call and coll 0) */
    put_le(b + 40, 0, 8);
    b[56] = 0;
    reseal(b, len);
    add("reserved", "notify_descriptor_untagged", b, len);
    len = enc(&ntd, b);
    put_le(b + 12, 15, 4);
    reseal(b, len - 1);
    add("length", "notify_payload_15", b, len - 1);
    ncl_wire_msg ab = base_msg(NCL_WIRE_ABORT, 1, 3);
    ab.call = 7;
    ab.coll = NCL_COLL_ALLREDUCE;
    ab.done_call = 6;
    ab.origin = 1;
    ab.error_code = NCL_ERR_REMOTE;
    ab.payload = (const uint8_t *)"rank 2 called broadcast #7 while rank 1 (this rank) called allreduce #7";
    ab.payload_len = (uint32_t)strlen((const char *)ab.payload);
    add_msg("ok", "abort_allreduce_7", &ab);
    ncl_wire_msg ab0 = base_msg(NCL_WIRE_ABORT, 1, 3);
    ab0.error_code = NCL_ERR_LINK;
    ab0.done_call = 12;
    ab0.origin = 1;
    add_msg("ok", "abort_between_collectives", &ab0);
    add_mut("coll", "notify_coll_past_last", &ntt, 56, NCL_COLL_COUNT, 1, 1);
    add_mut("coll", "abort_coll_255", &ab, 56, 0xFF, 1, 1);
    add_mut("reserved", "notify_coll_without_call", &ntt, 40, 0, 8, 1);
    add_mut("reserved", "notify_bytes", &nt, 48, 1, 8, 1);
    add_mut("rank", "abort_from_none", &ab, 24, NCL_WIRE_RANK_NONE, 4, 1);
    add_mut("flags", "reply_on_abort", &ab, 6, NCL_WIRE_FLAG_REPLY, 2, 1);
    len = enc(&ab0, b);
    put_le(b + 12, 15, 4);
    reseal(b, 79);
    add("length", "abort_15", b, 79);
    add_mut("rank", "abort_origin_9_of_8", &ab, 68, 9, 4, 1);

    /* communicators (NCL_WIRE_CAP_COMM): COMM announces number 3 = id 0x9e3779b9, then its traffic */
    ncl_wire_msg co = base_msg(NCL_WIRE_COMM, 1, 3);
    co.comm = 3;
    co.comm_id = 0x9e3779b9u;
    add_msg("ok", "comm_3", &co);
    ncl_wire_msg wc = w;
    wc.comm = 3;
    add_msg("ok", "write_comm_3", &wc);
    ncl_wire_msg ntc = ntt;
    ntc.comm = 3;
    add_msg("ok", "notify_tagged_comm_3", &ntc);
    add_mut("reserved", "comm_number_0", &co, 10, 0, 2, 1);
    add_mut("reserved", "comm_id_0", &co, 64, 0, 4, 1);
    add_mut("reserved", "comm_on_error", &er, 10, 3, 2, 1);
    len = enc(&co, b);
    put_le(b + 12, 3, 4);
    reseal(b, len - 1);
    add("length", "comm_3_bytes", b, len - 1);
}

static int read_file(const char *path, uint8_t *b, size_t cap, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    *len = fread(b, 1, cap, f);
    int ok = !ferror(f) && fgetc(f) == EOF;
    fclose(f);
    return ok;
}

static void test_corpus(void **state)
{
    (void)state;
    build_corpus();
    DIR *dir = opendir(RINGSIM_WIRE_CORPUS);
    if (!dir)
        fail_msg("cannot open corpus %s", RINGSIM_WIRE_CORPUS);
    int seen_v[NCL_WIRE_RESULT_COUNT] = {0};
    unsigned files = 0, matched = 0;
    struct dirent *de;
    static uint8_t b[BUF_MAX];
    while ((de = readdir(dir)) != NULL) {
        const char *name = de->d_name;
        size_t nl = strlen(name);
        if (nl < 5 || strcmp(name + nl - 4, ".bin") != 0)
            continue;
        const char *sep = strstr(name, "--");
        if (!sep)
            fail_msg("corpus file %s: name must be <verdict>--<what>.bin", name);
        char path[512];
        snprintf(path, sizeof path, "%s/%s", RINGSIM_WIRE_CORPUS, name);
        size_t len = 0;
        if (!read_file(path, b, sizeof b, &len))
            fail_msg("cannot read %s", path);
        ncl_wire_msg d;
        char why[200];
        ncl_wire_result r = ncl_wire_decode(b, len, &corpus_limits, &d, why, sizeof why);
        const char *got = ncl_wire_result_name(r);
        if (strlen(got) != (size_t)(sep - name) || strncmp(got, name, (size_t)(sep - name)) != 0)
            fail_msg("%s: decoded as %s (%s)", name, got, why);
        seen_v[r] = 1;
        files++;
        /* Generated files stay identical to what this codec generates. */
        for (size_t i = 0; i < corpus_n; i++)
            if (strcmp(corpus[i].name, name) == 0) {
                assert_int_equal(corpus[i].len, len);
                assert_memory_equal(corpus[i].bytes, b, len);
                matched++;
            }
    }
    closedir(dir);
    if (matched != corpus_n)
        fail_msg("corpus on disk has %u of the %zu generated files: regenerate with --write-corpus", matched,
                 corpus_n);
    /* Every verdict decoding can give appears (the encoder- and negotiation-only ones cannot). */
    for (int i = 0; i < NCL_WIRE_RESULT_COUNT; i++)
        if (!seen_v[i] && i != NCL_WIRE_ERR_NEGOTIATION && i != NCL_WIRE_ERR_NO_SPACE && i != NCL_WIRE_ERR_ARGUMENT)
            fail_msg("no corpus file for verdict %s", ncl_wire_result_name((ncl_wire_result)i));
    print_message("corpus: %u files decoded with their expected verdict\n", files);
}

/* The CRC is the same however the data is cut (short pieces take the table loop, long ones may
 * take the CPU's crc32 instruction) and matches the bytewise definition. */
static void test_crc32c_split(void **state)
{
    (void)state;
    static uint8_t big[70000];
    uint64_t rng = 99;
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)rng_next(&rng);
    for (int t = 0; t < 200; t++) {
        size_t off = (size_t)(rng_next(&rng) % 64), len = (size_t)(rng_next(&rng) % (sizeof big - 64));
        uint32_t whole = ncl_wire_crc32c(0, big + off, len), cut = 0, bytewise = 0;
        for (size_t done = 0; done < len;) {
            size_t n = (size_t)(rng_next(&rng) % 300);
            n = n > len - done ? len - done : n;
            cut = ncl_wire_crc32c(cut, big + off + done, n);
            done += n;
        }
        for (size_t i = 0; i < len; i++)
            bytewise = ncl_wire_crc32c(bytewise, big + off + i, 1);
        assert_int_equal(whole, cut);
        assert_int_equal(whole, bytewise);
    }
}

/* BYE (the zmq backend's orderly close): empty, between two real ranks, round-trips. */
static void test_bye(void **state)
{
    (void)state;
    uint8_t b[BUF_MAX];
    ncl_wire_msg m = base_msg(NCL_WIRE_BYE, 1, 3), d;
    size_t n = enc(&m, b);
    assert_int_equal(n, NCL_WIRE_HDR_LEN);
    ncl_wire_limits lim = NCL_WIRE_LIMITS_INIT;
    char why[200];
    assert_int_equal(ncl_wire_decode(b, n, &lim, &d, why, sizeof why), NCL_WIRE_OK);
    assert_int_equal(d.command, NCL_WIRE_BYE);
    assert_int_equal(d.src, 1);
    ncl_wire_msg none = base_msg(NCL_WIRE_BYE, NCL_WIRE_RANK_NONE, 3);
    size_t k = 0;
    assert_int_equal(ncl_wire_encode(&none, b, BUF_MAX, &k), NCL_WIRE_ERR_RANK);
    ncl_wire_msg body = m;
    body.payload = b;
    body.payload_len = 4;
    assert_int_equal(ncl_wire_encode(&body, b + 128, BUF_MAX - 128, &k), NCL_WIRE_ERR_LENGTH);
    ncl_wire_msg note = m;
    note.notify = 1;
    assert_int_equal(ncl_wire_encode(&note, b, BUF_MAX, &k), NCL_WIRE_ERR_RESERVED);
}

/* SHM (the zmq backend's ring offer / answer / doorbell): an opaque payload up to
 * NCL_WIRE_SHM_MAX bytes between two ranks, no other field. */
static void test_shm(void **state)
{
    (void)state;
    uint8_t b[BUF_MAX], body[NCL_WIRE_SHM_MAX + 1];
    memset(body, 0x5A, sizeof body);
    ncl_wire_msg m = base_msg(NCL_WIRE_SHM, 1, 3), d;
    m.payload = body;
    m.payload_len = 40;
    size_t n = enc(&m, b);
    assert_int_equal(n, NCL_WIRE_HDR_LEN + 40);
    ncl_wire_limits lim = NCL_WIRE_LIMITS_INIT;
    char why[200];
    assert_int_equal(ncl_wire_decode(b, n, &lim, &d, why, sizeof why), NCL_WIRE_OK);
    assert_int_equal(d.command, NCL_WIRE_SHM);
    assert_int_equal(d.payload_len, 40);
    assert_memory_equal(d.payload, body, 40);
    assert_string_equal(ncl_wire_cmd_name(NCL_WIRE_SHM), "SHM");
    size_t k = 0;
    ncl_wire_msg big = m;
    big.payload_len = NCL_WIRE_SHM_MAX + 1;
    assert_int_equal(ncl_wire_encode(&big, b, BUF_MAX, &k), NCL_WIRE_ERR_LENGTH);
    big.payload_len = NCL_WIRE_SHM_MAX;
    assert_int_equal(ncl_wire_encode(&big, b, BUF_MAX, &k), NCL_WIRE_OK);
    ncl_wire_msg none = m;
    none.src = NCL_WIRE_RANK_NONE;
    assert_int_equal(ncl_wire_encode(&none, b, BUF_MAX, &k), NCL_WIRE_ERR_RANK);
    ncl_wire_msg tagged = m;
    tagged.call = 3;
    assert_int_equal(ncl_wire_encode(&tagged, b, BUF_MAX, &k), NCL_WIRE_ERR_RESERVED);
    assert_false(NCL_WIRE_CAP_KNOWN & NCL_WIRE_CAP_SHM); /* agreed by the backends, as LINK */
}

/* COMM (communicators on one link): the number in header bytes 10..11, the id as the payload; the
 * number travels on a communicator's WRITE, WRITE_REDUCE, NOTIFY, ABORT and BYE only. */
static void test_comm(void **state)
{
    (void)state;
    uint8_t b[BUF_MAX];
    ncl_wire_msg m = base_msg(NCL_WIRE_COMM, 1, 3), d;
    m.comm = 65535;
    m.comm_id = 0xfeedf00du;
    size_t n = enc(&m, b);
    assert_int_equal(n, NCL_WIRE_HDR_LEN + 4);
    ncl_wire_limits lim = NCL_WIRE_LIMITS_INIT;
    char why[200];
    assert_int_equal(ncl_wire_decode(b, n, &lim, &d, why, sizeof why), NCL_WIRE_OK);
    assert_msg_equal(&m, &d);
    assert_string_equal(ncl_wire_cmd_name(NCL_WIRE_COMM), "COMM");
    size_t k = 0;
    ncl_wire_msg bad = m;
    bad.comm_id = 0;
    assert_int_equal(ncl_wire_encode(&bad, b, BUF_MAX, &k), NCL_WIRE_ERR_RESERVED);
    bad = m;
    bad.payload_len = 1;
    assert_int_equal(ncl_wire_encode(&bad, b, BUF_MAX, &k), NCL_WIRE_ERR_LENGTH);
    static const uint8_t carry[] = {NCL_WIRE_WRITE, NCL_WIRE_WRITE_REDUCE, NCL_WIRE_NOTIFY, NCL_WIRE_ABORT,
                                    NCL_WIRE_BYE};
    uint8_t cmds[NCMDS + 1];
    memcpy(cmds, all_cmds, NCMDS);
    cmds[NCMDS] = NCL_WIRE_BYE;
    for (size_t c = 0; c < NCMDS + 1; c++) {
        ncl_wire_msg x = base_msg(cmds[c], 1, 3);
        x.comm = 2;
        if (cmds[c] == NCL_WIRE_WRITE_REDUCE)
            x.dtype = NCL_INT32, x.buf = NCL_BUF_RECV;
        if (cmds[c] == NCL_WIRE_WRITE)
            x.buf = NCL_BUF_RECV;
        if (cmds[c] == NCL_WIRE_ABORT)
            x.origin = 1;
        if (cmds[c] == NCL_WIRE_HELLO || cmds[c] == NCL_WIRE_HELLO_ACK)
            x.hello = make_hello(1, 1, 1u << 20, 0, 0);
        int carries = memchr(carry, cmds[c], sizeof carry) != NULL;
        ncl_wire_result r = ncl_wire_encode(&x, b, BUF_MAX, &k);
        if (carries ? r != NCL_WIRE_OK : r != NCL_WIRE_ERR_RESERVED)
            fail_msg("%s with communicator 2: %s", ncl_wire_cmd_name(cmds[c]), ncl_wire_result_name(r));
        if (carries) {
            assert_int_equal(ncl_wire_decode(b, k, &lim, &d, why, sizeof why), NCL_WIRE_OK);
            assert_int_equal(d.comm, 2);
        }
    }
    assert_false(NCL_WIRE_CAP_KNOWN & NCL_WIRE_CAP_COMM); /* agreed by the backends, as SHM */
}

/* Two frames (header, then the payload as it is): the same message and verdicts as one frame. */
static void test_parts(void **state)
{
    (void)state;
    uint8_t one[BUF_MAX], head[BUF_MAX], data[1000];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 37u + 11u);
    ncl_wire_msg m = base_msg(NCL_WIRE_WRITE_REDUCE, 1, 3), a, b;
    m.buf = NCL_BUF_RECV;
    m.off = 4096;
    m.bytes = 1000;
    m.dtype = NCL_FLOAT32;
    m.op = NCL_SUM;
    m.payload = data;
    m.payload_len = 1000;
    size_t n1 = enc(&m, one), nh = 0;
    assert_int_equal(ncl_wire_encode_head(&m, head, BUF_MAX, &nh), NCL_WIRE_OK);
    assert_int_equal(nh, NCL_WIRE_HDR_LEN);
    assert_memory_equal(head, one, NCL_WIRE_HDR_LEN); /* same header, same CRC */
    ncl_wire_limits lim = NCL_WIRE_LIMITS_INIT;
    char why[200];
    assert_int_equal(ncl_wire_decode(one, n1, &lim, &a, why, sizeof why), NCL_WIRE_OK);
    assert_int_equal(ncl_wire_decode_parts(head, nh, data, sizeof data, &lim, &b, why, sizeof why), NCL_WIRE_OK);
    assert_true(b.payload == data); /* no copy: the payload frame itself */
    b.payload = a.payload;
    assert_memory_equal(&a, &b, sizeof a);
    /* a flipped payload bit is a checksum error in either form */
    data[999] ^= 0x10;
    assert_int_equal(ncl_wire_decode_parts(head, nh, data, sizeof data, &lim, &b, why, sizeof why),
                     NCL_WIRE_ERR_CHECKSUM);
    data[999] ^= 0x10;
    /* framing: the payload frame short or long, the header frame longer than a header */
    assert_int_equal(ncl_wire_decode_parts(head, nh, data, 999, &lim, &b, why, sizeof why),
                     NCL_WIRE_ERR_TRUNCATED_PAYLOAD);
    assert_int_equal(ncl_wire_decode_parts(one, n1, data, 0, &lim, &b, why, sizeof why), NCL_WIRE_ERR_TRAILING_BYTES);
    uint8_t more[1001];
    memcpy(more, data, 1000);
    more[1000] = 0;
    assert_int_equal(ncl_wire_decode_parts(head, nh, more, sizeof more, &lim, &b, why, sizeof why),
                     NCL_WIRE_ERR_TRAILING_BYTES);
    assert_int_equal(ncl_wire_decode_parts(head, 10, data, sizeof data, &lim, &b, why, sizeof why),
                     NCL_WIRE_ERR_TRUNCATED_HEADER);
    /* commands with a payload of their own make travel in one frame only */
    ncl_wire_msg nt = base_msg(NCL_WIRE_NOTIFY, 1, 3);
    assert_int_equal(ncl_wire_encode_head(&nt, head, BUF_MAX, &nh), NCL_WIRE_ERR_ARGUMENT);
    size_t nn = enc(&nt, one);
    assert_int_equal(ncl_wire_decode_parts(one, nn, NULL, 0, &lim, &b, why, sizeof why), NCL_WIRE_ERR_LENGTH);
    assert_int_equal(ncl_wire_decode(one, nn, &lim, &b, why, sizeof why), NCL_WIRE_OK);
    /* every single-bit flip of the two-frame form is caught, as test_bit_flips does for one frame */
    ncl_wire_encode_head(&m, head, BUF_MAX, &nh);
    for (size_t bit = 0; bit < 8 * (NCL_WIRE_HDR_LEN + 64); bit++) {
        uint8_t *at = bit < 8 * NCL_WIRE_HDR_LEN ? head + bit / 8 : data + (bit / 8 - NCL_WIRE_HDR_LEN);
        *at ^= (uint8_t)(1u << (bit % 8));
        assert_int_not_equal(ncl_wire_decode_parts(head, nh, data, sizeof data, &lim, &b, why, sizeof why),
                             NCL_WIRE_OK);
        *at ^= (uint8_t)(1u << (bit % 8));
    }
}

static int write_corpus(const char *dir)
{
    build_corpus();
    for (size_t i = 0; i < corpus_n; i++) {
        char path[4096];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, corpus[i].name) >= sizeof path)
            return 1;
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(corpus[i].bytes, 1, corpus[i].len, f) != corpus[i].len || fclose(f) != 0) {
            fprintf(stderr, "cannot write %s\n", path);
            return 1;
        }
    }
    printf("wrote %zu corpus files to %s\n", corpus_n, dir);
    return 0;
}

/* argv: `--write-corpus DIR` regenerates tests/firmware/core/wire_corpus; otherwise argv[1] is a cmocka filter. */
int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write-corpus") == 0)
        return write_corpus(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32c),      cmocka_unit_test(test_names),       cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_rejections),  cmocka_unit_test(test_rank_rules),  cmocka_unit_test(test_hello_agree),
        cmocka_unit_test(test_bit_flips),   cmocka_unit_test(test_truncation),  cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_corpus),      cmocka_unit_test(test_bye),         cmocka_unit_test(test_crc32c_split),
        cmocka_unit_test(test_shm),         cmocka_unit_test(test_comm),         cmocka_unit_test(test_parts),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests_name("wire", tests, NULL, NULL);
}
