// rs_rx.sv — the link receiver: applies a peer's WRITE / WRITE_REDUCE to device memory and its NOTIFY to a counter, and acks each transfer.
//
// rs_ref_dev_link_rx() in hardware. Per transfer: accept the header (HDR), check it (CHECK: the
// same checks and statuses as the reference: BAD for an unknown kind, an unsupported or
// misaligned reduce or a notify index past the counters, then RANGE for [addr, addr + bytes)
// outside memory), take the data beats (DATA: applied, or drained when refused) and answer one
// ack with the status (ACK). The ack comes after the last write was accepted by the memory port,
// so the sender's descriptor completes only once its effect is in memory. Independent of CTRL
// and of soft reset (the link stream must stay in step whatever the engine does). rx_ready and
// the ack depend only on flops, so two blocks' ports can be wired to each other directly.
// Rates: WRITE 4 bytes per cycle, WRITE_REDUCE 4 bytes per 2 cycles (a read and a write per lane).
module rs_rx
  import rs_regs_pkg::*;
  import rs_link_pkg::*;
(
    input  logic        clk,
    input  logic        rst_n,
    input  logic [63:0] mem_bytes,

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

    output logic        m_valid,
    input  logic        m_ready,
    output logic        m_we,
    output logic [63:0] m_addr,
    output logic [31:0] m_wdata,
    output logic [3:0]  m_wstrb,
    input  logic        m_rsp_valid,
    input  logic [31:0] m_rsp_rdata,

    output logic        link_inc_valid,
    output logic [6:0]  link_inc_idx
);
  typedef enum logic [1:0] {R_HDR, R_CHECK, R_DATA, R_ACK} state_t;
  state_t state_q;
  logic [1:0] kind_q, st_q;
  logic [63:0] addr_q, wr_addr_q, rd_addr_q;  // reads of reduce lanes run ahead of their writes
  logic [31:0] bytes_q, brem_q, wrem_q, beats_q;
  logic [3:0] dtype_q;
  logic [2:0] op_q;
  logic [7:0] notify_q;
  logic w_first_q, drop_q;
  logic [2:0] out_q, rd_pend_q;

  // ---- CHECK (rs_ref_dev_link_rx's order: BAD, then RANGE) -----------------------------------
  logic pair_ok, in_range;
  logic [1:0] status;
  assign pair_ok = (dtype_q == rs_reduce_pkg::RS_DT_INT32 || dtype_q == rs_reduce_pkg::RS_DT_UINT32 ||
                    dtype_q == rs_reduce_pkg::RS_DT_FP32) &&
                   (op_q == rs_reduce_pkg::RS_OP_SUM || op_q == rs_reduce_pkg::RS_OP_MAX ||
                    op_q == rs_reduce_pkg::RS_OP_MIN);
  assign in_range = addr_q <= mem_bytes && 64'(bytes_q) <= mem_bytes - addr_q;
  always_comb begin
    unique case (kind_q)
      RS_LINK_WRITE: status = in_range ? RS_RX_OK : RS_RX_RANGE;
      RS_LINK_WRITE_REDUCE:
        status = (!pair_ok || addr_q[1:0] != 0 || bytes_q[1:0] != 0) ? RS_RX_BAD :
                 in_range ? RS_RX_OK : RS_RX_RANGE;
      RS_LINK_NOTIFY: status = 32'(notify_q) < RS_NOTIFY_COUNT ? RS_RX_OK : RS_RX_BAD;
      default: status = RS_RX_BAD;
    endcase
  end
  assign link_inc_valid = state_q == R_CHECK && kind_q == RS_LINK_NOTIFY && status == RS_RX_OK;
  assign link_inc_idx = notify_q[6:0];

  // ---- DATA -------------------------------------------------------------------------------------
  logic is_red, plain, beat;
  assign is_red = kind_q == RS_LINK_WRITE_REDUCE;
  assign plain = state_q == R_DATA && !drop_q && !is_red;

  logic [3:0] bb_count;
  logic [31:0] bb_data;
  logic [2:0] bf_count, rf_count;
  logic [31:0] bf_dout, rf_dout;
  logic lane_in_ready, lane_out_valid, lane_in;
  logic [31:0] lane_y;

  always_comb begin
    rx_ready = 1'b0;
    unique case (state_q)
      R_HDR: rx_ready = 1'b1;
      R_DATA: rx_ready = beats_q != 0 && (drop_q || (is_red ? bf_count != 3'd4 : bb_count <= 4'd4));
      default: rx_ready = 1'b0;
    endcase
  end
  assign beat = state_q == R_DATA && rx_valid && rx_ready;

  // plain writes: beat -> realignment buffer -> byte-strobed words at the destination
  logic [2:0] b_n, w_need, w_room;
  logic [1:0] w_off;
  assign b_n = brem_q < 32'd4 ? 3'(brem_q) : 3'd4;
  assign w_off = w_first_q ? addr_q[1:0] : 2'd0;
  assign w_room = 3'd4 - {1'b0, w_off};
  assign w_need = wrem_q < 32'(w_room) ? 3'(wrem_q) : w_room;

  logic want_w, want_r, grant_w, grant_r;
  assign want_w = state_q == R_DATA && !drop_q &&
                  (is_red ? lane_out_valid : (wrem_q != 0 && {1'b0, bb_count} >= {2'b0, w_need}));
  assign want_r = state_q == R_DATA && !drop_q && is_red && rd_pend_q != 0 &&
                  4'(out_q) + 4'(rf_count) < 4'd4;
  assign m_valid = want_w || want_r;
  assign m_we = want_w;
  assign m_addr = want_w ? wr_addr_q : rd_addr_q;
  assign grant_w = want_w && m_ready;
  assign grant_r = !want_w && want_r && m_ready;
  assign m_wdata = is_red ? lane_y : bb_data << {w_off, 3'b000};
  assign m_wstrb = is_red ? 4'hF : 4'(((5'h1 << w_need) - 5'h1) << w_off);

  rs_bytebuf u_bb (
      .clk, .rst_n, .clear(state_q == R_HDR), .push(beat && plain), .push_data(rx_data),
      .push_n(b_n), .pop(grant_w && !is_red), .pop_n(w_need), .data(bb_data), .count(bb_count));

  // reduces: beats wait in bf, the destination words they combine with in rf
  assign lane_in = state_q == R_DATA && is_red && bf_count != 0 && rf_count != 0;
  rs_fifo #(.W(32), .DEPTH(4)) u_bf (
      .clk, .rst_n, .clear(state_q == R_HDR), .push(beat && !drop_q && is_red), .din(rx_data),
      .pop(lane_in && lane_in_ready), .dout(bf_dout), .count(bf_count));
  rs_fifo #(.W(32), .DEPTH(4)) u_rf (
      .clk, .rst_n, .clear(1'b0), .push(m_rsp_valid), .din(m_rsp_rdata),
      .pop(lane_in && lane_in_ready), .dout(rf_dout), .count(rf_count));

  /* verilator lint_off UNUSEDSIGNAL */
  logic lane_unsupported;  // never: CHECK refuses unsupported pairs
  logic lane_tag;
  /* verilator lint_on UNUSEDSIGNAL */
  rs_reduce #(.TAG_W(1)) u_lane (
      .clk, .rst_n, .in_valid(lane_in), .in_ready(lane_in_ready), .dtype(dtype_q), .op(op_q),
      .a(rf_dout), .b(bf_dout), .in_tag(1'b0), .out_valid(lane_out_valid),
      .out_ready(is_red && grant_w), .y(lane_y), .unsupported(lane_unsupported), .out_tag(lane_tag));

  // ---------------------------------------------------------------------------------------------
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      state_q <= R_HDR;
      out_q <= '0;
      rd_pend_q <= '0;
    end else begin
      out_q <= out_q + 3'(grant_r) - 3'(m_rsp_valid);
      unique case (state_q)
        R_HDR: begin
          if (rx_valid && rx_hdr) begin
            kind_q <= rx_kind;
            addr_q <= rx_addr;
            bytes_q <= rx_bytes;
            dtype_q <= rx_dtype;
            op_q <= rx_op;
            notify_q <= rx_notify;
            state_q <= R_CHECK;
          end  // a data beat with no header before it is dropped
        end
        R_CHECK: begin
          st_q <= status;
          drop_q <= status != RS_RX_OK;
          brem_q <= bytes_q;
          wrem_q <= bytes_q;
          beats_q <= 32'((33'(bytes_q) + 33'd3) >> 2);
          wr_addr_q <= {addr_q[63:2], 2'b00};
          rd_addr_q <= {addr_q[63:2], 2'b00};
          w_first_q <= 1'b1;
          rd_pend_q <= '0;
          state_q <= (kind_q == RS_LINK_NOTIFY || bytes_q == 0) ? R_ACK : R_DATA;
        end
        R_DATA: begin
          if (beat) begin
            beats_q <= beats_q - 32'd1;
            brem_q <= brem_q - 32'(b_n);
          end
          rd_pend_q <= rd_pend_q + 3'(beat && !drop_q && is_red) - 3'(grant_r);
          if (grant_r) rd_addr_q <= rd_addr_q + 64'd4;
          if (grant_w) begin
            wr_addr_q <= wr_addr_q + 64'd4;
            wrem_q <= wrem_q - (is_red ? 32'd4 : 32'(w_need));
            w_first_q <= 1'b0;
          end
          if (drop_q ? (beat && beats_q == 32'd1) : (wrem_q == 0)) state_q <= R_ACK;
        end
        R_ACK: state_q <= R_HDR;
        default: state_q <= R_HDR;
      endcase
    end
  end

  assign rx_ack_valid = state_q == R_ACK;
  assign rx_ack_status = st_q;
endmodule
