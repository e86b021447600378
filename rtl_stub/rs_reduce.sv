// rs_reduce.sv — one 32-bit reduce lane: int32/uint32/fp32 sum/max/min, a 2-stage valid/ready pipeline.
//
// Interface contract (the descriptor engine instantiates one per lane):
// - in_valid/in_ready and out_valid/out_ready are valid/ready handshakes: a transfer happens on
//   a rising clk edge where both are 1. in_ready depends combinationally on out_ready (each
//   stage accepts when it is empty or its content moves on), so a bubble never costs throughput:
//   one result per cycle while out_ready is 1, latency RS_REDUCE_LATENCY (2) cycles.
// - While out_valid is 1 and out_ready is 0, y/unsupported/out_tag hold still.
// - dtype/op use the firmware's ncl_dtype/ncl_op numbers (rs_reduce_pkg). Any other combination
//   (other dtypes, prod, avg) gives y = 0 and unsupported = 1 with the same timing, so the engine
//   can turn it into a bad-descriptor error instead of hanging.
// - in_tag travels with the operands to out_tag (destination address, lane mask, ...), so the
//   engine needs no side FIFO of its own.
// - rst_n is synchronous, active low, and clears only the valid bits.
//
// Numerics (exactly what rtl_stub/ref/rs_ref_reduce.c computes):
// - int32/uint32 sum wraps modulo 2^32 (same bits for both); max/min compare signed/unsigned.
// - fp32 sum: IEEE-754 binary32 addition, round to nearest even, gradual underflow (subnormal
//   operands and results exact, no flush to zero), overflow to +-Inf, Inf - Inf = NaN. Every NaN
//   result is RS_FP32_QNAN. Exact zero results: (+0)+(-0) = +0, (-0)+(-0) = -0, x+(-x) = +0.
// - fp32 max/min: the engine's semantics (ncl_reduce_kernel): any NaN operand gives
//   RS_FP32_QNAN, +0 > -0, otherwise one of the operands bit for bit.
module rs_reduce
  import rs_reduce_pkg::*;
