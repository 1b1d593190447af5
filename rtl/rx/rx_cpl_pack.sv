// Completion records to completion-write words (docs/rx-rules.md section 5, batches).
//
// The planner hands each 16-byte completion record with the lane of its ring entry in the DMA
// beat (entry address mod DMA width, in 16-byte units) and says when a batch closes, with its
// last record (`rec_close`) or on its own (`close`). Consecutive records of a batch fill
// consecutive lanes; a word is pushed into the output FIFO when its last lane is filled or the
// batch closes, so a batch's write (command: first entry's address, 16 bytes per record) takes
// exactly the words pushed for it. Lanes of a word that belong to no record of the batch hold
// whatever was there: the write strobes (from the command) leave them out.
// DMA widths of 128 bits or less: a word is one record (of 128 bits; the data mux cuts it into
// beats); `rec_lane` and `close` are then not used.
// Reset: synchronous, active high; the assembly word is empty after reset.
module rx_cpl_pack #(
  parameter int unsigned DATA_W = 64,
  parameter int unsigned DEPTH  = 4,     // words the output FIFO holds (power of two)
  localparam int unsigned CW    = (DATA_W > 128) ? DATA_W : 128,
  localparam int unsigned NL    = CW / 128,               // records per word
  localparam int unsigned LAW   = (NL > 1) ? $clog2(NL) : 1
) (
  input  logic           clk,
  input  logic           rst,
  input  logic           rec_valid,
  output logic           rec_ready,
  input  logic [127:0]   rec_data,
  input  logic [LAW-1:0] rec_lane,
  input  logic           rec_close,
  input  logic           close,           // close the batch without a record
  output logic           close_ready,
  output logic           out_valid,
  input  logic           out_ready,
  output logic [CW-1:0]  out_data
);
  logic          push, fifo_ready;
  logic [CW-1:0] push_data;

  /* verilator lint_off PINCONNECTEMPTY */
  sync_fifo #(.WIDTH(CW), .DEPTH(DEPTH)) u_q (
    .clk, .rst, .clear (1'b0),
    .in_valid (push), .in_ready (fifo_ready), .in_data (push_data),
    .out_valid, .out_ready, .out_data, .count ()
  );
  /* verilator lint_on PINCONNECTEMPTY */

  assign rec_ready   = fifo_ready;
  assign close_ready = fifo_ready;

  if (NL == 1) begin : g_one
    assign push      = rec_valid && fifo_ready;
    assign push_data = rec_data;
    logic unused;
    assign unused = ^{rec_lane, rec_close, close};
  end else begin : g_pack
    logic [CW-1:0] word_q, word_d;
    logic          any_q;              // word_q holds a record of the open batch
    always_comb begin
      word_d = word_q;
      word_d[128 * rec_lane +: 128] = rec_data;
    end
    always_comb begin
      push      = 1'b0;
      push_data = word_d;
      if (rec_valid) begin
        push = fifo_ready && (rec_close || rec_lane == LAW'(NL - 1));
      end else if (close && any_q) begin
        push      = fifo_ready;
        push_data = word_q;
      end
    end
    always_ff @(posedge clk) begin
      if (rst) begin
        any_q <= 1'b0;
      end else if (rec_valid && fifo_ready) begin
        any_q <= !push;
      end else if (close && fifo_ready) begin
        any_q <= 1'b0;
      end
    end
    always_ff @(posedge clk) begin
      if (rec_valid && fifo_ready) word_q <= push ? '0 : word_d;
    end
  end
endmodule
