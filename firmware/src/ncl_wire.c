/* ncl_wire.c — encodes and validates ringsim wire messages (spec: ncl_wire.md); pure C, no I/O. */
#include "ncl/ncl_wire.h"

#include <stdarg.h>
#include <string.h>

#include "ncl/ncl_sched.h"
#include "ncl_fmt.h"

/* Header offsets (version 1). Changing any of these is a new protocol version. */
enum {
    OFF_MAGIC = 0,
    OFF_VERSION = 4,
    OFF_COMMAND = 5,
    OFF_FLAGS = 6,
    OFF_HDR_LEN = 8,
    OFF_COMM = 10,
    OFF_PAYLOAD_LEN = 12,
    OFF_SEQ = 16,
    OFF_SRC = 24,
    OFF_DST = 28,
    OFF_TIME = 32,
    OFF_OFF = 40,
    OFF_BYTES = 48,
    OFF_BUF = 56,
    OFF_DTYPE = 57,
    OFF_OP = 58,
    OFF_NOTIFY = 59,
    OFF_CRC = 60
};

/* HELLO payload offsets. */
enum { H_MIN = 0, H_MAX = 1, H_RESERVED = 2, H_MAX_PAYLOAD = 4, H_NRANKS = 8, H_CAPS = 12, H_OPS = 16 };

/* Ops that travel: AVG never does (it is SUM followed by a local division). */
#define WIRE_OPS_KNOWN ((uint8_t)((1u << NCL_AVG) - 1u))
#define ERROR_CODE_LEN 4u
#define ABORT_FIXED_LEN 16u /* u32 code, u32 origin, u64 done_call, then the reason */

typedef enum kind { K_HELLO, K_ERROR, K_WRITE, K_REDUCE, K_NOTIFY, K_CONTROL, K_BYE, K_ABORT, K_LINK, K_SHM, K_COMM } kind;
#define COMM_ID_LEN 4u /* COMM: u32 communicator id */

typedef struct cmd_spec {
    uint8_t cmd;
    uint8_t kind;
    uint16_t flags_allowed, flags_required;
    const char *name;
} cmd_spec;

static const cmd_spec specs[] = {
    { NCL_WIRE_HELLO, K_HELLO, 0, 0, "HELLO" },
    { NCL_WIRE_HELLO_ACK, K_HELLO, NCL_WIRE_FLAG_REPLY, NCL_WIRE_FLAG_REPLY, "HELLO_ACK" },
    { NCL_WIRE_ERROR, K_ERROR, NCL_WIRE_FLAG_REPLY, 0, "ERROR" },
    { NCL_WIRE_BYE, K_BYE, 0, 0, "BYE" },
    { NCL_WIRE_ABORT, K_ABORT, 0, 0, "ABORT" },
    { NCL_WIRE_WRITE, K_WRITE, 0, 0, "WRITE" },
    { NCL_WIRE_WRITE_REDUCE, K_REDUCE, 0, 0, "WRITE_REDUCE" },
    { NCL_WIRE_NOTIFY, K_NOTIFY, 0, 0, "NOTIFY" },
    { NCL_WIRE_LINK, K_LINK, 0, 0, "LINK" },
    { NCL_WIRE_LINK_ACK, K_LINK, 0, 0, "LINK_ACK" },
    { NCL_WIRE_SHM, K_SHM, 0, 0, "SHM" },
    { NCL_WIRE_COMM, K_COMM, 0, 0, "COMM" },
    { NCL_WIRE_RUN, K_CONTROL, NCL_WIRE_FLAG_REPLY, 0, "RUN" },
    { NCL_WIRE_COUNTERS, K_CONTROL, NCL_WIRE_FLAG_REPLY, 0, "COUNTERS" },
    { NCL_WIRE_SELFTEST, K_CONTROL, NCL_WIRE_FLAG_REPLY, 0, "SELFTEST" },
    { NCL_WIRE_STATE, K_CONTROL, NCL_WIRE_FLAG_REPLY, 0, "STATE" },
    { NCL_WIRE_SHUTDOWN, K_CONTROL, NCL_WIRE_FLAG_REPLY, 0, "SHUTDOWN" },
};

static const cmd_spec *spec_of(uint32_t cmd)
{
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
        if (specs[i].cmd == cmd)
            return &specs[i];
    return NULL;
}