#(
    parameter int TAG_W = 16  // width of the sideband that travels with each operand pair
) (
    input logic clk,
    input logic rst_n,

    input  logic                  in_valid,
    output logic                  in_ready,
    input  logic [RS_DTYPE_W-1:0] dtype,
    input  logic [   RS_OP_W-1:0] op,
    input  logic [          31:0] a,
    input  logic [          31:0] b,
    input  logic [     TAG_W-1:0] in_tag,

    output logic             out_valid,
    input  logic             out_ready,
    output logic [     31:0] y,
    output logic             unsupported,
    output logic [TAG_W-1:0] out_tag
);

  // ---- stage 1 (combinational from the inputs): everything but fp32 sum finishes here; fp32 sum
  // does unpack, specials, swap, alignment with sticky and the significand add/subtract.

  logic is_i32, is_u32, is_f32, is_sum, is_max, is_min, is_ok;
  assign is_i32 = dtype == RS_DT_INT32;
  assign is_u32 = dtype == RS_DT_UINT32;
  assign is_f32 = dtype == RS_DT_FP32;
  assign is_sum = op == RS_OP_SUM;
  assign is_max = op == RS_OP_MAX;
  assign is_min = op == RS_OP_MIN;
  assign is_ok = (is_i32 | is_u32 | is_f32) & (is_sum | is_max | is_min);

  // Integer max/min: one comparator, signedness by dtype.
  logic int_lt;
  logic [31:0] int_y;
  assign int_lt = is_i32 ? ($signed(a) < $signed(b)) : (a < b);
  always_comb begin
    if (is_sum) int_y = a + b;
    else if (is_max) int_y = int_lt ? b : a;
    else int_y = int_lt ? a : b;
  end

  logic a_nan, b_nan, a_inf, b_inf;
  assign a_nan = (a[30:23] == 8'hFF) && (a[22:0] != 23'd0);
  assign b_nan = (b[30:23] == 8'hFF) && (b[22:0] != 23'd0);
  assign a_inf = a[30:0] == 31'h7F80_0000;
  assign b_inf = b[30:0] == 31'h7F80_0000;

  // fp32 max/min: map sign-magnitude to an unsigned key that orders like the reals with
  // -0 < +0 (negative: invert all bits; positive: set the sign bit). Equal keys mean equal bits.
  logic [31:0] key_a, key_b;
  logic [31:0] fmm_y;
  assign key_a = a[31] ? ~a : {1'b1, a[30:0]};
  assign key_b = b[31] ? ~b : {1'b1, b[30:0]};
  always_comb begin
    if (a_nan | b_nan) fmm_y = RS_FP32_QNAN;
    else if (is_max) fmm_y = (key_a < key_b) ? b : a;
    else fmm_y = (key_a < key_b) ? a : b;
  end

  // fp32 sum, specials first: they bypass the significand path.
  logic fs_special;
  logic [31:0] fs_special_y;
  always_comb begin
    fs_special = 1'b1;
    if (a_nan | b_nan | (a_inf & b_inf & (a[31] ^ b[31]))) fs_special_y = RS_FP32_QNAN;
    else if (a_inf) fs_special_y = a;
    else if (b_inf) fs_special_y = b;
    else begin
      fs_special = 1'b0;
      fs_special_y = 32'd0;
    end
  end

  // Order by magnitude (the bit patterns of |a|, |b| compare like their values), so x is the
  // larger and the significand difference below is never negative.
  logic swap;
  logic [31:0] fx, fy;
  logic [7:0] ex, ey, dexp;
  logic [23:0] mx, my;
  assign swap = b[30:0] > a[30:0];
  assign fx = swap ? b : a;
  assign fy = swap ? a : b;
  // Subnormals: exponent field 0 scales like 1, hidden bit 0 (gradual underflow).
  assign ex = (fx[30:23] == 8'd0) ? 8'd1 : fx[30:23];
  assign ey = (fy[30:23] == 8'd0) ? 8'd1 : fy[30:23];
  assign mx = {fx[30:23] != 8'd0, fx[22:0]};
  assign my = {fy[30:23] != 8'd0, fy[22:0]};
  assign dexp = ex - ey;

  // Alignment on 24 + 3 bits (guard, round, sticky). Bits shifted out are ORed into bit 0: the
  // aligned value then lies strictly between the same two rounding points as the exact one, so
  // one rounding of the sum is correct. A distance of 27 or more leaves only the sticky bit.
  logic [26:0] y_ext, y_shr, y_lost;
  logic [27:0] sig_x, sig_y, sig_r;
  logic far, fs_sub;
  assign y_ext = {my, 3'b000};
  assign far = dexp >= 8'd27;
  assign y_shr = far ? 27'd0 : (y_ext >> dexp[4:0]);
  assign y_lost = far ? y_ext : (y_ext & ~({27{1'b1}} << dexp[4:0]));
  assign sig_x = {1'b0, mx, 3'b000};
  assign sig_y = {1'b0, y_shr[26:1], y_shr[0] | (y_lost != 27'd0)};
  assign fs_sub = fx[31] ^ fy[31];
  assign sig_r = fs_sub ? (sig_x - sig_y) : (sig_x + sig_y);

  // ---- stage 1 register

  logic s1_valid, s1_fadd, s1_unsupported, s1_sign, s1_sub;
  logic [31:0] s1_y;
  logic [7:0] s1_exp;
  logic [27:0] s1_sig;
  logic [TAG_W-1:0] s1_tag;

  logic s1_ready, s2_ready;
  assign in_ready = s1_ready;
  assign s1_ready = !s1_valid || s2_ready;

  always_ff @(posedge clk) begin
    if (!rst_n) s1_valid <= 1'b0;
    else if (s1_ready) s1_valid <= in_valid;
  end

  always_ff @(posedge clk) begin
    if (s1_ready && in_valid) begin
      s1_unsupported <= !is_ok;
      s1_fadd <= is_ok && is_f32 && is_sum && !fs_special;
      if (!is_ok) s1_y <= 32'd0;
      else if (!is_f32) s1_y <= int_y;
      else if (!is_sum) s1_y <= fmm_y;
      else s1_y <= fs_special_y;
      s1_sign <= fx[31];
      s1_sub <= fs_sub;
      s1_exp <= ex;
      s1_sig <= sig_r;
      s1_tag <= in_tag;
    end
  end

  // ---- stage 2 (combinational from stage 1): normalise, round to nearest even, pack.

  function automatic logic [4:0] lzc27(input logic [26:0] v);
    lzc27 = 5'd27;
    for (int i = 0; i < 27; i++) if (v[i]) lzc27 = 5'(26 - i);  // highest set bit wins
  endfunction

  logic [26:0] norm;  // significand with its leading 1 at bit 26 (or subnormal), + G, R, S
  logic [8:0] nexp;  // biased exponent of norm, before rounding (255 = overflow)
  logic [4:0] lz;
  logic [8:0] shl;
  always_comb begin
    lz = lzc27(s1_sig[26:0]);
    shl = 9'd0;
    if (s1_sig[27]) begin
      // Carry out of the add: one right shift, the dropped bit joins the sticky.
      norm = {s1_sig[27:2], s1_sig[1] | s1_sig[0]};
      nexp = {1'b0, s1_exp} + 9'd1;
    end else begin
      // Left shift by the leading zeros, but not below exponent 1: what does not normalise is a
      // subnormal (exact here: big cancellation only happens when nothing was shifted out).
      shl = ({4'd0, lz} < ({1'b0, s1_exp} - 9'd1)) ? {4'd0, lz} : ({1'b0, s1_exp} - 9'd1);
      norm = s1_sig[26:0] << shl;
      nexp = {1'b0, s1_exp} - shl;
    end
  end

  logic round_up;
  logic [30:0] packed_mag, rounded_mag;
  logic fs_sign;
  logic [31:0] fs_y;
  // Ties to even: up when above half, or exactly half and the kept LSB is odd.
  assign round_up = norm[2] & (norm[1] | norm[0] | norm[3]);
  // Exponent field 0 when the leading bit is not there (subnormal or zero). Adding round_up to
  // exponent and fraction together carries correctly: subnormal -> min normal, 1.11..1 -> next
  // binade, max finite -> Inf.
  assign packed_mag = {norm[26] ? nexp[7:0] : 8'd0, norm[25:3]};
  assign rounded_mag = packed_mag + {30'd0, round_up};
  // An exact zero from opposite signs is +0 (round to nearest); same signs keep theirs.
  assign fs_sign = (s1_sig == 28'd0) ? (s1_sign & ~s1_sub) : s1_sign;
  assign fs_y = (nexp >= 9'd255) ? {fs_sign, 31'h7F80_0000} : {fs_sign, rounded_mag};

  // ---- stage 2 register = outputs

  logic s2_valid, s2_unsupported;
  logic [31:0] s2_y;
  logic [TAG_W-1:0] s2_tag;
  assign s2_ready = !s2_valid || out_ready;

  always_ff @(posedge clk) begin
    if (!rst_n) s2_valid <= 1'b0;
    else if (s2_ready) s2_valid <= s1_valid;
  end

  always_ff @(posedge clk) begin
    if (s2_ready && s1_valid) begin
      s2_y <= s1_fadd ? fs_y : s1_y;
      s2_unsupported <= s1_unsupported;
      s2_tag <= s1_tag;
    end
  end

  assign out_valid = s2_valid;
  assign y = s2_y;
  assign unsupported = s2_unsupported;
  assign out_tag = s2_tag;

endmodule
