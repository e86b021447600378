/* ncl_wire.h — the ringsim wire protocol as a pure-C codec: no I/O, no allocation, caller buffers. */
#ifndef NCL_WIRE_H
#define NCL_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "ncl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The byte layout, every command and the versioning rule are specified in firmware/src/ncl_wire.md.
 * Everything on the wire is little-endian. A message is one 64-byte header followed by
 * payload_len bytes of payload; the CRC-32C covers header bytes 0..59 and the payload. */

#define NCL_WIRE_MAGIC 0x574C434Eu /**< bytes 'N' 'C' 'L' 'W' read as a little-endian u32 */
#define NCL_WIRE_VERSION 1u        /**< the only version this codec speaks */
#define NCL_WIRE_HDR_LEN 64u       /**< header bytes of version 1 */
#define NCL_WIRE_HELLO_LEN 32u     /**< payload bytes of HELLO and HELLO_ACK */
#define NCL_WIRE_ERROR_TEXT_MAX 256u /**< longest ERROR text, bytes (not NUL-terminated on the wire) */
#define NCL_WIRE_RANK_NONE 0xFFFFFFFFu /**< src/dst of the controller, or a rank not known yet */
#define NCL_WIRE_OPS_ROWS 16u      /**< HELLO reduce_ops rows (one per dtype; rows >= NCL_DTYPE_COUNT reserved) */
#define NCL_WIRE_DESC_LEN 16u      /**< payload bytes of a NOTIFY that carries its call's descriptor */

/** Commands. Numbers are part of the protocol and never reused. */
typedef enum ncl_wire_cmd {
    NCL_WIRE_HELLO = 1,         /**< first message on a link: version range and capabilities */
    NCL_WIRE_HELLO_ACK = 2,     /**< answer to HELLO: the agreed version and capabilities */
    NCL_WIRE_ERROR = 3,         /**< code + text; the link is to be closed after it */
    NCL_WIRE_BYE = 4,           /**< orderly close: the sender sends nothing after it on this link */
    NCL_WIRE_ABORT = 5,         /**< the sender's collective (call, coll) failed: code + reason; the
                                     communicator is broken on every rank (needs NCL_WIRE_CAP_COLL) */
    NCL_WIRE_WRITE = 16,        /**< dst.(buf, off) <- payload (bytes = payload_len) */
    NCL_WIRE_WRITE_REDUCE = 17, /**< dst.(buf, off) <- dst.(buf, off) op payload (dtype, op) */
    NCL_WIRE_NOTIFY = 18,       /**< add 1 to counter (src, notify) on dst */
    /* Emulated boards (`ringsim agent --backend mmio`, capability LINK): a DMA/notify block's link
     * transfer and its ack; payload opaque to the codec (defined in sim/zmq/rs_board.cpp, ncl_wire.md). */
    NCL_WIRE_LINK = 19,
    NCL_WIRE_LINK_ACK = 20,
    /* Shared memory between ranks on one host (capability SHM): a segment offer, its answer, or a
     * doorbell; payload opaque to the codec, at most NCL_WIRE_SHM_MAX bytes (defined by the zmq
     * backend, firmware/backends/zmq/ncl_zmq.c and sim/zmq/ZMQ.md "Shared memory"). */
    NCL_WIRE_SHM = 21,
    /* A communicator on the link (capability COMM): header field comm (a number of the sender's,
     * never 0) names communicator comm_id from now on, in the sender's WRITE, WRITE_REDUCE, NOTIFY,
     * ABORT and BYE to this receiver. */
    NCL_WIRE_COMM = 22,
    /* Controller commands: payload opaque to the codec (defined by the zmq backend). */
    NCL_WIRE_RUN = 32,
    NCL_WIRE_COUNTERS = 33,
    NCL_WIRE_SELFTEST = 34,
    NCL_WIRE_STATE = 35,
    NCL_WIRE_SHUTDOWN = 36
} ncl_wire_cmd;

/** Header flags. Bits not listed are reserved: a sender sets them only after a capability for them
 *  was agreed, and this codec rejects them (NCL_WIRE_ERR_FLAGS). */
#define NCL_WIRE_FLAG_REPLY 0x0001u /**< answers the message with the same seq (HELLO_ACK must set it) */

/** HELLO capability bits (ncl_wire_hello.caps). Unknown bits are ignored and dropped by agreement. */
#define NCL_WIRE_CAP_WRITE_REDUCE 0x00000001u /**< can reduce WRITE_REDUCE payloads (see reduce_ops) */
#define NCL_WIRE_CAP_CONTROL 0x00000002u      /**< accepts the controller commands */
/** Collective tags and ABORT: NOTIFY carries the sender's collective call number and kind (a
 *  receiver in the same call with another collective knows at once the calls do not match), and
 *  ABORT may be sent. A sender tags and aborts only towards peers that agreed this bit. */
