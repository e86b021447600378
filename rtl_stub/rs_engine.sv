// rs_engine.sv — the descriptor engine: fetches ring descriptors, checks them strictly, moves data (memory port, link TX, reduce lane) and reports to rs_regfile.
//
// Behaviour is rtl_stub/ref/rs_ref_dev.c's rs_ref_dev_step(), descriptor by descriptor (the
// equivalence test tests/rtl_stub/test_rtl_engine.cpp holds them together); REGISTERS.md gives the
// semantics. One descriptor at a time (so FENCE holds trivially): IDLE -> FETCH (8 word reads)
// -> DECODE (every check before anything moves) -> MOVE / TXHDR+TXDATA+ACK / WAIT -> DONE or ERR.
// Outputs to the register file are Moore outputs of DONE/ERR (no extra latency, so RING_HEAD and
// ERR_STATUS are current the cycle the engine is back in IDLE).
//
// Data path: reads run ahead of writes through a 4-entry response FIFO (reads are issued only
// with room reserved for their responses), then an 8-byte realignment buffer, so LOCAL_COPY
// handles any source/destination alignment and WRITE packs the payload into link beats; the
// reduce opcodes (4-byte aligned) pair a source and a destination word into the reduce lane.
// The memory port takes one request per cycle: LOCAL_COPY moves 4 bytes per 2 cycles, WRITE
// 4 bytes per cycle, LOCAL_REDUCE 4 bytes per 3 cycles (two reads and a write per lane).
//
// Soft reset drops everything, except that a link transfer whose header already went out is
// finished (beats and ack, without touching registers) so the link stream stays in step;
// responses to reads issued before the reset are counted and discarded.
module rs_engine
  import rs_regs_pkg::*;
  import rs_link_pkg::*;