/* CRC-32C, reflected polynomial 0x82F63B78: crc_table[i] is the CRC of byte i. */
static const uint32_t crc_table[256] = {
    0x00000000u, 0xf26b8303u, 0xe13b70f7u, 0x1350f3f4u, 0xc79a971fu, 0x35f1141cu,
    0x26a1e7e8u, 0xd4ca64ebu, 0x8ad958cfu, 0x78b2dbccu, 0x6be22838u, 0x9989ab3bu,
    0x4d43cfd0u, 0xbf284cd3u, 0xac78bf27u, 0x5e133c24u, 0x105ec76fu, 0xe235446cu,
    0xf165b798u, 0x030e349bu, 0xd7c45070u, 0x25afd373u, 0x36ff2087u, 0xc494a384u,
    0x9a879fa0u, 0x68ec1ca3u, 0x7bbcef57u, 0x89d76c54u, 0x5d1d08bfu, 0xaf768bbcu,
    0xbc267848u, 0x4e4dfb4bu, 0x20bd8edeu, 0xd2d60dddu, 0xc186fe29u, 0x33ed7d2au,
    0xe72719c1u, 0x154c9ac2u, 0x061c6936u, 0xf477ea35u, 0xaa64d611u, 0x580f5512u,
    0x4b5fa6e6u, 0xb93425e5u, 0x6dfe410eu, 0x9f95c20du, 0x8cc531f9u, 0x7eaeb2fau,
    0x30e349b1u, 0xc288cab2u, 0xd1d83946u, 0x23b3ba45u, 0xf779deaeu, 0x05125dadu,
    0x1642ae59u, 0xe4292d5au, 0xba3a117eu, 0x4851927du, 0x5b016189u, 0xa96ae28au,
    0x7da08661u, 0x8fcb0562u, 0x9c9bf696u, 0x6ef07595u, 0x417b1dbcu, 0xb3109ebfu,
    0xa0406d4bu, 0x522bee48u, 0x86e18aa3u, 0x748a09a0u, 0x67dafa54u, 0x95b17957u,
    0xcba24573u, 0x39c9c670u, 0x2a993584u, 0xd8f2b687u, 0x0c38d26cu, 0xfe53516fu,
    0xed03a29bu, 0x1f682198u, 0x5125dad3u, 0xa34e59d0u, 0xb01eaa24u, 0x42752927u,
    0x96bf4dccu, 0x64d4cecfu, 0x77843d3bu, 0x85efbe38u, 0xdbfc821cu, 0x2997011fu,
    0x3ac7f2ebu, 0xc8ac71e8u, 0x1c661503u, 0xee0d9600u, 0xfd5d65f4u, 0x0f36e6f7u,
    0x61c69362u, 0x93ad1061u, 0x80fde395u, 0x72966096u, 0xa65c047du, 0x5437877eu,
    0x4767748au, 0xb50cf789u, 0xeb1fcbadu, 0x197448aeu, 0x0a24bb5au, 0xf84f3859u,
    0x2c855cb2u, 0xdeeedfb1u, 0xcdbe2c45u, 0x3fd5af46u, 0x7198540du, 0x83f3d70eu,
    0x90a324fau, 0x62c8a7f9u, 0xb602c312u, 0x44694011u, 0x5739b3e5u, 0xa55230e6u,
    0xfb410cc2u, 0x092a8fc1u, 0x1a7a7c35u, 0xe811ff36u, 0x3cdb9bddu, 0xceb018deu,
    0xdde0eb2au, 0x2f8b6829u, 0x82f63b78u, 0x709db87bu, 0x63cd4b8fu, 0x91a6c88cu,
    0x456cac67u, 0xb7072f64u, 0xa457dc90u, 0x563c5f93u, 0x082f63b7u, 0xfa44e0b4u,
    0xe9141340u, 0x1b7f9043u, 0xcfb5f4a8u, 0x3dde77abu, 0x2e8e845fu, 0xdce5075cu,
    0x92a8fc17u, 0x60c37f14u, 0x73938ce0u, 0x81f80fe3u, 0x55326b08u, 0xa759e80bu,
    0xb4091bffu, 0x466298fcu, 0x1871a4d8u, 0xea1a27dbu, 0xf94ad42fu, 0x0b21572cu,
    0xdfeb33c7u, 0x2d80b0c4u, 0x3ed04330u, 0xccbbc033u, 0xa24bb5a6u, 0x502036a5u,
    0x4370c551u, 0xb11b4652u, 0x65d122b9u, 0x97baa1bau, 0x84ea524eu, 0x7681d14du,
    0x2892ed69u, 0xdaf96e6au, 0xc9a99d9eu, 0x3bc21e9du, 0xef087a76u, 0x1d63f975u,
    0x0e330a81u, 0xfc588982u, 0xb21572c9u, 0x407ef1cau, 0x532e023eu, 0xa145813du,
    0x758fe5d6u, 0x87e466d5u, 0x94b49521u, 0x66df1622u, 0x38cc2a06u, 0xcaa7a905u,
    0xd9f75af1u, 0x2b9cd9f2u, 0xff56bd19u, 0x0d3d3e1au, 0x1e6dcdeeu, 0xec064eedu,
    0xc38d26c4u, 0x31e6a5c7u, 0x22b65633u, 0xd0ddd530u, 0x0417b1dbu, 0xf67c32d8u,
    0xe52cc12cu, 0x1747422fu, 0x49547e0bu, 0xbb3ffd08u, 0xa86f0efcu, 0x5a048dffu,
    0x8ecee914u, 0x7ca56a17u, 0x6ff599e3u, 0x9d9e1ae0u, 0xd3d3e1abu, 0x21b862a8u,
    0x32e8915cu, 0xc083125fu, 0x144976b4u, 0xe622f5b7u, 0xf5720643u, 0x07198540u,
    0x590ab964u, 0xab613a67u, 0xb831c993u, 0x4a5a4a90u, 0x9e902e7bu, 0x6cfbad78u,
    0x7fab5e8cu, 0x8dc0dd8fu, 0xe330a81au, 0x115b2b19u, 0x020bd8edu, 0xf0605beeu,
    0x24aa3f05u, 0xd6c1bc06u, 0xc5914ff2u, 0x37faccf1u, 0x69e9f0d5u, 0x9b8273d6u,
    0x88d28022u, 0x7ab90321u, 0xae7367cau, 0x5c18e4c9u, 0x4f48173du, 0xbd23943eu,
    0xf36e6f75u, 0x0105ec76u, 0x12551f82u, 0xe03e9c81u, 0x34f4f86au, 0xc69f7b69u,
    0xd5cf889du, 0x27a40b9eu, 0x79b737bau, 0x8bdcb4b9u, 0x988c474du, 0x6ae7c44eu,
    0xbe2da0a5u, 0x4c4623a6u, 0x5f16d052u, 0xad7d5351u
};

