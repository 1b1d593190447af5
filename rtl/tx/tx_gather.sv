// TX gather: packs the R beats of a frame's segment reads, whatever their alignment, into a
// contiguous stream of DMA-width words (word k holds frame bytes [k * DB, (k + 1) * DB)).
//
// Each read burst comes with a note (pushed when the scheduler's AR was accepted; reads use
// one ARID, so data returns in note order): its beat count, the first valid lane of its first
// beat, one past the last valid lane of its last beat, and whether it ends the frame. R is
// never back-pressured: `m_rready` is the caller's constant 1, and this stage takes a beat
// every cycle.
//   stage 1: the beat's valid bytes are shifted down to lane 0 and the rest cleared (registered)
//   stage 2: they are appended to the partial word; a full word goes out. At the frame's end
//            the partial word goes out too, so a frame may end with two words in one cycle:
//            a small buffer with two write ports absorbs that (at most 2 words; the proof is at
//            the buffer, and simulation checks it).
// Output: one word per cycle at most, no back-pressure; `out_err` on a frame's last word says a
// beat of the frame came back with SLVERR/DECERR.
// Reset: synchronous, active high; do not reset with reads in flight.
module tx_gather #(
  parameter int unsigned DATA_W   = 128,   // DMA width
  parameter int unsigned BN_DEPTH = 32,    // burst notes (reads in flight)
  localparam int unsigned DB      = DATA_W / 8,
  localparam int unsigned LW      = $clog2(DB)
) (
  input  logic              clk,
  input  logic              rst,
  // burst notes
  input  logic              bn_valid,
  output logic              bn_ready,
  input  logic [8:0]        bn_beats,
  input  logic [LW-1:0]     bn_lo,
  input  logic [LW:0]       bn_hi,
  input  logic              bn_frame_last,
  // read data (only beats of the TX data ID)
  input  logic              r_valid,
  input  logic [DATA_W-1:0] r_data,
  input  logic              r_err,
  // packed words
  output logic              out_valid,
  output logic [DATA_W-1:0] out_data,
  output logic              out_last,
  output logic              out_err
);
  initial begin
    if (DB < 8 || (DB & (DB - 1)) != 0) $fatal(1, "tx_gather: DATA_W must be a power of two >= 64");
  end

  typedef struct packed {
    logic [8:0]    beats;
    logic [LW-1:0] lo;
    logic [LW:0]   hi;
    logic          frame_last;
  } note_t;

  note_t       note;
  logic        note_valid;
  logic [8:0]  beat_q;
  logic        first, last_beat;
  logic [$clog2(BN_DEPTH):0] bn_count;

  sync_fifo #(.WIDTH($bits(note_t)), .DEPTH(BN_DEPTH)) u_notes (
    .clk,
    .rst,
    .clear     (1'b0),
    .in_valid  (bn_valid),
    .in_ready  (bn_ready),
    .in_data   ({bn_beats, bn_lo, bn_hi, bn_frame_last}),
    .out_valid (note_valid),
    .out_ready (r_valid && last_beat),
    .out_data  (note),
    .count     (bn_count)
  );

  assign first     = beat_q == '0;
  assign last_beat = beat_q == note.beats - 9'd1;

  always_ff @(posedge clk) begin
    if (rst) beat_q <= '0;
    else if (r_valid) beat_q <= last_beat ? '0 : beat_q + 9'd1;
  end

  // ---------------------------------------------------------------- stage 1: normalise
  logic [LW-1:0]     lo;
  logic [LW:0]       hi, n;
  logic [DATA_W-1:0] down, keep;

  assign lo   = first ? note.lo : '0;
  assign hi   = last_beat ? note.hi : (LW+1)'(DB);
  assign n    = hi - {1'b0, lo};
  assign down = r_data >> {lo, 3'b000};
  always_comb begin
    for (int j = 0; j < DB; j++) keep[8*j +: 8] = {8{(LW+1)'(j) < n}};
  end

  logic              s1_valid_q, s1_end_q, s1_err_q;
  logic [DATA_W-1:0] s1_data_q;
  logic [LW:0]       s1_n_q;

  always_ff @(posedge clk) begin
    if (rst) s1_valid_q <= 1'b0;
    else     s1_valid_q <= r_valid;
  end
  always_ff @(posedge clk) begin
    if (r_valid) begin
      s1_data_q <= down & keep;
      s1_n_q    <= n;
      s1_end_q  <= last_beat && note.frame_last;
      s1_err_q  <= r_err;
    end
  end

  // ---------------------------------------------------------------- stage 2: append
  logic [DATA_W-1:0]   acc_q;
  logic [LW-1:0]       fill_q;
  logic                err_q;
  logic [2*DATA_W-1:0] comb;
  logic [LW+1:0]       total;
  logic                w0_valid, w1_valid, w0_last, frame_err;

  assign comb      = {{DATA_W{1'b0}}, acc_q} | ({{DATA_W{1'b0}}, s1_data_q} << {fill_q, 3'b000});
  assign total     = {2'b00, fill_q} + {1'b0, s1_n_q};
  assign frame_err = err_q || s1_err_q;
  assign w0_valid  = s1_valid_q && (s1_end_q || total >= (LW+2)'(DB));
  assign w1_valid  = s1_valid_q && s1_end_q && total > (LW+2)'(DB);
  assign w0_last   = s1_end_q && !w1_valid;

  always_ff @(posedge clk) begin
    if (rst) begin
      acc_q  <= '0;
      fill_q <= '0;
      err_q  <= 1'b0;
    end else if (s1_valid_q) begin
      if (s1_end_q) begin
        acc_q  <= '0;
        fill_q <= '0;
        err_q  <= 1'b0;
      end else begin
        err_q <= frame_err;
        if (total >= (LW+2)'(DB)) begin
          acc_q  <= comb[2*DATA_W-1:DATA_W];
          fill_q <= LW'(total - (LW+2)'(DB));
        end else begin
          acc_q  <= comb[DATA_W-1:0];
          fill_q <= LW'(total);
        end
      end
    end
  end

  // ---------------------------------------------------------------- two-in, one-out buffer
  // Occupancy bound, by construction (occ: words held at a cycle's start; every cycle one word
  // leaves if occ > 0, and w0 + w1 arrive):
  //   1. Two words arrive only in the cycle of a frame's last beat with fill + n > DB.
  //   2. A frame of L bytes arrives in B >= ceil(L / DB) beats (a beat carries at most DB of
  //      its bytes) and leaves exactly W = ceil(L / DB) words. If its last beat writes two,
  //      its other B - 1 beats wrote W - 2 <= B - 2 words, so one of them wrote none: between
  //      a frame's first beat and a two-word cycle t there is a cycle s with no word written.
  //   3. After s, occ <= max(occ_s - 1, 0); cycles with at most one word never raise occ above
  //      max(occ, 1); so occ_t <= max(occ_s - 1, 1) and occ_(t+1) <= max(occ_s, 2).
  //   By induction over two-word cycles occ never exceeds 2 (EB_BOUND). EB = 4 is the next
  //   power of two; simulation checks the bound below.
  localparam int unsigned EB       = 4;
  localparam int unsigned EB_BOUND = 2;
  logic [DATA_W+1:0] eb_q [EB];        // {last, err, data}
  logic [2:0]        eb_wr_q, eb_rd_q, eb_count;

  initial begin
    if (EB < EB_BOUND + 1 || (EB & (EB - 1)) != 0) $fatal(1, "tx_gather: EB must be a power of two above EB_BOUND");
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      eb_wr_q <= '0;
      eb_rd_q <= '0;
    end else begin
      eb_wr_q <= eb_wr_q + 3'(w0_valid) + 3'(w1_valid);
      if (out_valid) eb_rd_q <= eb_rd_q + 3'd1;
    end
  end
  always_ff @(posedge clk) begin
    if (w0_valid) eb_q[eb_wr_q[1:0]]        <= {w0_last, frame_err, comb[DATA_W-1:0]};
    if (w1_valid) eb_q[eb_wr_q[1:0] + 2'd1] <= {1'b1, frame_err, comb[2*DATA_W-1:DATA_W]};
  end

  assign eb_count  = eb_wr_q - eb_rd_q;
  assign out_valid = eb_count != '0;
  assign {out_last, out_err, out_data} = eb_q[eb_rd_q[1:0]];

`ifndef SYNTHESIS
  // The bound proved above; and a beat always has its burst note.
  always_ff @(posedge clk) begin
    if (!rst && 32'(eb_count) > EB_BOUND) $error("tx_gather: %0d words buffered, bound is %0d", eb_count, EB_BOUND);
    if (!rst && r_valid && !note_valid) $error("tx_gather: R beat without a burst note");
  end
`endif

  logic unused;
  assign unused = ^{bn_count, note_valid};
endmodule
