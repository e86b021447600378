// rs_memarb.sv — the block's one memory port shared by the descriptor engine and the link receiver, round robin, in-order read responses routed back.
//
// Memory port protocol (rs_dev's mem_*): a request transfers on a clock edge with req_valid and
// req_ready both 1; writes (req_we = 1) carry 32-bit data and byte strobes and get no response
// (the memory applies them in the order it accepted requests); every read gets exactly one
// response (rsp_valid with the 32-bit word), in request order, at least one cycle later. The
// block accepts a response whenever it comes (rsp_ready is always 1): each master reserved room
// for it before asking. This arbiter remembers which master each outstanding read belongs to.
module rs_memarb #(
    parameter int DEPTH = 16  // outstanding reads of both masters together (a power of two)
) (
    input  logic        clk,
    input  logic        rst_n,
    // masters: index 0 the engine, 1 the link receiver
    input  logic [1:0]        m_valid,
    output logic [1:0]        m_ready,
    input  logic [1:0]        m_we,
    input  logic [1:0][63:0]  m_addr,
    input  logic [1:0][31:0]  m_wdata,
    input  logic [1:0][3:0]   m_wstrb,
    output logic [1:0]        m_rsp_valid,
    output logic [31:0]       m_rsp_rdata,
    // the memory
    output logic        mem_req_valid,
    input  logic        mem_req_ready,
    output logic        mem_req_we,
    output logic [63:0] mem_req_addr,
    output logic [31:0] mem_req_wdata,
    output logic [3:0]  mem_req_wstrb,
    input  logic        mem_rsp_valid,
    output logic        mem_rsp_ready,
    input  logic [31:0] mem_rsp_rdata
);
  localparam int AW = $clog2(DEPTH);
  logic last_q;  // the master granted last; the other one wins a tie next
  logic sel;
  logic [AW:0] ids;
  logic id_head;
  logic room, take, read_take;

  assign sel = (m_valid == 2'b11) ? !last_q : m_valid[1];
  assign room = ids != (AW + 1)'(DEPTH);
  // A read needs a slot for its id; a write does not.
  assign mem_req_valid = m_valid[sel] && (m_we[sel] || room);
  assign mem_req_we = m_we[sel];
  assign mem_req_addr = m_addr[sel];
  assign mem_req_wdata = m_wdata[sel];
  assign mem_req_wstrb = m_wstrb[sel];
  assign take = mem_req_valid && mem_req_ready;
  assign read_take = take && !m_we[sel];
  assign m_ready = {take && sel, take && !sel};

  rs_fifo #(.W(1), .DEPTH(DEPTH)) u_ids (
      .clk, .rst_n, .clear(1'b0), .push(read_take), .din(sel),
      .pop(mem_rsp_valid), .dout(id_head), .count(ids));

  always_ff @(posedge clk) begin
    if (!rst_n) last_q <= 1'b0;
    else if (take) last_q <= sel;
  end

  assign mem_rsp_ready = 1'b1;
  assign m_rsp_valid = {mem_rsp_valid && id_head, mem_rsp_valid && !id_head};
  assign m_rsp_rdata = mem_rsp_rdata;
endmodule