/* The table loop: portable, ~0.5 GB/s. Works on the inverted register (no pre/post inversion). */
static uint32_t crc_bytes(uint32_t crc, const uint8_t *p, size_t len)
{
    while (len--)
        crc = crc_table[(crc ^ *p++) & 0xffu] ^ (crc >> 8);
    return crc;
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(NCL_FREESTANDING)
/* (a * b) mod P in the reflected representation (bit 31 is x^0): shifting a CRC register over
 * n zero bytes is multiplying it by x^(8n) mod P. */
static uint32_t crc_multmodp(uint32_t a, uint32_t b)
{
    uint32_t p = 0;
    for (uint32_t m = 1u << 31; m; m >>= 1) {
        if (a & m)
            p ^= b;
        b = b & 1u ? (b >> 1) ^ 0x82F63B78u : b >> 1;
    }
    return p;
}

/* SSE4.2's crc32 instruction is exactly this CRC (Castagnoli, reflected) one step at a time:
 * 8 bytes per instruction. One chain is bound by the instruction's 3-cycle latency, so long
 * buffers run three independent chains over three adjacent lanes of CRC_LANE bytes (one per
 * cycle: ~3x) and join them as CRC(ABC) = A * x^(16 LANE) + B * x^(8 LANE) + C, the register
 * being linear. Chosen per call from the CPU's feature bits (no state of ours); any other
 * target uses the table. */
#define CRC_LANE 8192u
#define CRC_X8LANE 0x28461564u   /* x^(8 * 8192) mod P, reflected */
#define CRC_X16LANE 0xbf455269u  /* x^(16 * 8192) mod P */
__attribute__((target("sse4.2"))) static uint32_t crc_sse42(uint32_t crc, const uint8_t *p, size_t len)
{
    uint64_t c = crc;
    for (; len >= 3 * CRC_LANE; p += 3 * CRC_LANE, len -= 3 * CRC_LANE) {
        uint64_t c1 = 0, c2 = 0;
        for (size_t i = 0; i < CRC_LANE; i += 8) {
            uint64_t v0, v1, v2;
            memcpy(&v0, p + i, 8);
            memcpy(&v1, p + CRC_LANE + i, 8);
            memcpy(&v2, p + 2 * CRC_LANE + i, 8);
            c = __builtin_ia32_crc32di(c, v0);
            c1 = __builtin_ia32_crc32di(c1, v1);
            c2 = __builtin_ia32_crc32di(c2, v2);
        }
        c = crc_multmodp(CRC_X16LANE, (uint32_t)c) ^ crc_multmodp(CRC_X8LANE, (uint32_t)c1) ^ (uint32_t)c2;
    }
    for (; len >= 8; p += 8, len -= 8) {
        uint64_t v;
        memcpy(&v, p, 8); /* unaligned, little-endian on x86-64 */
        c = __builtin_ia32_crc32di(c, v);
    }
    uint32_t c32 = (uint32_t)c;
    for (; len; p++, len--)
        c32 = __builtin_ia32_crc32qi(c32, *p);
    return c32;
}
#define NCL_WIRE_CRC_HW 1
#endif

uint32_t ncl_wire_crc32c(uint32_t crc, const void *data, size_t len)
{
    const uint8_t *p = data;
#ifdef NCL_WIRE_CRC_HW
    if (len >= 64 && __builtin_cpu_supports("sse4.2"))
        return ~crc_sse42(~crc, p, len);
#endif
    return ~crc_bytes(~crc, p, len);
}

/* ---- little-endian access: byte by byte, so alignment and host endianness never matter ---- */

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | ((uint64_t)rd32(p + 4) << 32); }

static void wr16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void wr32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void wr64(uint8_t *p, uint64_t v)
{
    wr32(p, (uint32_t)v);
    wr32(p + 4, (uint32_t)(v >> 32));
}

/* ---- reasons ------------------------------------------------------------------------------- */

static ncl_wire_result reject(char *why, size_t why_len, ncl_wire_result r, const char *fmt, ...)
{
    if (why && why_len) {
        va_list ap;
        va_start(ap, fmt);
        ncl_vfmt(why, why_len, fmt, ap);
        va_end(ap);
    }
    return r;
}

static void clear_why(char *why, size_t why_len)
{
    if (why && why_len)
        why[0] = '\0';
}

typedef unsigned long long ull;

/* ---- field rules, shared by encode and decode ------------------------------------------------ */

static ncl_wire_result check_hello(const ncl_wire_hello *h, int ack, char *why, size_t why_len)
{
    if (h->min_version < 1 || h->min_version > h->max_version)
        return reject(why, why_len, NCL_WIRE_ERR_HELLO, "hello: version range %u..%u is empty or starts at 0",
                      (unsigned)h->min_version, (unsigned)h->max_version);
    if (ack && h->min_version != h->max_version)
        return reject(why, why_len, NCL_WIRE_ERR_HELLO,
                      "hello_ack: carries range %u..%u, must name one agreed version",
                      (unsigned)h->min_version, (unsigned)h->max_version);
    if (h->max_payload < NCL_WIRE_HELLO_LEN)
        return reject(why, why_len, NCL_WIRE_ERR_HELLO, "hello: max_payload %u is below the HELLO payload (%u)",
                      (unsigned)h->max_payload, (unsigned)NCL_WIRE_HELLO_LEN);
    return NCL_WIRE_OK;
}

static ncl_wire_result check_rank(const char *what, uint32_t r, int none_ok, const ncl_wire_limits *lim,
                                  const cmd_spec *s, char *why, size_t why_len)
{
    if (r == NCL_WIRE_RANK_NONE) {
        if (none_ok)
            return NCL_WIRE_OK;
        return reject(why, why_len, NCL_WIRE_ERR_RANK, "%s: %s must name a rank, not NONE", s->name, what);
    }
    if (lim->nranks && r >= lim->nranks)
        return reject(why, why_len, NCL_WIRE_ERR_RANK, "%s: %s rank %u out of range (nranks %u)", s->name, what,
                      (unsigned)r, (unsigned)lim->nranks);
    return NCL_WIRE_OK;
}

static ncl_wire_result check_desc(const ncl_wire_msg *m, const cmd_spec *s, const ncl_wire_limits *lim, char *why,
                                  size_t why_len);

/* Everything about a message that does not depend on its bytes: command, flags, ranks, fields
 * (used ones in range, unused ones zero) and the body length of the command. */
