// rs_fifo.sv — a small synchronous FIFO (first-word fall-through) for the engine's and the receiver's read responses and beats.
//
// The caller never pushes when full nor pops when empty (it reserves space with credits before
// issuing the memory read whose response it pushes). clear empties it like rst_n does.
module rs_fifo #(
    parameter int W = 32,
    parameter int DEPTH = 4,  // a power of two
    localparam int AW = $clog2(DEPTH)
) (
    input  logic         clk,
    input  logic         rst_n,
    input  logic         clear,
    input  logic         push,
    input  logic [W-1:0] din,
    input  logic         pop,
    output logic [W-1:0] dout,   // the oldest entry (valid while count != 0)
    output logic [AW:0]  count
);
  logic [DEPTH-1:0][W-1:0] mem_q;
  logic [AW-1:0] rd_q, wr_q;
  logic [AW:0] cnt_q;

  always_ff @(posedge clk) begin
    if (!rst_n || clear) begin
      rd_q <= '0;
      wr_q <= '0;
      cnt_q <= '0;
    end else begin
      if (push) begin
        mem_q[wr_q] <= din;
        wr_q <= wr_q + 1'b1;
      end
      if (pop) rd_q <= rd_q + 1'b1;
      cnt_q <= cnt_q + (AW + 1)'(push) - (AW + 1)'(pop);
    end
  end

  assign dout = mem_q[rd_q];
  assign count = cnt_q;
endmodule
