// rs_reduce_pkg.sv — encodings of the reduce datapath (dtype, op, canonical NaN), shared by rs_reduce and the engine.
//
// The numbers are the firmware's own enums (ncl_dtype, ncl_op in firmware/include/ncl/ncl.h) and
// the C reference's (rtl_stub/ref/rs_ref_reduce.h): a descriptor carries the engine's dtype/op
// unchanged, and the C side proves the equality with static asserts. Codes not listed here are
// legal on the wires and answered with `unsupported`.
package rs_reduce_pkg;

  localparam int RS_DTYPE_W = 4;  // wide enough for every ncl_dtype (0..8)
  localparam int RS_OP_W = 3;     // wide enough for every ncl_op (0..4)

  localparam logic [RS_DTYPE_W-1:0] RS_DT_INT32 = 4'd2;   // NCL_INT32
  localparam logic [RS_DTYPE_W-1:0] RS_DT_UINT32 = 4'd3;  // NCL_UINT32
  localparam logic [RS_DTYPE_W-1:0] RS_DT_FP32 = 4'd7;    // NCL_FLOAT32

  localparam logic [RS_OP_W-1:0] RS_OP_SUM = 3'd0;  // NCL_SUM
  localparam logic [RS_OP_W-1:0] RS_OP_MAX = 3'd2;  // NCL_MAX
  localparam logic [RS_OP_W-1:0] RS_OP_MIN = 3'd3;  // NCL_MIN

  // Every fp32 NaN result, whatever the operands' payloads (ARM default-NaN mode): results never
  // depend on operand order or on which NaN came first.
  localparam logic [31:0] RS_FP32_QNAN = 32'h7FC0_0000;

  // Pipeline depth of rs_reduce: with out_ready held at 1 a result leaves this many cycles after
  // its operands were accepted. For the engine's scheduling, not used inside rs_reduce itself.
  /* verilator lint_off UNUSEDPARAM */
  localparam int RS_REDUCE_LATENCY = 2;
  /* verilator lint_on UNUSEDPARAM */

endpackage