static ncl_wire_result check_fields(const ncl_wire_msg *m, const ncl_wire_limits *lim, char *why, size_t why_len)
{
    const cmd_spec *s = spec_of(m->command);
    ncl_wire_result r;
    if (!s)
        return reject(why, why_len, NCL_WIRE_ERR_UNKNOWN_COMMAND, "command %u is not defined", (unsigned)m->command);
    if (m->flags & ~s->flags_allowed)
        return reject(why, why_len, NCL_WIRE_ERR_FLAGS, "%s: flags 0x%x not allowed (allowed 0x%x)", s->name,
                      (unsigned)m->flags, (unsigned)s->flags_allowed);
    if ((m->flags & s->flags_required) != s->flags_required)
        return reject(why, why_len, NCL_WIRE_ERR_FLAGS, "%s: flags 0x%x lack required 0x%x", s->name,
                      (unsigned)m->flags, (unsigned)s->flags_required);

    /* Link traffic names two real ranks; HELLO, ERROR and the controller may come before ranks
     * are known or from the controller, which is no rank. */
    int ranks_needed = s->kind == K_WRITE || s->kind == K_REDUCE || s->kind == K_NOTIFY || s->kind == K_BYE ||
                       s->kind == K_ABORT || s->kind == K_LINK || s->kind == K_SHM || s->kind == K_COMM;
    if ((r = check_rank("src", m->src, !ranks_needed, lim, s, why, why_len)) != NCL_WIRE_OK)
        return r;
    if ((r = check_rank("dst", m->dst, !ranks_needed, lim, s, why, why_len)) != NCL_WIRE_OK)
        return r;
    if (lim->rank != NCL_WIRE_RANK_NONE && m->dst != NCL_WIRE_RANK_NONE && m->dst != lim->rank)
        return reject(why, why_len, NCL_WIRE_ERR_RANK, "%s: addressed to rank %u, this is rank %u", s->name,
                      (unsigned)m->dst, (unsigned)lim->rank);

    int data = s->kind == K_WRITE || s->kind == K_REDUCE;
    if (!data && (m->buf || m->off || m->bytes))
        return reject(why, why_len, NCL_WIRE_ERR_RESERVED, "%s: buffer fields (buf %u, off %llu, bytes %llu) must be 0",
                      s->name, (unsigned)m->buf, (ull)m->off, (ull)m->bytes);
    if (s->kind != K_REDUCE && (m->dtype || m->op))
        return reject(why, why_len, NCL_WIRE_ERR_RESERVED, "%s: dtype %u / op %u must be 0", s->name,
                      (unsigned)m->dtype, (unsigned)m->op);
    if (s->kind != K_NOTIFY && m->notify)
        return reject(why, why_len, NCL_WIRE_ERR_RESERVED, "%s: notify id %u must be 0", s->name, (unsigned)m->notify);
    /* The collective tag (NCL_WIRE_CAP_COLL) travels on NOTIFY and ABORT only. */
    if (s->kind != K_NOTIFY && s->kind != K_ABORT && (m->call || m->coll))
        return reject(why, why_len, NCL_WIRE_ERR_RESERVED, "%s: collective tag (call %llu, coll %u) must be 0",
                      s->name, (ull)m->call, (unsigned)m->coll);
    if (s->kind != K_ABORT && (m->done_call || m->origin))
        return reject(why, why_len, NCL_WIRE_ERR_RESERVED, "%s: done_call %llu / origin %u must be 0", s->name,
                      (ull)m->done_call, (unsigned)m->origin);
    /* The communicator (NCL_WIRE_CAP_COMM): on what a communicator's traffic is made of. */
    if (m->comm && s->kind != K_WRITE && s->kind != K_REDUCE && s->kind != K_NOTIFY && s->kind != K_ABORT &&
        s->kind != K_BYE && s->kind != K_COMM)
        return reject(why, why_len, NCL_WIRE_ERR_RESERVED, "%s: communicator %u in header bytes 10..11 must be 0",
                      s->name, (unsigned)m->comm);
    if (s->kind != K_COMM && m->comm_id)
        return reject(why, why_len, NCL_WIRE_ERR_RESERVED, "%s: communicator id 0x%x must be 0", s->name,
                      (unsigned)m->comm_id);
    if (s->kind == K_ABORT && (r = check_rank("origin", m->origin, 0, lim, s, why, why_len)) != NCL_WIRE_OK)
        return r;
    if (!m->call && m->coll)
        return reject(why, why_len, NCL_WIRE_ERR_RESERVED, "%s: coll %u without a call number (untagged: both 0)",
                      s->name, (unsigned)m->coll);
    if ((r = check_desc(m, s, lim, why, why_len)) != NCL_WIRE_OK)
        return r;
    if (m->coll >= NCL_COLL_COUNT)
        return reject(why, why_len, NCL_WIRE_ERR_COLL, "%s: coll %u is not a collective (< %u)", s->name,
                      (unsigned)m->coll, (unsigned)NCL_COLL_COUNT);

    switch ((kind)s->kind) {
    case K_HELLO:
        if (m->payload_len)
            return reject(why, why_len, NCL_WIRE_ERR_LENGTH, "%s: extra body of %u bytes", s->name,
                          (unsigned)m->payload_len);
        return check_hello(&m->hello, m->command == NCL_WIRE_HELLO_ACK, why, why_len);
    case K_BYE:
        if (m->payload_len)
            return reject(why, why_len, NCL_WIRE_ERR_LENGTH, "BYE: carries %u payload bytes, must be 0",
                          (unsigned)m->payload_len);
        return NCL_WIRE_OK;
    case K_NOTIFY:
        if (m->payload_len)
            return reject(why, why_len, NCL_WIRE_ERR_LENGTH, "NOTIFY: carries %u payload bytes, must be 0",
                          (unsigned)m->payload_len);
        if (m->notify >= NCL_NOTIFY_IDS)
            return reject(why, why_len, NCL_WIRE_ERR_NOTIFY_ID, "NOTIFY: notify id %u >= %u", (unsigned)m->notify,
                          (unsigned)NCL_NOTIFY_IDS);
        return NCL_WIRE_OK;
    case K_ERROR:
    case K_ABORT:
        if (m->payload_len > NCL_WIRE_ERROR_TEXT_MAX)
            return reject(why, why_len, NCL_WIRE_ERR_LENGTH, "%s: text of %u bytes, at most %u", s->name,
                          (unsigned)m->payload_len, (unsigned)NCL_WIRE_ERROR_TEXT_MAX);
        return NCL_WIRE_OK;
    case K_COMM:
        if (!m->comm || !m->comm_id)
            return reject(why, why_len, NCL_WIRE_ERR_RESERVED, "COMM: communicator %u, id 0x%x: neither may be 0",
                          (unsigned)m->comm, (unsigned)m->comm_id);
        if (m->payload_len)
            return reject(why, why_len, NCL_WIRE_ERR_LENGTH, "COMM: extra body of %u bytes", (unsigned)m->payload_len);
        return NCL_WIRE_OK;
    case K_SHM: /* the zmq backend's segment offer / answer / doorbell: checked by the backend */
        if (m->payload_len > NCL_WIRE_SHM_MAX)
            return reject(why, why_len, NCL_WIRE_ERR_LENGTH, "SHM: %u payload bytes, at most %u",
                          (unsigned)m->payload_len, (unsigned)NCL_WIRE_SHM_MAX);
        return NCL_WIRE_OK;
    case K_CONTROL:
    case K_LINK: /* the board's transfer header and data: checked by the board (sim/zmq/rs_board.cpp) */
        return NCL_WIRE_OK;
    case K_WRITE:
    case K_REDUCE:
        break;
    }

    /* WRITE, WRITE_REDUCE */
    if (s->kind == K_REDUCE) {
        if (m->dtype >= NCL_DTYPE_COUNT)
            return reject(why, why_len, NCL_WIRE_ERR_DTYPE, "WRITE_REDUCE: dtype %u >= %u", (unsigned)m->dtype,
                          (unsigned)NCL_DTYPE_COUNT);
        if (m->op >= NCL_AVG)
            return reject(why, why_len, NCL_WIRE_ERR_OP, "WRITE_REDUCE: op %u is not sum/prod/max/min",
                          (unsigned)m->op);
    }
    if (m->bytes != m->payload_len)
        return reject(why, why_len, NCL_WIRE_ERR_LENGTH, "%s: bytes %llu but payload_len %u", s->name, (ull)m->bytes,
                      (unsigned)m->payload_len);
    /* SEND is the caller's read-only buffer: a peer never writes it. */
    if (m->buf != NCL_BUF_RECV && m->buf != NCL_BUF_SCRATCH)
        return reject(why, why_len, NCL_WIRE_ERR_BUFFER, "%s: buffer id %u is not RECV (%u) or SCRATCH (%u)", s->name,
                      (unsigned)m->buf, (unsigned)NCL_BUF_RECV, (unsigned)NCL_BUF_SCRATCH);
    if (m->off > UINT64_MAX - m->bytes)
        return reject(why, why_len, NCL_WIRE_ERR_BUFFER, "%s: off %llu + bytes %llu overflows", s->name, (ull)m->off,
                      (ull)m->bytes);
    if (s->kind == K_REDUCE) {
        size_t es = ncl_dtype_size((ncl_dtype)m->dtype);
        if (es == 0 || m->bytes % es)
            return reject(why, why_len, NCL_WIRE_ERR_BUFFER, "WRITE_REDUCE: %llu bytes is not whole %u-byte elements",
                          (ull)m->bytes, (unsigned)es);
    }
    return NCL_WIRE_OK;
}