#define NCL_WIRE_CAP_COLL 0x00000004u
/** Call descriptors: a tagged NOTIFY may carry its call's descriptor (NCL_WIRE_DESC_LEN payload
 *  bytes: count, dtype, op, algorithm, placement, root), so a receiver in the same call names any
 *  argument the ranks disagree on, not only the collective. Needs COLL. */
#define NCL_WIRE_CAP_DESC 0x00000010u
#define NCL_WIRE_CAP_KNOWN (NCL_WIRE_CAP_WRITE_REDUCE | NCL_WIRE_CAP_CONTROL | NCL_WIRE_CAP_COLL | NCL_WIRE_CAP_DESC)
/** Block link transfers: LINK and LINK_ACK (emulated boards; sim/zmq/ZMQ.md "Agents on the mmio
 *  backend"). Agreed by the boards themselves (both announce it), not by ncl_wire_hello_agree:
 *  it is outside NCL_WIRE_CAP_KNOWN, whose value the wire corpus (tests/firmware/core/wire_corpus) records. */
#define NCL_WIRE_CAP_LINK 0x00000008u
/** Shared memory (the zmq backend): the sender may offer a shared-memory ring for its data
 *  commands towards this peer (NCL_WIRE_SHM). Agreed by the backends themselves (both announce it),
 *  not by ncl_wire_hello_agree: outside NCL_WIRE_CAP_KNOWN like LINK, so the corpus is unchanged. */
#define NCL_WIRE_CAP_SHM 0x00000020u
#define NCL_WIRE_SHM_MAX 256u /**< largest NCL_WIRE_SHM payload */
/** Two-frame messages (ncl_wire_encode_head / ncl_wire_decode_parts): the sender may send WRITE and
 *  WRITE_REDUCE as a header frame and a payload frame. Agreed by the backends themselves, outside
 *  NCL_WIRE_CAP_KNOWN: a receiver from before it breaks the link on a multi-frame message. */
#define NCL_WIRE_CAP_SPLIT 0x00000040u
/** Communicators besides the first on one link (the zmq backend's sub-communicators): the sender
 *  announces each with COMM before its first frame in it, and its WRITE, WRITE_REDUCE, NOTIFY,
 *  ABORT and BYE (the sender left that communicator) carry the number it announced in header bytes
 *  10..11 (0: the communicator the link was made for). Agreed by the backends themselves, outside NCL_WIRE_CAP_KNOWN like SHM. */
#define NCL_WIRE_CAP_COMM 0x00000080u

/** Decoder / encoder verdicts. Every rejection has its own value; names from ncl_wire_result_name(). */
typedef enum ncl_wire_result {
    NCL_WIRE_OK = 0,
    NCL_WIRE_ERR_TRUNCATED_HEADER,  /**< fewer bytes than a header */
    NCL_WIRE_ERR_TRUNCATED_PAYLOAD, /**< fewer bytes than header + payload_len */
    NCL_WIRE_ERR_TRAILING_BYTES,    /**< more bytes than header + payload_len */
    NCL_WIRE_ERR_OVERSIZED,         /**< payload_len above the receiver's limit */
    NCL_WIRE_ERR_BAD_MAGIC,         /**< not a ringsim wire message */
    NCL_WIRE_ERR_VERSION,           /**< version outside the receiver's range */
    NCL_WIRE_ERR_UNKNOWN_COMMAND,   /**< command number not defined */
    NCL_WIRE_ERR_FLAGS,             /**< a flag not allowed for this command (or a required one missing) */
    NCL_WIRE_ERR_HEADER_LENGTH,     /**< header_len is not the one of this version */
    NCL_WIRE_ERR_CHECKSUM,          /**< CRC-32C mismatch: corrupted in transit */
    NCL_WIRE_ERR_RANK,              /**< src/dst out of range, or not addressed to this rank */
    NCL_WIRE_ERR_DTYPE,             /**< dtype out of range */
    NCL_WIRE_ERR_OP,                /**< op out of range (AVG never travels: it is SUM + a local div) */
    NCL_WIRE_ERR_NOTIFY_ID,         /**< notify id >= NCL_NOTIFY_IDS */
    NCL_WIRE_ERR_BUFFER,            /**< buf id out of range, off + bytes overflows, bytes not whole elements */
    NCL_WIRE_ERR_LENGTH,            /**< payload_len not valid for the command */
    NCL_WIRE_ERR_RESERVED,          /**< a reserved or unused field is not zero */
    NCL_WIRE_ERR_HELLO,             /**< HELLO / HELLO_ACK payload invalid (version range, max_payload) */
    NCL_WIRE_ERR_NEGOTIATION,       /**< hello_agree: no common version, or rank counts differ */
    NCL_WIRE_ERR_NO_SPACE,          /**< encode: the caller's buffer is too small (*out_len = needed) */
    NCL_WIRE_ERR_ARGUMENT,          /**< a NULL pointer where one is needed */
    NCL_WIRE_ERR_COLL,              /**< NOTIFY / ABORT collective kind out of range */
    NCL_WIRE_RESULT_COUNT
} ncl_wire_result;

