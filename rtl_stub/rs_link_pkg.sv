// rs_link_pkg.sv — the link port's transfer kinds and receive statuses, shared by the engine (TX), the receiver (RX) and testbenches.
//
// Beat format (rtl_stub/README.md, "Link ports"): one header beat (hdr = 1: kind, peer, addr,
// bytes, dtype, op, notify) then ceil(bytes / 4) data beats (hdr = 0: 32-bit data, the payload's
// bytes in order, byte 0 in bits 7:0, unused bytes of the last beat 0); `last` marks a
// transfer's final beat. The receiver answers every transfer with one ack (status) after it
// applied or refused it. The numbers are rs_ref_dev's RS_REF_LINK_* and RS_REF_RX_*.
/* verilator lint_off UNUSEDPARAM */
package rs_link_pkg;
  localparam logic [1:0] RS_LINK_WRITE = 2'd1;         // peer memory [addr, addr + bytes) <- data
  localparam logic [1:0] RS_LINK_WRITE_REDUCE = 2'd2;  // peer lane i <- lane i op data lane i
  localparam logic [1:0] RS_LINK_NOTIFY = 2'd3;        // peer NOTIFY_CNT[notify] += 1 (no data)

  localparam logic [1:0] RS_RX_OK = 2'd0;
  localparam logic [1:0] RS_RX_RANGE = 2'd1;  // [addr, addr + bytes) not inside the receiver's memory
  localparam logic [1:0] RS_RX_BAD = 2'd2;    // unknown kind, unsupported/misaligned reduce, notify index
endpackage
/* verilator lint_on UNUSEDPARAM */