/* A NOTIFY's call descriptor (NCL_WIRE_CAP_DESC): only on a tagged NOTIFY, every field in range. */
static ncl_wire_result check_desc(const ncl_wire_msg *m, const cmd_spec *s, const ncl_wire_limits *lim, char *why,
                                  size_t why_len)
{
    const ncl_wire_desc *d = &m->desc;
    if (!m->has_desc) {
        if (d->count || d->dtype || d->op || d->algo || d->inplace || d->root)
            return reject(why, why_len, NCL_WIRE_ERR_RESERVED, "%s: descriptor fields set without has_desc", s->name);
        return NCL_WIRE_OK;
    }
    if (s->kind != K_NOTIFY || !m->call)
        return reject(why, why_len, NCL_WIRE_ERR_RESERVED, "%s: a call descriptor travels on a tagged NOTIFY only",
                      s->name);
    if (d->dtype >= NCL_DTYPE_COUNT)
        return reject(why, why_len, NCL_WIRE_ERR_DTYPE, "NOTIFY: descriptor dtype %u (< %u)", (unsigned)d->dtype,
                      (unsigned)NCL_DTYPE_COUNT);
    if (d->op >= NCL_OP_COUNT)
        return reject(why, why_len, NCL_WIRE_ERR_OP, "NOTIFY: descriptor op %u (< %u)", (unsigned)d->op,
                      (unsigned)NCL_OP_COUNT);
    if (d->algo >= NCL_ALGO_COUNT || d->inplace > 1)
        return reject(why, why_len, NCL_WIRE_ERR_RESERVED, "NOTIFY: descriptor algorithm %u (< %u) / placement %u "
                      "(0 or 1)", (unsigned)d->algo, (unsigned)NCL_ALGO_COUNT, (unsigned)d->inplace);
    if (d->root < 0 || (lim->nranks && (uint32_t)d->root >= lim->nranks))
        return reject(why, why_len, NCL_WIRE_ERR_RANK, "NOTIFY: descriptor root %d out of range", (int)d->root);
    return NCL_WIRE_OK;
}

/* Payload bytes on the wire for a valid message. */
static uint64_t wire_payload_len(const ncl_wire_msg *m, const cmd_spec *s)
{
    switch ((kind)s->kind) {
    case K_HELLO:
        return NCL_WIRE_HELLO_LEN;
    case K_NOTIFY:
        return m->has_desc ? NCL_WIRE_DESC_LEN : 0;
    case K_BYE:
        return 0;
    case K_ERROR:
        return ERROR_CODE_LEN + (uint64_t)m->payload_len;
    case K_ABORT:
        return ABORT_FIXED_LEN + (uint64_t)m->payload_len;
    case K_COMM:
        return COMM_ID_LEN;
    default:
        return m->payload_len;
    }
}

/* ---- encode -------------------------------------------------------------------------------- */

/* The commands whose wire payload is the caller's bytes verbatim: the ones that may travel as a
 * header frame and a payload frame (ncl_wire_encode_head, ncl_wire_decode_parts). */
static int verbatim(const cmd_spec *s)
{
    return s->kind == K_WRITE || s->kind == K_REDUCE || s->kind == K_CONTROL || s->kind == K_LINK || s->kind == K_SHM;
}

static ncl_wire_result encode_core(const ncl_wire_msg *msg, void *buf, size_t cap, size_t *out_len, int head_only);

ncl_wire_result ncl_wire_encode(const ncl_wire_msg *msg, void *buf, size_t cap, size_t *out_len)
{
    return encode_core(msg, buf, cap, out_len, 0);
}

ncl_wire_result ncl_wire_encode_head(const ncl_wire_msg *msg, void *buf, size_t cap, size_t *out_len)
{
    return encode_core(msg, buf, cap, out_len, 1);
}