/** HELLO / HELLO_ACK payload. In a HELLO_ACK min_version == max_version == the agreed version. */
typedef struct ncl_wire_hello {
    uint8_t min_version, max_version; /**< versions the sender speaks (1 <= min <= max) */
    uint32_t max_payload;             /**< largest payload the sender accepts (>= NCL_WIRE_HELLO_LEN) */
    uint32_t nranks;                  /**< ranks of the job as the sender knows it; 0: not known */
    uint32_t caps;                    /**< NCL_WIRE_CAP_* */
    uint8_t reduce_ops[NCL_WIRE_OPS_ROWS]; /**< per dtype: bit (1 << ncl_op) = can reduce it inline */
} ncl_wire_hello;

/** What the ranks of one call must pass alike (ncl_hal_launch's fields), as a NOTIFY carries it. */
typedef struct ncl_wire_desc {
    uint64_t count;  /**< elements */
    uint8_t dtype;   /**< ncl_dtype */
    uint8_t op;      /**< ncl_op (avg included) */
    uint8_t algo;    /**< ncl_algo */
    uint8_t inplace; /**< 0 or 1 */
    int32_t root;    /**< 0 .. nranks-1 */
} ncl_wire_desc;

/** One message, decoded or to encode. Fields a command does not use must be zero. */
typedef struct ncl_wire_msg {
    uint8_t version;     /**< decode: from the header; encode: 0 or NCL_WIRE_VERSION */
    uint8_t command;     /**< ncl_wire_cmd */
    uint16_t flags;      /**< NCL_WIRE_FLAG_* */
    uint64_t seq;        /**< sender's sequence id (replies echo it) */
    uint32_t src, dst;   /**< ranks, or NCL_WIRE_RANK_NONE where the command allows it */
    uint64_t time_ns;    /**< sender's clock at send (simulated or real), ns */
    /* WRITE, WRITE_REDUCE: where on dst the payload goes */
    uint8_t buf;         /**< ncl_buf */
    uint64_t off;        /**< byte offset in buf */
    uint64_t bytes;      /**< data bytes; equals payload_len */
    uint8_t dtype, op;   /**< WRITE_REDUCE only */
    uint8_t notify;      /**< NOTIFY only: id < NCL_NOTIFY_IDS */
    ncl_wire_hello hello; /**< HELLO, HELLO_ACK */
    uint32_t error_code; /**< ERROR: an ncl_result or ncl_wire_result, by the sender's choice;
                              ABORT: the ncl_result the sender's collective failed with */
    /** Data (WRITE*), error text (ERROR) or opaque controller payload. Decode: points INTO the
     *  decoded buffer (valid while it is). Unused for HELLO/HELLO_ACK/NOTIFY. */
    const uint8_t *payload;
    uint32_t payload_len;
    /** NOTIFY, ABORT (NCL_WIRE_CAP_COLL): the sender's collective call number on its communicator
     *  (ncl_hal_launch.seq, 1 for the first; 0: untagged / none running) and its ncl_coll (0 when
     *  call is 0). On the wire they use the header slots of off (bytes 40..47) and buf (byte 56). */
    uint64_t call;
    uint8_t coll;
    /** NOTIFY (NCL_WIRE_CAP_DESC, tagged only): has_desc 1 and the call's descriptor, its payload. */
    uint8_t has_desc;
    ncl_wire_desc desc;
    /** ABORT: the sender's last finished call number (0: none). A receiver still running a call
     *  up to it may complete it (the sender sent all of it); a later call fails at once. */
    uint64_t done_call;
    /** WRITE, WRITE_REDUCE, NOTIFY, ABORT, BYE, COMM (NCL_WIRE_CAP_COMM): the sender's number for the
     *  communicator the message belongs to, header bytes 10..11 (0: the link's own). */
    uint16_t comm;
    /** COMM: the communicator's id (ncl_hal_ops.split's, not 0), its 4-byte payload. */
    uint32_t comm_id;
    /** ABORT: the rank where the failure started (the sender, or the rank whose ABORT or ERROR
     *  the sender relays); a rank, never NONE. 0 for other commands. */
    uint32_t origin;
} ncl_wire_msg;

