// Synchronous first-word-fall-through FIFO with valid/ready on both sides.
// Storage is a register array read combinationally (distributed RAM on an FPGA): meant for
// small metadata and descriptor queues, not for frame data.
// Reset: synchronous, active high; empties the FIFO (contents are not cleared).
module sync_fifo #(
  parameter int unsigned WIDTH = 8,
  parameter int unsigned DEPTH = 4   // power of two, >= 2
) (
  input  logic                       clk,
  input  logic                       rst,
  input  logic                       clear,      // synchronous flush, like reset
  input  logic                       in_valid,
  output logic                       in_ready,
  input  logic [WIDTH-1:0]           in_data,
  output logic                       out_valid,
  input  logic                       out_ready,
  output logic [WIDTH-1:0]           out_data,
  output logic [$clog2(DEPTH):0]     count
);
  localparam int unsigned AW = $clog2(DEPTH);

  initial begin
    if (DEPTH < 2 || (DEPTH & (DEPTH - 1)) != 0) $fatal(1, "sync_fifo: DEPTH must be a power of two >= 2");
  end

  logic [WIDTH-1:0] mem_q [DEPTH];
  logic [AW:0]      wr_ptr_q, rd_ptr_q;

  assign count     = wr_ptr_q - rd_ptr_q;
  assign in_ready  = (count != DEPTH[AW:0]);
  assign out_valid = (count != '0);
  assign out_data  = mem_q[rd_ptr_q[AW-1:0]];

  always_ff @(posedge clk) begin
    if (rst || clear) begin
      wr_ptr_q <= '0;
      rd_ptr_q <= '0;
    end else begin
      if (in_valid && in_ready) begin
        wr_ptr_q <= wr_ptr_q + 1'b1;
      end
      if (out_valid && out_ready) begin
        rd_ptr_q <= rd_ptr_q + 1'b1;
      end
    end
  end

  always_ff @(posedge clk) begin
    if (in_valid && in_ready) begin
      mem_q[wr_ptr_q[AW-1:0]] <= in_data;
    end
  end
endmodule