static ncl_wire_result encode_core(const ncl_wire_msg *msg, void *buf, size_t cap, size_t *out_len, int head_only)
{
    /* The encoder knows no receiver: it checks form only (any rank count, any payload size). */
    static const ncl_wire_limits any = { UINT32_MAX, 0u, NCL_WIRE_RANK_NONE, NCL_WIRE_VERSION, NCL_WIRE_VERSION };
    if (out_len)
        *out_len = 0;
    if (!msg || !out_len || (!buf && cap))
        return NCL_WIRE_ERR_ARGUMENT;
    if (msg->version != 0 && msg->version != NCL_WIRE_VERSION)
        return NCL_WIRE_ERR_VERSION;
    ncl_wire_result r = check_fields(msg, &any, NULL, 0);
    if (r != NCL_WIRE_OK)
        return r;
    const cmd_spec *s = spec_of(msg->command);
    if (msg->payload_len && !msg->payload && s->kind != K_HELLO && s->kind != K_NOTIFY && s->kind != K_BYE &&
        s->kind != K_COMM)
        return NCL_WIRE_ERR_ARGUMENT;
    uint64_t plen = wire_payload_len(msg, s);
    if (plen > UINT32_MAX)
        return NCL_WIRE_ERR_OVERSIZED;
    if (head_only && !verbatim(s))
        return NCL_WIRE_ERR_ARGUMENT;
    uint64_t total = NCL_WIRE_HDR_LEN + (head_only ? 0 : plen);
    if (total > cap) {
        *out_len = total > SIZE_MAX ? SIZE_MAX : (size_t)total;
        return NCL_WIRE_ERR_NO_SPACE;
    }

    uint8_t *p = buf;
    memset(p, 0, NCL_WIRE_HDR_LEN);
    wr32(p + OFF_MAGIC, NCL_WIRE_MAGIC);
    p[OFF_VERSION] = NCL_WIRE_VERSION;
    p[OFF_COMMAND] = msg->command;
    wr16(p + OFF_FLAGS, msg->flags);
    wr16(p + OFF_HDR_LEN, NCL_WIRE_HDR_LEN);
    wr16(p + OFF_COMM, msg->comm);
    wr32(p + OFF_PAYLOAD_LEN, (uint32_t)plen);
    wr64(p + OFF_SEQ, msg->seq);
    wr32(p + OFF_SRC, msg->src);
    wr32(p + OFF_DST, msg->dst);
    wr64(p + OFF_TIME, msg->time_ns);
    wr64(p + OFF_OFF, msg->off);
    wr64(p + OFF_BYTES, msg->bytes);
    p[OFF_BUF] = msg->buf;
    p[OFF_DTYPE] = msg->dtype;
    p[OFF_OP] = msg->op;
    p[OFF_NOTIFY] = msg->notify;
    if (s->kind == K_NOTIFY || s->kind == K_ABORT) { /* off and buf are 0 for these: their slots carry the tag */
        wr64(p + OFF_OFF, msg->call);
        p[OFF_BUF] = msg->coll;
    }

    if (head_only) { /* the payload stays where it is: the CRC covers it all the same */
        uint32_t crc = ncl_wire_crc32c(ncl_wire_crc32c(0, p, OFF_CRC), msg->payload, (size_t)plen);
        wr32(p + OFF_CRC, crc);
        *out_len = NCL_WIRE_HDR_LEN;
        return NCL_WIRE_OK;
    }
    uint8_t *body = p + NCL_WIRE_HDR_LEN;
    switch ((kind)s->kind) {
    case K_HELLO: {
        const ncl_wire_hello *h = &msg->hello;
        memset(body, 0, NCL_WIRE_HELLO_LEN);
        body[H_MIN] = h->min_version;
        body[H_MAX] = h->max_version;
        wr32(body + H_MAX_PAYLOAD, h->max_payload);
        wr32(body + H_NRANKS, h->nranks);
        wr32(body + H_CAPS, h->caps);
        memcpy(body + H_OPS, h->reduce_ops, NCL_WIRE_OPS_ROWS);
        break;
    }
    case K_ERROR:
        wr32(body, msg->error_code);
        if (msg->payload_len)
            memcpy(body + ERROR_CODE_LEN, msg->payload, msg->payload_len);
        break;
    case K_ABORT:
        wr32(body, msg->error_code);
        wr32(body + 4, msg->origin);
        wr64(body + 8, msg->done_call);
        if (msg->payload_len)
            memcpy(body + ABORT_FIXED_LEN, msg->payload, msg->payload_len);
        break;
    case K_NOTIFY:
        if (msg->has_desc) {
            wr64(body, msg->desc.count);
            body[8] = msg->desc.dtype;
            body[9] = msg->desc.op;
            body[10] = msg->desc.algo;
            body[11] = msg->desc.inplace;
            wr32(body + 12, (uint32_t)msg->desc.root);
        }
        break;
    case K_BYE:
        break;
    case K_COMM:
        wr32(body, msg->comm_id);
        break;
    default:
        if (msg->payload_len)
            memcpy(body, msg->payload, msg->payload_len);
        break;
    }
    uint32_t crc = ncl_wire_crc32c(0, p, OFF_CRC);
    crc = ncl_wire_crc32c(crc, body, (size_t)plen);
    wr32(p + OFF_CRC, crc);
    *out_len = (size_t)total;
    return NCL_WIRE_OK;
}

/* ---- decode -------------------------------------------------------------------------------- */

static ncl_wire_result decode_core(const void *buf, size_t len, const uint8_t *tail, size_t tail_len, int split,
                                   const ncl_wire_limits *limits, ncl_wire_msg *msg, char *why, size_t why_len);

ncl_wire_result ncl_wire_decode(const void *buf, size_t len, const ncl_wire_limits *limits, ncl_wire_msg *msg,
                                char *why, size_t why_len)
{
    return decode_core(buf, len, NULL, 0, 0, limits, msg, why, why_len);
}

ncl_wire_result ncl_wire_decode_parts(const void *head, size_t head_len, const void *payload, size_t payload_len,
                                      const ncl_wire_limits *limits, ncl_wire_msg *msg, char *why, size_t why_len)
{
    if (!payload && payload_len)
        return reject(why, why_len, NCL_WIRE_ERR_ARGUMENT, "decode: NULL payload");
    return decode_core(head, head_len, payload, payload_len, 1, limits, msg, why, why_len);
}

