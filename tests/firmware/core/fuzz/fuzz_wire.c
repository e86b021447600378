/* fuzz_wire.c — libFuzzer target for the wire decoder: no crash, a named verdict, canonical re-encoding. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <ncl/ncl_wire.h>

static void check(int cond)
{
    if (!cond)
        __builtin_trap();
}

/* Makes the CRC of a frame good again, so mutations reach the field checks behind it. */
static void reseal(uint8_t *b, size_t len)
{
    uint32_t c = ncl_wire_crc32c(ncl_wire_crc32c(0, b, 60), b + 64, len - 64);
    for (int i = 0; i < 4; i++)
        b[60 + i] = (uint8_t)(c >> (8 * i));
}

/* An input whose first byte has bit 7 set starts with a control byte: bits 0..2 pick the
 * receiver's max_payload (16 << n), bits 4..6 its rank count (and it is the last rank), bit 3
 * reseals the CRC. The rest is the frame. Whatever is accepted must re-encode to the same bytes. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t again[(1u << 16) + 128], copy[(1u << 16) + 128];
    ncl_wire_limits lim = NCL_WIRE_LIMITS_INIT;
    const uint8_t *frame = data;
    size_t len = size;
    if (size > 0 && (data[0] & 0x80u)) {
        lim.max_payload = 16u << (data[0] & 0x07u);
        lim.nranks = (data[0] >> 4) & 0x07u;
        lim.rank = lim.nranks ? lim.nranks - 1 : NCL_WIRE_RANK_NONE;
        frame = data + 1;
        len = size - 1;
        if ((data[0] & 0x08u) && len >= 64 && len <= sizeof copy) {
            memcpy(copy, frame, len);
            reseal(copy, len);
            frame = copy;
        }
    }
    ncl_wire_msg msg;
    char why[128];
    ncl_wire_result r = ncl_wire_decode(frame, len, &lim, &msg, why, sizeof why);
    check((unsigned)r < NCL_WIRE_RESULT_COUNT);
    check(strlen(why) < sizeof why);
    /* The same bytes as two frames (the header, then the rest): the same verdict, but that a
     * command with a payload of its own is refused in this form (and a frame too short to split). */
    if (len >= NCL_WIRE_HDR_LEN) {
        ncl_wire_msg two;
        char why2[128];
        ncl_wire_result r2 = ncl_wire_decode_parts(frame, NCL_WIRE_HDR_LEN, frame + NCL_WIRE_HDR_LEN,
                                                   len - NCL_WIRE_HDR_LEN, &lim, &two, why2, sizeof why2);
        check((unsigned)r2 < NCL_WIRE_RESULT_COUNT);
        check(strlen(why2) < sizeof why2);
        int framing = r == NCL_WIRE_ERR_TRUNCATED_HEADER || r == NCL_WIRE_ERR_TRUNCATED_PAYLOAD ||
                      r == NCL_WIRE_ERR_TRAILING_BYTES || r == NCL_WIRE_ERR_OVERSIZED || r == NCL_WIRE_ERR_BAD_MAGIC ||
                      r == NCL_WIRE_ERR_VERSION || r == NCL_WIRE_ERR_HEADER_LENGTH || r == NCL_WIRE_ERR_CHECKSUM ||
                      r == NCL_WIRE_ERR_UNKNOWN_COMMAND;
        check(r2 == r || (r2 == NCL_WIRE_ERR_LENGTH && !framing));
        if (r2 == NCL_WIRE_OK) {
            uint8_t head[NCL_WIRE_HDR_LEN];
            size_t hn = 0;
            check(msg.payload == two.payload && memcmp(&msg, &two, sizeof msg) == 0);
            check(ncl_wire_encode_head(&two, head, sizeof head, &hn) == NCL_WIRE_OK && hn == NCL_WIRE_HDR_LEN &&
                  memcmp(head, frame, NCL_WIRE_HDR_LEN) == 0);
        }
    }
    if (r != NCL_WIRE_OK) {
        check(why[0] != '\0');
        return 0;
    }
    size_t n = 0;
    if (len <= sizeof again) {
        check(ncl_wire_encode(&msg, again, sizeof again, &n) == NCL_WIRE_OK);
        check(n == len && memcmp(again, frame, len) == 0);
    }
    if (msg.command == NCL_WIRE_HELLO) {
        ncl_wire_hello mine = msg.hello, agreed;
        check(ncl_wire_hello_agree(&mine, &msg.hello, &agreed, why, sizeof why) == NCL_WIRE_OK);
        check(agreed.min_version == agreed.max_version && agreed.max_version == msg.hello.max_version);
    }
    return 0;
}
