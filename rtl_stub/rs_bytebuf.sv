// rs_bytebuf.sv — an 8-byte realignment buffer: packed byte chunks in, byte chunks out, so copies need no common alignment.
//
// Bytes leave in the order they came. A push adds push_n (0..4) bytes from the low end of
// push_data; a pop removes pop_n (0..4) bytes from the front, which `data` (the first four bytes,
// byte 0 in bits 7:0) shows beforehand. The caller pushes only while count <= 4 (so 8 bytes
// always fit, whatever pops in the same cycle) and pops at most count bytes. Push and pop may
// happen in the same cycle. Unused bytes above count read 0.
module rs_bytebuf (
    input  logic        clk,
    input  logic        rst_n,
    input  logic        clear,
    input  logic        push,
    input  logic [31:0] push_data,
    input  logic [2:0]  push_n,
    input  logic        pop,
    input  logic [2:0]  pop_n,
    output logic [31:0] data,
    output logic [3:0]  count
);
  logic [63:0] buf_q;
  logic [3:0] cnt_q;

  logic [63:0] kept, added, in_mask;
  logic [3:0] left;
  always_comb begin
    kept = pop ? buf_q >> {pop_n, 3'b000} : buf_q;
    left = pop ? cnt_q - {1'b0, pop_n} : cnt_q;
    in_mask = (64'h1 << {push_n, 3'b000}) - 64'h1;
    added = push ? ({32'h0, push_data} & in_mask) << {left[2:0], 3'b000} : 64'h0;
  end

  always_ff @(posedge clk) begin
    if (!rst_n || clear) begin
      buf_q <= '0;
      cnt_q <= '0;
    end else begin
      buf_q <= kept | added;
      cnt_q <= left + (push ? {1'b0, push_n} : 4'd0);
    end
  end

  assign data = buf_q[31:0];
  assign count = cnt_q;
endmodule