/** What a receiver accepts. */
typedef struct ncl_wire_limits {
    uint32_t max_payload;             /**< larger payloads are NCL_WIRE_ERR_OVERSIZED */
    uint32_t nranks;                  /**< ranks must be < nranks; 0: not known yet (not checked) */
    uint32_t rank;                    /**< dst must be this rank (or NONE where allowed); NONE: not checked */
    uint8_t min_version, max_version; /**< accepted header versions */
} ncl_wire_limits;

/** Limits before HELLO: 1 MiB payloads, any rank, version 1. */
#define NCL_WIRE_LIMITS_INIT { 1u << 20, 0u, NCL_WIRE_RANK_NONE, NCL_WIRE_VERSION, NCL_WIRE_VERSION }

/** CRC-32C (Castagnoli, reflected, poly 0x82F63B78) continued from `crc` (start with 0).
 *  Table-driven, software only. crc32c("123456789") = 0xE3069283. */
uint32_t ncl_wire_crc32c(uint32_t crc, const void *data, size_t len);

/** Encodes `msg` into buf[0..cap). The message is validated by the decoder's field rules first
 *  (so nothing is sent that a peer would reject for its form). *out_len: bytes written, or on
 *  NCL_WIRE_ERR_NO_SPACE the bytes needed. Never writes beyond cap. */
ncl_wire_result ncl_wire_encode(const ncl_wire_msg *msg, void *buf, size_t cap, size_t *out_len);

/** Encodes only the 64-byte header of `msg` into buf[0..cap) (*out_len = 64): the form in which a
 *  message travels as two frames, the header and then msg->payload as it is (no copy of it), the
 *  CRC-32C covering both as in one frame. Only for the commands whose payload is the caller's bytes
 *  verbatim (WRITE, WRITE_REDUCE, LINK, LINK_ACK, SHM, the controller commands); others:
 *  NCL_WIRE_ERR_ARGUMENT. */
ncl_wire_result ncl_wire_encode_head(const ncl_wire_msg *msg, void *buf, size_t cap, size_t *out_len);

/** Decodes exactly one message from buf[0..len) (a whole ZeroMQ frame: no trailing bytes).
 *  Never trusts a field before checking it, never reads outside buf. On a rejection *msg is
 *  unspecified and `why` (if why_len > 0) holds a NUL-terminated reason with the offending
 *  values; on success why is "". */
ncl_wire_result ncl_wire_decode(const void *buf, size_t len, const ncl_wire_limits *limits,
                                ncl_wire_msg *msg, char *why, size_t why_len);

/** Decodes a message that came as two frames: head[0..head_len) must be the header alone and
 *  payload[0..payload_len) all of its payload (ncl_wire_encode_head's form). The same checks and
 *  verdicts as ncl_wire_decode on the two concatenated, and a command whose payload is not
 *  verbatim (HELLO, NOTIFY, ERROR, ...) is NCL_WIRE_ERR_LENGTH in this form. msg->payload points
 *  into `payload`. */
ncl_wire_result ncl_wire_decode_parts(const void *head, size_t head_len, const void *payload, size_t payload_len,
                                      const ncl_wire_limits *limits, ncl_wire_msg *msg, char *why, size_t why_len);

/** Negotiation: the highest common version, the smaller max_payload, the known capabilities and
 *  reduce ops both have, the rank count (if one side does not know it, the other's). Fails with
 *  NCL_WIRE_ERR_NEGOTIATION (no common version, rank counts differ) or NCL_WIRE_ERR_HELLO (an
 *  input is invalid). The result is what HELLO_ACK carries (min_version == max_version). */
ncl_wire_result ncl_wire_hello_agree(const ncl_wire_hello *mine, const ncl_wire_hello *theirs,
                                     ncl_wire_hello *agreed, char *why, size_t why_len);

/** Short stable name of a verdict ("checksum", "truncated_header", ...), "?" if out of range. */
const char *ncl_wire_result_name(ncl_wire_result r);
/** One sentence: what the verdict means and what to do. */
const char *ncl_wire_strerror(ncl_wire_result r);
/** Command name ("WRITE_REDUCE", ...), NULL for an undefined number. */
const char *ncl_wire_cmd_name(uint32_t command);

#ifdef __cplusplus
}
#endif
#endif
