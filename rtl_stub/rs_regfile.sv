// rs_regfile.sv — register file of the DMA/notify block: the bus side the mmio backend programs, the ports the engine uses.
//
// Every offset, reset value and field position comes from rs_regs_pkg (generated from regmap.txt);
// rtl_stub/REGISTERS.md states the semantics. Bus: one transfer per cycle, always ready; the
// response (rsp_valid, rsp_rdata, rsp_err) is registered and appears the cycle after the request.
// Reset: synchronous, active low (rst_n); CTRL.SOFT_RESET does the same to every register.
module rs_regfile
  import rs_regs_pkg::*;
#(
  localparam int unsigned AW = RS_ADDR_BITS,
  localparam int unsigned NN = RS_NOTIFY_COUNT,
  localparam int unsigned IW = $clog2(RS_NOTIFY_COUNT)
) (
  input  logic              clk,
  input  logic              rst_n,

  // Register bus (the mmio backend's access function ends here).
  input  logic              req_valid,
  input  logic              req_write,
  input  logic [AW-1:0]     req_addr,
  input  logic [31:0]       req_wdata,
  output logic              req_ready,     // always 1: kept so a wait-stated version is a drop-in
  output logic              rsp_valid,     // one cycle after an accepted request
  output logic [31:0]       rsp_rdata,     // read data (0 for writes, unmapped and WO registers)
  output logic              rsp_err,       // unmapped/unaligned address or notify index out of range

  // To the descriptor engine.
  output logic              enable,        // CTRL.ENABLE
  output logic              soft_reset,    // one-cycle pulse after CTRL.SOFT_RESET is written
  output logic              doorbell,      // one-cycle pulse after DOORBELL is written
  output logic [63:0]       ring_base,     // RING_BASE_HI:LO (low bits 0: DESC_BYTES-aligned)
  output logic [16:0]       ring_size,     // RING_SIZE.ENTRIES, unchecked (the engine reports BAD_RING)
  output logic [15:0]       ring_tail,     // RING_TAIL.INDEX
  output logic [15:0]       ring_head,     // RING_HEAD.INDEX as last written by the engine
  input  logic              head_we,       // the engine moved RING_HEAD to head_in
  input  logic [15:0]       head_in,
  input  logic              busy,          // STATUS.BUSY
  input  logic              ev_desc_done,  // sets IRQ_STATUS.DESC_DONE

  // Engine errors: any of these sets its ERR_STATUS bit; the first since ERR_STATUS's engine bits
  // were last all clear also captures err_desc/err_addr into ERR_DESC/ERR_ADDR.
  input  logic              err_bad_desc,
  input  logic              err_addr_range,
  input  logic              err_link,
  input  logic              err_bad_ring,
  input  logic [15:0]       err_desc,
  input  logic [63:0]       err_addr,

  // Notify counters: +1 from the link (a peer's record) and from the engine (a local record),
  // -amount from the engine (a NOTIFY_WAIT it executed). All sources of one cycle add up.
  input  logic              link_inc_valid,
  input  logic [IW-1:0]     link_inc_idx,
  input  logic              eng_inc_valid,
  input  logic [IW-1:0]     eng_inc_idx,
  input  logic              eng_dec_valid,
  input  logic [IW-1:0]     eng_dec_idx,
  input  logic [31:0]       eng_dec_amount,
  output logic [NN-1:0][31:0] notify_cnt,

  output logic              irq            // CTRL.IRQ_EN and any(IRQ_STATUS and IRQ_MASK)
);
  // Engine-reported errors: the ones that capture ERR_DESC/ERR_ADDR (REG_ACCESS and NOTIFY_SAT
  // come from this block and say nothing about a descriptor).
  localparam logic [31:0] ENG_ERRS = RS_ERR_STATUS_BAD_DESC_MASK | RS_ERR_STATUS_ADDR_RANGE_MASK |
                                     RS_ERR_STATUS_LINK_MASK | RS_ERR_STATUS_BAD_RING_MASK;
  localparam logic [31:0] NSPAN = 32'(NN * RS_REG_NOTIFY_CNT_STRIDE);

  // ---- registers -------------------------------------------------------------------------------
  logic [31:0] scratch_q, base_lo_q, base_hi_q, size_q, tail_q, head_q;
  logic        enable_q, irq_en_q;
  logic [31:0] irq_status_q, irq_mask_q, err_status_q, err_addr_lo_q, err_addr_hi_q, err_desc_q;
  logic [NN-1:0][31:0] cnt_q;
  logic        doorbell_q, soft_reset_q;

  // ---- bus decode ------------------------------------------------------------------------------
  logic        rd, wr, aligned;
  logic [31:0] noff;             // byte offset into the NOTIFY_CNT array (huge when below it)
  logic        hit_cnt;
  logic [IW-1:0] cnt_idx;
  logic        mapped;
  logic [31:0] rdata;
  logic [31:0] sw_idx_add, sw_idx_sub, sw_amt_add, sw_amt_sub;
  logic        sw_add, sw_sub, bad_idx, bus_err;

  assign rd = req_valid && !req_write;
  assign wr = req_valid && req_write;
  assign aligned = req_addr[1:0] == 2'b00;
  assign noff = 32'(req_addr) - 32'(RS_REG_NOTIFY_CNT);
  assign hit_cnt = aligned && noff < NSPAN;
  assign cnt_idx = IW'(noff / RS_REG_NOTIFY_CNT_STRIDE);

  assign sw_idx_add = (req_wdata & RS_NOTIFY_ADD_IDX_MASK) >> RS_NOTIFY_ADD_IDX_LSB;
  assign sw_amt_add = (req_wdata & RS_NOTIFY_ADD_AMOUNT_MASK) >> RS_NOTIFY_ADD_AMOUNT_LSB;
  assign sw_idx_sub = (req_wdata & RS_NOTIFY_SUB_IDX_MASK) >> RS_NOTIFY_SUB_IDX_LSB;
  assign sw_amt_sub = (req_wdata & RS_NOTIFY_SUB_AMOUNT_MASK) >> RS_NOTIFY_SUB_AMOUNT_LSB;
  // An out-of-range index is a bus error and changes nothing (it must not alias another counter).
  assign sw_add = wr && req_addr == RS_REG_NOTIFY_ADD && sw_idx_add < NN;
  assign sw_sub = wr && req_addr == RS_REG_NOTIFY_SUB && sw_idx_sub < NN;
  assign bad_idx = wr && ((req_addr == RS_REG_NOTIFY_ADD && sw_idx_add >= NN) ||
                          (req_addr == RS_REG_NOTIFY_SUB && sw_idx_sub >= NN));

  always_comb begin
    mapped = 1'b1;
    rdata = 32'h0;
    unique case (req_addr)
      RS_REG_ID:           rdata = RS_REG_ID_RESET;
      RS_REG_VERSION:      rdata = RS_REG_VERSION_RESET;
      RS_REG_CAPS:         rdata = RS_REG_CAPS_RESET;
      RS_REG_SCRATCH:      rdata = scratch_q;
      RS_REG_CTRL:         rdata = (enable_q ? RS_CTRL_ENABLE_MASK : 32'h0) |
                                   (irq_en_q ? RS_CTRL_IRQ_EN_MASK : 32'h0);
      RS_REG_STATUS:       rdata = (busy ? RS_STATUS_BUSY_MASK : 32'h0) |
                                   (head_q == tail_q ? RS_STATUS_EMPTY_MASK : 32'h0);
      RS_REG_RING_BASE_LO: rdata = base_lo_q;
      RS_REG_RING_BASE_HI: rdata = base_hi_q;
      RS_REG_RING_SIZE:    rdata = size_q;
      RS_REG_RING_HEAD:    rdata = head_q;
      RS_REG_RING_TAIL:    rdata = tail_q;
      RS_REG_DOORBELL:     rdata = 32'h0;
      RS_REG_IRQ_STATUS:   rdata = irq_status_q;
      RS_REG_IRQ_MASK:     rdata = irq_mask_q;
      RS_REG_ERR_STATUS:   rdata = err_status_q;
      RS_REG_ERR_DESC:     rdata = err_desc_q;
      RS_REG_ERR_ADDR_LO:  rdata = err_addr_lo_q;
      RS_REG_ERR_ADDR_HI:  rdata = err_addr_hi_q;
      RS_REG_NOTIFY_ADD:   rdata = 32'h0;
      RS_REG_NOTIFY_SUB:   rdata = 32'h0;
      default: begin
        mapped = hit_cnt;
        rdata = hit_cnt ? cnt_q[cnt_idx] : 32'h0;
      end
    endcase
  end

  assign bus_err = req_valid && (!mapped || bad_idx);

  // ---- next state ------------------------------------------------------------------------------
  // Engine inputs are ignored while soft_reset is high: the engine resets on that cycle's edge
  // and whatever it reports meanwhile belongs to the work that was just discarded.
  logic        hw_ok, sw_reset;
  logic [31:0] wmask;             // the W1C bits software writes this cycle, per register below
  logic [31:0] irq_set, err_set, err_kept, irq_status_n, err_status_n;
  logic        capture;

  assign hw_ok = !soft_reset_q;
  assign sw_reset = wr && req_addr == RS_REG_CTRL && (req_wdata & RS_CTRL_SOFT_RESET_MASK) != 0;
  assign wmask = req_wdata;

  // Notify counters: at most the five indexed counters change in a cycle, so the next values are
  // computed per source, not per counter (a loop over all NN counters made the verilated model
  // ~20x slower, as Verilator re-evaluates input-dependent logic on every eval). Sources naming
  // the same counter add up; each of them computes the same total and writes the same value.
  localparam int NS = 5;  // link_inc, eng_inc, eng_dec, NOTIFY_ADD, NOTIFY_SUB
  logic [NS-1:0] src_v, src_sat;
  logic [NS-1:0][IW-1:0] src_i;
  logic [NS-1:0][33:0] src_add, src_sub;
  logic [NS-1:0][31:0] src_new;
  always_comb begin
    src_v = {sw_sub, sw_add, hw_ok && eng_dec_valid, hw_ok && eng_inc_valid, hw_ok && link_inc_valid};
    src_i = {IW'(sw_idx_sub), IW'(sw_idx_add), eng_dec_idx, eng_inc_idx, link_inc_idx};
    src_add = {34'h0, 34'(sw_amt_add), 34'h0, 34'd1, 34'd1};
    src_sub = {34'(sw_amt_sub), 34'h0, 34'(eng_dec_amount), 34'h0, 34'h0};
    for (int s = 0; s < NS; s++) begin
      // 34 bits hold count + every increment, and going below 0 shows as the top bit.
      logic [33:0] add, sub, sum;
      add = 34'(cnt_q[src_i[s]]);
      sub = 34'h0;
      for (int t = 0; t < NS; t++) begin
        if (src_v[t] && src_i[t] == src_i[s]) begin
          add = add + src_add[t];
          sub = sub + src_sub[t];
        end
      end
      sum = add - sub;
      src_sat[s] = 1'b0;
      if (sub > add) begin
        src_new[s] = 32'h0;
        src_sat[s] = src_v[s];
      end else if (sum > 34'hFFFF_FFFF) begin
        src_new[s] = 32'hFFFF_FFFF;
        src_sat[s] = src_v[s];
      end else begin
        src_new[s] = sum[31:0];
      end
    end
  end

  always_comb begin
    err_set = 32'h0;
    if (hw_ok && err_bad_desc) err_set = err_set | RS_ERR_STATUS_BAD_DESC_MASK;
    if (hw_ok && err_addr_range) err_set = err_set | RS_ERR_STATUS_ADDR_RANGE_MASK;
    if (hw_ok && err_link) err_set = err_set | RS_ERR_STATUS_LINK_MASK;
    if (hw_ok && err_bad_ring) err_set = err_set | RS_ERR_STATUS_BAD_RING_MASK;
    if (bus_err) err_set = err_set | RS_ERR_STATUS_REG_ACCESS_MASK;
    if (|src_sat) err_set = err_set | RS_ERR_STATUS_NOTIFY_SAT_MASK;
    // A bit set and cleared in the same cycle stays set: the event came after the read.
    err_kept = err_status_q & ~((wr && req_addr == RS_REG_ERR_STATUS) ? wmask : 32'h0);
    err_status_n = err_kept | err_set;
    capture = (err_set & ENG_ERRS) != 0 && (err_kept & ENG_ERRS) == 0;

    irq_set = 32'h0;
    if (hw_ok && ev_desc_done) irq_set = irq_set | RS_IRQ_STATUS_DESC_DONE_MASK;
    if (hw_ok && head_we && 32'(head_in) == tail_q) irq_set = irq_set | RS_IRQ_STATUS_RING_EMPTY_MASK;
    if (err_set != 0) irq_set = irq_set | RS_IRQ_STATUS_ERROR_MASK;
    if (hw_ok && (link_inc_valid || eng_inc_valid)) irq_set = irq_set | RS_IRQ_STATUS_NOTIFY_MASK;
    irq_status_n = (irq_status_q & ~((wr && req_addr == RS_REG_IRQ_STATUS) ? wmask : 32'h0)) | irq_set;
  end

  // ---- flops -----------------------------------------------------------------------------------
  always_ff @(posedge clk) begin
    if (!rst_n || sw_reset) begin
      scratch_q <= RS_REG_SCRATCH_RESET;
      enable_q <= (RS_REG_CTRL_RESET & RS_CTRL_ENABLE_MASK) != 0;
      irq_en_q <= (RS_REG_CTRL_RESET & RS_CTRL_IRQ_EN_MASK) != 0;
      base_lo_q <= RS_REG_RING_BASE_LO_RESET;
      base_hi_q <= RS_REG_RING_BASE_HI_RESET;
      size_q <= RS_REG_RING_SIZE_RESET;
      tail_q <= RS_REG_RING_TAIL_RESET;
      head_q <= RS_REG_RING_HEAD_RESET;
      irq_status_q <= RS_REG_IRQ_STATUS_RESET;
      irq_mask_q <= RS_REG_IRQ_MASK_RESET;
      err_status_q <= RS_REG_ERR_STATUS_RESET;
      err_desc_q <= RS_REG_ERR_DESC_RESET;
      err_addr_lo_q <= RS_REG_ERR_ADDR_LO_RESET;
      err_addr_hi_q <= RS_REG_ERR_ADDR_HI_RESET;
      for (int i = 0; i < int'(NN); i++) cnt_q[i] <= RS_REG_NOTIFY_CNT_RESET;
      doorbell_q <= 1'b0;
    end else begin
      if (wr && req_addr == RS_REG_SCRATCH) scratch_q <= req_wdata & RS_REG_SCRATCH_RWBITS;
      if (wr && req_addr == RS_REG_CTRL) begin
        enable_q <= (req_wdata & RS_CTRL_ENABLE_MASK) != 0;
        irq_en_q <= (req_wdata & RS_CTRL_IRQ_EN_MASK) != 0;
      end
      if (wr && req_addr == RS_REG_RING_BASE_LO) base_lo_q <= req_wdata & RS_REG_RING_BASE_LO_RWBITS;
      if (wr && req_addr == RS_REG_RING_BASE_HI) base_hi_q <= req_wdata & RS_REG_RING_BASE_HI_RWBITS;
      if (wr && req_addr == RS_REG_RING_SIZE) size_q <= req_wdata & RS_REG_RING_SIZE_RWBITS;
      if (wr && req_addr == RS_REG_RING_TAIL) tail_q <= req_wdata & RS_REG_RING_TAIL_RWBITS;
      if (wr && req_addr == RS_REG_IRQ_MASK) irq_mask_q <= req_wdata & RS_REG_IRQ_MASK_RWBITS;
      if (hw_ok && head_we) head_q <= 32'(head_in) & RS_REG_RING_HEAD_BITS;
      irq_status_q <= irq_status_n & RS_REG_IRQ_STATUS_BITS;
      err_status_q <= err_status_n & RS_REG_ERR_STATUS_BITS;
      if (capture) begin
        err_desc_q <= 32'(err_desc) & RS_REG_ERR_DESC_BITS;
        err_addr_lo_q <= err_addr[31:0];
        err_addr_hi_q <= err_addr[63:32];
      end
      for (int s = 0; s < NS; s++) if (src_v[s]) cnt_q[src_i[s]] <= src_new[s];
      doorbell_q <= wr && req_addr == RS_REG_DOORBELL;
    end
  end

  // The bus response and the soft-reset pulse survive a soft reset (the CTRL write that asked for
  // it still gets its response).
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      rsp_valid <= 1'b0;
      rsp_rdata <= 32'h0;
      rsp_err <= 1'b0;
      soft_reset_q <= 1'b0;
    end else begin
      rsp_valid <= req_valid;
      rsp_rdata <= rd && !bus_err ? rdata : 32'h0;
      rsp_err <= bus_err;
      soft_reset_q <= sw_reset;
    end
  end

  // ---- outputs ---------------------------------------------------------------------------------
  assign req_ready = 1'b1;
  assign enable = enable_q;
  assign soft_reset = soft_reset_q;
  assign doorbell = doorbell_q;
  assign ring_base = {base_hi_q, base_lo_q};
  assign ring_size = size_q[16:0];
  assign ring_tail = tail_q[15:0];
  assign ring_head = head_q[15:0];
  assign notify_cnt = cnt_q;
  assign irq = irq_en_q && (irq_status_q & irq_mask_q) != 0;
endmodule
