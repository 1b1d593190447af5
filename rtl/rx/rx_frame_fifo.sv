// Store-and-forward frame FIFO between the RX port and the DMA engine.
//
// The write side appends beats of the frame being received and, at the frame's last beat,
// either commits it (the reader may now see it) or rewinds (the frame never existed). This is
// what lets the NIC drop a frame whose FCS turns out bad without ever writing it to memory.
// `wr_full` tells the writer that a beat could not be stored; the writer then aborts the frame.
//
// The read side is a first-word-fall-through stream of committed beats (block RAM read with a
// registered output; one beat per cycle).
// Reset: synchronous, active high; the FIFO is empty afterwards.
module rx_frame_fifo #(
  parameter int unsigned DATA_W = 64,
  parameter int unsigned DEPTH  = 1024  // beats, power of two
) (
  input  logic              clk,
  input  logic              rst,
  // write side
  input  logic              wr_valid,
  input  logic [DATA_W-1:0] wr_data,
  output logic              wr_full,     // no room for a beat this cycle
  input  logic              wr_end,      // last beat of the frame (may coincide with wr_valid)
  input  logic              wr_keep,     // with wr_end: 1 commit, 0 rewind
  // read side
  output logic              rd_valid,
  input  logic              rd_ready,
  output logic [DATA_W-1:0] rd_data
);
  localparam int unsigned AW = $clog2(DEPTH);

  initial begin
    if (DEPTH < 4 || (DEPTH & (DEPTH - 1)) != 0) $fatal(1, "rx_frame_fifo: DEPTH must be a power of two >= 4");
  end

  logic [DATA_W-1:0] mem_q [DEPTH];
  logic [AW:0] wr_ptr_q, commit_ptr_q, rd_ptr_q;
  logic        wr_fire;

  assign wr_full = (wr_ptr_q - rd_ptr_q) == DEPTH[AW:0];
  assign wr_fire = wr_valid && !wr_full;

  always_ff @(posedge clk) begin
    if (rst) begin
      wr_ptr_q     <= '0;
      commit_ptr_q <= '0;
    end else if (wr_end) begin
      if (wr_keep) begin
        wr_ptr_q     <= wr_ptr_q + {{AW{1'b0}}, wr_fire};
        commit_ptr_q <= wr_ptr_q + {{AW{1'b0}}, wr_fire};
      end else begin
        wr_ptr_q     <= commit_ptr_q;
      end
    end else if (wr_fire) begin
      wr_ptr_q <= wr_ptr_q + 1'b1;
    end
  end

  always_ff @(posedge clk) begin
    if (wr_fire) begin
      mem_q[wr_ptr_q[AW-1:0]] <= wr_data;
    end
  end

  // Read: registered output stage, refilled whenever it is empty or being emptied.
  logic rd_load;
  assign rd_load = (rd_ptr_q != commit_ptr_q) && (!rd_valid || rd_ready);

  always_ff @(posedge clk) begin
    if (rst) begin
      rd_ptr_q <= '0;
      rd_valid <= 1'b0;
    end else if (rd_load) begin
      rd_ptr_q <= rd_ptr_q + 1'b1;
      rd_valid <= 1'b1;
    end else if (rd_ready) begin
      rd_valid <= 1'b0;
    end
  end

  always_ff @(posedge clk) begin
    if (rd_load) begin
      rd_data <= mem_q[rd_ptr_q[AW-1:0]];
    end
  end
endmodule