(
    input logic clk,
    input logic rst_n,

    // ---- rs_regfile side
    input  logic        enable,
    input  logic        soft_reset,
    input  logic        doorbell,
    input  logic        halted,        // an engine bit of ERR_STATUS is set (rs_dev shadows it)
    input  logic [63:0] ring_base,
    input  logic [16:0] ring_size,
    input  logic [15:0] ring_tail,
    input  logic [15:0] ring_head,
    output logic        head_we,
    output logic [15:0] head_in,
    output logic        busy,
    output logic        ev_desc_done,
    output logic        err_bad_desc,
    output logic        err_addr_range,
    output logic        err_link,
    output logic        err_bad_ring,
    output logic [15:0] err_desc,
    output logic [63:0] err_addr,
    output logic        eng_inc_valid,
    output logic [6:0]  eng_inc_idx,
    output logic        eng_dec_valid,
    output logic [6:0]  eng_dec_idx,
    output logic [31:0] eng_dec_amount,
    output logic [6:0]  wait_idx,      // the counter a NOTIFY_WAIT watches ...
    input  logic [31:0] wait_cnt,      // ... and its value
    input  logic [63:0] mem_bytes,     // device memory size (a multiple of 4)

    // ---- memory port (through rs_memarb; protocol there)
    output logic        m_valid,
    input  logic        m_ready,
    output logic        m_we,
    output logic [63:0] m_addr,
    output logic [31:0] m_wdata,
    output logic [3:0]  m_wstrb,
    input  logic        m_rsp_valid,
    input  logic [31:0] m_rsp_rdata,

    // ---- link TX (rs_link_pkg): valid and every field depend only on flops
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
    input  logic        tx_ack_valid,  // the receiver's answer to our transfer (one per transfer)
    input  logic [1:0]  tx_ack_status
);
  typedef enum logic [3:0] {
    S_IDLE, S_FETCH, S_DECODE, S_MOVE, S_TXHDR, S_TXDATA, S_ACK, S_WAIT, S_DONE, S_ERR
  } state_t;

  state_t state_q;
  logic [15:0] run_tail_q;  // the RING_TAIL the last accepted doorbell saw
  logic [RS_DESC_WORDS-1:0][31:0] w_q;
  logic [63:0] daddr_q;
  logic [3:0] f_iss_q, f_got_q;
  logic [4:0] out_q, stale_q;  // reads outstanding (all), of which stale (before a soft reset)
  logic [2:0] err_q;           // {link, addr_range, bad_desc} of S_ERR (BAD_RING comes from the doorbell)
  logic [63:0] err_addr_q;
  logic abandon_q;             // soft reset during a link transfer: finish it silently
  logic ack_v_q;
  logic [1:0] ack_st_q;

  // mover
  logic [63:0] rd_addr_q, rd_daddr_q, wr_addr_q;
  logic [31:0] rd_left_q, crem_q, wrem_q;
  logic rd_ph_q, c_first_q, w_first_q, hold_v_q;
  logic [31:0] hold_q;

  // ---- descriptor fields ----------------------------------------------------------------------
  logic [7:0] opc;
  logic [3:0] dtype;
  logic [2:0] op;
  logic f_irq, f_local;
  logic [15:0] peer, count;
  logic [7:0] nidx;
  logic [63:0] src, dst;
  logic [31:0] len;
  assign opc = 8'((w_q[RS_DESC_OPCODE_WORD] & RS_DESC_OPCODE_MASK) >> RS_DESC_OPCODE_LSB);
  assign dtype = 4'((w_q[RS_DESC_DTYPE_WORD] & RS_DESC_DTYPE_MASK) >> RS_DESC_DTYPE_LSB);
  assign op = 3'((w_q[RS_DESC_OP_WORD] & RS_DESC_OP_MASK) >> RS_DESC_OP_LSB);
  assign f_irq = (w_q[RS_DESC_IRQ_WORD] & RS_DESC_IRQ_MASK) != 0;
  assign f_local = (w_q[RS_DESC_LOCAL_WORD] & RS_DESC_LOCAL_MASK) != 0;
  assign peer = 16'((w_q[RS_DESC_PEER_WORD] & RS_DESC_PEER_MASK) >> RS_DESC_PEER_LSB);
  assign nidx = 8'((w_q[RS_DESC_NOTIFY_WORD] & RS_DESC_NOTIFY_MASK) >> RS_DESC_NOTIFY_LSB);
  assign count = 16'((w_q[RS_DESC_COUNT_WORD] & RS_DESC_COUNT_MASK) >> RS_DESC_COUNT_LSB);
  assign src = {w_q[RS_DESC_SRC_HI_WORD], w_q[RS_DESC_SRC_LO_WORD]};
  assign dst = {w_q[RS_DESC_DST_HI_WORD], w_q[RS_DESC_DST_LO_WORD]};
  assign len = w_q[RS_DESC_LEN_WORD];

  logic is_wr, is_wrr, is_lcp, is_lrd, is_rec, is_wait, is_nop;
  assign is_wr = opc == 8'(RS_OPC_WRITE);
  assign is_wrr = opc == 8'(RS_OPC_WRITE_REDUCE);
  assign is_lcp = opc == 8'(RS_OPC_LOCAL_COPY);
  assign is_lrd = opc == 8'(RS_OPC_LOCAL_REDUCE);
  assign is_rec = opc == 8'(RS_OPC_NOTIFY_RECORD);
  assign is_wait = opc == 8'(RS_OPC_NOTIFY_WAIT);
  assign is_nop = opc == 8'(RS_OPC_NOP);
  logic is_reduce, is_local, is_data, is_tx;
  assign is_reduce = is_wrr || is_lrd;
  assign is_local = is_lcp || is_lrd;
  assign is_data = is_wr || is_wrr || is_local;
  assign is_tx = is_wr || is_wrr;

  // [a, a + l) inside memory without wrapping at 2^64 (a zero length still needs a <= size).
  function automatic logic in_mem(input logic [63:0] a, input logic [63:0] l, input logic [63:0] m);
    return a <= m && l <= m - a;
  endfunction

  // ---- DECODE checks (REGISTERS.md order: BAD_DESC, then ADDR_RANGE of SRC, then a local DST) ---
  logic [RS_DESC_WORDS-1:0][31:0] allowed;
  logic fields_bad, pair_ok, reduce_bad, overlap_bad, notify_bad, lrec_bad, bad_desc;
  logic src_bad, dst_bad;
  always_comb begin
    allowed = '0;
    allowed[0] = RS_DESC_OPCODE_MASK | RS_DESC_IRQ_MASK | RS_DESC_FENCE_MASK;
    allowed[RS_DESC_TAG_WORD] = allowed[RS_DESC_TAG_WORD] | RS_DESC_TAG_MASK;
    if (is_reduce) allowed[RS_DESC_DTYPE_WORD] = allowed[RS_DESC_DTYPE_WORD] | RS_DESC_DTYPE_MASK | RS_DESC_OP_MASK;
    if (is_tx || is_rec) allowed[RS_DESC_PEER_WORD] = allowed[RS_DESC_PEER_WORD] | RS_DESC_PEER_MASK;
    if (is_data) begin
      allowed[RS_DESC_SRC_LO_WORD] = RS_DESC_SRC_LO_MASK;
      allowed[RS_DESC_SRC_HI_WORD] = RS_DESC_SRC_HI_MASK;
      allowed[RS_DESC_DST_LO_WORD] = RS_DESC_DST_LO_MASK;
      allowed[RS_DESC_DST_HI_WORD] = RS_DESC_DST_HI_MASK;
      allowed[RS_DESC_LEN_WORD] = RS_DESC_LEN_MASK;
    end
    if (is_rec || is_wait) allowed[RS_DESC_NOTIFY_WORD] = allowed[RS_DESC_NOTIFY_WORD] | RS_DESC_NOTIFY_MASK;
    if (is_rec) allowed[RS_DESC_LOCAL_WORD] = allowed[RS_DESC_LOCAL_WORD] | RS_DESC_LOCAL_MASK;
    if (is_wait) allowed[RS_DESC_COUNT_WORD] = allowed[RS_DESC_COUNT_WORD] | RS_DESC_COUNT_MASK;
    fields_bad = 1'b0;
    for (int i = 0; i < int'(RS_DESC_WORDS); i++) fields_bad = fields_bad | ((w_q[i] & ~allowed[i]) != 0);
  end
  assign pair_ok = (dtype == rs_reduce_pkg::RS_DT_INT32 || dtype == rs_reduce_pkg::RS_DT_UINT32 ||
                    dtype == rs_reduce_pkg::RS_DT_FP32) &&
                   (op == rs_reduce_pkg::RS_OP_SUM || op == rs_reduce_pkg::RS_OP_MAX ||
                    op == rs_reduce_pkg::RS_OP_MIN);
  assign reduce_bad = is_reduce && (!pair_ok || src[1:0] != 0 || dst[1:0] != 0 || len[1:0] != 0);
  // Identical ranges are fine (lane i only touches lane i); partial overlap would depend on the
  // order bytes move in.
  assign overlap_bad = is_local && src != dst && len != 0 &&
                       (src < dst ? dst - src < 64'(len) : src - dst < 64'(len));
  assign notify_bad = (is_rec || is_wait) && 32'(nidx) >= RS_NOTIFY_COUNT;
  assign lrec_bad = is_rec && f_local && peer != 0;
  assign bad_desc = !(is_data || is_rec || is_wait || is_nop) || fields_bad || reduce_bad ||
                    overlap_bad || notify_bad || lrec_bad;
  assign src_bad = is_data && !in_mem(src, 64'(len), mem_bytes);
  assign dst_bad = is_local && !in_mem(dst, 64'(len), mem_bytes);

  // ---- the slot at HEAD -----------------------------------------------------------------------
  // In DONE the next slot is head_in (RING_HEAD updates at this edge): fetching it right away
  // saves the IDLE cycle between back-to-back descriptors.
  logic [63:0] slot_addr;
  logic [15:0] slot_head;
  logic slot_bad, can_start, can_chain, ring_bad;
  assign slot_head = state_q == S_DONE ? head_in : ring_head;
  assign slot_addr = ring_base + {43'h0, slot_head, 5'h0};
  assign slot_bad = slot_addr < ring_base || !in_mem(slot_addr, 64'(RS_DESC_BYTES), mem_bytes);
  assign can_start = enable && !halted && ring_head != run_tail_q;
  assign can_chain = enable && !halted && head_in != run_tail_q && !slot_bad && !abandon_q;
  assign ring_bad = ring_size < 17'd2 || 32'(ring_size) > (32'd1 << RS_RING_MAX_LOG2) ||
                    {1'b0, ring_tail} >= ring_size || {1'b0, ring_head} >= ring_size;

  // ---- memory requests: writes first (they drain the buffers), then reads ---------------------
  logic [3:0] bb_count;
  logic [31:0] bb_data;
  logic [2:0] rf_count;
  logic [31:0] rf_dout;
  logic lane_in_ready, lane_out_valid;
  logic [31:0] lane_y;

  logic in_move, mv_reading, credit;
  logic [1:0] w_off;
  logic [2:0] w_need, t_need, w_room;
  logic want_w, want_r, want_f, grant_w, grant_r, grant_f;
  logic [63:0] r_addr;
  assign in_move = state_q == S_MOVE;
  assign mv_reading = (state_q == S_MOVE || state_q == S_TXHDR || state_q == S_TXDATA) && rd_left_q != 0;
  assign credit = 6'(out_q) + 6'(rf_count) < 6'd4;
  assign w_off = w_first_q ? dst[1:0] : 2'd0;
  assign w_room = 3'd4 - {1'b0, w_off};
  assign w_need = wrem_q < 32'(w_room) ? 3'(wrem_q) : w_room;
  assign t_need = wrem_q < 32'd4 ? 3'(wrem_q) : 3'd4;
  assign want_w = in_move && (is_lrd ? lane_out_valid : (wrem_q != 0 && {1'b0, bb_count} >= {2'b0, w_need}));
  assign want_f = state_q == S_FETCH && f_iss_q != 4'(RS_DESC_WORDS);
  assign want_r = mv_reading && credit;
  assign m_valid = want_w || want_f || want_r;
  assign m_we = want_w;
  assign grant_w = want_w && m_ready;
  assign grant_f = !want_w && want_f && m_ready;
  assign grant_r = !want_w && !want_f && want_r && m_ready;
  assign r_addr = (is_lrd && rd_ph_q) ? rd_daddr_q : rd_addr_q;
  always_comb begin
    if (want_w) m_addr = wr_addr_q;
    else if (want_f) m_addr = daddr_q + {58'h0, f_iss_q, 2'b00};
    else m_addr = r_addr;
  end
  assign m_wdata = is_lrd ? lane_y : bb_data << {w_off, 3'b000};
  assign m_wstrb = is_lrd ? 4'hF : 4'(((5'h1 << w_need) - 5'h1) << w_off);

  // ---- responses ---------------------------------------------------------------------------------
  // A soft reset is deferred (abandon) while our transfer is on the link past its header.
  logic keep_xfer;
  assign keep_xfer = state_q == S_TXDATA || state_q == S_ACK;

  logic rsp_live, rf_push, rf_pop;
  assign rsp_live = m_rsp_valid && stale_q == 0;
  assign rf_push = rsp_live && state_q != S_FETCH;

  // consumer for copies and link payloads: response word -> realignment buffer
  logic [1:0] c_off;
  logic [2:0] c_n, c_room;
  logic c_go, bb_pop;
  logic [2:0] bb_pop_n;
  assign c_off = c_first_q ? src[1:0] : 2'd0;
  assign c_room = 3'd4 - {1'b0, c_off};
  assign c_n = crem_q < 32'(c_room) ? 3'(crem_q) : c_room;
  assign c_go = !is_lrd && rf_count != 0 && bb_count <= 4'd4 && crem_q != 0;

  // consumer for LOCAL_REDUCE: a source word waits in hold_q for its destination word
  logic lane_in, hold_take;
  assign hold_take = is_lrd && in_move && !hold_v_q && rf_count != 0;
  assign lane_in = is_lrd && in_move && hold_v_q && rf_count != 0;
  assign rf_pop = c_go || hold_take || (lane_in && lane_in_ready);

  logic tx_data_go;
  assign tx_data_go = state_q == S_TXDATA && {1'b0, bb_count} >= {2'b0, t_need} && tx_ready;
  assign bb_pop = (grant_w && !is_lrd) || tx_data_go;
  assign bb_pop_n = state_q == S_TXDATA ? t_need : w_need;

  rs_fifo #(.W(32), .DEPTH(4)) u_rf (
      .clk, .rst_n, .clear(soft_reset && !keep_xfer), .push(rf_push), .din(m_rsp_rdata),
      .pop(rf_pop), .dout(rf_dout), .count(rf_count));

  rs_bytebuf u_bb (
      .clk, .rst_n, .clear(soft_reset && !keep_xfer), .push(c_go),
      .push_data(rf_dout >> {c_off, 3'b000}), .push_n(c_n), .pop(bb_pop), .pop_n(bb_pop_n),
      .data(bb_data), .count(bb_count));

  /* verilator lint_off UNUSEDSIGNAL */
  logic lane_unsupported;  // never: DECODE admits only supported pairs
  logic lane_tag;
  /* verilator lint_on UNUSEDSIGNAL */
  rs_reduce #(.TAG_W(1)) u_lane (
      .clk, .rst_n(rst_n && !(soft_reset && !keep_xfer)), .in_valid(lane_in),
      .in_ready(lane_in_ready), .dtype, .op, .a(rf_dout), .b(hold_q), .in_tag(1'b0),
      .out_valid(lane_out_valid), .out_ready(is_lrd && grant_w), .y(lane_y),
      .unsupported(lane_unsupported), .out_tag(lane_tag));


  // ---- next state --------------------------------------------------------------------------------
  logic ack_now;
  logic [1:0] ack_st;
  assign ack_now = ack_v_q || tx_ack_valid;
  assign ack_st = ack_v_q ? ack_st_q : tx_ack_status;

  logic [31:0] nwords;
  assign nwords = 32'((34'(src[1:0]) + 34'(len) + 34'd3) >> 2);

  logic [4:0] out_n;
  assign out_n = out_q + 5'(grant_f || grant_r) - 5'(m_rsp_valid);

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      state_q <= S_IDLE;
      run_tail_q <= '0;
      out_q <= '0;
      stale_q <= '0;
      abandon_q <= 1'b0;
      ack_v_q <= 1'b0;
      hold_v_q <= 1'b0;
      f_iss_q <= '0;
      f_got_q <= '0;
      rd_left_q <= '0;
      wrem_q <= '0;
      crem_q <= '0;
    end else begin
      out_q <= out_n;
      if (m_rsp_valid && stale_q != 0) stale_q <= stale_q - 5'd1;

      // doorbell: validate the ring, then run up to the tail it saw
      if (doorbell && !halted && !ring_bad) run_tail_q <= ring_tail;
      if (tx_ack_valid) begin
        ack_v_q <= 1'b1;
        ack_st_q <= tx_ack_status;
      end

      // fetch
      if (grant_f) f_iss_q <= f_iss_q + 4'd1;
      if (rsp_live && state_q == S_FETCH) begin
        w_q[f_got_q[2:0]] <= m_rsp_rdata;
        f_got_q <= f_got_q + 4'd1;
      end

      // mover: reads
      if (grant_r) begin
        if (is_lrd && !rd_ph_q) begin
          rd_ph_q <= 1'b1;
        end else begin
          rd_ph_q <= 1'b0;
          rd_left_q <= rd_left_q - 32'd1;
          rd_addr_q <= rd_addr_q + 64'd4;
          rd_daddr_q <= rd_daddr_q + 64'd4;
        end
      end
      if (c_go) begin
        crem_q <= crem_q - 32'(c_n);
        c_first_q <= 1'b0;
      end
      if (hold_take) begin
        hold_q <= rf_dout;
        hold_v_q <= 1'b1;
      end else if (lane_in && lane_in_ready) begin
        hold_v_q <= 1'b0;
      end
      // mover: writes and link beats
      if (grant_w) begin
        wr_addr_q <= wr_addr_q + 64'd4;
        wrem_q <= wrem_q - (is_lrd ? 32'd4 : 32'(w_need));
        w_first_q <= 1'b0;
      end
      if (tx_data_go) wrem_q <= wrem_q - 32'(t_need);

      unique case (state_q)
        S_IDLE: begin
          if (can_start) begin
            if (slot_bad) begin
              err_q <= 3'b010;
              err_addr_q <= slot_addr;
              state_q <= S_ERR;
            end else begin
              daddr_q <= slot_addr;
              f_iss_q <= '0;
              f_got_q <= '0;
              state_q <= S_FETCH;
            end
          end
        end
        S_FETCH: if (f_got_q == 4'(RS_DESC_WORDS)) state_q <= S_DECODE;
        S_DECODE: begin
          // set up every mover counter; only the ones the opcode uses matter
          rd_addr_q <= {src[63:2], 2'b00};
          rd_daddr_q <= {dst[63:2], 2'b00};
          wr_addr_q <= {dst[63:2], 2'b00};
          rd_left_q <= is_lrd ? len >> 2 : nwords;
          rd_ph_q <= 1'b0;
          crem_q <= len;
          c_first_q <= 1'b1;
          wrem_q <= len;
          w_first_q <= 1'b1;
          hold_v_q <= 1'b0;
          ack_v_q <= 1'b0;
          if (bad_desc) begin
            err_q <= 3'b001;
            err_addr_q <= daddr_q;
            state_q <= S_ERR;
          end else if (src_bad || dst_bad) begin
            err_q <= 3'b010;
            err_addr_q <= src_bad ? src : dst;
            state_q <= S_ERR;
          end else if (is_wait) begin
            state_q <= S_WAIT;
          end else if (is_rec) begin
            state_q <= f_local ? S_DONE : S_TXHDR;
          end else if (is_data && len != 0) begin
            state_q <= is_tx ? S_TXHDR : S_MOVE;
          end else begin
            state_q <= S_DONE;  // NOP, zero-length data opcodes: nothing moves
          end
        end
        S_MOVE: if (wrem_q == 0) state_q <= S_DONE;
        S_TXHDR: if (tx_ready) state_q <= is_rec ? S_ACK : S_TXDATA;
        S_TXDATA: if (tx_data_go && wrem_q <= 32'd4) state_q <= S_ACK;
        S_ACK: begin
          if (ack_now) begin
            ack_v_q <= 1'b0;
            if (abandon_q) begin
              state_q <= S_IDLE;
              abandon_q <= 1'b0;
            end else if (ack_st != RS_RX_OK) begin
              err_q <= 3'b100;
              err_addr_q <= is_rec ? 64'(peer) : dst;
              state_q <= S_ERR;
            end else begin
              state_q <= S_DONE;
            end
          end
        end
        S_WAIT: begin
          if (!enable) state_q <= S_IDLE;  // ENABLE = 0: drop the wait, re-fetch it later
          else if (wait_cnt >= 32'(count)) state_q <= S_DONE;
        end
        S_DONE: begin
          if (can_chain) begin
            daddr_q <= slot_addr;
            f_iss_q <= '0;
            f_got_q <= '0;
            state_q <= S_FETCH;
          end else begin
            state_q <= S_IDLE;  // IDLE reports a slot outside memory, with HEAD already moved
          end
        end
        S_ERR: state_q <= S_IDLE;
        default: state_q <= S_IDLE;
      endcase

      if (soft_reset) begin
        run_tail_q <= '0;
        if (keep_xfer) begin
          abandon_q <= 1'b1;
        end else begin
          state_q <= S_IDLE;
          stale_q <= out_n;  // every read still outstanding is now stale
          hold_v_q <= 1'b0;
          ack_v_q <= 1'b0;
          rd_left_q <= '0;
          f_iss_q <= '0;
          f_got_q <= '0;
        end
      end
    end
  end

  // ---- outputs -----------------------------------------------------------------------------------
  logic live;  // outputs to the register file are suppressed for an abandoned transfer
  assign live = !abandon_q;
  assign head_we = state_q == S_DONE && live;
  assign head_in = 32'(ring_head) + 32'd1 >= 32'(ring_size) ? 16'd0 : ring_head + 16'd1;
  assign ev_desc_done = state_q == S_DONE && live && f_irq;
  assign eng_inc_valid = state_q == S_DONE && live && is_rec && f_local;
  assign eng_inc_idx = nidx[6:0];
  assign eng_dec_valid = state_q == S_DONE && live && is_wait;
  assign eng_dec_idx = nidx[6:0];
  assign eng_dec_amount = 32'(count);
  assign wait_idx = nidx[6:0];
  assign err_bad_desc = state_q == S_ERR && err_q[0];
  assign err_addr_range = state_q == S_ERR && err_q[1];
  assign err_link = state_q == S_ERR && err_q[2];
  assign err_bad_ring = doorbell && !halted && ring_bad;
  assign err_desc = ring_head;
  assign err_addr = state_q == S_ERR ? err_addr_q : 64'h0;
  assign busy = state_q != S_IDLE || can_start;

  assign tx_valid = state_q == S_TXHDR || (state_q == S_TXDATA && {1'b0, bb_count} >= {2'b0, t_need});
  assign tx_hdr = state_q == S_TXHDR;
  assign tx_last = (state_q == S_TXHDR && is_rec) || (state_q == S_TXDATA && wrem_q <= 32'd4);
  assign tx_kind = is_rec ? RS_LINK_NOTIFY : (is_wrr ? RS_LINK_WRITE_REDUCE : RS_LINK_WRITE);
  assign tx_peer = peer;
  assign tx_addr = is_rec ? 64'h0 : dst;
  assign tx_bytes = is_rec ? 32'h0 : len;
  assign tx_dtype = is_wrr ? dtype : 4'h0;
  assign tx_op = is_wrr ? op : 3'h0;
  assign tx_notify = is_rec ? nidx : 8'h0;
  assign tx_data = state_q == S_TXDATA ? bb_data & 32'((64'h1 << {t_need, 3'b000}) - 64'h1) : 32'h0;
endmodule
