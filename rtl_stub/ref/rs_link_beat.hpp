// rs_link_beat.hpp — one beat of a link transfer onto rs_dev's RX port (rs_link_pkg.sv's beat format), for every C++ driver of the block: the RTL tests' harness, the co-simulation, the emulated boards.
#pragma once

#include <cstddef>
#include <cstdint>

#include "rs_ref_dev.h"

/* Data beats after the header: a notify has none, a write or write-reduce one per 32-bit word. */
inline uint32_t rs_link_data_beats(unsigned kind, uint32_t bytes)
{
    return kind == RS_REF_LINK_NOTIFY ? 0 : (bytes + 3) / 4;
}

/* Drives beat `beat` (0: the header) of a transfer on the RX port of `m` (the verilated model, or
 * whatever holds its rx_* inputs and takes assignments). `data` holds the `have` payload bytes
 * known so far, byte 0 in bits 7:0 of the first data beat; bytes past `have` go out as 0.
 * Returns whether this was the transfer's last beat. */
template <class Port>
bool rs_link_rx_beat(Port &m, unsigned kind, uint64_t addr, uint32_t bytes, unsigned dtype, unsigned op,
                     unsigned notify, const uint8_t *data, size_t have, uint32_t beat)
{
    m.rx_valid = 1;
    m.rx_hdr = beat == 0;
    m.rx_kind = kind;
    m.rx_addr = addr;
    m.rx_bytes = bytes;
    m.rx_dtype = dtype;
    m.rx_op = op;
    m.rx_notify = notify;
    uint32_t v = 0;
    if (beat > 0)
        for (unsigned k = 0; k < 4; k++) {
            size_t at = (size_t)(beat - 1) * 4 + k;
            if (at < have)
                v |= (uint32_t)data[at] << (8 * k);
        }
    m.rx_data = v;
    return beat == rs_link_data_beats(kind, bytes);
}