static ncl_wire_result decode_core(const void *buf, size_t len, const uint8_t *tail, size_t tail_len, int split,
                                   const ncl_wire_limits *limits, ncl_wire_msg *msg, char *why, size_t why_len)
{
    const uint8_t *p = buf;
    clear_why(why, why_len);
    if (!limits || !msg || (!buf && len))
        return reject(why, why_len, NCL_WIRE_ERR_ARGUMENT, "decode: NULL buffer, limits or message");
    memset(msg, 0, sizeof *msg);

    /* Magic and version first, on whatever bytes there are: a message of another protocol or of
     * a later version is named as such even if its header is shorter or longer than ours. */
    if (len < OFF_VERSION)
        return reject(why, why_len, NCL_WIRE_ERR_TRUNCATED_HEADER, "%llu bytes, a header needs %u", (ull)len,
                      (unsigned)NCL_WIRE_HDR_LEN);
    uint32_t magic = rd32(p + OFF_MAGIC);
    if (magic != NCL_WIRE_MAGIC)
        return reject(why, why_len, NCL_WIRE_ERR_BAD_MAGIC, "magic 0x%x, expected 0x%x", (unsigned)magic,
                      (unsigned)NCL_WIRE_MAGIC);
    if (len <= OFF_VERSION)
        return reject(why, why_len, NCL_WIRE_ERR_TRUNCATED_HEADER, "%llu bytes, a header needs %u", (ull)len,
                      (unsigned)NCL_WIRE_HDR_LEN);
    uint8_t version = p[OFF_VERSION];
    if (version < limits->min_version || version > limits->max_version)
        return reject(why, why_len, NCL_WIRE_ERR_VERSION, "version %u, this receiver accepts %u..%u",
                      (unsigned)version, (unsigned)limits->min_version, (unsigned)limits->max_version);
    if (len < NCL_WIRE_HDR_LEN)
        return reject(why, why_len, NCL_WIRE_ERR_TRUNCATED_HEADER, "%llu bytes, a header needs %u", (ull)len,
                      (unsigned)NCL_WIRE_HDR_LEN);
    uint16_t hdr_len = rd16(p + OFF_HDR_LEN);
    if (hdr_len != NCL_WIRE_HDR_LEN)
        return reject(why, why_len, NCL_WIRE_ERR_HEADER_LENGTH, "header_len %u, version %u defines %u",
                      (unsigned)hdr_len, (unsigned)version, (unsigned)NCL_WIRE_HDR_LEN);
    uint32_t plen = rd32(p + OFF_PAYLOAD_LEN);
    if (plen > limits->max_payload)
        return reject(why, why_len, NCL_WIRE_ERR_OVERSIZED, "payload_len %u above this receiver's limit %u",
                      (unsigned)plen, (unsigned)limits->max_payload);
    /* Two frames: the first is the header alone, the second all of the payload. */
    if (split && len > NCL_WIRE_HDR_LEN)
        return reject(why, why_len, NCL_WIRE_ERR_TRAILING_BYTES, "%llu bytes after the header in a header frame",
                      (ull)(len - NCL_WIRE_HDR_LEN));
    /* len >= HDR_LEN here, so the subtraction cannot wrap. */
    size_t have = split ? tail_len : len - NCL_WIRE_HDR_LEN;
    if (have < plen)
        return reject(why, why_len, NCL_WIRE_ERR_TRUNCATED_PAYLOAD, "%llu payload bytes of %u", (ull)have,
                      (unsigned)plen);
    if (have > plen)
        return reject(why, why_len, NCL_WIRE_ERR_TRAILING_BYTES, "%llu bytes after a message of %llu",
                      (ull)(have - plen), (ull)(NCL_WIRE_HDR_LEN + (uint64_t)plen));
    const uint8_t *body = split ? tail : p + NCL_WIRE_HDR_LEN;
    if (!body) /* an empty payload frame: the checksum and the kinds read nothing from it */
        body = p + NCL_WIRE_HDR_LEN;
    uint32_t crc = ncl_wire_crc32c(ncl_wire_crc32c(0, p, OFF_CRC), body, plen);
    uint32_t sent = rd32(p + OFF_CRC);
    if (crc != sent)
        return reject(why, why_len, NCL_WIRE_ERR_CHECKSUM, "crc32c 0x%x, header says 0x%x", (unsigned)crc,
                      (unsigned)sent);

    /* The bytes are what the sender sent; from here on the question is whether they make sense. */
    uint8_t cmd = p[OFF_COMMAND];
    const cmd_spec *s = spec_of(cmd);
    if (!s)
        return reject(why, why_len, NCL_WIRE_ERR_UNKNOWN_COMMAND, "command %u is not defined", (unsigned)cmd);
    if (split && !verbatim(s))
        return reject(why, why_len, NCL_WIRE_ERR_LENGTH, "%s travels in one frame, not as a header and a payload "
                      "frame", s->name);

    msg->version = version;
    msg->command = cmd;
    msg->flags = rd16(p + OFF_FLAGS);
    msg->comm = rd16(p + OFF_COMM);
    msg->seq = rd64(p + OFF_SEQ);
    msg->src = rd32(p + OFF_SRC);
    msg->dst = rd32(p + OFF_DST);
    msg->time_ns = rd64(p + OFF_TIME);
    msg->off = rd64(p + OFF_OFF);
    msg->bytes = rd64(p + OFF_BYTES);
    msg->buf = p[OFF_BUF];
    msg->dtype = p[OFF_DTYPE];
    msg->op = p[OFF_OP];
    msg->notify = p[OFF_NOTIFY];
    if (s->kind == K_NOTIFY || s->kind == K_ABORT) {
        msg->call = msg->off;
        msg->coll = msg->buf;
        msg->off = 0;
        msg->buf = 0;
    }

    switch ((kind)s->kind) {
    case K_HELLO:
        if (plen != NCL_WIRE_HELLO_LEN)
            return reject(why, why_len, NCL_WIRE_ERR_LENGTH, "%s: payload %u bytes, must be %u", s->name,
                          (unsigned)plen, (unsigned)NCL_WIRE_HELLO_LEN);
        if (rd16(body + H_RESERVED))
            return reject(why, why_len, NCL_WIRE_ERR_RESERVED, "%s: reserved payload bytes 2..3 must be 0", s->name);
        msg->hello.min_version = body[H_MIN];
        msg->hello.max_version = body[H_MAX];
        msg->hello.max_payload = rd32(body + H_MAX_PAYLOAD);
        msg->hello.nranks = rd32(body + H_NRANKS);
        msg->hello.caps = rd32(body + H_CAPS);
        memcpy(msg->hello.reduce_ops, body + H_OPS, NCL_WIRE_OPS_ROWS);
        break;
    case K_NOTIFY:
        if (plen == NCL_WIRE_DESC_LEN) {
            msg->has_desc = 1;
            msg->desc.count = rd64(body);
            msg->desc.dtype = body[8];
            msg->desc.op = body[9];
            msg->desc.algo = body[10];
            msg->desc.inplace = body[11];
            msg->desc.root = (int32_t)rd32(body + 12);
            break;
        }
        if (plen)
            return reject(why, why_len, NCL_WIRE_ERR_LENGTH, "NOTIFY: carries %u payload bytes, must be 0 or %u (a "
                          "call descriptor)", (unsigned)plen, (unsigned)NCL_WIRE_DESC_LEN);
        break;
    case K_BYE:
        if (plen)
            return reject(why, why_len, NCL_WIRE_ERR_LENGTH, "%s: carries %u payload bytes, must be 0", s->name,
                          (unsigned)plen);
        break;
    case K_ERROR:
        if (plen < ERROR_CODE_LEN)
            return reject(why, why_len, NCL_WIRE_ERR_LENGTH, "ERROR: payload %u bytes, the code needs %u",
                          (unsigned)plen, (unsigned)ERROR_CODE_LEN);
        msg->error_code = rd32(body);
        msg->payload = body + ERROR_CODE_LEN;
        msg->payload_len = plen - ERROR_CODE_LEN;
        break;
    case K_ABORT:
        if (plen < ABORT_FIXED_LEN)
            return reject(why, why_len, NCL_WIRE_ERR_LENGTH,
                          "ABORT: payload %u bytes, code, origin and done_call need %u", (unsigned)plen,
                          (unsigned)ABORT_FIXED_LEN);
        msg->error_code = rd32(body);
        msg->origin = rd32(body + 4);
        msg->done_call = rd64(body + 8);
        msg->payload = body + ABORT_FIXED_LEN;
        msg->payload_len = plen - ABORT_FIXED_LEN;
        break;
    case K_COMM:
        if (plen != COMM_ID_LEN)
            return reject(why, why_len, NCL_WIRE_ERR_LENGTH, "COMM: payload %u bytes, must be %u (the id)",
                          (unsigned)plen, (unsigned)COMM_ID_LEN);
        msg->comm_id = rd32(body);
        break;
    default:
        msg->payload = body;
        msg->payload_len = plen;
        break;
    }
    return check_fields(msg, limits, why, why_len);
}

