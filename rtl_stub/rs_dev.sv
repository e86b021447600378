// rs_dev.sv — the whole DMA/notify block: register file, descriptor engine, link receiver and the shared memory port.
//
// Ports (rtl_stub/README.md, "The whole block" has the protocols and timing):
// - register bus: rs_regfile's, unchanged (one transfer per cycle, registered response);
// - memory port mem_*: valid/ready requests (64-bit byte address of a 4-byte word, 32-bit data,
//   byte strobes; writes get no response), in-order read responses (rs_memarb.sv);
// - link TX (tx_*) and RX (rx_*): valid/ready beat streams with the same fields (rs_link_pkg.sv),
//   plus an ack per transfer from the receiver back to the sender, so a TX port can be wired to
//   another block's RX port (and its rx_ack_* to our tx_ack_*) directly;
// - irq, and busy (STATUS.BUSY) for testbenches that want to skip register polls.
// mem_bytes is a strap: the size of the memory behind the port (a multiple of 4), which every
// range check uses.
module rs_dev
  import rs_regs_pkg::*;
#(
    localparam int unsigned AW = RS_ADDR_BITS
) (
    input  logic        clk,
    input  logic        rst_n,
    input  logic [63:0] mem_bytes,

    // register bus
    input  logic          req_valid,
    input  logic          req_write,
    input  logic [AW-1:0] req_addr,
    input  logic [31:0]   req_wdata,
    output logic          req_ready,
    output logic          rsp_valid,
    output logic [31:0]   rsp_rdata,
    output logic          rsp_err,

    // memory port
    output logic        mem_req_valid,
    input  logic        mem_req_ready,
    output logic        mem_req_we,
    output logic [63:0] mem_req_addr,
    output logic [31:0] mem_req_wdata,
    output logic [3:0]  mem_req_wstrb,
    input  logic        mem_rsp_valid,
    output logic        mem_rsp_ready,
    input  logic [31:0] mem_rsp_rdata,

    // link TX
    output logic        tx_valid,
    input  logic        tx_ready,
    output logic        tx_hdr,
    output logic        tx_last,
    output logic [1:0]  tx_kind,
    output logic [15:0] tx_peer,
    output logic [63:0] tx_addr,
    output logic [31:0] tx_bytes,
    output logic [3:0]  tx_dtype,
    output logic [2:0]  tx_op,
    output logic [7:0]  tx_notify,
    output logic [31:0] tx_data,
    input  logic        tx_ack_valid,
    input  logic [1:0]  tx_ack_status,

    // link RX
    input  logic        rx_valid,
    output logic        rx_ready,
    input  logic        rx_hdr,
    input  logic [1:0]  rx_kind,
    input  logic [63:0] rx_addr,
    input  logic [31:0] rx_bytes,
    input  logic [3:0]  rx_dtype,
    input  logic [2:0]  rx_op,
    input  logic [7:0]  rx_notify,
    input  logic [31:0] rx_data,
    output logic        rx_ack_valid,
    output logic [1:0]  rx_ack_status,

    output logic        irq,
    output logic        busy
);
  localparam logic [31:0] ENG_ERRS = RS_ERR_STATUS_BAD_DESC_MASK | RS_ERR_STATUS_ADDR_RANGE_MASK |
                                     RS_ERR_STATUS_LINK_MASK | RS_ERR_STATUS_BAD_RING_MASK;

  logic enable, soft_reset, doorbell, head_we, ev_desc_done;
  logic [63:0] ring_base, err_addr;
  logic [16:0] ring_size;
  logic [15:0] ring_tail, ring_head, head_in, err_desc;
  logic err_bad_desc, err_addr_range, err_link, err_bad_ring;
  logic link_inc_valid, eng_inc_valid, eng_dec_valid;
  logic [6:0] link_inc_idx, eng_inc_idx, eng_dec_idx, wait_idx;
  logic [31:0] eng_dec_amount;
  logic [RS_NOTIFY_COUNT-1:0][31:0] notify_cnt;

  rs_regfile u_regs (
      .clk, .rst_n, .req_valid, .req_write, .req_addr, .req_wdata, .req_ready, .rsp_valid,
      .rsp_rdata, .rsp_err, .enable, .soft_reset, .doorbell, .ring_base, .ring_size, .ring_tail,
      .ring_head, .head_we, .head_in, .busy, .ev_desc_done, .err_bad_desc, .err_addr_range,
      .err_link, .err_bad_ring, .err_desc, .err_addr, .link_inc_valid, .link_inc_idx,
      .eng_inc_valid, .eng_inc_idx, .eng_dec_valid, .eng_dec_idx, .eng_dec_amount, .notify_cnt,
      .irq);

  // The engine stops while an engine bit of ERR_STATUS is set (doorbells are ignored until
  // software clears them). rs_regfile does not export ERR_STATUS, so this shadows its engine bits
  // with the register file's own rules: set by the engine's error inputs (ignored during the
  // soft_reset pulse), cleared by W1C writes, reset with CTRL.SOFT_RESET at the write's edge.
  logic [31:0] eng_err_q, eng_err_set, eng_err_clr;
  logic sw_reset, halted;
  assign sw_reset = req_valid && req_write && req_addr == RS_REG_CTRL &&
                    (req_wdata & RS_CTRL_SOFT_RESET_MASK) != 0;
  assign eng_err_clr = (req_valid && req_write && req_addr == RS_REG_ERR_STATUS) ? req_wdata : 32'h0;
  assign eng_err_set = soft_reset ? 32'h0 :
                       (err_bad_desc ? RS_ERR_STATUS_BAD_DESC_MASK : 32'h0) |
                       (err_addr_range ? RS_ERR_STATUS_ADDR_RANGE_MASK : 32'h0) |
                       (err_link ? RS_ERR_STATUS_LINK_MASK : 32'h0) |
                       (err_bad_ring ? RS_ERR_STATUS_BAD_RING_MASK : 32'h0);
  always_ff @(posedge clk) begin
    if (!rst_n || sw_reset) eng_err_q <= 32'h0;
    else eng_err_q <= ((eng_err_q & ~eng_err_clr) | eng_err_set) & ENG_ERRS;
  end
  assign halted = eng_err_q != 0;

  logic [1:0] m_valid, m_ready, m_we, m_rsp_valid;
  logic [1:0][63:0] m_addr;
  logic [1:0][31:0] m_wdata;
  logic [1:0][3:0] m_wstrb;
  logic [31:0] m_rsp_rdata;

  rs_engine u_eng (
      .clk, .rst_n, .enable, .soft_reset, .doorbell, .halted, .ring_base, .ring_size, .ring_tail,
      .ring_head, .head_we, .head_in, .busy, .ev_desc_done, .err_bad_desc, .err_addr_range,
      .err_link, .err_bad_ring, .err_desc, .err_addr, .eng_inc_valid, .eng_inc_idx,
      .eng_dec_valid, .eng_dec_idx, .eng_dec_amount, .wait_idx, .wait_cnt(notify_cnt[wait_idx]),
      .mem_bytes, .m_valid(m_valid[0]), .m_ready(m_ready[0]), .m_we(m_we[0]),
      .m_addr(m_addr[0]), .m_wdata(m_wdata[0]), .m_wstrb(m_wstrb[0]),
      .m_rsp_valid(m_rsp_valid[0]), .m_rsp_rdata, .tx_valid, .tx_ready, .tx_hdr, .tx_last,
      .tx_kind, .tx_peer, .tx_addr, .tx_bytes, .tx_dtype, .tx_op, .tx_notify, .tx_data,
      .tx_ack_valid, .tx_ack_status);

  rs_rx u_rx (
      .clk, .rst_n, .mem_bytes, .rx_valid, .rx_ready, .rx_hdr, .rx_kind, .rx_addr, .rx_bytes,
      .rx_dtype, .rx_op, .rx_notify, .rx_data, .rx_ack_valid, .rx_ack_status,
      .m_valid(m_valid[1]), .m_ready(m_ready[1]), .m_we(m_we[1]), .m_addr(m_addr[1]),
      .m_wdata(m_wdata[1]), .m_wstrb(m_wstrb[1]), .m_rsp_valid(m_rsp_valid[1]), .m_rsp_rdata,
      .link_inc_valid, .link_inc_idx);

  rs_memarb u_arb (
      .clk, .rst_n, .m_valid, .m_ready, .m_we, .m_addr, .m_wdata, .m_wstrb, .m_rsp_valid,
      .m_rsp_rdata, .mem_req_valid, .mem_req_ready, .mem_req_we, .mem_req_addr, .mem_req_wdata,
      .mem_req_wstrb, .mem_rsp_valid, .mem_rsp_ready, .mem_rsp_rdata);
endmodule