/* ---- negotiation --------------------------------------------------------------------------- */

ncl_wire_result ncl_wire_hello_agree(const ncl_wire_hello *mine, const ncl_wire_hello *theirs, ncl_wire_hello *agreed,
                                     char *why, size_t why_len)
{
    ncl_wire_result r;
    clear_why(why, why_len);
    if (!mine || !theirs || !agreed)
        return reject(why, why_len, NCL_WIRE_ERR_ARGUMENT, "hello_agree: NULL argument");
    if ((r = check_hello(mine, 0, why, why_len)) != NCL_WIRE_OK)
        return r;
    if ((r = check_hello(theirs, 0, why, why_len)) != NCL_WIRE_OK)
        return r;
    uint8_t lo = mine->min_version > theirs->min_version ? mine->min_version : theirs->min_version;
    uint8_t hi = mine->max_version < theirs->max_version ? mine->max_version : theirs->max_version;
    if (lo > hi)
        return reject(why, why_len, NCL_WIRE_ERR_NEGOTIATION, "no common version: ours %u..%u, theirs %u..%u",
                      (unsigned)mine->min_version, (unsigned)mine->max_version, (unsigned)theirs->min_version,
                      (unsigned)theirs->max_version);
    if (mine->nranks && theirs->nranks && mine->nranks != theirs->nranks)
        return reject(why, why_len, NCL_WIRE_ERR_NEGOTIATION, "rank counts differ: ours %u, theirs %u",
                      (unsigned)mine->nranks, (unsigned)theirs->nranks);
    ncl_wire_hello a;
    memset(&a, 0, sizeof a);
    a.min_version = a.max_version = hi;
    a.max_payload = mine->max_payload < theirs->max_payload ? mine->max_payload : theirs->max_payload;
    a.nranks = mine->nranks ? mine->nranks : theirs->nranks;
    a.caps = mine->caps & theirs->caps & NCL_WIRE_CAP_KNOWN;
    /* Reduce ops only mean something when both can reduce at all. */
    if (a.caps & NCL_WIRE_CAP_WRITE_REDUCE)
        for (unsigned d = 0; d < NCL_DTYPE_COUNT; d++)
            a.reduce_ops[d] = (uint8_t)(mine->reduce_ops[d] & theirs->reduce_ops[d] & WIRE_OPS_KNOWN);
    *agreed = a;
    return NCL_WIRE_OK;
}

/* ---- names --------------------------------------------------------------------------------- */

static const char *const result_names[NCL_WIRE_RESULT_COUNT] = {
    "ok", "truncated_header", "truncated_payload", "trailing_bytes", "oversized", "bad_magic", "version",
    "unknown_command", "flags", "header_length", "checksum", "rank", "dtype", "op", "notify_id", "buffer",
    "length", "reserved", "hello", "negotiation", "no_space", "argument", "coll",
};

static const char *const result_texts[NCL_WIRE_RESULT_COUNT] = {
    "message accepted",
    "truncated header: the frame is shorter than the 64-byte header; the sender or transport cut it",
    "truncated payload: fewer bytes than payload_len; the sender or transport cut the message",
    "trailing bytes: the frame is longer than header + payload_len; frame one message per ZeroMQ frame",
    "oversized: payload_len exceeds the receiver's limit; respect max_payload agreed in HELLO",
    "bad magic: not a ringsim wire message (wrong endpoint or protocol)",
    "unsupported version: upgrade one side or negotiate a common version with HELLO",
    "unknown command: the sender speaks a command this receiver does not define",
    "flags not allowed: a flag bit that this command does not permit, or a required one missing",
    "header length mismatch: header_len differs from the one the version defines",
    "checksum mismatch: the message was corrupted in transit; drop it and report the link",
    "rank out of range: src/dst is not a rank of this job or the message is not for this rank",
    "dtype out of range: WRITE_REDUCE names an element type that does not exist",
    "op out of range: WRITE_REDUCE ops are sum, prod, max, min (avg reduces with sum)",
    "notify id out of range: ids are below NCL_NOTIFY_IDS",
    "buffer out of range: only RECV and SCRATCH are writable, off + bytes must not overflow, "
    "reduce payloads must be whole elements",
    "payload length invalid for the command (HELLO 32, NOTIFY 0 or 16, ERROR 4..260, ABORT 16..272, data = bytes)",
    "reserved field not zero: the sender uses a feature not agreed in HELLO",
    "invalid HELLO: empty version range or max_payload below 32 bytes",
    "negotiation failed: no common protocol version, or the peers disagree on the rank count",
    "buffer too small: encode again into *out_len bytes",
    "invalid argument: a NULL pointer was passed",
    "collective out of range: a NOTIFY or ABORT tag names a collective kind that does not exist",
};

const char *ncl_wire_result_name(ncl_wire_result r)
{
    return (unsigned)r < NCL_WIRE_RESULT_COUNT ? result_names[r] : "?";
}

const char *ncl_wire_strerror(ncl_wire_result r)
{
    return (unsigned)r < NCL_WIRE_RESULT_COUNT ? result_texts[r] : "unknown wire result";
}

const char *ncl_wire_cmd_name(uint32_t command)
{
    const cmd_spec *s = spec_of(command);
    return s ? s->name : NULL;
}
